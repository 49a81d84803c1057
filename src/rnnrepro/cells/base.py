"""The contract every recurrent cell follows.

A cell computes one time step, ``forward(x_t, state, t) -> (h_t, state)``, with torch.nn
naming: ``weight_ih`` (chunks*hidden, input), ``weight_hh`` (hh_chunks*hidden, hidden),
``bias_ih``, ``bias_hh``. State is always a tuple of tensors of shape (batch, hidden)
((h,) for SRN and GRU, (h, c) for the LSTM family), so layers treat every cell alike.

The part of a step that depends only on the input, ``W_ih x_t + b_ih`` (plus ``b_hh`` where
it simply adds to the same pre-activation: SRN, LSTM family; not the GRU, whose b_hn sits
inside r ⊙ (...)), is computed for the whole sequence at once by
:meth:`RecurrentCell.project_input`, outside the time loop;
:meth:`RecurrentCell.sequence` then runs the loop over the projected inputs. ``t`` is the
0-based position of a step in its sequence: most cells ignore it, ELSTM's scaling vector
depends on it (elstm paper eq. 24).

Cells override ``sequence`` with a fast loop (hand-written backward, no per-step matrix
product when the gates see only the input) whose results equal the reference loop of
:meth:`RecurrentCell.reference_sequence` up to float rounding; ``with reference_loops():``
(or ``cell.fast_loops = False``) runs the reference loop instead, which the tests use to
check the fast ones.
"""
from __future__ import annotations

import contextlib
import math
from typing import Iterator, NamedTuple

import torch
from torch import Tensor, nn

from .products import input_projection

State = tuple[Tensor, ...]


RECURRENT_INITS = ("uniform", "identity")


class MemoryTerms(NamedTuple):
    """The pieces of a gated memory m_t = forget_t ⊙ m_{t-1} + write_t ⊙ content_t, each (T, B, H).

    For the LSTM family m is the memory cell c and write = s ⊙ i (s = 1 except for ELSTM);
    for the GRUs m is h, forget = z and write = 1 - z. At padded steps forget = 1 and
    write = 0, which is how the state is carried. ``memory`` holds m_1..m_T as the cell
    computed them. See :mod:`rnnrepro.cells.weighted_sum`.
    """

    forget: Tensor
    write: Tensor
    content: Tensor
    memory: Tensor


class RecurrentCell(nn.Module):
    """Base class: parameters, input projection, zero state and a reference time loop.

    Subclasses set ``num_chunks`` (blocks stacked in ``weight_ih``), ``hh_chunks``
    (blocks in ``weight_hh``, 0 for cells whose gates see only the input) and
    ``state_count`` (as class attributes, or as instance attributes before calling
    ``super().__init__``), and implement :meth:`memory_step` (gated memories) or :meth:`step`.

    ``recurrent_init``: "uniform" (torch.nn's U(-1/sqrt(H), 1/sqrt(H)) for every weight) or
    "identity": every H x H block of ``weight_hh`` starts as the identity matrix (the pru
    paper, Sec. 4: "We initialized all the recurrent connection matrices to an identity matrix").

    ``recurrent_bias``: torch.nn keeps two biases, ``b_ih`` and ``b_hh`` (the default here,
    so that cells equal torch's modules); the papers, and the elstm paper's Table 1 counts,
    have one per gate. ``recurrent_bias=False`` drops ``bias_hh``: for the SRN and the LSTM
    family the functions are the same (b_ih + b_hh act as one bias; only the initialisation
    and the optimiser's view of the bias differ), for the GRU it removes b_hn from
    n_t = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)).
    """

    num_chunks: int = 1
    hh_chunks: int = 1
    state_count: int = 1
    fast_loops: bool = True  # False: sequence() runs the reference loop (see reference_loops())
    #: Whether the block weights of drnn eq. 5 flatten a stack of this cell into one cell of the
    #: same kind (:func:`rnnrepro.layers.flatten_stack`); cells that support it set it to True.
    can_flatten: bool = False

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 recurrent_bias: bool = True, *, recurrent_init: str = "uniform", device=None, dtype=None):
        super().__init__()
        if recurrent_init not in RECURRENT_INITS:
            raise ValueError(f"recurrent_init must be one of {', '.join(RECURRENT_INITS)}, not {recurrent_init!r}")
        if recurrent_init != "uniform" and not self.hh_chunks:
            raise ValueError(f"recurrent_init={recurrent_init!r} needs a weight_hh; this cell's gates see only the input")
        self.recurrent_init = recurrent_init
        factory = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.recurrent_bias = bias and recurrent_bias and self.hh_chunks > 0
        self.weight_ih = nn.Parameter(torch.empty(self.num_chunks * hidden_size, input_size, **factory))
        self.bias_ih = (nn.Parameter(torch.empty(self.input_bias_chunks * hidden_size, **factory))
                        if bias else None)
        if self.hh_chunks:
            self.weight_hh = nn.Parameter(torch.empty(self.hh_chunks * hidden_size, hidden_size, **factory))
        else:
            self.register_parameter("weight_hh", None)
        if self.recurrent_bias:
            self.bias_hh = nn.Parameter(torch.empty(self.hh_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_hh", None)
        self.create_extra_parameters(factory)
        self.reset_parameters()

    def create_extra_parameters(self, factory: dict) -> None:
        """Hook for parameters beyond the four of torch.nn (ELSTM scales, PRU+ feed-forward)."""

    @property
    def input_bias_chunks(self) -> int:
        """Blocks of ``bias_ih``: one per input chunk unless a cell has an unbiased chunk."""
        return self.num_chunks

    def reset_parameters(self) -> None:
        """U(-1/sqrt(hidden), 1/sqrt(hidden)) for every parameter, as torch.nn.LSTM does.

        Subclasses call this first, then set the parameters their paper initialises
        otherwise (ELSTM scales to 1, the PRU+ feed-forward to the identity).
        """
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            nn.init.uniform_(weight, -bound, bound)
        if self.recurrent_init == "identity":
            with torch.no_grad():
                for block in self.weight_hh.split(self.hidden_size):
                    nn.init.eye_(block)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.recurrent_init != "uniform":
            text += f", recurrent_init={self.recurrent_init!r}"
        if not self.bias:
            text += ", bias=False"
        elif self.hh_chunks and not self.recurrent_bias:
            text += ", recurrent_bias=False"
        return text

    # -- the pieces a layer uses -------------------------------------------------------
    def project_input(self, x: Tensor) -> Tensor:
        """``W_ih x + b_ih`` for any leading shape: (T, B, input) -> (T, B, chunks*hidden).

        Cells whose b_hh adds to the same pre-activation include it here (and their
        :meth:`step` then adds only ``W_hh h``)."""
        return input_projection(x, self.weight_ih, self.bias_ih)

    def initial_state(self, batch_size: int, like: Tensor) -> State:
        """Zero state on the device and dtype of ``like``."""
        zeros = like.new_zeros(batch_size, self.hidden_size)
        return tuple(zeros for _ in range(self.state_count))

    def recurrent(self, h: Tensor) -> Tensor:
        """``W_hh h + b_hh``."""
        return nn.functional.linear(h, self.weight_hh, self.bias_hh)

    def step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State]:
        """One step from the projected input ``xp_t`` (B, chunks*hidden); ``t`` is the 0-based
        position. By default :meth:`memory_step` without its terms; cells with no gated memory
        override it."""
        h, state, _ = self.memory_step(xp_t, state, t)
        return h, state

    def forward(self, x_t: Tensor, state: State | None = None, t: int = 0) -> tuple[Tensor, State]:
        """One step from the raw input ``x_t`` (B, input) at position ``t`` (step-by-step decoding)."""
        if state is None:
            state = self.initial_state(x_t.shape[0], x_t)
        return self.step(self.project_input(x_t), state, t)

    def sequence(self, xp: Tensor, state: State, mask: Tensor | None = None,
                 t: int = 0) -> tuple[Tensor, State]:
        """Run the time loop over projected inputs ``xp`` (T, B, chunks*hidden).

        ``mask`` (T, B, 1), true where a sequence has a real token: at padded steps the
        state is carried over unchanged, so the final state of every sequence is the
        state after its own last token (the output at a padded step is the step's own
        output, which callers ignore). ``t`` is the position of the first step.
        Returns outputs (T, B, hidden) and the final state.

        Subclasses override this with a fast loop used while ``self.fast_loops`` is true.
        """
        return self.reference_sequence(xp, state, mask, t)

    def fused_sequence(self, x: Tensor, state: State,
                       lengths: Tensor | None = None) -> tuple[Tensor, State] | None:
        """The whole sequence from the raw input ``x`` (T, B, input) through torch's fused RNN op
        (cuDNN, oneDNN), or None where it does not apply: the layer then runs
        ``sequence(project_input(x), ...)``. ``lengths`` (B,) or None when every sequence is
        full length; results as :meth:`sequence`'s (outputs at padded steps excepted, which
        callers ignore). Only cells that compute exactly a torch.nn RNN override it (LSTM, GRU;
        see :mod:`.fused`); every other cell keeps its loop."""
        return None

    def fast_loop_applies(self, xp: Tensor) -> bool:
        """Whether :meth:`sequence` may take its fast loop: not for empty sequences, nor under
        autocast or with inputs in another dtype than the weights (the reference loop, plain
        torch operations, handles those)."""
        return (self.fast_loops and xp.shape[0] > 0 and xp.dtype == self.weight_ih.dtype
                and not torch.is_autocast_enabled(xp.device.type))

    def memory_step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State, MemoryTerms]:
        """:meth:`step` that also returns its gated-memory terms, each (B, H); cells with a
        gated memory implement it (and inherit ``step`` from it), others raise TypeError."""
        raise TypeError(f"cell {type(self).__name__} has no gated memory (no forget gate)")

    def memory_terms(self, xp: Tensor, state: State, mask: Tensor | None = None,
                     t: int = 0) -> MemoryTerms:
        """The gated-memory terms of every step of a sequence, each (T, B, H)."""
        terms = []
        masks = mask.unbind(0) if mask is not None else None
        for k, xp_t in enumerate(xp.unbind(0)):
            _, new_state, step_terms = self.memory_step(xp_t, state, t + k)
            if masks is not None:
                real = masks[k]
                new_state = tuple(torch.where(real, n, o) for n, o in zip(new_state, state))
                step_terms = MemoryTerms(torch.where(real, step_terms.forget, 1.0),
                                         torch.where(real, step_terms.write, 0.0),
                                         step_terms.content,
                                         torch.where(real, step_terms.memory, self.memory_of(state)))
            state = new_state
            terms.append(step_terms)
        return MemoryTerms(*(torch.stack(parts) for parts in zip(*terms)))

    def memory_of(self, state: State) -> Tensor:
        """The gated memory inside a state: c for the LSTM family (the last entry), h for GRUs."""
        return state[-1]

    def reference_sequence(self, xp: Tensor, state: State, mask: Tensor | None = None,
                           t: int = 0) -> tuple[Tensor, State]:
        """The plain loop of :meth:`step` calls, with autograd through every step."""
        outputs = []
        masks = mask.unbind(0) if mask is not None else None
        for k, xp_t in enumerate(xp.unbind(0)):
            h, new_state = self.step(xp_t, state, t + k)
            if masks is not None:
                new_state = tuple(torch.where(masks[k], n, o) for n, o in zip(new_state, state))
            state = new_state
            outputs.append(h)
        return torch.stack(outputs), state


def combined_bias(input_bias: Tensor | None, recurrent_bias: Tensor | None) -> Tensor | None:
    """b_ih + b_hh, with b_hh covering the leading chunks of b_ih (those multiplied by W_hh)."""
    if recurrent_bias is None:
        return input_bias
    if input_bias is None:
        return recurrent_bias
    width = recurrent_bias.shape[0]
    if width == input_bias.shape[0]:
        return input_bias + recurrent_bias
    return torch.cat([input_bias[:width] + recurrent_bias, input_bias[width:]])


@contextlib.contextmanager
def reference_loops() -> Iterator[None]:
    """Within the block every cell runs :meth:`RecurrentCell.reference_sequence`."""
    previous = RecurrentCell.fast_loops
    RecurrentCell.fast_loops = False
    try:
        yield
    finally:
        RecurrentCell.fast_loops = previous


def last_real_step(mask: Tensor | None, steps: int) -> Tensor | None:
    """(B,) index of each column's last true step in ``mask`` (T, B, 1), -1 if it has none."""
    if mask is None:
        return None
    positions = torch.arange(1, steps + 1, device=mask.device).view(steps, 1)
    return (mask.squeeze(-1) * positions).amax(0) - 1


def final_from_outputs(outputs: Tensor, initial: Tensor, last: Tensor | None) -> Tensor:
    """The state after each column's last real step, read from per-step ``outputs`` (T, B, H).

    For a state that nothing inside the loop reads back (the h of cells whose gates see only
    the input), carrying it over padded steps leaves the value of the last real step.
    """
    if last is None:
        return outputs[-1]
    index = last.clamp(min=0).view(1, -1, 1).expand(1, *outputs.shape[1:])
    picked = outputs.gather(0, index).squeeze(0)
    return torch.where((last >= 0).unsqueeze(1), picked, initial)
