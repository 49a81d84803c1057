# Bundles: runs that do not pack, trained one after another as one job (src/rnnrepro/plan/bundles.py;
# `bundling` in config/config.yaml), sized from the cost plan (cost.smk's TRAIN_RESOURCES), else
# from the runtime each scale assumes for a run without one (`unmeasured_hours`; paper: the 60
# minutes such a run's job asks for alone).
# Each run is trained exactly as alone, into its own folder, with runs of the same artifact and
# cell; the job then writes its record, packs/<bundle>/trained.json, which is what the rules reading
# a bundled run ask for (common.smk, trained_output). One rule for every bundle, as for packs.

from rnnrepro.plan.bundles import Bundling, plan_bundles
from rnnrepro.cost.plan import planned_runs

BUNDLES = plan_bundles(RUNS, PLAN.dataset_keys,
                       TRAIN_RESOURCES.runtime_hours, Bundling.from_config(config["bundling"], SCALE),
                       packed=[folder for pack in PACKS for folder in pack.members],
                       artifacts={run.folder: run.artifacts[0] for run in planned_runs(STUDIES).values()
                                  if run.artifacts})
JOBS = {job.name: job for job in (*PACKS, *BUNDLES)}
TRAINED_IN = {folder: job.name for job in JOBS.values() for folder in job.members}
check_records(JOBS)


share_train_settings("train_bundle")


rule train_bundle:
    input:
        unpack(job_dataset),  # one task type and dataset
    output:
        trained=trained_record("{bundle}"),
    params:
        runs=job_params,
        folders=job_folders,
        code_identities=job_codes,
    log:
        LAYOUT.log("bundles", "{bundle}"),
    benchmark:
        LAYOUT.pack("{bundle}", "benchmark.tsv")  # wall and CPU time, max RSS of the whole bundle
    threads: 1
    resources:
        runtime=job_runtime,
        **job_memory(TRAIN_RESOURCES.bundle_memory),
    script:
        "../scripts/train_bundle.py"
