"""DVC beside Snakemake: `dvc repro` runs the workflow through its stages, both tools agree
about what is up to date, and results pushed to a DVC remote come back in a fresh clone
without retraining."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from conftest import BIN, run_tool, trained_runs
from fakes import write_toy_study

pytestmark = pytest.mark.slow

GIT_USER = ["-c", "user.name=rnnrepro-test", "-c", "user.email=test@localhost"]


def dvc(*args: str, cwd: Path):
    return run_tool([str(BIN / "dvc"), *args], cwd=cwd)


def snakemake_plan(cwd: Path) -> dict[str, int]:
    """The jobs `snakemake -n all` plans, by rule ({} when there is nothing to be done): the jobs of
    every training rule (runs alone, packs, bundles) as "train", and the runs they train as "runs"."""
    output = dry_run(cwd)
    if "Nothing to be done" in output:
        return {}
    table = output[output.index("Job stats:"):].split("\n\n")[0]
    counts = {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}
    assert counts.get("total"), f"no job table in:\n{output[-3000:]}"
    plan: dict[str, int] = {}
    for rule, n in counts.items():
        if rule != "total":
            name = "train" if rule in ("train", "train_job") else rule
            plan[name] = plan.get(name, 0) + n
    runs = trained_runs(output, cwd)
    return {**plan, "runs": len(runs)} if runs else plan


def planned_runs(cwd: Path) -> set[str]:
    """The run folders the training jobs of `snakemake -n all` train (runs alone and the members of
    packs and bundles)."""
    return trained_runs(dry_run(cwd), cwd)


def dry_run(cwd: Path) -> str:
    """What `snakemake -n all` prints."""
    result = run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", "-n", "all"], cwd=cwd)
    return result.stdout + result.stderr


def commit(cwd: Path, message: str) -> None:
    run_tool(["git", "add", "-A"], cwd=cwd)
    run_tool(["git", *GIT_USER, "commit", "-qm", message], cwd=cwd)


@pytest.fixture(scope="module")
def project(make_project, tmp_path_factory) -> Path:
    """A git repository at the ci scale whose results were made by `dvc repro` and pushed. Its
    one study is the toy of tests/fakes.py (three runs of seconds, a claim, a report): the DVC
    wiring is the same for every study, and the whole workflow of the papers' studies is
    tests/test_workflow.py's."""
    copy = make_project(scale="ci", studies=["toy"])
    write_toy_study(copy)
    run_tool(["git", "init", "-q"], cwd=copy)
    remote = tmp_path_factory.mktemp("dvc-remote")
    dvc("remote", "add", "-d", "storage", str(remote), cwd=copy)
    commit(copy, "project at ci scale")
    repro = dvc("repro", cwd=copy)
    assert "Running stage 'train'" in repro.stdout
    commit(copy, "results of dvc repro")
    dvc("push", cwd=copy)
    return copy


def test_dvc_and_snakemake_agree_after_repro(project):
    assert "Data and pipelines are up to date" in dvc("status", cwd=project).stdout
    assert snakemake_plan(project) == {}


def test_fresh_clone_pulls_results_instead_of_training(project, tmp_path):
    clone = tmp_path / "clone"
    run_tool(["git", "clone", "-q", str(project), str(clone)], cwd=tmp_path)
    assert not (clone / "results").exists()
    dvc("pull", cwd=clone)
    pulled = sorted(p.relative_to(clone) for p in (clone / "results/ci/runs").rglob("model.pt"))
    assert pulled == sorted(p.relative_to(project) for p in (project / "results/ci/runs").rglob("model.pt"))
    assert pulled and all((clone / m).with_name("checkpoint.pt").exists() for m in pulled)
    # the file times dvc pull gives make Snakemake, with no record of them, take inputs for newer
    # than their outputs: tables and reports would render again, never training or data
    assert set(snakemake_plan(clone)) <= {"aggregate", "analysis", "judge", "index", "report", "all"}

    repro = dvc("repro", cwd=clone)
    assert "Running stage" not in repro.stdout, repro.stdout


def test_after_scripts_pull_nothing_that_finished_runs_again(project, tmp_path):
    """scripts/pull.sh: `dvc pull`, and where DVC finds every stage up to date, Snakemake's outputs
    marked up to date in its DAG's order: neither `dvc repro` nor `snakemake -n all` plans a job."""
    clone = tmp_path / "clone"
    run_tool(["git", "clone", "-q", str(project), str(clone)], cwd=tmp_path)
    pulled = run_tool(["bash", "scripts/pull.sh"], cwd=clone)
    assert "every stage is up to date" in pulled.stdout, pulled.stdout + pulled.stderr
    assert snakemake_plan(clone) == {}
    assert "Running stage" not in dvc("repro", cwd=clone).stdout


def test_dvc_metrics_and_plots_show_the_results(project, tmp_path):
    """After `dvc pull` in a fresh clone: the headline metrics and claim counts of every study,
    their diff against the commit before the results, and the plots."""
    clone = tmp_path / "clone"
    run_tool(["git", "clone", "-q", str(project), str(clone)], cwd=tmp_path)
    dvc("pull", cwd=clone)
    shown = dvc("metrics", "show", cwd=clone).stdout
    assert "hold_ours" in shown and "results/ci/metrics/toy.json" in shown
    assert max(len(line) for line in shown.splitlines()) <= 200, shown  # a short row per study, not one of hundreds
    diff = dvc("metrics", "diff", "HEAD~1", "HEAD", cwd=clone).stdout
    assert "hold_published" in diff
    dvc("plots", "show", "-o", str(tmp_path / "plots"), cwd=clone)
    page = (tmp_path / "plots" / "index.html").read_text()
    assert "results/ci/plots/toy.csv" in page and "results/ci/curves/toy.csv" in page


def test_both_see_a_changed_experiment(project):
    """A changed setting of one artifact: DVC sees the study file changed, Snakemake plans that
    artifact's runs, and after the edit is undone neither plans anything."""
    study = project / "config/studies/toy.yaml"
    original = study.read_text()
    try:
        study.write_text(original.replace("T: 8,", "T: 9,"))
        status = dvc("status", cwd=project).stdout
        assert "changed deps" in status and "config/studies" in status
        planned = planned_runs(project)
        # the toy's three runs at T = 9, new run folders (T is in their identity)
        assert len(planned) == 3 and all(run.startswith("task~adding/") for run in planned), planned
        assert not any((project / "results/ci/runs" / run / "metrics.json").exists() for run in planned)
    finally:
        study.write_text(original)
    assert snakemake_plan(project) == {}


def test_a_changed_setting_is_a_dvc_param_in_a_fresh_clone(project, tmp_path):
    """Every study file is a params file of the stages that read it: in a fresh clone, editing one
    setting of a study shows in `dvc params diff`, named by its key, and marks the stages changed."""
    clone = tmp_path / "clone"
    run_tool(["git", "clone", "-q", str(project), str(clone)], cwd=tmp_path)
    assert dvc("params", "diff", cwd=clone).stdout.strip() == ""
    study = clone / "config/studies/pru.yaml"
    study.write_text(study.read_text().replace("batch_size: 50, epochs: 20}", "batch_size: 64, epochs: 20}"))
    diff = dvc("params", "diff", cwd=clone).stdout
    assert re.search(r"config/studies/pru\.yaml\s+defaults\.train\.batch_size\s+50\s+64", diff), diff


def test_every_study_file_is_a_param_of_the_train_and_report_stages(repo):
    import yaml

    studies = {f"config/studies/{p.name}" for p in (repo / "config/studies").glob("*.yaml")}
    stages = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]
    for stage in ("train", "report"):
        params = {next(iter(entry)) for entry in stages[stage]["params"]}
        assert params == studies | {"config/config.yaml"}, stage
