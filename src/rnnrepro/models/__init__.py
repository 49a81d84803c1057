"""Macro models, each taking any registered cell, all in the :data:`MODELS` registry (every
module of this folder is imported and registers its models).

A model is built as ``MODELS[name](io, cell, cell_params=..., **params)`` and called on a
whole :class:`~rnnrepro.tasks.Batch`: ``model(batch)`` returns the predictions the task's
loss and metrics read (a tensor, or :class:`~rnnrepro.tasks.Predictions` for models with
several objectives). In training mode a model may read ``batch.targets`` (teacher forcing);
in eval mode it must not.

Most models serve any task. A model built for particular tasks (the biaffine parser, the
char+word tagger, the translation encoder-decoder) lists them in a class attribute
``compatible_tasks``; the configuration check rejects other pairings before any job runs.
"""
from __future__ import annotations

from torch import nn

from ..registry import import_all
from ..tasks.base import TaskIO
from .registry import MODELS

import_all(__name__, __path__)  # every module of this folder registers its models

__all__ = ["MODELS", "build_model", "compatible"]


def compatible(model: str, task: str) -> bool:
    """Whether the model ``model`` can serve the task ``task``."""
    return task in getattr(MODELS[model], "compatible_tasks", (task,))


def build_model(name: str, io: TaskIO, cell: str, cell_params: dict | None = None, **params) -> nn.Module:
    """Make the macro model ``name`` around the cell ``cell`` for a task with shapes ``io``."""
    return MODELS.build(name, io, cell, cell_params=cell_params, **params)
