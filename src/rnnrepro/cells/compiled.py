"""TorchScript for the time loops, with a clean fall-back to eager Python.

The fast loops (forward and hand-written backward) are plain functions of tensors. They are
compiled with ``torch.jit.script`` the first time they run; if compilation fails (an old or
unusual torch build) the eager function runs instead, after one warning, with the same
results. ``RNNREPRO_TORCHSCRIPT=0`` in the environment keeps every loop eager (:mod:`.switches`).

torch.compile was measured too (notes/stack.md): faster on some shapes but 15-45 s of
compilation per shape, too slow for tests and short runs, so it is not used here.
"""
from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Callable, Iterator, TypeVar

import torch

from .switches import switch_on

F = TypeVar("F", bound=Callable)
_force_eager = False


def scripting_enabled() -> bool:
    return switch_on("RNNREPRO_TORCHSCRIPT")


def scripted(function: F) -> F:
    """``function`` compiled by TorchScript on first use, or itself if that fails or is disabled."""
    compiled: list[Callable] = []

    @functools.wraps(function)
    def run(*args):
        if _force_eager:
            return function(*args)
        if not compiled:
            compiled.append(_compile(function))
        return compiled[0](*args)

    run.eager = function  # type: ignore[attr-defined]
    return run  # type: ignore[return-value]


@contextlib.contextmanager
def eager_loops() -> Iterator[None]:
    """Within the block the loops run as plain Python (to compare with the compiled ones)."""
    global _force_eager
    previous, _force_eager = _force_eager, True
    try:
        yield
    finally:
        _force_eager = previous


def _compile(function: Callable) -> Callable:
    if not scripting_enabled():
        return function
    try:
        with warnings.catch_warnings():  # torch 2.x marks TorchScript deprecated; it still compiles
            warnings.simplefilter("ignore", DeprecationWarning)
            return torch.jit.script(function)
    except Exception as error:  # any failure: keep the eager loop, which gives the same results
        warnings.warn(f"TorchScript could not compile {function.__name__} ({type(error).__name__}: "
                      f"{str(error).splitlines()[0] if str(error) else ''}); running it eagerly",
                      RuntimeWarning, stacklevel=3)
        return function
