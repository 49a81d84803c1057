# One job per run: results/runs/<study>/task~../model~../cell~../[axis~../]seed~N/.
# checkpoint.pt is written beside the outputs but not declared, so a failed or preempted
# job never loses it to Snakemake's clean-up and the rerun resumes from it.
# A run reruns when its config, its dataset's content or the training code changes
# (params; see src/rnnrepro/code_identity.py).


rule train:
    input:
        unpack(run_dataset),
    output:
        metrics=f"{RESULTS}/runs/{{study}}/{{run}}/metrics.json",
        curve=f"{RESULTS}/runs/{{study}}/{{run}}/curve.tsv",
        config=f"{RESULTS}/runs/{{study}}/{{run}}/config.json",
    params:
        run=run_config,
        data_identity=run_data_identity,
        code_identity=TRAINING_CODE_IDENTITY,
    log:
        "logs/runs/{study}/{run}.log",
    threads: 1
    resources:
        runtime=60,
    script:
        "../scripts/train.py"


rule runs:
    input:
        all_runs,
