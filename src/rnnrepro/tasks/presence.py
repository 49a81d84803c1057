"""The "A"-presence toy task of the elstm paper (Su & Kuo, Sec. 3.1, Fig. 4, Table 2).

A sequence of length T holds a single "A" among "B"s, or only "B"s; the network reads it whole
and tells at step T whether "A" is present. The data set is the paper's: the T positive
sequences with "A" at positions 1..T and one negative sequence without it,

    x^(k) = (B, .., B, A, B, .., B)  ("A" at position k, k = 1..T),  y = 1;    x^(0) = (B, .., B),  y = 0,

and what is measured is the *training* loss: a cell whose memory of an early "A" decays cannot
tell the positives with "A" near the start from the negative, so its loss plateaus above zero
(the paper: the LSTM from T ≈ 60 on, while the ELSTM's reaches zero). The dev and test splits
are the same T + 1 sequences, so ``dev_loss`` per epoch is the training-loss curve.

Tokens: 1 = "A", 2 = "B" (0 is padding, unused: every sequence has length T). Targets are
classes 0 (absent) and 1 (present); the loss is the softmax cross-entropy of the two outputs
read after step T.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .base import Batch, Task, TaskIO, main_output, random_order_chunks
from .registry import TASKS

A, B = 1, 2


def presence_data(T: int) -> tuple[Tensor, Tensor]:
    """Inputs (T, T + 1) token ids: column k - 1 has "A" at position k (k = 1..T), the last
    column none; targets (T + 1,): 1, .., 1, 0."""
    tokens = torch.full((T, T + 1), B, dtype=torch.long)
    tokens[torch.arange(T), torch.arange(T)] = A
    targets = torch.ones(T + 1, dtype=torch.long)
    targets[T] = 0
    return tokens, targets


@TASKS.register("presence")
class Presence(Task):
    """Is "A" in the sequence? Sequence-level classification read after the last step."""

    dev_metric = "dev_loss"
    dev_goal = "min"
    split_metrics = ("loss", "accuracy")
    io = TaskIO(output_size=2, level="sequence", input_vocab=3)
    packable = True
    data_params = ()

    def __init__(self, data=None, T: int = 10):
        if T < 1:
            raise ValueError(f"the presence task needs T >= 1, got {T}")
        self.T = T
        self.tokens, self.targets = presence_data(T)

    def sequence_with_a(self, position: int | None) -> Batch:
        """The sequence with "A" at ``position`` (1-based; None: the negative), as a batch of one."""
        column = self.T if position is None else position - 1
        if not 0 <= column <= self.T:
            raise ValueError(f"position {position} is not in 1..{self.T}")
        return Batch(self.tokens[:, [column]], torch.tensor([self.T]), self.targets[[column]])

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        return [Batch(self.tokens[:, idx], torch.full((len(idx),), self.T), self.targets[idx])
                for idx in random_order_chunks(self.T + 1, batch_size, generator)]

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        return nn.functional.cross_entropy(output, batch.targets)

    @torch.no_grad()
    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device) -> dict[str, float]:
        """``<split>_loss`` (mean cross-entropy over the T + 1 sequences) and ``<split>_accuracy``."""
        total, correct = 0.0, 0
        for batch in self.batches(split, batch_size):
            batch = batch.to(device)
            output = main_output(model(batch))
            total += float(nn.functional.cross_entropy(output, batch.targets, reduction="sum"))
            correct += int((output.argmax(-1) == batch.targets).sum())
        return {f"{split}_loss": total / (self.T + 1), f"{split}_accuracy": correct / (self.T + 1)}
