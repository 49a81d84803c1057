"""One study's report: what every notebook does, written once.

A report notebook is its parameters cell (``study`` and ``inputs``), ``report = setup(study,
inputs)`` and one ``report.section(artifact)`` per table or figure; paper-specific figures come
from :mod:`rnnrepro.report.papers`. Everything a section shows comes from the files the workflow
declares as the report's inputs (:class:`~rnnrepro.plan.study_inputs.StudyInputs`), read as the
study's data (:class:`~rnnrepro.study_data.StudyData`): the study's plan, the aggregated
tables of our runs, the analyses, the published CSVs and the verdicts the summary judged once.
:class:`StudyReport` adds only the display: sections with ours beside published, the verdicts,
provenance, cost and choices.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from .. import tables
from ..study_data import StudyData
from ..claims.verdict import ClaimResult, Verdict
from ..labels import natural_key
from . import frames

MAX_DETAILS = 14  # verdict details shown per verdict before "… and N more"


def display_markdown(text: str) -> None:
    from IPython.display import Markdown, display

    if text:
        display(Markdown(text))


def display_table(frame: pd.DataFrame) -> None:
    from IPython.display import HTML, display

    if frame is not None and len(frame):
        display(HTML(frame.to_html(index=False, border=0, na_rep="—", escape=True)))


def shorten(details: Sequence[str]) -> str:
    if len(details) <= MAX_DETAILS:
        return "; ".join(details)
    return "; ".join(details[:MAX_DETAILS]) + f"; … and {len(details) - MAX_DETAILS} more"


@dataclass
class StudyReport(StudyData):
    """One study's report: its data (:class:`~rnnrepro.study_data.StudyData`) and the sections
    shown from it."""

    claims: list[ClaimResult] = field(default_factory=list)  # verdicts shown so far
    shown: list[str] = field(default_factory=list)  # artifacts whose section was shown

    # -- where the numbers come from, and the summary's verdicts -------------------------------
    def sources(self, artifact: str) -> str:
        """Where the published numbers of ``artifact`` come from: "Turek et al., Tables 2, 3, 4"."""
        rows = tables.rows_of(self.published_rows, artifact)
        places: dict[str, list[str]] = {}
        for source in sorted(rows["source"].dropna().unique()) if len(rows) else []:
            author, _, place = source.partition(", ")
            place = place.split(" (")[0]
            if place not in places.setdefault(author, []):
                places[author].append(place)
        return "; ".join(f"{author}, {', '.join(found)}" if found != [""] else author for author, found in places.items())

    def judged(self, artifact: str) -> list[ClaimResult]:
        """The summary's verdicts of ``artifact``'s claims, in the study's order."""
        if self.verdicts is None:
            raise ValueError(f"the report of {self.study.name} has no verdicts among its inputs")
        rows = self.verdicts[(self.verdicts["artifact"] == artifact) & (self.verdicts["quote"] != "")]
        return [ClaimResult(artifact, row["quote"], row["where"], row["reading"],
                            Verdict.from_text(row["published"], row["published_details"]),
                            Verdict.from_text(row["ours"], row["ours_details"]), row.get("basis", ""),
                            row.get("note", ""))
                for row in rows.to_dict("records")]

    # -- text ----------------------------------------------------------------------------------
    def run_facts(self, artifact: str) -> str:
        rows = self.rows(artifact)
        if rows.empty:
            if self.study.artifacts[artifact].analysis is not None:
                return "" if len(self.analysis(artifact)) else "Ours: not computed yet."
            return f"Ours: no runs of **{artifact}** at scale `{self.scale}` yet."
        seeds = sorted(rows["seed"].unique(), key=natural_key) if "seed" in rows else []
        runs = rows["run"].nunique()
        return (f"Ours: {runs} run{'s' * (runs != 1)} (seed{'s' * (len(seeds) != 1)} {', '.join(map(str, seeds))}) "
                f"at scale `{self.scale}`.")

    def overview(self) -> None:
        """The report's opening: paper, scale and what it changes, runs, provenance, choices."""
        study = self.study
        lines = [f"**{study.title}** (paper `{study.paper}`). Rendered for scale `{self.scale}`: "
                 f"{self.runs['run'].nunique() if len(self.runs) else 0} runs of ours."]
        if study.extra_cells:
            lines.append(f"**Cells of your own** beside the paper's: {', '.join(study.extra_cells)} (config "
                         "`extra_cells`); the paper's claims are judged on the paper's cells only.")
        if study.scale_note:
            lines.append(f"**What this scale changes:** {study.scale_note}")
        display_markdown("\n\n".join(lines))
        display_markdown(self.provenance_text())
        display_table(self.cost())
        self.show_choices(study.spec.get("choices") or {}, "Choices of this study (where the paper is silent or we differ)")

    def provenance_text(self) -> str:
        """Where our numbers were made: devices, torch, threads, switches, training time."""
        made = self.provenance
        if made.empty or "device" not in made:
            return "**Provenance:** no finished runs yet."
        parts = []
        for column, name, empty in (("device", "device", "unset"), ("torch", "torch", "unset"),
                                    ("threads", "threads", "unset"), ("RNNREPRO_TORCHSCRIPT", "RNNREPRO_TORCHSCRIPT", "unset"), ("RNNREPRO_SCRIPT", "RNNREPRO_SCRIPT", "unset"),
                                    ("RNNREPRO_PREPACK", "RNNREPRO_PREPACK", "unset"), ("RNNREPRO_PACKED", "RNNREPRO_PACKED", "unset"),
                                    ("RNNREPRO_FUSED", "RNNREPRO_FUSED", "unset"),
                                    ("RNNREPRO_DETERMINISTIC", "RNNREPRO_DETERMINISTIC", "unset"),
                                    ("deterministic", "deterministic kernels", "unknown"),
                                    ("nondeterministic_ops", "ops without a deterministic kernel", "none")):
            if column in made:
                values = sorted({str(v) if str(v) not in ("", "nan") else empty for v in made[column]}, key=natural_key)
                parts.append(f"{name} {', '.join(values)}")
        seconds = pd.to_numeric(made.get("wall_seconds"), errors="coerce").sum()
        text = (f"**Provenance** ({len(made)} runs): {'; '.join(parts)}; training wall time "
                f"{seconds / 60:.1f} job-minutes in all (`{self.inputs.provenance}`).")
        if "cpu_seconds" in made:
            text += " **Cost** of the training jobs by macro model and cell, from Snakemake's benchmark files:"
        return text

    def cost(self) -> pd.DataFrame:
        """What the study's training cost, by macro model and cell (from Snakemake's benchmark files):
        jobs, CPU hours, the longest job and the largest peak memory, to size a cluster's
        ``runtime`` and ``mem_mb``."""
        made = self.provenance
        if made.empty or "cpu_seconds" not in made:
            return pd.DataFrame()
        parts = made["run"].str.extract(r"model~(?P<model>[^/]+)/cell~(?P<cell>[^/]+)")
        made = made.assign(**parts, cpu=pd.to_numeric(made["cpu_seconds"], errors="coerce"),
                           wall=pd.to_numeric(made["job_seconds"], errors="coerce"),
                           rss=pd.to_numeric(made["max_rss_mb"], errors="coerce"))
        table = made.groupby(["model", "cell"]).agg(jobs=("run", "count"), cpu_hours=("cpu", "sum"),
                                                     longest_job_minutes=("wall", "max"), peak_rss_mb=("rss", "max"))
        table["cpu_hours"] = (table["cpu_hours"] / 3600).round(3)
        table["longest_job_minutes"] = (table["longest_job_minutes"] / 60).round(1)
        table["peak_rss_mb"] = table["peak_rss_mb"].round(0)
        return table.reset_index()

    def show_choices(self, choices: dict, heading: str) -> None:
        if choices:
            display_markdown(f"**{heading}:**\n" + "\n".join(f"- `{k}`: {v}" for k, v in choices.items()))

    def verdict_text(self, result: ClaimResult) -> str:
        lines = [f"> “{result.quote}” ({result.where})"]
        if result.reading:
            lines.append(f"\n*Checked as:* {result.reading}")
        if result.basis:
            lines.append(f"\n*Tolerances from:* {result.basis}")
        source = self.sources(result.artifact)
        lines.append(f"\n- **On the published numbers**{f' ({source})' if source else ''}: "
                     f"**{result.published.status}**" + (f" — {shorten(result.published.details)}"
                                                          if result.published.details else ""))
        lines.append(f"- **On ours** (scale `{self.scale}`): **{result.ours.status}**"
                     + (f" — {shorten(result.ours.details)}" if result.ours.details else ""))
        if result.note:
            lines.append(f"\n*Note:* {result.note}")
        return "\n".join(lines)

    # -- sections ------------------------------------------------------------------------------
    def section(self, artifact: str, body: Callable[["StudyReport"], None] | None = None,
                comparison: bool = True) -> None:
        """Header, our runs, ours beside published, ``body`` (figures), verdicts and choices."""
        spec = self.study.artifacts[artifact]
        self.shown.append(artifact)
        display_markdown(f'<a id="{artifact}"></a>\n\n## {artifact}: {spec.title}')  # the index links here
        if spec.spec.get("published_only"):
            display_markdown(f"**Shown as published, not rerun:** {spec.spec['published_only']}")
        else:
            display_markdown(self.run_facts(artifact))
        for cell, reason in spec.left_out.items():
            display_markdown(f"*Your cell `{cell}` does not join this grid:* {reason}.")
        if comparison:
            self.show_comparison(artifact)
        self.show_controls(artifact)
        if body is not None:
            body(self)
        results = self.judged(artifact)
        self.claims += results
        if results:
            display_markdown("**The paper's claims, judged:**")
            for result in results:
                display_markdown(self.verdict_text(result))
        self.show_choices(spec.spec.get("choices") or {}, "Choices for this artifact")

    def comparison(self, artifact: str) -> pd.DataFrame:
        """Ours beside published, for display."""
        show = self.study.artifacts[artifact].spec.get("show") or {}
        ours, published = self.ours(artifact), self.published(artifact)
        metrics = show.get("metrics") or tables.shown_metrics(ours, published)
        ours = ours[ours["metric"].isin(metrics)] if len(ours) else ours
        published = published[published["metric"].isin(metrics)] if len(published) else published
        if ours.empty and published.empty:
            return pd.DataFrame()
        return frames.comparison_table(frames.join_published(ours, published), show.get("rows"))

    def show_comparison(self, artifact: str) -> None:
        table = self.comparison(artifact)
        if len(table):
            display_markdown("Ours (mean ± std over seeds) beside the published values:")
            display_table(table)

    def controls(self, artifact: str) -> pd.DataFrame:
        """The trivial baselines of ``artifact``'s tasks on the same splits as its runs, for display:
        one row per baseline and task setting (labels that do not change the task left out), one
        column per metric the artifact shows."""
        rows = self.baseline_rows(artifact)
        if rows.empty:
            return pd.DataFrame()
        show = self.study.artifacts[artifact].spec.get("show") or {}
        metrics = show.get("metrics") or tables.shown_metrics(self.ours(artifact), self.published(artifact))
        rows = rows[rows["metric"].isin(metrics)]
        if rows.empty:
            return pd.DataFrame()
        labels = [c for c in rows.columns if c not in ("baseline", "metric", "value", "model", "cell")
                  and rows[c].nunique() > 1]
        table = rows.drop_duplicates(subset=[*labels, "baseline", "metric"]).pivot_table(
            index=[*labels, "baseline"], columns="metric", values="value", aggfunc="first")
        return table.reset_index().rename_axis(columns=None)

    def show_controls(self, artifact: str) -> None:
        """The trivial baselines beside ours and the paper's, and whether ours reached the regime
        the paper studied, as the summary judged it (its ``regime_*`` columns)."""
        table = self.controls(artifact)
        if len(table):
            display_markdown("What a model that learns nothing scores on the same splits (trivial baselines):")
            display_table(table)
        regime = self.regime_judged(artifact)
        if regime.get("regime_met"):
            met = regime["regime_met"]
            said = "**not reached**: its claims are judged as not in the paper's regime" if met == "not reached" else met
            basis, cost = regime.get("regime_basis", ""), regime.get("regime_cost", "")
            display_markdown(f"**The paper's regime** ({regime['regime_condition']}" + (f"; {basis}" if basis else "")
                             + f"): {said}. " + "; ".join(str(regime.get("regime_details", "")).splitlines())
                             + (f" *To reach it:* {cost}" if cost and met == "not reached" else ""))

    def regime_judged(self, artifact: str) -> dict[str, str]:
        """The summary's ``regime_*`` columns of ``artifact`` (empty where it judged none)."""
        if self.verdicts is None or "regime_met" not in self.verdicts:
            return {}
        rows = self.verdicts[self.verdicts["artifact"] == artifact]
        return {k: str(v) for k, v in rows.iloc[0].items() if k.startswith("regime_")} if len(rows) else {}

    def rest(self) -> None:
        """The default section of every artifact the notebook has not shown yet (so an artifact
        added to the study's YAML appears in its report without touching the notebook)."""
        for artifact in self.study.artifacts:
            if artifact not in self.shown:
                self.section(artifact)

    def summary(self) -> pd.DataFrame:
        """Every claim judged so far: artifact, where, the verdicts on published and on ours."""
        return pd.DataFrame([{"artifact": r.artifact, "where": r.where, "claim": r.quote,
                              "published": r.published.status, f"ours ({self.scale})": r.ours.status}
                             for r in self.claims])

    def show_summary(self) -> None:
        display_markdown("## Summary of the verdicts")
        display_table(self.summary())


def setup(study: str, inputs: Mapping[str, object] | None) -> StudyReport:
    """Load a study's report data from its declared inputs and show its overview.

    ``inputs`` is what the workflow passes (the report's inputs, by name). A template notebook
    opened by hand has none: open the executed notebook the workflow keeps beside the report
    (``results/<scale>/reports/<study>.ipynb``), whose parameters name its inputs.
    """
    if inputs is None:
        raise ValueError(f"no inputs for the report of {study}: run it through the workflow "
                         f"(snakemake ... all), or open the executed notebook results/<scale>/reports/{study}.ipynb, "
                         "whose parameters name its inputs")
    report = StudyReport.load(inputs)
    if report.study.name != study:
        raise ValueError(f"the notebook of study {study} was given the plan of study {report.study.name}")
    report.overview()
    return report
