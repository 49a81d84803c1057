"""Controls before claims (rnnrepro.claims.regime): a claim judged on models that did not reach
the regime the paper studied is its own outcome, shown with ours, the baseline and the paper's
value; a bound may be a trivial baseline of the row's own task and split."""
from __future__ import annotations

import math

import pandas as pd

from rnnrepro.claims import Context, build_check, judge_claim
from rnnrepro.claims.regime import NOT_IN_REGIME, check_regime

LM = {"metric": "test_perplexity", "of": {"cell": "lstm"}, "at_most": {"baseline": "unigram", "times": 0.5},
      "basis": "a language model that uses its context halves a unigram model's perplexity"}
PARSER = {"metric": "test_uas", "of": {"cell": "lstm"},
          "at_least": {"baseline": "left_neighbour", "to": "published", "fraction": 0.5}, "basis": "halfway"}


def summary(rows):
    return pd.DataFrame([{"run": "", "std": 1.0, "n": 3.0, **row} for row in rows])


def baselines(rows):
    return pd.DataFrame(rows)


def test_a_language_model_worse_than_half_the_unigram_is_not_in_the_regime():
    base = baselines([{"grid": "medium", "baseline": "unigram", "metric": "test_perplexity", "value": 713.0}])
    ours = summary([{"grid": "medium", "cell": "lstm", "metric": "test_perplexity", "mean": 820.0},
                    {"grid": "medium", "cell": "lstm_minus_gates", "metric": "test_perplexity", "mean": 300.0}])
    check = check_regime(LM, ours, base, pd.DataFrame())
    assert check.met is False and "820" in check.details[0] and "713" in check.details[0]
    assert check_regime(LM, ours.assign(mean=[300.0, 900.0]), base, pd.DataFrame()).met is True  # of: the LSTM only
    unread = check_regime(LM, ours, base.iloc[0:0], pd.DataFrame())
    assert unread.met is None and "cannot be read" in unread.details[0]


def test_a_parser_halfway_from_the_neighbour_baseline_to_the_papers():
    base = baselines([{"baseline": "left_neighbour", "metric": "test_uas", "value": 0.30}])
    paper = pd.DataFrame([{"cell": "lstm", "metric": "test_uas", "value": 0.90}])
    ours = summary([{"cell": "lstm", "metric": "test_uas", "mean": 0.52}])
    assert check_regime(PARSER, ours, base, paper).met is False  # needs 0.30 + 0.5 (0.90 − 0.30) = 0.60
    assert check_regime(PARSER, ours.assign(mean=0.61), base, paper).met is True


def test_the_best_restart_where_the_sentences_are_about_it():
    """An analysis of the best-fitted restart (elstm Fig. 5a) is in the regime when that restart
    fits, whatever the other restarts do; read on the mean, the stalled restarts would decide."""
    fitted = {"metric": "dev_loss", "of": {"T": "10"}, "seeds": "best", "basis": "the analysed restart fits",
              "at_most": {"baseline": "majority", "times": 0.1}}
    base = baselines([{"T": "10", "baseline": "majority", "metric": "dev_loss", "value": 0.305}])
    ours = summary([{"T": "10", "cell": c, "metric": "dev_loss", "mean": 0.15, "min": low, "max": 0.305}
                    for c, low in (("lstm", 1e-4), ("elstm", 2e-5))])
    check = check_regime(fitted, ours, base, pd.DataFrame())
    assert check.met is True and "best restart" in check.details[0]
    assert check_regime({**fitted, "seeds": "mean"}, ours, base, pd.DataFrame()).met is False
    assert check_regime(fitted, ours.assign(min=[1e-4, 0.29]), base, pd.DataFrame()).met is False


def test_claims_on_models_out_of_the_regime_are_their_own_outcome():
    """A "does not hold" on parsers at 52 % UAS where the paper's parse at 90 %: not in the
    paper's regime, with what it would read, never held or refuted; in the regime, judged."""
    base = baselines([{"baseline": "left_neighbour", "metric": "test_uas", "value": 0.30}])
    paper = pd.DataFrame([{"cell": c, "metric": "test_uas", "value": v, "mean": v}
                          for c, v in (("lstm", 0.90), ("lstm_minus_srnn", 0.80))])
    ours = summary([{"cell": "lstm", "metric": "test_uas", "mean": 0.52},
                    {"cell": "lstm_minus_srnn", "metric": "test_uas", "mean": 0.53}]).assign(std=0.001)
    claim = {"quote": "removing the memory cell degrades parsing drastically", "where": "Sec. 3",
             "check": {"kind": "compare", "metric": "test_uas", "better": {"cell": "lstm"},
                       "than": {"cell": "lstm_minus_srnn"}, "margin": 0.05}}
    regime = check_regime(PARSER, ours, base, paper)
    result = judge_claim(claim, "table3", ours, paper, paper, "mini", regime=regime, baselines=base)
    assert result.ours.status == NOT_IN_REGIME and result.ours.holds is None
    assert any("would read: does not hold" in d for d in result.ours.details)
    assert result.ours.to_decide
    parsing = ours.assign(mean=[0.88, 0.80])
    result = judge_claim(claim, "table3", parsing, paper, paper, "mini",
                         regime=check_regime(PARSER, parsing, base, paper), baselines=base)
    assert result.ours.status == "holds"


def test_a_threshold_below_a_baseline_of_each_rows_own_split():
    """pru Fig. 2: "converged" is below the dev set's own trivial MSE (predicting its mean) less a
    tenth, per T; a curve at that level, which learned nothing, does not count as converged."""
    base = baselines([{"T": "20", "baseline": "mean", "metric": "dev_mse", "value": 0.158},
                      {"T": "50", "baseline": "mean", "metric": "dev_mse", "value": 0.159}])
    check = build_check({"kind": "threshold", "metric": "dev_mse", "below": {"baseline": "mean", "times": 0.9}})
    context = Context(scale="mini", baselines=base)
    plateau = summary([{"T": t, "cell": "lstm", "metric": "dev_mse", "mean": m} for t, m in (("20", 0.158), ("50", 0.160))])
    verdict = check.judge(plateau.assign(std=0.001), context)
    assert verdict.holds is False and "0.9 × the mean baseline" in verdict.details[-1]
    learned = plateau.assign(mean=[0.01, 0.02], std=0.001)
    assert check.judge(learned, context).holds is True
    assert check.judge(learned, Context(scale="mini")).holds is None  # no baseline to read
    assert math.isfinite(check.bound(context, "dev_mse", {"T": "20"})[0])


def test_a_figure_of_curves_is_read_on_the_scores_of_the_same_models():
    """pru Fig. 4 shows the validation curves of Table 3's translation models: its regime is read
    on Table 3's BLEU (``on``), against the paper's number of Table 3 and the copy baseline of
    Table 3's runs, where the figure's own summary has no test BLEU."""
    from types import SimpleNamespace

    from rnnrepro.claims.study import JudgedStudy

    spec = {"on": "table3", "of": {"cell": "lstm"}, "metric": "test_bleu", "basis": "halfway from copying",
            "at_least": {"baseline": "copy", "fraction": 0.5,
                         "to": {"published": "test_bleu", "where": {"direction": "en-fi", "cell": "lstm"}}}}
    scores = {"fig4": summary([{"cell": "lstm", "metric": "dev_loss", "mean": 2.0}]),
              "table3": summary([{"direction": "de-en", "cell": "lstm", "metric": "test_bleu", "mean": 4.0},
                                 {"direction": "en-de", "cell": "lstm", "metric": "test_bleu", "mean": 3.0}])}
    copying = baselines([{"direction": d, "baseline": "copy", "metric": "test_bleu", "value": 0.2}
                         for d in ("de-en", "en-de")])

    class Data(JudgedStudy):
        def ours(self, artifact):
            return scores[artifact]

        def baseline_rows(self, artifact):
            return copying if artifact == "table3" else baselines([])

    data = Data.__new__(Data)
    data.study = SimpleNamespace(artifacts={"fig4": SimpleNamespace(spec={"regime": spec}),
                                            "table3": SimpleNamespace(spec={"regime": spec})})
    data.published_rows = pd.DataFrame([{"artifact": "table3", "direction": "en-fi", "cell": "lstm",
                                         "metric": "test_bleu", "value": 7.2}])
    check = data.regime("fig4")  # bound 0.2 + 0.5 (7.2 − 0.2) = 3.7: de-en in, en-de not
    assert check.met is False and len(check.details) == 2
    assert "3.70" in check.details[0] and "in the regime" in check.details[0] and "not in" in check.details[1]
    scores["table3"] = scores["table3"].assign(mean=[4.0, 3.8])
    assert data.regime("fig4").met is True and data.regime("table3").met is True
