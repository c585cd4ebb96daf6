"""ECMP on a leaf-spine fabric: the flow model with given paths against the closed form, and the controls."""

import pytest

from commlib.network import ecmp, topology


def test_paths_given_to_the_flow_model_are_checked():
    g = ecmp.leaf_spine(2, 1, 2)
    f = ecmp.shift_flows(2, 1, 1000)[0]
    with pytest.raises(ValueError, match="paths"):
        topology.map_flows(g, [f], paths={f: (f.src, ("leaf", 1), f.dst)})       # no such link
    with pytest.raises(ValueError, match="paths"):
        topology.map_flows(g, [f], paths={f: (("leaf", 0), ("spine", 0), ("leaf", 1), f.dst)})   # wrong start


@pytest.mark.parametrize("qps", [1, 2])
def test_the_flow_model_agrees_with_the_busiest_uplink(qps):
    g = ecmp.leaf_spine(6, 4, 4)
    flows = ecmp.shift_flows(6, 4, 2**24, qps)
    base = ecmp.step_time(g, flows, ecmp.spread_spines(6, 4, 4, qps))
    for seed in range(6):
        spines = ecmp.hashed_spines(6, 4, 4, seed, qps)
        ratio = ecmp.step_time(g, flows, spines) / base
        assert ratio == pytest.approx(ecmp.busiest_uplink_share(spines, qps), rel=0.01)


def test_the_controls():
    g = ecmp.leaf_spine(4, 4, 4)
    flows = ecmp.shift_flows(4, 4, 2**28)
    spread = ecmp.spread_spines(4, 4, 4)
    assert ecmp.busiest_uplink_share(spread) == 1                       # the spread has no collision
    fixed = topology.map_flows(g, flows)                                  # the fixed rule: one spine a leaf pair
    assert len({r[2] for r in fixed.routes.values()}) == 1
    assert fixed.time / ecmp.step_time(g, flows, spread) == pytest.approx(4, rel=0.01)


def test_hashing_costs_more_than_the_spread_and_less_than_the_fixed_rule_on_average():
    shares = [ecmp.busiest_uplink_share(ecmp.hashed_spines(16, 8, 8, s)) for s in range(100)]
    assert all(1 < x <= 8 for x in shares)
    assert 2 < sum(shares) / len(shares) < 8
    split = [ecmp.busiest_uplink_share(ecmp.hashed_spines(16, 8, 8, s, 8), 8) for s in range(100)]
    assert sum(split) / len(split) < sum(shares) / len(shares)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="leaves"):
        ecmp.leaf_spine(1, 2, 2)
    with pytest.raises(ValueError, match="qps"):
        ecmp.shift_flows(2, 2, 100, qps=0)
    with pytest.raises(ValueError, match="spines"):
        ecmp.hashed_spines(2, 2, 0, seed=1)


@pytest.mark.parametrize("qps", [1, 3])
def test_the_fast_count_equals_the_dict_one(qps):
    fast = ecmp.hashed_busiest_shares(5, 4, 3, range(40), qps)
    slow = [ecmp.busiest_uplink_share(ecmp.hashed_spines(5, 4, 3, s, qps), qps) for s in range(40)]
    assert fast == slow


def test_the_given_paths_are_the_routes_reported():
    g = ecmp.leaf_spine(4, 4, 4)
    flows = ecmp.shift_flows(4, 4, 2**20)
    spread = ecmp.spread_spines(4, 4, 4)
    paths = {f: (f.src, ("leaf", f.src[1]), ("spine", spread[f.src[1], f.src[2], 0]), ("leaf", f.dst[1]), f.dst)
             for f in flows}
    mapped = topology.map_flows(g, flows, paths=paths)
    assert ecmp.spines_of(mapped) == spread
    assert ecmp.spines_of(topology.map_flows(g, flows)) != spread           # the fixed rule's, one spine


def test_the_chances_match_the_draws():
    draws = [ecmp.hashed_spines(16, 8, 8, s) for s in range(3000)]
    apart = sum(len({d[leaf, i, 0] for i in range(8)}) == 8 for d in draws for leaf in range(16)) / (3000 * 16)
    assert abs(apart - ecmp.chance_spread(8, 8)) < 0.002
    assert ecmp.chance_spread(9, 8) == 0
    assert ecmp.chance_worst(1, 2, 2) == 0.5                      # two flows, two spines: same spine half the time
    assert 0 < ecmp.chance_worst(16, 8, 8) < ecmp.chance_worst(64, 8, 8) < 1
