"""The cross-paper table's ranks (rnnrepro.report.papers.cells): each with the ranks the noise over
seeds allows, and cells that are one function (the SRN and LSTM−GATES) ranked once."""
from __future__ import annotations

import pandas as pd

from rnnrepro.report.papers.cells import Task, merged, rank_intervals, ranking_frame, same_functions


def task(values: dict[str, list[float]], higher_is_better: bool = True, artifact: str = "pos") -> Task:
    seeds = pd.DataFrame([{"cell": cell, "seed": seed, "value": value}
                          for cell, runs in values.items() for seed, value in enumerate(runs, 1)])
    summary = seeds.groupby("cell", sort=False)["value"].agg(mean="mean", std="std", n="count").reset_index()
    summary["rank"] = summary["mean"].rank(ascending=not higher_is_better, method="min")
    return Task(artifact, "test_accuracy", higher_is_better, summary, seeds,
                pd.DataFrame(columns=["cell", "mean", "std", "source", "model"]))


def test_cells_apart_beyond_the_noise_get_one_rank_and_cells_within_it_share_a_bracket():
    clear = task({"lstm": [0.90, 0.901, 0.899], "gru": [0.80, 0.801, 0.799], "srn": [0.70, 0.701, 0.699]})
    assert rank_intervals(clear) == {"lstm": (1, 1), "gru": (2, 2), "srn": (3, 3)}
    close = task({"lstm": [0.85, 0.83, 0.86], "gru": [0.84, 0.86, 0.83], "srn": [0.70, 0.701, 0.699]})
    assert rank_intervals(close) == {"lstm": (1, 2), "gru": (1, 2), "srn": (3, 3)}
    lower_better = task({"lstm": [1.0, 1.01, 0.99], "gru": [2.0, 2.01, 1.99]}, higher_is_better=False)
    assert rank_intervals(lower_better) == {"lstm": (1, 1), "gru": (2, 2)}


def test_one_seed_can_take_any_rank():
    assert rank_intervals(task({"lstm": [0.9], "gru": [0.8], "srn": [0.7, 0.71]})) == {
        "lstm": (1, 3), "gru": (1, 3), "srn": (1, 3)}


def test_cells_that_are_one_function_share_a_row_and_a_rank():
    pos = task({"srn": [0.80, 0.81], "lstm": [0.85, 0.86], "lstm_minus_gates": [0.80, 0.81], "gru": [0.70, 0.71]})
    lm = task({"srn": [300.0, 310.0], "lstm": [200.0, 210.0], "lstm_minus_gates": [300.0, 310.0]},
              higher_is_better=False, artifact="lm")
    alias = same_functions([pos, lm])
    assert alias == {"lstm_minus_gates": "srn"}
    tasks = [merged(t, alias) for t in (pos, lm)]
    assert list(tasks[0].summary.sort_values("rank")["cell"]) == ["lstm", "srn", "gru"]
    assert list(tasks[0].summary.sort_values("rank")["rank"]) == [1, 2, 3]  # gru is third, not fourth
    frame = ranking_frame(tasks, alias)
    assert list(frame["cell"]) == ["lstm", "srn = lstm_minus_gates", "gru"]
    assert list(frame["POS: rank (noise allows)"]) == ["1", "2", "3"]  # apart beyond the noise of two seeds


def test_cells_that_differ_in_one_seed_are_not_one_function():
    pos = task({"srn": [0.80, 0.81], "lstm_minus_gates": [0.80, 0.82]})
    assert same_functions([pos]) == {}
