# Helpers shared by the rules (no rules here). The configuration is validated and every
# study expanded into its runs when the workflow is parsed, so a bad key, name or value
# fails before any job starts. That parse-time plan is the only one: judging and the
# report read it from plans/<study>.json. It is kept in .snakemake/rnnrepro/ while the
# settings, studies and code it comes from are unchanged (rnnrepro.plan.kept).
# Paths come from rnnrepro.plan.layout (results/<scale>/...).
import inspect
import sys
from pathlib import Path
from types import SimpleNamespace

from snakemake.common import overwrite_function_params

from rnnrepro.cost import TrainResources
from rnnrepro.data.prepared import dataset_identity
from rnnrepro.plan.code_identity import package_code
from rnnrepro.plan.config_check import ConfigError
from rnnrepro.plan.jobs import RECORDED, Pack
from rnnrepro.plan.kept import load_plan
from rnnrepro.plan.layout import Layout, prepared_file as layout_prepared_file
from rnnrepro.plan.studies import RUN_FOLDER_PATTERN, plan_digest_of


def rule_function(function):
    """Mark ``function`` as an input, params or resources function of a rule. Snakemake reads such a
    function's signature every time it calls it (``inspect.signature``, about 10 µs; the paper
    plan calls them 23,000 times); this reads it once and hands it to Snakemake
    (``snakemake.common.overwrite_function_params``, which it consults first)."""
    overwrite_function_params(function, inspect.signature(function).parameters)
    return function


try:
    PLAN = load_plan(config, Path(workflow.basedir))
except ConfigError as error:
    raise WorkflowError(f"Configuration error: {error}") from None

config = PLAN.config
STUDIES = PLAN.studies
SCALE = config["scale"]
LAYOUT = Layout(config["results"], SCALE)
OUT = LAYOUT.root
RUNS = PLAN.runs
SOURCE = Path(workflow.basedir, "src", "rnnrepro")
# The code that judges the claims (what the judge job runs): the claims package and every module it imports,
# followed through its imports (rnnrepro.plan.code_identity.package_code). The report's code is the report
# package and what it imports (the study's data, the verdicts' words), no check: editing a plot renders the
# reports again without judging any claim again, and editing a check re-renders a report only through the
# verdicts it changes.
CLAIMS_CODE = [str(p) for p in package_code("claims", SOURCE)]
REPORT_CODE = [str(p) for p in package_code("report", SOURCE)]
# The code that computes the tasks' trivial baselines (the baselines rule): the tasks package.
TASK_CODE = sorted(str(p) for p in (SOURCE / "tasks").rglob("*.py"))


wildcard_constraints:
    study="|".join(STUDIES) or "no-study",
    run=RUN_FOLDER_PATTERN,
    dataset=r"[A-Za-z0-9_.\-]+",
    artifact=r"[A-Za-z0-9_]+",
    job=r"(?:pack|bundle)_[0-9a-f]{10}",


def run_config(wildcards):
    """The identity of one run: task, model, cell, train settings and seed."""
    try:
        return RUNS[wildcards.run]
    except KeyError:
        raise WorkflowError(f"no run {wildcards.run} at scale {SCALE}")


@rule_function
def run_params(wildcards):
    """What decides a run's numbers besides the code: its identity (``config``) and its dataset's
    content identity (``data``). A param of the train rule, so a change reruns the run; also the
    key its checkpoint must match."""
    identity = run_config(wildcards)
    key = dataset_of(wildcards.run)
    return {"config": identity, "data": dataset_identity(key) if key else "synthetic"}


@rule_function
def run_code(wildcards):
    """The identity of the code the run executes (its cell's, model's and task's modules and the
    training loop, rnnrepro.plan.code_identity): a param, so that changing that code reruns it."""
    run_config(wildcards)  # a run of the plan
    return PLAN.run_codes[wildcards.run]


@rule_function
def run_runtime(wildcards):
    """A train job's runtime (minutes), from the cost table (cost.smk, TRAIN_RESOURCES)."""
    return TRAIN_RESOURCES.runtime(wildcards)


@rule_function
def run_memory(wildcards):
    """A train job's mem_mb, from the cost table (a resource only when there is one: TRAIN_MEMORY)."""
    return TRAIN_RESOURCES.mem_mb(wildcards)


def dataset_of(folder):
    """Key of the prepared dataset run ``folder``'s task reads, or None for synthetic tasks."""
    return PLAN.dataset_keys[folder]


def prepared_file(key):
    """The prepared dataset ``key`` (rnnrepro.plan.layout.prepared_file), as the rules name it."""
    return str(layout_prepared_file(key))


@rule_function
def run_dataset(wildcards):
    """Prepared dataset file the run's task reads, or nothing for synthetic tasks.

    Marked ancient: its modification time never reruns a finished run (after `dvc pull`
    file times come in any order); its content identity is a param instead (run_params).
    """
    run_config(wildcards)  # a run of the plan
    key = dataset_of(wildcards.run)
    return {"data": ancient(prepared_file(key))} if key else {}


@rule_function
def prepared_identity(wildcards):
    """Content identity of the dataset a prepare job makes."""
    return dataset_identity(wildcards.dataset)


def run_path(folder):
    return LAYOUT.run(folder)


@rule_function
def study_uses(wildcards):
    """Every (artifact, run folder, labels) of a study: how the aggregation labels the runs."""
    return [{"artifact": artifact, "folder": run_path(use.folder), "labels": use.labels}
            for artifact, use in STUDIES[wildcards.study].uses()]


@rule_function
def study_task_uses(wildcards):
    """Every (artifact, labels) of a study's runs with the run's task and prepared data: what the
    baselines rule computes each task's trivial baselines from."""
    return [{"artifact": artifact, "labels": use.labels, "task": RUNS[use.folder]["task"],
             "data": prepared_file(key) if (key := dataset_of(use.folder)) else None}
            for artifact, use in STUDIES[wildcards.study].uses()]


@rule_function
def study_task_data(wildcards):
    """The prepared datasets a study's tasks read (ancient: their content identity is in the runs')."""
    keys = sorted({key for _, use in STUDIES[wildcards.study].uses() if (key := dataset_of(use.folder))})
    return {"data": [ancient(prepared_file(key)) for key in keys]}


@rule_function
def study_metrics(wildcards):
    """metrics.json of every run of a study (its pack's or bundle's record for a run trained in one)."""
    return sorted({trained_output(folder, "metrics.json") for folder in STUDIES[wildcards.study].runs})


def the_artifact(wildcards):
    try:
        return STUDIES[wildcards.study].artifacts[wildcards.artifact]
    except KeyError:
        raise WorkflowError(f"no artifact {wildcards.artifact} in study {wildcards.study}")


@rule_function
def analysis_config(wildcards):
    """Params of an analysis artifact (a param of the analysis rule, so changing it reruns it)."""
    return the_artifact(wildcards).analysis


@rule_function
def analysis_code(wildcards):
    """The identity of the analysis's code (a param: changing it recomputes the artifact); of the
    copying code for an artifact whose rows are another's (``analysis_from``: that one's code
    recomputes it, and its new table, an input, reruns the copy)."""
    artifact = the_artifact(wildcards)
    if artifact.rows_from is not None:
        return f"copied:{PLAN.copied_rows}"
    return PLAN.analysis_codes[artifact.analysis["name"]]


@rule_function
def analysis_runs(wildcards):
    """The trained runs an analysis reads: folder, labels and identity of each."""
    return [{"folder": run_path(use.folder), "labels": use.labels, "identity": RUNS[use.folder]}
            for use in the_artifact(wildcards).reads]


@rule_function
def analysis_inputs(wildcards):
    """Final models of the runs an analysis reads, the datasets they were trained on, and the
    datasets the analysis names itself (``datasets``); or, for an artifact whose rows are another's
    (``analysis_from``, rnnrepro.plan.analysis_from), that artifact's table alone."""
    artifact = the_artifact(wildcards)
    if artifact.rows_from is not None:
        return {"rows_of": LAYOUT.analysis(wildcards.study, artifact.rows_from)}
    reads = artifact.reads
    models = sorted({trained_output(use.folder, "model.pt") for use in reads})
    keys = {key for use in reads if (key := dataset_of(use.folder))}
    keys = sorted(keys | set(artifact.analysis.get("datasets") or []))
    return {"models": models, "data": [ancient(prepared_file(key)) for key in keys]}


@rule_function
def plan_digest(wildcards):
    """sha256 of the study's plan (what its judging and report read, plans/<study>.json)."""
    return plan_digest_of(STUDIES[wildcards.study])


@rule_function
def study_inputs(wildcards):
    """The files a study's judging and report read, by name: its plan, tables, the runs' test
    items, published numbers and one analysis_<artifact> per analysis
    (rnnrepro.claims.study.StudyInputs)."""
    study = wildcards.study
    paper_cost = Layout(config["results"], "paper").cost()
    return {"plan": LAYOUT.plan(study), "table": LAYOUT.table(study, "runs"),
            "curves": LAYOUT.table(study, "curves"), "provenance": LAYOUT.table(study, "provenance"),
            "test_items": LAYOUT.items(study), "baselines": LAYOUT.table(study, "baselines"),
            "published": published_values(wildcards),
            # the paper scale's cost table, when measured: what the seeds that decide a claim cost there
            **({"paper_cost": paper_cost} if Path(paper_cost).exists() else {}),
            **{f"analysis_{artifact}": LAYOUT.analysis(study, artifact) for artifact in STUDIES[study].analyses}}


@rule_function
def report_inputs(wildcards):
    """What the report reads: the study's inputs and the verdicts the judge rule wrote (not the
    test items: only the judge rule reads them, so the report neither reads nor waits for them)."""
    inputs = {name: path for name, path in study_inputs(wildcards).items() if name not in ("test_items", "paper_cost")}
    return {**inputs, "verdicts": LAYOUT.verdicts(wildcards.study, "csv")}


@rule_function
def all_runs(wildcards=None):
    return sorted({trained_output(folder, "model.pt") for folder in RUNS})


@rule_function
def all_reports(wildcards=None):
    """Every study's report and the index page over them."""
    return [LAYOUT.report(study) for study in STUDIES] + [LAYOUT.index]


@rule_function
def all_datasets(wildcards=None):
    keys = {key for folder in RUNS if (key := dataset_of(folder))}
    keys |= {key for study in STUDIES.values() for analysis in study.analyses.values()
             for key in analysis.get("datasets") or []}
    return [prepared_file(key) for key in sorted(keys)]


@rule_function
def published_values(wildcards):
    """The study's published numbers, reports/published/<study>_*.csv."""
    return sorted(str(p) for p in Path("reports/published").glob(f"{wildcards.study}_*.csv"))


# -- packs and bundles: runs trained together (rule train_job, train.smk) ----------------------------


def trained_output(folder, product):
    """The file that rules reading run ``folder``'s ``product`` (metrics.json, model.pt) ask for,
    the file itself when the run trains alone (rule train), else the record its pack's or
    bundle's job writes last, ``jobs/<name>/trained.json`` (rnnrepro.plan.jobs), so that training
    the pack or bundle again reruns what reads its runs. A pack or a bundle is one rule with a
    wildcard whose one output is that record, rather than a rule per job declaring every member's
    files. So planning the paper plan matches one rule per file asked for, not 1,389 rules, and
    makes no `train` job for each of its 4,741 packed or bundled runs only to drop it for the
    pack's or bundle's.
    """
    name = TRAINED_IN.get(folder)
    return LAYOUT.run(folder, product) if name is None else trained_record(name)


def check_records(jobs):
    """Stop, naming the record to delete, where a pack's or bundle's record exists but one of its
    runs has lost its metrics.json or model.pt since (deleted by hand): the record would stand
    for a run that is not there. Deleting the record trains the job again (its finished runs are
    rewritten from their checkpoints). At parse time, since Snakemake takes an existing file for
    done when an input function of the job that makes it fails."""
    for name, job in jobs.items():
        record = trained_record(name)
        if not Path(record).exists():
            continue
        missing = [path for folder in job.members for file in RECORDED
                   if not Path(path := LAYOUT.run(folder, file)).exists()]
        if missing:
            kind = name.split("_")[0]
            more = f" (and {len(missing) - 1} more of its runs' outputs)" if len(missing) > 1 else ""
            raise WorkflowError(f"{missing[0]} is missing{more}, though {record} records {kind} {name}'s runs as "
                                f"trained: delete {record} to train the {kind} again (its finished runs are "
                                f"rewritten from their checkpoints)")


def trained_record(name):
    """The file a pack's or bundle's job writes when all its runs are trained: their folders."""
    return LAYOUT.job(name, "trained.json")


def trained_together(wildcards):
    """The pack or bundle a job of rule train_job trains."""
    try:
        return JOBS[wildcards.job]
    except KeyError:
        raise WorkflowError(f"no pack or bundle {wildcards.job} in the plan at scale {SCALE}")


@rule_function
def job_params(wildcards):
    """Each member's run params (config and dataset identity), as the train rule's."""
    return [run_params(SimpleNamespace(run=folder)) for folder in trained_together(wildcards).members]


@rule_function
def job_folders(wildcards):
    """The members' run folders, in the order of job_params."""
    return [run_path(folder) for folder in trained_together(wildcards).members]


@rule_function
def job_codes(wildcards):
    """Each member's code identity, as the train rule's (run_code); a packed run's adds the packed
    loop's, the other code it executes."""
    job = trained_together(wildcards)
    codes = [run_code(SimpleNamespace(run=folder)) for folder in job.members]
    return [f"{code} packed:{PLAN.packed_loop}" for code in codes] if isinstance(job, Pack) else codes


@rule_function
def job_dataset(wildcards):
    """The prepared dataset a pack's or bundle's runs read (they share one, or none)."""
    return run_dataset(SimpleNamespace(run=trained_together(wildcards).members[0]))


@rule_function
def job_runtime(wildcards):
    """Runtime (minutes) of a pack or a bundle: its runs' sum and one allowance (cost.smk)."""
    return TRAIN_RESOURCES.pack_runtime(trained_together(wildcards).members)


@rule_function
def job_memory(wildcards):
    """``mem_mb`` of a pack (its runs at once) or a bundle (its largest run), from the cost table."""
    job = trained_together(wildcards)
    memory = TRAIN_RESOURCES.pack_memory if isinstance(job, Pack) else TRAIN_RESOURCES.bundle_memory
    return memory(job.members)["mem_mb"]


# -- what every rule file reads, worked out here once (no rule file defines what another reads) ----
# The cost table, when measured (results/<scale>/cost.csv): each train job's runtime and mem_mb
# (cost.smk says how; without it runtime 60 and the profile's default mem_mb).
TRAIN_RESOURCES = TrainResources(LAYOUT.cost())
if TRAIN_RESOURCES.lacking(RUNS):
    print(TRAIN_RESOURCES.lacking(RUNS), file=sys.stderr)
# mem_mb of a run's job and of a pack's or bundle's, only when there is a cost table
TRAIN_MEMORY = {"mem_mb": run_memory} if TRAIN_RESOURCES.costs else {}
TRAIN_JOB_MEMORY = {"mem_mb": job_memory} if TRAIN_RESOURCES.costs else {}
# The jobs that train several runs: the plan's packs, then bundles of the runs that do not pack,
# sized from the cost table where it has them (rnnrepro.plan.kept.WorkflowPlan.jobs).
JOBS = PLAN.jobs(TRAIN_RESOURCES.runtime_hours)  # name -> pack or bundle
TRAINED_IN = {folder: job.name for job in JOBS.values() for folder in job.members}  # run folder -> job name
check_records(JOBS)
