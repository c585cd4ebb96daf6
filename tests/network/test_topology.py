"""Tests for commlib.network.topology: routing, link sharing, and traces mapped onto links.

Expected values are derived here from the problem statement (hops, shares,
the alpha-beta formula), not copied from the code's output.
"""

from __future__ import annotations

import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib import cost, hardware
from commlib.collectives.trace import Trace
from commlib.network import topology
from commlib.network.topology import Flow, map_flows, map_trace

SETTINGS = settings(max_examples=25, deadline=None)


def ring_allreduce_trace(n: int, nbytes: int) -> Trace:
    """A ring all-reduce in rank order, built by hand: 2(n-1) steps, rank i sends a chunk of nbytes/n to i+1."""
    assert nbytes % n == 0
    t = Trace(n=n, algorithm="ring")
    for step in range(2 * (n - 1)):
        for i in range(n):
            t.add(step, i, (i + 1) % n, nbytes // n)
    return t


def path_graph(k: int, bandwidth: float, latency: float) -> nx.Graph:
    g = nx.path_graph(k)
    nx.set_edge_attributes(g, bandwidth, "bandwidth")
    nx.set_edge_attributes(g, latency, "latency")
    return g


# ---------------------------------------------------------------- ring = cost model

@SETTINGS
@given(n=st.integers(2, 9), chunk=st.integers(1, 10**7),
       link=st.sampled_from(["eth_1g", "eth_25g", "nvlink2", "pcie4_x16", "ib_hdr"]))
def test_ring_trace_on_ring_matches_cost_allreduce_time(n, chunk, link):
    nbytes = chunk * n
    g = topology.ring(n, link=link)
    res = map_trace(g, ring_allreduce_trace(n, nbytes))
    item = hardware.link(link)
    want = cost.allreduce_time(nbytes, n, item.bandwidth, item.latency, "ring")
    assert math.isclose(res.time, want, rel_tol=1e-12)
    assert res.max_flows == 1            # a ring in ring order never shares a link direction
    assert len(res.steps) == 2 * (n - 1)


def test_ring_link_totals_are_the_per_rank_volume():
    n, nbytes = 5, 5_000_000
    res = map_trace(topology.ring(n, "eth_10g"), ring_allreduce_trace(n, nbytes))
    for i in range(n):
        assert res.load(i, (i + 1) % n) == pytest.approx(cost.ring_bytes_per_rank(nbytes, n))
        assert res.load((i + 1) % n, i) == 0    # the other direction stays idle


# ---------------------------------------------------------------- sharing

def test_two_flows_on_one_link_each_get_half():
    bw, lat, m = 2e9, 1e-6, 10**9
    g = path_graph(3, bw, lat)                      # 0 - 1 - 2
    alone = map_flows(g, [Flow(0, 1, 2, m)])
    shared = map_flows(g, [Flow(0, 0, 2, m), Flow(0, 1, 2, m)])
    assert alone.time == pytest.approx(lat + m / bw)
    # flow 0->2 crosses two links, sharing 1->2 with flow 1->2: rate bw/2, one start-up per message
    assert shared.time == pytest.approx(lat + m / (bw / 2))
    # charged per link instead, the message through two links pays two
    assert map_flows(g, [Flow(0, 0, 2, m), Flow(0, 1, 2, m)], startup="links").time == pytest.approx(2 * lat + m / (bw / 2))
    assert shared.steps[0].link_flows[(1, 2)] == 2
    assert shared.steps[0].link_bytes[(1, 2)] == 2 * m
    assert shared.bottleneck == (1, 2)


def test_opposite_directions_do_not_share():
    bw, m = 1e9, 10**8
    g = path_graph(2, bw, 0.0)
    res = map_flows(g, [Flow(0, 0, 1, m), Flow(0, 1, 0, m)])
    assert res.time == pytest.approx(m / bw)        # full duplex: each direction at full rate


@SETTINGS
@given(k=st.integers(1, 8), m=st.integers(1, 10**9), bw=st.floats(1e6, 1e12))
def test_k_flows_into_one_node_share_its_link(k, m, bw):
    g = topology.star(k + 1, hub="switch", bandwidth=bw, latency=0.0)
    flows = [Flow(0, i, k, m) for i in range(k)]      # k leaves send to leaf k through the hub
    res = map_flows(g, flows)
    assert res.time == pytest.approx(k * m / bw, rel=1e-12)
    assert res.steps[0].link_flows[("hub", k)] == k


def test_steps_add_up_and_do_not_overlap():
    g = path_graph(2, 1e9, 0.0)
    res = map_flows(g, [Flow(0, 0, 1, 10**9), Flow(3, 0, 1, 10**9)])
    assert res.time == pytest.approx(2.0)
    assert [s.step for s in res.steps] == [0, 3]


def test_link_bytes_conserve_flow_bytes_times_hops():
    g = topology.mesh2d(3, 4, "eth_10g")
    flows = [Flow(0, 0, 11, 1000), Flow(0, 5, 2, 700), Flow(1, 3, 8, 50)]
    res = map_flows(g, flows)
    hops = {(f.src, f.dst): abs(f.src // 4 - f.dst // 4) + abs(f.src % 4 - f.dst % 4) for f in flows}
    assert sum(res.link_bytes.values()) == sum(f.nbytes * hops[(f.src, f.dst)] for f in flows)


# ---------------------------------------------------------------- routing

@SETTINGS
@given(rows=st.integers(1, 5), cols=st.integers(2, 5), data=st.data())
def test_mesh_routes_are_manhattan_and_deterministic(rows, cols, data):
    g = topology.mesh2d(rows, cols, "eth_10g")
    a = data.draw(st.integers(0, rows * cols - 1))
    b = data.draw(st.integers(0, rows * cols - 1))
    path = topology.route(g, a, b)
    assert path[0] == a and path[-1] == b
    assert len(path) - 1 == abs(a // cols - b // cols) + abs(a % cols - b % cols)
    assert all(g.has_edge(u, v) for u, v in zip(path, path[1:]))
    assert topology.route(g, a, b) == path


def test_torus_routes_use_wraparound():
    g = topology.torus2d(1 + 4, 5, "eth_10g")
    assert len(topology.route(g, 0, 4)) == 2          # row ends are neighbours on a torus
    m = topology.mesh2d(5, 5, "eth_10g")
    assert len(topology.route(m, 0, 4)) == 5


def test_route_prefers_faster_links():
    m = topology.machine(gpus=4, gpus_per_switch=2, nvlink="nvlink2")
    # both paths have two hops; NVLink (150 GB/s) beats PCIe 3.0 (15.75 GB/s)
    assert topology.route(m, "h0.gpu0", "h0.gpu1") == ("h0.gpu0", "h0.nvswitch", "h0.gpu1")
    pcie_only = topology.machine(gpus=4, gpus_per_switch=2, nvlink=None)
    assert topology.route(pcie_only, "h0.gpu0", "h0.gpu1") == ("h0.gpu0", "h0.pcie0", "h0.gpu1")


# ---------------------------------------------------------------- mesh vs torus

# even rows: the snake ends in column 0, one wrap-around link from where it started
@pytest.mark.parametrize("rows,cols", [(4, 4), (4, 3), (6, 2), (4, 5)])
def test_torus_beats_mesh_for_ring_allreduce(rows, cols):
    n = rows * cols
    nbytes = 2 * n * 10**6
    link = "nvlink2"
    bw, lat = hardware.link(link).bandwidth, hardware.link(link).latency
    order = topology.snake_order(rows, cols)
    trace = ring_allreduce_trace(n, nbytes)
    mesh, torus = topology.mesh2d(rows, cols, link), topology.torus2d(rows, cols, link)
    one_way = {name: map_trace(g, trace, order).time for name, g in (("mesh", mesh), ("torus", torus))}
    # One way round: the mesh's closing hop crosses rows-1 links (no sharing), the torus's one. A message
    # pays its start-up once, so the detour costs nothing; charged per link, it costs rows-2 more start-ups.
    steps = 2 * (n - 1)
    assert one_way["torus"] == pytest.approx(steps * (lat + nbytes / n / bw))
    assert one_way["mesh"] == pytest.approx(one_way["torus"])
    per_link = map_trace(mesh, trace, order, startup="links").time
    assert per_link == pytest.approx(steps * ((rows - 1) * lat + nbytes / n / bw))
    assert map_trace(torus, trace, order, startup="links").time < per_link
    both = {name: map_trace(g, topology.mirrored(trace), order) for name, g in (("mesh", mesh), ("torus", torus))}
    # Both ways round: on the torus every flow has its own link direction (half the bytes each);
    # on the mesh each closing path shares links with the other ring, so those flows run at B/2.
    assert both["torus"].time == pytest.approx(steps * (lat + nbytes / (2 * n) / bw))
    assert both["torus"].max_flows == 1
    assert both["mesh"].max_flows == 2
    assert both["mesh"].time == pytest.approx(steps * (lat + nbytes / n / bw))
    assert both["mesh"].time - steps * lat == pytest.approx(2 * (both["torus"].time - steps * lat))


def test_two_row_mesh_already_holds_the_ring():
    # With two rows the snake's closing hop is a single mesh link: nothing to gain from wrap-around.
    n, nbytes = 8, 8 * 10**6
    order = topology.snake_order(2, 4)
    trace = topology.mirrored(ring_allreduce_trace(n, nbytes))
    mesh = map_trace(topology.mesh2d(2, 4, "eth_10g"), trace, order)
    torus = map_trace(topology.torus2d(2, 4, "eth_10g"), trace, order)
    assert mesh.time == pytest.approx(torus.time)
    assert mesh.max_flows == 1


def test_partially_filled_pod_keeps_only_full_rows_and_columns_wraps():
    rows, cols, used = 4, 4, 10                       # rows 0-1 full, row 2 has 2 nodes
    g = topology.torus_pod(rows, cols, used, "eth_10g")
    wraps = {tuple(sorted((u, v))) for u, v, d in g.edges(data=True) if d["wrap"]}
    assert wraps == {(0, 3), (4, 7)}                  # rows 0 and 1; no column reaches row 3
    full = topology.torus_pod(rows, cols, rows * cols, "eth_10g")
    assert nx.utils.edges_equal(full.edges(), topology.torus2d(rows, cols, "eth_10g").edges())
    assert all(full.degree(v) == 4 for v in full)


# ---------------------------------------------------------------- machines and clusters

def test_keep_the_pcie_link_next_to_the_nic_free():
    c = topology.cluster(2, gpus_per_host=8, gpus_per_switch=2, nvlink="nvlink2", network="eth_100g")
    m = 10**9
    pcie, nic = hardware.link("pcie3_x16"), hardware.link("eth_100g")
    near = map_flows(c, topology.staged_exchange(c, "h0.gpu0", m))      # gpu0 sits on the NIC's switch
    far = map_flows(c, topology.staged_exchange(c, "h0.gpu2", m))
    # near: the GPU copy and the arriving network data share pcie0 -> cpu0: each gets half of PCIe
    assert near.steps[0].link_flows[("h0.pcie0", "h0.cpu0")] == 2
    assert near.bottleneck == ("h0.pcie0", "h0.cpu0") or near.bottleneck == ("h0.cpu0", "h0.pcie0")
    assert near.time >= m / (pcie.bandwidth / 2)
    # far: the NIC's port is the only limit
    assert far.max_flows == 1
    assert far.time == pytest.approx(m / nic.bandwidth, rel=1e-3)
    assert far.time < near.time


def test_cluster_ranks_and_bottleneck_is_the_network():
    hosts, per = 2, 4
    c = topology.cluster(hosts, gpus_per_host=per, network="eth_25g")
    assert topology.rank_nodes(c) == {h * per + j: f"h{h}.gpu{j}" for h in range(hosts) for j in range(per)}
    res = map_trace(c, ring_allreduce_trace(hosts * per, 8 * 10**6))
    assert "net" in res.bottleneck or any("nic" in str(v) for v in res.bottleneck)


def test_tree_has_one_root_and_leaves_are_ranks():
    g = topology.tree(8, arity=2)
    assert sum(1 for v, d in g.nodes(data=True) if d["kind"] == "switch") == 4 + 2 + 1
    assert nx.is_tree(g)
    assert len(topology.route(g, 0, 7)) - 1 == 6      # up three levels, down three


def test_fat_tree_uplinks_carry_the_leaf_links_below_them():
    plain, fat = topology.tree(8, 2, "eth_10g"), topology.tree(8, 2, "eth_10g", fat=True)
    leaf = plain[0]["s1.0"]["bandwidth"]
    assert fat[0]["s1.0"]["bandwidth"] == leaf
    assert fat["s2.0"]["s1.0"]["bandwidth"] == 2 * leaf and fat["s3.0"]["s2.0"]["bandwidth"] == 4 * leaf
    assert all(d["bandwidth"] == leaf for *_, d in plain.edges(data=True))     # one rate: oversubscribed
    with pytest.raises(ValueError, match="fat"):
        topology.tree(8, 2, fat="yes")


def test_fully_connected_has_no_sharing_for_all_to_all():
    n = 5
    g = topology.fully_connected(n, "nvlink3")
    flows = [Flow(0, i, j, 1000) for i in range(n) for j in range(n) if i != j]
    assert map_flows(g, flows).max_flows == 1


# ---------------------------------------------------------------- bad input

def test_disconnected_graph_is_refused():
    g = nx.Graph()
    g.add_edge(0, 1, bandwidth=1e9, latency=0.0)
    g.add_edge(2, 3, bandwidth=1e9, latency=0.0)
    with pytest.raises(ValueError, match="connected"):
        map_flows(g, [Flow(0, 0, 1, 10)])


def test_unknown_link_preset_is_refused():
    with pytest.raises(ValueError, match="unknown link 'ethernet_9000'"):
        topology.ring(4, link="ethernet_9000")
    with pytest.raises(ValueError, match="unknown link"):
        topology.cluster(2, network="carrier_pigeon")


@pytest.mark.parametrize("call,match", [
    (lambda: topology.ring(1), "n must be >= 2"),
    (lambda: topology.mesh2d(0, 3), "rows must be >= 1"),
    (lambda: topology.torus_pod(4, 4, 17), "used must be >= 2 and <= 16"),
    (lambda: topology.machine(gpus=6, gpus_per_switch=4), "multiple of gpus_per_switch"),
    (lambda: topology.star(3, hub="cloud"), "hub must be"),
    (lambda: topology.ring(3, bandwidth=-1.0), "bandwidth must be > 0"),
    (lambda: topology.route(topology.ring(3), 0, 9), "dst 9 is not a node"),
    (lambda: map_trace(topology.ring(3), ring_allreduce_trace(4, 400)), "rank 3 has none"),
    (lambda: map_trace(topology.ring(3), "trace"), "trace must be"),
    (lambda: map_trace(topology.ring(3), ring_allreduce_trace(3, 300), [0, 0, 1]), "different node"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_zero_bandwidth_link_is_refused():
    g = path_graph(2, 0.0, 0.0)
    with pytest.raises(ValueError, match="bandwidth of link 0-1 must be > 0"):
        map_flows(g, [])


def test_mirrored_keeps_every_byte():
    t = ring_allreduce_trace(4, 4001 * 4)
    both = topology.mirrored(t)
    assert int(both.bytes_sent.sum()) == int(t.bytes_sent.sum())
    assert len(both.messages) == 2 * len(t.messages)


# ---------------------------------------------------------------- traces from commlib.collectives.simulate

collectives = pytest.importorskip("commlib.collectives.simulate")


def _arrays(n, length):
    import numpy as np
    return [np.full(length, r, dtype=np.float32) for r in range(n)]


def test_collectives_ring_on_ring_matches_cost():
    n, length = 6, 6000
    _, trace = collectives.allreduce(_arrays(n, length), "ring")
    item = hardware.link("eth_25g")
    res = map_trace(topology.ring(n, "eth_25g"), trace)
    assert res.time == pytest.approx(cost.allreduce_time(4 * length, n, item.bandwidth, item.latency))


def test_collectives_torus_algorithm_on_torus_matches_cost_and_ties_mesh_one_way():
    rows, cols, length = 4, 4, 4096
    _, trace = collectives.allreduce(_arrays(rows * cols, length), "torus", grid=(rows, cols))
    item = hardware.link("nvlink2")
    on_torus = map_trace(topology.torus2d(rows, cols, "nvlink2"), trace)
    on_mesh = map_trace(topology.mesh2d(rows, cols, "nvlink2"), trace)
    want = cost.torus_allreduce_time(4 * length, rows, cols, item.bandwidth, item.latency)
    assert on_torus.time == pytest.approx(want)
    # Each row's and column's ring goes one way, so the mesh's closing paths share no link direction: with
    # one start-up per message the mesh ties; charged per link, its longer closing paths cost it start-ups.
    assert on_mesh.time == pytest.approx(on_torus.time)
    assert map_trace(topology.mesh2d(rows, cols, "nvlink2"), trace, startup="links").time > on_torus.time


def test_hierarchical_sends_less_through_the_nic_than_a_flat_ring():
    hosts, per, length = 2, 8, 2**16
    n, m = hosts * per, 4 * length
    c = topology.cluster(hosts, gpus_per_host=per, network="eth_100g")
    _, flat = collectives.allreduce(_arrays(n, length), "ring")
    _, hier = collectives.allreduce(_arrays(n, length), "hierarchical", hosts=hosts)
    flat_nic = map_trace(c, flat).load("h0.nic", "net")
    hier_nic = map_trace(c, hier).load("h0.nic", "net")
    assert flat_nic == pytest.approx(2 * (n - 1) / n * m)        # one ring boundary per host, every step
    assert hier_nic == pytest.approx(2 * (hosts - 1) / hosts * m)  # the g shards of M/g cross once each way
    assert map_trace(c, hier).time < map_trace(c, flat).time


# ---------------------------------------------------------------- a parameter server on a star

@SETTINGS
@given(n=st.integers(1, 8), k=st.integers(1, 4), chunk=st.integers(1, 10**6),
       link=st.sampled_from(["eth_1g", "eth_10g", "eth_100g", "pcie3_x16"]), latency=st.sampled_from([None, 0.0]))
def test_ps_round_on_a_star_takes_ps_time_without_overlap(n, k, chunk, link, latency):
    # The mapping runs the trace's push step, then its pull step: cost.ps_time with pipelined=False.
    # Every transfer crosses two links (spoke to switch, switch to spoke) and pays its start-up alpha once.
    nbytes = 4 * k * chunk
    g, run = topology.ps_star(n, nbytes, servers=k, link=link, latency=latency)
    item = hardware.link(link)
    alpha = item.latency if latency is None else latency
    want = cost.ps_time(nbytes, n, item.bandwidth, servers=k, latency=alpha, pipelined=False)
    assert math.isclose(run.time, want, rel_tol=1e-12)
    assert len(run.steps) == 2
    assert run.max_flows == max(n, k)            # n flows on a server's link, k on a worker's


@SETTINGS
@given(n=st.integers(1, 8), k=st.integers(1, 3), chunk=st.integers(1, 1000))
def test_ps_star_link_loads_are_the_closed_form_volumes(n, k, chunk):
    m = 4 * k * chunk
    g, run = topology.ps_star(n, m, servers=k, link="eth_10g")
    for j in range(n, n + k):                    # a server receives n shards of M/k and sends them back
        assert run.load("hub", j) == run.load(j, "hub") == n * m // k
    for i in range(n):                           # a worker pushes M and pulls M
        assert run.load(i, "hub") == run.load("hub", i) == m
    if n > k:                                    # a server's link is the busier: it throttles the round
        assert set(run.bottleneck) & set(range(n, n + k))


def test_ps_star_one_server_is_chapter_3s_hot_spot():
    # P = n + 1 processes, one of them the server: its link carries 2N(P-1) bytes in both directions together
    n, m = 7, 4 * 10**6
    g, run = topology.ps_star(n, m)
    assert run.load(n, "hub") + run.load("hub", n) == 2 * m * ((n + 1) - 1)
    assert g.nodes[n]["kind"] == "server" and g.nodes[n]["rank"] == n
    assert sum(1 for _, d in g.nodes(data=True) if d["kind"] == "server") == 1


@pytest.mark.parametrize("kwargs, match", [
    ({"workers": 0, "nbytes": 400}, "workers"),
    ({"workers": 2, "nbytes": 400, "servers": 0}, "servers"),
    ({"workers": 2, "nbytes": 402}, "nbytes"),
    ({"workers": 2, "nbytes": 12, "servers": 2}, "nbytes"),
    ({"workers": 2, "nbytes": 400, "link": "carrier_pigeon"}, "link"),
])
def test_ps_star_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        topology.ps_star(**kwargs)


# ---------------------------------------------------------------- max-min fair sharing

def test_max_min_two_flows_on_one_link_split_it_evenly():
    rates = topology.max_min_rates({"a": [(0, 1)], "b": [(0, 1)]}, {(0, 1): 10.0})
    assert rates == {"a": (5.0, (0, 1)), "b": (5.0, (0, 1))}


def test_max_min_hands_an_unusable_share_to_the_other_flows():
    # worked by hand: link 1->2 (capacity 3) is shared by a, x and y -> 1 each; a cannot use more
    # than 1 on link 0->1 (capacity 3), so d, alone with a there, gets the 2 that are left
    paths = {"a": [(0, 1), (1, 2)], "x": [(1, 2)], "y": [(1, 2)], "d": [(0, 1)]}
    rates = topology.max_min_rates(paths, {(0, 1): 3.0, (1, 2): 3.0})
    assert {f: r for f, (r, _) in rates.items()} == pytest.approx({"a": 1.0, "x": 1.0, "y": 1.0, "d": 2.0})
    assert rates["d"][1] == (0, 1) and rates["a"][1] == (1, 2)


def test_unused_share_shortens_the_step_against_equal_sharing():
    # same pattern on a path graph, B = 1 GB/s, d carries 2 m: max-min runs it at 2/3 B (3 m / B),
    # equal sharing at B/2 (4 m / B); a, x, y take 3 m / B either way
    m = 10**8
    g = path_graph(3, 1e9, 0.0)
    flows = [Flow(0, 0, 2, m), Flow(0, 1, 2, m), Flow(0, 1, 2, m), Flow(0, 0, 1, 2 * m)]
    assert map_flows(g, flows).time == pytest.approx(3 * m / 1e9)
    assert map_flows(g, flows, sharing="equal").time == pytest.approx(4 * m / 1e9)


def test_finishing_flows_speed_up_the_others():
    # a 1 GB flow 0->2 shares each of its links with a 0.2 GB flow: all at B/2 until 0.4 s, then the
    # big flow has B alone for its last 0.8 GB: 1.2 s; equal sharing keeps B/2 to the end: 2 s
    g = path_graph(3, 1e9, 0.0)
    flows = [Flow(0, 0, 2, 10**9), Flow(0, 0, 1, 2 * 10**8), Flow(0, 1, 2, 2 * 10**8)]
    assert map_flows(g, flows).time == pytest.approx(1.2)
    assert map_flows(g, flows, sharing="equal").time == pytest.approx(2.0)
    assert map_flows(g, flows).sharing == "max-min"


def test_sharing_must_be_known():
    with pytest.raises(ValueError, match="sharing must be one of"):
        map_flows(path_graph(2, 1e9, 0.0), [], sharing="fair")


@st.composite
def flow_sets(draw):
    """A random connected graph with random capacities, and random flows with random paths on it."""
    nodes = draw(st.integers(2, 7))
    g = nx.random_labeled_tree(nodes, seed=draw(st.integers(0, 10**6)))
    extra = draw(st.lists(st.tuples(st.integers(0, nodes - 1), st.integers(0, nodes - 1)), max_size=6))
    g.add_edges_from((a, b) for a, b in extra if a != b)
    for u, v in g.edges:
        g.edges[u, v]["bandwidth"] = draw(st.floats(1.0, 100.0))
        g.edges[u, v]["latency"] = 0.0
    pairs = draw(st.lists(st.tuples(st.integers(0, nodes - 1), st.integers(0, nodes - 1))
                          .filter(lambda p: p[0] != p[1]), min_size=1, max_size=9))
    sizes = draw(st.lists(st.integers(1, 1000), min_size=len(pairs), max_size=len(pairs)))
    return g, [Flow(0, a, b, m) for (a, b), m in zip(pairs, sizes)]


def _rates(g, flows):
    paths = {i: list(zip(p[:-1], p[1:])) for i, p in enumerate(topology.route(g, f.src, f.dst) for f in flows)}
    capacity = {e: g.edges[e]["bandwidth"] for p in paths.values() for e in p}
    return paths, capacity, topology.max_min_rates(paths, capacity)


@settings(max_examples=60, deadline=None)
@given(flow_sets())
def test_max_min_never_overfills_a_link(case):
    g, flows = case
    paths, capacity, rates = _rates(g, flows)
    for e, cap in capacity.items():
        assert sum(rates[i][0] for i, p in paths.items() if e in p) <= cap * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(flow_sets())
def test_max_min_is_optimal_no_flow_can_gain_without_a_slower_one_losing(case):
    # the bottleneck condition: every flow crosses a full link on which no flow is faster than it,
    # so raising it would take rate from a flow whose rate is <= its own
    g, flows = case
    paths, capacity, rates = _rates(g, flows)
    for i, path in paths.items():
        r = rates[i][0]

        def full_and_fastest(e, r=r):
            on = [rates[j][0] for j, p in paths.items() if e in p]
            return math.isclose(sum(on), capacity[e], rel_tol=1e-9) and r >= max(on) * (1 - 1e-9)

        assert any(full_and_fastest(e) for e in path)
        assert full_and_fastest(rates[i][1])          # the bottleneck it reports is such a link


@settings(max_examples=60, deadline=None)
@given(flow_sets())
def test_max_min_is_never_slower_than_equal_sharing(case):
    g, flows = case
    fair, equal = map_flows(g, flows), map_flows(g, flows, sharing="equal")
    assert fair.time <= equal.time * (1 + 1e-9)
    for f in flows:                                   # and no flow beats its path's slowest link
        assert fair.time >= f.nbytes / min(g.edges[e]["bandwidth"] for e in
                                           zip(fair.routes[(f.src, f.dst)], fair.routes[(f.src, f.dst)][1:])) * (1 - 1e-9)


@SETTINGS
@given(n=st.integers(2, 8), chunk=st.integers(1, 10**6), both=st.booleans(),
       shape=st.sampled_from(["ring", "star", "torus", "mesh"]))
def test_max_min_equals_equal_sharing_on_symmetric_patterns(n, chunk, both, shape):
    # a ring all-reduce (and two of them in opposite directions): in every step all flows carry the
    # same bytes, so the busiest link's equal share is everybody's max-min rate until the step ends
    trace = ring_allreduce_trace(n, 2 * chunk * n)    # even messages: both halves alike when mirrored
    trace = topology.mirrored(trace) if both else trace
    if shape == "ring":
        g, order = topology.ring(n, "eth_10g"), None
    elif shape == "star":
        g, order = topology.star(n, "eth_10g", hub="switch"), None
    else:
        grid = topology.torus2d if shape == "torus" else topology.mesh2d
        g, order = grid(2, 4, "eth_10g"), list(range(n))
    fair, equal = map_trace(g, trace, order), map_trace(g, trace, order, sharing="equal")
    assert fair.time == pytest.approx(equal.time, rel=1e-12)


# ---------------------------------------------------------------- the V100 hybrid cube-mesh

def test_cube_mesh_uses_six_links_per_gpu_and_leaves_some_pairs_unlinked():
    m = topology.machine(nvlink_layout="cube_mesh", nic=None)
    per_link = hardware.link("nvlink2").bandwidth / 6
    for j in range(8):
        nv = [d for _, v, d in m.edges(f"h0.gpu{j}", data=True) if str(v).startswith("h0.gpu")]
        assert sum(d["nvlinks"] for d in nv) == 6
        assert sum(d["bandwidth"] for d in nv) == pytest.approx(6 * per_link)
    assert not m.has_edge("h0.gpu0", "h0.gpu5") and "h0.nvswitch" not in m
    assert m.edges["h0.gpu0", "h0.gpu3"]["bandwidth"] == pytest.approx(2 * per_link)   # NV2: 50 GB/s
    with pytest.raises(ValueError, match="nvlink_layout"):
        topology.machine(nvlink_layout="torus")
    with pytest.raises(ValueError, match="gpus must be 8"):
        topology.machine(gpus=4, nvlink_layout="cube_mesh")


def test_ring_on_the_cube_mesh_runs_at_one_link_and_a_second_ring_halves_it():
    order = [f"h0.gpu{j}" for j in (0, 1, 5, 4, 7, 6, 2, 3)]     # every hop an NVLink pair
    m, nbytes = topology.machine(nvlink_layout="cube_mesh", nic=None), 8 * 10**8
    trace = topology.allreduce_trace(8, nbytes)
    one = map_trace(m, trace, order)
    two = map_trace(m, topology.mirrored(trace), order)
    per_link = hardware.link("nvlink2").bandwidth / 6
    assert one.time == pytest.approx(cost.allreduce_time(nbytes, 8, per_link, hardware.link("nvlink2").latency))
    assert two.time == pytest.approx(one.time / 2, rel=1e-3)


def test_allreduce_trace_is_scaled_to_the_requested_bytes():
    # ring, halving-doubling (n a power of two) and hierarchical (4 per host x 2 hosts:
    # 3/4 M + 2 * 1/2 * M/4 + 3/4 M) all send 2 (n-1)/n = 1.75 M per rank
    m = 8 * 2**20
    for algorithm, kw in (("ring", {}), ("hierarchical", {"hosts": 2}), ("halving_doubling", {})):
        trace = topology.allreduce_trace(8, m, algorithm, **kw)
        assert trace.bytes_sent.tolist() == [2 * 7 * m // 8] * 8


def test_ring_search_finds_every_ring_and_a_cover_that_uses_each_link_once():
    from collections import Counter
    rings = topology.hamiltonian_rings(topology.DGX1_NVLINKS)
    for r in rings:
        assert sorted(r) == list(range(8)) and r[0] == 0 and r[1] < r[-1]
        assert all(tuple(sorted(h)) in topology.DGX1_NVLINKS for h in zip(r, r[1:] + r[:1]))
    assert len(set(rings)) == len(rings)
    # a 4-cycle with one chord has exactly one ring through all four ranks; K4 has three
    assert topology.hamiltonian_rings({(0, 1): 1, (1, 2): 1, (2, 3): 1, (0, 3): 1, (0, 2): 1}) == [(0, 1, 2, 3)]
    k4 = {(a, b): 1 for a in range(4) for b in range(a + 1, 4)}
    assert len(topology.hamiltonian_rings(k4)) == 3
    cover = topology.ring_cover(topology.DGX1_NVLINKS)
    used = Counter(tuple(sorted(h)) for r in cover for h in zip(r, r[1:] + r[:1]))
    assert used == Counter(topology.DGX1_NVLINKS) and len(cover) == 3
    assert topology.CUBE_MESH_CHANNELS == cover
    wide = topology.widest_ring(topology.DGX1_NVLINKS)
    assert all(topology.DGX1_NVLINKS[tuple(sorted(h))] == 2 for h in zip(wide, wide[1:] + wide[:1]))
    with pytest.raises(ValueError, match="uses each link once"):
        topology.ring_cover(k4)                     # three links per rank: no set of rings uses each once
    with pytest.raises(ValueError, match="ranks"):
        topology.hamiltonian_rings({(1, 2): 1, (2, 3): 1, (1, 3): 1})


def test_bisection_links_tries_the_last_node_in_the_smaller_half_of_an_odd_graph():
    import networkx as nx
    g = nx.complete_graph(4)
    g.add_edge(0, 4)                                  # node 4 hangs from node 0 alone
    nx.set_node_attributes(g, {v: v for v in g.nodes}, "rank")
    # {0, 4} against {1, 2, 3} cuts the three links of node 0 inside the clique; a split with node 4 on the
    # larger side cuts at least four
    assert topology.bisection_links(g) == 3


def _phase_seconds(mapped, prefix):
    return sum(s.time for s in mapped.steps if s.slowest is not None and s.slowest.label.startswith(prefix))


@pytest.mark.parametrize("nvlink", ["nvlink2", None])
def test_pipelined_bound_is_the_longest_phase_the_two_inside_phases_together(nvlink):
    # with NVLink the network phase is the longest; without it (PCIe inside the host) the inside phases may be
    c = topology.cluster(2, gpus_per_host=4, network="eth_100g", nvlink=nvlink)
    hier = map_trace(c, topology.allreduce_trace(8, 2**20, "hierarchical", hosts=2))
    inside, network = _phase_seconds(hier, "intra"), _phase_seconds(hier, "inter")
    assert math.isclose(inside + network, hier.time)
    busiest = max(b / c.edges[e]["bandwidth"] for e, b in hier.link_bytes.items())
    assert math.isclose(topology.pipelined_bound(hier), max(inside, network, busiest))
    assert topology.pipelined_bound(hier) < hier.time


def test_busiest_link_sums_a_link_directions_bytes_over_every_step():
    c = topology.cluster(2, gpus_per_host=8, network="eth_100g", nvlink=None)
    hier = map_trace(c, topology.allreduce_trace(16, 2**20, "hierarchical", hosts=2))
    edge, seconds = topology.busiest_link(hier)
    total = sum(s.link_bytes.get(edge, 0) for s in hier.steps)
    assert math.isclose(seconds, total / c.edges[edge]["bandwidth"])
    for e in hier.link_bytes:
        assert sum(s.link_bytes.get(e, 0) for s in hier.steps) / c.edges[e]["bandwidth"] <= seconds * (1 + 1e-12)


def test_pipelined_bound_counts_the_link_every_phase_crosses_on_a_pcie_only_host():
    # Without NVLink the inside rings enter and leave PCIe switch 0 (7/8 M each way in each of the two inside
    # phases) and the network shards of the six GPUs on other switches reach the card through it (6/8 M):
    # 2.5 M each way over the switch's link to CPU 0, more than any one phase takes, and more than the flat ring.
    m = 64 * 2**20
    r = topology.hierarchy_runs(2, 8, m, "eth_100g", nvlink=None)
    hier = r["hierarchical"]
    pcie = hardware.link("pcie3_x16").bandwidth
    for edge in (("h0.pcie0", "h0.cpu0"), ("h0.cpu0", "h0.pcie0")):
        assert hier.load(*edge) == 5 * m // 2
    assert topology.busiest_link(hier)[0] in {("h0.pcie0", "h0.cpu0"), ("h0.cpu0", "h0.pcie0"),
                                                ("h1.pcie0", "h1.cpu0"), ("h1.cpu0", "h1.pcie0")}
    assert math.isclose(topology.pipelined_bound(hier), 2.5 * m / pcie)
    assert topology.pipelined_bound(hier) > r["ring"].time       # even pipelined, the flat ring wins here


def test_pipelined_bound_with_nvlink_is_still_the_network_phase():
    r = topology.hierarchy_runs(2, 8, 64 * 2**20, "eth_100g", nvlink="nvlink2")
    hier = r["hierarchical"]
    edge, seconds = topology.busiest_link(hier)
    assert "net" in edge                                            # the card is the busiest link
    assert math.isclose(topology.pipelined_bound(hier), _phase_seconds(hier, "inter"))
    assert seconds < topology.pipelined_bound(hier) < r["ring"].time


def test_pipelined_bound_of_a_ring_is_its_time():
    # both phases of a ring run on the same links: nothing overlaps
    c = topology.cluster(2, gpus_per_host=4, network="eth_100g")
    flat = map_trace(c, topology.allreduce_trace(8, 2**20, "ring"))
    assert math.isclose(topology.pipelined_bound(flat), flat.time)
