# Artifacts computed without training (numerical checks, timings): one job each.


rule analysis:
    output:
        f"{RESULTS}/analyses/{{study}}/{{artifact}}.csv",
    params:
        analysis=analysis_config,
    log:
        "logs/analyses/{study}/{artifact}.log",
    threads: 1
    script:
        "../scripts/analysis.py"
