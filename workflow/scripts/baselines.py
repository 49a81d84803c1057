"""Snakemake adapter: the trivial baselines of a study's tasks on the splits its runs are scored on."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.tasks.baseline_table import write_baselines  # noqa: E402

to_log_file(snakemake.log[0])
write_baselines(snakemake.params.uses, snakemake.output[0])
