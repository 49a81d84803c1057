"""What it would take to decide an open claim: the seeds per arm that decide it with 80 % power.

Each comparison of a claim estimates a quantity θ = Σ c_i · mean_i with the noise of its own
arms and coefficients: with n seeds per arm its standard error is se(n) = √(V / n), V = Σ c_i² σ_i²
(:attr:`~.inference.Estimate.unit_variance`), with Welch's (n − 1) · a degrees of freedom (a, the
effective number of arms). Taking the estimate as the truth (the plug-in effect θ̂ and spreads
σ̂_i), the probability that its interval lands inside the region [L, U] is, per bound, that of a
noncentral t beyond the critical value:

    P(lower bound > L) = P(T'(df, (θ̂ − L) / se(n)) > t_{1−α, df})

(both bounds: at least their sum less one), and that it lands outside likewise. A claim joins its
comparisons (:mod:`.combine`): "every" holds when each holds (the product of their powers, the
comparisons taken as independent) and is refuted when one is at Holm's first level α / K over
the claim's K comparisons; "most" counts the parts that hold (a Poisson binomial); "some" holds
when one does. The seeds to decide are the smallest n ≥ 2 per arm at which the claim is decided
(holds or does not) with probability 0.8. Large effects need few seeds, never "more than any";
an estimate on the boundary needs more than any number (then it says so). A comparison whose
seed spread is not measured (one seed per arm, the bootstrap of trained models, seeds that agree
exactly) first needs 2 seeds per arm.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import special

from .combine import EVERY, MOST, SOME
from .inference import ALPHA, ITEMS, Decision

POWER = 0.8
MAX_SEEDS = 10_000


@dataclass(frozen=True)
class SeedsNeeded:
    """``seeds`` per arm for a decision at :data:`POWER` (None: no number suffices), the sentence
    that says why (``why``) and its short form for the index (``short``)."""

    seeds: int | None
    why: str
    short: str


def critical(df: float, alpha: float) -> float:
    return float(special.ndtri(1 - alpha) if math.isinf(df) else special.stdtrit(df, 1 - alpha))


def beyond(t: float, df: float, shift: float) -> float:
    """P(T' > t) for T' noncentral t with ``df`` degrees of freedom and noncentrality ``shift``."""
    if math.isinf(df):
        return float(special.ndtr(shift - t))
    return float(1.0 - special.nctdtr(df, shift, t))


def leaf_power(decision: Decision, n: int, alpha_hold: float, alpha_fail: float) -> tuple[float, float]:
    """(P holds, P does not hold) of one comparison with n seeds per arm (see the module)."""
    estimate, region = decision.estimate, decision.region
    if estimate is None or region is None or estimate.exact or not measured(decision):
        return {True: (1.0, 0.0), False: (0.0, 1.0), None: (0.0, 0.0)}[decision.holds]
    se = math.sqrt(estimate.unit_variance / n)
    df = (n - 1) * estimate.arms if math.isfinite(estimate.arms) else math.inf
    t_hold, t_fail = critical(df, alpha_hold), critical(df, alpha_fail)
    theta = estimate.value
    inside, outside = [], 0.0
    if math.isfinite(region.lower):
        inside.append(beyond(t_hold, df, (theta - region.lower) / se))
        outside += beyond(t_fail, df, (region.lower - theta) / se)
    if math.isfinite(region.upper):
        inside.append(beyond(t_hold, df, (region.upper - theta) / se))
        outside += beyond(t_fail, df, (theta - region.upper) / se)
    holds = max(0.0, sum(inside) - (len(inside) - 1)) if inside else 0.0
    return holds, min(1.0, outside)


def measured(decision: Decision) -> bool:
    """Whether a comparison's noise can be projected to more seeds: an estimate over seeds with a
    measured spread (not the bootstrap of trained models, not seeds that agree exactly)."""
    estimate = decision.estimate
    if estimate is None:
        return decision.holds is not None
    if estimate.exact:
        return True
    return estimate.source != ITEMS and estimate.measured and math.isfinite(estimate.unit_variance) \
        and estimate.unit_variance > 0


def at_least(probabilities: list[float], k: int) -> float:
    """P(at least k of independent events with these probabilities) (a Poisson binomial)."""
    counts = [1.0]
    for p in probabilities:
        counts = [a * (1 - p) + b * p for a, b in zip(counts + [0.0], [0.0] + counts)]
    return sum(counts[k:]) if k <= len(probabilities) else 0.0


def power(decision: Decision, n: int, alpha_hold: float, alpha_fail: float) -> tuple[float, float]:
    """(P holds, P does not hold) of a (joined) decision with n seeds per arm."""
    if not decision.parts:
        return leaf_power(decision, n, alpha_hold, alpha_fail)
    total = max(decision.expected, len(decision.parts))
    if decision.quantifier == MOST:
        need = total // 2 + 1
        level = alpha_hold / (total - need + 1)
        parts = [power(p, n, level, alpha_fail) for p in decision.parts]
        return at_least([h for h, _ in parts], need), at_least([f for _, f in parts], total - need + 1)
    if decision.quantifier == SOME:
        parts = [power(p, n, alpha_hold / len(decision.parts), alpha_fail) for p in decision.parts]
        fails = math.prod(f for _, f in parts) if total == len(parts) else 0.0  # some: every unit refuted
        return 1 - math.prod(1 - h for h, _ in parts), fails
    parts = [power(p, n, alpha_hold, alpha_fail) for p in decision.parts]  # every (or a list of checks)
    return math.prod(h for h, _ in parts), 1 - math.prod(1 - f for _, f in parts)  # of the units run


def decided(decision: Decision, n: int, alpha: float = ALPHA) -> float:
    """The probability that n seeds per arm decide the claim, either way."""
    family = max(1, len(decision.family) or len(decision.leaves()))
    holds, fails = power(decision, n, alpha, alpha / family)
    return min(1.0, holds + fails)


def what_decides(decision: Decision | None, alpha: float = ALPHA, target: float = POWER) -> SeedsNeeded | None:
    """The seeds per arm that decide an open claim with probability ``target`` (see the module);
    None when there is nothing to project (no comparison)."""
    if decision is None:
        return None
    open_ = [leaf for leaf in decision.leaves() if leaf.holds is None]
    if not open_:
        return None  # every comparison run is decided: running the units not run decides it
    if any(not measured(leaf) for leaf in open_):
        return SeedsNeeded(2, "at least 2 seeds per arm: the seed spread of an open comparison is not measured "
                              "(one seed per arm, or trained models compared on their test items), then its effect "
                              "decides how many", "≥ 2 seeds per arm")
    if decided(decision, MAX_SEEDS, alpha) < target:
        return SeedsNeeded(None, f"no number of seeds up to {MAX_SEEDS:,} per arm: the estimate sits on the claim's "
                                 "boundary", "no number of seeds (on the boundary)")
    low, high = 2, MAX_SEEDS
    while low < high:
        middle = (low + high) // 2
        if decided(decision, middle, alpha) >= target:
            high = middle
        else:
            low = middle + 1
    return SeedsNeeded(low, f"{low} seeds per arm decide it, either way, with {target:.0%} power (each open "
                            f"comparison's own spread and effect taken as the truth)", f"{low} seeds per arm")
