"""Snakemake adapter: a study's verdicts, headline metrics and plot tables."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.report.summary import write_study_summary  # noqa: E402

to_log_file(snakemake.log[0])
parameters = snakemake.params.parameters
write_study_summary(parameters["study"], parameters["scale"], parameters["results"],
                    snakemake.output.claims, snakemake.output.metrics, snakemake.output.plot, snakemake.output.curves)
