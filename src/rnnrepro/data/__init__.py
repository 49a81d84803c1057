"""Data for rnnrepro: the dataset catalogue, verified fetching, and corpus readers.

- :mod:`~rnnrepro.data.sources`: which files each dataset has, their official URLs,
  mirror paths and checksums (``DATASETS``, ``dataset(key)``).
- :mod:`~rnnrepro.data.fetch`: ``fetch_dataset`` (official URL first, then the data mirror
  named by ``RNNREPRO_DATA_MIRROR``; checksums verified; atomic writes) and its CLI.
- :mod:`~rnnrepro.data.conllu_reader` and :mod:`~rnnrepro.data.text_readers`: readers for
  CoNLL-U treebanks and for tokenized plain-text corpora.

The names below are re-exported lazily (on first access), so that importing the package
stays cheap and ``python -m rnnrepro.data.fetch`` does not import its own module twice.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "DATASETS": "sources",
    "Dataset": "sources",
    "FileSource": "sources",
    "dataset": "sources",
    "MIRROR_ENV_VAR": "fetch",
    "DataError": "fetch",
    "ChecksumError": "fetch",
    "SourceUnavailable": "fetch",
    "fetch_dataset": "fetch",
    "fetch_file": "fetch",
    "verify_file": "fetch",
    "sha256_of": "fetch",
    "git_blob_of": "fetch",
    "Sentence": "conllu_reader",
    "ConlluFormatError": "conllu_reader",
    "read_conllu": "conllu_reader",
    "read_tokenized_lines": "text_readers",
    "read_ptb_char": "text_readers",
    "read_parallel": "text_readers",
}

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from rnnrepro.data.conllu_reader import ConlluFormatError, Sentence, read_conllu
    from rnnrepro.data.fetch import (
        MIRROR_ENV_VAR,
        ChecksumError,
        DataError,
        SourceUnavailable,
        fetch_dataset,
        fetch_file,
        git_blob_of,
        sha256_of,
        verify_file,
    )
    from rnnrepro.data.sources import DATASETS, Dataset, FileSource, dataset
    from rnnrepro.data.text_readers import read_parallel, read_ptb_char, read_tokenized_lines


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first access."""
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module_name}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """List the lazily exported names along with the module's own attributes."""
    return sorted(set(globals()) | set(_EXPORTS))
