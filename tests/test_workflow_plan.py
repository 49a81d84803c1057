"""The workflow's plan kept between invocations (rnnrepro.plan.kept): read back only while
the settings, studies, schemas and code it comes from are the same, equal to the plan worked out
afresh, and read back without torch."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from rnnrepro.plan.kept import CACHE_FOLDER, KEPT_PLANS, PACKAGE, kept_study, load_plan, plan_digest, work_out_plan
from rnnrepro.plan.studies import plan_digest_of


@pytest.fixture
def root(tmp_path) -> Path:
    """The parts of the project a plan is read from: config, studies, schemas, published numbers."""
    for folder in ("config", "workflow/schemas", "reports/published"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    return tmp_path


def ci_config(root: Path, **settings) -> dict:
    return {**yaml.safe_load((root / "config/config.yaml").read_text()), "scale": "ci", **settings}


def kept(root: Path) -> list[Path]:
    return sorted((root / CACHE_FOLDER).glob("plan-*.pickle"))


def test_a_kept_plan_is_the_plan_worked_out_afresh(root):
    config = ci_config(root)
    first = load_plan(config, root)
    assert len(kept(root)) == 1
    again = load_plan(config, root)
    fresh = work_out_plan(config, root)
    assert again == fresh and first == fresh
    assert again.runs and again.dataset_keys.keys() == again.runs.keys() == again.run_codes.keys()
    assert again.packs and again.analysis_codes


def test_the_digest_follows_settings_studies_schemas_and_code(root, tmp_path_factory):
    package = tmp_path_factory.mktemp("package") / "rnnrepro"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    config = ci_config(root)
    digest = plan_digest(config, root, package)
    assert plan_digest(ci_config(root), root, package) == digest  # the same state, the same digest
    assert plan_digest(ci_config(root, studies=["pru"]), root, package) != digest
    edits = [root / "config/studies/pru.yaml", root / "workflow/schemas/study.schema.yaml",
             root / "reports/published/pru_fig2.csv", package / "cells/lstm.py", package / "tasks/adding.py"]
    for path in edits:
        original = path.read_bytes()
        path.write_bytes(original + b"\n# an edit\n")
        assert plan_digest(config, root, package) != digest, path
        path.write_bytes(original)
    (package / "cells/mine.py").write_text("# a cell of one's own\n")
    assert plan_digest(config, root, package) != digest
    (package / "cells/mine.py").unlink()
    assert plan_digest(config, root, package) == digest


def test_a_plan_that_cannot_be_read_back_is_worked_out_again(root):
    config = ci_config(root)
    plan = load_plan(config, root)
    (path,) = kept(root)
    path.write_bytes(b"not a pickle")
    assert load_plan(config, root) == plan
    assert path.read_bytes() != b"not a pickle"


def test_at_most_a_few_plans_are_kept(root):
    for number in range(KEPT_PLANS + 2):
        load_plan(ci_config(root, studies=["pru"], results=f"results{number}"), root)
    assert len(kept(root)) == KEPT_PLANS


def test_the_plan_job_finds_its_study_among_the_kept_plans_by_digest(root):
    """The workflow's ``plan`` job (workflow/scripts/plan.py) reads the study its parse planned from
    the kept plans, by the digest of the study's plan: another scale's plan of
    the same study is not it, and a digest no kept plan has is None (the job then works it out)."""
    ci = load_plan(ci_config(root), root).studies["pru"]
    mini = load_plan(ci_config(root, scale="mini", studies=["pru"]), root).studies["pru"]
    assert plan_digest_of(ci) != plan_digest_of(mini)
    assert kept_study(root, "pru", plan_digest_of(ci)) == ci
    assert kept_study(root, "pru", plan_digest_of(mini)) == mini
    assert kept_study(root, "pru", "0" * 64) is None and kept_study(root, "no-such-study", plan_digest_of(ci)) is None
    for path in kept(root):
        path.write_bytes(b"not a pickle")
    assert kept_study(root, "pru", plan_digest_of(ci)) is None


def test_a_kept_plan_is_read_back_without_torch(root):
    config = ci_config(root, studies=["pru", "drnn"])
    load_plan(config, root)
    script = ("import sys, yaml; from pathlib import Path; from rnnrepro.plan.kept import load_plan; "
              f"plan = load_plan(yaml.safe_load({yaml.safe_dump(config)!r}), Path({str(root)!r})); "
              "print(len(plan.runs), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(len(load_plan(config, root).runs)), "False"]
