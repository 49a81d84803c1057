"""Language modelling: predict every token from the tokens before it.

For a token sequence w_1..w_N the model gives p(w_t | w_<t) and is trained on the token
cross-entropy (mean over the real targets of a batch). The metrics of a split with N
predicted tokens are token-weighted:

    nll        = -(1/N) Σ_t log p(w_t | w_<t)          (nats per token)
    perplexity = exp(nll)                               (elstm paper Sec. 5.1: "the natural
                                                         exponential of the model's cross-entropy loss";
                                                         wsum paper Table 1; tutorial Sec. 9.5)

i.e. exp of the total NLL over the total number of tokens, not a mean of per-batch values.
A model that gives every token probability 1/V has perplexity V.

Corpora (prepared by :func:`rnnrepro.data.prepared.prepare_language_model_corpus`, ``<eos>``
after every line): ``ptb_word`` (Mikolov's PTB, 10,000 tokens with ``<eos>``; elstm Table 5,
wsum Table 1, tutorial), ``ptb_char`` (PTB characters; PRU Table 1), ``wikitext2`` (the PRU
paper's Table 2 used WikiText-103, which the mirror does not have).

Two ways to cut a corpus into sequences (``mode``):

- ``"stream"`` (Zaremba et al. 2014, the wsum paper's PTB setting): the split is one token
  stream, cut into windows of ``bptt`` predicted tokens (truncated back-propagation through
  time). Every token but the first of the stream is scored exactly once. Two layouts:

  * ``stateful=False`` (the default): the windows are shuffled into batches and each starts
    from a zero state. ``context`` > 0 approximates the missing history: every window is
    preceded by up to ``context`` earlier tokens that the model reads but that are not scored.
  * ``stateful=True`` (Zaremba's implementation; pytorch/examples word_language_model): the
    stream of N tokens is cut into B = ``batch_size`` contiguous pieces ("batchify"), piece
    b = 0..B-1 reading w_{s_b} .. w_{e_b - 1} and predicting w_{s_b + 1} .. w_{e_b}, with s_0 = 1,
    s_{b+1} = e_b, e_{B-1} = N and the N - 1 predictions shared as evenly as possible (the first
    (N - 1) mod B pieces one longer; pytorch/examples instead drops the tail and leaves each
    piece's first token unscored). Batch k holds positions k·bptt .. (k+1)·bptt - 1 of every
    piece, the batches come in this order every epoch, and the model's state is carried from
    batch k to batch k + 1 (detached; see :mod:`rnnrepro.tasks.base`), starting from zero
    at each epoch. A piece shorter than the others ends one step early in the last batch
    (padding: the state stays at its last real step). Evaluation uses the same layout with
    B = the training's ``eval_batch_size`` pieces of the dev or test stream, the state
    carried across all batches: only the first token of each piece is read without history,
    so fewer pieces means fewer cold starts (pytorch/examples evaluates with 10, the
    TensorFlow PTB tutorial tests with 1). Needs a model that carries state (basic, stacked).
    The position t a cell sees (ELSTM's scaling s_t, elstm eq. 24) restarts at 0 in every
    window, as without carried state.
- ``"sentence"`` (PRU Sec. 4.2: "each input sequence is a sequence of characters (or words) in
  one sentence"; elstm Sec. 5.1: "predict the next word given all preceding words in a
  sentence"): every line is one sequence, read as ``<eos> w_1 .. w_n`` to predict
  ``w_1 .. w_n <eos>`` (Mikolov's convention: the previous line's ``<eos>`` starts a line).
  Empty lines are left out. ``max_sentence_length`` keeps lines of at most that many tokens
  (``<eos>`` not counted), in every split: the PRU paper's Table 2 has columns "sentence
  length ≤ 50" and "≤ 250". This mode adds the metric ``sentence_nll``, the NLL summed over a
  sentence (its ``<eos>`` included) and averaged over sentences, which is how we read the
  units of PRU Tables 1-2 (values near 100 nats per PTB sentence of ~120 characters; that
  reading is ours, the paper does not define the unit).

Token ids: 0 is padding (inputs only); token k of the vocabulary has input id k + 1 and output
class k, so the output layer has exactly V classes, V the number of distinct tokens of the
full training split (with ``<eos>``). The vocabulary always comes from the whole training
split, also when ``max_train_tokens`` trains on a prefix, so perplexities of all scales are
over the same V. ``max_vocabulary`` K caps it (for small-scale runs of large vocabularies,
whose softmax dominates the cost): ``<eos>``, ``<unk>`` (the corpus' own, as in PTB and
WikiText, or a new one) and the K − 2 most frequent other tokens of the whole training split
(ties alphabetical); every other token becomes ``<unk>`` in every split, as input and as
target. The NLL is then over those K classes.

A bidirectional model (the BRNN) sees the future: the backward direction at position t has
read w_{t+1}, the very token it must predict. The elstm paper's Table 5 reports such models
(BRNN perplexity 78.6 against 267.5 for the basic RNN); the task does not prevent it, and a
report must say that these perplexities are not those of a language model.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import torch
from torch import Tensor, nn

from ..data.prepared import END_OF_LINE, load_prepared
from ..metrics.items import Formula, ItemRecorder, ratio
from .base import (
    EVALUATED_SPLITS,
    IGNORE_INDEX,
    Batch,
    Task,
    TaskIO,
    forward_with_state,
    main_output,
    pad_time_major,
    per_column,
    shuffled_buckets,
)
from .pos import Vocabulary
from .registry import TASKS

CORPORA = ("ptb_word", "ptb_char", "wikitext2")
PAD = "<pad>"
UNKNOWN = "<unk>"  # rare words in PTB and WikiText; with max_vocabulary, every token beyond the cap


def split_lines(tokens: list[str]) -> list[list[str]]:
    """A prepared token list back into its lines, each without its closing ``<eos>`` (a last line
    without one is kept). ``list.index`` finds each ``<eos>`` (5 million characters in lines of
    about 120: 0.25-0.29 s, a loop over the tokens 0.46-0.64 s)."""
    lines, start = [], 0
    while True:
        try:
            end = tokens.index(END_OF_LINE, start)
        except ValueError:
            break
        lines.append(tokens[start:end])
        start = end + 1
    if start < len(tokens):
        lines.append(tokens[start:])
    return lines


def first_lines_within(lines: list[list[str]], max_tokens: int | None) -> list[list[str]]:
    """The leading lines whose tokens, one ``<eos>`` each included, number at most ``max_tokens``."""
    if max_tokens is None:
        return lines
    kept, total = [], 0
    for line in lines:
        total += len(line) + 1
        if total > max_tokens:
            break
        kept.append(line)
    return kept


@TASKS.register("lm")
class LanguageModel(Task):
    """Next-token prediction on PTB (word or character level) or WikiText-2."""

    dev_metric = "dev_perplexity"
    dev_goal = "min"
    split_metrics = ("nll", "perplexity")

    @classmethod
    def emitted_metrics(cls, **params) -> set[str]:
        """``<split>_nll`` and ``<split>_perplexity``, and in sentence mode ``<split>_sentence_nll``."""
        extra = {f"{split}_sentence_nll" for split in EVALUATED_SPLITS} \
            if cls.with_defaults(params)["mode"] == "sentence" else set()
        return super().emitted_metrics(**params) | extra

    def __init__(self, data: str | Path, corpus: Literal["ptb_word", "ptb_char", "wikitext2"] = "ptb_word",
                 mode: Literal["stream", "sentence"] = "stream", bptt: int = 35, context: int = 0,
                 max_sentence_length: int | None = None,
                 max_train_tokens: int | None = None, max_eval_tokens: int | None = None,
                 stateful: bool = False, max_vocabulary: int | None = None):
        if corpus not in CORPORA:
            raise ValueError(f"unknown corpus {corpus!r}; known: {', '.join(CORPORA)}")
        if mode not in ("stream", "sentence"):
            raise ValueError(f"mode must be 'stream' or 'sentence', got {mode!r}")
        if bptt < 1 or context < 0:
            raise ValueError(f"need bptt >= 1 and context >= 0, got bptt={bptt}, context={context}")
        if mode == "stream" and max_sentence_length is not None:
            raise ValueError("max_sentence_length applies to mode 'sentence' only")
        if stateful and mode != "stream":
            raise ValueError("stateful applies to mode 'stream' only (sentences do not continue one another)")
        if stateful and context:
            raise ValueError(f"context={context} approximates a carried state; with stateful=True the state "
                             f"itself is carried: leave context at 0")
        if max_vocabulary is not None and max_vocabulary < 3:
            raise ValueError(f"max_vocabulary must keep at least 3 tokens (<eos>, <unk> and one more), "
                             f"got {max_vocabulary}")
        prepared = load_prepared(data, expect=corpus)
        self.mode, self.bptt, self.context, self.stateful = mode, bptt, context, stateful
        tokens = Vocabulary.build([prepared["train"]], specials=False).itos
        self.capped = max_vocabulary is not None and len(tokens) > max_vocabulary
        if self.capped:  # <eos>, <unk> and the most frequent others, in order of frequency
            kept = {END_OF_LINE, UNKNOWN, *[t for t in tokens if t not in (END_OF_LINE, UNKNOWN)][:max_vocabulary - 2]}
            tokens = [t for t in tokens if t in kept] + ([UNKNOWN] if UNKNOWN not in tokens else [])
        self.vocab = Vocabulary([PAD] + tokens, specials=False)
        self.io = TaskIO(output_size=len(tokens), level="token", input_vocab=len(self.vocab))
        self.eos = self.vocab.stoi[END_OF_LINE]
        limits = {"train": max_train_tokens, "dev": max_eval_tokens, "test": max_eval_tokens}
        self.streams: dict[str, list[int]] = {}
        self.sentences: dict[str, list[list[int]]] = {}
        for split, limit in limits.items():
            if mode == "stream":
                self.streams[split] = self.encode(prepared[split][:limit])
            else:
                lines = [line for line in split_lines(prepared[split]) if line
                         and (max_sentence_length is None or len(line) <= max_sentence_length)]
                self.sentences[split] = [self.encode(line) for line in first_lines_within(lines, limit)]

    @classmethod
    def dataset(cls, corpus: str = "ptb_word", **_) -> str:
        return corpus

    @property
    def vocabulary_size(self) -> int:
        """V: the number of distinct tokens (output classes), ``<eos>`` included."""
        return self.io.output_size

    def encode(self, tokens: list[str]) -> list[int]:
        """Input ids of tokens; a token outside the training vocabulary is an error naming it
        (with ``max_vocabulary``, tokens beyond the cap are ``<unk>``)."""
        if self.capped:
            unknown = self.vocab.stoi[UNKNOWN]
            return [self.vocab.stoi.get(token, unknown) for token in tokens]
        try:
            return self.vocab.encode(tokens)
        except KeyError as error:
            raise ValueError(f"token {error.args[0]!r} is not in the training vocabulary") from None

    # -- batches -------------------------------------------------------------------------
    def windows(self, split: str) -> list[tuple[list[int], list[int]]]:
        """(input ids, target classes) of every window of a stream split, in order."""
        stream = self.streams[split]
        result = []
        for start in range(0, len(stream) - 1, self.bptt):
            end = min(start + self.bptt, len(stream) - 1)
            first = max(0, start - self.context)
            targets = [IGNORE_INDEX] * (start - first) + [i - 1 for i in stream[start + 1:end + 1]]
            result.append((stream[first:end], targets))
        return result

    def pieces(self, split: str, count: int) -> list[tuple[int, int]]:
        """(s_b, e_b) of the ``count`` contiguous pieces of a stream split (0-based input
        positions: piece b reads stream[s_b:e_b] and predicts stream[s_b+1:e_b+1]); every
        token but the first is predicted once, the first (N - 1) mod count pieces one longer."""
        predicted = len(self.streams[split]) - 1
        count = max(1, min(count, predicted))
        size, longer = divmod(predicted, count)
        bounds, start = [], 0
        for b in range(count):
            end = start + size + (b < longer)
            bounds.append((start, end))
            start = end
        return bounds

    def stateful_batches(self, split: str, batch_size: int) -> list[Batch]:
        """Batch k: positions k·bptt .. (k+1)·bptt - 1 of each of ``batch_size`` pieces, in order."""
        stream = self.streams[split]
        pieces = self.pieces(split, batch_size)
        longest = max(end - start for start, end in pieces)
        result = []
        for offset in range(0, longest, self.bptt):
            spans = [(min(start + offset, end), min(start + offset + self.bptt, end)) for start, end in pieces]
            result.append(Batch(inputs=pad_time_major([stream[lo:hi] for lo, hi in spans], 0),
                                lengths=torch.tensor([hi - lo for lo, hi in spans]),
                                targets=pad_time_major([[i - 1 for i in stream[lo + 1:hi + 1]] for lo, hi in spans],
                                                       IGNORE_INDEX)))
        return result

    def sequences(self, split: str) -> list[tuple[list[int], list[int]]]:
        """(input ids, target classes) of every sequence of the split."""
        if self.mode == "stream":
            return self.windows(split)
        return [([self.eos] + line, [i - 1 for i in line + [self.eos]]) for line in self.sentences[split]]

    def batches(self, split: str, batch_size: int, generator: torch.Generator | None = None) -> list[Batch]:
        """Windows (stream mode; shuffled when ``generator`` is given, else in order), the
        consecutive windows of ``batch_size`` parallel pieces (stateful; the same order every
        epoch, ``generator`` unused), or sentences bucketed by length (sentence mode); targets
        padded with IGNORE_INDEX."""
        if self.stateful:
            return self.stateful_batches(split, batch_size)
        sequences = self.sequences(split)
        if self.mode == "stream":
            order = (torch.randperm(len(sequences), generator=generator).tolist() if generator is not None
                     else list(range(len(sequences))))
            groups = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        else:
            groups = list(shuffled_buckets([len(s[0]) for s in sequences], batch_size, generator))
        return [Batch(inputs=pad_time_major([sequences[i][0] for i in group], 0),
                      lengths=torch.tensor([len(sequences[i][0]) for i in group]),
                      targets=pad_time_major([sequences[i][1] for i in group], IGNORE_INDEX))
                for group in groups]

    # -- loss and metrics ----------------------------------------------------------------
    def loss(self, output: Tensor, batch: Batch) -> Tensor:
        """Token cross-entropy averaged over the batch's scored targets; output (T, B, V)."""
        return nn.functional.cross_entropy(output.flatten(0, 1), batch.targets.flatten(), ignore_index=IGNORE_INDEX)

    def item_formulas(self) -> dict[str, Formula]:
        """Items: the sequences a split is cut into (sentences, or windows of the stream), each
        with its summed ``nll``, its scored ``tokens`` and 1 ``sentences`` in sentence mode."""
        formulas = {"nll": ratio("nll", "tokens"), "perplexity": ratio("nll", "tokens", exp=True)}
        if self.mode == "sentence":
            formulas["sentence_nll"] = ratio("nll", "sentences")
        return formulas

    @property
    def item_unit(self) -> str:
        return "sentence" if self.mode == "sentence" else "window"

    @torch.no_grad()
    def evaluate(self, model: nn.Module, split: str, batch_size: int, device: torch.device,
                 items: ItemRecorder | None = None) -> dict[str, float]:
        """``<split>_nll`` and ``<split>_perplexity``, token-weighted over the whole split
        (plus ``<split>_sentence_nll`` in sentence mode). Stateful: ``batch_size`` pieces, the
        state carried across the split's batches from a zero state."""
        total_nll = 0.0
        tokens = 0
        state = None
        for batch in self.batches(split, batch_size):
            batch = batch.to(device)
            if self.stateful:
                output, state = forward_with_state(model, batch, state)
            else:
                output = model(batch)
            output = main_output(output).float()
            scored = nn.functional.cross_entropy(output.flatten(0, 1), batch.targets.flatten(),
                                                 ignore_index=IGNORE_INDEX, reduction="none")
            total_nll += float(scored.sum())
            real = batch.targets != IGNORE_INDEX
            tokens += int(real.sum())
            if items is not None:
                counted = per_column(real.long())
                items.add(nll=per_column(scored.double().view_as(batch.targets)), tokens=counted,
                          sentences=torch.ones_like(counted))
        nll = total_nll / tokens
        metrics = {f"{split}_nll": nll, f"{split}_perplexity": math.exp(nll)}
        if self.mode == "sentence":
            metrics[f"{split}_sentence_nll"] = total_nll / len(self.sentences[split])
        return metrics

    # -- generation (tutorial Sec. 9.5, Fig. 12) -----------------------------------------
    @torch.no_grad()
    def sample(self, model: nn.Module, num_tokens: int, generator: torch.Generator | None = None,
               prompt: list[str] | None = None, temperature: float = 1.0,
               device: torch.device | str = "cpu") -> list[str]:
        """Generate ``num_tokens`` tokens after ``prompt`` (default: ``<eos>``, a line start)
        by sampling w_t ~ softmax(logits_t / temperature) and feeding it back.

        Works with any token-level model: the whole sequence so far is run again at each step
        (quadratic, fine for short samples). Sampling from a bidirectional model is
        meaningless (it was trained with the future in view) but runs.
        """
        model.eval()
        ids = self.encode(prompt) if prompt else [self.eos]
        generated: list[str] = []
        for _ in range(num_tokens):
            inputs = torch.tensor(ids, device=device).unsqueeze(1)
            batch = Batch(inputs, torch.tensor([len(ids)], device=device), torch.zeros(0, device=device))
            logits = main_output(model(batch))[-1, 0].float().cpu() / temperature
            token_class = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=generator))
            ids.append(token_class + 1)
            generated.append(self.vocab.itos[token_class + 1])
        return generated
