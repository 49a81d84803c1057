"""Gated recurrent unit (Cho et al.), in torch.nn.GRU's gate order."""
from __future__ import annotations

import torch
from torch import Tensor

from .base import RecurrentCell, State
from .registry import CELLS


@CELLS.register("gru")
class GRUCell(RecurrentCell):
    """GRU (elstm paper eqs. 12-15), written as torch.nn.GRU computes it. Gate order r, z, n:

        r_t = σ(W_ir x_t + b_ir + W_hr h_{t-1} + b_hr)
        z_t = σ(W_iz x_t + b_iz + W_hz h_{t-1} + b_hz)
        n_t = tanh(W_in x_t + b_in + r_t ⊙ (W_hn h_{t-1} + b_hn))
        h_t = (1 - z_t) ⊙ n_t + z_t ⊙ h_{t-1}
    """

    num_chunks = 3
    hh_chunks = 3
    state_count = 1

    def step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State]:
        (h,) = state
        xr, xz, xn = xp_t.chunk(3, dim=1)
        hr, hz, hn = self.recurrent(h).chunk(3, dim=1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        return h, (h,)
