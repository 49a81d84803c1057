"""Analyses every study can use."""
from __future__ import annotations

import pandas as pd

from . import ANALYSES

#: The elstm paper's Table 1 ("Comparison of Parameter Numbers"), with x in R^M, h in R^N and
#: T scaling vectors (T_s with the periodic scaling of eq. 24). One bias per gate, as the
#: paper writes W I_t with I_t = [X_t; h_{t-1}; 1]: hence ``recurrent_bias=False`` below.
TABLE1_FORMULAS = {
    "lstm": ("4N(M + N + 1)", lambda M, N, T: 4 * N * (M + N + 1)),
    "gru": ("3N(M + N + 1)", lambda M, N, T: 3 * N * (M + N + 1)),
    "elstm": ("4N(M + N + 1) + N(T + 1)", lambda M, N, T: 4 * N * (M + N + 1) + N * (T + 1)),
}


@ANALYSES.register("parameter_count")
def parameter_count(cells: list, input_size: int = 512, hidden_size: int = 512, period: int = 100,
                    seed: int = 0) -> pd.DataFrame:
    """Parameters counted in our modules beside the elstm paper's Table 1 formula, per cell.

    Long form: columns cell, M, N, T_s, formula, count (``ours``: counted in the module;
    ``paper``: the paper's formula evaluated at M, N, T_s), metric (``params``), value.
    Cells are built with one bias per gate (``recurrent_bias=False``) as the paper counts them;
    ELSTM with ``period`` = T_s scaling vectors.
    """
    from ..cells import build_cell

    rows = []
    for name in cells:
        extra = {"period": period} if name.startswith("elstm") else {}
        cell = build_cell(name, input_size, hidden_size, recurrent_bias=False, **extra)
        ours = sum(p.numel() for p in cell.parameters())
        formula, value = TABLE1_FORMULAS.get(name, ("", None))
        expected = value(input_size, hidden_size, period) if value else None
        labels = {"cell": name, "M": input_size, "N": hidden_size, "T_s": period, "formula": formula}
        rows.append({**labels, "count": "ours", "metric": "params", "value": ours})
        if expected is not None:
            rows.append({**labels, "count": "paper", "metric": "params", "value": expected})
    return pd.DataFrame(rows)


parameter_count.emitted_metrics = frozenset({"params"})


@ANALYSES.register("weight_statistics")
def weight_statistics(runs: list, parameters: list | None = None, seed: int = 0) -> pd.DataFrame:
    """Statistics of the trained weights of the runs it reads: per run and parameter tensor,
    its L2 norm, and for a square matrix the mean of its diagonal (e.g. the PRU+ feed-forward
    W_o, initialised to the identity: the pru paper reports 3.34 after training).

    Long form: the run's labels, ``parameter`` (its name in the model), metric (``norm`` or
    ``diagonal_mean``), value. ``parameters`` keeps only names containing one of its strings.
    """
    rows = []
    for run in runs:
        _, model = run.load()
        for name, tensor in model.state_dict().items():
            if parameters and not any(part in name for part in parameters):
                continue
            labels = {**{k: v for k, v in run.labels.items()}, "parameter": name}
            rows.append({**labels, "metric": "norm", "value": float(tensor.float().norm())})
            if tensor.ndim == 2 and tensor.shape[0] == tensor.shape[1]:
                rows.append({**labels, "metric": "diagonal_mean", "value": float(tensor.diagonal().float().mean())})
    return pd.DataFrame(rows)


weight_statistics.emitted_metrics = frozenset({"norm", "diagonal_mean"})
