# Packs: small runs of one architecture trained together as one batched model, one job each
# (src/rnnrepro/packing.py; `packing` in config/config.yaml). A pack's job writes every member's
# usual outputs into the member's own run folder, so aggregation, analyses and reports read
# packed runs as any other; the pack's rule is preferred to `train` for them (the rule order at
# the end of bundle.smk). Each pack is a rule of its own, since its outputs are a list of run
# folders no wildcard can name.
# PACKS and the helpers are in common.smk.


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
