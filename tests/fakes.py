"""Fake finished runs for tests of aggregation and reports: the folders training writes,
with metrics chosen by the test, laid out where the workflow puts them."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from rnnrepro.aggregate import write_tables
from rnnrepro.studies import Study, load_study, study_schema_of

REPO = Path(__file__).resolve().parents[1]
PROVENANCE = {"device": "cpu", "torch": "2.13.0+cpu", "threads": 1, "python": "3.11.7", "RNNREPRO_DEVICE": "",
              "RNNREPRO_SCRIPT": "", "RNNREPRO_PACKED": "", "wall_seconds": 1.5}


def write_run(folder: Path, identity: dict, metrics: dict, curve: Iterable[tuple] = ()) -> Path:
    """A finished run folder: config.json, metrics.json (with provenance), curve.tsv, model.pt."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(identity))
    (folder / "metrics.json").write_text(json.dumps({**metrics, "provenance": PROVENANCE}))
    lines = ["step\tepoch\tmetric\tvalue"] + ["\t".join(map(str, point)) for point in curve]
    (folder / "curve.tsv").write_text("\n".join(lines) + "\n")
    (folder / "model.pt").write_bytes(b"")
    return folder


def fake_study(results: Path, study: str, scale: str, metrics_of: Callable[[dict], dict],
               curve_of: Callable[[dict], Iterable[tuple]] = lambda labels: ()) -> Study:
    """Every run of ``study`` at ``scale`` written under ``results/<scale>/runs`` with
    ``metrics_of(labels)`` (labels of the run's first use), then aggregated into
    ``results/<scale>/tables/<study>/`` as the workflow does."""
    spec = load_study(study, REPO / "config" / "studies", study_schema_of(REPO / "workflow" / "schemas"), scale)
    out = results / scale
    written: set[str] = set()
    uses = []
    for artifact, use in spec.uses():
        folder = out / "runs" / use.folder
        if use.folder not in written:
            write_run(folder, spec.runs[use.folder], metrics_of(use.labels), curve_of(use.labels))
            written.add(use.folder)
        uses.append({"artifact": artifact, "folder": str(folder), "labels": use.labels})
    tables = out / "tables" / study
    write_tables(uses, study, scale, tables / "runs.csv", tables / "curves.csv", tables / "provenance.csv")
    return spec
