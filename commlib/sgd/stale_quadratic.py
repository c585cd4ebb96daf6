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
"""

from __future__ import annotations

import numpy as np

from ..units import check_count, check_positive

__all__ = ["spectral_radius", "largest_stable_step", "stable_step_closed_form"]


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
