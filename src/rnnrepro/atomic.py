"""Outputs appear atomically: written under a temporary name in the same folder, then renamed.

An interrupted job therefore never leaves a file that looks finished, and a file that DVC
has hard-linked into its cache is replaced, never rewritten in place.
"""
from __future__ import annotations

import contextlib
import json
import os
import uuid
from pathlib import Path
from typing import Any, Iterator


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it is renamed to ``path``, else removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A fresh name rather than mkstemp, whose 0600 mode would stick to the output file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path: str | Path, payload: Any) -> None:
    write_text(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")
