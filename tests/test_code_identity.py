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
    (package / "report.py").write_text((package / "report.py").read_text() + "\n# a report edit\n")
    assert training_code_identity(package) == before
    cell = package / "cells" / "lstm.py"
    cell.write_text(cell.read_text() + "\n# a cell edit\n")
    assert training_code_identity(package) != before
