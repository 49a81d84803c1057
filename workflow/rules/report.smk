# Per study, the report notebook executed by papermill and rendered to HTML.


rule report:
    input:
        table=f"{RESULTS}/tables/{{study}}/runs.csv",
        curves=f"{RESULTS}/tables/{{study}}/curves.csv",
        notebook="reports/{study}.ipynb",
        published=published_values,
        analyses=study_analysis_files,
    output:
        html=f"{RESULTS}/reports/{{study}}.html",
        notebook=f"{RESULTS}/reports/{{study}}.ipynb",
    params:
        parameters=report_parameters,
    log:
        "logs/report/{study}.log",
    script:
        "../scripts/report.py"
