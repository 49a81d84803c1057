"""Translation: Multi30k preparation, the task's batches and BLEU, the attention
encoder-decoder's decoders (greedy = beam 1, beam search against greedy and exhaustive search)."""
from __future__ import annotations

import dataclasses
import itertools

import pytest
import sacrebleu
import torch

from rnnrepro.cells import CELLS
from rnnrepro.data.fetch import fetch_file
from rnnrepro.data.prepared import load_prepared, prepare_dataset, write_json_gz
from rnnrepro.data.sources import dataset
from rnnrepro.models import MODELS, build_model
from rnnrepro.models.translation import strip_after_eos
from rnnrepro.tasks import Batch, TaskIO, build_task
from rnnrepro.tasks.base import pad_time_major
from rnnrepro.tasks.translation import BOS_ID, EOS_ID, IO_LEVEL, PAD_ID, UNK_ID, corpus_bleu

CPU = torch.device("cpu")


def fetch_from_mirror(key: str, mirror, raw_dir) -> None:
    """The dataset's files from the mirror only (no network), verified by their checksums."""
    for source in dataset(key).files.values():
        fetch_file(dataclasses.replace(source, urls=()), raw_dir, mirror=mirror, progress=False)


def toy_corpus(tmp_path) -> str:
    """Four pairs of four words (BLEU needs 4-grams)."""
    pairs = [("a cat sits here", "eine katze sitzt hier"), ("a dog runs there", "ein hund rennt dort"),
             ("the cat runs here", "die katze rennt hier"), ("a dog sits there", "ein hund sitzt dort")]
    en = [p[0].split() for p in pairs]
    de = [p[1].split() for p in pairs]
    splits = {split: {"en": en, "de": de} for split in ("train", "dev", "test")}
    path = tmp_path / "toy_multi30k.json.gz"
    write_json_gz({"dataset": "multi30k", "splits": splits}, path)
    return str(path)


def random_model(vocab: int = 12, cell: str = "lstm", seed: int = 0, **params):
    torch.manual_seed(seed)
    io = TaskIO(output_size=vocab, level=IO_LEVEL, input_vocab=vocab + 3)
    sizes = {"hidden_size": 16, "embedding_size": 8, "attention_size": 8} | params
    return build_model("attn_encdec", io, cell, **sizes).eval()


def peaked_random_model(cell: str, seed: int):
    """An untrained model whose distributions are peaked and give <eos> a fair chance, so that
    decoded translations stop at various lengths (an untrained model rarely says <eos>)."""
    model = random_model(vocab=30, cell=cell, seed=seed)
    with torch.no_grad():
        model.generator.weight.mul_(8)
        model.generator.bias[EOS_ID] += 1.0
    return model


def random_sources(count: int, vocab: int, seed: int) -> Batch:
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, 8, (count,), generator=generator).tolist()
    sources = [torch.randint(4, vocab, (n,), generator=generator).tolist() + [EOS_ID] for n in lengths]
    return Batch(pad_time_major(sources, PAD_ID), torch.tensor([len(s) for s in sources]), torch.zeros(0))


# -- data ------------------------------------------------------------------------------------
def test_prepared_multi30k_has_the_manifest_pair_counts(tmp_path, mirror):
    fetch_from_mirror("multi30k", mirror, tmp_path / "raw")
    counts = prepare_dataset("multi30k", tmp_path / "raw", tmp_path / "multi30k.json.gz")
    assert counts == {"train": 29_000, "dev": 1_014, "test": 1_000}  # MANIFEST.md: train, val, test_2016_flickr
    splits = load_prepared(tmp_path / "multi30k.json.gz", expect="multi30k")
    assert sum(map(len, splits["train"]["en"])) == 377_534 and sum(map(len, splits["train"]["de"])) == 360_706
    assert splits["train"]["de"][0][:3] == ["zwei", "junge", "weiße"]


def test_batches_hold_source_eos_target_bos_eos_and_extras(tmp_path):
    task = build_task("translation", data=toy_corpus(tmp_path), direction="en-de")
    assert task.target_vocab.itos[:4] == ["<pad>", "<unk>", "<bos>", "<eos>"]
    assert task.io.level == IO_LEVEL and task.io.output_size == len(task.target_vocab)
    (batch,) = task.batches("dev", 10)
    assert batch.inputs.shape == (5, 4) and (batch.inputs[-1] == EOS_ID).all()
    assert (batch.targets[0] == BOS_ID).all() and (batch.targets[-1] == EOS_ID).all()
    assert batch.extra["target_lengths"].tolist() == [6] * 4
    first = batch.extra["index"].tolist().index(0)
    assert task.detokenise(batch.targets[1:5, first].tolist()) == "eine katze sitzt hier"
    reverse = build_task("translation", data=toy_corpus(tmp_path), direction="de-en")
    assert reverse.source_vocab.stoi.keys() == task.target_vocab.stoi.keys()


def test_min_count_maps_rare_words_to_unk(tmp_path):
    task = build_task("translation", data=toy_corpus(tmp_path), min_count=2)
    assert "katze" in task.target_vocab.stoi and "die" not in task.target_vocab.stoi
    assert task.splits["train"][1][2][1] == UNK_ID  # "die katze rennt hier"


# -- BLEU ------------------------------------------------------------------------------------
def test_bleu_of_a_perfect_output_is_100():
    references = ["ein hund rennt", "zwei männer stehen am herd ."]
    assert corpus_bleu(references, references) == pytest.approx(100.0)


def test_bleu_matches_sacrebleu_and_a_hand_computation():
    """Precisions 5/6, 3/5, 2/4, 1/3 and equal lengths: BLEU = 100 · (1/12)^¼."""
    hypothesis, reference = ["the cat sat on the mat"], ["the cat sat on a mat"]
    assert corpus_bleu(hypothesis, reference) == pytest.approx(100 * (1 / 12) ** 0.25)
    assert corpus_bleu(hypothesis, reference) == sacrebleu.corpus_bleu(hypothesis, [reference], tokenize="none").score


class Oracle(torch.nn.Module):
    """Decodes every pair of a split to its reference (the task's vocabulary ids)."""

    def __init__(self, task, split):
        super().__init__()
        self.targets = task.splits[split][1]

    def greedy_decode(self, batch, max_len):
        return [self.targets[i][1:-1] for i in batch.extra["index"].tolist()]

    def beam_search(self, batch, beam_size, max_len, length_normalisation):
        return self.greedy_decode(batch, max_len)


def test_evaluate_puts_translations_back_in_split_order(tmp_path):
    task = build_task("translation", data=toy_corpus(tmp_path), beam_size=3, length_buckets=[3])
    metrics = task.evaluate(Oracle(task, "test"), "test", 3, CPU)
    assert metrics == pytest.approx({"test_bleu": 100.0, "test_bleu_greedy": 100.0, "test_bleu_len_gt3": 100.0})


# -- the model and its decoders --------------------------------------------------------------
def test_model_is_marked_as_generating_target_sequences():
    assert MODELS["attn_encdec"].compatible_tasks == ("translation",)


def column(batch: Batch, b: int, times: int = 1) -> Batch:
    """Pair ``b`` of ``batch`` alone, repeated ``times`` times."""
    return Batch(batch.inputs[: batch.lengths[b], [b] * times], batch.lengths[[b] * times], batch.targets)


def tiny_translations(limit: int) -> list[list[int]]:
    """Every translation the vocabulary of 5 (outputs <unk>, <eos> and word 4) allows within
    ``limit`` tokens: 2^0 + ... + 2^limit of them."""
    words = (UNK_ID, 4)
    return [list(ids) for length in range(limit + 1) for ids in itertools.product(words, repeat=length)]


def exhaustive_best(model, batch: Batch, limit: int) -> list[list[int]]:
    """The translation of highest log p(Y|X) of every pair, by scoring every translation
    (vocabulary of 5); the best must beat the runner-up clearly, so that it is no float tie."""
    every = tiny_translations(limit)
    best = []
    for b in range(batch.size):
        scores = model.log_likelihood(column(batch, b, len(every)), every, limit)
        top = scores.topk(2).values
        assert float(top[0] - top[1]) > 1e-4, "near tie: choose another seed"
        best.append(every[int(scores.argmax())])
    return best


def reference_beam_search(model, one: Batch, beam_size: int, limit: int) -> list[int]:
    """The module docstring's beam search written plainly, for one pair, every prefix scored
    afresh by teacher forcing: keep the ``beam_size`` best partial translations by
    log p(y_≤t | X); one ending in <eos> or reaching the limit is finished and the beam
    shrinks by one; return the finished translation of highest log p(Y|X)."""
    live: list[tuple[float, list[int]]] = [(0.0, [])]
    finished: list[tuple[float, list[int]]] = []
    for t in range(limit):
        prefixes = [ids for _, ids in live]
        targets = torch.tensor([[BOS_ID] + ids + [PAD_ID] for ids in prefixes]).T  # last row: unread
        many = column(one, 0, len(prefixes))
        logits = model.teacher_forced_logits(many.inputs, many.lengths, targets)[-1]
        log_probs = torch.log_softmax(logits.float(), -1).double().tolist()
        candidates = sorted(((score + p, ids + [token]) for (score, ids), row in zip(live, log_probs)
                             for token, p in enumerate(row) if p > float("-inf")), key=lambda c: -c[0])
        live = []
        for score, ids in candidates[: beam_size - len(finished)]:
            (finished if ids[-1] == EOS_ID or t + 1 == limit else live).append((score, ids))
        if not live:
            break
    return strip_after_eos(max(finished, key=lambda option: option[0])[1])


def peaked_tiny_model(cell: str, seed: int):
    """A vocabulary of 5 (outputs <unk>, <eos>, word 4), peaked distributions and <eos> made
    rarer, so that the best translations differ between sources and are seldom empty."""
    model = random_model(vocab=5, cell=cell, seed=seed, hidden_size=6)
    with torch.no_grad():
        model.generator.weight.mul_(8)
        model.generator.bias[EOS_ID] -= 1.0
    return model


@pytest.mark.parametrize("cell", CELLS.names())
def test_every_cell_works_in_encoder_and_decoder(cell):
    """Teacher forcing gives finite logits of the real outputs; beam search finds what it
    should: a beam wider than all 31 translations the exhaustive best, a beam of 2 what the
    plain beam search of :func:`reference_beam_search` finds (12 pairs of 4 models)."""
    model = random_model(cell=cell, hidden_size=6)
    batch = random_sources(3, 12, seed=1)
    targets = pad_time_major([[BOS_ID, 5, 6, EOS_ID], [BOS_ID, 7, EOS_ID], [BOS_ID, EOS_ID]], PAD_ID)
    logits = model.teacher_forced_logits(batch.inputs, batch.lengths, targets)
    assert logits.shape == (3, 3, 12) and torch.isfinite(logits[..., 3:]).all()
    limit, found = 4, []
    for seed in range(4):
        tiny = peaked_tiny_model(cell, seed)
        sources = random_sources(3, 8, seed=seed)
        best = exhaustive_best(tiny, sources, limit)
        assert tiny.beam_search(sources, 32, limit) == best
        assert tiny.beam_search(sources, 2, limit) == [
            reference_beam_search(tiny, column(sources, b), 2, limit) for b in range(sources.size)]
        found += best
    assert len({tuple(ids) for ids in found}) >= 2 and any(found)  # no one answer fits all


@pytest.mark.parametrize("bidirectional", [True, False])
def test_a_pair_translates_the_same_alone_and_beside_a_longer_one(bidirectional):
    model = random_model(bidirectional=bidirectional)
    batch = random_sources(2, 12, seed=3)
    short = int(batch.lengths.argmin())
    alone = Batch(batch.inputs[: batch.lengths[short], [short]], batch.lengths[[short]], batch.targets)
    for decode in (lambda b: model.greedy_decode(b, 12), lambda b: model.beam_search(b, 4, 12)):
        assert decode(batch)[short] == decode(alone)[0]


@pytest.mark.parametrize("cell", ["lstm", "gru", "pru"])
def test_beam_search_with_beam_1_is_greedy_decoding(cell):
    lengths = set()
    for seed in range(3):
        model = peaked_random_model(cell, seed)
        batch = random_sources(8, 30, seed=seed)
        greedy = model.greedy_decode(batch, 25)
        assert model.beam_search(batch, 1, 25) == greedy
        lengths |= {len(ids) for ids in greedy}
    assert len(lengths) >= 3  # stopped by <eos> at several lengths, not only by the limit


def test_beam_search_scores_at_least_as_high_as_greedy():
    """Not a theorem (greedy's prefix can leave the beam), but what beam search is for:
    checked on 24 sentences of 3 random models, of which some must improve strictly."""
    improved = 0
    for seed in range(3):
        model = peaked_random_model("lstm", seed)
        batch = random_sources(8, 30, seed=seed)
        greedy = model.log_likelihood(batch, model.greedy_decode(batch, 25), 25)
        beam = model.log_likelihood(batch, model.beam_search(batch, 5, 25), 25)
        assert (beam >= greedy - 1e-5).all()
        improved += int((beam > greedy + 1e-5).sum())
    assert improved >= 5


def test_a_beam_wider_than_all_hypotheses_finds_the_exact_best():
    """Outputs <unk>, <eos> and one word; with 4 tokens at most there are 31 translations."""
    model = random_model(vocab=5, seed=2)
    batch = random_sources(3, 5, seed=2)
    limit = 4
    best = exhaustive_best(model, batch, limit)
    assert model.beam_search(batch, 32, limit) == best
    exact = model.log_likelihood(batch, best, limit)
    assert (exact >= model.log_likelihood(batch, model.greedy_decode(batch, limit), limit) - 1e-6).all()


def test_training_learns_a_toy_corpus_to_bleu_100(tmp_path):
    """Teacher forcing through the task's loss: 4 pairs learnt by heart, then decoded exactly."""
    task = build_task("translation", data=toy_corpus(tmp_path))
    torch.manual_seed(0)
    model = build_model("attn_encdec", task.io, "gru", hidden_size=16, embedding_size=8, attention_size=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    (batch,) = task.batches("train", 4)
    model.train()
    for _ in range(30):
        optimizer.zero_grad()
        loss = task.loss(model(batch), batch)
        loss.backward()
        optimizer.step()
    assert float(loss.detach()) < 0.05
    assert task.evaluate(model, "test", 2, CPU) == pytest.approx({"test_bleu": 100.0})
    assert model.eval()(batch)[:4].tolist() == batch.targets[1:5].tolist()


def test_a_training_run_reports_bleu(tmp_path):
    from rnnrepro.train import train_run

    run = {"seed": 1, "task": {"name": "translation", "beam_size": 2},
           "model": {"name": "attn_encdec", "hidden_size": 8, "embedding_size": 4, "attention_size": 4},
           "cell": {"name": "lstm"},
           "train": {"epochs": 2, "batch_size": 2, "optimizer": "adam", "lr": 0.01, "eval_batch_size": 3}}
    metrics = train_run(run, tmp_path / "run", data=toy_corpus(tmp_path))
    assert set(metrics) == {"dev_bleu", "dev_bleu_greedy", "test_bleu", "test_bleu_greedy",
                            "train_loss", "steps", "epochs", "params"}
    assert metrics["steps"] == 4 and 0.0 <= metrics["test_bleu"] <= 100.0
