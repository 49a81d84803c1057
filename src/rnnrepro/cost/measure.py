"""How the cost table times one configuration and measures its memory.

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

import ctypes
import gc
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..plan.studies import settings_digest


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


#: cost.csv's columns a measurement gives every configuration it was timed for (the rest are the run's).
MEASURED = ("timed_as", "steps_per_epoch", "seconds_per_step", "timed_steps", "eval_seconds", "eval_method",
            "setup_seconds", "peak_mem_mb", "host_mem_mb", "mem_method", "device", "threads", "clock", "torch")


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
    from ..tasks import build_task

    task_params = dict(run["task"])
    return build_task(task_params.pop("name"), data=data, **task_params)


def build_model_for(run: dict[str, Any], task):
    """The model of ``run`` on its built ``task``, as :func:`rnnrepro.train.build_run` builds it
    after the task (the test suite holds the two equal)."""
    from ..models import build_model
    from ..tasks.base import state_obstacle

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
    from ..train import TrainConfig

    batch_size = (identity.get("train") or {}).get("batch_size", TrainConfig.batch_size)
    return json.dumps([identity["task"], batch_size, identity["seed"]], sort_keys=True)


def measure(identity: dict[str, Any], data: str | Path | None, device, steps: int = 3,
            max_seconds: float = 5.0, max_eval_seconds: float = 1.0, clock: str = "wall",
            built: BuiltTask | None = None) -> tuple[Measurement, BuiltTask]:
    """Time training steps and a dev evaluation of the run ``identity`` (see the module docstring)
    with ``clock`` (:func:`clock_of`), reusing ``built`` when it is this run's task. Returns the
    measurement and the task built (to pass to the next configuration)."""
    import torch

    from ..tasks.base import forward_with_state, main_output
    from ..train import (
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
