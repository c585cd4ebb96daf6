r"""Ring all-reduce: reduce-scatter, then all-gather, around one ring (Patarasuk & Yuan 2009).

With p ranks and M bytes: :math:`2(p-1)\alpha + 2\frac{p-1}{p}M\beta + \frac{p-1}{p}M\gamma`;
every rank sends :math:`2\frac{p-1}{p}M`, the lower bound when ranks only exchange among themselves.

>>> terms(1200, 4)
CostTerms(steps=6, bytes=1800.0, reduced=900.0)
"""

from __future__ import annotations

from .base import ZERO, Algorithm, CostTerms


def terms(nbytes: float, n: int) -> CostTerms:
    """Reduce-scatter then all-gather, each n - 1 steps of M/n bytes."""
    if n == 1:
        return ZERO
    f = (n - 1) / n
    return CostTerms(2 * (n - 1), 2 * f * nbytes, f * nbytes)


def schedule(eng, n: int, length: int) -> None:
    """Cut the vector into n pieces; n - 1 reduce-scatter steps, then n - 1 all-gather steps."""
    from ..engine import split_bounds
    from ..schedules import ring_phase

    bounds = split_bounds(0, length, n)
    ring = list(range(n))
    ring_phase(eng, [ring], [bounds], "rs", "reduce-scatter", lambda gi, c: c)
    ring_phase(eng, [ring], [bounds], "ag", "all-gather", lambda gi, c: c)


def fast(trace, rows, f):
    """The same ring without per-step buffers: its 2 n (n - 1) messages recorded as columns, and the
    reduced vector computed rank by rank in each piece's ring order (bitwise the step-by-step result)."""
    import numpy as np

    from ..engine import split_bounds
    from ..schedules import ring_messages, ring_reduce

    n = len(rows)
    if n > 1:
        ring_messages(trace, n, np.diff(split_bounds(0, rows[0].size, n)), rows[0].dtype.itemsize)
    return ring_reduce(rows, f)


ALGORITHM = Algorithm(
    name="ring", label="ring", collective="all_reduce", terms=terms, schedule=schedule, fast=fast,
    most_sent=lambda nbytes, n: 2 * (n - 1) / n * nbytes, flows_per_host=1,
    step_bytes=lambda nbytes, n: (nbytes / n,) * (2 * (n - 1)),
    source="Patarasuk & Yuan (2009)",
)
