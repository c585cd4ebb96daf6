r"""Binomial-tree all-reduce, unpipelined: binomial reduce to rank 0, then binomial broadcast.

Thakur, Rabenseifner & Gropp (2005) sec. 4.1-4.2:
:math:`2\lceil\log_2 p\rceil(\alpha + M\beta) + \lceil\log_2 p\rceil M\gamma`.

>>> terms(100.0, 5)
CostTerms(steps=6, bytes=600.0, reduced=300.0)
"""

from __future__ import annotations

from .base import ZERO, Algorithm, CostTerms, log2_ceil


def terms(nbytes: float, n: int) -> CostTerms:
    """The whole message on every one of the 2 ceil(log2 n) steps."""
    if n == 1:
        return ZERO
    d = log2_ceil(n)
    return CostTerms(2 * d, 2 * d * nbytes, d * nbytes)


def schedule(eng, n: int, length: int) -> None:
    """Binomial reduce to rank 0, then binomial broadcast from it, whole vectors."""
    from ..schedules import tree_bcast_steps, tree_reduce_steps, whole

    for pairs in tree_reduce_steps(n, 0):
        eng.run([whole(s, d, True) for s, d in pairs], "reduce")
    for pairs in tree_bcast_steps(n, 0):
        eng.run([whole(s, d, False) for s, d in pairs], "broadcast")


ALGORITHM = Algorithm(
    name="tree", label="binomial tree (unpipelined)", collective="all_reduce", terms=terms, schedule=schedule,
    step_bytes=lambda nbytes, n: (float(nbytes),) * (2 * log2_ceil(n) if n > 1 else 0),
    source="Thakur, Rabenseifner & Gropp (2005), sec. 4.1-4.2",
)
