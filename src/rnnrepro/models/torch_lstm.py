"""The RNN tutorial's tagger built on ``torch.nn.LSTM`` itself (basics study, tutorial Sec. 14).

The tutorial builds its taggers with ``nn.LSTM(input_size, hidden_size, num_layers,
bidirectional, batch_first=True)``; our ``stacked`` model builds the same network from our
cells and layers. This model is the tutorial's version, so that the two can be trained side by
side: embedding -> ``nn.LSTM`` -> linear head,

    h_t^(1) = LSTM_1(x_t, h_{t-1}^(1)),  h_t^(i) = LSTM_i(h_t^(i-1), h_{t-1}^(i)),  ŷ_t = W_o h_t^(k) + b_o

(bidirectional: every layer reads [h_t^f ; h_t^b] of the layer below, torch's concatenation).

Same initial weights: the model first builds the ``stacked`` model with the same arguments,
drawing exactly the random numbers that model draws, and copies its embedding, every layer's
W_ih, W_hh, b_ih, b_hh (gate order i, f, g, o in both) and its head; ``nn.LSTM``'s own
initialisation runs under a forked generator, so the global random state afterwards is the
``stacked`` model's too. A run of this model and a run of ``stacked`` with the same seed and
settings therefore start from identical weights and see identical batches; they differ only in
the kernels that compute them.

Padding: sequences are packed (``pack_padded_sequence``), so the backward direction starts at
each sentence's own last word, as our layers do (the tutorial's listings feed full-length
random tensors and need no packing). Dropout between layers is ``nn.LSTM``'s, whose masks
differ from ours; the basics study trains both without dropout.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..tasks.base import Batch, TaskIO
from .common import dropout_layer
from .registry import MODELS
from .stacked import StackedRNN

WEIGHTS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def copy_stack_into(lstm: nn.LSTM, stack) -> None:
    """Copy the cells of our ``Stacked`` layers into ``lstm`` (parameter ``<w>_l<i>[_reverse]``)."""
    with torch.no_grad():
        for i, layer in enumerate(stack.layers):
            directions = ((("", layer.forward_layer.cell), ("_reverse", layer.backward_layer.cell))
                          if stack.bidirectional else (("", layer.cell),))
            for suffix, cell in directions:
                for name in WEIGHTS:
                    getattr(lstm, f"{name}_l{i}{suffix}").copy_(getattr(cell, name))


@MODELS.register("torch_lstm")
class TorchLSTMTagger(nn.Module):
    """Embedding -> ``torch.nn.LSTM(num_layers=layers, bidirectional=..., batch_first=True)`` ->
    linear head, starting from the weights of the ``stacked`` model of the same seed."""

    compatible_tasks = ("pos",)
    carries_state = False
    state_obstacle = "it is the tutorial's nn.LSTM tagger, which starts every batch from zeros"

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128, layers: int = 1,
                 bidirectional: bool = False, dropout: float = 0.0,
                 init_range: float | None = None, embedding_init: float | None = None,
                 output_init: float | None = None):
        super().__init__()
        if cell != "lstm" or cell_params:
            raise ValueError(f"torch_lstm is torch.nn.LSTM: cell must be 'lstm' without parameters, got {cell!r} "
                             f"{cell_params or ''}")
        ours = StackedRNN(io, "lstm", None, hidden_size, embedding_size, layers, bidirectional, dropout,
                          init_range, embedding_init, output_init)
        self.io = io
        self.encoder = ours.encoder
        self.head = ours.head
        self.dropout = dropout_layer(dropout)
        with torch.random.fork_rng(devices=[]):
            self.lstm = nn.LSTM(self.encoder.output_size, hidden_size, num_layers=layers,
                                bidirectional=bidirectional, batch_first=True, dropout=dropout if layers > 1 else 0.0)
        copy_stack_into(self.lstm, ours.rnn)

    def forward(self, batch: Batch) -> Tensor:
        x = self.dropout(self.encoder(batch.inputs)).transpose(0, 1)  # (B, T, F) as batch_first
        packed = pack_padded_sequence(x, batch.lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, (h_n, _) = self.lstm(packed)
        if self.io.level == "sequence":
            final = torch.cat([h_n[-2], h_n[-1]], dim=1) if self.lstm.bidirectional else h_n[-1]
            return self.head(self.dropout(final))
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.head(self.dropout(out.transpose(0, 1)))
