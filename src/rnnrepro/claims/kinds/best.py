"""``best``: the ``best`` selection is the best of its dimension (``among`` restricts the
competitors) in every (or most) unit."""
from __future__ import annotations

from ...metrics.formats import format_value
from ..noise import ONE_SEED, combined, decide, with_spread_columns
from ..selection import constant_labels, name_of, select, unit_key, unit_name, varying
from ..verdict import verdict_of
from .base import Check


class Best(Check):
    """The ``best`` selection is the best of its dimension in every (or most) unit."""

    kind = "best"

    def __init__(self, spec):
        super().__init__(spec)
        self.best = self.spec["best"]
        self.among = self.spec.get("among") or {}

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = select(self.rows(frame, metric), self.among)
            dims = set(self.best) | set(self.among)
            units = self.per or varying([select(rows, self.best)], dims)
            higher = self.higher(metric)
            for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                mine = select(group, self.best)
                if mine.empty or len(group) < 2:
                    continue
                top = group["mean"].max() if higher else group["mean"].min()
                winner = group.loc[group["mean"] == top].iloc[0]
                group = with_spread_columns(group)
                me = with_spread_columns(mine).iloc[0].to_dict()
                others = [row for index, row in zip(group.index, group.to_dict("records")) if index not in mine.index]
                sign = 1 if higher else -1
                noises = [context.noise(metric, [me], [other], self.seeds_only) for other in others]
                ok = combined([decide(sign * (me["mean"] - other["mean"]), noise, context)
                               for other, noise in zip(others, noises)])
                rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
                dim = next(iter(self.best))
                results.append((ok, f"{unit_name(rec, units)}: best {winner[dim] if dim in winner else '?'} "
                                    f"{format_value(top, metric)}"
                                    + ("" if ok.holds and me["mean"] == top else
                                       f", {name_of(self.best)} {format_value(me['mean'], metric)}")
                                    + f" ({metric})" + ("" if ok.holds is not None else
                                                        " — within the noise of a competitor" if any(noises)
                                                        else f" — {ONE_SEED}"), unit_key(metric, {**constant_labels(rows), **rec}),
                                [unit_key(metric, {**constant_labels(rows), **rec,
                                                   **{f"vs_{k}": other.get(k, "") for k in dims if k in other}})
                                 for other in others]))
        return verdict_of(results, self.quantifier, f"{name_of(self.best)} was not run beside a competitor")

    def example(self, frame, context):
        frame = frame.copy()
        for metric in self.metrics:
            rows = select(frame[frame["metric"] == metric], self.where)
            mine = select(select(rows, self.among), self.best).index
            top = rows["mean"].max() if self.higher(metric) else rows["mean"].min()
            frame.loc[mine, "mean"] = top * 2 + 10 if self.higher(metric) else top / 2 - 10
        return frame

    def counterexample(self, frame, context):
        frame = frame.copy()
        for metric in self.metrics:
            rows = select(frame[frame["metric"] == metric], self.where)
            mine = select(select(rows, self.among), self.best).index
            worst = rows["mean"].min() if self.higher(metric) else rows["mean"].max()
            frame.loc[mine, "mean"] = worst / 2 - 10 if self.higher(metric) else worst * 2 + 10
        return frame
