"""A run depends on the code it runs: its cell's, model's and task's modules (and what they
import) and the shared training loop, and on nothing else (what Snakemake then reruns is tested
in a copy of the project in tests/test_workflow.py, a cell of one's own)."""
from __future__ import annotations

import shutil
from pathlib import Path

from rnnrepro.plan import code_identity
from rnnrepro.plan.code_identity import code_files, run_code_identity, run_modules


def copy_of_package(tmp_path: Path) -> Path:
    copy = tmp_path / "rnnrepro"
    shutil.copytree(code_identity.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def files_of(task: str, model: str, cell: str, package: Path = code_identity.PACKAGE) -> set[str]:
    return {p.relative_to(package).as_posix() for p in code_files(run_modules(task, model, cell), package)}


def identity(package: Path, *run: str) -> str:
    run_code_identity.cache_clear()
    code_files.cache_clear()
    return run_code_identity(*run, package=package)


def test_a_run_executes_its_cell_model_task_and_the_training_loop_only():
    files = files_of("adding", "basic", "gru")
    assert {"train.py", "layers.py", "cells/gru.py", "cells/gru_loop.py", "models/basic.py", "tasks/adding.py",
            "cells/__init__.py", "tasks/base.py"} <= files
    assert not files & {"cells/lstm.py", "cells/elstm.py", "cells/srn.py", "cells/variants.py", "models/parser.py",
                        "tasks/pos.py", "report/study.py", "studies.py", "aggregate.py"}
    # a variant is its own module's code and its class's: PRU is variants.py and lstm.py, not elstm.py
    pru = files_of("adding", "basic", "pru")
    assert {"cells/variants.py", "cells/lstm.py", "cells/lstm_loop.py"} <= pru and "cells/elstm.py" not in pru
    assert "metrics/conll18.py" in files_of("dp_biaffine", "biaffine", "lstm")


def test_identity_changes_with_the_code_a_run_executes_only(tmp_path):
    package = copy_of_package(tmp_path)
    gru, lstm = ("adding", "basic", "gru"), ("adding", "basic", "lstm")
    before = {run: identity(package, *run) for run in (gru, lstm)}
    assert identity(package, *gru) == before[gru]  # stable
    (package / "report" / "render.py").write_text((package / "report" / "render.py").read_text() + "\n# edit\n")
    (package / "cells" / "mgu.py").write_text('"""A new cell file."""\nimport torch\n')
    assert {run: identity(package, *run) for run in (gru, lstm)} == before  # reports, a new cell: nothing
    (package / "cells" / "gru.py").write_text((package / "cells" / "gru.py").read_text() + "\n# a gru edit\n")
    assert identity(package, *gru) != before[gru] and identity(package, *lstm) == before[lstm]
    (package / "train.py").write_text((package / "train.py").read_text() + "\n# a loop edit\n")
    assert identity(package, *lstm) != before[lstm]


def test_the_judging_code_is_what_judging_imports_and_no_report():
    """The judge rule's code inputs (CLAIMS_CODE) are the claims package and every module it
    imports: an edit of the reversal bound (bounds.py, read by drnn's paper check) judges again,
    the report's code is apart (editing a figure judges nothing again), and every module a judging
    file imports is in the list."""
    from rnnrepro.plan.code_identity import imported_files, package_code

    claims = package_code("claims")
    names = {p.relative_to(code_identity.PACKAGE).as_posix() for p in claims}
    assert {"bounds.py", "claims/papers/drnn.py", "claims/regime.py", "tables.py", "labels.py"} <= names
    assert not any(name.startswith("report/") for name in names) and "tasks/reversal.py" not in names
    assert all(set(imported_files(path)) <= set(claims) for path in claims)
    report = {p.relative_to(code_identity.PACKAGE).as_posix() for p in package_code("report")}
    assert {"report/study.py", "study_data.py", "claims/verdict.py"} <= report
    # the report runs no check and no analysis (the registries' __init__ modules come with the plan's validation)
    assert not [name for name in report if name.startswith(("claims/kinds/", "claims/papers/"))
                or name in ("claims/judge.py", "claims/regime.py", "claims/study.py")
                or (name.startswith("analyses/") and name != "analyses/__init__.py")]
    rules = (Path(__file__).parents[1] / "workflow" / "rules" / "common.smk").read_text()
    assert 'CLAIMS_CODE = [str(p) for p in package_code("claims", SOURCE)]' in rules


def test_dvc_train_stage_depends_on_every_folder_of_run_code(repo):
    """dvc.yaml's train deps under src/ are TRAINING_CODE, and every file any run can execute
    lies in them, so DVC runs Snakemake whenever some run's code changed."""
    import yaml

    from rnnrepro.cells import CELLS
    from rnnrepro.models import MODELS
    from rnnrepro.plan.code_identity import TRAINING_CODE
    from rnnrepro.tasks import TASKS

    stages = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]
    code = {dep for dep in stages["train"]["deps"] if dep.startswith("src/")}
    assert code == {f"src/rnnrepro/{name}" for name in TRAINING_CODE}
    modules = tuple(sorted({*code_identity.SHARED_TRAINING_CODE, *(r.module_of(n) for r in (CELLS, MODELS, TASKS)
                                                                   for n in r.names())}))
    reached = {p.relative_to(code_identity.PACKAGE).as_posix() for p in code_files(modules)}
    outside = {f for f in reached if f != "__init__.py" and f.split("/")[0] not in TRAINING_CODE}
    assert not outside, outside


REPORT_STAGE_SCRIPTS = ("plan", "analysis", "aggregate", "baselines", "judge", "report", "index")


def test_dvc_report_stage_depends_on_every_file_its_scripts_reach(repo):
    """Every module the report stage's scripts import, followed through the package (and every
    module of the packages that register theirs by discovery: analyses, claims, report), lies under
    one of dvc.yaml's report deps, and each script is a dep: an edit of any of them makes
    `dvc repro` run the stage again."""
    import ast

    import yaml

    from rnnrepro.plan.code_identity import package_code

    deps = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]["report"]["deps"]
    modules = set()
    for name in REPORT_STAGE_SCRIPTS:
        script = f"workflow/scripts/{name}.py"
        assert script in deps
        for node in ast.walk(ast.parse((repo / script).read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("rnnrepro"):
                modules.add(node.module)
    assert {"rnnrepro.claims.judge_study", "rnnrepro.report.index_page", "rnnrepro.plan.kept"} <= modules
    files = set(code_files(tuple(sorted(modules))))
    files |= {path for package in ("analyses", "claims", "report") for path in package_code(package)}
    reached = {"src/rnnrepro/" + p.relative_to(code_identity.PACKAGE).as_posix() for p in files}
    assert "src/rnnrepro/plan/studies.py" in reached and "src/rnnrepro/bounds.py" in reached
    outside = {f for f in reached if not any(f == dep or f.startswith(dep + "/") for dep in deps)}
    assert not outside, outside
