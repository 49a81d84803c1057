# Per study, the report notebook executed by papermill and rendered to HTML. The notebook
# reads the study's YAML (titles, claims, checks), the tables and the published numbers.


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
        html=f"{OUT}/reports/{{study}}.html",
        notebook=f"{OUT}/reports/{{study}}.ipynb",
    params:
        parameters=report_parameters,
    log:
        f"logs/{SCALE}/report/{{study}}.log",
    script:
        "../scripts/report.py"
