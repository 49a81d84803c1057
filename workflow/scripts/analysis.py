"""Snakemake adapter: compute one analysis artifact into its CSV."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

import torch  # noqa: E402

from rnnrepro.analyses import run_analysis  # noqa: E402

to_log_file(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
run_analysis(dict(snakemake.params.analysis), snakemake.output[0], runs=list(snakemake.params.runs),
             data=list(snakemake.input.data))
