"""The elstm paper's own tables, figures and checks (Su & Kuo; ``reports/elstm.ipynb``): Table 1's
counts, the toy task of Fig. 5, the training curves of Figs. 9-12, and the two claims that need
code (counts equal to the paper's, Table 3; the ELSTM less affected by its input, Figs. 11-12)."""
from __future__ import annotations

import math
import pandas as pd

from .. import plots
from ..study import StudyReport, display_markdown, display_table
from ..formatting import format_value
from ..verdicts import (INCONCLUSIVE, Check, Compare, Spread, Verdict, combined, decide, name_of, noise_text, select,
                        verdict_of, with_spread_columns)


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
        import seaborn as sns

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


# -- checks that need code --------------------------------------------------------------------
class MatchesPublished(Check):
    """Our counts equal the published ones, dataset by dataset and metric by metric. On the
    published numbers themselves there is nothing to judge: they are the paper's statement."""

    kind = ""

    def judge(self, frame, context):
        if "source" in frame.columns:
            return Verdict(None, ["these are the paper's own counts"])
        published = context.published
        results = []
        for rec in published.to_dict("records"):
            ours = frame[(frame["metric"] == rec["metric"]) & (frame.get("dataset", "") == rec.get("dataset", ""))]
            if ours.empty:
                continue
            mine = float(ours["mean"].iloc[0])
            ok = mine == float(rec["value"])
            results.append((ok, f"{rec.get('dataset', '')} {rec['metric']}: ours {mine:,.0f} "
                                f"{'=' if ok else '≠'} published {float(rec['value']):,.0f}"))
        return verdict_of(results, False, "no count of ours beside a published one")

    def neutral(self, labels):
        return pd.DataFrame(columns=["dataset", "metric", "mean"])

    def shifted(self, context, shift: float) -> pd.DataFrame:
        published = context.published
        return published[["dataset", "metric"]].assign(mean=published["value"].astype(float) + shift, std=float("nan"),
                                                        n=1)

    def example(self, frame, context):
        return self.shifted(context, 0.0)

    def counterexample(self, frame, context):
        return self.shifted(context, 1.0)


class LessAffectedByInput(Check):
    """Per macro model, switching I_t from [X_t, h_{t−1}] (grids ``xh_*``) to X_t (grids ``x_*``)
    changes the LSTM's metric (beyond the noise of its two means) and changes the ELSTM's by less
    than the LSTM's (beyond the noise of the four means), in every macro model (``in: most``: in
    more than half of them). Fig. 11: "the ELSTM does not behave much differently between I_t = X_t
    and [X_t, h_{t−1}] while the LSTM does"."""

    kind = ""

    def rows_of(self, frame: pd.DataFrame, metric: str) -> dict[tuple[str, str, str], dict]:
        rows = frame[frame["metric"] == metric] if len(frame) and "grid" in frame else frame.iloc[0:0]
        rows = with_spread_columns(select(rows, self.where))
        return {(rec["model"], rec["cell"], "x" if rec["grid"].startswith("x_") else "xh"): rec
                for rec in rows.to_dict("records")}

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = self.rows_of(frame, metric)
            for model in sorted({m for m, _, _ in rows}):
                keys = [(model, cell, inputs) for cell in ("lstm", "elstm") for inputs in ("x", "xh")]
                if not all(k in rows for k in keys):
                    continue
                lx, lxh, ex, exh = (rows[k] for k in keys)
                lstm, elstm = abs(lx["mean"] - lxh["mean"]), abs(ex["mean"] - exh["mean"])
                sl, se = math.copysign(1.0, lx["mean"] - lxh["mean"]), math.copysign(1.0, ex["mean"] - exh["mean"])
                change = context.noise_of(metric, [(sl, lx), (-sl, lxh)])
                moves = decide(lstm, change, context)
                less = decide(lstm - elstm, context.noise_of(metric, [(sl, lx), (-sl, lxh), (-se, ex), (se, exh)]),
                              context)
                ok = combined([moves, less])
                text = (f"{model}: LSTM changes by {lstm:.4f}"
                        + (noise_text(change, "") if context.weighs_noise else "")
                        + f", ELSTM by {elstm:.4f} ({metric}; the LSTM "
                        + {True: "changes", False: "does not change", None: "changes within the noise"}[moves]
                        + ", the ELSTM " + {True: "less", False: "not less", None: "less or not within the noise"}[less]
                        + ")")
                results.append((ok, text))
        return verdict_of(results, self.most, "no model with both cells run with both inputs (the paper gives a plot only)")

    def built(self, frame, elstm_moves: bool):
        frame = frame.copy()
        x = frame["grid"].str.startswith("x_")
        moving = frame["cell"] == ("elstm" if elstm_moves else "lstm")
        frame.loc[x & moving, "mean"] = frame.loc[x & moving, "mean"] + 10.0
        return frame

    def example(self, frame, context):
        return self.built(frame, elstm_moves=False)

    def counterexample(self, frame, context):
        return self.built(frame, elstm_moves=True)


class PerUnit(Compare):
    """``better`` beats every row of ``than`` on every metric (as :class:`Compare`, ``margin`` and
    ``strict`` alike) in every unit ``per`` names (default: each macro model), or with ``in: most``
    in more than half of the units: "most" counted over the units the sentence quantifies (macro
    models), not over (model, other cell, metric) comparisons."""

    kind = ""

    def judge(self, frame, context):
        per = self.per or ["model"]
        inner = Compare({**{k: v for k, v in self.spec.items() if k not in ("in", "per")}, "in": "all"})
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            if rows.empty or any(u not in rows for u in per):
                continue
            for key, group in rows.groupby(per, sort=False):
                verdict = inner.judge(group.assign(metric=metric), context)
                if verdict.holds is None and verdict.open != INCONCLUSIVE:
                    continue  # no pair in this unit
                results.append((key, verdict))
        units: dict = {}
        for key, verdict in results:
            units.setdefault(key, []).append(verdict)
        combined_units = []
        for key, verdicts in units.items():
            ok = combined([v.holds for v in verdicts])
            name = ", ".join(map(str, key if isinstance(key, tuple) else (key,)))
            said = {True: "yes", False: "no", None: "within the noise"}[ok]
            combined_units.append((ok, f"{name}: {name_of(self.better)} beats {name_of(self.than)}: {said} — "
                                       + "; ".join(d.split(": ", 1)[-1] for v in verdicts for d in v.details)))
        verdict = verdict_of(combined_units, self.most, f"no {name_of(self.better)} beside {name_of(self.than)} to compare")
        if self.most and combined_units:  # the units counted are macro models, not comparisons
            verdict.details[0] = verdict.details[0].replace(" comparisons hold", f" {'/'.join(per)}s: {name_of(self.better)} ahead")
        return verdict


class InSomeUnit(Compare):
    """``better`` beats ``than`` by more than ``margin`` in at least one pair (one macro model
    and one other cell): "up to 30 % increase" achieved somewhere. On ours, a pair counts only
    beyond the noise; the claim fails only when every pair is decided against it."""

    kind = ""

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = self.pairs(self.rows(frame, metric))
            if pairs.empty:
                continue
            pairs = pairs.assign(adv=self.advantage(metric, pairs))
            for rec in pairs.to_dict("records"):
                spread = self.spread(rec, metric, context)
                ok = decide(rec["adv"] - self.margin, spread, context, self.strict)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.than)
                unit = ", ".join(str(rec[u]) for u in units)
                said = {True: "≥" if not self.strict else ">", False: "<", None: "≈"}[ok]
                results.append((ok, f"{unit}: {name_of(self.better)} {format_value(rec['mean_w'], metric)} − {vs} "
                                    f"{format_value(rec['mean_l'], metric)} = {format_value(rec['adv'], metric, True)} "
                                    f"{said} {format_value(self.margin, metric, True)} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else "")))
        if not results:
            return Verdict(None, [f"no {name_of(self.better)} beside {name_of(self.than)} to compare"])
        good = sum(ok is True for ok, _ in results)
        open_ = sum(ok is None for ok, _ in results)
        holds = True if good else False if not open_ else None
        head = f"in at least one of {len(results)} comparisons: {good} reach it" + (
            f", {open_} within the noise" if open_ else "")
        return Verdict(holds, [head, *(d for _, d in results)], INCONCLUSIVE if holds is None else "cannot be judged")


class SomeAbovePublished(Check):
    """At least one row of ``where`` (one unit, e.g. a macro model) is above the published value of
    each metric at ``than`` (e.g. the bi-Att model of Table 6), in every metric at once. On ours,
    each difference counts only beyond the noise of our mean; it fails only when every unit is
    decided against it."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.than = self.spec["than"]

    def judge(self, frame, context):
        per = self.per or ["model"]
        units: dict = {}
        for metric in self.metrics:
            bound = context.constant(metric, self.than)
            if bound is None:
                return Verdict(None, [f"no published {metric} of {name_of(self.than)}"])
            for rec in with_spread_columns(self.rows(frame, metric)).to_dict("records"):
                key = tuple(rec.get(u, "") for u in per)
                spread = Spread(0.0, 1.0) if rec.get("n") == float("inf") else context.noise(metric, [rec])
                ok = decide(rec["mean"] - bound, spread, context)
                units.setdefault(key, []).append(
                    (ok, f"{format_value(rec['mean'], metric)} {dict([(True, '>'), (False, '≤'), (None, '≈')])[ok]} "
                         f"{name_of(self.than)} {format_value(bound, metric)} ({metric})"
                         + (noise_text(spread, metric) if context.weighs_noise else "")))
        if not units:
            return Verdict(None, [f"no {name_of(self.where)} rows"])
        results = [(combined([ok for ok, _ in parts]), ", ".join(map(str, key)) + ": " + "; ".join(d for _, d in parts))
                   for key, parts in units.items()]
        good = sum(ok is True for ok, _ in results)
        open_ = sum(ok is None for ok, _ in results)
        holds = True if good else False if not open_ else None
        head = f"in at least one of {len(results)} units: {good} above" + (f", {open_} within the noise" if open_ else "")
        return Verdict(holds, [head, *(d for _, d in results)], INCONCLUSIVE if holds is None else "cannot be judged")

    def moved(self, frame, context, up: bool):
        frame = frame.copy()
        for metric in self.metrics:
            bound = context.constant(metric, self.than) or 0.0
            rows = self.picked(frame, metric, {})
            frame.loc[rows, "mean"] = bound + (abs(bound) + 1.0) * (1 if up else -1)
        return frame

    def example(self, frame, context):
        return self.moved(frame, context, True)

    def counterexample(self, frame, context):
        return self.moved(frame, context, False)


class NotPeakAt(Check):
    """In every unit (e.g. each cell), the value at ``position`` is below the largest value at
    another position: no peak there (Fig. 5b: the LSTM "does not have strong response" to the "A",
    "strong" as Fig. 5a uses it, a response at "A" above the others). On ours, some other
    position's value must exceed it beyond the noise."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.at = self.spec["at"]

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = with_spread_columns(self.rows(frame, metric))
            dim = next(iter(self.at))
            units = self.per or [c for c in ("cell", "T") if c in rows and c not in self.at]
            for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                mine = select(group, self.at)
                others = group.drop(mine.index)
                if mine.empty or others.empty:
                    continue
                me = mine.iloc[0].to_dict()
                top = others.loc[others["mean"].idxmax()].to_dict()
                ok = combined([decide(top["mean"] - me["mean"], context.noise(metric, [top], [me]), context)])
                name = ", ".join(map(str, key if isinstance(key, tuple) else (key,)))
                results.append((ok, f"{name}: {dim} {me[dim]} {format_value(me['mean'], metric)}, largest elsewhere "
                                    f"{dim} {top[dim]} {format_value(top['mean'], metric)} ({metric}; a peak at "
                                    f"{me[dim]}: {dict([(True, 'no'), (False, 'yes'), (None, 'within the noise')])[ok]})"))
        return verdict_of(results, self.most, f"no {name_of(self.at)} beside other values")

    def set_peak(self, frame, peak: bool):
        frame = frame.copy()
        for metric in self.metrics:
            at = self.picked(frame, metric, self.at)
            frame.loc[at, "mean"] = frame["mean"].max() * 2 + 10 if peak else frame["mean"].min() / 2 - 10
        return frame

    def example(self, frame, context):
        return self.set_peak(frame, False)

    def counterexample(self, frame, context):
        return self.set_peak(frame, True)


class SameAsPublished(Check):
    """Each of our rows of the metric equals the published value with the same labels (a count:
    no tolerance). On the published numbers there is nothing to judge: they are the paper's own."""

    kind = ""

    def judge(self, frame, context):
        if "source" in frame.columns or not context.weighs_noise:
            return Verdict(None, ["these are the paper's own counts"])
        results = []
        for metric in self.metrics:
            for rec in self.rows(frame, metric).to_dict("records"):
                labels = {k: rec[k] for k in ("model", "cell") if k in rec}
                published = context.constant(metric, labels)
                if published is None:
                    continue
                ok = float(rec["mean"]) == published
                results.append((ok, f"{name_of(labels)}: ours {rec['mean']:,.0f} {'=' if ok else '≠'} "
                                    f"published {published:,.0f} ({metric})"))
        return verdict_of(results, False, "no count of ours beside a published one")

    def shifted(self, frame, context, shift: float):
        frame = frame.copy()
        for metric in self.metrics:
            for index in self.picked(frame, metric, {}):
                labels = {k: frame.at[index, k] for k in ("model", "cell") if k in frame}
                value = context.constant(metric, labels)
                frame.at[index, "mean"] = (value if value is not None else 0.0) + shift
        return frame

    def example(self, frame, context):
        return self.shifted(frame, context, 0.0)

    def counterexample(self, frame, context):
        return self.shifted(frame, context, 1.0)


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


class LargerGainIn(Check):
    """The advantage of ``better`` (e.g. the ELSTM) over the best of ``than`` (the LSTM and the GRU)
    is larger in every macro model of ``models`` (the seq2seq ones) than in every other macro model:
    "perform particularly well for the seq2seq". On ours each difference of advantages counts only
    beyond the noise of the four means involved."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.better, self.than, self.models = self.spec["better"], self.spec["than"], self.spec["models"]

    def gains(self, rows: pd.DataFrame, metric: str) -> dict[str, tuple[float, dict, dict]]:
        sign = 1 if self.higher(metric) else -1
        out = {}
        for model, group in with_spread_columns(rows).groupby("model", sort=False):
            mine, others = select(group, self.better), select(group, self.than)
            if mine.empty or others.empty:
                continue
            me = mine.iloc[0].to_dict()
            best = others.loc[(sign * others["mean"]).idxmax()].to_dict()
            out[model] = (sign * (me["mean"] - best["mean"]), me, best)
        return out

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            if rows.empty or "model" not in rows:
                continue
            gains = self.gains(rows, metric)
            chosen = [m for m in gains if m in {str(v) for v in (self.models if isinstance(self.models, list) else [self.models])}]
            rest = [m for m in gains if m not in chosen]
            for a in chosen:
                for b in rest:
                    (ga, ma, oa), (gb, mb, ob) = gains[a], gains[b]
                    sign = 1.0 if self.higher(metric) else -1.0  # ga − gb = s·(ma − oa) − s·(mb − ob)
                    spread = context.noise_of(metric, [(sign, ma), (-sign, oa), (-sign, mb), (sign, ob)])
                    ok = decide(ga - gb, spread, context)
                    results.append((ok, f"{a}: {name_of(self.better)} ahead by {format_value(ga, metric, True)} "
                                        f"{dict([(True, '>'), (False, '≤'), (None, '≈')])[ok]} {b}: ahead by "
                                        f"{format_value(gb, metric, True)} ({metric}; ahead of the best of "
                                        f"{name_of(self.than)})"
                                        + (noise_text(spread, metric) if context.weighs_noise else "")))
        return verdict_of(results, self.most, f"no {self.models} beside another macro model")

    def built(self, frame, larger: bool):
        frame = frame.copy()
        models = self.models if isinstance(self.models, list) else [self.models]
        for metric in self.metrics:
            mine = self.picked(frame, metric, self.better)
            chosen = frame.loc[mine, "model"].isin([str(m) for m in models])
            up = 1 if self.higher(metric) else -1
            bump = 100.0 * up
            frame.loc[mine[chosen.to_numpy()], "mean"] += bump if larger else -bump
            frame.loc[mine[~chosen.to_numpy()], "mean"] += -bump if larger else bump
        return frame

    def example(self, frame, context):
        return self.built(frame, True)

    def counterexample(self, frame, context):
        return self.built(frame, False)
