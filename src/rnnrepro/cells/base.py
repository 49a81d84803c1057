"""The contract every recurrent cell follows.

A cell computes one time step, ``forward(x_t, state) -> (h_t, state)``, with torch.nn
naming: ``weight_ih`` (chunks*hidden, input), ``weight_hh`` (chunks*hidden, hidden),
``bias_ih``, ``bias_hh``. State is always a tuple of tensors of shape (batch, hidden)
((h,) for SRN and GRU, (h, c) for the LSTM family), so layers treat every cell alike.

The part of a step that depends only on the input, ``W_ih x_t + b_ih``, is computed for
the whole sequence at once by :meth:`RecurrentCell.project_input`, outside the time loop;
:meth:`RecurrentCell.sequence` then runs the loop over the projected inputs. Cells may
override ``sequence`` with a faster loop (compiled, or with no per-step matrix product
when the gates see only the input) as long as the results stay the same.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

State = tuple[Tensor, ...]


class RecurrentCell(nn.Module):
    """Base class: parameters, input projection, zero state and a reference time loop.

    Subclasses set ``num_chunks`` (blocks stacked in ``weight_ih``), ``hh_chunks``
    (blocks in ``weight_hh``, 0 for cells with no recurrent matrix) and ``state_count``,
    and implement :meth:`step`.
    """

    num_chunks: int = 1
    hh_chunks: int = 1
    state_count: int = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = nn.Parameter(torch.empty(self.num_chunks * hidden_size, input_size, **factory))
        self.bias_ih = nn.Parameter(torch.empty(self.num_chunks * hidden_size, **factory)) if bias else None
        if self.hh_chunks:
            self.weight_hh = nn.Parameter(torch.empty(self.hh_chunks * hidden_size, hidden_size, **factory))
            self.bias_hh = nn.Parameter(torch.empty(self.hh_chunks * hidden_size, **factory)) if bias else None
        else:
            self.register_parameter("weight_hh", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(hidden), 1/sqrt(hidden)) for every parameter, as torch.nn.LSTM does."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            nn.init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")

    # -- the pieces a layer uses -------------------------------------------------------
    def project_input(self, x: Tensor) -> Tensor:
        """``W_ih x + b_ih`` for any leading shape: (T, B, input) -> (T, B, chunks*hidden)."""
        return nn.functional.linear(x, self.weight_ih, self.bias_ih)

    def initial_state(self, batch_size: int, like: Tensor) -> State:
        """Zero state on the device and dtype of ``like``."""
        zeros = like.new_zeros(batch_size, self.hidden_size)
        return tuple(zeros for _ in range(self.state_count))

    def recurrent(self, h: Tensor) -> Tensor:
        """``W_hh h + b_hh``."""
        return nn.functional.linear(h, self.weight_hh, self.bias_hh)

    def step(self, xp_t: Tensor, state: State, t: int = 0) -> tuple[Tensor, State]:
        """One step from the projected input ``xp_t`` (B, chunks*hidden); ``t`` is the 0-based position."""
        raise NotImplementedError

    def forward(self, x_t: Tensor, state: State | None = None) -> tuple[Tensor, State]:
        """One step from the raw input ``x_t`` (B, input)."""
        if state is None:
            state = self.initial_state(x_t.shape[0], x_t)
        return self.step(self.project_input(x_t), state)

    def sequence(self, xp: Tensor, state: State, mask: Tensor | None = None) -> tuple[Tensor, State]:
        """Run the time loop over projected inputs ``xp`` (T, B, chunks*hidden).

        ``mask`` (T, B, 1), true where a sequence has a real token: at padded steps the
        state is carried over unchanged, so the final state of every sequence is the
        state after its own last token. Returns outputs (T, B, hidden) and the final state.
        """
        outputs = []
        steps = xp.unbind(0)
        masks = mask.unbind(0) if mask is not None else None
        for t, xp_t in enumerate(steps):
            h, new_state = self.step(xp_t, state, t)
            if masks is not None:
                new_state = tuple(torch.where(masks[t], n, o) for n, o in zip(new_state, state))
            state = new_state
            outputs.append(h)
        return torch.stack(outputs), state
