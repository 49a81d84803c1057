"""pip's package sources as uv's arguments, for scripts/setup.sh (uv does not read pip's configuration).

    python scripts/pip_settings_for_uv.py          # uv pip install arguments, one per line
    python scripts/pip_settings_for_uv.py --cert   # pip's certificate bundle, if one is set

Reads ``pip config list`` (its files and PIP_* variables, as ``scope.key='value'`` lines) and
passes on where packages come from: find-links, index-url, extra-index-url and constraint. A
setting may hold several values separated by white space, as pip reads them; each value is
passed once. pip takes one index URL: the first listed (``:env:``, its PIP_INDEX_URL, sorts
before the files' scopes and wins in pip too).
"""
from __future__ import annotations

import ast
import subprocess
import sys

FLAGS = {"find-links": "--find-links", "index-url": "--index-url",
         "extra-index-url": "--extra-index-url", "constraint": "--constraint"}


def settings(listed: str) -> dict[str, list[str]]:
    """``pip config list`` output -> {key: its values, in order, each once}."""
    found: dict[str, list[str]] = {}
    for line in listed.splitlines():
        key, separator, value = line.partition("=")
        if not separator:
            continue
        values = found.setdefault(key.rsplit(".", 1)[-1], [])
        values += [item for item in ast.literal_eval(value).split() if item not in values]
    return found


def uv_arguments(listed: str) -> list[str]:
    """The ``uv pip install`` arguments for pip's package sources in ``listed``."""
    found = settings(listed)
    arguments = []
    for key, flag in FLAGS.items():
        values = found.get(key, [])
        for value in values[:1] if key == "index-url" else values:
            arguments += [flag, value]
    return arguments


def main(argv: list[str]) -> int:
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                            capture_output=True, text=True, check=True).stdout
    if argv == ["--cert"]:
        print(next(iter(settings(listed).get("cert", [])), ""))
    elif not argv:
        print("\n".join(uv_arguments(listed)))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
