"""Test items and the paired bootstrap over them (rnnrepro.metrics.items), and verdicts on ours
that weigh a difference between two single runs by it.

- Every formula over item sums gives the split's metric: corpus BLEU equals sacrebleu's.
- The bootstrap's standard error matches the textbook one where there is one (a proportion),
  is paired (two runs that err on the same items differ with a small error), is deterministic,
  and refuses runs scored on different items.
- A check on two single runs holds, fails or stays inconclusive as the difference stands
  beyond or within the test set's noise, and says that the bootstrap measured it.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest
import sacrebleu

from rnnrepro.aggregate import write_tables
from rnnrepro.metrics.items import (ITEMS_FILE, CorpusBleu, ItemRecorder, SplitItems, bleu_statistics, bootstrap_se,
                                    load_study_items, pairable, ratio, save_no_items, save_study_items)
from rnnrepro.claims import INCONCLUSIVE, Context, build_check

WORDS = "the a cat dog sat ran on under mat rug here there now".split()


def sentence(rng: random.Random, length: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(length))


@pytest.mark.parametrize("seed", range(5))
def test_corpus_bleu_from_item_sums_equals_sacrebleu(seed):
    """Random corpora with short hypotheses (brevity penalty) and orders without a match ('exp'
    smoothing) included."""
    rng = random.Random(seed)
    references = [sentence(rng, rng.randint(3, 12)) for _ in range(30)]
    hypotheses = [sentence(rng, rng.randint(1, 10)) for _ in range(30)]
    recorder = ItemRecorder("sentence")
    stats = [bleu_statistics(h, r) for h, r in zip(hypotheses, references)]
    recorder.add(**{name: [s[name] for s in stats] for name in stats[0]})
    items = recorder.items("test", {"bleu": CorpusBleu()})
    expected = sacrebleu.corpus_bleu(hypotheses, [references], tokenize="none", force=True).score
    assert items.value("test_bleu") == pytest.approx(expected, rel=1e-12, abs=1e-12)


def accuracy_items(correct: np.ndarray, tokens: np.ndarray | None = None) -> SplitItems:
    tokens = np.ones(len(correct)) if tokens is None else tokens
    return SplitItems("sentence", {"correct": correct.astype(float), "tokens": tokens.astype(float)},
                      {"test_accuracy": ratio("correct", "tokens")})


def test_the_bootstrap_error_of_a_proportion_is_the_binomial_one():
    rng = np.random.default_rng(1)
    n, p = 2000, 0.8
    items = accuracy_items(rng.random(n) < p)
    observed = items.value("test_accuracy")
    se = bootstrap_se([(1.0, items)], "test_accuracy")
    assert se == pytest.approx(math.sqrt(observed * (1 - observed) / n), rel=0.1)


def test_the_bootstrap_is_paired_and_deterministic():
    """Two runs that agree on 95 % of the items: the error of their difference is far below the
    unpaired sqrt(se_a² + se_b²), and the same on every call."""
    rng = np.random.default_rng(2)
    n = 1000
    a = rng.random(n) < 0.7
    b = a.copy()
    flip = rng.random(n) < 0.05
    b[flip] = ~b[flip]
    one, two = accuracy_items(a), accuracy_items(b)
    paired = bootstrap_se([(1.0, one), (-1.0, two)], "test_accuracy")
    unpaired = math.hypot(bootstrap_se([(1.0, one)], "test_accuracy"), bootstrap_se([(1.0, two)], "test_accuracy"))
    assert paired == pytest.approx(math.sqrt(flip.mean() / n), rel=0.15)  # the flips alone: var ≈ q / n
    assert paired < unpaired / 2
    assert bootstrap_se([(1.0, one), (-1.0, two)], "test_accuracy") == paired
    assert bootstrap_se([(1.0, one), (-1.0, one)], "test_accuracy") == 0.0


def test_runs_scored_on_other_items_are_not_paired():
    rng = np.random.default_rng(3)
    one = accuracy_items(rng.random(50) < 0.5, np.full(50, 3))
    other_lengths = accuracy_items(rng.random(50) < 0.5, np.full(50, 4))
    fewer = accuracy_items(rng.random(40) < 0.5, np.full(40, 3))
    assert pairable([one, one], "test_accuracy")
    assert not pairable([one, other_lengths], "test_accuracy")
    assert bootstrap_se([(1.0, one), (-1.0, fewer)], "test_accuracy") is None
    assert bootstrap_se([(1.0, one), (-1.0, one)], "test_bleu") is None  # a metric the items do not give


def test_a_run_file_and_a_study_file_round_trip(tmp_path):
    items = accuracy_items(np.array([1, 0, 1]), np.array([2, 3, 4]))
    items.save(tmp_path / ITEMS_FILE)
    again = SplitItems.load(tmp_path / ITEMS_FILE)
    assert again.value("test_accuracy") == items.value("test_accuracy") and again.unit == "sentence"
    save_no_items(tmp_path / "none.npz")
    assert SplitItems.load(tmp_path / "none.npz") is None
    save_study_items(tmp_path / "study.npz", {"task~pos/seed~1": items, "task~pos/seed~2": again})
    loaded = load_study_items(tmp_path / "study.npz")
    assert sorted(loaded) == ["task~pos/seed~1", "task~pos/seed~2"]
    assert np.array_equal(loaded["task~pos/seed~2"].columns["tokens"], [2, 3, 4])


def test_the_aggregation_collects_the_runs_items(tmp_path):
    uses = []
    for k, correct in enumerate(([1, 1, 0], [0, 1, 0])):
        folder = tmp_path / "runs" / f"cell~c{k}" / "seed~1"
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
        (folder / "metrics.json").write_text('{"test_accuracy": 0.5, "provenance": {}}')
        accuracy_items(np.array(correct)).save(folder / ITEMS_FILE)
        uses.append({"artifact": "t", "folder": str(folder), "labels": {"task": "pos", "model": "basic",
                                                                          "cell": f"c{k}", "seed": 1}})
    write_tables(uses, "s", "ci", tmp_path / "runs.csv", tmp_path / "curves.csv", items_path=tmp_path / "items.npz")
    loaded = load_study_items(tmp_path / "items.npz")
    assert {name: items.value("test_accuracy") for name, items in loaded.items()} == \
        {"cell~c0/seed~1": pytest.approx(2 / 3), "cell~c1/seed~1": pytest.approx(1 / 3)}


# -- verdicts on two single runs ---------------------------------------------------------------------
def single_runs(correct_a: np.ndarray, correct_b: np.ndarray) -> tuple[pd.DataFrame, dict]:
    """A summary of two single runs (cells a and b, one seed each) and their items."""
    items = {"runs/a": accuracy_items(correct_a), "runs/b": accuracy_items(correct_b)}
    summary = pd.DataFrame([{"cell": cell, "metric": "test_accuracy", "mean": items[f"runs/{cell}"].value("test_accuracy"),
                             "std": math.nan, "n": 1, "run": f"runs/{cell}"} for cell in ("a", "b")])
    return summary, items


def with_flips(base: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``base`` with ``count`` of its wrong items made right."""
    out = base.copy()
    wrong = np.flatnonzero(~out)
    out[rng.choice(wrong, size=count, replace=False)] = True
    return out


COMPARE = {"kind": "compare", "metric": "test_accuracy", "better": {"cell": "a"}, "than": {"cell": "b"}}


def test_a_difference_beyond_the_test_noise_holds_or_fails():
    rng = np.random.default_rng(4)
    b = rng.random(1000) < 0.6
    a = with_flips(b, 80, rng)  # 8 points better, on the same items
    summary, items = single_runs(a, b)
    verdict = build_check(COMPARE).judge(summary, Context(scale="mini", items=items))
    assert verdict.holds is True
    assert "paired bootstrap over 1000 test sentences" in verdict.text()
    reverse = build_check({**COMPARE, "better": {"cell": "b"}, "than": {"cell": "a"}})
    assert reverse.judge(summary, Context(scale="mini", items=items)).holds is False


def test_a_difference_within_the_test_noise_is_inconclusive():
    rng = np.random.default_rng(5)
    b = rng.random(1000) < 0.6
    a = with_flips(b, 2, rng)  # 0.2 points better: 2 items of 1000, within ± about 0.23 (90 %)
    summary, items = single_runs(a, b)
    verdict = build_check(COMPARE).judge(summary, Context(scale="mini", items=items))
    assert verdict.holds is None and verdict.status == INCONCLUSIVE
    within = build_check({"kind": "within", "metric": "test_accuracy", "a": {"cell": "a"}, "b": {"cell": "b"},
                          "tolerance": 0.05})
    assert within.judge(summary, Context(scale="mini", items=items)).holds is True  # 0.2 pp ± about 0.23 pp ≤ 5 pp


def test_without_items_a_single_run_stays_inconclusive_and_published_numbers_ignore_items():
    rng = np.random.default_rng(6)
    b = rng.random(1000) < 0.6
    summary, items = single_runs(with_flips(b, 80, rng), b)
    assert build_check(COMPARE).judge(summary, Context(scale="mini")).holds is None
    assert build_check(COMPARE).judge(summary, Context(scale=None, items=items)).holds is True  # as printed


def test_noise_seeds_leaves_single_runs_open_however_far_apart_and_weighs_seeds():
    """A claim about two cells (a trend along the delay, "no significant difference between PRU and
    PRU+") with ``noise: seeds``: one trained model per side stays open even where the bootstrap
    would tell the two models apart; with seeds, Welch's t decides."""
    rng = np.random.default_rng(7)
    low = rng.random(1000) < 0.6
    high = with_flips(low, 80, rng)
    summary, items = single_runs(low, high)  # cell a is 8 points below cell b
    along = summary.assign(x=[1, 2]).drop(columns="cell")  # one unit: the two runs along x
    trend = {"kind": "trend", "metric": "test_accuracy", "along": "x", "direction": "decreasing"}
    assert build_check(trend).judge(along, Context(scale="mini", items=items)).holds is False
    seeds_only = build_check({**trend, "noise": "seeds"})
    assert seeds_only.judge(along, Context(scale="mini", items=items)).holds is None
    assert seeds_only.judge(along.assign(std=0.01, n=5), Context(scale="mini", items=items)).holds is False
    # within a spread of 0.5: open (no evidence of a fall is not a fall; the old engine said "holds")
    assert seeds_only.judge(along.assign(std=0.5, n=5), Context(scale="mini", items=items)).holds is None
    over_seeds = summary.assign(std=0.01, n=5)

    from rnnrepro.claims.papers.pru import NoSignificantDifference

    alike = {"metric": "test_accuracy", "a": {"cell": "a"}, "b": {"cell": "b"}}
    assert NoSignificantDifference(alike).judge(summary, Context(scale="mini", items=items)).holds is False
    verdict = NoSignificantDifference({**alike, "noise": "seeds"}).judge(summary, Context(scale="mini", items=items))
    assert verdict.holds is None and "no spread" in verdict.text()
    assert NoSignificantDifference({**alike, "noise": "seeds"}).judge(
        over_seeds, Context(scale="mini", items=items)).holds is False
