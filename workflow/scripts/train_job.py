"""Snakemake adapter: train a job's runs into their folders, each resuming from its checkpoint, then
write the job's record (its output). A pack (``pack_…``) trains its runs together as one batched
model (rnnrepro.packing); a bundle (``bundle_…``) trains them one after another, each exactly as
alone, and a run that fails does not stop the others: the job then fails, naming it, and writes
no record."""
import logging
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

import torch  # noqa: E402

from rnnrepro import atomic  # noqa: E402
from rnnrepro.packing import train_pack  # noqa: E402
from rnnrepro.plan.jobs import write_record  # noqa: E402
from rnnrepro.train import EXIT_INTERRUPTED, TrainingInterrupted, train_run  # noqa: E402

log = logging.getLogger("rnnrepro.workflow")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def write_benchmark(folder: Path, seconds: float, cpu: float, runs: int) -> None:
    """A bundled run's benchmark.tsv (the columns of Snakemake's that the aggregation reads): its
    own wall and CPU time in the bundle, and the bundle's peak resident memory so far (MB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    atomic.write_text(folder / "benchmark.tsv", f"s\tcpu_time\tmax_rss\tbundled_runs\n"
                                                f"{seconds:.4f}\t{cpu:.4f}\t{peak:.2f}\t{runs}\n")


def train_bundle(runs: list[dict], codes: list[str], folders: list[Path], data: str | None) -> list[str]:
    """Train each run as alone, one after another; the folders of those that failed."""
    failed = []
    for number, (run, code, folder) in enumerate(zip(runs, codes, folders), 1):
        log.info("bundle: run %d of %d: %s", number, len(runs), folder)
        started, cpu = time.monotonic(), cpu_seconds()
        try:
            train_run(dict(run["config"]), folder, data=data, identity={"data": run["data"], "code": code})
            write_benchmark(folder, time.monotonic() - started, cpu_seconds() - cpu, len(runs))
        except TrainingInterrupted:  # preempted: the rerun skips the finished runs and resumes this one
            raise
        except Exception as error:  # noqa: BLE001 - the other runs of the bundle still train
            log.error("bundle: %s failed: %s: %s", folder, type(error).__name__, error, exc_info=True)
            failed.append(str(folder))
    return failed


to_log_file(snakemake.log[0])
torch.set_num_threads(snakemake.threads)
runs = snakemake.params.runs
codes = snakemake.params.code_identities
folders = [Path(folder) for folder in snakemake.params.folders]
data = snakemake.input.get("data")
try:
    if snakemake.wildcards.job.startswith("pack_"):
        failed = []
        train_pack([dict(run["config"]) for run in runs], folders, data=data,
                   identities=[{"data": run["data"], "code": code} for run, code in zip(runs, codes)])
    else:
        failed = train_bundle(runs, codes, folders, data)
except TrainingInterrupted as stop:
    log.warning("%s", stop)
    sys.exit(EXIT_INTERRUPTED)
if failed:
    log.error("bundle: %d of %d runs failed: %s", len(failed), len(runs), ", ".join(failed))
    sys.exit(1)
write_record(snakemake.output.trained, folders)
