"""Baselines: every task scores its trivial predictors with the metrics its ``evaluate`` writes,
and each baseline's value is the one its formula gives, counted here by hand on tiny data."""
from __future__ import annotations

import math
from collections import Counter

import pytest

from rnnrepro.data.prepared import write_json_gz
from rnnrepro.tasks import TASKS, build_task
from rnnrepro.tasks.baselines import baselines_of, described
from rnnrepro.tasks.copying import memoryless_baseline
from rnnrepro.tasks.reversal import analytic_bound
from rnnrepro.tasks.translation import corpus_bleu
from toy_treebank import SENTENCES, write_toy_treebank


@pytest.fixture
def treebank(tmp_path) -> str:
    return write_toy_treebank(tmp_path)


LM_SPLITS = {"train": "a b a <eos> c <eos> a b b a d <eos> b a <eos>",
             "dev": "a c <eos> d d b <eos> a <eos>",
             "test": "b <eos> a a a c d <eos>"}


@pytest.fixture
def corpus(tmp_path) -> str:
    path = tmp_path / "ptb_word.json.gz"
    write_json_gz({"dataset": "ptb_word", "splits": {s: text.split() for s, text in LM_SPLITS.items()}}, path)
    return str(path)


PAIRS = {"train": [("a cat sits here", "eine katze sitzt hier"), ("a dog runs there", "ein hund rennt dort")],
         "dev": [("a cat runs there", "eine katze rennt dort"), ("the dog sits", "der hund sitzt")],
         "test": [("a dog sits here now", "ein hund sitzt jetzt hier"), ("cat", "katze")]}


@pytest.fixture
def multi30k(tmp_path) -> str:
    splits = {split: {"en": [p[0].split() for p in pairs], "de": [p[1].split() for p in pairs]}
              for split, pairs in PAIRS.items()}
    path = tmp_path / "multi30k.json.gz"
    write_json_gz({"dataset": "multi30k", "splits": splits}, path)
    return str(path)


SYNTHETIC = {"adding": dict(T=10, train_size=30, dev_size=40, test_size=40),
             "anbn": dict(max_train_n=3, max_test_n=5, train_size=30, dev_size=40),
             "copying": dict(T=5, train_size=30, dev_size=40, test_size=40),
             "presence": dict(T=7),
             "reversal": dict(T=6, V=3, train_size=30, dev_size=40, test_size=40),
             "sine_filter": dict(T=12, train_size=30, dev_size=40, test_size=40)}
PREPARED = {"lm": ("corpus", dict(corpus="ptb_word", bptt=3)),
            "pos": ("treebank", dict(treebank="toy")),
            "pos_chars": ("treebank", dict(treebank="toy")),
            "dp_seq2seq": ("treebank", dict(treebank="toy", input_layout="pad")),
            "dp_biaffine": ("treebank", dict(treebank="toy")),
            "translation": ("multi30k", dict(beam_size=2, length_buckets=[2, 4]))}


def test_every_registered_task_is_checked_here():
    assert set(TASKS) == set(SYNTHETIC) | set(PREPARED)


@pytest.mark.parametrize("name", sorted(set(SYNTHETIC) | set(PREPARED)))
def test_baselines_are_finite_and_named_as_evaluate_names_them(name, request):
    if name in SYNTHETIC:
        params, data = SYNTHETIC[name], None
    else:
        fixture, params = PREPARED[name]
        data = request.getfixturevalue(fixture)
    task = build_task(name, data=data, **params)
    baselines = baselines_of(task)
    assert baselines and set(baselines) == set(described(type(task)))
    emitted = type(task).emitted_metrics(**params)
    for baseline, metrics in baselines.items():
        assert metrics and set(metrics) <= emitted, (baseline, set(metrics) - emitted)
        assert {key.split("_", 1)[0] for key in metrics} == {"dev", "test"}
        assert all(math.isfinite(value) for value in metrics.values()), (baseline, metrics)
    assert set(baselines_of(task, ["dev"])[next(iter(baselines))]) <= {m for m in emitted if m.startswith("dev_")}


# -- language model -----------------------------------------------------------------------------------
def unigram_nll(train_targets: list[str], scored: list[str], vocabulary: int) -> float:
    """Mean −log p of ``scored`` under the add-one unigram of ``train_targets``."""
    counts = Counter(train_targets)
    return -sum(math.log((counts[t] + 1) / (len(train_targets) + vocabulary)) for t in scored) / len(scored)


@pytest.mark.parametrize("layout", [dict(), dict(stateful=True), dict(context=2)])
def test_stream_unigram_and_uniform_are_counted_by_hand(corpus, layout):
    task = build_task("lm", data=corpus, corpus="ptb_word", bptt=3, max_train_tokens=9, **layout)
    vocabulary = 5  # a b c d <eos>, from the whole training split
    assert task.vocabulary_size == vocabulary
    baselines = baselines_of(task)
    train = LM_SPLITS["train"].split()[:9]  # the prefix it trains on; every token but the first is a target
    for split in ("dev", "test"):
        scored = LM_SPLITS[split].split()[1:]
        nll = unigram_nll(train[1:], scored, vocabulary)
        assert baselines["unigram"][f"{split}_nll"] == pytest.approx(nll, rel=1e-6)
        assert baselines["unigram"][f"{split}_perplexity"] == pytest.approx(math.exp(nll), rel=1e-6)
        assert baselines["uniform"][f"{split}_perplexity"] == pytest.approx(vocabulary, rel=1e-6)
        assert baselines["uniform"][f"{split}_nll"] == pytest.approx(math.log(vocabulary), rel=1e-6)


def test_sentence_unigram_scores_every_line_and_its_eos(corpus):
    task = build_task("lm", data=corpus, corpus="ptb_word", mode="sentence")
    baselines = baselines_of(task)
    train = LM_SPLITS["train"].split()  # lines: each token and its <eos> are targets
    scored = LM_SPLITS["dev"].split()
    nll = unigram_nll(train, scored, 5)
    assert baselines["unigram"]["dev_nll"] == pytest.approx(nll, rel=1e-6)
    assert baselines["unigram"]["dev_sentence_nll"] == pytest.approx(nll * len(scored) / 3, rel=1e-6)
    assert baselines["uniform"]["test_sentence_nll"] == pytest.approx(math.log(5) * 8 / 2, rel=1e-6)


# -- tagging and parsing ------------------------------------------------------------------------------
def test_word_tag_is_each_words_most_frequent_training_tag(tmp_path):
    train = [(["a", "b", "c", "c"], ["X", "Y", "Y", "Y"]), (["a", "b", "b"], ["X", "X", "X"]),
             (["a", "c", "c"], ["Z", "Y", "Y"]), (["d"], ["Z"])]  # the last is beyond max_train_sentences
    dev = [(["a", "b", "c", "d"], ["X", "X", "Z", "Y"]), (["d", "b"], ["Z", "Y"])]
    splits = {split: {"lemma": [s[0] for s in sentences], "upos": [s[1] for s in sentences]}
              for split, sentences in (("train", train), ("dev", dev), ("test", dev))}
    path = tmp_path / "tags.json.gz"
    write_json_gz({"dataset": "tags", "splits": splits}, path)
    task = build_task("pos", data=str(path), treebank="tags", max_train_sentences=3)
    # a: X 2, Z 1 -> X; b: X 2, Y 1 -> X; c: Y; d, not in the three training sentences: Y, their
    # most frequent tag (Y 5, X 4, Z 1)
    tagged = {"a": "X", "b": "X", "c": "Y", "d": "Y"}
    right = sum(tagged[w] == t for words, tags in dev for w, t in zip(words, tags))
    baselines = baselines_of(task)
    assert baselines["word_tag"] == {"dev_accuracy": right / 6, "test_accuracy": right / 6}
    assert right == 3
    assert baselines["majority_tag"] == {"dev_accuracy": 2 / 6, "test_accuracy": 2 / 6}


def neighbour_counts(side: str, relation: str) -> tuple[int, int, int]:
    """(words, right heads, right heads and relations) of attaching every toy word to its neighbour."""
    words = uas = las = 0
    for sentence in SENTENCES:
        for i, (_, _, _, head, deprel) in enumerate(sentence, start=1):
            guess = i - 1 if side == "left" else (i + 1 if i < len(sentence) else 0)
            words += 1
            uas += guess == head
            las += guess == head and deprel == relation
    return words, uas, las


@pytest.mark.parametrize("name,params", [("dp_biaffine", {}), ("dp_seq2seq", {}),
                                         ("dp_seq2seq", {"input_layout": "repeat"})])
def test_neighbour_attachment_is_counted_by_hand(treebank, name, params):
    baselines = baselines_of(build_task(name, data=treebank, treebank="toy", **params))
    # the training split's most frequent relations are nsubj and root (3 each): the tie goes to nsubj
    for side, hand in (("left", (11, 3, 0)), ("right", (11, 5, 3))):
        words, uas, las = neighbour_counts(side, "nsubj")
        assert (words, uas, las) == hand
        assert baselines[side] == pytest.approx({"dev_uas": uas / words, "dev_las": las / words,
                                                 "test_uas": uas / words, "test_las": las / words})


# -- translation --------------------------------------------------------------------------------------
def test_copying_the_source_is_scored_as_evaluate_scores_translations(multi30k):
    task = build_task("translation", data=multi30k, beam_size=2, length_buckets=[2, 4])
    copy = baselines_of(task)["copy"]
    for split in ("dev", "test"):
        sources = [p[0] for p in PAIRS[split]]
        references = [p[1] for p in PAIRS[split]]
        assert copy[f"{split}_bleu"] == corpus_bleu(sources, references) == copy[f"{split}_bleu_greedy"]
    assert "test_bleu_len_1to2" in copy and "dev_bleu_len_1to2" not in copy  # "cat" is the one short source
    assert copy["test_bleu_len_1to2"] == corpus_bleu(["cat"], ["katze"])


# -- synthetic tasks ----------------------------------------------------------------------------------
def test_adding_mean_scores_the_splits_variance():
    task = build_task("adding", T=10, train_size=30, dev_size=50, test_size=60)
    baselines = baselines_of(task)
    for split in ("dev", "test"):
        targets = task.splits[split][1].double()
        assert baselines["mean"][f"{split}_mse"] == pytest.approx(float(targets.var(unbiased=False)), rel=1e-5)
        assert baselines["zero"][f"{split}_mse"] == pytest.approx(float((targets ** 2).mean()), rel=1e-5)
        assert baselines["one"][f"{split}_mse"] == pytest.approx(float(((targets - 1) ** 2).mean()), rel=1e-5)


def test_sine_filter_zero_and_identity_are_direct():
    task = build_task("sine_filter", gamma=2.0, acausality=5, T=12, train_size=10, dev_size=30, test_size=20)
    baselines = baselines_of(task)
    for split in ("dev", "test"):
        x, y = (part.double() for part in task.splits[split])
        assert baselines["zero"][f"{split}_mse"] == pytest.approx(float((y ** 2).mean()), rel=1e-5)
        assert baselines["identity"][f"{split}_mse"] == pytest.approx(float(((y - x) ** 2).mean()), rel=1e-5)


def test_reversal_chance_is_near_one_over_v_and_causal_is_the_bound():
    task = build_task("reversal", T=20, V=4, train_size=10, dev_size=2000, test_size=2000)
    baselines = baselines_of(task)
    for split in ("dev", "test"):
        assert baselines["chance"][f"{split}_accuracy"] == pytest.approx(1 / 4, abs=0.01)
        assert baselines["chance"][f"{split}_loss"] == pytest.approx(math.log(4), rel=1e-6)
        assert baselines["causal"][f"{split}_accuracy"] == analytic_bound(0, 20, 4) == 0.625
        assert baselines["causal"][f"{split}_loss"] == pytest.approx(math.log(4) / 2)


def test_copying_memoryless_loss_is_the_papers_baseline():
    task = build_task("copying", T=15, train_size=10, dev_size=400, test_size=30)
    memoryless = baselines_of(task)["memoryless"]
    assert memoryless["dev_loss"] == pytest.approx(memoryless_baseline(15), rel=1e-6)
    recalled = task.splits["dev"][1][-10:]
    assert memoryless["dev_copy_accuracy"] == int((recalled == 0).sum()) / recalled.numel()


def test_presence_majority_is_the_class_prior():
    majority = baselines_of(build_task("presence", T=9))["majority"]
    assert majority["dev_accuracy"] == 0.9
    assert majority["dev_loss"] == pytest.approx(-(0.9 * math.log(0.9) + 0.1 * math.log(0.1)), rel=1e-6)


def test_anbn_constant_answers_score_half_on_the_balanced_test():
    task = build_task("anbn", max_train_n=3, max_test_n=5, train_size=30, dev_size=41)
    baselines = baselines_of(task)
    positives = sum(label for _, label in task.splits["dev"]) / 41
    assert baselines["accept"]["dev_accuracy"] == pytest.approx(positives)
    assert baselines["reject"]["dev_accuracy"] == pytest.approx(1 - positives)
    for name in ("accept", "reject"):
        assert baselines[name]["test_accuracy"] == 0.5 and baselines[name]["test_recognised_up_to"] == 0.0
