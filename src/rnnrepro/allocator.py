"""Keep the memory a training process frees, instead of handing it back to the kernel each step.

glibc's ``malloc`` serves a large block (above ``M_MMAP_THRESHOLD``, 128 KiB at first and at most
32 MiB as it adapts) with its own ``mmap`` and unmaps it when freed, and gives the top of its heap
back once more than ``M_TRIM_THRESHOLD`` is free there. A training step allocates and frees the
same large tensors every time (a language model's logits and their gradients: tens of MB), so
each step pays for fresh pages: the kernel maps them and zeroes every one on first touch. A
`mini` PTB language model spent 7.7-8.7 of its 26-28 s in the kernel so (system time), and
0.5-0.6 s once the thresholds were raised, with the same metrics to the bit (wall 26-27 s to
19-22 s; side by side, 27 November, the reason this module exists).

:func:`keep_freed_memory` raises both thresholds for the rest of the process (``mallopt``), so
freed blocks stay in the heap for the next step. The process then holds its peak memory until it
ends, which is what a training job asks its scheduler for anyway. It is process-wide and not
undone: training code calls it once at its start (:class:`rnnrepro.train.Kernels`). Where the
C library is not glibc (no ``mallopt``), it does nothing. Numbers are unchanged: only where
memory comes from changes, not what is computed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
#: Blocks up to this size come from the heap and freed memory up to it stays there (1 GiB: a
#: block larger than that is rare enough for its own mmap to cost nothing that matters).
THRESHOLD_BYTES = 1 << 30

_kept: bool | None = None  # None: not tried yet in this process


def keep_freed_memory(threshold: int = THRESHOLD_BYTES) -> bool:
    """Raise glibc's mmap and trim thresholds to ``threshold`` bytes, once per process; whether
    they are raised (False where the C library has no ``mallopt`` or refuses the value)."""
    global _kept
    if _kept is None:
        _kept = _set_thresholds(threshold)
    return _kept


def _set_thresholds(threshold: int) -> bool:
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:
        log.debug("no mallopt in the C library: freed memory goes back to the kernel as usual")
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    accepted = mallopt(M_MMAP_THRESHOLD, threshold) == 1 and mallopt(M_TRIM_THRESHOLD, threshold) == 1
    if not accepted:
        log.debug("mallopt refused a threshold of %d bytes", threshold)
    return accepted
