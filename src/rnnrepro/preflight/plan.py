"""The plans the pre-flight samples from: the studies of a scale, the runs in them, and the
prepared data each needs (the workflow's ``resources/prepared/<key>.json.gz``). A scale's plan is
the one the workflow keeps for the same settings (:func:`rnnrepro.plan.kept.load_plan`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cost.groups import PlannedRun, dataset_key_of, planned_runs, prepared_file
from ..plan.kept import WorkflowPlan, load_plan as load_kept_plan
from ..plan.studies import load_yaml


@dataclass
class Plan:
    """One scale's studies, as the workflow plans them from ``config/``."""

    scale: str
    studies: dict
    config: dict
    kept: WorkflowPlan  # the workflow's plan itself (its jobs: :meth:`WorkflowPlan.jobs`)

    @property
    def runs(self) -> dict[str, PlannedRun]:
        return planned_runs(self.studies)


def load_plan(scale: str, configfile: Path = Path("config/config.yaml"), **overrides: Any) -> Plan:
    """The plan of ``scale`` with every study (run from the repository root)."""
    config = dict(load_yaml(configfile) or {}, scale=scale, **overrides)
    config.pop("studies", None)
    plan = load_kept_plan(config, Path("."))
    return Plan(scale, plan.studies, plan.config, plan)


def data_of(identity: dict[str, Any]) -> tuple[Path | None, bool]:
    """The prepared file a run reads (None: a synthetic task) and whether it is there."""
    key = dataset_key_of(identity)
    if key is None:
        return None, True
    path = prepared_file(key)
    return path, path.exists()


def one_run_per_task(runs: dict[str, PlannedRun]) -> tuple[dict[str, PlannedRun], dict[str, Path]]:
    """The first planned run of every task type whose data is there, and for the task types with
    none, the prepared file they lack."""
    chosen: dict[str, PlannedRun] = {}
    missing: dict[str, Path] = {}
    for run in runs.values():
        task = run.identity["task"]["name"]
        if task in chosen:
            continue
        path, present = data_of(run.identity)
        if present:
            chosen[task] = run
            missing.pop(task, None)
        else:
            missing.setdefault(task, path)
    return chosen, missing
