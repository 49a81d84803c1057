"""The wsum paper's own tables and heat maps ("LSTM as a dynamically computed element-wise
weighted sum"; ``reports/wsum.ipynb``).

Tables 1-4 laid out as the paper's (its model names, ours beside the published numbers, a note
on every row we did not run) and the heat maps of Table 5 with the eq. 11 check beside them.
The claims that need code are :mod:`rnnrepro.claims.papers.wsum`.
"""
from __future__ import annotations

import pandas as pd

from ...labels import cell_name
from ...metrics.formats import format_mean_std
from .. import frames, plots
from ..study import StudyReport, display_markdown, display_table

#: The paper's cells, in its tables' order (their names: rnnrepro.labels.CELL_NAMES).
PAPER_CELLS = ("lstm", "lstm_minus_gates", "lstm_minus_srnn", "lstm_minus_srnn_out")
CONFIGURATIONS = {"medium": "PTB (Medium Model)", "large": "PTB (Large Model)", "bwb": "BWB (LSTM-2048-512)"}
#: The paper's sizes of Table 1's PTB configurations (layers × units).
PAPER_SIZES = {"medium": "2 × 650", "large": "2 × 1500"}
SYSTEMS = {"bidaf": "BiDAF", "drqa": "DrQA"}
NETWORKS = {"lm": "language model (PTB, test sentence)", "parser": "parser (UD English EWT v2.3, test sentence)"}


# -- Tables 1-4 -----------------------------------------------------------------------------------
def not_run_note(report: StudyReport, artifact: str, record: dict) -> str:
    """Why a published row has no number of ours."""
    if record.get("grid") == "bwb":
        return "not rerun: the billion-word benchmark is not in the data mirror"
    if record.get("grid") == "large" and report.scale != "paper":
        return f"at scale `{report.scale}` the large setting runs the LSTM only"
    return f"not run at scale `{report.scale}`"


def configuration_names(report: StudyReport, artifact: str) -> dict[str, str]:
    """Table 1's configurations with the paper's sizes and ours at this scale (layers × units)."""
    ours = {}
    for use in report.study.artifacts[artifact].runs:
        model = report.study.runs[use.folder]["model"]
        ours.setdefault(use.labels.get("grid"), f"{model.get('layers', 1)} × {model.get('hidden_size')}")
    return {grid: name if grid not in ours else f"{name}: paper {PAPER_SIZES[grid]}, ours {ours[grid]}"
            for grid, name in CONFIGURATIONS.items()}


def shown(value: float, std: float, n: float | None, metric: str) -> str:
    """A value as the paper prints it: EM and F1 (in percent) with one decimal."""
    if metric in ("em", "f1"):
        return f"{value:.1f}" + (f" ± {std:.1f}" if not pd.isna(std) else "") + (f" (n={int(n)})" if n else "")
    return format_mean_std(value, std, n, metric)


def paper_table(report: StudyReport, artifact: str, metrics: tuple[str, ...], group: str | None = None,
                group_names: dict[str, str] | None = None) -> None:
    """The artifact's table in the paper's layout: per (group,) model our mean ± std over seeds
    beside the published value, and a note on every row we have no number for."""
    ours, published = report.ours(artifact), report.published(artifact)
    if len(ours):
        joined = frames.join_published(ours, published)
    else:  # nothing of ours (e.g. shown as published): the published rows with their labels
        joined = published.rename(columns={"mean": "published", "std": "published_std"}).assign(
            mean=float("nan"), std=float("nan"), n=float("nan"))
    if joined.empty:
        return
    joined = joined[joined["metric"].isin(metrics)]
    keys = [group] if group and group in joined else []
    order = {name: i for i, name in enumerate([*(group_names or {}), *PAPER_CELLS])}
    rows = []
    for key, part in sorted(joined.groupby([*keys, "cell"], sort=False),
                            key=lambda item: [order.get(k, len(order)) for k in item[0]]):
        record = dict(zip([*keys, "cell"], key))
        row = {}
        if keys:
            row["configuration"] = (group_names or {}).get(record[group], record[group])
        row["model"] = cell_name(record["cell"])
        ran = False
        for metric in metrics:
            hit = part[part["metric"] == metric]
            rec = hit.iloc[0] if len(hit) else None
            has = rec is not None and not pd.isna(rec["n"])
            ran |= has
            row[f"{metric} (ours)"] = shown(float(rec["mean"]), float(rec["std"]), float(rec["n"]), metric) if has else "—"
            published = rec is not None and not pd.isna(rec["published"])
            row[f"{metric} (published)"] = shown(float(rec["published"]), float(rec["published_std"]), None,
                                                 metric) if published else "—"
        row["note"] = "" if ran else not_run_note(report, artifact, record)
        rows.append(row)
    display_markdown(f"**{artifact}** in the paper's layout: ours (mean ± std over seeds, n = seeds) beside the "
                     f"published values ({report.sources(artifact)}).")
    display_table(pd.DataFrame(rows))


def table1(report: StudyReport) -> None:
    paper_table(report, "table1", ("test_perplexity",), "grid", configuration_names(report, "table1"))


def table2(report: StudyReport) -> None:
    paper_table(report, "table2", ("em", "f1"), "system", SYSTEMS)


def table3(report: StudyReport) -> None:
    paper_table(report, "table3", ("test_uas", "test_las"))


def table4(report: StudyReport) -> None:
    paper_table(report, "table4", ("test_bleu",))


# -- Table 5 ------------------------------------------------------------------------------------
def table5(report: StudyReport) -> None:
    """The heat maps of ‖w_j^t‖₂ (column t: the word the sum represents; row j: the word summed
    over), one per network, and the eq. 11 differences beside them."""
    import matplotlib.pyplot as plt

    table = report.analysis("table5")
    if table.empty:
        return
    table = table.assign(value=pd.to_numeric(table["value"]))
    checks = table[table["metric"].str.startswith("max_abs_")]
    if len(checks):
        wide = checks.pivot_table(index="network", columns="metric", values="value", aggfunc="max")
        display_markdown("Eq. 11 checked on the same computation (float64): the largest |difference| between the "
                         "content c̃_j the cell computed and W_cx x_j, between Σ_j w_j^t ⊙ c̃_j and the memory c_t of "
                         "the cell's step equations, and between tanh(Σ_j w_j^t ⊙ c̃_j) and the layer's outputs h_t "
                         "(its fast loop, as in training), over every step and direction; `random` is a random "
                         "float64 −S-RNN−OUT cell on padded random sequences.")
        display_table(wide.map(lambda v: f"{v:.1e}").reset_index().rename_axis(None, axis=1))
    maps = table[table["metric"] == "weight_norm"]
    if maps.empty:
        return
    maps = maps.assign(t=maps["t"].astype(int), j=maps["j"].astype(int))
    panels = [n for n in NETWORKS if n in set(maps["network"])]
    display_markdown("‖w_j^t‖₂ of the first recurrent layer of our trained −S-RNN−OUT models on one test sentence "
                     "(eq. 11): each column is the word t the weighted sum represents, each row the word j it sums "
                     "over. The language model reads left to right (weights only on the current and previous "
                     "words, above the diagonal); the parser's layer is bidirectional, its weights the two "
                     "directions' concatenated: forward above the diagonal, backward below it. The paper's LM map "
                     "came from its billion-word-benchmark model, ours from the PTB model of Table 1; its parser "
                     "was trained on EWT v1.3, ours on v2.3 (the parser's position 0 is its ROOT).")
    figure = plots.heatmaps(maps, x="t", y="j", value="value", panel="network", panels=panels, vmin=0.0,
                            label="‖w‖₂ (ours)", cmap="Greys", y_descending=False,
                            title=lambda name: NETWORKS.get(name, name), xlabel="word t (the sum's word)",
                            ylabel="word j (summed over)")
    longest = int(maps["t"].max()) + 1
    figure.set_size_inches(max(4.0, 0.3 * longest) * len(panels) + 1.5, max(3.6, 0.3 * longest + 1.5))
    for axis, network in zip(figure.axes, panels):
        words = maps[maps["network"] == network].drop_duplicates("t").sort_values("t")["word_t"].tolist()
        axis.set_xticks([k + 0.5 for k in range(len(words))], words, rotation=90, fontsize=7)
        axis.set_yticks([k + 0.5 for k in range(len(words))], words, rotation=0, fontsize=7)
    figure.tight_layout()
    plt.show()
