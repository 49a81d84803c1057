"""Pieces every macro model shares: the input encoder and the output head."""
from __future__ import annotations

from torch import Tensor, nn

from ..cells import RecurrentCell, build_cell
from ..layers import Bidirectional
from ..tasks.base import TaskIO


class InputEncoder(nn.Module):
    """Token ids -> trainable embedding (id 0 is padding); real-valued features pass through."""

    def __init__(self, io: TaskIO, embedding_size: int):
        super().__init__()
        if io.input_vocab is not None:
            self.embedding = nn.Embedding(io.input_vocab, embedding_size, padding_idx=0)
            self.output_size = embedding_size
        else:
            self.embedding = None
            self.output_size = io.input_features

    def forward(self, inputs: Tensor) -> Tensor:
        return self.embedding(inputs) if self.embedding is not None else inputs


def make_cell(cell: str, input_size: int, hidden_size: int, cell_params: dict | None) -> RecurrentCell:
    return build_cell(cell, input_size, hidden_size, **(cell_params or {}))


def make_bidirectional(cell: str, input_size: int, hidden_size: int, cell_params: dict | None) -> Bidirectional:
    """A forward and a backward layer of ``cell``, each with its own weights; output [h^f_t ; h^b_t]."""
    return Bidirectional(make_cell(cell, input_size, hidden_size, cell_params),
                         make_cell(cell, input_size, hidden_size, cell_params))
