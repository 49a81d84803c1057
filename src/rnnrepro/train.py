"""The training loop and its contract.

- Same config and seed on the same machine give identical metrics: torch, numpy and random
  are seeded, the data order of epoch e comes from a generator seeded by (seed, e), and
  everything that changes during training is in the checkpoint.
- A run killed at any moment and started again continues from its last checkpoint
  (model, optimiser, RNG states, position in the epoch, curve so far) and ends with the
  same metrics as an uninterrupted run.
- SIGTERM or SIGUSR1 (what SLURM sends before preempting) makes the run finish its
  current step (or the dev evaluation of an epoch's end, or the final evaluation), write a
  checkpoint and exit with :data:`EXIT_INTERRUPTED`; a run stopped during its final
  evaluation has a final checkpoint, so its rerun only evaluates. A signal that arrives while
  the outputs are being written (a moment, once the final evaluation is done) lets them be
  written: the run is then finished, its outputs complete (model.pt last), and it exits 0.
- Outputs appear atomically: config.json, curve.tsv, items.npz (the test split's per-item
  statistics, for the report's paired bootstrap), metrics.json, then model.pt (the final
  model -- with early stopping, the one kept -- for analyses) last; checkpoint.pt is the
  resume state, never a declared output.
- A run's identity is its config (task, model, cell, train, seed) plus the identities of its
  data and code; a checkpoint of another identity is set aside (``checkpoint.pt.stale``), never
  resumed. A checkpoint that cannot be read (empty, truncated or garbled: a node that crashed
  while writing it) is set aside as ``checkpoint.pt.corrupt``, named with its error in the log,
  and the run starts afresh. A run that starts or resumes removes the temporary files that a
  killed write left in its folder (:func:`rnnrepro.atomic.remove_stale_temporaries`).
- ``metrics.json`` carries, under ``provenance``, where and how the numbers were made: device,
  torch version, threads, the environment switches and the training wall time.
- A NaN or infinite loss stops the run with an error naming the step; with
  ``on_nonfinite: record`` it ends the run as a result instead (see below).
- The device is chosen at run time: CUDA when present, else the CPU
  (``RNNREPRO_DEVICE`` overrides).
- Deterministic kernels (:class:`Kernels`), on by default: ``torch.use_deterministic_algorithms
  (True, warn_only=True)``, ``torch.backends.cudnn.deterministic = True``,
  ``torch.backends.cudnn.benchmark = False`` and, before CUDA starts, ``CUBLAS_WORKSPACE_CONFIG
  =:4096:8`` (unless set already), which deterministic cuBLAS needs. On a GPU this makes the
  same config and seed give the same numbers on the same machine; on a CPU, whose kernels are
  deterministic already, it changes nothing. ``RNNREPRO_DETERMINISTIC=0`` allows torch's
  faster nondeterministic kernels instead (``deterministic = False`` in both flags,
  ``cudnn.benchmark = True``). An op that has no deterministic kernel on the device runs its
  nondeterministic one (``warn_only``): torch's warning is taken out of the warning stream, the
  op is named once in the run's log, and provenance lists it in ``nondeterministic_ops``
  (over every session of the run). Provenance also says ``deterministic``: whether every
  session of the run ran with deterministic kernels. The flag is set through
  :func:`set_deterministic_algorithms`, which spares each process the import of torch's
  compiler that ``torch.use_deterministic_algorithms`` makes (about 2 s, for a flag only
  ``torch.compile`` reads; no run compiles).

What a run's ``train:`` settings (:class:`TrainConfig`) add to plain minibatch training:

- Learning-rate schedule (Zaremba et al. 2014): epoch e = 1, 2, ... trains with

      lr_e = lr / lr_decay ** max(0, e - lr_decay_after)

  (medium: lr 1, lr_decay 1.2, lr_decay_after 6; large: 1.15 after 14). The rate is a
  function of the epoch alone, set at the start of every epoch, so it survives a resume.
- Early stopping (``patience`` P, ``min_delta`` δ): after each epoch the watched dev metric
  v_e (``monitor``; by default the task's ``task.dev_metric``, the one on the curve; the drnn
  paper's code watches the validation loss) is compared with the best so far, v*. It
  improves when v_e < v* - δ for metrics where lower is better (MSE, NLL, perplexity) and
  when v_e > v* + δ where higher is better (accuracy, BLEU, UAS/LAS; see
  :meth:`rnnrepro.tasks.base.Task.dev_goal_of`); the first epoch always does, NaN never.
  On improvement v* = v_e and the weights are kept; training stops once P epochs in a row
  have not improved (or after ``epochs``). The model evaluated on dev and test at the end,
  and saved as model.pt, is the kept one; metrics.json has ``best_epoch`` (its epoch) and
  ``epochs`` (epochs trained). The kept weights, v*, and the count of epochs without
  improvement are in the checkpoint, with the dev metrics of the kept and of the last epoch's
  weights: the final evaluation takes the dev metrics of the weights it evaluates from there
  (the same computation on the same weights) and evaluates only the test split.
- A goal (``stop_at`` s): training also stops after the first epoch whose watched dev metric
  is better than s: v_e < s where lower is better, v_e > s where higher is better (the drnn
  paper's sine task: "Training is stopped if the validation MSE falls below 1e-5"). Without
  ``patience`` the model of that epoch is the one evaluated and saved.
- Carried state (tasks with ``stateful``, e.g. ``lm`` with ``stateful: true``): each training
  batch starts from the model's state at the end of the previous one, detached (truncated
  BPTT), and from zeros at the start of every epoch. That state is in the checkpoint, so a
  resumed run continues exactly where the killed one was.
- Dropout masks come from torch's global generator, seeded by the run's seed and saved in
  every checkpoint with numpy's and Python's.
- Gradient norm (``log_grad_norm``): the global norm of every step's gradient g, taken before
  clipping (tutorial Algorithm 3, line 1: ĝ = ∂E/∂θ),

      ‖g‖₂ = sqrt(Σ_p ‖∂E/∂θ_p‖₂²)   over every parameter tensor θ_p,

  goes on the curve as ``grad_norm``, averaged over ``log_every`` steps as ``train_loss`` is.
- Divergence as a result (``on_nonfinite: record``; the default ``raise`` stops the run with
  :class:`NonFiniteLoss`): the first step whose loss is NaN or infinite ends training. Its
  loss goes on the curve at that step, ``metrics.json`` holds ``diverged_step`` (that step),
  ``diverged`` = 1 and the task's dev and test metrics as null (read as NaN: a diverged model's
  scores are not results), and the run finishes normally, so a workflow can show the
  divergence. A run that does not diverge has ``diverged`` = 0.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import json
import logging
import math
import os
import random
import re
import signal
import sys
import textwrap
import time
import typing
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from . import atomic
from .allocator import keep_freed_memory
from .cells.switches import switch_value
from .metrics.items import ITEMS_FILE, ItemRecorder, SplitItems, save_no_items
from .models import build_model
from .tasks import Predictions, Task, build_task
from .tasks.base import detach_state, forward_with_state, metric_goal, move_state, state_obstacle

log = logging.getLogger("rnnrepro.train")

EXIT_INTERRUPTED = 143  # 128 + SIGTERM: "stopped on request, resumable"
CHECKPOINT = "checkpoint.pt"
#: An epoch's end writes a checkpoint (besides every ``checkpoint_every`` steps) when the last one
#: is at least this old: a run of long epochs keeps its dev evaluations, while a run of thousands
#: of tiny epochs (elstm Fig. 5: 3 steps an epoch) does not rewrite its whole curve thousands of
#: times, which cost it more than its training.
EPOCH_CHECKPOINT_SECONDS = 30.0
MODEL = "model.pt"
#: A checkpoint ends with this marker and the sha256 (hex) of every byte before it
#: (:func:`write_checkpoint`): torch.load checks no checksum, so a garbled checkpoint would
#: otherwise resume from damaged weights.
CHECKSUM_MARKER = b"\nrnnrepro-sha256:"
#: Environment switches that change how (not what) the cells compute; recorded in provenance.
SWITCHES = ("RNNREPRO_DEVICE", "RNNREPRO_TORCHSCRIPT", "RNNREPRO_PREPACK", "RNNREPRO_FUSED", "RNNREPRO_DETERMINISTIC")
#: The cuBLAS workspace that deterministic cuBLAS needs (CUDA >= 10.2), set before CUDA starts.
CUBLAS_WORKSPACE_CONFIG = ":4096:8"


def setting(default: Any, help: str) -> Any:
    """A field of :class:`TrainConfig` with its help text."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings of a run (the ``train:`` section of a study file); each field's
    ``help`` is shown by ``python -m rnnrepro.train --help``."""

    epochs: int = setting(1, "passes over the training split (at most, with patience)")
    batch_size: int = setting(20, "sequences per step (stateful tasks: parallel pieces of the training stream)")
    optimizer: Literal["sgd", "adam", "adagrad"] = setting("adagrad", "sgd, adam or adagrad")
    lr: float = setting(0.5, "learning rate (of the first epochs when lr_decay is set)")
    initial_accumulator: float = setting(0.0, "Adagrad's starting sum of squared gradients "
                                              "(TensorFlow 1's default is 0.1)")
    clip: float | None = setting(None, "largest global gradient norm; null: no clipping")
    clip_value: float | None = setting(None, "clip each gradient entry to [-v, v] "
                                             "(the PRU paper's \"threshold at ±1\"); null: none")
    checkpoint_every: int = setting(100, "steps between checkpoints (one is also written at an epoch's end when "
                                         "the last is EPOCH_CHECKPOINT_SECONDS old, and when training ends)")
    log_every: int = setting(20, "steps between points of the train_loss curve")
    eval_batch_size: int = setting(100, "sequences per evaluation batch (stateful tasks: parallel pieces "
                                        "of the dev/test stream)")
    lr_decay: float = setting(1.0, "divide the learning rate by this every epoch after lr_decay_after: "
                                   "lr_e = lr / lr_decay^max(0, e - lr_decay_after), e = 1, 2, ... "
                                   "(Zaremba: 1.2 medium, 1.15 large; 1: constant)")
    lr_decay_after: int = setting(0, "epochs at the full learning rate before the decay starts "
                                     "(Zaremba: 6 medium, 14 large)")
    patience: int | None = setting(None, "early stopping: stop once the dev metric has not improved by more "
                                         "than min_delta for this many epochs in a row, and evaluate and save "
                                         "the weights of its best epoch; null: train all epochs, keep the last")
    min_delta: float = setting(0.0, "smallest change of the dev metric that counts as an improvement "
                                    "(the drnn paper: 1e-3)")
    monitor: str | None = setting(None, "the dev metric that patience and stop_at watch, e.g. dev_loss; it goes on "
                                        "the curve beside the task's; null: the task's dev metric")
    stop_at: float | None = setting(None, "stop after the first epoch whose watched dev metric is better than this "
                                          "(below it where lower is better; the drnn sine task: 1e-5); null: no goal")
    log_grad_norm: bool = setting(False, "put the global gradient norm of every step, taken before clipping, "
                                         "on the curve as grad_norm (averaged over log_every steps)")
    on_nonfinite: Literal["raise", "record"] = setting(
        "raise", "a NaN or infinite loss: raise (the run fails, naming the step) or record (training ends "
                 "there; metrics.json gets diverged_step and null dev/test metrics; the run finishes)")

    def __post_init__(self):
        if not self.lr_decay >= 1.0:
            raise ValueError(f"lr_decay divides the learning rate every epoch and must be >= 1 (Zaremba: 1.2), "
                             f"got {self.lr_decay}; a multiplier m < 1 (TensorFlow's lr_decay 0.8) is lr_decay 1/m")
        if self.lr_decay_after < 0:
            raise ValueError(f"lr_decay_after must be >= 0, got {self.lr_decay_after}")
        if self.patience is not None and self.patience < 1:
            raise ValueError(f"patience must be >= 1 epoch or None (no early stopping), got {self.patience}")
        if self.min_delta < 0:
            raise ValueError(f"min_delta must be >= 0, got {self.min_delta}")
        if self.monitor is not None and not self.monitor.startswith("dev_"):
            raise ValueError(f"monitor watches a dev metric (dev_<name>, e.g. dev_loss), got {self.monitor!r}")
        if self.on_nonfinite not in ("raise", "record"):
            raise ValueError(f"on_nonfinite must be 'raise' or 'record', got {self.on_nonfinite!r}")

    @property
    def watches(self) -> bool:
        """Whether a dev metric can end training early (``patience`` or ``stop_at``)."""
        return self.patience is not None or self.stop_at is not None

    def watched(self, task: Task) -> str:
        """The dev metric early stopping and ``stop_at`` watch: ``monitor`` or the task's."""
        return self.monitor or task.dev_metric

    def goal(self, task: Task) -> Literal["min", "max"]:
        """Which way the watched dev metric improves."""
        return task.dev_goal_of() if self.monitor in (None, task.dev_metric) else metric_goal(self.monitor)

    def lr_at(self, epoch: int) -> float:
        """The learning rate of 0-based ``epoch``: lr / lr_decay ** max(0, epoch + 1 - lr_decay_after)."""
        return self.lr / self.lr_decay ** max(0, epoch + 1 - self.lr_decay_after)


class NonFiniteLoss(RuntimeError):
    """The loss became NaN or infinite."""


class TrainingInterrupted(RuntimeError):
    """A stop signal arrived; a checkpoint was written and the run can be resumed."""


@dataclass
class Progress:
    """Where training stands; saved in every checkpoint."""

    step: int = 0  # optimiser steps done
    epoch: int = 0  # completed epochs
    batch_in_epoch: int = 0  # batches of the current epoch done
    window: list[float] = field(default_factory=list)  # losses since the last curve point
    epoch_loss: float = 0.0  # sum of losses in the current epoch
    last_epoch_loss: float = float("nan")  # mean loss of the last completed epoch
    curve: list[tuple[int, int, str, float]] = field(default_factory=list)  # (step, epoch, metric, value)
    seconds: float = 0.0  # wall time spent training, summed over every session of the run
    best_value: float | None = None  # early stopping: best dev metric so far
    best_epoch: int = 0  # early stopping: the (1-based) epoch of the kept weights
    epochs_without_improvement: int = 0  # early stopping: epochs since the last improvement
    stopped_early: bool = False  # early stopping ended training before ``epochs``
    grad_window: list[float] = field(default_factory=list)  # gradient norms since the last curve point
    diverged_step: int | None = None  # on_nonfinite="record": the step whose loss was not finite
    deterministic: bool = True  # every session so far ran with deterministic kernels
    nondeterministic_ops: list[str] = field(default_factory=list)  # ops that ran without a deterministic kernel
    last_dev: dict[str, float] | None = None  # dev metrics of the last completed epoch's weights
    kept_dev: dict[str, float] | None = None  # early stopping: dev metrics of the kept weights


# -- set-up ----------------------------------------------------------------------------------
def pick_device(requested: str | None = None) -> torch.device:
    """``requested`` or ``RNNREPRO_DEVICE`` if set (e.g. "cpu"), else CUDA when available, else CPU."""
    name = requested or os.environ.get("RNNREPRO_DEVICE") or "auto"
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def deterministic_requested() -> bool:
    """``RNNREPRO_DETERMINISTIC``: deterministic kernels unless it is "0", "false", "no" or "off"."""
    return os.environ.get("RNNREPRO_DETERMINISTIC", "1").strip().lower() not in {"0", "false", "no", "off"}


def set_deterministic_algorithms(mode: bool, warn_only: bool = False) -> None:
    """``torch.use_deterministic_algorithms(mode, warn_only=warn_only)`` without importing
    ``torch._inductor`` when it is not loaded yet.

    The public function first imports ``torch._inductor.config`` (which imports ``torch._dynamo``:
    about 2 s, in every training process) only to copy ``mode`` into inductor's own flag, which
    ``torch.compile`` alone reads. Where inductor is loaded (something compiled), or torch lacks
    the private setter, this calls the public function; else it sets the one flag the kernels
    read, ``torch._C._set_deterministic_algorithms``, as the public function does."""
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None or "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        setter(mode, warn_only=warn_only)


class Kernels:
    """While active, torch runs deterministic kernels, or with ``RNNREPRO_DETERMINISTIC=0`` its
    fast ones (see the module docstring); the previous settings come back on exit, except
    ``CUBLAS_WORKSPACE_CONFIG``, which cuBLAS reads once. torch's warning that an op has no
    deterministic kernel is logged once per op and the op noted in every :class:`Progress`
    given to :meth:`record_in`. Entering it also keeps the memory the process frees for its next
    step (:func:`rnnrepro.allocator.keep_freed_memory`: once per process, not undone)."""

    #: torch's warning (``warn_only``) for an op without a deterministic kernel; group 1 is the op.
    NONDETERMINISTIC = re.compile(r"(\S+) does not have a deterministic implementation")

    def __init__(self):
        self.deterministic = deterministic_requested()
        self.ops: list[str] = []
        self.progresses: list[Progress] = []

    def __enter__(self) -> "Kernels":
        keep_freed_memory()  # process-wide, once, not undone on exit (rnnrepro.allocator)
        if self.deterministic and "CUBLAS_WORKSPACE_CONFIG" not in os.environ:
            os.environ["CUBLAS_WORKSPACE_CONFIG"] = CUBLAS_WORKSPACE_CONFIG
            if torch.cuda.is_initialized():
                log.warning("CUBLAS_WORKSPACE_CONFIG set after CUDA started in this process: cuBLAS may ignore "
                            "it; set it to %s in the environment to be sure", CUBLAS_WORKSPACE_CONFIG)
        self.saved = (torch.are_deterministic_algorithms_enabled(),
                      torch.is_deterministic_algorithms_warn_only_enabled(),
                      torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
        set_deterministic_algorithms(self.deterministic, warn_only=True)
        torch.backends.cudnn.deterministic = self.deterministic
        torch.backends.cudnn.benchmark = not self.deterministic
        self.caught = warnings.catch_warnings()
        self.caught.__enter__()
        warnings.filterwarnings("always", message=self.NONDETERMINISTIC.pattern)
        self.show = warnings.showwarning
        warnings.showwarning = self.note
        return self

    def __exit__(self, *exc) -> None:
        self.caught.__exit__(*exc)
        mode, warn_only, cudnn_deterministic, cudnn_benchmark = self.saved
        set_deterministic_algorithms(mode, warn_only=warn_only)
        torch.backends.cudnn.deterministic = cudnn_deterministic
        torch.backends.cudnn.benchmark = cudnn_benchmark

    def note(self, message, category, filename, lineno, file=None, line=None) -> None:
        """``warnings.showwarning`` while active: torch's warning about an op without a
        deterministic kernel is noted; any other warning is shown as before."""
        found = self.NONDETERMINISTIC.match(str(message))
        if found is None:
            self.show(message, category, filename, lineno, file, line)
            return
        op = found.group(1)
        if op not in self.ops:
            self.ops.append(op)
            log.warning("%s has no deterministic kernel on this device: it runs its nondeterministic one, so a "
                        "rerun's numbers may differ (by rounding, which training can amplify); provenance lists "
                        "it in nondeterministic_ops", op)
        for progress in self.progresses:
            if op not in progress.nondeterministic_ops:
                progress.nondeterministic_ops.append(op)

    def record_in(self, progress: Progress) -> None:
        """Note this session's kernels in ``progress`` (which every checkpoint keeps): whether
        every session was deterministic, and the ops without a deterministic kernel, from now on."""
        progress.deterministic = progress.deterministic and self.deterministic
        self.progresses.append(progress)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def make_optimizer(params, cfg: TrainConfig) -> torch.optim.Optimizer:
    """The optimiser of ``cfg``. Adagrad's update is lr·g_t / sqrt(a_0 + Σ_{k≤t} g_k²) with
    a_0 = ``initial_accumulator``: torch's default a_0 = 0 makes the first step ±lr for every
    parameter with a gradient, while TensorFlow 1 (the elstm authors' framework) starts at 0.1.

    On the CPU the update runs as torch's fused kernel (:func:`fused_on`): the same update, one
    kernel per parameter instead of a Python loop of element-wise operations; its rounding differs
    from the loop's in the last bits (1e-7 relative), and whole runs of small models took 0.80-0.98 of the time
    (benchmarks/bench_optimizer.py). Elsewhere torch picks its own implementation."""
    params = list(params)
    fused = fused_on(params)
    if cfg.optimizer == "adagrad":
        return torch.optim.Adagrad(params, lr=cfg.lr, initial_accumulator_value=cfg.initial_accumulator, fused=fused)
    if cfg.initial_accumulator:
        raise ValueError(f"initial_accumulator is an Adagrad setting; optimizer is {cfg.optimizer!r}")
    optimizers = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
    return optimizers[cfg.optimizer](params, lr=cfg.lr, fused=fused)


def fused_on(params: list) -> bool | None:
    """True when every parameter is a dense floating-point tensor on the CPU, where torch's fused
    optimiser kernels replace a Python loop over parameters; None (torch's default) otherwise,
    parameter groups (dicts) included."""
    if params and all(isinstance(p, torch.Tensor) and p.device.type == "cpu" and p.is_floating_point()
                      and not p.is_sparse for p in params):
        return True
    return None


def build_run(run: dict, data: str | Path | None) -> tuple[Task, nn.Module]:
    """The task and the model of a run config (see rnnrepro.plan.studies for its layout)."""
    task_params = dict(run["task"])
    task = build_task(task_params.pop("name"), data=data, **task_params)
    return task, build_model_for(run, task)


def build_model_for(run: dict, task: Task) -> nn.Module:
    """The model of a run config for its built ``task`` (whose ``io`` sizes it)."""
    model_params = dict(run["model"])
    cell_params = dict(run["cell"])
    model = build_model(model_params.pop("name"), task.io, cell_params.pop("name"),
                        cell_params=cell_params, **model_params)
    if task.stateful and state_obstacle(model) is not None:
        raise ValueError(f"task {run['task']['name']!r} with stateful=True carries the model's state from one "
                         f"batch to the next; {state_obstacle(model)}")
    return model


def epoch_generator(seed: int, epoch: int) -> torch.Generator:
    """The generator that orders the training data of ``epoch``: a function of (seed, epoch) only."""
    return torch.Generator().manual_seed(seed * 1_000_003 + epoch)


# -- checkpoints -----------------------------------------------------------------------------
def rng_state() -> dict[str, Any]:
    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "random": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["random"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def checkpoint_key(run: dict, identity: dict | None) -> dict:
    """What a checkpoint must match to be resumed: the run config and its data and code identity."""
    return {"run": run, **(identity or {})}


@dataclass
class Resumed:
    """What a checkpoint restores besides the model, optimiser and RNG states."""

    progress: Progress
    carried: Any = None  # the model's recurrent state after the last batch (stateful tasks)
    best_model: dict[str, torch.Tensor] | None = None  # the kept weights (early stopping)


def save_checkpoint(path: Path, key: dict, model: nn.Module, optimizer, progress: Progress,
                    carried: Any = None, best_model: dict[str, torch.Tensor] | None = None) -> None:
    """Write the resume state to ``path`` atomically; a full disk raises :class:`atomic.DiskFullError`
    naming it, and the previous checkpoint stays intact, so the run resumes once there is space."""
    write_checkpoint(path, key, model.state_dict(), optimizer.state_dict(), progress, carried, best_model)


def write_checkpoint(path: Path, key: dict, model_state: dict, optimizer_state: dict, progress: Progress,
                     carried: Any = None, best_model: dict[str, torch.Tensor] | None = None) -> None:
    """:func:`save_checkpoint` from state dicts (a packed run writes its own slice of the pack's)."""
    payload = {"format": 3, "key": key, "model": model_state, "optimizer": optimizer_state,
               "rng": rng_state(), "progress": dataclasses.asdict(progress),
               "carried_state": carried, "best_model": best_model}
    body = torch_bytes(payload)
    with atomic.atomic_path(path) as tmp:
        tmp.write_bytes(body + CHECKSUM_MARKER + hashlib.sha256(body).hexdigest().encode())


def torch_bytes(payload: Any) -> bytes:
    """``payload`` as ``torch.save`` writes it, to memory: the same content gives the same bytes,
    whatever file they go to (saved to a path, torch names the archive's inner folder after the
    file, here a temporary name, so equal numbers gave other bytes and another sha256 each time)."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    return buffer.getvalue()


def checkpoint_payload(data: bytes) -> Any:
    """The payload of a checkpoint's bytes, once its sha256 matches; a ValueError says what is wrong."""
    body, marker, digest = data.rpartition(CHECKSUM_MARKER)
    if not marker:
        raise ValueError("it ends without its checksum (cut short, or written by an older version)")
    if hashlib.sha256(body).hexdigest().encode() != digest:
        raise ValueError("its content does not match its sha256 (garbled)")
    return torch.load(io.BytesIO(body), map_location="cpu", weights_only=False)


def read_checkpoint(path: Path) -> dict | None:
    """The payload of checkpoint ``path``; None when there is none, or when it cannot be read
    (empty, truncated, or garbled: its sha256 does not match, what a node crash during a write or
    a damaged disk can leave): then it is set aside as ``<name>.corrupt``, the error logged with
    its name. A file that cannot be opened at all (permissions) raises."""
    if not path.exists():
        return None
    try:
        payload = checkpoint_payload(path.read_bytes())
    except (PermissionError, IsADirectoryError):
        raise
    except Exception as error:  # noqa: BLE001 - torch.load fails with EOFError, OSError, RuntimeError, KeyError ...
        problem = f"{type(error).__name__}: {error}"
    else:
        if isinstance(payload, dict):
            return payload
        problem = f"holds a {type(payload).__name__}, not a checkpoint"
    corrupt = path.with_name(path.name + ".corrupt")
    os.replace(path, corrupt)
    log.warning("checkpoint %s cannot be read (%s); kept as %s, starting afresh", path, problem, corrupt)
    return None


def load_checkpoint(path: Path, key: dict, model: nn.Module, optimizer) -> Resumed | None:
    """Restore a checkpoint of this very run and identity; None (start afresh) when there is
    none, it cannot be read (set aside, :func:`read_checkpoint`) or it belongs to another
    config, dataset or training code. The carried state and kept weights come back on the CPU."""
    payload = read_checkpoint(path)
    if payload is None:
        return None
    if payload.get("key") != key:
        stale = path.with_name(CHECKPOINT + ".stale")
        os.replace(path, stale)
        log.warning("checkpoint %s belongs to another configuration, dataset or training code; kept as %s, "
                    "starting afresh", path, stale)
        return None
    model.load_state_dict(payload["model"])
    optimizer.load_state_dict(payload["optimizer"])
    set_rng_state(payload["rng"])
    progress = Progress(**payload["progress"])
    progress.curve = [tuple(point) for point in progress.curve]
    log.info("resuming %s at step %d (epoch %d, batch %d)", path, progress.step, progress.epoch, progress.batch_in_epoch)
    return Resumed(progress, payload.get("carried_state"), payload.get("best_model"))


# -- signals and progress display -----------------------------------------------------------------
class StopSignals:
    """While active, SIGTERM/SIGUSR1 only set ``received``; the loop checks it between steps."""

    SIGNALS = (signal.SIGTERM, signal.SIGUSR1)

    def __init__(self):
        self.received: str | None = None
        self._previous = {}

    def _handle(self, signum, _frame):
        self.received = signal.Signals(signum).name

    def __enter__(self):
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


class ProgressReport:
    """A log line every ``interval`` seconds: step, epoch, loss and throughput."""

    def __init__(self, total_steps: int, interval: float):
        self.total = total_steps
        self.interval = interval
        self.start = self.last = time.monotonic()
        self.start_step: int | None = None

    def update(self, progress: Progress, loss: float) -> None:
        now = time.monotonic()
        if self.start_step is None:
            self.start_step = progress.step - 1
        if now - self.last < self.interval and progress.step != self.total:
            return
        self.last = now
        rate = (progress.step - self.start_step) / max(now - self.start, 1e-9)
        log.info("step %d/%d (%.0f%%) epoch %d loss %.4f %.1f steps/s", progress.step, self.total,
                 100 * progress.step / max(self.total, 1), progress.epoch + 1, loss, rate)


# -- the loop ----------------------------------------------------------------------------------
def gradient_norm(parameters) -> float:
    """The global gradient norm sqrt(Σ_p ‖∂E/∂θ_p‖₂²) over the parameters that have a gradient."""
    grads = [p.grad for p in parameters if p.grad is not None]
    return float(nn.utils.get_total_norm(grads)) if grads else 0.0


def train_step(model: nn.Module, task: Task, batch, optimizer, cfg: TrainConfig,
               carried: Any = None, *, grad_norms: list[float] | None = None) -> tuple[float, Any]:
    """One optimiser step on ``batch``; returns the loss and, for stateful tasks, the model's
    state after the batch, detached (None otherwise). ``carried`` is the state to start from
    (stateful tasks; None: zeros). ``grad_norms``, when given (the loop gives it with
    ``cfg.log_grad_norm``), receives the step's gradient norm before clipping.

    A model with auxiliary predictions (the DBRNN's forward and backward ones) is trained on the
    sum of every prediction's loss; the loss returned (the training curve, ``train_loss``) is the
    main prediction's, the one its metrics are computed from, so that training losses (and
    perplexities) compare across models."""
    if not model.training:  # after an evaluation; train() walks every module, each step adds up
        model.train()
    optimizer.zero_grad(set_to_none=True)
    if task.stateful:
        output, carried = forward_with_state(model, batch, carried)
        carried = detach_state(carried)
    else:
        output = model(batch)
    loss = task.total_loss(output, batch)
    value = float(loss.detach())
    if not math.isfinite(value):
        return value, carried
    if isinstance(output, Predictions):
        value = float(task.loss(output.main, batch).detach())
    loss.backward()
    if grad_norms is not None:
        grad_norms.append(gradient_norm(model.parameters()))
    if cfg.clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
    if cfg.clip_value is not None:
        nn.utils.clip_grad_value_(model.parameters(), cfg.clip_value)
    optimizer.step()
    return value, carried


def evaluate(model: nn.Module, task: Task, splits: tuple[str, ...], cfg: TrainConfig, device) -> dict[str, float]:
    model.eval()
    metrics: dict[str, float] = {}
    for split in splits:
        metrics.update(task.evaluate(model, split, cfg.eval_batch_size, device))
    return metrics


def final_evaluation(model: nn.Module, task: Task, cfg: TrainConfig, device,
                     dev: dict[str, float] | None = None) -> tuple[dict[str, float], SplitItems | None]:
    """The dev and test metrics of the trained model, and its test items when the task records
    them (:meth:`Task.item_formulas`), kept for the paired bootstrap of the report. ``dev``: the
    dev metrics of these very weights when an epoch's end measured them, not measured again."""
    formulas = task.item_formulas()
    metrics = dict(dev) if dev is not None else evaluate(model, task, ("dev",), cfg, device)
    if not formulas:
        return {**metrics, **evaluate(model, task, ("test",), cfg, device)}, None
    model.eval()
    recorder = ItemRecorder(task.item_unit)
    metrics.update(task.evaluate(model, "test", cfg.eval_batch_size, device, items=recorder))
    return metrics, recorder.items("test", formulas)


def provenance(device: torch.device, seconds: float, progress: Progress) -> dict[str, Any]:
    """Where and how a run's numbers were made (not part of its identity)."""
    return {"device": str(device), "torch": torch.__version__, "threads": torch.get_num_threads(),
            "python": sys.version.split()[0],
            **{name: switch_value(name) or "" for name in SWITCHES},
            "deterministic": progress.deterministic, "nondeterministic_ops": " ".join(progress.nondeterministic_ops),
            "wall_seconds": round(seconds, 3)}


def train_run(run: dict, out_dir: str | Path, data: str | Path | None = None,
              device: str | None = None, progress_interval: float = 10.0,
              identity: dict | None = None) -> dict[str, float]:
    """Train one run into ``out_dir``, resuming from its checkpoint; return its metrics.

    ``run`` is the run config (task, model, cell, train, seed); ``data`` the prepared dataset
    file when the task reads one; ``identity`` the data and code identities the checkpoint
    must also match (the workflow passes them).
    """
    out_dir = Path(out_dir)
    with Kernels() as kernels:  # first: CUBLAS_WORKSPACE_CONFIG must be set before CUDA starts
        return train_run_with(kernels, run, out_dir, data, device, progress_interval, identity)


def train_run_with(kernels: Kernels, run: dict, out_dir: Path, data: str | Path | None, device: str | None,
                   progress_interval: float, identity: dict | None) -> dict[str, float]:
    """:func:`train_run` with its kernels chosen."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in atomic.remove_stale_temporaries(out_dir):
        log.warning("removed %s, the temporary file of a write that was cut short", stale)
    started = time.monotonic()
    cfg = TrainConfig(**run.get("train", {}))
    device = pick_device(device)
    seed_everything(run["seed"])
    task, model = build_run(run, data)
    model.to(device)
    optimizer = make_optimizer(model.parameters(), cfg)
    check_watched(run, cfg)
    checkpoint = out_dir / CHECKPOINT
    key = checkpoint_key(run, identity)
    resumed = load_checkpoint(checkpoint, key, model, optimizer) or Resumed(Progress())
    progress = resumed.progress
    kernels.record_in(progress)
    carried = move_state(resumed.carried, device)  # the model's state after the last batch (stateful tasks)
    best_model = resumed.best_model  # the kept weights (early stopping), on the CPU
    seconds_before = progress.seconds
    n_params = sum(p.numel() for p in model.parameters())
    log.info("run %s: %d parameters on %s", out_dir, n_params, device)

    saved_at = time.monotonic()

    def save() -> None:
        nonlocal saved_at
        progress.seconds = seconds_before + time.monotonic() - started
        save_checkpoint(checkpoint, key, model, optimizer, progress, carried, best_model)
        saved_at = time.monotonic()

    steps_per_epoch = len(task.batches("train", cfg.batch_size, epoch_generator(run["seed"], 0)))
    report = ProgressReport(cfg.epochs * steps_per_epoch, progress_interval)
    with StopSignals() as stop:
        while not training_done(progress, cfg):
            for group in optimizer.param_groups:
                group["lr"] = cfg.lr_at(progress.epoch)
            batches = task.batches("train", cfg.batch_size, epoch_generator(run["seed"], progress.epoch))
            for batch in batches[progress.batch_in_epoch:]:
                logging = {"grad_norms": progress.grad_window} if cfg.log_grad_norm else {}
                loss, carried = train_step(model, task, batch.to(device), optimizer, cfg, carried, **logging)
                if not math.isfinite(loss):
                    where = (f"step {progress.step + 1} (epoch {progress.epoch + 1}, "
                             f"batch {progress.batch_in_epoch + 1})")
                    if cfg.on_nonfinite == "raise":
                        raise NonFiniteLoss(f"loss is {loss} at {where} of run {out_dir}")
                    progress.step += 1
                    progress.diverged_step = progress.step
                    progress.curve.append((progress.step, progress.epoch + 1, "train_loss", loss))
                    log.warning("loss is %s at %s: the run diverged; recorded as its result", loss, where)
                    break
                record_step(progress, loss, cfg)
                report.update(progress, loss)
                if stop.received:
                    save()
                    raise TrainingInterrupted(f"{stop.received} at step {progress.step}: checkpoint written to "
                                              f"{checkpoint}; run again to resume")
                if progress.step % cfg.checkpoint_every == 0:
                    save()
            if progress.diverged_step is not None:
                save()
                break
            carried = None  # every epoch starts from the zero state
            if end_epoch(progress, evaluate(model, task, ("dev",), cfg, device), task, cfg):
                best_model = cpu_copy(model.state_dict())
            if stop.received:  # it arrived during the dev evaluation
                save()
                raise TrainingInterrupted(f"{stop.received} at step {progress.step}, in the dev evaluation of epoch "
                                          f"{progress.epoch}: checkpoint written to {checkpoint}; run again to resume")
            if training_done(progress, cfg) or time.monotonic() - saved_at >= EPOCH_CHECKPOINT_SECONDS:
                save()

        seconds = seconds_before + time.monotonic() - started
        metrics = finish_run(out_dir, run, task, model, cfg, device, progress, best_model,
                             provenance(device, seconds, progress), stop)
        if stop.received:
            log.warning("%s arrived while the outputs were written: they are complete, the run is finished",
                        stop.received)
    return metrics


def record_step(progress: Progress, loss: float, cfg: TrainConfig) -> None:
    """Count one finished optimiser step of loss ``loss``; every ``log_every`` steps the mean
    training loss (and gradient norm) since the last point goes on the curve."""
    progress.step += 1
    progress.batch_in_epoch += 1
    progress.epoch_loss += loss
    progress.window.append(loss)
    if len(progress.window) == cfg.log_every:
        progress.curve.append((progress.step, progress.epoch + 1, "train_loss",
                               sum(progress.window) / len(progress.window)))
        progress.window = []
        if progress.grad_window:
            progress.curve.append((progress.step, progress.epoch + 1, "grad_norm",
                                   sum(progress.grad_window) / len(progress.grad_window)))
            progress.grad_window = []


def end_epoch(progress: Progress, dev: dict[str, float], task: Task, cfg: TrainConfig) -> bool:
    """Close the epoch whose dev metrics are ``dev``: curve (the task's dev metric, and the
    watched one when it differs), counters, early stopping and ``stop_at`` (see the module
    docstring). True when the epoch improved on the best so far, i.e. its weights are to be kept."""
    watched = cfg.watched(task)
    for name in dict.fromkeys((task.dev_metric, watched)):
        progress.curve.append((progress.step, progress.epoch + 1, name, dev[name]))
    if cfg.lr_decay != 1.0:
        progress.curve.append((progress.step, progress.epoch + 1, "lr", cfg.lr_at(progress.epoch)))
    progress.last_epoch_loss = progress.epoch_loss / max(progress.batch_in_epoch, 1)
    progress.last_dev = dict(dev)
    progress.epoch += 1
    progress.batch_in_epoch = 0
    progress.epoch_loss = 0.0
    if not cfg.watches:
        return False
    value, goal = dev[watched], cfg.goal(task)
    if cfg.stop_at is not None and improves(value, cfg.stop_at, goal, 0.0) and progress.epoch < cfg.epochs:
        progress.stopped_early = True
        log.info("stop after epoch %d: %s = %.6g is better than stop_at %g", progress.epoch, watched, value, cfg.stop_at)
    if cfg.patience is None:
        return False
    if improves(value, progress.best_value, goal, cfg.min_delta):
        progress.best_value, progress.best_epoch = value, progress.epoch
        progress.kept_dev = dict(dev)
        progress.epochs_without_improvement = 0
        return True
    progress.epochs_without_improvement += 1
    if progress.epochs_without_improvement >= cfg.patience and progress.epoch < cfg.epochs and not progress.stopped_early:
        progress.stopped_early = True
        log.info("early stop after epoch %d: %s has not improved on %.6g (epoch %d) for %d epochs",
                 progress.epoch, watched, progress.best_value, progress.best_epoch, cfg.patience)
    return False


def check_watched(run: dict, cfg: TrainConfig) -> None:
    """Fail before training when ``monitor`` names a metric the run's task does not evaluate on
    its dev split (the workflow checks it when it reads a study, too)."""
    if cfg.monitor is None:
        return
    from .tasks import TASKS

    params = {key: value for key, value in run["task"].items() if key != "name"}
    dev = sorted(name for name in TASKS[run["task"]["name"]].emitted_metrics(**params) if name.startswith("dev_"))
    if cfg.monitor not in dev:
        raise ValueError(f"train.monitor = {cfg.monitor!r}: task {run['task']['name']!r} evaluates no such dev "
                         f"metric; it has {', '.join(dev)}")


def cpu_copy(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A detached copy of a state dict on the CPU (the kept weights of early stopping)."""
    return {name: tensor.detach().to("cpu", copy=True) for name, tensor in state.items()}


def training_done(progress: Progress, cfg: TrainConfig) -> bool:
    """Whether a run has nothing left to train: all epochs, stopped early, or diverged."""
    return progress.epoch >= cfg.epochs or progress.stopped_early or progress.diverged_step is not None


def finish_run(out_dir: Path, run: dict, task: Task, model: nn.Module, cfg: TrainConfig, device,
               progress: Progress, best_model: dict[str, torch.Tensor] | None,
               made: dict[str, Any], stop: StopSignals | None = None) -> dict[str, float]:
    """Evaluate the trained run (its kept weights, with early stopping) on test, its dev metrics
    those its epoch's end measured (:attr:`Progress.last_dev`, :attr:`Progress.kept_dev`), and write
    its outputs (:func:`write_outputs`, provenance ``made``); return its metrics. A stop signal
    received (``stop``) by the end of the evaluation raises :class:`TrainingInterrupted` before
    anything is written: the run's checkpoint is final, so its rerun only evaluates."""
    items = None
    if progress.diverged_step is not None:
        metrics = diverged_metrics(evaluate(model, task, ("dev", "test"), cfg, device), progress.diverged_step)
    else:
        if best_model is not None:
            model.load_state_dict(best_model)
        dev = progress.kept_dev if best_model is not None else progress.last_dev  # of the weights evaluated
        metrics, items = final_evaluation(model, task, cfg, device, dev)
        if cfg.on_nonfinite == "record":
            metrics["diverged"] = 0
    train_loss = progress.last_epoch_loss
    if progress.diverged_step is not None and not math.isfinite(train_loss):
        train_loss = None  # it diverged within its first epoch
    n_params = sum(p.numel() for p in model.parameters())
    metrics.update(train_loss=train_loss, steps=progress.step, params=n_params, epochs=progress.epoch)
    if cfg.patience is not None:
        metrics["best_epoch"] = progress.best_epoch
    if stop is not None and stop.received:
        raise TrainingInterrupted(f"{stop.received} during the final evaluation of run {out_dir}: its checkpoint is "
                                  f"final; run again to evaluate it and write its outputs")
    write_outputs(out_dir, run, progress, metrics, model, made, items)
    return metrics


def diverged_metrics(evaluated: dict[str, float], step: int) -> dict[str, Any]:
    """The metrics of a run that diverged at ``step``: every metric the task evaluates (only
    their names are kept) null, ``diverged`` = 1 and ``diverged_step``."""
    return {**{name: None for name in evaluated}, "diverged": 1, "diverged_step": step}


def improves(value: float, best: float | None, goal: str, min_delta: float) -> bool:
    """Whether dev value ``value`` improves on ``best`` by more than ``min_delta``: value < best - δ
    when ``goal`` is "min", value > best + δ when "max"; anything finite improves on None, NaN never."""
    if not math.isfinite(value):
        return False
    if best is None:
        return True
    return value < best - min_delta if goal == "min" else value > best + min_delta


def write_outputs(out_dir: Path, run: dict, progress: Progress, metrics: dict[str, float],
                  model: nn.Module, made: dict[str, Any], items: SplitItems | None = None) -> None:
    """config.json, curve.tsv, items.npz (the test items, empty when the task records none),
    metrics.json (with ``provenance``), then model.pt last: model.pt marks a finished run."""
    atomic.write_json(out_dir / "config.json", run)
    lines = ["step\tepoch\tmetric\tvalue"] + [f"{s}\t{e}\t{m}\t{v!r}" for s, e, m, v in progress.curve]
    atomic.write_text(out_dir / "curve.tsv", "\n".join(lines) + "\n")
    with atomic.atomic_path(out_dir / ITEMS_FILE) as tmp:
        if items is not None:
            items.save(tmp)
        else:
            save_no_items(tmp)
    atomic.write_json(out_dir / "metrics.json", {**metrics, "provenance": made})
    model_bytes = torch_bytes({"format": 1, "config": run, "model": model.state_dict()})
    with atomic.atomic_path(out_dir / MODEL) as tmp:
        tmp.write_bytes(model_bytes)


def load_trained(model_file: str | Path, data: str | Path | None = None) -> tuple[Task, nn.Module]:
    """The task and the trained model of a finished run, from its ``model.pt`` (in eval mode,
    on the CPU); ``data`` is the prepared dataset file when the run's task reads one."""
    payload = torch.load(model_file, map_location="cpu", weights_only=False)
    task, model = build_run(payload["config"], data)
    model.load_state_dict(payload["model"])
    return task, model.eval()


# -- command line -----------------------------------------------------------------------------
def settings_help(width: int = 100) -> str:
    """The ``train`` settings of a run config, with types, defaults and help (for --help)."""
    hints = typing.get_type_hints(TrainConfig)
    lines = ['settings of the config\'s "train" object [default]:']
    for item in dataclasses.fields(TrainConfig):
        hint = hints[item.name]
        if typing.get_origin(hint) is Literal:
            kind = " | ".join(map(str, typing.get_args(hint)))
        else:
            kind = getattr(hint, "__name__", None) or str(hint)
        lines += textwrap.wrap(f"  {item.name} ({kind}) [{json.dumps(item.default)}]: {item.metadata['help']}",
                               width, subsequent_indent="      ")
    lines += [""] + textwrap.wrap("The config's task, model and cell objects hold their constructors' keyword "
                                  "parameters (e.g. task lm: stateful; models basic, brnn, stacked, delayed: "
                                  "dropout, init_range, embedding_init, output_init).", width)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.train",
        description=textwrap.fill("Train one run from its config.json (as the workflow writes it) into OUT_DIR, "
                                  "resuming from OUT_DIR/checkpoint.pt when it exists. SIGTERM/SIGUSR1 write a "
                                  f"checkpoint and exit with {EXIT_INTERRUPTED}.", 100),
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=settings_help())
    parser.add_argument("config", type=Path, help="run config (JSON): task, model, cell, train, seed")
    parser.add_argument("out_dir", type=Path,
                        help="folder for config.json, curve.tsv, metrics.json, model.pt (and checkpoint.pt)")
    parser.add_argument("--data", type=Path, help="prepared dataset file, for tasks that read one")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: CUDA if available, else CPU)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)
    run = json.loads(args.config.read_text())
    try:
        train_run(run, args.out_dir, data=args.data, device=args.device)
    except TrainingInterrupted as stop:
        log.warning("%s", stop)
        return EXIT_INTERRUPTED
    except NonFiniteLoss as error:
        log.error("%s", error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
