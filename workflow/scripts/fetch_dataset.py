"""Snakemake adapter: fetch one dataset (official URL, else mirror) with checksums."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

import os  # noqa: E402
from pathlib import Path  # noqa: E402

from rnnrepro.data.fetch import MIRROR_ENV_VAR, fetch_dataset, mirror_beside, write_checksums  # noqa: E402

to_log_file(snakemake.log[0])
settings = snakemake.config["data"]
folder = Path(snakemake.output[0]).parent
# the mirror: data.mirror in config/config.yaml, else RNNREPRO_DATA_MIRROR, else ../shared/data beside
# the checkout when it is one (workflow/scripts/ is two folders below the checkout)
mirror = (settings["mirror"] or os.environ.get(MIRROR_ENV_VAR)
          or mirror_beside(Path(snakemake.scriptdir).resolve().parents[1]))  # scriptdir may read rules/../scripts
paths = fetch_dataset(snakemake.wildcards.dataset, folder, mirror=mirror, timeout=settings["timeout"], progress=False)
write_checksums(paths.values(), snakemake.output[0])
