"""How numbers are shown: per metric a scale factor, decimals, unit and direction.

Accuracies and attachment scores are stored as fractions and shown as percentages; their
differences in percentage points. A metric's kind is its last ``_``-separated word
(``test_accuracy`` -> ``accuracy``; ``mean_dev_mse`` -> ``mse``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: Display order of macro models and cells (unknown names go last, alphabetically).
MODEL_ORDER: tuple[str, ...] = ("basic", "brnn", "seq2seq", "seq2seq_attn", "dbrnn", "stacked", "delayed",
                                "biaffine", "char_word", "attn_encdec")
CELL_ORDER: tuple[str, ...] = ("srn", "lstm", "gru", "elstm", "elstm_ix", "lstm_plus", "pru", "pru_plus",
                               "lstm_minus_gates", "lstm_minus_srnn", "lstm_minus_srnn_out")
#: Display order of metrics (others follow, alphabetically).
METRIC_ORDER: tuple[str, ...] = ("test_accuracy", "dev_accuracy", "test_uas", "test_las", "dev_uas", "dev_las",
                                 "test_perplexity", "dev_perplexity", "valid_nll", "test_nll", "nll_gap",
                                 "test_bleu", "dev_bleu", "test_mse", "dev_mse")
#: Metrics that describe a run rather than a result; not compared with the papers.
BOOKKEEPING_METRICS: frozenset[str] = frozenset({"params", "steps", "seconds", "epochs"})


@dataclass(frozen=True)
class MetricFormat:
    """Display ``value * factor`` with ``decimals`` digits and ``unit``; differences in ``diff_unit``."""

    factor: float = 1.0
    decimals: int = 4
    unit: str = ""
    higher_is_better: bool | None = None
    diff_unit: str = ""


PERCENT = MetricFormat(factor=100.0, decimals=2, unit=" %", higher_is_better=True, diff_unit=" pp")
METRIC_FORMATS: dict[str, MetricFormat] = {
    "accuracy": PERCENT,
    "uas": PERCENT,
    "las": PERCENT,
    "perplexity": MetricFormat(decimals=2, higher_is_better=False),
    "nll": MetricFormat(decimals=3, higher_is_better=False),
    "mse": MetricFormat(decimals=4, higher_is_better=False),
    "loss": MetricFormat(decimals=4, higher_is_better=False),
    "bleu": MetricFormat(decimals=2, higher_is_better=True),
    "em": MetricFormat(decimals=2, higher_is_better=True),
    "f1": MetricFormat(decimals=2, higher_is_better=True),
    "params": MetricFormat(decimals=0),
    "sentences": MetricFormat(decimals=0),
    "vocabulary": MetricFormat(decimals=0),
}


def metric_format(metric: str) -> MetricFormat:
    """The display format of ``metric``, chosen by its last ``_``-separated word."""
    if metric.endswith("nll_gap"):
        return MetricFormat(decimals=3)
    return METRIC_FORMATS.get(metric.rsplit("_", 1)[-1], MetricFormat())


def higher_is_better(metric: str, override: bool | None = None) -> bool:
    """Whether a larger ``metric`` is better (``override`` wins); an unknown direction is an error."""
    direction = metric_format(metric).higher_is_better if override is None else override
    if direction is None:
        raise ValueError(f"say whether higher {metric} is better (higher_is_better in the check)")
    return direction


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_value(value: float | None, metric: str, signed: bool = False) -> str:
    """One value of ``metric`` for display (``0.873`` accuracy -> ``'87.30 %'``)."""
    if is_missing(value):
        return "—"
    fmt = metric_format(metric)
    scaled = value * fmt.factor
    digits = f".{fmt.decimals}f" if scaled == 0 or abs(scaled) >= 10 ** -fmt.decimals else ".2e"
    if fmt.decimals == 0:
        digits = ",.0f"
    number = f"{scaled:{'+' if signed else ''}{digits}}"
    return number + (fmt.diff_unit if signed else fmt.unit)


def format_mean_std(mean: float, std: float | None, n: float | None, metric: str) -> str:
    """A mean ± standard deviation over ``n`` seeds (``'87.30 ± 0.12 % (n=3)'``); no n for published values,
    the value alone for an exact one (an analysis's computation: n infinite)."""
    if is_missing(mean):
        return "—"
    if n is not None and n == float("inf"):
        return format_value(mean, metric)
    fmt = metric_format(metric)
    text = format_value(mean, metric).removesuffix(fmt.unit)
    if not is_missing(std):
        text += f" ± {format_value(std, metric).removesuffix(fmt.unit)}"
    text += fmt.unit
    if not is_missing(n):
        text += f" (n={int(n)})"
    return text


def ordered(values: Iterable[Any], order: Sequence[str]) -> list[Any]:
    """``values`` (deduplicated) by their position in ``order``; unknown ones last, sorted."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(set(values), key=lambda v: (rank.get(v, len(rank)), natural_key(v)))


def natural_key(value: Any) -> tuple:
    """Sort key that puts numbers (also as text: "5" < "10") before other text."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))
