"""One study's data, as the workflow declares it: what judging its claims reads.

The files a study's summary or report reads (:class:`StudyInputs`): the study's plan (titles,
claims with their checks, choices, the runs of every artifact and their labels), the aggregated
tables of our runs, the analyses, the published CSVs, the runs' test items (for the summary's
paired bootstrap) and the verdicts the summary wrote (for the report). :class:`StudyData`
loads them and gives each artifact's rows and summaries, ours and published, and its claims
judged (:meth:`StudyData.judge`). Nothing is read that is not declared, no path is rebuilt,
and a missing input is an error naming its file. The report
(:class:`rnnrepro.report.study.StudyReport`) adds the display.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pandas as pd

from .. import tables
from ..labels import label_columns
from ..metrics.items import SplitItems, load_study_items
from ..plan.studies import Study, parse_run_folder, study_from_plan
from ..plan.study_inputs import ANALYSIS_INPUT, StudyInputs  # noqa: F401 (part of this module's interface)
from .judge import judge_claim
from .noise import policy_of, reference_spreads
from .regime import RegimeCheck, check_regime
from .verdict import ClaimResult

D = TypeVar("D", bound="StudyData")


def read_plan(path: str | Path) -> Study:
    """The study as the workflow planned it (``plans/<study>.json``)."""
    return study_from_plan(json.loads(tables.existing(path).read_text(encoding="utf-8")))


@dataclass
class StudyData:
    """The data of one study: its plan, our runs and curves, their provenance, the published
    rows, the summary's verdicts (the report's input) and our runs' test items (the summary's);
    per artifact its rows, its summaries and its claims judged."""

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

    def hours_to(self, artifact: str, wanted: int) -> tuple[float | None, float | None]:
        """What bringing every arm of ``artifact`` to ``wanted`` repetitions costs in hours: at this
        scale, Σ over arms of the repetitions it lacks × its runs' mean measured wall time
        (provenance); at the paper scale, the same from its cost plan's ``estimated_hours``, its
        arms being its runs of one configuration over seeds (None where repetitions are not seeds,
        which the cost plan cannot group, or where it was not measured)."""
        spec = self.study.artifacts[artifact]
        repeats = {"seed", *(spec.spec.get("repeats") or [])}
        arms: dict[tuple, list[str]] = {}
        for use in spec.runs:
            arms.setdefault(tuple(sorted((k, str(v)) for k, v in use.labels.items() if k not in repeats)),
                            []).append(use.folder)
        here = None
        if arms and "wall_seconds" in self.provenance:
            walls = pd.to_numeric(self.provenance["wall_seconds"], errors="coerce")
            runs = self.provenance["run"].astype(str)
            total = 0.0
            for folders in arms.values():
                hours = walls[runs.map(lambda run: any(run.endswith(f) for f in folders))].dropna() / 3600
                if hours.empty:
                    total = math.nan
                    break
                total += max(0, wanted - len(folders)) * float(hours.mean())
            here = None if math.isnan(total) else total
        paper = None
        if repeats == {"seed"} and self.inputs.paper_cost and Path(self.inputs.paper_cost).exists():
            plan = pd.read_csv(self.inputs.paper_cost)
            mine = plan[(plan["study"].astype(str).str.split(";").map(lambda s: self.study.name in s))
                        & (plan["artifacts"].astype(str).str.split(";").map(lambda a: artifact in a))]
            if len(mine):
                groups = mine.groupby(mine["run"].astype(str).map(  # the run's configuration: its folder less the seed
                    lambda run: tuple(value for key, value in parse_run_folder(run).items() if key != "seed")))
                paper = float(sum(max(0, wanted - len(group)) * float(group["estimated_hours"].mean())
                                  for _, group in groups))
        return here, paper

    def published(self, artifact: str) -> pd.DataFrame:
        """The published summary of ``artifact``."""
        return tables.published_summary(self.published_rows, artifact)

    def judge(self, artifact: str) -> list[ClaimResult]:
        """Every claim of ``artifact`` judged on the published numbers and on ours (the summary
        does this once per claim; the report reads its verdicts). Rows of the user's own cells
        (config extra_cells) are left out: a claim is about the paper's cells. Every claim of the
        artifact is weighed under one noise policy (:func:`~.noise.policy_of`)."""
        ours, published = self.ours(artifact), self.published(artifact)
        if self.study.extra_cells and "cell" in ours:
            ours = ours[~ours["cell"].isin(self.study.extra_cells)]
        pub_rows = tables.rows_of(self.published_rows, artifact)
        policy, reference = policy_of(ours), reference_spreads(ours)  # one noise policy for the artifact
        baselines = self.baseline_rows(artifact)
        regime = self.regime(artifact)
        return [judge_claim(claim, artifact, ours, published, pub_rows, self.scale, self.items, policy, reference,
                            regime, baselines)
                for claim in self.study.artifacts[artifact].claims]

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

    def regime(self, artifact: str) -> RegimeCheck | None:
        """Whether our models of ``artifact`` reached the regime the paper studied
        (:mod:`.regime`), read on its own summary, on the artifact it names (``on``: the same models'
        numbers, e.g. the BLEU of the translations whose curves a figure shows) or, for an analysis,
        on the models it reads;
        None where the artifact states no regime or has no numbers of ours."""
        spec = self.study.artifacts[artifact].spec.get("regime")
        if not spec:
            return None
        source = spec.get("on") or self.runs_artifact(artifact)
        ours = self.ours(source) if spec.get("on") else self.ours(artifact)
        if (ours.empty or spec["metric"] not in set(ours["metric"])) and source != artifact:
            ours = self.ours(source)
        if ours.empty:
            return None
        published = pd.concat([tables.rows_of(self.published_rows, name) for name in dict.fromkeys((artifact, source))],
                              ignore_index=True)
        return check_regime(spec, ours, self.baseline_rows(spec.get("on") or artifact), published)
