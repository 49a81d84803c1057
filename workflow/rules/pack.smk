# Packs: small runs of one architecture trained together as one batched model, one job each
# (src/rnnrepro/packing.py; `packing` in config/config.yaml). A pack's job writes every member's
# usual outputs into the member's own run folder, so aggregation, analyses and reports read
# packed runs as any other, and then its record, packs/<pack>/trained.json, which is what the
# rules reading a packed run ask for (common.smk, trained_output). One rule for every pack: the
# pack's name is its wildcard. PACKS and the helpers are in common.smk.


share_train_settings("train_pack")


rule train_pack:
    input:
        unpack(job_dataset),
    output:
        trained=trained_record("{pack}"),
    params:
        runs=job_params,
        folders=job_folders,
        code_identity=pack_code,
    log:
        LAYOUT.log("packs", "{pack}"),
    benchmark:
        LAYOUT.pack("{pack}", "benchmark.tsv")  # wall and CPU time, max RSS of the whole pack
    threads: 1
    resources:
        runtime=job_runtime,
        **job_memory(TRAIN_RESOURCES.pack_memory),
    script:
        "../scripts/train_pack.py"
