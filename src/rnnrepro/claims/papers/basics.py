"""The RNN tutorial's claims that need code (Bilici; ``config/studies/basics.yaml``):
:class:`ShrinksExponentially` (Sec. 10: the SRN's gradient norm falls exponentially where
max |λ_i| ≤ 1) and :class:`LessLikelyToSpike` (Sec. 10.1: with clipping, a smaller fraction of runs
leaves the region of steepest descent: spikes or diverges)."""
from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd

from ..inference import EXACT, Decision, Estimate, rate_difference
from ..kinds.base import PAPER_CHECKS, Check
from ..noise import combined, decide
from ..selection import select, unit_key
from ..verdict import Verdict, verdict_of

#: The states of a network the ``vanishing`` analysis measures: at initialisation and trained.
STATES = ("init", "trained")


@PAPER_CHECKS.register("basics:ShrinksExponentially")
class ShrinksExponentially(Check):
    """Where the SRN's W_h has spectral radius ≤ ``max_radius`` (the tutorial's condition
    max λ_i ≤ 1), its log10 gradient norm falls linearly in the distance: slope < 0 and R² of
    the straight line ≥ ``min_r2``; an SRN outside the condition is listed, not judged.

    The sentence is about every network that meets the condition, not about a mean over seeds:
    each state is judged on its worst run (largest slope, smallest R², largest radius where the
    summary gives them, else the mean) as measured, like a threshold on the ``max`` over seeds.

    Region: slope < 0 and R² ≥ ``min_r2`` (both parts must hold, :func:`~..noise.combined`), in
    every state that meets the condition. Noise: none: each is one network's own measured curve,
    an exact value (``Estimate(0, 0)``), on ours as on the published numbers."""

    kind = ""

    def __init__(self, spec):
        metrics = [f"{m}_{s}" for m in ("log10_slope", "fit_r2", "spectral_radius") for s in STATES]
        super().__init__({"metric": metrics, **spec})
        self.min_r2 = float(spec.get("min_r2", 0.95))
        self.max_radius = float(spec.get("max_radius", 1.0))

    WORST = {"log10_slope": "max", "fit_r2": "min", "spectral_radius": "max"}

    def values(self, frame: pd.DataFrame) -> Iterator[tuple[str, dict[str, float]]]:
        """(state, {slope, r2, radius}) of the SRN's worst run in each state."""
        if frame.empty or "cell" not in frame:
            return
        rows = frame[(frame["cell"] == "srn") & frame["metric"].isin(self.metrics)]
        for state in STATES:
            picked = {}
            for m, worst in self.WORST.items():
                mine = rows[rows["metric"] == f"{m}_{state}"]
                column = worst if worst in mine and mine[worst].notna().all() else "mean"
                picked[m] = mine[column].dropna()
            if all(len(v) for v in picked.values()):
                yield state, {m: float(v.iloc[0]) for m, v in picked.items()}

    def judge(self, frame, context):
        results, outside = [], []
        exact = Estimate(0.0, 0.0, source=EXACT)  # one network's own curve, measured: no seed noise to weigh
        for state, v in self.values(frame):
            text = (f"SRN {state}: max |λ| = {v['spectral_radius']:.2f}, slope {v['log10_slope']:.3f} per step "
                    f"(×{10 ** v['log10_slope']:.2f}), R² {v['fit_r2']:.4f}")
            if v["spectral_radius"] > self.max_radius:
                outside.append(f"{text}: outside the condition, not judged")
                continue
            ok = combined([decide(-v["log10_slope"], exact, context),
                           decide(v["fit_r2"] - self.min_r2, exact, context, strict=False)])
            results.append((ok, f"{text}: {'exponential decay' if ok.holds else 'not an exponential decay'}",
                            unit_key("log10_slope", {"cell": "srn", "state": state})))
        verdict = verdict_of(results, self.quantifier, f"no SRN with max |λ| ≤ {self.max_radius:g}")
        verdict.details += outside
        return verdict

    def set_srn(self, frame: pd.DataFrame, slope: float) -> pd.DataFrame:
        frame = frame.copy()
        srn = frame["cell"] == "srn" if "cell" in frame else pd.Series(False, index=frame.index)
        for state in STATES:
            for metric, value in (("log10_slope", slope), ("fit_r2", 0.999), ("spectral_radius", 0.5)):
                frame.loc[srn & (frame["metric"] == f"{metric}_{state}"), "mean"] = value
        return frame

    def example(self, frame, context):
        return self.set_srn(frame, -0.2)

    def counterexample(self, frame, context):
        return self.set_srn(frame, 0.05)  # a norm that grows with the distance



@PAPER_CHECKS.register("basics:LessLikelyToSpike")
class LessLikelyToSpike(Check):
    """With clipping a smaller fraction of runs leaves the region of steepest descent than
    without: a run leaves it when ``metric`` (its largest rise of the smoothed training loss,
    infinite for a divergence) exceeds ``above``. The count of each grid is read from the
    summary over seeds: exactly when every run is on one side (min above, or max at most, the
    bound; or no spread), else only bounded (1 to n − 1 of n runs).

    Region: the clipped grid's rate of leaving below the unclipped grid's (strictly). On the
    published numbers the two fractions are compared as printed. On ours the runs are a sample of
    each grid's rate, a binary outcome: Fisher's exact test (one-sided 5 % each way,
    :func:`~..inference.rate_difference`) on the counts, taking the bounds least favourable to
    the verdict it would give: it holds when the clipped rate is significantly lower even at the
    clipped count's upper and the unclipped count's lower bound, does not hold when the clipped
    rate is significantly higher even at the other two bounds, else it is inconclusive (equal
    counts, e.g. every run of both grids spiking, do not refute a lower rate on so few runs)."""

    kind = ""

    def __init__(self, spec):
        super().__init__({"metric": spec.get("metric", "rise_in_loss"), **spec})
        self.bound = float(spec.get("above", 1.0))
        self.better = spec.get("better", {"grid": "clipped"})
        self.than = spec.get("than", {"grid": "unclipped"})

    def counts(self, rows: pd.DataFrame) -> tuple[int, int, int] | None:
        """(lowest, highest) possible number of runs above the bound, and the number of runs."""
        if rows.empty:
            return None
        if len(rows) > 1:  # an analysis table: one row per run, counted
            k = int((rows["mean"] > self.bound).sum())
            return k, k, len(rows)
        rec = rows.iloc[0]
        n = int(rec["n"]) if "n" in rec and pd.notna(rec["n"]) and math.isfinite(rec["n"]) else 1  # inf: exact
        low = rec["min"] if "min" in rec and pd.notna(rec.get("min")) else None
        high = rec["max"] if "max" in rec and pd.notna(rec.get("max")) else None
        if low is None or high is None:
            if n == 1 or ("std" in rec and rec["std"] == 0):
                low = high = rec["mean"]
            else:
                return None
        if low > self.bound:
            return n, n, n
        if high <= self.bound:
            return 0, 0, n
        return 1, max(1, n - 1), n

    def judge(self, frame, context):
        metric = self.metrics[0]
        rows = self.rows(frame, metric)
        mine, theirs = self.counts(select(rows, self.better)), self.counts(select(rows, self.than))
        if mine is None or theirs is None:
            return Verdict(None, [f"no {metric} of both grids (or no count of runs above {self.bound:g})"])
        (c_low, c_high, c_n), (u_low, u_high, u_n) = mine, theirs
        if context.weighs_noise:  # the counts of a binary outcome: Fisher's exact test, least favourable bounds
            worst, best = rate_difference(c_high, c_n, u_low, u_n), rate_difference(c_low, c_n, u_high, u_n)
        else:  # as printed: the fractions themselves
            worst = decide(u_low / u_n - c_high / c_n, None, context)
            best = decide(u_high / u_n - c_low / c_n, None, context)
        # holds on the least favourable bounds, fails on the most favourable ones
        holds = True if worst.holds is True else False if best.holds is False else None
        ok = Decision(holds, worst.p_holds, best.p_fails, worst.estimate, worst.region)

        def said(low, high, n):
            return f"{low} of {n}" if low == high else f"{low} to {high} of {n}"

        detail = (f"runs whose 10-step mean loss rose more than {self.bound:g} nat (or diverged): with clipping "
                  f"{said(c_low, c_high, c_n)}, without {said(u_low, u_high, u_n)}")
        if context.weighs_noise:
            detail += {True: " — a lower rate with clipping", False: " — a higher rate with clipping",
                       None: " — the rates do not differ beyond the noise of so many runs"}[ok.holds] + \
                f" (Fisher's exact test, one-sided 5 %: p = {worst.p_holds:.2g} lower, {best.p_fails:.2g} higher)"
        return verdict_of([(ok, detail, unit_key(metric, {}))], self.quantifier, "no runs")

    def set_grids(self, frame, clipped: float, unclipped: float):
        frame = frame.copy()
        for selector, value in ((self.better, clipped), (self.than, unclipped)):
            index = self.picked(frame, self.metrics[0], selector)
            frame.loc[index, ["mean", "min", "max"]] = value
            frame.loc[index, "std"] = 0.0
        return frame

    def example(self, frame, context):
        return self.set_grids(frame, 0.1, math.inf)  # no clipped run spikes, every unclipped one diverges

    def counterexample(self, frame, context):
        return self.set_grids(frame, 3.0, 0.1)  # every clipped run spikes, no unclipped one
