"""The noise of our runs, against which a claim's quantity is weighed, and what a check reads
besides its summary (:class:`Context`).

On the published numbers a quantity is judged as printed. On ours it is an
:class:`~.inference.Estimate` whose noise matches the claim (:func:`~.inference.estimate`).
**One noise policy per artifact** (:attr:`Context.policy`), so that two claims on the same runs
are never decided on different kinds of noise:

* :data:`BY_SEEDS`, where the artifact has arms of several seeds: Welch's t over seeds where
  every arm has several; a prediction interval where an arm of one run stands beside seeded
  ones, or beside none but in an artifact whose other arms measured the seed spread
  (:attr:`Context.reference`); the test-item bootstrap is never used;
* :data:`BY_ITEMS`, where every arm is one trained model: the paired bootstrap over test items
  where every arm kept its items. A verdict that rests on it is about these trained models,
  not their cells (:mod:`.judge` says so and counts it apart); a check's ``noise: seeds``
  (a sentence that can only be about cells) leaves it open instead.

The two comparisons most checks make: :func:`decide` (does a quantity go past its boundary?)
and :func:`within` (is a gap inside a tolerance?); both give a :class:`~.inference.Decision`
on the interval of :mod:`.inference`. :func:`combined` joins the parts of one comparison,
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
from .combine import joined
from .inference import ALPHA, ITEMS, PREDICTION, Arm, Decision, Estimate, Region, interval_text, printed
from .selection import select

NOISE_TEST = ("90 % intervals, each bound one-sided 95 % (95 % intervals for a sentence about significance): "
              "Welch's t over seeds; for a single run beside seeded runs, a prediction interval from their "
              "spread, the single run assumed up to twice as noisy; for single trained models, the paired "
              "bootstrap over test items, a verdict about those trained models only")
ONE_SEED = "one seed, and no test items to resample: no spread to weigh the difference against"
#: The noise policies of an artifact (see the module's docstring).
BY_SEEDS, BY_ITEMS = "seeds", "items"

Row = Mapping[str, Any]


def arm_of(row: Row) -> Arm:
    """A summary row (``mean``, ``std``, ``n``) as an :class:`~.inference.Arm`: no ``n`` is one run."""
    std, n = row.get("std"), row.get("n")
    n = 1 if n is None or pd.isna(n) else float(n)
    return Arm(float(row["mean"]), math.nan if std is None or pd.isna(std) else float(std), n)


def same_row(one: Row, other: Row) -> bool:
    """Whether two summary rows are one arm: the same object, or equal key by key (NaN equal to NaN)."""
    if one is other:
        return True
    if set(one) != set(other):
        return False
    return all(a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
               for a, b in ((one[k], other[k]) for k in one))


def merged(terms: Sequence[tuple[float, Row]]) -> list[tuple[float, Row]]:
    """The terms with an arm that enters more than once (the same summary row) entered once with
    its summed coefficient: Σ c · mean is unchanged, and its noise counted once (two entries
    would be read as two independent arms)."""
    out: list[tuple[float, Row]] = []
    for c, row in terms:
        same = next((i for i, (_, other) in enumerate(out) if same_row(other, row)), None)
        if same is None:
            out.append((c, row))
        else:
            out[same] = (out[same][0] + c, out[same][1])
    return [(c, row) for c, row in out if c != 0]


def reference_spreads(summary: pd.DataFrame) -> dict[str, Arm]:
    """Per metric, the seed spread pooled over every seeded row of a summary (an artifact's
    arms of several seeds): Σ (n − 1) s² / Σ (n − 1), as an arm of Σ (n − 1) + 1 seeds."""
    out = {}
    if summary.empty or not {"std", "n", "metric"} <= set(summary.columns):
        return out
    rows = summary[pd.to_numeric(summary["n"], errors="coerce").between(2, math.inf, inclusive="left")
                   & pd.to_numeric(summary["std"], errors="coerce").notna()]
    for metric, group in rows.groupby("metric"):
        df = float((group["n"] - 1).sum())
        if df > 0:
            out[str(metric)] = Arm(0.0, math.sqrt(float(((group["n"] - 1) * group["std"] ** 2).sum()) / df), df + 1)
    return out


def policy_of(summary: pd.DataFrame) -> str:
    """An artifact's noise policy: :data:`BY_SEEDS` when any of its arms has several seeds with a
    spread, else :data:`BY_ITEMS`."""
    return BY_SEEDS if reference_spreads(summary) else BY_ITEMS


@dataclass
class Context:
    """What a check may read besides its summary: the artifact's published rows (constants such
    as a baseline), the scale (None for the published numbers), our runs' test items (by run
    name, for the paired bootstrap of :meth:`noise_of`), the artifact's noise ``policy``, the
    seed spread its seeded arms measured per metric (``reference``, for single runs compared
    with single runs under :data:`BY_SEEDS`) and the trivial baselines of its tasks on the same
    splits (``baselines``: baseline, metric, value and the runs' labels)."""

    published: pd.DataFrame = field(default_factory=pd.DataFrame)
    scale: str | None = None
    items: Mapping[str, SplitItems] = field(default_factory=dict)
    policy: str = BY_ITEMS
    reference: Mapping[str, Arm] = field(default_factory=dict)
    baselines: pd.DataFrame = field(default_factory=pd.DataFrame)

    def noise(self, metric: str, plus: Sequence[Row], minus: Sequence[Row] = (),
              seeds_only: bool = False) -> Estimate | None:
        """The estimate of Σ plus − Σ minus (summary rows of ``metric``): see :meth:`noise_of`."""
        return self.noise_of(metric, [(1.0, row) for row in plus] + [(-1.0, row) for row in minus], seeds_only)

    def noise_of(self, metric: str, terms: Sequence[tuple[float, Row]], seeds_only: bool = False) -> Estimate | None:
        """The estimate of Σ c · mean over ``terms`` ((c, summary row of ``metric``) pairs) with the
        noise that matches it (:func:`~.inference.estimate`), an arm entered twice counted once
        (:func:`merged`). Under :data:`BY_SEEDS` single runs with no seeded arm beside them are
        weighed against the artifact's ``reference`` spread; under :data:`BY_ITEMS` the paired
        bootstrap over test items applies on ours where every inexact row is one run that kept
        its items, not with ``seeds_only`` (a check's ``noise: seeds``)."""
        terms = merged(terms)
        arms = [(c, arm_of(row)) for c, row in terms]
        if self.policy == BY_SEEDS:
            if metric in self.reference and not any(a.seeded for _, a in arms) and any(not a.exact for _, a in arms):
                arms.append((0.0, self.reference[metric]))  # the artifact's seed spread, weighing no value
            return inference.estimate(arms, seeds_only=True)
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


def judged(value: float, noise: Estimate | None, region: Region, context: Context, alpha: float = ALPHA) -> Decision:
    """The decision on a quantity of ``value`` whose noise is that of ``noise`` (an estimate of
    the same quantity or of one that differs from it by a constant): as printed on the
    published numbers; on ours inconclusive without noise."""
    if not context.weighs_noise:
        return inference.decide(printed(value), region, alpha)
    if noise is None:
        return Decision(None, region=region)
    return inference.decide(replace(noise, value=value), region, alpha)


def decide(excess: float, noise: Estimate | None, context: Context, strict: bool = True,
           alpha: float = ALPHA) -> Decision:
    """Whether a quantity goes past what the claim needs: ``excess`` is the quantity minus its
    boundary, ``noise`` its estimate's noise. Holds when the interval of the excess is above 0
    (``strict: false``: at 0 counts on exact values only), does not hold when it is below."""
    return judged(excess, noise, Region.above(0.0, closed=not strict), context, alpha)


def within(gap: float, tolerance: float, noise: Estimate | None, context: Context, alpha: float = ALPHA) -> Decision:
    """Whether a difference of ``gap`` is within ± ``tolerance``: two one-sided tests (TOST) on
    the interval; as printed on the published numbers."""
    return judged(gap, noise, Region.within(tolerance), context, alpha)


def as_decision(result: Decision | bool | None) -> Decision:
    """A part's outcome as a decision: True or False computed exactly, None open."""
    if isinstance(result, Decision):
        return result
    return Decision(None) if result is None else Decision.exact(bool(result))


def combined(results: Sequence[Decision | bool | None], alpha: float = ALPHA) -> Decision:
    """All of several comparisons of one unit: holds when each holds (intersection–union), does
    not hold when one is refuted after Holm's correction over them (and, in the claim, over
    every comparison of the claim: :mod:`.combine`), else open. The comparisons are kept."""
    return joined([as_decision(r) for r in results], alpha=alpha)


def noise_text(noise: Estimate | Decision | None, metric: str, alpha: float = ALPHA) -> str:
    """`` (± h, 90 % interval, <where the noise comes from>)``, or the one-seed note, for a detail
    line on ours."""
    if isinstance(noise, Decision):
        noise = noise.estimate
    if noise is None:
        return f" ({ONE_SEED})"
    if noise.exact:
        return " (exact)"
    if not noise.measured:
        return f" ({noise.note}: no interval)"
    half = noise.quantile(alpha) * noise.se
    source = {inference.SEEDS: f"Welch's t over {noise.seeds}+ seeds", PREDICTION: noise.note,
              ITEMS: noise.note}.get(noise.source, noise.note)
    if noise.source == inference.SEEDS and noise.note and noise.note != "Welch's t over seeds":
        source = noise.note
    return f" (± {format_value(half, metric, True)}, {interval_text(alpha)}, {source})"
