"""The verdict engine is calibrated: at the boundary of each kind of claim, simulated seeds make it
say "holds" wrongly at most 5 % of the time, and "does not hold" wrongly at most 5 %.

Each test draws synthetic experiments with a fixed seed (at least 2,000 draws) exactly at the
boundary of a claim's region, runs them through the engine's own functions
(:func:`rnnrepro.claims.inference.estimate`, :func:`~rnnrepro.claims.inference.decide`,
:func:`rnnrepro.claims.combine.combine`) and counts the wrong verdicts. A rate is allowed three
binomial standard errors above 5 % (the draws are a sample; a calibrated test sits at 5 %).
:func:`test_power_table` prints how often a true effect of 1, 2 and 3 seed standard deviations
is found with 3 and 5 seeds per arm (``pytest -s`` shows it).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from rnnrepro.claims.combine import EVERY, MOST, SOME, combine
from rnnrepro.claims.inference import ALPHA, Arm, Region, decide, estimate, rate_difference
from rnnrepro.claims.power import what_decides

DRAWS = 2000
SLACK = 3 * math.sqrt(ALPHA * (1 - ALPHA) / DRAWS)  # three binomial standard errors at 5 %


def arm(rng: np.random.Generator, mean: float, n: int, sd: float = 1.0) -> Arm:
    """The summary of n seeds drawn around ``mean``: what the tables give a check."""
    if n == 1:
        return Arm(float(rng.normal(mean, sd)), math.nan, 1)
    values = rng.normal(mean, sd, n)
    return Arm(float(values.mean()), float(values.std(ddof=1)), n)


def rates(verdicts) -> tuple[float, float]:
    """How often the verdicts held and how often they did not."""
    verdicts = list(verdicts)
    return (sum(v is True for v in verdicts) / len(verdicts), sum(v is False for v in verdicts) / len(verdicts))


def difference(rng, theta: float, n_a: int, n_b: int, sd: float = 1.0) -> float | None:
    """Draw arms a and b with a − b = theta; the estimate of the difference."""
    return estimate([(1.0, arm(rng, theta, n_a, sd)), (-1.0, arm(rng, 0.0, n_b, sd))])


@pytest.mark.parametrize("n_a, n_b", [(2, 2), (3, 3), (5, 5), (3, 10)])
def test_superiority_at_its_boundary(n_a, n_b):
    """"a is better than b by more than m": at a − b = m the claim is false (holds ≤ 5 %) and on
    the edge of true (refuted ≤ 5 %). Welch's t with Satterthwaite's degrees of freedom."""
    rng = np.random.default_rng(1)
    m = 0.5
    held, failed = rates(decide(difference(rng, m, n_a, n_b), Region.above(m)).holds for _ in range(DRAWS))
    assert held <= ALPHA + SLACK, f"false 'holds' {held:.1%}"
    assert failed <= ALPHA + SLACK, f"false 'does not hold' {failed:.1%}"


@pytest.mark.parametrize("n", [2, 3, 5])
def test_non_inferiority_absence_of_evidence_is_not_support(n):
    """"not worse than b by more than m": at a − b = −m, holds ≤ 5 %; a true shortfall of two seed
    standard deviations with no margin (the old engine: 'holds' in 81 % of draws with 3 seeds,
    97 % with 2) holds in at most 5 %."""
    rng = np.random.default_rng(2)
    m = 1.0
    held, failed = rates(decide(difference(rng, -m, n, n), Region.above(-m, closed=True)).holds
                         for _ in range(DRAWS))
    assert held <= ALPHA + SLACK and failed <= ALPHA + SLACK, (held, failed)
    held, _ = rates(decide(difference(rng, -2.0, n, n), Region.above(0.0, closed=True)).holds for _ in range(DRAWS))
    assert held <= ALPHA, f"a shortfall of 2 SD 'holds' in {held:.1%} of draws with {n} seeds"


@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("edge", [-1, 1])
def test_equivalence_two_one_sided_tests(n, edge):
    """"within ±m": at a − b = ±m the claim is on its edge: holds ≤ 5 % just outside, refuted
    ≤ 5 % just inside (TOST with the 90 % interval)."""
    rng = np.random.default_rng(3)
    m = 2.5
    outcomes = [decide(difference(rng, edge * m, n, n), Region.within(m)).holds for _ in range(DRAWS)]
    held, failed = rates(outcomes)
    assert held <= ALPHA + SLACK and failed <= ALPHA + SLACK, (held, failed)


def test_threshold_on_a_mean_over_seeds():
    """"below b": a mean of 3 seeds exactly at b holds ≤ 5 % and is refuted ≤ 5 %."""
    rng = np.random.default_rng(4)
    b = 0.2
    held, failed = rates(decide(estimate([(1.0, arm(rng, b, 3))]), Region.below(b)).holds for _ in range(DRAWS))
    assert held <= ALPHA + SLACK and failed <= ALPHA + SLACK, (held, failed)


@pytest.mark.parametrize("n", [3, 5, 10])
def test_one_run_beside_several_seeds_is_a_prediction_interval(n):
    """An arm of one run against an arm of n seeds (a paper's ablation run once beside a seeded
    LSTM) is decidable, and calibrated at the boundary; the old engine left it open at any scale."""
    rng = np.random.default_rng(5)
    m = 1.0
    held, failed = rates(decide(difference(rng, m, 1, n), Region.above(m)).holds for _ in range(DRAWS))
    assert held <= ALPHA + SLACK and failed <= ALPHA + SLACK, (held, failed)


def test_a_single_run_far_below_a_seeded_lstm_does_not_hold():
    """A −S-RNN 10 UAS points below a 5-seed LSTM whose spread is 0.2: "little to no performance
    loss" (not worse by more than 1 point) does not hold, and "better" does not either."""
    lstm = Arm(0.80, 0.002, 5)
    ablation = Arm(0.70, math.nan, 1)
    loss = estimate([(1.0, ablation), (-1.0, lstm)])
    assert decide(loss, Region.above(-0.01, closed=True)).holds is False
    assert decide(loss, Region.above(0.0)).holds is False
    assert loss.source == "prediction"


@pytest.mark.parametrize("k", [5, 10, 180])
def test_every_corrects_refutations_with_holm(k):
    """"in every unit" over k comparisons all exactly at their boundary: refuted ≤ 5 % (Holm; the
    old engine refuted on any one of k tests at 95 %: 1 − 0.95^k), and all holding by chance
    ≤ 5 %."""
    rng = np.random.default_rng(6)
    draws = DRAWS if k <= 10 else 300
    outcomes = []
    for _ in range(draws):
        parts = [decide(difference(rng, 0.0, 3, 3), Region.above(0.0)) for _ in range(k)]
        outcomes.append(combine(parts, EVERY).holds)
    held, failed = rates(outcomes)
    slack = 3 * math.sqrt(ALPHA * (1 - ALPHA) / draws)
    assert held <= ALPHA + slack and failed <= ALPHA + slack, (held, failed)


def test_every_with_a_unit_missing_is_partial_never_holds():
    """2 of 5 macro models run, both clearly better: partial (2 of 5), not "holds"."""
    parts = [decide(estimate([(1.0, Arm(10.0, 0.1, 3)), (-1.0, Arm(0.0, 0.1, 3))]), Region.above(0.0))] * 2
    outcome = combine(parts, EVERY, expected=5)
    assert outcome.holds is None and outcome.partial
    assert combine(parts, MOST, expected=5).holds is None
    refuted = [decide(estimate([(1.0, Arm(0.0, 0.1, 3)), (-1.0, Arm(10.0, 0.1, 3))]), Region.above(0.0))]
    assert combine(refuted, EVERY, expected=5).holds is False  # one refuted unit refutes "every"


def test_most_at_its_boundary():
    """"in most of 5 units": false when only 2 units are truly better (the other 3 at the
    boundary): holds ≤ 5 %; true with 3 units at the boundary inside and 2 clearly worse:
    refuted ≤ 5 %."""
    rng = np.random.default_rng(7)
    m = 0.5

    def outcome(thetas):
        return combine([decide(difference(rng, t, 3, 3), Region.above(m)) for t in thetas], MOST).holds

    held, _ = rates(outcome([m + 20, m + 20, m, m, m]) for _ in range(DRAWS))
    _, failed = rates(outcome([m, m, m, m - 20, m - 20]) for _ in range(DRAWS))
    assert held <= ALPHA + SLACK and failed <= ALPHA + SLACK, (held, failed)


def test_some_at_its_boundary():
    """"in some unit" over 5 units all at the boundary: holds ≤ 5 % (Holm; the old engine held on
    any one of them at 95 %); true through one unit at the boundary, the rest clearly not:
    refuted ≤ 5 %."""
    rng = np.random.default_rng(8)

    def outcome(thetas):
        return combine([decide(difference(rng, t, 3, 3), Region.above(0.0)) for t in thetas], SOME).holds

    held, _ = rates(outcome([0.0] * 5) for _ in range(DRAWS))
    _, failed = rates(outcome([0.0, -20, -20, -20, -20]) for _ in range(DRAWS))
    assert held <= ALPHA + SLACK and failed <= ALPHA + SLACK, (held, failed)


def test_rate_of_a_binary_outcome_by_fishers_exact_test():
    """"less likely to spike": equal rates (20 of 100 runs each, the boundary) hold ≤ 5 % and are
    refuted ≤ 5 % (Fisher's test is exact, so at most 5 % each way)."""
    rng = np.random.default_rng(9)
    outcomes = [rate_difference(int(rng.binomial(100, 0.2)), 100, int(rng.binomial(100, 0.2)), 100).holds
                for _ in range(DRAWS)]
    held, failed = rates(outcomes)
    assert held <= ALPHA + SLACK and failed <= ALPHA + SLACK, (held, failed)


def test_the_seeds_a_decision_needs():
    """An inconclusive comparison says how many seeds per arm decide it at 80 % power, and that
    number of seeds does decide it about 80 % of the time."""
    rng = np.random.default_rng(10)
    open_ = decide(estimate([(1.0, Arm(1.0, 1.0, 2)), (-1.0, Arm(0.0, 1.0, 2))]), Region.above(0.0))
    assert open_.holds is None
    needed = what_decides(open_)
    assert needed.seeds is not None and 10 <= needed.seeds <= 16, needed
    held, _ = rates(decide(difference(rng, 1.0, needed.seeds, needed.seeds), Region.above(0.0)).holds
                    for _ in range(DRAWS))
    assert 0.72 <= held <= 0.9, f"{needed.seeds} seeds per arm decided {held:.1%}, planned 80 %"
    at_boundary = decide(estimate([(1.0, Arm(0.0, 1.0, 3)), (-1.0, Arm(0.0, 1.0, 3))]), Region.above(0.0))
    assert what_decides(at_boundary).seeds is None


def test_power_table():
    """How often a true advantage of 1, 2 and 3 seed standard deviations is found ("holds") with 3
    and 5 seeds per arm; printed, and each finds more with more seeds and a larger effect."""
    rng = np.random.default_rng(11)
    table = {}
    for n in (3, 5):
        for effect in (1, 2, 3):
            table[n, effect] = rates(decide(difference(rng, effect, n, n), Region.above(0.0)).holds
                                     for _ in range(DRAWS))[0]
    print("\npower of 'a is better than b' (Welch, one-sided 95 %), by seeds per arm and true effect:")
    print("seeds  1 SD    2 SD    3 SD")
    for n in (3, 5):
        print(f"{n:>5}  " + "  ".join(f"{table[n, e]:5.1%}" for e in (1, 2, 3)))
    for n in (3, 5):
        assert table[n, 1] < table[n, 2] < table[n, 3]
    for effect in (1, 2, 3):
        assert table[3, effect] <= table[5, effect]


def test_holm_matches_statsmodels():
    """The hand-written Holm step-down rejects what statsmodels' ``multipletests`` rejects."""
    from statsmodels.stats.multitest import multipletests

    from rnnrepro.claims.combine import holm

    rng = np.random.default_rng(12)
    for k in (1, 2, 5, 30):
        for _ in range(4):
            p = list(rng.uniform(0, 0.1, k) ** rng.uniform(0.5, 3))
            assert holm(p) == [bool(r) for r in multipletests(p, alpha=ALPHA, method="holm")[0]]


# -- through the checks a study's YAML names -----------------------------------------------------
# The same boundaries, fed as summaries (mean, std, n over seeds) to the check kinds and to
# judge_claim, as the workflow's summary does. Fewer draws: a judgement goes through pandas.
CHECK_DRAWS = 400
CHECK_SLACK = 3 * math.sqrt(ALPHA * (1 - ALPHA) / CHECK_DRAWS)


def summary(rows: list[dict]) -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame([{"metric": "test_accuracy", "run": "", **row} for row in rows])


def seeded(rng, cell: str, mean: float, n: int, sd: float, **labels) -> dict:
    drawn = arm(rng, mean, n, sd)
    return {"cell": cell, **labels, "mean": drawn.mean, "std": drawn.std, "n": float(n)}


def test_check_equal_or_better_needs_evidence():
    """"equal or better" (compare, strict: false, no margin) fed a true shortfall of 2 seed
    standard deviations with 3 seeds per cell: the old engine said "holds" in 81 % of draws; now
    at most 5 %."""
    from rnnrepro.claims import Context, build_check

    rng = np.random.default_rng(20)
    check = build_check({"kind": "compare", "metric": "test_accuracy", "better": {"cell": "elstm"},
                         "than": {"cell": "lstm"}, "margin": 0, "strict": False})
    context = Context(scale="mini")
    outcomes = [check.judge(summary([seeded(rng, "elstm", 0.80, 3, 0.01), seeded(rng, "lstm", 0.82, 3, 0.01)]),
                            context).holds for _ in range(CHECK_DRAWS)]
    held, _ = rates(outcomes)
    assert held <= ALPHA + CHECK_SLACK, f"a 2-SD shortfall 'holds' in {held:.1%} of draws"


def test_check_single_ablation_beside_seeded_lstm():
    """wsum Tables 3–4: the LSTM with 5 seeds (spread 0.2 UAS points), a −S-RNN run once, 10
    points below: "little to no performance loss" (within 1 point) does not hold; the old engine
    found no noise and left it inconclusive at any scale."""
    from rnnrepro.claims import Context, build_check

    frame = summary([{"cell": "lstm", "mean": 0.80, "std": 0.002, "n": 5.0},
                     {"cell": "lstm_minus_srnn", "mean": 0.70, "std": math.nan, "n": 1.0}])
    check = build_check({"kind": "compare", "metric": "test_accuracy", "better": {"cell": "lstm_minus_srnn"},
                         "than": {"cell": "lstm"}, "margin": -0.01, "strict": False})
    assert check.judge(frame, Context(scale="mini")).holds is False
    close = frame.assign(mean=[0.80, 0.801])
    assert check.judge(close, Context(scale="mini")).holds is True


def test_check_missing_units_are_partial():
    """"ELSTM beats LSTM and GRU in most models" with 2 of 5 macro models run and no GRU: the old
    engine said "holds" on what was run; now partial, never holds."""
    import pandas as pd

    from rnnrepro.claims import judge_claim

    models = ["basic", "brnn", "seq2seq", "seq2seq_attn", "dbrnn"]
    published = pd.DataFrame([{"model": m, "cell": c, "metric": "test_accuracy", "mean": v, "std": math.nan,
                               "n": math.nan} for m in models for c, v in (("elstm", 0.9), ("lstm", 0.8), ("gru", 0.8))])
    ours = summary([{"model": m, "cell": c, "mean": v, "std": 0.001, "n": 3.0}
                    for m in models[:2] for c, v in (("elstm", 0.9), ("lstm", 0.8))])
    claim = {"quote": "ELSTM outperforms LSTM and GRU in most models", "where": "Sec. 5",
             "check": {"kind": "compare", "metric": "test_accuracy", "better": {"cell": "elstm"},
                       "than": {"cell": ["lstm", "gru"]}, "per": ["model"], "in": "most"}}
    result = judge_claim(claim, "table6", ours, published, published.rename(columns={"mean": "value"}), "mini")
    assert result.published.holds is True
    assert result.ours.holds is None and result.ours.status.startswith("partial"), result.ours.status


def test_check_ours_set_to_the_papers_numbers_is_consistent():
    """"little to no difference" with the paper's own largest gap as its margin, and ours set
    exactly to the paper's numbers (3 seeds, some spread): the old engine said "inconclusive";
    now it holds or is called consistent with the published numbers."""
    import pandas as pd

    from rnnrepro.claims import judge_claim

    paper = {"lstm": 0.90, "lstm_minus_gates": 0.88, "lstm_minus_srnn": 0.895}
    published = pd.DataFrame([{"cell": c, "metric": "test_accuracy", "mean": v, "std": math.nan, "n": math.nan}
                              for c, v in paper.items()])
    ours = summary([{"cell": c, "mean": v, "std": 0.003, "n": 3.0} for c, v in paper.items()])
    claim = {"quote": "little to no difference", "where": "Sec. 4",
             "check": {"kind": "within", "metric": "test_accuracy", "a": {"cell": ["lstm_minus_gates",
                                                                                  "lstm_minus_srnn"]},
                       "b": {"cell": "lstm"}, "tolerance": 0.02}}
    result = judge_claim(claim, "table1", ours, published, published.rename(columns={"mean": "value"}), "mini")
    assert result.published.holds is True
    assert result.ours.holds is True or result.ours.status == "consistent with the published numbers", \
        result.ours.status


def test_capability_is_the_best_run_not_the_mean():
    """elstm Fig. 5, "the ELSTM can fit T = 60" (threshold, ``statistic: min``): the quantity is
    the best run's final loss, scored on the whole task (the T + 1 sequences are the dev set), so
    exact; the claim holds when some run is below the bound, whatever the mean of the others, and
    fails when none is. Read on the mean with a noise allowance (the old reading) the first frame
    would not hold."""
    from rnnrepro.claims import Context, build_check

    check = build_check({"kind": "threshold", "metric": "dev_loss", "statistic": "min", "below": 0.01})
    frame = summary([{"cell": "elstm", "mean": 0.30, "std": 0.2, "n": 4.0, "min": 0.004, "max": 0.5}])
    frame["metric"] = "dev_loss"
    assert check.judge(frame, Context(scale="mini")).holds is True
    assert check.judge(frame.assign(min=0.011), Context(scale="mini")).holds is False
    mean_reading = build_check({"kind": "threshold", "metric": "dev_loss", "below": 0.01})
    assert mean_reading.judge(frame, Context(scale="mini")).holds is False


def test_check_trend_steps_back_do_not_add_up():
    """drnn Fig. 3: a curve that falls 16 pp from d = 0 to d = 18 in steps under the 1 pp tolerance
    and then jumps does not "increase" (the old engine applied the tolerance per step); a staircase
    that rises overall with flat steps within the tolerance does."""
    from rnnrepro.claims import Context, build_check

    check = build_check({"kind": "trend", "metric": "test_accuracy", "along": "delay",
                         "direction": "increasing", "margin": -0.01, "noise": "seeds"})
    falling = [0.80 - 0.0089 * d for d in range(19)] + [0.99]
    frame = summary([{"cell": "lstm", "delay": str(d), "mean": v, "std": 0.001, "n": 3.0}
                     for d, v in enumerate(falling)])
    assert check.judge(frame, Context(scale="mini")).holds is False
    stairs = [0.625 + 0.0375 * ((d + 1) // 2) - 0.002 * (d % 2 == 0) for d in range(20)]
    frame = summary([{"cell": "lstm", "delay": str(d), "mean": v, "std": 0.001, "n": 3.0}
                     for d, v in enumerate(stairs)])
    assert check.judge(frame, Context(scale="mini")).holds is True


def test_check_every_unit_with_holm_through_compare():
    """"in every unit" over 20 units of 5 seeds, each comparison exactly at its boundary (a true
    advantage of 0 where the claim needs more than 0): refuted at most 5 % (the old engine refuted
    on any one of the 20 uncorrected tests: about 20 % of draws)."""
    from rnnrepro.claims import Context, build_check

    rng = np.random.default_rng(21)
    check = build_check({"kind": "compare", "metric": "test_accuracy", "better": {"cell": "elstm"},
                         "than": {"cell": "lstm"}, "per": ["T"]})
    outcomes = []
    for _ in range(CHECK_DRAWS // 2):
        rows = [seeded(rng, c, 0.8, 5, 0.01, T=str(t)) for t in range(20) for c in ("elstm", "lstm")]
        outcomes.append(check.judge(summary(rows), Context(scale="mini")).holds)
    _, failed = rates(outcomes)
    assert failed <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / (CHECK_DRAWS // 2)), f"refuted {failed:.1%}"


def test_check_trend_at_its_boundaries():
    """A trend with a 1 pp tolerance for a step back, 4 points of 3 seeds (sd 1 pp): a flat curve
    (no overall rise: the boundary of "increases") holds at most 5 %; a curve that rises by 10 pp
    overall with one step back of exactly 1 pp (the boundary of the tolerance) is refuted at most
    5 %."""
    from rnnrepro.claims import Context, build_check

    rng = np.random.default_rng(22)
    check = build_check({"kind": "trend", "metric": "test_accuracy", "along": "delay", "margin": -0.01,
                         "noise": "seeds"})
    draws = CHECK_DRAWS // 2
    slack = 3 * math.sqrt(ALPHA * (1 - ALPHA) / draws)

    def outcome(curve):
        rows = [seeded(rng, "lstm", v, 3, 0.01, delay=str(d)) for d, v in enumerate(curve)]
        return check.judge(summary(rows), Context(scale="mini")).holds

    held, _ = rates(outcome([0.8, 0.8, 0.8, 0.8]) for _ in range(draws))
    _, failed = rates(outcome([0.80, 0.85, 0.84, 0.90]) for _ in range(draws))
    assert held <= ALPHA + slack and failed <= ALPHA + slack, (held, failed)


def test_the_rates_benchmark_prints_a_row_per_kind():
    """``benchmarks/verdict_rates.py`` runs and prints a row
    per kind of claim."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "verdict_rates.py"
    out = subprocess.run([sys.executable, str(script), "--draws", "40"], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("| ") and "%" in line]
    assert len(rows) == 16, out  # 12 kinds at their boundary, 4 kinds of open claims and their advised seeds


# -- the edges the referee measured (REFEREE.md, items 3-11) -------------------------------------
def test_a_list_of_checks_is_one_family():
    """A claim whose check is a list of three checks, each of one comparison exactly at the edge of
    true: refuted at most 5 % of the time (one Holm family over the three comparisons); decided
    check by check, as before, it was refuted 1 − 0.95³ ≈ 14 % of the time."""
    from rnnrepro.claims.kinds.build import AllOf
    from rnnrepro.claims.verdict import verdict_of

    rng = np.random.default_rng(30)
    m = 0.5
    joined, separately = [], []
    for _ in range(DRAWS):
        checks = [verdict_of([(decide(difference(rng, m, 3, 3), Region.above(m, closed=True)), "part")], EVERY, "")
                  for _ in range(3)]
        joined.append(AllOf.compose(checks).holds)
        separately.append(False if any(v.holds is False for v in checks) else None)
    _, failed = rates(joined)
    _, failed_before = rates(separately)
    assert failed <= ALPHA + SLACK, f"false 'does not hold' {failed:.1%}"
    assert failed_before > 0.09, failed_before  # what one decision per check gave


@pytest.mark.parametrize("ratio", [1.0, 2.0])
def test_a_single_run_is_assumed_up_to_twice_as_noisy(ratio):
    """One run beside 5 seeds, non-inferiority at its boundary: the single run's own spread cannot be
    measured, so the prediction interval assumes it up to twice the seeds' spread; when its cell is
    truly twice as noisy, false "holds" stay within 5 % (assuming it as noisy as the seeds gave 16 %),
    and the verdict says what it assumes."""
    rng = np.random.default_rng(31)
    m = 1.0
    outcomes = []
    for _ in range(DRAWS):
        single = arm(rng, -m, 1, sd=ratio)
        noise = estimate([(1.0, single), (-1.0, arm(rng, 0.0, 5))])
        outcomes.append(decide(noise, Region.above(-m, closed=True)).holds)
    held, _ = rates(outcomes)
    assert held <= ALPHA + SLACK, f"false 'holds' {held:.1%} with the single run's cell {ratio:g}× as noisy"
    assert "up to 2× as noisy" in noise.note


def test_a_tolerance_estimated_from_the_seeds_carries_its_noise():
    """wsum Table 3: |a − b| within 2.77 times the LSTM's seed standard deviation, 5 + 5 seeds, at the
    edge of the tolerance: false "holds" within 5 % (the noncentral t; the tolerance taken as a
    constant gave 9.5 %), and just inside it false "does not hold" within 5 %."""
    from rnnrepro.claims.inference import within_spreads

    rng = np.random.default_rng(32)
    k = 2.77

    def outcome(delta):
        a, b = arm(rng, delta, 5), arm(rng, 0.0, 5)
        return within_spreads(a.mean - b.mean, k, b, 1 / 5 + 1 / 5).holds

    held, _ = rates(outcome(k) for _ in range(DRAWS))
    _, failed = rates(outcome(k * 0.999) for _ in range(DRAWS))
    assert held <= ALPHA + SLACK and failed <= ALPHA + SLACK, (held, failed)
    as_constant = rates(decide(difference(rng, k, 5, 5), Region.within(k * float(arm(rng, 0, 5).std))).holds
                        for _ in range(DRAWS))[0]
    assert as_constant > held  # what taking the estimated tolerance for a constant gave


def test_seeds_that_agree_exactly_have_not_measured_their_spread():
    """Three seeds that agree on a discrete metric: their spread is unmeasured, not zero, so the
    difference is never decided (the old engine decided it exactly); exact values (counts) are."""
    agree = estimate([(1.0, Arm(0.9, 0.0, 3)), (-1.0, Arm(0.8, 0.0, 3))])
    assert not agree.exact and not agree.measured
    assert decide(agree, Region.above(0.0)).holds is None
    assert decide(estimate([(1.0, Arm(5.0, 0.0, math.inf)), (-1.0, Arm(4.0, 0.0, math.inf))]),
                  Region.above(0.0)).holds is True


def test_an_arm_entered_twice_counts_once():
    """wsum's GatedGapSmall weighs ratio·(LSTM − −GATES) − (x − y); where x is the LSTM, the LSTM enters
    twice: its noise counts once with the summed coefficient. Read as two independent arms the standard
    error was wrong: c₁² + c₂² in place of (c₁ + c₂)² (5-8 % too small where the signs agree, too large
    here, where they differ)."""
    from rnnrepro.claims.noise import Context

    lstm = {"cell": "lstm", "mean": 0.80, "std": 0.01, "n": 5}
    gates = {"cell": "lstm_minus_gates", "mean": 0.60, "std": 0.01, "n": 5}
    other = {"cell": "lstm_minus_srnn", "mean": 0.79, "std": 0.01, "n": 5}
    context = Context(scale="mini")
    twice = context.noise_of("test_uas", [(0.1, lstm), (-0.1, gates), (-1.0, lstm), (1.0, other)])
    once = context.noise_of("test_uas", [(-0.9, lstm), (-0.1, gates), (1.0, other)])
    assert twice.se == pytest.approx(once.se) and twice.value == pytest.approx(once.value)
    naive = estimate([(0.1, Arm(0.8, 0.01, 5)), (-0.1, Arm(0.6, 0.01, 5)), (-1.0, Arm(0.8, 0.01, 5)),
                      (1.0, Arm(0.79, 0.01, 5))])
    assert naive.se == pytest.approx(math.sqrt(0.1 ** 2 * 2 + 1.0 ** 2 * 2) * 0.01 / math.sqrt(5))
    assert twice.se == pytest.approx(math.sqrt(0.9 ** 2 + 0.1 ** 2 + 1.0 ** 2) * 0.01 / math.sqrt(5))


# -- the price of an open claim ---------------------------------------------------------------------
def advised_and_achieved(build, draw, rng):
    """The seeds ``what_decides`` advises for the open decision ``build`` gives (the truth taken as the
    estimate), and how often that many seeds per arm decide the claim in simulated experiments."""
    need = what_decides(build())
    assert need.seeds is not None, need
    decided = rates(draw(rng, need.seeds) for _ in range(DRAWS // 2))
    return need.seeds, decided[0] + decided[1]


def two_arms(n, rng=None, effect=0.7):
    a, b = (Arm(effect, 1.0, n), Arm(0.0, 1.0, n)) if rng is None else (arm(rng, effect, n), arm(rng, 0.0, n))
    return decide(estimate([(1.0, a), (-1.0, b)]), Region.above(0.0))


def contrast(n, rng=None, effect=1.2):
    """(a − b) − (c − d) > 0: an interaction of four arms."""
    means = (effect, 0.0, 0.0, 0.0)
    arms = [Arm(m, 1.0, n) if rng is None else arm(rng, m, n) for m in means]
    return decide(estimate(list(zip((1.0, -1.0, -1.0, 1.0), arms))), Region.above(0.0))


def threshold(n, rng=None, gap=0.45):
    one = Arm(0.2 - gap, 1.0, n) if rng is None else arm(rng, 0.2 - gap, n)
    return decide(estimate([(1.0, one)]), Region.below(0.2))


def listed(n, rng=None):
    return combine([two_arms(n, rng, 1.0), threshold(n, rng, 0.7)], EVERY).decision


@pytest.mark.parametrize("kind", [two_arms, contrast, threshold, listed])
def test_the_advised_seeds_decide_the_claim_four_times_in_five(kind):
    """The seeds per arm an open claim is advised (from its quantity's own standard error: its arms
    and coefficients) decide it in 80 ± 5 % of simulated experiments: a 2-arm compare, a 4-arm
    contrast (the old pooled-effect model gave it 58 %), a threshold on one arm (the old model asked
    about twice too many) and a list of two checks."""
    rng = np.random.default_rng(33)
    seeds, achieved = advised_and_achieved(lambda: kind(3), lambda r, n: kind(n, r).holds, rng)
    assert 0.75 <= achieved <= 0.85, f"{seeds} seeds per arm decided {achieved:.1%}"


def test_large_effects_need_few_seeds_never_more_than_any():
    """An effect of 8 seed standard deviations left open by one seed's missing spread: 2 seeds per
    arm decide it (statsmodels' solver gave NaN above about 4 SD, read as "more than 1000")."""
    huge = decide(estimate([(1.0, Arm(8.0, 1.0, 2)), (-1.0, Arm(0.0, 1.0, 2))]), Region.above(7.0))
    assert huge.holds is None
    need = what_decides(huge)
    assert need.seeds is not None and need.seeds <= 40
    assert what_decides(decide(estimate([(1.0, Arm(30.0, 1.0, 2)), (-1.0, Arm(0.0, 1.0, 2))]),
                               Region.above(28.0))).seeds <= 40


def test_a_named_opponent_not_run_is_not_covered():
    """"ELSTM beats LSTM and GRU in most models" with every macro model run but no GRU anywhere: the
    old engine said "holds" (elstm:PerUnit keyed its units by model alone); now partial, with and
    without the paper's table beside it."""
    import pandas as pd

    from rnnrepro.claims import judge_claim

    models = ["basic", "brnn", "seq2seq", "seq2seq_attn", "dbrnn"]
    published = pd.DataFrame([{"model": m, "cell": c, "metric": "test_accuracy", "mean": v, "std": math.nan,
                               "n": math.nan} for m in models for c, v in (("elstm", 0.9), ("lstm", 0.8), ("gru", 0.8))])
    ours = summary([{"model": m, "cell": c, "mean": v, "std": 0.001, "n": 3.0}
                    for m in models for c, v in (("elstm", 0.9), ("lstm", 0.8))])
    for check in ({"kind": "python", "function": "elstm:PerUnit", "metric": "test_accuracy", "better": {"cell": "elstm"},
                   "than": {"cell": ["lstm", "gru"]}, "per": ["model"], "in": "most"},
                  {"kind": "compare", "metric": "test_accuracy", "better": {"cell": "elstm"},
                   "than": {"cell": ["lstm", "gru"]}, "per": ["model"], "in": "most"}):
        claim = {"quote": "ELSTM outperforms LSTM and GRU in most models", "where": "Sec. 5", "check": check}
        for paper in (published, published.iloc[0:0]):
            result = judge_claim(claim, "table5", ours, paper, paper.rename(columns={"mean": "value"}), "mini")
            assert result.ours.holds is None and result.ours.status.startswith("partial"), \
                (check["kind"], len(paper), result.ours.status, result.ours.details[:2])


def test_consistent_needs_every_comparison_to_contain_the_papers_value():
    """"Consistent with the published numbers" asks every comparison of ours, held and refuted ones
    too, to contain the paper's value in its interval, not only the open ones."""
    import pandas as pd

    from rnnrepro.claims import judge_claim

    paper = {"lstm": 0.90, "lstm_minus_gates": 0.88, "lstm_minus_srnn": 0.895}
    published = pd.DataFrame([{"cell": c, "metric": "test_accuracy", "mean": v, "std": math.nan, "n": math.nan}
                              for c, v in paper.items()])
    claim = {"quote": "little to no difference", "where": "Sec. 4",
             "check": {"kind": "within", "metric": "test_accuracy", "a": {"cell": ["lstm_minus_gates", "lstm_minus_srnn"]},
                       "b": {"cell": "lstm"}, "tolerance": 0.02}}
    wide = summary([{"cell": c, "mean": v, "std": 0.02, "n": 3.0} for c, v in paper.items()])
    result = judge_claim(claim, "table1", wide, published, published.rename(columns={"mean": "value"}), "mini")
    assert result.ours.status == "consistent with the published numbers", result.ours.details
    # −S-RNN 1.5 points from the LSTM, held within 2 points but far from the paper's 0.5, −GATES open:
    # only the open comparison contains the paper's value (the old rule's "consistent")
    apart = wide.copy()
    apart.loc[apart["cell"] == "lstm_minus_srnn", ["mean", "std"]] = [0.885, 0.0001]
    apart.loc[apart["cell"] == "lstm", "std"] = 0.0001
    result = judge_claim(claim, "table1", apart, published, published.rename(columns={"mean": "value"}), "mini")
    assert result.ours.status == "inconclusive at this scale", (result.ours.status, result.ours.details)


def test_significance_on_printed_numbers_holds_in_sign_only():
    """A sentence about significance holds "in sign" on the published numbers, even where the paper
    prints a spread: no test is run on printed numbers."""
    import pandas as pd

    from rnnrepro.claims import judge_claim

    published = pd.DataFrame([{"cell": "pru_plus", "metric": "test_bleu", "mean": 20.0, "std": 0.1, "n": 5.0},
                              {"cell": "lstm", "metric": "test_bleu", "mean": 19.0, "std": 0.1, "n": 5.0}])
    claim = {"quote": "significantly better", "where": "Sec. 4",
             "check": {"kind": "compare", "metric": "test_bleu", "better": {"cell": "pru_plus"}, "than": {"cell": "lstm"},
                       "significant": True}}
    result = judge_claim(claim, "table4", published.iloc[0:0], published, published.rename(columns={"mean": "value"}),
                         "mini")
    assert result.published.status == "holds in sign"
