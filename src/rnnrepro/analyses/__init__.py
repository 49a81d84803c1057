"""Artifacts computed without training runs: numerical checks and timings.

An analysis is a function registered in :data:`ANALYSES`, called with its parameters from
the study file (plus ``seed``) and returning a long-form pandas DataFrame, which the
workflow writes to ``results/analyses/<study>/<artifact>.csv`` for the report.
"""
from __future__ import annotations

from pathlib import Path

from ..registry import Registry

ANALYSES: Registry = Registry("analysis")

from . import builtin  # noqa: E402,F401  (register the analyses)
from . import drnn  # noqa: E402,F401  (drnn paper: Theorem 1, cost)


def run_analysis(params: dict, out_csv: str | Path, seed: int = 0) -> None:
    """Run the analysis ``params["name"]`` with the other params and write its table atomically."""
    from ..atomic import atomic_path

    params = dict(params)
    table = ANALYSES[params.pop("name")](seed=seed, **params)
    with atomic_path(out_csv) as tmp:
        table.to_csv(tmp, index=False)
