"""Snakemake adapter: compute one analysis artifact into its CSV, or copy its rows from the
artifact it names as ``analysis_from`` (rnnrepro.plan.analysis_from: no torch, no decoding)."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

to_log_file(snakemake.log[0])
runs = list(snakemake.params.runs)
if "rows_of" in snakemake.input.keys():
    from rnnrepro.plan.analysis_from import write_rows_for_runs

    write_rows_for_runs(snakemake.input.rows_of, runs, snakemake.output[0])
else:
    import torch

    from rnnrepro.analyses import run_analysis

    torch.set_num_threads(snakemake.threads)
    run_analysis(dict(snakemake.params.analysis), snakemake.output[0], runs=runs, data=list(snakemake.input.data))
