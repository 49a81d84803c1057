"""Serial bundles: runs that do not pack, trained one after another as one job.

On a CPU only the tiniest models gain from packing (:mod:`rnnrepro.packing`), so most runs of
the paper plan would each take a SLURM submission of its own: the drnn sine grid alone is 3,960
runs of under an hour. A bundle is a job that trains several such runs one after another, in
one process: each run exactly as alone (:func:`rnnrepro.train.train_run`: its own folder,
checkpoint, resume and outputs, so its metrics are the run alone's, bit for bit), and the job
starts Python and torch once instead of once per run (about 3.5 s a job on a 2-core machine).

Which runs bundle (:func:`plan_bundles`). Runs that are in no pack, whose cost table row exists
(``results/<scale>/cost.csv``, :mod:`rnnrepro.cost`) or whose scale assumes a runtime for runs
without one (``unmeasured_hours``: `ci` and `mini`, whose runs take seconds to two minutes;
`paper`, one hour, the 60 minutes a run's job without a cost row asks for alone), of
one artifact, task type, dataset and cell, are taken in the order of their folders and cut into
consecutive bundles of at most ``size`` runs whose runtimes (estimated hours × margin, what each
run alone would ask SLURM for, less the per-job allowance) add up to at most ``hours``. Runs
bundle with runs of the same artifact (the first that uses them) and cell, so that a change to
one artifact's settings, an edit of one cell's file, or a cell joining a study makes new bundles
of those runs and leaves the other jobs as they were (a bundle whose members change is a new
job, which rewrites its finished members' outputs from their finished checkpoints). Models of
one cell share bundles. A run whose runtime alone exceeds ``hours``, or a bundle of one, trains
alone, and so does a run the cost table lacks at a scale that assumes no runtime.

Before a cost table (a fresh clone), the paper plan's runs are bundled as one hour each: a bundle
asks SLURM for 60 minutes for each run the cost table lacks and the measured runtime of each it
has (:meth:`rnnrepro.cost.TrainResources.pack_runtime`), what those runs would ask for alone, in
one submission: a fresh clone's paper plan trains in 874 jobs (854 bundles, 20 packs) where it
took 5,026 (5,006 runs alone, 20 packs). Once ``snakemake cost`` has measured them, the bundles
are sized from the measured hours instead (new bundles, whose finished runs are not trained again).

Mixed bundles (``mixed``: `ci` and `mini`). Where runs take seconds, starting a job (Python,
torch and, at the first optimiser step, torch's compiler front end: about 5 s on a 2-core machine)
costs more than most runs, and a bundle of one artifact and cell is often one run: the `ci` plan
trained 141 runs in 103 jobs with bundles of one cell, 33 with bundles of one artifact that mix
cells. There, the runs of one study reading one dataset (or none, the synthetic tasks) may share a
bundle, whatever their artifact, task type or cell; a study's bundles are its own, so that the
bundles of runs no other study uses do not change with the studies selected (``studies=[pru]``).
A change to one artifact's settings, an edit
of one cell's file or a cell joining a study then reruns the jobs of the bundles that hold the
changed runs and, as members shift, of the bundles after them in folder order; those jobs' other
runs resume from their finished checkpoints (whose key holds the code they ran,
:func:`rnnrepro.train.checkpoint_key`), train nothing and write their outputs again.

Sizes (config/config.yaml, ``size`` per scale): 8-hour bundles cut the paper plan (this CPU's cost
plan) from 5,026 training submissions to 1,912 (docs/performance.md, Bundles); ``size`` bounds a bundle where runs
are short: 6 at the paper scale; 12 at `mini`, where a bundle takes a few minutes at most, so that
on a laptop no bundle holds the other core idle long at the end (replaying the run times of a
`mini` run on two cores in random orders, training jobs only, the median span was 1,855 s with
bundles of up to 6, 1,806 s with 12 and 1,791 s with 16, the longest bundle 203, 239 and 295 s);
24 at `ci`, whose runs take a second or two. The `ci` plan trains 141 runs in 21 jobs (33 with
bundles of one artifact and at most 6 runs), the `mini` plan 334 runs in 36 (62).

A bundle's job asks SLURM for the sum of its runs' runtimes and one allowance
(:func:`rnnrepro.cost.job_runtime_minutes`) and for the memory of its largest run (they train one
after another). When it is preempted, the run in training writes its checkpoint; the rerun
skips the finished runs (their finished checkpoints) and resumes that one.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

from .jobs import Bundle

#: Most runs in one bundle at a scale that ``bundling.size`` (given per scale) does not name.
DEFAULT_SIZE = 6


@dataclass(frozen=True)
class Bundling:
    """The ``bundling`` section of config/config.yaml, for one scale."""

    hours: float = 0.0  # most runtime (hours) of one bundle's runs, from the cost table; 0: no bundles
    size: int = DEFAULT_SIZE  # most runs in one bundle
    unmeasured_hours: float | None = None  # runtime assumed for a run the cost table lacks (None: not bundled)
    mixed: bool = False  # a study's runs of any artifact, task type and cell reading one dataset may share a bundle

    @classmethod
    def from_config(cls, section: dict | None, scale: str | None = None) -> "Bundling":
        """From the validated config section: ``size`` and ``unmeasured_hours`` the ones given for
        ``scale`` (``size`` may be one number for every scale; a scale it does not name gets
        :data:`DEFAULT_SIZE`), ``mixed`` whether ``scale`` is listed there (numbers given as text
        on the command line read as such)."""
        section = dict(section or {})
        unmeasured = (section.pop("unmeasured_hours", None) or {}).get(scale)
        if unmeasured is not None:
            section["unmeasured_hours"] = float(unmeasured)
        section["mixed"] = scale in (section.pop("mixed", None) or [])
        if "hours" in section:
            section["hours"] = float(section["hours"])
        if isinstance(section.get("size"), dict):
            section["size"] = section["size"].get(scale, DEFAULT_SIZE)
        if "size" in section:
            section["size"] = int(section["size"])
        return cls(**section)


def bundle_key(identity: dict, dataset: str | None, artifact: str = "", mixed: bool = False) -> str:
    """Runs that may share a bundle: of one artifact, one task type reading one dataset and one
    cell, so that a cell joining a study, or an edit of a cell's file, makes bundles of its own
    runs (its models share them); with ``mixed``, every run of the artifact's study reading one
    dataset (or none)."""
    if mixed:
        return f"{artifact.split('.')[0]}.*:*:{dataset or 'synthetic'}:*"
    return f"{artifact}:{identity['task']['name']}:{dataset or 'synthetic'}:{identity['cell']['name']}"


def plan_bundles(runs: dict[str, dict], datasets: dict[str, str | None], runtime_hours: dict[str, float],
                 bundling: Bundling, packed: Iterable[str] = (), artifacts: dict[str, str] | None = None
                 ) -> list[Bundle]:
    """The bundles of a plan (run folder -> identity; ``datasets``: folder -> dataset key or None;
    ``artifacts``: folder -> the first artifact that uses it, ``study.artifact``;
    ``runtime_hours``: folder -> estimated hours × margin, from the cost table, else
    ``bundling.unmeasured_hours``) leaving out the ``packed`` folders (see the module docstring)."""
    if bundling.hours <= 0 or bundling.size < 2:
        return []
    packed = set(packed)
    groups: dict[str, list[str]] = defaultdict(list)
    for folder, identity in runs.items():
        hours = runtime_hours.get(folder, bundling.unmeasured_hours)
        if folder in packed or hours is None or hours > bundling.hours:
            continue
        artifact = (artifacts or {}).get(folder, "")
        groups[bundle_key(identity, datasets.get(folder), artifact, bundling.mixed)].append(folder)
    bundles: list[Bundle] = []
    for key in sorted(groups):
        current: list[str] = []
        total = 0.0
        for folder in sorted(groups[key]):
            hours = runtime_hours.get(folder, bundling.unmeasured_hours)
            if current and (len(current) >= bundling.size or total + hours > bundling.hours):
                bundles.append(Bundle(tuple(current)))
                current, total = [], 0.0
            current.append(folder)
            total += hours
        bundles.append(Bundle(tuple(current)))
    return [bundle for bundle in bundles if len(bundle.members) > 1]
