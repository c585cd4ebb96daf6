"""The calculators of chapters 1 and 2 honour every field of a record: no time the network cannot give.

Behind a switch each rank has one network port. No all-reduce can then beat the ring's bandwidth
term 2(n-1)/n M/B (Patarasuk & Yuan 2009: every rank must send and receive that much through its
port), whatever links an algorithm would drive on a network built for it.
"""

import pytest

from commlib import hardware
from commlib.collectives import algorithms, calculators
from commlib.units import parse_rate, parse_size
from commlib.views import collectives as views


def _seconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[unit]


CLUSTER_ALGORITHMS = [v for _, v in views.cluster_calculator().controls["algorithm"].options]
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
    assert float(r["busbw / what its links carry"].split()[0]) <= 100.0 + 0.05
    assert parse_rate(r["bus bandwidth (busbw)"]) <= hardware.link(link).bandwidth * 1.005


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
    assert shared.bytes == pytest.approx(4 * one_port.bytes) and shared.steps == one_port.steps
