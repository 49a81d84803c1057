"""Elman's simple recurrent network (SRN)."""
from __future__ import annotations

import torch
from torch import Tensor

from .base import RecurrentCell, State
from .registry import CELLS


@CELLS.register("srn")
class SRNCell(RecurrentCell):
    """Elman SRN with tanh (elstm paper eq. 1 with f = tanh; tutorial paper eq. 1):

        h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)

    Equals ``torch.nn.RNNCell(nonlinearity="tanh")`` with the same weights.
    """

    num_chunks = 1
    hh_chunks = 1
    state_count = 1

    def step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State]:
        h = torch.tanh(xp_t + self.recurrent(state[0]))
        return h, (h,)
