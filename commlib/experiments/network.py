r"""Chapter 6's comparisons as claims (:mod:`commlib.experiments.claims`), and the runs behind them.

Every run maps a collective onto links with the chapter's model (:mod:`commlib.network.topology`).
The model is deterministic: every seed of a claim gives the same time (the runs are cached), so a
claim with a margin needs one seed, and one that ends in a tie carries five to pass the registry's
check. Each contender gets its best on the same links: its best ring order (every ring whose hops are
single links but for the closing one, :func:`commlib.network.topology.ring_orders`, and the snake),
with one ring or a ring each way, and where they fit several rings at once: on a torus rings that
together use every link (:func:`covering_rings`), on the odd mesh pairs of different orders
(:func:`disjoint_pairs`). On the gallery's switch tree both all-reduces are tuned over every way to lay
halving-doubling's exchange distances on the tree's levels (:func:`level_placements`; a search of every
placement, :func:`tree_search`, finds none better). In the BytePS server each GPU's path to the card is
held to the rate BytePS measured for that kind of path (:func:`pcie_path`), and GPUDirect RDMA and
staging through CPU memory each get their best GPU.

>>> v = claims.run(claims.claim("ch06.mesh_vs_torus", small=True))
>>> v.winner, v.best["4 x 4 mesh"].config["rings"]
('4 x 4 torus', 'closed ring, both ways')
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import replace
from functools import cache

import networkx as nx

from .. import hardware
from ..network import placement, topology
from ..units import check_nonnegative
from . import claims

__all__ = ["SIZE", "SMALL_SIZE", "LINK_WORDS", "ONE_LINK_BANDWIDTH", "startup_ratio",
           "grid_graph", "ring_time", "rdma_exchange_time", "staged_exchange_time",
           "grid_facts", "row_orders", "TWO_D", "two_d_run", "odd_grid_orders", "pcie_path", "level_placements", "tree_placements",
           "tree_time", "tree_search", "HIER_HOSTS", "hierarchy_trend", "hierarchy_low",
           "hierarchy_closed", "hierarchy_dips", "hierarchy_break_even", "hierarchy_break_even_terms", "HIER_INSIDE", "hierarchy_pair",
           "grid_tree_bound", "mesh_equal_budget", "BUDGET_SIZES_MIB", "mesh_equal_budget_sweep",
           "tree_dbt_bound", "TREE_DBT_SMALL_CHUNKS", "tree_dbt_best"]

#: The chapter's message (bytes per rank) and the registry test's.
SIZE = 64 * 2**20
SMALL_SIZE = 4 * 2**20
LINK = "nvlink2"
#: The grids' links in words: each carries the nvlink2 preset's rate, a V100's six NVLink 2.0 links together.
LINK_WORDS = placement.nvlink2_grid_words()
#: Bytes/s per direction of one NVLink 2.0 link: the nvlink2 preset divided by a V100's six links
#: (:func:`commlib.network.placement.v100_nvlink_bandwidth`), its latency unchanged; no preset holds it.
ONE_LINK_BANDWIDTH = placement.v100_nvlink_bandwidth(1)
WAYS = ("one way", "both ways")
_DETERMINISTIC = (0,)            # one seed: the model has no noise
_TIE_SEEDS = (0, 1, 2, 3, 4)     # a tie carries five (the same run, cached)


def grid_graph(kind: str, rows: int, cols: int, used: int | None = None, bandwidth: float | None = None):
    """``"mesh"``, ``"torus"`` or ``"pod"`` (the first ``used`` nodes of a torus pod) of :data:`LINK` links,
    each at ``bandwidth`` bytes/s per direction where given (the preset's latency either way)."""
    if kind == "mesh":
        return topology.mesh2d(rows, cols, LINK, bandwidth)
    if kind == "torus":
        return topology.torus2d(rows, cols, LINK, bandwidth)
    if kind == "pod":
        return topology.torus_pod(rows, cols, used, LINK, bandwidth)
    raise ValueError(f"kind must be 'mesh', 'torus' or 'pod', got {kind!r}")


@cache
def ring_time(kind: str, rows: int, cols: int, order: tuple, ways: str, nbytes: int,
              used: int | None = None, bandwidth: float | None = None) -> float:
    """Seconds for a ring all-reduce of ``nbytes`` per rank through ``order`` (one way, or a ring each way
    on half the buffer each, :func:`commlib.network.topology.mirrored`), mapped onto the grid."""
    if ways not in WAYS:
        raise ValueError(f"ways must be one of {WAYS}, got {ways!r}")
    trace = topology.allreduce_trace(len(order), nbytes)
    if ways == "both ways":
        trace = topology.mirrored(trace)
    return topology.map_trace(grid_graph(kind, rows, cols, used, bandwidth), trace, list(order)).time


@cache
def ring_flows(kind: str, rows: int, cols: int, order: tuple, ways: str, nbytes: int,
               used: int | None = None) -> int:
    """The most flows sharing one link direction in that run (1: no link shared)."""
    trace = topology.allreduce_trace(len(order), nbytes)
    if ways == "both ways":
        trace = topology.mirrored(trace)
    return topology.map_trace(grid_graph(kind, rows, cols, used), trace, list(order)).max_flows


@cache
def rings_run(kind: str, rows: int, cols: int, rings: tuple, nbytes: int,
              bandwidth: float | None = None) -> topology.Mapped:
    """Several rings at once, each order in ``rings`` running one way on an equal share of the buffer
    (:func:`commlib.network.topology.map_concurrent`)."""
    share = topology.allreduce_trace(len(rings[0]), max(1, nbytes // len(rings)))
    return topology.map_concurrent(grid_graph(kind, rows, cols, None, bandwidth), [(share, list(r)) for r in rings])


def covering_rings(kind: str, rows: int, cols: int) -> tuple:
    """Rings through every node that together use each link of the grid once
    (:func:`commlib.network.topology.ring_cover`), each listed one way and the other: run on an equal
    share of the buffer each, they keep both directions of every link busy."""
    g = grid_graph(kind, rows, cols)
    cover = topology.ring_cover({(min(a, b), max(a, b)): 1 for a, b in g.edges()})
    return tuple(r for ring_ in cover for r in (ring_, ring_[::-1]))


def _directions(g, order: tuple) -> set:
    out = set()
    for a, b in zip(order, order[1:] + order[:1]):
        path = topology.route(g, a, b)
        out.update(zip(path, path[1:]))
    return out


def every_start_orders(kind: str, rows: int, cols: int) -> list[tuple]:
    """Every ring of single-link hops but the closing one, from every start node (each ring one way
    once: :func:`commlib.network.topology.ring_orders` lists only the paths from its first node)."""
    g = grid_graph(kind, rows, cols)
    nodes = sorted(g.nodes)
    return [o for s in nodes for o in topology.ring_orders(g, nodes=[s] + [v for v in nodes if v != s])]


def disjoint_pairs(kind: str, rows: int, cols: int) -> dict[str, tuple]:
    """Pairs of different ring orders (:func:`every_start_orders`), to run one each way on half the buffer,
    whose routed hops share no link direction. A pair that shares one puts two halves on it, as slow
    as one ring with the whole buffer, so only these can beat one ring both ways."""
    g = grid_graph(kind, rows, cols)
    orders = every_start_orders(kind, rows, cols)
    used = {o: _directions(g, o) for o in orders}
    out = {}
    for a, b in itertools.combinations(orders, 2):
        if not used[a] & used[b]:
            out[f"{'-'.join(map(str, a))} with {'-'.join(map(str, b))}"] = (a, b)
    return out


def _orders_4x4() -> dict[str, tuple]:
    return {"snake": tuple(topology.snake_order(4, 4)), "row order": tuple(range(16)),
            "closed ring": tuple(topology.grid_ring(4, 4))}


def pod_orders() -> dict[str, tuple]:
    """Ring orders for 10 nodes of a 4 x 4 pod: the snake's first ten, and the first closed ring found."""
    pod = grid_graph("pod", 4, 4, 10)
    return {"snake": tuple(topology.snake_order(4, 4)[:10]),
            "closed ring": topology.ring_orders(pod, closed_only=True, limit=1)[0]}


def odd_grid_orders(kind: str, rows: int = 3, cols: int = 3) -> dict[str, tuple]:
    """Every ring of single-link hops but the closing one on the grid (named by their order), and the snake.

    On a mesh from every start node (:func:`every_start_orders`); on a torus from node 0, since every
    node of a torus looks alike and a ring from any other node is one of these shifted."""
    out = {"snake": tuple(topology.snake_order(rows, cols))}
    found = every_start_orders(kind, rows, cols) if kind == "mesh" else topology.ring_orders(grid_graph(kind, rows, cols))
    for order in found:
        out.setdefault("-".join(map(str, order)), order)
    return out


def row_orders(cols: int = 4) -> dict[str, tuple]:
    """Every ring through row 0 of a grid (each cyclic order once, from node 0)."""
    out = {}
    for rest in itertools.permutations(range(1, cols)):
        if rest[0] < rest[-1]:            # one of each ring's two directions
            order = (0, *rest)
            out["-".join(map(str, order))] = order
    return out


def _ring_contender(name: str, kind: str, rows: int, cols: int, orders: dict, used: int | None = None,
                    ways=WAYS, uses: str = "") -> claims.Contender:
    def run(s: dict, seed: int) -> float:
        return 1e6 * ring_time(kind, rows, cols, orders[s["order"]], s["ways"], s["nbytes"], used)
    return claims.Contender(name, run, {"order": tuple(orders), "ways": tuple(ways)}, uses=uses)


def _set_contender(name: str, kind: str, rows: int, cols: int, orders: dict, sets: dict,
                   uses: str = "") -> claims.Contender:
    """A contender tuned over one ring order one way or both ways, and over the ring sets ``sets``
    (``{name: orders}``, each order one way on an equal share of the buffer). A shared ``"bandwidth"``
    (bytes/s per direction) sets every link's rate in place of the preset's."""
    single = {f"{o}, {w}": (o, w) for o in orders for w in WAYS}

    def run(s: dict, seed: int) -> float:
        bandwidth = s.get("bandwidth")
        if s["rings"] in single:
            order, ways = single[s["rings"]]
            return 1e6 * ring_time(kind, rows, cols, orders[order], ways, s["nbytes"], None, bandwidth)
        return 1e6 * rings_run(kind, rows, cols, sets[s["rings"]], s["nbytes"], bandwidth).time
    return claims.Contender(name, run, {"rings": (*single, *sets)}, uses=uses)


def ring_bound(kind: str, rows: int, cols: int, nbytes: int, bandwidth: float | None = None) -> float:
    r"""Seconds below which no set of ring all-reduces of ``nbytes`` per rank can finish on the grid,
    latency aside: each rank sends :math:`2\frac{n-1}{n}M` however the rings run, and the node with
    the fewest links :math:`d` sends it over :math:`d` link directions of bandwidth :math:`B`.

    >>> round(1e6 * ring_bound("mesh", 4, 4, SIZE), 1), round(1e6 * ring_bound("torus", 4, 4, SIZE), 1)
    (419.4, 209.7)
    """
    g = grid_graph(kind, rows, cols, None, bandwidth)
    n = g.number_of_nodes()
    degree = min(d for _, d in g.degree())
    bandwidth = min(d["bandwidth"] for *_, d in g.edges(data=True))
    return 2 * (n - 1) / n * nbytes / (degree * bandwidth)


def startup_ratio(nbytes: int, bandwidth: float | None = None) -> float:
    r""":math:`M/(\alpha B)`: the buffer ``nbytes`` over the bytes a grid link moves in one start-up (:data:`LINK`'s
    latency, at ``bandwidth`` or the preset's rate). The larger it is, the less the start-ups, the same on a
    mesh and a torus, weigh against the bandwidth terms the torus's extra links shorten.

    >>> round(startup_ratio(SMALL_SIZE)), round(startup_ratio(SMALL_SIZE, ONE_LINK_BANDWIDTH))
    (28, 168)
    """
    attrs = topology.link_attrs(LINK, bandwidth)
    return nbytes / (attrs["latency"] * attrs["bandwidth"])


def _us(v: claims.Verdict, name: str) -> float:
    return v.best[name].mean


def _set_name(config: dict) -> str:
    return config["rings"]


def _grid_claim(key: str, nbytes: int, bandwidth: float | None = None) -> claims.Claim:
    orders = _orders_4x4()
    cover = {"two rings covering every link, each both ways": covering_rings("torus", 4, 4)}
    links = LINK_WORDS if bandwidth is None else (
        f"links of {bandwidth / 1e9:g} GB/s per direction each (one NVLink 2.0 link: the nvlink2 preset divided by "
        f"a V100's {placement.V100_NVLINKS} links, its latency)")
    uses = links + "; the snake, row order or the closed ring, one ring or one each way"
    shared = {"nbytes": nbytes} if bandwidth is None else {"nbytes": nbytes, "bandwidth": bandwidth}
    on = "" if bandwidth is None else f", on links of {bandwidth / 1e9:g} GB/s per direction,"

    def wording(v: claims.Verdict) -> str:
        w, r = v.best[v.winner], v.best[v.runner_up]
        mesh = v.best["4 x 4 mesh"]
        bound = 1e6 * ring_bound("mesh", 4, 4, v.claim.shared["nbytes"], v.claim.shared.get("bandwidth"))
        return (f"with ring all-reduces on both grids, for {v.claim.shared['nbytes'] / 2**20:g} MiB per rank{on} the "
                f"{v.winner} is {r.mean / w.mean:.2f} times "
                f"faster, {w.mean:.1f} µs ({_set_name(w.config)}) "
                f"against {r.mean:.1f} µs ({_set_name(r.config)}); the mesh's time is {100 * (mesh.mean / bound - 1):.0f} % "
                f"above the {bound:.1f} µs bandwidth bound that no set of rings can beat on it (its corners have "
                f"{min(d for _, d in grid_graph('mesh', 4, 4).degree())} links each)")

    def headline(v: claims.Verdict) -> str:
        w, r = v.best[v.winner], v.best[v.runner_up]
        return (f"for {v.claim.shared['nbytes'] / 2**20:g} MiB per rank{on} the {v.winner.split()[-1]} is "
                f"{r.mean / w.mean:.1f} times faster")
    return claims.Claim(
        key, f"On a 4 x 4 grid of {links.split(' (')[0]}, for {nbytes / 2**20:g} MiB per rank, is a ring all-reduce "
             "faster on a torus than on a mesh, each with its best rings?",
        (_set_contender("4 x 4 mesh", "mesh", 4, 4, orders, {},
                        uses=uses + " (the closed ring both ways meets the mesh's bound, ring_bound, up to latency)"),
         _set_contender("4 x 4 torus", "torus", 4, 4, orders, cover,
                        uses=uses + "; or two rings that together use every link once (ring_cover), each both ways")),
        metric="µs", seeds=_DETERMINISTIC, shared=shared, wording=wording, headline=headline,
        chapter="06", source="commlib.network.topology.map_trace / map_concurrent", tie=1e-6)


@claims.register("ch06.mesh_vs_torus")
def _mesh_vs_torus(small: bool = False) -> claims.Claim:
    """The chapter's bandwidth-bound buffer, 64 MiB per rank (the registry's rerun: 4 MiB)."""
    return _grid_claim("ch06.mesh_vs_torus", SMALL_SIZE if small else SIZE)


@claims.register("ch06.mesh_vs_torus_small_buffer")
def _mesh_vs_torus_small(small: bool = False) -> claims.Claim:
    """The same grids for a sixteenth of the buffer, 4 MiB per rank (the registry's rerun: 1 MiB), where
    start-ups weigh more and the torus's extra links gain less."""
    return _grid_claim("ch06.mesh_vs_torus_small_buffer", SMALL_SIZE // 4 if small else SMALL_SIZE)


@claims.register("ch06.mesh_vs_torus_one_link")
def _mesh_vs_torus_one_link(small: bool = False) -> claims.Claim:
    """The small buffer, 4 MiB per rank, on grids whose links are one NVLink 2.0 link each, 25 GB/s per direction
    (:data:`ONE_LINK_BANDWIDTH`; the registry's rerun: 1 MiB): what decides the torus's gain is the buffer against
    the start-ups' worth of bytes, M / (alpha B), not M alone."""
    return _grid_claim("ch06.mesh_vs_torus_one_link", SMALL_SIZE // 4 if small else SMALL_SIZE, ONE_LINK_BANDWIDTH)


#: The 2-D all-reduces of ch-ring a grid may run in place of rings (ranks in row order, a row per grid row):
#: rows then columns one way (``"torus"``), the same on each half of the buffer the other way round too
#: (:func:`commlib.network.topology.mirrored`), and rows and columns both ways at once (``"torus_both_ways"``).
TWO_D = {"two-dimensional, one way": ("torus", False),
         "two-dimensional, each half one way": ("torus", True),
         "two-dimensional, rows and columns both ways": ("torus_both_ways", False)}


@cache
def two_d_run(kind: str, rows: int, cols: int, name: str, nbytes: int,
              bandwidth: float | None = None) -> topology.Mapped:
    """The 2-D all-reduce ``name`` of :data:`TWO_D` of ``nbytes`` per rank, mapped onto the grid, rank ``i`` on node ``i``;
    every link at ``bandwidth`` bytes/s per direction where given.

    On a torus every row and column is a ring of links; on a mesh it is a line, whose rings come back along it.

    >>> mesh, torus = (two_d_run(k, 4, 4, "two-dimensional, rows and columns both ways", SMALL_SIZE) for k in ("mesh", "torus"))
    >>> round(1e6 * mesh.time, 1), mesh.max_flows, round(1e6 * torus.time, 1), torus.max_flows
    (38.2, 2, 25.1, 1)
    """
    algorithm, mirror = TWO_D[name]
    trace = topology.allreduce_trace(rows * cols, nbytes, algorithm, grid=(rows, cols))
    if mirror:
        trace = topology.mirrored(trace)
    return topology.map_trace(grid_graph(kind, rows, cols, None, bandwidth), trace)


def mesh_equal_budget(nbytes: int = SIZE, rows: int = 4, cols: int = 4) -> dict:
    """The mesh against the torus with the same total link bandwidth, the torus's links at the preset rate, the
    mesh's budget shared out in two ways, and each grid at its best.

    Spread evenly, every mesh link is faster by the torus's link count over the mesh's, and the mesh runs its best of
    the rings and 2-D all-reduces of ``ch06.mesh_vs_torus_best_algorithm``. Put on the mesh's closed ring
    (:func:`commlib.network.topology.grid_ring`) alone, the other links left out, each of its ``rows * cols`` links gets
    the budget over that count, and the mesh runs that ring one way or one each way: every node then has the same
    bandwidth as a torus node, as GPUs with a fixed budget of links would have. The mesh's result is its better split.

    Returns ``{"mesh": s, "mesh_algorithm": .., "mesh_split": .., "splits": {split: {"time": s, "algorithm": ..,
    "bandwidth": bytes/s per direction, "links": ..}}, "torus": s, "torus_algorithm": .., "torus_rings": s (its two
    covering rings), "budget": bytes/s per direction over all links, "links_mesh": .., "links_torus": ..}``.

    >>> r = mesh_equal_budget(SMALL_SIZE); r["links_torus"] > r["links_mesh"], sorted(r["splits"])
    (True, ['on its closed ring', 'spread evenly'])
    >>> ring, even = r["splits"]["on its closed ring"], r["splits"]["spread evenly"]
    >>> round(ring["bandwidth"] / 1e9), round(even["bandwidth"] / 1e9), round(r["budget"] / 1e9)
    (300, 200, 4800)
    >>> round(1e9 * ring["time"]) == round(1e9 * r["torus_rings"])   # the same bandwidth per node as the torus: its rings
    True
    """
    mesh_g, torus_g = grid_graph("mesh", rows, cols), grid_graph("torus", rows, cols)
    base = min(d["bandwidth"] for *_, d in mesh_g.edges(data=True))
    links_mesh, links_torus = mesh_g.number_of_edges(), torus_g.number_of_edges()
    budget = base * links_torus
    bandwidth = budget / links_mesh

    def best(kind: str, bw: float | None, sets: dict) -> tuple[float, str]:
        runs = {f"{o}, {w}": ring_time(kind, rows, cols, order, w, nbytes, None, bw)
                for o, order in _orders_4x4().items() for w in WAYS}
        runs.update({k: rings_run(kind, rows, cols, v, nbytes, bw).time for k, v in sets.items()})
        runs.update({k: two_d_run(kind, rows, cols, k, nbytes, bw).time for k in TWO_D})
        name = min(runs, key=lambda k: (runs[k], k))
        return runs[name], name
    even_t, even_a = best("mesh", bandwidth, {})
    closed = topology.grid_ring(rows, cols)
    hops = {frozenset(p) for p in zip(closed, closed[1:] + closed[:1])}
    ring_g = mesh_g.copy()
    ring_g.remove_edges_from([(u, v) for u, v in mesh_g.edges() if frozenset((u, v)) not in hops])
    ring_bw = budget / ring_g.number_of_edges()
    for *_, d in ring_g.edges(data=True):
        d["bandwidth"] = ring_bw
    one = topology.allreduce_trace(rows * cols, nbytes)
    ring_runs = {f"closed ring, {w}": topology.map_trace(ring_g, t, closed).time
                 for w, t in (("one way", one), ("both ways", topology.mirrored(one)))}
    ring_a = min(ring_runs, key=lambda k: (ring_runs[k], k))
    splits = {"spread evenly": {"time": even_t, "algorithm": even_a, "bandwidth": bandwidth, "links": links_mesh},
              "on its closed ring": {"time": ring_runs[ring_a], "algorithm": ring_a, "bandwidth": ring_bw,
                                     "links": ring_g.number_of_edges()}}
    split = min(splits, key=lambda k: (splits[k]["time"], k))
    cover = {"two rings covering every link, each both ways": covering_rings("torus", rows, cols)}
    torus_t, torus_a = best("torus", None, cover)
    return {"mesh": splits[split]["time"], "mesh_algorithm": splits[split]["algorithm"], "mesh_split": split,
            "splits": splits, "torus": torus_t, "torus_algorithm": torus_a,
            "torus_rings": rings_run("torus", rows, cols, cover[next(iter(cover))], nbytes).time,
            "budget": budget, "links_mesh": links_mesh, "links_torus": links_torus}


#: The buffer sizes (MiB per rank) over which :func:`mesh_equal_budget_sweep` checks the equal-budget result.
BUDGET_SIZES_MIB = (1, 4, 16, 64, 256)


def mesh_equal_budget_sweep(mib=BUDGET_SIZES_MIB, rows: int = 4, cols: int = 4) -> dict:
    """:func:`mesh_equal_budget` over buffer sizes (``mib``, MiB per rank): whether the mesh on its closed ring ties
    the torus's two covering rings at every size, and how much faster the torus at its best is than the mesh at its
    best, size by size.

    Returns ``{"mib": sizes, "ring_ties": bool, "leads": {size: mesh time / torus time}, "lead_two_d": bool}``;
    ``lead_two_d`` says whether the torus's best at every size is a two-dimensional all-reduce (:data:`TWO_D`), which
    needs its wrap-around links.

    >>> r = mesh_equal_budget_sweep((1, 4))
    >>> r["ring_ties"], all(lead > 1 for lead in r["leads"].values()), r["lead_two_d"]
    (True, True, True)
    """
    runs = {m: mesh_equal_budget(m * 2**20, rows, cols) for m in mib}
    return {"mib": tuple(mib),
            "ring_ties": all(math.isclose(r["splits"]["on its closed ring"]["time"], r["torus_rings"], rel_tol=1e-9)
                             for r in runs.values()),
            "leads": {m: r["mesh"] / r["torus"] for m, r in runs.items()},
            "lead_two_d": all(r["torus_algorithm"] in TWO_D for r in runs.values())}

def _algorithm_contender(name: str, kind: str, orders: dict, sets: dict, uses: str = "") -> claims.Contender:
    """A 4 x 4 grid tuned over its rings (:func:`_set_contender`'s choices) and the 2-D all-reduces of :data:`TWO_D`."""
    rings = _set_contender(name, kind, 4, 4, orders, sets)

    def run(s: dict, seed: int) -> float:
        if s["algorithm"] in TWO_D:
            return 1e6 * two_d_run(kind, 4, 4, s["algorithm"], s["nbytes"]).time
        return rings.run({**s, "rings": s["algorithm"]}, seed)
    return claims.Contender(name, run, {"algorithm": (*rings.grid["rings"], *TWO_D)}, uses=uses)


def _best_algorithm_claim(key: str, nbytes: int) -> claims.Claim:
    orders = _orders_4x4()
    cover = {"two rings covering every link, each both ways": covering_rings("torus", 4, 4)}
    uses = (LINK_WORDS + "; the snake, row order or the closed ring, one ring or one each way; or a 2-D all-reduce "
            "(rows then columns one way, each half one way, or rows and columns both ways at once), ranks in row order")

    def wording(v: claims.Verdict) -> str:
        mib = f"{v.claim.shared['nbytes'] / 2**20:g} MiB per rank"
        mesh, torus = v.best["4 x 4 mesh"], v.best["4 x 4 torus"]
        if mesh.config == torus.config:
            each = (f"{torus.mean:.1f} µs on the torus against {mesh.mean:.1f} µs on the mesh, both with the "
                    + (f"two-dimensional all-reduce, {torus.config['algorithm'].split(', ', 1)[1]}"
                       if torus.config["algorithm"] in TWO_D else torus.config["algorithm"]))
        else:
            each = (f"{torus.mean:.1f} µs on the torus ({torus.config['algorithm']}) against {mesh.mean:.1f} µs on the "
                    f"mesh ({mesh.config['algorithm']})")
        if v.tied:
            return f"with each grid at its best all-reduce, rings or two-dimensional, and {mib}, the grids tie: {each}"
        w, r = v.best[v.winner], v.best[v.runner_up]
        return (f"with each grid at its best all-reduce, rings or two-dimensional, and {mib}, the "
                f"{v.winner.split()[-1]} is {r.mean / w.mean:.2f} times faster: {each}")

    def headline(v: claims.Verdict) -> str:
        mib = f"{v.claim.shared['nbytes'] / 2**20:g} MiB per rank"
        if v.tied:
            return f"for {mib} the grids tie"
        return (f"for {mib} the {v.winner.split()[-1]} is "
                f"{v.best[v.runner_up].mean / v.best[v.winner].mean:.1f} times faster")
    return claims.Claim(
        key, f"On a 4 x 4 grid of {LINK_WORDS.split(' (')[0]}, for {nbytes / 2**20:g} MiB per rank, is an all-reduce "
             "faster on a torus than on a mesh, each with its best algorithm: its best rings or a 2-D all-reduce?",
        (_algorithm_contender("4 x 4 mesh", "mesh", orders, {}, uses=uses + " (on the mesh each row and column is a "
                                                                             "line, whose rings come back along it)"),
         _algorithm_contender("4 x 4 torus", "torus", orders, cover,
                              uses=uses + "; or two rings that together use every link once (ring_cover), each both ways")),
        metric="µs", seeds=_DETERMINISTIC, shared={"nbytes": nbytes}, wording=wording, headline=headline,
        chapter="06", source="commlib.network.topology.map_trace / map_concurrent", tie=1e-6)


@claims.register("ch06.mesh_vs_torus_best_algorithm")
def _mesh_vs_torus_best_algorithm(small: bool = False) -> claims.Claim:
    """The two grids each at its best all-reduce, its best rings or a 2-D all-reduce, for 64 MiB per rank (the
    registry's rerun: 4 MiB)."""
    return _best_algorithm_claim("ch06.mesh_vs_torus_best_algorithm", SMALL_SIZE if small else SIZE)


@claims.register("ch06.mesh_vs_torus_best_algorithm_small_buffer")
def _mesh_vs_torus_best_algorithm_small(small: bool = False) -> claims.Claim:
    """The same for 4 MiB per rank (the registry's rerun: 1 MiB), where the 2-D all-reduces' fewer start-ups weigh
    more."""
    return _best_algorithm_claim("ch06.mesh_vs_torus_best_algorithm_small_buffer",
                                 SMALL_SIZE // 4 if small else SMALL_SIZE)


@claims.register("ch06.mesh_snake_vs_closed_ring")
def _mesh_snake(small: bool = False) -> claims.Claim:
    orders = _orders_4x4()

    def run_with(order):
        def run(s, seed):
            return 1e6 * ring_time("mesh", 4, 4, orders[order], s["ways"], s["nbytes"])
        return run

    def wording(v: claims.Verdict) -> str:
        snake, closed = v.best["snake order"], v.best["closed ring"]
        return (f"the snake order at its best ({snake.config['ways']}) takes {snake.mean:.1f} µs, "
                f"{snake.mean / closed.mean:.2f} times the closed ring's {closed.mean:.1f} µs")

    def headline(v: claims.Verdict) -> str:
        return f"the snake takes {v.best['snake order'].mean / v.best['closed ring'].mean:.2f} times the closed ring's time"
    return claims.Claim(
        "ch06.mesh_snake_vs_closed_ring", "On a 4 x 4 mesh, how much does the snake order's closing detour cost against a closed ring?",
        (claims.Contender("snake order", run_with("snake"), {"ways": WAYS}, uses=f"a 4 x 4 mesh of {LINK_WORDS}; one ring or one each way"),
         claims.Contender("closed ring", run_with("closed ring"), {"ways": WAYS}, uses="the same mesh and choices")),
        metric="µs", seeds=_DETERMINISTIC, shared={"nbytes": SMALL_SIZE if small else SIZE}, wording=wording,
        headline=headline, chapter="06", source="commlib.network.topology.map_trace")


@claims.register("ch06.pod_ring")
def _pod(small: bool = False) -> claims.Claim:
    orders = pod_orders()

    def run_with(order):
        def run(s, seed):
            return 1e6 * ring_time("pod", 4, 4, orders[order], s["ways"], s["nbytes"], 10)
        return run

    def wording(v: claims.Verdict) -> str:
        snake, closed = v.best["snake order"], v.best["closed ring"]
        return (f"the snake's first ten nodes take {snake.mean:.1f} µs at best; the closed ring "
                f"{'-'.join(map(str, orders['closed ring']))} takes {closed.mean:.1f} µs "
                f"({snake.mean / closed.mean:.2f} times faster)")

    def headline(v: claims.Verdict) -> str:
        return f"the closed ring is {v.best['snake order'].mean / v.best['closed ring'].mean:.2f} times faster than the snake"
    return claims.Claim(
        "ch06.pod_ring", "On 10 nodes of a 4 x 4 torus pod, does a closed ring avoid the snake's collisions?",
        (claims.Contender("snake order", run_with("snake"), {"ways": WAYS}, uses="the pod's links; one ring or one each way"),
         claims.Contender("closed ring", run_with("closed ring"), {"ways": WAYS}, uses="the same links and choices")),
        metric="µs", seeds=_DETERMINISTIC, shared={"nbytes": SMALL_SIZE if small else SIZE}, wording=wording,
        headline=headline, chapter="06", source="commlib.network.topology.map_trace")


@claims.register("ch06.odd_grid")
def _odd(small: bool = False) -> claims.Claim:
    uses = (LINK_WORDS + "; every ring of single-link hops but the closing one, or the snake, "
            "one ring or one each way")

    def wording(v: claims.Verdict) -> str:
        w, r = v.best[v.winner], v.best[v.runner_up]
        return (f"the {v.winner} is {r.mean / w.mean:.2f} times faster, {w.mean:.1f} µs ({_set_name(w.config)}) "
                f"against {r.mean:.1f} µs ({_set_name(r.config)})")

    def headline(v: claims.Verdict) -> str:
        return f"the {v.winner.split()[-1]} is {v.best[v.runner_up].mean / v.best[v.winner].mean:.2f} times faster"
    return claims.Claim(
        "ch06.odd_grid", "On a 3 x 3 grid (an odd number of nodes), is a ring all-reduce faster on the torus, each with its best rings?",
        (_set_contender("3 x 3 mesh", "mesh", 3, 3, odd_grid_orders("mesh"), disjoint_pairs("mesh", 3, 3),
                        uses=uses + " (from every start node); or two different orders one each way on half the "
                                    "buffer, every pair whose hops share no link direction"),
         _set_contender("3 x 3 torus", "torus", 3, 3, odd_grid_orders("torus"),
                        {"two rings covering every link, each both ways": covering_rings("torus", 3, 3)},
                        uses=uses + " (from node 0: every node of a torus looks alike); or two rings that together "
                                    "use every link once, each both ways")),
        metric="µs", seeds=_DETERMINISTIC, shared={"nbytes": SMALL_SIZE if small else SIZE}, wording=wording,
        headline=headline, chapter="06", source="commlib.network.topology.map_trace / map_concurrent")


def best_single_ring(kind: str, rows: int, cols: int, ways: str, nbytes: int = SIZE) -> tuple[str, float]:
    """The fastest single ring order of :func:`odd_grid_orders` run ``ways``: ``(its name, seconds)``."""
    orders = odd_grid_orders(kind, rows, cols)
    return min(((name, ring_time(kind, rows, cols, o, ways, nbytes)) for name, o in orders.items()),
               key=lambda x: x[1])


#: The pipeline chunk counts (q) and the layouts a pipelined chain along a row is tuned over.
CHAIN_CHUNKS = (2, 4, 8, 16, 32, 64, 128)


@cache
def chain_time(kind: str, layout: tuple, chunks: int, nbytes: int) -> float:
    """Seconds for the pipelined binary-tree all-reduce of 4 ranks (:mod:`commlib.collectives.algorithms.pipelined_tree`,
    ``chunks`` = q) laid on row 0 of a 4 x 4 grid, rank ``i`` on node ``layout[i]``. Its tree of four ranks
    is a chain (ranks 2-0-1-3), so laid along the row every tree edge is one link: the best all-reduce
    for a line, which needs only about M each way on each link rather than a ring's closing detour."""
    trace = topology.allreduce_trace(4, nbytes, "pipelined_tree", chunks=chunks)
    return topology.map_trace(grid_graph(kind, 4, 4), trace, list(layout)).time


@claims.register("ch06.row_rings")
def _rows(small: bool = False) -> claims.Claim:
    orders = row_orders(4)
    layouts = {"-".join(map(str, p)): p for p in itertools.permutations(range(4))}
    uses = "row 0 of the 4 x 4 grid, " + LINK_WORDS + "; every ring order of its 4 nodes; one ring or one each way"

    def chain_run(s: dict, seed: int) -> float:
        return 1e6 * chain_time("mesh", layouts[s["layout"]], s["q"], s["nbytes"])

    def wording(v: claims.Verdict) -> str:
        t, ring, chain = v.best["torus row"], v.best["mesh row, rings"], v.best["mesh row, pipelined chain"]
        return (f"along a row, with ring algorithms on both, the torus row is {ring.mean / t.mean:.2f} times faster than "
                f"the mesh row ({t.mean:.1f} µs against {ring.mean:.1f} µs): a torus row is a ring of links, a mesh row "
                f"a line; against the line's own best, a pipelined chain (q = {chain.config['q']}), which takes "
                f"{chain.mean:.1f} µs, the torus row is {chain.mean / t.mean:.2f} times faster")

    def headline(v: claims.Verdict) -> str:
        t, ring, chain = v.best["torus row"], v.best["mesh row, rings"], v.best["mesh row, pipelined chain"]
        return (f"with ring algorithms on both rows, the torus row is {ring.mean / t.mean:.1f} times faster; against "
                f"the mesh row's pipelined chain, {chain.mean / t.mean:.1f} times")
    return claims.Claim(
        "ch06.row_rings", "For an all-reduce along one row of a 4 x 4 grid, is the torus faster than the mesh, each "
                          "with its best algorithm?",
        (_ring_contender("torus row", "torus", 4, 4, orders,
                         uses=uses + " (a pipelined chain on the torus row uses no wrap-around link and takes the "
                                     "mesh row's chain time, chain_time, slower than the torus's ring)"),
         _ring_contender("mesh row, rings", "mesh", 4, 4, orders, uses=uses),
         claims.Contender("mesh row, pipelined chain", chain_run, {"layout": tuple(layouts), "q": CHAIN_CHUNKS},
                          uses="the same row and links; the pipelined binary tree of 4 ranks (a chain), every "
                               "layout of its ranks on the row and q pipeline chunks")),
        metric="µs", seeds=_DETERMINISTIC, shared={"nbytes": SMALL_SIZE if small else SIZE}, wording=wording,
        headline=headline, chapter="06", source="commlib.network.topology.map_trace")


def grid_facts(shapes=((4, 4), (3, 3)), nbytes: int = SIZE) -> list[dict]:
    r"""Per grid shape and kind: nodes, links, diameter (hops), bisection width (links), whether a closed
    ring exists, and the least time an all-to-all of ``nbytes`` per rank can take across the bisection.

    In an all-to-all each of n ranks sends :math:`M/n` to every other, so about
    :math:`\lfloor n/2 \rfloor \lceil n/2 \rceil M/n` bytes cross the bisection each way, over :math:`W`
    links of bandwidth :math:`B`: at least that over :math:`WB` seconds, whatever the schedule.

    >>> [(f["grid"], f["diameter"], f["bisection"]) for f in grid_facts(((4, 4),))]
    [('4 x 4 mesh', 6, 4), ('4 x 4 torus', 4, 8)]
    """
    rows = []
    for r, c in shapes:
        for kind in ("mesh", "torus"):
            g = grid_graph(kind, r, c)
            n = g.number_of_nodes()
            width = topology.bisection_links(g)
            bandwidth = min(d["bandwidth"] for *_, d in g.edges(data=True))
            crossing = (n // 2) * (n - n // 2) * nbytes / n
            rows.append({"grid": f"{r} x {c} {kind}", "nodes": n, "links": g.number_of_edges(),
                         "diameter": nx.diameter(g), "bisection": width,
                         "closed_ring": bool(topology.ring_orders(g, closed_only=True, limit=1)),
                         "all_to_all_bound": crossing / (width * bandwidth)})
    return rows


# --------------------------------------------------------------- inside the host


@claims.register("ch06.reduction_vs_exchange")
def _reduction(small: bool = False) -> claims.Claim:
    nbytes = 10**8 if small else 10**9
    rings = {"one ring": 1, "a ring each way": 2, "three rings each way": 6}

    def reduction(s, seed):
        return 1e3 * topology.intra_host_reduction(s["nbytes"])["cube mesh", rings[s["rings"]]]

    def exchange(s, seed):
        return 1e3 * staged_exchange_time(s["gpu"], s["nbytes"])

    def wording(v: claims.Verdict) -> str:
        red, ex = v.best["reduction over NVLink"], v.best["exchange through the card"]
        return (f"with {red.config['rings']} the reduction takes {red.mean:.1f} ms, "
                f"{100 * red.mean / ex.mean:.0f} % of the {ex.mean:.0f} ms exchange")

    def headline(v: claims.Verdict) -> str:
        red, ex = v.best["reduction over NVLink"], v.best["exchange through the card"]
        return f"with {red.config['rings']} the reduction takes {100 * red.mean / ex.mean:.0f} % of the exchange's time"
    return claims.Claim(
        "ch06.reduction_vs_exchange",
        "In the BytePS server, is summing the host's gradient over NVLink small next to exchanging it through the card?",
        (claims.Contender("reduction over NVLink", reduction, {"rings": tuple(rings)},
                          uses="the hybrid cube-mesh of NVLink 2.0; one ring, a ring each way, or three rings each way "
                               "(together they use every link)"),
         claims.Contender("exchange through the card", exchange, {"gpu": ("h0.gpu0", "h0.gpu2")},
                          uses="one 100 Gb/s card, no GPUDirect RDMA; the copying GPU under the card's switch or another")),
        metric="ms", seeds=_DETERMINISTIC, shared={"nbytes": nbytes}, wording=wording, headline=headline,
        chapter="06", source="commlib.network.topology.intra_host_reduction")


def _byteps_cluster(nvlink: str | None = "nvlink2"):
    return topology.cluster(2, gpus_per_host=8, gpus_per_switch=2, nvlink=nvlink, network="eth_100g",
                            nvlink_layout="cube_mesh" if nvlink else "switch")


@cache
def staged_exchange_time(gpu: str, nbytes: int) -> float:
    """Seconds for the BytePS server's exchange through CPU memory (no GPUDirect RDMA), ``gpu`` copying."""
    c = _byteps_cluster()
    return topology.map_flows(c, topology.staged_exchange(c, gpu, nbytes)).time


def pcie_path(gpu: str, host: int = 0) -> str:
    """NCCL's name for the PCIe path between ``gpu`` and its host's network card in the BytePS server:
    ``"PIX"`` (one PCIe switch), ``"PXB"`` (PCIe switches only), ``"PHB"`` (through one CPU's host
    bridge) or ``"SYS"`` (across the socket link between the CPUs).

    >>> [pcie_path(f"h0.gpu{j}") for j in (0, 2, 4)]
    ['PIX', 'PHB', 'SYS']
    """
    c = _byteps_cluster(nvlink=None)
    path = topology.route(c, gpu, f"h{host}.nic")
    cpus = sum(c.nodes[v]["kind"] == "cpu" for v in path)
    switches = sum(c.nodes[v]["kind"] == "switch" for v in path)
    return "SYS" if cpus > 1 else "PHB" if cpus else "PIX" if switches == 1 else "PXB"


#: The peer-to-peer rate BytePS measured for each path type (bytes/s): under one switch, and across
#: sockets (:data:`commlib.network.topology.BYTEPS_PCIE_MEASURED`). No rate was measured through one
#: CPU (PHB) or through several switches (PXB); those paths keep the link model's rates.
MEASURED_BY_PATH = dict(zip(("PIX", "SYS"), topology.BYTEPS_PCIE_MEASURED.values()))


@cache
def rdma_exchange_time(gpu: str, nbytes: int, measured: bool = True) -> float:
    """Seconds for the same exchange by GPUDirect RDMA (the card reads and writes ``gpu``'s memory).

    The link model gives every pairing the card's line rate (each PCIe link is faster than the card).
    With ``measured``, each flow is also held to the peer-to-peer rate BytePS measured over PCIe 3.0 for
    its path type (:data:`MEASURED_BY_PATH`, :func:`pcie_path`): under one switch (PIX), or across the
    sockets (SYS). The card's reads of GPU memory are such peer-to-peer transfers, but BytePS measured
    GPU-to-GPU copies, not the card's reads: that the rates carry over to the card is an assumption, and
    NVIDIA's guide warns that paths across the sockets "may be extremely performance-limited or not work
    reliably". A path through one CPU (PHB) has no measured rate and keeps the link model's: an upper
    bound, since the same guide finds such paths slower on some processors.
    """
    c = _byteps_cluster(nvlink=None)
    flows = topology.rdma_exchange(c, gpu, nbytes)
    mapped = topology.map_flows(c, flows)
    if not measured:
        return mapped.time
    worst = mapped.time
    for f in flows:
        rate = MEASURED_BY_PATH.get(pcie_path(f.src if f.src.startswith("h0.") else f.dst))
        if rate is not None:
            worst = max(worst, f.nbytes / rate)
    return worst


@claims.register("ch06.copy_gpu_without_rdma")
def _without(small: bool = False) -> claims.Claim:
    def run_with(gpu):
        return lambda s, seed: 1e3 * staged_exchange_time(gpu, s["nbytes"])

    def wording(v: claims.Verdict) -> str:
        w, r = v.best[v.winner], v.best[v.runner_up]
        return f"{v.winner} copying, the exchange is {r.mean / w.mean:.2f} times faster ({w.mean:.0f} ms against {r.mean:.0f} ms)"

    def headline(v: claims.Verdict) -> str:
        return f"{v.winner} copying, the exchange is {v.best[v.runner_up].mean / v.best[v.winner].mean:.2f} times faster"
    return claims.Claim(
        "ch06.copy_gpu_without_rdma", "Without GPUDirect RDMA, which GPU should copy the host's gradient to CPU memory?",
        (claims.Contender("GPU 0, under the card's switch", run_with("h0.gpu0"), uses="the BytePS server; one 100 Gb/s card"),
         claims.Contender("GPU 2, under another switch", run_with("h0.gpu2"), uses="the same server")),
        metric="ms", seeds=_DETERMINISTIC, shared={"nbytes": 10**8 if small else 10**9}, wording=wording,
        headline=headline, chapter="06", source="commlib.network.topology.staged_exchange")


GPUS = tuple(f"h0.gpu{j}" for j in range(8))


def _socket_gpus(socket: int) -> tuple[str, ...]:
    """The GPUs whose PCIe switch hangs from CPU socket ``socket`` (the third node on their way to any CPU)."""
    c = _byteps_cluster(nvlink=None)
    return tuple(g for g in GPUS if topology.route(c, g, "h0.cpu0")[2] == f"h0.cpu{socket}")


@claims.register("ch06.copy_gpu_with_rdma")
def _with(small: bool = False) -> claims.Claim:
    near, far = _socket_gpus(0), _socket_gpus(1)

    def run(s, seed):
        return 1e3 * rdma_exchange_time(s["gpu"], s["nbytes"])

    def wording(v: claims.Verdict) -> str:
        w, r = v.best[v.winner], v.best[v.runner_up]
        gw, gr = w.config["gpu"], r.config["gpu"]
        return (f"with a GPU {v.winner} (GPU {gw[-1]}, path {pcie_path(gw)}) the exchange runs at the card's "
                f"line rate ({w.mean:.0f} ms); with a GPU {v.runner_up} (at best GPU {gr[-1]}, path {pcie_path(gr)}) "
                f"at the rate BytePS measured for copies across sockets ({r.mean:.0f} ms, about {r.mean / w.mean:.2f} "
                "times as long if that copy rate carries over to the card; NVIDIA's guide warns it may be far worse)")

    def headline(v: claims.Verdict) -> str:
        w, r = v.best[v.winner], v.best[v.runner_up]
        return (f"with a GPU {v.winner} the exchange runs at the card's line rate; with one {v.runner_up} it takes "
                f"about {r.mean / w.mean:.2f} times as long if the rate measured for copies across the sockets carries "
                "over, and NVIDIA's guide warns it may be far worse")
    return claims.Claim(
        "ch06.copy_gpu_with_rdma", "With GPUDirect RDMA, should the card read the gradient from a GPU on its own CPU socket or the other?",
        (claims.Contender("on the card's socket", run, {"gpu": near},
                          uses="the BytePS server's PCIe tree; one 100 Gb/s card; any of GPUs 0-3 (under the card's "
                               "switch, or the other switch of its socket); measured PCIe peer-to-peer rates where measured"),
         claims.Contender("on the other socket", run, {"gpu": far}, uses="the same; any of GPUs 4-7")),
        metric="ms", seeds=_DETERMINISTIC, shared={"nbytes": 10**8 if small else 10**9}, wording=wording,
        headline=headline, chapter="06", source="commlib.network.topology.rdma_exchange")


@claims.register("ch06.rdma_vs_staged")
def _rdma_vs_staged(small: bool = False) -> claims.Claim:
    def rdma(s, seed):
        return 1e3 * rdma_exchange_time(s["gpu"], s["nbytes"])

    def staged(s, seed):
        return 1e3 * staged_exchange_time(s["gpu"], s["nbytes"])

    def wording(v: claims.Verdict) -> str:
        a, b = v.best["GPUDirect RDMA"], v.best["staged through CPU memory"]
        if v.tied:
            return (f"each with its best GPU (GPU {a.config['gpu'][-1]} for GPUDirect RDMA, GPU {b.config['gpu'][-1]} "
                    f"to stage through CPU memory) both run at the card's line rate, {a.mean:.1f} ms and {b.mean:.1f} ms")
        w, r = v.best[v.winner], v.best[v.runner_up]
        return (f"each with its best GPU, {v.winner} takes {w.mean:.1f} ms (GPU {w.config['gpu'][-1]}) against "
                f"{r.mean:.1f} ms (GPU {r.config['gpu'][-1]})")

    def headline(v: claims.Verdict) -> str:
        if v.tied:
            return "each with its best GPU, both run at the card's line rate"
        return f"each with its best GPU, {v.winner} is {v.best[v.runner_up].mean / v.best[v.winner].mean:.2f} times faster"
    return claims.Claim(
        "ch06.rdma_vs_staged",
        "In the BytePS server, is the exchange through the card faster with GPUDirect RDMA than staged through CPU memory, "
        "each with its best GPU?",
        (claims.Contender("GPUDirect RDMA", rdma, {"gpu": GPUS},
                          uses="one 100 Gb/s card; the card reads and writes any one of the 8 GPUs; measured PCIe "
                               "peer-to-peer rates where measured"),
         claims.Contender("staged through CPU memory", staged, {"gpu": GPUS},
                          uses="the same card; any one of the 8 GPUs copies to and from socket 0's memory")),
        metric="ms", seeds=_TIE_SEEDS, shared={"nbytes": 10**8 if small else 10**9}, wording=wording,
        headline=headline, chapter="06", source="commlib.network.topology.rdma_exchange / staged_exchange", tie=0.01)


# --------------------------------------------------------------- the gallery's switch tree


def level_placements(n: int = 8) -> dict[str, tuple]:
    r"""Placements of ``n`` ranks (a power of two) on the leaves of a binary switch tree, one for each way to
    give the exchange distances of halving-doubling (:math:`n/2, \dots, 2, 1`) to the tree's levels.

    ``placement[rank]`` is the rank's leaf: rank bit :math:`b` (distance :math:`2^b`) becomes one bit of
    the leaf's number; leaf bit 0 picks a leaf switch's child, the last bit the root's. Named by the
    distance exchanged within each level, from the leaf switches up.

    >>> p = level_placements(8)
    >>> p["distances 1, 2, 4 from the leaf switches up"], p["distances 4, 2, 1 from the leaf switches up"]
    ((0, 1, 2, 3, 4, 5, 6, 7), (0, 4, 2, 6, 1, 5, 3, 7))
    """
    bits = n.bit_length() - 1
    if n < 2 or 1 << bits != n:
        raise ValueError(f"n must be a power of two, 2 or more, got {n}")
    out = {}
    for levels in itertools.permutations(range(bits)):     # rank bit b -> leaf bit levels[b]
        placement = tuple(sum(((r >> b) & 1) << levels[b] for b in range(bits)) for r in range(n))
        by_level = sorted(range(bits), key=lambda b: levels[b])
        out[f"distances {', '.join(str(1 << b) for b in by_level)} from the leaf switches up"] = placement
    return out


def _leaf_orders(ranks: tuple) -> list[tuple]:
    if len(ranks) == 1:
        return [ranks]
    first, rest, half = ranks[0], ranks[1:], len(ranks) // 2
    out = []
    for others in itertools.combinations(rest, half - 1):
        left = (first, *others)
        right = tuple(r for r in rest if r not in others)
        out += [a + b for a in _leaf_orders(left) for b in _leaf_orders(right)]
    return out


def tree_placements(n: int = 8) -> list[tuple]:
    """Every placement of ``n`` ranks on the leaves of a binary switch tree, up to the tree's symmetries
    (swapping the two children of any switch): which ranks share a leaf switch, which share the switch
    above, and so on. ``placement[rank]`` is the rank's leaf.

    >>> len(tree_placements(8)), len(tree_placements(4))
    (315, 3)
    """
    out = []
    for leaves in _leaf_orders(tuple(range(n))):
        placement = [0] * n
        for leaf, rank in enumerate(leaves):
            placement[rank] = leaf
        out.append(tuple(placement))
    return out


#: The host counts the chapter maps the flat ring and the hierarchical all-reduce on, close enough around the
#: gain's lowest point (near 12 hosts) to place it (a flat ring through 64 hosts of 8 GPUs takes minutes to map,
#: since each of its 2(n-1) steps shares out n flows).
HIER_HOSTS = (2, 4, 8, 12, 16, 24, 32)


def hierarchy_trend(hosts: tuple[int, ...] = HIER_HOSTS, per_host: int = 8, nbytes: int = 64 * 2**20,
                    network: str = "eth_100g") -> dict[int, dict[str, float]]:
    """The flat ring and the hierarchical all-reduce (:func:`topology.hierarchy_runs`) on each number of hosts:
    ``{hosts: {"flat": s, "hierarchical": s, "gain": flat / hierarchical, "bytes": flat's bytes through host 0's
    card over the hierarchical one's}}``, start-ups included; computed once per version of the code
    (:func:`claims.cached`).

    >>> t = hierarchy_trend((2,), per_host=2, nbytes=2**20)
    >>> t[2]["bytes"], t[2]["gain"] > 1
    (1.5, True)
    """
    def compute():
        out = []
        for h in hosts:
            r = topology.hierarchy_runs(h, per_host, nbytes, network)
            out += [r["ring"].time, r["hierarchical"].time,
                    r["ring"].load("h0.nic", "net") / r["hierarchical"].load("h0.nic", "net")]
        return out
    name = f"ch06-hierarchy-{'-'.join(map(str, hosts))}-{per_host}-{nbytes}-{network}"
    v = claims.cached(name, compute)
    return {h: {"flat": v[3 * i], "hierarchical": v[3 * i + 1], "gain": v[3 * i] / v[3 * i + 1], "bytes": v[3 * i + 2]}
            for i, h in enumerate(hosts)}


def hierarchy_low(trend: dict[int, dict[str, float]], within: float = 0.02) -> dict:
    """Where :func:`hierarchy_trend`'s time gain is lowest: ``{"hosts": h, "gain": g, "from": a, "to": b, "shape": s}``,
    ``h`` the host count run with the lowest gain, ``a`` to ``b`` the host counts around it whose gains are all within
    ``within`` (a fraction) of that lowest one, and ``s`` the trend's shape in words ("falls, levels off and then grows
    again" where several host counts lie that near the lowest, "dips and then grows again" where it stands alone,
    "falls as hosts are added" or "grows as hosts are added").

    >>> low = hierarchy_low({2: {"gain": 1.6}, 8: {"gain": 1.09}, 12: {"gain": 1.077}, 16: {"gain": 1.083},
    ...                      32: {"gain": 1.15}}, within=0.01)
    >>> low["hosts"], low["from"], low["to"], low["shape"]
    (12, 12, 16, 'falls, levels off and then grows again')
    >>> hierarchy_low({2: {"gain": 1.6}, 8: {"gain": 1.09}, 12: {"gain": 1.077}, 16: {"gain": 1.083}}, 0.02)["from"]
    8
    """
    if not trend:
        raise ValueError("trend must hold at least one host count")
    if not 0 <= within < 1:
        raise ValueError(f"within must be in [0, 1), got {within}")
    hosts = sorted(trend)
    low = min(hosts, key=lambda h: trend[h]["gain"])
    near = [h for h in hosts if trend[h]["gain"] <= trend[low]["gain"] * (1 + within)]
    i = hosts.index(low)
    a = b = i                      # the run of neighbouring host counts, around the lowest, all near it
    while a > 0 and hosts[a - 1] in near:
        a -= 1
    while b < len(hosts) - 1 and hosts[b + 1] in near:
        b += 1
    interior = low not in (hosts[0], hosts[-1])
    shape = ("falls, levels off and then grows again" if interior and hosts[a] < hosts[b]
             else "dips and then grows again" if interior
             else "falls as hosts are added" if low == hosts[-1] else "grows as hosts are added")
    return {"hosts": low, "gain": trend[low]["gain"], "from": hosts[a], "to": hosts[b], "shape": shape}


def hierarchy_closed(hosts: tuple[int, ...] = HIER_HOSTS, per_host: int = 8, nbytes: float = 64 * 2**20,
                     network: str = "eth_100g", nvlink: str = "nvlink2") -> dict[int, dict[str, float]]:
    r""":func:`hierarchy_trend`'s times in closed form, cheap enough for many buffer sizes: the flat ring through the
    cards, :math:`2(n-1)\left(\frac{M}{nB}+\alpha\right)` (:func:`commlib.cost.allreduce_time`), and the
    hierarchical all-reduce with one card per host, its phases one after another
    (:func:`commlib.cost.hierarchical_allreduce_time`, ``nics_per_host=1``); ``{hosts: {"flat", "hierarchical",
    "gain"}}``. The mapped runs agree with it to within the trace's rounding of the buffer into whole bytes.

    >>> round(hierarchy_closed((2,))[2]["gain"], 2)
    1.65
    """
    from .. import cost

    nv, net = hardware.link(nvlink), hardware.link(network)
    out = {}
    for h in hosts:
        flat = cost.allreduce_time(nbytes, h * per_host, net.bandwidth, net.latency)
        hier = cost.hierarchical_allreduce_time(nbytes, h, per_host, nv.bandwidth, net.bandwidth, nv.latency,
                                                net.latency, nics_per_host=1)
        out[h] = {"flat": flat, "hierarchical": hier, "gain": flat / hier}
    return out


def hierarchy_dips(sizes: tuple[float, ...] = (4 * 2**20, 16 * 2**20, 64 * 2**20), hosts: tuple[int, ...] = HIER_HOSTS,
                   per_host: int = 8, network: str = "eth_100g") -> dict[float, dict]:
    """For each buffer size per GPU, where the hierarchical all-reduce's time gain over the flat ring is lowest
    (:func:`hierarchy_low` of :func:`hierarchy_closed` over ``hosts``, no neighbours counted in): ``{nbytes: low}``.

    >>> {m // 2**20: d["hosts"] for m, d in hierarchy_dips().items()}
    {4: 4, 16: 8, 64: 12}
    """
    return {m: hierarchy_low(hierarchy_closed(hosts, per_host, m, network), 0.0) for m in sizes}


def hierarchy_break_even(hosts: int = 2, per_host: int = 8) -> float:
    r"""The ratio :math:`B_{intra}/B_{NIC}` above which hierarchical all-reduce, its phases one after another, beats
    the flat ring through one card per host (bandwidth terms of {eq}`eq-topo-hier`, start-ups left out):
    :math:`2\frac{g-1}{g} \big/ \left(2\frac{n-1}{n} - 2\frac{h-1}{h}\right)`, with :math:`n = gh`.
    The rule holds where the card holds the flat ring back (:math:`B_{intra} \ge B_{NIC}`, no shared links); below
    the card's rate the flat ring's own hops inside the host slow it too, and the comparison changes.

    >>> hierarchy_break_even(2, 8)
    2.0
    """
    terms = hierarchy_break_even_terms(hosts, per_host)
    return terms["inside"] / terms["saved"]


def hierarchy_break_even_pipelined(hosts: int = 2, per_host: int = 8) -> float:
    r"""The ratio :math:`B_{intra}/B_{NIC}` above which hierarchical all-reduce beats the flat ring through one card
    per host when its phases overlap (pipelined), in bandwidth terms: each link then needs only its bytes of the
    whole run, :math:`2\frac{g-1}{g}M` on a link inside the host and :math:`2\frac{h-1}{h}M` through the card,
    against the flat ring's :math:`2\frac{n-1}{n}M` through the card. The card always carries fewer, so the inside
    decides: :math:`\frac{g-1}{g} \big/ \frac{n-1}{n}`, below 1. So wherever the card holds the flat ring back
    (:math:`B_{intra} \ge B_{NIC}`), the pipelined hierarchy wins in bandwidth terms.
    It assumes the traffic inside the host shares no link with the card's path (on a PCIe-only host it does, and the
    bound is not reached).

    >>> round(hierarchy_break_even_pipelined(2, 8), 3)
    0.933
    >>> hierarchy_break_even_pipelined(8, 8) < hierarchy_break_even_pipelined(2, 8) < 1
    True
    """
    if hosts < 2 or per_host < 2:
        raise ValueError(f"hosts and per_host must be at least 2, got {hosts} and {per_host}")
    n = hosts * per_host
    return ((per_host - 1) / per_host) / ((n - 1) / n)


def hierarchy_break_even_terms(hosts: int = 2, per_host: int = 8) -> dict[str, float]:
    r"""The two factors behind :func:`hierarchy_break_even`: ``"inside"``, :math:`2\frac{g-1}{g}`, the multiple of
    :math:`M/B_{intra}` the hierarchy adds inside the host, and ``"saved"``,
    :math:`2\frac{n-1}{n} - 2\frac{h-1}{h}`, the multiple of :math:`M/B_{NIC}` it saves at the card.

    >>> hierarchy_break_even_terms(2, 8)
    {'inside': 1.75, 'saved': 0.875}
    """
    if hosts < 2 or per_host < 2:
        raise ValueError(f"hosts and per_host must be at least 2, got {hosts} and {per_host}")
    n = hosts * per_host
    return {"inside": 2 * (per_host - 1) / per_host, "saved": 2 * (n - 1) / n - 2 * (hosts - 1) / hosts}


#: The inside links of the hierarchy claims: NVLink 2.0 (the section's hosts) and none, PCIe 3.0 only (the BytePS server).
HIER_INSIDE = {"nvlink2": "NVLink 2.0", None: "PCIe 3.0 only"}


def hierarchy_pair(nbytes: int, nvlink: str | None, hosts: int = 2, per_host: int = 8,
                   network: str = "eth_100g") -> dict[str, float]:
    """Seconds for the flat ring and hierarchical all-reduce (phases one after another, and
    :func:`topology.pipelined_bound` of it) on ``hosts`` hosts of ``per_host`` GPUs, ``nvlink`` inside (None:
    PCIe only), one ``network`` card per host; ``"busiest"``: the hierarchical run's busiest link direction's
    whole-run bytes over its bandwidth (:func:`topology.busiest_link`). Computed once per version of the code
    (:func:`claims.cached`).

    >>> p = hierarchy_pair(2**20, "nvlink2", per_host=2)
    >>> p["flat"] > p["hierarchical"] > p["pipelined"] >= p["busiest"]
    True
    """
    def compute():
        r = topology.hierarchy_runs(hosts, per_host, nbytes, network, nvlink=nvlink)
        hier = r["hierarchical"]
        return [r["ring"].time, hier.time, topology.pipelined_bound(hier), topology.busiest_link(hier)[1]]
    v = claims.cached(f"ch06-hier-pair-{hosts}-{per_host}-{nbytes}-{network}-{nvlink}", compute)
    return {"flat": v[0], "hierarchical": v[1], "pipelined": v[2], "busiest": v[3]}


def link_words(g, edge) -> str:
    """Words for the link of ``edge`` in a :func:`topology.cluster`: which card, switch or CPU it joins.

    >>> c = topology.cluster(2, gpus_per_host=8, nvlink=None)
    >>> link_words(c, ("h0.cpu0", "h0.pcie0"))
    "the link between the network card's PCIe switch and its CPU"
    >>> link_words(c, ("h0.nic", "net"))
    "the network card's link to the switch"
    """
    u, v = edge
    if "net" in (u, v):
        return "the network card's link to the switch"
    names = {}
    for x in (u, v):
        host, _, part = str(x).partition(".")
        kind = part.rstrip("0123456789")
        names[kind] = (host[1:], part[len(kind):])
    if set(names) == {"cpu", "pcie"}:
        host, cpu = names["cpu"]
        switch = names["pcie"][1]
        nic = f"h{host}.nic"
        if g.has_edge(nic, f"h{host}.pcie{switch}"):
            return "the link between the network card's PCIe switch and its CPU"
        return f"the link between host {host}'s CPU {cpu} and its PCIe switch {switch}"
    return f"the link from {u} to {v}"


def hierarchy_busiest(nbytes: int, nvlink: str | None, hosts: int = 2, per_host: int = 8,
                      network: str = "eth_100g") -> dict:
    """The hierarchical run's busiest link direction over the whole run (:func:`topology.busiest_link`):
    ``{"edge": .., "words": .., "nbytes": bytes on it, "seconds": .., "bandwidth": bytes/s}``.

    >>> hierarchy_busiest(2**20, None, per_host=4)["edge"]
    ('h0.cpu0', 'h0.pcie0')
    """
    r = topology.hierarchy_runs(hosts, per_host, nbytes, network, nvlink=nvlink)
    hier = r["hierarchical"]
    edge, seconds = topology.busiest_link(hier)
    c = topology.cluster(hosts, gpus_per_host=per_host, network=network, nvlink=nvlink)
    return {"edge": edge, "words": link_words(c, edge), "nbytes": hier.link_bytes[edge], "seconds": seconds,
            "bandwidth": hier.capacity[edge]}


def _hier_vs_flat(key: str, nvlink: str | None, small: bool) -> claims.Claim:
    network = "eth_100g"
    nbytes = SMALL_SIZE if small else SIZE
    inside = HIER_INSIDE[nvlink]
    ratio = hardware.link(nvlink or "pcie3_x16").bandwidth / hardware.link(network).bandwidth

    def flat(s, seed):
        return 1e3 * hierarchy_pair(s["nbytes"], nvlink)["flat"]

    def hier(s, seed):
        return 1e3 * hierarchy_pair(s["nbytes"], nvlink)["hierarchical"]

    def wording(v: claims.Verdict) -> str:
        h, f = v.best["hierarchical all-reduce"].mean, v.best["flat ring"].mean
        pair = hierarchy_pair(v.claim.shared["nbytes"], nvlink)
        pipe = 1e3 * pair["pipelined"]
        head = f"with {inside} inside each host ({ratio:.1f} times the card's rate), "
        if pipe < f:
            tail = (f"; pipelined, the hierarchical one could at best take about its longest phase, {f / pipe:.2f} "
                    "times faster than the flat ring")
        else:
            busy = hierarchy_busiest(v.claim.shared["nbytes"], nvlink)
            tail = (f"; even pipelined, with rings inside the hosts, the hierarchical one cannot beat the flat ring, "
                    f"which stays at least {pipe / f:.2f} times faster, because of {busy['words']}: over the whole "
                    f"run it carries {busy['nbytes'] / 1e6:.1f} MB one way, {1e3 * busy['seconds']:.2f} ms at its "
                    f"{busy['bandwidth'] / 1e9:.2f} GB/s")
        if v.winner == "hierarchical all-reduce":
            return (head + f"hierarchical all-reduce with its phases one after another is {f / h:.2f} times faster than "
                    f"the flat ring ({h:.2f} ms against {f:.2f} ms)" + tail)
        return (head + f"the flat ring is {h / f:.2f} times faster than hierarchical all-reduce with its phases one "
                f"after another ({f:.2f} ms against {h:.2f} ms)" + tail)

    def headline(v: claims.Verdict) -> str:
        w, r = v.best[v.winner].mean, v.best[v.runner_up].mean
        return f"with {inside} inside ({ratio:.1f} times the card's rate) the {v.winner} is {r / w:.2f} times faster"

    uses = (f"2 hosts of 8 GPUs, {inside} inside each, one 100 Gb/s card per host into one switch; phases one "
            "after another, as the chapter's model charges them")
    return claims.Claim(
        key,
        f"On 2 hosts of 8 GPUs sharing one 100 Gb/s card each, with {inside} inside each host, is hierarchical "
        "all-reduce faster than a flat ring through all 16 GPUs?",
        (claims.Contender("hierarchical all-reduce", hier,
                          uses=uses + "; reduce-scatter inside, all-reduce of each shard across the hosts, all-gather inside"),
         claims.Contender("flat ring", flat, uses=uses + "; one ring through the 16 GPUs, host by host")),
        metric="ms", seeds=_DETERMINISTIC, shared={"nbytes": nbytes}, wording=wording, headline=headline,
        chapter="06", source="commlib.network.topology.hierarchy_runs")


@claims.register("ch06.hier_vs_flat")
def _hier_vs_flat_nvlink(small: bool = False) -> claims.Claim:
    return _hier_vs_flat("ch06.hier_vs_flat", "nvlink2", small)


@claims.register("ch06.hier_vs_flat_pcie")
def _hier_vs_flat_pcie(small: bool = False) -> claims.Claim:
    return _hier_vs_flat("ch06.hier_vs_flat_pcie", None, small)


def grid_tree_bound(g: nx.Graph, nbytes: int = SIZE) -> float:
    r"""Seconds below which no all-reduce that spreads ``nbytes`` per rank over spanning trees of ``g`` (reduce up
    each tree, broadcast down it, each tree on its share) can take, start-ups left out: a spanning tree of
    :math:`n` nodes crosses :math:`n - 1` links, so trees carrying the whole buffer fill at least :math:`(n-1)M`
    bytes of link directions each way, spread at best evenly over the graph's :math:`|E|` links of bandwidth
    :math:`B`: :math:`\frac{n-1}{|E|} \frac{M}{B}` (the packing bound of Nash-Williams and Tutte).

    >>> mesh, torus = grid_graph("mesh", 4, 4), grid_graph("torus", 4, 4)
    >>> round(grid_tree_bound(mesh) / grid_tree_bound(torus), 4)   # 32 links against 24
    1.3333
    """
    n, links = g.number_of_nodes(), g.number_of_edges()
    if n < 2 or links < n - 1:
        raise ValueError(f"g must be a connected graph of at least 2 nodes, got {n} nodes and {links} links")
    bandwidth = min(d["bandwidth"] for *_, d in g.edges(data=True))
    return (n - 1) * nbytes / (links * bandwidth)


TREE_LINK = "eth_10g"
TREE_SIZE = 8 * 10**6


@cache
def tree_time(algorithm: str, placement: tuple, nbytes: int = TREE_SIZE, fat: bool = False,
              startup: str = "message", chunks: int | None = None, latency: float | None = None) -> float:
    """Seconds for an all-reduce of ``nbytes`` per rank (``"ring"``, ``"halving_doubling"`` or, with ``chunks``
    = q, ``"double_binary_tree"``) on the binary switch
    tree of the chapter's gallery, rank ``i`` on leaf ``placement[i]``; ``fat=True``: the non-blocking fat tree
    of the same leaf links (each uplink as fast as the leaf links below it together). ``startup``: each message
    pays its start-up once (``"message"``) or once per link it crosses (``"links"``), :func:`topology.map_flows`.
    ``latency``: the start-up of every link in seconds (default: the ``TREE_LINK`` preset's)."""
    g = topology.tree(len(placement), 2, TREE_LINK, latency=latency, fat=fat)
    extra = {} if chunks is None else {"chunks": chunks}
    return topology.map_trace(g, topology.allreduce_trace(len(placement), nbytes, algorithm, **extra), list(placement),
                              startup=startup).time


def tree_crossover(startup: str = "message", fat: bool = False) -> float:
    """The size per rank (bytes) below which halving-doubling at its best order beats the ring at its best on the
    gallery's tree (:func:`tree_time`; ``0.0`` if it never does, ``inf`` if it always does).

    At fixed routes every step's time is its start-up plus bytes over rates that do not depend on the size, so
    each order's time is a line :math:`a + bM`, fitted exactly from two sizes; the fastest order of each
    algorithm is the lower envelope of its lines, and the crossover is where the two envelopes meet.

    >>> round(tree_crossover("message") / 1e3), round(tree_crossover("links") / 1e3)   # kB
    (160, 1200)
    """
    if startup not in topology.STARTUP:
        raise ValueError(f"startup must be one of {', '.join(topology.STARTUP)}, got {startup!r}")
    grain = 4 * 64 * 8                   # allreduce_trace's buffer for 8 ranks: sizes it scales to exactly
    small, large = 500 * grain, 4000 * grain
    lines = {}
    for algorithm in ("ring", "halving_doubling"):
        lines[algorithm] = []
        for p in level_placements(8).values():
            t0, t1 = (tree_time(algorithm, p, m, fat, startup) for m in (small, large))
            slope = (t1 - t0) / (large - small)
            lines[algorithm].append((t0 - slope * small, slope))

    def gap(m: float) -> float:      # > 0 where the ring is faster
        return (min(a + b * m for a, b in lines["halving_doubling"]) - min(a + b * m for a, b in lines["ring"]))

    if gap(0.0) >= 0:
        return 0.0
    hi = float(large)
    while gap(hi) < 0:
        hi *= 2
        if hi > 1e15:
            return math.inf
    lo = 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def tree_oversubscription(n: int = 8) -> float:
    """How many times the ranks under one child of the gallery's tree's root could send what its link to the
    root carries: the root's oversubscription, with one link rate at every level.

    >>> tree_oversubscription(8)
    4.0
    """
    plain, fat = topology.tree(n, 2, TREE_LINK), topology.tree(n, 2, TREE_LINK, fat=True)
    root = max((v for v in plain if isinstance(v, str)), key=lambda v: plain.nodes[v]["pos"][1])
    child = next(iter(plain[root]))
    return fat[root][child]["bandwidth"] / plain[root][child]["bandwidth"]


@cache
def tree_search(algorithm: str = "halving_doubling", n: int = 8, nbytes: int = TREE_SIZE,
                chunks: int | None = None) -> tuple[tuple, float, int]:
    """The fastest of :func:`tree_placements`: ``(placement, seconds, placements tried)`` (``chunks``: the double
    binary tree's q)."""
    found = tree_placements(n)
    best = min(found, key=lambda p: tree_time(algorithm, p, nbytes, chunks=chunks))
    return best, tree_time(algorithm, best, nbytes, chunks=chunks), len(found)


#: The double binary tree's chunk counts on the gallery's tree, and the one its placement is searched at (the
#: search maps all 315 placements, so it runs once, at a q whose fastest placement is also the fastest at q = 16-128).
TREE_DBT_CHUNKS = (4, 8, 16, 32, 64)
TREE_DBT_SEARCH_CHUNKS = 8


#: The double binary tree's chunk counts on small buffers, where fewer chunks pay fewer start-ups.
TREE_DBT_SMALL_CHUNKS = (1, 2, 4, 8, 16)


def tree_dbt_best(nbytes: int, chunks: Sequence[int] = TREE_DBT_SMALL_CHUNKS) -> tuple[int, float]:
    """The double binary tree on the gallery's tree at its best of ``chunks``, laid on
    :func:`tree_dbt_placement`: ``(q, seconds)``.

    >>> q, t = tree_dbt_best(16_000)
    >>> q, round(1e3 * t, 3)   # ms: 16 kB per rank, fewer chunks, fewer start-ups
    (2, 0.192)
    """
    place = tree_dbt_placement()
    return min(((q, tree_time("double_binary_tree", place, nbytes, chunks=q)) for q in chunks), key=lambda x: x[1])


def tree_dbt_placement(nbytes: int = TREE_SIZE) -> tuple:
    """The double binary tree's placement on the gallery's tree: the fastest of all :func:`tree_placements` at
    ``TREE_DBT_SEARCH_CHUNKS`` chunks."""
    return tree_search("double_binary_tree", 8, nbytes, chunks=TREE_DBT_SEARCH_CHUNKS)[0]


def tree_dbt_time_counted_per_message(chunks: int, nbytes: int = TREE_SIZE, n: int = 8,
                                      latency: float | None = None) -> float:
    """Seconds for the double binary tree on the gallery's tree (:func:`tree_time` at :func:`tree_dbt_placement`,
    ``chunks`` = q), with its start-ups counted as chapter 2 counts them.

    The flow model of :func:`tree_time` charges one start-up per round of the pipeline, however many messages
    a rank sends in it (:func:`commlib.collectives.algorithms.pipelined_tree.rounds`). Chapter 2's one-port
    count charges one per message, up to four a round (a rank with two children in one tree receives from both
    and sends to both): :func:`commlib.collectives.compare.alpha_beta_coefficients`. This adds the difference,
    each at the link's start-up (``latency``, default the ``TREE_LINK`` preset's), so the two chapters' trees can
    be set side by side.

    >>> round(1e3 * tree_dbt_time_counted_per_message(16), 1)   # ms: 8 MB per rank, q = 16
    18.8
    """
    from ..collectives import compare
    from ..collectives.algorithms import pipelined_tree

    alpha = hardware.link(TREE_LINK).latency if latency is None else latency
    extra = compare.alpha_beta_coefficients("double_binary_tree", n, chunks=chunks)[0] - pipelined_tree.rounds(n, chunks)
    return (tree_time("double_binary_tree", tree_dbt_placement(nbytes), nbytes, chunks=chunks, latency=alpha)
            + extra * alpha)


def tree_lead_counted_per_message(latency: float | None = None, nbytes: int = TREE_SIZE) -> dict:
    """The double binary tree against halving-doubling on the gallery's tree of 8 ranks, each at its best, the
    tree's start-ups counted per message as chapter 2 counts them (:func:`tree_dbt_time_counted_per_message`, at its
    best q of ``TREE_DBT_CHUNKS``), halving-doubling at its best of :func:`level_placements`; every link's start-up
    ``latency`` (default: the preset's). Returns ``{"q", "tree", "halving_doubling", "lead"}``: seconds, and the
    tree's lead ``1 - tree / halving_doubling`` (negative: the tree is slower).

    The tree pays many more start-ups (up to four a round, 21 rounds at q = 16) than halving-doubling (6), so its
    lead shrinks as the start-up grows:

    >>> [round(tree_lead_counted_per_message(a)["lead"], 3) for a in (10e-6, 20e-6, 40e-6)]
    [0.064, 0.029, -0.035]
    """
    alpha = hardware.link(TREE_LINK).latency if latency is None else check_nonnegative("latency", latency)
    q, tree = min(((q, tree_dbt_time_counted_per_message(q, nbytes, latency=alpha)) for q in TREE_DBT_CHUNKS),
                  key=lambda x: x[1])
    hd = min(tree_time("halving_doubling", p, nbytes, latency=alpha) for p in level_placements(8).values())
    return {"q": q, "tree": tree, "halving_doubling": hd, "lead": 1 - tree / hd}


def tree_dbt_bound(nbytes: int = TREE_SIZE, n: int = 8) -> float:
    """Seconds below which the double binary tree cannot run on the gallery's tree, whatever its placement or
    chunk count: the most bytes one rank sends (a rank with two children in one tree sends :math:`M/2` up and
    :math:`M/2` to each child there, and :math:`M/2` up the other tree, where it is a leaf: :math:`2M`) over
    that rank's one leaf link.

    >>> round(1e3 * tree_dbt_bound(), 1)   # ms: 2M/B for 8 MB on 10 Gb/s
    12.8
    """
    from collections import Counter

    sent: Counter = Counter()
    for m in topology.allreduce_trace(n, nbytes, "double_binary_tree",
                                    chunks=TREE_DBT_SEARCH_CHUNKS).messages:
        sent[m.src] += m.nbytes
    return max(sent.values()) / hardware.link(TREE_LINK).bandwidth


def _article(name: str) -> str:
    """A tree contender's name in a sentence: "the ring all-reduce", but "halving-doubling" (a method's name)."""
    return name if name == "halving-doubling" else f"the {name}"


@claims.register("ch06.tree_allreduce")
def _tree(small: bool = False) -> claims.Claim:
    orders = level_placements(8)   # small or not, the gallery's size: at a tenth of it the start-ups decide
    placements = len(tree_placements(8))
    uses = (f"the gallery's binary switch tree of 8 ranks, 10 Gb/s links at every level, so the root is "
            f"{tree_oversubscription(8):.0f}:1 oversubscribed; each of the {len(orders)} ways to lay the exchange "
            "distances on the tree's levels (rank order among them)")

    def run_with(algorithm):
        return lambda s, seed: 1e3 * tree_time(algorithm, orders[s["order"]], s["nbytes"])

    def run_tree(s, seed):
        return 1e3 * tree_time("double_binary_tree", tree_dbt_placement(s["nbytes"]), s["nbytes"], chunks=s["chunks"])

    def setting(b: claims.Best) -> str:
        return f"q = {b.config['chunks']} chunks" if "chunks" in b.config else b.config["order"]

    def wording(v: claims.Verdict) -> str:
        order = sorted(v.best, key=lambda k: v.best[k].mean)
        w = v.best[order[0]]
        rest = [f"{_article(k)} at its best {v.best[k].mean:.1f} ms ({setting(v.best[k])}), "
                f"{v.best[k].mean / w.mean:.2f} times as long" for k in order[1:]]
        return f"{_article(order[0])} at its best takes {w.mean:.1f} ms ({setting(w)}), " + ", and ".join(rest)

    def headline(v: claims.Verdict) -> str:
        order = sorted(v.best, key=lambda k: v.best[k].mean)
        w = v.best[order[0]].mean
        return (f"{_article(order[0])} is " +
                " and ".join(f"{v.best[k].mean / w:.1f} times faster than {_article(k)}" for k in order[1:]))
    return claims.Claim(
        "ch06.tree_allreduce",
        "On a binary switch tree of 8 ranks, is a ring all-reduce faster than halving-doubling and the double binary "
        "tree, each at its best rank order?",
        (claims.Contender("ring all-reduce", run_with("ring"), {"order": tuple(orders)}, uses=uses),
         claims.Contender("halving-doubling", run_with("halving_doubling"), {"order": tuple(orders)},
                          uses=uses + f"; of all {placements} placements up to the tree's symmetries (tree_search) none is faster"),
         claims.Contender("double binary tree", run_tree, {"chunks": TREE_DBT_CHUNKS},
                          uses=("the same tree; NCCL's two trees, each carrying half the buffer in q chunks; laid on "
                                f"the fastest of all {placements} placements at q = {TREE_DBT_SEARCH_CHUNKS} (tree_search), "
                                f"which beats each of the {len(orders)} above"))),
        metric="ms", seeds=_DETERMINISTIC, shared={"nbytes": TREE_SIZE}, wording=wording, headline=headline,
        chapter="06", source="commlib.network.topology.map_trace")


@claims.register("ch06.tree_allreduce_fat")
def _tree_fat(small: bool = False) -> claims.Claim:
    orders = level_placements(8)
    uses = ("the gallery's 8 ranks and 10 Gb/s leaf links on a non-blocking fat tree: each uplink as fast as "
            "the leaf links below it together; each of the 6 ways to lay the exchange distances on the "
            "tree's levels (rank order among them)")

    def run_with(algorithm):
        return lambda s, seed: 1e3 * tree_time(algorithm, orders[s["order"]], s["nbytes"], fat=True)

    def wording(v: claims.Verdict) -> str:
        w, r = v.best[v.winner], v.best[v.runner_up]
        return (f"{_article(v.winner)} at its best rank order takes {w.mean:.2f} ms and "
                f"{_article(v.runner_up)} at its best {r.mean:.2f} ms, {r.mean / w.mean:.2f} times as long")

    def headline(v: claims.Verdict) -> str:
        return f"{_article(v.winner)} is {v.best[v.runner_up].mean / v.best[v.winner].mean:.2f} times faster"
    return claims.Claim(
        "ch06.tree_allreduce_fat",
        "On a non-blocking fat tree of 8 ranks, is a ring all-reduce faster than halving-doubling, each at its "
        "best rank order?",
        (claims.Contender("ring all-reduce", run_with("ring"), {"order": tuple(orders)}, uses=uses),
         claims.Contender("halving-doubling", run_with("halving_doubling"), {"order": tuple(orders)}, uses=uses)),
        metric="ms", seeds=_DETERMINISTIC, shared={"nbytes": TREE_SIZE}, wording=wording, headline=headline,
        chapter="06", source="commlib.network.topology.map_trace")


# --------------------------------------------------------------- placement on note 000's hosts

#: The chapter's five placements of 4 workers on note 000's hosts (:func:`commlib.network.placement.example_cluster`,
#: 4 slots each), by name, and the key of the claim that compares the two schemes on each.
PLACEMENTS = {"4 on host 3": {"host3": 4}, "2 on host 1, 2 on host 3": {"host1": 2, "host3": 2},
              "1 each on hosts 0, 1, 3, 4": [0, 1, 3, 4], "4 on host 7": {"host7": 4},
              "2 on host 3, 2 on host 7": {"host3": 2, "host7": 2}}
PLACEMENT_KEYS = {"4 on host 3": "ch06.placement_host3", "2 on host 1, 2 on host 3": "ch06.placement_hosts1_3",
                  "1 each on hosts 0, 1, 3, 4": "ch06.placement_hosts0_1_3_4", "4 on host 7": "ch06.placement_host7",
                  "2 on host 3, 2 on host 7": "ch06.placement_hosts3_7"}
#: The most shards the parameter server is tried with: two per worker (sixteen find nothing faster).
MAX_SHARDS = 8
PS_AGGREGATION = {"none": False, "within each host first": True}
AR_NAME, PS_NAME = "all-reduce", "parameter server"
#: The all-reduce's options: a ring laid host by host, the hierarchical all-reduce, or a direct reduce-scatter
#: and all-gather whose shares of the buffer may be uneven (none behind a slow card).
AR_OPTIONS = ("ring", "hierarchical", "direct, uneven shares")


@cache
def placement_run(name: str, scheme: str, option: str, model: str = "resnet50", max_shards: int = MAX_SHARDS):
    """One scheme on one of the chapter's placements (:data:`PLACEMENTS`): the all-reduce with ``option``
    ``"ring"`` or ``"hierarchical"`` (:func:`commlib.network.placement.estimate`), or the parameter server
    sharded over the workers, ``option`` a key of :data:`PS_AGGREGATION`, at its best number and layout of
    shards (:func:`commlib.network.placement.best_sharded_ps`)."""
    from ..network import placement

    cluster = placement.example_cluster(slots=4)
    where = PLACEMENTS[name]
    if scheme == AR_NAME:
        if option == AR_OPTIONS[2]:
            # A direct reduce-scatter + all-gather in which rank r owns a share of the buffer: the same bytes on the
            # same links as the sharded parameter server held by the workers, so the same model times it.
            est = min((placement.best_sharded_ps(cluster, where, max_shards=max_shards, model=model, aggregate=a)
                       for a in PS_AGGREGATION.values()), key=lambda e: e.time)
            return replace(est, mode="allreduce", algorithm=("hierarchical direct" if est.algorithm.startswith("hier")
                                                             else "direct"))
        return placement.estimate(cluster, where, model=model, mode="allreduce", algorithm=option)
    if scheme == PS_NAME:
        return placement.best_sharded_ps(cluster, where, max_shards=max_shards, model=model,
                                         aggregate=PS_AGGREGATION[option])
    raise ValueError(f"scheme must be {AR_NAME!r} or {PS_NAME!r}, got {scheme!r}")


def scheme_phrase(est) -> str:
    """How a scheme ran at its best, in words: the all-reduce's algorithm, or the parameter server's shards.

    >>> scheme_phrase(placement_run("1 each on hosts 0, 1, 3, 4", PS_NAME, "none"))
    '4 shards: 3 on host 1, 1 on host 3'
    """
    if est.shards is None:
        return est.algorithm
    k = sum(est.shards)
    if est.mode == "allreduce":     # the direct all-reduce: each host's share of the buffer, in k-ths
        held = ", ".join(f"{a}/{k} on host {h}" for h, a in enumerate(est.shards) if a)
        return ("direct reduce-scatter and all-gather, shares " + held
                + (", each host summing first" if est.algorithm == "hierarchical direct" else ""))
    held = [(h, a) for h, a in enumerate(est.shards) if a]
    if k == 1:
        text = f"one shard, on host {held[0][0]}"
    elif len(held) == 1:
        text = f"{k} shards, all on host {held[0][0]}"
    else:
        text = f"{k} shards: " + ", ".join(f"{a} on host {h}" for h, a in held)
    if est.shards == est.counts:
        text += ", one per worker"
    return text + (", each host summing first" if est.algorithm == "hierarchical sharded ps" else "")


def _placement_claim(name: str):
    key = PLACEMENT_KEYS[name]

    def build(small: bool = False) -> claims.Claim:
        def run_with(scheme):
            return lambda s, seed: placement_run(name, scheme, s["option"], s["model"]).time

        def wording(v: claims.Verdict) -> str:
            est = {c: placement_run(name, c, v.best[c].config["option"], v.claim.shared["model"])
                   for c in (AR_NAME, PS_NAME)}
            if v.tied:
                return (f"the all-reduce at its best ({scheme_phrase(est[AR_NAME])}) and the parameter "
                        f"server at its best ({scheme_phrase(est[PS_NAME])}) both take {est[AR_NAME].time:.2f} s")
            w, r = est[v.winner], est[v.runner_up]
            return (f"the {v.winner} at its best ({scheme_phrase(w)}) takes {w.time:.2f} s, the "
                    f"{v.runner_up} at its best ({scheme_phrase(r)}) {r.time:.2f} s, {r.time / w.time:.2f} times as long")

        def headline(v: claims.Verdict) -> str:
            if v.tied:
                return f"the two tie at {v.best[AR_NAME].mean:.2f} s"
            return f"the {v.winner} is {v.best[v.runner_up].mean / v.best[v.winner].mean:.2f} times faster"
        return claims.Claim(
            key, f"With 4 workers {name} of note 000's hosts, is a parameter server faster than an all-reduce, "
                 "each at its best?",
            (claims.Contender(AR_NAME, run_with(AR_NAME), {"option": AR_OPTIONS},
                              uses="the workers' hosts, links and network cards; a ring laid host by host (any order "
                                   "of the hosts: each card carries one flow each way, the slowest bounds it), "
                                   "the hierarchical all-reduce where several workers share a host, or a direct "
                                   "reduce-scatter and all-gather with uneven shares of the buffer (every split into "
                                   f"1 to {MAX_SHARDS} parts over the hosts in use, each host summing first or not)"),
             claims.Contender(PS_NAME, run_with(PS_NAME), {"option": tuple(PS_AGGREGATION)},
                              uses=f"the same hosts, links and cards: even shards held by the workers themselves "
                                   f"(no server machine or card the all-reduce lacks), every number of shards 1 to "
                                   f"{MAX_SHARDS} and every way to hold them on the hosts in use; push and pull "
                                   "overlapped; or the workers of a host summing inside it first")),
            metric="s", seeds=_TIE_SEEDS, shared={"model": "resnet50"}, wording=wording, headline=headline, chapter="06",
            source="commlib.network.placement.estimate / best_sharded_ps", tie=1e-9)
    return claims.register(key)(build)


for _name in PLACEMENTS:
    _placement_claim(_name)
