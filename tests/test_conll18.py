"""UAS/LAS as the CoNLL 2018 evaluation script computes them, checked against hand computation."""
from __future__ import annotations

import pytest

from rnnrepro.metrics import (AttachmentScores, ParsedSentence, attachment_scores, evaluate_files,
                              read_conllu_sentences, write_conllu)


def conllu(rows: str) -> str:
    """Rows written with single spaces between columns -> tab-separated CoNLL-U."""
    lines = [" ".join(line.split()) for line in rows.strip().splitlines()]
    return "\n".join(line if line.startswith("#") else line.replace(" ", "\t") for line in lines) + "\n\n"


GOLD = conllu("""
# sent_id = 1
# text = I don't like Mary's dog.
1 I I PRON _ _ 4 nsubj _ _
2-3 don't _ _ _ _ _ _ _ _
2 do do AUX _ _ 4 aux _ _
3 n't not PART _ _ 4 advmod _ _
4 like like VERB _ _ 0 root _ _
5 Mary Mary PROPN _ _ 7 nmod:poss _ _
6 's 's PART _ _ 5 case _ _
7 dog dog NOUN _ _ 4 obj _ _
7.1 dog dog NOUN _ _ _ _ 4:obj _
8 . . PUNCT _ _ 4 punct _ _

# sent_id = 2
1 Go go VERB _ _ 0 root _ _
2 home home ADV _ _ 1 advmod _ _
3 . . PUNCT _ _ 1 punct _ _
""")

SYSTEM = conllu("""
1 I I PRON _ _ 4 nsubj _ _
2-3 don't _ _ _ _ _ _ _ _
2 do do AUX _ _ 4 aux _ _
3 n't not PART _ _ 2 advmod _ _
4 like like VERB _ _ 0 root _ _
5 Mary Mary PROPN _ _ 7 nmod _ _
6 's 's PART _ _ 5 case _ _
7 dog dog NOUN _ _ 4 nsubj _ _
7.1 dog dog NOUN _ _ _ _ 2:nsubj _
8 . . PUNCT _ _ 7 punct _ _

1 Go go VERB _ _ 0 root _ _
2 home home ADV _ _ 1 obl:npmod _ _
3 . . PUNCT _ _ 1 punct _ _
""")

# Hand computation. Words: the 8 + 3 integer-ID lines = 11 on each side (the multiword line
# "2-3 don't" and the empty node "7.1" are not words).
#   word      gold head/rel    system head/rel   UAS  LAS
#   I         4 nsubj          4 nsubj           1    1
#   do        4 aux            4 aux             1    1
#   n't       4 advmod         2 advmod          0    0
#   like      0 root           0 root            1    1
#   Mary      7 nmod:poss      7 nmod            1    1   (universal parts nmod = nmod)
#   's        5 case           5 case            1    1
#   dog       4 obj            4 nsubj           1    0
#   .         4 punct          7 punct           0    0   (punctuation counts)
#   Go        0 root           0 root            1    1
#   home      1 advmod         1 obl:npmod       1    0   (obl != advmod)
#   .         1 punct          1 punct           1    1
# UAS = 9/11, LAS = 7/11 (precision = recall = F1, same words on both sides).
EXPECTED_UAS, EXPECTED_LAS = 9 / 11, 7 / 11


@pytest.fixture
def files(tmp_path):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(GOLD)
    system.write_text(SYSTEM)
    return gold, system


def test_hand_written_pair_scores_as_computed_by_hand(files):
    scores = evaluate_files(*files)
    assert (scores.gold_words, scores.system_words, scores.aligned_words) == (11, 11, 11)
    assert (scores.uas_correct, scores.las_correct) == (9, 7)
    assert scores.uas == pytest.approx(EXPECTED_UAS) and scores.las == pytest.approx(EXPECTED_LAS)


def test_the_official_script_gives_the_hand_computed_scores_and_refuses_a_cycle(files, tmp_path):
    """The official script (v1.2, as stanza==1.0.1 ships it; see tests/test_parsing.py) on the same
    pair: same UAS and LAS; a system sentence whose HEADs form a cycle is refused, which is why
    the biaffine parser decodes trees, while ours scores it word by word (dp_seq2seq output)."""
    from stanza.utils import conll18_ud_eval as official

    gold, system = (official.load_conllu_file(str(path)) for path in files)
    result = official.evaluate(gold, system)
    ours = evaluate_files(*files)
    assert (result["UAS"].correct, result["LAS"].correct, result["Words"].gold_total) == (9, 7, 11)
    assert result["UAS"].f1 == pytest.approx(ours.uas, abs=1e-12)
    assert result["LAS"].f1 == pytest.approx(ours.las, abs=1e-12)
    cyclic = tmp_path / "cyclic.conllu"
    write_conllu(cyclic, [ParsedSentence(["a", "b", "c"], [0, 3, 2], ["root", "dep", "dep"])])
    write_conllu(tmp_path / "tree.conllu", [ParsedSentence(["a", "b", "c"], [0, 1, 2], ["root", "dep", "dep"])])
    with pytest.raises(official.UDError, match="cycle"):
        official.load_conllu_file(str(cyclic))
    assert evaluate_files(tmp_path / "tree.conllu", cyclic).uas == pytest.approx(2 / 3)  # words 1 and 3


def test_reader_keeps_multiword_tokens_and_skips_empty_nodes(files):
    first, second = read_conllu_sentences(files[0])
    assert first.forms == ["I", "do", "n't", "like", "Mary", "'s", "dog", "."]
    assert first.multiword_tokens == [(2, 3, "don't")]
    assert first.heads == [4, 4, 4, 0, 7, 5, 4, 4] and second.deprels == ["root", "advmod", "punct"]


def test_in_memory_sentences_and_written_files_score_alike(files, tmp_path):
    gold = read_conllu_sentences(files[0])
    system = read_conllu_sentences(files[1])
    in_memory = attachment_scores(gold, system)
    write_conllu(tmp_path / "written.conllu", system)
    assert evaluate_files(files[0], tmp_path / "written.conllu") == in_memory
    assert (in_memory.uas, in_memory.las) == (pytest.approx(EXPECTED_UAS), pytest.approx(EXPECTED_LAS))


def test_system_split_differently_is_aligned_on_characters(files):
    """A system that writes "do" and "n't" as two plain tokens is aligned inside the multiword span."""
    gold = read_conllu_sentences(files[0])
    system = read_conllu_sentences(files[1])
    system[0].multiword_tokens = []
    assert attachment_scores(gold, system) == attachment_scores(gold, read_conllu_sentences(files[1]))


def test_undecodable_heads_are_wrong_and_survive_a_round_trip(tmp_path):
    gold = [ParsedSentence(["a", "b", "c"], [0, 1, 2], ["root", "obj", "obj"])]
    system = [ParsedSentence(["a", "b", "c"], [0, None, 7], ["root", "obj", None])]
    scores = attachment_scores(gold, system)
    assert (scores.uas_correct, scores.las_correct) == (1, 1)
    write_conllu(tmp_path / "gold.conllu", gold)
    write_conllu(tmp_path / "system.conllu", system)
    assert evaluate_files(tmp_path / "gold.conllu", tmp_path / "system.conllu") == scores


def test_different_texts_are_an_error():
    gold = [ParsedSentence(["a", "b"], [0, 1], ["root", "obj"])]
    system = [ParsedSentence(["a", "c"], [0, 1], ["root", "obj"])]
    with pytest.raises(ValueError, match="concatenation of tokens"):
        attachment_scores(gold, system)


def tokens_to_sentence(tokens: list[str]) -> ParsedSentence:
    """The official script's test notation: "abc a b c" is a multiword token with words a, b, c."""
    forms, multiword = [], []
    for token in tokens:
        surface, *parts = token.split(" ")
        if parts:
            multiword.append((len(forms) + 1, len(forms) + len(parts), surface))
            forms += parts
        else:
            forms.append(surface)
    heads = [0] + [1] * (len(forms) - 1)
    return ParsedSentence(forms, heads, ["dep"] * len(forms), multiword_tokens=multiword)


@pytest.mark.parametrize("gold, system, aligned", [
    # The alignment cases of the script's own unit tests (conll18_ud_eval.py, TestAlignment).
    (["a"], ["a"], 1),
    (["a", "b", "c"], ["a", "b", "c"], 3),
    (["abc a b c"], ["a", "b", "c"], 3),
    (["a", "bc b c", "d"], ["a", "b", "c", "d"], 4),
    (["abcd a b c d"], ["ab a b", "cd c d"], 4),
    (["abc a b c", "de d e"], ["a", "bcd b c d", "e"], 5),
    (["abcd"], ["a", "b", "c", "d"], 0),
    (["abc", "d"], ["a", "b", "c", "d"], 1),
    (["a", "bc", "d"], ["a", "b", "c", "d"], 2),
    (["a", "bc b c", "d"], ["a", "b", "cd"], 2),
    (["abc a BX c", "def d EX f"], ["ab a b", "cd c d", "ef e f"], 4),
    (["ab a b", "cd bc d"], ["a", "bc", "d"], 2),
    (["a", "bc b c", "d"], ["ab AX BX", "cd CX a"], 1),
    # Not among the script's tests, but the script's result: a one-word range (2-2) is a
    # multiword token too, so its word "x" is aligned by FORM (no match), not by span.
    (["a", "b"], ["a", "b x"], 1),
])
def test_word_alignment_matches_the_official_script(gold, system, aligned):
    scores = attachment_scores([tokens_to_sentence(gold)], [tokens_to_sentence(system)])
    assert scores.aligned_words == aligned


# -- FORMs with spaces ---------------------------------------------------------------------------
# French GSD writes numbers as "2 001" (one FORM with a space). The script removes Unicode space
# characters (category Zs) from the FORM of every token line before it builds the character
# spans, and a word outside multiword tokens keeps that stripped FORM for the LCS of a multiword
# span; the words of a multiword token keep their FORMs as written. Every expected count below
# was also checked by running the official conll18_ud_eval.py (v1.2) on the same two files.
NUMBER_GOLD = ParsedSentence(["about", "1 000", "euros", "."], [2, 3, 0, 3], ["advmod", "nummod", "root", "punct"])


@pytest.mark.parametrize("number", ["1000", "1\u00a0000", "1\u202f000"])  # no space, no-break, narrow no-break
def test_forms_that_differ_only_by_spaces_align(number, tmp_path):
    system = ParsedSentence(["about", number, "euros", "."], [2, 3, 0, 1], ["advmod", "nmod", "root", "punct"])
    # about: right; 1000: head right, nmod != nummod; euros: right; ".": head 1, gold 3.
    scores = attachment_scores([NUMBER_GOLD], [system])
    assert (scores.aligned_words, scores.uas_correct, scores.las_correct) == (4, 3, 2)
    assert (scores.uas, scores.las) == (pytest.approx(3 / 4), pytest.approx(2 / 4))
    assert attachment_scores([system], [NUMBER_GOLD]).aligned_words == 4
    write_conllu(tmp_path / "gold.conllu", [NUMBER_GOLD])
    write_conllu(tmp_path / "system.conllu", [system])
    assert read_conllu_sentences(tmp_path / "gold.conllu")[0].forms[1] == "1 000"
    assert evaluate_files(tmp_path / "gold.conllu", tmp_path / "system.conllu") == scores


def test_space_in_a_form_outside_multiword_tokens_is_removed_for_the_lcs():
    """Gold "1 000" is a plain token; the system puts "1000" and "y" in a multiword token
    "1 000y". The span holding the multiword token is aligned by LCS, where gold's FORM counts
    as "1000" (stripped, as the script reads a plain token), so all three words align."""
    gold = ParsedSentence(["x", "1 000", "y"], [0, 1, 1], ["root", "nummod", "dep"])
    system = ParsedSentence(["x", "1000", "y"], [0, 1, 2], ["root", "nummod", "dep"],
                            multiword_tokens=[(2, 3, "1 000y")])
    scores = attachment_scores([gold], [system])
    # x and 1000 are right; y has head 2 instead of 1.
    assert (scores.gold_words, scores.system_words, scores.aligned_words) == (3, 3, 3)
    assert (scores.uas_correct, scores.las_correct) == (2, 2)
    assert (scores.uas, scores.las) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    # The same with the roles swapped: the multiword token in gold, the spaced FORM in the system.
    swapped = attachment_scores([system], [gold])
    assert (swapped.aligned_words, swapped.uas_correct) == (3, 2)
    gold_mwt = ParsedSentence(["x", "1000"], [0, 1], ["root", "nummod"], multiword_tokens=[(1, 2, "x1000")])
    system_plain = ParsedSentence(["x", "1 000"], [0, 1], ["root", "nummod"])
    assert attachment_scores([gold_mwt], [system_plain]) == AttachmentScores(2, 2, 2, 2, 2)


def test_space_in_a_word_of_a_multiword_token_is_kept_for_the_lcs():
    """The script does not strip the FORMs of the words of a multiword token (it reads their
    lines separately), so the word "1 000" of a multiword token does not match "1 000" written
    as a plain token, whose FORM the script reads as "1000"."""
    gold = ParsedSentence(["x", "1 000"], [0, 1], ["root", "nummod"], multiword_tokens=[(1, 2, "x1 000")])
    system = ParsedSentence(["x", "1 000"], [0, 1], ["root", "nummod"])
    assert attachment_scores([gold], [system]) == AttachmentScores(2, 2, 1, 1, 1)


def test_forms_whose_characters_differ_do_not_align():
    # Different characters: the texts differ, which the script refuses.
    system = ParsedSentence(["about", "1 001", "euros", "."], [2, 3, 0, 3], ["advmod", "nummod", "root", "punct"])
    with pytest.raises(ValueError, match=r"concatenation of tokens .* gold '0euros\.', system '1euros\.'"):
        attachment_scores([NUMBER_GOLD], [system])
    # Same characters, tokenised differently: "1 000" is one token, "1" "000" are two; no span matches.
    gold = ParsedSentence(["1 000", "euros"], [2, 0], ["nummod", "root"])
    split = ParsedSentence(["1", "000", "euros"], [3, 3, 0], ["nummod", "nummod", "root"])
    scores = attachment_scores([gold], [split])
    assert (scores.gold_words, scores.system_words, scores.aligned_words, scores.uas_correct) == (2, 3, 1, 1)
    assert scores.uas == pytest.approx(2 * 1 / (2 + 3))
    # Inside a multiword span: "10 0" (read as "100") and "0" do not match gold's word "1000".
    gold_mwt = ParsedSentence(["x", "1000"], [0, 1], ["root", "nummod"], multiword_tokens=[(1, 2, "x1000")])
    system_plain = ParsedSentence(["x", "10 0", "0"], [0, 1, 2], ["root", "nummod", "dep"])
    assert attachment_scores([gold_mwt], [system_plain]) == AttachmentScores(2, 3, 1, 1, 1)


# -- multiword-token IDs -------------------------------------------------------------------------
@pytest.mark.parametrize("range_id, message", [
    ("2-x", "line 2: multiword-token ID '2-x', expected a range 2-N with N >= 2"),
    ("3-2", "line 2: multiword-token ID '3-2', expected a range 2-N with N >= 2"),
    ("3-4", "line 2: multiword-token ID '3-4', expected a range 2-N with N >= 2"),
    ("2-9", "sentence ending at line 5: multiword token 2-9 ends beyond the sentence of 3 words"),
])
def test_malformed_multiword_token_id_names_file_and_line(range_id, message, tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(conllu(f"""
        1 a a X _ _ 0 root _ _
        {range_id} bc _ _ _ _ _ _ _ _
        2 b b X _ _ 1 dep _ _
        3 c c X _ _ 1 dep _ _
    """), encoding="utf-8")
    with pytest.raises(ValueError) as info:
        read_conllu_sentences(path)
    assert str(info.value).startswith(f"{path}") and message in str(info.value)
    good = path.read_text(encoding="utf-8").replace(range_id, "2-3")
    path.write_text(good, encoding="utf-8")
    assert read_conllu_sentences(path)[0].multiword_tokens == [(2, 3, "bc")]


def test_multiword_token_that_does_not_fit_its_sentence_is_an_error():
    """A range like 3-2 built in memory is refused (it used to make the alignment loop for ever)."""
    gold = ParsedSentence(["a", "b", "c"], [0, 1, 1], ["root", "dep", "dep"])
    backwards = ParsedSentence(["a", "b", "c"], [0, 1, 1], ["root", "dep", "dep"], multiword_tokens=[(3, 2, "c")])
    with pytest.raises(ValueError, match=r"multiword token 3-2 'c' does not fit a sentence of 3 words"):
        attachment_scores([gold], [backwards])
