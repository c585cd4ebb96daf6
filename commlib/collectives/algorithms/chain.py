r"""Pipelined chain reduce: the serial chain of chapter 1, cut into q chunks that follow one another.

The ranks form a chain n - 1 -> n - 2 -> ... -> 0 (the root). The vector is cut into q chunks of
M/q. At step t, every rank i >= 1 that holds a finished partial sum of chunk j = t - (n - 1 - i)
sends it to rank i - 1, which adds it to its own chunk j; rank n - 1 starts a chunk a step, and the
root finishes chunk j at step n - 2 + j. Each rank's link is full duplex, so a rank takes in chunk
j + 1 while it sends chunk j on: one message in and one out per step, n - 2 + q steps in all:

.. math:: T = (n-2+q)\left(\alpha + \frac{M}{q}\beta\right) + \frac{n-2+q}{q}M\gamma,

q = 1 being the unpipelined chain, :math:`(n-1)(\alpha + M\beta)`. The bandwidth term falls towards
:math:`M\beta` as q grows: the root takes in the vector only once, against the
:math:`2\frac{n-1}{n}M` of reduce-scatter + gather and the :math:`\lceil\lg n\rceil M` of the binomial
tree, while the start-ups grow; :func:`best_chunks` finds the q that balances them. NCCL's reduce
runs on such a chain, its ring with the root at the end.

The record is not in the reduce registry (:data:`commlib.collectives.algorithms.COLLECTIVES`): chapter 1
sets it beside the two reduces the calculator offers, at its best q, and its record serves the cost,
the schedule and the tests.

>>> pipelined_terms(12.0, 4, chunks=3)        # (4 - 2 + 3) messages of 4 B
CostTerms(steps=5, bytes=20.0, reduced=20.0)
>>> pipelined_terms(12.0, 4) == CostTerms(3, 36.0, 36.0)   # q = 1: the chain, one whole vector a step
True
"""

from __future__ import annotations

import math

from ...units import check_count
from .base import ZERO, Algorithm, CostTerms, check_chunks


def pipelined_terms(nbytes: float, n: int, chunks: int | None = None) -> CostTerms:
    """n - 2 + q steps, each moving (and adding) one chunk of M/q along every link of the chain at once."""
    if n == 1:
        return ZERO
    q = chunks or 1
    steps = n - 2 + q
    return CostTerms(steps, steps * nbytes / q, steps * nbytes / q)


def pipelined_schedule(eng, n: int, length: int, chunks: int | None = None) -> None:
    """Step t: rank i (1 .. n - 1) sends its partial sum of chunk t - (n - 1 - i), where that is a chunk, to
    rank i - 1, which adds it to its own; the root, rank 0, holds the whole sum after n - 2 + q steps."""
    from ..engine import split_bounds

    q = chunks or 1
    bounds = split_bounds(0, length, q)
    for t in range(n - 2 + q):
        transfers = []
        for i in range(n - 1, 0, -1):
            j = t - (n - 1 - i)
            if 0 <= j < q:
                piece = slice(int(bounds[j]), int(bounds[j + 1]))
                transfers.append((i, i - 1, piece, piece, True, j))
        eng.run(transfers, "chain")


def real_best_chunks(nbytes: float, n: int, bandwidth: float, latency: float, gamma: float = 0.0) -> float:
    r"""The chunk count q, taken as a real number, at which the pipelined chain is fastest:
    :math:`\sqrt{(n-2)M(\beta+\gamma)/\alpha}`, where its start-ups :math:`q\alpha` and the bytes its fill carries,
    :math:`(n-2)M(\beta+\gamma)/q`, are equal (:func:`best_chunks` times the whole numbers around it).

    >>> round(real_best_chunks(64 * 2**20, 8, 3.125e9, 1e-5), 1)
    113.5
    """
    n = check_count("n", n, minimum=3)
    if nbytes <= 0 or bandwidth <= 0 or latency <= 0:
        raise ValueError("nbytes, bandwidth and latency must be positive")
    return math.sqrt((n - 2) * nbytes * (1 / bandwidth + gamma) / latency)


def best_chunks(nbytes: float, n: int, bandwidth: float, latency: float, gamma: float = 0.0,
                most: int = 4096) -> int:
    r"""The chunk count q (1 .. ``most``) that makes the pipelined chain fastest on this link.

    :math:`T(q) = (n-2)\alpha + q\alpha + M\beta + (n-2)M\beta/q` (with :math:`\gamma` as :math:`\beta`) is
    convex in q with its real minimum at :math:`\sqrt{(n-2)M(\beta+\gamma)/\alpha}`; the two whole numbers
    around it (clamped to 1 .. ``most``) are timed.

    >>> best_chunks(64 * 2**20, 8, 3.125e9, 1e-5)   # 64 MiB over 25 GbE: sqrt(6 x 21.5 ms / 10 us) = 113.5
    114
    """
    if n <= 2 or nbytes <= 0:
        return 1
    if latency <= 0:
        return most
    star = real_best_chunks(nbytes, n, bandwidth, latency, gamma)
    candidates = {max(1, min(most, q)) for q in (math.floor(star), math.ceil(star))}

    def seconds(q: int) -> float:
        return pipelined_terms(nbytes, n, q).time(bandwidth, latency, gamma)

    return min(sorted(candidates), key=seconds)


#: ``chunks`` q: a whole number >= 1, or None (1, the unpipelined chain).
check = check_chunks

PIPELINED = Algorithm(
    name="chain_pipelined", label="chain, pipelined (each rank passes chunk j on while it takes in chunk j + 1)",
    collective="reduce", terms=pipelined_terms, schedule=pipelined_schedule, params=("chunks",), check=check,
    constraint="any n; q chunks >= 1", family="pipelined", most_sent=lambda nbytes, n: nbytes,
    best_chunks=best_chunks,
    source="the serial chain of chapter 1, pipelined as NCCL's ring reduce runs it",
)
