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
    "round_pieces",
    "colocated_on_fast_cards_time",
    "ps_beats_ring",
    "overhead_to_beat",
    "smallest_k_to_beat_ring",
    "best_allreduce",
    "DIRECT",
    "RIVALS",
    "OWN_SCHEDULE",
    "SAME_CARDS_RIVALS",
    "rival_label",
    "rival_time",
    "byteps_split",
    "compare_ps_ring",
    "allreduce_on_same_cards",
    "best_allreduce_on_same_cards",
    "same_cards_shares",
    "direct_in_sequence_on_same_cards",
    "SAME_CARDS_LABEL",
    "SparseExchange",
    "sparse_exchange",
]

#: What the book calls the all-reduce of :func:`allreduce_on_same_cards` wherever it shows it (tables, figures,
#: calculator). In bandwidth terms its time is a lower bound on every all-reduce among the workers on those cards;
#: with start-ups counted it is the fastest all-reduce the book counts there, no proved bound.
SAME_CARDS_LABEL = "best all-reduce on the same cards"


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


def byteps_time(nbytes: float, n: int, k: int, bandwidth: float, server_bandwidth: float | None = None) -> float:
    r"""BytePS' optimal communication time with n GPU machines and k CPU machines.

    Jiang et al. (2020, sec. 4.1): CPU machines each sum a fraction f_c of the
    gradient, GPU machines (colocated summation) each a fraction f_g, with
    k f_c + n f_g = 1 (:func:`byteps_split`). A CPU machine moves n f_c M each way on
    its NIC of ``server_bandwidth`` :math:`B_s` (default ``bandwidth``); a GPU
    machine moves (k f_c + 2(n-1) f_g)M each way on its NIC of ``bandwidth``
    :math:`B_w`. The round takes as long as the busier:

    .. math:: T = \max\left(\frac{nf_cM}{B_s},\ \frac{(kf_c + 2(n-1)f_g)M}{B_w}\right).

    On equal NICs the balanced split gives
    :math:`T = \frac{2n(n-1)M}{(n^2+kn-2k)B}` for k <= n and M/B for k >= n;
    k = 0 is the ring all-reduce time 2(n-1)M/(nB). ``nbytes`` is M.

    >>> byteps_time(64e6, 2, 0, 25e9)   # 64 MB, 200 Gb/s = 25 GB/s, 2 machines
    0.00256
    >>> round(byteps_time(1e9, 8, 4, 12.5e9, server_bandwidth=1.25e9) * 1e3, 1)   # CPU machines on 10 Gb/s
    134.9
    """
    nbytes = check_nonnegative("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    k = check_count("k", k, minimum=0)
    bandwidth = check_positive("bandwidth", bandwidth)
    b_s = bandwidth if server_bandwidth is None else check_positive("server_bandwidth", server_bandwidth)
    f_c, f_g = byteps_split(n, k, bandwidth / b_s)
    return max(n * f_c * nbytes / b_s, (k * f_c + 2 * (n - 1) * f_g) * nbytes / bandwidth)


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
    same_cards_algorithm: str = "ring"

    @property
    def cards(self) -> tuple[int, int]:
        """Network cards each side uses: ``(PS, ring)``; n + k against n with separate servers."""
        return (self.workers if self.colocated else self.workers + self.servers), self.workers

    @property
    def winner_same_cards(self) -> str:
        """The winner when the all-reduce's workers get the PS's cards too: ``"PS"``, ``"tie"`` or the fastest
        all-reduce on them, by name (``"ring all-reduce"``, ``"direct reduce-scatter/all-gather"``;
        :func:`best_allreduce_on_same_cards`)."""
        same = self.ring_seconds if self.same_cards_seconds is None else self.same_cards_seconds
        if math.isclose(self.ps_seconds, same, rel_tol=1e-9, abs_tol=0.0):
            return "tie"
        if self.ps_seconds < same:
            return "PS"
        return "ring all-reduce" if self.same_cards_algorithm == "ring" else rival_label(self.same_cards_algorithm)

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


def _stages(m: float, n: int, k: int, alpha: float, b_w: float, b_s: float, colocated: bool,
            q: int) -> tuple[float, float]:
    """Seconds of an edge stage (push piece 1, or pull piece q) and of a middle one, with ``q`` pieces per shard.

    A middle stage pulls piece j while pushing piece j + 1; a stage lasts as long as its busiest card
    direction, each message ``alpha`` (the start-up it holds the card for) + bytes/B (one-port).
    """
    def busy(messages: int, bw: float) -> float:
        return messages * (alpha + m / (k * q * bw)) if messages else 0.0

    if colocated:
        plain = k if k < n else 0                         # messages each way of a machine without a shard
        # a shard host sends k - 1 pushes and receives n - 1 (the pull: the reverse); overlapped, n + k - 2 each way
        edge = max(busy(max(k - 1, n - 1), b_w), busy(plain, b_w))
        middle = max(busy(n + k - 2, b_w), busy(plain, b_w))
    else:
        edge = middle = max(busy(k, b_w), busy(n, b_s))   # worker: k messages each way; a server: n
    return edge, middle


def _piece_round(m: float, n: int, k: int, alpha: float, b_w: float, b_s: float, colocated: bool, q: int,
                 overhead: float = 1.0) -> float:
    """One-port round with each shard cut into ``q`` equal pieces, all cards stepping through them together.

    A share ``overhead`` (phi) of alpha holds the card for each message; the rest, (1 - phi) alpha, is latency in
    flight. Apart, a card direction carries only pushes or only pulls: the pushes stream, the pulls stream one
    stage and one latency behind, and latency lies on the critical path twice (the last push, the last pull).
    Colocated, one direction carries both, and the stages go in lockstep, each waiting (1 - phi) alpha for the
    one before to land: an upper bound, exact with one piece."""
    if not colocated:
        return _apart_round(m, n, k, overhead * alpha, (1 - overhead) * alpha, b_w, b_s, q)
    edge, middle = _stages(m, n, k, overhead * alpha, b_w, b_s, colocated, q)
    flight = (1 - overhead) * alpha
    return 2 * edge + (q - 1) * middle + (q + 1) * flight


def _apart_round(m: float, n: int, k: int, phi_alpha: float, flight: float, b_w: float, b_s: float,
                 q: int) -> float:
    """A round with k separate servers and each shard cut into ``q`` pieces: q + 1 stages and two latencies.

    ``phi_alpha`` is the part of a start-up that holds the card for each message, ``flight`` the latency that
    holds none. In a stage a worker's card handles k messages of M/(kq) bytes each way, a server's n.
    """
    worker = k * (phi_alpha + m / (k * q * b_w))
    server = n * (phi_alpha + m / (k * q * b_s))
    return (q + 1) * max(worker, server) + 2 * flight


def round_pieces(nbytes: float, workers: int, bandwidth: float, servers: int = 1, latency: float = 0.0,
                 colocated: bool = False, server_bandwidth: float | None = None,
                 overhead: float = 1.0) -> int | None:
    r"""The number of pieces q per shard that makes the one-port round (:func:`round_time`) fastest.

    ``None`` when more pieces always help: no byte moves, ``latency`` is 0, or (separate servers) none of it
    is per-message overhead (``overhead`` = 0); then the round tends to its limit, the bandwidth-only time
    :func:`ps_time` plus the latency of the last push and of the last pull. The round time is convex in
    q (start-ups grow like q, the last piece's bytes shrink like 1/q): doubling, then bisection, finds the
    best whole q.

    >>> round_pieces(1e6, 32, 3.125e9, servers=32, latency=1e-5)   # 1 MB on 32 workers: one piece, push then pull
    1
    >>> round_pieces(1e6, 8, 3.125e9, servers=8, latency=1e-5)
    2
    >>> print(round_pieces(1e6, 8, 3.125e9, servers=8, latency=1e-5, overhead=0.0))   # latency only: ever more pieces
    None
    """
    m = check_nonnegative("nbytes", nbytes)
    n, k = check_shards(workers, servers, colocated)
    b_w = check_positive("bandwidth", bandwidth)
    alpha = check_nonnegative("latency", latency)
    phi = _check_share(overhead)
    b_s = b_w if server_bandwidth is None or colocated else check_positive("server_bandwidth", server_bandwidth)
    if alpha == 0 or m == 0 or (phi == 0 and not colocated):
        return None
    def t(q: int) -> float:
        return _piece_round(m, n, k, alpha, b_w, b_s, colocated, q, phi)
    hi = 1
    while t(2 * hi) < t(hi):                              # convex: the best q lies beyond hi
        hi *= 2
    lo, hi = 1, 2 * hi
    while lo < hi:                                        # first q where one more piece no longer helps
        mid = (lo + hi) // 2
        if t(mid + 1) < t(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo


def _check_share(overhead: float) -> float:
    phi = check_nonnegative("overhead", overhead)
    if phi > 1:
        raise ValueError(f"overhead must be a share of alpha between 0 and 1, got {overhead!r}")
    return phi


def round_time(nbytes: float, workers: int, bandwidth: float, servers: int = 1, latency: float = 0.0,
               colocated: bool = False, server_bandwidth: float | None = None, pipelined: bool = True,
               one_port: bool = True, pieces: int | None = None, overhead: float = 1.0) -> float:
    r"""Seconds for one synchronous PS round, counting every message's start-up on the card that handles it.

    The **one-port** model (``one_port=True``) is the one chapter 1 uses for
    the naive master: a NIC sends one message at a time and receives one at
    a time (full duplex: both at once), and each message of m bytes holds its
    direction of the card for :math:`\alpha + m/B` (``latency`` is alpha).

    A server can send no pull of a piece of its shard before all n pushes of
    that piece have arrived. With one message per shard the round is push,
    then pull. Overlap needs each shard cut into q pieces, each its own
    message with its own start-up; all cards step through the pieces
    together (push piece 1; pull piece j while pushing piece j + 1; pull
    piece q), each stage as long as its busiest card direction. With k
    separate server machines a worker sends k messages of M/(kq) per stage,
    a server receives n and sends n:

    .. math:: T(q) = (q+1)\max\left(k\alpha + \frac{M}{qB_w},\ n\alpha + \frac{nM}{kqB_s}\right).

    q = 1 is push then pull (``pipelined=False``); ``pipelined=True`` takes
    the best q (:func:`round_pieces`), ``pieces`` a given one. Each piece
    pays its start-ups, so with all of alpha per-message overhead the best q
    is finite; with alpha = 0, T falls towards the bandwidth-only
    :func:`ps_time` as q grows, and that limit is returned.

    Colocated (shard j on worker j, k <= n): a machine with a shard sends
    k - 1 gradient pieces and receives n - 1 in a push stage, the reverse in
    a pull stage, and n + k - 2 each way when a pull overlaps the next push;
    a machine without one sends and receives k. With one piece and k = n
    this is exactly the ring all-reduce, :math:`2(n-1)(\alpha + M/(nB))`,
    and with k = 1 the naive master, :math:`2(n-1)(\alpha + M/B)`.

    ``overhead`` (:math:`\varphi`, 0 to 1) splits alpha: :math:`\varphi\alpha` is per-message overhead,
    holding the card for each message as above, and :math:`(1-\varphi)\alpha` latency, time in flight that
    holds no card. Apart, the push of piece j + 1 waits for nothing and only the pull of piece j waits for
    the pushes of piece j, so the pulls run one stage and one latency behind the pushes, and latency lies
    on the critical path twice, once for the last push and once for the last pull:

    .. math:: T(q) = (q+1)\max\left(k\varphi\alpha + \frac{M}{qB_w},\ n\varphi\alpha + \frac{nM}{kqB_s}\right)
              + 2(1-\varphi)\alpha.

    :math:`\varphi = 1` (the default) is the one-port count above; at :math:`\varphi = 0` more pieces always
    help and the round tends to :math:`\max(M/B_w, nM/(kB_s)) + 2\alpha`, :func:`ps_time`. Colocated, a
    card direction carries pushes and pulls alike, and the model keeps the stages in lockstep, each
    waiting :math:`(1-\varphi)\alpha` for the one before to land: :math:`q + 1` latencies, an upper bound,
    exact with one piece. The all-reduces the PS is held against get the same accounting
    (:func:`rival_time`).

    ``one_port=False`` lets all of a card's messages start at once (each
    transfer pays alpha once, as when flows are mapped onto links,
    :func:`commlib.network.topology.map_flows`): that is :func:`commlib.parameter_servers.cost.ps_time`.
    With ``latency=0`` the two agree.

    >>> round(round_time(1e6, 8, 1e9, latency=1e-5, pipelined=False), 5)   # one server: 2 x (8 start-ups + 8 MB)
    0.01616
    >>> round(round_time(1e6, 8, 1e9, latency=1e-5), 5)         # best cut, 10 pieces: 11 x (8 start-ups + 0.8 MB)
    0.00968
    >>> round(round_time(1e6, 8, 1e9, latency=1e-5, one_port=False), 5)   # start-ups at once: 2 alpha
    0.00802
    >>> round(round_time(1e6, 8, 1e9, latency=1e-5, overhead=0.0), 5)   # latency only: the limit, 8 MB + 2 alpha
    0.00802
    """
    m = check_nonnegative("nbytes", nbytes)
    n, k = check_shards(workers, servers, colocated)
    b_w = check_positive("bandwidth", bandwidth)
    alpha = check_nonnegative("latency", latency)
    phi = _check_share(overhead)
    if not one_port:
        return ps_time(m, n, b_w, servers=k, latency=alpha, colocated=colocated,
                       server_bandwidth=server_bandwidth, pipelined=pipelined)
    b_s = b_w if server_bandwidth is None or colocated else check_positive("server_bandwidth", server_bandwidth)
    if m == 0:
        return 0.0
    q = check_count("pieces", pieces, minimum=1) if pieces is not None else None if pipelined else 1
    return _best_round(m, n, k, alpha, b_w, b_s, colocated, phi, q)


def _best_round(m: float, n: int, k: int, alpha: float, b_w: float, b_s: float, colocated: bool, phi: float,
                q: int | None) -> float:
    """The one-port round of :func:`round_time` with ``q`` pieces per shard, or at its best cut if ``q`` is None."""
    if q is None:
        q = round_pieces(m, n, b_w, servers=k, latency=alpha, colocated=colocated, server_bandwidth=b_s,
                         overhead=phi)
        if q is None:   # no per-message cost: many pieces, each card direction busy once, latency twice
            return _stages(m, n, k, 0.0, b_w, b_s, colocated, 1)[1] + 2 * (1 - phi) * alpha
    return _piece_round(m, n, k, alpha, b_w, b_s, colocated, q, phi)


def overhead_to_beat(nbytes: float, workers: int, bandwidth: float, target, servers: int = 1,
                     latency: float = 0.0, server_bandwidth: float | None = None) -> float | None:
    r"""The share :math:`\varphi` of alpha that may be per-message overhead for the PS round to come in below ``target``.

    ``target`` is the rival's time in seconds, or a function of the share giving it (a rival that itself
    gains from a share below 1, such as the ring or the fastest all-reduce at that share,
    :func:`rival_time`, :func:`best_allreduce`). Returns the first share at which :func:`round_time` with
    ``overhead`` at it (the PS: best cut, separate servers) reaches the target, found on a grid of 64 steps
    and then by bisection: the PS is faster for every smaller share. Returns 1.0 when it is faster at every
    share up to the one-port count (1), and None when not even 0 (all of alpha latency) is.

    >>> ring = lambda phi: rival_time(1e6, 32, 3.125e9, 1e-5, "ring", overhead=phi)        # the ring at each share
    >>> round(overhead_to_beat(1e6, 32, 3.125e9, ring, servers=32, latency=1e-5), 3)
    0.935
    >>> best = lambda phi: best_allreduce(1e6, 32, 3.125e9, 1e-5, overhead=phi)[1]         # the fastest at each share
    >>> round(overhead_to_beat(1e6, 32, 3.125e9, best, servers=32, latency=1e-5), 3)
    0.177
    """
    def t(f: float) -> float:
        return round_time(nbytes, workers, bandwidth, servers=servers, latency=latency,
                          server_bandwidth=server_bandwidth, overhead=f)
    if callable(target):
        rival = target
    else:
        fixed = check_positive("target", target)
        def rival(f: float) -> float:
            return fixed

    def ahead(f: float) -> bool:
        return t(f) < rival(f)

    if not ahead(0.0):
        return None
    grid = [i / 64 for i in range(65)]
    lo = 0.0
    for f in grid[1:]:
        if not ahead(f):
            hi = f
            break
        lo = f
    else:
        return 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ahead(mid) else (lo, mid)
    return lo


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

    PS time is :func:`round_time` (one-port, best number of pieces); ring time
    :math:`T_{ring} = 2(n-1)\alpha + 2(n-1)M/(nB_g)`. With alpha = 0 the PS
    takes :math:`\max(M/B_g,\ nM/(kB_c))`: the server term falls as k grows,
    so the winners are every k above

    .. math:: k_0 = \frac{nM}{B_c\,T_{ring}},

    provided the worker term M/B_g is below the ring (n > 2; for n = 2 the
    best PS only ties). For equal NICs :math:`k_0 = n^2/(2(n-1))`, a little
    above n/2: so k = n always wins (n > 2) and k <= n/2 always loses (Jiang
    et al. 2020, sec. 2.3). With alpha > 0 a server pays at least 2n
    start-ups and a worker 2k, so only k with :math:`nM/(kB_c) < T_{ring} - 2n\alpha`
    and :math:`2k\alpha + M/B_g < T_{ring}` can win; they are tried in
    order.

    >>> smallest_k_to_beat_ring(1e8, 8, 12.5e9), smallest_k_to_beat_ring(1e8, 2, 12.5e9)
    (5, None)
    >>> smallest_k_to_beat_ring(1e8, 8, 12.5e9, latency=5e-6)   # 100 MB: the pieces' start-ups cost one server more
    6
    >>> print(smallest_k_to_beat_ring(1e6, 8, 12.5e9, latency=5e-6))   # 1 MB: a server's 16 start-ups outnumber the ring's 14
    None
    """
    m = check_positive("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    b_gpu = check_positive("bandwidth_gpu", bandwidth_gpu)
    b_cpu = b_gpu if bandwidth_cpu is None else check_positive("bandwidth_cpu", bandwidth_cpu)
    latency = check_nonnegative("latency", latency)
    t_ring = cost.allreduce_time(m, n, b_gpu, latency, algorithm="ring")
    room = t_ring - 2 * n * latency
    if room <= 0 or m / b_gpu >= t_ring:
        return None
    k_lo = max(1, math.floor(n * m / (b_cpu * room)) + 1)
    if latency == 0:
        k_hi = k_lo + 2
    else:
        k_hi = math.ceil((t_ring - m / b_gpu) / (2 * latency))
    # start a little below k_lo to step over rounding at the boundary
    for k in range(max(1, k_lo - 2), k_hi + 1):
        if ps_beats_ring(m, n, k, b_gpu, b_cpu, latency):
            return k
    return None


#: The direct reduce-scatter/all-gather: every rank sends each other rank its piece of the gradient,
#: then the summed piece, n - 1 messages per card and stage; the colocated PS with k = n.
DIRECT = "direct"

#: The all-reduces a parameter server is held against: chapter 2's flat algorithms and the direct one.
RIVALS = (*cost.ALLREDUCE_ALGORITHMS, DIRECT)

#: The parameter server's own schedule run among the workers on its n + k cards
#: (:func:`colocated_on_fast_cards_time`): a shard on each machine that is dealt a server's card. It is an all-reduce
#: among the workers (a colocated parameter server), so it is a rival on the same cards.
OWN_SCHEDULE = "own_schedule"

#: The all-reduces a parameter server is held against on its own n + k cards: :data:`RIVALS` and its own schedule
#: among the workers (:data:`OWN_SCHEDULE`), the one that ties it where it is closest.
SAME_CARDS_RIVALS = (*RIVALS, OWN_SCHEDULE)


def rival_label(name: str) -> str:
    """How the chapter names an all-reduce of :data:`SAME_CARDS_RIVALS` (``"halving-doubling"``).

    >>> rival_label("halving_doubling"), rival_label("direct"), rival_label("own_schedule")
    ('halving-doubling', 'direct reduce-scatter/all-gather', 'colocated parameter server on the dealt cards')
    """
    if name == OWN_SCHEDULE:
        return "colocated parameter server on the dealt cards"
    return "direct reduce-scatter/all-gather" if name == DIRECT else name.replace("_", "-")


def _chain(steps: tuple[float, ...], q: int | None, bandwidth: float, alpha: float, phi: float) -> float:
    r"""Seconds of a chain of steps, one message per card and step, each step cut into ``q`` pieces.

    Step s sends ``steps[s]`` bytes as q messages, each holding the card for
    :math:`\tau_s = \varphi\alpha + m_s/(qB)`; piece j of step s + 1 needs piece j of step s to have
    landed, :math:`(1-\varphi)\alpha` after it left. A card sends its pieces in order, so a path through
    the schedule runs along the card within a step and down the dependencies between steps; the longest,
    over every cut of the steps into runs of consecutive steps ("segments", each crossed once along a card), is

    .. math:: T(q) = \sum_s \tau_s + (1-\varphi)\alpha
              + \max_{\text{segments}} \sum_{seg}\left[(q-1)\max_{s \in seg}\tau_s + (|seg|-1)(1-\varphi)\alpha\right].

    ``q=None`` is the limit of many pieces with no per-message overhead (:math:`\varphi\alpha = 0`): each
    segment then costs its largest :math:`m_s/B` and its latencies. Equal steps take a closed form,
    :math:`(S-1)\max(q\tau, \tau + (1-\varphi)\alpha) + q\tau + (1-\varphi)\alpha`; with q = 1 any chain is
    :math:`\sum_s (\alpha + m_s/B)`, chapter 2's count.

    >>> _chain((100.0,) * 4, 1, 1.0, 10.0, 0.5), _chain((100.0,) * 4, 4, 1.0, 10.0, 0.0)   # 4 (alpha + 100); 3 x 100 + 100 + 10
    (440.0, 410.0)
    >>> _chain((400.0, 200.0, 200.0, 400.0), None, 1.0, 10.0, 0.0)   # each step hides the latency of the next
    1210.0
    """
    flight = (1 - phi) * alpha
    if q is None:
        base, piece = 0.0, [m / bandwidth for m in steps]
    else:
        piece = [(q - 1) * (phi * alpha + m / (q * bandwidth)) for m in steps]
        base = sum(phi * alpha + m / (q * bandwidth) for m in steps)
    count = len(steps)
    if count == 0:
        return 0.0
    if all(m == steps[0] for m in steps):   # equal steps: one segment per step, or all in one
        return base + flight + max(count * piece[0], piece[0] + (count - 1) * flight)
    best = [0.0] + [-math.inf] * count      # best[i]: the longest path through the first i steps
    for i in range(1, count + 1):
        top = 0.0
        for j in range(i - 1, -1, -1):
            top = max(top, piece[j])
            best[i] = max(best[i], best[j] + top + (i - j - 1) * flight)
    return base + flight + best[count]


def _chain_best(steps: tuple[float, ...], bandwidth: float, alpha: float, phi: float) -> float:
    """The chain (:func:`_chain`) at its best number of pieces: T(q) is convex in q (a maximum of terms in
    q and 1/q with non-negative weights), so doubling, then bisection; with no per-message overhead more
    pieces always help and the limit is returned."""
    if phi * alpha == 0:
        return _chain(steps, None, bandwidth, alpha, phi)
    def t(q: int) -> float:
        return _chain(steps, q, bandwidth, alpha, phi)
    hi = 1
    while t(2 * hi) < t(hi):
        hi *= 2
    lo, hi = 1, 2 * hi
    while lo < hi:
        mid = (lo + hi) // 2
        if t(mid + 1) < t(mid):
            lo = mid + 1
        else:
            hi = mid
    return t(lo)


def rival_time(nbytes: float, n: int, bandwidth: float, latency: float = 0.0, algorithm: str = "ring",
               overhead: float = 1.0) -> float:
    r"""Seconds of one all-reduce of :data:`RIVALS` among n ranks, with a share ``overhead`` (:math:`\varphi`) of
    alpha per message, each at its best under the accounting of :func:`round_time`.

    The ring, the tree, recursive doubling and halving-doubling send one message per card and step, and
    each step needs what the step before delivered. Cut into q pieces, as the PS cuts its shards (and as
    chapter 2's pipelined trees cut theirs), a step can start on its first piece while the last pieces of the step
    before are still in flight, so latency :math:`(1-\varphi)\alpha` that a step would wait for hides
    behind the card's other pieces (:func:`_chain`, at its best q). Each piece pays
    :math:`\varphi\alpha`, so at :math:`\varphi = 1` one piece is best and the time is chapter 2's
    :func:`commlib.cost.allreduce_time`; at :math:`\varphi = 0` the ring takes
    :math:`(2n-3)\max(M/(nB), \alpha) + M/(nB) + \alpha`. Every step's latency still lies on the
    path of the first piece, which no cut removes: a piece travels through every step.

    The direct reduce-scatter/all-gather (``"direct"``) sends n - 1 messages per card in each of its two
    stages, which need not wait for one another within a stage: it is :func:`round_time` colocated with
    k = n, which at :math:`\varphi = 1` is the ring exactly and pays latency once per stage,

    .. math:: T_{direct} = 2(n-1)\varphi\alpha + 2(1-\varphi)\alpha + \frac{2(n-1)M}{nB}

    (more pieces add start-ups and save no bytes: each card already carries its 2(n - 1)M/n). The naive
    master keeps chapter 1's one-port count at every :math:`\varphi`: with :math:`2(n-1)M/B` on the master's
    card it is far behind the others.

    >>> round(rival_time(1e6, 32, 3.125e9, 1e-5, "direct", overhead=0.0) * 1e3, 2)   # 2 alpha + 2(n-1)M/(nB)
    0.64
    >>> round(rival_time(1e6, 32, 3.125e9, 1e-5, "ring", overhead=0.0) * 1e3, 2)     # 61 alpha + 2 x 10 us
    0.63
    >>> rival_time(1e6, 32, 3.125e9, 1e-5, "direct") == rival_time(1e6, 32, 3.125e9, 1e-5, "ring")
    True
    """
    if algorithm == DIRECT:
        n = check_count("n", n, minimum=1)
        return 0.0 if n == 1 else round_time(nbytes, n, bandwidth, servers=n, latency=latency, colocated=True,
                                             overhead=overhead)
    phi = _check_share(overhead)
    steps = cost.allreduce_step_bytes(nbytes, n, algorithm)
    if steps is None or phi == 1 or not steps:
        return cost.allreduce_time(nbytes, n, bandwidth, latency, algorithm=algorithm)
    return _chain_best(steps, check_positive("bandwidth", bandwidth), check_nonnegative("latency", latency), phi)


def best_allreduce(nbytes: float, n: int, bandwidth: float, latency: float = 0.0,
                   overhead: float = 1.0) -> tuple[str, float]:
    r"""The fastest all-reduce of :data:`RIVALS` for this size and share :math:`\varphi` of alpha per message: ``(name, seconds)``.

    The fair rival of a parameter server, under the same count of start-ups (:func:`rival_time`):
    for small gradients start-ups weigh, and on a power of two halving-doubling beats the ring (same
    bytes, fewer start-ups); with little of alpha per-message overhead (a small share) pieces hide the
    latency of the ring's and halving-doubling's steps, and the direct reduce-scatter/all-gather's
    messages overlap. Algorithms that reject ``n`` are skipped; on a tie the first of :data:`RIVALS` is
    named.

    >>> name, t = best_allreduce(1e6, 32, 3.125e9, latency=1e-5)
    >>> name, round(t * 1e3, 2)
    ('halving_doubling', 0.72)
    >>> name, t = best_allreduce(1e6, 32, 3.125e9, latency=1e-5, overhead=0.2)   # pieces hide latency
    >>> name, round(t * 1e3, 2)
    ('halving_doubling', 0.67)
    >>> name, t = best_allreduce(1e6, 32, 3.125e9, latency=1e-5, overhead=0.0)   # the ring and halving-doubling tie
    >>> name, round(t * 1e3, 2)
    ('ring', 0.63)
    >>> best_allreduce(1e6, 6, 3.125e9, latency=1e-5)[0]      # off a power of two Bruck's needs no fold
    'bruck'
    >>> best_allreduce(1e6, 0, 3.125e9)
    Traceback (most recent call last):
    ...
    ValueError: n must be a rank count some all-reduce runs on (>= 1), got 0
    """
    f = _check_share(overhead)
    best = None
    for name in RIVALS:
        try:
            t = rival_time(nbytes, n, bandwidth, latency, algorithm=name, overhead=f)
        except ValueError:
            continue
        if best is None or t < best[1] * (1 - 1e-12):   # a tie within rounding names the first
            best = (name, t)
    if best is None:
        raise ValueError(f"n must be a rank count some all-reduce runs on (>= 1), got {n!r}")
    return best


def byteps_split(n: int, k: int, bandwidth_ratio: float = 1.0) -> tuple[float, float]:
    r"""BytePS' optimal share of the summation: (f_c per CPU machine, f_g per GPU machine).

    With n GPU machines (each running a colocated summation service) and k
    CPU machines, k f_c + n f_g = 1. A CPU machine moves n f_c M each way on its NIC of
    :math:`B_s`, a GPU machine (k f_c + 2(n-1) f_g)M on its NIC of :math:`B_w`;
    equalising the two with :math:`r = B_w/B_s` (``bandwidth_ratio``) gives

    .. math:: f_c = \frac{2(n-1)}{n^2 r + kn - 2k}, \qquad f_g = \frac{1 - kf_c}{n},

    while f_g >= 0; past that the CPU machines take everything, f_g = 0 and
    f_c = 1/k. On equal NICs (r = 1), :math:`f_g = \frac{n-k}{n^2+kn-2k}` and f_g = 0
    from k = n on (Jiang et al. 2020, sec. 4.1).

    >>> byteps_split(4, 0), byteps_split(4, 4), byteps_split(4, 2)
    ((0.0, 0.25), (0.25, 0.0), (0.3, 0.1))
    >>> [round(f, 4) for f in byteps_split(4, 2, bandwidth_ratio=10.0)]   # CPU NICs ten times slower: they take less
    [0.0366, 0.2317]
    """
    n = check_count("n", n, minimum=1)
    k = check_count("k", k, minimum=0)
    r = check_positive("bandwidth_ratio", bandwidth_ratio)
    if n == 1:
        return 0.0, 1.0
    if k == 0:
        return 0.0, 1.0 / n
    f_c = 2 * (n - 1) / (n * n * r + k * n - 2 * k)
    if k * f_c >= 1:
        return 1.0 / k, 0.0
    return f_c, (1 - k * f_c) / n


def same_cards_shares(nbytes: float, card_bandwidths) -> tuple[list[float], float]:
    r"""Shares of a direct reduce-scatter/all-gather on machines with unequal card bandwidths, and its time.

    Rank i owns a share :math:`M_i` of the buffer (:math:`\sum M_i = M`): in the reduce-scatter it
    sends the others their shares of its gradient and receives :math:`(n-1)M_i`; in the all-gather
    it sends its summed share to the n - 1 others and receives the rest. Each direction of its card
    carries :math:`M + (n-2)M_i` bytes, so every rank finishes at T when

    .. math:: M_i = \frac{T B_i - M}{n - 2}, \qquad T = \frac{2(n-1)M}{\sum_i B_i},

    which needs every :math:`M_i \ge 0`, i.e. :math:`2(n-1)B_{min} \ge \sum_i B_i`. Beyond that
    the floor binds: every rank sends and receives at least M, so no all-reduce beats
    :math:`M/B_{min}`, and this one reaches it (the slowest ranks own nothing, the others less than
    the formula gives). Bandwidth terms only; returns ``(shares, T)``.

    >>> s, t = same_cards_shares(36.0, [1.0] * 4 + [2.0] * 4)   # k = 4 extra cards on n = 8 machines
    >>> [round(x, 6) for x in s[::4]], round(t, 6)               # M/36 and 2M/9 each, T = 14M/12
    ([1.0, 8.0], 42.0)
    """
    m = check_nonnegative("nbytes", nbytes)
    b = [check_positive("card bandwidth", x) for x in card_bandwidths]
    n = len(b)
    if n == 0:
        raise ValueError("card_bandwidths must name at least one machine")
    if n == 1:
        return [m], 0.0
    t = max(2 * (n - 1) * m / sum(b), m / min(b))
    if n == 2:   # each rank sends M whatever the split: give the faster card the larger share
        return [m * x / sum(b) for x in b], t
    raw = [(t * x - m) / (n - 2) for x in b]   # their sum is >= M; trim to M, keeping each load <= T
    scale = m / sum(raw) if sum(raw) > 0 else 0.0
    return [x * scale for x in raw], t


def allreduce_on_same_cards(nbytes: float, workers: int, servers: int, worker_bandwidth: float,
                            server_bandwidth: float | None = None, latency: float = 0.0,
                            algorithm: str | None = None, overhead: float = 1.0) -> float:
    r"""Seconds of an all-reduce whose n workers get the network cards a PS with k separate servers uses.

    A parameter server with k separate server machines uses n + k cards; an all-reduce among the
    n workers, n. Given the servers' cards as extra rails, dealt round-robin to the workers (as NCCL
    spreads its channels over a host's NICs), worker i has card bandwidth
    :math:`B_i = B_w + c_iB_s` with :math:`c_i = \lfloor k/n \rfloor` or :math:`\lceil k/n \rceil`.

    ``algorithm`` is one of :data:`SAME_CARDS_RIVALS`, or None (the default) for the fastest of them
    (:func:`best_allreduce_on_same_cards`). :data:`OWN_SCHEDULE` is the parameter server's own schedule among the
    workers (:func:`colocated_on_fast_cards_time`) for k < n; from k = n on every machine holds a server's card
    and a shard, which is the direct one below. When k is a multiple of n the cards are even and it runs
    on them (:func:`rival_time`). Otherwise the ring and the other flat algorithms run at the pace of
    the slowest card, :math:`B_{min} = B_w + \lfloor k/n \rfloor B_s`, and the direct
    reduce-scatter/all-gather fits its shares to the cards (:func:`same_cards_shares`), with bandwidth
    term

    .. math:: T = \max\left(\frac{2(n-1)M}{\sum_i B_i},\ \frac{M}{B_{min}}\right):

    the first reached while :math:`2(n-1)B_{min} \ge \sum_i B_i`, the second a floor for every
    all-reduce (each rank sends and receives at least M). With start-ups (:math:`\varphi` = ``overhead``) it
    runs the faster of two schedules with those shares: the stages overlapped (the bandwidth term above, every
    card charged the n - 1 start-ups per stage of :func:`rival_time`,
    :math:`2(n-1)\varphi\alpha + 2(1-\varphi)\alpha`), or the stages in sequence, each card charged only
    for the messages that carry bytes (:func:`_direct_in_sequence`): a rank that owns no share receives nothing
    in the reduce-scatter and sends nothing in the all-gather.

    For the bandwidth terms the PS never wins on the same cards and ties at best:
    :math:`T_{PS} = \max(M/B_w,\ nM/(kB_s)) \ge M/B_{min}`, and with
    :math:`b_1 = B_w`, :math:`b_2 = kB_s/n` (a worker's card, and the server bandwidth per worker),
    :math:`\max(M/b_1, M/b_2) \ge 2M/(b_1+b_2) > 2(n-1)M/\sum_i B_i`; it ties when k < n and the
    workers' own cards bound the PS.

    >>> round(allreduce_on_same_cards(1e8, 8, 8, 12.5e9) * 1e3, 2)   # 2 cards each: (n-1)/n M/B
    7.0
    >>> round(allreduce_on_same_cards(1.2e9, 8, 4, 12.5e9) * 1e3, 1)  # 12 cards: 14M/(12B)
    112.0
    >>> round(allreduce_on_same_cards(1.2e9, 8, 4, 12.5e9, algorithm="ring") * 1e3, 1)  # the ring at the slowest card's pace
    168.0
    >>> round(allreduce_on_same_cards(1e8, 8, 2, 1.25e9, 12.5e9) * 1e3, 1)  # six workers keep one slow card: M/B_w
    80.0
    >>> round(allreduce_on_same_cards(300e3, 16, 3, 3.125e9, 50e9, 1e-5, "direct", 0.5) * 1e6)  # shares on 3 ranks
    232
    """
    if algorithm is None:
        return best_allreduce_on_same_cards(nbytes, workers, servers, worker_bandwidth, server_bandwidth,
                                            latency, overhead)[1]
    n, k = check_shards(workers, servers)
    b_w = check_positive("worker_bandwidth", worker_bandwidth)
    b_s = b_w if server_bandwidth is None else check_positive("server_bandwidth", server_bandwidth)
    a = check_nonnegative("latency", latency)
    if algorithm == OWN_SCHEDULE:
        if k < n:
            return colocated_on_fast_cards_time(nbytes, n, k, b_w, b_s, a, overhead)
        algorithm = DIRECT
    b_min = b_w + (k // n) * b_s
    if k % n == 0 or algorithm != DIRECT:
        return rival_time(nbytes, n, b_min, a, algorithm=algorithm, overhead=overhead)
    f = _check_share(overhead)
    cards = [b_w + (k // n + (1 if i < k % n else 0)) * b_s for i in range(n)]
    shares, t = same_cards_shares(nbytes, cards)
    overlapped = 2 * (n - 1) * f * a + 2 * (1 - f) * a + t
    if a == 0:
        return overlapped
    return min(overlapped, _direct_in_sequence(nbytes, shares, cards, a, f))


def _direct_in_sequence(nbytes: float, shares, cards, alpha: float, phi: float) -> float:
    r"""Seconds of a direct reduce-scatter then all-gather with the given shares, the stages in sequence, each card
    charged :math:`\varphi\alpha` only for the messages that carry bytes.

    In the reduce-scatter rank i sends a piece to each of the other ranks that own a share (M - M_i bytes) and,
    if it owns one, receives n - 1 pieces ((n - 1)M_i bytes); the all-gather is the mirror image. A stage lasts
    as long as its busiest card direction; the round is two stages plus :math:`2(1-\varphi)\alpha` of flight,
    as in :func:`rival_time`.

    >>> round(_direct_in_sequence(4.0, [1.0] * 4, [1.0] * 4, 0.5, 1.0), 6)   # 2 x (3 x 0.5 + 3) on equal cards
    9.0
    """
    m, n = float(nbytes), len(cards)
    owns = [x > 1e-12 * m for x in shares]
    owners = sum(owns)
    stage = 0.0
    for share, card, own in zip(shares, cards, owns):
        sends = (owners - own) * phi * alpha + (m - share) / card
        receives = ((n - 1) * phi * alpha + (n - 1) * share / card) if own else 0.0
        stage = max(stage, sends, receives)
    return 2 * stage + 2 * (1 - phi) * alpha


def direct_in_sequence_on_same_cards(nbytes: float, workers: int, servers: int, worker_bandwidth: float,
                                     server_bandwidth: float | None = None, latency: float = 0.0,
                                     overhead: float = 1.0) -> float:
    r"""Seconds of the direct reduce-scatter/all-gather on a PS's n + k cards run *unpipelined*: the whole
    reduce-scatter, then the whole all-gather, one message per peer and stage (:func:`_direct_in_sequence`), at the
    better of two sets of shares: those fitted to the cards (:func:`same_cards_shares`) and equal shares M/n.

    The cards are dealt as in :func:`allreduce_on_same_cards`. In bandwidth terms (``latency`` 0) equal shares are
    the best of all: in each stage the worker with the slowest cards, :math:`B_{min}`, sends :math:`M - M_i` and
    receives :math:`(n-1)M_i`, and one of the two is at least :math:`(n-1)M/n`, so no shares beat

    .. math:: T_{\text{in sequence}} = \frac{2(n-1)M}{nB_{min}},

    the ring's time at the slowest worker's pace, which equal shares reach. Only the overlap of the two stages, piece
    by piece, lets the direct one use the faster cards' extra bandwidth (:func:`allreduce_on_same_cards`).

    >>> round(direct_in_sequence_on_same_cards(1.2e9, 8, 4, 12.5e9) * 1e3, 1)   # 2(n-1)M/(nB): the ring on one card each
    168.0
    >>> round(direct_in_sequence_on_same_cards(1e6, 16, 4, 3.125e9, 50e9, 1e-5) * 1e6)   # shares on the 4 fast cards
    720
    """
    m = check_nonnegative("nbytes", nbytes)
    n, k = check_shards(workers, servers)
    b_w = check_positive("worker_bandwidth", worker_bandwidth)
    b_s = b_w if server_bandwidth is None else check_positive("server_bandwidth", server_bandwidth)
    a = check_nonnegative("latency", latency)
    f = _check_share(overhead)
    if n == 1 or m == 0:
        return 0.0
    cards = [b_w + (k // n + (1 if i < k % n else 0)) * b_s for i in range(n)]
    fitted, _ = same_cards_shares(m, cards)
    return min(_direct_in_sequence(m, shares, cards, a, f) for shares in (fitted, [m / n] * n))


def colocated_on_fast_cards_time(nbytes: float, workers: int, servers: int, worker_bandwidth: float,
                                 server_bandwidth: float, latency: float = 0.0, overhead: float = 1.0) -> float:
    r"""Seconds of the parameter server's own schedule run among the workers on a PS's n + k cards, at its best cut.

    The k server cards are dealt to k of the n workers (k < n, as :func:`allreduce_on_same_cards` deals them), and
    each of those machines holds one shard: its shard's traffic (n - 1 pushes in, n - 1 pulls out: its own
    worker's push stays inside the machine) crosses the extra card, its worker's traffic its own card (k - 1
    pushes out and pulls in), and every other worker sends k pushes and receives k pulls on its card. Each card
    direction carries only pushes or only pulls, so the round is that of separate servers
    (:func:`round_time`, ``overhead`` :math:`\varphi` of alpha per message) with n - 1 messages on a server card:

    .. math:: T(q) = (q+1)\max\left(k\varphi\alpha + \frac{M}{qB_w},\
              (n-1)\left(\varphi\alpha + \frac{M}{kqB_s}\right)\right) + 2(1-\varphi)\alpha,

    at its best number of pieces q per shard (more pieces always help where :math:`\varphi\alpha = 0`: the limit).

    >>> round(colocated_on_fast_cards_time(300e3, 16, 3, 3.125e9, 50e9, 1e-5, overhead=0.5) * 1e6)   # 2 x 111 + 10 us
    232
    """
    m = check_nonnegative("nbytes", nbytes)
    n, k = check_shards(workers, servers)
    if k >= n:
        raise ValueError(f"servers must be fewer than the workers ({n}) to be dealt to some of them, got {k}")
    b_w = check_positive("worker_bandwidth", worker_bandwidth)
    b_s = check_positive("server_bandwidth", server_bandwidth)
    alpha = check_nonnegative("latency", latency)
    phi = _check_share(overhead)
    flight = 2 * (1 - phi) * alpha
    if m == 0:
        return 0.0
    if phi * alpha == 0:
        return max(m / b_w, (n - 1) * m / (k * b_s)) + flight
    q = colocated_on_fast_cards_pieces(m, n, k, b_w, b_s, alpha, phi)
    return (q + 1) * max(k * phi * alpha + m / (q * b_w), (n - 1) * (phi * alpha + m / (k * q * b_s))) + flight


def colocated_on_fast_cards_pieces(nbytes: float, workers: int, servers: int, worker_bandwidth: float,
                                   server_bandwidth: float, latency: float = 0.0, overhead: float = 1.0) -> int | None:
    r"""The best number of pieces q per shard of :func:`colocated_on_fast_cards_time`: with q = 1 the pull waits for
    the whole push, with q > 1 the pull of one piece overlaps the push of the next. None where
    :math:`\varphi\alpha = 0` (more pieces always help) or the gradient is empty.

    >>> colocated_on_fast_cards_pieces(300e3, 16, 3, 3.125e9, 50e9, 1e-5, overhead=0.5)
    1
    >>> colocated_on_fast_cards_pieces(1e6, 16, 4, 3.125e9, 50e9, 1e-5)
    2
    """
    m = check_nonnegative("nbytes", nbytes)
    n, k = check_shards(workers, servers)
    b_w = check_positive("worker_bandwidth", worker_bandwidth)
    b_s = check_positive("server_bandwidth", server_bandwidth)
    alpha = check_nonnegative("latency", latency)
    phi = _check_share(overhead)
    if m == 0 or phi * alpha == 0:
        return None

    def t(q: int) -> float:
        return (q + 1) * max(k * phi * alpha + m / (q * b_w), (n - 1) * (phi * alpha + m / (k * q * b_s)))
    hi = 1
    while t(2 * hi) < t(hi):    # convex in q: doubling, then bisection for the first q where one more no longer helps
        hi *= 2
    lo, hi = 1, 2 * hi
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if t(mid + 1) < t(mid) else (lo, mid)
    return lo


def best_allreduce_on_same_cards(nbytes: float, workers: int, servers: int, worker_bandwidth: float,
                                 server_bandwidth: float | None = None, latency: float = 0.0,
                                 overhead: float = 1.0) -> tuple[str, float]:
    """The fastest all-reduce of :data:`SAME_CARDS_RIVALS` on a PS's n + k cards (:func:`allreduce_on_same_cards`):
    ``(name, seconds)``.

    The rivals include the parameter server's own schedule run among the workers (:data:`OWN_SCHEDULE`): with
    start-ups counted and server cards much faster than the workers', the direct reduce-scatter/all-gather can
    trail the parameter server by a few per cent, its own schedule on the same cards never. On a tie the first of
    :data:`SAME_CARDS_RIVALS` is named (the ring before the direct one on even cards, the direct one before the
    parameter server's schedule).

    >>> name, t = best_allreduce_on_same_cards(1.2e9, 8, 4, 12.5e9)
    >>> name, round(t * 1e3, 1)
    ('direct', 112.0)
    >>> best_allreduce_on_same_cards(1e8, 8, 8, 12.5e9)[0]
    'ring'
    >>> name, t = best_allreduce_on_same_cards(1e6, 16, 4, 3.125e9, 50e9, 1e-5, overhead=1.0)   # 3 x 200 us
    >>> name, round(t * 1e6)
    ('own_schedule', 600)
    """
    best = None
    for name in SAME_CARDS_RIVALS:
        t = allreduce_on_same_cards(nbytes, workers, servers, worker_bandwidth, server_bandwidth, latency,
                                    algorithm=name, overhead=overhead)
        if best is None or t < best[1] * (1 - 1e-12):   # a tie within rounding names the first
            best = (name, t)
    return best


def compare_ps_ring(nbytes: float, workers: int, servers: int, worker_bandwidth: float,
                    server_bandwidth: float | None = None, colocated: bool = False,
                    latency: float = 0.0) -> PSComparison:
    """PS round time against ring all-reduce time for one configuration, on the cards given and on the same cards.

    ``worker_bandwidth`` is each worker NIC, ``server_bandwidth`` each server
    machine's NIC (unused by a colocated round, but still the NIC of the separate servers that
    ``smallest_k`` counts), bytes/s each way. Also returns the smallest number of non-colocated
    servers that beats the ring (on n + k cards against its n), and the fastest all-reduce on the
    PS's n + k cards (:func:`best_allreduce_on_same_cards`; colocated, both use the same n).

    >>> c = compare_ps_ring(1e8, 8, 4, 12.5e9)
    >>> c.winner, c.smallest_k, c.cards, c.winner_same_cards
    ('ring all-reduce', 5, (12, 8), 'direct reduce-scatter/all-gather')
    >>> compare_ps_ring(1e8, 8, 8, 12.5e9).winner, compare_ps_ring(1e8, 8, 8, 12.5e9).winner_same_cards
    ('PS', 'ring all-reduce')
    """
    t_ps = round_time(nbytes, workers, worker_bandwidth, servers=servers, latency=latency,
                      colocated=colocated, server_bandwidth=None if colocated else server_bandwidth)
    t_ring = cost.allreduce_time(nbytes, workers, worker_bandwidth, latency, algorithm="ring")
    name, same = (("ring", t_ring) if colocated else
                  best_allreduce_on_same_cards(nbytes, workers, servers, worker_bandwidth, server_bandwidth, latency))
    best = (smallest_k_to_beat_ring(nbytes, workers, worker_bandwidth, server_bandwidth, latency)
            if nbytes > 0 else None)
    return PSComparison(float(nbytes), int(workers), int(servers), bool(colocated), t_ps, t_ring, best, same, name)


@dataclass(frozen=True)
class SparseExchange:
    """Seconds of one round of a sparse gradient (each worker pushes ``push`` bytes of touched rows and pulls as much
    back), four ways, bandwidth terms, every card at the same bandwidth (:func:`sparse_exchange`)."""

    push: float
    n: int
    ps: float                      #: k = n separate servers: 2n cards
    all_gather: float              #: every worker gathers every push: the workers' n cards
    all_to_all: float              #: rows to their owner and back (a colocated PS): the workers' n cards
    all_to_all_same_cards: float   #: the same on the PS's 2n cards, two per worker

    @property
    def all_gather_over_ps(self) -> float:
        """How many times the parameter server's round the all-gather takes."""
        return self.all_gather / self.ps

    @property
    def all_to_all_over_ps(self) -> float:
        """How many times the parameter server's round the all-to-all on the workers' own cards takes."""
        return self.all_to_all / self.ps


def sparse_exchange(push: float, n: int, bandwidth: float) -> SparseExchange:
    r"""A sparse gradient exchanged four ways: each of n workers pushes ``push`` bytes (its touched rows with their
    indices), rows spread evenly over the owners, no two workers touching the same row.

    * **Parameter server**, k = n separate servers: each card carries one push each way, :math:`M/B`
      (:func:`ps_time`, M the push), on 2n cards.
    * **All-gather** (Horovod's answer for sparse gradients): each worker receives the n - 1 other pushes,
      :math:`(n-1)M/B`, on the workers' n cards.
    * **All-to-all**: each row goes to the worker that owns it and comes back summed, as recommendation models
      exchange their sharded tables. That is the colocated parameter server with one shard per worker
      (:func:`ps_time`, colocated): :math:`2(n-1)M/(nB)` each way, on the workers' n cards; on the PS's 2n cards, two per
      worker, half that.

    >>> x = sparse_exchange(1e6, 8, 1e9)
    >>> [round(t * 1e3, 3) for t in (x.ps, x.all_gather, x.all_to_all, x.all_to_all_same_cards)]
    [1.0, 7.0, 1.75, 0.875]
    >>> round(x.all_gather_over_ps, 2), round(x.all_to_all_over_ps, 2)   # n - 1, and 2(n-1)/n below 2
    (7.0, 1.75)
    """
    m = check_nonnegative("push", push)
    n = check_count("n", n, minimum=2)
    b = check_positive("bandwidth", bandwidth)
    return SparseExchange(
        push=float(m), n=n,
        ps=ps_time(m, n, b, servers=n),
        all_gather=cost.collective_time("all_gather", n * m, n, b),
        all_to_all=ps_time(m, n, b, servers=n, colocated=True),
        all_to_all_same_cards=ps_time(m, n, 2 * b, servers=n, colocated=True),
    )
