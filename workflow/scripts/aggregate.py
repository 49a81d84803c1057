"""Snakemake adapter: long-form tables of a study's runs, curves and provenance."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.aggregate import write_tables  # noqa: E402

to_log_file(snakemake.log[0])
write_tables(snakemake.params.uses, snakemake.wildcards.study, snakemake.params.scale,
             snakemake.output.table, snakemake.output.curves, snakemake.output.provenance,
             snakemake.output.test_items)
