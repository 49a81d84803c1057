"""Extended LSTM (ELSTM) of Su & Kuo: the LSTM with trainable per-position scaling vectors."""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .lstm import LSTMCell
from .registry import CELLS, register_variant


@CELLS.register("elstm")
class ELSTMCell(LSTMCell):
    """ELSTM (elstm paper eqs. 20-21 and, with periodic scales, 24-25), gate order i, f, g, o:

        c_t = σ(W_f I_t) ⊙ c_{t-1} + s_{t_s} ⊙ σ(W_i I_t) ⊙ tanh(W_in I_t)      (24)
        h_t = σ(W_o I_t) ⊙ tanh(c_t + b)                                          (25)
        t_s = (t - 1) mod T_s + 1,   I_t = [X_t, h_{t-1}]  (I_t = X_t with ``input_only``)

    with the LSTM's biases inside the W's. Choices where the paper is loose:

    * eq. 24 prints ``c_{t_s}`` on the right; it can only mean c_{t-1} (eq. 20, and the
      authors' code multiplies the forget gate with the previous state).
    * ``period`` is T_s: position t (1-based) uses s_{(t-1) mod T_s + 1}, so 0-based step
      ``t`` uses ``scaling[t % period]``. Every s_k starts at 1, as the paper requires ("the
      scaling factor needs to be initialized to 1"), so at initialisation ELSTM is the LSTM.
      The default T_s = 100 is the paper's value for dependency parsing and seq2seq models;
      studies set their own (1 for POS taggers, 3 for LM).
    * "a bias term b ∈ R^N for c_t is omitted in Equation 21": b sits inside the squashing,
      tanh(c_t + b), initialised to 0; with it the count is Table 1's
      4N(M+N+1) + N(T_s+1). The authors' released code has no such b (``cell_bias=False``
      gives that cell, 4N(M+N+1) + N·T_s).
    * positions count from each sequence's own first step (a backward layer counts from the
      last token), as in the authors' code.

    ``input_only=True`` is the elstm paper's "ELSTM with I_t = X_t" (§5.2, Fig. 11): no
    weight_hh, and the sequence runs as one element-wise scan. State is (h, c).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 recurrent_bias: bool = True, *, period: int = 100, cell_bias: bool = True,
                 input_only: bool = False, recurrent_init: str = "uniform", device=None, dtype=None):
        if period < 1:
            raise ValueError(f"period (T_s) must be at least 1, not {period}")
        self.period = period
        self.has_cell_bias = cell_bias
        super().__init__(input_size, hidden_size, bias, recurrent_bias, input_only=input_only,
                         recurrent_init=recurrent_init, device=device, dtype=dtype)

    def create_extra_parameters(self, factory: dict) -> None:
        super().create_extra_parameters(factory)
        self.scaling = nn.Parameter(torch.empty(self.period, self.hidden_size, **factory))
        if self.has_cell_bias:
            self.bias_c = nn.Parameter(torch.empty(self.hidden_size, **factory))
        else:
            self.register_parameter("bias_c", None)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        with torch.no_grad():
            nn.init.ones_(self.scaling)
            if self.bias_c is not None:
                nn.init.zeros_(self.bias_c)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", period={self.period}" + (
            "" if self.has_cell_bias else ", cell_bias=False")

    def scale_at(self, t: int) -> Tensor:
        return self.scaling[t % self.period]

    def scales(self, steps: int, t: int) -> Tensor:
        positions = torch.arange(t, t + steps, device=self.scaling.device) % self.period
        return self.scaling[positions].unsqueeze(1)

    def cell_bias(self) -> Tensor | None:
        return self.bias_c


register_variant("elstm_ix", ELSTMCell, """ELSTM with I_t = X_t (elstm paper §5.2, Fig. 11):
eqs. 24-25 with gates and content seeing only the input; gate order i, f, g, o, no weight_hh:

    c_t = σ(W_f X_t) ⊙ c_{t-1} + s_{t_s} ⊙ σ(W_i X_t) ⊙ tanh(W_in X_t)
    h_t = σ(W_o X_t) ⊙ tanh(c_t + b)

Runs as one element-wise scan over precomputed gates.""", module=__name__, input_only=True)
