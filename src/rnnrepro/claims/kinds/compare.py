"""``compare``: rows of ``better`` beat rows of ``than`` on each metric by more than ``margin``
(metric units, or with ``relative`` a fraction of the other's value; ``strict: false`` allows
equality; a negative margin is a tolerance), in every unit or, with ``in: most``, in more than
half of them; ``grows_along: T`` also asks the advantage to grow along a label."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ...labels import natural_key
from ...metrics.formats import format_value
from ..inference import Estimate
from ..noise import Context, combined, decide, noise_text, with_spread_columns
from ..selection import constant_labels, name_of, options, pair_side, select, unit_key, unit_name, varying
from ..verdict import verdict_of
from .base import Check


class Compare(Check):
    """``better`` beats ``than`` by more than ``margin`` in every (or most) unit."""

    kind = "compare"

    def __init__(self, spec):
        super().__init__(spec)
        self.better, self.than = self.spec["better"], self.spec["than"]
        self.margin = float(self.spec.get("margin", 0.0))
        self.relative = bool(self.spec.get("relative", False))
        self.strict = bool(self.spec.get("strict", True))
        self.grows = self.spec.get("grows_along")

    def pairs(self, rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
        win, lose = select(rows, self.better), select(rows, self.than)
        if win.empty or lose.empty:
            return pd.DataFrame(), []
        units = self.per or varying([win, lose], set(self.better) | set(self.than))
        mine = [k for k in self.better if k not in units and isinstance(self.better[k], list)]
        opponent = [k for k in self.than if k not in units]
        win, lose = with_spread_columns(win), with_spread_columns(lose)
        left = win[[*units, *mine, "mean", "std", "n", "run"]].rename(
            columns={"mean": "mean_w", "std": "std_w", "n": "n_w", "run": "run_w", **{k: f"me_{k}" for k in mine}})
        right = lose[[*units, *opponent, "mean", "std", "n", "run"]].rename(
            columns={"mean": "mean_l", "std": "std_l", "n": "n_l", "run": "run_l", **{k: f"vs_{k}" for k in opponent}})
        pairs = left.merge(right, on=units) if units else left.merge(right, how="cross")
        return pairs, units

    def advantage(self, metric: str, pairs: pd.DataFrame) -> pd.Series:
        """How much better the winner is: a difference in metric units, or with ``relative`` a
        fraction of the other's value."""
        sign = 1 if self.higher(metric) else -1
        advantage = sign * (pairs["mean_w"] - pairs["mean_l"])
        return advantage / pairs["mean_l"].abs() if self.relative else advantage

    def margin_text(self, metric: str) -> str:
        if not self.margin:
            return ""
        return f" (margin {self.margin:.1%} of it)" if self.relative else f" (margin {format_value(self.margin, metric, True)})"

    def absent(self, rows: pd.DataFrame, units: list[str]) -> list[str]:
        """The values a selector lists (``than: {cell: [lstm, gru]}``) that a unit lacks where both
        sides were run: the sentence compares each of them in every unit, so a claim without one is
        not covered ("beats LSTM and GRU" with no GRU run)."""
        listed = [(side, label, v) for side in (self.better, self.than) for label, value in side.items()
                  if isinstance(value, list) for v in options(value)]
        out = []
        for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
            mine, theirs = select(group, self.better), select(group, self.than)
            if mine.empty or theirs.empty:
                continue
            unit = unit_name(dict(zip(units, key if isinstance(key, tuple) else (key,))), units)
            for side, label, v in listed:
                present = select(group, {k: w for k, w in side.items() if k != label})
                if label not in present or v not in set(present[label].astype(str)):
                    out.append(f"{label}={v}" + (f" ({unit})" if units else ""))
        return out

    def judge(self, frame, context):
        results, missing, absent = [], 0, []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            pairs, units = self.pairs(rows)
            if pairs.empty:
                continue
            gone = self.absent(rows, units)
            absent += [g for g in gone if g not in absent]
            missing += len(gone)  # a comparison per value a unit lacks
            pairs = pairs.assign(adv=self.advantage(metric, pairs))
            fixed = constant_labels(rows)
            for rec in pairs.to_dict("records"):
                spread = self.spread(rec, metric, context)
                ok = decide(rec["adv"] - self.margin, spread, context, self.strict, self.alpha)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.than)
                me = ", ".join(str(rec[c]) for c in rec if c.startswith("me_")) or name_of(self.better)
                said = self.said(ok.holds)
                key = unit_key(metric, {**fixed, **{c: rec[c] for c in [*units, *(c for c in rec if c.startswith(("me_", "vs_")))]}})
                results.append((ok, f"{unit_name(rec, units)}: {me} {format_value(rec['mean_w'], metric)} {said} "
                                    f"{vs} {format_value(rec['mean_l'], metric)}{self.margin_text(metric)} ({metric})"
                                    + (noise_text(spread, metric if not self.relative else "", self.alpha)
                                       if context.weighs_noise else ""),
                                key))
            if self.grows:
                results += self.growth(metric, pairs, units, context)
        verdict = verdict_of(results, self.quantifier, f"no {name_of(self.better)} beside {name_of(self.than)} to compare",
                             expected=len(results) + missing if missing else None, alpha=self.alpha)
        if absent and results:
            verdict.details.insert(0, f"the sentence also compares {', '.join(absent)}: not run here")
        return verdict

    def said(self, holds: bool | None) -> str:
        """How a comparison reads: "better than" only where the claim asks for better (a negative
        margin is a tolerance: "not worse beyond the margin than")."""
        if holds is None:
            return "within the noise of"
        if self.margin < 0:
            return "not worse beyond the margin than" if holds else "worse beyond the margin than"
        if self.margin > 0:
            return "better by more than the margin than" if holds else "not better by more than the margin than"
        return "better than" if holds else "not better than"

    def spread(self, rec: Mapping[str, Any], metric: str, context: Context) -> Estimate | None:
        """The noise of one pair's advantage (in its units: a fraction of the other's value when
        relative): over seeds, a prediction interval for a single run beside seeded ones, or the
        paired bootstrap of two single runs (:meth:`Context.noise`); ``noise: seeds`` never the
        bootstrap."""
        spread = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")], self.seeds_only)
        if spread is not None and self.relative:
            spread = spread.scaled(1 / abs(rec["mean_l"]) if rec["mean_l"] else math.inf)
        return spread

    def growth(self, metric: str, pairs: pd.DataFrame, units: list[str],
               context: Context) -> list[tuple[bool | None, str]]:
        """The advantage rises along ``grows_along`` within every other unit (on ours, each rise
        beyond the noise of the two advantages)."""
        if self.grows not in units:
            return [(False, f"the advantage cannot be followed along {self.grows}: one value only")]
        rest = [u for u in units if u != self.grows] + [c for c in pairs if c.startswith(("me_", "vs_"))]
        out = []
        for key, group in (pairs.groupby(rest, sort=False) if rest else [((), pairs)]):
            group = group.sort_values(self.grows, key=lambda s: s.map(natural_key))
            if len(group) < 2:
                continue
            advantages = group["adv"].tolist()
            records = group.to_dict("records")
            rises = []
            for a, b in zip(records, records[1:]):
                one, two = self.spread(a, metric, context), self.spread(b, metric, context)
                spread = None if one is None or two is None else \
                    Estimate(0.0, math.hypot(one.se, two.se), min(one.df, two.df), one.source, one.sd, one.seeds)
                rises.append(decide(b["adv"] - a["adv"], spread, context, alpha=self.alpha))
            ok = combined(rises, self.alpha)
            steps = ", ".join(f"{self.grows}={g}: {format_value(a, metric, True)}"
                              for g, a in zip(group[self.grows], advantages))
            label = ", ".join(map(str, key if isinstance(key, tuple) else (key,)))
            out.append((ok, f"advantage {dict([(True, 'grows'), (False, 'does not grow'), (None, 'changes within the noise')])[ok.holds]} along {self.grows}"
                            f"{' (' + label + ')' if label else ''}: {steps}"))
        return out

    def steps(self, frame: pd.DataFrame, index: pd.Index) -> pd.Series:
        """1 for every row, or the rank of ``grows_along`` (1, 2, ...) when the gap must grow."""
        if not self.grows or self.grows not in frame:
            return pd.Series(1.0, index=index)
        return frame.loc[index, self.grows].map(lambda v: natural_key(v)[1] if natural_key(v)[0] == 0 else 0.0) \
            .rank(method="dense")

    def example(self, frame, context):
        """The winners beat the best loser by more than the margin (more at each step of
        ``grows_along``)."""
        frame = frame.copy()
        m = abs(self.margin)
        for metric in self.metrics:
            win, lose = self.picked(frame, metric, self.better), self.picked(frame, metric, self.than)
            if win.empty or lose.empty:
                continue
            higher = self.higher(metric)
            best_loser = frame.loc[lose, "mean"].max() if higher else frame.loc[lose, "mean"].min()
            steps = self.steps(frame, win)
            if self.relative:  # advantage (w − l)/l, or (l − w)/l when lower is better
                ratio = 2 * (1 + m) if higher else 2 / max(1e-6, 1 - min(m, 0.999))
                frame.loc[win, "mean"] = best_loser * ratio ** steps if higher else best_loser / ratio ** steps
            else:
                gap = (2 * m + 10) * steps
                frame.loc[win, "mean"] = best_loser + gap if higher else best_loser - gap
        return frame

    def counterexample(self, frame, context):
        """The winners lose clearly to the worst loser."""
        frame = frame.copy()
        for metric in self.metrics:
            win, lose = self.picked(frame, metric, self.better), self.picked(frame, metric, self.than)
            if win.empty or lose.empty:
                continue
            if self.higher(metric):
                frame.loc[win, "mean"] = frame.loc[lose, "mean"].min() / 10 - 10 * abs(self.margin)
            else:
                frame.loc[win, "mean"] = frame.loc[lose, "mean"].max() * 10 + 10 * abs(self.margin)
        return frame
