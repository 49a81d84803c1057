"""Readers for the plain-text corpora: PTB (word and character level), WikiText, Multi30k.

A *line* is text terminated by ``\\n``. A final fragment without ``\\n`` counts as a line
only when it holds a non-space character: Mikolov's character-level PTB files end in
``"\\n "``, and that dangling space is not a line (so line counts agree with ``wc -l``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

__all__ = ["read_tokenized_lines", "read_ptb_char", "read_parallel", "WORD_SEPARATOR"]

#: The token that stands for a space between words in the character-level PTB files.
WORD_SEPARATOR = "_"

PathLike = str | os.PathLike[str]


def _lines(path: PathLike) -> Iterator[str]:
    """Yield the lines of a UTF-8 text file without their ``\\n`` (see the module docstring)."""
    with open(path, encoding="utf-8", newline="\n") as handle:
        for line in handle:
            if line.endswith("\n"):
                yield line[:-1]
            elif line.strip():
                yield line


def read_tokenized_lines(path: PathLike) -> list[list[str]]:
    """Split every line of a tokenized corpus at whitespace (as ``str.split()`` does).

    Empty lines are kept as empty lists, so that callers decide what they mean (WikiText
    has many; PTB none). No end-of-sentence token is added.
    """
    return [line.split() for line in _lines(path)]


def read_ptb_char(path: PathLike) -> list[list[str]]:
    """Read a character-level PTB file (Mikolov's ``ptb.char.*.txt``) as characters per line.

    Characters are separated by single spaces and :data:`WORD_SEPARATOR` (``'_'``) marks
    the boundary between words; it is returned like any other character.

    Raises:
        ValueError: a token is longer than one character (e.g. a word-level file was
            given); the message names the file and the 1-based line number.
    """
    result = []
    for line_no, line in enumerate(_lines(path), start=1):
        chars = line.split()
        long_tokens = [token for token in chars if len(token) != 1]
        if long_tokens:
            raise ValueError(
                f"{os.fspath(path)}, line {line_no}: {long_tokens[0]!r} is not a single "
                "character; is this a character-level PTB file?"
            )
        result.append(chars)
    return result


def read_parallel(src_path: PathLike, tgt_path: PathLike) -> list[tuple[list[str], list[str]]]:
    """Read a sentence-aligned pair of tokenized files into (source, target) token lists.

    Raises:
        ValueError: the files have different numbers of lines (both files are named).
    """
    source = read_tokenized_lines(src_path)
    target = read_tokenized_lines(tgt_path)
    if len(source) != len(target):
        raise ValueError(
            f"parallel files differ in length: {os.fspath(src_path)} has {len(source)} lines, "
            f"{os.fspath(tgt_path)} has {len(target)}"
        )
    return list(zip(source, target))
