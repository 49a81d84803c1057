"""drnn Theorem 1: a k-layer stack equals one flattened cell (eqs. 5-6) read at delay k - 1."""
from __future__ import annotations

import pytest
import torch

from rnnrepro.cells import build_cell
from rnnrepro.layers import (
    FlattenedRecurrent,
    Recurrent,
    Stacked,
    delay_inputs,
    flatten_stack,
    length_mask,
)
from rnnrepro.models import build_model
from rnnrepro.models.delayed import FlattenedRNN
from rnnrepro.tasks import Batch, TaskIO

INPUT, HIDDEN, STEPS = 3, 4, 7
LENGTHS = torch.tensor([7, 3, 5])
ROUNDING = 1e-12  # float64


def random_stack(cell: str, layers: int, **params) -> Stacked:
    cells = [build_cell(cell, INPUT if i == 0 else HIDDEN, HIDDEN, dtype=torch.float64, **params)
             for i in range(layers)]
    with torch.no_grad():  # move ELSTM's scales and cell bias off their neutral start
        for c in cells:
            for name in ("scaling", "bias_c"):
                if getattr(c, name, None) is not None:
                    getattr(c, name).uniform_(0.5, 1.5)
    return Stacked([Recurrent(c) for c in cells])


def real_steps(x):
    return x * length_mask(LENGTHS, x.shape[0])


@pytest.mark.parametrize("layers", [2, 3, 4, 5])
@pytest.mark.parametrize("cell", ["srn", "lstm"])
def test_flattened_output_equals_the_stack_at_delay_k_minus_1(cell, layers):
    torch.manual_seed(layers)
    stack = random_stack(cell, layers)
    flat = flatten_stack(stack.cells())
    x = torch.randn(STEPS, len(LENGTHS), INPUT, dtype=torch.float64)
    expected, _ = stack(x, LENGTHS)
    states, _ = flat(x, LENGTHS)
    assert states.shape == (STEPS + layers - 1, len(LENGTHS), layers * HIDDEN)
    difference = (real_steps(flat.top_outputs(states)) - real_steps(expected)).abs().max()
    assert difference < ROUNDING


@pytest.mark.parametrize("cell", ["srn", "lstm"])
def test_every_block_holds_its_layer_at_delay_i_minus_1(cell):
    """Theorem 1's second claim: ĥ^{i}_{t+i-1} = h^(i)_t for every layer i."""
    torch.manual_seed(1)
    layers = 4
    stack = random_stack(cell, layers)
    flat = flatten_stack(stack.cells())
    x = torch.randn(STEPS, len(LENGTHS), INPUT, dtype=torch.float64)
    states, _ = flat(x, LENGTHS)
    layer_input = x
    for i, layer in enumerate(stack.layers):
        layer_input, _ = layer(layer_input, LENGTHS)
        block = states[i:i + STEPS, :, i * HIDDEN:(i + 1) * HIDDEN]
        assert (real_steps(block) - real_steps(layer_input)).abs().max() < ROUNDING


@pytest.mark.parametrize("cell, params", [("elstm", {"period": 3}), ("lstm_plus", {}),
                                          ("lstm_minus_gates", {})])
def test_other_lstm_family_cells_flatten_too(cell, params):
    """ELSTM's position-dependent scales (period 3 < T) are shifted per block; LSTM+'s W_ff is block-diagonal."""
    torch.manual_seed(2)
    stack = random_stack(cell, 3, **params)
    flat = flatten_stack(stack.cells())
    x = torch.randn(STEPS, len(LENGTHS), INPUT, dtype=torch.float64)
    difference = real_steps(flat.top_outputs(flat(x, LENGTHS)[0]) - stack(x, LENGTHS)[0]).abs().max()
    assert difference < ROUNDING


def test_flattened_weights_have_the_block_structure_of_eq_5():
    torch.manual_seed(0)
    stack = random_stack("srn", 3)
    cell = flatten_stack(stack.cells()).cell
    w_h, w_x = cell.weight_hh.detach(), cell.weight_ih.detach()
    n = HIDDEN
    for i in range(3):
        for j in range(3):
            block = w_h[i * n:(i + 1) * n, j * n:(j + 1) * n]
            if i == j:
                assert torch.equal(block, stack.layers[i].cell.weight_hh)
            elif j == i - 1:
                assert torch.equal(block, stack.layers[i].cell.weight_ih)
            else:
                assert not block.any()
    assert torch.equal(w_x[:n], stack.layers[0].cell.weight_ih) and not w_x[n:].any()


def test_without_the_staggered_start_the_outputs_differ():
    """Lemma 1's initial state matters: run from a zero state, the flattened cell is not the stack."""
    torch.manual_seed(0)
    stack = random_stack("srn", 3)
    flat = flatten_stack(stack.cells())
    x = torch.randn(STEPS, 1, INPUT, dtype=torch.float64)
    padded, _ = delay_inputs(x, None, flat.delay)
    plain, _ = Recurrent(flat.cell)(padded)
    assert (flat.top_outputs(plain) - stack(x)[0]).abs().max() > 1e-3


@pytest.mark.parametrize("level", ["token", "sequence"])
@pytest.mark.parametrize("cell", ["srn", "lstm"])
def test_flattened_model_equals_the_stacked_model(cell, level):
    torch.manual_seed(0)
    io = TaskIO(output_size=2, level=level, input_features=INPUT)
    stacked = build_model("stacked", io, cell, hidden_size=HIDDEN, layers=3).double()
    flattened = FlattenedRNN.from_stacked(stacked)
    batch = Batch(torch.randn(STEPS, len(LENGTHS), INPUT, dtype=torch.float64), LENGTHS, torch.zeros(0))
    a, b = stacked(batch), flattened(batch)
    if level == "token":
        a, b = real_steps(a), real_steps(b)
    assert a.shape == b.shape and (a - b).abs().max() < ROUNDING


def test_registered_flattened_model_starts_as_a_stack():
    torch.manual_seed(0)
    io = TaskIO(output_size=2, level="token", input_features=INPUT)
    model = build_model("flattened", io, "lstm", hidden_size=HIDDEN, layers=3)
    assert model.initialised_from_stack and isinstance(model.rnn, FlattenedRecurrent)
    assert model.rnn.cell.hidden_size == 3 * HIDDEN and model.rnn.delay == 2


@pytest.mark.parametrize("cell", ["gru", "sgru", "pru"])
def test_cells_eq_5_cannot_express_raise_naming_the_cell(cell):
    cells = [build_cell(cell, INPUT, HIDDEN), build_cell(cell, HIDDEN, HIDDEN)]
    with pytest.raises(NotImplementedError, match=type(cells[0]).__name__):
        flatten_stack(cells)
    io = TaskIO(output_size=2, level="token", input_features=INPUT)
    model = build_model("flattened", io, cell, hidden_size=HIDDEN, layers=2)  # same network, own init
    assert not model.initialised_from_stack
    with pytest.raises(NotImplementedError):
        FlattenedRNN.from_stacked(build_model("stacked", io, cell, hidden_size=HIDDEN))


def test_a_bidirectional_stack_cannot_be_flattened():
    io = TaskIO(output_size=2, level="token", input_features=INPUT)
    with pytest.raises(ValueError, match="bidirectional"):
        FlattenedRNN.from_stacked(build_model("stacked", io, "srn", hidden_size=HIDDEN, bidirectional=True))
