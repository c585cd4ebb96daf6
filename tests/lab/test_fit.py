"""commlib.lab.fit: the least-squares alpha-beta fit recovers what generated the data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib.lab import fit

SIZES = tuple(float(2**k) for k in range(10, 27))  # 1 KiB .. 64 MiB


def ring_time(nbytes, n, alpha, beta):
    # Written out here, independently of commlib.cost: 2(n-1) steps, 2(n-1)/n of the buffer sent.
    return 2 * (n - 1) * alpha + 2 * (n - 1) / n * nbytes * beta


@settings(max_examples=40, deadline=None)
@given(
    alpha=st.floats(1e-7, 1e-3),
    bandwidth=st.floats(1e8, 1e11),
    noise=st.floats(0.0, 0.05),
    n=st.integers(2, 16),
    seed=st.integers(0, 2**16),
)
def test_fit_recovers_alpha_beta_from_noisy_ring_times(alpha, bandwidth, noise, n, seed):
    beta = 1 / bandwidth
    rng = np.random.default_rng(seed)
    t = np.array([ring_time(x, n, alpha, beta) for x in SIZES]) * np.exp(rng.normal(0, noise, len(SIZES)))
    m = fit.fit_alpha_beta(SIZES, t, "all_reduce", n, "ring")
    # With multiplicative noise of sd `noise` on 17 points, each coefficient is good to a few noise widths --
    # but only where it matters: alpha must be visible at the small end, beta at the large end.
    tol = 0.05 + 6 * noise
    alpha_share = 2 * (n - 1) * alpha / ring_time(SIZES[0], n, alpha, beta)
    beta_share = 2 * (n - 1) / n * SIZES[-1] * beta / ring_time(SIZES[-1], n, alpha, beta)
    if alpha_share > 0.5:
        assert m.alpha == pytest.approx(alpha, rel=tol)
    if beta_share > 0.5:
        assert m.beta == pytest.approx(beta, rel=tol)
    assert fit.median_abs_relative_error(m, fit.Series("all_reduce", n, SIZES, tuple(t), "ring")) <= tol


def test_exact_data_gives_exact_fit_and_zero_error():
    t = [ring_time(x, 4, 3e-6, 2e-10) for x in SIZES]
    m = fit.fit_alpha_beta(SIZES, t, "all_reduce", 4, "ring")
    assert m.alpha == pytest.approx(3e-6, rel=1e-9)
    assert m.beta == pytest.approx(2e-10, rel=1e-9)
    assert m.bandwidth == pytest.approx(5e9, rel=1e-9)
    s = fit.Series("all_reduce", 4, SIZES, tuple(t), "ring")
    assert np.max(np.abs(fit.relative_errors(m, s))) < 1e-9


def test_fit_is_relative_not_absolute():
    # A 10x outlier at the largest size must not wreck the small sizes (it would in plain least squares).
    t = [ring_time(x, 4, 5e-6, 1e-10) for x in SIZES]
    t[-1] *= 10
    m = fit.fit_alpha_beta(SIZES, t, "all_reduce", 4, "ring")
    s = fit.Series("all_reduce", 4, SIZES[:8], tuple(t[:8]), "ring")
    assert np.median(np.abs(fit.relative_errors(m, s))) < 0.5


def test_coefficients_never_negative():
    # Times that fall with size would need beta < 0; the fit clamps it at 0.
    t = [1e-3 / (1 + k) for k in range(len(SIZES))]
    m = fit.fit_alpha_beta(SIZES, t, "all_gather", 4)
    assert m.alpha >= 0 and m.beta >= 0


def test_relative_nonnegative_fit_matches_brute_force_on_random_problems():
    # The fit minimises the squared relative error over alpha, beta >= 0 (scipy's NNLS on rescaled
    # columns): no point of a fine grid over the non-negative quadrant may do better.
    rng = np.random.default_rng(1)
    for _ in range(30):
        a = rng.random((8, 2))
        t = rng.uniform(0.5, 2.0, size=8)
        x = fit._fit_rows(a, t)
        u, v = np.meshgrid(np.linspace(0, 5, 401), np.linspace(0, 5, 401))
        cand = np.stack([u.ravel(), v.ravel()])
        best = np.min(np.sum(((a @ cand - t[:, None]) / t[:, None]) ** 2, axis=0))
        assert np.all(x >= 0)
        assert np.sum(((a @ x - t) / t) ** 2) <= best + 1e-9


def test_piecewise_finds_the_protocol_switch():
    cut = 2.0**17
    t = [ring_time(x, 4, 2e-6, 5e-10) if x < cut else ring_time(x, 4, 40e-6, 1.5e-10) for x in SIZES]
    s = fit.Series("all_reduce", 4, SIZES, tuple(t), "ring")
    pw = fit.fit_piecewise(s)
    assert 2.0**16 < pw.crossover < 2.0**17
    assert pw.low.beta == pytest.approx(5e-10, rel=1e-6)
    assert pw.high.alpha == pytest.approx(40e-6, rel=1e-6)
    single = fit.fit_alpha_beta(SIZES, t, "all_reduce", 4, "ring")
    assert fit.median_abs_relative_error(pw, s) < 1e-6 < fit.median_abs_relative_error(single, s)


def test_three_regimes_find_both_switches():
    # Eager below 8 KiB, rendezvous in cache up to 16 MiB, out of cache above: three lines, two cuts.
    def t(x):
        if x < 2**13:
            return ring_time(x, 2, 1e-6, 1e-9)
        if x < 2**24:
            return ring_time(x, 2, 10e-6, 3e-10)
        return ring_time(x, 2, 0.0, 1e-9)
    s = fit.Series("all_reduce", 2, SIZES, tuple(t(x) for x in SIZES), "ring")
    pw = fit.fit_piecewise(s, min_points=2, regimes=3)
    assert 2**12 < pw.crossovers[0] < 2**13 and 2**23 < pw.crossovers[1] < 2**24
    assert pw.regime(2**20) is pw.models[1] and pw.models[1].beta == pytest.approx(3e-10, rel=1e-6)
    assert fit.median_abs_relative_error(pw, s) < 1e-6
    with pytest.raises(ValueError, match="crossovers must increase"):
        fit.PiecewiseFit((2.0, 1.0), (pw.low, pw.low, pw.low))


def test_joint_fit_separates_gamma_from_beta():
    # all-gather moves bytes only; reduce-scatter also reduces them: together they pin down gamma.
    alpha, beta, gamma = 4e-6, 1e-10, 3e-10
    ag = [alpha * 3 + 0.75 * x * beta for x in SIZES]
    rs = [alpha * 3 + 0.75 * x * (beta + gamma) for x in SIZES]
    m = fit.fit_joint([fit.Series("all_gather", 4, SIZES, tuple(ag), "ring"),
                       fit.Series("reduce_scatter", 4, SIZES, tuple(rs), "ring")], gamma=True)
    assert (m.alpha, m.beta, m.gamma) == pytest.approx((alpha, beta, gamma), rel=1e-6)


def test_error_table_bandwidths_follow_nccl_tests():
    s = fit.Series("all_reduce", 4, (1e6,), (1e-3,), "ring")
    (row,) = fit.error_table(fit.AlphaBeta(0.0, 0.5e-9), s)
    assert row.algbw == pytest.approx(1e9)          # 1 MB in 1 ms
    assert row.busbw == pytest.approx(1.5e9)        # x 2(n-1)/n
    assert row.predicted == pytest.approx(0.75e-3)  # 1.5 MB on the critical path at 2 GB/s
    assert row.relative_error == pytest.approx(-0.25)


def test_median_error_window_and_validation():
    s = fit.Series("broadcast", 2, (1e3, 1e4, 1e5), (1.0, 1.0, 1.0))
    m = fit.AlphaBeta(1.0, 0.0)
    assert fit.median_abs_relative_error(m, s, lo=0, hi=1e6) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="hi"):
        fit.median_abs_relative_error(m, s, lo=1e5, hi=1e3)
    with pytest.raises(ValueError, match="no sizes"):
        fit.median_abs_relative_error(m, s, lo=1e7, hi=1e8)


@pytest.mark.parametrize("kwargs, word", [
    (dict(op="all_sum", n=2, nbytes=(1.0,), seconds=(1.0,)), "op"),
    (dict(op="all_reduce", n=1, nbytes=(1.0,), seconds=(1.0,)), "n"),
    (dict(op="all_reduce", n=2, nbytes=(1.0, 2.0), seconds=(1.0,)), "equal length"),
    (dict(op="all_reduce", n=2, nbytes=(1.0,), seconds=(0.0,)), "seconds"),
    (dict(op="all_reduce", n=2, nbytes=(-1.0,), seconds=(1.0,)), "nbytes"),
])
def test_series_rejects_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        fit.Series(**kwargs)


def test_fit_needs_enough_points():
    with pytest.raises(ValueError, match="at least 2"):
        fit.fit_alpha_beta([1e3], [1e-5], "all_reduce", 4)
    with pytest.raises(ValueError, match="distinct sizes"):
        fit.fit_piecewise(fit.Series("all_reduce", 4, SIZES[:3], tuple([1e-5] * 3)))


def test_synthetic_times_seeded_and_centred():
    a = fit.synthetic_times(SIZES, "all_reduce", 4, 1e-6, 1e-10, noise=0.1, seed=3)
    b = fit.synthetic_times(SIZES, "all_reduce", 4, 1e-6, 1e-10, noise=0.1, seed=3)
    clean = np.array([ring_time(x, 4, 1e-6, 1e-10) for x in SIZES])
    assert np.array_equal(a, b)
    assert abs(math.log(np.median(a / clean))) < 0.1
    with pytest.raises(ValueError, match="noise"):
        fit.synthetic_times(SIZES, "all_reduce", 4, 1e-6, 1e-10, noise=2.0)


def test_pooled_median_pairs_each_series_with_its_model():
    a = fit.Series("all_gather", 2, (1e4, 1e5, 1e6), (1.0, 1.0, 1.0))
    b = fit.Series("broadcast", 2, (1e4, 1e5, 1e6), (2.0, 2.0, 2.0), "scatter_allgather")
    right, wrong = fit.AlphaBeta(1.0, 0.0), fit.AlphaBeta(2.0, 0.0)
    # all_gather on 2 ranks has 1 step, broadcast (scatter_allgather) 2 steps: 1 alpha = 1 s fits both.
    assert fit.pooled_median_error([right, right], [a, b]) == pytest.approx(0.0)
    assert fit.pooled_median_error([wrong, wrong], [a, b]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="pair up"):
        fit.pooled_median_error([right], [a, b])


# ---------------------------------------------------------------- numbers the lab's prose is glued from

@settings(max_examples=30, deadline=None)
@given(k_lo=st.integers(-9, 0), k_hi=st.integers(0, 3), scale=st.floats(1e-3, 1e3))
def test_time_span_is_the_ratio_of_extremes_and_ignores_units(k_lo, k_hi, scale):
    # Times 10**k_lo ... 10**k_hi seconds (with one in between) span k_hi - k_lo decades, in any unit.
    times = (10.0**k_lo, 10.0 ** ((k_lo + k_hi) / 2), 10.0**k_hi)
    s = fit.Series("all_reduce", 2, (1.0, 2.0, 3.0), tuple(scale * t for t in times))
    assert fit.time_span_decades(s) == pytest.approx(k_hi - k_lo, abs=1e-9)
    assert fit.time_span(s) == pytest.approx(10.0 ** (k_hi - k_lo), rel=1e-9)


def test_time_span_pools_several_series():
    a = fit.Series("all_gather", 2, (1.0, 2.0), (1e-5, 1e-4))
    b = fit.Series("broadcast", 2, (1.0, 2.0), (1e-3, 1e-2))
    assert fit.time_span(a) == pytest.approx(10) and fit.time_span(b) == pytest.approx(10)
    assert fit.time_span([a, b]) == pytest.approx(1000)  # shortest of a, longest of b
    with pytest.raises(ValueError, match="series"):
        fit.time_span([])


def test_growth_tells_the_two_regimes_apart():
    # Start-up cost only: 8x the bytes, same time. Copying only: 8x the bytes, 8x the time.
    latency = [ring_time(x, 2, 5e-6, 0.0) for x in SIZES]
    copying = [ring_time(x, 2, 0.0, 1e-10) for x in SIZES]
    assert fit.growth(fit.Series("all_reduce", 2, SIZES, tuple(latency), "ring"), 2**10, 2**13) == pytest.approx(1.0)
    assert fit.growth(fit.Series("all_reduce", 2, SIZES, tuple(copying), "ring"), 2**23, 2**26) == pytest.approx(8.0)
    s = fit.Series("all_reduce", 2, SIZES, tuple(copying), "ring")
    with pytest.raises(ValueError, match="hi must be one of the measured sizes"):
        fit.growth(s, 2**10, 3000)
    with pytest.raises(ValueError, match="lo must be one of the measured sizes"):
        fit.growth(s, 5, 2**10)


@settings(max_examples=30, deadline=None)
@given(half=st.floats(0.0, 0.9), scale=st.floats(1e-6, 1.0))
def test_median_relative_spread_of_symmetric_bars_is_their_width(half, scale):
    # Quartiles at t(1 - h) and t(1 + h): the bar is 2h of the median at every size, whatever the times.
    t = tuple(scale * (1 + k) for k in range(5))
    s = fit.Series("all_reduce", 2, (1.0, 2.0, 3.0, 4.0, 5.0), t, low=tuple(x * (1 - half) for x in t),
                   high=tuple(x * (1 + half) for x in t))
    assert fit.median_relative_spread(s) == pytest.approx(2 * half, abs=1e-12)


def test_median_relative_spread_pools_and_counts_missing_bars_as_zero():
    bare = fit.Series("broadcast", 2, (1.0, 2.0, 3.0), (1.0, 1.0, 1.0))
    wide = fit.Series("broadcast", 2, (1.0, 2.0, 3.0), (1.0, 1.0, 1.0), low=(0.5,) * 3, high=(1.5,) * 3)
    assert fit.median_relative_spread(bare) == 0.0
    assert fit.median_relative_spread(wide) == pytest.approx(1.0)
    # Three zeros and three ones: the median of the six lies halfway.
    assert fit.median_relative_spread([bare, wide]) == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(5))
def test_piecewise_finds_a_planted_break_between_the_two_largest_sizes_but_one(seed):
    # The lab's own shape: one regime up to 16 MiB, each byte four times dearer from 32 MiB on, 3 % noise.
    # The cut must fall where the data has it, between 16 and 32 MiB; the old rule of three points a
    # regime (the control) cannot put it there and cuts one size too low.
    def truth(x):
        return ring_time(x, 2, 5e-6, 1 / 8e9) if x <= 2**24 else ring_time(x, 2, 5e-6, 1 / 2e9)
    rng = np.random.default_rng(seed)
    t = [truth(x) * math.exp(rng.normal(0, 0.03)) for x in SIZES]
    s = fit.Series("all_reduce", 2, SIZES, tuple(t), "ring")
    pw = fit.fit_piecewise(s, regimes=2)
    assert 2**24 < pw.crossover < 2**25
    forced = fit.fit_piecewise(s, regimes=2, min_points=3)
    assert forced.crossover < 2**24


def test_regime_errors_show_the_worst_miss_a_median_hides():
    t = [ring_time(x, 2, 5e-6, 1e-10) * (1.35 if x in (2**21, 2**22) else 1.0) for x in SIZES]
    s = fit.Series("all_reduce", 2, SIZES, tuple(t), "ring")
    (one,) = fit.regime_errors(fit.fit_joint([s]), s)
    assert one.points == one.fitted == len(SIZES) and not one.exact
    assert one.median < 0.1 < 0.2 < one.worst and one.worst_at in (2**21, 2**22)
    pw = fit.PiecewiseFit((2**24 * 1.4,), (fit.fit_joint([s.subset(hi=2**24)]), fit.fit_joint([s.subset(lo=2**25)])))
    low, high = fit.regime_errors(pw, s, lo=2**12)
    assert (low.points, low.fitted, high.fitted, high.exact) == (len(SIZES) - 4, len(SIZES) - 2, 2, True)


@pytest.mark.parametrize("seed", range(6))
def test_split_sizes_holds_out_one_of_each_pair_and_keeps_the_ends(seed):
    s = fit.Series("all_reduce", 2, SIZES, tuple(range(1, len(SIZES) + 1)), "ring")
    fitted, held = fit.split_sizes(s, seed)
    assert set(fitted.nbytes) | set(held.nbytes) == set(SIZES) and not set(fitted.nbytes) & set(held.nbytes)
    assert {SIZES[0], SIZES[-1]} <= set(fitted.nbytes) and len(held.nbytes) == (len(SIZES) - 1) // 2
    inner = SIZES[1:-1]
    for i in range(0, len(inner) - 1, 2):
        assert len({inner[i], inner[i + 1]} & set(held.nbytes)) == 1
    if seed == 0:
        assert held.nbytes == SIZES[1::2]


def test_random_splits_differ_and_repeat():
    s = fit.Series("all_reduce", 2, SIZES, tuple(range(1, len(SIZES) + 1)), "ring")
    splits = {fit.split_sizes(s, seed)[1].nbytes for seed in range(5)}
    assert len(splits) >= 3 and fit.split_sizes(s, 3) == fit.split_sizes(s, 3)


def test_steepest_step_finds_where_bytes_get_dearer():
    t = [x / 8e9 if x <= 2**24 else x / 2e9 for x in SIZES]
    lo, hi, factor = fit.steepest_step(fit.Series("broadcast", 2, SIZES, tuple(t), "tree"))
    assert (lo, hi) == (2**24, 2**25) and factor == pytest.approx(4.0)
    with pytest.raises(ValueError, match="two or more"):
        fit.steepest_step(fit.Series("broadcast", 2, SIZES, tuple(t), "tree"), lo=2**26)


def _clamped_top():
    # Two top sizes whose secant has a negative intercept: 10 ms at 32 MiB, 30 ms at 64 MiB (2 ranks, ring).
    sizes = SIZES[:-2] + (2.0**25, 2.0**26)
    t = tuple(ring_time(x, 2, 5e-6, 1e-10) for x in SIZES[:-2]) + (1e-2, 3e-2)
    s = fit.Series("all_reduce", 2, sizes, t, "ring")
    pw = fit.PiecewiseFit((2**24 * 1.41,), (fit.fit_joint([s.subset(hi=2**24)]), fit.fit_joint([s.subset(lo=2**25)])))
    return s, pw


def test_a_two_size_regime_whose_alpha_is_clamped_misses_both_points_and_is_graded():
    s, pw = _clamped_top()
    assert pw.high.alpha == 0.0                       # the constraint was active
    low, high = fit.regime_errors(pw, s, lo=2**12)
    assert high.fitted == 2 and high.clamped and not high.exact and high.graded
    # alpha = 0, relative least squares on 1.5 v - 1 and v - 1: v = 10/13, errors +2/13 and -3/13, worked by hand
    assert math.isclose(high.worst, 3 / 13, rel_tol=1e-6) and high.worst_at == 2.0**26
    assert not low.clamped and not low.exact


def test_a_two_size_regime_with_a_positive_intercept_is_exact():
    t = tuple(ring_time(x, 2, 5e-6, 1e-10) for x in SIZES)
    s = fit.Series("all_reduce", 2, SIZES, t, "ring")
    pw = fit.PiecewiseFit((2**24 * 1.41,), (fit.fit_joint([s.subset(hi=2**24)]), fit.fit_joint([s.subset(lo=2**25)])))
    high = fit.regime_errors(pw, s)[-1]
    assert high.exact and not high.clamped and not high.graded and high.own_worst < fit.EXACT_TOLERANCE


def test_every_upward_half_rate_crossing_is_found_and_the_first_matches_measured_half_rate():
    # rates 0.25, 0.67, 0.25, 0.91 GB/s against half of 1 GB/s: up, down, up again (2 ranks, ring: b = M)
    s = fit.Series("all_reduce", 2, (1e4, 1e5, 1e6, 1e7), (4e-5, 1.5e-4, 4e-3, 1.1e-2), "ring")
    m = fit.AlphaBeta(1e-5, 1e-9)
    crossings = fit.half_rate_crossings(m, s)
    assert crossings == [(1e4, 1e5), (1e6, 1e7)] and crossings[0] == fit.measured_half_rate(m, s)
    assert fit.half_rate_crossings(fit.AlphaBeta(1e-5, 0.0), s) == []


def test_a_steepest_step_made_by_one_timing_is_told_from_one_the_series_keeps():
    from commlib.lab import explain

    sizes = tuple(2.0**k for k in range(20, 27))                       # 1 MiB to 64 MiB
    kept = fit.Series("all_reduce", 2, sizes, tuple(x * (1e-9 if x < 2**22 else 2e-9) for x in sizes))
    step = fit.steepest_step(kept, lo=2**20)
    assert step[:2] == (2.0**21, 2.0**22) and step[2] == pytest.approx(2.0)
    assert fit.step_holds(kept, step, lo=2**20)
    assert "suspect" not in explain.step_load_note(step, [], holds=fit.step_holds(kept, step, lo=2**20))
    # one slow timing at 4 MiB: the same step, but the cost per byte falls back after it
    spike = fit.Series("all_reduce", 2, sizes, tuple(x * (2e-9 if x == 2**22 else 1e-9) for x in sizes))
    step = fit.steepest_step(spike, lo=2**20)
    assert step[:2] == (2.0**21, 2.0**22) and not fit.step_holds(spike, step, lo=2**20)
    note = explain.step_load_note(step, [2**22], holds=False)
    assert note.startswith("The timing at 4 MiB fails a load check") and "The step is suspect" in note
    # a step that only half holds (the cost per byte stays 1.3 times up after a 2-times step): below sqrt(2)
    half = fit.Series("all_reduce", 2, sizes, tuple(x * {2**22: 2e-9}.get(x, 1.3e-9 if x > 2**22 else 1e-9)
                                                   for x in sizes))
    assert not fit.step_holds(half, fit.steepest_step(half, lo=2**20), lo=2**20)
    assert fit.step_holds(half, fit.steepest_step(half, lo=2**20), lo=2**20, keep=0.3)
    with pytest.raises(ValueError, match="keep"):
        fit.step_holds(kept, step, keep=0.0)
    with pytest.raises(ValueError, match="step"):
        fit.step_holds(kept, (2.0**30, 2.0**31, 2.0), lo=2**20)


def test_price_drops_names_every_size_where_a_bigger_message_is_priced_cheaper():
    # The stored run's calculator fits: on a fine ladder of sizes the price falls only at the sizes price_drops
    # names (a crossover or an MPICH switch), and it names only falls.
    from commlib.experiments import lab as lab_runs
    from commlib.lab import plan, runner

    two = plan.stored()["two"]
    series = runner.least_loaded_series(two)
    fits = lab_runs.lab_fits(series, [runner.to_series(two, sweep=k) for k in range(runner.sweeps_of(two))])
    ladder = 2.0 ** np.arange(10, 26.5, 1 / 64)
    for s, m in zip(series, fits.by_size):
        for n in (2, 4, 8, 16):
            drops = fit.price_drops(m, s.op, n, s.algorithm)
            assert all(d.after < d.before and d.ratio < 1 for d in drops)
            prices = [m.time(s.op, x, n, s.algorithm) for x in ladder]
            for x0, x1, p0, p1 in zip(ladder, ladder[1:], prices, prices[1:]):
                if p1 < p0:  # a fall between two neighbouring sizes must straddle a named drop
                    assert any(x0 < d.nbytes <= x1 for d in drops), (s.op, n, x0, x1)
    # the one the reader found: reduce-scatter across its cut between 256 KiB and 512 KiB, on every n the
    # calculator accepts, and nothing else on any of them
    from commlib.lab import explain
    from commlib.views import lab as lab_views

    rs = dict(zip((s.op for s in series), fits.by_size))["reduce_scatter"]
    ranks = lab_views.CALC_RANKS
    drops = {n: fit.price_drops(rs, "reduce_scatter", n, "mpich") for n in ranks}
    assert all(len(d) == 1 for d in drops.values())
    assert all(fit.price_drops(m, s.op, n, s.algorithm) == () for s, m in zip(series, fits.by_size)
               if s.op != "reduce_scatter" for n in ranks)
    # the calculator's sentence spans every n it accepts: the range of the ratios and the n where it is lowest
    ratios = {n: d[0].ratio for n, d in drops.items()}
    words = lab_views.price_drop_words(series, list(fits.by_size), ranks, what="Its regimes")
    lowest = min(ratios.values())
    assert f"on {ranks[0]} to {ranks[-1]} ranks" in words
    assert "on every number of ranks the calculator accepts," in lab_views.price_drop_words(
        series, list(fits.by_size), ranks, what="Its regimes", every="the calculator accepts")
    assert f"to {explain.figures(lowest)} to {explain.figures(max(ratios.values()))} of the price" in words
    named = words.split("(the lowest on ")[1].split(" ranks)")[0].replace(" and ", ", ").split(", ")
    assert named == [str(n) for n in ranks if explain.figures(ratios[n]) == explain.figures(lowest)]
    # deeper away from the powers of two: there MPICH's reduce-scatter is a ring, more steps at the lower regime's alpha
    assert min(ratios[n] for n in ranks if n & (n - 1)) < min(ratios[n] for n in ranks if not n & (n - 1))
