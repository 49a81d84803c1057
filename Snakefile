# rnnrepro: from dataset download to one HTML report per paper.
#   snakemake --profile profiles/local all        # laptop, `mini` scale (config/config.yaml)
#   snakemake --profile slurm all                 # SLURM GPU cluster (profiles/slurm)
# Scale and studies: config/config.yaml; experiments: config/studies/<study>.yaml.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
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
    report,


rule all:
    input:
        all_reports,
    default_target: True
