"""Analyses every study can use."""
from __future__ import annotations

import pandas as pd

from . import ANALYSES


@ANALYSES.register("parameter_count")
def parameter_count(cells: list, input_size: int = 512, hidden_size: int = 512, seed: int = 0) -> pd.DataFrame:
    """Parameters of each cell with the given sizes, counted in our modules (elstm Table 1)."""
    from ..cells import build_cell

    rows = []
    for name in cells:
        cell = build_cell(name, input_size, hidden_size)
        rows.append({"cell": name, "input_size": input_size, "hidden_size": hidden_size,
                     "metric": "params", "value": sum(p.numel() for p in cell.parameters())})
    return pd.DataFrame(rows)
