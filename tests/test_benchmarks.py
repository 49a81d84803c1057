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


def test_benchmark_prints_one_table_per_thread_count_and_what_ran(capsys):
    """``--threads 1 2``: a table each; the runs column names what ran each sequence: oneDNN's
    kernel for nn.LSTM and the lstm cell (torch's LSTM, fused by default on the CPU), our loop
    for the GRU on the CPU and for every other cell."""
    import torch

    bench = load_benchmark()
    bench.main(["--steps", "3", "--hidden", "4", "--input", "5", "--batch", "2", "--repeats", "1",
                "--warmup", "0", "--threads", "1", "2", "--cells", "lstm", "gru", "elstm"])
    lines = capsys.readouterr().out.splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("cell (")]
    assert [lines[i].split("  ")[0] for i in headers] == ["cell (1 thread)", "cell (2 threads)"]
    onednn = torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
    for start in headers:
        rows = {re.split(r"\s{2,}", line)[0]: re.split(r"\s{2,}", line)[2] for line in lines[start + 1:start + 5]}
        assert set(rows) == {"nn.LSTM (ms)", "lstm", "gru", "elstm"}
        assert rows["lstm"] == rows["nn.LSTM (ms)"] == ("oneDNN" if onednn else "torch op")
        assert rows["gru"] == rows["elstm"] == "loop"


def test_benchmark_on_cuda_skips_cleanly_without_cuda(capsys):
    import pytest
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here: the cuda benchmark would run")
    bench = load_benchmark()
    bench.main(["--device", "cuda", "--steps", "3", "--hidden", "4", "--input", "5", "--batch", "2",
                "--repeats", "1", "--warmup", "0"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "CUDA is not available" in lines[0]


def test_benchmark_script_exits_0_on_cuda_without_cuda():
    import subprocess
    import sys

    import pytest
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here: the cuda benchmark would run")
    done = subprocess.run([sys.executable, str(BENCHMARK), "--device", "cuda"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().count("\n") == 0 and "CUDA is not available" in done.stdout


def test_wide_pack_benchmark_checks_its_member_and_prints_a_row_per_width(capsys):
    """``benchmarks/bench_wide_pack.py``: a member of the wide step computes what ``nn.LSTM`` with its
    weights computes (loss and gradients, float64), and each width gets a row (tiny sizes, CPU)."""
    spec = importlib.util.spec_from_file_location("bench_wide_pack", BENCHMARK.parent / "bench_wide_pack.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.check_against_nn_lstm() < 1e-12
    bench.main(["--widths", "1", "3", "--ways", "eager", "graph", "--steps", "1", "--hidden", "4", "--T", "3",
                "--batch", "2", "--threads", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "eager" in line]
    assert [row.split("|")[1].strip() for row in rows] == ["1", "3"]  # graph: CUDA only, left out here
