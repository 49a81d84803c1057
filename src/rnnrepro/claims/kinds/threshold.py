"""``threshold``: every row is ``below`` (or ``above``) a number, a published constant
(``below: "published:baseline_mse"``, or ``{published: params, where: {model: convseq2seq}}``) or a
trivial baseline of the row's own task and split (``{baseline: mean, times: 0.9}``)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...metrics.formats import format_value
from ..inference import EXACT, Estimate
from ..noise import Context, decide, noise_text, with_spread_columns
from ..regime import matching
from ..selection import constant_labels, unit_key, unit_name, varying
from ..verdict import Verdict, verdict_of
from .base import Check


class Threshold(Check):
    """Every row is below (or above) a number, a published constant or a trivial baseline of its
    own task and split (``{baseline: mean, times: 0.9}``: a tenth below what predicting the mean
    scores)."""

    kind = "threshold"

    def bound(self, context: Context, metric: str | None = None,
              rec: Mapping[str, Any] | None = None) -> tuple[float | None, bool]:
        """The bound: a number, ``"published:<metric>"``, ``{published: <metric>, where: {...}}`` or
        ``{baseline: <name>, times: k}`` (of ``rec``'s own labels and ``metric``; None without them;
        with ``published: <metric>``, that published constant where there are no baselines: the
        paper's own numbers)."""
        below = "below" in self.spec
        value = self.spec["below" if below else "above"]
        if isinstance(value, str):
            value = context.constant(value.removeprefix("published:"))
        elif isinstance(value, Mapping) and "baseline" in value:
            rows, times = context.baselines, float(value.get("times", 1.0))
            if rows.empty and value.get("published"):  # the published numbers: the paper's own constant
                printed = context.constant(value["published"])
                return (None if printed is None else times * printed), below
            if rec is None or rows.empty:
                return None, below
            found = matching(rows[(rows["baseline"] == value["baseline"]) & (rows["metric"] == metric)], rec)
            value = float(found["value"].iloc[0]) * times if len(found) else None
        elif isinstance(value, Mapping):
            value = context.constant(value["published"], value.get("where"))
        return value, below

    def bound_text(self, bound: float, metric: str) -> str:
        value = self.spec["below" if "below" in self.spec else "above"]
        if isinstance(value, Mapping) and "baseline" in value:
            times = float(value.get("times", 1.0))
            return f"{times:g} × the {value['baseline']} baseline = {format_value(bound, metric)}" if times != 1 \
                else f"the {value['baseline']} baseline {format_value(bound, metric)}"
        return format_value(bound, metric)

    def judge(self, frame, context):
        results, unbounded = [], 0
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            units = self.per or varying([rows], set())
            for rec in with_spread_columns(rows).to_dict("records"):
                bound, below = self.bound(context, metric, rec)
                if bound is None:
                    unbounded += 1
                    continue
                spread = self.spread(rec, metric, context)
                ok = decide(bound - rec["mean"] if below else rec["mean"] - bound, spread, context)
                op = {True: "<" if below else ">", False: "≥" if below else "≤", None: "≈"}[ok.holds]
                results.append((ok, f"{unit_name(rec, units)}: {format_value(rec['mean'], metric)} {op} "
                                    f"{self.bound_text(bound, metric)} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else ""),
                                unit_key(metric, {**constant_labels(rows), **{u: rec[u] for u in units}})))
        if not results and unbounded:
            return Verdict(None, ["the bound is not among the published values or the baselines"])
        return verdict_of(results, self.quantifier, f"no {' or '.join(self.metrics)} values",
                          expected=len(results) + unbounded if unbounded else None)

    def spread(self, rec: Mapping[str, Any], metric: str, context: Context) -> Estimate | None:
        """The noise of a mean over seeds (or of a single run: the bootstrap over its test items;
        ``noise: seeds``: over seeds only). The best (or worst) seed (``statistic``), which a claim
        about what some run can do reads as it is, is taken as measured."""
        if self.spec.get("statistic", "mean") != "mean":
            return Estimate(0.0, 0.0, source=EXACT)
        return context.noise(metric, [rec], seeds_only=self.seeds_only)

    def set_side(self, frame, context, inside: bool):
        frame = frame.copy()
        for metric in self.metrics:
            for index in self.picked(frame, metric, {}):
                bound, below = self.bound(context, metric, frame.loc[index].to_dict())
                bound = 0.0 if bound is None else bound
                step = abs(bound) * 0.5 + 1.0
                frame.loc[index, "mean"] = bound - step if below == inside else bound + step
        return frame

    def example(self, frame, context):
        return self.set_side(frame, context, True)

    def counterexample(self, frame, context):
        return self.set_side(frame, context, False)
