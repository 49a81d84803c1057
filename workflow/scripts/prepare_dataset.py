"""Snakemake adapter: parse a fetched dataset into its prepared file."""
import logging
import sys
from pathlib import Path

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.data.prepared import prepare_dataset  # noqa: E402

to_log_file(snakemake.log[0])
counts = prepare_dataset(snakemake.wildcards.dataset, Path(snakemake.input[0]).parent, snakemake.output[0])
logging.getLogger("rnnrepro.workflow").info("items per split (sentences, tokens or pairs by dataset kind): %s", counts)
