"""N runs trained packed (one batched model, rnnrepro.packing) against the same N runs one after another.

Each case is N runs of one architecture that differ in their seed and data parameters, as the
paper plan packs them; both sides are whole runs (building the task and model, training, the
dev evaluation of every epoch, the final evaluation and the outputs), timed in interleaved
rounds after an untimed warm-up, on the CPU at the threads given. It prints the median seconds
of each side and their ratio (sequential / packed: above 1, packing is faster), then what the
ratios mean for the drnn paper plan (its sine-filter grids, 100 hidden units): the CPU-hours of
``results/paper/cost.csv`` (``python -m rnnrepro.cost --scale paper``) before and after, and its
SLURM submissions.

    python benchmarks/bench_pack.py [--rounds 3] [--threads 1] [--cases toy toy_lstm sine8 sine100]
"""
from __future__ import annotations

import argparse
import csv
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import torch

from rnnrepro.packing import train_pack
from rnnrepro.plan.packs import Packing
from rnnrepro.preflight.timing import presence, sine
from rnnrepro.train import train_run

import measured  # benchmarks/measured.py, beside this script

REPO = Path(__file__).resolve().parents[1]


CASES = {
    "toy": ("elstm fig5 toy task, 1-unit ELSTM, 10 seeds", lambda: [presence(s) for s in range(1, 11)]),
    "toy_lstm": ("elstm fig5 toy task, 1-unit LSTM, 10 seeds", lambda: [presence(s, "lstm") for s in range(1, 11)]),
    "sine8": ("drnn sine filter, LSTM of 8 units, 16 runs", lambda: [sine(s, 8) for s in range(16)]),
    "sine16": ("drnn sine filter, LSTM of 16 units, 16 runs", lambda: [sine(s, 16) for s in range(16)]),
    "sine32": ("drnn sine filter, LSTM of 32 units, 16 runs", lambda: [sine(s, 32) for s in range(16)]),
    "sine100": ("drnn sine filter, LSTM of 100 units (the paper's), 16 runs", lambda: [sine(s, 100) for s in range(16)]),
}


def sequential(runs: list[dict], root: Path) -> float:
    started = time.perf_counter()
    for i, run in enumerate(runs):
        train_run(run, root / f"run{i}", progress_interval=1e9)
    return time.perf_counter() - started


def packed(runs: list[dict], root: Path) -> float:
    started = time.perf_counter()
    train_pack(runs, [root / f"run{i}" for i in range(len(runs))], progress_interval=1e9)
    return time.perf_counter() - started


def drnn_paper_hours(ratio_of_width: dict[int, float]) -> None:
    """The drnn paper plan's sine-filter runs (Figs. 4 and 6) from results/paper/cost.csv, and
    what packing makes of their CPU-hours and submissions at the default and at max_hidden null."""
    path = REPO / "results" / "paper" / "cost.csv"
    if not path.exists():
        print(f"\n(no {path.relative_to(REPO)}: run `python -m rnnrepro.cost --scale paper` for the drnn hours)")
        return
    with open(path) as handle:
        rows = [r for r in csv.DictReader(handle) if "task~sine_filter" in r["run"] and "drnn." in r["artifacts"]]
    hours = sum(float(r["estimated_hours"]) for r in rows)
    ratio = ratio_of_width.get(100)
    print(f"\ndrnn paper plan, sine-filter runs (cost.csv, one CPU thread): {len(rows):,} runs, {hours:,.0f} CPU-hours, "
          f"{len(rows):,} SLURM submissions unpacked")
    size = Packing().size
    print(f"  packing default (max_hidden {Packing().max_hidden}): 100-unit runs are not packed on a CPU -> "
          f"{hours:,.0f} CPU-hours, {len(rows):,} submissions")
    if ratio:
        print(f"  packed anyway (max_hidden null, size {size}): ~{len(rows) / size:,.0f} submissions; at the measured "
              f"ratio {ratio:.2f} -> {hours / ratio:,.0f} CPU-hours on this CPU (a GPU is to be measured on the GPU)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per side (median)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (train jobs use 1 at mini)")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--record", action="store_true",
                        help="append the rows to benchmarks/measured/ and the table of docs/performance.md")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds, median seconds of whole runs\n")
    print(f"{'case':<58} {'N':>3} {'sequential':>10} {'packed':>8} {'ratio':>6}")
    ratios: dict[int, float] = {}
    context, rows = measured.context(__file__), []
    for name in args.cases:
        title, make = CASES[name]
        runs = make()
        times: dict[str, list[float]] = {"sequential": [], "packed": []}
        with tempfile.TemporaryDirectory() as scratch:
            sequential(runs[:1], Path(scratch) / "warm")  # TorchScript compiles, data caches fill
            packed(runs[:2], Path(scratch) / "warm_pack")
            for round_ in range(args.rounds):
                for side, function in (("sequential", sequential), ("packed", packed)):
                    root = Path(scratch) / f"{side}{round_}"
                    times[side].append(function(runs, root))
                    shutil.rmtree(root)
        seq, pack = statistics.median(times["sequential"]), statistics.median(times["packed"])
        print(f"{title:<58} {len(runs):>3} {seq:>10.2f} {pack:>8.2f} {seq / pack:>6.2f}", flush=True)
        rows.append({**context, "runs": title, "N": len(runs), "threads": args.threads,
                     f"one after another (s, median of {args.rounds})": round(seq, 2), "packed (s)": round(pack, 2),
                     "ratio": round(seq / pack, 2)})
        if name.startswith("sine"):
            ratios[int(name[4:])] = seq / pack
    drnn_paper_hours(ratios)
    if args.record:
        print(f"recorded in {measured.record('packs', rows).relative_to(REPO)}")


if __name__ == "__main__":
    main()
