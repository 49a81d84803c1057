"""Tasks, one module each (batches, loss, metric), all in the :data:`TASKS` registry (every
module of this folder is imported and registers its tasks)."""
from __future__ import annotations

import json
import os
from collections import OrderedDict

from ..registry import import_all
from .base import Batch, Predictions, Task, TaskIO
from .registry import TASKS

import_all(__name__, __path__)  # every module of this folder registers its tasks

__all__ = ["TASKS", "Batch", "Predictions", "Task", "TaskIO", "build_task"]


#: Tasks read from a prepared file, kept for the next run of the same process (a bundle's, an
#: analysis loading several models): the most recent few, by name, file and parameters.
READ_TASKS: OrderedDict[tuple, Task] = OrderedDict()
READ_TASKS_KEPT = 4


def build_task(name: str, data=None, **params) -> Task:
    """Make the task ``name`` over the prepared ``data`` file (None for synthetic tasks).

    A task read from a file is made once per process for the same file (path, size and
    modification time) and parameters, and shared: reading and encoding a prepared dataset takes
    0.5-1.5 s, which a bundle of runs or an analysis of several models would otherwise spend once
    per run, and a task does not change once made (its methods make new batches and metrics)."""
    if data is None:
        return TASKS.build(name, data=data, **params)
    found = os.stat(data)
    key = (name, os.fspath(data), found.st_size, found.st_mtime_ns, json.dumps(params, sort_keys=True, default=repr))
    if key not in READ_TASKS:
        READ_TASKS[key] = TASKS.build(name, data=data, **params)
        while len(READ_TASKS) > READ_TASKS_KEPT:
            READ_TASKS.popitem(last=False)
    READ_TASKS.move_to_end(key)
    return READ_TASKS[key]
