"""Per-item statistics of a test split, and the paired bootstrap over them.

A split metric such as accuracy, perplexity, UAS or corpus BLEU is a function of sums over the
split's items (sentences, windows of a token stream, sequences): with per-item statistics x_i,

    accuracy   = Σ correct_i / Σ tokens_i
    perplexity = exp(Σ nll_i / Σ tokens_i)
    UAS (F1)   = 2 Σ uas_correct_i / (Σ gold_words_i + Σ system_words_i)   (CoNLL 2018)
    BLEU       = BP · exp(¼ Σ_n log p_n),  p_n = Σ match_n,i / Σ total_n,i,
                 BP = min(1, exp(1 − Σ ref_len_i / Σ hyp_len_i))          (sacrebleu, 'exp' smoothing)

so a run that keeps its test items (``items.npz`` in its folder, :class:`SplitItems`) lets the
report weigh a difference between two single runs without seeds: the paired bootstrap of Koehn
(2004) and of the parsing literature (e.g. Berg-Kirkpatrick et al. 2012). Both runs are
resampled with the *same* draws of test items (with replacement, as many as the split has),
the metric's difference is recomputed on each of R resamples, and its standard deviation over
the resamples is the standard error of the difference (:func:`bootstrap_se`), which the claims
engine weighs at its levels (:mod:`rnnrepro.claims.inference`: each bound of a 90 % interval
one-sided 5 %). A verdict that rests on it is about these two trained models, not their cells.
Draws are fixed (seed 0), so a verdict is deterministic.

What the bootstrap measures is the uncertainty from the choice of test items only, not from
training (the seed's noise), which only several seeds measure. Two runs are paired only when
they were scored on the same items: the same number of items, whose weights (the denominators:
tokens, words, reference lengths) agree item by item.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

#: The file a run keeps its test items in (beside metrics.json).
ITEMS_FILE = "items.npz"
#: Bootstrap resamples and their fixed seed.
RESAMPLES = 1000
BOOTSTRAP_SEED = 0
#: Resamples drawn at once (bounds the memory of the draw matrix: CHUNK × items counts).
CHUNK = 50


# -- metric formulas over item sums --------------------------------------------------------------
@dataclass(frozen=True)
class Ratio:
    """factor · Σ numerator / Σ denominator (each a sum of columns), or exp of it with ``exp``."""

    kind: ClassVar[str] = "ratio"
    numerator: tuple[str, ...]
    denominator: tuple[str, ...]
    factor: float = 1.0
    exp: bool = False

    @property
    def weights(self) -> tuple[str, ...]:
        """The columns two runs must share item by item to be paired."""
        return self.denominator

    def of(self, sums: Mapping[str, np.ndarray]) -> np.ndarray:
        top = sum(sums[c] for c in self.numerator)
        bottom = sum(sums[c] for c in self.denominator)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = self.factor * np.asarray(top, dtype=np.float64) / bottom
        return np.exp(value) if self.exp else value

    def spec(self) -> dict[str, Any]:
        return {"kind": self.kind, "numerator": list(self.numerator), "denominator": list(self.denominator),
                "factor": self.factor, "exp": self.exp}


def ratio(numerator: str | Sequence[str], denominator: str | Sequence[str], factor: float = 1.0,
          exp: bool = False) -> Ratio:
    as_tuple = (lambda c: (c,) if isinstance(c, str) else tuple(c))
    return Ratio(as_tuple(numerator), as_tuple(denominator), float(factor), bool(exp))


BLEU_ORDER = 4
BLEU_COLUMNS = ("hyp_len", "ref_len", *(f"match_{n}" for n in range(1, BLEU_ORDER + 1)),
                *(f"total_{n}" for n in range(1, BLEU_ORDER + 1)))


@dataclass(frozen=True)
class CorpusBleu:
    """Corpus BLEU (0-100) from summed n-gram statistics, as sacrebleu computes it with its
    default 'exp' smoothing: an order with no match counts as 100 / (2^k · total_n), k = 1, 2, ...
    for the first, second, ... such order."""

    kind: ClassVar[str] = "bleu"
    weights: ClassVar[tuple[str, ...]] = ("ref_len",)

    def of(self, sums: Mapping[str, np.ndarray]) -> np.ndarray:
        hyp = np.asarray(sums["hyp_len"], dtype=np.float64)
        ref = np.asarray(sums["ref_len"], dtype=np.float64)
        log_precision = np.zeros_like(hyp)
        smooth = np.ones_like(hyp)
        for n in range(1, BLEU_ORDER + 1):
            match = np.asarray(sums[f"match_{n}"], dtype=np.float64)
            total = np.asarray(sums[f"total_{n}"], dtype=np.float64)
            zero = match == 0
            smooth = np.where(zero, smooth * 2, smooth)
            with np.errstate(divide="ignore", invalid="ignore"):
                precision = np.where(zero, 100.0 / (smooth * total), 100.0 * match / total)
            log_precision += np.log(precision) / BLEU_ORDER
        with np.errstate(divide="ignore", invalid="ignore"):
            brevity = np.where(hyp < ref, np.exp(1 - ref / hyp), 1.0)
        return np.where(hyp > 0, brevity * np.exp(log_precision), 0.0)

    def spec(self) -> dict[str, Any]:
        return {"kind": self.kind}


Formula = Ratio | CorpusBleu


def formula_of(spec: Mapping[str, Any]) -> Formula:
    """A formula from its :meth:`spec` (as a run's items file keeps it)."""
    if spec["kind"] == Ratio.kind:
        return ratio(spec["numerator"], spec["denominator"], spec.get("factor", 1.0), spec.get("exp", False))
    if spec["kind"] == CorpusBleu.kind:
        return CorpusBleu()
    raise ValueError(f"unknown item metric kind {spec['kind']!r}; known: {Ratio.kind}, {CorpusBleu.kind}")


def bleu_statistics(hypothesis: str, reference: str) -> dict[str, int]:
    """One sentence's BLEU statistics (whitespace tokens, one reference, orders 1-4): lengths,
    clipped n-gram matches and hypothesis n-grams, as sacrebleu counts them."""
    hyp, ref = hypothesis.split(), reference.split()
    stats = {"hyp_len": len(hyp), "ref_len": len(ref)}
    for n in range(1, BLEU_ORDER + 1):
        hyp_ngrams = _ngrams(hyp, n)
        ref_ngrams = _ngrams(ref, n)
        stats[f"match_{n}"] = sum(min(count, ref_ngrams.get(gram, 0)) for gram, count in hyp_ngrams.items())
        stats[f"total_{n}"] = max(0, len(hyp) - n + 1)
    return stats


def _ngrams(tokens: list[str], n: int) -> dict[tuple[str, ...], int]:
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(tokens) - n + 1):
        gram = tuple(tokens[i:i + n])
        counts[gram] = counts.get(gram, 0) + 1
    return counts


# -- a run's items -------------------------------------------------------------------------------
class ItemRecorder:
    """Collects per-item statistics while a task evaluates a split: ``add(correct=..., tokens=...)``
    with one value per item (arrays or tensors of equal length), any number of times."""

    def __init__(self, unit: str):
        self.unit = unit
        self.parts: dict[str, list[np.ndarray]] = {}

    def add(self, **columns: Any) -> None:
        arrays = {name: _as_array(values) for name, values in columns.items()}
        lengths = {len(a) for a in arrays.values()}
        if len(lengths) > 1:
            raise ValueError(f"item columns of different lengths: {({k: len(a) for k, a in arrays.items()})}")
        for name, array in arrays.items():
            self.parts.setdefault(name, []).append(array)

    def items(self, split: str, formulas: Mapping[str, Formula]) -> "SplitItems":
        """The recorded items, with the formulas of the split's metrics (``accuracy`` → ``<split>_accuracy``)."""
        columns = {name: np.concatenate(parts) for name, parts in self.parts.items()}
        return SplitItems(self.unit, columns, {f"{split}_{name}": formula for name, formula in formulas.items()})


def _as_array(values: Any) -> np.ndarray:
    if hasattr(values, "detach"):  # a torch tensor
        values = values.detach().cpu().double().numpy()
    return np.asarray(values, dtype=np.float64).ravel()


@dataclass
class SplitItems:
    """One run's per-item statistics of its test split, and the formulas of the metrics they give."""

    unit: str  # what an item is: "sentence", "window", "sequence"
    columns: dict[str, np.ndarray]
    metrics: dict[str, Formula] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def value(self, metric: str) -> float:
        """The metric over every item (equals what the task's evaluate reports)."""
        return float(self.metrics[metric].of({name: column.sum() for name, column in self.columns.items()}))

    def save(self, path: str | Path) -> None:
        meta = {"unit": self.unit, "metrics": {name: f.spec() for name, f in self.metrics.items()}}
        with open(path, "wb") as handle:
            np.savez_compressed(handle, __meta__=np.array(json.dumps(meta)), **self.columns)

    @classmethod
    def load(cls, path: str | Path) -> "SplitItems | None":
        """A run's items, or None when the run kept none (its task records no items)."""
        with np.load(path, allow_pickle=False) as data:
            if "__meta__" not in data.files:
                return None
            meta = json.loads(str(data["__meta__"]))
            columns = {name: data[name] for name in data.files if name != "__meta__"}
        return cls(meta["unit"], columns, {name: formula_of(spec) for name, spec in meta["metrics"].items()})


def save_no_items(path: str | Path) -> None:
    """The items file of a run whose task records none (so every run has the file)."""
    with open(path, "wb") as handle:
        np.savez_compressed(handle)


def save_study_items(path: str | Path, runs: Mapping[str, SplitItems]) -> None:
    """The test items of a study's runs in one file (the aggregation's ``items.npz``), by run name."""
    index, arrays = [], {}
    for k, (run, items) in enumerate(sorted(runs.items())):
        index.append({"run": run, "key": k, "unit": items.unit,
                      "metrics": {name: f.spec() for name, f in items.metrics.items()}})
        arrays.update({f"{k}.{column}": values for column, values in items.columns.items()})
    with open(path, "wb") as handle:
        np.savez_compressed(handle, __index__=np.array(json.dumps(index)), **arrays)


def load_study_items(path: str | Path) -> dict[str, SplitItems]:
    """The runs' test items of a study's ``items.npz`` (:func:`save_study_items`), by run name."""
    with np.load(path, allow_pickle=False) as data:
        index = json.loads(str(data["__index__"]))
        by_key: dict[str, dict[str, np.ndarray]] = {}
        for name in data.files:
            if name != "__index__":
                key, _, column = name.partition(".")
                by_key.setdefault(key, {})[column] = data[name]
    return {entry["run"]: SplitItems(entry["unit"], by_key.get(str(entry["key"]), {}),
                                     {name: formula_of(spec) for name, spec in entry["metrics"].items()})
            for entry in index}


def pairable(runs: Sequence[SplitItems], metric: str) -> bool:
    """Whether the runs were scored on the same items: each has the metric, the same number of
    items and, item by item, the same weights (the metric's denominators)."""
    if not runs or any(metric not in r.metrics for r in runs):
        return False
    first = runs[0]
    weights = first.metrics[metric].weights
    return all(len(r) == len(first) and all(np.array_equal(r.columns[w], first.columns[w]) for w in weights)
               for r in runs[1:])


def bootstrap_se(terms: Sequence[tuple[float, SplitItems]], metric: str, resamples: int = RESAMPLES,
                 seed: int = BOOTSTRAP_SEED) -> float | None:
    """The standard error of Σ sign · metric(run) over ``terms`` ((sign, run) pairs; a difference
    is ((+1, a), (−1, b))), by the paired bootstrap: every run resampled with the same draws of
    its test items. None when the runs are not :func:`pairable` or the split has under 2 items."""
    runs = [items for _, items in terms]
    if not pairable(runs, metric) or len(runs[0]) < 2:
        return None
    n = len(runs[0])
    rng = np.random.default_rng(seed)
    formulas = [r.metrics[metric] for r in runs]
    matrices = [np.column_stack([r.columns[c] for c in sorted(r.columns)]) for r in runs]
    names = [sorted(r.columns) for r in runs]
    values = []
    for start in range(0, resamples, CHUNK):
        draws = rng.multinomial(n, np.full(n, 1.0 / n), size=min(CHUNK, resamples - start)).astype(np.float64)
        total = np.zeros(len(draws))
        for (sign, _), formula, matrix, columns in zip(terms, formulas, matrices, names):
            sums = draws @ matrix
            total += sign * formula.of({c: sums[:, k] for k, c in enumerate(columns)})
        values.append(total)
    values = np.concatenate(values)
    if not np.all(np.isfinite(values)):
        return None
    return float(np.std(values, ddof=1))


def describe(items: SplitItems) -> str:
    """``"400 test sentences"``."""
    return f"{len(items)} test {items.unit}{'s' if len(items) != 1 else ''}"
