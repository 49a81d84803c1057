"""Translation on Multi30k (WMT16 multimodal task 1), English <-> German.

The PRU paper (Sec. 4.3, Tables 3-4, Figs. 4-5) trains Bahdanau et al.'s attention model on
WMT'15 En-Fi/Fi-En/En-De with BPE; the wsum paper (Table 4) trains OpenNMT on Multi30k En->De.
We use Multi30k for both and say so. Training maximises log p(Y|X) = Σ_t log p(y_t | y_<t, X)
by teacher forcing: the loss is the token cross-entropy of y_1..y_n, <eos> given <bos> y_1..y_n
(mean over the batch's real target tokens).

Data: the tokenised, lowercased files of the Multi30k repository (``*.lc.norm.tok.*``; Moses
tokenisation, with Moses' escapes such as ``&apos;``), splits train (29,000 pairs), val -> dev
(1,014), test_2016_flickr -> test (1,000). As in the PRU paper (after Bahdanau et al.), training
pairs longer than ``max_train_length`` words on either side are left out (none of Multi30k's
are longer than 50). The model reads and writes *units*:

- words (``bpe_vocab_size`` None, the default): the vocabularies are the words seen at least
  ``min_count`` times in the training pairs used (``max_train_pairs`` of them);
- subwords (``bpe_vocab_size`` V): byte-pair encoding (Sennrich et al. 2016, the PRU paper's
  [25]: "we use 10K (or 30K) subwords extracted by byte pair encoding"), one model per language
  with V pieces, learned by SentencePiece (``model_type="bpe"``) on that language's side of the
  training pairs used, from the Moses tokens as they are (identity normalisation, never across
  a space; a piece that starts a word carries the marker ``▁``). Merges are learned greedily,
  most frequent pair first (ties broken by SentencePiece's fixed order), so the same training
  pairs give the same model. Every split is cut into the pieces; the vocabularies are the
  pieces seen at least ``min_count`` times in the training pairs (a piece the training side
  lacks, e.g. an unseen character of a test sentence, becomes ``<unk>``).

Units outside a vocabulary become ``<unk>``.

Ids (both languages): 0 <pad>, 1 <unk>, 2 <bos>, 3 <eos>, then the tokens, most frequent
first. A batch holds the source ids with <eos> appended in ``inputs`` (S, B) and ``lengths``;
the target ids <bos> y_1..y_n <eos> in ``targets`` (T, B), padded with 0; and in ``extra``:
``target_lengths`` (n + 2 per pair) and ``index`` (the pair's position in its split). A model
returns, in training mode, logits (T - 1, B, V) for targets[1:]. For evaluation it provides
``greedy_decode(batch, max_len)`` and ``beam_search(batch, beam_size, max_len,
length_normalisation)``, each returning the target ids of every pair without <bos>/<eos>
(see :mod:`rnnrepro.models.translation`). Decoding stops at <eos> or after
``2 * source length + 10`` tokens.

Metric: corpus BLEU (Papineni et al. 2002) by sacrebleu, ``<split>_bleu``:

    BLEU = BP · exp(¼ Σ_{n=1..4} log p_n),  BP = min(1, exp(1 - r/c)),

p_n the clipped n-gram precisions over the whole split, c and r the hypothesis and reference
lengths in tokens. Tokenisation: hypotheses are the decoded target units joined by single
spaces, or with BPE the pieces put back together ("un-BPE'd": pieces joined, each ``▁`` a
space; :func:`undo_bpe`), ``<unk>`` kept as the string "<unk>"; references are the original
tokenised, lowercased Multi30k sentences joined by single spaces (never mapped through a
vocabulary or BPE), and sacrebleu runs with ``tokenize="none"``: the n-grams are the corpus'
own Moses tokens, as the PRU paper ("we un-BPE the resulting translations, but leave them
tokenized") and OpenNMT's multi-bleu scores do. sacrebleu's default "exp" smoothing only
matters when an n-gram order has no match.
Greedy decoding (beam 1) as in the PRU paper's validation curves (Fig. 4) or beam search
(``beam_size``, 12 in Tables 3-4); with ``beam_size`` > 1 the greedy BLEU is reported too, as
``<split>_bleu_greedy``. ``length_buckets`` (upper edges in source words, e.g. [10, 20, 30])
adds BLEU per source-length bucket (Fig. 5): ``<split>_bleu_len_1to10``, ..., ``<split>_bleu_len_gt30``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import sacrebleu
import torch
from torch import Tensor, nn

from ..data.prepared import load_prepared
from ..metrics.items import BLEU_COLUMNS, CorpusBleu, ItemRecorder, bleu_statistics
from .base import EVALUATED_SPLITS, Batch, Task, TaskIO, pad_time_major, shuffled_buckets
from .pos import Vocabulary
from .registry import TASKS

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
BOS, EOS = "<bos>", "<eos>"
DIRECTIONS = ("en-de", "de-en")
#: TaskIO level of this task: one output sequence per input sequence, of its own length
#: (neither "token" nor "sequence": models of those levels do not fit this task).
IO_LEVEL = "target_sequence"


def decode_limit(source_lengths: Tensor) -> Tensor:
    """Most target tokens decoded per pair: 2 × source tokens (without <eos>) + 10."""
    return 2 * source_lengths + 10


def corpus_bleu(hypotheses: list[str], references: list[str]) -> float:
    """Corpus BLEU (0-100) of whitespace-tokenised strings, one reference each (see module docstring)."""
    return sacrebleu.corpus_bleu(hypotheses, [references], tokenize="none", force=True).score


def translation_vocabulary(sentences: list[list[str]], min_count: int) -> Vocabulary:
    """<pad>, <unk>, <bos>, <eos>, then the tokens seen at least ``min_count`` times."""
    return Vocabulary([BOS, EOS] + Vocabulary.build(sentences, min_count, specials=False).itos)


#: The mark SentencePiece puts at the start of a piece that starts a word.
WORD_START = "\u2581"


def learn_bpe(sentences: list[list[str]], vocab_size: int):
    """A SentencePiece BPE model with (at most) ``vocab_size`` pieces learned on ``sentences``
    (token lists): every sentence is used, in order, on one thread, characters kept as they are."""
    import io

    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(" ".join(tokens) for tokens in sentences), model_writer=model, model_type="bpe",
        vocab_size=vocab_size, hard_vocab_limit=False, character_coverage=1.0, normalization_rule_name="identity",
        split_by_unicode_script=False, split_by_number=False, input_sentence_size=0, shuffle_input_sentence=False,
        max_sentence_length=1 << 20, unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1, num_threads=1, minloglevel=2)
    return sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())


def apply_bpe(model, sentences: list[list[str]]) -> list[list[str]]:
    """Each sentence (token list) cut into the model's pieces."""
    return model.encode([" ".join(tokens) for tokens in sentences], out_type=str) if sentences else []


def undo_bpe(pieces: list[str]) -> str:
    """Pieces put back into space-separated tokens ("un-BPE"): joined, each ``▁`` a space."""
    return " ".join("".join(pieces).replace(WORD_START, " ").split())


def bucket_names(edges: list[int]) -> list[tuple[str, int, int]]:
    """(name, shortest, longest) of each source-length bucket cut at ``edges``."""
    buckets, low = [], 1
    for high in edges:
        buckets.append((f"len_{low}to{high}", low, high))
        low = high + 1
    buckets.append((f"len_gt{edges[-1]}", low, 10**9))
    return buckets


@TASKS.register("translation")
class Translation(Task):
    """Multi30k En-De or De-En with an attention encoder-decoder; BLEU by sacrebleu."""

    dev_metric = "dev_bleu"
    split_metrics = ("bleu",)

    @classmethod
    def emitted_metrics(cls, **params) -> set[str]:
        """``<split>_bleu``; with ``beam_size`` > 1 also ``<split>_bleu_greedy``; with
        ``length_buckets``, ``<split>_bleu_<bucket>`` per bucket (a bucket that holds no sentence
        of a split has none)."""
        params = cls.with_defaults(params)
        names = ["bleu"] + ["bleu_greedy"] * (params["beam_size"] > 1)
        if params["length_buckets"]:
            names += [f"bleu_{name}" for name, _, _ in bucket_names(sorted(params["length_buckets"]))]
        return {f"{split}_{name}" for split in EVALUATED_SPLITS for name in names}

    def __init__(self, data: str | Path, direction: Literal["en-de", "de-en"] = "en-de",
                 min_count: int = 1, max_train_pairs: int | None = None, max_eval_pairs: int | None = None,
                 max_train_length: int | None = 50, beam_size: int = 1, length_normalisation: float = 0.0,
                 length_buckets: list[int] | None = None, bpe_vocab_size: int | None = None):
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        if beam_size < 1:
            raise ValueError(f"beam_size must be >= 1, got {beam_size}")
        if bpe_vocab_size is not None and bpe_vocab_size < 2:
            raise ValueError(f"bpe_vocab_size must be >= 2 pieces (or None for words), got {bpe_vocab_size}")
        source_language, target_language = direction.split("-")
        prepared = load_prepared(data, expect="multi30k")
        self.beam_size = beam_size
        self.length_normalisation = length_normalisation
        self.buckets = bucket_names(sorted(length_buckets)) if length_buckets else []
        limits = {"train": max_train_pairs, "dev": max_eval_pairs, "test": max_eval_pairs}
        self.raw: dict[str, tuple[list[list[str]], list[list[str]]]] = {}
        for split, limit in limits.items():
            source, target = prepared[split][source_language], prepared[split][target_language]
            if split == "train" and max_train_length is not None:
                kept = [(s, t) for s, t in zip(source, target)
                        if len(s) <= max_train_length and len(t) <= max_train_length]
                source, target = [s for s, _ in kept], [t for _, t in kept]
            self.raw[split] = (source[:limit], target[:limit])
        self.bpe = None  # (source, target) SentencePiece models, with bpe_vocab_size
        units = self.raw
        if bpe_vocab_size is not None:
            self.bpe = tuple(learn_bpe(side, bpe_vocab_size) for side in self.raw["train"])
            units = {split: tuple(apply_bpe(model, side) for model, side in zip(self.bpe, sides))
                     for split, sides in self.raw.items()}
        self.source_vocab = translation_vocabulary(units["train"][0], min_count)
        self.target_vocab = translation_vocabulary(units["train"][1], min_count)
        self.splits = {split: ([self.source_vocab.encode(s) + [EOS_ID] for s in source],
                               [[BOS_ID] + self.target_vocab.encode(t) + [EOS_ID] for t in target])
                       for split, (source, target) in units.items()}
        self.io = TaskIO(output_size=len(self.target_vocab), level=IO_LEVEL, input_vocab=len(self.source_vocab))

    @classmethod
    def dataset(cls, **_) -> str:
        return "multi30k"

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        """Pairs bucketed by source length (sorted when ``generator`` is None)."""
        sources, targets = self.splits[split]
        lengths = [len(s) for s in sources]
        result = []
        for indices in shuffled_buckets(lengths, batch_size, generator):
            result.append(Batch(
                inputs=pad_time_major([sources[i] for i in indices], PAD_ID),
                lengths=torch.tensor([lengths[i] for i in indices]),
                targets=pad_time_major([targets[i] for i in indices], PAD_ID),
                extra={"target_lengths": torch.tensor([len(targets[i]) for i in indices]),
                       "index": torch.tensor(indices)}))
        return result

    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        """Cross-entropy of targets[1:] (y_1..y_n, <eos>) over real tokens; output (T - 1, B, V)."""
        return nn.functional.cross_entropy(output.flatten(0, 1), batch.targets[1:].flatten(), ignore_index=PAD_ID)

    def detokenise(self, ids: list[int]) -> str:
        """Target ids (no <bos>/<eos>) as the space-joined string of tokens BLEU reads (un-BPE'd)."""
        units = [self.target_vocab.itos[i] for i in ids]
        return undo_bpe(units) if self.bpe is not None else " ".join(units)

    def references(self, split: str) -> list[str]:
        return [" ".join(tokens) for tokens in self.raw[split][1]]

    @torch.no_grad()
    def translate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                  beam_size: int | None = None) -> list[str]:
        """Translations of every source sentence of ``split``, in the split's order."""
        beam_size = self.beam_size if beam_size is None else beam_size
        model.eval()
        hypotheses: list[str] = [""] * len(self.raw[split][0])
        for batch in self.batches(split, batch_size):
            batch = batch.to(device)
            limit = decode_limit(batch.lengths - 1)
            if beam_size == 1:
                decoded = model.greedy_decode(batch, limit)
            else:
                decoded = model.beam_search(batch, beam_size, limit, self.length_normalisation)
            for index, ids in zip(batch.extra["index"].tolist(), decoded):
                hypotheses[index] = self.detokenise(ids)
        return hypotheses

    item_unit = "sentence"
    #: items: sentences, each with its BLEU statistics (lengths, n-gram matches and totals)
    item_metrics = {"bleu": CorpusBleu()}

    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                 items: ItemRecorder | None = None) -> dict[str, float]:
        references = self.references(split)
        hypotheses = self.translate(model, split, batch_size, device)
        metrics = {f"{split}_bleu": corpus_bleu(hypotheses, references)}
        if items is not None:
            stats = [bleu_statistics(h, r) for h, r in zip(hypotheses, references)]
            items.add(**{name: [s[name] for s in stats] for name in BLEU_COLUMNS})
        if self.beam_size > 1:
            greedy = self.translate(model, split, batch_size, device, beam_size=1)
            metrics[f"{split}_bleu_greedy"] = corpus_bleu(greedy, references)
        source_lengths = [len(s) for s in self.raw[split][0]]
        for name, low, high in self.buckets:
            chosen = [i for i, n in enumerate(source_lengths) if low <= n <= high]
            if chosen:
                metrics[f"{split}_bleu_{name}"] = corpus_bleu([hypotheses[i] for i in chosen],
                                                              [references[i] for i in chosen])
        return metrics
