"""Tests for commlib.sgd.training: the softmax-regression problem and plain large-batch SGD."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib.sgd.training import make_problem, train


@pytest.fixture(scope="module")
def problem():
    return make_problem(seed=0)


def test_problem_is_reproducible_and_seed_dependent():
    a, b, c = make_problem(seed=5), make_problem(seed=5), make_problem(seed=6)
    assert np.array_equal(a.x_train, b.x_train) and np.array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.x_train, c.x_train)


def test_shapes_and_bias_column(problem):
    assert problem.x_train.shape == (4000, 21) and problem.x_test.shape == (2000, 21)
    assert problem.dim == 21 * 10
    assert np.all(problem.x_train[:, -1] == 1.0)
    assert set(np.unique(problem.y_train)) == set(range(10))


def _numeric_gradient(f, w, eps=1e-6):
    g = np.zeros_like(w)
    for i in range(w.size):
        e = np.zeros_like(w)
        e[i] = eps
        g[i] = (f(w + e) - f(w - e)) / (2 * eps)
    return g


def test_full_batch_gradient_matches_finite_differences_of_the_loss():
    """The gradient over every training sample is the derivative of loss(); checked by central differences."""
    p = make_problem(seed=1, classes=3, features=4, n_train=60, n_test=10, l2=0.01)
    w = np.random.default_rng(0).normal(size=p.dim)
    analytic = p.gradient(w, np.arange(p.n_train))
    numeric = _numeric_gradient(p.loss, w)
    assert np.allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


def test_initial_error_is_one_minus_share_of_class_zero(problem):
    """Zero weights give equal scores; argmax picks class 0, so error = 1 - (share of class 0 in the test set)."""
    expected = 1.0 - np.mean(problem.y_test == 0)
    assert problem.error(problem.init()) == pytest.approx(expected)
    assert problem.loss(problem.init()) == pytest.approx(np.log(10))  # uniform prediction: ln C nats


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), size=st.integers(1, 64))
def test_batches_lie_in_the_training_set_and_gradients_are_finite(seed, size):
    p = make_problem(seed=2, n_train=200, n_test=20)
    rng = np.random.default_rng(seed)
    idx = p.sample_batch(rng, size)
    assert idx.shape == (size,) and idx.min() >= 0 and idx.max() < p.n_train
    g = p.gradient(rng.normal(size=p.dim), idx)
    assert g.shape == (p.dim,) and np.all(np.isfinite(g))


def test_training_lowers_error_and_loss(problem):
    r = train(problem, lr=0.1, batch_size=32, steps=300, seed=0, eval_every=50)
    assert r.errors[-1] < 0.5 * r.errors[0]
    assert r.losses[-1] < r.losses[0]
    assert not r.diverged


def test_warmup_schedule_is_linear_from_base_to_scaled_rate(problem):
    """Goyal et al. 2017: rate(t) = lr + (k lr - lr) min(1, t / W), k = batch / base batch."""
    r = train(problem, lr=0.1, batch_size=128, steps=20, warmup_steps=10, base_batch_size=32, seed=0)
    k = 128 / 32
    t = r.steps[1:] - 1  # the rate used in step t (0-based) is recorded with the evaluation after it
    expected = 0.1 + (k * 0.1 - 0.1) * np.minimum(1.0, t / 10)
    assert np.allclose(r.lrs[1:], expected)
    assert r.lrs[-1] == pytest.approx(0.4)


def test_linear_scaling_rule_keeps_the_loss_after_equal_epochs(problem):
    """Batch x16 with rate x16 for 1/16 of the steps: the same number of epochs, about the same loss.

    Goyal et al. (2017) section 2.1; on this convex problem it holds to within 5 % of the loss.
    """
    small = train(problem, lr=0.05, batch_size=16, steps=1000, seed=0, eval_every=1000)
    large = train(problem, lr=0.05, batch_size=256, steps=1000 // 16, seed=0, base_batch_size=16,
                  eval_every=1000)
    assert small.epochs[-1] == pytest.approx(large.epochs[-1], rel=0.01)
    assert large.losses[-1] == pytest.approx(small.losses[-1], rel=0.05)
    unscaled = train(problem, lr=0.05, batch_size=256, steps=1000 // 16, seed=0, eval_every=1000)
    assert unscaled.losses[-1] > large.losses[-1] * 1.05  # without the rule the large batch lags behind


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"seed": -1}, "seed"),
        ({"classes": 1}, "classes"),
        ({"separation": 0.0}, "separation"),
        ({"n_train": 5}, "n_train"),
        ({"l2": -1.0}, "l2"),
    ],
)
def test_make_problem_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_problem(**kwargs)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"lr": 0.0}, "lr"),
        ({"batch_size": 0}, "batch_size"),
        ({"steps": 0}, "steps"),
        ({"warmup_steps": -1}, "warmup_steps"),
        ({"base_batch_size": 0}, "base_batch_size"),
    ],
)
def test_train_rejects_bad_input(problem, kwargs, name):
    args = {"lr": 0.1, "batch_size": 8, "steps": 5, **kwargs}
    with pytest.raises(ValueError, match=name):
        train(problem, **args)


def test_gradient_rejects_bad_shapes_and_indices(problem):
    with pytest.raises(ValueError, match="w must be"):
        problem.gradient(np.zeros(3), np.array([0]))
    with pytest.raises(ValueError, match="batch_indices"):
        problem.gradient(problem.init(), np.array([problem.n_train]))


def test_stochastic_gradient_is_gradient_on_a_freshly_drawn_batch():
    p = make_problem(seed=0)
    w = np.random.default_rng(5).normal(size=p.dim)
    fast = [p.stochastic_gradient(w, np.random.default_rng(s), 8) for s in range(3)]
    slow = [p.gradient(w, p.sample_batch(np.random.default_rng(s), 8)) for s in range(3)]
    assert all(np.array_equal(a, b) for a, b in zip(fast, slow))
    assert not np.array_equal(fast[0], fast[1])            # a different seed, a different batch
    with pytest.raises(ValueError, match="size"):
        p.stochastic_gradient(w, np.random.default_rng(0), 0)
    with pytest.raises(ValueError, match="w must be a vector"):
        p.stochastic_gradient(w[:-1], np.random.default_rng(0), 8)


def test_hessian_is_the_derivative_of_the_gradient_and_its_products_agree():
    p = make_problem(seed=2, n_train=300, n_test=10)
    rng = np.random.default_rng(0)
    w = 0.1 * rng.normal(size=p.dim)
    h = p.hessian(w)
    idx = np.arange(p.n_train)
    for j in (0, 17, p.dim - 1):
        e = np.zeros(p.dim)
        e[j] = 1e-6
        fd = (p.gradient(w + e, idx) - p.gradient(w - e, idx)) / 2e-6
        np.testing.assert_allclose(h[:, j], fd, atol=1e-7)
    v = rng.normal(size=p.dim)
    np.testing.assert_allclose(p.hessian_vector(w, v), h @ v, atol=1e-12)
    assert p.sharpness(w) == pytest.approx(np.linalg.eigvalsh(h)[-1], rel=1e-8)


def test_the_optimum_has_zero_gradient_and_the_lowest_loss():
    p = make_problem(seed=0)
    w = p.optimum
    assert np.linalg.norm(p.gradient(w, np.arange(p.n_train))) < 1e-6
    assert p.loss(w) == pytest.approx(0.532, abs=5e-4) and p.error(w) == pytest.approx(0.2075)
    rng = np.random.default_rng(1)
    assert all(p.loss(w + 0.01 * rng.normal(size=p.dim)) > p.loss(w) for _ in range(5))
