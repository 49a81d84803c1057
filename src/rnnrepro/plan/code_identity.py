"""The identity of the code a run executes, so that changing that code, and only that code,
reruns the run.

Snakemake reruns a job when a ``params`` value changed since the job ran. The train rule takes
:func:`run_code_identity` as one: a sha256 over the path and bytes of every module of this
package that the run executes, found by following the ``import`` statements (module level and
inside functions, read with :mod:`ast`, never executed) from

* the shared training code (:data:`SHARED_TRAINING_CODE`: the training loop and what it imports);
* the module that registered the run's cell, the one that registered its model, and the one
  that registered its task (:meth:`rnnrepro.registry.Registry.module_of`).

A package's ``__init__.py`` is part of the code of every module under it, but the modules it
imports by discovery (:func:`rnnrepro.registry.import_all`) are not followed: that is what lets a
new cell, model or task file register itself without changing the code of any finished run.
So adding a file retrains nothing, editing a cell's file retrains the runs of the cells that
file defines (and of cells built on it: the LSTM's file is the code of PRU and ELSTM too), and
editing reports, aggregation or the workflow retrains nothing. A docstring edit counts as a
change. Analyses take :func:`analysis_code_identity` (their module's code and the training
code). To keep finished runs after a change that cannot alter them, run Snakemake with
``--rerun-triggers mtime input`` once.
"""
from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
NAME = "rnnrepro"
#: The code every run executes whatever its cell, model and task.
SHARED_TRAINING_CODE = (f"{NAME}.train",)
#: The loop of runs trained packed (rnnrepro.packing), part of a packed run's code.
PACKED_TRAINING_CODE = f"{NAME}.packing"
#: Folders and files holding code a run can execute, and the record its pack's or bundle's job writes
#: (the DVC train stage's code deps).
TRAINING_CODE = ("cells", "layers.py", "models", "tasks", "metrics", "data", "train.py", "packing.py", "registry.py",
                 "atomic.py", "bounds.py", "plan/jobs.py", "allocator.py")


@functools.lru_cache(maxsize=None)
def module_file(module: str, package: Path = PACKAGE) -> Path | None:
    """The file of a dotted module name of this package (a package's ``__init__.py``), or None."""
    parts = module.split(".")
    if parts[0] != NAME:
        return None
    base = package.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([NAME, *parts])


@functools.lru_cache(maxsize=None)
def imported_modules(path: Path, package: Path = PACKAGE) -> frozenset[str]:
    """The modules of this package that ``path`` imports (absolute or relative, anywhere in it),
    plus the package ``__init__`` modules above it. Read once per file and process (planning the
    paper scale asks for the code of 116 task, model and cell triples, sharing most files)."""
    module = _module_name(path, package)
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    found = {".".join(here[:i]) for i in range(1, len(here) + 1)}  # the packages above
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == NAME}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != NAME:
                continue
            found.add(source)
            found |= {f"{source}.{alias.name}" for alias in node.names}  # `from . import x`: a module x
    return frozenset(name for name in found if module_file(name, package) is not None) - {module}


@functools.lru_cache(maxsize=None)
def code_files(modules: tuple[str, ...], package: Path = PACKAGE) -> tuple[Path, ...]:
    """Every file of the modules ``modules`` and of the modules they import, sorted."""
    seen: set[Path] = set()
    todo = [module_file(name, package) for name in modules]
    while todo:
        path = todo.pop()
        if path is None or path in seen:
            continue
        seen.add(path)
        todo += imported_files(path, package)
    return tuple(sorted(seen))


@functools.lru_cache(maxsize=None)
def imported_files(path: Path, package: Path = PACKAGE) -> list[Path]:
    """The files of the modules ``path`` imports (:func:`imported_modules`), in a fixed order."""
    return [file for file in map(functools.partial(module_file, package=package),
                                 sorted(imported_modules(path, package))) if file is not None]


def digest(files: tuple[Path, ...], package: Path = PACKAGE) -> str:
    """sha256 of the relative path and content of each file, in order."""
    hashed = hashlib.sha256()
    for path in files:
        hashed.update(path.relative_to(package).as_posix().encode() + b"\0")
        hashed.update(path.read_bytes() + b"\0")
    return hashed.hexdigest()


def run_modules(task: str, model: str, cell: str) -> tuple[str, ...]:
    """The modules a run of this task, model and cell starts from (see the module docstring)."""
    from ..cells import CELLS
    from ..models import MODELS
    from ..tasks import TASKS

    return tuple(sorted({*SHARED_TRAINING_CODE, TASKS.module_of(task), MODELS.module_of(model),
                         CELLS.module_of(cell)}))


@functools.lru_cache(maxsize=None)
def run_code_identity(task: str, model: str, cell: str, package: Path = PACKAGE) -> str:
    """sha256 of the code a run of ``task``, ``model`` and ``cell`` executes."""
    return digest(code_files(run_modules(task, model, cell), package), package)


@functools.lru_cache(maxsize=None)
def packed_loop_identity(package: Path = PACKAGE) -> str:
    """sha256 of the packed training loop (rnnrepro.packing) and what it imports: with the run's
    own (:func:`run_code_identity`), the code a packed run executes."""
    return digest(code_files((PACKED_TRAINING_CODE,), package), package)


def copied_rows_identity(package: Path = PACKAGE) -> str:
    """sha256 of the code that copies another analysis artifact's rows (``analysis_from``:
    rnnrepro.plan.analysis_from), the code such an artifact's job executes."""
    return digest(code_files((f"{NAME}.plan.analysis_from",), package), package)


def package_code(subpackage: str, package: Path = PACKAGE) -> tuple[Path, ...]:
    """Every file of ``subpackage`` (``claims``, ``report``: all its modules, those registered by
    discovery included) and of the modules they import: the code a rule running it depends on,
    derived from the imports, so that editing any module judging reads (the reversal bound in
    ``bounds.py``) judges again, and none it does not read is listed."""
    modules = tuple(sorted(_module_name(path, package) for path in (package / subpackage).rglob("*.py")))
    return code_files(modules, package)


def analysis_code_identity(analysis: str, package: Path = PACKAGE) -> str:
    """sha256 of an analysis's module and what it imports, and of the shared training code
    (which rebuilds the trained models it reads)."""
    from ..analyses import ANALYSES

    return digest(code_files(tuple(sorted({*SHARED_TRAINING_CODE, ANALYSES.module_of(analysis)})), package), package)
