"""What the benchmark scripts measured, kept and shown: the figures of ``docs/performance.md``.

A script run with ``--record`` appends its rows (one per case, each with the machine, the commit
and the time it was measured) to ``benchmarks/measured/<name>.jsonl`` and rewrites that
measurement's table in ``docs/performance.md``: the lines between

    <!-- measured: <name> -->
    <!-- end measured: <name> -->

are generated from the file, never edited by hand (``tests/test_docs.py`` renders every table
again from its file and compares). The prose around the tables is written by hand and carries
no figures.

    python benchmarks/measured.py            # rewrite every table from its file (after a merge)
"""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "benchmarks" / "measured"
PAGE = REPO / "docs" / "performance.md"
#: the columns every row carries, first in every table
CONTEXT = ("machine", "commit", "measured", "recorded")


def machine() -> str:
    """The machine in words: CPU model, cores, memory, and the GPU where torch sees one."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    words = f"{os.cpu_count()}-core {cpu}"
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        words += f", {pages * size / 2 ** 30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    try:
        import torch

        words += f", {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ", no GPU"
    except ImportError:
        pass
    return words


def commit(repo: Path = REPO) -> str:
    """The checkout's commit (12 hex digits), ``+changes`` when its tracked files differ from it."""
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True, text=True)
    if head.returncode != 0:
        return "unknown"
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=repo).returncode != 0
    return head.stdout.strip() + ("+changes" if dirty else "")


def now() -> str:
    """The time in UTC, to the minute: ``2026-11-29 08:02 UTC``."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def context(script: str, repo: Path = REPO) -> dict[str, str]:
    """The machine, commit, time and script every row ``script`` records starts with."""
    return {"machine": machine(), "commit": commit(repo), "measured": now(),
            "recorded": f"by `{Path(script).resolve().relative_to(REPO)}`"}


def rows(name: str) -> list[dict[str, Any]]:
    path = FOLDER / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|")


def table(name: str) -> str:
    """The markdown table of measurement ``name``: one row per recorded row, oldest first, the
    context columns first, then every other column in the order first recorded."""
    recorded = rows(name)
    if not recorded:
        return "(not measured yet)"
    columns = list(CONTEXT) + [c for c in dict.fromkeys(k for row in recorded for k in row) if c not in CONTEXT]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in recorded]
    return "\n".join(lines)


def block_pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- measured: {re.escape(name)} -->\n)(.*?)(<!-- end measured: {re.escape(name)} -->)",
                      re.DOTALL)


def blocks(text: str) -> list[str]:
    """The names of the generated tables in a page's text."""
    return re.findall(r"<!-- measured: ([\w-]+) -->", text)


def render(text: str) -> str:
    """``text`` with every generated table rewritten from its file."""
    for name in blocks(text):
        text = block_pattern(name).sub(lambda m, name=name: m.group(1) + table(name) + "\n" + m.group(3), text)
    return text


def record(name: str, new_rows: Iterable[dict[str, Any]]) -> Path:
    """Append ``new_rows`` (each with :func:`context` first) to measurement ``name`` and rewrite the
    page's tables; the file appended to."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    path = FOLDER / f"{name}.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        for row in new_rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    text = PAGE.read_text(encoding="utf-8")
    if name not in blocks(text):
        raise SystemExit(f"{PAGE.name} has no table for {name!r}: add the lines "
                         f"'<!-- measured: {name} -->' and '<!-- end measured: {name} -->' where it belongs")
    PAGE.write_text(render(text), encoding="utf-8")
    return path


if __name__ == "__main__":
    PAGE.write_text(render(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"rewrote {', '.join(blocks(PAGE.read_text(encoding='utf-8')))} in {PAGE.relative_to(REPO)}")
