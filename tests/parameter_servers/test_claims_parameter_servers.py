"""Claims of chapter 3 that hold over a grid, not one example: the hardware of every "beats"."""

import pytest

from commlib.parameter_servers import cost as ps


@pytest.mark.parametrize("n", [3, 4, 8, 32, 100])
@pytest.mark.parametrize("server_speed", [0.25, 1.0, 4.0])
def test_on_the_same_cards_no_k_lets_the_ps_beat_the_ring(n, server_speed):
    m, bw = 1e9, 12.5e9
    for k in range(1, 3 * n + 1):
        t_ps = ps.round_time(m, n, bw, servers=k, server_bandwidth=server_speed * bw)
        assert ps.allreduce_on_same_cards(m, n, k, bw, server_speed * bw) < t_ps
    # the control: on the workers' cards alone, k = n extra servers do beat the ring (equal NICs)
    if server_speed == 1.0:
        c = ps.compare_ps_ring(m, n, n, bw)
        assert c.winner == "PS" and c.winner_same_cards == "ring all-reduce" and c.cards == (2 * n, n)
