"""The pru paper's own figures (Choi; ``reports/pru.ipynb``)."""
from __future__ import annotations

from .. import plots
from ..study import StudyReport, display_markdown


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
