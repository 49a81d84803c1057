"""Configuration: schema validation with readable errors, scale merge, grid expansion."""
from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from rnnrepro.config_check import ConfigError
from rnnrepro.studies import deep_merge, load_workflow_config


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
    for scale in ("ci", "mini", "paper"):
        config, studies = load_workflow_config({**base_config, "scale": scale}, *paths)
        assert set(studies) == set(config["studies"])
        assert all(study.runs for study in studies.values())


def test_defaults_are_filled(paths):
    config, _ = load_workflow_config({"scale": "ci", "studies": ["pru"]}, *paths)
    assert config["data"] == {"mirror": None, "timeout": 20}
    assert config["results"] == "results"


@pytest.mark.parametrize("change, message", [
    ({"scael": "ci"}, "unknown key 'scael'; allowed: data, results, scale, studies"),
    ({"scale": "huge"}, "'huge' is not allowed; known: ci, mini, paper"),
    ({"studies": ["elstm", "nope"]}, "'nope' is not allowed; known: "),
    ({"data": {"timeout": "soon"}}, "data.timeout: 'soon' is not of type 'number'"),
    ({"data": {"mirorr": "x"}}, "data: unknown key 'mirorr'; allowed: mirror, timeout"),
])
def test_bad_top_level_config_names_the_key(base_config, paths, change, message):
    config = {**base_config, **change}
    with pytest.raises(ConfigError) as error:
        load_workflow_config(config, *paths)
    assert message in str(error.value)


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
    (lambda s: s["artifacts"]["b"]["task"].update(T=6), "run task~adding/model~basic/cell~lstm/seed~1 is asked for by artifacts ['a'] and 'b' with different settings"),
])
def test_bad_study_names_the_problem(tmp_path, paths, edit, message):
    study = tiny_study()
    edit(study)
    with pytest.raises(ConfigError) as error:
        load_tiny(tmp_path, study, paths, scale="mini")
    assert message in str(error.value)
    assert "tiny.yaml" in str(error.value)


def test_grid_expansion_scale_merge_and_shared_runs(tmp_path, paths):
    study = load_tiny(tmp_path, tiny_study(), paths, scale="ci")
    assert sorted(study.runs) == [
        "task~adding/model~basic/cell~gru/seed~3",
        "task~adding/model~basic/cell~lstm/seed~1",
        "task~adding/model~basic/cell~lstm/seed~3",
    ]
    shared = study.runs["task~adding/model~basic/cell~lstm/seed~1"]
    assert shared["artifacts"] == ["b"]
    assert all(run["train"]["epochs"] == 1 for run in study.runs.values())
    mini = load_tiny(tmp_path, tiny_study(), paths, scale="mini")
    assert mini.runs["task~adding/model~basic/cell~lstm/seed~1"]["artifacts"] == ["a", "b"]
    assert mini.runs["task~adding/model~basic/cell~lstm/seed~1"]["train"]["epochs"] == 3


def test_extra_grid_axes_name_the_folder_and_labels(tmp_path, paths):
    raw = tiny_study()
    raw["artifacts"]["a"]["grid"]["task.T"] = [5, 9]
    study = load_tiny(tmp_path, raw, paths, scale="paper")
    run = study.runs["task~adding/model~basic/cell~gru/T~9/seed~2"]
    assert run["task"]["T"] == 9
    assert run["labels"] == {"study": "tiny", "task": "adding", "model": "basic", "cell": "gru", "T": 9, "seed": 2}


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
