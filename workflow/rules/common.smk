# Helpers shared by the rules (no rules here). The configuration is validated and every
# study expanded into its runs when the workflow is parsed, so a bad key, name or value
# fails before any job starts.
from pathlib import Path

from rnnrepro.code_identity import training_code_identity
from rnnrepro.config_check import ConfigError
from rnnrepro.data.prepared import dataset_identity
from rnnrepro.studies import load_workflow_config
from rnnrepro.tasks import TASKS

try:
    config, STUDIES = load_workflow_config(
        config, Path(workflow.basedir) / "workflow" / "schemas", Path(workflow.basedir) / "config" / "studies"
    )
except ConfigError as error:
    raise WorkflowError(f"Configuration error: {error}") from None

RESULTS = config["results"]
TRAINING_CODE_IDENTITY = training_code_identity()  # a param of every run: changed code reruns it


wildcard_constraints:
    study="|".join(STUDIES) or "no-study",
    run=r"task~[^/]+/model~[^/]+/cell~[^/]+(/[^/~]+~[^/]+)*/seed~\d+",
    dataset=r"[A-Za-z0-9_.\-]+",
    artifact=r"[A-Za-z0-9_]+",


def run_config(wildcards):
    """The full config of one run (a params of the train rule, so changing it reruns the run)."""
    try:
        return STUDIES[wildcards.study].runs[wildcards.run]
    except KeyError:
        raise WorkflowError(f"no run {wildcards.run} in study {wildcards.study} at scale {config['scale']}")


def run_dataset_key(wildcards):
    """Key of the dataset the run's task reads, or None for synthetic tasks."""
    task = dict(run_config(wildcards)["task"])
    return TASKS[task.pop("name")].dataset(**task)


def run_dataset(wildcards):
    """Prepared dataset file the run's task reads, or nothing for synthetic tasks.

    Marked ancient: its modification time never reruns a finished run (after `dvc pull`
    file times come in any order); its content identity is a param instead (run_data_identity).
    """
    key = run_dataset_key(wildcards)
    return {"data": ancient(f"resources/prepared/{key}.json.gz")} if key else {}


def prepared_identity(wildcards):
    """Content identity of the dataset a prepare job makes."""
    return dataset_identity(wildcards.dataset)


def run_data_identity(wildcards):
    """Content identity of the run's dataset (raw checksums + preparation format), or "synthetic"."""
    key = run_dataset_key(wildcards)
    return dataset_identity(key) if key else "synthetic"


def run_folder(study, run):
    return f"{RESULTS}/runs/{study}/{run}"


def study_metrics(wildcards):
    """metrics.json of every run of a study."""
    return [f"{run_folder(wildcards.study, run)}/metrics.json" for run in STUDIES[wildcards.study].runs]


def analysis_config(wildcards):
    """Params of an analysis artifact (a params of the analysis rule, so changing it reruns it)."""
    try:
        return STUDIES[wildcards.study].analyses[wildcards.artifact]
    except KeyError:
        raise WorkflowError(f"no analysis artifact {wildcards.artifact} in study {wildcards.study}")


def study_analyses(wildcards):
    """CSV of every analysis artifact of a study, by artifact."""
    return {artifact: f"{RESULTS}/analyses/{wildcards.study}/{artifact}.csv"
            for artifact in STUDIES[wildcards.study].analyses}


def study_analysis_files(wildcards):
    return list(study_analyses(wildcards).values())


def all_runs(wildcards=None):
    return [f"{run_folder(study, run)}/metrics.json" for study in STUDIES for run in STUDIES[study].runs]


def all_reports(wildcards=None):
    return [f"{RESULTS}/reports/{study}.html" for study in STUDIES]


def all_datasets(wildcards=None):
    keys = set()
    for study in STUDIES.values():
        for run in study.runs.values():
            task = dict(run["task"])
            key = TASKS[task.pop("name")].dataset(**task)
            if key:
                keys.add(key)
    return [f"resources/prepared/{key}.json.gz" for key in sorted(keys)]


def published_values(wildcards):
    """The study's published numbers, reports/published/<study>_*.csv."""
    return sorted(str(p) for p in Path("reports/published").glob(f"{wildcards.study}_*.csv"))


def report_parameters(wildcards):
    """Parameters of a study's report notebook (papermill, as YAML values)."""
    study = STUDIES[wildcards.study]
    return {
        "study": study.name,
        "title": study.title,
        "scale": study.scale,
        "scale_note": study.scale_note,
        "table": f"{RESULTS}/tables/{study.name}/runs.csv",
        "curves": f"{RESULTS}/tables/{study.name}/curves.csv",
        "published_dir": "reports/published",
        "analyses": study_analyses(wildcards),
        "artifacts": {
            name: {"title": artifact.get("title", name), "claim": artifact.get("claim", "")}
            for name, artifact in study.artifacts.items()
        },
    }
