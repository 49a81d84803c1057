"""The LSTM (Hochreiter & Schmidhuber) in torch.nn.LSTM's gate order, and, as parameters of
the same class, the variants the papers build from it (PRU, PRU+, LSTM+, the wsum ablations,
I_t = X_t). ELSTM adds its scaling vectors in :mod:`.elstm`; the named variants are
registered in :mod:`.variants`."""
from __future__ import annotations

import torch
from torch import Tensor, nn

from . import activations, fused
from .base import MemoryTerms, RecurrentCell, State, combined_bias, final_from_outputs, last_real_step
from .input_gates_loop import InputGatesLoop
from .lstm_loop import LSTMLoop
from .products import input_projection
from .registry import CELLS
from .scan import linear_scan
from .srn_loop import SRNLoop

CONTENTS = ("srnn", "input", "linear")


@CELLS.register("lstm")
class LSTMCell(RecurrentCell):
    """LSTM (elstm paper eqs. 6-7; wsum paper eqs. 2-7; pru paper eqs. 2-3 without peepholes).

    With the default parameters, gate order i, f, g, o as torch.nn.LSTM, state (h, c):

        i_t = σ(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)
        f_t = σ(W_if x_t + b_if + W_hf h_{t-1} + b_hf)
        g_t = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)      content layer c̃_t (wsum eq. 2)
        o_t = σ(W_io x_t + b_io + W_ho h_{t-1} + b_ho)
        c_t = f_t ⊙ c_{t-1} + i_t ⊙ g_t
        h_t = o_t ⊙ tanh(c_t)

    Parameters that make the papers' variants (each changes one equation):

    ``content`` -- what the content layer g_t (c̃_t) is:
        "srnn"   tanh(W_ig x_t + W_hg h_{t-1} + b_g), an S-RNN (the LSTM);
        "input"  tanh(W x_t + b), no h_{t-1} (PRU, pru paper eq. 6);
        "linear" W_cx x_t, no h_{t-1}, no tanh, no bias (LSTM−S-RNN, wsum eq. 9).
    ``output_gate`` -- False: h_t = tanh(c_t) (LSTM−S-RNN−OUT, wsum eq. 10).
    ``feed_forward`` -- True: ĥ_t = o_t ⊙ tanh(c_t), h_t = tanh(W_ff ĥ_t + b_ff), with W_ff
        initialised to the identity and b_ff to 0 (PRU+, pru paper eq. 7; with the LSTM's
        content, LSTM+ of the pru paper's Table 1). h_t, the output of the feed-forward
        layer, is what the gates of the next step see ("effective ... for the output of
        the unit and the gates for the next step").
    ``gates`` -- False: no memory cell and no output layer, h_t = g_t = tanh(W x_t + U h_{t-1} + b),
        the S-RNN alone (LSTM−GATES, wsum §3.1 and §3.3); state (h,).
    ``input_only`` -- True: I_t = X_t (elstm §5.2 and Fig. 11): gates and content see only
        x_t; hh_chunks = 0 and the sequence runs as one element-wise scan.

    Chunk order in ``weight_ih``: i, f, g, o (o left out without an output gate), except that
    a content that does not see h_{t-1} ("input", "linear") moves last -- i, f, o, g -- so the
    chunks multiplied by ``weight_hh`` (i, f, [g], [o]; none with ``input_only``) lead. A
    "linear" content has no bias: ``bias_ih`` then covers the chunks before it only.
    ``project_input`` adds b_hh with b_ih (same pre-activation), so ``step`` adds W_hh h_{t-1}.
    """

    state_count = 2
    can_flatten = True  # drnn eq. 5, for the variants whose every chunk sees h_{t-1}

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 recurrent_bias: bool = True, *, content: str = "srnn", output_gate: bool = True,
                 feed_forward: bool = False, gates: bool = True, input_only: bool = False,
                 recurrent_init: str = "uniform", device=None, dtype=None):
        if content not in CONTENTS:
            raise ValueError(f"content must be one of {', '.join(CONTENTS)}, not {content!r}")
        if not gates and (content != "srnn" or feed_forward or not output_gate):
            raise ValueError("gates=False (LSTM−GATES) keeps only the S-RNN content layer; "
                             "it takes no content, feed_forward or output_gate setting")
        self.content = content
        self.output_gate = output_gate and gates
        self.feed_forward = feed_forward
        self.gates = gates
        self.input_only = input_only
        self.chunk_names = self._chunk_order()
        self.num_chunks = len(self.chunk_names)
        self.hh_chunks = 0 if input_only else (
            self.num_chunks if content == "srnn" else self.num_chunks - 1)
        self.state_count = 2 if gates else 1
        super().__init__(input_size, hidden_size, bias, recurrent_bias, recurrent_init=recurrent_init,
                         device=device, dtype=dtype)

    def _chunk_order(self) -> tuple[str, ...]:
        if not self.gates:
            return ("g",)
        gate_names = ("i", "f") + (("o",) if self.output_gate else ())
        if self.content == "srnn":
            return ("i", "f", "g") + gate_names[2:]
        return gate_names + ("g",)

    @property
    def input_bias_chunks(self) -> int:
        return self.num_chunks - 1 if self.content == "linear" else self.num_chunks

    def create_extra_parameters(self, factory: dict) -> None:
        if self.feed_forward:
            size = self.hidden_size
            self.weight_ff = nn.Parameter(torch.empty(size, size, **factory))
            self.bias_ff = nn.Parameter(torch.empty(size, **factory)) if self.bias else None
        else:
            self.register_parameter("weight_ff", None)
            self.register_parameter("bias_ff", None)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        if self.feed_forward:
            with torch.no_grad():
                nn.init.eye_(self.weight_ff)
                if self.bias_ff is not None:
                    nn.init.zeros_(self.bias_ff)

    def extra_repr(self) -> str:
        text = super().extra_repr()
        defaults = {"content": "srnn", "output_gate": True, "feed_forward": False,
                    "gates": True, "input_only": False}
        for name, default in defaults.items():
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)!r}"
        return text

    # -- hooks for ELSTM -------------------------------------------------------------
    def scale_at(self, t: int) -> Tensor | None:
        """Scaling vector s_t of the written content (ELSTM); None: no scaling."""
        return None

    def scales(self, steps: int, t: int) -> Tensor | None:
        """s_t for positions t..t+steps-1 as (steps, 1, H); None: no scaling."""
        return None

    def cell_bias(self) -> Tensor | None:
        """Bias b inside tanh(c_t + b) (ELSTM); None: no such bias."""
        return None

    # -- equations --------------------------------------------------------------------
    def project_input(self, x: Tensor) -> Tensor:
        """``W_ih x + b_ih + b_hh``: b_hh adds to the same pre-activations as b_ih, so both are
        added once, with the input product, outside the loop (a "linear" content gets no bias)."""
        bias = self.bias_ih
        if self.content == "linear" and bias is not None:
            bias = torch.cat([bias, bias.new_zeros(self.hidden_size)])
        return input_projection(x, self.weight_ih, combined_bias(bias, self.bias_hh))

    def _preactivations(self, xp_t: Tensor, h: Tensor) -> dict[str, Tensor]:
        if self.hh_chunks:
            width = self.hh_chunks * self.hidden_size
            recurrent = nn.functional.linear(h, self.weight_hh)  # b_hh is already in xp_t
            xp_t = torch.cat([xp_t[:, :width] + recurrent, xp_t[:, width:]], dim=1)
        return dict(zip(self.chunk_names, xp_t.chunk(self.num_chunks, dim=1)))

    def _content(self, g: Tensor, tanh=torch.tanh) -> Tensor:
        return g if self.content == "linear" else tanh(g)

    def _output(self, c: Tensor, o: Tensor | None, tanh=torch.tanh) -> Tensor:
        bias = self.cell_bias()
        squashed = tanh(c if bias is None else c + bias)
        hat = squashed if o is None else o * squashed
        if self.feed_forward:
            return tanh(nn.functional.linear(hat, self.weight_ff, self.bias_ff))
        return hat

    def memory_step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State, MemoryTerms]:
        if not self.gates:
            return super().memory_step(xp_t, state, t)
        h, c = state
        pre = self._preactivations(xp_t, h)
        i, f = torch.sigmoid(pre["i"]), torch.sigmoid(pre["f"])
        content = self._content(pre["g"])
        scale = self.scale_at(t)
        write = i if scale is None else scale * i
        c = f * c + write * content
        h = self._output(c, torch.sigmoid(pre["o"]) if self.output_gate else None)
        return h, (h, c), MemoryTerms(forget=f, write=write, content=content, memory=c)

    def step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State]:
        if not self.gates:
            h = torch.tanh(self._preactivations(xp_t, state[0])["g"])
            return h, (h,)
        return super().step(xp_t, state, t)

    # -- torch's fused op -------------------------------------------------------------
    #: The methods that hold the equations: a subclass overriding one (ELSTM's scales and
    #: cell bias) computes another cell than torch.nn.LSTM.
    EQUATIONS = ("project_input", "_preactivations", "_content", "_output", "memory_step", "step",
                 "scale_at", "scales", "cell_bias")

    def is_torch_lstm(self) -> bool:
        """Whether this cell computes exactly torch.nn.LSTM, judged by its settings, not its name:
        the default content ("srnn"), an output gate, no feed-forward, gates that see h_{t-1},
        and the equations and parameters of this class (so ELSTM, PRU, PRU+, LSTM+, the wsum
        ablations and I_t = X_t keep their loops)."""
        return (self.gates and self.content == "srnn" and self.output_gate and not self.feed_forward
                and not self.input_only and self.num_chunks == 4 and self.hh_chunks == 4
                and fused.overrides_nothing(self, LSTMCell, self.EQUATIONS))

    def fused_sequence(self, x: Tensor, state: State,
                       lengths: Tensor | None = None) -> tuple[Tensor, State] | None:
        """torch.nn.LSTM's fused op (cuDNN on a GPU, oneDNN on the CPU) on this cell's
        parameters, where the cell is torch's LSTM and :func:`.fused.applies`; else None."""
        if not self.is_torch_lstm():
            return None
        return fused.sequence("lstm", self, x, state, lengths)

    # -- fast loops -------------------------------------------------------------------
    def sequence(self, xp: Tensor, state: State, mask: Tensor | None = None,
                 t: int = 0) -> tuple[Tensor, State]:
        if not self.fast_loop_applies(xp):
            return self.reference_sequence(xp, state, mask, t)
        if not self.gates:
            return self._srnn_sequence(xp, state, mask)
        if self.input_only:
            return self._scan_sequence(xp, state, mask, t)
        return self._recurrent_sequence(xp, state, mask, t)

    def _srnn_sequence(self, xp: Tensor, state: State, mask: Tensor | None) -> tuple[Tensor, State]:
        (h0,) = state
        if self.input_only:
            out = activations.tanh(xp)
            return out, (final_from_outputs(out, h0, last_real_step(mask, xp.shape[0])),)
        out, h = SRNLoop.apply(xp, h0, self.weight_hh, mask)
        return out, (h,)

    def _scan_sequence(self, xp: Tensor, state: State, mask: Tensor | None, t: int) -> tuple[Tensor, State]:
        """Gates from the input alone: every gate at once, then c_t = f_t ⊙ c_{t-1} + s_t ⊙ i_t ⊙ g_t."""
        h0, c0 = state
        scale = self.scales(xp.shape[0], t)
        if self.feed_forward:  # rare combination: plain autograd over the vectorised equations
            out, cells = self._scan_with_autograd(xp, c0, mask, scale)
        else:
            slots = tuple(self.chunk_names.index(n) if n in self.chunk_names else -1 for n in "ifgo")
            out, cells = InputGatesLoop.apply(xp, scale, self.cell_bias(), c0, mask, slots,
                                              self.content != "linear")
        h = final_from_outputs(out, h0, last_real_step(mask, xp.shape[0]))
        return out, (h, cells[-1])

    def _scan_with_autograd(self, xp: Tensor, c0: Tensor, mask: Tensor | None,
                            scale: Tensor | None) -> tuple[Tensor, Tensor]:
        pre = dict(zip(self.chunk_names, xp.chunk(self.num_chunks, dim=2)))
        i, f = torch.sigmoid(pre["i"]), torch.sigmoid(pre["f"])
        written = i * self._content(pre["g"], activations.tanh)
        if scale is not None:
            written = written * scale
        if mask is None:
            cells = linear_scan(f, written, c0)
            c_new = cells
        else:  # padded steps carry the state: forget 1, write 0
            cells = linear_scan(torch.where(mask, f, 1.0), torch.where(mask, written, 0.0), c0)
            c_new = torch.addcmul(written, f, torch.cat([c0.unsqueeze(0), cells[:-1]]))
        out = self._output(c_new, torch.sigmoid(pre["o"]) if self.output_gate else None, activations.tanh)
        return out, cells

    def _recurrent_sequence(self, xp: Tensor, state: State, mask: Tensor | None,
                            t: int) -> tuple[Tensor, State]:
        h0, c0 = state
        width = self.hh_chunks * self.hidden_size
        xr = xp[..., :width]
        scale = self.scales(xp.shape[0], t)
        written = None
        if self.content != "srnn":
            written = self._content(xp[..., width:], activations.tanh)
            if scale is not None:
                written = written * scale
        out, h, c = LSTMLoop.apply(xr, written, scale if self.content == "srnn" else None, h0, c0,
                                   self.weight_hh, self.cell_bias(), self.weight_ff, self.bias_ff,
                                   mask, self.content == "srnn", self.output_gate)
        return out, (h, c)
