"""The cost table (python -m rnnrepro.cost, the `cost` rule) and the train jobs' resources from it.

In a copy of the project at the ci scale: the command stops naming the prepared data it lacks;
once the data rule has run it writes results/ci/cost.csv with one row per run of the plan,
steps and seconds that add up, and a dry run then shows every train job asking for the runtime
and memory that file gives it. The resource functions are unit-tested on a hand-written row,
and a dry run with a hand-written cost.csv shows them in a train job's resources."""
from __future__ import annotations

import csv
import math
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from conftest import REPO, jobs_in_plan, run_tool, tool_env, workflow_timeout

from rnnrepro import cost
from rnnrepro.cost.resources import runtime_hours
from rnnrepro.plan.layout import Layout
from rnnrepro.plan.studies import load_workflow_config, settings_digest

STUDY = "drnn"  # synthetic tasks (reversal, sine filter: many configurations sharing timings) and one treebank
OWN_FILES = ("workflow/rules/cost.smk",)


def with_own_files(project: Path) -> Path:
    """The copy with this feature's files even before they are committed (the copy takes tracked files)."""
    for name in OWN_FILES:
        if not (project / name).exists():
            shutil.copy2(REPO / name, project / name)
    return project


def cost_cli(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rnnrepro.cost", *args], cwd=project, env=tool_env(),
                          capture_output=True, text=True, timeout=workflow_timeout())


def snakemake(project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return run_tool([sys.executable, "-m", "snakemake", "--profile", "profiles/local", *args], cwd=project,
                    check=check)


def plan_of(project: Path, scale: str = "ci", studies: list[str] | None = None) -> dict[str, dict]:
    settings = {**yaml.safe_load((project / "config/config.yaml").read_text()), "scale": scale,
                "studies": studies or [STUDY]}
    _, loaded = load_workflow_config(settings, project / "workflow/schemas", project / "config/studies")
    return {folder: identity for study in loaded.values() for folder, identity in study.runs.items()}


def train_jobs(dry_run: str) -> dict[str, dict[str, str]]:
    """run folder -> resources (name -> value) of every train job a dry run lists."""
    jobs = {}
    for block in re.split(r"\n(?=\[[^\n]*\]\nrule )", dry_run):
        if not re.search(r"^rule train:", block, re.MULTILINE):
            continue
        run = re.search(r"wildcards: run=(\S+)", block).group(1)
        line = re.search(r"resources: (.*)", block).group(1)
        jobs[run] = dict(part.split("=", 1) for part in line.split(", "))
    return jobs


@pytest.fixture(scope="module")
def measured(make_project):
    """A ci copy of the project (drnn only) where the cost command first lacks the data, then,
    after the data rule, writes results/ci/cost.csv."""
    project = with_own_files(make_project(scale="ci", studies=[STUDY]))
    without_data = cost_cli(project, "--scale", "ci", "--studies", STUDY)
    snakemake(project, "data", "--config", "scale=ci", f"studies=[{STUDY}]")
    result = cost_cli(project, "--scale", "ci", "--studies", STUDY, "--steps", "2")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return project, without_data, result


def rows_of(project: Path) -> list[dict[str, str]]:
    with open(project / Layout("results", "ci").cost(), newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_missing_prepared_data_stops_naming_the_file_and_the_command(measured):
    _, without_data, _ = measured
    assert without_data.returncode == 2, without_data.stderr
    assert "resources/prepared/ud_en_ewt_v2.3.json.gz" in without_data.stderr
    assert "snakemake --profile profiles/local data --config scale=ci 'studies=[drnn]'" in without_data.stderr


@pytest.mark.slow
def test_one_row_per_run_with_steps_and_seconds_that_add_up(measured):
    project, _, result = measured
    rows = rows_of(project)
    planned = plan_of(project)
    assert [row["run"] for row in rows] == list(planned) and len(rows) == len(planned)
    steps_of_config = defaultdict(set)
    for row in rows:
        identity = planned[row["run"]]
        assert row["config"] == settings_digest(identity)
        assert row["study"] == STUDY and row["device"] == "cpu" and row["threads"] == "1"
        steps, epochs, per_step = int(row["steps"]), int(row["epochs"]), float(row["seconds_per_step"])
        assert steps > 0 and per_step > 0 and float(row["eval_seconds"]) > 0 and float(row["peak_mem_mb"]) >= 0
        assert epochs == identity["train"].get("epochs", 1) and steps == epochs * int(row["steps_per_epoch"])
        assert int(row["evaluations"]) == epochs + 2
        expected = (steps * per_step + int(row["evaluations"]) * float(row["eval_seconds"])) / 3600
        assert float(row["estimated_hours"]) == pytest.approx(expected, rel=1e-5)
        steps_of_config[row["config"]].add(row["steps"])
    assert all(len(steps) == 1 for steps in steps_of_config.values())
    # the table: every artifact with runs, the study, the total
    for artifact in {a for row in rows for a in row["artifacts"].split(";")}:
        assert re.search(rf"^{STUDY}\s+{artifact.split('.', 1)[1]}\s+\d", result.stdout, re.MULTILINE), result.stdout
    total = re.search(r"^total\s+(\d+)\s+([\d.,]+)", result.stdout, re.MULTILINE)
    assert total and int(total.group(1)) == len(rows)
    assert float(total.group(2).replace(",", "")) == pytest.approx(sum(float(r["estimated_hours"]) for r in rows),
                                                                  abs=0.06)


@pytest.mark.slow
def test_steps_per_epoch_are_the_training_loops(measured):
    """One run of each task: batches per epoch as rnnrepro.train counts them, on its prepared data."""
    from rnnrepro.train import TrainConfig, build_run, epoch_generator

    project, _, _ = measured
    planned = plan_of(project)
    seen = set()
    for row in rows_of(project):
        if row["task"] in seen:
            continue
        seen.add(row["task"])
        identity = planned[row["run"]]
        key = cost.dataset_key_of(identity)
        task, _ = build_run(identity, cost.prepared_file(key, project) if key else None)
        cfg = TrainConfig(**identity["train"])
        assert int(row["steps_per_epoch"]) == len(task.batches("train", cfg.batch_size,
                                                               epoch_generator(identity["seed"], 0)))
    assert seen >= {"reversal", "sine_filter", "pos_chars"}


@pytest.mark.slow
def test_configurations_differing_only_in_data_values_share_one_timing(measured):
    project, _, _ = measured
    rows = rows_of(project)
    sine = [row for row in rows if row["task"] == "sine_filter"]
    assert len({row["config"] for row in sine}) > len({row["timed_as"] for row in sine}) >= 2
    by_timing = defaultdict(set)
    for row in sine:
        by_timing[row["timed_as"]].add((row["model"], row["seconds_per_step"], row["peak_mem_mb"]))
    assert all(len(values) == 1 for values in by_timing.values())
    timed = {row["config"] for row in rows}
    assert all(row["timed_as"] in timed for row in rows)


@pytest.mark.slow
def test_resume_measures_nothing_again(measured):
    project, _, _ = measured
    before = rows_of(project)
    again = cost_cli(project, "--scale", "ci", "--studies", STUDY, "--resume", "--margin", "2")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "measured before" in again.stderr and "s/step x" not in again.stderr, again.stderr
    after = rows_of(project)
    assert [{k: v for k, v in row.items() if k != "margin"} for row in after] == \
        [{k: v for k, v in row.items() if k != "margin"} for row in before]
    assert {row["margin"] for row in after} == {"2.0"}


@pytest.mark.slow
def test_a_dry_run_asks_each_train_job_for_what_cost_csv_gives(measured):
    """Bundles aside, each run's job asks for its row's runtime and memory; with bundles (the
    default), each bundle asks for the sum of its runs' runtimes and its largest run's memory,
    and every costed run trains in a run's job or in exactly one bundle."""
    project, _, _ = measured
    rows = {row["run"]: row for row in rows_of(project)}
    config = ["--config", "scale=ci", f"studies=[{STUDY}]"]
    jobs = train_jobs(snakemake(project, "-n", "runs", *config, "bundling={hours: 0}").stdout)
    assert set(jobs) == set(rows)
    for run, resources in jobs.items():
        assert int(resources["runtime"]) == cost.runtime_minutes(rows[run]), (run, resources)
        assert int(resources["mem_mb"]) == cost.memory_mb(rows[run]), (run, resources)

    dry = snakemake(project, "-n", "runs", *config).stdout
    alone, bundles = train_jobs(dry), bundle_jobs(dry, project, rows)
    assert bundles, "no bundle in a costed plan with bundling on"
    members = [run for runs, _ in bundles for run in runs]
    assert sorted(members + list(alone)) == sorted(rows)
    for runs, resources in bundles:
        assert int(resources["runtime"]) == cost.job_runtime_minutes([rows[run] for run in runs]), resources
        assert int(resources["mem_mb"]) == max(cost.memory_mb(rows[run]) for run in runs), resources


def bundle_jobs(dry_run: str, project: Path, rows: dict[str, dict]) -> list[tuple[set[str], dict[str, str]]]:
    """(run folders, resources) of every bundle job a dry run lists (its members: the plan's bundle
    of that name, sized from the cost rows)."""
    members = jobs_in_plan(project, runtime_hours(rows), scale="ci", studies=[STUDY])
    jobs = []
    for block in re.split(r"\n(?=\[[^\n]*\]\nrule )", dry_run):
        found = re.search(r"wildcards: job=(bundle_\S+)", block)
        if not re.search(r"^rule train_job:", block, re.MULTILINE) or not found:
            continue
        name = found.group(1)
        line = re.search(r"resources: (.*)", block).group(1)
        jobs.append((members[name], dict(part.split("=", 1) for part in line.split(", "))))
    return jobs


def test_resources_from_a_cost_row():
    row = {"estimated_hours": "2.0", "host_mem_mb": "1000", "peak_mem_mb": "1000"}
    assert cost.runtime_minutes(row) == math.ceil(2.0 * 60 * 1.5 + 10) == 190
    assert cost.memory_mb(row) == math.ceil(1000 * 1.5 + 2048) == 3548
    assert cost.runtime_minutes({**row, "estimated_hours": "0.001"}) == 11  # 0.09 min + 10, rounded up
    assert cost.runtime_minutes({**row, "margin": "2"}) == 250 and cost.memory_mb({**row, "margin": "2"}) == 4048


def test_load_costs_reads_rows_by_run(tmp_path):
    assert cost.load_costs(tmp_path / "missing.csv") == {}
    path = tmp_path / "cost.csv"
    path.write_text("run,estimated_hours,host_mem_mb\nrun/a,0.5,10\nrun/b,3,200\n")
    costs = cost.load_costs(path)
    assert set(costs) == {"run/a", "run/b"}
    assert [cost.runtime_minutes(costs[r]) for r in ("run/a", "run/b")] == [55, 280]
    assert [cost.memory_mb(costs[r]) for r in ("run/a", "run/b")] == [2063, 2348]


def test_train_resources_of_the_workflow(tmp_path):
    """What cost.smk gives the train rule: per run from the file, the defaults for a run it lacks,
    and no mem_mb at all without a file."""
    from types import SimpleNamespace

    absent = cost.TrainResources(tmp_path / "cost.csv")
    assert absent.runtime(SimpleNamespace(run="run/a")) == 60 and absent.memory == {}
    assert absent.lacking(["run/a"]) is None
    (tmp_path / "cost.csv").write_text("run,estimated_hours,host_mem_mb\nrun/a,2.0,1000\n")
    present = cost.TrainResources(tmp_path / "cost.csv")
    assert (present.runtime(SimpleNamespace(run="run/a")), present.mem_mb(SimpleNamespace(run="run/a"))) == (190, 3548)
    assert (present.runtime(SimpleNamespace(run="run/b")), present.mem_mb(SimpleNamespace(run="run/b"))) == \
        (cost.DEFAULT_RUNTIME_MINUTES, cost.DEFAULT_MEM_MB)
    assert present.memory["mem_mb"](SimpleNamespace(run="run/a")) == 3548
    assert "no row for 1 of the 2 planned runs" in present.lacking(["run/a", "run/b"])
    assert present.lacking(["run/a"]) is None


def test_timing_key_ignores_only_what_changes_no_step():
    base = {"task": {"name": "sine_filter", "T": 50, "gamma": 0.5, "acausality": 1, "data_seed": 1},
            "model": {"name": "delayed", "hidden_size": 100, "delay": 5, "init_range": 0.1},
            "cell": {"name": "lstm"}, "train": {"epochs": 10, "lr": 0.01, "batch_size": 100}, "seed": 1}

    def changed(section: str, **values) -> dict:
        return {**base, section: {**base[section], **values}}

    key = cost.timing_key(base)
    for same in (changed("task", gamma=2.0, acausality=7, data_seed=3), changed("train", epochs=1000, lr=1.0),
                 changed("model", init_range=0.5), {**base, "seed": 9}):
        assert cost.timing_key(same) == key
    for other in (changed("task", T=30), changed("model", delay=10), changed("model", hidden_size=70),
                  changed("train", batch_size=20), changed("cell", name="gru"),
                  changed("task", name="reversal")):
        assert cost.timing_key(other) != key
    # gamma is a data value of the sine filter only
    assert cost.timing_key(changed("task", name="other", gamma=3.0)) != cost.timing_key(changed("task", name="other"))


@pytest.mark.slow
def test_hand_written_cost_file_sizes_train_jobs_and_only_them(make_project):
    project = with_own_files(make_project(scale="ci", studies=["pru"]))
    planned = list(plan_of(project, studies=["pru"]))
    config = ["--config", "scale=ci", "studies=[pru]", "bundling={hours: 0}"]  # each run a train job of its own
    default = train_jobs(snakemake(project, "-n", "runs", *config).stdout)
    assert set(default) == set(planned)
    assert all(r["runtime"] == "60" and "mem_mb" not in r for r in default.values()), default
    costed, other = planned[0], planned[1]
    path = project / Layout("results", "ci").cost()
    path.parent.mkdir(parents=True)
    path.write_text(f"run,estimated_hours,host_mem_mb\n{costed},2.0,1000\n")
    dry = snakemake(project, "-n", "runs", *config)
    jobs = train_jobs(dry.stdout)
    assert (jobs[costed]["runtime"], jobs[costed]["mem_mb"]) == ("190", "3548")
    assert (jobs[other]["runtime"], jobs[other]["mem_mb"]) == ("60", str(cost.DEFAULT_MEM_MB))
    assert f"has no row for {len(planned) - 1} of the {len(planned)} planned runs" in dry.stderr
    # the cost rule is never part of `all`, and is what `snakemake cost` makes
    assert not re.search(r"^(local)?rule cost:", snakemake(project, "-n", "all", *config).stdout, re.MULTILINE)
    path.unlink()
    making = snakemake(project, "-n", "cost", *config).stdout
    assert re.search(r"^(local)?rule cost:", making, re.MULTILINE) and "results/ci/cost.csv" in making


def test_task_and_model_are_built_as_training_builds_them(repo):
    """The cost command builds the task and then the model (to reuse a task across configurations);
    on the synthetic tasks of the ci plan they equal rnnrepro.train.build_run's."""
    from rnnrepro.train import build_run

    planned = plan_of(repo, studies=["drnn", "pru"])
    identities = {}
    for identity in planned.values():
        if cost.dataset_key_of(identity) is None:
            identities.setdefault((identity["task"]["name"], identity["model"]["name"]), identity)
    assert len(identities) >= 4, identities.keys()
    for identity in identities.values():
        task, model = build_run(identity, None)
        built = cost.build_task_for(identity, None)
        again = cost.build_model_for(identity, built)
        assert type(built) is type(task) and built.io == task.io
        assert type(again) is type(model)
        shapes = {name: tensor.shape for name, tensor in model.state_dict().items()}
        assert {name: tensor.shape for name, tensor in again.state_dict().items()} == shapes


def test_timed_batches_span_the_sizes_of_an_epoch():
    volumes = [50, 10, 90, 30, 70, 20, 80, 40, 60]
    chosen = cost.stratified(volumes, 3)
    assert chosen[0] == volumes.index(50)  # the median first: a slow configuration times that one only
    assert sorted(volumes[i] for i in chosen) == [20, 50, 80]
    assert cost.stratified([7], 3) == [0, 0, 0]
    # the mean of the timed steps, scaled to the epoch's mean size
    assert cost.per_step([1.0, 3.0], [10, 30], [10, 20, 30, 40]) == pytest.approx(2.0 * 25 / 20)


def test_the_table_counts_a_pack_as_one_job_asking_for_its_runs_together(tmp_path):
    """A pack is one job (one submission, one allowance of minutes): the table's jobs and runtime
    asked follow the packs, its runs and hours do not change, and a pack asks SLURM for what the
    table says."""
    rows = [{"run": f"run/{n}", "study": "s", "artifacts": "s.a", "estimated_hours": "0.1", "peak_mem_mb": "10",
             "host_mem_mb": "10", "device": "cpu"} for n in range(12)]

    def total(table: str) -> list[str]:
        return next(line.split() for line in table.splitlines() if line.startswith("total"))

    alone = total(cost.summary_table(rows))
    packed = total(cost.summary_table(rows, {row["run"]: "pack_1" for row in rows[:11]}))
    assert alone[1:3] == packed[1:3] == ["12", "1.2"]  # runs, CPU-hours
    assert (alone[5], packed[5]) == ("12", "2")  # jobs
    # runtime asked: ⌈0.1 h · 60 · 1.5 + 10⌉ = 19 min per run alone (228 min, 3.8 h); the pack
    # ⌈1.1 h · 60 · 1.5 + 10⌉ = 109 min and the 12th run alone 19 min (128 min, 2.1 h)
    assert (alone[6], packed[6]) == ("4", "2")
    assert cost.job_runtime_minutes(rows[:11]) == 109
    (tmp_path / "cost.csv").write_text("run,estimated_hours,host_mem_mb\n" +
                                       "".join(f"{r['run']},0.1,10\n" for r in rows))
    assert cost.TrainResources(tmp_path / "cost.csv").pack_runtime([r["run"] for r in rows[:11]]) == 109
    # a bundle of measured runs and runs the file lacks (seeds added after the cost table) asks for
    # both: the measured runs' 109 min and 60 min for each unmeasured one, as each would alone
    resources = cost.TrainResources(tmp_path / "cost.csv")
    assert resources.pack_runtime([*(r["run"] for r in rows[:11]), "run/new1", "run/new2"]) == 109 + 2 * 60
    assert resources.pack_runtime(["run/new1", "run/new2"]) == 2 * 60
    assert resources.bundle_memory(["run/0", "run/new1"]) == {"mem_mb": cost.DEFAULT_MEM_MB}


def test_the_numbers_the_docs_and_profile_quote_are_the_cost_plan_s(repo):
    """The margin, the allowances and the default memory are set once (rnnrepro.cost.resources); the
    docs, cost.smk's comment and the slurm profile's default mem_mb quote them, held equal here."""
    import yaml

    from rnnrepro.cost.resources import DEFAULT_MEM_MB, MARGIN, MEMORY_ALLOWANCE_MB, RUNTIME_ALLOWANCE_MINUTES

    cluster = (repo / "docs" / "cluster.md").read_text()
    assert f"⌈estimated hours × 60 × {MARGIN:g} + {RUNTIME_ALLOWANCE_MINUTES}⌉" in cluster
    assert f"⌈peak host memory × {MARGIN:g} + {MEMORY_ALLOWANCE_MB}⌉" in cluster
    rules = (repo / "workflow" / "rules" / "cost.smk").read_text()
    assert f"60 * margin + {RUNTIME_ALLOWANCE_MINUTES})" in rules and f"margin + {MEMORY_ALLOWANCE_MB})" in rules
    assert f"margin {MARGIN:g} (" in rules and f"DEFAULT_MEM_MB ({DEFAULT_MEM_MB}," in rules
    profile = yaml.safe_load((repo / "profiles" / "slurm" / "config.yaml").read_text())
    assert profile["default-resources"]["mem_mb"] == DEFAULT_MEM_MB
