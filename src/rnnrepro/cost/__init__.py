"""A cost table before the queue: time a few training steps of every distinct configuration of
a scale's plan on the device at hand, and size each training job from it.

``python -m rnnrepro.cost --scale paper`` (or ``snakemake --profile profiles/local cost``) loads
the plan exactly as the workflow does (:func:`rnnrepro.plan.studies.load_workflow_config`), builds
the task and the model of every distinct configuration as training does (the task, then the
model, as :func:`rnnrepro.train.build_run`; on the prepared data file of its task), times a few
optimiser steps (:func:`rnnrepro.train.train_step`: forward, backward, clipping, step) and one
evaluation of the dev split, measures the peak memory, and writes ``results/<scale>/cost.csv``
(:meth:`rnnrepro.plan.layout.Layout.cost`) with one row per run. The workflow reads that file when
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
(:func:`rnnrepro.plan.studies.settings_digest`); runs of one configuration cost the same. Timing every
configuration of the paper plan one by one would take hours (its sine-filter grid alone has
thousands, differing only in the filter's γ, its acausality and the data seed), so
configurations that differ only in settings that change neither the work of a step nor the
number of steps per epoch share one timing (column ``timed_as``: the configuration that was
timed). Those settings are listed in :data:`NEUTRAL`: values of the synthetic data, the
learning-rate schedule, initialisation ranges, checkpoint and logging intervals, early
stopping, and ``epochs`` (each configuration's own number of epochs multiplies its steps).

How timing, the clock, the evaluation and memory are measured: :mod:`rnnrepro.cost.measure`.

The modules: :mod:`~rnnrepro.cost.groups` (the runs of a plan and the configurations that share a
timing), :mod:`~rnnrepro.cost.measure` (timing one configuration), :mod:`~rnnrepro.cost.costfile`
(cost.csv's rows), :mod:`~rnnrepro.cost.resources` (a train job's ``runtime`` and ``mem_mb`` from
them), :mod:`~rnnrepro.cost.table` (the table per study and artifact) and
:mod:`~rnnrepro.cost.cli` (``python -m rnnrepro.cost``).
"""
from __future__ import annotations

from .costfile import COLUMNS, csv_text, epochs_of, evaluations_of, load_costs, read_rows, run_row
from .measure import MEASURED, Measurement, build_model_for, build_task_for, measure, per_step, stratified, task_key
from .groups import (
    NEUTRAL,
    PlannedRun,
    TimingGroup,
    dataset_key_of,
    planned_runs,
    prepared_file,
    timing_groups,
    timing_key,
)
from .resources import (
    DEFAULT_MEM_MB,
    DEFAULT_RUNTIME_MINUTES,
    MARGIN,
    MEMORY_ALLOWANCE_MB,
    RUNTIME_ALLOWANCE_MINUTES,
    TrainResources,
    job_runtime_minutes,
    memory_mb,
    runtime_minutes,
)
from .table import summary_table

__all__ = [
    "COLUMNS", "DEFAULT_MEM_MB", "DEFAULT_RUNTIME_MINUTES", "MARGIN", "MEASURED", "MEMORY_ALLOWANCE_MB", "NEUTRAL",
    "RUNTIME_ALLOWANCE_MINUTES", "Measurement", "PlannedRun", "TimingGroup", "TrainResources", "build_model_for",
    "build_task_for", "csv_text", "dataset_key_of", "epochs_of", "evaluations_of", "job_runtime_minutes",
    "load_costs", "measure", "memory_mb", "per_step", "planned_runs", "prepared_file", "read_rows", "run_row",
    "runtime_minutes", "stratified", "summary_table", "task_key", "timing_groups", "timing_key",
]
