"""The basic one-directional RNN and the bidirectional RNN (BRNN), elstm paper Sec. 4.1.

Both take ``dropout`` (on the embedding's output and before the output layer) and the
initialisation settings ``init_range``, ``embedding_init``, ``output_init``; see
:mod:`rnnrepro.models.common`. The basic RNN can start from a given state and return its
final one (stateful truncated BPTT, :mod:`rnnrepro.tasks.base`); the BRNN cannot.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from ..cells import State
from ..layers import Recurrent
from ..tasks.base import Batch, TaskIO
from .common import InputEncoder, dropout_layer, initialise, make_bidirectional, make_cell
from .registry import MODELS


@MODELS.register("basic")
class BasicRNN(nn.Module):
    """Embedding -> one recurrent layer read left to right -> linear head:

        h_t = F(D(x_t), h_{t-1}),   ŷ_t = W D(h_t) + b          (D: dropout, identity when p = 0)

    Token-level tasks read ŷ_t at every step; sequence-level tasks read the state after
    each sequence's last real step.

    ``model(batch, state, return_state=True)`` starts from ``state`` (the cell's state
    tuple, e.g. (h, c); None: zeros) and returns (output, state after each column's last
    real step); ``model(batch)`` is ``model(batch, None)[0]``.
    """

    carries_state = True

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128, dropout: float = 0.0,
                 init_range: float | None = None, embedding_init: float | None = None,
                 output_init: float | None = None):
        super().__init__()
        self.io = io
        self.encoder = InputEncoder(io, embedding_size)
        self.rnn = Recurrent(make_cell(cell, self.encoder.output_size, hidden_size, cell_params))
        self.head = nn.Linear(hidden_size, io.output_size)
        self.dropout = dropout_layer(dropout)
        initialise(self, init_range, embedding_init, output_init, self.encoder.embedding, self.head)

    def forward(self, batch: Batch, state: State | None = None, return_state: bool = False):
        out, final = self.rnn(self.dropout(self.encoder(batch.inputs)), batch.lengths, state)
        if self.io.level == "sequence":
            output = self.head(self.dropout(final[0]))
        else:
            output = self.head(self.dropout(out))
        return (output, final) if return_state else output


@MODELS.register("brnn")
class BidirectionalRNN(nn.Module):
    """Embedding -> forward and backward layers (``hidden_size`` each) -> head on D([h^f_t ; h^b_t]),
    the embedding's output dropped out as in the basic RNN.

    Sequence-level tasks read [final forward state ; final backward state] (the backward
    layer's final state is the one after reading the sequence's first token).
    """

    carries_state = False
    state_obstacle = ("its backward direction reads each batch from its end, so no state can pass "
                      "from one batch to the next")

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128, dropout: float = 0.0,
                 init_range: float | None = None, embedding_init: float | None = None,
                 output_init: float | None = None):
        super().__init__()
        self.io = io
        self.encoder = InputEncoder(io, embedding_size)
        size = self.encoder.output_size
        self.rnn = make_bidirectional(cell, size, hidden_size, cell_params)
        self.head = nn.Linear(2 * hidden_size, io.output_size)
        self.dropout = dropout_layer(dropout)
        initialise(self, init_range, embedding_init, output_init, self.encoder.embedding, self.head)

    def forward(self, batch: Batch) -> Tensor:
        out, (state_f, state_b) = self.rnn(self.dropout(self.encoder(batch.inputs)), batch.lengths)
        if self.io.level == "sequence":
            return self.head(self.dropout(torch.cat([state_f[0], state_b[0]], dim=1)))
        return self.head(self.dropout(out))
