# One job per run: results/<scale>/runs/task~../model~../cell~../cfg~<digest>/seed~N/.
# The folder is named by what decides the run's numbers, so artifacts (of any study) asking
# for the same settings share it. Declared: metrics.json and model.pt, the final model, written
# last (config.json and curve.tsv are written with them; two outputs and one param function
# per job keep a paper-scale plan of thousands of runs within seconds). checkpoint.pt, the
# resume state, is not declared, so a failed or preempted job never loses it to Snakemake's
# clean-up and the rerun resumes from it.
# A run reruns when its settings, its dataset's content or the training code changes
# (params; see src/rnnrepro/code_identity.py).


rule train:
    input:
        unpack(run_dataset),
    output:
        metrics=f"{OUT}/runs/{{run}}/metrics.json",
        model=f"{OUT}/runs/{{run}}/model.pt",
    params:
        run=run_params,
        code_identity=TRAINING_CODE_IDENTITY,
    log:
        f"logs/{SCALE}/runs/{{run}}.log",
    benchmark:
        f"{OUT}/runs/{{run}}/benchmark.tsv"  # wall and CPU time, max RSS: how to size runtime and mem_mb
    threads: 1
    resources:
        runtime=60,
    script:
        "../scripts/train.py"


rule runs:
    input:
        all_runs,
