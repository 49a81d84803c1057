"""Controls before claims: whether our models reached the regime the paper studied.

A sentence such as "removing the memory cell degrades parsing drastically" is about parsers that
parse. Each artifact states, with its source (``basis``), the condition its models must meet for
its sentences to be about them (``regime:`` in the study's YAML): a metric of the control rows
(``of``, e.g. the full LSTM) against a trivial baseline of the same split (the task's own
:func:`~rnnrepro.tasks.baselines.baselines_of`, ``tables/<study>/baselines.csv``) and, where the
condition is "part of the way to the paper", the paper's own number:

    at_most: {baseline: unigram, times: 0.5}               value ≤ 0.5 · unigram
    at_least: {baseline: left_neighbour, to: published, fraction: 0.5}
                                                            value ≥ b + 0.5 · (paper − b)

The condition is read on our mean over seeds (``seeds: best``: on the best restart, where the
sentences are about that restart alone), a control and not a claim: a model either reaches the
regime or it does not. Where a control row misses it, every claim of the artifact judged on
ours is its own outcome, :data:`NOT_IN_REGIME`, shown with ours, the baseline and the paper's
value, never "holds" or "does not hold"; a regime that cannot be read (no baseline, no row)
leaves the verdicts as they are and says so.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..labels import label_columns
from ..metrics.formats import format_value
from .selection import select
from .verdict import NOT_IN_REGIME  # noqa: F401 (the outcome this module decides)



@dataclass(frozen=True)
class RegimeCheck:
    """The outcome of an artifact's regime on ours: ``met`` True (every control row meets it), False
    (one does not) or None (it could not be read), with one detail line per control row."""

    met: bool | None
    details: list[str] = field(default_factory=list)
    condition: str = ""
    basis: str = ""
    cost: str = ""


def matching(rows: pd.DataFrame, labels: Mapping[str, Any]) -> pd.DataFrame:
    """The rows whose labels agree with ``labels`` on every label both have."""
    for label, value in labels.items():
        if label in rows and label != "seed":
            rows = rows[rows[label].astype(str) == str(value)]
    return rows


def bound_of(expression: Mapping[str, Any], row: Mapping[str, Any], metric: str, baselines: pd.DataFrame,
             published: pd.DataFrame) -> tuple[float | None, str]:
    """The bound a control row is held to, and how it is said; None where a term is missing.
    ``to`` names what "part of the way" goes towards: ``published`` (the paper's number of the
    same metric and labels), ``{published: metric, where: selector}`` (one published number, e.g.
    where the labels differ: a stand-in dataset) or another baseline of the task."""
    labels = {c: row[c] for c in row if c not in ("metric", "mean", "std", "n", "run", "min", "max")}

    def baseline(name):
        found = matching(baselines[(baselines["baseline"] == name) & (baselines["metric"] == metric)], labels) \
            if len(baselines) and name else pd.DataFrame()
        return float(found["value"].iloc[0]) if len(found) else None

    name = expression.get("baseline")
    base = baseline(name)
    if base is None:
        return None, f"no baseline {name!r} of {metric}"
    to = expression.get("to")
    if to is None:
        times = float(expression.get("times", 1.0))
        return times * base, (f"{times:g} × the {name} baseline {format_value(base, metric)}" if times != 1
                              else f"the {name} baseline {format_value(base, metric)}")
    if to == "published" or isinstance(to, Mapping):
        rows = published[published["metric"] == (to["published"] if isinstance(to, Mapping) else metric)] \
            if len(published) else published
        rows = select(rows, to.get("where")) if isinstance(to, Mapping) else matching(rows, labels)
        if rows.empty:
            return None, f"no published {metric} to go towards"
        target, what = float(rows["value"].iloc[0]), "the paper's"
    else:
        target, what = baseline(to), f"the {to} baseline"
        if target is None:
            return None, f"no baseline {to!r} of {metric}"
    fraction = float(expression.get("fraction", 0.5))
    bound = base + fraction * (target - base)
    return bound, (f"{fraction:g} of the way from the {name} baseline {format_value(base, metric)} to {what} "
                   f"{format_value(target, metric)}: {format_value(bound, metric)}")


def check_regime(spec: Mapping[str, Any] | None, ours: pd.DataFrame, baselines: pd.DataFrame,
                 published: pd.DataFrame) -> RegimeCheck | None:
    """The artifact's regime (``spec``, None: the artifact states none) on our summary ``ours``."""
    if not spec:
        return None
    metric = spec["metric"]
    above = "at_least" in spec
    expression = spec["at_least" if above else "at_most"]
    rows = select(ours[ours["metric"] == metric], spec.get("of")) if len(ours) and "metric" in ours else ours
    to = expression.get("to")
    towards = None if to is None else "the paper's" if to == "published" or isinstance(to, Mapping) else f"the {to} baseline"
    read = spec.get("seeds", "mean")
    restart = " (best restart)" if read == "best" else ""
    condition = f"{metric}{restart} of {', '.join(f'{k}={v}' for k, v in (spec.get('of') or {}).items()) or 'every model'} " \
                f"{'at least' if above else 'at most'} " + \
                (f"{expression.get('fraction', 0.5):g} of the way from the {expression.get('baseline')} baseline to "
                 f"{towards}" if towards else f"{expression.get('times', 1):g} × the {expression.get('baseline')} baseline")
    made = dict(condition=condition, basis=spec.get("basis", ""), cost=spec.get("cost", ""))
    if rows.empty:
        return RegimeCheck(None, [f"the paper's regime ({condition}) cannot be read: no {metric} of ours"], **made)
    column = "mean" if read == "mean" else "max" if above else "min"
    details, outcomes = [], []
    units = [c for c in label_columns(rows) if rows[c].nunique() > 1]
    for row in rows.to_dict("records"):
        bound, said = bound_of(expression, row, metric, baselines, published)
        name = ", ".join(f"{u}={row[u]}" for u in units) or "ours"
        if bound is None:
            outcomes.append(None)
            details.append(f"{name}: the regime cannot be read ({said})")
            continue
        value = row[column]
        met = value >= bound if above else value <= bound
        outcomes.append(bool(met))
        sign = ("≥" if met else "<") if above else ("≤" if met else ">")
        details.append(f"{name}{restart}: {format_value(value, metric)} {sign} {said}: "
                       f"{'in the regime' if met else 'not in the regime'}")
    met = False if False in outcomes else None if None in outcomes else True
    return RegimeCheck(met, details, **made)
