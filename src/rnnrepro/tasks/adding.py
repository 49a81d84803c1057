"""The adding problem (Hochreiter & Schmidhuber 1997; as in the PRU paper, Sec. 4.1).

Each input has two channels of length T: numbers drawn uniformly from [0, 1), and a marker
channel with a 1 at two positions, the first in the first half of the sequence and the
second in the second half. The target is the sum of the two marked numbers; the loss and
metric are the mean squared error. Predicting 1 whatever the input gives MSE 1/6 ≈ 0.167,
the baseline the paper draws. The data are generated from ``data_seed`` alone, so every
cell and seed sees the same sequences.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from ..metrics.items import ItemRecorder
from .base import MSE_ITEMS, Batch, Task, TaskIO, random_order_chunks, split_mse
from .registry import TASKS

SPLIT_OFFSETS = {"train": 0, "dev": 1, "test": 2}


def adding_problem(n: int, steps: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """``n`` sequences: inputs (T, n, 2) and targets (n,)."""
    values = torch.rand(steps, n, generator=generator)
    half = steps // 2
    first = torch.randint(0, half, (n,), generator=generator)
    second = torch.randint(half, steps, (n,), generator=generator)
    markers = torch.zeros(steps, n)
    columns = torch.arange(n)
    markers[first, columns] = 1.0
    markers[second, columns] = 1.0
    targets = values[first, columns] + values[second, columns]
    return torch.stack([values, markers], dim=2), targets


@TASKS.register("adding")
class AddingProblem(Task):
    """Regression of the sum of two marked numbers from the last state of the network."""

    dev_metric = "dev_mse"
    split_metrics = ("mse",)
    item_metrics = MSE_ITEMS
    io = TaskIO(output_size=1, level="sequence", input_features=2)
    packable = True

    def __init__(self, data=None, T: int = 100, train_size: int = 10000, dev_size: int = 1000,
                 test_size: int = 1000, data_seed: int = 0):
        if T < 2:
            raise ValueError(f"adding task needs T >= 2, got {T}")
        sizes = {"train": train_size, "dev": dev_size, "test": test_size}
        self.splits = {}
        for split, size in sizes.items():
            generator = torch.Generator().manual_seed(data_seed * 3 + SPLIT_OFFSETS[split])
            self.splits[split] = adding_problem(size, T, generator)

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        inputs, targets = self.splits[split]
        n = targets.shape[0]
        steps = inputs.shape[0]
        return [Batch(inputs=inputs[:, idx], lengths=torch.full((len(idx),), steps), targets=targets[idx])
                for idx in random_order_chunks(n, batch_size, generator)]

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        return nn.functional.mse_loss(output.squeeze(-1), batch.targets)

    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                 items: ItemRecorder | None = None) -> dict[str, float]:
        return split_mse(self, model, split, batch_size, device, items)
