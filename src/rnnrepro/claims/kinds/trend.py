"""``trend``: values rise (``direction: increasing``) or fall along a label in every unit.

Two things make a rise, each judged on the 90 % interval of its difference (:mod:`..inference`):

* **overall**: the last value is above the first;
* **no step back**: with ``margin`` ≥ 0 every step rises by more than ``margin`` (``strict:
  false``: at least by it); with a negative margin (a step back that the paper's figure cannot
  show is tolerated) every later value is at least ``margin`` from every earlier one, so that
  small steps back cannot add up to a fall (a curve that sinks 16 pp in steps of 0.9 pp under a
  1 pp tolerance does not rise).

A unit's parts combine as one (:func:`..noise.combined`), its units by ``in:``."""
from __future__ import annotations

from ...labels import natural_key
from ...metrics.formats import format_value
from ..noise import combined, decide, with_spread_columns
from ..selection import constant_labels, unit_key, unit_name, varying
from ..verdict import verdict_of
from .base import NEUTRAL, Check


class Trend(Check):
    """Values rise or fall along a label in every (or most) unit: each step by more than
    ``margin`` (metric units; a negative margin tolerates a step back that small, e.g. what the
    paper's figure cannot show)."""

    kind = "trend"

    def __init__(self, spec):
        super().__init__(spec)
        self.along = self.spec["along"]
        self.up = self.spec.get("direction", "increasing") == "increasing"
        self.strict = bool(self.spec.get("strict", False))
        self.margin = float(self.spec.get("margin", 0.0))

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            if self.along not in rows:
                continue
            units = self.per or varying([rows], {self.along})
            for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                group = group.sort_values(self.along, key=lambda s: s.map(natural_key))
                if group[self.along].nunique() < 2:
                    continue
                values = group["mean"].tolist()
                records = with_spread_columns(group).to_dict("records")
                ok = combined(self.parts(records, metric, context))
                rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
                shown = ", ".join(f"{self.along}={g}: {format_value(v, metric)}" for g, v in zip(group[self.along], values))
                tolerated = (f", a step back of up to {format_value(-self.margin, metric, True).lstrip('+')} allowed"
                             if self.margin < 0 else "")
                results.append((ok, f"{unit_name(rec, units)}: {shown} ({metric}{tolerated}, "
                                    f"{'rising' if self.up else 'falling'}: "
                                    f"{dict([(True, 'yes'), (False, 'no'), (None, 'within the noise')])[ok.holds]})",
                                unit_key(metric, {**constant_labels(rows), **rec}),
                                [unit_key(metric, {**constant_labels(rows), **rec, self.along: v})
                                 for v in group[self.along]]))
        return verdict_of(results, self.quantifier, f"no unit with two values of {self.along}")

    def parts(self, records: list[dict], metric: str, context) -> list:
        """The decisions that make a rise along ``records`` (sorted along the label)."""
        sign = 1 if self.up else -1

        def rise(a, b, margin, strict):
            return decide(sign * (b["mean"] - a["mean"]) - margin, context.noise(metric, [b], [a], self.seeds_only),
                          context, strict)

        overall = rise(records[0], records[-1], 0.0, True)
        if self.margin >= 0:
            steps = [rise(a, b, self.margin, self.strict) for a, b in zip(records, records[1:])]
        else:
            steps = [rise(a, b, self.margin, False) for i, a in enumerate(records) for b in records[i + 1:]]
        return [overall, *steps]

    def ranked(self, frame, flip):
        frame = frame.copy()
        for metric in self.metrics:
            rows = self.picked(frame, metric, {})
            if self.along not in frame:
                continue
            ranks = frame.loc[rows, self.along].map(lambda v: natural_key(v)[1] if natural_key(v)[0] == 0 else 0.0) \
                .rank(method="dense")
            up = self.up != flip
            frame.loc[rows, "mean"] = NEUTRAL + 10 * ranks if up else NEUTRAL - 10 * ranks
        return frame

    def example(self, frame, context):
        return self.ranked(frame, False)

    def counterexample(self, frame, context):
        return self.ranked(frame, True)
