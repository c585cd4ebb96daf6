"""commlib.cost: closed forms against hand-derived values, limits and properties."""

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from commlib import cost

ALGS = cost.ALLREDUCE_ALGORITHMS
M, B, A, G = 1200.0, 100.0, 1.0, 0.01   # bytes, bytes/s, s, s/byte: easy arithmetic


@pytest.mark.parametrize("alg, n, expected", [
    # ring: 2(n-1) alpha + 2(n-1)/n M beta + (n-1)/n M gamma
    ("ring", 4, 6 * A + 2 * 3 / 4 * M / B + 3 / 4 * M * G),
    # tree: 2 ceil(lg n)(alpha + M beta) + ceil(lg n) M gamma; ceil(lg 5) = 3
    ("tree", 5, 6 * (A + M / B) + 3 * M * G),
    # recursive doubling, n = 8: lg n (alpha + M beta + M gamma)
    ("recursive_doubling", 8, 3 * (A + M / B + M * G)),
    # recursive doubling, n = 6: 2 steps on 4 ranks + fold in and out (2 full messages, 1 reduction)
    ("recursive_doubling", 6, 2 * (A + M / B + M * G) + 2 * (A + M / B) + M * G),
    # halving-doubling, n = 8: 2 lg n alpha + 2 (n-1)/n M beta + (n-1)/n M gamma
    ("halving_doubling", 8, 6 * A + 2 * 7 / 8 * M / B + 7 / 8 * M * G),
    # halving-doubling, n = 6: power-of-two core of 4 plus fold in and out
    ("halving_doubling", 6, 4 * A + 2 * 3 / 4 * M / B + 3 / 4 * M * G + 2 * (A + M / B) + M * G),
    # naive: root link serialises 2(n-1) messages, reduces (n-1) of them
    ("naive", 4, 6 * (A + M / B) + 3 * M * G),
])
def test_allreduce_hand_derived(alg, n, expected):
    assert cost.allreduce_time(M, n, B, A, alg, G) == pytest.approx(expected)


def test_vgg_example_numbers():
    # 553.36 MB, 4 GPUs, 125 MB/s: Tt = 2 x 553.36 x 3 / (4 x 125) s
    t = cost.allreduce_time(553.36e6, 4, 125e6)
    assert t == pytest.approx(2 * 553.36 * 3 / (4 * 125))
    p = cost.parallel_efficiency(0.55, t)
    assert round(p, 4) == 0.0765
    assert round(0.55 / p, 2) == 7.19
    assert round(cost.required_bandwidth(553.36e6, 4, 0.55, 0.9) / 1e6) == 13582


def test_byteps_note_example():
    # 2 (n-1) M / (n B), 64 MB at 200 Gb/s, n = 2: 2.56 ms
    assert cost.allreduce_time(64e6, 2, 200e9 / 8) == pytest.approx(2.56e-3)


@pytest.mark.parametrize("op, alg, expected_terms", [
    ("broadcast", "tree", (3, 3 * M, 0)),
    ("broadcast", "scatter_allgather", (3 + 7, 2 * 7 / 8 * M, 0)),
    ("reduce", "tree", (3, 3 * M, 3 * M)),
    ("reduce_scatter", "ring", (7, 7 / 8 * M, 7 / 8 * M)),
    ("reduce_scatter", "recursive_halving", (3, 7 / 8 * M, 7 / 8 * M)),
    ("all_gather", "ring", (7, 7 / 8 * M, 0)),
    ("all_gather", "recursive_doubling", (3, 7 / 8 * M, 0)),
    ("all_to_all", "pairwise", (7, 7 / 8 * M, 0)),
    ("all_to_all", "bruck", (3, 3 * M / 2, 0)),
    ("gather", "tree", (3, 7 / 8 * M, 0)),
])
def test_collective_terms_n8(op, alg, expected_terms):
    terms = cost.collective_terms(op, M, 8, alg)
    assert (terms.steps, terms.bytes, terms.reduced) == pytest.approx(expected_terms)


def test_all_reduce_is_reduce_scatter_plus_all_gather():
    for n in (2, 3, 8, 17):
        rs = cost.collective_terms("reduce_scatter", M, n)
        ag = cost.collective_terms("all_gather", M, n)
        assert (rs + ag) == cost.allreduce_terms(M, n, "ring")


def test_single_rank_costs_nothing():
    for alg in ALGS:
        assert cost.allreduce_time(M, 1, B, A, alg, G) == 0.0


def test_ring_is_bandwidth_optimal_among_algorithms():
    # Patarasuk & Yuan: every all-reduce moves at least 2(n-1)/n M per rank
    for n in (2, 3, 4, 8, 16, 64):
        ring = cost.allreduce_terms(M, n, "ring").bytes
        assert ring == pytest.approx(2 * (n - 1) / n * M)
        for alg in ALGS:
            assert cost.allreduce_terms(M, n, alg).bytes >= ring - 1e-9


def test_hierarchical_and_torus():
    # 2 hosts x 4 GPUs: intra RS + AG of 3/4 M each at intra rate, inter ring on M/4 over 2 hosts
    t = cost.hierarchical_allreduce_time(M, 2, 4, intra_bandwidth=1000.0, inter_bandwidth=10.0)
    assert t == pytest.approx(2 * 3 / 4 * M / 1000 + 2 * 1 / 2 * (M / 4) / 10)
    # one host: the same as a ring inside it
    assert cost.hierarchical_allreduce_time(M, 1, 4, 1000.0, 10.0) == pytest.approx(
        cost.allreduce_time(M, 4, 1000.0))
    # torus 4 x 4: steps 2 x 3 + 2 x 3 instead of 2 x 15 for one flat ring
    t = cost.torus_allreduce_time(M, 4, 4, B, latency=A)
    assert t == pytest.approx(12 * A + 2 * 3 / 4 * M / B + 2 * 3 / 4 * (M / 4) / B)
    assert t < cost.allreduce_time(M, 16, B, A)


def test_hierarchical_nic_assumption_hand_derived():
    # 2 hosts x 4 GPUs, M = 1200 B, intra 1000 B/s, each NIC 10 B/s.
    # Intra part (both assumptions): reduce-scatter + all-gather, 2 x 3/4 x 1200 B / 1000 B/s = 1.8 s.
    # Inter part: each rank's 300 B shard, ring over 2 hosts, sends 2 x 1/2 x 300 B = 300 B.
    intra = 2 * 3 / 4 * 1200 / 1000
    per_gpu = cost.hierarchical_allreduce_time(M, 2, 4, 1000.0, 10.0)
    assert per_gpu == pytest.approx(intra + 300 / 10)                     # own card each: 30 s
    one_nic = cost.hierarchical_allreduce_time(M, 2, 4, 1000.0, 10.0, nics_per_host=1)
    assert one_nic == pytest.approx(intra + 4 * 300 / 10)                 # 4 shards through one card: 120 s
    two_nics = cost.hierarchical_allreduce_time(M, 2, 4, 1000.0, 10.0, nics_per_host=2)
    assert two_nics == pytest.approx(intra + 2 * 300 / 10)                # 2 shards per card: 60 s
    # as many NICs as GPUs (or more) is the per-GPU case
    for k in (4, 8):
        assert cost.hierarchical_allreduce_time(M, 2, 4, 1000.0, 10.0, nics_per_host=k) == pytest.approx(per_gpu)
    # latency is per message and does not change with sharing: 2 x 3 intra + 2 x 1 inter start-ups
    t0 = cost.hierarchical_allreduce_time(0.0, 2, 4, 1000.0, 10.0, 1e-3, 5e-3, nics_per_host=1)
    assert t0 == pytest.approx(6 * 1e-3 + 2 * 5e-3)


def test_hierarchical_one_nic_per_host_example_of_chapter_2():
    # ResNet-50 fp16 (25,557,032 x 2 B), 2 hosts x 8 GPUs, NVLink 2.0 (150 GB/s, 1 us) inside,
    # 25 Gb/s Ethernet (3.125 GB/s, 10 us) between.
    m = 25_557_032 * 2
    intra = 2 * (7 * 1e-6 + 7 / 8 * m / 150e9)
    flat = 30 * 10e-6 + 2 * 15 / 16 * m / 3.125e9
    per_gpu = intra + 2 * 10e-6 + 2 * (1 / 2) * (m / 8) / 3.125e9
    one_nic = intra + 2 * 10e-6 + 2 * (1 / 2) * m / 3.125e9             # the card carries 2 (h-1)/h M = M
    args = (m, 2, 8, 150e9, 3.125e9, 1e-6, 10e-6)
    assert cost.hierarchical_allreduce_time(*args) == pytest.approx(per_gpu)
    assert cost.hierarchical_allreduce_time(*args, nics_per_host=1) == pytest.approx(one_nic)
    assert flat / per_gpu > 10 > 2 > flat / one_nic > 1.5


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1, max_value=1e11), st.integers(2, 16), st.integers(1, 16),
       st.floats(min_value=1e3, max_value=1e13), st.floats(min_value=1e3, max_value=1e13),
       st.floats(min_value=0, max_value=1e-2), st.integers(1, 32))
def test_hierarchical_nic_sharing_properties(m, hosts, g, intra_b, inter_b, lat, k):
    one = cost.hierarchical_allreduce_time(m, hosts, g, intra_b, inter_b, 0.0, lat, nics_per_host=1)
    some = cost.hierarchical_allreduce_time(m, hosts, g, intra_b, inter_b, 0.0, lat, nics_per_host=k)
    own = cost.hierarchical_allreduce_time(m, hosts, g, intra_b, inter_b, 0.0, lat)
    # more cards never slow it down, and one card per rank is the best case
    assert own * (1 - 1e-9) <= some <= one * (1 + 1e-9)
    # one NIC per host: the inter-host part is a ring all-reduce of the whole buffer over the hosts
    intra_part = 2 * (g - 1) / g * m / intra_b
    assert one == pytest.approx(intra_part + cost.allreduce_time(m, hosts, inter_b, lat), rel=1e-9)
    # ... so against a flat ring at the NIC's rate, without latency, it gains at most (n-1)/n / ((h-1)/h)
    n = hosts * g
    flat = cost.allreduce_time(m, n, inter_b)
    no_lat = cost.hierarchical_allreduce_time(m, hosts, g, intra_b, inter_b, nics_per_host=1)
    assert flat / no_lat <= ((n - 1) / n) / ((hosts - 1) / hosts) * (1 + 1e-9)


def test_bus_bandwidth_convention():
    # a ring at line rate shows busbw equal to the link rate
    for n in (2, 4, 8, 64):
        t = cost.allreduce_time(1e9, n, 10e9)
        assert cost.bus_bandwidth("all_reduce", 1e9, n, t) == pytest.approx(10e9)
    assert cost.bus_factor("all_gather", 4) == pytest.approx(0.75)
    assert cost.bus_factor("broadcast", 4) == 1.0


def test_scaling_metrics():
    assert cost.speedup(100.0, 25.0) == 4.0
    assert cost.scaling_efficiency(100.0, 25.0, 8) == 0.5
    assert cost.communication_overhead(1.0, 0.75) == 0.25
    assert cost.communication_time_for_efficiency(0.55, 0.9) == pytest.approx(0.55 / 9)


def test_latency_bandwidth_balance():
    m = cost.latency_bandwidth_balance(8, 1.25e9, 20e-6)
    terms = cost.allreduce_terms(m, 8)
    assert terms.steps * 20e-6 == pytest.approx(terms.bytes / 1.25e9)


@pytest.mark.parametrize("call, name", [
    (lambda: cost.allreduce_time(M, 0, B), "n"),
    (lambda: cost.allreduce_time(-1, 4, B), "nbytes"),
    (lambda: cost.allreduce_time(math.nan, 4, B), "nbytes"),
    (lambda: cost.allreduce_time(M, 4, 0), "bandwidth"),
    (lambda: cost.allreduce_time(M, 4, B, latency=-1), "latency"),
    (lambda: cost.allreduce_time(M, 4, B, gamma=-1), "gamma"),
    (lambda: cost.allreduce_time(M, 4, B, algorithm="butterfly"), "algorithm"),
    (lambda: cost.collective_time("allreduce", M, 4, B), "op"),
    (lambda: cost.collective_time("broadcast", M, 4, B, algorithm="ring"), "algorithm"),
    (lambda: cost.bus_bandwidth("all_reduce", M, 4, 0), "seconds"),
    (lambda: cost.parallel_efficiency(0, 1), "t_compute"),
    (lambda: cost.required_bandwidth(M, 4, 0.5, 1.0), "efficiency"),
    (lambda: cost.required_bandwidth(M, 4, 0.5, 0.0), "efficiency"),
    (lambda: cost.communication_overhead(1.0, 2.0), "t_compute"),
    (lambda: cost.hierarchical_allreduce_time(M, 0, 4, B, B), "hosts"),
    (lambda: cost.hierarchical_allreduce_time(M, 2, 4, B, B, nics_per_host=0), "nics_per_host"),
    (lambda: cost.hierarchical_allreduce_time(M, 2, 4, B, B, nics_per_host=1.5), "nics_per_host"),
    (lambda: cost.hierarchical_allreduce_time(M, 2, 4, B, 0.0), "inter_bandwidth"),
    (lambda: cost.torus_allreduce_time(M, 2, 0, B), "cols"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


sizes = st.floats(min_value=0, max_value=1e12, allow_nan=False)
ranks = st.integers(min_value=1, max_value=4096)
rates = st.floats(min_value=1e3, max_value=1e13)
lats = st.floats(min_value=0, max_value=1e-2)


@settings(max_examples=200, deadline=None)
@given(sizes, sizes, ranks, rates, lats, st.sampled_from(ALGS))
def test_monotone_in_size(m1, m2, n, b, a, alg):
    lo, hi = sorted((m1, m2))
    assert cost.allreduce_time(lo, n, b, a, alg) <= cost.allreduce_time(hi, n, b, a, alg) * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(sizes, ranks, rates, lats, lats, st.sampled_from(ALGS))
def test_monotone_in_latency(m, n, b, a1, a2, alg):
    lo, hi = sorted((a1, a2))
    assert cost.allreduce_time(m, n, b, lo, alg) <= cost.allreduce_time(m, n, b, hi, alg) * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(sizes, ranks, rates)
def test_ring_bandwidth_time_bounded_as_n_grows(m, n, b):
    # without latency, a ring never needs more than 2 M / B, however many ranks
    t = cost.allreduce_time(m, n, b)
    assert t <= 2 * m / b * (1 + 1e-12)
    assert t >= cost.allreduce_time(m, max(1, n // 2), b) * (1 - 1e-12)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1, max_value=1e12), st.integers(min_value=1, max_value=4096),
       st.floats(min_value=1e-6, max_value=1e3),
       st.sampled_from(["all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce"]))
def test_busbw_algbw_round_trip(m, n, seconds, op):
    algbw = cost.algorithm_bandwidth(m, seconds)
    busbw = cost.bus_bandwidth(op, m, n, seconds)
    factor = cost.bus_factor(op, n)
    assume(factor > 0)
    assert busbw / factor == pytest.approx(algbw)
    assert m / algbw == pytest.approx(seconds)


def test_reduction_gamma_and_its_share():
    gamma = cost.reduction_gamma(900e9)
    assert gamma == pytest.approx(3 / 900e9)
    # ring: the gamma term is (n-1)/n M gamma, half the bytes of the beta term's 2(n-1)/n M
    m, n, b = 1e8, 8, 1.25e9
    with_gamma = cost.allreduce_time(m, n, b, gamma=gamma)
    assert with_gamma - cost.allreduce_time(m, n, b) == pytest.approx(7 / 8 * m * gamma)
    with pytest.raises(ValueError, match="memory_bandwidth"):
        cost.reduction_gamma(0)
    with pytest.raises(ValueError, match="touches"):
        cost.reduction_gamma(1e9, touches=0)
