"""The cost table's table: per study and artifact, runs, hours, the longest run, the largest peak
memory, and the jobs they are submitted as with the runtime those jobs ask."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from .resources import job_runtime_minutes


def hours_label(rows: list[dict[str, Any]]) -> str:
    kinds = {str(row["device"]).split(":")[0].split(" ")[0] for row in rows}
    return {frozenset({"cpu"}): "CPU-hours", frozenset({"cuda"}): "GPU-hours"}.get(frozenset(kinds), "hours")


def summary_table(rows: list[dict[str, Any]], job_of: dict[str, str] | None = None) -> str:
    """Per study and artifact: runs, hours, the longest run (hours), the largest peak memory (MB),
    the jobs they are submitted as and the runtime those jobs ask (:func:`job_runtime_minutes`,
    summed, in hours); per study over its runs (a run that two artifacts share counted once); and
    the total. ``job_of`` maps a packed or bundled run's folder to its job's name (:meth:`rnnrepro.plan.kept.WorkflowPlan.jobs`); a run
    it lacks is a job of its own."""
    if not rows:
        return "no runs\n"
    job_of = job_of or {}
    label = hours_label(rows)
    lines = [("study", "artifact", "runs", label, "longest run (h)", "largest peak (MB)", "jobs",
              "runtime asked (h)")]

    def line(study: str, artifact: str, chosen: list[dict[str, Any]]) -> tuple[str, ...]:
        hours = [float(r["estimated_hours"]) for r in chosen]
        jobs: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in chosen:
            jobs[job_of.get(row["run"], row["run"])].append(row)
        asked = sum(job_runtime_minutes(members) for members in jobs.values()) / 60
        return (study, artifact, f"{len(chosen):,}", f"{sum(hours):,.1f}", f"{max(hours):,.2f}",
                f"{max(float(r['peak_mem_mb']) for r in chosen):,.0f}", f"{len(jobs):,}", f"{asked:,.0f}")

    studies: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for label_of in str(row["artifacts"]).split(";"):
            study, artifact = label_of.split(".", 1)
            studies[study][artifact].append(row)
    for study, artifacts in studies.items():
        for artifact, chosen in artifacts.items():
            lines.append(line(study, artifact, chosen))
        own = [row for row in rows if study in str(row["study"]).split(";")]
        lines.append(line(study, "(study)", own))
    lines.append(line("total", "", rows))
    widths = [max(len(cells[i]) for cells in lines) for i in range(len(lines[0]))]
    text = []
    for number, cells in enumerate(lines):
        if number == 0 or cells[0] == "total":
            text.append("  ".join("-" * w for w in widths))
        aligned = [cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(cells, widths))]
        text.append("  ".join(aligned).rstrip())
        if number == 0:
            text.append("  ".join("-" * w for w in widths))
        elif cells[1] == "(study)" and lines[number + 1][0] != "total":
            text.append("")
    return "\n".join(text) + "\n"
