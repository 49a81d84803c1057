"""Jobs that train several runs: packs and bundles, their names and the record each writes.

A pack (:mod:`rnnrepro.packing`: runs trained together as one batched model) and a bundle
(:mod:`rnnrepro.plan.bundles`: runs trained one after another) are each one Snakemake job, named by
their members (:func:`job_name`), which trains the runs into their own folders and then writes
its record, ``jobs/<name>/trained.json`` (rule ``train_job``, ``workflow/rules/train.smk``). The
workflow declares that record as the job's one output, and the rules that read its runs
(aggregation, analyses) ask for it instead of the runs' files.

The record lists each run's folder and the sha256 of its :data:`RECORDED` outputs, so that it
changes whenever a run's outputs do: a job trained again rewrites them (a run resuming from its
finished checkpoint writes at least new times into its provenance), and Snakemake, which reruns a
reader when an input is newer *and* differs in content from what the reader last read, reruns
every reader. A record rewritten with the same content reruns nothing.

This module imports no torch: the workflow plans with it.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Iterable

from ..atomic import write_json
from ..data.fetch import sha256_of

RECORDED = ("metrics.json", "model.pt")  # model.pt, written last, marks a finished run


def job_name(kind: str, members: tuple[str, ...]) -> str:
    """``<kind>_<10 hex digits of sha256 over the member folders>``: a job of several runs (a pack,
    a bundle), named stably while its members are."""
    return f"{kind}_" + hashlib.sha256("\n".join(members).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class TrainedTogether:
    """Run folders one job trains; ``KIND`` names the job (:func:`job_name`)."""

    KIND: ClassVar[str] = ""
    members: tuple[str, ...]

    @property
    def name(self) -> str:
        """``<KIND>_<10 hex digits>`` (:func:`job_name`)."""
        return job_name(self.KIND, self.members)


class Pack(TrainedTogether):
    """Run folders trained together as one batched model (:mod:`rnnrepro.packing`)."""

    KIND = "pack"


class Bundle(TrainedTogether):
    """Run folders trained one after another (:mod:`rnnrepro.plan.bundles`)."""

    KIND = "bundle"


def record_of(folders: Iterable[str | Path]) -> dict:
    """``{"runs": {folder: {output: sha256}}}`` over the finished runs in ``folders``; a run
    lacking one of :data:`RECORDED` is an error naming the file."""
    runs = {}
    for folder in folders:
        files = {name: Path(folder, name) for name in RECORDED}
        for path in files.values():
            if not path.is_file():
                raise FileNotFoundError(f"{path}: a trained run's output is missing, so its job cannot record it")
        runs[str(folder)] = {name: sha256_of(path) for name, path in files.items()}
    return {"runs": runs}


def write_record(path: str | Path, folders: Iterable[str | Path]) -> None:
    """Write :func:`record_of` ``folders`` to ``path``, atomically."""
    write_json(path, record_of(folders))
