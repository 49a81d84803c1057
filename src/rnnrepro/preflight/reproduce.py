"""Do the pipeline's promises hold on this device? Runs trained twice, a run killed and resumed,
packs against their runs alone; each compared on its metrics (``metrics.json`` without its
provenance, which holds times) and its learning curve (``curve.tsv``).

- Twice: the same config and seed must give identical metrics (docs/training.md).
- Killed: a run killed with SIGKILL once its checkpoint has passed half its steps (checkpoints
  every step), then run again, must end with the metrics of the uninterrupted run.
- Packed: each member of a pack (:mod:`rnnrepro.packing`) must end within
  :data:`PACK_TOLERANCE` (relative) of the same run alone: the pack runs the reference loops
  batched, a run alone the fast ones, so they agree to float rounding carried through training.
"""
from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from ..cost.groups import PlannedRun
from ..packing import train_pack
from ..plan.packs import Packing, plan_packs
from ..train import checkpoint_payload, train_run
from .plan import data_of
from .table import Row

#: relative difference allowed between a packed member's metric and the run alone's (the floor
#: tests/test_packing.py allows).
PACK_TOLERANCE = 1e-4


def outputs(folder: Path) -> tuple[dict[str, Any], str]:
    """A finished run's metrics without provenance, and its learning curve."""
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics.pop("provenance", None)
    return metrics, (folder / "curve.tsv").read_text()


def numbers(value: Any, prefix: str = "") -> dict[str, float]:
    """Every number in a (nested) metrics dict, by its dotted key."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in numbers(item, f"{prefix}{key}.").items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {prefix.rstrip("."): float(value)}
    return {}


def largest_difference(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, str]:
    """The largest relative difference between two runs' metrics, and its key ("" when equal)."""
    first, second = numbers(a), numbers(b)
    worst, where = 0.0, ""
    for key in sorted(set(first) | set(second)):
        x, y = first.get(key, math.nan), second.get(key, math.nan)
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        relative = abs(x - y) / max(abs(x), abs(y), 1e-12) if math.isfinite(x) and math.isfinite(y) else math.inf
        if relative > worst or not where:
            worst, where = relative, key
    return worst, where


def identical(a: tuple[dict, str], b: tuple[dict, str]) -> Row:
    """Whether two runs' outputs are bit-identical, as a row without section and check."""
    if a == b:
        return Row("", "", "identical", True)
    worst, key = largest_difference(a[0], b[0])
    what = f"{key} differs by {worst:.2e} (relative)" if key else "the learning curves differ"
    return Row("", "", "differ", False, what)


def label(run: PlannedRun) -> str:
    i = run.identity
    return f"{i['task']['name']} ({i['model']['name']}/{i['cell']['name']})"


def train_alone(run: dict, folder: Path, data: Path | None, device: str) -> tuple[dict, str]:
    train_run(run, folder, data=data, device=device, progress_interval=1e9)
    return outputs(folder)


def every_step(identity: dict) -> dict:
    """The run with a checkpoint after every step, so that a kill can land anywhere."""
    run = copy.deepcopy(identity)
    run.setdefault("train", {})["checkpoint_every"] = 1
    return run


def twice(task: str, run: PlannedRun, device: str, scratch: Path, checkpoint_every_step: bool = False
          ) -> tuple[list[Row], tuple[dict, str]]:
    """Train ``run`` twice; rows for its identity and its kernels, and the first run's outputs."""
    config = every_step(run.identity) if checkpoint_every_step else run.identity
    data, _ = data_of(run.identity)
    started = time.monotonic()
    first = train_alone(config, scratch / f"{task}-1", data, device)
    second = train_alone(config, scratch / f"{task}-2", data, device)
    row = identical(first, second)
    row.section, row.check, row.seconds = "reproduce", f"{label(run)} trained twice", time.monotonic() - started
    row.detail = row.detail or f"{first[0].get('steps', '?')} steps"
    return [row], first


def kernels_row(scratch: Path, task: str) -> Row:
    """What the runs' provenance says of their kernels."""
    made = json.loads((scratch / f"{task}-1" / "metrics.json").read_text())["provenance"]
    ops = made.get("nondeterministic_ops") or "none"
    return Row("reproduce", "kernels (run provenance)",
               "deterministic" if made.get("deterministic") else "nondeterministic allowed",
               None, f"device {made.get('device')}, torch {made.get('torch')}; ops without a deterministic "
                     f"kernel: {ops}")


def checkpoint_step(path: Path) -> int:
    """The step checkpoint ``path`` was written at; -1 while there is none that reads whole."""
    try:
        return checkpoint_payload(path.read_bytes())["progress"]["step"]
    except (FileNotFoundError, EOFError, RuntimeError, KeyError, ValueError):
        return -1


def killed_and_resumed(task: str, run: PlannedRun, reference: tuple[dict, str], device: str, scratch: Path,
                       threads: int) -> Row:
    """Run the training CLI with checkpoints every step, SIGKILL it once its checkpoint has passed
    half the steps of ``reference`` (the same config, uninterrupted), run it again and compare."""
    started = time.monotonic()
    steps = int(reference[0].get("steps") or 0)
    kill_after = max(1, steps // 2)
    folder = scratch / f"{task}-killed"
    folder.mkdir(parents=True)
    config = folder.parent / f"{task}-killed.json"
    config.write_text(json.dumps(every_step(run.identity)))
    data, _ = data_of(run.identity)
    command = [sys.executable, "-m", "rnnrepro.train", str(config), str(folder), "--threads", str(threads),
               "--device", device, *(["--data", str(data)] if data else [])]
    check = f"{label(run)} killed at step ≥ {kill_after} of {steps}, run again"
    log = open(scratch / f"{task}-killed.log", "wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
    deadline = time.monotonic() + 600
    while checkpoint_step(folder / "checkpoint.pt") < kill_after and process.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.002)
    if process.poll() is not None:
        return Row("resume", check, "not killed", None, f"the run ended (exit {process.returncode}) before "
                   f"step {kill_after}: see {scratch.name}/{task}-killed.log", time.monotonic() - started)
    process.kill()
    process.wait()
    at = checkpoint_step(folder / "checkpoint.pt")
    rerun = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
    log.close()
    if rerun.returncode != 0:
        return Row("resume", check, "failed", False, f"the rerun exited {rerun.returncode}", time.monotonic() - started)
    row = identical(outputs(folder), reference)
    row.section, row.check, row.seconds = "resume", check, time.monotonic() - started
    row.detail = row.detail or f"killed at step {at}, resumed from its checkpoint"
    return row


def packs_against_alone(plan_runs: dict[str, PlannedRun], packing: Packing, device: str, scratch: Path,
                        most: int, members: int = 4) -> list[Row]:
    """Up to ``most`` packs of the plan (``packing``), one per task type, each of at most ``members``
    runs, trained packed and alone; each member's largest relative difference to its run alone."""
    identities = {folder: run.identity for folder, run in plan_runs.items()}
    rows, tasks = [], set()
    for pack in plan_packs(identities, packing):
        first = identities[pack.members[0]]
        task = first["task"]["name"]
        data, present = data_of(first)
        if task in tasks or not present:
            continue
        tasks.add(task)
        started = time.monotonic()
        folders = list(pack.members[:members])
        runs = [identities[folder] for folder in folders]
        packed = [scratch / f"pack-{task}-{i}" for i in range(len(runs))]
        train_pack(runs, packed, data=data, device=device, progress_interval=1e9)
        worst, where = 0.0, ""
        for i, run in enumerate(runs):
            alone = train_alone(run, scratch / f"alone-{task}-{i}", data, device)
            difference, key = largest_difference(outputs(packed[i])[0], alone[0])
            if difference > worst or not where:
                worst, where = difference, key
        width = first["model"].get("hidden_size")
        rows.append(Row("pack", f"{task} ({first['cell']['name']}, {width} units): {len(runs)} runs packed "
                                f"v alone", f"{worst:.1e}", worst <= PACK_TOLERANCE,
                        f"largest relative difference{' (' + where + ')' if where else ''}; allowed "
                        f"{PACK_TOLERANCE:g}", time.monotonic() - started))
        if len(rows) >= most:
            break
    if not rows:
        rows.append(Row("pack", "a pack against its runs alone", "no pack", None,
                        "the plan has no pack whose data is there with this packing"))
    return rows


def reproduce(runs: dict[str, PlannedRun], chosen: dict[str, PlannedRun], missing: dict[str, Path],
              kill_tasks: list[str], packing: Packing, packs: int, device: str, scratch: Path, threads: int,
              report: Callable[[Row], None]) -> list[Row]:
    """Every check of this module, each row handed to ``report`` as soon as it is made."""
    rows: list[Row] = []

    def add(row: Row) -> None:
        rows.append(row)
        report(row)

    references = {}
    for task, run in chosen.items():
        made, references[task] = twice(task, run, device, scratch, checkpoint_every_step=task in kill_tasks)
        for row in made:
            add(row)
    for task, path in missing.items():
        add(Row("reproduce", f"{task} trained twice", "no data", None, f"{path} is missing: snakemake --profile "
                "profiles/local data --config scale=ci makes it"))
    if chosen:
        add(kernels_row(scratch, next(iter(chosen))))
    for task in kill_tasks:
        if task in chosen:
            add(killed_and_resumed(task, chosen[task], references[task], device, scratch, threads))
        else:
            add(Row("resume", f"{task} killed and run again", "not run", None,
                    "no data for it" if task in missing else "no such task type in the ci plan"))
    for row in packs_against_alone(runs, packing, device, scratch, packs):
        add(row)
    return rows
