"""Stacked, delayed, seq2seq (with and without attention) and DBRNN macro models."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from rnnrepro.cells import CELLS
from rnnrepro.layers import delay_inputs
from rnnrepro.models import build_model
from rnnrepro.models.dbrnn import DependentBRNN
from rnnrepro.models.delayed import DelayedRNN, FlattenedRNN
from rnnrepro.models.seq2seq import Seq2Seq, Seq2SeqAttention
from rnnrepro.models.stacked import StackedRNN
from rnnrepro.tasks import Batch, Predictions, TaskIO
from rnnrepro.tasks.base import IGNORE_INDEX

TOKENS = TaskIO(output_size=5, level="token", input_vocab=11)
VALUES = TaskIO(output_size=1, level="sequence", input_features=2)
SMALL = {"hidden_size": 4, "embedding_size": 3}
OURS = {"stacked": StackedRNN, "delayed": DelayedRNN, "flattened": FlattenedRNN,
        "seq2seq": Seq2Seq, "seq2seq_attn": Seq2SeqAttention, "dbrnn": DependentBRNN}


def token_batch(steps=6, lengths=(6, 4, 2), seed=0, targets=None) -> Batch:
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randint(1, TOKENS.input_vocab, (steps, len(lengths)), generator=generator)
    lengths = torch.tensor(lengths)
    padding = torch.arange(steps).unsqueeze(1) >= lengths
    inputs[padding] = 0
    if targets is None:
        targets = torch.randint(0, TOKENS.output_size, (steps, len(lengths)), generator=generator)
        targets[padding] = IGNORE_INDEX
    return Batch(inputs, lengths, targets)


def main(output):
    return output.main if isinstance(output, Predictions) else output


# -- registry -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(OURS))
def test_each_model_is_reachable_by_name(name):
    assert isinstance(build_model(name, TOKENS, "lstm", **SMALL), OURS[name])


def test_unknown_model_and_parameter_list_the_known_ones():
    with pytest.raises(KeyError, match="known models: .*dbrnn, delayed, flattened, .*seq2seq, seq2seq_attn, stacked"):
        build_model("drnn", TOKENS, "lstm")
    with pytest.raises(ValueError, match="no parameter 'layers'; allowed: .*delay"):
        build_model("delayed", TOKENS, "lstm", layers=2)
    with pytest.raises(ValueError, match="no parameter 'delay'; allowed: .*layers, bidirectional"):
        build_model("stacked", TOKENS, "lstm", delay=2)


# -- shapes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("name", sorted(OURS))
def test_output_shapes(name, training):
    torch.manual_seed(0)
    net = build_model(name, TOKENS, "gru", **SMALL).train(training)
    batch = token_batch()
    assert main(net(batch)).shape == (6, 3, TOKENS.output_size)
    net = build_model(name, VALUES, "gru", **SMALL).train(training)
    values = Batch(torch.randn(5, 3, 2), torch.tensor([5, 3, 1]), torch.rand(3))
    assert main(net(values)).shape == (3, 1)


# -- stacked --------------------------------------------------------------------------------
def test_stacked_lstm_equals_torch_multilayer_lstm():
    torch.manual_seed(0)
    io = TaskIO(output_size=2, level="token", input_features=3)
    net = build_model("stacked", io, "lstm", hidden_size=4, layers=3)
    reference = nn.LSTM(3, 4, num_layers=3)
    with torch.no_grad():
        for i, layer in enumerate(net.rnn.layers):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(reference, f"{name}_l{i}").copy_(getattr(layer.cell, name))
    x = torch.randn(5, 2, 3)
    out, _ = net.rnn(x)
    assert torch.allclose(out, reference(x)[0], atol=1e-6)


@pytest.mark.parametrize("level", ["token", "sequence"])
def test_bidirectional_stack_feeds_both_directions_upward(level):
    torch.manual_seed(0)
    io = TaskIO(output_size=2, level=level, input_vocab=11)
    net = build_model("stacked", io, "srn", layers=3, bidirectional=True, **SMALL)
    assert [layer.forward_layer.cell.input_size for layer in net.rnn.layers] == [3, 8, 8]
    batch = token_batch()
    changed = token_batch()
    changed.inputs[-1, 0] = 1 + changed.inputs[-1, 0] % 10  # the last token of sequence 0
    a, b = net(batch), net(changed)
    first = a[0, 0] if level == "token" else a[0]
    assert not torch.allclose(first, b[0, 0] if level == "token" else b[0])  # the backward layers see it


# -- delayed --------------------------------------------------------------------------------
@pytest.mark.parametrize("level", ["token", "sequence"])
@pytest.mark.parametrize("cell", CELLS.names())
def test_delay_zero_is_the_basic_rnn(cell, level):
    torch.manual_seed(0)
    io = TaskIO(output_size=5, level=level, input_vocab=11)
    basic = build_model("basic", io, cell, **SMALL)
    delayed = build_model("delayed", io, cell, delay=0, **SMALL)
    reference = basic.state_dict()
    assert {k: v.shape for k, v in delayed.state_dict().items()} == {k: v.shape for k, v in reference.items()}
    delayed.load_state_dict(reference)
    batch = token_batch()
    assert torch.equal(delayed(batch), basic(batch))


def test_delayed_output_at_t_sees_inputs_up_to_t_plus_d():
    torch.manual_seed(0)
    io = TaskIO(output_size=2, level="token", input_features=3)
    net = build_model("delayed", io, "lstm", hidden_size=4, delay=2)
    x = torch.randn(8, 1, 3)
    changed = x.clone()
    changed[5] += 1.0
    a = net(Batch(x, torch.tensor([8]), torch.zeros(0)))
    b = net(Batch(changed, torch.tensor([8]), torch.zeros(0)))
    assert torch.allclose(a[:3], b[:3]) and not torch.allclose(a[3], b[3])  # 3 + d = 5


def test_delayed_pads_each_sequence_with_zeros_after_its_own_end():
    x = torch.ones(4, 2, 1)
    padded, lengths = delay_inputs(x, torch.tensor([4, 2]), 2)
    assert lengths.tolist() == [6, 4]
    assert padded[:, 0, 0].tolist() == [1, 1, 1, 1, 0, 0]
    assert padded[:, 1, 0].tolist() == [1, 1, 0, 0, 0, 0]


# -- seq2seq --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["seq2seq", "seq2seq_attn"])
def test_seq2seq_eval_never_reads_the_targets(name):
    torch.manual_seed(0)
    net = build_model(name, TOKENS, "lstm", **SMALL)
    garbage = token_batch(targets=torch.randint(-1000, 1000, (6, 3)))
    clean = token_batch()
    net.eval()
    assert torch.equal(net(garbage), net(clean))
    net.train()  # in training the decoder reads the targets (teacher forcing)
    assert not torch.allclose(net(clean), net(token_batch(targets=clean.targets.roll(1, 0))))


@pytest.mark.parametrize("cell", ["lstm", "gru", "elstm"])
@pytest.mark.parametrize("name", ["seq2seq", "seq2seq_attn"])
def test_teacher_forcing_on_the_greedy_output_reproduces_it(name, cell):
    """Training mode fed the eval-mode predictions as targets gives the eval-mode scores:
    the fast teacher-forced loop and the greedy step loop compute the same decoder."""
    torch.manual_seed(0)
    net = build_model(name, TOKENS, cell, **SMALL)
    batch = token_batch()
    greedy = net.eval()(batch)
    forced = net.train()(token_batch(targets=greedy.argmax(-1)))
    assert torch.allclose(forced, greedy, atol=1e-6)


@pytest.mark.parametrize("name", ["seq2seq", "seq2seq_attn"])
def test_seq2seq_emits_one_output_per_target_position(name):
    torch.manual_seed(0)
    net = build_model(name, TOKENS, "gru", **SMALL)
    batch = token_batch()
    batch.extra["target_lengths"] = torch.tensor([9, 8, 4])  # e.g. the elstm paper's DP, T' = 2T
    batch.targets = torch.randint(0, 5, (9, 3))
    assert net.train()(batch).shape == (9, 3, 5)
    assert net.eval()(batch).shape == (9, 3, 5)


def test_attention_ignores_padded_encoder_positions():
    torch.manual_seed(0)
    net = build_model("seq2seq_attn", TOKENS, "lstm", **SMALL).eval()
    batch = token_batch()
    noisy = token_batch()
    noisy.inputs[4:, 1] = 7  # padding of sequence 1 (length 4) replaced by a real token id
    assert torch.allclose(net(batch)[:, 1], net(noisy)[:, 1])


# -- DBRNN ----------------------------------------------------------------------------------
def parameter_groups(net: DependentBRNN) -> dict[str, list[nn.Parameter]]:
    return {"lower": [*net.encoder.parameters(), *net.lower.parameters()],
            "upper_forward": [*net.upper_forward.parameters(), *net.head_forward.parameters()],
            "upper_backward": [*net.upper_backward.parameters(), *net.head_backward.parameters()],
            "pooling": list(net.pooling.parameters())}


def reached(parameters: list[nn.Parameter]) -> list[bool]:
    return [p.grad is not None and bool(p.grad.abs().sum() > 0) for p in parameters]


ROUTES = {  # elstm Sec. 4.2: which parameters each error is backpropagated to
    "e_f": {"lower", "upper_forward"},
    "e_b": {"lower", "upper_backward"},
    "e": {"lower", "upper_forward", "upper_backward", "pooling"},
}


@pytest.mark.parametrize("cell", CELLS.names())
def test_dbrnn_errors_reach_exactly_the_parameters_the_paper_says(cell):
    torch.manual_seed(0)
    net = build_model("dbrnn", TOKENS, cell, **SMALL).train()
    batch = token_batch()
    for error, expected in ROUTES.items():
        net.zero_grad(set_to_none=True)
        output = net(batch)
        prediction = {"e": output.main, "e_f": output.auxiliary[0], "e_b": output.auxiliary[1]}[error]
        nn.functional.cross_entropy(prediction.flatten(0, 1), batch.targets.flatten(),
                                    ignore_index=IGNORE_INDEX).backward()
        for group, parameters in parameter_groups(net).items():
            flags = reached(parameters)
            if group in expected:
                assert all(flags), f"{error} must reach every parameter of {group}"
            else:
                assert not any(flags), f"{error} must not reach {group}"


def test_dbrnn_pools_the_two_distributions_per_class():
    torch.manual_seed(0)
    net = build_model("dbrnn", TOKENS, "lstm", **SMALL)
    with torch.no_grad():
        net.pooling.weight_forward.copy_(torch.log(torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5])))
    output = net.predictions(token_batch())
    forward, backward = (p.softmax(-1) for p in output.auxiliary)
    pooled = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5]) * forward + 0.5 * backward  # eq. 34, W_k per class
    assert torch.allclose(output.main.exp(), pooled, atol=1e-6)
    assert torch.equal(net.eval()(token_batch()), output.main)  # eval mode: the combined prediction


def test_dbrnn_combines_values_linearly_for_regression():
    torch.manual_seed(0)
    net = build_model("dbrnn", VALUES, "gru", **SMALL).train()
    output = net(Batch(torch.randn(5, 2, 2), torch.tensor([5, 3]), torch.rand(2)))
    forward, backward = output.auxiliary
    assert torch.allclose(output.main, 0.5 * forward + 0.5 * backward)
