"""Which runs train together as one pack, and in which packs: planned here, trained by
:mod:`rnnrepro.packing` (whose docstring says why these runs and what a pack computes).

Runs pack when their configs are equal except for the seed and the task's data parameters
(``Task.data_params``), their task is ``packable``, they carry no state, use no dropout, raise
on a non-finite loss, and their model has at most ``max_hidden`` units (:func:`pack_key`).
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass

from .jobs import Pack


# -- which runs pack ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Packing:
    """The ``packing`` section of config/config.yaml."""

    size: int = 16  # most runs in a pack; 0 or 1: every run trains alone
    max_hidden: int | None = 4  # pack only models of at most this many hidden units (None: any)

    @classmethod
    def from_config(cls, section: dict | None) -> "Packing":
        """From the validated config section; numbers (and null) given as text on Snakemake's
        command line (``--config 'packing={size: 8, max_hidden: null}'``) are read as such."""
        section = dict(section or {})
        if "size" in section:
            section["size"] = int(section["size"])
        if "max_hidden" in section:
            value = section["max_hidden"]
            section["max_hidden"] = None if value in (None, "null") else int(value)
        return cls(**section)


def pack_key(identity: dict, packing: Packing) -> str | None:
    """What runs that may share a pack have in common (their config without the seed and the
    task's data parameters), or None when the run trains alone (see the module docstring)."""
    if packing.size < 2:
        return None
    task = dict(identity["task"])
    from ..tasks import TASKS  # the registries import torch: only when packs are planned

    kind = TASKS[task["name"]]
    if not kind.packable or task.get("stateful"):
        return None
    if any(value for section in ("model", "cell") for name, value in identity[section].items() if "dropout" in name):
        return None
    if (identity.get("train") or {}).get("on_nonfinite") == "record":
        return None
    width = identity["model"].get("hidden_size")
    if packing.max_hidden is not None and (width is None or width > packing.max_hidden):
        return None
    shared = {key: value for key, value in identity.items() if key != "seed"}
    shared["task"] = {name: value for name, value in task.items() if name not in kind.data_params}
    return json.dumps(shared, sort_keys=True)


def plan_packs(runs: dict[str, dict], packing: Packing) -> list[Pack]:
    """The packs of a plan (run folder -> identity): each group of runs with one :func:`pack_key`,
    in folder order, cut into ⌈n / size⌉ packs whose sizes differ by at most one; a group of
    one run is no pack."""
    groups: dict[str, list[str]] = defaultdict(list)
    for folder, identity in runs.items():
        key = pack_key(identity, packing)
        if key is not None:
            groups[key].append(folder)
    packs = []
    for key in sorted(groups):
        folders = sorted(groups[key])
        if len(folders) < 2:
            continue
        count = math.ceil(len(folders) / packing.size)
        bounds = [round(i * len(folders) / count) for i in range(count + 1)]
        packs += [Pack(tuple(folders[a:b])) for a, b in zip(bounds, bounds[1:])]
    return packs
