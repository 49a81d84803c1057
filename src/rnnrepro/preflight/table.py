"""The rows the pre-flight checks give, the one table they print and the one file they write."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .. import atomic


@dataclass
class Row:
    """One line of the pre-flight table.

    ``ok`` is True or False for a check with a promise (identical metrics, a pack within its
    tolerance), None for a measurement (a speed ratio, a cost) or a check that could not run
    (``result`` then says why)."""

    section: str
    check: str
    result: str
    ok: bool | None = None
    detail: str = ""
    seconds: float = 0.0

    @property
    def mark(self) -> str:
        return {True: "ok", False: "FAILED", None: ""}[self.ok]


def markdown(rows: list[Row]) -> str:
    """The rows as one Markdown table: section, check, result, ok, detail, seconds."""
    lines = ["| section | check | result | | detail | s |", "|---|---|---|---|---|---:|"]
    for row in rows:
        detail = row.detail.replace("|", "/")
        lines.append(f"| {row.section} | {row.check} | {row.result} | {row.mark} | {detail} | {row.seconds:.1f} |")
    return "\n".join(lines) + "\n"


def failures(rows: list[Row]) -> list[Row]:
    return [row for row in rows if row.ok is False]


def write(path: Path, rows: list[Row], environment: dict[str, Any]) -> None:
    """``path`` (JSON, written atomically): the environment, every row and the table as text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"environment": environment, "rows": [asdict(row) for row in rows],
               "failed": len(failures(rows)), "table": markdown(rows)}
    atomic.write_text(path, json.dumps(payload, indent=1) + "\n")
