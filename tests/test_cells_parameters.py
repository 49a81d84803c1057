"""Parameter counts against the elstm paper's Table 1 ("Comparison of Parameter Numbers"),
X_t ∈ R^M, h_t ∈ R^N, T scaling vectors (T_s with periodic scales, §3):

    LSTM   4N(M + N + 1)
    GRU    3N(M + N + 1)
    ELSTM  4N(M + N + 1) + N(T + 1)

The paper folds one bias per gate into its weight matrices; torch.nn (and our default) keeps a
second, recurrent bias b_hh per gate, so the Table 1 counts hold with ``recurrent_bias=False``
and the default counts are larger by hh_chunks·N.
"""
from __future__ import annotations

import pytest

from rnnrepro.cells import build_cell

M, N, T_S = 7, 5, 11


def count(cell) -> int:
    return sum(p.numel() for p in cell.parameters())


TABLE_1 = {
    "lstm": (lambda M, N, T: 4 * N * (M + N + 1), {}),
    "gru": (lambda M, N, T: 3 * N * (M + N + 1), {}),
    "elstm": (lambda M, N, T: 4 * N * (M + N + 1) + N * (T + 1), {"period": T_S}),
}


@pytest.mark.parametrize("name", sorted(TABLE_1))
def test_counts_equal_table_1(name):
    formula, params = TABLE_1[name]
    assert count(build_cell(name, M, N, recurrent_bias=False, **params)) == formula(M, N, T_S)


@pytest.mark.parametrize("name", sorted(TABLE_1))
def test_torch_convention_adds_one_recurrent_bias_per_gate(name):
    formula, params = TABLE_1[name]
    cell = build_cell(name, M, N, **params)
    assert count(cell) == formula(M, N, T_S) + cell.hh_chunks * N


def test_counts_of_the_other_cells():
    """The same bookkeeping for the rest of the zoo (one bias per chunk, recurrent_bias=False)."""
    expected = {
        "srn": N * (M + N + 1),
        "sgru": 2 * N * (M + 1),  # elstm eqs. 16-17: W_z, W, no U
        "elstm_ix": 4 * N * (M + 1) + N * (T_S + 1),  # I_t = X_t: no recurrent matrix
        "pru": 4 * N * (M + 1) + 3 * N * N,  # the content has no U (pru eq. 6)
        "pru_plus": 4 * N * (M + 1) + 3 * N * N + N * (N + 1),  # + W_o, b_o (eq. 7)
        "lstm_plus": 4 * N * (M + N + 1) + N * (N + 1),
        "lstm_minus_gates": N * (M + N + 1),  # the S-RNN alone
        "lstm_minus_srnn": 4 * N * M + 3 * N * (N + 1),  # content W_cx x_t: no U, no bias (wsum eq. 9)
        "lstm_minus_srnn_out": 3 * N * M + 2 * N * (N + 1),  # and no output gate (eq. 10)
    }
    periods = {"elstm_ix": {"period": T_S}}
    for name, value in expected.items():
        assert count(build_cell(name, M, N, recurrent_bias=False, **periods.get(name, {}))) == value, name
