"""Claims of chapter 3 that hold over a grid, not one example: the hardware of every "beats"."""

import math

import pytest

from commlib.parameter_servers import cost as ps


@pytest.mark.parametrize("n", [3, 4, 8, 32, 100])
@pytest.mark.parametrize("server_speed", [0.25, 1.0, 4.0])
def test_on_the_same_cards_no_k_lets_the_ps_beat_the_ring(n, server_speed):
    m, bw = 1e9, 12.5e9
    for k in range(1, 3 * n + 1):
        t_ps = ps.round_time(m, n, bw, servers=k, server_bandwidth=server_speed * bw)
        same = ps.allreduce_on_same_cards(m, n, k, bw, server_speed * bw)
        assert same <= t_ps * (1 + 1e-12)
        if same >= t_ps * (1 - 1e-12):   # a tie only when the workers' own cards bound the PS (k < n)
            assert k < n and t_ps == pytest.approx(m / bw, rel=1e-12)
    # the control: on the workers' cards alone, k = n extra servers do beat the ring (equal NICs)
    if server_speed == 1.0:
        c = ps.compare_ps_ring(m, n, n, bw)
        assert c.winner == "PS" and c.winner_same_cards == "ring all-reduce" and c.cards == (2 * n, n)


@pytest.mark.parametrize("nbytes", [1e3, 1e5, 1e6, 1e8])
@pytest.mark.parametrize("n", [3, 8, 12, 32])
def test_with_start_ups_counted_one_message_at_a_time_the_ring_on_the_same_cards_still_wins(nbytes, n):
    # a server pays 2n start-ups or more (each piece of a shard its own), the ring 2(n - 1)
    from commlib import hardware
    link = hardware.link("eth_25g")
    for k in range(1, 2 * n + 1):
        t_ps = ps.round_time(nbytes, n, link.bandwidth, servers=k, latency=link.latency)
        assert ps.allreduce_on_same_cards(nbytes, n, k, link.bandwidth, latency=link.latency) < t_ps


@pytest.mark.parametrize("n", [2, 3, 8, 64])
def test_byteps_with_any_number_of_cpu_machines_loses_to_the_ring_on_the_same_cards(n):
    m, bw = 1e9, 12.5e9
    ring = ps.cost.allreduce_time(m, n, bw, algorithm="ring")
    for k in range(1, 2 * n + 1):
        t = ps.byteps_time(m, n, k, bw)
        same = ps.allreduce_on_same_cards(m, n, k, bw)
        assert same <= t * (1 + 1e-12) and t <= ring * (1 + 1e-12)
        if same >= t * (1 - 1e-12):   # n = 2, k = 1: both at the floor M/B, every rank moving M
            assert (n, k) == (2, 1) and t == pytest.approx(m / bw, rel=1e-12)


def test_on_the_same_cards_the_ps_ties_at_best_when_its_workers_cards_bound_it():
    # n = 8, k = 2: six workers keep their one 10 Gb/s card, so every all-reduce takes M/B_w, as the PS does
    from commlib import hardware
    m, bw, bs = hardware.gradient_bytes("bert_large", "fp32"), 1.25e9, 12.5e9
    c = ps.compare_ps_ring(m, 8, 2, bw, bs)
    assert c.winner == "PS" and c.winner_same_cards == "tie"
    assert c.same_cards_seconds == pytest.approx(m / bw, rel=1e-12) == c.ps_seconds


@pytest.mark.parametrize("n", [8, 32])
def test_small_message_verdict_rests_on_how_much_of_alpha_is_per_message_overhead(n):
    # 1 MB on 25 Gb/s, k = n: one-port (f = 1) the PS is above the ring; with alpha once per stage (f = 0) below it,
    # and it crosses the ring at f* in between
    from commlib import hardware
    link, m = hardware.link("eth_25g"), 1e6
    ring = ps.cost.allreduce_time(m, n, link.bandwidth, link.latency, algorithm="ring")
    t = [ps.round_time(m, n, link.bandwidth, servers=n, latency=link.latency, overhead=f) for f in (0.0, 0.5, 1.0)]
    assert t[0] < t[1] < t[2]
    assert t[0] < ring < t[2]
    f_star = ps.overhead_to_beat(m, n, link.bandwidth, ring, servers=n, latency=link.latency)
    assert 0 < f_star < 1
    assert ps.round_time(m, n, link.bandwidth, servers=n, latency=link.latency, overhead=f_star - 1e-6) < ring
    assert ps.round_time(m, n, link.bandwidth, servers=n, latency=link.latency, overhead=min(1.0, f_star + 1e-6)) >= ring
    # the two bounds of the chapter: every start-up at once (two per round) below, one-port above
    lo = ps.round_time(m, n, link.bandwidth, servers=n, latency=link.latency, one_port=False)
    assert lo <= t[0] and t[2] == ps.round_time(m, n, link.bandwidth, servers=n, latency=link.latency)


def test_overhead_share_one_is_the_one_port_count():
    for n, k in ((8, 2), (8, 8), (32, 32)):
        a = ps.round_time(1e6, n, 3.125e9, servers=k, latency=1e-5)
        assert ps.round_time(1e6, n, 3.125e9, servers=k, latency=1e-5, overhead=1.0) == a
    with pytest.raises(ValueError):
        ps.round_time(1e6, 8, 3.125e9, servers=8, latency=1e-5, overhead=1.5)


@pytest.mark.parametrize("link_key", ["eth_10g", "eth_25g", "eth_100g"])
@pytest.mark.parametrize("n", [3, 8, 32, 100])
def test_on_the_same_cards_the_best_all_reduce_beats_the_ps_at_every_share_of_alpha_and_every_size(link_key, n):
    # k = n separate servers on equal NICs against the all-reduces given two cards per worker, under the same f:
    # the PS pays at least M/B + 2nf alpha + 2(1 - f) alpha, the direct reduce-scatter/all-gather
    # (n - 1)M/(nB) + 2(n - 1)f alpha + 2(1 - f) alpha
    from commlib import hardware
    link = hardware.link(link_key)
    for nbytes in (1e3, 1e5, 1e6, 1e8):
        for f in (0.0, 0.25, 0.5, 1.0):
            t_ps = ps.round_time(nbytes, n, link.bandwidth, servers=n, latency=link.latency, overhead=f)
            name, same = ps.best_allreduce_on_same_cards(nbytes, n, n, link.bandwidth, latency=link.latency, overhead=f)
            direct = ps.allreduce_on_same_cards(nbytes, n, n, link.bandwidth, latency=link.latency,
                                                algorithm="direct", overhead=f)
            assert same <= direct * (1 + 1e-12) and direct < t_ps, (nbytes, f, name)
            lower = nbytes / link.bandwidth + 2 * n * f * link.latency + 2 * (1 - f) * link.latency
            assert t_ps >= lower * (1 - 1e-12)


@pytest.mark.parametrize("n", [4, 8, 32])
def test_the_fastest_all_reduce_is_tried_under_the_same_share_of_alpha_as_the_ps(n):
    from commlib import hardware
    link, m = hardware.link("eth_25g"), 1e6
    for f in (0.0, 0.3, 1.0):
        name, best = ps.best_allreduce(m, n, link.bandwidth, link.latency, overhead=f)
        for algorithm in ps.RIVALS:
            assert best <= ps.rival_time(m, n, link.bandwidth, link.latency, algorithm, overhead=f) * (1 + 1e-12)
    # the direct one is the ring at f = 1 and gains as f falls; so do the ring and halving-doubling, whose
    # pieces hide the latency of their steps, and at f = 1 they are chapter 2's counts
    a, bw = link.latency, link.bandwidth
    ring = ps.rival_time(m, n, bw, a, "ring")
    assert ring == ps.cost.allreduce_time(m, n, bw, a, algorithm="ring")
    assert ps.rival_time(m, n, bw, a, "direct", overhead=1.0) == pytest.approx(ring, rel=1e-12)
    assert ps.rival_time(m, n, bw, a, "direct", overhead=0.0) == pytest.approx(2 * a + 2 * (n - 1) * m / (n * bw), rel=1e-12)
    assert ps.rival_time(m, n, bw, a, "ring", overhead=0.0) == pytest.approx(
        (2 * n - 3) * max(m / (n * bw), a) + m / (n * bw) + a, rel=1e-12)
    for algorithm in ("ring", "tree", "recursive_doubling", "halving_doubling"):
        times = [ps.rival_time(m, n, bw, a, algorithm, overhead=f) for f in (0.0, 0.3, 1.0)]
        assert times[0] <= times[1] <= times[2] == ps.cost.allreduce_time(m, n, bw, a, algorithm=algorithm)
    # the PS beats the fastest all-reduce at each f exactly below the threshold
    def best(f):
        return ps.best_allreduce(m, n, link.bandwidth, link.latency, overhead=f)[1]

    f_star = ps.overhead_to_beat(m, n, link.bandwidth, best, servers=n, latency=link.latency)
    def t(f):
        return ps.round_time(m, n, link.bandwidth, servers=n, latency=link.latency, overhead=f)

    assert f_star is not None and 0 < f_star < 1
    assert all(t(f) < best(f) for f in (0.0, f_star / 2, f_star - 1e-6))
    assert t(min(1.0, f_star + 1e-6)) >= best(min(1.0, f_star + 1e-6))


@pytest.mark.parametrize("n", [8, 32])
def test_small_message_headline_quotes_the_thresholds_where_the_ps_crosses_each_rival(n):
    # the headline's shares are overhead_to_beat's, rounded down; below them the PS (k = n) beats that rival
    from commlib import hardware
    from commlib.experiments import claims as claims_mod
    from commlib.experiments.parameter_servers import small_message_thresholds
    link, m = hardware.link("eth_25g"), 1e6
    t = small_message_thresholds(n)
    assert 0 < t["f_best"] < t["f_ring"] < 1
    ring = ps.cost.allreduce_time(m, n, link.bandwidth, link.latency, algorithm="ring")
    assert ps.round_time(m, n, link.bandwidth, servers=n, latency=link.latency, overhead=t["f_ring"] - 1e-6) < ring
    key = "ch03.ps_small_message_extra" + ("_8" if n == 8 else "")
    v = claims_mod.run(claims_mod.claim(key, small=True))
    assert v.decided and v.winner != "parameter server"
    for f in (t["f_ring"], t["f_best"]):
        assert f"below {math.floor(100 * f) / 100:.2f}" in v.headline
    assert t["ps0_ms"] < t["best0_ms"]   # with all of alpha latency the PS wins: why the thresholds exist


def test_colocated_single_server_moves_n_minus_one_gradients_each_way():
    from commlib.parameter_servers import simulate
    row = next(r for r in simulate.traffic_check() if (r["workers"], r["servers"], r["colocated"]) == (4, 1, True))
    assert row["equal"] and row["closed_form"] == 3 * 8 * 8   # 3 M, M = 8 fp64 values


def _own_cards_verdict(ps_ms, ring_ms, n):
    import dataclasses

    from commlib.experiments import claims
    claim = claims.claim("ch03.ps_small_message_extra")
    claim = dataclasses.replace(claim, shared={**claim.shared, "n": n})
    best = {"parameter server": claims.Best({}, (ps_ms,), ()), "ring": claims.Best({}, (ring_ms,), ()),
            "fastest all-reduce": claims.Best({"algorithm": "halving_doubling"}, (0.5,), ())}
    return claims.Verdict(claim, best, "fastest all-reduce", "ring", 0.0, 0.0, 1)


@pytest.mark.parametrize("ps_ms, near", [(1.03, True), (1.30, False)])
def test_own_cards_sentence_says_a_near_tie_rather_than_hiding_it_behind_last(ps_ms, near):
    from commlib.experiments import parameter_servers as ps_experiments
    text = ps_experiments.own_cards_sentence([_own_cards_verdict(ps_ms, 1.0, 32), _own_cards_verdict(ps_ms, 1.0, 8)])
    assert "comes last of the three in the table both times" in text
    assert ("near-tie" in text and "3 % behind the ring" in text) == near
    assert ("near-tie" in text) == near


def test_fast_server_cards_lead_is_small_and_the_ps_schedule_among_the_workers_ties_or_beats_it():
    """With server cards 16 times the workers' the model shows the PS a little ahead of every all-reduce it counts on
    the same cards, and the sentence names why (no schedule uses the fast cards as relay points); the PS's own schedule
    run among the workers on those cards, a shard on each fast card's machine, is at least as fast (a near-tie here),
    and the lead over the all-reduces vanishes when the server cards are only as fast as the workers'."""
    from commlib import hardware
    from commlib.experiments import claims
    from commlib.experiments import parameter_servers as experiments

    v = claims.run(claims.claim("ch03.ps_fast_server_cards"))
    p, a = v.best["parameter server"].mean, v.best["all-reduce"].mean
    c0 = experiments.FAST_SERVER_CARDS
    w0, s0 = hardware.link(c0["worker_link"]), hardware.link(c0["server_link"])
    o = 1e3 * ps.colocated_on_fast_cards_time(c0["nbytes"], c0["n"], c0["servers"], w0.bandwidth, s0.bandwidth,
                                              latency=w0.latency, overhead=c0["overhead"])
    # the direct reduce-scatter/all-gather sends only the messages that carry bytes (to the 3 owners of a share): it
    # is the PS's own schedule among the workers, and the PS is within one start-up (phi * alpha) of it
    one_startup_ms = 1e3 * c0["overhead"] * hardware.link(c0["worker_link"]).latency
    assert a == pytest.approx(o, rel=1e-9) and abs(p - a) <= one_startup_ms and v.winner == "all-reduce"
    assert "relay points" not in v.sentence and "near-tie" in v.sentence and "own schedule" in v.sentence
    c, link = experiments.FAST_SERVER_CARDS, hardware.link(experiments.FAST_SERVER_CARDS["worker_link"])
    ps_equal = ps.round_time(c["nbytes"], c["n"], link.bandwidth, servers=c["servers"], latency=link.latency,
                             overhead=c["overhead"])
    _, ar_equal = ps.best_allreduce_on_same_cards(c["nbytes"], c["n"], c["servers"], link.bandwidth,
                                                  latency=link.latency, overhead=c["overhead"])
    assert ar_equal < ps_equal


@pytest.mark.parametrize("n, k, phi", [(16, 3, 0.5), (8, 2, 1.0), (8, 4, 0.0), (32, 5, 0.3)])
def test_the_ps_schedule_among_the_workers_is_never_slower_than_separate_servers_on_those_cards(n, k, phi):
    """The same schedule with the shards on k workers' machines, each with the server's card: a host's push to its
    own shard stays inside, so every card carries no more than with separate servers."""
    for nbytes, b_s in ((3e5, 50e9), (1e8, 50e9), (1e6, 3.125e9)):
        own = ps.colocated_on_fast_cards_time(nbytes, n, k, 3.125e9, b_s, latency=1e-5, overhead=phi)
        apart = ps.round_time(nbytes, n, 3.125e9, servers=k, latency=1e-5, server_bandwidth=b_s, overhead=phi)
        assert own <= apart * (1 + 1e-12)


@pytest.mark.parametrize("n", [8, 32])
def test_crossover_is_where_the_ps_with_k_n_starts_to_beat_every_all_reduce(n):
    """Just below the crossover the fastest all-reduce is ahead, just above the PS (k = n, 2n cards); against the
    fastest at each size it is the claim's best (the algorithm that holds out longest), and it scales with alpha."""
    from commlib import hardware
    from commlib.experiments import claims
    from commlib.experiments import parameter_servers as experiments

    link = hardware.link("eth_25g")
    v = claims.run(claims.claim("ch03.ps_crossover" if n == 8 else f"ch03.ps_crossover_{n}"))
    best = experiments.crossover_size(n, None)
    assert best / 1e6 == pytest.approx(v.best["fastest all-reduce"].mean, rel=1e-9)
    assert v.best["ring"].mean < v.best["fastest all-reduce"].mean
    for m, ahead in ((0.99 * best, False), (1.01 * best, True)):
        t_ps = ps.round_time(m, n, link.bandwidth, servers=n, latency=link.latency)
        assert (t_ps < ps.best_allreduce(m, n, link.bandwidth, link.latency)[1]) == ahead
    assert experiments.crossover_size(n, "ring", latency=link.latency / 2) == pytest.approx(
        experiments.crossover_size(n, "ring") / 2, rel=1e-6)


def test_at_1_mb_no_k_beats_the_ring_on_8_workers_but_the_best_is_near_and_the_sentence_says_so():
    from commlib.experiments import parameter_servers as experiments

    text = experiments.kstar_small_sentence(1e6, 8)
    assert text.startswith("no number of servers beats the ring") and "only 3 % behind" in text and "1.25 MB" in text
    assert experiments.kstar_small_sentence(100e6, 8) == "the fewest servers that beat the ring are $k^*$ = 5"
    short = experiments.kstar_small_sentence(1e6, 8, crossover=False)
    assert text.startswith(short) and "only 3 % behind" in short and "MB" not in short


@pytest.mark.parametrize("n", [4, 8, 16])
def test_without_overlap_separate_servers_double_and_one_colocated_shard_per_machine_does_not(n):
    m, b = 1e8, 3.125e9
    assert ps.ps_time(m, n, b, servers=2, pipelined=False) == pytest.approx(2 * ps.ps_time(m, n, b, servers=2))
    assert ps.ps_time(m, n, b, servers=1, colocated=True, pipelined=False) == pytest.approx(
        2 * ps.ps_time(m, n, b, servers=1, colocated=True))
    assert ps.ps_time(m, n, b, servers=n, colocated=True, pipelined=False) == pytest.approx(
        ps.ps_time(m, n, b, servers=n, colocated=True))


@pytest.mark.parametrize("n", [4, 8, 16, 7])
def test_byteps_with_one_cpu_machine_matches_the_ps_with_k_star_servers_for_even_n_only(n):
    """n^2 + n - 2 = (n+2)(n-1): BytePS with k = 1 takes 2nM/((n+2)B), the PS's nM/(k*B) at k* = n/2 + 1; odd n differ."""
    m, b = 1e9, 1e10
    t_bp, k_star = ps.byteps_time(m, n, 1, b), ps.smallest_k_to_beat_ring(m, n, b)
    t_ps = ps.ps_time(m, n, b, servers=k_star)
    if n % 2 == 0:
        assert k_star == n // 2 + 1 and t_bp == pytest.approx(t_ps) == pytest.approx(2 * n * m / ((n + 2) * b))
    else:
        assert t_bp != pytest.approx(t_ps)


def _general_crossover(n, alpha, bw):
    # eq-ps-crossover: with q pieces per shard the PS (k = n) takes (q + 1)(n alpha + M/(qB)) against the ring's
    # 2(n - 1)(alpha + M/(nB)); it saves (1 - 2/n - 1/q)M/B and pays ((q - 1)n + 2) alpha more: the least size over q
    sizes = {q: ((q - 1) * n + 2) * alpha * bw / (1 - 2 / n - 1 / q) for q in range(1, 200) if 1 / q < 1 - 2 / n}
    best = min(sizes.values())
    return best, [q for q, m in sizes.items() if m == pytest.approx(best, rel=1e-12)]


@pytest.mark.parametrize("n", range(3, 33))
def test_crossover_against_the_ring_is_the_chapters_general_form(n):
    """eq-ps-crossover, min over q, is the library's crossover for every n from 3 to 32; its minimum is at two
    pieces per shard from n = 7 on (two and three tie at 7), where it is the simple (n + 2) alpha B / (1/2 - 2/n)."""
    from commlib import hardware
    from commlib.experiments import parameter_servers as experiments
    link = hardware.link("eth_25g")
    general, cuts = _general_crossover(n, link.latency, link.bandwidth)
    assert experiments.crossover_size(n, "ring") == pytest.approx(general, rel=1e-6)
    if n >= 7:
        assert 2 in cuts and cuts == ([2, 3] if n == 7 else [2])
        closed = (n + 2) * link.latency * link.bandwidth / (0.5 - 2 / n)
        assert general == pytest.approx(closed, rel=1e-12)
    else:
        assert min(cuts) > 2       # the two-pieces form misses: infinite at n = 4, negative at 3, too large at 5, 6
        if n > 4:
            assert (n + 2) * link.latency * link.bandwidth / (0.5 - 2 / n) > general * (1 + 1e-3)
        else:
            assert 0.5 - 2 / n <= 0
    # the cut the parameter server picks just above the crossover is a cut that attains it
    assert ps.round_pieces(general * (1 + 1e-6), n, link.bandwidth, servers=n, latency=link.latency) in cuts


def test_fast_cards_rows_tell_why_direct_and_own_schedule_coincide_or_not():
    from commlib.experiments import parameter_servers as ps_experiments
    rows = ps_experiments.fast_cards_rows()
    first, second = rows
    assert first["pieces"] == 1 and first["direct_us"] == pytest.approx(first["own_us"])
    assert second["pieces"] > 1 and second["own_us"] < second["direct_us"]
    words = ps_experiments.fast_cards_words(rows)
    assert "same time" in words and "unpipelined, its two stages in sequence" in words
    # the table's direct column is a schedule that exists: the stages in sequence (720 us in the second row), never
    # below the parameter server's own schedule
    assert second["direct_us"] == pytest.approx(720.0) and all(r["direct_us"] >= r["own_us"] for r in rows)
