r"""Halving-doubling (Rabenseifner): recursive-halving reduce-scatter, recursive-doubling all-gather.

Thakur, Rabenseifner & Gropp (2005) sec. 4.4; Rabenseifner (2004):
:math:`2\log_2 p\,\alpha + 2\frac{p-1}{p}M\beta + \frac{p-1}{p}M\gamma`, plus the fold-in and
fold-out of whole vectors when p is not a power of two.

>>> terms(800, 8)
CostTerms(steps=6, bytes=1400.0, reduced=700.0)
"""

from __future__ import annotations

import math

from .base import ZERO, Algorithm, CostTerms, log2_floor
from .recursive_doubling import fold_terms


def terms(nbytes: float, n: int) -> CostTerms:
    """2 log2 p' steps moving 2 (p'-1)/p' M, plus the fold when n is not a power of two."""
    if n == 1:
        return ZERO
    d = log2_floor(n)
    q = 1 << d
    f = (q - 1) / q
    return CostTerms(2 * d, 2 * f * nbytes, f * nbytes) + fold_terms(nbytes, n)


def swap_fold_terms(nbytes: float, n: int) -> CostTerms:
    r"""Halving-doubling with the fold that swaps halves (Rabenseifner & Traff 2004), for any n.

    Each of the r = n - p' extra ranks pairs with one of the first r ranks and the pair swaps halves, each adding
    one half (a start-up, M/2 each way); the pair then acts as one rank whose two halves sit on two ports, so
    halving-doubling's first and last steps move at most M/2 through each port, and the rest runs on one of them;
    at the end the pair swaps its finished halves. With p' the largest power of two not above n:
    :math:`a = 2\log_2 p' + 2`, :math:`b = \left(2\frac{p'-1}{p'} + 1\right)M`, against the textbook fold's
    :math:`\left(2\frac{p'-1}{p'} + 2\right)M`; on a power of two, :func:`terms`.

    >>> swap_fold_terms(800, 8) == terms(800, 8), swap_fold_terms(800, 12), terms(800, 12)
    (True, CostTerms(steps=8, bytes=2200.0, reduced=1100.0), CostTerms(steps=8, bytes=3000.0, reduced=1500.0))
    """
    if n == 1 or n & (n - 1) == 0:
        return terms(nbytes, n)
    q = 1 << log2_floor(n)
    f = (q - 1) / q
    return CostTerms(2 * log2_floor(n) + 2, (2 * f + 1) * nbytes, (f + 0.5) * nbytes)


def schedule(eng, n: int, length: int) -> None:
    """Fold in, halve at distance p'/2, ..., 1, double back at 1, ..., p'/2, fold out."""
    from ..schedules import halving_doubling

    halving_doubling(eng, n, length)


def step_bytes(nbytes: float, n: int) -> tuple[float, ...]:
    """Each step's message: the fold-in (M), halves M/2, ..., M/p', doubles back M/p', ..., M/2, the fold-out (M)."""
    if n == 1:
        return ()
    d = log2_floor(n)
    halves = tuple(nbytes / 2 ** i for i in range(1, d + 1))
    fold = () if n & (n - 1) == 0 else (float(nbytes),)
    return fold + halves + halves[::-1] + fold


ALGORITHM = Algorithm(
    name="halving_doubling", label="halving-doubling (Rabenseifner)", collective="all_reduce", terms=terms,
    schedule=schedule, constraint="any n; not a power of two costs a fold-in and a fold-out",
    most_sent=lambda nbytes, n: 2 * (n - 1) / n * nbytes if n & (n - 1) == 0 else math.nan,
    step_bytes=step_bytes, pieces=lambda n: math.lcm(n, 1 << log2_floor(n)),   # halves among the largest 2^k <= n
    swap_fold=swap_fold_terms,
    source="Rabenseifner (2004); Thakur, Rabenseifner & Gropp (2005), sec. 4.4",
)
