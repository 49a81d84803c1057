"""The drnn paper's claims that need code (Turek et al.; ``config/studies/drnn.yaml``): the
bound of Fig. 3 (:class:`ReversalBound`), the delay at which the d-LSTM reaches the Bi-LSTM
(:class:`ReachesBiLSTM`), Fig. 4's "well" and "poor" read on its log scale against the paper's
own names for the LSTM's cells (:class:`NearerWell`), the measured cost of a forward pass
(:class:`CheaperForward`) and Table 1's "small improvement" (:class:`SmallGain`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from ...bounds import reversal_bound as analytic_bound
from ...labels import label_int
from ...metrics.formats import format_value
from ..inference import ITEMS, Arm, Estimate
from ..inference import estimate as estimate_of
from ..kinds.base import PAPER_CHECKS, Check
from ..kinds.compare import Compare
from ..noise import ONE_SEED, combined, decide, noise_text, spread_of, with_spread_columns, within
from ..selection import pair_side, select, unit_key, unit_name
from ..verdict import Verdict, verdict_of


def binomial_noise(bound: float, T: int, V: int, sequences: int | None) -> Estimate | None:
    """The noise of the test accuracy of a predictor that meets the bound exactly, from the test
    set alone (normal approximation): of the T tokens of each of ``sequences`` test sequences a
    fraction g = (1 − bound)/(1 − 1/V) is guessed, each right with p = 1/V, so
    σ = sqrt(g · p (1 − p) / (sequences · T)) (0 where nothing is guessed: exact). None when the
    number of test sequences is unknown (the published numbers: judged as printed)."""
    if not sequences:
        return None
    p = 1 / V
    guessed = max(0.0, (1 - bound) / (1 - p))
    se = float(np.sqrt(guessed * p * (1 - p) / (sequences * T)))
    return Estimate(0.0, se, math.inf, ITEMS, note=f"binomial noise of {sequences:,} test sequences")


def test_sequences(spec, context) -> int | None:
    """The number of test sequences of our runs at the context's scale (``test_sequences``: a
    mapping scale → number); None for the published numbers."""
    counts = spec.get("test_sequences") or {}
    return None if context.scale is None else counts.get(context.scale)


@PAPER_CHECKS.register("drnn:ReversalBound")
class ReversalBound(Check):
    """At every delay run (or those ``delays`` names) the d-LSTM's test accuracy meets the expected
    bound ½(1 + 1/V) + ⌊(d + 1)/2⌋ · (1/T) · (1 − 1/V), capped at 1. Two sides, each a part that
    must hold (:func:`~..noise.combined`), the delays combined as "every" (:func:`verdict_of`):

    - not above it (``above``), region θ = accuracy − bound ≤ 0: the bound is a ceiling on the
      expected accuracy of any predictor that sees d inputs ahead (above it is a leak or an
      off-by-one delay), whatever the seeds. Noise: the test set's binomial noise
      (:func:`binomial_noise`), so it holds when the accuracy is below the bound beyond that noise
      and does not hold when it is above it beyond that noise;
    - not short of it (``below``, "capable of achieving"), region θ ≥ −``resolution``: short of
      the bound by no more than Fig. 3 can show (1 pp: 1/40 of its axis from 0.6 to 1; the test
      set's 90 % half-width when that is larger). Noise: over seeds (one seed leaves it open); it
      holds only when the 90 % interval lies inside the region. The sentence is the caption of
      Fig. 3, so "achieving" is read at the precision of the figure it describes, not at the test
      set's, which is finer than the authors' own evidence.

    ``sides``: ``[above, below]`` (default) or ``[above]`` ("unable to reverse more than half").
    ``above_slack`` widens the region above the bound on ours (default 0): a number (metric units,
    e.g. Fig. 3's 1 pp for a sentence read off that figure) or ``half_step``, half of what one
    more known element adds, ½ (1/T)(1 − 1/V) ("more than half" counted in elements).
    ``statistic: max`` reads each delay's best run ("capable of"): its accuracy is one trained
    model's, weighed by the test set's binomial noise on both sides, not by the seeds' spread.
    Numbers without a test-set size (published ones, read off Fig. 3) are judged as printed, with
    the plot's ``resolution`` as their slack on both sides."""

    kind = ""

    def __init__(self, spec):
        super().__init__({"metric": "test_accuracy", **spec})
        self.sides = list(spec.get("sides", ["above", "below"]))
        self.delays = spec.get("delays")
        self.resolution = float(spec.get("resolution", 0.01))
        self.above_slack = spec.get("above_slack", 0.0)
        self.best = spec.get("statistic", "mean") == "max"

    def slack_above(self, T: int, V: int) -> float:
        """The region's room above the bound on ours (``above_slack``)."""
        if self.above_slack == "half_step":
            return 0.5 * (1 / T) * (1 - 1 / V)
        return float(self.above_slack)

    def bounded(self, frame: pd.DataFrame) -> pd.DataFrame:
        if frame.empty or "delay" not in frame or "metric" not in frame:
            return frame.iloc[0:0].assign(bound=[])
        rows = self.rows(frame, "test_accuracy")  # statistic: max reads each delay's best run
        rows = rows[(rows["model"] != "brnn") & (rows["delay"] != "")]
        if self.delays is not None:
            rows = select(rows, {"delay": self.delays})
        if self.best and "max" in rows:  # ours: one trained model, weighed by the test set's noise, not the seeds'
            rows = rows.assign(std=0.0, n=1)
        return rows.assign(bound=[analytic_bound(label_int(d), label_int(T), label_int(V))
                                  for d, T, V in zip(rows["delay"], rows["T"], rows["V"])])

    def judge(self, frame, context):
        rows = self.bounded(frame)
        sequences = test_sequences(self.spec, context)
        results = []
        for rec in with_spread_columns(rows).sort_values("bound").to_dict("records"):
            T, V = label_int(rec["T"]), label_int(rec["V"])
            gap = rec["mean"] - rec["bound"]
            # the test set's binomial noise (ours), or, for numbers read off Fig. 3 (the published side,
            # which has none today), the plot's resolution as slack; 1e-12 absorbs rounding
            binomial = binomial_noise(rec["bound"], T, V, sequences)
            half = binomial.quantile() * binomial.se if binomial is not None else 0.0
            above_slack = self.slack_above(T, V) if binomial is not None else self.resolution
            short = max(half, self.resolution)  # below the bound: what Fig. 3 can show
            seeds = spread_of(rec)
            parts, said = [], []
            if "above" in self.sides:  # without a test-set size on ours: the figure's slack, over seeds
                above = decide(above_slack - gap + 1e-12, binomial if binomial is not None else seeds, context,
                               strict=False)
                parts.append(above)
                said.append({True: "not above it", False: "above it: a leak",
                             None: "at it within the noise: no evidence of staying under it"}[above.holds])
            if "below" in self.sides:
                below = decide(gap + short + 1e-12, binomial if self.best and binomial is not None else seeds,
                               context, strict=False)
                parts.append(below)
                said.append({True: f"short of it by at most {100 * short:.0f} pp",
                             False: f"short of it by more than {100 * short:.0f} pp",
                             None: f"short of it by at most {100 * short:.0f} pp within the noise" if seeds
                             else f"short of it or not: {ONE_SEED}"}[below.holds])
            ok = combined(parts)
            slack = (f"; above: the test set's 90 % half-width {100 * half:.2f} pp, below: Fig. 3's "
                     f"{100 * short:.0f} pp" if binomial is not None else f"; read off Fig. 3 to {100 * self.resolution:.0f} pp")
            results.append((ok, f"T={rec['T']}, d={rec['delay']}: {100 * rec['mean']:.2f} % vs bound "
                                f"{100 * rec['bound']:.2f} % ({100 * gap:+.2f} pp{slack}): "
                                + ("meets it" if ok.holds else "; ".join(said))
                                + (noise_text(seeds, "test_accuracy") if context.weighs_noise and "below" in self.sides
                                   else ""),
                            unit_key("test_accuracy", {"T": rec["T"], "delay": rec["delay"]})))
        return verdict_of(results, self.quantifier, "no d-LSTM accuracies (the paper gives Fig. 3 as a plot only)")

    def shifted(self, frame: pd.DataFrame, shift: float) -> pd.DataFrame:
        frame = frame.copy()
        rows = self.bounded(frame)
        frame.loc[rows.index, "mean"] = rows["bound"] + shift
        return frame

    def example(self, frame, context):
        """Half of Fig. 3's resolution below the bound: within what it can show, and below the
        ceiling beyond the test set's noise at the paper's size."""
        return self.shifted(frame, -self.resolution / 2)

    def counterexample(self, frame, context):
        # above the bound (a leak) where the bound is below 1, else far short of it
        frame = self.shifted(frame, 0.2)
        rows = self.bounded(frame)
        capped = rows[rows["bound"] >= 1].index
        if "below" in self.sides:
            frame.loc[capped, "mean"] = 0.5
        return frame


def same_level(T: int, V: int) -> float:
    """Half the expected gap between a network that sees the whole sequence (accuracy 1) and the
    best one that lacks its last element (the bound at d = T − 2): ½ (1 − bound(T − 2)) =
    ½ (1/T)(1 − 1/V) for even T, 1.875 pp at T = 20, V = 4. Closer than this to the Bi-LSTM is
    "the same level"; farther, the level of a network without the entire sequence."""
    return 0.5 * (1 - analytic_bound(max(0, T - 2), T, V))


@PAPER_CHECKS.register("drnn:ReachesBiLSTM")
class ReachesBiLSTM(Check):
    """"Reaching the same level as the Bi-LSTM once the network has access to the entire sequence
    (delay 19)": every d-LSTM with d ≥ T − 1 is within :func:`same_level` of the Bi-LSTM's test
    accuracy, and every d < T − 1 is farther below it than that; with ``highest: true`` only the
    largest delay run is judged, within it (Fig. 3's caption). Published: the first delay the text
    states is T − 1 (an exact comparison of the stated number).

    Regions, with θ = Bi-LSTM − d-LSTM: |θ| < same_level for d ≥ T − 1 (an equivalence test, TOST,
    :func:`~..noise.within`), θ > same_level for d < T − 1 (:func:`~..noise.decide`); every delay
    must hold ("every", Holm's correction for the refutations). Noise: the difference of the two
    means (:meth:`~..noise.Context.noise`): Welch over seeds, a prediction interval for one run
    beside seeded ones, the paired bootstrap of two single runs unless ``noise: seeds``."""

    kind = ""

    def __init__(self, spec):
        super().__init__({"metric": "test_accuracy", **spec})
        self.highest = bool(spec.get("highest", False))

    def judge(self, frame, context):
        if frame.empty or "metric" not in frame:
            return Verdict(None, ["no numbers"])
        stated = frame[frame["metric"] == "first_delay_matching_bilstm"]
        if len(stated):
            if self.highest:  # the highest delay of Fig. 3 is T: at the level when the first one is not above it
                results = [(label_int(v) <= label_int(T), f"T={T}: first delay at the Bi-LSTM's level {label_int(v)} "
                                                    f"(highest delay of Fig. 3: T = {label_int(T)})")
                           for v, T in zip(stated["mean"], stated["T"])]
            else:
                results = [(label_int(v) == label_int(T) - 1, f"T={T}: first delay at the Bi-LSTM's level {label_int(v)} "
                                                         f"(T − 1 = {label_int(T) - 1})")
                           for v, T in zip(stated["mean"], stated["T"])]
            return verdict_of(results, self.quantifier, "")  # no key: a statement, not a unit ours runs
        test = with_spread_columns(frame[frame["metric"] == "test_accuracy"])
        results = []
        for T, rows in test.groupby("T"):
            bi = rows[rows["model"] == "brnn"]
            dl = rows[(rows["model"] != "brnn") & (rows.get("delay", "") != "")]
            if bi.empty or dl.empty:
                continue
            target = bi.iloc[0].to_dict()
            tol = same_level(label_int(T), label_int(dl["V"].iloc[0]))
            if self.highest:
                dl = dl[dl["delay"].map(label_int) == dl["delay"].map(label_int).max()]
            for rec in dl.sort_values("delay", key=lambda s: s.map(label_int)).to_dict("records"):
                d, gap = label_int(rec["delay"]), target["mean"] - rec["mean"]
                spread = context.noise("test_accuracy", [target], [rec], self.seeds_only)
                if d >= label_int(T) - 1:
                    ok = within(abs(gap), tol, spread, context)
                    said = {True: "at its level", False: "not at its level", None: "at its level or not: open"}[ok.holds]
                else:
                    ok = decide(gap - tol, spread, context)
                    said = {True: "below its level", False: "at its level before delay T − 1",
                            None: "below its level or not: open"}[ok.holds]
                results.append((ok, f"T={T}, d={d}: {100 * rec['mean']:.2f} % vs Bi-LSTM {100 * target['mean']:.2f} % "
                                    f"(same level: within {100 * tol:.2f} pp): {said}"
                                    + (noise_text(spread, 'test_accuracy') if context.weighs_noise else ""),
                                unit_key("test_accuracy", {"T": T, "delay": d})))
        return verdict_of(results, self.quantifier, "no d-LSTM beside a Bi-LSTM")

    def values(self, frame, late_accuracy):
        frame = frame.copy()
        means = []
        for model, d, T, V in zip(frame["model"], frame.get("delay", ""), frame["T"], frame["V"]):
            if model == "brnn":
                means.append(1.0)
            elif label_int(d) >= label_int(T) - 1:
                means.append(late_accuracy)
            else:
                means.append(analytic_bound(label_int(d), label_int(T), label_int(V)))
        return frame.assign(mean=means)

    def example(self, frame, context):
        return self.values(frame, 1.0)

    def counterexample(self, frame, context):
        return self.values(frame, 0.9)


LN10 = float(np.log(10))


def log_spread(*parts: tuple[Mapping, float]) -> Estimate | None:
    """The estimate of Σ c · log10(mean) over (summary row, c) parts, by the delta method:
    sd(log10 m) = std / (m · ln 10) per seed, weighed over seeds (Welch, or a prediction interval
    for single runs beside seeded ones: :func:`~..inference.estimate`); None without a spread."""
    terms = []
    for row, c in parts:
        mean, std, n = row.get("mean"), row.get("std"), row.get("n")
        n = 1 if n is None or pd.isna(n) else float(n)
        std = math.nan if std is None or pd.isna(std) else float(std)
        log_std = std / (abs(mean) * LN10) if mean else std
        terms.append((c, Arm(float(np.log10(mean)) if mean and mean > 0 else math.nan, log_std, n)))
    return estimate_of(terms, seeds_only=True)


@PAPER_CHECKS.register("drnn:NearerWell")
class NearerWell(Check):
    """Fig. 4's words "well" and "poor", on its log10 scale, anchored on the paper's own names for
    the LSTM's cells (Sec. 4.2): at a = 0 it "performs quite well", at every a > 0 it is "poor".
    A ``target`` cell (γ, a) performs well when its log10 test MSE is nearer the ``well`` anchor
    than the ``poor`` anchor, i.e. below their midpoint, and poorly when above it (``expect``).
    ``well_match`` / ``poor_match`` name the labels an anchor shares with its target (e.g. the
    LSTM at the same γ and a = 0, and at the same γ and a); every (target, poor anchor) pair is a
    comparison. Published (Fig. 4 is a colour map only): ``stated`` compares the largest
    well-filtered a the text states for a delay (``last_good_acausality``) with ``at_least`` or
    ``below``, exactly.

    Region: log10 MSE of the target below the anchors' midpoint (``expect: poor``: above it), in
    every pair (Holm's correction for the refutations; a pair whose anchors do not separate stays
    open). Noise: the three means over repetitions, by the delta method on the logs
    (:func:`log_spread`: Welch's t, or a prediction interval for a single run); one repetition
    leaves it open."""

    kind = ""

    def __init__(self, spec):
        super().__init__({"metric": "test_mse", **spec})
        self.target, self.well, self.poor = spec["target"], spec["well"], spec["poor"]
        self.well_match, self.poor_match = list(spec.get("well_match", [])), list(spec.get("poor_match", []))
        self.expect_well = spec.get("expect", "well") == "well"
        self.stated = spec.get("stated")

    def anchors(self, rows: pd.DataFrame, selector, match, rec) -> pd.DataFrame:
        picked = select(rows, selector)
        for key in match:
            picked = picked[picked[key] == rec[key]]
        return picked

    def judge(self, frame, context):
        if frame.empty or "metric" not in frame:
            return Verdict(None, ["no numbers"])
        if self.stated is not None:
            stated = select(frame[frame["metric"] == "last_good_acausality"], {"delay": self.stated["delay"]})
            if len(stated):
                value = label_int(stated["mean"].iloc[0])
                ok = value >= self.stated["at_least"] if "at_least" in self.stated else value < self.stated["below"]
                # no key: the text's statement, not a unit our runs compare
                return verdict_of([(bool(ok), f"stated (Sec. 4.2): delay {self.stated['delay']} filters well up to "
                                              f"a = {value}")], self.quantifier, "")
        rows = with_spread_columns(self.rows(frame, "test_mse"))
        rows = rows[rows["mean"] > 0]
        results = []
        for index, rec in select(rows, self.target).iterrows():
            rec = rec.to_dict()
            for well in self.anchors(rows, self.well, self.well_match, rec).to_dict("records"):
                for poor in self.anchors(rows, self.poor, self.poor_match, rec).to_dict("records"):
                    if poor["mean"] == rec["mean"] and all(poor.get(k) == rec.get(k) for k in rec if k not in
                                                            ("mean", "std", "n")):
                        continue  # the target is its own anchor
                    lw, lp, lt = (float(np.log10(r["mean"])) for r in (well, poor, rec))
                    where = ", ".join(f"{k}={rec[k]}" for k in ("grid", "delay", "gamma", "acausality") if k in rec)
                    key = unit_key("test_mse", {**{k: rec[k] for k in ("grid", "delay", "gamma", "acausality") if k in rec},
                                                **{f"{side}_{k}": r[k] for side, r in (("well", well), ("poor", poor))
                                                   for k in ("delay", "gamma", "acausality") if k in r}})
                    if lp <= lw:
                        results.append((None, f"{where}: the anchors do not separate (poor {poor['mean']:.2e} ≤ "
                                              f"well {well['mean']:.2e})", key))
                        continue
                    mid = (lw + lp) / 2
                    excess = mid - lt if self.expect_well else lt - mid
                    spread = log_spread((rec, 1.0), (well, 0.5), (poor, 0.5))
                    ok = decide(excess, spread, context)
                    side = "nearer well" if lt < mid else "nearer poor"
                    results.append((ok, f"{where}: log10 MSE {lt:.2f} vs well {lw:.2f} "
                                        f"({', '.join(f'{k}={well[k]}' for k in ('delay', 'gamma', 'acausality') if k in well)})"
                                        f" / poor {lp:.2f} "
                                        f"({', '.join(f'{k}={poor[k]}' for k in ('delay', 'gamma', 'acausality') if k in poor)})"
                                        f": {side}"
                                        + (f" (± {spread.quantile() * spread.se:.2f} in log10, 90 % interval)"
                                           if context.weighs_noise and spread
                                           else f" ({ONE_SEED})" if context.weighs_noise else ""), key))
        return verdict_of(results, self.quantifier, "no test MSE of a target cell beside both anchors (the paper "
                                                    "gives Fig. 4 as a colour map only)")

    def values(self, frame, target_well: bool):
        frame = frame.copy()
        rows = select(frame[frame["metric"] == "test_mse"], self.where)
        frame.loc[select(rows, self.well).index, "mean"] = 1e-3
        frame.loc[select(rows, self.poor).index, "mean"] = 1.0
        frame.loc[select(rows, self.target).index, "mean"] = 1e-3 if target_well else 1.0
        return frame

    def example(self, frame, context):
        return self.values(frame, self.expect_well)

    def counterexample(self, frame, context):
        return self.values(frame, not self.expect_well)


@PAPER_CHECKS.register("drnn:CheaperForward")
class CheaperForward(Check):
    """"One advantage is in computational cost: for a sequence of length T, the cost to compute a
    forward-pass for the d-RNN is T + d, while for the Bi-RNN the cost is 2T": the advantage
    measured, on the ``cost`` analysis's timings: the CPU time of a forward pass (the cost; other
    processes on a shared machine disturb it far less than the wall time). Region: at every T,
    every d-LSTM with d < T costs less than the Bi-LSTM. Noise: the analysis times each network
    ``repeats`` times, interleaved; a comparison holds when the d-LSTM's slowest repeat is faster
    than the Bi-LSTM's fastest, fails when the Bi-LSTM's slowest is faster than the d-LSTM's
    fastest, and is open when their ranges overlap (more repeats, or a quieter machine, decide
    it: not seeds). The sequential steps counted as the networks run (T + d and 2T, exact by
    construction) are shown beside each, not judged."""

    kind = ""
    METRIC = "forward_cpu_seconds"

    def __init__(self, spec):
        super().__init__({"metric": [self.METRIC, f"{self.METRIC}_min", f"{self.METRIC}_max"], **spec})

    def timings(self, frame) -> dict[tuple, dict[str, float]]:
        """(model, delay, T) -> median, min and max seconds, and the counted steps."""
        found: dict[tuple, dict[str, float]] = {}
        for suffix, name in (("", "median"), ("_min", "min"), ("_max", "max")):
            for rec in self.rows(frame, self.METRIC + suffix).to_dict("records"):
                key = (rec["model"], label_int(rec.get("delay", 0) or 0), label_int(rec["T"]))
                found.setdefault(key, {})[name] = float(rec["mean"])
        for rec in self.rows(frame, "sequential_steps").to_dict("records"):
            key = (rec["model"], label_int(rec.get("delay", 0) or 0), label_int(rec["T"]))
            if key in found:
                found[key]["steps"] = float(rec["mean"])
        return {key: value for key, value in found.items() if {"median", "min", "max"} <= set(value)}

    def judge(self, frame, context):
        timings = self.timings(frame)
        results = []
        for (model, delay, T), d_time in sorted(timings.items(), key=lambda item: (item[0][2], item[0][1])):
            bi = timings.get(("brnn", 0, T))
            if model != "delayed" or bi is None or not delay < T:
                continue
            outcome = True if d_time["max"] < bi["min"] else False if bi["max"] < d_time["min"] else None
            steps = (f" ({label_int(d_time['steps'])} against {label_int(bi['steps'])} sequential steps)"
                     if "steps" in d_time and "steps" in bi else "")
            results.append((outcome, f"T={T}, d-LSTM d={delay}: {1000 * d_time['median']:.3g} ms of CPU "
                                     f"[{1000 * d_time['min']:.3g}, {1000 * d_time['max']:.3g}] against the Bi-LSTM's "
                                     f"{1000 * bi['median']:.3g} ms [{1000 * bi['min']:.3g}, {1000 * bi['max']:.3g}]"
                                     f"{steps}",
                            unit_key(self.METRIC, {"T": T, "delay": delay})))
        verdict = verdict_of(results, self.quantifier, "no timings of both a d-LSTM and the Bi-LSTM")
        if verdict.holds is None and results:  # what decides it is more repeats, not seeds
            verdict = replace(verdict, decision=None, to_decide="more repeats of the cost analysis (its `repeats`), "
                                                                "or a quieter machine: the open comparisons' ranges overlap")
        return verdict

    def scaled(self, frame, factor: float):
        """``frame`` with every d-LSTM's timings ``factor`` times the Bi-LSTM's at the same T."""
        frame = frame.copy()
        for suffix in ("", "_min", "_max"):
            metric = self.METRIC + suffix
            bi = {label_int(rec["T"]): rec["mean"] for rec in
                  frame[(frame["metric"] == metric) & (frame["model"] == "brnn")].to_dict("records")}
            index = frame.index[(frame["metric"] == metric) & (frame["model"] == "delayed")]
            frame.loc[index, "mean"] = [factor * bi[label_int(T)] for T in frame.loc[index, "T"]]
        return frame

    def example(self, frame, context):
        return self.scaled(frame, 0.5)

    def counterexample(self, frame, context):
        return self.scaled(frame, 2.0)


@PAPER_CHECKS.register("drnn:SmallGain")
class SmallGain(Check):
    """"A small improvement": ``better`` beats ``than`` and by no more than ``tolerance``, in every
    unit. Region: 0 < gain ≤ ``tolerance``, as two parts that must both hold
    (:func:`~..noise.combined`): the gain above 0 (:func:`~..noise.decide`) and within ±
    ``tolerance`` (TOST, :func:`~..noise.within`). Noise: the difference of the two means
    (:meth:`~..noise.Context.noise`: Welch over seeds, a prediction interval, or the paired
    bootstrap of two single runs unless ``noise: seeds``)."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.better, self.than = self.spec["better"], self.spec["than"]
        self.tolerance = float(self.spec["tolerance"])

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = Compare({"better": self.better, "than": self.than, "per": self.per}).pairs(
                self.rows(frame, metric))
            for rec in pairs.to_dict("records") if len(pairs) else []:
                gain = (rec["mean_w"] - rec["mean_l"]) * (1 if self.higher(metric) else -1)
                spread = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")], self.seeds_only)
                ok = combined([decide(gain, spread, context), within(gain, self.tolerance, spread, context)])
                results.append((ok, f"{unit_name(rec, units)}: gain {format_value(gain, metric, True)} "
                                    f"(an improvement of at most {format_value(self.tolerance, metric, True)}: "
                                    f"{ {True: 'yes', False: 'no', None: 'open'}[ok.holds]})"
                                    + (noise_text(spread, metric) if context.weighs_noise else ""),
                                unit_key(metric, {**{u: rec[u] for u in units},
                                                  **{c: rec[c] for c in rec if c.startswith(("me_", "vs_"))}})))
        return verdict_of(results, self.quantifier, "no pair to compare")

    def set_gain(self, frame, gain):
        frame = frame.copy()
        for metric in self.metrics:
            win, lose = self.picked(frame, metric, self.better), self.picked(frame, metric, self.than)
            if len(win) and len(lose):
                sign = 1 if self.higher(metric) else -1
                frame.loc[win, "mean"] = frame.loc[lose, "mean"].max() + sign * gain
        return frame

    def example(self, frame, context):
        return self.set_gain(frame, self.tolerance / 2)

    def counterexample(self, frame, context):
        return self.set_gain(frame, 10 * self.tolerance + 1)
