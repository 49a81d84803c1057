"""Tests of the CoNLL-U and plain-text readers (toy files; the real mirror if present)."""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path

import pytest

from rnnrepro.data.conllu_reader import ConlluFormatError, read_conllu
from rnnrepro.data.fetch import fetch_dataset
from rnnrepro.data.sources import Dataset, dataset
from rnnrepro.data.text_readers import read_parallel, read_ptb_char, read_tokenized_lines
from rnnrepro.metrics.conll18 import read_conllu_sentences

REFUSED = "http://127.0.0.1:9/"
REPO_ROOT = Path(__file__).resolve().parents[1]




def offline(ds: Dataset) -> Dataset:
    """A copy of ``ds`` whose official URLs all fail immediately (connection refused)."""
    files = {split: replace(src, urls=(REFUSED + src.name,)) for split, src in ds.files.items()}
    return replace(ds, files=files)


@pytest.fixture(scope="module")
def fetched(tmp_path_factory: pytest.TempPathFactory, mirror: Path):
    """Fetch (split of) a dataset from the real mirror into a module-wide folder."""
    root = mirror
    dest = tmp_path_factory.mktemp("fetched")

    def get(key: str, split: str) -> Path:
        paths = fetch_dataset(offline(dataset(key)), dest / key, mirror=root, timeout=2,
                              progress=False, splits=[split])
        return paths[split]

    return get


# --------------------------------------------------------------------------------- CoNLL-U

TOY_CONLLU = """\
# sent_id = s1
# text = Don't go.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t3:aux\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t3:advmod\t_
3\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\tSpaceAfter=No
3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t3:conj\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_

1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_

"""


def write(tmp_path: Path, text: str, name: str = "toy.conllu") -> Path:
    """Write UTF-8 text to tmp_path/name."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_read_conllu_skips_multiword_tokens_and_empty_nodes(tmp_path: Path) -> None:
    first, second = read_conllu(write(tmp_path, TOY_CONLLU))
    assert first.tokens == ["Do", "n't", "go", "."]
    assert first.lemmas == ["do", "not", "go", "."]
    assert first.upos == ["AUX", "PART", "VERB", "PUNCT"]
    assert first.heads == [3, 3, 0, 3]
    assert first.deprels == ["aux", "advmod", "root", "punct"]
    assert first.sent_id == "s1"
    assert len(first) == 4
    assert second.tokens == ["Hi"] and second.heads == [0] and second.sent_id is None


def test_read_conllu_accepts_crlf(tmp_path: Path) -> None:
    path = tmp_path / "crlf.conllu"
    path.write_bytes(TOY_CONLLU.replace("\n", "\r\n").encode("utf-8"))
    assert [s.tokens for s in read_conllu(path)] == [["Do", "n't", "go", "."], ["Hi"]]


@pytest.mark.parametrize("ending", ["\n", "", "\r\n"], ids=["newline", "no-newline", "crlf"])
def test_a_file_without_its_final_blank_line_is_rejected_at_its_last_line(tmp_path: Path, ending: str) -> None:
    """Every sentence ends with a blank line, the last one included (CoNLL-U; UD's validator and
    the CoNLL 2018 script reject a file without it): a file cut short ends this way."""
    text = TOY_CONLLU.rstrip("\n").replace("\n", ending or "\n") + ending
    path = tmp_path / "toy.conllu"
    path.write_bytes(text.encode("utf-8"))
    with pytest.raises(ConlluFormatError) as info:
        read_conllu(path)
    assert info.value.line_no == 10
    assert str(info.value) == (f"{path}, line 10: the file ends inside the sentence starting at line 10, without the "
                               f"blank line that ends every sentence, the last one included (a file cut short?): "
                               f"'1\\tHi\\thi\\tINTJ\\tUH\\t_\\t0\\troot\\t0:root\\t_'")


@pytest.mark.parametrize("text", ["", "\n\n", "\r\n"], ids=["empty", "blank-lines", "crlf"])
def test_an_empty_treebank_is_rejected(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConlluFormatError, match=r"toy\.conllu, line 1: the file holds no sentence \(an empty "
                                                r"treebank\)"):
        read_conllu(path)


def _break_line(text: str, line_no: int, column: int | None, value: str | None) -> str:
    """Replace one column of a line (or drop two columns when ``column`` is None)."""
    lines = text.split("\n")
    columns = lines[line_no - 1].split("\t")
    if column is None:
        columns = columns[:8]
    else:
        columns[column] = value
    lines[line_no - 1] = "\t".join(columns)
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("line_no", "column", "value", "reason"),
    [
        (5, None, None, "expected 10 tab-separated columns, found 8"),
        (8, 0, "x", "ID 'x'"),
        (4, 6, "y", "HEAD 'y'"),
        (10, 6, "-1", "HEAD '-1'"),
        (3, 0, "2-1", "ends before it starts"),
        # Multiword-token IDs that are not ranges of two integers, or run backwards.
        (3, 0, "2-x", "ID '2-x' is not an integer, a range like 3-4 or an empty node like 5.1"),
        (3, 0, "3-2", "multiword-token range '3-2' ends before it starts"),
        # HEAD beyond the sentence (sentence 1 has 4 words, sentence 2 one word).
        (5, 6, "9", "HEAD 9 points outside the sentence starting at line 1 (4 words)"),
        (8, 6, "5", "HEAD 5 points outside the sentence starting at line 1 (4 words)"),
        (10, 6, "2", "HEAD 2 points outside the sentence starting at line 10 (1 word)"),
        # Word IDs that do not run 1, 2, 3, ...: a gap, a repeat, a sentence not starting at 1.
        (8, 0, "5", "word ID 5 breaks the sequence 1, 2, 3, ... of the sentence starting at line 1: "
                    "expected 4"),
        (6, 0, "2", "word ID 2 breaks the sequence 1, 2, 3, ... of the sentence starting at line 1: "
                    "expected 3"),
        (10, 0, "2", "word ID 2 breaks the sequence 1, 2, 3, ... of the sentence starting at line 10: "
                     "expected 1"),
    ],
)
def test_malformed_line_names_file_and_line(
    tmp_path: Path, line_no: int, column: int | None, value: str | None, reason: str
) -> None:
    path = write(tmp_path, _break_line(TOY_CONLLU, line_no, column, value))
    bad_line = path.read_text(encoding="utf-8").split("\n")[line_no - 1]
    with pytest.raises(ConlluFormatError) as info:
        read_conllu(path)
    error = info.value
    assert error.line_no == line_no
    message = str(error)
    assert str(path) in message
    assert f"line {line_no}:" in message
    assert reason in message
    assert repr(bad_line) in message


def test_heads_up_to_the_sentence_length_and_non_word_ids_are_accepted(tmp_path: Path) -> None:
    """The largest valid HEAD is the number of words; ranges and empty nodes are not words.

    An empty node before the first word (0.1) and after the last (4.1), and a multiword token
    after an empty node (3-4 after 2.1, before its first word 3), do not count in the sequence
    of word IDs or in the sentence length.
    """
    text = _break_line(TOY_CONLLU, 5, 6, "4")  # n't -> attached to the 4th and last word
    lines = text.split("\n")
    lines[2:2] = ["0.1\tPRO\t_\t_\t_\t_\t_\t_\t0:root\t_"]
    lines[6:6] = ["2.1\tPRO\t_\t_\t_\t_\t_\t_\t0:root\t_", "3-4\tgo.\t_\t_\t_\t_\t_\t_\t_\t_"]
    lines[11:11] = ["4.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t3:conj\t_"]
    first, second = read_conllu(write(tmp_path, "\n".join(lines)))
    assert first.tokens == ["Do", "n't", "go", "."]
    assert first.heads == [3, 4, 0, 3]
    assert second.tokens == ["Hi"] and second.heads == [0]


def test_head_beyond_sentence_names_the_first_such_line(tmp_path: Path) -> None:
    text = _break_line(_break_line(TOY_CONLLU, 4, 6, "7"), 5, 6, "9")
    with pytest.raises(ConlluFormatError, match=r"toy\.conllu, line 4: HEAD 7 points outside the sentence "
                                                r"starting at line 1 \(4 words\)"):
        read_conllu(write(tmp_path, text))


def test_a_file_cut_short_is_named_as_such_before_its_last_sentence_is_checked(tmp_path: Path) -> None:
    """The last sentence of a file without its final blank line may be cut short: the missing
    blank line is named, not what the cut made of the sentence (here a HEAD beyond it)."""
    text = _break_line(TOY_CONLLU.rstrip("\n"), 10, 6, "3")
    with pytest.raises(ConlluFormatError, match=r"toy\.conllu, line 10: the file ends inside the sentence "
                                                r"starting at line 10, without the blank line"):
        read_conllu(write(tmp_path, text))


# Multiword-token ranges: TOY_CONLLU's first sentence has the range 1-2 at line 3 and its words
# 1-4 at lines 4, 5, 6 and 8 (the empty node 3.1 at line 7); each case below adds a line.
RANGE = "{}\tx\t_\t_\t_\t_\t_\t_\t_\t_"


@pytest.mark.parametrize(("insert_at", "span", "line_no", "reason"), [
    (6, "3-3", 6, "multiword-token range '3-3' spans one word; a multiword token spans two or more "
                  "(a one-word token is a plain word line)"),
    (9, "4-5", 9, "multiword-token range 4-5 comes after its first word 4 (line 8); a range comes before the "
                  "words it spans"),
    (6, "2-3", 6, "multiword-token range 2-3 comes after its first word 2 (line 5); a range comes before the "
                  "words it spans"),
    (6, "4-5", 6, "multiword-token range 4-5 comes before word 3, not right before its first word 4"),
    (4, "1-3", 4, "multiword-token range 1-3 overlaps the range 1-2 at line 3: both contain word 1"),
    (3, "1-3", 4, "multiword-token range 1-2 overlaps the range 1-3 at line 3: both contain word 1"),
    (6, "3-5", 6, "multiword-token range 3-5 ends beyond the sentence starting at line 1 (4 words)"),
    (9, "5-6", 9, "multiword-token range 5-6 ends beyond the sentence starting at line 1 (4 words)"),
], ids=["one-word", "after-its-words", "after-its-first-word", "ahead-of-a-word", "overlapping-the-previous",
        "overlapping-the-next", "beyond-the-sentence", "after-the-last-word"])
def test_misplaced_multiword_token_ranges_are_named_at_their_line(tmp_path: Path, insert_at: int, span: str,
                                                                  line_no: int, reason: str) -> None:
    lines = TOY_CONLLU.split("\n")
    lines.insert(insert_at - 1, RANGE.format(span))
    path = write(tmp_path, "\n".join(lines))
    with pytest.raises(ConlluFormatError) as info:
        read_conllu(path)
    assert info.value.line_no == line_no
    assert str(info.value) == f"{path}, line {line_no}: {reason}: {lines[line_no - 1]!r}"


def test_a_range_right_before_its_first_word_may_still_overlap(tmp_path: Path) -> None:
    """1-2 before word 1, then 2-3 right before word 2: it starts at the next word but overlaps 1-2."""
    lines = TOY_CONLLU.split("\n")
    lines.insert(4, RANGE.format("2-3"))  # line 5: between word 1 (line 4) and word 2 (now line 6)
    path = write(tmp_path, "\n".join(lines))
    with pytest.raises(ConlluFormatError, match=r"line 5: multiword-token range 2-3 overlaps the range 1-2 at "
                                                r"line 3: both contain word 2"):
        read_conllu(path)


def test_comment_block_without_tokens_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, TOY_CONLLU + "# sent_id = orphan\n")
    with pytest.raises(ConlluFormatError, match="line 12: comment block without any token"):
        read_conllu(path)


# Trees (gold HEADs). TOY_CONLLU's first sentence starts at line 1 ('# sent_id = s1'); its words
# 1-4 are at lines 4, 5, 6 and 8 (line 3 is the range 1-2, line 7 the empty node 3.1); the second
# sentence is the one word at line 10.


def _with_heads(heads: dict[int, str]) -> str:
    """TOY_CONLLU with the HEAD of the word at each given line replaced."""
    text = TOY_CONLLU
    for line_no, head in heads.items():
        text = _break_line(text, line_no, 6, head)
    return text


def _tree_error(tmp_path: Path, text: str) -> tuple[Path, ConlluFormatError]:
    path = write(tmp_path, text)
    with pytest.raises(ConlluFormatError) as info:
        read_conllu(path)
    return path, info.value


@pytest.mark.parametrize(("heads", "line_no"), [
    ({5: "2"}, 5),  # n't (word 2) -> itself; the sentence still has its root
    ({10: "1"}, 10),  # the only word of a sentence -> itself (named as such, not as "no root")
])
def test_self_headed_word_names_file_and_line(tmp_path: Path, heads: dict[int, str], line_no: int) -> None:
    path, error = _tree_error(tmp_path, _with_heads(heads))
    bad_line = _with_heads(heads).split("\n")[line_no - 1]
    head = heads[line_no]
    assert error.line_no == line_no
    assert str(error) == (f"{path}, line {line_no}: HEAD {head} is the word's own ID (a word cannot be its "
                          f"own head): {bad_line!r}")


@pytest.mark.parametrize(("heads", "words", "cycle"), [
    # Do (1) -> n't (2) -> Do (1); go (3) is still the root.
    ({4: "2", 5: "1"}, "words 1 (line 4), 2 (line 5)", "1 -> 2 -> 1"),
    # Do (1) is the root; n't (2) -> . (4) -> go (3) -> n't (2), across the empty node at line 7.
    ({4: "0", 5: "4", 6: "2", 8: "3"}, "words 2 (line 5), 4 (line 8), 3 (line 6)", "2 -> 4 -> 3 -> 2"),
])
def test_cycle_names_file_sentence_and_words(tmp_path: Path, heads: dict[int, str], words: str, cycle: str) -> None:
    path, error = _tree_error(tmp_path, _with_heads(heads))
    assert error.line_no == 1
    assert str(error) == (f"{path}, line 1: in the sentence starting here the HEADs of {words} form the "
                          f"cycle {cycle}, which does not reach the root 0: '# sent_id = s1'")


def test_sentence_without_root_names_file_sentence_and_words(tmp_path: Path) -> None:
    """go (3) -> . (4) -> go (3): no word is left with HEAD 0; the cycle that replaces it is named."""
    path, error = _tree_error(tmp_path, _with_heads({6: "4"}))
    assert error.line_no == 1
    assert str(error) == (f"{path}, line 1: the sentence starting here has no root (no word has HEAD 0); "
                          f"the HEADs of words 3 (line 6), 4 (line 8) form the cycle 3 -> 4 -> 3: "
                          f"'# sent_id = s1'")


def test_sentence_with_two_roots_names_file_sentence_and_roots(tmp_path: Path) -> None:
    path, error = _tree_error(tmp_path, _with_heads({8: "0"}))  # . (4) becomes a second root
    assert error.line_no == 1
    assert str(error) == (f"{path}, line 1: the sentence starting here has 2 roots (words with HEAD 0), "
                          f"expected exactly one: words 3 (line 6), 4 (line 8): '# sent_id = s1'")


def test_last_sentence_is_checked_as_a_tree(tmp_path: Path) -> None:
    text = TOY_CONLLU + "# sent_id = s3\n1\ta\t_\tX\t_\t_\t2\tdep\t_\t_\n2\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"
    path, error = _tree_error(tmp_path, text)
    assert str(error) == (f"{path}, line 12: the sentence starting here has no root (no word has HEAD 0); "
                          f"the HEADs of words 1 (line 13), 2 (line 14) form the cycle 1 -> 2 -> 1: "
                          f"'# sent_id = s3'")


def test_undecodable_file_names_file_line_and_absolute_byte_offset(tmp_path: Path) -> None:
    """The bad byte lies far beyond the first chunk the text reader decodes, after multi-byte
    characters, so a chunk-relative or character offset would differ from the byte offset."""
    good = TOY_CONLLU.replace("Hi\thi", "Hé\thé").encode("utf-8") * 400  # 400 x 2 'é' of 2 bytes each
    bad_line = "1\tH\xffi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_".encode("latin-1")
    path = tmp_path / "binary.conllu"
    path.write_bytes(good + bad_line + b"\n\n")
    offset, line_no = len(good) + 3, good.count(b"\n") + 1
    assert offset > 20000 and offset != len(good.decode("utf-8")) + 3
    with pytest.raises(ConlluFormatError) as info:
        read_conllu(path)
    error = info.value
    assert (error.line_no, error.byte_offset) == (line_no, offset)
    shown = bad_line.decode("utf-8", errors="replace")  # the bad byte shown as U+FFFD
    assert str(error) == (f"{path}, line {line_no}: byte 0xff at byte offset {offset} of the file is not valid "
                          f"UTF-8 (invalid start byte): {shown!r}")


def test_gzipped_file_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "toy.conllu"
    path.write_bytes(gzip.compress(TOY_CONLLU.encode("utf-8"), mtime=0))
    with pytest.raises(ConlluFormatError) as info:
        read_conllu(path)
    assert (info.value.line_no, info.value.byte_offset) == (1, 1)
    assert str(info.value).startswith(f"{path}, line 1: byte 0x8b at byte offset 1 of the file is not valid "
                                      f"UTF-8 (invalid start byte); the file starts like gzip data: "
                                      f"decompress it first: ")


@pytest.mark.parametrize("heads", [{4: "2", 5: "1"}, {6: "4"}, {8: "0"}, {5: "2"}],
                         ids=["cycle", "no-root", "two-roots", "self-head"])
def test_predicted_parses_need_not_be_trees(tmp_path: Path, heads: dict[int, str]) -> None:
    """System output is read for scoring by conll18.read_conllu_sentences, not by read_conllu:
    a predicted non-tree (as the seq2seq parser may produce) must still be read as written."""
    path = write(tmp_path, _with_heads(heads), "system.conllu")
    with pytest.raises(ConlluFormatError):
        read_conllu(path)  # the same file as gold input is rejected ...
    first, second = read_conllu_sentences(path)  # ... but as a prediction it is read
    expected = [3, 3, 0, 3]
    for line_no, head in heads.items():
        expected[{4: 0, 5: 1, 6: 2, 8: 3}[line_no]] = int(head)
    assert first.heads == expected and second.heads == [0]


# ------------------------------------------------------------------------------ plain text


def test_read_tokenized_lines_keeps_empty_lines(tmp_path: Path) -> None:
    path = write(tmp_path, " = Title = \n \n the  cat\tsat \n\nlast line", "wiki.tokens")
    assert read_tokenized_lines(path) == [
        ["=", "Title", "="], [], ["the", "cat", "sat"], [], ["last", "line"],
    ]


def test_read_ptb_char(tmp_path: Path) -> None:
    path = write(tmp_path, "a _ c a t \n t h e _ N \n ", "ptb.char.toy.txt")
    assert read_ptb_char(path) == [["a", "_", "c", "a", "t"], ["t", "h", "e", "_", "N"]]


def test_read_ptb_char_rejects_word_level_file(tmp_path: Path) -> None:
    path = write(tmp_path, " a b \n the cat \n", "ptb.toy.txt")
    with pytest.raises(ValueError, match=r"ptb\.toy\.txt, line 2: 'the' is not a single"):
        read_ptb_char(path)


def test_read_parallel(tmp_path: Path) -> None:
    src = write(tmp_path, "a man .\ntwo dogs\n", "toy.en")
    tgt = write(tmp_path, "ein mann .\nzwei hunde\n", "toy.de")
    assert read_parallel(src, tgt) == [
        (["a", "man", "."], ["ein", "mann", "."]),
        (["two", "dogs"], ["zwei", "hunde"]),
    ]


def test_read_parallel_length_mismatch_names_both_files(tmp_path: Path) -> None:
    src = write(tmp_path, "a\nb\nc\n", "toy.en")
    tgt = write(tmp_path, "a\nb\n", "toy.de")
    with pytest.raises(ValueError) as info:
        read_parallel(src, tgt)
    message = str(info.value)
    assert f"{src} has 3 lines" in message and f"{tgt} has 2" in message


# ---------------------------------------------------------------------------- real mirror


def test_ptb_valid_counts(fetched) -> None:
    lines = read_tokenized_lines(fetched("ptb_word", "valid"))
    assert len(lines) == 3370
    assert sum(len(line) for line in lines) == 70390


def test_ptb_char_valid_spells_the_word_file(fetched) -> None:
    words = read_tokenized_lines(fetched("ptb_word", "valid"))
    chars = read_ptb_char(fetched("ptb_char", "valid"))
    assert len(chars) == 3370
    assert all("".join(c).replace("_", " ") == " ".join(w) for c, w in zip(chars, words))


def test_wikitext2_valid_counts(fetched) -> None:
    lines = read_tokenized_lines(fetched("wikitext2", "valid"))
    assert len(lines) == 3760
    # The manifest counts 217,646 tokens with one <eos> per line.
    assert sum(len(line) for line in lines) + len(lines) == 217646


def test_multi30k_val_pairs(fetched) -> None:
    pairs = read_parallel(fetched("multi30k", "val.en"), fetched("multi30k", "val.de"))
    assert len(pairs) == 1014
    assert sum(len(en) for en, _ in pairs) == 13308
    assert sum(len(de) for _, de in pairs) == 12828


@pytest.fixture(scope="module")
def ewt_dev(fetched) -> tuple[Path, list[str], int, list[int]]:
    """UD English EWT v2.3 dev from the mirror: its path, its lines, and the 1000th sentence's
    first line number and the line numbers of its words (1-based)."""
    path = fetched("ud_en_ewt_v2.3", "dev")
    lines = path.read_text(encoding="utf-8").split("\n")
    start = [i for i, line in enumerate(lines, start=1) if line.startswith("# sent_id")][999]
    words = []
    for line_no in range(start, len(lines) + 1):
        if not lines[line_no - 1]:
            break
        if lines[line_no - 1].split("\t")[0].isdigit():
            words.append(line_no)
    return path, lines, start, words


def test_ud_ewt_dev_reads_whole(ewt_dev) -> None:
    path, _, _, words = ewt_dev
    sentences = read_conllu(path)
    assert (len(sentences), sum(len(s) for s in sentences)) == (2002, 25148)
    assert len(sentences[999]) == len(words) == 35


@pytest.mark.parametrize(("word", "column", "value", "reason"), [
    (2, 6, "37", "HEAD 37 points outside the sentence starting at line {start} (35 words)"),
    (3, 0, "4", "word ID 4 breaks the sequence 1, 2, 3, ... of the sentence starting at line {start}: "
                "expected 3"),
    (3, 0, "3-x", "ID '3-x' is not an integer, a range like 3-4 or an empty node like 5.1"),
    (3, 0, "4-3", "multiword-token range '4-3' ends before it starts"),
    (2, 6, "2", "HEAD 2 is the word's own ID (a word cannot be its own head)"),
])
def test_ud_ewt_dev_with_one_bad_line_names_file_and_line(
    ewt_dev, tmp_path: Path, word: int, column: int, value: str, reason: str
) -> None:
    """One line of the 1000th sentence (35 words, at line 17078) of the real file is changed."""
    _, lines, start, words = ewt_dev
    line_no = words[word - 1]
    path = write(tmp_path, _break_line("\n".join(lines), line_no, column, value), "en_ewt-ud-dev.conllu")
    with pytest.raises(ConlluFormatError) as info:
        read_conllu(path)
    assert info.value.line_no == line_no
    assert str(info.value).startswith(f"{path}, line {line_no}: {reason.format(start=start)}: ")


def test_ud_gsd_dev_multiword_tokens_are_skipped(fetched) -> None:
    french = read_conllu(fetched("ud_fr_gsd_v2.3", "dev"))
    assert (len(french), sum(len(s) for s in french)) == (1476, 35720)
    german = read_conllu(fetched("ud_de_gsd_v2.3", "dev"))
    assert (len(german), sum(len(s) for s in german)) == (799, 12486)
