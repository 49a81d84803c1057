"""Attention encoder-decoder for translation, any registered cell in encoder and decoder.

The model of Bahdanau, Cho & Bengio (2015, "RNNsearch"), which the PRU paper (Sec. 4.3.1)
takes as its baseline with the GRU replaced by LSTM, PRU or PRU+ in both encoder and
decoder. For a source x_1..x_S and target y_1..y_n (y_0 = <bos>, y_{n+1} = <eos>):

    encoder    h_j = [h→_j ; h←_j]   (a Bidirectional layer; h→_j alone when not bidirectional)
    init       s_0 = tanh(W_s h←_1)  (h→_S when not bidirectional; other state parts, e.g. the
                                      LSTM memory c, start at 0)
    attention  e_tj = v_a^T tanh(W_a s_{t-1} + U_a h_j),  α_tj = softmax_j(e_tj) over real j,
               c_t  = Σ_j α_tj h_j                                   (Bahdanau eqs. 5-6)
    decoder    s_t  = cell([E y_{t-1} ; c_t], s_{t-1}), at position t-1 (ELSTM's scales)
    output     p(y_t | y_<t, X) = softmax(W_o tanh(L_s s_t + L_y E y_{t-1} + L_c c_t))
                                                  (Bahdanau eq. 4, g(y_{t-1}, s_t, c_t); a tanh
                                                   deep-output layer instead of the maxout)

The softmax runs over the real outputs only: <pad> and <bos> get probability 0.

Settings for the wsum paper's Table 4, which replaces the stacked bidirectional LSTM of
OpenNMT-py's default encoder (2 layers of 500 units, embeddings of 500) by ablated cells:

- ``layers`` k: the encoder is a stack of k (bidirectional) layers, layer i reading
  D([h→^(i-1) ; h←^(i-1)]) (:class:`~rnnrepro.layers.Stacked`); h_j above is the top layer's
  output and h←_1 (h→_S) its final state;
- ``encoder_hidden_size``: units per encoder direction (default ``hidden_size``; OpenNMT-py's
  ``brnn`` splits its 500 units into 250 per direction);
- ``decoder_cell``: the decoder's cell (default: the encoder's, with the same cell parameters;
  named, it is built with its own defaults), so that only the encoder's cell is replaced;
- ``dropout`` p: D on the source and target embeddings, between encoder layers and on the
  deep-output layer before the softmax (OpenNMT-py's default is 0.3; 0 here by default);
- ``init_range`` r: every parameter ~ U(-r, r) (OpenNMT-py's ``param_init`` 0.1), see
  :func:`~rnnrepro.models.common.initialise`; the padding rows of the embeddings stay zero.

With the defaults (1 layer, no dropout) the model is the one described above.

Why additive (Bahdanau) attention and not Luong's: it is the PRU paper's model, whose
"alignment model" of 1000 hidden nodes is the size of the additive scorer (``attention_size``
here), and its query is the previous decoder state s_{t-1}, so the same decoder cell runs on
[E y_{t-1}; c_t] for every cell type without an extra attentional layer. (The wsum paper's
Table 4 used OpenNMT's default, Luong "general" attention with input feeding and a decoder of
2 layers; we use this one model, with one decoder layer, for both papers.)

Training (``model.train()``): teacher forcing; ``model(batch)`` returns logits (T - 1, B, V)
for targets[1:] given targets[:-1] (ids of :mod:`rnnrepro.tasks.translation`). In eval mode
``model(batch)`` never reads the targets and returns the greedy translation ids (L, B),
padded with 0. The translation task decodes with:

- :meth:`greedy_decode`: y_t = argmax p(y | y_<t, X) until <eos> or the length limit;
- :meth:`beam_search`: the PRU paper's "simple forward beam search" (Sec. 4.3.3; Bahdanau's
  GroundHog implementation): keep the K best partial translations by log p(y_≤t | X); a
  candidate ending in <eos> (or reaching the length limit) is set aside as finished and the
  beam shrinks by one, until K translations are finished; return the finished one with the
  highest log p(Y|X) / |Y|^α, |Y| counting <eos> (α = ``length_normalisation``, 0: none, as
  the paper's "approximately maximizes log p(Y|X)"; 1: per-token average). With K = 1 this is
  exactly greedy decoding. Beam search is not guaranteed to find a translation the model
  scores at least as high as greedy's (greedy's prefix can fall out of the beam), though in
  practice it almost always does.

Class attribute ``compatible_tasks = ("translation",)``: its outputs follow the target, not
the input, positions, so it serves only that task (see rnnrepro.models).
"""
from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor, nn

from ..cells import State
from ..layers import Recurrent, Stacked, length_mask
from ..tasks.base import Batch, TaskIO
from ..tasks.translation import BOS_ID, EOS_ID, PAD_ID, decode_limit
from .common import dropout_layer, initialise, make_bidirectional, make_cell
from .registry import MODELS


class Encoded(NamedTuple):
    """The encoder's annotations of a batch: ``memory`` h_j (S, B, M), ``keys`` U_a h_j + b (S, B, A),
    ``mask`` (S, B) true at real source positions."""

    memory: Tensor
    keys: Tensor
    mask: Tensor

    def repeat_each(self, times: int) -> Encoded:
        """Every column repeated ``times`` times in a row (for beam search: column b*K + k)."""
        return Encoded(*(x.repeat_interleave(times, dim=1) for x in self))


class AdditiveAttention(nn.Module):
    """e_j = v^T tanh(W q + U h_j + b); α = softmax over real positions; context Σ_j α_j h_j."""

    def __init__(self, query_size: int, memory_size: int, attention_size: int):
        super().__init__()
        self.query = nn.Linear(query_size, attention_size, bias=False)
        self.key = nn.Linear(memory_size, attention_size)
        self.energy = nn.Linear(attention_size, 1, bias=False)

    def forward(self, query: Tensor, encoded: Encoded) -> tuple[Tensor, Tensor]:
        """query (B, Q) -> context (B, M), weights α (S, B)."""
        energies = self.energy(torch.tanh(encoded.keys + self.query(query))).squeeze(-1)
        weights = torch.softmax(energies.masked_fill(~encoded.mask, float("-inf")), dim=0)
        return (weights.unsqueeze(-1) * encoded.memory).sum(0), weights


def strip_after_eos(ids: list[int]) -> list[int]:
    """Target ids up to (without) the first <eos> or padding."""
    for position, token in enumerate(ids):
        if token in (EOS_ID, PAD_ID):
            return ids[:position]
    return ids


@MODELS.register("attn_encdec")
class AttentionEncoderDecoder(nn.Module):
    """Bahdanau-style attention encoder-decoder; ``hidden_size`` per encoder direction and for
    the decoder, ``attention_size`` the additive scorer's width."""

    compatible_tasks = ("translation",)

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None, hidden_size: int = 128,
                 embedding_size: int = 128, attention_size: int = 128, bidirectional: bool = True,
                 layers: int = 1, encoder_hidden_size: int | None = None, decoder_cell: str | None = None,
                 dropout: float = 0.0, init_range: float | None = None):
        super().__init__()
        if io.input_vocab is None:
            raise ValueError("attn_encdec needs token inputs (TaskIO.input_vocab)")
        if layers < 1:
            raise ValueError(f"the encoder needs layers >= 1, got {layers}")
        self.io = io
        self.bidirectional = bidirectional
        self.source_embedding = nn.Embedding(io.input_vocab, embedding_size, padding_idx=PAD_ID)
        self.target_embedding = nn.Embedding(io.output_size, embedding_size, padding_idx=PAD_ID)
        encoder_size = encoder_hidden_size or hidden_size
        if layers > 1:
            self.encoder = Stacked.build(lambda size, hidden: make_cell(cell, size, hidden, cell_params),
                                         embedding_size, encoder_size, layers, bidirectional, dropout)
        elif bidirectional:
            self.encoder = make_bidirectional(cell, embedding_size, encoder_size, cell_params)
        else:
            self.encoder = Recurrent(make_cell(cell, embedding_size, encoder_size, cell_params))
        memory_size = self.encoder.output_size
        self.initial = nn.Linear(encoder_size, hidden_size)
        self.attention = AdditiveAttention(hidden_size, memory_size, attention_size)
        self.decoder = make_cell(decoder_cell or cell, embedding_size + memory_size, hidden_size,
                                 cell_params if decoder_cell is None else None)
        self.readout = nn.Linear(hidden_size + embedding_size + memory_size, hidden_size)
        self.generator = nn.Linear(hidden_size, io.output_size)
        self.dropout = dropout_layer(dropout)
        never_output = torch.zeros(io.output_size, dtype=torch.bool)
        never_output[[PAD_ID, BOS_ID]] = True
        self.register_buffer("never_output", never_output, persistent=False)
        if init_range is not None:
            initialise(self, init_range)
            with torch.no_grad():
                for embedding in (self.source_embedding, self.target_embedding):
                    embedding.weight[PAD_ID].zero_()

    def final_summary(self, final) -> Tensor:
        """h←_1 (the backward direction's final state), or h→_S, of the encoder's top layer."""
        top = final[-1] if isinstance(self.encoder, Stacked) else final
        return top[1][0] if self.bidirectional else top[0]

    # -- the pieces -------------------------------------------------------------------
    def encode(self, inputs: Tensor, lengths: Tensor) -> tuple[Encoded, Tensor, State]:
        """Annotations of the source, and the decoder's first output s_0 and state."""
        memory, final = self.encoder(self.dropout(self.source_embedding(inputs)), lengths)
        summary = self.final_summary(final)  # h←_1, or h→_S
        mask = length_mask(lengths, inputs.shape[0]).squeeze(2)
        s0 = torch.tanh(self.initial(summary))
        state = (s0,) + self.decoder.initial_state(inputs.shape[1], s0)[1:]
        return Encoded(memory, self.attention.key(memory), mask), s0, state

    def step(self, previous: Tensor, s: Tensor, state: State, encoded: Encoded,
             t: int) -> tuple[Tensor, Tensor, State]:
        """One decoder step from the previous target ids (N,): logits (N, V), s_t, state."""
        y = self.dropout(self.target_embedding(previous))
        context, _ = self.attention(s, encoded)
        s, state = self.decoder(torch.cat([y, context], dim=1), state, t)
        logits = self.generator(self.dropout(torch.tanh(self.readout(torch.cat([s, y, context], dim=1)))))
        return logits.masked_fill(self.never_output, float("-inf")), s, state

    def teacher_forced_logits(self, inputs: Tensor, lengths: Tensor, targets: Tensor) -> Tensor:
        """Logits (T - 1, B, V) of targets[1:] given targets[:-1] (T, B)."""
        encoded, s, state = self.encode(inputs, lengths)
        logits = []
        for t in range(targets.shape[0] - 1):
            step_logits, s, state = self.step(targets[t], s, state, encoded, t)
            logits.append(step_logits)
        return torch.stack(logits)

    def forward(self, batch: Batch) -> Tensor:
        if self.training:
            return self.teacher_forced_logits(batch.inputs, batch.lengths, batch.targets)
        translations = self.greedy_decode(batch, decode_limit(batch.lengths - 1))  # lengths count the source <eos>
        steps = max(1, max(len(ids) for ids in translations))
        out = torch.full((steps, batch.size), PAD_ID, dtype=torch.long, device=batch.inputs.device)
        for column, ids in enumerate(translations):
            out[:len(ids), column] = torch.tensor(ids, dtype=torch.long)
        return out

    @torch.no_grad()
    def log_likelihood(self, batch: Batch, translations: list[list[int]],
                       max_len: int | Tensor | None = None) -> Tensor:
        """log p(Y|X) (B,) of ``translations`` (target ids without <bos>/<eos>), <eos> included,
        except for translations of ``max_len`` tokens (cut by the decoding limit): the score
        the decoders maximise."""
        limit = self.limits(max_len, batch).tolist() if max_len is not None else [None] * batch.size
        rows = [[BOS_ID] + ids + ([] if len(ids) == cap else [EOS_ID]) for ids, cap in zip(translations, limit)]
        targets = torch.full((max(map(len, rows)), len(rows)), PAD_ID, dtype=torch.long, device=batch.inputs.device)
        for column, row in enumerate(rows):
            targets[:len(row), column] = torch.tensor(row)
        log_probs = torch.log_softmax(self.teacher_forced_logits(batch.inputs, batch.lengths, targets).float(), -1)
        picked = log_probs.gather(2, targets[1:].unsqueeze(2)).squeeze(2)
        return picked.masked_fill(targets[1:] == PAD_ID, 0.0).sum(0)

    # -- decoding -----------------------------------------------------------------------
    @staticmethod
    def limits(max_len: int | Tensor, batch: Batch) -> Tensor:
        """Per-pair decoding limit (B,) from an int or a (B,) tensor."""
        if isinstance(max_len, Tensor):
            return max_len.to(batch.inputs.device)
        return torch.full((batch.size,), int(max_len), device=batch.inputs.device)

    @torch.no_grad()
    def greedy_decode(self, batch: Batch, max_len: int | Tensor) -> list[list[int]]:
        """The argmax translation of every pair (target ids without <bos>/<eos>), at most
        ``max_len`` tokens (an int or one per pair)."""
        limit = self.limits(max_len, batch)
        encoded, s, state = self.encode(batch.inputs, batch.lengths)
        previous = torch.full((batch.size,), BOS_ID, dtype=torch.long, device=batch.inputs.device)
        finished = torch.zeros(batch.size, dtype=torch.bool, device=batch.inputs.device)
        outputs = []
        for t in range(int(limit.max())):
            logits, s, state = self.step(previous, s, state, encoded, t)
            previous = torch.log_softmax(logits.float(), -1).argmax(-1).masked_fill(finished, PAD_ID)
            outputs.append(previous)
            finished |= (previous == EOS_ID) | (t + 1 >= limit)
            if bool(finished.all()):
                break
        columns = torch.stack(outputs, dim=1).tolist()
        return [strip_after_eos(ids) for ids in columns]

    @torch.no_grad()
    def beam_search(self, batch: Batch, beam_size: int, max_len: int | Tensor,
                    length_normalisation: float = 0.0) -> list[list[int]]:
        """The best translation of every pair found by beam search (see the module docstring)."""
        k, n = beam_size, batch.size
        device = batch.inputs.device
        limit = self.limits(max_len, batch)
        encoded, s, state = self.encode(batch.inputs, batch.lengths)
        encoded = encoded.repeat_each(k)
        s = s.repeat_interleave(k, dim=0)
        state = tuple(part.repeat_interleave(k, dim=0) for part in state)
        # log p(prefix | X) of the live hypotheses, in float64 so that adding it keeps the
        # order of the float32 log-probabilities (beam 1 then picks exactly greedy's tokens)
        scores = torch.full((n, k), float("-inf"), dtype=torch.float64, device=device)
        scores[:, 0] = 0.0
        open_slots = torch.full((n,), k, device=device)
        history = torch.zeros((n, k, 0), dtype=torch.long, device=device)
        previous = torch.full((n * k,), BOS_ID, dtype=torch.long, device=device)
        finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(n)]
        rank = torch.arange(k, device=device)
        for t in range(int(limit.max())):
            logits, s, state = self.step(previous, s, state, encoded, t)
            # Only a hypothesis's own k best tokens can be among the k best extensions of all
            # (each of its other tokens has k better ones with the same prefix score): a pair's
            # k·min(k, V) candidates hold the best of its k·V, picked in float32 before the sum.
            own = min(k, logits.shape[1])
            best, best_token = torch.log_softmax(logits.float(), -1).topk(own, dim=1)
            candidates = (scores.unsqueeze(2) + best.double().view(n, k, own)).view(n, k * own)
            top, index = candidates.topk(k, dim=1)
            top = top.masked_fill(rank >= open_slots.unsqueeze(1), float("-inf"))
            origin = index // own
            token = best_token.view(n, k * own).gather(1, index)
            history = torch.cat([history.gather(1, origin.unsqueeze(2).expand(-1, -1, t)),
                                 token.unsqueeze(2)], dim=2)
            ends = torch.isfinite(top) & ((token == EOS_ID) | (t + 1 >= limit).unsqueeze(1))
            for b, slot in ends.nonzero().tolist():
                ids = history[b, slot].tolist()
                normaliser = len(ids) ** length_normalisation
                finished[b].append((float(top[b, slot]) / normaliser, strip_after_eos(ids)))
            open_slots -= ends.sum(1)
            scores = top.masked_fill(ends, float("-inf"))
            if not bool(torch.isfinite(scores).any()):
                break
            rows = (torch.arange(n, device=device).unsqueeze(1) * k + origin).view(-1)
            s = s[rows]
            state = tuple(part[rows] for part in state)
            previous = token.view(-1)
        return [max(options, key=lambda option: option[0])[1] for options in finished]
