"""The delayed RNN (d-RNN) and the flattened single-layer RNN of a k-layer stack (drnn paper).

d-RNN (drnn Secs. 3.2-3.3 and 4): one recurrent layer over the input padded at the end with d
zero vectors; the output for input position t is read at step t + d,

    h_s = F(x_s, h_{s-1}),  s = 1..T+d  (x_s = 0 for s > T),     ŷ_t = W_o h_{t+d} + b_o

so ŷ_t has seen x_1..x_{t+d}. The flattened RNN (drnn eqs. 5-6, Theorem 1) is the d-RNN with
k·n units and d = k - 1 whose weights are the block weights of a k-layer stack.
"""
from __future__ import annotations

import copy

import torch
from torch import Tensor, nn

from ..cells import State
from ..layers import (
    FlattenedRecurrent,
    delay_inputs,
    flatten_stack,
    flattening_obstacle,
    read_delayed,
)
from ..tasks.base import Batch, TaskIO
from .basic import BasicRNN
from .common import InputEncoder, make_cell
from .registry import MODELS
from .stacked import StackedRNN


@MODELS.register("delayed")
class DelayedRNN(BasicRNN):
    """d-RNN (drnn paper Sec. 4: "the input sequences are padded at the end with zero-vectors
    and loss is computed by ignoring the first 'delay' timesteps"):

        h_s = F(x_s, h_{s-1}), s = 1..L+d, x_s = 0 for s > L;   ŷ_t = W_o h_{t+d} + b_o,  t = 1..L

    with L each sequence's own length. Sequence-level tasks read the state after step L + d.
    The parameters are laid out as in the basic RNN (``encoder``, ``rnn``, ``head``), and with
    ``delay = 0`` the model is the basic RNN exactly, carried state included. ``dropout`` and
    the initialisation settings are the basic RNN's (dropout on x_s before the zero padding
    and on h_{t+d} before the head).
    """

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128, delay: int = 0,
                 dropout: float = 0.0, init_range: float | None = None,
                 embedding_init: float | None = None, output_init: float | None = None):
        if delay < 0:
            raise ValueError(f"delay must be >= 0, got {delay}")
        super().__init__(io, cell, cell_params, hidden_size, embedding_size, dropout=dropout,
                         init_range=init_range, embedding_init=embedding_init, output_init=output_init)
        self.delay = delay
        self.carries_state = delay == 0
        if delay:
            self.state_obstacle = (f"its delay of {delay} pads every batch with zero inputs, which a state "
                                   f"carried into the next batch would have read")

    def forward(self, batch: Batch, state: State | None = None, return_state: bool = False):
        if self.delay == 0:
            return super().forward(batch, state, return_state)
        if state is not None or return_state:
            raise TypeError(f"{type(self).__name__} cannot carry state: {self.state_obstacle}")
        x, lengths = delay_inputs(self.dropout(self.encoder(batch.inputs)), batch.lengths, self.delay)
        out, final = self.rnn(x, lengths)
        if self.io.level == "sequence":
            return self.head(self.dropout(final[0]))
        return self.head(self.dropout(read_delayed(out, self.delay)))


@MODELS.register("flattened")
class FlattenedRNN(nn.Module):
    """The single-layer RNN equal to a ``layers``-layer stack, read at delay k - 1 (drnn Theorem 1):

        ĥ_s = F(Ŵ_x x_s + Ŵ_h ĥ_{s-1} + b̂),   ŷ_{t+k-1} = Ŵ_o ĥ_{t+k-1} + b̂_o = y_t

    with one cell of k·``hidden_size`` units and the block weights of eqs. 5-6 (Ŵ_h block
    bidiagonal, Ŵ_x = [W_x^(1); 0; ...], Ŵ_o = [0 ··· 0 W_o]); see
    :class:`~rnnrepro.layers.FlattenedRecurrent` for the staggered start that realises
    Lemma 1's initial state. The model is initialised as the flattening of a freshly
    initialised :class:`StackedRNN`, so at initialisation it computes exactly what that
    stack computes; training then updates every weight, zero blocks included (drnn
    Sec. 3.1: "simply removing the constraints on Ŵ_h during training").

    Cells that eqs. 5-6 cannot express as one cell of the same kind (GRU, PRU, SGRU, ...;
    see :func:`~rnnrepro.layers.flattening_obstacle`) get the same network -- one cell of
    k·n units, delay k - 1, staggered start -- with the cell's own initialisation;
    ``initialised_from_stack`` says which happened. :meth:`from_stacked` flattens a given
    stacked model (and raises NotImplementedError for those cells).
    """

    carries_state = False
    state_obstacle = ("its delay of k - 1 steps pads every batch with zero inputs, which a state "
                      "carried into the next batch would have read")

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128, layers: int = 2):
        super().__init__()
        probe = make_cell(cell, 1, 1, cell_params)  # only asks what kind of cell this is
        if flattening_obstacle(probe) is None:
            self._take_stack(StackedRNN(io, cell, cell_params, hidden_size, embedding_size, layers))
            return
        self.io = io
        self.encoder = InputEncoder(io, embedding_size)
        self.rnn = FlattenedRecurrent(make_cell(cell, self.encoder.output_size, layers * hidden_size,
                                                cell_params), layers)
        self.head = nn.Linear(layers * hidden_size, io.output_size)
        self.initialised_from_stack = False

    @classmethod
    def from_stacked(cls, stacked: StackedRNN, force: bool = False) -> FlattenedRNN:
        """The flattened model computing what ``stacked`` (one-directional) computes, at delay k - 1
        (``force``: eq. 5's block weights even where they cannot be exact, see :func:`flatten_stack`)."""
        model = cls.__new__(cls)  # skip __init__: every part comes from ``stacked``
        nn.Module.__init__(model)
        model._take_stack(stacked, force)
        return model

    def _take_stack(self, stacked: StackedRNN, force: bool = False) -> None:
        self.io = stacked.io
        self.encoder = copy.deepcopy(stacked.encoder)
        self.rnn = flatten_stack(stacked.rnn.cells(), force)
        top = stacked.head
        self.head = nn.Linear(self.rnn.output_size, top.out_features,
                              device=top.weight.device, dtype=top.weight.dtype)
        with torch.no_grad():  # Ŵ_o = [0 ··· 0 W_o], b̂_o = b_o (eq. 6)
            self.head.weight.zero_()
            self.rnn.top_block(self.head.weight).copy_(top.weight)
            self.head.bias.copy_(top.bias)
        self.initialised_from_stack = True

    def forward(self, batch: Batch) -> Tensor:
        out, state = self.rnn(self.encoder(batch.inputs), batch.lengths)
        if self.io.level == "sequence":
            return self.head(state[0])
        return self.head(read_delayed(out, self.rnn.delay))
