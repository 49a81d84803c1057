"""What a train job asks for from cost.csv (``workflow/rules/cost.smk``):

    runtime = ⌈estimated_hours · 60 · margin + RUNTIME_ALLOWANCE_MINUTES⌉ minutes
    mem_mb  = ⌈host_mem_mb · margin + MEMORY_ALLOWANCE_MB⌉

a pack's or a bundle's job the sum of its runs' runtimes (a bundle the memory of its largest
run, a pack the sum), and the defaults for a run the file lacks."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

from .costfile import load_costs

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


def runtime_hours(costs: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Run folder -> the hours its job would ask for, less the allowance: estimated_hours · margin
    (what :mod:`rnnrepro.plan.bundles` adds up)."""
    return {folder: float(row["estimated_hours"]) * margin_of(row) for folder, row in costs.items()}


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
        """Minutes for a pack (rnnrepro.packing) or bundle: :func:`job_runtime_minutes` of its runs
        the file has, and :data:`DEFAULT_RUNTIME_MINUTES` for each run it lacks (what that run
        would ask for alone; a bundle may mix both, e.g. seeds added after the cost table)."""
        rows = [self.costs.get(folder) for folder in folders]
        measured = [row for row in rows if row]
        return ((job_runtime_minutes(measured) if measured else 0)
                + DEFAULT_RUNTIME_MINUTES * (len(rows) - len(measured)))

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

    def bundle_memory(self, folders: Iterable[str]) -> dict[str, Any]:
        """``mem_mb`` for a bundle (rnnrepro.plan.bundles), whose runs train one after another: its
        largest run's."""
        if not self.costs:
            return {}
        rows = [self.costs.get(folder) for folder in folders]
        return {"mem_mb": max(memory_mb(row) if row else DEFAULT_MEM_MB for row in rows)}

    @property
    def runtime_hours(self) -> dict[str, float]:
        """Run folder -> estimated hours × margin (:func:`runtime_hours`), for the runs the file has."""
        return runtime_hours(self.costs)

    def lacking(self, runs: Iterable[str]) -> str | None:
        """A warning when the cost file exists but has no row for some of ``runs``, else None."""
        runs = list(runs)
        missing = sum(run not in self.costs for run in runs)
        if not self.costs or not missing:
            return None
        return (f"rnnrepro: {self.path} has no row for {missing} of the {len(runs)} planned runs: their train jobs "
                f"ask for runtime {DEFAULT_RUNTIME_MINUTES} min and mem_mb {DEFAULT_MEM_MB}; measure them with "
                f"`python -m rnnrepro.cost --resume` (or `snakemake cost`)")
