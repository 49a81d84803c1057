"""The wsum paper's claims that need code ("LSTM as a dynamically computed element-wise
weighted sum"; ``config/studies/wsum.yaml``), each weighing our differences against the noise
of our runs with :func:`~rnnrepro.claims.noise.decide` or :func:`~rnnrepro.claims.noise.within`:

- :class:`WithinShare`: two models within a share of the second's value ("little to no
  difference" in perplexity: within 4.5 % of the LSTM's);
- :class:`InSome`: a ``compare`` that must hold in at least one unit ("removing the gates *can*
  degrade performance substantially");
- :class:`GatedGapSmall`: the differences among the gated models (LSTM, −S-RNN, −S-RNN−OUT), or
  from the LSTM, are below a fraction of the gap between the LSTM and −GATES;
- :class:`DropBetween`: a drop of a stated size ("a 3-4 point drop");
- :class:`DiagonalLargest`: in every column t of a heat map the largest weight is w_t^t.
"""
from __future__ import annotations

import math
from itertools import combinations

import pandas as pd

from ...labels import label_columns
from ...metrics.formats import format_value
from ..kinds.base import NEUTRAL, PAPER_CHECKS, Check
from ..kinds.compare import Compare
from ..kinds.within import Within
from ..combine import SOME
from ..noise import combined, decide, noise_text, spread_of, within
from ..selection import name_of, pair_side, select, unit_key, unit_name
from ..verdict import Verdict, verdict_of

#: The gated models of the ablation: the LSTM and the two without the S-RNN.
GATED = ("lstm", "lstm_minus_srnn", "lstm_minus_srnn_out")


@PAPER_CHECKS.register("wsum:WithinShare")
class WithinShare(Within):
    """``a`` and ``b`` differ by at most ``share`` times ``b``'s value (a relative tolerance, e.g.
    "within 4.5 % of the LSTM's perplexity"), in every unit.

    Region: |m_a − m_b| ≤ ``share`` · |m_b|, an equivalence test (TOST, :func:`within`) in every
    unit (``in:``, Holm's correction for the refutations). Noise: of the difference of the two
    means (:meth:`~..noise.Context.noise`: Welch over seeds, a prediction interval, or the paired
    bootstrap of two single runs unless ``noise: seeds``); one seed with nothing to resample
    leaves it open."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.share = float(self.spec["share"])

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = Compare({"better": self.a, "than": self.b, "per": self.per}).pairs(self.rows(frame, metric))
            for rec in pairs.to_dict("records"):
                gap, tolerance = abs(rec["mean_w"] - rec["mean_l"]), self.share * abs(rec["mean_l"])
                spread = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")], self.seeds_only)
                ok = within(gap, tolerance, spread, context)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.b)
                results.append((ok, f"{unit_name(rec, units)}: |{name_of(self.a)} {format_value(rec['mean_w'], metric)}"
                                    f" − {vs} {format_value(rec['mean_l'], metric)}| = "
                                    f"{format_value(gap, metric, True).lstrip('+')} "
                                    f"{ {True: '≤', False: '>', None: '≈'}[ok.holds]} {self.share:.1%} of {vs} = "
                                    f"{format_value(tolerance, metric, True).lstrip('+')} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else ""),
                                unit_key(metric, {c: rec[c] for c in [*units, *(c for c in rec
                                                                               if c.startswith(("me_", "vs_")))]})))
        return verdict_of(results, self.quantifier, f"no {name_of(self.a)} beside {name_of(self.b)}")

    def example(self, frame, context):
        """``a`` and ``b`` take one value (the largest of ``a``'s)."""
        return super().example(frame, context)

    def counterexample(self, frame, context):
        """``a`` ten tolerances (and ten units) above ``b``."""
        frame = frame.copy()
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            if len(b):
                top = frame.loc[b, "mean"].max()
                frame.loc[a, "mean"] = top * (1 + 10 * self.share) + 10
        return frame


@PAPER_CHECKS.register("wsum:InSome")
class InSome(Compare):
    """A ``compare`` that holds in at least one unit (``per``) — "removing the gates *can* degrade
    performance".

    Region, per unit: every comparison of :class:`Compare` (advantage > ``margin``) on every
    metric, joined by :func:`~..noise.combined` (holds when each holds; refuted when one is, after
    Bonferroni's correction); the units combine as "some" (:func:`verdict_of`): it holds when a
    unit holds after Holm's correction over the units, fails when every unit is refuted, else it
    is inconclusive. Noise: as :class:`Compare` (Welch over seeds, a prediction interval, or the
    paired bootstrap of two single runs unless ``noise: seeds``)."""

    kind = ""

    def judge(self, frame, context):
        rows = frame[frame["metric"].isin(self.metrics)] if "metric" in frame else frame.iloc[0:0]
        units = [u for u in (self.per or []) if u in rows]
        groups = rows.groupby(units, sort=False) if units else [((), rows)]
        results = []
        for key, group in groups:
            verdict = Compare.judge(self, group, context)
            if not verdict.parts:
                continue  # nothing to compare in this unit
            ok = combined([part.decision for part in verdict.parts])
            key = key if isinstance(key, tuple) else (key,)
            results.append((ok, "; ".join(part.detail for part in verdict.parts),
                            unit_key(",".join(self.metrics), dict(zip(units, key))), [p.key for p in verdict.parts]))
        verdict = verdict_of(results, SOME, f"no {name_of(self.better)} beside {name_of(self.than)} to compare")
        if results:
            verdict.details.insert(0, f"in at least one of {len(results)} unit(s):")
        return verdict


def units_of(rows: pd.DataFrame, per: list[str] | None) -> list[str]:
    """The unit labels: ``per``, or every label but the cell."""
    if per:
        return [u for u in per if u in rows]
    return [c for c in label_columns(rows) if c != "cell"]


@PAPER_CHECKS.register("wsum:GatedGapSmall")
class GatedGapSmall(Check):
    """In every unit, the differences among the gated models (LSTM, −S-RNN, −S-RNN−OUT) are below
    ``ratio`` times the gap between the LSTM and −GATES: every pair of them, or with
    ``against: lstm`` each ablation's difference from the LSTM ("ablating the S-RNN [...] has a
    minor effect").

    Region, per pair of gated models: ``ratio`` · |LSTM − −GATES| − |x − y| > 0; every pair of a
    unit must hold (:func:`~..noise.combined`), every unit by ``in:`` (Holm's correction). Noise:
    of the four means involved (:meth:`~..noise.Context.noise_of`: Welch over seeds, a prediction
    interval, or the paired bootstrap of single runs unless ``noise: seeds``)."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.ratio = float(self.spec.get("ratio", 0.1))
        self.against = self.spec.get("against")

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            if "cell" not in rows:
                continue
            rows = rows.assign(**{c: rows[c] if c in rows else float("nan") for c in ("std", "n")})
            units = units_of(rows, self.per)
            for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                records = {r["cell"]: r for r in group.to_dict("records")}
                gated = [c for c in GATED if c in records]
                if "lstm" not in records or "lstm_minus_gates" not in records or len(gated) < 2:
                    continue
                lstm, gates = records["lstm"], records["lstm_minus_gates"]
                gap = abs(lstm["mean"] - gates["mean"])
                pairs = [(x, y) for x, y in combinations(gated, 2) if not self.against or self.against in (x, y)]
                oks, worst, keys = [], None, []
                rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
                for x, y in pairs:
                    keys.append(unit_key(metric, {**rec, "cell": x, "vs_cell": y}))
                    difference = abs(records[x]["mean"] - records[y]["mean"])
                    sg = self.ratio * math.copysign(1.0, lstm["mean"] - gates["mean"])
                    sd = math.copysign(1.0, records[x]["mean"] - records[y]["mean"])
                    spread = context.noise_of(metric, [(sg, lstm), (-sg, gates), (-sd, records[x]), (sd, records[y])],
                                              self.seeds_only)
                    oks.append(decide(self.ratio * gap - difference, spread, context))
                    if worst is None or difference > worst[0]:
                        worst = (difference, x, y)
                ok = combined(oks)
                which = "from the LSTM" if self.against else "among the gated models"
                results.append((ok, f"{unit_name(rec, units)}: largest difference {which} "
                                    f"{format_value(worst[0], metric, True).lstrip('+')} ({worst[1]} vs {worst[2]}) "
                                    f"{ {True: '<', False: '≥', None: '≈'}[ok.holds]} {self.ratio:g} × the −GATES gap "
                                    f"{format_value(gap, metric, True).lstrip('+')} ({metric})"
                                    + (noise_text(context.noise(metric, [lstm], [gates], self.seeds_only), metric)
                                       if context.weighs_noise else ""),
                                unit_key(metric, rec), keys))
        return verdict_of(results, self.quantifier, "no LSTM, −GATES and another gated model side by side")

    def values(self, frame, spoil: bool):
        frame = frame.copy()
        for metric in self.metrics:
            rows = select(frame[frame["metric"] == metric], self.where)
            cells = rows["cell"] if "cell" in rows else pd.Series(dtype=str)
            frame.loc[rows.index[cells.isin(GATED)], "mean"] = NEUTRAL
            frame.loc[rows.index[cells == "lstm_minus_gates"], "mean"] = 2 * NEUTRAL
            if spoil:
                frame.loc[rows.index[cells == "lstm_minus_srnn"], "mean"] = 1.5 * NEUTRAL
        return frame

    def example(self, frame, context):
        return self.values(frame, False)

    def counterexample(self, frame, context):
        return self.values(frame, True)


@PAPER_CHECKS.register("wsum:DropBetween")
class DropBetween(Check):
    """In every unit, ``better`` beats ``than`` by more than ``low`` and less than ``high`` (metric
    units): a drop of a stated size ("a 3-4 point drop").

    Region: ``low`` < drop < ``high``, as two parts that must both hold
    (:func:`~..noise.combined`), in every unit (``in:``, Holm's correction for the refutations).
    Noise: of the difference of the two means (:meth:`~..noise.Context.noise`: Welch over seeds,
    a prediction interval, or the paired bootstrap of two single runs unless ``noise: seeds``)."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.better, self.than = self.spec["better"], self.spec["than"]
        self.low, self.high = float(self.spec["low"]), float(self.spec["high"])

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = Compare({"better": self.better, "than": self.than, "per": self.per}).pairs(self.rows(frame, metric))
            if pairs.empty:
                continue
            sign = 1 if self.higher(metric) else -1
            for rec in pairs.to_dict("records"):
                drop = sign * (rec["mean_w"] - rec["mean_l"])
                spread = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")], self.seeds_only)
                ok = combined([decide(drop - self.low, spread, context), decide(self.high - drop, spread, context)])
                results.append((ok, f"{unit_name(rec, units)}: {name_of(self.than)} {format_value(rec['mean_l'], metric)} "
                                    f"vs {name_of(self.better)} {format_value(rec['mean_w'], metric)}: a drop of "
                                    f"{format_value(drop, metric, True)}, "
                                    f"{ {True: 'within', False: 'outside', None: 'within the noise of'}[ok.holds]} "
                                    f"({format_value(self.low, metric, True).lstrip('+')}, "
                                    f"{format_value(self.high, metric, True).lstrip('+')}) ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else ""),
                                unit_key(metric, {u: rec[u] for u in units})))
        return verdict_of(results, self.quantifier, f"no {name_of(self.better)} beside {name_of(self.than)}")

    def values(self, frame, drop: float):
        frame = frame.copy()
        for metric in self.metrics:
            win, lose = self.picked(frame, metric, self.better), self.picked(frame, metric, self.than)
            frame.loc[lose, "mean"] = NEUTRAL
            frame.loc[win, "mean"] = NEUTRAL + (drop if self.higher(metric) else -drop)
        return frame

    def example(self, frame, context):
        return self.values(frame, (self.low + self.high) / 2)

    def counterexample(self, frame, context):
        return self.values(frame, 2 * self.high + 1)


@PAPER_CHECKS.register("wsum:DiagonalLargest")
class DiagonalLargest(Check):
    """In every column t of every heat map (``weight_norm`` over labels t and j) the largest
    weight is the diagonal one, w_t^t.

    Region, per column: w_t^t − max_{j≠t} w_t^j > 0; the columns of a map must all hold
    (:func:`~..noise.combined`: holds when each holds, refuted when one is after Bonferroni's
    correction over its columns), every map by ``in:`` (Holm's correction). Noise: of the two
    means over seeds (:func:`~..noise.spread_of`); a map of one run leaves it open on ours."""

    kind = ""
    POSITION_LABELS = ("t", "j", "word_t", "word_j")

    def __init__(self, spec):
        super().__init__({"metric": "weight_norm", **spec})

    def cells(self, frame: pd.DataFrame) -> pd.DataFrame:
        rows = select(frame[frame["metric"] == "weight_norm"], self.where) if "metric" in frame else frame.iloc[0:0]
        if not {"t", "j"} <= set(rows.columns):
            return rows.iloc[0:0]
        return rows[(rows["t"] != "") & (rows["j"] != "")]

    def judge(self, frame, context):
        rows = self.cells(frame)
        if rows.empty:
            return Verdict(None, ["no heat map (the paper shows its maps as pictures only)"])
        rows = rows[rows["mean"].notna()]
        units = [c for c in label_columns(rows) if c not in self.POSITION_LABELS]
        results = []
        for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
            decisions, shown, keys = [], [], []
            rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
            for t, column in group.groupby("t", sort=False):
                diagonal = column[column["j"] == t]
                others = column[column["j"] != t]
                if diagonal.empty or others.empty:
                    continue
                top = others.loc[others["mean"].idxmax()]
                ok = decide(float(diagonal["mean"].iloc[0]) - float(top["mean"]),
                            spread_of(diagonal.iloc[0].to_dict(), top.to_dict()), context)
                decisions.append(ok)
                keys.append(unit_key("weight_norm", {**rec, "t": t}))
                if ok.holds is False:
                    word = f" ({column['word_t'].iloc[0]!r})" if "word_t" in column else ""
                    shown.append(f"t={t}{word}: j={top['j']} {float(top['mean']):.3f} ≥ {float(diagonal['mean'].iloc[0]):.3f}")
            if not decisions:
                continue
            columns = len(decisions)
            failed = sum(d.holds is False for d in decisions)
            undecided = sum(d.holds is None for d in decisions)
            results.append((combined(decisions),
                            f"{unit_name(rec, units)}: the diagonal is the largest in {columns - failed - undecided} "
                            f"of {columns} columns" + (f" (not in {'; '.join(shown[:3])})" if shown else "")
                            + (f", within the noise in {undecided}" if undecided else ""),
                            unit_key("weight_norm", rec), keys))
        return verdict_of(results, self.quantifier, "no heat map (the paper shows its maps as pictures only)")

    def values(self, frame, spoil: bool):
        frame = frame.copy()
        rows = self.cells(frame)
        if rows.empty:
            return frame
        frame.loc[rows.index, "mean"] = NEUTRAL
        frame.loc[rows.index[rows["t"] == rows["j"]], "mean"] = 2 * NEUTRAL
        if spoil:
            units = [c for c in label_columns(rows) if c not in self.POSITION_LABELS]
            for _, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                off = group[group["t"] != group["j"]]
                if len(off):
                    frame.loc[off.index[0], "mean"] = 3 * NEUTRAL
        return frame

    def example(self, frame, context):
        return self.values(frame, False)

    def counterexample(self, frame, context):
        return self.values(frame, True)
