"""The element-wise linear recurrence c_t = a_t ⊙ c_{t-1} + b_t, with a hand-written backward.

Cells whose gates see only the input (simplified GRU, ELSTM with I_t = X_t) compute every
gate for the whole sequence at once; what is left sequential is this recurrence, one fused
multiply-add per step and no matrix product. Its gradient is the same recurrence run
backwards in time (with dL/dc_t the total gradient reaching c_t):

    dL/dc_t = g_t + a_{t+1} ⊙ dL/dc_{t+1},   dL/da_t = dL/dc_t ⊙ c_{t-1},   dL/db_t = dL/dc_t,

where g_t is the gradient from outside. On this 2-core CPU a plain loop beat parallel scans
(log-space cumsum, associative scan) for the sequence lengths of the papers (notes/stack.md).
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from .compiled import scripted


@scripted
def scan_forward(a: Tensor, b: Tensor, c0: Tensor) -> Tensor:
    states = torch.empty_like(b)
    c = c0
    for t in range(b.shape[0]):
        c = torch.addcmul(b[t], a[t], c, out=states[t])
    return states


@scripted
def scan_backward(a: Tensor, grad_states: Tensor) -> Tensor:
    """Total gradient reaching each c_t: the recurrence run backwards, a shifted by one step."""
    steps = grad_states.shape[0]
    total = torch.empty_like(grad_states)
    d = torch.select(total, 0, steps - 1)
    d.copy_(grad_states[steps - 1])
    for t in range(steps - 2, -1, -1):
        d = torch.addcmul(grad_states[t], a[t + 1], d, out=total[t])
    return total


class LinearScan(torch.autograd.Function):
    """All states of c_t = a_t ⊙ c_{t-1} + b_t: a, b (T, B, H), c0 (B, H) -> (T, B, H)."""

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor, c0: Tensor) -> Tensor:
        a, b = torch.broadcast_tensors(a.contiguous(), b.contiguous())
        states = scan_forward(a.contiguous(), b.contiguous(), c0.expand_as(b[0]).contiguous())
        ctx.save_for_backward(a, c0, states)
        return states

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_states: Tensor):
        a, c0, states = ctx.saved_tensors
        total = scan_backward(a, grad_states.contiguous())
        grad_a = None
        if ctx.needs_input_grad[0]:  # dL/da_t = dL/dc_t ⊙ c_{t-1}
            grad_a = torch.empty_like(total)
            torch.mul(total[1:], states[:-1], out=grad_a[1:])
            torch.mul(total[0], c0, out=grad_a[0])
        grad_c0 = a[0] * total[0] if ctx.needs_input_grad[2] else None
        return grad_a, total, grad_c0


def linear_scan(a: Tensor, b: Tensor, c0: Tensor) -> Tensor:
    """Every c_t of c_t = a_t ⊙ c_{t-1} + b_t for t = 1..T, from c_0 = ``c0``; shapes as LinearScan."""
    if b.shape[0] == 0:
        return b
    return LinearScan.apply(a, b, c0)
