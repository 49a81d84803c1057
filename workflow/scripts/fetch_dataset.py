"""Snakemake adapter: fetch one dataset (official URL, else mirror) with checksums."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.data.fetch import fetch_dataset  # noqa: E402

to_log_file(snakemake.log[0])
settings = snakemake.config["data"]
# mirror None: fetch_dataset falls back to the RNNREPRO_DATA_MIRROR environment variable
fetch_dataset(snakemake.wildcards.dataset, snakemake.output[0],
              mirror=settings["mirror"], timeout=settings["timeout"], progress=False)
