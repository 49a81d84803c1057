"""Plug-ins: a sixth study written as a contributor would (its YAML, its notebook, its published
CSV, nothing else) trains, aggregates and renders its report through the workflow. A cell of
one's own (one file) joining the grids of the real studies is tested in tests/test_workflow.py,
over that file's whole ci workflow, so that only the new cell's runs train."""
from __future__ import annotations

import sys

import pytest
from conftest import run_tool
from fakes import write_toy_study

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
