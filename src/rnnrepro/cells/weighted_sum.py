"""The memory of a gated cell as an element-wise weighted sum of its contents.

For the LSTM family, unrolling c_t = f_t ⊙ c_{t-1} + i_t ⊙ c̃_t gives (wsum paper eq. 8)

    c_t = Σ_{j=1..t} w_j^t ⊙ c̃_j + (Π_{k=1..t} f_k) ⊙ c_0,     w_j^t = i_j ⊙ Π_{k=j+1..t} f_k,

the last term vanishing for the usual c_0 = 0. The elstm paper calls w_j^T ⊙ c̃_j the memory
response to input j (eq. 26); for ELSTM the written content carries the scale, so
w_j^t = s_j ⊙ i_j ⊙ Π f_k (eqs. 22, 27). The simplified GRU (elstm eq. 19) and the GRU
(wsum footnote 1) have the same form with f = z, i = 1 - z, c̃ = h̃ (or n) and c = h.

    terms = memory_terms(cell, x, lengths)        # gates and contents of a (trained) cell
    summed = weighted_sum(terms)                  # weights (T, T, B, H): [t, j] = w_j^t
    summed.response()                             # eqs. 26-27 at the last step: (T, B, H)
    summed.weights.norm(dim=-1)                   # wsum Table 5 heat maps: ‖w_j^t‖₂, (T, T, B)

Time indices here are 0-based: ``weights[t, j]`` is the weight at step t on the content of
step j, zero for j > t. Padded steps (``lengths``) have forget 1 and write 0, so they neither
add content nor decay the memory.
"""
from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from .base import MemoryTerms, RecurrentCell, State


def memory_terms(cell: RecurrentCell, x: Tensor, lengths: Tensor | None = None,
                 state: State | None = None, t: int = 0) -> MemoryTerms:
    """Forget gates, write gates (s ⊙ i), contents and memories of ``cell`` over ``x`` (T, B, input).

    Raises TypeError for cells without a gated memory (SRN, LSTM−GATES).
    """
    if state is None:
        state = cell.initial_state(x.shape[1], x)
    mask = None
    if lengths is not None:
        positions = torch.arange(x.shape[0], device=x.device).unsqueeze(1)
        mask = (positions < lengths.to(x.device).unsqueeze(0)).unsqueeze(2)
    return cell.memory_terms(cell.project_input(x), state, mask, t)


class WeightedSum(NamedTuple):
    """c_t = Σ_j weights[t, j] ⊙ content[j] + carry[t] ⊙ initial, for every step t."""

    weights: Tensor  # (T, T, B, H): [t, j] = w_j^t = write_j ⊙ Π_{k=j+1..t} forget_k, 0 for j > t
    content: Tensor  # (T, B, H): c̃_j
    carry: Tensor  # (T, B, H): Π_{k=1..t} forget_k, the weight on the initial memory
    initial: Tensor  # (B, H): the memory before the first step

    def memory(self) -> Tensor:
        """The memories c_1..c_T the sum gives, (T, B, H)."""
        return (self.weights * self.content.unsqueeze(0)).sum(1) + self.carry * self.initial

    def response(self, t: int = -1) -> Tensor:
        """Memory response at step ``t`` to every input j (elstm eqs. 26-27): w_j^t ⊙ c̃_j, (T, B, H)."""
        return self.weights[t] * self.content


def weighted_sum(terms: MemoryTerms, initial: Tensor | None = None) -> WeightedSum:
    """The weights w_j^t of wsum eq. 8 (elstm eqs. 22, 26-27) from a cell's memory terms.

    ``initial`` is the memory before the first step (default 0, as in the papers).
    """
    forget, write = terms.forget, terms.write
    steps = forget.shape[0]
    weights = forget.new_zeros(steps, *forget.shape)
    for t in range(steps):
        if t:
            weights[t, :t] = weights[t - 1, :t] * forget[t]
        weights[t, t] = write[t]
    carry = torch.cumprod(forget, dim=0)
    if initial is None:
        initial = torch.zeros_like(forget[0])
    return WeightedSum(weights, terms.content, carry, initial)
