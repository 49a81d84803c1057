"""Recurrent cells, one module per family, all in the :data:`CELLS` registry.

Importing this package imports every module of this folder, so a cell registers itself in
its own file (``@CELLS.register("name")`` on its class) and a new file needs no other edit; ``build_cell(name, input, hidden, **params)``
makes one by name and rejects unknown names or parameters with a message that lists the
allowed ones. Variants registered as fixed parameters of a class (``functools.partial``)
do not accept those parameters again.
"""
from __future__ import annotations

import functools
import inspect

from ..registry import import_all
from .base import MemoryTerms, RecurrentCell, State, reference_loops
from .registry import CELLS

import_all(__name__, __path__)  # every module of this folder registers its cells

__all__ = ["CELLS", "MemoryTerms", "RecurrentCell", "State", "build_cell", "cell_parameters",
           "reference_loops"]


def cell_parameters(name: str) -> list[str]:
    """The keyword parameters a cell accepts beyond input and hidden size."""
    entry = CELLS[name]
    fixed = set(entry.keywords) if isinstance(entry, functools.partial) else set()
    signature = inspect.signature(entry)
    skip = {"self", "input_size", "hidden_size", "device", "dtype"} | fixed
    return [p for p in signature.parameters if p not in skip]


def build_cell(name: str, input_size: int, hidden_size: int, *, device=None, dtype=None,
               **params) -> RecurrentCell:
    """Make the cell ``name`` (on ``device``, in ``dtype``); an unknown parameter names itself
    and lists the allowed ones."""
    allowed = cell_parameters(name)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"cell {name!r} has no parameter {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(allowed) or '(none)'}")
    return CELLS[name](input_size, hidden_size, device=device, dtype=dtype, **params)
