"""The basic one-directional RNN and the bidirectional RNN (BRNN), elstm paper Sec. 4.1."""
from __future__ import annotations

import torch
from torch import Tensor, nn

from ..layers import Recurrent
from ..tasks.base import Batch, TaskIO
from .common import InputEncoder, make_bidirectional, make_cell
from .registry import MODELS


@MODELS.register("basic")
class BasicRNN(nn.Module):
    """Embedding -> one recurrent layer read left to right -> linear head.

    Token-level tasks read ŷ_t = W h_t + b at every step; sequence-level tasks read the
    state after each sequence's last real step.
    """

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128):
        super().__init__()
        self.io = io
        self.encoder = InputEncoder(io, embedding_size)
        self.rnn = Recurrent(make_cell(cell, self.encoder.output_size, hidden_size, cell_params))
        self.head = nn.Linear(hidden_size, io.output_size)

    def forward(self, batch: Batch) -> Tensor:
        out, state = self.rnn(self.encoder(batch.inputs), batch.lengths)
        if self.io.level == "sequence":
            return self.head(state[0])
        return self.head(out)


@MODELS.register("brnn")
class BidirectionalRNN(nn.Module):
    """Embedding -> forward and backward layers (``hidden_size`` each) -> head on [h^f_t ; h^b_t].

    Sequence-level tasks read [final forward state ; final backward state] (the backward
    layer's final state is the one after reading the sequence's first token).
    """

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128):
        super().__init__()
        self.io = io
        self.encoder = InputEncoder(io, embedding_size)
        size = self.encoder.output_size
        self.rnn = make_bidirectional(cell, size, hidden_size, cell_params)
        self.head = nn.Linear(2 * hidden_size, io.output_size)

    def forward(self, batch: Batch) -> Tensor:
        out, (state_f, state_b) = self.rnn(self.encoder(batch.inputs), batch.lengths)
        if self.io.level == "sequence":
            return self.head(torch.cat([state_f[0], state_b[0]], dim=1))
        return self.head(out)
