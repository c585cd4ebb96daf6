"""Tests for commlib.views.sgd.sync_async and commlib.experiments.sgd.sync_async (chapter 4).

The timeline draws the jobs commlib.sgd.simulate.simulate records (their consistency
with update times, contributors and staleness is tested in test_sgd.py);
figure tests check what the reader sees (bars, colours, labels, legend
entries) rather than pixels.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from commlib.experiments.sgd import (
    summaries,
    sync_async,  # noqa: E402
)
from commlib.sgd import simulate as sgd  # noqa: E402
from commlib.views.plots import PALETTE
from commlib.views.sgd import sync_async as sync_async_views  # noqa: E402

PROTOCOLS = [("sync", None), ("k_sync", 2), ("k_batch_sync", 3), ("async", None), ("k_async", 2),
             ("k_batch_async", 3)]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _timelines(**kwargs):
    """The runs a timeline figure draws (cached: several tests draw the same ones)."""
    key = tuple(sorted(kwargs.items()))
    if key not in _TIMELINES:
        _TIMELINES[key] = sync_async.protocol_timelines(**kwargs)
    return _TIMELINES[key]


_TIMELINES: dict = {}


def _bars(ax):
    """(learner, start, end, face colour) of every job bar of a timeline panel."""
    out = []
    for p in ax.patches:
        if isinstance(p, Rectangle):
            out.append((round(p.get_y() + p.get_height() / 2), p.get_x(), p.get_x() + p.get_width(),
                        to_hex(p.get_facecolor())))
    return out


def test_the_view_layer_uses_only_the_public_model_api():
    source = Path(sync_async_views.__file__).read_text(encoding="utf-8")
    assert "sgd._" not in source
    assert not hasattr(sync_async_views, "protocol_jobs")


@pytest.mark.parametrize("module", ["sync_async", "staleness"])
def test_the_views_run_no_experiment(module):
    """Figures take runs as input: no simulation, training or Monte Carlo run inside chapter 4's and 5's views
    (the calculator's computation, sgd_results, is a model-layer function and the only one it calls)."""
    source = (Path(sync_async_views.__file__).parent / f"{module}.py").read_text(encoding="utf-8")
    for call in ("simulate(", "monte_carlo", "training.", "sim_summary", "ring_weak_scaling", "make_problem",
                 "replay(", "schedule("):
        assert call not in source, (module, call)


@pytest.mark.parametrize("workers, k, seed, compute", [(4, 2, 3, "exponential"), (3, 2, 0, "exponential"),
                                                       (5, 3, 1, "pareto")])
def test_timeline_bars_are_the_simulated_jobs(workers, k, seed, compute):
    """Each panel draws exactly the recorded jobs begun before the right edge, each at its place."""
    fig = sync_async_views.protocol_timeline_figure(_timelines(workers=workers, k=k, seed=seed, compute=compute))
    axes = fig.get_axes()
    t_max = axes[0].get_xlim()[1]
    sync = sgd.simulate("sync", workers, compute=compute, updates=3, seed=seed)
    assert t_max == pytest.approx(sync.times[-1])            # the picture ends at the third sync update
    for ax, (protocol, kk) in zip(axes, [(p, None if p in ("sync", "async") else k) for p, _ in PROTOCOLS]):
        r = sgd.simulate(protocol, workers, k=kk, compute=compute, updates=400, seed=seed, record_jobs=True)
        expected = sorted((j.worker, j.start, min(j.end, t_max)) for j in r.jobs if j.start < t_max)
        drawn = sorted(b[:3] for b in _bars(ax))
        assert len(drawn) == len(expected)
        np.testing.assert_allclose(np.array(drawn), np.array(expected), rtol=0, atol=1e-12)
        done = int(np.sum(r.times <= t_max))
        assert ax.get_title(loc="left").endswith(f": {done} update" + ("" if done == 1 else "s"))


def test_timeline_colours_follow_the_protocols():
    """Synchronous panels: no stale bar; only K-sync and K-batch-sync cancel; asynchronous learners never idle."""
    fig = sync_async_views.protocol_timeline_figure(_timelines(workers=4, k=2, seed=3))
    axes = fig.get_axes()
    t_max = axes[0].get_xlim()[1]
    fresh, stale, cancelled = (to_hex(c) for c in (sync_async_views._FRESH, sync_async_views._STALE, sync_async_views._CANCELLED))
    for ax, (protocol, _) in zip(axes, PROTOCOLS):
        colours = {b[3] for b in _bars(ax)}
        if protocol in ("sync", "k_sync", "k_batch_sync"):
            assert stale not in colours
        else:
            assert stale in colours
        assert (cancelled in colours) == (protocol in ("k_sync", "k_batch_sync"))
        if protocol in ("async", "k_batch_async"):
            for w in range(4):   # each learner's bars tile [0, t_max]: no gap, none missing at the right edge
                mine = sorted((s, e) for ww, s, e, _ in _bars(ax) if ww == w)
                assert mine[0][0] == 0.0 and mine[-1][1] == pytest.approx(t_max)
                assert all(b[0] == pytest.approx(a[1]) for a, b in zip(mine, mine[1:]))


def test_timeline_with_a_later_right_edge_is_still_complete():
    fig = sync_async_views.protocol_timeline_figure(_timelines(workers=3, k=2, seed=0, t_max=12.0))
    ax = fig.get_axes()[3]    # asynchronous
    assert ax.get_xlim()[1] == 12.0
    for w in range(3):
        assert max(e for ww, _, e, _ in _bars(ax) if ww == w) == pytest.approx(12.0)


def test_timeline_frames_colour_a_bar_by_its_state_at_that_time():
    """Before the first update of a panel no bar is drawn applied; a pushed gradient waits in its own colour."""
    fig, painter = sync_async_views._timeline_canvas(_timelines(workers=4, k=2, seed=3))
    applied = {to_hex(sync_async_views._FRESH), to_hex(sync_async_views._STALE)}
    waiting = to_hex(sync_async_views._WAITING)
    for i, tl in enumerate(painter.timelines):
        now = 0.999 * tl.times[0]                  # just before the panel's first update
        painter.show(now)
        colours = {b[3] for b in _bars(fig.get_axes()[i])}
        assert not colours & applied, tl.protocol
        if any(j.status == "applied" and j.end <= now for j in tl.jobs):
            assert waiting in colours, tl.protocol
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "pushed, waiting (until applied)" in labels
    # its own hue from the book's palette, not a shade near the olive of a stale gradient
    assert sync_async_views._WAITING in PALETTE.values() and waiting not in applied


def test_timeline_animation_rejects_too_few_frames():
    with pytest.raises(ValueError, match="frames"):
        sync_async_views.protocol_timeline_animation(_timelines(workers=3, k=2, seed=0), frames=1)


def test_timeline_figure_has_six_panels_and_a_legend():
    fig = sync_async_views.protocol_timeline_figure(_timelines(workers=3, k=2, seed=0))
    axes = fig.get_axes()
    assert len(axes) == 6
    titles = [ax.get_title(loc="left") for ax in axes]
    assert titles[0].startswith("fully synchronous") and "K-batch-async" in titles[-1]
    # the synchronous panel stops at its third update (the picture's right edge)
    assert titles[0].endswith(": 3 updates")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "cancelled" in labels and "gradient applied (stale)" in labels


def test_timeline_titles_count_in_the_singular_for_one_update():
    """Early in the animation a panel has seen exactly one update: "1 update", never "1 updates"."""
    fig, painter = sync_async_views._timeline_canvas(_timelines(workers=4, k=2, seed=3))
    first_sync = painter.timelines[0].times[0]              # time of the first fully synchronous update
    painter.show(first_sync)
    title = fig.get_axes()[0].get_title(loc="left")
    assert title.endswith(": 1 update")
    assert not any(ax.get_title(loc="left").endswith(" 1 updates") for ax in fig.get_axes())


@pytest.mark.parametrize("workers", [3, 4, 6])
def test_timeline_text_is_readable_at_the_players_width(workers):
    """At the animation's dpi, shown at most 700 px wide, every tick label, title and legend entry is >= 10 px tall."""
    import inspect

    dpi = inspect.signature(sync_async_views.protocol_timeline_animation).parameters["dpi"].default
    fig = sync_async_views.protocol_timeline_figure(_timelines(workers=workers, k=2, seed=0))
    scale = min(1.0, 700 / (fig.get_figwidth() * dpi))
    texts = [t for ax in fig.get_axes() for t in (*ax.get_yticklabels(), *ax.get_xticklabels(), ax.title,
                                                  ax._left_title, ax.xaxis.label) if t.get_text()]
    texts += list(fig.legends[0].get_texts())
    assert len(texts) > 6 * workers
    for t in texts:
        assert t.get_fontsize() * dpi / 72 * scale >= 10.0, t.get_text()
    # protocol order is kept: synchronous ones in the left column, asynchronous in the right
    xs = [ax.get_position().x0 for ax in fig.get_axes()]
    assert max(xs[:3]) < min(xs[3:])


def test_timeline_animation_is_an_offline_player():
    html = sync_async_views.protocol_timeline_animation(_timelines(workers=3, k=2, seed=0), frames=3, dpi=30).data
    assert html.count('class="gotw-frame"') == 3
    assert "http" not in html.split("<script>")[0]     # no network resources


def test_runtime_ratio_rows_hold_the_closed_form():
    rows = sync_async.runtime_ratio_rows(Ps=(2, 8), trials=3000, seed=0)
    for r in rows:
        harmonic = sum(1 / i for i in range(1, r["P"] + 1))
        assert r["closed form"] == pytest.approx(r["P"] * harmonic)
        assert abs(r["relative gap"]) < 0.05
    table = sync_async_views.runtime_ratio_table(rows).data
    assert "n ln n" in table and table.count("\n") == 3


def test_equal_time_runs_share_the_wall_clock_budget():
    runs = sync_async.equal_time_runs([("sync", None), ("async", None)], workers=4, budget=40.0, seed=0)
    sync, asyn = runs.values()
    assert asyn.updates > 4 * sync.updates                      # async makes many more updates
    for r in runs.values():
        assert r.times[-1] == pytest.approx(40.0, rel=0.5)      # both ran about as long


def test_scaling_table_and_figure():
    from commlib.sgd import scaling

    m = scaling.ring_weak_scaling("resnet50", 4, 1.25e9, 0.1, 32)
    table = sync_async_views.scaling_table({"fast": m}).data
    assert "T(4) (ms)" in table and f"{100 * m.efficiency:.1f} %" in table
    curves = sync_async.weak_scaling_curves(ns=(1, 2, 4))
    fig = sync_async_views.scaling_figure(curves)
    left, right = fig.get_axes()
    fast_line = left.get_lines()[0]
    assert fast_line.get_ydata()[0] == pytest.approx(100.0)     # one GPU is 100 % efficient
    fast = curves.curves["fast GPU"]
    assert list(right.get_lines()[0].get_ydata()) == [m.throughput_many for m in fast]
    assert right.get_lines()[-1].get_label() == "fast GPU, perfect scaling"


def test_sgd_calculator_reports_time_and_staleness():
    box = sync_async_views.sgd_calculator(protocol="async", workers=4, k=1)
    calc = box.calculator
    assert calc.error is None
    # async: mean staleness about P - 1, time per update about 1/P
    assert float(calc.results["mean staleness"].split()[0]) == pytest.approx(3.0, abs=0.5)
    assert float(calc.results["mean time per update"].split()[0]) == pytest.approx(0.25, rel=0.3)
    calc.set(k=9, protocol="k_sync")
    assert calc.error is not None and "K" in calc.error


def test_large_batch_runs_use_the_linear_rule():
    runs = sync_async.large_batch_runs(k=4, epochs=1.0)
    labels = list(runs)
    assert "rate 0.4 (linear rule)" in labels[2]
    lrs = [r.lrs for r in runs.values()]
    assert lrs[1][-1] == pytest.approx(0.1) and lrs[2][-1] == pytest.approx(0.4)
    assert lrs[3][1] < lrs[3][-1] == pytest.approx(0.4)   # warm-up starts low and ends at the scaled rate


# ----------------------------------------------------------------------------- prose that follows the runs


def _run(label, k, t, loss, updates=100):
    """A stand-in for a SimResult: only what run_ends reads."""
    from types import SimpleNamespace

    return label, SimpleNamespace(k=k, updates=updates, eval_times=np.asarray(t, float),
                                  losses=np.asarray(loss, float))


def test_k_tradeoff_phrases_follow_the_ends():
    t = np.arange(5.0, 401.0, 5.0)
    runs = dict([
        _run("K = 1", 1, t, np.full(t.size, 0.73)),
        _run("K = 8", 8, t, np.full(t.size, 0.55)),
        _run("K = 16", 16, t, 0.65 - 2e-4 * t),                  # still falling, level 0.65 - 0.07 = 0.58
    ])
    ends = summaries.run_ends(runs, 400.0)
    ph = sync_async.k_tradeoff_phrases(ends, workers=16)
    assert ph["best"] == "$K = 8$"
    assert ph["ranking"].index("$K = 8$") < ph["ranking"].index("$K = 16$") < ph["ranking"].index("$K = 1$")
    assert "0.550 nats" in ph["ranking"] and "0.730 nats" in ph["ranking"]
    assert ph["sync_trend"].startswith("is still descending")
    flat = sync_async.k_tradeoff_phrases(summaries.run_ends(dict([_run("K = 16", 16, t, np.full(t.size, 0.5))]), 400.0), 16)
    assert flat["sync_trend"].startswith("has levelled off")
    with pytest.raises(ValueError, match="ends"):
        sync_async.k_tradeoff_phrases([], 16)


def test_chapter_k_tradeoff_prose_matches_its_own_runs():
    """The chapter's wording is computed from the runs it plots; check it against the raw losses."""
    runs = sync_async.k_tradeoff_runs(workers=16, ks=(1, 4, 16), budget=400.0, lr=0.5, batch_size=8)
    fig = sync_async_views.k_tradeoff_figure(runs)
    ends = summaries.run_ends(runs, 400.0)
    means = {r.k: float(r.losses[r.eval_times > 300].mean()) for r in runs.values()}
    best = min(means, key=means.get)
    assert sync_async.k_tradeoff_phrases(ends, 16)["best"] == f"$K = {best}$"
    lines = fig.get_axes()[0].get_lines()
    assert len(lines) == 3
    assert len({(ln.get_linestyle(), ln.get_marker()) for ln in lines}) == 3   # told apart without colour


def test_k_tradeoff_gives_each_k_async_line_its_own_shade():
    runs = sync_async.k_tradeoff_runs(workers=8, ks=(1, 2, 4, 8), budget=40.0, lr=0.5, batch_size=8)
    lines = sync_async_views.k_tradeoff_figure(runs).get_axes()[0].get_lines()
    colours = [to_hex(ln.get_color()) for ln in lines]
    assert len(set(colours)) == 4          # asynchronous, two K-async shades, fully synchronous


def test_runtime_ratio_laws_shifted_exponential_grows_slower_than_exponential_but_unbounded():
    """P(shift + H_P/rate)/(shift + 1/rate), with H_P summed here: below P H_P, yet its ratio/P keeps growing."""
    p = sync_async.RUNTIME_RATIO_LAWS["shifted_exponential"]
    shift, rate = p["shift"], p["rate"]
    prev = 0.0
    for P in (8, 64, 512, 4096):
        H = sum(1.0 / i for i in range(1, P + 1))
        expected = P * (shift + H / rate) / (shift + 1 / rate)
        got = sgd.runtime_ratio(P, "shifted_exponential", **p)
        assert got == pytest.approx(expected)
        assert got < sgd.runtime_ratio(P, "exponential", **sync_async.RUNTIME_RATIO_LAWS["exponential"])
        assert got / P > prev + 0.5                               # per-learner factor still climbing
        prev = got / P
    fig = sync_async_views.runtime_ratio_figure(sync_async.runtime_ratio_curves(Ps=(1, 2, 4), trials=200,
                                                                                straggler=None))
    assert len(fig.get_axes()[0].get_lines()) == 2 * len(sync_async.RUNTIME_RATIO_LAWS) + 2


def test_runtime_ratio_figure_adds_one_slow_node_by_simulation():
    """Two learners, one 4x slower (exponential, means 4 s and 1 s), worked out by hand:
    sync waits E[max(A, B)] = E[A] + E[B] - E[min(A, B)] = 4 + 1 - 1/(1/4 + 1) = 4.2 s;
    async applies gradients at 1/4 + 1 = 1.25 per second, 0.8 s each; the ratio is 5.25."""
    assert sync_async.STRAGGLER_LAW == {"base": "exponential", "slowdown": 4.0}
    assert sgd.monte_carlo_runtime_ratio(2, "straggler", trials=20000, seed=0,
                                         **sync_async.STRAGGLER_LAW) == pytest.approx(5.25, rel=0.03)
    fig = sync_async_views.runtime_ratio_figure(sync_async.runtime_ratio_curves(Ps=(1, 2, 4), trials=200))
    iid, straggler = fig.get_axes()                               # the slow node gets a panel of its own
    assert len(iid.get_lines()) == 2 * len(sync_async.RUNTIME_RATIO_LAWS) + 2
    lines = straggler.get_lines()
    assert len(lines) == 4                                        # i.i.d. exponential, the slow node, n, n ln n
    slow = next(ln for ln in lines if ln.get_label().startswith("one learner 4x slower"))
    assert list(slow.get_xdata()) == [1, 2, 4]
    y = slow.get_ydata()
    assert y[0] == pytest.approx(1.0, abs=0.05)                  # one learner: sync and async are the same
    assert y[1] == pytest.approx(5.25, rel=0.1)
    assert y[2] > sgd.runtime_ratio(4, "exponential")             # a slow node costs sync more than i.i.d. noise


def _fits(calc, description: int = 20, option: int = 28):
    """Control labels short enough to show whole: the description column is 11em (about 20 characters),
    a dropdown's box about 28, a checkbox's label about 28."""
    for name, control in calc.controls.items():
        limit = option if control.__class__.__name__ == "Checkbox" else description
        assert len(control.description) <= limit, (name, control.description)
        for label in getattr(control, "_options_labels", ()):
            assert len(label) <= option, (name, label)


def test_sgd_calculator_labels_fit():
    box = sync_async_views.sgd_calculator(protocol="async", workers=4, k=1)
    _fits(box.calculator)
    assert "ignore K" in box.calculator.note


def test_sgd_sweep_draws_one_frame_per_k():
    sweep = sync_async.k_sweep_runs(workers=4, ks=(1, 2, 4), updates=60, gradients=80)
    html = sync_async_views.sgd_sweep(sweep).data
    assert html.count('class="gotw-frame"') == 3
    assert "K = 2" in html and "K = 4" in html
    assert "training loss" in html


def test_calc_figure_rejects_an_unknown_metric():
    import pytest

    sweep = sync_async.k_sweep_runs(workers=4, ks=(1,), updates=60, gradients=80)
    p = sweep.points[0]
    with pytest.raises(ValueError, match="metric"):
        sync_async_views._calc_figure(p.timing, p.trained, metric="accuracy")


def test_race_k_and_sharpness_figures_draw_the_optimum_and_the_error_bars():
    from commlib.experiments.sgd import tuned_races

    race = tuned_races.race_runs(small=True)
    fig = sync_async_views.race_figure(race)
    axes = fig.get_axes()
    assert len(axes) == 3
    for ax in axes[:2]:
        assert any(line.get_ydata()[0] == pytest.approx(race.optimum["loss"]) for line in ax.get_lines())
    assert len(axes[2].containers) == len(race.errors)          # one error bar per protocol
    fig = sync_async_views.k_tradeoff_figure(tuned_races.k_tuned_runs(small=True), optimum=race.optimum["loss"])
    assert "optimum" in [t.get_text() for t in fig.get_axes()[0].get_legend().get_texts()][-1]
    d = {"warm-up": tuned_races.sharpness_along(128, warm=True)}
    assert len(sync_async_views.sharpness_figure(d).get_axes()[0].get_lines()) == 2


def test_update_time_table_names_each_laws_mean_compute_time():
    """The update-time table is in seconds; its headers give each law's mean, so that seconds can be turned into
    mean compute times (a fully synchronous update's seconds over its law's mean is the E[X_{n:n}]/E[X] the prose
    quotes)."""
    laws = {"exponential": {"rate": 0.25}, "shifted_exponential": {"shift": 1.0, "rate": 1.0}}
    rows = sync_async.update_time_rows(workers=4, k=2, laws=laws, updates=200, seed=0)
    means = sync_async.law_mean_times(laws)
    table = sync_async_views.update_time_table(rows, means=means)
    head = table.data.splitlines()[0]
    assert "| exponential (mean compute time 4 s): closed form (s)" in head
    assert "shifted exponential (mean compute time 2 s): simulated (s)" in head
    assert "mean compute time" not in sync_async_views.update_time_table(rows).data.splitlines()[0]
    sync = next(r for r in rows if r["key"] == "sync")
    for law, params in laws.items():
        ratio = sync[f"{law} closed"] / means[law]
        assert ratio == pytest.approx(sgd.expected_max(4, law, **params) / sgd.expected_value(law, **params))


def test_law_race_legend_names_the_rate_per_update():
    """The law-race figure's legend gives each protocol's rate per update (K times the table's rate per gradient),
    and says so, so that its numbers are not read as the table's."""
    from types import SimpleNamespace
    run = SimpleNamespace(eval_times=np.array([1.0, 2.0, 3.0]), losses=np.array([1.0, 0.8, 0.7]), initial_loss=2.0)
    fig = sync_async_views.law_loss_figure({"pareto": {"K-async (K = 4)": ((run, run), 0.72)}}, target=0.75)
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "K-async (K = 4), rate per update 0.72" in texts


def test_barrier_cost_table_has_one_row_per_law():
    rows = [{"law": "exponential", "what": "memoryless", "n16": 3.38, "wait16": 70.4, "n100": 5.19},
            {"law": "Pareto", "what": "power-law tail", "n16": 2.73, "wait16": 63.4, "n100": 5.64}]
    text = sync_async_views.barrier_cost_table(rows).data
    assert text.count("\n| ") == 4 and "| 3.38 | 70 | 5.19 |" in text and "power-law tail" in text


def test_keep_table_says_what_keeping_the_work_did_law_by_law():
    """One row a law and K: both protocols' seconds per update and the verdict in words."""
    rows = [sync_async.keep_or_cancel(law, 8, updates=500, seeds=(0, 1)) for law in ("exponential", "pareto_heavy")]
    lines = sync_async_views.keep_table(rows, {"exponential": "exp", "pareto_heavy": "heavy"}).data.splitlines()
    assert lines[0].startswith("| compute times | $K$ | K-async (s per update)") and len(lines) == 4
    words = {"pays": "faster", "level": "about as fast", "loses": "slower"}
    assert lines[2].startswith("| exp | 8 |") and lines[3].endswith(f"| {words[rows[1].verdict]} |")
