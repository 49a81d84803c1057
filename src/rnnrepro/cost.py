"""A cost plan before the queue: time a few training steps of every distinct configuration of
a scale's plan on the device at hand, and size each training job from it.

``python -m rnnrepro.cost --scale paper`` (or ``snakemake --profile profiles/local cost``) loads
the plan exactly as the workflow does (:func:`rnnrepro.studies.load_workflow_config`), builds
the task and the model of every distinct configuration as training does (the task, then the
model, as :func:`rnnrepro.train.build_run`; on the prepared data file of its task), times a few
optimiser steps (:func:`rnnrepro.train.train_step`: forward, backward, clipping, step) and one
evaluation of the dev split, measures the peak memory, and writes ``results/<scale>/cost.csv``
(:meth:`rnnrepro.layout.Layout.cost`) with one row per run. The workflow reads that file when
it is parsed and asks, for each training job, ``runtime`` and ``mem_mb`` from it
(:func:`runtime_minutes`, :func:`memory_mb`; ``workflow/rules/cost.smk``).

What is counted, per run:

    estimated_hours = (steps · seconds_per_step + evaluations · eval_seconds) / 3600
    steps           = epochs · steps_per_epoch,  steps_per_epoch = len(task.batches("train", batch_size, ...))
    evaluations     = epochs + 2    (dev after every epoch, then the kept model on dev and on test;
                                     the test split counted as one more dev evaluation)

With ``patience`` or ``stop_at`` (early stopping) ``epochs`` is the most a run can train, so the estimate is
an upper bound. Not counted: starting Python and torch, loading the data and building the model
(``setup_seconds`` shows it), checkpoints and the final write; the workflow's fixed allowance
covers them (:data:`RUNTIME_ALLOWANCE_MINUTES`).

Configurations. A configuration is a run's identity without its seed
(:func:`rnnrepro.studies.settings_digest`); runs of one configuration cost the same. Timing every
configuration of the paper plan one by one would take hours (its sine-filter grid alone has
thousands, differing only in the filter's γ, its acausality and the data seed), so
configurations that differ only in settings that change neither the work of a step nor the
number of steps per epoch share one timing (column ``timed_as``: the configuration that was
timed). Those settings are listed in :data:`NEUTRAL`: values of the synthetic data, the
learning-rate schedule, initialisation ranges, checkpoint and logging intervals, early
stopping, and ``epochs`` (each configuration's own number of epochs multiplies its steps).

Timing. One warm-up step on the largest training batch (so that the peak memory is that of the
largest batch; it also takes TorchScript compilation and the allocator's first growth out of
the timing; when it took under :data:`WARM_AGAIN_BELOW` seconds, a second one on the first
batch to be timed), then up to ``--steps`` steps on batches of epoch 1 at evenly spaced
quantiles of the batches' sizes (tasks that bucket sentences by length have batches of very
different lengths), the median one first, stopping after the first measured step once
``--max-seconds-per-config`` is spent. ``seconds_per_step`` is their mean scaled by the
epoch's mean batch size over theirs (size: the elements of a batch's tensors). Configurations
of the same task settings, batch size and seed are timed one after the other on one built task
and its batches (building a treebank task takes seconds): what building it took is added to
each (``setup_seconds``, ``host_mem_mb``).

Clock (column ``clock``): with one thread on a CPU, the process's CPU time, so that other work
on the machine inflates the estimate less (a run given a core of its own takes that long;
cores that share caches still slow each other, so measure on a quiet machine); with several
threads or on CUDA, elapsed time, every step synchronised.

Evaluation. The dev evaluation (:func:`rnnrepro.train.evaluate`) is run and timed when a
forward and loss per dev batch are estimated to take at most ``--max-eval-seconds``; otherwise
``eval_seconds`` is that estimate (the dev batches × the forward and loss of the first;
``eval_method`` says which; decoding with a beam or a tree takes longer than a forward, so an
estimated evaluation is a lower bound).

Memory. CUDA: ``torch.cuda.max_memory_allocated`` over the configuration (``peak_mem_mb``);
on every device also the growth of the process's resident memory over the configuration
(``host_mem_mb``, what a SLURM job's ``mem_mb`` limits): on Linux the kernel's high-water mark
VmHWM, reset before each configuration through ``/proc/self/clear_refs``, minus the resident
memory before it (freed memory is returned with ``malloc_trim`` first); elsewhere
``ru_maxrss``, which cannot be reset, so a configuration smaller than an earlier one shows
less than it uses (``mem_method`` says which). tracemalloc would not see torch's allocations.
The data, the model, the optimiser state, the batches of an epoch and the activations of the
largest batch are in it; the interpreter and torch themselves (about 0.25 GB on a CPU, more
with the CUDA runtime) are not: the workflow's memory allowance covers them.
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import gc
import hashlib
import io
import json
import math
import re
import sys
import textwrap
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .studies import IDENTITY_SECTIONS, settings_digest

#: Margin on the measured time and memory of a run when asking for a job's ``runtime`` and
#: ``mem_mb`` (``--margin`` writes another into cost.csv's ``margin`` column): the timing takes a
#: handful of steps after one warm-up, and a step's time varies with the lengths of its batch
#: (POS, parsing, translation, sentence-mode LMs: the steps timed are a sample), with the
#: node's other load and with the evaluation estimate; the memory measured is that of the
#: largest batch, but early stopping's copy of the kept weights, checkpoint serialisation and
#: allocator fragmentation are not in it.
MARGIN = 1.5
#: Minutes added to every job's ``runtime``: what the estimate leaves out (starting Python and
#: torch on a shared file system, loading the prepared data, building the model, checkpoints
#: every ``checkpoint_every`` steps, writing the outputs) and SLURM's own start-up.
RUNTIME_ALLOWANCE_MINUTES = 10
#: Megabytes added to every job's ``mem_mb``: the process before any data (Python, torch and
#: rnnrepro, about 0.25 GB resident on a CPU) and the CUDA runtime's host memory on a GPU node
#: (about 1 to 1.5 GB), which the measured growth leaves out.
MEMORY_ALLOWANCE_MB = 2048
#: A train job's ``runtime`` (minutes) when no cost file has a row for its run.
DEFAULT_RUNTIME_MINUTES = 60
#: A train job's ``mem_mb`` when a cost file exists but has no row for its run (the slurm
#: profile's default-resources; without a cost file the train rule sets no mem_mb at all).
DEFAULT_MEM_MB = 4000

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

#: The columns of cost.csv, in order.
COLUMNS = ("run", "study", "artifacts", "task", "model", "cell", "config", "timed_as", "epochs",
           "steps_per_epoch", "steps", "seconds_per_step", "timed_steps", "evaluations", "eval_seconds",
           "eval_method", "estimated_hours", "setup_seconds", "peak_mem_mb", "host_mem_mb", "mem_method",
           "device", "threads", "clock", "torch", "margin")
#: The columns a measurement gives every configuration it was timed for (the rest are the run's).
MEASURED = ("timed_as", "steps_per_epoch", "seconds_per_step", "timed_steps", "eval_seconds", "eval_method",
            "setup_seconds", "peak_mem_mb", "host_mem_mb", "mem_method", "device", "threads", "clock", "torch")


# -- the plan --------------------------------------------------------------------------------------
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
    from .tasks import TASKS

    task = dict(identity["task"])
    return TASKS[task.pop("name")].dataset(**task)


def prepared_file(key: str, root: Path = Path(".")) -> Path:
    """The prepared dataset file of ``key`` (the workflow's ``resources/prepared/<key>.json.gz``)."""
    return Path(root) / "resources" / "prepared" / f"{key}.json.gz"


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


# -- memory --------------------------------------------------------------------------------------
def _status_mb(field_name: str) -> float | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(rf"^{field_name}:\s+(\d+)\s+kB", text, re.MULTILINE)
    return int(found.group(1)) / 1024 if found else None


def _maxrss_mb() -> float:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, kB on Linux


def release_memory() -> None:
    """Free what the previous configuration left: garbage, the allocator's free pages, CUDA's cache."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


class MemoryWatch:
    """Growth of the resident memory from :meth:`start` to its peak (see the module docstring)."""

    def start(self) -> None:
        self.method = "rss growth (ru_maxrss)"
        try:
            Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current VmRSS
            if _status_mb("VmHWM") is not None:
                self.method = "rss growth (VmHWM)"
        except OSError:
            pass
        if self.method == "rss growth (VmHWM)":
            self.base = _status_mb("VmRSS") or 0.0
        else:
            self.base = _status_mb("VmRSS") or _maxrss_mb()

    def growth_mb(self) -> float:
        peak = _status_mb("VmHWM") if self.method == "rss growth (VmHWM)" else _maxrss_mb()
        return max(0.0, (peak or 0.0) - self.base)


# -- measuring -------------------------------------------------------------------------------------
@dataclass
class Measurement:
    """What timing one configuration gives every configuration of its group."""

    timed_as: str
    steps_per_epoch: int
    seconds_per_step: float
    timed_steps: int
    eval_seconds: float
    eval_method: str
    setup_seconds: float
    peak_mem_mb: float
    host_mem_mb: float
    mem_method: str
    device: str
    threads: int
    torch: str
    clock: str = "wall"

    def row(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in MEASURED}

    @classmethod
    def from_row(cls, row: dict[str, str]) -> "Measurement":
        return cls(timed_as=row["timed_as"], steps_per_epoch=int(row["steps_per_epoch"]),
                   seconds_per_step=float(row["seconds_per_step"]), timed_steps=int(row["timed_steps"]),
                   eval_seconds=float(row["eval_seconds"]), eval_method=row["eval_method"],
                   setup_seconds=float(row["setup_seconds"]), peak_mem_mb=float(row["peak_mem_mb"]),
                   host_mem_mb=float(row["host_mem_mb"]), mem_method=row["mem_method"], device=row["device"],
                   threads=int(row["threads"]), torch=row["torch"], clock=row.get("clock") or "wall")


def device_label(device) -> str:
    """``cpu``, or ``cuda:0 (<GPU name>)``: what --resume compares."""
    import torch

    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    return str(device)


def batch_volume(batch) -> int:
    """How much a batch holds (elements of its inputs, targets and extra tensors): the largest is warmed up on."""
    return int(batch.inputs.numel() + batch.targets.numel() + sum(t.numel() for t in batch.extra.values()))


def stratified(volumes: list[int], steps: int) -> list[int]:
    """``steps`` batch indices at evenly spaced quantiles of the batches' volumes, the median one
    first (so that a configuration timed for one step only gets a batch of middling size): tasks
    that bucket sentences by length have batches of very different lengths, and a few batches
    taken at random would say little about the mean."""
    ranked = sorted(range(len(volumes)), key=lambda i: (volumes[i], i))
    chosen = [ranked[min(len(ranked) - 1, int((i + 0.5) * len(ranked) / steps))] for i in range(steps)]
    middle = ranked[len(ranked) // 2]
    others = list(dict.fromkeys(index for index in chosen if index != middle))[:steps - 1]
    return [middle] + others + [middle] * (steps - 1 - len(others))  # an epoch of fewer batches: again


def per_step(times: list[float], timed: list[int], volumes: list[int]) -> float:
    """Mean seconds per step of an epoch: the timed steps' mean, scaled by the epoch's mean batch
    volume over the timed batches' (a ratio estimate: a step's time grows with its batch's length)."""
    mean = sum(times) / len(times)
    timed_mean = sum(timed) / len(timed)
    return mean * (sum(volumes) / len(volumes)) / timed_mean if timed_mean > 0 else mean


def clock_of(device, threads: int) -> str:
    """``cpu``: the process's CPU time, what one thread on a CPU costs whatever else the machine
    runs (a run of one thread on a core of its own takes that long); ``wall``: elapsed time, the
    only measure for several threads or a GPU."""
    return "cpu" if device.type == "cpu" and threads == 1 else "wall"


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
#: Seconds: a configuration whose warm-up step on its largest batch took less gets a second one,
#: on the first batch to be timed. TorchScript optimises a loop for the shapes it has seen on
#: its second call, and again for a new length: without it the first timed step of a cheap
#: configuration of varying lengths (POS: 85 ms instead of 61) carries that work.
WARM_AGAIN_BELOW = 2.0


def build_task_for(run: dict[str, Any], data: str | Path | None):
    """The task of ``run``, as :func:`rnnrepro.train.build_run` builds it."""
    from .tasks import build_task

    task_params = dict(run["task"])
    return build_task(task_params.pop("name"), data=data, **task_params)


def build_model_for(run: dict[str, Any], task):
    """The model of ``run`` on its built ``task``, as :func:`rnnrepro.train.build_run` builds it
    after the task (the test suite holds the two equal)."""
    from .models import build_model
    from .tasks.base import state_obstacle

    model_params, cell_params = dict(run["model"]), dict(run["cell"])
    model = build_model(model_params.pop("name"), task.io, cell_params.pop("name"), cell_params=cell_params,
                        **model_params)
    if task.stateful and state_obstacle(model) is not None:
        raise ValueError(f"task {run['task']['name']!r} with stateful=True: {state_obstacle(model)}")
    return model


@dataclass
class BuiltTask:
    """A task and its first epoch's training batches, kept for the next configurations of the same
    task settings, batch size and seed (building a treebank task takes seconds): what building it
    took (seconds, and resident memory, which a later configuration's growth no longer shows)."""

    key: str
    task: Any
    batches: list
    seconds: float
    memory_mb: float  # resident once built
    peak_mb: float  # the peak while building it


def task_key(identity: dict[str, Any]) -> str:
    """What decides a task and its first epoch's batches: task settings, batch size and seed."""
    from .train import TrainConfig

    batch_size = (identity.get("train") or {}).get("batch_size", TrainConfig.batch_size)
    return json.dumps([identity["task"], batch_size, identity["seed"]], sort_keys=True)


def measure(identity: dict[str, Any], data: str | Path | None, device, steps: int = 3,
            max_seconds: float = 5.0, max_eval_seconds: float = 1.0, clock: str = "wall",
            built: BuiltTask | None = None) -> tuple[Measurement, BuiltTask]:
    """Time training steps and a dev evaluation of the run ``identity`` (see the module docstring)
    with ``clock`` (:func:`clock_of`), reusing ``built`` when it is this run's task. Returns the
    measurement and the task built (to pass to the next configuration)."""
    import torch

    from .tasks.base import forward_with_state, main_output
    from .train import (
        TrainConfig,
        epoch_generator,
        evaluate,
        make_optimizer,
        seed_everything,
        train_step,
    )

    cuda = device.type == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)

    now = CLOCKS[clock]
    cfg = TrainConfig(**identity.get("train", {}))
    key = task_key(identity)
    if built is not None and built.key != key:
        built = None
    release_memory()
    watch = MemoryWatch()
    watch.start()
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    seed_everything(identity["seed"])
    if built is None:
        started = now()
        task = build_task_for(identity, data)
        batches = task.batches("train", cfg.batch_size, epoch_generator(identity["seed"], 0))
        built = BuiltTask(key, task, batches, now() - started,
                          memory_mb=max(0.0, (_status_mb("VmRSS") or watch.base) - watch.base),
                          peak_mb=watch.growth_mb())
        reused = None
    else:
        task, batches, reused = built.task, built.batches, built
    if not batches:
        raise ValueError("the training split gives no batch")
    started = now()
    model = build_model_for(identity, task)
    model.to(device)
    optimizer = make_optimizer(model.parameters(), cfg)
    steps_per_epoch = len(batches)
    setup = built.seconds + now() - started
    logging = (lambda: {"grad_norms": []}) if cfg.log_grad_norm else dict
    volumes = [batch_volume(batch) for batch in batches]
    largest = max(range(len(batches)), key=volumes.__getitem__)
    chosen = stratified(volumes, max(1, steps))
    begin = now()
    _, carried = train_step(model, task, batches[largest].to(device), optimizer, cfg, None, **logging())
    sync()
    if now() - begin < WARM_AGAIN_BELOW:  # TorchScript specialises its loops again for another shape
        _, carried = train_step(model, task, batches[chosen[0]].to(device), optimizer, cfg, carried, **logging())
        sync()
    if task.stateful:
        carried = None
    times: list[float] = []
    timed: list[int] = []
    for index in chosen:
        timed.append(volumes[index])
        begin = now()
        _, carried = train_step(model, task, batches[index].to(device), optimizer, cfg, carried, **logging())
        sync()
        times.append(now() - begin)
        if sum(times) >= max_seconds:
            break
    model.eval()
    dev = task.batches("dev", cfg.eval_batch_size)
    begin = now()
    with torch.no_grad():
        first = dev[0].to(device)
        output = forward_with_state(model, first, None)[0] if task.stateful else model(first)
        if isinstance(main_output(output), torch.Tensor) and main_output(output).is_floating_point():
            task.total_loss(output, first)  # an LM's evaluation is mostly the loss over its vocabulary
        # (a translation or a parser decodes in eval mode: that forward is its evaluation's work)
    sync()
    estimate = (now() - begin) * len(dev)
    if estimate <= max_eval_seconds:
        begin = now()
        evaluate(model, task, ("dev",), cfg, device)
        sync()
        eval_seconds, eval_method = now() - begin, "measured"
    else:
        eval_seconds, eval_method = estimate, f"estimated: {len(dev)} dev batches x one forward and loss"
    peak_host = watch.growth_mb()
    if reused is not None:  # its data is resident already: add it, and its building's own peak
        peak_host = max(reused.peak_mb, reused.memory_mb + peak_host)
    peak = torch.cuda.max_memory_allocated(device) / 2**20 if cuda else peak_host
    del task, model, optimizer, batches, dev, carried, first, output
    release_memory()
    return Measurement(timed_as=settings_digest(identity), steps_per_epoch=steps_per_epoch,
                       seconds_per_step=per_step(times, timed, volumes), timed_steps=len(times),
                       eval_seconds=eval_seconds, eval_method=eval_method, setup_seconds=setup,
                       peak_mem_mb=peak, host_mem_mb=peak_host,
                       mem_method="cuda max_memory_allocated" if cuda else watch.method,
                       device=device_label(device), threads=torch.get_num_threads(), torch=torch.__version__,
                       clock=clock), built


# -- rows and files --------------------------------------------------------------------------------
def epochs_of(identity: dict[str, Any]) -> int:
    """The epochs a run trains (the most, with patience): its ``train.epochs`` or the default."""
    from .train import TrainConfig

    return int((identity.get("train") or {}).get("epochs", TrainConfig.epochs))


def evaluations_of(epochs: int) -> int:
    """Dev evaluations a run makes, in units of one dev evaluation: one after every epoch, then
    the kept model on dev and on test (the test split counted as one more dev evaluation)."""
    return epochs + 2


def significant(value: float, digits: int = 6) -> float:
    """``value`` rounded to ``digits`` significant digits (what cost.csv holds)."""
    return float(f"{value:.{digits}g}")


def run_row(run: PlannedRun, measured: Measurement, margin: float = MARGIN) -> dict[str, Any]:
    """The cost.csv row of ``run`` from the measurement of its timing group."""
    epochs = epochs_of(run.identity)
    steps = epochs * measured.steps_per_epoch
    per_step, per_eval = significant(measured.seconds_per_step), significant(measured.eval_seconds)
    evaluations = evaluations_of(epochs)
    hours = (steps * per_step + evaluations * per_eval) / 3600
    row = {**measured.row(), "run": run.folder, "study": ";".join(run.studies), "artifacts": ";".join(run.artifacts),
           "task": run.identity["task"]["name"], "model": run.identity["model"]["name"],
           "cell": run.identity["cell"]["name"], "config": run.config, "epochs": epochs, "steps": steps,
           "seconds_per_step": per_step, "evaluations": evaluations, "eval_seconds": per_eval,
           "estimated_hours": significant(hours), "setup_seconds": round(measured.setup_seconds, 3),
           "peak_mem_mb": round(measured.peak_mem_mb, 1), "host_mem_mb": round(measured.host_mem_mb, 1),
           "margin": margin}
    return {column: row[column] for column in COLUMNS}


def csv_text(rows: Iterable[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """The rows of a cost.csv (none when the file does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def load_costs(path: str | Path) -> dict[str, dict[str, str]]:
    """cost.csv's rows by run folder; empty when there is no such file (what the workflow reads)."""
    return {row["run"]: row for row in read_rows(path)}


def margin_of(row: dict[str, Any]) -> float:
    """The margin a cost row asks for (its ``margin`` column), else :data:`MARGIN`."""
    return float(row.get("margin") or MARGIN)


def runtime_minutes(row: dict[str, Any], allowance: float = RUNTIME_ALLOWANCE_MINUTES) -> int:
    """A train job's ``runtime`` from its cost row: ⌈estimated_hours · 60 · margin + allowance⌉ minutes."""
    return math.ceil(float(row["estimated_hours"]) * 60 * margin_of(row) + allowance)


def job_runtime_minutes(rows: list[dict[str, Any]], allowance: float = RUNTIME_ALLOWANCE_MINUTES) -> int:
    """One job's ``runtime`` for the runs of ``rows`` trained in it (a pack, rnnrepro.packing, or a
    run alone): ⌈Σ estimated_hours · 60 · margin + allowance⌉ minutes, the time they take one after
    another (an upper bound where packing is faster) and one allowance for the job."""
    return runtime_minutes({"estimated_hours": sum(float(r["estimated_hours"]) for r in rows),
                            "margin": margin_of(rows[0])}, allowance)


def memory_mb(row: dict[str, Any], allowance: float = MEMORY_ALLOWANCE_MB) -> int:
    """A train job's ``mem_mb`` from its cost row: ⌈host_mem_mb · margin + allowance⌉, the host
    memory being what SLURM's ``--mem`` limits (on a CPU it is ``peak_mem_mb`` itself)."""
    return math.ceil(float(row["host_mem_mb"]) * margin_of(row) + allowance)


class TrainResources:
    """What the train rule asks for, from the cost file at ``path`` read once (``workflow/rules/
    cost.smk``): :meth:`runtime` and :meth:`mem_mb` of a job by its ``run`` wildcard, and
    :attr:`memory`, the rule's ``mem_mb`` resource only when there is a cost file (without one
    the profile's default-resources decide)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.costs = load_costs(path)

    def runtime(self, wildcards) -> int:
        """Minutes: from the run's row (:func:`runtime_minutes`), else :data:`DEFAULT_RUNTIME_MINUTES`."""
        row = self.costs.get(wildcards.run)
        return runtime_minutes(row) if row else DEFAULT_RUNTIME_MINUTES

    def mem_mb(self, wildcards) -> int:
        """Megabytes: from the run's row (:func:`memory_mb`), else :data:`DEFAULT_MEM_MB`."""
        row = self.costs.get(wildcards.run)
        return memory_mb(row) if row else DEFAULT_MEM_MB

    @property
    def memory(self) -> dict[str, Any]:
        return {"mem_mb": self.mem_mb} if self.costs else {}

    def pack_runtime(self, folders: Iterable[str]) -> int:
        """Minutes for a pack (rnnrepro.packing): :func:`job_runtime_minutes` of its runs, else
        :data:`DEFAULT_RUNTIME_MINUTES` per run."""
        rows = [self.costs.get(folder) for folder in folders]
        if not all(rows):
            return DEFAULT_RUNTIME_MINUTES * len(rows)
        return job_runtime_minutes(rows)

    def pack_memory(self, folders: Iterable[str]) -> dict[str, Any]:
        """``mem_mb`` for a pack, when there is a cost file: the sum of its runs' host memory
        (each member's weights, optimiser state and activations are its own), margin and allowance."""
        if not self.costs:
            return {}
        rows = [self.costs.get(folder) for folder in folders]
        if not all(rows):
            return {"mem_mb": DEFAULT_MEM_MB}
        return {"mem_mb": memory_mb({"host_mem_mb": sum(float(r["host_mem_mb"]) for r in rows),
                                     "margin": margin_of(rows[0])})}

    def lacking(self, runs: Iterable[str]) -> str | None:
        """A warning when the cost file exists but has no row for some of ``runs``, else None."""
        runs = list(runs)
        missing = sum(run not in self.costs for run in runs)
        if not self.costs or not missing:
            return None
        return (f"rnnrepro: {self.path} has no row for {missing} of the {len(runs)} planned runs: their train jobs "
                f"ask for runtime {DEFAULT_RUNTIME_MINUTES} min and mem_mb {DEFAULT_MEM_MB}; measure them with "
                f"`python -m rnnrepro.cost --resume` (or `snakemake cost`)")


# -- the table ---------------------------------------------------------------------------------
def hours_label(rows: list[dict[str, Any]]) -> str:
    kinds = {str(row["device"]).split(":")[0].split(" ")[0] for row in rows}
    return {frozenset({"cpu"}): "CPU-hours", frozenset({"cuda"}): "GPU-hours"}.get(frozenset(kinds), "hours")


def summary_table(rows: list[dict[str, Any]], job_of: dict[str, str] | None = None) -> str:
    """Per study and artifact: runs, hours, the longest run (hours), the largest peak memory (MB),
    the jobs they are submitted as and the runtime those jobs ask (:func:`job_runtime_minutes`,
    summed, in hours); per study over its runs (a run that two artifacts share counted once); and
    the total. ``job_of`` maps a packed run's folder to its pack's name (:func:`jobs_of`); a run
    it lacks is a job of its own."""
    if not rows:
        return "no runs\n"
    job_of = job_of or {}
    label = hours_label(rows)
    lines = [("study", "artifact", "runs", label, "longest run (h)", "largest peak (MB)", "jobs",
              "runtime asked (h)")]

    def line(study: str, artifact: str, chosen: list[dict[str, Any]]) -> tuple[str, ...]:
        hours = [float(r["estimated_hours"]) for r in chosen]
        jobs: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in chosen:
            jobs[job_of.get(row["run"], row["run"])].append(row)
        asked = sum(job_runtime_minutes(members) for members in jobs.values()) / 60
        return (study, artifact, f"{len(chosen):,}", f"{sum(hours):,.1f}", f"{max(hours):,.2f}",
                f"{max(float(r['peak_mem_mb']) for r in chosen):,.0f}", f"{len(jobs):,}", f"{asked:,.0f}")

    studies: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for label_of in str(row["artifacts"]).split(";"):
            study, artifact = label_of.split(".", 1)
            studies[study][artifact].append(row)
    for study, artifacts in studies.items():
        for artifact, chosen in artifacts.items():
            lines.append(line(study, artifact, chosen))
        own = [row for row in rows if study in str(row["study"]).split(";")]
        lines.append(line(study, "(study)", own))
    lines.append(line("total", "", rows))
    widths = [max(len(cells[i]) for cells in lines) for i in range(len(lines[0]))]
    text = []
    for number, cells in enumerate(lines):
        if number == 0 or cells[0] == "total":
            text.append("  ".join("-" * w for w in widths))
        aligned = [cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(cells, widths))]
        text.append("  ".join(aligned).rstrip())
        if number == 0:
            text.append("  ".join("-" * w for w in widths))
        elif cells[1] == "(study)" and lines[number + 1][0] != "total":
            text.append("")
    return "\n".join(text) + "\n"


def jobs_of(studies: dict, packing: dict[str, Any] | None) -> dict[str, str]:
    """Run folder -> the name of the pack it trains in, for every packed run of the plan
    (``packing``: the workflow config's section, as the workflow packs them)."""
    from .packing import Packing, plan_packs

    runs = {folder: identity for study in studies.values() for folder, identity in study.runs.items()}
    return {folder: pack.name for pack in plan_packs(runs, Packing.from_config(packing)) for folder in pack.members}


# -- command line ----------------------------------------------------------------------------------
def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def names(values: list[str] | None) -> list[str] | None:
    """``--studies a b`` or ``--studies a,b``."""
    if not values:
        return None
    return [name for value in values for name in value.split(",") if name]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.cost",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent("""\
            Cost plan before the queue: time a few training steps and one dev evaluation of every
            distinct configuration of a scale's plan on this device, and write <results>/<scale>/cost.csv,
            one row per run: steps, seconds per step, evaluation, estimated hours, peak memory. Prints a
            table per study and artifact. Run it from the repository root; it needs the prepared data of
            the plan (snakemake --profile profiles/local data --config scale=SCALE). The workflow then asks,
            for each training job, runtime = estimated_hours x 60 x margin + %(ra)s minutes and
            mem_mb = host_mem_mb x margin + %(ma)s MB (workflow/rules/cost.smk).""" % {
                "ra": RUNTIME_ALLOWANCE_MINUTES, "ma": MEMORY_ALLOWANCE_MB}),
        epilog=textwrap.dedent("""\
            Counted per run: steps = epochs x batches per epoch (with patience, epochs is the most a
            run trains); estimated_hours = (steps x seconds_per_step + (epochs + 2) x eval_seconds) / 3600,
            eval_seconds being one dev evaluation (after every epoch, then dev and test of the kept
            model). Not counted: start-up, data loading (setup_seconds), checkpoints. Configurations
            differing only in settings that change neither a step nor the steps per epoch (data values
            such as the sine filter's gamma, the learning-rate schedule, initialisation, epochs:
            rnnrepro.cost.NEUTRAL) share one timing (column timed_as). Clock: the process's CPU time
            with one thread on a CPU (other load counts less), else elapsed time (column clock). Peak
            memory: CUDA max_memory_allocated on a GPU, and on every device the growth of the process's
            resident memory over the configuration (host_mem_mb, what mem_mb is sized from).

            On a cluster, measure on the GPU the jobs will use, with their threads, e.g.
              srun --gpus=1 --cpus-per-task=4 --time=2:00:00 \\
                .venv/bin/python -m rnnrepro.cost --scale paper --threads 4
            """))
    parser.add_argument("--scale", choices=("ci", "mini", "paper"),
                        help="scale of the plan (default: config/config.yaml's)")
    parser.add_argument("--studies", nargs="+", metavar="STUDY",
                        help="studies to cost, e.g. --studies pru drnn (default: config/config.yaml's, "
                             "else every study)")
    parser.add_argument("--extra-cells", nargs="+", metavar="CELL",
                        help="cells of your own, as the config's extra_cells")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: CUDA if available, else CPU, "
                                         "or RNNREPRO_DEVICE; as training)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads, as the train jobs get them (default: 1, the local profile's)")
    parser.add_argument("--steps", type=int, default=3,
                        help="timed training steps per configuration, after a warm-up (default: 3)")
    parser.add_argument("--max-seconds-per-config", type=float, default=5.0, metavar="SECONDS",
                        help="stop timing a configuration once its measured steps took this long, after at least "
                             "one (default: 5)")
    parser.add_argument("--max-eval-seconds", type=float, default=1.0, metavar="SECONDS",
                        help="run and time the dev evaluation when a forward and loss per dev batch are "
                             "estimated to take at most this long, else count that estimate (default: 1)")
    parser.add_argument("--results", default=None, help="results folder (default: config/config.yaml's, results)")
    parser.add_argument("--output", type=Path, default=None,
                        help="the cost file to write (default: RESULTS/SCALE/cost.csv, where the workflow reads it)")
    parser.add_argument("--configfile", type=Path, default=Path("config/config.yaml"),
                        help="the workflow's configuration (default: config/config.yaml)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the measurements of an existing cost.csv (or of an interrupted measurement) made "
                             "on the same device with the same threads; time only the other configurations")
    parser.add_argument("--skip-missing", action="store_true",
                        help="leave out the runs whose prepared data file is missing (their train jobs get the "
                             "default resources) instead of stopping")
    parser.add_argument("--margin", type=float, default=MARGIN,
                        help=f"factor on the estimated time and memory when the workflow sizes a train job, written "
                             f"to cost.csv's margin column (default: {MARGIN}); with --resume, changing it measures "
                             f"nothing again")
    parser.add_argument("--show", action="store_true", help="print the table of an existing cost.csv and exit")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.margin < 1:
        parser.error("--margin must be at least 1")
    return args


def missing_data(groups: list[TimingGroup]) -> dict[str, list[PlannedRun]]:
    """Prepared files that are missing -> the runs that need them."""
    missing: dict[str, list[PlannedRun]] = defaultdict(list)
    for group in groups:
        key = dataset_key_of(group.first.identity)
        if key and not prepared_file(key).exists():
            missing[str(prepared_file(key))] += group.runs
    return missing


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from .config_check import ConfigError
    from .layout import Layout
    from .studies import load_workflow_config, load_yaml

    try:
        config = load_yaml(args.configfile) or {}
        for key, value in (("scale", args.scale), ("studies", names(args.studies)),
                           ("extra_cells", names(args.extra_cells)), ("results", args.results)):
            if value is not None:
                config[key] = value
        config, studies = load_workflow_config(config, Path("workflow/schemas"), Path("config/studies"))
    except ConfigError as error:
        progress(f"configuration error: {error}")
        return 2
    scale = config["scale"]
    out = args.output or Path(Layout(config.get("results") or "results", scale).cost())
    partial = out.with_name(f".{out.name}.partial")
    if args.show:
        rows = read_rows(out)
        if not rows:
            progress(f"no {out}: measure it first (python -m rnnrepro.cost --scale {scale})")
            return 2
        print(summary_table(rows, jobs_of(studies, config.get("packing"))), end="")
        return 0

    import torch

    from .train import pick_device

    torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    runs = planned_runs(studies)
    groups = timing_groups(runs.values())
    missing = missing_data(groups)
    if missing:
        chosen = f" 'studies=[{','.join(studies)}]'" if args.studies else ""
        lines = [f"  {path}: {len(needing)} runs ({', '.join(sorted({a for r in needing for a in r.artifacts}))})"
                 for path, needing in missing.items()]
        progress("prepared data missing:\n" + "\n".join(lines) + "\nmake it with: snakemake --profile profiles/local "
                 f"data --config scale={scale}{chosen}")
        if not args.skip_missing:
            progress("stopping (--skip-missing leaves those runs out: their train jobs get the default resources)")
            return 2
        skipped = {r.folder for needing in missing.values() for r in needing}
        progress(f"leaving out {len(skipped)} runs whose data is missing (--skip-missing)")
        groups = [group for group in groups if not any(r.folder in skipped for r in group.runs)]

    label = device_label(device)
    clock = clock_of(device, args.threads)
    known: dict[str, Measurement] = {}
    if args.resume:
        for row in read_rows(partial) + read_rows(out):
            if (row.get("device") == label and row.get("threads") == str(args.threads) and row.get("config")
                    and (row.get("clock") or "wall") == clock):
                try:
                    known.setdefault(row["config"], Measurement.from_row(row))
                except (KeyError, ValueError):
                    pass
    costed = [run for group in groups for run in group.runs]
    progress(f"cost plan, scale {scale}: {len(costed)} runs in {len({r.config for r in costed})} configurations, "
             f"{len(groups)} timings on {label} with {args.threads} thread(s), {clock} clock; {args.steps} steps "
             f"after a warm-up (at most {args.max_seconds_per_config:g} s), {len(known)} configurations measured "
             f"before (--resume)")
    started, cpu_started = time.monotonic(), time.process_time()
    measured: dict[str, Measurement] = {}
    failed: list[str] = []
    last_write = time.monotonic()

    group_of = {run.folder: group.key for group in groups for run in group.runs}

    def rows_so_far() -> list[dict[str, Any]]:
        """The rows of the runs measured so far, in the plan's order."""
        return [run_row(run, measured[group_of[run.folder]], args.margin) for run in runs.values()
                if group_of.get(run.folder) in measured]

    from . import atomic

    built: BuiltTask | None = None
    # configurations of one task one after the other, so that each task is built once
    order = sorted(groups, key=lambda group: task_key(group.first.identity))
    for number, group in enumerate(order, 1):
        first = group.first
        where = (f"[{number}/{len(order)}] {first.artifacts[0] if first.artifacts else first.studies[0]} "
                 f"{first.identity['task']['name']}/{first.identity['model']['name']}/{first.identity['cell']['name']} "
                 f"({len(group.runs)} runs, {len(group.configs)} configs)")
        before = next((known[config] for config in group.configs if config in known), None)
        if before is not None:
            measured[group.key] = before
            progress(f"{where}: {before.seconds_per_step:.4g} s/step, measured before")
            continue
        key = dataset_key_of(first.identity)
        if built is not None and built.key != task_key(first.identity):
            built = None  # free it before the next task is built
        begin = time.monotonic()
        try:
            result, built = measure(first.identity, prepared_file(key) if key else None, device, steps=args.steps,
                                    max_seconds=args.max_seconds_per_config,
                                    max_eval_seconds=args.max_eval_seconds, clock=clock, built=built)
        except Exception as error:  # noqa: BLE001 - one configuration failing must not lose the others
            failed.append(f"{first.folder}: {type(error).__name__}: {error}")
            progress(f"{where}: FAILED: {type(error).__name__}: {error}")
            built = None
            release_memory()
            continue
        measured[group.key] = result
        progress(f"{where}: {result.seconds_per_step:.4g} s/step x{result.timed_steps}, {result.steps_per_epoch} "
                 f"steps/epoch, eval {result.eval_seconds:.3g} s ({result.eval_method.split(':')[0]}), "
                 f"+{result.host_mem_mb:.0f} MB, {time.monotonic() - begin:.1f} s")
        if time.monotonic() - last_write > 10:
            atomic.write_text(partial, csv_text(rows_so_far()))
            last_write = time.monotonic()
    rows = rows_so_far()
    atomic.write_text(out, csv_text(rows))
    partial.unlink(missing_ok=True)
    minutes = (time.monotonic() - started) / 60
    progress(f"wrote {out}: {len(rows)} runs, {len(measured)} timings in {minutes:.1f} min "
             f"({(time.process_time() - cpu_started) / 60:.1f} min of CPU)")
    print(f"Cost plan, scale {scale}, on {label} with {args.threads} thread(s): estimated per run "
          f"(training steps and dev/test evaluations; {out})\n")
    print(summary_table(rows, jobs_of(studies, config.get("packing"))), end="")
    if failed:
        progress(f"{len(failed)} configurations failed:\n  " + "\n  ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
