"""The per-step matrix products of the time loops: plain ``torch.addmm``, or oneDNN's GEMM on a
weight prepacked once per sequence (oneDNN's reordered weight layout; nothing to do with packs
of runs, :mod:`rnnrepro.packing`).

A time loop multiplies the same W_hh by a small batch of rows (B = 20) at every step. On
this 2-core CPU (batch 20, 35 steps) oneDNN's packed GEMM did those products 20-30% faster
than MKL's addmm for the LSTM's W_hh at hidden size 512 (2048 x 512), but each call costs
about 50 us more, so it was slower for every weight under about a million entries (hidden
128-384). The loops therefore pack a weight once per sequence when it has at least
:data:`PREPACK_MIN_ENTRIES` entries, the tensors are float32 on the CPU and torch has oneDNN's
linear ops; otherwise they use addmm. Both give the same products up to float rounding.
``RNNREPRO_PREPACK=0`` in the environment turns prepacking off (:mod:`.switches`).
"""
from __future__ import annotations

import torch
from torch import Tensor

from .switches import switch_on

PREPACK_MIN_ENTRIES = 1 << 20
_available: list[bool] = []


def prepacking_available() -> bool:
    """oneDNN's packed linear ops exist and work in this torch build."""
    if not _available:
        try:
            weight = torch.ones(3, 2)
            packed = torch.ops.mkldnn._reorder_linear_weight(weight, 1)
            result = torch.ops.mkldnn._linear_pointwise(torch.ones(1, 2), torch.zeros(1, 3), packed, None, "add")
            _available.append(bool(torch.allclose(result, torch.full((1, 3), 2.0))))
        except (AttributeError, RuntimeError):
            _available.append(False)
    return _available[0]


def prepacking_enabled() -> bool:
    """Whether ``RNNREPRO_PREPACK`` (default on) lets the loops prepack their weights."""
    return switch_on("RNNREPRO_PREPACK")


def prepacked(weight: Tensor | None, batch: int) -> Tensor | None:
    """``weight`` (out, in) packed for ``x @ weight.T`` with ``batch`` rows of x, or None where
    the loops use addmm."""
    if (weight is None or weight.numel() < PREPACK_MIN_ENTRIES or weight.dtype != torch.float32
            or weight.device.type != "cpu" or not prepacking_enabled() or not prepacking_available()):
        return None
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach().contiguous(), batch)


# -- the input projection, once per sequence ------------------------------------------------
INPUT_PREPACK_MIN_PRODUCTS = 300_000_000


def input_projection(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``x @ weight.T + bias`` for any leading shape of ``x``: the projection of a whole
    sequence (T·B rows) that every cell computes outside its time loop.

    On the CPU in float32, when the product has at least :data:`INPUT_PREPACK_MIN_PRODUCTS`
    multiply-adds (rows x weight entries), the forward product is oneDNN's GEMM on the weight
    packed for this call. Measured here (packing included): 10-25 % faster than ``F.linear``
    for 700 x 512 rows by a 1536 x 512 or 2048 x 512 weight and for 2000 rows by a 512 x 512
    one, no gain for 700 rows by 512 x 512 (1.8e8 products), which keeps ``F.linear``. The
    backward is the same three products as ``F.linear``'s. ``RNNREPRO_PREPACK=0`` turns it off."""
    rows = x.numel() // x.shape[-1] if x.shape[-1] else 0
    if (rows * weight.numel() < INPUT_PREPACK_MIN_PRODUCTS
            or x.dtype != torch.float32 or weight.dtype != torch.float32 or x.device.type != "cpu"
            or weight.device.type != "cpu" or not prepacking_enabled() or not prepacking_available()):
        return torch.nn.functional.linear(x, weight, bias)
    return PrepackedInputProjection.apply(x, weight, bias)


class PrepackedInputProjection(torch.autograd.Function):
    """:func:`input_projection` on oneDNN's packed weight; gradients as ``F.linear``'s:
    dx = g W, dW = gᵀ x, db = Σ g over every row."""

    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        rows = x.reshape(-1, x.shape[-1])
        packed_weight = torch.ops.mkldnn._reorder_linear_weight(weight.detach().contiguous(), rows.shape[0])
        out = torch.ops.mkldnn._linear_pointwise(rows, packed_weight, bias, "none", [], "")
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return out.view(*x.shape[:-1], weight.shape[0])

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: Tensor):
        x, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        grad_rows = grad.reshape(-1, grad.shape[-1])
        grad_x = grad_rows.mm(weight).view(x.shape) if needs[0] else None
        grad_weight = grad_rows.t().mm(x.reshape(-1, x.shape[-1])) if needs[1] else None
        grad_bias = grad_rows.sum(0) if ctx.has_bias and needs[2] else None
        return grad_x, grad_weight, grad_bias
