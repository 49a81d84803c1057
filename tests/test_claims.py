"""Every claim check of every study can hold and can fail.

For each claim in ``config/studies/*.yaml`` the check builds, over the labels the artifact
really has at the `paper` scale (its runs' grid labels; for an analysis, its table computed at
the `ci` scale; else the published rows), a summary on which it must hold and one on which it
must fail. A check that cannot fail, or one whose selectors pick nothing the grid has (a typo
in a label), fails here.
"""
from __future__ import annotations

import math
import tempfile
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from rnnrepro import tables
from rnnrepro.analyses import ANALYSES, run_analysis
from rnnrepro.claims import Context, build_check
from rnnrepro.claims.kinds import NEUTRAL
from rnnrepro.labels import label_columns, with_text_labels
from rnnrepro.plan.studies import load_study, study_names, study_schema_of

from conftest import REPO, require

STUDIES = REPO / "config" / "studies"
SCHEMA = study_schema_of(REPO / "workflow" / "schemas")


@cache
def study_at(study: str, scale: str):
    """Study ``study`` expanded at ``scale``, loaded once per test process (a paper-scale study
    takes about half a second to expand, and the claims below read each study about 20 times)."""
    return load_study(study, STUDIES, SCHEMA, scale)


@cache
def published_rows(study: str, artifact: str) -> pd.DataFrame:
    """The published rows of ``artifact`` (read once; callers copy before changing them)."""
    return tables.rows_of(tables.load_published(REPO / "reports" / "published", study), artifact)


def claims():
    for study in study_names(STUDIES):
        spec = study_at(study, "paper")
        for name, artifact in spec.artifacts.items():
            for index, _ in enumerate(artifact.claims):
                yield pytest.param(study, name, index, id=f"{study}.{name}[{index}]")


def label_template(study: str, artifact: str) -> pd.DataFrame:
    """The label combinations ``artifact`` has (one row each, as text, seeds and repeats merged)."""
    return labels_of(study, artifact).copy()


@cache
def labels_of(study: str, artifact: str) -> pd.DataFrame:
    """:func:`label_template`, worked out once per artifact (an analysis's table is computed)."""
    paper = study_at(study, "paper").artifacts[artifact]
    published = published_rows(study, artifact)
    published = published[label_columns(published)]
    if paper.runs:
        drop = {"seed", *(paper.spec.get("repeats") or [])}
        rows = [{k: v for k, v in use.labels.items() if k not in drop} for use in paper.runs]
        runs = with_text_labels(pd.DataFrame(rows))
        # published rows the grid lacks (e.g. macro models not run yet), with the grid's constant labels
        constant = {c: runs[c].iloc[0] for c in runs if runs[c].nunique() == 1 and c not in published}
        extra = published.assign(**constant).reindex(columns=runs.columns, fill_value="")
        return pd.concat([runs, extra], ignore_index=True).drop_duplicates().reset_index(drop=True)
    if paper.analysis is not None:
        function = ANALYSES[paper.analysis["name"]]
        if hasattr(function, "output_labels"):  # it reads trained runs or data sets
            labels = function.output_labels(paper.analysis, [use.labels for use in paper.reads])
            return with_text_labels(labels).reset_index(drop=True)
        ci = study_at(study, "ci").artifacts[artifact]
        with tempfile.TemporaryDirectory() as folder:
            run_analysis(ci.analysis, Path(folder) / "analysis.csv")
            table = tables.load_table(Path(folder) / "analysis.csv")
        return table[label_columns(table)].drop_duplicates().reset_index(drop=True)
    return published.drop_duplicates().reset_index(drop=True)


def baselines_named(spec) -> set[str]:
    """The trivial baselines a check's bounds name (``{baseline: mean, ...}``), anywhere in its spec."""
    if isinstance(spec, dict):
        return ({spec["baseline"]} if isinstance(spec.get("baseline"), str) else set()) | \
            {name for value in spec.values() for name in baselines_named(value)}
    return {name for value in spec for name in baselines_named(value)} if isinstance(spec, list) else set()


def neutral_baselines(check, labels: pd.DataFrame, names: set[str]) -> pd.DataFrame:
    """Each named baseline of every metric the check reads (and dev_mse, the level of a curve) at
    the neutral value, over ``labels``."""
    metrics = sorted({*check.metrics, "dev_mse"})
    frames = [labels.assign(baseline=name, metric=metric, value=NEUTRAL) for name in names for metric in metrics]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@pytest.mark.parametrize("study, artifact, index", list(claims()))
def test_claim_check_can_hold_and_can_fail(study, artifact, index):
    spec = study_at(study, "paper").artifacts[artifact]
    claim = spec.claims[index]
    check = build_check(claim["check"])
    published = published_rows(study, artifact).copy()
    labels = label_template(study, artifact)
    context = Context(published, "paper", baselines=neutral_baselines(check, labels, baselines_named(claim["check"])))
    assert len(labels), "no labels to build data on"
    neutral = check.neutral(labels)
    if spec.analysis is not None and not (spec.runs or spec.reads):  # a pure computation: exact, as StudyData.ours
        neutral = neutral.assign(std=0.0, n=math.inf)
    holds = check.judge(check.example(neutral, context), context)
    assert holds.holds is True, f"{claim['quote'][:60]}…: cannot hold on data built to satisfy it: {holds.details[:5]}"
    fails = check.judge(check.counterexample(neutral, context), context)
    assert fails.holds is False, f"{claim['quote'][:60]}…: does not fail on data built against it: {fails.details[:5]}"


def test_every_claim_quotes_the_paper():
    """Each quote is the paper's own text: its letters and digits appear in the paper in that
    order (text in [brackets], our omissions and insertions, aside)."""
    import re
    import unicodedata

    def words_of(text: str) -> str:
        plain = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
        return re.sub(r"[^a-z0-9]", "", plain)

    for study in study_names(STUDIES):
        spec = study_at(study, "paper")
        paper = require(REPO.parent / "shared" / "papers" / f"{spec.paper}.txt", "the papers beside the repository")
        # page numbers of the PDF stand on lines of their own, inside sentences that cross pages
        # ... and formulas are LaTeX (T \geq 60 for T ≥ 60): commands are left out like symbols
        text = words_of(re.sub(r"\\[A-Za-z]+", "", re.sub(r"(?m)^\s*\d+\s*$", "", paper.read_text())))
        for name, artifact in spec.artifacts.items():
            for claim in artifact.claims:
                for piece in re.split(r"\[[^\]]*\]", claim["quote"]):
                    words = words_of(piece)
                    assert words in text, f"{study}.{name}: not in the paper: {piece[:80]!r}"


# -- coverage by labels, over every claim of every study ---------------------------------------------
def compared(verdict) -> set:
    """The comparisons a verdict made (its parts' keys and the keys of what each part joins)."""
    return {key for part in verdict.parts for key in part.comparisons}


def tree_quantifiers(decision) -> set:
    return {decision.quantifier} | {q for part in decision.parts for q in tree_quantifiers(part)}


def claims_with_paper_units():
    """The claims whose published numbers name units the check compares (the others are statements,
    constants or plots: there is no unit of the paper's to cover)."""
    for param in claims():
        study, artifact, index = param.values
        rows = published_rows(study, artifact).copy()
        if rows.empty or not label_columns(rows):
            continue
        check = build_check(study_at(study, "paper").artifacts[artifact].claims[index]["check"])
        printed = check.judge(tables.published_summary(rows, artifact), Context(rows, None))
        if any(part.key is not None for part in printed.parts):
            yield param


def test_most_claims_with_published_numbers_have_units_to_cover():
    """The property below covers the claims judged on tables, not a handful."""
    assert len(list(claims_with_paper_units())) >= 60


@pytest.mark.parametrize("study, artifact, index", list(claims_with_paper_units()))
def test_coverage_by_labels(study, artifact, index):
    """On a summary built from the paper's own units (the published table's labels, values made by
    the check's :meth:`example`, with seeds), ours is covered unit for unit: removing any one of our
    units (a row of labels: a unit, an opponent, a metric's row) never leaves "holds" where the
    sentence quantifies over all of them, and a label the published rows lack, added to ours,
    changes nothing. A row whose removal leaves the comparisons as they were is one the claim does
    not read (e.g. the published constant of a threshold)."""
    from rnnrepro.claims.combine import MOST, SOME
    from rnnrepro.claims.judge import judge_pair

    spec = study_at(study, "paper").artifacts[artifact]
    check = build_check(spec.claims[index]["check"])
    rows = published_rows(study, artifact).copy()
    labels = rows[label_columns(rows)].drop_duplicates().reset_index(drop=True)
    on_paper, context = Context(rows, None), Context(rows, "paper")
    ours = check.example(check.neutral(labels), context)
    paper = ours.drop(columns=["std", "n"])
    _, whole = judge_pair(check, paper, ours, on_paper, context)
    if whole.holds is not True:
        pytest.skip(f"the example built on the paper's units does not hold on ours: {whole.status}")
    lenient = bool(whole.decision is not None and tree_quantifiers(whole.decision) & {MOST, SOME})
    keys = label_columns(ours)
    units = ours[keys].drop_duplicates()
    for _, unit in units.iloc[:: max(1, len(units) // 12)].iterrows():
        left = ours[~(ours[keys] == unit[keys]).all(axis=1)]
        if left.empty:
            continue
        _, fewer = judge_pair(check, paper, left, on_paper, context)
        unread = compared(fewer) == compared(whole)  # a row the claim does not read (e.g. a published constant)
        assert fewer.holds is not True or unread or lenient, \
            f"holds without {dict(unit)}: {fewer.status}: {fewer.details[:3]}"
    _, extra = judge_pair(check, paper, ours.assign(our_own_label="x"), on_paper, context)
    assert extra.status == whole.status, extra.details[:3]
