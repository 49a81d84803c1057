# Per study, the report notebook executed by papermill and rendered to HTML. The notebook
# reads the study's YAML (titles, claims, checks), the tables and the published numbers.
# Per study too, every claim's verdicts and a headline per artifact (for the index page and
# DVC's metrics), and plot-ready tables (DVC's plots); over every study, the index page.


rule summarise:
    input:
        table=f"{OUT}/tables/{{study}}/runs.csv",
        curves=f"{OUT}/tables/{{study}}/curves.csv",
        study="config/studies/{study}.yaml",
        published=published_values,
        analyses=study_analysis_files,
        code=REPORT_CODE,
    output:
        claims=f"{OUT}/verdicts/{{study}}.csv",
        metrics=f"{OUT}/verdicts/{{study}}.json",
        plot=f"{OUT}/plots/{{study}}.csv",
        curves=f"{OUT}/curves/{{study}}.csv",
    params:
        parameters=report_parameters,
    log:
        f"logs/{SCALE}/summarise/{{study}}.log",
    script:
        "../scripts/summarise.py"


rule index:
    input:
        claims=expand(f"{OUT}/verdicts/{{study}}.csv", study=list(STUDIES)),
        metrics=expand(f"{OUT}/verdicts/{{study}}.json", study=list(STUDIES)),
    output:
        html=report(f"{OUT}/reports/index.html", caption="../report/index.rst", category="Index"),
        metrics=f"{OUT}/metrics.json",
    params:
        scale=SCALE,
    log:
        f"logs/{SCALE}/index.log",
    script:
        "../scripts/index.py"


rule report:
    input:
        table=f"{OUT}/tables/{{study}}/runs.csv",
        curves=f"{OUT}/tables/{{study}}/curves.csv",
        provenance=f"{OUT}/tables/{{study}}/provenance.csv",
        notebook="reports/{study}.ipynb",
        study="config/studies/{study}.yaml",
        published=published_values,
        analyses=study_analysis_files,
        code=REPORT_CODE,
    output:
        html=report(f"{OUT}/reports/{{study}}.html", caption="../report/study.rst", category="Study reports",
                    labels={"study": "{study}"}),
        notebook=f"{OUT}/reports/{{study}}.ipynb",
    params:
        parameters=report_parameters,
    log:
        f"logs/{SCALE}/report/{{study}}.log",
    script:
        "../scripts/report.py"
