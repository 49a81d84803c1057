"""Configuration: schema validation with readable errors, scale merge, grid expansion."""
from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml

from rnnrepro.plan.config_check import ConfigError
from rnnrepro.plan.studies import deep_merge, load_workflow_config, run_folder, run_identity

from conftest import REPO


@pytest.fixture
def paths(repo):
    return repo / "workflow" / "schemas", repo / "config" / "studies"


@pytest.fixture
def base_config(repo):
    return yaml.safe_load((repo / "config" / "config.yaml").read_text())


def tiny_study() -> dict:
    return {
        "title": "t", "paper": "p",
        "defaults": {"train": {"epochs": 3}},
        "artifacts": {
            "a": {"title": "A", "task": {"name": "adding", "T": 5}, "model": {"name": "basic"},
                  "grid": {"cell": ["lstm", "gru"], "seed": [1, 2]}},
            "b": {"title": "B", "task": {"name": "adding", "T": 5}, "model": {"name": "basic"},
                  "grid": {"cell": ["lstm"], "seed": [1]}},
        },
        "scales": {"ci": {"defaults": {"train": {"epochs": 1}}, "artifacts": {"a": {"grid": {"seed": [3]}}}}},
    }


def test_shipped_config_is_valid_at_every_scale(base_config, paths):
    """Each load checks every scale of every study and returns the chosen scale's expansion."""
    for scale in ("ci", "mini", "paper"):
        config, studies = load_workflow_config({**base_config, "scale": scale}, *paths)
        assert set(studies) == set(config["studies"])
        assert all(study.runs for study in studies.values())
        assert {study.scale for study in studies.values()} == {scale}


def test_defaults_are_filled(paths):
    config, _ = load_workflow_config({"scale": "ci", "studies": ["pru"]}, *paths)
    assert config["data"] == {"mirror": None, "timeout": 20}
    assert config["results"] == "results"
    assert config["packing"] == {"size": 16, "max_hidden": 4}


@pytest.mark.parametrize("change, message", [
    ({"scael": "ci"}, "unknown key 'scael'; allowed: bundling, data, extra_cells, packing, results, scale, studies"),
    ({"scale": "huge"}, "'huge' is not allowed; known: ci, mini, paper"),
    ({"studies": ["elstm", "nope"]}, "'nope' is not allowed; known: "),
    ({"data": {"timeout": "soon"}}, "data.timeout: 'soon' is not of type 'number'"),
    ({"data": {"mirorr": "x"}}, "data: unknown key 'mirorr'; allowed: mirror, timeout"),
    ({"packing": {"sise": 8}}, "packing: unknown key 'sise'; allowed: max_hidden, size"),
    ({"packing": {"size": "lots"}}, "packing.size: 'lots' does not match"),
])
def test_bad_top_level_config_names_the_key(base_config, paths, change, message):
    config = {**base_config, **change}
    with pytest.raises(ConfigError) as error:
        load_workflow_config(config, *paths)
    assert message in str(error.value)
    assert str(error.value).startswith("config/config.yaml (with any --config or --configfile values): ")


def write_study(tmp_path, study: dict, paths) -> tuple:
    schema_dir, studies_dir = paths
    folder = tmp_path / "studies"
    folder.mkdir(exist_ok=True)
    (folder / "tiny.yaml").write_text(yaml.safe_dump(study))
    return schema_dir, folder


def load_tiny(tmp_path, study, paths, scale="ci"):
    return load_workflow_config({"scale": scale, "studies": ["tiny"]}, *write_study(tmp_path, study, paths))[1]["tiny"]


@pytest.mark.parametrize("edit, message", [
    (lambda s: s["artifacts"]["a"]["grid"].update(cell=["lstmm"]), "'lstmm' is not allowed; known: "),
    (lambda s: s["artifacts"]["a"]["model"].update(name="transformer"), "unknown model 'transformer'; known models: "),
    (lambda s: s["artifacts"]["a"]["task"].update(T="long"), "task 'adding' parameter 'T' = 'long' has the wrong type"),
    (lambda s: s["artifacts"]["a"]["task"].update(lenght=3), "task 'adding' has no parameter 'lenght'; allowed: T, train_size"),
    (lambda s: s["artifacts"]["a"]["model"].update(hidden=3), "model 'basic' has no parameter 'hidden'; allowed: hidden_size, embedding_size"),
    (lambda s: s["artifacts"]["a"].update(cell={"period": 3}), "cell 'lstm' has no parameter 'period'"),
    (lambda s: s["defaults"]["train"].update(epoch=3), "defaults.train: unknown key 'epoch'; allowed: batch_size, checkpoint_every, clip,"),
    (lambda s: s["defaults"]["train"].update(epochs=1.5), "defaults.train.epochs: 1.5 is not of type 'integer'"),
    (lambda s: s["artifacts"]["a"]["grid"].update(hidden=[1]), "grid key 'hidden' is not task, model, cell, seed or a dotted"),
    (lambda s: s["scales"]["ci"]["artifacts"].update(zz={}), "scales.ci.artifacts: unknown artifact zz; known: a, b"),
    (lambda s: s["artifacts"]["a"].update(grids={"x": {"cell": ["gru"]}}), "artifacts.a: give either grid or grids, not both"),
    (lambda s: s["artifacts"]["b"].update(runs_of="zz"), "artifacts.b.runs_of: 'zz' is not an artifact with runs"),
    (lambda s: s["artifacts"]["a"].update(regime={"on": "zz", "metric": "test_mse", "basis": "x",
                                                  "at_most": {"baseline": "mean"}}),
     "artifacts.a.regime.on: unknown artifact 'zz'; known: a, b"),
    (lambda s: s["artifacts"]["a"].update(regime={"seeds": "all", "metric": "test_mse", "basis": "x",
                                                  "at_most": {"baseline": "mean"}}),
     "artifacts.a.regime.seeds: 'all' is not allowed; known: mean, best"),
    # a run's setting at fault is named by where it is given: the grid, the artifact or the defaults
    (lambda s: s["artifacts"]["a"]["grid"].update({"task.T": ["long"]}), "tiny.yaml: artifacts.a.grid.task.T, run task~"),
    (lambda s: s["artifacts"]["a"]["task"].update(T="long"), "tiny.yaml: artifacts.a.task.T, run task~adding/model~basic/"),
    (lambda s: s["defaults"].update(model={"hidden_size": "x"}), "tiny.yaml: defaults.model.hidden_size, run task~"),
])
def test_bad_study_names_the_problem(tmp_path, paths, edit, message):
    study = tiny_study()
    edit(study)
    with pytest.raises(ConfigError) as error:
        load_tiny(tmp_path, study, paths, scale="mini")
    assert message in str(error.value)
    assert "tiny.yaml" in str(error.value)


def pru_broken_in_paper(tmp_path, edit=None):
    """config/studies/pru.yaml copied to ``tmp_path``/studies, its paper scale's fig2 changed by ``edit``."""
    study = yaml.safe_load((REPO / "config" / "studies" / "pru.yaml").read_text())
    if edit is not None:
        edit(study["scales"]["paper"]["artifacts"]["fig2"])
    folder = tmp_path / "studies"
    folder.mkdir(exist_ok=True)
    (folder / "pru.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    return REPO / "workflow" / "schemas", folder


def test_an_unchanged_copy_loads_at_every_scale(tmp_path):
    schemas, studies = pru_broken_in_paper(tmp_path)
    for scale in ("ci", "mini", "paper"):
        assert load_workflow_config({"scale": scale, "studies": ["pru"]}, schemas, studies)[1]["pru"].runs


@pytest.mark.parametrize("edit, where, problem", [
    # found when paper is expanded: "<file>: scale paper: <key>, run <folder>: <problem>"
    (lambda a: a["grid"].update({"model.hidden_size": "abc"}),
     "pru.yaml: scale paper: artifacts.fig2.grid.model.hidden_size, run task~adding/model~basic/",
     "model 'basic' parameter 'hidden_size' = 'abc' has the wrong type"),
    (lambda a: a.update(model={"hiden_size": 64}),
     "pru.yaml: scale paper: artifacts.fig2.model.hiden_size, run task~adding/model~basic/",
     "model 'basic' has no parameter 'hiden_size'; allowed: hidden_size"),
    (lambda a: a["grid"].update({"task.lenght": [100, 200]}),
     "pru.yaml: scale paper: artifacts.fig2.grid.task.lenght, run task~adding/model~basic/",
     "task 'adding' has no parameter 'lenght'; allowed: T"),
    # found by the schema, which reads every scale: "<file>: invalid configuration: - scales.paper.<key>: <problem>"
    (lambda a: a["grid"].update(hidden=[1, 2]), "scales.paper.artifacts.fig2.grid:", "grid key 'hidden' is not task"),
    (lambda a: a.update(modle={"hidden_size": 64}), "scales.paper.artifacts.fig2:", "unknown key 'modle'"),
    (lambda a: a.update(train={"epochs": "many"}), "scales.paper.artifacts.fig2.train.epochs:", "'many' is not of type"),
])
def test_a_problem_in_another_scale_stops_the_run_naming_file_scale_and_key(tmp_path, edit, where, problem):
    """Every scale of a study is checked whichever runs: a problem in paper's grids stops a ci run."""
    schemas, studies = pru_broken_in_paper(tmp_path, edit)
    with pytest.raises(ConfigError) as error:
        load_workflow_config({"scale": "ci", "studies": ["pru"]}, schemas, studies)
    message = str(error.value)
    assert message.startswith(f"{studies / 'pru.yaml'}: ")
    assert where in message and problem in message


def folders(study, artifact):
    return {use.folder: use.labels for use in study.artifacts[artifact].runs}


def test_grid_expansion_scale_merge_and_shared_runs(tmp_path, paths):
    study = load_tiny(tmp_path, tiny_study(), paths, scale="ci")
    a, b = folders(study, "a"), folders(study, "b")
    assert len(a) == 2 and len(b) == 1 and set(study.runs) == set(a) | set(b)
    assert sorted(labels["cell"] + str(labels["seed"]) for labels in a.values()) == ["gru3", "lstm3"]
    assert all(run["train"]["epochs"] == 1 for run in study.runs.values())
    mini = load_tiny(tmp_path, tiny_study(), paths, scale="mini")
    shared = set(folders(mini, "a")) & set(folders(mini, "b"))
    assert len(shared) == 1 and len(mini.runs) == 4  # a: 2 cells x 2 seeds; b's run is a's lstm seed 1
    assert mini.runs[shared.pop()]["train"]["epochs"] == 3


def test_a_run_is_named_and_keyed_by_what_decides_its_numbers(tmp_path, paths):
    """Folder and identity hold task, model, cell, train and seed: not the study, the artifact,
    the labels or the scale; equal settings share a folder, any other setting gets another."""
    study = load_tiny(tmp_path, tiny_study(), paths, scale="mini")
    (folder, identity), = [(f, i) for f, i in study.runs.items() if i["cell"]["name"] == "lstm" and i["seed"] == 1]
    assert set(identity) == {"task", "model", "cell", "train", "seed"}
    assert identity == run_identity({"task": {"name": "adding", "T": 5}, "model": {"name": "basic"},
                                     "cell": {"name": "lstm"}, "train": {"epochs": 3}}, 1)
    assert folder == run_folder(identity)
    assert folder.startswith("task~adding/model~basic/cell~lstm/cfg~") and folder.endswith("/seed~1")
    other = run_identity({**identity, "train": {"epochs": 4}}, 1)
    assert run_folder(other) != folder and run_folder(other).rsplit("/", 2)[0] == folder.rsplit("/", 2)[0]
    assert run_folder(run_identity(identity, 2)).rsplit("/", 1)[0] == folder.rsplit("/", 1)[0]  # seeds are siblings


def test_extra_grid_axes_become_labels_not_folders(tmp_path, paths):
    raw = tiny_study()
    raw["artifacts"]["a"]["grid"]["task.T"] = [5, 9]
    study = load_tiny(tmp_path, raw, paths, scale="paper")
    runs = {(labels["cell"], labels["T"], labels["seed"]): folder for folder, labels in folders(study, "a").items()}
    folder = runs[("gru", 9, 2)]
    assert study.runs[folder]["task"]["T"] == 9
    assert folders(study, "a")[folder] == {"task": "adding", "model": "basic", "cell": "gru", "T": 9, "seed": 2}
    assert "T~" not in folder


def test_named_grids_label_their_runs_and_merge_per_scale(tmp_path, paths):
    raw = tiny_study()
    raw["artifacts"]["a"] = {"title": "A", "task": {"name": "adding", "T": 5}, "model": {"name": "basic"},
                             "grids": {"small": {"cell": ["lstm"], "model.hidden_size": [4]},
                                       "big": {"cell": ["gru"], "model.hidden_size": [8]}}}
    raw["scales"]["ci"]["artifacts"]["a"] = {"grids": {"big": {"model.hidden_size": [16]}}}
    study = load_tiny(tmp_path, raw, paths, scale="ci")
    labels = sorted((l["grid"], l["cell"], l["hidden_size"]) for l in folders(study, "a").values())
    assert labels == [("big", "gru", 16), ("small", "lstm", 4)]


def test_runs_of_and_reads_name_other_artifacts_runs(tmp_path, paths):
    raw = tiny_study()
    raw["artifacts"]["curves"] = {"title": "C", "runs_of": "a"}
    raw["artifacts"]["sizes"] = {"title": "S", "analysis": {"name": "parameter_count", "cells": ["lstm"]},
                                 "reads": [{"artifact": "a", "where": {"cell": "gru"}}]}
    study = load_tiny(tmp_path, raw, paths, scale="mini")
    assert folders(study, "curves") == folders(study, "a")
    assert [use.labels["cell"] for use in study.artifacts["sizes"].reads] == ["gru", "gru"]
    raw["artifacts"]["sizes"]["reads"] = [{"artifact": "a", "where": {"cell": "srn"}}]
    with pytest.raises(ConfigError, match=r"reads\[0\]: no run of artifact 'a' has the labels \{'cell': 'srn'\}"):
        load_tiny(tmp_path, raw, paths, scale="mini")


def test_analysis_from_needs_the_same_analysis_on_runs_the_other_reads(tmp_path, paths):
    """``analysis_from`` copies another analysis artifact's rows (rnnrepro.plan.analysis_from): only
    when that artifact runs the same analysis with the same parameters on a superset of its runs."""
    raw = tiny_study()
    analysis = {"name": "parameter_count", "cells": ["lstm"]}
    raw["artifacts"]["all_sizes"] = {"title": "S", "analysis": dict(analysis), "reads": [{"artifact": "a"}]}
    raw["artifacts"]["gru_sizes"] = {"title": "G", "analysis": dict(analysis), "analysis_from": "all_sizes",
                                     "reads": [{"artifact": "a", "where": {"cell": "gru"}}]}
    study = load_tiny(tmp_path, raw, paths, scale="mini")
    assert {use.labels["cell"] for use in study.artifacts["gru_sizes"].reads} == {"gru"}
    for edit, message in (
            (lambda s: s["artifacts"]["gru_sizes"]["analysis"].update(cells=["gru"]),
             r"gru_sizes.analysis_from: its analysis .* is not all_sizes's"),
            (lambda s: s["artifacts"]["all_sizes"]["reads"][0].update(where={"cell": "lstm"}),
             r"gru_sizes.analysis_from: all_sizes does not read 2 of its runs"),
            (lambda s: s["artifacts"]["gru_sizes"].update(analysis_from="a"),
             r"gru_sizes.analysis_from: 'a' is not an analysis artifact of the study; known: all_sizes"),
            (lambda s: s["artifacts"]["all_sizes"].update(analysis_from="gru_sizes"),
             r"analysis_from: 'gru_sizes' copies its rows from 'all_sizes'"),
            (lambda s: (s["artifacts"]["b"]["grid"].update({"task.T": [5]}),  # b's run is a's LSTM, seed 1
                        s["artifacts"]["gru_sizes"].update(reads=[{"artifact": "b"}])),
             r"gru_sizes.analysis_from: all_sizes reads 1 of its runs under other labels")):
        broken = copy.deepcopy(raw)
        edit(broken)
        with pytest.raises(ConfigError, match=message):
            load_tiny(tmp_path, broken, paths, scale="mini")


def test_a_claim_asks_for_the_seeds_it_needs_at_a_scale(tmp_path, paths):
    """``seeds: {mini: 4}`` on a claim gives every grid of its artifact at least four seeds at
    that scale, keeping the grid's own seeds (their runs stay the same runs); other scales and
    other artifacts are left as they were."""
    raw = tiny_study()
    claim = {"quote": "q", "where": "w", "seeds": {"mini": 4},
             "check": {"kind": "compare", "metric": "test_mse", "better": {"cell": "lstm"}, "than": {"cell": "gru"}}}
    raw["artifacts"]["a"]["claims"] = [claim]
    plain = load_tiny(tmp_path, tiny_study(), paths, scale="mini")
    mini = load_tiny(tmp_path, raw, paths, scale="mini")
    seeds = sorted((labels["cell"], labels["seed"]) for labels in folders(mini, "a").values())
    assert seeds == [(cell, seed) for cell in ("gru", "lstm") for seed in (1, 2, 3, 4)]
    assert set(folders(plain, "a")) < set(folders(mini, "a"))  # the grid's own seeds are the same runs
    assert folders(mini, "b") == folders(plain, "b")
    assert len(folders(load_tiny(tmp_path, raw, paths, scale="ci"), "a")) == 2  # ci: its own seed [3]
    raw["artifacts"]["a"]["claims"] = [{**claim, "seeds": {"mini": 1}}]
    with pytest.raises(ConfigError, match="seeds"):
        load_tiny(tmp_path, raw, paths, scale="mini")


def test_deep_merge_replaces_lists_and_merges_mappings():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 1}
    merged = deep_merge(base, {"a": {"y": [3]}, "c": 2})
    assert merged == {"a": {"x": 1, "y": [3]}, "b": 1, "c": 2}
    assert base["a"]["y"] == [1, 2]


def test_snakemake_rejects_bad_config_before_any_job(repo, tmp_path):
    """The whole chain: snakemake parses the Snakefile, the config fails, nothing runs."""
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "all", "--config", "scale=huge"],
        cwd=repo, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "Configuration error" in result.stderr + result.stdout
    assert "'huge' is not allowed; known: ci, mini, paper" in result.stderr + result.stdout


def test_cell_settings_that_do_not_fit_are_named_once_per_setting():
    """A cell setting its module rejects when built (a tiny instance) is a ConfigError naming the
    cell, for every run that has it, while the build runs once per distinct cell setting."""
    from rnnrepro.plan import config_check
    from rnnrepro.plan.config_check import check_run_config

    bad = {"task": {"name": "adding", "T": 5}, "model": {"name": "basic"},
           "cell": {"name": "srn", "recurrent_init": "bogus"}, "train": {}}
    config_check._tiny_cell_problem.cache_clear()
    for T in (5, 6):
        with pytest.raises(ConfigError, match=r"cell 'srn': recurrent_init must be one of"):
            check_run_config({**bad, "task": {"name": "adding", "T": T}})
    assert config_check._tiny_cell_problem.cache_info().misses == 1


def test_the_schemas_know_the_scales_the_package_does(repo):
    """A scale is named in the package once (rnnrepro.plan.layout.SCALES); the schemas' enums,
    which JSON Schema cannot import, are held equal to it."""
    import yaml

    from rnnrepro.plan.layout import SCALES

    config = yaml.safe_load((repo / "workflow/schemas/config.schema.yaml").read_text())
    study = (repo / "workflow/schemas/study.schema.yaml").read_text()
    assert tuple(config["properties"]["scale"]["enum"]) == SCALES
    enums = [line for line in (repo / "workflow/schemas/config.schema.yaml").read_text().splitlines() + study.splitlines()
             if "enum: [ci" in line]
    assert len(enums) == 3 and all(f"enum: [{', '.join(SCALES)}]" in line for line in enums), enums
