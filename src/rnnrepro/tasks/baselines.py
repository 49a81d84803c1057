"""Controls before claims: what a model that learns nothing, or next to nothing, scores.

:func:`baselines_of` gives, for a built task and the splits our runs are scored on, the metrics of
a few trivial predictors, ``{baseline: {"<split>_<metric>": value}}``, named as the task's own
``evaluate`` names them; :func:`described` says in a line what each predictor is. Where it can, a
predictor runs through the task's own ``evaluate`` as a :class:`Fixed` model, so that the split,
the items counted, the padding and the metric formulas are exactly those of a trained model.

The predictors live here, one function per task class, and not in the task modules: a task's
module is part of the code identity of every run of it (:mod:`rnnrepro.plan.code_identity`), and a
baseline, which trains nothing, must not retrain finished runs.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence

import torch
from torch import Tensor, nn

from .adding import AddingProblem
from .base import EVALUATED_SPLITS, IGNORE_INDEX, Batch, Task
from ..bounds import COPIED, DATA_CATEGORIES
from .copying import BLANK, CATEGORIES, CopyingProblem
from .counting import RecogniseAnBn
from .language_model import LanguageModel
from .parsing import BiaffineParsing, ParserScores, Seq2seqParsing, TreebankParsing
from .pos import POSTagging
from .presence import Presence
from .reversal import SequenceReversal, exact_bound
from .sine_filter import SineFilter
from .translation import Translation, corpus_bleu

#: batch size of a baseline's evaluation: a fixed predictor scores the same whatever it is, and a
#: small one keeps the (T, B, V) scores of a language model's constant prediction small
BATCH_SIZE = 8
CPU = torch.device("cpu")

Baselines = dict[str, dict[str, float]]
#: task class -> (its baselines' function, {baseline: what it is})
OF_TASK: dict[type[Task], tuple[Callable[[Task, Sequence[str]], Baselines], dict[str, str]]] = {}


def baselines_of(task: Task, splits: Sequence[str] = EVALUATED_SPLITS) -> Baselines:
    """What each trivial predictor of ``task``'s class scores on ``splits`` (empty for a task
    with none)."""
    found = next((entry for cls in type(task).__mro__ if (entry := OF_TASK.get(cls))), None)
    return found[0](task, splits) if found else {}


def described(task_class: type[Task]) -> dict[str, str]:
    """{baseline: what it is, a line for a report} of a task class."""
    return next((entry[1] for cls in task_class.__mro__ if (entry := OF_TASK.get(cls))), {})


def of(task_class: type[Task], **descriptions: str):
    """Register the decorated function as the baselines of ``task_class`` (and its subclasses)."""
    def register(function):
        OF_TASK[task_class] = (function, descriptions)
        return function
    return register


class Fixed(nn.Module):
    """A model that learns nothing: ``Fixed(predict)(batch)`` is ``predict(batch)``. It carries no
    state but says it does, so that it also runs where evaluation carries one (a stateful LM)."""

    carries_state = True

    def __init__(self, predict: Callable):
        super().__init__()
        self.predict = predict

    def forward(self, batch, state=None, return_state: bool = False):
        output = self.predict(batch)
        return (output, None) if return_state else output


def constant(scores: Tensor, level: str = "token") -> Fixed:
    """The model giving ``scores`` (C,) at every step of every sequence ("token": (T, B, C)
    outputs), or once per sequence ("sequence": (B, C))."""
    if level == "token":
        return Fixed(lambda batch: scores.expand(*batch.inputs.shape[:2], -1))
    return Fixed(lambda batch: scores.expand(batch.size, -1))


def scored(task: Task, model: nn.Module, splits: Sequence[str]) -> dict[str, float]:
    """``task.evaluate(model, split, ...)`` of every split, in one dict."""
    model.eval()
    metrics: dict[str, float] = {}
    for split in splits:
        metrics.update(task.evaluate(model, split, BATCH_SIZE, CPU))
    return metrics


def most_frequent(values: Iterable[Hashable]):
    """The most frequent value (ties: the smallest)."""
    counts = Counter(values)
    return min(counts, key=lambda value: (-counts[value], value))


# -- language models -------------------------------------------------------------------------------
@of(LanguageModel, unigram="add-one unigram model of the training targets the run trains on",
    uniform="probability 1/V for each of the V output classes (perplexity V)")
def language_model(task: LanguageModel, splits: Sequence[str]) -> Baselines:
    """Every metric ``evaluate`` writes, of two models that ignore the context:

    - ``unigram``: p(k) = (c_k + 1) / (N + V), c_k the count of class k among the N targets of the
      training split as the run trains on it (the prefix of ``max_train_tokens``; every token of
      the stream but its first, or every line's tokens and its ``<eos>``);
    - ``uniform``: p(k) = 1/V, so nll = log V and perplexity = V.
    """
    counts = torch.zeros(task.vocabulary_size, dtype=torch.float64)
    for _, targets in task.sequences("train"):
        targets = torch.tensor(targets)
        counts += torch.bincount(targets[targets != IGNORE_INDEX], minlength=task.vocabulary_size)
    unigram = torch.log((counts + 1) / (counts.sum() + task.vocabulary_size)).float()
    return {"unigram": scored(task, constant(unigram), splits),
            "uniform": scored(task, constant(torch.zeros(task.vocabulary_size)), splits)}


# -- taggers ---------------------------------------------------------------------------------------
@of(POSTagging, word_tag="each word's most frequent tag in the training sentences the run trains on "
                         "(a word unseen there: the most frequent tag)",
    majority_tag="the most frequent tag of the training sentences the run trains on, for every word")
def tagging(task: POSTagging, splits: Sequence[str]) -> Baselines:
    """Accuracy of two taggers read off the training sentences as the run trains on them
    (``max_train_sentences``; words as the model reads them, ``<unk>`` for those below
    ``min_count``); ties go to the tag of the smaller id:

    - ``word_tag``: tag(w) = argmax_t count(w, t), and the most frequent tag for a word the
      training sentences do not have;
    - ``majority_tag``: argmax_t count(t) for every word.
    """
    words, tags = (torch.tensor([i for sentence in side for i in sentence]) for side in task.splits["train"])
    counts = torch.zeros(len(task.words), len(task.tags), dtype=torch.long)
    counts.index_put_((words, tags), torch.ones_like(words), accumulate=True)  # count(w, t)
    majority = int(counts.sum(0).argmax())
    word_tag = torch.where(counts.sum(1) > 0, counts.argmax(1), majority)
    return {name: scored(task, tagger(table, len(task.tags)), splits)
            for name, table in (("word_tag", word_tag), ("majority_tag", torch.full_like(word_tag, majority)))}


def tagger(table: Tensor, tags: int) -> Fixed:
    """The tagger giving word id w the tag ``table[w]`` (one-hot scores over ``tags`` tags)."""
    return Fixed(lambda batch: nn.functional.one_hot(table[batch.inputs], tags).float())


# -- parsers ---------------------------------------------------------------------------------------
NEIGHBOURS = ("left", "right")


def neighbour_heads(words: Tensor, steps: int, side: str) -> Tensor:
    """(steps, B) heads of sentences of ``words`` (B,) words attaching word i to a neighbour:
    "left", i − 1 (word 1 to the root, 0); "right", i + 1 (the last word to the root); 0 on padding."""
    position = torch.arange(1, steps + 1).unsqueeze(1)
    heads = position - 1 if side == "left" else torch.where(position == words, 0, position + 1)
    return torch.where(position <= words, heads, 0)


@of(TreebankParsing, left="each word attached to the word before it (the first to the root), with the training "
                          "split's most frequent relation",
    right="each word attached to the word after it (the last to the root), with the training split's most "
          "frequent relation")
def parsing(task: TreebankParsing, splits: Sequence[str]) -> Baselines:
    """UAS and LAS, scored by ``evaluate``, of the parsers that attach every word to a neighbour
    (:func:`neighbour_heads`), ``left`` (h_i = i − 1) and ``right`` (h_i = i + 1, h_T = 0),
    labelling every word with the relation most frequent in the training split the run trains on
    (``max_train_sentences``; ties: the first alphabetically)."""
    relation = task.relations.stoi[most_frequent(r for sentence in task.columns["train"]["deprel"] for r in sentence)]
    parse = seq2seq_parse if isinstance(task, Seq2seqParsing) else biaffine_parse
    return {side: scored(task, Fixed(lambda batch, side=side: parse(task, batch, side, relation)), splits)
            for side in NEIGHBOURS}


def seq2seq_parse(task: Seq2seqParsing, batch: Batch, side: str, relation: int) -> Tensor:
    """Output ids (2T, B) of a seq2seq parser: relation, R + head, for every word."""
    steps = batch.targets.shape[0] // 2
    heads = neighbour_heads(batch.extra["target_lengths"] // 2, steps, side)
    return torch.stack([torch.full_like(heads, relation), len(task.relations) + heads], 1).flatten(0, 1)


def biaffine_parse(task: BiaffineParsing, batch: Batch, side: str, relation: int) -> ParserScores:
    """A biaffine parser's output: the decoded tree's heads and one-hot relation scores (arc
    scores unused: zero)."""
    steps, size = batch.inputs.shape[:2]
    labels = torch.zeros(steps, size, len(task.relations))
    labels[..., relation] = 1.0
    return ParserScores(arcs=torch.zeros(steps, size, steps + 1), labels=labels,
                        heads=neighbour_heads(batch.lengths, steps, side))


# -- translation -----------------------------------------------------------------------------------
@of(Translation, copy="the source sentence (its words, as tokenised) as the translation")
def translation(task: Translation, splits: Sequence[str]) -> Baselines:
    """``copy``: the BLEU of the split's source sentences, their words joined by spaces, taken as
    the translations of its references (``<split>_bleu``, ``<split>_bleu_greedy`` where ``evaluate``
    writes it: greedy and beam "decode" the same, and each source-length bucket's). Computed with the task's own
    :func:`~.translation.corpus_bleu`, not through ``evaluate``, which decodes from a model in
    target units: a copying model would write ``<unk>`` for every source word missing from the
    target vocabulary, which this copy keeps."""
    metrics: dict[str, float] = {}
    for split in splits:
        copied, references = [" ".join(tokens) for tokens in task.raw[split][0]], task.references(split)
        metrics[f"{split}_bleu"] = corpus_bleu(copied, references)
        if task.beam_size > 1:
            metrics[f"{split}_bleu_greedy"] = metrics[f"{split}_bleu"]
        lengths = [len(tokens) for tokens in task.raw[split][0]]
        for name, low, high in task.buckets:  # as evaluate: the BLEU of each source-length bucket
            chosen = [i for i, n in enumerate(lengths) if low <= n <= high]
            if chosen:
                metrics[f"{split}_bleu_{name}"] = corpus_bleu([copied[i] for i in chosen],
                                                              [references[i] for i in chosen])
    return {"copy": metrics}


# -- synthetic tasks -------------------------------------------------------------------------------
@of(AddingProblem, mean="the mean of the split's own targets, for every sequence (MSE: their variance)",
    one="1, the targets' expectation, for every sequence (MSE 1/6 in expectation; the paper's line)",
    zero="0 for every sequence")
def adding(task: AddingProblem, splits: Sequence[str]) -> Baselines:
    """MSE of predicting a constant c for every sequence, (1/n) Σ (y − c)²: ``mean``, c = ȳ of the
    split itself (the split's variance), ``one``, c = 1, and ``zero``, c = 0."""
    results: Baselines = {"mean": {}, "one": {}, "zero": {}}
    for split in splits:
        values = {"mean": float(task.splits[split][1].mean()), "one": 1.0, "zero": 0.0}
        for name, value in values.items():
            results[name] |= scored(task, Fixed(lambda batch, c=value: torch.full((batch.size, 1), c)), [split])
    return results


@of(CopyingProblem, memoryless="blank until the ten recalled steps, then a uniform guess among the eight data "
                               "categories (Arjovsky et al.'s baseline)")
def copying(task: CopyingProblem, splits: Sequence[str]) -> Baselines:
    """``memoryless``: p(C_8) = 1 at the first T + 10 steps and p(C_k) = 1/8, k = 0..7, at the last
    ten, scored by ``evaluate``: its loss is exactly 10 log 8 / (T + 20)
    (:func:`~.copying.memoryless_baseline`), its copy accuracy the share of C_0 among the split's
    recalled categories (the argmax of a tie is the first), 1/8 in expectation."""
    log_p = torch.full((task.T + 2 * COPIED, CATEGORIES), -math.inf)
    log_p[:-COPIED, BLANK] = 0.0
    log_p[-COPIED:, :DATA_CATEGORIES] = -math.log(DATA_CATEGORIES)
    return {"memoryless": scored(task, Fixed(lambda batch: log_p.unsqueeze(1).expand(-1, batch.size, -1)), splits)}


@of(SineFilter, zero="0 at every step", identity="the step's own input, y_t = x_t")
def sine_filter(task: SineFilter, splits: Sequence[str]) -> Baselines:
    """MSE over every step of the split of ``zero`` (ŷ_t = 0: the mean of y²) and ``identity``
    (ŷ_t = x_t: the mean of (y_t − x_t)²)."""
    return {"zero": scored(task, Fixed(lambda batch: torch.zeros_like(batch.inputs)), splits),
            "identity": scored(task, Fixed(lambda batch: batch.inputs), splits)}


@of(SequenceReversal, chance="a uniform guess among the V tokens at every step",
    causal="the best network without delay, expected (not measured): right once x_{T-t+1} has been read, "
           "a uniform guess before")
def reversal(task: SequenceReversal, splits: Sequence[str]) -> Baselines:
    """``chance``: p(v) = 1/V at every step, scored by ``evaluate``: loss log V, accuracy the share
    of token 1 among the split's targets (the argmax of a tie is the first), 1/V in expectation.
    ``causal``: computed, not measured: accuracy :func:`~.reversal.exact_bound` (0, T, V) (the
    paper's bound at delay 0 for even T), loss (1 − k/T) log V with k the T − ⌈(T + 1)/2⌉ + 1
    positions known at delay 0 (a sure answer costs 0, a guess log V)."""
    known = task.T - math.ceil((task.T + 1) / 2) + 1
    causal = {"accuracy": exact_bound(0, task.T, task.V), "loss": (1 - known / task.T) * math.log(task.V)}
    return {"chance": scored(task, constant(torch.zeros(task.V)), splits),
            "causal": {f"{split}_{name}": value for split in splits for name, value in causal.items()}}


@of(Presence, majority='the class prior, "A" present with probability T/(T + 1), for every sequence (its argmax: '
                      "the majority class, present)")
def presence(task: Presence, splits: Sequence[str]) -> Baselines:
    """``majority``: p(present) = T/(T + 1) whatever the sequence, scored by ``evaluate``: loss the
    prior's entropy, log(T + 1) − T log(T)/(T + 1), accuracy T/(T + 1)."""
    prior = torch.tensor([1.0, task.T]) / (task.T + 1)
    return {"majority": scored(task, constant(prior.log(), "sequence"), splits)}


@of(RecogniseAnBn, reject="every string rejected", accept="every string accepted")
def counting(task: RecogniseAnBn, splits: Sequence[str]) -> Baselines:
    """The two constant answers, scored by ``evaluate``: ``reject`` (dev accuracy the share of
    negatives, about ½; test accuracy ½ at every n, recognised up to 0) and ``accept`` (the share
    of positives; test ½, up to 0)."""
    return {name: scored(task, constant(torch.eye(2)[label], "sequence"), splits)
            for name, label in (("reject", 0), ("accept", 1))}
