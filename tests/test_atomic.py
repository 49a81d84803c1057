"""Atomic writes on a shared file system (rnnrepro.atomic): the data of a new file reach the
storage (fsync) before it is renamed over the output, and the rename itself (fsync of the
folder) after; a write whose fsync fails leaves the previous file; the temporary files that
killed writes leave behind are found by their names and removed, no other file."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
import torch

from rnnrepro import atomic
from rnnrepro.atomic import DiskFullError

WRITERS = {
    "write_text": lambda path: atomic.write_text(path, "new\n"),
    "write_json": lambda path: atomic.write_json(path, {"new": 1}),
    "torch.save": lambda path: save_tensor(path),
}


def save_tensor(path: Path) -> None:
    with atomic.atomic_path(path) as tmp:
        torch.save({"weights": torch.arange(10.0)}, tmp)


@pytest.fixture
def file_system_calls(monkeypatch) -> list[tuple[str, ...]]:
    """os.fsync (with the path of the descriptor) and os.replace, in the order they are made."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd to name a descriptor's file (Linux)")
    calls: list[tuple[str, ...]] = []
    fsync, replace = os.fsync, os.replace

    def named_fsync(descriptor: int) -> None:
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{descriptor}")))
        fsync(descriptor)

    def noted_replace(source, target) -> None:
        calls.append(("replace", str(source), str(target)))
        replace(source, target)

    monkeypatch.setattr(os, "fsync", named_fsync)
    monkeypatch.setattr(os, "replace", noted_replace)
    return calls


@pytest.mark.parametrize("writer", WRITERS)
def test_a_write_is_fsynced_before_its_rename_and_its_folder_after(tmp_path, file_system_calls, writer):
    target = tmp_path / "output.bin"
    WRITERS[writer](target)
    assert [call[0] for call in file_system_calls] == ["fsync", "replace", "fsync"]
    (_, synced), (_, source, renamed_to), (_, folder) = file_system_calls
    assert synced == source and Path(source).parent == tmp_path and Path(source).name.startswith(".output.bin.")
    assert (renamed_to, folder) == (str(target), str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["output.bin"]


@pytest.mark.parametrize(("code", "raised"), [(errno.EIO, OSError), (errno.ENOSPC, DiskFullError)])
def test_a_failed_fsync_keeps_the_previous_file(tmp_path, monkeypatch, code, raised):
    """A network file system may report a failed write (or a full disk) only when the data are
    synced: the write fails, naming the file when the disk is full, and the old file stays."""
    target = tmp_path / "metrics.json"
    target.write_text("old\n")

    def failing_fsync(descriptor: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(raised) as info:
        atomic.write_text(target, "new\n")
    if raised is DiskFullError:
        assert str(target) in str(info.value)
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json"]


def test_a_folder_that_cannot_be_synced_does_not_fail_the_write(tmp_path, file_system_calls, monkeypatch):
    """Some network and FUSE file systems refuse to fsync a folder (EINVAL): the file is in
    place by then, so the write succeeds."""
    fsync = os.fsync

    def files_only(descriptor: int) -> None:
        fsync(descriptor)  # noted by file_system_calls
        if os.path.isdir(f"/proc/self/fd/{descriptor}"):
            raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "fsync", files_only)
    atomic.write_text(tmp_path / "a.txt", "new\n")
    assert (tmp_path / "a.txt").read_text() == "new\n"
    assert file_system_calls[-1] == ("fsync", str(tmp_path))


def test_stale_temporary_files_are_removed_and_nothing_else(tmp_path):
    """A killed write's file goes, whatever pid it names, this process's included (a rerun in a
    container often gets the killed process's pid); a write this process has under way stays."""
    killed = [atomic.temporary_path(tmp_path / "checkpoint.pt").name.replace(f".{os.getpid()}.", ".4242."),
              atomic.temporary_path(tmp_path / "curve.tsv").name,  # this pid, but no write of ours under way
              ".metrics.json.1.0123abcd.tmp", ".items.npz.99999999.deadbeef.tmp"]
    others = ["checkpoint.pt", "notes.tmp", ".notes.tmp", ".model.pt.12.0123abcd.tmp.bak",
              ".model.pt.12.ABCDEF01.tmp", ".model.pt.x.0123abcd.tmp", "checkpoint.pt.corrupt"]
    for name in [*killed, *others]:
        (tmp_path / name).write_bytes(b"x")
    with atomic.atomic_path(tmp_path / "model.pt") as ours_now:  # a write under way
        ours_now.write_bytes(b"y")
        removed = atomic.remove_stale_temporaries(tmp_path)
        assert sorted(p.name for p in removed) == sorted(killed)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([ours_now.name, *others])
    assert (tmp_path / "model.pt").read_bytes() == b"y"
    assert atomic.remove_stale_temporaries(tmp_path / "missing") == []


def test_the_pattern_matches_the_names_writes_use():
    name = atomic.temporary_path(Path("/runs/a/checkpoint.pt")).name
    found = atomic.TEMPORARY_NAME.fullmatch(name)
    assert found and (found["name"], int(found["pid"])) == ("checkpoint.pt", os.getpid())
