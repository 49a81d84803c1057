# Per study, one long-form table of every run's metrics and one of the training curves.


rule aggregate:
    input:
        study_metrics,
    output:
        table=f"{RESULTS}/tables/{{study}}/runs.csv",
        curves=f"{RESULTS}/tables/{{study}}/curves.csv",
    log:
        "logs/aggregate/{study}.log",
    script:
        "../scripts/aggregate.py"
