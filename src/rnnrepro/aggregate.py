"""Collect finished training runs into two long-form tables.

Every run folder ``results/runs/<study>/<run>/`` holds ``config.json`` (with ``labels``,
``artifacts`` and ``scale``), ``metrics.json`` (flat metric -> number) and, optionally,
``curve.tsv`` (``step, epoch, metric, value``). This module turns a list of such folders into

* ``table``: one row per (artifact, metric) of each run, columns
  ``study, artifact, scale, run, task, model, cell, seed, <extra labels>, metric, value``;
* ``curves``: one row per (artifact, curve point) of each run, columns
  ``study, artifact, run, task, model, cell, seed, <extra labels>, step, epoch, metric, value``.

A run used by several artifacts appears once under each of them. Extra grid axes found in the
labels (for example ``T`` of the adding task) become extra columns, empty for runs without them.

Command line::

    python -m rnnrepro.aggregate --table runs.csv --curves curves.csv RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rnnrepro.atomic import atomic_path

#: Labels every run must carry (``config.json`` -> ``labels``).
REQUIRED_LABELS: tuple[str, ...] = ("study", "task", "model", "cell", "seed")
#: Columns of the run table before the extra label columns.
TABLE_HEAD: tuple[str, ...] = ("study", "artifact", "scale", "run", "task", "model", "cell", "seed")
#: Columns of the curve table before the extra label columns.
CURVES_HEAD: tuple[str, ...] = ("study", "artifact", "run", "task", "model", "cell", "seed")
#: Columns of ``curve.tsv`` (and the tail of the curve table).
CURVE_COLUMNS: tuple[str, ...] = ("step", "epoch", "metric", "value")
#: Names an extra label may not take, because the tables already use them.
RESERVED: frozenset[str] = frozenset(TABLE_HEAD + CURVES_HEAD + CURVE_COLUMNS)


class RunFolderError(ValueError):
    """A run folder is missing a file or holds a file that cannot be read."""

    def __init__(self, run_dir: Path | str, problem: str) -> None:
        super().__init__(f"run folder {run_dir}: {problem}")
        self.run_dir = Path(run_dir)


@dataclass(frozen=True)
class Run:
    """The parsed contents of one run folder."""

    path: Path
    run: str
    labels: dict[str, Any]
    artifacts: list[str]
    scale: str
    metrics: dict[str, float]
    curve: pd.DataFrame


def run_name(run_dir: Path) -> str:
    """Return the run's grid path, e.g. ``task~pos/model~brnn/cell~lstm/seed~1``.

    It is made of the trailing ``key~value`` segments of the folder path; a folder without
    such segments is named by its last component.
    """
    parts = list(Path(run_dir).parts)
    tail: list[str] = []
    while parts and "~" in parts[-1]:
        tail.insert(0, parts.pop())
    return "/".join(tail) if tail else Path(run_dir).name


def _read_json(run_dir: Path, name: str) -> dict[str, Any]:
    """Read ``run_dir/name`` as a JSON object, raising :class:`RunFolderError` on failure."""
    path = run_dir / name
    if not path.is_file():
        raise RunFolderError(run_dir, f"{name} is missing")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RunFolderError(run_dir, f"{name} is unreadable ({err})") from err
    if not isinstance(data, dict):
        raise RunFolderError(run_dir, f"{name} does not hold a JSON object")
    return data


def _read_metrics(run_dir: Path) -> dict[str, float]:
    """Read ``metrics.json``: a flat dict of metric name -> number (``null`` becomes NaN)."""
    raw = _read_json(run_dir, "metrics.json")
    metrics: dict[str, float] = {}
    for name, value in raw.items():
        if value is None:
            metrics[name] = math.nan
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            metrics[name] = float(value)
        else:
            raise RunFolderError(run_dir, f"metrics.json: metric {name!r} is not a number: {value!r}")
    return metrics


def _read_curve(run_dir: Path) -> pd.DataFrame:
    """Read ``curve.tsv`` (optional: a run without it has an empty curve)."""
    path = run_dir / "curve.tsv"
    if not path.exists():
        return pd.DataFrame(columns=list(CURVE_COLUMNS))
    try:
        curve = pd.read_csv(path, sep="\t")
    except pd.errors.EmptyDataError:
        return pd.DataFrame(columns=list(CURVE_COLUMNS))
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise RunFolderError(run_dir, f"curve.tsv is unreadable ({err})") from err
    missing = [c for c in CURVE_COLUMNS if c not in curve.columns]
    if missing:
        raise RunFolderError(run_dir, f"curve.tsv lacks the columns {missing}")
    return curve[list(CURVE_COLUMNS)]


def _read_config(run_dir: Path) -> tuple[dict[str, Any], list[str], str, str]:
    """Read ``config.json`` and return its labels, artifacts, scale and run path, checked.

    The run path is the config's ``run`` entry, else it is derived from the folder (:func:`run_name`).
    """
    config = _read_json(run_dir, "config.json")
    labels = config.get("labels")
    if not isinstance(labels, dict):
        raise RunFolderError(run_dir, "config.json has no 'labels' object")
    missing = [key for key in REQUIRED_LABELS if key not in labels]
    if missing:
        raise RunFolderError(run_dir, f"config.json labels lack {missing}")
    clashes = sorted((set(labels) - set(REQUIRED_LABELS)) & RESERVED)
    if clashes:
        raise RunFolderError(run_dir, f"config.json labels use reserved names {clashes}")
    artifacts = config.get("artifacts", [])
    if isinstance(artifacts, str):
        artifacts = [artifacts]
    if not isinstance(artifacts, list):
        raise RunFolderError(run_dir, "config.json 'artifacts' is not a list")
    scale = str(config.get("scale", ""))
    run = config.get("run")
    run = run if isinstance(run, str) and run else run_name(run_dir)
    return labels, [str(a) for a in artifacts], scale, run


def load_run(run_dir: Path | str) -> Run:
    """Parse one run folder; raise :class:`RunFolderError` naming it if anything is wrong."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderError(run_dir, "is not a directory")
    labels, artifacts, scale, run = _read_config(run_dir)
    return Run(
        path=run_dir,
        run=run,
        labels=labels,
        artifacts=artifacts,
        scale=scale,
        metrics=_read_metrics(run_dir),
        curve=_read_curve(run_dir),
    )


def extra_labels(runs: Iterable[Run]) -> list[str]:
    """Return the sorted label names beyond :data:`REQUIRED_LABELS` used by any run."""
    names: set[str] = set()
    for run in runs:
        names.update(run.labels)
    return sorted(names - set(REQUIRED_LABELS))


def _identity(run: Run, artifact: str, extras: Sequence[str]) -> dict[str, Any]:
    """The identifying columns of one run under one artifact (labels and extras)."""
    row: dict[str, Any] = {
        "study": run.labels["study"],
        "artifact": artifact,
        "scale": run.scale,
        "run": run.run,
    }
    for key in REQUIRED_LABELS[1:]:
        row[key] = run.labels[key]
    for key in extras:
        row[key] = run.labels.get(key)
    return row


def _table_rows(run: Run, extras: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Yield one table row per (artifact, metric) of ``run``."""
    for artifact in run.artifacts:
        ident = _identity(run, artifact, extras)
        for metric, value in run.metrics.items():
            yield {**ident, "metric": metric, "value": value}


def _curve_frame(run: Run, extras: Sequence[str]) -> pd.DataFrame:
    """Return the curve of ``run`` repeated under each of its artifacts, with identity columns."""
    frames = []
    for artifact in run.artifacts:
        ident = _identity(run, artifact, extras)
        del ident["scale"]
        frame = run.curve.copy()
        for key, value in reversed(list(ident.items())):
            frame.insert(0, key, [value] * len(frame))
        frames.append(frame)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def collect_runs(run_dirs: Iterable[Path | str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read run folders and return ``(table, curves)`` in long form (see the module doc).

    Runs whose config lists no artifact are skipped with a warning, since no report uses them.
    """
    runs = [load_run(d) for d in run_dirs]
    for run in runs:
        if not run.artifacts:
            warnings.warn(f"run folder {run.path}: no artifacts listed, skipped", stacklevel=2)
    extras = extra_labels(runs)
    table_columns = [*TABLE_HEAD, *extras, "metric", "value"]
    curve_columns = [*CURVES_HEAD, *extras, *CURVE_COLUMNS]

    table = pd.DataFrame([row for run in runs for row in _table_rows(run, extras)], columns=table_columns)
    curve_frames = [f for f in (_curve_frame(run, extras) for run in runs) if not f.empty]
    if curve_frames:
        curves = pd.concat(curve_frames, ignore_index=True)[curve_columns]
    else:
        curves = pd.DataFrame(columns=curve_columns)
    return table, curves


def write_csv(frame: pd.DataFrame, path: Path | str) -> None:
    """Write ``frame`` as CSV (no index) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def write_tables(
    run_dirs: Iterable[Path | str], table_path: Path | str, curves_path: Path | str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Collect ``run_dirs`` and write the run table and the curve table as CSV files."""
    table, curves = collect_runs(run_dirs)
    write_csv(table, table_path)
    write_csv(curves, curves_path)
    return table, curves


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.aggregate",
        description="Collect run folders into a long-form run table and a curve table (CSV).",
    )
    parser.add_argument(
        "--table", required=True, type=Path, help="output CSV: one row per (artifact, metric) of each run"
    )
    parser.add_argument(
        "--curves",
        required=True,
        type=Path,
        help="output CSV: one row per (artifact, curve point) of each run",
    )
    parser.add_argument(
        "run_dirs",
        nargs="*",
        type=Path,
        metavar="RUN_DIR",
        help="run folders (holding config.json, metrics.json)",
    )
    args = parser.parse_args(argv)
    try:
        table, curves = write_tables(args.run_dirs, args.table, args.curves)
    except RunFolderError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(
        f"{len(args.run_dirs)} runs -> {len(table)} table rows ({args.table}), "
        f"{len(curves)} curve rows ({args.curves})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
