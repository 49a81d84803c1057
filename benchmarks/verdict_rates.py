"""How often the verdict engine is wrong at the boundary of each kind of claim, and how often the
seeds it advises decide an open one.

For each kind of region and quantifier, draws synthetic experiments exactly at the boundary of
the claim (2,000 by default, fixed seed) and prints, as a Markdown table, how often the claim
was said to hold and how often not to hold; a calibrated decision sits near 5 % on both. A
second table prints, for open claims of several kinds, the seeds per arm the engine advises
(:func:`rnnrepro.claims.power.what_decides`) and how often that many decide the claim (planned:
80 %). ``tests/test_calibration.py`` asserts the same bounds; this prints the figures.

    python benchmarks/verdict_rates.py [--draws 2000] [--seed 100]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from rnnrepro.claims.combine import EVERY, MOST, SOME, combine
from rnnrepro.claims.inference import Arm, Region, decide, estimate, rate_difference, within_spreads
from rnnrepro.claims.kinds.build import AllOf
from rnnrepro.claims.power import what_decides
from rnnrepro.claims.verdict import verdict_of


def arm(rng: np.random.Generator, mean: float, n: int, sd: float = 1.0) -> Arm:
    """The summary of n seeds drawn around ``mean`` with standard deviation ``sd``."""
    if n == 1:
        return Arm(float(rng.normal(mean, sd)), math.nan, 1)
    values = rng.normal(mean, sd, n)
    return Arm(float(values.mean()), float(values.std(ddof=1)), n)


def difference(rng, theta: float, n_a: int, n_b: int, sd_a: float = 1.0):
    return estimate([(1.0, arm(rng, theta, n_a, sd_a)), (-1.0, arm(rng, 0.0, n_b))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    def rate(outcomes, value):
        outcomes = list(outcomes)
        return sum(o is value for o in outcomes) / len(outcomes)

    def row(name, held, failed):
        print(f"| {name} | {rate(held, True):.1%} | {rate(failed, False):.1%} |")

    def many(thetas, quantifier):
        return combine([decide(difference(rng, t, 3, 3), Region.above(0.0)) for t in thetas], quantifier).holds

    def listed(theta):
        checks = [verdict_of([(decide(difference(rng, theta, 3, 3), Region.above(0.0, True)), "")], EVERY, "")
                  for _ in range(3)]
        return AllOf.compose(checks).holds

    def tolerance(delta):
        a, b = arm(rng, delta, 5), arm(rng, 0.0, 5)
        return within_spreads(a.mean - b.mean, 2.77, b, 0.4).holds

    draws = range(args.draws)
    print("| claim at its boundary | false 'holds' | false 'does not hold' |\n|---|---:|---:|")
    row("superiority, 3 v 3 seeds, at a − b = m", (decide(difference(rng, .5, 3, 3), Region.above(.5)).holds for _ in draws),
        (decide(difference(rng, .5, 3, 3), Region.above(.5)).holds for _ in draws))
    row("non-inferiority, 3 v 3, at −m", (decide(difference(rng, -1, 3, 3), Region.above(-1, True)).holds for _ in draws),
        (decide(difference(rng, -1, 3, 3), Region.above(-1, True)).holds for _ in draws))
    row("equivalence (TOST), 3 v 3, at +m", (decide(difference(rng, 2.5, 3, 3), Region.within(2.5)).holds for _ in draws),
        (decide(difference(rng, 2.5, 3, 3), Region.within(2.5)).holds for _ in draws))
    row("equivalence within 2.77 seed sd (estimated), 5 v 5", (tolerance(2.77) for _ in draws),
        (tolerance(2.77 * 0.999) for _ in draws))
    row("threshold, mean of 3 at b", (decide(estimate([(1.0, arm(rng, .2, 3))]), Region.below(.2)).holds for _ in draws),
        (decide(estimate([(1.0, arm(rng, .2, 3))]), Region.below(.2)).holds for _ in draws))
    for ratio in (1, 2):
        row(f"one run beside 5 seeds, its cell {ratio}× as noisy (prediction interval)",
            (decide(difference(rng, -1, 1, 5, ratio), Region.above(-1, True)).holds for _ in draws),
            (decide(difference(rng, -1, 1, 5, ratio), Region.above(-1, True)).holds for _ in draws))
    row("every of 10 units at the boundary (Holm)", (many([0] * 10, EVERY) for _ in draws), (many([0] * 10, EVERY) for _ in draws))
    row("most of 5 (2 in + 3 at / 3 at + 2 out)", (many([20, 20, 0, 0, 0], MOST) for _ in draws),
        (many([0, 0, 0, -20, -20], MOST) for _ in draws))
    row("some of 5 (5 at / 1 at + 4 out)", (many([0] * 5, SOME) for _ in draws), (many([0, -20, -20, -20, -20], SOME) for _ in draws))
    row("a list of 3 checks at the boundary (one family)", (listed(0.0) for _ in draws), (listed(0.0) for _ in draws))

    def rates_equal():
        return rate_difference(int(rng.binomial(100, .2)), 100, int(rng.binomial(100, .2)), 100).holds

    row("rate, Fisher's exact test, 20 % v 20 % of 100", (rates_equal() for _ in draws), (rates_equal() for _ in draws))

    def two_arms(n, r=None):
        a, b = (Arm(0.7, 1, n), Arm(0, 1, n)) if r is None else (arm(r, 0.7, n), arm(r, 0, n))
        return decide(estimate([(1.0, a), (-1.0, b)]), Region.above(0.0))

    def contrast(n, r=None):
        arms = [Arm(m, 1, n) if r is None else arm(r, m, n) for m in (1.2, 0, 0, 0)]
        return decide(estimate(list(zip((1.0, -1.0, -1.0, 1.0), arms))), Region.above(0.0))

    def threshold(n, r=None, gap=0.45):
        one = Arm(0.2 - gap, 1, n) if r is None else arm(r, 0.2 - gap, n)
        return decide(estimate([(1.0, one)]), Region.below(0.2))

    def a_list(n, r=None):
        return combine([two_arms(n, r), threshold(n, r, 0.7)], EVERY).decision

    print("\n| open claim (effect in seed sd) | advised seeds per arm | decided with them |\n|---|---:|---:|")
    for name, kind in (("a − b > 0, effect 0.7", two_arms), ("(a − b) − (c − d) > 0, effect 1.2", contrast),
                       ("one arm below a bound, 0.45 below", threshold), ("a list of the first and a threshold", a_list)):
        need = what_decides(kind(3))
        outcomes = [kind(need.seeds, rng).holds for _ in range(args.draws // 2)]
        print(f"| {name} | {need.seeds} | {sum(o is not None for o in outcomes) / len(outcomes):.1%} |")


if __name__ == "__main__":
    main()
