"""The stacked RNN: k recurrent layers, optionally bidirectional (drnn paper eqs. 2-4; the basics
tutorial's stacked and bidirectional taggers)."""
from __future__ import annotations

import torch
from torch import Tensor, nn

from ..layers import Stacked
from ..tasks.base import Batch, TaskIO
from .common import InputEncoder, make_cell
from .registry import MODELS


@MODELS.register("stacked")
class StackedRNN(nn.Module):
    """Embedding -> ``layers`` recurrent layers -> linear head (drnn paper eqs. 2-4):

        h_t^(1) = F_1(x_t, h_{t-1}^(1)),   h_t^(i) = F_i(h_t^(i-1), h_{t-1}^(i)),   ŷ_t = W_o h_t^(k) + b_o

    ``bidirectional``: every layer is a BRNN (elstm paper Sec. 4.1) of ``hidden_size`` units
    per direction, the next layer reading [h_t^f ; h_t^b]. Token-level tasks read the top
    layer at every step; sequence-level tasks read the top layer's final state (both
    directions' final states, concatenated, when bidirectional), as the basic RNN and BRNN do.
    """

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128, layers: int = 2,
                 bidirectional: bool = False):
        super().__init__()
        self.io = io
        self.encoder = InputEncoder(io, embedding_size)
        self.rnn = Stacked.build(lambda size, hidden: make_cell(cell, size, hidden, cell_params),
                                 self.encoder.output_size, hidden_size, layers, bidirectional)
        self.head = nn.Linear(self.rnn.output_size, io.output_size)

    def forward(self, batch: Batch) -> Tensor:
        out, states = self.rnn(self.encoder(batch.inputs), batch.lengths)
        if self.io.level == "sequence":
            top = states[-1]
            final = torch.cat([top[0][0], top[1][0]], dim=1) if self.rnn.bidirectional else top[0]
            return self.head(final)
        return self.head(out)
