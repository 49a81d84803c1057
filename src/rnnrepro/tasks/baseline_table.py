"""The trivial baselines of a study's tasks, as one table: ``tables/<study>/baselines.csv``.

For every run of a study (an artifact and its labels), what a model that learns nothing or next
to nothing scores on the same splits as the run (:func:`~rnnrepro.tasks.baselines.baselines_of`),
each distinct task (its parameters and prepared data) computed once: one row per artifact, the
run's labels (its seed left out), baseline, metric and value. The claims engine reads it for
each artifact's regime (:mod:`rnnrepro.claims.regime`) and for bounds set by a baseline; the
reports show it beside ours and the paper's.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomic import atomic_path

if TYPE_CHECKING:  # pandas is imported where a table is made: this folder's modules are all
    import pandas as pd  # imported with any task, and a training process has no table to make

log = logging.getLogger(__name__)

COLUMNS = ("artifact", "baseline", "metric", "value")


def study_baselines(uses: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The baselines of every use (``artifact``, ``labels``, ``task`` (its parameters with
    ``name``), ``data`` (the prepared file, None for a synthetic task)), as long-form rows."""
    import pandas as pd

    from . import build_task
    from .baselines import baselines_of

    computed: dict[str, dict[str, dict[str, float]]] = {}
    rows = []
    for use in uses:
        key = json.dumps([use["task"], use.get("data")], sort_keys=True, default=str)
        if key not in computed:
            params = dict(use["task"])
            name = params.pop("name")
            log.info("baselines of task %s %s", name, params)
            computed[key] = baselines_of(build_task(name, data=use.get("data"), **params))
        labels = {k: v for k, v in use["labels"].items() if k != "seed"}
        rows += [{"artifact": use["artifact"], **labels, "baseline": baseline, "metric": metric, "value": value}
                 for baseline, metrics in computed[key].items() for metric, value in metrics.items()]
    if not rows:
        return pd.DataFrame(columns=list(COLUMNS))
    frame = pd.DataFrame(rows)
    labels = [c for c in frame.columns if c not in COLUMNS]
    return frame[["artifact", *labels, "baseline", "metric", "value"]].drop_duplicates().reset_index(drop=True)


def write_baselines(uses: Iterable[Mapping[str, Any]], out: str | Path) -> None:
    """:func:`study_baselines` written to ``out`` (atomically)."""
    frame = study_baselines(uses)
    with atomic_path(out) as tmp:
        frame.to_csv(tmp, index=False)
