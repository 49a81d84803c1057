"""The LSTM family with gates that see only the input (I_t = X_t), as one autograd Function.

Every gate is computed for the whole sequence at once; the only sequential part is the scan
c_t = f_t ⊙ c_{t-1} + w_t (:mod:`.scan`), one fused multiply-add per step and no matrix
product. Forward, with pre-activations xp (T, B, chunks·H) in the cell's chunk order:

    i, f, o = σ(·),  g = tanh(·) (or the identity for a "linear" content),  w = s ⊙ i ⊙ g
    c_t = f_t ⊙ c_{t-1} + w_t            (padded steps: f = 1, w = 0, the state is carried)
    h_t = o_t ⊙ tanh(c_t + b)            (tanh(c_t + b) without an output gate)

The backward is written out so that each term is one pass over (T, B, H) arrays, with the
scan run backwards for dL/dc (:func:`.scan.scan_backward`), instead of autograd's graph of
chunks, activations and their concatenated gradients.
"""
from __future__ import annotations

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from .activations import tanh_from_sigmoid_
from .scan import scan_backward, scan_forward


def _shifted(states: Tensor, first: Tensor) -> Tensor:
    """[first, states_0, ..., states_{T-2}]: the previous state of every step."""
    return torch.cat([first.unsqueeze(0), states[:-1]])


class InputGatesLoop(torch.autograd.Function):
    """Arguments: xp (T, B, K·H) pre-activations; scale (T, 1, H) or None; bias_cell (H) or None;
    c0 (B, H); mask (T, B, 1) bool or None; slots: the chunk index of i, f, g, o (o = -1 without
    an output gate); tanh_content: False for a "linear" content. Returns outputs (T, B, H) and
    every memory state c_1..c_T (T, B, H)."""

    @staticmethod
    def forward(ctx, xp: Tensor, scale, bias_cell, c0: Tensor, mask, slots: tuple[int, int, int, int],
                tanh_content: bool):
        size = c0.shape[1]
        i_slot, f_slot, g_slot, o_slot = slots

        def chunk(tensor, slot):
            return tensor[..., slot * size:(slot + 1) * size]

        doubling = xp.new_ones(xp.shape[-1])
        if tanh_content:  # tanh(g) = 2σ(2g) - 1: one sigmoid over every chunk
            doubling[g_slot * size:(g_slot + 1) * size] = 2
        acts = torch.sigmoid(xp * doubling)
        if tanh_content:
            tanh_from_sigmoid_(chunk(acts, g_slot))
        else:
            chunk(acts, g_slot).copy_(chunk(xp, g_slot))
        i, f, g = chunk(acts, i_slot), chunk(acts, f_slot), chunk(acts, g_slot)
        written = i * g
        if scale is not None:
            written.mul_(scale)
        if mask is None:
            states = scan_forward(f.contiguous(), written, c0)
            cells = states
        else:
            states = scan_forward(torch.where(mask, f, 1.0), torch.where(mask, written, 0.0), c0)
            cells = torch.addcmul(written, f, _shifted(states, c0))
        shifted = cells if bias_cell is None else cells + bias_cell
        squashed = tanh_from_sigmoid_(torch.sigmoid(shifted * 2))
        out = squashed * chunk(acts, o_slot) if o_slot >= 0 else squashed
        ctx.slots, ctx.tanh_content = slots, tanh_content
        ctx.save_for_backward(acts, scale, bias_cell, c0, mask, states, squashed)
        return out, states

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out: Tensor, grad_states: Tensor):
        acts, scale, bias_cell, c0, mask, states, squashed = ctx.saved_tensors
        i_slot, f_slot, g_slot, o_slot = ctx.slots
        size = c0.shape[1]

        def chunk(tensor, slot):
            return tensor[..., slot * size:(slot + 1) * size]

        i, f, g = chunk(acts, i_slot), chunk(acts, f_slot), chunk(acts, g_slot)
        slope = torch.addcmul(acts, acts, acts, value=-1)  # σ(1 - σ) of every sigmoid chunk
        grad_xp = torch.empty_like(acts)
        tanh_slope = torch.addcmul(torch.ones_like(squashed), squashed, squashed, value=-1)
        if o_slot >= 0:
            o = chunk(acts, o_slot)
            torch.mul(grad_out * squashed, chunk(slope, o_slot), out=chunk(grad_xp, o_slot))
            grad_cells = grad_out * o * tanh_slope  # dL/dc_t through h_t (the new c_t, even when padded)
        else:
            grad_cells = grad_out * tanh_slope
        grad_bias = grad_cells.sum((0, 1)) if bias_cell is not None and ctx.needs_input_grad[2] else None
        previous = _shifted(states, c0)
        if mask is None:  # dL/dc_t in total: the scan run backwards
            total = scan_backward(f.contiguous(), grad_cells + grad_states)
            grad_c0 = f[0] * total[0]
        else:
            keep = mask.to(acts.dtype)
            carried = torch.where(mask, f, 1.0)
            # dL/dstate_t = outside + f_{t+1} dL/dc_{t+1} (the next output) + carried_{t+1} dL/dstate_{t+1}
            through_next = torch.zeros_like(grad_states)
            torch.mul(f[1:], grad_cells[1:], out=through_next[:-1])
            state_total = scan_backward(carried.contiguous(), grad_states + through_next)
            total = torch.addcmul(grad_cells, keep, state_total)
            grad_c0 = f[0] * grad_cells[0] + carried[0] * state_total[0]
        grad_written = total  # dL/dw_t
        torch.mul(grad_written * previous, chunk(slope, f_slot), out=chunk(grad_xp, f_slot))
        grad_scale = None
        if scale is not None:
            if ctx.needs_input_grad[1]:
                grad_scale = (grad_written * i * g).sum(1, keepdim=True)
            grad_written = grad_written * scale
        torch.mul(grad_written * g, chunk(slope, i_slot), out=chunk(grad_xp, i_slot))
        grad_g = torch.mul(grad_written, i, out=chunk(grad_xp, g_slot))
        if ctx.tanh_content:
            grad_g.mul_(torch.addcmul(torch.ones_like(g), g, g, value=-1))
        return grad_xp, grad_scale, grad_bias, grad_c0, None, None, None
