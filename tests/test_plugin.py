"""A study is a plug-in: a sixth study written as a contributor would (its YAML, its notebook,
its published CSV, nothing else) trains, aggregates and renders its report through the workflow."""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from conftest import run_tool
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

pytestmark = pytest.mark.slow

TOY_STUDY = """\
title: "A toy study: the adding task with two cells"
paper: 001_472c34d02d0facc3
choices:
  training set: 200 generated sequences.
defaults:
  train: {optimizer: adam, lr: 0.01, epochs: 3, batch_size: 20}
artifacts:
  fig1:
    title: Adding task, test MSE per cell
    task: {name: adding, T: 8, train_size: 200, dev_size: 50, test_size: 50}
    model: {name: basic, hidden_size: 6}
    grid: {cell: [lstm, gru]}
    claims:
      - quote: "If the algorithm predicts 1 regardless of the input sequence, the expected mean squared error is 0.167, which is the baseline for this task."
        where: Sec. 4.1
        reading: every cell's test MSE is below the published baseline
        check: {kind: threshold, metric: test_mse, below: "published:baseline_mse"}
  fig1_view:
    title: The same runs, another view
    runs_of: fig1
"""

TOY_PUBLISHED = """\
study,artifact,source,metric,value,note
toy,fig1,"Choi, Sec. 4.1",baseline_mse,0.167,expected MSE of always predicting 1
"""


def toy_notebook(path: Path) -> None:
    parameters = new_code_cell('study = "toy"\nscale = "mini"\nresults = "results"')
    parameters.metadata["tags"] = ["parameters"]
    cells = [new_markdown_cell("# A toy study"), parameters,
             new_code_cell("from rnnrepro.report import setup\n\nreport = setup(study, scale, results)"),
             new_code_cell('report.section("fig1")'),
             new_code_cell("report.rest()\nreport.show_summary()")]
    metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                "language_info": {"name": "python"}}
    nbformat.write(new_notebook(cells=cells, metadata=metadata), path)


def test_a_sixth_study_plugs_in_with_three_files(make_project):
    project = make_project(scale="ci")
    (project / "config/studies/toy.yaml").write_text(TOY_STUDY)
    (project / "reports/published/toy_fig1.csv").write_text(TOY_PUBLISHED)
    toy_notebook(project / "reports/toy.ipynb")
    run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", "all", "--config", "studies=[toy]"],
             cwd=project)
    html = (project / "results/ci/reports/toy.html").read_text()
    assert "fig1: Adding task, test MSE per cell" in html and "fig1_view: The same runs, another view" in html
    assert "expected mean squared error is 0.167" in html  # the claim, quoted from the YAML
    assert "On the published numbers</strong> (Choi, Sec. 4.1)" in html
    assert "training set" in html and "200 generated sequences" in html  # the study's choices
    assert len(list((project / "results/ci/runs").rglob("model.pt"))) == 2  # fig1_view trains nothing
