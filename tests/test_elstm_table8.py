"""elstm Table 8's parameter counts, term by term: what our models count at the paper's sizes,
and the published 12,684,468 (Seq2seq-E) and 16,460,468 (DBRNN-E) rebuilt exactly from our own
modules by changing only the terms the study names (config/studies/elstm.yaml, table8's choice
"why the counts differ"). A test per count, so that the statement stays true of the code."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from rnnrepro.cells import build_cell
from rnnrepro.train import build_run

E = N = 512  # Table 4: embedding and cells of 512
K = 180  # the output vocabulary the published counts imply: 49 relations, 130 head positions, 1 special
V = 14_989  # 14,985 lemma types (Table 3) and the 4 special symbols of the authors' released code


def count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.fixture(scope="module")
def treebank(mirror, tmp_path_factory):
    from rnnrepro.data.fetch import fetch_dataset
    from rnnrepro.data.prepared import prepare_treebank

    folder = tmp_path_factory.mktemp("ud20")
    fetch_dataset("ud_en_ewt_v2.0", folder / "raw", mirror=mirror, timeout=1, progress=False)
    prepare_treebank("ud_en_ewt_v2.0", folder / "raw", folder / "ewt.json.gz")
    return folder / "ewt.json.gz"


def ours(model: str, treebank, **cell):
    """Our model of a Table 8 column at the paper's sizes, as the table8 analysis builds it."""
    run = {"task": {"name": "dp_seq2seq", "treebank": "ud_en_ewt_v2.0", "input_column": "lemma",
                    "input_layout": "repeat" if model == "dbrnn" else "source"},
           "cell": {"name": "elstm", "period": 100, **cell},
           "model": {"name": model, "embedding_size": E, "hidden_size": N}}
    torch.manual_seed(0)
    return build_run(run, treebank)


def elstm(inputs: int) -> nn.Module:
    """An ELSTM cell as the published counts have it: one bias per gate, 100 scaling vectors, no b."""
    return build_cell("elstm", inputs, N, period=100, recurrent_bias=False, cell_bias=False)


def walk(model: nn.Module, steps) -> None:
    """Apply each (what, change, size) of ``steps`` to ``model``: each change must alter its count
    by exactly the size the study states."""
    for what, change, size in steps:
        before = count(model)
        change(model)
        assert count(model) - before == size, what


def test_the_analysis_counts_our_models_with_one_bias_per_gate(treebank, repo, monkeypatch):
    import rnnrepro.analyses.elstm as analyses
    from rnnrepro.plan.studies import load_study, study_schema_of

    spec = load_study("elstm", repo / "config/studies", study_schema_of(repo / "workflow/schemas"),
                      "paper").artifacts["table8"]
    assert spec.analysis["cell"] == {"recurrent_bias": False}
    for model, expected in (("seq2seq_attn", 13_870_289), ("dbrnn", 18_588_996)):
        _, built = ours(model, treebank, recurrent_bias=False)
        assert count(built) == expected, model

    class Run:  # what the analysis reads of a trained run (here one trained at another size)
        identity = {"task": {"name": "dp_seq2seq", "treebank": "ud_en_ewt_v2.0", "input_column": "lemma",
                             "input_layout": "source"},
                    "cell": {"name": "elstm", "period": 100},
                    "model": {"name": "seq2seq_attn", "embedding_size": 64, "hidden_size": 64}, "seed": 1}
        data = str(treebank)

    monkeypatch.setattr(analyses, "final_metric", lambda run, metric: 0.5)
    table = analyses.parameters_at_size([Run()], sizes=spec.analysis["sizes"], cell=spec.analysis["cell"])
    assert int(table.loc[table["metric"] == "params", "value"].iloc[0]) == 13_870_289


def test_the_published_seq2seq_count_is_ours_less_the_stated_terms(treebank):
    task, model = ours("seq2seq_attn", treebank, recurrent_bias=False)
    assert count(model) == 13_870_289
    steps = [  # (what the study says differs, its size)
        ("no cell bias b", lambda m: (setattr(m.encoder_rnn, "cell", elstm(E)), setattr(m, "decoder", elstm(E + N))), -1_024),
        ("decoder input without the fed-back context", lambda m: setattr(m, "decoder", elstm(E)), -1_048_576),
        ("output layer from d_t alone", lambda m: setattr(m, "head", nn.Linear(N, task.io.output_size)), -107_008),
        ("180 output classes", lambda m: setattr(m, "head", nn.Linear(N, K)), -14_877),
        ("decoder embedding of 180 rows", lambda m: setattr(m.feedback, "embedding", nn.Embedding(K, E)), -15_360),
        ("four input specials", lambda m: setattr(m.encoder, "embedding", nn.Embedding(V, E)), +1_024),
    ]
    walk(model, steps)
    assert count(model) == 12_684_468  # Table 8, Seq2seq-E


def test_the_published_dbrnn_count_is_ours_less_the_stated_terms(treebank):
    _, model = ours("dbrnn", treebank, recurrent_bias=False)
    assert count(model) == 18_588_996

    def cells(m, upper_inputs):
        m.lower.forward_layer.cell, m.lower.backward_layer.cell = elstm(E), elstm(E)
        m.upper_forward.cell, m.upper_backward.cell = elstm(upper_inputs), elstm(upper_inputs)

    class OneVector(nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = nn.Parameter(torch.zeros(K))

    def heads(m, bias):
        m.head_forward, m.head_backward = nn.Linear(N, K, bias=bias), nn.Linear(N, K, bias=bias)

    def per_class_pooling(m):
        m.pooling.weight_forward, m.pooling.weight_backward = nn.Parameter(torch.zeros(K)), nn.Parameter(torch.zeros(K))

    steps = [
        ("no cell bias b", lambda m: cells(m, 2 * N), -2_048),
        ("upper cells of 512 inputs, not [h^f; h^b]", lambda m: cells(m, E), -2_097_152),
        ("180 classes in the heads and the pooling", lambda m: (heads(m, True), per_class_pooling(m)), -29_812),
        ("heads without bias, one 180-vector", lambda m: (heads(m, False), setattr(m, "pooling", OneVector())), -540),
        ("four input specials", lambda m: setattr(m.encoder, "embedding", nn.Embedding(V, E)), +1_024),
    ]
    walk(model, steps)
    assert count(model) == 16_460_468  # Table 8, DBRNN-E


def test_the_published_difference_fixes_the_cell_count():
    """DBRNN-E − Seq2seq-E = 3,776,000 = two more ELSTM cells of 512 inputs (one bias per gate,
    100 scaling vectors, no b) less the attention's W1, W2 and v: only that cell count fits."""
    attention = 2 * N * N + N
    assert 2 * count(elstm(E)) - attention == 16_460_468 - 12_684_468
    with_b = build_cell("elstm", E, N, period=100, recurrent_bias=False)
    assert 2 * count(with_b) - attention != 16_460_468 - 12_684_468
