"""Long-form tables of a report: ours (runs, curves, analyses) and the published numbers.

Every table is long form: label columns (``model``, ``cell``, grid axes such as ``T``), then
``metric`` and ``value``. Labels are compared as text (:func:`label_text`: ``5`` and ``5.0``
are ``"5"``, booleans ``"true"``/``"false"``, a missing label ``""``), so our run table, the
published CSVs and the selectors of a study's claims meet on the same values.

A *summary* has the label columns, ``metric``, ``mean``, ``std`` and ``n``: ours averages the
seeds of each labelled point; a published summary has the paper's value as ``mean`` (and its
``std`` where the paper gives one, ``n`` empty).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .formatting import (BOOKKEEPING_METRICS, CELL_ORDER, METRIC_ORDER, MODEL_ORDER, format_mean_std,
                         format_value, natural_key, ordered)

#: Columns that are never labels.
NOT_LABELS: frozenset[str] = frozenset({"study", "artifact", "scale", "run", "seed", "metric", "value", "mean",
                                        "std", "n", "min", "max", "source", "note", "step", "epoch", "published",
                                        "published_std", "difference"})
SUMMARY_STATS: tuple[str, ...] = ("mean", "std", "n", "min", "max")


def label_text(value: Any) -> str:
    """A label value as text: ``""`` when missing, ``"5"`` for 5 and 5.0, ``"true"`` for True."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:g}"
    text = str(value)
    return {"True": "true", "False": "false", "nan": "", "<NA>": ""}.get(text, text)


def label_columns(frame: pd.DataFrame) -> list[str]:
    """Label columns of ``frame`` that hold at least one value."""
    return [c for c in frame.columns
            if c not in NOT_LABELS and not str(c).startswith("_") and (frame[c] != "").any()]


def with_text_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every label column as text (see :func:`label_text`)."""
    frame = frame.copy()
    for column in frame.columns:
        if column not in NOT_LABELS:
            frame[column] = [label_text(v) for v in frame[column]]
    return frame


def existing(path: str | Path) -> Path:
    """``path``, which must exist: a missing input is an error naming it, never an empty table."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"missing input {path}: the workflow declares it; run the rule that makes it")
    return path


def load_table(path: str | Path, columns: Sequence[str] = ("artifact", "run", "metric", "value")) -> pd.DataFrame:
    """A table written by the aggregation or an analysis (labels as text); a file with no rows
    gives an empty table with ``columns``, a missing file an error."""
    try:
        frame = pd.read_csv(existing(path))
    except pd.errors.EmptyDataError:
        return pd.DataFrame(columns=list(columns))
    return with_text_labels(frame)


def load_published(files: Sequence[str | Path] | str | Path, study: str) -> pd.DataFrame:
    """The published CSVs ``files`` of ``study`` in one table (labels as text); a folder stands
    for its ``<study>_*.csv`` (tests and notebooks opened by hand; the workflow names the files)."""
    columns = ["study", "artifact", "source", "metric", "value", "note"]
    if isinstance(files, (str, Path)):
        files = sorted(Path(files).glob(f"{study}_*.csv"))
    if not files:
        return pd.DataFrame(columns=columns)
    published = pd.concat([pd.read_csv(existing(f)) for f in files], ignore_index=True)
    published = with_text_labels(published)
    published["value"] = pd.to_numeric(published["value"])
    return published[published["study"] == study].reset_index(drop=True)


def rows_of(table: pd.DataFrame, artifact: str, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of ``artifact`` (and of the given metrics, if any), without empty label columns."""
    if table.empty or "artifact" not in table:
        return pd.DataFrame(columns=["artifact", "metric", "value"])
    rows = table[table["artifact"] == artifact]
    if metrics is not None:
        rows = rows[rows["metric"].isin(list(metrics))]
    empty = [c for c in rows.columns if c not in NOT_LABELS and not (rows[c] != "").any()]
    return rows.drop(columns=empty).reset_index(drop=True)


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation (ddof=1, NaN for one seed), count, min and max over seeds per
    labels and metric; ``run``: the run's name when one run makes the point (else empty), whose
    test items the paired bootstrap of a verdict resamples."""
    keys = [*label_columns(rows), "metric"]
    if rows.empty:
        return pd.DataFrame(columns=[*keys, *SUMMARY_STATS, "run"])
    rows = rows.assign(value=pd.to_numeric(rows["value"], errors="coerce"))
    grouped = rows.groupby(keys, sort=False)
    summary = grouped["value"].agg(mean="mean", std="std", n="count", min="min", max="max").reset_index()
    if "run" in rows:
        single = grouped["run"].agg(lambda runs: runs.iloc[0] if len(runs) == 1 else "").reset_index(drop=True)
        summary["run"] = single.to_numpy()
    else:
        summary["run"] = ""
    return sort_rows(summary)


def published_summary(published: pd.DataFrame, artifact: str) -> pd.DataFrame:
    """The published rows of ``artifact`` shaped like :func:`summarise` (``n`` empty), with source."""
    rows = rows_of(published, artifact)
    labels = label_columns(rows)
    out = rows[labels + ["metric"]].copy()
    out["mean"] = rows["value"].astype(float)
    out["std"] = rows["std"].astype(float) if "std" in rows else math.nan
    out["n"] = math.nan
    out["source"] = rows["source"] if "source" in rows else ""
    return sort_rows(out)


def sort_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Models and cells in the papers' order, other labels naturally (2 < 10), then metrics."""
    if frame.empty:
        return frame.reset_index(drop=True)
    keys = []
    frame = frame.copy()
    for column in label_columns(frame) + (["metric"] if "metric" in frame else []):
        order = {"model": MODEL_ORDER, "cell": CELL_ORDER, "metric": METRIC_ORDER}.get(column, ())
        ranks = {v: i for i, v in enumerate(ordered(frame[column], order))}
        frame[f"_{column}"] = frame[column].map(ranks)
        keys.append(f"_{column}")
    return frame.sort_values(keys, kind="stable").drop(columns=keys).reset_index(drop=True)


def shown_metrics(ours: pd.DataFrame, published: pd.DataFrame) -> list[str]:
    """Metrics worth tabulating: those published (ours first), else ours except bookkeeping and curve means."""
    pub = list(dict.fromkeys(published["metric"])) if len(published) else []
    mine = list(dict.fromkeys(ours["metric"])) if len(ours) else []
    if pub:
        return [m for m in mine if m in pub] + [m for m in pub if m not in mine]
    return [m for m in mine if m not in BOOKKEEPING_METRICS and not m.startswith("mean_")]


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


def numeric(values: pd.Series) -> list[Any]:
    """Label text back to numbers where it is a number (for axes and trends)."""
    return [float(v) if natural_key(v)[0] == 0 else v for v in values]


