"""Long short-term memory (Hochreiter & Schmidhuber), in torch.nn.LSTM's gate order."""
from __future__ import annotations

import torch
from torch import Tensor

from .base import RecurrentCell, State
from .registry import CELLS


@CELLS.register("lstm")
class LSTMCell(RecurrentCell):
    """LSTM (elstm paper eqs. 6-10; wsum paper eqs. 1-6). Gate order i, f, g, o as torch.nn.LSTM:

        i_t = σ(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)
        f_t = σ(W_if x_t + b_if + W_hf h_{t-1} + b_hf)
        g_t = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)
        o_t = σ(W_io x_t + b_io + W_ho h_{t-1} + b_ho)
        c_t = f_t ⊙ c_{t-1} + i_t ⊙ g_t
        h_t = o_t ⊙ tanh(c_t)

    State is (h, c).
    """

    num_chunks = 4
    hh_chunks = 4
    state_count = 2

    def step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State]:
        h, c = state
        gates = xp_t + self.recurrent(h)
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, (h, c)
