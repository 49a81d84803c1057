"""Shared fixtures: the repository root, the data mirror, one torch thread per test process;
and the order in which pytest-xdist hands test files to its workers (end-to-end runs first)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

REPO = Path(__file__).resolve().parents[1]

# One thread: the suite runs beside other work on small machines, where torch's
# multi-threaded kernels on tiny tensors only spin and wait.
torch.set_num_threads(1)


MAX_WORKERS = 4  # `-n auto` (pyproject.toml): one worker per core, at most this many


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config) -> int:
    """Workers for ``-n auto``. Each holds torch and the end-to-end runs start their own
    processes, so more than a few workers add memory without adding speed."""
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


def pytest_collection_modifyitems(config, items) -> None:
    """Test files whose tests are all ``slow`` (whole-workflow runs: minutes each) first, then
    files with some slow tests, then the rest, each group in its usual order. pytest-xdist
    (``--dist loadfile --no-loadscope-reorder``) hands out files in this order, so the longest
    runs start at once and the many quick tests fill the workers around them, instead of one
    long file starting last and running alone."""
    slow: dict[str, list[bool]] = {}
    for item in items:
        slow.setdefault(item.nodeid.split("::")[0], []).append(item.get_closest_marker("slow") is not None)

    def group(item) -> int:
        marks = slow[item.nodeid.split("::")[0]]
        return 0 if all(marks) else 1 if any(marks) else 2

    items.sort(key=group)  # stable: the order within a group is unchanged

def find_mirror() -> Path | None:
    """The data mirror: RNNREPRO_DATA_MIRROR, else ../shared/data beside the repository."""
    candidates = [os.environ.get("RNNREPRO_DATA_MIRROR"), REPO.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "MANIFEST.md").exists():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def require(path: Path | None, what: str) -> Path:
    """``path`` when it exists; else skip the test, or, under CI (``CI`` set), fail it: CI has
    ``../shared`` beside the repository, so a missing folder there is a broken set-up."""
    if path is not None and Path(path).exists():
        return Path(path)
    message = f"{what} not found ({path})"
    if os.environ.get("CI"):
        pytest.fail(f"{message}: CI must provide it", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def mirror() -> Path:
    return require(find_mirror(), "data mirror (RNNREPRO_DATA_MIRROR or ../shared/data)")


BIN = Path(sys.executable).parent


def tool_env() -> dict[str, str]:
    """The environment for workflow commands: this interpreter's bin folder first on PATH."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


#: Seconds a whole-workflow command may take before a test calls it hung, unless the environment's
#: RNNREPRO_TEST_TIMEOUT says otherwise. The limit guards against a hang, not a slow machine: the
#: ci-scale workflow takes about 380 s on an idle 2-core machine and passed 900 s on a loaded one.
WORKFLOW_TIMEOUT = 2700


def workflow_timeout() -> float:
    """The limit of a whole-workflow command: RNNREPRO_TEST_TIMEOUT seconds, else :data:`WORKFLOW_TIMEOUT`."""
    value = os.environ.get("RNNREPRO_TEST_TIMEOUT", "").strip()
    try:
        seconds = float(value) if value else WORKFLOW_TIMEOUT
    except ValueError:
        raise ValueError(f"RNNREPRO_TEST_TIMEOUT must be a number of seconds, got {value!r}") from None
    if not seconds > 0:
        raise ValueError(f"RNNREPRO_TEST_TIMEOUT must be positive, got {value!r}")
    return seconds


def run_tool(command: list[str], cwd: Path, check: bool = True, timeout: float | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a command (snakemake, dvc, git) in ``cwd``, for at most ``timeout`` seconds (default:
    :func:`workflow_timeout`), with :func:`tool_env` and ``env``'s variables; on failure show its output."""
    timeout = workflow_timeout() if timeout is None else timeout
    result = subprocess.run(command, cwd=cwd, env={**tool_env(), **(env or {})}, capture_output=True, text=True,
                            timeout=timeout)
    if check:
        assert result.returncode == 0, (f"{' '.join(command)} failed ({result.returncode}):\n"
                                        f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result


def copy_project(source: Path, target: Path, mirror: Path, **config) -> Path:
    """Copy the tracked files of the repository to ``target`` and set config keys (e.g. scale)."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=source, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        src, dst = source / name, target / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        elif src.exists():
            shutil.copy2(src, dst)
    settings = yaml.safe_load((target / "config/config.yaml").read_text())
    settings.update(config)
    settings["data"]["mirror"] = str(mirror)
    (target / "config/config.yaml").write_text(yaml.safe_dump(settings))
    return target


@pytest.fixture(scope="module")
def make_project(repo, mirror, tmp_path_factory):
    """Factory: a fresh copy of the project with config keys set, e.g. make_project(scale="ci")."""
    def make(**config) -> Path:
        return copy_project(repo, tmp_path_factory.mktemp("project"), mirror, **config)
    return make


JOBS_IN_PLAN = """
import json, sys, yaml
from pathlib import Path
from rnnrepro.plan.kept import work_out_plan
config, runtime_hours = json.loads(sys.stdin.read())
settings = {**yaml.safe_load(Path("config/config.yaml").read_text()), **config}
jobs = work_out_plan(settings, Path(".")).jobs(runtime_hours)
print(json.dumps({name: list(job.members) for name, job in jobs.items()}))
"""


def jobs_in_plan(project: Path, runtime_hours: dict[str, float] | None = None, **config) -> dict[str, set[str]]:
    """Name -> run folders of every pack and bundle of ``project``'s plan, with config keys set
    (e.g. scale="ci") and the cost table's ``runtime_hours``, as the workflow makes them
    (:meth:`rnnrepro.plan.kept.WorkflowPlan.jobs`), worked out by the project's own package (its src/
    first on the path: a copy may hold a cell of its own)."""
    env = {**tool_env(), "PYTHONPATH": str(project / "src")}
    result = subprocess.run([sys.executable, "-c", JOBS_IN_PLAN], cwd=project, env=env, capture_output=True,
                            text=True, input=json.dumps([config, runtime_hours]), check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return {name: set(members) for name, members in json.loads(result.stdout).items()}


def planned_trainings(dry_run: str, project: Path, jobs: dict[str, set[str]] | None = None, **config) -> list[str]:
    """The run folders a dry run's training jobs train, once per job that trains it: each run
    trained alone (its metrics.json among the jobs' outputs) and each member of a pack or bundle
    whose record, ``jobs/<name>/trained.json``, is among them: ``jobs``, the plan's packs and
    bundles, else :func:`jobs_in_plan` with ``config`` (a subprocess: give ``jobs`` when reading
    one dry run job by job)."""
    outputs = "\n".join(re.findall(r"^\s+output: (.*)$", dry_run, re.MULTILINE))
    runs = re.findall(r"/runs/(task~[^,\s]+)/metrics\.json", outputs)
    records = re.findall(r"/jobs/((?:pack|bundle)_[0-9a-f]{10})/trained\.json", outputs)
    if records:
        jobs = jobs if jobs is not None else jobs_in_plan(project, **config)
        assert set(records) <= set(jobs), f"records of jobs not in the plan: {sorted(set(records) - set(jobs))}"
        runs += [folder for name in records for folder in sorted(jobs[name])]
    return runs


def trained_runs(dry_run: str, project: Path, **config) -> set[str]:
    """The run folders a dry run's training jobs train (:func:`planned_trainings`)."""
    return set(planned_trainings(dry_run, project, **config))
