"""Claim tests for chapters 3 (parameter servers) and 6 (topologies): every sentence that compares or
concludes is rerun here, small and deterministic, and its direction asserted against its control.

The chapters glue the same functions at full size; these runs are smaller but the same models.
"""

from __future__ import annotations

import networkx as nx
import pytest

from commlib import cost, hardware
from commlib.network import placement, topology
from commlib.parameter_servers import simulate as ps

# ---------------------------------------------------------------- chapter 6


@pytest.mark.parametrize("n, link", [(4, "eth_10g"), (8, "pcie3_x16"), (6, "nvlink2")])
def test_two_rings_halve_the_time_on_a_ring_of_links_but_not_on_a_switch(n, link):
    r = topology.duplex_rings(n, 4 * 10**6 * n, link)
    assert r["ring of links", "speed-up"] > 1.8          # halves, up to the start-ups that stay
    assert r["switch", "speed-up"] == pytest.approx(1.0)  # one link per rank: no idle direction to use


def test_max_min_equals_equal_share_on_the_mesh_ring_and_beats_it_on_a_byteps_round():
    r = topology.sharing_comparison(nbytes=4 * 2**20, ps_bytes=10**6)
    for name in ("mesh one way", "mesh both ways"):
        assert r[name, "max-min"] == pytest.approx(r[name, "equal"], rel=1e-12)
    assert r["byteps", "max-min"] < r["byteps", "equal"] / 1.05


def test_cube_mesh_one_ring_is_slower_than_the_switch_stand_in_and_six_rings_match_it():
    r = topology.intra_host_reduction(10**8)
    assert 2.5 * r["switch", 1] < r["cube mesh", 1] < 3.5 * r["switch", 1]   # 50 GB/s per hop against 150 GB/s
    assert r["cube mesh", 2] == pytest.approx(r["cube mesh", 1] / 2, rel=0.01)
    assert r["switch", 2] == pytest.approx(r["switch", 1])       # the lumped link has no idle direction
    assert r["cube mesh", 6] == pytest.approx(r["switch", 1], rel=0.02)   # every link busy: the lumped time
    assert r["cube mesh", 6] < 0.2 * r["exchange"]                # small next to the exchange through the card


def test_the_cube_mesh_ring_is_the_widest_two_links_on_every_hop():
    ring = topology.CUBE_MESH_RING
    assert sorted(ring) == list(range(8))
    assert min(topology.DGX1_NVLINKS[tuple(sorted(h))] for h in zip(ring, ring[1:] + ring[:1])) == 2


def test_covering_rings_beat_one_ring_on_the_torus_and_the_odd_mesh_pair_nears_the_torus_ring():
    from commlib.experiments import network
    nbytes = network.SMALL_SIZE
    cover = network.rings_run("torus", 4, 4, network.covering_rings("torus", 4, 4), nbytes)
    closed = network.ring_time("torus", 4, 4, tuple(topology.grid_ring(4, 4)), "both ways", nbytes)
    assert cover.max_flows == 1 and cover.time < 0.8 * closed
    for a, b in network.disjoint_pairs("mesh", 3, 3).values():
        assert a != b and len(a) == 9
    pair = min(network.rings_run("mesh", 3, 3, p, network.SIZE).time for p in network.disjoint_pairs("mesh", 3, 3).values())
    single = network.best_single_ring("mesh", 3, 3, "both ways")[1]
    torus = network.best_single_ring("torus", 3, 3, "both ways")[1]
    assert pair < 0.6 * single and pair < 1.1 * torus
    assert pair > network.ring_bound("mesh", 3, 3, network.SIZE)


def test_the_cube_mesh_channels_use_every_nvlink_once():
    from collections import Counter
    used = Counter()
    for ring in topology.CUBE_MESH_CHANNELS:
        assert sorted(ring) == list(range(8))
        used.update(tuple(sorted((a, b))) for a, b in zip(ring, ring[1:] + ring[:1]))
    assert used == Counter(topology.DGX1_NVLINKS)


def test_snake_on_the_mesh_gains_nothing_from_two_rings_but_a_closed_ring_matches_the_torus():
    order = topology.snake_order(4, 4)
    one = topology.allreduce_trace(16, 64 * 2**20)     # the chapter's size: start-ups are small next to it
    both = topology.mirrored(one)
    mesh, torus = topology.mesh2d(4, 4, "nvlink2"), topology.torus2d(4, 4, "nvlink2")
    t = {(name, w): topology.map_trace(g, tr, order).time for name, g in (("mesh", mesh), ("torus", torus))
         for w, tr in (("one", one), ("both", both))}
    assert t["torus", "both"] < 0.55 * t["torus", "one"]
    assert t["mesh", "both"] == pytest.approx(t["mesh", "one"], rel=0.01)
    assert t["mesh", "one"] == pytest.approx(t["torus", "one"])    # one start-up a message: the detour costs nothing
    # charged per link, the mesh pays the detour's start-ups
    assert topology.map_trace(mesh, one, order, startup="links").time > t["torus", "one"]
    closed = topology.grid_ring(4, 4)
    assert topology.is_closed_ring(mesh, closed) and not topology.is_closed_ring(mesh, order)
    run = topology.map_trace(mesh, both, closed)
    assert run.max_flows == 1 and run.time == pytest.approx(t["torus", "both"], rel=1e-9)
    assert run.time == pytest.approx(topology.map_trace(topology.ring(16, "nvlink2"), both).time, rel=1e-9)


@pytest.mark.parametrize("rows, cols", [(3, 3), (3, 5), (5, 3)])
def test_a_mesh_with_an_odd_number_of_nodes_has_no_closed_ring_and_its_torus_has(rows, cols):
    assert topology.ring_orders(topology.mesh2d(rows, cols), closed_only=True) == []
    assert topology.ring_orders(topology.torus2d(rows, cols), closed_only=True)


@pytest.mark.parametrize("rows, cols", [(2, 3), (4, 4), (4, 5), (6, 3)])
def test_grid_ring_is_closed_on_every_grid_with_an_even_number_of_rows(rows, cols):
    assert topology.is_closed_ring(topology.mesh2d(rows, cols), topology.grid_ring(rows, cols))


def test_torus_doubles_the_bisection_and_halves_the_diameter_of_a_4x4_mesh():
    import networkx as nx
    mesh, torus = topology.mesh2d(4, 4), topology.torus2d(4, 4)
    assert (topology.bisection_links(mesh), topology.bisection_links(torus)) == (4, 8)
    assert (nx.diameter(mesh), nx.diameter(torus)) == (6, 4)
    assert topology.bisection_links(topology.ring(8)) == 2


def test_with_gpudirect_rdma_each_gpu_gets_the_measured_rate_of_its_own_path():
    from commlib.experiments import network as runs
    # GPUs 0-1 under the card's switch, 2-3 through CPU 0 (same socket), 4-7 across the socket link
    assert [runs.pcie_path(f"h0.gpu{j}") for j in range(8)] == ["PIX"] * 2 + ["PHB"] * 2 + ["SYS"] * 4
    model = {j: runs.rdma_exchange_time(f"h0.gpu{j}", 10**8, measured=False) for j in (0, 2, 4)}
    assert model[0] == pytest.approx(model[2], rel=1e-3) == pytest.approx(model[4], rel=1e-3)   # PCIe beats the card
    line = 10**8 / hardware.link("eth_100g").bandwidth
    # same switch: measured 105 Gb/s, above the card; one CPU: nothing measured, the link model's rate
    assert runs.rdma_exchange_time("h0.gpu0", 10**8) == pytest.approx(line, abs=50e-6)
    assert runs.rdma_exchange_time("h0.gpu2", 10**8) == pytest.approx(line, abs=50e-6)
    # across the sockets: BytePS's cross-socket measurement, 80 Gb/s, holds it below the card
    assert runs.rdma_exchange_time("h0.gpu4", 10**8) == pytest.approx(10**8 / 10e9, rel=1e-9)
    c = topology.cluster(2, gpus_per_host=8, nvlink=None)
    assert "h0.cpu0" not in topology.route(c, "h0.gpu0", "h1.gpu0")
    assert "h0.cpu0" in topology.route(c, "h0.gpu2", "h1.gpu2") and "h0.cpu1" not in topology.route(c, "h0.gpu2", "h1.gpu2")
    assert "h0.cpu1" in topology.route(c, "h0.gpu4", "h1.gpu4")


def test_rdma_and_staging_each_at_their_best_gpu_both_reach_the_line_rate():
    from commlib.experiments import network as runs
    line = 10**8 / hardware.link("eth_100g").bandwidth
    rdma = min(runs.rdma_exchange_time(g, 10**8) for g in runs.GPUS)
    staged = min(runs.staged_exchange_time(g, 10**8) for g in runs.GPUS)
    assert rdma == pytest.approx(line, abs=50e-6) and staged == pytest.approx(line, abs=50e-6)
    assert runs.staged_exchange_time("h0.gpu0", 10**8) > 1.2 * staged       # but not from the card's switch


def test_halving_doubling_on_the_tree_is_best_with_its_largest_exchanges_lowest():
    from commlib.experiments import network as runs
    orders = runs.level_placements(8)
    best = min(orders.values(), key=lambda p: runs.tree_time("halving_doubling", p))
    assert best == (0, 4, 2, 6, 1, 5, 3, 7)                      # distance 4 under a leaf switch
    found, seconds, tried = runs.tree_search("halving_doubling")
    assert tried == 315 and seconds == pytest.approx(runs.tree_time("halving_doubling", best), rel=1e-12)
    assert runs.tree_time("halving_doubling", tuple(range(8))) > 1.5 * seconds     # rank order: distance 4 at the root
    # the ring in rank order shares no link and is the fastest ring; at the gallery's size it beats halving-doubling
    g = topology.tree(8, 2, runs.TREE_LINK)
    ring_run = topology.map_trace(g, topology.allreduce_trace(8, runs.TREE_SIZE, "ring"))
    assert ring_run.max_flows == 1
    assert min(runs.tree_time("ring", p) for p in orders.values()) == pytest.approx(ring_run.time, rel=1e-12)
    assert ring_run.time < seconds
    # One start-up a message: the ring takes 14 alpha + 14 M/(8B), halving-doubling 6 alpha + 3 M/B (three steps of
    # M/2B each way), so halving-doubling wins below M = 8 alpha B / 1.25 = 6.4 alpha B; at a tenth of the size the ring
    # still wins. Charged per link (six through the root), the ring pays 84 alpha and halving-doubling 2 x (2 + 4 + 6)
    # = 24 alpha: the crossing moves to 60 alpha B / 1.25 = 48 alpha B.
    item = hardware.link(runs.TREE_LINK)
    alpha_b = item.latency * item.bandwidth
    assert runs.tree_crossover("message") == pytest.approx(6.4 * alpha_b, rel=1e-9)
    assert runs.tree_crossover("links") == pytest.approx(48 * alpha_b, rel=1e-9)
    small = runs.TREE_SIZE // 10
    assert small > runs.tree_crossover("message")
    assert (min(runs.tree_time("halving_doubling", p, small) for p in orders.values())
            > min(runs.tree_time("ring", p, small) for p in orders.values()))
    assert (min(runs.tree_time("halving_doubling", p, small, startup="links") for p in orders.values())
            < min(runs.tree_time("ring", p, small, startup="links") for p in orders.values()))


def test_on_a_fat_tree_halving_doubling_beats_the_ring_at_every_size():
    from commlib.experiments import network as runs
    orders = runs.level_placements(8).values()
    assert runs.tree_oversubscription(8) == 4.0
    for size in (runs.TREE_SIZE // 10, runs.TREE_SIZE, 8 * runs.TREE_SIZE):
        hd = min(runs.tree_time("halving_doubling", p, size, fat=True) for p in orders)
        ring = min(runs.tree_time("ring", p, size, fat=True) for p in orders)
        assert hd < ring
        assert ring <= min(runs.tree_time("ring", p, size) for p in orders)     # the fat tree is never slower


def test_the_double_binary_tree_on_the_tree_falls_between_the_ring_and_halving_doubling():
    """At the gallery's size, each at its best: the ring, then NCCL's double binary tree (its placement searched,
    its q tuned), then halving-doubling; the searched placement beats the 6 level placements and rank order."""
    from commlib.experiments import network as runs
    placement = runs.tree_dbt_placement()
    assert sorted(placement) == list(range(8))
    for q in (runs.TREE_DBT_SEARCH_CHUNKS, 32):
        mine = runs.tree_time("double_binary_tree", placement, chunks=q)
        others = [*runs.level_placements(8).values(), tuple(range(8))]
        assert all(mine < runs.tree_time("double_binary_tree", p, chunks=q) for p in others)
    times = [runs.tree_time("double_binary_tree", placement, chunks=q) for q in runs.TREE_DBT_CHUNKS]
    best_q = times.index(min(times))
    assert 0 < best_q < len(times) - 1                       # the grid of q brackets the best
    orders = runs.level_placements(8).values()
    ring = min(runs.tree_time("ring", p) for p in orders)
    hd = min(runs.tree_time("halving_doubling", p) for p in orders)
    assert ring < min(times) < hd
    with pytest.raises(ValueError):
        runs.tree_time("double_binary_tree", placement, chunks=0)


def test_the_best_tree_placement_shares_two_flows_low_and_four_at_the_root():
    from commlib.experiments import network as runs
    g = topology.placed(topology.tree(8, 2, runs.TREE_LINK), (0, 4, 2, 6, 1, 5, 3, 7))
    run = topology.map_trace(g, topology.allreduce_trace(8, runs.TREE_SIZE, "halving_doubling"))
    most = [max(s.link_flows.values()) for s in run.steps]
    assert most == [1, 2, 4, 4, 2, 1]                    # distance 4, 2, 1, then back: 1, 2, 4


def test_hierarchical_beats_the_flat_ring_on_two_hosts():
    c = topology.cluster(2, gpus_per_host=8, network="eth_100g")
    flat = topology.map_trace(c, topology.allreduce_trace(16, 16 * 2**20, "ring"))
    hier = topology.map_trace(c, topology.allreduce_trace(16, 16 * 2**20, "hierarchical", hosts=2))
    assert hier.time < flat.time
    assert flat.load("h0.nic", "net") > hier.load("h0.nic", "net")


def test_the_gpu_next_to_the_nic_slows_the_exchange():
    c = topology.cluster(2, gpus_per_host=8, nvlink_layout="cube_mesh")
    near = topology.map_flows(c, topology.staged_exchange(c, "h0.gpu0", 10**8)).time
    far = topology.map_flows(c, topology.staged_exchange(c, "h0.gpu2", 10**8)).time
    assert near > 1.2 * far


def test_nvlink_to_a_power9_beats_pcie_both_nominal_and_measured():
    nominal, measured = placement.power9_nvlink_ratios()
    assert 4 < nominal < 5 and 4 < measured < 6


def test_placement_ranking_and_where_a_parameter_server_wins():
    cl = placement.example_cluster(slots=4)
    # the chapter's bullets name the five placements in this order, fastest first
    order = [{"host3": 4}, {"host1": 2, "host3": 2}, [0, 1, 3, 4], {"host7": 4}, {"host3": 2, "host7": 2}]
    ranked = placement.rank_placements(cl, {str(i): p for i, p in enumerate(order)}, model="resnet50")
    assert [name for name, _ in ranked] == ["0", "1", "2", "3", "4"]
    assert [(e.bottleneck_kind, e.bottleneck_host) for _, e in ranked] == [
        ("intra", 3), ("inter", 3), ("inter", 0), ("intra", 7), ("inter", 7)]
    best = placement.estimate(cl, {"host3": 4}, model="resnet50")
    for other in ({"host1": 2, "host3": 2}, [0, 1, 3, 4], {"host7": 4}, {"host3": 2, "host7": 2}):
        assert best.time < placement.estimate(cl, other, model="resnet50").time
    spread = [0, 1, 3, 4]
    assert (placement.estimate(cl, spread, model="resnet50", mode="ps").time
            < placement.estimate(cl, spread, model="resnet50").time)
    assert (placement.estimate(cl, {"host3": 4}, model="resnet50", mode="ps").time > best.time)


# ---------------------------------------------------------------- chapter 3


@pytest.mark.parametrize("n", [3, 4, 8, 16, 33])
def test_k_equal_n_beats_the_ring_and_k_half_n_loses(n):
    m, b = 1e8, 12.5e9
    ring = cost.allreduce_time(m, n, b, algorithm="ring")
    assert ps.round_time(m, n, b, servers=n) < ring
    assert ps.round_time(m, n, b, servers=n // 2) > ring


@pytest.mark.parametrize("n", [4, 8, 16])
def test_byteps_improves_on_the_ring_with_any_number_of_cpu_machines(n):
    m, b = 1e8, 12.5e9
    ring = cost.allreduce_time(m, n, b, algorithm="ring")
    assert all(cost.byteps_time(m, n, k, b) < ring for k in range(1, 2 * n))


def test_overlapping_push_and_pull_halves_the_round():
    m, b = hardware.gradient_bytes("resnet50", "fp32"), hardware.link("eth_25g").bandwidth
    assert ps.round_time(m, 8, b, servers=2, pipelined=False) == pytest.approx(2 * ps.round_time(m, 8, b, servers=2))


def test_one_port_start_ups_make_a_single_server_slower_than_its_bandwidth_term():
    # the server's start-up term grows with n; the multi-port count (2 alpha) does not
    m, b, a = 1e6, 12.5e9, 5e-6
    gaps = [ps.round_time(m, n, b, latency=a) - ps.round_time(m, n, b, latency=a, one_port=False)
            for n in (2, 8, 32)]
    assert gaps[0] < gaps[1] < gaps[2]


def test_one_port_sharded_round_is_above_the_ring_for_a_small_gradient():
    # chapter 3: 1 MB on 25 Gb/s Ethernet, k = n separate servers; each piece of a shard pays its start-ups
    link = hardware.link("eth_25g")
    for n in (8, 32):
        one = ps.round_time(1e6, n, link.bandwidth, servers=n, latency=link.latency)
        two = ps.round_time(1e6, n, link.bandwidth, servers=n, latency=link.latency, one_port=False)
        ring = cost.allreduce_time(1e6, n, link.bandwidth, link.latency, algorithm="ring")
        assert two < ring < one


def test_gallery_halving_doubling_crowds_the_tree_and_the_ring_never_shares_a_link():
    n, nbytes = 8, 8 * 10**6
    hd = topology.allreduce_trace(n, nbytes, "halving_doubling")
    ring = topology.allreduce_trace(n, nbytes, "ring")
    tree = topology.map_trace(topology.tree(n, 2, "eth_10g"), hd)
    full = topology.map_trace(topology.fully_connected(n, "eth_10g"), hd)
    assert tree.max_flows > 1 and full.max_flows == 1
    assert tree.time > 1.5 * full.time
    for g in (topology.tree(n, 2, "eth_10g"), topology.star(n, "eth_10g", hub="switch"), topology.ring(n, "eth_10g")):
        assert topology.map_trace(g, ring).max_flows == 1


def test_both_all_reduces_on_two_hosts_are_bounded_by_host_zeros_card():
    c = topology.cluster(2, gpus_per_host=8, network="eth_100g")
    for algorithm, kw in (("ring", {}), ("hierarchical", {"hosts": 2})):
        run = topology.map_trace(c, topology.allreduce_trace(16, 16 * 2**20, algorithm, **kw))
        assert run.bottleneck == ("h0.nic", "net")


def test_parameter_server_link_is_the_bottleneck_of_the_star():
    g, run = topology.ps_star(4, 25 * 10**6, link="eth_10g")
    assert 4 in run.bottleneck and "hub" in run.bottleneck
    assert run.load("hub", 4) == 4 * run.load("hub", 0)


def test_a_partly_filled_pod_makes_the_snake_rings_meet_but_not_a_closed_ring():
    order = topology.snake_order(4, 4)
    pod = topology.torus_pod(4, 4, 10, "nvlink2")
    trace = topology.mirrored(topology.allreduce_trace(10, 16 * 2**20))
    run = topology.map_trace(pod, trace, order[:10])
    assert run.max_flows > 1
    closed = topology.ring_orders(pod, closed_only=True)
    assert (0, 1, 2, 3, 7, 6, 5, 9, 8, 4) in closed or (0, 4, 8, 9, 5, 6, 7, 3, 2, 1) in closed
    best = topology.map_trace(pod, trace, list(closed[0]))
    assert best.max_flows == 1 and best.time < run.time / 1.8
    full = topology.map_trace(topology.torus2d(4, 4, "nvlink2"),
                              topology.mirrored(topology.allreduce_trace(16, 16 * 2**20)), order)
    assert full.max_flows == 1


def test_two_machines_two_servers_only_tie_with_the_ring():
    m, b = 64e6, 25e9
    assert ps.round_time(m, 2, b, servers=2) == pytest.approx(cost.allreduce_time(m, 2, b, algorithm="ring"))
    assert ps.smallest_k_to_beat_ring(m, 2, b) is None


def test_colocated_with_a_shard_per_machine_moves_the_ring_volume():
    m = 1e8
    for n in (3, 8, 16):
        assert ps.ps_traffic(m, n, n, colocated=True).shard_host == pytest.approx(cost.ring_bytes_per_rank(m, n))


def test_nvlink_and_a_network_card_differ_by_more_than_an_order_of_magnitude():
    # chapter 6, opening: per direction, against the 100 Gb/s card of the same servers
    assert hardware.link("nvlink2").bandwidth / hardware.link("eth_100g").bandwidth > 10


def test_the_server_load_grows_with_n_while_the_ring_rank_stays_below_two_gradients():
    # chapter 3, the hot spot: each way, on the busiest NIC, in units of M
    v = ps.server_and_ring_volumes(1.0, list(range(2, 65)))
    server, ring = v["ps_server_each_way"], v["ring_rank_each_way"]
    assert (server[1:] > server[:-1]).all() and server[-1] == pytest.approx(63.0)
    # the chapter's own model: one server on a machine of its own, nM each way
    separate = v["ps_separate_each_way"]
    assert (separate[1:] > separate[:-1]).all() and separate[-1] == pytest.approx(64.0)
    assert (ring < 2.0).all() and ring[-1] - ring[0] < 1.0


def test_one_port_sharded_round_is_above_the_fastest_all_reduce_for_a_small_gradient():
    # chapter 3: the fair rival at 1 MB is halving-doubling (2 log2 n start-ups), not the ring
    link = hardware.link("eth_25g")
    for n in (8, 32):
        name, best = ps.best_allreduce(1e6, n, link.bandwidth, link.latency)
        assert name == "halving_doubling"
        assert best < cost.allreduce_time(1e6, n, link.bandwidth, link.latency, algorithm="ring")
        assert ps.round_time(1e6, n, link.bandwidth, servers=n, latency=link.latency) > best


def test_each_placement_at_its_best_the_sharded_parameter_server_ties_the_all_reduce_and_more_shards_find_nothing():
    from commlib.experiments import claims, network
    for name, key in network.PLACEMENT_KEYS.items():
        v = claims.run(claims.claim(key, small=True))
        ps = min(network.placement_run(name, network.PS_NAME, o).time for o in network.PS_AGGREGATION)
        wider = min(network.placement_run(name, network.PS_NAME, o, max_shards=2 * network.MAX_SHARDS).time
                    for o in network.PS_AGGREGATION)
        assert wider == pytest.approx(ps, rel=1e-12)                      # the shard grid is wide enough
        assert v.tied                  # the all-reduce may use the same uneven shares: the same bytes, the same links
        even = min(network.placement_run(name, network.AR_NAME, o).time for o in network.AR_OPTIONS[:2])
        if name == "1 each on hosts 0, 1, 3, 4":      # there only uneven shares keep bytes off host 0's slow card
            assert v.best[network.AR_NAME].config["option"] == "direct, uneven shares"
            assert even > 1.4 * v.best[network.AR_NAME].mean
            direct = network.placement_run(name, network.AR_NAME, "direct, uneven shares")
            m, inter = direct.nbytes, placement.example_cluster().inter
            assert direct.shards[0] == 0 and direct.time >= m / inter[0]    # host 0's card: its own M each way
        else:
            assert even == pytest.approx(v.best[network.AR_NAME].mean, rel=1e-12)


def test_a_pipelined_chain_beats_rings_on_a_mesh_row_but_not_the_torus_row_ring():
    import itertools

    from commlib.experiments import claims, network
    full = claims.verdict("ch06.row_rings")        # the chapter's buffer: the chain beats the mesh row's rings
    assert full.best["torus row"].mean < full.best["mesh row, pipelined chain"].mean < full.best["mesh row, rings"].mean
    v = claims.run(claims.claim("ch06.row_rings", small=True))
    torus, ring, chain = (v.best[c].mean for c in ("torus row", "mesh row, rings", "mesh row, pipelined chain"))
    assert torus < min(chain, ring)
    assert not v.best["mesh row, pipelined chain"].at_edge
    nbytes = network.SMALL_SIZE
    best_mesh = min(network.chain_time("mesh", p, q, nbytes) for p in itertools.permutations(range(4))
                    for q in network.CHAIN_CHUNKS)
    best_torus = min(network.chain_time("torus", p, q, nbytes) for p in itertools.permutations(range(4))
                     for q in network.CHAIN_CHUNKS)
    assert best_torus == pytest.approx(best_mesh, rel=1e-9)          # the chain gains nothing from the wrap link
    assert 1e6 * best_torus > torus


def test_the_torus_gains_less_over_the_mesh_on_a_smaller_buffer():
    from commlib.experiments import claims
    gains = []
    for key in ("ch06.mesh_vs_torus", "ch06.mesh_vs_torus_small_buffer"):
        v = claims.run(claims.claim(key, small=True))
        assert v.winner == "4 x 4 torus"
        gains.append(v.best["4 x 4 mesh"].mean / v.best["4 x 4 torus"].mean)
    assert gains[0] > gains[1] > 1


def test_each_grid_at_its_best_algorithm_the_2d_all_reduce_helps_the_mesh_too():
    from commlib.experiments import claims, network
    for key, rings_key in (("ch06.mesh_vs_torus_best_algorithm", "ch06.mesh_vs_torus"),
                           ("ch06.mesh_vs_torus_best_algorithm_small_buffer", "ch06.mesh_vs_torus_small_buffer")):
        best, rings = (claims.run(claims.claim(k, small=True)) for k in (key, rings_key))
        assert best.winner == "4 x 4 torus"
        mesh, torus = best.best["4 x 4 mesh"].mean, best.best["4 x 4 torus"].mean
        assert mesh <= rings.best["4 x 4 mesh"].mean and torus <= rings.best["4 x 4 torus"].mean
        assert best.best["4 x 4 mesh"].config["algorithm"] in network.TWO_D          # the control: rings only
        assert rings.best["4 x 4 mesh"].mean / torus > mesh / torus > 1              # one-sided overstates the gain
    mesh, torus = (network.two_d_run(k, 4, 4, "two-dimensional, rows and columns both ways", network.SMALL_SIZE)
                   for k in ("mesh", "torus"))
    assert mesh.max_flows > torus.max_flows == 1     # a mesh row is a line: its rings come back along it


def test_the_torus_gains_more_at_its_best_algorithm_on_a_larger_buffer():
    from commlib.experiments import claims
    gains = []
    for key in ("ch06.mesh_vs_torus_best_algorithm", "ch06.mesh_vs_torus_best_algorithm_small_buffer"):
        v = claims.run(claims.claim(key, small=True))
        gains.append(v.best["4 x 4 mesh"].mean / v.best["4 x 4 torus"].mean)
    assert gains[0] > gains[1] > 1


def test_the_double_binary_tree_bound_holds_for_every_placement_and_chunk_count():
    """2M over a leaf link: no placement or q beats it, the searched one comes near, and it is above the ring's time."""
    from commlib.experiments import network as runs
    bound = runs.tree_dbt_bound()
    assert bound == pytest.approx(2 * runs.TREE_SIZE / hardware.link(runs.TREE_LINK).bandwidth, rel=1e-3)
    placement = runs.tree_dbt_placement()
    for q in runs.TREE_DBT_CHUNKS:
        assert runs.tree_time("double_binary_tree", placement, chunks=q) >= bound
    for p in [*runs.level_placements(8).values(), tuple(range(8))]:
        assert runs.tree_time("double_binary_tree", p, chunks=runs.TREE_DBT_SEARCH_CHUNKS) >= bound
    assert bound > min(runs.tree_time("ring", p) for p in runs.level_placements(8).values())


def test_spanning_tree_bounds_of_the_grids_are_their_link_counts_and_the_torus_best_comes_near_its_own():
    from commlib.experiments import network as runs
    mesh, torus = runs.grid_graph("mesh", 4, 4), runs.grid_graph("torus", 4, 4)
    b = hardware.link(runs.LINK).bandwidth
    assert runs.grid_tree_bound(mesh) == pytest.approx(15 * runs.SIZE / (24 * b))
    assert runs.grid_tree_bound(torus) == pytest.approx(15 * runs.SIZE / (32 * b))
    # the torus's two-dimensional all-reduce is no faster than the bound, and within its start-ups of it
    t2d = runs.two_d_run("torus", 4, 4, "two-dimensional, rows and columns both ways", runs.SIZE).time
    assert runs.grid_tree_bound(torus) <= t2d <= 1.1 * runs.grid_tree_bound(torus)
    lone = nx.Graph()
    lone.add_node(0)
    with pytest.raises(ValueError):
        runs.grid_tree_bound(lone)


def test_hierarchy_low_places_the_least_gain_and_its_neighbours():
    from commlib.experiments import network as runs
    trend = {h: {"gain": g} for h, g in {2: 1.65, 4: 1.2, 8: 1.09, 12: 1.077, 16: 1.083, 24: 1.11, 32: 1.15}.items()}
    low = runs.hierarchy_low(trend, 0.02)
    assert (low["hosts"], low["from"], low["to"], low["shape"]) == (12, 8, 16, "falls, levels off and then grows again")
    assert runs.hierarchy_low(trend, 0.0)["from"] == runs.hierarchy_low(trend, 0.0)["to"] == 12
    assert runs.hierarchy_low(trend, 0.0)["shape"] == "dips and then grows again"
    falling = {h: {"gain": 2.0 / h} for h in (2, 4, 8)}
    assert runs.hierarchy_low(falling)["shape"] == "falls as hosts are added"
    assert runs.hierarchy_low({2: {"gain": 1.0}, 4: {"gain": 1.5}})["shape"] == "grows as hosts are added"
    with pytest.raises(ValueError):
        runs.hierarchy_low({})
    with pytest.raises(ValueError):
        runs.hierarchy_low(trend, 1.5)


def test_the_chapter_host_counts_bracket_the_hierarchy_gain_lowest_point():
    """The chapter's host counts have a count on each side of the least gain, and the gain rises on both sides."""
    from commlib.experiments import network as runs
    trend = runs.hierarchy_trend()
    low = runs.hierarchy_low(trend)
    hosts = sorted(trend)
    i = hosts.index(low["hosts"])
    assert 0 < i < len(hosts) - 1
    assert trend[hosts[i - 1]]["gain"] > low["gain"] < trend[hosts[i + 1]]["gain"]


def test_hierarchy_closed_form_matches_the_mapped_runs():
    from commlib.experiments import network as runs

    nbytes = 3 * 2**20
    closed = runs.hierarchy_closed((2, 3, 4), per_host=4, nbytes=nbytes)
    for h in (2, 3, 4):
        r = topology.hierarchy_runs(h, 4, nbytes)
        assert r["ring"].time == pytest.approx(closed[h]["flat"], rel=1e-3)
        assert r["hierarchical"].time == pytest.approx(closed[h]["hierarchical"], rel=1e-3)


def test_hierarchy_dip_moves_to_more_hosts_as_the_buffer_grows():
    from commlib.experiments import network as runs

    dips = runs.hierarchy_dips((4 * 2**20, 16 * 2**20, 64 * 2**20))
    lows = [d["hosts"] for d in dips.values()]
    assert lows == sorted(lows) and lows[0] < lows[-1]


@pytest.mark.parametrize("hosts, per_host", [(2, 8), (3, 4), (8, 8), (16, 2)])
def test_hierarchy_break_even_is_the_number_of_hosts_and_its_terms_compose_it(hosts, per_host):
    # the chapter derives B_intra > h B_NIC from eq-topo-hier: (g-1)/g over (n-1)/n - (h-1)/h is h, whatever g
    from commlib.experiments import network as runs

    terms = runs.hierarchy_break_even_terms(hosts, per_host)
    assert terms["inside"] / terms["saved"] == pytest.approx(hosts)
    assert runs.hierarchy_break_even(hosts, per_host) == pytest.approx(hosts)
    with pytest.raises(ValueError, match="hosts"):
        runs.hierarchy_break_even_terms(1, per_host)


@pytest.mark.parametrize("hosts, per_host", [(2, 8), (3, 4), (8, 8), (16, 2)])
def test_pipelined_break_even_is_the_inside_bytes_over_the_flat_rings_and_below_one(hosts, per_host):
    # pipelined, each link needs its whole-run bytes: 2(g-1)/g M inside against the flat ring's 2(n-1)/n M at the card
    from commlib.experiments import network as runs

    n = hosts * per_host
    ratio = runs.hierarchy_break_even_pipelined(hosts, per_host)
    assert ratio == pytest.approx((2 * (per_host - 1) / per_host) / (2 * (n - 1) / n))
    assert (per_host - 1) / per_host <= ratio < 1 < runs.hierarchy_break_even(hosts, per_host)
    with pytest.raises(ValueError, match="hosts"):
        runs.hierarchy_break_even_pipelined(hosts, 1)


def test_the_tree_counted_per_message_pays_more_start_ups_than_the_flow_model_and_more_with_more_chunks():
    """Chapter 2's count charges each message; chapter 6's flow model one start-up a round: the first is never below
    the second, and the gap grows with q (more messages a round, more rounds)."""
    from commlib.experiments import network as runs
    placement = runs.tree_dbt_placement()
    gaps = [runs.tree_dbt_time_counted_per_message(q) - runs.tree_time("double_binary_tree", placement, chunks=q)
            for q in runs.TREE_DBT_CHUNKS]
    assert all(g > 0 for g in gaps)
    assert gaps == sorted(gaps)
    # at q = 1 both counts are whole messages up and down the trees: the per-message count is still the larger
    assert runs.tree_dbt_time_counted_per_message(1) >= runs.tree_time("double_binary_tree", placement, chunks=1)


def test_the_trees_lead_over_halving_doubling_shrinks_as_the_start_up_grows():
    """The tree pays many more start-ups than halving-doubling: its lead falls with the start-up, and at the preset
    start-up halving-doubling's time is the claim's at its best placement."""
    from commlib.experiments import claims
    from commlib.experiments import network as runs
    alpha = hardware.link(runs.TREE_LINK).latency
    leads = [runs.tree_lead_counted_per_message(f * alpha)["lead"] for f in (0.25, 0.5, 1.0, 2.0, 4.0)]
    assert leads == sorted(leads, reverse=True)
    hd = claims.verdict("ch06.tree_allreduce").best["halving-doubling"].mean
    assert 1e3 * runs.tree_lead_counted_per_message()["halving_doubling"] == pytest.approx(hd, rel=1e-9)
    with pytest.raises(ValueError, match="latency"):
        runs.tree_lead_counted_per_message(-1.0)
