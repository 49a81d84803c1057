"""The one registry of recurrent cells: ``CELLS[name](input_size, hidden_size, **params)``."""
from ..registry import Registry

CELLS: Registry = Registry("cell")
