"""Tests for commlib.network.placement (note 000's estimator).

Expectations come from the formulas written out by hand here, from
commlib.cost (an independent implementation of the ring and hierarchical
forms), and from properties any sane estimator must have.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib import cost, hardware
from commlib.network import calculators, placement
from commlib.network.placement import Cluster, estimate

SETTINGS = settings(max_examples=30, deadline=None)
M = 1e8


def uniform(hosts=4, intra=1e9, inter=1e8, slots=4):
    return Cluster((intra,) * hosts, (inter,) * hosts, (slots,) * hosts)


def test_single_host_is_a_ring_on_the_intra_link():
    c = placement.example_cluster()
    for g in (2, 3, 4):
        est = estimate(c, {"host3": g}, nbytes=M)
        assert est.time == pytest.approx(cost.allreduce_time(M, g, c.intra[3]))
        assert (est.algorithm, est.bottleneck_kind, est.bottleneck_host) == ("ring", "intra", 3)


def test_one_worker_per_host_is_bounded_by_the_slowest_network_link():
    c = placement.example_cluster()
    hosts = [0, 2, 5, 6]
    est = estimate(c, hosts, nbytes=M)
    slowest = min(c.inter[h] for h in hosts)                  # host 2: 59.5 MB/s
    assert est.time == pytest.approx(2 * 3 / 4 * M / slowest)
    assert (est.bottleneck_kind, est.bottleneck_host) == ("inter", 2)
    assert est.bottleneck_bandwidth == pytest.approx(59.5e6)


@pytest.mark.parametrize("hosts,per", [(2, 2), (2, 4), (3, 3), (4, 2)])
def test_hierarchical_matches_cost_with_the_host_link_shared_by_its_workers(hosts, per):
    c = uniform(hosts=hosts, slots=per)
    est = estimate(c, {h: per for h in range(hosts)}, nbytes=M)
    assert est.algorithm == "hierarchical"
    # commlib.cost gives each rank its own inter-host bandwidth; here g ranks share one host link
    want = cost.hierarchical_allreduce_time(M, hosts, per, c.intra[0], c.inter[0] / per)
    assert est.time == pytest.approx(want)
    # ... which is commlib.cost's one-NIC-per-host case
    one_nic = cost.hierarchical_allreduce_time(M, hosts, per, c.intra[0], c.inter[0], nics_per_host=1)
    assert est.time == pytest.approx(one_nic)


def test_ps_server_link_carries_every_worker():
    c = uniform(hosts=4, inter=1e8)
    est = estimate(c, {1: 1, 2: 1, 3: 1}, nbytes=M, mode="ps", server_host=0)
    # full duplex, push and pull overlapped: 3M in and 3M out at the same time, at 100 MB/s each way
    assert est.time == pytest.approx(3 * M / 1e8)
    assert (est.bottleneck_kind, est.bottleneck_host, est.server_host) == ("inter", 0, 0)
    assert est.pipelined is True
    # push first, then pull: the same link twice in a row
    slow = estimate(c, {1: 1, 2: 1, 3: 1}, nbytes=M, mode="ps", server_host=0, pipelined=False)
    assert slow.time == pytest.approx(2 * 3 * M / 1e8)
    assert "push and pull in turn" in slow.describe()


def test_ps_on_a_uniform_cluster_is_chapter_3s_single_server_round():
    # one worker per host, server alone on host 0: chapter 3's T = max(M/B_w, nM/B_s) with B_w = B_s
    for n in (1, 2, 5):
        c = uniform(hosts=n + 1, inter=2e8, slots=1)
        est = estimate(c, list(range(1, n + 1)), nbytes=M, mode="ps", server_host=0)
        assert est.time == pytest.approx(cost.ps_time(M, n, 2e8))
        assert est.time == pytest.approx(n * M / 2e8)


def test_ps_workers_sharing_a_host_share_its_network_link():
    # server on host 0; host 1 holds 3 workers behind a 300 MB/s link, host 2 one worker behind 50 MB/s;
    # the server's link (1 GB/s) carries 4 gradients: loads 3M/300, M/50, 4M/1000 MB/s -> host 2 decides
    c = Cluster((1e9, 1e9, 1e9), (1e9, 3e8, 5e7), (4, 4, 4))
    est = estimate(c, {1: 3, 2: 1}, nbytes=M, mode="ps", server_host=0)
    assert est.time == pytest.approx(max(3 * M / 3e8, M / 5e7, 4 * M / 1e9)) == pytest.approx(2.0)
    assert (est.bottleneck_kind, est.bottleneck_host) == ("inter", 2)


def test_ps_picks_the_fastest_server_host_by_default():
    # host 0's internal link is slow: a server there would wait on its local worker
    c = Cluster((1e7, 1e9, 1e9), (1e9, 1e9, 1e9), (4, 4, 4))
    assert estimate(c, {0: 1, 2: 1}, nbytes=M, mode="ps", server_host=0).time == pytest.approx(M / 1e7)
    assert estimate(c, {0: 1, 2: 1}, nbytes=M, mode="ps", server_host=1).time == pytest.approx(2 * M / 1e9)
    est = estimate(c, {0: 1, 2: 1}, nbytes=M, mode="ps")
    assert est.server_host == 2
    assert est.time == pytest.approx(M / 1e9)


def test_ps_is_slower_than_allreduce_for_many_remote_workers():
    c = uniform(hosts=8, slots=1)
    ring = estimate(c, list(range(8)), nbytes=M)
    ps = estimate(c, list(range(1, 8)) + [0], nbytes=M, mode="ps", server_host=0)
    assert ps.time > ring.time


def test_model_preset_gives_the_gradient_bytes():
    c = placement.example_cluster()
    est = estimate(c, {"host1": 2}, model="vgg16", dtype="fp16")
    assert est.nbytes == hardware.MODELS["vgg16"].params * 2


def test_single_worker_has_nothing_to_do():
    est = estimate(placement.example_cluster(), [4], nbytes=M)
    assert est.time == 0.0 and est.bottleneck_kind is None


@pytest.mark.parametrize("kwargs,match", [
    (dict(placement={"host0": 5}), "5 workers on host 0, which has 4 slots"),
    (dict(placement=[2] * 9), "9 workers on host 2"),
    (dict(placement={"host8": 1}), "host must be in 0..7"),
    (dict(placement={"rack": 1}), "host must be an index"),
    (dict(placement={}), "at least one worker"),
    (dict(placement={0: 2}, mode="gossip"), "mode must be one of"),
    (dict(placement={0: 2}, algorithm="butterfly"), "algorithm must be one of"),
    (dict(placement={0: 2}, model="resnet9000"), "unknown model"),
    (dict(placement={0: 2}, nbytes=-1), "nbytes must be > 0"),
    (dict(placement={0: 2}, mode="ps", pipelined="yes"), "pipelined must be True or False"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        estimate(placement.example_cluster(), **kwargs)


def test_bad_cluster_is_refused():
    with pytest.raises(ValueError, match="one entry per host"):
        Cluster((1e9, 1e9), (1e8,), (4, 4))
    with pytest.raises(ValueError, match=r"inter\[1\] must be > 0"):
        Cluster((1e9, 1e9), (1e8, 0.0), (4, 4))
    with pytest.raises(ValueError, match="workers must be <= 32"):
        placement.best_placements(placement.example_cluster(), 33)


def test_note000_lists_are_whole_megabits():
    for values in (placement.EXAMPLE_INTER_MB_S, placement.EXAMPLE_INTRA_MB_S):
        assert all(float(x).is_integer() for x in placement.as_megabits(values))


def test_note000_lists_are_eighths_of_a_megabyte():
    # every value is k/8 MB/s (e.g. 91.875 = 735/8) and some are not quarters (145.875 = 1167/8)
    values = placement.EXAMPLE_INTER_MB_S + placement.EXAMPLE_INTRA_MB_S
    assert placement.smallest_denominator(values) == 8
    assert placement.smallest_denominator([145.875]) == 8
    assert placement.smallest_denominator([59.5, 233.0]) == 2
    assert placement.smallest_denominator([7, 0]) == 1


@pytest.mark.parametrize("values,limit,match", [
    ([], 1024, "at least one number"),
    ([-1.0], 1024, "value must be >= 0"),
    ([1 / 3], 1024, "multiples of 1/d for some whole d <= 1024"),
    ([0.125], 4, "d <= 4"),
    ([0.5], 0, "limit must be >= 1"),
])
def test_smallest_denominator_refuses_bad_input(values, limit, match):
    with pytest.raises(ValueError, match=match):
        placement.smallest_denominator(values, limit)


# ---------------------------------------------------------------- properties

clusters = st.integers(2, 5).flatmap(lambda h: st.builds(
    Cluster,
    st.tuples(*[st.floats(1e6, 1e10)] * h),
    st.tuples(*[st.floats(1e6, 1e10)] * h),
    st.tuples(*[st.integers(1, 4)] * h),
))


@st.composite
def cluster_and_placement(draw):
    c = draw(clusters)
    counts = [draw(st.integers(0, s)) for s in c.slots]
    if sum(counts) == 0:
        counts[0] = 1
    return c, counts


@SETTINGS
@given(cp=cluster_and_placement(), mode=st.sampled_from(["allreduce", "ps"]),
       algorithm=st.sampled_from(["auto", "ring", "hierarchical"]), data=st.data())
def test_adding_bandwidth_never_slows_a_placement(cp, mode, algorithm, data):
    c, counts = cp
    host = data.draw(st.integers(0, c.hosts - 1))
    factor = data.draw(st.floats(1.0, 100.0))
    which = data.draw(st.sampled_from(["intra", "inter"]))
    faster = c.with_bandwidth(host, **{which: getattr(c, which)[host] * factor})
    kw = dict(nbytes=M, mode=mode, algorithm=algorithm)
    before = estimate(c, dict(enumerate(counts)), **kw).time
    after = estimate(faster, dict(enumerate(counts)), **kw).time
    assert after <= before * (1 + 1e-12)


@SETTINGS
@given(cp=cluster_and_placement())
def test_time_is_proportional_to_bytes(cp):
    c, counts = cp
    p = dict(enumerate(counts))
    assert estimate(c, p, nbytes=2 * M).time == pytest.approx(2 * estimate(c, p, nbytes=M).time)


@SETTINGS
@given(c=clusters, workers=st.integers(1, 5))
def test_best_placements_is_the_minimum_and_sorted(c, workers):
    if workers > sum(c.slots):
        return
    best = placement.best_placements(c, workers, top=50, nbytes=M)
    times = [e.time for e in best]
    assert times == sorted(times)
    greedy = [h for h in range(c.hosts) for _ in range(c.slots[h])][:workers]   # fill hosts in order
    candidates = {"greedy": greedy}
    ranked = placement.rank_placements(c, candidates, nbytes=M)
    assert best[0].time <= ranked[0][1].time * (1 + 1e-12)
    assert all(sum(e.counts) == workers for e in best)


def test_rank_placements_on_the_example_cluster():
    c = placement.example_cluster()
    ranked = placement.rank_placements(c, {
        "all on host 3": {"host3": 4},
        "two and two": {"host1": 2, "host3": 2},
        "spread": [0, 1, 3, 4],
        "with host 7": {"host7": 2, "host3": 2},
    }, model="resnet50")
    names = [name for name, _ in ranked]
    assert names[0] == "all on host 3"
    assert names[-1] == "with host 7"
    assert ranked[-1][1].bottleneck_host == 7
    assert math.isfinite(ranked[-1][1].time)


@SETTINGS
@given(samples=st.lists(st.lists(st.integers(0, 5000), min_size=8, max_size=8), min_size=1, max_size=8))
def test_means_of_eight_whole_mb_samples_look_like_megabits_too(samples):
    # the other history of note 000's lists: averages of 8 whole-MB/s samples are also k/8 MB/s
    means = [sum(s) / 8 for s in samples]
    assert 8 % placement.smallest_denominator(means) == 0
    assert all(float(x).is_integer() for x in placement.as_megabits(means))


@SETTINGS
@given(cp=cluster_and_placement(), data=st.data())
def test_ps_time_is_the_busiest_link_once_overlapped_and_twice_in_turn(cp, data):
    c, counts = cp
    s = data.draw(st.integers(0, c.hosts - 1))
    n = sum(counts)
    # every link's bytes each way over its bandwidth, written out independently of the module
    loads = [counts[s] * M / c.intra[s] if counts[s] else 0.0,
             (n - counts[s]) * M / c.inter[s] if n > counts[s] else 0.0]
    loads += [g * M / c.inter[h] for h, g in enumerate(counts) if g and h != s]
    p = dict(enumerate(counts))
    fast = estimate(c, p, nbytes=M, mode="ps", server_host=s)
    slow = estimate(c, p, nbytes=M, mode="ps", server_host=s, pipelined=False)
    assert fast.time == pytest.approx(max(loads))
    assert slow.time == pytest.approx(2 * max(loads))
    # the link named as the bottleneck is one whose load takes that long
    h = fast.bottleneck_host
    if fast.bottleneck_kind == "intra":
        assert h == s and fast.bottleneck_bandwidth == c.intra[s]
        named = counts[s] * M / c.intra[s]
    else:
        assert fast.bottleneck_bandwidth == c.inter[h]
        named = (n - counts[s] if h == s else counts[h]) * M / c.inter[h]
    assert named == pytest.approx(max(loads))


def test_placement_results_is_the_calculator_and_reports_bad_input_by_name():
    r = calculators.placement_results("host3:2, host1:2", "resnet50", "fp32", "ps", "auto", False)
    est = estimate(placement.example_cluster(), {3: 2, 1: 2}, model="resnet50", mode="ps", pipelined=False)
    shown = r["synchronisation time per iteration"]
    assert shown.startswith(f"{est.time * 1e3:.2f}") or shown.endswith(" s")
    assert "one after the other" in r["push and pull"]
    with pytest.raises(ValueError, match="^where: placement"):
        calculators.placement_results("3-2")
    with pytest.raises(ValueError, match="^where: placement puts 3 workers on host 3"):
        calculators.cluster_placement_results(placement.example_cluster(slots=2), "host3:3")


def test_calculator_modules_import_no_numpy():
    # the website runs these in Python without numpy
    import subprocess
    import sys
    code = ("import sys; import commlib.network.placement, commlib.parameter_servers.cost; "
            "bad = [m for m in ('numpy', 'matplotlib', 'ipywidgets') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------- a parameter server sharded over the workers


def test_one_shard_per_worker_on_one_host_moves_the_rings_bytes():
    c = placement.example_cluster()
    for g in (2, 3, 4):
        ps = placement.sharded_ps(c, {"host3": g}, {"host3": g}, nbytes=M)
        assert ps.time == pytest.approx(estimate(c, {"host3": g}, nbytes=M).time, rel=1e-12)
    one = placement.sharded_ps(c, {"host3": 4}, {"host3": 1}, nbytes=M)   # one shard: its holder takes 3 M each way
    assert one.time == pytest.approx(3 * M / c.intra[3])


def test_sharded_links_carry_the_bytes_written_out_by_hand():
    c = Cluster((1e9, 5e8, 2e9), (1e8, 2e8, 4e8), (4, 4, 4))
    # 2 workers on host 0, 1 on host 1, 1 on host 2; k = 4 shards: 1 on host 0, 3 on host 2
    ps = placement.sharded_ps(c, {0: 2, 1: 1, 2: 1}, {0: 1, 2: 3}, nbytes=M)
    n, f = 4, {0: 1 / 4, 1: 0.0, 2: 3 / 4}
    inter = {0: (2 * (1 - f[0]) + (n - 2) * f[0]) * M / 1e8, 1: (1 + (n - 1) * f[1] - f[1]) * M / 2e8,
             2: ((1 - f[2]) + (n - 1) * f[2]) * M / 4e8}
    intra0 = (f[0] + 0 * (1 / 4)) * M / 1e9     # g = 2: F_0 + (g - 2) f = F_0
    assert ps.time == pytest.approx(max(*inter.values(), intra0))
    assert (ps.bottleneck_kind, ps.bottleneck_host) == ("inter", 0)


def test_summing_inside_each_host_first_gives_the_hierarchical_bytes():
    c = placement.example_cluster()
    for where in ({"host1": 2, "host3": 2}, {"host3": 2, "host7": 2}):
        ar = estimate(c, where, nbytes=M, algorithm="hierarchical")
        for held in ({1: 1} if 1 in where or "host1" in where else {3: 1}, {3: 1}):
            ps = placement.sharded_ps(c, where, held, nbytes=M, aggregate=True)
            assert ps.time == pytest.approx(ar.time, rel=1e-12)   # two hosts: each card carries M whatever the split
    single = placement.sharded_ps(c, {"host3": 4}, {"host3": 4}, nbytes=M, aggregate=True)
    assert single.algorithm == "sharded ps"                        # one host: nothing to sum first


def test_uneven_shards_keep_bytes_off_the_slowest_card():
    c = placement.example_cluster()
    where = [0, 1, 3, 4]
    best = placement.best_sharded_ps(c, where, nbytes=M)
    assert best.shards[0] == 0                                     # host 0, the slowest card, holds none
    assert best.time == pytest.approx(M / c.inter[0])              # its own gradient each way, no more
    assert best.time < estimate(c, where, nbytes=M).time / 1.4     # the ring sends 1.5 M through it


def test_shards_sit_only_on_hosts_with_workers_and_counts_are_checked():
    c = placement.example_cluster()
    with pytest.raises(ValueError, match="no worker"):
        placement.sharded_ps(c, {"host3": 2}, {"host0": 1}, nbytes=M)
    with pytest.raises(ValueError, match="at least one shard"):
        placement.sharded_ps(c, {"host3": 2}, {"host3": 0}, nbytes=M)
    with pytest.raises(ValueError, match="one shard count per host"):
        placement.sharded_ps(c, {"host3": 2}, [1, 2], nbytes=M)


@SETTINGS
@given(st.lists(st.integers(0, 2), min_size=4, max_size=4).filter(lambda xs: sum(xs) >= 2))
def test_more_shards_allowed_never_slows_the_best(counts):
    c = placement.example_cluster(slots=4)
    where = dict(enumerate(counts))
    assert (placement.best_sharded_ps(c, where, max_shards=6, nbytes=M).time
            <= placement.best_sharded_ps(c, where, max_shards=3, nbytes=M).time * (1 + 1e-12))


def test_a_placement_may_have_spaces_around_its_colons_and_commas():
    from commlib.network.calculators import placement_results
    from commlib.network.placement import parse_placement

    assert parse_placement("host3: 2 ,host1 : 2") == parse_placement("host3:2, host1:2") == {3: 2, 1: 2}
    assert placement_results("host3: 2, host1: 2") == placement_results("host3:2, host1:2")


def test_the_placement_box_says_why_a_count_is_refused_and_takes_any_case():
    from commlib.network.placement import parse_placement

    with pytest.raises(ValueError, match=r"'5' names no host: commas separate host:workers items, and a count "
                                         r"must be a whole number, like host3:2"):
        parse_placement("host3:1,5")
    with pytest.raises(ValueError, match=r"'host3:1.5': a count must be a whole number"):
        parse_placement("host3:1.5")
    assert parse_placement("HOST3:2, H1:1") == parse_placement("Host3:2 h1:1") == {3: 2, 1: 1}
    with pytest.raises(ValueError, match="must read like"):
        parse_placement("5")


@pytest.mark.parametrize("typed, shown", [
    ("host 3:2", "no space inside a host name: host3, not host 3), got 'host 3:2'"),
    ("host3:2, h 1:1", "no space inside a host name: host3, not host 3), got 'host3:2, h 1:1'"),
    ("host1:2 x3", "(host:workers), got 'host1:2 x3' (at 'x3')"),
])
def test_the_placement_box_names_itself_and_shows_the_whole_entry_and_the_form(typed, shown):
    """A space inside a host name ("host 3:2") is refused with the entry as typed, not a fragment ('host')."""
    from commlib.network.calculators import placement_results

    with pytest.raises(ValueError) as refused:
        placement_results(typed)
    message = str(refused.value)
    assert message.startswith("where: placement must read like 'host3:2, host1:2'"), message
    assert message.endswith(shown), message


def test_a_hierarchical_estimate_carries_its_phases_and_their_pipelined_bound():
    c = placement.example_cluster()
    for where in ({1: 2, 3: 2}, {3: 2, 7: 2}, {2: 2, 6: 2}):
        est = estimate(c, where, model="resnet50", algorithm="hierarchical")
        p = placement.hierarchical_phases(c, where, model="resnet50")
        (_, h_in, t_in), (_, h_net, t_net) = est.phases
        assert (h_in, h_net) == (p["inside_host"], p["network_host"])
        assert math.isclose(t_in + t_net, est.time)                       # in series here
        assert math.isclose(est.pipelined_bound, max(t_in, t_net)) and est.pipelined_bound == p["pipelined"]
        assert est.pipelined_bound < est.time
    ring = estimate(c, {1: 2, 3: 2}, model="resnet50", algorithm="ring")
    assert ring.phases is None and ring.pipelined_bound == ring.time
