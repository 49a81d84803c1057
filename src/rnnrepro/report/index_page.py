"""The index page over every study: ``reports/index.html`` (every claim with its verdicts and
each artifact's headline, linked to the study's report) and ``metrics.json`` (the studies'
JSON in one file, for ``dvc metrics show`` / ``diff``), written by the workflow's ``index``
rule (:func:`write_index`) from the verdicts and headlines the ``judge`` rule wrote per
study (:mod:`rnnrepro.claims.judge_study`).
"""
from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..atomic import atomic_path
from ..claims.noise import NOISE_TEST
from ..claims.verdict import (BOOKKEEPING, CONSISTENT, IN_SIGN, INCONCLUSIVE, MODELS_FAIL, MODELS_HOLD,
                              NOT_IN_REGIME)
from ..metrics.formats import format_value

STATUS_CLASS = {"holds": "holds", "does not hold": "fails", INCONCLUSIVE: "unsure", CONSISTENT: "unsure",
                IN_SIGN: "unsure", MODELS_HOLD: "models", MODELS_FAIL: "models", NOT_IN_REGIME: "regime"}


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


def to_decide(rec: dict) -> str:
    """What decides a claim open on ours: "12 seeds per arm (0.4 h here, 35 h at the paper scale)",
    the units to run, or a scale (the summary's ``to_decide``)."""
    return str(rec.get("to_decide", "") or "")


def index_html(claims: pd.DataFrame, metrics: dict, scale: str) -> str:
    """One table per study: artifact (linked to its section), claim, verdicts, headline."""
    counts = claims[claims["quote"] != ""]
    total = len(counts)

    def tally(column: str) -> str:
        found = counts[column].value_counts()
        found = found.groupby(found.index.str.replace(r"^partial \(.*\)$", "partial", regex=True)).sum()
        order = ["holds", "does not hold", NOT_IN_REGIME, MODELS_HOLD, MODELS_FAIL, INCONCLUSIVE, CONSISTENT, "partial",
                 IN_SIGN]
        shown = [f"{int(found[s])} {s}" for s in order if s in found]
        shown += [f"{int(n)} {s}" for s, n in found.items() if s not in order]
        return ", ".join(shown) or "none"

    lines = [f"<p>Scale <code>{html.escape(scale)}</code>. {total} claims of the papers, each quoted and judged "
             f"on the published numbers (as printed) and on ours. On ours each claim is a region of the quantity its "
             f"sentence is about; it <em>holds</em> when the interval of that quantity lies inside the region and "
             f"<em>does not hold</em> when it lies outside ({html.escape(NOISE_TEST)}; claims over several units "
             f"corrected by Holm). Anything else is <em>inconclusive at this scale</em>, which says nothing against "
             f"the paper, and the last column says what would decide it: the seeds per arm that decide it with "
             f"80 % power and what they would cost, the units to run, or the scale; <em>partial</em> means units "
             f"the sentence covers were not run. A verdict decided only on the test items of one trained model "
             f"per arm <em>holds (or does not hold) for these trained models</em>: it says nothing about their "
             f"cells, and is counted apart. A claim whose models did not reach the regime the paper studied (each "
             f"artifact's control against a trivial baseline of the same split, shown in its report) is "
             f"<em>{html.escape(NOT_IN_REGIME)}</em>, never held or refuted.</p>",
             f"<p><strong>On ours ({html.escape(scale)}):</strong> {html.escape(tally('ours'))}.<br>"
             f"<strong>On the published numbers:</strong> {html.escape(tally('published'))}.</p>",
             "<p>Follow an artifact to its section of the study's report for the numbers behind each verdict.</p>"]
    for study, rows in claims.groupby("study", sort=False):
        lines.append(f'<h2><a href="{html.escape(study)}.html">{html.escape(study)}</a></h2>')
        lines.append("<table><tr><th>artifact</th><th>claim (where)</th><th>published</th>"
                     f"<th>ours ({html.escape(scale)})</th><th>headline (ours)</th><th>to decide (ours)</th></tr>")
        for rec in rows.to_dict("records"):
            entry = metrics.get(study, {}).get(rec["artifact"], {})
            headline = next(((k, v) for k, v in entry.items() if k not in BOOKKEEPING), None)
            shown = f"{headline[0]} = {format_value(headline[1], headline[0])}" if headline else rec["no_numbers"]
            link = f'<a href="{html.escape(study)}.html#{html.escape(rec["artifact"])}">{html.escape(rec["artifact"])}</a>'
            claim = (f"“{html.escape(rec['quote'])}” ({html.escape(rec['where'])})" if rec["quote"]
                     else f"<em>{html.escape(rec['title'])}</em>: no claim is checked")
            lines.append(f"<tr><td>{link}</td><td>{claim}</td>{verdict_cell(rec['published'])}"
                         f"{verdict_cell(rec['ours'])}<td>{html.escape(str(shown))}</td>"
                         f"<td>{html.escape(to_decide(rec))}</td></tr>")
        lines.append("</table>")
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;} table{border-collapse:collapse;width:100%;}"
             "td,th{border-bottom:1px solid #ddd;padding:4px 6px;vertical-align:top;font-size:90%;text-align:left;}"
             ".holds{background:#e3f4e3;} .fails{background:#f8e0e0;} .unsure{background:#e6ecf7;} .open{background:#f4f1e3;}"
             ".models{background:#efe6f4;} .regime{background:#eeeeee;}")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>rnnrepro: every claim</title>"
            f"<style>{style}</style></head><body><h1>rnnrepro: the papers' claims, judged</h1>"
            + "\n".join(lines) + "</body></html>\n")
