"""The whole workflow end to end at the `ci` scale, in a copy of the repository.

Downloads fall back to the data mirror (skipped, saying so, when there is none), every run
trains, the tables are aggregated and both reports are rendered.
"""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import pytest
from conftest import run_tool

pytestmark = pytest.mark.slow


def snakemake(*args: str, cwd: Path):
    return run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", *args], cwd=cwd)


@pytest.fixture(scope="module")
def project(make_project) -> Path:
    """A copy at the ci scale with the whole workflow run once."""
    copy = make_project(scale="ci")
    snakemake("all", cwd=copy)
    return copy


def runs_table(project: Path, study: str) -> list[dict]:
    with open(project / f"results/tables/{study}/runs.csv") as handle:
        return list(csv.DictReader(handle))


def test_every_run_folder_is_complete(project):
    import yaml
    from rnnrepro.studies import load_workflow_config

    config = yaml.safe_load((project / "config/config.yaml").read_text())
    _, studies = load_workflow_config(config, project / "workflow/schemas", project / "config/studies")
    folders = [p.parent for p in (project / "results/runs").rglob("metrics.json")]
    assert len(folders) == sum(len(study.runs) for study in studies.values())
    for folder in folders:
        assert {p.name for p in folder.iterdir()} == {"config.json", "metrics.json", "curve.tsv", "checkpoint.pt"}


def test_data_came_through_checksums(project):
    assert sorted(p.name for p in (project / "resources/data/ud_en_ewt_v2.0").glob("*.conllu")) == [
        "en-ud-dev.conllu", "en-ud-test.conllu", "en-ud-train.conllu"]
    assert (project / "resources/prepared/ud_en_ewt_v2.0.json.gz").exists()


@pytest.mark.parametrize("study, metric", [("elstm", "test_accuracy"), ("pru", "test_mse")])
def test_reports_show_the_runs_numbers(project, study, metric):
    html = (project / f"results/reports/{study}.html").read_text()
    rows = [r for r in runs_table(project, study) if r["metric"] == metric]
    assert rows, f"no {metric} in the {study} table"
    for row in rows:
        value = float(row["value"])
        shown = f"{100 * value:.2f} %" if metric.endswith("accuracy") else f"{value:.4f}"
        assert shown in html, f"{row['run']}: {metric} {shown} is not in {study}.html"
    assert "published" in html and "<img" in html


def test_second_invocation_has_nothing_to_do(project):
    result = snakemake("-n", "all", cwd=project)
    assert "Nothing to be done" in result.stdout + result.stderr


def test_changed_training_code_reruns_every_run(project):
    """The training code's identity is a param of every run: another identity plans them all
    again (a dry run; the workflow file is restored afterwards)."""
    common = project / "workflow" / "rules" / "common.smk"
    original = common.read_text()
    try:
        common.write_text(original + '\nTRAINING_CODE_IDENTITY = "edited training code"\n')
        result = snakemake("-n", "all", cwd=project)
    finally:
        common.write_text(original)
    output = result.stdout + result.stderr
    planned = re.search(r"^train\s+(\d+)$", output, re.MULTILINE)
    assert planned, output[-2000:]
    assert int(planned.group(1)) == len(list((project / "results" / "runs").rglob("metrics.json")))
    assert "Params have changed" in output
