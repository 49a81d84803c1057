"""Layers own the time loop; bidirectional, stacked, delayed and flattened networks are
compositions of layers, so every registered cell works in every macro model.

Bidirectional: elstm paper Sec. 4.1 (Fig. 6); stacked: drnn paper eqs. 2-4; delayed input
(d-RNN): drnn paper Secs. 3.2 and 4; flattened stack: drnn paper eqs. 5-6 and Theorem 1.

Sequences are time-major: ``x`` is (T, B, features) and ``lengths`` (B,) gives each
sequence's number of real steps; padding sits at the end of each column.
"""
from __future__ import annotations

import copy

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
        # a cell that is torch's (LSTM, GRU) may run torch's fused op; the cell decides
        fused = self.cell.fused_sequence(x, state, None if mask is None else lengths)
        if fused is not None:
            out, state = fused
        else:
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


# -- stacked networks (basics tutorial; drnn eqs. 2-4) ---------------------------------------
class Stacked(nn.Module):
    """k recurrent layers, each reading the outputs of the one below (drnn paper eqs. 2-4):

        h_t^(1) = cell_1(x_t, h_{t-1}^(1)),   h_t^(i) = cell_i(h_t^(i-1), h_{t-1}^(i)),  i = 2..k

    Each layer is a :class:`Recurrent` or, for a stacked BiRNN, a :class:`Bidirectional`
    whose concatenated outputs [h_t^f ; h_t^b] feed the next layer. ``dropout`` p: layer i
    reads D(h_t^(i-1)), dropout between layers (Zaremba et al. 2014; not on the first
    layer's input nor on the top layer's output, which the model handles).
    """

    def __init__(self, layers: list[nn.Module], dropout: float = 0.0):
        super().__init__()
        if not layers:
            raise ValueError("a stacked network needs at least one layer")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.layers = nn.ModuleList(layers)
        self.output_size = layers[-1].output_size
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None

    @classmethod
    def build(cls, make_cell, input_size: int, hidden_size: int, layers: int,
              bidirectional: bool = False, dropout: float = 0.0) -> Stacked:
        """``layers`` layers of cells ``make_cell(input_size, hidden_size)`` (two per layer if bidirectional)."""
        if layers < 1:
            raise ValueError(f"a stacked network needs layers >= 1, got {layers}")
        built = []
        size = input_size
        for _ in range(layers):
            if bidirectional:
                built.append(Bidirectional(make_cell(size, hidden_size), make_cell(size, hidden_size)))
            else:
                built.append(Recurrent(make_cell(size, hidden_size)))
            size = built[-1].output_size
        return cls(built, dropout)

    @property
    def bidirectional(self) -> bool:
        return isinstance(self.layers[0], Bidirectional)

    def cells(self) -> list[RecurrentCell]:
        """The cells bottom to top (one-directional stacks only), e.g. for :func:`flatten_stack`."""
        if self.bidirectional:
            raise ValueError("a bidirectional stack has two cells per layer")
        return [layer.cell for layer in self.layers]

    def forward(self, x: Tensor, lengths: Tensor | None = None,
                initial: list[State] | None = None) -> tuple[Tensor, list]:
        """(T, B, input) -> top layer's outputs (T, B, output_size), final state of every layer.

        ``initial``: each layer's starting state (one-directional stacks only); None: zero states."""
        if initial is not None and self.bidirectional:
            raise ValueError("a bidirectional stack cannot start from given states")
        states = []
        for i, layer in enumerate(self.layers):
            if i > 0 and self.dropout is not None:
                x = self.dropout(x)
            if initial is None:
                x, state = layer(x, lengths)
            else:
                x, state = layer(x, lengths, initial[i])
            states.append(state)
        return x, states


# -- delays (drnn paper Sec. 3.2 and Sec. 4) --------------------------------------------------
def delay_inputs(x: Tensor, lengths: Tensor | None, delay: int) -> tuple[Tensor, Tensor | None]:
    """Pad every sequence with ``delay`` zero vectors right after its last real step.

    drnn paper Sec. 4: "the input sequences are padded at the end with zero-vectors". Steps
    past a sequence's length are zeroed first, so the ``delay`` steps after its own last
    token are zeros whatever the batch padding held. Returns (T + delay, B, F) and
    ``lengths + delay``. ``delay = 0`` returns ``x`` and ``lengths`` untouched.
    """
    if delay < 0:
        raise ValueError(f"delay must be >= 0, got {delay}")
    if delay == 0:
        return x, lengths
    mask = length_mask(lengths, x.shape[0])
    if mask is not None:
        x = x * mask.to(x.dtype)
    x = torch.cat([x, x.new_zeros(delay, *x.shape[1:])])
    return x, None if lengths is None else lengths + delay


def read_delayed(outputs: Tensor, delay: int) -> Tensor:
    """The output for input position t is the one at step t + delay: (T + delay, ...) -> (T, ...)."""
    return outputs[delay:]


# -- the flattened single-layer network of drnn Theorem 1 -----------------------------------
class FlattenedRecurrent(nn.Module):
    """One cell with k·n units run as the flattened k-layer stack of drnn Theorem 1.

    The state ĥ_t ∈ R^{kn} is split into k blocks of n units; with the block weights of
    drnn eq. 5 (see :func:`flatten_stack`) block i at step t + i - 1 holds layer i's state
    at step t (Theorem 1: ĥ^{i}_{t+i-1} = h^(i)_t), so the top layer's output for input
    position t is block k at step t + k - 1 (ŷ_{t+k-1} = y_t, Ŵ_o = [0 ··· 0 W_o], eq. 6).

    The input is padded with k - 1 zero steps (:func:`delay_inputs`). Theorem 1 needs the
    initial state of Lemma 1, ĥ^{i}_{i-1} = h^(i)_0; we reach it exactly by a staggered
    start: during the first k - 1 steps block i keeps its initial (zero) state until step
    i - 1, so no activation has to be inverted. ``forward`` returns the whole state sequence
    ĥ_1..ĥ_{T+k-1} (T + k - 1, B, kn); :meth:`top_outputs` reads the top layer.
    """

    def __init__(self, cell: RecurrentCell, layers: int):
        super().__init__()
        if layers < 1 or cell.hidden_size % layers:
            raise ValueError(f"hidden size {cell.hidden_size} is not {layers} blocks of equal size")
        self.cell = cell
        self.layers = layers
        self.block_size = cell.hidden_size // layers
        self.delay = layers - 1
        self.output_size = cell.hidden_size

    def extra_repr(self) -> str:
        return f"layers={self.layers}, delay={self.delay}"

    def started_blocks(self, step: int, like: Tensor) -> Tensor:
        """(1, kn) boolean, true on the units of blocks 1..step+1 (0-based ``step``)."""
        units = torch.arange(self.cell.hidden_size, device=like.device)
        return (units < (step + 1) * self.block_size).unsqueeze(0)

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> tuple[Tensor, State]:
        """(T, B, input) -> states ĥ (T + k - 1, B, kn), final state (after each sequence's L + k - 1 steps)."""
        x, lengths = delay_inputs(x, lengths, self.delay)
        steps = x.shape[0]
        mask = length_mask(lengths, steps)
        if mask is not None and bool(mask.all()):
            mask = None
        xp = self.cell.project_input(x)
        state = self.cell.initial_state(x.shape[1], x)
        warm_up = []
        for step in range(min(self.delay, steps)):
            h, new_state = self.cell.step(xp[step], state, step)
            keep = self.started_blocks(step, x)
            if mask is not None:
                keep = keep & mask[step]
            warm_up.append(torch.where(keep, h, state[0]))
            state = tuple(torch.where(keep, new, old) for new, old in zip(new_state, state))
        rest, state = self.cell.sequence(xp[self.delay:], state,
                                         None if mask is None else mask[self.delay:], t=self.delay)
        outputs = torch.cat([torch.stack(warm_up), rest]) if warm_up else rest
        return outputs, state

    def top_block(self, h: Tensor) -> Tensor:
        """The last block of units (layer k) of ``h`` (..., kn) -> (..., n)."""
        return h[..., self.cell.hidden_size - self.block_size:]

    def top_outputs(self, outputs: Tensor) -> Tensor:
        """The stack's top-layer outputs y_1..y_T read from ĥ at delay k - 1: (T, B, n)."""
        return self.top_block(read_delayed(outputs, self.delay))


def flattening_obstacle(cell: RecurrentCell) -> str | None:
    """Why the block weights of drnn eq. 5 cannot turn a stack of ``cell`` into one cell of
    the same kind, or None when they can: cells that say so with ``can_flatten`` (the SRN, and
    LSTM-family cells) and whose every chunk sees h_{t-1} (LSTM, ELSTM, LSTM+, LSTM−GATES)."""
    name = f"{type(cell).__name__}({cell.extra_repr()})"
    if not cell.can_flatten:
        if cell.hh_chunks == cell.num_chunks:
            return (f"{name}: flattening is implemented for SRN and LSTM-family cells only; in a "
                    f"GRU the reset gate multiplies the whole recurrent term, which would also "
                    f"gate the lower layer's output that reaches block i through W_h")
        return f"{name}: flattening is implemented for SRN and LSTM-family cells only"
    if cell.hh_chunks != cell.num_chunks:
        return (f"{name}: {cell.num_chunks - cell.hh_chunks} of its chunks see only x_t, so the "
                f"lower layer's output, which reaches block i through the recurrent weights "
                f"(drnn eq. 5), cannot enter them")
    return None


def flatten_stack(cells: list[RecurrentCell], force: bool = False) -> FlattenedRecurrent:
    """The single-layer network equal to the stack of ``cells`` (bottom first), drnn eqs. 5-6.

    With n units per layer and chunk c of each weight (one chunk for the SRN; i, f, g, o for
    the LSTM), the flattened cell has k·n units and, per chunk,

        Ŵ_x = [W_x^(1); 0; ...; 0],   b̂ = [b^(1); ...; b^(k)],
        Ŵ_h = block bidiagonal: block (i, i) = W_h^(i), block (i, i-1) = W_x^(i)   (eq. 5)

    Extra per-unit parameters are concatenated by block (LSTM+'s W_ff block-diagonally,
    ELSTM's cell bias); ELSTM's scaling vectors are shifted by i - 1 positions in block i, since
    block i runs i - 1 steps behind the input. Raises NotImplementedError naming the cell for
    cells the construction cannot express (see :func:`flattening_obstacle`), unless ``force``:
    then the same block weights are built anyway, e.g. for a GRU, to measure how far eq. 5's
    construction is from the stack (drnn's "the proof easily extends to ... GRUs").
    """
    if not cells:
        raise ValueError("flatten_stack needs at least one cell")
    first = cells[0]
    obstacle = flattening_obstacle(first)
    # force builds the blocks anyway only where every chunk sees h_{t-1} (the GRU), so they exist
    if obstacle is not None and not (force and first.hh_chunks == first.num_chunks):
        raise NotImplementedError(f"cannot flatten a stack of {obstacle}")
    n = first.hidden_size
    for i, cell in enumerate(cells):
        if type(cell) is not type(first) or _configuration(cell) != _configuration(first):
            raise ValueError("flatten_stack needs the same kind of cell in every layer")
        if cell.hidden_size != n or (i > 0 and cell.input_size != n):
            raise ValueError(f"flatten_stack needs {n} units in every layer, fed by the layer below")
    flat = copy.deepcopy(first)
    flat.hidden_size = len(cells) * n
    with torch.no_grad():
        for name, _ in first.named_parameters(recurse=False):
            setattr(flat, name, nn.Parameter(_flattened_parameter(name, cells)))
    return FlattenedRecurrent(flat, len(cells))


def _configuration(cell: RecurrentCell) -> dict:
    """A cell's settings apart from its sizes (e.g. LSTM content, ELSTM period)."""
    return {key: value for key, value in vars(cell).items()
            if not key.startswith("_") and key not in ("input_size", "hidden_size", "training")}


def _flattened_parameter(name: str, cells: list[RecurrentCell]) -> Tensor:
    """One parameter of the flattened cell built from the stack's (drnn eq. 5)."""
    k, n, chunks = len(cells), cells[0].hidden_size, cells[0].num_chunks
    weights = [getattr(cell, name) for cell in cells]
    if name in ("bias_ih", "bias_hh"):  # chunk c: [b_c^(1); ...; b_c^(k)]
        return torch.cat([torch.cat(parts) for parts in zip(*(w.chunk(chunks) for w in weights))])
    if name in ("bias_ff", "bias_c"):
        return torch.cat(weights)
    if name == "weight_ff":
        return torch.block_diag(*weights)
    if name == "scaling":  # block i (0-based) at flattened step t is layer i at step t - i
        return torch.cat([w.roll(i, dims=0) for i, w in enumerate(weights)], dim=1)
    if name == "weight_ih":  # only block 1 sees x_t
        out = weights[0].new_zeros(chunks * k * n, weights[0].shape[1])
        for c, chunk in enumerate(weights[0].chunk(chunks)):
            out[c * k * n: c * k * n + n] = chunk
        return out
    if name == "weight_hh":
        out = weights[0].new_zeros(chunks * k * n, k * n)
        for i, cell in enumerate(cells):
            for c, (recurrent, lower) in enumerate(zip(cell.weight_hh.chunk(chunks), cell.weight_ih.chunk(chunks))):
                rows = slice(c * k * n + i * n, c * k * n + (i + 1) * n)
                out[rows, i * n:(i + 1) * n] = recurrent
                if i > 0:
                    out[rows, (i - 1) * n:i * n] = lower
        return out
    raise NotImplementedError(f"flatten_stack does not know how to flatten parameter {name!r} "
                              f"of {type(cells[0]).__name__}")
