"""The char+word tagger (Plank et al.) with delays (drnn paper), and the pos_chars task feeding it."""
from __future__ import annotations

import pytest
import torch

from rnnrepro.data.prepared import write_json_gz
from rnnrepro.layers import Recurrent, delay_inputs
from rnnrepro.models import MODELS, build_model
from rnnrepro.tasks import Batch, build_task
from rnnrepro.tasks.pos_chars import CharTaskIO

IO = CharTaskIO(output_size=5, level="token", input_vocab=11, char_vocab=9)
SIZES = {"hidden_size": 4, "embedding_size": 3, "char_hidden_size": 3, "char_embedding_size": 2}


def tagger(cell: str = "lstm", **params):
    torch.manual_seed(0)
    return build_model("char_word", IO, cell, **(SIZES | params)).eval()


def tag_batch(sentences: list[list[list[int]]]) -> Batch:
    """Words as lists of character ids; the word id of a word is its first character + 1."""
    steps = max(map(len, sentences))
    width = max(len(word) for sentence in sentences for word in sentence)
    words = torch.zeros(steps, len(sentences), dtype=torch.long)
    chars = torch.zeros(steps, len(sentences), width, dtype=torch.long)
    for b, sentence in enumerate(sentences):
        for t, word in enumerate(sentence):
            words[t, b] = word[0] + 1
            chars[t, b, :len(word)] = torch.tensor(word)
    return Batch(words, torch.tensor([len(s) for s in sentences]), torch.zeros(0), {"chars": chars})


SHORT = [[2, 3], [4], [5, 6, 7]]
LONG = [[1, 2, 3, 4, 5], [6], [7, 8], [2, 2], [3]]
VARIANTS = [{}, {"char_bidirectional": False, "word_bidirectional": False},
            {"char_bidirectional": False, "word_bidirectional": False, "char_delay": 2, "word_delay": 1},
            {"char_bidirectional": False, "char_delay": 1}, {"word_bidirectional": False, "word_delay": 3}]


def test_shapes():
    assert tagger()(tag_batch([SHORT, LONG])).shape == (5, 2, 5)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize("params", VARIANTS)
def test_outputs_do_not_change_when_padding_is_added_beside(cell, params):
    model = tagger(cell, **params)
    alone = model(tag_batch([SHORT]))
    together = model(tag_batch([LONG, SHORT]))
    assert torch.allclose(together[:3, 1], alone[:, 0], atol=1e-6)


@pytest.mark.parametrize("params", VARIANTS)
def test_words_encoded_in_length_groups_equal_one_padded_batch(params, monkeypatch):
    """Grouping the words by length (less padding) gives each word the encoding, and the model
    the outputs and gradients, of encoding every word in its place padded to the batch's longest."""
    batch = tag_batch([LONG, SHORT, [[1] * 9, [2]], [[3, 4, 5, 6], [7, 8, 1], [2] * 6]])
    chars, lengths = batch.extra["chars"], batch.lengths

    def padded_to_longest(model):  # every real word in its place, padded to the longest
        real = torch.arange(chars.shape[0]).unsqueeze(1) < lengths
        words = chars[real]
        _, final = model.chars(model.char_embedding(words.T), (words != 0).sum(1))
        out = final.new_zeros(*chars.shape[:2], final.shape[1])
        out[real] = final
        return out

    for groups in (1, 3, 8):
        monkeypatch.setattr(type(tagger()), "LENGTH_GROUPS", groups)
        model = tagger(**params).train()
        assert torch.allclose(model.char_encoding(chars, lengths), padded_to_longest(model), atol=1e-6)
        out = model(batch)
        out.square().sum().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        with monkeypatch.context() as patch:
            patch.setattr(model, "char_encoding", lambda *_: padded_to_longest(model))
            reference = model(batch)
        reference.square().sum().backward()
        assert torch.allclose(out, reference, atol=1e-6)
        assert all(torch.allclose(g, p.grad, atol=1e-6) for g, p in zip(grads, model.parameters()))


def test_zero_delays_are_the_undelayed_network():
    """Delays of 0: the plain composition char RNN -> [embedding ; final state] -> word RNN -> head."""
    model = tagger(char_bidirectional=False, word_bidirectional=False, char_delay=0, word_delay=0)
    batch = tag_batch([LONG, SHORT])
    char_rnn, word_rnn = Recurrent(model.chars.rnn.cell), Recurrent(model.words.rnn.cell)
    steps, size = batch.inputs.shape[0], IO.char_vocab
    encodings = torch.zeros(steps, 2, model.chars.output_size)
    for b, sentence in enumerate([LONG, SHORT]):
        for t, word in enumerate(sentence):
            _, (h, *_) = char_rnn(model.char_embedding(torch.tensor(word)).unsqueeze(1))
            encodings[t, b] = h[0]
    x = torch.cat([model.word_embedding(batch.inputs), encodings], dim=2)
    expected = model.head(word_rnn(x, batch.lengths)[0])
    assert size == 9 and torch.allclose(model(batch)[:3], expected[:3], atol=1e-6)
    assert torch.allclose(model(batch)[:, 0], expected[:, 0], atol=1e-6)
    x, lengths = torch.randn(4, 2, 3), torch.tensor([4, 2])
    assert delay_inputs(x, lengths, 0) == (x, lengths)


def test_word_delay_reads_the_output_late_over_zero_padded_input():
    delayed = tagger(word_bidirectional=False, word_delay=2)
    batch = tag_batch([LONG, SHORT])
    x = torch.cat([delayed.word_embedding(batch.inputs), delayed.char_encoding(batch.extra["chars"], batch.lengths)], 2)
    x[3:, 1] = 0  # the short sentence's padding ...
    padded = torch.cat([x, torch.zeros(2, 2, x.shape[2])])  # ... and 2 zero steps after each sentence
    outputs, _ = Recurrent(delayed.words.rnn.cell)(padded, batch.lengths + 2)
    expected = delayed.head(outputs[2:])
    out = delayed(batch)
    assert torch.allclose(out[:, 0], expected[:, 0], atol=1e-6)
    assert torch.allclose(out[:3, 1], expected[:3, 1], atol=1e-6)


def test_a_delayed_tag_sees_exactly_delay_words_ahead():
    model = tagger(word_bidirectional=False, word_delay=2)
    base = model(tag_batch([LONG]))
    later = model(tag_batch([LONG[:4] + [[8]]]))  # word 5 changed
    assert torch.allclose(base[:2], later[:2]) and not torch.allclose(base[2], later[2])


def test_models_are_reachable_by_name_and_misuse_is_explained():
    assert {"biaffine", "char_word"} <= set(MODELS.names())
    with pytest.raises(KeyError, match="unknown model 'char_wrd'; known models: .*biaffine.*char_word"):
        build_model("char_wrd", IO, "lstm")
    with pytest.raises(ValueError, match="word_delay=1 needs a one-directional word level"):
        build_model("char_word", IO, "lstm", word_delay=1)
    with pytest.raises(ValueError, match="needs word and character ids"):
        build_model("char_word", CharTaskIO(output_size=5, level="token", input_vocab=11), "lstm")


@pytest.fixture
def treebank(tmp_path) -> str:
    sentence = {"form": ["The", "cats", "sat"], "lemma": ["the", "cat", "sit"], "upos": ["DET", "NOUN", "VERB"],
                "head": [2, 3, 0], "deprel": ["det", "nsubj", "root"]}
    other = {"form": ["Dogs", "barked"], "lemma": ["dog", "bark"], "upos": ["NOUN", "VERB"],
             "head": [2, 0], "deprel": ["nsubj", "root"]}
    split = {k: [sentence[k], other[k]] for k in sentence}
    path = tmp_path / "toy.json.gz"
    write_json_gz({"dataset": "toy", "splits": {s: split for s in ("train", "dev", "test")}}, path)
    return str(path)


def test_pos_chars_batches_carry_the_characters_of_each_word(treebank):
    task = build_task("pos_chars", data=treebank, treebank="toy", lowercase=True)
    (batch,) = task.batches("train", 10)
    chars = batch.extra["chars"]
    assert chars.shape == (3, 2, 6)  # "barked"
    spelled = ["".join(task.chars.itos[c] for c in word if c) for word in chars[:, 1].tolist()]
    assert spelled == ["The", "cats", "sat"]  # characters as written, words lowercased
    assert task.words.itos[batch.inputs[0, 1]] == "the" and chars[2, 0].eq(0).all()
    assert task.io.char_vocab == len(task.chars) and task.io.output_size == 3
    cut = build_task("pos_chars", data=treebank, treebank="toy", max_word_length=3)
    assert cut.batches("train", 10)[0].extra["chars"].shape == (3, 2, 3)


def test_char_word_trains_and_evaluates_on_pos_chars(treebank):
    task = build_task("pos_chars", data=treebank, treebank="toy")
    torch.manual_seed(0)
    model = build_model("char_word", task.io, "gru", word_bidirectional=False, word_delay=1, **SIZES)
    (batch,) = task.batches("train", 10)
    assert torch.isfinite(task.loss(model(batch), batch))
    accuracy = task.evaluate(model.eval(), "test", 10, torch.device("cpu"))["test_accuracy"]
    assert 0 <= accuracy <= 1
