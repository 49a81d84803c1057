"""UPOS tagging with the characters of every word, for the hierarchical tagger of Plank et al.

Plank, Søgaard & Goldberg 2016 ("Multilingual part-of-speech tagging with bidirectional long
short-term memory models and auxiliary loss") represent word w_t = c_1..c_m by a word
embedding and a character-level encoding of c_1..c_m; the drnn paper (Turek et al., Sec. 4.3,
Table 1) follows them. This task is :mod:`rnnrepro.tasks.pos` (same vocabulary, targets, loss
and accuracy) whose batches also carry ``extra["chars"]`` (T, B, W): the character ids of each
word (0 = padding, also for padding words; 1 = a character unseen in training), W the longest
word of the batch, cut at ``max_word_length`` when given. Characters are those of the word as
written in ``input_column`` (before ``lowercase``); Plank et al. tag word forms, hence the
default ``input_column="form"``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch
from torch import Tensor

from ..data.prepared import load_prepared
from .base import IGNORE_INDEX, Batch, TaskIO, pad_time_major, shuffled_buckets
from .pos import POSTagging, Vocabulary
from .registry import TASKS


@dataclass(frozen=True)
class CharTaskIO(TaskIO):
    """TaskIO of a task with characters: ``char_vocab`` character ids (with <pad> = 0, <unk> = 1)."""

    char_vocab: int = 0


def character_matrix(words: list[list[int]]) -> Tensor:
    """(words, longest word) long tensor of one sentence's character ids, zero-padded."""
    width = max(map(len, words))
    return torch.tensor([word + [0] * (width - len(word)) for word in words], dtype=torch.long)


def pad_characters(sentences: list[Tensor], max_word_length: int | None = None) -> Tensor:
    """(T, B, W) from per-sentence character matrices (words, width), zero-padded in every
    dimension; W is the widest word, cut at ``max_word_length`` when given."""
    steps = max(m.shape[0] for m in sentences)
    width = max(m.shape[1] for m in sentences)
    if max_word_length is not None:
        width = min(width, max_word_length)
    out = torch.zeros(steps, len(sentences), width, dtype=torch.long)
    for column, matrix in enumerate(sentences):
        kept = matrix[:, :width]
        out[:kept.shape[0], column, :kept.shape[1]] = kept
    return out


@TASKS.register("pos_chars")
class POSTaggingWithCharacters(POSTagging):
    """UPOS tagging whose batches carry the characters of every word in ``extra["chars"]``."""

    def __init__(self, data: str | Path, treebank: str = "ud_en_ewt_v2.0",
                 input_column: Literal["form", "lemma"] = "form", lowercase: bool = False, min_count: int = 1,
                 max_word_length: int | None = None,
                 max_train_sentences: int | None = None, max_eval_sentences: int | None = None):
        super().__init__(data, treebank, input_column, lowercase, min_count, max_train_sentences, max_eval_sentences)
        prepared = load_prepared(data, expect=treebank)
        limits = {"train": max_train_sentences, "dev": max_eval_sentences, "test": max_eval_sentences}
        written = {split: prepared[split][input_column][:limit] for split, limit in limits.items()}
        self.chars = Vocabulary.build([list(word) for sentence in written["train"] for word in sentence])
        self.char_ids = {split: [character_matrix([self.chars.encode(list(word)) for word in sentence])
                                 for sentence in sentences]
                         for split, sentences in written.items()}
        self.max_word_length = max_word_length
        self.io = CharTaskIO(output_size=self.io.output_size, level="token", input_vocab=self.io.input_vocab,
                             char_vocab=len(self.chars))

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        words, tags = self.splits[split]
        chars = self.char_ids[split]
        lengths = [len(s) for s in words]
        result = []
        for indices in shuffled_buckets(lengths, batch_size, generator):
            result.append(Batch(inputs=pad_time_major([words[i] for i in indices], 0),
                                lengths=torch.tensor([lengths[i] for i in indices]),
                                targets=pad_time_major([tags[i] for i in indices], IGNORE_INDEX),
                                extra={"chars": pad_characters([chars[i] for i in indices], self.max_word_length)}))
        return result
