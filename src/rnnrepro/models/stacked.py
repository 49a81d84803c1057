"""The stacked RNN: k recurrent layers, optionally bidirectional (drnn paper eqs. 2-4; the basics
tutorial's stacked and bidirectional taggers)."""
from __future__ import annotations

import torch
from torch import nn

from ..cells import State
from ..layers import Stacked
from ..tasks.base import Batch, TaskIO
from .common import InputEncoder, dropout_layer, initialise, make_cell
from .registry import MODELS


@MODELS.register("stacked")
class StackedRNN(nn.Module):
    """Embedding -> ``layers`` recurrent layers -> linear head (drnn paper eqs. 2-4):

        h_t^(1) = F_1(D(x_t), h_{t-1}^(1)),   h_t^(i) = F_i(D(h_t^(i-1)), h_{t-1}^(i)),   ŷ_t = W_o D(h_t^(k)) + b_o

    with D dropout of probability ``dropout`` on the non-recurrent connections (Zaremba et
    al. 2014; the identity when 0) and the initialisation settings of
    :mod:`rnnrepro.models.common`.

    ``bidirectional``: every layer is a BRNN (elstm paper Sec. 4.1) of ``hidden_size`` units
    per direction, the next layer reading [h_t^f ; h_t^b]. Token-level tasks read the top
    layer at every step; sequence-level tasks read the top layer's final state (both
    directions' final states, concatenated, when bidirectional), as the basic RNN and BRNN do.

    A one-directional stack carries state: ``model(batch, states, return_state=True)``
    starts from ``states`` (one cell state per layer, bottom first; None: zeros) and returns
    (output, every layer's state after each column's last real step).
    """

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128, layers: int = 2,
                 bidirectional: bool = False, dropout: float = 0.0,
                 init_range: float | None = None, embedding_init: float | None = None,
                 output_init: float | None = None):
        super().__init__()
        self.io = io
        self.encoder = InputEncoder(io, embedding_size)
        self.rnn = Stacked.build(lambda size, hidden: make_cell(cell, size, hidden, cell_params),
                                 self.encoder.output_size, hidden_size, layers, bidirectional, dropout)
        self.head = nn.Linear(self.rnn.output_size, io.output_size)
        self.dropout = dropout_layer(dropout)
        self.carries_state = not bidirectional
        if bidirectional:
            self.state_obstacle = ("its layers are bidirectional: the backward directions read each batch "
                                   "from its end, so no state can pass from one batch to the next")
        initialise(self, init_range, embedding_init, output_init, self.encoder.embedding, self.head)

    def forward(self, batch: Batch, state: list[State] | None = None, return_state: bool = False):
        if (state is not None or return_state) and not self.carries_state:
            raise TypeError(f"{type(self).__name__} cannot carry state: {self.state_obstacle}")
        out, states = self.rnn(self.dropout(self.encoder(batch.inputs)), batch.lengths, state)
        if self.io.level == "sequence":
            top = states[-1]
            final = torch.cat([top[0][0], top[1][0]], dim=1) if self.rnn.bidirectional else top[0]
            output = self.head(self.dropout(final))
        else:
            output = self.head(self.dropout(out))
        return (output, states) if return_state else output
