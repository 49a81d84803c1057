"""Snakemake adapter: train one run (resuming from its checkpoint) into its folder."""
import sys
from pathlib import Path

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

import torch  # noqa: E402

from rnnrepro.train import EXIT_INTERRUPTED, TrainingInterrupted, train_run  # noqa: E402

to_log_file(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
try:
    run = snakemake.params.run
    train_run(dict(run["config"]), Path(snakemake.output.metrics).parent, data=snakemake.input.get("data"),
              identity={"data": run["data"], "code": snakemake.params.code_identity})
except TrainingInterrupted as stop:
    print(stop, file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)
