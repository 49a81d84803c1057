"""The GRU's time loop (torch.nn.GRU's equations) with a hand-written backward.

Per step forward: one matrix product and seven element-wise operations (tanh computed as
2σ(2a) - 1, see :mod:`.activations`). Per step backward:
one matrix product and three element-wise operations; every factor that does not depend on
the incoming gradient is computed for the whole sequence at once before the loop:

    dL/dh_{t-1} = z ⊙ dh + W_hh^T [dh ⊙ F_r, dh ⊙ F_z, dh ⊙ F_n],    with dh = dL/dh_t and
    F_z = (h_{t-1} - n) ⊙ z(1-z),  F_n = (1-z)(1-n²) ⊙ r,  F_r = (1-z)(1-n²) ⊙ (W_hn h_{t-1} + b_hn) ⊙ r(1-r).
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from .compiled import scripted
from .products import prepacked


@scripted
def gru_forward(xp: Tensor, h: Tensor, weight_t: Tensor, packed: Optional[Tensor], bias: Optional[Tensor],
                mask: Optional[Tensor]):
    steps, batch, width = xp.shape
    size = width // 3
    recurrent = torch.empty_like(xp)
    gates = xp.new_empty(steps, batch, 2 * size)
    candidate = xp.new_empty(steps, batch, size)
    out = torch.empty_like(candidate)
    states = out if mask is None else torch.empty_like(candidate)
    zeros = xp.new_zeros(batch, width)
    for t in range(steps):
        if packed is not None:
            hh = recurrent[t].copy_(torch.ops.mkldnn._linear_pointwise(h, zeros, packed, bias, "add"))
        elif bias is not None:
            hh = torch.addmm(bias, h, weight_t, out=recurrent[t])
        else:
            hh = torch.mm(h, weight_t, out=recurrent[t])
        x = xp[t]
        rz = torch.sigmoid(torch.add(x[:, :2 * size], hh[:, :2 * size]), out=gates[t])
        # the n chunk of xp, W_hh and b_hh comes doubled: tanh(a) = 2σ(2a) - 1
        n = torch.sigmoid(torch.addcmul(x[:, 2 * size:], rz[:, :size], hh[:, 2 * size:]),
                          out=candidate[t]).mul_(2).sub_(1)
        new = torch.addcmul(n, rz[:, size:], h - n, out=out[t])
        if mask is not None:
            h = torch.where(mask[t], new, h, out=states[t])
        else:
            h = new
    return out, states, gates, candidate, recurrent


@scripted
def gru_backward(grad_out: Tensor, grad_h: Tensor, factors: Tensor, update: Tensor, weight: Tensor,
                 packed_back: Optional[Tensor], keep: Optional[Tensor]):
    """dL/d(W_hh h + b_hh) and dL/dh_t (total) for every step, and dL/dh_0."""
    steps, batch, size = grad_out.shape
    grad_recurrent = grad_out.new_empty(steps, batch, 3 * size)
    grad_new = torch.empty_like(grad_out)
    carry = grad_h
    for t in range(steps - 1, -1, -1):
        if keep is not None:
            dh = torch.addcmul(grad_out[t], keep[t], carry, out=grad_new[t])
            direct = torch.addcmul(carry - keep[t] * carry, dh, update[t])
        else:
            dh = torch.add(grad_out[t], carry, out=grad_new[t])
            direct = dh * update[t]
        block = torch.mul(dh.unsqueeze(1), factors[t], out=grad_recurrent[t].view(batch, 3, size))
        if packed_back is not None:
            carry = torch.ops.mkldnn._linear_pointwise(block.view(batch, 3 * size), direct, packed_back, None, "add")
        else:
            carry = torch.addmm(direct, block.view(batch, 3 * size), weight)
    return grad_recurrent, grad_new, carry


class GRULoop(torch.autograd.Function):
    """torch.nn.GRU over a projected sequence: xp (T, B, 3H) = W_ih x + b_ih, gate order r, z, n."""

    @staticmethod
    def forward(ctx, xp: Tensor, h0: Tensor, weight: Tensor, bias: Tensor | None, mask: Tensor | None):
        size = h0.shape[1]
        doubling = xp.new_ones(3 * size)
        doubling[2 * size:] = 2  # n's pre-activation doubled, for tanh through one sigmoid
        doubled = weight * doubling.unsqueeze(1)
        out, states, gates, candidate, recurrent = gru_forward(
            xp * doubling, h0, doubled.t(), prepacked(doubled, h0.shape[0]),
            bias * doubling if bias is not None else None, mask)
        ctx.has_bias = bias is not None
        ctx.save_for_backward(states, gates, candidate, recurrent, h0, weight, mask)
        return out, states[-1].clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out: Tensor, grad_h: Tensor):
        states, gates, candidate, recurrent, h0, weight, mask = ctx.saved_tensors
        size = h0.shape[1]
        r, z, n = gates[..., :size], gates[..., size:], candidate
        previous = torch.cat([h0.unsqueeze(0), states[:-1]])
        through_n = (1 - z) * (1 - n * n)  # dh_t/d(pre-activation of n)
        hn = recurrent[..., 2 * size:] * 0.5  # W_hn h + b_hn (it ran doubled)
        factors = torch.stack([through_n * hn * r * (1 - r),
                               (previous - n) * z * (1 - z),
                               through_n * r], dim=2)
        keep = mask.to(states.dtype) if mask is not None else None
        grad_recurrent, grad_new, grad_h0 = gru_backward(grad_out.contiguous(), grad_h.contiguous(),
                                                         factors, z.contiguous(), weight,
                                                         prepacked(weight.t(), h0.shape[0]), keep)
        grad_xp = torch.cat([grad_recurrent[..., :2 * size], grad_new * through_n], dim=2)
        grad_weight = grad_recurrent.flatten(0, 1).t().mm(previous.flatten(0, 1))
        grad_bias = grad_recurrent.sum((0, 1)) if ctx.has_bias else None
        return grad_xp, grad_h0, grad_weight, grad_bias, None
