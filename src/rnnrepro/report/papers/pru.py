"""The pru paper's own figures, tables and checks (Choi; ``reports/pru.ipynb``).

Figs. 2-3 (adding and copying curves with their baselines), Tables 1-4 laid out as the paper
prints them, ours beside published, Fig. 4's validation-BLEU curves and Fig. 5's BLEU by source
length; and the one claim that needs code, Table 1's "generalize better"
(:class:`GeneralizesBetter`: the gap V − T is not a metric of any run, it is computed from two).
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...tasks.copying import memoryless_baseline
from .. import plots
from ..formatting import CELL_ORDER, format_value, natural_key, ordered
from ..study import StudyReport, display_markdown, display_table
from ..verdicts import (ONE_SEED, Check, Spread, Verdict, combined, decide, noise_text, pair_side, select, spread_of,
                        verdict_of, with_spread_columns, within)

CELL_NAMES = {"lstm": "LSTM", "lstm_plus": "LSTM+", "pru": "PRU", "pru_plus": "PRU+"}
DIRECTION_NAMES = {"en-de": "En→De", "de-en": "De→En", "en-fi": "En→Fi", "fi-en": "Fi→En"}


def cell_name(cell: str) -> str:
    return CELL_NAMES.get(cell, cell)


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


class GeneralizesBetter(Check):
    """Table 1's "generalize better": per cell the gap g = V − T between its validation and its
    test NLL (``dev`` and ``test`` metrics), the paper's "Generalization (V-T)" column. It holds
    when every cell of ``better`` has a larger gap than every cell of ``than`` and, with ``best``,
    when that cell's gap is the largest of all."""

    kind = ""

    def __init__(self, spec):
        spec = dict(spec)
        self.dev, self.test = spec.pop("dev", "dev_sentence_nll"), spec.pop("test", "test_sentence_nll")
        super().__init__({**spec, "metric": [self.dev, self.test]})
        self.better, self.than = list(spec["better"]), list(spec["than"])
        self.best = spec.get("best")

    def rows_of(self, frame: pd.DataFrame) -> dict[str, tuple[dict, dict]]:
        """cell -> (its dev row, its test row), for cells with both numbers."""
        if frame.empty or "cell" not in frame or "metric" not in frame:
            return {}
        rows = with_spread_columns(select(frame, self.where))
        dev = {r["cell"]: r for r in rows[rows["metric"] == self.dev].to_dict("records")}
        test = {r["cell"]: r for r in rows[rows["metric"] == self.test].to_dict("records")}
        return {cell: (dev[cell], test[cell]) for cell in dev if cell in test}

    def gaps(self, frame: pd.DataFrame) -> dict[str, float]:
        """V − T per cell (cells with both numbers)."""
        return {cell: float(d["mean"] - t["mean"]) for cell, (d, t) in self.rows_of(frame).items()}

    def judge(self, frame, context):
        rows = self.rows_of(frame)
        gaps = self.gaps(frame)
        if not any(c in gaps for c in self.better) or not any(c in gaps for c in self.than):
            return Verdict(None, ["no validation and test NLL of both groups of cells"])
        text = ", ".join(f"{cell_name(c)} {gaps[c]:+.2f}" for c in ordered(gaps, CELL_ORDER))

        def spread(a: str, b: str):  # the noise of (V_a − T_a) − (V_b − T_b), the four means independent
            return spread_of(*rows[a], *rows[b])

        results = []
        for mine in (c for c in self.better if c in gaps):
            for other in (c for c in self.than if c in gaps):
                noise = spread(mine, other)
                ok = decide(gaps[mine] - gaps[other], noise, context)
                said = {True: ">", False: "≤", None: "≈"}[ok]
                results.append((ok, f"gap V − T of {cell_name(mine)} {gaps[mine]:+.2f} {said} "
                                    f"{cell_name(other)} {gaps[other]:+.2f}"
                                    + (noise_text(noise, self.dev) if context.weighs_noise else "")))
        if self.best is not None and self.best in gaps:
            ok = combined([decide(gaps[self.best] - gaps[c], spread(self.best, c), context)
                           for c in gaps if c != self.best])
            results.append((ok, f"{cell_name(self.best)} has "
                                f"{ {True: 'the', False: 'not the', None: 'within the noise the'}[ok]} largest gap"))
        verdict = verdict_of(results, False, "")
        return Verdict(verdict.holds, [f"gaps V − T: {text}", *verdict.details], verdict.open)

    def with_gaps(self, frame: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
        """``frame`` with every test NLL at its neutral value and the dev NLL above it by a gap
        that grows along ``order`` (cells not in it get no gap)."""
        frame = frame.copy()
        rank = {cell: i + 1 for i, cell in enumerate(order)}
        dev = self.picked(frame, self.dev, {})
        frame.loc[dev, "mean"] = [frame.loc[i, "mean"] + rank.get(frame.loc[i, "cell"], 0) for i in dev]
        return frame

    def example(self, frame, context):
        best = [self.best] if self.best else []
        return self.with_gaps(frame, [*self.than, *(c for c in self.better if c not in best), *best])

    def counterexample(self, frame, context):
        return self.with_gaps(frame, [*self.better, *self.than])


class Close(Check):
    """``a`` and ``b`` differ by at most ``tolerance`` times ``b``'s value, in every unit and metric:

        |m_a − m_b| ≤ tolerance · |m_b|

    (the paper's "almost the same" and "very similar", read relative to the value: NLLs per
    sentence run from 40 to 400 nats, so no one tolerance in nats fits)."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.a, self.b = self.spec["a"], self.spec["b"]
        self.tolerance = float(self.spec["tolerance"])

    def judge(self, frame, context):
        from ..verdicts import Compare, name_of, unit_name

        results = []
        for metric in self.metrics:
            pairs, units = Compare({"better": self.a, "than": self.b, "per": self.per}).pairs(self.rows(frame, metric))
            for rec in pairs.to_dict("records"):
                scale = abs(rec["mean_l"]) or 1.0
                gap = abs(rec["mean_w"] - rec["mean_l"]) / scale
                noise = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")])
                noise = None if noise is None else Spread(noise.se / scale, noise.t, noise.source)
                ok = within(gap, self.tolerance, noise, context)
                me = ", ".join(str(rec[c]) for c in rec if c.startswith("me_")) or name_of(self.a)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.b)
                results.append((ok, f"{unit_name(rec, units)}: {me} {format_value(rec['mean_w'], metric)} vs {vs} "
                                    f"{format_value(rec['mean_l'], metric)}: {100 * gap:.2f} % "
                                    f"{ {True: '≤', False: '>', None: '≈'}[ok]} {100 * self.tolerance:g} % ({metric})"
                                    + ("" if not context.weighs_noise else
                                       f" ({ONE_SEED})" if noise is None else
                                       f" (± {100 * noise.half_width:.2f} % at 95 %"
                                       + (f", {noise.source}" if noise.source else "") + ")")))
        return verdict_of(results, self.most, f"no {name_of(self.a)} beside {name_of(self.b)}")

    def example(self, frame, context):
        """``a`` takes ``b``'s largest value."""
        frame = frame.copy()
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            if len(a) and len(b):
                frame.loc[a.union(b), "mean"] = frame.loc[b, "mean"].max()
        return frame

    def counterexample(self, frame, context):
        """``a`` ten tolerances away from ``b``."""
        frame = frame.copy()
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            if len(a) and len(b):
                frame.loc[a, "mean"] = frame.loc[b, "mean"].max() * (1 + 10 * self.tolerance) + 10
        return frame


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
    import seaborn as sns

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


# -- Sec. 4.1: convergence in epochs, and "no significant difference" ----------------------------
class ConvergenceGap(Check):
    """Fig. 2's "as the length of the sequence increases, the gap between the number of iterations
    for convergence increases". The runs give the validation curve's mean m = (1/E) Σ_e v_e
    (``mean_dev_mse``) and, when trained, the number of epochs E (``epochs``). The paper's curves
    sit at the baseline b = 0.167 (always predicting 1, its own figure's reference line) until a
    cell converges and near 0 after it, so the epochs a cell spends before converging are

        k = E · m / b      (a curve at b for k epochs, then at 0, has m = b·k/E)

    (in units of the training length, k/E = m/b, when ``epochs`` is not in the summary). Per T the
    gap is k(``than``) − k(``better``) for each cell of ``better``; it holds when that gap rises
    from each T to the next (on ours beyond the noise of the two gaps). A ``than`` cell whose k
    reaches E at the larger T never left the baseline: its gap there is only a lower bound, so a
    gap that did not rise is then inconclusive, not a failure."""

    kind = ""

    def __init__(self, spec):
        spec = dict(spec)
        self.along = spec.pop("along", "T")
        self.baseline = spec.pop("baseline", "baseline_mse")
        super().__init__({"metric": "mean_dev_mse", **spec})
        self.better, self.than = spec["better"], spec["than"]

    def judge(self, frame, context):
        from ..verdicts import Compare, name_of

        b = context.constant(self.baseline)
        if b is None or b <= 0:
            return Verdict(None, [f"no published {self.baseline} to measure convergence against"])
        metric = self.metrics[0]
        pairs, units = Compare({"better": self.better, "than": self.than}).pairs(self.rows(frame, metric))
        if pairs.empty or self.along not in units:
            return Verdict(None, [f"no {name_of(self.better)} beside {name_of(self.than)} at two values of {self.along}"])
        epochs = self.rows(frame, "epochs") if "metric" in frame else frame.iloc[0:0]
        length = float(epochs["mean"].max()) if len(epochs) else None
        factor = (length if length else 1.0) / b
        unit = "epochs" if length else "of the training"
        mine = [c for c in pairs if c.startswith("me_")]
        rest = [u for u in units if u != self.along] + mine
        results = []
        for key, group in (pairs.groupby(rest, sort=False) if rest else [((), pairs)]):
            group = group.sort_values(self.along, key=lambda s: s.map(natural_key))
            records = group.to_dict("records")
            if len(records) < 2:
                continue
            gaps = [factor * (r["mean_l"] - r["mean_w"]) for r in records]
            spreads = [context.noise(metric, [pair_side(r, "l")], [pair_side(r, "w")]) for r in records]
            rises = []
            for i in range(1, len(records)):
                one, two = spreads[i - 1], spreads[i]
                noise = None if one is None or two is None else \
                    Spread(factor * (one.se ** 2 + two.se ** 2) ** 0.5, min(one.t, two.t))
                ok = decide(gaps[i] - gaps[i - 1], noise, context)
                if ok is False and records[i]["mean_l"] >= b:
                    ok = None  # the slower cell never converged: its gap is a lower bound
                rises.append(ok)
            ok = combined(rises)
            label = ", ".join(map(str, key if isinstance(key, tuple) else (key,)))
            shown_ = ", ".join(f"{self.along}={r[self.along]}: {g:+.2f}" if length else f"{self.along}={r[self.along]}: "
                               f"{100 * g:+.0f} %" for r, g in zip(records, gaps))
            censored = [r[self.along] for r in records if r["mean_l"] >= b]
            results.append((ok, f"epochs before converging, {name_of(self.than)} minus {label or name_of(self.better)} "
                                f"({unit}, k = E·{metric}/{b:g}): {shown_} — "
                                f"{ {True: 'grows', False: 'does not grow', None: 'not settled'}[ok]}"
                                + (f"; {name_of(self.than)} never below the baseline at {self.along}="
                                   f"{', '.join(censored)}" if censored else "")
                                + ("" if not context.weighs_noise or all(spreads) else f" ({ONE_SEED})")))
        return verdict_of(results, self.most, f"no unit with two values of {self.along}")

    def set_values(self, frame, context, growing: bool):
        """The winners converge at 10 % of the baseline; the loser's mean rises with T (growing)
        or falls (shrinking), always below the baseline."""
        frame = frame.copy()
        b = context.constant(self.baseline) or 0.167
        metric = self.metrics[0]
        win, lose = self.picked(frame, metric, self.better), self.picked(frame, metric, self.than)
        frame.loc[win, "mean"] = 0.1 * b
        ranks = frame.loc[lose, self.along].map(lambda v: natural_key(v)[1] if natural_key(v)[0] == 0 else 0.0) \
            .rank(method="dense") if self.along in frame else pd.Series(1.0, index=lose)
        top = float(ranks.max()) if len(ranks) else 1.0
        step = 0.8 * b / (top + 1)
        frame.loc[lose, "mean"] = 0.1 * b + step * (ranks if growing else top + 1 - ranks)
        return frame

    def example(self, frame, context):
        return self.set_values(frame, context, True)

    def counterexample(self, frame, context):
        return self.set_values(frame, context, False)


class NoSignificantDifference(Check):
    """"No significant difference between ``a`` and ``b``", read as the paper's words say: in every
    unit and metric, the difference of the means is not significant by Welch's t-test at 95 % over
    seeds (|m_a − m_b| ≤ t·se, :func:`~rnnrepro.report.verdicts.spread_of`). It fails where the test
    finds a difference; without a spread (one seed, or the published point values) it cannot say.
    With ``noise: seeds`` one seed per cell leaves it open even where the runs kept their test items:
    the paired bootstrap would tell two trained models apart, not the two cells."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.a, self.b = self.spec["a"], self.spec["b"]

    def judge(self, frame, context):
        from ..verdicts import Compare, name_of, unit_name

        results = []
        for metric in self.metrics:
            pairs, units = Compare({"better": self.a, "than": self.b, "per": self.per}).pairs(self.rows(frame, metric))
            for rec in pairs.to_dict("records"):
                noise = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")], self.seeds_only)
                gap = abs(rec["mean_w"] - rec["mean_l"])
                ok = None if noise is None else bool(gap <= noise.half_width)
                results.append((ok, f"{unit_name(rec, units)}: {name_of(self.a)} {format_value(rec['mean_w'], metric)} "
                                    f"vs {name_of(self.b)} {format_value(rec['mean_l'], metric)} "
                                    f"({metric}): {'no significant difference' if ok else 'a significant difference' if ok is False else 'no spread to test the difference against'}"
                                    + (noise_text(noise, metric) if noise is not None else "")))
        verdict = verdict_of(results, self.most, f"no {name_of(self.a)} beside {name_of(self.b)}")
        if verdict.holds is None and results and not context.weighs_noise:
            return Verdict(None, verdict.details, "cannot be judged")
        return verdict

    def example(self, frame, context):
        frame = frame.copy()
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            frame.loc[a.union(b), "mean"] = NEUTRAL_VALUE
            frame.loc[a.union(b), "std"] = 1.0
        return frame

    def counterexample(self, frame, context):
        frame = self.example(frame, context)
        for metric in self.metrics:
            a = self.picked(frame, metric, self.a)
            frame.loc[a, "mean"] = NEUTRAL_VALUE + 100.0
        return frame


NEUTRAL_VALUE = 1000.0


# -- Fig. 4: overfitting ---------------------------------------------------------------------------
class Overfitting(Check):
    """Fig. 4's overfitting, read off each run's validation-BLEU curve (analysis ``validation_peak``):
    a model overfits when its validation BLEU falls after its peak, drop = peak − last > 0; it does
    not when the curve does not fall after the peak (drop 0). ``overfits`` says which the sentence
    claims for the cells of ``cells``, in every direction. On ours the drop counts only beyond the
    noise over seeds. A run whose peak is its last epoch (``peak_epoch`` = ``epochs``) was still
    improving when training ended: whether it would overfit cannot be seen, and that unit is
    inconclusive, never a pass."""

    kind = ""

    def __init__(self, spec):
        spec = dict(spec)
        self.drop = spec.pop("drop", "dev_bleu_drop")
        super().__init__({**spec, "metric": [self.drop, "peak_epoch", "epochs"]})
        self.cells = spec["cells"]
        self.overfits = bool(spec.get("overfits", False))

    def judge(self, frame, context):
        from ..verdicts import name_of, unit_name

        if frame.empty or "metric" not in frame:
            return Verdict(None, ["no validation curves"])
        rows = with_spread_columns(select(select(frame, self.where), self.cells))
        units = [c for c in ("cell", "direction") if c in rows]
        results = []
        for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
            by = {r["metric"]: r for r in group.to_dict("records")}
            if self.drop not in by:
                continue
            drop = by[self.drop]
            rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
            noise = spread_of(drop)
            still = "peak_epoch" in by and "epochs" in by and by["peak_epoch"]["mean"] >= by["epochs"]["mean"]
            if still:
                ok = None
                said = "still improving at its last epoch: overfitting cannot be seen"
            elif self.overfits:
                ok = decide(drop["mean"], noise, context)
                said = {True: "falls after its peak", False: "does not fall after its peak",
                        None: "falls within the noise"}[ok]
            else:
                ok = decide(-drop["mean"], noise, context, strict=False)
                said = {True: "does not fall after its peak", False: "falls after its peak",
                        None: "not settled"}[ok]
            results.append((ok, f"{unit_name(rec, units)}: validation BLEU {said} (drop "
                                f"{format_value(drop['mean'], 'dev_bleu', True)}"
                                + (f", peak at epoch {by['peak_epoch']['mean']:g} of {by['epochs']['mean']:g}"
                                   if "peak_epoch" in by and "epochs" in by else "") + ")"
                                + (noise_text(noise, "dev_bleu") if context.weighs_noise else "")))
        if not results:
            return Verdict(None, [f"no validation curve of {name_of(self.cells)}"])
        verdict = verdict_of(results, self.most, "")
        if verdict.holds is None and not context.weighs_noise:
            return Verdict(None, verdict.details, "cannot be judged")
        return verdict

    def set_drop(self, frame, context, falls: bool):
        frame = frame.copy()
        frame.loc[self.picked(frame, "peak_epoch", self.cells), "mean"] = 3.0
        frame.loc[self.picked(frame, "epochs", self.cells), "mean"] = 6.0
        frame.loc[self.picked(frame, self.drop, self.cells), "mean"] = 2.0 if falls else 0.0
        return frame

    def example(self, frame, context):
        return self.set_drop(frame, context, self.overfits)

    def counterexample(self, frame, context):
        return self.set_drop(frame, context, not self.overfits)
