"""Which rows of a summary a check reads: selectors (``{cell: elstm}``, ``{T: ">=50"}``,
``{delay: max}``), the units a check compares within, and how a selection or a unit is named
in a verdict's details."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..labels import label_columns, label_text, natural_key

COMPARISONS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
               "<": lambda a, b: a < b}


def options(value: Any) -> list[str]:
    return [label_text(v) for v in (value if isinstance(value, list) else [value])]


def as_number(text: str) -> float | None:
    key = natural_key(text)
    return key[1] if key[0] == 0 else None


def matches(column: pd.Series, value: Any) -> pd.Series:
    """Which values of a label column a selector value picks: a value, a list of values,
    a comparison such as ``">0"`` or ``"<=5"``, or ``"min"`` / ``"max"`` of the column."""
    if isinstance(value, str) and value in ("min", "max"):
        numbers = [n for n in map(as_number, column) if n is not None]
        if not numbers:
            return pd.Series(False, index=column.index)
        target = min(numbers) if value == "min" else max(numbers)
        return column.map(lambda v: as_number(v) == target)
    if isinstance(value, str):
        for op in (">=", "<=", ">", "<"):
            if value.startswith(op) and as_number(value[len(op):].strip()) is not None:
                bound = as_number(value[len(op):].strip())
                return column.map(lambda v: (n := as_number(v)) is not None and COMPARISONS[op](n, bound))
    return column.isin(options(value))


def select(frame: pd.DataFrame, selector: Mapping[str, Any] | None) -> pd.DataFrame:
    """Rows whose labels match every key of the selector (see :func:`matches`); ``min`` and
    ``max`` are taken among the rows the other keys pick."""
    selector = dict(selector or {})
    extremes = {k: v for k, v in selector.items() if v in ("min", "max")}
    for key, value in [*((k, v) for k, v in selector.items() if k not in extremes), *extremes.items()]:
        if key not in frame:
            return frame.iloc[0:0]
        frame = frame.loc[matches(frame[key], value).astype(bool)]
    return frame


def name_of(selector: Mapping[str, Any]) -> str:
    return ", ".join(f"{'/'.join(options(v))}" if k in ("model", "cell", "grid") else f"{k}={'/'.join(options(v))}"
                     for k, v in selector.items())


def unit_name(record: Mapping[str, Any], units: Sequence[str]) -> str:
    return ", ".join(str(record[u]) if u in ("model", "cell", "grid") else f"{u}={record[u]}" for u in units) or "all"


def varying(frames: Sequence[pd.DataFrame], exclude: set[str]) -> list[str]:
    """Label columns (not in ``exclude``, never ``grid``) that take more than one value within any
    of ``frames``: the default units of a check (``per`` names them explicitly)."""
    columns: list[str] = []
    for frame in frames:
        for column in label_columns(frame):
            if column not in exclude | {"grid"} and column not in columns and frame[column].nunique() > 1:
                columns.append(column)
    return columns


def pair_side(rec: Mapping[str, Any], side: str) -> dict[str, Any]:
    """One side (``"w"`` or ``"l"``) of a pair of :meth:`~rnnrepro.claims.kinds.compare.Compare.pairs`
    as a summary row, with the labels that name that side (the unit's and its own ``me_``/``vs_``
    ones), so that two rows are the same arm only when they are."""
    own = "me_" if side == "w" else "vs_"
    sides = ("mean_", "std_", "n_", "run_", "me_", "vs_")
    labels = {k: v for k, v in rec.items() if not k.startswith(sides) and k != "adv" or k.startswith(own)}
    return {**labels, "mean": rec[f"mean_{side}"], "std": rec[f"std_{side}"], "n": rec[f"n_{side}"],
            "run": rec.get(f"run_{side}", "")}


def constant_labels(rows: pd.DataFrame) -> dict[str, str]:
    """The labels that take one value in ``rows`` (e.g. the one treebank run): part of what a
    comparison is about, though not a unit it varies over."""
    return {c: str(rows[c].iloc[0]) for c in label_columns(rows) if rows[c].nunique() == 1} if len(rows) else {}


def unit_key(metric: str, labels: Mapping[str, Any]) -> tuple:
    """What a comparison is about, as (label, value) pairs: its metric, units, sides and the
    labels constant where it was made. Two keys name the same comparison when the labels they
    share agree (:func:`same_unit`): our grid may fix a label the paper's table varies, or the
    reverse."""
    return (("metric", metric), *sorted((str(k), str(v)) for k, v in labels.items()))


def same_unit(one: Any, other: Any) -> bool:
    """Whether two keys name the same comparison: equal, or both of (label, value) pairs whose
    shared labels agree (and that share at least the metric)."""
    if one == other:
        return True
    pairs = all(isinstance(k, tuple) and len(k) == 2 for k in (*one, *other)) if one and other else False
    if not pairs:
        return False
    a, b = dict(one), dict(other)
    shared = set(a) & set(b)
    return "metric" in shared and all(a[k] == b[k] for k in shared)
