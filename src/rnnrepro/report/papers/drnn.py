"""The drnn paper's own figures (Turek et al.; ``reports/drnn.ipynb``).

Fig. 3's accuracy against the delay with the expected bound, Figs. 4 and 6's γ × acausality
maps, Table 1 laid out as the paper's, Theorem 1's differences and the cost timings. The
claims that need code are :mod:`rnnrepro.claims.papers.drnn`.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ...bounds import reversal_bound as analytic_bound
from ...labels import label_int, natural_key
from ...metrics.formats import format_mean_std, format_value
from .. import frames, plots
from ..study import StudyReport, display_markdown, display_table

LANGUAGES = {"ud_en_ewt_v2.3": "English (EWT)", "ud_de_gsd_v2.3": "German (GSD)", "ud_fr_gsd_v2.3": "French (GSD)"}
#: Table 1's rows in the paper (char level, word level), per language: (bidirectional, delay) each.
TABLE1_ROWS = ((("false", "0"), ("false", "0")), (("false", "1"), ("false", "1")),
               (("false", "1"), ("true", "0")), (("true", "0"), ("true", "0")))


def network(model: str, delay: str) -> str:
    """``LSTM``, ``d-LSTM d=5`` or ``Bi-LSTM``."""
    if model == "brnn":
        return "Bi-LSTM"
    return "LSTM" if label_int(delay) == 0 else f"d-LSTM d={label_int(delay)}"


def network_order(names: Iterable[str]) -> list[str]:
    """The paper's order: LSTM, Bi-LSTM, then the d-LSTMs by delay."""
    def key(name: str):
        return (0, 0) if name == "LSTM" else (1, 0) if name.startswith("Bi") else (2, int(name.rsplit("=", 1)[1]))
    return sorted(set(names), key=key)


# -- Theorem 1 ----------------------------------------------------------------------------------
def theorem1_table(report: StudyReport) -> None:
    """One row per (cell, k): the largest differences of the check and of the control."""
    table = report.analysis("theorem1")
    if table.empty:
        return
    table = table.assign(value=pd.to_numeric(table["value"]))
    wide = table.pivot_table(index=["cell", "layers", "delay"], columns="metric", values="value", aggfunc="max")
    names = {"max_abs_output_difference": "max |ŷ_{t+k−1} − y_t|",
             "max_abs_state_difference": "max |ĥ^{i}_{t+i−1} − h^(i)_t|",
             "max_abs_output_difference_early": "control: read at delay k − 2",
             "max_abs_output": "max |y_t| (scale)"}
    out = wide[[m for m in names if m in wide]].rename(columns=names).map(lambda v: f"{v:.1e}").reset_index()
    out.columns.name = None
    display_markdown("Ours: random stacks (PyTorch default initialisation, float64) of k layers, random inputs of "
                     "different lengths, padding left out; the flattened network is built from the stack's weights "
                     "by eqs. 5-6. The control reads the flattened network one step early: its large differences "
                     "show that the comparison can fail.")
    display_table(out.rename(columns={"layers": "layers k", "delay": "delay k − 1"}))


# -- Fig. 3 -------------------------------------------------------------------------------------
def reversal_summary(report: StudyReport) -> pd.DataFrame:
    """Per network, delay and T: dev and test accuracy (mean, std, n) and the expected bound."""
    summary = report.ours("fig3")
    if summary.empty:
        return summary
    summary = summary[summary["metric"].isin(["dev_accuracy", "test_accuracy"])].copy()
    summary["network"] = [network(m, d) for m, d in zip(summary["model"], summary.get("delay", ""))]
    summary["d"] = [label_int(d) if m != "brnn" else -1 for m, d in zip(summary["model"], summary.get("delay", ""))]
    summary["bound"] = [analytic_bound(d, label_int(T), label_int(V)) if d >= 0 else np.nan
                        for d, T, V in zip(summary["d"], summary["T"], summary["V"])]
    return summary


def reversal_figure(report: StudyReport) -> None:
    """Fig. 3: accuracy against the delay; d-LSTM validation and test, LSTM and Bi-LSTM, the bound."""
    import matplotlib.pyplot as plt
    sns = plots.seaborn_for_reports()

    summary = reversal_summary(report)
    if summary.empty:
        return
    display_markdown("Accuracy against the delay d (ours): the d-LSTM's validation and test accuracy, the LSTM "
                     "(d = 0) and the Bi-LSTM, and the paper's expected bound ½(1 + 1/V) + ⌊(d + 1)/2⌋ · (1/T) · "
                     "(1 − 1/V), capped at 1 (Max Performance in Fig. 3).")
    Ts = sorted(summary["T"].unique(), key=natural_key)
    fig, axes = plt.subplots(1, len(Ts), figsize=(7.5 * len(Ts), 4), squeeze=False)
    for ax, T in zip(axes[0], Ts):
        rows = summary[summary["T"] == T]
        dl = rows[rows["d"] >= 0].assign(curve=lambda f: f["metric"].map(
            {"dev_accuracy": "d-LSTM validation (ours)", "test_accuracy": "d-LSTM test (ours)"}))
        sns.lineplot(data=dl, x="d", y="mean", hue="curve", style="curve", markers=True, dashes=False, ax=ax)
        delays = np.arange(0, max(int(dl["d"].max()), label_int(T)) + 1)
        V = label_int(rows["V"].iloc[0])
        ax.plot(delays, [analytic_bound(d, label_int(T), V) for d in delays], "k--", lw=1, label="expected bound (paper)")
        bi = rows[(rows["d"] < 0) & (rows["metric"] == "test_accuracy")]
        if len(bi):
            ax.axhline(float(bi["mean"].iloc[0]), color="tab:purple", lw=1, label="Bi-LSTM test (ours)")
        ax.set(xlabel="delay d", ylabel="accuracy", title=f"sequence reversal, T = {T}, V = {V}", xticks=delays)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    plt.show()
    test = summary[summary["metric"] == "test_accuracy"].sort_values(["T", "d"])
    display_table(pd.DataFrame({
        "network": test["network"], "T": test["T"],
        "test accuracy (ours)": [format_mean_std(m, s, n, "test_accuracy")
                                 for m, s, n in zip(test["mean"], test["std"], test["n"])],
        "expected bound": [format_value(b, "test_accuracy") for b in test["bound"]],
        "ours − bound": [format_value(m - b, "test_accuracy", signed=True) for m, b in zip(test["mean"], test["bound"])],
    }))


# -- Figs. 4 and 6 ------------------------------------------------------------------------------
def sine_summary(report: StudyReport, artifact: str = "fig4") -> pd.DataFrame:
    """Per network, γ and a: mean and std of the test MSE over repetitions (data seeds and
    seeds), log10 of the mean (Fig. 4), std (Fig. 6)."""
    rows = report.rows(artifact, ["test_mse"])
    if rows.empty:
        return rows
    rows = rows.assign(value=pd.to_numeric(rows["value"]),
                       network=[network(m, d) for m, d in zip(rows["model"], rows.get("delay", ""))])
    summary = rows.groupby(["network", "gamma", "acausality"])["value"].agg(mean="mean", std="std", n="count")
    summary = summary.reset_index()
    return summary.assign(log10_mean=np.log10(summary["mean"]),
                          gamma=summary["gamma"].astype(float), acausality=summary["acausality"].astype(int))


def sine_maps(report: StudyReport) -> None:
    """Fig. 4: log10 of the mean test MSE per network over γ (across) and a (upwards)."""
    import matplotlib.pyplot as plt

    summary = sine_summary(report)
    if summary.empty:
        return
    display_markdown("log10 of the test MSE averaged over the repetitions (each with its own filter w and inputs x), "
                     "per network, γ (across) and acausality a (upwards); colours from −4 to 0 as in the paper.")
    plots.heatmaps(summary, x="gamma", y="acausality", value="log10_mean", panel="network",
                   panels=network_order(summary["network"]), vmin=-4.0, vmax=0.0, label="log10 test MSE (ours)",
                   xlabel="scale γ", ylabel="filter acausality a")
    plt.show()


def sine_std_maps(report: StudyReport) -> None:
    """Fig. 6: the standard deviation of the test MSE over the repetitions."""
    import matplotlib.pyplot as plt

    summary = sine_summary(report, "fig6")
    if summary.empty:
        return
    if summary["n"].max() < 2:
        display_markdown(f"Only one repetition per (network, γ, a) at scale `{report.scale}`: no spread to show.")
        return
    display_markdown("Standard deviation of the test MSE over the repetitions (the paper's colour bar runs from 0 "
                     "to 0.25, in MSE units; it gives no numbers).")
    plots.heatmaps(summary, x="gamma", y="acausality", value="std", panel="network",
                   panels=network_order(summary["network"]), vmin=0.0, vmax=max(0.25, float(summary["std"].max())),
                   label="std of test MSE (ours)", cmap="magma", xlabel="scale γ", ylabel="filter acausality a")
    plt.show()


# -- Table 1 ------------------------------------------------------------------------------------
def net_name(bidirectional: str, delay: str) -> str:
    if bidirectional == "true":
        return "Bi-LSTM"
    return "LSTM" if label_int(delay) == 0 else f"d-LSTM delay={label_int(delay)}"


def table1(report: StudyReport) -> None:
    """Table 1 laid out as the paper's (its rows for every language), then the rows we ran of
    the supplementary Tables 2-4; a row we did not run says why."""
    joined = frames.join_published(report.ours("table1"), report.published("table1"))
    if joined.empty:
        return
    keys = ["treebank", "char_bidirectional", "char_delay", "word_bidirectional", "word_delay"]

    def rows_for(selection: pd.DataFrame) -> pd.DataFrame:
        out = []
        order = {key: i for i, key in enumerate(paper_rows)}
        groups = sorted(selection.groupby(keys, sort=False),
                        key=lambda item: (order.get(item[0], len(order)), [natural_key(k) for k in item[0]]))
        for key, group in groups:
            record = dict(zip(keys, key))
            row = {"language": LANGUAGES.get(record["treebank"], record["treebank"]),
                   "char-level": net_name(record["char_bidirectional"], record["char_delay"]),
                   "word-level": net_name(record["word_bidirectional"], record["word_delay"])}
            for metric, label in (("dev_accuracy", "validation"), ("test_accuracy", "test")):
                hit = group[group["metric"] == metric]
                rec = hit.iloc[0] if len(hit) else None
                ran = rec is not None and not pd.isna(rec["n"])
                row[f"{label} (ours)"] = format_mean_std(rec["mean"], rec["std"], rec["n"], metric) if ran else "not run"
                row[f"{label} (published)"] = (format_mean_std(rec["published"], rec["published_std"], None, metric)
                                               if rec is not None else "—")
            ran_any = group["n"].notna().any()
            row["note"] = "" if ran_any else not_run_reason(record["treebank"], report.scale)
            out.append(row)
        return pd.DataFrame(out)

    paper_rows = [(tb, *c, *w) for tb in LANGUAGES for c, w in TABLE1_ROWS]
    in_table1 = joined[[tuple(r) in paper_rows for r in joined[keys].itertuples(index=False)]]
    display_markdown("**Table 1** (a subset of Tables 2-4): ours beside the published accuracies (validation and test, "
                     "mean ± std over seeds; the paper: 5 repeats).")
    display_table(rows_for(in_table1))
    ran = joined[joined["n"].notna()]
    if len(ran):
        display_markdown("**Supplementary Tables 2-4**, the rows we ran (the paper's 31 configurations per language "
                         "are in `reports/published/drnn_table1.csv`):")
        display_table(rows_for(joined[joined.set_index(keys).index.isin(ran.set_index(keys).index)]))


def not_run_reason(treebank: str, scale: str) -> str:
    if not treebank.startswith("ud_en") and scale != "paper":
        return "not run: its training file is not in the data mirror; it runs at the `paper` scale, which downloads it"
    return f"not run: not in the `{scale}` scale's grid"


# -- cost ---------------------------------------------------------------------------------------
def cost(report: StudyReport) -> None:
    """Median time of a forward pass and of a training step against T, per network, and the
    Bi-LSTM / d-LSTM ratios beside the paper's count 2T / (T + d)."""
    import matplotlib.pyplot as plt
    sns = plots.seaborn_for_reports()

    table = report.analysis("cost")
    if table.empty:
        return
    table = table.assign(value=pd.to_numeric(table["value"]), T=table["T"].astype(int),
                         network=[network(m, d) for m, d in zip(table["model"], table["delay"])])
    threads = table["threads"].iloc[0] if "threads" in table else "?"
    display_markdown(f"Ours: median CPU time of repeated timings, the networks interleaved in one process on {threads} "
                     "thread(s) (CPU time is far less disturbed by other jobs than wall-clock time). What differs is "
                     "the number of sequential cell steps: T for the LSTM, T + d for the d-LSTM, 2T for the Bi-LSTM "
                     "(the paper's count; it reports no timings).")
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    order = network_order(table["network"])
    for ax, metric, title in zip(axes, ("forward_cpu_seconds", "train_step_cpu_seconds"),
                                 ("forward pass", "training step (forward, backward, Adam)")):
        data = table[table["metric"] == metric].assign(ms=lambda f: 1000 * f["value"])
        sns.lineplot(data=data, x="T", y="ms", hue="network", hue_order=order, style="network", markers=True,
                     dashes=False, ax=ax)
        ax.set(xscale="log", yscale="log", xlabel="sequence length T", ylabel="median CPU time (ms, ours)", title=title)
    fig.tight_layout()
    plt.show()
    rows = []
    for T, group in table.groupby("T"):
        bi = group[group["model"] == "brnn"].set_index("metric")["value"]
        for name, net in group.groupby("network"):
            values = net.set_index("metric")["value"]
            row = {"T": T, "network": name}
            for metric, label in (("forward_cpu_seconds", "forward"), ("train_step_cpu_seconds", "training step")):
                row[f"{label} (ms)"] = f"{1000 * values[metric]:.2f}"
                if name != "Bi-LSTM" and metric in bi:
                    row[f"Bi-LSTM / this, {label}"] = f"{bi[metric] / values[metric]:.2f}"
            d = label_int(net["delay"].iloc[0]) if name != "Bi-LSTM" else None
            row["2T / (T + d)"] = f"{2 * T / (T + d):.2f}" if d is not None else ""
            rows.append(row)
    display_table(pd.DataFrame(rows).fillna(""))
