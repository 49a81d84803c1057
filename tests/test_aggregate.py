"""Tests of rnnrepro.aggregate on fake run folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from rnnrepro.aggregate import RunFolderError, collect_runs, main, run_name, write_tables


def write_run(
    root: Path,
    labels: dict,
    artifacts: list[str],
    metrics: dict | None,
    curve: list[tuple] | None = None,
    scale: str = "ci",
) -> Path:
    """Create ``root/results/runs/<study>/<key~value...>`` with config, metrics and curve files."""
    keys = [
        "task",
        "model",
        "cell",
        *[k for k in labels if k not in ("study", "task", "model", "cell", "seed")],
        "seed",
    ]
    run_dir = root / "results" / "runs" / labels["study"] / Path(*[f"{k}~{labels[k]}" for k in keys])
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(
        json.dumps({"labels": labels, "artifacts": artifacts, "scale": scale, "lr": 0.5})
    )
    if metrics is not None:
        (run_dir / "metrics.json").write_text(json.dumps(metrics))
    if curve is not None:
        lines = ["step\tepoch\tmetric\tvalue"] + ["\t".join(str(x) for x in row) for row in curve]
        (run_dir / "curve.tsv").write_text("\n".join(lines) + "\n")
    return run_dir


def pos_run(
    root: Path, model: str, cell: str, seed: int, acc: float, artifacts: list[str] | None = None
) -> Path:
    """A POS-tagging run with three metrics and a four-point curve."""
    labels = {"study": "elstm", "task": "pos", "model": model, "cell": cell, "seed": seed}
    metrics = {"dev_accuracy": acc + 0.01, "test_accuracy": acc, "params": 1234}
    curve = [
        (10, 0, "train_loss", 1.5),
        (20, 0, "train_loss", 1.0),
        (20, 1, "dev_accuracy", acc),
        (30, 1, "train_loss", 0.8),
    ]
    return write_run(root, labels, artifacts or ["table7"], metrics, curve)


def test_run_name_takes_the_key_value_segments(tmp_path: Path) -> None:
    run_dir = pos_run(tmp_path, "brnn", "lstm", 1, 0.9)
    assert run_name(run_dir) == "task~pos/model~brnn/cell~lstm/seed~1"
    assert run_name(tmp_path / "plain") == "plain"
    config = json.loads((run_dir / "config.json").read_text())
    (run_dir / "config.json").write_text(json.dumps({**config, "run": "as/in/config"}))
    table, _ = collect_runs([run_dir])
    assert set(table["run"]) == {"as/in/config"}  # the config's own run path wins


def test_table_has_one_row_per_artifact_and_metric(tmp_path: Path) -> None:
    dirs = [
        pos_run(tmp_path, "basic", "lstm", 1, 0.80),
        pos_run(tmp_path, "brnn", "gru", 2, 0.90, ["table7", "fig10"]),
    ]
    table, curves = collect_runs(dirs)
    assert list(table.columns) == [
        "study",
        "artifact",
        "scale",
        "run",
        "task",
        "model",
        "cell",
        "seed",
        "metric",
        "value",
    ]
    assert len(table) == 3 + 2 * 3  # second run appears under both artifacts
    shared = table[table["run"] == "task~pos/model~brnn/cell~gru/seed~2"]
    assert sorted(shared["artifact"].unique()) == ["fig10", "table7"]
    row = table[
        (table["artifact"] == "table7") & (table["model"] == "basic") & (table["metric"] == "test_accuracy")
    ]
    assert row["value"].tolist() == [pytest.approx(0.80)]
    assert set(table["scale"]) == {"ci"}

    assert list(curves.columns) == [
        "study",
        "artifact",
        "run",
        "task",
        "model",
        "cell",
        "seed",
        "step",
        "epoch",
        "metric",
        "value",
    ]
    assert len(curves) == 4 + 2 * 4
    assert set(curves.loc[curves["artifact"] == "fig10", "model"]) == {"brnn"}


def test_extra_labels_become_columns(tmp_path: Path) -> None:
    adding = {"study": "pru", "task": "adding", "model": "basic", "cell": "pru", "T": 100, "seed": 1}
    d1 = write_run(tmp_path, adding, ["fig2"], {"test_mse": 0.05}, [(1, 1, "dev_mse", 0.1)])
    d2 = write_run(tmp_path, {**adding, "T": 500}, ["fig2"], {"test_mse": 0.12}, None)  # no curve.tsv
    d3 = write_run(
        tmp_path,
        {"study": "pru", "task": "char_lm", "model": "basic", "cell": "lstm", "seed": 1},
        ["table1"],
        {"test_nll": 1.4},
    )
    table, curves = collect_runs([d1, d2, d3])
    assert list(table.columns) == [
        "study",
        "artifact",
        "scale",
        "run",
        "task",
        "model",
        "cell",
        "seed",
        "T",
        "metric",
        "value",
    ]
    assert table.set_index("run").loc["task~adding/model~basic/cell~pru/T~500/seed~1", "T"] == 500
    assert pd.isna(table.loc[table["artifact"] == "table1", "T"]).all()
    assert "T" in curves.columns and len(curves) == 1


def test_missing_metrics_names_the_run_folder(tmp_path: Path) -> None:
    good = pos_run(tmp_path, "basic", "lstm", 1, 0.8)
    bad = write_run(
        tmp_path,
        {"study": "elstm", "task": "pos", "model": "dbrnn", "cell": "elstm", "seed": 3},
        ["table7"],
        None,
    )
    with pytest.raises(RunFolderError, match="model~dbrnn/cell~elstm/seed~3.*metrics.json is missing"):
        collect_runs([good, bad])
    (bad / "metrics.json").write_text("{not json")
    with pytest.raises(RunFolderError, match="metrics.json is unreadable") as err:
        collect_runs([bad])
    assert str(bad) in str(err.value)


def test_write_tables_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dirs = [pos_run(tmp_path, "basic", "lstm", 1, 0.8), pos_run(tmp_path, "brnn", "lstm", 1, 0.9)]
    table_path, curves_path = tmp_path / "out" / "deep" / "runs.csv", tmp_path / "out" / "curves.csv"
    write_tables(dirs, table_path, curves_path)
    assert len(pd.read_csv(table_path)) == 6 and len(pd.read_csv(curves_path)) == 8
    assert sorted(p.name for p in (tmp_path / "out").rglob("*")) == [
        "curves.csv",
        "deep",
        "runs.csv",
    ]  # no temp files left
    umask = os.umask(0)
    os.umask(umask)
    assert table_path.stat().st_mode & 0o777 == 0o666 & ~umask  # usual permissions, not a temp file's 0600

    assert (
        main(["--table", str(tmp_path / "t.csv"), "--curves", str(tmp_path / "c.csv"), *map(str, dirs)]) == 0
    )
    assert pd.read_csv(tmp_path / "t.csv").equals(pd.read_csv(table_path))
    assert (
        main(
            [
                "--table",
                str(tmp_path / "t2.csv"),
                "--curves",
                str(tmp_path / "c2.csv"),
                str(tmp_path / "nowhere"),
            ]
        )
        == 1
    )
    assert "nowhere" in capsys.readouterr().err
    assert not (tmp_path / "t2.csv").exists()


def test_no_runs_gives_empty_tables_with_headers(tmp_path: Path) -> None:
    write_tables([], tmp_path / "t.csv", tmp_path / "c.csv")
    assert list(pd.read_csv(tmp_path / "t.csv").columns)[-2:] == ["metric", "value"]
    assert list(pd.read_csv(tmp_path / "c.csv").columns)[-4:] == ["step", "epoch", "metric", "value"]
