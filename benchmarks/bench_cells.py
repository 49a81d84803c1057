"""Training-step time of every registered cell as a ratio to torch.nn.LSTM, measured side by side.

Each cell runs as the models use it, ``rnnrepro.layers.Recurrent(build_cell(...))``; one
step is forward, backward of a sum of squared outputs, and an Adagrad update (the elstm
paper's optimizer), on ``--device`` (cpu, or cuda where the reference is cuDNN's nn.LSTM).
In every round each cell step is timed right after an nn.LSTM step; the table shows, per
thread count, cell and shape, the median cell step over the median nn.LSTM step timed beside
it (``--statistic min`` for the best of each), so load from other processes affects both
sides alike. Targets: cells whose gates see h_{t-1} at most 1.25x nn.LSTM, cells whose gates
see only the input at most 0.5x. The "runs" column says what ran each cell's sequence:
torch's fused RNN kernel (oneDNN, cuDNN; see rnnrepro.cells.fused, cells that are torch's LSTM
or GRU), torch's op without a fused kernel ("torch op"), or our own loop ("loop"). Under each
input-only cell a "floor" row times that cell's input projection W_ih x + b alone (forward,
backward, Adagrad), which no implementation of the cell can undercut: where the floor is above
0.5x, so is the cell.

    python benchmarks/bench_cells.py                       # the issue's grid: T 35, 100 x H 128, 512
    python benchmarks/bench_cells.py --threads 1 2         # one table per thread count
    python benchmarks/bench_cells.py --device cuda         # ratios to cuDNN's nn.LSTM (skips without CUDA)
    python benchmarks/bench_cells.py --steps 35 --hidden 128 --repeats 5 --cells lstm sgru
    RNNREPRO_FUSED=0 python benchmarks/bench_cells.py      # our loops for every cell, LSTM and GRU included
    RNNREPRO_TORCHSCRIPT=0 python benchmarks/bench_cells.py     # eager loops instead of TorchScript
    RNNREPRO_PREPACK=0 python benchmarks/bench_cells.py     # MKL addmm for every per-step product
"""
from __future__ import annotations

import argparse

import torch

from rnnrepro.cells import CELLS
from rnnrepro.cells.compiled import scripting_enabled
from rnnrepro.cells.fused import fused_mode
from rnnrepro.preflight.timing import (INPUT_ONLY_TARGET, REFERENCE, SEQUENTIAL_TARGET, is_input_only,  # noqa: F401
                                       measure, projection_key)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--batch", type=int, default=20, help="batch size (default 20)")
    parser.add_argument("--steps", type=int, nargs="+", default=[35, 100], help="sequence lengths T")
    parser.add_argument("--input", type=int, default=512, help="input size (default 512)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[128, 512], help="hidden sizes H")
    parser.add_argument("--repeats", type=int, default=7,
                        help="rounds: timed (nn.LSTM step, cell step) pairs per cell (default 7; "
                             "the default grid then takes about 2-3 minutes per thread count here)")
    parser.add_argument("--statistic", choices=("median", "min"), default="median",
                        help="per-side summary of the step times (default median; min: best of the "
                             "repeats, the least disturbed by other processes)")
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed steps before timing (default 2: TorchScript specialises its loops in the first runs)")
    parser.add_argument("--cells", nargs="+", default=None, help="cells to time (default: all registered)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where to run (default cpu); cuda without CUDA prints a line and exits 0")
    parser.add_argument("--threads", type=int, nargs="+", default=None,
                        help="torch thread counts, one table each (default: torch's)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def runs_label(labels: list[str]) -> str:
    """One label when every shape ran the same way, else each shape's, joined by '/'."""
    return labels[0] if len(set(labels)) == 1 else "/".join(labels)


def print_table(names: list[str], shapes: list[tuple[int, int]], results: dict, threads: int) -> None:
    headers = [f"T={s} H={h}" for s, h in shapes]
    width = max(len(n) for n in [projection_key(n) for n in names] + [REFERENCE, "cell (00 threads)"]) + 2
    runs = {name: runs_label([results[s][2][name] for s in shapes])
            for name in [REFERENCE, *names, *(projection_key(n) for n in names if is_input_only(n))]}
    runs_width = max(len("runs"), *(len(r) for r in runs.values())) + 2
    print(f"cell ({threads} thread{'s' if threads != 1 else ''})".ljust(width) + "kind        "
          + "runs".ljust(runs_width) + "".join(h.rjust(12) for h in headers) + "   target")
    print(REFERENCE.ljust(width) + "reference   " + runs[REFERENCE].ljust(runs_width)
          + "".join(f"{results[s][0] * 1000:12.1f}" for s in shapes))
    for name in names:
        input_only = is_input_only(name)
        target = INPUT_ONLY_TARGET if input_only else SEQUENTIAL_TARGET
        ratios = [results[s][1][name] for s in shapes]
        floors = [results[s][1][projection_key(name)] for s in shapes] if input_only else []
        verdict = "ok" if max(ratios) <= target else "MISSED"
        if any(floor > target for floor in floors):
            verdict += " (floor above target)"
        print(name.ljust(width) + ("input-only  " if input_only else "sequential  ") + runs[name].ljust(runs_width)
              + "".join(f"{r:12.2f}" for r in ratios) + f"   <= {target:.2f} {verdict}")
        if input_only:
            print(projection_key(name).ljust(width) + "floor       " + "-".ljust(runs_width)
                  + "".join(f"{r:12.2f}" for r in floors) + "   (the projection alone)")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("CUDA is not available: nothing to benchmark on --device cuda (skipped)")
        return
    names = args.cells or CELLS.names()
    shapes = [(steps, hidden) for steps in args.steps for hidden in args.hidden]
    thread_counts = args.threads or [torch.get_num_threads()]
    reference = "cuDNN's nn.LSTM" if args.device == "cuda" else "nn.LSTM"
    print(f"torch {torch.__version__}, {args.device}, batch {args.batch}, input {args.input}, "
          f"loops {'TorchScript' if scripting_enabled() else 'eager'}, RNNREPRO_FUSED={fused_mode()}, "
          f"{args.repeats} rounds of ({reference}, cell) step pairs, ratio of the {args.statistic} step times")
    previous = torch.get_num_threads()
    try:
        for threads in thread_counts:
            torch.set_num_threads(threads)
            results = {shape: measure(names, *shape, args) for shape in shapes}
            print_table(names, shapes, results, torch.get_num_threads())
    finally:
        torch.set_num_threads(previous)


if __name__ == "__main__":
    main()
