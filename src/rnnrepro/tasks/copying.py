"""The copying memory problem (Hochreiter & Schmidhuber 1997; Arjovsky et al. 2016, Sec. 4.1;
as in the PRU paper, Sec. 4.1 and Fig. 3).

Ten categories C_0..C_9: eight data categories C_0..C_7 and two controls, C_8 (blank) and C_9
(the delimiter). An input sequence has length T + 20:

    x = (a_1, .., a_10,  C_8 × (T − 1),  C_9,  C_8 × 10),      a_k drawn uniformly from C_0..C_7,

and the target sequence, of the same length, is blank until the delimiter has been read and
then repeats the ten data categories:

    y = (C_8 × (T + 10),  a_1, .., a_10),

so the ten categories must be kept for T steps. The loss is the cross-entropy of the
prediction at every one of the T + 20 steps, averaged over the steps (and the sequences):

    L = −1/(T + 20) Σ_t log p(y_t | x_1..x_t).

The memoryless strategy predicts C_8 for the first T + 10 steps (loss 0) and a uniform
guess among C_0..C_7 for the last ten (loss log 8 each), hence the baseline the paper draws
(after Arjovsky et al.):

    L_memoryless = 10 log 8 / (T + 20)                     (:func:`memoryless_baseline`).

Inputs are one-hot vectors of the ten categories, (T + 20, B, 10) floats; targets are the
category indices (T + 20, B). The data are generated from ``data_seed`` alone (one generator
per split), so every cell and seed sees the same sequences.

Metrics of a split: ``<split>_loss``, L over every step of every sequence, and
``<split>_copy_accuracy``, the fraction of the ten recalled categories predicted right (argmax)
over the split (1/8 by guessing).
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from ..bounds import COPIED, DATA_CATEGORIES  # C_0..C_7, and the 10 of them copied
from ..bounds import copying_baseline as memoryless_baseline  # noqa: F401 - the task's baseline, torch-free
from .base import Batch, Task, TaskIO, main_output, random_order_chunks
from .registry import TASKS

CATEGORIES = 10  # C_0..C_9
BLANK, DELIMITER = 8, 9  # C_8, C_9
SPLIT_OFFSETS = {"train": 0, "dev": 1, "test": 2}


def copying_problem(n: int, T: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """``n`` sequences: input categories (T + 20, n) and target categories (T + 20, n)."""
    data = torch.randint(0, DATA_CATEGORIES, (COPIED, n), generator=generator)
    steps = T + 2 * COPIED
    inputs = torch.full((steps, n), BLANK, dtype=torch.long)
    inputs[:COPIED] = data
    inputs[COPIED + T - 1] = DELIMITER
    targets = torch.full((steps, n), BLANK, dtype=torch.long)
    targets[-COPIED:] = data
    return inputs, targets


@TASKS.register("copying")
class CopyingProblem(Task):
    """Reproduce ten categories T steps after reading them; cross-entropy at every step."""

    dev_metric = "dev_loss"
    dev_goal = "min"
    split_metrics = ("loss", "copy_accuracy")
    io = TaskIO(output_size=CATEGORIES, level="token", input_features=CATEGORIES)
    packable = True

    def __init__(self, data=None, T: int = 100, train_size: int = 10000, dev_size: int = 1000,
                 test_size: int = 1000, data_seed: int = 0):
        if T < 1:
            raise ValueError(f"copying task needs T >= 1, got {T}")
        self.T = T
        sizes = {"train": train_size, "dev": dev_size, "test": test_size}
        self.splits = {}
        for split, size in sizes.items():
            generator = torch.Generator().manual_seed(data_seed * 3 + SPLIT_OFFSETS[split])
            self.splits[split] = copying_problem(size, T, generator)

    @property
    def baseline(self) -> float:
        return memoryless_baseline(self.T)

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        inputs, targets = self.splits[split]
        steps, n = inputs.shape
        return [Batch(inputs=nn.functional.one_hot(inputs[:, idx], CATEGORIES).float(),
                      lengths=torch.full((len(idx),), steps), targets=targets[:, idx])
                for idx in random_order_chunks(n, batch_size, generator)]

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        """Cross-entropy averaged over every step and sequence; output (T + 20, B, 10)."""
        return nn.functional.cross_entropy(output.flatten(0, 1), batch.targets.flatten())

    @torch.no_grad()
    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device) -> dict[str, float]:
        """``<split>_loss`` (mean cross-entropy per step) and ``<split>_copy_accuracy``."""
        total, steps, correct, copied = 0.0, 0, 0, 0
        for batch in self.batches(split, batch_size):
            batch = batch.to(device)
            output = main_output(model(batch)).float()
            total += float(nn.functional.cross_entropy(output.flatten(0, 1), batch.targets.flatten(),
                                                       reduction="sum"))
            steps += batch.targets.numel()
            recalled = output[-COPIED:].argmax(-1) == batch.targets[-COPIED:]
            correct += int(recalled.sum())
            copied += recalled.numel()
        return {f"{split}_loss": total / steps, f"{split}_copy_accuracy": correct / copied}
