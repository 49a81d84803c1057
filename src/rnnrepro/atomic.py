"""Outputs appear atomically: written under a temporary name in the same folder, then renamed.

An interrupted job therefore never leaves a file that looks finished, and a file that DVC
has hard-linked into its cache is replaced, never rewritten in place.

A write that fails because the disk (or the user's quota) is full raises :class:`DiskFullError`,
an ``OSError`` with errno ENOSPC (EDQUOT) that names the file, chained from the original error;
the temporary file is removed and the previous file is left as it was. Plain writes report
the errno themselves; ``torch.save`` reports only a ``RuntimeError`` ("unexpected pos ...",
"basic_ios::clear: iostream error"), so after one the temporary file is probed with a small
write, which fails with the file system's own errno when it is full.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Iterator

FULL = (errno.ENOSPC, errno.EDQUOT)


class DiskFullError(OSError):
    """Writing ``filename`` failed because its file system, or the user's quota, is full."""

    def __str__(self) -> str:
        return self.strerror


def temporary_path(path: Path) -> Path:
    """A fresh name beside ``path``, rather than mkstemp, whose 0600 mode would stick to the output."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it is renamed to ``path``, else removed.
    A full disk raises :class:`DiskFullError`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except (OSError, RuntimeError) as error:
        full = disk_full(error, path, tmp)
        if full is None:
            raise
        raise full from error
    finally:
        tmp.unlink(missing_ok=True)


def disk_full(error: BaseException, path: Path, tmp: Path) -> DiskFullError | None:
    """The :class:`DiskFullError` that ``error``, raised while writing ``path`` through ``tmp``,
    stands for; None when it is not about a full disk."""
    if isinstance(error, DiskFullError):
        return None
    written = 0
    with contextlib.suppress(OSError):
        written = os.stat(tmp).st_size  # before the probe adds to it
    code = error.errno if isinstance(error, OSError) else probe(tmp)
    if code not in FULL:
        return None
    detail = os.strerror(code)
    with contextlib.suppress(OSError):  # what is cheaply known: how far it got, what is left
        detail += f"; {size(written)} written before it failed, {size(shutil.disk_usage(path.parent).free)} free"
    what = "the disk is full" if code == errno.ENOSPC else "the disk quota is used up"
    left = f"the previous {path.name} is intact" if path.exists() else f"no partial {path.name} was left"
    return DiskFullError(code, f"cannot write {path}: {what} ({detail}); {left}, free space and run again", str(path))


def probe(tmp: Path) -> int | None:
    """The errno with which appending a block to ``tmp`` fails; None when it succeeds."""
    try:
        with open(tmp, "ab") as file:
            file.write(bytes(4096))
            file.flush()
            os.fsync(file.fileno())
    except OSError as error:
        return error.errno
    return None


def size(n: float) -> str:
    """``n`` bytes for people: 0 B, 64.0 KiB, 1.5 GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            break
        n /= 1024
    return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path: str | Path, payload: Any) -> None:
    write_text(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")
