r"""Naive all-reduce through a master: every rank sends to rank 0, which sends the result back.

Unpipelined (:data:`ALGORITHM`), the master's port serialises :math:`2(p-1)` messages of M:
:math:`2(p-1)(\alpha + M\beta) + (p-1)M\gamma`.

Pipelined (:data:`PIPELINED`, ``chunks`` = q): the vector is cut into q chunks of M/q. Each rank's
link is full duplex, so while the master takes in chunk j + 1 from the ranks, one at a time, it
sends chunk j's finished sum back to them, one at a time. The master's two directions are each
busy for :math:`(p-1)q` messages, the sending one starting p - 1 messages late:

.. math:: T = (p-1)(q+1)\left(\alpha + \frac{M}{q}\beta\right) + (p-1)M\gamma,

which falls towards :math:`(p-1)M\beta` as q grows (half the unpipelined bandwidth term) while
the start-ups grow; :func:`best_chunks` finds the q that balances them. q = 1 is the unpipelined
form. The master still carries :math:`(p-1)M` each way, against the ring's
:math:`2\frac{p-1}{p}M`.

The pipelined master is not in the registry's comparisons (:data:`commlib.collectives.algorithms.ALLREDUCE`):
chapter 1 sets it against the ring as the master's best form, and its record serves the cost,
the schedule and the tests as any other.

>>> terms(10.0, 4)
CostTerms(steps=6, bytes=60.0, reduced=30.0)
>>> pipelined_terms(12.0, 4, chunks=3)        # (4 - 1)(3 + 1) messages of 4 B
CostTerms(steps=12, bytes=48.0, reduced=36.0)
"""

from __future__ import annotations

import math

from .base import ZERO, Algorithm, CostTerms, check_chunks


def terms(nbytes: float, n: int) -> CostTerms:
    """p - 1 messages in, p - 1 out, one at a time through the master's port: 2(p - 1) M on the critical path."""
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


#: ``chunks`` q: a whole number >= 1, or None (1, the unpipelined master).
check = check_chunks


def pipelined_terms(nbytes: float, n: int, chunks: int | None = None) -> CostTerms:
    """(p - 1)(q + 1) steps of one chunk M/q in and one out at the master; (p - 1) M reduced there."""
    if n == 1:
        return ZERO
    q = chunks or 1
    steps = (n - 1) * (q + 1)
    return CostTerms(steps, steps * nbytes / q, (n - 1) * nbytes)


def pipelined_schedule(eng, n: int, length: int, chunks: int | None = None) -> None:
    """Step t: the master (rank 0) takes in chunk t // (n - 1) from rank t % (n - 1) + 1, and sends that
    rank the chunk before it, whose sum was complete n - 1 steps earlier."""
    from ..engine import split_bounds

    q = chunks or 1
    bounds = split_bounds(0, length, q)
    for t in range((n - 1) * (q + 1)):
        j, rank = t // (n - 1), t % (n - 1) + 1
        transfers = []
        if j < q:             # chunk j in, added to the master's
            piece = slice(int(bounds[j]), int(bounds[j + 1]))
            transfers.append((rank, 0, piece, piece, True, j))
        if j >= 1:            # chunk j - 1 is complete: its sum back to the rank
            piece = slice(int(bounds[j - 1]), int(bounds[j]))
            transfers.append((0, rank, piece, piece, False, j - 1))
        eng.run(transfers, "master")


def best_chunks(nbytes: float, n: int, bandwidth: float, latency: float, gamma: float = 0.0,
                most: int = 4096) -> int:
    r"""The chunk count q (1 .. ``most``) that makes the pipelined master fastest on this link.

    :math:`T(q)/(p-1) = (q+1)\alpha + (1 + 1/q)M\beta + M\gamma` is convex in q with its real
    minimum at :math:`\sqrt{M\beta/\alpha}`; the two whole numbers around it (clamped to
    1 .. ``most``) are timed.

    >>> best_chunks(64 * 2**20, 8, 3.125e9, 1e-5)   # 64 MiB over 25 GbE: sqrt(21.5 ms / 10 us) = 46.3
    46
    """
    if n == 1 or nbytes <= 0:
        return 1
    if latency <= 0:
        return most
    star = math.sqrt(nbytes / bandwidth / latency)
    candidates = {max(1, min(most, q)) for q in (math.floor(star), math.ceil(star))}

    def seconds(q: int) -> float:
        return pipelined_terms(nbytes, n, q).time(bandwidth, latency, gamma)

    return min(sorted(candidates), key=seconds)


PIPELINED = Algorithm(
    name="naive_pipelined", label="naive, pipelined (the master sends chunk j back while taking in chunk j + 1)",
    collective="all_reduce", terms=pipelined_terms, schedule=pipelined_schedule, params=("chunks",), check=check,
    constraint="any n; q chunks >= 1", family="pipelined", most_sent=lambda nbytes, n: (n - 1) * nbytes,
    best_chunks=best_chunks,
    source="the master of chapter 1, pipelined like a parameter server's push and pull",
)
