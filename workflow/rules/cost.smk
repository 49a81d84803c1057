# A cost table before the queue, and the train jobs' resources from it.
#
#   snakemake --profile profiles/local cost --config scale=paper
#
# times a few training steps and one dev evaluation of every distinct configuration of the plan
# on the device at hand (python -m rnnrepro.cost; its --help says what is counted) and writes
# results/<scale>/cost.csv: per run its steps, seconds per step, estimated hours and peak memory.
# It is never part of `all`. It runs where snakemake runs (a login node has no GPU): on a
# cluster, run `python -m rnnrepro.cost` on a GPU node instead (docs/cluster.md).
#
# When results/<scale>/cost.csv exists, it is read once when the workflow is parsed (common.smk),
# and the train job of every run it has asks for (rnnrepro.cost.runtime_minutes and memory_mb)
#   runtime = ceil(estimated_hours * 60 * margin + 10) minutes
#   mem_mb  = ceil(host_mem_mb * margin + 2048)
# margin 1.5 (rnnrepro.cost.MARGIN; the file's margin column, which --margin sets): a few steps
# are a sample of batches of varying lengths, the node's load varies, an evaluation may be
# estimated, and the kept weights of early stopping and checkpoint writes are not measured.
# 10 minutes (RUNTIME_ALLOWANCE_MINUTES): what the estimate leaves out (start-up, loading the
# data, building the model, checkpoints, writing outputs). 2048 MB (MEMORY_ALLOWANCE_MB): the
# process itself (Python and torch, about 0.25 GB resident, and the CUDA runtime's host memory
# on a GPU node), which the measured growth leaves out. Without the file a train job asks for
# runtime 60 and the profile's default mem_mb, as before; a run the file lacks, runtime 60 and
# DEFAULT_MEM_MB (4000, the slurm profile's default), with a warning.
# (common.smk reads the file into TRAIN_RESOURCES, which the train rules' resources come from.)
import hashlib
import sys

# the prepared data the plan's runs read (the cost command builds every run's task), and which
# runs the file covers (a param: a changed plan measures it again)
COST_DATA = [ancient(prepared_file(key)) for key in sorted(set(PLAN.dataset_keys.values()) - {None})]
COST_PLAN = hashlib.sha256("\n".join(sorted(RUNS)).encode()).hexdigest()[:16]


localrules:
    cost,


# Its measurement takes the machine a while (the paper plan: about 25 minutes on one thread of a
# 2-core CPU), so an interrupted one resumes (--resume) rather than starts again.
rule cost:
    input:
        COST_DATA,
    output:
        LAYOUT.cost(),
    params:
        python=sys.executable,
        scale=SCALE,
        studies=",".join(STUDIES),
        extra_cells=" ".join(["--extra-cells", *config["extra_cells"]]) if config.get("extra_cells") else "",
        plan=COST_PLAN,
    log:
        LAYOUT.log("cost"),
    shell:
        "{params.python} -m rnnrepro.cost --scale {params.scale} --studies {params.studies} {params.extra_cells} "
        "--output {output} --resume 2>&1 | tee {log}"
