"""The deep biaffine dependency parser of Dozat & Manning (2017) over a stacked BiRNN of any cell.

The wsum paper (Sec. 3.2.3, Table 3) swaps the LSTM of this parser for its ablated cells.
Following Dozat & Manning ("Deep biaffine attention for neural dependency parsing", ICLR 2017),
for a sentence of T words:

    x_i = e(w_i) [⊕ e(t_i)]          word embedding (and UPOS embedding, when the task gives tags)
    x_0 = a trained ROOT vector        the root is position 0 of the sequence
    r_0..r_T = BiRNN^k(x_0..x_T)     ``layers`` bidirectional layers, ``hidden_size`` per direction
    h_i^{arc-dep} = MLP(r_i),  h_j^{arc-head} = MLP(r_j)        size ``arc_mlp``, ReLU
    s_ij = h_j^{arc-head}ᵀ U h_i^{arc-dep} + h_j^{arc-head}ᵀ u    score of head j = 0..T for word i
    h_i^{rel-dep}, h_j^{rel-head}                                  size ``label_mlp``, ReLU
    s_i^{rel} = h_{y_i}ᵀ U^{(1)} h_i^{rel-dep} + W^{(2)} (h_{y_i} ⊕ h_i^{rel-dep}) + b

where y_i is the gold head in training (as in the paper) and otherwise the head ŷ_i of the
maximum spanning tree of the arc scores, ŷ = argmax_{y tree} Σ_i s_{i y_i}: one word attached
to the root, no cycle (Chu-Liu-Edmonds with the single-root constraint, as Dozat & Manning
decode at test time; :mod:`rnnrepro.metrics.trees`). The relation of each word is the
best-scoring one for its chosen arc. Training keeps the per-word cross-entropy over heads;
only evaluation (``model.eval()``) decodes trees, and :attr:`ParserScores.heads` holds them.
Padding positions and the word itself are never candidate heads (score -inf).
Dropout (``dropout``) is applied to the BiRNN's input and output and to the MLP outputs
(Dozat & Manning also drop between layers and in the recurrence; the default is no dropout).
The biaffine weights start at zero, so every head is equally likely at first.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from ..layers import Stacked, length_mask
from ..metrics.trees import decode_batch
from ..tasks.base import Batch, TaskIO
from ..tasks.parsing import ParserScores
from .common import make_cell
from .registry import MODELS


def mlp(input_size: int, output_size: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Linear(input_size, output_size), nn.ReLU(), nn.Dropout(dropout))


@MODELS.register("biaffine")
class BiaffineParser(nn.Module):
    """Biaffine arc and label scorers over a stacked BiRNN; returns :class:`ParserScores`."""

    compatible_tasks = ("dp_biaffine",)  # reads gold heads in training, returns ParserScores

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None, layers: int = 3,
                 hidden_size: int = 400, embedding_size: int = 100, arc_mlp: int = 500, label_mlp: int = 100,
                 dropout: float = 0.0):
        super().__init__()
        if io.input_vocab is None:
            raise ValueError("model 'biaffine' needs word ids as input (a task like dp_biaffine)")
        tag_vocab = getattr(io, "tag_vocab", None)
        self.words = nn.Embedding(io.input_vocab, embedding_size, padding_idx=0)
        self.tags = nn.Embedding(tag_vocab, embedding_size, padding_idx=0) if tag_vocab else None
        input_size = embedding_size * (2 if self.tags is not None else 1)
        self.root = nn.Parameter(torch.randn(input_size) * 0.1)
        self.rnn = Stacked.build(lambda size, hidden: make_cell(cell, size, hidden, cell_params),
                                 input_size, hidden_size, layers, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.arc_dep, self.arc_head = mlp(2 * hidden_size, arc_mlp, dropout), mlp(2 * hidden_size, arc_mlp, dropout)
        self.rel_dep, self.rel_head = mlp(2 * hidden_size, label_mlp, dropout), mlp(2 * hidden_size, label_mlp, dropout)
        self.arc_weight = nn.Parameter(torch.zeros(arc_mlp, arc_mlp))  # U
        self.arc_head_bias = nn.Parameter(torch.zeros(arc_mlp))  # u
        self.label_bilinear = nn.Bilinear(label_mlp, label_mlp, io.output_size)  # U^(1) and b
        self.label_linear = nn.Linear(2 * label_mlp, io.output_size, bias=False)  # W^(2)
        nn.init.zeros_(self.label_bilinear.weight)

    def rnn_inputs(self, batch: Batch) -> tuple[Tensor, Tensor]:
        """x_0..x_T (T+1, B, input), the BiRNN's inputs before dropout with the root vector at
        position 0, and the lengths counting it."""
        x = self.words(batch.inputs)
        if self.tags is not None:
            x = torch.cat([x, self.tags(batch.extra["upos"])], dim=2)
        root = self.root.view(1, 1, -1).expand(1, x.shape[1], -1)
        return torch.cat([root, x]), batch.lengths + 1

    def encode(self, batch: Batch) -> tuple[Tensor, Tensor]:
        """r_0..r_T (T+1, B, 2*hidden) with the root at position 0, and the lengths counting it."""
        x, lengths = self.rnn_inputs(batch)
        r, _ = self.rnn(self.dropout(x), lengths)
        return self.dropout(r), lengths

    def arc_scores(self, r: Tensor, lengths: Tensor) -> Tensor:
        """s (T, B, T+1) with -inf at impossible heads."""
        dep, head = self.arc_dep(r[1:]), self.arc_head(r)
        scores = torch.einsum("ibd,jbd->ibj", dep @ self.arc_weight.T + self.arc_head_bias, head)
        steps = dep.shape[0]
        real_head = length_mask(lengths, steps + 1).squeeze(2).T  # (B, T+1), true for 0..length
        itself = torch.eye(steps, steps + 1, dtype=torch.bool, device=r.device).roll(1, dims=1)  # j == i+1
        impossible = ~real_head.unsqueeze(0) | itself.unsqueeze(1)
        return scores.masked_fill(impossible, float("-inf"))

    def label_scores(self, r: Tensor, heads: Tensor) -> Tensor:
        """Relation scores (T, B, relations) of each word attached to ``heads`` (T, B)."""
        dep, head_all = self.rel_dep(r[1:]), self.rel_head(r)
        index = heads.clamp(min=0).unsqueeze(2).expand(-1, -1, head_all.shape[2])
        head = head_all.gather(0, index)
        return self.label_bilinear(head, dep) + self.label_linear(torch.cat([head, dep], dim=2))

    def forward(self, batch: Batch) -> ParserScores:
        """Arc scores, and relation scores of the gold heads (training) or of the maximum
        spanning tree's heads (evaluation), which ``heads`` holds then."""
        r, lengths = self.encode(batch)
        arcs = self.arc_scores(r, lengths)
        gold = batch.extra.get("heads")
        if self.training:
            heads = gold if gold is not None else arcs.argmax(-1)
            return ParserScores(arcs, self.label_scores(r, heads))
        heads = decode_batch(arcs, batch.lengths)
        return ParserScores(arcs, self.label_scores(r, heads), heads)
