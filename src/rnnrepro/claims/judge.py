"""One claim judged twice: on the published numbers (as printed) and on ours (each quantity's
interval against the claim's region, :mod:`.inference`), unless the study says this scale
cannot judge it. Then what the two verdicts tell together:

* **coverage**, check by check: the comparisons the paper makes (the published verdict's parts,
  and the opponents and metrics each unit joins) are matched to ours by the labels they share
  (:func:`~.selection.same_unit`); a unit of the paper's that ours lacks is a unit not run, and a
  unit of ours that lacks one of the paper's opponents cannot hold: the claim is partial or
  open, never "holds" (:func:`covered`);
* **consistent**: an inconclusive verdict on ours whose every comparison contains the paper's
  own value of the same quantity in its interval, on numbers where the claim holds, is
  "consistent with the published numbers";
* **about these trained models**: a verdict on ours decided only by the paired bootstrap over
  test items (one trained model per arm) is about those models, not their cells, and says so;
* **in sign**: a sentence about statistical significance holds on the published numbers "in
  sign" only: no test is run on printed numbers;
* **what it takes**: an open verdict on ours says what would decide it (:mod:`.power`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from ..metrics.items import SplitItems
from .inference import ITEMS, Arm, Decision
from .kinds.base import Check
from ..plan.layout import SCALES
from .kinds.build import AllOf, build_check
from .noise import BY_ITEMS, Context
from .power import what_decides
from .regime import NOT_IN_REGIME, RegimeCheck
from .selection import same_unit
from .verdict import (CONSISTENT, IN_SIGN, INCONCLUSIVE, MODELS_FAIL, MODELS_HOLD, PARTIAL, STATUS, ClaimResult, Part,
                      Verdict)

NO_NUMBERS = "the paper gives no numbers for it"


def judge_claim(claim: Mapping[str, Any], artifact: str, ours: pd.DataFrame, published: pd.DataFrame,
                published_rows: pd.DataFrame, scale: str, items: Mapping[str, SplitItems] | None = None,
                policy: str = BY_ITEMS, reference: Mapping[str, Arm] | None = None,
                regime: RegimeCheck | None = None, baselines: pd.DataFrame | None = None) -> ClaimResult:
    """Both verdicts of one claim (see the module's docstring). ``items``: our runs' test items,
    for the paired bootstrap of single trained models; ``policy`` and ``reference``: the
    artifact's noise policy and seed spreads (:class:`~.noise.Context`); ``regime``: whether our
    models reached the regime the paper studied (:mod:`.regime`); ``baselines``: the trivial
    baselines of the artifact's tasks on the same splits (a bound a check may read)."""
    check = build_check(claim["check"])
    needs = claim.get("needs_scale")
    cannot = needs and scale in SCALES and SCALES.index(scale) < SCALES.index(needs)
    context = Context(published_rows, scale, items or {}, policy, reference or {},
                      baselines if baselines is not None else pd.DataFrame())
    on_published, on_ours = judge_pair(check, published, None if cannot or not len(ours) else ours,
                                       Context(published_rows, None), context)
    if on_published.holds is True and any_significance(claim["check"]):
        on_published = Verdict(None, on_published.details + [
            "a sentence about significance: the printed numbers agree in sign, and no test is run on them"], IN_SIGN,
            on_published.parts, on_published.quantifier, decision=on_published.decision)
    if cannot:
        on_ours = Verdict(None, [f"scale {scale} cannot judge it: {claim.get('reading') or 'see the study'}"],
                          f"needs the {needs} scale", to_decide=f"the {needs} scale")
    elif on_ours is None:
        on_ours = Verdict(None, ["not run"], to_decide="run its units")
    else:
        on_ours = in_regime(with_what_decides(about_models(consistent(on_ours, on_published))), regime)
    return ClaimResult(artifact, claim["quote"], claim["where"], claim.get("reading", ""), on_published, on_ours,
                       claim.get("basis", ""), claim.get("note", ""))


def in_regime(ours: Verdict, regime: RegimeCheck | None) -> Verdict:
    """A verdict on models that did not reach the regime the paper studied is its own outcome,
    :data:`~.regime.NOT_IN_REGIME`, with ours, the baselines and the paper's values, and what the
    verdict would read on these models; one whose regime could not be read says so."""
    if regime is None or regime.met is True:
        return ours
    if regime.met is None:
        return replace(ours, details=[*ours.details, *regime.details])
    said = f"not in the paper's regime ({regime.condition}" + (f"; {regime.basis}" if regime.basis else "") + ")"
    return Verdict(None, [said, *regime.details, f"on these models it would read: {ours.status}", *ours.details],
                   NOT_IN_REGIME, ours.parts, ours.quantifier, decision=ours.decision, expected=ours.expected,
                   to_decide=regime.cost or "models that reach the paper's regime (a larger scale)", alpha=ours.alpha)


def judge_pair(check: Check, published: pd.DataFrame, ours: pd.DataFrame | None, on_paper: Context,
               context: Context) -> tuple[Verdict, Verdict | None]:
    """The check's verdicts on the published numbers and on ours (None: not judged), each check of
    a list covered by its own published verdict before the list is joined as one family."""
    if isinstance(check, AllOf):
        pairs = [judge_pair(part, published, ours, on_paper, context) for part in check.parts]
        paper = check.compose([p for p, _ in pairs]) if len(published) else Verdict(None, [NO_NUMBERS])
        return paper, None if ours is None else check.compose([o for _, o in pairs])
    paper = check.judge(published, on_paper) if len(published) else Verdict(None, [NO_NUMBERS])
    return paper, None if ours is None else covered(check.judge(ours, context), paper)


def any_significance(spec: Any) -> bool:
    """Whether a check (or any check of a list) says its sentence is about significance."""
    if isinstance(spec, Mapping):
        return bool(spec.get("significant")) or any_significance((spec.get("params") or {}).get("significant"))
    return isinstance(spec, list) and any(any_significance(part) for part in spec)


def key_text(key: tuple) -> str:
    """``model=basic, vs_cell=gru`` for a key of (label, value) pairs (the metric left out)."""
    return ", ".join(f"{k}={v}" if isinstance(item, tuple) else str(item)
                     for item in key for k, v in [item if isinstance(item, tuple) else ("", item)] if k != "metric")


def comparisons(part: Part) -> list[tuple[Any, Decision]]:
    """A part's single comparisons as (key, decision): the comparisons a unit joins when it keeps
    them one by one, else the part itself."""
    if part.covers and len(part.covers) == len(part.decision.parts):
        return list(zip(part.covers, part.decision.parts))
    return [(part.key, part.decision)]


def shown(keys: list) -> str:
    names = sorted(set(map(key_text, keys)))
    return "; ".join(names[:6]) + (f"; … and {len(names) - 6} more" if len(names) > 6 else "")


def covered(ours: Verdict, published: Verdict) -> Verdict:
    """``ours`` over the comparisons the paper makes: a unit the paper compares that ours lacks is
    a unit not run, and a unit of ours that lacks one of the paper's comparisons (an opponent, a
    metric) cannot hold; either makes a claim partial (or leaves it open) instead of holding on
    what was run."""
    theirs = [p for p in published.parts if p.key is not None]
    parts = list(ours.parts)
    if not theirs or not any(p.key is not None for p in parts):
        return ours
    missing, lacking, incomplete = [], [], set()
    for paper in theirs:
        matches = [i for i, part in enumerate(parts) if part.key is not None and same_unit(paper.key, part.key)]
        if not matches:
            missing.append(paper.key)
            continue
        mine = [key for i in matches for key in parts[i].comparisons]
        absent = [key for key in paper.comparisons if not any(same_unit(key, other) for other in mine)]
        if absent:
            lacking += absent
            incomplete.update(matches)
    if not missing and not lacking:
        return ours
    for i in incomplete:  # not what the paper compares: it cannot hold, can still be refuted
        parts[i] = replace(parts[i], decision=parts[i].decision.incomplete())
    judged = ours.rejudged(parts, len(parts) + len(missing))
    if lacking:
        judged.details.insert(0, f"the paper also compares {shown(lacking)} within units run here: not run here")
    if missing:
        judged.details.insert(0, f"the paper also compares {shown(missing)}: not run here")
    judged.to_decide = "run " + shown(missing + lacking)
    return judged


def consistent(ours: Verdict, published: Verdict) -> Verdict:
    """An inconclusive ``ours`` is consistent with the published numbers when the claim holds on
    them and every comparison of ours (held, refuted or open) has the paper's value of the same
    quantity inside its interval."""
    if ours.status != INCONCLUSIVE or published.holds is not True:
        return ours
    theirs = [(key, d.estimate) for part in published.parts for key, d in comparisons(part) if key is not None]
    mine = [(key, d) for part in ours.parts for key, d in comparisons(part)]
    if not mine:
        return ours
    for key, decision in mine:
        paper = next((value for other, value in theirs if key is not None and value is not None
                      and same_unit(other, key)), None)
        estimate = decision.estimate
        if paper is None or estimate is None or decision.region is None or not estimate.measured:
            return ours
        low, high = estimate.bounds(ours.alpha)  # both values are the same quantity less the same boundary
        if not low <= paper.value <= high:
            return ours
    return replace(ours, details=ours.details + [
        f"every comparison contains the paper's own value in its {100 * (1 - 2 * ours.alpha):.0f} % interval: "
        "ours neither confirms nor refutes more than the paper's numbers"], open=CONSISTENT)


def about_models(ours: Verdict) -> Verdict:
    """A verdict decided on the paired bootstrap over test items (one trained model per arm) is
    about these trained models, not their cells: its own outcome, never "holds"/"does not hold"."""
    if ours.holds is None or ours.decision is None:
        return ours
    if not any(leaf.estimate is not None and leaf.estimate.source == ITEMS for leaf in ours.decision.leaves()):
        return ours
    status = MODELS_HOLD if ours.holds else MODELS_FAIL
    return replace(ours, holds=None, open=status, details=[
        "decided on the test items of one trained model per arm (the paired bootstrap): a statement about "
        "these trained models, not about their cells, which only several seeds per arm can judge", *ours.details])


def with_what_decides(ours: Verdict) -> Verdict:
    """An open verdict with what would decide it: the units it names that were not run (from
    coverage), and the seeds per arm that decide its open comparisons at 80 % power
    (:func:`~.power.what_decides`), or that no number of seeds can; a verdict about trained models
    first needs seeds; one that cannot be judged, what it lacks."""
    if ours.holds is not None:
        return ours
    if ours.open == STATUS[None]:
        ours.to_decide = ours.to_decide or (ours.details[0] if ours.details else "")
        return ours
    units = ours.to_decide
    if ours.open.startswith(PARTIAL) and not units:
        named = [d.split(" also compares ", 1)[1].rsplit(": not run here", 1)[0] for d in ours.details
                 if " also compares " in d and d.endswith(": not run here")]
        units = "run " + ("; ".join(named) if named else "the units it names that were not run")
    if ours.open in (MODELS_HOLD, MODELS_FAIL):
        ours.seeds_to_decide = 2
        ours.to_decide = "≥ 2 seeds per arm (a claim about cells)"
        ours.details.insert(0, "to decide about the cells: at least 2 seeds per arm, to measure their spread")
        return ours
    need = None if ours.open.startswith(PARTIAL) else what_decides(ours.decision, ours.alpha)
    if need is not None:
        ours.details.insert(0, f"to decide: {need.why}")
        ours.seeds_to_decide = need.seeds
    ours.to_decide = "; ".join(part for part in (units, need.short if need else "") if part)
    return ours
