"""The sine of a partly acausal linear filter (drnn paper, Turek et al., Sec. 4.2, Figs. 4 and 6).

The network reads x_1..x_T and must output, at every step t,

    y_t = sin( γ · Σ_{j=−c+1}^{a} w_{j+c} x_{t+j} ),      a + c = 20,

a linear filter w of 20 taps applied to the c − 1 past inputs, the current one and the a
future ones, passed through a sine. γ sets how non-linear the function is (small γ: nearly
linear); a ≥ 0, the filter's acausality, how many future inputs it needs. As in the paper:
w has 20 elements drawn uniformly in [0, 1) for each (γ, a) combination, the inputs are
T = 50 values drawn uniformly in [0, 1), x_s = 0 outside 1..T ("zero padding for the
borders"), and there are 10,000 / 2,000 / 2,000 training / validation / test sequences; the
paper generates 5 repetitions of each dataset with different w and x, which ``data_seed``
numbers here. The loss and metric are the mean squared error over all T outputs.

The filter depends on (data_seed, γ, a) and is shared by the three splits; the inputs of a
split depend on (data_seed, γ, a, split). Every model and training seed therefore sees the
same data for a given (data_seed, γ, a).
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from ..metrics.items import ItemRecorder
from .base import MSE_ITEMS, Batch, Task, TaskIO, random_order_chunks, split_mse
from .registry import TASKS

SPLIT_OFFSETS = {"train": 1, "dev": 2, "test": 3}


def filter_seed(data_seed: int, gamma: float, acausality: int, part: int) -> int:
    """A generator seed for one (data_seed, γ, a) combination; ``part`` 0 is the filter, 1-3 the splits."""
    return ((data_seed * 100_003 + round(gamma * 1000)) * 1_009 + acausality) * 4 + part


def sine_filter_targets(x: Tensor, w: Tensor, gamma: float, acausality: int) -> Tensor:
    """y_t = sin(γ Σ_{j=−c+1}^{a} w_{j+c} x_{t+j}) for inputs ``x`` (T, n), filter ``w`` (L,), c = L − a.

    Inputs outside 1..T count as zero. Returns (T, n).
    """
    taps = w.shape[0]
    if not 0 <= acausality <= taps:
        raise ValueError(f"acausality must be in 0..{taps} for a filter of {taps} taps, got {acausality}")
    causal = taps - acausality
    steps = x.shape[0]
    padded = torch.cat([x.new_zeros(taps, *x.shape[1:]), x, x.new_zeros(taps, *x.shape[1:])])
    # ``padded`` is x with ``taps`` zeros on each side; its window s (of ``taps`` values) starts at
    # x[s - taps] (0-based), so step t (0-based) needs the window s = t - c + 1 + taps.
    start = taps - causal + 1
    windows = padded.unfold(0, taps, 1)[start:start + steps]  # (T, n, taps): x_{t-c+1}..x_{t+a}
    return torch.sin(gamma * (windows * w).sum(-1))


def sine_filter_data(n: int, steps: int, w: Tensor, gamma: float, acausality: int,
                     generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """``n`` sequences: inputs (T, n) uniform in [0, 1) and targets (T, n)."""
    x = torch.rand(steps, n, generator=generator, dtype=torch.float64)
    return x.float(), sine_filter_targets(x, w, gamma, acausality).float()


@TASKS.register("sine_filter")
class SineFilter(Task):
    """Regression of y_t = sin(γ Σ w x) at every step, one real input per step (drnn Sec. 4.2)."""

    dev_metric = "dev_mse"
    split_metrics = ("mse",)
    item_metrics = MSE_ITEMS
    io = TaskIO(output_size=1, level="token", input_features=1)
    packable = True
    data_params = ("data_seed", "gamma", "acausality")

    def __init__(self, data=None, gamma: float = 1.0, acausality: int = 0, taps: int = 20, T: int = 50,
                 train_size: int = 10000, dev_size: int = 2000, test_size: int = 2000, data_seed: int = 0):
        if gamma <= 0 or T < 1:
            raise ValueError(f"sine_filter needs gamma > 0 and T >= 1, got gamma={gamma}, T={T}")
        self.gamma, self.acausality, self.T = gamma, acausality, T
        self.filter = torch.rand(taps, generator=torch.Generator().manual_seed(
            filter_seed(data_seed, gamma, acausality, 0)), dtype=torch.float64)
        sizes = {"train": train_size, "dev": dev_size, "test": test_size}
        self.splits = {}
        for split, size in sizes.items():
            generator = torch.Generator().manual_seed(filter_seed(data_seed, gamma, acausality, SPLIT_OFFSETS[split]))
            self.splits[split] = sine_filter_data(size, T, self.filter, gamma, acausality, generator)

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        inputs, targets = self.splits[split]
        n = inputs.shape[1]
        return [Batch(inputs=inputs[:, idx].unsqueeze(-1), lengths=torch.full((len(idx),), self.T),
                      targets=targets[:, idx])
                for idx in random_order_chunks(n, batch_size, generator)]

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        """Mean squared error over every step of every sequence; output (T, B, 1)."""
        return nn.functional.mse_loss(output.squeeze(-1), batch.targets)

    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                 items: ItemRecorder | None = None) -> dict[str, float]:
        return split_mse(self, model, split, batch_size, device, items)
