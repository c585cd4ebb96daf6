"""Tests for commlib.sgd.simulate: the event-driven simulator of synchronous and asynchronous SGD.

Expectations are derived here independently of the implementation:
a naive reference simulator (linear scans, explicit learner states) for the
schedules, order-statistics algebra and numerical integration for the
runtime theorem, and renewal / geometric arguments for staleness.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from commlib.sgd import simulate as sgd
from commlib.sgd.simulate import (
    PROTOCOLS,
    expected_max,
    expected_order_statistic,
    expected_staleness,
    expected_update_time,
    monte_carlo_runtime_ratio,
    runtime_ratio,
    simulate,
)
from commlib.sgd.training import make_problem

# --------------------------------------------------------------------------- reference simulator


def _durations(P, seed, n, compute="exponential", **params):
    """Each learner's job durations, in order (white box: the simulator's own per-learner streams)."""
    streams = sgd._Streams(P, seed, compute, sgd._dist_params(compute, params), 0.0)
    return [list(streams.take(w, n)) for w in range(P)]


def _reference(protocol, P, K, U, dur):
    """The protocols of Dutta et al. (2018) written as plainly as possible: O(P) scans, no heap."""
    pos = [0] * P

    def draw(w):
        pos[w] += 1
        return dur[w][pos[w] - 1]

    times, stale, contrib = [], [], []
    if protocol in ("sync", "k_sync", "k_batch_sync"):
        t0 = 0.0
        for _ in range(U):
            busy = [t0 + draw(w) for w in range(P)]
            got = 0
            while got < K:
                w = min(range(P), key=lambda i: (busy[i], i))
                t = busy[w]
                contrib.append(w)
                stale.append(0)
                got += 1
                if protocol == "k_batch_sync" and got < K:
                    busy[w] = t + draw(w)  # next mini-batch on the same parameters (not after the K-th)
                else:
                    busy[w] = math.inf  # done for this round
            times.append(t)
            t0 = t  # the rest is cancelled
        return np.array(times), np.array(stale), np.array(contrib).reshape(U, K)
    version, read, busy = 0, [0] * P, [draw(w) for w in range(P)]
    waiting, count = [], 0
    while len(times) < U:
        w = min(range(P), key=lambda i: (busy[i], i))
        t = busy[w]
        stale.append(version - read[w])
        contrib.append(w)
        if protocol == "k_async":
            waiting.append(w)
            busy[w] = math.inf
            if len(waiting) == K:
                version += 1
                times.append(t)
                for u in waiting:
                    read[u] = version
                    busy[u] = t + draw(u)
                waiting = []
        else:  # async, k_batch_async: the learner fetches whatever the PS holds and goes on
            count += 1
            if count == K:
                version += 1
                times.append(t)
                count = 0
            read[w] = version
            busy[w] = t + draw(w)
    return np.array(times), np.array(stale), np.array(contrib).reshape(U, K)


@settings(max_examples=40, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    P=st.integers(1, 7),
    kfrac=st.floats(0, 1),
    seed=st.integers(0, 10_000),
    compute=st.sampled_from(["exponential", "pareto", "shifted_exponential"]),
)
def test_schedule_matches_the_plain_reference(protocol, P, kfrac, seed, compute):
    K = {"sync": P, "async": 1}.get(protocol, 1 + int(kfrac * (P - 1)))
    U = 40
    r = simulate(protocol, P, k=None if protocol in ("sync", "async") else K, compute=compute, updates=U, seed=seed)
    times, stale, contrib = _reference(protocol, P, K, U, _durations(P, seed, U * (K + 1) + 5, compute))
    assert np.allclose(r.times, times, rtol=1e-12, atol=0)
    assert np.array_equal(r.staleness, stale)
    assert np.array_equal(r.contributors, contrib)
    assert np.all(r.gradients_per_update == K)
    assert np.all(np.diff(r.times) >= 0)


# --------------------------------------------------------------------------- reproducibility, reductions


@pytest.mark.parametrize("protocol, k", [("sync", None), ("k_sync", 2), ("k_batch_sync", 3), ("async", None),
                                         ("k_async", 2), ("k_batch_async", 3)])
def test_same_seed_same_run_bit_for_bit(protocol, k):
    p = make_problem(seed=0, n_train=300, n_test=100)
    a = simulate(protocol, 4, k=k, updates=60, seed=7, problem=p, batch_size=4)
    b = simulate(protocol, 4, k=k, updates=60, seed=7, problem=p, batch_size=4)
    for field in ("times", "staleness", "contributors", "errors", "losses", "w"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    c = simulate(protocol, 4, k=k, updates=60, seed=8)
    assert not np.array_equal(a.times, c.times)


@settings(max_examples=25, deadline=None)
@given(P=st.integers(1, 10), seed=st.integers(0, 10_000))
def test_k_equal_p_is_fully_sync_and_k_one_is_async(P, seed):
    """Note 002: K-sync with K = P is fully sync; K-async with K = 1 is async and with K = P fully sync."""
    sync = simulate("sync", P, updates=50, seed=seed)
    assert np.array_equal(simulate("k_sync", P, k=P, updates=50, seed=seed).times, sync.times)
    k_async_p = simulate("k_async", P, k=P, updates=50, seed=seed)  # a different event loop
    assert np.allclose(k_async_p.times, sync.times, rtol=1e-12)
    assert np.all(k_async_p.staleness == 0)
    asyn = simulate("async", P, updates=50, seed=seed)
    for other in (simulate("k_async", P, k=1, updates=50, seed=seed),
                  simulate("k_batch_async", P, k=1, updates=50, seed=seed)):
        assert np.array_equal(other.times, asyn.times)
        assert np.array_equal(other.staleness, asyn.staleness)


# --------------------------------------------------------------------------- staleness (Gupta et al. 2016)


@pytest.mark.parametrize("P, K", [(8, 1), (16, 4), (12, 3), (10, 5)])
def test_mean_staleness_k_async_exponential(P, K):
    """K-async, exponential times: mean staleness P/K - 1, i.e. N/K counted with the applying update.

    Derivation: after every update all P learners are busy and, by memorylessness,
    the next K to finish are a uniform random K-subset. A gradient therefore waits a
    geometric number G of updates (success probability K/P, mean P/K); G - 1 of them
    happen before the one that applies it. Gupta et al.'s "N/K steps out of date"
    counts G. Tolerance: 3 % of P/K (the standard error over 10^4 updates is < 1 %).
    """
    r = simulate("k_async", P, k=K, updates=10_000, seed=11)
    expected = P / K - 1
    assert abs(r.staleness.mean() - expected) <= 0.03 * P / K
    assert abs((r.staleness + 1).mean() - P / K) <= 0.03 * P / K  # Gupta et al.'s N/K
    assert expected_staleness("k_async", P, K) == pytest.approx(expected)


@pytest.mark.parametrize("P, K", [(16, 4), (30, 10), (8, 8)])
def test_mean_staleness_k_batch_async_exponential(P, K):
    """K-batch-async (Gupta's n-softsync, n = P/K): mean staleness (P-1)/K, within 1/K of N/K.

    While one learner computes (mean 1/mu) the other P-1 push (P-1) gradients on
    average, (P-1)/K updates. Tolerance 3 % of P/K + 0.02.
    """
    r = simulate("k_batch_async", P, k=K, updates=10_000, seed=12)
    assert abs(r.staleness.mean() - (P - 1) / K) <= 0.03 * P / K + 0.02
    assert abs(r.staleness.mean() - P / K) <= 1 / K + 0.03 * P / K + 0.02


# --------------------------------------------------------------------------- runtime theorem


@pytest.mark.parametrize("P", [1, 2, 4, 8, 16])
def test_runtime_ratio_exponential_is_p_times_harmonic(P):
    h = sum(Fraction(1, i) for i in range(1, P + 1))
    assert runtime_ratio(P, "exponential", rate=3.0) == pytest.approx(float(P * h), rel=1e-12)


def test_runtime_ratio_twenty_learners_is_about_72_not_100():
    """Note 002 says async runs ~100 iterations while sync waits for 20 learners; P H_P = 71.95."""
    assert runtime_ratio(20) == pytest.approx(71.95, abs=0.01)


@pytest.mark.parametrize("P", [2, 4, 8, 16])
def test_monte_carlo_ratio_agrees_with_p_harmonic(P):
    """Tolerance 3 %: the standard error of the ratio with 20,000 sync rounds is below 0.8 %."""
    mc = monte_carlo_runtime_ratio(P, "exponential", trials=20_000, seed=P)
    assert mc == pytest.approx(P * sum(1 / i for i in range(1, P + 1)), rel=0.03)


def test_monte_carlo_ratio_shifted_exponential():
    P, shift, rate = 6, 0.5, 2.0
    expected = P * (shift + sum(1 / i for i in range(1, P + 1)) / rate) / (shift + 1 / rate)
    assert runtime_ratio(P, "shifted_exponential", shift=shift, rate=rate) == pytest.approx(expected)
    mc = monte_carlo_runtime_ratio(P, "shifted_exponential", trials=20_000, seed=3, shift=shift, rate=rate)
    assert mc == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize("n, shape", [(1, 2.5), (5, 2.5), (12, 1.5)])
def test_pareto_expected_max_by_numerical_integration(n, shape):
    """E[max] = integral of P(max > x) = x_m + int_{x_m}^inf 1 - (1 - (x_m/x)^a)^n dx."""
    xm = 2.0
    tail, _ = integrate.quad(lambda x: 1 - (1 - (xm / x) ** shape) ** n, xm, np.inf, limit=200)
    assert expected_max(n, "pareto", shape=shape, scale=xm) == pytest.approx(xm + tail, rel=1e-6)


@pytest.mark.parametrize("k, n, dist, params", [(3, 7, "exponential", {"rate": 2.0}),
                                                 (2, 5, "pareto", {"shape": 3.0, "scale": 1.0}),
                                                 (4, 4, "shifted_exponential", {"shift": 1.0, "rate": 0.5})])
def test_order_statistic_by_sampling(k, n, dist, params):
    rng = np.random.default_rng(0)
    draws = sgd._draw(dist, sgd._dist_params(dist, params), rng, 200_000 * n).reshape(-1, n)
    sample = np.sort(draws, axis=1)[:, k - 1].mean()
    assert expected_order_statistic(k, n, dist, **params) == pytest.approx(sample, rel=0.01)


@pytest.mark.parametrize("protocol, k", [("sync", None), ("k_sync", 3), ("k_batch_sync", 3), ("async", None),
                                         ("k_async", 3), ("k_batch_async", 3)])
def test_time_per_update_matches_closed_form(protocol, k):
    """Exponential times, rate 2/s: K-th order statistic for (K-)sync and K-async, K/(P mu) for K-batch."""
    r = simulate(protocol, 6, k=k, updates=20_000, seed=5, rate=2.0)
    assert r.mean_time_per_update == pytest.approx(expected_update_time(protocol, 6, k, rate=2.0), rel=0.03)
    assert r.throughput == pytest.approx(1 / r.mean_time_per_update)


# --------------------------------------------------------------------------- distributions and communication


def test_deterministic_times_and_constant_communication():
    """Each job is pull + compute + push: 1.0 s compute and 0.25 s per transfer give 1.5 s per round."""
    s = simulate("sync", 3, compute="deterministic", time=1.0, comm_time=0.25, updates=10)
    assert np.allclose(s.times, 1.5 * np.arange(1, 11))
    a = simulate("async", 3, compute="deterministic", time=1.0, comm_time=0.25, updates=9)
    assert np.allclose(a.times, np.repeat([1.5, 3.0, 4.5], 3))  # all three arrive together; ties by index
    assert a.contributors.ravel().tolist() == [0, 1, 2] * 3
    # first round: 0, 1, 2 updates happened since version 0; then every gradient sees the other P - 1 = 2
    assert a.staleness.tolist() == [0, 1, 2] + [2] * 6


def test_callable_communication_is_used_and_reproducible():
    calls = []

    def comm(rng, worker):
        calls.append(worker)
        return rng.uniform(0.0, 0.1)

    a = simulate("async", 2, compute="deterministic", time=1.0, comm_time=comm, updates=20, seed=1)
    b = simulate("async", 2, compute="deterministic", time=1.0, comm_time=comm, updates=20, seed=1)
    assert calls and set(calls) == {0, 1}
    assert np.array_equal(a.times, b.times)
    # each job lasts 1.0 s + two transfers of at most 0.1 s; 20 updates from 2 learners end within 10-12 s
    assert np.all(np.diff(a.times) >= 0) and a.times[0] > 1.0
    assert 10.0 < a.times[-1] <= 12.0
    free = simulate("async", 2, compute="deterministic", time=1.0, updates=20, seed=1)
    assert np.allclose(free.times, np.repeat(np.arange(1.0, 11.0), 2))


def test_persistent_straggler():
    """Learner 0 is 5x slower. Async: its share of gradients is its share of the rate, (1/5)/(P-1+1/5).

    K-sync with K = P-1 almost always cancels it: it wins a place only if it is not the slowest.
    """
    P, slow = 5, 5.0
    a = simulate("async", P, compute="straggler", slowdown=slow, updates=20_000, seed=2)
    share = np.mean(a.contributors == 0)
    assert share == pytest.approx((1 / slow) / (P - 1 + 1 / slow), rel=0.1)
    ks = simulate("k_sync", P, k=P - 1, compute="straggler", slowdown=slow, updates=5_000, seed=2)
    sync = simulate("sync", P, compute="straggler", slowdown=slow, updates=5_000, seed=2)
    assert np.mean(np.any(ks.contributors == 0, axis=1)) < 0.5
    assert ks.mean_time_per_update < 0.5 * sync.mean_time_per_update


# --------------------------------------------------------------------------- recorded jobs


def test_recorded_jobs_by_hand_k_async_with_a_straggler():
    """P = 3, K = 2; learner 0 needs 3 s per job, learners 1 and 2 need 1 s (ties go to the lower index).

    Worked out by hand: learners 1 and 2 make updates 0 and 1 at 1 s and 2 s. At 3 s learners 0, 1
    and 2 all push: 0 and 1 make update 2 (learner 0 read version 0: staleness 2); learner 2 waits in
    the buffer and joins learner 1's next gradient (3 s -> 4 s) in update 3 at 4 s (learner 2 read
    version 2 at 2 s: staleness 1). Learner 0 restarted at 3 s and is still computing (until 6 s).
    """
    r = simulate("k_async", 3, k=2, compute="straggler", base="deterministic", time=1.0, slowdown=3.0,
                 updates=4, record_jobs=True)
    assert r.times.tolist() == [1.0, 2.0, 3.0, 4.0]
    expected = [
        (1, 0.0, 1.0, "applied", 0, 0), (2, 0.0, 1.0, "applied", 0, 0),
        (1, 1.0, 2.0, "applied", 1, 0), (2, 1.0, 2.0, "applied", 1, 0),
        (0, 0.0, 3.0, "applied", 2, 2), (1, 2.0, 3.0, "applied", 2, 0),
        (2, 2.0, 3.0, "applied", 3, 1), (1, 3.0, 4.0, "applied", 3, 0),
        (0, 3.0, 6.0, "unfinished", None, None),
    ]
    assert [(j.worker, j.start, j.end, j.status, j.update, j.staleness) for j in r.jobs] == expected
    assert r.staleness.tolist() == [0, 0, 0, 0, 2, 0, 1, 0]


def test_recorded_jobs_by_hand_k_batch_sync_cancels_the_rest():
    """P = 2, K = 2 mini-batches; learner 0 needs 3 s per job, learner 1 needs 1 s.

    By hand: in each round learner 1 delivers both mini-batches (at +1 s and +2 s, the second on the
    same parameters), the PS updates at +2 s and cancels learner 0's job, begun at the round's start.
    """
    r = simulate("k_batch_sync", 2, k=2, compute="straggler", base="deterministic", time=1.0, slowdown=3.0,
                 updates=3, record_jobs=True)
    assert r.times.tolist() == [2.0, 4.0, 6.0]
    expected = []
    for u in range(3):
        s = 2.0 * u
        expected += [(1, s, s + 1, "applied", u), (1, s + 1, s + 2, "applied", u), (0, s, s + 2, "cancelled", u)]
    assert [(j.worker, j.start, j.end, j.status, j.update) for j in r.jobs] == expected
    assert all(j.staleness == 0 for j in r.jobs)


def test_recorded_jobs_include_communication():
    """Each job is pull + compute + push: 1 s of compute and 0.25 s per transfer make 1.5 s jobs."""
    r = simulate("sync", 2, compute="deterministic", time=1.0, comm_time=0.25, updates=3, record_jobs=True)
    assert [(j.start, j.end) for j in r.jobs] == [(0.0, 1.5)] * 2 + [(1.5, 3.0)] * 2 + [(3.0, 4.5)] * 2


def _check_jobs(r, protocol, P, K):
    """Everything the recorded jobs must agree with, derived from the protocol rules, not the code."""
    jobs = r.jobs
    U = r.updates
    T = r.times
    assert isinstance(jobs, tuple) and all(isinstance(j, sgd.Job) for j in jobs)
    assert all(j.status in sgd.JOB_STATUSES for j in jobs)
    assert all(0 <= j.worker < P and 0 <= j.start <= j.end for j in jobs)
    applied = [j for j in jobs if j.status == "applied"]
    cancelled = [j for j in jobs if j.status == "cancelled"]
    unfinished = [j for j in jobs if j.status == "unfinished"]
    # the applied jobs are the applied gradients, in order: learners, staleness, K per update
    assert [j.worker for j in applied] == r.contributors.ravel().tolist()
    assert [j.staleness for j in applied] == r.staleness.tolist()
    assert [j.update for j in applied] == np.repeat(np.arange(U), K).tolist()
    # an update happens when its last gradient arrives; the others arrived since the previous update, in
    # order of arrival (continuous compute-time laws: no two arrive at the same instant)
    for u in range(U):
        ends = [j.end for j in applied[u * K:(u + 1) * K]]
        assert ends[-1] == T[u]
        assert ends[0] >= (T[u - 1] if u else 0.0)
        assert all(a < b for a, b in zip(ends, ends[1:]))
    # staleness = updates made between the version read at the job's start and the applying update
    read = np.searchsorted(T, [j.start for j in applied], side="right")
    assert [j.staleness for j in applied] == [j.update - int(v) for j, v in zip(applied, read)]
    # who is cancelled: K-sync the P - K losers of each round, K-batch-sync the P - 1 learners still busy
    per_round = {"sync": 0, "k_sync": P - K, "k_batch_sync": P - 1}.get(protocol, 0)
    assert len(cancelled) == per_round * U
    for j in cancelled:
        assert j.end == T[j.update] and j.start >= (T[j.update - 1] if j.update else 0.0)
        assert j.staleness == 0
    if protocol in ("sync", "k_sync"):   # one fresh job per learner per round, all starting at the round's start
        for u in range(U):
            mine = [j for j in jobs if j.update == u]
            assert sorted(j.worker for j in mine) == list(range(P))
            assert all(j.start == (T[u - 1] if u else 0.0) for j in mine)
    # jobs still computing at the end: only asynchronous protocols leave them; started before, end after
    restarted = {"async": 1, "k_async": K, "k_batch_async": 1}.get(protocol, P)
    assert len(unfinished) == P - restarted
    for j in unfinished:
        assert j.update is None and j.staleness is None and j.start < T[-1] <= j.end
    # one job at a time per learner; asynchronous learners never idle, K-async ones wait for their update
    for w in range(P):
        mine = sorted((j for j in jobs if j.worker == w), key=lambda j: j.start)
        assert mine and mine[0].start == 0.0
        for a, b in zip(mine, mine[1:]):
            assert b.start >= a.end
            if protocol in ("async", "k_batch_async"):
                assert b.start == a.end
            elif protocol == "k_async":
                assert b.start == T[a.update]


@settings(max_examples=40, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    P=st.integers(1, 6),
    kfrac=st.floats(0, 1),
    seed=st.integers(0, 10_000),
    law=st.sampled_from([("exponential", {}), ("pareto", {}), ("shifted_exponential", {"shift": 0.5}),
                         ("straggler", {"slowdown": 3.0})]),
)
def test_recorded_jobs_agree_with_times_contributors_and_staleness(protocol, P, kfrac, seed, law):
    compute, params = law
    K = {"sync": P, "async": 1}.get(protocol, 1 + int(kfrac * (P - 1)))
    k = None if protocol in ("sync", "async") else K
    r = simulate(protocol, P, k=k, compute=compute, updates=25, seed=seed, record_jobs=True, **params)
    _check_jobs(r, protocol, P, K)
    plain = simulate(protocol, P, k=k, compute=compute, updates=25, seed=seed, **params)
    assert plain.jobs is None                      # recording is off by default ...
    for field in ("times", "staleness", "contributors"):  # ... and changes nothing it records
        assert np.array_equal(getattr(plain, field), getattr(r, field)), field


@pytest.mark.parametrize("protocol, k", [("k_sync", 3), ("k_batch_sync", 3), ("k_async", 2), ("k_batch_async", 3)])
def test_recorded_jobs_of_a_long_run_and_of_its_trained_prefix(protocol, k):
    """400 updates (several K-sync chunks, many heap rounds), with communication time.

    A run of 60 updates is the start of the same schedule: its settled jobs are the long run's jobs
    of updates 0-59, and its unfinished ones are the long run's jobs begun before its last update but
    settled after it. Training on a problem changes neither the jobs nor (recording on) the parameters.
    """
    r = simulate(protocol, 7, k=k, updates=400, seed=9, record_jobs=True, comm_time=0.05)
    _check_jobs(r, protocol, 7, k)
    p = make_problem(seed=0, n_train=300, n_test=100)
    short = simulate(protocol, 7, k=k, updates=60, seed=9, record_jobs=True, comm_time=0.05, problem=p,
                     batch_size=4)
    _check_jobs(short, protocol, 7, k)
    t_last = short.times[-1]
    settled = [j for j in short.jobs if j.status != "unfinished"]
    assert settled == [j for j in r.jobs if j.update is not None and j.update < 60]
    running = [(j.worker, j.start, j.end) for j in short.jobs if j.status == "unfinished"]
    later = sorted((j.worker, j.start, j.end) for j in r.jobs
                   if j.start < t_last and (j.update is None or j.update >= 60))
    assert running == later
    plain = simulate(protocol, 7, k=k, updates=60, seed=9, comm_time=0.05, problem=p, batch_size=4)
    assert np.array_equal(short.w, plain.w) and np.array_equal(short.errors, plain.errors)


def test_k_sync_cancels_exactly_p_minus_k_per_update():
    r = simulate("k_sync", 6, k=2, updates=5, seed=1, record_jobs=True)
    for u in range(5):
        mine = [j for j in r.jobs if j.update == u]
        assert sum(j.status == "cancelled" for j in mine) == 4
        assert sum(j.status == "applied" for j in mine) == 2
        assert {j.worker for j in mine if j.status == "applied"} == set(r.contributors[u].tolist())


# --------------------------------------------------------------------------- training


@pytest.fixture(scope="module")
def problem():
    return make_problem(seed=0)


def test_sync_training_lowers_the_error(problem):
    r = simulate("sync", 4, updates=200, seed=0, problem=problem, lr=0.2, batch_size=8, eval_every=20)
    assert r.initial_error > 0.8
    assert r.errors[-1] < 0.3
    assert r.losses[-1] < 0.5 * r.initial_loss
    assert r.eval_index[-1] == 199 and r.eval_times[-1] == r.times[-1]


def test_async_faster_early_but_higher_floor_than_sync(problem):
    """Dutta et al. 2018 (Fig. 1), reproduced on the default problem.

    Setting: P = 8 learners, exponential times, lr = 0.2, batch 4; sync runs 300
    updates, async as many as fit in about the same wall-clock (P H_P times more).
    Checked over seeds 0-5 while writing this test: async's error at t = 10 s was
    0.25-0.29 against sync's 0.31-0.45, and its mean error over the second half of
    the run 0.229-0.232 against 0.209-0.213 (loss 0.636-0.642 against 0.583-0.586 nats).
    """
    P, lr, bs = 8, 0.2, 4
    for seed in (0, 1):
        s = simulate("sync", P, updates=300, seed=seed, problem=problem, lr=lr, batch_size=bs)
        a = simulate("async", P, updates=int(300 * runtime_ratio(P)), seed=seed, problem=problem, lr=lr,
                     batch_size=bs, eval_every=8)
        end = s.times[-1]

        def at(r, t):
            return r.errors[min(np.searchsorted(r.eval_times, t), r.errors.size - 1)]

        def floor(r, values, end=end):
            m = (r.eval_times >= end / 2) & (r.eval_times <= end)
            return values[m].mean()

        assert at(a, 10.0) < at(s, 10.0) - 0.03
        assert floor(a, a.errors) > floor(s, s.errors) + 0.01
        assert floor(a, a.losses) > floor(s, s.losses) + 0.02


def test_lr_rules_reduce_to_constant_for_fresh_gradients(problem):
    """Staleness 0 -> alpha0 / max(0, 1) = alpha0; distance 0 -> eta_max = lr: both equal the constant rule."""
    base = simulate("k_sync", 4, k=3, updates=40, seed=3, problem=problem, lr=0.1, batch_size=4)
    for rule in ("staleness", "distance"):
        other = simulate("k_sync", 4, k=3, updates=40, seed=3, problem=problem, lr=0.1, batch_size=4,
                         lr_rule=rule)
        assert np.array_equal(other.w, base.w)


def test_staleness_rule_scales_stale_gradients_down(problem):
    """Async with P = 8: most gradients are stale, so alpha0/sigma moves the parameters less in total."""
    kw = dict(updates=200, seed=4, problem=problem, lr=0.1, batch_size=4)
    const = simulate("async", 8, **kw)
    aware = simulate("async", 8, lr_rule="staleness", **kw)
    dist = simulate("async", 8, lr_rule="distance", lr_c=1e-4, **kw)
    w0 = problem.init()
    assert np.linalg.norm(aware.w - w0) < np.linalg.norm(const.w - w0)
    assert np.linalg.norm(dist.w - w0) < np.linalg.norm(const.w - w0)
    assert aware.errors[-1] < aware.initial_error


def test_stale_aware_rules_lower_the_async_floor(problem):
    """Gupta et al. 2016 / Dutta et al. 2018: damping stale gradients lowers async SGD's error floor.

    Setting: async, P = 16, lr = 0.5, batch 8, 2,000 updates; floor = mean over the second half.
    Checked over seeds 0-4 while writing this test: error floor 0.243-0.247 (constant),
    0.227 (alpha0 / staleness), 0.231-0.234 (distance rule, C = 0.01); loss 0.72-0.74,
    0.61-0.62, 0.64-0.65 nats. Part of the effect is simply a smaller average step.
    """
    kw = dict(updates=2000, problem=problem, lr=0.5, batch_size=8, eval_every=20)
    for seed in (0, 1):
        runs = {rule: simulate("async", 16, seed=seed, lr_rule=rule, lr_c=1e-2, **kw)
                for rule in ("constant", "staleness", "distance")}
        floor = {rule: (r.errors[r.errors.size // 2:].mean(), r.losses[r.losses.size // 2:].mean())
                 for rule, r in runs.items()}
        for rule in ("staleness", "distance"):
            assert floor[rule][0] < floor["constant"][0] - 0.005
            assert floor[rule][1] < floor["constant"][1] - 0.05


def test_downpour_with_free_communication_is_async(problem):
    """With instant transfers every shard gets its piece at once: Downpour reduces to async, Adagrad included."""
    kw = dict(updates=100, seed=6, problem=problem, lr=0.1, batch_size=4, optimizer="adagrad")
    asyn = simulate("async", 5, **kw)
    down = simulate("async", 5, shards=4, **kw)
    assert np.array_equal(down.times, asyn.times)
    assert np.array_equal(down.staleness, asyn.staleness)
    assert np.allclose(down.w, asyn.w, rtol=1e-12, atol=1e-15)


def test_downpour_with_random_transfers_trains(problem):
    def comm(rng, worker):
        return rng.exponential(0.2)

    r = simulate("async", 6, shards=3, comm_time=comm, updates=300, seed=1, problem=problem, lr=0.5,
                 batch_size=8, optimizer="adagrad", eval_every=30)
    assert r.errors[-1] < 0.4 < r.initial_error
    assert np.all(np.diff(r.times) >= 0) and r.times.size == 300


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        (("k_sync", 4), {"k": 5}, "k"),
        (("k_async", 4), {"k": 0}, "k"),
        (("k_batch_async", 4), {}, "k"),
        (("sync", 4), {"k": 2}, "k"),
        (("gossip", 4), {}, "protocol"),
        (("async", 0), {}, "workers"),
        (("async", 4), {"rate": -1.0}, "rate"),
        (("async", 4), {"compute": "gamma"}, "distribution"),
        (("async", 4), {"compute": "exponential", "shape": 2.0}, "shape"),
        (("async", 4), {"compute": "straggler", "slowdown": 0.5}, "slowdown"),
        (("async", 4), {"compute": "straggler", "base": "straggler"}, "base"),
        (("async", 4), {"comm_time": -0.1}, "comm_time"),
        (("async", 4), {"comm_time": lambda rng, w: -1.0}, "comm_time"),
        (("async", 4), {"lr_rule": "cosine"}, "lr_rule"),
        (("async", 4), {"optimizer": "adam"}, "optimizer"),
        (("async", 4), {"updates": 0}, "updates"),
        (("k_async", 4), {"k": 2, "shards": 2}, "shards"),
        (("async", 4), {"lr": 0.0}, "lr"),
        (("async", 4), {"record_jobs": "yes"}, "record_jobs"),
        (("async", 4), {"shards": 2, "record_jobs": True}, "record_jobs"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(args, kwargs, name):
    with pytest.raises(ValueError, match=name):
        simulate(*args, updates=kwargs.pop("updates", 5), **kwargs)


def test_closed_forms_reject_bad_input():
    with pytest.raises(ValueError, match="shape"):
        expected_max(1, "pareto", shape=1.0)
    with pytest.raises(ValueError, match="i.i.d."):
        runtime_ratio(4, "straggler")
    with pytest.raises(ValueError, match="k"):
        expected_order_statistic(5, 4, "exponential")
    with pytest.raises(ValueError, match="P"):
        runtime_ratio(0)


# ------------------------------------------------------------------ the two phases, alone

@pytest.mark.parametrize("protocol", sgd.PROTOCOLS)
def test_schedule_then_replay_is_simulate(protocol):
    from commlib.sgd.training import make_problem
    problem = make_problem(seed=0)
    k = None if protocol in ("sync", "async") else 2
    timed = sgd.schedule(protocol, 4, k, "shifted_exponential", updates=60, seed=3, shift=0.5, rate=2.0)
    whole = sgd.simulate(protocol, 4, k=k, compute="shifted_exponential", updates=60, seed=3, problem=problem,
                         lr=0.3, batch_size=8, eval_every=10, shift=0.5, rate=2.0)
    assert timed.losses is None
    np.testing.assert_array_equal(timed.times, whole.times)
    np.testing.assert_array_equal(timed.staleness, whole.staleness)
    np.testing.assert_array_equal(timed.contributors, whole.contributors)
    trained = sgd.replay(timed, problem, lr=0.3, batch_size=8, seed=3, eval_every=10)
    np.testing.assert_array_equal(trained.losses, whole.losses)
    np.testing.assert_array_equal(trained.w, whole.w)


def test_replay_rejects_bad_input():
    from commlib.sgd.training import make_problem
    timed = sgd.schedule("async", 2, updates=5)
    with pytest.raises(ValueError, match="lr"):
        sgd.replay(timed, make_problem(seed=0), lr=-1.0)
    with pytest.raises(ValueError, match="timed"):
        sgd.replay("not a schedule", make_problem(seed=0))


# --------------------------------------------------------------------------- replay_grid: many rates and seeds at once


@pytest.mark.parametrize("protocol, k, rule", [("async", None, "constant"), ("k_async", 3, "staleness"),
                                               ("sync", None, "constant"), ("k_batch_sync", 2, "constant")])
def test_replay_grid_matches_replay_run_by_run(protocol, k, rule):
    from commlib.sgd.training import make_problem

    p = make_problem(seed=1, n_train=300, n_test=100)
    seeds = (0, 2)
    scheds = [sgd.schedule(protocol, 6, k, updates=60, seed=s) for s in seeds]
    grid = sgd.replay_grid(scheds, p, (0.05, 0.4, 50.0), batch_size=4, seeds=seeds, lr_rule=rule, eval_every=7)
    for i, s in enumerate(seeds):
        for j, rate in enumerate((0.05, 0.4, 50.0)):
            one = sgd.replay(scheds[i], p, lr=rate, lr_rule=rule, batch_size=4, seed=s, eval_every=7)
            got = grid[i][j]
            assert got.diverged == one.diverged
            np.testing.assert_allclose(got.losses, one.losses, rtol=1e-9, atol=1e-12, equal_nan=True)
            np.testing.assert_allclose(got.errors, one.errors, equal_nan=True)
            if not one.diverged:
                np.testing.assert_allclose(got.w, one.w, rtol=1e-9, atol=1e-12)


def test_replay_grid_tail_evaluates_the_first_schedule_all_along_and_the_others_at_the_end():
    from commlib.sgd.training import make_problem

    p = make_problem(seed=0, n_train=200, n_test=50)
    scheds = [sgd.schedule("async", 4, None, updates=100, seed=s) for s in (0, 1)]
    grid = sgd.replay_grid(scheds, p, (0.1,), batch_size=4, seeds=(0, 1), eval_every=10, tail=0.3)
    assert np.all(np.isfinite(grid[0][0].losses))
    late = grid[1][0].eval_index >= 70
    assert np.all(np.isfinite(grid[1][0].losses[late])) and np.all(np.isnan(grid[1][0].losses[~late]))
    full = sgd.replay(scheds[1], p, lr=0.1, batch_size=4, seed=1, eval_every=10)
    np.testing.assert_allclose(grid[1][0].losses[late], full.losses[late], rtol=1e-9)


@pytest.mark.parametrize("bad, match", [({"seeds": (0,)}, "seeds"), ({"rates": ()}, "rates"),
                                        ({"lr_rule": "distance"}, "lr_rule"), ({"tail": 1.5}, "tail")])
def test_replay_grid_names_a_bad_argument(bad, match):
    from commlib.sgd.training import make_problem

    p = make_problem(seed=0, n_train=100, n_test=10)
    scheds = [sgd.schedule("async", 2, None, updates=5, seed=s) for s in (0, 1)]
    kwargs = {"rates": (0.1,), "seeds": (0, 1), **bad}
    with pytest.raises(ValueError, match=match):
        sgd.replay_grid(scheds, p, kwargs.pop("rates"), seeds=kwargs.pop("seeds"), **kwargs)


# --------------------------------------------------------------------------- the never-stale control: fresh=True


def _by_hand(problem, timed, seed, lr, batch_size):
    """Plain SGD on ``timed``'s updates, written out: the mini-batches drawn one gradient after another from the
    run's data generator (the child 2P of the seed's SeedSequence), each gradient on the version its staleness names."""
    P, K = timed.workers, timed.k
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(2 * P + 2)[2 * P])
    versions = [problem.init()]
    for j in range(timed.updates):
        stale = timed.staleness[j * K:(j + 1) * K]
        g = sum(problem.gradient(versions[j - int(s)], rng.integers(0, problem.n_train, size=batch_size))
                for s in stale) / K
        versions.append(versions[j] - lr * g)
    return versions[-1]


@pytest.mark.parametrize("protocol, k", [("async", None), ("k_async", 2)])
def test_fresh_keeps_the_schedule_and_the_mini_batches_and_drops_the_staleness(protocol, k):
    from commlib.sgd.training import make_problem

    p = make_problem(seed=0, n_train=300, n_test=50)
    stale = sgd.schedule(protocol, 6, k, updates=80, seed=4)
    fresh = sgd.schedule(protocol, 6, k, updates=80, seed=4, fresh=True)
    np.testing.assert_array_equal(fresh.times, stale.times)
    np.testing.assert_array_equal(fresh.contributors, stale.contributors)
    assert fresh.staleness.shape == stale.staleness.shape and not fresh.staleness.any() and stale.staleness.any()
    # the same mini-batch stream: each replay is plain SGD by hand on the one generator, stale reads or fresh ones
    for timed in (stale, fresh):
        run = sgd.replay(timed, p, lr=0.3, batch_size=4, seed=4, eval_every=80)
        np.testing.assert_allclose(run.w, _by_hand(p, timed, 4, 0.3, 4), rtol=1e-10, atol=1e-12)
    a, b = (sgd.replay(t, p, lr=0.3, batch_size=4, seed=4, eval_every=80).w for t in (stale, fresh))
    assert not np.allclose(a, b)                  # the staleness is what differs, and it matters
    jobs = sgd.schedule(protocol, 6, k, updates=20, seed=4, fresh=True, record_jobs=True).jobs
    assert all(j.staleness == 0 for j in jobs if j.status == "applied")
    with pytest.raises(ValueError, match="fresh"):
        sgd.schedule(protocol, 6, k, updates=5, fresh="yes")


def test_a_recorded_run_pauses_the_cycle_collector_and_restores_it():
    import gc

    from commlib.sgd import simulate as sim

    plain = sim.simulate("k_async", 4, k=2, compute="exponential", updates=300, seed=3)
    assert gc.isenabled()
    recorded = sim.simulate("k_async", 4, k=2, compute="exponential", updates=300, seed=3, record_jobs=True)
    assert gc.isenabled()                                      # switched back on after the run
    assert np.array_equal(plain.times, recorded.times) and recorded.jobs
    with sim._cycle_collector_paused(True):
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with sim._cycle_collector_paused(True):
            pass
        assert not gc.isenabled()                              # a caller's own choice is left as it was
    finally:
        gc.enable()


@pytest.mark.parametrize("protocol", ["sync", "k_sync", "k_batch_sync", "async", "k_async", "k_batch_async"])
def test_job_spans_are_the_recorded_jobs_start_and_end(protocol):
    """job_spans gives the schedule and, job by job in the same order, the start and end that record_jobs=True
    records, for every protocol (the same event loop records both)."""
    k = None if protocol in ("sync", "async") else 3
    full = sgd.schedule(protocol, 5, k=k, compute="pareto", updates=40, seed=2, record_jobs=True)
    run, start, end = sgd.job_spans(protocol, 5, k=k, compute="pareto", updates=40, seed=2)
    assert run.jobs is None
    for field in ("times", "staleness", "contributors", "gradients_per_update"):
        assert np.array_equal(getattr(run, field), getattr(full, field))
    assert start.tolist() == [j.start for j in full.jobs] and end.tolist() == [j.end for j in full.jobs]
    with pytest.raises(ValueError, match="updates"):
        sgd.job_spans(protocol, 5, k=k, updates=0)
