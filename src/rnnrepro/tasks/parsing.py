"""Dependency parsing on a UD treebank, as a sequence-to-sequence problem and as a graph problem.

``dp_seq2seq`` (elstm paper, Sec. 5.1): the input is the lemma column (CoNLL-U column 3); the
target interleaves each word's dependency relation (column 8) and head position (column 7),

    y = (rel_1, head_1, rel_2, head_2, ..., rel_T, head_T),   |y| = 2T,

over one output vocabulary: ids [0, R) are the R relations, ids R + h for h = 0..H_max are head
positions (0 = root). The loss is token-level cross-entropy over the 2T target steps (given
in ``batch.extra["target_lengths"]``). Evaluation reads the model's output (logits or ids)
back position by position: step 2i-1 must hold a relation and step 2i a head position in
0..T; anything else (a head where a relation belongs, a position beyond the sentence, a
sequence that ends early) leaves that word's relation or head undecided, which scores as
wrong. The paper does not say how its one-output-per-input models (basic RNN, BRNN, DBRNN)
emit 2T outputs from T inputs; ``input_layout`` offers two ways beside the plain source:
``"pad"`` appends T zero (padding-id) steps to the lemmas, ``"repeat"`` feeds every lemma
twice, so that such a model's step t is target step t.

``dp_biaffine`` (wsum paper, Sec. 3.2.3 and Table 3; Dozat & Manning 2017, "Deep biaffine
attention for neural dependency parsing"): the input is a word column (and optionally the
UPOS column); each word i has a gold head h_i in 0..T and relation r_i. A graph-based model
returns :class:`ParserScores`: arc scores s_ij of every head candidate j = 0..T for every word
i, and relation scores for each word attached to a head. The loss is the arc cross-entropy
-log softmax_j(s_ij)[h_i] plus the label cross-entropy, each averaged over real words.
Evaluation decodes trees: the heads of each sentence are the maximum spanning tree of its arc
scores with one word attached to the root (:mod:`rnnrepro.metrics.trees`, Chu-Liu-Edmonds, as
Dozat & Manning decode), so every predicted sentence is a tree that the CoNLL 2018 script accepts.
``dp_seq2seq`` output is not decoded so: its heads are read as the model emits them, as the
elstm paper scores it, and need not form a tree.

Metrics of both: UAS and LAS of the CoNLL 2018 shared task (:mod:`rnnrepro.metrics.conll18`:
all words including punctuation, LAS on the universal part of the relation), as fractions.
With ``conllu_files`` (``dp_biaffine``) the gold and the predicted sentences of a split are
first written as CoNLL-U files (:func:`~rnnrepro.metrics.conll18.write_conllu`, in a temporary
folder) and the scores are read off those files (:func:`~rnnrepro.metrics.conll18.evaluate_files`),
as the shared task's script scores a system's output; the numbers are the same as in memory.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch
from torch import Tensor, nn

from ..data.prepared import load_prepared
from ..metrics.conll18 import ParsedSentence, attachment_scores, evaluate_files, write_conllu
from ..metrics.items import ItemRecorder, ratio
from ..metrics.trees import decode_batch
from .base import IGNORE_INDEX, Batch, Task, TaskIO, main_output, pad_time_major, shuffled_buckets
from .pos import Vocabulary
from .registry import TASKS

SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class ParsingIO(TaskIO):
    """TaskIO of a graph parser: ``output_size`` relations, ``tag_vocab`` UPOS ids (None: no tags)."""

    tag_vocab: int | None = None


@dataclass
class ParserScores:
    """What a graph-based parser returns for a batch of T words per column.

    ``arcs`` (T, B, T+1): arcs[i, b, j] scores head j (0 = root, j = 1..T the words) for word
    i+1; impossible heads (padding, the word itself) are -inf. ``labels`` (T, B, relations):
    relation scores of word i+1 attached to the head the model chose (the gold head in
    training, the head of the decoded tree otherwise). ``heads`` (T, B): that decoded tree's
    heads (0 on padding), or None when the model did not decode (training); evaluation then
    decodes the tree of ``arcs`` itself.
    """

    arcs: Tensor
    labels: Tensor
    heads: Tensor | None = None


class TreebankParsing(Task):
    """What both parsing tasks share: the prepared treebank, word and relation vocabularies,
    gold sentences for scoring, and UAS/LAS from predicted heads and relations."""

    dev_metric = "dev_las"
    split_metrics = ("uas", "las")
    #: score through written CoNLL-U files (see the module docstring)
    conllu_files: bool = False

    def __init__(self, data: str | Path, treebank: str, input_column: Literal["form", "lemma"],
                 lowercase: bool, min_count: int, max_train_sentences: int | None,
                 max_eval_sentences: int | None):
        prepared = load_prepared(data, expect=treebank)
        missing = [split for split in SPLITS if split not in prepared]
        if missing:
            raise ValueError(f"{data} has no {', '.join(missing)} split; it has {', '.join(prepared)}")
        limits = {"train": max_train_sentences, "dev": max_eval_sentences, "test": max_eval_sentences}
        self.columns = {split: {name: values[:limits[split]] for name, values in prepared[split].items()}
                        for split in SPLITS}
        self.gold = {split: [ParsedSentence(forms, heads, deprels)
                             for forms, heads, deprels in zip(c["form"], c["head"], c["deprel"])]
                     for split, c in self.columns.items()}
        words = {split: [[w.lower() for w in s] if lowercase else s for s in c[input_column]]
                 for split, c in self.columns.items()}
        self.words = Vocabulary.build(words["train"], min_count)
        self.word_ids = {split: [self.words.encode(s) for s in sentences] for split, sentences in words.items()}
        self.relations = Vocabulary.build([s for c in self.columns.values() for s in c["deprel"]], specials=False)

    @classmethod
    def dataset(cls, treebank: str = "ud_en_ewt_v2.0", **_) -> str:
        return treebank

    def ordered_indices(self, split: str, batch_size: int, generator: torch.Generator | None):
        return shuffled_buckets([len(s) for s in self.word_ids[split]], batch_size, generator)

    item_unit = "sentence"
    #: items: sentences, each with its gold and system words and correct attachments (CoNLL 2018's F1)
    item_metrics = {"uas": ratio("uas_correct", ("gold_words", "system_words"), factor=2),
                    "las": ratio("las_correct", ("gold_words", "system_words"), factor=2)}

    def scores(self, split: str, predicted: dict[int, tuple[list[int | None], list[str | None]]],
               items: ItemRecorder | None = None) -> dict[str, float]:
        """UAS and LAS of predicted (heads, relations) per sentence index of ``split``; with
        ``items``, each sentence's counts (the sentences in file order)."""
        gold = self.gold[split]
        system = [ParsedSentence(g.forms, *predicted[i]) for i, g in enumerate(gold)]
        if items is not None:
            counts = [attachment_scores([g], [s]) for g, s in zip(gold, system)]
            items.add(**{name: [getattr(c, name) for c in counts]
                         for name in ("gold_words", "system_words", "uas_correct", "las_correct")})
        if self.conllu_files:
            with tempfile.TemporaryDirectory(prefix="rnnrepro-conllu-") as folder:
                gold_file, system_file = Path(folder) / f"{split}-gold.conllu", Path(folder) / f"{split}-system.conllu"
                write_conllu(gold_file, gold)
                write_conllu(system_file, system)
                result = evaluate_files(gold_file, system_file)
        else:
            result = attachment_scores(gold, system)
        return {f"{split}_uas": result.uas, f"{split}_las": result.las}


# -- sequence to sequence ---------------------------------------------------------------------------
class InterleavedTargets:
    """The output vocabulary of ``dp_seq2seq``: ids [0, R) are relations, R + h is head position h."""

    def __init__(self, relations: Vocabulary, max_head: int):
        self.relations = relations
        self.max_head = max_head

    def __len__(self) -> int:
        return len(self.relations) + self.max_head + 1

    def encode(self, heads: list[int], deprels: list[str]) -> list[int]:
        """[rel_1, head_1, rel_2, head_2, ...] as ids."""
        offset = len(self.relations)
        return [token for head, deprel in zip(heads, deprels)
                for token in (self.relations.stoi[deprel], offset + head)]

    def decode(self, ids: list[int], words: int) -> tuple[list[int | None], list[str | None]]:
        """(heads, relations) of a sentence of ``words`` words; None where the output does not say."""
        offset = len(self.relations)
        heads: list[int | None] = [None] * words
        relations: list[str | None] = [None] * words
        for i in range(words):
            if 2 * i < len(ids) and 0 <= ids[2 * i] < offset:
                relations[i] = self.relations.itos[ids[2 * i]]
            if 2 * i + 1 < len(ids) and 0 <= ids[2 * i + 1] - offset <= words:
                heads[i] = ids[2 * i + 1] - offset
        return heads, relations


@TASKS.register("dp_seq2seq")
class Seq2seqParsing(TreebankParsing):
    """Dependency parsing as sequence to sequence (elstm paper, Sec. 5.1): lemmas in,
    interleaved (relation, head position) out; ``batch.extra``: target_lengths (2T per
    sentence), sentence_index."""

    def __init__(self, data: str | Path, treebank: str = "ud_en_ewt_v2.0",
                 input_column: Literal["form", "lemma"] = "lemma", lowercase: bool = False, min_count: int = 1,
                 input_layout: Literal["source", "pad", "repeat"] = "source",
                 max_train_sentences: int | None = None, max_eval_sentences: int | None = None):
        super().__init__(data, treebank, input_column, lowercase, min_count, max_train_sentences, max_eval_sentences)
        if input_layout not in ("source", "pad", "repeat"):
            raise ValueError(f"input_layout {input_layout!r}; allowed: source, pad, repeat")
        self.input_layout = input_layout
        longest = max(len(s.forms) for sentences in self.gold.values() for s in sentences)
        self.targets = InterleavedTargets(self.relations, longest)
        self.target_ids = {split: [self.targets.encode(s.heads, s.deprels) for s in sentences]
                           for split, sentences in self.gold.items()}
        self.io = TaskIO(output_size=len(self.targets), level="token", input_vocab=len(self.words))

    def model_input(self, word_ids: list[int]) -> list[int]:
        if self.input_layout == "pad":
            return word_ids + [0] * len(word_ids)
        if self.input_layout == "repeat":
            return [w for w in word_ids for _ in range(2)]
        return word_ids

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        result = []
        for indices in self.ordered_indices(split, batch_size, generator):
            inputs = [self.model_input(self.word_ids[split][i]) for i in indices]
            targets = [self.target_ids[split][i] for i in indices]
            result.append(Batch(inputs=pad_time_major(inputs, 0),
                                lengths=torch.tensor([len(s) for s in inputs]),
                                targets=pad_time_major(targets, IGNORE_INDEX),
                                extra={"target_lengths": torch.tensor([len(t) for t in targets]),
                                       "sentence_index": torch.tensor(indices)}))
        return result

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        """Cross-entropy averaged over the real target steps; output (2T, B, vocabulary)."""
        if output.shape[0] != batch.targets.shape[0]:
            raise ValueError(f"dp_seq2seq targets have {batch.targets.shape[0]} steps (2 per word) but the model "
                             f"returned {output.shape[0]}; a model with one output per input step needs "
                             "input_layout 'pad' or 'repeat'")
        return nn.functional.cross_entropy(output.flatten(0, 1), batch.targets.flatten(), ignore_index=IGNORE_INDEX)

    @torch.no_grad()
    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                 items: ItemRecorder | None = None) -> dict[str, float]:
        predicted = {}
        for batch in self.batches(split, batch_size):
            output = main_output(model(batch.to(device)))
            ids = (output.argmax(-1) if output.is_floating_point() else output).cpu()
            for column, (index, steps) in enumerate(zip(batch.extra["sentence_index"].tolist(),
                                                        batch.extra["target_lengths"].tolist())):
                predicted[index] = self.targets.decode(ids[:steps, column].tolist(), steps // 2)
        return self.scores(split, predicted, items)


# -- graph-based (biaffine) --------------------------------------------------------------------------
@TASKS.register("dp_biaffine")
class BiaffineParsing(TreebankParsing):
    """Graph-based dependency parsing (Dozat & Manning 2017) for models returning
    :class:`ParserScores`. ``batch.targets`` and ``batch.extra["heads"]`` hold gold heads,
    ``extra["relations"]`` relation ids (both IGNORE_INDEX on padding), ``extra["upos"]`` UPOS
    ids when ``use_upos`` (gold tags: the treebank has no predicted ones), and
    ``extra["sentence_index"]``."""

    def __init__(self, data: str | Path, treebank: str = "ud_en_ewt_v2.0",
                 input_column: Literal["form", "lemma"] = "form", lowercase: bool = False, min_count: int = 1,
                 use_upos: bool = False, max_train_sentences: int | None = None,
                 max_eval_sentences: int | None = None, conllu_files: bool = False):
        super().__init__(data, treebank, input_column, lowercase, min_count, max_train_sentences, max_eval_sentences)
        self.conllu_files = conllu_files
        self.tags = Vocabulary.build([s for c in self.columns.values() for s in c["upos"]]) if use_upos else None
        self.io = ParsingIO(output_size=len(self.relations), level="token", input_vocab=len(self.words),
                            tag_vocab=len(self.tags) if use_upos else None)

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        columns, gold = self.columns[split], self.gold[split]
        result = []
        for indices in self.ordered_indices(split, batch_size, generator):
            heads = pad_time_major([gold[i].heads for i in indices], IGNORE_INDEX)
            extra = {"heads": heads,
                     "relations": pad_time_major([self.relations.encode(gold[i].deprels) for i in indices],
                                                 IGNORE_INDEX),
                     "sentence_index": torch.tensor(indices)}
            if self.tags is not None:
                extra["upos"] = pad_time_major([self.tags.encode(columns["upos"][i]) for i in indices], 0)
            result.append(Batch(inputs=pad_time_major([self.word_ids[split][i] for i in indices], 0),
                                lengths=torch.tensor([len(gold[i].forms) for i in indices]),
                                targets=heads, extra=extra))
        return result

    def loss(self, output: ParserScores, batch: Batch) -> Tensor:
        """Arc cross-entropy over heads 0..T plus label cross-entropy, each a mean over real words."""
        scores = parser_scores(output)
        arcs = nn.functional.cross_entropy(scores.arcs.flatten(0, 1), batch.extra["heads"].flatten(),
                                           ignore_index=IGNORE_INDEX)
        labels = nn.functional.cross_entropy(scores.labels.flatten(0, 1), batch.extra["relations"].flatten(),
                                             ignore_index=IGNORE_INDEX)
        return arcs + labels

    @torch.no_grad()
    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                 items: ItemRecorder | None = None) -> dict[str, float]:
        predicted = {}
        for batch in self.batches(split, batch_size):
            scores = parser_scores(model(batch.to(device)))
            heads = (scores.heads if scores.heads is not None else decode_batch(scores.arcs, batch.lengths)).cpu()
            relations = scores.labels.argmax(-1).cpu()
            for column, (index, words) in enumerate(zip(batch.extra["sentence_index"].tolist(),
                                                        batch.lengths.tolist())):
                predicted[index] = (heads[:words, column].tolist(),
                                    [self.relations.itos[r] for r in relations[:words, column].tolist()])
        return self.scores(split, predicted, items)


def parser_scores(output) -> ParserScores:
    """``output`` as ParserScores, or a TypeError that says which models fit ``dp_biaffine``."""
    if isinstance(output, ParserScores):
        return output
    raise TypeError(f"dp_biaffine needs a model that returns ParserScores (e.g. model 'biaffine'), "
                    f"not {type(output).__name__}")
