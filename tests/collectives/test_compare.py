"""Tests for commlib.collectives.compare: crossovers, winners, bandwidth conventions, the cluster calculator's model.

Expected values are derived here from the alpha-beta forms written out by
hand (Thakur, Rabenseifner & Gropp 2005), not copied from the code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib.collectives import compare

POW2 = st.sampled_from([4, 8, 16, 32, 64])
ALPHA = st.floats(min_value=1e-7, max_value=1e-3)
BANDWIDTH = st.floats(min_value=1e6, max_value=1e12)


# --- crossover_sizes -------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.1, 10), b=st.floats(0.1, 10), c=st.floats(0.1, 10), d=st.floats(0.1, 10))
def test_crossover_of_two_lines_is_their_intersection(a, b, c, d):
    # f = a + b m, g = c + d m meet at m = (c - a) / (b - d).
    if math.isclose(b, d, rel_tol=1e-3):
        return
    m = (c - a) / (b - d)
    found = compare.crossover_sizes(lambda x: a + b * x, lambda x: c + d * x, 1e-3, 1e3)
    if 1e-3 * 1.001 < m < 1e3 * 0.999:
        assert len(found) == 1
        assert found[0] == pytest.approx(m, rel=1e-6)
    elif not 1e-3 <= m <= 1e3:
        assert found == []


@settings(max_examples=30, deadline=None)
@given(n=POW2, alpha=ALPHA, bw=BANDWIDTH)
def test_ring_vs_recursive_doubling_crossover_matches_hand_formula(n, alpha, bw):
    # ring: 2(n-1) alpha + 2(n-1)/n M / B; recursive doubling: log2 n (alpha + M / B).
    lg = math.log2(n)
    m_star = (2 * (n - 1) - lg) * alpha / ((lg - 2 * (n - 1) / n) / bw)
    ring = lambda m: compare.allreduce_seconds("ring", m, n, bw, alpha)  # noqa: E731
    rd = lambda m: compare.allreduce_seconds("recursive_doubling", m, n, bw, alpha)  # noqa: E731
    found = compare.crossover_sizes(ring, rd, m_star / 100, m_star * 100)
    assert found == [pytest.approx(m_star, rel=1e-6)]
    # recursive doubling (fewer steps) wins below, ring (fewer bytes) above.
    assert rd(m_star / 2) < ring(m_star / 2)
    assert ring(m_star * 2) < rd(m_star * 2)


def test_no_crossover_when_one_algorithm_always_wins():
    # On 2 ranks recursive doubling (1 step, M bytes) never loses to the ring (2 steps, M bytes).
    ring = lambda m: compare.allreduce_seconds("ring", m, 2, 1e9, 1e-5)  # noqa: E731
    rd = lambda m: compare.allreduce_seconds("recursive_doubling", m, 2, 1e9, 1e-5)  # noqa: E731
    assert compare.crossover_sizes(ring, rd, 1.0, 1e12) == []


def test_crossover_rejects_bad_range():
    with pytest.raises(ValueError, match="hi"):
        compare.crossover_sizes(abs, abs, 10.0, 1.0)
    with pytest.raises(ValueError, match="lo"):
        compare.crossover_sizes(abs, abs, -1.0, 1.0)


# --- fastest / switch_points ---------------------------------------------------------------------

def test_fastest_picks_the_minimum_per_size():
    assert compare.fastest({"x": [3, 1, 2], "y": [1, 2, 2]}) == ["y", "x", "x"]
    with pytest.raises(ValueError, match="times"):
        compare.fastest({})


@settings(max_examples=20, deadline=None)
@given(n=POW2, alpha=ALPHA, bw=BANDWIDTH)
def test_switch_points_latency_bound_then_bandwidth_bound(n, alpha, bw):
    curves = {a: (lambda m, a=a: compare.allreduce_seconds(a, m, n, bw, alpha))
              for a in ("ring", "tree", "recursive_doubling", "halving_doubling")}
    scale = alpha * bw   # bytes one start-up is worth: the crossings sit within a few decades of it
    switches = compare.switch_points(curves, scale / 1e3, scale * 1e4)
    assert switches, "some algorithm must overtake another"
    sizes = [s for s, _, _ in switches]
    assert sizes == sorted(sizes)
    # The smallest messages go to the fewest start-ups: recursive doubling (log2 n steps).
    assert switches[0][1] == "recursive_doubling"
    # The largest go to a bandwidth-optimal one (2(n-1)/n M bytes): ring or halving-doubling.
    assert switches[-1][2] in ("ring", "halving_doubling")
    for size, before, after in switches:
        assert curves[before](size * 0.99) <= curves[after](size * 0.99) * (1 + 1e-9)
        assert curves[after](size * 1.01) <= curves[before](size * 1.01) * (1 + 1e-9)


# --- bandwidth conventions ---------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 1024), algbw=st.floats(1.0, 1e12))
def test_busbw_algbw_round_trip_and_factor(n, algbw):
    bus = compare.algbw_to_busbw(algbw, n)
    assert bus == pytest.approx(algbw * 2 * (n - 1) / n)
    assert compare.busbw_to_algbw(bus, n) == pytest.approx(algbw)
    assert compare.algbw_to_busbw(algbw, n, "all_gather") == pytest.approx(algbw * (n - 1) / n)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 256), m=st.floats(1e3, 1e10), bw=BANDWIDTH)
def test_ring_at_line_rate_shows_busbw_equal_to_link(n, m, bw):
    # With no latency a ring moves 2(n-1)/n M at B: busbw = M/t * 2(n-1)/n = B exactly.
    t = compare.allreduce_seconds("ring", m, n, bw)
    assert compare.algbw_to_busbw(m / t, n) == pytest.approx(bw, rel=1e-9)


def test_busbw_conversion_errors_name_parameter():
    with pytest.raises(ValueError, match="n must be >= 2"):
        compare.busbw_to_algbw(1e9, 1)
    with pytest.raises(ValueError, match="algbw"):
        compare.algbw_to_busbw(-1.0, 4)
    with pytest.raises(ValueError, match="op"):
        compare.algbw_to_busbw(1.0, 4, "scan")


# --- allreduce_seconds ---------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 64), m=st.floats(1.0, 1e10), alpha=ALPHA, bw=BANDWIDTH)
def test_two_level_algorithms_reduce_to_the_ring(n, m, alpha, bw):
    ring = 2 * (n - 1) * alpha + 2 * (n - 1) / n * m / bw
    assert compare.allreduce_seconds("ring", m, n, bw, alpha) == pytest.approx(ring)
    # One host: hierarchical is a ring inside it. A 1 x n grid: the torus is one ring.
    assert compare.allreduce_seconds("hierarchical", m, n, bw, alpha, hosts=1) == pytest.approx(ring)
    assert compare.allreduce_seconds("torus", m, n, bw, alpha, grid=(1, n)) == pytest.approx(ring)
    # One rank per host: hierarchical is a ring over the inter-host link.
    slow = compare.allreduce_seconds("hierarchical", m, n, bw * 1e3, 0.0, hosts=n, inter_bandwidth=bw,
                                     inter_latency=alpha)
    assert slow == pytest.approx(ring)


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(2, 8), cols=st.integers(2, 8), m=st.floats(1e3, 1e10), bw=BANDWIDTH, alpha=ALPHA)
def test_torus_moves_ring_bytes_in_fewer_steps(rows, cols, m, bw, alpha):
    n = rows * cols
    no_latency = compare.allreduce_seconds("torus", m, n, bw, 0.0, grid=(rows, cols))
    assert no_latency == pytest.approx(2 * (n - 1) / n * m / bw)
    latency_only = compare.allreduce_seconds("torus", 0.0, n, bw, alpha, grid=(rows, cols))
    assert latency_only == pytest.approx((2 * (cols - 1) + 2 * (rows - 1)) * alpha)
    assert latency_only < 2 * (n - 1) * alpha


def test_flat_algorithms_pay_the_slowest_link_across_hosts():
    fast, slow = 100e9, 1.25e9
    across = compare.allreduce_seconds("ring", 1e9, 8, fast, 1e-6, hosts=2, inter_bandwidth=slow, inter_latency=1e-5)
    assert across == pytest.approx(14 * 1e-5 + 2 * 7 / 8 * 1e9 / slow)
    hier = compare.allreduce_seconds("hierarchical", 1e9, 8, fast, 1e-6, hosts=2, inter_bandwidth=slow,
                                     inter_latency=1e-5)
    # 4 GPUs per host: reduce-scatter and all-gather inside (3 steps of 250 MB each), ring over 2 hosts of 250 MB.
    expected = 2 * (3 * 1e-6 + 3 / 4 * 1e9 / fast) + 2 * 1e-5 + 2 * 1 / 2 * 0.25e9 / slow
    assert hier == pytest.approx(expected)
    assert hier < across


def test_hierarchical_nic_assumption_passes_through():
    # 2 hosts x 4 GPUs, 1 GB; fast inside, 1.25 GB/s per NIC between, no latency.
    fast, slow = 100e9, 1.25e9
    intra = 2 * 3 / 4 * 1e9 / fast
    kw = dict(hosts=2, inter_bandwidth=slow)
    own = compare.allreduce_seconds("hierarchical", 1e9, 8, fast, **kw)
    one = compare.allreduce_seconds("hierarchical", 1e9, 8, fast, nics_per_host=1, **kw)
    two = compare.allreduce_seconds("hierarchical", 1e9, 8, fast, nics_per_host=2, **kw)
    assert own == pytest.approx(intra + 0.25e9 / slow)           # each 250 MB shard on its own card
    assert one == pytest.approx(intra + 4 * 0.25e9 / slow)       # four shards through one card
    assert two == pytest.approx(intra + 2 * 0.25e9 / slow)
    # the flat ring does not depend on it (a host-by-host ring has one flow per direction per card)
    assert compare.allreduce_seconds("ring", 1e9, 8, fast, nics_per_host=1, **kw) == \
        compare.allreduce_seconds("ring", 1e9, 8, fast, **kw)
    # algorithms whose steps stay inside a host in part are not timed on hosts of several GPUs, cards or not
    for a in ("recursive_doubling", "torus"):
        for nics in (None, 1):
            with pytest.raises(ValueError, match=r"hosts h: .*\(h = 1 or h = n = 8\)"):
                compare.allreduce_seconds(a, 1e9, 8, fast, nics_per_host=nics, **kw)
    args = ("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "hierarchical")
    m = 25_557_032 * 2
    shared = compare.cluster_allreduce(*args, nics_per_host=1)
    assert shared.seconds == pytest.approx(2 * (7e-6 + 7 / 8 * m / 150e9) + 2 * 10e-6 + m / 3.125e9)
    assert shared.seconds > compare.cluster_allreduce(*args).seconds


@pytest.mark.parametrize("kwargs, word", [
    (dict(algorithm="butterfly"), "algorithm"),
    (dict(nbytes=-1.0), "nbytes"),
    (dict(n=0), "n must be"),
    (dict(bandwidth=0.0), "bandwidth"),
    (dict(hosts=3), "hosts must divide"),
    (dict(hosts=9), "hosts"),
    (dict(algorithm="torus", grid=(3, 3)), "grid"),
    (dict(algorithm="hierarchical", hosts=2, nics_per_host=0), "nics_per_host"),
    (dict(nics_per_host=2.5), "nics_per_host"),
])
def test_allreduce_seconds_errors_name_the_parameter(kwargs, word):
    args = dict(algorithm="ring", nbytes=1e6, n=8, bandwidth=1e9)
    args.update(kwargs)
    with pytest.raises(ValueError, match=word):
        compare.allreduce_seconds(**args)


# --- bandwidth_for_time and the cluster model -------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(a=st.floats(0.0, 1e-2), c=st.floats(1.0, 1e9), extra=st.floats(1e-4, 10.0))
def test_bandwidth_for_time_inverts_affine_time(a, c, extra):
    target = a + extra
    assert compare.bandwidth_for_time(lambda b: a + c / b, target, lo=1e-6) == pytest.approx(c / extra, rel=1e-6)


def test_bandwidth_for_time_is_infinite_when_latency_alone_is_too_slow():
    assert compare.bandwidth_for_time(lambda b: 1.0 + 1.0 / b, 0.5) == math.inf


def test_cluster_matches_note_001_vgg_example():
    # VGG-16: 138,357,544 fp32 parameters; 4 workers on 4 hosts over 1 Gb/s = 125e6 B/s; Ts = 0.55 s.
    d = 138_357_544 * 4
    alpha = 50e-6   # the 1 GbE preset's latency, part of the time
    t = 2 * 3 / 4 * d / 125e6 + 6 * alpha
    r = compare.cluster_allreduce("vgg16", "fp32", 4, 4, "nvlink2", "eth_1g", "ring", 0.55, 0.9)
    assert r.nbytes == d
    assert r.seconds == pytest.approx(t)
    assert r.parallel_efficiency == pytest.approx(0.0765, abs=5e-4)       # note 001: P = 0.0765
    assert 0.55 / r.parallel_efficiency == pytest.approx(7.19, abs=0.01)   # note 001: Tp = 7.19 s
    allowed = 0.55 * 0.1 / 0.9
    assert r.required_bandwidth == pytest.approx(2 * 3 / 4 * d / (allowed - 6 * alpha), rel=1e-6)
    assert r.required_bandwidth == pytest.approx(13_582e6, rel=0.01)      # note 001: 13,582 MB/s
    assert r.busbw == pytest.approx(d / t * 1.5)
    assert r.bus_efficiency == pytest.approx(r.busbw / 125e6)
    assert r.bus_efficiency < 1


def test_cluster_single_host_uses_intra_link_and_hierarchical_beats_flat_ring():
    one = compare.cluster_allreduce("resnet50", "fp16", 8, 1, "nvlink2", "eth_10g", "ring")
    assert one.bottleneck == pytest.approx(150e9)
    flat = compare.cluster_allreduce("resnet50", "fp16", 16, 2, "nvlink2", "eth_10g", "ring")
    hier = compare.cluster_allreduce("resnet50", "fp16", 16, 2, "nvlink2", "eth_10g", "hierarchical")
    assert flat.bottleneck == pytest.approx(1.25e9)
    assert hier.seconds < flat.seconds
    # hierarchical sends only 1/8 of the buffer over the network, so its busbw can exceed the NIC's line rate;
    # the busbw its links allow (its busbw with no latency) is more than the NIC, and busbw stays below that.
    assert hier.busbw > 1.25e9 > flat.busbw
    assert hier.bottleneck > 1.25e9
    assert flat.bus_efficiency < 1 and hier.bus_efficiency < 1


def test_cluster_with_one_gpu_a_host_charges_the_network_only():
    """With g = 1 no pair talks inside a host: the link inside is unused, whatever it is."""
    from commlib import hardware

    slow_inside = compare.cluster_allreduce("resnet50", "fp16", 16, 16, "eth_1g", "ib_ndr", "ring")
    fast_inside = compare.cluster_allreduce("resnet50", "fp16", 16, 16, "nvlink5", "ib_ndr", "ring")
    assert slow_inside.seconds == fast_inside.seconds
    assert slow_inside.bottleneck == pytest.approx(hardware.LINKS["ib_ndr"].bandwidth)
    hier = compare.cluster_allreduce("resnet50", "fp16", 16, 16, "eth_1g", "nvlink5", "hierarchical")
    assert hier.bus_efficiency <= 1


@pytest.mark.parametrize("kwargs, word", [
    (dict(model="vgg19"), "model"),
    (dict(dtype="fp12"), "dtype"),
    (dict(n=0), "n must be"),
    (dict(hosts=3), "hosts must divide"),
    (dict(intra_link="nvlink9"), "link"),
    (dict(t_compute=0.0), "t_compute"),
    (dict(target_efficiency=1.0), "target_efficiency"),
    (dict(algorithm="hierarchical", nics_per_host=0), "nics_per_host"),
])
def test_cluster_errors_name_the_parameter(kwargs, word):
    args = dict(model="vgg16", dtype="fp32", n=8, hosts=2, intra_link="nvlink2", inter_link="eth_25g")
    args.update(kwargs)
    with pytest.raises(ValueError, match=word):
        compare.cluster_allreduce(**args)


# --- executable collectives against the formulas --------------------------------------------------

@pytest.mark.parametrize("n", [2, 5])
def test_trace_vs_formula_rows_carry_the_ring_s_trace_and_formula(n):
    """The rows chapter 2's claim reads; that every algorithm's trace equals its closed form is
    tests/collectives/test_algorithms.py's registry-wide test, so two ring sizes suffice here."""
    (row,) = compare.trace_vs_formula([n], elements=12 * n)
    m = 12 * n * 8
    assert row.trace_steps == row.formula_steps == 2 * (n - 1)
    assert row.trace_bytes_per_rank == pytest.approx(2 * (n - 1) / n * m)
    assert row.formula_bytes_per_rank == pytest.approx(2 * (n - 1) / n * m)
    assert row.trace_seconds == pytest.approx(row.formula_seconds)


@pytest.mark.parametrize("p", [2, 3, 4, 6, 8])
def test_naive_master_carries_2_p_minus_1_n(p):
    from commlib.collectives.simulate import allreduce

    k = 10
    arrays = [np.arange(k, dtype=float) + r for r in range(p)]
    results, trace = allreduce(arrays, algorithm="naive")
    assert compare.master_link_bytes(trace, 0) == 2 * (p - 1) * k * 8
    for r in results:
        np.testing.assert_allclose(r, sum(arrays))


@pytest.mark.parametrize("n, count", [(2, 1), (4, 3), (5, 2)])
def test_buffer_sizes_all_gather_vs_all_to_all(n, count):
    ag = compare.buffer_sizes("all_gather", n, count)
    a2a = compare.buffer_sizes("all_to_all", n, count)
    assert (ag.send, ag.recv) == (count, n * count)
    assert (a2a.send, a2a.recv) == (n * count, n * count)
    with pytest.raises(ValueError, match="primitive"):
        compare.buffer_sizes("scan", n, count)


# --- self-check answers of chapters 1 and 2 (commlib/questions/ch01.py, ch02.py), derived by hand ---------

def _hand_answers():
    resnet, gpt2xl = 25_557_032, 1_557_611_200
    m16 = resnet * 2
    # ch02.hier_speedup: 4 hosts x 8 GPUs, one 25 Gb/s NIC per host shared by its 8 GPUs, so the card
    # carries 8 shards x 2 (3/4) M/8 = 2 (3/4) M; flat ring over 32 ranks at the same card's rate.
    flat = 62 * 10e-6 + 2 * 31 / 32 * m16 / 3.125e9
    hier = 2 * (7 * 1e-6 + 7 / 8 * m16 / 150e9) + 2 * 3 * 10e-6 + 2 * (3 / 4) * m16 / 3.125e9
    return {
        "ch01.tree_steps": 10,                                     # ceil(log2 1000)
        "ch01.subtract_tree": ((1 - 2) - (3 - 4)) - ((5 - 6) - (7 - 8)),
        "ch01.alltoall_recv_kb": 8 * 1000 * 4 / 1e3,
        "ch01.master_gb": 2 * 15 * resnet * 4 / 1e9,
        "ch01.chain_q_half_alpha": ((8 - 2) * 64 * 2**20 / 3.125e9 / (10e-6 / 2)) ** 0.5,  # sqrt((n-2) M beta / alpha)
        "ch02.ring_bytes_gb": 2 * 7 / 8,
        "ch02.gpt2xl_ms": 1e3 * (2 * 31 / 32 * gpt2xl * 2 / 25e9 + 62 * 1e-6),
        "ch02.crossover_kb": (14 - 3) * 20e-6 / ((3 - 7 / 4) / 1.25e9) / 1e3,
        "ch02.busbw_gbs": 40 * 2 * 7 / 8,
        "ch02.hd_steps": 2 * 6,
        "ch02.hier_speedup": flat / hier,
    }


@pytest.mark.parametrize("qid, value", sorted(_hand_answers().items()))
def test_self_check_answers(qid, value):
    from commlib.check import check, expected

    assert float(expected(qid)) == pytest.approx(value, rel=1e-6, abs=1e-9)
    assert check(qid, value).correct


def test_self_check_hints_name_the_slip():
    from commlib.check import check, questions

    # every numeric question has a hand answer; the one that asks for an algorithm's name is checked by hand below
    assert set(_hand_answers()) | {"ch02.pick_500kb"} == set(questions("ch01")) | set(questions("ch02"))
    assert check("ch02.pick_500kb", "bruck").correct and not check("ch02.pick_500kb", "ring").correct
    assert "serial" in check("ch01.tree_steps", 999).message
    assert "ring" in check("ch02.hd_steps", 126).message
    assert "both directions" in check("ch01.master_gb", 15 * 25_557_032 * 4 / 1e9).message
    assert not check("ch02.busbw_gbs", 40 * 8 / 14).correct


def test_hier_speedup_hints_name_the_nic_assumption():
    from commlib.check import check

    m16 = 25_557_032 * 2
    intra = 2 * (7 * 1e-6 + 7 / 8 * m16 / 150e9)
    # the same 4 x 8 cluster with one 25 Gb/s NIC per GPU: each card carries one M/8 shard
    flat32 = 62 * 10e-6 + 2 * 31 / 32 * m16 / 3.125e9
    per_gpu = flat32 / (intra + 2 * 3 * 10e-6 + 2 * (3 / 4) * (m16 / 8) / 3.125e9)
    message = check("ch02.hier_speedup", per_gpu).message
    assert "one NIC per GPU" in message
    # the chapter's 2 x 8 cluster with one shared NIC per host
    flat16 = 30 * 10e-6 + 2 * 15 / 16 * m16 / 3.125e9
    two_hosts = flat16 / (intra + 2 * 10e-6 + 2 * (1 / 2) * m16 / 3.125e9)
    assert "2 hosts" in check("ch02.hier_speedup", two_hosts).message


@pytest.mark.parametrize("algorithm", ["naive", "ring"])
@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_busiest_link_bytes_is_what_the_trace_counts_both_ways(algorithm, n):
    """Both directions through the busiest rank's link, not the critical-path bytes (one direction, per step)."""
    from commlib.collectives import simulate

    elements = 840
    _, trace = simulate.allreduce([np.ones(elements) for _ in range(n)], algorithm=algorithm)
    counted = int((trace.bytes_sent + trace.bytes_received).max())
    assert compare.busiest_link_bytes(algorithm, elements * 8, n) == pytest.approx(counted)
    if algorithm == "naive":
        assert compare.master_link_bytes(trace, 0) == counted
