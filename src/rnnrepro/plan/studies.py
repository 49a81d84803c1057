"""From configuration files to the training runs and the artifacts that read them.

``load_workflow_config`` validates ``config/config.yaml`` and every selected study file
against the JSON schemas (with the task, model, cell and analysis enums filled in from the
registries), merges the chosen scale over each study, and expands every artifact's grids
into runs. The other scales are expanded too, only to be checked. Every problem, at any scale,
is reported before any job starts, naming the file (the scale, for another) and the key at fault.

A run is identified by what decides its numbers and nothing else: its task, model, cell and
training settings and its seed (:func:`run_identity`). Its folder is
``task~<task>/model~<model>/cell~<cell>/cfg~<digest of the settings>/seed~<seed>`` under
``results/<scale>/runs/``, so any two artifacts, of one study or of two, that ask for the same
settings share one run, and adding an artifact retrains nothing that exists. Which artifact
asked for a run and under which labels (grid axes such as ``T`` or ``delay``) is bookkeeping:
it lives in :class:`RunUse` and reaches the aggregation as a parameter, never the run.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from .config_check import ConfigError, check_run_config
from .study_metrics import check_metrics
from .yaml_file import load_yaml

#: where the workflow's configuration comes from, as its errors name it
CONFIG_SOURCE = "config/config.yaml (with any --config or --configfile values)"
FIXED_AXES = ("task", "model", "cell")
IDENTITY_SECTIONS = ("task", "model", "cell", "train")
DEFAULT_GRID = "main"  # name of the grid of an artifact that gives a single `grid:`


@dataclass(frozen=True)
class RunUse:
    """One run as an artifact uses it: the run's folder (under ``runs/``) and its labels."""

    folder: str
    labels: dict[str, Any]


@dataclass
class Artifact:
    """One table or figure of a paper after the scale merge."""

    name: str
    title: str
    spec: dict[str, Any]  # the merged YAML entry (claims, show, choices, ...)
    runs: list[RunUse] = field(default_factory=list)  # runs it trains (its grids)
    analysis: dict[str, Any] | None = None  # analysis params (with name), if it is one
    reads: list[RunUse] = field(default_factory=list)  # trained runs its analysis reads
    left_out: dict[str, str] = field(default_factory=dict)  # extra cell -> why it cannot join the grid

    @property
    def claims(self) -> list[dict[str, Any]]:
        return list(self.spec.get("claims") or [])

    @property
    def rows_from(self) -> str | None:
        """The analysis artifact whose rows this one copies (``analysis_from``), or None."""
        return self.spec.get("analysis_from")


@dataclass
class Study:
    """One study after scale merge: its artifacts and the runs they need."""

    name: str
    title: str
    paper: str
    scale: str
    scale_note: str
    spec: dict[str, Any]  # the merged YAML (choices, defaults, ...)
    artifacts: dict[str, Artifact]
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # folder -> run identity
    extra_cells: tuple[str, ...] = ()  # cells of the user's own that joined its grids (config extra_cells)

    @property
    def analyses(self) -> dict[str, dict[str, Any]]:
        return {name: a.analysis for name, a in self.artifacts.items() if a.analysis is not None}

    def uses(self) -> list[tuple[str, RunUse]]:
        """(artifact, run use) for every run every artifact trains, in YAML order."""
        return [(name, use) for name, artifact in self.artifacts.items() for use in artifact.runs]


# -- the plan passed down ----------------------------------------------------------------------
def plan_of(study: Study) -> dict[str, Any]:
    """The study as planned, as JSON-able data: what the summary and the report read (written by
    the workflow to ``plans/<study>.json``); :func:`study_from_plan` reads it back."""
    return {"name": study.name, "title": study.title, "paper": study.paper, "scale": study.scale,
            "scale_note": study.scale_note, "extra_cells": list(study.extra_cells),
            "spec": {key: value for key, value in study.spec.items() if key != "artifacts"},
            "runs": study.runs,
            "artifacts": {name: {"title": a.title, "spec": a.spec, "analysis": a.analysis, "left_out": a.left_out,
                                 "runs": [[use.folder, use.labels] for use in a.runs],
                                 "reads": [[use.folder, use.labels] for use in a.reads]}
                          for name, a in study.artifacts.items()}}


def plan_text(study: Study) -> str:
    """The plan as the JSON text the workflow writes (artifacts in the study's order)."""
    return json.dumps(plan_of(study), indent=1) + "\n"


def plan_digest_of(study: Study) -> str:
    """sha256 of the plan as compact JSON: changes exactly when the plan (:func:`plan_text`) does.
    Compact, since json's C encoder writes no indented text: a tenth of the time on the paper plan."""
    return hashlib.sha256(json.dumps(plan_of(study), separators=(",", ":")).encode()).hexdigest()


def write_plan(study: Study, path: str | Path) -> None:
    """Write the plan atomically (the workflow's ``plan`` rule)."""
    from ..atomic import write_text

    write_text(path, plan_text(study))


def study_from_plan(plan: dict[str, Any]) -> Study:
    """The :class:`Study` of a plan written by :func:`plan_of`."""
    artifacts = {name: Artifact(name=name, title=a["title"], spec=a["spec"], analysis=a["analysis"],
                                runs=[RunUse(folder, labels) for folder, labels in a["runs"]],
                                reads=[RunUse(folder, labels) for folder, labels in a["reads"]],
                                left_out=dict(a.get("left_out") or {}))
                 for name, a in plan["artifacts"].items()}
    spec = {**plan["spec"], "artifacts": {name: a.spec for name, a in artifacts.items()}}
    return Study(name=plan["name"], title=plan["title"], paper=plan["paper"], scale=plan["scale"],
                 scale_note=plan["scale_note"], spec=spec, artifacts=artifacts, runs=dict(plan["runs"]),
                 extra_cells=tuple(plan.get("extra_cells") or ()))


# -- schema validation -----------------------------------------------------------------------
def _location(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(top level)"


def describe_error(error: jsonschema.ValidationError) -> str:
    """One readable line: where, what, and what is allowed (for a value that fits none of
    several forms, the problem of the form it comes closest to)."""
    if error.validator in ("oneOf", "anyOf") and error.context and isinstance(error.instance, dict) and all(
            e.validator == "required" and not e.relative_path for e in error.context):
        # every form asks for a key the mapping lacks (e.g. a threshold's below or above)
        wanted = [key for e in error.context for key in e.validator_value if key not in error.instance]
        return f"{_location(error)}: give one of {', '.join(map(repr, dict.fromkeys(wanted)))}"
    if error.validator == "not" and set(error.validator_value) == {"required"}:
        return f"{_location(error)}: give only one of {', '.join(map(repr, error.validator_value['required']))}"
    if error.validator in ("oneOf", "anyOf") and error.context:
        # the form whose type the value has (a list for a list of names), else the closest
        fitting = [e for e in error.context if not (e.validator == "type" and not e.relative_path)]
        wrong_type = {e.relative_schema_path[0] for e in error.context if not e.relative_path and (
            e.validator == "type" or (e.validator == "const" and type(e.validator_value) is not type(e.instance)))}
        fitting = [e for e in fitting if e.relative_schema_path[0] not in wrong_type] or error.context
        return describe_error(jsonschema.exceptions.best_match(fitting))
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
    """The study schema with the task, model, cell and analysis name enums from the registries."""
    from ..analyses import ANALYSES
    from ..cells import CELLS
    from ..models import MODELS
    from ..tasks import TASKS

    schema = copy.deepcopy(study_schema)
    schema["$defs"]["task_name"]["enum"] = TASKS.names()
    schema["$defs"]["model_name"]["enum"] = MODELS.names()
    schema["$defs"]["cell_name"]["enum"] = CELLS.names()
    schema["$defs"]["analysis_name"]["enum"] = ANALYSES.names()
    return schema


# -- merging -----------------------------------------------------------------------------------
def deep_merge(base: dict, override: dict) -> dict:
    """Mappings merge key by key; anything else (lists included) is replaced."""
    result = dict(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = value
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


# -- run identity ------------------------------------------------------------------------------
def settings_digest(identity: dict) -> str:
    """Ten hex digits of sha256 over a run's settings (task, model, cell, train; not the seed)."""
    settings = {key: identity[key] for key in IDENTITY_SECTIONS}
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def run_identity(settings: dict, seed: int) -> dict:
    """What decides a run's numbers: its task, model, cell and training settings and its seed.

    Keys are sorted at every level, so the identity (a param of the train rule, compared by
    Snakemake as written) does not change with the order of keys in a study file."""
    return canonical({**{key: settings.get(key) or {} for key in IDENTITY_SECTIONS}, "seed": seed})


def canonical(value: Any) -> Any:
    """``value`` with the keys of every mapping in it sorted."""
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value


#: A run folder as :func:`run_folder` names it (the workflow's ``{run}`` wildcard).
RUN_FOLDER_PATTERN = r"task~[^/]+/model~[^/]+/cell~[^/]+/cfg~[0-9a-f]{10}/seed~\d+"


def run_folder(identity: dict) -> str:
    """``task~pos/model~brnn/cell~lstm/cfg~1a2b3c4d5e/seed~1``: readable names, then the digest."""
    names = [f"{axis}~{identity[axis]['name']}" for axis in FIXED_AXES]
    return "/".join([*names, f"cfg~{settings_digest(identity)}", f"seed~{identity['seed']}"])


def parse_run_folder(folder: str) -> dict[str, str | int]:
    """The parts :func:`run_folder` joined: ``{"task": "pos", "model": "brnn", "cell": "lstm",
    "cfg": "1a2b3c4d5e", "seed": 1}``; a ValueError names a folder not of that form."""
    if not re.fullmatch(RUN_FOLDER_PATTERN, folder):
        raise ValueError(f"{folder!r} is not a run folder (task~<task>/model~<model>/cell~<cell>/cfg~<digest>/seed~<n>)")
    parts = dict(part.split("~", 1) for part in folder.split("/"))
    return {**parts, "seed": int(parts["seed"])}


# -- grid expansion ----------------------------------------------------------------------------
def axis_label(key: str) -> str:
    """Column name of a grid axis: ``task.T`` -> ``T``; ``model`` -> ``model``."""
    return key.rsplit(".", 1)[-1]


def artifact_grids(name: str, artifact: dict) -> dict[str, dict]:
    """The named grids of an artifact: ``grids`` as given, or ``{"main": grid}``."""
    if "grids" in artifact:
        if "grid" in artifact:
            raise ConfigError(f"artifacts.{name}: give either grid or grids, not both")
        return {grid: dict(axes or {}) for grid, axes in artifact["grids"].items()}
    return {DEFAULT_GRID: dict(artifact.get("grid") or {})} if "grid" in artifact else {}


ALL_CELLS = "all"  # ``cell: all`` in a grid: every registered cell


def registered_cells() -> list[str]:
    """Every registered cell: the papers' in the reports' order, then any other, by name."""
    from ..cells import CELLS
    from ..labels import CELL_ORDER

    rank = {name: i for i, name in enumerate(CELL_ORDER)}
    return sorted(CELLS.names(), key=lambda name: (rank.get(name, len(rank)), name))


def cell_axis(value: Any, extra_cells: tuple[str, ...]) -> Any:
    """A grid's ``cell`` entry with the user's cells: ``all`` is every registered cell, a list
    (an axis that varies the cell) gets ``extra_cells`` appended, a single name stays."""
    if value == ALL_CELLS:
        return registered_cells()
    if isinstance(value, list):
        return value + [cell for cell in extra_cells if cell not in value]
    return value


def expand_grid(name: str, grid_name: str, grid: dict, settings: dict, per_cell: dict,
                named_grid: bool, extra_cells: tuple[str, ...] = ()) -> list[tuple[dict, dict]]:
    """(run identity, labels) of every point of one grid.

    A list is an axis (its values label the runs); a single value (``model.hidden_size: 70``)
    is a setting of this grid's runs only, not a label; ``per_cell`` adds cell settings of this
    grid's runs (e.g. ELSTM's period in the seq2seq models only). The ``cell`` entry may be
    ``all``, and a list of cells is joined by ``extra_cells`` (:func:`cell_axis`).
    """
    grid = dict(grid)
    if "cell" in grid:
        grid["cell"] = cell_axis(grid["cell"], extra_cells)
    per_cell = deep_merge(per_cell, grid.pop("per_cell", None) or {})
    fixed = {k: v for k, v in grid.items() if not isinstance(v, list) and k not in FIXED_AXES + ("seed",)}
    grid = {k: (v if isinstance(v, list) else [v]) for k, v in grid.items() if k not in fixed}
    settings = {section: dict(settings.get(section) or {}) for section in IDENTITY_SECTIONS}
    for key, value in fixed.items():
        section, param = key.split(".", 1)
        settings[section][param] = value
    grid.setdefault("seed", [1])
    for axis in FIXED_AXES:
        if axis not in grid:
            if "name" not in (settings.get(axis) or {}):
                raise ConfigError(f"artifacts.{name}: no {axis} given (put it in a grid or in {axis}.name)")
            grid[axis] = [settings[axis]["name"]]
    extra_axes = sorted(k for k in grid if k not in FIXED_AXES + ("seed",))
    labels_of_extra = [axis_label(k) for k in extra_axes]
    if len(set(labels_of_extra)) != len(labels_of_extra) or set(labels_of_extra) & {"grid", *FIXED_AXES}:
        raise ConfigError(f"artifacts.{name}.grid: axes {extra_axes} share a last name segment "
                          "(or use task, model, cell or grid)")
    keys = list(grid)
    points = []
    for values in itertools.product(*(grid[k] for k in keys)):
        point = dict(zip(keys, values))
        cfg = {section: dict(settings.get(section) or {}) for section in IDENTITY_SECTIONS}
        for key, value in point.items():
            if key in FIXED_AXES:
                cfg[key]["name"] = value
            elif key != "seed":
                section, param = key.split(".", 1)
                cfg[section][param] = value
        cfg["cell"] = deep_merge(cfg["cell"], per_cell.get(cfg["cell"]["name"], {}))
        labels = {**{a: point[a] for a in FIXED_AXES}, **{axis_label(k): point[k] for k in extra_axes},
                  "seed": point["seed"]}
        if named_grid:
            labels["grid"] = grid_name
        points.append((run_identity(cfg, point["seed"]), labels))
    return points


def claimed_seeds(artifact: dict, scale: str) -> int:
    """The most seeds a claim of the artifact asks for at ``scale`` (its ``seeds``; 0: none)."""
    return max(((claim.get("seeds") or {}).get(scale, 0) for claim in artifact.get("claims") or []), default=0)


def with_seeds(grid: dict, needed: int) -> dict:
    """The grid with at least ``needed`` seeds: its own seeds (default [1]) kept, so that their runs
    stay the same runs, then the next integers above them."""
    seeds = grid.get("seed", [1])
    seeds = list(seeds) if isinstance(seeds, list) else [seeds]
    if len(seeds) >= needed:
        return grid
    more = itertools.count(max(seeds) + 1)
    return {**grid, "seed": seeds + [next(more) for _ in range(needed - len(seeds))]}


class RunChecker:
    """check_run_config with one memory for a whole plan: each of its checks runs once per distinct
    setting it reads (seeds, and the scales of a study, share most), so planning stays cheap."""

    def __init__(self):
        self._seen: dict[tuple, tuple[str, str | None] | None] = {}

    def __call__(self, identity: dict) -> None:
        check_run_config(identity, self._seen)


def setting_path(artifact_name: str, raw: dict, grid_name: str, grid: dict, defaults: dict, key: str) -> str:
    """Where an artifact's run setting ``key`` (``model.hidden_size``) is given in the study merged
    with its scale: its grid, the artifact or the defaults (else, e.g. from ``per_cell``,
    ``artifacts.<artifact>.<key>``)."""
    section, param = key.split(".", 1)
    if key in grid:
        return f"artifacts.{artifact_name}.{f'grids.{grid_name}' if 'grids' in raw else 'grid'}.{key}"
    if param not in (raw.get(section) or {}) and param in (defaults.get(section) or {}):
        return f"defaults.{key}"
    return f"artifacts.{artifact_name}.{key}"


def expand_study(name: str, study: dict, scale: str, checker: RunChecker | None = None,
                 extra_cells: tuple[str, ...] = ()) -> Study:
    """Merge the scale, expand every artifact's grids (with the user's ``extra_cells`` in every
    grid that varies the cell) and share runs of equal settings."""
    checker = checker or RunChecker()
    merged = apply_scale(study, scale)
    result = Study(name=name, title=merged["title"], paper=merged["paper"], scale=scale,
                   scale_note=merged["scale_note"], spec=merged, artifacts={}, extra_cells=tuple(extra_cells))
    defaults = merged["defaults"]
    for artifact_name, raw in merged["artifacts"].items():
        artifact = Artifact(name=artifact_name, title=raw["title"], spec=raw)
        if "analysis" in raw:
            artifact.analysis = check_analysis(artifact_name, raw["analysis"])
        settings = deep_merge(defaults, {k: raw.get(k) or {} for k in (*IDENTITY_SECTIONS, "per_cell")})
        per_cell = settings.pop("per_cell", {}) or {}
        grids = artifact_grids(artifact_name, raw)
        needed = claimed_seeds(raw, scale)
        if needed and not grids:
            raise ConfigError(f"artifacts.{artifact_name}: a claim asks for {needed} seeds at the {scale} scale, "
                              "but the artifact trains no runs (ask on the artifact whose runs it reads)")
        grids = {grid_name: with_seeds(grid, needed) for grid_name, grid in grids.items()}
        for grid_name, grid in grids.items():
            own_cells = set(grid["cell"]) if isinstance(grid.get("cell"), list) else set()
            for identity, labels in expand_grid(artifact_name, grid_name, grid, settings, per_cell, len(grids) > 1,
                                                extra_cells):
                folder = run_folder(identity)
                try:
                    checker(identity)
                except ConfigError as error:
                    cell = identity["cell"]["name"]
                    if cell in extra_cells and cell not in own_cells:  # the grid sets what only its cells take
                        artifact.left_out.setdefault(cell, str(error))
                        continue
                    where = (setting_path(artifact_name, raw, grid_name, grid, defaults, error.key) if error.key
                             else f"artifacts.{artifact_name}")
                    raise ConfigError(f"{where}, run {folder}: {error}") from None
                result.runs[folder] = identity
                artifact.runs.append(RunUse(folder, labels))
        result.artifacts[artifact_name] = artifact
    for artifact in result.artifacts.values():
        if "runs_of" in artifact.spec:
            other = result.artifacts.get(artifact.spec["runs_of"])
            if other is None or not other.runs:
                raise ConfigError(f"artifacts.{artifact.name}.runs_of: {artifact.spec['runs_of']!r} is not an "
                                  f"artifact with runs; known: {', '.join(a for a, x in result.artifacts.items() if x.runs)}")
            artifact.runs = list(other.runs)
    for artifact in result.artifacts.values():
        artifact.reads = resolve_reads(artifact, result)
        regime_on = (artifact.spec.get("regime") or {}).get("on")
        if regime_on is not None and regime_on not in result.artifacts:
            raise ConfigError(f"artifacts.{artifact.name}.regime.on: unknown artifact {regime_on!r}; "
                              f"known: {', '.join(result.artifacts)}")
    for artifact in result.artifacts.values():
        if artifact.rows_from is not None:
            check_analysis_from(artifact, result)
    return result


def check_analysis_from(artifact: Artifact, study: Study) -> None:
    """An artifact whose analysis rows are copied from another's (:mod:`rnnrepro.plan.analysis_from`)
    runs the same analysis, with the same parameters, on runs all of which the other reads:
    otherwise the copy would not be what its analysis computes, and the study file is wrong."""
    name = artifact.rows_from
    where = f"artifacts.{artifact.name}.analysis_from"
    source = study.artifacts.get(name)
    if source is None or source.analysis is None:
        known = [a for a, other in study.artifacts.items() if other.analysis is not None and a != artifact.name]
        raise ConfigError(f"{where}: {name!r} is not an analysis artifact of the study; known: {', '.join(known)}")
    if artifact.analysis is None:
        raise ConfigError(f"{where}: the artifact has no analysis of its own; give it {name}'s")
    if source.rows_from is not None:
        raise ConfigError(f"{where}: {name!r} copies its rows from {source.rows_from!r}; name that one")
    if artifact.analysis != source.analysis:
        raise ConfigError(f"{where}: its analysis {artifact.analysis} is not {name}'s {source.analysis}, so "
                          f"{name}'s rows are not what it computes")
    missing = sorted({use.folder for use in artifact.reads} - {use.folder for use in source.reads})
    if missing:
        raise ConfigError(f"{where}: {name} does not read {len(missing)} of its runs, e.g. {missing[0]}")
    labels = {use.folder: use.labels for use in source.reads}
    relabelled = [use.folder for use in artifact.reads if use.labels != labels[use.folder]]
    if relabelled:  # the rows are found by their labels
        raise ConfigError(f"{where}: {name} reads {len(relabelled)} of its runs under other labels, e.g. "
                          f"{relabelled[0]}: {labels[relabelled[0]]}")


def resolve_reads(artifact: Artifact, study: Study) -> list[RunUse]:
    """The trained runs an analysis reads: its own grids' runs, then each ``reads`` entry's
    (``{artifact: other, where: {label: value or [values]}}``), each run once."""
    if artifact.analysis is None:
        return []
    uses = list(artifact.runs)
    for index, entry in enumerate(artifact.spec.get("reads") or []):
        other = study.artifacts.get(entry["artifact"])
        where = f"artifacts.{artifact.name}.reads[{index}]"
        if other is None:
            raise ConfigError(f"{where}: unknown artifact {entry['artifact']!r}; known: {', '.join(study.artifacts)}")
        chosen = [use for use in other.runs if labels_match(use.labels, entry.get("where") or {})]
        if not chosen:
            raise ConfigError(f"{where}: no run of artifact {entry['artifact']!r} has the labels {entry.get('where')}")
        uses += chosen
    seen, unique = set(), []
    for use in uses:
        if use.folder not in seen:
            seen.add(use.folder)
            unique.append(use)
    return unique


def labels_match(labels: dict, where: dict) -> bool:
    """Whether ``labels`` has each key of ``where`` at its value (or at one of its list of values)."""
    for key, wanted in where.items():
        options = wanted if isinstance(wanted, list) else [wanted]
        if labels.get(key) not in options:
            return False
    return True


def check_analysis(artifact: str, params: dict) -> dict:
    """An analysis artifact's params, checked against the analysis function's signature."""
    from ..analyses import ANALYSES
    from .config_check import check_kwargs

    params = dict(params)
    name = params.pop("name", None)
    try:
        function = ANALYSES[name]
    except KeyError as error:
        raise ConfigError(f"artifacts.{artifact}.analysis: {error}") from None
    try:
        check_kwargs(f"analysis {name!r}", function, params, skip={"seed", "runs", "data"})
    except ConfigError as error:
        raise ConfigError(f"artifacts.{artifact}.analysis: {error}") from None
    from ..data.sources import DATASETS

    unknown = sorted(set(params.get("datasets") or []) - set(DATASETS))
    if unknown:
        raise ConfigError(f"artifacts.{artifact}.analysis.datasets: unknown dataset {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(DATASETS))}")
    return {"name": name, **params}


def study_names(studies_dir: Path) -> list[str]:
    """Every study of the project: the stems of ``config/studies/*.yaml``."""
    return sorted(p.stem for p in Path(studies_dir).glob("*.yaml"))


def load_study(name: str, studies_dir: Path, schema: dict, scale: str, checker: RunChecker | None = None,
               extra_cells: tuple[str, ...] = (), check_scales: tuple[str, ...] = ()) -> Study:
    """Study ``name`` validated and expanded at ``scale``. Every other scale of ``check_scales`` is
    expanded and checked too (without ``extra_cells``), its problems named ``<file>: scale <scale>: ...``."""
    path = Path(studies_dir) / f"{name}.yaml"
    raw = load_yaml(path)
    validate(raw, schema, path)
    checker = checker or RunChecker()
    try:
        study = check_metrics(expand_study(name, raw, scale, checker, extra_cells), path)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
    for other in check_scales:
        if other != scale:
            try:
                check_metrics(expand_study(name, raw, other, checker), path)
            except ConfigError as error:
                raise ConfigError(f"{path}: scale {other}: {error}") from None
    return study


def load_workflow_config(config: dict, schema_dir: Path, studies_dir: Path) -> tuple[dict, dict[str, Study]]:
    """Validate the top-level config and every selected study; return (config with defaults, studies).

    ``studies`` defaults to every study file in ``studies_dir``. Each study is expanded at the
    chosen scale and checked at every other scale of the config schema's ``scale`` enum too.
    """
    schema_dir, studies_dir = Path(schema_dir), Path(studies_dir)
    config_schema = load_yaml(schema_dir / "config.schema.yaml")
    known = study_names(studies_dir)
    config_schema["properties"]["studies"]["items"]["enum"] = known
    from ..cells import CELLS

    config_schema["properties"]["extra_cells"]["items"]["enum"] = CELLS.names()
    validate(config, config_schema, CONFIG_SOURCE)
    config = fill_defaults(config, config_schema)
    if config.get("studies") is None:
        config["studies"] = known
    study_schema = study_schema_of(schema_dir)
    checker = RunChecker()
    extra = tuple(config.get("extra_cells") or ())
    scales = tuple(config_schema["properties"]["scale"]["enum"])
    studies = {name: load_study(name, studies_dir, study_schema, config["scale"], checker, extra, scales)
               for name in config["studies"]}
    return config, studies


def study_schema_of(schema_dir: Path) -> dict:
    """The study schema with the registries' names filled in."""
    return registry_enums(load_yaml(Path(schema_dir) / "study.schema.yaml"))


def runs_of(studies: dict[str, Study]) -> dict[str, dict]:
    """Every run of the studies: run folder -> identity, a run two studies share once (the
    workflow's plan, which its train jobs and packs are made from)."""
    return {folder: identity for study in studies.values() for folder, identity in study.runs.items()}
