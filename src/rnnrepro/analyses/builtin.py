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

    Columns: cell, M, N, T_s, ours, formula, paper_formula_value, equal. Cells are built with
    one bias per gate (``recurrent_bias=False``) as the paper counts them; ELSTM with
    ``period`` = T_s scaling vectors.
    """
    from ..cells import build_cell

    rows = []
    for name in cells:
        extra = {"period": period} if name.startswith("elstm") else {}
        cell = build_cell(name, input_size, hidden_size, recurrent_bias=False, **extra)
        ours = sum(p.numel() for p in cell.parameters())
        formula, value = TABLE1_FORMULAS.get(name, ("", None))
        expected = value(input_size, hidden_size, period) if value else None
        rows.append({"cell": name, "M": input_size, "N": hidden_size, "T_s": period, "ours": ours,
                     "formula": formula, "paper_formula_value": expected,
                     "equal": expected is not None and ours == expected})
    return pd.DataFrame(rows)
