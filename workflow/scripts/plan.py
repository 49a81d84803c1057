"""Snakemake adapter: write a study's plan (plans/<study>.json), the one the workflow worked out when
it was parsed: found among the plans that parse keeps (rnnrepro.plan.kept) by its digest, the
rule's param. A script, not a ``run:`` block: Snakemake runs those in a new Snakemake process that
parses the whole workflow again (about 4 s a study), where this reads a kept plan back in a
fraction of a second."""
import sys
from pathlib import Path

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.plan.kept import kept_study, work_out_plan  # noqa: E402
from rnnrepro.plan.studies import plan_digest_of, write_plan  # noqa: E402

to_log_file(snakemake.log[0])
root, name, digest = Path(snakemake.scriptdir).resolve().parents[1], snakemake.wildcards.study, snakemake.params.digest
# none kept (removed by hand): work it out from the workflow's validated settings, keeping nothing,
# as the kept plans are named by the settings as given
study = kept_study(root, name, digest) or work_out_plan(dict(snakemake.config), root).studies[name]
if plan_digest_of(study) != digest:
    raise RuntimeError(f"study {name}: its plan worked out again is not the one the workflow planned (digest "
                       f"{digest[:12]}); run the workflow again")
write_plan(study, snakemake.output[0])
