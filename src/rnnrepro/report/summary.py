"""What a reader and DVC look at first: every claim's verdicts, one headline number per artifact,
plot-ready tables, and one index page over every study.

Per study (:func:`write_study_summary`, the workflow's ``summarise`` rule, the one place a
claim is judged):

* ``verdicts/<study>.csv``: one row per claim: artifact, title, where, the quote, how it is
  checked, its verdict on the published numbers and on ours with the numbers behind each
  (``published_details``, ``ours_details``, one per line), and why an artifact has no numbers
  of ours (not run at this scale, shown as published only); the report and the index read it;
* ``verdicts/<study>.json``: per artifact its headline (the first metric it shows, averaged over
  its runs) and how many claims hold on ours and on the published numbers;
* ``plots/<study>.csv``: per run and artifact the headline metric (``series``, ``value``), and
  ``curves/<study>.csv``: every run's dev-metric curve (``series``, ``step``, ``value``), for
  ``dvc plots show``.

Over every study (:func:`write_index`, the ``index`` rule): ``reports/index.html`` and
``metrics.json`` (the studies' JSON in one file, for ``dvc metrics show`` / ``diff``).
"""
from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..atomic import atomic_path
from . import frames
from .formatting import format_value
from .study import StudyInputs, StudyReport
from .verdicts import INCONCLUSIVE, NOISE_TEST

STATUS_CLASS = {"holds": "holds", "does not hold": "fails", INCONCLUSIVE: "unsure"}
BOOKKEEPING = ("claims", "hold_ours", "fail_ours", "inconclusive_ours", "hold_published")


def series_name(artifact: str, row: pd.Series, labels: Iterable[str]) -> str:
    """``table7: basic lstm`` — an artifact and the labels that name one of its runs."""
    return f"{artifact}: " + " ".join(f"{row[c]}" if c in ("model", "cell", "grid") else f"{c}={row[c]}"
                                      for c in labels if row.get(c, "") != "")


def why_no_numbers(report: StudyReport, artifact: str) -> str:
    spec = report.study.artifacts[artifact]
    if spec.spec.get("published_only"):
        return f"shown as published, not rerun: {spec.spec['published_only']}"
    if report.ours(artifact).empty:
        return f"not run at scale {report.scale}" if spec.runs or spec.analysis else ""
    return ""


def study_summary(report: StudyReport) -> tuple[pd.DataFrame, dict, pd.DataFrame, pd.DataFrame]:
    """(claims table, metrics dict, headline rows, curve rows) of one study."""
    claims, metrics, finals, curves = [], {}, [], []
    for name, artifact in report.study.artifacts.items():
        results = report.judge(name)
        reason = why_no_numbers(report, name)
        for result in results:
            claims.append({"study": report.study.name, "artifact": name, "title": artifact.title,
                           "where": result.where, "quote": result.quote, "reading": result.reading,
                           "published": result.published.status, "ours": result.ours.status,
                           "basis": result.basis, "note": result.note,
                           "published_details": "\n".join(result.published.details),
                           "ours_details": "\n".join(result.ours.details),
                           "scale": report.scale, "no_numbers": reason})
        if not results:
            claims.append({"study": report.study.name, "artifact": name, "title": artifact.title, "where": "",
                           "quote": "", "reading": "", "basis": "", "note": "", "published": "", "ours": "",
                           "published_details": "",
                           "ours_details": "", "scale": report.scale, "no_numbers": reason})
        entry = {"claims": len(results),
                 "hold_ours": sum(r.ours.holds is True for r in results),
                 "fail_ours": sum(r.ours.holds is False for r in results),
                 "inconclusive_ours": sum(r.ours.status == INCONCLUSIVE for r in results),
                 "hold_published": sum(r.published.holds is True for r in results)}
        ours = report.ours(name)
        shown = (artifact.spec.get("show") or {}).get("metrics") or frames.shown_metrics(ours, report.published(name))
        headline = next((m for m in shown if len(ours) and (ours["metric"] == m).any()), None)
        if headline:
            entry[headline] = float(pd.to_numeric(ours.loc[ours["metric"] == headline, "mean"]).mean())
            rows = ours[ours["metric"] == headline]
            labels = frames.label_columns(rows)
            finals += [{"artifact": name, "series": series_name(name, r, labels), "metric": headline,
                        "value": float(r["mean"])} for _, r in rows.iterrows()]
        metrics[name] = entry
        curve = report.curve_rows(name)
        if len(curve):
            dev = [m for m in curve["metric"].unique() if m.startswith("dev_")]
            curve = curve[curve["metric"].isin(dev[:1])]
            labels = [c for c in frames.label_columns(curve) if curve[c].nunique() > 1] + ["seed"]
            curves += [{"series": series_name(name, r, labels), "step": int(r["step"]), "metric": r["metric"],
                        "value": float(r["value"])} for _, r in curve.iterrows()]
    return (pd.DataFrame(claims), metrics, pd.DataFrame(finals, columns=["artifact", "series", "metric", "value"]),
            pd.DataFrame(curves, columns=["series", "step", "metric", "value"]))


def write_study_summary(inputs: StudyInputs, claims_csv: str | Path, metrics_json: str | Path,
                        plot_csv: str | Path, curves_csv: str | Path) -> None:
    """Judge every claim of the study of ``inputs`` and write its verdicts, headline metrics and
    plot tables."""
    report = StudyReport.load(inputs)
    claims, metrics, finals, curves = study_summary(report)
    for frame, path in ((claims, claims_csv), (finals, plot_csv), (curves, curves_csv)):
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False)
    with atomic_path(metrics_json) as tmp:
        tmp.write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")


def write_index(claims_csvs: Iterable[str | Path], metrics_jsons: Iterable[str | Path], out_html: str | Path,
                out_metrics: str | Path, scale: str) -> None:
    """The index page over every study's claims, and every study's metrics in one JSON file."""
    claims = pd.concat([pd.read_csv(p, keep_default_na=False) for p in claims_csvs], ignore_index=True)
    metrics = {Path(p).stem: json.loads(Path(p).read_text()) for p in metrics_jsons}
    with atomic_path(out_metrics) as tmp:
        tmp.write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    with atomic_path(out_html) as tmp:
        tmp.write_text(index_html(claims, metrics, scale), encoding="utf-8")


def verdict_cell(status: str) -> str:
    if not status:
        return "<td>—</td>"
    return f'<td class="{STATUS_CLASS.get(status, "open")}">{html.escape(status)}</td>'


def index_html(claims: pd.DataFrame, metrics: dict, scale: str) -> str:
    """One table per study: artifact (linked to its section), claim, verdicts, headline."""
    counts = claims[claims["quote"] != ""]
    total = len(counts)

    def tally(column: str) -> str:
        found = counts[column].value_counts()
        order = ["holds", "does not hold", INCONCLUSIVE]
        shown = [f"{int(found[s])} {s}" for s in order if s in found]
        shown += [f"{int(n)} {s}" for s, n in found.items() if s not in order]
        return ", ".join(shown) or "none"

    lines = [f"<p>Scale <code>{html.escape(scale)}</code>. {total} claims of the papers, each quoted and judged "
             f"on the published numbers (as printed) and on ours, where a difference counts only beyond the "
             f"noise of our runs ({html.escape(NOISE_TEST)}): a verdict within that noise, or resting on one seed, "
             f"is <em>inconclusive at this scale</em>, which says nothing against the paper.</p>",
             f"<p><strong>On ours ({html.escape(scale)}):</strong> {html.escape(tally('ours'))}.<br>"
             f"<strong>On the published numbers:</strong> {html.escape(tally('published'))}.</p>",
             "<p>Follow an artifact to its section of the study's report for the numbers behind each verdict.</p>"]
    for study, rows in claims.groupby("study", sort=False):
        lines.append(f'<h2><a href="{html.escape(study)}.html">{html.escape(study)}</a></h2>')
        lines.append("<table><tr><th>artifact</th><th>claim (where)</th><th>published</th>"
                     f"<th>ours ({html.escape(scale)})</th><th>headline (ours)</th></tr>")
        for rec in rows.to_dict("records"):
            entry = metrics.get(study, {}).get(rec["artifact"], {})
            headline = next(((k, v) for k, v in entry.items() if k not in BOOKKEEPING), None)
            shown = f"{headline[0]} = {format_value(headline[1], headline[0])}" if headline else rec["no_numbers"]
            link = f'<a href="{html.escape(study)}.html#{html.escape(rec["artifact"])}">{html.escape(rec["artifact"])}</a>'
            claim = (f"“{html.escape(rec['quote'])}” ({html.escape(rec['where'])})" if rec["quote"]
                     else f"<em>{html.escape(rec['title'])}</em>: no claim is checked")
            lines.append(f"<tr><td>{link}</td><td>{claim}</td>{verdict_cell(rec['published'])}"
                         f"{verdict_cell(rec['ours'])}<td>{html.escape(str(shown))}</td></tr>")
        lines.append("</table>")
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;} table{border-collapse:collapse;width:100%;}"
             "td,th{border-bottom:1px solid #ddd;padding:4px 6px;vertical-align:top;font-size:90%;text-align:left;}"
             ".holds{background:#e3f4e3;} .fails{background:#f8e0e0;} .unsure{background:#e6ecf7;} .open{background:#f4f1e3;}")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>rnnrepro: every claim</title>"
            f"<style>{style}</style></head><body><h1>rnnrepro: the papers' claims, judged</h1>"
            + "\n".join(lines) + "</body></html>\n")
