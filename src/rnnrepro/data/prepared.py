"""Prepared datasets: raw files parsed once per (dataset, version) into a compact file
that every run of a task reads.

A prepared treebank is gzipped JSON::

    {"dataset": "ud_en_ewt_v2.0",
     "splits": {"train": {"form": [[...], ...], "lemma": ..., "upos": ..., "head": ..., "deprel": ...},
                "dev": {...}, "test": {...}}}
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from ..atomic import atomic_path

TREEBANK_COLUMNS = ("form", "lemma", "upos", "head", "deprel")


def write_json_gz(payload: dict, path: str | Path) -> None:
    """Write gzipped JSON atomically (temporary file in the same folder, then rename)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
        handle.write(json.dumps(payload, separators=(",", ":")).encode())


def prepare_dataset(dataset_key: str, raw_dir: str | Path, out_path: str | Path) -> dict[str, int]:
    """Prepare a fetched dataset by its kind; returns the number of items per split."""
    preparers = {"ud_": prepare_treebank}
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


def load_prepared(path: str | Path, expect: str | None = None) -> dict:
    """The ``splits`` of a prepared file; ``expect`` checks which dataset it was made from."""
    with gzip.open(path, "rt") as handle:
        payload = json.load(handle)
    if expect is not None and payload.get("dataset") != expect:
        raise ValueError(f"{path} was prepared from {payload.get('dataset')!r}, not {expect!r}")
    return payload["splits"]
