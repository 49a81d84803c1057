"""Analyses of the RNN tutorial's study (Bilici; ``config/studies/basics.yaml``).

``gradient_norms`` (Sec. 10, eqs. 64-68): how ‖∂J^(i)/∂h^(j)‖ falls with the distance i − j
in trained language models and in the same models at initialisation, with eq. 68's bound for
the SRN. ``training_stability`` (Sec. 10.1, Algorithm 3): loss spikes, divergence and gradient
norms read off the training curves of runs with and without clipping. ``lstm_listings``
(Sec. 14): the shapes the tutorial's ``nn.LSTM`` listings print, and our cells and layers
against ``nn.LSTM`` with the same weights. ``tagger_fit`` (Sec. 6): training against dev
accuracy of the taggers. ``language_model_samples`` (Sec. 9.5, Figs. 11-12): perplexity beside
a unigram model's, and sentences sampled from each trained model. ``counting_by_length``
(Sec. 8): accuracy on aⁿbⁿ against n.

Every table is long form: the run's labels (when it reads runs), then extra labels, ``metric``
and ``value``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from . import ANALYSES


def run_metrics(folder: Path) -> dict[str, float]:
    """metrics.json of a finished run without its provenance (null: NaN)."""
    raw = json.loads((Path(folder) / "metrics.json").read_text())
    raw.pop("provenance", None)
    return {key: math.nan if value is None else float(value) for key, value in raw.items()}


def initial_model(identity: dict, data: Path | None):
    """(task, model) of a run as training starts: the seed set, then built as train_run does,
    so the weights are exactly those its training began from."""
    from ..train import build_run, seed_everything

    seed_everything(identity["seed"])
    task, model = build_run(identity, data)
    return task, model.eval()


# -- Sec. 10: vanishing gradients -----------------------------------------------------------------
def state_gradients(model, inputs: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """log10 ‖∂J^(i)/∂h^(j)‖ for every j ≤ i, per sequence, and the hidden states.

    ``model`` is a one-layer model (``basic``: encoder, ``rnn.cell``, ``head``) in float64;
    ``inputs`` (T, S) token ids, ``targets`` (T, S) classes. The cell runs step by step so that
    every h^(j) is a node of the graph; J^(i) = −log p(y_i | x_≤i) is the loss at step i (tutorial
    eq. 22's term t = i). Returns G (T, T, S) with G[i, j] = log10 ‖∂J^(i)/∂h^(j)‖ (NaN for
    j > i), and the states h^(1..T).
    """
    cell = model.rnn.cell
    xp = cell.project_input(model.encoder(inputs))
    state = cell.initial_state(inputs.shape[1], xp)
    hidden = []
    for t in range(inputs.shape[0]):
        _, state = cell.step(xp[t], state, t)
        hidden.append(state[0])  # h^(t): the tensor the next step and the head read
    steps = inputs.shape[0]
    norms = torch.full((steps, steps, inputs.shape[1]), math.nan, dtype=torch.float64)
    for i in range(steps):
        log_p = torch.log_softmax(model.head(hidden[i]), dim=-1)
        loss = -log_p.gather(-1, targets[i].unsqueeze(-1)).sum()  # Σ over sequences of J^(i)
        grads = torch.autograd.grad(loss, hidden[:i + 1], retain_graph=True)
        norms[i, :i + 1] = torch.stack([g.norm(dim=-1) for g in grads]).clamp_min(1e-300).log10()
    return norms, [h.detach() for h in hidden]


def srn_bound(norms: torch.Tensor, hidden: list[torch.Tensor], weight_hh: torch.Tensor) -> torch.Tensor:
    """log10 of eq. 68's bound for an SRN h^(t) = tanh(W_h h^(t−1) + W_x x^(t) + b):

        ‖∂J^(i)/∂h^(j)‖ ≤ ‖∂J^(i)/∂h^(i)‖ · ‖W_h‖^(i−j) · ∏_{j<t≤i} ‖diag σ'(·)_t‖,

    with ‖·‖ the L2 (spectral) norm, σ' = 1 − tanh² = 1 − (h^(t))² and ‖diag d‖ = max_k |d_k|.
    Same layout as ``norms`` (T, T, S)."""
    log_w = math.log10(float(torch.linalg.matrix_norm(weight_hh, ord=2)))
    derivative = torch.stack([(1 - h * h).amax(-1) for h in hidden]).clamp_min(1e-300).log10()  # (T, S)
    cumulative = derivative.cumsum(0)  # C[t] = Σ_{u≤t} log10 max σ'_u
    steps = len(hidden)
    bound = torch.full_like(norms, math.nan)
    for i in range(steps):
        for j in range(i + 1):
            bound[i, j] = norms[i, i] + (i - j) * log_w + cumulative[i] - cumulative[j]
    return bound


def by_distance(values: torch.Tensor) -> np.ndarray:
    """Mean over (i, sequences) of values[i, i − d] for each distance d = 0..T−1."""
    steps = values.shape[0]
    return np.array([float(torch.stack([values[i, i - d] for i in range(d, steps)]).mean()) for d in range(steps)])


def line_fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y on x and the fit's R² = 1 − SS_res / SS_tot."""
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    total = float(((y - y.mean()) ** 2).sum())
    return float(slope), 1.0 - float((residual ** 2).sum()) / total if total > 0 else 1.0


def evaluation_sequences(task, sentences: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``sentences`` test sequences of the language model with at least ``length``
    tokens, cut to their first ``length``: inputs (T, S) and target classes (T, S)."""
    chosen = [(inp[:length], tgt[:length]) for inp, tgt in task.sequences("test") if len(inp) >= length]
    if len(chosen) < sentences:
        raise ValueError(f"only {len(chosen)} test sequences have {length} tokens; {sentences} asked for")
    chosen = chosen[:sentences]
    return (torch.tensor([c[0] for c in chosen]).t(), torch.tensor([c[1] for c in chosen]).t())


def gradient_profile(model, inputs, targets, fit_from: int) -> tuple[list[dict], dict[str, float]]:
    """Per-distance rows and the summary of one model (see :func:`gradient_norms`)."""
    from ..cells.srn import SRNCell

    model = model.double()
    cell = model.rnn.cell
    norms, hidden = state_gradients(model, inputs, targets)
    curve = by_distance(norms)
    distances = np.arange(len(curve))
    rows = [{"distance": int(d), "metric": "log10_grad_norm", "value": float(v)} for d, v in zip(distances, curve)]
    slope, r2 = line_fit(distances[fit_from:], curve[fit_from:])
    weight = cell.weight_hh.detach()
    summary = {"log10_slope": slope, "fit_r2": r2, "spectral_norm": float(torch.linalg.matrix_norm(weight, ord=2))}
    if isinstance(cell, SRNCell):
        summary["spectral_radius"] = float(torch.linalg.eigvals(weight).abs().max())
        bound = srn_bound(norms, hidden, weight)
        rows += [{"distance": int(d), "metric": "log10_bound", "value": float(v)}
                 for d, v in zip(distances, by_distance(bound))]
        summary["max_log10_excess_over_bound"] = float(torch.nan_to_num(norms - bound, nan=-math.inf).max())
    return rows, summary


@ANALYSES.register("gradient_norms")
def gradient_norms(runs: list, sentences: int = 32, length: int = 30, fit_from: int = 1,
                   seed: int = 0) -> pd.DataFrame:
    """‖∂J^(i)/∂h^(j)‖ against the distance i − j (tutorial eqs. 66-68), per run, at
    initialisation and after training.

    For each run (a one-layer language model), on its first ``sentences`` test sentences of at
    least ``length`` tokens (cut to ``length``), in float64: every ∂J^(i)/∂h^(j), j ≤ i, by
    autograd (:func:`state_gradients`). Rows, labelled ``state`` (init, trained) and
    ``distance`` d: ``log10_grad_norm``, the mean over sentences and over i of
    log10 ‖∂J^(i)/∂h^(i−d)‖ (a geometric mean of the norms), and for the SRN ``log10_bound``,
    the same mean of eq. 68's bound. Summary rows per run, the state in the metric's name
    (``<metric>_init``, ``<metric>_trained``): ``log10_slope``, the least-squares slope of
    the log10 norm on d for d ≥ ``fit_from`` (−0.1: the norm shrinks by 10^0.1 ≈ 1.26 per
    step back), ``fit_r2`` (R² of that line: 1 for an exact exponential) and ``spectral_norm``
    (largest singular value of W_hh, all gates' blocks stacked for the LSTM and GRU); for the
    SRN also ``spectral_radius`` (max |λ_i| of W_h, the tutorial's condition max λ_i ≤ 1) and
    ``max_log10_excess_over_bound``, the largest log10(norm / bound) over every (i, j,
    sentence): at most 0, up to rounding, when eq. 68 holds.
    """
    rows = []
    for run in runs:
        trained_task, trained = run.load()
        _, initial = initial_model(run.identity, run.data)
        inputs, targets = evaluation_sequences(trained_task, sentences, length)
        for state, model in (("init", initial), ("trained", trained)):
            per_distance, summary = gradient_profile(model, inputs, targets, fit_from)
            rows += [{**run.labels, "state": state, **row} for row in per_distance]
            rows += [{**run.labels, "metric": f"{name}_{state}", "value": value} for name, value in summary.items()]
    return pd.DataFrame(rows)


gradient_norms.emitted_metrics = frozenset(
    {"log10_grad_norm", "log10_bound"}
    | {f"{name}_{state}" for state in ("init", "trained")  # spectral_radius and the bound's excess: SRN only
       for name in ("log10_slope", "fit_r2", "spectral_norm", "spectral_radius", "max_log10_excess_over_bound")})


# -- Sec. 10.1: gradient clipping -------------------------------------------------------------------
def curve_of(folder: Path, metric: str) -> np.ndarray:
    """Values of ``metric`` on a run's curve.tsv, in step order."""
    curve = pd.read_csv(Path(folder) / "curve.tsv", sep="\t")
    return curve[curve["metric"] == metric].sort_values("step")["value"].to_numpy(dtype=float)


def largest_rise(loss: np.ndarray, window: int) -> float:
    """max_t (L̄_t − min_{s≤t} L̄_s), L̄ the mean of ``window`` consecutive training losses:
    how far the smoothed loss climbs back above its best so far (inf once it is not finite)."""
    if len(loss) and not np.isfinite(loss).all():
        return math.inf
    if len(loss) < window:
        return math.nan
    smooth = np.convolve(loss, np.ones(window) / window, mode="valid")
    return float((smooth - np.minimum.accumulate(smooth)).max())


@ANALYSES.register("training_stability")
def training_stability(runs: list, window: int = 10, seed: int = 0) -> pd.DataFrame:
    """What the per-step training curves of runs with and without clipping show (Algorithm 3).

    Per run (its curve logged every step, with ``grad_norm``): ``rise_in_loss``, the largest
    climb of the ``window``-step mean training loss above its lowest value so far (nats; inf
    when the loss became NaN or infinite); ``final_loss``, the mean of the last ``window``
    losses; ``max_grad_norm`` and ``median_grad_norm`` (before clipping); ``diverged``
    (1 when training stopped at a non-finite loss) and ``diverged_step``; and the run's
    ``dev_accuracy`` and ``test_accuracy`` (NaN after a divergence).
    """
    rows = []
    for run in runs:
        loss, norms = curve_of(run.folder, "train_loss"), curve_of(run.folder, "grad_norm")
        metrics = run_metrics(run.folder)
        finite = loss[np.isfinite(loss)]
        values = {"rise_in_loss": largest_rise(loss, window),
                  "final_loss": float(finite[-window:].mean()) if len(finite) else math.nan,
                  "max_grad_norm": float(np.max(norms)) if len(norms) else math.nan,
                  "median_grad_norm": float(np.median(norms)) if len(norms) else math.nan,
                  "diverged": metrics.get("diverged", 0.0), "diverged_step": metrics.get("diverged_step", math.nan),
                  **{k: metrics[k] for k in ("dev_accuracy", "test_accuracy") if k in metrics}}
        rows += [{**run.labels, "metric": name, "value": value} for name, value in values.items()]
    return pd.DataFrame(rows)


training_stability.emitted_metrics = frozenset({"rise_in_loss", "final_loss", "max_grad_norm", "median_grad_norm",
                                                "diverged", "diverged_step", "dev_accuracy", "test_accuracy"})


# -- Sec. 14: the nn.LSTM listings -------------------------------------------------------------------
#: The tutorial's listings (Figs. 22-23): nn.LSTM(input_size, 128, num_layers, bidirectional,
#: batch_first=True) on torch.randn(16, 512, input_size), and the shapes they print. Fig. 23 (b)
#: (four bidirectional layers) has no code in the text: its settings are Fig. 22 (b)'s with
#: bidirectional = True, and it prints nothing to compare with.
LISTINGS = {
    "fig22a": {"input_size": 1, "layers": 1, "bidirectional": False,
               "printed": {"input": (16, 512, 1), "output": (16, 512, 128), "hidden": (1, 16, 128),
                           "cell": (1, 16, 128)}},
    "fig22b": {"input_size": 64, "layers": 4, "bidirectional": False,
               "printed": {"input": (16, 512, 64), "output": (16, 512, 128), "hidden": (4, 16, 128),
                           "cell": (4, 16, 128)}},
    "fig23a": {"input_size": 64, "layers": 1, "bidirectional": True,
               "printed": {"input": (16, 512, 64), "output": (16, 512, 256), "hidden": (2, 16, 128),
                           "cell": (2, 16, 128)}},
    "fig23b": {"input_size": 64, "layers": 4, "bidirectional": True, "printed": {}},
}


def torch_layout(states: list, bidirectional: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Our stack's final states (per layer (h, c), or ((h_f, c_f), (h_b, c_b))) in nn.LSTM's
    layout: h_n and c_n of shape (layers · directions, B, H), layer by layer, forward first."""
    pairs = [direction for layer in states for direction in (layer if bidirectional else (layer,))]
    return torch.stack([h for h, _ in pairs]), torch.stack([c for _, c in pairs])


@ANALYSES.register("lstm_listings")
def lstm_listings(batch_size: int = 16, seq_len: int = 512, hidden_size: int = 128, seed: int = 0) -> pd.DataFrame:
    """The tutorial's ``nn.LSTM`` listings run as printed, and our cells and layers beside them.

    Per listing: ``nn.LSTM`` built as in the listing (torch's initialisation, seeded), our
    :class:`rnnrepro.layers.Stacked` of LSTM cells with its weights copied in, both run on the
    same ``torch.randn(batch_size, seq_len, input_size)``. Rows labelled ``listing``,
    ``layers``, ``bidirectional``, ``implementation`` (``torch.nn.LSTM``, ``ours``) and the
    shapes each returns (ours time-major, shown batch-first as the listing prints them) and
    those the listing prints (``printed_<part>_shape``, empty where it prints none):
    ``printed_shapes``, how many shapes the listing prints (none for Fig. 23 (b)),
    ``printed_shape_mismatches``, how many of the shapes the listing prints (input, output,
    hidden, cell) differ from the ones returned (listings that print shapes only); for ours,
    ``max_abs_output_difference``, ``max_abs_hidden_difference`` and ``max_abs_cell_difference``
    to ``nn.LSTM``.
    """
    from torch import nn

    from ..cells import build_cell
    from ..layers import Stacked

    rows = []
    for index, (name, listing) in enumerate(LISTINGS.items()):
        torch.manual_seed(seed * 100 + index)
        lstm = nn.LSTM(input_size=listing["input_size"], hidden_size=hidden_size, num_layers=listing["layers"],
                       bidirectional=listing["bidirectional"], batch_first=True)
        x = torch.randn(batch_size, seq_len, listing["input_size"])
        ours = Stacked.build(lambda size, hidden: build_cell("lstm", size, hidden), listing["input_size"],
                             hidden_size, listing["layers"], listing["bidirectional"])
        with torch.no_grad():
            for i, layer in enumerate(ours.layers):
                cells = ((("", layer.forward_layer.cell), ("_reverse", layer.backward_layer.cell))
                         if listing["bidirectional"] else (("", layer.cell),))
                for suffix, cell in cells:
                    for weight in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                        getattr(cell, weight).copy_(getattr(lstm, f"{weight}_l{i}{suffix}"))
            theirs_out, (theirs_h, theirs_c) = lstm(x)
            ours_out, states = ours(x.transpose(0, 1))
            ours_out = ours_out.transpose(0, 1)
            ours_h, ours_c = torch_layout(states, listing["bidirectional"])
        results = {"torch.nn.LSTM": (theirs_out, theirs_h, theirs_c), "ours": (ours_out, ours_h, ours_c)}
        for implementation, (out, h, c) in results.items():
            shapes = {"input": tuple(x.shape), "output": tuple(out.shape), "hidden": tuple(h.shape),
                      "cell": tuple(c.shape)}
            labels = {"listing": name, "layers": listing["layers"], "bidirectional": listing["bidirectional"],
                      "implementation": implementation,
                      **{f"{part}_shape": str(list(shape)) for part, shape in shapes.items()},
                      **{f"printed_{part}_shape": str(list(listing["printed"][part])) if part in listing["printed"]
                         else "" for part in shapes}}
            rows.append({**labels, "metric": "printed_shapes", "value": len(listing["printed"])})
            if listing["printed"]:
                mismatches = sum(shapes[part] != shape for part, shape in listing["printed"].items())
                rows.append({**labels, "metric": "printed_shape_mismatches", "value": mismatches})
            if implementation == "ours":
                for part, mine, reference in (("output", out, theirs_out), ("hidden", h, theirs_h),
                                              ("cell", c, theirs_c)):
                    rows.append({**labels, "metric": f"max_abs_{part}_difference",
                                 "value": float((mine - reference).abs().max())})
    return pd.DataFrame(rows)


lstm_listings.emitted_metrics = frozenset({"printed_shapes", "printed_shape_mismatches", "max_abs_output_difference",
                                           "max_abs_hidden_difference", "max_abs_cell_difference"})


# -- Sec. 6: stacked taggers, training against dev accuracy -------------------------------------------
@ANALYSES.register("tagger_fit")
def tagger_fit(runs: list, batch_size: int = 100, seed: int = 0) -> pd.DataFrame:
    """Per trained tagger: ``train_accuracy`` (on the training sentences it was trained on),
    ``dev_accuracy`` and ``train_dev_gap`` = train − dev accuracy (overfitting shows as a
    large gap; a network that fits neither has a small gap and a low dev accuracy)."""
    from ..tasks.base import split_accuracy

    rows = []
    for run in runs:
        task, model = run.load()
        train = split_accuracy(task, model, "train", batch_size, "cpu")["train_accuracy"]
        dev = split_accuracy(task, model, "dev", batch_size, "cpu")["dev_accuracy"]
        for name, value in (("train_accuracy", train), ("dev_accuracy", dev), ("train_dev_gap", train - dev)):
            rows.append({**run.labels, "metric": name, "value": value})
    return pd.DataFrame(rows)


tagger_fit.emitted_metrics = frozenset({"train_accuracy", "dev_accuracy", "train_dev_gap"})


# -- Sec. 9.5: language models, perplexity and samples ---------------------------------------------------
def unigram_perplexity(task) -> float:
    """Test perplexity of the add-one unigram model of the training targets the run saw:
    p(w) = (count(w) + 1) / (N + V); exp of the mean −log p over the test targets."""
    train = [c for _, targets in task.sequences("train") for c in targets if c >= 0]
    test = [c for _, targets in task.sequences("test") for c in targets if c >= 0]
    counts = np.bincount(train, minlength=task.vocabulary_size).astype(float)
    log_p = np.log((counts + 1) / (len(train) + task.vocabulary_size))
    return float(np.exp(-log_p[test].mean()))


def sentence(task, model, generator: torch.Generator, max_tokens: int, temperature: float) -> list[str]:
    """Tokens sampled after a line start up to (not including) the first ``<eos>``."""
    from ..data.prepared import END_OF_LINE

    tokens = task.sample(model, max_tokens, generator, temperature=temperature)
    return tokens[:tokens.index(END_OF_LINE)] if END_OF_LINE in tokens else tokens


@ANALYSES.register("language_model_samples")
def language_model_samples(runs: list, samples: int = 3, max_tokens: int = 30, temperatures: list | None = None,
                           seed: int = 0) -> pd.DataFrame:
    """Per trained language model: its ``dev_perplexity`` and ``test_perplexity`` (from its
    metrics.json), ``unigram_test_perplexity`` (:func:`unigram_perplexity`, the best model that
    ignores the past, on the same training tokens), and ``samples`` sentences per temperature τ
    (w_t ~ softmax(logits_t / τ), fed back, from a generator seeded by ``seed`` afresh per run;
    at most ``max_tokens``, cut at the first <eos>): rows labelled ``temperature``, ``sample``
    and ``text``, metric ``sample_tokens`` (its length)."""
    rows = []
    for run in runs:
        task, model = run.load()
        metrics = run_metrics(run.folder)
        for name in ("dev_perplexity", "test_perplexity"):
            rows.append({**run.labels, "metric": name, "value": metrics.get(name, math.nan)})
        rows.append({**run.labels, "metric": "unigram_test_perplexity", "value": unigram_perplexity(task)})
        generator = torch.Generator().manual_seed(seed)
        for temperature in temperatures or [1.0]:
            for index in range(samples):
                tokens = sentence(task, model, generator, max_tokens, float(temperature))
                rows.append({**run.labels, "temperature": temperature, "sample": index + 1, "text": " ".join(tokens),
                             "metric": "sample_tokens", "value": len(tokens)})
    return pd.DataFrame(rows)


language_model_samples.emitted_metrics = frozenset({"dev_perplexity", "test_perplexity", "unigram_test_perplexity",
                                                    "sample_tokens"})


# -- Sec. 8: counting ------------------------------------------------------------------------------------
@ANALYSES.register("counting_by_length")
def counting_by_length(runs: list, batch_size: int = 100, seed: int = 0) -> pd.DataFrame:
    """Per trained aⁿbⁿ recogniser (task ``anbn``): rows labelled ``test_n`` (n) with ``accuracy``
    (balanced) and ``recognised`` (all six test strings right) for n = 1..max_test_n, and
    summary rows ``recognised_up_to`` (the largest n* recognised at every n ≤ n*),
    ``max_train_n`` (its training range), ``accuracy_seen`` and ``accuracy_unseen``
    (mean accuracy at n ≤ and > max_train_n); see :mod:`rnnrepro.tasks.counting`."""
    rows = []
    for run in runs:
        task, model = run.load()
        per_n = task.by_length(model, batch_size)
        for row in per_n:
            rows += [{**run.labels, "test_n": row["n"], "metric": name, "value": row[name]}
                     for name in ("accuracy", "recognised")]
        metrics = task.evaluate(model, "test", batch_size, "cpu")
        summary = {"recognised_up_to": metrics["test_recognised_up_to"], "max_train_n": task.max_train_n,
                   "accuracy_seen": metrics["test_accuracy_seen"],
                   "accuracy_unseen": metrics.get("test_accuracy_unseen", math.nan)}
        rows += [{**run.labels, "metric": name, "value": value} for name, value in summary.items()]
    return pd.DataFrame(rows)


counting_by_length.emitted_metrics = frozenset({"accuracy", "recognised", "recognised_up_to", "max_train_n",
                                                "accuracy_seen", "accuracy_unseen"})
