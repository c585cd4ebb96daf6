"""The fitted 1/beta held against the bus bandwidth measured at the largest size (fit.rate_check).

Synthetic measurements whose truth is known: one that follows a single alpha-beta line (the two
must agree), and three that part them, each by a different factor (a dearer top regime the line
averages away, an algorithm whose bytes differ from busbw's count, start-ups that still weigh at the
largest size). The check must flag each disagreement and name the factor that was planted.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from commlib.experiments import lab as lab_runs
from commlib.lab import explain, fit

SIZES = tuple(float(2**k) for k in range(10, 27))
SPREAD = 0.04        # quartiles 4 % either side of the median, about what a quiet run gives


def _series(op, n, algorithm, regimes, noise=0.0, seed=0):
    """Times from ``regimes`` ((up to bytes, AlphaBeta), ...), seeded log-normal noise, quartiles +-SPREAD."""
    rng = np.random.default_rng(seed)
    t = np.array([next(m for cut, m in regimes if x < cut).time(op, x, n, algorithm) for x in SIZES])
    t = t * np.exp(rng.normal(0.0, noise, t.size))
    return fit.Series(op, n, SIZES, tuple(t), algorithm, tuple(t * (1 - SPREAD)), tuple(t * (1 + SPREAD)))


def _line(s):
    return fit.fit_joint([s])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_measurement_that_follows_one_line_agrees_with_its_busbw(seed):
    s = _series("all_reduce", 2, "mpich", ((math.inf, fit.AlphaBeta(5e-6, 1 / 3e9)),), noise=0.02, seed=seed)
    c = fit.rate_check(_line(s), s, _line)
    assert not c.disagree
    assert c.fitted == pytest.approx(3e9, rel=0.05) and c.busbw == pytest.approx(3e9, rel=0.05)
    assert c.splits == 5 and c.fitted_range[0] <= c.fitted <= c.fitted_range[1]
    assert c.ratio == pytest.approx(c.counts * c.byte_share * c.miss, rel=1e-12)   # the factors are exact
    assert "agree within their spread" in explain.fit_busbw_sentence(c)
    assert explain.fit_busbw_flag(c) == "agree within their spread"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_dearer_top_regime_parts_the_line_from_busbw_and_the_fit_is_named(seed):
    # Above 16 MiB each byte costs three times as much: the line, fitted on relative error at all 17
    # sizes, keeps the cheaper slope, while busbw at 64 MiB reads the dearer one.
    regimes = ((2.0**24, fit.AlphaBeta(5e-6, 1 / 3e9)), (math.inf, fit.AlphaBeta(5e-6, 1 / 1e9)))
    s = _series("all_reduce", 2, "mpich", regimes, noise=0.02, seed=seed)
    c = fit.rate_check(_line(s), s, _line)
    assert c.disagree and c.cause == "fit"
    assert c.busbw < c.fitted_range[0]
    assert c.counts == pytest.approx(1.0) and c.byte_share > 0.99 and c.miss < 0.8
    assert c.local == pytest.approx(1e9, rel=0.1)                 # the rate between 32 and 64 MiB: the planted one
    assert c.ratio == pytest.approx(c.counts * c.byte_share * c.miss, rel=1e-12)
    words = explain.fit_busbw_sentence(c)
    assert "disagree by more than their spread" in words and "The model's miss parts them most" in words
    assert "a byte cost more than that average" in words
    assert explain.fit_busbw_flag(c).startswith("disagree: busbw is")


def test_an_algorithm_that_sends_more_than_busbw_counts_is_named():
    # MPICH's binomial-tree broadcast on four ranks sends 2M along its critical path; busbw counts M.
    s = _series("broadcast", 4, "mpich", ((math.inf, fit.AlphaBeta(10e-6, 1 / 4e9)),))
    c = fit.rate_check(_line(s), s, _line)
    assert c.disagree and c.cause == "counts" and c.counts == pytest.approx(0.5)
    assert c.fitted == pytest.approx(4e9, rel=1e-6) and c.busbw == pytest.approx(2e9, rel=1e-3)
    assert "The counts part them most" in explain.fit_busbw_sentence(c)
    assert "(tree)" in explain.fit_busbw_flag(c)


def test_start_ups_that_still_weigh_at_the_largest_size_are_named():
    s = _series("all_reduce", 2, "mpich", ((math.inf, fit.AlphaBeta(5e-3, 1 / 2e9)),))
    c = fit.rate_check(_line(s), s, _line)
    assert c.disagree and c.cause == "start-up"
    assert c.miss == pytest.approx(1.0, abs=1e-6) and c.byte_share < 0.8
    assert "The start-ups part them most" in explain.fit_busbw_sentence(c)


def test_rate_checks_of_the_chosen_fits_and_the_table_column():
    from commlib.views import lab as lab_views

    series = lab_runs.synthetic_two_rank()
    fits = lab_runs.lab_fits(series)
    checks = lab_runs.rate_checks(fits, series)
    lines = lab_runs.rate_checks(fits, series, chosen=False)
    assert len(checks) == len(lines) == len(series)
    assert [c.fitted for c in lines] == [m.bandwidth for m in fits.single]
    table = str(lab_views.rate_table(series, list(fits.chosen), list(fits.chosen), 5e9, checks=checks).data)
    assert "1/beta against busbw" in table
    with pytest.raises(ValueError, match="checks"):
        lab_views.rate_table(series, list(fits.chosen), list(fits.chosen), 5e9, checks=checks[:1])


def test_rate_check_rejects_bad_input():
    s = _series("all_reduce", 2, "mpich", ((math.inf, fit.AlphaBeta(5e-6, 1 / 3e9)),))
    with pytest.raises(ValueError, match="nbytes"):
        fit.rate_check(_line(s), s, nbytes=3.0)
    with pytest.raises(ValueError, match="nbytes"):
        fit.rate_check(_line(s), s, nbytes=SIZES[0])
    with pytest.raises(ValueError, match="series"):
        fit.rate_check(_line(s), "all_reduce")
