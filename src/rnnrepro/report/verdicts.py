"""Claims of the papers, judged on a summary (ours, or the published numbers).

A study's YAML quotes each claim and says how to check it (``claims:`` of an artifact)::

    claims:
      - quote: "For the simple POS tagging task, ELSTM also shows equal or better performance ..."
        where: Sec. 5.2
        check: {kind: compare, metric: test_accuracy, better: {cell: elstm}, than: {cell: [lstm, gru]},
                margin: 0, strict: false}

A check sees a summary: label columns (text), ``metric``, ``mean`` (and ``std``, ``n``). Kinds:

- ``compare``: rows of ``better`` beat rows of ``than`` on each metric by more than ``margin``
  (metric units; ``strict: false`` allows equality; a negative margin is a tolerance), in
  every *unit* (the other labels that vary, e.g. each macro model) or, with ``in: most``, in
  more than half of them; ``grows_along: T`` also asks the advantage to grow along a label.
- ``best``: the ``best`` selection is the best of its dimension (``among`` restricts the
  competitors) in every unit.
- ``threshold``: every row is ``below`` (or ``above``) a number, or a published constant
  (``below: "published:baseline_mse"``, or ``{published: params, where: {model: convseq2seq}}``).
- ``trend``: values rise (``direction: increasing``) or fall along a label in every unit, each
  step by more than ``margin`` (default 0; negative: a step back that small is no break).
- ``within``: ``a`` and ``b`` differ by at most ``tolerance`` (a number, or
  ``{std_of: selector, times: k}``: k times that selection's standard deviation over seeds).
- ``python``: a :class:`Check` subclass of ``rnnrepro.report.papers.<module>``, named
  ``module:Class``, for the rare claim that needs code.

``where`` restricts the rows, ``per`` names the unit labels when the default is not right,
``higher_is_better`` overrides the metric's direction, ``statistic`` judges the ``min`` or
``max`` over seeds instead of their mean (e.g. "can a cell fit the data": its best restart). A claim with no data to compare is
"cannot be judged", never "holds".

Every check can build data on which it must hold (:meth:`Check.example`) and data on which it
must fail (:meth:`Check.counterexample`) from a frame of labels; the test suite feeds both to
every claim of every study, so a check that cannot fail does not pass the tests.
"""
from __future__ import annotations

import importlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from ..metrics.items import SplitItems, bootstrap_se, describe
from .formatting import format_value, higher_is_better, natural_key
from .frames import label_columns, label_text

STATUS = {True: "holds", False: "does not hold", None: "cannot be judged"}


INCONCLUSIVE = "inconclusive at this scale"


@dataclass
class Verdict:
    """Outcome of a check on one set of numbers. ``holds`` is True or False when the numbers
    decide it; None when they do not, and ``open`` says why: "cannot be judged" (numbers missing),
    :data:`INCONCLUSIVE` (on ours, a difference within the noise of our runs), "needs the paper
    scale" (a claim the study says this scale cannot judge)."""

    holds: bool | None
    details: list[str] = field(default_factory=list)
    open: str = STATUS[None]

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


@dataclass
class Context:
    """What a check may read besides its summary: the artifact's published rows (constants such
    as a baseline), the scale (None for the published numbers) and our runs' test items (by run
    name, for the paired bootstrap of :meth:`noise`)."""

    published: pd.DataFrame = field(default_factory=pd.DataFrame)
    scale: str | None = None
    items: Mapping[str, SplitItems] = field(default_factory=dict)

    def noise(self, metric: str, plus: Sequence[Mapping[str, Any]],
              minus: Sequence[Mapping[str, Any]] = (), seeds_only: bool = False) -> Spread | None:
        """The uncertainty of Σ plus − Σ minus (summary rows of ``metric``): see :meth:`noise_of`."""
        return self.noise_of(metric, [(1.0, row) for row in plus] + [(-1.0, row) for row in minus], seeds_only)

    def noise_of(self, metric: str, terms: Sequence[tuple[float, Mapping[str, Any]]],
                 seeds_only: bool = False) -> Spread | None:
        """The uncertainty of Σ c · mean over ``terms`` ((c, summary row of ``metric``) pairs).
        Over seeds where every row has several (:func:`spread_of`); else, on ours, where each row
        is a single run that kept its test items and all were scored on the same items, the
        paired bootstrap over those items (:func:`rnnrepro.metrics.items.bootstrap_se`, z = 1.96);
        else None. ``seeds_only`` (a check's ``noise: seeds``): over seeds or None. The bootstrap
        weighs how two trained models differ on a finite test set, not how much training with
        another seed moves them; a claim about cells or architectures ("no significant difference
        between PRU and PRU+", "performance increases with the delay") needs the seeds."""
        spread = spread_of(*(row for _, row in terms))
        if spread is not None or seeds_only or not self.weighs_noise or not self.items:
            return spread
        runs = []
        for c, row in terms:
            if row.get("n") == math.inf:  # an exact value
                continue
            items = self.items.get(str(row.get("run") or ""))
            if items is None:
                return None
            runs.append((c, items))
        se = bootstrap_se(runs, metric) if runs else None
        return None if se is None else Spread(se, Z_95, f"paired bootstrap over {describe(runs[0][1])}")

    @property
    def weighs_noise(self) -> bool:
        """On ours (a scale), a difference counts only beyond the noise of our runs; the
        published numbers are judged as the paper prints them."""
        return self.scale is not None

    def constant(self, metric: str, where: Mapping[str, Any] | None = None) -> float | None:
        """A published number: the first of ``metric`` among the rows ``where`` picks."""
        if self.published.empty:
            return None
        rows = select(self.published[self.published["metric"] == metric], where)
        return float(rows["value"].iloc[0]) if len(rows) else None


# -- selection helpers -------------------------------------------------------------------------
COMPARISONS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
               "<": lambda a, b: a < b}


def options(value: Any) -> list[str]:
    return [label_text(v) for v in (value if isinstance(value, list) else [value])]


def as_number(text: str) -> float | None:
    key = natural_key(text)
    return key[1] if key[0] == 0 else None


def matches(column: pd.Series, value: Any) -> pd.Series:
    """Which values of a label column a selector value picks: a value, a list of values,
    a comparison such as ``">0"`` or ``"<=5"``, or ``"min"`` / ``"max"`` of the column."""
    if isinstance(value, str) and value in ("min", "max"):
        numbers = [n for n in map(as_number, column) if n is not None]
        if not numbers:
            return pd.Series(False, index=column.index)
        target = min(numbers) if value == "min" else max(numbers)
        return column.map(lambda v: as_number(v) == target)
    if isinstance(value, str):
        for op in (">=", "<=", ">", "<"):
            if value.startswith(op) and as_number(value[len(op):].strip()) is not None:
                bound = as_number(value[len(op):].strip())
                return column.map(lambda v: (n := as_number(v)) is not None and COMPARISONS[op](n, bound))
    return column.isin(options(value))


def select(frame: pd.DataFrame, selector: Mapping[str, Any] | None) -> pd.DataFrame:
    """Rows whose labels match every key of the selector (see :func:`matches`); ``min`` and
    ``max`` are taken among the rows the other keys pick."""
    selector = dict(selector or {})
    extremes = {k: v for k, v in selector.items() if v in ("min", "max")}
    for key, value in [*((k, v) for k, v in selector.items() if k not in extremes), *extremes.items()]:
        if key not in frame:
            return frame.iloc[0:0]
        frame = frame.loc[matches(frame[key], value).astype(bool)]
    return frame


def name_of(selector: Mapping[str, Any]) -> str:
    return ", ".join(f"{'/'.join(options(v))}" if k in ("model", "cell", "grid") else f"{k}={'/'.join(options(v))}"
                     for k, v in selector.items())


def unit_name(record: Mapping[str, Any], units: Sequence[str]) -> str:
    return ", ".join(str(record[u]) if u in ("model", "cell", "grid") else f"{u}={record[u]}" for u in units) or "all"


def varying(frames: Sequence[pd.DataFrame], exclude: set[str]) -> list[str]:
    """Label columns (not in ``exclude``, never ``grid``) that take more than one value within any
    of ``frames``: the default units of a check (``per`` names them explicitly)."""
    columns: list[str] = []
    for frame in frames:
        for column in label_columns(frame):
            if column not in exclude | {"grid"} and column not in columns and frame[column].nunique() > 1:
                columns.append(column)
    return columns


# -- the noise of our runs -----------------------------------------------------------------------
#: Two-sided 95 % quantiles of Student's t by degrees of freedom (beyond 30: the normal 1.96).
T_95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042}
NOISE_TEST = ("Welch's t-test at 95 % over seeds, conservatively with min(n) − 1 degrees of freedom")
ONE_SEED = "one seed, and no test items to resample: no spread to weigh the difference against"
#: The two-sided 95 % quantile of the normal distribution (the paired bootstrap's standard error).
Z_95 = 1.96


def t_95(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (the next smaller tabled df)."""
    return T_95[max(k for k in T_95 if k <= df)] if df <= 30 else 1.96


@dataclass(frozen=True)
class Spread:
    """The uncertainty of a difference: its standard error, the quantile it is multiplied by
    (Student's t over seeds, 1.96 for the bootstrap) and where it comes from (empty: seeds)."""

    se: float
    t: float
    source: str = ""

    @property
    def half_width(self) -> float:
        return self.t * self.se


def spread_of(*rows: Mapping[str, Any]) -> Spread | None:
    """The spread of a difference (or sum) of the means of summary ``rows`` (each with ``std`` and
    ``n`` over seeds): Welch's standard error sqrt(Σ s²/n) with min(n) − 1 degrees of freedom;
    None when a row has fewer than two seeds (no spread to weigh against)."""
    variances, counts = [], []
    for row in rows:
        std, n = row.get("std"), row.get("n")
        if n == math.inf:  # an exact value (a computation, not a mean over seeds)
            continue
        if n is None or pd.isna(n) or n < 2 or std is None or pd.isna(std):
            return None
        variances.append(float(std) ** 2 / float(n))
        counts.append(int(n))
    return Spread(math.sqrt(sum(variances)), t_95(min(counts) - 1) if counts else 1.96)


def with_spread_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``std``, ``n`` (NaN where a summary has none, e.g. published) and ``run``
    (empty where no single run makes the row) columns."""
    return rows.assign(**{column: rows[column] if column in rows else math.nan for column in ("std", "n")},
                       run=rows["run"] if "run" in rows else "")


def decide(excess: float, spread: Spread | None, context: Context, strict: bool = True) -> bool | None:
    """Whether ``excess`` (how far a difference goes past what the claim needs; positive: it does)
    settles a comparison. On the published numbers its sign does (``strict``: 0 is not enough). On
    ours, only beyond the noise h = t·se of :func:`spread_of`: a strict claim ("better") holds when
    excess > h and fails when excess < −h, and is inconclusive within; a non-strict one ("not
    better", "at least") fails only when excess < −h (no evidence against it is what such a
    sentence asks). Without a spread (one seed) nothing on ours is settled: None."""
    if not context.weighs_noise:
        return bool(excess > 0 if strict else excess >= 0)
    if spread is None:
        return None
    h = spread.half_width
    if excess < -h or (strict and h == 0 and excess <= 0):
        return False
    if not strict or excess > h:
        return True
    return None


def within(gap: float, tolerance: float, spread: Spread | None, context: Context) -> bool | None:
    """Whether a gap |a − b| is within ``tolerance``: on the published numbers as printed; on ours
    as an equivalence test, True when gap + h ≤ tolerance, False when gap − h > tolerance, else
    None (h = t·se of the difference, :func:`spread_of`; None without a spread)."""
    if not context.weighs_noise:
        return bool(gap <= tolerance)
    if spread is None:
        return None
    h = spread.half_width
    return True if gap + h <= tolerance else False if gap - h > tolerance else None


def combined(results: Sequence[bool | None]) -> bool | None:
    """All of several decided comparisons: False if one fails, True if all hold, else None."""
    results = [None if r is None else bool(r) for r in results]
    return False if False in results else True if all(r is True for r in results) else None


def noise_text(spread: Spread | None, metric: str) -> str:
    """`` (± t·se at 95 %)``, naming the bootstrap when it measured it, or the one-seed note,
    for a detail line on ours."""
    if spread is None:
        return f" ({ONE_SEED})"
    source = f", {spread.source}" if spread.source else ""
    return f" (± {format_value(spread.half_width, metric, True)} at 95 %{source})"


# -- the checks --------------------------------------------------------------------------------
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
        self.most = self.spec.get("in", "all") == "most"
        #: ``noise: seeds``: weigh differences only against the spread over seeds (see Context.noise_of)
        self.seeds_only = self.spec.get("noise") == "seeds"

    def higher(self, metric: str) -> bool:
        return higher_is_better(metric, self.spec.get("higher_is_better"))

    def rows(self, frame: pd.DataFrame, metric: str) -> pd.DataFrame:
        if frame.empty or "metric" not in frame:
            return frame.iloc[0:0]
        rows = select(frame[frame["metric"] == metric], self.where)
        statistic = self.spec.get("statistic", "mean")
        if statistic != "mean" and statistic in rows:  # published numbers have their value only
            rows = rows.assign(mean=rows[statistic])
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
        parts = [labels.assign(metric=metric, mean=NEUTRAL, std=0.0, n=NEUTRAL_SEEDS) for metric in self.metrics]
        return pd.concat(parts, ignore_index=True) if parts else labels.assign(metric="", mean=NEUTRAL)

    def picked(self, frame: pd.DataFrame, metric: str, selector: Mapping[str, Any] | None) -> pd.Index:
        """Index of the rows of ``metric`` (within ``where``) that ``selector`` picks."""
        rows = select(frame[frame["metric"] == metric], self.where)
        return select(rows, selector).index


#: The value every metric starts from in the data built by examples and counterexamples, over
#: this many seeds with no spread (so that, on ours, their differences are beyond the noise).
NEUTRAL = 1000.0
NEUTRAL_SEEDS = 30


def pair_side(rec: Mapping[str, Any], side: str) -> dict[str, Any]:
    """One side (``"w"`` or ``"l"``) of a pair of :meth:`Compare.pairs` as a summary row."""
    return {"mean": rec[f"mean_{side}"], "std": rec[f"std_{side}"], "n": rec[f"n_{side}"], "run": rec.get(f"run_{side}", "")}


def verdict_of(results: list[tuple[bool | None, str]], most: bool, empty: str) -> Verdict:
    """All (or, with ``most``, more than half) of the (good, detail) results, where good is True,
    False, or None for a comparison within the noise of our runs. With every result decided: holds
    or does not hold. Otherwise: does not hold when a decided failure (all) or the failures alone
    (most) already settle it, holds when the successes alone do (most), else inconclusive at this
    scale. Cannot be judged when there are no results."""
    if not results:
        return Verdict(None, [empty])
    results = [(None if ok is None else bool(ok), detail) for ok, detail in results]  # numpy booleans too
    n = len(results)
    good = sum(ok is True for ok, _ in results)
    bad = sum(ok is False for ok, _ in results)
    open_ = n - good - bad
    details = [detail for _, detail in results]
    if most:
        details.insert(0, f"{good} of {n} comparisons hold" + (f", {open_} within the noise" if open_ else ""))
        holds = True if good > n / 2 else False if good + open_ <= n / 2 else None
    else:
        holds = False if bad else True if good == n else None
    return Verdict(holds, details, INCONCLUSIVE if holds is None else STATUS[None])


class Compare(Check):
    """``better`` beats ``than`` by more than ``margin`` in every (or most) unit."""

    kind = "compare"

    def __init__(self, spec):
        super().__init__(spec)
        self.better, self.than = self.spec["better"], self.spec["than"]
        self.margin = float(self.spec.get("margin", 0.0))
        self.relative = bool(self.spec.get("relative", False))
        self.strict = bool(self.spec.get("strict", True))
        self.grows = self.spec.get("grows_along")

    def pairs(self, rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
        win, lose = select(rows, self.better), select(rows, self.than)
        if win.empty or lose.empty:
            return pd.DataFrame(), []
        units = self.per or varying([win, lose], set(self.better) | set(self.than))
        mine = [k for k in self.better if k not in units and isinstance(self.better[k], list)]
        opponent = [k for k in self.than if k not in units]
        win, lose = with_spread_columns(win), with_spread_columns(lose)
        left = win[[*units, *mine, "mean", "std", "n", "run"]].rename(
            columns={"mean": "mean_w", "std": "std_w", "n": "n_w", "run": "run_w", **{k: f"me_{k}" for k in mine}})
        right = lose[[*units, *opponent, "mean", "std", "n", "run"]].rename(
            columns={"mean": "mean_l", "std": "std_l", "n": "n_l", "run": "run_l", **{k: f"vs_{k}" for k in opponent}})
        pairs = left.merge(right, on=units) if units else left.merge(right, how="cross")
        return pairs, units

    def advantage(self, metric: str, pairs: pd.DataFrame) -> pd.Series:
        """How much better the winner is: a difference in metric units, or with ``relative`` a
        fraction of the other's value."""
        sign = 1 if self.higher(metric) else -1
        advantage = sign * (pairs["mean_w"] - pairs["mean_l"])
        return advantage / pairs["mean_l"].abs() if self.relative else advantage

    def margin_text(self, metric: str) -> str:
        if not self.margin:
            return ""
        return f" (margin {self.margin:.1%} of it)" if self.relative else f" (margin {format_value(self.margin, metric, True)})"

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            pairs, units = self.pairs(self.rows(frame, metric))
            if pairs.empty:
                continue
            pairs = pairs.assign(adv=self.advantage(metric, pairs))
            for rec in pairs.to_dict("records"):
                spread = self.spread(rec, metric, context)
                ok = decide(rec["adv"] - self.margin, spread, context, self.strict)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.than)
                me = ", ".join(str(rec[c]) for c in rec if c.startswith("me_")) or name_of(self.better)
                said = {True: "better than", False: "not better than", None: "within the noise of"}[ok]
                results.append((ok, f"{unit_name(rec, units)}: {me} {format_value(rec['mean_w'], metric)} {said} "
                                    f"{vs} {format_value(rec['mean_l'], metric)}{self.margin_text(metric)} ({metric})"
                                    + (noise_text(spread, metric if not self.relative else "") if context.weighs_noise else "")))
            if self.grows:
                results += self.growth(metric, pairs, units, context)
        return verdict_of(results, self.most, f"no {name_of(self.better)} beside {name_of(self.than)} to compare")

    def spread(self, rec: Mapping[str, Any], metric: str, context: Context) -> Spread | None:
        """The noise of one pair's advantage (in its units: a fraction of the other's value when
        relative): over seeds, or the paired bootstrap of two single runs (:meth:`Context.noise`)."""
        spread = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")])
        if spread is not None and self.relative:
            spread = Spread(spread.se / abs(rec["mean_l"]) if rec["mean_l"] else math.inf, spread.t, spread.source)
        return spread

    def growth(self, metric: str, pairs: pd.DataFrame, units: list[str],
               context: Context) -> list[tuple[bool | None, str]]:
        """The advantage rises along ``grows_along`` within every other unit (on ours, each rise
        beyond the noise of the two advantages)."""
        if self.grows not in units:
            return [(False, f"the advantage cannot be followed along {self.grows}: one value only")]
        rest = [u for u in units if u != self.grows] + [c for c in pairs if c.startswith(("me_", "vs_"))]
        out = []
        for key, group in (pairs.groupby(rest, sort=False) if rest else [((), pairs)]):
            group = group.sort_values(self.grows, key=lambda s: s.map(natural_key))
            if len(group) < 2:
                continue
            advantages = group["adv"].tolist()
            records = group.to_dict("records")
            rises = []
            for a, b in zip(records, records[1:]):
                one, two = self.spread(a, metric, context), self.spread(b, metric, context)
                spread = None if one is None or two is None else Spread(math.hypot(one.se, two.se), min(one.t, two.t))
                rises.append(decide(b["adv"] - a["adv"], spread, context))
            ok = combined(rises)
            steps = ", ".join(f"{self.grows}={g}: {format_value(a, metric, True)}"
                              for g, a in zip(group[self.grows], advantages))
            label = ", ".join(map(str, key if isinstance(key, tuple) else (key,)))
            out.append((ok, f"advantage {dict([(True, 'grows'), (False, 'does not grow'), (None, 'changes within the noise')])[ok]} along {self.grows}"
                            f"{' (' + label + ')' if label else ''}: {steps}"))
        return out

    def steps(self, frame: pd.DataFrame, index: pd.Index) -> pd.Series:
        """1 for every row, or the rank of ``grows_along`` (1, 2, ...) when the gap must grow."""
        if not self.grows or self.grows not in frame:
            return pd.Series(1.0, index=index)
        return frame.loc[index, self.grows].map(lambda v: natural_key(v)[1] if natural_key(v)[0] == 0 else 0.0) \
            .rank(method="dense")

    def example(self, frame, context):
        """The winners beat the best loser by more than the margin (more at each step of
        ``grows_along``)."""
        frame = frame.copy()
        m = abs(self.margin)
        for metric in self.metrics:
            win, lose = self.picked(frame, metric, self.better), self.picked(frame, metric, self.than)
            if win.empty or lose.empty:
                continue
            higher = self.higher(metric)
            best_loser = frame.loc[lose, "mean"].max() if higher else frame.loc[lose, "mean"].min()
            steps = self.steps(frame, win)
            if self.relative:  # advantage (w − l)/l, or (l − w)/l when lower is better
                ratio = 2 * (1 + m) if higher else 2 / max(1e-6, 1 - min(m, 0.999))
                frame.loc[win, "mean"] = best_loser * ratio ** steps if higher else best_loser / ratio ** steps
            else:
                gap = (2 * m + 10) * steps
                frame.loc[win, "mean"] = best_loser + gap if higher else best_loser - gap
        return frame

    def counterexample(self, frame, context):
        """The winners lose clearly to the worst loser."""
        frame = frame.copy()
        for metric in self.metrics:
            win, lose = self.picked(frame, metric, self.better), self.picked(frame, metric, self.than)
            if win.empty or lose.empty:
                continue
            if self.higher(metric):
                frame.loc[win, "mean"] = frame.loc[lose, "mean"].min() / 10 - 10 * abs(self.margin)
            else:
                frame.loc[win, "mean"] = frame.loc[lose, "mean"].max() * 10 + 10 * abs(self.margin)
        return frame


class Best(Check):
    """The ``best`` selection is the best of its dimension in every (or most) unit."""

    kind = "best"

    def __init__(self, spec):
        super().__init__(spec)
        self.best = self.spec["best"]
        self.among = self.spec.get("among") or {}

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = select(self.rows(frame, metric), self.among)
            dims = set(self.best) | set(self.among)
            units = self.per or varying([select(rows, self.best)], dims)
            higher = self.higher(metric)
            for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                mine = select(group, self.best)
                if mine.empty or len(group) < 2:
                    continue
                top = group["mean"].max() if higher else group["mean"].min()
                winner = group.loc[group["mean"] == top].iloc[0]
                group = with_spread_columns(group)
                me = with_spread_columns(mine).iloc[0].to_dict()
                others = [row for index, row in zip(group.index, group.to_dict("records")) if index not in mine.index]
                sign = 1 if higher else -1
                noises = [context.noise(metric, [me], [other]) for other in others]
                ok = combined([decide(sign * (me["mean"] - other["mean"]), noise, context)
                               for other, noise in zip(others, noises)])
                rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
                dim = next(iter(self.best))
                results.append((ok, f"{unit_name(rec, units)}: best {winner[dim] if dim in winner else '?'} "
                                    f"{format_value(top, metric)}"
                                    + ("" if ok and me["mean"] == top else
                                       f", {name_of(self.best)} {format_value(me['mean'], metric)}")
                                    + f" ({metric})" + ("" if ok is not None else
                                                        " — within the noise of a competitor" if any(noises)
                                                        else f" — {ONE_SEED}")))
        return verdict_of(results, self.most, f"{name_of(self.best)} was not run beside a competitor")

    def example(self, frame, context):
        frame = frame.copy()
        for metric in self.metrics:
            rows = select(frame[frame["metric"] == metric], self.where)
            mine = select(select(rows, self.among), self.best).index
            top = rows["mean"].max() if self.higher(metric) else rows["mean"].min()
            frame.loc[mine, "mean"] = top * 2 + 10 if self.higher(metric) else top / 2 - 10
        return frame

    def counterexample(self, frame, context):
        frame = frame.copy()
        for metric in self.metrics:
            rows = select(frame[frame["metric"] == metric], self.where)
            mine = select(select(rows, self.among), self.best).index
            worst = rows["mean"].min() if self.higher(metric) else rows["mean"].max()
            frame.loc[mine, "mean"] = worst / 2 - 10 if self.higher(metric) else worst * 2 + 10
        return frame


class Threshold(Check):
    """Every row is below (or above) a number or a published constant."""

    kind = "threshold"

    def bound(self, context: Context) -> tuple[float | None, bool]:
        """The bound: a number, ``"published:<metric>"`` or ``{published: <metric>, where: {...}}``."""
        below = "below" in self.spec
        value = self.spec["below" if below else "above"]
        if isinstance(value, str):
            value = context.constant(value.removeprefix("published:"))
        elif isinstance(value, Mapping):
            value = context.constant(value["published"], value.get("where"))
        return value, below

    def judge(self, frame, context):
        bound, below = self.bound(context)
        if bound is None:
            return Verdict(None, ["the bound is not among the published values"])
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            units = self.per or varying([rows], set())
            for rec in with_spread_columns(rows).to_dict("records"):
                spread = self.spread(rec, metric, context)
                ok = decide(bound - rec["mean"] if below else rec["mean"] - bound, spread, context)
                op = {True: "<" if below else ">", False: "≥" if below else "≤", None: "≈"}[ok]
                results.append((ok, f"{unit_name(rec, units)}: {format_value(rec['mean'], metric)} {op} "
                                    f"{format_value(bound, metric)} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else "")))
        return verdict_of(results, self.most, f"no {' or '.join(self.metrics)} values")

    def spread(self, rec: Mapping[str, Any], metric: str, context: Context) -> Spread | None:
        """The noise of a mean over seeds (or, of a single run, the bootstrap over its test items);
        none for the best (or worst) seed, which a claim about what some run can do reads as it is."""
        return Spread(0.0, 1.0) if self.spec.get("statistic", "mean") != "mean" else context.noise(metric, [rec])

    def set_side(self, frame, context, inside: bool):
        frame = frame.copy()
        bound, below = self.bound(context)
        bound = 0.0 if bound is None else bound
        step = abs(bound) * 0.5 + 1.0
        for metric in self.metrics:
            rows = self.picked(frame, metric, {})
            frame.loc[rows, "mean"] = bound - step if below == inside else bound + step
        return frame

    def example(self, frame, context):
        return self.set_side(frame, context, True)

    def counterexample(self, frame, context):
        return self.set_side(frame, context, False)


class Trend(Check):
    """Values rise or fall along a label in every (or most) unit: each step by more than
    ``margin`` (metric units; a negative margin tolerates a step back that small, e.g. what the
    paper's figure cannot show)."""

    kind = "trend"

    def __init__(self, spec):
        super().__init__(spec)
        self.along = self.spec["along"]
        self.up = self.spec.get("direction", "increasing") == "increasing"
        self.strict = bool(self.spec.get("strict", False))
        self.margin = float(self.spec.get("margin", 0.0))

    def judge(self, frame, context):
        results = []
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            if self.along not in rows:
                continue
            units = self.per or varying([rows], {self.along})
            for key, group in (rows.groupby(units, sort=False) if units else [((), rows)]):
                group = group.sort_values(self.along, key=lambda s: s.map(natural_key))
                if group[self.along].nunique() < 2:
                    continue
                values = group["mean"].tolist()
                records = with_spread_columns(group).to_dict("records")
                ok = combined([decide((b["mean"] - a["mean"]) * (1 if self.up else -1) - self.margin,
                                      context.noise(metric, [b], [a], self.seeds_only), context, self.strict)
                               for a, b in zip(records, records[1:])])
                rec = dict(zip(units, key if isinstance(key, tuple) else (key,)))
                shown = ", ".join(f"{self.along}={g}: {format_value(v, metric)}" for g, v in zip(group[self.along], values))
                tolerated = (f", a step back of up to {format_value(-self.margin, metric, True).lstrip('+')} allowed"
                             if self.margin < 0 else "")
                results.append((ok, f"{unit_name(rec, units)}: {shown} ({metric}{tolerated}, "
                                    f"{'rising' if self.up else 'falling'}: "
                                    f"{dict([(True, 'yes'), (False, 'no'), (None, 'within the noise')])[ok]})"))
        return verdict_of(results, self.most, f"no unit with two values of {self.along}")

    def ranked(self, frame, flip):
        frame = frame.copy()
        for metric in self.metrics:
            rows = self.picked(frame, metric, {})
            if self.along not in frame:
                continue
            ranks = frame.loc[rows, self.along].map(lambda v: natural_key(v)[1] if natural_key(v)[0] == 0 else 0.0) \
                .rank(method="dense")
            up = self.up != flip
            frame.loc[rows, "mean"] = NEUTRAL + 10 * ranks if up else NEUTRAL - 10 * ranks
        return frame

    def example(self, frame, context):
        return self.ranked(frame, False)

    def counterexample(self, frame, context):
        return self.ranked(frame, True)


class Within(Check):
    """``a`` and ``b`` differ by at most a tolerance in every (or most) unit."""

    kind = "within"

    def __init__(self, spec):
        super().__init__(spec)
        self.a, self.b = self.spec["a"], self.spec["b"]
        self.tolerance = self.spec.get("tolerance", 0.0)

    def tolerance_in(self, rows: pd.DataFrame, metric: str) -> tuple[float | None, str]:
        if not isinstance(self.tolerance, Mapping):
            return float(self.tolerance), format_value(float(self.tolerance), metric)
        spread = select(rows, self.tolerance["std_of"])["std"].dropna()
        if spread.empty:
            return None, ""
        times = float(self.tolerance.get("times", 1.0))
        value = times * float(spread.max())
        return value, f"{times:g} × std of {name_of(self.tolerance['std_of'])} = {format_value(value, metric)}"

    def judge(self, frame, context):
        results, missing_spread = [], False
        for metric in self.metrics:
            rows = self.rows(frame, metric)
            tolerance, said = self.tolerance_in(rows, metric)
            if tolerance is None:
                missing_spread = True
                continue
            pairs, units = Compare({"better": self.a, "than": self.b, "per": self.per}).pairs(rows)
            for rec in pairs.to_dict("records"):
                gap = abs(rec["mean_w"] - rec["mean_l"])
                spread = context.noise(metric, [pair_side(rec, "w")], [pair_side(rec, "l")])
                ok = within(gap, tolerance, spread, context)
                vs = ", ".join(str(rec[c]) for c in rec if c.startswith("vs_")) or name_of(self.b)
                results.append((ok, f"{unit_name(rec, units)}: |{name_of(self.a)} {format_value(rec['mean_w'], metric)}"
                                    f" − {vs} {format_value(rec['mean_l'], metric)}| "
                                    f"{ {True: '≤', False: '>', None: '≈'}[ok]} {said} ({metric})"
                                    + (noise_text(spread, metric) if context.weighs_noise else "")))
        if not results and missing_spread:
            return Verdict(None, ["no spread over seeds to judge against (one seed, or none published)"])
        return verdict_of(results, self.most, f"no {name_of(self.a)} beside {name_of(self.b)}")

    def spread(self, frame):
        """One unit of standard deviation on the rows a ``std_of`` tolerance reads."""
        if isinstance(self.tolerance, Mapping):
            for metric in self.metrics:
                frame.loc[self.picked(frame, metric, self.tolerance["std_of"]), "std"] = 1.0
        return frame

    def example(self, frame, context):
        """``a`` and ``b`` take one value (the largest of ``a``'s)."""
        frame = self.spread(frame.copy())
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            if len(a):
                frame.loc[a.union(b), "mean"] = frame.loc[a, "mean"].max()
        return frame

    def counterexample(self, frame, context):
        """``a`` far from ``b``: ten tolerances and ten units away."""
        frame = self.spread(frame.copy())
        tolerance = float(self.tolerance) if not isinstance(self.tolerance, Mapping) else \
            float(self.tolerance.get("times", 1.0))
        for metric in self.metrics:
            a, b = self.picked(frame, metric, self.a), self.picked(frame, metric, self.b)
            if len(b):
                frame.loc[a, "mean"] = frame.loc[b, "mean"].max() + 10 * abs(tolerance) + 10
        return frame


def python_check(spec: Mapping[str, Any]) -> Check:
    """The Check class ``module:Class`` of :mod:`rnnrepro.report.papers`, built with ``params``."""
    module_name, _, class_name = spec["function"].partition(":")
    module = importlib.import_module(f"rnnrepro.report.papers.{module_name}")
    cls = getattr(module, class_name)
    return cls({**(spec.get("params") or {}), **{k: v for k, v in spec.items() if k not in ("kind", "function", "params")}})


class AllOf(Check):
    """Several checks of one claim (``check:`` given as a list): it holds when each holds."""

    kind = ""

    def __init__(self, specs: Sequence[Mapping[str, Any]]):
        super().__init__({})
        self.parts = [build_check(spec) for spec in specs]

    def judge(self, frame, context):
        verdicts = [part.judge(frame, context) for part in self.parts]
        details = [d for v in verdicts for d in v.details]
        if any(v.holds is False for v in verdicts):
            return Verdict(False, details)
        undecided = [v for v in verdicts if v.holds is None]
        if undecided:  # inconclusive when a part is, cannot be judged when a part has no numbers
            reasons = {v.open for v in undecided}
            return Verdict(None, details, STATUS[None] if STATUS[None] in reasons else undecided[0].open)
        return Verdict(True, details)

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


SCALES = ("ci", "mini", "paper")  # smallest first


def judge_claim(claim: Mapping[str, Any], artifact: str, ours: pd.DataFrame, published: pd.DataFrame,
                published_rows: pd.DataFrame, scale: str,
                items: Mapping[str, SplitItems] | None = None) -> ClaimResult:
    """Both verdicts of one claim: on the published summary (as printed) and on ours (each
    difference weighed against the noise of our runs: over seeds, or by the paired bootstrap
    over the test ``items`` of single runs). A claim whose ``needs_scale`` is above ``scale`` is
    not judged on ours: its verdict says which scale it needs."""
    check = build_check(claim["check"])
    on_published = check.judge(published, Context(published_rows, None)) if len(published) else \
        Verdict(None, ["the paper gives no numbers for it"])
    needs = claim.get("needs_scale")
    if needs and scale in SCALES and SCALES.index(scale) < SCALES.index(needs):
        on_ours = Verdict(None, [f"scale {scale} cannot judge it: {claim.get('reading') or 'see the study'}"],
                          f"needs the {needs} scale")
    else:
        on_ours = check.judge(ours, Context(published_rows, scale, items or {})) if len(ours) else \
            Verdict(None, ["not run"])
    return ClaimResult(artifact, claim["quote"], claim["where"], claim.get("reading", ""), on_published, on_ours,
                       claim.get("basis", ""), claim.get("note", ""))
