"""Layers and macro models: padding invariance, reversal, registry errors, any cell in any model."""
from __future__ import annotations

import pytest
import torch

from rnnrepro.cells import CELLS, build_cell
from rnnrepro.layers import Bidirectional, Recurrent, reverse_padded
from rnnrepro.models import MODELS, build_model
from rnnrepro.tasks import Batch, TaskIO

TOKENS = TaskIO(output_size=5, level="token", input_vocab=11)
GENERIC_MODELS = [m for m in MODELS.names() if not hasattr(MODELS[m], "compatible_tasks")]
SEQUENCE = TaskIO(output_size=1, level="sequence", input_features=3)


def test_reverse_padded_reverses_within_length_and_is_an_involution():
    x = torch.arange(4).view(4, 1, 1).expand(4, 2, 1).clone()
    lengths = torch.tensor([4, 2])
    flipped = reverse_padded(x, lengths)
    assert flipped[:, 0, 0].tolist() == [3, 2, 1, 0]
    assert flipped[:, 1, 0].tolist() == [1, 0, 2, 3]  # padding (positions 2, 3) stays in place
    assert torch.equal(reverse_padded(flipped, lengths), x)


@pytest.mark.parametrize("cell", CELLS.names())
def test_backward_layer_sees_the_future(cell):
    """out[t] of the reverse layer depends on x_t..x_T only."""
    torch.manual_seed(0)
    layer = Recurrent(build_cell(cell, 3, 4), reverse=True)
    x = torch.randn(6, 1, 3)
    changed = x.clone()
    changed[1] += 1.0
    a, _ = layer(x)
    b, _ = layer(changed)
    assert torch.allclose(a[2:], b[2:]) and not torch.allclose(a[:2], b[:2])


@pytest.mark.parametrize("model", GENERIC_MODELS)
@pytest.mark.parametrize("cell", CELLS.names())
def test_outputs_do_not_change_when_padding_is_added_beside(model, cell):
    """A sentence's outputs are the same alone and in a batch with a longer sentence."""
    torch.manual_seed(0)
    net = build_model(model, TOKENS, cell, hidden_size=4, embedding_size=3).eval()
    short = torch.tensor([[3], [4], [5]])
    alone = net(Batch(short, torch.tensor([3]), torch.zeros(0)))
    batch = torch.zeros(7, 2, dtype=torch.long)
    batch[:, 0] = torch.tensor([1, 2, 3, 4, 5, 6, 7])
    batch[:3, 1] = short[:, 0]
    together = net(Batch(batch, torch.tensor([7, 3]), torch.zeros(0)))
    assert torch.allclose(together[:3, 1], alone[:, 0], atol=1e-6)


@pytest.mark.parametrize("model", GENERIC_MODELS)
def test_sequence_level_reads_the_last_real_state(model):
    torch.manual_seed(0)
    net = build_model(model, SEQUENCE, "lstm", hidden_size=4).eval()
    x = torch.randn(4, 1, 3)
    padded = torch.cat([x, torch.randn(3, 1, 3)])
    none = torch.zeros(0)
    assert torch.allclose(net(Batch(x, torch.tensor([4]), none)), net(Batch(padded, torch.tensor([4]), none)), atol=1e-6)
    assert net(Batch(x, torch.tensor([4]), none)).shape == (1, 1)


def test_bidirectional_concatenates_both_directions():
    torch.manual_seed(0)
    forward_cell, backward_cell = build_cell("gru", 3, 2), build_cell("gru", 3, 2)
    layer = Bidirectional(forward_cell, backward_cell)
    x = torch.randn(5, 2, 3)
    out, _ = layer(x)
    assert torch.allclose(out[..., :2], Recurrent(forward_cell)(x)[0])
    assert torch.allclose(out[..., 2:], Recurrent(backward_cell, reverse=True)(x)[0])


def test_brnn_equals_torch_bidirectional_lstm():
    """The BRNN's recurrent body equals torch.nn.LSTM(bidirectional=True) with copied weights."""
    torch.manual_seed(0)
    layer = Bidirectional(build_cell("lstm", 3, 4), build_cell("lstm", 3, 4))
    reference = torch.nn.LSTM(3, 4, bidirectional=True)
    with torch.no_grad():
        for suffix, direction in (("", layer.forward_layer), ("_reverse", layer.backward_layer)):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(reference, f"{name}_l0{suffix}").copy_(getattr(direction.cell, name))
    x = torch.randn(6, 2, 3)
    assert torch.allclose(layer(x)[0], reference(x)[0], atol=1e-6)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(KeyError, match="unknown model 'cnn'; known models: .*basic, .*brnn"):
        build_model("cnn", TOKENS, "lstm")
    with pytest.raises(KeyError, match="unknown cell 'lstmm'; known cells: .*lstm"):
        build_model("basic", TOKENS, "lstmm")
    with pytest.raises(ValueError, match="model 'basic' has no parameter 'layers'; allowed: cell_params, hidden_size"):
        build_model("basic", TOKENS, "lstm", layers=2)
