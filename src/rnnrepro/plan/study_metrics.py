"""The metrics each artifact of a study will have, and the check that its claims and ``show``
name only those.

A study names metrics in two places: a claim's ``check`` (``metric``: one name or a list, in a
check or in each check of a list, ``params.metric`` of a ``python`` check too) and an
artifact's ``show.metrics``. A misspelt name would only show much later, as a claim that
"cannot be judged" for a reason that is not the real one; :func:`check_metrics` stops the
parse instead, naming the key, the metric and what the artifact has.

What an artifact has:

- an artifact with training runs (its grids, or ``runs_of`` another's): for each run, what its
  task's ``evaluate`` writes for dev and test (:meth:`rnnrepro.tasks.base.Task.emitted_metrics`,
  given the run's task parameters), what the training loop adds (:func:`training_metrics`) and
  the aggregation's mean of every curve metric (:func:`curve_metrics`, ``mean_<metric>``);
- an artifact with an analysis (whose table is then what the report judges): the names its
  function declares as ``emitted_metrics``, a set, or a function of the analysis parameters
  (``validation_peak.emitted_metrics = lambda metric="dev_bleu", **_: {...}``);
- and always the metrics of its rows in the published CSVs (``reports/published/<study>_*.csv``),
  on which its claims are judged too; a ``published_only`` artifact has those alone.

An analysis that declares nothing is not checked.
"""
from __future__ import annotations

import csv
import difflib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .config_check import ConfigError

#: Where the published numbers live, relative to the project root (config/studies/ is two below it).
PUBLISHED = Path("reports") / "published"
#: Metrics of a run listed in full in an error message; beyond that, a count.
SHOWN = 40


class PlannedStudy(Protocol):
    """What :func:`check_metrics` reads of an expanded study (a :class:`rnnrepro.plan.studies.Study`,
    which imports this module: the annotation names no class of it)."""

    @property
    def name(self) -> str: ...

    @property
    def runs(self) -> Mapping[str, Mapping[str, Any]]: ...

    @property
    def artifacts(self) -> Mapping[str, Any]: ...


S = TypeVar("S", bound=PlannedStudy)


# -- what a training run emits ----------------------------------------------------------------
def training_metrics(train: Mapping[str, Any]) -> set[str]:
    """What :func:`rnnrepro.train.train_run` adds to the task's metrics in ``metrics.json`` for
    these ``train`` settings: ``train_loss`` (mean loss of the last epoch), ``steps``, ``params``,
    ``epochs``; ``best_epoch`` with ``patience``; ``diverged`` and ``diverged_step`` with
    ``on_nonfinite: record``."""
    from ..train import TrainConfig

    cfg = TrainConfig(**train)
    names = {"train_loss", "steps", "params", "epochs"}
    if cfg.patience is not None:
        names.add("best_epoch")
    if cfg.on_nonfinite == "record":
        names |= {"diverged", "diverged_step"}
    return names


def curve_metrics(train: Mapping[str, Any], dev_metric: str) -> set[str]:
    """The metrics :func:`rnnrepro.train.train_run` puts on ``curve.tsv``: ``train_loss`` (every
    ``log_every`` steps), the task's dev metric and the ``monitor`` metric (every epoch),
    ``grad_norm`` with ``log_grad_norm``, ``lr`` with a learning-rate decay."""
    from ..train import TrainConfig

    cfg = TrainConfig(**train)
    names = {"train_loss", dev_metric, cfg.monitor or dev_metric}
    if cfg.log_grad_norm:
        names.add("grad_norm")
    if cfg.lr_decay != 1.0:
        names.add("lr")
    return names


def run_metrics(identity: Mapping[str, Any]) -> set[str]:
    """Every metric of a run in the aggregated run table (:func:`rnnrepro.aggregate.collect`):
    its ``metrics.json`` and the curve means ``mean_<metric>``."""
    from ..aggregate import CURVE_MEAN
    from ..tasks import TASKS

    params = dict(identity["task"])
    task = TASKS[params.pop("name")]
    train = identity.get("train") or {}
    return (task.emitted_metrics(**params) | training_metrics(train)
            | {f"{CURVE_MEAN}{name}" for name in curve_metrics(train, task.dev_metric)})


# -- what an analysis and the published numbers have ---------------------------------------------
def analysis_metrics(params: Mapping[str, Any]) -> set[str] | None:
    """The metrics the analysis ``params["name"]`` writes with these parameters, or None when its
    function declares none."""
    from ..analyses import ANALYSES

    params = dict(params)
    declared = getattr(ANALYSES[params.pop("name")], "emitted_metrics", None)
    if declared is None:
        return None
    return set(declared(**params) if callable(declared) else declared)


def published_metrics(folder: Path | None, study: str) -> dict[str, set[str]]:
    """artifact -> the metrics of its rows in the study's published CSVs (``<study>_*.csv``)."""
    found: dict[str, set[str]] = {}
    if folder is None or not folder.is_dir():
        return found
    for path in sorted(folder.glob(f"{study}_*.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                if row.get("study", study) == study and row.get("artifact") and row.get("metric"):
                    found.setdefault(row["artifact"], set()).add(row["metric"])
    return found


def published_folder(source: Path | str) -> Path | None:
    """The published numbers of the project whose study file is ``source``
    (``<project>/config/studies/<study>.yaml`` -> ``<project>/reports/published``)."""
    parents = Path(source).resolve().parents
    return parents[2] / PUBLISHED if len(parents) > 2 else None


# -- the check -----------------------------------------------------------------------------------
def metric_references(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(key, metric) of every metric an artifact's spec names: its claims' checks and ``show``."""
    for index, claim in enumerate(spec.get("claims") or []):
        check = claim.get("check")
        checks = [(f"claims[{index}].check[{i}]", c) for i, c in enumerate(check)] if isinstance(check, list) \
            else [(f"claims[{index}].check", check)]
        for key, one in checks:
            if not isinstance(one, Mapping):
                continue
            places = [(f"{key}.metric", one.get("metric"))]
            if one.get("kind") == "python" and isinstance(one.get("params"), Mapping):
                places.append((f"{key}.params.metric", one["params"].get("metric")))
            for place, value in places:
                names = [value] if isinstance(value, str) else list(value or [])
                for position, name in enumerate(names):
                    yield (place if isinstance(value, str) else f"{place}[{position}]"), name
    for position, name in enumerate((spec.get("show") or {}).get("metrics") or []):
        yield f"show.metrics[{position}]", name


def listed(names: set[str]) -> str:
    """The names sorted, the first :data:`SHOWN` of them in full."""
    ordered = sorted(names)
    if len(ordered) > SHOWN:
        return ", ".join(ordered[:SHOWN]) + f", ... ({len(ordered) - SHOWN} more)"
    return ", ".join(ordered) or "(none)"


def check_metrics(study: S, source: Path | str, published: Path | None = None) -> S:
    """Raise :class:`ConfigError` for every metric a claim or ``show`` of an artifact of ``study``
    (an expanded :class:`rnnrepro.plan.studies.Study`) names that the artifact will not have; return
    the study. ``source`` is the study's file, by which the published CSVs are found (or give
    their folder as ``published``)."""
    on_paper = published_metrics(published if published is not None else published_folder(source), study.name)
    by_settings: dict[str, set[str]] = {}

    def of_run(folder: str) -> set[str]:
        identity = study.runs[folder]
        key = repr((identity.get("task"), identity.get("train")))  # the same only for the same settings
        if key not in by_settings:
            by_settings[key] = run_metrics(identity)
        return by_settings[key]

    problems = []
    for name, artifact in study.artifacts.items():
        given = on_paper.get(name, set())
        if artifact.analysis is not None:
            ours = analysis_metrics(artifact.analysis)
            if ours is None:
                continue
            what = f"{name}'s analysis {artifact.analysis['name']} emits"
        elif artifact.runs:
            ours = set().union(*(of_run(use.folder) for use in artifact.runs))
            what = f"{name}'s runs emit"
        elif artifact.spec.get("published_only"):
            ours, what = set(), ""
        else:
            continue
        known = ours | given
        for key, metric in metric_references(artifact.spec):
            if metric in known:
                continue
            close = difflib.get_close_matches(metric, sorted(known), n=1)
            has = [f"{what}: {listed(ours)}"] if what else []
            has += [f"its published numbers give: {listed(given)}"] if given or not what else []
            problems.append(f"artifacts.{name}.{key}: unknown metric {metric!r}"
                            + (f" (did you mean {close[0]!r}?)" if close else "") + "; " + "; ".join(has))
    if len(problems) == 1:
        raise ConfigError(problems[0])
    if problems:
        raise ConfigError("unknown metrics:\n" + "\n".join(f"  - {problem}" for problem in problems))
    return study
