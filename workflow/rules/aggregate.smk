# Per study, long-form tables of every run's metrics, training curves and provenance (and the
# runs' test items), each
# run labelled by the artifacts that use it (the labels are a param: they never touch a run).


rule aggregate:
    input:
        study_metrics,
    output:
        table=LAYOUT.table("{study}", "runs"),
        curves=LAYOUT.table("{study}", "curves"),
        provenance=LAYOUT.table("{study}", "provenance"),
        test_items=LAYOUT.items("{study}"),  # ("items" is reserved by Snakemake) the runs' test items, for the paired bootstrap of the verdicts
    params:
        uses=study_uses,
        scale=SCALE,
    log:
        LAYOUT.log("aggregate", "{study}"),
    script:
        "../scripts/aggregate.py"


# Per study, what a model that learns nothing scores on the same splits as its runs (each task's
# trivial baselines): the controls the claims are judged beside (rnnrepro.claims.regime).
rule baselines:
    input:
        unpack(study_task_data),
        code=TASK_CODE,
    output:
        LAYOUT.table("{study}", "baselines"),
    params:
        uses=study_task_uses,
    log:
        LAYOUT.log("baselines", "{study}"),
    script:
        "../scripts/baselines.py"
