"""The long-form tables of a study, as the summary and the report read them: ours (runs,
curves, analyses) and the published numbers, and their summaries over seeds.

Every table is long form: label columns (:mod:`rnnrepro.labels`), then ``metric`` and
``value``. A *summary* has the label columns, ``metric``, ``mean``, ``std`` and ``n``: ours
averages the seeds of each labelled point; a published summary has the paper's value as
``mean`` (and its ``std`` where the paper gives one, ``n`` empty).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .labels import NOT_LABELS, label_columns, sort_rows, with_text_labels
from .metrics.formats import BOOKKEEPING_METRICS

SUMMARY_STATS: tuple[str, ...] = ("mean", "std", "n", "min", "max")


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


def shown_metrics(ours: pd.DataFrame, published: pd.DataFrame) -> list[str]:
    """Metrics worth tabulating: those published (ours first), else ours except bookkeeping and curve means."""
    pub = list(dict.fromkeys(published["metric"])) if len(published) else []
    mine = list(dict.fromkeys(ours["metric"])) if len(ours) else []
    if pub:
        return [m for m in mine if m in pub] + [m for m in pub if m not in mine]
    return [m for m in mine if m not in BOOKKEEPING_METRICS and not m.startswith("mean_")]
