"""Part-of-speech tagging on a Universal Dependencies treebank.

Input: one column of the CoNLL-U file (the elstm paper feeds the lemma, column 3);
target: the universal POS tag (column 4). Loss: token-level cross-entropy; metric:
accuracy over all real tokens of a split.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

import torch
from torch import Tensor, nn

from ..data.prepared import load_prepared
from ..metrics.items import ItemRecorder
from .base import ACCURACY_ITEMS, IGNORE_INDEX, Batch, Task, TaskIO, pad_time_major, shuffled_buckets, split_accuracy
from .registry import TASKS

PAD, UNK = "<pad>", "<unk>"


class Vocabulary:
    """Token <-> id, with ``<pad>`` = 0 and ``<unk>`` = 1 when ``specials``."""

    def __init__(self, tokens: list[str], specials: bool = True):
        self.itos = ([PAD, UNK] if specials else []) + tokens
        self.stoi = {token: index for index, token in enumerate(self.itos)}
        self.unk = self.stoi.get(UNK)

    @classmethod
    def build(cls, sentences: list[list[str]], min_count: int = 1, specials: bool = True) -> "Vocabulary":
        """Tokens seen at least ``min_count`` times, most frequent first (ties alphabetical)."""
        counts = Counter(token for sentence in sentences for token in sentence)
        kept = sorted((t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t))
        return cls(kept, specials)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: list[str]) -> list[int]:
        if self.unk is None:
            return [self.stoi[t] for t in tokens]
        return [self.stoi.get(t, self.unk) for t in tokens]


@TASKS.register("pos")
class POSTagging(Task):
    """UPOS tagging; the vocabulary is built from the (possibly truncated) training split."""

    dev_metric = "dev_accuracy"
    split_metrics = ("accuracy",)
    item_unit = "sentence"
    item_metrics = ACCURACY_ITEMS

    def __init__(self, data: str | Path, treebank: str = "ud_en_ewt_v2.0",
                 input_column: Literal["form", "lemma"] = "lemma",
                 lowercase: bool = False, min_count: int = 1,
                 max_train_sentences: int | None = None, max_eval_sentences: int | None = None):
        prepared = load_prepared(data, expect=treebank)
        limits = {"train": max_train_sentences, "dev": max_eval_sentences, "test": max_eval_sentences}
        self.splits = {}
        raw = {}
        for split, limit in limits.items():
            columns = prepared[split]
            words = columns[input_column][:limit]
            raw[split] = ([[w.lower() for w in s] for s in words] if lowercase else words,
                          columns["upos"][:limit])
        self.words = Vocabulary.build(raw["train"][0], min_count)
        self.tags = Vocabulary.build(raw["train"][1] + raw["dev"][1] + raw["test"][1], specials=False)
        for split, (words, tags) in raw.items():
            self.splits[split] = ([self.words.encode(s) for s in words], [self.tags.encode(s) for s in tags])
        self.io = TaskIO(output_size=len(self.tags), level="token", input_vocab=len(self.words))

    @classmethod
    def dataset(cls, treebank: str = "ud_en_ewt_v2.0", **_) -> str:
        return treebank

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        words, tags = self.splits[split]
        lengths = [len(s) for s in words]
        result = []
        for indices in shuffled_buckets(lengths, batch_size, generator):
            result.append(Batch(inputs=pad_time_major([words[i] for i in indices], 0),
                                lengths=torch.tensor([lengths[i] for i in indices]),
                                targets=pad_time_major([tags[i] for i in indices], IGNORE_INDEX)))
        return result

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        """Cross-entropy averaged over the batch's real tokens; output (T, B, tags)."""
        return nn.functional.cross_entropy(output.flatten(0, 1), batch.targets.flatten(), ignore_index=IGNORE_INDEX)

    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                 items: ItemRecorder | None = None) -> dict[str, float]:
        return split_accuracy(self, model, split, batch_size, device, items)
