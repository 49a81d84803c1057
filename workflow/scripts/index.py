"""Snakemake adapter: the index page over every study, and their metrics in one file."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.report.index_page import write_index  # noqa: E402

to_log_file(snakemake.log[0])
write_index(snakemake.input.claims, snakemake.input.metrics, snakemake.output.html, snakemake.output.metrics,
            snakemake.params.scale)
