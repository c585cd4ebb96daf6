"""Self-checks for chapter 6 (topologies, links and placement). Answers are computed, never typed in."""

from __future__ import annotations

from itertools import permutations

import numpy as np

from .. import hardware
from ..check import Given, Question, register
from ..collectives import simulate as collectives
from ..network import placement, topology


def _ratio(target: float, tol: float = 0.02):
    return lambda given, right: abs(given / right - target) < tol


def _closing_hops(rows: int = 3, cols: int = 6) -> int:
    order = topology.snake_order(rows, cols)
    return len(topology.route(topology.mesh2d(rows, cols, "eth_10g"), order[-1], order[0])) - 1


def _near_nic_rate_gbs(pcie: str = "pcie4_x16") -> float:
    c = topology.cluster(2, gpus_per_host=8, gpus_per_switch=2, nvlink="nvlink2", network="eth_100g",
                         nvlink_layout="cube_mesh", pcie=pcie)
    nbytes = 10**9
    res = topology.map_flows(c, topology.staged_exchange(c, "h0.gpu0", nbytes))
    return nbytes / res.time / 1e9


def _nic_ratio(hosts: int = 4, per: int = 8, length: int = 4096) -> float:
    arrays = [np.ones(length, dtype=np.float32) for _ in range(hosts * per)]
    c = topology.cluster(hosts, gpus_per_host=per)
    _, flat = collectives.allreduce(arrays, "ring")
    _, hier = collectives.allreduce(arrays, "hierarchical", hosts=hosts)
    return topology.map_trace(c, flat).load("h0.nic", "net") / topology.map_trace(c, hier).load("h0.nic", "net")


def _pair_one_way_gbs(a: int = 0, b: int = 3) -> float:
    """GB/s per direction between GPUs ``a`` and ``b`` of the hybrid cube-mesh, over the NVLinks that join them."""
    return placement.v100_nvlink_bandwidth(topology.DGX1_NVLINKS[a, b]) / 1e9


register(Question(
    "ch06.nvlink2_pair_one_way", _pair_one_way_gbs, unit="GB/s",
    hints=((lambda given, right: abs(given / right - 2) < 0.02, "That sums both directions: NVIDIA's figure adds "
                                                               "what a GPU sends and what it receives."),
           (lambda given, right: abs(given / right - 1 / 2) < 0.01, "That is one link; GPUs 0 and 3 are joined by two."),
           (lambda given, right: abs(given / right - 3) < 0.03, "That is all six of the GPU's links; only two of them "
                                                               "go to GPU 3."),
           (lambda given, right: abs(given / right - 6) < 0.06, "That is NVIDIA's whole figure: both directions of all "
                                                               "six links.")),
    hint="The 300 GB/s of a V100 adds both directions of its six links; the pair has two of them.",
))

register(Question(
    "ch06.mesh_closing_hops", _closing_hops, unit="links", rel_tol=0.0,
    givens=(Given("rows", (5, 7, 9), "{} rows"), Given("cols", (3, 4, 5, 8), "{} columns")),
    hints=((lambda given, right: given == 1, "One hop is what the wrap-around link of a torus gives; a mesh has none."),),
    hint="Find where the snake ends: in column 0 of the last row when the number of rows is even, in the last "
         "column when it is odd. The closing hop runs from there back to row 0, column 0 along mesh links only.",
))

def _torus_closing_hops(rows: int = 3, cols: int = 6) -> int:
    order = topology.snake_order(rows, cols)
    return len(topology.route(topology.torus2d(rows, cols, "eth_10g"), order[-1], order[0])) - 1


register(Question(
    "ch06.torus_closing_hops", _torus_closing_hops, unit="links", rel_tol=0.0,
    givens=(Given("rows", (4, 5, 6, 7, 9), "{} rows"), Given("cols", (3, 4, 5, 8), "{} columns")),
    hints=((lambda given, right: given == 1 and right == 2, "One wrap-around link closes the ring only when the snake "
                                                            "ends in column 0, as it does with an even number of rows."),
           (lambda given, right: given == 2 and right == 1, "With an even number of rows the snake ends in column 0 of "
                                                            "the last row: the column's wrap-around link closes it."),
           (lambda given, right: given > 2, "That counts mesh links; a torus's wrap-around links join the two ends of "
                                           "every row and every column.")),
    hint="Find where the snake ends: in column 0 of the last row when the number of rows is even (one wrap-around "
         "link back to row 0), in the last column when it is odd (one wrap-around link per dimension).",
))

register(Question(
    "ch06.near_nic_rate", _near_nic_rate_gbs, unit="GB/s",
    hints=((lambda given, right: abs(given - _near_nic_rate_gbs("pcie3_x16")) < 0.02,
            "That is the PCIe 3.0 server of the chapter's text; redo it with PCIe 4.0's rate per direction."),
           (lambda given, right: abs(given - hardware.link("pcie4_x16").bandwidth / 2e9) < 0.02,
            "That is each flow's share of the PCIe 4.0 link, but the exchange also crosses the network card: "
            "which of the two is slower?")),
    hint="Two flows share the PCIe link from switch P0 to CPU 0, each at half its rate; the exchange also "
         "crosses the card. The slower of the two sets the rate.",
    means=(
        "# The chapter's BytePS server: two hosts of 8 V100 (NVLink cube-mesh, two GPUs per PCIe switch), one\n"
        "# 100 Gb/s card each on PCIe switch 0; the links GPU 0's copy and the host's exchange load.\n"
        "byteps = topology.cluster(2, gpus_per_host=8, gpus_per_switch=2, nvlink=\"nvlink2\", network=\"eth_100g\",\n"
        "                          nvlink_layout=\"cube_mesh\", pcie=\"pcie4_x16\")\n"
        "near = topology.map_flows(byteps, topology.staged_exchange(byteps, \"h0.gpu0\", 10**9))\n"
        "topology_views.topology_figure(byteps, near, title=\"GPU 0 copies\", width=9.0, height=4.0, node_size=200,\n"
        "                               equal=False)",
    ),
))

register(Question(
    "ch06.best4_vgg",
    lambda: placement.best_placements(placement.example_cluster(), 4, top=1, model="vgg16")[0].time, unit="s",
    hint="Try every placement with placement.best_placements, or reason: which host has the fastest intra-host link?",
    means=(
        "# The chapter's placement calculator, on its eight hosts: try placements of the workers.\n"
        "topology_views.placement_calculator(where=\"host3:2, host1:2\", model=\"vgg16\", dtype=\"fp32\", mode=\"allreduce\")",
    ),
))


def _ps_host1(pipelined: bool = True) -> float:
    return placement.estimate(placement.example_cluster(), [0, 2, 3, 4], model="resnet50", mode="ps",
                              server_host=1, pipelined=pipelined).time


def _host2_link_only(given: float, right: float) -> bool:
    """True when ``given`` is host 2's link alone: one gradient at inter[2] instead of four at inter[1]."""
    c = placement.example_cluster()
    return abs(given / right - c.inter[1] / (4 * c.inter[2])) < 0.003


register(Question(
    "ch06.ps_host1", _ps_host1, unit="s",
    hints=((_ratio(2.0), "Push and pull overlap on full-duplex links: each direction of a link is busy once, "
                         "so the round is not push time plus pull time."),
           (_host2_link_only, "That is host 2's link alone. Which link carries the most gradients?")),
    hint="The server's network link (host 1, 233 MB/s) carries four gradients each way; host 2's own link "
         "(59.5 MB/s) carries one. The slower of the two bounds the round.",
    means=(
        "# The chapter's placement calculator, on its eight hosts.\n"
        "topology_views.placement_calculator(where=\"host3:2, host1:2\", model=\"resnet50\", dtype=\"fp32\")",
    ),
))

register(Question(
    "ch06.nic_ratio", _nic_ratio, unit="",
    givens=(Given("hosts", (3, 4, 6), "{} hosts"), Given("per", (4, 16), "{} GPUs each")),
    hint="Flat ring: 2(n-1)/n of the buffer crosses each host's NIC; hierarchical: 2(h-1)/h.",
))


def _tree_hd_over_ring(nbytes: int = 8 * 10**6) -> float:
    """Halving-doubling in its best order over the ring in rank order, latency aside, on the gallery's
    binary switch tree of 8 ranks with one link rate at every level (4:1 oversubscribed at the root).

    The orders tried are the 6 ways to give the exchange distances 4, 2, 1 to the tree's levels: rank
    bit b becomes leaf bit ``perm[b]``."""
    tree = topology.tree(8, 2, "eth_10g", latency=0.0)

    def seconds(algorithm: str, leaves) -> float:
        return topology.map_trace(tree, topology.allreduce_trace(8, nbytes, algorithm), list(leaves)).time

    orders = [[sum(((r >> b) & 1) << perm[b] for b in range(3)) for r in range(8)] for perm in permutations(range(3))]
    return min(seconds("halving_doubling", p) for p in orders) / seconds("ring", range(8))


def _tree_hd_over_ring_with_latency(nbytes: int = 8 * 10**6) -> float:
    """The same ratio with each link's latency, each algorithm at its best of the 6 orders (the gallery's tree)."""
    tree = topology.tree(8, 2, "eth_10g")

    def seconds(algorithm: str, leaves) -> float:
        return topology.map_trace(tree, topology.allreduce_trace(8, nbytes, algorithm), list(leaves)).time

    orders = [[sum(((r >> b) & 1) << perm[b] for b in range(3)) for r in range(8)] for perm in permutations(range(3))]
    return min(seconds("halving_doubling", p) for p in orders) / min(seconds("ring", p) for p in orders)


register(Question(
    "ch06.tree_hd_over_ring", _tree_hd_over_ring, unit="",
    hints=((_ratio(7 / 12), "That is the fat tree's answer: on this tree an uplink carries several flows at once, "
                            "at B for all of them."),
           (_ratio(2.0), "Count both phases of the ring and of halving-doubling, or neither."),
           (_ratio(0.5), "Count both phases of the ring and of halving-doubling, or neither."),
           (lambda given, right: abs(given - _tree_hd_over_ring_with_latency()) < 0.01,
            "That is the ratio with each link's latency, printed after the solution; the exercise asks for the "
            "bandwidth terms alone, latency aside.")),
    hint="In each step of halving-doubling, count the flows that share the busiest link direction and the bytes "
         "each carries; the ring's flows never share one.",
))


#: The max-min exercise: three link directions of different rates (bytes/s), and the links each flow crosses.
MAXMIN_CAPACITY = {(0, 1): 4e9, (1, 2): 3e9, (2, 3): 0.6e9}
MAXMIN_PATHS = {"a": [(0, 1), (1, 2)], "x": [(1, 2), (2, 3)], "y": [(1, 2)], "d": [(0, 1)]}


def _max_min_rate(flow: str = "d") -> float:
    return topology.max_min_rates(MAXMIN_PATHS, MAXMIN_CAPACITY)[flow][0] / 1e9


def _other_flow(name: str):
    return lambda given, right: abs(given - _max_min_rate(name)) < 0.01


register(Question(
    "ch06.maxmin_rate", _max_min_rate, unit="GB/s",
    hints=((lambda given, right: abs(given - MAXMIN_CAPACITY[(0, 1)] / 2e9) < 0.01,
            "That is d's equal share of link 0->1 (half of it); flow a cannot use its half there."),
           (lambda given, right: abs(given - MAXMIN_CAPACITY[(0, 1)] / 1e9) < 0.01,
            "That is the whole link: flow a still needs its own rate on link 0->1."),
           (_other_flow("x"), "That is flow x's rate, held by link 2->3; d never meets x. Go on filling."),
           (_other_flow("a"), "That is flow a's rate (and y's), set on link 1->2; d takes what a leaves of link 0->1.")),
    hint="Fill progressively: raise every rate together; link 2->3 fills first and fixes x; then link 1->2 fixes a "
         "and y; then give d what is left of link 0->1.",
))
