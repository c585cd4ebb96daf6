"""The stale quadratic of chapter 5's exercise: its stability limit against the recurrence itself."""

import math

import numpy as np
import pytest

from commlib.sgd import stale_quadratic as sq


def _iterate(a: float, tau: int, updates: int) -> np.ndarray:
    """w_{j+1} = w_j - a w_{j-tau}, every earlier iterate at the start value 1."""
    w = [1.0] * (tau + 1)
    for _ in range(updates):
        w.append(w[-1] - a * w[-1 - tau])
    return np.abs(np.array(w))


@pytest.mark.parametrize("tau", [0, 1, 2, 3, 6])
def test_limit_separates_decay_from_growth(tau):
    """Just below the limit the iterates die out, just above it they grow: the limit is where the recurrence turns."""
    limit = sq.largest_stable_step(tau)
    assert _iterate(0.97 * limit, tau, 4000)[-50:].max() < 1e-3
    assert _iterate(1.03 * limit, tau, 4000)[-50:].max() > 1e3


def test_hand_derivations():
    """Without staleness the limit is 2; one update stale, the roots of z^2 - z + a have |z|^2 = a, so it is 1."""
    assert sq.largest_stable_step(0) == pytest.approx(2.0, abs=1e-8)
    assert sq.largest_stable_step(1) == pytest.approx(1.0, abs=1e-8)
    assert sq.spectral_radius(0.5, 1) == pytest.approx(math.sqrt(0.5))


def test_limit_falls_with_staleness():
    limits = [sq.largest_stable_step(t) for t in range(10)]
    assert all(b < a for a, b in zip(limits, limits[1:]))


def test_radius_matches_the_iterates():
    """The spectral radius is the long-run shrink factor per update of the iterates."""
    w = _iterate(0.3, 2, 600)
    envelope = w[-40:].max() / w[-340:-300].max()        # peaks, not single iterates: the roots are complex
    assert envelope ** (1 / 300) == pytest.approx(sq.spectral_radius(0.3, 2), rel=5e-3)


@pytest.mark.parametrize("bad", [{"step": 0.0, "staleness": 1}, {"step": 0.5, "staleness": -1}])
def test_bad_input_names_the_parameter(bad):
    with pytest.raises(ValueError, match=next(k for k, v in bad.items() if v in (0.0, -1))):
        sq.spectral_radius(**bad)


@pytest.mark.parametrize("tau", [0, 1, 2, 3, 5, 8, 16, 40])
def test_closed_form_is_the_bisected_limit(tau):
    """2 sin(pi / (2 (2 tau + 1))) is the limit the bisection finds, and tends to pi / (2 tau + 1)."""
    assert sq.stable_step_closed_form(tau) == pytest.approx(sq.largest_stable_step(tau), abs=1e-8)
    assert sq.stable_step_closed_form(tau) * (2 * tau + 1) / math.pi == pytest.approx(1.0, abs=2.0 / (2 * tau + 1) ** 2)


@pytest.mark.parametrize("workers", [4, 16])
def test_random_staleness_is_far_more_forgiving_than_a_constant_one(workers):
    """Referee r2 M1: under asynchronous SGD (random, geometric staleness of mean n - 1) the quadratic stays stable at
    steps far beyond the limit of a staleness that is always n - 1 updates old, on every seed."""
    for seed in (0, 1):
        limit = sq.random_staleness_stable_step(workers, updates=8000, seed=seed)
        assert limit > 2 * sq.stable_step_closed_form(workers - 1)
        assert limit < 2.0


def test_random_staleness_with_one_learner_is_plain_gradient_descent():
    """One learner is never stale: the limit is that of tau = 0, 2 (to the bisection's resolution)."""
    assert sq.random_staleness_stable_step(1, updates=2000) == pytest.approx(2.0, rel=0.02)


def test_random_staleness_limit_falls_with_the_learners():
    limits = [sq.random_staleness_stable_step(n, updates=8000) for n in (4, 16, 64)]
    assert limits[0] > limits[1] > limits[2]


def _simulated_variance(a: float, tau: int, chains: int = 4000, updates: int = 6000, burn: int = 2000,
                        seed: int = 0) -> float:
    """The noisy stale iteration w_{j+1} = w_j - a w_{j-tau} + a xi_j run on many independent chains at once (seeded
    unit-variance Gaussian noise), its variance pooled over chains and the updates after ``burn``."""
    rng = np.random.default_rng(seed)
    w = np.zeros((updates + tau + 1, chains))
    acc, count = 0.0, 0
    for j in range(tau, updates + tau):
        w[j + 1] = w[j] - a * w[j - tau] + a * rng.standard_normal(chains)
        if j - tau >= burn:
            acc += float(np.mean(w[j + 1] ** 2))
            count += 1
    return acc / count


@pytest.mark.parametrize("a,tau", [(0.05, 15), (0.3, 2)])
def test_noise_gain_matches_a_simulation(a, tau):
    """The impulse-response sum is the variance a seeded simulation of the recursion reaches, over that without delay."""
    gain = _simulated_variance(a, tau) / _simulated_variance(a, 0, seed=1)
    assert gain == pytest.approx(sq.noise_variance_gain(a, tau), rel=0.05)


def test_noise_gain_grows_towards_the_limit():
    """No gain without staleness; with it, the gain grows steadily and without bound as the step nears the limit."""
    assert sq.noise_variance_gain(0.7, 0) == pytest.approx(1.0)
    limit = sq.largest_stable_step(15)
    gains = [sq.noise_variance_gain(f * limit, 15) for f in (0.1, 0.3, 0.5, 0.7, 0.9, 0.99)]
    assert all(b > a for a, b in zip(gains, gains[1:]))
    assert gains[0] > 1.0 and gains[-1] > 50.0


@pytest.mark.parametrize("a,tau", [(0.2, 15), (2.5, 0), (1.0, 1)])
def test_noise_gain_refuses_an_unstable_step(a, tau):
    with pytest.raises(ValueError, match="not stable"):
        sq.noise_variance_gain(a, tau)


def test_random_staleness_noise_gain_is_one_without_staleness():
    """One learner always reads the latest parameters: the simulation is the undelayed iteration, gain 1."""
    assert sq.random_staleness_noise_gain(0.2, 1, updates=200_000) == pytest.approx(1.0, rel=0.05)


def test_random_staleness_noise_gain_tracks_a_fixed_delay_at_small_steps():
    """Far inside both limits, random staleness of mean n - 1 amplifies the noise nearly as a fixed delay n - 1 does,
    though its stability limit is several times larger."""
    fixed = sq.noise_variance_gain(0.021, 15)
    random = sq.random_staleness_noise_gain(0.021, 16, updates=400_000)
    assert 1.0 < random < fixed and random == pytest.approx(fixed, rel=0.15)
    assert sq.random_staleness_stable_step(16, updates=5000) > 3 * sq.largest_stable_step(15)


@pytest.mark.parametrize("bad", [{"step": 0.0}, {"workers": 0}, {"updates": 5}])
def test_random_staleness_noise_gain_refuses_bad_input(bad):
    args = {"step": 0.1, "workers": 4, "updates": 1000} | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        sq.random_staleness_noise_gain(**args)


def test_random_staleness_noise_gain_parts_from_a_fixed_delay_near_its_limit():
    # 256 learners at 0.9 of the fixed delay's limit: the fixed delay's gain is about 11, random staleness's far less
    step = 0.9 * sq.stable_step_closed_form(255)
    assert sq.noise_variance_gain(step, 255) > 8
    assert sq.random_staleness_noise_gain(step, 256, updates=300_000) < 4
