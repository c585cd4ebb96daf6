"""What chapter 3's calculator computes: a parameter server against ring all-reduce, and against the fastest
all-reduce given the same cards.

Bandwidth terms only: on the workers' n cards no all-reduce moves fewer bytes than the ring, so there the ring is
the fastest; on the PS's n + k cards, dealt unevenly, the direct reduce-scatter/all-gather can be faster.

Returns label -> text with units; numpy-free, so the page runs it too.
"""

from __future__ import annotations

from .. import hardware
from ..collectives import cost
from ..parameter_servers import cost as parameter_servers_cost
from ..units import check_count, format_size, format_time
from .cost import SAME_CARDS_LABEL, compare_ps_ring, ps_traffic

__all__ = ["ps_results", "SAME_CARDS", "MAX_WORKERS", "MAX_SERVERS"]

#: The most workers n and server machines (or shards) k the calculator takes (its sliders' ends).
MAX_WORKERS = MAX_SERVERS = 256

#: The label of the comparison on the same cards: the all-reduce's workers get the servers' cards as extra rails.
SAME_CARDS = "faster on the same cards (the all-reduce's workers given the servers' cards)"


def ps_results(model: str = "bert_large", dtype: str = "fp32", n: int = 8, k: int = 4, colocated: bool = False,
               worker_link: str = "eth_100g", server_link: str = "eth_100g") -> dict[str, str]:
    """The parameter-server calculator: a PS round against ring all-reduce, as label -> text with units.

    ``model`` and ``dtype`` give the gradient M; ``n`` workers (1-256), ``k``
    server machines or shards (1-256; colocated needs k <= n); ``worker_link``
    and ``server_link`` are network presets of :data:`commlib.hardware.LINKS`.
    Bandwidth terms only, push and pull overlapped. The BytePS row (separate servers only) gives its
    k CPU machines the server link.

    >>> r = ps_results("bert_large", "fp32", 8, 4)
    >>> r["faster"], r["smallest k (separate servers) to beat the ring"]
    ('ring all-reduce, 1.14x faster (PS on 12 cards, ring on 8)', '5 server machines')
    >>> r["best all-reduce on the same cards"]
    '125.12 ms on 12 cards'
    >>> r[SAME_CARDS]
    'direct reduce-scatter/all-gather, 1.71x faster (both on 12 cards)'
    >>> r["PS bottleneck"]
    'server NICs: 2.68 GB each way, 214.49 ms'
    >>> ps_results("bert_large", "fp32", 256, 4, server_link="eth_10g")["smallest k (separate servers) to beat the ring"]
    '1286 server machines, more than the 256 the calculator offers'
    >>> ps_results("bert_large", "fp32", 256, 256)[SAME_CARDS]   # (n - 1)/n M/B against M/B
    'ring all-reduce, one ring per card (2 cards per worker), 0.39 % faster: a near-tie (both on 512 cards)'

    A parameter server with k separate servers uses n + k network cards, the ring n: "faster"
    compares them as given, :data:`SAME_CARDS` gives the all-reduce's workers the servers' cards
    as extra rails (:func:`commlib.parameter_servers.cost.allreduce_on_same_cards`: a direct
    reduce-scatter/all-gather with shares fitted to the cards), and says "tie" where the workers' own
    cards bound both.
    >>> ps_results(server_link="pcie3_x16")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: server_link must be a network preset (eth_1g, ...), got 'pcie3_x16'
    """
    if model not in hardware.MODELS:
        raise ValueError(f"model must be one of {', '.join(hardware.MODELS)}, got {model!r}")
    if dtype not in hardware.DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {', '.join(hardware.DTYPE_BYTES)}, got {dtype!r}")
    nbytes = hardware.gradient_bytes(model, dtype)
    n = check_count("n", n, minimum=1, maximum=MAX_WORKERS)
    k = check_count("k", k, minimum=1, maximum=MAX_SERVERS)
    if colocated and k > n:
        raise ValueError(f"k must be <= n ({n}) when the shards sit on the workers, got {k}")
    networks = [key for key, item in hardware.LINKS.items() if item.kind == "network"]
    for name, value in (("worker_link", worker_link), ("server_link", server_link)):
        if value not in networks:
            raise ValueError(f"{name} must be a network preset ({', '.join(networks)}), got {value!r}")
    if n == 1:  # no ratio of two zero times: say there is nothing to compare
        return {
            "parameters": f"{hardware.model(model).params:,}",
            "gradient size M": f"{format_size(nbytes)} = {format_size(nbytes, binary=True)}",
            "faster": "nothing to compare: one worker shares its gradient with no one",
        }
    bw = hardware.link(worker_link).bandwidth
    bs = hardware.link(server_link).bandwidth
    c = compare_ps_ring(nbytes, n, k, bw, bs, colocated=colocated)   # a colocated round leaves bs unused
    traffic = ps_traffic(nbytes, n, k, colocated=colocated)
    def verdict(winner: str, t_ring: float) -> str:
        if winner == "tie" or not c.ps_seconds:
            return "tie"
        ratio = t_ring / c.ps_seconds if winner == "PS" else c.ps_seconds / t_ring
        if ratio < 1.01:   # a near-tie: say by how much, not "1.00x"
            return f"{winner}, {100 * (ratio - 1):.2g} % faster: a near-tie"
        return f"{winner}, {ratio:.3g}x faster"   # 3 significant digits: 1.14x, 402x

    # the card that sets the PS's time: a worker's or a server's (colocated: a machine holding a shard)
    if colocated:
        who, moved, seconds = "shard hosts' NICs", traffic.busiest, traffic.busiest / bw
    else:
        worker, server = traffic.worker / bw, traffic.shard_host / bs
        who, moved, seconds = (("server NICs", traffic.shard_host, server) if server >= worker
                               else ("worker NICs", traffic.worker, worker))

    ps_cards, ring_cards = c.cards
    faster = f"{verdict(c.winner, c.ring_seconds)} (PS on {ps_cards} cards, ring on {ring_cards})"
    same_winner = c.winner_same_cards
    if same_winner == "ring all-reduce" and ps_cards > n and ps_cards % n == 0:   # the servers' cards came out even
        same_winner += f", one ring per card ({ps_cards // n} cards per worker)"
    same = f"{verdict(same_winner, c.same_cards_seconds)} (both on {ps_cards} cards)"
    best = ("none: with n <= 2, or worker links too slow, no k beats the ring" if c.smallest_k is None
            else f"{c.smallest_k} server machine{'' if c.smallest_k == 1 else 's'}")
    if c.smallest_k is not None and c.smallest_k > MAX_SERVERS:   # say so, rather than offer a k the slider lacks
        best += f", more than the {MAX_SERVERS} the calculator offers"
    results = {
        "parameters": f"{hardware.model(model).params:,}",
        "gradient size M": f"{format_size(nbytes)} = {format_size(nbytes, binary=True)}",
        "PS round": format_time(c.ps_seconds),
        "ring all-reduce": format_time(c.ring_seconds),
        SAME_CARDS_LABEL: f"{format_time(c.ring_seconds if c.same_cards_seconds is None else c.same_cards_seconds)}"
                          f" on {ps_cards} cards",
        "faster": faster,
        SAME_CARDS: same,
        "PS bottleneck": f"{who}: {format_size(moved)} each way, {format_time(seconds)}",
        "ring rank, each way": format_size(cost.ring_bytes_per_rank(nbytes, n)),
        "smallest k (separate servers) to beat the ring": best,
    }
    if not colocated:  # colocated there are no CPU machines for BytePS to add
        results["BytePS optimum with k CPU machines"] = format_time(
            parameter_servers_cost.byteps_time(nbytes, n, k, bw, server_bandwidth=bs))
    return results
