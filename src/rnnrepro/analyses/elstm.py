"""Analyses of the elstm paper (Su & Kuo): memory responses of trained cells (Fig. 5), the data
sets' statistics (Table 3), and the parameter counts of trained parsers at the paper's sizes (Table 8).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import torch

from . import ANALYSES


def final_metric(run, metric: str) -> float:
    """A finished run's metric from its ``metrics.json``."""
    return float(json.loads((Path(run.folder) / "metrics.json").read_text())[metric])


@ANALYSES.register("memory_response")
def memory_response(runs: list, samples: dict | None = None, seed: int = 0) -> pd.DataFrame:
    """Memory responses (elstm eqs. 26-27) of trained cells on the "A"-presence task, per position.

        mr_k^LSTM  = [Π_{j=k+1}^T σ(W_f I_j)] σ(W_i I_k) φ(W_in I_k)            (26)
        mr_k^ELSTM = s_k [Π_{j=k+1}^T σ(W_f I_j)] σ(W_i I_k) φ(W_in I_k)        (27)

    i.e. the weight of the content written at step k in the memory c_T (see
    :mod:`rnnrepro.cells.weighted_sum`), computed on the sequence of length T with "A" at
    ``samples[T]`` (the paper: T = 10 with "A" at 9, T = 60 with "A" at 30). Of the runs of one
    (cell, T), the one with the lowest final training loss is used (restarts differ in whether
    they learn the task at all). Long form: cell, T, a_position, position, seed, metric
    (``memory_response``, ``abs_memory_response``, and for ELSTM ``scaling`` = s_k; per run,
    without a position, ``final_loss``), value.
    """
    from ..cells.weighted_sum import memory_terms, weighted_sum

    samples = {int(k): int(v) for k, v in (samples or {10: 9, 60: 30}).items()}
    best: dict[tuple[str, int], object] = {}
    for run in runs:
        T = int(run.identity["task"]["T"])
        if T not in samples:
            continue
        key = (run.identity["cell"]["name"], T)
        if key not in best or final_metric(run, "dev_loss") < final_metric(best[key], "dev_loss"):
            best[key] = run
    rows = []
    for (cell_name, T), run in sorted(best.items()):
        task, model = run.load()
        batch = task.sequence_with_a(samples[T])
        with torch.no_grad():
            x = model.encoder(batch.inputs)
            cell = model.rnn.cell
            response = weighted_sum(memory_terms(cell, x)).response()[:, 0, 0]  # hidden size 1 in the paper
            scaling = cell.scales(T, 0)[:, 0, 0] if hasattr(cell, "scaling") else None
        labels = {"cell": cell_name, "T": T, "a_position": samples[T], "seed": run.identity["seed"]}
        rows.append({**labels, "position": "", "metric": "final_loss", "value": final_metric(run, "dev_loss")})
        for k in range(T):
            rows.append({**labels, "position": k + 1, "metric": "memory_response", "value": float(response[k])})
            rows.append({**labels, "position": k + 1, "metric": "abs_memory_response",
                         "value": abs(float(response[k]))})
            if scaling is not None:
                rows.append({**labels, "position": k + 1, "metric": "scaling", "value": float(scaling[k])})
    return pd.DataFrame(rows)


def memory_response_labels(params: dict, reads: list[dict]) -> pd.DataFrame:
    """The label combinations :func:`memory_response` writes for runs with ``reads`` labels."""
    samples = {int(k): int(v) for k, v in (params.get("samples") or {10: 9, 60: 30}).items()}
    pairs = sorted({(labels["cell"], int(labels["T"])) for labels in reads if int(labels["T"]) in samples})
    return pd.DataFrame([{"cell": cell, "T": T, "a_position": samples[T], "position": k}
                         for cell, T in pairs for k in range(1, T + 1)])


memory_response.output_labels = memory_response_labels
memory_response.emitted_metrics = frozenset({"memory_response", "abs_memory_response", "scaling", "final_loss"})


@ANALYSES.register("dataset_statistics")
def dataset_statistics(datasets: list, data: dict | None = None, seed: int = 0) -> pd.DataFrame:
    """Sentences per split and vocabulary sizes of prepared data sets (elstm Table 3).

    Language-modelling corpora: lines per split, and the vocabulary (distinct tokens of all
    splits, ``<eos>`` included, as Mikolov's 10,000). Treebanks: sentences per split, and the
    distinct tokens of the training split in the FORM column (``vocabulary``) and in the LEMMA
    column (``lemma_vocabulary``: the column the paper's models read). Long form: dataset,
    metric, value.
    """
    from ..data.prepared import END_OF_LINE, load_prepared

    rows = []
    for key in datasets:
        splits = load_prepared((data or {})[key])
        for split, content in splits.items():
            if isinstance(content, dict):  # a treebank: columns of sentences
                count = len(content["form"])
            else:  # a language-modelling corpus: one token stream, lines closed by <eos>
                count = sum(token == END_OF_LINE for token in content)
            rows.append({"dataset": key, "metric": f"{split}_sentences", "value": count})
        if isinstance(splits["train"], dict):
            for column, metric in (("form", "vocabulary"), ("lemma", "lemma_vocabulary")):
                rows.append({"dataset": key, "metric": metric,
                             "value": len({word for sentence in splits["train"][column] for word in sentence})})
        else:
            rows.append({"dataset": key, "metric": "vocabulary",
                         "value": len({token for stream in splits.values() for token in stream})})
    return pd.DataFrame(rows)


dataset_statistics.output_labels = lambda params, reads: pd.DataFrame({"dataset": params["datasets"]})
dataset_statistics.emitted_metrics = frozenset({f"{split}_sentences" for split in ("train", "dev", "test")}
                                               | {"vocabulary", "lemma_vocabulary"})


@ANALYSES.register("parameters_at_size")
def parameters_at_size(runs: list, sizes: dict, cell: dict | None = None, data: dict | None = None,
                       seed: int = 0) -> pd.DataFrame:
    """Our UAS and LAS of trained runs beside the parameters of the same model at ``sizes``
    (elstm Table 8: the paper's embedding and hidden size 512), counted in our modules on the
    run's task (its vocabularies), with the cell settings ``cell`` over the run's (e.g.
    ``recurrent_bias: false``: one bias per gate, as Table 1 counts a cell; torch's two bias
    vectors per gate add up to one in the function the run computes). Long form: model, cell,
    metric (test_uas, test_las, params), value."""
    from ..train import build_run

    rows = []
    for run in runs:
        identity = {**run.identity, "model": {**run.identity["model"], **sizes},
                    "cell": {**run.identity["cell"], **(cell or {})}}
        _, model = build_run(identity, run.data)
        labels = {"model": run.identity["model"]["name"], "cell": run.identity["cell"]["name"],
                  "seed": run.identity["seed"]}
        rows.append({**labels, "metric": "params", "value": sum(p.numel() for p in model.parameters())})
        for metric in ("test_uas", "test_las"):
            rows.append({**labels, "metric": metric, "value": final_metric(run, metric)})
    return pd.DataFrame(rows)


parameters_at_size.output_labels = lambda params, reads: pd.DataFrame(
    [{"model": labels["model"], "cell": labels["cell"]} for labels in reads]).drop_duplicates()
parameters_at_size.emitted_metrics = frozenset({"params", "test_uas", "test_las"})
