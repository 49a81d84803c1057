"""Gated recurrent units: the GRU (Cho et al., torch.nn.GRU's form) and the simplified GRU
of the elstm paper, whose gates see only the input."""
from __future__ import annotations

import torch
from torch import Tensor

from . import activations, fused
from .base import MemoryTerms, RecurrentCell, State
from .gru_loop import GRULoop
from .registry import CELLS
from .scan import linear_scan


@CELLS.register("gru")
class GRUCell(RecurrentCell):
    """GRU (elstm paper eqs. 12-15), written as torch.nn.GRU computes it. Gate order r, z, n:

        r_t = σ(W_ir x_t + b_ir + W_hr h_{t-1} + b_hr)
        z_t = σ(W_iz x_t + b_iz + W_hz h_{t-1} + b_hz)
        n_t = tanh(W_in x_t + b_in + r_t ⊙ (W_hn h_{t-1} + b_hn))
        h_t = (1 - z_t) ⊙ n_t + z_t ⊙ h_{t-1}

    The paper's eq. 14 applies the reset gate before the matrix, U(r_t ⊙ h_{t-1}) (Cho et
    al.'s first form); torch.nn.GRU and cuDNN apply it after, r_t ⊙ (U h_{t-1}); we keep
    torch's form so that the cell equals torch.nn.GRU. Both have 3N(M+N+1) parameters with
    one bias per gate (``recurrent_bias=False``, Table 1). State is (h,).

    Because the cell is torch's form, a layer may run it through torch's fused GRU op (cuDNN
    on a GPU; see :mod:`.fused`), which computes the same r_t ⊙ (W_hn h_{t-1} + b_hn): the
    fused path is this cell, not the paper's eq. 14. ``recurrent_bias=False`` passes b_hh = 0.
    """

    num_chunks = 3
    hh_chunks = 3
    state_count = 1

    def memory_step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State, MemoryTerms]:
        (h,) = state
        xr, xz, xn = xp_t.chunk(3, dim=1)
        hr, hz, hn = self.recurrent(h).chunk(3, dim=1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        return h, (h,), MemoryTerms(forget=z, write=1 - z, content=n, memory=h)

    #: The methods that hold the equations; a subclass overriding one is not torch.nn.GRU.
    EQUATIONS = ("project_input", "recurrent", "memory_step", "step")

    def is_torch_gru(self) -> bool:
        """Whether this cell computes exactly torch.nn.GRU: this class's equations and parameters."""
        return self.num_chunks == 3 and self.hh_chunks == 3 and fused.overrides_nothing(self, GRUCell, self.EQUATIONS)

    def fused_sequence(self, x: Tensor, state: State,
                       lengths: Tensor | None = None) -> tuple[Tensor, State] | None:
        """torch.nn.GRU's fused op on this cell's parameters where :func:`.fused.applies` (by
        default: cuDNN on a GPU; on the CPU torch has no fused GRU and our loop is faster); else None."""
        if not self.is_torch_gru():
            return None
        return fused.sequence("gru", self, x, state, lengths)

    def sequence(self, xp: Tensor, state: State, mask: Tensor | None = None,
                 t: int = 0) -> tuple[Tensor, State]:
        if not self.fast_loop_applies(xp):
            return self.reference_sequence(xp, state, mask, t)
        out, h = GRULoop.apply(xp, state[0], self.weight_hh, self.bias_hh, mask)
        return out, (h,)


@CELLS.register("sgru")
class SimplifiedGRUCell(RecurrentCell):
    """Simplified GRU (elstm paper eqs. 16-18): the GRU with U_z, U_r and U set to zero.

        z_t = σ(W_z X_t + b_z)                         (16)
        h̃_t = tanh(W X_t + b)                          (17)
        h_t = z_t ⊙ h_{t-1} + (1 - z_t) ⊙ h̃_t          (18)

    Unrolled from h_0 = 0 this is the closed form of eq. 19,
    h_t = Σ_k [Π_{j=k+1..t} z_j] (1 - z_k) h̃_k. The reset gate r_t only acts through U,
    so it disappears with U. Chunk order z, h̃ (torch's r, z, n without r); no weight_hh
    (hh_chunks = 0): every gate sees only the input, and the sequence runs as one
    element-wise scan with no per-step matrix product. The paper folds biases into W
    ("we omit the bias terms by including them in the corresponding weight matrices"),
    so each chunk has one bias: 2N(M+1) parameters. State is (h,).
    """

    num_chunks = 2
    hh_chunks = 0
    state_count = 1

    def memory_step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State, MemoryTerms]:
        (h,) = state
        xz, xn = xp_t.chunk(2, dim=1)
        z = torch.sigmoid(xz)
        candidate = torch.tanh(xn)
        h = z * h + (1 - z) * candidate
        return h, (h,), MemoryTerms(forget=z, write=1 - z, content=candidate, memory=h)

    def sequence(self, xp: Tensor, state: State, mask: Tensor | None = None,
                 t: int = 0) -> tuple[Tensor, State]:
        if not self.fast_loop_applies(xp):
            return self.reference_sequence(xp, state, mask, t)
        xz, xn = xp.chunk(2, dim=2)
        z = torch.sigmoid(xz)
        write = (1 - z) * activations.tanh(xn)
        (h0,) = state
        if mask is None:
            out = linear_scan(z, write, h0)
            return out, (out[-1],)
        # padded steps carry the state: forget 1, write 0; outputs are each step's own h_t
        states = linear_scan(torch.where(mask, z, 1.0), torch.where(mask, write, 0.0), h0)
        previous = torch.cat([h0.unsqueeze(0), states[:-1]])
        out = torch.addcmul(write, z, previous)
        return out, (states[-1],)
