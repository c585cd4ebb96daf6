"""The SGD calculator's numpy-free model (commlib.sgd.calculator_model): the protocols' laws and the training maths."""

from __future__ import annotations

import math

import numpy as np
import pytest

from commlib.sgd import calculator_model as sgd_calculator
from commlib.sgd import simulate as sgd
from commlib.sgd import training
from commlib.views.calculator import pure_python_modules


def test_it_runs_without_numpy():
    assert pure_python_modules("commlib.sgd.calculator_model") is not None


@pytest.mark.parametrize("protocol, k", [("async", None), ("k_async", 2), ("k_async", 4), ("k_batch_async", 2)])
def test_mean_staleness_matches_the_closed_form(protocol, k):
    s = sgd_calculator.schedule(protocol, 8, k, updates=20_000, seed=1)
    assert s.mean_staleness == pytest.approx(sgd.expected_staleness(protocol, 8, k), rel=0.03)


@pytest.mark.parametrize("protocol, k", [("sync", None), ("k_sync", 3), ("async", None), ("k_batch_async", 2)])
def test_time_per_update_matches_the_closed_form(protocol, k):
    s = sgd_calculator.schedule(protocol, 6, k, updates=20_000, seed=2)
    assert s.mean_time_per_update == pytest.approx(sgd.expected_update_time(protocol, 6, k), rel=0.03)


def test_k_async_with_one_is_async_and_batch_sync_with_one_is_k_sync():
    a, ka = sgd_calculator.schedule("async", 5, None, seed=3), sgd_calculator.schedule("k_async", 5, 1, seed=3)
    assert a.times == ka.times and a.staleness == ka.staleness
    ks, kbs = sgd_calculator.schedule("k_sync", 5, 1, seed=3), sgd_calculator.schedule("k_batch_sync", 5, 1, seed=3)
    assert ks.times == kbs.times


def test_a_straggler_slows_synchronous_sgd():
    fast = sgd_calculator.schedule("sync", 4, None, "deterministic")
    slow = sgd_calculator.schedule("sync", 4, None, "deterministic", slowdown=3.0)
    assert fast.mean_time_per_update == 1.0 and slow.mean_time_per_update == 3.0


def test_the_gradient_is_numpy_softmax_regressions():
    p = sgd_calculator.calculator_problem(seed=2, n_train=40, n_test=10)
    ref = training.Problem(np.array(p.x_train), np.array(p.y_train), np.array(p.x_test), np.array(p.y_test),
                           p.classes)
    rng = np.random.default_rng(0)
    w = [list(row) for row in rng.normal(0, 0.3, (p.classes, len(p.x_train[0])))]
    flat = np.array(w).T.ravel()                      # training.Problem stores (features + 1, classes)
    idx = np.arange(40)
    coefs = [sgd_calculator._coefficients(w, p.x_train[i], p.y_train[i]) for i in idx]
    mine = np.array(coefs).T @ np.array(p.x_train) / idx.size   # (classes, features + 1)
    np.testing.assert_allclose(mine.T.ravel(), ref.gradient(flat, idx), rtol=1e-12, atol=1e-14)
    assert p.loss(w) == pytest.approx(ref.loss(flat), rel=1e-12)
    assert p.error(w) == ref.error(flat)


def test_training_lowers_the_loss():
    p = sgd_calculator.calculator_problem()
    s = sgd_calculator.schedule("async", 4, None)
    _, loss, error = sgd_calculator.train(p, s, 200)
    assert loss < 0.6 * math.log(p.classes) and error < 0.5


def test_the_calculator_runs_this_model_after_checking_its_ranges():
    from commlib.sgd import calculators

    assert calculators.sgd_results() == sgd_calculator.sgd_calculator_results()
    assert sgd_calculator.sgd_calculator_results() == sgd_calculator.sgd_calculator_results()


@pytest.mark.parametrize("protocol", sgd.PROTOCOLS)
@pytest.mark.parametrize("workers, k, slowdown", [(3, 2, 1.0), (5, 3, 2.5), (4, 1, 1.5), (6, 6, 3.0)])
def test_the_event_loops_are_commlib_sgds(protocol, workers, k, slowdown):
    """With the same durations (deterministic times, one straggler) both schedules agree update by update."""
    kk = None if protocol in ("sync", "async") else k
    ref = sgd.schedule(protocol, workers, kk, compute="straggler", base="deterministic", slowdown=slowdown,
                       updates=15)
    mine = sgd_calculator.schedule(protocol, workers, kk, "deterministic", slowdown, updates=15)
    assert list(mine.times) == ref.times.tolist()
    assert list(mine.staleness) == ref.staleness.tolist()


@pytest.mark.parametrize("protocol, k", [("sync", 8), ("k_sync", 4), ("async", 1), ("k_async", 2),
                                         ("k_batch_async", 4), ("k_batch_sync", 4)])
def test_the_rate_per_gradient_lies_between_each_protocols_best_rates(protocol, k):
    """Every protocol trains at RATE_PER_GRADIENT x K: on the calculator's problem and budget (eight learners,
    20 mean compute times) each protocol's best rate per gradient, over a grid and three seeds, lies on either
    side of it, within a factor of two, so the calculator compares protocols each near its own best rate."""
    p = sgd_calculator.calculator_problem()
    grid = (0.075, 0.15, 0.3, 0.6, 1.2)

    def level(c):
        out = []
        for seed in range(3):
            s = sgd_calculator.schedule(protocol, 8, k, "exponential", 1.0, 400, seed)
            u = sum(1 for t in s.times if t <= 20.0)
            out.append(sgd_calculator.train(p, s, u, lr=c * s.k, seed=seed)[1])
        return sum(out) / len(out)

    best = min(grid, key=level)
    assert sgd_calculator.RATE_PER_GRADIENT / 2 <= best <= 2 * sgd_calculator.RATE_PER_GRADIENT, best


def test_k_above_the_learners_names_the_learners_in_the_calculators_words():
    from commlib.sgd.calculators import sgd_results
    from commlib.views.results import evaluate

    labels = {"workers": "learners n", "k": "K"}
    one = evaluate(sgd_results, {"protocol": "k_async", "workers": 1, "k": 2}, labels=labels)[2]
    assert one == "K must be 1 when learners n = 1, got K = 2"
    four = evaluate(sgd_results, {"protocol": "k_batch_sync", "workers": 4, "k": 5}, labels=labels)[2]
    assert four == "K must lie between 1 and learners n = 4, got K = 5"
    assert evaluate(sgd_results, {"protocol": "sync", "workers": 1, "k": 2}, labels=labels)[2] is None   # sync ignores K
