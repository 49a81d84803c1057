"""The workflow's plan, worked out once for each state of what decides it.

When Snakemake parses the Snakefile, the workflow validates the configuration, expands every
study into its runs (:func:`rnnrepro.plan.studies.load_workflow_config`) and works out, for each run,
the dataset it reads, the identity of the code it executes (:mod:`rnnrepro.plan.code_identity`) and
the pack it trains in (:func:`rnnrepro.plan.packs.plan_packs`). All of that asks the registries of
cells, models and tasks, so it imports torch: with the paper scale's cost table, ``snakemake -n
-q all`` took 10.9 s on a 2-core machine working it out and 7.2 s reading it back.

The plan is a function of the configuration (``config/config.yaml`` with ``--config``), the
study files, the schemas, the published numbers (the claims are checked against them) and the
package's source code, and of nothing else. So
:func:`load_plan` keeps it in ``.snakemake/rnnrepro/plan-<digest>.pickle``, named by the sha256
of all of them (:func:`plan_digest`), and reads it back, without importing torch, while none has
changed. An edit of any of them makes a new digest and a plan
worked out afresh; a file that cannot be read back is worked out again too. The workflow's
``plan`` job reads its study back from the kept plans too (:func:`kept_study`).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import atomic_path
from .bundles import Bundling, plan_bundles
from .code_identity import PACKAGE
from .jobs import Pack, TrainedTogether
from .studies import Study, load_workflow_config, plan_digest_of, runs_of
from .study_metrics import PUBLISHED

log = logging.getLogger("rnnrepro.workflow")

CACHE_FOLDER = Path(".snakemake", "rnnrepro")
#: plans kept, the newest first: another scale or another branch's settings need not be worked out again
KEPT_PLANS = 8


@dataclass
class WorkflowPlan:
    """What the workflow's rules need to know of every run, worked out at parse time."""

    config: dict[str, Any]  # validated, with defaults
    studies: dict[str, Study]
    dataset_keys: dict[str, str | None]  # run folder -> the prepared dataset its task reads (None: synthetic)
    run_codes: dict[str, str]  # run folder -> the identity of the code it executes
    analysis_codes: dict[str, str]  # analysis name -> the identity of its code
    copied_rows: str  # the identity of the code copying an analysis's rows (analysis_from)
    packed_loop: str  # the identity of the packed training loop
    packs: list[tuple[str, ...]]  # the run folders of each pack

    @property
    def runs(self) -> dict[str, dict]:
        """Run folder -> identity (:func:`rnnrepro.plan.studies.runs_of`)."""
        return runs_of(self.studies)

    def first_uses(self) -> dict[str, str]:
        """Run folder -> ``study.artifact`` that uses it first (in study and artifact order)."""
        first: dict[str, str] = {}
        for name, study in self.studies.items():
            for artifact, use in study.uses():
                first.setdefault(use.folder, f"{name}.{artifact}")
        return first

    def jobs(self, runtime_hours: dict[str, float] | None = None) -> dict[str, TrainedTogether]:
        """Name -> pack or bundle, every job that trains several runs: the plan's packs, then
        bundles of the runs that do not pack (:func:`rnnrepro.plan.bundles.plan_bundles`), sized
        from ``runtime_hours`` (run folder -> hours a run asks for, from the cost table) where it
        has them. The one place jobs are planned: the workflow, ``rnnrepro.cost`` and the tests
        call it."""
        packs = [Pack(members) for members in self.packs]
        bundles = plan_bundles(self.runs, self.dataset_keys, runtime_hours or {},
                               Bundling.from_config(self.config["bundling"], self.config["scale"]),
                               packed=[folder for pack in packs for folder in pack.members],
                               artifacts=self.first_uses())
        return {job.name: job for job in (*packs, *bundles)}


def work_out_plan(config: dict, root: Path) -> WorkflowPlan:
    """The plan of ``config`` for the project at ``root`` (imports the registries, and torch)."""
    from .code_identity import (analysis_code_identity, copied_rows_identity, packed_loop_identity,
                                run_code_identity)
    from .packs import Packing, plan_packs
    from ..tasks import TASKS

    config, studies = load_workflow_config(config, root / "workflow" / "schemas", root / "config" / "studies")
    runs = runs_of(studies)

    def dataset_key(identity: dict) -> str | None:
        task = dict(identity["task"])
        return TASKS[task.pop("name")].dataset(**task)

    analyses = {artifact.analysis["name"] for study in studies.values() for artifact in study.artifacts.values()
                if artifact.analysis}
    return WorkflowPlan(
        config=config, studies=studies,
        dataset_keys={folder: dataset_key(identity) for folder, identity in runs.items()},
        run_codes={folder: run_code_identity(identity["task"]["name"], identity["model"]["name"],
                                             identity["cell"]["name"]) for folder, identity in runs.items()},
        analysis_codes={name: analysis_code_identity(name) for name in sorted(analyses)},
        copied_rows=copied_rows_identity(),
        packed_loop=packed_loop_identity(),
        packs=[pack.members for pack in plan_packs(runs, Packing.from_config(config["packing"]))])


def plan_digest(config: dict, root: Path, package: Path = PACKAGE) -> str:
    """sha256 of everything a plan is a function of: ``config`` as given, the study files, the
    schemas, the published numbers (which the studies' claims are checked against) and every
    source file of the ``package`` (and the Python version, whose pickles it reads)."""
    digest = hashlib.sha256(json.dumps([config, sys.version], sort_keys=True, default=str).encode())
    files = [*sorted((root / "config" / "studies").glob("*.yaml")), *sorted((root / "workflow" / "schemas").rglob("*")),
             *sorted((root / PUBLISHED).glob("*.csv")), *sorted(package.rglob("*.py"))]
    for path in files:
        if path.is_file():
            digest.update(f"\0{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def load_plan(config: dict, root: str | Path) -> WorkflowPlan:
    """The plan of ``config`` for the project at ``root``: read back when it was worked out for
    the same digest, else worked out and kept (see the module docstring)."""
    root = Path(root)
    folder = root / CACHE_FOLDER
    path = folder / f"plan-{plan_digest(config, root)[:32]}.pickle"
    try:
        with open(path, "rb") as handle:
            plan = pickle.load(handle)
        if isinstance(plan, WorkflowPlan):
            os.utime(path)  # the newest used, kept longest
            return plan
    except FileNotFoundError:
        pass
    except Exception as error:  # noqa: BLE001 - a damaged or foreign file is worked out again
        log.warning("%s cannot be read back (%s: %s); working the plan out again", path, type(error).__name__, error)
    plan = work_out_plan(config, root)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_bytes(pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL))
    for stale in kept_plans(folder)[KEPT_PLANS:]:
        stale.unlink(missing_ok=True)
    return plan


def kept_plans(folder: Path) -> list[Path]:
    """The plans kept in ``folder``, the newest used first (one another workflow removes meanwhile
    is left out)."""
    found = []
    for path in folder.glob("plan-*.pickle"):
        try:
            found.append((path.stat().st_mtime, path))
        except FileNotFoundError:
            continue
    return [path for _, path in sorted(found, reverse=True)]


def kept_study(root: str | Path, name: str, digest: str) -> Study | None:
    """Study ``name`` as the newest kept plan holding it with plan digest ``digest``
    (:func:`rnnrepro.plan.studies.plan_digest_of`), or None when no kept plan does: how the workflow's
    ``plan`` job finds the study its parse worked out without parsing the workflow again."""
    for path in kept_plans(Path(root) / CACHE_FOLDER):
        try:
            with open(path, "rb") as handle:
                plan = pickle.load(handle)
        except Exception:  # noqa: BLE001 - gone or unreadable: the next one, or None
            continue
        study = plan.studies.get(name) if isinstance(plan, WorkflowPlan) else None
        if study is not None and plan_digest_of(study) == digest:
            return study
    return None
