"""Language modelling: corpus preparation, windows and sentences, token-weighted perplexity."""
from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from rnnrepro.data.fetch import fetch_file
from rnnrepro.data.prepared import load_prepared, prepare_dataset, write_json_gz
from rnnrepro.data.sources import dataset
from rnnrepro.models import build_model
from rnnrepro.tasks import build_task
from rnnrepro.tasks.base import IGNORE_INDEX

CPU = torch.device("cpu")
LINES = [["a", "b", "a"], ["c"], ["a", "b", "b", "a", "d"], ["b", "a"]]


def fetch_from_mirror(key: str, mirror, raw_dir) -> None:
    """The dataset's files from the mirror only (no network), verified by their checksums."""
    for source in dataset(key).files.values():
        fetch_file(dataclasses.replace(source, urls=()), raw_dir, mirror=mirror, progress=False)


def toy_corpus(tmp_path, corpus: str = "ptb_word") -> str:
    tokens = [t for line in LINES for t in line + ["<eos>"]]
    path = tmp_path / f"{corpus}.json.gz"
    write_json_gz({"dataset": corpus, "splits": {"train": tokens, "dev": tokens, "test": tokens}}, path)
    return str(path)


class Constant(torch.nn.Module):
    """Predicts the same logits at every position whatever the input (and carries no real state)."""

    carries_state = True

    def __init__(self, logits: torch.Tensor):
        super().__init__()
        self.logits = logits

    def forward(self, batch, state=None, return_state=False):
        steps, size = batch.inputs.shape
        output = self.logits.expand(steps, size, -1)
        return (output, torch.zeros(size)) if return_state else output


# -- preparation -----------------------------------------------------------------------------
def test_preparation_closes_every_line_with_eos_and_renames_valid(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    for split, text in {"train": " a b \n c \n", "valid": " b \n", "test": "\n a \n"}.items():
        (raw / dataset("ptb_word").files[split].name).write_text(text)
    counts = prepare_dataset("ptb_word", raw, tmp_path / "toy.json.gz")
    assert counts == {"train": 5, "dev": 2, "test": 3}
    assert load_prepared(tmp_path / "toy.json.gz", expect="ptb_word")["test"] == ["<eos>", "a", "<eos>"]


def test_real_ptb_word_has_the_manifest_counts(tmp_path, mirror):
    fetch_from_mirror("ptb_word", mirror, tmp_path / "raw")
    counts = prepare_dataset("ptb_word", tmp_path / "raw", tmp_path / "ptb_word.json.gz")
    assert counts == {"train": 929_589, "dev": 73_760, "test": 82_430}  # MANIFEST.md, one <eos> per line
    task = build_task("lm", data=str(tmp_path / "ptb_word.json.gz"), corpus="ptb_word", max_eval_tokens=100)
    assert task.vocabulary_size == 10_000 and task.io.input_vocab == 10_001
    assert task.streams["train"].count(task.eos) == 42_068  # lines


def test_real_ptb_char_tokens_are_characters(tmp_path, mirror):
    fetch_from_mirror("ptb_char", mirror, tmp_path / "raw")
    counts = prepare_dataset("ptb_char", tmp_path / "raw", tmp_path / "ptb_char.json.gz")
    splits = load_prepared(tmp_path / "ptb_char.json.gz", expect="ptb_char")
    assert splits["dev"].count("<eos>") == 3_370 and counts["dev"] == len(splits["dev"])
    assert {len(t) for t in splits["dev"] if t != "<eos>"} == {1} and "_" in splits["dev"]


def test_real_wikitext2_has_the_manifest_counts(tmp_path, mirror):
    """pytorch/examples' convention: every line, empty ones too, ends with <eos>."""
    fetch_from_mirror("wikitext2", mirror, tmp_path / "raw")
    counts = prepare_dataset("wikitext2", tmp_path / "raw", tmp_path / "wikitext2.json.gz")
    assert counts == {"train": 2_088_628, "dev": 217_646, "test": 245_569}  # MANIFEST.md
    task = build_task("lm", data=str(tmp_path / "wikitext2.json.gz"), corpus="wikitext2", max_eval_tokens=100)
    assert task.vocabulary_size == 33_278


# -- sequences -------------------------------------------------------------------------------
@pytest.mark.parametrize("context", [0, 2])
def test_stream_windows_score_every_token_but_the_first_once(tmp_path, context):
    task = build_task("lm", data=toy_corpus(tmp_path), bptt=4, context=context)
    stream = task.streams["dev"]
    scored = []
    for inputs, targets in task.windows("dev"):
        assert len(inputs) == len(targets) <= 4 + context
        assert all(t + 1 == i for i, t in zip(inputs[1:], targets) if t != IGNORE_INDEX)  # target = next input
        scored += [t + 1 for t in targets if t != IGNORE_INDEX]
    assert scored == stream[1:]


def test_sentence_mode_reads_eos_first_and_predicts_eos_last(tmp_path):
    task = build_task("lm", data=toy_corpus(tmp_path), mode="sentence", max_sentence_length=3)
    assert len(task.sentences["train"]) == 3  # the 5-token line is left out
    (batch,) = task.batches("dev", 10)
    eos_class = task.eos - 1
    assert (batch.inputs[0] == task.eos).all()
    assert [int(batch.targets[n - 1, b]) for b, n in enumerate(batch.lengths.tolist())] == [eos_class] * 3


def test_max_train_tokens_truncates_training_but_not_the_vocabulary(tmp_path):
    task = build_task("lm", data=toy_corpus(tmp_path), max_train_tokens=5)
    assert len(task.streams["train"]) == 5 and task.vocabulary_size == 5  # a b c d <eos>
    sentences = build_task("lm", data=toy_corpus(tmp_path), mode="sentence", max_train_tokens=6)
    assert len(sentences.sentences["train"]) == 2  # 4 + 2 tokens with <eos>


# -- metrics ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode, stateful", [("stream", False), ("stream", True), ("sentence", False)])
def test_a_uniform_model_has_perplexity_equal_to_the_vocabulary_size(tmp_path, mode, stateful):
    task = build_task("lm", data=toy_corpus(tmp_path), mode=mode, bptt=3, stateful=stateful)
    metrics = task.evaluate(Constant(torch.zeros(task.vocabulary_size)), "test", 2, CPU)
    assert metrics["test_perplexity"] == pytest.approx(task.vocabulary_size)
    assert metrics["test_nll"] == pytest.approx(math.log(5))
    if mode == "sentence":  # 4 lines of 3, 1, 5, 2 tokens, each with <eos>
        assert metrics["test_sentence_nll"] == pytest.approx(math.log(5) * 15 / 4)


@pytest.mark.parametrize("stateful", [False, True])
def test_perplexity_is_token_weighted_not_a_mean_over_batches(tmp_path, stateful):
    """bptt 4 over 15 tokens: windows of 4, 4, 4, 2 targets; batches of 3 windows and of 1
    (stateful: 3 pieces of 5, 5, 4 targets, in batches of 4 and 1 steps)."""
    task = build_task("lm", data=toy_corpus(tmp_path), bptt=4, stateful=stateful)
    logits = torch.tensor([2.0, 0.0, -1.0, 1.0, 0.5])
    metrics = task.evaluate(Constant(logits), "dev", 3, CPU)

    log_probs = torch.log_softmax(logits, 0)
    token_nll = [-float(log_probs[i - 1]) for i in task.streams["dev"][1:]]
    assert metrics["dev_nll"] == pytest.approx(sum(token_nll) / len(token_nll))
    assert metrics["dev_perplexity"] == pytest.approx(math.exp(sum(token_nll) / len(token_nll)))
    if not stateful:
        batch_means = [sum(token_nll[:12]) / 12, sum(token_nll[12:]) / 2]
        assert abs(metrics["dev_nll"] - sum(batch_means) / 2) > 0.05


def test_a_basic_lm_trains_and_samples(tmp_path):
    """The registered token-level models fit the task: a short training run, then sampling."""
    from rnnrepro.train import train_run

    run = {"seed": 1, "task": {"name": "lm", "corpus": "ptb_word", "bptt": 5},
           "model": {"name": "basic", "hidden_size": 8, "embedding_size": 4}, "cell": {"name": "gru"},
           "train": {"epochs": 3, "batch_size": 2, "optimizer": "adam", "lr": 0.05}}
    data = toy_corpus(tmp_path)
    metrics = train_run(run, tmp_path / "run", data=data)
    assert metrics["test_perplexity"] < 5  # better than uniform over the 5 tokens
    task = build_task("lm", data=data, bptt=5)
    model = build_model("basic", task.io, "gru", hidden_size=8, embedding_size=4)
    sample = task.sample(model, 6, torch.Generator().manual_seed(0), prompt=["a", "b"])
    assert len(sample) == 6 and set(sample) <= set(task.vocab.itos[1:])
    assert sample == task.sample(model, 6, torch.Generator().manual_seed(0), prompt=["a", "b"])


def test_a_stateful_lm_trains(tmp_path):
    """Stateful truncated BPTT with the stacked model, dropout and Zaremba's initialisation."""
    from rnnrepro.train import train_run

    run = {"seed": 1, "task": {"name": "lm", "corpus": "ptb_word", "bptt": 3, "stateful": True},
           "model": {"name": "stacked", "layers": 2, "hidden_size": 8, "embedding_size": 4, "dropout": 0.1,
                     "init_range": 0.1},
           "cell": {"name": "lstm"},
           "train": {"epochs": 15, "batch_size": 2, "optimizer": "adam", "lr": 0.05, "eval_batch_size": 1}}
    metrics = train_run(run, tmp_path / "run", data=toy_corpus(tmp_path))
    assert metrics["test_perplexity"] < 4  # better than uniform over the 5 tokens


def test_a_brnn_language_model_sees_the_token_it_predicts(tmp_path):
    """Why the elstm paper's BRNN perplexities (Table 5) are not language-model perplexities:
    the BRNN's prediction at position t changes with the input at t + 1, its own target."""
    task = build_task("lm", data=toy_corpus(tmp_path), bptt=6)
    (batch,) = task.batches("dev", 1)[:1]
    changed = dataclasses.replace(batch, inputs=batch.inputs.clone())
    changed.inputs[3] = changed.inputs[3] % task.vocabulary_size + 1
    for name, sees_future in (("basic", False), ("brnn", True)):
        torch.manual_seed(0)
        model = build_model(name, task.io, "lstm", hidden_size=4, embedding_size=3).eval()
        differs = not torch.allclose(model(batch)[2], model(changed)[2])
        assert differs == sees_future


def test_a_task_read_from_a_file_is_made_once_per_file_and_parameters(tmp_path):
    """build_task shares a task read from a prepared file while the file and the parameters are
    the same (a bundle's runs, an analysis's models), and reads the file again when it changes."""
    path = toy_corpus(tmp_path)
    task = build_task("lm", data=path, bptt=3)
    assert build_task("lm", data=path, bptt=3) is task
    assert build_task("lm", data=path, bptt=4) is not task
    write_json_gz({"dataset": "ptb_word", "splits": {split: ["a", "b", "<eos>"] for split in ("train", "dev", "test")}},
                  path)
    changed = build_task("lm", data=path, bptt=3)
    assert changed is not task and changed.vocabulary_size == 3 < task.vocabulary_size
