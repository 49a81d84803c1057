"""``python -m rnnrepro.cost``: measure a scale's cost table on this device and write cost.csv,
or print the table of an existing one (``--show``). ``--help`` says what is counted."""
from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from ..plan.layout import SCALES
from .costfile import csv_text, read_rows, run_row
from .measure import BuiltTask, Measurement, clock_of, device_label, measure, release_memory, task_key
from .groups import dataset_key_of, missing_data, planned_runs, prepared_file, timing_groups
from .resources import MARGIN, MEMORY_ALLOWANCE_MB, RUNTIME_ALLOWANCE_MINUTES, runtime_hours
from .table import summary_table


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def names(values: list[str] | None) -> list[str] | None:
    """``--studies a b`` or ``--studies a,b``."""
    if not values:
        return None
    return [name for value in values for name in value.split(",") if name]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.cost",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent("""\
            Cost table before the queue: time a few training steps and one dev evaluation of every
            distinct configuration of a scale's plan on this device, and write <results>/<scale>/cost.csv,
            one row per run: steps, seconds per step, evaluation, estimated hours, peak memory. Prints a
            table per study and artifact. Run it from the repository root; it needs the prepared data of
            the plan (snakemake --profile profiles/local data --config scale=SCALE). The workflow then asks,
            for each training job, runtime = estimated_hours x 60 x margin + %(ra)s minutes and
            mem_mb = host_mem_mb x margin + %(ma)s MB (workflow/rules/cost.smk).""" % {
                "ra": RUNTIME_ALLOWANCE_MINUTES, "ma": MEMORY_ALLOWANCE_MB}),
        epilog=textwrap.dedent("""\
            Counted per run: steps = epochs x batches per epoch (with patience, epochs is the most a
            run trains); estimated_hours = (steps x seconds_per_step + (epochs + 2) x eval_seconds) / 3600,
            eval_seconds being one dev evaluation (after every epoch, then dev and test of the kept
            model). Not counted: start-up, data loading (setup_seconds), checkpoints. Configurations
            differing only in settings that change neither a step nor the steps per epoch (data values
            such as the sine filter's gamma, the learning-rate schedule, initialisation, epochs:
            rnnrepro.cost.groups.NEUTRAL) share one timing (column timed_as). Clock: the process's CPU time
            with one thread on a CPU (other load counts less), else elapsed time (column clock). Peak
            memory: CUDA max_memory_allocated on a GPU, and on every device the growth of the process's
            resident memory over the configuration (host_mem_mb, what mem_mb is sized from).

            On a cluster, measure on the GPU the jobs will use, with their threads, e.g.
              srun --gpus=1 --cpus-per-task=4 --time=2:00:00 \\
                .venv/bin/python -m rnnrepro.cost --scale paper --threads 4
            """))
    parser.add_argument("--scale", choices=SCALES,
                        help="scale of the plan (default: config/config.yaml's)")
    parser.add_argument("--studies", nargs="+", metavar="STUDY",
                        help="studies to cost, e.g. --studies pru drnn (default: config/config.yaml's, "
                             "else every study)")
    parser.add_argument("--extra-cells", nargs="+", metavar="CELL",
                        help="cells of your own, as the config's extra_cells")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: CUDA if available, else CPU, "
                                         "or RNNREPRO_DEVICE; as training)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads, as the train jobs get them (default: 1, the local profile's)")
    parser.add_argument("--steps", type=int, default=3,
                        help="timed training steps per configuration, after a warm-up (default: 3)")
    parser.add_argument("--max-seconds-per-config", type=float, default=5.0, metavar="SECONDS",
                        help="stop timing a configuration once its measured steps took this long, after at least "
                             "one (default: 5)")
    parser.add_argument("--max-eval-seconds", type=float, default=1.0, metavar="SECONDS",
                        help="run and time the dev evaluation when a forward and loss per dev batch are "
                             "estimated to take at most this long, else count that estimate (default: 1)")
    parser.add_argument("--results", default=None, help="results folder (default: config/config.yaml's, results)")
    parser.add_argument("--output", type=Path, default=None,
                        help="the cost file to write (default: RESULTS/SCALE/cost.csv, where the workflow reads it)")
    parser.add_argument("--configfile", type=Path, default=Path("config/config.yaml"),
                        help="the workflow's configuration (default: config/config.yaml)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the measurements of an existing cost.csv (or of an interrupted measurement) made "
                             "on the same device with the same threads; time only the other configurations")
    parser.add_argument("--skip-missing", action="store_true",
                        help="leave out the runs whose prepared data file is missing (their train jobs get the "
                             "default resources) instead of stopping")
    parser.add_argument("--margin", type=float, default=MARGIN,
                        help=f"factor on the estimated time and memory when the workflow sizes a train job, written "
                             f"to cost.csv's margin column (default: {MARGIN}); with --resume, changing it measures "
                             f"nothing again")
    parser.add_argument("--show", action="store_true", help="print the table of an existing cost.csv and exit")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.margin < 1:
        parser.error("--margin must be at least 1")
    return args


def job_of(plan, rows: list[dict]) -> dict[str, str]:
    """Run folder -> the name of the pack or bundle it trains in, as the workflow plans them with
    these rows' costs (:meth:`rnnrepro.plan.kept.WorkflowPlan.jobs`)."""
    jobs = plan.jobs(runtime_hours({row["run"]: row for row in rows}))
    return {folder: name for name, job in jobs.items() for folder in job.members}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from ..plan.config_check import ConfigError
    from ..plan.kept import load_plan
    from ..plan.layout import Layout
    from ..plan.studies import load_yaml

    try:
        config = load_yaml(args.configfile) or {}
        for key, value in (("scale", args.scale), ("studies", names(args.studies)),
                           ("extra_cells", names(args.extra_cells)), ("results", args.results)):
            if value is not None:
                config[key] = value
        plan = load_plan(config, Path("."))  # the plan the workflow keeps for these settings
        config, studies = plan.config, plan.studies
    except ConfigError as error:
        progress(f"configuration error: {error}")
        return 2
    scale = config["scale"]
    out = args.output or Path(Layout(config.get("results") or "results", scale).cost())
    partial = out.with_name(f".{out.name}.partial")
    if args.show:
        rows = read_rows(out)
        if not rows:
            progress(f"no {out}: measure it first (python -m rnnrepro.cost --scale {scale})")
            return 2
        print(summary_table(rows, job_of(plan, rows)), end="")
        return 0

    import torch

    from ..train import CUBLAS_WORKSPACE_CONFIG, Kernels, deterministic_requested, pick_device

    torch.set_num_threads(args.threads)
    if deterministic_requested():  # before CUDA starts, as a run sets it (rnnrepro.train.Kernels)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE_CONFIG)
    device = pick_device(args.device)
    runs = planned_runs(studies)
    groups = timing_groups(runs.values())
    missing = missing_data(groups)
    if missing:
        chosen = f" 'studies=[{','.join(studies)}]'" if args.studies else ""
        lines = [f"  {path}: {len(needing)} runs ({', '.join(sorted({a for r in needing for a in r.artifacts}))})"
                 for path, needing in missing.items()]
        progress("prepared data missing:\n" + "\n".join(lines) + "\nmake it with: snakemake --profile profiles/local "
                 f"data --config scale={scale}{chosen}")
        if not args.skip_missing:
            progress("stopping (--skip-missing leaves those runs out: their train jobs get the default resources)")
            return 2
        skipped = {r.folder for needing in missing.values() for r in needing}
        progress(f"leaving out {len(skipped)} runs whose data is missing (--skip-missing)")
        groups = [group for group in groups if not any(r.folder in skipped for r in group.runs)]

    label = device_label(device)
    clock = clock_of(device, args.threads)
    known: dict[str, Measurement] = {}
    if args.resume:
        for row in read_rows(partial) + read_rows(out):
            if (row.get("device") == label and row.get("threads") == str(args.threads) and row.get("config")
                    and (row.get("clock") or "wall") == clock):
                try:
                    known.setdefault(row["config"], Measurement.from_row(row))
                except (KeyError, ValueError):
                    pass
    costed = [run for group in groups for run in group.runs]
    progress(f"cost table, scale {scale}: {len(costed)} runs in {len({r.config for r in costed})} configurations, "
             f"{len(groups)} timings on {label} with {args.threads} thread(s), {clock} clock; {args.steps} steps "
             f"after a warm-up (at most {args.max_seconds_per_config:g} s), {len(known)} configurations measured "
             f"before (--resume)")
    started, cpu_started = time.monotonic(), time.process_time()
    measured: dict[str, Measurement] = {}
    failed: list[str] = []
    last_write = time.monotonic()

    group_of = {run.folder: group.key for group in groups for run in group.runs}

    def rows_so_far() -> list[dict[str, Any]]:
        """The rows of the runs measured so far, in the plan's order."""
        return [run_row(run, measured[group_of[run.folder]], args.margin) for run in runs.values()
                if group_of.get(run.folder) in measured]

    from .. import atomic

    built: BuiltTask | None = None
    # configurations of one task one after the other, so that each task is built once
    order = sorted(groups, key=lambda group: task_key(group.first.identity))
    for number, group in enumerate(order, 1):
        first = group.first
        where = (f"[{number}/{len(order)}] {first.artifacts[0] if first.artifacts else first.studies[0]} "
                 f"{first.identity['task']['name']}/{first.identity['model']['name']}/{first.identity['cell']['name']} "
                 f"({len(group.runs)} runs, {len(group.configs)} configs)")
        before = next((known[config] for config in group.configs if config in known), None)
        if before is not None:
            measured[group.key] = before
            progress(f"{where}: {before.seconds_per_step:.4g} s/step, measured before")
            continue
        key = dataset_key_of(first.identity)
        if built is not None and built.key != task_key(first.identity):
            built = None  # free it before the next task is built
        begin = time.monotonic()
        try:
            with Kernels():  # the kernels the runs will use (deterministic ones unless RNNREPRO_DETERMINISTIC=0)
                result, built = measure(first.identity, prepared_file(key) if key else None, device,
                                        steps=args.steps, max_seconds=args.max_seconds_per_config,
                                        max_eval_seconds=args.max_eval_seconds, clock=clock, built=built)
        except Exception as error:  # noqa: BLE001 - one configuration failing must not lose the others
            failed.append(f"{first.folder}: {type(error).__name__}: {error}")
            progress(f"{where}: FAILED: {type(error).__name__}: {error}")
            built = None
            release_memory()
            continue
        measured[group.key] = result
        progress(f"{where}: {result.seconds_per_step:.4g} s/step x{result.timed_steps}, {result.steps_per_epoch} "
                 f"steps/epoch, eval {result.eval_seconds:.3g} s ({result.eval_method.split(':')[0]}), "
                 f"+{result.host_mem_mb:.0f} MB, {time.monotonic() - begin:.1f} s")
        if time.monotonic() - last_write > 10:
            atomic.write_text(partial, csv_text(rows_so_far()))
            last_write = time.monotonic()
    rows = rows_so_far()
    atomic.write_text(out, csv_text(rows))
    partial.unlink(missing_ok=True)
    minutes = (time.monotonic() - started) / 60
    progress(f"wrote {out}: {len(rows)} runs, {len(measured)} timings in {minutes:.1f} min "
             f"({(time.process_time() - cpu_started) / 60:.1f} min of CPU)")
    print(f"Cost table, scale {scale}, on {label} with {args.threads} thread(s): estimated per run "
          f"(training steps and dev/test evaluations; {out})\n")
    print(summary_table(rows, job_of(plan, rows)), end="")
    if failed:
        progress(f"{len(failed)} configurations failed:\n  " + "\n  ".join(failed))
        return 1
    return 0
