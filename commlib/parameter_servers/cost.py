r"""Parameter servers in closed form: bytes per machine, round time, the comparison with a ring.

The executed round is :func:`commlib.parameter_servers.simulate.ps_round` (numpy arrays, a trace of
every message); this module holds what can be written down without running
it, and imports no numpy, so a calculator can run it in any Python
(:func:`commlib.parameter_servers.calculators.ps_results`). :mod:`commlib.parameter_servers.simulate` re-exports every name.

Units: sizes in bytes, bandwidths in bytes/s per direction (full-duplex
NICs), times in seconds. n = workers, k = server machines (or shards when
colocated), M = bytes of one gradient, B_w and B_s the worker's and the
server's NIC, alpha the start-up time of one message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..collectives import cost
from ..units import check_count, check_nonnegative, check_positive

__all__ = [
    "ps_time",
    "byteps_time",
    "PSTraffic",
    "PSComparison",
    "check_shards",
    "ps_traffic",
    "round_time",
    "ps_beats_ring",
    "smallest_k_to_beat_ring",
    "best_allreduce",
    "byteps_split",
    "compare_ps_ring",
    "allreduce_on_same_cards",
]


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
    traffic = ps_traffic(m, n, k, colocated)   # bytes each machine sends (and receives): defined once, there
    if colocated:
        if pipelined:
            seconds = traffic.busiest / bandwidth
        else:
            # push: a shard host sends M - M/k, receives (n-1)M/k; pull mirrors it.
            push = max(m - m / k, (n - 1) * m / k, traffic.worker or 0.0)
            seconds = 2 * push / bandwidth
        moved = traffic.busiest > 0
    else:
        busy = max(traffic.worker / bandwidth, traffic.shard_host / b_server)
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


@dataclass(frozen=True)
class PSTraffic:
    """Bytes each machine sends in one round (it receives the same amount).

    ``shard_host`` is a machine that holds a shard (a server machine, or in
    colocated mode a worker that also serves); ``worker`` a worker machine that
    holds no shard (None when every worker holds one). ``busiest`` is the
    larger; the round's time is ``busiest / bandwidth`` on equal NICs.
    """

    shard_host: float
    worker: float | None
    colocated: bool

    @property
    def busiest(self) -> float:
        """Bytes each way on the busiest NIC."""
        return max(self.shard_host, self.worker or 0.0)


@dataclass(frozen=True)
class PSComparison:
    """PS against ring all-reduce for one configuration (what the calculator shows)."""

    nbytes: float
    workers: int
    servers: int
    colocated: bool
    ps_seconds: float
    ring_seconds: float
    smallest_k: int | None
    same_cards_seconds: float | None = None

    @property
    def cards(self) -> tuple[int, int]:
        """Network cards each side uses: ``(PS, ring)``; n + k against n with separate servers."""
        return (self.workers if self.colocated else self.workers + self.servers), self.workers

    @property
    def winner_same_cards(self) -> str:
        """The winner when the ring's workers get the PS's cards too (:func:`allreduce_on_same_cards`)."""
        same = self.ring_seconds if self.same_cards_seconds is None else self.same_cards_seconds
        if math.isclose(self.ps_seconds, same, rel_tol=1e-9, abs_tol=0.0):
            return "tie"
        return "PS" if self.ps_seconds < same else "ring all-reduce"

    @property
    def winner(self) -> str:
        """``"PS"``, ``"ring all-reduce"`` or ``"tie"`` (within one part in 10**9)."""
        if math.isclose(self.ps_seconds, self.ring_seconds, rel_tol=1e-9, abs_tol=0.0):
            return "tie"
        return "PS" if self.ps_seconds < self.ring_seconds else "ring all-reduce"

    @property
    def ratio(self) -> float:
        """PS time over ring time (below 1: PS is faster)."""
        if self.ring_seconds == 0:
            return 1.0 if self.ps_seconds == 0 else math.inf
        return self.ps_seconds / self.ring_seconds


def check_shards(workers: int, servers: int, colocated: bool = False) -> tuple[int, int]:
    """Validated ``(n, k)``: whole numbers >= 1, and at most one shard per worker machine when colocated.

    >>> check_shards(4, 2, colocated=True)
    (4, 2)
    >>> check_shards(4, 5, colocated=True)
    Traceback (most recent call last):
    ...
    ValueError: servers must be <= workers (4) when colocated (one shard per worker machine at most), got 5
    """
    n = check_count("workers", workers, minimum=1)
    k = check_count("servers", servers, minimum=1)
    if colocated and k > n:
        raise ValueError(f"servers must be <= workers ({n}) when colocated (one shard per worker "
                         f"machine at most), got {k}")
    return n, k


def ps_traffic(nbytes: float, workers: int, servers: int = 1, colocated: bool = False) -> PSTraffic:
    r"""Bytes each machine sends (and receives) in one PS round, in closed form.

    M = ``nbytes`` (one full gradient), n = ``workers``, k = ``servers``, even
    shards of M/k (Jiang et al. 2020, sec. 2.3):

    * non-colocated: a worker sends M (push) and receives M (pull); a server
      receives nM/k and sends nM/k;
    * colocated (shard j on worker j, k <= n): a shard host sends the
      M - M/k of its gradient that belongs elsewhere and the (n-1)M/k of
      parameters the others pull, :math:`M + (n-2)M/k`; with k = n that is
      :math:`2(n-1)M/n`, the ring all-reduce volume. A worker without a shard
      sends M.

    >>> ps_traffic(1e9, 8, 1)         # note 000: server moves workers x M each way
    PSTraffic(shard_host=8000000000.0, worker=1000000000.0, colocated=False)
    >>> ps_traffic(1e9, 8, 8, colocated=True).shard_host
    1750000000.0
    """
    m = check_nonnegative("nbytes", nbytes)
    n, k = check_shards(workers, servers, colocated)
    if colocated:
        return PSTraffic(shard_host=m + (n - 2) * m / k, worker=m if k < n else None, colocated=True)
    return PSTraffic(shard_host=n * m / k, worker=m, colocated=False)


def round_time(nbytes: float, workers: int, bandwidth: float, servers: int = 1, latency: float = 0.0,
               colocated: bool = False, server_bandwidth: float | None = None, pipelined: bool = True,
               one_port: bool = True) -> float:
    r"""Seconds for one synchronous PS round, counting every message's start-up on the card that handles it.

    The **one-port** model (``one_port=True``) is the one chapter 1 uses for
    the naive master: a NIC sends one message at a time and receives one at
    a time (full duplex: both at once), and each message of m bytes holds its
    direction of the card for :math:`\alpha + m/B`. In one round with k
    separate server machines, each of the n workers sends k messages of M/k
    (push) and receives k (pull); each server receives n and sends n. So a
    server's start-up term grows with n, like the master's:

    * push, then pull (``pipelined=False``):
      :math:`T = 2\max\left(k\alpha + \frac{M}{B_w},\ n\alpha + \frac{nM}{kB_s}\right)`;
    * push and pull overlapped (``pipelined=True``): each direction of each
      card is busy once, and the last pull waits for one push start-up:
      :math:`T = \max\left(k\alpha + \frac{M}{B_w},\ n\alpha + \frac{nM}{kB_s}\right) + \alpha`.

    Colocated (shard j on worker j, k <= n): a machine with a shard sends
    k - 1 gradient shards and receives n - 1 in the push, the reverse in
    the pull, (n + k - 2) messages each way; a machine without one sends and
    receives k. With k = n and the push before the pull this is exactly the
    ring all-reduce, :math:`2(n-1)(\alpha + M/(nB))`.

    ``one_port=False`` lets all of a card's messages start at once (each
    transfer pays alpha once, as when flows are mapped onto links,
    :func:`commlib.network.topology.map_flows`): that is :func:`commlib.ps_time`.
    With ``latency=0`` the two agree.

    >>> round_time(1e6, 8, 1e9, latency=1e-5)                   # one server: 8 start-ups + 8 MB, + 1
    0.00809
    >>> round(round_time(1e6, 8, 1e9, latency=1e-5, one_port=False), 5)   # start-ups at once: 2 alpha
    0.00802
    """
    m = check_nonnegative("nbytes", nbytes)
    n, k = check_shards(workers, servers, colocated)
    b_w = check_positive("bandwidth", bandwidth)
    a = check_nonnegative("latency", latency)
    if not one_port:
        return ps_time(m, n, b_w, servers=k, latency=a, colocated=colocated,
                            server_bandwidth=server_bandwidth, pipelined=pipelined)
    b_s = b_w if server_bandwidth is None or colocated else check_positive("server_bandwidth", server_bandwidth)
    def busy(messages: int, nbytes_: float, bw: float) -> float:
        return messages * a + nbytes_ / bw if messages and m > 0 else 0.0

    if colocated:
        plain = k if k < n else 0                         # messages each way of a machine without a shard
        push = max(busy(k - 1, m - m / k, b_w), busy(n - 1, (n - 1) * m / k, b_w), busy(plain, m, b_w))
        pull = push                                       # the same counts, directions swapped
        both = max(busy(n + k - 2, m + (n - 2) * m / k, b_w), busy(plain, m, b_w))
    else:
        push = max(busy(k, m, b_w), busy(n, n * m / k, b_s))  # worker sends k shards; a server receives n
        pull = push
        both = push                                       # each direction once, push and pull overlapped
    if both == 0.0:
        return 0.0
    return both + a if pipelined else push + pull


def ps_beats_ring(nbytes: float, n: int, k: int, bandwidth_gpu: float, bandwidth_cpu: float | None = None,
                  latency: float = 0.0) -> bool:
    """True when a non-colocated PS with ``k`` server machines is strictly faster than ring all-reduce.

    Workers' NICs run at ``bandwidth_gpu``, servers' at ``bandwidth_cpu``
    (default: the same), bytes/s each way.

    >>> ps_beats_ring(1e8, 8, 8, 12.5e9), ps_beats_ring(1e8, 8, 4, 12.5e9)
    (True, False)
    """
    t_ps = round_time(nbytes, n, bandwidth_gpu, servers=k, latency=latency, server_bandwidth=bandwidth_cpu)
    return t_ps < cost.allreduce_time(nbytes, n, bandwidth_gpu, latency, algorithm="ring")


def smallest_k_to_beat_ring(nbytes: float, n: int, bandwidth_gpu: float, bandwidth_cpu: float | None = None,
                            latency: float = 0.0) -> int | None:
    r"""Fewest server machines with which a non-colocated PS beats ring all-reduce, or None.

    PS time (pipelined, one-port, :func:`round_time`) is
    :math:`\max(k\alpha + M/B_g,\ n\alpha + nM/(kB_c)) + \alpha`; ring time is
    :math:`2(n-1)\alpha + 2(n-1)M/(nB_g)`. The server term falls as k grows,
    the worker term rises (one more start-up per server), so the winning k
    form an interval. Its low end is the first k above

    .. math:: k_0 = \frac{nM}{B_c\,(T_{ring} - (n+1)\alpha)},

    if the worker term still fits there; else no k wins (with alpha = 0 the
    worker term needs n > 2: for n = 2 the best PS only ties). For alpha = 0
    and equal NICs :math:`k_0 = n^2/(2(n-1))`, a little above n/2: so k = n
    always wins (n > 2) and k <= n/2 always loses (Jiang et al. 2020,
    sec. 2.3). ``nbytes`` matters only through alpha.

    >>> smallest_k_to_beat_ring(1e8, 8, 12.5e9), smallest_k_to_beat_ring(1e8, 2, 12.5e9)
    (5, None)
    >>> smallest_k_to_beat_ring(1e5, 8, 12.5e9, latency=5e-6)   # 100 kB: the ring's 14 start-ups cost more
    2
    """
    m = check_positive("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    b_gpu = check_positive("bandwidth_gpu", bandwidth_gpu)
    b_cpu = b_gpu if bandwidth_cpu is None else check_positive("bandwidth_cpu", bandwidth_cpu)
    latency = check_nonnegative("latency", latency)
    t_ring = cost.allreduce_time(m, n, b_gpu, latency, algorithm="ring")
    room = t_ring - (n + 1) * latency
    if room <= 0:
        return None
    k0 = max(1, math.floor(n * m / (b_cpu * room)) + 1)
    # the exact smallest k, stepping over rounding at the boundary; beyond k0 + 2 the worker term only grows
    for k in range(max(1, k0 - 2), k0 + 3):
        if ps_beats_ring(m, n, k, b_gpu, b_cpu, latency):
            return k
    return None


def best_allreduce(nbytes: float, n: int, bandwidth: float, latency: float = 0.0) -> tuple[str, float]:
    """The fastest all-reduce of :data:`commlib.cost.ALLREDUCE_ALGORITHMS` for this size: ``(name, seconds)``.

    The fair rival of a parameter server: for small gradients start-ups
    weigh, and on a power of two halving-doubling beats the ring (same
    bytes, fewer start-ups). Algorithms that reject ``n`` are skipped.

    >>> name, t = best_allreduce(1e6, 32, 3.125e9, latency=1e-5)
    >>> name, round(t * 1e3, 2)
    ('halving_doubling', 0.72)
    >>> best_allreduce(1e6, 6, 3.125e9, latency=1e-5)[0]      # off a power of two the doublings fold whole vectors
    'ring'
    >>> best_allreduce(1e6, 0, 3.125e9)
    Traceback (most recent call last):
    ...
    ValueError: n must be a rank count some all-reduce runs on (>= 1), got 0
    """
    best = None
    for name in cost.ALLREDUCE_ALGORITHMS:
        try:
            t = cost.allreduce_time(nbytes, n, bandwidth, latency, algorithm=name)
        except ValueError:
            continue
        if best is None or t < best[1]:
            best = (name, t)
    if best is None:
        raise ValueError(f"n must be a rank count some all-reduce runs on (>= 1), got {n!r}")
    return best


def byteps_split(n: int, k: int) -> tuple[float, float]:
    r"""BytePS' optimal share of the summation: (x per CPU machine, y per GPU machine).

    With n GPU machines (each running a colocated summation service) and k
    CPU machines, kx + ny = 1 and the busiest NIC is minimised when
    :math:`x = \frac{2(n-1)}{n^2+kn-2k}`, :math:`y = \frac{n-k}{n^2+kn-2k}`
    for k <= n; for k >= n, y = 0 and x = 1/k (Jiang et al. 2020, sec. 4.1).

    >>> byteps_split(4, 0), byteps_split(4, 4), byteps_split(4, 2)
    ((0.0, 0.25), (0.25, 0.0), (0.3, 0.1))
    """
    n = check_count("n", n, minimum=1)
    k = check_count("k", k, minimum=0)
    if n == 1:
        return 0.0, 1.0
    if k == 0:
        return 0.0, 1.0 / n
    if k >= n:
        return 1.0 / k, 0.0
    d = n * n + k * n - 2 * k
    return 2 * (n - 1) / d, (n - k) / d


def allreduce_on_same_cards(nbytes: float, workers: int, servers: int, worker_bandwidth: float,
                            server_bandwidth: float | None = None, latency: float = 0.0,
                            algorithm: str = "ring") -> float:
    r"""Seconds of an all-reduce whose n workers get the network cards a PS with k separate servers uses.

    A parameter server with k separate server machines uses n + k cards; an all-reduce among the
    n workers, n. Given the servers' cards as extra rails (one ring per card, each on its share of
    the buffer, as NCCL spreads its channels over a host's NICs), a worker's card bandwidth is
    :math:`B_w + kB_s/n`: whole extra cards when k is a multiple of n, else the same total card
    bandwidth spread evenly. The start-ups stay those of one ``algorithm``. For the bandwidth terms
    the PS never wins on the same cards: with :math:`x = B_w`, :math:`y = kB_s/n`,
    :math:`T_{PS} = \max(M/x, M/y) \ge 2M/(x+y) > 2\frac{n-1}{n}M/(x+y)`, the ring's time.

    >>> round(allreduce_on_same_cards(1e8, 8, 8, 12.5e9) * 1e3, 2)   # 2 cards each: (n-1)/n M/B
    7.0
    """
    n, k = check_shards(workers, servers)
    b_w = check_positive("worker_bandwidth", worker_bandwidth)
    b_s = b_w if server_bandwidth is None else check_positive("server_bandwidth", server_bandwidth)
    return cost.allreduce_time(nbytes, n, b_w + k * b_s / n, latency, algorithm=algorithm)


def compare_ps_ring(nbytes: float, workers: int, servers: int, worker_bandwidth: float,
                    server_bandwidth: float | None = None, colocated: bool = False,
                    latency: float = 0.0) -> PSComparison:
    """PS round time against ring all-reduce time for one configuration, on the cards given and on the same cards.

    ``worker_bandwidth`` is each worker NIC, ``server_bandwidth`` each server
    machine's NIC (ignored when ``colocated``), bytes/s each way. Also returns
    the smallest number of non-colocated servers that beats the ring (on n + k
    cards against its n), and the ring's time on the PS's n + k cards
    (:func:`allreduce_on_same_cards`; colocated, both use the same n).

    >>> c = compare_ps_ring(1e8, 8, 4, 12.5e9)
    >>> c.winner, c.smallest_k, c.cards, c.winner_same_cards
    ('ring all-reduce', 5, (12, 8), 'ring all-reduce')
    >>> compare_ps_ring(1e8, 8, 8, 12.5e9).winner, compare_ps_ring(1e8, 8, 8, 12.5e9).winner_same_cards
    ('PS', 'ring all-reduce')
    """
    t_ps = round_time(nbytes, workers, worker_bandwidth, servers=servers, latency=latency,
                      colocated=colocated, server_bandwidth=None if colocated else server_bandwidth)
    t_ring = cost.allreduce_time(nbytes, workers, worker_bandwidth, latency, algorithm="ring")
    same = t_ring if colocated else allreduce_on_same_cards(nbytes, workers, servers, worker_bandwidth,
                                                            server_bandwidth, latency)
    best = (smallest_k_to_beat_ring(nbytes, workers, worker_bandwidth, server_bandwidth, latency)
            if nbytes > 0 else None)
    return PSComparison(float(nbytes), int(workers), int(servers), bool(colocated), t_ps, t_ring, best, same)
