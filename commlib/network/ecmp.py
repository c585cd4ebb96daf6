r"""Many equal paths, one hash: what ECMP's collisions cost a collective on a leaf-spine fabric.

:func:`commlib.network.topology.route` gives each flow one shortest path, by a fixed rule, so the flow model never
puts two flows on one link while a parallel link stands idle. A fat tree offers many equal paths. Here it is a
two-level *leaf-spine*: ``leaves`` leaf switches with ``cards`` network cards each, and ``spines`` spine switches,
every leaf linked to every spine, every link of bandwidth B per direction. With as many spines as cards a leaf is
non-blocking: its cards can send B each to other leaves at once, if each card's flow takes a spine of its own.

Ethernet switches (and so RoCE fabrics) spread flows over equal paths by *ECMP* (equal-cost multipath): they hash
fields of each packet's header,
the same for every packet of a flow, so a flow keeps one path whatever the load, and a few large flows can leave
the links unevenly loaded (RFC 7424). :func:`hashed_spines` models the hash as a uniform draw per flow (seeded).

The traffic is one step of a ring or of a hierarchical all-reduce's network phase laid across leaves: card i of
leaf l sends to card i of leaf l + 1 (:func:`shift_flows`). Each flow crosses its card's link, its leaf's uplink to
its spine, that spine's downlink to the next leaf, and the receiving card's link. :func:`step_time` maps the
flows with the chapter's max-min model (:func:`commlib.network.topology.map_flows`), the spine of each flow given;
:func:`spread_spines`, card i on spine i, is the collision-free control. A connection may also be split over
``qps`` flows (queue pairs), each hashed on its own and carrying ``1/qps`` of the bytes, as NCCL can do
(``NCCL_IB_QPS_PER_CONNECTION``).

The closed form: in this pattern a link's flows all cross it and one other link of the same load, so the step
takes as long as the busiest uplink's bytes over B (:func:`busiest_uplink_share`).

>>> g = leaf_spine(2, 2, 2)
>>> spread = step_time(g, shift_flows(2, 2, 10**9), spread_spines(2, 2, 2))
>>> clash = step_time(g, shift_flows(2, 2, 10**9), {(l, i, 0): 0 for l in range(2) for i in range(2)})
>>> round(clash / spread, 3)
2.0
"""

from __future__ import annotations

import math
from collections import Counter

import networkx as nx
import numpy as np

from .. import hardware
from ..units import check_count
from .topology import Flow, map_flows

__all__ = ["leaf_spine", "shift_flows", "spread_spines", "hashed_spines", "step_time", "busiest_uplink_share",
           "hashed_busiest_shares", "hashed_slowdowns", "spines_of", "chance_spread", "chance_worst"]


def _card(leaf: int, i: int) -> tuple:
    return ("card", leaf, i)


def leaf_spine(leaves: int, cards: int, spines: int, link: str = "eth_400g") -> nx.Graph:
    """A two-level leaf-spine fabric: ``cards`` network cards on each leaf, every leaf on every spine, all links
    ``link``."""
    leaves = check_count("leaves", leaves, minimum=2)
    cards = check_count("cards", cards, minimum=1)
    spines = check_count("spines", spines, minimum=1)
    lk = hardware.link(link)
    g = nx.Graph(name=f"leaf-spine {leaves}x{cards}, {spines} spines")
    for leaf in range(leaves):
        for i in range(cards):
            g.add_edge(_card(leaf, i), ("leaf", leaf), bandwidth=lk.bandwidth, latency=lk.latency)
        for s in range(spines):
            g.add_edge(("leaf", leaf), ("spine", s), bandwidth=lk.bandwidth, latency=lk.latency)
    for node in g.nodes:
        g.nodes[node]["kind"] = node[0]
        g.nodes[node]["rank"] = None
    return g


def shift_flows(leaves: int, cards: int, nbytes: int, qps: int = 1) -> list[Flow]:
    """Card i of leaf l sends ``nbytes`` to card i of leaf l + 1 (mod ``leaves``), split over ``qps`` flows."""
    leaves = check_count("leaves", leaves, minimum=2)
    cards = check_count("cards", cards, minimum=1)
    qps = check_count("qps", qps, minimum=1)
    nbytes = check_count("nbytes", nbytes, minimum=qps)
    return [Flow(0, _card(leaf, i), _card((leaf + 1) % leaves, i), nbytes // qps, label=f"{leaf}.{i}.{q}")
            for leaf in range(leaves) for i in range(cards) for q in range(qps)]


def spread_spines(leaves: int, cards: int, spines: int, qps: int = 1) -> dict[tuple[int, int, int], int]:
    """The collision-free choice where there are enough spines: card i's flows on spine i (mod ``spines``)."""
    return {(leaf, i, q): (i * qps + q) % spines for leaf in range(leaves) for i in range(cards) for q in range(qps)}


def hashed_spines(leaves: int, cards: int, spines: int, seed: int, qps: int = 1) -> dict[tuple[int, int, int], int]:
    """ECMP's choice, modelled as a uniform draw of a spine for each flow (seeded): blind to the other flows."""
    spines = check_count("spines", spines, minimum=1)
    qps = check_count("qps", qps, minimum=1)
    draw = np.random.default_rng(seed).integers(spines, size=(leaves, cards, qps))
    return {(leaf, i, q): int(draw[leaf, i, q]) for leaf in range(leaves) for i in range(cards) for q in range(qps)}


def spines_of(mapped) -> dict[tuple[int, int, int], int]:
    """The spine each flow of a mapped step took (``mapped.routes`` of :func:`commlib.network.topology.map_flows`, one
    flow a card), in the form :func:`busiest_uplink_share` reads: ``{(leaf, card, 0): spine}``."""
    out = {}
    for (src, _), path in mapped.routes.items():
        spines = [node[1] for node in path if node[0] == "spine"]
        if src[0] != "card" or len(spines) != 1:
            raise ValueError(f"route {path!r} is not a card's path through one spine")
        out[src[1], src[2], 0] = spines[0]
    return out


def step_time(g: nx.Graph, flows, spine_of) -> float:
    """Seconds the step takes with each flow on its spine (``spine_of[(leaf, card, qp)]``), max-min shared."""
    leaves = {n[1] for n in g.nodes if n[0] == "leaf"}
    paths = {}
    for f in flows:
        leaf, i, q = (int(x) for x in f.label.split("."))
        if leaf not in leaves:
            raise ValueError(f"flow {f.label} starts on no leaf of the fabric")
        paths[f] = (f.src, ("leaf", leaf), ("spine", spine_of[leaf, i, q]), ("leaf", f.dst[1]), f.dst)
    return map_flows(g, flows, paths=paths).time


def busiest_uplink_share(spine_of, qps: int = 1) -> float:
    """The closed form of the step's slowdown against the collision-free spread, where the spines divide a leaf's
    flows evenly (as many spines as cards): the most flows any leaf puts on one uplink, over ``qps`` (each carries
    1/qps of a card's bytes)."""
    counts = Counter((leaf, s) for (leaf, _, _), s in spine_of.items())
    return max(counts.values()) / qps


def chance_spread(cards: int, spines: int) -> float:
    """The chance that a leaf's ``cards`` hashed flows (one a card) all take different spines: :math:`S!/(S-H)!/S^H`
    (0 when there are more flows than spines).

    >>> round(chance_spread(8, 8), 5)
    0.0024
    """
    cards = check_count("cards", cards, minimum=1)
    spines = check_count("spines", spines, minimum=1)
    return math.perm(spines, cards) / spines**cards


def chance_worst(leaves: int, cards: int, spines: int) -> float:
    """The chance that, in a job of ``leaves`` leaves, some leaf hashes all its ``cards`` flows onto one spine, the
    fixed rule's worst spread: :math:`1 - (1 - S\\cdot S^{-H})^{L}`.

    >>> round(1 / chance_worst(16, 8, 8))
    131072
    """
    leaves = check_count("leaves", leaves, minimum=1)
    cards = check_count("cards", cards, minimum=1)
    spines = check_count("spines", spines, minimum=1)
    return 1 - (1 - spines * float(spines) ** -cards) ** leaves


def hashed_busiest_shares(leaves: int, cards: int, spines: int, seeds, qps: int = 1) -> list[float]:
    """:func:`busiest_uplink_share` of :func:`hashed_spines` for each seed, the same draws counted with numpy (fast
    enough for thousands of draws)."""
    leaves = check_count("leaves", leaves, minimum=2)
    cards = check_count("cards", cards, minimum=1)
    spines = check_count("spines", spines, minimum=1)
    qps = check_count("qps", qps, minimum=1)
    out = []
    for seed in seeds:
        draw = np.random.default_rng(seed).integers(spines, size=(leaves, cards, qps)).reshape(leaves, -1)
        counts = (draw[:, :, None] == np.arange(spines)).sum(axis=1)
        out.append(float(counts.max()) / qps)
    return out


def hashed_slowdowns(leaves: int, cards: int, spines: int, seeds, qps: int = 1, link: str = "eth_400g",
                     nbytes: int = 2**26) -> list[float]:
    """For each seed, the step's time with hashed spines over its time with the spread (:func:`step_time`)."""
    g = leaf_spine(leaves, cards, spines, link)
    flows = shift_flows(leaves, cards, nbytes, qps)
    base = step_time(g, flows, spread_spines(leaves, cards, spines, qps))
    return [step_time(g, flows, hashed_spines(leaves, cards, spines, s, qps)) / base for s in seeds]
