"""Every registered cell verified three ways: float64 gradcheck, equality to a reference, and a
property that shows what the cell changes. Adding a cell to the registry adds its gradcheck;
``test_every_cell_has_all_three_kinds_of_test`` fails until it also has an entry in
REFERENCES and in PROPERTIES.

Sizes are tiny (T=4, B=2, input 2, hidden 3) and everything runs in float64."""
from __future__ import annotations

import re
from typing import Callable

import pytest
import torch
from torch import nn

from rnnrepro.cells import CELLS, build_cell

T, B, M, N = 4, 2, 2, 3
DOUBLE = torch.float64
PADDED = torch.tensor([[1, 1], [1, 1], [1, 0], [1, 0]], dtype=torch.bool).unsqueeze(2)  # lengths 4, 2


def make(name: str, seed: int = 0, scale: float = 0.5, **params):
    """A float64 cell with its parameters moved off their initial values (ELSTM's scales of 1,
    PRU+'s identity), so that no term vanishes by accident."""
    torch.manual_seed(seed)
    cell = build_cell(name, M, N, dtype=DOUBLE, **params)
    with torch.no_grad():
        for p in cell.parameters():
            p.add_(scale * torch.randn_like(p))
    return cell


def inputs(seed: int = 1, steps: int = T, batch: int = B) -> torch.Tensor:
    torch.manual_seed(seed)
    return torch.randn(steps, batch, M, dtype=DOUBLE)


def random_state(cell, seed: int = 2, batch: int = B) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(seed)
    return tuple(torch.randn(batch, N, dtype=DOUBLE) for _ in range(cell.state_count))


def run(cell, x, state=None, mask=None, t=0):
    """(outputs, final state) of the cell's sequence loop, as layers call it."""
    state = cell.initial_state(x.shape[1], x) if state is None else state
    return cell.sequence(cell.project_input(x), state, mask, t)


def flat(result) -> tuple[torch.Tensor, ...]:
    out, state = result
    return (out, *state)


def gradients(outputs, wrt) -> tuple[torch.Tensor | None, ...]:
    """Gradients of a fixed, non-symmetric linear function of ``outputs``."""
    loss = sum((o * torch.linspace(-1, 2, o.numel(), dtype=o.dtype).view_as(o)).sum() for o in outputs)
    return torch.autograd.grad(loss, wrt, allow_unused=True)


def assert_all_close(actual, expected, tol=1e-10):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a = torch.zeros_like(e) if a is None else a
        e = torch.zeros_like(a) if e is None else e
        torch.testing.assert_close(a, e, atol=tol, rtol=tol)


class SequenceOf(nn.Module):
    """cell.sequence(cell.project_input(x), state, mask) as a module, for functional_call."""

    def __init__(self, cell, mask):
        super().__init__()
        self.cell = cell
        self.mask = mask

    def forward(self, x, *state):
        return flat(self.cell.sequence(self.cell.project_input(x), state, self.mask, 1))


# -- 1. gradcheck --------------------------------------------------------------------------
GRADCHECK_CELLS = CELLS.names()
SMALL = {"elstm": {"period": 3}, "elstm_ix": {"period": 3}}  # T_s = 3 < T: positions wrap


@pytest.mark.parametrize("padded", [False, True], ids=["full", "padded"])
@pytest.mark.parametrize("name", GRADCHECK_CELLS)
def test_gradcheck(name, padded):
    """d(outputs, final state)/d(input, initial state, every parameter) equals finite differences."""
    cell = make(name, **SMALL.get(name, {}))
    module = SequenceOf(cell, PADDED if padded else None)
    names = [n for n, _ in module.named_parameters()]
    x = inputs().requires_grad_()
    state = tuple(s.requires_grad_() for s in random_state(cell))
    params = tuple(p.detach().clone().requires_grad_() for p in module.parameters())
    count = len(state)

    def function(x, *tensors):
        values = dict(zip(names, tensors[count:]))
        return torch.func.functional_call(module, values, (x, *tensors[:count]))

    assert torch.autograd.gradcheck(function, (x, *state, *params))


# -- 2. references -------------------------------------------------------------------------
def copy_torch_weights(cell, reference):
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(reference, f"{name}_l0").copy_(getattr(cell, name))


def equals_torch(name: str, torch_class) -> None:
    """Same outputs, final state and gradients as torch's module with copied weights."""
    cell = make(name)
    reference = torch_class(M, N, dtype=DOUBLE)
    copy_torch_weights(cell, reference)
    x = inputs().requires_grad_()
    state = random_state(cell)
    ours = flat(run(cell, x, state))
    if name == "lstm":
        out, (h, c) = reference(x, (state[0][None], state[1][None]))
        theirs = (out, h[0], c[0])
    else:
        out, h = reference(x, state[0][None])
        theirs = (out, h[0])
    assert_all_close(ours, theirs)
    names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    assert_all_close(gradients(ours, [x, *(getattr(cell, n) for n in names)]),
                     gradients(theirs, [x, *(getattr(reference, f"{n}_l0") for n in names)]))


def same_weights(target, source, mapping=None) -> None:
    """Copy ``source``'s parameters into ``target``'s of the same name (``mapping`` renames)."""
    with torch.no_grad():
        for name, value in source.named_parameters():
            name = (mapping or {}).get(name, name)
            if name is not None and getattr(target, name, None) is not None:
                getattr(target, name).copy_(value)


def chunks(tensor, cell) -> dict[str, torch.Tensor]:
    return dict(zip(cell.chunk_names, tensor.chunk(cell.num_chunks, dim=0)))


def paper_lstm(cell, x, state, *, content, output_gate=True, feed_forward=False, mask=None):
    """The LSTM-family equations transcribed step by step from the papers, on the cell's named
    weight blocks: i, f, o (and an srnn content) see [x_t, h_{t-1}]; content "input" is
    tanh(W x + b) (pru eq. 6), "linear" is W x (wsum eqs. 9-10); PRU+ feed-forward (eq. 7)."""
    w_x = chunks(cell.weight_ih, cell)
    w_h = (dict(zip(cell.chunk_names, cell.weight_hh.chunk(cell.hh_chunks)))
           if cell.weight_hh is not None else {})
    biased = [n for n in cell.chunk_names if not (n == "g" and content == "linear")]
    b = dict(zip(biased, cell.bias_ih.chunk(len(biased))))
    if cell.bias_hh is not None:
        for n, extra in zip(cell.chunk_names, cell.bias_hh.chunk(cell.hh_chunks)):
            b[n] = b[n] + extra
    h, c = state
    outputs = []
    for t in range(x.shape[0]):
        def gate(n):
            return x[t] @ w_x[n].T + (h @ w_h[n].T if n in w_h else 0) + b.get(n, 0)
        i, f = torch.sigmoid(gate("i")), torch.sigmoid(gate("f"))
        g = gate("g") if content == "linear" else torch.tanh(gate("g"))
        c_new = f * c + i * g
        h_new = torch.sigmoid(gate("o")) * torch.tanh(c_new) if output_gate else torch.tanh(c_new)
        if feed_forward:
            h_new = torch.tanh(h_new @ cell.weight_ff.T + cell.bias_ff)
        if mask is not None:
            h, c = torch.where(mask[t], h_new, h), torch.where(mask[t], c_new, c)
        else:
            h, c = h_new, c_new
        outputs.append(h_new)
    return torch.stack(outputs), h, c


def equals_transcription(name: str, **equations) -> None:
    cell = make(name)
    x = inputs().requires_grad_()
    state = random_state(cell)
    for mask in (None, PADDED):
        ours = flat(run(cell, x, state, mask))
        theirs = paper_lstm(cell, x, state, mask=mask, **equations)
        assert_all_close(ours, theirs)
        params = list(cell.parameters())
        assert_all_close(gradients(ours, [x, *params]), gradients(theirs, [x, *params]))


def srn_equals_torch():
    equals_torch("srn", lambda m, n, dtype: nn.RNN(m, n, nonlinearity="tanh", dtype=dtype))


def lstm_equals_torch():
    equals_torch("lstm", nn.LSTM)


def gru_equals_torch():
    equals_torch("gru", nn.GRU)


def sgru_equals_closed_form():
    """elstm eq. 19: h_t = Σ_k [Π_{j=k+1..t} z_j] (1 - z_k) h̃_k from h_0 = 0; and the GRU with U = 0."""
    cell = make("sgru")
    x = inputs()
    out, _ = run(cell, x)
    wz, wh = cell.weight_ih.chunk(2)
    bz, bh = cell.bias_ih.chunk(2)
    z = torch.sigmoid(x @ wz.T + bz)
    candidate = torch.tanh(x @ wh.T + bh)
    for t in range(T):
        closed = sum(torch.prod(z[k + 1:t + 1], dim=0) * (1 - z[k]) * candidate[k] for k in range(t + 1))
        torch.testing.assert_close(out[t], closed, atol=1e-12, rtol=1e-12)
    gru = make("gru", recurrent_bias=False)
    with torch.no_grad():
        gru.weight_hh.zero_()
        gru.weight_ih[N:].copy_(cell.weight_ih)
        gru.bias_ih[N:].copy_(cell.bias_ih)
    torch.testing.assert_close(run(gru, x)[0], out, atol=1e-12, rtol=1e-12)


def elstm_with_unit_scales_equals_lstm(name: str, **lstm_params):
    """ELSTM with every s_k = 1 and b = 0 is the LSTM with the same weights (forward and gradients)."""
    def check():
        elstm = make(name, period=3)
        with torch.no_grad():
            elstm.scaling.fill_(1.0)
            elstm.bias_c.zero_()
        lstm = build_cell("lstm", M, N, dtype=DOUBLE, **lstm_params)
        same_weights(lstm, elstm)
        x = inputs().requires_grad_()
        state = random_state(lstm)
        for mask in (None, PADDED):
            ours, theirs = flat(run(elstm, x, state, mask, t=2)), flat(run(lstm, x, state, mask))
            assert_all_close(ours, theirs)
            shared = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            assert_all_close(gradients(ours, [x, *(getattr(elstm, n) for n in shared if getattr(elstm, n) is not None)]),
                             gradients(theirs, [x, *(getattr(lstm, n) for n in shared if getattr(lstm, n) is not None)]))
    return check


def pru_equals_lstm_without_content_recurrence():
    """PRU is the LSTM with W_hg = 0 (chunks reordered i, f, o, g -> i, f, g, o)."""
    pru = make("pru")
    lstm = make("lstm")
    order = [0, 1, 3, 2]  # lstm chunk k comes from pru chunk order[k]
    with torch.no_grad():
        lstm.weight_ih.copy_(torch.cat([pru.weight_ih.chunk(4)[k] for k in order]))
        lstm.bias_ih.copy_(torch.cat([pru.bias_ih.chunk(4)[k] for k in order]))
        i, f, o = pru.weight_hh.chunk(3)
        lstm.weight_hh.copy_(torch.cat([i, f, torch.zeros_like(i), o]))
        bi, bf, bo = pru.bias_hh.chunk(3)
        lstm.bias_hh.copy_(torch.cat([bi, bf, torch.zeros_like(bi), bo]))
    x, state = inputs(), random_state(pru)
    for mask in (None, PADDED):
        assert_all_close(flat(run(pru, x, state, mask)), flat(run(lstm, x, state, mask)))


def minus_gates_equals_srn():
    cell = make("lstm_minus_gates")
    srn = build_cell("srn", M, N, dtype=DOUBLE)
    same_weights(srn, cell)
    x = inputs().requires_grad_()
    state = random_state(cell)
    for mask in (None, PADDED):
        ours, theirs = flat(run(cell, x, state, mask)), flat(run(srn, x, state, mask))
        assert_all_close(ours, theirs)
        assert_all_close(gradients(ours, [x, *cell.parameters()]), gradients(theirs, [x, *srn.parameters()]))


REFERENCES: dict[str, Callable[[], None]] = {
    "srn": srn_equals_torch,
    "lstm": lstm_equals_torch,
    "gru": gru_equals_torch,
    "sgru": sgru_equals_closed_form,
    "elstm": elstm_with_unit_scales_equals_lstm("elstm"),
    "elstm_ix": elstm_with_unit_scales_equals_lstm("elstm_ix", input_only=True),
    "pru": pru_equals_lstm_without_content_recurrence,
    "pru_plus": lambda: equals_transcription("pru_plus", content="input", feed_forward=True),
    "lstm_plus": lambda: equals_transcription("lstm_plus", content="srnn", feed_forward=True),
    "lstm_minus_gates": minus_gates_equals_srn,
    "lstm_minus_srnn": lambda: equals_transcription("lstm_minus_srnn", content="linear"),
    "lstm_minus_srnn_out": lambda: equals_transcription("lstm_minus_srnn_out", content="linear",
                                                        output_gate=False),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_equals_reference(name):
    REFERENCES[name]()


def test_elstm_ix_equals_its_transcription_with_trained_scales():
    """With scales ≠ 1: c_t = f_t c_{t-1} + s_{t mod T_s} i_t tanh(W_in X_t), h_t = o_t tanh(c_t + b)."""
    cell = make("elstm_ix", period=3)
    x = inputs(steps=7)
    w = chunks(cell.weight_ih, cell)
    b = dict(zip(cell.chunk_names, cell.bias_ih.chunk(4)))
    h, c = random_state(cell)
    out, (h_final, c_final) = run(cell, x, (h, c))
    for t in range(7):
        i, f, o = (torch.sigmoid(x[t] @ w[n].T + b[n]) for n in "ifo")
        c = f * c + cell.scaling[t % 3] * i * torch.tanh(x[t] @ w["g"].T + b["g"])
        torch.testing.assert_close(out[t], o * torch.tanh(c + cell.bias_c), atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(c_final, c, atol=1e-12, rtol=1e-12)


LSTM_DEFAULTS = {"content": "srnn", "output_gate": True, "feed_forward": False, "gates": True,
                 "input_only": False}


@pytest.mark.parametrize("name", ["lstm_minus_gates", "lstm_minus_srnn", "lstm_minus_srnn_out",
                                  "pru", "pru_plus", "lstm_plus"])
def test_variant_with_nothing_removed_is_the_lstm(name):
    """The variants are fixed parameters of the LSTM's class: set back to the defaults, the
    ablation is the LSTM (same parameters, outputs and gradients)."""
    variant = CELLS[name]
    assert variant.func is CELLS["lstm"] and set(variant.keywords) <= set(LSTM_DEFAULTS)
    restored = variant.func(M, N, dtype=DOUBLE, **{k: LSTM_DEFAULTS[k] for k in variant.keywords})
    lstm = make("lstm")
    assert [n for n, _ in restored.named_parameters()] == [n for n, _ in lstm.named_parameters()]
    same_weights(restored, lstm)
    x = inputs().requires_grad_()
    state = random_state(lstm)
    ours, theirs = flat(run(restored, x, state)), flat(run(lstm, x, state))
    assert_all_close(ours, theirs)
    assert_all_close(gradients(ours, [x, *restored.parameters()]), gradients(theirs, [x, *lstm.parameters()]))


# -- 3. properties -------------------------------------------------------------------------
def srn_memory_decays_exponentially():
    """elstm eq. 5: ‖∂h_t/∂x_k‖ ≤ σ_max(W_hh)^{t-k} ‖W_ih‖ (tanh' ≤ 1)."""
    cell = make("srn")
    x = inputs(steps=6)
    jacobian = torch.autograd.functional.jacobian(lambda x: run(cell, x)[0][-1, 0], x)  # (N, T, B, M)
    spectral = torch.linalg.matrix_norm(cell.weight_hh, ord=2)
    bound_in = torch.linalg.matrix_norm(cell.weight_ih, ord=2)
    for k in range(6):
        norm = torch.linalg.matrix_norm(jacobian[:, k, 0, :], ord=2)
        assert norm <= spectral ** (5 - k) * bound_in + 1e-12


def lstm_carries_memory_when_forget_is_open_and_input_closed():
    """The constant error carousel: f = 1, i = 0 keep c_t = c_0 however long the sequence."""
    cell = make("lstm")
    with torch.no_grad():
        cell.bias_ih[:N] = -60.0  # i ≈ 0
        cell.bias_ih[N:2 * N] = 60.0  # f ≈ 1
    state = random_state(cell)
    _, (_, c) = run(cell, inputs(steps=20), state)
    torch.testing.assert_close(c, state[1], atol=1e-12, rtol=0)


def gru_output_lies_between_previous_state_and_candidate():
    """h_t = (1 - z) n + z h_{t-1} is element-wise between h_{t-1} and n_t."""
    cell = make("gru")
    x, (h,) = inputs(), random_state(cell)
    terms = cell.memory_terms(cell.project_input(x), (h,))
    previous = torch.cat([h[None], terms.memory[:-1]])
    low, high = torch.minimum(previous, terms.content), torch.maximum(previous, terms.content)
    assert torch.all(terms.memory >= low - 1e-12) and torch.all(terms.memory <= high + 1e-12)


def gates_ignore_the_state(name: str):
    """Gates and content see only the input: changing the initial state changes neither, and
    moves the memory by exactly (Π_{k≤t} f_k) ⊙ (m_0' - m_0)."""
    def check():
        cell = make(name)
        x = inputs()
        one, other = random_state(cell, seed=3), random_state(cell, seed=4)
        a = cell.memory_terms(cell.project_input(x), one)
        b = cell.memory_terms(cell.project_input(x), other)
        for part in ("forget", "write", "content"):
            torch.testing.assert_close(getattr(a, part), getattr(b, part), atol=1e-14, rtol=0)
        carried = torch.cumprod(a.forget, 0) * (other[-1] - one[-1])
        torch.testing.assert_close(b.memory - a.memory, carried, atol=1e-12, rtol=1e-12)
        assert cell.weight_hh is None and cell.hh_chunks == 0
    return check


def elstm_scale_is_periodic():
    """Position k (1-based) uses s_{(k-1) mod T_s + 1}: write_t / i_t = scaling[t % T_s], and a
    sequence started one period later gives the same result."""
    cell = make("elstm", period=3)
    x, state = inputs(steps=7), random_state(cell)
    xp = cell.project_input(x)
    terms = cell.memory_terms(xp, state)
    h = torch.cat([state[0][None], run(cell, x, state)[0][:-1]])
    i = torch.sigmoid(xp[..., :N] + h @ cell.weight_hh[:N].T)  # b_ih + b_hh are in xp
    for t in range(7):
        torch.testing.assert_close(terms.write[t] / i[t], cell.scaling[t % 3].expand(B, N))
    assert_all_close(flat(run(cell, x, state, t=3)), flat(run(cell, x, state, t=0)))
    assert not torch.allclose(run(cell, x, state, t=1)[0], run(cell, x, state, t=0)[0])


def content_ignores_previous_output(name: str, linear: bool):
    """The content c̃_t does not depend on h_{t-1} (PRU eq. 6; wsum eq. 9), while the gates do;
    for wsum's ablations it is linear in x_t, W_cx x_t, without bias."""
    def check():
        cell = make(name)
        x = inputs()
        a = cell.memory_terms(cell.project_input(x), random_state(cell, seed=3))
        b = cell.memory_terms(cell.project_input(x), random_state(cell, seed=4))
        torch.testing.assert_close(a.content, b.content, atol=1e-14, rtol=0)
        assert not torch.allclose(a.forget, b.forget)
        if linear:
            w_g = cell.weight_ih.chunk(cell.num_chunks)[-1]
            torch.testing.assert_close(a.content, x @ w_g.T, atol=1e-14, rtol=0)
    return check


def feed_forward_at_init_squashes_the_base_step(name: str, base: str):
    """W_o = I and b_o = 0 at initialisation: one step is tanh of one step of the cell without
    the feed-forward layer, from the same state (pru eq. 7 with W_o = I)."""
    def check():
        torch.manual_seed(0)
        cell = build_cell(name, M, N, dtype=DOUBLE)
        assert torch.equal(cell.weight_ff, torch.eye(N, dtype=DOUBLE)) and not cell.bias_ff.any()
        plain = build_cell(base, M, N, dtype=DOUBLE)
        same_weights(plain, cell)
        xp, state = cell.project_input(inputs()[0]), random_state(cell)
        h, (h_state, c) = cell.step(xp, state)
        h_plain, (_, c_plain) = plain.step(xp, state)
        torch.testing.assert_close(h, torch.tanh(h_plain), atol=1e-14, rtol=0)
        torch.testing.assert_close(c, c_plain, atol=1e-14, rtol=0)
    return check


def minus_gates_has_no_memory_cell():
    """LSTM−GATES keeps only the S-RNN: state (h,), no gated memory, one chunk."""
    cell = make("lstm_minus_gates")
    assert cell.state_count == 1 and cell.num_chunks == 1
    with pytest.raises(TypeError, match="no gated memory"):
        cell.memory_terms(cell.project_input(inputs()), random_state(cell))


def minus_srnn_out_outputs_squashed_memory():
    """wsum eq. 10: no output gate, h_t = tanh(c_t); and its content is W_cx x_t."""
    content_ignores_previous_output("lstm_minus_srnn_out", linear=True)()
    cell = make("lstm_minus_srnn_out")
    x, state = inputs(), random_state(cell)
    terms = cell.memory_terms(cell.project_input(x), state)
    torch.testing.assert_close(run(cell, x, state)[0], torch.tanh(terms.memory), atol=1e-14, rtol=0)


PROPERTIES: dict[str, Callable[[], None]] = {
    "srn": srn_memory_decays_exponentially,
    "lstm": lstm_carries_memory_when_forget_is_open_and_input_closed,
    "gru": gru_output_lies_between_previous_state_and_candidate,
    "sgru": gates_ignore_the_state("sgru"),
    "elstm": elstm_scale_is_periodic,
    "elstm_ix": gates_ignore_the_state("elstm_ix"),
    "pru": content_ignores_previous_output("pru", linear=False),
    "pru_plus": feed_forward_at_init_squashes_the_base_step("pru_plus", "pru"),
    "lstm_plus": feed_forward_at_init_squashes_the_base_step("lstm_plus", "lstm"),
    "lstm_minus_gates": minus_gates_has_no_memory_cell,
    "lstm_minus_srnn": content_ignores_previous_output("lstm_minus_srnn", linear=True),
    "lstm_minus_srnn_out": minus_srnn_out_outputs_squashed_memory,
}


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_property(name):
    PROPERTIES[name]()


PAPERS = re.compile(r"\b(elstm|pru|wsum|drnn|tutorial) paper\b")


def papers_cells() -> set[str]:
    """The registered cells whose docstrings take their equations from one of the five papers."""
    return {name for name in CELLS.names() if PAPERS.search(CELLS[name].__doc__ or "")}


def test_every_cell_of_the_papers_has_all_three_kinds_of_test():
    """Each cell of the papers is checked against its own equations (a reference) and shows what
    it changes (a property); every registered cell, one of one's own included, has its gradcheck
    and the generic tests of test_cells.py (contract, fast loop against the step-by-step loop)."""
    assert len(papers_cells()) >= 12
    missing = {kind: sorted(papers_cells() - set(names)) for kind, names in
               (("gradcheck", GRADCHECK_CELLS), ("reference", REFERENCES), ("property", PROPERTIES))}
    assert not any(missing.values()), f"cells without a test of each kind: {missing}"
