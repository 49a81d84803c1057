"""Layers own the time loop; bidirectional (and later stacked, delayed, flattened) networks
are compositions of layers, so every registered cell works in every macro model.

Sequences are time-major: ``x`` is (T, B, features) and ``lengths`` (B,) gives each
sequence's number of real steps; padding sits at the end of each column.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .cells import RecurrentCell, State


def length_mask(lengths: Tensor | None, steps: int) -> Tensor | None:
    """(T, B, 1) boolean mask, true at real (non-padding) steps; None when ``lengths`` is None."""
    if lengths is None:
        return None
    positions = torch.arange(steps, device=lengths.device).unsqueeze(1)
    return (positions < lengths.unsqueeze(0)).unsqueeze(2)


def reverse_padded(x: Tensor, lengths: Tensor | None) -> Tensor:
    """Reverse every column of ``x`` (T, B, ...) within its own length, leaving padding in place.

    Applying it twice gives ``x`` back, which is how the backward direction returns its
    outputs to the input's time order.
    """
    if lengths is None:
        return x.flip(0)
    steps = x.shape[0]
    positions = torch.arange(steps, device=x.device).unsqueeze(1)  # (T, 1)
    lengths = lengths.to(x.device).unsqueeze(0)  # (1, B)
    index = torch.where(positions < lengths, lengths - 1 - positions, positions)  # (T, B)
    index = index.view(steps, -1, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(0, index)


class Recurrent(nn.Module):
    """A cell run over a sequence in one direction.

    Forward direction: h_t = cell(x_t, h_{t-1}), t = 1..T.
    ``reverse=True``: the same over each sequence read backwards (within its length),
    with outputs returned in the input's order, so ``out[t]`` has seen x_t..x_T.
    """

    def __init__(self, cell: RecurrentCell, reverse: bool = False):
        super().__init__()
        self.cell = cell
        self.reverse = reverse
        self.output_size = cell.hidden_size

    def extra_repr(self) -> str:
        return "reverse=True" if self.reverse else ""

    def forward(self, x: Tensor, lengths: Tensor | None = None,
                state: State | None = None) -> tuple[Tensor, State]:
        """(T, B, input) -> outputs (T, B, hidden), final state (after each sequence's last real step)."""
        if self.reverse:
            x = reverse_padded(x, lengths)
        if state is None:
            state = self.cell.initial_state(x.shape[1], x)
        mask = length_mask(lengths, x.shape[0])
        if mask is not None and bool(mask.all()):
            mask = None  # all sequences full length: skip the per-step select
        out, state = self.cell.sequence(self.cell.project_input(x), state, mask)
        if self.reverse:
            out = reverse_padded(out, lengths)
        return out, state


class Bidirectional(nn.Module):
    """Two independent directions whose outputs are concatenated: [h_t^f ; h_t^b] (Schuster & Paliwal)."""

    def __init__(self, forward_cell: RecurrentCell, backward_cell: RecurrentCell):
        super().__init__()
        self.forward_layer = Recurrent(forward_cell)
        self.backward_layer = Recurrent(backward_cell, reverse=True)
        self.output_size = forward_cell.hidden_size + backward_cell.hidden_size

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> tuple[Tensor, tuple[State, State]]:
        """(T, B, input) -> (T, B, 2*hidden), (final forward state, final backward state)."""
        out_f, state_f = self.forward_layer(x, lengths)
        out_b, state_b = self.backward_layer(x, lengths)
        return torch.cat([out_f, out_b], dim=2), (state_f, state_b)
