"""One study's data, as the workflow declares it: what judging its claims and showing them read.

The files a study's summary or report reads (:class:`~rnnrepro.plan.study_inputs.StudyInputs`):
the study's plan (titles, claims with their checks, choices, the runs of every artifact and their
labels), the aggregated tables of our runs, the analyses, the published CSVs, the trivial
baselines, the runs' test items (for the summary's paired bootstrap) and the verdicts the summary
wrote (for the report). :class:`StudyData` loads them and gives each artifact's rows and
summaries, ours and published. Nothing is read that is not declared, no path is rebuilt, and a
missing input is an error naming its file. Judging (:class:`rnnrepro.claims.study.JudgedStudy`)
and showing (:class:`rnnrepro.report.study.StudyReport`) each build on it, apart: a report
process imports no check.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pandas as pd

from . import tables
from .labels import label_columns
from .metrics.items import SplitItems, load_study_items
from .plan.studies import Study, study_from_plan
from .plan.study_inputs import StudyInputs

D = TypeVar("D", bound="StudyData")


def read_plan(path: str | Path) -> Study:
    """The study as the workflow planned it (``plans/<study>.json``)."""
    return study_from_plan(json.loads(tables.existing(path).read_text(encoding="utf-8")))


@dataclass
class StudyData:
    """The data of one study: its plan, our runs and curves, their provenance, the published
    rows, the summary's verdicts (the report's input) and our runs' test items (the summary's);
    per artifact its rows and its summaries."""

    study: Study
    inputs: StudyInputs
    runs: pd.DataFrame
    curves: pd.DataFrame
    provenance: pd.DataFrame
    published_rows: pd.DataFrame
    verdicts: pd.DataFrame | None = None  # the summary's verdicts, one row per claim
    items: Mapping[str, SplitItems] = field(default_factory=dict)  # test items by run (paired bootstrap)
    baselines: pd.DataFrame = field(default_factory=pd.DataFrame)  # trivial baselines per artifact (controls)

    @classmethod
    def load(cls: type[D], inputs: StudyInputs | Mapping[str, object]) -> D:
        """Read every declared input; a missing file is an error naming it."""
        inputs = inputs if isinstance(inputs, StudyInputs) else StudyInputs.from_mapping(inputs)
        study = read_plan(inputs.plan)
        missing = sorted(set(study.analyses) - set(inputs.analyses))
        if missing:
            raise ValueError(f"the analyses of {', '.join(missing)} are not among the inputs of study {study.name}")
        verdicts = None
        if inputs.verdicts:
            verdicts = pd.read_csv(tables.existing(inputs.verdicts), keep_default_na=False)
        return cls(study=study, inputs=inputs, runs=tables.load_table(inputs.table),
                   curves=tables.load_table(inputs.curves),
                   provenance=tables.load_table(inputs.provenance, columns=("run",)),
                   published_rows=tables.load_published(inputs.published, study.name), verdicts=verdicts,
                   items=load_study_items(tables.existing(inputs.test_items)) if inputs.test_items else {},
                   baselines=tables.load_table(inputs.baselines, columns=("artifact", "baseline", "metric", "value"))
                   if inputs.baselines else pd.DataFrame())

    @property
    def scale(self) -> str:
        return self.study.scale

    def rows(self, artifact: str, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        """Our run rows of ``artifact`` (one per seed and metric)."""
        return tables.rows_of(self.runs, artifact, metrics)

    def curve_rows(self, artifact: str, metric: str | None = None) -> pd.DataFrame:
        rows = tables.rows_of(self.curves, artifact)
        return rows[rows["metric"] == metric] if metric and len(rows) else rows

    def analysis(self, artifact: str) -> pd.DataFrame:
        """The analysis table of ``artifact``."""
        return tables.load_table(self.inputs.analyses[artifact], columns=("metric", "value"))

    def ours(self, artifact: str) -> pd.DataFrame:
        """Our summary of ``artifact``: mean ± std over seeds, or its analysis table.

        An analysis of trained models (one that reads runs) is an estimate, summarised like runs:
        over its ``seed`` column when it has one (mean, std, n), else each row one trained model
        (n = 1, no spread). Only a pure computation (parameter and data counts, a numerical
        check) is exact (n = inf), unless its table gives its own spread (``std``, ``n``)."""
        spec = self.study.artifacts[artifact]
        if spec.analysis is not None:
            table = self.analysis(artifact)
            if not ({"metric", "value"} <= set(table.columns) and len(table)):
                return pd.DataFrame(columns=["metric", "mean", "std", "n"])
            table = table.assign(value=pd.to_numeric(table["value"], errors="coerce"))
            if spec.runs or spec.reads:  # an analysis of trained models
                if "seed" in table:
                    return tables.summarise(table.assign(run="").drop(columns=[c for c in ("std", "n") if c in table]))
                return table[[*label_columns(table), "metric"]].assign(mean=table["value"], std=float("nan"), n=1.0)
            return table[[*label_columns(table), "metric"]].assign(
                mean=table["value"], std=pd.to_numeric(table["std"]) if "std" in table else 0.0,
                n=pd.to_numeric(table["n"]) if "n" in table else float("inf"))
        rows = self.rows(artifact)
        repeats = [label for label in self.study.artifacts[artifact].spec.get("repeats") or [] if label in rows]
        return tables.summarise(rows.drop(columns=repeats))  # repeats are averaged like seeds

    def repetitions(self, artifact: str) -> str:
        """What the artifact repeats each arm over: "seeds", or its ``repeats`` labels (e.g. data
        seeds) and seeds."""
        repeats = self.study.artifacts[artifact].spec.get("repeats") or []
        return "seeds" if not repeats else " and ".join(str(r).replace("_", " ") + "s" for r in repeats)

    def published(self, artifact: str) -> pd.DataFrame:
        """The published summary of ``artifact``."""
        return tables.published_summary(self.published_rows, artifact)

    def baseline_rows(self, artifact: str) -> pd.DataFrame:
        """The trivial baselines of ``artifact``'s tasks on the same splits as its runs (labels,
        baseline, metric, value); empty where there are none (an analysis, no baselines input)."""
        rows = self.baselines
        if rows.empty or "artifact" not in rows:
            return pd.DataFrame(columns=["baseline", "metric", "value"])
        return rows[rows["artifact"] == self.runs_artifact(artifact)].drop(columns="artifact")

    def runs_artifact(self, artifact: str) -> str:
        """The artifact whose trained models ``artifact`` shows: its own, ``runs_of``'s, or for an
        analysis of trained models the first artifact it ``reads``."""
        spec = self.study.artifacts[artifact]
        reads = spec.spec.get("reads") or []
        return spec.spec.get("runs_of") or (reads[0]["artifact"] if reads and not spec.runs else artifact)
