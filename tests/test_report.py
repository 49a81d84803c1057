"""Tests of the report helpers, the published CSVs and the rendering of both report notebooks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from rnnrepro import report_helpers as rh
from rnnrepro.aggregate import write_tables
from rnnrepro.report import load_parameters, main, render_report

REPO = Path(__file__).resolve().parents[1]
PUBLISHED_DIR = REPO / "reports" / "published"
MODELS = {"basic", "brnn", "seq2seq", "seq2seq_attn", "dbrnn", "bi_att", "any"}
CELLS = {"lstm", "gru", "elstm", "pru", "pru_plus", "lstm_plus", "any"}

# Fake POS accuracies (two seeds) of the elstm study: brnn beats basic for both cells.
POS_ACC = {
    ("basic", "lstm"): (0.8123, 0.8143),
    ("brnn", "lstm"): (0.9012, 0.9034),
    ("basic", "gru"): (0.8050, 0.8070),
    ("brnn", "gru"): (0.8850, 0.8870),
}
# Fake final test MSE of the pru adding task per (cell, T), two seeds.
ADD_MSE = {
    ("lstm", 100): (0.1500, 0.1520),
    ("pru", 100): (0.0412, 0.0432),
    ("pru_plus", 100): (0.0501, 0.0521),
    ("lstm", 500): (0.1600, 0.1640),
    ("pru", 500): (0.0900, 0.0920),
    ("pru_plus", 500): (0.0950, 0.0970),
}


def write_run(root: Path, labels: dict, artifacts: list[str], metrics: dict, curve: list[tuple]) -> Path:
    """Create one fake run folder following the pipeline's interface."""
    run_dir = root / "runs" / labels["study"] / Path(*[f"{k}~{v}" for k, v in labels.items() if k != "study"])
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(
        json.dumps({"labels": labels, "artifacts": artifacts, "scale": "ci"})
    )
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    rows = ["step\tepoch\tmetric\tvalue"] + ["\t".join(map(str, r)) for r in curve]
    (run_dir / "curve.tsv").write_text("\n".join(rows) + "\n")
    return run_dir


def elstm_runs(root: Path) -> list[Path]:
    """Fake table7 runs (basic/brnn × lstm/gru × 2 seeds) with training-loss curves."""
    dirs = []
    for (model, cell), accs in POS_ACC.items():
        for seed, acc in enumerate(accs, start=1):
            labels = {"study": "elstm", "task": "pos", "model": model, "cell": cell, "seed": seed}
            curve = [
                (s, s // 20, "train_loss", round(2.0 / (1 + s / 10) + 0.01 * seed, 4))
                for s in range(0, 60, 10)
            ]
            curve.append((60, 3, "dev_accuracy", acc))
            dirs.append(
                write_run(
                    root,
                    labels,
                    ["table7"],
                    {"test_accuracy": acc, "dev_accuracy": acc + 0.01, "params": 999},
                    curve,
                )
            )
    return dirs


def pru_runs(root: Path) -> list[Path]:
    """Fake fig2 runs (lstm/pru/pru_plus × T 100/500 × 2 seeds) with dev-MSE curves."""
    dirs = []
    for (cell, T), mses in ADD_MSE.items():
        for seed, mse in enumerate(mses, start=1):
            labels = {"study": "pru", "task": "adding", "model": "basic", "cell": cell, "T": T, "seed": seed}
            curve = [(e * 10, e, "dev_mse", round(mse + 0.2 / e, 4)) for e in range(1, 5)]
            dirs.append(write_run(root, labels, ["fig2"], {"test_mse": mse, "dev_mse": mse + 0.001}, curve))
    return dirs


def fake_table(
    rows: dict[tuple[str, str], tuple[float, ...]], artifact: str = "table7", metric: str = "test_accuracy"
) -> pd.DataFrame:
    """A run table in long form from {(model, cell): per-seed values}."""
    records = [
        {
            "study": "elstm",
            "artifact": artifact,
            "scale": "ci",
            "run": f"{m}/{c}/{s}",
            "task": "pos",
            "model": m,
            "cell": c,
            "seed": s,
            "metric": metric,
            "value": v,
        }
        for (m, c), values in rows.items()
        for s, v in enumerate(values, start=1)
    ]
    return pd.DataFrame(records)


@pytest.fixture(scope="module")
def published_elstm() -> pd.DataFrame:
    return rh.load_published(PUBLISHED_DIR, "elstm")


# ----------------------------------------------------------------------------- published CSVs


def test_published_csvs_use_our_vocabulary() -> None:
    files = sorted(PUBLISHED_DIR.glob("*.csv"))
    assert {f.name for f in files} >= {
        "elstm_table5.csv",
        "elstm_table6.csv",
        "elstm_table7.csv",
        "pru_table1.csv",
        "pru_fig2.csv",
    }
    for f in files:
        pub = pd.read_csv(f)
        assert list(pub.columns) == [
            "study",
            "artifact",
            "source",
            "task",
            "model",
            "cell",
            "metric",
            "value",
            "note",
        ], f
        assert set(pub["model"]) <= MODELS and set(pub["cell"]) <= CELLS, f
        assert not pub.duplicated(["artifact", "model", "cell", "metric"]).any(), f
        assert f.name == f"{pub['study'].iloc[0]}_{pub['artifact'].iloc[0]}.csv"
        fractions = pub[pub["metric"].isin(["test_accuracy", "test_uas", "test_las"])]["value"]
        assert fractions.between(0, 1).all(), f


def test_published_values_match_the_papers(published_elstm: pd.DataFrame) -> None:
    assert rh.published_value(published_elstm, "table7", "test_accuracy", "basic", "lstm") == pytest.approx(
        0.8730
    )
    assert rh.published_value(published_elstm, "table7", "test_accuracy", "dbrnn", "lstm") == pytest.approx(
        0.8986
    )
    assert rh.published_value(
        published_elstm, "table5", "test_perplexity", "dbrnn", "elstm"
    ) == pytest.approx(6.18)
    assert rh.published_value(
        published_elstm, "table6", "test_las", "seq2seq_attn", "elstm"
    ) == pytest.approx(0.5260)
    assert len(published_elstm) == 15 + 32 + 15
    pru = rh.load_published(PUBLISHED_DIR, "pru")
    assert rh.published_value(pru, "fig2", "baseline_mse") == pytest.approx(0.167)
    assert rh.published_value(pru, "table1", "test_nll", "basic", "pru_plus") == pytest.approx(99.79)


# ----------------------------------------------------------------------------- helpers


def test_format_helpers() -> None:
    assert rh.format_mean_std(0.8730, 0.0012, 3, "test_accuracy") == "87.30 ± 0.12 % (n=3)"
    assert rh.format_mean_std(0.05, math.nan, 1, "test_mse") == "0.0500 (n=1)"
    assert rh.format_value(0.873, "test_accuracy") == "87.30 %"
    assert rh.format_value(-0.0123, "test_accuracy", signed=True) == "-1.23 pp"
    assert rh.format_value(6.18, "test_perplexity") == "6.18"
    assert rh.format_value(math.nan, "test_nll") == "—"


def test_summarise_mean_std_over_seeds() -> None:
    summary = rh.summarise(fake_table(POS_ACC), "table7")
    assert list(summary.columns) == ["model", "cell", "metric", "mean", "std", "n"]
    assert list(zip(summary["model"], summary["cell"])) == [
        ("basic", "lstm"),
        ("basic", "gru"),
        ("brnn", "lstm"),
        ("brnn", "gru"),
    ]
    row = summary.iloc[0]
    assert (
        row["mean"] == pytest.approx(0.8133)
        and row["std"] == pytest.approx(0.0014142, rel=1e-4)
        and row["n"] == 2
    )
    assert rh.summarise(fake_table(POS_ACC), "table5").empty


def test_join_with_published(published_elstm: pd.DataFrame) -> None:
    table = fake_table({**POS_ACC, ("brnn", "pru"): (0.5,)})
    joined = rh.join_published(rh.summarise(table, "table7"), published_elstm, "table7")
    assert len(joined) == 15 + 1  # every published cell of the grid, plus our run nobody published
    basic_lstm = joined[(joined["model"] == "basic") & (joined["cell"] == "lstm")].iloc[0]
    assert basic_lstm["published"] == pytest.approx(0.8730)
    assert basic_lstm["difference"] == pytest.approx(0.8133 - 0.8730)
    assert basic_lstm["source"] == "Su & Kuo, Table 7"
    shown = rh.comparison_table(joined)
    assert "ours: mean ± std (n seeds)" in shown.columns and "published" in shown.columns
    first = shown.iloc[0]
    assert first["ours: mean ± std (n seeds)"] == "81.33 ± 0.14 % (n=2)"
    assert first["published"] == "87.30 %" and first["difference (ours − published)"] == "-5.97 pp"
    assert (shown["ours: mean ± std (n seeds)"] == "not run").sum() == 15 - 4
    assert shown.loc[shown["cell"] == "pru", "published"].item() == "—"


def test_verdict_brnn_beats_basic_both_ways(published_elstm: pd.DataFrame) -> None:
    holds = rh.check_claim("elstm", "table7", rh.summarise(fake_table(POS_ACC), "table7"), published_elstm)
    assert holds.holds is True and holds.status == "holds"
    assert "holds** at this scale" in holds.text("ours", "ci")
    assert any(d.startswith("lstm: brnn 90.23 % > basic 81.33 %") for d in holds.details)

    flipped = {**POS_ACC, ("brnn", "gru"): (0.70, 0.71)}
    fails = rh.check_claim("elstm", "table7", rh.summarise(fake_table(flipped), "table7"), published_elstm)
    assert fails.holds is False and "does not hold" in fails.text("ours", "ci")
    assert any("gru: brnn 70.50 % not > basic" in d for d in fails.details)

    only_basic = rh.summarise(fake_table({("basic", "lstm"): (0.8,)}), "table7")
    assert rh.check_claim("elstm", "table7", only_basic, published_elstm).holds is None

    published = rh.check_claim(
        "elstm", "table7", rh.published_as_summary(published_elstm, "table7"), published_elstm
    )
    assert published.holds is True  # 89.55 > 87.30, 89.39 > 87.51, 89.29 > 87.44


def test_other_verdicts_on_published_numbers(published_elstm: pd.DataFrame) -> None:
    for artifact in ("table5", "table6"):
        verdict = rh.check_claim(
            "elstm", artifact, rh.published_as_summary(published_elstm, artifact), published_elstm
        )
        assert verdict.holds is True, verdict
    pru = rh.load_published(PUBLISHED_DIR, "pru")
    assert rh.check_claim("pru", "table1", rh.published_as_summary(pru, "table1"), pru).holds is True


def test_threshold_verdict_and_nll_gap() -> None:
    pru = rh.load_published(PUBLISHED_DIR, "pru")
    table = fake_table({("basic", "pru"): (0.05, 0.06), ("basic", "lstm"): (0.10,)}, "fig2", "test_mse")
    assert rh.check_claim("pru", "fig2", rh.summarise(table, "fig2"), pru).holds is True
    table = fake_table({("basic", "pru"): (0.05, 0.06), ("basic", "lstm"): (0.17, 0.18)}, "fig2", "test_mse")
    verdict = rh.check_claim("pru", "fig2", rh.summarise(table, "fig2"), pru)
    assert verdict.holds is False and "lstm: 0.1750 ≥ 0.1670" in verdict.details

    lm = pd.concat(
        [
            fake_table({("basic", "pru"): (1.30,)}, "table1", "valid_nll"),
            fake_table({("basic", "pru"): (1.25,)}, "table1", "test_nll"),
        ]
    )
    gap = rh.with_nll_gap(lm)
    assert gap.loc[gap["metric"] == "nll_gap", "value"].item() == pytest.approx(0.05)


def test_load_parameters_merges_yaml(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("study: elstm\nscale: ci\nartifacts:\n  table7: {title: T7, claim: C}\n")
    (tmp_path / "b.yaml").write_text("scale: mini\n")
    params = load_parameters([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    assert params == {
        "study": "elstm",
        "scale": "mini",
        "artifacts": {"table7": {"title": "T7", "claim": "C"}},
    }


# ----------------------------------------------------------------------------- notebooks


def test_notebooks_have_one_parameters_cell() -> None:
    for name in ("elstm", "pru"):
        nb = json.loads((REPO / "reports" / f"{name}.ipynb").read_text())
        assert (
            nb["metadata"]["kernelspec"]["name"] == "python3"
            and nb["metadata"]["language_info"]["name"] == "python"
        )
        tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1
        source = "".join(tagged[0]["source"])
        for param in ("study", "scale", "table", "curves", "published_dir", "artifacts"):
            assert f"\n{param} = " in "\n" + source, (name, param)
        assert f'"results/tables/{name}/runs.csv"' in source


def test_render_elstm_report(tmp_path: Path) -> None:
    write_tables(elstm_runs(tmp_path), tmp_path / "tables" / "runs.csv", tmp_path / "tables" / "curves.csv")
    params = {
        "study": "elstm",
        "title": "Su & Kuo",
        "scale": "ci",
        "scale_note": "Hidden size 8, one epoch.",
        "table": str(tmp_path / "tables" / "runs.csv"),
        "curves": str(tmp_path / "tables" / "curves.csv"),
        "published_dir": str(PUBLISHED_DIR),
        "artifacts": {
            "table7": {
                "title": "POS tagging accuracy",
                "claim": "the BRNN beats the basic RNN for every cell",
            },
            "table5": {"title": "LM perplexity", "claim": "DBRNN is best"},
        },
    }
    html_path = tmp_path / "out" / "elstm.html"
    render_report(
        REPO / "reports" / "elstm.ipynb", params, html_path, tmp_path / "out" / "elstm.ipynb", cwd=REPO
    )
    html = html_path.read_text(encoding="utf-8")
    assert "90.23 ± 0.16 % (n=2)" in html  # ours, brnn-lstm
    assert "87.30 %" in html and "Su &amp; Kuo, Table 7" in html  # published, with its source
    assert "holds</strong> at this scale" in html
    assert "No runs of <strong>table5</strong>" in html
    assert "What this scale changes: Hidden size 8, one epoch." in html
    assert "267.47" in html  # table5 published values still shown
    assert html.count("data:image/png;base64") >= 2  # bar plot and curves
    assert "rh.show(" not in html  # code hidden
    assert (tmp_path / "out" / "elstm.ipynb").exists()


def test_render_pru_report_via_cli(tmp_path: Path) -> None:
    write_tables(pru_runs(tmp_path), tmp_path / "tables" / "runs.csv", tmp_path / "tables" / "curves.csv")
    params = {
        "study": "pru",
        "scale": "ci",
        "table": str(tmp_path / "tables" / "runs.csv"),
        "curves": str(tmp_path / "tables" / "curves.csv"),
        "published_dir": str(PUBLISHED_DIR),
    }
    (tmp_path / "params.yaml").write_text(json.dumps(params))  # JSON is YAML
    html_path = tmp_path / "pru.html"
    assert (
        main(
            [
                str(REPO / "reports" / "pru.ipynb"),
                str(html_path),
                "--params",
                str(tmp_path / "params.yaml"),
                "--cwd",
                str(REPO),
            ]
        )
        == 0
    )
    html = html_path.read_text(encoding="utf-8")
    assert "0.0422 ± 0.0014 (n=2)" in html  # ours, pru at T=100
    assert "baseline MSE 0.167" in html and "Choi, Sec. 4.1" in html
    assert "does not hold</strong> at this scale" not in html and "holds</strong> at this scale" in html
    assert "No runs of <strong>table1</strong>" in html and "99.79" in html
    assert html.count("data:image/png;base64") >= 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["params.yaml", "pru.html", "runs", "tables"]


def test_failed_execution_writes_no_html(tmp_path: Path) -> None:
    params = {
        "study": "pru",
        "table": str(tmp_path / "runs.csv"),
        "curves": str(tmp_path / "curves.csv"),
        "published_dir": 42,
    }
    with pytest.raises(Exception):
        render_report(REPO / "reports" / "pru.ipynb", params, tmp_path / "pru.html", cwd=REPO)
    assert not (tmp_path / "pru.html").exists()


def test_defaults_render_without_any_results(tmp_path: Path) -> None:
    """Opened with its default parameters where nothing has run (and nothing is published), a report says so."""
    html_path = tmp_path / "elstm.html"
    render_report(REPO / "reports" / "elstm.ipynb", {}, html_path, cwd=tmp_path)
    html = html_path.read_text(encoding="utf-8")
    assert "No runs of <strong>table7</strong>" in html and "No runs of <strong>table5</strong>" in html
