"""Tables for display: ours beside the published numbers, and a metric as a grid.

The tables themselves (ours, the published numbers, summaries over seeds) are
:mod:`rnnrepro.tables`; their labels and display order :mod:`rnnrepro.labels`; how a metric's
numbers are written :mod:`rnnrepro.metrics.formats`.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from ..labels import CELL_ORDER, MODEL_ORDER, NOT_LABELS, label_columns, ordered, sort_rows
from ..metrics.formats import format_mean_std, format_value


def join_published(ours: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Outer join of our summary and a published summary on the published labels and metric.

    Adds ``published``, ``published_std``, ``source`` and ``difference`` (ours − published).
    Rows only published (not run) or only ours (nothing published) are kept.
    """
    pub = published.rename(columns={"mean": "published", "std": "published_std"}).drop(columns=["n"])
    ours = ours.drop(columns=[c for c in ("min", "max") if c in ours])
    if ours.empty:  # nothing of ours: every published label stays
        ours = pd.DataFrame(columns=[*label_columns(pub), "metric", "mean", "std", "n"])
    keys = [c for c in label_columns(pub) if c in ours.columns and c != "task"] + ["metric"]
    pub = pub[[*keys, "published", "published_std", "source"]]
    for column in label_columns(pub):
        if column not in keys:
            pub = pub.drop(columns=column)
    joined = ours.merge(pub, on=keys, how="outer") if len(ours) else pub.assign(mean=math.nan, std=math.nan,
                                                                                  n=math.nan)
    for column in joined.columns:
        if column not in NOT_LABELS:
            joined[column] = joined[column].fillna("").astype(str)
    joined["source"] = joined["source"].fillna("")
    joined["difference"] = pd.to_numeric(joined["mean"]) - pd.to_numeric(joined["published"])
    return sort_rows(joined)


def comparison_table(joined: pd.DataFrame, rows: Sequence[str] | None = None) -> pd.DataFrame:
    """Display version of :func:`join_published`: labels that vary, then ours, published, difference."""
    labels = list(rows) if rows else [c for c in label_columns(joined) if joined[c].nunique() > 1]
    out = []
    for rec in joined.to_dict("records"):
        metric = rec["metric"]
        ran = not pd.isna(rec.get("mean"))
        out.append({**{c: rec.get(c, "") for c in labels}, "metric": metric,
                    "ours: mean ± std (n seeds)": format_mean_std(rec["mean"], rec["std"], rec["n"], metric)
                    if ran else "not run",
                    "published": format_mean_std(rec.get("published"), rec.get("published_std"), None, metric),
                    "source": rec.get("source") if isinstance(rec.get("source"), str) else "",
                    "difference (ours − published)": format_value(rec["difference"], metric, signed=True)})
    columns = [*labels, "metric", "ours: mean ± std (n seeds)", "published", "source", "difference (ours − published)"]
    return pd.DataFrame(out, columns=columns)


def wide(summary: pd.DataFrame, index: Sequence[str], columns: str, metric: str) -> pd.DataFrame:
    """A summary of one metric as a grid (e.g. macro models × cells) of ``mean ± std`` strings."""
    rows = summary[summary["metric"] == metric]
    if rows.empty:
        return pd.DataFrame()
    text = rows.assign(_shown=[format_mean_std(m, s, n, metric) for m, s, n in zip(rows["mean"], rows["std"], rows["n"])])
    grid = text.pivot_table(index=list(index), columns=columns, values="_shown", aggfunc="first", sort=False)
    grid = grid[[c for c in ordered(grid.columns, CELL_ORDER if columns == "cell" else MODEL_ORDER)]]
    grid.columns.name = None
    return grid.reset_index()
