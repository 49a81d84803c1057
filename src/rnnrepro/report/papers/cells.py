"""The cells study's table and figure (``reports/cells.ipynb``): every cell ranked per task.

The study has one artifact per task (``adding``, ``reversal``, ``pos``, ``lm``: every artifact
that trains runs of its own) and ``ranking``, whose section body is :func:`ranking`: the cells
ranked on each task's test metric (the first metric its ``show`` names), as one table
(:func:`ranking_table`: rows cells, columns tasks, mean ± std over seeds, the rank with the
ranks the noise allows (:func:`rank_intervals`), the published number beside where a paper
prints one) and one figure (:func:`ranking_figure`: one
panel per task, the cells in the order of their rank, every seed a point, the published numbers
and the task's reference line marked apart). A task artifact added to the study's YAML joins
both without a change here.

Everything is read through the report (``ours``, ``published``, ``rows``, ``study.artifacts``,
``scale``). Published numbers are never averaged or ranked with ours: they come from the
papers' own sizes, and sometimes from another macro model, which the table names.

Cells that are one function (the SRN and LSTM−GATES, wsum eq. 2: the same function from the same
starting weights, so the same numbers in every seed) are one row and one rank
(:func:`same_functions`): counting them twice would push every cell below them down a rank.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats

from ...bounds import reversal_bound as analytic_bound
from ...labels import CELL_ORDER, ordered
from ...metrics.directions import higher_is_better
from ...metrics.formats import format_mean_std, format_value, metric_format
from ..study import StudyReport, display_markdown, display_table

#: Two cells differ on a task when Welch's t over their seeds rejects equal means, two-sided at this
#: level divided by the number of other cells (Bonferroni over one cell's comparisons).
RANK_ALPHA = 0.05
#: Two runs give "the same numbers" within this relative difference.
SAME_RTOL = 1e-9

#: How each task is named in the table and the figure (other artifacts: their own name).
TASK_NAMES = {"adding": "adding", "reversal": "reversal", "pos": "POS", "lm": "PTB LM"}


def task_name(artifact: str) -> str:
    return TASK_NAMES.get(artifact, artifact)


def task_artifacts(report: StudyReport) -> list[str]:
    """The study's tasks: every artifact with runs of its own (not ``runs_of`` another's), in YAML order."""
    return [name for name, artifact in report.study.artifacts.items()
            if artifact.runs and "runs_of" not in artifact.spec and artifact.analysis is None]


def task_metric(report: StudyReport, artifact: str, ours: pd.DataFrame) -> str | None:
    """The metric a task is ranked on: the first of its ``show.metrics`` that our runs have, else
    their first test metric."""
    have = list(dict.fromkeys(ours["metric"])) if len(ours) else []
    shown = (report.study.artifacts[artifact].spec.get("show") or {}).get("metrics") or []
    return next((m for m in shown if m in have), next((m for m in have if m.startswith("test_")), None))


def metric_name(metric: str) -> str:
    """``test_mse`` -> ``test MSE``, ``test_accuracy`` -> ``test accuracy (%)``."""
    words = metric.split("_")
    kind = words[-1]
    words[-1] = kind.upper() if kind in ("mse", "nll", "bleu", "uas", "las") else kind
    unit = metric_format(metric).unit.strip()
    return " ".join(words) + (f" ({unit})" if unit else "")


@dataclass
class Task:
    """One task's numbers: ours per cell (summary and per seed) and the published ones."""

    artifact: str
    metric: str
    higher_is_better: bool
    summary: pd.DataFrame  # per cell: mean, std, n, rank
    seeds: pd.DataFrame  # per run: cell, seed, value
    published: pd.DataFrame  # per cell: model, mean, std, source (the same metric)
    references: list[tuple[str, float, str]] = field(default_factory=list)  # (what, value, source)
    models: tuple[str, ...] = ()  # our macro models

    @property
    def order(self) -> list[str]:
        """The cells, best first (ties in the papers' order of cells)."""
        rank = dict(zip(self.summary["cell"], self.summary["rank"]))
        return sorted(rank, key=lambda c: (rank[c], CELL_ORDER.index(c) if c in CELL_ORDER else len(CELL_ORDER), c))


def references(report: StudyReport, artifact: str, metric: str,
               published: pd.DataFrame) -> list[tuple[str, float, str]]:
    """Reference lines of a task: published numbers of no cell in the metric's unit (pru's
    baseline MSE for adding), and for reversal the expected bound of a causal network."""
    found = []
    kind = metric.rsplit("_", 1)[-1]
    if len(published):
        no_cell = published[published["cell"] == ""] if "cell" in published else published
        for rec in no_cell.to_dict("records"):
            if rec["metric"].rsplit("_", 1)[-1] == kind:
                found.append((rec["metric"].replace("_", " ") + " (published)", float(rec["mean"]), rec["source"]))
    task = report.study.artifacts[artifact].spec.get("task") or {}
    if task.get("name") == "reversal" and kind == "accuracy":
        V = int(task.get("V", 4))
        bound = analytic_bound(0, int(task.get("T", 20)), V)
        found.append((f"expected bound of a causal network, ½(1 + 1/V) = {bound:.3f}", bound,
                      "drnn Sec. 4.1's formula at d = 0"))
        found.append((f"chance 1/V = {1 / V:.3f}", 1 / V, "guessing"))
    return found


def task_numbers(report: StudyReport, artifact: str) -> Task | None:
    """Ours (per cell and per seed) and the published numbers of one task; None before any run."""
    ours = report.ours(artifact)
    metric = task_metric(report, artifact, ours)
    if metric is None or "cell" not in ours:
        return None
    hib = higher_is_better(metric)
    mine = ours[ours["metric"] == metric]
    summary = mine.groupby("cell", sort=False).agg(mean=("mean", "mean"), std=("std", "mean"),
                                                   n=("n", "sum")).reset_index()
    summary["rank"] = summary["mean"].rank(ascending=not hib, method="min")
    rows = report.rows(artifact, [metric])
    seeds = rows.assign(value=pd.to_numeric(rows["value"], errors="coerce"))[["cell", "seed", "value"]] \
        if len(rows) and "cell" in rows else pd.DataFrame(columns=["cell", "seed", "value"])
    published = report.published(artifact)
    cell_rows = published[(published["metric"] == metric) & (published["cell"] != "")] \
        if len(published) and "cell" in published else pd.DataFrame(columns=["cell", "mean", "std", "source"])
    models = tuple(sorted(set(mine["model"]))) if "model" in mine else ()
    return Task(artifact, metric, hib, summary, seeds, cell_rows, references(report, artifact, metric, published),
                models)


def without_unit(text: str, metric: str) -> str:
    """``text`` without the metric's unit (the table's header gives it)."""
    unit = metric_format(metric).unit
    return text.replace(unit, "") if unit else text


def published_text(task: Task, cell: str) -> str:
    """The published numbers of ``cell`` on ``task``: value ± std (source; another model named)."""
    rows = task.published[task.published["cell"] == cell] if len(task.published) else task.published
    parts = []
    for rec in rows.to_dict("records"):
        model = rec.get("model", "")
        other = f"; model {model}" if model and task.models and model not in task.models else ""
        std = rec.get("std")
        parts.append(f"{format_mean_std(rec['mean'], None if std is None or pd.isna(std) else std, None, task.metric)}"
                     f" ({rec['source']}{other})")
    return "; ".join(parts)


def same_values(t: Task, a: str, b: str) -> bool | None:
    """Whether cells ``a`` and ``b`` gave the same value in every seed of task ``t`` (None: not
    both ran it with the same seeds)."""
    def values(cell: str) -> pd.Series:
        return t.seeds[t.seeds["cell"] == cell].set_index("seed")["value"].sort_index()

    first, second = values(a), values(b)
    if not len(first) or not first.index.equals(second.index):
        return None
    return bool(np.allclose(first.to_numpy(float), second.to_numpy(float), rtol=SAME_RTOL, atol=0.0, equal_nan=True))


def same_functions(tasks: list[Task]) -> dict[str, str]:
    """Cell -> the cell it is one function with (the first in the papers' order of cells): two
    cells whose every seed gave the same value on every task both ran."""
    cells = ordered([c for t in tasks for c in t.summary["cell"]], CELL_ORDER)
    alias: dict[str, str] = {}
    for i, a in enumerate(cells):
        if a in alias:
            continue
        for b in cells[i + 1:]:
            verdicts = [same_values(t, a, b) for t in tasks]
            if b not in alias and any(v is True for v in verdicts) and not any(v is False for v in verdicts):
                alias[b] = a
    return alias


def merged(t: Task, alias: dict[str, str]) -> Task:
    """Task ``t`` with each cell that is one function with another left out (it is shown in that
    cell's row), ranks recomputed."""
    keep = ~t.summary["cell"].isin(list(alias))
    summary = t.summary[keep].copy()
    summary["rank"] = summary["mean"].rank(ascending=not t.higher_is_better, method="min")
    return replace(t, summary=summary.reset_index(drop=True), seeds=t.seeds[~t.seeds["cell"].isin(list(alias))])


def welch_p(first: np.ndarray, second: np.ndarray) -> float | None:
    """Welch's two-sided p for equal means of two cells' seeds (None: fewer than two seeds of
    either, or no spread in both)."""
    if len(first) < 2 or len(second) < 2 or (np.std(first) == 0 and np.std(second) == 0):
        return None
    return float(stats.ttest_ind(first, second, equal_var=False).pvalue)


def rank_intervals(t: Task) -> dict[str, tuple[int, int]]:
    """Per cell, the ranks the noise over seeds allows: from 1 + the cells better than it beyond
    the noise to the number of cells − those worse than it beyond the noise (Welch's t over seeds,
    two-sided :data:`RANK_ALPHA` with Bonferroni over the other cells). Cells whose intervals
    overlap are not told apart; a cell with one seed spans every rank."""
    cells = list(t.summary["cell"])
    values = {c: t.seeds[t.seeds["cell"] == c]["value"].dropna().to_numpy(float) for c in cells}
    means = dict(zip(cells, t.summary["mean"]))
    level = RANK_ALPHA / max(len(cells) - 1, 1)
    intervals = {}
    for cell in cells:
        better = worse = 0
        for other in cells:
            p = welch_p(values[cell], values[other]) if other != cell else None
            if p is None or p >= level:
                continue
            if (means[other] > means[cell]) == t.higher_is_better:
                better += 1
            else:
                worse += 1
        intervals[cell] = (1 + better, len(cells) - worse)
    return intervals


def rank_text(rank: float, interval: tuple[int, int]) -> str:
    low, high = interval
    return f"{int(rank)} ({low}–{high})" if (low, high) != (int(rank), int(rank)) else f"{int(rank)}"


def ranking_frame(tasks: list[Task], alias: dict[str, str] | None = None) -> pd.DataFrame:
    """The table: one row per cell (by mean rank over the tasks it ran; cells that are one function
    in one row, ``alias``), per task the rank with the ranks the noise allows, ours (mean ± std, n
    seeds) and, for tasks with any, the published numbers."""
    alias = alias or {}
    cells = ordered([c for t in tasks for c in t.summary["cell"]], CELL_ORDER)
    ranks = {t.artifact: dict(zip(t.summary["cell"], t.summary["rank"])) for t in tasks}
    intervals = {t.artifact: rank_intervals(t) for t in tasks}
    names = {cell: " = ".join([cell, *[a for a, c in alias.items() if c == cell]]) for cell in cells}
    means = {c: [ranks[t.artifact][c] for t in tasks if c in ranks[t.artifact]] for c in cells}
    cells = sorted(cells, key=lambda c: (sum(means[c]) / len(means[c]) if means[c] else math.inf, cells.index(c)))
    out = []
    for cell in cells:
        row = {"cell": names[cell]}
        for t in tasks:
            name = task_name(t.artifact)
            found = t.summary[t.summary["cell"] == cell]
            if len(found):
                rec = found.iloc[0]
                row[f"{name}: rank (noise allows)"] = rank_text(rec["rank"], intervals[t.artifact][cell])
                row[f"{name}: {metric_name(t.metric)}, ours"] = without_unit(
                    format_mean_std(rec["mean"], rec["std"], rec["n"], t.metric), t.metric)
            else:
                row[f"{name}: rank (noise allows)"] = ""
                row[f"{name}: {metric_name(t.metric)}, ours"] = "not run"
            if len(t.published):
                shown = [without_unit(published_text(t, c), t.metric) for c in names[cell].split(" = ")]
                row[f"{name}: published"] = "; ".join(text for text in shown if text) or "—"
        row["mean rank"] = f"{sum(means[cell]) / len(means[cell]):.1f}" if means[cell] else ""
        out.append(row)
    return pd.DataFrame(out)


def ranking_table(report: StudyReport, tasks: list[Task] | None = None, alias: dict[str, str] | None = None) -> None:
    """Rows cells, columns tasks: rank with the ranks the noise allows, ours (mean ± std over seeds,
    n), published where any; ``tasks`` already merged by ``alias``."""
    if tasks is None:
        tasks = [t for a in task_artifacts(report) if (t := task_numbers(report, a))]
        alias = same_functions(tasks)
        tasks = [merged(t, alias) for t in tasks]
    if not tasks:
        display_markdown(f"Ours: no runs of the tasks at scale `{report.scale}` yet.")
        return
    lines = [f"**The cells ranked per task** (ours at scale `{report.scale}`): for each task the rank of the cell's "
             "mean over seeds of the task's test metric (1 = best; equal means share a rank) and, in brackets, the "
             "ranks the noise over seeds allows: from one more than the cells better than it beyond the noise to the "
             "number of cells less those worse than it beyond the noise (Welch's t over seeds, two-sided 95 % with "
             "Bonferroni over the other cells; with one seed a cell can take any rank). Cells whose brackets overlap "
             "are not told apart at this scale: the order within them is the noise's. Then that mean ± the "
             "standard deviation over seeds with the number of seeds n, and the published number beside where a "
             "paper prints one for that task and cell (*published*, from the paper's own sizes, never averaged or "
             "ranked with ours; a macro model other than ours is named). Rows are ordered by the mean rank over "
             "the tasks. Accuracies in %."]
    if alias:
        lines.append("Cells that are one function share a row and a rank (" + "; ".join(
            f"{a} and {c}" for a, c in alias.items()) + ": every seed gave the same number on every task both ran; "
            "the SRN and LSTM−GATES are wsum eq. 2 from the same starting weights).")
    for t in tasks:
        best = "highest" if t.higher_is_better else "lowest"
        refs = "; ".join(f"{what}: {format_value(value, t.metric)} ({source})" for what, value, source in t.references)
        lines.append(f"- **{task_name(t.artifact)}** (artifact `{t.artifact}`): {metric_name(t.metric)}, {best} "
                     f"first{'; reference: ' + refs if refs else ''}.")
    display_markdown("\n".join(lines))
    display_table(ranking_frame(tasks, alias))


def ranking_figure(report: StudyReport, tasks: list[Task] | None = None, alias: dict[str, str] | None = None) -> None:
    """One panel per task: the cells from best (top) to worst, every seed a dot, the mean a bar,
    published numbers as crosses (one marker per macro model), reference lines dashed."""
    import matplotlib.pyplot as plt

    tasks = tasks if tasks is not None else [t for a in task_artifacts(report) if (t := task_numbers(report, a))]
    tasks = [t for t in tasks if len(t.summary)]
    if not tasks:
        return
    cells = max(len(t.summary) for t in tasks)
    columns = min(len(tasks), 4)
    rows = math.ceil(len(tasks) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.9 * columns, (0.3 * cells + 1.4) * rows), squeeze=False)
    markers = ["X", "P", "D", "^"]
    handles = {}
    for ax, t in zip(axes.flat, tasks):
        fmt = metric_format(t.metric)
        order = t.order
        y = {cell: i for i, cell in enumerate(order)}
        seeds = t.seeds[t.seeds["cell"].isin(order)]
        handles["ours, one dot per seed"] = ax.scatter(seeds["value"] * fmt.factor, seeds["cell"].map(y), s=18,
                                                       color="tab:blue", alpha=0.7, zorder=3)
        means = t.summary.set_index("cell")["mean"]
        handles["ours, mean over seeds"] = ax.scatter([means[c] * fmt.factor for c in order], range(len(order)),
                                                      marker="|", s=260, color="black", zorder=4)
        models = sorted(set(t.published["model"])) if len(t.published) and "model" in t.published else [""]
        for marker, model in zip(markers, models):
            pub = t.published[t.published["model"] == model] if model else t.published
            pub = pub[pub["cell"].isin(order)]
            if len(pub):
                label = "published" + (f", model {model}" if model else "") + " (paper's sizes)"
                handles[label] = ax.scatter(pub["mean"] * fmt.factor, pub["cell"].map(y), marker=marker, s=50,
                                            color="tab:red" if marker == "X" else "tab:orange", zorder=5)
        for (what, value, _), style in zip(t.references, ["--", ":", "-."]):
            handles[f"{task_name(t.artifact)}: {what}"] = ax.axvline(value * fmt.factor, color="grey",
                                                                    linestyle=style, linewidth=1)
        values = [v for v in [*seeds["value"], *t.published["mean"]] if pd.notna(v) and v > 0]
        if t.metric.rsplit("_", 1)[-1] in ("mse", "perplexity", "loss", "nll") and values \
                and max(values) / min(values) > 20:
            ax.set_xscale("log")
        ax.set_yticks(range(len(order)), [" = ".join([c, *[a for a, to in (alias or {}).items() if to == c]])
                                          for c in order])
        ax.set_ylim(len(order) - 0.5, -0.5)  # the best at the top
        ax.set_title(f"{task_name(t.artifact)}: {'higher' if t.higher_is_better else 'lower'} is better", fontsize=10)
        ax.set_xlabel(metric_name(t.metric))
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(tasks):]:
        ax.set_visible(False)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=2, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.06 + 0.03 * math.ceil(len(handles) / 2), 1, 1))
    display_markdown(f"Ours at scale `{report.scale}`: per task the cells from the best (top) to the worst by their "
                     "mean over seeds (the bar); every dot is one seed. Crosses: published numbers for that task "
                     "and cell, from the paper's own sizes (not comparable in size with ours at a small scale). "
                     "Dashed lines: the task's references.")
    plt.show()


def ranking(report: StudyReport) -> None:
    """The ``ranking`` section's body: which runs it reads, then the table and the figure."""
    artifacts = task_artifacts(report)
    runs = {a: report.rows(a) for a in artifacts}
    counts = ", ".join(f"`{a}` {rows['run'].nunique() if len(rows) and 'run' in rows else 0}"
                       for a, rows in runs.items())
    display_markdown(f"This section reads the runs of every task artifact of the study (runs per task: {counts}); "
                     "their own sections below show every metric beside the published numbers.")
    tasks = [t for a in artifacts if (t := task_numbers(report, a))]
    alias = same_functions(tasks)
    tasks = [merged(t, alias) for t in tasks]
    ranking_table(report, tasks, alias)
    ranking_figure(report, tasks, alias)
