"""rnnrepro.aggregate: run folders labelled by their uses, into long-form tables."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from fakes import write_run

from rnnrepro.aggregate import RunFolderError, collect, curve_means, main, run_name, write_tables

IDENTITY = {"task": {"name": "pos"}, "model": {"name": "basic"}, "cell": {"name": "lstm"}, "train": {}, "seed": 1}
CURVE = [(10, 1, "train_loss", 1.5), (20, 1, "train_loss", 1.0), (20, 1, "dev_accuracy", 0.8),
         (40, 2, "train_loss", 0.5), (40, 2, "dev_accuracy", 0.9)]


def run(root: Path, name: str, accuracy: float) -> Path:
    return write_run(root / "runs" / name, IDENTITY, {"test_accuracy": accuracy, "params": 10}, CURVE)


def use(artifact: str, folder: Path, **labels) -> dict:
    return {"artifact": artifact, "folder": str(folder),
            "labels": {"task": "pos", "model": "basic", "cell": "lstm", "seed": 1, **labels}}


def test_run_name_is_the_path_under_runs():
    assert run_name("results/ci/runs/task~pos/model~brnn/cell~lstm/cfg~0123456789/seed~1") == \
        "task~pos/model~brnn/cell~lstm/cfg~0123456789/seed~1"
    assert run_name("somewhere/plain") == "plain"


def test_one_row_per_use_and_metric_with_the_curve_means(tmp_path):
    a, b = run(tmp_path, "task~pos/cfg~a/seed~1", 0.8), run(tmp_path, "task~pos/cfg~b/seed~1", 0.7)
    table, curves, provenance = collect([use("table7", a), use("fig9", a, T=5), use("table7", b, cell="gru")],
                                        "elstm", "ci")
    assert list(table.columns) == ["study", "artifact", "scale", "run", "task", "model", "cell", "seed", "T",
                                   "metric", "value"]
    shared = table[(table["run"] == "task~pos/cfg~a/seed~1")]
    assert sorted(shared["artifact"].unique()) == ["fig9", "table7"]  # one run, two uses
    a_rows = shared[shared["artifact"] == "table7"].set_index("metric")["value"]
    assert a_rows["test_accuracy"] == 0.8 and a_rows["params"] == 10
    assert a_rows["mean_train_loss"] == pytest.approx(1.0) and a_rows["mean_dev_accuracy"] == pytest.approx(0.85)
    assert table.loc[table["artifact"] == "fig9", "T"].unique().tolist() == [5]
    assert table.loc[table["run"] == "task~pos/cfg~b/seed~1", "cell"].unique().tolist() == ["gru"]
    assert len(curves) == 3 * len(CURVE) and set(curves["artifact"]) == {"table7", "fig9"}
    assert list(provenance["run"]) == ["task~pos/cfg~a/seed~1", "task~pos/cfg~b/seed~1"]
    assert provenance["device"].tolist() == ["cpu", "cpu"] and provenance["wall_seconds"].sum() == 3.0


def test_curve_means_are_the_average_of_the_points():
    assert curve_means(pd.DataFrame(CURVE, columns=["step", "epoch", "metric", "value"])) == {
        "mean_dev_accuracy": pytest.approx(0.85), "mean_train_loss": 1.0}


def test_a_broken_folder_is_named(tmp_path):
    folder = run(tmp_path, "task~pos/cfg~a/seed~1", 0.8)
    (folder / "metrics.json").unlink()
    with pytest.raises(RunFolderError, match=r"run folder .*cfg~a/seed~1: metrics.json is missing"):
        collect([use("table7", folder)], "elstm", "ci")
    (folder / "metrics.json").write_text(json.dumps({"test_accuracy": "high"}))
    with pytest.raises(RunFolderError, match="metric 'test_accuracy' is not a number: 'high'"):
        collect([use("table7", folder)], "elstm", "ci")
    (folder / "metrics.json").write_text("{}")
    with pytest.raises(RunFolderError, match=r"labels use reserved names \['metric'\]"):
        collect([use("table7", folder, metric="x")], "elstm", "ci")


def test_no_uses_give_empty_tables_with_headers(tmp_path):
    table, curves, _ = write_tables([], "pru", "ci", tmp_path / "runs.csv", tmp_path / "curves.csv",
                                    tmp_path / "provenance.csv")
    assert table.empty and pd.read_csv(tmp_path / "runs.csv").columns[-1] == "value"
    assert pd.read_csv(tmp_path / "curves.csv").columns[-1] == "value"


def test_cli_labels_each_folder_by_its_own_config(tmp_path, capsys):
    folder = run(tmp_path, "task~pos/cfg~a/seed~1", 0.8)
    assert main(["--table", str(tmp_path / "t.csv"), "--curves", str(tmp_path / "c.csv"), str(folder)]) == 0
    table = pd.read_csv(tmp_path / "t.csv")
    assert set(table["artifact"]) == {"runs"} and set(table["cell"]) == {"lstm"}
    assert "1 runs ->" in capsys.readouterr().out
    assert main(["--table", str(tmp_path / "t.csv"), "--curves", str(tmp_path / "c.csv"), str(tmp_path)]) == 1
