"""The pre-flight check (``python -m rnnrepro.preflight``): its CPU path end to end on a copy of
the project with the `ci` data, and the comparisons it rests on, which must be able to fail."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch

from conftest import run_tool, tool_env
from rnnrepro.preflight.reproduce import identical, largest_difference
from rnnrepro.preflight.table import Row, markdown


def test_identical_runs_pass_and_a_changed_metric_fails_naming_it():
    run = ({"dev_loss": 0.5, "test": {"acc": 0.9}, "steps": 10}, "step\tloss\n1\t0.5\n")
    assert identical(run, run).ok is True
    changed = ({**run[0], "test": {"acc": 0.9 + 1e-7}}, run[1])
    row = identical(run, changed)
    assert row.ok is False and "test.acc" in row.detail
    assert identical(run, (run[0], "step\tloss\n1\t0.4\n")).ok is False  # only the curve differs


def test_largest_difference_is_relative_and_counts_a_missing_metric():
    assert largest_difference({"a": 100.0}, {"a": 101.0}) == (pytest.approx(1 / 101), "a")
    assert largest_difference({"a": 1.0, "b": 2.0}, {"a": 1.0})[1] == "b"
    assert largest_difference({"a": float("nan")}, {"a": float("nan")}) == (0.0, "")


def test_the_table_marks_failures():
    text = markdown([Row("reproduce", "x trained twice", "differ", False, "a | b")])
    assert "| FAILED |" in text and "a / b" in text


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU path; on a GPU the command checks CUDA")
def test_preflight_on_the_cpu_runs_every_check_and_writes_its_file(make_project, tmp_path):
    project = make_project(scale="ci")
    run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", "data", "--config", "scale=ci"],
             project)
    output = tmp_path / "preflight.json"
    result = subprocess.run([sys.executable, "-m", "rnnrepro.preflight", "--output", str(output),
                             "--cost-seconds", "10"], cwd=project, env=tool_env(), capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = json.loads(output.read_text())
    rows = found["rows"]
    assert found["failed"] == 0 and found["table"] in result.stdout
    sections = {row["section"] for row in rows}
    assert sections == {"device", "reproduce", "resume", "pack", "speed: cells", "speed: pack", "cost"}
    assert rows[0]["result"] == "absent"  # says that CUDA is absent
    twice = [row for row in rows if row["check"].endswith("trained twice")]
    assert len(twice) >= 10 and all(row["ok"] for row in twice), twice  # every task type, its data prepared
    resumed = [row for row in rows if row["section"] == "resume"]
    assert [row["ok"] for row in resumed] == [True], resumed
    assert all(row["ok"] for row in rows if row["section"] == "pack")
    plan = next(row for row in rows if row["check"].startswith("paper plan"))
    assert re.fullmatch(r"paper plan: [\d,]+ runs", plan["check"]) and plan["result"].endswith(" h")
    assert found["environment"]["deterministic"] is True
