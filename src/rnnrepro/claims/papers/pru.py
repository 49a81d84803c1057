"""The pru paper's claims that need code (Choi; ``config/studies/pru.yaml``): Table 1's
"generalize better" (:class:`GeneralizesBetter`: the gap V − T is not a metric of any run, it
is computed from two) and "almost the same" (:class:`Close`), Fig. 2's convergence gap
(:class:`ConvergenceGap`), Sec. 4.1's "no significant difference"
(:class:`NoSignificantDifference`) and Fig. 4's overfitting (:class:`Overfitting`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd

from ...labels import CELL_ORDER, cell_name, natural_key, ordered
from ...metrics.formats import format_value
from ..kinds.base import NEUTRAL, NEUTRAL_SEEDS, PAPER_CHECKS, Check
from ..kinds.compare import Compare
from ..inference import EXACT, Estimate
from ..noise import ONE_SEED, combined, decide, noise_text, spread_of, with_spread_columns, within
from ..regime import matching
from ..selection import name_of, pair_side, select, unit_key, unit_name
from ..verdict import Verdict, verdict_of


@PAPER_CHECKS.register("pru:GeneralizesBetter")
class GeneralizesBetter(Check):
    """Table 1's "generalize better": per cell the gap g = V − T between its validation and its
    test NLL (``dev`` and ``test`` metrics), the paper's "Generalization (V-T)" column. It holds
    when every cell of ``better`` has a larger gap than every cell of ``than`` and, with ``best``,
    when that cell's gap is the largest of all.

    Region: each difference of gaps > 0 (one part per (better, than) pair, and one for ``best``
    that holds when its gap exceeds every other, :func:`~..noise.combined`); every part must hold
    (Holm's correction for the refutations). Noise: of the four means, independent, over seeds
    (:func:`~..noise.spread_of`: Welch's t, or a prediction interval for single runs beside
    seeded ones); one seed leaves it open."""

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
                said = {True: ">", False: "≤", None: "≈"}[ok.holds]
                results.append((ok, f"gap V − T of {cell_name(mine)} {gaps[mine]:+.2f} {said} "
                                    f"{cell_name(other)} {gaps[other]:+.2f}"
                                    + (noise_text(noise, self.dev) if context.weighs_noise else ""),
                                unit_key("gap", {"cell": mine, "vs_cell": other})))
        if self.best is not None and self.best in gaps:
            others = [c for c in gaps if c != self.best]
            ok = combined([decide(gaps[self.best] - gaps[c], spread(self.best, c), context) for c in others])
            results.append((ok, f"{cell_name(self.best)} has "
                                f"{ {True: 'the', False: 'not the', None: 'within the noise the'}[ok.holds]} largest gap",
                            unit_key("largest gap", {"cell": self.best}),
                            [unit_key("largest gap", {"cell": self.best, "vs_cell": c}) for c in others]))
        verdict = verdict_of(results, self.quantifier, "")
        return replace(verdict, details=[f"gaps V − T: {text}", *verdict.details])

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


@PAPER_CHECKS.register("pru:Close")
class Close(Check):
    """``a`` and ``b`` differ by at most ``tolerance`` times ``b``'s value, in every unit and metric:

        |m_a − m_b| ≤ tolerance · |m_b|

    (the paper's "almost the same" and "very similar", read relative to the value: NLLs per
    sentence run from 40 to 400 nats, so no one tolerance in nats fits).

    Region: −``tolerance`` ≤ (m_a − m_b)/|m_b| ≤ ``tolerance``, an equivalence test (TOST,
    :func:`~..noise.within`) in every unit and metric (``in:``, Holm's correction for the
    refutations). Noise: of the difference of the two means, as a fraction of |m_b|
    (:meth:`~..noise.Context.noise`: Welch over seeds, a prediction interval, or the paired
    bootstrap of two single runs unless ``noise: seeds``)."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.a, self.b = self.spec["a"], self.spec["b"]
        self.tolerance = float(self.spec["tolerance"])

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = Compare({"better": self.a, "than": self.b, "per": self.per}).pairs(self.rows(frame, metric))
            for rec in pairs.to_dict("records"):
                scale = abs(rec["mean_l"]) or 1.0
                gap = abs(rec["mean_w"] - rec["mean_l"]) / scale
                noise = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")], self.seeds_only)
                noise = None if noise is None else noise.scaled(1 / scale)
                ok = within(gap, self.tolerance, noise, context)
                me = ", ".join(str(rec[c]) for c in rec if c.startswith("me_")) or name_of(self.a)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.b)
                results.append((ok, f"{unit_name(rec, units)}: {me} {format_value(rec['mean_w'], metric)} vs {vs} "
                                    f"{format_value(rec['mean_l'], metric)}: {100 * gap:.2f} % "
                                    f"{ {True: '≤', False: '>', None: '≈'}[ok.holds]} {100 * self.tolerance:g} % ({metric})"
                                    + ("" if not context.weighs_noise else
                                       f" ({ONE_SEED})" if noise is None else " (exact)" if noise.exact else
                                       f" (± {100 * noise.quantile() * noise.se:.2f} %, 90 % interval"
                                       + (f", {noise.note}" if noise.note else "") + ")"),
                                unit_key(metric, {c: rec[c] for c in [*units, *(c for c in rec
                                                                               if c.startswith(("me_", "vs_")))]})))
        return verdict_of(results, self.quantifier, f"no {name_of(self.a)} beside {name_of(self.b)}")

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


@PAPER_CHECKS.register("pru:ConvergenceGap")
class ConvergenceGap(Check):
    """Fig. 2's "as the length of the sequence increases, the gap between the number of iterations
    for convergence increases". The runs give the validation curve's mean m = (1/E) Σ_e v_e
    (``mean_dev_mse``) and, when trained, the number of epochs E (``epochs``). The paper's curves
    sit at the baseline b = 0.167 (always predicting 1, its own figure's reference line) until a
    cell converges and near 0 after it, so the epochs a cell spends before converging are

        k = E · m / b      (a curve at b for k epochs, then at 0, has m = b·k/E)

    (in units of the training length, k/E = m/b, when ``epochs`` is not in the summary). Per T the
    gap is k(``than``) − k(``better``) for each cell of ``better``; it holds when that gap rises
    from each T to the next. A ``than`` cell whose k reaches E at the larger T never left the
    baseline: its gap there is only a lower bound, so a gap that did not rise is then
    inconclusive, not a failure; one that never left it at the smaller T makes the gap there a
    lower bound, so a rise from it is inconclusive, not a success.

    Region: each rise of the gap > 0, every rise of a cell holding (:func:`~..noise.combined`),
    every cell by ``in:`` (Holm's correction). Noise: of the four means of a rise
    (:meth:`~..noise.Context.noise_of`: Welch over seeds, a prediction interval, or the paired
    bootstrap of single runs unless ``noise: seeds``); one seed leaves it open."""

    kind = ""

    def __init__(self, spec):
        spec = dict(spec)
        self.along = spec.pop("along", "T")
        self.baseline = spec.pop("baseline", "baseline_mse")
        self.trivial = spec.pop("trivial", None)
        super().__init__({"metric": "mean_dev_mse", **spec})
        self.better, self.than = spec["better"], spec["than"]

    def level(self, context, printed: float | None, labels: dict) -> float | None:
        """The MSE a curve sits at before it converges: on ours, with ``trivial``, that baseline of
        the dev set of the same T (what predicting its mean scores); else the paper's constant."""
        rows = context.baselines
        if self.trivial and context.weighs_noise and not rows.empty:
            found = matching(rows[(rows["baseline"] == self.trivial) & (rows["metric"] == "dev_mse")], labels)
            return float(found["value"].iloc[0]) if len(found) else None
        return printed

    def judge(self, frame, context):
        printed = context.constant(self.baseline)
        metric = self.metrics[0]
        pairs, units = Compare({"better": self.better, "than": self.than}).pairs(self.rows(frame, metric))
        if pairs.empty or self.along not in units:
            return Verdict(None, [f"no {name_of(self.better)} beside {name_of(self.than)} at two values of {self.along}"])
        epochs = self.rows(frame, "epochs") if "metric" in frame else frame.iloc[0:0]
        length = float(epochs["mean"].max()) if len(epochs) else None
        unit = "epochs" if length else "of the training"
        mine = [c for c in pairs if c.startswith("me_")]
        rest = [u for u in units if u != self.along] + mine
        results = []
        for key, group in (pairs.groupby(rest, sort=False) if rest else [((), pairs)]):
            group = group.sort_values(self.along, key=lambda s: s.map(natural_key))
            records = group.to_dict("records")
            if len(records) < 2:
                continue
            labels = dict(zip(rest, key if isinstance(key, tuple) else (key,)))
            levels = [self.level(context, printed, {**labels, self.along: r[self.along]}) for r in records]
            if any(b is None or b <= 0 for b in levels):
                return Verdict(None, [f"no {'trivial baseline of the dev set' if self.trivial and context.weighs_noise else 'published ' + self.baseline} "
                                      "to measure convergence against"])
            factors = [(length if length else 1.0) / b for b in levels]
            gaps = [f * (r["mean_l"] - r["mean_w"]) for f, r in zip(factors, records)]
            spreads, rises, keys = [], [], []
            for i in range(1, len(records)):
                before, after = records[i - 1], records[i]
                noise = context.noise_of(metric, [(factors[i], pair_side(after, "l")), (-factors[i], pair_side(after, "w")),
                                                  (-factors[i - 1], pair_side(before, "l")),
                                                  (factors[i - 1], pair_side(before, "w"))], self.seeds_only)
                spreads.append(noise)
                ok = decide(gaps[i] - gaps[i - 1], noise, context)
                if ok.holds is not True and after["mean_l"] >= levels[i]:
                    # the slower cell never converged at the larger T: its gap there is a lower bound,
                    # which cannot refute a rise
                    ok = replace(ok, holds=None, p_fails=1.0)
                elif ok.holds is True and before["mean_l"] >= levels[i - 1]:
                    # nor at the smaller T: the gap there is a lower bound too, so a rise from it to a
                    # larger gap is not shown (the true gap may have been larger already)
                    ok = replace(ok, holds=None, p_holds=1.0)
                rises.append(ok)
                keys.append(unit_key(metric, {**labels, self.along: f"{before[self.along]}-{after[self.along]}"}))
            ok = combined(rises)
            label = ", ".join(map(str, key if isinstance(key, tuple) else (key,)))
            shown_ = ", ".join(f"{self.along}={r[self.along]}: {g:+.2f}" if length else f"{self.along}={r[self.along]}: "
                               f"{100 * g:+.0f} %" for r, g in zip(records, gaps))
            censored = [r[self.along] for r, b in zip(records, levels) if r["mean_l"] >= b]
            level = "/".join(f"{b:.3g}" for b in dict.fromkeys(levels))
            results.append((ok, f"epochs before converging, {name_of(self.than)} minus {label or name_of(self.better)} "
                                f"({unit}, k = E·{metric}/{level}): {shown_} — "
                                f"{ {True: 'grows', False: 'does not grow', None: 'not settled'}[ok.holds]}"
                                + (f"; {name_of(self.than)} never below the baseline at {self.along}="
                                   f"{', '.join(censored)}" if censored else "")
                                + ("" if not context.weighs_noise or all(spreads) else f" ({ONE_SEED})"),
                            unit_key(metric, labels), keys))
        return verdict_of(results, self.quantifier, f"no unit with two values of {self.along}")

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


@PAPER_CHECKS.register("pru:NoSignificantDifference")
class NoSignificantDifference(Check):
    """"No significant difference between ``a`` and ``b``", in every unit and metric (``in:``,
    Holm's correction for the refutations).

    Region: −``tolerance`` ≤ m_a − m_b ≤ ``tolerance`` (metric units; a number, or a mapping
    metric → number), an equivalence test (TOST, :func:`~..noise.within`): it holds only when the
    90 % interval of the difference lies inside ± ``tolerance``, and fails when it lies outside
    (with no tolerance, when the difference is significant: the interval excludes 0). A
    non-significant difference alone is absence of evidence, not evidence of no difference, so
    without a ``tolerance`` (default 0) the claim can fail but never hold on noisy numbers (only
    on identical exact ones). Noise: of the difference of the two means
    (:meth:`~..noise.Context.noise`: Welch over seeds, a prediction interval, or the paired
    bootstrap of two single runs); with ``noise: seeds`` one seed per cell leaves it open even
    where the runs kept their test items: the paired bootstrap would tell two trained models
    apart, not the two cells. On the published point values it cannot be judged without a
    tolerance (a significance statement needs a spread), and is judged as printed with one."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.a, self.b = self.spec["a"], self.spec["b"]
        self.tolerance = self.spec.get("tolerance", 0.0)

    def tolerance_of(self, metric: str) -> float:
        if isinstance(self.tolerance, Mapping):
            return float(self.tolerance.get(metric, 0.0))
        return float(self.tolerance)

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            tolerance = self.tolerance_of(metric)
            pairs, units = Compare({"better": self.a, "than": self.b, "per": self.per}).pairs(self.rows(frame, metric))
            for rec in pairs.to_dict("records"):
                noise = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")], self.seeds_only)
                gap = abs(rec["mean_w"] - rec["mean_l"])
                margin = format_value(tolerance, metric, True).lstrip("+")
                if not context.weighs_noise and not tolerance:  # a point value each: no spread to test against
                    ok, said = None, "no spread to test the difference against"
                else:
                    ok = within(gap, tolerance, noise, context)
                    said = {True: f"no significant difference (within ± {margin}: an equivalence test)",
                            False: "a significant difference" + (f" (beyond ± {margin})" if tolerance else ""),
                            None: "no spread to test the difference against" if noise is None else
                            f"neither shown within ± {margin} nor different: open"}[ok.holds]
                results.append((ok, f"{unit_name(rec, units)}: {name_of(self.a)} {format_value(rec['mean_w'], metric)} "
                                    f"vs {name_of(self.b)} {format_value(rec['mean_l'], metric)} ({metric}): {said}"
                                    + (noise_text(noise, metric) if noise is not None and context.weighs_noise else ""),
                                unit_key(metric, {c: rec[c] for c in [*units, *(c for c in rec
                                                                               if c.startswith(("me_", "vs_")))]})))
        verdict = verdict_of(results, self.quantifier, f"no {name_of(self.a)} beside {name_of(self.b)}")
        if verdict.holds is None and results and not context.weighs_noise:
            return Verdict(None, verdict.details, "cannot be judged")
        return verdict

    def example(self, frame, context):
        """``a`` and ``b`` equal and exact: no difference at all."""
        frame = frame.assign(n=frame["n"].astype(float)) if "n" in frame else frame.copy()
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            frame.loc[a.union(b), "mean"] = NEUTRAL
            frame.loc[a.union(b), "std"] = 0.0
            frame.loc[a.union(b), "n"] = math.inf
        return frame

    def counterexample(self, frame, context):
        """``a`` a hundred units and ten tolerances away from ``b``, with a spread of one unit."""
        frame = self.example(frame, context)
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            frame.loc[a.union(b), "std"] = 1.0
            frame.loc[a.union(b), "n"] = NEUTRAL_SEEDS
            frame.loc[a, "mean"] = NEUTRAL + 100.0 + 10 * self.tolerance_of(metric)
        return frame


@PAPER_CHECKS.register("pru:Overfitting")
class Overfitting(Check):
    """Fig. 4's overfitting, read off each run's validation-BLEU curve (analysis ``validation_peak``):
    a model overfits when its validation BLEU falls after its peak, drop = peak − last > 0; it does
    not when the curve does not fall after the peak (drop 0). ``overfits`` says which the sentence
    claims for the cells of ``cells``, in every direction. On ours the drop counts only beyond the
    noise over seeds. A run whose peak is its last epoch (``peak_epoch`` = ``epochs``) was still
    improving when training ended: whether it would overfit cannot be seen, and that unit is
    inconclusive, never a pass.

    Region, per unit (cell, direction): drop > 0 (``overfits: true``) or drop ≤ 0 (``overfits:
    false``); every unit by ``in:`` (Holm's correction). Noise: over seeds
    (:func:`~..noise.spread_of`: Welch's t); one seed leaves it open. "Does not overfit" holds
    only when the 90 % interval of the drop lies at or below 0: since a drop is never negative,
    when every seed's curve ends at its peak (no spread, drop 0); a drop within the noise of 0 is
    no evidence that the curve does not fall, and stays open."""

    kind = ""

    def __init__(self, spec):
        spec = dict(spec)
        self.drop = spec.pop("drop", "dev_bleu_drop")
        super().__init__({**spec, "metric": [self.drop, "peak_epoch", "epochs"]})
        self.cells = spec["cells"]
        self.overfits = bool(spec.get("overfits", False))

    def judge(self, frame, context):
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
            # a drop is never negative: every run ending at its peak (drop 0 in every seed) is exact,
            # not a spread the seeds failed to measure
            noise = Estimate(0.0, 0.0, source=EXACT) if drop["mean"] == 0 and drop["std"] == 0 else spread_of(drop)
            still = "peak_epoch" in by and "epochs" in by and by["peak_epoch"]["mean"] >= by["epochs"]["mean"]
            if still:
                ok = None
                said = "still improving at its last epoch: overfitting cannot be seen"
            elif self.overfits:
                ok = decide(drop["mean"], noise, context)
                said = {True: "falls after its peak", False: "does not fall after its peak",
                        None: "falls within the noise"}[ok.holds]
            else:
                ok = decide(-drop["mean"], noise, context, strict=False)
                said = {True: "does not fall after its peak", False: "falls after its peak",
                        None: "not settled"}[ok.holds]
            results.append((ok, f"{unit_name(rec, units)}: validation BLEU {said} (drop "
                                f"{format_value(drop['mean'], 'dev_bleu', True)}"
                                + (f", peak at epoch {by['peak_epoch']['mean']:g} of {by['epochs']['mean']:g}"
                                   if "peak_epoch" in by and "epochs" in by else "") + ")"
                                + (noise_text(noise, "dev_bleu") if context.weighs_noise else ""),
                            unit_key(self.drop, rec)))
        if not results:
            return Verdict(None, [f"no validation curve of {name_of(self.cells)}"])
        verdict = verdict_of(results, self.quantifier, "")
        if verdict.holds is None and not context.weighs_noise:
            return Verdict(None, verdict.details, "cannot be judged")
        return verdict

    def set_drop(self, frame, context, falls: bool):
        frame = frame.copy()
        frame.loc[self.picked(frame, "peak_epoch", self.cells), "mean"] = 3.0
        frame.loc[self.picked(frame, "epochs", self.cells), "mean"] = 6.0
        frame.loc[self.picked(frame, self.drop, self.cells), "mean"] = 2.0 if falls else 0.0
        if not falls:  # every seed's curve ends at its peak
            frame.loc[self.picked(frame, self.drop, self.cells), "std"] = 0.0
        return frame

    def example(self, frame, context):
        return self.set_drop(frame, context, self.overfits)

    def counterexample(self, frame, context):
        return self.set_drop(frame, context, not self.overfits)
