"""cost.csv: its columns, the row of a run from the measurement of its timing group, reading
and writing. estimated_hours = (steps · seconds_per_step + evaluations · eval_seconds) / 3600."""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from .measure import Measurement
    from .groups import PlannedRun

#: The columns of cost.csv, in order.
COLUMNS = ("run", "study", "artifacts", "task", "model", "cell", "config", "timed_as", "epochs",
           "steps_per_epoch", "steps", "seconds_per_step", "timed_steps", "evaluations", "eval_seconds",
           "eval_method", "estimated_hours", "setup_seconds", "peak_mem_mb", "host_mem_mb", "mem_method",
           "device", "threads", "clock", "torch", "margin")


def epochs_of(identity: dict[str, Any]) -> int:
    """The epochs a run trains (the most, with patience): its ``train.epochs`` or the default."""
    from ..train import TrainConfig

    return int((identity.get("train") or {}).get("epochs", TrainConfig.epochs))


def evaluations_of(epochs: int) -> int:
    """Dev evaluations a run makes, in units of one dev evaluation: one after every epoch, then
    the kept model on dev and on test (the test split counted as one more dev evaluation)."""
    return epochs + 2


def significant(value: float, digits: int = 6) -> float:
    """``value`` rounded to ``digits`` significant digits (what cost.csv holds)."""
    return float(f"{value:.{digits}g}")


def run_row(run: PlannedRun, measured: Measurement, margin: float) -> dict[str, Any]:
    """The cost.csv row of ``run`` from the measurement of its timing group, asking for ``margin``
    (:data:`rnnrepro.cost.resources.MARGIN` unless ``--margin`` says otherwise)."""
    epochs = epochs_of(run.identity)
    steps = epochs * measured.steps_per_epoch
    per_step, per_eval = significant(measured.seconds_per_step), significant(measured.eval_seconds)
    evaluations = evaluations_of(epochs)
    hours = (steps * per_step + evaluations * per_eval) / 3600
    row = {**measured.row(), "run": run.folder, "study": ";".join(run.studies), "artifacts": ";".join(run.artifacts),
           "task": run.identity["task"]["name"], "model": run.identity["model"]["name"],
           "cell": run.identity["cell"]["name"], "config": run.config, "epochs": epochs, "steps": steps,
           "seconds_per_step": per_step, "evaluations": evaluations, "eval_seconds": per_eval,
           "estimated_hours": significant(hours), "setup_seconds": round(measured.setup_seconds, 3),
           "peak_mem_mb": round(measured.peak_mem_mb, 1), "host_mem_mb": round(measured.host_mem_mb, 1),
           "margin": margin}
    return {column: row[column] for column in COLUMNS}


def csv_text(rows: Iterable[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """The rows of a cost.csv (none when the file does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def load_costs(path: str | Path) -> dict[str, dict[str, str]]:
    """cost.csv's rows by run folder; empty when there is no such file (what the workflow reads)."""
    return {row["run"]: row for row in read_rows(path)}
