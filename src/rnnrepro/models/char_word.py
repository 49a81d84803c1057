"""The hierarchical char+word tagger of Plank et al. (2016), with the drnn paper's delayed variants.

Plank, Søgaard & Goldberg 2016 ("Multilingual part-of-speech tagging with bidirectional
long short-term memory models and auxiliary loss", ACL): a character-level BiRNN reads the
characters c_1..c_m of word w_t; its last state in each direction is concatenated with a word
embedding, and a word-level BiRNN over the sentence feeds a linear softmax layer:

    v_t = [h^f_m(c_1..c_m) ; h^b_1(c_1..c_m)]          character encoding of word t
    x_t = [e(w_t) ; v_t]
    ŷ_t = softmax(W [g^f_t ; g^b_t] + b),  g = BiRNN(x_1..x_T)

Turek et al. (drnn paper, Sec. 4.3, Table 1) replace either BiRNN by a one-directional RNN
(``char_bidirectional`` / ``word_bidirectional`` false) or by a delayed RNN (d-RNN): the input
is padded at the end with d zero vectors and the output for step t is read at step t + d
(Sec. 4, "input sequences are padded at the end with zero-vectors"):

    g_1..g_{T+d} = RNN(x_1..x_T, 0, ..., 0),   output_t = g_{t+d}

For the character level "the output" is the encoding, i.e. the state after reading the m
characters and d zero vectors (``char_delay``); at word level ``word_delay`` shifts every
tag's read-out. Delay 0 is the plain one-directional RNN; a delay needs a one-directional
level. The delay is that of :func:`rnnrepro.layers.delay_inputs` and
:func:`rnnrepro.layers.read_delayed`. Any registered cell serves at both levels.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from ..layers import Bidirectional, Recurrent, delay_inputs, length_mask, read_delayed
from ..tasks.base import Batch, TaskIO
from .common import make_bidirectional, make_cell
from .registry import MODELS


class Encoder(nn.Module):
    """One level of the tagger: a BiRNN, or a one-directional RNN with an optional output delay.

    Returns per-step outputs (T, B, output_size) and the final encoding (B, output_size): the
    state after the last real step (for the BiRNN, [last forward ; last backward] state).
    """

    def __init__(self, cell: str, input_size: int, hidden_size: int, cell_params: dict | None,
                 bidirectional: bool, delay: int, level: str):
        super().__init__()
        if delay < 0:
            raise ValueError(f"{level}_delay must be >= 0, not {delay}")
        if bidirectional and delay:
            raise ValueError(f"{level}_delay={delay} needs a one-directional {level} level "
                             f"({level}_bidirectional=False)")
        self.delay = delay
        if bidirectional:
            self.rnn = make_bidirectional(cell, input_size, hidden_size, cell_params)
        else:
            self.rnn = Recurrent(make_cell(cell, input_size, hidden_size, cell_params))
        self.output_size = self.rnn.output_size

    def forward(self, x: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        x, lengths = delay_inputs(x, lengths, self.delay)
        outputs, state = self.rnn(x, lengths)
        if isinstance(self.rnn, Bidirectional):
            final = torch.cat([state[0][0], state[1][0]], dim=1)
        else:
            final = state[0]
        return read_delayed(outputs, self.delay), final


@MODELS.register("char_word")
class CharWordTagger(nn.Module):
    """Character-level encoder -> [word embedding ; char encoding] -> word-level encoder -> linear head."""

    compatible_tasks = ("pos_chars",)  # reads batch.extra["chars"]

    def __init__(self, io: TaskIO, cell: str, cell_params: dict | None = None,
                 hidden_size: int = 100, embedding_size: int = 64,
                 char_hidden_size: int = 100, char_embedding_size: int = 100,
                 char_bidirectional: bool = True, word_bidirectional: bool = True,
                 char_delay: int = 0, word_delay: int = 0):
        super().__init__()
        char_vocab = getattr(io, "char_vocab", None)
        if not char_vocab or io.input_vocab is None:
            raise ValueError("model 'char_word' needs word and character ids (a task like pos_chars)")
        self.char_embedding = nn.Embedding(char_vocab, char_embedding_size, padding_idx=0)
        self.chars = Encoder(cell, char_embedding_size, char_hidden_size, cell_params,
                             char_bidirectional, char_delay, "char")
        self.word_embedding = nn.Embedding(io.input_vocab, embedding_size, padding_idx=0)
        self.words = Encoder(cell, embedding_size + self.chars.output_size, hidden_size, cell_params,
                             word_bidirectional, word_delay, "word")
        self.head = nn.Linear(self.words.output_size, io.output_size)

    #: The words of a batch are encoded in up to this many groups of similar length (sorted by
    #: length, equal counts), each padded to its own longest word rather than the batch's. UD
    #: English has "words" (URLs) of 74 characters beside a mean of 4.5: padded to the longest,
    #: the 11,595 words of 500 training sentences cost 74 steps each; in 8 groups, 17 % of that
    #: (the evaluation of a `mini` drnn Table 1 run took 2.5 times its training before).
    LENGTH_GROUPS = 8

    def char_encoding(self, chars: Tensor, lengths: Tensor) -> Tensor:
        """(T, B, W) character ids -> (T, B, char encoding); zero for padding words.

        Each real word's encoding v = Encoder(c_1..c_m) depends on its own characters only, so
        the words are encoded in groups of similar length (:attr:`LENGTH_GROUPS`) and put back
        in place: the same function, with less padding to step through."""
        steps, batch, _ = chars.shape
        real = length_mask(lengths, steps).squeeze(2)  # (T, B)
        words = chars[real]  # (N, W): the real words only
        out = chars.new_zeros(steps, batch, self.chars.output_size, dtype=self.char_embedding.weight.dtype)
        if len(words) == 0:
            return out
        char_lengths = (words != 0).sum(1)
        order = torch.argsort(char_lengths, stable=True)
        encoded = []
        for group in order.tensor_split(min(self.LENGTH_GROUPS, len(order))):
            width = int(char_lengths[group].max())
            _, final = self.chars(self.char_embedding(words[group, :width].T), char_lengths[group])
            encoded.append(final)
        out[real] = torch.cat(encoded)[torch.argsort(order)]  # back in the words' order
        return out

    def forward(self, batch: Batch) -> Tensor:
        x = torch.cat([self.word_embedding(batch.inputs),
                       self.char_encoding(batch.extra["chars"], batch.lengths)], dim=2)
        outputs, _ = self.words(x, batch.lengths)
        return self.head(outputs)
