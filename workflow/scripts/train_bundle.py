"""Snakemake adapter: train a bundle's runs one after another (each resuming from its checkpoint)
into their folders, then write the bundle's record (its output). A run that fails does not stop
the others; the job then fails, naming it, and writes no record."""
import logging
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, snakemake.scriptdir)
from _log import to_log_file  # noqa: E402

import torch  # noqa: E402

from rnnrepro import atomic  # noqa: E402
from rnnrepro.plan.jobs import write_record  # noqa: E402
from rnnrepro.train import EXIT_INTERRUPTED, TrainingInterrupted, train_run  # noqa: E402


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def write_benchmark(folder: Path, seconds: float, cpu: float, runs: int) -> None:
    """The run's benchmark.tsv (the columns of Snakemake's that the aggregation reads): its own
    wall and CPU time in the bundle, and the bundle's peak resident memory so far (MB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    atomic.write_text(folder / "benchmark.tsv", f"s\tcpu_time\tmax_rss\tbundled_runs\n"
                                                f"{seconds:.4f}\t{cpu:.4f}\t{peak:.2f}\t{runs}\n")


to_log_file(snakemake.log[0])
log = logging.getLogger("rnnrepro.workflow")
torch.set_num_threads(snakemake.threads)
failed = []
runs = snakemake.params.runs
folders = [Path(folder) for folder in snakemake.params.folders]
for number, (run, code, folder) in enumerate(zip(runs, snakemake.params.code_identities, folders), 1):
    log.info("bundle: run %d of %d: %s", number, len(runs), folder)
    started, cpu = time.monotonic(), cpu_seconds()
    try:
        train_run(dict(run["config"]), folder, data=snakemake.input.get("data"),
                  identity={"data": run["data"], "code": code})
        write_benchmark(folder, time.monotonic() - started, cpu_seconds() - cpu, len(runs))
    except TrainingInterrupted as stop:  # preempted: the rerun skips the finished runs and resumes this one
        log.warning("%s", stop)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as error:  # noqa: BLE001 - the other runs of the bundle still train
        log.error("bundle: %s failed: %s: %s", folder, type(error).__name__, error, exc_info=True)
        failed.append(str(folder))
if failed:
    log.error("bundle: %d of %d runs failed: %s", len(failed), len(runs), ", ".join(failed))
    sys.exit(1)
write_record(snakemake.output.trained, folders)
