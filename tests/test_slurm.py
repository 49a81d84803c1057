"""`snakemake --profile slurm all` against a real single-node SLURM cluster on localhost.

The cluster (Debian's slurm-wlm and munge, two fake GPUs) is installed and started by
scripts/local-slurm/ and stopped by PID afterwards. Where it cannot be had the tests are
skipped with the reason, except under CI (CI=true), where that is a failure.
The production profile is used as it is, plus what a local test cluster needs
(status by squeue, quick status checks, one thread per run) written as the `slurm`
profile of a copy of the project, so the command is literally `snakemake --profile slurm all`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO, run_tool, tool_env, workflow_timeout
from fakes import write_toy_study

pytestmark = pytest.mark.slow

SCRIPTS = REPO / "scripts" / "local-slurm"
TOY_RUNS = 3  # tests/fakes.py: the toy study's three cells
#: Epochs of the runs the tests below interrupt: 300 steps, a checkpoint every 3. Measured beside
#: other tests, an uninterrupted run trained 8-10 s and wrote its first checkpoint within the
#: first second, so SIGTERM lands while it trains (at 60 epochs the three interrupt tests
#: trained twice as long, with nothing more to show).
INTERRUPTED_EPOCHS = 30
LOCAL_CLUSTER_SETTINGS = {
    "slurm-status-command": "squeue",  # no slurmdbd here, so no sacct
    "slurm-init-seconds-before-status-checks": 1,
    "seconds-between-status-checks": 1,
    "latency-wait": 5,
    "set-threads": {"train": 1},  # the reference runs below use one thread too
}


def unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"SLURM test cluster unavailable under CI: {reason}")
    pytest.skip(f"SLURM test cluster unavailable: {reason}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    install = subprocess.run(["bash", str(SCRIPTS / "install.sh")], capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        unavailable(install.stderr.strip() or install.stdout.strip())
    state = tmp_path_factory.mktemp("slurm-state")
    up = subprocess.run(["bash", str(SCRIPTS / "up.sh"), str(state)], capture_output=True, text=True, timeout=120)
    try:
        assert up.returncode == 0, f"local SLURM cluster did not start:\n{up.stderr}"
        yield state
    finally:
        subprocess.run(["bash", str(SCRIPTS / "down.sh"), str(state)], timeout=60)


def slurm_project(make_project, epochs: int) -> Path:
    """A copy with only the toy study (three runs ``epochs`` long) at ci scale, and the test profile.
    Its bundles hold one cell's runs, as at the paper scale (not the ci scale's mixed bundles), so
    that the toy's three cells are three train jobs."""
    project = make_project(scale="ci", studies=["toy"])
    write_toy_study(project, epochs=epochs)
    config = project / "config/config.yaml"
    settings = yaml.safe_load(config.read_text())
    settings["bundling"]["mixed"] = ["mini"]
    config.write_text(yaml.safe_dump(settings))
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    profile.update(LOCAL_CLUSTER_SETTINGS)
    (project / "slurm").unlink()
    (project / "slurm").mkdir()
    (project / "slurm/config.yaml").write_text(yaml.safe_dump(profile))
    return project


def jobs(project: Path) -> list[dict[str, str]]:
    """Every job the controller remembers that ran in ``project`` (scontrol show job)."""
    out = subprocess.run(["scontrol", "show", "job", "-o"], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if fields.get("WorkDir") == str(project):
            found.append(fields)
    return found


def wait_for_checkpoints(project: Path, count: int, process: subprocess.Popen, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list((project / "results/ci/runs").rglob("checkpoint.pt"))) >= count:
            return
        assert process.poll() is None, "snakemake ended before training started"
        time.sleep(0.2)
    raise AssertionError("no checkpoints appeared")


def running_train_jobs(project: Path) -> list[str]:
    return [j["JobId"] for j in jobs(project) if j["JobState"] == "RUNNING" and j["Comment"].startswith("rule_train")]


_REFERENCES: dict[str, dict] = {}  # run folder (it names the run's whole identity) -> its metrics alone


def reference_metrics(project: Path, run_folder: Path, tmp_path: Path) -> dict:
    """Metrics of the same run trained uninterrupted, outside SLURM (once per run identity: the
    preemption and scancel tests train the same three runs)."""
    key = run_folder.relative_to(project).as_posix()
    if key not in _REFERENCES:
        out = tmp_path / key
        run_tool([sys.executable, "-m", "rnnrepro.train", str(run_folder / "config.json"), str(out), "--threads", "1"],
                 cwd=project)
        _REFERENCES[key] = numbers(out)
    return _REFERENCES[key]


def numbers(run_folder: Path) -> dict:
    """A run's metrics without their provenance (which records the wall time, among others)."""
    metrics = json.loads((run_folder / "metrics.json").read_text())
    metrics.pop("provenance")
    return metrics


def run_folders(project: Path) -> list[Path]:
    return sorted(p.parent for p in (project / "results/ci/runs").rglob("metrics.json"))


def start_snakemake(project: Path, *args: str) -> subprocess.Popen:
    """`snakemake --profile slurm runs` in the background: the training jobs, what these tests
    interrupt (the first test runs `all`, reports included)."""
    return subprocess.Popen([sys.executable, "-m", "snakemake", "--profile", "slurm", "runs", *args],
                            cwd=project, env=tool_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


#: A second artifact for the toy study: four seeds of a model small enough to pack (within
#: packing.max_hidden), so that `all` also submits a pack (rnnrepro.packing).
PACKED_ARTIFACT = """
  fig2:
    title: Four seeds of a two-unit LSTM, trained as one pack
    task: {name: adding, T: 8, train_size: 200, dev_size: 50, test_size: 50}
    model: {name: basic, hidden_size: 2}
    grid: {cell: [lstm], seed: [1, 2, 3, 4]}
"""


def test_profile_slurm_all_runs_the_workflow_with_gpu_requests_and_a_pack(cluster, make_project, tmp_path):
    """`snakemake --profile slurm all`: every training job goes to SLURM with the GPU request,
    nothing else does, and the reports are written. The toy study's three cells are three train
    jobs; its four seeds of a small model are one pack, one SLURM submission, and each packed run
    ends where it ends trained alone (tests/test_packing.py's tolerance)."""
    from test_packing import assert_close

    project = slurm_project(make_project, epochs=2)
    study = project / "config/studies/toy.yaml"
    study.write_text(study.read_text() + PACKED_ARTIFACT)
    run_tool(["snakemake", "--profile", "slurm", "all"], cwd=project)
    assert (project / "results/ci/reports/toy.html").exists()
    train = [j for j in jobs(project) if j["Comment"].startswith("rule_train")]
    assert sorted(j["Comment"].split("_wildcards_")[0] for j in train) == ["rule_train"] * TOY_RUNS + ["rule_train_job"]
    assert [j for j in train if j["Comment"].startswith("rule_train_job_wildcards_pack_")], train
    assert all(j["JobState"] == "COMPLETED" for j in train), train
    assert all(j.get("TresPerJob") in ("gres:gpu:1", "gres/gpu:1") for j in train), train
    assert {j["Comment"].split("_wildcards_")[0] for j in jobs(project)} == {"rule_train", "rule_train_job"}, \
        "only training goes to SLURM"
    packed = [folder for folder in run_folders(project)
              if json.loads((folder / "metrics.json").read_text())["provenance"].get("packed_runs")]
    assert len(run_folders(project)) == TOY_RUNS + 4 and len(packed) == 4, packed
    for folder in packed:
        assert "/cell~lstm/" in folder.as_posix()
        assert json.loads((folder / "metrics.json").read_text())["provenance"]["packed_runs"] == 4
        assert_close(numbers(folder), reference_metrics(project, folder, tmp_path), str(folder))


def test_preempted_runs_resume_to_identical_metrics(cluster, make_project, tmp_path):
    """SIGTERM as SLURM sends before preempting: the run checkpoints, exits, is retried and resumes."""
    project = slurm_project(make_project, epochs=INTERRUPTED_EPOCHS)
    process = start_snakemake(project)
    wait_for_checkpoints(project, 2, process)  # two of the runs are training (two cores)
    victims = running_train_jobs(project)
    assert victims, "no training job was running"
    subprocess.run(["scancel", "--signal=TERM", "--full", *victims], check=True)
    output, _ = process.communicate(timeout=workflow_timeout())
    assert process.returncode == 0, output[-4000:]
    train = [j for j in jobs(project) if j["Comment"].startswith("rule_train")]
    assert len(train) == TOY_RUNS + len(victims), "each preempted run is submitted again"
    for folder in run_folders(project):
        assert numbers(folder) == reference_metrics(project, folder, tmp_path)
    interrupted = [folder for folder in run_folders(project)
                   if "resuming" in (project / "logs/ci/runs" / f"{folder.relative_to(project / 'results/ci/runs')}.log").read_text()]
    assert interrupted, "no run resumed from a checkpoint"


def test_scancel_is_reported_and_rerun_incomplete_finishes(cluster, make_project, tmp_path):
    project = slurm_project(make_project, epochs=INTERRUPTED_EPOCHS)
    process = start_snakemake(project, "--retries", "0")
    wait_for_checkpoints(project, 1, process)
    victims = running_train_jobs(project)
    assert victims, "no training job was running"
    subprocess.run(["scancel", *victims], check=True)
    output, _ = process.communicate(timeout=workflow_timeout())
    assert process.returncode != 0
    assert "Error in rule train" in output and "CANCELLED" in output, output[-4000:]
    run_tool(["snakemake", "--profile", "slurm", "runs", "--rerun-incomplete"], cwd=project)
    for folder in run_folders(project):
        assert numbers(folder) == reference_metrics(project, folder, tmp_path)


def test_a_bundle_of_runs_is_one_slurm_job_and_resumes_when_preempted(cluster, make_project, tmp_path):
    """With a cost table, three seeds of one cell (too wide to pack) are one bundle
    (rnnrepro.plan.bundles): one SLURM submission that trains them one after another. Preempted
    (SIGTERM) during a run, it is submitted again, skips what finished, resumes that run, and
    every run ends with the metrics of the run trained alone."""
    project = slurm_project(make_project, epochs=INTERRUPTED_EPOCHS)
    study = project / "config/studies/toy.yaml"
    study.write_text(study.read_text().replace("grid: {cell: [lstm, gru, pru]}", "grid: {cell: [lstm], seed: [1, 2, 3]}"))
    run_tool([sys.executable, "-m", "rnnrepro.cost", "--scale", "ci", "--studies", "toy"], cwd=project)
    assert (project / "results/ci/cost.csv").exists()
    process = start_snakemake(project)
    wait_for_checkpoints(project, 1, process)
    victims = running_train_jobs(project)
    assert len(victims) == 1, victims
    subprocess.run(["scancel", "--signal=TERM", "--full", *victims], check=True)
    output, _ = process.communicate(timeout=workflow_timeout())
    assert process.returncode == 0, output[-4000:]
    train = [j for j in jobs(project) if j["Comment"].startswith("rule_train")]
    assert len(train) == 2 and all(j["Comment"].startswith("rule_train_job_wildcards_bundle_") for j in train), \
        [j["Comment"] for j in train]  # the bundle, and the bundle again after the preemption
    assert all(j.get("TresPerJob") in ("gres:gpu:1", "gres/gpu:1") for j in train), train
    folders = run_folders(project)
    assert len(folders) == TOY_RUNS
    for folder in folders:
        assert numbers(folder) == reference_metrics(project, folder, tmp_path)
    logs = "".join(path.read_text() for path in (project / "logs/ci/jobs").glob("*.log"))
    assert "resuming" in logs, "the preempted run did not resume from its checkpoint"
