"""UAS and LAS computed as the CoNLL 2018 shared task's evaluation script computes them.

Definitions (Zeman et al. 2018, "CoNLL 2018 Shared Task: Multilingual Parsing from Raw Text
to Universal Dependencies", Sec. 5; the official script ``conll18_ud_eval.py``, v1.2):

- **Words.** Only syntactic words count: CoNLL-U lines whose ID is an integer. A multiword
  token line (ID ``3-4``) contributes nothing but the character span of the words it holds;
  empty nodes (ID ``5.1``) are skipped. Punctuation counts like any other word.
- **Alignment.** The text of a file is the concatenation of its token FORMs with Unicode space
  characters (category Zs: the ASCII space, no-break space U+00A0, thin space U+2009, ...)
  removed; gold and system texts must be identical. Each token is a character span of that
  text. A word outside multiword tokens is aligned with the system word that has the same
  span. Words inside a *multiword span* (the smallest span that holds whole multiword tokens
  of either file) are aligned by the longest common subsequence of their lower-cased FORMs.
- **Spaces inside FORMs.** Some treebanks have FORMs with a space, e.g. French GSD writes
  numbers as ``2 001``. The script removes the Zs characters from the FORM column of every
  token line as it reads it (``"".join(filter(lambda c: unicodedata.category(c) != "Zs",
  ...))``; not ``"".join(form.split())``, which would also remove U+0085 or U+2028), before
  it builds the spans. So ``1 000`` in one file and ``1000`` in the other are the same token
  and align. The stripped FORM is also the FORM that a word outside multiword tokens brings
  to the LCS of a multiword span; the words *of* a multiword token are read from their own lines, which
  are not stripped, so they enter the LCS with their FORMs as written. A system word ``1 000``
  thus matches a gold multiword-token word ``1000``, but not ``1 000``. A multiword token is
  any line with a range ID, even a one-word range like ``3-3``.
- **Attachment.** An aligned gold word w is UAS-correct when the system's head of w is aligned
  with the gold head of w (root counts as a head); it is LAS-correct when moreover the
  universal part of its DEPREL, the part before ``:``, is the same: ``nmod:poss`` and ``nmod``
  match, ``nmod`` and ``obl`` do not.
- **Scores.** With C correct words, G gold words and S system words: precision = C/S,
  recall = C/G and F1 = 2C/(G + S). The shared task reports F1, and so do
  :attr:`AttachmentScores.uas` and :attr:`AttachmentScores.las`. When both sides have the
  same words (a system that parses gold tokenisation, as all our tasks do) the three are equal
  to C/G, the attachment accuracy over all words.

One deliberate difference: the script refuses a system file whose sentences are not trees
(a cycle, no root or several roots, a HEAD outside the sentence). Here such output is scored
word by word, and a head that could not be decoded (``None``, or a position outside the
sentence) is simply wrong. Only ``dp_seq2seq`` produces such output: the elstm paper reads
heads off a sequence-to-sequence model's output, token by token, and scores them so. The
biaffine parser (``dp_biaffine``) decodes a tree for every sentence (maximum spanning tree,
:mod:`rnnrepro.metrics.trees`), so its files are accepted by the script, and the script's UAS
and LAS on them equal these (tests/test_parsing.py checks this with the official v1.2 script
as ``stanza==1.0.1`` ships it). :func:`write_conllu` writes an undecoded head as the word's own
position (a self-loop, never gold), so scores survive a round trip through files.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import atomic_path

__all__ = ["AttachmentScores", "ParsedSentence", "attachment_scores", "evaluate_files",
           "read_conllu_sentences", "universal_relation", "write_conllu"]


@dataclass
class ParsedSentence:
    """The syntactic words of one sentence, gold or predicted.

    ``heads`` are 1-based word positions, 0 for the root, None where a system has no usable
    head; ``deprels`` may hold None where a system has no relation. ``multiword_tokens``
    lists (first word, last word, surface FORM) of each multiword token, 1-based inclusive.
    ``lemmas`` and ``upos`` are only written to files.
    """

    forms: list[str]
    heads: list[int | None]
    deprels: list[str | None]
    lemmas: list[str] | None = None
    upos: list[str] | None = None
    multiword_tokens: list[tuple[int, int, str]] = field(default_factory=list)

    def __post_init__(self):
        if not len(self.forms) == len(self.heads) == len(self.deprels):
            raise ValueError(f"a sentence needs one head and one relation per word: {len(self.forms)} forms, "
                             f"{len(self.heads)} heads, {len(self.deprels)} relations")


@dataclass(frozen=True)
class AttachmentScores:
    """Word counts and correct attachments; ``uas`` and ``las`` are the shared task's F1 scores."""

    gold_words: int
    system_words: int
    aligned_words: int
    uas_correct: int
    las_correct: int

    def _f1(self, correct: int) -> float:
        total = self.gold_words + self.system_words
        return 2 * correct / total if total else 0.0

    @property
    def uas(self) -> float:
        return self._f1(self.uas_correct)

    @property
    def las(self) -> float:
        return self._f1(self.las_correct)


def universal_relation(deprel: str | None) -> str | None:
    """The universal part of a DEPREL: ``nmod:poss`` -> ``nmod``."""
    return None if deprel is None else deprel.split(":")[0]


# -- words as the script sees them ---------------------------------------------------------------
_ROOT = None
_UNUSABLE = -1  # a system head that was not decoded or points outside its sentence
_NOT_ALIGNED = -2  # a system head word with no gold counterpart


@dataclass(eq=False)
class _Word:
    start: int  # character span of the word's token (the whole token for multiword tokens)
    end: int
    form: str  # as the script compares it in the LCS: Zs removed unless is_multiword
    is_multiword: bool
    head: int | None  # index of the head word in the file's word list, _ROOT or _UNUSABLE
    relation: str | None  # universal part of DEPREL


def _without_spaces(form: str) -> str:
    """``form`` without Unicode space characters (category Zs), as the script reads a FORM."""
    return "".join(c for c in form if unicodedata.category(c) != "Zs")


def _words_and_text(sentences: Sequence[ParsedSentence], side: str) -> tuple[list[_Word], str]:
    """All words of a file with their character spans, and the file's text (the spans' reference).

    ``side`` is "gold" or "system": only a system may have unusable heads. As in the script,
    a token's span is measured on its FORM without Zs characters, and a word outside multiword
    tokens keeps that stripped FORM for the LCS, while the words of a multiword token keep
    their FORMs as written (see the module docstring).
    """
    words: list[_Word] = []
    text: list[str] = []
    position = 0
    for sentence in sentences:
        first_word = len(words)
        n = len(sentence.forms)
        multiword = {first: (last, form) for first, last, form in sentence.multiword_tokens}
        word_id = 1
        while word_id <= n:
            is_multiword = word_id in multiword
            last, token_form = multiword.get(word_id, (word_id, sentence.forms[word_id - 1]))
            if not word_id <= last <= n:  # a range like 3-2 would otherwise loop for ever
                raise ValueError(f"multiword token {word_id}-{last} {token_form!r} does not fit a sentence "
                                 f"of {n} words")
            token_form = _without_spaces(token_form)
            if not token_form:
                raise ValueError(f"empty FORM in a sentence starting with {sentence.forms[:5]}")
            start, position = position, position + len(token_form)
            text.append(token_form)
            for k in range(word_id, last + 1):
                head = sentence.heads[k - 1]
                if head is None or not 0 <= head <= n:
                    if side == "gold":
                        raise ValueError(f"gold HEAD {head!r} of word {k} is not a position in its sentence "
                                         f"{sentence.forms}")
                    head_index = _UNUSABLE
                else:
                    head_index = _ROOT if head == 0 else first_word + head - 1
                form = sentence.forms[k - 1] if is_multiword else token_form
                words.append(_Word(start, position, form, is_multiword, head_index,
                                   universal_relation(sentence.deprels[k - 1])))
            word_id = last + 1
    return words, "".join(text)


# -- alignment (the script's align_words) ----------------------------------------------------------
def _beyond_end(words: list[_Word], i: int, span_end: int) -> bool:
    if i >= len(words):
        return True
    if words[i].is_multiword:
        return words[i].start >= span_end
    return words[i].end > span_end


def _extend_end(word: _Word, span_end: int) -> int:
    return max(span_end, word.end) if word.is_multiword else span_end


def _multiword_span(gold: list[_Word], system: list[_Word], gi: int, si: int) -> tuple[int, int, int, int]:
    """The smallest span from (gi, si) that holds whole multiword tokens: (gold start, system
    start, gold end, system end) word indices, ends exclusive."""
    if gold[gi].is_multiword:
        span_end = gold[gi].end
        if not system[si].is_multiword and system[si].start < gold[gi].start:
            si += 1
    else:
        span_end = system[si].end
        if not gold[gi].is_multiword and gold[gi].start < system[si].start:
            gi += 1
    gs, ss = gi, si
    while not _beyond_end(gold, gi, span_end) or not _beyond_end(system, si, span_end):
        if gi < len(gold) and (si >= len(system) or gold[gi].start <= system[si].start):
            span_end = _extend_end(gold[gi], span_end)
            gi += 1
        else:
            span_end = _extend_end(system[si], span_end)
            si += 1
    return gs, ss, gi, si


def _lcs_pairs(gold: list[_Word], system: list[_Word]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of lower-cased forms (the script's walk)."""
    g_n, s_n = len(gold), len(system)
    lcs = [[0] * (s_n + 1) for _ in range(g_n + 1)]
    for g in reversed(range(g_n)):
        for s in reversed(range(s_n)):
            same = gold[g].form.lower() == system[s].form.lower()
            lcs[g][s] = max(lcs[g + 1][s + 1] + 1 if same else 0, lcs[g + 1][s], lcs[g][s + 1])
    pairs, g, s = [], 0, 0
    while g < g_n and s < s_n:
        if gold[g].form.lower() == system[s].form.lower():
            pairs.append((g, s))
            g, s = g + 1, s + 1
        elif lcs[g][s] == lcs[g + 1][s]:
            g += 1
        else:
            s += 1
    return pairs


def _align(gold: list[_Word], system: list[_Word]) -> list[tuple[int, int]]:
    """(gold index, system index) of every aligned word pair."""
    pairs: list[tuple[int, int]] = []
    gi = si = 0
    while gi < len(gold) and si < len(system):
        if gold[gi].is_multiword or system[si].is_multiword:
            gs, ss, gi, si = _multiword_span(gold, system, gi, si)
            pairs += [(gs + g, ss + s) for g, s in _lcs_pairs(gold[gs:gi], system[ss:si])]
        elif (gold[gi].start, gold[gi].end) == (system[si].start, system[si].end):
            pairs.append((gi, si))
            gi, si = gi + 1, si + 1
        elif gold[gi].start <= system[si].start:
            gi += 1
        else:
            si += 1
    return pairs


# -- scores ---------------------------------------------------------------------------------------
def attachment_scores(gold: Sequence[ParsedSentence], system: Sequence[ParsedSentence]) -> AttachmentScores:
    """UAS and LAS of ``system`` against ``gold`` (sentences in file order)."""
    gold_words, gold_text = _words_and_text(gold, "gold")
    system_words, system_text = _words_and_text(system, "system")
    if gold_text != system_text:
        at = next((i for i, (a, b) in enumerate(zip(gold_text, system_text)) if a != b),
                  min(len(gold_text), len(system_text)))
        raise ValueError("the concatenation of tokens in gold and system differ: first 20 differing characters "
                         f"gold {gold_text[at:at + 20]!r}, system {system_text[at:at + 20]!r}")
    pairs = _align(gold_words, system_words)
    gold_of_system = {s: g for g, s in pairs}
    uas = las = 0
    for g, s in pairs:
        gold_word, system_word = gold_words[g], system_words[s]
        if system_word.head is _ROOT or system_word.head == _UNUSABLE:
            system_head = system_word.head
        else:
            system_head = gold_of_system.get(system_word.head, _NOT_ALIGNED)
        if system_head == gold_word.head:
            uas += 1
            las += system_word.relation == gold_word.relation
    return AttachmentScores(len(gold_words), len(system_words), len(pairs), uas, las)


def evaluate_files(gold_path: str | Path, system_path: str | Path) -> AttachmentScores:
    """UAS and LAS of a system CoNLL-U file against a gold one."""
    return attachment_scores(read_conllu_sentences(gold_path), read_conllu_sentences(system_path))


# -- files ----------------------------------------------------------------------------------------
def read_conllu_sentences(path: str | Path) -> list[ParsedSentence]:
    """Read a CoNLL-U file as the script does: comments skipped, empty nodes skipped,
    multiword tokens kept as (first, last, FORM); a malformed line raises ValueError naming it.

    FORMs are kept as written (with any spaces); :func:`attachment_scores` removes spaces where
    the script does. A multiword-token ID must be a range that starts at the next word and does
    not end before it starts or beyond the sentence."""
    sentences: list[ParsedSentence] = []
    current: ParsedSentence | None = None

    def close(line_no: int) -> None:
        nonlocal current
        if current is not None:
            n = len(current.forms)
            bad = [h for h in current.heads if not 0 <= h <= n]
            if bad:
                raise ValueError(f"{path}: sentence ending at line {line_no}: HEAD {bad[0]} points outside "
                                 f"the sentence of {n} words")
            beyond = [(first, last) for first, last, _ in current.multiword_tokens if last > n]
            if beyond:
                raise ValueError(f"{path}: sentence ending at line {line_no}: multiword token "
                                 f"{beyond[0][0]}-{beyond[0][1]} ends beyond the sentence of {n} words")
            sentences.append(current)
        current = None

    with open(path, encoding="utf-8") as handle:
        line_no = 0
        for line_no, raw in enumerate(handle, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip():
                close(line_no)
                continue
            if line.startswith("#"):
                continue
            columns = line.split("\t")
            if len(columns) != 10:
                raise ValueError(f"{path}, line {line_no}: expected 10 tab-separated columns: {line!r}")
            if current is None:
                current = ParsedSentence([], [], [], [], [])
            word_id, form, lemma, upos, head, deprel = (columns[i] for i in (0, 1, 2, 3, 6, 7))
            if "." in word_id:
                continue
            if "-" in word_id:
                first, _, last = word_id.partition("-")
                expected = len(current.forms) + 1
                if not (first.isdigit() and last.isdigit() and int(first) == expected <= int(last)):
                    raise ValueError(f"{path}, line {line_no}: multiword-token ID {word_id!r}, expected a range "
                                     f"{expected}-N with N >= {expected}")
                current.multiword_tokens.append((int(first), int(last), form))
                continue
            if not word_id.isdigit() or int(word_id) != len(current.forms) + 1:
                raise ValueError(f"{path}, line {line_no}: word ID {word_id!r}, expected {len(current.forms) + 1}")
            if not head.isdigit():
                raise ValueError(f"{path}, line {line_no}: HEAD {head!r} is not a non-negative integer")
            current.forms.append(form)
            current.lemmas.append(lemma)
            current.upos.append(upos)
            current.heads.append(int(head))
            current.deprels.append(deprel)
        close(line_no + 1)
    return sentences


def conllu_lines(sentence: ParsedSentence) -> list[str]:
    """The CoNLL-U lines of one sentence (without the blank line that ends it)."""
    lines = []
    multiword = {first: (last, form) for first, last, form in sentence.multiword_tokens}
    for k, form in enumerate(sentence.forms, start=1):
        if k in multiword:
            last, surface = multiword[k]
            lines.append(f"{k}-{last}\t{surface}\t_\t_\t_\t_\t_\t_\t_\t_")
        head = sentence.heads[k - 1]
        if head is None or not 0 <= head <= len(sentence.forms):
            head = k  # a self-loop: no gold tree has one, so it counts as wrong, like None
        deprel = sentence.deprels[k - 1] or "_"
        lemma = sentence.lemmas[k - 1] if sentence.lemmas else "_"
        upos = sentence.upos[k - 1] if sentence.upos else "_"
        lines.append(f"{k}\t{form}\t{lemma}\t{upos}\t_\t_\t{head}\t{deprel}\t_\t_")
    return lines


def write_conllu(path: str | Path, sentences: Sequence[ParsedSentence]) -> None:
    """Write sentences (e.g. a system's predictions) as a CoNLL-U file, atomically."""
    text = "".join("\n".join(conllu_lines(s)) + "\n\n" for s in sentences)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
