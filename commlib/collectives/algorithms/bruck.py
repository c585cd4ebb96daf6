r"""Bruck's all-reduce: Bruck's all-gather run backwards as a reduce-scatter, then Bruck's all-gather, on any n.

Bruck et al. (1997) give the all-gather ("concatenation") of n blocks in :math:`\lceil\log_2 n\rceil` steps: at
distance :math:`d = 1, 2, 4, \ldots` a rank sends the :math:`\min(d, n - d)` blocks it has gathered so far, so the
steps together move :math:`(n-1)` blocks, the least any all-gather can. Run backwards, each copy becoming a sum, the
same steps are a reduce-scatter of a sum (any commutative, associative operation), so the all-reduce takes

.. math:: a = 2\lceil\log_2 n\rceil, \qquad b = 2\frac{n-1}{n}M, \qquad \frac{n-1}{n}M \text{ reduced},

the ring's bytes in log-step start-ups on every n, with no fold. The price, which the alpha-beta model does not
count: a message's blocks are not contiguous, and Bruck's description rotates the blocks locally before and after.

>>> terms(1300, 13)
CostTerms(steps=8, bytes=2400.0, reduced=1200.0)
>>> step_bytes(700, 7)                 # distances 4, 2, 1 (3, 2, 1 blocks of M/7), then back
(300.0, 200.0, 100.0, 100.0, 200.0, 300.0)
"""

from __future__ import annotations

from .base import ZERO, Algorithm, CostTerms, log2_ceil


def terms(nbytes: float, n: int) -> CostTerms:
    """2 ceil(log2 n) steps moving the ring's 2 (n-1)/n M; (n-1)/n M reduced."""
    if n == 1:
        return ZERO
    f = (n - 1) / n
    return CostTerms(2 * log2_ceil(n), 2 * f * nbytes, f * nbytes)


def step_bytes(nbytes: float, n: int) -> tuple[float, ...]:
    """Each step's message: min(d, n - d) blocks of M/n at distance d = 2^(k-1), ..., 1, then 1, ..., 2^(k-1)."""
    gather = tuple(min(1 << k, n - (1 << k)) * nbytes / n for k in range(log2_ceil(n)))
    return gather[::-1] + gather


def schedule(eng, n: int, length: int) -> None:
    """Reduce-scatter at distance 2^(k-1), ..., 1, all-gather at 1, ..., 2^(k-1) (blocks in place)."""
    from ..schedules import bruck_allreduce

    bruck_allreduce(eng, n, length)


ALGORITHM = Algorithm(
    name="bruck", label="Bruck (reduce-scatter + all-gather)", collective="all_reduce", terms=terms,
    schedule=schedule, constraint="any n >= 1; a sum, or any commutative operation",
    most_sent=lambda nbytes, n: 2 * (n - 1) / n * nbytes, step_bytes=step_bytes,
    source="Bruck, Ho, Kipnis, Upfal & Weathersby (1997): the all-gather, and backwards the reduce-scatter",
    short="Bruck's all-reduce",
)
