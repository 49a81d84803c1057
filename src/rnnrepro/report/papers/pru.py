"""The pru paper's own figures and tables (Choi; ``reports/pru.ipynb``).

Figs. 2-3 (adding and copying curves with their baselines), Tables 1-4 laid out as the paper
prints them, ours beside published, Fig. 4's validation-BLEU curves and Fig. 5's BLEU by source
length. The claims that need code are :mod:`rnnrepro.claims.papers.pru`.
"""
from __future__ import annotations

import pandas as pd

from ...bounds import copying_baseline as memoryless_baseline
from ...labels import CELL_ORDER, cell_name, natural_key, ordered
from ...metrics.formats import format_value
from .. import plots
from ..study import StudyReport, display_markdown, display_table

DIRECTION_NAMES = {"en-de": "En→De", "de-en": "De→En", "en-fi": "En→Fi", "fi-en": "Fi→En"}


# -- Figs. 2 and 3 --------------------------------------------------------------------------------
def adding_curves(report: StudyReport, artifact: str = "fig2") -> None:
    """Fig. 2: validation MSE against the epoch, one panel per T, the paper's baseline dashed."""
    import matplotlib.pyplot as plt

    published = report.published_rows
    baseline = published[(published["artifact"] == artifact) & (published["metric"] == "baseline_mse")]
    value = float(baseline["value"].iloc[0]) if len(baseline) else None
    if value is not None:
        display_markdown(f"**Published ({report.sources(artifact)}):** baseline MSE {value:g}, the expected MSE of "
                         "always predicting 1; the paper gives its curves only as a plot.")
    rows = report.curve_rows(artifact, "dev_mse")
    if rows.empty:
        return
    display_markdown("Ours: validation MSE against the epoch, one panel per sequence length T (mean over seeds, "
                     "band: sd); dashed: the paper's baseline of always predicting 1 (published, Sec. 4.1).")
    plots.curves(rows, "dev_mse", x="epoch", col="T", baseline=value,
                 baseline_label=f"baseline {value:g} (published)" if value is not None else "")
    plt.show()


def copying_curves(report: StudyReport, artifact: str = "fig3") -> None:
    """Fig. 3: validation cross-entropy per step against the epoch, one panel per T, each with
    the memoryless baseline 10 log 8 / (T + 20) of its T dashed."""
    import matplotlib.pyplot as plt

    display_markdown("**Published (Choi, Sec. 4.1):** the memoryless strategy's cost 10·log 8 / (T + 20) (0.173 at "
                     "T = 100, 0.040 at T = 500); the paper gives its curves only as a plot, whose caption calls the "
                     "cross-entropy of its text \"MSE\".")
    rows = report.curve_rows(artifact, "dev_loss")
    if rows.empty:
        return
    display_markdown("Ours: validation cross-entropy per step (nats) against the epoch, one panel per sequence length "
                     "T; dashed: the memoryless baseline 10·log 8 / (T + 20) of that T (the paper's formula).")
    grid = plots.curves(rows, "dev_loss", x="epoch", col="T")
    lengths = sorted(rows["T"].unique(), key=natural_key)
    axes = [grid.axes_dict[T] for T in lengths] if len(lengths) > 1 else list(grid.axes.flat)
    for T, ax in zip(lengths, axes):
        value = memoryless_baseline(int(float(T)))
        ax.axhline(value, color="black", linestyle="--", linewidth=1)
        ax.annotate(f"memoryless {value:.3f}", xy=(1, value), xycoords=("axes fraction", "data"), xytext=(-4, 4),
                    textcoords="offset points", ha="right", va="bottom", fontsize=8)
    plt.show()


# -- Tables 1 and 2 -------------------------------------------------------------------------------
def value_of(summary: pd.DataFrame, metric: str, **labels) -> float | None:
    rows = summary[summary["metric"] == metric] if len(summary) else summary
    for key, wanted in labels.items():
        if key not in rows:
            return None
        rows = rows[rows[key] == str(wanted)]
    return float(rows["mean"].iloc[0]) if len(rows) else None


def shown(value: float | None, metric: str = "dev_sentence_nll") -> str:
    return "—" if value is None else format_value(value, metric)


def nll_table(report: StudyReport, artifact: str = "table1") -> None:
    """Table 1 as the paper prints it: validation NLL (V), test NLL (T) and the gap V − T per cell,
    ours beside published."""
    ours, published = report.ours(artifact), report.published(artifact)
    cells = ordered([*(ours["cell"] if len(ours) else []), *published["cell"]], CELL_ORDER)
    rows = []
    for cell in cells:
        row = {"cell": cell_name(cell)}
        for who, summary in (("ours", ours), ("published", published)):
            v = value_of(summary, "dev_sentence_nll", cell=cell)
            t = value_of(summary, "test_sentence_nll", cell=cell)
            row[f"V ({who})"] = shown(v)
            row[f"T ({who})"] = shown(t)
            row[f"V − T ({who})"] = shown(v - t if v is not None and t is not None else None)
        rows.append(row)
    display_markdown("Table 1 laid out as the paper's: NLL per sentence (nats) on validation (V) and test (T) and "
                     "the gap V − T (the paper's \"Generalization (V-T)\"); ours at this scale beside the published "
                     f"({report.sources(artifact)}).")
    display_table(pd.DataFrame(rows))


def length_table(report: StudyReport, artifact: str = "table2") -> None:
    """Table 2 as the paper prints it: validation and test NLL per sentence for sentences of at
    most 50 and 250 words, per cell; ours (WikiText-2) and published (WikiText-103)."""
    ours, published = report.ours(artifact), report.published(artifact)
    cells = ordered([*(ours["cell"] if len(ours) else []), *published["cell"]], CELL_ORDER)
    for who, summary in (("Ours (WikiText-2, this scale)", ours), (f"Published ({report.sources(artifact)}, "
                                                                    "WikiText-103)", published)):
        rows = []
        for cell in cells:
            row = {"cell": cell_name(cell)}
            for length in (50, 250):
                for metric, name in (("dev_sentence_nll", "valid"), ("test_sentence_nll", "test")):
                    row[f"≤ {length}: {name} NLL"] = shown(value_of(summary, metric, cell=cell,
                                                                    max_sentence_length=length))
            rows.append(row)
        display_markdown(f"**{who}:** NLL per sentence (nats).")
        display_table(pd.DataFrame(rows))


# -- Tables 3 and 4 -------------------------------------------------------------------------------
def bleu_layout(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows: cells; columns: direction × beam, each "test (dev)" as the paper prints it."""
    if summary.empty or "beam" not in summary:
        return pd.DataFrame()
    directions = sorted(summary["direction"].unique(), key=lambda d: list(DIRECTION_NAMES).index(d)
                        if d in DIRECTION_NAMES else 99)
    beams = sorted(summary["beam"].unique(), key=natural_key)
    rows = []
    for cell in ordered(summary["cell"], CELL_ORDER):
        row = {"cell": cell_name(cell)}
        for direction in directions:
            for beam in beams:
                test = value_of(summary, "test_bleu", cell=cell, direction=direction, beam=beam)
                dev = value_of(summary, "dev_bleu", cell=cell, direction=direction, beam=beam)
                row[f"{DIRECTION_NAMES.get(direction, direction)}, beam {beam}"] = \
                    f"{shown(test, 'test_bleu')} ({shown(dev, 'dev_bleu')})"
        rows.append(row)
    return pd.DataFrame(rows)


def bleu_tables(report: StudyReport, artifact: str) -> None:
    """Tables 3-4 as the paper prints them: test BLEU with dev BLEU in parentheses, per beam width;
    ours (Multi30k) and published (WMT'15) in tables of their own: different data."""
    ours, published = report.ours(artifact), report.published(artifact)
    display_markdown("Laid out as the paper's table: test BLEU, dev BLEU in parentheses, per direction and beam "
                     "width. Ours translate Multi30k; the published numbers are WMT'15's, a different corpus, so "
                     "the two are shown apart and not subtracted.")
    table = bleu_layout(ours)
    if len(table):
        display_markdown(f"**Ours (Multi30k, scale `{report.scale}`):**")
        display_table(table)
    table = bleu_layout(published)
    if len(table):
        display_markdown(f"**Published ({report.sources(artifact)}, WMT'15):**")
        display_table(table)


def table3(report: StudyReport) -> None:
    bleu_tables(report, "table3")


def table4(report: StudyReport) -> None:
    bleu_tables(report, "table4")


# -- Figs. 4 and 5 --------------------------------------------------------------------------------
def validation_bleu_curves(report: StudyReport, artifact: str = "fig4") -> None:
    """Fig. 4: validation BLEU (greedy) against the training iteration, one panel per direction."""
    import matplotlib.pyplot as plt

    display_markdown("**Published:** Fig. 4 (En-Fi and Fi-En) is a plot only; the paper's text: LSTM and PRU "
                     "overfit, PRU+ does not.")
    rows = report.curve_rows(artifact, "dev_bleu")
    if rows.empty:
        return
    display_markdown("Ours: validation BLEU with beam 1 (greedy), measured after every epoch, against the training "
                     "iteration (optimiser steps), one panel per direction of Multi30k.")
    grid = plots.curves(rows, "dev_bleu", x="step", col="direction")
    if grid is not None:
        grid.set_axis_labels("training iteration (steps)", "validation BLEU, beam 1 (ours)")
    plt.show()


def bucket_of(metric: str) -> str:
    """``test_bleu_len_11to15`` -> ``11-15``, ``test_bleu_len_gt15`` -> ``> 15``."""
    name = metric.removeprefix("test_bleu_len_")
    return f"> {name[2:]}" if name.startswith("gt") else name.replace("to", "-")


def bleu_by_length(report: StudyReport, artifact: str = "fig5") -> None:
    """Fig. 5: test BLEU (greedy) per source-length bucket, per cell, one panel per direction."""
    import matplotlib.pyplot as plt
    sns = plots.seaborn_for_reports()

    display_markdown("**Published:** Fig. 5 (En-Fi, Fi-En, En-De) is a plot only.")
    summary = report.ours(artifact)
    if summary.empty:
        return
    rows = summary[summary["metric"].str.startswith("test_bleu_len_")].copy()
    if rows.empty:
        return
    rows["source words"] = rows["metric"].map(bucket_of)
    order = sorted(rows["source words"].unique(), key=lambda b: (b.startswith(">"), natural_key(b.split("-")[0])))
    display_markdown("Ours: test BLEU (greedy) of the sentences whose source has that many words, one panel per "
                     "direction of Multi30k.")
    directions = sorted(rows["direction"].unique(), key=lambda d: list(DIRECTION_NAMES).index(d)
                        if d in DIRECTION_NAMES else 99)
    grid = sns.catplot(data=rows, kind="point", x="source words", y="mean", hue="cell", col="direction",
                       col_order=directions, order=order, hue_order=ordered(rows["cell"], CELL_ORDER), height=3.2,
                       aspect=1.2)
    grid.set_axis_labels("source words", "test BLEU (ours)")
    plt.show()
