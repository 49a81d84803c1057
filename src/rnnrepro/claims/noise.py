"""The noise of our runs, against which a claim's quantity is weighed, and what a check reads
besides its summary (:class:`Context`).

On the published numbers a quantity is judged as printed. On ours it is an
:class:`~.inference.Estimate` whose noise matches the claim (:func:`~.inference.estimate`):
Welch's t over seeds where every arm has several; a prediction interval where an arm of one
run stands beside arms of several seeds; the paired bootstrap over test items where every arm
is one trained model scored on the same items (a verdict that rests on it is about these
trained models, not their cells); none for one seed with nothing to resample. A check says
``noise: seeds`` when its sentence is about cells or architectures, so that the bootstrap is
never used for it.

The two comparisons most checks make: :func:`decide` (does a quantity go past its boundary?)
and :func:`within` (is a gap inside a tolerance?); both give a :class:`~.inference.Decision`
on the 90 % interval of :mod:`.inference`. :func:`combined` joins the parts of one comparison,
:func:`noise_text` says in a verdict's detail what the noise was.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from ..metrics.formats import format_value
from ..metrics.items import SplitItems, bootstrap_se, describe
from . import inference
from .inference import ALPHA, ITEMS, PREDICTION, Arm, Decision, Estimate, Region, printed
from .selection import select

NOISE_TEST = ("90 % intervals, each bound one-sided 95 %: Welch's t over seeds; for a single run beside "
              "seeded runs, a prediction interval from their spread; for single trained models, the paired "
              "bootstrap over test items")
ONE_SEED = "one seed, and no test items to resample: no spread to weigh the difference against"

Row = Mapping[str, Any]


def arm_of(row: Row) -> Arm:
    """A summary row (``mean``, ``std``, ``n``) as an :class:`~.inference.Arm`: no ``n`` is one run."""
    std, n = row.get("std"), row.get("n")
    n = 1 if n is None or pd.isna(n) else float(n)
    return Arm(float(row["mean"]), math.nan if std is None or pd.isna(std) else float(std), n)


@dataclass
class Context:
    """What a check may read besides its summary: the artifact's published rows (constants such
    as a baseline), the scale (None for the published numbers) and our runs' test items (by run
    name, for the paired bootstrap of :meth:`noise_of`)."""

    published: pd.DataFrame = field(default_factory=pd.DataFrame)
    scale: str | None = None
    items: Mapping[str, SplitItems] = field(default_factory=dict)

    def noise(self, metric: str, plus: Sequence[Row], minus: Sequence[Row] = (),
              seeds_only: bool = False) -> Estimate | None:
        """The estimate of Σ plus − Σ minus (summary rows of ``metric``): see :meth:`noise_of`."""
        return self.noise_of(metric, [(1.0, row) for row in plus] + [(-1.0, row) for row in minus], seeds_only)

    def noise_of(self, metric: str, terms: Sequence[tuple[float, Row]], seeds_only: bool = False) -> Estimate | None:
        """The estimate of Σ c · mean over ``terms`` ((c, summary row of ``metric``) pairs) with the
        noise that matches it (:func:`~.inference.estimate`). The paired bootstrap over test
        items applies on ours where every inexact row is one run that kept its items; not with
        ``seeds_only`` (a check's ``noise: seeds``)."""
        arms = [(c, arm_of(row)) for c, row in terms]
        se, note = None, ""
        if self.weighs_noise and self.items and not seeds_only and all(a.exact or a.n < 2 for _, a in arms):
            runs = [(c, self.items.get(str(row.get("run") or ""))) for (c, row), (_, a) in zip(terms, arms)
                    if not a.exact]
            if runs and all(items is not None for _, items in runs):
                se = bootstrap_se(runs, metric)
                note = f"paired bootstrap over {describe(runs[0][1])}: about these trained models"
        return inference.estimate(arms, se, note, seeds_only)

    @property
    def weighs_noise(self) -> bool:
        """On ours (a scale), a quantity is weighed against the noise of our runs; the published
        numbers are judged as the paper prints them."""
        return self.scale is not None

    def constant(self, metric: str, where: Mapping[str, Any] | None = None) -> float | None:
        """A published number: the first of ``metric`` among the rows ``where`` picks."""
        if self.published.empty:
            return None
        rows = select(self.published[self.published["metric"] == metric], where)
        return float(rows["value"].iloc[0]) if len(rows) else None


def spread_of(*rows: Row) -> Estimate | None:
    """The estimate of the sum of the means of summary ``rows``, over seeds only (Welch, or a
    prediction interval for single runs beside seeded ones); None without a seed spread."""
    return inference.estimate([(1.0, arm_of(row)) for row in rows], seeds_only=True)


def with_spread_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``std``, ``n`` (NaN where a summary has none, e.g. published) and ``run``
    (empty where no single run makes the row) columns."""
    return rows.assign(**{column: rows[column] if column in rows else math.nan for column in ("std", "n")},
                       run=rows["run"] if "run" in rows else "")


def judged(value: float, noise: Estimate | None, region: Region, context: Context) -> Decision:
    """The decision on a quantity of ``value`` whose noise is that of ``noise`` (an estimate of
    the same quantity or of one that differs from it by a constant): as printed on the
    published numbers; on ours inconclusive without noise."""
    if not context.weighs_noise:
        return inference.decide(printed(value), region)
    if noise is None:
        return Decision(None, region=region)
    return inference.decide(replace(noise, value=value), region)


def decide(excess: float, noise: Estimate | None, context: Context, strict: bool = True) -> Decision:
    """Whether a quantity goes past what the claim needs: ``excess`` is the quantity minus its
    boundary, ``noise`` its estimate's noise. Holds when the 90 % interval of the excess is above
    0 (``strict: false``: at 0 counts on exact values only), does not hold when it is below."""
    return judged(excess, noise, Region.above(0.0, closed=not strict), context)


def within(gap: float, tolerance: float, noise: Estimate | None, context: Context) -> Decision:
    """Whether a difference of ``gap`` is within ± ``tolerance``: two one-sided tests (TOST) on
    the 90 % interval; as printed on the published numbers."""
    return judged(gap, noise, Region.within(tolerance), context)


def as_decision(result: Decision | bool | None) -> Decision:
    """A part's outcome as a decision: True or False computed exactly, None open."""
    if isinstance(result, Decision):
        return result
    return Decision(None) if result is None else Decision.exact(bool(result))


def combined(results: Sequence[Decision | bool | None], alpha: float = ALPHA) -> Decision:
    """All of several comparisons of one unit: holds when each holds (intersection–union, so its
    p-value is the largest), does not hold when one is refuted after Bonferroni's correction
    over them, else open."""
    decisions = [as_decision(r) for r in results]
    if not decisions:
        return Decision(None)
    p_holds = max(d.p_holds for d in decisions)
    p_fails = min(1.0, len(decisions) * min(d.p_fails for d in decisions))
    if any(d.holds is False and d.p_fails == 0.0 for d in decisions):  # refuted exactly
        return Decision(False, p_holds, 0.0)
    holds = True if all(d.holds is True for d in decisions) else False if p_fails < alpha else None
    return Decision(holds, p_holds, p_fails)


def noise_text(noise: Estimate | Decision | None, metric: str) -> str:
    """`` (± h, 90 % interval, <where the noise comes from>)``, or the one-seed note, for a detail
    line on ours."""
    if isinstance(noise, Decision):
        noise = noise.estimate
    if noise is None:
        return f" ({ONE_SEED})"
    if noise.exact:
        return " (exact)"
    half = noise.quantile() * noise.se
    source = {inference.SEEDS: f"Welch's t over {noise.seeds}+ seeds", PREDICTION: noise.note,
              ITEMS: noise.note}.get(noise.source, noise.note)
    return f" (± {format_value(half, metric, True)}, 90 % interval, {source})"
