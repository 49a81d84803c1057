"""``threshold``: every row is ``below`` (or ``above``) a number, or a published constant
(``below: "published:baseline_mse"``, or ``{published: params, where: {model: convseq2seq}}``)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...metrics.formats import format_value
from ..inference import EXACT, Estimate
from ..noise import Context, decide, noise_text, with_spread_columns
from ..selection import constant_labels, unit_key, unit_name, varying
from ..verdict import Verdict, verdict_of
from .base import Check


class Threshold(Check):
    """Every row is below (or above) a number or a published constant."""

    kind = "threshold"

    def bound(self, context: Context) -> tuple[float | None, bool]:
        """The bound: a number, ``"published:<metric>"`` or ``{published: <metric>, where: {...}}``."""
        below = "below" in self.spec
        value = self.spec["below" if below else "above"]
        if isinstance(value, str):
            value = context.constant(value.removeprefix("published:"))
        elif isinstance(value, Mapping):
            value = context.constant(value["published"], value.get("where"))
        return value, below

    def judge(self, frame, context):
        bound, below = self.bound(context)
        if bound is None:
            return Verdict(None, ["the bound is not among the published values"])
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            units = self.per or varying([rows], set())
            for rec in with_spread_columns(rows).to_dict("records"):
                spread = self.spread(rec, metric, context)
                ok = decide(bound - rec["mean"] if below else rec["mean"] - bound, spread, context)
                op = {True: "<" if below else ">", False: "≥" if below else "≤", None: "≈"}[ok.holds]
                results.append((ok, f"{unit_name(rec, units)}: {format_value(rec['mean'], metric)} {op} "
                                    f"{format_value(bound, metric)} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else ""),
                                unit_key(metric, {**constant_labels(rows), **{u: rec[u] for u in units}})))
        return verdict_of(results, self.quantifier, f"no {' or '.join(self.metrics)} values")

    def spread(self, rec: Mapping[str, Any], metric: str, context: Context) -> Estimate | None:
        """The noise of a mean over seeds (or of a single run: the bootstrap over its test items;
        ``noise: seeds``: over seeds only). The best (or worst) seed (``statistic``), which a claim
        about what some run can do reads as it is, is taken as measured."""
        if self.spec.get("statistic", "mean") != "mean":
            return Estimate(0.0, 0.0, source=EXACT)
        return context.noise(metric, [rec], seeds_only=self.seeds_only)

    def set_side(self, frame, context, inside: bool):
        frame = frame.copy()
        bound, below = self.bound(context)
        bound = 0.0 if bound is None else bound
        step = abs(bound) * 0.5 + 1.0
        for metric in self.metrics:
            rows = self.picked(frame, metric, {})
            frame.loc[rows, "mean"] = bound - step if below == inside else bound + step
        return frame

    def example(self, frame, context):
        return self.set_side(frame, context, True)

    def counterexample(self, frame, context):
        return self.set_side(frame, context, False)
