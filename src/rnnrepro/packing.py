"""Packed training: independent small runs of one architecture trained together, as one batched model.

Which runs pack (:func:`rnnrepro.plan.packs.pack_key`). Runs whose configs are equal except for the seed and the
task's data parameters (``Task.data_params``: a data seed, the sine filter's γ and
acausality), of a task that declares itself ``packable`` (every batch has the same shapes and
lengths whatever those parameters are), without carried state, without dropout (one vmapped
generator cannot reproduce each run's own masks), with ``on_nonfinite: raise``, and with a
model no wider than ``max_hidden`` units. On a CPU the batched form pays only where a run is
far too small to keep a core busy: measured by ``benchmarks/bench_pack.py`` (whole runs, one
thread), the 1-unit ELSTM and LSTM of elstm Fig. 5 train 2.6x and 2.1x faster packed (10 seeds),
while the sine filter's LSTMs of 8, 16, 32 and 100 units take 1.25x, 2.6x, 3.2x and 2.8x the
time of their runs one after another (torch's oneDNN LSTM, which a run alone uses, has no
batched form over weights); hence the default of 4 in config/config.yaml. On a GPU set it to
null: on an H100 16 sine-filter runs of 100 units took 9.4 s packed against 10.8 s one after
another (``python -m rnnrepro.preflight``), so there packing saves queue slots more than GPU time. :func:`rnnrepro.plan.packs.plan_packs` cuts each group, in
the order of its run folders, into packs of at most ``size`` runs of near-equal size. A pack is one Snakemake job (one SLURM job).

How a pack trains (:func:`train_pack`). Each member is built exactly as when alone (seeded by
its own seed, so its initial weights are the run's own), and its weights are stacked along a
new leading dimension, θ_p → Θ_p = [θ_p^(1); ...; θ_p^(N)]. One step computes every member's
loss on its own batch (its own data, in its own order: ``epoch_generator(seed, epoch)``) with
``torch.func.vmap`` over ``functional_call`` of the model, through the cells' reference loops
(which vmap batches: each matmul of a step becomes one bmm over the members), and
backpropagates Σ_i L_i, whose gradient with respect to member i's slice is ∂L_i/∂θ^(i). Adam,
Adagrad and SGD update every entry from its own gradient history, so one optimiser over the
stacked tensors is N optimisers. Global-norm clipping is per member, as
``torch.nn.utils.clip_grad_norm_`` does for a run alone:

    g^(i) ← g^(i) · min(1, c / (‖g^(i)‖₂ + 1e-6)),   ‖g^(i)‖₂ = sqrt(Σ_p ‖∂L_i/∂θ_p^(i)‖₂²).

Each member keeps its own folder: config.json, curve.tsv, items.npz, metrics.json, model.pt
and checkpoint.pt, which is a run-alone checkpoint of its slice (same format and key: a run
trained alone resumes from it, and a pack from a run's). Dev evaluation after every epoch,
early stopping, the final evaluation and the outputs are each member's own, computed with the
member's weights in a model of its own (the fast loops). A pack resumes from its members'
checkpoints: members at the same point train together again (to the bit: the same pack, the
same computation), others in packs of their own, one after another (each then ends within a
pack's tolerance of the uninterrupted pack, as a pack does of its runs alone, not to the bit:
it trains in another pack, another order of the same computation); once a member is finished (all epochs, or stopped early) it is written out
and the others go on as a smaller pack. ``metrics.json``'s provenance says ``packed_runs``
(how many runs trained together) and its ``wall_seconds`` is the member's share of the pack's.

Equality with the run alone: the same equations on the same data from the same initial
weights; the pack runs the reference loops batched (a matmul of each member becomes one bmm),
a run alone the fast loops (or oneDNN), so each step agrees to float rounding (float32: about
6e-8 relative per operation), and training carries the difference forward. How far it grows
is the run's own property, not the pack's: a perturbation δ of the weights goes through every
update θ ← θ - η·u(θ) as δ ← (I - η·∂u/∂θ)·δ, which shrinks it where training contracts and
grows it, without a bound known in advance, where it does not (a plateau whose end rounding
decides). Any other order of the same computation does the same, so no fixed tolerance holds
for every run. Measured on this project's CPU: after the few epochs of tests/test_packing.py a
packed run is within 2.2e-6 (relative) of the run alone, as close as the run alone is to
itself with RNNREPRO_FUSED=0 (2.3e-6); the test allows max(1e-4, 10 times that difference).
elstm Fig. 5 at T = 10 with the paper's settings (2,000 epochs, a plateau of hundreds of steps
first), seeds 1-10 of each cell: 11 of the 20 packed runs end within 1e-6 of the run alone, 6
by about 1e-4 to 4 %, and 3 elsewhere (fitted on one side, not on the other), as the run alone
does with another switch: seed 9's LSTM ends with dev loss 3.2e-4 with RNNREPRO_FUSED=0 and
0.311 without it, seed 3's ELSTM 0.292 with RNNREPRO_TORCHSCRIPT=0 and 0.0072 without it.
"""
from __future__ import annotations

import logging
import math
import resource
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from . import atomic
from .cells import reference_loops
from .tasks import Predictions, Task
from .tasks.base import Batch
from .train import (CHECKPOINT, EPOCH_CHECKPOINT_SECONDS, Kernels, NonFiniteLoss, Progress, ProgressReport, Resumed,
                    StopSignals, TrainConfig, TrainingInterrupted, build_run, checkpoint_key, cpu_copy, end_epoch,
                    epoch_generator, evaluate, finish_run, load_checkpoint, make_optimizer, pick_device, provenance,
                    record_step, save_checkpoint, seed_everything, training_done)

log = logging.getLogger("rnnrepro.packing")


class PackError(ValueError):
    """Runs that cannot train as one pack."""


# -- training ----------------------------------------------------------------------------------
@dataclass
class Member:
    """One run of a pack: its config, folder, task, a model and optimiser of its own (which hold
    its slice between pack steps, for evaluation and checkpoints) and its progress."""

    run: dict
    out_dir: Path
    key: dict
    task: Task
    model: nn.Module
    optimizer: torch.optim.Optimizer
    progress: Progress
    best_model: dict[str, torch.Tensor] | None = None
    metrics: dict[str, Any] | None = None

    def save(self) -> None:
        save_checkpoint(self.out_dir / CHECKPOINT, self.key, self.model, self.optimizer, self.progress,
                        None, self.best_model)


def load_member(run: dict, out_dir: Path, data, device: torch.device, identity: dict | None) -> Member:
    """A run built as it would be alone (same seed, same initial weights), resumed from its
    checkpoint when it has one of the same key (the folder's stale temporary files removed first)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in atomic.remove_stale_temporaries(out_dir):
        log.warning("removed %s, the temporary file of a write that was cut short", stale)
    cfg = TrainConfig(**run.get("train", {}))
    seed_everything(run["seed"])
    task, model = build_run(run, data)
    model.to(device)
    optimizer = make_optimizer(model.parameters(), cfg)
    key = checkpoint_key(run, identity)
    resumed = load_checkpoint(out_dir / CHECKPOINT, key, model, optimizer) or Resumed(Progress())
    return Member(run, out_dir, key, task, model, optimizer, resumed.progress, resumed.best_model)


def check_packable(members: list[Member]) -> TrainConfig:
    """The pack's one training config; a :class:`PackError` names what keeps runs apart."""
    first = members[0]
    cfg = TrainConfig(**first.run.get("train", {}))
    shapes = {name: p.shape for name, p in first.model.named_parameters()}
    for member in members:
        where = f"run {member.out_dir}"
        if TrainConfig(**member.run.get("train", {})) != cfg:
            raise PackError(f"{where}: its train settings differ from {first.out_dir}'s; a pack trains with one")
        if type(member.task) is not type(first.task) or not member.task.packable or member.task.stateful:
            raise PackError(f"{where}: task {type(member.task).__name__} does not pack with "
                            f"{type(first.task).__name__} (packable tasks without carried state only)")
        if {name: p.shape for name, p in member.model.named_parameters()} != shapes:
            raise PackError(f"{where}: its model's parameters differ from {first.out_dir}'s")
        if any(isinstance(m, nn.Dropout) and m.p > 0 for m in member.model.modules()):
            raise PackError(f"{where}: dropout cannot be packed (each run draws its own masks)")
    if cfg.on_nonfinite != "raise":
        raise PackError("on_nonfinite: record cannot be packed (a diverged member would stop the others)")
    return cfg


def train_pack(runs: list[dict], out_dirs: list[str | Path], data: str | Path | None = None,
               device: str | None = None, identities: list[dict | None] | None = None,
               progress_interval: float = 10.0) -> list[dict[str, Any]]:
    """Train ``runs`` (run configs, see rnnrepro.train) together into ``out_dirs``, resuming each
    from its checkpoint; return their metrics, in order. ``identities``: the data and code
    identities each checkpoint must also match (the workflow passes them). Kernels and stop
    signals as for a run alone (:func:`rnnrepro.train.train_run`)."""
    if len(runs) != len(out_dirs):
        raise ValueError(f"{len(runs)} runs for {len(out_dirs)} folders")
    with Kernels() as kernels:  # first: CUBLAS_WORKSPACE_CONFIG must be set before CUDA starts
        return train_pack_with(kernels, runs, out_dirs, data, device, identities, progress_interval)


def train_pack_with(kernels: Kernels, runs: list[dict], out_dirs: list[str | Path], data: str | Path | None,
                    device: str | None, identities: list[dict | None] | None,
                    progress_interval: float) -> list[dict[str, Any]]:
    """:func:`train_pack` with its kernels chosen."""
    started = time.monotonic()
    device = pick_device(device)
    identities = identities or [None] * len(runs)
    members = [load_member(run, Path(out), data, device, identity)
               for run, out, identity in zip(runs, out_dirs, identities)]
    for member in members:
        kernels.record_in(member.progress)
    cfg = check_packable(members)
    log.info("pack of %d runs on %s: %d parameters each", len(members), device,
             sum(p.numel() for p in members[0].model.parameters()))
    with StopSignals() as stop:
        while True:
            for member in members:
                if member.metrics is None and training_done(member.progress, cfg):
                    made = {**provenance(device, member.progress.seconds, member.progress),
                            "packed_runs": len(members)}
                    member.metrics = finish_run(member.out_dir, member.run, member.task, member.model, cfg, device,
                                                member.progress, member.best_model, made, stop)
            training = [m for m in members if m.metrics is None]
            if not training:
                break
            groups: dict[tuple[int, int, int], list[Member]] = defaultdict(list)
            for member in training:
                p = member.progress
                groups[(p.step, p.epoch, p.batch_in_epoch)].append(member)
            TrainTogether(min(groups.items())[1], cfg, device, stop, progress_interval).run()
    write_benchmarks([m.out_dir for m in members], time.monotonic() - started)
    return [member.metrics for member in members]


def write_benchmarks(out_dirs: list[Path], seconds: float) -> None:
    """Each member's ``benchmark.tsv`` (the columns of Snakemake's that the aggregation reads, as
    a run alone's job has): its share of the pack's wall time (``s``) and CPU time
    (``cpu_time``), and the pack's peak resident memory (``max_rss``, MB), which it shared."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime
    n = len(out_dirs)
    for out_dir in out_dirs:
        atomic.write_text(out_dir / "benchmark.tsv", f"s\tcpu_time\tmax_rss\tpacked_runs\n"
                                                    f"{seconds / n:.4f}\t{cpu / n:.4f}\t{usage.ru_maxrss / 1024:.2f}\t{n}\n")


@dataclass
class TrainTogether:
    """Members at the same point of training, stacked into one batched model until one of them
    finishes (or the pack is stopped)."""

    members: list[Member]
    cfg: TrainConfig
    device: torch.device
    stop: StopSignals
    progress_interval: float
    names: list[str] = field(init=False)

    def __post_init__(self):
        model = self.members[0].model
        self.names = [name for name, _ in model.named_parameters()]
        params, self.buffers = stack_module_state([m.model for m in self.members])
        self.params = {name: nn.Parameter(params[name].detach().clone()) for name in self.names}
        self.optimizer = make_optimizer(list(self.params.values()), self.cfg)
        self.optimizer.load_state_dict(stack_optimizer_states([m.optimizer.state_dict() for m in self.members],
                                                              self.optimizer.state_dict()))
        self.loss = vmap(member_loss_of(model, self.members[0].task), in_dims=(0, 0, 0, 0, 0, None),
                         randomness="error")
        self.since = self.saved_at = time.monotonic()

    def sync(self) -> None:
        """Copy each member's slice into its own model and optimiser, and its share of the
        time since the last sync into its progress."""
        now = time.monotonic()
        optimizer_state = self.optimizer.state_dict()
        for i, member in enumerate(self.members):
            member.model.load_state_dict({**member.model.state_dict(),
                                          **{name: self.params[name].detach()[i] for name in self.names}})
            member.optimizer.load_state_dict(slice_optimizer_state(optimizer_state, i))
            member.progress.seconds += (now - self.since) / len(self.members)
        self.since = now

    def checkpoint(self) -> None:
        self.sync()
        for member in self.members:
            member.save()
        self.saved_at = time.monotonic()

    def run(self) -> None:
        cfg, lead = self.cfg, self.members[0]
        steps_per_epoch = len(lead.task.batches("train", cfg.batch_size, epoch_generator(lead.run["seed"], 0)))
        report = ProgressReport(cfg.epochs * steps_per_epoch, self.progress_interval)
        while True:
            epoch = lead.progress.epoch
            for group in self.optimizer.param_groups:
                group["lr"] = cfg.lr_at(epoch)
            epochs = [m.task.batches("train", cfg.batch_size, epoch_generator(m.run["seed"], epoch))
                      for m in self.members]
            if len({len(batches) for batches in epochs}) != 1:
                raise PackError(f"the members' epochs have {sorted({len(b) for b in epochs})} batches; "
                                "packed runs need the same number")
            for k in range(lead.progress.batch_in_epoch, len(epochs[0])):
                losses = self.step([batches[k] for batches in epochs])
                for member, loss in zip(self.members, losses):
                    record_step(member.progress, loss, cfg)
                report.update(lead.progress, sum(losses) / len(losses))
                if self.stop.received:
                    self.checkpoint()
                    raise TrainingInterrupted(f"{self.stop.received} at step {lead.progress.step}: checkpoints "
                                              f"written to the {len(self.members)} run folders; run again to resume")
                if lead.progress.step % cfg.checkpoint_every == 0:
                    self.checkpoint()
            self.sync()
            for member in self.members:
                dev = evaluate(member.model, member.task, ("dev",), cfg, self.device)
                if end_epoch(member.progress, dev, member.task, cfg):
                    member.best_model = cpu_copy(member.model.state_dict())
            if self.stop.received:  # it arrived during the dev evaluations
                for member in self.members:
                    member.save()
                raise TrainingInterrupted(f"{self.stop.received} at step {lead.progress.step}, in the dev evaluation "
                                          f"of epoch {lead.progress.epoch}: checkpoints written to the "
                                          f"{len(self.members)} run folders; run again to resume")
            finished = any(training_done(m.progress, cfg) for m in self.members)
            if finished or time.monotonic() - self.saved_at >= EPOCH_CHECKPOINT_SECONDS:
                for member in self.members:
                    member.save()
                self.saved_at = time.monotonic()
            if finished:
                return

    def step(self, batches: list[Batch]) -> list[float]:
        """One optimiser step of every member on its own batch; returns their losses (the main
        prediction's, as a run alone reports)."""
        cfg, n = self.cfg, len(self.members)
        lengths = batches[0].lengths
        for member, batch in zip(self.members, batches):
            if not torch.equal(batch.lengths, lengths):
                raise PackError(f"run {member.out_dir}: its batch lengths differ from the pack's")
        inputs = torch.stack([b.inputs for b in batches]).to(self.device)
        targets = torch.stack([b.targets for b in batches]).to(self.device)
        extra = {name: torch.stack([b.extra[name] for b in batches]).to(self.device) for name in batches[0].extra}
        self.members[0].model.train()
        self.optimizer.zero_grad(set_to_none=True)
        with reference_loops():
            total, main = self.loss(self.params, self.buffers, inputs, targets, extra, lengths.to(self.device))
        values = total.detach().tolist()
        for member, value in zip(self.members, values):
            if not math.isfinite(value):
                raise NonFiniteLoss(f"loss is {value} at step {member.progress.step + 1} (epoch "
                                    f"{member.progress.epoch + 1}, batch {member.progress.batch_in_epoch + 1}) "
                                    f"of run {member.out_dir}, packed with {n - 1} others")
        total.sum().backward()
        grads = [p.grad for p in self.params.values() if p.grad is not None]
        if cfg.log_grad_norm or cfg.clip is not None:
            norms = member_norms(grads, n)
            if cfg.log_grad_norm:
                for member, norm in zip(self.members, norms.tolist()):
                    member.progress.grad_window.append(norm)
            if cfg.clip is not None:
                scale = (cfg.clip / (norms + 1e-6)).clamp(max=1.0)
                for g in grads:
                    g.mul_(scale.view(n, *[1] * (g.dim() - 1)))
        if cfg.clip_value is not None:
            for g in grads:
                g.clamp_(-cfg.clip_value, cfg.clip_value)
        self.optimizer.step()
        return main.detach().tolist()


def member_loss_of(model: nn.Module, task: Task):
    """One member's (training loss, main prediction's loss) on its batch, with its weights: the
    function vmapped over the pack."""

    def member_loss(params, buffers, inputs, targets, extra, lengths):
        batch = Batch(inputs, lengths, targets, extra)
        output = functional_call(model, (params, buffers), (batch,))
        total = task.total_loss(output, batch)
        main = task.loss(output.main, batch) if isinstance(output, Predictions) else total
        return total, main

    return member_loss


def member_norms(grads: list[torch.Tensor], n: int) -> torch.Tensor:
    """(n,) global gradient norm of each member: sqrt(Σ_p ‖g_p^(i)‖₂²), the norm of the
    per-tensor norms as torch.nn.utils.get_total_norm takes it."""
    return torch.stack([g.reshape(n, -1).norm(dim=1) for g in grads], dim=1).norm(dim=1)


def stack_optimizer_states(states: list[dict], template: dict) -> dict:
    """The stacked optimiser's state from its members' (same step count): every per-entry
    tensor stacked along a new first dimension, the step count shared. ``template`` (the
    stacked optimiser's own state dict) gives the param groups."""
    first = states[0]["state"]
    stacked = {}
    for index, entry in first.items():
        stacked[index] = {name: value if name == "step" or not isinstance(value, torch.Tensor)
                          else torch.stack([s["state"][index][name] for s in states])
                          for name, value in entry.items()}
    return {"state": stacked, "param_groups": template["param_groups"]}


def slice_optimizer_state(state: dict, i: int) -> dict:
    """Member ``i``'s optimiser state (a run alone's) from the stacked optimiser's."""
    return {"state": {index: {name: value if not isinstance(value, torch.Tensor)
                              else value.clone() if name == "step" else value[i].clone()
                              for name, value in entry.items()}
                      for index, entry in state["state"].items()},
            "param_groups": state["param_groups"]}
