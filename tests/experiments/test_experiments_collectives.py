"""Tests for commlib.experiments.collectives: the runs chapters 1 and 2 draw and glue.

Expected values are derived here independently of the executable
collectives: numpy sums of the digit-coded inputs, step counts n - 1,
ceil(log2 n) and 2(n - 1), bytes 2(n - 1)M through the master and
4(n - 1)M/n through any ring rank.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib.experiments import collectives as ce

# --- digit-coded inputs ------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 8), chunk=st.integers(0, 7), data=st.data())
def test_digits_record_exactly_who_contributed(n, chunk, data):
    chunk = min(chunk, n - 1)
    subset = data.draw(st.sets(st.integers(0, n - 1)))
    inputs = ce.digit_inputs(n)
    total = sum(inputs[r][chunk] for r in subset) if subset else 0.0
    assert ce.contributors(total, n) == frozenset(subset)


def test_digit_inputs_reject_bad_sizes():
    with pytest.raises(ValueError, match="n must be"):
        ce.digit_inputs(9)
    with pytest.raises(ValueError, match="chunks must be"):
        ce.digit_inputs(3, chunks=10)
    assert [a.size for a in ce.digit_inputs(3, chunks=5)] == [5, 5, 5]


# --- chapter 1: reduce ---------------------------------------------------------------------------

@pytest.mark.parametrize("values, op, combine", [
    ((1, 2, 3, 4, 5, 6, 7, 8), "sum", sum),
    ((3, 9, 2, 7, 5), "max", max),
    ((0b1111, 0b1011, 0b0111), "band", lambda v: np.bitwise_and.reduce(np.array(v))),
    (tuple(range(1, 17)), "sum", sum),
])
def test_reduce_runs_step_counts_and_final_value(values, op, combine):
    n = len(values)
    runs = ce.reduce_runs(values, op)
    assert runs.n == n and runs.values == tuple(values) and runs.op == op
    assert len(runs.serial) == n - 1                       # the chain: one combination per step
    assert all(len(step) == 1 for step in runs.serial)
    assert len(runs.tree) == math.ceil(math.log2(n))       # the binomial tree
    assert sum(len(step) for step in runs.tree) == n - 1   # still n - 1 combinations in all
    assert runs.serial[-1][-1][1] == 0 and runs.tree[-1][-1][1] == 0   # both end at the root
    assert float(runs.serial[-1][-1][2]) == float(combine(values))
    assert float(runs.tree[-1][-1][2]) == float(combine(values))


def test_reduce_runs_serial_chain_walks_rank_by_rank():
    runs = ce.reduce_runs((1, 2, 3, 4))
    assert [(s, d) for ((s, d, _),) in runs.serial] == [(1, 0), (2, 0), (3, 0)]
    assert [float(v) for ((_, _, v),) in runs.serial] == [3.0, 6.0, 10.0]   # running sums


def test_reduce_runs_bad_input():
    with pytest.raises(ValueError, match="number of values"):
        ce.reduce_runs([1])
    with pytest.raises(ValueError, match="number of values"):
        ce.reduce_runs(range(17))
    with pytest.raises(ValueError, match="op"):
        ce.reduce_runs([1, 2, 3], "average")


def test_operator_runs_associative_operators_agree_others_do_not():
    runs = {(r.op, r.values): r for r in ce.operator_runs()}
    assert len(runs) == len(ce.OPERATOR_CASES)
    total = runs[("sum", (1, 2, 3, 4))]
    assert (total.serial, total.tree) == (10, 10)
    assert runs[("max", (3, 1, 4, 1))].serial == runs[("max", (3, 1, 4, 1))].tree == 4
    sub = runs[("subtract", (1, 2, 3, 4))]
    assert (sub.serial, sub.tree) == (((1 - 2) - 3) - 4, (1 - 2) - (3 - 4))
    assert sub.serial_expression == "((1 - 2) - 3) - 4"
    power = runs[("power", (2, 1, 3, 2))]
    assert (power.serial, power.tree) == (((2 ** 1) ** 3) ** 2, (2 ** 1) ** (3 ** 2))
    xor = runs[("bxor", (14, 11, 7, 15))]
    assert xor.serial == xor.tree == ((14 ^ 11) ^ 7) ^ 15                  # XOR is associative
    fp = runs[("sum", (1e16, 1.0, -1e16, 1.0))]
    assert fp.serial != fp.tree                            # rounding: the grouping decides what survives
    with pytest.raises(ValueError):
        ce.operator_runs([("average", (1, 2))])


# --- chapter 1: primitives -------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_primitive_outputs_match_their_definitions(n):
    full = np.array(ce.digit_inputs(n))                    # ranks x chunks
    total = full.sum(axis=0)
    _, out = ce.primitive_run("all_reduce", n)
    for r in range(n):
        np.testing.assert_allclose(out[r], total)
    _, out = ce.primitive_run("reduce", n)
    np.testing.assert_allclose(out[0], total)
    _, out = ce.primitive_run("reduce_scatter", n)
    for r in range(n):
        np.testing.assert_allclose(out[r], total[r:r + 1])
    _, out = ce.primitive_run("all_to_all", n)
    for j in range(n):
        np.testing.assert_allclose(out[j], full[:, j])
    _, out = ce.primitive_run("all_gather", n)
    for r in range(n):
        np.testing.assert_allclose(out[r], full[:, 0])
    _, out = ce.primitive_run("gather", n)
    np.testing.assert_allclose(out[0], full[:, 0])
    _, out = ce.primitive_run("scatter", n)
    for r in range(n):
        np.testing.assert_allclose(out[r], full[0, r:r + 1])
    inputs, out = ce.primitive_run("broadcast", n)
    assert inputs[1:] == [None] * (n - 1)
    for r in range(n):
        np.testing.assert_allclose(out[r], full[0])


def test_primitive_run_bad_input():
    with pytest.raises(ValueError, match="name"):
        ce.primitive_run("scan", 4)
    with pytest.raises(ValueError, match="n must be"):
        ce.primitive_run("gather", 9)


def test_primitive_runs_every_primitive_in_order():
    runs = ce.primitive_runs(3)
    assert tuple(runs) == ce.PRIMITIVES
    assert all(len(run.inputs) == len(run.outputs) == 3 for run in runs.values())
    with pytest.raises(ValueError, match="n must be"):
        ce.primitive_runs(7)
    with pytest.raises(ValueError, match="n must be"):
        ce.primitive_runs(1)


@pytest.mark.parametrize("count", [1, 3])
def test_buffer_runs_all_gather_vs_all_to_all(count):
    for n, (ag, a2a) in zip((2, 8), ce.buffer_runs((2, 8), count)):
        assert (ag.primitive, a2a.primitive) == ("all_gather", "all_to_all")
        assert (ag.n, ag.send, ag.recv) == (n, count, n * count)
        assert (a2a.n, a2a.send, a2a.recv) == (n, n * count, n * count)
    with pytest.raises(ValueError, match="count"):
        ce.buffer_runs((2,), count=0)


def test_hotspot_counts_equal_the_closed_forms():
    ns, elements = (2, 3, 4, 6, 8, 12), 5040             # 5040 splits evenly for every n
    counts = ce.hotspot_counts(ns, elements)
    m = elements * 8
    assert counts.ns == ns and counts.nbytes == m
    assert counts.naive == tuple(2 * (n - 1) * m for n in ns)
    assert counts.ring == tuple(4 * (n - 1) * m // n for n in ns)


def test_hotspot_counts_uneven_chunks_load_the_busiest_ring_rank_a_little_more():
    counts = ce.hotspot_counts((3,), elements=10)          # 10 values in 3 chunks: 4, 3, 3
    assert counts.ring[0] > 4 * 2 * 80 / 3
    assert counts.naive == (2 * 2 * 80,)


def test_hotspot_counts_bad_input():
    with pytest.raises(ValueError, match="n must be"):
        ce.hotspot_counts((1, 2))
    with pytest.raises(ValueError, match="elements must be"):
        ce.hotspot_counts((2,), elements=0)


# --- chapter 2: ring, trace against formula, partners ----------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 4, 6, 8])
def test_ring_run_snapshots_and_results(n):
    run = ce.ring_run(n)
    total = np.sum(run.data, axis=0)
    for r in range(n):
        np.testing.assert_array_equal(run.results[r], total)
    assert run.trace.steps == 2 * (n - 1)
    assert len(run.trace.snapshots) == 2 * (n - 1) + 1
    np.testing.assert_array_equal(run.trace.snapshots[0], run.data)
    phases = [m.phase for m in run.trace.messages]
    assert phases.count("reduce-scatter") == phases.count("all-gather") == n * (n - 1)


def test_ring_run_bad_n():
    for n in (1, 9):
        with pytest.raises(ValueError, match="n must be"):
            ce.ring_run(n)


def test_trace_formula_runs_agree_with_the_formula():
    runs = ce.trace_formula_runs((2, 4, 8), elements_per_rank=12, bandwidth=2e9, latency=3e-6)
    assert (runs.bandwidth, runs.latency) == (2e9, 3e-6)
    assert [row.n for row in runs.rows] == [2, 4, 8]
    for row in runs.rows:
        assert row.nbytes == 12 * row.n * 8
        assert row.trace_steps == row.formula_steps == 2 * (row.n - 1)
        assert row.trace_bytes_per_rank == pytest.approx(2 * (row.n - 1) / row.n * row.nbytes)
        assert row.trace_seconds == pytest.approx(row.formula_seconds)
    with pytest.raises(ValueError, match="bandwidth"):
        ce.trace_formula_runs((2,), bandwidth=0.0)
    with pytest.raises(ValueError, match="elements_per_rank must be"):
        ce.trace_formula_runs((2,), elements_per_rank=0)
    with pytest.raises(ValueError, match="n must be"):
        ce.trace_formula_runs((1,))


def test_partner_runs_distances_and_shares():
    runs = ce.partner_runs(8)
    assert (runs.n, runs.nbytes) == (8, 8 * 8 * 8)
    assert list(runs.traces) == list(ce.PARTNER_ALGORITHMS)
    rd, hd = runs.traces["recursive_doubling"], runs.traces["halving_doubling"]
    assert rd.steps == 3 and hd.steps == 6                 # log2 n, and 2 log2 n
    for s in range(rd.steps):
        msgs = rd.step_messages(s)
        assert len(msgs) == 8                              # every rank sends once per step
        assert {m.dst - m.src for m in msgs if m.src < m.dst} == {2 ** s}
        assert {m.nbytes for m in msgs} == {runs.nbytes}   # the whole vector every time
    # halving-doubling: halves, quarters, eighths of M, then back up
    shares = [hd.step_messages(s)[0].nbytes / runs.nbytes for s in range(hd.steps)]
    assert shares == [1 / 2, 1 / 4, 1 / 8, 1 / 8, 1 / 4, 1 / 2]


def test_partner_runs_bad_n():
    with pytest.raises(ValueError, match="power of two"):
        ce.partner_runs(6)
    with pytest.raises(ValueError, match="n must be"):
        ce.partner_runs(64)


# --- chapter 1: rounding, the reduce over n, the master's grid -----------------------------------

def test_rounding_runs_the_orders_drift_apart_more_in_lower_precision():
    runs = ce.rounding_runs(1024, seeds=(0, 1, 2))
    gaps = [r.gap for r in runs]
    assert [r.name for r in runs] == ["fp64", "fp32", "fp16"]
    assert gaps[0] < gaps[1] < gaps[2]
    assert gaps[0] < 1e-13 and gaps[2] > 1e-3                 # last bits of a double; fp16 visibly
    for r in runs:
        assert r.gap <= 2 * r.error + 1e-300 and r.error <= (r.n - 1) * r.unit   # Goldberg's bound holds


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_order_errors_are_measured_against_the_exact_rational_sum(dtype):
    # the reference is the sum in rationals, not math.fsum: fsum rounds to the nearest double, an error of
    # up to half an fp64 unit, as large as the fp64 errors being measured (it misses on most fp64 seeds)
    from fractions import Fraction

    for seed in range(5):
        values = np.random.default_rng(seed).random(256).astype(dtype)
        exact = sum((Fraction(float(v)) for v in values), Fraction(0))
        assert ce.exact_sum(values.tolist()) == exact
        serial, tree = ce.order_errors(256, dtype, seed)
        acc = values[0]
        for v in values[1:]:
            acc = acc + v                                  # the serial order, each addition in dtype
        serial_sum = float(acc)
        assert serial == float(abs(Fraction(serial_sum) - exact) / exact)
        assert tree <= 2 * math.ceil(math.log2(256)) * float(np.finfo(dtype).eps) / 2


def test_unit_roundoff_agrees_with_numpy_where_numpy_has_the_format():
    for dtype, name in ce.ROUNDING_DTYPES:
        assert ce.unit_roundoff(name) == float(np.finfo(dtype).eps) / 2
    assert ce.unit_roundoff("bf16") == 8 * ce.unit_roundoff("fp16") == 2.0 ** -8
    with pytest.raises(ValueError, match="name"):
        ce.unit_roundoff("fp12")


def test_fsum_is_not_the_exact_sum_in_fp64():
    # the control for the test above: on fp64 values fsum's rounding shows, so a reference taken from it would differ
    from fractions import Fraction

    values = np.random.default_rng(0).random(256).tolist()
    assert Fraction(math.fsum(values)) != ce.exact_sum(values)
    assert ce.exact_sum([1e16, 1.0, -1e16, 1.0]) == 2 and ce.exact_sum([]) == 0


def test_reduce_comparison_against_hand_derived_alpha_beta_times():
    alpha, beta = 1e-5, 1 / 3.125e9                            # the eth_25g preset
    for r in ce.reduce_comparison((2, 4, 8, 64)):
        d = math.ceil(math.log2(r.n))
        for m, tree, split in ((ce.REDUCE_SHORT, r.tree_short, r.split_short), (ce.REDUCE_LONG, r.tree_long, r.split_long)):
            assert tree == pytest.approx(d * (alpha + m * beta))
            assert split == pytest.approx(2 * d * alpha + 2 * (r.n - 1) / r.n * m * beta)
        if r.n == 2:
            assert math.isnan(r.crossover)                      # both move M; the tree has one step fewer
        else:
            assert r.crossover == pytest.approx(d * alpha / ((d - 2 * (r.n - 1) / r.n) * beta))


def test_the_reduce_claims_cover_the_ends_of_the_table_and_two_ranks():
    """The takeaway's range of n comes from REDUCE_NS; the claims must back both of its ends."""
    slow = {key: (nbytes, n) for key, (nbytes, n, link) in ce.REDUCE_CLAIMS.items() if link == ce.CH01_SHARED["link"]}
    long_ns = {n for nbytes, n in slow.values() if nbytes == ce.REDUCE_LONG}
    short_ns = {n for nbytes, n in slow.values() if nbytes == ce.REDUCE_SHORT}
    above_two = [n for n in ce.REDUCE_NS if n > 2]
    assert {2, min(above_two), max(above_two)} <= long_ns and max(ce.REDUCE_NS) in short_ns
    from commlib.experiments import claims
    for key, (nbytes, n) in slow.items():
        v = claims.run(claims.claim(key))
        tree_wins = n == 2 or nbytes == ce.REDUCE_SHORT
        assert (v.winner == "binomial tree") == tree_wins, key
        assert f"on {n} ranks" in v.sentence and "unpipelined" in v.sentence


def test_the_chains_lead_against_hand_derived_closed_forms_peaks_inside_the_range():
    """The lead over reduce-scatter + gather, each at alpha-beta with the chain at its best whole q (searched here
    over every q), rises from 4 ranks, peaks on 16, then falls: the bytes of reduce-scatter + gather stop growing
    near 2M while the chain's fill keeps growing."""
    alpha, beta, m = 1e-5, 1 / 3.125e9, ce.REDUCE_LONG             # the eth_25g preset
    leads = ce.chain_leads()
    for n, lead in leads.items():
        split = 2 * math.log2(n) * alpha + 2 * (n - 1) / n * m * beta
        chain = min((n - 2 + q) * (alpha + m / q * beta) for q in range(1, 2000))
        assert lead == pytest.approx(split / chain, rel=1e-9)
    ns = sorted(leads)
    peak = max(ns, key=leads.get)
    assert peak == 16 and all(leads[a] < leads[b] for a, b in zip(ns, ns[1:]) if b <= peak)
    assert all(leads[a] > leads[b] for a, b in zip(ns, ns[1:]) if a >= peak)
    words = ce.chain_lead_words(leads)
    assert "peaks on 16 ranks and shrinks beyond" in words
    # the range reaches the flip: from 512 ranks reduce-scatter + gather is the faster (omega = M beta/((n-2) alpha)
    # falls like 1/n below the tie, about 5.8)
    assert ce.chain_lead_span(leads) == (256, 512) and leads[256] > 1 > leads[512]
    assert "but holds up to 256 ranks; from 512, reduce-scatter + gather is the faster" in words
    assert ce.chain_fill_ratio(m, 256, "eth_25g") > ce.chain_tie_ratio(256)
    assert ce.chain_fill_ratio(m, 512, "eth_25g") < ce.chain_tie_ratio(512)


def test_chain_lead_span_finds_the_last_lead_and_the_first_loss():
    assert ce.chain_lead_span({4: 1.2, 8: 1.1, 16: 0.9, 32: 1.1}) == (8, 16)
    assert ce.chain_lead_span({4: 1.2}) == (4, None)
    assert ce.chain_lead_span({4: 0.8, 8: 1.2}) == (None, 4)
    with pytest.raises(ValueError, match="leads"):
        ce.chain_lead_span({})


def test_chain_lead_words_say_a_trend_without_a_peak_and_reject_one_count():
    assert "grows with every doubling" in ce.chain_lead_words({4: 1.0, 8: 1.2, 16: 1.3})
    assert "shrinks with every doubling" in ce.chain_lead_words({16: 1.3, 32: 1.2, 64: 1.1})
    with pytest.raises(ValueError, match="leads"):
        ce.chain_lead_words({8: 1.5})


def test_chain_lead_words_claim_a_loss_from_n_only_where_every_larger_n_loses():
    # the chain leads again on 32: no "from 16", the losing count named alone, no "shrinks beyond"
    words = ce.chain_lead_words({4: 1.2, 8: 1.5, 16: 0.9, 32: 1.1})
    assert "from 16" not in words and "shrinks beyond" not in words and "faster on 16 ranks" in words
    # rank counts that are not powers of two are not called so, and a trend that is not steady is no trend
    words = ce.chain_lead_words({3: 1.2, 5: 1.5, 7: 1.1})
    assert "powers of two" not in words and "rank counts run" in words
    words = ce.chain_lead_words({4: 1.2, 8: 1.1, 16: 1.3})
    assert "grows with" not in words and "largest on 16 ranks" in words and "shrinks beyond" not in words
    # a loss on the smallest count leaves nothing "held up to"
    words = ce.chain_lead_words({4: 0.9, 8: 1.2, 16: 1.1})
    assert "holds up to" not in words and "faster on 4 ranks" in words


def test_reduce_margin_words_give_a_ratio_or_a_time_saved():
    from commlib.experiments import claims
    two = claims.run(claims.claim("ch01.reduce_tree_two_ranks"))
    ib = claims.run(claims.claim("ch01.reduce_tree_long_64_ib"))
    assert ce.reduce_margin_words(two) == "binomial tree, by 10 µs"        # one start-up of the eth_25g preset
    assert ce.reduce_margin_words(ib).startswith("pipelined chain, 1.3 times faster")


def test_the_chains_win_on_the_long_vector_is_the_slow_links_not_every_links():
    """The control: the same 64 MiB on 64 ranks over 400 Gb/s Ethernet, where the bytes weigh less against the
    chain's pipeline fill; the chain, at its best chunk count, no longer wins, and the sentence names the link."""
    from commlib.experiments import claims
    slow = claims.run(claims.claim("ch01.reduce_tree_long_64"))
    fast = claims.run(claims.claim("ch01.reduce_tree_long_64_fast"))
    assert slow.winner == "pipelined chain" and fast.winner != "pipelined chain"
    assert not fast.best["pipelined chain"].at_edge and "over Ethernet 400 Gb/s" in fast.sentence


@pytest.mark.parametrize("link", ["eth_25g", "eth_400g"])
@pytest.mark.parametrize("n", [4, 8, 16, 64])
def test_the_chains_tie_ratio_matches_a_direct_search_over_the_vector(n, link):
    """Where the chain at its best whole chunk count and reduce-scatter + gather take the same time, searched over
    M on a real link, the ratio M beta / ((n - 2) alpha) is the closed form's (whose q is a real number), and the
    chain wins just above it and loses just below."""
    from commlib.collectives import compare
    from commlib.collectives.algorithms import chain
    item = ce.hardware.link(link)

    def chain_best(m):
        return ce.chain_seconds(m, n, link, chain.best_chunks(m, n, item.bandwidth, item.latency))

    def split(m):
        return ce.collective_seconds("reduce", "reduce_scatter_gather", m, n, link)

    tie = max(compare.crossover_sizes(chain_best, split, 1.0, 1e12))
    r = ce.chain_tie_ratio(n)
    assert ce.chain_fill_ratio(tie, n, link) == pytest.approx(r, rel=2e-3)
    m = r * (n - 2) * item.latency * item.bandwidth
    assert chain_best(1.05 * m) < split(1.05 * m) and chain_best(m / 1.05) > split(m / 1.05)


def test_the_chains_tie_ratio_falls_to_its_limit_and_brackets_the_chapters_two_links():
    """It falls from 4 to 64 ranks; from 64 on it stays within 1 % of (1 + sqrt 2)^2, its limit as n grows."""
    ratios = [ce.chain_tie_ratio(n) for n in (4, 8, 16, 64)]
    assert all(a > b for a, b in zip(ratios, ratios[1:]))
    limit = (1 + math.sqrt(2)) ** 2
    assert ce.chain_tie_ratio(2**20) == pytest.approx(limit, rel=1e-4)
    assert all(ce.chain_tie_ratio(2**k) == pytest.approx(limit, rel=0.01) for k in range(6, 21))
    assert ce.chain_fill_ratio(ce.REDUCE_LONG, 64, "eth_25g") > ratios[0] > ratios[3]
    assert ce.chain_fill_ratio(ce.REDUCE_LONG, 64, "eth_400g") < ratios[3]
    with pytest.raises(ValueError, match="^n"):
        ce.chain_tie_ratio(2)


def test_the_chains_tie_startup_splits_the_whole_q_verdict():
    """Chapter 1's 400 Gb/s control: with the chain at its best whole q, it beats reduce-scatter + gather at a
    start-up 3 % below chain_tie_startup and loses 3 % above it, at the link's bandwidth, on 8 and 64 ranks."""
    from commlib import cost
    from commlib.collectives.algorithms import chain

    for n, link in ((64, "eth_400g"), (8, "eth_25g"), (64, "ib_ndr")):
        bandwidth = ce.hardware.link(link).bandwidth
        alpha = ce.chain_tie_startup(ce.REDUCE_LONG, n, link)
        for f, chain_wins in ((0.97, True), (1.03, False)):
            a = f * alpha
            q = chain.best_chunks(ce.REDUCE_LONG, n, bandwidth, a)
            best = chain.pipelined_terms(ce.REDUCE_LONG, n, q).time(bandwidth, a)
            split = cost.collective_time("reduce", ce.REDUCE_LONG, n, bandwidth, a, "reduce_scatter_gather")
            assert (best < split) == chain_wins
    # the preset's 5 us start-up lies above it, NDR's 1 us below: the chapter's verdicts on the two links
    assert ce.chain_tie_startup(ce.REDUCE_LONG, 64, "eth_400g") < ce.hardware.link("eth_400g").latency
    assert ce.chain_tie_startup(ce.REDUCE_LONG, 64, "ib_ndr") > ce.hardware.link("ib_ndr").latency
    with pytest.raises(ValueError, match="^nbytes"):
        ce.chain_tie_startup(0, 64, "eth_400g")


def test_on_four_ranks_the_chain_also_wins_below_the_smaller_root_where_the_tree_beats_both():
    """Chapter 1's fold: on 4 ranks the tie has a second root; below it the chain beats reduce-scatter + gather, the
    tree beats both, and above it (up to the larger root) reduce-scatter + gather wins. On 8 ranks and more there is none."""
    from commlib.collectives.algorithms import chain

    n, link = 4, "eth_25g"
    item = ce.hardware.link(link)
    low = ce.chain_tie_ratio_low(n)
    assert 0 < low < ce.chain_tie_ratio(n)

    def times(m):
        best = ce.chain_seconds(m, n, link, chain.best_chunks(m, n, item.bandwidth, item.latency))
        split = ce.collective_seconds("reduce", "reduce_scatter_gather", m, n, link)
        return best, split, ce.collective_seconds("reduce", "tree", m, n, link)

    for f in (0.1, 0.5, 0.95):
        best, split, tree = times(f * low * (n - 2) * item.latency * item.bandwidth)
        assert tree < best < split
    best, split, _ = times(1.05 * low * (n - 2) * item.latency * item.bandwidth)
    assert split < best
    assert all(ce.chain_tie_ratio_low(2**k) is None for k in range(3, 21))
    # with whole chunks the bound is 1/3, just below the real-q root: q = 1 wins below it, nothing above
    whole = ce.chain_tie_ratio_low_whole(n)
    assert whole == pytest.approx(1 / 3) and whole < low
    for f, chain_wins in ((0.99, True), (1.01, False)):
        best, split, _ = times(f * whole * (n - 2) * item.latency * item.bandwidth)
        assert (best < split) == chain_wins
    assert all(ce.chain_tie_ratio_low_whole(2**k) is None for k in range(3, 21))


def test_the_chapters_closed_form_root_is_the_tie_ratio():
    """Chapter 1's fold solves (1 + sqrt r)^2 = 2 log2 n / (n - 2) + 2 (n - 1) / n r for its larger root,
    sqrt r = n / (n - 2) (1 + sqrt(2 (n - 1 - log2 n) / n)); it is chain_tie_ratio's r on every power of two."""
    for n in [2**k for k in range(2, 21)]:
        root = n / (n - 2) * (1 + math.sqrt(2 * (n - 1 - math.log2(n)) / n))
        assert root**2 == pytest.approx(ce.chain_tie_ratio(n), rel=1e-12)
        r = root**2
        assert (1 + root) ** 2 == pytest.approx(2 * math.log2(n) / (n - 2) + 2 * (n - 1) / n * r, rel=1e-12)


def test_the_masters_grid_holds_its_exact_optimum_and_powers_of_two_around_it():
    from commlib.collectives.algorithms import naive

    grid = ce.master_chunk_grid(64 * 2**20, 8, "eth_25g")
    assert grid[0] == 1 and grid[-1] == 1024 and naive.best_chunks(64 * 2**20, 8, 3.125e9, 1e-5) in grid
    assert all(q & (q - 1) == 0 for q in grid if q != 46)
    seconds = [ce.master_seconds(64 * 2**20, 8, "eth_25g", q) for q in range(1, 300)]
    assert min(seconds) == pytest.approx(ce.master_seconds(64 * 2**20, 8, "eth_25g", 46))


def test_round_to_bf16_agrees_with_truncating_float32_bits_where_no_tie():
    # bf16 is the top 16 bits of a float32: where the dropped 16 bits are below half, rounding is truncation
    rng = np.random.default_rng(0)
    for x in rng.random(200).astype(np.float32):
        bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
        if bits & 0xFFFF < 0x8000:
            truncated = float(np.array([bits & 0xFFFF0000], dtype=np.uint32).view(np.float32)[0])
            assert ce.round_to_bf16(float(x)) == truncated
    assert ce.round_to_bf16(1 + 2**-8) == 1.0                      # a tie, to the even neighbour
    assert ce.round_to_bf16(-3.0) == -3.0 and ce.round_to_bf16(0.0) == 0.0
    with pytest.raises(ValueError, match="x"):
        ce.round_to_bf16(float("nan"))


def test_bf16_serial_sum_stalls_where_the_spacing_exceeds_twice_every_value():
    r = ce.bf16_order_run(1024, seeds=(0, 1, 2))
    assert set(r.serial_sums) == {256.0}                     # spacing 2 there: every value in [0, 1) rounds away
    assert r.exact_low > 480 and r.serial_error > 0.45 and r.tree_error < 0.01
    assert ce.rounding_bound(1023, ce.unit_roundoff("bf16")) == math.inf   # no rigorous bound at this n


def test_power_of_ten_needs_the_values_to_agree():
    assert ce.power_of_ten([0.0083, 0.0107]) == 0.01
    with pytest.raises(ValueError, match="values"):
        ce.power_of_ten([0.002, 0.02])
