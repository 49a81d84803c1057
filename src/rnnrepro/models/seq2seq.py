"""Encoder-decoder models of the elstm paper (Sec. 4.1, eqs. 32-33, Fig. 7; Sec. 5.1 items 3-4).

The encoder reads x_1..x_T; its state after the last real token initialises the decoder
(c_1^Dec = c_T^Enc), which emits one prediction per output position:

    p_t = P(Y_t | Ŷ_1..Ŷ_{t-1}, X_1..X_T)   (32),       Ŷ_t = argmax p_t   (33)

The decoder's input at step 1 is a start symbol and at step t > 1 the previous output: the
previous target in training (teacher forcing), its own previous prediction in eval mode
(greedy decoding); eval mode never reads ``batch.targets``.

Output length T': one per sequence for sequence-level tasks; for token-level tasks
``batch.extra["target_lengths"]`` when the task gives it (sequence-to-sequence targets such
as the elstm paper's dependency parsing, T' = 2T), else one output per input position, which
is how the elstm paper tags with a seq2seq model (POS: T' = T). The decoder runs for that
many steps instead of until a stop symbol, so outputs line up with the targets.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ..cells import State
from ..layers import Recurrent, length_mask
from ..tasks.base import IGNORE_INDEX, Batch, TaskIO
from .common import InputEncoder, make_cell
from .registry import MODELS


def predicts_classes(io: TaskIO) -> bool:
    """Whether a task's outputs are class scores (more than one output) rather than values.

    TaskIO does not say; a single output can only be a value (regression, e.g. the adding
    task), and every classification task here has more than one class.
    """
    return io.output_size > 1


class OutputFeedback(nn.Module):
    """The decoder's input from the previous output: start symbol, previous target or prediction.

    Classes: an embedding of ``output_size + 1`` rows, the last one being the start symbol;
    a prediction is fed back as the embedding of its argmax (eq. 33). Values: a linear map
    of the previous value(s) and a trained start vector; a prediction is fed back as is.
    """

    def __init__(self, io: TaskIO, size: int):
        super().__init__()
        self.output_size = io.output_size
        self.classes = predicts_classes(io)
        if self.classes:
            self.embedding = nn.Embedding(io.output_size + 1, size)
        else:
            self.projection = nn.Linear(io.output_size, size)
            self.start_vector = nn.Parameter(torch.zeros(size))

    def start(self, batch_size: int) -> Tensor:
        """(B, size) start-symbol inputs."""
        if self.classes:
            start = self.embedding.weight[self.output_size]
        else:
            start = self.start_vector
        return start.expand(batch_size, -1)

    def targets(self, targets: Tensor) -> Tensor:
        """Time-major targets (S, B[, output_size]) -> decoder inputs (S, B, size); padding
        (IGNORE_INDEX) becomes the start symbol, whose outputs no loss reads."""
        if self.classes:
            ids = targets.long()
            return self.embedding(torch.where(ids == IGNORE_INDEX, self.output_size, ids))
        values = targets.reshape(targets.shape[0], targets.shape[1], self.output_size)
        return self.projection(values.to(self.projection.weight.dtype))

    def predictions(self, scores: Tensor) -> Tensor:
        """The decoder's own previous output (B, output_size) -> its next input (B, size)."""
        if self.classes:
            return self.embedding(scores.argmax(-1))
        return self.projection(scores)


class AdditiveAttention(nn.Module):
    """Attention of Vinyals et al. 2015 ("Grammar as a foreign language", elstm ref. [9]):

        u_i^t = v^T tanh(W_1 h_i^Enc + W_2 d_t),   a^t = softmax_i(u^t),   d'_t = Σ_i a_i^t h_i^Enc

    over the real (non-padding) encoder positions; d_t is the decoder's output at step t.
    """

    def __init__(self, hidden_size: int, attention_size: int | None = None):
        super().__init__()
        size = attention_size or hidden_size
        self.memory_projection = nn.Linear(hidden_size, size, bias=False)  # W_1
        self.query_projection = nn.Linear(hidden_size, size, bias=False)   # W_2
        self.score = nn.Linear(size, 1, bias=False)                        # v

    def keys(self, memory: Tensor) -> Tensor:
        """W_1 h_i^Enc for every encoder position, once per sequence: (T, B, attention)."""
        return self.memory_projection(memory)

    def forward(self, query: Tensor, keys: Tensor, memory: Tensor, mask: Tensor | None) -> Tensor:
        """Context d'_t (B, hidden) for decoder outputs ``query`` (B, hidden); ``mask`` (T, B, 1)."""
        scores = self.score(torch.tanh(keys + self.query_projection(query))).squeeze(-1)  # (T, B)
        if mask is not None:
            scores = scores.masked_fill(~mask.squeeze(-1), -math.inf)
        weights = torch.softmax(scores, dim=0)
        return (weights.unsqueeze(-1) * memory).sum(0)


@MODELS.register("seq2seq")
class Seq2Seq(nn.Module):
    """Sutskever et al. 2014 encoder-decoder (elstm ref. [8], Fig. 7, eqs. 32-33).

        h_i^Enc = F_Enc(x_i, h_{i-1}^Enc),  i = 1..T;       s_0^Dec = s_T^Enc (the whole state, c and h)
        d_t = F_Dec(e(Y_{t-1}), d_{t-1}),   e(Y_0) = start;  ŷ_t = W_o d_t + b_o

    with Y_{t-1} the target in training and Ŷ_{t-1} = argmax ŷ_{t-1} in eval mode. The same
    cell type (and ``cell_params``) serves encoder and decoder, ``hidden_size`` units each.
    Sutskever et al. also reversed the source sentence; the elstm paper's Fig. 7 does not,
    and neither do we.
    """

    uses_attention = False

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 128, embedding_size: int = 128):
        super().__init__()
        self.io = io
        self.hidden_size = hidden_size
        self.encoder = InputEncoder(io, embedding_size)
        self.encoder_rnn = Recurrent(make_cell(cell, self.encoder.output_size, hidden_size, cell_params))
        self.feedback = OutputFeedback(io, embedding_size)
        context_size = hidden_size if self.uses_attention else 0
        self.attention = AdditiveAttention(hidden_size) if self.uses_attention else None
        self.decoder = make_cell(cell, embedding_size + context_size, hidden_size, cell_params)
        self.head = nn.Linear(hidden_size + context_size, io.output_size)

    def output_steps(self, batch: Batch) -> int:
        """T': 1 for sequence-level tasks, else the longest target length, else the input length."""
        if self.io.level == "sequence":
            return 1
        target_lengths = batch.extra.get("target_lengths")
        if target_lengths is not None:
            return int(target_lengths.max())
        return batch.inputs.shape[0]

    def teacher_inputs(self, batch: Batch, steps: int) -> Tensor:
        """Decoder inputs in training: start, Y_1, ..., Y_{T'-1} as (T', B, embedding)."""
        start = self.feedback.start(batch.size).unsqueeze(0)
        if steps == 1:
            return start
        return torch.cat([start, self.feedback.targets(batch.targets[:steps - 1])])

    def forward(self, batch: Batch) -> Tensor:
        """Scores (T', B, output_size) for token-level tasks, (B, output_size) for sequence-level ones."""
        memory, state = self.encoder_rnn(self.encoder(batch.inputs), batch.lengths)
        steps = self.output_steps(batch)
        teacher = self.teacher_inputs(batch, steps) if self.training else None
        if teacher is not None and self.attention is None:  # all inputs known: one fast loop
            out, _ = self.decoder.sequence(self.decoder.project_input(teacher), state)
            scores = self.head(out)
        else:
            mask = length_mask(batch.lengths, memory.shape[0])
            scores = self.decode_stepwise(memory, mask, state, steps, teacher)
        return scores[0] if self.io.level == "sequence" else scores

    def decode_stepwise(self, memory: Tensor, mask: Tensor | None, state: State, steps: int,
                        teacher: Tensor | None) -> Tensor:
        """Step-by-step decoding: teacher inputs when given, else greedy feedback of predictions."""
        batch_size = memory.shape[1]
        previous = self.feedback.start(batch_size)
        if self.attention is not None:
            keys = self.attention.keys(memory)
            context = memory.new_zeros(batch_size, self.hidden_size)
        scores = []
        for t in range(steps):
            x = teacher[t] if teacher is not None else previous
            if self.attention is not None:
                x = torch.cat([x, context], dim=1)
            d, state = self.decoder(x, state, t)
            if self.attention is not None:
                context = self.attention(d, keys, memory, mask)
                d = torch.cat([d, context], dim=1)
            scores.append(self.head(d))
            if teacher is None:
                previous = self.feedback.predictions(scores[-1])
        return torch.stack(scores)


@MODELS.register("seq2seq_attn")
class Seq2SeqAttention(Seq2Seq):
    """Seq2seq with attention as in Vinyals et al. 2015 (elstm ref. [9], Sec. 5.1 item 4):

        d_t = F_Dec([e(Y_{t-1}) ; d'_{t-1}], d_{t-1}),   d'_0 = 0
        u_i^t = v^T tanh(W_1 h_i^Enc + W_2 d_t),   a^t = softmax(u^t),   d'_t = Σ_i a_i^t h_i^Enc
        ŷ_t = W_o [d_t ; d'_t] + b_o

    Which attention: Bahdanau's additive score (v^T tanh(W_1 h + W_2 d)), computed from the
    decoder's *current* output d_t as Luong et al. do, with the context d'_t both predicting
    ŷ_t and fed to the next step. That is the mechanism of ref. [9], the one the elstm paper
    cites for this model ("[d_t ; d'_t] ... becomes the new hidden state for making predictions
    and is fed to the next time step"); we feed d'_t with the next input (Luong's input
    feeding) rather than widening the recurrent state, so every cell fits unchanged.
    """

    uses_attention = True
