# Helpers shared by the rules (no rules here). The configuration is validated and every
# study expanded into its runs when the workflow is parsed, so a bad key, name or value
# fails before any job starts. That parse-time plan is the only one: the summary and the
# report read it from plans/<study>.json. Paths come from rnnrepro.layout (results/<scale>/...).
from pathlib import Path
from types import SimpleNamespace

from rnnrepro.code_identity import analysis_code_identity, packed_loop_identity, run_code_identity
from rnnrepro.config_check import ConfigError
from rnnrepro.data.prepared import dataset_identity
from rnnrepro.layout import Layout
from rnnrepro.packing import Packing, plan_packs
from rnnrepro.studies import load_workflow_config, plan_digest_of, runs_of, write_plan
from rnnrepro.tasks import TASKS

try:
    config, STUDIES = load_workflow_config(
        config, Path(workflow.basedir) / "workflow" / "schemas", Path(workflow.basedir) / "config" / "studies"
    )
except ConfigError as error:
    raise WorkflowError(f"Configuration error: {error}") from None

SCALE = config["scale"]
LAYOUT = Layout(config["results"], SCALE)
OUT = LAYOUT.root
RUNS = runs_of(STUDIES)
SOURCE = Path(workflow.basedir, "src", "rnnrepro")
# The code that judges the claims (what summarise runs): the claims package and the modules below it that
# it imports. The report's code (its figures, tables and notebooks' helpers) is apart, so that editing
# a plot renders the reports again without judging every claim again.
CLAIMS_CODE = sorted([*(str(p) for p in (SOURCE / "claims").rglob("*.py")),
                      *(str(SOURCE / name) for name in ("labels.py", "tables.py", "metrics/formats.py",
                                                        "metrics/directions.py", "metrics/items.py", "studies.py",
                                                        "study_metrics.py", "config_check.py", "registry.py",
                                                        "atomic.py", "tasks/reversal.py"))])
REPORT_CODE = sorted(str(p) for p in (SOURCE / "report").rglob("*.py"))


wildcard_constraints:
    study="|".join(STUDIES) or "no-study",
    run=r"task~[^/]+/model~[^/]+/cell~[^/]+/cfg~[0-9a-f]{10}/seed~\d+",
    dataset=r"[A-Za-z0-9_.\-]+",
    artifact=r"[A-Za-z0-9_]+",


def run_config(wildcards):
    """The identity of one run: task, model, cell, train settings and seed."""
    try:
        return RUNS[wildcards.run]
    except KeyError:
        raise WorkflowError(f"no run {wildcards.run} at scale {SCALE}")


def run_params(wildcards):
    """What decides a run's numbers besides the code: its identity (``config``) and its dataset's
    content identity (``data``). A param of the train rule, so a change reruns the run; also the
    key its checkpoint must match."""
    identity = run_config(wildcards)
    key = dataset_key_of(identity)
    return {"config": identity, "data": dataset_identity(key) if key else "synthetic"}


def run_code(wildcards):
    """The identity of the code the run executes (its cell's, model's and task's modules and the
    training loop, rnnrepro.code_identity): a param, so that changing that code reruns it."""
    identity = run_config(wildcards)
    return run_code_identity(identity["task"]["name"], identity["model"]["name"], identity["cell"]["name"])


def dataset_key_of(identity):
    """Key of the dataset a run's task reads, or None for synthetic tasks."""
    task = dict(identity["task"])
    return TASKS[task.pop("name")].dataset(**task)


def prepared_file(key):
    return f"resources/prepared/{key}.json.gz"


def run_dataset(wildcards):
    """Prepared dataset file the run's task reads, or nothing for synthetic tasks.

    Marked ancient: its modification time never reruns a finished run (after `dvc pull`
    file times come in any order); its content identity is a param instead (run_params).
    """
    key = dataset_key_of(run_config(wildcards))
    return {"data": ancient(prepared_file(key))} if key else {}


def prepared_identity(wildcards):
    """Content identity of the dataset a prepare job makes."""
    return dataset_identity(wildcards.dataset)


def run_path(folder):
    return LAYOUT.run(folder)


def study_uses(wildcards):
    """Every (artifact, run folder, labels) of a study: how the aggregation labels the runs."""
    return [{"artifact": artifact, "folder": run_path(use.folder), "labels": use.labels}
            for artifact, use in STUDIES[wildcards.study].uses()]


def study_metrics(wildcards):
    """metrics.json of every run of a study."""
    return sorted({f"{run_path(folder)}/metrics.json" for folder in STUDIES[wildcards.study].runs})


def the_artifact(wildcards):
    try:
        return STUDIES[wildcards.study].artifacts[wildcards.artifact]
    except KeyError:
        raise WorkflowError(f"no artifact {wildcards.artifact} in study {wildcards.study}")


def analysis_config(wildcards):
    """Params of an analysis artifact (a param of the analysis rule, so changing it reruns it)."""
    return the_artifact(wildcards).analysis


def analysis_code(wildcards):
    """The identity of the analysis's code (a param: changing it recomputes the artifact)."""
    return analysis_code_identity(the_artifact(wildcards).analysis["name"])


def analysis_runs(wildcards):
    """The trained runs an analysis reads: folder, labels and identity of each."""
    return [{"folder": run_path(use.folder), "labels": use.labels, "identity": RUNS[use.folder]}
            for use in the_artifact(wildcards).reads]


def analysis_inputs(wildcards):
    """Final models of the runs an analysis reads, the datasets they were trained on, and the
    datasets the analysis names itself (``datasets``)."""
    artifact = the_artifact(wildcards)
    reads = artifact.reads
    models = [f"{run_path(use.folder)}/model.pt" for use in reads]
    keys = {key for use in reads if (key := dataset_key_of(RUNS[use.folder]))}
    keys = sorted(keys | set(artifact.analysis.get("datasets") or []))
    return {"models": models, "data": [ancient(prepared_file(key)) for key in keys]}


def plan_digest(wildcards):
    """sha256 of the study's plan (what its summary and report read, plans/<study>.json)."""
    return plan_digest_of(STUDIES[wildcards.study])


def study_inputs(wildcards):
    """The files a study's summary and report read, by name: its plan, tables, the runs' test
    items, published numbers and one analysis_<artifact> per analysis
    (rnnrepro.claims.study.StudyInputs)."""
    study = wildcards.study
    paper_cost = Layout(config["results"], "paper").cost()
    return {"plan": LAYOUT.plan(study), "table": LAYOUT.table(study, "runs"),
            "curves": LAYOUT.table(study, "curves"), "provenance": LAYOUT.table(study, "provenance"),
            "test_items": LAYOUT.items(study),
            "published": published_values(wildcards),
            # the paper scale's cost plan, when measured: what the seeds that decide a claim cost there
            **({"paper_cost": paper_cost} if Path(paper_cost).exists() else {}),
            **{f"analysis_{artifact}": LAYOUT.analysis(study, artifact) for artifact in STUDIES[study].analyses}}


def report_inputs(wildcards):
    """What the report reads: the study's inputs and the verdicts its summary judged (not the
    test items: only the summary judges, so the report neither reads nor waits for them)."""
    inputs = {name: path for name, path in study_inputs(wildcards).items() if name not in ("test_items", "paper_cost")}
    return {**inputs, "verdicts": LAYOUT.verdicts(wildcards.study, "csv")}


def all_runs(wildcards=None):
    return [f"{run_path(folder)}/model.pt" for folder in RUNS]


def all_reports(wildcards=None):
    """Every study's report and the index page over them."""
    return [LAYOUT.report(study) for study in STUDIES] + [LAYOUT.index]


def all_datasets(wildcards=None):
    keys = {key for identity in RUNS.values() if (key := dataset_key_of(identity))}
    keys |= {key for study in STUDIES.values() for analysis in study.analyses.values()
             for key in analysis.get("datasets") or []}
    return [prepared_file(key) for key in sorted(keys)]


def published_values(wildcards):
    """The study's published numbers, reports/published/<study>_*.csv."""
    return sorted(str(p) for p in Path("reports/published").glob(f"{wildcards.study}_*.csv"))


# -- packs of small runs (workflow/rules/pack.smk; src/rnnrepro/packing.py) ----------------------
PACKS = plan_packs(RUNS, Packing.from_config(config["packing"]))


def pack_params(pack):
    """Each member's run params (config and dataset identity), as the train rule's."""
    return [run_params(SimpleNamespace(run=folder)) for folder in pack.members]


def pack_code(pack):
    """The identity of the code a pack's runs execute: a run's (run_code) and the packed loop's (a param)."""
    return f"{run_code(SimpleNamespace(run=pack.members[0]))} packed:{packed_loop_identity()}"


def pack_dataset(pack):
    """The prepared dataset the pack's runs read (packable tasks share one, or none)."""
    return run_dataset(SimpleNamespace(run=pack.members[0]))


def share_train_settings(rule_name):
    """The profile's set-resources and set-threads for `train` (profiles/slurm: a GPU and 4 CPUs per
    job) apply to each pack too, since a pack is a training job. Snakemake looks them up by name
    when it defines each one, in these parsed tables (snakemake is pinned in requirements.txt)."""
    settings = workflow.resource_settings
    for table in (settings._parsed_overwrite_resources, settings._parsed_overwrite_threads):
        if "train" in table:
            table[rule_name] = table["train"]
