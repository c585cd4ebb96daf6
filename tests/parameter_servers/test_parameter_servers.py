"""Tests for commlib.parameter_servers.simulate and the parameter-server section of commlib.cost.

Expected values are derived here, from the description of a PS round (who
sends which shard to whom) and from the formulas of Jiang et al. (2020,
sec. 2.2-2.3, 4.1) written out by hand, not copied from the code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from commlib import cost, hardware, units
from commlib.collectives import cost as collectives_cost
from commlib.parameter_servers import calculators as ps_calculators
from commlib.parameter_servers import cost as ps_cost
from commlib.parameter_servers import simulate as ps
from commlib.units import parse_rate, parse_size

SETTINGS = settings(max_examples=40, deadline=None)
BANDWIDTH = st.floats(min_value=1e6, max_value=1e12)
NBYTES = st.floats(min_value=1.0, max_value=1e11)


@st.composite
def rounds(draw, colocated=None):
    """(params, gradients, k, colocated) with integer-valued floats, so sums are exact."""
    n = draw(st.integers(1, 6))
    length = draw(st.integers(1, 30))
    col = draw(st.booleans()) if colocated is None else colocated
    k = draw(st.integers(1, min(length, n) if col else length))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    params = rng.integers(-50, 50, size=length).astype(np.float64)
    grads = [rng.integers(-50, 50, size=length).astype(np.float64) for _ in range(n)]
    return params, grads, k, col


def shard_sizes(length, k):
    """np.array_split's rule, from its documentation: the first length % k shards get one more."""
    return [len(part) for part in np.array_split(np.arange(length), k)]


# --- the simulation computes the right thing ------------------------------------------------

@SETTINGS
@given(rounds())
def test_server_sum_equals_numpy_sum(case):
    params, grads, k, col = case
    r = ps.ps_round(params, grads, servers=k, colocated=col, lr=0.25)
    np.testing.assert_array_equal(r.gradient_sum, np.sum(np.stack(grads), axis=0))


@SETTINGS
@given(rounds(), st.floats(0.0, 2.0))
def test_every_worker_pulls_the_sgd_step(case, lr):
    params, grads, k, col = case
    r = ps.ps_round(params, grads, servers=k, colocated=col, lr=lr)
    want = params - lr * np.mean(np.stack(grads), axis=0)
    np.testing.assert_allclose(r.params, want, rtol=1e-12, atol=1e-12)
    assert len(r.worker_params) == len(grads)
    for w in r.worker_params:
        np.testing.assert_array_equal(w, r.params)


def test_multidimensional_parameters_keep_their_shape():
    rng = np.random.default_rng(0)
    params = rng.normal(size=(3, 4))
    grads = [rng.normal(size=(3, 4)) for _ in range(3)]
    r = ps.ps_round(params, grads, servers=5, lr=0.1)
    assert r.params.shape == (3, 4)
    np.testing.assert_allclose(r.params, params - 0.1 * sum(grads) / 3)


def test_shards_follow_array_split():
    for length in range(1, 25):
        for k in range(1, length + 1):
            bounds = ps.shard_bounds(length, k)
            assert [b - a for a, b in bounds] == shard_sizes(length, k)
            assert bounds[0][0] == 0 and bounds[-1][1] == length


# --- the trace's bytes per machine equal the closed forms ---------------------------------

@SETTINGS
@given(rounds())
def test_trace_bytes_per_machine_follow_from_who_owns_what(case):
    params, grads, k, col = case
    n, length, item = len(grads), params.size, params.dtype.itemsize
    sizes = shard_sizes(length, k)
    owner = list(range(k)) if col else list(range(n, n + k))
    r = ps.ps_round(params, grads, servers=k, colocated=col)
    ranks = n if col else n + k
    sent = np.zeros(ranks, dtype=np.int64)
    received = np.zeros(ranks, dtype=np.int64)
    for j, size in enumerate(sizes):
        for i in range(n):
            if owner[j] == i:
                continue  # local shard: never on the wire
            sent[i] += size * item           # push shard j of worker i's gradient
            received[owner[j]] += size * item
            sent[owner[j]] += size * item    # pull shard j back to worker i
            received[i] += size * item
    np.testing.assert_array_equal(r.trace.bytes_sent, sent)
    np.testing.assert_array_equal(r.trace.bytes_received, received)
    assert r.trace.steps == (0 if sent.sum() == 0 else 2)


@SETTINGS
@given(n=st.integers(1, 6), k=st.integers(1, 6), per_shard=st.integers(1, 5), col=st.booleans())
def test_trace_equals_closed_form_traffic_on_even_shards(n, k, per_shard, col):
    assume(not col or k <= n)
    length = k * per_shard
    m = length * 8  # float64 gradient, bytes
    r = ps.ps_round(np.zeros(length), [np.ones(length)] * n, servers=k, colocated=col)
    traffic = ps.ps_traffic(m, n, k, colocated=col)
    sent, received = r.trace.bytes_sent, r.trace.bytes_received
    hosts = list(range(k)) if col else list(range(n, n + k))
    plain = [i for i in range(n) if i not in hosts]
    # hand-derived: non-colocated server nM/k, worker M; colocated host M + (n-2)M/k, others M
    host_bytes = (m + (n - 2) * m / k) if col else n * m / k
    for h in hosts:
        assert sent[h] == received[h] == pytest.approx(host_bytes) == pytest.approx(traffic.shard_host)
    for w in plain:
        assert sent[w] == received[w] == m == traffic.worker
    busiest = max(sent.max(), received.max())
    assert traffic.busiest == pytest.approx(busiest)
    # cost.ps_time on equal NICs is the busiest NIC's bytes over the bandwidth
    assert cost.ps_time(m, n, 1e9, servers=k, colocated=col) == pytest.approx(busiest / 1e9)


def test_note000_server_volume_is_workers_times_gradient():
    # note 000: PS receives = PS sends = gradient size x workers (one server)
    example = ps.WORKED_EXAMPLES["one_server"]
    m = example["params"] * 4
    t = ps.ps_traffic(m, example["workers"], 1)
    assert t.shard_host == 61_500_000 * 8 * 4
    assert t.worker == 61_500_000 * 4


def test_note000_colocated_rate_counts_both_directions():
    # note 000: colocated, every machine receives and sends twice: 4 x M x 7/8 summed over both
    # directions for 8 machines, i.e. 2 x M x 7/8 each way.
    m = 1.0
    t = ps.ps_traffic(m, 8, 8, colocated=True)
    assert 2 * t.shard_host == pytest.approx(4 * m * 7 / 8)


# --- PS vs ring all-reduce: the BytePS claims as properties -----------------------------------

def ring(m, n, b):
    return 2 * (n - 1) * m / (n * b)


def ps_plain(m, n, k, bg, bc):
    return max(m / bg, n * m / (k * bc))


@SETTINGS
@given(m=NBYTES, n=st.integers(1, 64), b=BANDWIDTH)
def test_colocated_ps_with_a_shard_per_machine_equals_ring_allreduce(m, n, b):
    t = cost.ps_time(m, n, b, servers=n, colocated=True)
    assert t == pytest.approx(ring(m, n, b), rel=1e-12, abs=0)
    assert t == pytest.approx(cost.allreduce_time(m, n, b), rel=1e-12, abs=0)
    assert cost.ps_time(m, n, b, servers=n, colocated=True, pipelined=False) == pytest.approx(t, rel=1e-12)


@SETTINGS
@given(m=NBYTES, n=st.integers(3, 256), b=BANDWIDTH)
def test_k_equal_n_beats_ring_for_more_than_two_machines(m, n, b):
    assert cost.ps_time(m, n, b, servers=n) < cost.allreduce_time(m, n, b)
    assert ps.ps_beats_ring(m, n, n, b)


@SETTINGS
@given(m=NBYTES, b=BANDWIDTH)
def test_two_machines_k_two_only_ties(m, b):
    assert cost.ps_time(m, 2, b, servers=2) == pytest.approx(cost.allreduce_time(m, 2, b), rel=1e-12)
    assert ps.smallest_k_to_beat_ring(m, 2, b) is None


@SETTINGS
@given(m=NBYTES, n=st.integers(2, 256), b=BANDWIDTH, data=st.data())
def test_half_as_many_servers_as_workers_loses(m, n, b, data):
    k = data.draw(st.integers(1, n // 2))
    assert cost.ps_time(m, n, b, servers=k) > cost.allreduce_time(m, n, b)
    assert not ps.ps_beats_ring(m, n, k, b)


@SETTINGS
@given(m=NBYTES, n=st.integers(1, 64), bg=BANDWIDTH, ratio=st.floats(0.1, 10.0))
def test_smallest_k_is_the_boundary(m, n, bg, ratio):
    bc = bg * ratio
    k_star = ps.smallest_k_to_beat_ring(m, n, bg, bc)
    wins = [k for k in range(1, 8 * n * n + 2) if ps_plain(m, n, k, bg, bc) < ring(m, n, bg)]
    if n <= 2:
        assert k_star is None and wins == []
        return
    # hand-derived: need n M / (k Bc) < 2(n-1)M/(n Bg)  <=>  k > n^2 Bg / (2 (n-1) Bc)
    bound = n * n * bg / (2 * (n - 1) * bc)
    # at an exact tie (bound an integer) "beats" is decided by rounding: leave ties out
    assume(abs(bound - round(bound)) > 1e-9 * bound)
    assert k_star == wins[0]
    assert wins == list(range(k_star, 8 * n * n + 2))
    assert k_star - 1 <= bound < k_star or math.isclose(bound, k_star - 1, rel_tol=1e-9)


@SETTINGS
@given(n=st.integers(3, 200))
def test_smallest_k_lies_between_half_n_and_n_on_equal_nics(n):
    k_star = ps.smallest_k_to_beat_ring(1e8, n, 1e10)
    assert n / 2 < k_star <= n


def test_latency_favours_the_ps_single_round_trip():
    # with every start-up at once (ps_time) the PS has 2 on the critical path (push, pull), the ring
    # 2(n-1) = 14 for n = 8: for a 1 kB message the latency term dominates and a single server wins.
    m, b, alpha = 1e3, 1e10, 1e-5
    t_ps = cost.ps_time(m, 8, b, servers=1, latency=alpha)
    assert t_ps == pytest.approx(2 * alpha + 8 * m / b)
    assert t_ps < cost.allreduce_time(m, 8, b, latency=alpha)
    # one message at a time (one-port) a server pays 2n = 16 start-ups, more than the ring's 14: no k wins
    assert ps.round_time(m, 8, b, servers=8, latency=alpha) >= 16 * alpha
    assert ps.smallest_k_to_beat_ring(m, 8, b, latency=alpha) is None


@SETTINGS
@given(m=NBYTES, n=st.integers(2, 32), b=BANDWIDTH)
def test_unpipelined_one_server_on_a_worker_is_the_naive_allreduce(m, n, b):
    # colocated k = 1: the server is one of the P processes; push then pull serialises 2(n-1)M.
    t = cost.ps_time(m, n, b, servers=1, colocated=True, pipelined=False)
    assert t == pytest.approx(2 * (n - 1) * m / b, rel=1e-12)
    assert t == pytest.approx(cost.allreduce_time(m, n, b, algorithm="naive"), rel=1e-12)


def test_non_pipelined_round_takes_twice_as_long():
    assert cost.ps_time(1e8, 8, 1e10, servers=2, pipelined=False) == pytest.approx(
        2 * cost.ps_time(1e8, 8, 1e10, servers=2))


def test_server_bandwidth_is_used_for_servers_only():
    # 4 workers at 10 GB/s, one server at 100 GB/s: server 4M/100 = 0.04 s < worker M/10 = 0.1 s
    assert cost.ps_time(1e9, 4, 1e10, servers=1, server_bandwidth=1e11) == pytest.approx(0.1)
    assert cost.ps_time(1e9, 4, 1e10, servers=1, server_bandwidth=1e9) == pytest.approx(4.0)


# --- BytePS' optimum -----------------------------------------------------------------------------

def test_note004_worked_example_is_2_56_ms():
    ex = ps.WORKED_EXAMPLES["byteps_two_machines"]
    m, b, n = parse_size(ex["nbytes"]), parse_rate(ex["bandwidth"]), ex["n"]
    # 2 (n-1) M / (n B) = 2 * 64e6 / (2 * 25e9) s
    assert cost.allreduce_time(m, n, b, algorithm="ring") == pytest.approx(2.56e-3)
    assert cost.byteps_time(m, n, 0, b) == pytest.approx(2.56e-3)
    # read as MiB it would be 2.68 ms
    assert cost.allreduce_time(parse_size("64 MiB"), n, b, algorithm="ring") == pytest.approx(2**26 / 25e9)


@SETTINGS
@given(m=NBYTES, n=st.integers(1, 64), b=BANDWIDTH)
def test_byteps_ends_are_allreduce_and_sharded_ps(m, n, b):
    assert cost.byteps_time(m, n, 0, b) == pytest.approx(cost.allreduce_time(m, n, b), rel=1e-12, abs=1e-300)
    if n > 1:
        assert cost.byteps_time(m, n, n, b) == pytest.approx(m / b, rel=1e-12)
        assert cost.byteps_time(m, n, 3 * n, b) == pytest.approx(m / b, rel=1e-12)


@SETTINGS
@given(m=NBYTES, n=st.integers(2, 64), b=BANDWIDTH, data=st.data())
def test_byteps_is_never_worse_than_either_and_improves_with_k(m, n, b, data):
    k = data.draw(st.integers(0, 2 * n))
    t = cost.byteps_time(m, n, k, b)
    assert t <= cost.allreduce_time(m, n, b) * (1 + 1e-12)
    if k >= 1:
        assert t <= cost.ps_time(m, n, b, servers=k) * (1 + 1e-12)
        assert t <= cost.byteps_time(m, n, k - 1, b) * (1 + 1e-12)
    assert t >= m / b * (1 - 1e-12)  # no GPU machine can send less than its M (n >= 2)


@SETTINGS
@given(n=st.integers(2, 40), data=st.data())
def test_byteps_split_balances_cpu_and_gpu_machines(n, data):
    k = data.draw(st.integers(1, n))
    x, y = ps.byteps_split(n, k)
    assert k * x + n * y == pytest.approx(1.0)
    assert x >= 0 and y >= 0
    cpu = n * x                          # CPU machine bytes each way, in units of M
    gpu = k * x + 2 * (n - 1) * y        # GPU machine: to CPUs, plus its own summation service
    assert cpu == pytest.approx(gpu)
    assert cpu == pytest.approx(cost.byteps_time(1.0, n, k, 1.0))


def test_byteps_with_slower_cpu_machines_by_hand():
    # n = 8, k = 4, GPU NICs 100 Gb/s, CPU NICs 10 Gb/s: r = B_w/B_s = 10,
    # x = 2(n-1)/(n^2 r + nk - 2k) = 14/664, and a CPU machine's n x M / B_s sets the round
    m, bw, bs = 1e9, 12.5e9, 1.25e9
    x = 14 / (64 * 10 + 32 - 8)
    assert cost.byteps_time(m, 8, 4, bw, server_bandwidth=bs) == pytest.approx(8 * x * m / bs, rel=1e-12)
    assert cost.byteps_time(m, 8, 4, bw, server_bandwidth=bs) > cost.byteps_time(m, 8, 4, bw)
    # CPU NICs fast enough that the CPU machines take the whole sum (y would go negative): M / B_w
    assert ps.byteps_split(8, 4, bandwidth_ratio=0.25) == (0.25, 0.0)
    assert cost.byteps_time(m, 8, 4, bw, server_bandwidth=4 * bw) == pytest.approx(m / bw, rel=1e-12)


@SETTINGS
@given(m=NBYTES, n=st.integers(2, 40), b=BANDWIDTH, ratio=st.floats(0.05, 20.0), data=st.data())
def test_byteps_split_balances_cpu_and_gpu_machines_on_unequal_nics(m, n, b, ratio, data):
    k = data.draw(st.integers(1, 2 * n))
    bs = b / ratio
    x, y = ps.byteps_split(n, k, bandwidth_ratio=ratio)
    assert k * x + n * y == pytest.approx(1.0) and x >= 0 and y >= 0
    cpu, gpu = n * x * m / bs, (k * x + 2 * (n - 1) * y) * m / b
    t = cost.byteps_time(m, n, k, b, server_bandwidth=bs)
    assert t == pytest.approx(max(cpu, gpu), rel=1e-12)
    if y > 0:
        assert cpu == pytest.approx(gpu, rel=1e-9)       # balanced
    # no split does better: try others along k x + n y = 1
    for share in (0.0, 0.25, 0.5, 0.75, 1.0):
        xs = share / k
        ys = (1 - k * xs) / n
        assert t <= max(n * xs * m / bs, (k * xs + 2 * (n - 1) * ys) * m / b) * (1 + 1e-9)
    assert t <= cost.allreduce_time(m, n, b) * (1 + 1e-12)   # still never worse than the ring on the GPU cards


@SETTINGS
@given(m=NBYTES, n=st.integers(2, 64), b=BANDWIDTH, data=st.data())
def test_on_the_same_cards_the_ring_beats_byteps(m, n, b, data):
    # all-reduce given BytePS's n + k cards: max(2(n-1)M/((n+k)B), M/b_min) <= 2n(n-1)M/((n^2+kn-2k)B),
    # strictly but for n = 2, k = 1 (both at the floor M/B)
    k = data.draw(st.integers(1, 2 * n))
    same = ps.allreduce_on_same_cards(m, n, k, b)
    assert same == pytest.approx(max(2 * (n - 1) * m / ((n + k) * b), m / ((1 + k // n) * b)), rel=1e-12)
    if (n, k) == (2, 1):
        assert same == pytest.approx(cost.byteps_time(m, n, k, b), rel=1e-12)
    else:
        assert same < cost.byteps_time(m, n, k, b)


def _direct_loads(m, shares, cards):
    n = len(cards)
    return [(m + (n - 2) * s) / b for s, b in zip(shares, cards)]   # seconds on each card, each way


def test_same_cards_shares_reach_the_quoted_bound_for_bert_large_on_twelve_cards():
    # k = 4 extra cards on n = 8 workers: s1 = M/36 on one-card machines, s2 = 2M/9 on two-card ones, T = 14M/(12B)
    from commlib import hardware
    m, b = hardware.gradient_bytes("bert_large", "fp32"), hardware.link("eth_100g").bandwidth
    cards = [b] * 4 + [2 * b] * 4
    shares, t = ps.same_cards_shares(m, cards)
    assert shares[0] == pytest.approx(m / 36) and shares[-1] == pytest.approx(2 * m / 9)
    assert sum(shares) == pytest.approx(m) and t == pytest.approx(14 * m / (12 * b))
    assert max(_direct_loads(m, shares, cards)) == pytest.approx(t)
    assert ps.allreduce_on_same_cards(m, 8, 4, b) == pytest.approx(t, rel=1e-12)
    assert round(t * 1e3) == 125
    # the recipe "shares proportional to cards" does not reach it: 1.5 M/B
    prop = [m * x / sum(cards) for x in cards]
    assert max(_direct_loads(m, prop, cards)) == pytest.approx(1.5 * m / b)


@SETTINGS
@given(m=NBYTES, data=st.data())
def test_same_cards_shares_are_feasible_and_no_split_does_better(m, data):
    n = data.draw(st.integers(2, 12))
    cards = [data.draw(st.floats(1e9, 4e10)) for _ in range(n)]
    shares, t = ps.same_cards_shares(m, cards)
    assert min(shares) >= 0 and sum(shares) == pytest.approx(m, rel=1e-9)
    assert max(_direct_loads(m, shares, cards)) <= t * (1 + 1e-9)
    assert t >= m / min(cards) * (1 - 1e-12)    # the floor: every rank sends and receives at least M
    weights = [data.draw(st.floats(0.0, 1.0)) for _ in range(n)]
    if sum(weights) > 0:
        other = [m * w / sum(weights) for w in weights]
        assert max(_direct_loads(m, other, cards)) >= t * (1 - 1e-9)


@SETTINGS
@given(n=st.integers(2, 6), k=st.integers(0, 6), per=st.integers(30, 60))
def test_byteps_round_traffic_matches_closed_form_within_rounding(n, k, per):
    length = per * (n + k)
    grads = [np.full(length, float(i + 1)) for i in range(n)]
    r = ps.byteps_round(np.zeros(length), grads, cpu_machines=k, lr=1.0)
    np.testing.assert_array_equal(r.gradient_sum, np.full(length, n * (n + 1) / 2))
    m = length * 8
    busiest = max(r.trace.bytes_sent.max(), r.trace.bytes_received.max())
    # each shard is off by less than one element; a machine touches at most n + k shards, n times
    slack = 2 * n * (n + k) * 8
    assert abs(busiest - cost.byteps_time(m, n, k, 1.0)) <= slack


# --- note 002's comparison --------------------------------------------------------------------

def test_server_and_ring_volumes_and_the_like_for_like_ratio():
    p = np.arange(2, 33)
    v = ps.server_and_ring_volumes(1.0, p)
    np.testing.assert_allclose(v["ps_server_total"], 2 * (p - 1))
    np.testing.assert_allclose(v["ring_rank_sent"], 2 * (p - 1) / p)
    np.testing.assert_allclose(v["ps_server_total"] / v["ring_rank_sent"], p)
    np.testing.assert_allclose(v["ps_server_each_way"] / v["ring_rank_each_way"], p / 2)
    # the chapter's hot spot: one server on a machine of its own, nM each way (eq-ps-apart with k = 1)
    np.testing.assert_allclose(v["ps_separate_each_way"], p)


def test_compare_reports_winner_and_smallest_k():
    c = ps.compare_ps_ring(1e8, 8, 8, 1e10)
    assert c.winner == "PS" and c.ratio < 1 and c.smallest_k == 5
    c = ps.compare_ps_ring(1e8, 8, 8, 1e10, colocated=True)
    assert c.winner == "tie"
    c = ps.compare_ps_ring(1e8, 8, 2, 1e10)
    assert c.winner == "ring all-reduce" and c.ratio == pytest.approx((8 / 2) / (2 * 7 / 8))


# --- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(params=np.zeros(4), gradients=[np.ones(4)], servers=0), "servers"),
        (dict(params=np.zeros(4), gradients=[np.ones(4)], servers=5), "servers"),
        (dict(params=np.zeros(4), gradients=[np.ones(4), np.ones(3)]), "gradients[1]"),
        (dict(params=np.zeros(4), gradients=[]), "gradients"),
        (dict(params=np.zeros(4), gradients=[np.ones(4)] * 2, servers=3, colocated=True), "servers"),
        (dict(params=np.zeros(4), gradients=[np.ones(4)], lr=-1.0), "lr"),
        (dict(params=np.zeros(4, dtype=int), gradients=[np.ones(4, dtype=int)]), "floating"),
        (dict(params=np.zeros(0), gradients=[np.zeros(0)]), "params"),
    ],
)
def test_ps_round_rejects_bad_input_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError) as err:
        ps.ps_round(**kwargs)
    assert name in str(err.value)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: cost.ps_time(1e6, 0, 1e9), "workers"),
        (lambda: cost.ps_time(1e6, 4, 0.0), "bandwidth"),
        (lambda: cost.ps_time(1e6, 4, 1e9, servers=0), "servers"),
        (lambda: cost.ps_time(1e6, 4, 1e9, servers=5, colocated=True), "servers"),
        (lambda: cost.ps_time(-1.0, 4, 1e9), "nbytes"),
        (lambda: cost.ps_time(1e6, 4, 1e9, server_bandwidth=-1.0), "server_bandwidth"),
        (lambda: cost.byteps_time(1e6, 0, 1, 1e9), "n"),
        (lambda: cost.byteps_time(1e6, 4, -1, 1e9), "k"),
        (lambda: ps.ps_traffic(1e6, 4, 5, colocated=True), "servers"),
        (lambda: ps.smallest_k_to_beat_ring(1e6, 4, 1e9, bandwidth_cpu=0.0), "bandwidth_cpu"),
        (lambda: ps.byteps_round(np.zeros(4), [np.ones(4)], cpu_machines=-1), "cpu_machines"),
        (lambda: ps.server_and_ring_volumes(1.0, [0, 2]), "processes"),
        (lambda: ps.shard_bounds(3, 4), "servers"),
    ],
)
def test_cost_functions_reject_bad_input(call, name):
    with pytest.raises(ValueError) as err:
        call()
    assert name in str(err.value)


# --- the chapter's self-checks -------------------------------------------------------------------

def test_ch03_answers_match_hand_computation():
    from commlib.check import check, expected

    vgg = 138_357_544 * 4
    assert expected("ch03.server_in_gb") == pytest.approx(16 * vgg / 1e9)
    assert expected("ch03.one_server_ms") == pytest.approx(16 * vgg / 12.5e9 * 1e3)
    assert expected("ch03.smallest_k") == math.floor(16**2 / (2 * 15)) + 1 == 9
    assert expected("ch03.smallest_k_fast_servers") == math.floor(16**2 / (2 * 15) / 2) + 1 == 5
    assert expected("ch03.byteps_ms") == pytest.approx(2 * 8 * 7 / (64 + 32 - 8) * 64e6 / 25e9 * 1e3)
    assert expected("ch03.colocated_rate_gbps") == pytest.approx(2 * 7 / 8 * 61.5e6 * 4 / 0.5 * 8 / 1e9)
    # a learner who sums both directions is told so
    both = 2 * expected("ch03.colocated_rate_gbps")
    assert "both directions" in check("ch03.colocated_rate_gbps", both).message
    assert "n/2" in check("ch03.smallest_k", 8).message
    assert check("ch03.smallest_k", 9).correct


def _ch03_mistakes(qid: str, v: dict) -> dict[str, float]:
    """Mistaken answers to a self-check, by hand from the variant's numbers: phrase of the hint -> value."""
    vgg = 138_357_544 * 4
    if qid == "ch03.server_in_gb":
        right = v["n"] * vgg / 1e9
        return {"both directions": 2 * right, "one worker's gradient": vgg / 1e9, "bits and bytes": 8 * right,
                "GiB": v["n"] * vgg / 2**30}
    if qid == "ch03.one_server_ms":
        right = v["n"] * vgg / 12.5e9 * 1e3
        return {"not 2 n M / B": 2 * right, "bits and bytes": v["n"] * vgg / 100e9 * 1e3}
    assert qid == "ch03.byteps_ms"
    n, k, m, b = 8, v["k"], v["size_mb"] * 1e6, 25e9
    right = 2 * n * (n - 1) / (n * n + k * n - 2 * k) * m / b * 1e3
    return {"ring all-reduce time": 2 * (n - 1) / n * m / b * 1e3, "M/B, the time": m / b * 1e3,
            "bits and bytes": 8 * right, "MiB": right * 2**20 / 1e6}


@pytest.mark.parametrize("qid", ["ch03.server_in_gb", "ch03.one_server_ms", "ch03.byteps_ms"])
def test_ch03_hints_follow_each_variants_own_numbers(qid):
    # every variant a graded assignment can draw: each hint fires for its own mistake, and for no other
    import itertools

    from commlib.check import check, givens_of

    gs = givens_of(qid)
    for combo in itertools.product(*(g.values for g in gs)):
        v = dict(zip((g.name for g in gs), combo))
        mistakes = _ch03_mistakes(qid, v)
        for phrase, value in mistakes.items():
            message = check(qid, value, **v).message
            assert message.startswith("Not yet") and phrase in message, (v, phrase, message)
            for other, other_value in mistakes.items():   # two slips that give one number may share a hint
                if other != phrase and abs(other_value / value - 1) > 0.03:
                    assert other not in message, (v, phrase, other, message)


# ---------------------------------------------------------------- one-port round time

@settings(max_examples=40, deadline=None)
@given(m=st.floats(0, 1e10), n=st.integers(1, 40), k=st.integers(1, 40), bw=st.floats(1e6, 1e12),
       lat=st.floats(0, 1e-3), col=st.booleans(), pipe=st.booleans())
def test_round_time_without_one_port_is_cost_ps_time(m, n, k, bw, lat, col, pipe):
    assume(not col or k <= n)
    want = cost.ps_time(m, n, bw, servers=k, latency=lat, colocated=col, pipelined=pipe)
    assert ps.round_time(m, n, bw, servers=k, latency=lat, colocated=col, pipelined=pipe, one_port=False) == want
    # without start-ups the one-port model is the same bandwidth-only formula
    assert ps.round_time(m, n, bw, servers=k, colocated=col, pipelined=pipe) == pytest.approx(
        cost.ps_time(m, n, bw, servers=k, colocated=col, pipelined=pipe), rel=1e-12)


def by_hand_pieces(m, n, k, a, bw, bs, p):
    # each shard cut into p pieces; push piece 1, then p - 1 stages that pull one piece while pushing the
    # next, then pull the last: p + 1 stages, each a worker's k messages or a server's n, whichever is longer
    return (p + 1) * max(k * (a + m / (k * p * bw)), n * (a + m / (k * p * bs)))


def test_one_port_server_start_ups_grow_with_workers():
    # by hand: one server receives n pushes and sends n pulls, each alpha + M/B on its card
    m, b, a = 1e6, 1e9, 1e-5
    for n in (2, 8, 32):
        assert ps.round_time(m, n, b, latency=a, pipelined=False) == pytest.approx(2 * n * (a + m / b))
        best = min(by_hand_pieces(m, n, 1, a, b, b, p) for p in range(1, 2000))
        assert ps.round_time(m, n, b, latency=a) == pytest.approx(best, rel=1e-12)
    # with k servers a worker sends k shards: k start-ups, M bytes; each server n start-ups, nM/k bytes
    assert ps.round_time(m, 4, b, servers=8, latency=a, pieces=3) == pytest.approx(
        4 * max(8 * a + m / (3 * b), 4 * a + m / (2 * 3 * b)))


@settings(max_examples=40, deadline=None)
@given(m=st.floats(1, 1e10), n=st.integers(1, 40), k=st.integers(1, 40), bw=st.floats(1e6, 1e12),
       ratio=st.floats(0.1, 10.0), lat=st.floats(1e-7, 1e-3))
def test_the_best_number_of_pieces_is_the_brute_force_one(m, n, k, bw, ratio, lat):
    p = ps.round_pieces(m, n, bw, servers=k, latency=lat, server_bandwidth=ratio * bw)
    t = ps.round_time(m, n, bw, servers=k, latency=lat, server_bandwidth=ratio * bw)
    assert t == pytest.approx(by_hand_pieces(m, n, k, lat, bw, ratio * bw, p), rel=1e-12)
    for q in range(1, 2 * p + 3):
        assert t <= by_hand_pieces(m, n, k, lat, bw, ratio * bw, q) * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(m=st.floats(1, 1e10), n=st.integers(1, 40), k=st.integers(1, 40), bw=st.floats(1e6, 1e12),
       lat=st.floats(0, 1e-3), col=st.booleans())
def test_pipelining_is_never_slower_than_push_then_pull(m, n, k, bw, lat, col):
    assume(not col or k <= n)
    pipe = ps.round_time(m, n, bw, servers=k, latency=lat, colocated=col)
    assert pipe <= ps.round_time(m, n, bw, servers=k, latency=lat, colocated=col, pipelined=False) * (1 + 1e-12)
    # and never below the bandwidth-only round, which it reaches only without start-ups
    assert pipe >= cost.ps_time(m, n, bw, servers=k, colocated=col) * (1 - 1e-12)


def test_one_piece_per_shard_means_push_then_pull():
    # 1 MB on 32 workers, 25 Gb/s, alpha = 10 us, k = n: cutting pieces costs more start-ups than it saves
    m, n, b, a = 1e6, 32, 3.125e9, 1e-5
    assert ps.round_pieces(m, n, b, servers=n, latency=a) == 1
    assert ps.round_time(m, n, b, servers=n, latency=a) == pytest.approx(2 * (n * a + m / b))
    assert ps.round_time(m, n, b, servers=n, latency=a) > cost.allreduce_time(m, n, b, a, algorithm="ring")
    assert ps.round_pieces(m, n, b, servers=n) is None      # without start-ups more pieces always help


@settings(max_examples=30, deadline=None)
@given(m=st.floats(1, 1e9), n=st.integers(2, 32), bw=st.floats(1e6, 1e12), lat=st.floats(0, 1e-3))
def test_one_port_matches_the_collectives_of_chapter_one(m, n, bw, lat):
    # one shard on worker 0, push before pull: the naive master of chapter 1, 2(n-1)(alpha + M/B)
    naive = cost.allreduce_time(m, n, bw, lat, algorithm="naive")
    assert ps.round_time(m, n, bw, servers=1, latency=lat, colocated=True, pipelined=False) == pytest.approx(naive)
    # a shard on every worker, push before pull: the ring all-reduce, 2(n-1)(alpha + M/(nB))
    ring = cost.allreduce_time(m, n, bw, lat, algorithm="ring")
    assert ps.round_time(m, n, bw, servers=n, latency=lat, colocated=True, pipelined=False) == pytest.approx(ring)


def test_smallest_k_with_start_ups_beats_the_ring_and_k_minus_one_does_not():
    m, n, b, a = 1e8, 8, 12.5e9, 5e-6
    k = ps.smallest_k_to_beat_ring(m, n, b, latency=a)
    ring = cost.allreduce_time(m, n, b, a, algorithm="ring")
    assert ps.round_time(m, n, b, servers=k, latency=a) < ring
    assert k == 1 or ps.round_time(m, n, b, servers=k - 1, latency=a) >= ring


def test_the_calculators_byteps_row_uses_the_server_link_and_is_absent_when_colocated():
    m = hardware.gradient_bytes("bert_large", "fp32")
    r = ps_calculators.ps_results("bert_large", "fp32", 8, 4, server_link="eth_10g")
    want = cost.byteps_time(m, 8, 4, hardware.link("eth_100g").bandwidth,
                            server_bandwidth=hardware.link("eth_10g").bandwidth)
    assert want == pytest.approx(14 / 83 * m / hardware.link("eth_10g").bandwidth)   # 8 x 14/664
    assert r["BytePS optimum with k CPU machines"] == units.format_time(want)
    assert r["BytePS optimum with k CPU machines"] != ps_calculators.ps_results(
        "bert_large", "fp32", 8, 4)["BytePS optimum with k CPU machines"]
    assert "BytePS optimum with k CPU machines" not in ps_calculators.ps_results("bert_large", "fp32", 8, 4,
                                                                                 colocated=True)


def test_ps_results_is_the_calculator_and_names_bad_controls():
    r = ps_calculators.ps_results("bert_large", "fp32", 8, 4)
    assert r["smallest k (separate servers) to beat the ring"] == "5 server machines"
    for kwargs, word in (({"n": 0}, "n must be"), ({"k": 300}, "k must be"), ({"k": 9, "colocated": True}, "k must be"),
                         ({"worker_link": "carrier_pigeon"}, "link")):
        with pytest.raises(ValueError, match=word):
            ps_calculators.ps_results(**kwargs)


@pytest.mark.parametrize("kwargs, name", [({"model": "nope"}, "model"), ({"dtype": "int3"}, "dtype"),
                                          ({"n": 0}, "n"), ({"k": 300}, "k"),
                                          ({"worker_link": "nvlink2"}, "worker_link"),
                                          ({"server_link": "x"}, "server_link")])
def test_ps_calculator_names_the_bad_control(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        ps_calculators.ps_results(**kwargs)


def test_sharding_figure_title_writes_the_rate_without_trailing_zeros():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from commlib.views import parameter_servers as ps_views
    for rate, words in ((hardware.link("eth_100g").bandwidth, "100 Gb/s"), (2.5e9 / 8, "2.5 Gb/s")):
        fig = ps_views.sharding_figure(ps.sharding_curves(1e9, 8, rate, ks=range(1, 5)))
        assert words in fig.axes[0].get_title()
        plt.close(fig)


# ---------------------------------------------------------------- latency in flight: phi < 1

def streaming_schedule(m, n, k, alpha, bw, q, phi):
    """Every message of a round with k separate servers on equal cards, timed: ``(start, end, landed, card
    directions held, piece, kind)``. Each stage's messages are dealt to max(n, k) slots by an edge colouring of
    K(n, k) (worker w and server i meet in slot (w - i) mod max(n, k)), each slot phi alpha + M/(kqB) long; the
    pushes of piece j fill window j - 1 of length S = max(n, k) x slot, the pulls of piece j window j, shifted
    by the latency (1 - phi) alpha."""
    slot = phi * alpha + m / (k * q * bw)
    width = max(n, k)
    period, flight = width * slot, (1 - phi) * alpha
    out = []
    for j in range(q):
        for w in range(n):
            for i in range(k):
                c = (w - i) % width
                t = j * period + c * slot
                out.append((t, t + slot, t + slot + flight, {("w", w, "send"), ("s", i, "recv")}, j, "push"))
                t = (j + 1) * period + flight + c * slot
                out.append((t, t + slot, t + slot + flight, {("s", i, "send"), ("w", w, "recv")}, j, "pull"))
    return out


@pytest.mark.parametrize("n, k, q, phi", [(4, 4, 3, 0.0), (8, 2, 5, 0.3), (3, 6, 2, 0.7), (5, 5, 1, 1.0),
                                          (32, 32, 6, 0.0)])
def test_the_streaming_round_is_a_schedule_that_keeps_every_rule(n, k, q, phi):
    # the closed form is reached by a schedule in which no card direction holds two messages at once and no
    # pull leaves before every push of its piece has landed; its last message lands at T(q)
    m, bw, alpha = 1e6, 3.125e9, 1e-5
    msgs = streaming_schedule(m, n, k, alpha, bw, q, phi)
    held = {}
    for start, end, _, cards, _, _ in msgs:
        for card in cards:
            held.setdefault(card, []).append((start, end))
    for spans in held.values():
        spans.sort()
        assert all(b[0] >= a[1] - 1e-15 for a, b in zip(spans, spans[1:]))
    landed = {}
    for _, _, land, _, piece, kind in msgs:
        if kind == "push":
            landed[piece] = max(landed.get(piece, 0.0), land)
    assert all(start >= landed[piece] - 1e-15 for start, _, _, _, piece, kind in msgs if kind == "pull")
    makespan = max(land for _, _, land, _, _, _ in msgs)
    assert makespan == pytest.approx(ps.round_time(m, n, bw, servers=k, latency=alpha, pieces=q, overhead=phi),
                                     rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(m=st.floats(1, 1e9), n=st.integers(1, 40), k=st.integers(1, 40), bw=st.floats(1e6, 1e12),
       lat=st.floats(1e-7, 1e-3), q=st.integers(1, 50))
def test_latency_in_flight_has_the_one_port_count_and_the_bandwidth_round_as_limits(m, n, k, bw, lat, q):
    # phi = 1: every start-up holds the card, the count of chapter 1; phi = 0: latency twice on the critical
    # path, and with ever more pieces the bandwidth-only round plus the last push's and the last pull's latency
    assert ps.round_time(m, n, bw, servers=k, latency=lat, pieces=q, overhead=1.0) == pytest.approx(
        by_hand_pieces(m, n, k, lat, bw, bw, q), rel=1e-12)
    limit = cost.ps_time(m, n, bw, servers=k, latency=lat)
    assert ps.round_pieces(m, n, bw, servers=k, latency=lat, overhead=0.0) is None
    assert ps.round_time(m, n, bw, servers=k, latency=lat, overhead=0.0) == pytest.approx(limit, rel=1e-12)
    t_q = ps.round_time(m, n, bw, servers=k, latency=lat, pieces=q, overhead=0.0)
    assert limit * (1 - 1e-12) <= t_q <= ps.round_time(m, n, bw, servers=k, latency=lat, pieces=q, overhead=0.5) * (
        1 + 1e-12)
    assert t_q == pytest.approx(limit + max(1 / bw, n / (k * bw)) * m / q, rel=1e-9)


def chain_by_piece(steps, q, bw, alpha, phi):
    """A chain all-reduce cut into q pieces a step, timed piece by piece: a card sends its pieces in order,
    and piece j of step s + 1 leaves once piece j of step s has landed (every rank alike)."""
    flight, prev, prev_tau = (1 - phi) * alpha, None, None
    for size in steps:
        tau, row = phi * alpha + size / (q * bw), []
        for j in range(q):
            t = 0.0
            if j:
                t = row[-1] + tau
            elif prev is not None:
                t = prev[-1] + prev_tau
            if prev is not None:
                t = max(t, prev[j] + prev_tau + flight)
            row.append(t)
        prev, prev_tau = row, tau
    return prev[-1] + prev_tau + flight


@pytest.mark.parametrize("algorithm", ["ring", "tree", "recursive_doubling", "halving_doubling"])
@pytest.mark.parametrize("n", [2, 6, 8, 12])
@pytest.mark.parametrize("phi", [0.05, 0.3, 1.0])
def test_a_pipelined_rival_is_its_best_piece_by_piece_schedule(algorithm, n, phi):
    m, bw, alpha = 1e6, 3.125e9, 1e-5
    steps = collectives_cost.allreduce_step_bytes(m, n, algorithm)
    assert len(steps) == cost.allreduce_terms(m, n, algorithm).steps
    assert sum(steps) == pytest.approx(cost.allreduce_terms(m, n, algorithm).bytes, rel=1e-12)
    best = min(chain_by_piece(steps, q, bw, alpha, phi) for q in range(1, 120))
    assert ps_cost.rival_time(m, n, bw, alpha, algorithm, overhead=phi) == pytest.approx(best, rel=1e-12)
    assert chain_by_piece(steps, 1, bw, alpha, phi) == pytest.approx(cost.allreduce_time(m, n, bw, alpha, algorithm))


def test_the_smallest_k_beyond_the_slider_says_so():
    r = ps_calculators.ps_results("bert_large", "fp32", 256, 4, server_link="eth_1g")
    best = r["smallest k (separate servers) to beat the ring"]
    k = int(best.split()[0])
    assert k > ps_calculators.MAX_SERVERS and best.endswith(f"more than the {ps_calculators.MAX_SERVERS} the "
                                                            "calculator offers")
    with pytest.raises(ValueError, match="k must be >= 1 and <= 256"):
        ps_calculators.ps_results("bert_large", "fp32", 8, ps_calculators.MAX_SERVERS + 1)
    assert "offers" not in ps_calculators.ps_results("bert_large", "fp32", 8, 4)[
        "smallest k (separate servers) to beat the ring"]


@pytest.mark.parametrize("n, k, m, phi", [(16, 3, 300e3, 0.5), (16, 3, 300e3, 1.0), (32, 5, 1e6, 0.3)])
def test_direct_on_fast_extra_cards_charges_no_start_ups_to_ranks_that_own_no_share(n, k, m, phi):
    # the server cards (16 times the workers') put every share on the k machines that hold one: the other n - k ranks
    # own nothing, so in each stage a worker sends k pieces (k - 1 on an owner) and only an owner receives n - 1;
    # the count by hand, stages in sequence, against n - 1 start-ups per stage on every card
    b_w, b_s, alpha = 3.125e9, 50e9, 1e-5
    cards = [b_w + b_s] * k + [b_w] * (n - k)
    shares, _ = ps.same_cards_shares(m, cards)
    assert all(abs(s) <= 1e-12 * m for s in shares[k:]) and all(s > 0 for s in shares[:k])
    by_hand = 2 * max(k * phi * alpha + m / b_w, (k - 1) * phi * alpha + (m - m / k) / (b_w + b_s),
                      (n - 1) * (phi * alpha + m / k / (b_w + b_s))) + 2 * (1 - phi) * alpha
    every_card = 2 * (n - 1) * phi * alpha + 2 * (1 - phi) * alpha + m / b_w
    direct = ps.allreduce_on_same_cards(m, n, k, b_w, b_s, latency=alpha, algorithm="direct", overhead=phi)
    assert direct == pytest.approx(min(by_hand, every_card), rel=1e-12)
    # with no start-ups the bandwidth term is unchanged
    assert ps.allreduce_on_same_cards(m, n, k, b_w, b_s, algorithm="direct") == pytest.approx(m / b_w, rel=1e-12)


def test_best_allreduce_on_same_cards_counts_the_ps_schedule_among_the_workers():
    """Server cards 16 times the workers' (25 Gb/s, alpha = 10 us, one-port phi = 1), n = 16, k = 4, 1 MB: the PS
    takes 3 x max(40 + 160, 160 + 40) = 600 us, the library's direct reduce-scatter/all-gather on the same cards 620 us
    (its overlapped accounting; unpipelined, stages in sequence, it takes 720 us). The
    PS's own schedule among the workers is an all-reduce on those cards too, and with it counted the PS never wins."""
    m, n, k, b_w, b_s, alpha = 1e6, 16, 4, 3.125e9, 50e9, 1e-5
    t_ps = ps_cost.round_time(m, n, b_w, servers=k, latency=alpha, server_bandwidth=b_s, overhead=1.0)
    direct = ps_cost.allreduce_on_same_cards(m, n, k, b_w, b_s, latency=alpha, algorithm="direct", overhead=1.0)
    assert t_ps == pytest.approx(600e-6, rel=1e-9) and direct == pytest.approx(620e-6, rel=1e-9)
    assert ps_cost.direct_in_sequence_on_same_cards(m, n, k, b_w, b_s, alpha, 1.0) == pytest.approx(720e-6, rel=1e-9)
    name, best = ps_cost.best_allreduce_on_same_cards(m, n, k, b_w, b_s, latency=alpha, overhead=1.0)
    assert name == ps_cost.OWN_SCHEDULE and best <= t_ps * (1 + 1e-12)
    assert ps_cost.allreduce_on_same_cards(m, n, k, b_w, b_s, alpha, overhead=1.0) == best
    # from k = n on every machine holds a server's card and a shard: the schedule is the direct one
    assert (ps_cost.allreduce_on_same_cards(m, n, n, b_w, b_s, alpha, ps_cost.OWN_SCHEDULE, 0.5)
            == ps_cost.allreduce_on_same_cards(m, n, n, b_w, b_s, alpha, ps_cost.DIRECT, 0.5))


@pytest.mark.parametrize("n", [4, 8, 16, 32])
def test_on_the_same_cards_the_ps_never_beats_every_counted_allreduce(n):
    """Near the fast-server-cards case (k < n and a little above, cards 1 to 16 times faster, 30 kB to 30 MB, every
    share phi), the PS is never faster than the best all-reduce counted on its own cards."""
    b_w, alpha = 3.125e9, 1e-5
    for k in [*range(1, n), n + 1]:
        for r in (1, 4, 16):
            for m in (3e4, 3e5, 1e6, 3e7):
                for phi in (0.0, 0.5, 1.0):
                    t_ps = ps_cost.round_time(m, n, b_w, servers=k, latency=alpha, server_bandwidth=r * b_w, overhead=phi)
                    _, best = ps_cost.best_allreduce_on_same_cards(m, n, k, b_w, r * b_w, alpha, phi)
                    assert best <= t_ps * (1 + 1e-9), (k, r, m, phi)


@pytest.mark.parametrize("n, k", [(8, 1), (8, 4), (8, 5), (5, 7), (16, 3)])
def test_direct_in_sequence_is_no_faster_than_the_ring_at_the_slowest_workers_pace(n, k):
    """Stages one after the other (bandwidth terms): no shares beat 2(n-1)M/(nB_min), a brute force over two classes
    of shares (the fast workers' and the others'), and equal shares reach it; overlapped, the direct one is faster."""
    m, b = 1.0, 1.0
    cards = [b + (k // n + (1 if i < k % n else 0)) * b for i in range(n)]
    b_min = min(cards)
    bound = 2 * (n - 1) * m / (n * b_min)
    t = ps.direct_in_sequence_on_same_cards(m, n, k, b)
    assert t == pytest.approx(bound, rel=1e-12)
    fast = k % n
    for j in range(0, 201):
        slow_share = j / 200 / (n - fast)
        shares = [(1 - (n - fast) * slow_share) / fast] * fast + [slow_share] * (n - fast)
        assert ps_cost._direct_in_sequence(m, shares, cards, 0.0, 1.0) >= bound * (1 - 1e-12)
    assert ps.allreduce_on_same_cards(m, n, k, b, algorithm="direct") < t
