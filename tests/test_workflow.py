"""The whole workflow end to end at the `ci` scale, in a copy of the repository.

Downloads fall back to the data mirror (skipped, saying so, when there is none), every
run trains, the tables are aggregated and both reports are rendered; then Snakemake and
DVC must agree about what is up to date.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent


def run(command: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, **kwargs)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return result


def snakemake(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "snakemake", "--profile", "profiles/local", *args], cwd=cwd)


@pytest.fixture(scope="module")
def project(repo, mirror, tmp_path_factory) -> Path:
    """A copy of the tracked files at the ci scale, with the whole workflow run once."""
    copy = tmp_path_factory.mktemp("project")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        source, target = repo / name, copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.exists():
            shutil.copy2(source, target)
    config = yaml.safe_load((copy / "config/config.yaml").read_text())
    config.update(scale="ci")
    config["data"]["mirror"] = str(mirror)
    (copy / "config/config.yaml").write_text(yaml.safe_dump(config))
    snakemake("all", cwd=copy)
    return copy


def runs_table(project: Path, study: str) -> list[dict]:
    with open(project / f"results/tables/{study}/runs.csv") as handle:
        return list(csv.DictReader(handle))


def test_every_run_folder_is_complete(project):
    folders = [p.parent for p in (project / "results/runs").rglob("metrics.json")]
    assert len(folders) == 6  # elstm: 2 models x 2 cells; pru: 2 cells at T=10
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


def test_dvc_and_snakemake_agree(project):
    """dvc repro records the stages; then both say up to date, and both see a config change."""
    run(["git", "init", "-q"], cwd=project)
    run(["git", "add", "-A"], cwd=project)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"], cwd=project)
    repro = run([str(BIN / "dvc"), "repro"], cwd=project)
    assert "Running stage 'train'" in repro.stdout
    assert "Data and pipelines are up to date" in run([str(BIN / "dvc"), "status"], cwd=project).stdout
    assert "Nothing to be done" in "".join(snakemake("-n", "all", cwd=project).stdout)

    study = project / "config/studies/pru.yaml"
    study.write_text(study.read_text().replace("train_size: 200,", "train_size: 220,"))
    status = run([str(BIN / "dvc"), "status"], cwd=project).stdout
    assert "changed deps" in status and "config/studies" in status
    plan = snakemake("-n", "all", cwd=project).stdout
    assert re.search(r"^train\s+2$", plan, re.M), plan[-2000:]
