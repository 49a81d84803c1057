"""Snakemake adapter: one long-form table of a study's runs and one of their curves."""
import sys
from pathlib import Path

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.aggregate import write_tables  # noqa: E402

to_log_file(snakemake.log[0])
write_tables([Path(p).parent for p in snakemake.input], snakemake.output.table, snakemake.output.curves)
