"""The elstm paper's claims that need code (Su & Kuo; ``config/studies/elstm.yaml``): counts
equal to the paper's (Tables 1 and 3: :class:`MatchesPublished`, :class:`SameAsPublished`), the
ELSTM less affected by its input (Figs. 11-12: :class:`LessAffectedByInput`), comparisons counted
per macro model or met in some unit (:class:`PerUnit`, :class:`InSomeUnit`,
:class:`SomeAbovePublished`), no peak of the LSTM's memory response at the "A" (Fig. 5:
:class:`NotPeakAt`) and a larger gain in the seq2seq models (:class:`LargerGainIn`)."""
from __future__ import annotations

import math

import pandas as pd

from ...metrics.formats import format_value
from ..combine import SOME
from ..inference import EXACT, Estimate
from ..kinds.base import PAPER_CHECKS, Check
from ..kinds.compare import Compare
from ..noise import combined, decide, noise_text, with_spread_columns
from ..selection import name_of, select, unit_key
from ..verdict import Verdict, verdict_of


@PAPER_CHECKS.register("elstm:MatchesPublished")
class MatchesPublished(Check):
    """Our counts equal the published ones, dataset by dataset and metric by metric. On the
    published numbers themselves there is nothing to judge: they are the paper's statement.
    Region: equality, in every count. Noise: none, counts are exact."""

    kind = ""

    def judge(self, frame, context):
        if "source" in frame.columns:
            return Verdict(None, ["these are the paper's own counts"])
        published = context.published
        results = []
        for rec in published.to_dict("records"):
            ours = frame[(frame["metric"] == rec["metric"]) & (frame.get("dataset", "") == rec.get("dataset", ""))]
            if ours.empty:  # a count of the paper's that ours lacks: not run
                continue
            mine = float(ours["mean"].iloc[0])
            ok = mine == float(rec["value"])
            results.append((ok, f"{rec.get('dataset', '')} {rec['metric']}: ours {mine:,.0f} "
                                f"{'=' if ok else '≠'} published {float(rec['value']):,.0f}",
                            unit_key(rec["metric"], {"dataset": rec.get("dataset", "")})))
        return verdict_of(results, self.quantifier, "no count of ours beside a published one",
                          expected=len(published))

    def neutral(self, labels):
        return pd.DataFrame(columns=["dataset", "metric", "mean"])

    def shifted(self, context, shift: float) -> pd.DataFrame:
        published = context.published
        return published[["dataset", "metric"]].assign(mean=published["value"].astype(float) + shift, std=float("nan"),
                                                        n=1)

    def example(self, frame, context):
        return self.shifted(context, 0.0)

    def counterexample(self, frame, context):
        return self.shifted(context, 1.0)


@PAPER_CHECKS.register("elstm:LessAffectedByInput")
class LessAffectedByInput(Check):
    """Per macro model, switching I_t from [X_t, h_{t−1}] (grids ``xh_*``) to X_t (grids ``x_*``)
    changes the LSTM's metric (beyond the noise of its two means) and changes the ELSTM's by less
    than the LSTM's (beyond the noise of the four means), in every macro model (``in: most``: in
    more than half of them). Fig. 11: "the ELSTM does not behave much differently between I_t = X_t
    and [X_t, h_{t−1}] while the LSTM does".

    Region, per macro model: |LSTM's change| > 0 and |LSTM's change| − |ELSTM's change| > 0, both
    parts holding (:func:`~..noise.combined`); the macro models combine by ``in:`` with Holm's
    correction. Noise: of the two means, and of the four (:meth:`~..noise.Context.noise_of`:
    Welch over seeds, a prediction interval, or the paired bootstrap of single runs)."""

    kind = ""

    def rows_of(self, frame: pd.DataFrame, metric: str) -> dict[tuple[str, str, str], dict]:
        rows = frame[frame["metric"] == metric] if len(frame) and "grid" in frame else frame.iloc[0:0]
        rows = with_spread_columns(select(rows, self.where))
        return {(rec["model"], rec["cell"], "x" if rec["grid"].startswith("x_") else "xh"): rec
                for rec in rows.to_dict("records")}

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = self.rows_of(frame, metric)
            for model in sorted({m for m, _, _ in rows}):
                keys = [(model, cell, inputs) for cell in ("lstm", "elstm") for inputs in ("x", "xh")]
                if not all(k in rows for k in keys):
                    continue
                lx, lxh, ex, exh = (rows[k] for k in keys)
                lstm, elstm = abs(lx["mean"] - lxh["mean"]), abs(ex["mean"] - exh["mean"])
                sl, se = math.copysign(1.0, lx["mean"] - lxh["mean"]), math.copysign(1.0, ex["mean"] - exh["mean"])
                change = context.noise_of(metric, [(sl, lx), (-sl, lxh)])
                moves = decide(lstm, change, context)
                less = decide(lstm - elstm, context.noise_of(metric, [(sl, lx), (-sl, lxh), (-se, ex), (se, exh)]),
                              context)
                ok = combined([moves, less])
                text = (f"{model}: LSTM changes by {lstm:.4f}"
                        + (noise_text(change, "") if context.weighs_noise else "")
                        + f", ELSTM by {elstm:.4f} ({metric}; the LSTM "
                        + {True: "changes", False: "does not change", None: "changes within the noise"}[moves.holds]
                        + ", the ELSTM " + {True: "less", False: "not less",
                                            None: "less or not within the noise"}[less.holds]
                        + ")")
                results.append((ok, text, unit_key(metric, {"model": model})))
        return verdict_of(results, self.quantifier,
                          "no model with both cells run with both inputs (the paper gives a plot only)")

    def built(self, frame, elstm_moves: bool):
        frame = frame.copy()
        x = frame["grid"].str.startswith("x_")
        moving = frame["cell"] == ("elstm" if elstm_moves else "lstm")
        frame.loc[x & moving, "mean"] = frame.loc[x & moving, "mean"] + 10.0
        return frame

    def example(self, frame, context):
        return self.built(frame, elstm_moves=False)

    def counterexample(self, frame, context):
        return self.built(frame, elstm_moves=True)


@PAPER_CHECKS.register("elstm:PerUnit")
class PerUnit(Compare):
    """``better`` beats every row of ``than`` on every metric (as :class:`Compare`, ``margin`` and
    ``strict`` alike) in every unit ``per`` names (default: each macro model), or with ``in: most``
    in more than half of the units: "most" counted over the units the sentence quantifies (macro
    models), not over (model, other cell, metric) comparisons.

    Region, per unit: every comparison of :class:`Compare` (advantage > ``margin``) holds, joined
    by :func:`~..noise.combined` (it holds when each holds; refuted when one is, after
    Bonferroni's correction); the units combine by ``in:`` (:func:`verdict_of`, Holm's
    correction). Noise: as :class:`Compare` (Welch over seeds, a prediction interval, or the
    paired bootstrap of two single runs unless ``noise: seeds``)."""

    kind = ""

    def judge(self, frame, context):
        per = self.per or ["model"]
        inner = Compare({**{k: v for k, v in self.spec.items() if k not in ("in", "per")}, "in": "all"})
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            if rows.empty or any(u not in rows for u in per):
                continue
            for key, group in rows.groupby(per, sort=False):
                verdict = inner.judge(group.assign(metric=metric), context)
                if not verdict.parts:
                    continue  # no pair in this unit
                results.append((key if isinstance(key, tuple) else (key,), verdict))
        units: dict = {}
        for key, verdict in results:
            units.setdefault(key, []).append(verdict)
        combined_units = []
        for key, verdicts in units.items():
            inner = [part for v in verdicts for part in v.parts]
            ok = combined([part.decision for part in inner])
            if any((v.expected or 0) > len(v.parts) for v in verdicts):  # an opponent it names not run here
                ok = ok.incomplete()
            name = ", ".join(map(str, key))
            said = {True: "yes", False: "no", None: "within the noise"}[ok.holds]
            combined_units.append((ok, f"{name}: {name_of(self.better)} beats {name_of(self.than)}: {said} — "
                                       + "; ".join(part.detail.split(": ", 1)[-1] for part in inner),
                                   unit_key(",".join(self.metrics), dict(zip(per, map(str, key)))),
                                   [part.key for part in inner]))
        verdict = verdict_of(combined_units, self.quantifier,
                             f"no {name_of(self.better)} beside {name_of(self.than)} to compare")
        if len(verdict.details) > len(combined_units):  # the units counted are macro models, not comparisons
            verdict.details[0] = f"{'/'.join(per)}s where {name_of(self.better)} is ahead: {verdict.details[0]}"
        return verdict


@PAPER_CHECKS.register("elstm:InSomeUnit")
class InSomeUnit(Compare):
    """``better`` beats ``than`` by more than ``margin`` in at least one pair (one macro model
    and one other cell): "up to 30 % increase" achieved somewhere.

    Region, per pair: advantage > ``margin`` (≥ with ``strict: false``, on exact values only);
    the pairs combine as "some" (:func:`verdict_of`): it holds when a pair holds after Holm's
    correction over all pairs, fails only when every pair is refuted. Noise: as :class:`Compare`
    (Welch over seeds, a prediction interval, or the paired bootstrap of two single runs unless
    ``noise: seeds``)."""

    kind = ""

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = self.pairs(self.rows(frame, metric))
            if pairs.empty:
                continue
            pairs = pairs.assign(adv=self.advantage(metric, pairs))
            for rec in pairs.to_dict("records"):
                spread = self.spread(rec, metric, context)
                ok = decide(rec["adv"] - self.margin, spread, context, self.strict)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.than)
                unit = ", ".join(str(rec[u]) for u in units)
                said = {True: "≥" if not self.strict else ">", False: "<", None: "≈"}[ok.holds]
                results.append((ok, f"{unit}: {name_of(self.better)} {format_value(rec['mean_w'], metric)} − {vs} "
                                    f"{format_value(rec['mean_l'], metric)} = {format_value(rec['adv'], metric, True)} "
                                    f"{said} {format_value(self.margin, metric, True)} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else ""),
                                unit_key(metric, {**{u: rec[u] for u in units},
                                                  **{c: rec[c] for c in rec if c.startswith(("me_", "vs_"))}})))
        verdict = verdict_of(results, SOME, f"no {name_of(self.better)} beside {name_of(self.than)} to compare")
        if len(verdict.details) > len(results):  # the count of verdict_of heads the details
            verdict.details[0] = f"in at least one of {len(results)} comparisons: " + verdict.details[0]
        return verdict


@PAPER_CHECKS.register("elstm:SomeAbovePublished")
class SomeAbovePublished(Check):
    """At least one row of ``where`` (one unit, e.g. a macro model) is above the published value of
    each metric at ``than`` (e.g. the bi-Att model of Table 6), in every metric at once.

    Region, per unit: our value > the published one in every metric (the metrics joined by
    :func:`~..noise.combined`); the units combine as "some" (:func:`verdict_of`): it holds when a
    unit holds after Holm's correction over the units, fails only when every unit is refuted.
    Noise: of our mean alone (the published value is a constant): over seeds, or the bootstrap
    of a single run's test items unless ``noise: seeds``; an exact row (n = ∞) has none."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.than = self.spec["than"]

    def judge(self, frame, context):
        per = self.per or ["model"]
        units: dict = {}
        for metric in self.metrics:
            bound = context.constant(metric, self.than)
            if bound is None:
                return Verdict(None, [f"no published {metric} of {name_of(self.than)}"])
            for rec in with_spread_columns(self.rows(frame, metric)).to_dict("records"):
                key = tuple(str(rec.get(u, "")) for u in per)
                spread = Estimate(0.0, 0.0, source=EXACT) if rec.get("n") == float("inf") else \
                    context.noise(metric, [rec], seeds_only=self.seeds_only)
                ok = decide(rec["mean"] - bound, spread, context)
                units.setdefault(key, []).append(
                    (ok, unit_key(metric, dict(zip(per, key))), f"{format_value(rec['mean'], metric)} {dict([(True, '>'), (False, '≤'), (None, '≈')])[ok.holds]} "
                         f"{name_of(self.than)} {format_value(bound, metric)} ({metric})"
                         + (noise_text(spread, metric) if context.weighs_noise else "")))
        if not units:
            return Verdict(None, [f"no {name_of(self.where)} rows"])
        results = [(combined([ok for ok, _, _ in parts]), ", ".join(key) + ": " + "; ".join(d for _, _, d in parts),
                    unit_key(",".join(self.metrics), dict(zip(per, key))), [k for _, k, _ in parts])
                   for key, parts in units.items()]
        verdict = verdict_of(results, SOME, f"no {name_of(self.where)} rows")
        if len(verdict.details) > len(results):  # the count of verdict_of heads the details
            verdict.details[0] = f"in at least one of {len(results)} units: " + verdict.details[0]
        return verdict

    def moved(self, frame, context, up: bool):
        frame = frame.copy()
        for metric in self.metrics:
            bound = context.constant(metric, self.than) or 0.0
            rows = self.picked(frame, metric, {})
            frame.loc[rows, "mean"] = bound + (abs(bound) + 1.0) * (1 if up else -1)
        return frame

    def example(self, frame, context):
        return self.moved(frame, context, True)

    def counterexample(self, frame, context):
        return self.moved(frame, context, False)


@PAPER_CHECKS.register("elstm:NotPeakAt")
class NotPeakAt(Check):
    """In every unit (e.g. each cell), the value at ``position`` is below the largest value at
    another position: no peak there (Fig. 5b: the LSTM "does not have strong response" to the "A",
    "strong" as Fig. 5a uses it, a response at "A" above the others).

    Region, per unit: the largest value elsewhere minus the value at ``position`` > 0; the units
    combine by ``in:`` (Holm's correction). Noise: of the two means
    (:meth:`~..noise.Context.noise`: Welch over seeds, a prediction interval, or the paired
    bootstrap of single runs unless ``noise: seeds``)."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.at = self.spec["at"]

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = with_spread_columns(self.rows(frame, metric))
            dim = next(iter(self.at))
            units = self.per or [c for c in ("cell", "T") if c in rows and c not in self.at]
            for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                mine = select(group, self.at)
                others = group.drop(mine.index)
                if mine.empty or others.empty:
                    continue
                me = mine.iloc[0].to_dict()
                top = others.loc[others["mean"].idxmax()].to_dict()
                ok = decide(top["mean"] - me["mean"], context.noise(metric, [top], [me], self.seeds_only), context)
                name = ", ".join(map(str, key if isinstance(key, tuple) else (key,)))
                results.append((ok, f"{name}: {dim} {me[dim]} {format_value(me['mean'], metric)}, largest elsewhere "
                                    f"{dim} {top[dim]} {format_value(top['mean'], metric)} ({metric}; a peak at "
                                    f"{me[dim]}: {dict([(True, 'no'), (False, 'yes'), (None, 'within the noise')])[ok.holds]})",
                                unit_key(metric, dict(zip(units, key if isinstance(key, tuple) else (key,))))))
        return verdict_of(results, self.quantifier, f"no {name_of(self.at)} beside other values")

    def set_peak(self, frame, peak: bool):
        frame = frame.copy()
        for metric in self.metrics:
            at = self.picked(frame, metric, self.at)
            frame.loc[at, "mean"] = frame["mean"].max() * 2 + 10 if peak else frame["mean"].min() / 2 - 10
        return frame

    def example(self, frame, context):
        return self.set_peak(frame, False)

    def counterexample(self, frame, context):
        return self.set_peak(frame, True)


@PAPER_CHECKS.register("elstm:SameAsPublished")
class SameAsPublished(Check):
    """Each of our rows of the metric equals the published value with the same labels (a count:
    no tolerance). On the published numbers there is nothing to judge: they are the paper's own.
    Region: equality, in every row. Noise: none, counts are exact."""

    kind = ""

    def judge(self, frame, context):
        if "source" in frame.columns or not context.weighs_noise:
            return Verdict(None, ["these are the paper's own counts"])
        results = []
        for metric in self.metrics:
            for rec in self.rows(frame, metric).to_dict("records"):
                labels = {k: rec[k] for k in ("model", "cell") if k in rec}
                published = context.constant(metric, labels)
                if published is None:
                    continue
                ok = float(rec["mean"]) == published
                results.append((ok, f"{name_of(labels)}: ours {rec['mean']:,.0f} {'=' if ok else '≠'} "
                                    f"published {published:,.0f} ({metric})", unit_key(metric, labels)))
        counts = context.published[context.published["metric"].isin(self.metrics)] if len(context.published) else []
        # every count the paper gives is one the sentence covers: one ours lacks is not run
        return verdict_of(results, self.quantifier, "no count of ours beside a published one",
                          expected=len(select(counts, self.where)) if len(counts) else None)

    def shifted(self, frame, context, shift: float):
        frame = frame.copy()
        for metric in self.metrics:
            for index in self.picked(frame, metric, {}):
                labels = {k: frame.at[index, k] for k in ("model", "cell") if k in frame}
                value = context.constant(metric, labels)
                frame.at[index, "mean"] = (value if value is not None else 0.0) + shift
        return frame

    def example(self, frame, context):
        return self.shifted(frame, context, 0.0)

    def counterexample(self, frame, context):
        return self.shifted(frame, context, 1.0)


@PAPER_CHECKS.register("elstm:LargerGainIn")
class LargerGainIn(Check):
    """The advantage of ``better`` (e.g. the ELSTM) over the best of ``than`` (the LSTM and the GRU)
    is larger in every macro model of ``models`` (the seq2seq ones) than in every other macro model:
    "perform particularly well for the seq2seq".

    Region, per (chosen, other) pair of macro models: the difference of the two advantages > 0;
    the pairs combine by ``in:`` (Holm's correction). Noise: of the four means involved
    (:meth:`~..noise.Context.noise_of`: Welch over seeds, a prediction interval, or the paired
    bootstrap of single runs unless ``noise: seeds``)."""

    kind = ""

    def __init__(self, spec):
        super().__init__(spec)
        self.better, self.than, self.models = self.spec["better"], self.spec["than"], self.spec["models"]

    def gains(self, rows: pd.DataFrame, metric: str) -> dict[str, tuple[float, dict, dict]]:
        sign = 1 if self.higher(metric) else -1
        out = {}
        for model, group in with_spread_columns(rows).groupby("model", sort=False):
            mine, others = select(group, self.better), select(group, self.than)
            if mine.empty or others.empty:
                continue
            me = mine.iloc[0].to_dict()
            best = others.loc[(sign * others["mean"]).idxmax()].to_dict()
            out[model] = (sign * (me["mean"] - best["mean"]), me, best)
        return out

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            if rows.empty or "model" not in rows:
                continue
            gains = self.gains(rows, metric)
            chosen = [m for m in gains if m in {str(v) for v in (self.models if isinstance(self.models, list) else [self.models])}]
            rest = [m for m in gains if m not in chosen]
            for a in chosen:
                for b in rest:
                    (ga, ma, oa), (gb, mb, ob) = gains[a], gains[b]
                    sign = 1.0 if self.higher(metric) else -1.0  # ga − gb = s·(ma − oa) − s·(mb − ob)
                    spread = context.noise_of(metric, [(sign, ma), (-sign, oa), (-sign, mb), (sign, ob)],
                                              self.seeds_only)
                    ok = decide(ga - gb, spread, context)
                    results.append((ok, f"{a}: {name_of(self.better)} ahead by {format_value(ga, metric, True)} "
                                        f"{dict([(True, '>'), (False, '≤'), (None, '≈')])[ok.holds]} {b}: ahead by "
                                        f"{format_value(gb, metric, True)} ({metric}; ahead of the best of "
                                        f"{name_of(self.than)})"
                                        + (noise_text(spread, metric) if context.weighs_noise else ""),
                                    unit_key(metric, {"model": a, "vs_model": b})))
        return verdict_of(results, self.quantifier, f"no {self.models} beside another macro model")

    def built(self, frame, larger: bool):
        frame = frame.copy()
        models = self.models if isinstance(self.models, list) else [self.models]
        for metric in self.metrics:
            mine = self.picked(frame, metric, self.better)
            chosen = frame.loc[mine, "model"].isin([str(m) for m in models])
            up = 1 if self.higher(metric) else -1
            bump = 100.0 * up
            frame.loc[mine[chosen.to_numpy()], "mean"] += bump if larger else -bump
            frame.loc[mine[~chosen.to_numpy()], "mean"] += -bump if larger else bump
        return frame

    def example(self, frame, context):
        return self.built(frame, True)

    def counterexample(self, frame, context):
        return self.built(frame, False)
