"""How long Snakemake takes to plan the workflow at each scale, and what that costs per job.

A cluster user's first command is a dry run of the `paper` scale; it must take seconds and grow
no faster than the number of jobs. This script copies the repository's tracked files into a
temporary folder (a fresh clone: no results, no .snakemake metadata), times `snakemake -n -q all`
at each scale in interleaved rounds, and prints the median wall time, the number of planned
jobs and the milliseconds per job, with the paper / mini ratios side by side. Each scale is
timed twice a round: with its plan kept from the dry run before (``.snakemake/rnnrepro/``,
:mod:`rnnrepro.plan.kept`: every dry run after the first, while settings, studies and code
are unchanged) and worked out afresh (that folder emptied first: a first dry run, or one after
an edit).

    python benchmarks/bench_plan.py [--rounds 3] [--scales mini paper]
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rnnrepro.plan.layout import SCALES

import measured  # benchmarks/measured.py, beside this script

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 10.0  # the paper scale's plan, on a 2-core machine


def fresh_copy(target: Path) -> Path:
    """The tracked files of the repository (what a clone has) under ``target``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source, destination = REPO / name, target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            destination.symlink_to(source.readlink())
        elif source.exists():
            shutil.copy2(source, destination)
    return target


def plan(project: Path, scale: str, kept: bool) -> tuple[float, int]:
    """Wall seconds of one dry run and the number of jobs it plans; unless ``kept``, without the
    plans kept by earlier dry runs."""
    if not kept:
        shutil.rmtree(project / ".snakemake" / "rnnrepro", ignore_errors=True)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "all", "--config", f"scale={scale}"],
                            cwd=project, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"snakemake -n at scale {scale} failed:\n{result.stderr[-3000:]}")
    total = re.search(r"^total\s+(\d+)$", result.stdout, re.MULTILINE)
    return seconds, int(total.group(1)) if total else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed dry runs per scale (default 3)")
    parser.add_argument("--scales", nargs="+", default=["mini", "paper"], choices=SCALES)
    parser.add_argument("--record", action="store_true",
                        help="append the rows to benchmarks/measured/ and the table of docs/performance.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rnnrepro-plan-") as folder:
        project = fresh_copy(Path(folder))
        times: dict[tuple[str, bool], list[float]] = {(scale, kept): [] for scale in args.scales
                                                      for kept in (True, False)}
        jobs: dict[str, int] = {}
        plan(project, args.scales[0], kept=False)  # warm the file cache
        for _ in range(args.rounds):
            for scale in args.scales:
                for kept in (False, True):  # worked out, then read back
                    seconds, jobs[scale] = plan(project, scale, kept)
                    times[scale, kept].append(seconds)
    median = {key: statistics.median(values) for key, values in times.items()}
    print(f"snakemake -n all in a fresh copy, median of {args.rounds} interleaved rounds")
    print(f"{'scale':<8}{'jobs':>8}{'plan':>10}{'seconds':>10}{'ms/job':>9}")
    context, rows = measured.context(__file__), []
    for scale in args.scales:
        for kept, label in ((False, "afresh"), (True, "kept")):
            seconds = median[scale, kept]
            print(f"{scale:<8}{jobs[scale]:>8}{label:>10}{seconds:>10.2f}{1000 * seconds / max(jobs[scale], 1):>9.2f}")
            rows.append({**context, "scale": scale, "jobs": jobs[scale], "plan": label,
                         f"seconds (median of {args.rounds})": round(seconds, 2)})
    if args.record:
        print(f"recorded in {measured.record('plan', rows).relative_to(REPO)}")
    if {"mini", "paper"} <= set(args.scales):
        for kept, label in ((False, "worked out afresh"), (True, "kept")):
            mini, paper = median["mini", kept], median["paper", kept]
            print(f"plan {label}: paper / mini: {jobs['paper'] / jobs['mini']:.1f}x the jobs in {paper / mini:.2f}x "
                  f"the time; paper {'within' if paper <= TARGET_SECONDS else 'OVER'} its {TARGET_SECONDS:g} s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
