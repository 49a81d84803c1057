"""Recognising aⁿbⁿ: the counting experiment the RNN tutorial's Sec. 8 invites.

The tutorial: a deterministic finite automaton "cannot recognize aⁿbⁿ, because we must
"count" the n to recognize bⁿ after aⁿ", while "recurrent neural networks are known to be
Turing complete". Here a network reads a string over {a, b} and says whether it is in

    L = {aⁿbⁿ : n ≥ 1},

trained on strings with at most N = ``max_train_n`` a's and at most N b's, and tested on
n = 1 .. ``max_test_n``, far beyond. Inputs are one-hot vectors, a = (1, 0), b = (0, 1); the
model reads its final state (sequence level) into two classes, 0 reject and 1 accept, trained
with cross-entropy.

Training and dev strings (drawn from ``data_seed``, one generator per split): half are
positives aⁿbⁿ with n ~ U{1..N}; half negatives that only counting or order can tell apart,
each kind equally often:

- counts off by k: aⁿbᵐ with 0 ≤ n, m ≤ N, |m − n| = k ~ U{1..``max_offset``} (not empty);
- order: aⁿbⁿ with one a and one b exchanged (counts equal, order wrong).

Test strings, for every n = 1 .. ``max_test_n``: the positive aⁿbⁿ and its five nearest
negatives aⁿbⁿ⁻¹, aⁿbⁿ⁺¹, aⁿ⁻¹bⁿ, aⁿ⁺¹bⁿ (off by one) and aⁿ⁻¹ b a bⁿ⁻¹ (the a and b at
the middle exchanged). At each n:

    accuracy(n)   = ½ [aⁿbⁿ accepted] + ½ · (negatives rejected) / 5     (balanced: chance ½)
    recognised(n) = all six strings classified right

Metrics: ``dev_accuracy`` (plain, over the dev strings); ``test_accuracy`` (mean of
accuracy(n) over every test n), ``test_accuracy_seen`` (n ≤ N) and ``test_accuracy_unseen``
(n > N); ``test_recognised_up_to`` = the largest n* with recognised(n) for every n ≤ n*
(0 when n = 1 already fails): how far the network counts.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .base import Batch, Task, TaskIO
from .registry import TASKS

A, B = 0, 1  # symbol ids (one-hot position)
SPLIT_OFFSETS = {"train": 0, "dev": 1}
NEGATIVES_PER_N = 5


def string(*runs: tuple[int, int]) -> list[int]:
    """Symbols of runs (symbol, count): ``string((A, 2), (B, 3))`` is aabbb."""
    return [symbol for symbol, count in runs for _ in range(count)]


def nearest_negatives(n: int) -> list[list[int]]:
    """aⁿbⁿ⁻¹, aⁿbⁿ⁺¹, aⁿ⁻¹bⁿ, aⁿ⁺¹bⁿ and aⁿ⁻¹ b a bⁿ⁻¹."""
    return [string((A, n), (B, n - 1)), string((A, n), (B, n + 1)), string((A, n - 1), (B, n)),
            string((A, n + 1), (B, n)), string((A, n - 1), (B, 1), (A, 1), (B, n - 1))]


def training_strings(size: int, max_n: int, max_offset: int, generator: torch.Generator) -> list[tuple[list[int], int]]:
    """``size`` (string, label) pairs, half positive, drawn as the module docstring says."""
    def draw(low: int, high: int) -> int:  # uniform on low..high
        return int(torch.randint(low, high + 1, (1,), generator=generator))

    examples = []
    for index in range(size):
        if index % 2 == 0:
            n = draw(1, max_n)
            examples.append((string((A, n), (B, n)), 1))
        elif draw(0, 1) == 0:  # counts off by k
            while True:
                n, k = draw(0, max_n), draw(1, max_offset)
                m = n + k if draw(0, 1) else n - k
                if 0 <= m <= max_n and n + m > 0:
                    break
            counts = (n, m) if draw(0, 1) else (m, n)
            examples.append((string((A, counts[0]), (B, counts[1])), 0))
        else:  # order: exchange one a (position p < n) with one b (position q >= n)
            n = draw(1, max_n)
            symbols = string((A, n), (B, n))
            p, q = draw(0, n - 1), draw(n, 2 * n - 1)
            symbols[p], symbols[q] = symbols[q], symbols[p]
            examples.append((symbols, 0))
    return examples


def length_test_strings(max_n: int) -> list[tuple[list[int], int, int]]:
    """(string, label, n) for n = 1..max_n: aⁿbⁿ, then its five nearest negatives."""
    out = []
    for n in range(1, max_n + 1):
        out.append((string((A, n), (B, n)), 1, n))
        out += [(negative, 0, n) for negative in nearest_negatives(n)]
    return out


@TASKS.register("anbn")
class RecogniseAnBn(Task):
    """Accept aⁿbⁿ, reject everything else, from the final state (module docstring)."""

    dev_metric = "dev_accuracy"
    io = TaskIO(output_size=2, level="sequence", input_features=2)

    @classmethod
    def emitted_metrics(cls, **params) -> set[str]:
        """``dev_accuracy``; on test, the accuracies over all n and over the n seen in training,
        how far it recognises, and the accuracy over unseen n when there are any."""
        params = cls.with_defaults(params)
        test = {"test_accuracy", "test_accuracy_seen", "test_recognised_up_to"}
        if params["max_test_n"] > params["max_train_n"]:
            test.add("test_accuracy_unseen")
        return {"dev_accuracy", *test}

    def __init__(self, data=None, max_train_n: int = 10, max_test_n: int = 50, max_offset: int = 3,
                 train_size: int = 2000, dev_size: int = 500, data_seed: int = 0):
        if not 1 <= max_train_n <= max_test_n:
            raise ValueError(f"need 1 <= max_train_n <= max_test_n, got {max_train_n}, {max_test_n}")
        if max_offset < 1:
            raise ValueError(f"max_offset must be >= 1, got {max_offset}")
        self.max_train_n, self.max_test_n = max_train_n, max_test_n
        self.splits: dict[str, list[tuple[list[int], int]]] = {}
        for split, size in (("train", train_size), ("dev", dev_size)):
            generator = torch.Generator().manual_seed(data_seed * 2 + SPLIT_OFFSETS[split])
            self.splits[split] = training_strings(size, max_train_n, max_offset, generator)
        self.test = length_test_strings(max_test_n)
        self.splits["test"] = [(s, label) for s, label, _ in self.test]

    @staticmethod
    def batch_of(examples: list[tuple[list[int], int]]) -> Batch:
        """One-hot (T, B, 2) inputs padded with zero vectors, lengths, labels (B,)."""
        lengths = torch.tensor([len(s) for s, _ in examples])
        inputs = torch.zeros(int(lengths.max()), len(examples), 2)
        for column, (symbols, _) in enumerate(examples):
            inputs[torch.arange(len(symbols)), column, torch.tensor(symbols)] = 1.0
        return Batch(inputs, lengths, torch.tensor([label for _, label in examples]))

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        """The split cut into batches; shuffled by ``generator`` when given, else in order."""
        examples = self.splits[split]
        order = (torch.randperm(len(examples), generator=generator).tolist() if generator is not None
                 else list(range(len(examples))))
        return [self.batch_of([examples[i] for i in order[start:start + batch_size]])
                for start in range(0, len(order), batch_size)]

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        return nn.functional.cross_entropy(output, batch.targets)

    @torch.no_grad()
    def predictions(self, model: nn.Module, split: str, batch_size: int, device: torch.device | str) -> Tensor:
        """(number of strings,) bool: each string of ``split`` classified right, in order."""
        model.eval()
        right = []
        for batch in self.batches(split, batch_size):
            batch = batch.to(device)
            right.append((model(batch).argmax(-1) == batch.targets).cpu())
        return torch.cat(right)

    def by_length(self, model: nn.Module, batch_size: int = 100,
                  device: torch.device | str = "cpu") -> list[dict[str, float]]:
        """Per test n: ``n``, ``accuracy`` (balanced) and ``recognised`` (1 if all six right)."""
        right = self.predictions(model, "test", batch_size, device).view(self.max_test_n, 1 + NEGATIVES_PER_N).float()
        accuracy = 0.5 * right[:, 0] + 0.5 * right[:, 1:].mean(1)
        return [{"n": n, "accuracy": float(accuracy[n - 1]), "recognised": float(right[n - 1].all())}
                for n in range(1, self.max_test_n + 1)]

    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device) -> dict[str, float]:
        if split != "test":
            return {f"{split}_accuracy": float(self.predictions(model, split, batch_size, device).float().mean())}
        rows = self.by_length(model, batch_size, device)
        seen = [r["accuracy"] for r in rows if r["n"] <= self.max_train_n]
        unseen = [r["accuracy"] for r in rows if r["n"] > self.max_train_n]
        up_to = 0
        for row in rows:
            if not row["recognised"]:
                break
            up_to = row["n"]
        metrics = {"test_accuracy": sum(r["accuracy"] for r in rows) / len(rows),
                   "test_accuracy_seen": sum(seen) / len(seen), "test_recognised_up_to": float(up_to)}
        if unseen:
            metrics["test_accuracy_unseen"] = sum(unseen) / len(unseen)
        return metrics
