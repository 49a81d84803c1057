"""The drnn study (Turek et al.): its tasks, analyses, study file, published values and report."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import torch

from rnnrepro import report_drnn as rd
from rnnrepro import report_helpers as rh
from rnnrepro.aggregate import write_tables
from rnnrepro.analyses import ANALYSES
from rnnrepro.models import build_model
from rnnrepro.report import render_report
from rnnrepro.studies import load_workflow_config
from rnnrepro.tasks import Batch, build_task
from rnnrepro.tasks.reversal import analytic_bound, exact_bound
from rnnrepro.tasks.sine_filter import sine_filter_targets

REPO = Path(__file__).resolve().parents[1]
PUBLISHED_DIR = REPO / "reports" / "published"


# ----------------------------------------------------------------------------- sequence reversal
def test_reversal_data_are_seeded_and_targets_are_the_reversed_inputs():
    task = build_task("reversal", T=7, V=4, train_size=30, dev_size=10, test_size=10, data_seed=3)
    again = build_task("reversal", T=7, V=4, train_size=30, dev_size=10, test_size=10, data_seed=3)
    other = build_task("reversal", T=7, V=4, train_size=30, dev_size=10, test_size=10, data_seed=4)
    for split in ("train", "dev", "test"):
        assert torch.equal(task.splits[split][0], again.splits[split][0])
        assert not torch.equal(task.splits[split][0], other.splits[split][0])
    assert not torch.equal(task.splits["train"][0][:, :10], task.splits["dev"][0])  # splits differ
    tokens, targets = task.splits["train"]
    assert tokens.shape == (7, 30) and tokens.min() >= 1 and tokens.max() <= 4
    assert torch.equal(targets, tokens.flip(0))  # y_t = x_{T-t+1}
    batch = task.batches("train", 8)[0]
    assert batch.inputs.shape == (7, 8, 4) and torch.equal(batch.inputs.sum(-1), torch.ones(7, 8))
    tokens_of_batch = batch.inputs.argmax(-1)  # class v-1 of token v
    assert torch.equal(batch.targets, tokens_of_batch.flip(0)) and batch.lengths.tolist() == [7] * 8
    assert task.io.input_features == 4 and task.io.output_size == 4 and task.io.level == "token"


class ReverseOracle(torch.nn.Module):
    """Outputs the one-hot input read backwards: the perfect reversal."""

    def forward(self, batch: Batch) -> torch.Tensor:
        return batch.inputs.flip(0)


class Echo(torch.nn.Module):
    """Outputs the current input: right only where x_t = x_{T-t+1}."""

    def forward(self, batch: Batch) -> torch.Tensor:
        return batch.inputs


def test_reversal_accuracy_is_token_level():
    task = build_task("reversal", T=6, V=3, train_size=4, dev_size=9, test_size=9, data_seed=0)
    assert task.evaluate(ReverseOracle(), "dev", 4, torch.device("cpu")) == {"dev_accuracy": 1.0}
    causal = task.evaluate(Echo(), "test", 4, torch.device("cpu"))["test_accuracy"]
    assert 0 < causal < 1
    model = build_model("delayed", task.io, "lstm", hidden_size=5, delay=2)
    loss = task.loss(model(task.batches("train", 4)[0]), task.batches("train", 4)[0])
    assert loss.ndim == 0 and math.isfinite(float(loss.detach()))


def test_the_bound_at_no_delay_and_from_t_minus_1():
    T, V = 20, 4
    assert analytic_bound(0, T, V) == pytest.approx(0.5 * (1 + 1 / V) + 1 / (2 * T) * (1 - 1 / V))
    assert analytic_bound(0, T, V) == pytest.approx(0.64375)
    assert all(analytic_bound(d, T, V) == 1.0 for d in (T - 1, T, T + 5))
    assert analytic_bound(T - 2, T, V) < 1.0
    values = [analytic_bound(d, T, V) for d in range(T + 1)]
    assert values == sorted(values)
    # the exact count: at d = 0 the second half (t = 11..20) is known, the first half guessed
    assert exact_bound(0, T, V) == pytest.approx((10 + 10 / V) / T)
    assert exact_bound(T - 1, T, V) == 1.0 and exact_bound(T - 2, T, V) < 1.0
    for d in range(T + 1):
        gap = analytic_bound(d, T, V) - exact_bound(d, T, V)
        assert 0 <= gap <= (1 - 1 / V) / (2 * T) + 1e-12


# ----------------------------------------------------------------------------- sine filter
def test_sine_filter_matches_the_papers_definition_on_a_hand_example():
    """y_t = sin(γ Σ_{j=-c+1}^{a} w_{j+c} x_{t+j}), zero outside 1..T; here 3 taps, γ = 0.5."""
    x = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64)
    w = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)
    # a = 1, c = 2: w1 x_{t-1} + w2 x_t + w3 x_{t+1}
    expected = [math.sin(0.5 * 0.8), math.sin(0.5 * 1.4), math.sin(0.5 * 0.8)]
    assert sine_filter_targets(x, w, 0.5, 1)[:, 0].tolist() == pytest.approx(expected)
    # a = 0, c = 3 (causal): w1 x_{t-2} + w2 x_{t-1} + w3 x_t
    expected = [math.sin(0.5 * 0.3), math.sin(0.5 * 0.8), math.sin(0.5 * 1.4)]
    assert sine_filter_targets(x, w, 0.5, 0)[:, 0].tolist() == pytest.approx(expected)
    # a = 3, c = 0: w1 x_{t+1} + w2 x_{t+2} + w3 x_{t+3}
    expected = [math.sin(0.5 * 0.8), math.sin(0.5 * 0.3), 0.0]
    assert sine_filter_targets(x, w, 0.5, 3)[:, 0].tolist() == pytest.approx(expected)


def test_sine_filter_task_is_seeded_per_dataset_and_shares_its_filter_across_splits():
    params = {"gamma": 1.5, "acausality": 4, "T": 12, "train_size": 20, "dev_size": 6, "test_size": 6}
    task = build_task("sine_filter", data_seed=1, **params)
    again = build_task("sine_filter", data_seed=1, **params)
    assert torch.equal(task.filter, again.filter) and torch.equal(task.splits["test"][1], again.splits["test"][1])
    assert not torch.equal(task.filter, build_task("sine_filter", data_seed=2, **params).filter)
    assert not torch.equal(task.filter, build_task("sine_filter", data_seed=1, **{**params, "acausality": 5}).filter)
    assert task.filter.shape == (20,) and 0 <= task.filter.min() and task.filter.max() < 1
    for split in ("train", "dev", "test"):
        inputs, targets = task.splits[split]
        assert 0 <= inputs.min() and inputs.max() < 1
        recomputed = sine_filter_targets(inputs.double(), task.filter, 1.5, 4).float()
        assert torch.allclose(targets, recomputed, atol=1e-6)
    batch = task.batches("train", 8, torch.Generator().manual_seed(0))[0]
    assert batch.inputs.shape == (12, 8, 1) and batch.targets.shape == (12, 8)
    perfect = task.loss(batch.targets.unsqueeze(-1), batch)
    assert float(perfect) == 0.0


# ----------------------------------------------------------------------------- analyses
def test_theorem1_differences_are_at_rounding_level():
    table = ANALYSES["theorem1"](cells=["srn", "lstm"], layers=[2, 3], input_size=2, hidden_size=3, steps=5, batch=2)
    assert set(table["layers"]) == {2, 3} and set(table["cell"]) == {"srn", "lstm"}
    checked = table[table["metric"].isin(["max_abs_output_difference", "max_abs_state_difference"])]
    assert len(checked) == 8 and checked["value"].max() < 1e-12
    assert table.loc[table["metric"] == "max_abs_output_difference_early", "value"].min() > 1e-6
    assert rd.theorem1_verdict(table).holds is True


def test_cost_times_every_network_and_counts_its_steps():
    table = ANALYSES["cost"](lengths=[6, 12], delays=[2], hidden_size=5, bidirectional_hidden_size=3,
                             batch_size=2, repeats=2)
    steps = table[table["metric"] == "sequential_steps"].set_index(["model", "T"])["value"]
    assert steps[("basic", 6)] == 6 and steps[("delayed", 12)] == 14 and steps[("brnn", 12)] == 24
    times = table[table["metric"].isin(["forward_seconds", "train_step_seconds"])]
    assert len(times) == 2 * 3 * 2 and (times["value"] > 0).all()
    assert {"repeats", "threads"} <= set(table.columns)
    assert len(rd.cost_table(table)) == 6 and len(rd.cost_verdicts(table)) == 2


# ----------------------------------------------------------------------------- study file
@pytest.mark.parametrize("scale", ["ci", "mini", "paper"])
def test_the_study_loads_at_every_scale(scale):
    _, studies = load_workflow_config({"scale": scale, "studies": ["drnn"]}, REPO / "workflow" / "schemas",
                                      REPO / "config" / "studies")
    study = studies["drnn"]
    assert set(study.analyses) == {"theorem1", "cost"}
    artifacts = {a for run in study.runs.values() for a in run["artifacts"]}
    assert artifacts == {a for group in ("fig3", "fig4", "table1") for a in rd.GROUPS[group]}
    assert study.scale_note
    runs = list(study.runs.values())
    bi = [r for r in runs if r["model"]["name"] == "brnn"]
    assert bi and all(r["model"]["hidden_size"] < 100 for r in bi)
    if scale == "paper":
        sine = [r for r in runs if r["task"]["name"] == "sine_filter"]
        assert len(sine) == 4 * 18 * 11 * 5 and {r["task"]["T"] for r in sine} == {50}
        assert len([r for r in runs if r["task"]["name"] == "reversal"]) == 22
        assert len([r for r in runs if r["task"]["name"] == "pos_chars"]) == 31 * 3 * 5
        assert all(r["model"]["hidden_size"] == 100 for r in runs if r["model"]["name"] == "delayed")
    else:
        assert len(runs) <= {"ci": 15, "mini": 70}[scale]
        assert {r["task"].get("treebank") for r in runs if r["task"]["name"] == "pos_chars"} == {"ud_en_ewt_v2.3"}


# ----------------------------------------------------------------------------- published values
def test_published_tables_1_to_4_are_transcribed_once_each():
    published = rh.load_published(PUBLISHED_DIR, "drnn")
    rows = rd.pos_published(published)
    assert len(rows) == 31 * 3 * 2 and not rows[["mean", "std"]].isna().any().any()

    def value(lang, c, w, m):
        return rows[(rows["lang"] == lang) & (rows["char"] == c) & (rows["word"] == w) & (rows["metric"] == m)].iloc[0]

    assert value("en", "d1", "d1", "test_accuracy")["mean"] == pytest.approx(0.9457)
    assert value("en", "d1", "d1", "test_accuracy")["std"] == pytest.approx(0.0014)
    assert value("de", "lstm", "lstm", "dev_accuracy")["mean"] == pytest.approx(0.9205)
    assert value("fr", "bi", "bi", "test_accuracy")["mean"] == pytest.approx(0.9722)
    assert value("de", "bi", "d5", "test_accuracy")["mean"] == pytest.approx(0.9157)
    assert "Table 1" in value("fr", "d1", "bi", "test_accuracy")["source"]
    # the paper's own numbers support every Table 1 claim the report checks
    assert all(v.holds for v in rd.pos_verdicts(rows))
    assert rh.published_value(published, "fig3", "first_delay_matching_bilstm", "any", "lstm") == 19


# ----------------------------------------------------------------------------- the report
def write_run(root: Path, labels: dict, artifact: str, metrics: dict) -> Path:
    path = "/".join(f"{k}~{v}" for k, v in labels.items() if k != "study")
    run_dir = root / "runs" / "drnn" / path
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"labels": labels, "artifacts": [artifact], "scale": "ci",
                                                     "run": path}))
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    (run_dir / "curve.tsv").write_text("step\tepoch\tmetric\tvalue\n1\t1\ttrain_loss\t1.0\n")
    return run_dir


def fake_runs(root: Path) -> list[Path]:
    """fig3 (T = 4: the d-LSTM follows the exact bound, reaches the Bi-LSTM at d = 3), fig4 (d-LSTM
    beats the Bi-LSTM at γ = 2, a ≤ d) and three Table 1 configurations in English."""
    dirs = []
    for d in range(5):
        acc = exact_bound(d, 4, 4)
        labels = {"study": "drnn", "task": "reversal", "model": "delayed", "cell": "lstm", "T": 4, "V": 4,
                  "delay": d, "seed": 1}
        dirs.append(write_run(root, labels, "fig3", {"test_accuracy": acc, "dev_accuracy": acc}))
    labels = {"study": "drnn", "task": "reversal", "model": "brnn", "cell": "lstm", "T": 4, "V": 4, "seed": 1}
    dirs.append(write_run(root, labels, "fig3_bilstm", {"test_accuracy": 1.0, "dev_accuracy": 1.0}))
    for gamma in (0.5, 2.0):
        for a in (0, 3):
            for data_seed in (1, 2):
                noise = 1 + 0.1 * data_seed
                for delay in (0, 3):
                    mse = (1e-3 if a <= delay else 1e-1) * noise
                    labels = {"study": "drnn", "task": "sine_filter", "model": "delayed", "cell": "lstm",
                              "delay": delay, "acausality": a, "data_seed": data_seed, "gamma": gamma, "seed": 1}
                    dirs.append(write_run(root, labels, "fig4", {"test_mse": mse, "dev_mse": mse}))
                mse = (2e-3 if gamma < 1 else 5e-2) * noise
                labels = {"study": "drnn", "task": "sine_filter", "model": "brnn", "cell": "lstm",
                          "acausality": a, "data_seed": data_seed, "gamma": gamma, "seed": 1}
                dirs.append(write_run(root, labels, "fig4_bilstm", {"test_mse": mse, "dev_mse": mse}))
    pos = {("table1", False, 0, False, 0): 0.9012, ("table1", False, 1, False, 1): 0.9355,
           ("table1_bibi", True, 0, True, 0): 0.9371}
    for (artifact, cb, cd, wb, wd), acc in pos.items():
        for seed in (1, 2):
            labels = {"study": "drnn", "task": "pos_chars", "model": "char_word", "cell": "lstm",
                      "char_bidirectional": cb, "char_delay": cd, "treebank": "ud_en_ewt_v2.3",
                      "word_bidirectional": wb, "word_delay": wd, "seed": seed}
            value = acc + 0.001 * seed
            dirs.append(write_run(root, labels, artifact, {"test_accuracy": value, "dev_accuracy": value + 0.002}))
    return dirs


def test_report_sections_on_fake_runs(tmp_path):
    write_tables(fake_runs(tmp_path), tmp_path / "runs.csv", tmp_path / "curves.csv")
    runs = rh.load_table(tmp_path / "runs.csv")
    published = rh.load_published(PUBLISHED_DIR, "drnn")
    reversal = rd.reversal_summary(runs)
    assert set(reversal["network"]) == {"LSTM", "Bi-LSTM", "d-LSTM d=1", "d-LSTM d=2", "d-LSTM d=3", "d-LSTM d=4"}
    assert [v.holds for v in rd.reversal_verdicts(reversal, published)] == [True, True]
    sine = rd.sine_summary(runs)
    assert len(sine) == 3 * 2 * 2 and (sine["n"] == 2).all()
    assert [v.holds for v in rd.sine_verdicts(sine)] == [True, True, None, True]  # no a > d was run
    good = rd.last_good_acausality(sine)
    assert set(good.loc[good["net_delay"] == 3, "last_good_a"]) == {3}
    pos = rd.pos_summary(runs)
    verdicts = rd.pos_verdicts(pos)
    assert verdicts[0].holds is True and all(v.holds is None for v in verdicts[1:])
    shown = rd.pos_table(pos, published, "mini", rows=rd.TABLE1_KEYS)
    assert len(shown) == 12 and list(shown["language"])[:5] == ["German (GSD)"] * 4 + ["English (EWT)"]
    assert shown["note"].str.contains("training file is not in the data mirror").sum() == 8
    assert (shown["test (ours)"] == "not run").sum() == 9


def test_render_drnn_report(tmp_path):
    write_tables(fake_runs(tmp_path), tmp_path / "tables" / "runs.csv", tmp_path / "tables" / "curves.csv")
    analyses = {"theorem1": tmp_path / "theorem1.csv", "cost": tmp_path / "cost.csv"}
    ANALYSES["theorem1"](layers=[2, 3], hidden_size=3, steps=5, batch=2).to_csv(analyses["theorem1"], index=False)
    ANALYSES["cost"](lengths=[6, 12], delays=[2], hidden_size=5, bidirectional_hidden_size=3, batch_size=2,
                     repeats=1).to_csv(analyses["cost"], index=False)
    params = {"study": "drnn", "title": "Turek et al.", "scale": "ci", "scale_note": "Tiny everything.",
              "table": str(tmp_path / "tables" / "runs.csv"), "curves": str(tmp_path / "tables" / "curves.csv"),
              "published_dir": str(PUBLISHED_DIR), "analyses": {k: str(v) for k, v in analyses.items()},
              "artifacts": {"fig3": {"title": "Reversal", "claim": "d-LSTM reaches Bi-LSTM"}}}
    html_path = tmp_path / "drnn.html"
    render_report(REPO / "reports" / "drnn.ipynb", params, html_path, cwd=REPO)
    html = html_path.read_text(encoding="utf-8")
    assert "What this scale changes: Tiny everything." in html
    for section in ("theorem1", "fig3", "fig4", "fig6", "table1", "cost"):
        assert f"{section}: " in html, section
    assert "d-LSTM reaches Bi-LSTM" in html  # the study's claim wins over the default
    assert "holds</strong> at this scale" in html and "cannot be judged" in html
    assert "93.70 ± 0.07 % (n=2)" in html  # ours, d1/d1 test accuracy
    assert "94.57 ± 0.14 %" in html  # published EN d1/d1 test, Table 1
    assert "German (GSD) training file is not in the data mirror" in html
    assert "Turek et al., Table 3 (also Table 1)" in html
    assert html.count("data:image/png;base64") >= 4  # fig3, fig4, fig6, cost
    assert "rd.plot_" not in html  # code hidden


def test_report_renders_with_its_defaults_where_nothing_ran(tmp_path):
    html_path = tmp_path / "drnn.html"
    render_report(REPO / "reports" / "drnn.ipynb", {}, html_path, cwd=tmp_path)
    html = html_path.read_text(encoding="utf-8")
    assert "No runs of <strong>fig3</strong>" in html and "No runs of <strong>table1</strong>" in html
    assert "has not been computed yet" in html


def test_notebook_has_one_parameters_cell_with_working_defaults():
    nb = json.loads((REPO / "reports" / "drnn.ipynb").read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3" and nb["metadata"]["language_info"]["name"] == "python"
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    source = "\n" + "".join(tagged[0]["source"])
    for param in ("study", "title", "scale", "scale_note", "table", "curves", "published_dir", "analyses", "artifacts"):
        assert f"\n{param} = " in source, param
    assert '"results/tables/drnn/runs.csv"' in source and '"results/analyses/drnn/theorem1.csv"' in source


def test_published_csvs_follow_the_shared_layout():
    for path in sorted(PUBLISHED_DIR.glob("drnn_*.csv")):
        pub = pd.read_csv(path)
        assert list(pub.columns) == ["study", "artifact", "source", "task", "model", "cell", "metric", "value", "note"]
        assert path.name == f"drnn_{pub['artifact'].iloc[0]}.csv" and (pub["study"] == "drnn").all()
        assert not pub.duplicated(["artifact", "model", "cell", "metric"]).any()
