"""What judging a claim gives: a :class:`Verdict` per set of numbers (published, ours), and
a :class:`ClaimResult` that holds both beside the claim's quote.

A verdict **holds** or **does not hold** when the numbers decide it (on ours: the 90 % interval
of each quantity inside or outside the claim's region, :mod:`.inference`), or stays open:

* :data:`INCONCLUSIVE`: on ours, the interval straddles the region's boundary; the verdict
  says what would decide it (:mod:`.power`);
* :data:`PARTIAL` "(k of n)": every comparison run supports the claim, but the sentence covers
  units that were not run (:mod:`.combine`);
* :data:`CONSISTENT`: inconclusive on ours, but every open comparison of ours is consistent
  with the paper's own number, on which the claim holds;
* :data:`IN_SIGN`: on the published numbers, a sentence about statistical significance whose
  numbers agree in sign, which single published runs cannot test;
* "cannot be judged" (numbers missing) and "needs the <scale> scale".

:func:`verdict_of` gathers the comparisons (:class:`Part`) of one check into one verdict.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .combine import EVERY, MOST, combine
from .inference import Decision
from .noise import as_decision

STATUS = {True: "holds", False: "does not hold", None: "cannot be judged"}
INCONCLUSIVE = "inconclusive at this scale"
PARTIAL = "partial"
CONSISTENT = "consistent with the published numbers"
IN_SIGN = "holds in sign"
#: The quantifier of a verdict made of several checks' verdicts (a claim whose ``check:`` is a list).
COMPOSITE = "all checks"


@dataclass(frozen=True)
class Part:
    """One comparison of a claim: its decision, the detail line that shows it and a ``key``
    naming what it compares (metric, unit, opponent), by which ours and the published are paired."""

    decision: Decision
    detail: str
    key: Any = None


@dataclass
class Verdict:
    """Outcome of a check on one set of numbers. ``holds`` is True or False when the numbers
    decide it; None when they do not, and ``open`` says why (see the module's docstring).
    ``parts`` are its comparisons (kept while judging, not written), ``quantifier`` how they
    combine."""

    holds: bool | None
    details: list[str] = field(default_factory=list)
    open: str = STATUS[None]
    parts: list[Part] = field(default_factory=list, repr=False, compare=False)
    quantifier: str = EVERY
    seeds_to_decide: int | None = None  # on ours, inconclusive: seeds per arm a decision needs (80 % power)

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

    def covering(self, expected: int) -> "Verdict":
        """This verdict over ``expected`` comparisons where fewer were run (see :mod:`.combine`);
        a verdict of several checks that holds on what was run is partial."""
        if self.quantifier == COMPOSITE:
            if self.holds is not True:
                return Verdict(self.holds, list(self.details), self.open, self.parts, self.quantifier)
            return Verdict(None, list(self.details), f"{PARTIAL} ({len(self.parts)} of {expected})", self.parts,
                           self.quantifier)
        return verdict_of([(p.decision, p.detail, p.key) for p in self.parts], self.quantifier,
                          "", expected=expected)


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
               expected: int | None = None) -> Verdict:
    """The verdict of a check's comparisons: ``results`` are (outcome, detail) or (outcome,
    detail, key) with outcome a :class:`~.inference.Decision`, or True/False for an exact
    computation, or None when open. ``quantifier``: every, most or some (True: most, False:
    every); ``expected`` the units the sentence covers (see :func:`.combine.combine`). Cannot be
    judged when there are no results."""
    if not results:
        return Verdict(None, [empty])
    quantifier = {True: MOST, False: EVERY}.get(quantifier, quantifier)
    parts = [Part(as_decision(r[0]), r[1], r[2] if len(r) > 2 else None) for r in results]
    outcome = combine([p.decision for p in parts], quantifier, expected)
    details = [p.detail for p in parts]
    if len(parts) > 1 or outcome.partial or outcome.holds is not None and quantifier != EVERY:
        details.insert(0, outcome.summary)
    total = max(expected or len(parts), len(parts))
    held = sum(p.decision.holds is True for p in parts)
    open_ = f"{PARTIAL} ({held} of {total})" if outcome.partial else INCONCLUSIVE
    return Verdict(outcome.holds, details, open_ if outcome.holds is None else STATUS[None], parts, quantifier)
