"""Which way each metric improves: the one table that training (early stopping, model
selection) and the claims' checks both read.

A metric's kind is its last ``_``-separated word (``dev_perplexity`` -> ``perplexity``;
``mean_dev_mse`` -> ``mse``): accuracy, BLEU, UAS, LAS, F1 and EM are better higher; MSE, NLL,
perplexity, loss and error lower. Any other kind (a count, ``nll_gap``) has no direction: a
check on it says ``higher_is_better`` itself.
"""
from __future__ import annotations

from typing import Literal

#: Whether a larger (``"max"``) or a smaller (``"min"``) value of a metric is better, by the
#: last ``_``-separated part of its name (``dev_perplexity`` -> ``perplexity``).
METRIC_GOALS: dict[str, Literal["min", "max"]] = {
    "accuracy": "max", "bleu": "max", "uas": "max", "las": "max", "f1": "max", "em": "max",
    "mse": "min", "nll": "min", "perplexity": "min", "loss": "min", "error": "min",
}


def metric_goal(name: str) -> Literal["min", "max"]:
    """Which way metric ``name`` improves, read from its last word (``dev_loss``: "min")."""
    kind = name.rsplit("_", 1)[-1]
    if kind not in METRIC_GOALS:
        raise ValueError(f"no direction known for the metric {name!r} (known kinds: {', '.join(sorted(METRIC_GOALS))})")
    return METRIC_GOALS[kind]


def higher_is_better(metric: str, override: bool | None = None) -> bool:
    """Whether a larger ``metric`` is better (``override`` wins); an unknown direction is an error."""
    if override is not None:
        return override
    goal = METRIC_GOALS.get(metric.rsplit("_", 1)[-1])
    if goal is None:
        raise ValueError(f"say whether higher {metric} is better (higher_is_better in the check)")
    return goal == "max"
