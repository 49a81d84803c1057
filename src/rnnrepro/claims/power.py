"""What it would take to decide an open comparison: the seeds per arm that a decision needs.

An inconclusive comparison has an effect (how far its estimate stands from the nearest boundary
of the claim's region) and a seed spread s. A one-sided two-sample t-test at level α decides it
with probability ``power`` once each arm has n seeds, where n solves the power equation of
:class:`statsmodels.stats.power.TTestIndPower` for the standardised effect |effect| / s. An
effect of zero sits on the boundary: no number of seeds decides it. Without a seed spread (one
seed per arm), a decision first needs the spread: two seeds per arm at least.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from statsmodels.stats.power import TTestIndPower

from .inference import ALPHA, Decision, rounding

POWER = 0.8
MAX_SEEDS = 1000  # beyond this, say "more than 1000"


@dataclass(frozen=True)
class SeedsNeeded:
    """``seeds`` per arm for a decision at ``power`` (None: none suffices or unknown), and why."""

    seeds: int | None
    effect: float = math.nan
    sd: float = math.nan
    why: str = ""

    def text(self) -> str:
        return self.why


def distance_to_boundary(decision: Decision) -> float:
    """How far the estimate stands from the nearest finite boundary of the region."""
    estimate, region = decision.estimate, decision.region
    if estimate is None or region is None:
        return math.nan
    bounds = [b for b in (region.lower, region.upper) if math.isfinite(b)]
    return min((abs(estimate.value - b) for b in bounds), default=math.nan)


def seeds_needed(decision: Decision, alpha: float = ALPHA, power: float = POWER) -> SeedsNeeded:
    """The seeds per arm an inconclusive ``decision`` needs to be decided with ``power``."""
    estimate = decision.estimate
    if estimate is None or not math.isfinite(estimate.sd) or estimate.sd == 0:
        return SeedsNeeded(None, why="no seed spread measured (one seed per arm): at least 2 seeds per arm "
                                     "to measure it, then the effect decides how many")
    effect = distance_to_boundary(decision)
    if not math.isfinite(effect) or effect <= rounding(decision.estimate.value):
        return SeedsNeeded(None, effect, estimate.sd, "the estimate sits on the claim's boundary: "
                                                      "no number of seeds decides it")
    d = effect / estimate.sd
    try:
        n = TTestIndPower().solve_power(effect_size=d, alpha=alpha, power=power, ratio=1.0, alternative="larger")
    except (ValueError, RuntimeError):
        n = math.inf
    n = max(2, math.ceil(n)) if math.isfinite(n) else math.inf
    if n > MAX_SEEDS:
        return SeedsNeeded(None, effect, estimate.sd,
                           f"more than {MAX_SEEDS} seeds per arm (effect {effect:.3g}, seed sd {estimate.sd:.3g})")
    return SeedsNeeded(int(n), effect, estimate.sd,
                       f"{int(n)} seeds per arm for {power:.0%} power (effect {effect:.3g} from the boundary, "
                       f"seed sd {estimate.sd:.3g})")
