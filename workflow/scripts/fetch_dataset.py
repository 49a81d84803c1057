"""Snakemake adapter: fetch one dataset (official URL, else mirror) with checksums."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from pathlib import Path  # noqa: E402

from rnnrepro.data.fetch import fetch_dataset, write_checksums  # noqa: E402

to_log_file(snakemake.log[0])
settings = snakemake.config["data"]
folder = Path(snakemake.output[0]).parent
# mirror None: fetch_dataset falls back to the RNNREPRO_DATA_MIRROR environment variable
paths = fetch_dataset(snakemake.wildcards.dataset, folder,
                      mirror=settings["mirror"], timeout=settings["timeout"], progress=False)
write_checksums(paths.values(), snakemake.output[0])
