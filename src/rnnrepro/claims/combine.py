"""Claims over many comparisons: "in every", "in most", "in some", over the units a sentence names.

A sentence such as "ELSTM outperforms LSTM and GRU in every macro model" is a conjunction of
comparisons, one per unit (macro model) and opponent. Each comparison is a
:class:`~.inference.Decision` with the p-values of holding and of failing. Combined:

* **every** (intersection–union, Berger 1982): holds when every part holds, each at level α (no
  correction is needed: the claim is false if any part is); does not hold when a part stays
  refuted after Holm's correction over all parts (so that 180 comparisons at 95 % do not refute
  a true claim by chance); else inconclusive.
* **most** (more than half of the N named units): holds when more than N/2 parts hold after
  Holm's correction over the parts' p-values of holding; does not hold when so many are refuted
  after Holm that at most N/2 could hold; else inconclusive.
* **some**: holds when a part holds after Holm's correction; does not hold when every one of
  the N named units is refuted (each at α: an intersection–union test of the negation).

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


@dataclass(frozen=True)
class Combined:
    """A quantified claim's outcome: ``holds`` (True, False or None), ``partial`` when units are
    missing from an otherwise supported claim, and a one-line ``summary`` of the count."""

    holds: bool | None
    summary: str
    partial: bool = False


def combine(decisions: Sequence[Decision], quantifier: str = EVERY, expected: int | None = None,
            alpha: float = ALPHA) -> Combined:
    """Combine the parts of a claim (see the module's docstring). ``expected``: how many parts
    the sentence covers (None: the parts given are all of them)."""
    n = len(decisions)
    total = max(expected or n, n)
    missing = total - n
    holding = holm([d.p_holds for d in decisions], alpha)
    refuted = holm([d.p_fails for d in decisions], alpha)
    held = sum(d.holds is True for d in decisions)
    failed = sum(d.holds is False for d in decisions)
    count = (f"{held} of {total} hold" + (f", {failed} do not" if failed else "")
             + (f", {n - held - failed} within the noise" if n - held - failed else "")
             + (f", {missing} not run" if missing else ""))
    if quantifier == EVERY:
        if any(refuted):
            return Combined(False, count + f"; {sum(refuted)} refuted after Holm's correction over {n}")
        if held == n and n:
            return Combined(None, count, partial=True) if missing else Combined(True, count)
        return Combined(None, count)
    if quantifier == MOST:
        need = total // 2 + 1
        sure = sum(holding)
        if sure >= need:
            return Combined(True, count + f"; {sure} hold after Holm's correction, more than half of {total}")
        if total - sum(refuted) < need:
            return Combined(False, count + f"; {sum(refuted)} refuted after Holm's correction: at most "
                                           f"{total - sum(refuted)} of {total} can hold")
        return Combined(None, count, partial=bool(missing) and held == n)
    if quantifier == SOME:
        if any(holding):
            return Combined(True, count + f"; {sum(holding)} hold after Holm's correction over {n}")
        if n and not missing and failed == n:
            return Combined(False, count)
        return Combined(None, count, partial=bool(missing) and held == n)
    raise ValueError(f"unknown quantifier {quantifier!r}: {EVERY}, {MOST} or {SOME}")
