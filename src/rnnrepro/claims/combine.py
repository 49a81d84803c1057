"""Claims over many comparisons: "in every", "in most", "in some", over the units a sentence names.

A sentence such as "ELSTM outperforms LSTM and GRU in every macro model" is a conjunction of
comparisons, one per unit (macro model) and opponent. Each comparison is a
:class:`~.inference.Decision` with the p-values of holding and of failing. Joined:

* **every** (intersection–union, Berger 1982): holds when every part holds, each at level α (no
  correction is needed: the claim is false if any part is); does not hold when a comparison is
  refuted after Holm's correction over **all the comparisons of the claim** (its ``family``:
  parts that are themselves "every" bring their own comparisons, and a claim whose check is a
  list of checks is one family too), so that 180 comparisons at 95 % do not refute a true claim
  by chance; else inconclusive.
* **most** (more than half of the N named units): holds when more than N/2 parts hold after
  Holm's correction over the parts' p-values of holding; does not hold when so many are refuted
  after Holm that at most N/2 could hold; else inconclusive.
* **some**: holds when a part holds after Holm's correction; does not hold when every one of
  the N named units is refuted (each at α: an intersection–union test of the negation).

Each joined decision keeps a p-value of holding and one of failing (Holm's adjusted p-value of
the rank that decides it: the largest for "every", the (N/2 + 1)-th for "most", the smallest
for "some"), so that joined decisions join again with the same rules and one α.

**Coverage.** A claim names the units its sentence covers (``expected``): a part that was not
run counts neither way. A claim whose comparisons run all hold, while units not run leave it
undecided, is **partial (k of n)**, never "holds"; one that the comparisons run so far already
refute does not hold, and one they already settle ("most" of all n, "some") holds.

Holm's step-down procedure is written out in :func:`holm` (six lines): statsmodels'
``multipletests(method="holm")`` gives the same decisions (a test holds them equal) but runs a
full garbage collection on every call, 80 ms, which the calibration's thousands of simulated
claims cannot afford.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .inference import ALPHA, Decision

EVERY, MOST, SOME = "every", "most", "some"


def holm(pvalues: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Which hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``: with the
    p-values sorted, p_(1) ≤ … ≤ p_(k), reject the first j while p_(j) ≤ alpha / (k − j + 1)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = [False] * len(pvalues)
    for rank, i in enumerate(order):
        if pvalues[i] > alpha / (len(pvalues) - rank):
            break
        rejected[i] = True
    return rejected


def holm_adjusted(pvalues: Sequence[float], rank: int) -> float:
    """Holm's adjusted p-value of the ``rank``-th smallest (1-based) of ``pvalues``:
    max_{j ≤ rank} (k − j + 1) · p_(j), at most 1. Holm rejects at least ``rank`` hypotheses at
    level α exactly when it is ≤ α."""
    ordered = sorted(pvalues)
    k = len(ordered)
    if not 1 <= rank <= k:
        return 1.0
    return min(1.0, max((k - j) * ordered[j] for j in range(rank)))


def family_of(decision: Decision) -> tuple[float, ...]:
    """The refutation p-values a decision's own ``p_fails`` corrects over: those of its
    comparisons when it joins several every-wise, else its own."""
    return decision.family or (decision.p_fails,)


@dataclass(frozen=True)
class Combined:
    """A quantified claim's outcome: ``holds`` (True, False or None), ``partial`` when units are
    missing from an otherwise supported claim, a one-line ``summary`` of the count, and the
    joined ``decision`` (its p-values, parts and family)."""

    holds: bool | None
    summary: str
    partial: bool = False
    decision: Decision = Decision(None)


def combine(decisions: Sequence[Decision], quantifier: str = EVERY, expected: int | None = None,
            alpha: float = ALPHA) -> Combined:
    """Join the parts of a claim (see the module's docstring). ``expected``: how many parts
    the sentence covers (None: the parts given are all of them)."""
    decisions = list(decisions)
    n = len(decisions)
    total = max(expected or n, n)
    missing = total - n
    held = sum(d.holds is True for d in decisions)
    failed = sum(d.holds is False for d in decisions)
    partials = sum(d.partial for d in decisions)
    supported = bool(n) and held + partials == n and bool(missing or partials)  # all run hold, some not run
    count = (f"{held} of {total} hold" + (f", {failed} do not" if failed else "")
             + (f", {n - held - failed} within the noise" if n - held - failed else "")
             + (f", {missing} not run" if missing else "")
             + (f" ({partials} of them partial)" if partials else ""))

    def outcome(holds, summary, p_holds, p_fails, family=(), partial=False) -> Combined:
        joined = Decision(holds, p_holds, p_fails, parts=tuple(decisions), quantifier=quantifier,
                          expected=total, family=tuple(family), partial=partial and holds is None)
        return Combined(holds, summary, partial, joined)

    p_hold = [d.p_holds for d in decisions] + [1.0] * missing
    if quantifier == EVERY:
        family = [p for d in decisions for p in family_of(d)]
        p_fails = min(1.0, len(family) * min(family)) if family else 1.0
        p_holds = max(p_hold) if p_hold else 1.0
        refuted = sum(holm(family, alpha))
        if refuted:
            return outcome(False, count + f"; {refuted} refuted after Holm's correction over {len(family)}",
                           p_holds, p_fails, family)
        if held == n and n and not missing:
            return outcome(True, count, p_holds, p_fails, family)
        return outcome(None, count, p_holds, p_fails, family, partial=supported)
    p_fail = [d.p_fails for d in decisions] + [1.0] * missing
    if quantifier == MOST:
        need = total // 2 + 1
        p_holds = holm_adjusted(p_hold, need)
        p_fails = holm_adjusted(p_fail, total - need + 1)
        sure, refuted = sum(holm(p_hold, alpha)), sum(holm(p_fail, alpha))
        if sure >= need:
            return outcome(True, count + f"; {sure} hold after Holm's correction, more than half of {total}",
                           p_holds, p_fails)
        if total - refuted < need:
            return outcome(False, count + f"; {refuted} refuted after Holm's correction: at most "
                                          f"{total - refuted} of {total} can hold", p_holds, p_fails)
        return outcome(None, count, p_holds, p_fails, partial=supported)
    if quantifier == SOME:
        p_holds = holm_adjusted([d.p_holds for d in decisions], 1)
        p_fails = max(p_fail) if p_fail else 1.0
        sure = sum(holm([d.p_holds for d in decisions], alpha))
        if sure:
            return outcome(True, count + f"; {sure} hold after Holm's correction over {n}", p_holds, p_fails)
        if n and not missing and failed == n:
            return outcome(False, count, p_holds, p_fails)
        return outcome(None, count, p_holds, p_fails, partial=supported)
    raise ValueError(f"unknown quantifier {quantifier!r}: {EVERY}, {MOST} or {SOME}")


def joined(decisions: Sequence[Decision], quantifier: str = EVERY, alpha: float = ALPHA) -> Decision:
    """The decision of several comparisons of one unit joined by ``quantifier`` (default: all of
    them must hold), keeping its parts and family (see :func:`combine`)."""
    return combine(decisions, quantifier, alpha=alpha).decision
