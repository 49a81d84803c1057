"""``python -m rnnrepro.preflight``: the pre-flight check, one short job on a GPU node before the
paper plan is queued. ``--help`` says what it runs."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from .table import Row, failures, markdown, write


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.preflight",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent("""\
            Before the first GPU hour: do the pipeline's promises hold on this device, and what will the
            paper plan cost on it? Run it from the repository root, in one job on a node like the ones the
            training jobs get, e.g.
              srun --gpus=1 --cpus-per-task=4 --time=0:15:00 .venv/bin/python -m rnnrepro.preflight
            It takes about 10 minutes on a GPU and under 3 on a CPU, prints one table and writes one file
            (--output). It exits 1 when a promise fails, else 0."""),
        epilog=textwrap.dedent("""\
            What it runs:
              reproduce    the first `ci` run of every task type whose prepared data is there, trained
                           twice: identical metrics and learning curves?
              resume       a run of each --kill task with a checkpoint every step, killed with SIGKILL
                           past half its steps and run again: identical to it uninterrupted?
              pack         packs of the `ci` plan (on a GPU packing {size: 16, max_hidden: null}, as
                           docs/cluster.md advises there) against their runs alone: within 1e-4?
              speed        each cell's training step over nn.LSTM's (cuDNN on a GPU), and a pack of
                           sine-filter runs against the same runs one after another
              cost         a sample of the paper plan's configurations timed as `python -m rnnrepro.cost`
                           times them, extrapolated to the plan, per study
            Deterministic kernels unless RNNREPRO_DETERMINISTIC=0 (as the training runs). The data comes
            from resources/prepared/ (snakemake --profile profiles/local data --config scale=ci, and
            scale=paper for the cost of every dataset); a task type without it is listed, not run."""))
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: CUDA if available, else the CPU)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: 1 on a CPU, as the local profile's jobs; 4 on a GPU)")
    parser.add_argument("--output", type=Path, default=None,
                        help="the file to write (default: results/preflight/<cpu|cuda>.json)")
    parser.add_argument("--kill", nargs="+", default=["lm"], metavar="TASK",
                        help="task types whose run is killed and resumed (default: lm, the stateful language model)")
    parser.add_argument("--cost-seconds", type=float, default=None,
                        help="time spent timing paper configurations (default: 120 on a GPU, 20 on a CPU)")
    parser.add_argument("--skip", nargs="+", default=[], choices=("reproduce", "speed", "cost"),
                        help="parts to leave out")
    return parser.parse_args(argv)


def environment(device) -> dict:
    import platform

    import torch

    from ..cost.measure import device_label
    from ..train import deterministic_requested

    found = {"device": device_label(device), "torch": torch.__version__, "python": platform.python_version(),
             "cuda_available": torch.cuda.is_available(), "deterministic": deterministic_requested(),
             "CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG", ""),
             "threads": torch.get_num_threads(), "when": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    if device.type == "cuda":
        found["cuda"] = torch.version.cuda
        found["cudnn"] = torch.backends.cudnn.version()
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from ..plan.packs import Packing
    from ..train import CUBLAS_WORKSPACE_CONFIG, deterministic_requested, pick_device

    if deterministic_requested():  # before CUDA starts, as a run sets it (rnnrepro.train.Kernels)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE_CONFIG)
    device = pick_device(args.device)
    cuda = device.type == "cuda"
    torch.set_num_threads(args.threads or (4 if cuda else 1))
    output = args.output or Path("results") / "preflight" / f"{device.type}.json"
    rows: list[Row] = []

    def report(row: Row) -> None:
        rows.append(row)
        print(f"[{time.strftime('%H:%M:%S')}] {row.section}: {row.check}: {row.result} {row.mark} {row.detail}",
              file=sys.stderr, flush=True)

    started = time.monotonic()
    env = environment(device)
    if not cuda:
        report(Row("device", "CUDA", "absent" if not torch.cuda.is_available() else "not chosen", None,
                   "every check runs on the CPU; run this on a GPU node to check the GPU path"))
    else:
        report(Row("device", "GPU", env["device"], None, f"CUDA {env['cuda']}, cuDNN {env['cudnn']}, torch "
                   f"{env['torch']}"))
    from .plan import load_plan, one_run_per_task

    if "reproduce" not in args.skip:
        from .reproduce import reproduce

        ci = load_plan("ci")
        runs = ci.runs
        chosen, missing = one_run_per_task(runs)
        packing = Packing(size=16, max_hidden=None) if cuda else Packing.from_config(ci.config.get("packing"))
        with tempfile.TemporaryDirectory(prefix="preflight-") as scratch:
            reproduce(runs, chosen, missing, args.kill, packing, packs=2 if cuda else 1, device=str(device),
                      scratch=Path(scratch), threads=torch.get_num_threads(), report=lambda row: report(row))
    if "speed" not in args.skip:
        from .speed import cells, pack

        for row in cells(str(device), *((100, 512, 5) if cuda else (35, 128, 3))):
            report(row)
        report(pack(str(device), *((16, 100) if cuda else (4, None))))
    if "cost" not in args.skip:
        from .costing import paper_cost

        budget = args.cost_seconds if args.cost_seconds is not None else (120 if cuda else 20)
        for row in paper_cost(load_plan("paper"), device, torch.get_num_threads(), budget):
            report(row)
    env["seconds"] = round(time.monotonic() - started, 1)
    write(output, rows, env)
    print(f"Pre-flight on {env['device']} (torch {env['torch']}, deterministic kernels: "
          f"{'yes' if env['deterministic'] else 'no'}), {env['seconds'] / 60:.1f} min; written to {output}\n")
    print(markdown(rows), end="")
    failed = failures(rows)
    if failed:
        print(f"\n{len(failed)} check(s) FAILED: " + "; ".join(f"{r.section}: {r.check}" for r in failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
