"""The one registry of macro models: ``MODELS[name](io, cell, cell_params, **params)``."""
from ..registry import Registry

MODELS: Registry = Registry("model")
