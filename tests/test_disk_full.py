"""A write on a full disk fails with a clear error naming the file, and loses nothing.

The full disk is real as far as the writer can tell: the temporary file that
:func:`rnnrepro.atomic.atomic_path` hands out is made a symlink to ``/dev/full``, whose every
write fails with ENOSPC (Linux), so ``torch.save`` and Python's writes fail as they do on a
full file system, and the probe that :mod:`rnnrepro.atomic` runs after torch's RuntimeError
gets ENOSPC too. Removing the temporary file removes only the symlink.
"""
from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path

import pytest
import torch

from rnnrepro import atomic
from rnnrepro.atomic import DiskFullError
from rnnrepro.train import checkpoint_payload, train_run

DEV_FULL = Path("/dev/full")


def dev_full_works() -> bool:
    try:
        with open(DEV_FULL, "wb") as file:
            file.write(b"x")
    except OSError as error:
        return error.errno == errno.ENOSPC
    return False


pytestmark = pytest.mark.skipif(not dev_full_works(), reason="needs Linux's /dev/full")


class FullDisk:
    """Replaces atomic.temporary_path: the temporary file of the writes of files named in
    ``names``, from the (skip + 1)-th on, goes to /dev/full. ``before`` keeps the bytes each
    target had when its failing write began."""

    def __init__(self, names: tuple[str, ...], skip: int = 0):
        self.names, self.skip = names, skip
        self.real = atomic.temporary_path
        self.before: dict[Path, bytes | None] = {}

    def __call__(self, path: Path) -> Path:
        tmp = self.real(path)
        if path.name in self.names:
            if self.skip:
                self.skip -= 1
            else:
                self.before[path] = path.read_bytes() if path.exists() else None
                tmp.symlink_to(DEV_FULL)
        return tmp

    def free(self) -> None:
        """Space was freed: writes succeed again."""
        self.names = ()


@pytest.fixture
def full_disk(monkeypatch):
    """``full_disk(names, skip)`` fills the disk for those writes; /dev/full must survive."""
    def fill(*names: str, skip: int = 0) -> FullDisk:
        disk = FullDisk(names, skip)
        monkeypatch.setattr(atomic, "temporary_path", disk)
        return disk

    yield fill
    assert stat.S_ISCHR(os.stat(DEV_FULL).st_mode), "/dev/full itself was touched"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def save_tensor(path: Path, elements: int = 10) -> None:
    with atomic.atomic_path(path) as tmp:
        torch.save({"weights": torch.arange(elements, dtype=torch.float32)}, tmp)


WRITERS = {
    "write_text": lambda path: atomic.write_text(path, "new text\n" * 1000),
    "write_json": lambda path: atomic.write_json(path, {"new": list(range(1000))}),
    "torch.save": lambda path: save_tensor(path, 10_000),
}


# -- (1) atomic_path and its write helpers --------------------------------------------------
@pytest.mark.parametrize("writer", WRITERS)
def test_full_disk_names_the_file_and_keeps_the_previous_one(tmp_path, full_disk, writer):
    target = tmp_path / "out" / "result.bin"
    target.parent.mkdir()
    target.write_bytes(b"the previous, finished file")
    full_disk("result.bin")
    with pytest.raises(DiskFullError) as caught:
        WRITERS[writer](target)
    error = caught.value
    message = str(error)
    assert message.startswith(f"cannot write {target}: the disk is full (No space left on device")
    assert "the previous result.bin is intact, free space and run again" in message
    assert isinstance(error, OSError) and error.errno == errno.ENOSPC and error.filename == str(target)
    assert isinstance(error.__cause__, (OSError, RuntimeError)) and error.__cause__ is not error
    assert target.read_bytes() == b"the previous, finished file"
    assert leftovers(target.parent) == []


def test_full_disk_without_a_previous_file(tmp_path, full_disk):
    full_disk("metrics.json")
    with pytest.raises(DiskFullError, match=r"metrics\.json: the disk is full .*no partial metrics\.json was left"):
        atomic.write_json(tmp_path / "metrics.json", {"a": 1})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("code, says", [(errno.ENOSPC, "the disk is full"),
                                        (errno.EDQUOT, "the disk quota is used up")])
def test_errno_raised_by_the_write_itself(tmp_path, code, says):
    """An OSError with ENOSPC or EDQUOT from whatever writes the temporary file."""
    target = tmp_path / "curve.tsv"
    target.write_text("old\n")
    with pytest.raises(DiskFullError, match=f"cannot write {target}: {says} \\({os.strerror(code)}") as caught:
        with atomic.atomic_path(target) as tmp:
            tmp.write_text("half of it")
            raise OSError(code, os.strerror(code))
    assert caught.value.errno == code and caught.value.__cause__.errno == code
    assert target.read_text() == "old\n" and leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [
    OSError(errno.EACCES, "Permission denied"),
    RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598"),
    RuntimeError("CUDA error: device-side assert triggered"),
])
def test_other_failures_are_not_called_a_full_disk(tmp_path, error):
    """Torch's failed-write text alone does not make a full disk: the probe of the temporary
    file finds space, so the original error goes on, and the temporary file is still removed."""
    target = tmp_path / "model.pt"
    target.write_bytes(b"old")
    with pytest.raises(type(error)) as caught:
        with atomic.atomic_path(target) as tmp:
            tmp.write_bytes(b"partial")
            raise error
    assert caught.value is error and not isinstance(caught.value, DiskFullError)
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == []


# -- (2) what torch.save really raises on a full disk -------------------------------------
TORCH_WRITE_FAILED = r"unexpected pos|enforce fail|iostream error"


@pytest.mark.parametrize("elements", [10, 100_000])
def test_torch_save_to_a_full_disk(tmp_path, full_disk, elements):
    """torch.save to /dev/full raises a bare RuntimeError: "basic_ios::clear: iostream error" for
    a tiny tensor, "[enforce fail at inline_container.cc:...] . unexpected pos ..." for a larger
    one -- neither names the file nor the disk. Through atomic_path it becomes DiskFullError."""
    with pytest.raises(RuntimeError, match=TORCH_WRITE_FAILED) as raw:
        torch.save({"weights": torch.zeros(elements)}, DEV_FULL)
    assert not isinstance(raw.value, OSError), "torch now reports an errno; the probe may be unneeded"

    target = tmp_path / "checkpoint.pt"
    save_tensor(target)
    previous = target.read_bytes()
    full_disk("checkpoint.pt")
    with pytest.raises(DiskFullError, match=r"checkpoint\.pt: the disk is full \(No space left on device") as caught:
        save_tensor(target, elements)
    assert type(caught.value.__cause__) is RuntimeError
    assert re.search(TORCH_WRITE_FAILED, str(caught.value.__cause__))
    assert target.read_bytes() == previous and leftovers(tmp_path) == []
    assert torch.load(target)["weights"].tolist() == list(range(10))


# -- (3) a training run on a full disk ----------------------------------------------------
def adding_run() -> dict:
    """A small adding-task run: 2 epochs of 20 steps, a checkpoint every 3 steps and at each epoch end."""
    return {"seed": 7, "task": {"name": "adding", "T": 12, "train_size": 200, "dev_size": 30, "test_size": 30},
            "model": {"name": "basic", "hidden_size": 6}, "cell": {"name": "lstm"},
            "train": {"epochs": 2, "batch_size": 10, "optimizer": "adam", "lr": 0.01,
                      "checkpoint_every": 3, "log_every": 4}}


def read_outputs(folder: Path) -> tuple[dict, str]:
    """metrics.json without its provenance (wall time differs between runs) and curve.tsv."""
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics.pop("provenance")
    return metrics, (folder / "curve.tsv").read_text()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[dict, str]:
    folder = tmp_path_factory.mktemp("reference")
    train_run(adding_run(), folder)
    return read_outputs(folder)


def test_checkpoint_on_a_full_disk_then_resume_is_identical(tmp_path, full_disk, reference, caplog):
    """The third checkpoint (step 9) hits a full disk: the run fails naming checkpoint.pt, the
    one of step 6 stays, and once the disk has space again the run resumes from it and ends
    exactly as an uninterrupted run."""
    disk = full_disk("checkpoint.pt", skip=2)
    with pytest.raises(DiskFullError, match=rf"cannot write {tmp_path / 'checkpoint.pt'}: the disk is full "
                                            r"\(No space left on device.*the previous checkpoint\.pt is intact"):
        train_run(adding_run(), tmp_path)
    checkpoint = tmp_path / "checkpoint.pt"
    assert checkpoint.read_bytes() == disk.before[checkpoint]
    assert checkpoint_payload(checkpoint.read_bytes())["progress"]["step"] == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]

    disk.free()
    caplog.set_level("INFO", logger="rnnrepro.train")
    train_run(adding_run(), tmp_path)
    assert any("resuming" in r.getMessage() and "at step 6 " in r.getMessage() for r in caplog.records)
    assert read_outputs(tmp_path) == reference
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("name", ["config.json", "curve.tsv", "items.npz", "metrics.json", "model.pt"])
def test_outputs_on_a_full_disk_then_rerun_is_identical(tmp_path, full_disk, reference, name):
    """Every file the run writes at its end fails the same way; the rerun only writes them."""
    disk = full_disk(name)
    with pytest.raises(DiskFullError, match=rf"cannot write {tmp_path / name}: the disk is full"):
        train_run(adding_run(), tmp_path)
    assert not (tmp_path / "model.pt").exists(), "a run that could not write its outputs must not look finished"
    assert leftovers(tmp_path) == []
    disk.free()
    train_run(adding_run(), tmp_path)
    assert read_outputs(tmp_path) == reference
