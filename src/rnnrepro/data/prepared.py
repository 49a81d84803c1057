"""Prepared datasets: raw files parsed once per (dataset, version) into a compact file
that every run of a task reads.

A prepared treebank is gzipped JSON::

    {"dataset": "ud_en_ewt_v2.0",
     "splits": {"train": {"form": [[...], ...], "lemma": ..., "upos": ..., "head": ..., "deprel": ...},
                "dev": {...}, "test": {...}}}

A prepared language-modelling corpus (``ptb_word``, ``ptb_char``, ``wikitext2``) holds one
token list per split, each line of the raw file followed by ``<eos>`` (the convention of
Mikolov's RNNLM, Zaremba et al. and pytorch/examples' word_language_model; empty WikiText
lines become a lone ``<eos>``); the raw ``valid`` split is called ``dev``::

    {"dataset": "ptb_word", "splits": {"train": ["aer", "banknote", ..., "<eos>", ...], "dev": [...], "test": [...]}}

Character-level PTB tokens are single characters, ``_`` standing for the space between words.

A prepared parallel corpus (``multi30k``) holds aligned token lists per language and split,
with the raw ``val`` split called ``dev`` and ``test2016`` (test_2016_flickr) called ``test``::

    {"dataset": "multi30k", "splits": {"train": {"en": [[...], ...], "de": [[...], ...]}, "dev": {...}, "test": {...}}}
"""
from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

from ..atomic import atomic_path

TREEBANK_COLUMNS = ("form", "lemma", "upos", "head", "deprel")

#: Bump when a preparer's output changes for the same raw files: it changes every
#: dataset's identity, and with it the runs that read the dataset.
PREPARED_FORMAT = 1


@functools.cache
def dataset_identity(dataset_key: str) -> str:
    """A short content identity of a prepared dataset: its key, the checksums of its raw
    files (from the catalogue) and :data:`PREPARED_FORMAT`.

    The workflow gives it to every job that reads the dataset as a parameter and ignores
    the prepared file's modification time, so files restored by ``dvc pull`` (whose times
    come in no particular order) never look newer than the runs made from them.
    """
    import hashlib

    from .sources import dataset

    files = {split: source.sha256 or source.git_blob for split, source in sorted(dataset(dataset_key).files.items())}
    payload = json.dumps({"dataset": dataset_key, "format": PREPARED_FORMAT, "files": files}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
END_OF_LINE = "<eos>"  # appended to every line of a language-modelling corpus
SPLIT_NAMES = {"train": "train", "valid": "dev", "val": "dev", "test": "test", "test2016": "test"}
# gzip's default level for the text corpora: level 9 takes 12 s on the 5M characters of PTB
# (0.7 s at level 6) for a file 10% smaller
TEXT_COMPRESSLEVEL = 6


def write_json_gz(payload: dict, path: str | Path, compresslevel: int = 9) -> None:
    """Write gzipped JSON atomically (temporary file in the same folder, then rename)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as raw, \
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=compresslevel) as handle:
        handle.write(json.dumps(payload, separators=(",", ":")).encode())


def prepare_dataset(dataset_key: str, raw_dir: str | Path, out_path: str | Path) -> dict[str, int]:
    """Prepare a fetched dataset by its kind; returns the number of items per split."""
    preparers = {"ud_": prepare_treebank, "ptb_": prepare_language_model_corpus,
                 "wikitext": prepare_language_model_corpus, "multi30k": prepare_parallel_corpus}
    for prefix, prepare in preparers.items():
        if dataset_key.startswith(prefix):
            return prepare(dataset_key, raw_dir, out_path)
    raise ValueError(f"no preparation for dataset {dataset_key!r}; prepared kinds: "
                     + ", ".join(f"{prefix}*" for prefix in preparers))


def prepare_treebank(dataset_key: str, raw_dir: str | Path, out_path: str | Path) -> dict[str, int]:
    """Parse a fetched UD treebank (train/dev/test CoNLL-U) into a prepared file.

    Returns the number of sentences per split. Splits the mirror does not have (no file in
    ``raw_dir``) are left out, and a task that needs them fails naming the split.
    """
    from .conllu_reader import read_conllu
    from .sources import dataset

    splits = {}
    for split, source in dataset(dataset_key).files.items():
        path = Path(raw_dir) / source.name
        if split not in ("train", "dev", "test") or not path.exists():
            continue
        sentences = read_conllu(path)
        splits[split] = {
            "form": [s.tokens for s in sentences],
            "lemma": [s.lemmas for s in sentences],
            "upos": [s.upos for s in sentences],
            "head": [s.heads for s in sentences],
            "deprel": [s.deprels for s in sentences],
        }
    write_json_gz({"dataset": dataset_key, "splits": splits}, out_path)
    return {split: len(columns["form"]) for split, columns in splits.items()}


def prepare_language_model_corpus(dataset_key: str, raw_dir: str | Path, out_path: str | Path) -> dict[str, int]:
    """Read a fetched PTB (word or character level) or WikiText corpus into one token list per
    split, ``<eos>`` closing every line. Returns the number of tokens per split (``<eos>`` included)."""
    from .sources import dataset
    from .text_readers import read_ptb_char, read_tokenized_lines

    read = read_ptb_char if dataset_key == "ptb_char" else read_tokenized_lines
    splits = {}
    for split, source in dataset(dataset_key).files.items():
        lines = read(Path(raw_dir) / source.name)
        splits[SPLIT_NAMES[split]] = [token for line in lines for token in (*line, END_OF_LINE)]
    write_json_gz({"dataset": dataset_key, "splits": splits}, out_path, compresslevel=TEXT_COMPRESSLEVEL)
    return {split: len(tokens) for split, tokens in splits.items()}


def prepare_parallel_corpus(dataset_key: str, raw_dir: str | Path, out_path: str | Path) -> dict[str, int]:
    """Read a fetched parallel corpus whose files are keyed ``<split>.<language>`` (Multi30k) into
    aligned token lists per split and language. Returns the number of sentence pairs per split."""
    from .sources import dataset
    from .text_readers import read_tokenized_lines

    splits: dict[str, dict[str, list[list[str]]]] = {}
    for key, source in dataset(dataset_key).files.items():
        split, language = key.rsplit(".", 1)
        splits.setdefault(SPLIT_NAMES[split], {})[language] = read_tokenized_lines(Path(raw_dir) / source.name)
    for split, languages in splits.items():
        sizes = {language: len(lines) for language, lines in languages.items()}
        if len(set(sizes.values())) != 1:
            raise ValueError(f"{dataset_key} {split}: languages differ in number of lines: {sizes}")
    write_json_gz({"dataset": dataset_key, "splits": splits}, out_path, compresslevel=TEXT_COMPRESSLEVEL)
    return {split: len(next(iter(languages.values()))) for split, languages in splits.items()}


def load_prepared(path: str | Path, expect: str | None = None) -> dict:
    """The ``splits`` of a prepared file; ``expect`` checks which dataset it was made from."""
    with gzip.open(path, "rt") as handle:
        payload = json.load(handle)
    if expect is not None and payload.get("dataset") != expect:
        raise ValueError(f"{path} was prepared from {payload.get('dataset')!r}, not {expect!r}")
    return payload["splits"]
