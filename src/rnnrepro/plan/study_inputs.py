"""The files a study's summary or report reads, as the workflow declares them (:class:`StudyInputs`).

Apart from :mod:`rnnrepro.claims.study` (which loads them, and imports pandas and the claims'
statistics), so that the report job's own process, which only hands them to the notebook, starts
without those imports (2 s a job).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

ANALYSIS_INPUT = "analysis_"  # prefix of the workflow's input name of an artifact's analysis table


@dataclass(frozen=True)
class StudyInputs:
    """The files a study's summary or report reads, as the workflow declares them."""

    plan: str
    table: str
    curves: str
    provenance: str
    published: tuple[str, ...] = ()
    analyses: Mapping[str, str] = field(default_factory=dict)  # artifact -> its analysis table
    verdicts: str | None = None  # the summary's verdicts (the report reads them; the summary writes them)
    test_items: str | None = None  # the runs' test items (the summary's paired bootstrap)
    paper_cost: str | None = None  # the paper scale's cost table, when measured (what deciding costs there)
    baselines: str | None = None  # the trivial baselines of the study's tasks on the same splits (controls)

    @classmethod
    def from_mapping(cls, named: Mapping[str, object]) -> "StudyInputs":
        """From the workflow's named inputs (``snakemake.input``, or the report's ``inputs``
        parameter): plan, table, curves, provenance, published (a list), verdicts, test_items,
        baselines, and one ``analysis_<artifact>`` per analysis."""
        def one(value):
            return str(value[0]) if isinstance(value, (list, tuple)) else str(value)

        published = named.get("published") or ()
        return cls(plan=one(named["plan"]), table=one(named["table"]), curves=one(named["curves"]),
                   provenance=one(named["provenance"]),
                   published=tuple(str(p) for p in ([published] if isinstance(published, str) else published)),
                   analyses={key[len(ANALYSIS_INPUT):]: one(value) for key, value in named.items()
                             if key.startswith(ANALYSIS_INPUT)},
                   verdicts=one(named["verdicts"]) if named.get("verdicts") else None,
                   test_items=one(named["test_items"]) if named.get("test_items") else None,
                   paper_cost=one(named["paper_cost"]) if named.get("paper_cost") else None,
                   baselines=one(named["baselines"]) if named.get("baselines") else None)

    def as_parameters(self) -> dict[str, object]:
        """The same mapping as plain data (the report notebook's ``inputs`` parameter)."""
        named = {"plan": self.plan, "table": self.table, "curves": self.curves, "provenance": self.provenance,
                 "published": list(self.published),
                 **{f"{ANALYSIS_INPUT}{artifact}": path for artifact, path in self.analyses.items()}}
        optional = {"verdicts": self.verdicts, "test_items": self.test_items, "paper_cost": self.paper_cost,
                    "baselines": self.baselines}
        return {**named, **{name: path for name, path in optional.items() if path}}
