"""Tests for commlib.views.sgd: job timelines match the simulator, figures and calculators are built from it.

The job reconstruction is held against commlib.sgd.simulate (update times,
contributors and staleness must be identical); figure tests check what the
reader sees (bars, labels, legend entries) rather than pixels.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from commlib import hardware, overlap, sgd  # noqa: E402
from commlib.views import sgd as views  # noqa: E402

PROTOCOLS = [("sync", None), ("k_sync", 2), ("k_batch_sync", 3), ("async", None), ("k_async", 2),
             ("k_batch_async", 3)]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _by_update(jobs, updates):
    contrib = [[] for _ in range(updates)]
    stale = []
    for j in jobs:
        if j.status == "applied":
            contrib[j.update].append(j.worker)
            stale.append(j.staleness)
    return contrib, stale


@pytest.mark.parametrize("protocol, k", PROTOCOLS)
@pytest.mark.parametrize("compute, params", [("exponential", {}), ("pareto", {}),
                                             ("straggler", {"slowdown": 3.0})])
def test_jobs_replay_the_simulator_exactly(protocol, k, compute, params):
    updates = 40
    jobs = views.protocol_jobs(protocol, 5, k, compute, updates, seed=4, **params)
    r = sgd.simulate(protocol, 5, k=k, compute=compute, updates=updates, seed=4, **params)
    np.testing.assert_allclose(views._update_times(jobs), r.times, rtol=1e-12)
    contrib, stale = _by_update(jobs, updates)
    assert [sorted(c) for c in contrib] == [sorted(row) for row in r.contributors.tolist()]
    assert sorted(stale) == sorted(r.staleness.tolist())


@settings(max_examples=15, deadline=None)
@given(P=st.integers(1, 6), data=st.data(), seed=st.integers(0, 50))
def test_job_invariants(P, data, seed):
    protocol, k = data.draw(st.sampled_from(PROTOCOLS))
    k = None if k is None else min(k, P)
    jobs = views.protocol_jobs(protocol, P, k, "exponential", 10, seed=seed)
    for j in jobs:
        assert j.end >= j.start >= 0
        assert j.status in ("applied", "cancelled")
    for w in range(P):   # a learner runs one job at a time
        mine = sorted((j.start, j.end) for j in jobs if j.worker == w)
        for (s0, e0), (s1, e1) in zip(mine, mine[1:]):
            assert s1 >= e0 - 1e-12
    if protocol in ("async", "k_async", "k_batch_async"):
        assert all(j.status == "applied" for j in jobs)       # asynchronous protocols never cancel
    else:
        assert all(j.staleness == 0 for j in jobs)             # synchronous protocols are never stale


def test_k_sync_cancels_exactly_p_minus_k_per_round():
    jobs = views.protocol_jobs("k_sync", 6, 2, "exponential", 5, seed=1)
    for u in range(5):
        mine = [j for j in jobs if j.update == u]
        assert sum(j.status == "cancelled" for j in mine) == 4
        assert sum(j.status == "applied" for j in mine) == 2


def test_protocol_jobs_rejects_bad_input():
    with pytest.raises(ValueError, match="protocol"):
        views.protocol_jobs("gossip", 4)
    with pytest.raises(ValueError, match="k"):
        views.protocol_jobs("k_sync", 4, k=9)


def test_timeline_figure_has_six_panels_and_a_legend():
    fig = views.protocol_timeline_figure(workers=3, k=2, seed=0)
    axes = fig.get_axes()
    assert len(axes) == 6
    titles = [ax.get_title(loc="left") for ax in axes]
    assert titles[0].startswith("fully synchronous") and "K-batch-async" in titles[-1]
    # the synchronous panel stops at its third update (the picture's right edge)
    assert titles[0].endswith(": 3 updates")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "cancelled" in labels and "gradient applied (stale)" in labels


def test_timeline_animation_is_an_offline_player():
    html = views.protocol_timeline_animation(workers=3, k=2, seed=0, frames=3, dpi=30).data
    assert html.count('class="gotw-frame"') == 3
    assert "http" not in html.split("<script>")[0]     # no network resources


def test_runtime_ratio_rows_hold_the_closed_form():
    rows = views.runtime_ratio_rows(Ps=(2, 8), trials=3000, seed=0)
    for r in rows:
        harmonic = sum(1 / i for i in range(1, r["P"] + 1))
        assert r["closed form"] == pytest.approx(r["P"] * harmonic)
        assert abs(r["relative gap"]) < 0.05
    table = views.runtime_ratio_table(rows).data
    assert "P ln P" in table and table.count("\n") == 3


def test_staleness_vs_nk_matches_the_exact_means():
    rows = views.staleness_vs_nk(workers=8, ks=(1, 2, 8), updates=5000, seed=0)
    for r in rows:
        assert r["k_batch_async exact"] == pytest.approx((8 - 1) / r["K"])
        assert r["k_async exact"] == pytest.approx(8 / r["K"] - 1)
        assert r["k_batch_async"] == pytest.approx(r["k_batch_async exact"], abs=0.15)
        assert r["k_async"] == pytest.approx(r["k_async exact"], abs=0.15)


def test_equal_time_runs_share_the_wall_clock_budget():
    runs = views.equal_time_runs([("sync", None), ("async", None)], workers=4, budget=40.0, seed=0)
    sync, asyn = runs.values()
    assert asyn.updates > 4 * sync.updates                      # async makes many more updates
    for r in runs.values():
        assert r.times[-1] == pytest.approx(40.0, rel=0.5)      # both ran about as long


def test_scaling_table_and_figure():
    from commlib import scaling

    m = scaling.ring_weak_scaling("resnet50", 4, 1.25e9, 0.1, 32)
    table = views.scaling_table({"fast": m}).data
    assert "T(4) (ms)" in table and f"{100 * m.efficiency:.1f} %" in table
    fig = views.scaling_figure(ns=(1, 2, 4))
    left = fig.get_axes()[0]
    fast_line = left.get_lines()[0]
    assert fast_line.get_ydata()[0] == pytest.approx(100.0)     # one GPU is 100 % efficient


def test_sgd_calculator_reports_time_and_staleness():
    box = views.sgd_calculator(protocol="async", workers=4, k=1, updates=400)
    calc = box.calculator
    assert calc.error is None
    # async: mean staleness about P - 1, time per update about 1/P
    assert float(calc.results["mean staleness"].split()[0]) == pytest.approx(3.0, abs=0.5)
    assert float(calc.results["mean time per update"].split()[0]) == pytest.approx(0.25, rel=0.3)
    assert box.children[1].value[:4] == b"\x89PNG"
    calc.set(k=9, protocol="k_sync")
    assert calc.error is not None and "K" in calc.error


def test_overlap_calculator_and_bad_input():
    calc = views.overlap_calculator(model="resnet50", n=8, link="eth_25g")
    assert calc.error is None and "%" in calc.results["hidden behind backward"]
    calc.set(bucket_mib=-1.0)
    assert "bucket_mib" in calc.error
    calc.set(bucket_mib=25.0, tflops=0.0)
    assert "tflops" in calc.error


def test_overlap_figure_and_bucket_table_agree_with_the_cost_model():
    link = hardware.LINKS["eth_25g"]
    r = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency, t_backward=0.05)
    table = views.bucket_table(r, 16, link.bandwidth, link.latency).data
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[-1] == cells[-2]           # timeline duration == ring formula, to the printed digit
    fig = views.overlap_figure(r)
    ax = fig.get_axes()[0]
    assert [t.get_text() for t in ax.get_yticklabels()][1].startswith("all-reduce")


def test_bucket_sweep_figure_draws_one_marker_per_positive_cap():
    fig = views.bucket_sweep_figure([0, 1, 25, 100], latencies=(1e-5,), model="alexnet", n=4, bandwidth=1e9,
                                    t_backward=0.05)
    line = fig.get_axes()[0].get_lines()[0]
    assert list(line.get_xdata()) == [1.0, 25.0, 100.0]


def test_large_batch_runs_use_the_linear_rule():
    runs = views.large_batch_runs(k=4, epochs=1.0)
    labels = list(runs)
    assert "rate 0.4 (linear rule)" in labels[2]
    lrs = [r.lrs for r in runs.values()]
    assert lrs[1][-1] == pytest.approx(0.1) and lrs[2][-1] == pytest.approx(0.4)
    assert lrs[3][1] < lrs[3][-1] == pytest.approx(0.4)   # warm-up starts low and ends at the scaled rate
