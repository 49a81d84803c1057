"""How a metric's numbers are written: per metric a scale factor, decimals and unit.

Accuracies and attachment scores are stored as fractions and shown as percentages; their
differences in percentage points. A metric's kind is its last ``_``-separated word
(``test_accuracy`` -> ``accuracy``; ``mean_dev_mse`` -> ``mse``). Which way a metric improves
is :mod:`rnnrepro.metrics.directions`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Metrics that describe a run rather than a result; not compared with the papers.
BOOKKEEPING_METRICS: frozenset[str] = frozenset({"params", "steps", "seconds", "epochs"})


@dataclass(frozen=True)
class MetricFormat:
    """Display ``value * factor`` with ``decimals`` digits and ``unit``; differences in ``diff_unit``."""

    factor: float = 1.0
    decimals: int = 4
    unit: str = ""
    diff_unit: str = ""


PERCENT = MetricFormat(factor=100.0, decimals=2, unit=" %", diff_unit=" pp")
METRIC_FORMATS: dict[str, MetricFormat] = {
    "accuracy": PERCENT,
    "uas": PERCENT,
    "las": PERCENT,
    "perplexity": MetricFormat(decimals=2),
    "nll": MetricFormat(decimals=3),
    "mse": MetricFormat(decimals=4),
    "loss": MetricFormat(decimals=4),
    "bleu": MetricFormat(decimals=2),
    "em": MetricFormat(decimals=2),
    "f1": MetricFormat(decimals=2),
    "params": MetricFormat(decimals=0),
    "sentences": MetricFormat(decimals=0),
    "vocabulary": MetricFormat(decimals=0),
}


def metric_format(metric: str) -> MetricFormat:
    """The display format of ``metric``, chosen by its last ``_``-separated word."""
    if metric.endswith("nll_gap"):
        return MetricFormat(decimals=3)
    return METRIC_FORMATS.get(metric.rsplit("_", 1)[-1], MetricFormat())


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
