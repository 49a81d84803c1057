# One job per run: results/<scale>/runs/task~../model~../cell~../cfg~<digest>/seed~N/.
# The folder is named by what decides the run's numbers, so artifacts (of any study) asking
# for the same settings share it. Declared: metrics.json and model.pt, the final model, written
# last (config.json and curve.tsv are written with them; two outputs and one param function
# per job keep a paper-scale plan of thousands of runs within seconds). checkpoint.pt, the
# resume state, is not declared, so a failed or preempted job never loses it to Snakemake's
# clean-up and the rerun resumes from it.
# A run reruns when its settings, its dataset's content or the code it executes changes
# (params; see src/rnnrepro/plan/code_identity.py): a new cell, model or task file reruns nothing.


rule train:
    input:
        unpack(run_dataset),
    output:
        metrics=LAYOUT.run("{run}", "metrics.json"),
        model=LAYOUT.run("{run}", "model.pt"),
    params:
        run=run_params,
        code_identity=run_code,
    log:
        LAYOUT.log("runs", "{run}"),
    benchmark:
        LAYOUT.run("{run}", "benchmark.tsv")  # wall and CPU time, max RSS: how to size runtime and mem_mb
    threads: 1
    resources:
        runtime=run_runtime,  # from results/<scale>/cost.csv when it has the run, else 60 (cost.smk)
        **TRAIN_MEMORY,  # mem_mb from cost.csv when it exists, else the profile's default (cost.smk)
    script:
        "../scripts/train.py"


# A job that trains several runs: a pack (small runs of one architecture trained together as one
# batched model, src/rnnrepro/packing.py; `packing` in config/config.yaml) or a bundle (runs that
# do not pack, trained one after another, each exactly as alone; src/rnnrepro/plan/bundles.py,
# `bundling`). It writes every run's usual outputs into the run's own folder, so aggregation,
# analyses and reports read them as any other run's, and then its record,
# jobs/<job>/trained.json, which is what the rules reading those runs ask for (common.smk,
# trained_output). One rule for every such job, its name the wildcard. Its resources are the
# train rule's in the profiles (set-resources: train_job), and from the cost table its runs' summed
# runtime and their memory (a pack's runs at once, a bundle's largest).
rule train_job:
    input:
        unpack(job_dataset),  # one task type and dataset
    output:
        trained=trained_record("{job}"),
    params:
        runs=job_params,
        folders=job_folders,
        code_identities=job_codes,
    log:
        LAYOUT.log("jobs", "{job}"),
    benchmark:
        LAYOUT.job("{job}", "benchmark.tsv")  # wall and CPU time, max RSS of the whole job
    threads: 1
    resources:
        runtime=job_runtime,
        **TRAIN_JOB_MEMORY,
    script:
        "../scripts/train_job.py"


rule runs:
    input:
        all_runs,
