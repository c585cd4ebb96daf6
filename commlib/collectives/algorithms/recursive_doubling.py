r"""Recursive doubling: at distance 1, 2, 4, ... partners swap whole vectors and both combine.

Thakur, Rabenseifner & Gropp (2005) sec. 4.4: :math:`\log_2 p(\alpha + M\beta + M\gamma)`.
With p not a power of two, the p - p' extra ranks (p' the largest power of two below p) fold
their vector into a partner first and get the result back at the end: two more full-message
steps and one more reduction.

>>> terms(100.0, 8), terms(100.0, 6)
(CostTerms(steps=3, bytes=300.0, reduced=300.0), CostTerms(steps=4, bytes=400.0, reduced=300.0))
"""

from __future__ import annotations

import math

from .base import ZERO, Algorithm, CostTerms, log2_floor


def fold_terms(nbytes: float, n: int) -> CostTerms:
    """Fold-in and fold-out of the extra ranks when n is not a power of two."""
    return ZERO if n & (n - 1) == 0 else CostTerms(2, 2 * nbytes, nbytes)


def terms(nbytes: float, n: int) -> CostTerms:
    """log2 p' exchanges of the whole vector, plus the fold when n is not a power of two."""
    if n == 1:
        return ZERO
    d = log2_floor(n)
    return CostTerms(d, d * nbytes, d * nbytes) + fold_terms(nbytes, n)


def schedule(eng, n: int, length: int) -> None:
    """Fold in, exchange with partner rank ^ 1, ^ 2, ^ 4, ..., fold out."""
    from ..schedules import recursive_doubling

    recursive_doubling(eng, n)


ALGORITHM = Algorithm(
    name="recursive_doubling", label="recursive doubling", collective="all_reduce", terms=terms,
    schedule=schedule, constraint="any n; not a power of two costs a fold-in and a fold-out",
    most_sent=lambda nbytes, n: math.log2(n) * nbytes if n & (n - 1) == 0 else math.nan,
    step_bytes=lambda nbytes, n: (float(nbytes),) * (terms(nbytes, n).steps),
    source="Thakur, Rabenseifner & Gropp (2005), sec. 4.4",
)
