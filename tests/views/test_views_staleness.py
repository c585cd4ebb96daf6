"""Tests for commlib.experiments.sgd.staleness and commlib.staleness_views.staleness (chapter 5)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from commlib.experiments.sgd import (
    staleness,
    summaries,  # noqa: E402
)
from commlib.views.sgd import staleness as staleness_views  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_staleness_vs_nk_matches_the_exact_means():
    rows = staleness.staleness_vs_nk(workers=8, ks=(1, 2, 8), updates=5000, seed=0)
    for r in rows:
        assert r["k_batch_async exact"] == pytest.approx((8 - 1) / r["K"])
        assert r["k_async exact"] == pytest.approx(8 / r["K"] - 1)
        assert r["k_batch_async"] == pytest.approx(r["k_batch_async exact"], abs=0.15)
        assert r["k_async"] == pytest.approx(r["k_async exact"], abs=0.15)


def test_tail_mean_differs_from_the_last_twenty_evaluations_on_a_long_run():
    """The chapter's runs have about 40 evaluations: the last quarter is about 10 of them, by wall clock."""
    sweep = staleness.rate_sweep("constant", (0.1, 0.05), workers=4, updates=400, seed=0)
    for r, loss in zip(sweep.runs, sweep.losses):
        keep = r.eval_times > 0.75 * r.times[-1]
        assert summaries.tail_mean(r) == pytest.approx(float(r.losses[keep].mean())) == pytest.approx(loss)
        assert 0.15 < keep.mean() < 0.35


@pytest.fixture(scope="module")
def small_study():
    return staleness.lr_rule_study(workers=4, updates=200, seed=0, rates=(0.5, 0.05), bases=(0.5, 0.1),
                                   caps=(0.5, 0.05), control=(0.5, 0.05))


def test_staleness_figures_draw_the_runs(small_study):
    rows = staleness.staleness_vs_nk(workers=4, ks=(1, 4), updates=500, seed=0)
    fig = staleness_views.staleness_vs_nk_figure(rows, workers=4)
    labels = [ln.get_label() for ln in fig.get_axes()[0].get_lines()]
    assert "K-async: simulated" in labels and "n/K (Gupta et al.)" in labels
    fig = staleness_views.lr_rule_figure(small_study)
    left, right = fig.get_axes()
    assert len(left.get_lines()) == 4                                # three rules and the control, at the shared rate
    colours = {ln.get_label().split(",")[0].split(" =")[0]: ln.get_color() for ln in left.get_lines()}
    right_colours = {ln.get_label().split(",")[0]: ln.get_color() for ln in right.get_lines()
                     if not ln.get_label().startswith("_")}
    assert colours["constant η"] == right_colours["constant rate η"] == colours["one learner"]  # one colour, one rule
    assert len(set(colours.values())) == 3
    assert all(np.all(np.isfinite(ln.get_ydata())) for ln in left.get_lines())
    curves = [ln for ln in right.get_lines() if not ln.get_label().startswith("_")]
    assert len(curves) == 4                                          # one labelled line per sweep
    y = curves[0].get_ydata()
    assert list(y) == pytest.approx(list(small_study.sweeps["constant"].losses))
    assert [t.get_text() for t in right.get_xticklabels()] == ["0.05", "0.1", "0.5"]


def test_stalls_and_downpour_figures():
    study = staleness.lr_rule_study(workers=4, updates=200, seed=0, nominal=None, rates=(0.1, 0.05), bases=(0.1,),
                                    caps=None, control=None, comm_time=staleness.Stalls(0.05, 10.0))
    with pytest.raises(ValueError, match="nominal"):
        staleness_views.lr_rule_figure(study)
    fig = staleness_views.stalls_figure(study)
    assert len([ln for ln in fig.get_axes()[0].get_lines() if not ln.get_label().startswith("_")]) == 2
    dp = staleness.downpour_study(workers=4, shards=2, updates=200, sgd_rates=(0.5, 0.05), adagrad_rates=(0.5, 0.1))
    fig = staleness_views.downpour_figure(dp, nominal=0.5)
    labels = [ln.get_label() for ln in fig.get_axes()[0].get_lines()]
    assert labels == ["SGD, rate 0.5", f"SGD, best rate {dp['SGD'].best_value:g}", "Adagrad, rate 0.5",
                      f"Adagrad, best rate {dp['Adagrad'].best_value:g}"]


def test_stable_step_table_sets_the_roots_beside_the_closed_form():
    from commlib.views.sgd import staleness as views

    table = views.stable_step_table((0, 1, 2)).data
    assert "| 0 | 2.000 | 2.000 | 3.142 |" in table and "| 1 | 1.000 | 1.000 | 1.047 |" in table
    assert "| 2 | 0.618 | 0.618 | 0.628 |" in table


def test_noise_gain_figure_draws_one_line_per_delay_and_refuses_bad_input():
    fig = staleness_views.noise_gain_figure((1, 4, 15), fractions=(0.1, 0.5, 0.8), marks={"tuned": (0.2, 1.4)})
    lines = [ln for ln in fig.axes[0].lines if ln.get_label().startswith("gradient always")]
    assert len(lines) == 3 and len({ln.get_linestyle() for ln in lines}) == 3
    # the gains rise towards the limit, and at half of it they nearly coincide (about 1.8 to 2.4)
    for ln in lines:
        y = ln.get_ydata()
        assert y[0] < y[1] < y[2] and 1.5 < y[1] < 2.5
    with pytest.raises(ValueError, match="fractions"):
        staleness_views.noise_gain_figure(fractions=(0.5, 1.0))
    with pytest.raises(ValueError, match="taus"):
        staleness_views.noise_gain_figure(taus=(-1,))


def test_noise_gain_table_marks_a_fixed_delay_past_its_limit():
    rows = [{"workers": 256, "rate": 0.025, "where": "peak", "step": 0.011, "reach": 2.7, "frac": 1.7,
             "fixed": float("inf"), "random": 3.7}]
    last = staleness_views.noise_gain_table(rows).data.splitlines()[-1]
    assert "unbounded" in last and "3.7" in last
