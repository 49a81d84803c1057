# rnnrepro: from dataset download to one HTML report per paper.
#   snakemake --profile profiles/local all        # laptop, `mini` scale (config/config.yaml)
#   snakemake --profile slurm all                 # SLURM GPU cluster (profiles/slurm)
# Scale and studies: config/config.yaml; experiments: config/studies/<study>.yaml.
#
# `snakemake --lint` asks every rule for a conda environment or a container: there is none on
# purpose. Every rule runs in the project's one pinned virtual environment (scripts/setup.sh,
# requirements.txt), the same on a laptop and on a cluster's nodes.
from snakemake.utils import min_version

from rnnrepro.plan.config_check import ConfigError
from rnnrepro.plan.yaml_file import load_yaml

min_version("9.0")

try:  # read first by us: Snakemake's message for a YAML error names neither the file nor the line
    load_yaml("config/config.yaml")
except ConfigError as error:
    raise WorkflowError(f"Configuration error: {error}") from None


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/cost.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/report.smk"


# On a cluster only training runs are submitted; downloads (login nodes have the network),
# data preparation, aggregation and reports are quick and run where snakemake runs.
localrules:
    all,
    data,
    runs,
    fetch_dataset,
    prepare_dataset,
    aggregate,
    baselines,
    plan,
    judge,
    index,
    report,


rule all:
    input:
        all_reports,
    default_target: True


onsuccess:
    if Path(f"{OUT}/reports/index.html").exists():
        print(f"\nrnnrepro: done. Open {OUT}/reports/index.html (every claim and its verdicts), or a study's "
              f"report in {OUT}/reports/: {', '.join(f'{study}.html' for study in STUDIES)}.")
    else:  # a target short of the reports (data, runs)
        print(f"\nrnnrepro: done; no report yet: `snakemake all` writes {OUT}/reports/index.html.")
