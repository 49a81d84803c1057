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
    RNNREPRO_SCRIPT=0 python benchmarks/bench_cells.py     # eager loops instead of TorchScript
    RNNREPRO_PACKED=0 python benchmarks/bench_cells.py     # MKL addmm for every per-step product
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from rnnrepro.cells import CELLS, build_cell
from rnnrepro.cells.compiled import scripting_enabled
from rnnrepro.cells.fused import fused_mode
from rnnrepro.layers import Recurrent

SEQUENTIAL_TARGET = 1.25
INPUT_ONLY_TARGET = 0.5
REFERENCE = "nn.LSTM (ms)"


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


class TorchLSTM(nn.Module):
    """The reference: torch.nn.LSTM, output (T, B, H) like Recurrent."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size)

    def forward(self, x):
        return self.lstm(x)


class InputProjectionOnly(nn.Module):
    """A cell's input projection W_ih x + b alone, the part of an input-only cell that no
    loop can avoid: its step time is the least such a cell can take."""

    def __init__(self, cell: nn.Module):
        super().__init__()
        self.cell = cell

    def forward(self, x):
        return self.cell.project_input(x), None


def is_input_only(name: str) -> bool:
    return build_cell(name, 2, 2).hh_chunks == 0


def projection_key(name: str) -> str:
    return f"{name} W_ih x only"


def training_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor) -> None:
    optimizer.zero_grad(set_to_none=True)
    out, _ = model(x)
    out.pow(2).sum().backward()
    optimizer.step()


def time_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor) -> float:
    if x.is_cuda:
        torch.cuda.synchronize(x.device)
    start = time.perf_counter()
    training_step(model, optimizer, x)
    if x.is_cuda:
        torch.cuda.synchronize(x.device)
    return time.perf_counter() - start


KERNELS = {"Mkldnn": "oneDNN", "Cudnn": "cuDNN", "Miopen": "MIOpen"}


def what_ran(model: nn.Module, x: torch.Tensor) -> str:
    """What ran the model's sequence: torch's fused kernel (named by the backward node it left
    in the autograd graph: MkldnnRnnLayerBackward0, CudnnRnnBackward0), torch's RNN op without
    one ("torch op"), or our own loop ("loop")."""
    calls = []
    originals = {name: getattr(torch._VF, name) for name in ("lstm", "gru")}

    def counting(original):
        def run(*args):
            calls.append(original)
            return original(*args)
        return run

    for name, original in originals.items():
        setattr(torch._VF, name, counting(original))
    try:
        out, _ = model(x)
    finally:
        for name, original in originals.items():
            setattr(torch._VF, name, original)
    nodes, seen = [out.grad_fn], set()
    while nodes:
        node = nodes.pop()
        if node is None or node in seen or len(seen) > 200:
            continue
        seen.add(node)
        for marker, kernel in KERNELS.items():
            if type(node).__name__.startswith(marker):
                return kernel
        nodes.extend(parent for parent, _ in node.next_functions)
    return "torch op" if calls else "loop"


def measure(names: list[str], steps: int, hidden: int, args: argparse.Namespace
            ) -> tuple[float, dict[str, float], dict[str, str]]:
    """nn.LSTM's step time (s), each cell's ratio to it, and what ran each model (:func:`what_ran`).

    Rounds go over all cells, timing every cell step right after an nn.LSTM step, so each
    cell's samples are spread over the whole run and paired with reference steps taken at
    the same moments; the ratio is median(cell) / median(nn.LSTM beside it) over ``repeats``
    rounds (or minima), so slow spells of a shared machine affect both sides alike.
    """
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    x = torch.randn(steps, args.batch, args.input, device=device)
    reference = TorchLSTM(args.input, hidden).to(device)
    models = {name: Recurrent(build_cell(name, args.input, hidden, device=device)) for name in names}
    for name in [n for n in names if is_input_only(n)]:  # the floor of an input-only cell
        models[projection_key(name)] = InputProjectionOnly(build_cell(name, args.input, hidden, device=device))
    names = list(models)
    ran = {name: what_ran(model, x) for name, model in models.items()}
    ran[REFERENCE] = what_ran(reference, x)
    optimizers = {name: torch.optim.Adagrad(model.parameters(), lr=0.01) for name, model in models.items()}
    reference_optimizer = torch.optim.Adagrad(reference.parameters(), lr=0.01)
    for _ in range(args.warmup):
        training_step(reference, reference_optimizer, x)
        for name in names:
            training_step(models[name], optimizers[name], x)
    beside = {name: [] for name in names}
    own = {name: [] for name in names}
    order = list(names)
    for _ in range(args.repeats):
        for name in order:
            beside[name].append(time_step(reference, reference_optimizer, x))
            own[name].append(time_step(models[name], optimizers[name], x))
        order.reverse()
    summary = min if args.statistic == "min" else statistics.median
    ratios = {name: summary(own[name]) / summary(beside[name]) for name in names}
    return summary([t for times in beside.values() for t in times]), ratios, ran


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
