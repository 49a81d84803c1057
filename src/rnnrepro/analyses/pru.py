"""Analyses of the pru paper (Choi): translations of the trained models with beam 1 and 12
(Tables 3-4), the validation-BLEU curve's peak and fall (Fig. 4's overfitting) and the trained
feed-forward matrix W_o of PRU+ (Sec. 4.3.3: "the average of the diagonal elements of W_o for
the PRU+ units is 3.34").

Each reads finished translation runs (:class:`~rnnrepro.analyses.TrainedRun`) and writes one
long-form table whose labels are the runs' own (``cell``, ``direction``) plus its own
(``beam``, ``parameter``); every function has an ``output_labels`` companion that says which
label combinations it writes for runs of given labels (the claim tests build their data on them).
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import torch

from . import ANALYSES

#: Run labels the tables keep (the others, task and model, are the same for every run read).
KEPT_LABELS = ("cell", "direction")


def labels_of(run_labels: dict) -> dict:
    """The run's labels a table keeps, and its seed."""
    return {**{k: run_labels[k] for k in KEPT_LABELS if k in run_labels}, "seed": run_labels.get("seed", "")}


def distinct(reads: list[dict]) -> list[dict]:
    """The distinct kept labels of the runs read, in order."""
    seen, out = set(), []
    for labels in reads:
        kept = {k: labels[k] for k in KEPT_LABELS if k in labels}
        key = tuple(sorted(kept.items()))
        if key not in seen:
            seen.add(key)
            out.append(kept)
    return out


# -- Tables 3-4: BLEU with beam 1 and 12 on dev and test --------------------------------------
@ANALYSES.register("translation_bleu")
def translation_bleu(runs: list, beams: list | None = None, splits: list | None = None, batch_size: int = 50,
                     seed: int = 0) -> pd.DataFrame:
    """Corpus BLEU of each trained translation model's decoding of ``splits`` with each beam
    width of ``beams`` (the paper's Tables 3-4: 1 and 12, test and, in parentheses, dev).

    Decoding and BLEU are the task's own (:meth:`rnnrepro.tasks.translation.Translation.translate`:
    beam search keeping the ``beam`` best partial translations by log p(y_≤t | X), the finished
    one of highest log p(Y|X) returned, no length normalisation; un-BPE'd output against the
    tokenised references, sacrebleu with ``tokenize="none"``). Beam 1 is greedy decoding, so its
    numbers equal the run's own ``dev_bleu`` / ``test_bleu``. Decodes on CUDA when present (see
    :func:`rnnrepro.train.pick_device`). Long form: cell, direction, seed, beam, metric
    (``<split>_bleu``), value.
    """
    from ..tasks.translation import corpus_bleu
    from ..train import pick_device

    beams = [int(b) for b in (beams or [1, 12])]
    splits = list(splits or ["dev", "test"])
    device = pick_device()  # CUDA when present (paper-scale models), else the CPU; RNNREPRO_DEVICE overrides
    rows = []
    for run in runs:
        task, model = run.load()
        model.to(device)
        for split in splits:
            references = task.references(split)
            for beam in beams:
                hypotheses = task.translate(model, split, batch_size, device, beam_size=beam)
                rows.append({**labels_of(run.labels), "beam": beam, "metric": f"{split}_bleu",
                             "value": corpus_bleu(hypotheses, references)})
    return pd.DataFrame(rows)


def translation_bleu_labels(params: dict, reads: list[dict]) -> pd.DataFrame:
    """The label combinations :func:`translation_bleu` writes for runs with ``reads`` labels."""
    beams = [int(b) for b in (params.get("beams") or [1, 12])]
    return pd.DataFrame([{**labels, "beam": beam} for labels in distinct(reads) for beam in beams])


translation_bleu.output_labels = translation_bleu_labels
translation_bleu.emitted_metrics = lambda splits=None, **_: {f"{split}_bleu" for split in splits or ["dev", "test"]}


# -- Fig. 4: does the validation BLEU fall after its peak? -------------------------------------
def read_curve(folder: Path, metric: str) -> list[tuple[int, int, float]]:
    """(step, epoch, value) of ``metric`` on a run's ``curve.tsv``, in order."""
    curve = pd.read_csv(Path(folder) / "curve.tsv", sep="\t")
    rows = curve[curve["metric"] == metric]
    return [(int(s), int(e), float(v)) for s, e, v in zip(rows["step"], rows["epoch"], rows["value"])]


@ANALYSES.register("validation_peak")
def validation_peak(runs: list, metric: str = "dev_bleu", seed: int = 0) -> pd.DataFrame:
    """Peak and end of each run's validation curve of ``metric`` (higher is better), one point
    per epoch (Fig. 4 plots validation BLEU with beam 1 against the iteration):

        peak = max_e v_e,   last = v_E (the last epoch trained),   drop = peak − last ≥ 0,

    and ``peak_epoch`` (the first epoch at the peak) and ``epochs`` (E). A model that overfits
    loses validation BLEU after its peak (drop > 0; with early stopping the run ends ``patience``
    epochs after it); one that does not ends at its peak (drop 0). Long form: cell, direction,
    seed, metric (``peak_<metric>``, ``last_<metric>``, ``<metric>_drop``, ``peak_epoch``,
    ``epochs``), value.
    """
    rows = []
    for run in runs:
        curve = read_curve(run.folder, metric)
        if not curve:
            raise ValueError(f"run {run.folder}: no {metric} on its curve")
        values = [v for _, _, v in curve]
        peak = max(values)
        first = next(e for _, e, v in curve if v == peak)
        labels = labels_of(run.labels)
        for name, value in ((f"peak_{metric}", peak), (f"last_{metric}", values[-1]),
                            (f"{metric}_drop", peak - values[-1]), ("peak_epoch", first), ("epochs", curve[-1][1])):
            rows.append({**labels, "metric": name, "value": value})
    return pd.DataFrame(rows)


def validation_peak_labels(params: dict, reads: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(distinct(reads))


validation_peak.output_labels = validation_peak_labels
validation_peak.emitted_metrics = lambda metric="dev_bleu", **_: {f"peak_{metric}", f"last_{metric}", f"{metric}_drop",
                                                                  "peak_epoch", "epochs"}


# -- Sec. 4.3.3: the trained W_o of PRU+ ---------------------------------------------------------
@ANALYSES.register("feedforward_diagonal")
def feedforward_diagonal(runs: list, seed: int = 0) -> pd.DataFrame:
    """Mean of the diagonal of every trained feed-forward matrix W_o (``weight_ff``, initialised
    to the identity; PRU+ and LSTM+, pru eq. 7) of each run, per matrix (the encoder's forward
    and backward cells, the decoder's), and ``all``: the mean over the diagonals of all of them,

        d = (1/(m·H)) Σ_{k=1..m} Σ_i (W_o^(k))_ii,

    with the mean of |W_o − diag(W_o)| off the diagonal beside it (``offdiagonal_mean_abs``), to show
    that the diagonal, not the whole matrix, grew. Long form: cell, direction, seed, parameter,
    metric (``diagonal_mean``, ``offdiagonal_mean_abs``), value.
    """
    rows = []
    for run in runs:
        _, model = run.load()
        matrices = {name: tensor.detach().double() for name, tensor in model.state_dict().items()
                    if name.endswith("weight_ff")}
        if not matrices:
            raise ValueError(f"run {run.folder}: its cell has no feed-forward matrix weight_ff (PRU+, LSTM+)")
        labels = labels_of(run.labels)
        for name, matrix in [*matrices.items(), ("all", None)]:
            if matrix is None:
                diagonal = torch.cat([m.diagonal() for m in matrices.values()])
                off = torch.cat([(m - torch.diag(m.diagonal())).abs().flatten() for m in matrices.values()])
                count = sum(m.numel() - m.shape[0] for m in matrices.values())
            else:
                diagonal = matrix.diagonal()
                off = (matrix - torch.diag(diagonal)).abs().flatten()
                count = matrix.numel() - matrix.shape[0]
            rows.append({**labels, "parameter": name, "metric": "diagonal_mean", "value": float(diagonal.mean())})
            rows.append({**labels, "parameter": name, "metric": "offdiagonal_mean_abs",
                         "value": float(off.sum()) / count if count else math.nan})
    return pd.DataFrame(rows)


def feedforward_diagonal_labels(params: dict, reads: list[dict]) -> pd.DataFrame:
    """The label combinations :func:`feedforward_diagonal` writes for runs with ``reads`` labels
    that every model has (``parameter: all``; the per-matrix names depend on the model)."""
    return pd.DataFrame([{**labels, "parameter": "all"} for labels in distinct(reads)])


feedforward_diagonal.output_labels = feedforward_diagonal_labels
feedforward_diagonal.emitted_metrics = frozenset({"diagonal_mean", "offdiagonal_mean_abs"})
