"""A claim's ``check:`` made into a :class:`~.base.Check`: one of the declarative kinds by its
``kind``, a paper check by its name (``kind: python``), or a list of checks that must all hold
(:class:`AllOf`)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..verdict import COMPOSITE, INCONCLUSIVE, PARTIAL, STATUS, Part, Verdict
from . import best, compare, threshold, trend, within  # noqa: F401  (each registers its kind)
from .base import PAPER_CHECKS, Check


def python_check(spec: Mapping[str, Any]) -> Check:
    """The paper check named ``<study>:<Class>`` (:data:`~.base.PAPER_CHECKS`), built with
    ``params``; an unknown name lists the known ones."""
    cls = PAPER_CHECKS[spec["function"]]
    return cls({**(spec.get("params") or {}), **{k: v for k, v in spec.items() if k not in ("kind", "function", "params")}})


class AllOf(Check):
    """Several checks of one claim (``check:`` given as a list): it holds when each holds."""

    kind = ""

    def __init__(self, specs: Sequence[Mapping[str, Any]]):
        super().__init__({})
        self.parts = [build_check(spec) for spec in specs]

    def judge(self, frame, context):
        """Holds when every check holds, does not hold when one does not; else open: cannot be
        judged when a check has no numbers, partial when a check is, else inconclusive. Each
        check's comparisons are kept (their keys tagged with the check's place) for coverage."""
        verdicts = [part.judge(frame, context) for part in self.parts]
        details = [d for v in verdicts for d in v.details]
        parts = [Part(p.decision, p.detail, None if p.key is None else (i, *p.key))
                 for i, v in enumerate(verdicts) for p in v.parts]
        if any(v.holds is False for v in verdicts):
            return Verdict(False, details, parts=parts, quantifier=COMPOSITE)
        undecided = [v for v in verdicts if v.holds is None]
        if undecided:
            reasons = [v.open for v in undecided]
            reason = STATUS[None] if STATUS[None] in reasons else next(
                (r for r in reasons if r.startswith(PARTIAL)), INCONCLUSIVE if INCONCLUSIVE in reasons else reasons[0])
            return Verdict(None, details, reason, parts, COMPOSITE)
        return Verdict(True, details, parts=parts, quantifier=COMPOSITE)

    def neutral(self, labels):
        frames = [part.neutral(labels) for part in self.parts]
        frame = pd.concat(frames, ignore_index=True)
        keys = [c for c in frame.columns if c not in ("mean", "std", "n")]
        return frame.drop_duplicates(subset=keys).reset_index(drop=True)

    def example(self, frame, context):
        for part in self.parts:
            frame = part.example(frame, context)
        return frame

    def counterexample(self, frame, context):
        for part in self.parts[1:]:
            frame = part.example(frame, context)
        return self.parts[0].counterexample(frame, context)  # last, so that no part repairs it


def build_check(spec: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Check:
    """The check of a claim's ``check:`` (a mapping, or a list of them that must all hold);
    an unknown kind names the known ones."""
    if isinstance(spec, Sequence) and not isinstance(spec, (str, Mapping)):
        return AllOf(spec)
    kind = spec.get("kind")
    if kind == "python":
        return python_check(spec)
    if kind not in Check.registry:
        raise ValueError(f"unknown check kind {kind!r}; known: {', '.join(sorted(Check.registry))}, python")
    return Check.registry[kind](spec)

