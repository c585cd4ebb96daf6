"""Tests for the runs of commlib.experiments.sgd.sync_async that chapter 4's figures take as input.

The timelines, the runtime-ratio curves and the K sweep used to be run inside
the figures; here they are checked as results: what each run records is
consistent with itself and with the theory the chapter states next to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from commlib.experiments.sgd import sync_async
from commlib.sgd import simulate as sgd

# ----------------------------------------------------------------------------- protocol timelines


@pytest.mark.parametrize("workers, k, seed, compute", [(4, 2, 3, "exponential"), (5, 3, 1, "pareto")])
def test_protocol_timelines_jobs_agree_with_the_update_times(workers, k, seed, compute):
    """Every applied job ends at the time of the update that applied it; a cancelled one at the update that
    stopped it; the picture ends at the ``updates``-th synchronous update and every run reaches it."""
    tl = sync_async.protocol_timelines(workers=workers, k=k, compute=compute, updates=3, seed=seed)
    assert tl.workers == workers
    assert [t.protocol for t in tl.timelines] == [p for p, _ in sync_async.TIMELINE_PROTOCOLS]
    sync = sgd.simulate("sync", workers, compute=compute, updates=3, seed=seed)
    assert tl.t_max == sync.times[-1]
    for t in tl.timelines:
        assert t.k == (k if t.protocol not in ("sync", "async") else None)
        assert t.times[-1] >= tl.t_max
        assert list(t.times) == sorted(t.times)
        per_update = np.zeros(len(t.times), dtype=int)
        last_arrival = np.full(len(t.times), -np.inf)
        for j in t.jobs:
            assert 0 <= j.worker < workers and j.start <= j.end
            if j.status == "cancelled":
                assert j.end == t.times[j.update]                # stopped by that very update
            elif j.status == "applied":
                per_update[j.update] += 1
                assert j.end <= t.times[j.update]                # arrived at or before its update
                last_arrival[j.update] = max(last_arrival[j.update], j.end)
            else:
                assert j.end >= t.times[-1]                      # still computing when the run stopped
        # no communication time: each update happens the moment its last gradient arrives
        np.testing.assert_array_equal(last_arrival, np.asarray(t.times))
        # each update applies K gradients (all P for sync, 1 for async)
        expected = {"sync": workers, "async": 1}.get(t.protocol, k)
        assert np.all(per_update == expected)


def test_protocol_timelines_runs_are_prefixes_of_longer_runs():
    """The doubling loop relies on it: the same seed with more updates repeats the first updates exactly."""
    tl = sync_async.protocol_timelines(workers=3, k=2, seed=0)
    for t in tl.timelines:
        longer = sgd.simulate(t.protocol, 3, k=t.k, updates=4 * len(t.times), seed=0)
        np.testing.assert_array_equal(np.asarray(t.times), longer.times[:len(t.times)])


def test_protocol_timelines_with_a_later_right_edge():
    tl = sync_async.protocol_timelines(workers=3, k=2, seed=0, t_max=12.0)
    assert tl.t_max == 12.0
    assert all(t.times[-1] >= 12.0 for t in tl.timelines)


def test_protocol_timelines_reject_bad_input():
    with pytest.raises(ValueError, match="k"):
        sync_async.protocol_timelines(workers=4, k=9)
    with pytest.raises(ValueError, match="t_max"):
        sync_async.protocol_timelines(workers=4, k=2, t_max=-1.0)
    with pytest.raises(ValueError, match="distribution"):
        sync_async.protocol_timelines(workers=4, k=2, compute="gamma")


# ----------------------------------------------------------------------------- runtime ratio against P


def test_runtime_ratio_curves_closed_forms_and_monte_carlo_agree():
    """Exponential: the closed form is P H_P; with many trials the simulated ratio is within 3 % of it."""
    c = sync_async.runtime_ratio_curves(Ps=(2, 8), trials=20_000, seed=0, straggler=None)
    assert c.grid == tuple(range(1, 9))
    assert set(c.closed_form) == set(sync_async.RUNTIME_RATIO_LAWS) == set(c.simulated)
    for P, ratio in zip(c.grid, c.closed_form["exponential"]):
        assert ratio == pytest.approx(P * sum(1 / i for i in range(1, P + 1)))
    for law in c.laws:
        for P, mc in zip(c.Ps, c.simulated[law]):
            assert mc == pytest.approx(c.closed_form[law][P - 1], rel=0.03), (law, P)
    assert c.straggler is None and c.straggler_simulated is None


def test_runtime_ratio_curves_straggler_costs_sync_more_than_iid_noise():
    c = sync_async.runtime_ratio_curves(Ps=(1, 2, 4), trials=4000, seed=0)
    assert c.straggler == sync_async.STRAGGLER_LAW
    one, two, four = c.straggler_simulated
    assert one == pytest.approx(1.0, abs=0.05)          # one learner: sync and async are the same
    assert two == pytest.approx(5.25, rel=0.05)         # worked out by hand in test_views_sync_async
    assert four > sgd.runtime_ratio(4, "exponential")


def test_runtime_ratio_curves_reject_bad_input():
    with pytest.raises(ValueError, match="Ps"):
        sync_async.runtime_ratio_curves(Ps=(0, 2))
    with pytest.raises(ValueError, match="Ps"):
        sync_async.runtime_ratio_curves(Ps=())
    with pytest.raises(ValueError, match="trials"):
        sync_async.runtime_ratio_curves(Ps=(2,), trials=0)


# ----------------------------------------------------------------------------- K sweep


def test_k_sweep_runs_ends_are_async_and_sync_and_match_the_theory():
    sweep = sync_async.k_sweep_runs(workers=4, ks=(1, 2, 4), updates=4000, gradients=80)
    assert sweep.protocol == "k_async" and sweep.workers == 4
    assert [(p.k, p.protocol) for p in sweep.points] == [(1, "async"), (2, "k_async"), (4, "sync")]
    for p in sweep.points:
        # exponential compute times: mean staleness P/K - 1 for K-async (P - 1 for async), 0 for sync
        assert p.timing.staleness.mean() == pytest.approx(sgd.expected_staleness(p.protocol, 4, p.k), abs=0.1)
        # the training run replays the timing run's schedule: its update times are a prefix
        n = p.trained.updates
        np.testing.assert_array_equal(p.trained.times, p.timing.times[:n])
        assert n * p.timing.k <= 80 or n == 1


def test_k_sweep_runs_reject_bad_input():
    with pytest.raises(ValueError, match="K"):
        sync_async.k_sweep_runs(workers=4, ks=(1, 5))
    with pytest.raises(ValueError, match="ks"):
        sync_async.k_sweep_runs(workers=4, ks=())
    with pytest.raises(ValueError, match="protocol"):
        sync_async.k_sweep_runs(protocol="gossip", workers=4, ks=(2,), updates=10, gradients=10)


# ----------------------------------------------------------------------------- weak scaling, two GPU speeds


def test_weak_scaling_curves_slow_gpu_scales_better_but_stays_slower():
    from commlib import hardware
    from commlib.sgd import scaling

    c = sync_async.weak_scaling_curves("resnet50", "eth_10g", ns=(1, 4, 16), t_fast=0.1, slowdown=3.0, batch=32)
    assert list(c.curves) == ["fast GPU", "GPU 3x slower"] and c.ns == (1, 4, 16)
    fast, slow = c.curves.values()
    link = hardware.link("eth_10g")
    assert slow[2] == scaling.ring_weak_scaling("resnet50", 16, link.bandwidth, 0.1 * 3.0, 32, latency=link.latency)
    assert fast[0].efficiency == slow[0].efficiency == 1.0          # one GPU: nothing to communicate
    for f, s in zip(fast[1:], slow[1:]):
        assert s.efficiency > f.efficiency and s.throughput_many < f.throughput_many


def test_weak_scaling_curves_reject_bad_input():
    with pytest.raises(ValueError, match="slowdown"):
        sync_async.weak_scaling_curves(slowdown=0.0)
    with pytest.raises(ValueError):
        sync_async.weak_scaling_curves(link="no_such_link")


# ----------------------------------------------------------------------------- keeping the running work


def test_kept_work_left_is_a_fresh_job_under_memoryless_times_and_more_under_a_heavy_tail():
    """Under exponential times a job K-async keeps needs a fresh job's mean; under the heavier Pareto law the kept
    jobs are the slow ones and need far more than a fresh job, though K-async still wins at small K."""
    exp = sync_async.keep_or_cancel("exponential", 4, updates=3000, seeds=(0, 1, 2))
    assert exp.kept_left[0] == pytest.approx(1.0, rel=0.1) and exp.verdict == "level"
    assert exp.cancel_closed == pytest.approx(sgd.expected_order_statistic(4, 16, "exponential", rate=1.0))
    heavy = sync_async.keep_or_cancel("pareto_heavy", 4, updates=3000, seeds=(0,))
    assert heavy.kept_left[0] > 3 * heavy.fresh and heavy.verdict == "pays"


def test_keep_or_cancel_pays_under_the_shifted_exponential_and_loses_under_the_heavier_pareto_law():
    """A minimum compute time is not enough: both laws have one, keeping pays under one and loses under the other."""
    rows = sync_async.keep_rows(("shifted_exponential", "pareto_heavy"), ks=(8, 12), updates=3000, seeds=(0, 1))
    assert [r.verdict for r in rows] == ["pays", "pays", "loses", "loses"]
    names = {"shifted_exponential": "SE", "pareto_heavy": "heavy"}
    assert sync_async.keep_pays_words(rows, names) == ("keeping the running work makes updates faster at every $K$ "
                                                       "tried under SE; slower at every $K$ tried under heavy")
    assert sync_async.minimum_not_enough(rows, names).endswith("at $K$ = 8 and 12; that law was not raced")
    assert sync_async.minimum_not_enough(rows, names, raced=("pareto_heavy",)).endswith("at $K$ = 8 and 12")
    assert "speed up updates at a fixed $K$" in sync_async.minimum_not_enough(rows, names)
    assert sync_async.minimum_not_enough(rows[:2], names).startswith("Under every law with a minimum")
    assert "less than a fresh job (2.000 s) on both seeds" in sync_async.kept_state_words(rows[0], "SE")
    assert " ± " in sync_async.kept_left_text(rows[0])


def test_keep_or_cancel_is_the_recorded_runs_seed_by_seed():
    """The fast path (job spans, each seed kept for the process) gives exactly what the recorded runs give, whatever
    the order of the seeds and whether a seed was asked for before."""
    law, k = "pareto", 8
    compute, params = sync_async.KEEP_LAWS[law]
    seeds = (3, 1, 3)
    row = sync_async.keep_or_cancel(law, k, updates=600, seeds=seeds)
    runs = [sgd.simulate("k_async", 16, k=k, compute=compute, updates=600, seed=s, record_jobs=True, **params)
            for s in seeds]
    assert row.keep == tuple(r.mean_time_per_update for r in runs)
    assert row.kept_left == tuple(sync_async.kept_work_left(r, burn=60) for r in runs)
    assert row.cancel == tuple(sgd.simulate("k_sync", 16, k=k, compute=compute, updates=600, seed=s,
                                            **params).mean_time_per_update for s in seeds)
    assert row.keep[0] != row.keep[1] and sync_async.keep_or_cancel(law, k, updates=600, seeds=(1,)).keep == row.keep[1:2]


def test_keep_or_cancel_rejects_bad_input():
    with pytest.raises(ValueError, match="law"):
        sync_async.keep_or_cancel("gamma", 4)
    with pytest.raises(ValueError, match="k"):
        sync_async.keep_or_cancel("exponential", 17)
    with pytest.raises(ValueError, match="seeds"):
        sync_async.keep_or_cancel("exponential", 4, seeds=())
    with pytest.raises(ValueError, match="seed"):
        sync_async.keep_or_cancel("exponential", 4, seeds=(-1,))
    with pytest.raises(ValueError, match="record_jobs"):
        sync_async.kept_work_left(sgd.simulate("k_async", 4, k=2, updates=10))


def test_law_spread_and_the_pareto_tail():
    """The spread relative to the mean does not depend on the unit; the Pareto tail of index 2.5 is above the
    exponential's of the same mean only far out, and a heavier tail crosses sooner."""
    assert sync_async.law_spread("exponential", rate=5.0) == 1.0
    assert sync_async.law_spread("pareto", shape=2.5, scale=3.0) == pytest.approx(sync_async.law_spread("pareto", shape=2.5, scale=1.0))
    with pytest.raises(ValueError, match="law"):
        sync_async.law_spread("gamma")
    t = sync_async.pareto_tail_against_exponential(2.5)
    m = 2.5 / 1.5
    u = t["beyond"]
    assert (u * m) ** -2.5 == pytest.approx(np.exp(-u), rel=1e-6)                 # the tails meet there
    assert ((u + 1) * m) ** -2.5 > np.exp(-(u + 1)) and (3 * m) ** -2.5 < np.exp(-3)
    assert sync_async.pareto_tail_against_exponential(1.5)["beyond"] < u
    with pytest.raises(ValueError, match="shape"):
        sync_async.pareto_tail_against_exponential(1.0)
