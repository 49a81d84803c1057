"""Read CoNLL-U treebanks into small :class:`Sentence` records.

Parsing is done by the ``conllu`` package (``parse_incr`` on the open file). That package
reports no line numbers, so every line is checked here while it is read: a malformed line
raises :class:`ConlluFormatError` naming the file, the 1-based line number and the line.

Besides each line's own form (ten columns, a valid ID, an integer HEAD), two facts about the
whole sentence are checked, as the CoNLL 2018 evaluation script also checks them: the word IDs
run 1, 2, 3, ... without a gap or repetition, and no HEAD is larger than the number of words
of its sentence. A HEAD beyond the sentence is named by its own line once the sentence has
ended (only then is the number of words known).

The HEADs of the words must also form a tree, as every gold treebank's do: no word is its own
HEAD (named at its line), exactly one word has HEAD 0 (the root), and following HEADs from any
word reaches 0 (no cycle). A missing root, several roots or a cycle is named at the sentence's
first line, with the IDs and line numbers of the words involved. Only words (integer IDs) take
part; multiword-token ranges and empty nodes do not. A HEAD of ``_`` on a word is rejected as
before, by the line check. This reader is for gold files only: system output, whose HEADs need
not form a tree (e.g. the elstm study's seq2seq parser), is read for scoring by
:func:`rnnrepro.metrics.conll18.read_conllu_sentences`, which does not check trees.

A file that is not valid UTF-8 (binary, compressed or in another encoding) raises
:class:`ConlluFormatError` naming the file, the line and the absolute byte offset of the first
undecodable byte.

Only syntactic words enter a :class:`Sentence`: multiword-token lines (IDs like ``3-4``)
and empty nodes of enhanced dependencies (IDs like ``5.1``) are skipped. A multiword-token
range is still checked as the CoNLL-U format defines it (and UD's validator checks it): it
spans two words or more (``3-3`` is rejected: a one-word token is a plain word line), its line
comes before its first word with no word between (a range after its first word, or ahead of
a word before it, is named at its line), it does not overlap the sentence's previous range
(named at its line, with the other's), and it ends within its sentence (named at its line once
the sentence has ended).

The file as a whole: every sentence ends with a blank line, the last one included, as the
CoNLL-U format requires; UD's validator (``missing-empty-line``) and the CoNLL 2018 evaluation
script ("The CoNLL-U file does not end with empty line") reject a file without it, and so does
this reader, naming the file's last line (a file cut short by a crash or a full disk ends this
way). A file without any sentence (an empty treebank) is rejected at line 1.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TextIO

import conllu
from conllu.exceptions import ParseException

__all__ = ["Sentence", "ConlluFormatError", "read_conllu"]

N_COLUMNS = 10
_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_EMPTY_ID = re.compile(r"(?:0|[1-9][0-9]*)\.[1-9][0-9]*")
_HEAD = re.compile(r"0|[1-9][0-9]*")


def _raw(columns: list[str], index: int) -> str:
    """Keep a column as its raw string (FEATS, DEPS and MISC are not needed; this is faster)."""
    return columns[index]


def _id_or_raw(columns: list[str], index: int) -> int | str:
    """ID or HEAD as an int; ranges, decimals and '_' stay strings (lines are pre-validated)."""
    value = columns[index]
    return int(value) if value.isdigit() else value


# The lines were validated before conllu sees them, so its (slower) checking parsers for
# ID and HEAD are replaced by plain int conversion, and FEATS/DEPS/MISC are kept raw.
_FIELD_PARSERS = {"id": _id_or_raw, "head": _id_or_raw, "feats": _raw, "deps": _raw, "misc": _raw}


@dataclass
class Sentence:
    """The syntactic words of one sentence, column by column (all lists have equal length)."""

    tokens: list[str] = field(default_factory=list)
    lemmas: list[str] = field(default_factory=list)
    upos: list[str] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    deprels: list[str] = field(default_factory=list)
    sent_id: str | None = None

    def __len__(self) -> int:
        """Number of syntactic words."""
        return len(self.tokens)


class ConlluFormatError(ValueError):
    """A line of a CoNLL-U file that is not valid; the message names file, line and reason.

    ``byte_offset`` is set (0-based, from the start of the file) when the file is not valid
    UTF-8, and is None otherwise.
    """

    def __init__(self, path: str | os.PathLike[str], line_no: int, line: str, reason: str,
                 byte_offset: int | None = None) -> None:
        self.path = str(path)
        self.line_no = line_no
        self.line = line
        self.reason = reason
        self.byte_offset = byte_offset
        super().__init__(f"{self.path}, line {line_no}: {reason}: {line!r}")


def _check_token_line(line: str, columns: list[str]) -> str | None:
    """Return why a token line (split into ``columns`` at tabs) is malformed, or None.

    Only the line itself is checked here; the order of IDs and the range of HEAD within the
    sentence are checked by :class:`_CheckedLines`.
    """
    if len(columns) != N_COLUMNS:
        return f"expected {N_COLUMNS} tab-separated columns, found {len(columns)}"
    if "  " in line:
        # The conllu package also splits columns at runs of two spaces.
        return "contains two consecutive spaces, which the conllu parser takes for a column break"
    token_id, head = columns[0], columns[6]
    if _WORD_ID.fullmatch(token_id):
        if not _HEAD.fullmatch(head):
            return f"HEAD {head!r} is not a non-negative integer"
        return None
    span = _RANGE_ID.fullmatch(token_id)
    if span:
        if int(span.group(2)) < int(span.group(1)):
            return f"multiword-token range {token_id!r} ends before it starts"
        if int(span.group(2)) == int(span.group(1)):
            return (f"multiword-token range {token_id!r} spans one word; a multiword token spans two or more "
                    f"(a one-word token is a plain word line)")
        return None
    if _EMPTY_ID.fullmatch(token_id):
        return None
    return f"ID {token_id!r} is not an integer, a range like 3-4 or an empty node like 5.1"


@dataclass(frozen=True)
class _Range:
    """A multiword-token line: its range start-end and where it is."""

    start: int
    end: int
    line_no: int
    line: str

    @property
    def id(self) -> str:
        return f"{self.start}-{self.end}"


class _CheckedLines:
    """A line iterator over an open CoNLL-U file that validates lines as they pass.

    ``conllu.parse_incr`` only iterates over its input; it merely checks that a ``read``
    attribute exists. ``block_start`` is the line number where the sentence currently
    being read began, so that errors the conllu package raises can still be located.
    """

    def __init__(self, handle: TextIO, path: str) -> None:
        self._handle = handle
        self._path = path
        self.block_start = 0
        self.block_first_line = ""

    def read(self, *_args: object) -> str:
        """Not supported: the parser must consume the file line by line."""
        raise io.UnsupportedOperation("_CheckedLines is read line by line only")

    def __iter__(self) -> Iterator[str]:
        """Yield the file's lines, raising ConlluFormatError at the first malformed one.

        Per sentence it counts the words (lines with an integer ID) and remembers the largest
        HEAD; a word ID other than the next number, a word that is its own HEAD, or a
        multiword-token range that is misplaced or overlaps the previous one is reported at its
        line, a HEAD or a range end above the number of words when the sentence ends (blank
        line), at its line, and then the HEADs are checked to form a tree. A file that ends
        inside a sentence (no blank line after its last token line) is reported at its last line.
        """
        in_block = False
        n_words = max_head = 0
        line_no, text = 0, ""
        last_range: _Range | None = None  # the sentence's latest multiword-token range
        block: list[str] = []  # the current sentence's lines; block[i] is line block_start + i
        heads: list[int] = []  # heads[i] is the HEAD of word i + 1 ...
        word_lines: list[int] = []  # ... and word_lines[i] its line number
        for line_no, line in enumerate(self._handle, start=1):
            text = line.rstrip("\r\n")
            if not text.strip():
                if in_block:
                    self._end_sentence(block, n_words, max_head, heads, word_lines, last_range)
                in_block = False
                n_words = max_head = 0
                last_range = None
                yield line
                continue
            if not in_block:
                in_block = True
                self.block_start, self.block_first_line = line_no, text
                block, heads, word_lines = [], [], []
            block.append(text)
            if not text.startswith("#"):
                columns = text.split("\t")
                reason = _check_token_line(text, columns)
                if reason is not None:
                    raise ConlluFormatError(self._path, line_no, text, reason)
                token_id = columns[0]
                if token_id.isdigit():  # a syntactic word (the ID was validated above)
                    n_words += 1
                    if int(token_id) != n_words:
                        raise ConlluFormatError(
                            self._path, line_no, text,
                            f"word ID {token_id} breaks the sequence 1, 2, 3, ... of the sentence "
                            f"starting at line {self.block_start}: expected {n_words}",
                        )
                    head = int(columns[6])
                    if head == n_words:
                        raise ConlluFormatError(
                            self._path, line_no, text,
                            f"HEAD {head} is the word's own ID (a word cannot be its own head)",
                        )
                    if head > max_head:
                        max_head = head
                    heads.append(head)
                    word_lines.append(line_no)
                elif "-" in token_id:  # a multiword-token range (validated above)
                    start, end = map(int, token_id.split("-"))
                    this_range = _Range(start, end, line_no, text)
                    self._check_range(this_range, n_words, word_lines, last_range)
                    last_range = this_range
            yield line
        if in_block and any(not entry.startswith("#") for entry in block):
            raise ConlluFormatError(
                self._path, line_no, text,
                f"the file ends inside the sentence starting at line {self.block_start}, without the blank "
                f"line that ends every sentence, the last one included (a file cut short?)",
            )

    def _check_range(self, span: _Range, n_words: int, word_lines: list[int], previous: _Range | None) -> None:
        """A multiword-token range seen after ``n_words`` words of its sentence must come right
        before its first word and must not overlap the ``previous`` range of the sentence."""
        if span.start <= n_words:
            raise ConlluFormatError(
                self._path, span.line_no, span.line,
                f"multiword-token range {span.id} comes after its first word {span.start} (line "
                f"{word_lines[span.start - 1]}); a range comes before the words it spans",
            )
        if span.start > n_words + 1:
            raise ConlluFormatError(
                self._path, span.line_no, span.line,
                f"multiword-token range {span.id} comes before word {n_words + 1}, not right before its "
                f"first word {span.start}",
            )
        if previous is not None and previous.end >= span.start:
            raise ConlluFormatError(
                self._path, span.line_no, span.line,
                f"multiword-token range {span.id} overlaps the range {previous.id} at line {previous.line_no}: "
                f"both contain word {span.start}",
            )

    def _end_sentence(self, block: list[str], n_words: int, max_head: int,
                      heads: list[int], word_lines: list[int], last_range: _Range | None) -> None:
        """Check a finished sentence: its last multiword-token range ends within it (ranges come
        in order, so only the last can end beyond it), and its HEADs: none beyond it, one root,
        no cycle."""
        if last_range is not None and last_range.end > n_words:
            raise ConlluFormatError(
                self._path, last_range.line_no, last_range.line,
                f"multiword-token range {last_range.id} ends beyond the sentence starting at line "
                f"{self.block_start} ({n_words} word{'' if n_words == 1 else 's'})",
            )
        if max_head > n_words:
            self._head_beyond_sentence(block, n_words)
        if not n_words:
            return  # only multiword tokens or empty nodes: there is no tree to check
        roots = [word for word, head in enumerate(heads, start=1) if head == 0]
        if len(roots) != 1:
            if roots:
                reason = (f"the sentence starting here has {len(roots)} roots (words with HEAD 0), "
                          f"expected exactly one: {_words_and_lines(roots, word_lines)}")
            else:
                cycle = _find_cycle(heads)
                assert cycle is not None, "a sentence without a root must have a cycle"
                reason = (f"the sentence starting here has no root (no word has HEAD 0); the HEADs "
                          f"of {_words_and_lines(cycle, word_lines)} form the cycle {_arrows(cycle)}")
            raise ConlluFormatError(self._path, self.block_start, self.block_first_line, reason)
        cycle = _find_cycle(heads)
        if cycle is not None:
            raise ConlluFormatError(
                self._path, self.block_start, self.block_first_line,
                f"in the sentence starting here the HEADs of {_words_and_lines(cycle, word_lines)} "
                f"form the cycle {_arrows(cycle)}, which does not reach the root 0",
            )

    def _head_beyond_sentence(self, block: list[str], n_words: int) -> None:
        """Raise ConlluFormatError at the first word line whose HEAD exceeds ``n_words``."""
        for offset, text in enumerate(block):
            columns = text.split("\t")
            if not text.startswith("#") and columns[0].isdigit() and int(columns[6]) > n_words:
                raise ConlluFormatError(
                    self._path, self.block_start + offset, text,
                    f"HEAD {columns[6]} points outside the sentence starting at line "
                    f"{self.block_start} ({n_words} word{'' if n_words == 1 else 's'})",
                )
        raise AssertionError("a HEAD above the number of words was seen but not found again")


def _find_cycle(heads: list[int]) -> list[int] | None:
    """The first cycle of word IDs found following ``heads`` (``heads[i]`` is the HEAD of word
    ``i + 1``, each in 0..len(heads)), starting at its smallest ID; None if every word reaches 0."""
    state = [0] * (len(heads) + 1)  # 0 not seen, 1 on the current path, 2 known to reach 0
    for start in range(1, len(heads) + 1):
        path = []
        word = start
        while word != 0 and state[word] == 0:
            state[word] = 1
            path.append(word)
            word = heads[word - 1]
        if word != 0 and state[word] == 1:
            cycle = path[path.index(word):]
            first = cycle.index(min(cycle))
            return cycle[first:] + cycle[:first]
        for word in path:
            state[word] = 2
    return None


def _words_and_lines(words: list[int], word_lines: list[int]) -> str:
    """'words 1 (line 3), 2 (line 4)' for word IDs and the line number of each word."""
    return "words " + ", ".join(f"{word} (line {word_lines[word - 1]})" for word in words)


def _arrows(cycle: list[int]) -> str:
    """'1 -> 2 -> 1': each word followed by its HEAD, back to the first."""
    return " -> ".join(str(word) for word in (*cycle, cycle[0]))


def _undecodable(path: str, error: UnicodeDecodeError) -> ConlluFormatError:
    """The ConlluFormatError for a file that is not valid UTF-8, naming the first bad byte.

    ``error`` (raised while the file was read as text) locates the byte only within the chunk
    that was being decoded, so the file is read again as bytes, line by line (a newline byte is
    never part of a multi-byte UTF-8 character), to find the line and absolute byte offset.
    """
    offset = 0
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as found:
                position = offset + found.start
                bad = found.object[found.start:found.end]
                reason = (f"byte{'s' if len(bad) > 1 else ''} 0x{bad.hex()} at byte offset {position} "
                          f"of the file {'are' if len(bad) > 1 else 'is'} not valid UTF-8 ({found.reason})")
                if line_no == 1 and raw.startswith(b"\x1f\x8b"):
                    reason += "; the file starts like gzip data: decompress it first"
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if len(text) > 80:
                    text = text[:80] + "..."
                return ConlluFormatError(path, line_no, text, reason, byte_offset=position)
            offset += len(raw)
    raise AssertionError(f"{path} raised {error!r} when read as text but decodes as UTF-8")


def _to_sentence(tokenlist: conllu.TokenList) -> Sentence:
    """Keep the syntactic words (integer IDs) of a parsed sentence."""
    sentence = Sentence(sent_id=tokenlist.metadata.get("sent_id"))
    for token in tokenlist:
        if not isinstance(token["id"], int):
            continue
        sentence.tokens.append(token["form"])
        sentence.lemmas.append(token["lemma"])
        sentence.upos.append(token["upos"])
        sentence.heads.append(token["head"])
        sentence.deprels.append(token["deprel"])
    return sentence


def read_conllu(path: str | os.PathLike[str]) -> list[Sentence]:
    """Read every sentence of a CoNLL-U file.

    Raises:
        ConlluFormatError: a line has the wrong number of columns, a bad ID (not an integer,
            a range like ``3-4`` or an empty node like ``5.1``; a range that ends before it
            starts or spans one word), a word ID that breaks the sequence 1, 2, 3, ... of its
            sentence, or a HEAD that is not a non-negative integer (``_`` included) or exceeds
            the number of words of its sentence; a multiword-token range after its first word,
            ahead of a word before it, overlapping the previous range, or ending beyond its
            sentence; a word is its own HEAD; a sentence has no root or
            several roots (words with HEAD 0), or its HEADs form a cycle (then the sentence's
            first line and the words involved are named); the conllu package rejects a
            sentence (then the sentence's first line is named); a comment block has no token
            lines; the file ends without a blank line after its last sentence (then its last
            line is named) or holds no sentence at all; or the file is not valid UTF-8 (then the line and the byte offset of the
            first undecodable byte are named, also as ``byte_offset``).

    The tree checks make this a reader of gold treebanks; predicted parses, which need not be
    trees, are read by :func:`rnnrepro.metrics.conll18.read_conllu_sentences`.
    """
    name = os.fspath(path)
    sentences = []
    with open(path, encoding="utf-8") as handle:
        lines = _CheckedLines(handle, name)
        try:
            for tokenlist in conllu.parse_incr(lines, field_parsers=_FIELD_PARSERS):
                if not tokenlist:
                    raise ConlluFormatError(
                        name, lines.block_start, lines.block_first_line,
                        "comment block without any token lines",
                    )
                sentences.append(_to_sentence(tokenlist))
            if not sentences:
                raise ConlluFormatError(name, 1, "", "the file holds no sentence (an empty treebank)")
        except ParseException as error:
            raise ConlluFormatError(
                name, lines.block_start, lines.block_first_line,
                f"the sentence starting here does not parse ({error})",
            ) from error
        except UnicodeDecodeError as error:
            raise _undecodable(name, error) from error
    return sentences
