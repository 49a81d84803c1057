"""What the workflow's ``judge`` rule runs, the one place a claim is judged: per study
(:func:`write_verdicts`)

* ``verdicts/<study>.csv``: one row per claim: artifact, title, where, the quote, how it is
  checked, its verdict on the published numbers and on ours with the numbers behind each
  (``published_details``, ``ours_details``, one per line), and why an artifact has no numbers
  of ours (not run at this scale, shown as published only), and whether our models of the
  artifact reached the regime the paper studied (``regime_*``); the report and the index read it;
* ``verdicts/<study>.json``: per artifact its headline (the first metric it shows, averaged over
  its runs) and how many claims hold on ours and on the published numbers (:data:`BOOKKEEPING`);
* ``metrics/<study>.json``: the study's claim counts, summed over its artifacts (what ``dvc metrics
  show`` prints: one short row per study);
* ``plots/<study>.csv``: per run and artifact the headline metric (``series``, ``value``), and
  ``curves/<study>.csv``: every run's dev-metric curve (``series``, ``step``, ``value``), for
  ``dvc plots show``.

The index page over every study is :mod:`rnnrepro.report.index_page`.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..atomic import atomic_path
from ..labels import label_columns
from ..tables import shown_metrics
from .regime import NOT_IN_REGIME, RegimeCheck
from .study import JudgedStudy, StudyInputs
from .verdict import (BOOKKEEPING, CONSISTENT, INCONCLUSIVE, MODELS_FAIL, MODELS_HOLD, PARTIAL,
                      STATUS, ClaimResult)

#: ``regime_met`` of an artifact whose regime ours reached (True), missed (False) or that cannot be read (None).
REGIME_MET = {True: "reached", False: "not reached", None: "cannot be read"}


def what_decides(data: JudgedStudy, artifact: str, result: ClaimResult) -> dict[str, object]:
    """For a claim open on ours: what decides it (``to_decide``: seeds and hours, the units to run,
    or a scale), the repetitions per arm a decision needs and what bringing every arm of the
    artifact to them costs in hours, here and at the paper scale (empty where unknown)."""
    needed = result.ours.seeds_to_decide
    reason = why_no_numbers(data, artifact)
    to_decide = result.ours.to_decide if result.ours.holds is None else ""
    out = {"to_decide": reason if reason and result.ours.status in ("not run", STATUS[None]) else to_decide,
           "seeds_to_decide": "", "hours_to_decide": "", "paper_hours_to_decide": ""}
    if needed is None or result.ours.holds is not None:
        return out
    here, paper = data.hours_to(artifact, needed)
    unit = data.repetitions(artifact)
    costs = [f"{hours:.3g} h {where}" for hours, where in ((here, "here"), (paper, "at the paper scale"))
             if hours is not None]
    return {**out, "to_decide": result.ours.to_decide.replace("seeds per arm", f"{unit} per arm")
            + (f" ({', '.join(costs)})" if costs else ""),
            "seeds_to_decide": needed, "hours_to_decide": "" if here is None else round(here, 3),
            "paper_hours_to_decide": "" if paper is None else round(paper, 1)}


def series_name(artifact: str, row: pd.Series, labels: Iterable[str]) -> str:
    """``table7: basic lstm`` — an artifact and the labels that name one of its runs."""
    return f"{artifact}: " + " ".join(f"{row[c]}" if c in ("model", "cell", "grid") else f"{c}={row[c]}"
                                      for c in labels if row.get(c, "") != "")


def why_no_numbers(data: JudgedStudy, artifact: str) -> str:
    spec = data.study.artifacts[artifact]
    if spec.spec.get("published_only"):
        return f"shown as published, not rerun: {spec.spec['published_only']}"
    if data.ours(artifact).empty:
        return f"not run at scale {data.scale}" if spec.runs or spec.analysis else ""
    return ""


def regime_columns(regime: RegimeCheck | None) -> dict[str, str]:
    """An artifact's regime on ours, as the columns of its rows in ``verdicts/<study>.csv`` that
    the report shows (all empty where the artifact states none or has no numbers of ours)."""
    if regime is None:
        return {"regime_met": "", "regime_condition": "", "regime_basis": "", "regime_details": "", "regime_cost": ""}
    return {"regime_met": REGIME_MET[regime.met], "regime_condition": regime.condition, "regime_basis": regime.basis,
            "regime_details": "\n".join(regime.details), "regime_cost": regime.cost}


def judge_study(data: JudgedStudy) -> tuple[pd.DataFrame, dict, pd.DataFrame, pd.DataFrame]:
    """(claims table, metrics dict, headline rows, curve rows) of one study."""
    claims, metrics, finals, curves = [], {}, [], []
    for name, artifact in data.study.artifacts.items():
        regime_check = data.regime(name)
        results = data.judge(name, regime_check)
        reason = why_no_numbers(data, name)
        regime = regime_columns(regime_check)
        for result in results:
            claims.append({"study": data.study.name, "artifact": name, "title": artifact.title,
                           "where": result.where, "quote": result.quote, "reading": result.reading,
                           "published": result.published.status, "ours": result.ours.status,
                           "basis": result.basis, "note": result.note,
                           "published_details": "\n".join(result.published.details),
                           "ours_details": "\n".join(result.ours.details),
                           "scale": data.scale, "no_numbers": reason, **what_decides(data, name, result), **regime})
        if not results:
            claims.append({"study": data.study.name, "artifact": name, "title": artifact.title, "where": "",
                           "quote": "", "reading": "", "basis": "", "note": "", "published": "", "ours": "",
                           "published_details": "",
                           "ours_details": "", "scale": data.scale, "no_numbers": reason, "to_decide": "",
                           "seeds_to_decide": "", "hours_to_decide": "", "paper_hours_to_decide": "", **regime})
        entry = {"claims": len(results),
                 "hold_ours": sum(r.ours.holds is True for r in results),
                 "fail_ours": sum(r.ours.holds is False for r in results),
                 "inconclusive_ours": sum(r.ours.status == INCONCLUSIVE for r in results),
                 "partial_ours": sum(r.ours.status.startswith(PARTIAL) for r in results),
                 "consistent_ours": sum(r.ours.status == CONSISTENT for r in results),
                 "models_ours": sum(r.ours.status in (MODELS_HOLD, MODELS_FAIL) for r in results),
                 "regime_ours": sum(r.ours.status == NOT_IN_REGIME for r in results),
                 "hold_published": sum(r.published.holds is True for r in results)}
        ours = data.ours(name)
        shown = (artifact.spec.get("show") or {}).get("metrics") or shown_metrics(ours, data.published(name))
        headline = next((m for m in shown if len(ours) and (ours["metric"] == m).any()), None)
        if headline:
            entry[headline] = float(pd.to_numeric(ours.loc[ours["metric"] == headline, "mean"]).mean())
            rows = ours[ours["metric"] == headline]
            labels = label_columns(rows)
            finals += [{"artifact": name, "series": series_name(name, r, labels), "metric": headline,
                        "value": float(r["mean"])} for _, r in rows.iterrows()]
        metrics[name] = entry
        curve = data.curve_rows(name)
        if len(curve):
            dev = [m for m in curve["metric"].unique() if m.startswith("dev_")]
            curve = curve[curve["metric"].isin(dev[:1])]
            labels = [c for c in label_columns(curve) if curve[c].nunique() > 1] + ["seed"]
            curves += [{"series": series_name(name, r, labels), "step": int(r["step"]), "metric": r["metric"],
                        "value": float(r["value"])} for _, r in curve.iterrows()]
    return (pd.DataFrame(claims), metrics, pd.DataFrame(finals, columns=["artifact", "series", "metric", "value"]),
            pd.DataFrame(curves, columns=["series", "step", "metric", "value"]))


def study_counts(metrics: dict) -> dict[str, int]:
    """The study's claim counts: each :data:`BOOKKEEPING` count summed over its artifacts."""
    return {key: int(sum(entry.get(key, 0) for entry in metrics.values())) for key in BOOKKEEPING}


def write_verdicts(inputs: StudyInputs, claims_csv: str | Path, metrics_json: str | Path,
                        plot_csv: str | Path, curves_csv: str | Path, counts_json: str | Path | None = None) -> None:
    """Judge every claim of the study of ``inputs`` and write its verdicts, headline metrics, claim
    counts and plot tables."""
    claims, metrics, finals, curves = judge_study(JudgedStudy.load(inputs))
    for frame, path in ((claims, claims_csv), (finals, plot_csv), (curves, curves_csv)):
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False)
    for payload, path in ((metrics, metrics_json), (study_counts(metrics), counts_json)):
        if path is not None:
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")

