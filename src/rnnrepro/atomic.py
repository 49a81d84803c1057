"""Outputs appear atomically: written under a temporary name in the same folder, then renamed.

An interrupted job therefore never leaves a file that looks finished, and a file that DVC
has hard-linked into its cache is replaced, never rewritten in place. The temporary file is
fsynced before the rename and its folder after it (where the file system supports syncing a
folder), so a node that crashes just after a write leaves the new file or the old one, never
an empty or truncated file under the final name (which a shared file system could otherwise
show, its data still in the crashed node's cache).

A job killed during a write leaves its temporary file (``.<name>.<pid>.<8 hex>.tmp``, see
:func:`temporary_path`) behind; :func:`remove_stale_temporaries` clears a folder of them, as a
run does when it starts or resumes.

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
import re
import shutil
import uuid
from pathlib import Path
from typing import Any, Iterator

FULL = (errno.ENOSPC, errno.EDQUOT)


class DiskFullError(OSError):
    """Writing ``filename`` failed because its file system, or the user's quota, is full."""

    def __str__(self) -> str:
        return self.strerror


#: The temporary files this process is writing now (:func:`atomic_path`): the only ones
#: :func:`remove_stale_temporaries` leaves. A file of a killed earlier process is stale even when
#: it carries this process's pid (in a container a rerun often gets the same pid).
IN_FLIGHT: set[Path] = set()


def temporary_path(path: Path) -> Path:
    """A fresh name beside ``path``, rather than mkstemp, whose 0600 mode would stick to the output."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


#: The names :func:`temporary_path` gives: ``.<name>.<pid>.<8 hex digits>.tmp``.
TEMPORARY_NAME = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp")


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Remove the temporary files of :func:`temporary_path` left in ``folder`` by writes cut short
    (a kill or a crash), and return them. Only call it on a folder that no other process writes
    at the time: a run folder is written by one job at a time (Snakemake locks its outputs), so
    there every such file is stale, whatever pid it names (a rerun in a container often has the
    killed process's pid). The files this process is writing now (:data:`IN_FLIGHT`) and files of
    any other name are left alone."""
    removed = []
    for path in sorted(Path(folder).glob(".*.tmp")):
        found = TEMPORARY_NAME.fullmatch(path.name)
        if found and path not in IN_FLIGHT and path.is_file():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def sync_file(path: Path) -> None:
    """Write the file's data to the storage (fsync) before it is renamed over an output."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (fsync of the folder); a file system that cannot
    sync a folder (some network and FUSE file systems refuse it) is left to its own timing."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it is fsynced and renamed to ``path``
    (and the folder fsynced), else removed. A full disk raises :class:`DiskFullError`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    IN_FLIGHT.add(tmp)
    try:
        yield tmp
        sync_file(tmp)
        os.replace(tmp, path)
        sync_folder(path.parent)
    except (OSError, RuntimeError) as error:
        full = disk_full(error, path, tmp)
        if full is None:
            raise
        raise full from error
    finally:
        IN_FLIGHT.discard(tmp)
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
