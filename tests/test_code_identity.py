"""The training-code identity: changes with the code that decides a run's numbers, only with it."""
from __future__ import annotations

import shutil
from pathlib import Path

from rnnrepro import code_identity
from rnnrepro.code_identity import training_code_files, training_code_identity


def copy_of_package(tmp_path: Path) -> Path:
    copy = tmp_path / "rnnrepro"
    shutil.copytree(code_identity.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_identity_covers_cells_models_tasks_and_training_loop():
    names = {path.relative_to(code_identity.PACKAGE).as_posix() for path in training_code_files()}
    assert {"cells/lstm_loop.py", "layers.py", "train.py", "models/basic.py", "tasks/pos.py",
            "metrics/conll18.py", "registry.py"} <= names
    assert not any(name.startswith(("report", "aggregate", "studies")) for name in names)


def test_identity_changes_with_training_code_only(tmp_path):
    package = copy_of_package(tmp_path)
    before = training_code_identity(package)
    assert training_code_identity(package) == before  # stable
    report = package / "report" / "render.py"
    report.write_text(report.read_text() + "\n# a report edit\n")
    assert training_code_identity(package) == before
    cell = package / "cells" / "lstm.py"
    cell.write_text(cell.read_text() + "\n# a cell edit\n")
    assert training_code_identity(package) != before


def test_dvc_train_stage_depends_on_exactly_the_training_code(repo):
    """dvc.yaml's train deps under src/ are the files of the training-code identity, so DVC and
    Snakemake rerun training for the same code changes."""
    import yaml

    from rnnrepro.code_identity import TRAINING_CODE

    stages = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]
    code = {dep for dep in stages["train"]["deps"] if dep.startswith("src/")}
    assert code == {f"src/rnnrepro/{name}" for name in TRAINING_CODE}
