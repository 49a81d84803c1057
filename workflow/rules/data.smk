# Datasets: fetch each from its official URL (or the mirror), verify sha256, then parse
# once per (dataset, version) into a prepared file that every run of a task shares.
# Where the files came from (URL or mirror) is deliberately not a param: the checksums
# make them the same files, so moving the mirror must not refetch anything.


# The fetch's output is the folder's checksum list, written once every file has verified (each
# file is written atomically), rather than the folder itself: a directory output makes
# Snakemake compare every other path of the DAG with it, seconds for a paper-scale plan.
rule fetch_dataset:
    output:
        "resources/data/{dataset}/SHA256SUMS",
    log:
        "logs/data/fetch_{dataset}.log",
    script:
        "../scripts/fetch_dataset.py"


rule prepare_dataset:
    input:
        ancient("resources/data/{dataset}/SHA256SUMS"),
    output:
        prepared_file("{dataset}"),
    params:
        identity=prepared_identity,
    log:
        "logs/data/prepare_{dataset}.log",
    script:
        "../scripts/prepare_dataset.py"


rule data:
    input:
        all_datasets,
