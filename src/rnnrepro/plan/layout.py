"""Where everything a scale makes lives: the one place the results layout is written.

Everything a scale makes lives under ``<results>/<scale>/``, so switching scales never
retrains or overwrites the other scale's results::

    runs/<task~/model~/cell~/cfg~/seed~>/   one folder per run, named by what decides its numbers
    jobs/<pack_…|bundle_…>/                 a job of several runs: its record (trained.json) and benchmark
    analyses/<study>/<artifact>.csv          artifacts computed by a function (checks, analyses of runs)
    tables/<study>/{runs,curves,provenance}.csv
    plans/<study>.json                       the study as planned: artifacts, runs and labels, claims
    verdicts/<study>.csv, .json              every claim judged once (with its numbers); headlines
    plots/<study>.csv, curves/<study>.csv    plot-ready tables (DVC plots)
    reports/<study>.html, index.html         the reports
    metrics/<study>.json                     a study's claim counts (DVC metrics)
    metrics.json                             every study's headlines and counts per artifact

The workflow (``workflow/rules/common.smk``) names every input and output with these paths;
the code that reads them gets them from the workflow, never builds them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The scales, smallest first (workflow/schemas' enums of a scale are held equal to it by a test).
SCALES = ("ci", "mini", "paper")
#: Where the tasks' prepared datasets live, shared by every scale (relative to the workflow's folder).
PREPARED = "resources/prepared"
RUN_FILES = ("config.json", "metrics.json", "curve.tsv", "model.pt")


@dataclass(frozen=True)
class Layout:
    """The paths of one scale's results, relative to the workflow's folder."""

    results: str = "results"
    scale: str = "mini"

    @property
    def root(self) -> str:
        return f"{self.results}/{self.scale}"

    def run(self, folder: str, name: str | None = None) -> str:
        """A run's folder (``folder`` from :func:`rnnrepro.plan.studies.run_folder`), or a file in it."""
        path = f"{self.root}/runs/{folder}"
        return f"{path}/{name}" if name else path

    def analysis(self, study: str, artifact: str) -> str:
        return f"{self.root}/analyses/{study}/{artifact}.csv"

    def table(self, study: str, kind: str) -> str:
        """``kind``: runs, curves or provenance."""
        return f"{self.root}/tables/{study}/{kind}.csv"

    def items(self, study: str) -> str:
        """The test items of a study's runs (``rnnrepro.metrics.items``), for the paired bootstrap."""
        return f"{self.root}/tables/{study}/items.npz"

    def plan(self, study: str) -> str:
        return f"{self.root}/plans/{study}.json"

    def verdicts(self, study: str, suffix: str) -> str:
        """``suffix``: csv (every claim and its verdicts) or json (headlines per artifact)."""
        return f"{self.root}/verdicts/{study}.{suffix}"

    def counts(self, study: str) -> str:
        """The study's claim counts (``dvc metrics show``: one row of a few numbers per study)."""
        return f"{self.root}/metrics/{study}.json"

    def plot(self, study: str) -> str:
        return f"{self.root}/plots/{study}.csv"

    def curves(self, study: str) -> str:
        return f"{self.root}/curves/{study}.csv"

    def report(self, study: str, suffix: str = "html") -> str:
        """The study's report (html) or its executed notebook (ipynb)."""
        return f"{self.root}/reports/{study}.{suffix}"

    @property
    def index(self) -> str:
        return f"{self.root}/reports/index.html"

    @property
    def metrics(self) -> str:
        return f"{self.root}/metrics.json"

    def job(self, name: str, file: str) -> str:
        """A file of a job that trains several runs (a pack or a bundle, rnnrepro.plan.jobs), e.g.
        its record ``trained.json`` or its ``benchmark.tsv``: ``<root>/jobs/<name>/<file>``; the
        runs' own outputs are in their run folders."""
        return f"{self.root}/jobs/{name}/{file}"

    def log(self, *parts: str) -> str:
        """A job's log file: ``logs/<scale>/<parts...>.log``."""
        return "/".join(["logs", self.scale, *parts]) + ".log"

    def cost(self) -> str:
        """The cost table (``python -m rnnrepro.cost``): per run, steps, seconds per step, estimated
        hours and peak memory, from which the train jobs' runtime and mem_mb are sized."""
        return f"{self.root}/cost.csv"


def prepared_file(key: str, root: str | Path = ".") -> Path:
    """The prepared dataset ``key`` (what the workflow's ``prepare_dataset`` rule writes):
    ``<root>/resources/prepared/<key>.json.gz``."""
    return Path(root, PREPARED, f"{key}.json.gz")
