r"""Closed-form costs of collectives under the alpha-beta-gamma model.

A message of ``m`` bytes between two ranks takes :math:`\alpha + m\beta`
seconds: ``alpha`` (``latency``) is the start-up cost, ``beta`` the inverse
bandwidth (``1 / bandwidth``, seconds per byte). Reducing ``m`` bytes costs
:math:`m\gamma` (``gamma``, seconds per byte). Every algorithm's time is then

.. math:: T = a\,\alpha + b\,\beta + c\,\gamma,

where ``a`` counts sequential messages on the critical path, ``b`` the bytes
sent along it and ``c`` the bytes reduced along it. :func:`allreduce_terms`
and :func:`collective_terms` return those three coefficients as a
:class:`CostTerms`, so the executable simulations in
:mod:`commlib.collectives.simulate` can be held against them step by step.

Every algorithm's form is defined once, in its record of the registry
:mod:`commlib.collectives.algorithms` (one module per all-reduce algorithm); this module
validates the arguments and reads it. The forms follow Thakur, Rabenseifner &
Gropp (2005), "Optimization of Collective Communication Operations in MPICH",
section by section as each docstring says; the ring all-reduce is Patarasuk &
Yuan (2009). This module imports no numpy: it runs in the browser. Units: ``nbytes`` is the whole buffer, as
nccl-tests' S (the all-reduce message; for gather and all-gather the whole
gathered array, for reduce-scatter each rank's input, for all-to-all each
rank's send buffer: n blocks of M/n in each case), ``n`` the number of ranks, ``bandwidth`` bytes/s per
direction, ``latency`` seconds, ``gamma`` seconds per byte reduced.

>>> round(allreduce_time(553.36e6, 4, 125e6), 3)   # VGG-16 over 1 GbE, ring
6.64
"""

from __future__ import annotations

from ..units import check_count, check_nonnegative, check_positive
from . import algorithms
from .algorithms.base import CostTerms
from .algorithms.hierarchical import hierarchical_allreduce_time

__all__ = [
    "ALLREDUCE_ALGORITHMS",
    "COLLECTIVE_ALGORITHMS",
    "BUS_FACTORS",
    "CostTerms",
    "allreduce_terms",
    "allreduce_time",
    "allreduce_step_bytes",
    "halving_doubling_swap_fold_terms",
    "collective_terms",
    "collective_time",
    "hierarchical_allreduce_time",
    "torus_allreduce_time",
    "ring_bytes_per_rank",
    "latency_bandwidth_balance",
    "reduction_gamma",
    "bus_factor",
    "algbw_to_busbw",
    "busbw_to_algbw",
    "BANDWIDTH_DIRECTIONS",
    "bus_bandwidth",
    "algorithm_bandwidth",
]

#: The flat all-reduce algorithms (one uniform network, no parameter), read from the registry
#: :data:`commlib.collectives.algorithms.ALLREDUCE`, which also holds the pipelined trees and the two-level ones.
ALLREDUCE_ALGORITHMS = algorithms.names("all_reduce", family="flat")

#: Algorithms per collective, from the registry; the first is the default.
COLLECTIVE_ALGORITHMS: dict[str, tuple[str, ...]] = {op: tuple(table) for op, table in algorithms.COLLECTIVES.items()}

#: nccl-tests' factor from algorithm bandwidth to bus bandwidth, as a function of n.
BUS_FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}


def _check_common(nbytes: float, n: int) -> tuple[float, int]:
    return check_nonnegative("nbytes", nbytes), check_count("n", n, minimum=1)


def allreduce_terms(nbytes: float, n: int, algorithm: str = "ring", **params) -> CostTerms:
    r"""Latency, bandwidth and reduction coefficients of an all-reduce of ``nbytes`` over ``n`` ranks.

    The forms live in the registry, one module per algorithm
    (:mod:`commlib.collectives.algorithms`); with p = ``n``, M = ``nbytes``:

    * ``"ring"`` (Patarasuk & Yuan 2009): :math:`2(p-1)\alpha + 2\frac{p-1}{p}M\beta + \frac{p-1}{p}M\gamma`.
    * ``"tree"`` (binomial, unpipelined, Thakur et al. 2005 sec. 4.1-4.2):
      :math:`2\lceil\log_2 p\rceil(\alpha + M\beta) + \lceil\log_2 p\rceil M\gamma`.
    * ``"recursive_doubling"`` (sec. 4.4): :math:`\log_2 p(\alpha + M\beta + M\gamma)`, plus a
      fold-in and fold-out of whole vectors when p is not a power of two.
    * ``"halving_doubling"`` (Rabenseifner): :math:`2\log_2 p\,\alpha + 2\frac{p-1}{p}M\beta +
      \frac{p-1}{p}M\gamma`, plus the same fold.
    * ``"naive"``: through a master, :math:`2(p-1)(\alpha + M\beta) + (p-1)M\gamma`.
    * ``"pipelined_tree"``, ``"double_binary_tree"`` (``chunks`` = q, default 1): q + 2D - 1
      rounds, about 3M and 2M bytes through the busiest port.
    * ``"hierarchical"`` (``hosts``) and ``"torus"`` (``grid``) on one uniform link.

    >>> allreduce_terms(1200, 4, "ring")
    CostTerms(steps=6, bytes=1800.0, reduced=900.0)
    """
    nbytes, n = _check_common(nbytes, n)
    return algorithms.allreduce_algorithm(algorithm).cost(nbytes, n, **params)


def halving_doubling_swap_fold_terms(nbytes: float, n: int) -> CostTerms:
    r"""Halving-doubling with the fold that swaps halves off the powers of two (Rabenseifner & Traff 2004):
    :math:`(2\log_2 p' + 2)\alpha + \left(2\frac{p'-1}{p'} + 1\right)M\beta`, p' the largest power of two not
    above ``n``; the textbook fold of :func:`allreduce_terms`' ``"halving_doubling"`` moves a whole M more. On a power
    of two the two are the same.

    >>> halving_doubling_swap_fold_terms(1200, 12), allreduce_terms(1200, 12, "halving_doubling")
    (CostTerms(steps=8, bytes=3300.0, reduced=1650.0), CostTerms(steps=8, bytes=4500.0, reduced=2250.0))
    """
    from .algorithms.halving_doubling import swap_fold_terms

    nbytes, n = _check_common(nbytes, n)
    return swap_fold_terms(nbytes, n)


def allreduce_time(
    nbytes: float,
    n: int,
    bandwidth: float,
    latency: float = 0.0,
    algorithm: str = "ring",
    gamma: float = 0.0,
    **params,
) -> float:
    """Seconds to all-reduce ``nbytes`` over ``n`` ranks (see :func:`allreduce_terms` for the forms).

    The one entry point for a ring's time (``algorithm="ring"``, the default) and every other
    all-reduce on one uniform link; ``params`` are the algorithm's own (``chunks``, ``hosts``,
    ``grid``).

    >>> allreduce_time(64e6, 2, 25e9)   # 64 MB, 2 ranks, 200 Gb/s: 2.56 ms
    0.00256
    """
    return allreduce_terms(nbytes, n, algorithm, **params).time(bandwidth, latency, gamma)


def allreduce_step_bytes(nbytes: float, n: int, algorithm: str = "ring") -> tuple[float, ...] | None:
    """Bytes of each step's message, in order, for an all-reduce whose every step is one message per card
    that needs what arrived in the step before; None for an algorithm that is not such a chain (the
    registry's ``step_bytes``). Their count and sum are :func:`allreduce_terms`' steps and bytes.

    >>> allreduce_step_bytes(800, 4, "ring"), allreduce_step_bytes(800, 4, "halving_doubling")
    ((200.0, 200.0, 200.0, 200.0, 200.0, 200.0), (400.0, 200.0, 200.0, 400.0))
    >>> print(allreduce_step_bytes(800, 4, "naive"))
    None
    """
    nbytes, n = _check_common(nbytes, n)
    record = algorithms.allreduce_algorithm(algorithm)
    return None if record.step_bytes is None else tuple(float(b) for b in record.step_bytes(nbytes, n))


def ring_bytes_per_rank(nbytes: float, n: int) -> float:
    """Bytes each rank sends (and receives) in a ring all-reduce: ``2 (n-1)/n * nbytes``."""
    nbytes, n = _check_common(nbytes, n)
    return 2 * (n - 1) / n * nbytes


def collective_terms(op: str, nbytes: float, n: int, algorithm: str | None = None) -> CostTerms:
    r"""Coefficients for one collective (Thakur, Rabenseifner & Gropp 2005, sec. 4).

    ``nbytes`` (M) is the whole buffer as nccl-tests counts it: the message for
    broadcast, reduce and all-reduce; the whole array, n blocks of M/p, for gather,
    scatter and all-gather (each rank's block, MPI's ``sendcount``, is M/p); each
    rank's input for reduce-scatter; each rank's send buffer for all-to-all (p
    blocks of M/p).

    Each algorithm's time is stated once, in :mod:`commlib.collectives.algorithms.primitives` (all-reduce:
    :func:`allreduce_terms`). The binomial trees use the ceiling of lg p; recursive
    doubling, recursive halving and reduce-scatter + gather are costed for p a power of
    two only (ValueError otherwise).
    """
    nbytes, n = _check_common(nbytes, n)
    if op == "all_reduce":
        return allreduce_terms(nbytes, n, algorithm or "ring")
    return algorithms.algorithm(op, algorithm).cost(nbytes, n)


def collective_time(
    op: str,
    nbytes: float,
    n: int,
    bandwidth: float,
    latency: float = 0.0,
    algorithm: str | None = None,
    gamma: float = 0.0,
) -> float:
    """Seconds for collective ``op`` (see :func:`collective_terms` for ops, algorithms and forms).

    >>> collective_time("all_gather", 4e6, 4, 1e9)   # each rank receives 3 MB at 1 GB/s
    0.003
    """
    return collective_terms(op, nbytes, n, algorithm).time(bandwidth, latency, gamma)


def torus_allreduce_time(
    nbytes: float,
    rows: int,
    cols: int,
    bandwidth: float,
    latency: float = 0.0,
    gamma: float = 0.0,
) -> float:
    r"""2-D torus all-reduce on a ``rows`` x ``cols`` grid: rows, then columns, then rows.

    Ring reduce-scatter along each row (cols - 1 steps of M/cols), ring
    all-reduce of the M/cols shard along each column, ring all-gather along
    each row (Mikami et al. 2018; Ying et al. 2018). Steps:
    2(cols - 1) + 2(rows - 1), against 2(rows*cols - 1) for one flat ring.
    """
    nbytes = check_nonnegative("nbytes", nbytes)
    rows = check_count("rows", rows)
    cols = check_count("cols", cols)
    return allreduce_time(nbytes, rows * cols, bandwidth, latency, "torus", gamma, grid=(rows, cols))


def latency_bandwidth_balance(n: int, bandwidth: float, latency: float, algorithm: str = "ring") -> float:
    r"""Message size (bytes) at which an all-reduce's latency and bandwidth terms are equal.

    Below it the algorithm is latency-bound, above it bandwidth-bound. With
    :math:`T = a\alpha + c M\beta`, the balance is :math:`M^* = a\alpha/(c\beta)`.

    >>> latency_bandwidth_balance(2, 1e9, 1e-6)   # ring, 2 ranks: 2 alpha = M beta
    2000.0
    """
    check_positive("bandwidth", bandwidth)
    check_nonnegative("latency", latency)
    unit = allreduce_terms(1.0, n, algorithm)
    if unit.bytes == 0:
        return 0.0
    return unit.steps * latency * bandwidth / unit.bytes


def reduction_gamma(memory_bandwidth: float, touches: int = 3) -> float:
    r"""Seconds per byte reduced (gamma) when the reduction is limited by memory bandwidth.

    Combining a received chunk into a local one reads two inputs and writes
    one output, so each reduced byte moves ``touches`` = 3 bytes through
    memory: :math:`\gamma = 3 / B_{mem}`. With a V100's 900 GB/s of HBM2
    that is about 3.3 ps per byte.

    >>> round(reduction_gamma(900e9) * 1e12, 2)   # picoseconds per byte
    3.33
    """
    memory_bandwidth = check_positive("memory_bandwidth", memory_bandwidth)
    touches = check_count("touches", touches, minimum=1)
    return touches / memory_bandwidth


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' ratio busbw / algbw for ``op`` on ``n`` ranks (all-reduce: 2(n-1)/n)."""
    if op not in BUS_FACTORS:
        raise ValueError(f"op must be one of {', '.join(BUS_FACTORS)}; got {op!r}")
    n = check_count("n", n)
    return BUS_FACTORS[op](n)


def algorithm_bandwidth(nbytes: float, seconds: float) -> float:
    """Algorithm bandwidth (nccl-tests' algbw): buffer bytes / elapsed seconds, in bytes/s."""
    return check_nonnegative("nbytes", nbytes) / check_positive("seconds", seconds)


def bus_bandwidth(op: str, nbytes: float, n: int, seconds: float) -> float:
    """Bus bandwidth (nccl-tests' busbw): algbw times the op's factor, in bytes/s.

    busbw is comparable with the link's peak whatever ``n`` is: a ring
    all-reduce running at line rate B shows busbw = B.

    >>> bus_bandwidth("all_reduce", 1e9, 4, 1.0)
    1500000000.0
    """
    return algorithm_bandwidth(nbytes, seconds) * bus_factor(op, n)


def algbw_to_busbw(algbw: float, n: int, op: str = "all_reduce") -> float:
    r"""Bus bandwidth from algorithm bandwidth (bytes/s), the nccl-tests convention.

    algbw = S / t (buffer bytes over elapsed time); busbw = algbw x factor,
    with factor :math:`2(n-1)/n` for all-reduce and :math:`(n-1)/n` for
    all-gather, reduce-scatter and all-to-all (NVIDIA nccl-tests,
    ``doc/PERFORMANCE.md``). busbw is what each rank's link actually carried,
    so it can be compared with the link's peak whatever ``n`` is.

    >>> algbw_to_busbw(10e9, 8)          # 10 GB/s algbw on 8 ranks: 17.5 GB/s on the bus
    17500000000.0
    """
    return check_nonnegative("algbw", algbw) * bus_factor(op, n)


def busbw_to_algbw(busbw: float, n: int, op: str = "all_reduce") -> float:
    """Algorithm bandwidth from bus bandwidth (bytes/s): busbw / factor (the inverse of :func:`algbw_to_busbw`).

    With ``n = 1`` the all-reduce factor is 0 and no bus traffic exists, so
    the conversion is undefined (ValueError).

    >>> busbw_to_algbw(17.5e9, 8)
    10000000000.0
    """
    busbw = check_nonnegative("busbw", busbw)
    factor = bus_factor(op, n)
    if factor == 0:
        raise ValueError(f"n must be >= 2 to convert bus bandwidth for {op} (the factor is 0 at n = 1); got n = {n}")
    return busbw / factor


BANDWIDTH_DIRECTIONS = ("algbw -> busbw", "busbw -> algbw")







