# Bundles: runs that do not pack, trained one after another as one job (src/rnnrepro/bundles.py;
# `bundling` in config/config.yaml), sized from the cost plan (cost.smk's TRAIN_RESOURCES): without
# results/<scale>/cost.csv there are none, except at a scale with `unmeasured_hours` (ci, mini). Each run is trained exactly as alone, into its own
# folder, with runs of the same artifact and cell; the bundle's rule is preferred to `train` for its runs (ruleorder). A rule per bundle,
# as for packs (pack.smk).

from rnnrepro.bundles import Bundling, plan_bundles
from rnnrepro.cost.plan import planned_runs

BUNDLES = plan_bundles(RUNS, {folder: dataset_key_of(identity) for folder, identity in RUNS.items()},
                       TRAIN_RESOURCES.runtime_hours, Bundling.from_config(config["bundling"], SCALE),
                       packed=[folder for pack in PACKS for folder in pack.members],
                       artifacts={run.folder: run.artifacts[0] for run in planned_runs(STUDIES).values()
                                  if run.artifacts})


for bundle in BUNDLES:
    share_train_settings(f"train_{bundle.name}")

    rule:
        name:
            f"train_{bundle.name}"
        input:
            **run_dataset(SimpleNamespace(run=bundle.members[0])),  # one task type and dataset
        output:
            metrics=[LAYOUT.run(folder, "metrics.json") for folder in bundle.members],
            model=[LAYOUT.run(folder, "model.pt") for folder in bundle.members],
        params:
            runs=[run_params(SimpleNamespace(run=folder)) for folder in bundle.members],
            code_identities=[run_code(SimpleNamespace(run=folder)) for folder in bundle.members],
        log:
            LAYOUT.log("bundles", bundle.name),
        benchmark:
            LAYOUT.pack(bundle.name, "benchmark.tsv")  # wall and CPU time, max RSS of the whole bundle
        threads: 1
        resources:
            runtime=TRAIN_RESOURCES.pack_runtime(bundle.members),
            **TRAIN_RESOURCES.bundle_memory(bundle.members),
        script:
            "../scripts/train_bundle.py"


# Packs' and bundles' rules are preferred to `train` for their runs, in one rule-order clause:
# Snakemake tries its clauses one by one for every pair of candidate rules, so a clause per pack
# and bundle made planning the paper plan (1,400 of them with a cost plan) 23 s instead of 17.
if PACKS or BUNDLES:
    workflow.ruleorder(*(f"train_{job.name}" for job in (*PACKS, *BUNDLES)), "train")
