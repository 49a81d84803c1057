"""The dependent bidirectional RNN (DBRNN) of the elstm paper, Sec. 4.2 (eqs. 34-42, Fig. 8).

    lower BRNN   h_t^f = F_l^f(x_t, c_{l(t-1)}^f),  h_t^b = F_l^b(x_t, c_{l(t+1)}^b),  h_t = [h_t^f ; h_t^b]   (41)
    upper RNNs   p_t^f = F_u^f(h_t, c_{u(t-1)}^f),  p_t^b = F_u^b(h_t, c_{u(t+1)}^b)                         (42)
    combined     p_t = W^f p_t^f + W^b p_t^b                                                                (34, 42)

with three predictions Ŷ_t^f = argmax p_t^f, Ŷ_t^b = argmax p_t^b, Ŷ_t = argmax p_t (35-37),
each trained on the same target sequence.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ..layers import Recurrent
from ..tasks.base import Batch, ModelOutput, Predictions, TaskIO
from .common import InputEncoder, make_bidirectional, make_cell
from .registry import MODELS
from .seq2seq import predicts_classes


class PredictionPooling(nn.Module):
    """The combined prediction p_t = W^f p_t^f + W^b p_t^b (elstm eqs. 34 and 42), per class.

    Eq. 44 writes the weights per class, W_k^f p̂_{t,k}^f + W_k^b p̂_{t,k}^b, and p^f, p^b are
    distributions (eqs. 38-39), so the pooling mixes *probabilities*, not scores:

        classes:  main = log(w^f ⊙ softmax(z^f) + w^b ⊙ softmax(z^b)),  w = exp(log-weights) > 0

    computed with logsumexp; the task's cross-entropy applies log-softmax to ``main``, i.e.
    normalises p_t over the classes. (Eq. 45's loss -log(W^f p^f + W^b p^b) without that
    normalisation could be made arbitrarily small by growing W.) Both weights start at 1/2,
    so p_t starts as the average of the two distributions; argmax main = argmax p_t (eq. 37).

        values (a single output, regression):  main = w^f ⊙ ŷ^f + w^b ⊙ ŷ^b,  w starting at 1/2
    """

    def __init__(self, io: TaskIO):
        super().__init__()
        self.classes = predicts_classes(io)
        start = math.log(0.5) if self.classes else 0.5
        self.weight_forward = nn.Parameter(torch.full((io.output_size,), start))
        self.weight_backward = nn.Parameter(torch.full((io.output_size,), start))

    def forward(self, forward: Tensor, backward: Tensor) -> Tensor:
        if self.classes:  # log-weights
            mixed = torch.stack([self.weight_forward + torch.log_softmax(forward, -1),
                                 self.weight_backward + torch.log_softmax(backward, -1)])
            return torch.logsumexp(mixed, dim=0)
        return self.weight_forward * forward + self.weight_backward * backward


@MODELS.register("dbrnn")
class DependentBRNN(nn.Module):
    """DBRNN (elstm Sec. 4.2): embedding -> lower BRNN -> upper forward and upper backward RNNs,
    each reading [h_t^f ; h_t^b] -> forward, backward and combined predictions (eqs. 34-42).

    Each upper RNN has ``hidden_size`` units and a linear head giving the scores of p_t^f
    (p_t^b); eq. 42 prints the upper cell's output as p_t itself, which would tie the upper
    RNN's size to the number of classes. Eq. 38 conditions p_t^f on the earlier predictions
    Ŷ_1..Ŷ_{t-1}; eqs. 41-42 feed no prediction back, so that dependence is only through the
    upper RNN's state, and we follow eqs. 41-42. The backward prediction at position t is
    trained on the target at t; in the backward RNN's own reading order that is the reversed
    target sequence the paper trains it on. Sequence-level tasks read each upper RNN's final
    state (the backward one's after reading the first token).

    Losses and gradient routing. In training mode ``forward`` returns
    ``Predictions(main=combined, auxiliary=(forward, backward))``, and the training loss is
    ``Task.total_loss`` = loss(combined) + loss(forward) + loss(backward) = e + e_f + e_b, one
    backward pass. The gradient of a sum is the sum of the gradients, and each term's
    gradient is non-zero only for the parameters on its own computation path:

    * e_f: forward head <- upper forward RNN <- lower BRNN (both directions) <- embedding;
      the upper backward RNN, its head and the pooling weights are not on the path, so
      e_f reaches exactly "the upper forward RNN and the lower BRNN" (paper, Sec. 4.2);
    * e_b: symmetrically the upper backward RNN, its head, the lower BRNN and the embedding;
    * e: the combined prediction depends on both heads, both upper RNNs, the lower BRNN and
      the pooling weights W^f, W^b: "the entire model".

    So summing the three task losses gives the paper's routing with no detaching or separate
    updates; the lower BRNN receives all three errors. ``tests/test_models_sequence.py``
    checks it by backpropagating each loss alone.

    In eval mode ``forward`` returns the combined prediction only -- the one the paper reports
    ("we show the result for the final combined output (namely, p_t)", Sec. 5.1) and the one
    metrics read; :meth:`predictions` returns all three in either mode.
    """

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128):
        super().__init__()
        self.io = io
        self.encoder = InputEncoder(io, embedding_size)
        size = self.encoder.output_size
        self.lower = make_bidirectional(cell, size, hidden_size, cell_params)
        upper_size = self.lower.output_size
        self.upper_forward = Recurrent(make_cell(cell, upper_size, hidden_size, cell_params))
        self.upper_backward = Recurrent(make_cell(cell, upper_size, hidden_size, cell_params), reverse=True)
        self.head_forward = nn.Linear(hidden_size, io.output_size)
        self.head_backward = nn.Linear(hidden_size, io.output_size)
        self.pooling = PredictionPooling(io)

    def predictions(self, batch: Batch) -> Predictions:
        """Combined (main), forward and backward (auxiliary) scores."""
        lower, _ = self.lower(self.encoder(batch.inputs), batch.lengths)
        out_f, state_f = self.upper_forward(lower, batch.lengths)
        out_b, state_b = self.upper_backward(lower, batch.lengths)
        if self.io.level == "sequence":
            out_f, out_b = state_f[0], state_b[0]
        forward, backward = self.head_forward(out_f), self.head_backward(out_b)
        return Predictions(main=self.pooling(forward, backward), auxiliary=(forward, backward))

    def forward(self, batch: Batch) -> ModelOutput:
        predictions = self.predictions(batch)
        return predictions if self.training else predictions.main
