"""Collect finished training runs into long-form tables, labelled by the artifacts that use them.

A run folder holds what decides its numbers (``config.json``: task, model, cell, train, seed),
its results (``metrics.json``: flat metric -> number, plus ``provenance``) and its training
curve (``curve.tsv``: ``step, epoch, metric, value``). Which artifacts use a run, and under
which labels (grid axes such as ``T`` or ``delay``), is not in the folder: the workflow
passes it as a list of *uses* ``{"artifact", "folder", "labels"}``. This module writes

* ``table``: one row per (use, metric), columns
  ``study, artifact, scale, run, task, model, cell, seed, <extra labels>, metric, value``;
  besides the metrics of ``metrics.json``, every curve metric ``m`` gives ``mean_m``, its mean
  over the curve's points (the area under the curve divided by its length), which measures
  how fast a run converged;
* ``curves``: one row per (use, curve point), the same identity columns then
  ``step, epoch, metric, value``;
* ``provenance``: one row per run: device, torch version, threads, switches, training wall
  time, and from Snakemake's ``benchmark.tsv`` the job's wall time, CPU time and peak memory;
* ``items``: the test items every run keeps (``items.npz``, :mod:`rnnrepro.metrics.items`), by
  run, in one file: what the report's paired bootstrap resamples.

A run used by several artifacts appears once under each of them. Extra labels become extra
columns, empty for uses without them.

Command line (each run folder labelled by its own task, model, cell and seed)::

    python -m rnnrepro.aggregate --table runs.csv --curves curves.csv RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rnnrepro.atomic import atomic_path
from rnnrepro.metrics.items import ITEMS_FILE, SplitItems, save_study_items

#: Labels every use carries.
REQUIRED_LABELS: tuple[str, ...] = ("task", "model", "cell", "seed")
#: Columns of the run table before the extra label columns.
TABLE_HEAD: tuple[str, ...] = ("study", "artifact", "scale", "run", *REQUIRED_LABELS)
#: Columns of ``curve.tsv`` (and the tail of the curve table).
CURVE_COLUMNS: tuple[str, ...] = ("step", "epoch", "metric", "value")
#: Names an extra label may not take, because the tables already use them.
RESERVED: frozenset[str] = frozenset(TABLE_HEAD + CURVE_COLUMNS)
#: Prefix of the metrics derived from a curve (mean over its points).
CURVE_MEAN = "mean_"


class RunFolderError(ValueError):
    """A run folder is missing a file or holds a file that cannot be read."""

    def __init__(self, run_dir: Path | str, problem: str) -> None:
        super().__init__(f"run folder {run_dir}: {problem}")
        self.run_dir = Path(run_dir)


@dataclass(frozen=True)
class Run:
    """The parsed contents of one run folder."""

    path: Path
    config: dict[str, Any]
    metrics: dict[str, float]
    provenance: dict[str, Any]
    curve: pd.DataFrame


def run_name(run_dir: Path | str) -> str:
    """The run's path under ``runs/``: its trailing ``key~value`` segments
    (``task~pos/model~brnn/cell~lstm/cfg~…/seed~1``), or its last component."""
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


def _read_metrics(run_dir: Path) -> tuple[dict[str, float], dict[str, Any]]:
    """``metrics.json``: flat metric name -> number (``null`` becomes NaN), and its provenance."""
    raw = _read_json(run_dir, "metrics.json")
    made = raw.pop("provenance", {})
    metrics: dict[str, float] = {}
    for name, value in raw.items():
        if value is None:
            metrics[name] = math.nan
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            metrics[name] = float(value)
        else:
            raise RunFolderError(run_dir, f"metrics.json: metric {name!r} is not a number: {value!r}")
    if not isinstance(made, dict):
        raise RunFolderError(run_dir, "metrics.json: provenance is not an object")
    return metrics, made


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


#: Columns of Snakemake's ``benchmark.tsv`` kept in the provenance table, under these names.
BENCHMARK_COLUMNS = {"s": "job_seconds", "cpu_time": "cpu_seconds", "max_rss": "max_rss_mb"}


def _read_benchmark(run_dir: Path) -> dict[str, float]:
    """The job's wall time, CPU time and peak memory from Snakemake's ``benchmark.tsv`` (if any)."""
    path = run_dir / "benchmark.tsv"
    if not path.exists():
        return {}
    try:
        table = pd.read_csv(path, sep="\t")
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise RunFolderError(run_dir, f"benchmark.tsv is unreadable ({err})") from err
    return {name: float(pd.to_numeric(table[column], errors="coerce").iloc[-1])
            for column, name in BENCHMARK_COLUMNS.items() if column in table and len(table)}


def load_run(run_dir: Path | str) -> Run:
    """Parse one run folder; raise :class:`RunFolderError` naming it if anything is wrong."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderError(run_dir, "is not a directory")
    config = _read_json(run_dir, "config.json")
    metrics, made = _read_metrics(run_dir)
    return Run(path=run_dir, config=config, metrics=metrics, provenance={**made, **_read_benchmark(run_dir)},
               curve=_read_curve(run_dir))


def _read_items(run_dir: Path) -> SplitItems | None:
    """The run's test items; None when it kept none (or predates them)."""
    path = run_dir / ITEMS_FILE
    if not path.exists():
        return None
    try:
        return SplitItems.load(path)
    except (OSError, ValueError, KeyError) as err:
        raise RunFolderError(run_dir, f"{ITEMS_FILE} is unreadable ({err})") from err


def curve_means(curve: pd.DataFrame) -> dict[str, float]:
    """``mean_<metric>`` for every metric of a curve: the mean of its points."""
    if curve.empty:
        return {}
    means = curve.groupby("metric", sort=True)["value"].mean()
    return {f"{CURVE_MEAN}{metric}": float(value) for metric, value in means.items()}


def _check_labels(run_dir: Path, labels: Mapping[str, Any]) -> None:
    missing = [key for key in REQUIRED_LABELS if key not in labels]
    if missing:
        raise RunFolderError(run_dir, f"its labels lack {missing}")
    clashes = sorted((set(labels) - set(REQUIRED_LABELS)) & RESERVED)
    if clashes:
        raise RunFolderError(run_dir, f"its labels use reserved names {clashes}")


def collect(uses: Iterable[Mapping[str, Any]], study: str, scale: str
            ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(table, curves, provenance)`` in long form for the uses (see the module doc)."""
    uses = list(uses)
    runs: dict[str, Run] = {}
    for use in uses:
        folder = str(use["folder"])
        if folder not in runs:
            runs[folder] = load_run(folder)
        _check_labels(Path(folder), use["labels"])
    extras = sorted({key for use in uses for key in use["labels"]} - set(REQUIRED_LABELS))
    table_columns = [*TABLE_HEAD, *extras, "metric", "value"]
    curve_columns = [*TABLE_HEAD, *extras, *CURVE_COLUMNS]

    rows, curve_frames = [], []
    for use in uses:
        run = runs[str(use["folder"])]
        ident = {"study": study, "artifact": use["artifact"], "scale": scale, "run": run_name(run.path),
                 **{key: use["labels"].get(key) for key in (*REQUIRED_LABELS, *extras)}}
        for metric, value in {**run.metrics, **curve_means(run.curve)}.items():
            rows.append({**ident, "metric": metric, "value": value})
        if not run.curve.empty:
            frame = run.curve.copy()
            for key, value in reversed(list(ident.items())):
                frame.insert(0, key, [value] * len(frame))
            curve_frames.append(frame)
    table = pd.DataFrame(rows, columns=table_columns)
    curves = (pd.concat(curve_frames, ignore_index=True)[curve_columns] if curve_frames
              else pd.DataFrame(columns=curve_columns))
    provenance = pd.DataFrame([{"run": run_name(run.path), **run.provenance} for run in runs.values()])
    if provenance.empty:
        provenance = pd.DataFrame(columns=["run"])
    return table, curves, provenance


def write_csv(frame: pd.DataFrame, path: Path | str) -> None:
    """Write ``frame`` as CSV (no index) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def collect_items(uses: Iterable[Mapping[str, Any]]) -> dict[str, SplitItems]:
    """The test items of the uses' runs that kept some, by run name."""
    folders = {str(use["folder"]) for use in uses}
    found = {run_name(folder): _read_items(Path(folder)) for folder in sorted(folders)}
    return {name: items for name, items in found.items() if items is not None}


def write_tables(uses: Iterable[Mapping[str, Any]], study: str, scale: str, table_path: Path | str,
                 curves_path: Path | str, provenance_path: Path | str | None = None,
                 items_path: Path | str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Collect the uses and write the run, curve (and provenance) tables as CSV files, and the
    runs' test items (``items_path``)."""
    uses = list(uses)
    table, curves, provenance = collect(uses, study, scale)
    write_csv(table, table_path)
    write_csv(curves, curves_path)
    if provenance_path is not None:
        write_csv(provenance, provenance_path)
    if items_path is not None:
        with atomic_path(items_path) as tmp:
            save_study_items(tmp, collect_items(uses))
    return table, curves, provenance


def uses_of_folders(run_dirs: Iterable[Path | str], artifact: str) -> list[dict[str, Any]]:
    """Uses labelled by each folder's own config (task, model, cell names and seed)."""
    uses = []
    for run_dir in run_dirs:
        config = _read_json(Path(run_dir), "config.json")
        labels = {axis: (config.get(axis) or {}).get("name") for axis in ("task", "model", "cell")}
        uses.append({"artifact": artifact, "folder": str(run_dir), "labels": {**labels, "seed": config.get("seed")}})
    return uses


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.aggregate",
        description="Collect run folders into a long-form run table, a curve table and a provenance table (CSV). "
                    "Each run is labelled by its own task, model, cell and seed.")
    parser.add_argument("--table", required=True, type=Path, help="output CSV: one row per metric of each run")
    parser.add_argument("--curves", required=True, type=Path, help="output CSV: one row per curve point of each run")
    parser.add_argument("--provenance", type=Path, help="output CSV: device, torch, threads, wall time per run")
    parser.add_argument("--study", default="", help="value of the study column")
    parser.add_argument("--artifact", default="runs", help="value of the artifact column (default: runs)")
    parser.add_argument("--scale", default="", help="value of the scale column")
    parser.add_argument("run_dirs", nargs="*", type=Path, metavar="RUN_DIR",
                        help="run folders (holding config.json, metrics.json)")
    args = parser.parse_args(argv)
    try:
        uses = uses_of_folders(args.run_dirs, args.artifact)
        table, curves, _ = write_tables(uses, args.study, args.scale, args.table, args.curves, args.provenance)
    except RunFolderError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"{len(args.run_dirs)} runs -> {len(table)} table rows ({args.table}), "
          f"{len(curves)} curve rows ({args.curves})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
