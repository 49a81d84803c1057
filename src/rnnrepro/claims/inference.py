"""The statistics of a verdict: an estimate with its noise, the region where a claim is true,
and the decision between them.

A claim's sentence is about a quantity θ (a difference of two cells' scores, a value against a
bound, a rise along a label). The sentence is true in a **region** of θ: ``θ > m`` (better by
more than m: superiority), ``θ > −m`` (not worse by more than a sourced margin m:
non-inferiority), ``−m < θ < m`` (equivalence), ``θ < b`` (a threshold). An **estimate** of θ
comes with its standard error and degrees of freedom, from the noise that matches the claim
(:func:`estimate`): seeds for cells and architectures (Welch), the spread of several runs for an
arm of one run (a prediction interval that assumes the single run up to twice as noisy), test
items for two trained models (the paired bootstrap), none for an exact computation.

**The levels, in one place.** Each bound of an interval is one-sided at :data:`ALPHA` = 5 %, so
an interval is a two-sided 90 % interval, and a decision (:func:`decide`) is:

* **holds** when the interval lies inside the region (for equivalence: two one-sided tests, TOST);
* **does not hold** when it lies outside it;
* **inconclusive** otherwise. Absence of evidence never holds.

At the boundary of the region each error is then at most 5 %: a false "holds" needs the
bound on the near side to cross the boundary, a false "does not hold" the far one. A sentence
about statistical *significance* is decided at the level its field means by the word, a
two-sided 5 % test: each bound one-sided at :data:`SIGNIFICANCE_ALPHA` = 2.5 % (a 95 % interval).
The p-values of both decisions (:attr:`Decision.p_holds`, :attr:`Decision.p_fails`) are kept so
that a claim over many comparisons is corrected once for multiplicity (:mod:`.combine`). An
exact estimate (se = 0: a count, or a published number judged as printed) is decided by its
value; seeds that agree exactly on a metric not declared exact have an unmeasured spread
(se = ∞: never decided), not an exact one.

Distributions come from SciPy (:mod:`scipy.special`'s ``stdtr``/``stdtrit`` and ``ndtr``/``ndtri``,
the functions behind :mod:`scipy.stats`' t and normal distributions, a hundred times faster
per call, which the calibration's simulations need); nothing here is tabled by hand.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from scipy import special, stats

#: Each one-sided bound of the interval is at 1 − ALPHA; together a 1 − 2·ALPHA (90 %) interval.
ALPHA = 0.05
#: A sentence about statistical significance: a two-sided 5 % test, each bound one-sided 2.5 %.
SIGNIFICANCE_ALPHA = 0.025
#: A single run beside seeded ones cannot measure its own spread: it is assumed up to this many
#: times as noisy as the seeds' pooled spread (a cell twice as noisy is then still calibrated).
SINGLE_RUN_SPREAD = 2.0


def interval_text(alpha: float = ALPHA) -> str:
    """``90 % interval`` (or ``95 % interval`` at the significance level): how an interval is named."""
    return f"{100 * (1 - 2 * alpha):.0f} % interval"

#: Where an estimate's noise comes from (what a verdict resting on it is about).
SEEDS = "seeds"
PREDICTION = "prediction"
ITEMS = "items"
EXACT = "exact"
PRINTED = "printed"
RATES = "rates"  # a binary outcome counted over runs (Fisher's exact test)


@dataclass(frozen=True)
class Estimate:
    """An estimate of a claim's quantity: ``value``, its standard error ``se`` (0: exact; ∞: a
    spread not measured) with ``df`` degrees of freedom (inf: normal), ``source`` (one of
    :data:`SEEDS`, :data:`PREDICTION`, :data:`ITEMS`, :data:`EXACT`, :data:`PRINTED`), the pooled
    seed standard deviation ``sd`` behind it, the seeds per arm ``seeds`` and ``note`` (how it was
    measured, for the verdict's detail).

    For the price of more seeds (:mod:`.power`) it keeps the quantity's own noise:
    ``unit_variance`` = Σ c_i² σ_i², the variance of Σ c_i · mean_i with one seed per arm (so
    se(n) = √(unit_variance / n) with n seeds per arm), and ``arms`` = (Σ w_i)² / Σ w_i² with
    w_i = c_i² σ_i², the effective number of arms (Welch's degrees of freedom at n seeds per arm
    are (n − 1) · arms)."""

    value: float
    se: float = 0.0
    df: float = math.inf
    source: str = EXACT
    sd: float = math.nan
    seeds: int = 0
    note: str = ""
    unit_variance: float = math.nan
    arms: float = math.nan

    @property
    def exact(self) -> bool:
        return self.se == 0 or not math.isfinite(self.value)

    @property
    def measured(self) -> bool:
        """Whether its noise is known (not a spread of seeds that agree exactly)."""
        return math.isfinite(self.se)

    def quantile(self, alpha: float = ALPHA) -> float:
        """The one-sided 1 − alpha quantile of the estimate's distribution (t or normal)."""
        return float(special.ndtri(1 - alpha) if math.isinf(self.df) else special.stdtrit(self.df, 1 - alpha))

    def bounds(self, alpha: float = ALPHA) -> tuple[float, float]:
        """The two-sided 1 − 2·alpha interval (each bound one-sided 1 − alpha)."""
        if self.exact:
            return self.value, self.value
        h = self.quantile(alpha) * self.se
        return self.value - h, self.value + h

    def p_above(self, bound: float) -> float:
        """One-sided p-value of θ ≤ bound (small: θ is above ``bound``)."""
        if self.exact:
            return 0.0 if self.value > bound else 1.0
        z = (self.value - bound) / self.se
        return float(special.ndtr(-z) if math.isinf(self.df) else special.stdtr(self.df, -z))

    def p_below(self, bound: float) -> float:
        """One-sided p-value of θ ≥ bound (small: θ is below ``bound``)."""
        if self.exact:
            return 0.0 if self.value < bound else 1.0
        return replace(self, value=-self.value).p_above(-bound)

    def scaled(self, factor: float, shift: float = 0.0) -> "Estimate":
        """The estimate of factor · θ + shift (e.g. a difference as a fraction of a value)."""
        return replace(self, value=factor * self.value + shift, se=abs(factor) * self.se, sd=abs(factor) * self.sd,
                       unit_variance=factor * factor * self.unit_variance)


def rounding(bound: float) -> float:
    """The float rounding allowed at a closed boundary: 1e-9 relative (0 at an infinite one)."""
    return 1e-9 * max(1.0, abs(bound)) if math.isfinite(bound) else 0.0


@dataclass(frozen=True)
class Region:
    """Where a claim is true: ``lower < θ < upper`` (either may be infinite). ``closed``: the
    boundary itself counts as inside (only matters for exact values: "at most", "equal or better")."""

    lower: float = -math.inf
    upper: float = math.inf
    closed: bool = False

    def contains(self, value: float) -> bool:
        """Whether an exact ``value`` is inside; a closed boundary counts to within float rounding
        (a printed gap of 0.90 − 0.88 against a margin of 0.02 is at the boundary, not past it)."""
        if self.closed:
            return self.lower - rounding(self.lower) <= value <= self.upper + rounding(self.upper)
        return self.lower < value < self.upper

    @classmethod
    def above(cls, bound: float, closed: bool = False) -> "Region":
        return cls(bound, math.inf, closed)

    @classmethod
    def below(cls, bound: float, closed: bool = False) -> "Region":
        return cls(-math.inf, bound, closed)

    @classmethod
    def within(cls, margin: float) -> "Region":
        return cls(-abs(margin), abs(margin), True)

    def text(self, shown=lambda v: f"{v:g}") -> str:
        if math.isinf(self.lower) and math.isinf(self.upper):
            return "any value"
        if math.isinf(self.upper):
            return f"{'≥' if self.closed else '>'} {shown(self.lower)}"
        if math.isinf(self.lower):
            return f"{'≤' if self.closed else '<'} {shown(self.upper)}"
        return f"in [{shown(self.lower)}, {shown(self.upper)}]"


@dataclass(frozen=True)
class Decision:
    """The outcome of a comparison, or of several joined (:mod:`.combine`): ``holds`` True, False
    or None (inconclusive, or ``estimate`` None: no noise to weigh against), with the p-values of
    holding and of failing and what was decided on.

    A decision that joins others keeps them (``parts``, joined by ``quantifier`` over
    ``expected`` units) and the refutation p-values its ``p_fails`` corrects over (``family``:
    those of every comparison beneath it, so that a claim is corrected once over all of them).
    ``partial``: open only because comparisons the sentence makes were not run, every one run
    holding."""

    holds: bool | None
    p_holds: float = 1.0
    p_fails: float = 1.0
    estimate: Estimate | None = None
    region: Region | None = None
    parts: tuple["Decision", ...] = ()
    quantifier: str = ""
    expected: int = 0
    family: tuple[float, ...] = ()
    partial: bool = False  # open only because comparisons the sentence makes were not run; the rest hold

    @property
    def decided(self) -> bool:
        return self.holds is not None

    @classmethod
    def exact(cls, holds: bool) -> "Decision":
        """A decision on exact values (a count, a property computed once)."""
        return cls(bool(holds), 0.0 if holds else 1.0, 1.0 if holds else 0.0)

    def incomplete(self) -> "Decision":
        """This decision where comparisons it should join were not run: it cannot hold (p_holds 1),
        it can still be refuted, and it is partial when what was run holds."""
        return replace(self, holds=None if self.holds is not False else False, p_holds=1.0,
                       partial=self.holds is True or self.partial)

    def leaves(self) -> list["Decision"]:
        """The single comparisons this decision rests on (itself, when it joins none)."""
        return [self] if not self.parts else [leaf for part in self.parts for leaf in part.leaves()]


def decide(estimate: Estimate | None, region: Region, alpha: float = ALPHA) -> Decision:
    """Holds when the 1 − 2·alpha interval of the estimate lies inside ``region``, does not hold
    when it lies outside, else inconclusive (see the module's docstring). p_holds is the
    largest one-sided p-value of θ being beyond a bound of the region (TOST for two bounds);
    p_fails the smallest one-sided p-value of θ being beyond a bound on the outside."""
    if estimate is None or not math.isfinite(estimate.value) or not estimate.measured:
        return Decision(None, estimate=estimate, region=region)
    if estimate.exact:
        inside = region.contains(estimate.value)
        return Decision(inside, 0.0 if inside else 1.0, 1.0 if inside else 0.0, estimate, region)
    p_inside = [estimate.p_above(region.lower) if math.isfinite(region.lower) else 0.0,
                estimate.p_below(region.upper) if math.isfinite(region.upper) else 0.0]
    p_outside = [estimate.p_below(region.lower) if math.isfinite(region.lower) else 1.0,
                 estimate.p_above(region.upper) if math.isfinite(region.upper) else 1.0]
    p_holds, p_fails = max(p_inside), min(p_outside)
    holds = True if p_holds < alpha else False if p_fails < alpha else None
    return Decision(holds, p_holds, p_fails, estimate, region)


# -- the noise that matches the claim ------------------------------------------------------------
@dataclass(frozen=True)
class Arm:
    """One side of a comparison as a summary gives it: the mean over ``n`` seeds with their
    standard deviation ``std`` (NaN for one seed; n = inf: an exact value)."""

    mean: float
    std: float = math.nan
    n: float = 1

    @property
    def exact(self) -> bool:
        return self.n == math.inf

    @property
    def seeded(self) -> bool:
        """Several seeds with a spread: an estimate of the seed noise."""
        return not self.exact and self.n >= 2 and math.isfinite(self.std)


def noise_shape(terms: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(unit_variance, arms) of Σ c_i · mean_i from (c_i, σ_i) pairs: see :class:`Estimate`."""
    weights = [c * c * sd * sd for c, sd in terms]
    total = sum(weights)
    squares = sum(w * w for w in weights)
    return total, (total * total / squares if squares > 0 else math.nan)


def unmeasured(value: float, seeds: int, note: str) -> Estimate:
    """An estimate whose spread the seeds could not measure: they agree exactly on a metric that
    is not declared exact. Never decided (se = ∞), never exact."""
    return Estimate(value, math.inf, math.inf, SEEDS, 0.0, seeds, note)


def welch(terms: Sequence[tuple[float, Arm]]) -> Estimate:
    """Σ c · mean over arms of several seeds each: se² = Σ c² s²/n, Welch–Satterthwaite
    degrees of freedom (Σ v)² / Σ v²/(n − 1). Exact arms add their value and no noise. Seeds
    that all agree (every s = 0) have not measured their spread: :func:`unmeasured`."""
    value = sum(c * arm.mean for c, arm in terms)
    noisy = [(c, arm) for c, arm in terms if not arm.exact]
    seeds = min((int(arm.n) for _, arm in noisy), default=0)
    parts = [(c * c * arm.std ** 2 / arm.n, arm.n - 1) for c, arm in noisy]
    variance = sum(v for v, _ in parts)
    if variance == 0:
        return unmeasured(value, seeds, f"the {seeds}+ seeds agree exactly: their spread is not measured")
    df = variance ** 2 / sum(v * v / d for v, d in parts if v > 0)
    sd = math.sqrt(sum((arm.n - 1) * arm.std ** 2 for _, arm in noisy) / sum(arm.n - 1 for _, arm in noisy))
    unit, arms = noise_shape([(c, arm.std) for c, arm in noisy])
    return Estimate(value, math.sqrt(variance), df, SEEDS, sd, seeds, "Welch's t over seeds", unit, arms)


def prediction(terms: Sequence[tuple[float, Arm]], spread: float = SINGLE_RUN_SPREAD) -> Estimate | None:
    """Σ c · mean where some arms are single runs and others have several seeds: the single runs
    are weighed against the seeds' pooled spread s (a prediction interval: a single run varies
    around its cell's mean, as a reproduction is scored against reference runs). A single run
    cannot measure its own spread, so it is assumed up to ``spread`` times as noisy as the seeds:
    se² = Σ_seeded c² s² / n + Σ_single c² (spread · s)², with the pooled degrees of freedom
    Σ (n − 1). None when no arm has several seeds."""
    seeded = [arm for _, arm in terms if arm.seeded]
    if not seeded:
        return None
    df = sum(arm.n - 1 for arm in seeded)
    pooled = math.sqrt(sum((arm.n - 1) * arm.std ** 2 for arm in seeded) / df)
    value = sum(c * arm.mean for c, arm in terms)
    noisy = [(c, arm) for c, arm in terms if not arm.exact]
    seeds = int(min(a.n for a in seeded))
    if pooled == 0:
        return unmeasured(value, seeds, "the seeds beside the single runs agree exactly: their spread is not measured")
    variance = sum(c * c * (pooled ** 2 / arm.n if arm.seeded else (spread * pooled) ** 2) for c, arm in noisy)
    singles = sum(1 for _, arm in noisy if not arm.seeded)
    unit, arms = noise_shape([(c, pooled) for c, _ in noisy])
    return Estimate(value, math.sqrt(variance), df, PREDICTION, pooled, seeds,
                    f"{singles} single run{'s' * (singles != 1)} against the spread of "
                    f"{'+'.join(str(int(a.n)) for a in seeded)} seeds, a single run assumed up to "
                    f"{spread:g}× as noisy (prediction interval)", unit, arms)


def estimate(terms: Sequence[tuple[float, Arm]], bootstrap_se: float | None = None,
             bootstrap_note: str = "", seeds_only: bool = False) -> Estimate | None:
    """The estimate of Σ c · mean over ``terms`` with the noise that matches it:

    1. every arm exact: exact;
    2. every inexact arm has several seeds: Welch over seeds (:func:`welch`);
    3. some arms are single runs beside arms of several seeds: a prediction interval
       (:func:`prediction`);
    4. only single runs, scored on the same test items: the paired bootstrap's standard error
       ``bootstrap_se`` (normal), which weighs these trained models, not their cells; not with
       ``seeds_only`` (a claim about cells or architectures);
    5. else None: one seed and nothing to resample, no noise to weigh against.
    """
    value = sum(c * arm.mean for c, arm in terms)
    inexact = [arm for _, arm in terms if not arm.exact]
    if not inexact:
        return Estimate(value, 0.0, math.inf, EXACT)
    if all(arm.seeded for arm in inexact):
        return welch(terms)
    mixed = prediction(terms)
    if mixed is not None:
        return mixed
    if bootstrap_se is not None and not seeds_only:
        return Estimate(value, bootstrap_se, math.inf, ITEMS, note=bootstrap_note or "paired bootstrap over test items")
    return None


def within_spreads(difference: float, times: float, spread: Arm, weight: float, alpha: float = ALPHA) -> Decision:
    """Whether a difference of two means lies within ± ``times`` σ, where σ is the seed spread of
    the arm ``spread`` (its std over n seeds, estimated: "k times the LSTM's run-to-run spread")
    and both means are assumed as noisy as that arm: var(difference) = σ² · ``weight`` with
    ``weight`` = Σ 1/n_i over the two arms (1 for a single run, 0 for an exact value).

    The tolerance is estimated from the same kind of sample, so it is not a constant: with
    t = difference / (s √weight) (s independent of the two means), t follows a noncentral t with
    n − 1 degrees of freedom and noncentrality δ / (σ √weight); at either edge |δ| = times · σ it
    is ± times / √weight whatever σ is. Holds when both edges are rejected (TOST on the
    noncentral t), does not hold when one is rejected from the outside."""
    if spread.exact or not spread.seeded or weight <= 0:
        return Decision(None)
    s, df = spread.std, spread.n - 1
    if s == 0:
        return Decision(None, estimate=unmeasured(difference, int(spread.n), "the seeds that set the tolerance agree "
                                                                               "exactly: their spread is not measured"))
    root = math.sqrt(weight)
    t, edge = difference / (s * root), times / root
    p_holds = max(float(stats.nct.cdf(t, df, edge)), float(stats.nct.sf(t, df, -edge)))
    p_fails = min(float(stats.nct.sf(t, df, edge)), float(stats.nct.cdf(t, df, -edge)))
    holds = True if p_holds < alpha else False if p_fails < alpha else None
    unit, arms = noise_shape([(1.0, s), (1.0, s)])
    noise = Estimate(difference, s * root, df, SEEDS, s, int(spread.n),
                     f"a tolerance of {times:g} σ with σ estimated from {int(spread.n)} seeds (noncentral t)", unit, arms)
    return Decision(holds, p_holds, p_fails, noise, Region.within(times * s))


def printed(value: float) -> Estimate:
    """A published number as printed: judged by its value, no noise."""
    return Estimate(value, 0.0, math.inf, PRINTED)


# -- rates of a binary outcome -----------------------------------------------------------------
def rate_difference(k_a: int, n_a: int, k_b: int, n_b: int, alpha: float = ALPHA) -> Decision:
    """Whether the rate k_a/n_a is below k_b/n_b, by Fisher's exact test (one-sided each way):
    holds when a's rate is significantly lower, does not hold when it is significantly higher,
    else inconclusive. The test is exact, so conservative at the boundary."""
    table = [[k_a, n_a - k_a], [k_b, n_b - k_b]]
    p_lower = float(stats.fisher_exact(table, alternative="less").pvalue)
    p_higher = float(stats.fisher_exact(table, alternative="greater").pvalue)
    holds = True if p_lower < alpha else False if p_higher < alpha else None
    rate_a, rate_b = k_a / n_a if n_a else math.nan, k_b / n_b if n_b else math.nan
    # for the price of more runs (:mod:`.power`): the per-run variance of the difference of two rates,
    # with half a run added to each count so that 0 of n and n of n still have one (a planning value)
    smooth = [(k + 0.5) / (n + 1) for k, n in ((k_a, n_a), (k_b, n_b))]
    unit = sum(p * (1 - p) for p in smooth)
    se = math.sqrt(sum(p * (1 - p) / max(n, 1) for p, n in zip(smooth, (n_a, n_b))))
    return Decision(holds, p_lower, p_higher, Estimate(rate_a - rate_b, se, math.inf, RATES, note="Fisher's exact test",
                                                       seeds=min(n_a, n_b), unit_variance=unit, arms=math.inf),
                    Region.below(0.0))
