"""Serial bundles (rnnrepro.plan.bundles): which runs share a job, and how the cost table counts them.
The SLURM path, preemption included, is in tests/test_slurm.py."""
from __future__ import annotations

import hashlib
import json

import pytest

from rnnrepro.plan.bundles import DEFAULT_SIZE, Bundle, Bundling, plan_bundles


def identity(task: str = "sine_filter", seed: int = 1, cell: str = "lstm") -> dict:
    return {"task": {"name": task}, "model": {"name": "delayed", "hidden_size": 100}, "cell": {"name": cell},
            "train": {}, "seed": seed}


def plan(count: int, task: str = "sine_filter", dataset: str | None = None, prefix: str = "r"):
    runs = {f"{prefix}{i:02d}": identity(task, i) for i in range(count)}
    return runs, {folder: dataset for folder in runs}


def test_without_a_cost_plan_nothing_is_bundled():
    runs, datasets = plan(10)
    assert plan_bundles(runs, datasets, {}, Bundling()) == []


def test_runs_are_cut_by_hours_and_by_size_in_folder_order():
    runs, datasets = plan(10)
    hours = dict.fromkeys(runs, 1.5)  # 1.5 h each: two fit in 4 h, three do not
    bundles = plan_bundles(runs, datasets, hours, Bundling(hours=4, size=32))
    assert [b.members for b in bundles] == [tuple(f"r{i:02d}" for i in range(j, j + 2)) for j in range(0, 10, 2)]
    small = dict.fromkeys(runs, 0.1)
    assert [len(b.members) for b in plan_bundles(runs, datasets, small, Bundling(hours=4, size=4))] == [4, 4, 2]


def test_packed_runs_long_runs_and_lone_runs_stay_out():
    runs, datasets = plan(5)
    hours = {"r00": 9.0, "r01": 0.5, "r02": 0.5, "r03": 0.5, "r04": 0.5}  # r00 alone exceeds 8 h
    bundles = plan_bundles(runs, datasets, hours, Bundling(hours=8), packed=["r03", "r04"])
    assert [b.members for b in bundles] == [("r01", "r02")]
    assert plan_bundles(runs, datasets, {"r01": 0.5}, Bundling(hours=8)) == []  # a bundle of one is no bundle


def test_a_bundle_holds_one_task_type_and_one_dataset():
    runs, datasets = plan(3, "lm", "ptb_word", "a")
    more, more_data = plan(3, "lm", "wikitext2", "b")
    runs.update(more)
    datasets.update(more_data)
    bundles = plan_bundles(runs, datasets, dict.fromkeys(runs, 0.1), Bundling(hours=8))
    assert sorted(b.members for b in bundles) == [("a00", "a01", "a02"), ("b00", "b01", "b02")]


def test_artifacts_tasks_and_cells_share_bundles_only_at_the_scales_that_mix_them():
    runs = {f"{cell}{seed}": identity(seed=seed, cell=cell) for cell in ("gru", "lstm") for seed in (1, 2, 3)}
    runs["adding1"] = identity(task="adding", seed=1)
    runs["lm1"] = identity(task="lm", seed=1)
    runs["other1"] = identity(seed=4)
    datasets = {**dict.fromkeys(runs), "lm1": "ptb_word"}
    artifacts = {**dict.fromkeys(runs, "drnn.fig4"), "gru3": "drnn.fig6", "other1": "pru.fig2"}
    apart = Bundling.from_config({"hours": 8, "size": 4, "unmeasured_hours": {"ci": 0.02}, "mixed": ["mini"]}, "ci")
    assert not apart.mixed
    assert [b.members for b in plan_bundles(runs, datasets, {}, apart, artifacts=artifacts)] == [
        ("gru1", "gru2"), ("lstm1", "lstm2", "lstm3")]  # gru3 alone in its artifact, adding1 in its task
    mixed = Bundling.from_config({"hours": 8, "size": 4, "unmeasured_hours": {"ci": 0.02}, "mixed": ["ci"]}, "ci")
    assert mixed.mixed
    assert [b.members for b in plan_bundles(runs, datasets, {}, mixed, artifacts=artifacts)] == [
        ("adding1", "gru1", "gru2", "gru3"), ("lstm1", "lstm2", "lstm3")]  # lm1 reads a dataset, other1 is
    # another study's: each alone


def test_size_is_one_number_or_one_per_scale():
    per_scale = {"hours": 8, "size": {"ci": 24, "mini": "8"}}
    assert Bundling.from_config(per_scale, "ci").size == 24
    assert Bundling.from_config(per_scale, "mini").size == 8
    assert Bundling.from_config(per_scale, "paper").size == DEFAULT_SIZE
    assert Bundling.from_config({"hours": 8, "size": 3}, "paper").size == 3


def test_hours_zero_or_size_one_turn_bundling_off_and_text_is_read_as_numbers():
    runs, datasets = plan(4)
    hours = dict.fromkeys(runs, 0.1)
    assert plan_bundles(runs, datasets, hours, Bundling(hours=0)) == []
    assert plan_bundles(runs, datasets, hours, Bundling(size=1)) == []
    assert Bundling.from_config({"hours": "2.5", "size": "8"}) == Bundling(hours=2.5, size=8)


def test_names_are_stable_and_distinct():
    assert Bundle(("a", "b")).name == Bundle(("a", "b")).name != Bundle(("a", "c")).name
    assert Bundle(("a", "b")).name.startswith("bundle_")


def test_a_scale_that_assumes_a_runtime_bundles_runs_without_a_cost_plan():
    runs, datasets = plan(5)
    ci = Bundling.from_config({"hours": 4, "size": 32, "unmeasured_hours": {"ci": "0.02"}}, "ci")
    assert ci.unmeasured_hours == 0.02
    assert [b.members for b in plan_bundles(runs, datasets, {}, ci)] == [tuple(sorted(runs))]
    mini = Bundling.from_config({"unmeasured_hours": {"ci": 0.02}}, "mini")
    assert mini.unmeasured_hours is None and plan_bundles(runs, datasets, {}, mini) == []
    measured = {"r00": 5.0}  # a measured run keeps its own runtime: over the 4 hours, alone
    assert [b.members for b in plan_bundles(runs, datasets, measured, ci)] == [("r01", "r02", "r03", "r04")]


def test_every_plan_trains_in_fewer_jobs_and_each_bundle_reads_one_dataset():
    """config/config.yaml: every scale assumes a runtime for a run its cost table lacks (ci and
    mini: seconds to two minutes, a study's artifacts, tasks and cells mixed; paper: the 60 minutes its job
    would ask for alone, one artifact, task and cell a bundle), so that without a cost table runs
    share jobs of at most the scale's ``size`` runs, and a paper bundle asks for what its runs
    would alone."""
    from rnnrepro.cost import DEFAULT_RUNTIME_MINUTES
    from rnnrepro.cost.groups import dataset_key_of
    from rnnrepro.preflight.plan import load_plan

    most_jobs = {"ci": 0.2, "mini": 0.2, "paper": 0.2}  # measured: 21 of 141, 36 of 334, 874 of 5,206
    for scale in ("ci", "mini", "paper"):
        loaded = load_plan(scale)
        planned = loaded.runs  # worked out on each access
        runs = {folder: run.identity for folder, run in planned.items()}
        job_of = {folder: name for name, job in loaded.kept.jobs().items() for folder in job.members}
        bundles: dict[str, list[str]] = {}
        for folder, name in job_of.items():
            if name.startswith("bundle_"):
                bundles.setdefault(name, []).append(folder)
        jobs = len(runs) - len(job_of) + len(set(job_of.values()))
        assert jobs < most_jobs[scale] * len(runs), (scale, jobs)
        mixed = scale in loaded.config["bundling"]["mixed"]
        assert mixed == (scale != "paper")
        size = loaded.config["bundling"]["size"][scale]
        for members in bundles.values():
            assert 2 <= len(members) <= size
            assert len({dataset_key_of(runs[folder]) for folder in members}) == 1
            assert len({planned[folder].artifacts[0].split(".")[0] for folder in members}) == 1
            assert mixed or len({(runs[folder]["task"]["name"], runs[folder]["cell"]["name"]) for folder in members}) == 1
    assert float(loaded.config["bundling"]["unmeasured_hours"]["paper"]) * 60 == DEFAULT_RUNTIME_MINUTES


def test_a_record_holds_each_runs_outputs_digests_and_names_a_missing_one(tmp_path):
    """rnnrepro.plan.jobs: the record is what a pack's or bundle's job writes last, and what the rules reading its
    runs ask for; its content changes exactly when a run's outputs do."""
    from rnnrepro.plan.jobs import RECORDED, record_of, write_record

    folders = [tmp_path / "run0", tmp_path / "run1"]
    for number, folder in enumerate(folders):
        folder.mkdir()
        for name in RECORDED:
            (folder / name).write_bytes(f"{name} of run {number}".encode())
    write_record(tmp_path / "trained.json", folders)
    record = json.loads((tmp_path / "trained.json").read_text())
    assert record == record_of(folders)
    assert record["runs"][str(folders[1])]["model.pt"] == hashlib.sha256(b"model.pt of run 1").hexdigest()
    assert record_of(folders) == record  # the same outputs, the same record
    (folders[0] / "metrics.json").write_text("another metric")
    assert record_of(folders)["runs"][str(folders[0])] != record["runs"][str(folders[0])]
    assert record_of(folders)["runs"][str(folders[1])] == record["runs"][str(folders[1])]
    (folders[1] / "model.pt").unlink()
    with pytest.raises(FileNotFoundError, match="run1/model.pt"):
        record_of(folders)
