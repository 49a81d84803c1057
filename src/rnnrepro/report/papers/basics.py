"""The RNN tutorial's report (Bilici; ``reports/basics.ipynb``): its figures.

Figures: the gradient norm against the distance with eq. 68's bound (``vanishing``), loss and
gradient norm per step with and without clipping (``clipping``), the listings' shapes
(``listings``), the taggers side by side (``taggers``, ``taggers_fit``), perplexities and
sampled sentences (``lm``), accuracy on aⁿbⁿ against n (``counting``). The tutorial publishes no
numbers, so every figure and table is ours.

The claims that need code (the SRN's gradient norm falls exponentially; with clipping fewer runs
spike) are :mod:`rnnrepro.claims.papers.basics`.
"""
from __future__ import annotations

import math
import pandas as pd

from ...labels import CELL_ORDER, cell_name, natural_key, ordered
from ..study import StudyReport, display_markdown, display_table

CELL_COLOURS = {"srn": "tab:red", "lstm": "tab:blue", "gru": "tab:green"}
def numeric(table: pd.DataFrame) -> pd.DataFrame:
    """An analysis table with ``value`` as numbers."""
    return table.assign(value=pd.to_numeric(table["value"], errors="coerce")) if len(table) else table


def per_run(table: pd.DataFrame, metrics: list[str], index: list[str]) -> pd.DataFrame:
    """Summary metrics of an analysis table, one row per ``index`` labels (the mean over the runs
    that share them, e.g. seeds), metrics as columns."""
    rows = table[table["metric"].isin(metrics)]
    if rows.empty:
        return pd.DataFrame(columns=[*index, *metrics])
    wide = rows.pivot_table(index=index, columns="metric", values="value", aggfunc="mean", dropna=False).reset_index()
    wide.columns.name = None
    return wide.reindex(columns=[*index, *metrics])  # a metric that is NaN everywhere stays a column


def fmt(value, spec: str = ".3f") -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


# -- vanishing gradients (Sec. 10) ---------------------------------------------------------------------
def vanishing(report: StudyReport) -> None:
    """log10 ‖∂J^(i)/∂h^(j)‖ against i − j per cell, at initialisation and after training, with
    eq. 68's bound for the SRN; the fitted slopes as factors per step."""
    import matplotlib.pyplot as plt

    table = numeric(report.analysis("vanishing"))
    if table.empty:
        return
    states = [state for state in dict.fromkeys(table["state"].astype(str)) if state not in ("", "nan")]  # init, trained
    curves = table[table["metric"].isin(["log10_grad_norm", "log10_bound"]) & (table["distance"] != "")]
    curves = curves.assign(distance=curves["distance"].astype(float))
    display_markdown("Ours: the mean over test sentences and positions i of log10 ‖∂J^(i)/∂h^(i−d)‖ against the "
                     "distance d (solid), by autograd on the language models of `lm` at initialisation (left) and "
                     "after training (right); dashed, for the SRN, the same mean of eq. 68's bound "
                     "‖∂J^(i)/∂h^(i)‖ · ‖W_h‖^d · ∏ ‖diag σ'‖ (cut at the top of each panel where it grows). "
                     "A straight line is an exponential in d.")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    norms = curves[curves["metric"] == "log10_grad_norm"]
    low, high = norms["value"].min(), norms["value"].max()
    for ax, state in zip(axes, states):
        for cell in ordered(curves["cell"], CELL_ORDER):
            mine = curves[(curves["cell"] == cell) & (curves["state"] == state)].sort_values("distance")
            for metric, style, label in (("log10_grad_norm", "-", cell_name(cell)),
                                         ("log10_bound", "--", f"{cell_name(cell)}: eq. 68 bound")):
                line = mine[mine["metric"] == metric]
                if len(line):
                    ax.plot(line["distance"], line["value"], style, color=CELL_COLOURS.get(cell), label=label)
        ax.set(title=f"{'at initialisation' if state == 'init' else 'after training'}", xlabel="distance i − j",
               ylim=(low - 0.5, max(high, 0.0) + 1.0))
        ax.legend(fontsize=8)
    axes[0].set_ylabel("log10 ‖∂J^(i)/∂h^(j)‖ (ours)")
    fig.tight_layout()
    plt.show()
    metrics = [f"{m}_{s}" for m in ("log10_slope", "fit_r2", "spectral_radius", "spectral_norm",
                                    "max_log10_excess_over_bound") for s in states]
    wide = per_run(table[table["distance"] == ""], metrics, ["cell"])
    if wide.empty:
        return
    rows = []
    for rec in wide.to_dict("records"):
        row = {"cell": cell_name(rec["cell"])}
        for state in states:
            slope = rec.get(f"log10_slope_{state}", math.nan)
            row[f"slope, {state}"] = fmt(slope)
            row[f"factor per step, {state}"] = fmt(10 ** slope)
            row[f"R², {state}"] = fmt(rec.get(f"fit_r2_{state}"), ".4f")
            row[f"max |λ(W_h)|, {state}"] = fmt(rec.get(f"spectral_radius_{state}"), ".2f")
            row[f"‖W_hh‖₂, {state}"] = fmt(rec.get(f"spectral_norm_{state}"), ".2f")
        rows.append(row)
    order = {cell_name(c): i for i, c in enumerate(CELL_ORDER)}
    display_markdown("Fitted lines (ours): slope of log10 norm per step back, the factor 10^slope the norm is "
                     "multiplied by per step, R² of the fit, the spectral radius of the SRN's W_h (the sentence's "
                     "condition max λ_i ≤ 1) and the largest singular value of W_hh (eq. 68's ‖W_h‖; all gates' "
                     "blocks for the LSTM and GRU).")
    display_table(pd.DataFrame(rows).sort_values("cell", key=lambda s: s.map(order)))
    trained = {rec["cell"]: rec.get("log10_slope_trained", math.nan) for rec in wide.to_dict("records")}
    if "srn" in trained:
        slower = [cell_name(c) for c, s in trained.items() if c != "srn" and s > trained["srn"]]
        display_markdown(f"After training, the norm shrinks by a factor {10 ** trained['srn']:.2f} per step for the "
                         "SRN; " + (f"more slowly for {', '.join(slower)}." if slower
                                    else "no gated cell shrinks more slowly."))


# -- clipping (Sec. 10.1) -------------------------------------------------------------------------------
def clipping(report: StudyReport) -> None:
    """Training loss and gradient norm per step, with and without clipping, one column per seed;
    then the numbers the check reads."""
    import matplotlib.pyplot as plt

    curves = report.curve_rows("clipping")
    if len(curves) and {"train_loss", "grad_norm"} <= set(curves["metric"]):
        curves = curves.assign(step=curves["step"].astype(float), value=pd.to_numeric(curves["value"]))
        seeds = sorted(curves["seed"].unique(), key=natural_key)
        display_markdown("Ours: the training loss of every step (top) and the global gradient norm ‖ĝ‖ before "
                         "clipping (bottom, log scale), with clipping at the threshold (blue) and without (red), one "
                         "column per seed; a cross marks a step whose loss was not finite (the run ended there).")
        fig, axes = plt.subplots(2, len(seeds), figsize=(3.8 * len(seeds), 5.5), squeeze=False, sharex="col")
        for column, seed in enumerate(seeds):
            for grid, colour in (("unclipped", "tab:red"), ("clipped", "tab:blue")):
                run = curves[(curves["seed"] == seed) & (curves["grid"] == grid)]
                loss = run[run["metric"] == "train_loss"].sort_values("step")
                norm = run[run["metric"] == "grad_norm"].sort_values("step")
                axes[0, column].plot(loss["step"], loss["value"], color=colour, lw=0.8, label=grid)
                finite = loss["value"].map(math.isfinite)
                if (~finite).any():  # a cross at the top of the panel where the loss stopped being finite
                    top = loss.loc[finite, "value"].max()
                    axes[0, column].plot(loss.loc[~finite, "step"], [top] * int((~finite).sum()), "x",
                                         color=colour, ms=10)
                axes[1, column].plot(norm["step"], norm["value"], color=colour, lw=0.8, label=grid)
            axes[0, column].set(title=f"seed {seed}", ylabel="training loss (ours)" if column == 0 else None)
            axes[1, column].set(yscale="log", xlabel="step",
                                ylabel="‖ĝ‖ before clipping (ours)" if column == 0 else None)
            axes[0, column].legend(fontsize=8)
        fig.tight_layout()
        plt.show()
    table = numeric(report.analysis("clipping"))
    if table.empty:
        return
    metrics = ["rise_in_loss", "final_loss", "max_grad_norm", "median_grad_norm", "diverged", "diverged_step",
               "test_accuracy"]
    window = (report.study.artifacts["clipping"].analysis or {}).get("window", 10)
    wide = per_run(table, metrics, ["grid", "seed"])
    wide = wide.sort_values(["grid", "seed"], key=lambda s: s.map(natural_key), ascending=[False, True])
    shown = pd.DataFrame({
        "clipping": wide["grid"], "seed": wide["seed"],
        f"largest rise of the {window}-step mean loss (nats)": wide["rise_in_loss"].map(lambda v: fmt(v, ".2f")),
        "final loss": wide["final_loss"].map(lambda v: fmt(v, ".3f")),
        "max ‖ĝ‖": wide["max_grad_norm"].map(lambda v: fmt(v, ".3g")),
        "median ‖ĝ‖": wide["median_grad_norm"].map(lambda v: fmt(v, ".3g")),
        "diverged at step": [fmt(step, ".0f") if diverged == 1 else "no"
                             for diverged, step in zip(wide["diverged"], wide["diverged_step"])],
        "test accuracy (aⁿbⁿ)": wide["test_accuracy"].map(lambda v: fmt(100 * v, ".1f") + " %"
                                                                     if not math.isnan(v) else "—"),
    })
    display_markdown("Per run (ours), from its curve and metrics:")
    display_table(shown)


# -- listings and taggers (Secs. 6, 7, 14) ---------------------------------------------------------------
def listings(report: StudyReport) -> None:
    """Shapes printed by the listings beside those nn.LSTM and our layers return, and the
    largest differences between the two."""
    table = numeric(report.analysis("listings"))
    if table.empty:
        return
    rows = []
    keys = ["listing", "implementation"]
    for (listing, implementation), group in table.groupby(keys, sort=False):
        first = group.iloc[0]
        values = group.set_index("metric")["value"]
        row = {"listing": listing, "layers": first["layers"], "bidirectional": first["bidirectional"],
               "implementation": implementation}
        for part in ("output", "hidden", "cell"):
            shown, printed = first[f"{part}_shape"], first.get(f"printed_{part}_shape", "")
            row[part] = shown + (f" (printed {printed})" if isinstance(printed, str) and printed and printed != shown
                                 else "")
        row["printed shapes matched"] = (f"{int(values['printed_shapes'] - values['printed_shape_mismatches'])} of "
                                         f"{int(values['printed_shapes'])}" if "printed_shape_mismatches" in values
                                         else "nothing printed")
        row["max |ours − nn.LSTM| (output, h, c)"] = (
            ", ".join(fmt(values.get(f"max_abs_{p}_difference"), ".1e") for p in ("output", "hidden", "cell"))
            if implementation == "ours" else "")
        rows.append(row)
    display_markdown("Ours: each listing run as printed (torch.randn input of shape (16, 512, input_size), nn.LSTM "
                     "with batch_first=True), and our layers of LSTM cells with the same weights on the same input. "
                     "Shapes are batch-first (ours, time-major inside, transposed for the comparison); h and c in "
                     "nn.LSTM's (layers · directions, batch, hidden) layout.")
    display_table(pd.DataFrame(rows))


def taggers(report: StudyReport) -> None:
    """Test and dev accuracy of each configuration, ours beside nn.LSTM, and their difference."""
    summary = report.ours("taggers")
    if summary.empty or "model" not in summary:
        return
    rows = []
    for (layers, bidirectional), group in summary.groupby(["layers", "bidirectional"], sort=False):
        row = {"layers": layers, "bidirectional": bidirectional}
        for metric in ("test_accuracy", "dev_accuracy"):
            values = group[group["metric"] == metric].set_index("model")["mean"]
            split = metric.split("_")[0]
            for model, name in (("stacked", "ours"), ("torch_lstm", "nn.LSTM")):
                row[f"{split} ({name})"] = fmt(100 * values[model], ".2f") + " %" if model in values else "—"
            if {"stacked", "torch_lstm"} <= set(values.index):
                row[f"{split}: ours − nn.LSTM"] = f"{100 * (values['stacked'] - values['torch_lstm']):+.2f} pp"
        rows.append(row)
    display_markdown("Ours (mean over seeds): the same tagger built from our cells and layers (`stacked`) and from "
                     "torch.nn.LSTM (`torch_lstm`), both from the same initial weights on the same batches.")
    display_table(pd.DataFrame(rows).sort_values(["layers", "bidirectional"], key=lambda s: s.map(natural_key)))


def taggers_fit(report: StudyReport) -> None:
    """Training against dev accuracy of every tagger."""
    table = numeric(report.analysis("taggers_fit"))
    if table.empty:
        return
    wide = per_run(table, ["train_accuracy", "dev_accuracy", "train_dev_gap"], ["layers", "bidirectional", "model"])
    display_markdown("Ours (mean over seeds): accuracy of each trained tagger on the training sentences it was trained "
                     "on and on dev, and the gap (overfitting: a high training accuracy with a lower dev accuracy).")
    display_table(pd.DataFrame({
        "layers": wide["layers"], "bidirectional": wide["bidirectional"], "model": wide["model"],
        "train accuracy": wide["train_accuracy"].map(lambda v: f"{100 * v:.2f} %"),
        "dev accuracy": wide["dev_accuracy"].map(lambda v: f"{100 * v:.2f} %"),
        "train − dev": wide["train_dev_gap"].map(lambda v: f"{100 * v:+.2f} pp")}))


# -- language models (Sec. 9.5) ---------------------------------------------------------------------------
def language_model(report: StudyReport) -> None:
    """Perplexities beside the unigram model's, then the sampled sentences per cell."""
    table = numeric(report.analysis("lm"))
    if table.empty:
        return
    samples = table[table["metric"] == "sample_tokens"]
    if len(samples):
        display_markdown("Sentences sampled from each trained model (ours): from a line start, "
                         "w_t ~ softmax(logits_t / τ) fed back until `<eos>` (Fig. 12), seeded; τ = 1 samples the "
                         "model's own distribution, τ < 1 sharpens it.")
        rank = {cell: i for i, cell in enumerate(ordered(samples["cell"], CELL_ORDER))}
        shown = samples.sort_values(["cell", "temperature", "sample"],
                                    key=lambda s: s.map(rank) if s.name == "cell" else s.map(natural_key))
        display_table(pd.DataFrame({"cell": shown["cell"].map(cell_name), "τ": shown["temperature"],
                                    "sample": shown["sample"], "text": shown["text"]}))


# -- counting (Sec. 8) ------------------------------------------------------------------------------------
def counting(report: StudyReport) -> None:
    """Accuracy against n per cell (the training range shaded), and which cells count beyond it."""
    import matplotlib.pyplot as plt

    table = numeric(report.analysis("counting"))
    if table.empty:
        return
    per_n = table[(table["metric"] == "accuracy") & (table["test_n"] != "")]
    per_n = per_n.assign(n=per_n["test_n"].astype(float))
    limit = table.loc[table["metric"] == "max_train_n", "value"]
    trained_to = float(limit.max()) if len(limit) else None
    display_markdown("Ours: balanced accuracy on aⁿbⁿ and its five nearest negatives at each n (chance ½, dotted), "
                     "mean over seeds; shaded: the training range.")
    fig, ax = plt.subplots(figsize=(9, 3.8))
    for cell in ordered(per_n["cell"], CELL_ORDER):
        line = per_n[per_n["cell"] == cell].groupby("n")["value"].mean()
        ax.plot(line.index, line.values, "-o", ms=3, color=CELL_COLOURS.get(cell), label=cell_name(cell))
    if trained_to:
        ax.axvspan(0.5, trained_to + 0.5, color="grey", alpha=0.15, label=f"training range n ≤ {trained_to:g}")
    ax.axhline(0.5, color="black", ls=":", lw=1)
    ax.set(xlabel="n", ylabel="accuracy (ours)", ylim=(-0.02, 1.02))
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
    summary = table[table["test_n"] == ""]
    reach = summary[summary["metric"] == "recognised_up_to"].groupby("cell")["value"].min()
    if trained_to and len(reach):
        beyond = [f"{cell_name(c)} (to n = {v:g})" for c, v in reach.items() if v > trained_to]
        short = [f"{cell_name(c)} (to n = {v:g})" for c, v in reach.items() if v <= trained_to]
        display_markdown("**Which cells count beyond the training range** (all six strings right at every n up to "
                         f"some n* > {trained_to:g}, in every seed): " + (", ".join(beyond) or "none")
                         + ("; not beyond it: " + ", ".join(short) if short else "") + ".")
