"""Recurrent cells, one module per family, all in the :data:`CELLS` registry.

Importing this package registers every cell; ``build_cell(name, input, hidden, **params)``
makes one by name and rejects unknown names or parameters with a message that lists the
allowed ones.
"""
from __future__ import annotations

from . import gru, lstm, srn  # noqa: F401  (register the cells)
from .base import RecurrentCell, State
from .registry import CELLS

__all__ = ["CELLS", "RecurrentCell", "State", "build_cell"]


def build_cell(name: str, input_size: int, hidden_size: int, **params) -> RecurrentCell:
    """Make the cell ``name`` (e.g. ``build_cell("elstm", 512, 512, period=3)``)."""
    return CELLS.build(name, input_size, hidden_size, **params)
