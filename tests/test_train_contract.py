"""The training contract of DESIGN.md: determinism, resume, preemption, atomic outputs, NaN, device."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from rnnrepro import train as training
from rnnrepro.train import NonFiniteLoss, TrainingInterrupted, pick_device, train_run


def adding_run(**train) -> dict:
    """A small adding-task run: 2 epochs of 20 steps."""
    settings = {"epochs": 2, "batch_size": 10, "optimizer": "adam", "lr": 0.01,
                "checkpoint_every": 3, "log_every": 4}
    settings.update(train)
    return {"study": "test", "run": "adding", "scale": "ci", "seed": 7,
            "task": {"name": "adding", "T": 12, "train_size": 200, "dev_size": 30, "test_size": 30},
            "model": {"name": "basic", "hidden_size": 6}, "cell": {"name": "lstm"},
            "train": settings, "labels": {}, "artifacts": []}


def read_outputs(folder: Path) -> tuple[dict, str]:
    return json.loads((folder / "metrics.json").read_text()), (folder / "curve.tsv").read_text()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[dict, str]:
    """Outputs of an uninterrupted run, for the comparisons below."""
    folder = tmp_path_factory.mktemp("reference")
    train_run(adding_run(), folder)
    return read_outputs(folder)


def test_same_seed_gives_identical_metrics(tmp_path, reference):
    train_run(adding_run(), tmp_path)
    assert read_outputs(tmp_path) == reference


def test_other_seed_gives_other_metrics(tmp_path, reference):
    run = adding_run()
    run["seed"] = 8
    train_run(run, tmp_path)
    assert read_outputs(tmp_path)[0] != reference[0]


def test_outputs_and_curve_layout(tmp_path, reference):
    metrics, curve = reference
    assert set(metrics) == {"dev_mse", "test_mse", "train_loss", "steps", "params"}
    assert metrics["steps"] == 40
    lines = curve.splitlines()
    assert lines[0] == "step\tepoch\tmetric\tvalue"
    metrics_logged = [line.split("\t")[2] for line in lines[1:]]
    assert metrics_logged.count("train_loss") == 10  # every 4 of 40 steps
    assert metrics_logged.count("dev_mse") == 2  # once per epoch


class StopAfter:
    """Wraps train_step: delivers SIGTERM to this process after ``steps`` steps."""

    def __init__(self, steps: int):
        self.steps = steps
        self.calls = 0
        self.original = training.train_step

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.steps:
            os.kill(os.getpid(), signal.SIGTERM)
        return self.original(*args, **kwargs)


@pytest.mark.parametrize("stop_at", [1, 5, 20, 27])
def test_sigterm_checkpoints_and_resume_is_identical(tmp_path, reference, monkeypatch, stop_at):
    handler_before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(training, "train_step", StopAfter(stop_at))
    with pytest.raises(TrainingInterrupted, match=f"SIGTERM at step {stop_at}"):
        train_run(adding_run(), tmp_path)
    assert (tmp_path / "checkpoint.pt").exists()
    assert not (tmp_path / "metrics.json").exists(), "an interrupted run must not look finished"
    assert signal.getsignal(signal.SIGTERM) is handler_before, "the stop handler must be removed again"
    monkeypatch.undo()
    train_run(adding_run(), tmp_path)
    assert read_outputs(tmp_path) == reference


def checkpoint_step(path: Path) -> int:
    try:
        return torch.load(path, weights_only=False)["progress"]["step"]
    except (FileNotFoundError, EOFError, RuntimeError):
        return -1


# Kill points drawn once from a seeded generator: several places in the 40-step run,
# including both epochs, so resumption is shown from more than one position.
KILL_AFTER = sorted(random.Random(2024).sample(range(1, 37), 3))


@pytest.mark.parametrize("kill_after", KILL_AFTER)
def test_sigkill_at_random_step_then_rerun_is_identical(tmp_path, reference, kill_after):
    """A process killed without warning resumes from its last periodic checkpoint."""
    run = adding_run(epochs=2, checkpoint_every=1)
    config = tmp_path / "run.json"
    config.write_text(json.dumps(run))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "rnnrepro.train", str(config), str(out), "--threads", "1"]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while checkpoint_step(out / "checkpoint.pt") < kill_after and time.monotonic() < deadline:
        assert process.poll() is None, "the run finished before it could be killed"
        time.sleep(0.002)
    process.kill()
    process.wait()
    step = checkpoint_step(out / "checkpoint.pt")
    assert kill_after <= step < 40, f"killed at step {step}"
    assert not (out / "metrics.json").exists()
    assert subprocess.run(command, capture_output=True).returncode == 0
    reference_run = tmp_path / "reference"
    train_run(run, reference_run)
    assert read_outputs(out) == read_outputs(reference_run)


def test_cli_exits_143_on_sigterm(tmp_path):
    run = adding_run(epochs=50)
    config = tmp_path / "run.json"
    config.write_text(json.dumps(run))
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "rnnrepro.train", str(config), str(out), "--threads", "1"],
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / "checkpoint.pt").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == training.EXIT_INTERRUPTED, stderr
    assert "SIGTERM at step" in stderr and "checkpoint written" in stderr
    assert not (out / "metrics.json").exists()


def test_nan_loss_stops_naming_the_step(tmp_path):
    run = adding_run(optimizer="sgd", lr=1e30)
    with pytest.raises(NonFiniteLoss, match=r"at step \d+ \(epoch 1, batch \d+\)"):
        train_run(run, tmp_path)
    assert not (tmp_path / "metrics.json").exists()


def test_checkpoint_of_another_config_is_not_resumed(tmp_path, reference):
    other = adding_run(lr=0.02)
    train_run(other, tmp_path)
    train_run(adding_run(), tmp_path)
    assert read_outputs(tmp_path) == reference
    assert (tmp_path / "checkpoint.pt.stale").exists()


def test_finished_checkpoint_skips_training(tmp_path, reference, monkeypatch):
    train_run(adding_run(), tmp_path)
    (tmp_path / "metrics.json").unlink()

    def fail(*args, **kwargs):
        raise AssertionError("training ran again although the checkpoint was final")

    monkeypatch.setattr(training, "train_step", fail)
    train_run(adding_run(), tmp_path)
    assert read_outputs(tmp_path) == reference


def test_no_temporary_files_left(tmp_path):
    train_run(adding_run(epochs=1), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt", "config.json", "curve.tsv", "metrics.json"]


def test_device_is_chosen_at_run_time(monkeypatch):
    monkeypatch.delenv("RNNREPRO_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert pick_device().type == expected
    monkeypatch.setenv("RNNREPRO_DEVICE", "cpu")
    assert pick_device().type == "cpu"
    assert pick_device("meta").type == "meta"


def test_progress_is_logged(tmp_path, caplog):
    caplog.set_level("INFO", logger="rnnrepro.train")
    train_run(adding_run(epochs=1), tmp_path, progress_interval=0.0)
    lines = [r.getMessage() for r in caplog.records if "steps/s" in r.getMessage()]
    assert lines and lines[-1].startswith("step 20/20 (100%) epoch 1 loss")


def test_adagrad_initial_accumulator():
    """initial_accumulator is Adagrad's a_0 in lr·g / sqrt(a_0 + g²): with TensorFlow 1's 0.1
    a first step with gradient 0.1 moves a weight by 0.5·0.1/sqrt(0.11), not by the full lr."""
    weight = torch.nn.Parameter(torch.zeros(1))
    optimizer = training.make_optimizer([weight], training.TrainConfig(lr=0.5, initial_accumulator=0.1))
    weight.grad = torch.tensor([0.1])
    optimizer.step()
    assert weight.item() == pytest.approx(-0.5 * 0.1 / (0.1 + 0.01) ** 0.5)
    with pytest.raises(ValueError, match="initial_accumulator is an Adagrad setting"):
        training.make_optimizer([weight], training.TrainConfig(optimizer="adam", initial_accumulator=0.1))
