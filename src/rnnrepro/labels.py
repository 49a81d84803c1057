"""Label values and their display order: the floor every table, check and report stands on.

A long-form table has label columns (``model``, ``cell``, grid axes such as ``T``), then
``metric`` and ``value``. Labels are compared as text (:func:`label_text`: ``5`` and ``5.0``
are ``"5"``, booleans ``"true"``/``"false"``, a missing label ``""``), so our run table, the
published CSVs and the selectors of a study's claims meet on the same values. Models, cells and
metrics are shown in the papers' order (:data:`MODEL_ORDER`, :data:`CELL_ORDER`,
:data:`METRIC_ORDER`; :func:`sort_rows`), other labels naturally (2 < 10, :func:`natural_key`).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

#: Display order of macro models and cells (unknown names go last, alphabetically).
MODEL_ORDER: tuple[str, ...] = ("basic", "brnn", "seq2seq", "seq2seq_attn", "dbrnn", "stacked", "delayed",
                                "biaffine", "char_word", "attn_encdec")
CELL_ORDER: tuple[str, ...] = ("srn", "lstm", "gru", "elstm", "elstm_ix", "lstm_plus", "pru", "pru_plus",
                               "lstm_minus_gates", "lstm_minus_srnn", "lstm_minus_srnn_out")
#: How the papers write the cells they name (a cell not here shows under its registered name).
CELL_NAMES: dict[str, str] = {"srn": "SRN", "lstm": "LSTM", "gru": "GRU", "lstm_plus": "LSTM+", "pru": "PRU",
                              "pru_plus": "PRU+", "lstm_minus_gates": "− GATES", "lstm_minus_srnn": "− S-RNN",
                              "lstm_minus_srnn_out": "− S-RNN − OUT"}
#: Display order of metrics (others follow, alphabetically).
METRIC_ORDER: tuple[str, ...] = ("test_accuracy", "dev_accuracy", "test_uas", "test_las", "dev_uas", "dev_las",
                                 "test_perplexity", "dev_perplexity", "valid_nll", "test_nll", "nll_gap",
                                 "test_bleu", "dev_bleu", "test_mse", "dev_mse")
#: Columns that are never labels.
NOT_LABELS: frozenset[str] = frozenset({"study", "artifact", "scale", "run", "seed", "metric", "value", "mean",
                                        "std", "n", "min", "max", "source", "note", "step", "epoch", "published",
                                        "published_std", "difference"})


def cell_name(cell: str) -> str:
    """The paper's name of ``cell`` (:data:`CELL_NAMES`), else its registered name."""
    return CELL_NAMES.get(cell, cell)


def label_int(text: Any) -> int:
    """A numeric label as an integer (``"5"``, ``"5.0"``, ``5``); a missing label (``""``, None) is 0."""
    return int(float(text)) if text not in ("", None) else 0


def natural_key(value: Any) -> tuple:
    """Sort key that puts numbers (also as text: "5" < "10") before other text."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def ordered(values: Iterable[Any], order: Sequence[str]) -> list[Any]:
    """``values`` (deduplicated) by their position in ``order``; unknown ones last, sorted."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(set(values), key=lambda v: (rank.get(v, len(rank)), natural_key(v)))


def label_text(value: Any) -> str:
    """A label value as text: ``""`` when missing, ``"5"`` for 5 and 5.0, ``"true"`` for True."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:g}"
    text = str(value)
    return {"True": "true", "False": "false", "nan": "", "<NA>": ""}.get(text, text)


def label_columns(frame: pd.DataFrame) -> list[str]:
    """Label columns of ``frame`` that hold at least one value."""
    return [c for c in frame.columns
            if c not in NOT_LABELS and not str(c).startswith("_") and (frame[c] != "").any()]


def with_text_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every label column as text (see :func:`label_text`)."""
    frame = frame.copy()
    for column in frame.columns:
        if column not in NOT_LABELS:
            frame[column] = [label_text(v) for v in frame[column]]
    return frame


def numeric(values: pd.Series) -> list[Any]:
    """Label text back to numbers where it is a number (for axes and trends)."""
    return [float(v) if natural_key(v)[0] == 0 else v for v in values]


def sort_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Models and cells in the papers' order, other labels naturally (2 < 10), then metrics."""
    if frame.empty:
        return frame.reset_index(drop=True)
    keys = []
    frame = frame.copy()
    for column in label_columns(frame) + (["metric"] if "metric" in frame else []):
        order = {"model": MODEL_ORDER, "cell": CELL_ORDER, "metric": METRIC_ORDER}.get(column, ())
        ranks = {v: i for i, v in enumerate(ordered(frame[column], order))}
        frame[f"_{column}"] = frame[column].map(ranks)
        keys.append(f"_{column}")
    return frame.sort_values(keys, kind="stable").drop(columns=keys).reset_index(drop=True)
