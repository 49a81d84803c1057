"""The per-step matrix products of the time loops: plain ``torch.addmm``, or oneDNN's GEMM on a
weight packed once per sequence.

A time loop multiplies the same W_hh by a small batch of rows (B = 20) at every step. On
this 2-core CPU (batch 20, 35 steps) oneDNN's packed GEMM did those products 20-30% faster
than MKL's addmm for the LSTM's W_hh at hidden size 512 (2048 x 512), but each call costs
about 50 us more, so it was slower for every weight under about a million entries (hidden
128-384). The loops therefore pack a weight once per sequence when it has at least
:data:`PACK_MIN_ENTRIES` entries, the tensors are float32 on the CPU and torch has oneDNN's
linear ops; otherwise they use addmm. Both give the same products up to float rounding.
``RNNREPRO_PACKED=0`` in the environment turns packing off.
"""
from __future__ import annotations

import os

import torch
from torch import Tensor

PACK_MIN_ENTRIES = 1 << 20
_available: list[bool] = []


def packing_available() -> bool:
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


def packing_enabled() -> bool:
    return os.environ.get("RNNREPRO_PACKED", "1").strip().lower() not in {"0", "false", "no", "off"}


def packed(weight: Tensor | None, batch: int) -> Tensor | None:
    """``weight`` (out, in) packed for ``x @ weight.T`` with ``batch`` rows of x, or None where
    the loops use addmm."""
    if (weight is None or weight.numel() < PACK_MIN_ENTRIES or weight.dtype != torch.float32
            or weight.device.type != "cpu" or not packing_enabled() or not packing_available()):
        return None
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach().contiguous(), batch)
