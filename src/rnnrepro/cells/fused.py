"""torch's fused RNN ops for the cells that are exactly torch's: the LSTM (torch.nn.LSTM) and
the GRU (torch.nn.GRU's form, see :class:`~rnnrepro.cells.gru.GRUCell`).

A cell that computes torch's equations runs a whole sequence, from the raw input x (T, B, input),
through ``torch._VF.lstm`` / ``torch._VF.gru`` on its own parameters (``weight_ih``, ``weight_hh``,
``bias_ih``, ``bias_hh``; a cell without ``bias_hh`` passes zeros that are not a parameter, a
cell without biases ``has_biases=False``). Padded batches go through
``pack_padded_sequence``, so the final state is the state after each sequence's last real step;
outputs at padded steps are zeros (callers ignore them). The layer asks the cell
(:meth:`RecurrentCell.fused_sequence`); this module holds the one switch, :func:`applies`.

Where it runs, ``RNNREPRO_FUSED`` in the environment:

``auto`` (default)
    where torch has a fused kernel for the call: cuDNN for CUDA tensors (LSTM and GRU, padded
    or not), oneDNN on the CPU (the LSTM in float32, every sequence full length). torch's other
    CPU paths (the GRU, packed sequences, float64) are a per-step loop of ATen ops with
    autograd through every step; measured on this 2-core CPU (B=20, input 512, T 35-100,
    H 128-512, forward + backward) they were slower than our TorchScript loops with their
    hand-written backward (GRU 1.1-1.4x our loop's time, padded LSTM 1.0-1.8x at one thread,
    up to 2.5x at two), while oneDNN's LSTM took 0.5-0.75x of it; so those calls keep our loops.
``always``
    wherever the cell is torch's, on any device, dtype and padding (the tests use it to check
    torch's packed and float64 paths, which are the cuDNN path's arguments, on the CPU).
``0`` / ``off``
    never: every cell runs our loops.

In every mode the fused op is skipped where the fast loops are (``reference_loops()``,
``cell.fast_loops = False``), under autocast (the reference loop runs there, as before), for
inputs in another dtype than the weights, and for empty sequences.
"""
from __future__ import annotations

import os
import warnings
from typing import Iterable

import torch
from torch import Tensor, nn

State = tuple[Tensor, ...]

#: The parameters torch's RNN ops take; a cell with any other parameter is not torch's cell.
TORCH_PARAMETERS = frozenset({"weight_ih", "weight_hh", "bias_ih", "bias_hh"})
MODES = ("auto", "always", "off")


def fused_mode() -> str:
    """``RNNREPRO_FUSED``: "auto" (default, also "1"), "always", or "off" ("0", "false", "no")."""
    value = os.environ.get("RNNREPRO_FUSED", "auto").strip().lower()
    if value in {"0", "false", "no", "off"}:
        return "off"
    if value in {"always", "all", "force"}:
        return "always"
    return "auto"


def torch_kernel(kind: str, x: Tensor, lengths: Tensor | None) -> str | None:
    """The fused kernel torch would run ``kind`` ("lstm", "gru") on for this call: "cuDNN",
    "oneDNN", or None (torch's per-step loop of ATen ops)."""
    if x.is_cuda:
        return "cuDNN" if torch.backends.cudnn.is_acceptable(x) else None
    if (kind == "lstm" and lengths is None and x.device.type == "cpu" and x.dtype == torch.float32
            and torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled):
        return "oneDNN"
    return None


def overrides_nothing(cell: nn.Module, base: type, methods: Iterable[str]) -> bool:
    """Whether ``cell``'s class inherits ``methods`` (the equations) from ``base`` unchanged and
    the cell has only torch's parameters: a subclass that changes the equations (ELSTM's scales
    and cell bias) or adds parameters is not torch's cell."""
    if not isinstance(cell, base):
        return False
    if any(getattr(type(cell), name) is not getattr(base, name) for name in methods):
        return False
    return {name for name, _ in cell.named_parameters(recurse=False)} <= TORCH_PARAMETERS


def applies(kind: str, cell: nn.Module, x: Tensor, lengths: Tensor | None) -> bool:
    """Whether a sequence of a cell that is torch's ``kind`` runs fused (see the module doc)."""
    mode = fused_mode()
    if mode == "off" or not cell.fast_loop_applies(x):  # fast loops off, autocast, dtype, T = 0
        return False
    if x.device != cell.weight_ih.device:
        return False
    return mode == "always" or torch_kernel(kind, x, lengths) is not None


def _parameters(cell: nn.Module) -> tuple[list[Tensor], bool]:
    weight_ih, weight_hh, bias_ih, bias_hh = cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh
    if bias_ih is None and bias_hh is None:
        return [weight_ih, weight_hh], False
    if bias_hh is None:  # recurrent_bias=False: b_hh = 0, not a parameter
        bias_hh = weight_hh.new_zeros(weight_hh.shape[0])
    if bias_ih is None:
        bias_ih = weight_ih.new_zeros(weight_ih.shape[0])
    return [weight_ih, weight_hh, bias_ih, bias_hh], True


def _needs_backward(tensors: Iterable[Tensor]) -> bool:
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def run(kind: str, cell: nn.Module, x: Tensor, state: State, lengths: Tensor | None = None) -> tuple[Tensor, State]:
    """Outputs (T, B, H) and final state of ``cell`` over ``x`` (T, B, input) from ``state``
    (tuple of (B, H)) through torch's fused ``kind`` op; ``lengths`` (B,) or None (full length).
    The caller has checked :func:`applies`."""
    params, has_biases = _parameters(cell)
    # the op's `train` only keeps what its backward needs (no dropout here): on whenever a
    # gradient can flow, in eval mode too (cuDNN refuses a backward after train=False)
    train = _needs_backward([x, *state, *params])
    hx = tuple(s.unsqueeze(0) for s in state)
    op = torch._VF.lstm if kind == "lstm" else torch._VF.gru
    hidden = hx if kind == "lstm" else hx[0]
    with warnings.catch_warnings():
        if x.is_cuda:  # the cell's parameters are separate tensors, not torch.nn's flat buffer
            warnings.filterwarnings("ignore", message="RNN module weights are not part of single contiguous chunk")
        if lengths is None:
            result = op(x, hidden, params, has_biases, 1, 0.0, train, False, False)
            out, finals = result[0], [f.squeeze(0) for f in result[1:]]
            return out, tuple(finals)
        steps = x.shape[0]
        lengths = lengths.to(device="cpu", dtype=torch.int64)
        empty = lengths == 0  # a sequence with no real step keeps its initial state
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.clamp(min=1), enforce_sorted=False)
        order = packed.sorted_indices
        if kind == "lstm":
            hidden = tuple(h.index_select(1, order) for h in hx)
        else:
            hidden = hidden.index_select(1, order)
        result = op(packed.data, packed.batch_sizes, hidden, params, has_biases, 1, 0.0, train, False)
    data, finals = result[0], result[1:]
    out, _ = nn.utils.rnn.pad_packed_sequence(
        nn.utils.rnn.PackedSequence(data, packed.batch_sizes, order, packed.unsorted_indices),
        total_length=steps)
    finals = [f.squeeze(0).index_select(0, packed.unsorted_indices) for f in finals]
    if bool(empty.any()):
        empty = empty.to(x.device).unsqueeze(1)
        finals = [torch.where(empty, initial, final) for initial, final in zip(state, finals)]
    return out, tuple(finals)


def sequence(kind: str, cell: nn.Module, x: Tensor, state: State,
             lengths: Tensor | None = None) -> tuple[Tensor, State] | None:
    """:func:`run` where :func:`applies`, else None (the layer then runs the cell's own loop)."""
    if not applies(kind, cell, x, lengths):
        return None
    return run(kind, cell, x, state, lengths)
