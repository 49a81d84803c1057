"""Figures shared by the reports: bars of ours beside published, training curves, heat maps."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from ..labels import CELL_ORDER, MODEL_ORDER, natural_key, ordered
from ..metrics.formats import metric_format


def seaborn_for_reports():
    """seaborn, with its grids' legends measured without drawing the whole figure.

    ``FacetGrid.add_legend`` (a legend outside the grid, what ``relplot`` and ``catplot`` make)
    draws the entire figure twice only to read the legend's width, which matplotlib works out
    from the legend's own texts when asked; those two draws were a quarter of a report's time
    (elstm's, profiled). Without them every figure comes out pixel for pixel the same
    (tests/test_report.py::test_grids_are_the_same_without_seaborns_layout_draws). seaborn is
    pinned (pyproject.toml); the private hook it replaces is checked to exist.
    """
    import seaborn as sns
    import seaborn.axisgrid

    if not hasattr(seaborn.axisgrid, "_draw_figure"):
        raise RuntimeError("seaborn.axisgrid._draw_figure is gone: check the legend measurement in "
                           "rnnrepro.report.plots.seaborn_for_reports against this seaborn version")
    seaborn.axisgrid._draw_figure = _no_draw
    return sns


def _no_draw(figure) -> None:
    """What ``add_legend`` needs of its draws: nothing (see :func:`seaborn_for_reports`)."""


def metric_bars(ours: pd.DataFrame, published: pd.DataFrame, metric: str, x: str = "model", hue: str = "cell"):
    """Bars of ``metric`` by ``x`` and ``hue``: ours (mean, sd over seeds) beside published.

    ``ours`` holds run rows (one per seed), ``published`` published rows; returns the FacetGrid.
    """
    sns = seaborn_for_reports()

    fmt = metric_format(metric)
    parts = []
    if len(ours):
        mine = ours[ours["metric"] == metric][[x, hue, "value"]].copy()
        mine["numbers"] = "ours (mean, bars: sd over seeds)"
        parts.append(mine)
    if len(published):
        theirs = published[published["metric"] == metric][[x, hue, "value"]].copy()
        sources = ", ".join(sorted(published["source"].dropna().unique())) if "source" in published else ""
        theirs["numbers"] = f"published ({sources})"
        parts.append(theirs)
    data = pd.concat(parts, ignore_index=True)
    data["value"] = data["value"].astype(float) * fmt.factor
    grid = sns.catplot(data=data, kind="bar", x=x, y="value", hue=hue, col="numbers",
                       order=ordered(data[x], MODEL_ORDER), hue_order=ordered(data[hue], CELL_ORDER),
                       errorbar="sd", height=3.6, aspect=1.3)
    grid.set_axis_labels(x, f"{metric} ({fmt.unit.strip()})" if fmt.unit else metric)
    grid.set_titles("{col_name}")
    return grid


def curves(rows: pd.DataFrame, metric: str, x: str = "step", hue: str = "cell", col: str | None = None,
           baseline: float | None = None, baseline_label: str = "", logy: bool = False):
    """Line plot of a training curve of ours (mean over seeds, sd band), one panel per ``col``.

    ``baseline`` draws a dashed horizontal line labelled ``baseline_label``. Returns the
    FacetGrid, or None when there is no such curve.
    """
    sns = seaborn_for_reports()

    data = rows[rows["metric"] == metric].dropna(subset=[x, "value"])
    if data.empty:
        return None
    data = data.assign(value=data["value"].astype(float), **{x: data[x].astype(float)})
    col = col if col and col in data and data[col].nunique() > 1 else None
    col_order = sorted(data[col].unique(), key=natural_key) if col else None
    grid = sns.relplot(data=data, kind="line", x=x, y="value", hue=hue, col=col, col_order=col_order,
                       hue_order=ordered(data[hue], CELL_ORDER if hue == "cell" else MODEL_ORDER),
                       errorbar="sd", height=3.2, aspect=1.2,
                       col_wrap=min(3, len(col_order)) if col_order else None, facet_kws={"sharey": False})
    grid.set_axis_labels(x, f"{metric} (ours)")
    if col:
        grid.set_titles(f"{col} = {{col_name}}")
    for ax in grid.axes.flat:
        if logy:
            ax.set_yscale("log")
        if baseline is not None:
            ax.axhline(baseline, color="black", linestyle="--", linewidth=1)
            ax.annotate(baseline_label, xy=(1, baseline), xycoords=("axes fraction", "data"), xytext=(-4, 4),
                        textcoords="offset points", ha="right", va="bottom", fontsize=8)
    return grid


def heatmaps(frame: pd.DataFrame, x: str, y: str, value: str, panel: str, panels: Sequence[str] | None = None,
             vmin: float | None = None, vmax: float | None = None, label: str = "", cmap: str = "viridis",
             title: Callable[[str], str] | None = None, annotate: bool | None = None, y_descending: bool = True,
             xlabel: str | None = None, ylabel: str | None = None):
    """One heat map per ``panel`` value: ``value`` over ``x`` (across) and ``y`` (upwards by default).

    Used for the drnn paper's γ × acausality maps and the weighted-sum weights ‖w_j^t‖ over a
    sentence. Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt
    sns = seaborn_for_reports()

    panels = list(panels) if panels is not None else sorted(frame[panel].unique(), key=natural_key)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels) + 0.6, 3.4), squeeze=False)
    vmin = float(frame[value].min()) if vmin is None else vmin
    vmax = float(frame[value].max()) if vmax is None else vmax
    for letter, ax, name in zip("abcdefghijklmnop", axes[0], panels):
        grid = frame[frame[panel] == name].pivot_table(index=y, columns=x, values=value, aggfunc="mean")
        grid = grid.reindex(sorted(grid.index, key=natural_key, reverse=y_descending))
        grid = grid[sorted(grid.columns, key=natural_key)]
        show_numbers = annotate if annotate is not None else grid.size <= 40
        sns.heatmap(grid, ax=ax, vmin=vmin, vmax=vmax, cmap=cmap, cbar=ax is axes[0][-1],
                    cbar_kws={"label": label}, annot=show_numbers, fmt=".2f", annot_kws={"fontsize": 7})
        ax.set_title(f"({letter}) {title(name) if title else name}")
        ax.set_xlabel(xlabel or x)
        ax.set_ylabel(ylabel or y)
    fig.tight_layout()
    return fig
