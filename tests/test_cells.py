"""The cell contract for every registered cell, and the fast loops against the reference loop.

Equality to references, gradchecks and per-cell properties are in test_cells_verified.py."""
from __future__ import annotations

import ast
import re
import sys
import warnings

import pytest
import torch

from rnnrepro.cells import CELLS, build_cell, cell_parameters, reference_loops
from rnnrepro.cells import compiled, products
from rnnrepro.cells.compiled import eager_loops, scripted
from rnnrepro.cells.gru_loop import GRULoop
from rnnrepro.cells.input_gates_loop import InputGatesLoop
from rnnrepro.cells.lstm_loop import LSTMLoop
from rnnrepro.cells.scan import LinearScan
from rnnrepro.cells.srn_loop import SRNLoop
from rnnrepro.layers import Recurrent

ZOO = set(CELLS.names())  # every registered cell, a cell of one's own included
T, B, M, N = 5, 3, 4, 6


def make(name: str, dtype=torch.float32, seed: int = 0, **params):
    torch.manual_seed(seed)
    cell = build_cell(name, M, N, dtype=dtype, **({"period": 3} if "elstm" in name else {}), **params)
    with torch.no_grad():
        for p in cell.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return cell


def lengths_mask(lengths, steps=T):
    return (torch.arange(steps)[:, None] < torch.as_tensor(lengths)[None]).unsqueeze(2)


def test_the_registry_is_the_folder():
    """Every module of the cells folder is imported by the package, so a new file registers its
    cells without any other edit, and each cell knows the module that defines it."""
    from pathlib import Path

    import rnnrepro.cells as package

    modules = {f"rnnrepro.cells.{p.stem}" for p in Path(package.__file__).parent.glob("*.py") if p.stem != "__init__"}
    assert modules <= set(sys.modules)
    assert {CELLS.module_of(name) for name in ZOO} <= modules


CITATION = re.compile(r"\beqs?\.\s*\(?\d+")  # "eq. 6", "eqs. 23-25", "eq. (7)": where its equations come from


@pytest.mark.parametrize("name", sorted(ZOO))
def test_docstring_gives_equations_with_paper_and_number(name):
    """The docstring cites the equations it implements (a paper's equation number) and writes
    out an update equation (a line ``h_t = ...``, and ``c_t = ...`` for the two-part states) of
    which the memory's refers to its previous value (c_{t-1}, or h_{t-1} for one-part states)."""
    doc = CELLS[name].__doc__ or ""
    assert CITATION.search(doc), f"{name}: cites no equation number (eq. N / eqs. N-M)"
    states = ("h", "c")[:make(name).state_count]
    for state in states:
        definition = re.compile(rf"^\s*{state}_t\s*=\s*\S.*$", re.MULTILINE)
        assert definition.search(doc), f"{name}: no line '{state}_t = ...'"
    memory = states[-1]
    recurrence = re.compile(rf"^\s*{memory}_t\s*=.*{memory}_\{{t-1\}}", re.MULTILINE)
    assert recurrence.search(doc), f"{name}: '{memory}_t = ...' never uses {memory}_{{t-1}}"


def test_variants_do_not_take_their_fixed_parameters_again():
    assert "content" not in cell_parameters("pru") and "feed_forward" in cell_parameters("lstm")
    with pytest.raises(ValueError, match="cell 'pru' has no parameter 'content'; allowed: bias"):
        build_cell("pru", M, N, content="srnn")
    with pytest.raises(ValueError, match="content must be one of srnn, input, linear"):
        build_cell("lstm", M, N, content="conv")


@pytest.mark.parametrize("name", sorted(ZOO))
def test_contract(name):
    cell = make(name, dtype=torch.float64)
    assert all(p.dtype == torch.float64 for p in cell.parameters())
    assert (cell.weight_hh is None) == (cell.hh_chunks == 0)
    assert cell.weight_ih.shape == (cell.num_chunks * N, M)
    x = torch.randn(T, B, M, dtype=torch.float64)
    xp = cell.project_input(x)
    assert xp.shape == (T, B, cell.num_chunks * N)
    state = cell.initial_state(B, x)
    assert len(state) == cell.state_count and all(s.shape == (B, N) for s in state)
    out, final = cell.sequence(xp, state)
    assert out.shape == (T, B, N) and len(final) == cell.state_count
    assert all(s.shape == (B, N) for s in final)
    h, one = cell(x[0], state)
    assert h.shape == (B, N) and len(one) == cell.state_count
    # extra_repr: the sizes, then every setting that makes this cell what it is (the
    # variant's fixed flags, ELSTM's period), each as keyword=value
    args, settings = call_arguments(cell.extra_repr())
    assert args == [M, N], cell.extra_repr()
    expected = dict(getattr(CELLS[name], "keywords", {}))
    if "elstm" in name:
        expected["period"] = 3  # make() sets it (the default is 100)
    assert expected.items() <= settings.items(), (cell.extra_repr(), expected)
    assert repr(cell) == f"{type(cell).__name__}({cell.extra_repr()})"


def call_arguments(text: str) -> tuple[list, dict]:
    """The positional and keyword values of the call arguments ``text`` ("4, 6, period=3")."""
    call = ast.parse(f"f({text})", mode="eval").body
    return ([ast.literal_eval(a) for a in call.args],
            {k.arg: ast.literal_eval(k.value) for k in call.keywords})


@pytest.mark.parametrize("name", sorted(ZOO))
def test_padded_steps_keep_the_state(name):
    """A column padded after its 2 real steps ends in the state it had after those 2 steps."""
    cell = make(name)
    x = torch.randn(T, B, M)
    state = tuple(torch.randn(B, N) for _ in range(cell.state_count))
    _, final = cell.sequence(cell.project_input(x), state, lengths_mask([T, 2, 0]))
    _, short = cell.sequence(cell.project_input(x[:2]), state)
    for s, f, one in zip(state, final, short):
        torch.testing.assert_close(f[1], one[1])
        torch.testing.assert_close(f[2], s[2])  # no real step at all: the initial state


def outputs_and_gradients(cell, x, state, mask, t):
    out, final = cell.sequence(cell.project_input(x), state, mask, t)
    results = (out, *final)
    weights = [torch.linspace(-1, 1, r.numel(), dtype=r.dtype).view_as(r) for r in results]
    loss = sum((r * w).sum() for r, w in zip(results, weights))
    wrt = [x, *state, *cell.parameters()]
    return results, torch.autograd.grad(loss, wrt, allow_unused=True)


def random_inputs(cell, dtype=torch.float32):
    """An input sequence (T, B, M) and a state, all requiring gradients."""
    x = torch.randn(T, B, M, dtype=dtype, requires_grad=True)
    state = tuple(torch.randn(B, N, dtype=dtype, requires_grad=True) for _ in range(cell.state_count))
    return x, state


def assert_loops_agree(cell, x, state, mask, t, other_loop, tol):
    """The cell's loop and the same cell run inside ``other_loop()`` give the same outputs,
    final state and gradients (of x, the state and every parameter)."""
    fast = outputs_and_gradients(cell, x, state, mask, t)
    with other_loop():
        other = outputs_and_gradients(cell, x, state, mask, t)
    assert_same(fast[0], other[0], tol)
    assert_same(fast[1], other[1], tol)


def assert_same(a, b, tol):
    for x, y in zip(a, b):
        if x is None and y is None:
            continue
        x = torch.zeros_like(y) if x is None else x
        y = torch.zeros_like(x) if y is None else y
        torch.testing.assert_close(x, y, atol=tol, rtol=tol)


@pytest.mark.parametrize("padded", [False, True], ids=["full", "padded"])
@pytest.mark.parametrize("name", sorted(ZOO))
def test_fast_loop_equals_reference_loop(name, padded):
    """Outputs, final state and every gradient equal the step-by-step loop, float64 and float32."""
    for dtype, tol in ((torch.float64, 1e-12), (torch.float32, 2e-5)):
        cell = make(name, dtype=dtype)
        x, state = random_inputs(cell, dtype)
        mask = lengths_mask([T, 3, 1]) if padded else None
        assert_loops_agree(cell, x, state, mask, 2, reference_loops, tol)


COMBINATIONS = [
    {"input_only": True},
    {"input_only": True, "content": "linear", "output_gate": False},
    {"input_only": True, "feed_forward": True},
    {"content": "input", "output_gate": False, "feed_forward": True, "recurrent_bias": False},
    {"output_gate": False},
    {"gates": False, "input_only": True},
]


@pytest.mark.parametrize("params", COMBINATIONS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_unregistered_flag_combinations_equal_reference_loop(params):
    """Parameters of the LSTM class that no registered cell uses still take correct fast loops."""
    for mask in (None, lengths_mask([T, 3, 1])):
        cell = make("lstm", dtype=torch.float64, **params)
        x, state = random_inputs(cell, torch.float64)
        assert_loops_agree(cell, x, state, mask, 0, reference_loops, 1e-12)


@pytest.mark.parametrize("switch, former, enabled", [
    ("RNNREPRO_PREPACK", "RNNREPRO_PACKED", lambda: products.prepacking_enabled()),
    ("RNNREPRO_TORCHSCRIPT", "RNNREPRO_SCRIPT", lambda: compiled.scripting_enabled()),
])
def test_a_switch_and_its_former_name(monkeypatch, switch, former, enabled):
    """Each switch is on unless set off; its name from before it was renamed for what it does
    (RNNREPRO_PACKED when "pack" also meant packs of runs, RNNREPRO_SCRIPT) is still read, with a
    warning, where the new one is not set."""
    from rnnrepro.cells import switches

    monkeypatch.delenv(switch, raising=False)
    monkeypatch.delenv(former, raising=False)
    assert enabled()
    monkeypatch.setenv(switch, "0")
    assert not enabled()
    monkeypatch.delenv(switch)
    monkeypatch.setenv(former, "off")
    monkeypatch.setattr(switches, "_warned", set())
    with pytest.warns(FutureWarning, match=f"{former} is now called {switch}"):
        assert not enabled()
    monkeypatch.setenv(switch, "1")  # the new name wins
    assert enabled()


@pytest.mark.parametrize("name", sorted(ZOO))
def test_prepacked_products_equal_reference_loop(name, monkeypatch):
    """oneDNN's packed GEMM (used for big float32 weights) gives the reference results."""
    if not products.prepacking_available():
        pytest.skip("this torch has no oneDNN linear ops")
    monkeypatch.setattr(products, "PREPACK_MIN_ENTRIES", 0)  # pack even these tiny weights
    monkeypatch.setattr(products, "INPUT_PREPACK_MIN_PRODUCTS", 0)
    cell = make(name)
    x, state = random_inputs(cell)
    for mask in (None, lengths_mask([T, 3, 1])):
        assert_loops_agree(cell, x, state, mask, 0, reference_loops, 2e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_prepacked_input_projection_equals_linear(bias, monkeypatch):
    """The whole-sequence input projection on oneDNN's packed weight gives F.linear's
    output and gradients (x, W, b), and is the path taken for big float32 products."""
    if not products.prepacking_available():
        pytest.skip("this torch has no oneDNN linear ops")
    monkeypatch.setattr(products, "INPUT_PREPACK_MIN_PRODUCTS", 0)
    x = torch.randn(7, 3, 5, requires_grad=True)
    weight = torch.randn(8, 5, requires_grad=True)
    b = torch.randn(8, requires_grad=True) if bias else None
    projected = products.input_projection(x, weight, b)
    assert type(projected.grad_fn).__name__ == "PrepackedInputProjectionBackward"
    expected = torch.nn.functional.linear(x, weight, b)
    torch.testing.assert_close(projected, expected, atol=1e-5, rtol=1e-5)
    grad = torch.randn_like(expected)
    inputs = [x, weight] + ([b] if bias else [])
    assert_same(torch.autograd.grad(projected, inputs, grad), torch.autograd.grad(expected, inputs, grad), 1e-5)
    def path(*args):
        return type(products.input_projection(*args).grad_fn).__name__

    assert path(x.double(), weight.double(), None) != "PrepackedInputProjectionBackward"  # float64: F.linear
    monkeypatch.setattr(products, "INPUT_PREPACK_MIN_PRODUCTS", 10 ** 9)
    assert path(x, weight, b) != "PrepackedInputProjectionBackward"  # small products: F.linear


@pytest.mark.parametrize("name", sorted(ZOO))
def test_compiled_loops_equal_eager_loops(name):
    cell = make(name)
    x, state = random_inputs(cell)
    assert_loops_agree(cell, x, state, lengths_mask([T, 3, 1]), 1, eager_loops, 1e-6)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_step_by_step_equals_the_sequence(name):
    """Decoding one step at a time with positions t gives the sequence's outputs (ELSTM's s_t)."""
    cell = make(name, dtype=torch.float64)
    x = torch.randn(T, B, M, dtype=torch.float64)
    state = cell.initial_state(B, x)
    out, final = cell.sequence(cell.project_input(x), state)
    for t in range(T):
        h, state = cell(x[t], state, t)
        torch.testing.assert_close(h, out[t])
    assert_same(state, final, 1e-12)


@pytest.mark.parametrize("name", sorted(name for name in ZOO if make(name).hh_chunks == 0))
def test_input_only_gates_need_no_per_step_matrix_product(name):
    cell = make(name)
    x = torch.randn(40, B, M, requires_grad=True)
    layer = Recurrent(cell)
    layer(x)  # compile first
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        layer(x)[0].sum().backward()
    products = [e for e in profile.events() if e.name in ("aten::mm", "aten::addmm", "aten::bmm", "aten::matmul")]
    assert len(products) <= 3  # the input projection and its two gradients, not one per step


def test_every_cell_runs_in_a_layer_with_lengths_and_backward():
    for name in sorted(ZOO):
        layer = Recurrent(make(name), reverse=True)
        x = torch.randn(T, B, M, requires_grad=True)
        out, _ = layer(x, torch.tensor([T, 3, 2]))
        out.sum().backward()
        assert torch.isfinite(x.grad).all(), name


FAST_LOOPS = (SRNLoop, LSTMLoop, GRULoop, InputGatesLoop, LinearScan)  # the fast loops' entries


def record_loops(monkeypatch, cell) -> list[str]:
    """Make every fast loop's entry and ``cell.reference_sequence`` log their calls (by name)
    into the returned list, and then run as before."""
    calls: list[str] = []

    def logged(name, run):
        def call(*args, **kwargs):
            calls.append(name)
            return run(*args, **kwargs)
        return call

    for loop in FAST_LOOPS:
        monkeypatch.setattr(loop, "apply", logged(loop.__name__, loop.apply))
    monkeypatch.setattr(cell, "reference_sequence", logged("reference", cell.reference_sequence))
    return calls


@pytest.mark.parametrize("project_under_autocast", [True, False], ids=["bf16_input", "fp32_input"])
@pytest.mark.parametrize("name", sorted(ZOO))
def test_autocast_runs_the_reference_loop(name, project_under_autocast, monkeypatch):
    """Under autocast the fast loops step aside: no fast loop runs, the step-by-step loop does,
    and the outputs and final state are exactly the reference loop's under the same autocast.
    Both with the input projected under autocast (bfloat16, also another dtype than the
    weights) and projected before (float32, the weights' dtype: only autocast can turn the fast
    loop away). Without autocast the same call takes a fast loop and never the reference one."""
    cell = make(name)
    calls = record_loops(monkeypatch, cell)
    x = torch.randn(T, B, M)
    mask = lengths_mask([T, 3, 1])

    def run():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            xp = cell.project_input(x) if project_under_autocast else projected
            return xp.dtype, cell.sequence(xp, cell.initial_state(B, x), mask)

    projected = cell.project_input(x)
    plain, _ = cell.sequence(projected, cell.initial_state(B, x), mask)
    assert calls and "reference" not in calls, calls  # without autocast: a fast loop
    calls.clear()
    dtype, (out, final) = run()
    assert calls == ["reference"], calls  # under autocast: the reference loop alone
    assert dtype == (torch.bfloat16 if project_under_autocast else torch.float32)
    with reference_loops():
        _, (expected, expected_final) = run()
    assert_same((out, *final), (expected, *expected_final), 0)  # exactly, dtypes too
    # a sanity bound only: bfloat16 keeps 8 bits, so 5 steps stay within a few hundredths
    torch.testing.assert_close(out.float(), plain, atol=0.05, rtol=0.05)


def test_compile_failure_falls_back_to_eager(monkeypatch):
    def refuse(function):
        raise RuntimeError("no TorchScript here")

    monkeypatch.setattr(torch.jit, "script", refuse)

    def double(x: torch.Tensor) -> torch.Tensor:
        return 2 * x

    run = scripted(double)
    with pytest.warns(RuntimeWarning, match="TorchScript could not compile double"):
        assert torch.equal(run(torch.ones(2)), torch.full((2,), 2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, then quietly eager
        assert torch.equal(run(torch.ones(2)), torch.full((2,), 2.0))


def test_scripting_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("RNNREPRO_TORCHSCRIPT", "0")
    monkeypatch.setattr(torch.jit, "script", lambda f: pytest.fail("scripted although switched off"))

    def identity(x: torch.Tensor) -> torch.Tensor:
        return x

    assert compiled._compile(identity) is identity


@pytest.mark.parametrize("name", sorted(ZOO))
def test_identity_recurrent_init(name):
    """recurrent_init="identity" (pru paper Sec. 4) makes every H x H block of W_hh the
    identity and leaves the other weights as before; cells without W_hh refuse it."""
    def built(**params):
        torch.manual_seed(0)
        return build_cell(name, M, N, **params)

    uniform = built()
    if uniform.hh_chunks == 0:
        with pytest.raises(ValueError, match="see only the input"):
            built(recurrent_init="identity")
        return
    identity = built(recurrent_init="identity")
    blocks = identity.weight_hh.detach().split(N)
    assert len(blocks) == identity.hh_chunks
    for block in blocks:
        assert torch.equal(block, torch.eye(N))
    for (key, before), (_, after) in zip(uniform.named_parameters(), identity.named_parameters()):
        if key != "weight_hh":
            assert torch.equal(before, after), key
    assert "recurrent_init='identity'" in repr(identity)


def test_unknown_recurrent_init_names_the_choices():
    with pytest.raises(ValueError, match="uniform, identity.*'orthogonal'"):
        build_cell("lstm", M, N, recurrent_init="orthogonal")
