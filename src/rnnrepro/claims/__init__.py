"""The papers' claims, judged on a summary (ours, or the published numbers).

A study's YAML quotes each *claim* and says how to *check* it (``claims:`` of an artifact)::

    claims:
      - quote: "For the simple POS tagging task, ELSTM also shows equal or better performance ..."
        where: Sec. 5.2
        check: {kind: compare, metric: test_accuracy, better: {cell: elstm}, than: {cell: [lstm, gru]},
                margin: 0, strict: false}

A check sees a summary: label columns (text), ``metric``, ``mean`` (and ``std``, ``n``). Kinds
(:mod:`.kinds`):

- ``compare``: rows of ``better`` beat rows of ``than`` on each metric by more than ``margin``
  (metric units; ``strict: false`` allows equality; a negative margin is a tolerance), in
  every *unit* (the other labels that vary, e.g. each macro model) or, with ``in: most``, in
  more than half of them (``in: some``: in one); ``grows_along: T`` also asks the advantage to
  grow along a label.
- ``best``: the ``best`` selection is the best of its dimension (``among`` restricts the
  competitors) in every unit.
- ``threshold``: every row is ``below`` (or ``above``) a number, or a published constant
  (``below: "published:baseline_mse"``, or ``{published: params, where: {model: convseq2seq}}``).
- ``trend``: values rise (``direction: increasing``) or fall along a label in every unit: the
  last beyond the first, and each step by more than ``margin`` (negative: no later value more
  than that below an earlier one, so that steps back cannot add up).
- ``within``: ``a`` and ``b`` differ by at most ``tolerance`` (a number, or
  ``{std_of: selector, times: k}``: k times that selection's standard deviation over seeds).
- ``python``: a :class:`Check` subclass of :mod:`rnnrepro.claims.papers` (one module per study),
  registered as ``<study>:<Class>``, for the rare claim that needs code.

``where`` restricts the rows, ``per`` names the unit labels when the default is not right,
``higher_is_better`` overrides the metric's direction, ``statistic`` judges the ``min`` or
``max`` over seeds instead of their mean (e.g. "can a cell fit the data": its best restart),
``noise: seeds`` keeps a claim about cells off the test-item bootstrap, ``significant: true``
marks a sentence about statistical significance. A claim with no data to compare is "cannot be
judged", never "holds".

A *verdict* (:mod:`.verdict`) is a check's outcome on one set of numbers: on the published
numbers as printed; on ours a decision on the 90 % interval of each quantity against the region
where the sentence is true (:mod:`.inference`), under its artifact's one noise policy
(:mod:`.noise`), joined over units as one family with Holm's correction (:mod:`.combine`),
covered unit by unit against the paper's comparisons, and with what would decide it when it stays
open (:mod:`.power`); :func:`judge_claim` gives both. The workflow's ``judge`` rule judges every claim of a study once
(:mod:`.judge_study`, on the study's data: :mod:`.study`); the report only shows the verdicts.

Every check can build data on which it must hold (:meth:`Check.example`) and data on which it
must fail (:meth:`Check.counterexample`) from a frame of labels; the test suite feeds both to
every claim of every study, so a check that cannot fail does not pass the tests.
"""
import importlib

#: The names this package hands on, and the module of each: loaded when first asked for, so that
#: a process reading verdicts (the report) imports :mod:`.verdict` and no check.
EXPORTS = {"Check": ".kinds", "build_check": ".kinds", "judge_claim": ".judge", "Context": ".noise",
           "INCONCLUSIVE": ".verdict", "STATUS": ".verdict", "ClaimResult": ".verdict", "Verdict": ".verdict"}

__all__ = sorted(EXPORTS)


def __getattr__(name: str):
    if name not in EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(EXPORTS[name], __name__), name)
