"""Semantic checks of one run's configuration that a JSON schema cannot express.

Task, model and cell parameters are the keyword parameters of their constructors, so a
parameter is checked against the constructor's signature and type hints: an unknown key
or a value of the wrong type is reported with the allowed keys, without building anything.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import types
import typing
from typing import Any


class ConfigError(ValueError):
    """A configuration problem, with a message that names the file, key and allowed values."""


def _accepts(hint: Any, value: Any) -> bool:
    """Whether ``value`` fits the type hint (int, float, bool, str, Optional, Literal, unions)."""
    if hint is inspect.Parameter.empty or hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(arg, value) for arg in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True  # generic containers etc.: left to the constructor


@functools.cache
def _parameters(function: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Parameter names and resolved type hints of ``function`` (read once per function)."""
    names = tuple(inspect.signature(function).parameters)
    try:
        hints = typing.get_type_hints(function.__init__ if inspect.isclass(function) else function)
    except Exception:  # noqa: BLE001 - unresolvable hints: check names only
        hints = {}
    return names, hints


def check_kwargs(owner: str, function: Any, params: dict, skip: set[str]) -> None:
    """Check ``params`` against the keyword parameters of ``function`` (names and types)."""
    names, hints = _parameters(function)
    allowed = [p for p in names if p not in skip and p != "self"]
    for key, value in params.items():
        if key not in allowed:
            raise ConfigError(f"{owner} has no parameter {key!r}; allowed: {', '.join(allowed) or '(none)'}")
        hint = hints.get(key, inspect.Parameter.empty)
        if not _accepts(hint, value):
            raise ConfigError(f"{owner} parameter {key!r} = {value!r} has the wrong type; expected {hint}")


@functools.cache
def _fields(cls: type) -> tuple[list[str], dict[str, Any]]:
    return [f.name for f in dataclasses.fields(cls)], typing.get_type_hints(cls)


def check_dataclass(owner: str, cls: type, params: dict) -> None:
    """Check ``params`` against the fields of a dataclass."""
    names, hints = _fields(cls)
    for key, value in params.items():
        if key not in names:
            raise ConfigError(f"{owner} has no setting {key!r}; allowed: {', '.join(names)}")
        if not _accepts(hints[key], value):
            raise ConfigError(f"{owner} setting {key!r} = {value!r} has the wrong type; expected {hints[key]}")


@functools.lru_cache(maxsize=None)
def _tiny_cell_problem(cell_json: str) -> str | None:
    """Build a tiny instance (2 × 2) of the cell: settings that do not fit together (e.g. an
    identity W_hh for a cell without one) fail there. Once per cell setting (the paper plan has
    thousands of runs and a few dozen cell settings)."""
    from .cells import CELLS

    cell = json.loads(cell_json)
    name = cell.pop("name")
    try:
        CELLS[name](2, 2, **cell)
    except (ValueError, TypeError) as error:
        return f"cell {name!r}: {error}"
    return None


def check_run_config(cfg: dict) -> None:
    """Check names and parameters of a run's task, model, cell and training settings."""
    from .cells import CELLS
    from .models import MODELS
    from .tasks import TASKS
    from .train import TrainConfig, check_watched

    for section, registry, skip in (
        ("task", TASKS, {"data"}),
        ("model", MODELS, {"io", "cell", "cell_params"}),
        ("cell", CELLS, {"input_size", "hidden_size", "device", "dtype"}),
    ):
        params = dict(cfg.get(section) or {})
        name = params.pop("name", None)
        if name is None:
            raise ConfigError(f"no {section} name given")
        try:
            constructor = registry[name]
        except KeyError as error:
            raise ConfigError(str(error)) from None
        check_kwargs(f"{section} {name!r}", constructor, params, skip)
    check_dataclass("train", TrainConfig, cfg.get("train") or {})
    try:
        check_watched(cfg, TrainConfig(**(cfg.get("train") or {})))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    problem = _tiny_cell_problem(json.dumps(cfg["cell"], sort_keys=True))
    if problem:
        raise ConfigError(problem)
    from .models import compatible

    model, task = cfg["model"]["name"], cfg["task"]["name"]
    if not compatible(model, task):
        raise ConfigError(f"model {model!r} serves only the tasks {', '.join(MODELS[model].compatible_tasks)}, "
                          f"not {task!r}")
