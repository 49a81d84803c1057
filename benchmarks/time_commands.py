"""Time the README's two commands on a fresh clone, as CI and a new user run them.

    python benchmarks/time_commands.py main            # the whole `mini` workflow
    python benchmarks/time_commands.py tests           # the test suite
    python benchmarks/time_commands.py main --record   # and add the row to docs/performance.md

Clones the checkout's HEAD (committed work only) into a new folder beside it, so that
``../shared`` lies beside the clone as beside the checkout, and runs the command exactly as
README.md writes it (the line ending in ``# run the main job`` or ``# run the tests``) with
``CI=true``: the part before the first ``&&`` (the set-up) and the rest are timed apart. Prints
the minutes, the outcome and what else the machine did meanwhile (its busy CPU time less the
command's own); ``--record`` appends them, with the machine, commit and time, to
``benchmarks/measured/commands.jsonl`` and the table of docs/performance.md. The clone is kept
(its results, its log ``time_commands.log``) and its path printed. The machine's speed changes
with the hour: compare rows measured side by side.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import measured  # benchmarks/measured.py, beside this script

REPO = measured.REPO
MARKERS = {"main": "# run the main job", "tests": "# run the tests"}
TITLES = {"main": "main (`mini`)", "tests": "tests"}


def readme_command(which: str, readme: Path = REPO / "README.md") -> str:
    """The README's command for ``which`` (main or tests), without its marker comment."""
    marker = MARKERS[which]
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.rstrip().endswith(marker):
            return line.rstrip()[: -len(marker)].strip()
    raise SystemExit(f"README.md has no line ending in {marker!r}")


def fresh_clone(which: str) -> Path:
    """A new clone of the checkout's HEAD beside it."""
    commit = measured.commit().replace("+changes", "")
    for number in range(1, 1000):
        target = REPO.parent / f"{REPO.name}-time-{which}-{commit}-{number}"
        if not target.exists():
            break
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(target)], check=True)
    return target


def run_timed(command: str, cwd: Path, log) -> tuple[int, float]:
    """Run ``command`` with bash in ``cwd`` (CI=true), its output to ``log``; exit status and minutes."""
    started = time.monotonic()
    log.write(f"$ {command}\n")
    log.flush()
    result = subprocess.run(["bash", "-c", command], cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "CI": "true"})
    return result.returncode, (time.monotonic() - started) / 60


def busy_seconds() -> float | None:
    """CPU seconds every core of the machine has been busy since boot (``/proc/stat``), or None."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def children_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def beside(busy_before: float | None, children_before: float, minutes: float) -> str:
    """What else ran during the command: the machine's busy CPU time less the command's own (its
    processes', once they have ended), as CPU-minutes and as a share of the cores."""
    busy_after = busy_seconds()
    if busy_before is None or busy_after is None or minutes <= 0:
        return ""
    other = max(0.0, (busy_after - busy_before) - (children_seconds() - children_before)) / 60
    return f"{other:.1f} CPU-minutes of other work ({100 * other / (minutes * os.cpu_count()):.0f} % of the cores)"


def summary_of(which: str, log_text: str) -> str:
    """A few words of what the command did: pytest's last line; the workflow's jobs and the
    seconds its jobs ran, training jobs apart (from Snakemake's own output)."""
    if which == "tests":
        lines = re.findall(r"^=+ (.*(?:passed|failed|error).*?) =+$", log_text, re.MULTILINE)
        return lines[-1] if lines else ""
    jobs = job_seconds(log_text)
    if not jobs:
        return ""
    total = sum(sum(times) for times in jobs.values())
    training = sum(sum(times) for rule, times in jobs.items() if rule.startswith("train"))
    return f"{sum(map(len, jobs.values()))} jobs, {total:,.0f} s of job time ({training:,.0f} training)"


STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")


def job_seconds(log_text: str) -> dict[str, list[float]]:
    """Each rule's jobs' wall seconds, from Snakemake's output (a job runs from the time stamp
    above its ``rule …:`` block to the one above its ``Finished jobid``)."""
    stamp, rule, started, rule_of = None, None, {}, {}
    jobs: dict[str, list[float]] = {}
    for line in log_text.splitlines():
        if found := STAMP.match(line):
            stamp = dt.datetime.strptime(found.group(1), "%a %b %d %H:%M:%S %Y")
        elif found := re.match(r"(?:local)?rule (\w+):$", line):
            rule = found.group(1)
        elif (found := re.match(r"\s+jobid: (\d+)$", line)) and rule:
            started[found.group(1)], rule_of[found.group(1)], rule = stamp, rule, None
        elif (found := re.match(r"Finished jobid: (\d+)", line)) and found.group(1) in started:
            job = found.group(1)
            jobs.setdefault(rule_of[job], []).append((stamp - started[job]).total_seconds())
    return jobs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", choices=sorted(MARKERS), help="the README command to time")
    parser.add_argument("--record", action="store_true",
                        help="append the row to benchmarks/measured/commands.jsonl and docs/performance.md")
    args = parser.parse_args(argv)

    command = readme_command(args.which)
    setup, _, rest = command.partition("&&")
    context = measured.context(__file__)
    clone = fresh_clone(args.which)
    busy_before, children_before = busy_seconds(), children_seconds()
    print(f"{context['measured']}: {clone.name} ({context['commit']}); log {clone / 'time_commands.log'}", flush=True)
    with open(clone / "time_commands.log", "w", encoding="utf-8") as log:
        status, setup_minutes = run_timed(setup.strip(), clone, log)
        rest_minutes = 0.0
        if status == 0 and rest.strip():
            status, rest_minutes = run_timed(rest.strip(), clone, log)
    text = (clone / "time_commands.log").read_text(encoding="utf-8", errors="replace")
    row = {**context, "command": TITLES[args.which],
           "beside it": beside(busy_before, children_before, setup_minutes + rest_minutes),
           "set-up (min)": round(setup_minutes, 1), "command (min)": round(rest_minutes, 1),
           "total (min)": round(setup_minutes + rest_minutes, 1),
           "outcome": ("passed" if status == 0 else f"failed (exit {status})"),
           "what it did": summary_of(args.which, text)}
    print("  ".join(f"{key}: {value}" for key, value in row.items() if key not in measured.CONTEXT))
    if args.record:
        path = measured.record("commands", [row])
        print(f"recorded in {path.relative_to(REPO)} and {measured.PAGE.relative_to(REPO)}")
    print(f"the clone: {clone}")
    sys.exit(status)


if __name__ == "__main__":
    main()
