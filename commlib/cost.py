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
:mod:`commlib.collectives` can be held against them step by step.

Every algorithm's form is defined once, in its record of the registry
:mod:`commlib.algorithms` (one module per all-reduce algorithm); this module
validates the arguments and reads it. The forms follow Thakur, Rabenseifner &
Gropp (2005), "Optimization of Collective Communication Operations in MPICH",
section by section as each docstring says; the ring all-reduce is Patarasuk &
Yuan (2009). This module imports no numpy: it runs in the browser. Units: ``nbytes`` is the whole buffer (the all-reduce
message; for all-gather, reduce-scatter and all-to-all the full array, as
nccl-tests' S), ``n`` the number of ranks, ``bandwidth`` bytes/s per
direction, ``latency`` seconds, ``gamma`` seconds per byte reduced.

>>> round(allreduce_time(553.36e6, 4, 125e6), 3)   # VGG-16 over 1 GbE, ring
6.64
"""

from __future__ import annotations

from . import algorithms
from .algorithms.base import CostTerms
from .units import check_count, check_fraction, check_nonnegative, check_positive, format_rate, parse_rate

__all__ = [
    "ALLREDUCE_ALGORITHMS",
    "COLLECTIVE_ALGORITHMS",
    "BUS_FACTORS",
    "CostTerms",
    "allreduce_terms",
    "allreduce_time",
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
    "bandwidth_conversion_results",
    "bus_bandwidth",
    "algorithm_bandwidth",
    "parallel_efficiency",
    "communication_time_for_efficiency",
    "required_bandwidth",
    "speedup",
    "scaling_efficiency",
    "communication_overhead",
]

#: The flat all-reduce algorithms (one uniform network, no parameter), read from the registry
#: :data:`commlib.algorithms.ALLREDUCE`, which also holds the pipelined trees and the two-level ones.
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
    (:mod:`commlib.algorithms`); with p = ``n``, M = ``nbytes``:

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


def ring_bytes_per_rank(nbytes: float, n: int) -> float:
    """Bytes each rank sends (and receives) in a ring all-reduce: ``2 (n-1)/n * nbytes``."""
    nbytes, n = _check_common(nbytes, n)
    return 2 * (n - 1) / n * nbytes


def collective_terms(op: str, nbytes: float, n: int, algorithm: str | None = None) -> CostTerms:
    r"""Coefficients for one collective (Thakur, Rabenseifner & Gropp 2005, sec. 4).

    ``nbytes`` (M) is the whole buffer as nccl-tests counts it: the message for
    broadcast, reduce and all-reduce; the full gathered array for gather,
    scatter, all-gather, reduce-scatter and all-to-all (each rank owns M/p).

    Each algorithm's time is stated once, in :mod:`commlib.algorithms.primitives` (all-reduce:
    :func:`allreduce_terms`).

    The ``lg p`` forms assume p is a power of two; for other p the
    ceiling is used. The records are in :mod:`commlib.algorithms.primitives`.
    """
    nbytes, n = _check_common(nbytes, n)
    if op == "all_reduce":
        return allreduce_terms(nbytes, n, algorithm or "ring")
    return algorithms.algorithm(op, algorithm).terms(nbytes, n)


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


def hierarchical_allreduce_time(
    nbytes: float,
    hosts: int,
    per_host: int,
    intra_bandwidth: float,
    inter_bandwidth: float,
    intra_latency: float = 0.0,
    inter_latency: float = 0.0,
    gamma: float = 0.0,
    nics_per_host: int | None = None,
) -> float:
    r"""Hierarchical all-reduce: inside hosts, then across hosts, then back inside.

    With g = ``per_host`` ranks on each of h = ``hosts`` hosts and M = ``nbytes``:

    1. ring reduce-scatter inside each host (g - 1 steps of M/g, intra link);
    2. ring all-reduce of each rank's M/g shard with its peers on the other
       hosts (2(h - 1) steps of M/(gh) on the inter-host link; the g shards
       of a host move at the same time, one ring per local rank, as NCCL and
       Horovod do);
    3. ring all-gather inside each host (g - 1 steps of M/g, intra link).

    .. math::

        T = 2(g-1)\alpha_\text{intra} + 2\frac{g-1}{g}\frac{M}{B_\text{intra}}
            + 2(h-1)\alpha_\text{inter} + 2\frac{h-1}{h}\frac{M/g}{B_\text{shard}}
            + \frac{g-1}{g}M\gamma + \frac{h-1}{h}\frac{M}{g}\gamma .

    The hardware decides :math:`B_\text{shard}`, the bandwidth each of the g
    concurrent inter-host rings gets:

    * ``nics_per_host=None`` (the default): **one NIC per rank**, each of
      ``inter_bandwidth`` bytes/s per direction, as later DGX machines have
      (a DGX-1 with V100 GPUs had four 100 Gb/s InfiniBand cards for its
      eight GPUs, ``nics_per_host=4``). The g shards cross in parallel on their
      own cards, :math:`B_\text{shard} = B_\text{inter}`, and only M/g per
      card crosses the network: the inter-host term shrinks g-fold.
    * ``nics_per_host=k``: the host's g shards share **k NICs** of
      ``inter_bandwidth`` each, :math:`B_\text{shard} = B_\text{inter}\min(k,
      g)/g`. With one NIC per host (k = 1) all g shards go through one card,
      which carries :math:`2\frac{h-1}{h}M` -- the whole gradient's share,
      not an eighth of it -- so the inter-host term is the same as a ring
      over h hosts of the whole buffer (the one-NIC-per-host model of
      :mod:`commlib.placement` and :mod:`commlib.topology`). NICs beyond g
      add nothing: a rank's ring uses one card.

    Latency is per message and does not change with sharing. Units: bytes,
    bytes/s per direction, seconds, seconds per byte reduced.

    >>> # 2 hosts x 4 ranks, 1200 B, intra link 1 kB/s, inter 10 B/s
    >>> hierarchical_allreduce_time(1200, 2, 4, 1000.0, 10.0)        # 2*(3/4)*1200/1000 + 2*(1/2)*300/10
    31.8
    >>> hierarchical_allreduce_time(1200, 2, 4, 1000.0, 10.0, nics_per_host=1)   # + 2*(1/2)*300/(10/4)
    121.8
    """
    nbytes = check_nonnegative("nbytes", nbytes)
    hosts = check_count("hosts", hosts)
    per_host = check_count("per_host", per_host)
    inter_bandwidth = check_positive("inter_bandwidth", inter_bandwidth)
    shard_bandwidth = inter_bandwidth
    if nics_per_host is not None:
        nics_per_host = check_count("nics_per_host", nics_per_host, minimum=1)
        shard_bandwidth = inter_bandwidth * min(nics_per_host, per_host) / per_host
    intra = collective_terms("reduce_scatter", nbytes, per_host)
    inter = allreduce_terms(nbytes / per_host, hosts, "ring")
    t = 2 * intra.time(intra_bandwidth, intra_latency, 0.0) + intra.reduced * gamma
    return t + inter.time(shard_bandwidth, inter_latency, gamma)


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


def bandwidth_conversion_results(value: str, direction: str = "algbw -> busbw", op: str = "all_reduce",
                                 n: int = 8) -> dict[str, str]:
    """The converter of the ring chapter: a rate with its unit, one way or the other (nccl-tests' convention).

    >>> bandwidth_conversion_results("10 GB/s", "algbw -> busbw", "all_reduce", 8)["bus bandwidth"]
    '17.50 GB/s = 140.00 Gb/s'
    """
    rate = parse_rate(value)
    if direction == "algbw -> busbw":
        algbw, busbw = rate, algbw_to_busbw(rate, n, op)
    elif direction == "busbw -> algbw":
        algbw, busbw = busbw_to_algbw(rate, n, op), rate
    else:
        raise ValueError(f"direction must be one of {', '.join(map(repr, BANDWIDTH_DIRECTIONS))}; got {direction!r}")
    return {
        "factor busbw / algbw": f"{bus_factor(op, n):.4f}",
        "algorithm bandwidth": f"{format_rate(algbw)} = {format_rate(algbw, bits=True)}",
        "bus bandwidth": f"{format_rate(busbw)} = {format_rate(busbw, bits=True)}",
    }


def parallel_efficiency(t_compute: float, t_comm: float) -> float:
    r"""Fraction of a step spent computing when communication does not overlap: :math:`\varepsilon = T_c/(T_c + T_m)`.

    >>> round(parallel_efficiency(0.55, 6.64032), 4)
    0.0765
    """
    t_compute = check_positive("t_compute", t_compute)
    t_comm = check_nonnegative("t_comm", t_comm)
    return t_compute / (t_compute + t_comm)


def communication_time_for_efficiency(t_compute: float, efficiency: float) -> float:
    r"""Communication time allowed for a target efficiency: :math:`T_m = \frac{1-\varepsilon}{\varepsilon} T_c`."""
    t_compute = check_positive("t_compute", t_compute)
    efficiency = check_fraction("efficiency", efficiency, open_high=False)
    return (1 - efficiency) / efficiency * t_compute


def required_bandwidth(nbytes: float, n: int, t_compute: float, efficiency: float) -> float:
    r"""Bandwidth (bytes/s) a ring all-reduce needs to reach ``efficiency``.

    :math:`B = \frac{2(n-1)M/n}{T_m} = \frac{2\varepsilon(n-1)M}{n(1-\varepsilon)T_c}` (the source
    notes' equation (3), which writes it with S, D, P and T_s). ``efficiency`` must lie in (0, 1).
    """
    efficiency = check_fraction("efficiency", efficiency)
    t_allowed = communication_time_for_efficiency(t_compute, efficiency)
    return ring_bytes_per_rank(nbytes, n) / t_allowed


def speedup(t_one: float, t_many: float) -> float:
    """How many times faster ``n`` workers finish the same work: ``t_one / t_many``."""
    return check_positive("t_one", t_one) / check_positive("t_many", t_many)


def scaling_efficiency(t_one: float, t_many: float, n: int) -> float:
    """Speedup per worker, ``t_one / (n * t_many)``; 1.0 is perfect linear scaling (PowerAI DDL)."""
    n = check_count("n", n)
    return speedup(t_one, t_many) / n


def communication_overhead(t_iteration: float, t_compute: float) -> float:
    """Share of an iteration not hidden behind compute: ``(t_iteration - t_compute) / t_iteration``."""
    t_iteration = check_positive("t_iteration", t_iteration)
    t_compute = check_nonnegative("t_compute", t_compute)
    if t_compute > t_iteration:
        raise ValueError(f"t_compute must be <= t_iteration ({t_iteration}), got {t_compute}")
    return (t_iteration - t_compute) / t_iteration



# ---------------------------------------------------------------------------
# Parameter servers (chapter 3). Section owned by the parameter-server chapter.
# ---------------------------------------------------------------------------

__all__ += ["ps_time", "byteps_time"]


def ps_time(
    nbytes: float,
    workers: int,
    bandwidth: float,
    servers: int = 1,
    latency: float = 0.0,
    colocated: bool = False,
    server_bandwidth: float | None = None,
    pipelined: bool = True,
) -> float:
    r"""Seconds for one synchronous parameter-server round: push M, pull M.

    Every one of n = ``workers`` machines pushes its whole gradient, M =
    ``nbytes``, split over k = ``servers`` shards of M/k, and pulls the
    updated parameters back. Links are full duplex: a NIC sends and
    receives ``bandwidth`` bytes/s at once, so a machine is busy for
    (bytes it sends in one direction) / bandwidth, and the round takes as
    long as the busiest machine (Jiang et al. 2020, sec. 2.3):

    * **non-colocated** (k separate server machines, NIC ``server_bandwidth``,
      default ``bandwidth``): a worker sends M and receives M; a server
      receives nM/k and sends nM/k, so

      .. math:: T = \max\left(\frac{M}{B_w},\ \frac{nM}{k\,B_s}\right) + 2\alpha.

    * **colocated** (shard j on worker machine j, k <= n; bytes to the local
      shard never reach the NIC): a machine with a shard sends
      M - M/k of gradient and (n-1)M/k of parameters, M + (n-2)M/k in all
      each way; a machine without a shard sends M. With k = n that is
      2(n-1)M/n each way, exactly a ring all-reduce.

    ``pipelined=True`` (the default, as in BytePS) assumes the gradient is cut
    into many small pieces so the pull of one piece overlaps the push of the
    next; then each direction is busy once. ``pipelined=False`` runs the
    whole push, then the whole pull: T = push time + pull time.

    ``latency`` (alpha, seconds) is charged once for the push and once for
    the pull when any byte crosses the network.

    >>> ps_time(100e6, 8, 12.5e9)              # one server, 8 workers, 100 Gb/s NICs
    0.064
    >>> ps_time(100e6, 8, 12.5e9, servers=8)   # eight shards: each NIC carries M each way
    0.008
    """
    nbytes = check_nonnegative("nbytes", nbytes)
    n = check_count("workers", workers, minimum=1)
    bandwidth = check_positive("bandwidth", bandwidth)
    latency = check_nonnegative("latency", latency)
    k = check_count("servers", servers, minimum=1)
    if colocated and k > n:
        raise ValueError(f"servers must be <= workers ({n}) when colocated (at most one shard per worker "
                         f"machine), got {k}")
    b_server = bandwidth if server_bandwidth is None else check_positive("server_bandwidth", server_bandwidth)
    m = nbytes
    if colocated:
        host = m + (n - 2) * m / k  # machine with a shard, bytes each way
        plain = m if k < n else 0.0  # machine without a shard
        if pipelined:
            seconds = max(host, plain) / bandwidth
        else:
            # push: a shard host sends M - M/k, receives (n-1)M/k; pull mirrors it.
            push = max(m - m / k, (n - 1) * m / k, plain)
            seconds = 2 * push / bandwidth
        moved = host > 0 or plain > 0
    else:
        busy = max(m / bandwidth, n * m / (k * b_server))
        seconds = busy if pipelined else 2 * busy
        moved = m > 0
    return seconds + (2 * latency if moved else 0.0)


def byteps_time(nbytes: float, n: int, k: int, bandwidth: float) -> float:
    r"""BytePS' optimal communication time with n GPU machines and k CPU machines.

    Jiang et al. (2020, sec. 4.1): CPU machines each sum a fraction x of the
    gradient, GPU machines (colocated summation) each a fraction y, with
    kx + ny = 1. A CPU machine moves nxM each way; a GPU machine moves
    kxM + 2(n-1)yM = (1 + (n-2)y)M each way. Equalising the two gives

    .. math:: y = \frac{n-k}{n^2+kn-2k},\quad x = \frac{2(n-1)}{n^2+kn-2k},\quad
              T = \frac{2n(n-1)M}{(n^2+kn-2k)B} \quad (k \le n),

    and T = M/B for k >= n (y = 0: a plain non-colocated PS). k = 0 is the
    ring all-reduce time 2(n-1)M/(nB); k = n is M/B. Every machine's NIC
    runs at ``bandwidth`` bytes/s each way; ``nbytes`` is M.

    >>> byteps_time(64e6, 2, 0, 25e9)   # 64 MB, 200 Gb/s = 25 GB/s, 2 machines
    0.00256
    """
    nbytes = check_nonnegative("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    k = check_count("k", k, minimum=0)
    bandwidth = check_positive("bandwidth", bandwidth)
    if n == 1:
        return 0.0
    if k >= n:
        return nbytes / bandwidth
    return 2 * n * (n - 1) * nbytes / ((n * n + k * n - 2 * k) * bandwidth)


# ---------------------------------------------------------------------------
# Today's collectives (chapter 7): sharded data parallelism, mixture of experts,
# reduction inside the network, low-rank compression. Appended block; numpy-free.
# ---------------------------------------------------------------------------
__all__ += ["ZERO_STAGES", "zero_bytes_per_rank", "moe_all_to_all_bytes", "in_network_allreduce_time",
            "powersgd_numbers"]

#: ZeRO stages :func:`zero_bytes_per_rank` knows: 0 is plain data parallelism.
ZERO_STAGES = (0, 1, 2, 3)


def _element_bytes(dtype: str) -> int:
    from .hardware import dtype_bytes  # numpy-free; imported here to keep cost's imports minimal

    return dtype_bytes(dtype)


def zero_bytes_per_rank(params: int, n: int, stage: int, dtype: str = "bf16") -> float:
    r"""Bytes each rank sends per training step under ZeRO ``stage`` (0 = plain data parallelism).

    Rajbhandari et al. (2020, sec. 7): plain data parallelism all-reduces the
    gradient (a ring: reduce-scatter then all-gather, :math:`2\frac{n-1}{n}\Psi`
    elements sent); stages 1 and 2 reduce-scatter the gradient and all-gather
    the updated parameters, the same :math:`2\frac{n-1}{n}\Psi`; stage 3 also
    all-gathers the parameters a second time (forward and backward each need
    them, and each rank keeps only its shard), :math:`3\frac{n-1}{n}\Psi`,
    1.5 times as much. Times ``s`` bytes per element of ``dtype``.

    >>> zero_bytes_per_rank(10**9, 64, 3) / zero_bytes_per_rank(10**9, 64, 0)
    1.5
    >>> zero_bytes_per_rank(1000, 4, 2, dtype="fp32")
    6000.0
    """
    params = check_count("params", params, minimum=1)
    n = check_count("n", n, minimum=1)
    if stage not in ZERO_STAGES or isinstance(stage, bool):
        raise ValueError(f"stage must be one of 0, 1, 2, 3, got {stage!r}")
    passes = 3 if stage == 3 else 2
    return passes * (n - 1) / n * params * _element_bytes(dtype)


def moe_all_to_all_bytes(tokens: int, hidden: int, top_k: int, experts: int, dtype: str = "bf16") -> float:
    r"""Bytes each rank sends in one all-to-all of a mixture-of-experts layer (dispatch or combine).

    Each of the rank's ``tokens`` (x) goes to its ``top_k`` experts as a
    vector of ``hidden`` elements of ``s`` bytes. With the E experts spread
    evenly, one a rank, and routing uniform, a copy stays on its own rank with
    probability 1/E: the rank sends :math:`x\,k\,h\,s\,\frac{E-1}{E}` bytes
    (Lepikhin et al. 2021; the combine all-to-all sends the same back).

    >>> moe_all_to_all_bytes(4096, 4096, 2, 8)        # bf16
    58720256.0
    """
    tokens = check_count("tokens", tokens, minimum=0)
    hidden = check_count("hidden", hidden, minimum=1)
    experts = check_count("experts", experts, minimum=1)
    top_k = check_count("top_k", top_k, minimum=1, maximum=experts)
    return tokens * top_k * hidden * _element_bytes(dtype) * (experts - 1) / experts


def in_network_allreduce_time(nbytes: float, n: int, bandwidth: float, latency: float = 0.0) -> float:
    r"""All-reduce time when a switch reduces (InfiniBand SHARP, NVLink SHARP): :math:`2\alpha + M/B`.

    Each rank sends its M bytes up to the switch once; the switch adds the n
    contributions as they stream through and sends the sum down, M bytes to
    each rank. Up and down run at once on full-duplex links, pipelined, so
    the bandwidth term is M/B against the ring's :math:`2\frac{n-1}{n}M/B`;
    the latency is two hops (Graham et al. 2016). ``n = 1`` costs nothing.

    >>> in_network_allreduce_time(1e9, 8, 100e9)
    0.01
    """
    nbytes = check_nonnegative("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    bandwidth = check_positive("bandwidth", bandwidth)
    latency = check_nonnegative("latency", latency)
    if n == 1:
        return 0.0
    return 2 * latency + nbytes / bandwidth


def powersgd_numbers(m: int, n: int, rank: int) -> int:
    r"""Numbers PowerSGD communicates for one m x n gradient matrix: :math:`(m + n)\,r`.

    Vogels et al. (2019): the factors :math:`P = MQ` (m x r) and
    :math:`Q = M^\top P` (n x r) are all-reduced instead of the m n entries.
    (Here ``n`` is the matrix's second dimension, as in the paper.)

    >>> powersgd_numbers(1024, 1024, 4), 1024 * 1024
    (8192, 1048576)
    """
    m = check_count("m", m, minimum=1)
    n = check_count("n", n, minimum=1)
    rank = check_count("rank", rank, minimum=1, maximum=min(m, n))
    return (m + n) * rank
