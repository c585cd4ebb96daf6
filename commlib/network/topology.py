r"""Physical topologies, and what a collective's messages do to their links.

A topology is a :class:`networkx.Graph`. Every edge is a full-duplex link
with two attributes: ``bandwidth`` (bytes/s, **one direction**; the other
direction has the same bandwidth and is used independently) and ``latency``
(seconds). Nodes carry ``kind`` (``"gpu"``, ``"cpu"``, ``"switch"``,
``"nic"``, ``"node"``) and ``rank`` (the rank that runs there, or ``None``
for switches, CPUs and NICs), and ``pos`` (x, y) for drawing. Link figures
come from :data:`commlib.hardware.LINKS`.

Mapping a trace onto links (:func:`map_trace`, :func:`map_flows`)
=================================================================

Each message of a :class:`commlib.collectives.trace.Trace` becomes a *flow* from the
node of its source rank to the node of its destination rank, routed along a
shortest path (fewest seconds per byte, then fewest hops, then the
lexicographically smallest node sequence: deterministic). Within one step
all flows start at the same time. How they share the links is the standard
fluid model of networks, **max-min fair sharing** (Bertsekas & Gallager
1992, sec. 6.5.2), computed by progressive filling (:func:`max_min_rates`):

* each direction ``u -> v`` of a link has capacity :math:`B_e`; the rates of
  the flows crossing it add up to at most :math:`B_e`;
* all rates rise together; a flow stops rising when a link on its path is
  full (its bottleneck), and the capacity it cannot use goes to the others;
* when a flow has sent its :math:`m_f` bytes it leaves, and the rates of
  the rest are computed again: the survivors speed up;
* a flow also pays one start-up, once per message, and finishes at
  :math:`t_f = \alpha_f + (\text{time its bytes took})`. A link preset's
  latency is per message, end to end (:class:`commlib.hardware.Link`), so a
  flow pays the largest latency on its path once,
  :math:`\alpha_f = \max_{e \in p_f} \alpha_e`, however many links and
  switches it crosses (no per-switch delay is modelled).
  ``startup="links"`` charges every link's latency instead,
  :math:`\alpha_f = \sum_{e \in p_f} \alpha_e`, for comparison: a message
  through three links of one preset then pays its start-up three times;
* a step lasts as long as its slowest flow, :math:`T_{\text{step}} = \max_f t_f`, and
  the collective takes :math:`T = \sum_{\text{steps}} T_{\text{step}}` (steps do not overlap).

``sharing="equal"`` keeps the coarser model, for comparison: every flow
gets an equal share :math:`B_e / |F_e|` of each link on its path
(:math:`F_e` the flows of the step on direction :math:`e`), at its tightest
link, for the whole step,
:math:`t_f = \alpha_f + m_f / \min_{e \in p_f} (B_e / |F_e|)`.
A max-min rate is never below that share, so equal sharing can only
overestimate; for the symmetric patterns of collectives (every flow of a
step alone on its links, or all flows of a step alike) the two agree.
Reduction arithmetic (gamma) and store-and-forward delays are not modelled.

On a ring of ``n`` links of bandwidth ``B`` and latency ``alpha`` a ring
all-reduce of ``M`` bytes has ``2(n-1)`` steps in which every flow crosses
one link alone, so :math:`T = 2(n-1)(\alpha + M/(nB))` -- exactly
:func:`commlib.cost.allreduce_time`.

>>> from commlib.collectives.trace import Trace
>>> g = ring(4, link="eth_10g")
>>> t = Trace(n=4)
>>> for i in range(4):
...     t.add(step=0, src=i, dst=(i + 1) % 4, nbytes=1_250_000)
>>> res = map_trace(g, t)
>>> round(res.time * 1e3, 3)          # 1.25 MB at 1.25 GB/s + 20 us
1.02
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from .. import hardware
from ..collectives import cost
from ..collectives import simulate as collectives
from ..collectives.trace import Trace
from ..parameter_servers import simulate as ps
from ..units import check_count, check_nonnegative, check_positive, parse_rate
from . import placement

__all__ = [
    "Flow",
    "StepLoad",
    "Mapped",
    "link_attrs",
    "ring",
    "fully_connected",
    "star",
    "tree",
    "mesh2d",
    "torus2d",
    "torus_pod",
    "snake_order",
    "grid_ring",
    "ring_orders",
    "is_closed_ring",
    "bisection_links",
    "machine",
    "cluster",
    "check_topology",
    "rank_nodes",
    "route",
    "max_min_rates",
    "SHARING",
    "STARTUP",
    "map_flows",
    "map_trace",
    "map_concurrent",
    "allreduce_trace",
    "mirrored",
    "scaled",
    "staged_exchange",
    "rdma_exchange",
    "ps_star",
    "links_of",
    "BYTEPS_PCIE_MEASURED",
    "DGX1_NVLINKS",
    "CUBE_MESH_RING",
    "CUBE_MESH_CHANNELS",
    "hamiltonian_rings",
    "widest_ring",
    "ring_cover",
    "duplex_rings",
    "sharing_comparison",
    "intra_host_reduction",
    "gallery_runs",
    "placed",
    "ring_check",
    "hierarchy_runs",
    "pipelined_bound",
    "busiest_link",
]

#: GPU-to-GPU copy rates measured by BytePS on a PCIe-only machine whose links are all PCIe 3.0 x16
#: (Jiang et al. 2020, sec. 4.2.1), bytes/s. That machine has one PCIe switch on each of its two CPU
#: sockets, so its copies across switches also cross the sockets (NCCL's path type SYS: PCIe, both
#: CPUs and the QPI link between them); no rate was measured for a path through one CPU only (PHB).
#: The bandwidth-only model here charges both paths the same PCIe rate; the drop across sockets is
#: a measured effect it does not capture.
BYTEPS_PCIE_MEASURED: dict[str, float] = {
    "same PCIe switch": parse_rate("105 Gb/s"),
    "across sockets (PCIe switches on different CPUs, through QPI)": parse_rate("80 Gb/s"),
}

#: NVLinks between GPU pairs of an 8-GPU V100 server wired as a hybrid cube-mesh (NVIDIA DGX-1 with V100,
#: NVIDIA 2017 white paper; the matrix ``nvidia-smi topo -m`` prints there as NV1 or NV2). Two quads (GPUs
#: 0-3 and 4-7), each fully connected, and GPU i linked to GPU i + 4; one or two links per pair, so that
#: every GPU uses all six of its links. Pairs not listed (e.g. GPU 0 and GPU 5) have no NVLink.
DGX1_NVLINKS: dict[tuple[int, int], int] = {
    (0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 2, (1, 2): 2, (1, 3): 1, (1, 5): 2, (2, 3): 2, (2, 6): 1,
    (3, 7): 1, (4, 5): 1, (4, 6): 1, (4, 7): 2, (5, 6): 2, (5, 7): 1, (6, 7): 2,
}

Node = Hashable
Edge = tuple  # (u, v): the direction u -> v of the link {u, v}


# ---------------------------------------------------------------------------
# links


def link_attrs(link: str, bandwidth: float | None = None, latency: float | None = None) -> dict:
    """Edge attributes for link preset ``link`` (a key of :data:`commlib.hardware.LINKS`).

    ``bandwidth`` (bytes/s per direction) and ``latency`` (s) override the
    preset's figures when given.

    >>> link_attrs("eth_1g")["bandwidth"]          # 1 Gb/s = 125 MB/s per direction
    125000000.0
    >>> link_attrs("warp_drive")
    Traceback (most recent call last):
    ...
    ValueError: unknown link 'warp_drive'; choose one of: pcie3_x16, ...
    """
    if not isinstance(link, str) or link not in hardware.LINKS:
        raise ValueError(f"unknown link {link!r}; choose one of: {', '.join(hardware.LINKS)}")
    item = hardware.link(link)
    bw = item.bandwidth if bandwidth is None else check_positive("bandwidth", bandwidth)
    lat = item.latency if latency is None else check_nonnegative("latency", latency)
    return {"bandwidth": float(bw), "latency": float(lat), "link": item.key, "label": item.name}


def _graph(name: str) -> nx.Graph:
    g = nx.Graph()
    g.graph["name"] = name
    return g


def _node(g: nx.Graph, node: Node, kind: str, rank: int | None, pos: tuple[float, float]) -> None:
    g.add_node(node, kind=kind, rank=rank, pos=(float(pos[0]), float(pos[1])))


def _circle(i: int, n: int) -> tuple[float, float]:
    angle = math.pi / 2 - 2 * math.pi * i / n
    return (math.cos(angle), math.sin(angle))


# ---------------------------------------------------------------------------
# simple topologies: every node is a rank unless said otherwise


def ring(n: int, link: str = "nvlink2", bandwidth: float | None = None, latency: float | None = None) -> nx.Graph:
    """``n`` ranks in a cycle, rank ``i`` linked to ``i + 1 (mod n)``.

    >>> g = ring(5, "eth_10g"); g.number_of_nodes(), g.number_of_edges()
    (5, 5)
    """
    n = check_count("n", n, minimum=2)
    attrs = link_attrs(link, bandwidth, latency)
    g = _graph(f"ring of {n}")
    for i in range(n):
        _node(g, i, "node", i, _circle(i, n))
    for i in range(n):
        g.add_edge(i, (i + 1) % n, **attrs)
    return g


def fully_connected(n: int, link: str = "nvlink2", bandwidth: float | None = None,
                    latency: float | None = None) -> nx.Graph:
    """``n`` ranks with a direct link between every pair: ``n(n-1)/2`` links.

    >>> fully_connected(4).number_of_edges()
    6
    """
    n = check_count("n", n, minimum=2)
    attrs = link_attrs(link, bandwidth, latency)
    g = _graph(f"fully connected, {n}")
    for i in range(n):
        _node(g, i, "node", i, _circle(i, n))
    for i in range(n):
        for j in range(i + 1, n):
            g.add_edge(i, j, **attrs)
    return g


def star(n: int, link: str = "eth_10g", hub: str = "switch", bandwidth: float | None = None,
         latency: float | None = None) -> nx.Graph:
    """Hub and spoke: every spoke has one link to the hub.

    ``hub="switch"``: ``n`` ranks on the spokes around a switch node
    ``"hub"`` that is not a rank (a top-of-rack switch).
    ``hub="rank"``: rank 0 sits in the hub (a parameter server or the master
    of a naive all-reduce) and ranks ``1 .. n-1`` on the spokes.

    >>> star(4, hub="switch").number_of_nodes(), star(4, hub="rank").number_of_nodes()
    (5, 4)
    """
    n = check_count("n", n, minimum=2)
    if hub not in ("switch", "rank"):
        raise ValueError(f"hub must be 'switch' or 'rank', got {hub!r}")
    attrs = link_attrs(link, bandwidth, latency)
    g = _graph(f"star of {n}")
    if hub == "switch":
        _node(g, "hub", "switch", None, (0.0, 0.0))
        for i in range(n):
            _node(g, i, "node", i, _circle(i, n))
            g.add_edge("hub", i, **attrs)
    else:
        _node(g, 0, "node", 0, (0.0, 0.0))
        for i in range(1, n):
            _node(g, i, "node", i, _circle(i - 1, n - 1))
            g.add_edge(0, i, **attrs)
    return g


def tree(n: int, arity: int = 2, link: str = "eth_10g", uplink: str | None = None,
         bandwidth: float | None = None, latency: float | None = None, fat: bool = False) -> nx.Graph:
    """``n`` ranks as the leaves of a switch tree; each switch has up to ``arity`` children.

    Leaves hang from level-1 switches ``"s1.0", "s1.1", ...``; those from
    level-2 switches, and so on up to one root. ``uplink`` (a link preset)
    sets the switch-to-switch links (default: same as ``link``); a slower
    uplink is the *oversubscribed* tree of real clusters. With one rate at every
    level, a switch's uplink carries what one leaf link does while the ranks
    below it could send ``arity`` times that: each level up is oversubscribed
    ``arity``:1. ``fat=True`` builds the non-blocking *fat tree* instead: each
    uplink's bandwidth is its rate times the number of ranks below it.

    >>> g = tree(4, arity=2); sorted(n for n in g if isinstance(n, str))
    ['s1.0', 's1.1', 's2.0']
    >>> tree(4, arity=2, fat=True)["s2.0"]["s1.0"]["bandwidth"] / tree(4, arity=2)["s2.0"]["s1.0"]["bandwidth"]
    2.0
    """
    if not isinstance(fat, bool):
        raise ValueError(f"fat must be True or False, got {fat!r}")
    n = check_count("n", n, minimum=2)
    arity = check_count("arity", arity, minimum=2)
    leaf = link_attrs(link, bandwidth, latency)
    up = leaf if uplink is None else link_attrs(uplink)
    g = _graph(f"tree of {n}, arity {arity}")
    for i in range(n):
        _node(g, i, "node", i, (float(i), 0.0))
    level, children = 0, list(range(n))
    below = {i: 1 for i in range(n)}          # leaves under each node
    while len(children) > 1:
        level += 1
        parents = []
        for k in range(0, len(children), arity):
            group = children[k:k + arity]
            name = f"s{level}.{len(parents)}"
            x = sum(g.nodes[c]["pos"][0] for c in group) / len(group)
            _node(g, name, "switch", None, (x, float(level)))
            for c in group:
                attrs = dict(leaf if level == 1 else up)
                if fat:
                    attrs["bandwidth"] = below[c] * attrs["bandwidth"]
                g.add_edge(name, c, **attrs)
            below[name] = sum(below[c] for c in group)
            parents.append(name)
        children = parents
    return g


def _grid(rows: int, cols: int, link: str, bandwidth, latency, wrap: bool, used: int | None, name: str):
    rows = check_count("rows", rows)
    cols = check_count("cols", cols)
    if rows * cols < 2:
        raise ValueError(f"rows * cols must be >= 2, got {rows} x {cols}")
    used = rows * cols if used is None else check_count("used", used, minimum=2, maximum=rows * cols)
    attrs = link_attrs(link, bandwidth, latency)
    g = _graph(name)
    for k in range(used):
        r, c = divmod(k, cols)
        _node(g, k, "node", k, (float(c), float(-r)))
    for k in range(used):
        r, c = divmod(k, cols)
        if c + 1 < cols and k + 1 < used:
            g.add_edge(k, k + 1, **attrs, wrap=False)
        if k + cols < used:
            g.add_edge(k, k + cols, **attrs, wrap=False)
    if wrap:
        for r in range(rows):  # row r's wrap link joins (r, 0) and (r, cols-1)
            a, b = r * cols, r * cols + cols - 1
            if cols > 2 and b < used:
                g.add_edge(a, b, **attrs, wrap=True)
        for c in range(cols):  # column c's wrap link joins (0, c) and (rows-1, c)
            a, b = c, (rows - 1) * cols + c
            if rows > 2 and b < used:
                g.add_edge(a, b, **attrs, wrap=True)
    return g


def mesh2d(rows: int, cols: int, link: str = "nvlink2", bandwidth: float | None = None,
           latency: float | None = None) -> nx.Graph:
    """A ``rows`` x ``cols`` grid; rank ``r*cols + c`` at row ``r``, column ``c``, linked to its 2-4 neighbours.

    >>> mesh2d(3, 4).number_of_edges()          # 3*3 horizontal + 2*4 vertical
    17
    """
    return _grid(rows, cols, link, bandwidth, latency, False, None, f"{rows}x{cols} mesh")


def torus2d(rows: int, cols: int, link: str = "nvlink2", bandwidth: float | None = None,
            latency: float | None = None) -> nx.Graph:
    """A mesh plus wrap-around links closing every row and every column into a ring.

    Each wrap-around link joins the two ends of a row (or column). With only
    two nodes across, the wrap-around link would join the same pair as the
    mesh link, and the graph keeps one link.

    >>> torus2d(3, 4).number_of_edges()         # every node has 4 links: 12*4/2
    24
    """
    return _grid(rows, cols, link, bandwidth, latency, True, None, f"{rows}x{cols} torus")


def torus_pod(rows: int, cols: int, used: int, link: str = "nvlink2", bandwidth: float | None = None,
              latency: float | None = None) -> nx.Graph:
    """The part of a ``rows`` x ``cols`` torus pod a job holds when it gets ``used`` nodes, row by row.

    The job owns the nodes it was given and the links between them. A
    wrap-around link joins the two *ends* of a row (or column), so the job
    owns it only when it holds both ends, that is when the row (or column) is
    full. A half-filled pod therefore is a mesh in its unfilled rows and
    columns: the wrap-around links that make a torus symmetric are lost
    (the situation TidalMesh starts from, Lim & Kim 2025).

    >>> full, half = torus_pod(4, 4, 16), torus_pod(4, 4, 8)
    >>> sum(d["wrap"] for *_, d in full.edges(data=True)), sum(d["wrap"] for *_, d in half.edges(data=True))
    (8, 2)
    """
    return _grid(rows, cols, link, bandwidth, latency, True, used, f"{used} of a {rows}x{cols} torus pod")


def snake_order(rows: int, cols: int) -> list[int]:
    """Grid nodes in boustrophedon order: row 0 left to right, row 1 right to left, ...

    Consecutive nodes are neighbours in the mesh, so a logical ring laid out
    in this order uses one link per hop -- except the ring's closing hop,
    from the last node back to the first. With an even number of rows the
    snake ends in column 0 and the hop crosses ``rows - 1`` links on a mesh
    (one wrap-around link on a torus); with an odd number of rows it ends in
    the last column and crosses ``(rows - 1) + (cols - 1)`` links on a mesh
    (two wrap-around links on a torus, one per dimension).

    >>> snake_order(2, 3)
    [0, 1, 2, 5, 4, 3]
    """
    rows = check_count("rows", rows)
    cols = check_count("cols", cols)
    out = []
    for r in range(rows):
        row = list(range(r * cols, (r + 1) * cols))
        out.extend(row if r % 2 == 0 else row[::-1])
    return out


def grid_ring(rows: int, cols: int) -> list[int]:
    """A closed ring on a ``rows`` x ``cols`` mesh, every hop one link (:func:`is_closed_ring`).

    Row 0 left to right, then a snake back over columns 1 to cols-1 of the other rows, then up column 0.
    It exists when ``rows`` is even (for an even ``cols`` only, transpose); with both odd no closed
    ring exists (:func:`ring_orders`).

    >>> grid_ring(4, 4)
    [0, 1, 2, 3, 7, 6, 5, 9, 10, 11, 15, 14, 13, 12, 8, 4]
    >>> is_closed_ring(mesh2d(4, 4), grid_ring(4, 4))
    True
    """
    rows = check_count("rows", rows, minimum=2)
    cols = check_count("cols", cols, minimum=2)
    if rows % 2:
        raise ValueError(f"rows must be even for this closed ring (transpose an even number of columns), got {rows}")
    out = list(range(cols))
    for r in range(1, rows):
        row = [r * cols + c for c in range(1, cols)]
        out.extend(row[::-1] if r % 2 else row)
    out.extend(r * cols for r in range(rows - 1, 0, -1))
    return out


def is_closed_ring(g: nx.Graph, order: Sequence[Node]) -> bool:
    """Whether a logical ring in ``order`` crosses one link per hop, its closing hop included.

    >>> is_closed_ring(mesh2d(4, 4), snake_order(4, 4)), is_closed_ring(torus2d(4, 4), snake_order(4, 4))
    (False, True)
    """
    order = list(order)
    if len(order) < 2 or len(set(order)) != len(order):
        raise ValueError(f"order must list two or more different nodes, got {order!r}")
    for v in order:
        if v not in g:
            raise ValueError(f"order names {v!r}, which is not a node of the topology")
    return all(g.has_edge(a, b) for a, b in zip(order, order[1:] + order[:1]))


def ring_orders(g: nx.Graph, nodes: Sequence[Node] | None = None, closed_only: bool = False,
                limit: int | None = None) -> list[tuple]:
    r"""Every logical ring through ``nodes`` (default: all rank nodes) whose hops are single links but for
    the closing one: the Hamiltonian paths of the subgraph from its first node, each closed.

    A ring all-reduce wants every hop, the closing one included, on a link of its own: a *closed* ring
    (a Hamiltonian cycle, :func:`is_closed_ring`), which ``closed_only=True`` keeps. A grid of
    :math:`r \times c` nodes has one when :math:`rc` is even (a 4 x 4 mesh does: row 0 left to right,
    back in a snake over columns 1 to c-1, up column 0); a mesh with an odd number of nodes has none
    (colour it like a chess board: a closed ring alternates colours, so it needs as many of each),
    while the torus of the same size does. Each ring appears once per direction. Exhaustive search:
    for the small graphs of the chapter (up to about 16 nodes). ``limit``: stop after that many rings
    (the first found, in the same order), e.g. ``limit=1`` to ask whether a closed ring exists.

    >>> ring_orders(mesh2d(2, 3))
    [(0, 1, 2, 5, 4, 3), (0, 3, 4, 1, 2, 5), (0, 3, 4, 5, 2, 1)]
    >>> ring_orders(mesh2d(2, 3), limit=1)
    [(0, 1, 2, 5, 4, 3)]
    >>> ring_orders(mesh2d(3, 3), closed_only=True), len(ring_orders(torus2d(3, 3), closed_only=True)) > 0
    ([], True)
    """
    nodes = sorted(rank_nodes(g).values(), key=_key) if nodes is None else list(nodes)
    if len(nodes) < 2 or len(set(nodes)) != len(nodes):
        raise ValueError(f"nodes must be two or more different nodes, got {nodes!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a whole number >= 1 or None, got {limit!r}")
    for v in nodes:
        if v not in g:
            raise ValueError(f"nodes names {v!r}, which is not a node of the topology")
    sub = g.subgraph(nodes)
    start, want = nodes[0], len(nodes)
    out: list[tuple] = []
    path, seen = [start], {start}

    def extend() -> None:
        if len(path) == want:
            if not closed_only or sub.has_edge(path[-1], start):
                out.append(tuple(path))
            return
        for v in sorted(sub.adj[path[-1]], key=_key):
            if limit is not None and len(out) >= limit:
                return
            if v not in seen:
                seen.add(v)
                path.append(v)
                extend()
                path.pop()
                seen.discard(v)

    extend()
    return out


def bisection_links(g: nx.Graph) -> int:
    """The fewest links whose removal splits the rank nodes into two halves (sizes differing by at most one),
    with every link counted once: the *bisection width* (Dally & Towles 2004, ch. 3). Exhaustive, for
    small graphs whose every node is a rank (a grid of up to about 20 nodes).

    >>> bisection_links(mesh2d(4, 4)), bisection_links(torus2d(4, 4))
    (4, 8)
    """
    nodes = sorted(g.nodes, key=_key)
    if any(g.nodes[v].get("rank") is None for v in nodes):
        raise ValueError("bisection_links wants a graph whose every node is a rank (a mesh, torus or ring)")
    n = len(nodes)
    if not 2 <= n <= 24:
        raise ValueError(f"bisection_links searches every split: the graph must have 2 to 24 nodes, got {n}")
    index = {v: i for i, v in enumerate(nodes)}
    links = [(1 << index[u]) | (1 << index[v]) for u, v in g.edges]
    best = len(links)
    # The side without node n-1 holds n//2 nodes or, for odd n, the larger half: every split once.
    for size in sorted({n // 2, n - n // 2}):
        for half in itertools.combinations(range(n - 1), size):
            side = sum(1 << i for i in half)
            best = min(best, sum(1 for m in links if (m & side).bit_count() == 1))
    return best


# ---------------------------------------------------------------------------
# hierarchical machines


def machine(gpus: int = 8, gpus_per_switch: int = 2, nvlink: str | None = "nvlink2", pcie: str = "pcie3_x16",
            sockets: int = 2, socket_link: str = "upi", nic: str | None = "eth_100g", nic_switch: int = 0,
            host: int = 0, first_rank: int = 0, g: nx.Graph | None = None,
            nvlink_layout: str = "switch") -> nx.Graph:
    """One multi-GPU server, in the shape of the BytePS paper's figures (Jiang et al. 2020, sec. 4.2).

    Nodes (prefixed ``h<host>.``): ``cpu<s>`` for each socket (with its
    memory), linked by ``socket_link`` (UPI); ``pcie<k>`` PCIe switches, the
    first half on socket 0 and the rest on the last socket; ``gpu<j>``,
    ``gpus_per_switch`` under each PCIe switch; a ``nic`` on PCIe switch
    ``nic_switch``. All PCIe links use preset ``pcie``. With ``nvlink`` set,
    GPUs also talk over NVLink. ``nvlink_layout="switch"`` gives every GPU
    its full NVLink bandwidth into one ``nvswitch`` node (as NVSwitch
    machines, DGX-2 onwards, wire it). ``nvlink_layout="cube_mesh"`` (8 GPUs)
    wires the V100 machine BytePS measured, a DGX-1-style hybrid cube-mesh:
    GPU pairs joined by one or two of each GPU's six links
    (:data:`DGX1_NVLINKS`), each link one sixth of the preset's bandwidth
    (25 GB/s per direction for NVLink 2.0), no link at all between some
    pairs. ``nvlink=None`` is a PCIe-only machine. GPUs are ranks
    ``first_rank ..``.
    ``nic`` is the preset of the NIC's network port, used by :func:`cluster`.

    >>> m = machine(gpus=8, gpus_per_switch=4, nvlink=None)
    >>> route(m, "h0.gpu0", "h0.gpu4")          # across PCIe switches: through both sockets and UPI
    ('h0.gpu0', 'h0.pcie0', 'h0.cpu0', 'h0.cpu1', 'h0.pcie1', 'h0.gpu4')
    """
    gpus = check_count("gpus", gpus)
    gpus_per_switch = check_count("gpus_per_switch", gpus_per_switch, maximum=gpus)
    sockets = check_count("sockets", sockets, maximum=8)
    host = check_count("host", host, minimum=0)
    first_rank = check_count("first_rank", first_rank, minimum=0)
    if gpus % gpus_per_switch:
        raise ValueError(f"gpus ({gpus}) must be a multiple of gpus_per_switch ({gpus_per_switch})")
    if nvlink_layout not in ("switch", "cube_mesh"):
        raise ValueError(f"nvlink_layout must be 'switch' or 'cube_mesh', got {nvlink_layout!r}")
    if nvlink_layout == "cube_mesh" and gpus != 8:
        raise ValueError(f"gpus must be 8 for nvlink_layout='cube_mesh' (the DGX-1 wiring), got {gpus}")
    switches = gpus // gpus_per_switch
    nic_switch = check_count("nic_switch", nic_switch, minimum=0, maximum=switches - 1)
    pcie_attrs = link_attrs(pcie)
    upi_attrs = link_attrs(socket_link)
    nvl_attrs = link_attrs(nvlink) if nvlink is not None else None
    if nic is not None:
        link_attrs(nic)  # validate now
    g = _graph(f"{gpus}-GPU machine") if g is None else g
    p = f"h{host}."
    x0 = host * (gpus + 2.5)
    width = gpus - 1
    for s in range(sockets):
        _node(g, p + f"cpu{s}", "cpu", None, (x0 + width * (s + 0.5) / sockets, 2.4))
    for s in range(sockets - 1):
        g.add_edge(p + f"cpu{s}", p + f"cpu{s + 1}", **upi_attrs)
    for k in range(switches):
        sock = min(sockets - 1, k * sockets // switches)
        xs = x0 + k * gpus_per_switch + (gpus_per_switch - 1) / 2
        _node(g, p + f"pcie{k}", "switch", None, (xs, 1.2))
        g.add_edge(p + f"pcie{k}", p + f"cpu{sock}", **pcie_attrs)
        for j in range(k * gpus_per_switch, (k + 1) * gpus_per_switch):
            _node(g, p + f"gpu{j}", "gpu", first_rank + j, (x0 + j, 0.0))
            g.add_edge(p + f"gpu{j}", p + f"pcie{k}", **pcie_attrs)
    if nic is not None:
        xs = g.nodes[p + f"pcie{nic_switch}"]["pos"][0]
        _node(g, p + "nic", "nic", None, (xs - 1.0, 3.0))   # above the CPUs: its edge to "net" clears them
        g.add_edge(p + "nic", p + f"pcie{nic_switch}", **pcie_attrs)
        g.nodes[p + "nic"]["port"] = nic
    if nvl_attrs is not None and nvlink_layout == "cube_mesh":
        per_link = nvl_attrs["bandwidth"] / placement.V100_NVLINKS  # a V100 has six NVLink 2.0 links
        for (a, b), links in DGX1_NVLINKS.items():
            g.add_edge(p + f"gpu{a}", p + f"gpu{b}", **{**nvl_attrs, "bandwidth": links * per_link},
                       nvlinks=links, arc=True)
    elif nvl_attrs is not None:
        _node(g, p + "nvswitch", "switch", None, (x0 + width / 2, -1.2))
        for j in range(gpus):
            g.add_edge(p + f"gpu{j}", p + "nvswitch", **nvl_attrs)
    return g


def cluster(hosts: int, gpus_per_host: int = 8, network: str = "eth_100g", gpus_per_switch: int = 2,
            nvlink: str | None = "nvlink2", pcie: str = "pcie3_x16", sockets: int = 2,
            socket_link: str = "upi", nic_switch: int = 0, nvlink_layout: str = "switch") -> nx.Graph:
    """``hosts`` copies of :func:`machine` whose NICs meet at one network switch ``"net"``.

    Ranks are numbered host by host: host ``h`` holds ranks
    ``h*gpus_per_host .. (h+1)*gpus_per_host - 1``. Each NIC's port runs
    at the ``network`` preset (Ethernet or InfiniBand).

    >>> c = cluster(2, gpus_per_host=4)
    >>> route(c, "h0.gpu0", "h1.gpu0")
    ('h0.gpu0', 'h0.pcie0', 'h0.nic', 'net', 'h1.nic', 'h1.pcie0', 'h1.gpu0')
    """
    hosts = check_count("hosts", hosts)
    gpus_per_host = check_count("gpus_per_host", gpus_per_host)
    net_attrs = link_attrs(network)
    g = _graph(f"{hosts} hosts x {gpus_per_host} GPUs")
    for h in range(hosts):
        machine(gpus=gpus_per_host, gpus_per_switch=gpus_per_switch, nvlink=nvlink, pcie=pcie, sockets=sockets,
                socket_link=socket_link, nic=network, nic_switch=nic_switch, host=h, first_rank=h * gpus_per_host,
                g=g, nvlink_layout=nvlink_layout)
    x_mid = ((hosts - 1) * (gpus_per_host + 2.5) + gpus_per_host - 1) / 2
    _node(g, "net", "switch", None, (x_mid, 3.6))
    for h in range(hosts):
        g.add_edge(f"h{h}.nic", "net", **net_attrs)
    return g


# ---------------------------------------------------------------------------
# routing and mapping


def check_topology(g: nx.Graph) -> nx.Graph:
    """Raise ValueError unless ``g`` is a connected graph whose links have bandwidth > 0 and latency >= 0.

    >>> g = nx.Graph(); g.add_edge(0, 1, bandwidth=1e9, latency=0.0); g.add_node(2)
    >>> check_topology(g)
    Traceback (most recent call last):
    ...
    ValueError: topology must be connected; it has 2 separate parts (node 2 cannot reach node 0)
    """
    if not isinstance(g, nx.Graph) or g.is_directed():
        raise ValueError(f"topology must be an undirected networkx.Graph, got {type(g).__name__}")
    if g.number_of_nodes() == 0:
        raise ValueError("topology must have at least one node")
    if not nx.is_connected(g):
        parts = sorted(nx.connected_components(g), key=lambda c: min(map(_key, c)))
        a, b = min(parts[0], key=_key), min(parts[1], key=_key)
        raise ValueError(f"topology must be connected; it has {len(parts)} separate parts "
                         f"(node {b} cannot reach node {a})")
    for u, v, d in g.edges(data=True):
        if "bandwidth" not in d:
            raise ValueError(f"link {u}-{v} has no bandwidth (bytes/s per direction)")
        check_positive(f"bandwidth of link {u}-{v}", d["bandwidth"])
        check_nonnegative(f"latency of link {u}-{v}", d.get("latency", 0.0))
    return g


def rank_nodes(g: nx.Graph) -> dict[int, Node]:
    """Rank -> node, from the nodes' ``rank`` attributes."""
    return {d["rank"]: v for v, d in g.nodes(data=True) if d.get("rank") is not None}


def _key(node: Node) -> tuple:
    if isinstance(node, bool):
        return (3, 0, repr(node))
    if isinstance(node, int):
        return (0, node, "")
    if isinstance(node, str):
        return (1, 0, node)
    return (2, 0, repr(node))


def _cost(d: Mapping) -> int:
    # picoseconds per megabyte: an integer, so that equal paths tie exactly
    return int(round(1e18 / d["bandwidth"]))


def route(g: nx.Graph, src: Node, dst: Node) -> tuple:
    """The path a flow from ``src`` to ``dst`` takes: fewest seconds per byte, then fewest hops, then the
    lexicographically smallest node sequence (ints before strings). Deterministic.

    >>> route(mesh2d(2, 2), 0, 3)
    (0, 1, 3)
    """
    for v, what in ((src, "src"), (dst, "dst")):
        if v not in g:
            raise ValueError(f"{what} {v!r} is not a node of the topology")
    if src == dst:
        return (src,)
    start = (0, 0, (_key(src),), (src,))
    heap = [start]
    done: set = set()
    while heap:
        cost, hops, keys, path = heapq.heappop(heap)
        node = path[-1]
        if node in done:
            continue
        done.add(node)
        if node == dst:
            return path
        for nb in g.adj[node]:
            if nb not in done:
                heapq.heappush(heap, (cost + _cost(g.adj[node][nb]), hops + 1, keys + (_key(nb),), path + (nb,)))
    raise ValueError(f"no path from {src!r} to {dst!r}: the topology is not connected")


@dataclass(frozen=True)
class Flow:
    """``nbytes`` from node ``src`` to node ``dst`` during ``step`` (nodes, not ranks)."""

    step: int
    src: Node
    dst: Node
    nbytes: int
    label: str = ""


@dataclass(frozen=True)
class StepLoad:
    """One step on the links.

    ``link_bytes[(u, v)]`` and ``link_flows[(u, v)]``: bytes and number of
    flows on the direction ``u -> v`` in this step. ``time`` (s) is the
    slowest flow's; ``bottleneck`` is the link that throttled it (the
    tightest share on its path), ``None`` if the step moved no bytes.
    """

    step: int
    time: float
    link_bytes: dict
    link_flows: dict
    bottleneck: Edge | None
    slowest: Flow | None


@dataclass(frozen=True)
class Mapped:
    """A collective (or any set of flows) mapped onto a topology.

    ``time`` (s) sums the steps; ``link_bytes`` totals bytes per link
    direction over all steps; ``bottleneck`` is the link direction that
    throttled the slowest flow for the most seconds in total; ``capacity``
    holds the bandwidth (bytes/s per direction) of every link direction used.
    """

    steps: tuple[StepLoad, ...]
    time: float
    link_bytes: dict
    bottleneck: Edge | None
    routes: dict = field(default_factory=dict, repr=False)
    sharing: str = "max-min"
    startup: str = "message"
    capacity: dict = field(default_factory=dict, repr=False)

    def load(self, u: Node, v: Node) -> int:
        """Total bytes that went ``u -> v``."""
        return int(self.link_bytes.get((u, v), 0))

    def undirected_load(self) -> dict:
        """Per link ``{u, v}`` (key sorted), the larger of its two directions' totals (bytes)."""
        out: dict = {}
        for (u, v), b in self.link_bytes.items():
            key = tuple(sorted((u, v), key=_key))
            out[key] = max(out.get(key, 0), b)
        return out

    @property
    def max_flows(self) -> int:
        """Most flows that ever shared one link direction in one step (1 means no congestion)."""
        return max((max(s.link_flows.values(), default=0) for s in self.steps), default=0)


def _edges(path: Sequence) -> list[Edge]:
    return list(zip(path[:-1], path[1:]))


def _edge_key(e: Edge) -> tuple:
    return (_key(e[0]), _key(e[1]))


def max_min_rates(paths: Mapping[Hashable, Sequence[Edge]], capacity: Mapping[Edge, float]
                  ) -> dict[Hashable, tuple[float, Edge]]:
    r"""Max-min fair rates of flows on shared links, by progressive filling.

    ``paths[f]`` lists the link directions flow ``f`` crosses (at least one);
    ``capacity[e]`` is the bandwidth of direction ``e`` (bytes/s). All rates
    start at zero and rise together. When a link is full, the flows on it
    stop rising (it is their *bottleneck*); the others keep rising into the
    capacity that is left, until every flow has stopped. The result gives
    each flow ``(rate, bottleneck link)``. No flow can then go faster without
    slowing a flow that is no faster than it (Bertsekas & Gallager 1992,
    sec. 6.5.2): what one flow cannot use at its bottleneck, the others get.

    >>> max_min_rates({"a": [(0, 1)], "b": [(0, 1), (1, 2)], "c": [(1, 2)]},
    ...               {(0, 1): 4.0, (1, 2): 2.0})
    {'b': (1.0, (1, 2)), 'c': (1.0, (1, 2)), 'a': (3.0, (0, 1))}
    """
    for f, path in paths.items():
        if not path:
            raise ValueError(f"flow {f!r} crosses no link; every flow needs at least one")
        for e in path:
            if e not in capacity:
                raise ValueError(f"link {e!r} of flow {f!r} has no capacity")
    return _progressive_filling(paths, capacity)


def _progressive_filling(paths: Mapping[Hashable, Sequence[Edge]], capacity: Mapping[Edge, float]
                         ) -> dict[Hashable, tuple[float, Edge]]:
    """The core of :func:`max_min_rates` (which checks its inputs): fill the fullest link, fix its flows, repeat."""
    left: dict = {}       # capacity left on each link direction
    waiting: dict = {}    # the flows still rising on each link direction
    for f, path in paths.items():
        for e in path:
            left[e] = float(capacity[e])
            waiting.setdefault(e, []).append(f)
    rates: dict = {}
    while len(rates) < len(paths):
        # the fullest links: the smallest equal share of what is left among their rising flows
        shares = {e: left[e] / len(fs) for e, fs in waiting.items() if fs}
        share = min(shares.values())
        full = sorted((e for e, s in shares.items() if s <= share * (1 + 1e-12)), key=_edge_key)
        for e in full:                       # every link at that share is full once its flows stop there
            for f in list(waiting[e]):
                rates[f] = (max(share, 0.0), e)
                for e2 in paths[f]:
                    left[e2] -= share
                    waiting[e2].remove(f)
    return rates


SHARING = ("max-min", "equal")

#: How a flow pays start-ups (:func:`map_flows`): ``"message"``, once, the largest latency on its path (a
#: preset's latency is per message, end to end); ``"links"``, the latency of every link it crosses, summed.
STARTUP = ("message", "links")


def _startup(g: nx.Graph, path: Sequence[Edge], startup: str) -> float:
    """The start-up a flow along ``path`` pays (s): the largest of its links' latencies, or their sum."""
    latencies = [g.edges[e].get("latency", 0.0) for e in path]
    if not latencies:
        return 0.0
    return max(latencies) if startup == "message" else sum(latencies)


def _equal_share_times(g: nx.Graph, flows: Sequence, paths: Sequence, counts: Mapping) -> list:
    out = []
    for f, path in zip(flows, paths):
        if not path or f.nbytes == 0:
            out.append((0.0, {}))
            continue
        share, i = min((g.edges[e]["bandwidth"] / counts[e], i) for i, e in enumerate(path))
        t = f.nbytes / share
        out.append((t, {path[i]: t}))
    return out


def _max_min_times(g: nx.Graph, flows: Sequence, paths: Sequence) -> list:
    """Fluid simulation: max-min rates, recomputed each time a flow finishes."""
    out: list = [(0.0, {}) for _ in flows]
    left = {i: float(f.nbytes) for i, f in enumerate(flows) if paths[i] and f.nbytes > 0}
    capacity = {e: g.edges[e]["bandwidth"] for i in left for e in paths[i]}
    now = 0.0
    while left:
        rates = max_min_rates({i: paths[i] for i in left}, capacity)
        dt = min(left[i] / rates[i][0] for i in left)
        done = []
        for i in left:
            rate, e = rates[i]
            blame = out[i][1]
            blame[e] = blame.get(e, 0.0) + dt
            left[i] -= rate * dt
            if left[i] <= 1e-9 * flows[i].nbytes:
                done.append(i)
        now += dt
        for i in done:
            out[i] = (now, out[i][1])
            del left[i]
    return out


def map_flows(g: nx.Graph, flows: Iterable[Flow], sharing: str = "max-min", startup: str = "message",
              paths: Mapping[Flow, Sequence[Node]] | None = None) -> Mapped:
    r"""Route every flow and time every step (the model in the module docstring).

    ``paths`` gives some flows a route of their own, a list of nodes from its ``src`` to its ``dst`` along links
    of ``g``, instead of :func:`route`'s one shortest path: where a network has several equal paths and a switch
    picks one per flow (:mod:`commlib.network.ecmp`). The result's ``routes`` lists each (src, dst) pair's path: the
    given one where a flow of that pair was given one (the last such flow's), :func:`route`'s otherwise.

    ``startup="message"`` (default) charges each flow one start-up, the
    largest latency on its path; ``startup="links"`` charges the latency of
    every link it crosses. A message between two leaves of a switch tree of
    10 Gb/s Ethernet (20 us a message) crosses six links through the root:

    >>> t = tree(8, 2, "eth_10g")
    >>> [round(1e6 * map_flows(t, [Flow(0, 0, 7, 0)], startup=s).time) for s in STARTUP]
    [20, 120]

    ``sharing="max-min"`` (default) shares each link max-min fairly and
    recomputes the rates whenever a flow of the step finishes;
    ``sharing="equal"`` gives each flow an equal share of every link it
    crosses for the whole step. Two flows of ``m`` bytes that share one link
    of bandwidth ``B`` each get ``B/2`` either way:

    >>> g = nx.path_graph(3); nx.set_edge_attributes(g, 1e9, "bandwidth"); nx.set_edge_attributes(g, 0.0, "latency")
    >>> res = map_flows(g, [Flow(0, 0, 2, 10**9), Flow(0, 1, 2, 10**9)])
    >>> res.time, res.steps[0].link_flows[(1, 2)], res.bottleneck
    (2.0, 2, (1, 2))

    When flows finish, the others speed up. Below, flow 0->2 shares link
    0->1 with a 0.2 GB flow and link 1->2 with another; all three run at
    0.5 GB/s until the small ones are done at 0.4 s, and then flow 0->2 has
    both links to itself. Equal sharing keeps it at 0.5 GB/s to the end:

    >>> flows = [Flow(0, 0, 2, 10**9), Flow(0, 0, 1, 2 * 10**8), Flow(0, 1, 2, 2 * 10**8)]
    >>> round(map_flows(g, flows).time, 3), round(map_flows(g, flows, sharing="equal").time, 3)
    (1.2, 2.0)
    """
    check_topology(g)
    if sharing not in SHARING:
        raise ValueError(f"sharing must be one of {', '.join(SHARING)}, got {sharing!r}")
    if startup not in STARTUP:
        raise ValueError(f"startup must be one of {', '.join(STARTUP)}, got {startup!r}")
    flows = list(flows)
    routes: dict = {}
    by_step: dict[int, list[Flow]] = {}
    for f in flows:
        if not isinstance(f, Flow):
            raise ValueError(f"flows must be Flow records, got {type(f).__name__}")
        check_count("step", f.step, minimum=0)
        check_count("nbytes", f.nbytes, minimum=0)
        if (f.src, f.dst) not in routes:
            routes[(f.src, f.dst)] = route(g, f.src, f.dst)
        by_step.setdefault(f.step, []).append(f)
    given = {} if paths is None else dict(paths)
    for f, nodes in given.items():
        nodes = tuple(nodes)
        if not nodes or nodes[0] != f.src or nodes[-1] != f.dst or any(not g.has_edge(u, v) for u, v in _edges(nodes)):
            raise ValueError(f"paths[{f!r}] must run from its src to its dst along links of the graph, got {nodes!r}")
        given[f] = nodes
    fixed = dict(routes)                     # route()'s paths time the flows given none
    routes.update({(f.src, f.dst): nodes for f, nodes in given.items()})
    steps = []
    totals: dict = {}
    blame: dict = {}
    for s in sorted(by_step):
        step_flows = by_step[s]
        paths = [_edges(given.get(f, fixed[(f.src, f.dst)])) for f in step_flows]
        link_bytes: dict = {}
        link_flows: dict = {}
        for f, path in zip(step_flows, paths):
            for e in path:
                link_bytes[e] = link_bytes.get(e, 0) + f.nbytes
                if f.nbytes > 0:
                    link_flows[e] = link_flows.get(e, 0) + 1
        if sharing == "equal":
            timed = _equal_share_times(g, step_flows, paths, link_flows)
        else:
            timed = _max_min_times(g, step_flows, paths)
        worst, worst_flow, worst_edge = 0.0, None, None
        for f, path, (transfer, held) in zip(step_flows, paths, timed):
            if not path:
                continue
            t = _startup(g, path, startup) + transfer
            if worst_flow is None or t > worst:
                tight = min(held, key=lambda e: (-held[e], _edge_key(e))) if held else None
                worst, worst_flow, worst_edge = t, f, tight
        for e, b in link_bytes.items():
            totals[e] = totals.get(e, 0) + b
        if worst_edge is not None:
            blame[worst_edge] = blame.get(worst_edge, 0.0) + worst
        steps.append(StepLoad(s, worst, link_bytes, link_flows, worst_edge, worst_flow))
    bottleneck = None
    if blame:
        bottleneck = min(blame, key=lambda e: (-blame[e], _key(e[0]), _key(e[1])))
    capacity = {e: float(g.edges[e]["bandwidth"]) for e in totals}
    return Mapped(tuple(steps), float(sum(st.time for st in steps)), totals, bottleneck, routes, sharing, startup,
                  capacity)


def map_trace(g: nx.Graph, trace: Trace, placement: Sequence[Node] | Mapping[int, Node] | None = None,
              sharing: str = "max-min", startup: str = "message") -> Mapped:
    """Map a collective's :class:`~commlib.collectives.trace.Trace` onto topology ``g``.

    ``placement[i]`` is the node rank ``i`` runs on; by default the node
    whose ``rank`` attribute is ``i``. Messages become :class:`Flow` s and
    are timed by :func:`map_flows` with ``sharing`` (``"max-min"`` or
    ``"equal"``) and ``startup`` (``"message"`` or ``"links"``).
    """
    if not isinstance(trace, Trace):
        raise ValueError(f"trace must be a commlib.collectives.trace.Trace, got {type(trace).__name__}")
    if placement is None:
        nodes = rank_nodes(g)
    elif isinstance(placement, Mapping):
        nodes = dict(placement)
    else:
        nodes = dict(enumerate(placement))
    missing = [r for r in range(trace.n) if r not in nodes]
    if missing:
        raise ValueError(f"placement must give a node for every rank 0..{trace.n - 1}; "
                         f"rank {missing[0]} has none")
    for r in range(trace.n):
        if nodes[r] not in g:
            raise ValueError(f"placement puts rank {r} on {nodes[r]!r}, which is not a node of the topology")
    if len({nodes[r] for r in range(trace.n)}) != trace.n:
        raise ValueError("placement must put every rank on a different node")
    flows = [Flow(m.step, nodes[m.src], nodes[m.dst], m.nbytes, m.phase) for m in trace.messages]
    return map_flows(g, flows, sharing, startup)


def map_concurrent(g: nx.Graph, runs: Sequence[tuple[Trace, Sequence[Node] | Mapping[int, Node]]],
                   sharing: str = "max-min", startup: str = "message") -> Mapped:
    """Several collectives at once: ``runs`` is ``[(trace, placement), ...]``, their step ``s`` all together.

    How a library drives several rings (NCCL's *channels*), each over its own ranks' order, or rings in
    every row of a grid at the same time. Each run is placed as :func:`map_trace` places one.

    >>> t = allreduce_trace(4, 4096)
    >>> g = ring(4, "eth_10g")
    >>> map_concurrent(g, [(t, [0, 1, 2, 3]), (t, [3, 2, 1, 0])]).max_flows      # the two directions
    1
    """
    flows: list[Flow] = []
    for trace, where in runs:
        if not isinstance(trace, Trace):
            raise ValueError(f"each run must be (Trace, placement), got {type(trace).__name__}")
        nodes = dict(where) if isinstance(where, Mapping) else dict(enumerate(where))
        missing = [r for r in range(trace.n) if r not in nodes]
        if missing:
            raise ValueError(f"placement must give a node for every rank 0..{trace.n - 1}; rank {missing[0]} has none")
        if len({nodes[r] for r in range(trace.n)}) != trace.n:
            raise ValueError("placement must put every rank on a different node")
        flows.extend(Flow(m.step, nodes[m.src], nodes[m.dst], m.nbytes, m.phase) for m in trace.messages)
    return map_flows(g, flows, sharing, startup)


def allreduce_trace(n: int, nbytes: int, algorithm: str = "ring", **kwargs) -> Trace:
    """The trace of a real all-reduce over ``n`` ranks (:func:`commlib.collectives.simulate.allreduce`), scaled
    to about ``nbytes`` per rank.

    The collective runs on fp32 arrays of ``64 n`` elements, which split
    evenly into every algorithm's pieces, and its messages are scaled by
    the whole factor that brings the buffer nearest to ``nbytes``
    (:func:`scaled`). ``kwargs`` go to the algorithm (e.g. ``hosts=2`` for
    ``"hierarchical"``).

    >>> t = allreduce_trace(4, 4096)
    >>> t.steps, int(t.bytes_sent[0])           # 2(n-1) steps, 2(n-1)/n x 4096 B per rank
    (6, 6144)
    """
    n = check_count("n", n, minimum=1)
    nbytes = check_count("nbytes", nbytes, minimum=1)
    length = 64 * n
    arrays = [np.ones(length, dtype=np.float32) for _ in range(n)]
    trace = collectives.allreduce(arrays, algorithm, **kwargs)[1]
    return scaled(trace, max(1, round(nbytes / (4 * length))))


def mirrored(trace: Trace) -> Trace:
    """The same schedule run on both halves of the buffer at once, the second half with ranks relabelled
    ``i -> n-1-i``.

    Relabelling ranks keeps a collective correct, so the result is still the
    same collective on the whole buffer. For a ring in rank order the second
    copy runs the other way round the ring: both directions of every
    full-duplex link now carry half the data.

    >>> t = Trace(n=3); t.add(0, 0, 1, 10)
    >>> [(m.src, m.dst, m.nbytes) for m in mirrored(t).messages]
    [(0, 1, 5), (2, 1, 5)]
    """
    if not isinstance(trace, Trace):
        raise ValueError(f"trace must be a commlib.collectives.trace.Trace, got {type(trace).__name__}")
    out = Trace(n=trace.n, algorithm=(trace.algorithm + " (both ways)").strip())
    last = trace.n - 1
    for m in trace.messages:
        a = m.nbytes // 2
        out.add(m.step, m.src, m.dst, a, m.chunk, m.phase, m.reduced // 2)
        out.add(m.step, last - m.src, last - m.dst, m.nbytes - a, m.chunk, m.phase, m.reduced - m.reduced // 2)
    return out


def scaled(trace: Trace, factor: int) -> Trace:
    """The same schedule with every message ``factor`` times larger (a whole number).

    Times on links are linear in bytes, so a collective run on small arrays
    and scaled up stands for the same collective on large ones -- exactly,
    when the small arrays split evenly into the algorithm's pieces.

    >>> t = Trace(n=2); t.add(0, 0, 1, 12, reduced=12)
    >>> [(m.nbytes, m.reduced) for m in scaled(t, 1000).messages]
    [(12000, 12000)]
    """
    if not isinstance(trace, Trace):
        raise ValueError(f"trace must be a commlib.collectives.trace.Trace, got {type(trace).__name__}")
    factor = check_count("factor", factor)
    out = Trace(n=trace.n, algorithm=trace.algorithm)
    for m in trace.messages:
        out.add(m.step, m.src, m.dst, m.nbytes * factor, m.chunk, m.phase, m.reduced * factor)
    return out


def staged_exchange(g: nx.Graph, gpu: Node, nbytes: int, host: int = 0, peer: int = 1,
                    socket: int = 0) -> list[Flow]:
    """The flows of one host exchanging ``nbytes`` with another through CPU memory (no GPUDirect RDMA).

    The host's aggregated gradient is copied from ``gpu`` into the memory of
    CPU socket ``socket``, sent from there to the peer host's CPU memory
    through both NICs, while the peer's data comes back the same way and is
    copied to ``gpu``. A pipelined push/pull keeps all four transfers going
    at once, so they form one step. Which GPU does the copy decides whether
    the copy shares the PCIe link next to the NIC (BytePS, sec. 4.2.2).

    >>> c = cluster(2, gpus_per_host=8)
    >>> round(map_flows(c, staged_exchange(c, "h0.gpu0", 10**9)).time, 4)   # shares pcie0-cpu0
    0.127
    >>> round(map_flows(c, staged_exchange(c, "h0.gpu2", 10**9)).time, 4)   # NIC runs at line rate
    0.08
    """
    nbytes = check_count("nbytes", nbytes, minimum=0)
    cpu, peer_cpu = f"h{host}.cpu{socket}", f"h{peer}.cpu{socket}"
    for v in (gpu, cpu, peer_cpu):
        if v not in g:
            raise ValueError(f"{v!r} is not a node of the topology")
    return [
        Flow(0, gpu, cpu, nbytes, "GPU to CPU memory"),
        Flow(0, cpu, peer_cpu, nbytes, "send to peer host"),
        Flow(0, peer_cpu, cpu, nbytes, "receive from peer host"),
        Flow(0, cpu, gpu, nbytes, "CPU memory to GPU"),
    ]


def rdma_exchange(g: nx.Graph, gpu: Node, nbytes: int, host: int = 0, peer: int = 1) -> list[Flow]:
    """The flows of one host exchanging ``nbytes`` with another by GPUDirect RDMA: the network cards read
    and write GPU memory directly, so the data goes from ``gpu`` to the same GPU of host ``peer`` and
    back, routed through the cards with no stop in CPU memory (NVIDIA's GPUDirect RDMA guide). The card
    reaches GPU memory over PCIe only: map these flows on a cluster built with ``nvlink=None``, or the
    route may hop through another GPU's NVLink.

    >>> c = cluster(2, gpus_per_host=8, nvlink=None)
    >>> [f.dst for f in rdma_exchange(c, "h0.gpu2", 10**9)]
    ['h1.gpu2', 'h0.gpu2']
    >>> route(c, "h0.gpu2", "h1.gpu2")[:5]        # across PCIe switches: through CPU 0
    ('h0.gpu2', 'h0.pcie1', 'h0.cpu0', 'h0.pcie0', 'h0.nic')
    """
    nbytes = check_count("nbytes", nbytes, minimum=0)
    prefix = f"h{host}."
    if not isinstance(gpu, str) or not gpu.startswith(prefix):
        raise ValueError(f"gpu must be a GPU node of host {host} (e.g. {prefix}gpu0), got {gpu!r}")
    other = f"h{peer}." + gpu[len(prefix):]
    for v in (gpu, other):
        if v not in g:
            raise ValueError(f"{v!r} is not a node of the topology")
    return [Flow(0, gpu, other, nbytes, "send to peer GPU"), Flow(0, other, gpu, nbytes, "receive from peer GPU")]


def ps_star(workers: int, nbytes: int, servers: int = 1, link: str = "eth_10g", bandwidth: float | None = None,
            latency: float | None = None, seed: int = 0) -> tuple[nx.Graph, Mapped]:
    r"""One parameter-server round (:func:`commlib.parameter_servers.simulate.ps_round`) mapped onto a switch star.

    ``workers`` = n worker machines and ``servers`` = k server machines each
    hang off one switch on their own link (:func:`star` with
    ``hub="switch"``): worker i on spoke i, server j on spoke n + j, every
    link of preset ``link`` (bandwidth B per direction, latency alpha). The
    round runs on real fp32 arrays drawn from ``default_rng(seed)``, one
    parameter per shard, and its trace is scaled so that every worker's
    gradient is M = ``nbytes`` bytes (a multiple of 4k, so the k shards are
    equal and whole).

    The trace has two steps, and :func:`map_trace` runs them one after the
    other: the push (every worker sends M/k to each server), then the pull.
    In each step a server's link carries n flows of M/k in one direction and
    a worker's link k flows, so every flow crosses two links and gets
    :math:`\min(B/n, B/k)`:

    .. math:: T = 2\left(\alpha + \max\left(\frac{M}{B}, \frac{nM}{kB}\right)\right),

    :func:`commlib.cost.ps_time` with ``pipelined=False``: each transfer pays
    its start-up alpha once, across both links (:func:`map_flows`). With one server its link carries nM in
    each direction, 2nM in all: the hot spot of the parameter-server chapter.

    >>> g, run = ps_star(4, 10**6, link="eth_10g", latency=0.0)
    >>> run.load(4, "hub") == run.load("hub", 4) == 4 * 10**6     # the server's link, each way
    True
    >>> round(run.time * 1e3, 3)                                   # 2 x 4 MB at 1.25 GB/s
    6.4
    """
    n = check_count("workers", workers, minimum=1)
    k = check_count("servers", servers, minimum=1)
    nbytes = check_count("nbytes", nbytes, minimum=4 * k)
    if nbytes % (4 * k):
        raise ValueError(f"nbytes must be a multiple of 4 x servers = {4 * k} (equal fp32 shards), got {nbytes}")
    rng = np.random.default_rng(seed)
    grads = rng.standard_normal((n, k)).astype(np.float32)
    round_ = ps.ps_round(np.zeros(k, dtype=np.float32), list(grads), servers=k, record=False)
    trace = scaled(round_.trace, nbytes // (4 * k))
    g = star(n + k, link, hub="switch", bandwidth=bandwidth, latency=latency)
    g.graph["name"] = f"parameter server on a star: {n} workers, {k} server{'s' if k > 1 else ''}"
    for j in range(n, n + k):
        g.nodes[j]["kind"] = "server"
    return g, map_trace(g, trace)


def links_of(g: nx.Graph) -> list[tuple[Node, Node, dict]]:
    """Every link once, ``(u, v, attributes)``, in a deterministic order."""
    out = []
    for u, v, d in g.edges(data=True):
        a, b = sorted((u, v), key=_key)
        out.append((a, b, d))
    return sorted(out, key=lambda t: (_key(t[0]), _key(t[1])))


# ---------------------------------------------------------------------------
# experiments the topology chapter draws its comparisons from (each with its control)


def duplex_rings(n: int = 8, nbytes: int = 64 * 10**6, link: str = "pcie3_x16") -> dict[str, float]:
    """A ring all-reduce, and the same with a second ring the other way (:func:`mirrored`), on two topologies.

    ``"ring of links"``: :func:`ring`, each rank has two full-duplex links
    and the second ring uses their idle directions. ``"switch"``: :func:`star`
    with ``hub="switch"``, each rank has a single link to a switch, whose two
    directions one ring already keeps busy. Seconds, keys
    ``(topology, rings)``, and the ratio one ring / two rings per topology.

    >>> r = duplex_rings(4, 4 * 10**6, "eth_10g")
    >>> round(r["ring of links", "speed-up"], 1), round(r["switch", "speed-up"], 1)   # start-ups stay
    (2.0, 1.0)
    """
    trace = allreduce_trace(n, nbytes)
    both = mirrored(trace)
    out: dict = {}
    for name, g in (("ring of links", ring(n, link)), ("switch", star(n, link, hub="switch"))):
        out[name, 1] = map_trace(g, trace).time
        out[name, 2] = map_trace(g, both).time
        out[name, "speed-up"] = out[name, 1] / out[name, 2]
    return out


def sharing_comparison(nbytes: int = 64 * 2**20, link: str = "nvlink2", workers: int = 4, cpu_machines: int = 2,
                       network: str = "eth_100g", ps_bytes: int = 100 * 10**6) -> dict[str, float]:
    """Equal sharing against max-min fair sharing (seconds), on two workloads.

    * ``"mesh"``: a ring all-reduce (and one both ways) on a 4 x 4 mesh, ranks
      in row order, so the hops that end a row cross several links and
      collide. Every flow of a step carries the same bytes, so the two models
      agree: the busiest link's equal share is everybody's max-min rate.
    * ``"byteps"``: one BytePS round (:func:`commlib.parameter_servers.simulate.byteps_round`,
      ``workers`` GPU machines, ``cpu_machines`` CPU machines) on a switch
      star of ``network`` links, no latency. Its shards differ in size, so
      small flows finish early and max-min hands their share on. ``("byteps", "link bound")``: what the links
      allow for that round, push then pull, each step's busiest link direction carrying that step's bytes.

    >>> r = sharing_comparison(nbytes=16 * 2**20, ps_bytes=10**6)
    >>> math.isclose(r["mesh both ways", "equal"], r["mesh both ways", "max-min"], rel_tol=1e-12)
    True
    >>> round(r["byteps", "equal"] / r["byteps", "max-min"], 2)
    1.15
    >>> r["byteps", "link bound"] < r["byteps", "max-min"]    # max-min does not reach what the links allow
    True
    """
    order = list(range(16))
    trace = allreduce_trace(16, nbytes)
    grid = mesh2d(4, 4, link)
    out: dict = {}
    for name, t in (("mesh one way", trace), ("mesh both ways", mirrored(trace))):
        for sharing in SHARING:
            out[name, sharing] = map_trace(grid, t, order, sharing=sharing).time
    length = 1000 * (workers + cpu_machines)
    arrays = [np.ones(length, dtype=np.float32) for _ in range(workers)]
    round_ = ps.byteps_round(np.zeros(length, dtype=np.float32), arrays, cpu_machines=cpu_machines, record=False)
    t = scaled(round_.trace, max(1, round(ps_bytes / (4 * length))))
    g = star(workers + cpu_machines, network, hub="switch", latency=0.0)
    for sharing in SHARING:
        out["byteps", sharing] = map_trace(g, t, sharing=sharing).time
    # The trace runs the whole push, then the whole pull: each step ends no sooner than its busiest link direction
    # has carried that step's bytes, a bound no sharing can beat (the link bound).
    steps = map_trace(g, t).steps
    out["byteps", "link bound"] = sum(max((b / g.edges[e]["bandwidth"] for e, b in s.link_bytes.items()), default=0.0)
                                        for s in steps)
    return out




def hamiltonian_rings(links: Mapping[tuple[int, int], int]) -> list[tuple[int, ...]]:
    """Every ring through all ranks of the wiring ``links`` (``{(a, b): links between them}``) whose hops are all linked.

    Each ring is listed once: starting at rank 0, its second rank below its last (the same ring the
    other way round is the same cycle).

    >>> hamiltonian_rings({(0, 1): 1, (1, 2): 1, (2, 3): 1, (0, 3): 1, (0, 2): 1})
    [(0, 1, 2, 3)]
    >>> len(hamiltonian_rings(DGX1_NVLINKS)) > 3
    True
    """
    ranks = sorted({r for pair in links for r in pair})
    if ranks != list(range(len(ranks))) or len(ranks) < 3:
        raise ValueError(f"links must join ranks 0..n-1 with n >= 3, got ranks {ranks}")
    near: dict[int, set[int]] = {r: set() for r in ranks}
    for (a, b), k in links.items():
        if k > 0:
            near[a].add(b)
            near[b].add(a)
    out: list[tuple[int, ...]] = []

    def grow(path: list[int], seen: set[int]) -> None:
        if len(path) == len(ranks):
            if 0 in near[path[-1]] and path[1] < path[-1]:
                out.append(tuple(path))
            return
        for r in sorted(near[path[-1]] - seen):
            path.append(r)
            seen.add(r)
            grow(path, seen)
            path.pop()
            seen.discard(r)

    grow([0], {0})
    return out


def _hops(ring_: Sequence[int]) -> list[tuple[int, int]]:
    return [(min(a, b), max(a, b)) for a, b in zip(ring_, tuple(ring_[1:]) + (ring_[0],))]


def widest_ring(links: Mapping[tuple[int, int], int]) -> tuple[int, ...]:
    """The ring through all ranks whose narrowest hop has the most links: the best a single ring can do.

    >>> widest_ring(DGX1_NVLINKS), min(DGX1_NVLINKS[h] for h in _hops(widest_ring(DGX1_NVLINKS)))
    ((0, 3, 2, 1, 5, 6, 7, 4), 2)
    """
    rings = hamiltonian_rings(links)
    if not rings:
        raise ValueError("links admit no ring through every rank")
    return max(rings, key=lambda r: min(links[h] for h in _hops(r)))


def ring_cover(links: Mapping[tuple[int, int], int]) -> tuple[tuple[int, ...], ...]:
    """Rings through all ranks that together use every link of ``links`` exactly once (the first found).

    A pair with ``k`` links lies on ``k`` of the rings, so each ring has one link of its own on every hop;
    run each both ways and every link carries a ring in each direction. Raises ``ValueError`` where
    the wiring admits no such set (a rank with an odd number of links, or no decomposition).

    >>> ring_cover({(0, 1): 2, (1, 2): 2, (0, 2): 2})
    ((0, 1, 2), (0, 1, 2))
    >>> len(ring_cover(DGX1_NVLINKS))                  # six links per GPU, two per ring: three rings
    3
    """
    rings = hamiltonian_rings(links)
    left = {(min(a, b), max(a, b)): k for (a, b), k in links.items() if k > 0}
    chosen: list[tuple[int, ...]] = []

    def place(start: int) -> bool:
        if not any(left.values()):
            return True
        for i in range(start, len(rings)):
            hops = _hops(rings[i])
            if all(left[h] > 0 for h in hops):
                for h in hops:
                    left[h] -= 1
                chosen.append(rings[i])
                if place(i):
                    return True
                chosen.pop()
                for h in hops:
                    left[h] += 1
        return False

    if not rings or not place(0):
        raise ValueError("links admit no set of rings through every rank that uses each link once")
    return tuple(chosen)


#: The best single ring through the hybrid cube-mesh (:data:`DGX1_NVLINKS`), found by :func:`widest_ring`:
#: every hop a pair of GPUs joined by two NVLinks.
CUBE_MESH_RING: tuple[int, ...] = widest_ring(DGX1_NVLINKS)

#: Three rings through the hybrid cube-mesh that together use every NVLink of :data:`DGX1_NVLINKS` once
#: (a pair with two links lies on two of them), found by :func:`ring_cover`: run each both ways on a sixth
#: of the buffer and all six links of every GPU carry a ring in each direction, as a library running
#: several rings at once (NCCL's channels) does.
CUBE_MESH_CHANNELS: tuple[tuple[int, ...], ...] = ring_cover(DGX1_NVLINKS)


def intra_host_reduction(nbytes: int = 10**9) -> dict[str, float]:
    """Seconds for an all-reduce of ``nbytes`` among the 8 GPUs of one V100 server, on two NVLink models.

    ``"switch"``: every GPU's six NVLink 2.0 links lumped into one link to a
    switch (150 GB/s per direction); ``"cube mesh"``: the hybrid cube-mesh
    of :data:`DGX1_NVLINKS`, ranks in :data:`CUBE_MESH_RING` order (the widest ring). Each
    with one ring (``1``) and with a second ring the other way (``2``);
    On the cube-mesh also with six rings (``6``), each of :data:`CUBE_MESH_CHANNELS` both ways on a sixth
    of the buffer, which keeps every link busy in both directions.
    ``"exchange"`` is the host's staged exchange of the same bytes with a
    peer host through the NIC (:func:`staged_exchange`, GPU 2 copying).

    >>> r = intra_host_reduction(10**8)
    >>> r["cube mesh", 1] > r["cube mesh", 2] > r["cube mesh", 6] and r["switch", 1] == r["switch", 2]
    True
    >>> abs(r["cube mesh", 6] / r["switch", 1] - 1) < 0.02      # six rings: the lumped link's time, up to start-ups
    True
    """
    trace = allreduce_trace(8, nbytes)
    place = [f"h0.gpu{j}" for j in CUBE_MESH_RING]
    out: dict = {}
    for name, layout in (("switch", "switch"), ("cube mesh", "cube_mesh")):
        m = machine(nvlink_layout=layout, nic=None)
        out[name, 1] = map_trace(m, trace, place).time
        out[name, 2] = map_trace(m, mirrored(trace), place).time
    sixth = allreduce_trace(8, max(1, nbytes // 6))
    rings = [[f"h0.gpu{j}" for j in ring_] for ring_ in CUBE_MESH_CHANNELS]
    out["cube mesh", 6] = map_concurrent(machine(nvlink_layout="cube_mesh", nic=None),
                                         [(sixth, r) for r in rings] + [(sixth, r[::-1]) for r in rings]).time
    c = cluster(2, gpus_per_host=8, nvlink_layout="cube_mesh")
    out["exchange"] = map_flows(c, staged_exchange(c, "h0.gpu2", nbytes)).time
    return out


def placed(g: nx.Graph, placement: Sequence[Node]) -> nx.Graph:
    """A copy of ``g`` whose rank ``i`` runs on node ``placement[i]`` (the nodes' ``rank`` attributes moved).

    >>> g = placed(tree(4, 2), [0, 2, 1, 3]); [g.nodes[v]["rank"] for v in range(4)]
    [0, 2, 1, 3]
    """
    nodes = list(placement)
    ranked = rank_nodes(g)
    if sorted(map(_key, nodes)) != sorted(map(_key, ranked.values())):
        raise ValueError(f"placement must put the ranks 0..{len(ranked) - 1} on the nodes that hold ranks, "
                         f"each on its own; got {nodes}")
    out = g.copy()
    for rank, v in enumerate(nodes):
        out.nodes[v]["rank"] = rank
    return out


def gallery_runs(n: int = 8, nbytes: int = 8 * 10**6, link: str = "eth_10g",
                 tree_placement: Sequence[int] | None = None) -> list[tuple[nx.Graph, Mapped, str]]:
    """Four topologies of ``n`` ranks carrying one all-reduce each: ``[(graph, mapped run, what), ...]``.

    A ring all-reduce on a ring and on a switch star, ranks in order; halving-doubling on a binary
    switch tree and on a fully connected graph. On the tree rank ``i`` sits on leaf
    ``tree_placement[i]`` (default: leaf ``i``); ``what`` names the ranks on its leaves, left to right.
    On the ring, the star and the fully connected graph the order shown is as good as any: a ring in
    order round a ring of links uses one link a hop, and a star or a fully connected graph gives every
    pair of ranks the same path.

    >>> [(what.splitlines()[0], run.max_flows) for _, run, what in gallery_runs(4, 4 * 10**5)][2:]
    [('switch tree, halving-doubling', 2), ('fully connected, halving-doubling', 1)]
    """
    ring_trace = allreduce_trace(n, nbytes, "ring")
    hd = allreduce_trace(n, nbytes, "halving_doubling")
    leaves = list(range(n)) if tree_placement is None else list(tree_placement)
    t = placed(tree(n, 2, link), leaves)
    on_leaves = sorted(range(n), key=lambda r: leaves[r])
    out = []
    for g, trace, what in ((ring(n, link), ring_trace, "ring, ring all-reduce\nranks in order round the ring"),
                           (star(n, link, hub="switch"), ring_trace, "switch star, ring all-reduce\nranks in order"),
                           (t, hd, "switch tree, halving-doubling\nleaves hold ranks "
                                   + " ".join(map(str, on_leaves))),
                           (fully_connected(n, link), hd, "fully connected, halving-doubling\nevery pair linked")):
        out.append((g, map_trace(g, trace), what))
    return out


def ring_check(ns: Sequence[int] = (2, 4, 8, 16), link: str = "eth_100g", nbytes: int = 16 * 2**20) -> list[dict]:
    """Ring all-reduce traces mapped onto ring topologies, next to :func:`commlib.cost.allreduce_time`.

    One dict per ``n``: ``n``, ``mapped`` and ``formula`` (seconds),
    ``max_flows``, and ``link`` and ``nbytes`` as given.

    >>> row = ring_check((4,), "eth_10g", 1_024_000)[0]      # a whole number of the trace's 1024 B
    >>> abs(row["mapped"] / row["formula"] - 1) < 1e-12, row["max_flows"]
    (True, 1)
    """
    item = hardware.link(link)
    rows = []
    for n in ns:
        mapped = map_trace(ring(n, link), allreduce_trace(n, nbytes, "ring"))
        formula = cost.allreduce_time(nbytes, n, item.bandwidth, item.latency)
        rows.append({"n": n, "mapped": mapped.time, "formula": formula, "max_flows": mapped.max_flows,
                     "link": link, "nbytes": nbytes})
    return rows


def busiest_link(mapped: Mapped) -> tuple[Edge | None, float]:
    """The link direction whose bytes over the whole run take longest at its bandwidth, and those seconds.

    No overlap of the run's flows can finish sooner: every byte on that direction must cross it.

    >>> e, t = busiest_link(hierarchy_runs(2, 4, 2**20)["ring"]); t > 0
    True
    """
    best: tuple[Edge | None, float] = (None, 0.0)
    for e in sorted(mapped.link_bytes, key=_edge_key):
        t = mapped.link_bytes[e] / mapped.capacity[e] if e in mapped.capacity else 0.0
        if t > best[1]:
            best = (e, t)
    return best


def pipelined_bound(mapped: Mapped) -> float:
    """A lower bound on a pipelined run of ``mapped``'s phases: the larger of its longest phase (phases throttled by
    the same link counted together) and its busiest link's whole-run bytes over that link's bandwidth
    (:func:`busiest_link`). :func:`map_trace` runs a trace's steps one after another, so a collective made of phases
    (a hierarchical all-reduce: reduce-scatter inside the hosts, all-reduce across them, all-gather inside them) pays
    their sum. A pipelined implementation streams the buffer in pieces through the phases, so phases on different
    links overlap; it still cannot beat its longest phase, nor carry a link's bytes of every phase faster than that
    link's bandwidth (pipeline fill and the extra start-ups of more, smaller pieces left out). A phase is the steps
    whose slowest flow carries one label; two phases whose steps are throttled by a common link direction share it
    and add.

    >>> r = hierarchy_runs(2, 4, 2**20)
    >>> import math       # a ring's two phases share every link: nothing to overlap
    >>> math.isclose(pipelined_bound(r["ring"]), r["ring"].time), pipelined_bound(r["hierarchical"]) < r["hierarchical"].time
    (True, True)
    """
    seconds: dict = {}
    links: dict = {}
    for s in mapped.steps:
        label = s.slowest.label if s.slowest is not None else ""
        seconds[label] = seconds.get(label, 0.0) + s.time
        links.setdefault(label, set()).update([s.bottleneck] if s.bottleneck is not None else [])
    groups: list[tuple[float, set]] = []
    for label in seconds:            # merge the phases that share a throttling link
        t, edges = seconds[label], set(links[label])
        for g in [g for g in groups if g[1] & edges]:
            groups.remove(g)
            t, edges = t + g[0], edges | g[1]
        groups.append((t, edges))
    return max(max((t for t, _ in groups), default=0.0), busiest_link(mapped)[1])


def hierarchy_runs(hosts: int = 2, per_host: int = 8, nbytes: int = 16 * 2**20,
                   network: str = "eth_100g", nvlink: str | None = "nvlink2") -> dict:
    """Flat ring and hierarchical all-reduce on :func:`cluster` ``(hosts, per_host, network, nvlink=nvlink)``, mapped;
    ``nvlink=None``: PCIe-only hosts, their GPUs talking through PCIe switches and CPUs.

    Returns ``{"ring": Mapped, "hierarchical": Mapped, "hosts": .., "per_host": .., "nbytes": ..,
    "network": ..}``.

    >>> r = hierarchy_runs(2, 4, 2**20)
    >>> r["ring"].load("h0.nic", "net") > r["hierarchical"].load("h0.nic", "net")
    True
    """
    c = cluster(hosts, gpus_per_host=per_host, network=network, nvlink=nvlink)
    out: dict = {"hosts": hosts, "per_host": per_host, "nbytes": nbytes, "network": network}
    for algorithm, kw in (("ring", {}), ("hierarchical", {"hosts": hosts})):
        out[algorithm] = map_trace(c, allreduce_trace(hosts * per_host, nbytes, algorithm, **kw))
    return out
