"""How fast the device trains: the cells' steps against torch's nn.LSTM (cuDNN's on a GPU), and
a pack of runs against the same runs one after another (whole runs: build, training,
evaluations, outputs), timed as ``benchmarks/bench_cells.py`` and ``benchmarks/bench_pack.py``
time them (:mod:`.timing`, which both share)."""
from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from . import timing as bench
from .table import Row


def cells(device: str, steps: int, hidden: int, repeats: int) -> list[Row]:
    """Each registered cell's training step over nn.LSTM's timed beside it (median of ``repeats``
    rounds, batch 20, input 512), and the reference's own step time. The benchmark's targets are
    for the CPU (our loops against oneDNN's); on a GPU the ratios are shown without one."""
    from ..cells import CELLS

    args = argparse.Namespace(batch=20, input=512, repeats=repeats, warmup=2, statistic="median", seed=0,
                              device=device)
    started = time.monotonic()
    names = CELLS.names()
    reference_seconds, ratios, ran = bench.measure(names, steps, hidden, args)
    seconds = time.monotonic() - started
    shape = f"T={steps} H={hidden}"
    rows = [Row("speed: cells", f"{bench.REFERENCE.split(' (')[0]} step, {shape}", f"{reference_seconds * 1e3:.2f} ms",
                None, f"runs on {ran[bench.REFERENCE]}; forward, backward, Adagrad", seconds)]
    on_cpu = device.startswith("cpu")
    for name in names:
        target = bench.INPUT_ONLY_TARGET if bench.is_input_only(name) else bench.SEQUENTIAL_TARGET
        rows.append(Row("speed: cells", f"{name} / nn.LSTM, {shape}", f"{ratios[name]:.2f}x", None,
                        f"runs on {ran[name]}" + (f"; CPU target ≤ {target:g}x" if on_cpu else "")))
    return rows


def pack(device: str, runs: int, hidden: int | None = None) -> Row:
    """``runs`` runs packed against one after another, each side timed once after a warm-up of
    both: drnn's sine filter with an LSTM of ``hidden`` units, or with ``hidden`` None elstm
    Fig. 5's toy task with a 1-unit ELSTM (bench_pack's cases; the second is what packing is for
    on a CPU)."""
    import tempfile

    from ..packing import train_pack
    from ..train import train_run

    if hidden is None:
        configs = [bench.presence(seed + 1) for seed in range(runs)]
        for config in configs:  # 50 of bench_pack's 200 epochs: the ratio, in a quarter of the time
            config["train"].update(epochs=50, log_every=10)
        what = "elstm Fig. 5 toy runs (1-unit ELSTM, 50 epochs)"
    else:
        configs, what = [bench.sine(seed, hidden) for seed in range(runs)], f"sine-filter runs (LSTM of {hidden} units)"
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        train_run(configs[0], root / "warm", device=device, progress_interval=1e9)
        train_pack(configs[:2], [root / "warm0", root / "warm1"], device=device, progress_interval=1e9)
        begin = time.perf_counter()
        for i, config in enumerate(configs):
            train_run(config, root / f"alone{i}", device=device, progress_interval=1e9)
        alone = time.perf_counter() - begin
        begin = time.perf_counter()
        train_pack(configs, [root / f"packed{i}" for i in range(runs)], device=device, progress_interval=1e9)
        packed = time.perf_counter() - begin
        shutil.rmtree(root, ignore_errors=True)
    return Row("speed: pack", f"{runs} {what}: one after another / packed",
               f"{alone / packed:.2f}x", None, f"{alone:.1f} s one after another, {packed:.1f} s packed "
               "(above 1: packing pays)", time.monotonic() - started)
