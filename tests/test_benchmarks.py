"""The cell benchmark runs (tiny sizes, one round): every asked cell gets a row, input-only
cells a floor row. Timings are not checked here; that is the benchmark's own job."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_cells.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("bench_cells", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_prints_a_row_per_cell_and_a_floor_per_input_only_cell(capsys):
    bench = load_benchmark()
    bench.main(["--steps", "3", "--hidden", "4", "--input", "5", "--batch", "2", "--repeats", "1",
                "--warmup", "0", "--threads", "1", "--cells", "lstm", "sgru"])
    lines = capsys.readouterr().out.splitlines()
    rows = {re.split(r"\s{2,}", line)[0]: line for line in lines[2:]}
    assert set(rows) == {"nn.LSTM (ms)", "lstm", "sgru", "sgru W_ih x only"}
    assert rows["nn.LSTM (ms)"].split()[-1].replace(".", "").isdigit()
    assert "sequential" in rows["lstm"] and "<= 1.25" in rows["lstm"]
    assert "input-only" in rows["sgru"] and "<= 0.50" in rows["sgru"]
    assert "floor" in rows["sgru W_ih x only"]
