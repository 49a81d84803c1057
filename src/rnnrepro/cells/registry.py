"""The one registry of recurrent cells: ``CELLS[name](input_size, hidden_size, **params)``,
and :func:`register_variant` for a cell that is another cell's class with fixed parameters."""
from __future__ import annotations

import functools

from ..registry import Registry

CELLS: Registry = Registry("cell")


def register_variant(name: str, cell_class: type, doc: str, *, module: str, **fixed) -> functools.partial:
    """Register ``cell_class`` with the keyword parameters ``fixed`` under ``name``; ``module`` is
    the module that calls this (``__name__``), where the variant is defined."""
    variant = functools.partial(cell_class, **fixed)
    variant.__name__ = variant.__qualname__ = name  # type: ignore[attr-defined]
    variant.__doc__ = doc
    return CELLS.register(name, variant, module=module)
