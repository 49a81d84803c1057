"""The time loop of Elman's SRN, h_t = tanh(xp_t + W_hh h_{t-1}), with a hand-written backward
(used by the SRN and by LSTM−GATES, whose one chunk is the same S-RNN)."""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from .compiled import scripted
from .products import prepacked


@scripted
def srn_forward(xp: Tensor, h: Tensor, weight_t: Tensor, packed: Optional[Tensor], mask: Optional[Tensor]):
    out = torch.empty_like(xp)
    states = out if mask is None else torch.empty_like(xp)
    for t in range(xp.shape[0]):
        if packed is not None:
            pre = torch.ops.mkldnn._linear_pointwise(h, xp[t], packed, None, "add")
        else:
            pre = torch.addmm(xp[t], h, weight_t)
        new = torch.tanh(pre, out=out[t])
        if mask is not None:
            h = torch.where(mask[t], new, h, out=states[t])
        else:
            h = new
    return out, states


@scripted
def srn_backward(grad_out: Tensor, grad_h: Tensor, derivative: Tensor, weight: Tensor,
                 packed_back: Optional[Tensor], keep: Optional[Tensor]):
    """dL/d(pre-activation) for every step; ``keep`` is the float mask (1 real, 0 padding)."""
    grad_pre = torch.empty_like(grad_out)
    carry = grad_h
    for t in range(grad_out.shape[0] - 1, -1, -1):
        if keep is not None:
            grad_new = torch.addcmul(grad_out[t], keep[t], carry)
            passed = carry - keep[t] * carry
        else:
            grad_new = grad_out[t] + carry
            passed = torch.zeros_like(carry)
        pre = torch.mul(grad_new, derivative[t], out=grad_pre[t])
        if packed_back is not None:
            carry = torch.ops.mkldnn._linear_pointwise(pre, passed, packed_back, None, "add")
        elif keep is not None:
            carry = torch.addmm(passed, pre, weight)
        else:
            carry = pre.mm(weight)
    return grad_pre, carry


class SRNLoop(torch.autograd.Function):
    """h_t = tanh(xp_t + W h_{t-1}) over a sequence (biases already in ``xp``)."""

    @staticmethod
    def forward(ctx, xp: Tensor, h0: Tensor, weight: Tensor, mask: Tensor | None):
        xp = xp.contiguous()
        out, states = srn_forward(xp, h0, weight.t(), prepacked(weight, h0.shape[0]), mask)
        ctx.save_for_backward(out, states, h0, weight, mask)
        return out, states[-1].clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out: Tensor, grad_h: Tensor):
        out, states, h0, weight, mask = ctx.saved_tensors
        keep = mask.to(out.dtype) if mask is not None else None
        grad_pre, grad_h0 = srn_backward(grad_out.contiguous(), grad_h.contiguous(),
                                         1 - out * out, weight, prepacked(weight.t(), h0.shape[0]), keep)
        previous = torch.cat([h0.unsqueeze(0), states[:-1]])
        grad_weight = grad_pre.flatten(0, 1).t().mm(previous.flatten(0, 1))
        return grad_pre, grad_h0, grad_weight, None
