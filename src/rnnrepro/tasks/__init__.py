"""Tasks, one module each (batches, loss, metric), all in the :data:`TASKS` registry (every
module of this folder is imported and registers its tasks)."""
from __future__ import annotations

from ..registry import import_all
from .base import Batch, Predictions, Task, TaskIO
from .registry import TASKS

import_all(__name__, __path__)  # every module of this folder registers its tasks

__all__ = ["TASKS", "Batch", "Predictions", "Task", "TaskIO", "build_task"]


def build_task(name: str, data=None, **params) -> Task:
    """Make the task ``name`` over the prepared ``data`` file (None for synthetic tasks)."""
    return TASKS.build(name, data=data, **params)
