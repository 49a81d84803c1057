"""The report package: published CSVs, summaries, the claim checks, and every study's report
rendered from fake results."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import papermill
import pytest
from fakes import fake_inputs, fake_study

from rnnrepro import tables
from rnnrepro.claims import Context, build_check
from rnnrepro.labels import label_text, with_text_labels
from rnnrepro.metrics.formats import format_mean_std, format_value
from rnnrepro.plan.layout import Layout
from rnnrepro.plan.studies import load_study, study_names, study_schema_of
from rnnrepro.report import frames, render_report
from rnnrepro.report.render import main

REPO = Path(__file__).resolve().parents[1]
PUBLISHED_DIR = REPO / "reports" / "published"
STUDIES = REPO / "config" / "studies"
SCHEMA = study_schema_of(REPO / "workflow" / "schemas")
NOTEBOOKS = sorted((REPO / "reports").glob("*.ipynb"))


def published_rows(study: str) -> pd.DataFrame:
    return tables.load_published(sorted(PUBLISHED_DIR.glob(f"{study}_*.csv")), study)


def published(study: str, artifact: str) -> pd.DataFrame:
    return tables.published_summary(published_rows(study), artifact)


def judge(study: str, artifact: str, index: int, frame: pd.DataFrame):
    claim = load_study(study, STUDIES, SCHEMA, "paper").artifacts[artifact].claims[index]
    rows = tables.rows_of(published_rows(study), artifact)
    return build_check(claim["check"]).judge(frame, Context(rows, None))


# ----------------------------------------------------------------------------- published CSVs
@pytest.mark.parametrize("path", sorted(PUBLISHED_DIR.glob("*.csv")), ids=lambda p: p.name)
def test_published_csv_has_label_columns_of_its_artifact(path):
    table = pd.read_csv(path)
    columns = list(table.columns)
    assert columns[:3] == ["study", "artifact", "source"] and columns[-1] == "note", columns
    assert columns[-3:-1] == ["value", "std"] or columns[-2] == "value", columns
    study, artifact = table["study"].iloc[0], table["artifact"].iloc[0]
    assert path.name == f"{study}_{artifact}.csv" and set(table["study"]) == {study}
    spec = load_study(study, STUDIES, SCHEMA, "paper")
    assert artifact in spec.artifacts, f"{path.name}: no artifact {artifact} in {study}.yaml"
    labels = columns[3:columns.index("metric")]
    runs = spec.artifacts[artifact].runs
    if runs:  # the labels are the ones our runs carry, so ours and published meet
        ours = {key for use in runs for key in use.labels}
        assert set(labels) <= ours, f"{path.name}: labels {set(labels) - ours} are not labels of our runs"
    assert not table.duplicated(labels + ["metric"]).any(), "a published value is given twice"
    fractions = table[table["metric"].str.contains(r"_(?:accuracy|uas|las)$")]["value"]
    assert fractions.between(0, 1).all(), "accuracies are fractions"


def test_published_values_match_the_papers():
    def value(study, artifact, metric, **labels):
        rows = published(study, artifact)
        for key, wanted in labels.items():
            rows = rows[rows[key] == str(wanted)]
        return rows.loc[rows["metric"] == metric, "mean"].item()

    assert value("elstm", "table7", "test_accuracy", model="basic", cell="lstm") == pytest.approx(0.8730)
    assert value("elstm", "table7", "test_accuracy", model="dbrnn", cell="lstm") == pytest.approx(0.8986)
    assert value("elstm", "table5", "test_perplexity", model="dbrnn", cell="elstm") == pytest.approx(6.18)
    assert value("elstm", "table6", "test_las", model="seq2seq_attn", cell="elstm") == pytest.approx(0.5260)
    assert value("pru", "fig2", "baseline_mse") == pytest.approx(0.167)
    assert value("pru", "table1", "test_sentence_nll", cell="pru_plus") == pytest.approx(99.79)
    assert value("drnn", "table1", "test_accuracy", treebank="ud_en_ewt_v2.3", char_bidirectional="false",
                 char_delay=1, word_bidirectional="false", word_delay=1) == pytest.approx(0.9457)
    row = published("drnn", "table1")
    assert len(row) == 31 * 3 * 2 and row["std"].notna().all()
    assert value("drnn", "fig3", "first_delay_matching_bilstm", T=20) == 19


# ----------------------------------------------------------------------------- formatting and frames
def test_format_helpers():
    assert format_mean_std(0.8730, 0.0012, 3, "test_accuracy") == "87.30 ± 0.12 % (n=3)"
    assert format_mean_std(0.05, math.nan, 1, "test_mse") == "0.0500 (n=1)"
    assert format_mean_std(0.9484, 0.0008, None, "test_accuracy") == "94.84 ± 0.08 %"
    assert format_value(-0.0123, "test_accuracy", signed=True) == "-1.23 pp"
    assert format_value(6.18, "test_perplexity") == "6.18"
    assert format_value(3e-17, "max_abs_output_difference") == "3.00e-17"
    assert format_value(math.nan, "test_nll") == "—"


def test_labels_meet_as_text():
    assert [label_text(v) for v in (5, 5.0, 0.5, True, "false", None, math.nan)] == \
        ["5", "5", "0.5", "true", "false", "", ""]


def test_summary_over_seeds_joined_with_published():
    rows = with_text_labels(pd.DataFrame(
        [{"artifact": "table7", "run": f"r{m}{c}{s}", "model": m, "cell": c, "seed": s, "metric": "test_accuracy",
          "value": v} for (m, c), values in {("basic", "lstm"): (0.81, 0.83), ("brnn", "pru"): (0.5,)}.items()
         for s, v in enumerate(values, 1)]))
    summary = tables.summarise(tables.rows_of(rows, "table7"))
    basic = summary[summary["model"] == "basic"].iloc[0]
    assert (basic["mean"], basic["n"]) == (pytest.approx(0.82), 2) and basic["std"] == pytest.approx(0.01414, rel=1e-3)
    joined = frames.join_published(summary, published("elstm", "table7"))
    assert len(joined) == 15 + 1  # every published cell of the grid, plus our run nobody published
    row = joined[(joined["model"] == "basic") & (joined["cell"] == "lstm")].iloc[0]
    assert row["published"] == pytest.approx(0.8730) and row["difference"] == pytest.approx(0.82 - 0.8730)
    shown = frames.comparison_table(joined)
    assert shown.iloc[0]["ours: mean ± std (n seeds)"] == "82.00 ± 1.41 % (n=2)"
    assert (shown["ours: mean ± std (n seeds)"] == "not run").sum() == 14


# ----------------------------------------------------------------------------- the fixed verdicts
def test_elstm_pos_claims_on_the_published_table():
    """"Equal or better" is read with the authors' own "equal": Table 7's ELSTM trails by 0.07 to
    0.58 pp in four places, which their sentence calls equal, so it holds there and a 1 pp
    shortfall fails; the DBRNN sentence fails on the paper's own table (the BRNN beats the DBRNN
    with the GRU), and the report must say so."""
    table7 = published("elstm", "table7")
    equal_or_better = judge("elstm", "table7", 0, table7)
    assert equal_or_better.holds is True
    behind = table7.copy()
    behind.loc[(behind["model"] == "basic") & (behind["cell"] == "elstm"), "mean"] -= 0.01
    worse = judge("elstm", "table7", 0, behind)
    assert worse.holds is False and any("basic: elstm" in d and "worse beyond the margin than gru" in d
                                        for d in worse.details)
    dbrnn = judge("elstm", "table7", 1, table7)
    assert dbrnn.holds is False and any("gru: dbrnn 89.06 % not better than brnn 89.39 %" in d for d in dbrnn.details)


def test_elstm_dp_claims_judge_uas_and_las_against_lstm_and_gru():
    table6 = published("elstm", "table6")
    margin = judge("elstm", "table6", 0, table6)
    assert margin.holds is True and sum("test_las" in d for d in margin.details) == 10
    weaker = table6.copy()
    weaker.loc[(weaker["model"] == "dbrnn") & (weaker["cell"] == "elstm") & (weaker["metric"] == "test_las"),
               "mean"] = 0.3800  # LAS within 2 pp of the LSTM's 39.71: not a significant margin
    assert judge("elstm", "table6", 0, weaker).holds is False
    assert judge("elstm", "table6", 1, table6).holds is True


def test_pru_adding_claims_judge_speed_per_t():
    def summary(values):  # the curve's mean, and where it ends: PRU and PRU+ below the baseline 0.167
        return pd.DataFrame([{"cell": c, "T": str(T), "metric": metric, "mean": v if metric == "mean_dev_mse"
                              else (0.167 if c == "lstm" else 0.01)}
                             for (c, T), v in values.items() for metric in ("mean_dev_mse", "dev_mse")])

    faster = {("lstm", 100): 0.15, ("pru", 100): 0.08, ("pru_plus", 100): 0.09,
              ("lstm", 500): 0.16, ("pru", 500): 0.05, ("pru_plus", 500): 0.06}
    assert judge("pru", "fig2", 0, summary(faster)).holds is True
    assert judge("pru", "fig2", 1, summary(faster)).holds is True  # the gap grows from T = 100 to 500
    shrinking = {**faster, ("pru", 500): 0.15, ("pru_plus", 500): 0.155}
    assert judge("pru", "fig2", 0, summary(shrinking)).holds is True
    assert judge("pru", "fig2", 1, summary(shrinking)).holds is False
    assert judge("pru", "fig2", 0, summary({**faster, ("pru_plus", 100): 0.2})).holds is False
    stuck = summary(faster)  # no cell leaves the baseline: faster to nowhere is not converging faster
    stuck.loc[stuck["metric"] == "dev_mse", "mean"] = 0.167
    assert judge("pru", "fig2", 0, stuck).holds is False


def test_drnn_reversal_bound_fails_above_the_bound():
    from rnnrepro.tasks.reversal import analytic_bound

    def summary(accuracy_of):
        rows = [{"grid": "dlstm", "model": "delayed", "delay": str(d), "T": "10", "V": "4", "metric": "test_accuracy",
                 "mean": accuracy_of(d)} for d in range(11)]
        rows.append({"grid": "bilstm", "model": "brnn", "delay": "", "T": "10", "V": "4", "metric": "test_accuracy",
                     "mean": 1.0})
        return pd.DataFrame(rows)

    assert analytic_bound(0, 20, 4) == 0.625 and analytic_bound(1, 20, 4) == pytest.approx(0.6625)
    on_bound = summary(lambda d: analytic_bound(d, 10, 4) - 0.01)
    assert judge("drnn", "fig3", 1, on_bound).holds is True
    assert judge("drnn", "fig3", 2, on_bound).holds is True  # reaches the Bi-LSTM at d = T - 1 = 9
    leak = summary(lambda d: min(1.0, analytic_bound(d + 1, 10, 4)))  # an off-by-one delay
    assert judge("drnn", "fig3", 1, leak).holds is False
    assert judge("drnn", "fig3", 2, leak).holds is False  # reaches the Bi-LSTM too early
    assert judge("drnn", "fig3", 0, on_bound).holds is True
    assert judge("drnn", "fig3", 0, summary(lambda d: 0.5).assign(mean=0.95)).holds is False


def test_drnn_reversal_bound_on_ours_is_read_at_the_precision_of_fig3_on_the_best_run():
    """Ours at the paper scale (T = 20, 2,000 test sequences), three seeds per delay: "capable of
    achieving" is read on each delay's best run, weighed by the test set's binomial noise, with
    Fig. 3's 1 pp on both sides: at the bound or short of it by less than 1 pp holds, short by more
    does not, and above it by more than 1 pp beyond the noise is a leak. A seed stopped early does
    not sink the delay: only the best run counts."""
    from rnnrepro.tasks.reversal import analytic_bound

    claim = load_study("drnn", STUDIES, SCHEMA, "paper").artifacts["fig3"].claims[1]
    assert claim["quote"] == "The network is capable of achieving the expected statistical bound."
    check = build_check(claim["check"])

    def ours(best_gap: float, mean_gap: float | None = None, n: int = 3):
        rows = []
        for d in range(0, 19, 3):
            bound = min(1.0, analytic_bound(d, 20, 4))
            rows.append({"grid": "dlstm", "model": "delayed", "delay": str(d), "T": "20", "V": "4",
                         "metric": "test_accuracy", "mean": bound + (best_gap if mean_gap is None else mean_gap),
                         "std": 0.02 if n > 1 else float("nan"), "n": n, "max": bound + best_gap})
        return check.judge(pd.DataFrame(rows), Context(pd.DataFrame(), "paper"))

    assert ours(-0.005).holds is True  # the best run 0.5 pp short: within the figure's precision
    assert ours(0.0).holds is True  # exactly at the bound
    assert ours(0.0, mean_gap=-0.03).holds is True  # one seed far short: the best run is at the bound
    short = ours(-0.02)
    assert short.holds is False and any("short of it by more than 1 pp" in d for d in short.details)
    assert ours(+0.02).holds is False  # 2 pp above the bound: a leak
    assert ours(-0.02, n=1).holds is False  # one run, 2 pp short beyond the test set's noise


# ----------------------------------------------------------------------------- notebooks
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_a_thin_template(notebook):
    nb = json.loads(notebook.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3" and nb["metadata"]["language_info"]["name"] == "python"
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    source = "".join(tagged[0]["source"])
    assert f'study = "{notebook.stem}"' in source and "inputs = None" in source
    code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "setup(study, inputs)" in code and "os.chdir" not in code and "sys.path" not in code
    assert (STUDIES / f"{notebook.stem}.yaml").exists()


def test_every_study_has_a_notebook():
    assert {p.stem for p in NOTEBOOKS} == set(study_names(STUDIES))


# ----------------------------------------------------------------------------- rendered reports
def fake_metrics(labels: dict) -> dict:
    """Plausible numbers for any run: accuracies, MSEs, perplexities by a hash of the labels."""
    bump = (sum(map(ord, json.dumps(labels, sort_keys=True))) % 97) / 1000
    return {"test_accuracy": 0.8 + bump, "dev_accuracy": 0.81 + bump, "test_mse": 0.01 + bump,
            "dev_mse": 0.02 + bump, "test_perplexity": 100 + 100 * bump, "params": 1234, "steps": 10}


def fake_curve(labels: dict) -> list[tuple]:
    return [(10 * e, e, "dev_mse", 0.2 / e) for e in range(1, 4)] + [(10 * e, e, "train_loss", 1 / e) for e in range(1, 4)]


@pytest.mark.parametrize("study", study_names(STUDIES))
def test_report_renders_from_results(study, tmp_path):
    """Each study's notebook renders from fake results at the ci scale, reading only its declared
    inputs: our numbers, the published ones, and the summary's verdict on each claim on both."""
    spec = fake_study(tmp_path / "results", study, "ci", fake_metrics, fake_curve)
    inputs = fake_inputs(tmp_path / "results", spec)
    html = tmp_path / f"{study}.html"
    render_report(REPO / "reports" / f"{study}.ipynb", {"study": study, "inputs": inputs.as_parameters()}, html, cwd=REPO)
    text = html.read_text(encoding="utf-8")
    for name, artifact in spec.artifacts.items():
        assert f"{name}: " in text, f"no section {name}"
        assert text.count("On the published numbers") >= sum(len(a.claims) for a in spec.artifacts.values())
    assert "Provenance</strong> (" in text and "ClaimResult(" not in text and "report.section(" not in text
    runs = pd.read_csv(inputs.table)
    if len(runs):
        assert "scale <code>ci</code>" in text
    # the study's claim counts (DVC's metrics): its artifacts' counts summed, and every claim counted
    layout = Layout(str(tmp_path / "results"), "ci")
    per_artifact = json.loads(Path(layout.verdicts(study, "json")).read_text())
    counts = json.loads(Path(layout.counts(study)).read_text())
    assert counts["claims"] == sum(len(a.claims) for a in spec.artifacts.values())
    assert counts["hold_ours"] == sum(entry["hold_ours"] for entry in per_artifact.values())


def test_render_cli_takes_parameters(tmp_path):
    spec = fake_study(tmp_path / "results", "pru", "ci", fake_metrics, fake_curve)
    inputs = tmp_path / "inputs.yaml"
    inputs.write_text(json.dumps({"inputs": fake_inputs(tmp_path / "results", spec).as_parameters()}))
    html = tmp_path / "pru.html"
    assert main([str(REPO / "reports" / "pru.ipynb"), str(html), "--params", str(inputs), "--cwd", str(REPO)]) == 0
    text = html.read_text(encoding="utf-8")
    assert "baseline 0.167 (published)" in text or "0.167" in text
    assert "PRU and PRU+ converge faster than LSTM" in text


def figure_png(grid) -> bytes:
    """The PNG a report shows of ``grid`` (the inline backend saves with a tight bounding box)."""
    import io

    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    grid.figure.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(grid.figure)
    return buffer.getvalue()


def test_grids_are_the_same_without_seaborns_layout_draws(monkeypatch):
    """The reports' seaborn measures a grid's outside legend without drawing the figure twice
    (rnnrepro.report.plots.seaborn_for_reports): the curves and the bars come out pixel for pixel
    as seaborn's own draws make them."""
    import matplotlib
    import seaborn.axisgrid
    import seaborn.utils

    from rnnrepro.report import plots

    matplotlib.use("agg")
    steps = [(cell, seed, step, 1 / (step + seed + len(cell))) for cell in ("lstm", "gru", "pru")
             for seed in (1, 2, 3) for step in range(0, 200, 10)]
    rows = pd.DataFrame(steps, columns=["cell", "seed", "step", "value"]).assign(metric="dev_mse", T=lambda d: d.seed % 2)
    ours = rows[rows["step"] == 190].assign(model="basic", metric="test_accuracy")
    published = ours.drop_duplicates("cell").assign(value=0.5, source="a paper")

    def pictures() -> list[bytes]:
        return [figure_png(plots.curves(rows, "dev_mse", col="T")),
                figure_png(plots.metric_bars(ours, published, "test_accuracy"))]

    monkeypatch.setattr(plots, "seaborn_for_reports", lambda: seaborn)  # seaborn as it is: two draws a legend
    monkeypatch.setattr(seaborn.axisgrid, "_draw_figure", seaborn.utils._draw_figure)
    drawn = pictures()
    monkeypatch.undo()
    measured = pictures()
    assert seaborn.axisgrid._draw_figure is plots._no_draw
    assert measured == drawn


def test_failed_execution_writes_no_html(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError, match="no inputs for the report of no-such-study"):
        render_report(REPO / "reports" / "pru.ipynb", {"study": "no-such-study"}, tmp_path / "pru.html", cwd=REPO)
    assert not (tmp_path / "pru.html").exists()


def test_a_missing_input_is_an_error_naming_it(tmp_path):
    """A report reads only its declared inputs, and a missing one stops it naming the file
    (never an empty table and a report that says "not run")."""
    spec = fake_study(tmp_path / "results", "elstm", "ci", fake_metrics, fake_curve)
    inputs = fake_inputs(tmp_path / "results", spec)
    Path(inputs.curves).unlink()
    with pytest.raises(papermill.PapermillExecutionError, match=f"missing input {inputs.curves}"):
        render_report(REPO / "reports" / "elstm.ipynb", {"study": "elstm", "inputs": inputs.as_parameters()},
                      tmp_path / "elstm.html", cwd=REPO)
    assert not (tmp_path / "elstm.html").exists()


def test_the_report_shows_the_verdicts_the_summary_judged(tmp_path):
    """The notebook does not judge: the verdicts it shows are the summary's, word for word."""
    spec = fake_study(tmp_path / "results", "pru", "ci", fake_metrics, fake_curve)
    inputs = fake_inputs(tmp_path / "results", spec)
    verdicts = pd.read_csv(inputs.verdicts, keep_default_na=False)
    verdicts.loc[verdicts["quote"] != "", "ours_details"] = "a detail only the summary wrote"
    verdicts.to_csv(inputs.verdicts, index=False)
    html = tmp_path / "pru.html"
    render_report(REPO / "reports" / "pru.ipynb", {"study": "pru", "inputs": inputs.as_parameters()}, html, cwd=REPO)
    assert html.read_text(encoding="utf-8").count("a detail only the summary wrote") == (verdicts["quote"] != "").sum()


# ----------------------------------------------------------------------------- evidence on ours
def two_cells(better: float, worse: float, std: float, n: int) -> pd.DataFrame:
    return pd.DataFrame([{"cell": "pru", "metric": "test_mse", "mean": better, "std": std, "n": n},
                         {"cell": "lstm", "metric": "test_mse", "mean": worse, "std": std, "n": n}])


@pytest.mark.parametrize("better, worse, std, n, on_ours", [
    (0.10, 0.20, 0.01, 5, "holds"),                      # 0.1 apart, t·se = 2.78·0.0063: far beyond the noise
    (0.20, 0.10, 0.01, 5, "does not hold"),              # worse, beyond the noise
    (0.10, 0.11, 0.05, 5, "inconclusive at this scale"),  # better on the means, within the noise
    (0.10, 0.20, float("nan"), 1, "inconclusive at this scale"),  # one seed: no spread
])
def test_a_verdict_on_ours_weighs_the_difference_against_the_seed_spread(better, worse, std, n, on_ours):
    check = build_check({"kind": "compare", "metric": "test_mse", "better": {"cell": "pru"}, "than": {"cell": "lstm"}})
    frame = two_cells(better, worse, std, n)
    assert check.judge(frame, Context(scale="mini")).status == on_ours
    published = check.judge(frame, Context())  # the paper's numbers as printed: the means decide
    assert published.status == ("holds" if better < worse else "does not hold")


def test_each_kind_weighs_the_noise_and_can_still_fail_on_ours():
    """Beyond the noise each kind decides on ours (and fails on a counter-example); within it, it is
    inconclusive, where the published numbers would decide."""
    wide, narrow = 0.05, 0.001
    cases = {
        "threshold": ({"kind": "threshold", "metric": "test_mse", "below": 0.15}, lambda s: two_cells(0.10, 0.20, s, 5)),
        "best": ({"kind": "best", "metric": "test_mse", "best": {"cell": "pru"}}, lambda s: two_cells(0.10, 0.11, s, 5)),
        "within": ({"kind": "within", "metric": "test_mse", "a": {"cell": "pru"}, "b": {"cell": "lstm"},
                    "tolerance": 0.02}, lambda s: two_cells(0.10, 0.105, s, 5)),
        "trend": ({"kind": "trend", "metric": "test_mse", "along": "T", "strict": True},
                  lambda s: pd.DataFrame([{"T": t, "metric": "test_mse", "mean": m, "std": s, "n": 5}
                                          for t, m in ((10, 0.10), (20, 0.11))])),
    }
    for kind, (spec, frame_of) in cases.items():
        check = build_check(spec)
        if kind != "threshold":  # the threshold case: pru below 0.15, lstm above it, both far from it
            assert check.judge(frame_of(narrow), Context(scale="mini")).holds is True, kind
            assert check.judge(frame_of(wide), Context(scale="mini")).status == "inconclusive at this scale", kind
        else:
            assert check.judge(frame_of(narrow), Context(scale="mini")).holds is False, kind
        labels = {"T": ["10", "20"]} if kind == "trend" else {"cell": ["pru", "lstm"]}
        neutral = check.neutral(pd.DataFrame(labels))
        assert check.judge(check.counterexample(neutral, Context(scale="mini")), Context(scale="mini")).holds is False, kind


def test_a_trend_margin_tolerates_a_step_back_that_small_and_no_more():
    """``margin: -0.01`` (drnn Fig. 3's "performance increases", read to the figure's 1 pp): a
    step back of 0.4 pp beyond the seeds' noise keeps the rise; one of 2 pp breaks it, on ours and
    on the published numbers alike; without a margin the 0.4 pp step back breaks it too."""
    def along(step_back: float):
        rows = [(1, 0.80), (2, 0.85), (3, 0.85 - step_back), (4, 0.90)]  # d = 3 falls back from d = 2
        return pd.DataFrame([{"delay": str(d), "metric": "test_accuracy", "mean": m, "std": 0.0005, "n": 3}
                             for d, m in rows])

    spec = {"kind": "trend", "metric": "test_accuracy", "along": "delay", "noise": "seeds"}
    tolerant = build_check({**spec, "margin": -0.01})
    for context in (Context(scale="paper"), Context()):
        assert tolerant.judge(along(0.004), context).holds is True
        assert tolerant.judge(along(0.02), context).holds is False
        assert build_check(spec).judge(along(0.004), context).holds is False
    assert "a step back of up to 1.00 pp allowed" in tolerant.judge(along(0.004), Context(scale="paper")).details[0]


def test_a_claim_the_scale_cannot_judge_says_which_scale_it_needs():
    from rnnrepro.claims import judge_claim

    claim = {"quote": "q", "where": "w", "needs_scale": "paper",
             "check": {"kind": "compare", "metric": "test_mse", "better": {"cell": "pru"}, "than": {"cell": "lstm"}}}
    frame = two_cells(0.2, 0.1, 0.01, 5)  # it would fail
    result = judge_claim(claim, "fig2", frame, frame, pd.DataFrame(), "mini")
    assert result.ours.status == "needs the paper scale" and result.published.status == "does not hold"
    assert judge_claim(claim, "fig2", frame, frame, pd.DataFrame(), "paper").ours.status == "does not hold"


def test_a_report_imports_the_verdicts_it_shows_and_no_check():
    """What a report notebook's process imports (the report package and every paper's figures)
    reads the summary's verdicts: no claim kind, paper check, judging or regime code, no analysis
    and no torch (judging stands apart from showing; the verdicts are data)."""
    import subprocess
    import sys

    script = ("import sys, rnnrepro.report.study, rnnrepro.report.index_page\n"
              "from rnnrepro.report.papers import basics, cells, drnn, elstm, pru, wsum\n"
              "print('\\n'.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert "rnnrepro.claims.verdict" in loaded and "rnnrepro.study_data" in loaded
    forbidden = ("rnnrepro.claims.kinds", "rnnrepro.claims.papers", "rnnrepro.claims.judge", "rnnrepro.claims.regime",
                 "rnnrepro.claims.study", "rnnrepro.claims.judge_study", "rnnrepro.analyses", "torch")
    assert not [name for name in loaded if name.startswith(forbidden)]
