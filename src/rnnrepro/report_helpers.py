"""Shared logic of the report notebooks (``reports/*.ipynb``).

The notebooks stay short: they load the long-form tables written by :mod:`rnnrepro.aggregate`
and the published numbers in ``reports/published/<study>_<artifact>.csv``, then call the
functions here to summarise our runs (mean ± std over seeds), put them beside the published
values, draw the plots and judge each paper's claim from our numbers.

Accuracies and attachment scores are stored as fractions and displayed as percentages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

#: Display order of macro models and cells (unknown names go last, alphabetically).
MODEL_ORDER: tuple[str, ...] = ("basic", "brnn", "seq2seq", "seq2seq_attn", "dbrnn", "bi_att", "any")
CELL_ORDER: tuple[str, ...] = ("lstm", "gru", "elstm", "lstm_plus", "pru", "pru_plus", "any")
#: Columns that are not grid labels (everything else beyond these is an extra label such as ``T``).
STANDARD_COLUMNS: frozenset[str] = frozenset(
    {"study", "artifact", "scale", "run", "task", "model", "cell", "seed", "metric", "value", "step", "epoch"}
)
#: Columns added by the summaries; not grid labels either.
DERIVED_COLUMNS: frozenset[str] = frozenset(
    {"mean", "std", "n", "published", "source", "note", "difference", "numbers"}
)
#: Metrics that describe a run rather than a result; not compared with the papers.
BOOKKEEPING_METRICS: frozenset[str] = frozenset({"params", "steps", "seconds", "epochs"})
#: Display order of metrics within an artifact (others follow, alphabetically).
METRIC_ORDER: tuple[str, ...] = (
    "test_accuracy",
    "dev_accuracy",
    "test_uas",
    "test_las",
    "test_perplexity",
    "valid_nll",
    "test_nll",
    "nll_gap",
    "test_mse",
    "dev_mse",
    "baseline_mse",
)
#: Keys on which our summaries are joined with the published values.
JOIN_KEYS: tuple[str, ...] = ("artifact", "model", "cell", "metric")
#: Columns of a summary before the extra labels.
SUMMARY_HEAD: tuple[str, ...] = ("model", "cell")
OURS = "ours"
PUBLISHED = "published"


@dataclass(frozen=True)
class MetricFormat:
    """How to display a metric: multiply by ``factor``, show ``decimals`` digits and ``unit``."""

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
    "nll": MetricFormat(decimals=2, higher_is_better=False),
    "mse": MetricFormat(decimals=4, higher_is_better=False),
    "loss": MetricFormat(decimals=4, higher_is_better=False),
    "bleu": MetricFormat(decimals=2, higher_is_better=True),
}


def metric_format(metric: str) -> MetricFormat:
    """Return the display format of ``metric``, chosen by its last ``_``-separated word."""
    kind = metric.rsplit("_", 1)[-1]
    if metric.endswith("nll_gap"):
        return MetricFormat(decimals=2)
    return METRIC_FORMATS.get(kind, MetricFormat())


def format_value(value: float | None, metric: str, signed: bool = False) -> str:
    """Format one value of ``metric`` for display (``0.873`` accuracy -> ``'87.30 %'``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    fmt = metric_format(metric)
    number = f"{value * fmt.factor:{'+' if signed else ''}.{fmt.decimals}f}"
    return number + (fmt.diff_unit if signed else fmt.unit)


def format_mean_std(mean: float, std: float, n: int, metric: str) -> str:
    """Format a mean ± standard deviation over ``n`` seeds (``'87.30 ± 0.12 % (n=3)'``)."""
    if n is None or (isinstance(n, float) and math.isnan(n)) or n == 0:
        return "—"
    fmt = metric_format(metric)
    text = f"{mean * fmt.factor:.{fmt.decimals}f}"
    if std is not None and not math.isnan(std):
        text += f" ± {std * fmt.factor:.{fmt.decimals}f}"
    return f"{text}{fmt.unit} (n={int(n)})"


def _ordered(values: Iterable[Any], order: Sequence[str]) -> list[Any]:
    """Sort ``values`` by their position in ``order``; unknown values go last, sorted."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(set(values), key=lambda v: (rank.get(v, len(rank)), str(v)))


def model_order(values: Iterable[str]) -> list[str]:
    """The macro models among ``values`` in the papers' order."""
    return _ordered(values, MODEL_ORDER)


def cell_order(values: Iterable[str]) -> list[str]:
    """The cells among ``values`` in the papers' order."""
    return _ordered(values, CELL_ORDER)


def _tidy_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """Make integral float label columns (e.g. ``T`` read back as 100.0) nullable integers."""
    frame = frame.copy()
    for col in ["seed", *extra_label_columns(frame)]:
        if col in frame and pd.api.types.is_float_dtype(frame[col]):
            values = frame[col].dropna()
            if (values == values.round()).all():
                frame[col] = frame[col].astype("Int64")
    return frame


def load_table(path: str | Path, missing_ok: bool = True) -> pd.DataFrame:
    """Read a run table or curve table written by :mod:`rnnrepro.aggregate`.

    A missing file gives an empty table when ``missing_ok`` (so a report opened before any
    run renders with "no runs" sentences), else raises :class:`FileNotFoundError`.
    """
    path = Path(path)
    if not path.exists():
        if missing_ok:
            return pd.DataFrame(
                columns=["study", "artifact", "run", "model", "cell", "seed", "metric", "value"]
            )
        raise FileNotFoundError(path)
    return _tidy_labels(pd.read_csv(path))


def load_published(published_dir: str | Path, study: str) -> pd.DataFrame:
    """Read every ``<study>_*.csv`` in ``published_dir`` into one table (empty if none)."""
    files = sorted(Path(published_dir).glob(f"{study}_*.csv"))
    columns = ["study", "artifact", "source", "task", "model", "cell", "metric", "value", "note"]
    if not files:
        return pd.DataFrame(columns=columns)
    published = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    return published[published["study"] == study].reset_index(drop=True)


def extra_label_columns(frame: pd.DataFrame) -> list[str]:
    """Extra grid labels (e.g. ``T``) that have at least one value in ``frame``."""
    return [
        c
        for c in frame.columns
        if c not in STANDARD_COLUMNS
        and c not in DERIVED_COLUMNS
        and not c.startswith("_")
        and frame[c].notna().any()
    ]


def artifact_rows(table: pd.DataFrame, artifact: str, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of ``table`` for ``artifact`` (and the given metrics, if any)."""
    rows = table[table["artifact"] == artifact]
    if metrics is not None:
        rows = rows[rows["metric"].isin(list(metrics))]
    return rows.reset_index(drop=True)


def has_runs(table: pd.DataFrame, artifact: str) -> bool:
    """Whether ``table`` holds any row of ``artifact``."""
    return bool((table["artifact"] == artifact).any()) if len(table) else False


def scales_of(table: pd.DataFrame, artifact: str | None = None) -> list[str]:
    """The scales the rows of ``table`` (of ``artifact``) ran at."""
    rows = table if artifact is None else artifact_rows(table, artifact)
    if "scale" not in rows:
        return []
    return sorted(str(s) for s in rows["scale"].dropna().unique())


def report_metrics(table: pd.DataFrame, published: pd.DataFrame, artifact: str) -> list[str]:
    """Metrics of ``artifact`` worth tabulating: those published for it, else all non-bookkeeping ones."""
    pub = published.loc[published["artifact"] == artifact, "metric"].unique().tolist()
    ours = artifact_rows(table, artifact)["metric"].unique().tolist()
    shown = [m for m in ours if m in pub] + [m for m in pub if m not in ours]
    if not [m for m in shown if m in ours]:
        shown = [m for m in ours if m not in BOOKKEEPING_METRICS] + [m for m in pub if m not in ours]
    return shown


def summarise(table: pd.DataFrame, artifact: str, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean, standard deviation (ddof=1) and count over seeds per model, cell, extra labels, metric.

    Returns columns ``model, cell, <extra labels>, metric, mean, std, n``; ``std`` is NaN for a
    single seed.
    """
    rows = artifact_rows(table, artifact, metrics)
    keys = [*SUMMARY_HEAD, *extra_label_columns(rows), "metric"]
    if rows.empty:
        return pd.DataFrame(columns=[*keys, "mean", "std", "n"])
    grouped = rows.groupby(keys, dropna=False, sort=False)["value"]
    summary = grouped.agg(mean="mean", std="std", n="count").reset_index()
    return sort_rows(summary)


def sort_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Sort by model and cell in the papers' order, then by extra labels and metric."""
    if frame.empty:
        return frame.reset_index(drop=True)
    frame = frame.copy()
    frame["_m"] = frame["model"].map({m: i for i, m in enumerate(model_order(frame["model"]))})
    frame["_c"] = frame["cell"].map({c: i for i, c in enumerate(cell_order(frame["cell"]))})
    keys = ["_m", "_c", *extra_label_columns(frame)]
    if "metric" in frame:
        frame["_k"] = frame["metric"].map(
            {k: i for i, k in enumerate(_ordered(frame["metric"], METRIC_ORDER))}
        )
        keys.append("_k")
    return (
        frame.sort_values(keys, kind="stable")
        .drop(columns=["_m", "_c", "_k"], errors="ignore")
        .reset_index(drop=True)
    )


def published_for(published: pd.DataFrame, artifact: str) -> pd.DataFrame:
    """Published rows of ``artifact``."""
    return published[published["artifact"] == artifact].reset_index(drop=True)


def published_value(
    published: pd.DataFrame, artifact: str, metric: str, model: str = "any", cell: str = "any"
) -> float | None:
    """One published number (e.g. the adding-task baseline), or ``None`` if not transcribed."""
    rows = published[
        (published["artifact"] == artifact)
        & (published["metric"] == metric)
        & (published["model"] == model)
        & (published["cell"] == cell)
    ]
    return float(rows["value"].iloc[0]) if len(rows) else None


def sources(published: pd.DataFrame, artifact: str) -> list[str]:
    """The sources (``'Su & Kuo, Table 7'``) of the published values of ``artifact``."""
    return sorted(published_for(published, artifact)["source"].dropna().unique().tolist())


def published_as_summary(published: pd.DataFrame, artifact: str) -> pd.DataFrame:
    """Published values shaped like :func:`summarise` output (``std`` NaN, ``n`` 1) for verdicts."""
    pub = published_for(published, artifact)
    out = pub[["model", "cell", "metric"]].copy()
    out["mean"] = pub["value"].astype(float)
    out["std"] = math.nan
    out["n"] = 1
    return sort_rows(out)


def join_published(
    summary: pd.DataFrame, published: pd.DataFrame, artifact: str, metrics: Sequence[str] | None = None
) -> pd.DataFrame:
    """Outer-join our summary with the published values of ``artifact`` on model, cell, metric.

    Adds ``published``, ``source``, ``note`` and ``difference`` (ours − published). Rows only
    published (not run) or only ours (nothing published) are kept, with NaN on the other side.
    ``metrics`` restricts both sides to those metrics.
    """
    pub = published_for(published, artifact)
    if metrics is not None:
        pub = pub[pub["metric"].isin(list(metrics))]
        summary = summary[summary["metric"].isin(list(metrics))]
    pub = pub[[k for k in JOIN_KEYS if k != "artifact"] + ["value", "source", "note"]]
    pub = pub.rename(columns={"value": PUBLISHED})
    if summary.empty:
        summary = pd.DataFrame(columns=[*SUMMARY_HEAD, "metric", "mean", "std", "n"])
    on = ["model", "cell", "metric"]
    joined = summary.merge(pub, on=on, how="outer")
    joined["mean"] = pd.to_numeric(joined["mean"], errors="coerce")
    joined[PUBLISHED] = pd.to_numeric(joined[PUBLISHED], errors="coerce")
    joined["difference"] = joined["mean"] - joined[PUBLISHED]
    return sort_rows(joined)


def comparison_table(joined: pd.DataFrame) -> pd.DataFrame:
    """Display version of :func:`join_published`: formatted strings, labelled ours / published."""
    extras = extra_label_columns(joined)
    rows = []
    for rec in joined.to_dict("records"):
        metric = rec["metric"]
        n = rec.get("n")
        ran = n is not None and not pd.isna(n) and n > 0
        row = {"model": rec["model"], "cell": rec["cell"]}
        row.update({c: ("" if pd.isna(rec[c]) else rec[c]) for c in extras})
        row["metric"] = metric
        row["ours: mean ± std (n seeds)"] = (
            format_mean_std(rec["mean"], rec["std"], int(n), metric) if ran else "not run"
        )
        row["published"] = format_value(rec[PUBLISHED], metric)
        row["source"] = "" if pd.isna(rec.get("source")) else rec["source"]
        row["difference (ours − published)"] = format_value(rec["difference"], metric, signed=True)
        rows.append(row)
    columns = [
        "model",
        "cell",
        *extras,
        "metric",
        "ours: mean ± std (n seeds)",
        "published",
        "source",
        "difference (ours − published)",
    ]
    return pd.DataFrame(rows, columns=columns)


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Display version of :func:`summarise` output (ours only): one formatted column per metric."""
    if summary.empty:
        return pd.DataFrame()
    keys = [c for c in summary.columns if c not in ("metric", "mean", "std", "n")]
    out = summary.copy()
    out["value"] = [
        format_mean_std(m, s, n, met)
        for m, s, n, met in zip(out["mean"], out["std"], out["n"], out["metric"])
    ]
    wide = out.pivot_table(
        index=keys, columns="metric", values="value", aggfunc="first", sort=False
    ).reset_index()
    wide.columns.name = None
    return wide.rename(columns={m: f"{m} (ours: mean ± std)" for m in summary["metric"].unique()})


# --------------------------------------------------------------------------- verdicts


@dataclass
class Verdict:
    """Outcome of checking a claim on one set of numbers (ours or published).

    ``holds`` is ``None`` when the numbers needed are missing.
    """

    claim: str
    holds: bool | None
    details: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``'holds'``, ``'does not hold'`` or ``'cannot be judged'``."""
        return {True: "holds", False: "does not hold", None: "cannot be judged"}[self.holds]

    def text(self, who: str, scale: str | None = None) -> str:
        """One-line Markdown verdict.

        For example ``**Verdict, ours (scale mini):** the claim “…” **holds** at this scale — …``.
        """
        label = f"{who}{f' (scale {scale})' if scale else ''}"
        suffix = " at this scale" if scale and self.holds is not None else ""
        line = f"**Verdict, {label}:** the claim “{self.claim}” **{self.status}**{suffix}"
        if self.details:
            line += " — " + "; ".join(self.details)
        return line + "."


def _better(a: float, b: float, higher_is_better: bool, strict: bool) -> bool:
    """Whether ``a`` beats ``b`` (strictly unless ``strict`` is False)."""
    if higher_is_better:
        return a > b if strict else a >= b
    return a < b if strict else a <= b


def _direction(metric: str, higher_is_better: bool | None) -> bool:
    """Resolve whether higher values of ``metric`` are better."""
    if higher_is_better is None:
        higher_is_better = metric_format(metric).higher_is_better
    if higher_is_better is None:
        raise ValueError(f"say whether higher {metric} is better")
    return higher_is_better


def _unit_name(keys: Mapping[str, Any]) -> str:
    """Name a comparison unit, e.g. ``'lstm'`` or ``'lstm, T=100'``."""
    parts = [str(v) if k in ("model", "cell") else f"{k}={v}" for k, v in keys.items()]
    return ", ".join(parts) if parts else "all"


def _naming_columns(rows: pd.DataFrame, units: Sequence[str]) -> list[str]:
    """The unit columns worth naming in verdict details: those that vary (at least one)."""
    varying = [u for u in units if rows[u].nunique(dropna=False) > 1]
    return varying or list(units[-1:])


def _select(frame: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    """Rows of ``frame`` whose columns equal the values in ``where``."""
    mask = pd.Series(True, index=frame.index)
    for col, value in where.items():
        mask &= frame[col] == value
    return frame[mask]


def verdict_compare(
    summary: pd.DataFrame,
    claim: str,
    metric: str,
    winner: Mapping[str, str],
    loser: Mapping[str, str],
    higher_is_better: bool | None = None,
    strict: bool = True,
) -> Verdict:
    """Check that ``winner`` beats ``loser`` on ``metric`` in every comparison unit.

    ``winner`` and ``loser`` select rows on one dimension (e.g. ``{"model": "brnn"}`` vs
    ``{"model": "basic"}``); the units are the values of the other labels (cells, ``T``...)
    where both were run. The claim cannot be judged when no unit has both.
    """
    higher = _direction(metric, higher_is_better)
    rows = summary[summary["metric"] == metric]
    dims = list(winner)
    units = [c for c in [*SUMMARY_HEAD, *extra_label_columns(rows)] if c not in dims]
    win, lose = _select(rows, winner), _select(rows, loser)
    pairs = (
        win.merge(lose, on=units, suffixes=("_w", "_l"))
        if units
        else win.merge(lose, how="cross", suffixes=("_w", "_l"))
    )
    if pairs.empty:
        return Verdict(claim, None, [f"no {_unit_name(winner)} and {_unit_name(loser)} pair with {metric}"])
    details, ok = [], True
    op = (">" if higher else "<") if strict else ("≥" if higher else "≤")
    named = _naming_columns(pairs, units) if units else []
    for rec in pairs.to_dict("records"):
        good = _better(rec["mean_w"], rec["mean_l"], higher, strict)
        ok &= good
        unit = _unit_name({u: rec[u] for u in named})
        sign = op if good else f"not {op}"
        details.append(
            f"{unit}: {_unit_name(winner)} {format_value(rec['mean_w'], metric)} {sign} "
            f"{_unit_name(loser)} {format_value(rec['mean_l'], metric)}"
        )
    return Verdict(claim, bool(ok), details)


def verdict_best(
    summary: pd.DataFrame,
    claim: str,
    metric: str,
    best: Mapping[str, str],
    higher_is_better: bool | None = None,
) -> Verdict:
    """Check that ``best`` (e.g. ``{"model": "dbrnn"}``) is the best on ``metric`` in every unit."""
    higher = _direction(metric, higher_is_better)
    rows = summary[summary["metric"] == metric]
    dim = next(iter(best))
    units = [c for c in [*SUMMARY_HEAD, *extra_label_columns(rows)] if c != dim]
    details, ok, judged = [], True, False
    named = _naming_columns(rows, units) if units else []
    for key, group in rows.groupby(units, sort=False) if units else [((), rows)]:
        key = key if isinstance(key, tuple) else (key,)
        if not (group[dim] == best[dim]).any() or len(group) < 2:
            continue
        judged = True
        top = group.loc[group["mean"].idxmax() if higher else group["mean"].idxmin()]
        good = top[dim] == best[dim]
        ok &= good
        details.append(
            f"{_unit_name({u: k for u, k in zip(units, key) if u in named})}: "
            f"best {dim} {top[dim]} ({format_value(top['mean'], metric)})"
        )
    if not judged:
        return Verdict(claim, None, [f"{_unit_name(best)} was not run beside another {dim}"])
    return Verdict(claim, bool(ok), details)


def verdict_threshold(
    summary: pd.DataFrame, claim: str, metric: str, threshold: float | None, below: bool = True
) -> Verdict:
    """Check that the mean ``metric`` of every group is below (or above) ``threshold``."""
    rows = summary[summary["metric"] == metric]
    if threshold is None:
        return Verdict(claim, None, ["no threshold value"])
    if rows.empty:
        return Verdict(claim, None, [f"no {metric} values"])
    units = _naming_columns(rows, [*SUMMARY_HEAD, *extra_label_columns(rows)])
    details, ok = [], True
    for rec in rows.to_dict("records"):
        good = rec["mean"] < threshold if below else rec["mean"] > threshold
        ok &= good
        rel = ("<" if below else ">") if good else ("≥" if below else "≤")
        details.append(
            f"{_unit_name({u: rec[u] for u in units})}: "
            f"{format_value(rec['mean'], metric)} {rel} {format_value(threshold, metric)}"
        )
    return Verdict(claim, bool(ok), details)


#: The claim each artifact supports, checked by a function of (summary, published rows).
ClaimCheck = Callable[[pd.DataFrame, pd.DataFrame], Verdict]
CLAIM_CHECKS: dict[tuple[str, str], ClaimCheck] = {
    ("elstm", "table5"): lambda s, p: verdict_best(
        s,
        "the DBRNN has the lowest test perplexity of the macro models for every cell",
        "test_perplexity",
        {"model": "dbrnn"},
    ),
    ("elstm", "table6"): lambda s, p: verdict_compare(
        s,
        "ELSTM ≥ LSTM on DP (UAS) in every macro model",
        "test_uas",
        {"cell": "elstm"},
        {"cell": "lstm"},
        strict=False,
    ),
    ("elstm", "table7"): lambda s, p: verdict_compare(
        s,
        "the BRNN beats the basic RNN for every cell",
        "test_accuracy",
        {"model": "brnn"},
        {"model": "basic"},
    ),
    ("pru", "table1"): lambda s, p: verdict_compare(
        s, "PRU has a lower test NLL than LSTM", "test_nll", {"cell": "pru"}, {"cell": "lstm"}
    ),
    ("pru", "fig2"): lambda s, p: verdict_threshold(
        s, "every cell goes below the 0.167 baseline", "test_mse", published_value(p, "fig2", "baseline_mse")
    ),
}


def check_claim(study: str, artifact: str, summary: pd.DataFrame, published: pd.DataFrame) -> Verdict | None:
    """Judge the claim of ``study.artifact`` on ``summary``; ``None`` if no check is defined."""
    check = CLAIM_CHECKS.get((study, artifact))
    return None if check is None else check(summary, published_for(published, artifact))


def verdict_lines(
    study: str, artifact: str, table: pd.DataFrame, published: pd.DataFrame, scale: str | None
) -> list[str]:
    """Markdown verdict lines for an artifact: from our numbers and from the published ones."""
    summary = summarise(table, artifact)
    ours = check_claim(study, artifact, summary, published)
    if ours is None:
        return []
    lines = [ours.text(OURS, scale)]
    pub_summary = published_as_summary(published, artifact)
    theirs = check_claim(study, artifact, pub_summary, published)
    if theirs is not None and theirs.holds is not None:
        who = f"{PUBLISHED} ({', '.join(sources(published, artifact))})"
        lines.append(theirs.text(who))
    return lines


# --------------------------------------------------------------------------- text


def claim_sentence(claim: str) -> str:
    """The line stating the paper's claim an artifact is checked against."""
    claim = claim.strip().rstrip(".")
    return f"Claim checked: *{claim}*." if claim else ""


def no_runs_sentence(artifact: str, spec: Mapping[str, str] | None, table_path: str, scale: str) -> str:
    """The sentence shown for an artifact without runs in the table."""
    title = (spec or {}).get("title", artifact)
    return (
        f"No runs of **{artifact}** ({title}) were found in `{table_path}` at scale `{scale}`: "
        "nothing to show for it yet."
    )


def run_facts(table: pd.DataFrame, artifact: str) -> str:
    """One sentence on how many runs and seeds an artifact has and at which scale(s) they ran."""
    rows = artifact_rows(table, artifact)
    runs = rows["run"].nunique()
    seeds = sorted(rows["seed"].dropna().unique().tolist())
    scales = ", ".join(f"`{s}`" for s in scales_of(table, artifact)) or "unknown"
    seed_word = "seed" if len(seeds) == 1 else "seeds"
    run_word = "run" if runs == 1 else "runs"
    seed_list = ", ".join(str(s) for s in seeds)
    return f"Ours: {runs} {run_word} ({len(seeds)} {seed_word}: {seed_list}) at scale {scales}."


def html_table(frame: pd.DataFrame) -> str:
    """Plain HTML for a display table (no index)."""
    return frame.to_html(index=False, border=0, na_rep="—", escape=True)


def overview_sentence(table: pd.DataFrame, scale: str, table_path: str, scale_note: str = "") -> str:
    """Opening paragraph: how many runs the report uses, at which scale, and what that scale changes."""
    runs = table["run"].nunique() if len(table) else 0
    text = f"Rendered for scale `{scale}` from `{table_path}` ({runs} runs of ours)."
    if scale_note:
        text += f" What this scale changes: {scale_note}"
    found = scales_of(table)
    if found and found != [scale]:
        text += f" Note: the runs in that table ran at scale {', '.join(f'`{s}`' for s in found)}."
    return text


def with_nll_gap(table: pd.DataFrame) -> pd.DataFrame:
    """Add the metric ``nll_gap`` = ``valid_nll`` − ``test_nll`` (PRU Table 1) to runs lacking it."""
    if table.empty or not {"valid_nll", "test_nll"} <= set(table["metric"]):
        return table
    keys = [c for c in table.columns if c not in ("metric", "value")]
    wide = table[table["metric"].isin(["valid_nll", "test_nll", "nll_gap"])]
    wide = wide.pivot_table(
        index=keys, columns="metric", values="value", aggfunc="first", dropna=False
    ).reset_index()
    if "nll_gap" in wide:
        wide = wide[wide["nll_gap"].isna()]
    wide = wide.dropna(subset=["valid_nll", "test_nll"])
    if wide.empty:
        return table
    gap = wide[keys].copy()
    gap["metric"] = "nll_gap"
    gap["value"] = wide["valid_nll"] - wide["test_nll"]
    return pd.concat([table, gap], ignore_index=True)


def section_parts(
    study: str,
    artifact: str,
    spec: Mapping[str, str] | None,
    table: pd.DataFrame,
    published: pd.DataFrame,
    scale: str,
    table_path: str,
    metrics: Sequence[str] | None = None,
    verdict: bool = True,
) -> list[tuple[str, str]]:
    """The parts of an artifact's report section as ``("markdown"|"html", text)`` pairs.

    Header and claim; then, if the artifact has runs, how many, the comparison table (ours
    beside published) and the verdicts; otherwise the no-runs sentence and the published values.
    """
    spec = spec or {}
    parts = [("markdown", f"## {artifact}: {spec.get('title', artifact)}")]
    if spec.get("claim"):
        parts.append(("markdown", claim_sentence(spec["claim"])))
    ran = has_runs(table, artifact)
    if ran:
        parts.append(("markdown", run_facts(table, artifact)))
        metrics = list(metrics) if metrics is not None else report_metrics(table, published, artifact)
    else:
        parts.append(("markdown", no_runs_sentence(artifact, spec, table_path, scale)))
        metrics = list(metrics) if metrics is not None else None
    joined = join_published(summarise(table, artifact, metrics), published, artifact, metrics)
    if not joined.empty:
        src = ", ".join(sources(published, artifact)) or "none transcribed"
        if ran:
            parts.append(
                ("markdown", f"Ours (mean ± std over seeds) beside the published values (source: {src}):")
            )
        else:
            parts.append(("markdown", f"Published values (source: {src}); ours: not run yet."))
        parts.append(("html", html_table(comparison_table(joined))))
    elif ran:
        parts.append(("markdown", "No metric of ours or published value to tabulate for this artifact."))
    if ran and verdict:
        parts.extend(("markdown", line) for line in verdict_lines(study, artifact, table, published, scale))
    return parts


def show(parts: Iterable[tuple[str, str]]) -> None:
    """Display :func:`section_parts` output in a notebook."""
    from IPython.display import HTML, Markdown, display

    for kind, text in parts:
        if not text:
            continue
        display(Markdown(text) if kind == "markdown" else HTML(text))


# --------------------------------------------------------------------------- plots


def plot_metric_bars(table: pd.DataFrame, published: pd.DataFrame, artifact: str, metric: str):
    """Bar plot of ``metric`` by model (x) and cell (hue): ours (mean, sd over seeds) beside published.

    Returns the seaborn ``FacetGrid``.
    """
    import seaborn as sns

    fmt = metric_format(metric)
    ours = artifact_rows(table, artifact, [metric])[["model", "cell", "value"]].copy()
    ours["numbers"] = f"{OURS} (mean, bars: sd over seeds)"
    pub = published_for(published, artifact)
    pub = pub[pub["metric"] == metric][["model", "cell", "value"]].copy()
    src = ", ".join(sources(published, artifact))
    pub["numbers"] = f"{PUBLISHED} ({src})"
    data = pd.concat([ours, pub], ignore_index=True)
    data["value"] = data["value"].astype(float) * fmt.factor
    grid = sns.catplot(
        data=data,
        kind="bar",
        x="model",
        y="value",
        hue="cell",
        col="numbers",
        order=model_order(data["model"]),
        hue_order=cell_order(data["cell"]),
        col_order=[c for c in data["numbers"].unique()],
        errorbar="sd",
        height=3.6,
        aspect=1.3,
    )
    grid.set_axis_labels("macro model", f"{metric} ({fmt.unit.strip()})" if fmt.unit else metric)
    grid.set_titles("{col_name}")
    return grid


def plot_curves(
    curves: pd.DataFrame,
    artifact: str,
    metric: str,
    x: str = "step",
    col: str | None = "model",
    baseline: float | None = None,
    baseline_label: str = "",
):
    """Line plot of a training curve of ours (mean over seeds, sd band), hue = cell, one panel per ``col``.

    ``baseline`` draws a dashed horizontal line labelled ``baseline_label`` in every panel.
    Returns the seaborn ``FacetGrid`` (or ``None`` if there is no such curve).
    """
    import seaborn as sns

    data = curves[(curves["artifact"] == artifact) & (curves["metric"] == metric)].dropna(subset=[x, "value"])
    if data.empty:
        return None
    if col is not None and (col not in data or data[col].isna().all()):
        col = None
    col_order = None
    if col == "model":
        col_order = model_order(data["model"])
    elif col is not None:
        col_order = sorted(data[col].dropna().unique())
    grid = sns.relplot(
        data=data,
        kind="line",
        x=x,
        y="value",
        hue="cell",
        col=col,
        col_order=col_order,
        hue_order=cell_order(data["cell"]),
        errorbar="sd",
        height=3.2,
        aspect=1.2,
        col_wrap=min(3, len(col_order)) if col_order else None,
    )
    grid.set_axis_labels(x, f"{metric} ({OURS})")
    if col is not None:
        grid.set_titles(f"{col} = {{col_name}}")
    if baseline is not None:
        for ax in grid.axes.flat:
            ax.axhline(baseline, color="black", linestyle="--", linewidth=1)
            ax.annotate(
                baseline_label,
                xy=(1, baseline),
                xycoords=("axes fraction", "data"),
                xytext=(-4, 4),
                textcoords="offset points",
                ha="right",
                va="bottom",
                fontsize=8,
            )
    return grid
