# Artifacts computed by a function of rnnrepro.analyses: numerical checks and timings, and
# analyses of trained models (their final model.pt files are declared inputs, so retraining
# a run recomputes the analyses that read it, and nothing else does).


rule analysis:
    input:
        unpack(analysis_inputs),
    output:
        LAYOUT.analysis("{study}", "{artifact}"),
    params:
        analysis=analysis_config,
        runs=analysis_runs,
        code_identity=analysis_code,
    log:
        LAYOUT.log("analyses", "{study}", "{artifact}"),
    threads: 1
    script:
        "../scripts/analysis.py"
