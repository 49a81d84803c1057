"""Whole runs with torch's fused optimiser kernels (what rnnrepro.train.make_optimizer uses on the
CPU) against the same runs with torch's per-parameter loop (its CPU default, used here before).

Each case is one `mini`-scale run of a synthetic task (no dataset needed); both sides train it
whole (task, model, every epoch's dev evaluation, the final evaluation and the outputs), in
interleaved rounds after an untimed warm-up, on one thread. It prints the median seconds of each
side, their ratio (fused / loop: below 1, fused is faster) and the largest relative difference of
the two sides' final metrics (the fused kernels round differently in the last bits).

    python benchmarks/bench_optimizer.py [--rounds 3] [--cases presence_elstm adding_pru copying_pru_plus]
"""
from __future__ import annotations

import argparse
import math
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import torch

from rnnrepro import train

import measured  # benchmarks/measured.py, beside this script


def presence(cell: str) -> dict:
    """elstm Fig. 5's toy task at T = 10 as `mini` trains it (300 of its 1,200 epochs)."""
    return {"task": {"name": "presence", "T": 10}, "model": {"name": "basic", "embedding_size": 2, "hidden_size": 1},
            "cell": {"name": cell, **({"period": 100} if cell == "elstm" else {})},
            "train": {"optimizer": "adam", "lr": 0.03, "batch_size": 5, "epochs": 300, "log_every": 10,
                      "checkpoint_every": 2000}, "seed": 1}


def pru_task(task: str, cell: str, T: int, train_size: int, epochs: int, lr: float) -> dict:
    """pru Figs. 2-3 as `mini` trains them (64 units, identity recurrent start, Adam, clipping at 1)."""
    return {"task": {"name": task, "T": T, "train_size": train_size, "dev_size": 500, "test_size": 500, "data_seed": 0},
            "model": {"name": "basic", "hidden_size": 64}, "cell": {"name": cell, "recurrent_init": "identity"},
            "train": {"optimizer": "adam", "lr": lr, "clip_value": 1.0, "batch_size": 50, "epochs": epochs,
                      "checkpoint_every": 200, "log_every": 20}, "seed": 1}


CASES = {
    "presence_elstm": ("elstm Fig. 5 toy task, 1-unit ELSTM, 900 steps", lambda: presence("elstm")),
    "presence_lstm": ("elstm Fig. 5 toy task, 1-unit LSTM, 900 steps", lambda: presence("lstm")),
    "adding_pru": ("pru Fig. 2 adding task, T = 20, 64-unit PRU, 400 steps",
                   lambda: pru_task("adding", "pru", 20, 4000, 5, 0.003)),
    "copying_pru_plus": ("pru Fig. 3 copying task, T = 50, 64-unit PRU+, 160 steps",
                         lambda: pru_task("copying", "pru_plus", 50, 2000, 4, 0.001)),
}


def timed_run(run: dict, fused: bool, folder: Path) -> tuple[float, dict]:
    """Seconds of one whole run, and its metrics, with the fused kernels or torch's loop."""
    chosen = train.fused_on if fused else (lambda params: None)
    original, train.fused_on = train.fused_on, chosen
    shutil.rmtree(folder, ignore_errors=True)
    try:
        started = time.perf_counter()
        metrics = train.train_run(run, folder, device="cpu", progress_interval=1e9)
        return time.perf_counter() - started, metrics
    finally:
        train.fused_on = original


def relative_difference(a: dict, b: dict) -> float:
    numbers = [(a[k], b[k]) for k in a if isinstance(a[k], float) and isinstance(b.get(k), float)]
    return max((abs(x - y) / max(abs(x), abs(y), 1e-12) for x, y in numbers if math.isfinite(x) and math.isfinite(y)),
               default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per side (after one warm-up)")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--record", action="store_true",
                        help="append the rows to benchmarks/measured/ and the table of docs/performance.md")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, {args.rounds} rounds, median seconds per whole run")
    print(f"{'case':60s} {'loop':>7s} {'fused':>7s} {'fused/loop':>10s} {'metrics apart':>13s}")
    context, rows = measured.context(__file__), []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases:
            title, make = CASES[name]
            run = make()
            timed_run(run, True, Path(tmp) / "warm")  # TorchScript compiles the loops once
            seconds = {True: [], False: []}
            metrics = {}
            for _ in range(args.rounds):
                for fused in (False, True):
                    elapsed, metrics[fused] = timed_run(run, fused, Path(tmp) / str(fused))
                    seconds[fused].append(elapsed)
            loop, fused = statistics.median(seconds[False]), statistics.median(seconds[True])
            print(f"{title:60s} {loop:7.2f} {fused:7.2f} {fused / loop:10.3f} {relative_difference(metrics[False], metrics[True]):13.1e}",
                  flush=True)
            rows.append({**context, "run": title, f"loop (s, median of {args.rounds})": round(loop, 2),
                         "fused (s)": round(fused, 2), "fused / loop": round(fused / loop, 3),
                         "metrics apart (relative)": f"{relative_difference(metrics[False], metrics[True]):.1e}"})
    if args.record:
        print(f"recorded in {measured.record('optimizer', rows).relative_to(measured.REPO)}")


if __name__ == "__main__":
    main()
