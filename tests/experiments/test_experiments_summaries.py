"""Tests for commlib.experiments.sgd.summaries: tail means and run ends computed from runs."""

from __future__ import annotations

import numpy as np
import pytest

from commlib.experiments.sgd import summaries


def _run(label, k, t, loss, updates=100):
    """A stand-in for a SimResult: only what run_ends reads."""
    from types import SimpleNamespace

    return label, SimpleNamespace(k=k, updates=updates, eval_times=np.asarray(t, float),
                                  losses=np.asarray(loss, float))


def _run_with(t, values, last=None):
    from types import SimpleNamespace

    t = np.asarray(t, float)
    times = np.array([*t, t[-1] if last is None else last])
    return SimpleNamespace(times=times, eval_times=t, losses=np.asarray(values, float),
                           errors=np.asarray(values, float) / 10)


def test_tail_mean_averages_the_last_quarter_of_the_wall_clock():
    # evaluations at uneven times; the run ends at 40 s, so the last quarter is t > 30 s: values 7 and 9
    run = _run_with([1, 5, 12, 29, 30, 31, 40], [100, 100, 100, 100, 100, 7, 9])
    assert summaries.tail_mean(run) == pytest.approx(8.0)
    assert summaries.tail_mean(run, metric="errors") == pytest.approx(0.8)
    assert summaries.tail_mean(run, window=0.3) == pytest.approx((100 + 100 + 7 + 9) / 4)   # t > 28 s
    assert summaries.tail_mean(run, end=50.0, window=0.3) == pytest.approx(9.0)           # t > 35 s
    with pytest.raises(ValueError, match="window"):
        summaries.tail_mean(run, window=0.0)
    with pytest.raises(ValueError, match="metric"):
        summaries.tail_mean(run, metric="accuracy")
    with pytest.raises(ValueError, match="widen window"):
        summaries.tail_mean(run, end=100.0, window=0.1)


def test_run_ends_on_a_clean_line():
    # loss = 1 - 0.001 t on t = 5, 10, ..., 400: the last quarter (t > 300) holds t = 305..400
    t = np.arange(5.0, 401.0, 5.0)
    label, r = _run("line", 4, t, 1.0 - 1e-3 * t)
    (end,) = summaries.run_ends(dict([(label, r)]), budget=400.0)
    tail = t[t > 300]
    level = 1.0 - 1e-3 * tail.mean()
    assert end.level == pytest.approx(level)
    assert end.fall == pytest.approx(1e-3 * 100.0 / level)       # slope x window length / level
    assert end.descending and end.t_stat < -1e6                  # exact line: only rounding noise


def test_run_ends_tells_noise_and_small_drifts_from_descent():
    rng = np.random.default_rng(0)
    t = np.arange(5.0, 401.0, 5.0)
    runs = dict([
        _run("noisy plateau", 1, t, 0.7 + 0.05 * rng.standard_normal(t.size)),
        _run("tiny drift", 8, t, 0.5 - 1e-5 * t),                 # 0.2 % over the window: below min_fall
        _run("steady fall", 16, t, 0.6 - 2e-4 * t + 1e-3 * rng.standard_normal(t.size)),
    ])
    ends = {e.label: e for e in summaries.run_ends(runs, budget=400.0)}
    assert not ends["noisy plateau"].descending
    assert abs(ends["noisy plateau"].t_stat) < 3
    assert not ends["tiny drift"].descending and ends["tiny drift"].fall < 0.01
    assert ends["steady fall"].descending
    # a stricter threshold turns the steady fall (about 2e-4 x 100 / 0.53 = 3.8 %) into a plateau
    assert not {e.label: e for e in summaries.run_ends(runs, 400.0, min_fall=0.05)}["steady fall"].descending


def test_run_ends_rejects_bad_input():
    t = np.arange(5.0, 401.0, 5.0)
    runs = dict([_run("a", 1, t, np.ones_like(t))])
    with pytest.raises(ValueError, match="window"):
        summaries.run_ends(runs, 400.0, window=0.0)
    with pytest.raises(ValueError, match="budget"):
        summaries.run_ends(runs, -1.0)
    with pytest.raises(ValueError, match="at least 3"):
        summaries.run_ends(dict([_run("short", 1, [10.0, 399.0], [1.0, 1.0])]), 400.0)
