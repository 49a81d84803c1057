"""A claim's ``check:`` made into a :class:`~.base.Check`: one of the declarative kinds by its
``kind``, a paper check by its name (``kind: python``), or a list of checks that must all hold
(:class:`AllOf`)."""
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from ...registry import Registry, import_all
from ..combine import EVERY, combine
from ..inference import ALPHA
from ..verdict import COMPOSITE, INCONCLUSIVE, PARTIAL, STATUS, Verdict
from . import best, compare, threshold, trend, within  # noqa: F401  (each registers its kind)
from .base import PAPER_CHECKS, Check


@functools.cache
def paper_checks() -> Registry[type[Check]]:
    """:data:`~.base.PAPER_CHECKS`, once every module of :mod:`rnnrepro.claims.papers` has
    registered its checks (imported when a claim first needs one)."""
    from .. import papers

    import_all(papers.__name__, papers.__path__)
    return PAPER_CHECKS


def python_check(spec: Mapping[str, Any]) -> Check:
    """The paper check named ``<study>:<Class>`` (:data:`~.base.PAPER_CHECKS`), built with
    ``params``; an unknown name lists the known ones."""
    cls = paper_checks()[spec["function"]]
    return cls({**(spec.get("params") or {}), **{k: v for k, v in spec.items() if k not in ("kind", "function", "params")}})


class AllOf(Check):
    """Several checks of one claim (``check:`` given as a list): it holds when each holds."""

    kind = ""

    def __init__(self, specs: Sequence[Mapping[str, Any]]):
        super().__init__({})
        self.parts = [build_check(spec) for spec in specs]

    def judge(self, frame, context):
        return self.compose([part.judge(frame, context) for part in self.parts])

    @staticmethod
    def compose(verdicts: Sequence[Verdict]) -> Verdict:
        """The claim's verdict from its checks' verdicts, as one family: holds when every check
        holds, does not hold when a comparison of a check is refuted after Holm's correction over
        every comparison of the claim (:func:`~..combine.combine`), else open: cannot be judged
        when a check has no numbers, partial when a check is partial and none is inconclusive,
        else inconclusive. Each check's comparisons are kept, their keys tagged with the check's
        place (a label ``check`` that ours and the published share) for coverage."""
        details = [d for v in verdicts for d in v.details]
        parts = [replace(p, key=None if p.key is None else tag(i, p.key),
                         covers=tuple(tag(i, c) for c in p.covers))
                 for i, v in enumerate(verdicts) for p in v.parts]
        alpha = min((v.alpha for v in verdicts), default=ALPHA)
        outcome = combine([v.as_decision() for v in verdicts], EVERY, alpha=alpha)
        held = sum(p.decision.holds is True for p in parts)
        total = sum(v.expected or len(v.parts) for v in verdicts)
        if outcome.holds is not None:
            if outcome.holds is False and len(verdicts) > 1:
                details.insert(0, f"one family over the {len(outcome.decision.family)} comparisons of the "
                                  f"{len(verdicts)} checks: {outcome.summary.split('; ', 1)[-1]}")
            return Verdict(outcome.holds, details, parts=parts, quantifier=COMPOSITE, decision=outcome.decision,
                           expected=total, alpha=alpha)
        reasons = [v.open for v in verdicts if v.holds is not True]
        if STATUS[None] in reasons:
            reason = STATUS[None]
        elif outcome.partial:
            reason = f"{PARTIAL} ({held} of {total})"
        else:
            reason = INCONCLUSIVE
        units = [piece.removeprefix("run ") for v in verdicts if v.to_decide and v.holds is not True
                 for piece in v.to_decide.split("; ")]
        to_decide = "run " + "; ".join(dict.fromkeys(units)) if units else ""
        return Verdict(None, details, reason, parts, COMPOSITE, decision=outcome.decision, expected=total, alpha=alpha,
                       to_decide=to_decide)

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


def tag(index: int, key: Any) -> Any:
    """A comparison's key within a list of checks: its (label, value) pairs and the check's place
    as one more pair, so that ours and the published still pair by their shared labels."""
    pairs = key if isinstance(key, tuple) and all(isinstance(k, tuple) and len(k) == 2 for k in key) else \
        (("key", key),)
    return (("check", str(index)), *pairs)


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

