"""Snakemake adapter: execute a study's report notebook with papermill and render HTML; the
notebook's parameters are the study and the report's declared inputs, by name."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.plan.study_inputs import StudyInputs  # noqa: E402
from rnnrepro.report import render_report  # noqa: E402

to_log_file(snakemake.log[0])
inputs = StudyInputs.from_mapping({name: value for name, value in snakemake.input.items() if name != "notebook"})
render_report(snakemake.input.notebook, {"study": snakemake.wildcards.study, "inputs": inputs.as_parameters()},
              snakemake.output.html, executed_path=snakemake.output.notebook)
