"""tanh through the logistic function, for the fast loops.

On this CPU torch's float32 tanh takes about 4 ns per element against 0.6 ns for sigmoid, so
the fast loops compute tanh(x) = 2σ(2x) - 1. The two agree to within 2e-7 in float32 (about
one unit in the last place of values near ±1) and 1e-16 in float64: float rounding, not a
different function. The step-by-step reference loops keep torch.tanh.
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable


def tanh_from_sigmoid_(s: Tensor) -> Tensor:
    """In place: σ(2x) -> tanh(x) = 2σ(2x) - 1."""
    return s.mul_(2).sub_(1)


class _Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        y = tanh_from_sigmoid_(torch.sigmoid(x * 2))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: Tensor) -> Tensor:
        (y,) = ctx.saved_tensors
        return grad - grad * y * y


def tanh(x: Tensor) -> Tensor:
    """tanh(x) as 2σ(2x) - 1, with derivative 1 - tanh²(x)."""
    return _Tanh.apply(x)
