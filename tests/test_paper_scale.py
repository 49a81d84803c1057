"""The `paper` scale is proven before anyone pays for a GPU: the plan is quick, and every distinct
paper-scale configuration builds and takes one training step on the CPU, so a cluster user never
meets a shape error or an unknown key after waiting in the queue."""
from __future__ import annotations

import json
import sys
from functools import cache, lru_cache
from pathlib import Path

import pytest
import torch
from conftest import REPO, find_mirror, planned_trainings, run_tool

from rnnrepro.data.fetch import fetch_dataset
from rnnrepro.data.prepared import prepare_dataset
from rnnrepro.plan.studies import load_workflow_config
from rnnrepro.tasks import TASKS, build_task
from rnnrepro.train import (TrainConfig, build_model_for, epoch_generator, make_optimizer, seed_everything,
                            train_step)

#: Task parameters that change values, never keys or the code path: configurations differing
#: only in them (and in the seed) are one configuration here, the first in the study file's
#: order (for treebanks: English, the only one whose training file every machine has).
VALUE_ONLY = {"data_seed", "gamma", "treebank"}


def paper_configurations() -> dict[str, dict]:
    """Distinct paper-scale run configurations (seeds and value-only parameters merged), by a
    readable name."""
    _, studies = load_workflow_config({"scale": "paper"}, REPO / "workflow/schemas", REPO / "config/studies")
    found: dict[str, dict] = {}
    for study in studies.values():
        for folder, identity in study.runs.items():
            task = {k: v for k, v in identity["task"].items() if k not in VALUE_ONLY}
            key = json.dumps({**identity, "task": task, "seed": 0}, sort_keys=True)
            found.setdefault(key, {"name": f"{study.name}:{folder.rsplit('/', 1)[0]}", "identity": identity})
    return {item["name"]: item["identity"] for item in found.values()}


CONFIGURATIONS = paper_configurations()


@cache
def prepared(key: str, root: str) -> Path:
    """The prepared dataset ``key`` (fetched from the mirror once per session)."""
    raw, out = Path(root) / "raw" / key, Path(root) / "prepared" / f"{key}.json.gz"
    if not out.exists():
        fetch_dataset(key, raw, mirror=find_mirror(), timeout=1, progress=False)
        prepare_dataset(key, raw, out)
    return out


@pytest.fixture(scope="session")
def data_root(tmp_path_factory, mirror) -> Path:
    return tmp_path_factory.mktemp("paper-data")


def task_json(name: str) -> str:
    return json.dumps(CONFIGURATIONS[name]["task"], sort_keys=True)


#: Examples in the batch of the step: the model, its layers' shapes and the optimizer are the
#: configuration's, only the batch dimension is smaller (a step at the paper's batch sizes, up to
#: 300, took most of this file's time: 353 s of the suite's worker time).
STEP_BATCH = 2


def by_first_batch(name: str) -> tuple:
    """Configurations that share a task and seed next to one another (:func:`first_batch`)."""
    return task_json(name), CONFIGURATIONS[name]["seed"], name


@lru_cache(maxsize=1)  # the configurations run grouped by task (below); a task can hold a whole corpus
def first_batch(task: str, seed: int, batch_size: int, root: str):
    """The task of a configuration (``task``: its identity as JSON) and the first batch of its
    first epoch, built once per task identity, seed and batch size: neither depends on the model
    or the cell (the paper plan's 284 configurations have 42 distinct tasks, and building a PTB
    task and its epoch takes seconds)."""
    params = json.loads(task)
    name = params.pop("name")
    key = TASKS[name].dataset(**params)
    built = build_task(name, data=prepared(key, root) if key else None, **params)
    return built, built.batches("train", batch_size, epoch_generator(seed, 0))[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONFIGURATIONS, key=by_first_batch))
def test_configuration_takes_a_training_step(name, data_root):
    identity = CONFIGURATIONS[name]
    cfg = TrainConfig(**identity["train"])
    task, batch = first_batch(task_json(name), identity["seed"], min(cfg.batch_size, STEP_BATCH), str(data_root))
    seed_everything(identity["seed"])
    model = build_model_for(identity, task)
    loss, _ = train_step(model, task, batch, make_optimizer(model.parameters(), cfg), cfg)
    assert torch.isfinite(torch.tensor(loss)), f"{name}: loss {loss}"


@pytest.mark.slow
def test_the_paper_plan_has_every_run(make_project):
    """`snakemake -n all` at the paper scale plans every run exactly once, alone or as a member
    of a pack (whose record, the job's output, stands for its members), in a fresh copy (its time
    is measured by benchmarks/bench_plan.py)."""
    project = make_project(scale="paper")
    result = run_tool([sys.executable, "-m", "snakemake", "-n", "all"], cwd=project)
    _, studies = load_workflow_config({"scale": "paper"}, REPO / "workflow/schemas", REPO / "config/studies")
    runs = {folder for study in studies.values() for folder in study.runs}
    planned = planned_trainings(result.stdout, project)
    assert "/trained.json" in result.stdout  # packs at the paper scale too
    assert len(planned) == len(set(planned)), "a run is planned by two jobs"
    assert set(planned) == runs
