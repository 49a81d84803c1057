"""Analyses of the wsum paper ("LSTM as a dynamically computed element-wise weighted sum"):
the weighted-sum weights of Table 5, read from trained LSTM−S-RNN−OUT models.

For a cell of the LSTM family, unrolling c_t = i_t ⊙ c̃_t + f_t ⊙ c_{t-1} from c_0 = 0 gives
(wsum eq. 8; :mod:`rnnrepro.cells.weighted_sum`)

    c_t = Σ_{j ≤ t} w_j^t ⊙ c̃_j,        w_j^t = i_j ⊙ Π_{k=j+1..t} f_k,

and for LSTM−S-RNN−OUT (eq. 10), whose content c̃_j = W_cx x_j and output h_t = tanh(c_t) are
context-independent, the whole layer is (eq. 11)

    h_t = OUTPUT(Σ_{j ≤ t} w_j^t ⊙ CONTENT(x_j)),    CONTENT(x) = W_cx x,  OUTPUT(c) = tanh(c).

``weight_maps`` reads the first recurrent layer of each trained model (the layer whose content
CONTENT(x_j) is a function of word j alone: its input is the word's embedding, with the UPOS
embedding and the ROOT vector for the parser) on one test sentence, run from the zero state in
float64, and writes

- the heat map of Table 5: ‖w_j^t‖₂ for every word t (the column, the word the sum represents)
  and word j (the row, the word summed over). The LM is one-directional (w_j^t = 0 for j > t);
  the parser's layer is bidirectional, and its weight on word j for word t is the concatenation
  [w→_j^t ; w←_j^t] of both directions' weights (zero for j > t forward and for j < t backward),
  so its norm is sqrt(‖w→_j^t‖² + ‖w←_j^t‖²): the forward direction above the diagonal, the
  backward one below it (the paper: "The top-right triangle indicates weights from the forward
  direction, and the bottom-left triangle indicates from the backward direction");
- eq. 11 checked on the same computation (every step, every direction): the largest
  |c̃_j − W_cx x_j| (the content the cell computed against the context-free CONTENT), the largest
  |Σ_j w_j^t ⊙ c̃_j − c_t| (the sum against the memory of the cell's step equations) and the
  largest |tanh(Σ_j w_j^t ⊙ c̃_j) − h_t| (against the outputs of the layer as the model runs
  it, its fast loop), also for a random float64 cell on random padded sequences (``network``
  ``random``), which needs no training and so is there at every scale.

Long form: ``network`` (``lm``, ``parser`` or ``random``), ``cell``, then for the map ``t``,
``j`` (0-based positions; the parser's position 0 is its ROOT), ``word_t``, ``word_j``, metric
``weight_norm``; for the checks (no t, j) metrics ``max_abs_content_difference``,
``max_abs_memory_difference``, ``max_abs_output_difference`` and ``words`` (the sentence's length).
"""
from __future__ import annotations

import pandas as pd
import torch
from torch import Tensor

from . import ANALYSES

DOUBLE = torch.float64
CHECKS = ("max_abs_content_difference", "max_abs_memory_difference", "max_abs_output_difference")
ROOT = "<root>"


def network_of(task_name: str) -> str:
    """The ``network`` label of a run's task: ``lm`` or ``parser``."""
    names = {"lm": "lm", "dp_biaffine": "parser"}
    if task_name not in names:
        raise ValueError(f"weight_maps reads language models (task lm) and biaffine parsers (task dp_biaffine), "
                         f"not task {task_name!r}")
    return names[task_name]


def first_fitting(lengths: list[int], min_words: int, max_words: int) -> int:
    """Index of the first sentence of ``min_words`` to ``max_words`` words."""
    for index, length in enumerate(lengths):
        if min_words <= length <= max_words:
            return index
    raise ValueError(f"no test sentence of {min_words} to {max_words} words")


def lm_sentence(task, min_words: int, max_words: int) -> tuple[list[int], list[str]]:
    """Input ids and words of the first test line of the length wanted (without its ``<eos>``)."""
    lines, current = [], []
    for token in task.streams["test"]:
        if token == task.eos:
            lines.append(current)
            current = []
        else:
            current.append(token)
    line = lines[first_fitting([len(line) for line in lines], min_words, max_words)]
    return line, [task.vocab.itos[token] for token in line]


def lm_layer_input(task, model, min_words: int, max_words: int):
    """(first layer, its input x (T, 1, E), the words) of a stacked LM on one test line."""
    ids, words = lm_sentence(task, min_words, max_words)
    x = model.encoder(torch.tensor(ids).unsqueeze(1))
    return model.rnn.layers[0], x, words


def parser_layer_input(task, model, min_words: int, max_words: int):
    """(first BiRNN layer, its input x (T+1, 1, E) with the ROOT vector first, the words) of a
    biaffine parser on one test sentence."""
    from ..tasks.base import Batch

    index = first_fitting([len(s) for s in task.word_ids["test"]], min_words, max_words)
    ids = task.word_ids["test"][index]
    extra = {}
    if task.tags is not None:
        extra["upos"] = torch.tensor(task.tags.encode(task.columns["test"]["upos"][index])).unsqueeze(1)
    batch = Batch(torch.tensor(ids).unsqueeze(1), torch.tensor([len(ids)]), torch.zeros(0), extra)
    x, _ = model.rnn_inputs(batch)
    return model.rnn.layers[0], x, [ROOT] + list(task.gold["test"][index].forms)


def direction_weights(layer, x: Tensor, lengths: Tensor | None = None,
                      mask: Tensor | None = None) -> tuple[Tensor, dict[str, float]]:
    """Weights w_j^t (T, T, B, H) of a one-directional layer (a :class:`~rnnrepro.layers.Recurrent`,
    forward or reverse) in the input's time order, and the eq. 11 differences (the output one
    only for cells whose output is tanh(c_t), the content one only for a linear content)."""
    from ..cells.weighted_sum import memory_terms, weighted_sum
    from ..layers import reverse_padded

    cell = layer.cell
    seen = reverse_padded(x, lengths) if layer.reverse else x  # the order in which the cell reads x
    terms = memory_terms(cell, seen, lengths)
    summed = weighted_sum(terms)
    real = torch.ones_like(terms.memory, dtype=torch.bool) if mask is None else mask.expand_as(terms.memory)
    checks = {"max_abs_memory_difference": float((summed.memory() - terms.memory).abs()[real].max())}
    if getattr(cell, "content", None) == "linear":
        g = cell.chunk_names.index("g")
        content = seen @ cell.weight_ih[g * cell.hidden_size:(g + 1) * cell.hidden_size].T
        checks["max_abs_content_difference"] = float((terms.content - content).abs()[real].max())
    if getattr(cell, "gates", False) and not cell.output_gate and not cell.feed_forward and cell.cell_bias() is None:
        outputs, _ = layer(x, lengths)  # the layer's own (fast) loop, in the input's order
        if layer.reverse:
            outputs = reverse_padded(outputs, lengths)
        checks["max_abs_output_difference"] = float((torch.tanh(summed.memory()) - outputs).abs()[real].max())
    weights = summed.weights
    if layer.reverse:  # back to the input's order: step t of the reading is position T-1-t (one full sentence)
        if lengths is not None and bool((lengths != x.shape[0]).any()):
            raise ValueError("backward weight maps are read from full-length sequences only")
        weights = weights.flip(0, 1)
    return weights, checks


def layer_weights(layer, x: Tensor) -> tuple[Tensor, dict[str, float]]:
    """‖w_j^t‖₂ (T, T) of the first sentence of ``x`` for a one-directional or bidirectional
    layer (both directions' weights concatenated), and the largest eq. 11 differences."""
    from ..layers import Bidirectional

    directions = [layer.forward_layer, layer.backward_layer] if isinstance(layer, Bidirectional) else [layer]
    squares, checks = 0.0, {}
    for direction in directions:
        weights, found = direction_weights(direction, x)
        squares = squares + weights[:, :, 0].pow(2).sum(-1)
        for name, value in found.items():
            checks[name] = max(checks.get(name, 0.0), value)
    return squares.sqrt(), checks


def random_check(cell_name: str, steps: int, batch: int, seed: int) -> dict[str, float]:
    """The eq. 11 differences of a random float64 cell (weights moved off their initial values)
    on random sequences of different lengths."""
    from ..cells import build_cell
    from ..layers import Recurrent, length_mask

    generator = torch.Generator().manual_seed(seed)
    inputs, hidden = 5, 7
    with torch.random.fork_rng(devices=[]):  # the cell's initial weights from the seed too, not the process's RNG
        torch.manual_seed(seed)
        cell = build_cell(cell_name, inputs, hidden, dtype=DOUBLE)
    with torch.no_grad():
        for parameter in cell.parameters():
            parameter.add_(0.5 * torch.randn(parameter.shape, generator=generator, dtype=DOUBLE))
    x = torch.randn(steps, batch, inputs, generator=generator, dtype=DOUBLE)
    lengths = torch.linspace(steps, max(1, steps // 2), batch).round().long()
    with torch.no_grad():
        _, checks = direction_weights(Recurrent(cell), x, lengths, length_mask(lengths, steps))
    return checks


@ANALYSES.register("weight_maps")
def weight_maps(runs: list, min_words: int = 10, max_words: int = 20, random_cell: str = "lstm_minus_srnn_out",
                random_steps: int = 12, random_batch: int = 3, seed: int = 0) -> pd.DataFrame:
    """The Table 5 heat maps and the eq. 11 checks (module docstring) of every run read (a
    stacked LM or a biaffine parser), on the first test sentence of ``min_words`` to
    ``max_words`` words, and of a random ``random_cell``."""
    rows = []
    for run in runs:
        network = network_of(run.identity["task"]["name"])
        task, model = run.load()
        model = model.double().eval()
        reader = lm_layer_input if network == "lm" else parser_layer_input
        with torch.no_grad():
            layer, x, words = reader(task, model, min_words, max_words)
            norms, checks = layer_weights(layer, x)
        labels = {"network": network, "cell": run.identity["cell"]["name"]}
        for t, word_t in enumerate(words):
            for j, word_j in enumerate(words):
                rows.append({**labels, "t": t, "j": j, "word_t": word_t, "word_j": word_j,
                             "metric": "weight_norm", "value": float(norms[t, j])})
        rows += [{**labels, "metric": name, "value": value} for name, value in checks.items()]
        rows.append({**labels, "metric": "words", "value": len(words)})
    labels = {"network": "random", "cell": random_cell}
    checks = random_check(random_cell, random_steps, random_batch, seed)
    rows += [{**labels, "metric": name, "value": value} for name, value in checks.items()]
    return pd.DataFrame(rows)


def weight_maps_labels(params: dict, reads: list[dict]) -> pd.DataFrame:
    """The label combinations :func:`weight_maps` writes for runs with ``reads`` labels: a
    3-word map per network (the real length is the sentence's) and the checks' rows."""
    rows = [{"network": "random", "cell": params.get("random_cell", "lstm_minus_srnn_out")}]
    for labels in reads:
        network = {"network": network_of(labels["task"]), "cell": labels["cell"]}
        rows.append(network)
        rows += [{**network, "t": t, "j": j} for t in range(3) for j in range(3)]
    return pd.DataFrame(rows).drop_duplicates()


weight_maps.output_labels = weight_maps_labels
weight_maps.emitted_metrics = frozenset({"weight_norm", *CHECKS, "words"})
