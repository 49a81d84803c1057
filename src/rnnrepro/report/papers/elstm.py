"""The elstm paper's own tables and figures (Su & Kuo; ``reports/elstm.ipynb``)."""
from __future__ import annotations

from .. import plots
from ..study import StudyReport, display_markdown, display_table


def parameter_counts(report: StudyReport) -> None:
    """Table 1: parameters counted in our modules beside the paper's formula at the same sizes."""
    table = report.analysis("table1")
    if table.empty:
        return
    wide = table.pivot_table(index=["cell", "M", "N", "T_s", "formula"], columns="count", values="value",
                             aggfunc="first").reset_index()
    wide.columns.name = None
    display_markdown("Ours: parameters counted in our modules (one bias per gate, as the paper counts); published: "
                     "the paper's Table 1 formula evaluated at the same sizes.")
    display_table(wide.rename(columns={"ours": "ours (counted)", "paper": "formula evaluated (Su & Kuo, Table 1)"}))


def accuracy_bars(report: StudyReport, artifact: str = "table7", metric: str = "test_accuracy") -> None:
    """Bars by macro model and cell, ours beside published, and our training-loss curves."""
    import matplotlib.pyplot as plt

    ours = report.rows(artifact, [metric])
    if ours.empty:
        return
    display_markdown(f"{metric} by macro model and cell: ours (left) and published (right).")
    plots.metric_bars(ours, report.published_rows[report.published_rows["artifact"] == artifact], metric)
    plt.show()
    curves = report.curve_rows(artifact, "train_loss")
    if len(curves):
        display_markdown("Training loss of ours against the step, one panel per macro model (mean over seeds, band: sd).")
        plots.curves(curves, "train_loss", x="step", col="model")
        plt.show()

