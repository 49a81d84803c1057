"""The papers' LSTM variants, registered as fixed parameters of :class:`LSTMCell` (one class,
no copies); ELSTM's variant is registered beside its class in :mod:`.elstm`. Each entry's
docstring gives its equations."""
from __future__ import annotations

from .lstm import LSTMCell
from .registry import register_variant


register_variant("pru", LSTMCell, module=__name__, doc="""Persistent recurrent unit (pru paper eq. 6): the content
does not see h_{t-1}; the gates are the LSTM's (eq. 3 without peepholes). Gate order i, f, o, g;
weight_hh holds i, f, o:

    c_t = f_t ⊙ c_{t-1} + i_t ⊙ tanh(W x_t + b)
    h_t = o_t ⊙ tanh(c_t)""", content="input")

register_variant("pru_plus", LSTMCell, module=__name__, doc="""PRU+ (pru paper eq. 7): PRU with a feed-forward layer
after the output, W_o (``weight_ff``) initialised to the identity and b_o (``bias_ff``) to 0.
Gate order i, f, o, g:

    c_t = f_t ⊙ c_{t-1} + i_t ⊙ tanh(W x_t + b)
    ĥ_t = o_t ⊙ tanh(c_t)
    h_t = tanh(W_o ĥ_t + b_o)

At initialisation h_t = tanh(o_t ⊙ tanh(c_t)).""", content="input", feed_forward=True)

register_variant("lstm_plus", LSTMCell, module=__name__, doc="""LSTM+ (pru paper Table 1): the LSTM with PRU+'s
feed-forward layer (eq. 7's last line), W_o initialised to the identity, b_o to 0. Gate order
i, f, g, o:

    c_t = f_t ⊙ c_{t-1} + i_t ⊙ tanh(W x_t + U h_{t-1} + b)
    ĥ_t = o_t ⊙ tanh(c_t)
    h_t = tanh(W_o ĥ_t + b_o)""", feed_forward=True)

register_variant("lstm_minus_gates", LSTMCell, module=__name__, doc="""LSTM−GATES (wsum paper §3.1, §3.3): the
memory cell and output layer ablated, leaving the content layer's S-RNN (wsum eq. 2):

    h_t = c̃_t = tanh(W_cx x_t + W_ch h_{t-1} + b_c)

One chunk; state (h,). Equals the SRN with the same weights.""", gates=False)

register_variant("lstm_minus_srnn", LSTMCell, module=__name__, doc="""LSTM−S-RNN (wsum paper eq. 9): the content
layer is a linear function of the input (no h_{t-1}, no tanh, no bias). Gate order i, f, o, g;
weight_hh holds i, f, o; bias_ih holds i, f, o:

    c̃_t = W_cx x_t
    i_t = σ(W_ih h_{t-1} + W_ix x_t + b_i),  f_t = σ(W_fh h_{t-1} + W_fx x_t + b_f)
    c_t = i_t ⊙ c̃_t + f_t ⊙ c_{t-1}
    o_t = σ(W_oh h_{t-1} + W_ox x_t + b_o)
    h_t = o_t ⊙ tanh(c_t)""", content="linear")

register_variant("lstm_minus_srnn_out", LSTMCell, module=__name__, doc="""LSTM−S-RNN−OUT (wsum paper eq. 10):
LSTM−S-RNN without the output gate. Gate order i, f, g; weight_hh holds i, f:

    c̃_t = W_cx x_t
    i_t = σ(W_ih h_{t-1} + W_ix x_t + b_i),  f_t = σ(W_fh h_{t-1} + W_fx x_t + b_f)
    c_t = i_t ⊙ c̃_t + f_t ⊙ c_{t-1}
    h_t = tanh(c_t)""", content="linear", output_gate=False)
