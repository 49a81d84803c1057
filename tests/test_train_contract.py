"""The training contract of DESIGN.md: determinism, resume, preemption, atomic outputs, NaN, device.

Resumption is shown on two runs: a small adding-task run, and a stateful language-model run
that uses every feature whose state must survive a resume -- the recurrent state carried
between batches, dropout masks, the learning-rate schedule and early stopping (with its kept
weights) -- killed and stopped at several points, one of them after the early stop.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import torch

from rnnrepro import train as training
from rnnrepro.data.prepared import write_json_gz
from rnnrepro.train import NonFiniteLoss, TrainingInterrupted, pick_device, train_run


def adding_run(**train) -> dict:
    """A small adding-task run: 2 epochs of 20 steps."""
    settings = {"epochs": 2, "batch_size": 10, "optimizer": "adam", "lr": 0.01,
                "checkpoint_every": 3, "log_every": 4}
    settings.update(train)
    return {"seed": 7, "task": {"name": "adding", "T": 12, "train_size": 200, "dev_size": 30, "test_size": 30},
            "model": {"name": "basic", "hidden_size": 6}, "cell": {"name": "lstm"}, "train": settings}


def synthetic_corpus(tokens: int, seed: int) -> list[str]:
    """Lines of 3 to 6 words, each position drawn from its own pair of words: learnable, not trivial."""
    rng = random.Random(seed)
    slots = [("the", "a"), ("cat", "dog"), ("sat", "ran"), ("on", "under"), ("the", "a"), ("mat", "rug")]
    out: list[str] = []
    while len(out) < tokens:
        out += [rng.choice(pair) for pair in slots][:rng.randint(3, 6)] + ["<eos>"]
    return out[:tokens]


@pytest.fixture(scope="module")
def lm_data(tmp_path_factory) -> str:
    """A prepared ptb_word-style corpus: 700 training tokens, 150 dev and test tokens."""
    path = tmp_path_factory.mktemp("lm") / "ptb_word.json.gz"
    write_json_gz({"dataset": "ptb_word", "splits": {"train": synthetic_corpus(700, 1), "dev": synthetic_corpus(150, 2),
                                                     "test": synthetic_corpus(150, 3)}}, path)
    return str(path)


def lm_run(**train) -> dict:
    """A stateful LM run (30 steps an epoch) with dropout, init ranges, a learning-rate decay
    from epoch 3 and early stopping that ends it after epoch 6 of 8 (best epoch 5)."""
    settings = {"epochs": 8, "batch_size": 4, "optimizer": "adam", "lr": 0.03, "clip": 0.25,
                "lr_decay": 2.0, "lr_decay_after": 2, "patience": 1, "min_delta": 0.1,
                "eval_batch_size": 3, "checkpoint_every": 7, "log_every": 4}
    settings.update(train)
    return {"seed": 3, "task": {"name": "lm", "corpus": "ptb_word", "bptt": 6, "stateful": True},
            "model": {"name": "stacked", "layers": 2, "hidden_size": 8, "embedding_size": 6, "dropout": 0.3,
                      "init_range": 0.1, "embedding_init": 0.1, "output_init": 0.1},
            "cell": {"name": "lstm"}, "train": settings}


LM_STEPS = 180  # 6 epochs of 30 steps, then the early stop


def read_outputs(folder: Path) -> tuple[dict, str]:
    """metrics.json without its provenance (wall time differs between runs) and curve.tsv."""
    metrics = json.loads((folder / "metrics.json").read_text())
    assert set(metrics.pop("provenance")) >= {"device", "torch", "threads", "wall_seconds"}
    return metrics, (folder / "curve.tsv").read_text()


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
    assert set(metrics) == {"dev_mse", "test_mse", "train_loss", "steps", "params", "epochs"}
    assert metrics["steps"] == 40 and metrics["epochs"] == 2
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


def stop_then_resume(folder: Path, monkeypatch, run: dict, stop_at: int, data: str | None = None) -> None:
    """SIGTERM after ``stop_at`` steps, check the interrupted state, then run to the end."""
    handler_before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(training, "train_step", StopAfter(stop_at))
    with pytest.raises(TrainingInterrupted, match=f"SIGTERM at step {stop_at}"):
        train_run(run, folder, data=data)
    assert (folder / "checkpoint.pt").exists()
    assert not (folder / "metrics.json").exists(), "an interrupted run must not look finished"
    assert signal.getsignal(signal.SIGTERM) is handler_before, "the stop handler must be removed again"
    monkeypatch.undo()
    train_run(run, folder, data=data)


@pytest.mark.parametrize("stop_at", [1, 5, 20, 27])
def test_sigterm_checkpoints_and_resume_is_identical(tmp_path, reference, monkeypatch, stop_at):
    stop_then_resume(tmp_path, monkeypatch, adding_run(), stop_at)
    assert read_outputs(tmp_path) == reference


@pytest.fixture(scope="module")
def lm_reference(tmp_path_factory, lm_data) -> tuple[dict, str]:
    """Outputs of an uninterrupted stateful LM run; it must have stopped early."""
    folder = tmp_path_factory.mktemp("lm_reference")
    train_run(lm_run(), folder, data=lm_data)
    metrics, curve = read_outputs(folder)
    assert (metrics["steps"], metrics["epochs"], metrics["best_epoch"]) == (LM_STEPS, 6, 5), \
        "the LM run no longer stops early where these tests expect; adjust lm_run"
    return metrics, curve


# in the first window, at the last step of epoch 1 (before its dev evaluation), mid-epoch
# after the decay started, in the epoch of the kept weights, in the epoch after it
@pytest.mark.parametrize("stop_at", [1, 30, 71, 150, 163])
def test_stateful_lm_sigterm_then_resume_is_identical(tmp_path, lm_data, lm_reference, monkeypatch, stop_at):
    """Carried state, dropout masks, learning-rate schedule and early stopping all survive."""
    stop_then_resume(tmp_path, monkeypatch, lm_run(), stop_at, data=lm_data)
    assert read_outputs(tmp_path) == lm_reference


def checkpoint_step(path: Path) -> int:
    try:
        return training.checkpoint_payload(path.read_bytes())["progress"]["step"]
    except (FileNotFoundError, EOFError, RuntimeError, ValueError):
        return -1


def stamp(path: Path) -> tuple[int, int] | None:
    """What changes when a checkpoint is replaced (its inode and time), or None when there is none."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_ino, status.st_mtime_ns


_UNINTERRUPTED: dict[str, object] = {}  # a run's config (and data) as JSON -> its outputs trained in one go


def uninterrupted_outputs(run: dict, folder: Path, data: str | None):
    """The outputs of ``run`` trained without interruption, trained once per config and data
    (the kill points of one config compare against the same run)."""
    key = json.dumps([run, data], sort_keys=True)
    if key not in _UNINTERRUPTED:
        train_run(run, folder, data=data)
        _UNINTERRUPTED[key] = read_outputs(folder)
    return _UNINTERRUPTED[key]


# Kill points drawn once from a seeded generator: several places in the 40-step run,
# including both epochs, so resumption is shown from more than one position.
KILL_AFTER = sorted(random.Random(2024).sample(range(1, 37), 3))


def kill_then_rerun(tmp_path: Path, run: dict, kill_after: int, total_steps: int, data: str | None = None) -> None:
    """Run the CLI, SIGKILL it once its checkpoint has passed ``kill_after`` steps, run it
    again to the end, and compare with an uninterrupted run of the same config."""
    config = tmp_path / "run.json"
    config.write_text(json.dumps(run))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "rnnrepro.train", str(config), str(out), "--threads", "1"]
    if data is not None:
        command += ["--data", data]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    seen, step = None, -1
    while step < kill_after and time.monotonic() < deadline:
        assert process.poll() is None, "the run finished before it could be killed"
        time.sleep(0.002)
        if (now := stamp(out / "checkpoint.pt")) != seen:  # read a checkpoint only when a new one is there
            seen, step = now, checkpoint_step(out / "checkpoint.pt")
    process.kill()
    process.wait()
    step = checkpoint_step(out / "checkpoint.pt")
    assert kill_after <= step < total_steps, f"killed at step {step}"
    assert not (out / "metrics.json").exists()
    assert subprocess.run(command, capture_output=True).returncode == 0
    assert read_outputs(out) == uninterrupted_outputs(run, tmp_path / "reference", data)


@pytest.mark.parametrize("kill_after", KILL_AFTER)
def test_sigkill_at_random_step_then_rerun_is_identical(tmp_path, kill_after):
    """A process killed without warning resumes from its last periodic checkpoint."""
    kill_then_rerun(tmp_path, adding_run(epochs=2, checkpoint_every=1), kill_after, 40)


# Kill points of the 180-step stateful LM run, drawn once from a seeded generator.
LM_KILL_AFTER = sorted(random.Random(2025).sample(range(1, LM_STEPS - 25), 3))


@pytest.mark.parametrize("kill_after", LM_KILL_AFTER)
def test_stateful_lm_sigkill_at_random_step_then_rerun_is_identical(tmp_path, lm_data, kill_after):
    kill_then_rerun(tmp_path, lm_run(checkpoint_every=1), kill_after, LM_STEPS, data=lm_data)


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


def test_early_stopped_checkpoint_skips_training(tmp_path, lm_data, lm_reference, monkeypatch):
    """After the early stop the checkpoint is final: a rerun only evaluates the kept weights."""
    train_run(lm_run(), tmp_path, data=lm_data)
    (tmp_path / "metrics.json").unlink()
    (tmp_path / "model.pt").unlink()

    def fail(*args, **kwargs):
        raise AssertionError("training ran again although early stopping had ended it")

    monkeypatch.setattr(training, "train_step", fail)
    train_run(lm_run(), tmp_path, data=lm_data)
    assert read_outputs(tmp_path) == lm_reference


def test_no_temporary_files_left(tmp_path):
    train_run(adding_run(epochs=1), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt", "config.json", "curve.tsv", "items.npz",
                                                          "metrics.json", "model.pt"]


def test_device_is_chosen_when_the_run_starts(monkeypatch, tmp_path):
    """The device follows what the machine has when a run starts (a GPU node of the cluster),
    RNNREPRO_DEVICE wins over it, an explicit device over both, and the run records it."""
    monkeypatch.delenv("RNNREPRO_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device().type == "cuda"
    monkeypatch.setenv("RNNREPRO_DEVICE", "cpu")
    assert pick_device().type == "cpu"
    assert pick_device("meta").type == "meta"
    monkeypatch.delenv("RNNREPRO_DEVICE")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device().type == "cpu"
    train_run(adding_run(epochs=1), tmp_path)
    made = json.loads((tmp_path / "metrics.json").read_text())["provenance"]
    assert made["device"] == "cpu" and made["torch"] == torch.__version__ and made["wall_seconds"] > 0


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


@pytest.mark.parametrize("name", ["sgd", "adam", "adagrad"])
def test_cpu_optimisers_take_the_fused_kernels_and_the_same_step(name):
    """On the CPU the optimisers run torch's fused kernels (make_optimizer); their steps are the
    loop's up to rounding. Parameter groups (dicts) keep torch's default."""
    torch.manual_seed(0)
    start, grads = torch.randn(5, 3), [torch.randn(5, 3) for _ in range(4)]
    cfg = training.TrainConfig(optimizer=name, lr=0.1)
    weights = {}
    for fused in (True, False):
        weight = torch.nn.Parameter(start.clone())
        optimizer = training.make_optimizer([weight], cfg)
        assert optimizer.param_groups[0]["fused"] is True
        if not fused:
            optimizer = type(optimizer)([weight], lr=0.1)  # torch's CPU default: the per-parameter loop
        for grad in grads:
            weight.grad = grad.clone()
            optimizer.step()
        weights[fused] = weight.detach()
    assert not torch.equal(weights[True], start)
    torch.testing.assert_close(weights[True], weights[False], rtol=1e-6, atol=1e-7)
    group = training.make_optimizer([{"params": [torch.nn.Parameter(start.clone())]}], cfg).param_groups[0]
    assert not group["fused"]


# -- stop signals outside the training steps ---------------------------------------------------
class SignalOnCall:
    """Wraps a function: delivers SIGTERM to this process on its ``call``-th call, then runs it."""

    def __init__(self, original, call: int):
        self.original, self.call, self.calls = original, call, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.call:
            os.kill(os.getpid(), signal.SIGTERM)
        return self.original(*args, **kwargs)


def no_training(*args, **kwargs):
    raise AssertionError("training ran again although the checkpoint was final")


@pytest.fixture
def unhandled_sigterm_fails():
    """SIGTERM where the run does not handle it fails the test, instead of ending pytest."""
    def fail(signum, frame):
        raise AssertionError("SIGTERM arrived where the run does not handle it")

    previous = signal.signal(signal.SIGTERM, fail)
    yield
    signal.signal(signal.SIGTERM, previous)


@pytest.mark.usefixtures("unhandled_sigterm_fails")
def test_sigterm_in_the_last_dev_evaluation_checkpoints_and_resumes(tmp_path, reference, monkeypatch):
    """The adding run evaluates dev after each of its 2 epochs; SIGTERM in the second (the last)
    stops the run with a final checkpoint, whose rerun only evaluates and writes the outputs."""
    with monkeypatch.context() as patch:
        patch.setattr(training, "evaluate", SignalOnCall(training.evaluate, 2))
        with pytest.raises(TrainingInterrupted, match="SIGTERM at step 40, in the dev evaluation of epoch 2"):
            train_run(adding_run(), tmp_path)
    assert (tmp_path / "checkpoint.pt").exists() and not (tmp_path / "metrics.json").exists()
    monkeypatch.setattr(training, "train_step", no_training)
    train_run(adding_run(), tmp_path)
    assert read_outputs(tmp_path) == reference


@pytest.mark.usefixtures("unhandled_sigterm_fails")
def test_sigterm_in_the_final_evaluation_writes_no_outputs(tmp_path, reference, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(training, "final_evaluation", SignalOnCall(training.final_evaluation, 1))
        with pytest.raises(TrainingInterrupted, match="SIGTERM during the final evaluation .* checkpoint is final"):
            train_run(adding_run(), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]
    monkeypatch.setattr(training, "train_step", no_training)
    train_run(adding_run(), tmp_path)
    assert read_outputs(tmp_path) == reference


SIGNAL_WHILE_WRITING = """
import os, signal, sys
from rnnrepro import train
write_outputs = train.write_outputs
def signal_then_write(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
    write_outputs(*args, **kwargs)
train.write_outputs = signal_then_write
sys.exit(train.main(sys.argv[1:]))
"""


def test_cli_exits_0_when_sigterm_arrives_while_the_outputs_are_written(tmp_path, reference):
    """Once the final evaluation is done the outputs are written whatever arrives: the run is
    finished, with every output, so it exits 0 (in a process of its own: without the change
    SIGTERM would end it, here it would end pytest)."""
    config = tmp_path / "run.json"
    config.write_text(json.dumps(adding_run()))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", SIGNAL_WHILE_WRITING, str(config), str(out), "--threads", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "SIGTERM arrived while the outputs were written" in done.stderr
    assert read_outputs(out) == reference


# -- a checkpoint cut short, temporary files left behind ------------------------------------------
def garbled(data: bytes) -> bytes:
    """64 bytes flipped in the middle: a zip whose records torch.load still reads, with other weights."""
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64]) + data[middle + 64:]


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbled"])
def test_an_unreadable_checkpoint_is_set_aside_and_the_run_starts_afresh(tmp_path, reference, monkeypatch,
                                                                          caplog, damage):
    """What a node crash during a write (before writes were fsynced) or a damaged disk can leave
    under the final name: the rerun names the file and its error, keeps it as checkpoint.pt.corrupt
    and trains from the start to the same metrics, with nobody deleting anything. A garbled one is
    found by its sha256 (torch.load checks none, and would resume from damaged weights)."""
    with monkeypatch.context() as patch:
        patch.setattr(training, "train_step", StopAfter(7))
        with pytest.raises(TrainingInterrupted):
            train_run(adding_run(), tmp_path)
    checkpoint = tmp_path / "checkpoint.pt"
    data = checkpoint.read_bytes()
    cut = {"empty": b"", "truncated": data[:len(data) // 2], "garbled": garbled(data)}[damage]
    checkpoint.write_bytes(cut)
    with caplog.at_level("WARNING", logger="rnnrepro.train"):
        train_run(adding_run(), tmp_path)
    assert read_outputs(tmp_path) == reference
    assert (tmp_path / "checkpoint.pt.corrupt").read_bytes() == cut
    assert f"checkpoint {checkpoint} cannot be read (" in caplog.text and "starting afresh" in caplog.text


def test_temporary_files_of_killed_writes_are_removed_when_a_run_starts(tmp_path, reference, caplog):
    stale = [tmp_path / ".checkpoint.pt.999999999.0a1b2c3d.tmp", tmp_path / ".items.npz.12.ffffffff.tmp"]
    for path in stale:
        path.write_bytes(bytes(1_000_000))
    others = [tmp_path / "notes.tmp", tmp_path / ".notes.tmp", tmp_path / ".model.pt.12.not-hex!.tmp"]
    for path in others:
        path.write_text("not ours")
    with caplog.at_level("WARNING", logger="rnnrepro.train"):
        train_run(adding_run(), tmp_path)
    assert not any(path.exists() for path in stale) and all(path.exists() for path in others)
    assert all(f"removed {path}" in caplog.text for path in stale)
    assert read_outputs(tmp_path) == reference


# -- deterministic kernels -----------------------------------------------------------------------
class KernelsSeen:
    """Wraps train_step: the kernel settings in force during each training step."""

    def __init__(self):
        self.seen: set[tuple] = set()
        self.original = training.train_step

    def __call__(self, *args, **kwargs):
        self.seen.add((torch.are_deterministic_algorithms_enabled(),
                       torch.is_deterministic_algorithms_warn_only_enabled(),
                       torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark,
                       os.environ.get("CUBLAS_WORKSPACE_CONFIG")))
        return self.original(*args, **kwargs)


def kernel_settings() -> tuple:
    return (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)


def test_runs_use_deterministic_kernels_by_default(tmp_path, reference, monkeypatch):
    monkeypatch.delenv("RNNREPRO_DETERMINISTIC", raising=False)
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    before = kernel_settings()
    seen = KernelsSeen()
    monkeypatch.setattr(training, "train_step", seen)
    train_run(adding_run(), tmp_path)
    assert seen.seen == {(True, True, True, False, ":4096:8")}
    assert kernel_settings() == before, "the run's kernel settings must not outlive it"
    made = json.loads((tmp_path / "metrics.json").read_text())["provenance"]
    assert (made["deterministic"], made["nondeterministic_ops"], made["RNNREPRO_DETERMINISTIC"]) == (True, "", "")
    assert read_outputs(tmp_path) == reference


def test_a_users_cublas_workspace_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    seen = KernelsSeen()
    monkeypatch.setattr(training, "train_step", seen)
    train_run(adding_run(epochs=1), tmp_path)
    assert seen.seen == {(True, True, True, False, ":16:8")}


def test_the_switch_allows_fast_kernels_and_provenance_says_so(tmp_path, reference, monkeypatch):
    """RNNREPRO_DETERMINISTIC=0: torch's fast kernels (on a CPU the same ones: same numbers); a
    run resumed with deterministic kernels after a session without them is not called deterministic."""
    monkeypatch.setenv("RNNREPRO_DETERMINISTIC", "0")
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    seen = KernelsSeen()
    with monkeypatch.context() as patch:
        patch.setattr(training, "train_step", seen)
        train_run(adding_run(), tmp_path / "fast")
    assert seen.seen == {(False, True, False, True, None)}
    made = json.loads((tmp_path / "fast/metrics.json").read_text())["provenance"]
    assert (made["deterministic"], made["RNNREPRO_DETERMINISTIC"]) == (False, "0")
    assert read_outputs(tmp_path / "fast") == reference
    with monkeypatch.context() as patch:
        patch.setattr(training, "train_step", StopAfter(5))
        with pytest.raises(TrainingInterrupted):
            train_run(adding_run(), tmp_path / "mixed")
    monkeypatch.delenv("RNNREPRO_DETERMINISTIC")
    train_run(adding_run(), tmp_path / "mixed")
    assert json.loads((tmp_path / "mixed/metrics.json").read_text())["provenance"]["deterministic"] is False


KERNELS_IN_A_FRESH_PROCESS = """
import sys, torch
from rnnrepro.train import Kernels
with Kernels():
    inside = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
print(inside, torch.are_deterministic_algorithms_enabled(), "torch._dynamo" in sys.modules, "torch._inductor" in sys.modules)
import torch._inductor.config as inductor
with Kernels():
    print(inductor.deterministic, torch.are_deterministic_algorithms_enabled())
print(inductor.deterministic, torch.are_deterministic_algorithms_enabled())
"""


def test_deterministic_kernels_spare_a_process_the_import_of_torchs_compiler():
    """train.set_deterministic_algorithms: in a fresh process the kernels' flag is set (and reset)
    without importing torch._inductor and torch._dynamo (about 2 s a training job), which
    torch.use_deterministic_algorithms imports for inductor's own flag; once inductor is loaded,
    that flag follows too."""
    env = {name: value for name, value in os.environ.items() if name != "RNNREPRO_DETERMINISTIC"}
    result = subprocess.run([sys.executable, "-c", KERNELS_IN_A_FRESH_PROCESS], env=env, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split("\n")[:3] == ["(True, True) False False False", "True True", "False False"]


def test_a_training_process_imports_no_table_library():
    """Every task module is imported with any task (tasks/__init__), so a module of that folder
    that imports pandas at its top (the baselines' table did) costs every training process the
    import (0.57 s of rnnrepro.train's 3.4 s, measured in a slow hour: in every job and every run a
    test starts)."""
    result = subprocess.run([sys.executable, "-c", "import sys, rnnrepro.train; print(sorted("
                             "{'pandas', 'scipy', 'seaborn', 'matplotlib'} & set(sys.modules)))"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


FREED_MEMORY_IN_A_FRESH_PROCESS = """
import resource, sys, torch
from rnnrepro import allocator

def system_seconds_of_steps():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    for _ in range(30):
        torch.ones(32 << 18).sum()  # 32 MiB allocated, touched and freed, as a step's large tensors
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime - before

usual = system_seconds_of_steps()
from rnnrepro.train import Kernels
with Kernels():
    kept = system_seconds_of_steps()
print(allocator.keep_freed_memory(), usual, kept)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_training_process_keeps_the_memory_it_frees():
    """rnnrepro.allocator, through Kernels: with glibc's thresholds raised, a large block freed and
    allocated again stays in the heap, so the kernel no longer maps and zeroes fresh pages at
    each step (system time of 30 such 32 MiB blocks here: 0.76-0.89 s before, 0.02-0.03 s after)."""
    result = subprocess.run([sys.executable, "-c", FREED_MEMORY_IN_A_FRESH_PROCESS], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    raised, usual, kept = result.stdout.split()
    assert raised == "True"
    assert float(kept) < 0.5 * float(usual), (usual, kept)


def test_an_op_without_a_deterministic_kernel_is_named_in_log_and_provenance(tmp_path, monkeypatch, caplog):
    """max_unpool has no deterministic kernel even on the CPU: with it in every training step
    the run goes on (warn_only), names it once in its log, lists it in provenance, and torch's
    warning does not reach the warning stream."""
    original = training.train_step

    def step_with_unpool(*args, **kwargs):
        values, indices = torch.nn.functional.max_pool1d(torch.randn(1, 1, 4), 2, return_indices=True)
        torch.nn.functional.max_unpool1d(values, indices, 2)
        return original(*args, **kwargs)

    monkeypatch.setattr(training, "train_step", step_with_unpool)
    with warnings.catch_warnings(record=True) as shown, caplog.at_level("WARNING", logger="rnnrepro.train"):
        warnings.simplefilter("always")
        train_run(adding_run(), tmp_path)
    made = json.loads((tmp_path / "metrics.json").read_text())["provenance"]
    assert made["nondeterministic_ops"] == "max_unpooling2d_forward_out" and made["deterministic"] is True
    assert caplog.text.count("max_unpooling2d_forward_out has no deterministic kernel") == 1
    assert not [w for w in shown if "deterministic" in str(w.message)]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: deterministic cuDNN and cuBLAS kernels")
def test_same_seed_gives_identical_metrics_on_cuda(tmp_path, lm_data):
    """On a GPU the deterministic kernels make two runs of one config identical (the stateful LM:
    cuDNN's LSTM, cuBLAS products, embedding gradients)."""
    outputs = []
    for name in ("first", "second"):
        train_run(lm_run(), tmp_path / name, data=lm_data, device="cuda")
        outputs.append(read_outputs(tmp_path / name))
        made = json.loads((tmp_path / name / "metrics.json").read_text())["provenance"]
        assert made["device"].startswith("cuda") and made["deterministic"] is True
    assert outputs[0] == outputs[1]


def test_equal_numbers_are_equal_bytes(tmp_path, reference):
    """Two runs of one config and seed write the same model.pt, byte for byte, so its sha256 in a
    job's record and in DVC stays put when a run is trained again (saved to a path, torch named
    the archive's folder after the temporary file). Their checkpoints differ only in the wall time
    the run took (``progress.seconds``): written with the same time, they are the same bytes."""
    train_run(adding_run(), tmp_path / "a")
    train_run(adding_run(), tmp_path / "b")
    assert (tmp_path / "a" / "model.pt").read_bytes() == (tmp_path / "b" / "model.pt").read_bytes()
    checkpoints = [training.checkpoint_payload((tmp_path / run / "checkpoint.pt").read_bytes()) for run in "ab"]
    for payload in checkpoints:
        payload["progress"]["seconds"] = 0.0
    assert training.torch_bytes(checkpoints[0]) == training.torch_bytes(checkpoints[1])
