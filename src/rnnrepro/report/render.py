"""Render a report notebook to HTML: execute it with papermill, convert it with nbconvert.

Command line::

    python -m rnnrepro.report reports/elstm.ipynb elstm.html -p scale=ci \
        [--params params.yaml] [--executed elstm.executed.ipynb] [--cwd REPO_ROOT]

The parameters (a YAML mapping) are injected into the notebook's cell tagged ``parameters``,
which must be exactly one code cell (checked before anything runs: papermill itself would only
warn, and the notebook would run with its own defaults).
The notebook runs in the ``python3`` kernel with the repository root as working directory, so
the relative paths among its parameters resolve as in the workflow. Both outputs are written
atomically: a failed execution leaves no HTML behind.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from rnnrepro.atomic import atomic_path

KERNEL_NAME = "python3"
log = logging.getLogger("rnnrepro.report")


def package_root() -> Path:
    """The directory holding the ``rnnrepro`` package (``src`` in a source checkout)."""
    return Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def kernel_can_import_package() -> Iterator[None]:
    """Put the package's root first on ``PYTHONPATH`` while the kernel starts.

    The kernel inherits the environment but may run in another directory, where a relative
    ``PYTHONPATH=src`` would not resolve; an absolute path does.
    """
    old = os.environ.get("PYTHONPATH")
    parts = [str(package_root())] + ([old] if old else [])
    os.environ["PYTHONPATH"] = os.pathsep.join(parts)
    try:
        yield
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


#: Attempts to start a kernel: two kernels started at the same moment (two report jobs) can
#: pick the same free port, and the loser dies before its first reply; a new start succeeds.
KERNEL_STARTS = 3


PARAMETERS_TAG = "parameters"


def check_parameters_cell(notebook: str | Path) -> None:
    """A ValueError naming ``notebook`` and what is wrong unless exactly one of its cells is tagged
    ``parameters`` and that cell is a code cell: papermill injects the parameters after it, and
    without it only warns, running the notebook with its own defaults."""
    import nbformat

    cells = nbformat.read(str(notebook), as_version=4).cells
    tagged = [(index, cell.cell_type) for index, cell in enumerate(cells, 1)
              if PARAMETERS_TAG in (cell.get("metadata", {}).get("tags") or [])]
    if len(tagged) == 1 and tagged[0][1] == "code":
        return
    if not tagged:
        problem = (f"no cell is tagged {PARAMETERS_TAG!r}, so the parameters would not reach it; tag the code "
                   "cell that sets them (in Jupyter: View > Cell Toolbar > Tags)")
    elif len(tagged) > 1:
        problem = (f"{len(tagged)} cells are tagged {PARAMETERS_TAG!r} "
                   f"({', '.join(f'cell {index} ({kind})' for index, kind in tagged)}); tag only the code cell "
                   "that sets the parameters")
    else:
        problem = (f"the cell tagged {PARAMETERS_TAG!r} (cell {tagged[0][0]}) is a {tagged[0][1]} cell; tag the code "
                   "cell that sets the parameters instead")
    raise ValueError(f"notebook {notebook}: {problem}")


def execute_notebook(
    notebook: str | Path, parameters: Mapping[str, Any], output: str | Path, cwd: str | Path
) -> None:
    """Execute ``notebook`` with ``parameters`` into ``output`` (papermill, kernel ``python3``)."""
    import papermill as pm

    for attempt in range(1, KERNEL_STARTS + 1):
        try:
            with kernel_can_import_package():
                pm.execute_notebook(str(notebook), str(output), parameters=dict(parameters), kernel_name=KERNEL_NAME,
                                    cwd=str(cwd), progress_bar=False, log_output=False)
            return
        except RuntimeError as error:  # a PapermillExecutionError (a failing cell) is not retried
            if "Kernel died before replying" not in str(error) or attempt == KERNEL_STARTS:
                raise
            log.warning("the kernel died while starting (%s); starting another (attempt %d of %d)",
                        error, attempt + 1, KERNEL_STARTS)


def notebook_to_html(executed: str | Path, exclude_input: bool = True) -> str:
    """Convert an executed notebook to a standalone HTML page (code hidden by default)."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        exclude_input=exclude_input, exclude_input_prompt=True, exclude_output_prompt=True
    )
    body, _resources = exporter.from_notebook_node(nbformat.read(str(executed), as_version=4))
    return body


def render_report(
    notebook: str | Path,
    parameters: Mapping[str, Any],
    html_path: str | Path,
    executed_path: str | Path | None = None,
    cwd: str | Path | None = None,
    exclude_input: bool = True,
) -> Path:
    """Execute ``notebook`` with ``parameters`` and write the HTML report to ``html_path``.

    ``cwd`` is the directory the notebook runs in (the repository root; default: the current
    directory). The executed notebook is kept at ``executed_path`` if given. Returns the HTML path.
    """
    check_parameters_cell(notebook)
    html_path = Path(html_path)
    cwd = Path(cwd) if cwd is not None else Path.cwd()
    with tempfile.TemporaryDirectory(prefix="rnnrepro-report-") as tmpdir:
        executed = Path(tmpdir) / "executed.ipynb"
        execute_notebook(notebook, parameters, executed, cwd)
        html = notebook_to_html(executed, exclude_input)
        if executed_path is not None:
            with atomic_path(executed_path) as tmp:
                shutil.copyfile(executed, tmp)
    with atomic_path(html_path) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return html_path


def load_parameters(paths: Sequence[str | Path]) -> dict[str, Any]:
    """Merge the YAML mappings in ``paths`` (later files win)."""
    merged: dict[str, Any] = {}
    for path in paths:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: parameters must be a YAML mapping")
        merged.update(data)
    return merged


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m rnnrepro.report", description="Execute a report notebook and render it to HTML."
    )
    parser.add_argument("notebook", type=Path, help="papermill template (.ipynb)")
    parser.add_argument("html", type=Path, help="output HTML report")
    parser.add_argument(
        "--params",
        action="append",
        default=[],
        type=Path,
        metavar="YAML",
        help="YAML mapping of notebook parameters (repeatable)",
    )
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE",
                        help="one notebook parameter, e.g. -p scale=ci (repeatable; wins over --params)")
    parser.add_argument("--executed", type=Path, default=None, help="also keep the executed notebook here")
    parser.add_argument(
        "--cwd", type=Path, default=None, help="directory the notebook runs in (default: current directory)"
    )
    parser.add_argument("--show-code", action="store_true", help="keep the code cells in the HTML")
    args = parser.parse_args(argv)
    parameters = load_parameters(args.params)
    for item in args.parameter:
        name, sep, value = item.partition("=")
        if not sep:
            parser.error(f"-p {item!r}: write NAME=VALUE")
        parameters[name] = yaml.safe_load(value)
    render_report(
        args.notebook,
        parameters,
        args.html,
        args.executed,
        args.cwd,
        exclude_input=not args.show_code,
    )
    print(f"wrote {args.html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
