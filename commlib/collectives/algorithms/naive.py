r"""Naive all-reduce through a master: every rank sends to rank 0, which sends the result back.

The master's link serialises :math:`2(p-1)` messages of M:
:math:`2(p-1)(\alpha + M\beta) + (p-1)M\gamma`.

>>> terms(10.0, 4)
CostTerms(steps=6, bytes=60.0, reduced=30.0)
"""

from __future__ import annotations

from .base import ZERO, Algorithm, CostTerms


def terms(nbytes: float, n: int) -> CostTerms:
    """p - 1 messages in, p - 1 out, one at a time through the master's port."""
    if n == 1:
        return ZERO
    return CostTerms(2 * (n - 1), 2 * (n - 1) * nbytes, (n - 1) * nbytes)


def schedule(eng, n: int, length: int) -> None:
    """Rank 0 folds in one rank per step, then sends the result to one rank per step."""
    from ..schedules import whole

    for k in range(1, n):
        eng.run([whole(k, 0, True)], "reduce")
    for k in range(1, n):
        eng.run([whole(0, k, False)], "broadcast")


ALGORITHM = Algorithm(
    name="naive", label="naive (through a master)", collective="all_reduce", terms=terms, schedule=schedule,
    most_sent=lambda nbytes, n: (n - 1) * nbytes,   # the master sends the result n - 1 times
    source="the master-worker baseline of chapter 1",
)
