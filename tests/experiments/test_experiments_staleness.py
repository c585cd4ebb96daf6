"""Tests for commlib.experiments.sgd.staleness: sweeps, studies, and the phrases chosen from them.

The phrases are tested on hand-made sweeps, so that every branch (rules win,
lose, or split; Adagrad ahead, level or behind) is exercised, whatever the
chapter's runs happen to say; the chapter's own direction is tested in
test_claims_staleness.py.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from commlib.experiments.sgd import staleness
from commlib.experiments.sgd.staleness import LrRuleStudy, RateSweep


def _sweep(name, values, losses, workers=16):
    return RateSweep(name, workers, tuple(values), tuple(object() for _ in values), tuple(losses))


def _study(const, stale, dist, single=None, nominal=0.5):
    sweeps = {"constant": _sweep("constant", (0.5, 0.05), const), "staleness": _sweep("staleness", (0.5, 0.25), stale),
              "distance": _sweep("distance", (0.5, 0.05), dist)}
    if single is not None:
        sweeps["no staleness"] = _sweep("no staleness", (0.5, 0.05), single, workers=1)
    return LrRuleStudy(16, 2500, nominal, 0.02, sweeps)


def test_rate_sweep_best_and_lookup():
    sw = _sweep("x", (0.5, 0.1, 0.05), (0.7, 0.55, np.nan))
    assert sw.best_value == 0.1 and sw.best_loss == 0.55        # a diverged run (nan) is never the best
    assert sw.loss(0.5) == 0.7
    with pytest.raises(ValueError, match="not on the grid"):
        sw.loss(0.3)


def test_phrases_when_the_tuned_constant_wins():
    w = staleness.lr_rule_phrases(_study((0.74, 0.553), (0.61, 0.575), (0.63, 0.553), single=(0.66, 0.553)))
    assert w["nominal"] == "both rules end lower than the constant rate"
    assert w["control"].startswith("the rate is too large") and "0.080 nats" in w["control"]
    assert w["staleness_cost"].startswith("once the rate is tuned")
    assert "ends above it (0.575 nats at its best rate 0.25)" in w["tuned"] and "ends level with it" in w["tuned"]
    assert w["verdict"] == "constant" and "smaller step" in w["tuned_verdict"]
    assert "its best here is 0.25, not the shared 0.5" in w["tuning"]


def test_phrases_when_the_rules_win_or_split():
    w = staleness.lr_rule_phrases(_study((0.74, 0.60), (0.61, 0.55), (0.63, 0.56)))
    assert w["verdict"] == "rules" and w["tuned_verdict"].startswith("both rules beat")
    assert "staleness_cost" not in w
    w = staleness.lr_rule_phrases(_study((0.74, 0.60), (0.61, 0.55), (0.63, 0.62)))
    assert w["verdict"] == "mixed" and "the rate/staleness rule beats" in w["tuned_verdict"]
    w = staleness.lr_rule_phrases(_study((0.60, 0.55), (0.70, 0.58), (0.61, 0.56)))
    assert w["nominal"] == "neither rule ends lower than the constant rate"
    assert "smaller step" not in w["tuned_verdict"]                 # no gain at the shared rate to explain
    w = staleness.lr_rule_phrases(_study((0.74, 0.553), (0.61, 0.575), (0.63, 0.553), single=(0.555, 0.553)))
    assert w["control"].startswith("staleness alone adds")
    w = staleness.lr_rule_phrases(_study((0.56, 0.553), (0.54, 0.575), (0.63, 0.553), single=(0.56, 0.52)))
    assert w["staleness_cost"].startswith("even at the tuned rate, staleness costs 0.033")


def test_summary_over_studies():
    assert staleness.lr_rule_summary(["constant"]).startswith("on this problem the rules buy no accuracy")
    assert "in every setting" in staleness.lr_rule_summary(["rules", "rules"])
    assert "mixed" in staleness.lr_rule_summary(["rules", "constant"])
    with pytest.raises(ValueError, match="verdicts"):
        staleness.lr_rule_summary([])


def test_downpour_phrases_branches():
    def dp(sgd, ada):
        return {"SGD": _sweep("SGD", (0.5, 0.05), sgd), "Adagrad": _sweep("Adagrad", (0.5, 0.1), ada)}

    w = staleness.downpour_phrases(dp((0.70, 0.552), (0.57, 0.547)))
    assert w["verdict"] == "adagrad" and "0.005 of the 0.130 nats survive" in w["reading"]
    w = staleness.downpour_phrases(dp((0.70, 0.552), (0.57, 0.551)))
    assert w["verdict"] == "level" and w["tuned"] == "Adagrad ends level with SGD"
    w = staleness.downpour_phrases(dp((0.70, 0.540), (0.57, 0.551)))
    assert w["verdict"] == "sgd" and w["reading"].startswith("tuned, plain SGD ends lower")
    assert "smaller steps" in w["reading"]
    # no advantage at the nominal rate either: the reading must not explain one away
    w = staleness.downpour_phrases(dp((0.56, 0.540), (0.60, 0.551)))
    assert w["verdict"] == "sgd" and "smaller steps" not in w["reading"] and "no advantage" in w["reading"]
    w = staleness.downpour_phrases(dp((0.56, 0.551), (0.60, 0.551)))
    assert w["verdict"] == "level" and "no advantage" in w["reading"]


def test_stalls_draw_and_validate():
    rng = np.random.default_rng(1)
    draws = [staleness.Stalls(0.1, 5.0)(rng, 3) for _ in range(2000)]
    assert set(draws) == {0.0, 5.0} and 0.08 < draws.count(5.0) / 2000 < 0.12
    assert staleness.Stalls(0.0, 5.0)(rng, 0) == 0.0
    with pytest.raises(ValueError, match="probability"):
        staleness.Stalls(1.5, 5.0)
    with pytest.raises(ValueError, match="duration"):
        staleness.Stalls(0.1, -1.0)


def test_studies_reject_bad_grids():
    with pytest.raises(ValueError, match="rates must include the nominal rate 0.5"):
        staleness.lr_rule_study(updates=50, rates=(0.1,), bases=(0.5,), caps=(0.5,), control=None)
    with pytest.raises(ValueError, match="values"):
        staleness.rate_sweep("constant", (), workers=2, updates=50)
    with pytest.raises(ValueError, match="values"):
        staleness.rate_sweep("constant", (-0.1,), workers=2, updates=50)
    with pytest.raises(ValueError, match="comm_time"):
        staleness.downpour_study(updates=50, comm_time=0.0)


def test_distance_cap_phrase_names_the_best_constant_rate():
    w = staleness.lr_rule_phrases(_study((0.74, 0.553), (0.61, 0.575), (0.63, 0.553)))
    assert w["distance_cap"] == "the distance rule does best with its cap at 0.05, the best constant rate itself"
    w = staleness.lr_rule_phrases(_study((0.74, 0.553), (0.61, 0.575), (0.56, 0.6)))
    assert w["distance_cap"] == "the distance rule does best with its cap at 0.5"


def _capped_study(share):
    study = _study((0.74, 0.553), (0.61, 0.575), (0.63, 0.553))
    dist = study.sweeps["distance"]
    runs = (SimpleNamespace(cap_share=0.2), SimpleNamespace(cap_share=share))   # caps 0.5 and 0.05
    study.sweeps["distance"] = RateSweep(dist.name, dist.workers, dist.values, runs, dist.losses)
    return study


def test_distance_cap_phrase_says_how_often_the_cap_set_the_rate():
    w = staleness.lr_rule_phrases(_capped_study(0.99))["distance_cap"]
    assert "the cap set the rate of 99 % of its gradients" in w and "in effect, the constant rate 0.05" in w
    assert w.endswith("its tie with the best constant rate is that rate's, not the distance term's")
    w = staleness.lr_rule_phrases(_capped_study(0.5))["distance_cap"]
    assert "50 % of its gradients and the distance term lowered the rate of the other 50 %" in w
    assert "in effect" not in w and "tie" not in w
    w = staleness.lr_rule_phrases(_capped_study(0.03))["distance_cap"]
    assert "only 3 %" in w and "the distance term's, not the cap's" in w
    with pytest.raises(ValueError, match="share"):
        staleness.cap_share_phrase(1.2, 0.05)


def test_summary_with_carry_over():
    assert staleness.lr_rule_summary(["constant"], "yes").endswith("at a lower loss than a constant rate carried "
                                                                    "unchanged")
    assert staleness.lr_rule_summary(["constant"], "yes", "distance", caveat="but only in a short run",
                                     retuned=True).endswith(", but only in a short run; re-tuning the constant rate "
                                                            "does better still")
    assert staleness.lr_rule_summary(["constant"], "no").endswith("not even when the setting changes and the rate "
                                                                   "is not re-tuned")
    with pytest.raises(ValueError, match="adapts"):
        staleness.lr_rule_summary(["constant"], "maybe")


def test_mean_rule_rate_matches_the_simulated_rule():
    """(1 + ln n)/n of the base rate: the mean of eta_0 / max(tau, 1) over a long asynchronous run."""
    run = staleness.sgd.simulate("async", 8, updates=20000, seed=1)
    measured = float((0.5 / np.maximum(run.staleness, 1)).mean())
    assert staleness.mean_rule_rate(0.5, 8) == pytest.approx(measured, rel=0.03)
    with pytest.raises(ValueError, match="workers"):
        staleness.mean_rule_rate(0.5, 2.5)
    with pytest.raises(ValueError, match="base"):
        staleness.mean_rule_rate(-1.0, 4)


def test_nk_agreement_on_a_small_run_and_bad_input():
    rows = staleness.staleness_vs_nk(workers=8, ks=(1, 4), updates=2000, seed=0)
    gaps = staleness.nk_agreement(rows)
    assert set(gaps) == {"k_batch_async", "k_async", "n/K", "n/K k_batch_async", "n/K k_batch_async least",
                         "n/K k_async", "n/K k_async least"}
    assert gaps["k_batch_async"] < 0.2 and gaps["k_async"] < 0.2   # simulation matches the exact means
    assert gaps["n/K"] >= 0.9                                       # the rule of thumb is off by about one
    # the exact means: n/K - 1 for K-async at every K; n/K - 1/K for K-batch-async, so 1 at K = 1 and 1/4 at K = 4
    assert gaps["n/K k_async"] == pytest.approx(1.0) and gaps["n/K k_async least"] == pytest.approx(1.0)
    assert gaps["n/K k_batch_async"] == pytest.approx(1.0) and gaps["n/K k_batch_async least"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="rows"):
        staleness.nk_agreement([])


def test_noise_gain_rows_and_words_over_the_learners():
    rows = staleness.noise_gain_rows({16: 0.05, 256: 0.025}, {"optimum": 0.219, "peak": 0.43}, updates=300_000)
    assert [(r["workers"], r["where"]) for r in rows] == [(16, "optimum"), (16, "peak"), (256, "optimum"), (256, "peak")]
    peak256 = rows[-1]
    assert peak256["frac"] > 1 and peak256["fixed"] == float("inf") and 2 < peak256["random"] < 6
    assert all(r["reach"] == pytest.approx(r["step"] * (r["workers"] - 1)) for r in rows)
    w = staleness.noise_gain_words(rows)
    assert w["agree"] == (16,) and w["part"] == (256,) and w["grows"] and w["reach_rises"]
    assert "far less" in w["words"] and "0.32" in w["words"] and "grows with" in w["short"]


def test_noise_gain_over_seeds_and_at_one_reach():
    # the same step times the mean staleness over several numbers of learners: the gain hardly depends on n
    same = staleness.noise_gain_rows({n: 0.69 / (n - 1) for n in (4, 64)}, {"same": 1.0}, updates=300_000,
                                     seeds=(0, 1))
    assert all(r["reach"] == pytest.approx(0.69) and len(r["randoms"]) == 2 for r in same)
    assert abs(same[0]["random"] / same[1]["random"] - 1) < 0.05
    w = staleness.noise_gain_words([{"workers": 16, "where": "p", "reach": 0.32, "fixed": 1.39, "random": 1.31},
                                    {"workers": 64, "where": "p", "reach": 0.69, "fixed": 2.13, "random": 1.67}],
                                   same_reach=same)
    assert w["n_free"] and "0.78 times" in w["words"]
    # at one reach, gains that part with the number of learners are not n-free
    parted = [{"workers": n, "reach": 0.69, "random": g} for n, g in ((4, 1.3), (64, 1.6))]
    assert staleness.noise_gain_words(w_rows := [{"workers": 16, "where": "p", "reach": 0.32, "fixed": 1.39,
                                                  "random": 1.31}], same_reach=parted)["n_free"] is False
    assert staleness.noise_gain_words(w_rows)["n_free"] is None          # no same-reach runs: not asked
    assert "far less" not in w["words"]
    assert staleness.mean_spread_text([2.34, 2.36, 2.32]) == "2.34 ± 0.02"
    with pytest.raises(ValueError):
        staleness.mean_spread_text([])
    with pytest.raises(ValueError):
        staleness.noise_gain_rows({16: 0.05}, {"optimum": 0.2}, updates=1000, seeds=())


@pytest.mark.parametrize("bad", [dict(rates={}), dict(curvatures={}), dict(rates={0: 0.05}), dict(rates={16: -1.0})])
def test_noise_gain_rows_refuses_bad_input(bad):
    args = {"rates": {16: 0.05}, "curvatures": {"optimum": 0.2}, **bad}
    with pytest.raises(ValueError):
        staleness.noise_gain_rows(**args, updates=1000)


def test_noise_gain_words_when_all_agree_or_all_part():
    agree = [{"workers": 4, "where": "peak", "reach": 0.1, "fixed": 1.1, "random": 1.05},
             {"workers": 16, "where": "peak", "reach": 0.3, "fixed": 1.4, "random": 1.3}]
    w = staleness.noise_gain_words(agree)
    assert w["part"] == () and "about as much" in w["short"] and "0.3" in w["words"]
    part = [{"workers": 64, "where": "peak", "reach": 1.4, "fixed": 9.6, "random": 2.3}]
    w = staleness.noise_gain_words(part)
    assert w["agree"] == () and "far less" in w["short"] and not w["grows"]
    with pytest.raises(ValueError):
        staleness.noise_gain_words([])


def test_noise_gain_words_give_the_range_of_the_ratios():
    # 1.35 and 1.4 both read 1.4 to two figures: the sentence gives the range of the ratios, not one of them
    rows = [{"workers": 16, "where": "p", "reach": 0.32, "fixed": 1.39, "random": 1.31},
            {"workers": 64, "where": "o", "reach": 0.69, "fixed": 2.13, "random": 1.68},
            {"workers": 64, "where": "p", "reach": 1.35, "fixed": 9.58, "random": 2.34},
            {"workers": 256, "where": "o", "reach": 1.4, "fixed": 11.6, "random": 2.39}]
    w = staleness.noise_gain_words(rows)
    assert "(0.21 to 0.79 times the fixed delay's gain)" in w["words"]


def test_random_noise_gains_are_computed_once_per_version_of_the_code(monkeypatch, tmp_path):
    """The gains are the model's, seed by seed; asked again (with the same code) they are read back exactly, not
    simulated again."""
    from commlib.sgd import stale_quadratic

    monkeypatch.setenv("GOTW_CLAIMS_CACHE", str(tmp_path))
    direct = tuple(stale_quadratic.random_staleness_noise_gain(0.05, 4, updates=5000, seed=x) for x in (0, 2))
    calls = []
    model = stale_quadratic.random_staleness_noise_gain
    monkeypatch.setattr(stale_quadratic, "random_staleness_noise_gain",
                        lambda *a, **kw: calls.append(kw["seed"]) or model(*a, **kw))
    assert staleness.random_noise_gains(0.05, 4, seeds=(0, 2), updates=5000) == direct and calls == [0, 2]
    assert staleness.random_noise_gains(0.05, 4, seeds=(0, 2), updates=5000) == direct and calls == [0, 2]
    assert staleness.random_noise_gains(0.05, 4, seeds=(2,), updates=5000) == direct[1:] and calls == [0, 2, 2]
    with pytest.raises(ValueError, match="step"):
        staleness.random_noise_gains(-0.1, 4)
    with pytest.raises(ValueError, match="seeds"):
        staleness.random_noise_gains(0.1, 4, seeds=(-1,))
