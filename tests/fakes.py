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


TOY_STUDY = """\
title: "A toy study: the adding task with three cells"
paper: 001_472c34d02d0facc3
choices:
  training set: 200 generated sequences.
defaults:
  train: {{optimizer: adam, lr: 0.01, epochs: {epochs}, batch_size: 20, checkpoint_every: 3, log_every: 2}}
artifacts:
  fig1:
    title: Adding task, test MSE per cell
    task: {{name: adding, T: 8, train_size: 200, dev_size: 50, test_size: 50}}
    model: {{name: basic, hidden_size: 6}}
    grid: {{cell: [lstm, gru, pru]}}
    claims:
      - quote: "If the algorithm predicts 1 regardless of the input sequence, the expected mean squared error is 0.167, which is the baseline for this task."
        where: Sec. 4.1
        reading: every cell's test MSE is below the published baseline
        check: {{kind: threshold, metric: test_mse, below: "published:baseline_mse"}}
  fig1_view:
    title: The same runs, another view
    runs_of: fig1
"""

TOY_PUBLISHED = """\
study,artifact,source,metric,value,note
{name},fig1,"Choi, Sec. 4.1",baseline_mse,0.167,expected MSE of always predicting 1
"""


def write_toy_study(project: Path, name: str = "toy", epochs: int = 3) -> None:
    """A sixth study written as a contributor would: its YAML, its notebook, its published CSV
    (three training runs of the adding task, seconds each at ``epochs`` 3)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    (project / f"config/studies/{name}.yaml").write_text(TOY_STUDY.format(epochs=epochs))
    (project / f"reports/published/{name}_fig1.csv").write_text(TOY_PUBLISHED.format(name=name))
    parameters = new_code_cell(f'study = "{name}"\nscale = "mini"\nresults = "results"')
    parameters.metadata["tags"] = ["parameters"]
    cells = [new_markdown_cell(f"# A toy study ({name})"), parameters,
             new_code_cell("from rnnrepro.report import setup\n\nreport = setup(study, scale, results)"),
             new_code_cell('report.section("fig1")'),
             new_code_cell("report.rest()\nreport.show_summary()")]
    metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                "language_info": {"name": "python"}}
    nbformat.write(new_notebook(cells=cells, metadata=metadata), project / f"reports/{name}.ipynb")
