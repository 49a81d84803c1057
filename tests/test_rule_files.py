"""The workflow's files read as a table of contents: the helpers and every value the rules share
are in common.smk, no rule file defines a value another reads (so include order carries no
meaning), nothing reaches into Snakemake's private attributes, and the training jobs' resources
come from the profiles, where a pack's or a bundle's job (rule train_job) gets what a run's does."""
from __future__ import annotations

import re

import yaml

SHARED_NAME = re.compile(r"^([A-Z][A-Z0-9_]*)\s*=", re.MULTILINE)


def test_no_rule_file_defines_what_another_reads(repo):
    rules = repo / "workflow" / "rules"
    files = {path.name: path.read_text() for path in rules.glob("*.smk")}
    files["Snakefile"] = (repo / "Snakefile").read_text()
    for name, text in files.items():
        if name == "common.smk":
            continue
        for defined in SHARED_NAME.findall(text):
            readers = [other for other, body in files.items() if other != name and re.search(rf"\b{defined}\b", body)]
            assert not readers, f"{defined}, defined in {name}, is read by {readers}: define it in common.smk"
    assert "TRAIN_RESOURCES =" in files["common.smk"] and "JOBS =" in files["common.smk"]


def test_no_rule_file_reaches_into_snakemake_internals(repo):
    for path in [*(repo / "workflow" / "rules").glob("*.smk"), repo / "Snakefile"]:
        assert not re.search(r"\bworkflow\.\w*\._|\._parsed", path.read_text()), path.name


def test_a_job_of_several_runs_gets_the_resources_of_a_run(repo):
    """rule train_job (a pack or a bundle) has the train rule's settings in each profile (the
    slurm profile by a YAML alias, so a user edits them once)."""
    for profile in ("slurm", "local"):
        settings = yaml.safe_load((repo / "profiles" / profile / "config.yaml").read_text())
        for key in ("set-resources", "set-threads"):
            table = settings.get(key) or {}
            assert table.get("train") == table.get("train_job"), (profile, key)
        assert settings.get("set-threads", {}).get("train_job") is not None, profile
    slurm = yaml.safe_load((repo / "profiles" / "slurm" / "config.yaml").read_text())
    assert slurm["set-resources"]["train_job"]["gpu"] == 1
