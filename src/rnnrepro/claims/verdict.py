"""What judging a claim gives: a :class:`Verdict` per set of numbers (published, ours), and
a :class:`ClaimResult` that holds both beside the claim's quote.

A verdict **holds** or **does not hold** when the numbers decide it (on ours: the interval of
each quantity inside or outside the claim's region, :mod:`.inference`), or stays open:

* :data:`INCONCLUSIVE`: on ours, the interval straddles the region's boundary; the verdict
  says what would decide it (:mod:`.power`);
* :data:`PARTIAL` "(k of n)": every comparison run supports the claim, but the sentence covers
  units (or opponents) that were not run (:mod:`.combine`);
* :data:`CONSISTENT`: inconclusive on ours, but the interval of every comparison of ours
  contains the paper's own number, on which the claim holds;
* :data:`MODELS_HOLD`, :data:`MODELS_FAIL`: decided on ours only by the paired bootstrap over
  test items of one trained model per arm: a statement about these trained models, not about
  their cells, counted apart from "holds" and "does not hold";
* :data:`IN_SIGN`: on the published numbers, a sentence about statistical significance whose
  numbers agree in sign, which printed numbers cannot test;
* "cannot be judged" (numbers missing) and "needs the <scale> scale".

:func:`verdict_of` gathers the comparisons (:class:`Part`) of one check into one verdict.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .combine import EVERY, MOST, combine
from .inference import ALPHA, Decision
from .noise import as_decision

STATUS = {True: "holds", False: "does not hold", None: "cannot be judged"}
INCONCLUSIVE = "inconclusive at this scale"
PARTIAL = "partial"
CONSISTENT = "consistent with the published numbers"
IN_SIGN = "holds in sign"
MODELS_HOLD = "holds for these trained models"
MODELS_FAIL = "does not hold for these trained models"
NOT_IN_REGIME = "not in the paper's regime at this scale"
#: The counts of an artifact's entry in ``verdicts/<study>.json`` beside its headline metric
#: (:mod:`.judge_study` writes them, the index page reads them).
BOOKKEEPING = ("claims", "hold_ours", "fail_ours", "inconclusive_ours", "partial_ours", "consistent_ours",
               "models_ours", "regime_ours", "hold_published")
#: The quantifier of a verdict made of several checks' verdicts (a claim whose ``check:`` is a list).
COMPOSITE = "all checks"


@dataclass(frozen=True)
class Part:
    """One comparison of a claim (or one unit that joins several): its decision, the detail line
    that shows it and a ``key`` naming what it compares (metric, unit, opponent), by which ours
    and the published are paired. ``covers``: the keys of the comparisons a unit joins (its
    opponents, its metrics), by which a unit of ours that lacks one of the paper's is found."""

    decision: Decision
    detail: str
    key: Any = None
    covers: tuple = ()

    @property
    def comparisons(self) -> tuple:
        """The keys of the single comparisons this part stands for."""
        return self.covers or ((self.key,) if self.key is not None else ())


@dataclass
class Verdict:
    """Outcome of a check on one set of numbers. ``holds`` is True or False when the numbers
    decide it; None when they do not, and ``open`` says why (see the module's docstring).
    ``parts`` are its comparisons (kept while judging, not written), ``quantifier`` how they
    combine, ``decision`` their joined decision (p-values, family) and ``expected`` the units the
    sentence covers."""

    holds: bool | None
    details: list[str] = field(default_factory=list)
    open: str = STATUS[None]
    parts: list[Part] = field(default_factory=list, repr=False, compare=False)
    quantifier: str = EVERY
    seeds_to_decide: int | None = None  # on ours, open: seeds per arm a decision needs (80 % power)
    decision: Decision | None = field(default=None, repr=False, compare=False)
    expected: int | None = None
    to_decide: str = ""  # on ours, open: what decides it (seeds and hours, units to run, a scale)
    alpha: float = ALPHA  # the level of each one-sided bound it was decided at

    @property
    def status(self) -> str:
        return STATUS[self.holds] if self.holds is not None else self.open

    def text(self) -> str:
        line = f"**{self.status}**"
        return line + (" — " + "; ".join(self.details) if self.details else "")

    @classmethod
    def from_text(cls, status: str, details: str) -> "Verdict":
        """A verdict read back from the summary's table (``status``; ``details`` one per line)."""
        holds = {text: value for value, text in STATUS.items()}.get(status)
        return cls(holds, [line for line in details.split("\n") if line], status if holds is None else STATUS[None])

    def as_decision(self) -> Decision:
        """This verdict as one decision (to join it with others: a list of checks)."""
        partial = self.holds is None and self.open.startswith(PARTIAL)
        if self.decision is not None:
            return Decision(self.holds, self.decision.p_holds, self.decision.p_fails, parts=self.decision.parts,
                            quantifier=self.decision.quantifier, expected=self.decision.expected,
                            family=self.decision.family, partial=partial)
        return Decision(None, partial=True) if partial else as_decision(self.holds)

    def rejudged(self, parts: Sequence[Part], expected: int | None, alpha: float | None = None) -> "Verdict":
        """This verdict over ``parts`` (e.g. with units of the paper's not run) and ``expected`` units."""
        return verdict_of([(p.decision, p.detail, p.key, p.covers) for p in parts], self.quantifier, "",
                          expected=expected, alpha=self.alpha if alpha is None else alpha)


@dataclass
class ClaimResult:
    """A claim of the paper and its verdicts on the published numbers and on ours."""

    artifact: str
    quote: str
    where: str
    reading: str
    published: Verdict
    ours: Verdict
    basis: str = ""  # where its tolerances come from
    note: str = ""  # what the report says beside the verdicts


def verdict_of(results: Sequence[tuple], quantifier: str | bool, empty: str,
               expected: int | None = None, alpha: float = ALPHA) -> Verdict:
    """The verdict of a check's comparisons: ``results`` are (outcome, detail), (outcome,
    detail, key) or (outcome, detail, key, covers) with outcome a :class:`~.inference.Decision`,
    or True/False for an exact computation, or None when open. ``quantifier``: every, most or
    some (True: most, False: every); ``expected`` the units the sentence covers (see
    :func:`.combine.combine`). Cannot be judged when there are no results."""
    if not results:
        return Verdict(None, [empty])
    quantifier = {True: MOST, False: EVERY}.get(quantifier, quantifier)
    parts = [Part(as_decision(r[0]), r[1], r[2] if len(r) > 2 else None, tuple(r[3]) if len(r) > 3 else ())
             for r in results]
    outcome = combine([p.decision for p in parts], quantifier, expected, alpha)
    details = [p.detail for p in parts]
    if len(parts) > 1 or outcome.partial or outcome.holds is not None and quantifier != EVERY:
        details.insert(0, outcome.summary)
    total = max(expected or len(parts), len(parts))
    held = sum(p.decision.holds is True for p in parts)
    open_ = f"{PARTIAL} ({held} of {total})" if outcome.partial else INCONCLUSIVE
    return Verdict(outcome.holds, details, open_ if outcome.holds is None else STATUS[None], parts, quantifier,
                   decision=outcome.decision, expected=total, alpha=alpha)
