"""Tasks: the adding problem's data and baseline; POS tagging from a prepared treebank."""
from __future__ import annotations

import gzip
import json

import pytest
import torch

from rnnrepro.data.prepared import load_prepared, prepare_treebank, write_json_gz
from rnnrepro.tasks import build_task
from rnnrepro.tasks.adding import adding_problem
from rnnrepro.tasks.base import IGNORE_INDEX


def test_adding_problem_marks_one_number_in_each_half():
    inputs, targets = adding_problem(500, 20, torch.Generator().manual_seed(0))
    values, markers = inputs[..., 0], inputs[..., 1]
    assert torch.equal(markers.sum(0), torch.full((500,), 2.0))
    assert torch.equal(markers[:10].sum(0), torch.ones(500))
    assert torch.allclose((values * markers).sum(0), targets)


def test_adding_baseline_of_predicting_one_is_one_sixth():
    _, targets = adding_problem(200_000, 10, torch.Generator().manual_seed(1))
    assert abs(float(((targets - 1) ** 2).mean()) - 1 / 6) < 0.003


def test_adding_data_depend_on_data_seed_only():
    a = build_task("adding", T=8, train_size=20, dev_size=5, test_size=5, data_seed=3)
    b = build_task("adding", T=8, train_size=20, dev_size=5, test_size=5, data_seed=3)
    c = build_task("adding", T=8, train_size=20, dev_size=5, test_size=5, data_seed=4)
    assert torch.equal(a.splits["train"][0], b.splits["train"][0])
    assert not torch.equal(a.splits["train"][0], c.splits["train"][0])
    assert not torch.equal(a.splits["train"][0][:, :5], a.splits["dev"][0])


def prepared_toy(tmp_path) -> str:
    sentence = {"form": ["The", "cats", "sat"], "lemma": ["the", "cat", "sit"], "upos": ["DET", "NOUN", "VERB"],
                "head": [2, 3, 0], "deprel": ["det", "nsubj", "root"]}
    short = {k: v[1:] for k, v in sentence.items()}
    splits = {split: {k: [sentence[k], short[k]] for k in sentence} for split in ("train", "dev", "test")}
    path = tmp_path / "toy.json.gz"
    write_json_gz({"dataset": "toy", "splits": splits}, path)
    return str(path)


def test_pos_batches_pad_targets_with_ignore_index(tmp_path):
    task = build_task("pos", data=prepared_toy(tmp_path), treebank="toy")
    assert task.io.level == "token" and task.io.output_size == 3
    (batch,) = task.batches("dev", 10)
    assert batch.inputs.shape == (3, 2) and batch.lengths.tolist() == [2, 3]
    assert batch.targets[2, 0] == IGNORE_INDEX and batch.inputs[2, 0] == 0
    assert task.words.itos[:2] == ["<pad>", "<unk>"]


def test_pos_accuracy_counts_real_tokens_only(tmp_path):
    task = build_task("pos", data=prepared_toy(tmp_path), treebank="toy")
    tag_of = {task.words.stoi[w]: task.tags.stoi[t] for w, t in (("the", "DET"), ("cat", "NOUN"), ("sit", "VERB"))}

    def oracle(batch):  # right on every real token, wrong on padding
        table = torch.zeros(len(task.words), 3)
        for word, tag in tag_of.items():
            table[word, tag] = 1
        return table[batch.inputs]

    assert task.evaluate(oracle, "test", 10, torch.device("cpu")) == {"test_accuracy": 1.0}


def test_pos_rejects_a_file_prepared_from_another_treebank(tmp_path):
    with pytest.raises(ValueError, match="prepared from 'toy', not 'ud_en_ewt_v2.3'"):
        build_task("pos", data=prepared_toy(tmp_path), treebank="ud_en_ewt_v2.3")


def test_prepare_real_treebank(tmp_path, mirror):
    from rnnrepro.data.fetch import fetch_dataset

    fetch_dataset("ud_en_ewt_v2.0", tmp_path / "raw", mirror=mirror, timeout=1, progress=False)
    counts = prepare_treebank("ud_en_ewt_v2.0", tmp_path / "raw", tmp_path / "ewt.json.gz")
    assert counts == {"train": 12543, "dev": 2002, "test": 2077}  # MANIFEST.md, UD 2.0 stats
    splits = load_prepared(tmp_path / "ewt.json.gz", expect="ud_en_ewt_v2.0")
    assert sum(len(s) for s in splits["test"]["upos"]) == 25096
    with gzip.open(tmp_path / "ewt.json.gz", "rt") as handle:
        assert json.load(handle)["dataset"] == "ud_en_ewt_v2.0"


def padded_one_by_one(sequences, pad):
    """pad_time_major's definition, one sequence at a time: column b holds sequence b, then ``pad``."""
    steps = max(len(s) for s in sequences)
    out = [[pad] * len(sequences) for _ in range(steps)]
    for column, sequence in enumerate(sequences):
        for step, value in enumerate(sequence):
            out[step][column] = int(value)
    return torch.tensor(out, dtype=torch.long).reshape(steps, len(sequences))


def test_padding_puts_each_sequence_in_its_column_then_the_pad():
    from rnnrepro.tasks.base import pad_time_major

    generator = torch.Generator().manual_seed(0)
    for trial in range(200):
        batch = int(torch.randint(1, 6, (1,), generator=generator))
        lengths = torch.randint(0, 7, (batch,), generator=generator).tolist()
        sequences = [torch.randint(-3, 50, (n,), generator=generator).tolist() for n in lengths]
        if trial % 3 == 0:
            sequences = [tuple(s) for s in sequences]  # any sequence of ints
        padded = pad_time_major(sequences, -100)
        assert padded.dtype == torch.long and padded.is_contiguous()
        assert torch.equal(padded, padded_one_by_one(sequences, -100)), sequences


def test_a_prepared_token_stream_splits_back_into_its_lines():
    from rnnrepro.data.prepared import END_OF_LINE
    from rnnrepro.tasks.language_model import split_lines

    def one_token_at_a_time(tokens):
        lines, current = [], []
        for token in tokens:
            if token == END_OF_LINE:
                lines.append(current)
                current = []
            else:
                current.append(token)
        return lines + ([current] if current else [])

    eol = END_OF_LINE
    cases = [[], [eol], [eol, eol], ["a"], ["a", eol], ["a", "b", eol, "c"], [eol, "a", eol, eol, "b", "c", eol]]
    generator = torch.Generator().manual_seed(1)
    cases += [[eol if v == 0 else str(v) for v in torch.randint(0, 4, (n,), generator=generator).tolist()]
              for n in range(40)]
    for tokens in cases:
        assert split_lines(tokens) == one_token_at_a_time(tokens), tokens
