"""One claim judged twice: on the published numbers (as printed) and on ours (each quantity's
90 % interval against the claim's region, :mod:`.inference`), unless the study says this scale
cannot judge it. Then what the two verdicts tell together:

* **coverage**: the comparisons the paper makes (the published verdict's parts) that ours lacks
  are units not run; a claim over them is partial or open, never "holds" (:meth:`Verdict.covering`);
* **consistent**: an inconclusive verdict on ours whose every open comparison contains the
  paper's own value of the same quantity, on which the claim holds, is "consistent with the
  published numbers" (ours set to the paper's numbers cannot refute or confirm more than they);
* **in sign**: a sentence about statistical significance (``significant: true`` in its check)
  holds on single published runs "in sign" only: their significance cannot be tested;
* **what it takes**: an inconclusive verdict on ours says how many seeds per arm a decision
  needs at 80 % power (:mod:`.power`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..metrics.items import SplitItems
from .kinds.build import build_check
from .noise import Context
from .power import seeds_needed
from .selection import same_unit
from .verdict import CONSISTENT, IN_SIGN, INCONCLUSIVE, PARTIAL, ClaimResult, Verdict

SCALES = ("ci", "mini", "paper")  # smallest first


def judge_claim(claim: Mapping[str, Any], artifact: str, ours: pd.DataFrame, published: pd.DataFrame,
                published_rows: pd.DataFrame, scale: str,
                items: Mapping[str, SplitItems] | None = None) -> ClaimResult:
    """Both verdicts of one claim (see the module's docstring). ``items``: our runs' test items,
    for the paired bootstrap of single trained models."""
    check = build_check(claim["check"])
    on_published = check.judge(published, Context(published_rows, None)) if len(published) else \
        Verdict(None, ["the paper gives no numbers for it"])
    if on_published.holds is True and any_significance(claim["check"]) and not has_spread(published):
        on_published = Verdict(None, on_published.details + [
            "significance cannot be tested on single published runs: the numbers agree in sign only"], IN_SIGN,
            on_published.parts, on_published.quantifier)
    needs = claim.get("needs_scale")
    if needs and scale in SCALES and SCALES.index(scale) < SCALES.index(needs):
        on_ours = Verdict(None, [f"scale {scale} cannot judge it: {claim.get('reading') or 'see the study'}"],
                          f"needs the {needs} scale")
    elif not len(ours):
        on_ours = Verdict(None, ["not run"])
    else:
        on_ours = check.judge(ours, Context(published_rows, scale, items or {}))
        on_ours = covered(on_ours, on_published)
        on_ours = consistent(on_ours, on_published)
        on_ours = with_what_decides(on_ours)
    return ClaimResult(artifact, claim["quote"], claim["where"], claim.get("reading", ""), on_published, on_ours,
                       claim.get("basis", ""), claim.get("note", ""))


def any_significance(spec: Any) -> bool:
    """Whether a check (or any check of a list) says its sentence is about significance."""
    if isinstance(spec, Mapping):
        return bool(spec.get("significant")) or any_significance((spec.get("params") or {}).get("significant"))
    return isinstance(spec, list) and any(any_significance(part) for part in spec)


def has_spread(published: pd.DataFrame) -> bool:
    """Whether the published numbers come with a spread over runs (so that a test is possible)."""
    return "std" in published and published["std"].notna().any()


def keys_of(verdict: Verdict) -> set:
    return {part.key for part in verdict.parts if part.key is not None}


def key_text(key: tuple) -> str:
    """``model=basic, vs_cell=gru`` for a key of (label, value) pairs (the metric left out)."""
    return ", ".join(f"{k}={v}" if isinstance(item, tuple) else str(item)
                     for item in key for k, v in [item if isinstance(item, tuple) else ("", item)] if k != "metric")


def covered(ours: Verdict, published: Verdict) -> Verdict:
    """``ours`` over the comparisons the paper makes: units the paper compares that ours lacks
    make a claim partial (or leave it open) instead of holding on what was run."""
    mine = keys_of(ours)
    missing = [key for key in keys_of(published) if not any(same_unit(key, other) for other in mine)]
    if not missing or not ours.parts or not mine:
        return ours
    judged = ours.covering(len(ours.parts) + len(missing))
    names = sorted(map(key_text, missing))
    shown = "; ".join(names[:6]) + (f"; … and {len(names) - 6} more" if len(names) > 6 else "")
    judged.details.insert(0, f"the paper also compares {shown}: not run here")
    return judged


def consistent(ours: Verdict, published: Verdict) -> Verdict:
    """An inconclusive ``ours`` is consistent with the published numbers when the claim holds on
    them and each open comparison of ours has the paper's value of the same quantity inside its
    90 % interval."""
    if ours.status != INCONCLUSIVE or published.holds is not True:
        return ours
    theirs = [(part.key, part.decision.estimate) for part in published.parts if part.key is not None]
    open_parts = [part for part in ours.parts if part.decision.holds is None]
    if not open_parts:
        return ours
    for part in open_parts:
        paper = next((value for key, value in theirs if part.key is not None and same_unit(key, part.key)), None)
        estimate = part.decision.estimate
        if paper is None or estimate is None or part.decision.region is None:
            return ours
        low, high = estimate.bounds()  # both values are the same quantity less the same boundary
        if not low <= paper.value <= high:
            return ours
    return Verdict(None, ours.details + ["each open comparison contains the paper's own value in its 90 % "
                                         "interval: ours neither confirms nor refutes more than the paper's numbers"],
                   CONSISTENT, ours.parts, ours.quantifier)


def with_what_decides(ours: Verdict) -> Verdict:
    """An inconclusive (or consistent) verdict with the seeds per arm that would decide its open
    comparisons at 80 % power: the most any of them needs."""
    if ours.holds is not None or not (ours.status in (INCONCLUSIVE, CONSISTENT) or ours.status.startswith(PARTIAL)):
        return ours
    needs = [seeds_needed(part.decision) for part in ours.parts if part.decision.holds is None]
    if not needs:
        return ours
    known = [need for need in needs if need.seeds is not None]
    if known and len(known) == len(needs):
        most = max(known, key=lambda need: need.seeds)
        line = f"to decide: {most.seeds} seeds per arm ({most.why.split(' for ', 1)[-1]}, the hardest open comparison)"
    else:
        worst = next(need for need in needs if need.seeds is None)
        line = f"to decide: {worst.why}"
    ours.details.insert(0, line)
    ours.seeds_to_decide = max(need.seeds for need in known) if known and len(known) == len(needs) else None
    return ours
