"""The training loop and its contract.

- Same config and seed on the same machine give identical metrics: torch, numpy and random
  are seeded, the data order of epoch e comes from a generator seeded by (seed, e), and
  everything that changes during training is in the checkpoint.
- A run killed at any moment and started again continues from its last checkpoint
  (model, optimiser, RNG states, position in the epoch, curve so far) and ends with the
  same metrics as an uninterrupted run.
- SIGTERM or SIGUSR1 (what SLURM sends before preempting) makes the run finish its
  current step, write a checkpoint and exit with :data:`EXIT_INTERRUPTED`.
- Outputs (config.json, curve.tsv, metrics.json, checkpoint.pt) appear atomically.
- A NaN or infinite loss stops the run with an error naming the step.
- The device is chosen at run time: CUDA when present, else the CPU
  (``RNNREPRO_DEVICE`` overrides).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from . import atomic
from .models import build_model
from .tasks import Task, build_task

log = logging.getLogger("rnnrepro.train")

EXIT_INTERRUPTED = 143  # 128 + SIGTERM: "stopped on request, resumable"
CHECKPOINT = "checkpoint.pt"


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings of a run (the ``train:`` section of a study file)."""

    epochs: int = 1  # passes over the training split
    batch_size: int = 20  # sequences per step
    optimizer: Literal["sgd", "adam", "adagrad"] = "adagrad"
    lr: float = 0.5  # learning rate
    initial_accumulator: float = 0.0  # Adagrad's starting sum of squared gradients (TensorFlow 1's default is 0.1)
    clip: float | None = None  # largest global gradient norm; None: no clipping
    clip_value: float | None = None  # clip each gradient entry to [-v, v] (the PRU paper's "threshold at ±1")
    checkpoint_every: int = 100  # steps between checkpoints (one is also written at each epoch end)
    log_every: int = 20  # steps between points of the train_loss curve
    eval_batch_size: int = 100  # sequences per evaluation batch


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


# -- set-up ----------------------------------------------------------------------------------
def pick_device(requested: str | None = None) -> torch.device:
    """``requested`` or ``RNNREPRO_DEVICE`` if set (e.g. "cpu"), else CUDA when available, else CPU."""
    name = requested or os.environ.get("RNNREPRO_DEVICE") or "auto"
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def make_optimizer(params, cfg: TrainConfig) -> torch.optim.Optimizer:
    """The optimiser of ``cfg``. Adagrad's update is lr·g_t / sqrt(a_0 + Σ_{k≤t} g_k²) with
    a_0 = ``initial_accumulator``: torch's default a_0 = 0 makes the first step ±lr for every
    parameter with a gradient, while TensorFlow 1 (the elstm authors' framework) starts at 0.1."""
    if cfg.optimizer == "adagrad":
        return torch.optim.Adagrad(params, lr=cfg.lr, initial_accumulator_value=cfg.initial_accumulator)
    if cfg.initial_accumulator:
        raise ValueError(f"initial_accumulator is an Adagrad setting; optimizer is {cfg.optimizer!r}")
    optimizers = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}
    return optimizers[cfg.optimizer](params, lr=cfg.lr)


def build_run(run: dict, data: str | Path | None) -> tuple[Task, nn.Module]:
    """The task and the model of a run config (see rnnrepro.studies for its layout)."""
    task_params = dict(run["task"])
    task = build_task(task_params.pop("name"), data=data, **task_params)
    model_params = dict(run["model"])
    cell_params = dict(run["cell"])
    model = build_model(model_params.pop("name"), task.io, cell_params.pop("name"),
                        cell_params=cell_params, **model_params)
    return task, model


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


def save_checkpoint(path: Path, run: dict, model: nn.Module, optimizer, progress: Progress) -> None:
    payload = {"format": 1, "config": run, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
               "rng": rng_state(), "progress": dataclasses.asdict(progress)}
    with atomic.atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_checkpoint(path: Path, run: dict, model: nn.Module, optimizer) -> Progress | None:
    """Restore a checkpoint of this very config; None (start afresh) when there is none or it is another config's."""
    if not path.exists():
        return None
    payload = torch.load(path, map_location="cpu", weights_only=False)
    if payload.get("config") != run:
        stale = path.with_name(CHECKPOINT + ".stale")
        os.replace(path, stale)
        log.warning("checkpoint %s belongs to another configuration; kept as %s, starting afresh", path, stale)
        return None
    model.load_state_dict(payload["model"])
    optimizer.load_state_dict(payload["optimizer"])
    set_rng_state(payload["rng"])
    progress = Progress(**payload["progress"])
    progress.curve = [tuple(point) for point in progress.curve]
    log.info("resuming %s at step %d (epoch %d, batch %d)", path, progress.step, progress.epoch, progress.batch_in_epoch)
    return progress


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
def train_step(model: nn.Module, task: Task, batch, optimizer, cfg: TrainConfig) -> float:
    model.train()
    optimizer.zero_grad(set_to_none=True)
    loss = task.total_loss(model(batch), batch)
    value = float(loss.detach())
    if not math.isfinite(value):
        return value
    loss.backward()
    if cfg.clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
    if cfg.clip_value is not None:
        nn.utils.clip_grad_value_(model.parameters(), cfg.clip_value)
    optimizer.step()
    return value


def evaluate(model: nn.Module, task: Task, splits: tuple[str, ...], cfg: TrainConfig, device) -> dict[str, float]:
    model.eval()
    metrics: dict[str, float] = {}
    for split in splits:
        metrics.update(task.evaluate(model, split, cfg.eval_batch_size, device))
    return metrics


def train_run(run: dict, out_dir: str | Path, data: str | Path | None = None,
              device: str | None = None, progress_interval: float = 10.0) -> dict[str, float]:
    """Train one run into ``out_dir``, resuming from its checkpoint; return its metrics.

    ``run`` is the run config (task, model, cell, train, seed, ...); ``data`` the prepared
    dataset file when the task reads one.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = TrainConfig(**run.get("train", {}))
    device = pick_device(device)
    seed_everything(run["seed"])
    task, model = build_run(run, data)
    model.to(device)
    optimizer = make_optimizer(model.parameters(), cfg)
    checkpoint = out_dir / CHECKPOINT
    progress = load_checkpoint(checkpoint, run, model, optimizer) or Progress()
    n_params = sum(p.numel() for p in model.parameters())
    log.info("run %s: %d parameters on %s", run.get("run", out_dir), n_params, device)

    steps_per_epoch = len(task.batches("train", cfg.batch_size, epoch_generator(run["seed"], 0)))
    report = ProgressReport(cfg.epochs * steps_per_epoch, progress_interval)
    with StopSignals() as stop:
        while progress.epoch < cfg.epochs:
            batches = task.batches("train", cfg.batch_size, epoch_generator(run["seed"], progress.epoch))
            for batch in batches[progress.batch_in_epoch:]:
                loss = train_step(model, task, batch.to(device), optimizer, cfg)
                if not math.isfinite(loss):
                    raise NonFiniteLoss(f"loss is {loss} at step {progress.step + 1} "
                                        f"(epoch {progress.epoch + 1}, batch {progress.batch_in_epoch + 1}) "
                                        f"of run {run.get('run', out_dir)}")
                progress.step += 1
                progress.batch_in_epoch += 1
                progress.epoch_loss += loss
                progress.window.append(loss)
                if len(progress.window) == cfg.log_every:
                    progress.curve.append((progress.step, progress.epoch + 1, "train_loss",
                                           sum(progress.window) / len(progress.window)))
                    progress.window = []
                report.update(progress, loss)
                if stop.received:
                    save_checkpoint(checkpoint, run, model, optimizer, progress)
                    raise TrainingInterrupted(f"{stop.received} at step {progress.step}: checkpoint written to "
                                              f"{checkpoint}; run again to resume")
                if progress.step % cfg.checkpoint_every == 0:
                    save_checkpoint(checkpoint, run, model, optimizer, progress)
            dev = evaluate(model, task, ("dev",), cfg, device)
            progress.curve.append((progress.step, progress.epoch + 1, task.dev_metric, dev[task.dev_metric]))
            progress.last_epoch_loss = progress.epoch_loss / max(progress.batch_in_epoch, 1)
            progress.epoch += 1
            progress.batch_in_epoch = 0
            progress.epoch_loss = 0.0
            save_checkpoint(checkpoint, run, model, optimizer, progress)

    metrics = evaluate(model, task, ("dev", "test"), cfg, device)
    metrics.update(train_loss=progress.last_epoch_loss, steps=progress.step, params=n_params)
    write_outputs(out_dir, run, progress, metrics)
    return metrics


def write_outputs(out_dir: Path, run: dict, progress: Progress, metrics: dict[str, float]) -> None:
    """config.json, curve.tsv, then metrics.json last: metrics.json marks a finished run."""
    atomic.write_json(out_dir / "config.json", run)
    lines = ["step\tepoch\tmetric\tvalue"] + [f"{s}\t{e}\t{m}\t{v!r}" for s, e, m, v in progress.curve]
    atomic.write_text(out_dir / "curve.tsv", "\n".join(lines) + "\n")
    atomic.write_json(out_dir / "metrics.json", metrics)


# -- command line -----------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.train",
        description="Train one run from its config.json (as the workflow writes it) into OUT_DIR, "
                    "resuming from OUT_DIR/checkpoint.pt when it exists. SIGTERM/SIGUSR1 write a "
                    f"checkpoint and exit with {EXIT_INTERRUPTED}.")
    parser.add_argument("config", type=Path, help="run config (JSON): task, model, cell, train, seed")
    parser.add_argument("out_dir", type=Path, help="folder for config.json, curve.tsv, metrics.json, checkpoint.pt")
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
