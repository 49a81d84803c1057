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
    """A configuration problem, with a message that names the file, key and allowed values.

    ``key``: the run setting at fault (``model.hidden_size``), where a check of one run knows it."""

    def __init__(self, message: str = "", key: str | None = None):
        super().__init__(message)
        self.key = key


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
            raise ConfigError(f"{owner} has no parameter {key!r}; allowed: {', '.join(allowed) or '(none)'}", key)
        hint = hints.get(key, inspect.Parameter.empty)
        if not _accepts(hint, value):
            raise ConfigError(f"{owner} parameter {key!r} = {value!r} has the wrong type; expected {hint}", key)


@functools.cache
def _fields(cls: type) -> tuple[list[str], dict[str, Any]]:
    return [f.name for f in dataclasses.fields(cls)], typing.get_type_hints(cls)


def check_dataclass(owner: str, cls: type, params: dict) -> None:
    """Check ``params`` against the fields of a dataclass."""
    names, hints = _fields(cls)
    for key, value in params.items():
        if key not in names:
            raise ConfigError(f"{owner} has no setting {key!r}; allowed: {', '.join(names)}", key)
        if not _accepts(hints[key], value):
            raise ConfigError(f"{owner} setting {key!r} = {value!r} has the wrong type; expected {hints[key]}", key)


@functools.lru_cache(maxsize=None)
def _tiny_cell_problem(cell_json: str) -> str | None:
    """Build a tiny instance (2 × 2) of the cell: settings that do not fit together (e.g. an
    identity W_hh for a cell without one) fail there. Once per cell setting (the paper plan has
    thousands of runs and a few dozen cell settings)."""
    from ..cells import CELLS

    cell = json.loads(cell_json)
    name = cell.pop("name")
    try:
        CELLS[name](2, 2, **cell)
    except (ValueError, TypeError) as error:
        return f"cell {name!r}: {error}"
    return None


SECTION_SKIP = {  # constructor parameters a run's section does not set
    "task": {"data"},
    "model": {"io", "cell", "cell_params"},
    "cell": {"input_size", "hidden_size", "device", "dtype"},
}


def _check_section(cfg: dict, section: str) -> None:
    """The name and parameters of a run's task, model or cell."""
    from ..cells import CELLS
    from ..models import MODELS
    from ..tasks import TASKS

    registry = {"task": TASKS, "model": MODELS, "cell": CELLS}[section]
    params = dict(cfg.get(section) or {})
    name = params.pop("name", None)
    if name is None:
        raise ConfigError(f"no {section} name given")
    try:
        constructor = registry[name]
    except KeyError as error:
        raise ConfigError(str(error)) from None
    try:
        check_kwargs(f"{section} {name!r}", constructor, params, SECTION_SKIP[section])
    except ConfigError as error:
        raise ConfigError(str(error), f"{section}.{error.key}") from None


def _check_train(cfg: dict) -> None:
    from ..train import TrainConfig

    try:
        check_dataclass("train", TrainConfig, cfg.get("train") or {})
    except ConfigError as error:
        raise ConfigError(str(error), f"train.{error.key}") from None


def _check_watched(cfg: dict) -> None:
    from ..train import TrainConfig, check_watched

    try:
        check_watched(cfg, TrainConfig(**(cfg.get("train") or {})))
    except ValueError as error:
        raise ConfigError(str(error), "train.monitor") from None


def _check_cell_builds(cfg: dict) -> None:
    problem = _tiny_cell_problem(json.dumps(cfg["cell"], sort_keys=True))
    if problem:
        raise ConfigError(problem)


def _check_compatible(cfg: dict) -> None:
    from ..models import MODELS, compatible

    model, task = cfg["model"]["name"], cfg["task"]["name"]
    if not compatible(model, task):
        raise ConfigError(f"model {model!r} serves only the tasks {', '.join(MODELS[model].compatible_tasks)}, "
                          f"not {task!r}")


#: check_run_config's checks, in order: (name, the sections of the run it reads, the check)
RUN_CHECKS = (
    ("task", ("task",), functools.partial(_check_section, section="task")),
    ("model", ("model",), functools.partial(_check_section, section="model")),
    ("cell", ("cell",), functools.partial(_check_section, section="cell")),
    ("train", ("train",), _check_train),
    ("watched", ("task", "train"), _check_watched),
    ("builds", ("cell",), _check_cell_builds),
    ("compatible", ("model", "task"), _check_compatible),
)


def check_run_config(cfg: dict, seen: dict | None = None) -> None:
    """Check names and parameters of a run's task, model, cell and training settings (the error's
    ``key`` names a parameter at fault, e.g. ``model.hidden_size``). ``seen`` keeps each check's
    verdict by the settings it reads, for the next call: a plan's runs share most of them."""
    seen = {} if seen is None else seen
    # repr: equal only for equal settings, and twice as fast as JSON (a plan checks thousands of runs)
    sections = {section: repr(cfg.get(section) or {}) for section in ("task", "model", "cell", "train")}
    for name, reads, check in RUN_CHECKS:
        key = (name, *(sections[section] for section in reads))
        if key not in seen:
            try:
                check(cfg)
                seen[key] = None
            except ConfigError as error:
                seen[key] = (str(error), error.key)
        if seen[key] is not None:
            raise ConfigError(*seen[key])
