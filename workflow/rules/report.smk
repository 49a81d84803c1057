# Per study: its plan (the parse-time expansion of its YAML), then every claim judged once with
# the numbers behind each verdict and a headline per artifact (for the index page and DVC's
# metrics), plot-ready tables (DVC's plots), and the report notebook executed by papermill and
# rendered to HTML, which reads only its declared inputs. Over every study, the index page.


# The plan is the parse-time one, which the parse keeps (rnnrepro.plan.kept) and the script reads
# back; its param is the plan's digest, so that a changed plan, and only that, rewrites it.
rule plan:
    output:
        LAYOUT.plan("{study}"),
    params:
        digest=plan_digest,
    log:
        LAYOUT.log("plan", "{study}"),
    script:
        "../scripts/plan.py"


rule judge:
    input:
        unpack(study_inputs),
        code=CLAIMS_CODE,
    output:
        claims=LAYOUT.verdicts("{study}", "csv"),
        metrics=LAYOUT.verdicts("{study}", "json"),
        counts=LAYOUT.counts("{study}"),
        plot=LAYOUT.plot("{study}"),
        curves=LAYOUT.curves("{study}"),
    log:
        LAYOUT.log("judge", "{study}"),
    script:
        "../scripts/judge.py"


rule index:
    input:
        claims=expand(LAYOUT.verdicts("{study}", "csv"), study=list(STUDIES)),
        metrics=expand(LAYOUT.verdicts("{study}", "json"), study=list(STUDIES)),
    output:
        html=report(LAYOUT.index, caption="../report/index.rst", category="Index"),
        metrics=LAYOUT.metrics,
    params:
        scale=SCALE,
    log:
        LAYOUT.log("index"),
    script:
        "../scripts/index.py"


rule report:
    input:
        unpack(report_inputs),
        notebook="reports/{study}.ipynb",
        code=REPORT_CODE,
    output:
        html=report(LAYOUT.report("{study}"), caption="../report/study.rst", category="Study reports",
                    labels={"study": "{study}"}),
        notebook=LAYOUT.report("{study}", "ipynb"),
    log:
        LAYOUT.log("report", "{study}"),
    script:
        "../scripts/report.py"
