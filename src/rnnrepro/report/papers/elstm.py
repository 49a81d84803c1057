"""The elstm paper's own tables and figures (Su & Kuo; ``reports/elstm.ipynb``): Table 1's
counts, the toy task of Fig. 5, the training curves of Figs. 9-12 and Table 5's bars. The claims
that need code are :mod:`rnnrepro.claims.papers.elstm`."""
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


# -- Fig. 5: the "A"-presence toy task ---------------------------------------------------------
def toy_sweep(report: StudyReport) -> None:
    """Final training loss against T per cell: the best restart (line) and every restart (dots)."""
    import matplotlib.pyplot as plt

    rows = report.rows("fig5", ["dev_loss"])
    if rows.empty:
        return
    rows = rows.assign(T=rows["T"].astype(int), value=rows["value"].astype(float))
    best = rows.groupby(["cell", "T"])["value"].min().reset_index()
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for cell, group in best.groupby("cell"):
        ax.plot(group["T"], group["value"], marker="o", label=f"{cell.upper()}: best restart (ours)")
        every = rows[rows["cell"] == cell]
        ax.scatter(every["T"], every["value"], s=8, alpha=0.4)
    ax.axhline(0.01, color="black", linestyle=":", linewidth=1, label="0.01: read as zero")
    ax.set(yscale="log", xlabel="sequence length T", ylabel="final training loss (ours)",
           title='"A"-presence task (paper: the LSTM plateaus from T = 60)')
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
    display_markdown("Final training loss (mean cross-entropy over the T + 1 training sequences) of every restart; "
                     "the line follows the best restart of each cell.")


def memory_responses(report: StudyReport) -> None:
    """Fig. 5: memory response per position of the trained LSTM and ELSTM, the scaling factors beside."""
    import matplotlib.pyplot as plt

    table = report.analysis("fig5_response")
    if table.empty:
        return
    table = table[table["position"] != ""]  # per-position rows (final_loss has none)
    table = table.assign(value=table["value"].astype(float), position=table["position"].astype(float))
    samples = sorted({(int(T), int(a)) for T, a in zip(table["T"], table["a_position"])})
    fig, axes = plt.subplots(1, 2 * len(samples), figsize=(6 * len(samples), 3.2), squeeze=False)
    for index, (T, a) in enumerate(samples):
        rows = table[table["T"] == str(T)]
        ax, scale_ax = axes[0][2 * index], axes[0][2 * index + 1]
        for cell, group in rows[rows["metric"] == "memory_response"].groupby("cell"):
            ax.plot(group["position"], group["value"], marker=".", label=cell.upper())
        ax.axvline(a, color="grey", linestyle=":", linewidth=1)
        ax.set(title=f'memory response, T = {T}, "A" at {a}', xlabel="position k", ylabel="mr_k (ours)")
        ax.legend(fontsize=8)
        scaling = rows[rows["metric"] == "scaling"]
        scale_ax.plot(scaling["position"], scaling["value"], color="tab:orange", marker=".")
        scale_ax.set(title=f"ELSTM scaling factor s_k, T = {T}", xlabel="position k", ylabel="s_k (ours)")
    fig.tight_layout()
    plt.show()


# -- Figs. 9-12: training curves ------------------------------------------------------------
def training_perplexity(report: StudyReport, artifact: str, hue: str, one: dict) -> None:
    """Training perplexity exp(train_loss) against the step; ``hue`` varies, ``one`` fixes the rest."""
    import matplotlib.pyplot as plt
    import numpy as np

    rows = report.curve_rows(artifact, "train_loss")
    for key, value in one.items():
        rows = rows[rows[key] == value] if key in rows else rows.iloc[0:0]
    if rows.empty:
        return
    rows = rows.assign(value=np.exp(rows["value"].astype(float)), metric="train_perplexity")
    plots.curves(rows, "train_perplexity", x="step", hue=hue, logy=True)
    plt.show()
    fixed = ", ".join(f"{k} = {v}" for k, v in one.items())
    display_markdown(f"Training perplexity (exp of the training loss, averaged over {report.scale}'s logging "
                     f"interval) against the step, one line per {hue}; {fixed} (ours; the paper plots these curves "
                     "without numbers).")


def per_cell_curves(report: StudyReport) -> None:
    """Fig. 9: training perplexity per cell, in the basic RNN (a choice: the paper does not say which model)."""
    training_perplexity(report, "fig9", "cell", {"model": "basic"})


def per_model_curves(report: StudyReport) -> None:
    """Fig. 10: training perplexity per macro model, with the ELSTM cell."""
    training_perplexity(report, "fig10", "model", {"cell": "elstm"})


def input_curves(artifact: str):
    """Figs. 11-12: training loss per macro model, I_t = X_t against [X_t, h_{t−1}], LSTM and ELSTM."""
    def show(report: StudyReport) -> None:
        import matplotlib.pyplot as plt
        sns = plots.seaborn_for_reports()

        rows = report.curve_rows(artifact, "train_loss")
        if rows.empty:
            return
        rows = rows.assign(value=rows["value"].astype(float), step=rows["step"].astype(float),
                           inputs=rows["grid"].map(lambda g: "I_t = X_t" if g.startswith("x_") else "I_t = [X_t, h_{t-1}]"))
        grid = sns.relplot(data=rows, kind="line", x="step", y="value", hue="cell", style="inputs", col="model",
                           col_wrap=5, height=2.6, aspect=1.0, errorbar=None)
        grid.set_axis_labels("step", "training loss (ours)")
        plt.show()
    return show


# -- Table 5 ---------------------------------------------------------------------------------
def lm_table(report: StudyReport) -> None:
    """Table 5's bars, and what its bidirectional numbers are."""
    display_markdown(
        "**Not a language model's perplexity everywhere.** Footnote 1 defines the task as predicting the next word "
        "from the preceding ones, but the BRNN and the DBRNN read the sentence in both directions: at position t their "
        "backward layer has already read word t + 1, the very word to predict. The seq2seq models' encoders read the "
        "whole sentence before the decoder predicts it. Their perplexities (the paper's 78.56 for the BRNN and 6.18 "
        "for the DBRNN against 267.47 for the basic RNN, and ours) measure copying what was seen, not language "
        "modelling; only the basic RNN's is a language model's.")
    accuracy_bars(report, "table5", "test_perplexity")
