"""Which runs the cost table times together: every run of the plan with the studies and artifacts
that use it, and the configurations that share one timing (:func:`timing_key`: a run's settings without its
seed and without the :data:`NEUTRAL` ones, which change neither a step nor the steps per epoch)."""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..plan.layout import prepared_file  # noqa: F401 (part of this module's interface)
from ..plan.studies import IDENTITY_SECTIONS, settings_digest

#: Settings that change neither the work of one training step nor the number of steps per epoch
#: (per section; ``task`` per task name, ``*`` for every task): configurations differing only in
#: them share one timing. ``epochs`` multiplies each configuration's own steps.
NEUTRAL: dict[str, Any] = {
    "task": {"*": ("data_seed",), "sine_filter": ("gamma", "acausality")},
    "model": ("init_range", "embedding_init", "output_init"),
    "cell": (),
    "train": ("epochs", "lr", "lr_decay", "lr_decay_after", "initial_accumulator", "checkpoint_every",
              "log_every", "patience", "min_delta", "monitor", "stop_at", "on_nonfinite"),
}

@dataclass
class PlannedRun:
    """One run of the plan and who uses it."""

    folder: str
    identity: dict[str, Any]
    studies: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)  # study.artifact

    @property
    def config(self) -> str:
        return settings_digest(self.identity)


def planned_runs(studies: dict) -> dict[str, PlannedRun]:
    """Every run of the studies, in plan order, with the studies and artifacts that use it."""
    runs: dict[str, PlannedRun] = {}
    for name, study in studies.items():
        for folder, identity in study.runs.items():
            run = runs.setdefault(folder, PlannedRun(folder, identity))
            if name not in run.studies:
                run.studies.append(name)
        for artifact, use in study.uses():
            label = f"{name}.{artifact}"
            if label not in runs[use.folder].artifacts:
                runs[use.folder].artifacts.append(label)
    return runs


def timing_key(identity: dict[str, Any]) -> str:
    """A digest of what decides the cost of one step and the steps per epoch: the run's
    settings without its seed and without the :data:`NEUTRAL` ones."""
    kept = {}
    for section in IDENTITY_SECTIONS:
        values = dict(identity.get(section) or {})
        neutral = NEUTRAL[section]
        if isinstance(neutral, dict):
            neutral = (*neutral.get("*", ()), *neutral.get(values.get("name"), ()))
        kept[section] = {key: value for key, value in values.items() if key not in neutral}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def dataset_key_of(identity: dict[str, Any]) -> str | None:
    """Key of the prepared dataset a run's task reads (None: synthetic), as the workflow's."""
    from ..tasks import TASKS

    task = dict(identity["task"])
    return TASKS[task.pop("name")].dataset(**task)




@dataclass
class TimingGroup:
    """Configurations that share one timing: their runs, by configuration, in plan order."""

    key: str
    configs: dict[str, list[PlannedRun]] = field(default_factory=dict)

    @property
    def first(self) -> PlannedRun:
        return next(iter(self.configs.values()))[0]

    @property
    def runs(self) -> list[PlannedRun]:
        return [run for runs in self.configs.values() for run in runs]


def timing_groups(runs: Iterable[PlannedRun]) -> list[TimingGroup]:
    groups: dict[str, TimingGroup] = {}
    for run in runs:
        key = timing_key(run.identity)
        group = groups.setdefault(key, TimingGroup(key))
        group.configs.setdefault(run.config, []).append(run)
    return list(groups.values())


def missing_data(groups: list[TimingGroup]) -> dict[str, list[PlannedRun]]:
    """Prepared files that are missing -> the runs that need them."""
    missing: dict[str, list[PlannedRun]] = defaultdict(list)
    for group in groups:
        key = dataset_key_of(group.first.identity)
        if key and not prepared_file(key).exists():
            missing[str(prepared_file(key))] += group.runs
    return missing
