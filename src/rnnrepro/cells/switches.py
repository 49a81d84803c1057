"""The environment switches that change how (never what) the cells compute, read in one way.

``RNNREPRO_TORCHSCRIPT=0`` keeps the time loops eager (:mod:`.compiled`); ``RNNREPRO_PREPACK=0``
multiplies without oneDNN's prepacked weights (:mod:`.products`). A switch's former name (from
before it was renamed for what it does) is still read where the new one is not set, with a
warning. Each is on unless set to "0", "false", "no" or "off".
"""
from __future__ import annotations

import os
import warnings

#: switch -> the name it had before (read where the switch is not set)
FORMER_NAMES = {"RNNREPRO_TORCHSCRIPT": "RNNREPRO_SCRIPT", "RNNREPRO_PREPACK": "RNNREPRO_PACKED"}
OFF = {"0", "false", "no", "off"}
_warned: set[str] = set()


def switch_value(name: str) -> str | None:
    """The value of switch ``name`` in the environment, else of its former name (warning once)."""
    value = os.environ.get(name)
    former = FORMER_NAMES.get(name)
    if value is None and former and former in os.environ:
        if former not in _warned:
            _warned.add(former)
            warnings.warn(f"{former} is now called {name}; read as such", FutureWarning, stacklevel=3)
        value = os.environ[former]
    return value


def switch_on(name: str) -> bool:
    """Whether switch ``name`` is on (the default)."""
    return (switch_value(name) or "1").strip().lower() not in OFF
