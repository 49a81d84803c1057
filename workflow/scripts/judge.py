"""Snakemake adapter: a study's verdicts (every claim judged once), headline metrics and plot tables."""
import sys

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

from rnnrepro.claims.study import StudyInputs  # noqa: E402
from rnnrepro.claims.judge_study import write_verdicts  # noqa: E402

to_log_file(snakemake.log[0])
write_verdicts(StudyInputs.from_mapping(dict(snakemake.input.items())), snakemake.output.claims,
                    snakemake.output.metrics, snakemake.output.plot, snakemake.output.curves,
                    snakemake.output.counts)
