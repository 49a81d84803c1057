"""Dependency parsing: the seq2seq target and its decoding, the biaffine parser and its task."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rnnrepro.metrics.trees import is_tree, max_spanning_tree
from rnnrepro.models import build_model
from rnnrepro.tasks import Batch, build_task
from rnnrepro.tasks.base import IGNORE_INDEX
from rnnrepro.tasks.parsing import ParserScores, ParsingIO
from toy_treebank import write_toy_treebank

CPU = torch.device("cpu")


@pytest.fixture
def treebank(tmp_path) -> str:
    return write_toy_treebank(tmp_path)


def readable(task, ids: list[int]) -> list:
    """Relation names and head positions of output ids."""
    relations = len(task.relations)
    return [task.relations.itos[i] if i < relations else i - relations for i in ids]


# -- sequence to sequence ----------------------------------------------------------------------------
def test_seq2seq_target_interleaves_relation_and_head(treebank):
    task = build_task("dp_seq2seq", data=treebank, treebank="toy")
    assert readable(task, task.target_ids["train"][0]) == ["det", 2, "nsubj", 3, "root", 0]
    (batch,) = task.batches("train", 10)
    assert batch.lengths.tolist() == [3, 3, 5]  # sorted by length
    assert batch.targets.shape == (10, 3) and batch.extra["target_lengths"].tolist() == [6, 6, 10]
    assert batch.targets[6:, 0].eq(IGNORE_INDEX).all()
    assert [task.words.itos[i] for i in batch.inputs[:3, 0].tolist()] == ["the", "cat", "sit"]  # lemmas


def test_seq2seq_decoding_inverts_the_target_and_survives_malformed_output(treebank):
    task = build_task("dp_seq2seq", data=treebank, treebank="toy")
    for sentence in task.gold["train"]:
        ids = task.targets.encode(sentence.heads, sentence.deprels)
        assert task.targets.decode(ids, len(sentence.forms)) == (sentence.heads, sentence.deprels)
    relations = len(task.relations)
    det, root = task.relations.stoi["det"], task.relations.stoi["root"]
    # word 1: a head where the relation belongs, a relation where the head belongs;
    # word 2: head 9 beyond the 3 words; word 3: the output ended early
    malformed = [relations + 2, det, root, relations + 9, root]
    assert task.targets.decode(malformed, 3) == ([None, None, None], [None, "root", "root"])


def test_perfect_seq2seq_output_scores_one(treebank):
    task = build_task("dp_seq2seq", data=treebank, treebank="toy")

    def oracle(batch):  # one-hot logits of the targets (padding steps: id 0)
        return torch.nn.functional.one_hot(batch.targets.clamp(min=0), task.io.output_size).float()

    assert task.evaluate(oracle, "test", 2, CPU) == {"test_uas": 1.0, "test_las": 1.0}
    assert task.evaluate(lambda batch: oracle(batch).argmax(-1), "dev", 10, CPU) == {"dev_uas": 1.0, "dev_las": 1.0}


def test_seq2seq_scores_a_wrong_relation_in_las_only(treebank):
    task = build_task("dp_seq2seq", data=treebank, treebank="toy")
    punct, case = task.relations.stoi["punct"], task.relations.stoi["case"]

    def one_mistake(batch):  # "." labelled case instead of punct: 11 words, LAS loses one
        ids = batch.targets.clamp(min=0).clone()
        ids[ids == punct] = case
        return ids

    assert task.evaluate(one_mistake, "test", 10, CPU) == {"test_uas": 1.0, "test_las": 10 / 11}


@pytest.mark.parametrize("layout", ["pad", "repeat"])
def test_one_output_per_input_models_need_an_aligned_layout(treebank, layout):
    task = build_task("dp_seq2seq", data=treebank, treebank="toy", input_layout=layout)
    (batch,) = task.batches("train", 10)
    assert batch.inputs.shape[0] == batch.targets.shape[0] and batch.lengths.tolist() == [6, 6, 10]
    lemmas = [task.words.itos[i] for i in batch.inputs[:6, 0].tolist()]
    assert lemmas == (["the", "cat", "sit", "<pad>", "<pad>", "<pad>"] if layout == "pad"
                      else ["the", "the", "cat", "cat", "sit", "sit"])
    model = build_model("brnn", task.io, "gru", hidden_size=4, embedding_size=3)
    assert torch.isfinite(task.loss(model(batch), batch))
    metrics = task.evaluate(model.eval(), "dev", 10, CPU)
    assert set(metrics) == {"dev_uas", "dev_las"} and 0 <= metrics["dev_las"] <= metrics["dev_uas"] <= 1


def test_source_layout_rejects_a_model_with_one_output_per_input(treebank):
    task = build_task("dp_seq2seq", data=treebank, treebank="toy")
    (batch,) = task.batches("train", 10)
    model = build_model("basic", task.io, "lstm", hidden_size=4, embedding_size=3)
    with pytest.raises(ValueError, match="input_layout 'pad' or 'repeat'"):
        task.loss(model(batch), batch)


# -- biaffine -----------------------------------------------------------------------------------------
IO = ParsingIO(output_size=4, level="token", input_vocab=11, tag_vocab=5)


def small_parser(cell: str = "lstm", io: ParsingIO = IO, **params):
    torch.manual_seed(0)
    sizes = {"layers": 2, "hidden_size": 5, "embedding_size": 4, "arc_mlp": 6, "label_mlp": 3} | params
    model = build_model("biaffine", io, cell, **sizes)
    with torch.no_grad():  # the biaffine weights start at zero; make the scores differ
        for weight in (model.arc_weight, model.arc_head_bias, model.label_bilinear.weight):
            weight.normal_()
    return model.eval()


def parse_batch(inputs: list[list[int]], tags: list[list[int]]) -> Batch:
    steps = max(map(len, inputs))

    def pad(rows: list[list[int]]) -> torch.Tensor:
        return torch.tensor([row + [0] * (steps - len(row)) for row in rows]).T

    return Batch(pad(inputs), torch.tensor([len(row) for row in inputs]), torch.zeros(0), {"upos": pad(tags)})


def test_biaffine_scores_every_head_including_the_root():
    scores = small_parser()(parse_batch([[3, 4, 5, 6], [7, 8]], [[1, 2, 3, 4], [2, 2]]))
    assert isinstance(scores, ParserScores)
    assert scores.arcs.shape == (4, 2, 5) and scores.labels.shape == (4, 2, 4)
    arcs = scores.arcs[:, 1]  # the 2-word sentence: heads 0..2 possible, not itself, not padding
    assert torch.isfinite(arcs[:2, 0]).all()  # root
    assert torch.isfinite(arcs[0, 2]) and torch.isfinite(arcs[1, 1])
    assert torch.isinf(arcs[0, 1]) and torch.isinf(arcs[1, 2])  # a word is not its own head
    assert torch.isinf(arcs[:, 3:]).all()  # padding is no head
    assert torch.isfinite(scores.arcs[:, 0, 0]).all() and scores.arcs[:, 0].isfinite().sum() == 4 * 4


@pytest.mark.parametrize("cell", ["lstm", "gru", "srn"])
def test_biaffine_scores_do_not_change_when_padding_is_added_beside(cell):
    model = small_parser(cell)
    alone = model(parse_batch([[3, 4, 5]], [[1, 2, 3]]))
    together = model(parse_batch([[6, 7, 8, 9, 10, 1], [3, 4, 5]], [[4, 3, 2, 1, 1, 1], [1, 2, 3]]))
    assert torch.allclose(together.arcs[:3, 1, :4], alone.arcs[:, 0], atol=1e-5)
    assert torch.allclose(together.labels[:3, 1], alone.labels[:, 0], atol=1e-5)


def test_biaffine_labels_the_gold_head_in_training_and_the_tree_head_otherwise():
    model = small_parser(io=ParsingIO(output_size=4, level="token", input_vocab=11))
    batch = parse_batch([[3, 4, 5]], [[0, 0, 0]])
    del batch.extra["upos"]
    scores = model(batch)
    argmax, tree = scores.arcs.argmax(-1), scores.heads
    assert argmax[:, 0].tolist() == [0, 0, 0] and tree[:, 0].tolist() == [0, 1, 1]  # three roots; one
    assert tree[:, 0].tolist() == max_spanning_tree(scores.arcs[:, 0]).tolist()
    gold = (tree % 3) + 1  # some other heads
    batch.extra["heads"] = gold
    r, _ = model.encode(batch)
    assert torch.allclose(model(batch).labels, model.label_scores(r, tree))
    model.train()
    training = model(batch)
    assert torch.allclose(training.labels, model.label_scores(r, gold)) and training.heads is None


def test_biaffine_evaluation_decodes_trees_where_the_argmax_is_not_one(treebank):
    task = build_task("dp_biaffine", data=treebank, treebank="toy")
    torch.manual_seed(0)
    model = build_model("biaffine", task.io, "lstm", layers=1, hidden_size=4, embedding_size=3,
                        arc_mlp=5, label_mlp=3).eval()  # untrained: every head scores the same
    (batch,) = task.batches("test", 10)
    scores = model(batch)
    assert (scores.arcs.argmax(-1)[:, 0] == 0).all()  # ties: every word on the root
    heads = scores.heads
    assert all(is_tree(heads[:n, b].tolist()) for b, n in enumerate(batch.lengths.tolist()))
    metrics = task.evaluate(model, "test", 10, CPU)
    assert 0 < metrics["test_uas"] < 1  # each sentence has one word on the root, not all


def test_biaffine_overfits_three_sentences(treebank):
    task = build_task("dp_biaffine", data=treebank, treebank="toy", use_upos=True)
    torch.manual_seed(0)
    model = build_model("biaffine", task.io, "lstm", layers=1, hidden_size=16, embedding_size=8,
                        arc_mlp=16, label_mlp=8)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    (batch,) = task.batches("train", 10)
    for step in range(300):
        model.train()
        optimizer.zero_grad()
        task.loss(model(batch), batch).backward()
        optimizer.step()
        if step % 10 == 9 and task.evaluate(model.eval(), "train", 10, CPU) == {"train_uas": 1.0, "train_las": 1.0}:
            break
    assert task.evaluate(model.eval(), "test", 2, CPU) == {"test_uas": 1.0, "test_las": 1.0}
    assert step < 299


def test_biaffine_task_batches_and_wrong_model(treebank):
    task = build_task("dp_biaffine", data=treebank, treebank="toy")
    assert task.io.tag_vocab is None and task.io.output_size == 7
    (batch,) = task.batches("dev", 10)
    assert batch.extra["heads"][:, 2].tolist() == [3, 1, 4, 0, 4] and "upos" not in batch.extra
    assert task.relations.itos[batch.extra["relations"][0, 2]] == "nmod:poss"
    assert batch.extra["relations"][3:, 0].eq(IGNORE_INDEX).all()
    with pytest.raises(TypeError, match="needs a model that returns ParserScores"):
        task.loss(torch.zeros(5, 3, 7), batch)


# -- real predictions: a tiny run on the mirror's UD English EWT -------------------------------------
# The official CoNLL 2018 evaluation script, v1.2 (github.com/ufal/conll2018, evaluation_script/
# conll18_ud_eval.py at commit 37bc4d7), as stanza 1.0.1 ships it unchanged: its sha256.
OFFICIAL_SCRIPT_SHA256 = "1072e02af00b1a56205b5e8216d51dee9b8944a104d80744afaccc78859fcb16"
EWT = "ud_en_ewt_v2.3"
EWT_EVAL_SENTENCES = 500


@pytest.fixture(scope="module")
def ewt_run(mirror, tmp_path_factory):
    """A tiny biaffine run trained by the pipeline's ``train_run`` on 800 EWT training sentences,
    scored through CoNLL-U files (``conllu_files``) on 500 dev and test sentences; returns the run
    folder, the prepared data, and every (gold file, system file, our scores) the task wrote, the
    files copied before the task's temporary folder goes."""
    import shutil

    from rnnrepro.data.fetch import fetch_dataset
    from rnnrepro.data.prepared import prepare_dataset
    from rnnrepro.train import train_run
    import rnnrepro.tasks.parsing as parsing

    root = tmp_path_factory.mktemp("ewt")
    fetch_dataset(EWT, root / "raw", mirror=mirror, timeout=1, progress=False)
    data = root / "ewt.json.gz"
    prepare_dataset(EWT, root / "raw", data)
    written = []

    def keep(gold_path, system_path):
        scores = real(gold_path, system_path)
        copies = tuple(root / "written" / f"{len(written)}-{Path(path).name}" for path in (gold_path, system_path))
        for path, copy in zip((gold_path, system_path), copies):
            copy.parent.mkdir(exist_ok=True)
            shutil.copyfile(path, copy)
        written.append((*copies, scores))
        return scores

    real = parsing.evaluate_files
    run = {"seed": 1,
           "task": {"name": "dp_biaffine", "treebank": EWT, "use_upos": True, "min_count": 2, "conllu_files": True,
                    "max_train_sentences": 800, "max_eval_sentences": EWT_EVAL_SENTENCES},
           "model": {"name": "biaffine", "layers": 1, "hidden_size": 32, "embedding_size": 16, "arc_mlp": 32,
                     "label_mlp": 16},
           "cell": {"name": "lstm"},
           "train": {"epochs": 3, "batch_size": 20, "optimizer": "adam", "lr": 0.01, "eval_batch_size": 100}}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parsing, "evaluate_files", keep)
        metrics = train_run(run, root / "run", data=data, device="cpu")
    return root / "run", data, written, metrics


def test_every_predicted_ewt_sentence_is_a_tree(ewt_run):
    from rnnrepro.data.conllu_reader import read_conllu
    from rnnrepro.train import load_trained

    folder, data, written, metrics = ewt_run
    systems = [system for _, system, _ in written]
    assert {path.name.split("-", 1)[1] for path in systems} == {"dev-system.conllu", "test-system.conllu"}
    for system in systems:
        sentences = read_conllu(system)  # refuses a sentence with a cycle, no root or several roots
        assert len(sentences) == EWT_EVAL_SENTENCES
        assert all(is_tree(s.heads) for s in sentences)
    # the decoding mattered: the same model's per-word argmax has sentences with a cycle (and one
    # root) and sentences with no root or several (about 80 and 130 of the 500 test sentences)
    task, model = load_trained(folder / "model.pt", data)
    cycles = roots = 0
    for batch in task.batches("test", 100):
        with torch.no_grad():
            argmax = model(batch).arcs.argmax(-1)
        for b, n in enumerate(batch.lengths.tolist()):
            heads = argmax[:n, b].tolist()
            wrong_roots = heads.count(0) != 1
            roots += wrong_roots
            cycles += not wrong_roots and not is_tree(heads)
    assert cycles > 20 and roots > 20
    assert 0.4 < metrics["test_uas"] < 1 and metrics["test_las"] <= metrics["test_uas"]


def test_the_official_script_accepts_predicted_files_and_gives_our_scores(ewt_run):
    import hashlib

    from stanza.utils import conll18_ud_eval as official

    assert hashlib.sha256(Path(official.__file__).read_bytes()).hexdigest() == OFFICIAL_SCRIPT_SHA256
    _, _, written, metrics = ewt_run
    for gold, system, ours in written:
        gold_ud = official.load_conllu_file(str(gold))  # raises UDError on a malformed file or a non-tree
        result = official.evaluate(gold_ud, official.load_conllu_file(str(system)))
        assert abs(result["UAS"].f1 - ours.uas) <= 1e-9 and abs(result["LAS"].f1 - ours.las) <= 1e-9
        assert result["Words"].gold_total == result["Words"].system_total == ours.gold_words
        itself = official.evaluate(gold_ud, official.load_conllu_file(str(gold)))
        assert itself["UAS"].f1 == itself["LAS"].f1 == 1.0
    last_test = next(ours for _, system, ours in reversed(written) if system.name.endswith("test-system.conllu"))
    assert abs(last_test.las - metrics["test_las"]) <= 1e-12
