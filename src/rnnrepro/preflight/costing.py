"""What the paper plan will cost on this device, from a sample of its configurations.

The plan's runs fall into timing groups (configurations that share one timing,
:func:`rnnrepro.cost.groups.timing_groups`) and those into classes of one task type and dataset.
Groups are timed as ``python -m rnnrepro.cost`` times them (:func:`rnnrepro.cost.measure.measure`:
a few training steps and one dev evaluation), taking the classes in turn and within each the
groups with the most runs first, until ``budget`` seconds are spent. A timed group's runs get
their own estimate (steps × seconds per step + evaluations, as in ``cost.csv``); a run of a group
not timed gets the median estimate per run of its class's timed groups ("extrapolated"); a class
with no timed group (its data missing, or the budget spent) is not costed and is counted as such.
"""
from __future__ import annotations

import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field

from ..cost.costfile import run_row
from ..cost.measure import BuiltTask, clock_of, measure, release_memory, task_key
from ..cost.groups import TimingGroup, dataset_key_of, prepared_file, timing_groups
from ..cost.resources import MARGIN
from .plan import Plan
from .table import Row


@dataclass
class StudyCost:
    runs: int = 0
    measured_runs: int = 0
    measured_hours: float = 0.0
    extrapolated_runs: int = 0
    extrapolated_hours: float = 0.0
    missing: set = field(default_factory=set)

    @property
    def not_costed(self) -> int:
        return self.runs - self.measured_runs - self.extrapolated_runs


def class_of(group: TimingGroup) -> tuple[str, str | None]:
    identity = group.first.identity
    return identity["task"]["name"], dataset_key_of(identity)


def sampling_order(groups: list[TimingGroup]) -> list[TimingGroup]:
    """The classes in turn, within each the groups with the most runs first."""
    by_class: dict = defaultdict(list)
    for group in sorted(groups, key=lambda g: -len(g.runs)):
        by_class[class_of(group)].append(group)
    order, queues = [], list(by_class.values())
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop(0))
    return order


def paper_cost(plan: Plan, device, threads: int, budget: float) -> list[Row]:
    """Rows: per study, runs and estimated hours on ``device`` (timed, extrapolated, not costed)."""
    groups = timing_groups(plan.runs.values())
    clock = clock_of(device, threads)
    hours_per_run: dict = {}  # group key -> [hours of each run]
    failed: list[str] = []
    built: BuiltTask | None = None
    started = time.monotonic()
    from ..train import Kernels

    for group in sampling_order(groups):
        if time.monotonic() - started > budget:
            break
        first = group.first
        key = dataset_key_of(first.identity)
        if key and not prepared_file(key).exists():
            continue
        if built is not None and built.key != task_key(first.identity):
            built = None
        try:
            with Kernels():
                measured, built = measure(first.identity, prepared_file(key) if key else None, device, steps=2,
                                          max_seconds=1.0, max_eval_seconds=0.5, clock=clock, built=built)
        except Exception as error:  # noqa: BLE001 - one configuration failing must not stop the sample
            failed.append(f"{first.folder}: {type(error).__name__}: {error}")
            built = None
            release_memory()
            continue
        hours_per_run[group.key] = [float(run_row(run, measured, MARGIN)["estimated_hours"]) for run in group.runs]
    seconds = time.monotonic() - started
    class_median = defaultdict(list)
    for group in groups:
        if group.key in hours_per_run:
            class_median[class_of(group)] += hours_per_run[group.key]
    studies: dict[str, StudyCost] = defaultdict(StudyCost)
    for group in groups:
        measured = hours_per_run.get(group.key)
        median = statistics.median(class_median[class_of(group)]) if class_median[class_of(group)] else None
        for i, run in enumerate(group.runs):
            cost = studies[run.studies[0]]
            cost.runs += 1
            if measured is not None:
                cost.measured_runs += 1
                cost.measured_hours += measured[i]
            elif median is not None:
                cost.extrapolated_runs += 1
                cost.extrapolated_hours += median
            else:
                task, key = class_of(group)
                absent = key is not None and not prepared_file(key).exists()
                cost.missing.add(f"no data {key}" if absent else f"{task} not timed in the budget")
    timed = len(hours_per_run)
    rows = []
    total = StudyCost()
    for name in sorted(studies):
        cost = studies[name]
        for attribute in ("runs", "measured_runs", "measured_hours", "extrapolated_runs", "extrapolated_hours"):
            setattr(total, attribute, getattr(total, attribute) + getattr(cost, attribute))
        total.missing |= cost.missing
        rows.append(cost_row(name, cost))
    rows.append(cost_row("paper plan", total))
    rows[-1].seconds = seconds
    rows[-1].detail += f"; {timed} of {len(groups)} timing groups timed in {seconds:.0f} s"
    if failed:
        rows.append(Row("cost", "configurations that failed", str(len(failed)), False, "; ".join(failed[:3])))
    return rows


def cost_row(name: str, cost: StudyCost) -> Row:
    hours = cost.measured_hours + cost.extrapolated_hours
    detail = (f"{cost.measured_runs:,} runs timed ({cost.measured_hours:,.1f} h), {cost.extrapolated_runs:,} "
              f"extrapolated ({cost.extrapolated_hours:,.1f} h)")
    if cost.not_costed:
        detail += f", {cost.not_costed:,} not costed ({', '.join(sorted(cost.missing))})"
    return Row("cost", f"{name}: {cost.runs:,} runs", f"{hours:,.1f} h", None, detail)
