"""Snakemake adapter: execute a study's report notebook with papermill and render HTML."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.report import render_report  # noqa: E402

to_log_file(snakemake.log[0])
render_report(snakemake.input.notebook, dict(snakemake.params.parameters), snakemake.output.html,
              executed_path=snakemake.output.notebook)
