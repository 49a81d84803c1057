"""How often the verdict engine is wrong at the boundary of each kind of claim.

For each kind of region and quantifier, draws synthetic experiments exactly at the boundary of
the claim (2,000 by default, fixed seed) and prints, as a Markdown table, how often the claim
was said to hold and how often not to hold; a calibrated decision sits near 5 % on both.
``tests/test_calibration.py`` asserts the same bounds; this prints the figures.

    python benchmarks/verdict_rates.py [--draws 2000] [--seed 100]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from rnnrepro.claims.combine import EVERY, MOST, SOME, combine
from rnnrepro.claims.inference import Arm, Region, decide, estimate, rate_difference


def arm(rng: np.random.Generator, mean: float, n: int) -> Arm:
    """The summary of n seeds drawn around ``mean`` with standard deviation 1."""
    if n == 1:
        return Arm(float(rng.normal(mean, 1.0)), math.nan, 1)
    values = rng.normal(mean, 1.0, n)
    return Arm(float(values.mean()), float(values.std(ddof=1)), n)


def difference(rng, theta: float, n_a: int, n_b: int):
    return estimate([(1.0, arm(rng, theta, n_a)), (-1.0, arm(rng, 0.0, n_b))])


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

    draws = range(args.draws)
    print("| claim at its boundary | false 'holds' | false 'does not hold' |\n|---|---:|---:|")
    row("superiority, 3 v 3 seeds, at a − b = m", (decide(difference(rng, .5, 3, 3), Region.above(.5)).holds for _ in draws),
        (decide(difference(rng, .5, 3, 3), Region.above(.5)).holds for _ in draws))
    row("non-inferiority, 3 v 3, at −m", (decide(difference(rng, -1, 3, 3), Region.above(-1, True)).holds for _ in draws),
        (decide(difference(rng, -1, 3, 3), Region.above(-1, True)).holds for _ in draws))
    row("equivalence (TOST), 3 v 3, at +m", (decide(difference(rng, 2.5, 3, 3), Region.within(2.5)).holds for _ in draws),
        (decide(difference(rng, 2.5, 3, 3), Region.within(2.5)).holds for _ in draws))
    row("threshold, mean of 3 at b", (decide(estimate([(1.0, arm(rng, .2, 3))]), Region.below(.2)).holds for _ in draws),
        (decide(estimate([(1.0, arm(rng, .2, 3))]), Region.below(.2)).holds for _ in draws))
    row("one run beside 5 seeds (prediction interval)", (decide(difference(rng, 1, 1, 5), Region.above(1)).holds for _ in draws),
        (decide(difference(rng, 1, 1, 5), Region.above(1)).holds for _ in draws))
    row("every of 10 units at the boundary (Holm)", (many([0] * 10, EVERY) for _ in draws), (many([0] * 10, EVERY) for _ in draws))
    row("most of 5 (2 in + 3 at / 3 at + 2 out)", (many([20, 20, 0, 0, 0], MOST) for _ in draws),
        (many([0, 0, 0, -20, -20], MOST) for _ in draws))
    row("some of 5 (5 at / 1 at + 4 out)", (many([0] * 5, SOME) for _ in draws), (many([0, -20, -20, -20, -20], SOME) for _ in draws))

    def rates_equal():
        return rate_difference(int(rng.binomial(100, .2)), 100, int(rng.binomial(100, .2)), 100).holds

    row("rate, Fisher's exact test, 20 % v 20 % of 100", (rates_equal() for _ in draws), (rates_equal() for _ in draws))


if __name__ == "__main__":
    main()
