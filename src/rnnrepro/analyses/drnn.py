"""Analyses of the drnn paper (Turek et al.): Theorem 1 checked numerically, and the cost of
the delayed, plain and bidirectional LSTM against sequence length.

``theorem1``: for random k-layer stacks (eqs. 2-4) of SRN and LSTM cells, the flattened
single-layer network of eqs. 5-6 (:func:`rnnrepro.layers.flatten_stack`,
:class:`rnnrepro.models.delayed.FlattenedRNN`) run on the same inputs; Theorem 1 says its output
read k − 1 steps late equals the stack's output (ŷ_{t+k−1} = y_t) and block i of its state
equals layer i's state i − 1 steps late (ĥ^{i}_{t+i−1} = h^(i)_t). In float64 the largest
differences must be at rounding level (~1e-15). As a control, the same output read one step
too early (delay k − 2) differs by order one.

``cost``: the paper's cost argument (Sec. 3.3): "for a sequence of length T, the cost to compute
a forward-pass for the d-RNN is T + d, while for the Bi-RNN the cost is 2T". We time, in one
process and on the same random inputs, a forward pass and a training step (forward, backward,
Adam update) of the LSTM (100 units), d-LSTMs (100 units, delays ``delays``) and the Bi-LSTM
(70 units per direction, about the same number of parameters) for each length T, and report
the median of ``repeats`` timings after ``warmup`` untimed ones, the networks interleaved (each
repeat times every network once, in a random order). The networks run on the CPU. Absolute
times depend on the machine (processor, threads, load); only their ratios and trends are
comparable with the paper's claim. Both the wall-clock time and the CPU time of the process are
recorded; the CPU time is the steadier measure on a machine shared with other jobs.
``sequential_steps`` is the number of cell steps a forward pass runs one after another, the
quantity the claim counts (it says T + d for the d-RNN, 2T for the Bi-RNN): counted as the
networks run, as the sum over their recurrent layers (each direction of the Bi-LSTM is one) of
the length of the sequence each layer is given, not written down from the formula.
"""
from __future__ import annotations

import random
import statistics
import time

import pandas as pd
import torch

from . import ANALYSES


def _real_steps(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    from ..layers import length_mask

    return x * length_mask(lengths, x.shape[0]).to(x.dtype)


@ANALYSES.register("theorem1")
def theorem1(cells: list | None = None, layers: list | None = None, input_size: int = 3, hidden_size: int = 8,
             output_size: int = 2, steps: int = 12, batch: int = 4, seed: int = 0) -> pd.DataFrame:
    """Largest |stack − flattened| differences (float64) for each cell and number of layers k.
    For a cell eq. 5 cannot flatten exactly (the GRU: its reset gate would also gate the lower
    layer's output, which reaches block i through the recurrent weights) the same block weights
    are built anyway, and the differences say how far they are from the stack.

    Rows: ``cell, layers, delay, metric, value`` with metrics ``max_abs_output_difference``
    (model outputs, head included, flattened read at delay k − 1), ``max_abs_state_difference``
    (every block i against layer i at delay i − 1) and ``max_abs_output_difference_early``
    (the control: flattened output read at delay k − 2). Sequences have different lengths;
    padding steps are left out.
    """
    from ..cells import build_cell
    from ..layers import Recurrent, Stacked, flatten_stack, read_delayed
    from ..models import build_model
    from ..models.delayed import FlattenedRNN
    from ..tasks.base import Batch, TaskIO

    cells = list(cells or ["srn", "lstm"])
    layers = list(layers or [2, 3, 4, 5])
    io = TaskIO(output_size=output_size, level="token", input_features=input_size)
    lengths = torch.tensor([steps] + [max(1, steps - 1 - i) for i in range(batch - 1)])
    rows = []
    for cell in cells:
        for k in layers:
            if k < 2:
                raise ValueError(f"theorem1 compares stacks of k >= 2 layers, got {k}")
            torch.manual_seed(seed * 1000 + 10 * k + cells.index(cell))
            x = torch.randn(steps, batch, input_size, dtype=torch.float64)
            stacked = build_model("stacked", io, cell, hidden_size=hidden_size, layers=k).double().eval()
            flattened = FlattenedRNN.from_stacked(stacked, force=True).eval()
            inputs = Batch(x, lengths, torch.zeros(0))
            with torch.no_grad():
                expected = _real_steps(stacked(inputs), lengths)
                got = _real_steps(flattened(inputs), lengths)
                # the control: the flattened network's output one step too early (delay k - 2)
                states, _ = flattened.rnn(x, lengths)
                early = _real_steps(flattened.head(read_delayed(states, k - 2))[:steps], lengths)
                # Theorem 1's second claim, on a bare stack of the cells: block i = layer i at delay i - 1
                stack = Stacked([Recurrent(build_cell(cell, input_size if i == 0 else hidden_size, hidden_size,
                                                      dtype=torch.float64)) for i in range(k)])
                flat = flatten_stack(stack.cells(), force=True)
                flat_states, _ = flat(x, lengths)
                layer_input, state_difference = x, 0.0
                for i, layer in enumerate(stack.layers):
                    layer_input, _ = layer(layer_input, lengths)
                    block = flat_states[i:i + steps, :, i * hidden_size:(i + 1) * hidden_size]
                    difference = (_real_steps(block, lengths) - _real_steps(layer_input, lengths)).abs().max()
                    state_difference = max(state_difference, float(difference))
            base = {"cell": cell, "layers": k, "delay": k - 1}
            rows += [
                {**base, "metric": "max_abs_output_difference", "value": float((got - expected).abs().max())},
                {**base, "metric": "max_abs_state_difference", "value": state_difference},
                {**base, "metric": "max_abs_output_difference_early", "value": float((early - expected).abs().max())},
                {**base, "metric": "max_abs_output", "value": float(expected.abs().max())},
            ]
    return pd.DataFrame(rows)


theorem1.emitted_metrics = frozenset({"max_abs_output_difference", "max_abs_state_difference",
                                      "max_abs_output_difference_early", "max_abs_output"})


def _forward(model, batch):
    def forward():
        model.eval()
        with torch.no_grad():
            model(batch)
    return forward


def _train_step(model, batch):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def train_step():
        model.train()
        optimizer.zero_grad(set_to_none=True)
        output = model(batch)
        loss = torch.nn.functional.cross_entropy(output.flatten(0, 1), batch.targets.flatten())
        loss.backward()
        optimizer.step()
    return train_step


def _sequential_steps(model, batch) -> int:
    """The cell steps one forward pass of ``model`` runs: the length of the sequence each of its
    recurrent layers (:class:`rnnrepro.layers.Recurrent`, one per direction) is given, summed."""
    from ..layers import Recurrent

    lengths: list[int] = []
    hooks = [module.register_forward_pre_hook(lambda _, args: lengths.append(int(args[0].shape[0])))
             for module in model.modules() if isinstance(module, Recurrent)]
    try:
        _forward(model, batch)()
    finally:
        for hook in hooks:
            hook.remove()
    if not lengths:
        raise RuntimeError(f"{type(model).__name__} ran no recurrent layer: no steps to count")
    return sum(lengths)


#: The timings of :func:`cost` (each also with ``_min`` and ``_max``).
COST_TIMINGS = [f"{what}_{clock}seconds" for what in ("forward", "train_step") for clock in ("", "cpu_")]


@ANALYSES.register("cost")
def cost(lengths: list | None = None, delays: list | None = None, hidden_size: int = 100,
         bidirectional_hidden_size: int = 70, input_size: int = 4, output_size: int = 4, batch_size: int = 100,
         repeats: int = 5, warmup: int = 1, cell: str = "lstm", seed: int = 0) -> pd.DataFrame:
    """Median time of a forward pass and of a training step against sequence length T.

    Rows: ``model, delay, T, metric, value`` with metrics ``forward_seconds`` and
    ``train_step_seconds`` (wall-clock medians over ``repeats``), ``forward_cpu_seconds`` and
    ``train_step_cpu_seconds`` (CPU time of this process, which other processes on a shared
    machine disturb far less), each also with ``_min`` / ``_max`` (spread),
    ``sequential_steps`` (the cell steps one forward pass runs, counted by :func:`_sequential_steps`;
    the claim says T, T + d, 2T) and ``params``. ``model`` is ``basic``
    (LSTM), ``delayed`` (d-LSTM, one row set per delay) or ``brnn`` (Bi-LSTM).
    """
    from ..models import build_model
    from ..tasks.base import Batch, TaskIO

    lengths = list(lengths or [25, 50, 100, 200])
    delays = list(delays or [1, 5, 10])
    io = TaskIO(output_size=output_size, level="token", input_features=input_size)
    networks = [("basic", 0, {"hidden_size": hidden_size})]
    networks += [("delayed", d, {"hidden_size": hidden_size, "delay": d}) for d in delays]
    networks += [("brnn", 0, {"hidden_size": bidirectional_hidden_size})]
    rows = []
    order = random.Random(seed)
    for T in lengths:
        generator = torch.Generator().manual_seed(seed * 7919 + T)
        x = torch.randn(T, batch_size, input_size, generator=generator)
        targets = torch.randint(0, output_size, (T, batch_size), generator=generator)
        batch = Batch(x, torch.full((batch_size,), T), targets)
        calls = {}
        for name, delay, params in networks:
            torch.manual_seed(seed)
            model = build_model(name, io, cell, **params)
            calls[(name, delay)] = (model, _forward(model, batch), _train_step(model, batch))
        # Interleaved: every repeat times each network once, in a random order, so that changes
        # of the machine's load during the measurement hit all networks alike.
        metrics = COST_TIMINGS
        times = {(key, metric): [] for key in calls for metric in metrics}
        for repeat in range(warmup + repeats):
            keys = list(calls)
            order.shuffle(keys)
            for key in keys:
                for what, function in (("forward", calls[key][1]), ("train_step", calls[key][2])):
                    wall, cpu = time.perf_counter(), time.process_time()
                    function()
                    if repeat >= warmup:
                        times[(key, f"{what}_seconds")].append(time.perf_counter() - wall)
                        times[(key, f"{what}_cpu_seconds")].append(time.process_time() - cpu)
        for (name, delay), (model, _, _) in calls.items():
            steps = _sequential_steps(model, batch)  # counted as it runs: T, T + d, 2T by the claim
            base = {"model": name, "delay": delay, "T": T}
            for metric in metrics:
                measured = times[((name, delay), metric)]
                rows += [{**base, "metric": metric, "value": statistics.median(measured)},
                         {**base, "metric": f"{metric}_min", "value": min(measured)},
                         {**base, "metric": f"{metric}_max", "value": max(measured)}]
            rows += [{**base, "metric": "sequential_steps", "value": steps},
                     {**base, "metric": "params", "value": sum(p.numel() for p in model.parameters())}]
    table = pd.DataFrame(rows)
    table["repeats"] = repeats
    table["threads"] = torch.get_num_threads()
    return table


cost.emitted_metrics = frozenset({f"{timing}{spread}" for timing in COST_TIMINGS for spread in ("", "_min", "_max")}
                                 | {"sequential_steps", "params"})
