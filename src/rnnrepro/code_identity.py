"""The identity of the code a training run executes, so that changing it reruns the runs.

Snakemake reruns a job when a ``params`` value changed since the job ran. The train rule
takes :func:`training_code_identity` as one: a sha256 over the path and bytes of every Python
file that decides a run's numbers (cells, layers, models, tasks, metrics, the training loop
and the registry). Editing any of them (a docstring too) makes every run out of date;
editing reports, aggregation or the workflow does not. Analyses take
:func:`analysis_code_identity` (their own code too). To keep old runs after a change that
cannot alter them, run Snakemake with ``--rerun-triggers mtime input`` once.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
TRAINING_CODE = ("cells", "layers.py", "models", "tasks", "metrics", "train.py", "registry.py")
#: An analysis runs its own code on models built by the training code.
ANALYSIS_CODE = ("analyses", *TRAINING_CODE)


def training_code_files(package: Path = PACKAGE, parts: tuple[str, ...] = TRAINING_CODE) -> list[Path]:
    """The Python files of ``parts`` (default :data:`TRAINING_CODE`) under ``package``, sorted."""
    files: list[Path] = []
    for name in parts:
        path = package / name
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.is_file() else [])
    return files


def training_code_identity(package: Path = PACKAGE, parts: tuple[str, ...] = TRAINING_CODE) -> str:
    """sha256 of the training code (or of ``parts``): relative path and content of each file, in order."""
    digest = hashlib.sha256()
    for path in training_code_files(package, parts):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def analysis_code_identity(package: Path = PACKAGE) -> str:
    """sha256 of the analyses and the training code they build models with."""
    return training_code_identity(package, ANALYSIS_CODE)
