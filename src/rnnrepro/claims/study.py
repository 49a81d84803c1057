"""One study's claims judged: :class:`JudgedStudy` is the study's data
(:class:`rnnrepro.study_data.StudyData`) with every claim of an artifact judged on the published
numbers and on ours (:meth:`JudgedStudy.judge`), whether our models reached the regime the paper
studied (:meth:`JudgedStudy.regime`) and what more repetitions would cost
(:meth:`JudgedStudy.hours_to`). The workflow's ``judge`` rule runs it once per study; the
report reads the verdicts it wrote.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import tables
from ..plan.studies import parse_run_folder
from ..plan.study_inputs import ANALYSIS_INPUT, StudyInputs  # noqa: F401 (part of this module's interface)
from ..study_data import StudyData
from .judge import judge_claim
from .noise import policy_of, reference_spreads
from .regime import RegimeCheck, check_regime
from .verdict import ClaimResult


@dataclass
class JudgedStudy(StudyData):
    """A study's data, and its claims judged."""

    def hours_to(self, artifact: str, wanted: int) -> tuple[float | None, float | None]:
        """What bringing every arm of ``artifact`` to ``wanted`` repetitions costs in hours: at this
        scale, Σ over arms of the repetitions it lacks × its runs' mean measured wall time
        (provenance); at the paper scale, the same from its cost table's ``estimated_hours``, its
        arms being its runs of one configuration over seeds (None where repetitions are not seeds,
        which the cost table cannot group, or where it was not measured)."""
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

    def judge(self, artifact: str, regime: RegimeCheck | None | str = "read") -> list[ClaimResult]:
        """Every claim of ``artifact`` judged on the published numbers and on ours (the summary
        does this once per claim; the report reads its verdicts). Rows of the user's own cells
        (config extra_cells) are left out: a claim is about the paper's cells. Every claim of the
        artifact is weighed under one noise policy (:func:`~.noise.policy_of`), against its
        regime (:meth:`regime`, read here unless the caller has read it already)."""
        ours, published = self.ours(artifact), self.published(artifact)
        if self.study.extra_cells and "cell" in ours:
            ours = ours[~ours["cell"].isin(self.study.extra_cells)]
        pub_rows = tables.rows_of(self.published_rows, artifact)
        policy, reference = policy_of(ours), reference_spreads(ours)  # one noise policy for the artifact
        baselines = self.baseline_rows(artifact)
        regime = self.regime(artifact) if regime == "read" else regime
        return [judge_claim(claim, artifact, ours, published, pub_rows, self.scale, self.items, policy, reference,
                            regime, baselines)
                for claim in self.study.artifacts[artifact].claims]

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
