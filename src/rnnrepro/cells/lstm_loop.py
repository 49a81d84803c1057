"""The time loop of the LSTM family whose gates see h_{t-1}, with a hand-written backward.

One loop covers LSTM, ELSTM, LSTM+, PRU, PRU+ and the wsum ablations (see :class:`LSTMCell`).
The recurrent chunks (those multiplied by W_hh) lead the projected input, in the order
i, f, [g], [o]: g is there when the content sees h_{t-1} ("srnn" content), o when there is an
output gate. A step (biases already in ``xr``):

    a = [σ(i), σ(f), tanh(g) or -, σ(o) or -]  of  xr_t + W_hh h_{t-1}
          (tanh(g) computed as 2σ(2g) - 1, see :mod:`.activations`)
    c_t = f ⊙ c_{t-1} + i ⊙ u_t        u_t = s_t ⊙ tanh(g) (srnn content) or the given u_t
    ĥ_t = o ⊙ tanh(c_t + b_c)          (tanh(c_t + b_c) without an output gate)
    h_t = tanh(W_ff ĥ_t + b_ff)         (PRU+ feed-forward; else h_t = ĥ_t; tanh as 2σ(2a) - 1)

Forward per step: one matrix product (two with the feed-forward) and about six element-wise
operations. Backward per step: the same matrix products and about five element-wise
operations; every factor that does not depend on the incoming gradient (gate derivatives,
c_{t-1}, tanh(c_t)) is computed for the whole sequence before the loop, and the weight
gradients are one matrix product over all steps after it.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from .compiled import scripted
from .products import prepacked


@scripted
def lstm_forward(xr: Tensor, u: Optional[Tensor], scale: Optional[Tensor], h: Tensor, c: Tensor,
                 weight_t: Tensor, packed: Optional[Tensor], bias_cell: Optional[Tensor],
                 weight_ff_t: Optional[Tensor], packed_ff: Optional[Tensor], bias_ff: Optional[Tensor],
                 mask: Optional[Tensor], content_recurrent: bool, output_gate: bool):
    steps, batch, width = xr.shape
    size = h.shape[1]
    o_slot = 3 if content_recurrent else 2
    acts = torch.empty_like(xr)
    cells = xr.new_empty(steps, batch, size)
    squashed = torch.empty_like(cells)
    out = torch.empty_like(cells)
    has_ff = weight_ff_t is not None
    hats = torch.empty_like(cells) if has_ff and output_gate else squashed
    if not output_gate and not has_ff:
        squashed = out
        hats = out
    h_states = out if mask is None else torch.empty_like(cells)
    c_states = cells if mask is None else torch.empty_like(cells)
    zeros = torch.zeros_like(h)
    for t in range(steps):
        if packed is not None:
            pre = torch.ops.mkldnn._linear_pointwise(h, xr[t], packed, None, "add")
        else:
            pre = torch.addmm(xr[t], h, weight_t)
        a = torch.sigmoid(pre, out=acts[t])
        if content_recurrent:  # the g chunk of xr and W_hh comes doubled: tanh(x) = 2σ(2x) - 1
            g = a[:, 2 * size:3 * size].mul_(2).sub_(1)
            if scale is not None:
                g = g * scale[t]
        else:
            assert u is not None
            g = u[t]
        c_new = torch.addcmul(a[:, size:2 * size] * c, a[:, :size], g, out=cells[t])
        if bias_cell is not None:
            tc = torch.tanh(c_new + bias_cell, out=squashed[t])
        else:
            tc = torch.tanh(c_new, out=squashed[t])
        if output_gate:
            hat = torch.mul(a[:, o_slot * size:(o_slot + 1) * size], tc, out=hats[t] if has_ff else out[t])
        else:
            hat = tc
        if weight_ff_t is not None:  # W_ff and b_ff come doubled: tanh(a) = 2σ(2a) - 1
            if packed_ff is not None:
                z = torch.ops.mkldnn._linear_pointwise(hat, zeros, packed_ff, bias_ff, "add")
            elif bias_ff is not None:
                z = torch.addmm(bias_ff, hat, weight_ff_t)
            else:
                z = torch.mm(hat, weight_ff_t)
            h_new = torch.sigmoid(z, out=out[t]).mul_(2).sub_(1)
        else:
            h_new = hat
        if mask is not None:
            h = torch.where(mask[t], h_new, h, out=h_states[t])
            c = torch.where(mask[t], c_new, c, out=c_states[t])
        else:
            h = h_new
            c = c_new
    return out, h_states, c_states, acts, squashed, hats


@scripted
def lstm_backward(grad_out: Tensor, grad_h: Tensor, grad_c: Tensor, factors: Tensor,
                  out_factor: Optional[Tensor], cell_factor: Tensor, forget: Tensor, weight: Tensor,
                  packed_back: Optional[Tensor], weight_ff: Optional[Tensor], packed_ff_back: Optional[Tensor],
                  ff_derivative: Optional[Tensor], keep: Optional[Tensor]):
    """Per-step gradients of the recurrent pre-activations, of c_t, of ĥ_t and of the
    feed-forward pre-activation, and the gradients of h_0 and c_0."""
    steps, batch, size = grad_out.shape
    leading = factors.shape[2]  # i, f and (srnn content) g: the chunks driven by dL/dc_t
    grad_pre = grad_out.new_empty(steps, batch, weight.shape[0])
    grad_cells = torch.empty_like(grad_out)
    grad_hats = torch.empty_like(grad_out)
    grad_ff = torch.empty_like(grad_out)
    dh_carry = grad_h
    dc_carry = grad_c
    zeros = torch.zeros_like(grad_h)
    for t in range(steps - 1, -1, -1):
        has_ff = weight_ff is not None and ff_derivative is not None
        dh_out = grad_ff[t] if has_ff else grad_hats[t]  # where dL/dh_t goes: no copy without W_ff
        if keep is not None:
            dh = torch.addcmul(grad_out[t], keep[t], dh_carry, out=dh_out)
            dh_passed = dh_carry - keep[t] * dh_carry
            dc_in = keep[t] * dc_carry
            dc_passed = dc_carry - dc_in
        else:
            dh = torch.add(grad_out[t], dh_carry, out=dh_out)
            dh_passed = None
            dc_in = dc_carry
            dc_passed = None
        if weight_ff is not None and ff_derivative is not None:
            dz = dh.mul_(ff_derivative[t])
            if packed_ff_back is not None:
                dhat = grad_hats[t].copy_(torch.ops.mkldnn._linear_pointwise(dz, zeros, packed_ff_back, None, "add"))
            else:
                dhat = torch.mm(dz, weight_ff, out=grad_hats[t])
        else:
            dhat = dh
        dc = torch.addcmul(dc_in, dhat, cell_factor[t], out=grad_cells[t])
        block = grad_pre[t]
        torch.mul(dc.unsqueeze(1), factors[t], out=block[:, :leading * size].view(batch, leading, size))
        if out_factor is not None:
            torch.mul(dhat, out_factor[t], out=block[:, leading * size:])
        if dh_passed is not None and dc_passed is not None:
            if packed_back is not None:
                dh_carry = torch.ops.mkldnn._linear_pointwise(block, dh_passed, packed_back, None, "add")
            else:
                dh_carry = torch.addmm(dh_passed, block, weight)
            dc_carry = torch.addcmul(dc_passed, dc, forget[t])
        else:
            if packed_back is not None:
                dh_carry = torch.ops.mkldnn._linear_pointwise(block, zeros, packed_back, None, "add")
            else:
                dh_carry = block.mm(weight)
            dc_carry = dc * forget[t]
    return grad_pre, grad_cells, grad_hats, grad_ff, dh_carry, dc_carry


class LSTMLoop(torch.autograd.Function):
    """The loop above over a sequence. Arguments (None where a cell has no such part):

    xr (T, B, R) recurrent-chunk pre-activations from the input, biases included;
    u (T, B, H) content written to the memory when it does not see h_{t-1} (scale included);
    scale (T, 1, H) per-position scale of an "srnn" content (ELSTM); h0, c0 (B, H);
    weight_hh (R, H); bias_cell (H); weight_ff (H, H), bias_ff (H); mask (T, B, 1) bool;
    content_recurrent, output_gate: the layout flags.
    Returns outputs (T, B, H), h_T, c_T.
    """

    @staticmethod
    def forward(ctx, xr, u, scale, h0, c0, weight_hh, bias_cell, weight_ff, bias_ff, mask,
                content_recurrent: bool, output_gate: bool):
        batch, size = h0.shape
        if content_recurrent:  # double the g chunk so that one sigmoid gives tanh (see loop)
            doubling = xr.new_ones(xr.shape[-1])
            doubling[2 * size:3 * size] = 2
            xr, weight_used = xr * doubling, weight_hh * doubling.unsqueeze(1)
        else:
            xr, weight_used = xr.contiguous(), weight_hh
        ff_doubled = weight_ff * 2 if weight_ff is not None else None
        out, h_states, c_states, acts, squashed, hats = lstm_forward(
            xr, u.contiguous() if u is not None else None, scale, h0, c0, weight_used.t(),
            prepacked(weight_used, batch), bias_cell, ff_doubled.t() if ff_doubled is not None else None,
            prepacked(ff_doubled, batch), bias_ff * 2 if bias_ff is not None else None, mask,
            content_recurrent, output_gate)
        ctx.flags = (content_recurrent, output_gate, bias_ff is not None)
        ctx.save_for_backward(u, scale, h0, c0, weight_hh, weight_ff, mask,
                              out, h_states, c_states, acts, squashed, hats)
        return out, h_states[-1].clone(), c_states[-1].clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_h, grad_c):
        (u, scale, h0, c0, weight_hh, weight_ff, mask,
         out, h_states, c_states, acts, squashed, hats) = ctx.saved_tensors
        content_recurrent, output_gate, has_bias_ff = ctx.flags
        batch, size = h0.shape
        i, f = acts[..., :size], acts[..., size:2 * size]
        slope = torch.addcmul(acts, acts, acts, value=-1)  # σ' = σ(1 - σ) for every sigmoid chunk
        # factors[t, :, k] = d c_t / d(pre-activation of chunk k) for k = i, f, [g]
        factors = acts.new_empty(*acts.shape[:2], 3 if content_recurrent else 2, size)
        if content_recurrent:
            g = acts[..., 2 * size:3 * size]
            written = g * scale if scale is not None else g
            torch.mul(i, torch.addcmul(torch.ones_like(g), g, g, value=-1), out=factors[:, :, 2])
            if scale is not None:
                factors[:, :, 2].mul_(scale)
        else:
            written = u
        torch.mul(written, slope[..., :size], out=factors[:, :, 0])
        torch.mul(c_states[:-1], slope[1:, :, size:2 * size], out=factors[1:, :, 1])
        torch.mul(c0, slope[0, :, size:2 * size], out=factors[0, :, 1])
        tanh_slope = torch.addcmul(torch.ones_like(squashed), squashed, squashed, value=-1)
        if output_gate:
            o_slot = 3 if content_recurrent else 2
            cell_factor = tanh_slope.mul_(acts[..., o_slot * size:(o_slot + 1) * size])
            out_factor = squashed * slope[..., o_slot * size:(o_slot + 1) * size]
        else:
            cell_factor, out_factor = tanh_slope, None
        keep = mask.to(out.dtype) if mask is not None else None
        ff_derivative = torch.addcmul(torch.ones_like(out), out, out, value=-1) if weight_ff is not None else None
        grad_pre, grad_cells, grad_hats, grad_ff, grad_h0, grad_c0 = lstm_backward(
            grad_out.contiguous(), grad_h.contiguous(), grad_c.contiguous(), factors, out_factor,
            cell_factor, f.contiguous(), weight_hh, prepacked(weight_hh.t(), batch), weight_ff,
            prepacked(weight_ff.t(), batch) if weight_ff is not None else None, ff_derivative, keep)

        # dW_hh = Σ_t dpre_t^T h_{t-1}, over all steps at once
        grad_weight_hh = torch.addmm(grad_pre[0].t().mm(h0), grad_pre[1:].flatten(0, 1).t(),
                                     h_states[:-1].flatten(0, 1))
        needs = ctx.needs_input_grad
        grad_u = grad_cells * i if u is not None and needs[1] else None
        grad_scale = ((grad_cells * i * g).sum(1, keepdim=True)
                      if content_recurrent and scale is not None and needs[2] else None)
        grad_bias_cell = (grad_hats * cell_factor).sum((0, 1)) if needs[6] else None
        grad_weight_ff = grad_bias_ff = None
        if weight_ff is not None:
            grad_weight_ff = grad_ff.flatten(0, 1).t().mm(hats.flatten(0, 1))
            grad_bias_ff = grad_ff.sum((0, 1)) if has_bias_ff else None
        return (grad_pre, grad_u, grad_scale, grad_h0, grad_c0, grad_weight_hh, grad_bias_cell,
                grad_weight_ff, grad_bias_ff, None, None, None)
