"""Packed training (rnnrepro.packing): small runs trained together as one batched model.

A packed run must end where the same run trained alone ends, to float rounding. The pack runs
the same equations on the same data from the same weights in another order (the reference
loops batched over members; a run alone the fast loops, or oneDNN's LSTM), and training carries
each rounding difference forward, amplified as much as the run's own dynamics amplify it: how
far apart the two end is a property of the run, not of packing (see rnnrepro.packing). So each
number of a packed run must be within

    max(TOLERANCE · |alone|, SPREAD · |alone − alone_loops|)

of the run alone's, where alone_loops is the run alone with ``RNNREPRO_FUSED=0`` (its fast
loops instead of oneDNN: another, equally valid, order of the same computation), i.e. within
what rounding makes of this run anyway. Measured on this project's CPU, after these few epochs,
a packed run is within 2.2e-6 (relative) of the run alone, and the run alone within 2.3e-6 of
alone_loops, so the floor of 1e-4 decides; a packing bug moves numbers far more (measured:
clipping every member by the pack's global gradient norm instead of its own, 4 % on dev_mse;
a mean instead of the sum of the members' losses, 100 %). A pack whose members stopped at one
point resumes exactly; one whose members stopped apart regroups them and ends within that
tolerance, not to the bit. Its checkpoints are runs' own, and the workflow trains a pack as one job.
"""
from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest
from conftest import run_tool

from rnnrepro import packing
from rnnrepro.packing import PackError, train_pack
from rnnrepro.plan.jobs import Pack
from rnnrepro.plan.packs import Packing, pack_key, plan_packs
from rnnrepro.train import TrainingInterrupted, train_run

TOLERANCE = 1e-4  # relative difference always allowed between a packed run's number and the run alone's
SPREAD = 10  # ... and this many times the run alone's own rounding spread (see the module docstring)
RUN_FILES = {"config.json", "curve.tsv", "items.npz", "metrics.json", "model.pt", "checkpoint.pt", "benchmark.tsv"}


def sine_run(seed: int, gamma: float, data_seed: int = 1, **train) -> dict:
    """A run of the drnn sine-filter task small enough for a test (seconds)."""
    return {"task": {"name": "sine_filter", "taps": 5, "T": 12, "train_size": 120, "dev_size": 40, "test_size": 40,
                     "gamma": gamma, "acausality": 2, "data_seed": data_seed},
            "model": {"name": "delayed", "hidden_size": 6, "delay": 2}, "cell": {"name": "lstm"},
            "train": {"optimizer": "adam", "lr": 0.02, "clip": 0.5, "batch_size": 20, "epochs": 3,
                      "checkpoint_every": 4, "log_every": 3, "log_grad_norm": True, **train},
            "seed": seed}


RUNS = [sine_run(1, 0.5), sine_run(2, 1.0, data_seed=2), sine_run(3, 2.0)]


def numbers(folder: Path) -> dict:
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics.pop("provenance")
    return metrics


def curve(folder: Path) -> list[list[str]]:
    return [line.split("\t") for line in (folder / "curve.tsv").read_text().splitlines()[1:]]


def close(packed: float, alone: float, alone_loops: float | None = None) -> bool:
    """Whether a packed run's number is within rounding of the run alone's (module docstring)."""
    spread = SPREAD * abs(alone - alone_loops) if alone_loops is not None else 0.0
    return abs(packed - alone) <= max(TOLERANCE * abs(alone), spread, 1e-9)


def assert_close(packed: dict, alone: dict, where: str, alone_loops: dict | None = None) -> None:
    """Metrics of a packed run against the run alone's (and, for the spread, the run alone with
    RNNREPRO_FUSED=0)."""
    assert packed.keys() == alone.keys(), where
    for name, value in alone.items():
        if isinstance(value, float):
            other = alone_loops[name] if alone_loops is not None else None
            assert close(packed[name], value, other), (where, name, packed[name], value, other)
        else:
            assert packed[name] == value, (where, name)


def train_alone_with_loops(runs: list[dict], folders: list[Path]) -> None:
    """The runs alone with RNNREPRO_FUSED=0: the same computation in another rounding order."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RNNREPRO_FUSED", "0")
        for run, folder in zip(runs, folders):
            train_run(run, folder)


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("alone")
    for i, run in enumerate(RUNS):
        train_run(run, root / f"run{i}")
    return [root / f"run{i}" for i in range(len(RUNS))]


@pytest.fixture(scope="module")
def alone_loops(tmp_path_factory) -> list[Path]:
    folders = [tmp_path_factory.mktemp("alone_loops") / f"run{i}" for i in range(len(RUNS))]
    train_alone_with_loops(RUNS, folders)
    return folders


def test_packed_runs_end_where_the_runs_alone_end(alone, alone_loops, tmp_path):
    folders = [tmp_path / f"run{i}" for i in range(len(RUNS))]
    train_pack(RUNS, folders)
    for packed, single, loops in zip(folders, alone, alone_loops):
        assert {p.name for p in packed.iterdir()} == RUN_FILES
        assert_close(numbers(packed), numbers(single), str(packed), numbers(loops))
        assert json.loads((packed / "config.json").read_text()) == json.loads((single / "config.json").read_text())
        points, reference, other = curve(packed), curve(single), curve(loops)
        assert [p[:3] for p in points] == [p[:3] for p in reference]  # same steps, epochs and metrics
        for p, r, o in zip(points, reference, other):
            assert close(float(p[3]), float(r[3]), float(o[3])), (packed, p, r, o)
        made = json.loads((packed / "metrics.json").read_text())["provenance"]
        assert made["packed_runs"] == len(RUNS)


def test_members_stop_early_on_their_own_dev_metric(tmp_path):
    runs = [sine_run(seed, gamma, epochs=8, patience=1, min_delta=0.002, lr=0.05)
            for seed, gamma in [(1, 0.3), (2, 3.0), (3, 1.0), (4, 5.0)]]
    packed = train_pack(runs, [tmp_path / f"packed{i}" for i in range(len(runs))])
    single = [train_run(run, tmp_path / f"alone{i}") for i, run in enumerate(runs)]
    train_alone_with_loops(runs, [tmp_path / f"loops{i}" for i in range(len(runs))])
    for i, (p, s) in enumerate(zip(packed, single)):
        assert (p["epochs"], p["best_epoch"]) == (s["epochs"], s["best_epoch"]), i
        assert_close(numbers(tmp_path / f"packed{i}"), numbers(tmp_path / f"alone{i}"), f"member {i}",
                     numbers(tmp_path / f"loops{i}"))


def interrupt_at(monkeypatch, step: int) -> None:
    """Make the pack receive SIGTERM (as SLURM sends before preempting) during its ``step``-th step."""
    original = packing.TrainTogether.step
    calls = []

    def step_then_signal(self, batches):
        calls.append(1)
        if len(calls) == step:
            self.stop.received = "SIGTERM"
        return original(self, batches)

    monkeypatch.setattr(packing.TrainTogether, "step", step_then_signal)


def test_an_interrupted_pack_resumes_to_identical_metrics(tmp_path, monkeypatch):
    whole = [tmp_path / f"whole{i}" for i in range(len(RUNS))]
    train_pack(RUNS, whole)
    folders = [tmp_path / f"run{i}" for i in range(len(RUNS))]
    with monkeypatch.context() as patch:
        interrupt_at(patch, 7)
        with pytest.raises(TrainingInterrupted, match="checkpoints written"):
            train_pack(RUNS, folders)
    assert all((f / "checkpoint.pt").exists() and not (f / "metrics.json").exists() for f in folders)
    train_pack(RUNS, folders)
    for resumed, reference in zip(folders, whole):
        assert numbers(resumed) == numbers(reference)
        assert curve(resumed) == curve(reference)


def test_a_pack_whose_members_stopped_apart_regroups_and_ends_within_the_packs_tolerance(alone_loops, tmp_path,
                                                                                         monkeypatch):
    """Members checkpointed at different steps (member 0 at step 7, the others at step 4) do not
    train together again: the two at step 4 form a pack, member 0 one of its own. Each trains in
    another pack than the uninterrupted one (another order of the same computation), so each ends
    within a pack's tolerance of the uninterrupted pack's numbers, not to the bit."""
    whole = [tmp_path / f"whole{i}" for i in range(len(RUNS))]
    train_pack(RUNS, whole)
    early, late = ([tmp_path / f"{name}{i}" for i in range(len(RUNS))] for name in ("early", "late"))
    for folders, step in ((early, 4), (late, 7)):
        with monkeypatch.context() as patch:
            interrupt_at(patch, step)
            with pytest.raises(TrainingInterrupted):
                train_pack(RUNS, folders)
    mixed = [late[0], early[1], early[2]]
    grouped = []
    original = packing.TrainTogether.__post_init__

    def record_members(self):
        grouped.append(len(self.members))
        original(self)

    monkeypatch.setattr(packing.TrainTogether, "__post_init__", record_members)
    train_pack(RUNS, mixed)
    assert sorted(grouped) == [1, 2]
    for i, (resumed, reference) in enumerate(zip(mixed, whole)):
        assert_close(numbers(resumed), numbers(reference), f"member {i} regrouped", numbers(alone_loops[i]))


def test_sigterm_in_the_packs_last_dev_evaluation_checkpoints_every_member(tmp_path, monkeypatch):
    """3 members, 3 epochs: the 7th dev evaluation is the first member's of the last epoch. The
    pack stops with every member's checkpoint written and resumes to an uninterrupted pack's
    numbers, evaluating only (the checkpoints are final)."""
    whole = [tmp_path / f"whole{i}" for i in range(len(RUNS))]
    train_pack(RUNS, whole)
    folders = [tmp_path / f"run{i}" for i in range(len(RUNS))]
    original, calls = packing.evaluate, []

    def evaluate_then_signal(*args, **kwargs):
        calls.append(1)
        if len(calls) == 7:
            os.kill(os.getpid(), signal.SIGTERM)
        return original(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(packing, "evaluate", evaluate_then_signal)
        with pytest.raises(TrainingInterrupted, match="SIGTERM at step 18, in the dev evaluation of epoch 3: "
                                                      "checkpoints written to the 3 run folders"):
            train_pack(RUNS, folders)
    assert all(sorted(p.name for p in f.iterdir()) == ["checkpoint.pt"] for f in folders)
    monkeypatch.setattr(packing.TrainTogether, "step", lambda *args: pytest.fail("trained again"))
    train_pack(RUNS, folders)
    for resumed, reference in zip(folders, whole):
        assert numbers(resumed) == numbers(reference)
        assert curve(resumed) == curve(reference)


def test_a_packed_members_checkpoint_is_a_run_alones(alone, alone_loops, tmp_path, monkeypatch, caplog):
    folders = [tmp_path / f"run{i}" for i in range(len(RUNS))]
    with monkeypatch.context() as patch:
        interrupt_at(patch, 5)
        with pytest.raises(TrainingInterrupted):
            train_pack(RUNS, folders)
    with caplog.at_level("INFO", logger="rnnrepro.train"):
        train_run(RUNS[1], folders[1])  # the member alone, from the pack's checkpoint
    assert "resuming" in caplog.text and "at step 5" in caplog.text
    assert_close(numbers(folders[1]), numbers(alone[1]), "member resumed alone", numbers(alone_loops[1]))


def test_runs_that_differ_beyond_seed_and_data_do_not_pack(tmp_path):
    with pytest.raises(PackError, match=r"run .*other.*train settings differ"):
        train_pack([RUNS[0], sine_run(2, 1.0, lr=0.1)], [tmp_path / "one", tmp_path / "other"])


def test_the_plan_packs_seeds_and_data_parameters_of_one_architecture():
    runs = {f"run{i}": json.loads(json.dumps(run)) for i, run in enumerate(RUNS)}
    runs["wide"] = {**RUNS[0], "model": {**RUNS[0]["model"], "hidden_size": 64}}
    runs["wide_too"] = {**runs["wide"], "seed": 9}
    runs["dropout"] = {**RUNS[0], "model": {**RUNS[0]["model"], "dropout": 0.5}}
    runs["other_cell"] = {**RUNS[0], "cell": {"name": "gru"}}
    runs["stateful"] = {**RUNS[0], "task": {"name": "lm", "stateful": True}, "model": {"name": "basic", "hidden_size": 4}}
    runs["record"] = {**RUNS[0], "train": {**RUNS[0]["train"], "on_nonfinite": "record"}}
    packs = plan_packs(runs, Packing(size=16, max_hidden=16))
    assert packs == [Pack(("run0", "run1", "run2"))]
    assert sorted(plan_packs(runs, Packing(size=16, max_hidden=None)), key=lambda p: p.members[0]) == [
        Pack(("run0", "run1", "run2")), Pack(("wide", "wide_too"))]
    assert plan_packs(runs, Packing(size=0)) == []
    narrow = Packing(size=16, max_hidden=16)
    assert all(pack_key(runs[name], narrow) is None for name in ("dropout", "stateful", "record"))
    assert pack_key(runs["other_cell"], narrow) not in (None, pack_key(runs["run0"], narrow))
    assert pack_key(runs["run0"], Packing(size=16, max_hidden=4)) is None  # 6 units: wider than 4
    many = {f"seed{i:02d}": {**RUNS[0], "seed": i} for i in range(10)}
    four = Packing(size=4, max_hidden=16)
    assert [len(p.members) for p in plan_packs(many, four)] == [3, 4, 3]  # near-equal, never of one
    assert sorted(m for p in plan_packs(many, four) for m in p.members) == sorted(many)


def job_stats(project: Path, *config: str) -> dict[str, int]:
    """Snakemake's dry-run job counts: rule -> jobs."""
    out = run_tool([sys.executable, "-m", "snakemake", "-n", "all", "--config", *config], cwd=project).stdout
    table = out[out.index("Job stats"):].split("\n\n")[0]
    counts: dict[str, int] = {}
    for rule, count in re.findall(r"^(\w+)\s+(\d+)$", table, re.M):
        counts[rule] = counts.get(rule, 0) + int(count)
    return counts


@pytest.mark.slow
def test_the_workflow_trains_a_pack_as_one_job(make_project):
    project = make_project(scale="ci")
    unpacked = job_stats(project, "packing={size: 0}", "bundling={hours: 0}")  # bundles aside: packs alone
    packed = job_stats(project, "bundling={hours: 0}")
    assert "train_job" not in unpacked
    plan = [line for line in run_tool([sys.executable, "-c", PACKS_AT_CI], cwd=project).stdout.split()]
    members, packs = int(plan[0]), int(plan[1])
    assert packs >= 2 and members > packs
    assert packed["train_job"] == packs  # every train_job job a pack: bundles are off
    assert packed["train"] == unpacked["train"] - members


PACKS_AT_CI = """
from pathlib import Path
from rnnrepro.plan.packs import Packing, plan_packs
from rnnrepro.plan.studies import load_workflow_config
config, studies = load_workflow_config({"scale": "ci"}, Path("workflow/schemas"), Path("config/studies"))
runs = {folder: identity for study in studies.values() for folder, identity in study.runs.items()}
packs = plan_packs(runs, Packing.from_config(config["packing"]))
print(sum(len(p.members) for p in packs), len(packs))
"""


def test_the_packed_loop_is_part_of_a_packed_runs_code():
    from rnnrepro.plan.code_identity import PACKED_TRAINING_CODE, code_files, packed_loop_identity

    assert {p.name for p in code_files((PACKED_TRAINING_CODE,))} >= {"packing.py", "train.py"}
    assert len(packed_loop_identity()) == 64
