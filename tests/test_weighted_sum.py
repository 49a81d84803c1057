"""The memory as an element-wise weighted sum (wsum eq. 8; elstm eqs. 19, 22, 26-27)."""
from __future__ import annotations

import pytest
import torch

from rnnrepro.cells import CELLS, build_cell
from rnnrepro.cells.weighted_sum import memory_terms, weighted_sum

T, B, M, N = 6, 2, 3, 4
DOUBLE = torch.float64


def has_gated_memory(name: str) -> bool:
    """Whether a cell has a forget-gated memory (the SRN and LSTM−GATES have none, and say so)."""
    cell = build_cell(name, M, N, dtype=DOUBLE)
    x = torch.zeros(B, M, dtype=DOUBLE)
    try:
        cell.memory_step(cell.project_input(x), cell.initial_state(B, x))
    except TypeError:
        return False
    return True


GATED = sorted(name for name in CELLS.names() if has_gated_memory(name))


def trained_like(name: str, **params):
    """A float64 cell with parameters moved off their initial values (ELSTM scales ≠ 1)."""
    torch.manual_seed(0)
    cell = build_cell(name, M, N, dtype=DOUBLE, **params)
    with torch.no_grad():
        for p in cell.parameters():
            p.add_(0.5 * torch.randn_like(p))
    return cell


def sequence(seed: int = 1) -> torch.Tensor:
    torch.manual_seed(seed)
    return torch.randn(T, B, M, dtype=DOUBLE)


@pytest.mark.parametrize("name", GATED)
def test_memory_is_the_weighted_sum_of_contents(name):
    """c_t = Σ_j w_j^t ⊙ c̃_j from c_0 = 0, with the cell's own final memory as check."""
    cell = trained_like(name, **({"period": 4} if "elstm" in name else {}))
    x = sequence()
    terms = memory_terms(cell, x)
    summed = weighted_sum(terms)
    torch.testing.assert_close(summed.memory(), terms.memory, atol=1e-12, rtol=1e-12)
    _, state = cell.sequence(cell.project_input(x), cell.initial_state(B, x))
    torch.testing.assert_close(summed.memory()[-1], state[-1], atol=1e-12, rtol=1e-12)


def test_lstm_weights_are_input_gate_times_later_forget_gates():
    """wsum eq. 8: w_j^t = i_j ⊙ Π_{k=j+1..t} f_k, computed here from the gate equations."""
    cell = trained_like("lstm")
    x = sequence()
    xp = cell.project_input(x)
    h, c = cell.initial_state(B, x)
    gates_i, gates_f = [], []
    for t in range(T):
        pre = xp[t] + h @ cell.weight_hh.T  # project_input holds b_ih + b_hh
        gates_i.append(torch.sigmoid(pre[:, :N]))
        gates_f.append(torch.sigmoid(pre[:, N:2 * N]))
        h, (_, c) = cell.step(xp[t], (h, c))
    weights = weighted_sum(memory_terms(cell, x)).weights
    for t in range(T):
        for j in range(T):
            expected = gates_i[j] * torch.prod(torch.stack(gates_f[j + 1:t + 1] or [torch.ones_like(c)]), 0)
            torch.testing.assert_close(weights[t, j], expected if j <= t else torch.zeros_like(c))


def test_elstm_response_carries_the_scale():
    """elstm eq. 27: mr_k = s_k ⊙ Π_{j=k+1..T} f_j ⊙ i_k ⊙ tanh(W_in I_k), and Σ_k mr_k = c_T."""
    cell = trained_like("elstm", period=4)
    x = sequence()
    terms = memory_terms(cell, x)
    summed = weighted_sum(terms)
    gates_i = terms.write / torch.stack([cell.scaling[t % 4].expand(B, N) for t in range(T)])
    for k in range(T):
        expected = (cell.scaling[k % 4] * torch.prod(terms.forget[k + 1:], 0) * gates_i[k] * terms.content[k])
        torch.testing.assert_close(summed.response()[k], expected)
    torch.testing.assert_close(summed.response().sum(0), terms.memory[-1], atol=1e-12, rtol=1e-12)


def test_simplified_gru_weights_are_its_closed_form():
    """elstm eq. 19: h_t = Σ_k [Π_{j=k+1..t} z_j] (1 - z_k) h̃_k."""
    cell = trained_like("sgru")
    x = sequence()
    terms = memory_terms(cell, x)
    z = terms.forget
    weights = weighted_sum(terms).weights
    for t in range(T):
        for k in range(t + 1):
            torch.testing.assert_close(weights[t, k], torch.prod(z[k + 1:t + 1], 0) * (1 - z[k]))


def test_padding_neither_writes_nor_forgets():
    """Padded steps carry the memory: their weights are 0 and earlier weights stay unchanged."""
    cell = trained_like("lstm")
    x = sequence()
    lengths = torch.tensor([T, 3])
    summed = weighted_sum(memory_terms(cell, x, lengths))
    assert torch.all(summed.weights[:, 3:, 1] == 0)
    for t in range(3, T):
        torch.testing.assert_close(summed.weights[t, :, 1], summed.weights[2, :, 1])
    _, (_, c) = cell.sequence(cell.project_input(x), cell.initial_state(B, x),
                              (torch.arange(T)[:, None] < lengths[None]).unsqueeze(2))
    torch.testing.assert_close(summed.memory()[-1], c, atol=1e-12, rtol=1e-12)


def test_initial_memory_enters_through_the_product_of_forget_gates():
    cell = trained_like("pru")
    x = sequence()
    torch.manual_seed(3)
    state = (torch.randn(B, N, dtype=DOUBLE), torch.randn(B, N, dtype=DOUBLE))
    terms = memory_terms(cell, x, state=state)
    summed = weighted_sum(terms, initial=state[1])
    torch.testing.assert_close(summed.memory(), terms.memory, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("name", ["srn", "lstm_minus_gates"])  # by their equations, no forget gate
def test_cells_without_a_forget_gate_have_no_weighted_sum(name):
    assert name not in GATED
    cell = build_cell(name, M, N)
    with pytest.raises(TypeError, match="no gated memory"):
        memory_terms(cell, torch.randn(T, B, M))
