"""The one registry of tasks: ``TASKS[name](data=..., **params)``."""
from ..registry import Registry

TASKS: Registry = Registry("task")
