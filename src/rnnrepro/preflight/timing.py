"""What the pre-flight and the benchmarks time, in one place: a cell's training step against
torch's ``nn.LSTM`` (:func:`measure`; ``benchmarks/bench_cells.py`` prints it as a table), and the
runs a pack is timed on (:func:`presence`, :func:`sine`; ``benchmarks/bench_pack.py``).

One step is forward, backward of a sum of squared outputs, and an Adagrad update (the elstm
paper's optimizer). In every round each cell step is timed right after an ``nn.LSTM`` step, so
load from other processes affects both sides alike. Targets on a CPU: cells whose gates see
h_{t-1} at most :data:`SEQUENTIAL_TARGET` × ``nn.LSTM``, cells whose gates see only the input at
most :data:`INPUT_ONLY_TARGET` ×.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from ..cells import build_cell
from ..layers import Recurrent

SEQUENTIAL_TARGET = 1.25
INPUT_ONLY_TARGET = 0.5
REFERENCE = "nn.LSTM (ms)"


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


# -- the runs a pack is timed on --------------------------------------------------------------
def presence(seed: int, cell: str = "elstm") -> dict:
    """elstm Fig. 5's toy task at T = 10 (paper settings but 200 epochs of the 2,000)."""
    return {"task": {"name": "presence", "T": 10}, "model": {"name": "basic", "embedding_size": 2, "hidden_size": 1},
            "cell": {"name": cell, **({"period": 100} if cell == "elstm" else {})},
            "train": {"optimizer": "adam", "lr": 0.03, "batch_size": 5, "epochs": 200, "log_every": 20,
                      "checkpoint_every": 2000}, "seed": seed}


def sine(seed: int, hidden: int) -> dict:
    """drnn Fig. 4's sine filter (T = 50, 20 taps, batch 100, Adam 1e-3, clip 1) with 1,000 training
    sequences (20 steps an epoch) and 10 epochs; runs differ in γ and the data seed, as in the grid."""
    gammas = [0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 1.5]
    return {"task": {"name": "sine_filter", "taps": 20, "T": 50, "train_size": 2000, "dev_size": 200,
                     "test_size": 200, "gamma": gammas[seed % len(gammas)], "acausality": 5,
                     "data_seed": 1 + seed // len(gammas)},
            "model": {"name": "delayed", "hidden_size": hidden, "delay": 5}, "cell": {"name": "lstm"},
            "train": {"optimizer": "adam", "lr": 0.001, "clip": 1.0, "batch_size": 100, "epochs": 10,
                      "eval_batch_size": 500, "checkpoint_every": 1000, "log_every": 100}, "seed": seed}
