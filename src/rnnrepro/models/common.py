"""Pieces every macro model shares: the input encoder, the output head, dropout and the
initialisation settings.

Dropout (Zaremba et al. 2014, "Recurrent neural network regularization"): on the
non-recurrent connections only -- the embedding's output, between stacked layers and before
the output layer -- never on h_{t-1} -> h_t: D(x) = m ⊙ x / (1 - p), m_j ~ Bernoulli(1 - p),
in training mode only. Masks come from torch's global generator, which the training loop
seeds and checkpoints, so they are the same in every run of a seed and after a resume.

Initialisation (:func:`initialise`), applied after torch's and the cells' own:

- ``init_range`` r: every parameter of the model ~ U(-r, r) (Zaremba: 0.1 small, 0.05 medium,
  0.04 large), except what a cell initialises by construction rather than at random: extra
  parameters beyond W_ih, W_hh, b_ih, b_hh (ELSTM's scales s = 1 and cell bias 0, the PRU+/
  LSTM+ feed-forward W_ff = I, b_ff = 0) and W_hh of ``recurrent_init="identity"``;
- ``embedding_init`` e: the embedding E ~ U(-e, e) (pytorch/examples: 0.1);
- ``output_init`` o: the output layer W_o ~ U(-o, o), b_o = 0 (pytorch/examples: 0.1).

The embedding's padding row (id 0) stays zero. None (the default) leaves torch's choice:
E ~ N(0, 1), W_o, b_o ~ U(±1/sqrt(fan_in)), cells U(±1/sqrt(hidden)).
"""
from __future__ import annotations

import torch
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


def dropout_layer(p: float) -> nn.Module:
    """Dropout with probability ``p`` in training mode (identity when p = 0)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {p}")
    return nn.Dropout(p) if p > 0 else nn.Identity()


#: The parameters of a cell drawn at random by default (torch.nn's four); the others are set by construction.
RANDOM_CELL_PARAMETERS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _check_range(name: str, value: float | None) -> None:
    if value is not None and not value > 0:
        raise ValueError(f"{name} must be > 0 (the half-width of a uniform range) or None, got {value}")


@torch.no_grad()
def initialise(model: nn.Module, init_range: float | None = None, embedding_init: float | None = None,
               output_init: float | None = None, embedding: nn.Embedding | None = None,
               output: nn.Linear | None = None) -> None:
    """Apply the initialisation settings (module docstring) to ``model``, whose input
    embedding is ``embedding`` (None for real-valued inputs) and output layer ``output``."""
    for name, value in (("init_range", init_range), ("embedding_init", embedding_init),
                        ("output_init", output_init)):
        _check_range(name, value)
    if embedding_init is not None and embedding is None:
        raise ValueError("embedding_init needs token inputs (the task's inputs are real-valued: no embedding)")
    if init_range is not None:
        fixed = set()
        for module in model.modules():
            if isinstance(module, RecurrentCell):
                for name, parameter in module.named_parameters(recurse=False):
                    identity = name == "weight_hh" and module.recurrent_init == "identity"
                    if name not in RANDOM_CELL_PARAMETERS or identity:
                        fixed.add(id(parameter))
        for parameter in model.parameters():
            if id(parameter) not in fixed:
                nn.init.uniform_(parameter, -init_range, init_range)
    if embedding_init is not None:
        nn.init.uniform_(embedding.weight, -embedding_init, embedding_init)
    if output_init is not None:
        nn.init.uniform_(output.weight, -output_init, output_init)
        if output.bias is not None:
            nn.init.zeros_(output.bias)
    if embedding is not None and embedding.padding_idx is not None:
        embedding.weight[embedding.padding_idx].zero_()
