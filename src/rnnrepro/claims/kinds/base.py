"""What every check is: :class:`Check`, the registry of the declarative kinds (by ``kind``)
and that of the paper checks (:data:`PAPER_CHECKS`, by ``<study>:<Class>``), and the neutral
data from which examples and counterexamples are built."""
from __future__ import annotations

import math

from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from ...metrics.directions import higher_is_better
from ...registry import Registry
from ..combine import EVERY, MOST, SOME
from ..inference import ALPHA, SIGNIFICANCE_ALPHA
from ..noise import Context
from ..selection import select
from ..verdict import Verdict

#: The value every metric starts from in the data built by examples and counterexamples, over
#: this many seeds with a spread so small that, on ours, their differences are beyond the noise
#: (a spread of 0 is not measured, :func:`~..inference.welch`, and would decide nothing).
NEUTRAL = 1000.0
NEUTRAL_SEEDS = 30
NEUTRAL_SPREAD = 1e-6


class Check:
    """A test of a claim on a summary. Subclasses set ``kind`` and implement the three methods."""

    kind: ClassVar[str] = ""
    registry: ClassVar[dict[str, type["Check"]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind:
            Check.registry[cls.kind] = cls

    def __init__(self, spec: Mapping[str, Any]):
        self.spec = dict(spec)
        metric = self.spec.get("metric", [])
        self.metrics: list[str] = [metric] if isinstance(metric, str) else list(metric)
        self.where = self.spec.get("where") or {}
        self.per = self.spec.get("per")
        #: how the comparisons of the units combine: ``in: all`` (every), ``most`` or ``some`` (:mod:`..combine`)
        self.quantifier = {"all": EVERY, "every": EVERY, "most": MOST, "some": SOME}[self.spec.get("in", "all")]
        self.most = self.quantifier == MOST
        #: ``noise: seeds``: weigh differences only against the spread over seeds (see Context.noise_of)
        self.seeds_only = self.spec.get("noise") == "seeds"
        #: ``noise: none``: the sentence is about the one trained model a figure shows (the values of
        #: an analysis that keeps one model, e.g. the best restart): read as measured, exact
        self.as_measured = self.spec.get("noise") == "none"
        #: ``significant: true``: a sentence about statistical significance, decided at the level the
        #: word means in the papers' fields (two-sided 5 %: each bound one-sided 2.5 %)
        self.alpha = SIGNIFICANCE_ALPHA if self.spec.get("significant") else ALPHA

    def higher(self, metric: str) -> bool:
        return higher_is_better(metric, self.spec.get("higher_is_better"))

    def rows(self, frame: pd.DataFrame, metric: str) -> pd.DataFrame:
        if frame.empty or "metric" not in frame:
            return frame.iloc[0:0]
        rows = select(frame[frame["metric"] == metric], self.where)
        statistic = self.spec.get("statistic", "mean")
        if statistic != "mean" and statistic in rows:  # published numbers have their value only
            rows = rows.assign(mean=rows[statistic])
        if self.as_measured and "n" in rows:  # ours: one trained model's values, exact (published: as printed)
            rows = rows.assign(std=0.0, n=rows["n"].where(rows["n"].isna(), math.inf), run="")
        return rows[rows["mean"].notna()]

    def judge(self, frame: pd.DataFrame, context: Context) -> Verdict:
        """The verdict on ``frame`` (a summary)."""
        raise NotImplementedError

    def example(self, frame: pd.DataFrame, context: Context) -> pd.DataFrame:
        """``frame`` (a summary, see :meth:`neutral`) changed so that the claim holds on it."""
        raise NotImplementedError

    def counterexample(self, frame: pd.DataFrame, context: Context) -> pd.DataFrame:
        """``frame`` changed so that the claim does not hold on it."""
        raise NotImplementedError

    def neutral(self, labels: pd.DataFrame) -> pd.DataFrame:
        """A summary over ``labels`` (rows of label values): every metric of the check at
        :data:`NEUTRAL`, the start of :meth:`example` and :meth:`counterexample`."""
        parts = [labels.assign(metric=metric, mean=NEUTRAL, std=NEUTRAL_SPREAD, n=NEUTRAL_SEEDS) for metric in self.metrics]
        return pd.concat(parts, ignore_index=True) if parts else labels.assign(metric="", mean=NEUTRAL)

    def picked(self, frame: pd.DataFrame, metric: str, selector: Mapping[str, Any] | None) -> pd.Index:
        """Index of the rows of ``metric`` (within ``where``) that ``selector`` picks."""
        rows = select(frame[frame["metric"] == metric], self.where)
        return select(rows, selector).index


#: The checks that need code, one module per study under :mod:`rnnrepro.claims.papers`, each
#: registered where it is defined (``@PAPER_CHECKS.register("drnn:ReversalBound")``) under the
#: name a study's YAML gives it: ``{kind: python, function: drnn:ReversalBound}``.
PAPER_CHECKS: Registry[type[Check]] = Registry("paper check")
