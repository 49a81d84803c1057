"""Checks that know their kind and metric, and notebooks that know their parameters.

- The study schema gives each check kind its own required and allowed keys, with readable errors.
- A claim or ``show`` naming a metric its artifact will not have stops the parse, naming the
  file, the key and the metric (:mod:`rnnrepro.plan.study_metrics`); what each task, the training
  loop, the aggregation and each analysis declare is what they really write, on tiny runs.
- A report notebook without exactly one code cell tagged ``parameters`` is refused before it runs.
"""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml

from rnnrepro.aggregate import curve_means, load_run
from rnnrepro.analyses import ANALYSES, TrainedRun
from rnnrepro.data.prepared import write_json_gz
from rnnrepro.metrics.items import ITEMS_FILE, SplitItems
from rnnrepro.plan.config_check import ConfigError
from rnnrepro.plan.studies import load_workflow_config, study_schema_of, validate
from rnnrepro.plan.study_metrics import analysis_metrics, curve_metrics, run_metrics, training_metrics
from rnnrepro.report import render
from rnnrepro.tasks import TASKS
from rnnrepro.train import train_run

from conftest import REPO

SCHEMA = study_schema_of(REPO / "workflow" / "schemas")


# -- the schema: each kind its own keys -----------------------------------------------------------
def study_with_check(check) -> dict:
    return {"title": "t", "paper": "p",
            "artifacts": {"fig2": {"title": "F", "published_only": "no data",
                                   "claims": [{"quote": "q", "where": "Sec. 1", "check": check}]}}}


def schema_error(check) -> str:
    with pytest.raises(ConfigError) as error:
        validate(study_with_check(check), SCHEMA, "fig.yaml")
    return str(error.value)


VALID = {
    "compare": {"kind": "compare", "metric": ["test_uas", "test_las"], "better": {"cell": "elstm"},
                "than": {"cell": ["lstm", "gru"]}, "margin": -0.5, "relative": True, "strict": False,
                "grows_along": "T", "where": {"model": "brnn"}, "per": ["model"], "in": "most",
                "higher_is_better": True, "statistic": "min"},
    "best": {"kind": "best", "metric": "test_perplexity", "best": {"cell": "elstm"}, "among": {"model": "basic"}},
    "threshold": {"kind": "threshold", "metric": "test_mse", "below": "published:baseline_mse"},
    "threshold_above": {"kind": "threshold", "metric": "dev_loss", "above": {"published": "params",
                                                                             "where": {"model": "x"}}},
    "trend": {"kind": "trend", "metric": "test_mse", "along": "T", "direction": "decreasing", "strict": True},
    "within": {"kind": "within", "metric": "test_bleu", "a": {"cell": "pru"}, "b": {"cell": "lstm"},
               "tolerance": {"std_of": {"cell": "lstm"}, "times": 2}},
    "python": {"kind": "python", "function": "pru:Close", "metric": ["dev_sentence_nll"],
               "params": {"tolerance": 0.02}, "a": {"cell": "pru"}},
    "list": [{"kind": "compare", "metric": "m", "better": {"cell": "a"}, "than": {"cell": "b"}},
             {"kind": "within", "metric": "m", "a": {"cell": "a"}, "b": {"cell": "b"}, "tolerance": 0.1}],
}


@pytest.mark.parametrize("kind", list(VALID))
def test_every_kind_has_a_valid_form(kind):
    validate(study_with_check(VALID[kind]), SCHEMA, "fig.yaml")


def test_a_key_of_another_kind_is_rejected_naming_it():
    message = schema_error({"kind": "trend", "better": {"cell": "x"}, "metric": "m", "along": "T"})
    assert "artifacts.fig2.claims.0.check: unknown key 'better'; allowed: along, direction," in message
    assert "than" not in message  # the allowed keys are the trend's, not every kind's


def test_a_missing_required_key_is_named():
    message = schema_error({"kind": "compare", "metric": "m", "better": {"cell": "a"}})
    assert "artifacts.fig2.claims.0.check: 'than' is a required property" in message
    message = schema_error([VALID["best"], {"kind": "best", "metric": "m"}])
    assert "artifacts.fig2.claims.0.check.1: 'best' is a required property" in message


@pytest.mark.parametrize("check, expected", [
    ({"kind": "trnd", "metric": "m"}, "check.kind: 'trnd' is not allowed; known: compare, best, threshold"),
    ({"metric": "m", "along": "T"}, "check: 'kind' is a required property"),
    ({"kind": "threshold", "metric": "m"}, "check: give one of 'below', 'above'"),
    ({"kind": "threshold", "metric": "m", "below": 1, "above": 0}, "check: give only one of 'below', 'above'"),
    ({"kind": "threshold", "metric": "m", "below": "baseline"}, "check.below: 'baseline' does not match"),
    ({"kind": "within", "metric": "m", "a": {"c": 1}, "b": {"c": 2}, "tolerance": {"std": {"c": 1}}},
     "check.tolerance: unknown key 'std'; allowed: std_of, times"),
    ({"kind": "best", "metric": 3, "best": {"c": 1}}, "check.metric: 3 is not of type 'string', 'array'"),
    ({"kind": "python", "metric": "m"}, "check: 'function' is a required property"),
])
def test_other_bad_checks_name_the_problem(check, expected):
    assert expected in schema_error(check)


# -- unknown metrics stop the parse -------------------------------------------------------------------
def pru_copy(folder: Path, edit=None) -> Path:
    """config/studies/pru.yaml copied to ``folder``/studies, changed by ``edit``."""
    study = yaml.safe_load((REPO / "config" / "studies" / "pru.yaml").read_text())
    if edit is not None:
        edit(study)
    studies = folder / "studies"
    studies.mkdir(parents=True, exist_ok=True)
    (studies / "pru.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    return studies


def load_pru(studies: Path, scale: str = "ci"):
    return load_workflow_config({"scale": scale, "studies": ["pru"]}, REPO / "workflow" / "schemas", studies)[1]["pru"]


def parse_error(studies: Path, scale: str = "ci") -> str:
    with pytest.raises(ConfigError) as error:
        load_pru(studies, scale)
    return str(error.value)


def test_the_unchanged_copy_loads(tmp_path):
    assert load_pru(pru_copy(tmp_path)).artifacts["fig2"].claims


@pytest.mark.parametrize("scale", ["ci", "paper"])
def test_a_misspelt_claim_metric_stops_the_parse(tmp_path, scale):
    def misspell(study):
        study["artifacts"]["fig2"]["claims"][0]["check"][1]["metric"] = "test_mes"

    message = parse_error(pru_copy(tmp_path, misspell), scale)
    assert f"{tmp_path / 'studies' / 'pru.yaml'}: artifacts.fig2.claims[0].check[1].metric: unknown metric 'test_mes'" \
        in message
    assert "did you mean 'test_mse'?" in message and "fig2's runs emit: dev_mse, epochs, mean_dev_mse" in message


def test_a_metric_inside_a_list_of_checks_and_a_python_check_is_checked(tmp_path):
    def misspell(study):
        checks = study["artifacts"]["table1"]["claims"][1]["check"]
        checks[0]["metric"] = ["dev_sentence_nll", "test_sentence_nl"]
        checks[1]["metric"] = ["dev_sentence_nll", "perplexity"]

    message = parse_error(pru_copy(tmp_path, misspell))
    assert "artifacts.table1.claims[1].check[0].metric[1]: unknown metric 'test_sentence_nl'" in message
    assert "artifacts.table1.claims[1].check[1].metric[1]: unknown metric 'perplexity'" in message


def test_an_unknown_show_metric_stops_the_parse(tmp_path):
    message = parse_error(pru_copy(tmp_path, lambda s: s["artifacts"]["fig2"].update(show={"metrics": ["nope"]})))
    assert "pru.yaml: artifacts.fig2.show.metrics[0]: unknown metric 'nope'; fig2's runs emit:" in message


def test_an_analysis_artifact_has_its_analysis_metrics(tmp_path):
    """fig4 has runs and an analysis: its claims are judged on the analysis table."""
    def name_a_run_metric(study):
        study["artifacts"]["fig4"]["claims"][0]["check"]["metric"] = "test_bleu_len_1to10"

    message = parse_error(pru_copy(tmp_path, name_a_run_metric))
    assert ("artifacts.fig4.claims[0].check.metric: unknown metric 'test_bleu_len_1to10'; "
            "fig4's analysis validation_peak emits: dev_bleu_drop, epochs, last_dev_bleu") in message


def test_published_metrics_count_for_claims_judged_on_them(tmp_path):
    """A metric only the paper gives (fig2's baseline) is known where the project's published
    CSVs are found (``<project>/reports/published`` beside ``<project>/config/studies``)."""
    def show_the_baseline(study):
        study["artifacts"]["fig2"]["show"] = {"metrics": ["baseline_mse", "test_mse"]}

    bare = pru_copy(tmp_path / "bare", show_the_baseline)
    assert "artifacts.fig2.show.metrics[0]: unknown metric 'baseline_mse'" in parse_error(bare)
    project = tmp_path / "project"
    studies = pru_copy(project / "config", show_the_baseline)
    (project / "reports" / "published").mkdir(parents=True)
    shutil.copy(REPO / "reports" / "published" / "pru_fig2.csv", project / "reports" / "published")
    assert load_pru(studies).artifacts["fig2"].spec["show"]["metrics"][0] == "baseline_mse"


# -- what tasks, training and analyses declare is what they write ----------------------------------------
SENTENCES = [  # (form, lemma, upos, head, deprel) per word
    [("The", "the", "DET", 2, "det"), ("cat", "cat", "NOUN", 3, "nsubj"), ("sat", "sit", "VERB", 0, "root")],
    [("Mary", "Mary", "PROPN", 3, "nmod:poss"), ("'s", "'s", "PART", 1, "case"), ("dog", "dog", "NOUN", 4, "nsubj"),
     ("barked", "bark", "VERB", 0, "root"), (".", ".", "PUNCT", 4, "punct")],
    [("Dogs", "dog", "NOUN", 2, "nsubj"), ("bark", "bark", "VERB", 0, "root"),
     ("loudly", "loudly", "ADV", 2, "advmod")],
]
TRANSLATIONS = [  # sources of 2, 3 and 5 words: every length bucket of the translation case has some
    ("a cat", "eine katze"), ("a dog runs", "ein hund rennt"), ("the cat runs here now", "die katze rennt hier jetzt"),
    ("a dog", "ein hund"), ("the dog sits", "der hund sitzt"), ("a cat sits there now", "eine katze sitzt dort jetzt")]


def lm_corpus(tokens: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    slots = [("the", "a"), ("cat", "dog"), ("sat", "ran"), ("on", "under"), ("the", "a"), ("mat", "rug")]
    out: list[str] = []
    while len(out) < tokens:
        out += [rng.choice(pair) for pair in slots][:rng.randint(3, 6)] + ["<eos>"]
    return out[:tokens]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, str]:
    """Prepared files of the real-data tasks, in miniature: a treebank, PTB words, Multi30k."""
    folder = tmp_path_factory.mktemp("prepared")
    columns = ("form", "lemma", "upos", "head", "deprel")
    treebank = {name: [[word[k] for word in sentence] for sentence in SENTENCES] for k, name in enumerate(columns)}
    write_json_gz({"dataset": "toy", "splits": {s: treebank for s in ("train", "dev", "test")}}, folder / "toy.json.gz")
    write_json_gz({"dataset": "ptb_word", "splits": {"train": lm_corpus(300, 1), "dev": lm_corpus(80, 2),
                                                     "test": lm_corpus(80, 3)}}, folder / "ptb_word.json.gz")
    pairs = {"en": [s.split() for s, _ in TRANSLATIONS], "de": [t.split() for _, t in TRANSLATIONS]}
    write_json_gz({"dataset": "multi30k", "splits": {s: pairs for s in ("train", "dev", "test")}},
                  folder / "multi30k.json.gz")
    return {"treebank": str(folder / "toy.json.gz"), "lm": str(folder / "ptb_word.json.gz"),
            "translation": str(folder / "multi30k.json.gz")}


TRAIN = {"epochs": 2, "batch_size": 4, "optimizer": "adam", "lr": 0.01, "log_every": 1, "eval_batch_size": 4}
TREEBANK = {"treebank": "toy", "min_count": 1}
#: One tiny run per case: (task, model, cell, extra train settings, data file); every registered
#: task has at least one, and together they use every setting that adds a metric.
RUNS = {
    "adding": ({"name": "adding", "T": 6, "train_size": 16, "dev_size": 4, "test_size": 4},
               {"name": "basic", "hidden_size": 3}, "lstm", {"patience": 1}, None),
    "copying": ({"name": "copying", "T": 3, "train_size": 8, "dev_size": 4, "test_size": 4},
                {"name": "basic", "hidden_size": 3}, "pru", {"lr_decay": 2.0, "lr_decay_after": 1}, None),
    "anbn": ({"name": "anbn", "max_train_n": 3, "max_test_n": 5, "train_size": 16, "dev_size": 8},
             {"name": "basic", "hidden_size": 3}, "srn", {"log_grad_norm": True, "on_nonfinite": "record"}, None),
    "anbn_seen_only": ({"name": "anbn", "max_train_n": 3, "max_test_n": 3, "train_size": 8, "dev_size": 4},
                       {"name": "basic", "hidden_size": 2}, "gru", {}, None),
    "presence": ({"name": "presence", "T": 4}, {"name": "basic", "hidden_size": 1, "embedding_size": 2},
                 "elstm", {}, None),
    "reversal": ({"name": "reversal", "T": 4, "V": 3, "train_size": 8, "dev_size": 4, "test_size": 4},
                 {"name": "delayed", "hidden_size": 3, "delay": 1}, "lstm", {}, None),
    "sine_filter": ({"name": "sine_filter", "T": 5, "taps": 4, "acausality": 1, "train_size": 8, "dev_size": 4,
                     "test_size": 4}, {"name": "brnn", "hidden_size": 2}, "lstm", {}, None),
    "pos": ({"name": "pos", **TREEBANK}, {"name": "basic", "hidden_size": 3, "embedding_size": 3}, "lstm", {},
            "treebank"),
    "pos_chars": ({"name": "pos_chars", **TREEBANK}, {"name": "char_word", "hidden_size": 3, "embedding_size": 3,
                                                      "char_hidden_size": 2, "char_embedding_size": 2},
                  "lstm", {}, "treebank"),
    "lm_stream": ({"name": "lm", "corpus": "ptb_word", "bptt": 5}, {"name": "basic", "hidden_size": 3,
                                                                    "embedding_size": 3}, "lstm", {}, "lm"),
    "lm_sentence": ({"name": "lm", "corpus": "ptb_word", "mode": "sentence"},
                    {"name": "basic", "hidden_size": 3, "embedding_size": 3}, "srn", {}, "lm"),
    "translation": ({"name": "translation", "beam_size": 2, "length_buckets": [2, 3]},
                    {"name": "attn_encdec", "hidden_size": 3, "embedding_size": 3, "attention_size": 3},
                    "pru_plus", {}, "translation"),
    "dp_seq2seq": ({"name": "dp_seq2seq", "input_layout": "repeat", **TREEBANK},
                   {"name": "brnn", "hidden_size": 3, "embedding_size": 3}, "lstm", {}, "treebank"),
    "dp_biaffine": ({"name": "dp_biaffine", **TREEBANK}, {"name": "biaffine", "layers": 1, "hidden_size": 3,
                                                          "embedding_size": 3, "arc_mlp": 3, "label_mlp": 2},
                    "lstm", {}, "treebank"),
}


def run_config(case: str) -> dict:
    task, model, cell, train, _ = RUNS[case]
    return {"seed": 1, "task": task, "model": model, "cell": {"name": cell}, "train": {**TRAIN, **train}}


@pytest.fixture(scope="module")
def trained(tmp_path_factory, data) -> dict[str, TrainedRun]:
    """Every case of RUNS trained (seconds in all)."""
    folder = tmp_path_factory.mktemp("runs")
    runs = {}
    for case, (task, model, cell, _, data_key) in RUNS.items():
        run = run_config(case)
        train_run(run, folder / case, data=data.get(data_key), device="cpu", progress_interval=1e9)
        labels = {"task": task["name"], "model": model["name"], "cell": cell, "seed": 1}
        runs[case] = TrainedRun(folder / case, labels, run, Path(data[data_key]) if data_key else None)
    return runs


def test_every_task_has_a_case():
    assert set(TASKS.names()) <= {task["name"] for task, *_ in RUNS.values()}


@pytest.mark.parametrize("case", list(RUNS))
def test_a_task_declares_what_its_evaluate_writes(trained, case):
    run = trained[case]
    written = json.loads((run.folder / "metrics.json").read_text())
    params = dict(run.identity["task"])
    declared = TASKS[params.pop("name")].emitted_metrics(**params)
    assert {name for name in written if name.startswith(("dev_", "test_"))} == declared


#: tasks that keep no test items (their metrics are not sums over items, or no claim compares single runs of them)
NO_ITEMS = {"copying", "anbn", "anbn_seen_only", "presence"}


@pytest.mark.parametrize("case", list(RUNS))
def test_a_run_keeps_test_items_that_give_its_test_metrics(trained, case):
    """items.npz: per test item (sentence, window, sequence) the statistics whose sums give the
    run's test metrics, each recomputed from them equal to what metrics.json says."""
    run = trained[case]
    items = SplitItems.load(run.folder / ITEMS_FILE)
    if case in NO_ITEMS:
        assert items is None
        return
    written = json.loads((run.folder / "metrics.json").read_text())
    assert items is not None and len(items) > 1 and items.metrics
    assert set(items.metrics) <= {name for name in written if name.startswith("test_")}
    for metric in items.metrics:
        # float32 sums in evaluate, float64 over items: equal to float32 rounding
        assert items.value(metric) == pytest.approx(written[metric], rel=1e-6, abs=1e-9), metric


@pytest.mark.parametrize("case", list(RUNS))
def test_a_run_has_every_declared_metric_and_no_other(trained, case):
    """metrics.json (task and training loop) and the aggregation's curve means; only a run that
    diverged has diverged_step (see test_a_diverged_run_writes_no_undeclared_metric)."""
    run = trained[case]
    finished = load_run(run.folder)
    train = run.identity["train"]
    task = TASKS[run.identity["task"]["name"]]
    only_if_diverged = {"diverged_step"} if train.get("on_nonfinite") == "record" else set()
    assert finished.metrics.get("diverged", 0) == 0
    assert set(finished.metrics) - {name for name in finished.metrics if name.startswith(("dev_", "test_"))} \
        == training_metrics(train) - only_if_diverged
    assert set(finished.curve["metric"]) == curve_metrics(train, task.dev_metric)
    assert set(finished.metrics) | set(curve_means(finished.curve)) == run_metrics(run.identity) - only_if_diverged


def test_a_diverged_run_writes_no_undeclared_metric(tmp_path):
    """A run that diverges (on_nonfinite: record) writes diverged_step, and nothing undeclared."""
    run = {"seed": 1, "task": {"name": "adding", "T": 4, "train_size": 8, "dev_size": 4, "test_size": 4},
           "model": {"name": "basic", "hidden_size": 3}, "cell": {"name": "srn"},
           "train": {**TRAIN, "optimizer": "sgd", "lr": 1e30, "on_nonfinite": "record"}}
    train_run(run, tmp_path, device="cpu", progress_interval=1e9)
    finished = load_run(tmp_path)
    assert finished.metrics["diverged"] == 1 and "diverged_step" in finished.metrics
    assert set(finished.metrics) | set(curve_means(finished.curve)) <= run_metrics(run)


def analysis_table(name: str, params: dict, trained: dict, data: dict) -> pd.DataFrame:
    runs = [trained[case] for case in ANALYSIS_RUNS.get(name, ())]
    extra = {"runs": runs} if name in ANALYSIS_RUNS else {}
    if name == "dataset_statistics":
        extra = {"data": {"toy": data["treebank"], "ptb_word": data["lm"]}}
    return ANALYSES[name](seed=0, **params, **extra)


#: Parameters of every analysis for a quick table, and the runs of RUNS it reads.
ANALYSIS_PARAMS = {
    "parameter_count": {"cells": ["lstm", "gru", "elstm"], "input_size": 3, "hidden_size": 2, "period": 4},
    "theorem1": {"cells": ["srn", "lstm"], "layers": [2], "steps": 4, "batch": 2, "hidden_size": 3},
    "cost": {"lengths": [3], "delays": [1], "hidden_size": 3, "bidirectional_hidden_size": 2, "batch_size": 2,
             "repeats": 1, "warmup": 0},
    "lstm_listings": {"batch_size": 2, "seq_len": 3, "hidden_size": 3},
    "dataset_statistics": {"datasets": ["toy", "ptb_word"]},
    "weight_statistics": {},
    "memory_response": {"samples": {4: 2}},
    "parameters_at_size": {"sizes": {"hidden_size": 4}},
    "translation_bleu": {"beams": [1, 2], "batch_size": 4},
    "validation_peak": {"metric": "dev_mse"},
    "feedforward_diagonal": {},
    "weight_maps": {"min_words": 2, "max_words": 10, "random_steps": 4, "random_batch": 2},
    "gradient_norms": {"sentences": 2, "length": 3},
    "training_stability": {"window": 2},
    "tagger_fit": {"batch_size": 4},
    "language_model_samples": {"samples": 1, "max_tokens": 4},
    "counting_by_length": {"batch_size": 8},
}
ANALYSIS_RUNS = {"weight_statistics": ["lm_sentence"], "memory_response": ["presence"],
                 "parameters_at_size": ["dp_seq2seq"], "translation_bleu": ["translation"],
                 "validation_peak": ["adding"], "feedforward_diagonal": ["translation"],
                 "weight_maps": ["dp_biaffine"], "gradient_norms": ["lm_sentence"], "training_stability": ["anbn"],
                 "tagger_fit": ["pos"], "language_model_samples": ["lm_sentence"], "counting_by_length": ["anbn"]}


def test_every_analysis_declares_its_metrics():
    assert set(ANALYSES.names()) <= set(ANALYSIS_PARAMS)
    undeclared = [name for name, function in ANALYSES.items() if not hasattr(function, "emitted_metrics")]
    assert not undeclared, f"analyses without emitted_metrics: {undeclared}"


@pytest.mark.parametrize("name", list(ANALYSIS_PARAMS))
def test_an_analysis_declares_the_metrics_of_its_table(trained, data, name):
    params = ANALYSIS_PARAMS[name]
    table = analysis_table(name, params, trained, data)
    assert set(table["metric"]) == analysis_metrics({"name": name, **params})


# -- notebooks: exactly one code cell tagged parameters ------------------------------------------------------
@pytest.mark.parametrize("notebook", sorted(p.name for p in (REPO / "reports").glob("*.ipynb")))
def test_every_study_notebook_has_one_parameters_cell(notebook):
    render.check_parameters_cell(REPO / "reports" / notebook)


def notebook_with(tmp_path, cells) -> Path:
    notebook = nbformat.v4.new_notebook(cells=cells)
    path = tmp_path / "study.ipynb"
    nbformat.write(notebook, str(path))
    return path


def parameters(tags=("parameters",), kind="code"):
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    return make('study = "x"\ninputs = None', metadata={"tags": list(tags)})


@pytest.mark.parametrize("cells, problem", [
    ([parameters(tags=())], "no cell is tagged 'parameters'"),
    ([parameters(), parameters()], "2 cells are tagged 'parameters' (cell 2 (code), cell 3 (code))"),
    ([parameters(kind="markdown")], "the cell tagged 'parameters' (cell 2) is a markdown cell"),
])
def test_a_notebook_without_one_tagged_parameters_cell_is_refused_before_it_runs(tmp_path, monkeypatch, cells,
                                                                                   problem):
    def never(*args, **kwargs):
        raise AssertionError("the notebook was executed")

    monkeypatch.setattr(render, "execute_notebook", never)
    path = notebook_with(tmp_path, [nbformat.v4.new_markdown_cell("# A study"), *cells,
                                    nbformat.v4.new_code_cell("print(study)")])
    with pytest.raises(ValueError) as error:
        render.render_report(path, {"study": "x"}, tmp_path / "out.html")
    assert f"notebook {path}: {problem}" in str(error.value)
    assert not (tmp_path / "out.html").exists()


def test_a_notebook_with_its_parameters_cell_goes_on_to_run(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(render, "execute_notebook", lambda *args: ran.append(args) or (_ for _ in ()).throw(
        RuntimeError("stop here")))
    path = notebook_with(tmp_path, [parameters(), nbformat.v4.new_code_cell("print(study)")])
    with pytest.raises(RuntimeError, match="stop here"):
        render.render_report(path, {"study": "x"}, tmp_path / "out.html")
    assert len(ran) == 1


def test_a_run_folder_parses_back_into_its_parts():
    """parse_run_folder is run_folder's inverse on the parts it joins, and the workflow's wildcard
    pattern is the one it checks; anything else is named."""
    import re

    from rnnrepro.plan.studies import RUN_FOLDER_PATTERN, parse_run_folder, run_folder, settings_digest

    identity = {"task": {"name": "pos", "language": "en"}, "model": {"name": "brnn", "hidden_size": 8},
                "cell": {"name": "lstm"}, "train": {"epochs": 2}, "seed": 3}
    folder = run_folder(identity)
    assert re.fullmatch(RUN_FOLDER_PATTERN, folder)
    assert parse_run_folder(folder) == {"task": "pos", "model": "brnn", "cell": "lstm",
                                        "cfg": settings_digest(identity), "seed": 3}
    with pytest.raises(ValueError, match="not a run folder"):
        parse_run_folder("task~pos/model~brnn/seed~3")
