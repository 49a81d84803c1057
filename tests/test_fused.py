"""torch's fused RNN ops for the cells that are torch's (LSTM, GRU) against our reference loop:
outputs at real steps, final states and every gradient; which cells take the fused op; the
RNNREPRO_FUSED switch. ``RNNREPRO_FUSED=always`` runs torch's op on the CPU for padded batches
and float64 too (the cuDNN path's arguments), which ``auto`` leaves to our loops."""
from __future__ import annotations

import pytest
import torch

from rnnrepro.cells import CELLS, build_cell, reference_loops
from rnnrepro.cells import fused
from rnnrepro.cells.lstm import LSTMCell
from rnnrepro.layers import Bidirectional, Recurrent

T, B, M, N = 6, 3, 4, 5
TOLERANCE = {torch.float64: 1e-10, torch.float32: 2e-5}
BIASES = {"both": {}, "recurrent_bias=False": {"recurrent_bias": False}, "bias=False": {"bias": False}}


@pytest.fixture
def calls(monkeypatch):
    """Counts of torch._VF.lstm / torch._VF.gru calls (the fused ops), by name."""
    counted = {"lstm": 0, "gru": 0}
    for name in counted:
        original = getattr(torch._VF, name)

        def counting(*args, _name=name, _original=original):
            counted[_name] += 1
            return _original(*args)

        monkeypatch.setattr(torch._VF, name, counting)
    return counted


def make(name: str, dtype=torch.float32, seed: int = 0, **params):
    torch.manual_seed(seed)
    cell = build_cell(name, M, N, dtype=dtype, **params)
    with torch.no_grad():
        for p in cell.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return cell


def real_steps(lengths, dtype) -> torch.Tensor:
    if lengths is None:
        return torch.ones(T, B, 1, dtype=dtype)
    return (torch.arange(T)[:, None] < lengths[None]).unsqueeze(2).to(dtype)


def run(layer: Recurrent, x, lengths, state):
    """Outputs at real steps, final state and the gradients of x, the initial state and every
    parameter of a loss over both."""
    out, final = layer(x, lengths, state)
    out = out * real_steps(lengths, x.dtype)  # outputs at padded steps are ignored by callers
    weights = torch.linspace(0.5, 1.5, N, dtype=x.dtype)
    loss = (out.pow(2) * weights).sum() + sum((f * weights * (k + 2)).sum() for k, f in enumerate(final))
    inputs = [x, *state, *layer.cell.parameters()]
    return [out, *final, *torch.autograd.grad(loss, inputs)]


@pytest.mark.parametrize("bias", list(BIASES))
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("padded", [False, True], ids=["full", "padded"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_fused_equals_the_reference_loop(name, dtype, padded, reverse, bias, calls, monkeypatch):
    """From a given initial state (stateful LMs carry it), lengths [T, 3, 1] or none, either
    direction, each bias setting: outputs, final states and gradients of x, the initial state and
    every parameter equal the reference loop's, and the fused op is what ran."""
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    cell = make(name, dtype, **BIASES[bias])
    layer = Recurrent(cell, reverse=reverse)
    torch.manual_seed(1)
    x = torch.randn(T, B, M, dtype=dtype, requires_grad=True)
    state = tuple(torch.randn(B, N, dtype=dtype, requires_grad=True) for _ in range(cell.state_count))
    lengths = torch.tensor([T, 3, 1]) if padded else None
    got = run(layer, x, lengths, state)
    assert calls[name] == 1 and sum(calls.values()) == 1
    with reference_loops():
        want = run(layer, x, lengths, state)
    assert sum(calls.values()) == 1  # the reference loop does not call it
    assert len(got) == len(want) == 1 + cell.state_count + 1 + cell.state_count + len(list(cell.parameters()))
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == dtype
        torch.testing.assert_close(a, b, rtol=0, atol=TOLERANCE[dtype])


@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_fused_equals_our_fast_loop(name, monkeypatch):
    """The fused op against the fast loop that ran before it (RNNREPRO_FUSED=0), padded, float32."""
    cell = make(name)
    layer = Recurrent(cell)
    x = torch.randn(T, B, M, requires_grad=True)
    state = tuple(torch.randn(B, N, requires_grad=True) for _ in range(cell.state_count))
    lengths = torch.tensor([T, 3, 1])
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    got = run(layer, x, lengths, state)
    monkeypatch.setenv("RNNREPRO_FUSED", "0")
    want = run(layer, x, lengths, state)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=0, atol=2e-5)


@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_a_sequence_without_real_steps_keeps_its_initial_state(name, calls, monkeypatch):
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    cell = make(name, torch.float64)
    layer = Recurrent(cell)
    x = torch.randn(T, B, M, dtype=torch.float64, requires_grad=True)
    state = tuple(torch.randn(B, N, dtype=torch.float64, requires_grad=True) for _ in range(cell.state_count))
    lengths = torch.tensor([2, 0, T])
    got = run(layer, x, lengths, state)
    with reference_loops():
        want = run(layer, x, lengths, state)
    assert calls[name] == 1
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-10)
    _, final = layer(x, lengths, state)
    assert all(torch.equal(f[1], s[1]) for f, s in zip(final, state))


@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_eval_mode_and_no_grad(name, monkeypatch):
    """The op's ``train`` flag follows whether a gradient can flow, not the module's mode: a
    backward in eval mode works (cuDNN refuses one after train=False), and no_grad runs."""
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    cell = make(name, torch.float64)
    layer = Recurrent(cell).eval()
    x = torch.randn(T, B, M, dtype=torch.float64, requires_grad=True)
    out, _ = layer(x)
    out.sum().backward()
    assert x.grad is not None
    with torch.no_grad():
        quiet, _ = layer(x)
    with reference_loops(), torch.no_grad():
        reference, _ = layer(x)
    torch.testing.assert_close(quiet, reference, rtol=0, atol=1e-10)


def test_bidirectional_layers_run_fused_in_both_directions(calls, monkeypatch):
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    torch.manual_seed(0)
    layer = Bidirectional(make("lstm", torch.float64, seed=1), make("lstm", torch.float64, seed=2))
    x = torch.randn(T, B, M, dtype=torch.float64)
    lengths = torch.tensor([T, 3, 1])
    out, _ = layer(x, lengths)
    assert calls["lstm"] == 2
    with reference_loops():
        reference, _ = layer(x, lengths)
    real = real_steps(lengths, x.dtype)
    torch.testing.assert_close(out * real, reference * real, rtol=0, atol=1e-10)


def test_auto_runs_torch_fused_kernels_only(calls, monkeypatch):
    """Default (auto) on the CPU: the LSTM in float32 over full-length sequences runs oneDNN's
    kernel; the GRU, padded batches and float64, where torch's CPU op is a per-step loop slower
    than ours, keep our loops."""
    monkeypatch.delenv("RNNREPRO_FUSED", raising=False)
    assert fused.fused_mode() == "auto"
    lstm, gru = Recurrent(make("lstm")), Recurrent(make("gru"))
    x = torch.randn(T, B, M)
    lstm(x)
    lstm(x, torch.tensor([T, T, T]))  # every sequence full length: no packing needed
    onednn = torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
    assert calls["lstm"] == (2 if onednn else 0)
    lstm(x, torch.tensor([T, 3, 1]))
    gru(x)
    Recurrent(make("lstm", torch.float64))(x.double())
    assert calls == {"lstm": 2 if onednn else 0, "gru": 0}
    if onednn:
        with torch.profiler.profile() as profile:
            out, _ = lstm(x.requires_grad_())
            out.sum().backward()
        names = {event.key for event in profile.key_averages()}
        assert {"aten::mkldnn_rnn_layer", "aten::mkldnn_rnn_layer_backward"} <= names


def test_torch_kernel_names_the_kernel():
    x = torch.randn(T, B, M)
    onednn = torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
    assert fused.torch_kernel("lstm", x, None) == ("oneDNN" if onednn else None)
    assert fused.torch_kernel("lstm", x, torch.tensor([T, 3, 1])) is None
    assert fused.torch_kernel("lstm", x.double(), None) is None
    assert fused.torch_kernel("gru", x, None) is None


@pytest.mark.parametrize("name", sorted(set(CELLS.names()) - {"lstm", "gru"}))
def test_other_cells_keep_their_loops(name, calls, monkeypatch):
    """ELSTM (an LSTMCell subclass with the LSTM's settings), PRU, PRU+, LSTM+, the ablations, the
    input-only cells and the SRN never take the fused op, even with RNNREPRO_FUSED=always."""
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    cell = make(name)
    x = torch.randn(T, B, M)
    state = cell.initial_state(B, x)
    assert cell.fused_sequence(x, state) is None
    assert cell.fused_sequence(x, state, torch.tensor([T, 3, 1])) is None
    Recurrent(cell)(x, torch.tensor([T, 3, 1]))
    assert calls == {"lstm": 0, "gru": 0}


def test_lstm_settings_decide_not_the_name(monkeypatch):
    """LSTMCell itself with another setting is not torch's LSTM; a subclass that changes an
    equation or adds a parameter is not either."""
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    assert LSTMCell(M, N).is_torch_lstm()
    assert LSTMCell(M, N, recurrent_init="identity", recurrent_bias=False).is_torch_lstm()
    for settings in ({"input_only": True}, {"content": "input"}, {"content": "linear"}, {"output_gate": False},
                     {"feed_forward": True}, {"gates": False}):
        assert not LSTMCell(M, N, **settings).is_torch_lstm(), settings

    class Peephole(LSTMCell):
        def cell_bias(self):
            return None

    class Extra(LSTMCell):
        def create_extra_parameters(self, factory):
            super().create_extra_parameters(factory)
            self.extra = torch.nn.Parameter(torch.zeros(1))

    assert not Peephole(M, N).is_torch_lstm()
    assert not Extra(M, N).is_torch_lstm()
    assert build_cell("elstm", M, N).is_torch_lstm() is False


@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_the_switch_and_reference_loops_turn_it_off(name, calls, monkeypatch):
    layer = Recurrent(make(name))
    x = torch.randn(T, B, M)
    for off in ("0", "off", "false"):
        monkeypatch.setenv("RNNREPRO_FUSED", off)
        assert fused.fused_mode() == "off"
        layer(x)
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    with reference_loops():
        layer(x)
    layer.cell.fast_loops = False
    layer(x)
    layer.cell.fast_loops = True
    assert calls == {"lstm": 0, "gru": 0}
    layer(x)
    assert calls[name] == 1


@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_autocast_keeps_the_reference_loop(name, calls, monkeypatch):
    monkeypatch.setenv("RNNREPRO_FUSED", "always")
    layer = Recurrent(make(name))
    x = torch.randn(T, B, M)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = layer(x)
        with reference_loops():
            reference, _ = layer(x)
    assert calls == {"lstm": 0, "gru": 0}
    assert torch.equal(out, reference)


def test_fused_is_a_recorded_switch():
    from rnnrepro.train import SWITCHES

    assert "RNNREPRO_FUSED" in SWITCHES
