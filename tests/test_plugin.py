"""Plug-ins: a sixth study written as a contributor would (its YAML, its notebook, its published
CSV, nothing else) trains, aggregates and renders its report through the workflow; a cell of
one's own (one file) joins the grids of the real studies and shows in their reports."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import BIN, planned_trainings, run_tool
from fakes import write_toy_cell, write_toy_study

pytestmark = pytest.mark.slow


def test_a_sixth_study_plugs_in_with_three_files(make_project):
    project = make_project(scale="ci")
    write_toy_study(project)
    run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", "all", "--config", "studies=[toy]"],
             cwd=project)
    html = (project / "results/ci/reports/toy.html").read_text()
    assert "fig1: Adding task, test MSE per cell" in html and "fig1_view: The same runs, another view" in html
    assert "expected mean squared error is 0.167" in html  # the claim, quoted from the YAML
    assert "On the published numbers</strong> (Choi, Sec. 4.1)" in html
    assert "training set" in html and "200 generated sequences" in html  # the study's choices
    assert len(list((project / "results/ci/runs").rglob("model.pt"))) == 3  # fig1_view trains nothing
    index = (project / "results/ci/reports/index.html").read_text()
    assert 'href="toy.html#fig1"' in index and 'href="toy.html#fig1_view"' in index


def snakemake_in(project, *args: str) -> str:
    """Snakemake in a copy of the project with the copy's own package (its src/ first on the path,
    so that the cell file written there, and any edit of the copy's code, is what runs)."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(project / "src")}
    result = subprocess.run([sys.executable, "-m", "snakemake", "--profile", "profiles/local", *args,
                             "--config", "extra_cells=[mgu]"], cwd=project, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return result.stdout + result.stderr


def planned_jobs(project) -> list[set[str]]:
    """The cells of each training job ``snakemake -n`` plans (a run alone, a pack or a bundle)."""
    planned = snakemake_in(project, "-n", "runs")
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", planned):
        cells = {re.search(r"/cell~(\w+)/", run).group(1)
                 for run in planned_trainings(block, project, extra_cells=["mgu"])}
        if cells:
            jobs.append(cells)
    return jobs


def test_a_cell_of_ones_own_goes_through_two_studies(make_project):
    """One file, cells/mgu.py, and ``extra_cells=[mgu]``: the cell trains in every grid of pru and
    basics that varies the cell, beside the paper's cells, and appears in both reports, while the
    papers' claims are judged on the papers' cells only. Then a run depends on the code it runs:
    a new file retrains nothing, an edit of a cell's file reruns only the jobs that hold that
    file's cells' runs (at ci, bundles mix cells: their other runs resume from finished
    checkpoints; tests/test_bundles.py checks that at other scales a bundle holds one cell)."""
    project = make_project(scale="ci", studies=["pru", "basics"])
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
