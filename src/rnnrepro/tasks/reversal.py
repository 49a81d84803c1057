"""Sequence reversal (drnn paper, Turek et al., Sec. 4.1 and Fig. 3).

Sequences x_1..x_T of tokens drawn uniformly from {1, ..., V}; the target at step t is
x_{T-t+1}, the input read backwards: y_t = x_{T-t+1}, t = 1..T. The paper uses T = 20, V = 4
and 10,000 / 2,000 / 2,000 training / validation / test sequences, feeds the tokens as
one-hot vectors and trains with a softmax over the V values and cross-entropy.

Here the inputs are (T, B, V) one-hot float vectors (so the d-RNN's zero padding is a vector
no token uses), the targets (T, B) class indices 0..V-1 (token v is class v - 1) and the metric
the token-level accuracy (the paper's "accuracy", its "true positive rate"), with the mean
cross-entropy per token as ``loss`` (what the authors' code watches to stop early). The data are
generated from ``data_seed`` alone (one generator per split), so every model and seed sees
the same sequences.

A network that sees d inputs beyond the current one can output y_t correctly once x_{T-t+1}
has been read and must guess (probability 1/V) before; the paper's expected accuracy of such
a network (Sec. 4.1) is :func:`analytic_bound`; :func:`exact_bound` counts the positions.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ..bounds import reversal_bound as analytic_bound  # noqa: F401 - the task's bound, torch-free
from ..metrics.items import ItemRecorder
from .base import ACCURACY_ITEMS, Batch, Task, TaskIO, random_order_chunks, split_accuracy
from .registry import TASKS

SPLIT_OFFSETS = {"train": 0, "dev": 1, "test": 2}


def exact_bound(d: int, T: int = 20, V: int = 4) -> float:
    """The expected accuracy of the best predictor that sees x_1..x_{t+d} at step t, counted
    exactly: y_t = x_{T-t+1} is known iff T − t + 1 ≤ t + d, i.e. for t ≥ (T + 1 − d)/2;
    the other positions are right with probability 1/V."""
    first = max(1, math.ceil((T + 1 - d) / 2))
    known = max(0, T - first + 1)
    return (known + (T - known) / V) / T


def reversal_data(n: int, steps: int, vocab: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """``n`` sequences: tokens (T, n) in 1..V and targets (T, n) = tokens reversed in time."""
    tokens = torch.randint(1, vocab + 1, (steps, n), generator=generator)
    return tokens, tokens.flip(0)


@TASKS.register("reversal")
class SequenceReversal(Task):
    """Output the input sequence in reverse order while reading it (drnn Sec. 4.1)."""

    dev_metric = "dev_accuracy"
    #: the accuracy, and the mean cross-entropy that the authors' code watches for early stopping
    split_metrics = ("accuracy", "loss")
    item_metrics = ACCURACY_ITEMS
    packable = True

    def __init__(self, data=None, T: int = 20, V: int = 4, train_size: int = 10000, dev_size: int = 2000,
                 test_size: int = 2000, data_seed: int = 0):
        if T < 1 or V < 2:
            raise ValueError(f"reversal task needs T >= 1 and V >= 2, got T={T}, V={V}")
        self.T, self.V = T, V
        self.io = TaskIO(output_size=V, level="token", input_features=V)
        sizes = {"train": train_size, "dev": dev_size, "test": test_size}
        self.splits = {}
        for split, size in sizes.items():
            generator = torch.Generator().manual_seed(data_seed * 3 + SPLIT_OFFSETS[split])
            self.splits[split] = reversal_data(size, T, V, generator)

    def one_hot(self, tokens: Tensor) -> Tensor:
        """(T, B) tokens 1..V -> (T, B, V) one-hot float vectors."""
        return nn.functional.one_hot(tokens - 1, self.V).float()

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        tokens, targets = self.splits[split]
        n = tokens.shape[1]
        return [Batch(inputs=self.one_hot(tokens[:, idx]), lengths=torch.full((len(idx),), self.T),
                      targets=targets[:, idx] - 1)
                for idx in random_order_chunks(n, batch_size, generator)]

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        """Cross-entropy over every position; output (T, B, V)."""
        return nn.functional.cross_entropy(output.flatten(0, 1), batch.targets.flatten())

    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                 items: ItemRecorder | None = None) -> dict[str, float]:
        return split_accuracy(self, model, split, batch_size, device, items, with_loss=True)
