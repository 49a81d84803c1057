"""``within``: ``a`` and ``b`` differ by at most ``tolerance`` (a number, or ``{std_of: selector,
times: k}``: k times that selection's standard deviation over seeds) in every (or most) unit.

A tolerance of k standard deviations is estimated from the same kind of sample as the
difference: on ours it is not taken as a constant but tested with the noncentral t of
:func:`~..inference.within_spreads` (both arms assumed as noisy as the ``std_of`` arm)."""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ...metrics.formats import format_value
from ..inference import Arm, within_spreads
from ..noise import arm_of, noise_text, with_spread_columns, within
from ..selection import constant_labels, name_of, pair_side, select, unit_key, unit_name
from ..verdict import Verdict, verdict_of
from .base import Check
from .compare import Compare


class Within(Check):
    """``a`` and ``b`` differ by at most a tolerance in every (or most) unit."""

    kind = "within"

    def __init__(self, spec):
        super().__init__(spec)
        self.a, self.b = self.spec["a"], self.spec["b"]
        self.tolerance = self.spec.get("tolerance", 0.0)

    def tolerance_in(self, rows: pd.DataFrame, metric: str, unit: Mapping | None = None) -> tuple[float | None, str, Arm | None]:
        """(tolerance, how it is said, the arm whose seed spread sets it): a number, or ``times`` ×
        the standard deviation of the ``std_of`` rows (those of the pair's unit when it has one,
        else the largest)."""
        if not isinstance(self.tolerance, Mapping):
            return float(self.tolerance), format_value(float(self.tolerance), metric), None
        picked = select(rows, self.tolerance["std_of"])
        if unit:
            same = picked
            for label, value in unit.items():
                if label in same:
                    same = same[same[label] == value]
            picked = same if len(same) else picked
        picked = picked[picked["std"].notna()] if "std" in picked else picked.iloc[0:0]
        if picked.empty:
            return None, "", None
        row = picked.loc[picked["std"].astype(float).idxmax()].to_dict()
        times = float(self.tolerance.get("times", 1.0))
        value = times * float(row["std"])
        return value, f"{times:g} × std of {name_of(self.tolerance['std_of'])} = {format_value(value, metric)}", \
            arm_of(row)

    def judge(self, frame, context):
        results, missing_spread = [], False
        for metric in self.metrics:
            rows = with_spread_columns(self.rows(frame, metric))
            pairs, units = Compare({"better": self.a, "than": self.b, "per": self.per}).pairs(rows)
            for rec in pairs.to_dict("records"):
                tolerance, said, spread_arm = self.tolerance_in(rows, metric, {u: rec[u] for u in units})
                if tolerance is None:
                    missing_spread = True
                    continue
                gap = abs(rec["mean_w"] - rec["mean_l"])
                sides = [pair_side(rec, "w"), pair_side(rec, "l")]
                if spread_arm is not None and context.weighs_noise:  # an estimated tolerance: its own noise
                    weight = sum(0.0 if a.exact else 1 / a.n for a in map(arm_of, sides))
                    ok = within_spreads(rec["mean_w"] - rec["mean_l"], float(self.tolerance.get("times", 1.0)),
                                        spread_arm, weight)
                    spread = ok.estimate
                else:
                    spread = context.noise(metric, sides[:1], sides[1:], self.seeds_only)
                    ok = within(gap, tolerance, spread, context)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.b)
                me = ", ".join(str(rec[c]) for c in rec if c.startswith("me_")) or name_of(self.a)
                results.append((ok, f"{unit_name(rec, units)}: |{me} {format_value(rec['mean_w'], metric)}"
                                    f" − {vs} {format_value(rec['mean_l'], metric)}| "
                                    f"{ {True: '≤', False: '>', None: '≈'}[ok.holds]} {said} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else ""),
                                unit_key(metric, {**constant_labels(rows), **{c: rec[c] for c in [*units, *(
                                    c for c in rec if c.startswith(("me_", "vs_")))]}})))
        if not results and missing_spread:
            return Verdict(None, ["no spread over seeds to judge against (one seed, or none published)"])
        return verdict_of(results, self.quantifier, f"no {name_of(self.a)} beside {name_of(self.b)}")

    def spread(self, frame):
        """One unit of standard deviation on the rows a ``std_of`` tolerance reads."""
        if isinstance(self.tolerance, Mapping):
            for metric in self.metrics:
                frame.loc[self.picked(frame, metric, self.tolerance["std_of"]), "std"] = 1.0
        return frame

    def example(self, frame, context):
        """``a`` and ``b`` take one value (the largest of ``a``'s)."""
        frame = self.spread(frame.copy())
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            if len(a):
                frame.loc[a.union(b), "mean"] = frame.loc[a, "mean"].max()
        return frame

    def counterexample(self, frame, context):
        """``a`` far from ``b``: ten tolerances and ten units away."""
        frame = self.spread(frame.copy())
        tolerance = float(self.tolerance) if not isinstance(self.tolerance, Mapping) else \
            float(self.tolerance.get("times", 1.0))
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            if len(b):
                frame.loc[a, "mean"] = frame.loc[b, "mean"].max() + 10 * abs(tolerance) + 10
        return frame
