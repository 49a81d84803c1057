"""Tasks, one module each (batches, loss, metric), all in the :data:`TASKS` registry."""
from __future__ import annotations

from . import adding, language_model, parsing, pos, pos_chars, translation  # noqa: F401  (register the tasks)
from . import reversal, sine_filter  # noqa: F401,E402  (drnn paper's synthetic tasks)
from . import presence  # noqa: F401,E402  (elstm paper's "A"-presence toy task)
from . import counting  # noqa: F401,E402  (basics study: recognising aⁿbⁿ)
from . import copying  # noqa: F401,E402  (pru paper's copying memory problem)
from .base import Batch, Predictions, Task, TaskIO
from .registry import TASKS

__all__ = ["TASKS", "Batch", "Predictions", "Task", "TaskIO", "build_task"]


def build_task(name: str, data=None, **params) -> Task:
    """Make the task ``name`` over the prepared ``data`` file (None for synthetic tasks)."""
    return TASKS.build(name, data=data, **params)
