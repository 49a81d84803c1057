"""The wsum paper's own tables, heat maps and checks ("LSTM as a dynamically computed
element-wise weighted sum"; ``reports/wsum.ipynb``).

Tables 1-4 laid out as the paper's (its model names, ours beside the published numbers, a note
on every row we did not run), the heat maps of Table 5 with the eq. 11 check beside them, and
the claims that need code (each weighs our differences against the noise of our runs with
:func:`~rnnrepro.report.verdicts.decide` or :func:`~rnnrepro.report.verdicts.within`):

- :class:`WithinShare`: two models within a share of the second's value ("little to no
  difference" in perplexity: within 4.5 % of the LSTM's);
- :class:`InSome`: a ``compare`` that must hold in at least one unit ("removing the gates *can*
  degrade performance substantially");
- :class:`GatedGapSmall`: the differences among the gated models (LSTM, −S-RNN, −S-RNN−OUT), or
  from the LSTM, are below a fraction of the gap between the LSTM and −GATES;
- :class:`DropBetween`: a drop of a stated size ("a 3-4 point drop");
- :class:`DiagonalLargest`: in every column t of a heat map the largest weight is w_t^t.
"""
from __future__ import annotations

import math
from itertools import combinations

import pandas as pd

from .. import frames, plots
from ..formatting import format_mean_std, format_value
from ..study import StudyReport, display_markdown, display_table
from ..verdicts import (INCONCLUSIVE, NEUTRAL, Check, Compare, Verdict, Within, combined, decide, name_of,
                        noise_text, pair_side, select, spread_of, unit_name, verdict_of, within)

#: The paper's names of the cells.
PAPER_NAMES = {"lstm": "LSTM", "lstm_minus_gates": "− GATES", "lstm_minus_srnn": "− S-RNN",
               "lstm_minus_srnn_out": "− S-RNN − OUT"}
GATED = ("lstm", "lstm_minus_srnn", "lstm_minus_srnn_out")
#: Table 1's configurations (the label ``grid``) as the paper names them.
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
    order = {name: i for i, name in enumerate([*(group_names or {}), *PAPER_NAMES])}
    rows = []
    for key, part in sorted(joined.groupby([*keys, "cell"], sort=False),
                            key=lambda item: [order.get(k, len(order)) for k in item[0]]):
        record = dict(zip([*keys, "cell"], key))
        row = {}
        if keys:
            row["configuration"] = (group_names or {}).get(record[group], record[group])
        row["model"] = PAPER_NAMES.get(record["cell"], record["cell"])
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


# -- checks -----------------------------------------------------------------------------------------
class WithinShare(Within):
    """``a`` and ``b`` differ by at most ``share`` times ``b``'s value (a relative tolerance, e.g.
    "within 4.5 % of the LSTM's perplexity"), in every unit; on ours an equivalence test against
    the noise of our runs (:func:`within`)."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.share = float(self.spec["share"])

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = Compare({"better": self.a, "than": self.b, "per": self.per}).pairs(self.rows(frame, metric))
            for rec in pairs.to_dict("records"):
                gap, tolerance = abs(rec["mean_w"] - rec["mean_l"]), self.share * abs(rec["mean_l"])
                spread = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")])
                ok = within(gap, tolerance, spread, context)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.b)
                results.append((ok, f"{unit_name(rec, units)}: |{name_of(self.a)} {format_value(rec['mean_w'], metric)}"
                                    f" − {vs} {format_value(rec['mean_l'], metric)}| = "
                                    f"{format_value(gap, metric, True).lstrip('+')} "
                                    f"{ {True: '≤', False: '>', None: '≈'}[ok]} {self.share:.1%} of {vs} = "
                                    f"{format_value(tolerance, metric, True).lstrip('+')} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else "")))
        return verdict_of(results, self.most, f"no {name_of(self.a)} beside {name_of(self.b)}")

    def example(self, frame, context):
        """``a`` and ``b`` take one value (the largest of ``a``'s)."""
        return super().example(frame, context)

    def counterexample(self, frame, context):
        """``a`` ten tolerances (and ten units) above ``b``."""
        frame = frame.copy()
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            if len(b):
                top = frame.loc[b, "mean"].max()
                frame.loc[a, "mean"] = top * (1 + 10 * self.share) + 10
        return frame


class InSome(Compare):
    """A ``compare`` that holds in at least one unit (``per``) — "removing the gates *can* degrade
    performance": fails when it fails in every unit, holds when it holds in one, else (on ours,
    none holding beyond the noise and not all failing) inconclusive. Within a unit every metric
    must hold."""

    kind = ""

    def judge(self, frame, context):
        rows = frame[frame["metric"].isin(self.metrics)] if "metric" in frame else frame.iloc[0:0]
        units = [u for u in (self.per or []) if u in rows]
        groups = rows.groupby(units, sort=False) if units else [((), rows)]
        verdicts = [Compare.judge(self, group, context) for _, group in groups]
        verdicts = [v for v in verdicts if v.holds is not None or v.open != "cannot be judged"]
        if not verdicts:
            return Verdict(None, [f"no {name_of(self.better)} beside {name_of(self.than)} to compare"])
        details = [f"in at least one of {len(verdicts)} unit(s):"] + [d for v in verdicts for d in v.details]
        if any(v.holds is True for v in verdicts):
            return Verdict(True, details)
        if all(v.holds is False for v in verdicts):
            return Verdict(False, details)
        return Verdict(None, details, INCONCLUSIVE)


def units_of(rows: pd.DataFrame, per: list[str] | None) -> list[str]:
    """The unit labels: ``per``, or every label but the cell."""
    if per:
        return [u for u in per if u in rows]
    return [c for c in frames.label_columns(rows) if c != "cell"]


class GatedGapSmall(Check):
    """In every unit, the differences among the gated models (LSTM, −S-RNN, −S-RNN−OUT) are below
    ``ratio`` times the gap between the LSTM and −GATES: every pair of them, or with
    ``against: lstm`` each ablation's difference from the LSTM ("ablating the S-RNN [...] has a
    minor effect"). On ours each pair counts only beyond the noise of the four means involved."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.ratio = float(self.spec.get("ratio", 0.1))
        self.against = self.spec.get("against")

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            if "cell" not in rows:
                continue
            rows = rows.assign(**{c: rows[c] if c in rows else float("nan") for c in ("std", "n")})
            units = units_of(rows, self.per)
            for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                records = {r["cell"]: r for r in group.to_dict("records")}
                gated = [c for c in GATED if c in records]
                if "lstm" not in records or "lstm_minus_gates" not in records or len(gated) < 2:
                    continue
                lstm, gates = records["lstm"], records["lstm_minus_gates"]
                gap = abs(lstm["mean"] - gates["mean"])
                pairs = [(x, y) for x, y in combinations(gated, 2) if not self.against or self.against in (x, y)]
                oks, worst = [], None
                for x, y in pairs:
                    difference = abs(records[x]["mean"] - records[y]["mean"])
                    sg = self.ratio * math.copysign(1.0, lstm["mean"] - gates["mean"])
                    sd = math.copysign(1.0, records[x]["mean"] - records[y]["mean"])
                    spread = context.noise_of(metric, [(sg, lstm), (-sg, gates), (-sd, records[x]), (sd, records[y])])
                    oks.append(decide(self.ratio * gap - difference, spread, context))
                    if worst is None or difference > worst[0]:
                        worst = (difference, x, y)
                ok = combined(oks)
                rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
                which = "from the LSTM" if self.against else "among the gated models"
                results.append((ok, f"{unit_name(rec, units)}: largest difference {which} "
                                    f"{format_value(worst[0], metric, True).lstrip('+')} ({worst[1]} vs {worst[2]}) "
                                    f"{ {True: '<', False: '≥', None: '≈'}[ok]} {self.ratio:g} × the −GATES gap "
                                    f"{format_value(gap, metric, True).lstrip('+')} ({metric})"
                                    + (noise_text(context.noise(metric, [lstm], [gates]), metric)
                                       if context.weighs_noise else "")))
        return verdict_of(results, self.most, "no LSTM, −GATES and another gated model side by side")

    def values(self, frame, spoil: bool):
        frame = frame.copy()
        for metric in self.metrics:
            rows = select(frame[frame["metric"] == metric], self.where)
            cells = rows["cell"] if "cell" in rows else pd.Series(dtype=str)
            frame.loc[rows.index[cells.isin(GATED)], "mean"] = NEUTRAL
            frame.loc[rows.index[cells == "lstm_minus_gates"], "mean"] = 2 * NEUTRAL
            if spoil:
                frame.loc[rows.index[cells == "lstm_minus_srnn"], "mean"] = 1.5 * NEUTRAL
        return frame

    def example(self, frame, context):
        return self.values(frame, False)

    def counterexample(self, frame, context):
        return self.values(frame, True)


class DropBetween(Check):
    """In every unit, ``better`` beats ``than`` by more than ``low`` and less than ``high`` (metric
    units): a drop of a stated size ("a 3-4 point drop")."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.better, self.than = self.spec["better"], self.spec["than"]
        self.low, self.high = float(self.spec["low"]), float(self.spec["high"])

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = Compare({"better": self.better, "than": self.than, "per": self.per}).pairs(self.rows(frame, metric))
            if pairs.empty:
                continue
            sign = 1 if self.higher(metric) else -1
            for rec in pairs.to_dict("records"):
                drop = sign * (rec["mean_w"] - rec["mean_l"])
                spread = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")])
                ok = combined([decide(drop - self.low, spread, context), decide(self.high - drop, spread, context)])
                results.append((ok, f"{unit_name(rec, units)}: {name_of(self.than)} {format_value(rec['mean_l'], metric)} "
                                    f"vs {name_of(self.better)} {format_value(rec['mean_w'], metric)}: a drop of "
                                    f"{format_value(drop, metric, True)}, "
                                    f"{ {True: 'within', False: 'outside', None: 'within the noise of'}[ok]} "
                                    f"({format_value(self.low, metric, True).lstrip('+')}, "
                                    f"{format_value(self.high, metric, True).lstrip('+')}) ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else "")))
        return verdict_of(results, self.most, f"no {name_of(self.better)} beside {name_of(self.than)}")

    def values(self, frame, drop: float):
        frame = frame.copy()
        for metric in self.metrics:
            win, lose = self.picked(frame, metric, self.better), self.picked(frame, metric, self.than)
            frame.loc[lose, "mean"] = NEUTRAL
            frame.loc[win, "mean"] = NEUTRAL + (drop if self.higher(metric) else -drop)
        return frame

    def example(self, frame, context):
        return self.values(frame, (self.low + self.high) / 2)

    def counterexample(self, frame, context):
        return self.values(frame, 2 * self.high + 1)


class DiagonalLargest(Check):
    """In every column t of every heat map (``weight_norm`` over labels t and j) the largest
    weight is the diagonal one, w_t^t."""

    kind = ""
    POSITION_LABELS = ("t", "j", "word_t", "word_j")

    def __init__(self, spec):
        super().__init__({"metric": "weight_norm", **spec})

    def cells(self, frame: pd.DataFrame) -> pd.DataFrame:
        rows = select(frame[frame["metric"] == "weight_norm"], self.where) if "metric" in frame else frame.iloc[0:0]
        if not {"t", "j"} <= set(rows.columns):
            return rows.iloc[0:0]
        return rows[(rows["t"] != "") & (rows["j"] != "")]

    def judge(self, frame, context):
        rows = self.cells(frame)
        if rows.empty:
            return Verdict(None, ["no heat map (the paper shows its maps as pictures only)"])
        rows = rows[rows["mean"].notna()]
        units = [c for c in frames.label_columns(rows) if c not in self.POSITION_LABELS]
        results = []
        for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
            columns = failed = undecided = 0
            shown = []
            for t, column in group.groupby("t", sort=False):
                diagonal = column[column["j"] == t]
                others = column[column["j"] != t]
                if diagonal.empty or others.empty:
                    continue
                columns += 1
                top = others.loc[others["mean"].idxmax()]
                ok = decide(float(diagonal["mean"].iloc[0]) - float(top["mean"]),
                            spread_of(diagonal.iloc[0].to_dict(), top.to_dict()), context)
                undecided += ok is None
                if ok is False:
                    failed += 1
                    word = f" ({column['word_t'].iloc[0]!r})" if "word_t" in column else ""
                    shown.append(f"t={t}{word}: j={top['j']} {float(top['mean']):.3f} ≥ {float(diagonal['mean'].iloc[0]):.3f}")
            if not columns:
                continue
            rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
            ok = False if failed else None if undecided else True
            results.append((ok, f"{unit_name(rec, units)}: the diagonal is the largest in {columns - failed - undecided} "
                                f"of {columns} columns" + (f" (not in {'; '.join(shown[:3])})" if shown else "")
                                + (f", within the noise in {undecided}" if undecided else "")))
        return verdict_of(results, self.most, "no heat map (the paper shows its maps as pictures only)")

    def values(self, frame, spoil: bool):
        frame = frame.copy()
        rows = self.cells(frame)
        if rows.empty:
            return frame
        frame.loc[rows.index, "mean"] = NEUTRAL
        frame.loc[rows.index[rows["t"] == rows["j"]], "mean"] = 2 * NEUTRAL
        if spoil:
            units = [c for c in frames.label_columns(rows) if c not in self.POSITION_LABELS]
            for _, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                off = group[group["t"] != group["j"]]
                if len(off):
                    frame.loc[off.index[0], "mean"] = 3 * NEUTRAL
        return frame

    def example(self, frame, context):
        return self.values(frame, False)

    def counterexample(self, frame, context):
        return self.values(frame, True)
