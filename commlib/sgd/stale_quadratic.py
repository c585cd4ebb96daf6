r"""Gradient descent with a fixed staleness on a quadratic: when does it still converge?

On the one-parameter quadratic :math:`l(w) = \lambda w^2 / 2` the gradient is :math:`\lambda w`, and
a gradient that is always :math:`\tau` updates old turns the update of chapter 5,
:math:`w_{j+1} = w_j - \eta\,\nabla l(w_{j-\tau})`, into the linear recurrence

.. math:: w_{j+1} = w_j - \zeta\, w_{j-\tau}, \qquad \zeta = \eta\lambda .

Its solutions are sums of :math:`z^j` over the roots :math:`z` of the characteristic polynomial
:math:`z^{\tau+1} - z^{\tau} + \zeta`, so it converges from every start exactly when every root lies inside
the unit circle (spectral radius below one). Without staleness that is :math:`0 < \zeta < 2`; this module
finds the limit for any :math:`\tau` numerically, by bisection on the spectral radius, and gives its closed form
:math:`2\sin\big(\pi / (2(2\tau + 1))\big)`, about :math:`\pi/(2\tau + 1)` once :math:`\tau` is a few updates.

The step :math:`\zeta` depends on the curvature :math:`\lambda`: on a loss with many parameters each
eigendirection of the Hessian has its own, and the sharpest sets the largest stable rate.

>>> round(largest_stable_step(0), 6), round(largest_stable_step(1), 6)
(2.0, 1.0)

That limit holds for a staleness that never varies. Chapter 5's asynchronous SGD draws it at random: each
update is the push of a learner drawn at random, so the staleness is geometric with mean :math:`n - 1`.
:func:`random_staleness_stable_step` simulates that protocol on the quadratic; its limit is far looser than
the constant staleness of the same mean.
"""

from __future__ import annotations

import functools

import numpy as np

from ..units import check_count, check_positive

__all__ = ["spectral_radius", "largest_stable_step", "stable_step_closed_form", "random_staleness_stable_step",
           "noise_variance_gain", "noise_floor", "random_staleness_noise_gain"]


def _radius(a: float, tau: int) -> float:
    """Largest root modulus of z^(tau+1) - z^tau + a."""
    coefficients = np.zeros(tau + 2)
    coefficients[0] = 1.0
    coefficients[1] -= 1.0
    coefficients[-1] += a          # with tau = 0 the polynomial is z - 1 + a
    return float(np.max(np.abs(np.roots(coefficients))))


def spectral_radius(step: float, staleness: int) -> float:
    r"""The factor by which :math:`|w_j|` shrinks per update in the long run, for ``step`` :math:`a = \eta\lambda`
    (dimensionless, > 0) and a gradient ``staleness`` :math:`\tau` updates old (an integer >= 0).

    >>> round(spectral_radius(0.5, 0), 6), round(spectral_radius(0.5, 1), 6)
    (0.5, 0.707107)
    """
    return _radius(check_positive("step", step), check_count("staleness", staleness, 0))


def largest_stable_step(staleness: int, tol: float = 1e-10) -> float:
    r"""The largest :math:`\zeta = \eta\lambda` for which the stale iteration still converges (spectral radius < 1).

    The radius is below one for small :math:`\zeta` and reaches one at the limit; bisection between 0 and 2,
    the limit without staleness, finds it to within ``tol``.

    >>> [round(largest_stable_step(t), 3) for t in range(4)]
    [2.0, 1.0, 0.618, 0.445]
    """
    tau = check_count("staleness", staleness, 0)
    tol = check_positive("tol", tol)
    lo, hi = 0.0, 2.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _radius(mid, tau) < 1.0 else (lo, mid)
    return (lo + hi) / 2



def stable_step_closed_form(staleness: int) -> float:
    r"""The same limit in closed form: :math:`2\sin\big(\pi / (2(2\tau + 1))\big)`.

    At the limit a root sits on the unit circle, :math:`z = e^{i\theta}`; :math:`z^{\tau}(z - 1) = -\zeta`
    asks for a real, negative left side, which first happens at :math:`\theta = \pi/(2\tau + 1)`, where
    :math:`|z - 1| = 2\sin(\theta/2)`. For large :math:`\tau` the sine is its argument: :math:`\pi/(2\tau + 1)`.

    >>> [round(stable_step_closed_form(t), 3) for t in range(4)]
    [2.0, 1.0, 0.618, 0.445]
    """
    tau = check_count("staleness", staleness, 0)
    return 2.0 * float(np.sin(np.pi / (2 * (2 * tau + 1))))


def _random_staleness_grow(steps: np.ndarray, workers: int, updates: int, seed: int) -> np.ndarray:
    """For each step in ``steps``: whether |w| ends above its start after ``updates`` updates of asynchronous SGD
    on the quadratic, ``workers`` learners, one learner drawn at random per update (the same draws for every step)."""
    rng = np.random.default_rng(seed)
    pushers = rng.integers(0, workers, size=updates)
    history = np.empty((updates + 1, steps.size))
    history[0] = 1.0
    read = np.zeros(workers, dtype=np.int64)        # the update each learner read its parameters at
    log_scale = np.zeros(steps.size)                # the recent history is rescaled often, so never overflows
    for j, i in enumerate(pushers):
        history[j + 1] = history[j] - steps * history[read[i]]
        read[i] = j + 1
        if (j + 1) % 32 == 0:
            start = int(read.min())                  # no learner reads further back than this
            m = np.max(np.abs(history[max(j + 1 - 32, 0):j + 2]), axis=0)
            m = np.where(m > 0, m, 1.0)
            history[start:j + 2] /= m
            log_scale += np.log(m)
    tail = np.max(np.abs(history[-max(workers, 64):]), axis=0)
    return log_scale + np.log(np.maximum(tail, 1e-300)) > 0.0


@functools.lru_cache(maxsize=64)  # the chapter asks for the same limits in its table and its headroom
def random_staleness_stable_step(workers: int, updates: int = 20_000, seed: int = 0, rounds: int = 3,
                                 points: int = 24) -> float:
    r"""The largest :math:`\zeta = \eta\lambda` for which asynchronous SGD on the quadratic, with ``workers``
    learners and exponential compute times, still shrinks :math:`|w|` over ``updates`` updates (seeded).

    Each update applies the gradient of a learner drawn at random (the exponential is memoryless) and that
    learner reads the new parameters: the chapter's protocol, whose staleness is geometric with mean
    :math:`n - 1`. Each round tries ``points`` steps spread evenly (in log) over the bracket and keeps the two
    around the first that grows; ``rounds`` rounds narrow it.

    >>> 1.0 < random_staleness_stable_step(4, updates=5000) < 1.2   # constant tau = 3 allows only 0.445
    True
    """
    n = check_count("workers", workers, 1)
    u = check_count("updates", updates, 1)
    lo, hi = 1e-4, 2.0
    for _ in range(check_count("rounds", rounds, 1)):
        steps = np.geomspace(lo, hi, check_count("points", points, 3))
        grows = _random_staleness_grow(steps, n, u, seed)
        first = int(np.argmax(grows)) if grows.any() else steps.size - 1
        lo, hi = (steps[max(first - 1, 0)], steps[first]) if grows.any() else (steps[-2], steps[-1])
    return float(np.sqrt(lo * hi))


def noise_floor(step: float) -> float:
    r"""The loss a constant rate leaves above the minimum along one eigendirection, per unit of
    :math:`\eta\sigma^2`: SGD's noise floor on a quadratic, without staleness.

    Take the direction's curvature :math:`\lambda` and a gradient with noise of variance :math:`\sigma^2`:
    :math:`w_{j+1} = (1 - \zeta) w_j - \eta\,\psi_j` with :math:`\zeta = \eta\lambda`. In the long run
    :math:`\operatorname{Var} w = \eta^2\sigma^2 / (1 - (1 - \zeta)^2) = \eta\sigma^2 / (\lambda (2 - \zeta))`, so the
    loss excess :math:`\lambda \operatorname{Var} w / 2` is :math:`\eta\sigma^2 / (2(2 - \zeta))`. For small steps it is
    about :math:`\eta\sigma^2/4`, in proportion to the rate times the gradient noise; near the stability limit
    :math:`\zeta = 2` the factor :math:`1/(2 - \zeta)` grows without bound. Under the linear scaling rule the rate
    grows with the batch and the noise variance falls with it, so :math:`\eta\sigma^2` stays put and only that
    factor changes.

    ``step`` is :math:`\zeta` (> 0 and below 2, else ``ValueError``).

    >>> noise_floor(1.0)
    0.5
    >>> round(noise_floor(1.76) / noise_floor(0.022), 2)   # 0.88 of the limit against a small step
    8.24
    """
    z = check_positive("step", step)
    if z >= 2.0:
        raise ValueError(f"step must be below 2 (the stability limit), got {step}")
    return 1.0 / (2.0 * (2.0 - z))


def random_staleness_noise_gain(step: float, workers: int, updates: int = 1_000_000, seed: int = 0) -> float:
    r"""The noise gain of :func:`noise_variance_gain`, but for the random staleness of asynchronous SGD with
    ``workers`` learners (the protocol of :func:`random_staleness_stable_step`), estimated by simulation.

    Each update applies the noisy gradient of a learner drawn at random,
    :math:`w_{j+1} = w_j - \zeta\, w_{r} + \zeta\,\xi_j`, where :math:`r` is the update at which that learner last
    read the parameters; the learner then reads the new ones. The variance of :math:`w` over the run (after the
    first tenth, which still remembers the start) is divided by the variance without staleness,
    :math:`\zeta/(2 - \zeta)` times that of the noise. Random staleness has a far larger stability limit than a fixed
    delay of the same mean, yet at steps small against the fixed delay's limit (:math:`\zeta (n - 1)` well below one)
    it amplifies the noise about as much: a stability limit says when the echoes grow without bound, not how loud
    they are before that. Nearer the fixed delay's limit the two part: there the fixed delay's gain soars towards
    infinity, while random staleness's grows slowly (with 256 learners at :math:`\zeta` = 0.011, about 3.7 against
    a fixed delay past its limit).

    ``step`` is :math:`\zeta = \eta\lambda` (> 0); ``updates`` sets the precision (about a per cent at the
    default for steps near 0.01, the samples being correlated over about :math:`1/\zeta` updates); seeded.

    >>> round(random_staleness_noise_gain(0.1, 1, updates=200_000), 1)     # one learner: never stale, no gain
    1.0
    >>> 1.2 < random_staleness_noise_gain(0.021, 16, updates=200_000) < 1.4  # a fixed delay of 15 gives 1.39
    True
    """
    a = check_positive("step", step)
    n = check_count("workers", workers, 1)
    u = check_count("updates", updates, 10)
    rng = np.random.default_rng(seed)
    pushers = rng.integers(0, n, size=u).tolist()
    noise = (a * rng.standard_normal(u)).tolist()
    w = [0.0] * (u + 1)
    read = [0] * n
    for j in range(u):
        i = pushers[j]
        w[j + 1] = w[j] - a * w[read[i]] + noise[j]
        read[i] = j + 1
    tail = np.asarray(w[u // 10:])
    return float(np.mean(tail ** 2)) * (2.0 - a) / a


def noise_variance_gain(step: float, staleness: int, tol: float = 1e-12, max_terms: int = 10_000_000) -> float:
    r"""How much more a fixed delay amplifies gradient noise: the stationary variance of the noisy stale iteration
    divided by that of the same step without staleness.

    Add noise to each gradient of the stale quadratic, :math:`w_{j+1} = w_j - \zeta\, w_{j-\tau} + \zeta\,\xi_j`,
    with the :math:`\xi_j` independent, mean zero, variance :math:`\sigma^2`. The iteration is linear, so
    :math:`w_j` is a weighted sum of the past noise, :math:`w_j = \sum_k h_k \xi_{j-k}`, where :math:`h_k` is how
    far one unit of noise still moves the parameters :math:`k` updates later (the *impulse response*). Independent
    noise adds in variance: in the long run :math:`\operatorname{Var} w_j = \sigma^2 \sum_k h_k^2`. Without
    staleness :math:`h_k = \zeta (1 - \zeta)^{k-1}` and the sum is :math:`\zeta / (2 - \zeta)`; the gain is the
    stale sum over that one, so neither :math:`\sigma^2` nor the unit of :math:`w` enters.

    A stale iteration rings: its roots sit closer to the unit circle than :math:`1 - \zeta` does, so each unit
    of noise echoes for longer, and the echoes add up. The gain grows steadily as ``step`` nears
    :func:`largest_stable_step` and is infinite at it, where the echoes never die out: a step well inside the
    stability limit can still cost accuracy, because the parameters jitter more around the optimum.

    ``step`` is :math:`\zeta = \eta\lambda` (> 0 and below the limit for ``staleness``, else ``ValueError``);
    the sum is truncated once the terms still to come add less than ``tol`` of it (in the long run the terms shrink
    like the spectral radius :math:`r` to the power :math:`k`, so each further block of :math:`\tau + 1` terms adds
    about :math:`r^{2(\tau+1)}` times the last one); ``max_terms`` caps the work (``RuntimeError`` if the sum has not
    converged by then).

    >>> noise_variance_gain(0.5, 0)            # no staleness: no gain
    1.0
    >>> round(noise_variance_gain(0.05, 15), 2)  # about half the limit, 0.101, of a gradient 15 updates old
    2.32
    """
    from scipy.signal import lfilter

    a = check_positive("step", step)
    tau = check_count("staleness", staleness, 0)
    tol = check_positive("tol", tol)
    radius = _radius(a, tau)
    if radius >= 1.0:
        raise ValueError(f"step {a:g} is not stable at staleness {tau} (largest stable step "
                         f"{stable_step_closed_form(tau):.4g}): the noise's variance grows without bound")
    denominator = np.zeros(tau + 2)
    denominator[:2] = (1.0, -1.0)
    denominator[-1] += a                      # w_j - w_{j-1} + a w_{j-1-tau} = a xi_{j-1}
    terms = max(4 * (tau + 1), int(np.ceil(np.log(tol) / np.log(radius))) + tau + 1)
    while True:
        impulse = np.zeros(terms)
        impulse[0] = 1.0
        h2 = lfilter([0.0, a], denominator, impulse) ** 2
        total = float(h2.sum())
        # the terms still to come: the last block of tau + 1 terms, shrinking by r^(2 (tau + 1)) per block
        last = float(h2[-(tau + 1):].sum())
        if last / (1.0 - radius ** (2 * (tau + 1))) <= tol * total:
            return round(total * (2.0 - a) / a, 12)
        if terms >= max_terms:
            raise RuntimeError(f"the sum did not converge within {max_terms} terms")
        terms = min(2 * terms, max_terms)
