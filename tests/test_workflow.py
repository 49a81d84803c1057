"""The whole workflow end to end at the `ci` scale, in a copy of the repository: data through
checksums, every run, analyses (also of trained models), tables and every study's report; then
what reruns when (nothing for bookkeeping, only what depends on a retrained run), and a cell of
one's own joining two studies."""
from __future__ import annotations

import csv
import os
import re
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from conftest import jobs_in_plan, planned_trainings, run_tool, trained_runs
from fakes import write_toy_cell, write_toy_study

from rnnrepro.data.fetch import sha256_of
from rnnrepro.data.sources import dataset
from rnnrepro.metrics.formats import format_value
from rnnrepro.plan.studies import load_workflow_config

pytestmark = pytest.mark.slow


def snakemake(*args: str, cwd: Path):
    return run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", *args], cwd=cwd)


def planned(output: str, rule: str) -> int:
    """Jobs of ``rule`` in a dry run's job table; "train" counts every training job: runs alone,
    packs and bundles (rules train and train_job); "pack" and "bundle" the train_job jobs of each
    kind (by their wildcard in the job list)."""
    if rule == "train":
        jobs = dict(re.findall(r"^(train(?:_job)?)\s+(\d+)$", output, re.MULTILINE))
        return sum(int(count) for count in jobs.values())
    if rule in ("pack", "bundle"):
        return len(re.findall(rf"^\s+wildcards: job={rule}_[0-9a-f]{{10}}$", output, re.MULTILINE))
    found = re.search(rf"^{rule}\s+(\d+)$", output, re.MULTILINE)
    return int(found.group(1)) if found else 0


@pytest.fixture(scope="module")
def project(make_project) -> Path:
    """A copy at the ci scale with the whole workflow run once."""
    copy = make_project(scale="ci")
    snakemake("all", cwd=copy)
    return copy


def studies_of(project: Path, **config):
    settings = {**yaml.safe_load((project / "config/config.yaml").read_text()), **config}
    return load_workflow_config(settings, project / "workflow/schemas", project / "config/studies")[1]


def runs_table(project: Path, study: str) -> list[dict]:
    with open(project / f"results/ci/tables/{study}/runs.csv") as handle:
        return list(csv.DictReader(handle))


def test_every_run_folder_is_complete(project):
    expected = {folder for study in studies_of(project).values() for folder in study.runs}
    folders = {p.parent for p in (project / "results/ci/runs").rglob("model.pt")}
    assert {f.relative_to(project / "results/ci/runs").as_posix() for f in folders} == expected
    for folder in folders:
        assert {p.name for p in folder.iterdir()} == {"config.json", "metrics.json", "curve.tsv", "checkpoint.pt",
                                                     "items.npz", "model.pt", "benchmark.tsv"}


def test_data_came_through_checksums(project):
    for key in ("ud_en_ewt_v2.0", "ud_en_ewt_v2.3"):
        for source in dataset(key).files.values():
            path = project / "resources/data" / key / source.name
            if source.sha256:
                assert sha256_of(path) == source.sha256, path
    assert (project / "resources/prepared/ud_en_ewt_v2.0.json.gz").exists()


@pytest.mark.parametrize("study, metric", [("elstm", "test_accuracy"), ("pru", "test_mse"),
                                           ("drnn", "test_accuracy")])
def test_reports_show_our_numbers_beside_the_published_ones(project, study, metric):
    html = (project / f"results/ci/reports/{study}.html").read_text()
    artifact = {"elstm": "table7", "pru": "fig2", "drnn": "table1"}[study]
    rows = [r for r in runs_table(project, study) if r["metric"] == metric and r["artifact"] == artifact]
    assert rows, f"no {metric} in the {study} {artifact} table"
    for row in rows:
        shown = format_value(float(row["value"]), metric)
        assert shown.removesuffix(" %") in html, f"{row['run']}: {metric} {shown} is not in {study}.html"
    with open(project / f"reports/published/{study}_{artifact}.csv") as handle:
        first = next(csv.DictReader(handle))
    value = float(first["value"])
    assert format_value(value, first["metric"]).removesuffix(" %") in html or f"{value:g}" in html
    assert "<img" in html and "On the published numbers" in html


def test_second_invocation_has_nothing_to_do(project):
    result = snakemake("-n", "all", cwd=project)
    assert "Nothing to be done" in result.stdout + result.stderr


def test_changed_training_code_reruns_every_run(project):
    """The identity of the code a run executes is a param of every run: another identity plans
    them all again (a dry run; the workflow file is restored afterwards). Which edit changes
    which runs' identity is tested by test_a_cell_of_ones_own_goes_through_two_studies, below."""
    common = project / "workflow" / "rules" / "common.smk"
    original = common.read_text()
    try:
        common.write_text(original + '\n\ndef run_code(wildcards):\n    return "edited training code"\n')
        result = snakemake("-n", "all", cwd=project)
    finally:
        common.write_text(original)
    output = result.stdout + result.stderr
    jobs = jobs_in_plan(project)
    assert len(trained_runs(output, project)) == len(list((project / "results/ci/runs").rglob("model.pt")))
    # a pack's code identity holds its runs' (common.smk, pack_code)
    assert planned(output, "pack") == len([name for name in jobs if name.startswith("pack_")]) >= 2
    assert "Params have changed" in output


def test_an_artifact_naming_existing_runs_trains_nothing(project):
    """A second artifact asking for runs that exist (the same settings) plans no training: a run
    is keyed by what decides its numbers, not by who asks for it."""
    path = project / "config/studies/pru.yaml"
    original = path.read_text()
    study = yaml.safe_load(original)
    study["artifacts"]["fig2_again"] = {**study["artifacts"]["fig2"], "title": "The same runs, another view"}
    study["scales"]["ci"]["artifacts"]["fig2_again"] = study["scales"]["ci"]["artifacts"]["fig2"]
    try:
        path.write_text(yaml.safe_dump(study, allow_unicode=True))
        result = snakemake("-n", "all", cwd=project)
        output = result.stdout + result.stderr
    finally:
        path.write_text(original)
    assert planned(output, "train") == 0 and planned(output, "report") == 1, output[-2000:]


@contextmanager
def toy_study(project: Path, **extra_artifacts):
    """The toy study of tests/fakes.py written into the project (with ``extra_artifacts``), and
    removed afterwards so the project's own studies are again all there is."""
    write_toy_study(project)
    path = project / "config/studies/toy.yaml"
    study = yaml.safe_load(path.read_text())
    study["artifacts"].update(extra_artifacts)
    path.write_text(yaml.safe_dump(study, allow_unicode=True))
    try:
        yield study
    finally:
        for added in (path, project / "reports/toy.ipynb", project / "reports/published/toy_fig1.csv"):
            added.unlink()


def test_another_scale_lives_apart_and_switching_back_retrains_nothing(project):
    """Results of each scale live under results/<scale>/: a mini run of a (toy) study leaves the
    ci results alone, and back at ci nothing is planned."""
    with toy_study(project):
        snakemake("all", "--config", "scale=mini", "studies=[toy]", cwd=project)
        assert len(list((project / "results/mini/runs").rglob("model.pt"))) == 3
        assert (project / "results/mini/reports/toy.html").exists()
    result = snakemake("-n", "all", cwd=project)
    assert "Nothing to be done" in result.stdout + result.stderr


def test_pru_table4_is_table3s_en_de_rows(project):
    """pru's Table 4 names ``analysis_from: table3``: its job copies Table 3's En→De rows
    (rnnrepro.plan.analysis_from) instead of decoding the same models again."""
    def rows(artifact: str) -> list[dict]:
        with open(project / f"results/ci/analyses/pru/{artifact}.csv") as handle:
            return list(csv.DictReader(handle))

    assert rows("table4") and rows("table4") == [row for row in rows("table3") if row["direction"] == "en-de"]


def test_an_analysis_of_trained_models_reruns_only_with_them(project):
    """An analysis names the runs it reads and gets, as inputs, their bundle's record (the sha256
    of their outputs): it is computed once, untouched by a rerun of the workflow, and recomputed
    when the bundle is trained again; a record rewritten with the same content reruns nothing."""
    weights = {"title": "Trained weights", "reads": [{"artifact": "fig1", "where": {"cell": ["lstm", "pru"]}}],
               "analysis": {"name": "weight_statistics", "parameters": ["weight_hh", "rnn.cell"]}}
    try:
        with toy_study(project, weights=weights):
            snakemake("all", "--config", "studies=[toy]", cwd=project)
            table = list(csv.DictReader(open(project / "results/ci/analyses/toy/weights.csv")))
            assert {r["cell"] for r in table} == {"lstm", "pru"}
            assert {r["metric"] for r in table} >= {"norm"} and all(float(r["value"]) > 0 for r in table)
            again = snakemake("-n", "all", "--config", "studies=[toy]", cwd=project)
            assert "Nothing to be done" in again.stdout + again.stderr
            (lstm,) = [u for u in studies_of(project, studies=["toy"])["toy"].artifacts["weights"].reads
                       if u.labels["cell"] == "lstm"]
            target = read_by_analyses(project, lstm.folder, studies=["toy"])
            assert target.endswith("/trained.json"), target  # the toy's three ci runs share a bundle
            record = project / target
            content = record.read_bytes()
            record.write_bytes(content)  # newer, the same content
            same = snakemake("-n", "all", "--config", "studies=[toy]", cwd=project)
            assert "Nothing to be done" in same.stdout + same.stderr
            snakemake(target, "--forcerun", target, "--config", "studies=[toy]", cwd=project)
            assert record.read_bytes() != content  # the runs' provenance holds the times of the new job
            plan = snakemake("-n", "all", "--config", "studies=[toy]", cwd=project)
            output = plan.stdout + plan.stderr
            assert planned(output, "analysis") == 1 and planned(output, "train") == 0, output[-2000:]
            assert "results/ci/analyses/toy/weights.csv" in output
    finally:
        snakemake("all", cwd=project)  # the index and metrics of every study again, for whatever runs next


def read_by_analyses(project: Path, folder: str, **config) -> str:
    """What the rules reading run ``folder`` ask for (common.smk, trained_output): its model.pt
    when it trains alone, else its pack's or bundle's record."""
    (name,) = [name for name, members in jobs_in_plan(project, **config).items() if folder in members] or [None]
    return f"results/ci/jobs/{name}/trained.json" if name else f"results/ci/runs/{folder}/model.pt"


def test_a_bundled_run_that_lost_its_outputs_names_the_record_to_delete(project):
    """The rules reading a bundled run ask for its bundle's record. When the record exists but the
    run's model.pt does not (deleted by hand), planning stops and names the record; without the
    record, the bundle alone is planned again."""
    bundle, members = min((name, members) for name, members in jobs_in_plan(project).items()
                          if name.startswith("bundle_"))
    model = project / "results/ci/runs" / min(members) / "model.pt"
    record = project / "results/ci/jobs" / bundle / "trained.json"
    kept = {path: (path.read_bytes(), path.stat()) for path in (model, record)}
    try:
        model.unlink()
        stopped = run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", "-n", "all"],
                           cwd=project, check=False)
        assert stopped.returncode != 0
        assert f"delete results/ci/jobs/{bundle}/trained.json" in stopped.stdout + stopped.stderr
        record.unlink()
        plan = snakemake("-n", "runs", cwd=project)
        output = plan.stdout + plan.stderr
        assert planned(output, "train") == planned(output, "bundle") == 1, output[-2000:]
        assert trained_runs(output, project) == members
    finally:
        for path, (content, status) in kept.items():
            path.write_bytes(content)
            os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    again = snakemake("-n", "all", cwd=project)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_the_index_page_lists_every_artifact_with_its_verdicts(project):
    html = (project / "results/ci/reports/index.html").read_text()
    for name, study in studies_of(project).items():
        assert f'href="{name}.html"' in html
        for artifact in study.artifacts:
            assert f'href="{name}.html#{artifact}"' in html, f"{name}.{artifact} is not on the index page"
        report = (project / f"results/ci/reports/{name}.html").read_text()
        assert all(f'id="{artifact}"' in report for artifact in study.artifacts)  # the links land
    assert "holds" in html and "cannot be judged" in html


def test_single_runs_are_weighed_by_the_paired_bootstrap_over_their_test_items(project):
    """At ci every run has one seed: a comparison of two runs on the same test set is decided by
    resampling its items, and its verdict says so."""
    items = project / "results/ci/tables/elstm/items.npz"
    assert items.exists()
    details = "".join((project / f"results/ci/verdicts/{study}.csv").read_text() for study in studies_of(project))
    assert re.search(r"paired bootstrap over \d+ test (sentences|windows|sequences)", details)


def test_lint_asks_only_for_what_the_snakefile_explains(project):
    result = run_tool([sys.executable, "-m", "snakemake", "--lint"], cwd=project, check=False)
    output = result.stdout + result.stderr
    lints = re.findall(r"^    \* (.+?):?$", output, re.MULTILINE)
    assert lints, output[-2000:]
    assert set(lints) == {"Specify a conda environment or container for each rule."}, set(lints)
    assert "`snakemake --lint` asks every rule for a conda environment" in (project / "Snakefile").read_text()


def test_snakemake_report_holds_the_study_reports_and_the_index(project, tmp_path):
    out = tmp_path / "report.html"
    run_tool([sys.executable, "-m", "snakemake", "--report", str(out)], cwd=project)
    text = out.read_text()
    for name in studies_of(project):
        assert f"{name}.html" in text
    assert "index.html" in text and "Study reports" in text


def test_every_training_job_has_a_benchmark_joined_to_its_run(project):
    for study in studies_of(project):
        with open(project / f"results/ci/tables/{study}/provenance.csv") as handle:
            rows = list(csv.DictReader(handle))
        assert rows and all(float(r["cpu_seconds"]) > 0 and float(r["max_rss_mb"]) > 0 for r in rows), study
    folders = list((project / "results/ci/runs").rglob("model.pt"))
    assert all((f.parent / "benchmark.tsv").exists() for f in folders)


def snakemake_in(project, *args: str) -> str:
    """Snakemake over pru and basics with the cell of one's own, ``extra_cells=[mgu]``, in a copy
    of the project with the copy's own package (its src/ first on the path, so that the cell file
    written there, and any edit of the copy's code, is what runs)."""
    result = run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", *args,
                       "--config", "studies=[pru,basics]", "extra_cells=[mgu]"], cwd=project,
                      env={"PYTHONPATH": str(project / "src")})
    return result.stdout + result.stderr


def planned_jobs(project) -> list[set[str]]:
    """The cells of each training job ``snakemake -n`` plans (a run alone, a pack or a bundle)."""
    planned = snakemake_in(project, "-n", "runs")
    # the packs and bundles, once (a subprocess), and only when a pack's or bundle's record is planned
    plan = jobs_in_plan(project, extra_cells=["mgu"], studies=["pru", "basics"]) if "/trained.json" in planned else {}
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", planned):
        cells = {re.search(r"/cell~(\w+)/", run).group(1) for run in planned_trainings(block, project, plan)}
        if cells:
            jobs.append(cells)
    return jobs


def test_a_cell_of_ones_own_goes_through_two_studies(project, tmp_path):
    """One file, cells/mgu.py, and ``extra_cells=[mgu]``, added to a copy of the project after its
    whole ci workflow: the cell trains in every grid of pru and basics that varies the cell, beside
    the paper's cells (whose runs are finished), and appears in both reports,
    while the papers' claims are judged on the papers' cells only. Then a run depends on the code
    it runs: a new file retrains nothing, an edit of a cell's file reruns only the jobs that hold
    that file's cells' runs (at ci, bundles mix cells: their other runs resume from finished
    checkpoints; tests/test_bundles.py checks that at other scales a bundle holds one cell)."""
    copy = tmp_path / "project"
    shutil.copytree(project, copy, symlinks=True)  # with its mtimes and .snakemake's records
    project = copy
    write_toy_cell(project)
    snakemake_in(project, "all")
    trained = sorted(p.parent.relative_to(project / "results/ci/runs").as_posix()
                     for p in (project / "results/ci/runs").glob("*/*/cell~mgu/*/*/model.pt"))
    assert len(trained) == 7, trained  # pru: fig2, fig3, table1, table2, fig4; basics: 2 grids of SRN/LSTM/GRU
    for study in ("pru", "basics"):
        html = (project / f"results/ci/reports/{study}.html").read_text()
        assert "Cells of your own</strong> beside the paper" in html and ">mgu<" in html, study
    verdicts = (project / "results/ci/verdicts/pru.csv").read_text()
    assert "mgu" not in verdicts  # no claim is judged on it

    src = project / "src" / "rnnrepro"
    assert planned_jobs(project) == []
    (src / "cells" / "another_cell.py").write_text('"""A cell file of one\'s own, registering nothing yet."""\n')
    (src / "tasks" / "another_task.py").write_text('"""A task file of one\'s own."""\n')
    assert planned_jobs(project) == []
    for edited, cells in (("gru.py", {"gru"}), ("variants.py", {"pru", "pru_plus", "lstm_plus"}), ("mgu.py", {"mgu"})):
        path = src / "cells" / edited
        original = path.read_text()
        path.write_text(original + "\n# an edit\n")
        jobs = planned_jobs(project)
        assert set().union(*jobs) >= cells and all(job & cells for job in jobs), (edited, jobs)
        path.write_text(original)
