"""The pipelined hierarchical all-reduce and the conditions under which going hierarchical pays (chapter 2)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib.collectives.algorithms import hierarchical, multi_rail_ring

pipelined = hierarchical.pipelined_hierarchical_allreduce_time


def rounds(m, hosts, g, b_in, b_out, a_in, a_out, q):
    """The q + 2 rounds one by one: the link inside a host reduce-scatters chunk r and all-gathers chunk r - 2, one
    after the other, while the card all-reduces chunk r - 1; a round lasts as long as the busier port (no gamma)."""
    inside = (g - 1) * (a_in + m / (g * q) / b_in)                        # one intra phase of one chunk
    across = 2 * (hosts - 1) * (a_out + m / (g * hosts * q) / b_out)      # the ring among hosts of its 1/g shard
    total = 0.0
    for r in range(q + 2):
        port = inside * ((r < q) + (2 <= r <= q + 1))
        card = across * (1 <= r <= q)
        total += max(port, card)
    return total


@given(m=st.floats(1.0, 1e9), hosts=st.integers(2, 8), g=st.integers(2, 8), b_in=st.floats(1e3, 1e12),
       b_out=st.floats(1e3, 1e12), a_in=st.floats(0.0, 1e-3), a_out=st.floats(0.0, 1e-3), q=st.integers(1, 300))
@settings(max_examples=200, deadline=None)
def test_pipelined_closed_form_is_its_rounds_and_q1_is_in_series(m, hosts, g, b_in, b_out, a_in, a_out, q):
    t = pipelined(m, hosts, g, b_in, b_out, a_in, a_out, chunks=q)
    assert t == pytest.approx(rounds(m, hosts, g, b_in, b_out, a_in, a_out, q), rel=1e-9)
    series = hierarchical.hierarchical_allreduce_time(m, hosts, g, b_in, b_out, a_in, a_out)
    if q == 1:
        assert t == pytest.approx(series, rel=1e-12)
    # pipelining never costs more than the phases in series plus the start-ups its extra chunks add
    assert t <= series + (q - 1) * (2 * (g - 1) * a_in + 2 * (hosts - 1) * a_out) + 1e-9 * series


def test_pipelined_tends_to_the_longer_port_and_a_best_q_is_inside():
    m, hosts, g, b_in, b_out = 3.2e9, 2, 8, 450e9, 50e9
    inside = 2 * (g - 1) / g * m / b_in
    across = 2 * (hosts - 1) / hosts * m / g / b_out
    for q in (100, 10_000):
        t = pipelined(m, hosts, g, b_in, b_out, chunks=q)       # no start-ups: only the fill is left over
        assert max(inside, across) < t <= max(inside, across) * (1 + 3 / q)
    times = {q: pipelined(m, hosts, g, b_in, b_out, 1e-6, 1e-6, chunks=q) for q in (1, 4, 16, 64, 1024)}
    best = min(times, key=times.get)
    assert best not in (1, 1024) and times[best] < times[1]


@pytest.mark.parametrize("pipe", [False, True])
def test_the_threshold_is_where_the_byte_times_cross(pipe):
    m, hosts, g, b_nic = 1e9, 2, 8, 50e9
    thr = hierarchical.pays_threshold(hosts, g, g, b_nic, pipelined=pipe)
    for b_in, hier_wins in ((thr * 0.99, False), (thr * 1.01, True)):
        ring = multi_rail_ring.seconds(m, hosts * g, b_in, 0.0, 0.0, hosts=hosts, inter_bandwidth=b_nic,
                                       inter_latency=0.0, nics_per_host=g)
        hier = pipelined(m, hosts, g, b_in, b_nic, chunks=10**7 if pipe else 1)
        assert (hier < ring) == hier_wins


def test_the_pipelined_threshold_falls_a_little_with_hosts():
    """Between (g - 1)/g c B_NIC and c B_NIC; the in-series one, h c B_NIC, grows with the hosts."""
    c, b = 8, 50e9
    thresholds = [hierarchical.pays_threshold(h, 8, c, b, pipelined=True) for h in (2, 4, 16, 256)]
    assert all(x > y for x, y in zip(thresholds, thresholds[1:]))
    assert all(7 / 8 * c * b < x < c * b for x in thresholds)
    assert hierarchical.pays_threshold(4, 8, c, b) == 2 * hierarchical.pays_threshold(2, 8, c, b)
    with pytest.raises(ValueError, match="cards"):
        hierarchical.pays_threshold(2, 8, 4, b, pipelined=True)


def test_pipelined_rejects_bad_input():
    with pytest.raises(ValueError, match="chunks"):
        pipelined(1e6, 2, 8, 1e9, 1e9, chunks=0)
    with pytest.raises(ValueError, match="intra_bandwidth"):
        pipelined(1e6, 2, 8, 0.0, 1e9, chunks=4)


def test_multi_rail_overlapped_startups_charge_one_a_step_inside():
    m, n, hosts, b_in, b_out, a_in, a_out = 1e6, 16, 2, 400e9, 50e9, 1e-6, 2e-6
    piece = m / n / 8
    serial = multi_rail_ring.seconds(m, n, b_in, a_in, 0.0, hosts=hosts, inter_bandwidth=b_out, inter_latency=a_out)
    overlapped = multi_rail_ring.seconds(m, n, b_in, a_in, 0.0, hosts=hosts, inter_bandwidth=b_out,
                                         inter_latency=a_out, overlapped_startups=True)
    assert serial == pytest.approx(2 * (n - 1) * max(a_out + piece / b_out, 7 * (a_in + piece / b_in)))
    assert overlapped == pytest.approx(2 * (n - 1) * max(a_out + piece / b_out, a_in + 7 * piece / b_in))
