"""Snakemake adapter: train a pack of runs together (resuming each from its checkpoint) into their
folders, then write the pack's record (its output)."""
import sys
from pathlib import Path

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

import torch  # noqa: E402

from rnnrepro.plan.jobs import write_record  # noqa: E402
from rnnrepro.packing import train_pack  # noqa: E402
from rnnrepro.train import EXIT_INTERRUPTED, TrainingInterrupted  # noqa: E402

to_log_file(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
runs = snakemake.params.runs
folders = [Path(folder) for folder in snakemake.params.folders]
try:
    train_pack([dict(run["config"]) for run in runs], folders,
               data=snakemake.input.get("data"),
               identities=[{"data": run["data"], "code": snakemake.params.code_identity} for run in runs])
except TrainingInterrupted as stop:
    print(stop, file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)
write_record(snakemake.output.trained, folders)
