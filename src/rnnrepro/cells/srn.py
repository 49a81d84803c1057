"""Elman's simple recurrent network (SRN); its fast loop is in :mod:`.srn_loop`."""
from __future__ import annotations

import torch
from torch import Tensor

from .base import RecurrentCell, State, combined_bias
from .products import input_projection
from .registry import CELLS
from .srn_loop import SRNLoop


@CELLS.register("srn")
class SRNCell(RecurrentCell):
    """Elman SRN with tanh (elstm paper eq. 1 with f = tanh; tutorial paper eq. 1; wsum eq. 1):

        h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)

    Equals ``torch.nn.RNN(nonlinearity="tanh")`` with the same weights. State is (h,).
    ``project_input`` includes b_hh (it adds to the same pre-activation as b_ih).
    """

    num_chunks = 1
    hh_chunks = 1
    state_count = 1
    can_flatten = True  # drnn eq. 5 turns a stack of SRNs into one SRN

    def project_input(self, x: Tensor) -> Tensor:
        """``W_ih x + b_ih + b_hh``: both biases add to the same pre-activation, so they are
        added once, with the input product, outside the loop."""
        return input_projection(x, self.weight_ih, combined_bias(self.bias_ih, self.bias_hh))

    def step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State]:
        h = torch.tanh(torch.addmm(xp_t, state[0], self.weight_hh.t()))
        return h, (h,)

    def sequence(self, xp: Tensor, state: State, mask: Tensor | None = None,
                 t: int = 0) -> tuple[Tensor, State]:
        if not self.fast_loop_applies(xp):
            return self.reference_sequence(xp, state, mask, t)
        out, h = SRNLoop.apply(xp, state[0], self.weight_hh, mask)
        return out, (h,)

