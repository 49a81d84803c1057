"""From configuration files to the list of training runs.

``load_workflow_config`` validates ``config/config.yaml`` and every selected study file
against the JSON schemas (with the task, model and cell enums filled in from the
registries), merges the chosen scale over each study, and expands every artifact's grid
into runs. A run is identified by its study and a path of ``key~value`` segments, e.g.
``task~pos/model~brnn/cell~lstm/seed~1``; two artifacts asking for the same run share it.
Every problem is reported before any job starts, naming the file and key at fault.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .config_check import ConfigError, check_run_config

FIXED_AXES = ("task", "model", "cell")


@dataclass
class Study:
    """One study after scale merge: its artifacts and the runs they need."""

    name: str
    title: str
    paper: str
    scale: str
    scale_note: str
    artifacts: dict[str, dict[str, Any]]
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # run path -> run config
    analyses: dict[str, dict[str, Any]] = field(default_factory=dict)  # artifact -> analysis params (with name)

    def runs_of(self, artifact: str) -> list[str]:
        return [run for run, cfg in self.runs.items() if artifact in cfg["artifacts"]]


# -- schema validation -----------------------------------------------------------------------
def load_yaml(path: Path) -> Any:
    try:
        with open(path) as handle:
            return yaml.safe_load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None


def _location(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(top level)"


def describe_error(error: jsonschema.ValidationError) -> str:
    """One readable line: where, what, and what is allowed."""
    where = _location(error)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"{where}: unknown key {', '.join(map(repr, extra))}; allowed: {', '.join(allowed)}"
    if error.validator == "enum":
        return f"{where}: {error.instance!r} is not allowed; known: {', '.join(map(str, error.validator_value))}"
    if "propertyNames" in error.schema_path:
        return (f"{where}: grid key {error.instance!r} is not task, model, cell, seed "
                "or a dotted parameter path such as task.T")
    return f"{where}: {error.message}"


def validate(instance: Any, schema: dict, source: Path | str) -> None:
    """Validate against a JSON schema, raising ConfigError that lists every problem."""
    validator_cls = jsonschema.validators.validator_for(schema)
    errors = sorted(validator_cls(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        lines = "\n".join(f"  - {describe_error(error)}" for error in errors)
        raise ConfigError(f"{source}: invalid configuration:\n{lines}")


def fill_defaults(instance: dict, schema: dict) -> dict:
    """Add the schema's ``default`` for every missing top-level key (and one level below)."""
    result = copy.deepcopy(instance) if instance else {}
    for key, prop in schema.get("properties", {}).items():
        if key not in result and "default" in prop:
            result[key] = copy.deepcopy(prop["default"])
        if isinstance(result.get(key), dict) and "properties" in prop:
            result[key] = fill_defaults(result[key], prop)
    return result


def registry_enums(study_schema: dict) -> dict:
    """The study schema with the task, model and cell name enums taken from the registries."""
    from .cells import CELLS
    from .models import MODELS
    from .tasks import TASKS

    schema = copy.deepcopy(study_schema)
    schema["$defs"]["task_name"]["enum"] = TASKS.names()
    schema["$defs"]["model_name"]["enum"] = MODELS.names()
    schema["$defs"]["cell_name"]["enum"] = CELLS.names()
    from .analyses import ANALYSES

    schema["$defs"]["analysis_name"]["enum"] = ANALYSES.names()
    return schema


# -- merging and grid expansion --------------------------------------------------------------
def deep_merge(base: dict, override: dict) -> dict:
    """Mappings merge key by key; anything else (lists included) is replaced."""
    result = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def apply_scale(study: dict, scale: str) -> dict:
    """The study with ``scales[scale]`` merged over its defaults and artifacts."""
    override = (study.get("scales") or {}).get(scale) or {}
    merged = {k: v for k, v in study.items() if k != "scales"}
    merged["defaults"] = deep_merge(study.get("defaults") or {}, override.get("defaults") or {})
    artifacts = {}
    for name, artifact in study["artifacts"].items():
        artifacts[name] = deep_merge(artifact, (override.get("artifacts") or {}).get(name) or {})
    for name_of_scale, other in (study.get("scales") or {}).items():
        unknown = sorted(set((other or {}).get("artifacts") or {}) - set(artifacts))
        if unknown:
            raise ConfigError(f"scales.{name_of_scale}.artifacts: unknown artifact {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(artifacts))}")
    merged["artifacts"] = artifacts
    merged["scale_note"] = override.get("note", "")
    return merged


def axis_label(key: str) -> str:
    """Folder/column name of a grid axis: ``task.T`` -> ``T``; ``model`` -> ``model``."""
    return key.rsplit(".", 1)[-1]


def run_path(labels: dict[str, Any], extra_axes: list[str]) -> str:
    """``task~pos/model~brnn/cell~lstm[/T~100]/seed~1``: fixed axes, extra axes, seed."""
    parts = [f"{axis}~{labels[axis]}" for axis in FIXED_AXES]
    parts += [f"{axis}~{labels[axis]}" for axis in extra_axes]
    parts.append(f"seed~{labels['seed']}")
    return "/".join(parts)


def expand_artifact(study: str, scale: str, name: str, artifact: dict, defaults: dict) -> dict[str, dict]:
    """All runs of one artifact: run path -> run config."""
    settings = deep_merge(defaults, {k: artifact.get(k, {}) for k in ("task", "model", "cell", "train", "per_cell")})
    per_cell = settings.pop("per_cell", {})
    grid = dict(artifact["grid"])
    grid.setdefault("seed", [1])
    for axis in FIXED_AXES:
        if axis not in grid:
            if "name" not in settings.get(axis, {}):
                raise ConfigError(f"artifacts.{name}: no {axis} given (put it in grid.{axis} or {axis}.name)")
            grid[axis] = [settings[axis]["name"]]
    extra_axes = sorted(k for k in grid if k not in FIXED_AXES + ("seed",))
    labels_of_extra = [axis_label(k) for k in extra_axes]
    if len(set(labels_of_extra)) != len(labels_of_extra):
        raise ConfigError(f"artifacts.{name}.grid: axes {extra_axes} share a last name segment")
    runs = {}
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        point = dict(zip(keys, values))
        cfg = copy.deepcopy(settings)
        for key, value in point.items():
            if key in FIXED_AXES:
                cfg.setdefault(key, {})["name"] = value
            elif key != "seed":
                section, param = key.split(".", 1)
                cfg.setdefault(section, {})[param] = value
        cfg["cell"] = deep_merge(cfg.get("cell", {}), per_cell.get(cfg["cell"]["name"], {}))
        labels = {"study": study, **{a: point[a] for a in FIXED_AXES},
                  **{axis_label(k): point[k] for k in extra_axes}, "seed": point["seed"]}
        path = run_path(labels, labels_of_extra)
        runs[path] = {"study": study, "run": path, "scale": scale, "seed": point["seed"],
                      "task": cfg.get("task", {}), "model": cfg.get("model", {}),
                      "cell": cfg.get("cell", {}), "train": cfg.get("train", {}),
                      "labels": labels, "artifacts": [name]}
    return runs


def expand_study(name: str, study: dict, scale: str) -> Study:
    """Merge the scale, expand every artifact and join runs that two artifacts share."""
    merged = apply_scale(study, scale)
    result = Study(name=name, title=merged["title"], paper=merged["paper"], scale=scale,
                   scale_note=merged["scale_note"], artifacts=merged["artifacts"])
    for artifact_name, artifact in merged["artifacts"].items():
        if "analysis" in artifact:
            result.analyses[artifact_name] = check_analysis(artifact_name, artifact["analysis"])
            continue
        for path, cfg in expand_artifact(name, scale, artifact_name, artifact, merged["defaults"]).items():
            try:
                check_run_config(cfg)
            except ConfigError as error:
                raise ConfigError(f"artifacts.{artifact_name}, run {path}: {error}") from None
            if path in result.runs:
                existing = result.runs[path]
                if _without_artifacts(existing) != _without_artifacts(cfg):
                    raise ConfigError(
                        f"run {path} is asked for by artifacts {existing['artifacts']} and "
                        f"{artifact_name!r} with different settings; put the setting that differs "
                        "in the grid so the runs get different folders")
                existing["artifacts"].append(artifact_name)
            else:
                result.runs[path] = cfg
    return result


def check_analysis(artifact: str, params: dict) -> dict:
    """An analysis artifact's params, checked against the analysis function's signature."""
    from .analyses import ANALYSES
    from .config_check import check_kwargs

    params = dict(params)
    name = params.pop("name", None)
    try:
        function = ANALYSES[name]
    except KeyError as error:
        raise ConfigError(f"artifacts.{artifact}.analysis: {error}") from None
    try:
        check_kwargs(f"analysis {name!r}", function, params, skip={"seed"})
    except ConfigError as error:
        raise ConfigError(f"artifacts.{artifact}.analysis: {error}") from None
    return {"name": name, **params}


def _without_artifacts(cfg: dict) -> dict:
    return {k: v for k, v in cfg.items() if k != "artifacts"}


def load_workflow_config(config: dict, schema_dir: Path, studies_dir: Path) -> tuple[dict, dict[str, Study]]:
    """Validate the top-level config and every selected study; return (config with defaults, studies)."""
    schema_dir, studies_dir = Path(schema_dir), Path(studies_dir)
    config_schema = load_yaml(schema_dir / "config.schema.yaml")
    known = sorted(p.stem for p in studies_dir.glob("*.yaml"))
    config_schema["properties"]["studies"]["items"]["enum"] = known
    validate(config, config_schema, "config")
    config = fill_defaults(config, config_schema)
    study_schema = registry_enums(load_yaml(schema_dir / "study.schema.yaml"))
    studies = {}
    for name in config["studies"]:
        path = studies_dir / f"{name}.yaml"
        raw = load_yaml(path)
        validate(raw, study_schema, path)
        try:
            studies[name] = expand_study(name, raw, config["scale"])
        except ConfigError as error:
            raise ConfigError(f"{path}: {error}") from None
    return config, studies
