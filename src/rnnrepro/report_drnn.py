"""Report logic of the drnn study (Turek et al.; ``reports/drnn.ipynb``).

The notebook stays short: it loads the run table, the analysis tables and the published
numbers, and calls the functions here, which summarise our runs (mean ± std over seeds or
repetitions), put them beside the paper's numbers, draw the figures and judge each claim from
our numbers (and, where the paper gives numbers, from the paper's).

Artifacts and their runs (``config/studies/drnn.yaml``): a figure's d-LSTM runs (``model``
``delayed``, label ``delay``; delay 0 is the LSTM) and its Bi-LSTM runs (``brnn``) are two
artifacts (``fig3`` + ``fig3_bilstm``, ``fig4`` + ``fig4_bilstm``, see :data:`GROUPS`); Table 1
is four (``table1``, ``table1_wordbi``, ``table1_charbi``, ``table1_bibi``) with the labels
``char_bidirectional``, ``char_delay``, ``word_bidirectional``, ``word_delay`` and ``treebank``.
Fig. 6 (standard deviations of Fig. 4's maps over repetitions) is computed from the fig4 runs.

Published Table 1-4 values (``reports/published/drnn_table1.csv``) name their row in the metric:
``<lang>:char=<net>:word=<net>:<metric>`` with ``<net>`` ``bi`` (Bi-LSTM), ``lstm`` (LSTM) or ``d<k>``
(d-LSTM with delay k) and ``<metric>`` ``dev_accuracy``, ``test_accuracy`` or those with ``_std``
(the paper's standard deviation over 5 repeats). Accuracies are fractions, shown as percentages.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from . import report_helpers as rh
from .tasks.reversal import analytic_bound, exact_bound

#: Report sections and the study artifacts whose runs each one uses.
GROUPS: dict[str, tuple[str, ...]] = {
    "fig3": ("fig3", "fig3_bilstm"),
    "fig4": ("fig4", "fig4_bilstm"),
    "fig6": ("fig4", "fig4_bilstm"),
    "table1": ("table1", "table1_wordbi", "table1_charbi", "table1_bibi"),
}
#: Titles and claims of the sections when the study file does not give them (notebook opened by hand).
DEFAULT_SPECS: dict[str, dict[str, str]] = {
    "theorem1": {"title": "Theorem 1: a k-layer stack and its flattened single-layer RNN",
                 "claim": "The flattened single-layer RNN reproduces the k-layer stack's outputs exactly, k − 1 steps late."},
    "fig3": {"title": "Sequence reversal accuracy against the delay d (Fig. 3)",
             "claim": "The d-LSTM follows the analytic bound and reaches the Bi-LSTM once d ≥ T − 1."},
    "fig4": {"title": "Sine of a partly acausal filter: log10 test MSE over γ × a (Fig. 4)",
             "claim": "The d-LSTM beats the Bi-LSTM where the filter is non-linear and acausal within its delay "
                      "(0 < a ≤ d); the LSTM is good only for causal filters."},
    "fig6": {"title": "Standard deviation of Fig. 4's test MSE over repetitions (Fig. 6)",
             "claim": "The maps of Fig. 4 are stable across repetitions with different filters and inputs."},
    "table1": {"title": "POS tagging accuracy (Table 1; supplementary Tables 2-4)",
               "claim": "A d-LSTM with delay 1 at both levels comes within 0.3 pp of the Bi-LSTM tagger and well above the LSTM tagger."},
    "cost": {"title": "Cost of a forward pass and a training step against sequence length (Sec. 3.3)",
             "claim": "A d-LSTM with a small delay costs less than the Bi-LSTM (T + d against 2T sequential steps)."},
}
#: Largest |difference| that counts as rounding error in float64 (Theorem 1 check).
FLOAT64_ROUNDING = 1e-12
#: Accuracy within which the d-LSTM "reaches" the Bi-LSTM, and follows the bound (fractions).
REACH_TOLERANCE = 0.01
BOUND_TOLERANCE = 0.03
#: γ from which the sine filter counts as non-linear (Σ w x ≈ 5 on average, so γ = 1 spans a period).
NON_LINEAR_GAMMA = 1.0
#: A model filters "well" at acausality a when its MSE is within this factor of its causal (a = 0) MSE.
GOOD_FACTOR = 3.0
#: Table 1: "within 0.3 %" of the Bi-LSTM (percentage points, as a fraction).
WITHIN = 0.003
LANGUAGES = {"en": "English (EWT)", "de": "German (GSD)", "fr": "French (GSD)"}
TREEBANK_LANGUAGE = {"ud_en_ewt": "en", "ud_de_gsd": "de", "ud_fr_gsd": "fr"}
#: Rows of Tables 2-4 in the paper's order (char-level network, word-level networks).
PAPER_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("bi", ("bi", "lstm", "d1", "d2", "d3", "d4", "d5")),
    ("lstm", ("bi", "lstm", "d1", "d2", "d3", "d4")),
    ("d1", ("bi", "lstm", "d1", "d2", "d3", "d4")),
    ("d3", ("bi", "lstm", "d1", "d2", "d3", "d4")),
    ("d5", ("bi", "lstm", "d1", "d2", "d3", "d4")),
)
#: The rows of the paper's Table 1 (char, word), for every language.
TABLE1_ROWS: tuple[tuple[str, str], ...] = (("lstm", "lstm"), ("d1", "d1"), ("d1", "bi"), ("bi", "bi"))
#: Table 1's rows (lang, char, word) in the paper's order (German, English, French).
TABLE1_KEYS: tuple[tuple[str, str, str], ...] = tuple((lang, c, w) for lang in ("de", "en", "fr") for c, w in TABLE1_ROWS)


# --------------------------------------------------------------------------- small helpers
def spec_of(artifacts: Mapping[str, Mapping[str, str]] | None, section: str) -> dict[str, str]:
    """Title and claim of a report section: the study's, else :data:`DEFAULT_SPECS`."""
    spec = dict(DEFAULT_SPECS.get(section, {"title": section, "claim": ""}))
    spec.update({k: v for k, v in ((artifacts or {}).get(section) or {}).items() if v})
    return spec


def group_rows(table: pd.DataFrame, section: str) -> pd.DataFrame:
    """Rows of the run table belonging to a report section (all its artifacts)."""
    if table.empty:
        return table
    return table[table["artifact"].isin(GROUPS.get(section, (section,)))].reset_index(drop=True)


def group_facts(table: pd.DataFrame, section: str) -> str:
    """How many runs (and seeds) a section uses and at which scale they ran."""
    rows = group_rows(table, section)
    runs = rows["run"].nunique()
    seeds = sorted(rows["seed"].dropna().unique().tolist())
    scales = ", ".join(f"`{s}`" for s in rh.scales_of(rows)) or "unknown"
    artifacts = ", ".join(f"`{a}`" for a in GROUPS.get(section, (section,)) if (rows["artifact"] == a).any())
    return (f"Ours: {runs} run{'s' if runs != 1 else ''} (artifacts {artifacts}; training seed"
            f"{'s' if len(seeds) != 1 else ''} {', '.join(map(str, seeds))}) at scale {scales}.")


def no_runs(section: str, spec: Mapping[str, str], table_path: str, scale: str) -> str:
    artifacts = ", ".join(f"`{a}`" for a in GROUPS.get(section, (section,)))
    return (f"No runs of **{section}** ({spec.get('title', section)}; artifacts {artifacts}) were found in "
            f"`{table_path}` at scale `{scale}`: nothing to show for it yet.")


def _label(frame: pd.DataFrame, column: str, default=np.nan) -> pd.Series:
    return frame[column] if column in frame else pd.Series(default, index=frame.index)


def _as_bool(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value) if value is not None and not (isinstance(value, float) and math.isnan(value)) else False


def _as_int(value, default: int = 0) -> int:
    try:
        if value is None or pd.isna(value):
            return default
    except (TypeError, ValueError):
        pass
    return int(float(value))


def network_name(model: str, delay=0, cell: str = "lstm") -> str:
    """``LSTM``, ``d-LSTM d=5`` or ``Bi-LSTM`` (the cell's name in place of LSTM for other cells)."""
    base = {"lstm": "LSTM"}.get(str(cell), str(cell).upper())
    if model == "brnn":
        return f"Bi-{base}"
    d = _as_int(delay)
    return base if d == 0 else f"d-{base} d={d}"


def network_order(names: Iterable[str]) -> list[str]:
    """The paper's order (Fig. 4: LSTM, Bi-LSTM, d-LSTM by increasing delay)."""
    def key(name: str):
        if name.startswith("Bi-"):
            return (1, 0, name)
        if name.startswith("d-"):
            return (2, int(name.rsplit("=", 1)[1]), name)
        return (0, 0, name)
    return sorted(set(names), key=key)


def with_networks(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.copy()
    rows["network"] = [network_name(m, d, c) for m, d, c in
                       zip(rows["model"], _label(rows, "delay", 0), rows["cell"])]
    rows["net_delay"] = [(-1 if m == "brnn" else _as_int(d)) for m, d in zip(rows["model"], _label(rows, "delay", 0))]
    return rows


def fmt_sci(value: float) -> str:
    return "—" if value is None or pd.isna(value) else f"{value:.1e}"


def fmt_pct(mean: float, std: float | None = None, n: int | None = None) -> str:
    """``94.57 ± 0.14 %`` (with ``(n=…)`` when n is given)."""
    if mean is None or pd.isna(mean):
        return "—"
    text = f"{100 * mean:.2f}"
    if std is not None and not pd.isna(std):
        text += f" ± {100 * std:.2f}"
    text += " %"
    if n is not None and not pd.isna(n):
        text += f" (n={int(n)})"
    return text


def fmt_pp(value: float) -> str:
    return "—" if value is None or pd.isna(value) else f"{100 * value:+.2f} pp"


# --------------------------------------------------------------------------- Theorem 1
def theorem1_table(analysis: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, k): the largest differences of the check and of the control."""
    if analysis.empty:
        return pd.DataFrame()
    wide = analysis.pivot_table(index=["cell", "layers", "delay"], columns="metric", values="value",
                                aggfunc="max").reset_index()
    out = pd.DataFrame({"cell": wide["cell"], "layers k": wide["layers"], "delay k − 1": wide["delay"]})
    names = {"max_abs_output_difference": "max |ŷ_{t+k−1} − y_t| (ours)",
             "max_abs_state_difference": "max |ĥ^{i}_{t+i−1} − h^(i)_t| (ours)",
             "max_abs_output_difference_early": "control: read at delay k − 2 (ours)",
             "max_abs_output": "max |y_t| (scale)"}
    for metric, name in names.items():
        if metric in wide:
            out[name] = [fmt_sci(v) for v in wide[metric]]
    out["published (Theorem 1)"] = "0 (exact equality)"
    return out


def theorem1_verdict(analysis: pd.DataFrame) -> rh.Verdict:
    claim = "the flattened RNN equals the stack at delay k − 1 (differences at float64 rounding level)"
    rows = analysis[analysis["metric"].isin(["max_abs_output_difference", "max_abs_state_difference"])] \
        if not analysis.empty else analysis
    if rows.empty:
        return rh.Verdict(claim, None, ["no Theorem 1 table"])
    worst = float(rows["value"].max())
    details = [(f"largest difference {worst:.1e} over cells {', '.join(sorted(rows['cell'].unique()))} "
                f"and k = {', '.join(map(str, sorted(rows['layers'].unique())))} "
                f"({'<' if worst < FLOAT64_ROUNDING else '≥'} {FLOAT64_ROUNDING:.0e})")]
    control = analysis[analysis["metric"] == "max_abs_output_difference_early"]
    if not control.empty:
        details.append(f"read one step early the outputs differ by at least {float(control['value'].min()):.1e}, "
                       "so the check is sensitive")
    return rh.Verdict(claim, worst < FLOAT64_ROUNDING, details)


# --------------------------------------------------------------------------- Fig. 3
def reversal_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std over seeds of dev/test accuracy per network and delay, with the bounds.

    Columns: network, model, delay, T, V, metric, mean, std, n, analytic_bound, exact_bound.
    """
    rows = group_rows(table, "fig3")
    columns = ["network", "model", "delay", "T", "V", "metric", "mean", "std", "n", "analytic_bound", "exact_bound"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows = with_networks(rows[rows["metric"].isin(["dev_accuracy", "test_accuracy"])])
    rows["delay"] = [(-1 if m == "brnn" else _as_int(d)) for m, d in zip(rows["model"], _label(rows, "delay", 0))]
    rows["T"] = [_as_int(v, 20) for v in _label(rows, "T", 20)]
    rows["V"] = [_as_int(v, 4) for v in _label(rows, "V", 4)]
    summary = (rows.groupby(["network", "model", "delay", "T", "V", "metric"])["value"]
               .agg(mean="mean", std="std", n="count").reset_index())
    bounded = summary["model"] != "brnn"
    summary["analytic_bound"] = [analytic_bound(d, T, V) if b else np.nan
                                 for d, T, V, b in zip(summary["delay"], summary["T"], summary["V"], bounded)]
    summary["exact_bound"] = [exact_bound(d, T, V) if b else np.nan
                              for d, T, V, b in zip(summary["delay"], summary["T"], summary["V"], bounded)]
    return summary[columns].sort_values(["T", "delay", "metric"]).reset_index(drop=True)


def reversal_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Display table: per delay, d-LSTM dev and test accuracy, the bounds, test − exact bound; Bi-LSTM last."""
    if summary.empty:
        return pd.DataFrame()
    keys = ["network", "delay", "T", "V"]
    wide = summary.pivot_table(index=keys, columns="metric", values=["mean", "std", "n"], aggfunc="first")
    out = []
    for key in wide.index:
        rec = dict(zip(keys, key))
        bound = summary[(summary["network"] == rec["network"]) & (summary["delay"] == rec["delay"])
                        & (summary["T"] == rec["T"])].iloc[0]
        values = wide.loc[key]

        def get(stat, metric, values=values):
            return values.get((stat, metric), np.nan)

        out.append({
            "network": rec["network"], "T": rec["T"], "delay d": "—" if rec["delay"] < 0 else rec["delay"],
            "dev accuracy (ours)": fmt_pct(get("mean", "dev_accuracy"), get("std", "dev_accuracy"), get("n", "dev_accuracy")),
            "test accuracy (ours)": fmt_pct(get("mean", "test_accuracy"), get("std", "test_accuracy"), get("n", "test_accuracy")),
            "paper's bound": fmt_pct(bound["analytic_bound"]),
            "exact bound": fmt_pct(bound["exact_bound"]),
            "test − exact bound": fmt_pp(get("mean", "test_accuracy") - bound["exact_bound"]),
            "_order": (rec["T"], rec["delay"] < 0, rec["delay"]),
        })
    frame = pd.DataFrame(out).sort_values("_order").drop(columns="_order")
    return frame.reset_index(drop=True)


def reversal_verdicts(summary: pd.DataFrame, published: pd.DataFrame) -> list[rh.Verdict]:
    """Our verdicts on Fig. 3's claims (test accuracy)."""
    claim_reach = "the d-LSTM reaches the Bi-LSTM on reversal once d ≥ T − 1"
    claim_bound = "the d-LSTM achieves the expected accuracy bound at every delay"
    test = summary[summary["metric"] == "test_accuracy"]
    dl = test[test["model"] != "brnn"]
    bi = test[test["model"] == "brnn"]
    verdicts = []
    for T, rows in dl.groupby("T") if not dl.empty else []:
        bi_T = bi[bi["T"] == T]
        late = rows[rows["delay"] >= T - 1]
        if bi_T.empty or late.empty:
            verdicts.append(rh.Verdict(claim_reach, None, [f"T={T}: no Bi-LSTM or no d-LSTM with d ≥ {T - 1}"]))
        else:
            target = float(bi_T["mean"].iloc[0])
            details = [f"T={T}: Bi-LSTM {fmt_pct(target)}"]
            ok = True
            for rec in late.to_dict("records"):
                good = rec["mean"] >= target - REACH_TOLERANCE
                ok &= good
                details.append(f"d={rec['delay']}: {fmt_pct(rec['mean'])} {'≥' if good else '<'} Bi-LSTM − "
                               f"{100 * REACH_TOLERANCE:.0f} pp")
            matched = rows[rows["mean"] >= target - REACH_TOLERANCE]["delay"]
            stated = rh.published_value(published, "fig3", "first_delay_matching_bilstm", "any", "lstm")
            first = int(matched.min()) if len(matched) else None
            details.append(f"first delay within {100 * REACH_TOLERANCE:.0f} pp of the Bi-LSTM: "
                           f"{first if first is not None else 'none'} (T − 1 = {T - 1}; the paper, with T = 20: "
                           f"{int(stated) if stated is not None else '—'})")
            verdicts.append(rh.Verdict(claim_reach, bool(ok), details))
        gaps = [(rec["delay"], rec["exact_bound"] - rec["mean"]) for rec in rows.to_dict("records")]
        worst_d, worst = max(gaps, key=lambda g: g[1])
        verdicts.append(rh.Verdict(
            claim_bound, bool(worst <= BOUND_TOLERANCE),
            [(f"T={T}: largest shortfall below the exact bound {100 * worst:.1f} pp at d={worst_d} "
              f"({'≤' if worst <= BOUND_TOLERANCE else '>'} {100 * BOUND_TOLERANCE:.0f} pp)"),
             f"largest excess over the paper's bound {100 * max(0.0, float((rows['mean'] - rows['analytic_bound']).max())):.1f} pp"]))
    if not verdicts:
        verdicts = [rh.Verdict(claim_reach, None, ["no fig3 runs"])]
    return verdicts


def plot_reversal(summary: pd.DataFrame):
    """Fig. 3: accuracy against delay, d-LSTM val and test, LSTM and Bi-LSTM lines, the bounds."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    Ts = sorted(summary["T"].unique())
    fig, axes = plt.subplots(1, len(Ts), figsize=(7.5 * len(Ts), 4), squeeze=False)
    for ax, T in zip(axes[0], Ts):
        rows = summary[summary["T"] == T]
        dl = rows[rows["model"] != "brnn"].copy()
        dl["curve"] = dl["metric"].map({"dev_accuracy": "d-LSTM val (ours)", "test_accuracy": "d-LSTM test (ours)"})
        sns.lineplot(data=dl, x="delay", y="mean", hue="curve", style="curve", markers=True, dashes=False, ax=ax)
        delays = np.arange(0, max(int(dl["delay"].max()) if len(dl) else T, T) + 1)
        V = int(rows["V"].iloc[0])
        ax.plot(delays, [analytic_bound(d, T, V) for d in delays], "k--", lw=1, label="paper's bound (Max Performance)")
        ax.plot(delays, [exact_bound(d, T, V) for d in delays], "k:", lw=1, marker=".", label="exact bound")
        lstm = dl[(dl["delay"] == 0) & (dl["metric"] == "test_accuracy")]
        if len(lstm):
            ax.axhline(float(lstm["mean"].iloc[0]), color="tab:red", lw=1, label="LSTM test (ours)")
        bi = rows[(rows["model"] == "brnn") & (rows["metric"] == "test_accuracy")]
        if len(bi):
            ax.axhline(float(bi["mean"].iloc[0]), color="tab:purple", lw=1, label="Bi-LSTM test (ours)")
        ax.set_xlabel("delay d")
        ax.set_ylabel("accuracy")
        ax.set_title(f"sequence reversal, T = {T}, V = {V}")
        ax.set_xticks(delays)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- Figs. 4 and 6
def sine_summary(table: pd.DataFrame, metric: str = "test_mse") -> pd.DataFrame:
    """Per network, γ and a: mean, std and count of the MSE over repetitions (data seeds and
    seeds), log10 of the mean (Fig. 4) and mean / std of log10 MSE.

    Columns: network, net_delay, gamma, acausality, mean, std, n, log10_mean, mean_log10, std_log10.
    """
    rows = group_rows(table, "fig4")
    columns = ["network", "net_delay", "gamma", "acausality", "mean", "std", "n",
               "log10_mean", "mean_log10", "std_log10"]
    if rows.empty or not {"gamma", "acausality"} <= set(rows.columns):
        return pd.DataFrame(columns=columns)
    rows = with_networks(rows[rows["metric"] == metric])
    rows["gamma"] = rows["gamma"].astype(float)
    rows["acausality"] = rows["acausality"].astype(int)
    rows["log10"] = np.log10(rows["value"].astype(float))
    grouped = rows.groupby(["network", "net_delay", "gamma", "acausality"])
    summary = grouped["value"].agg(mean="mean", std="std", n="count").reset_index()
    logs = grouped["log10"].agg(mean_log10="mean", std_log10="std").reset_index()
    summary = summary.merge(logs, on=["network", "net_delay", "gamma", "acausality"])
    summary["log10_mean"] = np.log10(summary["mean"])
    return summary[columns]


def plot_sine_maps(summary: pd.DataFrame, value: str = "log10_mean", vmin: float | None = -4.0,
                   vmax: float | None = 0.0, label: str = "log10 test MSE (ours)", cmap: str = "viridis"):
    """Figs. 4 / 6: one heat map per network, γ across, acausality a upwards (as in the paper)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    networks = network_order(summary["network"])
    fig, axes = plt.subplots(1, len(networks), figsize=(3.6 * len(networks), 3.4), squeeze=False)
    if vmin is None:
        vmin = float(summary[value].min())
    if vmax is None:
        vmax = float(summary[value].max())
    for letter, ax, name in zip("abcdefgh", axes[0], networks):
        grid = summary[summary["network"] == name].pivot_table(index="acausality", columns="gamma", values=value)
        grid = grid.sort_index(ascending=False)
        sns.heatmap(grid, ax=ax, vmin=vmin, vmax=vmax, cmap=cmap, cbar=ax is axes[0][-1],
                    cbar_kws={"label": label}, annot=grid.shape[0] * grid.shape[1] <= 40, fmt=".2f",
                    annot_kws={"fontsize": 7})
        ax.set_title(f"({letter}) {name}")
        ax.set_xlabel("scale γ")
        ax.set_ylabel("filter acausality a")
    fig.tight_layout()
    return fig


def sine_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Display table: rows (γ, a), one column per network: log10 mean test MSE (std of log10, n)."""
    if summary.empty:
        return pd.DataFrame()
    out = summary.copy()
    out["cell"] = [f"{m:.2f}" + (f" (±{s:.2f}, n={n})" if not pd.isna(s) else f" (n={n})")
                   for m, s, n in zip(out["log10_mean"], out["std_log10"], out["n"])]
    wide = out.pivot_table(index=["gamma", "acausality"], columns="network", values="cell", aggfunc="first")
    wide = wide[network_order(wide.columns)].reset_index()
    wide.columns.name = None
    return wide.rename(columns={"gamma": "γ", "acausality": "a"})


def sine_std_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Display table of Fig. 6: std of the test MSE over repetitions, per (γ, a) and network."""
    if summary.empty:
        return pd.DataFrame()
    out = summary.copy()
    out["cell"] = ["—" if pd.isna(s) else f"{s:.4f}" for s in out["std"]]
    wide = out.pivot_table(index=["gamma", "acausality"], columns="network", values="cell", aggfunc="first")
    wide = wide[network_order(wide.columns)].reset_index()
    wide.columns.name = None
    return wide.rename(columns={"gamma": "γ", "acausality": "a"})


def last_good_acausality(summary: pd.DataFrame) -> pd.DataFrame:
    """Per network and γ: the largest a (of those run) up to which the MSE stays within
    :data:`GOOD_FACTOR` of the network's MSE at a = 0 (every a' ≤ a), beside the paper's statement."""
    rows = []
    for (name, delay, gamma), group in summary.groupby(["network", "net_delay", "gamma"]):
        group = group.sort_values("acausality")
        if 0 not in set(group["acausality"]):
            continue
        causal = float(group.loc[group["acausality"] == 0, "mean"].iloc[0])
        last = 0
        for rec in group.to_dict("records"):
            if rec["mean"] <= GOOD_FACTOR * causal:
                last = rec["acausality"]
            else:
                break
        rows.append({"network": name, "net_delay": delay, "gamma": gamma, "last_good_a": last,
                     "acausalities run": ", ".join(map(str, group["acausality"]))})
    return pd.DataFrame(rows)


def last_good_table(summary: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    good = last_good_acausality(summary)
    if good.empty:
        return good
    out = []
    for (name, delay), group in good.groupby(["network", "net_delay"]):
        stated = None if delay < 0 else rh.published_value(published, "fig4", f"last_good_acausality_d{delay}", "any", "lstm")
        out.append({"network": name,
                    "largest well-filtered a, per γ (ours)": "; ".join(f"γ={g:g}: {a}" for g, a in
                                                                       zip(group["gamma"], group["last_good_a"])),
                    "acausalities run": group["acausalities run"].iloc[0],
                    "published (Sec. 4.2 text)": "—" if stated is None else f"a ≤ {int(stated)}",
                    "_order": network_order(good["network"]).index(name)})
    return pd.DataFrame(out).sort_values("_order").drop(columns="_order").reset_index(drop=True)


def sine_verdicts(summary: pd.DataFrame) -> list[rh.Verdict]:
    """Our verdicts on Fig. 4's claims (mean test MSE over repetitions)."""
    main = "the d-LSTM beats the Bi-LSTM where the filter is non-linear (γ ≥ 1) and acausal within its delay (0 < a ≤ d)"
    lstm_claim = "the LSTM is good only for causal filters (its MSE is lowest at a = 0, for every γ)"
    switch = "a d-LSTM with delay d filters better every a ≤ d than any a > d (for every γ)"
    bi_claim = "the Bi-LSTM beats the LSTM on acausal filters (a > 0) at the most linear γ run"
    if summary.empty:
        return [rh.Verdict(main, None, ["no fig4 runs"])]
    mean = summary.set_index(["network", "gamma", "acausality"])["mean"]
    bi_name = next((n for n in summary["network"].unique() if n.startswith("Bi-")), None)
    delays = sorted(d for d in summary["net_delay"].unique() if d > 0)
    verdicts = []
    # main claim
    details, ok, judged = [], True, False
    for d in delays:
        name = summary.loc[summary["net_delay"] == d, "network"].iloc[0]
        cells = summary[(summary["network"] == name) & (summary["gamma"] >= NON_LINEAR_GAMMA)
                        & (summary["acausality"] > 0) & (summary["acausality"] <= d)]
        wins = total = 0
        for rec in cells.to_dict("records"):
            key = (bi_name, rec["gamma"], rec["acausality"])
            if bi_name is None or key not in mean.index:
                continue
            total += 1
            wins += rec["mean"] < mean[key]
        if total:
            judged = True
            ok &= wins == total
            details.append(f"{name}: lower MSE than the Bi-LSTM in {wins}/{total} cells with γ ≥ {NON_LINEAR_GAMMA:g}, "
                           f"0 < a ≤ {d}")
    verdicts.append(rh.Verdict(main, bool(ok) if judged else None,
                               details or [f"no d-LSTM and Bi-LSTM pair with γ ≥ {NON_LINEAR_GAMMA:g} and 0 < a ≤ d"]))
    # the LSTM
    lstm = summary[summary["net_delay"] == 0]
    details, ok, judged = [], True, False
    for gamma, group in lstm.groupby("gamma"):
        causal = group[group["acausality"] == 0]
        acausal = group[group["acausality"] > 0]
        if causal.empty or acausal.empty:
            continue
        judged = True
        good = float(causal["mean"].iloc[0]) < float(acausal["mean"].min())
        ok &= good
        details.append(f"γ={gamma:g}: a=0 {math.log10(float(causal['mean'].iloc[0])):.2f} "
                       f"{'<' if good else '≥'} best a>0 {math.log10(float(acausal['mean'].min())):.2f} (log10 MSE)")
    verdicts.append(rh.Verdict(lstm_claim, bool(ok) if judged else None, details or ["no LSTM runs with a = 0 and a > 0"]))
    # the delay switch
    details, ok, judged = [], True, False
    for d in delays:
        group_d = summary[summary["net_delay"] == d]
        name = group_d["network"].iloc[0]
        for gamma, group in group_d.groupby("gamma"):
            inside, outside = group[group["acausality"] <= d], group[group["acausality"] > d]
            if inside.empty or outside.empty:
                continue
            judged = True
            good = float(inside["mean"].max()) < float(outside["mean"].min())
            ok &= good
            details.append(f"{name}, γ={gamma:g}: worst a≤{d} {math.log10(float(inside['mean'].max())):.2f} "
                           f"{'<' if good else '≥'} best a>{d} {math.log10(float(outside['mean'].min())):.2f}")
    verdicts.append(rh.Verdict(switch, bool(ok) if judged else None,
                               details or ["no d-LSTM run on both sides of its delay (needs a > d in the grid)"]))
    # the Bi-LSTM at small gamma
    details, ok, judged = [], True, False
    if bi_name is not None and not lstm.empty:
        gamma = float(summary["gamma"].min())
        for a in sorted(summary.loc[summary["acausality"] > 0, "acausality"].unique()):
            kb, kl = (bi_name, gamma, a), (lstm["network"].iloc[0], gamma, a)
            if kb in mean.index and kl in mean.index:
                judged = True
                good = mean[kb] < mean[kl]
                ok &= good
                details.append(f"γ={gamma:g}, a={a}: Bi-LSTM {math.log10(mean[kb]):.2f} {'<' if good else '≥'} "
                               f"LSTM {math.log10(mean[kl]):.2f}")
    verdicts.append(rh.Verdict(bi_claim, bool(ok) if judged else None, details or ["no Bi-LSTM and LSTM pair with a > 0"]))
    return verdicts


# --------------------------------------------------------------------------- Table 1
def net_key(bidirectional, delay) -> str:
    """``bi``, ``lstm`` or ``d<k>`` from a level's labels."""
    if _as_bool(bidirectional):
        return "bi"
    d = _as_int(delay)
    return "lstm" if d == 0 else f"d{d}"


def net_label(key: str) -> str:
    return {"bi": "Bi-LSTM", "lstm": "LSTM"}.get(key, f"d-LSTM delay={key[1:]}")


def language_of(treebank) -> str:
    text = str(treebank)
    for prefix, lang in TREEBANK_LANGUAGE.items():
        if text.startswith(prefix):
            return lang
    return "en" if text in ("nan", "None") else text


def pos_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std over seeds of dev/test accuracy per (lang, char, word). Columns: lang, char,
    word, metric, mean, std, n."""
    rows = group_rows(table, "table1")
    columns = ["lang", "char", "word", "metric", "mean", "std", "n"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows = rows[rows["metric"].isin(["dev_accuracy", "test_accuracy"])].copy()
    rows["lang"] = [language_of(t) for t in _label(rows, "treebank", "ud_en_ewt")]
    rows["char"] = [net_key(b, d) for b, d in zip(_label(rows, "char_bidirectional", True), _label(rows, "char_delay", 0))]
    rows["word"] = [net_key(b, d) for b, d in zip(_label(rows, "word_bidirectional", True), _label(rows, "word_delay", 0))]
    summary = rows.groupby(["lang", "char", "word", "metric"])["value"].agg(mean="mean", std="std", n="count")
    return summary.reset_index()[columns]


def pos_published(published: pd.DataFrame) -> pd.DataFrame:
    """The published Tables 1-4 as rows lang, char, word, metric, mean, std, source."""
    pub = rh.published_for(published, "table1")
    records: dict[tuple, dict] = {}
    for rec in pub.to_dict("records"):
        parts = str(rec["metric"]).split(":")
        if len(parts) != 4:
            continue
        lang, char, word, metric = parts[0], parts[1].removeprefix("char="), parts[2].removeprefix("word="), parts[3]
        is_std = metric.endswith("_std")
        base = metric.removesuffix("_std")
        entry = records.setdefault((lang, char, word, base), {"lang": lang, "char": char, "word": word,
                                                              "metric": base, "mean": np.nan, "std": np.nan,
                                                              "source": rec["source"]})
        entry["std" if is_std else "mean"] = float(rec["value"])
    return pd.DataFrame(list(records.values()), columns=["lang", "char", "word", "metric", "mean", "std", "source"])


def _row_order(lang: str, char: str, word: str) -> tuple:
    langs = list(LANGUAGES)
    chars = [c for c, _ in PAPER_ROWS]
    words = dict(PAPER_ROWS).get(char, ())
    return (langs.index(lang) if lang in langs else len(langs), chars.index(char) if char in chars else 99,
            words.index(word) if word in words else 99, lang, char, word)


def not_run_reason(lang: str, scale: str) -> str:
    if lang != "en" and scale != "paper":
        return (f"not run: the {LANGUAGES.get(lang, lang)} training file is not in the data mirror; "
                "these rows run at the `paper` scale, which downloads it")
    return f"not run: not in the `{scale}` scale's grid"


def pos_table(summary: pd.DataFrame, published: pd.DataFrame, scale: str,
              rows: Sequence[tuple[str, str, str]] | None = None, only_run: bool = False) -> pd.DataFrame:
    """Ours beside the published Tables 1-4, one row per (language, char network, word network).

    ``rows`` restricts to those (lang, char, word), shown in that order (e.g. Table 1's);
    otherwise rows follow Tables 2-4. ``only_run`` keeps the rows we ran. A row we did not run
    says why in its ``note``.
    """
    pub = pos_published(published)
    keys = set(map(tuple, summary[["lang", "char", "word"]].drop_duplicates().values.tolist()))
    keys |= set(map(tuple, pub[["lang", "char", "word"]].drop_duplicates().values.tolist()))
    if rows is not None:
        rows = list(rows)
        keys = sorted(keys & set(rows), key=rows.index)
    else:
        keys = sorted(keys, key=lambda k: _row_order(*k))
    out = []
    for lang, char, word in keys:
        ours = summary[(summary["lang"] == lang) & (summary["char"] == char) & (summary["word"] == word)]
        theirs = pub[(pub["lang"] == lang) & (pub["char"] == char) & (pub["word"] == word)]
        if only_run and ours.empty:
            continue

        def pick(frame, metric):
            hit = frame[frame["metric"] == metric]
            return hit.iloc[0] if len(hit) else None

        rec = {"language": LANGUAGES.get(lang, lang), "char-level network": net_label(char),
               "word-level network": net_label(word)}
        for metric, label in (("dev_accuracy", "validation"), ("test_accuracy", "test")):
            o, p = pick(ours, metric), pick(theirs, metric)
            rec[f"{label} (ours)"] = fmt_pct(o["mean"], o["std"], o["n"]) if o is not None else "not run"
            rec[f"{label} (published)"] = fmt_pct(p["mean"], p["std"]) if p is not None else "—"
            if metric == "test_accuracy":
                rec["test difference (ours − published)"] = (fmt_pp(o["mean"] - p["mean"])
                                                             if o is not None and p is not None else "—")
        rec["source"] = theirs["source"].iloc[0] if len(theirs) else ""
        rec["note"] = "" if len(ours) else not_run_reason(lang, scale)
        out.append(rec)
    return pd.DataFrame(out)


def not_run_summary(summary: pd.DataFrame, published: pd.DataFrame, scale: str) -> list[str]:
    """Sentences on the published rows we did not run, by language and reason."""
    pub = pos_published(published)
    ran = set(map(tuple, summary[["lang", "char", "word"]].drop_duplicates().values.tolist()))
    lines = []
    for lang, name in LANGUAGES.items():
        rows = {tuple(r) for r in pub.loc[pub["lang"] == lang, ["lang", "char", "word"]].drop_duplicates().values.tolist()}
        missing = rows - ran
        if not rows:
            continue
        if missing == rows:
            lines.append(f"{name}: none of the {len(rows)} published rows was run — "
                         f"{not_run_reason(lang, scale).removeprefix('not run: ')}.")
        elif missing:
            lines.append(f"{name}: {len(rows) - len(missing)} of {len(rows)} published rows were run; "
                         f"the other {len(missing)} are not in the `{scale}` scale's grid.")
        else:
            lines.append(f"{name}: all {len(rows)} published rows were run.")
    return lines


def _accuracy(frame: pd.DataFrame, lang: str, char: str, word: str, metric: str = "test_accuracy") -> float | None:
    hit = frame[(frame["lang"] == lang) & (frame["char"] == char) & (frame["word"] == word) & (frame["metric"] == metric)]
    return float(hit["mean"].iloc[0]) if len(hit) and not pd.isna(hit["mean"].iloc[0]) else None


def pos_verdicts(frame: pd.DataFrame) -> list[rh.Verdict]:
    """Table 1's claims judged on ``frame`` (:func:`pos_summary` or :func:`pos_published`), test accuracy."""
    langs = [lang for lang in LANGUAGES if (frame["lang"] == lang).any()] + \
        sorted(set(frame["lang"]) - set(LANGUAGES))
    claims = []

    def judge(claim, check):
        details, ok, judged = [], True, False
        for lang in langs:
            result = check(lang)
            if result is None:
                continue
            good, text = result
            judged = True
            ok &= good
            details.append(f"{lang.upper()}: {text}")
        claims.append(rh.Verdict(claim, bool(ok) if judged else None, details or ["the rows it needs were not run"]))

    def main(lang):
        d1, bi, lstm = (_accuracy(frame, lang, *k) for k in (("d1", "d1"), ("bi", "bi"), ("lstm", "lstm")))
        if None in (d1, bi, lstm):
            return None
        good = d1 >= bi - WITHIN and d1 > lstm
        return good, (f"d-LSTM/d-LSTM {fmt_pct(d1)} vs Bi-LSTM/Bi-LSTM {fmt_pct(bi)} ({fmt_pp(d1 - bi)}) "
                      f"and LSTM/LSTM {fmt_pct(lstm)}")

    def word_level(lang):
        pairs = [(c, _accuracy(frame, lang, c, "bi"), _accuracy(frame, lang, c, "lstm")) for c, _ in PAPER_ROWS]
        pairs = [(c, b, l) for c, b, l in pairs if b is not None and l is not None]
        if not pairs:
            return None
        good = all(b > l for _, b, l in pairs)
        return good, "; ".join(f"char {net_label(c)}: word Bi-LSTM {fmt_pct(b)} {'>' if b > l else '≤'} "
                               f"word LSTM {fmt_pct(l)}" for c, b, l in pairs)

    def char_level(lang):
        lstm_bi, bi_bi = _accuracy(frame, lang, "lstm", "bi"), _accuracy(frame, lang, "bi", "bi")
        if None in (lstm_bi, bi_bi):
            return None
        return lstm_bi >= bi_bi - WITHIN, (f"LSTM/Bi-LSTM {fmt_pct(lstm_bi)} vs Bi-LSTM/Bi-LSTM {fmt_pct(bi_bi)} "
                                           f"({fmt_pp(lstm_bi - bi_bi)})")

    def char_delay(lang):
        if lang == "fr":
            return None  # the paper claims it for English and German only
        d1_bi, bi_bi = _accuracy(frame, lang, "d1", "bi"), _accuracy(frame, lang, "bi", "bi")
        if None in (d1_bi, bi_bi):
            return None
        return d1_bi > bi_bi, f"d-LSTM(1)/Bi-LSTM {fmt_pct(d1_bi)} vs Bi-LSTM/Bi-LSTM {fmt_pct(bi_bi)}"

    judge("a d-LSTM with delay 1 at both levels is within 0.3 pp of the Bi-LSTM tagger and above the LSTM tagger", main)
    judge("replacing the word-level Bi-LSTM by an LSTM lowers the accuracy", word_level)
    judge("replacing only the character-level Bi-LSTM by an LSTM does not lower the accuracy (by more than 0.3 pp)",
          char_level)
    judge("a character-level d-LSTM with delay 1 improves slightly on the double Bi-LSTM (English, German)", char_delay)
    return claims


# --------------------------------------------------------------------------- cost
def cost_frame(analysis: pd.DataFrame) -> pd.DataFrame:
    """The cost table with a ``network`` column (LSTM, d-LSTM d=k, Bi-LSTM)."""
    if analysis.empty:
        return analysis
    frame = analysis.copy()
    frame["network"] = [network_name(m, d) for m, d in zip(frame["model"], frame["delay"])]
    return frame


def cost_metric(analysis: pd.DataFrame, what: str) -> str:
    """``<what>_cpu_seconds`` (CPU time of the timing process) when recorded, else the wall-clock ``<what>_seconds``."""
    cpu = f"{what}_cpu_seconds"
    return cpu if not analysis.empty and (analysis["metric"] == cpu).any() else f"{what}_seconds"


def plot_cost(analysis: pd.DataFrame):
    """Median time of a forward pass and of a training step against T, one line per network."""
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    frame = cost_frame(analysis)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    order = network_order(frame["network"])
    for ax, what, title in zip(axes, ("forward", "train_step"),
                               ("forward pass", "training step (forward, backward, Adam)")):
        metric = cost_metric(frame, what)
        data = frame[frame["metric"] == metric].copy()
        data["value"] = data["value"] * 1000
        sns.lineplot(data=data, x="T", y="value", hue="network", hue_order=order,
                     style="network", style_order=order, markers=True, dashes=False, ax=ax)
        ax.set_xscale("log")
        ax.set_yscale("log")
        lengths = sorted(data["T"].unique())
        ax.set_xticks(lengths, [str(t) for t in lengths])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("sequence length T")
        ax.set_ylabel(f"median {'CPU' if 'cpu' in metric else 'wall-clock'} time (ms, ours)")
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def cost_table(analysis: pd.DataFrame) -> pd.DataFrame:
    """Per T and network: forward and training-step times (CPU and wall clock), the measured
    Bi-LSTM / d-LSTM ratio (CPU time) and the ratio 2T / (T + d) the paper's count of sequential
    steps predicts."""
    frame = cost_frame(analysis)
    if frame.empty:
        return pd.DataFrame()
    forward, train = cost_metric(frame, "forward"), cost_metric(frame, "train_step")
    wide = frame.pivot_table(index=["T", "model", "delay", "network"], columns="metric", values="value").reset_index()
    clock = "CPU" if "cpu" in forward else "wall"
    out = []
    for T, group in wide.groupby("T"):
        bi = group[group["model"] == "brnn"]
        for rec in group.sort_values(["model", "delay"]).to_dict("records"):
            row = {"T": T, "network": rec["network"], "sequential steps": int(rec.get("sequential_steps", np.nan)),
                   f"forward, {clock} (ms)": f"{1000 * rec[forward]:.2f}",
                   f"training step, {clock} (ms)": f"{1000 * rec[train]:.2f}"}
            if clock == "CPU":
                row["forward, wall (ms)"] = f"{1000 * rec['forward_seconds']:.2f}"
                row["training step, wall (ms)"] = f"{1000 * rec['train_step_seconds']:.2f}"
            row["parameters"] = int(rec["params"]) if "params" in rec and not pd.isna(rec["params"]) else "—"
            if len(bi) and rec["model"] != "brnn":
                b = bi.iloc[0]
                row[f"Bi-LSTM / this, forward ({clock})"] = f"{b[forward] / rec[forward]:.2f}"
                row[f"Bi-LSTM / this, training step ({clock})"] = f"{b[train] / rec[train]:.2f}"
                row["2T / (T + d) (paper's count)"] = f"{2 * T / (T + rec['delay']):.2f}"
            out.append(row)
    return pd.DataFrame(out).fillna("")


def cost_verdicts(analysis: pd.DataFrame) -> list[rh.Verdict]:
    """The d-LSTM with the smallest delay run (the paper's POS recommendation is d = 1) against the
    Bi-LSTM at every T, for the forward pass and the training step (CPU time when recorded); the
    details also count how often every other delay d < T beats the Bi-LSTM."""
    frame = cost_frame(analysis)
    verdicts = []
    for what, label in (("forward", "forward pass"), ("train_step", "training step")):
        delayed = frame[frame["model"] == "delayed"] if not frame.empty else frame
        smallest = int(delayed["delay"].min()) if len(delayed) else None
        claim = (f"a d-LSTM with a small delay (the smallest run, d = {smallest}) needs less time for a {label} "
                 "than the Bi-LSTM, at every T")
        if frame.empty or smallest is None:
            verdicts.append(rh.Verdict(claim, None, ["no cost table"]))
            continue
        metric = cost_metric(frame, what)
        rows = frame[frame["metric"] == metric]
        clock = "CPU" if "cpu" in metric else "wall-clock"
        details, ok, judged, wins, total = [], True, False, 0, 0
        for T, group in rows.groupby("T"):
            bi = group[group["model"] == "brnn"]
            small = group[(group["model"] == "delayed") & (group["delay"] == smallest)]
            if bi.empty or small.empty:
                continue
            judged = True
            b, v = float(bi["value"].iloc[0]), float(small["value"].iloc[0])
            ok &= v < b
            details.append(f"T={T}: d-LSTM d={smallest} {1000 * v:.1f} ms {'<' if v < b else '≥'} Bi-LSTM {1000 * b:.1f} ms")
            others = group[(group["model"] == "delayed") & (group["delay"] < T)]
            wins += int((others["value"] < b).sum())
            total += len(others)
        if total:
            details.append(f"over every delay d < T run: the d-LSTM is faster in {wins} of {total} cases")
        if details:
            details.insert(0, f"median {clock} times")
        verdicts.append(rh.Verdict(claim, bool(ok) if judged else None, details or ["no d-LSTM beside a Bi-LSTM"]))
    return verdicts


# --------------------------------------------------------------------------- loading
def load_analysis(analyses: Mapping[str, str] | None, artifact: str) -> pd.DataFrame:
    """An analysis artifact's table (empty when it has not been computed)."""
    path = (analyses or {}).get(artifact)
    if not path or not Path(path).exists():
        return pd.DataFrame(columns=["metric", "value"])
    return pd.read_csv(path)


def verdict_parts(verdicts: Iterable[rh.Verdict], who: str, scale: str | None) -> list[tuple[str, str]]:
    return [("markdown", v.text(who, scale)) for v in verdicts]


def published_lines(published: pd.DataFrame, artifact: str) -> str:
    """The published statements of an artifact as a Markdown list: value, what it is, source."""
    pub = rh.published_for(published, artifact)
    if pub.empty:
        return ""
    lines = [f"**Published ({', '.join(rh.sources(published, artifact))}):**"]
    for rec in pub.to_dict("records"):
        value = rec["value"]
        value = int(value) if float(value).is_integer() else value
        lines.append(f"- `{rec['metric']}` = {value}: {rec['note']}")
    return "\n".join(lines)
