"""The calculators of chapters 1 and 2 honour every field of a record: no time the network cannot give.

Behind a switch each rank has one network port. No all-reduce can then beat the ring's bandwidth
term 2(n-1)/n M/B (Patarasuk & Yuan 2009: every rank must send and receive that much through its
port), whatever links an algorithm would drive on a network built for it.
"""

import math
import re

import pytest

from commlib import hardware
from commlib.collectives import algorithms, calculators
from commlib.units import parse_rate, parse_size
from commlib.views import collectives as views


def _seconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[unit]


CLUSTER_ALGORITHMS = [v for _, v in views.cluster_calculator().full_options["algorithm"]]
PRIMITIVE_ALLREDUCE = calculators.PRIMITIVE_ALGORITHMS["all_reduce"]


def test_every_registry_all_reduce_is_offered_by_the_cluster_calculator():
    assert set(CLUSTER_ALGORITHMS) == set(algorithms.ALLREDUCE)


@pytest.mark.parametrize("algorithm", CLUSTER_ALGORITHMS)
@pytest.mark.parametrize("n", [4, 9, 16, 64])
@pytest.mark.parametrize("link", ["eth_25g", "eth_100g", "ib_ndr"])
def test_cluster_calculator_never_beats_one_port_per_rank(algorithm, n, link):
    """One GPU a host: every rank has one port of ``link``; no algorithm gets past the ring's bound."""
    try:
        r = calculators.cluster_results("resnet50", "fp16", n, n, link, link, algorithm, 100.0, 90.0)
    except ValueError:
        return                                     # the algorithm does not apply to n (its message says why)
    nbytes = parse_size(r["gradient size"].split(" = ")[0])
    bound = 2 * (n - 1) / n * nbytes / hardware.link(link).bandwidth
    assert _seconds(r["time of one all-reduce"]) >= bound * (1 - 5e-3)   # printed to 3-4 digits
    assert float(r["busbw / busbw its links allow"].split()[0]) <= 100.0 + 0.05
    assert parse_rate(r["bus bandwidth (busbw)"]) <= hardware.link(link).bandwidth * 1.005


def _offered(check, links):
    out = []
    for link in links:
        try:
            check(link)
        except ValueError:
            continue
        out.append(link)
    return out


_OPTIONS = views.cluster_calculator().full_options
INSIDE = _offered(calculators.check_inside, [v for _, v in _OPTIONS["intra_link"]])
BETWEEN = _offered(calculators.check_between, [v for _, v in _OPTIONS["inter_link"]])
NICS = [v for _, v in _OPTIONS["nics_per_host"]]


def _cluster_cases(count=160, seed=20):
    """Seeded samples over every offered algorithm, link inside and between, host count, GPUs a host and cards."""
    import random

    rng = random.Random(seed)
    cases = [(a, 1, 4, INSIDE[0], BETWEEN[0], 0) for a in CLUSTER_ALGORITHMS]     # each on one host of four
    while len(cases) < count:
        hosts, g = rng.choice([1, 2, 3, 4, 8, 16]), rng.choice([1, 2, 4, 8])
        if hosts * g < 2:
            continue
        cases.append((rng.choice(CLUSTER_ALGORITHMS), hosts, g, rng.choice(INSIDE), rng.choice(BETWEEN),
                      rng.choice([c for c in NICS if c <= g])))
    return cases


def test_the_sample_covers_every_offered_link_and_one_host():
    cases = _cluster_cases()
    assert set(INSIDE) <= {c[3] for c in cases if c[2] > 1} and set(BETWEEN) <= {c[4] for c in cases if c[1] > 1}
    assert {1, 2, 16} <= {c[1] for c in cases} and {1, 2, 4, 8} <= {c[2] for c in cases}
    ran = []
    for algorithm, hosts, g, intra, inter, nics in cases:
        try:
            calculators.cluster_results("resnet50", "fp16", hosts * g, hosts, intra, inter, algorithm, 100.0, 90.0, nics)
        except ValueError:
            continue
        ran.append((hosts, g))
    # most run: on one host, on hosts of one GPU and on hosts of several
    assert len(ran) >= 60 and {h == 1 for h, _ in ran} == {True, False} and any(1 < h and g > 1 for h, g in ran)


@pytest.mark.parametrize("algorithm, hosts, g, intra, inter, nics", _cluster_cases())
def test_cluster_calculator_never_beats_what_the_ports_can_carry(algorithm, hosts, g, intra, inter, nics):
    """Any hosts, GPUs a host, links and cards: no time below what the ports and the cards between hosts carry.

    Each of the n = hosts * g GPUs must send 2(n-1)/n M through its port inside the host and its share of the
    host's c cards (c = g for one card a GPU); each host must send 2(h-1)/h M out through its c cards. On one
    host (h = 1, a switched bus) that is the ring's bound on the link inside.
    """
    n = hosts * g
    try:
        r = calculators.cluster_results("resnet50", "fp16", n, hosts, intra, inter, algorithm, 100.0, 90.0, nics)
    except ValueError:
        return                                     # not offered here (its message says why)
    nbytes = parse_size(r["gradient size"].split(" = ")[0])
    b_in, b_out, cards = hardware.link(intra).bandwidth, hardware.link(inter).bandwidth, nics or g
    per_gpu = (b_in if g > 1 else 0.0) + (cards * b_out / g if hosts > 1 else 0.0)
    bound = 2 * (n - 1) / n * nbytes / per_gpu
    if hosts > 1:
        bound = max(bound, 2 * (hosts - 1) / hosts * nbytes / (cards * b_out))
    assert _seconds(r["time of one all-reduce"]) >= bound * (1 - 5e-3)   # printed to 3-4 digits
    assert float(r["busbw / busbw its links allow"].split()[0]) <= 100.0 + 0.05


@pytest.mark.parametrize("algorithm", PRIMITIVE_ALLREDUCE)
@pytest.mark.parametrize("n", [2, 3, 8, 16])
def test_primitive_calculator_offers_only_one_port_all_reduces_and_each_runs(algorithm, n):
    record = algorithms.ALLREDUCE[algorithm]
    assert record.links_per_rank == 1 and not record.params
    r = calculators.primitive_results("all-reduce", algorithm, n, "64 MiB", "eth_25g")
    bound = 2 * (n - 1) / n * 64 * 2**20 / hardware.link("eth_25g").bandwidth
    assert _seconds(r["time"]) >= bound * (1 - 5e-3)


def test_a_multi_link_algorithm_keeps_its_own_time_on_its_own_network():
    """The torus both ways on a torus: a quarter of the ring's bandwidth term (chapter 2's prose)."""
    from commlib import cost

    ring = cost.allreduce_time(1e8, 16, 12.5e9, 0.0, "ring")
    both = cost.allreduce_time(1e8, 16, 12.5e9, 0.0, "torus_both_ways")
    one_port = cost.allreduce_terms(1e8, 16, "torus_both_ways")
    assert both == pytest.approx(ring / 4)
    shared = algorithms.ALLREDUCE["torus_both_ways"].cost(1e8, 16, links_per_rank=1)
    # behind a switch the four messages of a step share one port, one after the other, each with its start-up
    assert shared.bytes == pytest.approx(4 * one_port.bytes) and shared.steps == 4 * one_port.steps


# --- hosts of several GPUs: timed only where the closed form is exact -------------------------------------------

def _stepwise_seconds(trace, g: int, fast: tuple[float, float], slow: tuple[float, float]) -> float:
    """Each step waits for its slowest message, each message on its own link: inside a host (fast) or between."""
    steps: dict[int, float] = {}
    for m in trace.messages:
        bandwidth, latency = fast if m.src // g == m.dst // g else slow
        steps[m.step] = max(steps.get(m.step, 0.0), latency + m.nbytes / bandwidth)
    return sum(steps.values())


def test_the_ring_on_hosts_of_several_gpus_is_timed_exactly_and_halving_doubling_would_only_be_bounded():
    import numpy as np

    from commlib.collectives import compare, simulate
    from commlib.collectives.cluster import models_hosts

    n, hosts = 16, 2
    fast, slow = (150e9, 7e-6), (3.125e9, 10e-6)
    arrays = [np.arange(n * 4096, dtype=np.float64) for _ in range(n)]
    nbytes = arrays[0].nbytes
    _, ring = simulate.allreduce(arrays, "ring")
    closed = compare.allreduce_seconds("ring", nbytes, n, fast[0], fast[1], hosts=hosts, inter_bandwidth=slow[0],
                                       inter_latency=slow[1])
    assert closed == pytest.approx(_stepwise_seconds(ring, n // hosts, fast, slow), rel=1e-12)
    # halving-doubling's steps at distance < g stay inside a host: its step-by-step time is well below a
    # charge of every step at the slowest link, so the calculator refuses it there instead
    _, hd = simulate.allreduce(arrays, "halving_doubling")
    slowest = algorithms.ALLREDUCE["halving_doubling"].cost(nbytes, n).time(slow[0], slow[1])
    assert _stepwise_seconds(hd, n // hosts, fast, slow) < 0.7 * slowest
    assert not models_hosts(algorithms.ALLREDUCE["halving_doubling"]) and models_hosts(algorithms.ALLREDUCE["ring"])
    with pytest.raises(ValueError, match="hosts h"):
        compare.allreduce_seconds("halving_doubling", nbytes, n, fast[0], fast[1], hosts=hosts,
                                  inter_bandwidth=slow[0], inter_latency=slow[1])


@pytest.mark.parametrize("algorithm", CLUSTER_ALGORITHMS)
def test_every_cluster_algorithm_works_on_one_host_or_one_gpu_a_host_and_says_where_it_does_not(algorithm):
    from commlib.collectives.cluster import models_hosts

    n = 16
    for hosts in (1, n):
        if algorithm in calculators.cluster_choices(n, hosts)["algorithm"]:
            r = calculators.cluster_results("resnet50", "fp16", n, hosts, "nvlink5", "eth_25g", algorithm, 100.0, 90.0)
            assert r["time of one all-reduce"].endswith("s")
    for hosts, nics in ((2, 0), (4, 1)):
        args = ("resnet50", "fp16", n, hosts, "nvlink2", "eth_25g", algorithm, 100.0, 90.0, nics)
        if models_hosts(algorithms.ALLREDUCE[algorithm]):
            assert calculators.cluster_results(*args)["time of one all-reduce"].endswith("s")
        else:
            with pytest.raises(ValueError, match=r"^hosts h: .*\(h = 1 or h = n = 16\).*\"ring\""):
                calculators.cluster_results(*args)


def _need(results: dict) -> str:
    """The row giving the inter-host bandwidth the target needs, per network card."""
    (key,) = [k for k in results if k.startswith("inter-host bandwidth for 90 %, per network card")]
    return results[key]


def test_the_needed_bandwidth_is_per_card_and_the_host_total_is_the_same_for_ring_and_multi_rail():
    """The ring drives one card of a host, the multi-rail ring all 8: per card 8 times less, the same per host."""
    args = ("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g")
    ring = calculators.cluster_results(*args, "ring", 100.0, 90.0, 0)
    rail = calculators.cluster_results(*args, "multi_rail_ring", 100.0, 90.0, 0)
    assert "(c = 1)" in next(k for k in ring if k.startswith("inter-host"))
    assert "(c = 8)" in next(k for k in rail if k.startswith("inter-host"))
    ring_key = next(k for k in ring if k.startswith("inter-host"))
    assert not any(k.startswith("the same on all") for k in ring), "one card: no second row repeating the first"
    gbps = [float(r[k].split(" = ")[-1].split()[0]) for r, k in ((ring, ring_key),
                                                                 (rail, "the same on all 8 cards of a host"))]
    assert gbps[1] == pytest.approx(gbps[0], rel=0.02)


def test_out_of_reach_names_what_stands_in_the_way():
    from commlib.collectives.cluster import cluster_allreduce

    # GPT-2 XL bf16, 2 hosts of 8 on PCIe 3.0 x16, 400 GbE between, 100 ms of compute, 90 %
    args = ("gpt2_xl", "bf16", 16, 2, "pcie3_x16", "eth_400g")
    for algorithm in ("ring", "multi_rail_ring", "hierarchical"):
        r = cluster_allreduce(*args, algorithm, 0.1, 0.9)
        assert r.required_bandwidth == math.inf and r.out_of_reach_because == "fixed link"
        assert r.latency_seconds < r.allowed_seconds < r.floor_seconds
        text = _need(calculators.cluster_results(*args, algorithm, 100.0, 90.0))
        assert "PCIe 3.0 x16 inside a host" in text and "latency" not in text
    ring = cluster_allreduce(*args, "ring", 0.1, 0.9)
    pcie, eth = hardware.link("pcie3_x16"), hardware.link("eth_400g")
    assert ring.latency_seconds == pytest.approx(2 * 15 * max(pcie.latency, eth.latency), rel=1e-9)
    assert ring.floor_seconds == pytest.approx(ring.latency_seconds + 2 * 15 / 16 * ring.nbytes / pcie.bandwidth)
    # 1024 GPUs, one a host on 1 GbE, 1 ms of compute: the ring's 2046 start-ups alone exceed the 0.11 ms allowed
    text = _need(calculators.cluster_results("gpt2_xl", "bf16", 1024, 1024, "pcie3_x16", "eth_1g", "ring", 1.0,
                                             90.0))
    assert text.startswith("out of reach: the latency terms alone")
    # where some bandwidth suffices, it is given
    r = cluster_allreduce("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "ring", 0.1, 0.9)
    assert math.isfinite(r.required_bandwidth) and r.out_of_reach_because is None


# --- what the cluster calculator offers ---------------------------------------------------------------------

@pytest.mark.parametrize("n, hosts", [(1, 1), (2, 2), (8, 1), (8, 8), (9, 1), (9, 9), (12, 3), (16, 2), (16, 16),
                                      (64, 8)])
def test_the_cluster_calculator_offers_exactly_the_algorithms_that_run_and_cards_up_to_the_gpus_a_host(n, hosts):
    offered = calculators.cluster_choices(n, hosts)
    for algorithm in algorithms.ALLREDUCE:
        try:
            calculators.cluster_results("resnet50", "fp16", n, hosts, "nvlink5", "eth_25g", algorithm, 100.0, 90.0)
            runs = True
        except ValueError:
            runs = False
        assert runs == (algorithm in offered["algorithm"]), (algorithm, n, hosts)
    # the cards are offered where the algorithm drives several of a host's (hosts of several GPUs, an algorithm
    # that takes the hosts); elsewhere the one card it crosses, and the results say why
    several = tuple(v for _, v in views.NIC_CHOICES if v <= n // hosts)
    for algorithm in ("hierarchical", "multi_rail_ring", "ring"):
        cards = calculators.cluster_choices(n, hosts, algorithm=algorithm)["nics_per_host"]
        counts = 1 < hosts < n and algorithm != "ring"
        assert cards == (several if counts else (1,)), (algorithm, n, hosts, cards)
    assert ("torus_both_ways" in offered["algorithm"]) == (n in (9, 16) and hosts in (1, n))


def test_the_torus_both_ways_is_not_offered_for_eight_gpus_and_its_message_names_the_gpus():
    calc = views.cluster_calculator(n=9, hosts=1, algorithm="torus_both_ways", intra_link="nvlink5")
    assert calc.error is None and calc.controls["algorithm"].value == "torus_both_ways"
    calc.set(n=8)
    offered = [v for _, v in calc.controls["algorithm"].options]
    assert "torus_both_ways" not in offered and calc.controls["algorithm"].value in offered and calc.error is None
    with pytest.raises(ValueError, match=r"^n must be a square of at least 9 \(9, 16, 25, \.\.\.\) for the 2-D torus "
                                         r"both ways; got 8$"):
        calculators.cluster_results("resnet50", "fp16", 8, 1, "nvlink5", "eth_25g", "torus_both_ways", 100.0, 90.0)


def test_network_cards_are_offered_up_to_the_gpus_of_a_host():
    calc = views.cluster_calculator(n=16, hosts=2, nics_per_host=8, algorithm="hierarchical")
    assert [v for _, v in calc.controls["nics_per_host"].options] == [0, 1, 2, 4, 8]
    calc.set(hosts=8)                                   # two GPUs a host: at most two cards
    assert [v for _, v in calc.controls["nics_per_host"].options] == [0, 1, 2]
    assert calc.controls["nics_per_host"].value in (0, 1, 2) and calc.error is None


def test_on_hosts_of_one_gpu_the_link_inside_offers_one_choice_and_the_results_say_it_is_not_used():
    """It changes nothing there (every message crosses the network), so the menu offers only the link chosen, as
    the network cards' menu does where they count for nothing, and a results row says why."""
    calc = views.cluster_calculator(n=8, hosts=2, intra_link="nvlink4")
    assert len(calc.controls["intra_link"].options) > 1 and "link inside a host" not in calc.results
    calc.set(hosts=8)
    assert [v for _, v in calc.controls["intra_link"].options] == ["nvlink4"] and calc.error is None
    assert calc.results["link inside a host"] == calculators.INSIDE_UNUSED
    assert calc.results["network cards c"].startswith("not used")
    for algorithm in calculators.cluster_choices(8, 8)["algorithm"]:
        assert len({str(calculators.cluster_results("resnet50", "fp16", 8, 8, link, "eth_25g", algorithm))
                    for link in ("nvlink2", "nvlink5", "pcie4_x16")}) == 1, algorithm
    calc.set(hosts=2)
    assert len(calc.controls["intra_link"].options) > 1 and calc.controls["intra_link"].value == "nvlink4"


@pytest.mark.parametrize("link", calculators.cluster_choices()["intra_link"])
def test_a_host_holds_at_most_the_gpus_its_link_inside_joins(link):
    most = hardware.link(link).gpus_per_host
    fits = calculators.cluster_results("resnet50", "fp16", 2 * most, 2, link, "eth_25g", "ring", 100.0, 90.0)
    assert fits["GPUs per host g"] == str(most)
    calc = views.cluster_calculator(n=2 * most, hosts=1, intra_link=link)
    assert calc.error.startswith(f"hosts h: {2 * most} GPUs on 1 host is {2 * most} GPUs a host; {hardware.link(link).name}")
    assert calc.error.endswith("choose at least 2 hosts")


def test_rates_read_as_their_arithmetic_gives_them_and_one_rank_sends_nothing():
    r = calculators.primitive_results("all-reduce", "ring", 8, "64 MiB", "eth_25g")
    assert r["link"].startswith("3.125 GB/s per direction") and r["buffer M"] == "67.11 MB = 64 MiB"
    converted = calculators.bandwidth_conversion_results("25 Gb/s", "algbw -> busbw", "all_reduce", 8)
    assert converted["algorithm bandwidth"] == "3.125 GB/s = 25 Gb/s"
    assert converted["bus bandwidth"] == "5.469 GB/s = 43.75 Gb/s"
    for one in (calculators.primitive_results("all-reduce", "ring", 1)["time"],
                calculators.bandwidth_conversion_results("1 GB/s", "busbw -> algbw", "all_reduce", 1)["algorithm bandwidth"],
                calculators.bandwidth_conversion_results("1 GB/s", "algbw -> busbw", "all_gather", 1)["bus bandwidth"]):
        assert one == "none: with one rank there is nothing to send"
    cluster = calculators.cluster_results(n=1, hosts=1)
    assert cluster["time of one all-reduce"] == "none: with one GPU there is nothing to send"


@pytest.mark.parametrize("typed, message", [
    ("-5 MB", "buffer M must lie between 8 B (a byte for each of the 8 ranks) and 1 PB, got '-5 MB'"),   # its least buffer
    ("1.01 PB", "buffer M must lie between 8 B (a byte for each of the 8 ranks) and 1 PB, got '1.01 PB'"),
    ("64", "buffer M: add a unit, e.g. 64 MiB or 64 MB; got '64'"),
    ("0", "buffer M: add a unit, e.g. 64 MiB or 64 MB; got '0'"),           # "e.g. 0 MiB" is no example
    ("-2", "buffer M: add a unit, e.g. 64 MiB or 64 MB; got '-2'"),
    ("0.5", "buffer M: add a unit, e.g. 0.5 MiB or 0.5 MB; got '0.5'"),
])
def test_a_typed_buffer_is_refused_in_one_style_quoting_what_was_typed(typed, message):
    with pytest.raises(ValueError) as err:
        calculators.primitive_results("all-reduce", "ring", 8, typed)
    assert str(err.value) == message


@pytest.mark.parametrize("typed, message", [
    ("-3 GB/s", "bandwidth must lie between 1 MB/s and 100 TB/s, got '-3 GB/s'"),
    ("25", "bandwidth: add a unit, e.g. 25 Gb/s or 25 GB/s; got '25'"),
    ("0", "bandwidth: add a unit, e.g. 25 Gb/s or 25 GB/s; got '0'"),
])
def test_a_typed_rate_is_refused_in_one_style_quoting_what_was_typed(typed, message):
    with pytest.raises(ValueError) as err:
        calculators.bandwidth_conversion_results(typed)
    assert str(err.value) == message


def test_the_goal_label_shows_the_goal_the_reader_typed():
    results = calculators.cluster_results("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "ring", 100.0, 99.9, 0)
    assert any(k.startswith("inter-host bandwidth for 99.9 %") for k in results), list(results)


@pytest.mark.parametrize("n, hosts", [(16, 2), (16, 16), (8, 1), (144, 2)])
def test_cluster_link_menus_offer_a_switched_bus_inside_and_a_network_between(n, hosts):
    """NVLink 1.0's cube mesh (fixed peers) and UPI (between sockets) never join a host's GPUs; a bus never
    joins hosts; what the menus leave out the model refuses, naming the control."""
    menus = calculators.cluster_choices(n, hosts)
    for key in menus["intra_link"]:
        item = hardware.link(key)
        assert item.kind == "bus" and item.switched and item.joins_gpus, key
    assert menus["inter_link"] and all(hardware.link(key).kind == "network" for key in menus["inter_link"])
    assert (len(menus["intra_link"]) == 1) == (n == hosts)      # one GPU a host: no link inside to choose
    shared = calculators.cluster_choices(16, 2)                 # the hosts the refusals below are asked on
    for key, item in hardware.LINKS.items():
        if key not in shared["intra_link"]:
            with pytest.raises(ValueError, match=rf"^intra_link: {re.escape(item.name)}"):
                calculators.cluster_results("resnet50", "fp16", 16, 2, key, "eth_100g")
        if key not in menus["inter_link"]:
            with pytest.raises(ValueError, match=rf"^inter_link: {re.escape(item.name)}"):
                calculators.cluster_results("resnet50", "fp16", 16, 2, "nvlink4", key)
