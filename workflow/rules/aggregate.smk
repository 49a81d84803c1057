# Per study, long-form tables of every run's metrics, training curves and provenance, each
# run labelled by the artifacts that use it (the labels are a param: they never touch a run).


rule aggregate:
    input:
        study_metrics,
    output:
        table=f"{OUT}/tables/{{study}}/runs.csv",
        curves=f"{OUT}/tables/{{study}}/curves.csv",
        provenance=f"{OUT}/tables/{{study}}/provenance.csv",
    params:
        uses=study_uses,
        scale=SCALE,
    log:
        f"logs/{SCALE}/aggregate/{{study}}.log",
    script:
        "../scripts/aggregate.py"
