"""An analysis artifact whose rows are another's (``analysis_from`` in the study file).

Two artifacts may run the same analysis on nested sets of runs: pru's Table 4 decodes the
En→De models that Table 3 decodes in both directions, with the same beams, splits and batch
size. Decoding is per run (a run's BLEU does not depend on the other runs decoded beside it), so
Table 4's rows are exactly Table 3's rows of the runs Table 4 reads. The study file says so,

    table4:
      analysis: {name: translation_bleu, beams: [1, 12], splits: [dev, test], batch_size: 50}
      analysis_from: table3
      reads: [{artifact: fig4, where: {direction: en-de}}]

and the workflow copies those rows instead of decoding again. The artifact still declares its
analysis (its metrics and labels are that analysis's, for the checks of its claims);
:func:`rnnrepro.plan.studies.check_analysis_from` requires the same analysis parameters and runs
read among the source's, so the copy is what the analysis would compute.

Light on purpose (pandas only): the job that copies rows starts no torch.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

#: Columns of an analysis table that are not labels.
VALUE_COLUMNS = ("metric", "value")


def rows_for_runs(source: str | Path, runs: list[dict]) -> pd.DataFrame:
    """The rows of the analysis table ``source`` that belong to ``runs`` (the workflow's
    description of the runs read: ``labels`` each): a row belongs to a run when each of its label
    columns that the run has among its labels holds the run's value. Read and returned as text,
    so the copied rows are the source's to the character. A run no row belongs to is an error
    naming it (the source table was computed without it)."""
    table = pd.read_csv(source, dtype=str, keep_default_na=False)
    label_columns = [column for column in table.columns if column not in VALUE_COLUMNS]
    keep = pd.Series(False, index=table.index)
    for run in runs:
        shared = {key: str(value) for key, value in run["labels"].items() if key in label_columns}
        mine = pd.Series(True, index=table.index)
        for key, value in shared.items():
            mine &= table[key] == value
        if not shared or not mine.any():
            raise ValueError(f"{source}: no row for the run {run.get('folder', '?')} (labels {run['labels']}); "
                             "its analysis was computed without that run")
        keep |= mine
    return table[keep]


def write_rows_for_runs(source: str | Path, runs: list[dict], out_csv: str | Path) -> None:
    """:func:`rows_for_runs` written to ``out_csv`` atomically."""
    from ..atomic import atomic_path

    rows = rows_for_runs(source, runs)
    with atomic_path(out_csv) as tmp:
        rows.to_csv(tmp, index=False)
