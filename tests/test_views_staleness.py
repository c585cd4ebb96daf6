"""Tests for commlib.experiments.staleness and commlib.staleness_views.staleness (chapter 5)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from commlib.experiments import staleness, summaries  # noqa: E402
from commlib.views import staleness as staleness_views  # noqa: E402


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
    """The chapter's runs have about 80 evaluations: the last quarter is about 20 of them, not exactly 20."""
    runs = staleness.lr_rule_runs(workers=4, updates=400, seed=0)
    for r in runs.values():
        keep = r.eval_times > 0.75 * r.times[-1]
        assert summaries.tail_mean(r) == pytest.approx(float(r.losses[keep].mean()))
        assert 0.2 < keep.mean() < 0.3


def test_staleness_figures_draw_the_runs():
    rows = staleness.staleness_vs_nk(workers=4, ks=(1, 4), updates=500, seed=0)
    fig = staleness_views.staleness_vs_nk_figure(rows, workers=4)
    labels = [ln.get_label() for ln in fig.get_axes()[0].get_lines()]
    assert "K-async: simulated" in labels and "N/K (Gupta et al.)" in labels
    runs = staleness.lr_rule_runs(workers=4, updates=200, seed=0)
    fig = staleness_views.lr_rule_figure(runs)
    assert len(fig.get_axes()[1].get_lines()) == len(runs)
    assert np.all(np.isfinite(fig.get_axes()[1].get_lines()[0].get_ydata()))
