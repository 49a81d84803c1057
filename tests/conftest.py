"""Shared fixtures: the repository root, the data mirror, one torch thread per test process."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]

# One thread: the suite runs beside other work on small machines, where torch's
# multi-threaded kernels on tiny tensors only spin and wait.
torch.set_num_threads(1)


def find_mirror() -> Path | None:
    """The data mirror: RNNREPRO_DATA_MIRROR, else ../shared/data beside the repository."""
    candidates = [os.environ.get("RNNREPRO_DATA_MIRROR"), REPO.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "MANIFEST.md").exists():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = find_mirror()
    if path is None:
        pytest.skip("no data mirror: set RNNREPRO_DATA_MIRROR or put the mirror at ../shared/data")
    return path
