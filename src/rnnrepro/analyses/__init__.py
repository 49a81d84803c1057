"""Artifacts computed by a function rather than read off training runs: numerical checks,
timings, and analyses of trained models (memory responses, weighted-sum weights, gradients).

An analysis is a function registered in :data:`ANALYSES`, called with its parameters from
the study file (plus ``seed``, and ``runs`` when it reads trained models) and returning a
long-form pandas DataFrame, which the workflow writes to
``results/<scale>/analyses/<study>/<artifact>.csv`` for the report.

An analysis of trained models declares ``runs`` among its parameters; it receives one
:class:`TrainedRun` per run the artifact reads (its own grid's runs and its ``reads:``). An
analysis of data sets declares ``datasets`` (their keys, in the study file) and ``data``: the
workflow makes the prepared files its inputs and passes them by key.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..registry import Registry

ANALYSES: Registry = Registry("analysis")


@dataclass(frozen=True)
class TrainedRun:
    """A finished run an analysis reads: its folder, its labels in the artifact, its identity."""

    folder: Path
    labels: dict[str, Any]
    identity: dict[str, Any]
    data: Path | None = None  # the prepared dataset its task reads, if any

    def load(self):
        """(task, model) of the run, the model trained and in eval mode on the CPU."""
        from ..train import MODEL, load_trained

        return load_trained(self.folder / MODEL, self.data)


def trained_runs(runs: list[dict], data: list[str | Path]) -> list[TrainedRun]:
    """TrainedRun objects from the workflow's description of the runs and dataset files."""
    from ..tasks import TASKS

    by_key = {Path(path).name.removesuffix(".json.gz"): Path(path) for path in data}
    result = []
    for run in runs:
        task = dict(run["identity"]["task"])
        key = TASKS[task.pop("name")].dataset(**task)
        result.append(TrainedRun(Path(run["folder"]), dict(run["labels"]), run["identity"], by_key.get(key)))
    return result


def run_analysis(params: dict, out_csv: str | Path, seed: int = 0, runs: list[dict] | None = None,
                 data: list[str | Path] | None = None) -> None:
    """Run the analysis ``params["name"]`` with the other params and write its table atomically.

    torch's global RNG starts from ``seed`` for the analysis (and is restored after it), so that
    what an analysis draws without a generator of its own is the seed's too, not the process's."""
    import torch

    from ..atomic import atomic_path

    params = dict(params)
    function = ANALYSES[params.pop("name")]
    accepted = inspect.signature(function).parameters
    if "runs" in accepted:
        params["runs"] = trained_runs(runs or [], data or [])
    if "data" in accepted:  # the prepared datasets it reads, by key
        params["data"] = {Path(path).name.removesuffix(".json.gz"): str(path) for path in data or []}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        table = function(seed=seed, **params)
    with atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)


from ..registry import import_all  # noqa: E402

import_all(__name__, __path__)  # every module of this folder registers its analyses
