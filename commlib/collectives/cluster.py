r"""All-reduce on a cluster: any registry algorithm, two kinds of link, network cards (numpy-free).

:func:`allreduce_seconds` evaluates every all-reduce of the registry
:mod:`commlib.collectives.algorithms` under one signature; :func:`cluster_allreduce`
answers "what does my cluster get?" for a model's gradient, and
:func:`commlib.collectives.calculators.cluster_results` is the chapter 2 calculator's computation, text with
units. This module imports no numpy (only :mod:`commlib.collectives.algorithms`,
:mod:`commlib.cost`, :mod:`commlib.hardware` and :mod:`commlib.units`), so it
runs in the browser. :mod:`commlib.collectives.compare` re-exports the first three.

>>> allreduce_seconds("ring", 1200, 4, 100.0)              # 2*(3/4)*1200 B / 100 B/s
18.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .. import hardware
from ..collectives import cost
from ..step import cost as step_cost
from ..units import (
    check_count,
    check_fraction,
    check_nonnegative,
    check_positive,
)
from . import algorithms

__all__ = ["allreduce_seconds", "port_bytes", "port_startups",
           "bandwidth_for_time", "check_hosts", "check_gpus_per_host", "ClusterResult", "cluster_allreduce",
           "models_hosts", "NIC_CHOICES"]


def allreduce_seconds(
    algorithm: str,
    nbytes: float,
    n: int,
    bandwidth: float,
    latency: float = 0.0,
    *,
    hosts: int = 1,
    inter_bandwidth: float | None = None,
    inter_latency: float | None = None,
    grid: tuple[int, int] | None = None,
    gamma: float = 0.0,
    nics_per_host: int | None = None,
    chunks: int | None = None,
    rails: int | None = None,
    links_per_rank: int | None = None,
) -> float:
    r"""Seconds to all-reduce ``nbytes`` over ``n`` ranks with any algorithm of :data:`ALGORITHMS`.

    ``bandwidth`` (bytes/s, one direction) and ``latency`` (s) describe the
    link inside a host; ``inter_bandwidth`` and ``inter_latency`` the link
    between the ``hosts`` hosts (default: the same link). The ``n`` ranks sit
    ``n / hosts`` to a host.

    * ``"hierarchical"`` uses both links, as
      :func:`commlib.cost.hierarchical_allreduce_time` (intra-host
      reduce-scatter, inter-host ring all-reduce of a 1/g shard, intra-host
      all-gather). ``nics_per_host`` states the hardware: ``None`` (default)
      is one NIC of ``inter_bandwidth`` per rank, so the g shards cross in
      parallel at full rate; an integer k is k NICs per host shared by the
      host's g shards, each shard getting ``inter_bandwidth * min(k, g) / g``.
      It changes only the hierarchical algorithm: a flat ring ordered host by
      host sends one flow per direction through each host's network link, so
      sharing does not arise there.
    * Every other algorithm (the flat ones, :func:`commlib.cost.allreduce_terms`; the pipelined
      trees; the 2-D tori on ``grid`` = (rows, cols), default the most square grid) runs on one
      kind of link when ``hosts == 1`` (the link inside) or ``hosts == n`` (one rank a host: every
      pair crosses the network, the link inside is unused), and is timed on it exactly. On hosts
      of several GPUs (``1 < hosts < n``) only an algorithm whose every step crosses hosts
      (its record's ``flows_per_host`` is known: the ring) is timed, at the slower link, which
      every step then waits for. The others have steps that stay inside a host, on the other
      link; charging them all at the slowest link would only bound the time, so they are
      refused there (:func:`check_hosts`).

    * ``"multi_rail_ring"`` is the flat ring run as c rings at once, one per
      network card (``rails`` = c; default ``nics_per_host``, and one card per
      GPU when that is None too): the fair flat baseline against the
      hierarchical algorithm with the same cards.
    * ``links_per_rank`` is the network's links per rank: 1 for ranks behind a switch (one
      network port each), where an algorithm that drives several links at once (the torus both
      ways) sends its messages of a step one after the other; None (default) gives each algorithm
      the links it drives (a torus network for the torus both ways).
    * The pipelined trees take ``chunks`` = q; ``None`` (default) picks the
      fastest q for this link (:func:`commlib.collectives.algorithms.pipelined_tree.best_chunks`).

    Each algorithm's record in :mod:`commlib.collectives.algorithms` supplies the
    form: its ``seconds`` when it has one (hierarchical, multi-rail ring, trees), else its
    ``terms`` at the link it uses. Formulas: Thakur, Rabenseifner & Gropp
    (2005) sec. 4; the torus after Mikami et al. (2018). ``gamma`` is
    seconds per byte reduced.

    >>> allreduce_seconds("ring", 1200, 4, 100.0)              # 2*(3/4)*1200 B / 100 B/s
    18.0
    >>> round(allreduce_seconds("hierarchical", 1200, 4, 1e12, hosts=2, inter_bandwidth=100.0), 6)  # 2*(1/2)*600 B
    6.0
    >>> round(allreduce_seconds("hierarchical", 1200, 4, 1e12, hosts=2, inter_bandwidth=100.0,
    ...                         nics_per_host=1), 6)   # both shards share one card: 2*(1/2)*600 B at 50 B/s
    12.0
    """
    algorithm = algorithms.allreduce_algorithm(algorithm).name
    nbytes = check_nonnegative("nbytes", nbytes)
    n = check_count("n", n)
    bandwidth = check_positive("bandwidth", bandwidth)
    latency = check_nonnegative("latency", latency)
    hosts = check_count("hosts", hosts, minimum=1, maximum=n)
    if n % hosts:
        raise ValueError(f"hosts must divide n = {n} (ranks are spread evenly over hosts); got {hosts}")
    inter_b = bandwidth if inter_bandwidth is None else check_positive("inter_bandwidth", inter_bandwidth)
    inter_l = latency if inter_latency is None else check_nonnegative("inter_latency", inter_latency)
    gamma = check_nonnegative("gamma", gamma)
    if nics_per_host is not None:
        nics_per_host = check_count("nics_per_host", nics_per_host, minimum=1)
    record = algorithms.allreduce_algorithm(algorithm)
    given = {"hosts": hosts, "grid": grid, "chunks": chunks, "rails": rails}
    params = record.checked(n, **{k: v for k, v in given.items() if k in record.params and v is not None})
    check_hosts(record, n, hosts, nics_per_host)
    if record.seconds is not None:
        return record.seconds(nbytes, n, bandwidth, latency, gamma, **{"hosts": hosts, **params},
                              inter_bandwidth=inter_b, inter_latency=inter_l, nics_per_host=nics_per_host)
    if hosts == 1:                    # every pair inside one host
        slow_b, slow_l = bandwidth, latency
    elif hosts == n:                  # one rank a host: every pair crosses the network, the link inside is unused
        slow_b, slow_l = inter_b, inter_l
    else:                             # every step crosses hosts (check_hosts): each waits for the slower link
        slow_b, slow_l = min(bandwidth, inter_b), max(latency, inter_l)
    return record.cost(nbytes, n, links_per_rank=links_per_rank, **params).time(slow_b, slow_l, gamma)


#: A link so fast that its bytes take no time that shows (bytes/s): what "infinitely fast" is here.
_INSTANT = 1e30


def port_bytes(algorithm: str, n: int, hosts: int) -> tuple[float, float]:
    r"""``(inside, between)``: bytes per byte of the message that one GPU's busiest link inside the host, and its
    busiest network card, carry on the critical path, for ``n`` GPUs on ``hosts`` hosts (one card per GPU).

    Read off :func:`allreduce_seconds` with no latency, one link at 1 B/s and the other instant. For the
    hierarchical all-reduce the two add up to the flat ring's :math:`2\frac{n-1}{n}`:
    :math:`2\frac{g-1}{g} + 2\frac{h-1}{hg}`.

    >>> port_bytes("hierarchical", 16, 2)     # 2*7/8 inside, 2*(1/2)/8 between
    (1.75, 0.125)
    >>> port_bytes("multi_rail_ring", 16, 2)  # 7 of 8 rings through the link inside, 1 through the card
    (1.640625, 0.234375)
    """
    def at(intra: float, inter: float) -> float:
        return allreduce_seconds(algorithm, 1.0, n, intra, 0.0, hosts=hosts, inter_bandwidth=inter, inter_latency=0.0)
    return float(at(1.0, _INSTANT)), float(at(_INSTANT, 1.0))


def port_startups(algorithm: str, n: int, hosts: int) -> tuple[float, float]:
    """``(inside, between)``: the start-ups that one GPU's busiest link inside the host, and its busiest network
    card, pay on the critical path, for ``n`` GPUs on ``hosts`` hosts (one card per GPU); :func:`port_bytes`'s
    start-ups.

    Read off :func:`allreduce_seconds` with instant links, a start-up of 1 s on one kind and none on the other.
    A flat ring's step waits for its slowest pair, so it counts every step on both; the hierarchical
    all-reduce's phases add up.

    >>> port_startups("hierarchical", 16, 2)     # 2*7 inside, 2*1 between
    (14.0, 2.0)
    >>> port_startups("multi_rail_ring", 16, 2)  # the link inside carries 7 rings' messages in each of 30 steps
    (210.0, 30.0)
    """
    def at(intra: float, inter: float) -> float:
        return allreduce_seconds(algorithm, 1.0, n, _INSTANT, intra, hosts=hosts, inter_bandwidth=_INSTANT,
                                 inter_latency=inter)
    return float(at(1.0, 0.0)), float(at(0.0, 1.0))


def models_hosts(record: algorithms.Algorithm) -> bool:
    """Whether ``record`` is timed on hosts of several GPUs: it takes ``hosts`` itself, or every step crosses hosts.

    An algorithm with a ``hosts`` parameter runs each phase on its own link; one whose record
    gives ``flows_per_host`` (the ring: 1) has a pair on two hosts in every step, so each step
    waits for the slower link and the closed form at that link is exact.

    >>> [name for name, r in algorithms.ALLREDUCE.items() if models_hosts(r)]
    ['ring', 'multi_rail_ring', 'hierarchical']
    """
    return "hosts" in record.params or record.flows_per_host is not None


def check_hosts(record: algorithms.Algorithm, n: int, hosts: int, nics_per_host: int | None = None) -> None:
    """ValueError naming the control when ``record`` cannot be timed with ``hosts`` hosts and these cards.

    One host (``hosts == 1``) or one GPU a host (``hosts == n``) is one kind of link, and every
    algorithm is timed there. On hosts of several GPUs only those :func:`models_hosts` accepts
    are, and, where a host's GPUs share ``nics_per_host`` cards, only if the step's flows that
    leave a host (``flows_per_host``) have a card each (the ring: one flow, so any number of
    cards will do).

    >>> check_hosts(algorithms.allreduce_algorithm("halving_doubling"), 16, 16)   # one GPU a host: timed
    >>> try:
    ...     check_hosts(algorithms.allreduce_algorithm("halving_doubling"), 16, 2)
    ... except ValueError as err:
    ...     print(str(err)[:96])
    hosts h: the halving-doubling (Rabenseifner) is timed here on one host or on one GPU per host (h
    """
    if hosts in (1, n) or "hosts" in record.params:
        return
    if not models_hosts(record):
        names = [f'"{r.label}"' for r in algorithms.ALLREDUCE.values() if models_hosts(r)]
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        raise ValueError(f"hosts h: the {record.label} is timed here on one host or on one GPU per host "
                         f"(h = 1 or h = n = {n}); on hosts of several GPUs its steps that stay inside a host "
                         f"use the link inside, which this model does not time step by step; the {listed} "
                         f"algorithms model it")
    if nics_per_host is not None and nics_per_host < record.flows_per_host:
        raise ValueError(f"network cards c: the {record.label} sends {record.flows_per_host} flows out of a host "
                         f"in a step, more than its {nics_per_host} card(s), which this model does not time; "
                         f"choose more cards per host")


def check_gpus_per_host(n: int, hosts: int, intra: hardware.Link) -> None:
    r"""ValueError naming the hosts when ``n / hosts`` GPUs are more than one host on ``intra`` holds.

    The bound is the link's :attr:`commlib.hardware.Link.gpus_per_host`: for NVLink the largest
    NVLink domain of a shipped system of its generation (16 A100s of two HGX A100 baseboards; 72
    GPUs of a GB200 NVL72), for any other link the stated
    :data:`commlib.hardware.GENERIC_GPUS_PER_HOST`; the same bound chapter 0's calculators put on
    ranks (:func:`commlib.step.calculators.check_domain`). Hosts that do not divide ``n`` are left to
    :func:`allreduce_seconds`, which says so.

    >>> try:
    ...     check_gpus_per_host(32, 1, hardware.link("nvlink3"))
    ... except ValueError as err:
    ...     print(*str(err).split("; "), sep="\n")    # doctest: +ELLIPSIS
    hosts: 32 GPUs on 1 host is 32 GPUs a host
    NVLink 3.0 (A100, 12 links) joins at most 16 in one system (16 A100s behind NVSwitches (...)): choose at least 2 hosts
    """
    if n % hosts or n // hosts <= intra.gpus_per_host:
        return
    most = intra.gpus_per_host
    system = (f"joins at most {most} in one system ({intra.domain})" if intra.max_ranks
              else f"is given at most {most} GPUs a host here (no preset system holds more)")
    fewest = -(-n // most)
    while n % fewest:
        fewest += 1
    raise ValueError(f"hosts: {n} GPUs on {hosts} host{'s' if hosts > 1 else ''} is {n // hosts} GPUs a host; "
                     f"{intra.name} {system}: choose at least {fewest} hosts")


def bandwidth_for_time(seconds_at: Callable[[float], float], target: float, lo: float = 1.0,
                       hi: float = 1e15, rtol: float = 1e-9) -> float:
    """Smallest bandwidth (bytes/s) in [lo, hi] at which ``seconds_at(bandwidth) <= target`` seconds.

    ``seconds_at`` must decrease as bandwidth grows (every alpha-beta time
    does). Returns ``math.inf`` if even ``hi`` is too slow -- what does not
    depend on this bandwidth (latency, other links) alone exceeds the target --
    and ``lo`` if ``lo`` already suffices. Bisection in log space.

    >>> round(bandwidth_for_time(lambda b: 1e-3 + 1e6 / b, 2e-3))   # 1 ms + 1 MB / B <= 2 ms
    1000000000
    """
    target = check_positive("target", target)
    lo = check_positive("lo", lo)
    hi = check_positive("hi", hi)
    if seconds_at(hi) > target:
        return math.inf
    if seconds_at(lo) <= target:
        return lo
    a, b = math.log(lo), math.log(hi)
    while b - a > rtol:
        mid = 0.5 * (a + b)
        if seconds_at(math.exp(mid)) <= target:
            b = mid
        else:
            a = mid
    return math.exp(b)


@dataclass(frozen=True)
class ClusterResult:
    """What one all-reduce of a model's gradient costs on a cluster (SI units).

    ``seconds`` per all-reduce; ``algbw`` and ``busbw`` in bytes/s (nccl-tests
    convention); ``bottleneck`` what the links the algorithm uses can carry per GPU (bytes/s, one
    direction): the slowest link it uses, or, for an algorithm that spreads a GPU's bytes over
    several links (the hierarchical all-reduce, the multi-rail ring), the busbw it reaches on them
    with no latency, if that is more; ``bus_efficiency`` = busbw / bottleneck (at most 1); ``parallel_efficiency``
    = t_compute / (t_compute + seconds) (no overlap);
    ``required_bandwidth`` the bandwidth of the searched link (``searched``: ``"inter"``, the link
    between hosts, when ``hosts > 1``, else ``"intra"``) needed for ``target_efficiency``, the other
    link held fixed; ``allowed_seconds`` the all-reduce time that efficiency allows;
    ``floor_seconds`` the time with the searched link infinitely fast (the fixed link and the
    latencies), ``latency_seconds`` the time with both links infinitely fast. ``required_bandwidth``
    is ``inf`` when ``floor_seconds`` exceeds ``allowed_seconds``: because of the latencies alone
    when ``latency_seconds`` does too, else because of the fixed link.
    """

    nbytes: int
    n: int
    hosts: int
    algorithm: str
    seconds: float
    algbw: float
    busbw: float
    bottleneck: float
    bus_efficiency: float
    parallel_efficiency: float
    target_efficiency: float
    required_bandwidth: float
    searched: str = "inter"
    allowed_seconds: float = math.inf
    floor_seconds: float = 0.0
    latency_seconds: float = 0.0

    @property
    def out_of_reach_because(self) -> str | None:
        """None when some bandwidth of the searched link reaches the target; else ``"latency"`` or ``"fixed link"``."""
        if not math.isinf(self.required_bandwidth):
            return None
        return "latency" if self.latency_seconds > self.allowed_seconds else "fixed link"


def cluster_allreduce(
    model: str,
    dtype: str,
    n: int,
    hosts: int,
    intra_link: str,
    inter_link: str,
    algorithm: str = "ring",
    t_compute: float = 0.1,
    target_efficiency: float = 0.9,
    nics_per_host: int | None = None,
) -> ClusterResult:
    """All-reduce one gradient of ``model`` in ``dtype`` over ``n`` GPUs on ``hosts`` hosts.

    Gradient bytes come from :func:`commlib.hardware.gradient_bytes`; the
    links (``intra_link`` inside a host, ``inter_link`` between hosts) are
    :data:`commlib.hardware.LINKS` presets with their bandwidth and latency;
    time from :func:`allreduce_seconds`. ``t_compute`` (s) is one step's
    compute time on one GPU, for the parallel efficiency; the required
    bandwidth is searched for the inter-host link when ``hosts > 1``, the
    intra-host link otherwise, with the other held fixed; when none will do,
    the result says whether the latencies alone or the fixed link is what
    exceeds the allowed time. ``nics_per_host``
    is the hierarchical all-reduce's hardware assumption (``None``: one NIC
    of ``inter_link`` per GPU; k: k NICs per host shared by its GPUs), see
    :func:`commlib.cost.hierarchical_allreduce_time`.

    >>> r = cluster_allreduce("vgg16", "fp32", 4, 4, "nvlink2", "eth_1g", "ring", 0.55)
    >>> round(r.seconds, 2), round(r.busbw / 1e6, 1)     # ~ the 1 GbE worked example of chapter 0
    (6.64, 125.0)
    """
    nbytes = hardware.gradient_bytes(model, dtype)
    n = check_count("n", n, minimum=1)
    hosts = check_count("hosts", hosts, minimum=1)
    if hosts > n:
        raise ValueError(f"hosts must be at most the GPUs n = {n} (a host holds at least one GPU); got {hosts}")
    intra, inter = hardware.link(intra_link), hardware.link(inter_link)
    check_gpus_per_host(n, hosts, intra)
    t_compute = check_positive("t_compute", t_compute)
    target_efficiency = check_fraction("target_efficiency", target_efficiency)


    def seconds(intra_b: float, inter_b: float) -> float:
        return allreduce_seconds(algorithm, nbytes, n, intra_b, intra.latency, hosts=hosts,
                                 inter_bandwidth=inter_b, inter_latency=inter.latency,
                                 nics_per_host=nics_per_host, links_per_rank=1)  # hosts behind switches

    t = seconds(intra.bandwidth, inter.bandwidth)
    used = [b for b, on in ((intra.bandwidth, hosts < n), (inter.bandwidth, hosts > 1)) if on] or [intra.bandwidth]
    bottleneck = min(used)
    if n == 1 or t == 0:
        algbw = busbw = math.inf
        bus_eff = 1.0
    else:
        algbw = cost.algorithm_bandwidth(nbytes, t)
        busbw = algbw * cost.bus_factor("all_reduce", n)
        # no latency: the most busbw these links give this algorithm (more than the slowest link when
        # it spreads a GPU's bytes over several links)
        t_links = allreduce_seconds(algorithm, nbytes, n, intra.bandwidth, 0.0, hosts=hosts,
                                    inter_bandwidth=inter.bandwidth, inter_latency=0.0,
                                    nics_per_host=nics_per_host, links_per_rank=1)
        if t_links > 0:
            bottleneck = max(bottleneck, cost.algorithm_bandwidth(nbytes, t_links) * cost.bus_factor("all_reduce", n))
        bus_eff = busbw / bottleneck
    allowed = step_cost.communication_time_for_efficiency(t_compute, target_efficiency)
    if hosts > 1:
        searched, at = "inter", (lambda b: seconds(intra.bandwidth, b))
    else:
        searched, at = "intra", (lambda b: seconds(b, inter.bandwidth))
    needed = bandwidth_for_time(at, allowed)
    return ClusterResult(
        nbytes=nbytes, n=n, hosts=hosts, algorithm=algorithm, seconds=t, algbw=algbw, busbw=busbw,
        bottleneck=bottleneck, bus_efficiency=bus_eff,
        parallel_efficiency=step_cost.parallel_efficiency(t_compute, t),
        target_efficiency=target_efficiency, required_bandwidth=needed, searched=searched,
        allowed_seconds=allowed, floor_seconds=at(_INSTANT), latency_seconds=seconds(_INSTANT, _INSTANT),
    )


#: The calculator's choices of network cards per host: 0 stands for one NIC per GPU (``nics_per_host=None``).
NIC_CHOICES: tuple[tuple[str, int], ...] = (
    ("one per GPU", 0), ("1 per host, shared by its GPUs", 1), ("2 per host", 2), ("4 per host", 4),
    ("8 per host", 8),
)


