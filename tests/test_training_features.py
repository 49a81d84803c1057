"""Training features any study can switch on from its run config: stateful truncated BPTT for
language models, dropout on the non-recurrent connections, initialisation ranges, the
learning-rate schedule and early stopping. (Their survival of kill + resume is shown in
test_train_contract.py; how our PTB LM compares with a plain torch.nn.LSTM one is the slow
test at the end, with the benchmark's smoke test.)"""
from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest
import torch

from rnnrepro import train as training
from rnnrepro.data.prepared import write_json_gz
from rnnrepro.models import MODELS, build_model
from rnnrepro.plan.config_check import ConfigError, check_run_config
from rnnrepro.tasks import TASKS, Batch, TaskIO, build_task
from rnnrepro.tasks.base import IGNORE_INDEX, forward_with_state
from rnnrepro.train import TrainConfig, improves, train_run

CPU = torch.device("cpu")
TOKENS = TaskIO(output_size=7, level="token", input_vocab=9)
REPO = Path(__file__).resolve().parents[1]


def corpus_file(tmp_path: Path, tokens: int = 97) -> str:
    """A prepared ptb_word-style corpus whose streams are ``tokens`` long (a cycle of 7 words)."""
    words = [["a", "b", "c", "d", "e", "f", "<eos>"][i % 7] for i in range(tokens)]
    path = tmp_path / "ptb_word.json.gz"
    write_json_gz({"dataset": "ptb_word", "splits": {"train": words, "dev": words[:60], "test": words[:45]}}, path)
    return str(path)


def lm_run(**changes) -> dict:
    run = {"seed": 5, "task": {"name": "lm", "corpus": "ptb_word", "bptt": 5, "stateful": True},
           "model": {"name": "basic", "hidden_size": 6, "embedding_size": 4}, "cell": {"name": "lstm"},
           "train": {"epochs": 2, "batch_size": 3, "optimizer": "adam", "lr": 0.02, "eval_batch_size": 2}}
    for section, values in changes.items():
        run[section] = {**run[section], **values} if isinstance(values, dict) else values
    return run


# -- stateful truncated BPTT ------------------------------------------------------------------
@pytest.mark.parametrize("pieces", [1, 3, 4, 200])
def test_stateful_batches_continue_each_other_and_score_every_token_but_the_first_once(tmp_path, pieces):
    task = build_task("lm", data=corpus_file(tmp_path), bptt=5, stateful=True)
    stream = task.streams["train"]
    batches = task.batches("train", pieces, torch.Generator().manual_seed(1))
    assert [b.inputs.tolist() for b in batches] == [b.inputs.tolist() for b in task.batches("train", pieces)]
    inputs = torch.cat([b.inputs for b in batches])  # (total steps, pieces): column b is piece b
    targets = torch.cat([b.targets for b in batches])
    lengths = torch.stack([b.lengths for b in batches]).sum(0).tolist()
    assert max(lengths) - min(lengths) <= 1 and lengths == sorted(lengths, reverse=True)
    read, scored = [], []
    for column, length in enumerate(lengths):
        assert (inputs[length:, column] == 0).all() and (targets[length:, column] == IGNORE_INDEX).all()
        read += inputs[:length, column].tolist()
        scored += [t + 1 for t in targets[:length, column].tolist()]
    assert read == stream[:-1] and scored == stream[1:]  # contiguous pieces, in order
    assert all(b.inputs.shape[0] <= 5 for b in batches)


def test_stateful_needs_stream_mode_and_no_context(tmp_path):
    data = corpus_file(tmp_path)
    with pytest.raises(ValueError, match="stateful applies to mode 'stream' only"):
        build_task("lm", data=data, mode="sentence", stateful=True)
    with pytest.raises(ValueError, match="context=3 approximates a carried state"):
        build_task("lm", data=data, context=3, stateful=True)


STATEFUL_MODELS = [("basic", {}), ("stacked", {"layers": 3}), ("delayed", {"delay": 0})]


@pytest.mark.parametrize("model, params", STATEFUL_MODELS)
@pytest.mark.parametrize("cell", ["lstm", "gru", "srn", "pru"])
def test_carrying_the_state_across_windows_equals_one_pass(tmp_path, model, params, cell):
    """Windows read with the carried state give the outputs of one pass over the whole piece."""
    task = build_task("lm", data=corpus_file(tmp_path), bptt=4, stateful=True)
    torch.manual_seed(0)
    net = build_model(model, task.io, cell, hidden_size=5, embedding_size=3, **params).eval()
    batches = task.batches("train", 3)
    state, outputs = None, []
    for batch in batches:
        output, state = forward_with_state(net, batch, state)
        outputs.append(output)
    whole = Batch(torch.cat([b.inputs for b in batches]), torch.stack([b.lengths for b in batches]).sum(0),
                  torch.zeros(0))
    real = whole.inputs != 0
    assert torch.allclose(torch.cat(outputs)[real], net(whole)[real], atol=1e-5)
    assert torch.equal(net(batches[0]), forward_with_state(net, batches[0], None)[0])


@pytest.mark.parametrize("model, params, reason", [
    ("brnn", {}, "backward direction"),
    ("stacked", {"bidirectional": True}, "layers are bidirectional"),
    ("delayed", {"delay": 2}, "delay of 2 pads every batch"),
    ("flattened", {}, "delay of k - 1 steps"),
    ("dbrnn", {}, "does not implement forward"),
])
def test_models_that_cannot_carry_state_say_why(tmp_path, model, params, reason):
    net = build_model(model, TOKENS, "lstm", hidden_size=4, embedding_size=3, **params)
    batch = Batch(torch.ones(3, 2, dtype=torch.long), torch.tensor([3, 3]), torch.zeros(0))
    with pytest.raises(TypeError, match=reason):
        forward_with_state(net, batch, None)
    run = lm_run(model={"name": model, **params})
    with pytest.raises(ValueError, match=f"stateful=True carries the model's state .*{reason}"):
        training.build_run(run, corpus_file(tmp_path))


def test_the_training_loop_carries_the_state_and_resets_it_every_epoch(tmp_path, monkeypatch):
    calls = []
    original = training.train_step

    def spy(model, task, batch, optimizer, cfg, carried=None):
        loss, after = original(model, task, batch, optimizer, cfg, carried)
        calls.append((carried, after))
        return loss, after

    monkeypatch.setattr(training, "train_step", spy)
    data = corpus_file(tmp_path)
    train_run(lm_run(), tmp_path / "run", data=data)
    per_epoch = len(build_task("lm", data=data, bptt=5, stateful=True).batches("train", 3))
    assert len(calls) == 2 * per_epoch
    for index, (carried, after) in enumerate(calls):
        assert not after[0].requires_grad  # detached: gradients stop at the window's start
        if index % per_epoch == 0:
            assert carried is None
        else:
            assert all(torch.equal(a, b) for a, b in zip(carried, calls[index - 1][1]))


def test_stateful_evaluation_reads_each_piece_in_one_pass(tmp_path):
    """With one piece, the stateful dev NLL is that of the whole stream read at once."""
    data = corpus_file(tmp_path)
    task = build_task("lm", data=data, bptt=4, stateful=True)
    torch.manual_seed(0)
    net = build_model("stacked", task.io, "lstm", hidden_size=5, embedding_size=3).eval()
    stream = task.streams["dev"]
    whole = Batch(torch.tensor(stream[:-1]).unsqueeze(1), torch.tensor([len(stream) - 1]), torch.zeros(0))
    with torch.no_grad():
        log_probs = torch.log_softmax(net(whole)[:, 0], -1)
    nll = -float(log_probs.gather(1, torch.tensor(stream[1:]).unsqueeze(1) - 1).mean())
    assert task.evaluate(net, "dev", 1, CPU)["dev_nll"] == pytest.approx(nll, rel=1e-5)
    assert task.evaluate(net, "dev", 3, CPU)["dev_nll"] != pytest.approx(nll, rel=1e-5)  # 3 cold starts


# -- dropout ------------------------------------------------------------------------------------
@pytest.mark.parametrize("model, params, dropouts", [
    ("basic", {}, 2), ("brnn", {}, 2), ("delayed", {"delay": 1}, 2),
    ("stacked", {"layers": 3}, 4), ("stacked", {"layers": 2, "bidirectional": True}, 3),
])
def test_dropout_sits_on_the_non_recurrent_connections(model, params, dropouts):
    """Embedding output, between stacked layers, before the head: never inside the time loop,
    and only in training mode."""
    torch.manual_seed(0)
    net = build_model(model, TOKENS, "lstm", hidden_size=4, embedding_size=3, dropout=0.5, **params)
    calls = []
    for module in net.modules():
        if isinstance(module, torch.nn.Dropout):
            assert module.p == 0.5
            module.register_forward_hook(lambda m, i, o: calls.append(tuple(i[0].shape)))
    batch = Batch(torch.randint(1, 9, (6, 2)), torch.tensor([6, 4]), torch.zeros(0))
    net.train()(batch)
    assert len(calls) == dropouts and all(shape[:2] in ((6, 2), (6 + params.get("delay", 0), 2)) for shape in calls)
    torch.manual_seed(0)
    plain = build_model(model, TOKENS, "lstm", hidden_size=4, embedding_size=3, **params)
    plain.load_state_dict(net.state_dict())
    assert torch.equal(net.eval()(batch), plain.eval()(batch))
    assert not torch.allclose(net.train()(batch), plain.train()(batch))
    assert not any(isinstance(m, torch.nn.Dropout) for m in plain.modules())  # 0: no dropout at all


def test_dropout_must_be_a_probability():
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        build_model("stacked", TOKENS, "lstm", dropout=1.0)


def test_dropout_is_deterministic_given_the_seed_and_changes_the_run(tmp_path):
    data = corpus_file(tmp_path)
    with_dropout = lm_run(model={"dropout": 0.4})
    first = train_run(with_dropout, tmp_path / "a", data=data)
    again = train_run(with_dropout, tmp_path / "b", data=data)
    plain = train_run(lm_run(), tmp_path / "c", data=data)
    strip = lambda metrics: {k: v for k, v in metrics.items() if k != "provenance"}  # noqa: E731
    assert strip(first) == strip(again) and first["dev_nll"] != plain["dev_nll"]


# -- initialisation --------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["basic", "brnn", "stacked", "delayed"])
def test_init_range_draws_every_weight_uniformly(model):
    torch.manual_seed(0)
    net = build_model(model, TOKENS, "lstm", hidden_size=30, embedding_size=20, init_range=0.05)
    for name, parameter in net.named_parameters():
        values = parameter.detach()
        if name == "encoder.embedding.weight":
            assert (values[0] == 0).all(), "the padding row stays zero"
            values = values[1:]
        assert values.abs().max() <= 0.05, name
        if values.numel() >= 100:  # many draws: they fill the range
            assert values.abs().max() > 0.045, name


def test_init_range_keeps_what_cells_set_by_construction():
    """ELSTM's scales (1) and cell bias (0), LSTM+'s feed-forward (identity) and an identity
    recurrent initialisation are not random draws: init_range leaves them."""
    torch.manual_seed(0)
    elstm = build_model("basic", TOKENS, "elstm", hidden_size=4, embedding_size=3, init_range=0.01)
    assert (elstm.rnn.cell.scaling == 1).all() and (elstm.rnn.cell.bias_c == 0).all()
    assert elstm.rnn.cell.weight_ih.abs().max() <= 0.01
    plus = build_model("stacked", TOKENS, "lstm_plus", hidden_size=4, embedding_size=3, init_range=0.01)
    assert all(torch.equal(layer.cell.weight_ff, torch.eye(4)) for layer in plus.rnn.layers)
    identity = build_model("basic", TOKENS, "srn", cell_params={"recurrent_init": "identity"},
                           hidden_size=4, embedding_size=3, init_range=0.01)
    assert torch.equal(identity.rnn.cell.weight_hh, torch.eye(4))
    assert identity.rnn.cell.bias_hh.abs().max() <= 0.01


@pytest.mark.parametrize("model", ["basic", "brnn", "stacked"])
def test_embedding_and_output_init(model):
    torch.manual_seed(0)
    net = build_model(model, TOKENS, "lstm", hidden_size=30, embedding_size=40, embedding_init=0.1, output_init=0.2)
    embedding = net.encoder.embedding.weight.detach()
    assert (embedding[0] == 0).all() and 0.09 < embedding[1:].abs().max() <= 0.1
    assert 0.18 < net.head.weight.abs().max() <= 0.2 and (net.head.bias == 0).all()
    default = torch.nn.LSTM(40, 30)  # the cells keep torch's U(±1/sqrt(H))
    cell = net.rnn.cell if model == "basic" else (net.rnn.forward_layer.cell if model == "brnn" else net.rnn.layers[0].cell)
    assert cell.weight_hh.abs().max() <= default.weight_hh_l0.abs().max() + 1e-3


def test_no_init_setting_keeps_torch_defaults_exactly():
    """The defaults draw nothing more: same weights, and the generator left where it was."""
    torch.manual_seed(3)
    before = build_model("stacked", TOKENS, "gru", hidden_size=4, embedding_size=3)
    next_before = torch.rand(1)
    torch.manual_seed(3)
    after = build_model("stacked", TOKENS, "gru", hidden_size=4, embedding_size=3, dropout=0.0,
                        init_range=None, embedding_init=None, output_init=None)
    assert torch.equal(torch.rand(1), next_before)
    assert all(torch.equal(a, b) for a, b in zip(before.state_dict().values(), after.state_dict().values()))


def test_init_settings_are_checked():
    with pytest.raises(ValueError, match="init_range must be > 0"):
        build_model("basic", TOKENS, "lstm", init_range=0.0)
    with pytest.raises(ValueError, match="embedding_init needs token inputs"):
        build_model("basic", TaskIO(output_size=1, level="sequence", input_features=2), "lstm", embedding_init=0.1)


def test_new_model_and_task_parameters_are_typed_for_the_config_check():
    """Every new setting has a type hint and a default that keeps today's behaviour."""

    for model in ("basic", "brnn", "stacked", "delayed"):
        for name, default in (("dropout", 0.0), ("init_range", None), ("embedding_init", None), ("output_init", None)):
            assert name in MODELS.parameters(model, positional=2)
        check_run_config({"task": {"name": "lm", "stateful": True}, "model": {"name": model, "dropout": 0.5,
                          "init_range": 0.05, "embedding_init": 0.1, "output_init": 0.1},
                          "cell": {"name": "lstm"}, "train": {"lr_decay": 1.2, "lr_decay_after": 6,
                                                             "patience": 10, "min_delta": 1e-3}})
    with pytest.raises(ConfigError, match="dropout"):
        check_run_config({"task": {"name": "lm"}, "model": {"name": "basic", "dropout": "half"},
                          "cell": {"name": "lstm"}})
    with pytest.raises(ConfigError, match="patience"):
        check_run_config({"task": {"name": "lm"}, "model": {"name": "basic"}, "cell": {"name": "lstm"},
                          "train": {"patience": 2.5}})


# -- learning-rate schedule ---------------------------------------------------------------------
def test_zaremba_medium_schedule():
    """lr 1 for epochs 1-6, then divided by 1.2 each epoch: lr_e = 1 / 1.2^(e - 6)."""
    cfg = TrainConfig(lr=1.0, lr_decay=1.2, lr_decay_after=6)
    assert [cfg.lr_at(e - 1) for e in range(1, 10)] == pytest.approx([1, 1, 1, 1, 1, 1, 1 / 1.2, 1 / 1.44, 1 / 1.728])
    assert TrainConfig(lr=0.5).lr_at(40) == 0.5
    with pytest.raises(ValueError, match="lr_decay divides the learning rate"):
        TrainConfig(lr_decay=0.8)
    with pytest.raises(ValueError, match="lr_decay_after must be >= 0"):
        TrainConfig(lr_decay_after=-1)


def test_the_optimiser_trains_each_epoch_at_its_scheduled_rate(tmp_path, monkeypatch):
    rates = []
    original = training.train_step

    def spy(model, task, batch, optimizer, cfg, carried=None):
        rates.append(optimizer.param_groups[0]["lr"])
        return original(model, task, batch, optimizer, cfg, carried)

    monkeypatch.setattr(training, "train_step", spy)
    data = corpus_file(tmp_path)
    run = lm_run(train={"epochs": 4, "optimizer": "sgd", "lr": 1.0, "lr_decay": 2.0, "lr_decay_after": 2})
    train_run(run, tmp_path / "run", data=data)
    per_epoch = len(rates) // 4
    assert rates == [1.0] * 2 * per_epoch + [0.5] * per_epoch + [0.25] * per_epoch
    curve = (tmp_path / "run" / "curve.tsv").read_text().splitlines()
    assert [float(line.split("\t")[3]) for line in curve if "\tlr\t" in line] == [1.0, 1.0, 0.5, 0.25]


# -- early stopping -----------------------------------------------------------------------------------
def test_the_improvement_rule_in_both_directions():
    assert improves(5.0, None, "min", 0.1) and not improves(float("nan"), None, "min", 0.0)
    assert improves(4.8, 5.0, "min", 0.1) and not improves(4.95, 5.0, "min", 0.1)
    assert not improves(5.0, 5.0, "min", 0.0) and not improves(5.0, 5.0, "max", 0.0)
    assert improves(0.92, 0.9, "max", 1e-3) and not improves(0.9005, 0.9, "max", 1e-3)
    assert not improves(0.95, 0.9, "min", 0.0) and not improves(0.85, 0.9, "max", 0.0)


EXPECTED_GOALS = {"accuracy": "max", "bleu": "max", "las": "max", "uas": "max",
                  "mse": "min", "perplexity": "min", "nll": "min", "loss": "min"}


@pytest.mark.parametrize("name", TASKS.names())
def test_every_task_knows_which_way_its_dev_metric_improves(name):
    task = TASKS[name]
    assert task.dev_goal_of() == EXPECTED_GOALS[task.dev_metric.rsplit("_", 1)[-1]]


def test_an_unknown_dev_metric_asks_for_a_goal():
    from rnnrepro.tasks.base import Task

    class Odd(Task):
        dev_metric = "dev_wobble"

    with pytest.raises(ValueError, match="set dev_goal"):
        Odd.dev_goal_of()


def adding_run(**train) -> dict:
    settings = {"epochs": 8, "batch_size": 10, "optimizer": "adam", "lr": 0.05, "log_every": 10}
    settings.update(train)
    return {"seed": 2, "task": {"name": "adding", "T": 10, "train_size": 100, "dev_size": 40, "test_size": 40},
            "model": {"name": "basic", "hidden_size": 5}, "cell": {"name": "gru"}, "train": settings}


def dev_curve(folder: Path, name: str = "dev_mse") -> list[float]:
    """The values of metric ``name`` on a run's curve.tsv, in order."""
    rows = [line.split("\t") for line in (folder / "curve.tsv").read_text().splitlines()[1:]]
    return [float(value) for _, _, metric, value in rows if metric == name]


def rule(values: list[float], patience: int, min_delta: float, goal: str = "min") -> tuple[int, int]:
    """(epochs run, best epoch) by the early-stopping rule, from the dev values of every epoch."""
    best, best_epoch, waited = None, 0, 0
    for epoch, value in enumerate(values, 1):
        if best is None or (value < best - min_delta if goal == "min" else value > best + min_delta):
            best, best_epoch, waited = value, epoch, 0
        else:
            waited += 1
            if waited == patience:
                return epoch, best_epoch
    return len(values), best_epoch


def test_no_improvement_stops_after_patience_epochs_and_keeps_the_first(tmp_path):
    """min_delta larger than any change: epoch 1 is the best, training stops after 1 + patience."""
    metrics = train_run(adding_run(patience=3, min_delta=1e6), tmp_path)
    assert (metrics["epochs"], metrics["best_epoch"]) == (4, 1)
    assert metrics["steps"] == 40 and len(dev_curve(tmp_path)) == 4
    assert metrics["dev_mse"] == dev_curve(tmp_path)[0], "the model evaluated at the end is epoch 1's"


def test_early_stopping_keeps_the_best_model_in_model_pt(tmp_path):
    metrics = train_run(adding_run(epochs=30, patience=2, min_delta=1e-3), tmp_path)
    values = dev_curve(tmp_path)
    assert (metrics["epochs"], metrics["best_epoch"]) == rule(values, 2, 1e-3)
    assert metrics["epochs"] < 30, "choose settings where the run stops early"
    assert metrics["dev_mse"] == values[metrics["best_epoch"] - 1] == min(values)
    task, model = training.load_trained(tmp_path / "model.pt")
    assert task.evaluate(model, "test", 100, CPU)["test_mse"] == metrics["test_mse"]
    assert json.loads((tmp_path / "metrics.json").read_text())["best_epoch"] == metrics["best_epoch"]


def test_without_patience_all_epochs_run_and_the_last_model_is_kept(tmp_path):
    metrics = train_run(adding_run(epochs=3), tmp_path)
    assert metrics["epochs"] == 3 and "best_epoch" not in metrics
    assert metrics["dev_mse"] == dev_curve(tmp_path)[-1]


def reversal_run(**train) -> dict:
    settings = {"epochs": 40, "batch_size": 20, "optimizer": "adam", "lr": 0.01}
    settings.update(train)
    return {"seed": 1, "task": {"name": "reversal", "T": 6, "V": 4, "train_size": 200, "dev_size": 50, "test_size": 50},
            "model": {"name": "delayed", "hidden_size": 8, "delay": 5}, "cell": {"name": "lstm"}, "train": settings}


def test_monitor_watches_the_dev_loss_and_both_go_on_the_curve(tmp_path):
    """The drnn authors' rule: stop on the validation loss. The curve has the task's accuracy and
    the loss every epoch; the stop and the kept epoch follow the loss, not the accuracy."""
    metrics = train_run(reversal_run(patience=3, min_delta=1e-3, monitor="dev_loss"), tmp_path)
    losses, accuracies = dev_curve(tmp_path, "dev_loss"), dev_curve(tmp_path, "dev_accuracy")
    assert len(losses) == len(accuracies) == metrics["epochs"] < 40, "choose settings where the run stops early"
    assert (metrics["epochs"], metrics["best_epoch"]) == rule(losses, 3, 1e-3, "min")
    assert metrics["dev_loss"] == losses[metrics["best_epoch"] - 1]
    assert metrics["dev_accuracy"] == accuracies[metrics["best_epoch"] - 1]
    on_accuracy = train_run(reversal_run(patience=3, min_delta=1e-3), tmp_path / "accuracy")
    assert (on_accuracy["epochs"], on_accuracy["best_epoch"]) == rule(
        dev_curve(tmp_path / "accuracy", "dev_accuracy"), 3, 1e-3, "max")
    assert dev_curve(tmp_path / "accuracy", "dev_loss") == [], "only the watched and the task's metric are curved"


def test_reversal_loss_is_the_mean_cross_entropy_per_token():
    torch.manual_seed(0)
    task, model = training.build_run(reversal_run(), None)
    metrics = task.evaluate(model, "dev", 7, CPU)
    inputs, targets = task.one_hot(task.splits["dev"][0]), task.splits["dev"][1] - 1
    with torch.no_grad():
        scores = model(Batch(inputs=inputs, lengths=torch.full((50,), 6), targets=targets))
    probabilities = torch.softmax(scores, -1).gather(-1, targets.unsqueeze(-1))
    assert metrics["dev_loss"] == pytest.approx(float(-probabilities.log().mean()), rel=1e-5)
    assert metrics["dev_accuracy"] == pytest.approx(float((scores.argmax(-1) == targets).float().mean()))


def test_stop_at_ends_training_after_the_first_epoch_past_the_goal(tmp_path):
    free = train_run(adding_run(epochs=8), tmp_path / "free")
    values = dev_curve(tmp_path / "free")
    goal = sorted(values)[len(values) // 2]  # reached in some epoch before the last
    first = next(epoch for epoch, value in enumerate(values, 1) if value < goal)
    assert first < 8
    metrics = train_run(adding_run(epochs=8, stop_at=goal), tmp_path / "goal")
    assert metrics["epochs"] == first and metrics["steps"] == first * 10
    assert dev_curve(tmp_path / "goal") == values[:first], "the same run, cut at the goal"
    assert metrics["dev_mse"] == values[first - 1] and free["epochs"] == 8


def test_a_monitor_the_task_lacks_is_named_before_training(tmp_path):
    with pytest.raises(ValueError, match="dev_accuracy.*it has dev_mse"):
        train_run(adding_run(patience=2, monitor="dev_accuracy"), tmp_path)
    assert not (tmp_path / "checkpoint.pt").exists()
    with pytest.raises(ConfigError, match="no such dev metric"):
        check_run_config({**adding_run(), "train": {"monitor": "dev_loss"}})
    with pytest.raises(ValueError, match="watches a dev metric"):
        TrainConfig(monitor="test_mse")


def test_patience_is_checked():
    with pytest.raises(ValueError, match="patience must be >= 1"):
        TrainConfig(patience=0)
    with pytest.raises(ValueError, match="min_delta must be >= 0"):
        TrainConfig(min_delta=-1.0)


# -- command line ----------------------------------------------------------------------------------
def test_help_lists_every_train_setting(capsys):
    with pytest.raises(SystemExit):
        training.main(["--help"])
    text = capsys.readouterr().out
    for item in TrainConfig.__dataclass_fields__:
        assert re.search(rf"^  {item} \(", text, re.M), item
    assert "lr / lr_decay^max(0, e - lr_decay_after)" in " ".join(text.split())


# -- our PTB language model against a plain torch.nn.LSTM one ---------------------------------------
def load_bench():
    spec = importlib.util.spec_from_file_location("bench_lm", REPO / "benchmarks" / "bench_lm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Our PTB LM against a plain one: pytorch/examples word_language_model's small settings
# (1 layer of 200, windows of 35, 20 streams, SGD lr 20, gradient norm clipped at 0.25, no
# dropout, embedding and output weights ~ U(±0.1), output bias 0), 300 steps on one thread.
PTB_STEPS = 300
PTB_EVAL_TOKENS = 20_000
PTB_EXACT_STEPS = 20
PTB_TOLERANCE = 0.15  # see the test's docstring


class PlainLM(torch.nn.Module):
    """pytorch/examples word_language_model's RNNModel: embedding -> nn.LSTM -> linear, its
    initialisation (embedding and output weights ~ U(±0.1), output bias 0, nn.LSTM's own)."""

    def __init__(self, input_vocab: int, output_vocab: int, size: int):
        super().__init__()
        self.embedding = torch.nn.Embedding(input_vocab, size)
        self.lstm = torch.nn.LSTM(size, size)
        self.decoder = torch.nn.Linear(size, output_vocab)
        torch.nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        torch.nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        torch.nn.init.zeros_(self.decoder.bias)

    def forward(self, inputs, state=None):
        out, state = self.lstm(self.embedding(inputs), state)
        return self.decoder(out), state


def plain_perplexity(model: PlainLM, batches) -> float:
    """exp of the mean NLL over every scored token, the state carried across the batches."""
    model.eval()
    total, tokens, state = 0.0, 0, None
    with torch.no_grad():
        for batch in batches:
            out, state = model(batch.inputs, state)
            total += float(torch.nn.functional.cross_entropy(out.flatten(0, 1), batch.targets.flatten(),
                                                             ignore_index=IGNORE_INDEX, reduction="sum"))
            tokens += int((batch.targets != IGNORE_INDEX).sum())
    return math.exp(total / tokens)


def train_plain(model: PlainLM, batches) -> list[float]:
    """pytorch/examples' loop: state carried and detached, clip 0.25, SGD lr 20; the losses."""
    optimizer = torch.optim.SGD(model.parameters(), lr=20.0)
    losses, state = [], None
    model.train()
    for batch in batches:
        optimizer.zero_grad()
        out, state = model(batch.inputs, state)
        state = tuple(part.detach() for part in state)
        loss = torch.nn.functional.cross_entropy(out.flatten(0, 1), batch.targets.flatten(), ignore_index=IGNORE_INDEX)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.fixture(scope="module")
def ptb_word(mirror, tmp_path_factory) -> str:
    """PTB (Mikolov's word-level files) from the mirror, verified and prepared."""
    import dataclasses

    from rnnrepro.data.fetch import fetch_file
    from rnnrepro.data.prepared import prepare_dataset
    from rnnrepro.data.sources import dataset

    folder = tmp_path_factory.mktemp("ptb")
    for source in dataset("ptb_word").files.values():
        fetch_file(dataclasses.replace(source, urls=()), folder / "raw", mirror=mirror, progress=False)
    prepare_dataset("ptb_word", folder / "raw", folder / "ptb_word.json.gz")
    return str(folder / "ptb_word.json.gz")


@pytest.mark.slow
def test_our_ptb_lm_trains_as_well_as_a_plain_torch_lstm(tmp_path, ptb_word):
    """Ours (``basic`` model, ``lstm`` cell, embedding_init = output_init = 0.1, stateful)
    against a plain nn.LSTM LM in pytorch/examples' loop, on the same batches.

    1. Initialisation: ours draws its embedding and output weights from the ranges the plain
       model uses (torch's default N(0, 1) embedding cost 30 perplexity points after 2 epochs).
    2. The same computation: the plain model starts from ours' initial values. The two then
       evaluate alike (carried state over 10 pieces of the dev stream) and give the same
       losses for the first 20 steps (measured: equal to 5 decimals, W_hh within 1e-6).
    3. The same result: SGD at lr 20 amplifies float rounding about tenfold every few steps
       (weights apart by 7e-4 at step 30, 3e-2 at step 40), so after 300 steps the two runs
       are two draws of the same training. Measured dev perplexities (20,000 tokens) after
       300 steps, ours / plain from ours' initial values, seeds 1-4: 477.2 / 501.3,
       453.5 / 448.6, 483.8 / 480.8, 466.0 / 469.4: paired differences -4.8%, +1.1%, +0.6%,
       -0.7%; from independent seeds ours spread over 453-484, plain over 420-470. On another
       machine's CPU (AMD EPYC, AVX2 kernels: another rounding) seed 1 gave 509.2 / 467.6,
       +8.9%, the same with the code of the commits before and after. The five paired
       differences have sd 5.0%: tolerance 15%, three standard deviations. This part is the
       end-to-end check; the failures it cannot see at 300 steps are caught by 1 and 2:
       windows read from a zero state (stateful off) reached 520 and 468 (seeds 1, 2), and
       torch's default initialisation is *ahead* this early (346, seed 1) -- it falls behind
       only later (178 against 149 after 2 epochs).
    """
    run = {"seed": 1,
           "task": {"name": "lm", "corpus": "ptb_word", "bptt": 35, "stateful": True,
                    "max_train_tokens": PTB_STEPS * 20 * 35 + 1, "max_eval_tokens": PTB_EVAL_TOKENS},
           "model": {"name": "basic", "hidden_size": 200, "embedding_size": 200,
                     "embedding_init": 0.1, "output_init": 0.1},
           "cell": {"name": "lstm"},
           "train": {"epochs": 1, "batch_size": 20, "optimizer": "sgd", "lr": 20.0, "clip": 0.25,
                     "eval_batch_size": 10, "log_every": 1, "checkpoint_every": 10 * PTB_STEPS}}
    training.seed_everything(run["seed"])
    task, initial = training.build_run(run, ptb_word)  # exactly the model train_run starts from
    plain = PlainLM(task.io.input_vocab, task.io.output_size, 200)

    # 1. the same initialisation ranges
    ours_embedding, ours_output = initial.encoder.embedding.weight.detach(), initial.head.weight.detach()
    for mine, theirs in ((ours_embedding[1:], plain.embedding.weight.detach()),
                         (ours_output, plain.decoder.weight.detach())):
        assert mine.abs().max() <= 0.1 and abs(float(mine.std() / theirs.std()) - 1) < 0.01
    assert (initial.head.bias == 0).all()
    bound = 1 / 200 ** 0.5
    assert initial.rnn.cell.weight_hh.abs().max() <= bound and plain.lstm.weight_hh_l0.abs().max() <= bound

    # 2. the same computation, from the same initial values
    with torch.no_grad():
        plain.embedding.weight.copy_(initial.encoder.embedding.weight)
        plain.decoder.weight.copy_(initial.head.weight)
        plain.decoder.bias.copy_(initial.head.bias)
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(plain.lstm, f"{name}_l0").copy_(getattr(initial.rnn.cell, name))
    dev_batches = task.batches("dev", 10)
    assert task.evaluate(initial, "dev", 10, CPU)["dev_perplexity"] == pytest.approx(
        plain_perplexity(plain, dev_batches), rel=1e-5)
    plain_losses = train_plain(plain, task.batches("train", 20))
    metrics = train_run(run, tmp_path / "ours", data=ptb_word)
    rows = [line.split("\t") for line in (tmp_path / "ours" / "curve.tsv").read_text().splitlines()[1:]]
    our_losses = [float(value) for _, _, metric, value in rows if metric == "train_loss"]
    assert len(our_losses) == len(plain_losses) == PTB_STEPS == metrics["steps"]
    assert our_losses[:PTB_EXACT_STEPS] == pytest.approx(plain_losses[:PTB_EXACT_STEPS], abs=1e-4)

    # 3. the same result
    ours, theirs = metrics["dev_perplexity"], plain_perplexity(plain, dev_batches)
    print(f"dev perplexity after {PTB_STEPS} steps: ours {ours:.1f}, plain nn.LSTM {theirs:.1f}")
    assert abs(ours / theirs - 1) < PTB_TOLERANCE, (ours, theirs)


def test_the_lm_benchmark_runs(capsys):
    """Tiny sizes, one round: both rows and the ratio row appear (timings are the benchmark's job)."""
    bench = load_bench()
    bench.main(["--vocab", "30", "--hidden", "6", "--bptt", "4", "--batch", "2", "--repeats", "1",
                "--warmup", "0", "--threads", "1"])
    lines = capsys.readouterr().out.splitlines()
    rows = {re.split(r"\s{2,}", line)[0]: line.split()[-2:] for line in lines[2:]}
    assert set(rows) == {"plain nn.LSTM", "ours (basic, lstm)", "ours / plain"}
    assert all(float(value) > 0 for values in rows.values() for value in values)
