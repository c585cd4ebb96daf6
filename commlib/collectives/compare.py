r"""Comparing all-reduce algorithms: who wins, where they cross, what a cluster gets.

Every all-reduce time in the alpha-beta model is an affine function of the
message size M (bytes):

.. math:: T(M) = a\,\alpha + b(M)\,\beta, \qquad b(M) = k\,M,

so two algorithms cross at most once on the M axis: the one with fewer
start-ups (smaller ``a``) wins for small messages (latency-bound), the one
with fewer bytes on the critical path (smaller ``k``) for large messages
(bandwidth-bound). This module

* evaluates every all-reduce of the registry :mod:`commlib.collectives.algorithms` under
  one signature: :func:`allreduce_seconds` (from the numpy-free
  :mod:`commlib.collectives.cluster`, as are :func:`cluster_allreduce` and
  :func:`bandwidth_for_time`);
* finds where two time curves cross, and where the fastest algorithm
  changes: :func:`crossover_sizes`, :func:`fastest`, :func:`switch_points`;
* converts algorithm bandwidth to bus bandwidth and back, the nccl-tests
  convention: :func:`algbw_to_busbw`, :func:`busbw_to_algbw`;
* answers "what does my cluster get?": :func:`cluster_allreduce`;
* holds the executable collectives against the closed forms:
  :func:`trace_vs_formula`, :func:`master_link_bytes`, :func:`buffer_sizes`.

Units: bytes, seconds, bytes/s per direction (SI), as everywhere in commlib.

>>> ring = lambda m: allreduce_seconds("ring", m, 8, 1e9, 1e-5)
>>> rd = lambda m: allreduce_seconds("recursive_doubling", m, 8, 1e9, 1e-5)
>>> [round(x) for x in crossover_sizes(ring, rd, 1.0, 1e9)]   # (14-3)e-5 s / ((3-1.75)/1e9 s/B)
[88000]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..units import check_count, check_nonnegative, check_positive
from . import algorithms, cost
from .cluster import ClusterResult, allreduce_seconds, bandwidth_for_time, cluster_allreduce
from .cost import algbw_to_busbw, busbw_to_algbw  # defined next to the bus factor; read here too

__all__ = [
    "ALGORITHMS",
    "ALGORITHM_NAMES",
    "allreduce_seconds",
    "crossover_sizes",
    "crossovers_by_ranks",
    "allreduce_lower_bound",
    "lower_bound_switch",
    "fastest",
    "switch_points",
    "algbw_to_busbw",
    "busbw_to_algbw",
    "bandwidth_for_time",
    "ClusterResult",
    "cluster_allreduce",
    "alpha_beta_coefficients",
    "time_split",
    "dominant_term_switches",
    "reduce_step_counts",
    "FormulaRow",
    "trace_vs_formula",
    "master_link_bytes",
    "busiest_link_bytes",
    "BUSIEST_LINK_FORMULAS",
    "BufferSizes",
    "buffer_sizes",
    "one_port_allreduces",
    "best_fold_seconds",
]

#: Every all-reduce algorithm the book compares, in registry order (:data:`commlib.collectives.algorithms.ALLREDUCE`).
ALGORITHMS: tuple[str, ...] = tuple(algorithms.ALLREDUCE)

#: Names to print for each algorithm: the registry's labels.
ALGORITHM_NAMES: dict[str, str] = {name: a.label for name, a in algorithms.ALLREDUCE.items()}


def one_port_allreduces(n: int) -> tuple[str, ...]:
    """The all-reduces a switched network of ``n`` ranks runs as they are, in registry order: those whose record
    drives one link a rank (``links_per_rank == 1``), takes no ``hosts`` and accepts ``n``.

    The flat ones (:data:`commlib.cost.ALLREDUCE_ALGORITHMS`), and besides them the pipelined trees and the
    one-way torus (whose grid any ``n`` makes). Chapter 2's comparisons and figure on one kind of link read it.

    >>> from commlib.cost import ALLREDUCE_ALGORITHMS
    >>> set(ALLREDUCE_ALGORITHMS) <= set(one_port_allreduces(16)), "torus_both_ways" in one_port_allreduces(16)
    (True, False)
    """
    out = []
    for name, record in algorithms.ALLREDUCE.items():
        if record.links_per_rank > 1 or "hosts" in record.params:
            continue
        try:
            record.checked(n)
        except ValueError:
            continue
        out.append(name)
    return tuple(out)


def best_fold_seconds(algorithm: str, nbytes: float, n: int, bandwidth: float, latency: float) -> float:
    r"""Seconds of one all-reduce on one kind of link, one port a rank, at the algorithm's best fold.

    An algorithm that halves and doubles over a power of two of ranks must first fold in the r = n - p' ranks
    beyond the largest power of two p' not above n, and fold them out at the end. The textbook fold (its record's
    ``terms``) sends each extra rank's whole vector in and the whole result back out: 2 start-ups and 2M bytes.
    Where the record holds a second fold (its ``swap_fold``, halving-doubling's), the extra rank and its partner
    swap halves instead and then share the work, two ports for one rank: the same 2 start-ups, but M bytes, so it
    is never slower and this function times it. Every other algorithm is timed as :func:`allreduce_seconds` times
    it (the pipelined trees at their best q). On a power of two there is nothing to fold and both folds are one.

    On 12 ranks (p' = 8) halving-doubling moves :math:`2\cdot\frac{7}{8}M + M` instead of
    :math:`2\cdot\frac{7}{8}M + 2M`, 11/15 of the bytes; on 16 ranks nothing changes, and a ring has no fold:

    >>> textbook = allreduce_seconds("halving_doubling", 1e9, 12, 12.5e9, 0.0)
    >>> round(best_fold_seconds("halving_doubling", 1e9, 12, 12.5e9, 0.0) / textbook, 4), round(11 / 15, 4)
    (0.7333, 0.7333)
    >>> [best_fold_seconds(a, 1e9, 16, 12.5e9, 5e-6) == allreduce_seconds(a, 1e9, 16, 12.5e9, 5e-6)
    ...  for a in ("halving_doubling", "ring")]
    [True, True]
    """
    record = algorithms.allreduce_algorithm(algorithm)
    if record.swap_fold is None:
        return allreduce_seconds(algorithm, nbytes, n, bandwidth, latency)
    nbytes = check_nonnegative("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    return record.swap_fold(nbytes, n).time(bandwidth, latency)


def allreduce_lower_bound(nbytes: float, n: int, bandwidth: float, latency: float = 0.0) -> float:
    r"""The least time any all-reduce of ``nbytes`` on ``n`` one-port ranks can take, in seconds.

    Two bounds hold at once, so their larger one does (Chan et al. 2007):
    the bytes, :math:`2\frac{n-1}{n}\frac{M}{B}` (Patarasuk and Yuan 2009: only the ranks add,
    uncompressed), and the start-ups, :math:`\lceil\log_2 n\rceil\alpha` (a message joins what
    two ranks know, so after k start-ups a rank knows at most :math:`2^k` ranks' data).
    ``bandwidth`` in bytes/s per direction, ``latency`` in s.

    >>> allreduce_lower_bound(1e9, 4, 1e9, 1e-6)      # the bytes: 2 * 3/4 s
    1.5
    >>> allreduce_lower_bound(0.0, 8, 1e9, 1e-6)      # the start-ups: 3 of them
    3e-06
    """
    nbytes = check_nonnegative("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    bandwidth = check_positive("bandwidth", bandwidth)
    latency = check_nonnegative("latency", latency)
    return max(2 * (n - 1) / n * nbytes / bandwidth, math.ceil(math.log2(n)) * latency)



def lower_bound_switch(n: int, bandwidth: float, latency: float) -> float:
    r"""The message size in bytes where :func:`allreduce_lower_bound` switches from start-ups to bytes.

    There :math:`2\frac{n-1}{n}\frac{M}{B} = \lceil\log_2 n\rceil\alpha`, so
    :math:`M = \lceil\log_2 n\rceil\,\alpha B\,\frac{n}{2(n-1)}`. Every algorithm's time over the bound peaks
    there: below it the bound stays fixed while a time grows, above it the bound grows like :math:`M`, faster than
    any time (each is a sum of start-ups and bytes). Needs ``n`` >= 2 (one rank has nothing to all-reduce).

    >>> lower_bound_switch(4, 1e9, 1e-6)      # 2 start-ups of 1 us against 1.5 M / (1 GB/s)
    1333.3333333333333
    """
    n = check_count("n", n, minimum=2)
    bandwidth = check_positive("bandwidth", bandwidth)
    latency = check_nonnegative("latency", latency)
    return math.ceil(math.log2(n)) * latency * bandwidth * n / (2 * (n - 1))

def crossover_sizes(
    f: Callable[[float], float],
    g: Callable[[float], float],
    lo: float,
    hi: float,
    samples: int = 400,
    rtol: float = 1e-12,
) -> list[float]:
    r"""Message sizes in ``[lo, hi]`` (bytes) where time curves ``f`` and ``g`` cross.

    Scans a geometric grid of ``samples`` sizes for a change of sign of
    ``f - g`` and refines each one by bisection (in log space) to relative
    precision ``rtol``. Curves that touch without crossing are not reported.
    Works for any two functions of the size; for alpha-beta times (affine in
    M) there is at most one crossing, at
    :math:`M^* = \frac{(a_g - a_f)\,\alpha}{(k_f - k_g)\,\beta}`.

    >>> [round(m, 9) for m in crossover_sizes(lambda m: 1 + m, lambda m: 3 + m / 2, 0.1, 100.0)]  # 1 + M = 3 + M/2
    [4.0]
    """
    lo = check_positive("lo", lo)
    hi = check_positive("hi", hi)
    if hi <= lo:
        raise ValueError(f"hi must be > lo ({lo}); got {hi}")
    samples = check_count("samples", samples, minimum=2)
    rtol = check_positive("rtol", rtol)

    def diff(m: float) -> float:
        return float(f(m)) - float(g(m))

    grid = np.geomspace(lo, hi, samples)
    values = [diff(m) for m in grid]
    out: list[float] = []
    for i in range(samples - 1):
        a, b = values[i], values[i + 1]
        if a == 0.0:
            if i == 0 or np.sign(values[i - 1]) * np.sign(b) < 0:
                out.append(float(grid[i]))
            continue
        if a * b < 0:
            x0, x1 = math.log(grid[i]), math.log(grid[i + 1])
            s0 = np.sign(a)
            while x1 - x0 > rtol:
                mid = 0.5 * (x0 + x1)
                d = diff(math.exp(mid))
                if d == 0.0:
                    x0 = x1 = mid
                    break
                if np.sign(d) == s0:
                    x0 = mid
                else:
                    x1 = mid
            m0, m1 = math.exp(x0), math.exp(x1)
            d0, d1 = diff(m0), diff(m1)
            # one secant step inside the tiny bracket: exact for affine curves
            out.append(float(m0 - d0 * (m1 - m0) / (d1 - d0)) if d1 != d0 else float(math.exp(0.5 * (x0 + x1))))
    return out


def crossovers_by_ranks(
    f: Callable[[float, int], float],
    g: Callable[[float, int], float],
    ranks: Sequence[int],
    lo: float = 1e2,
    hi: float = 1e12,
) -> dict[int, float]:
    """For each n in ``ranks``, the first size in ``[lo, hi]`` (bytes) where the times ``f(M, n)`` and ``g(M, n)``
    cross (:func:`crossover_sizes`), or, where they do not cross there, ``0.0`` if ``f`` is the slower at every
    size and ``math.inf`` if it never is. This is the form :func:`commlib.views.collectives.fold_loss_words` reads:
    ``f`` an algorithm with fewer start-ups, faster below its crossover, ``g`` one with fewer bytes.

    >>> c = crossovers_by_ranks(lambda m, n: n + m, lambda m, n: 3 + m / 2, (2, 4), 0.1, 100.0)   # n + M = 3 + M/2
    >>> round(c[2], 9), c[4]
    (2.0, 0.0)
    >>> crossovers_by_ranks(lambda m, n: m / 2, lambda m, n: 1 + m, (2,), 0.1, 100.0)      # never slower
    {2: inf}
    """
    out = {}
    for n in ranks:
        cross = crossover_sizes(lambda m, n=n: f(m, n), lambda m, n=n: g(m, n), lo, hi)
        out[n] = cross[0] if cross else (0.0 if f(hi, n) > g(hi, n) else math.inf)
    return out


def fastest(times: dict[str, Sequence[float]]) -> list[str]:
    """For each position, the name whose time is smallest (ties: the first name given).

    ``times`` maps an algorithm name to its times at the same list of sizes.

    >>> fastest({"a": [1, 5, 9], "b": [2, 4, 9]})
    ['a', 'b', 'a']
    """
    if not times:
        raise ValueError("times must name at least one algorithm")
    names = list(times)
    table = np.array([np.asarray(times[k], dtype=float) for k in names])
    if table.ndim != 2:
        raise ValueError("times must map each name to a 1-D sequence of the same length")
    return [names[i] for i in np.argmin(table, axis=0)]


def switch_points(
    curves: dict[str, Callable[[float], float]], lo: float, hi: float, samples: int = 400
) -> list[tuple[float, str, str]]:
    """Where the fastest algorithm changes: ``(size in bytes, winner before, winner after)``.

    The lower envelope of the curves is scanned on a geometric grid; at each
    change of winner the exact crossing of the two curves involved is found
    with :func:`crossover_sizes`.

    >>> [(round(m, 9), a, b) for m, a, b in switch_points({"a": lambda m: 1 + m, "b": lambda m: 3 + m / 2}, 0.1, 100.0)]
    [(4.0, 'a', 'b')]
    """
    lo = check_positive("lo", lo)
    hi = check_positive("hi", hi)
    grid = np.geomspace(lo, hi, check_count("samples", samples, minimum=2))
    winners = fastest({k: [c(m) for m in grid] for k, c in curves.items()})
    out = []
    for i in range(len(grid) - 1):
        a, b = winners[i], winners[i + 1]
        if a != b:
            found = crossover_sizes(curves[a], curves[b], float(grid[i]), float(grid[i + 1]), samples=2)
            out.append((found[0] if found else float(grid[i + 1]), a, b))
    return out


def time_split(algorithm: str, nbytes: float, n: int, bandwidth: float, latency: float) -> tuple[float, float]:
    """``(start-ups, bytes)``: the seconds of one all-reduce on one uniform link spent on its alpha term and
    on its beta term, the pipelined trees at their best q for this size.

    >>> [round(x, 6) for x in time_split("ring", 1e6, 8, 1e9, 1e-5)]    # 14 start-ups; 1.75 MB at 1 GB/s
    [0.00014, 0.00175]
    """
    record = algorithms.allreduce_algorithm(algorithm)
    params = {}
    if "chunks" in record.params and record.best_chunks is not None:
        params["chunks"] = record.best_chunks(nbytes, n, bandwidth, latency)
    terms = record.cost(nbytes, n, **params)
    return terms.steps * latency, terms.bytes / bandwidth


def dominant_term_switches(curves: dict[str, Callable[[float], float]], n: int, bandwidth: float, latency: float,
                           lo: float, hi: float, samples: int = 400) -> list[tuple[float, str]]:
    """Where the term that takes most of the fastest algorithm's time changes: ``(size in bytes, the term
    that dominates above it: "bytes" or "start-ups")``, for ``curves`` (keys: registry names on one uniform
    link) between ``lo`` and ``hi``. A change of winner can hand the lead back to start-ups (halving-doubling
    has more of them than recursive doubling), so there may be several.

    >>> c = {a: (lambda m, a=a: allreduce_seconds(a, m, 8, 1e9, 1e-5)) for a in ("ring", "recursive_doubling")}
    >>> [(round(m / 1e3), term) for m, term in dominant_term_switches(c, 8, 1e9, 1e-5, 1e2, 1e9)]
    [(10, 'bytes')]
    """
    grid = np.geomspace(check_positive("lo", lo), check_positive("hi", hi), check_count("samples", samples, minimum=2))

    def excess(m: float) -> float:
        """Bytes' seconds less start-ups' seconds of the fastest algorithm at size m."""
        winner = fastest({k: [c(m)] for k, c in curves.items()})[0]
        up, on_bytes = time_split(winner, m, n, bandwidth, latency)
        return on_bytes - up

    signs = [excess(float(m)) >= 0 for m in grid]
    out = []
    for i in range(len(grid) - 1):
        if signs[i] != signs[i + 1]:
            left, right = float(grid[i]), float(grid[i + 1])
            for _ in range(60):
                mid = math.sqrt(left * right)
                left, right = (left, mid) if (excess(mid) >= 0) == signs[i + 1] else (mid, right)
            out.append((right, "bytes" if signs[i + 1] else "start-ups"))
    return out


def alpha_beta_coefficients(algorithm: str, n: int, hosts: int = 1,
                            grid: tuple[int, int] | None = None, chunks: int | None = None) -> tuple[float, float]:
    r"""``(a, k)`` of :math:`T = a\alpha + k M\beta` for one algorithm on one uniform link.

    ``a`` counts start-ups on the critical path, ``k`` the bytes on it per
    byte of the message. Read off :func:`allreduce_seconds` itself: ``a`` is
    the time of an empty message with alpha = 1 s, ``k`` the time of one byte
    at 1 B/s with no latency.

    The pipelined trees use ``chunks`` = q (default 1).

    >>> alpha_beta_coefficients("ring", 8), alpha_beta_coefficients("recursive_doubling", 8)
    ((14.0, 1.75), (3.0, 3.0))
    >>> alpha_beta_coefficients("double_binary_tree", 8, chunks=8)   # 13 rounds, up to 4 messages a round
    (36.0, 2.25)
    """
    q = (chunks or 1) if "chunks" in algorithms.allreduce_algorithm(algorithm).params else None
    a = allreduce_seconds(algorithm, 0.0, n, 1.0, 1.0, hosts=hosts, grid=grid, chunks=q)
    k = allreduce_seconds(algorithm, 1.0, n, 1.0, 0.0, hosts=hosts, grid=grid, chunks=q)
    return float(a), float(k)


def reduce_step_counts(ns: Sequence[int]) -> list[tuple[int, int, int, int]]:
    r"""For each n: ``(n, serial steps, tree steps, formula tree steps)``, the first two counted from traces.

    Runs :func:`commlib.collectives.simulate.reduce` on n one-element arrays with
    ``algorithm="serial"`` and ``"tree"``; the formula is
    :func:`commlib.cost.collective_terms` for a binomial-tree reduce,
    :math:`\lceil\log_2 n\rceil` steps.

    >>> reduce_step_counts([8, 1000])
    [(8, 7, 3, 3), (1000, 999, 10, 10)]
    """
    from .simulate import reduce

    out = []
    for n in ns:
        n = check_count("n", n, minimum=2)
        arrays = [np.array([float(r)]) for r in range(n)]
        serial = reduce(arrays, algorithm="serial")[1].steps
        tree = reduce(arrays, algorithm="tree")[1].steps
        out.append((n, serial, tree, cost.collective_terms("reduce", 8.0, n).steps))
    return out


@dataclass(frozen=True)
class FormulaRow:
    """One run of an executable all-reduce next to its closed form.

    ``trace_*`` are counted from the messages the simulation sent;
    ``formula_*`` come from :func:`commlib.cost.allreduce_terms`. Bytes are
    per rank (the most any rank sent; the formula is NaN where no closed form
    is given, e.g. the tree) and on the critical path.
    """

    n: int
    nbytes: int
    trace_steps: int
    formula_steps: int
    trace_bytes_per_rank: int
    formula_bytes_per_rank: float
    trace_critical_bytes: int
    formula_critical_bytes: float
    trace_seconds: float
    formula_seconds: float


def _bytes_per_rank(algorithm: str, nbytes: float, n: int) -> float:
    """Most bytes any one rank sends, where a closed form exists (NaN otherwise)."""
    record = algorithms.allreduce_algorithm(algorithm)
    return record.most_sent(nbytes, n) if record.most_sent is not None else math.nan


def trace_vs_formula(
    ns: Sequence[int], elements: int = 0, algorithm: str = "ring",
    bandwidth: float = 1e9, latency: float = 1e-5, seed: int = 0,
) -> list[FormulaRow]:
    """Run the executable all-reduce for each ``n`` in ``ns`` and set its trace beside the cost formula.

    Each rank holds ``elements`` random float64 values (default: ``12 * n``,
    so the array splits evenly into ``n`` chunks), 8 bytes each. The trace time is ``steps * latency +
    critical_bytes / bandwidth``, the formula time
    :func:`commlib.cost.allreduce_time`. Seeded (``numpy.random.default_rng``).

    >>> row = trace_vs_formula([4], elements=12)[0]
    >>> row.trace_steps, row.formula_steps, row.trace_bytes_per_rank, row.formula_bytes_per_rank
    (6, 6, 144, 144.0)
    """
    from .simulate import allreduce  # executable model, imported late to keep this module light

    algorithms.allreduce_algorithm(algorithm)
    bandwidth = check_positive("bandwidth", bandwidth)
    latency = check_nonnegative("latency", latency)
    rng = np.random.default_rng(seed)
    rows = []
    for n in ns:
        n = check_count("n", n, minimum=2)
        k = check_count("elements", elements, minimum=n) if elements else 12 * n
        arrays = [rng.standard_normal(k) for _ in range(n)]
        _, trace = allreduce(arrays, algorithm=algorithm)
        nbytes = k * arrays[0].itemsize
        terms = cost.allreduce_terms(nbytes, n, algorithm)
        t_trace = trace.steps * latency + trace.critical_bytes / bandwidth
        per_rank = _bytes_per_rank(algorithm, nbytes, n)
        rows.append(FormulaRow(
            n=n, nbytes=nbytes, trace_steps=trace.steps, formula_steps=terms.steps,
            trace_bytes_per_rank=int(trace.bytes_sent.max()), formula_bytes_per_rank=per_rank,
            trace_critical_bytes=trace.critical_bytes, formula_critical_bytes=terms.bytes,
            trace_seconds=t_trace, formula_seconds=terms.time(bandwidth, latency),
        ))
    return rows


#: :func:`busiest_link_bytes` in symbols, for the algorithms whose closed form chapter 1 draws.
BUSIEST_LINK_FORMULAS = {"naive": "2(n-1)M", "ring": "4(n-1)M/n"}


def busiest_link_bytes(algorithm: str, nbytes: float, n: int) -> float:
    r"""Bytes through the busiest rank's link, both directions together, from the all-reduce's closed form.

    Twice the most any rank sends (the record's ``most_sent``): in these all-reduces the busiest rank
    takes in as much as it sends -- the master :math:`(n-1)M` each way, so :math:`2(n-1)M`; a ring
    rank :math:`2\frac{n-1}{n}M` each way, so :math:`4\frac{n-1}{n}M`. NaN where the record gives no closed
    form. Not the critical-path bytes of :func:`commlib.cost.allreduce_terms`, which count one direction of
    the busiest port, step by step. The traces' count is :func:`master_link_bytes`.

    >>> busiest_link_bytes("naive", 100, 8), busiest_link_bytes("ring", 100, 8)
    (1400.0, 350.0)
    """
    n = check_count("n", n, minimum=1)
    return 2.0 * _bytes_per_rank(algorithm, check_nonnegative("nbytes", nbytes), n)


def master_link_bytes(trace, root: int = 0) -> int:
    """Bytes through the ``root`` rank's link, both directions: sent plus received.

    For the naive all-reduce through a master with n ranks of M bytes each
    this is :math:`2(n-1)M` -- (n - 1) gradients in, (n - 1) results out.
    """
    root = check_count("root", root, minimum=0, maximum=trace.n - 1)
    return int(trace.bytes_sent[root] + trace.bytes_received[root])


@dataclass(frozen=True)
class BufferSizes:
    """Elements in each rank's send and receive buffer for one run of a primitive."""

    primitive: str
    n: int
    send: int
    recv: int


def buffer_sizes(primitive: str, n: int, count: int) -> BufferSizes:
    """Run ``primitive`` on ``n`` ranks whose contributions are ``count`` elements and measure the buffers.

    For all-gather each rank sends ``count`` elements and receives
    ``n * count``; for all-to-all each rank sends ``n * count`` (one
    ``count``-element block per destination) and receives ``n * count``
    (MPI's ``sendcount`` convention, MPI Forum 2021: sec. 6.7, Gather-to-all, and sec. 6.8,
    All-to-All Scatter/Gather).
    Measured from the executable versions in :mod:`commlib.collectives.simulate`:
    ``send`` is the length of the array a rank passes in, ``recv`` the length
    of the array it gets back.

    >>> b = buffer_sizes("all_to_all", 4, 2)
    >>> b.send, b.recv
    (8, 8)
    """
    from . import simulate as collectives

    n = check_count("n", n, minimum=1)
    count = check_count("count", count, minimum=1)
    if primitive == "all_gather":
        arrays = [np.full(count, r, dtype=float) for r in range(n)]
        results, _ = collectives.all_gather(arrays)
    elif primitive == "all_to_all":
        arrays = [np.full(n * count, r, dtype=float) for r in range(n)]
        results, _ = collectives.all_to_all(arrays)
    else:
        raise ValueError(f"primitive must be 'all_gather' or 'all_to_all'; got {primitive!r}")
    recv = {int(np.asarray(r).size) for r in results}
    if len(recv) != 1:
        raise ValueError(f"{primitive} returned buffers of unequal sizes {sorted(recv)}")
    return BufferSizes(primitive, n, int(arrays[0].size), recv.pop())
