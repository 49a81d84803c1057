# Packs: small runs of one architecture trained together as one batched model, one job each
# (src/rnnrepro/packing.py; `packing` in config/config.yaml). A pack's job writes every member's
# usual outputs into the member's own run folder, so aggregation, analyses and reports read
# packed runs as any other; the pack's rule is preferred to `train` for them (ruleorder). Each
# pack is a rule of its own, since its outputs are a list of run folders no wildcard can name.
from types import SimpleNamespace

from rnnrepro.code_identity import pack_code_identity
from rnnrepro.packing import Packing, plan_packs

PACKS = plan_packs(RUNS, Packing.from_config(config["packing"]))


def pack_params(pack):
    """Each member's run params (config and dataset identity), as the train rule's."""
    return [run_params(SimpleNamespace(run=folder)) for folder in pack.members]


def pack_code(pack):
    """The identity of the code a pack's runs execute: a run's and the packed loop's (a param)."""
    identity = RUNS[pack.members[0]]
    return pack_code_identity(identity["task"]["name"], identity["model"]["name"], identity["cell"]["name"])


def pack_dataset(pack):
    """The prepared dataset the pack's runs read (packable tasks share one, or none)."""
    return run_dataset(SimpleNamespace(run=pack.members[0]))


def share_train_settings(rule_name):
    """The profile's set-resources and set-threads for `train` (profiles/slurm: a GPU and 4 CPUs per
    job) apply to a pack's rule too: a pack is a training job. Snakemake reads them by rule name
    when a rule is defined, from these parsed tables (snakemake is pinned in requirements.txt)."""
    settings = workflow.resource_settings
    for table in (settings._parsed_overwrite_resources, settings._parsed_overwrite_threads):
        if "train" in table:
            table[rule_name] = table["train"]


for pack in PACKS:
    share_train_settings(f"train_{pack.name}")

    rule:
        name:
            f"train_{pack.name}"
        input:
            **pack_dataset(pack),
        output:
            metrics=[LAYOUT.run(folder, "metrics.json") for folder in pack.members],
            model=[LAYOUT.run(folder, "model.pt") for folder in pack.members],
        params:
            runs=pack_params(pack),
            code_identity=pack_code(pack),
        log:
            LAYOUT.log("packs", pack.name),
        benchmark:
            LAYOUT.pack(pack.name, "benchmark.tsv")  # wall and CPU time, max RSS of the whole pack
        threads: 1
        resources:
            runtime=TRAIN_RESOURCES.pack_runtime(pack.members),
            **TRAIN_RESOURCES.pack_memory(pack.members),
        script:
            "../scripts/train_pack.py"

    workflow.ruleorder(f"train_{pack.name}", "train")
