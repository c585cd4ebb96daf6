r"""Flat ring all-reduce on c rails: one ring per network card, each carrying M/c (NCCL's channels).

The n ranks sit g = n/h to a host on h hosts (``hosts``); each host has c network cards
(``rails``, at most g). A library does not push a flat ring through one card: it cuts the buffer
into c parts and runs c rings at once, ring k leaving each host through a different card (NCCL
builds several rings, "channels", and spreads them over the NICs). Ring k visits the GPUs of a
host starting at local GPU k, so the c rings cross between two hosts through c different pairs
of cards. A rank sends one message a step in each ring, c in all; a port carries its messages
one after the other, each with its own start-up (as the pipelined trees' do). On one uniform link,
all c through the rank's one port, the c rings cost

.. math:: 2(n-1)c\,\alpha + 2\frac{n-1}{n}M\beta + \frac{n-1}{n}M\gamma ,

the ring's bytes with c times its start-ups. On a cluster each step takes the slower of its two
kinds of port (:func:`seconds`): a card between hosts carries one ring's message of
:math:`M/(nc)` bytes, while a GPU's link inside the host carries its messages of the other rings
(c of them when c < g; g - 1 when c = g, since each GPU then leaves the host in one ring). Each
card thus carries :math:`2\frac{n-1}{n}\frac{M}{c}`.

>>> terms(1600, 8, rails=1)
CostTerms(steps=14, bytes=2800.0, reduced=1400.0)
>>> terms(1600, 8, hosts=2, rails=4).steps       # 4 rings through each port: 4 start-ups a step
56
>>> round(seconds(1600, 8, 1e12, 0.0, 0.0, hosts=2, inter_bandwidth=100.0, rails=4), 6)  # 14 * 1600/32/100
7.0
>>> # a start-up of 1 s inside the host: 3 messages a step, 3 start-ups; overlapped, one
>>> [round(seconds(1600, 8, 1e12, 1.0, 0.0, hosts=2, inter_bandwidth=1e12, inter_latency=0.0,
...                overlapped_startups=o), 6) for o in (False, True)]
[42.0, 14.0]
"""

from __future__ import annotations

from .base import Algorithm, CostTerms
from .ring import terms as ring_terms


def check(n: int, hosts: int = 1, rails: int | None = None) -> dict:
    """``hosts`` divides n; ``rails`` c is 1 .. g, or None (the cards per host, else one per GPU)."""
    from ...units import check_count

    hosts = check_count("hosts", int(hosts) if float(hosts).is_integer() else hosts, minimum=1, maximum=n)
    if n % hosts:
        raise ValueError(f"hosts must divide the number of ranks n = {n}; got {hosts}")
    g = n // hosts
    rails = None if rails is None else check_count("rails", int(rails) if float(rails).is_integer() else rails,
                                                  minimum=1, maximum=g)
    return {"hosts": hosts, "rails": rails}


def terms(nbytes: float, n: int, hosts: int = 1, rails: int | None = None):
    """On one uniform link: the ring's bytes, c start-ups a step (a rank's port carries its c messages of M/(nc))."""
    t = ring_terms(nbytes, n)
    c = rails or n // hosts
    return CostTerms(t.steps * c, t.bytes, t.reduced)


def seconds(nbytes: float, n: int, bandwidth: float, latency: float, gamma: float, *, hosts: int = 1,
            inter_bandwidth: float | None = None, inter_latency: float | None = None,
            nics_per_host: int | None = None, rails: int | None = None, overlapped_startups: bool = False,
            **_) -> float:
    """2(n-1) steps, each the slower port: one message of M/(nc) through a card between hosts, or a GPU's
    messages of the other rings through its link inside the host, each with its start-up.

    ``overlapped_startups``: the rings (NCCL's channels, each on its own thread block) start their messages of a
    step at once, so the link inside the host pays one start-up a step, not one a message (its bytes unchanged).

    With one GPU a host (g = 1) there is no hop inside a host: M/n through its one card.

    ``rails`` (or, when it is None, ``nics_per_host``; when both are None one card per GPU) is c,
    capped at g: a ring leaves a host through one card.
    """
    if n == 1:
        return 0.0
    g = n // hosts
    c = rails or nics_per_host or g
    c = min(c, g)
    t = ring_terms(nbytes, n)
    if hosts == 1:
        return terms(nbytes, n, 1, c).time(bandwidth, latency, gamma)
    b_inter = bandwidth if inter_bandwidth is None else inter_bandwidth
    l_inter = latency if inter_latency is None else inter_latency
    if g == 1:                            # one GPU a host: no hop inside a host
        return t.steps * (l_inter + nbytes / n / b_inter) + t.reduced * gamma
    inside = c if c < g else g - 1        # a GPU's messages a step through its link inside the host
    piece = nbytes / (n * c)
    inside_startups = 1 if overlapped_startups else inside
    step = max(l_inter + piece / b_inter, inside_startups * latency + inside * piece / bandwidth)
    return t.steps * step + t.reduced * gamma


def rail_rings(n: int, hosts: int, rails: int) -> list[list[int]]:
    """Ring k visits host 0, 1, ..., each host's GPUs from local GPU k on (rank = host * g + local)."""
    g = n // hosts
    return [[h * g + (k + j) % g for h in range(hosts) for j in range(g)] for k in range(rails)]


def schedule(eng, n: int, length: int, hosts: int = 1, rails: int | None = None) -> None:
    """c rings at once, ring k on part k of the vector (``np.array_split`` into c, then into n pieces)."""
    rails = rails or n // hosts
    from ..engine import split_bounds
    from ..schedules import ring_steps

    rings = rail_rings(n, hosts, rails)
    parts = split_bounds(0, length, rails)
    bounds = [split_bounds(int(parts[k]), int(parts[k + 1]), n) for k in range(rails)]
    for kind, phase in (("rs", "reduce-scatter"), ("ag", "all-gather")):
        per_ring = [ring_steps([ring], [b], kind, lambda gi, c, k=k: (k, c)) for k, (ring, b) in
                    enumerate(zip(rings, bounds))]
        for step in zip(*per_ring):
            eng.run([t for transfers in step for t in transfers], phase)


ALGORITHM = Algorithm(
    name="multi_rail_ring", label="ring, one per network card (multi-rail)", collective="all_reduce",
    terms=terms, schedule=schedule, params=("hosts", "rails"), check=check,
    constraint="hosts divides n; 1 <= rails <= n / hosts", family="two-level", seconds=seconds, multi_port=True,
    source="NVIDIA NCCL rings (channels) over several NICs; Patarasuk & Yuan (2009)",
)
