"""Views for chapters 4 and 5: SGD protocols, stragglers, staleness, scaling, and overlap with backprop.

Everything drawn here is computed by :mod:`commlib.sgd`, :mod:`commlib.training`,
:mod:`commlib.scaling` and :mod:`commlib.overlap`; this module only lays it out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from .. import cost, hardware, overlap, scaling, sgd, training
from ..units import check_count, check_nonnegative, check_positive, format_time
from .animation import render_png, sweep_html, to_html
from .calculator import Calculator, dropdown, integer, make_calculator, number
from .plots import COLORS, MARKERS, PALETTE, color, figure
from .tables import markdown_table

__all__ = [
    "PROTOCOL_LABELS",
    "protocol_timeline_figure",
    "protocol_timeline_animation",
    "runtime_ratio_rows",
    "runtime_ratio_table",
    "runtime_ratio_figure",
    "RUNTIME_RATIO_LAWS",
    "STRAGGLER_LAW",
    "tail_mean",
    "RunEnd",
    "run_ends",
    "k_tradeoff_phrases",
    "staleness_histogram",
    "equal_time_runs",
    "error_vs_time_figure",
    "k_tradeoff_figure",
    "scaling_figure",
    "scaling_table",
    "large_batch_runs",
    "large_batch_figure",
    "sgd_calculator",
    "sgd_sweep",
    "staleness_vs_nk",
    "staleness_vs_nk_figure",
    "lr_rule_runs",
    "lr_rule_figure",
    "downpour_runs",
    "downpour_figure",
    "overlap_figure",
    "bucket_sweep_figure",
    "overlap_calculator",
    "bucket_table",
    "overlap_sweep",
]

#: Human-readable names of the six protocols of :data:`commlib.sgd.PROTOCOLS`.
PROTOCOL_LABELS = {
    "sync": "fully synchronous",
    "k_sync": "K-sync",
    "k_batch_sync": "K-batch-sync",
    "async": "asynchronous",
    "k_async": "K-async",
    "k_batch_async": "K-batch-async",
}


def _k_label(protocol: str, workers: int, k: int | None) -> str:
    if protocol == "sync":
        return f"{PROTOCOL_LABELS[protocol]} (K = P = {workers})"
    if protocol == "async":
        return f"{PROTOCOL_LABELS[protocol]} (K = 1)"
    return f"{PROTOCOL_LABELS[protocol]} (K = {k})"


# ----------------------------------------------------------------------------- job timelines

_TIMELINE = [("sync", None), ("k_sync", "k"), ("k_batch_sync", "k"), ("async", None), ("k_async", "k"),
             ("k_batch_async", "k")]


def _timeline_data(workers: int, k: int, compute: str, updates: int, seed: int, params: dict,
                   t_max: float | None):
    """Jobs and update times of every protocol from :func:`commlib.sgd.simulate` (``record_jobs=True``).

    The picture ends at ``t_max``, by default the ``updates``-th fully
    synchronous update; every other protocol is simulated for enough updates
    to reach it (a shorter run is a prefix of a longer one with the same seed).
    """
    sync = sgd.simulate("sync", workers, compute=compute, updates=updates, seed=seed, record_jobs=True, **params)
    t_end = float(sync.times[-1]) if t_max is None else check_positive("t_max", t_max)
    data = []
    for protocol, uses_k in _TIMELINE:
        kk = k if uses_k else None
        n = updates
        while True:
            r = sgd.simulate(protocol, workers, k=kk, compute=compute, updates=n, seed=seed, record_jobs=True,
                             **params)
            if r.times[-1] >= t_end:
                break
            n *= 2
        data.append((protocol, kk, r.jobs, r.times.tolist()))
    return data, t_end


_FRESH, _STALE, _CANCELLED, _RUNNING = COLORS[0], COLORS[1], "#D9D9D9", PALETTE["sky"]

#: Font size (pt) of the timeline's ticks, titles and legend: the figure is 7.2 in wide, drawn at
#: 100 dpi, so 10 pt is about 14 px on a 720 px image, still over 10 px if the page shrinks it to ~520 px.
_TIMELINE_FONT = 10.0


def _count(n: int, noun: str) -> str:
    """``"1 update"``, ``"3 updates"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class _TimelinePainter:
    """Draws the six timelines once, then moves the clock: each frame only resizes and recolours bars."""

    def __init__(self, axes, data, workers: int, t_max: float):
        self.axes, self.data, self.workers, self.t_max = axes, data, workers, t_max
        self.bars, self.lines = [], []
        for ax, (_protocol, _k, jobs, times) in zip(axes, data):
            bars = []
            for j in jobs:
                if j.start >= t_max:
                    continue
                rect = Rectangle((j.start, j.worker - 0.36), 0.0, 0.72, edgecolor="white", linewidth=1.6)
                ax.add_patch(rect)
                bars.append((j, rect))
            lines = [ax.axvline(t, color=COLORS[7], lw=1.0) for t in times if t <= t_max]
            self.bars.append(bars)
            self.lines.append(lines)
            ax.set_ylim(workers - 0.4, -0.6)
            ax.set_xlim(0, t_max)
            ax.set_yticks(range(workers), [f"L{w + 1}" for w in range(workers)], fontsize=_TIMELINE_FONT)
            ax.tick_params(axis="x", labelsize=_TIMELINE_FONT)
            ax.grid(False)
        for ax in axes[2::3]:       # the bottom panel of each column
            ax.set_xlabel("wall-clock time (mean compute times)", fontsize=_TIMELINE_FONT)

    def show(self, now: float) -> None:
        for ax, (protocol, kk, _jobs, times), bars, lines in zip(self.axes, self.data, self.bars, self.lines):
            for j, rect in bars:
                width = max(0.0, min(j.end, now, self.t_max) - j.start)
                rect.set_width(width)
                finished = j.status != "unfinished" and j.end <= now
                if not finished:
                    face, hatch = _RUNNING, None
                elif j.status == "cancelled":
                    face, hatch = _CANCELLED, "///"
                else:
                    face, hatch = (_STALE if j.staleness > 0 else _FRESH), None
                rect.set_facecolor(face)
                rect.set_hatch(hatch)
            for line in lines:
                line.set_visible(line.get_xdata()[0] <= now)
            done = sum(1 for t in times if t <= min(now, self.t_max))
            ax.set_title(f"{_k_label(protocol, self.workers, kk)}: {_count(done, 'update')}",
                         fontsize=_TIMELINE_FONT + 0.5, loc="left")


def _timeline_legend(fig) -> None:
    handles = [Patch(facecolor=_FRESH, label="gradient applied (fresh)"),
               Patch(facecolor=_STALE, label="gradient applied (stale)"),
               Patch(facecolor=_CANCELLED, hatch="///", label="cancelled"),
               Patch(facecolor=_RUNNING, label="computing"),
               Line2D([0], [0], color=COLORS[7], lw=1.2, label="PS update")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=_TIMELINE_FONT, frameon=False,
               columnspacing=1.2, handlelength=1.6)


def _timeline_canvas(workers, k, compute, updates, seed, t_max, compute_params):
    """Six panels in two columns (synchronous protocols left, asynchronous right), created in the
    order of ``_TIMELINE`` so that ``fig.get_axes()`` lists them protocol by protocol."""
    data, t_max = _timeline_data(workers, k, compute, updates, seed, compute_params, t_max)
    fig, first = figure(7.2, 2.6 + 1.1 * max(workers, 3))
    first.remove()
    axes = []
    for i in range(len(_TIMELINE)):
        col, row = divmod(i, 3)
        axes.append(fig.add_subplot(3, 2, 2 * row + col + 1, sharex=axes[0] if axes else None))
    for i, ax in enumerate(axes):
        if i % 3 != 2:
            ax.tick_params(labelbottom=False)
    painter = _TimelinePainter(axes, data, workers, t_max)
    painter.show(t_max)
    _timeline_legend(fig)
    fig.tight_layout(rect=(0, 0.09, 1, 1), h_pad=0.8, w_pad=1.5)
    return fig, painter, t_max


def protocol_timeline_figure(workers: int = 4, k: int = 2, compute: str = "exponential", updates: int = 3,
                             seed: int = 3, t_max: float | None = None, **compute_params):
    """All six protocols on one time axis: each learner's jobs, applied, stale or cancelled, and the PS updates.

    The bars are the jobs :func:`commlib.sgd.simulate` records with
    ``record_jobs=True`` (same seed, so the same compute times in every panel).
    The picture ends at ``t_max`` (s), by default the ``updates``-th fully
    synchronous update; jobs still running there are drawn as computing.
    """
    fig, _, _ = _timeline_canvas(workers, k, compute, updates, seed, t_max, compute_params)
    return fig


def protocol_timeline_animation(workers: int = 4, k: int = 2, compute: str = "exponential", updates: int = 3,
                                seed: int = 3, frames: int = 10, t_max: float | None = None, dpi: int = 100,
                                **compute_params):
    """The same six timelines growing with time, as an offline player (:func:`commlib.views.animation.to_html`)."""
    frames = check_count("frames", frames, 2)
    fig, painter, t_max = _timeline_canvas(workers, k, compute, updates, seed, t_max, compute_params)
    moments = np.linspace(t_max / frames, t_max, frames)

    def draw(i):
        painter.show(float(moments[i]))
        return []

    anim = FuncAnimation(fig, draw, frames=frames, interval=500, blit=False)
    labels = [f"t = {m:.2f} mean compute times" for m in moments]
    alt = (f"Six timelines of {workers} learners, one per SGD protocol, synchronous protocols in the left "
           "column and asynchronous ones in the right, filling in as wall-clock time advances")
    return to_html(anim, labels=labels, dpi=dpi, alt=alt)


# ----------------------------------------------------------------------------- the runtime theorem


def runtime_ratio_rows(Ps=(2, 4, 8, 16, 32, 64), trials: int = 4000, seed: int = 0,
                       distribution: str = "exponential", **params) -> list[dict]:
    """For each P: the closed form P E[X_P:P]/E[X], its Monte Carlo estimate, their gap, and P ln P."""
    rows = []
    for P in Ps:
        exact = sgd.runtime_ratio(P, distribution, **params)
        mc = sgd.monte_carlo_runtime_ratio(P, distribution, trials=trials, seed=seed, **params)
        rows.append({"P": P, "closed form": exact, "Monte Carlo": mc, "relative gap": mc / exact - 1,
                     "P ln P": P * math.log(P)})
    return rows


def runtime_ratio_table(rows: list[dict]):
    """The rows of :func:`runtime_ratio_rows` as a Markdown table."""
    body = [[r["P"], f"{r['closed form']:.2f}", f"{r['Monte Carlo']:.2f}", f"{100 * r['relative gap']:+.2f} %",
             f"{r['P ln P']:.2f}"] for r in rows]
    return markdown_table(["P learners", "P E[X_P:P]/E[X] (closed form)", "measured E[T_sync]/E[T_async]",
                           "gap", "P ln P"], body)


#: The compute-time laws of :func:`runtime_ratio_figure` and their parameters (seconds, 1/s).
RUNTIME_RATIO_LAWS = {
    "exponential": {"rate": 1.0},
    "shifted_exponential": {"shift": 1.0, "rate": 1.0},
    "pareto": {"shape": 2.5, "scale": 1.0},
}


#: One slow node: learner 0's exponential compute times are ``slowdown`` times longer, persistently
#: (:func:`commlib.sgd.simulate` with ``compute="straggler"``). Not i.i.d., so no closed form: simulated only.
STRAGGLER_LAW = {"base": "exponential", "slowdown": 4.0}


def runtime_ratio_figure(Ps=(1, 2, 4, 8, 16, 32, 64), trials: int = 2000, seed: int = 0,
                         straggler: dict | None = STRAGGLER_LAW):
    """Closed-form ratio against P for the laws of :data:`RUNTIME_RATIO_LAWS`, Monte Carlo points on top, P ln P for scale.

    With ``straggler`` (parameters of the ``"straggler"`` law, by default
    :data:`STRAGGLER_LAW`) the figure adds the simulated ratio with one
    persistently slow learner, as markers joined by a thin line; ``None`` leaves it out.
    """
    fig, ax = figure(6.4, 5.0)
    Ps = list(Ps)
    grid = np.arange(1, max(Ps) + 1)
    for i, (law, params) in enumerate(RUNTIME_RATIO_LAWS.items()):
        ax.plot(grid, [sgd.runtime_ratio(int(P), law, **params) for P in grid], color=color(i),
                label=f"{law.replace('_', ' ')}: closed form")
        mc = [sgd.monte_carlo_runtime_ratio(P, law, trials=trials, seed=seed, **params) for P in Ps]
        ax.plot(Ps, mc, ls="none", marker=MARKERS[i], color=color(i), label=f"{law.replace('_', ' ')}: simulated")
    if straggler is not None:
        i = len(RUNTIME_RATIO_LAWS)
        mc = [sgd.monte_carlo_runtime_ratio(P, "straggler", trials=trials, seed=seed, **straggler) for P in Ps]
        ax.plot(Ps, mc, ls="-", lw=0.8, marker=MARKERS[i], color=color(i),
                label=f"one learner {straggler.get('slowdown', 4.0):g}x slower: simulated")
    ax.plot(grid, grid, color=COLORS[7], ls=":", lw=1, label="P (no straggling)")
    ax.plot(grid[1:], grid[1:] * np.log(grid[1:]), color=COLORS[7], ls="--", lw=1, label="P ln P")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("learners P")
    ax.set_ylabel("E[T_sync] / E[T_async]")
    # below the axes: inside, the legend would cover the simulated points
    ax.legend(fontsize=8.5, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- staleness and error curves


def tail_mean(run, window: float = 0.25, metric: str = "losses", end: float | None = None) -> float:
    """Mean of a run's evaluations (``"losses"`` in nats or ``"errors"`` as a share) over the last
    ``window`` share of its wall clock.

    The wall clock runs from 0 to ``end`` (seconds; by default the time of
    the run's last update); the evaluations kept are those at times after
    ``(1 - window) * end``. This is what the prose means by "over the last
    quarter of the run" (``window = 0.25``).

    >>> from types import SimpleNamespace
    >>> run = SimpleNamespace(times=np.arange(1.0, 9.0), eval_times=np.arange(1.0, 9.0),
    ...                       losses=np.arange(1.0, 9.0), errors=None)
    >>> tail_mean(run)            # times 7 and 8 lie after 0.75 * 8 = 6
    7.5
    """
    window = float(window)
    if not 0.0 < window <= 1.0:
        raise ValueError(f"window must lie in (0, 1], got {window!r}")
    if metric not in ("losses", "errors"):
        raise ValueError(f"metric must be 'losses' or 'errors', got {metric!r}")
    values = getattr(run, metric)
    if values is None:
        raise ValueError(f"the run has no {metric}: simulate it with a problem")
    t = np.asarray(run.eval_times, float)
    end = float(run.times[-1]) if end is None else check_positive("end", end)
    keep = t > (1.0 - window) * end
    if not keep.any():
        raise ValueError(f"no evaluation lies in the last {window:g} of the run; widen window")
    return float(np.asarray(values, float)[keep].mean())


def staleness_histogram(results, ax=None):
    """Histogram of applied gradients' staleness for one or more :class:`~commlib.sgd.SimResult`."""
    if not isinstance(results, dict):
        results = {_k_label(results.protocol, results.workers, results.k): results}
    own = ax is None
    if own:
        fig, ax = figure(6.4, 3.2)
    top = max(int(r.staleness.max()) for r in results.values())
    bins = np.arange(-0.5, top + 1.5)
    for i, (label, r) in enumerate(results.items()):
        ax.hist(r.staleness, bins=bins, density=True, histtype="step", lw=2, color=color(i),
                label=f"{label}: mean {r.staleness.mean():.2f}")
    every = np.concatenate([r.staleness for r in results.values()])
    ax.set_xlim(-1, max(5.0, float(np.percentile(every, 99.5)) + 1))
    ax.set_xlabel("staleness (PS updates between read and apply)")
    ax.set_ylabel("share of gradients")
    ax.legend(fontsize=8)
    if own:
        fig.tight_layout()
        return fig
    return ax


def equal_time_runs(configs, workers: int, budget: float, problem=None, seed: int = 0, points: int = 80,
                    **kwargs) -> dict:
    """Run each ``(protocol, k)`` in ``configs`` for about ``budget`` seconds of simulated wall clock.

    The number of updates is ``budget`` / the expected time per update
    (:func:`commlib.sgd.expected_update_time`, exponential compute of rate 1),
    so slow protocols get few updates and fast ones many: the comparison is
    at equal wall-clock time, not at equal update count.
    """
    budget = check_positive("budget", budget)
    problem = training.make_problem(seed=0) if problem is None else problem
    out = {}
    for protocol, k in configs:
        u = max(1, int(budget / sgd.expected_update_time(protocol, workers, k)))
        out[_k_label(protocol, workers, k)] = sgd.simulate(protocol, workers, k=k, updates=u, seed=seed,
                                                             problem=problem, eval_every=max(1, u // points),
                                                             **kwargs)
    return out


def _smooth(y: np.ndarray, width: int) -> np.ndarray:
    if width <= 1 or y.size < width:
        return y
    kernel = np.ones(width) / width
    return np.convolve(np.pad(y, (width // 2, width - 1 - width // 2), mode="edge"), kernel, mode="valid")


def error_vs_time_figure(runs: dict, t_max: float | None = None, smooth: int = 1):
    """Test error and training loss against wall-clock time for the runs of :func:`equal_time_runs`."""
    fig, (ax1, ax2) = figure(7.2, 3.4, ncols=2)
    for i, (label, r) in enumerate(runs.items()):
        t = np.concatenate([[0.0], r.eval_times])
        err = np.concatenate([[r.initial_error], _smooth(r.errors, smooth)])
        loss = np.concatenate([[r.initial_loss], _smooth(r.losses, smooth)])
        ls = ["-", "--", "-", "-.", ":"][i % 5]
        ax1.plot(t, 100 * err, color=color(i), ls=ls, lw=1.6, label=label)
        ax2.plot(t, loss, color=color(i), ls=ls, lw=1.6, label=label)
    for ax in (ax1, ax2):
        ax.set_xlabel("wall-clock time (mean compute times)")
        if t_max:
            ax.set_xlim(0, t_max)
    ax1.set_ylabel("test error (%)")
    ax2.set_ylabel("training loss (nats)")
    ymin = min(np.nanmin(r.losses) for r in runs.values())
    ax2.set_ylim(ymin * 0.9, ymin * 2.4)
    emin = min(np.nanmin(r.errors) for r in runs.values())
    ax1.set_ylim(100 * emin * 0.85, 100 * emin * 2.2)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def k_tradeoff_figure(workers: int = 16, ks=(1, 2, 4, 8, 16), budget: float = 400.0, protocol: str = "k_async",
                      seed: int = 0, **kwargs):
    """Training loss against wall-clock time for several K (K = 1 asynchronous, K = ``workers`` fully synchronous).

    Returns the figure and the runs; :func:`run_ends` and
    :func:`k_tradeoff_phrases` describe how each run ends, from the runs
    themselves.
    """
    configs = [(protocol if 1 < K < workers else ("async" if K == 1 else "sync"), None if K in (1, workers) else K)
               for K in ks]
    runs = equal_time_runs(configs, workers, budget, seed=seed, **kwargs)
    fig, ax = figure(6.4, 3.6)
    for i, (label, r) in enumerate(runs.items()):
        ax.plot(np.concatenate([[0.0], r.eval_times]), np.concatenate([[r.initial_loss], r.losses]),
                color=color(i), lw=1.5, label=label)
    ymin = min(np.nanmin(r.losses) for r in runs.values())
    ax.set_ylim(ymin * 0.9, ymin * 2.4)
    ax.set_xlabel("wall-clock time (mean compute times)")
    ax.set_ylabel("training loss (nats)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig, runs


@dataclass(frozen=True)
class RunEnd:
    """How one training run ends within its wall-clock budget (losses in nats)."""

    label: str
    k: int              #: gradients (or learners) per update; ``workers`` for fully synchronous
    updates: int        #: PS updates made within the budget
    level: float        #: mean training loss over the final window (nats)
    fall: float         #: fall of the least-squares line across the window, as a share of ``level`` (> 0: falling)
    t_stat: float       #: slope divided by its standard error (negative: falling)
    descending: bool    #: ``fall >= min_fall`` and ``t_stat <= -z``: still falling, beyond its noise
    window: float       #: the final window, as a share of the budget


def run_ends(runs: dict, budget: float, window: float = 0.25, min_fall: float = 0.01, z: float = 2.0) -> list[RunEnd]:
    r"""Summarise how each run of :func:`equal_time_runs` ends, so prose can follow the run instead of guessing.

    Over the evaluations in the last ``window`` share of ``budget``
    (wall-clock seconds) the level is the mean loss; a least-squares line
    :math:`\ell(t) = a + s t` gives the fall :math:`-s\,w\,\text{budget}/\text{level}`
    across the window and the t-statistic :math:`s/\mathrm{SE}(s)`, with
    :math:`\mathrm{SE}(s)^2 = \frac{\sum r_i^2/(m-2)}{\sum (t_i - \bar t)^2}`
    for ``m`` points and residuals :math:`r_i`. A run is *still descending*
    when it falls by at least ``min_fall`` of its level across the window and
    the slope is at least ``z`` standard errors below zero: a noisy plateau
    is not mistaken for descent, nor a flat tail for a plateau.
    """
    budget = check_positive("budget", budget)
    window = float(window)
    if not 0.0 < window <= 1.0:
        raise ValueError(f"window must lie in (0, 1], got {window!r}")
    min_fall = check_nonnegative("min_fall", min_fall)
    z = check_nonnegative("z", z)
    out = []
    for label, r in runs.items():
        if r.losses is None:
            raise ValueError(f"run {label!r} has no losses: simulate it with a problem")
        t, loss = np.asarray(r.eval_times, float), np.asarray(r.losses, float)
        keep = t > (1.0 - window) * budget
        if keep.sum() < 3:
            raise ValueError(f"run {label!r} has {int(keep.sum())} evaluations in the last window; need at least 3 "
                             "(evaluate more often or widen window)")
        t, loss = t[keep], loss[keep]
        level = float(loss.mean())
        dt = t - t.mean()
        slope = float(np.sum(dt * (loss - level)) / np.sum(dt * dt))
        resid = loss - (level + slope * dt)
        se = math.sqrt(float(np.sum(resid * resid)) / (t.size - 2) / float(np.sum(dt * dt)))
        t_stat = slope / se if se > 0 else (-math.inf if slope < 0 else (math.inf if slope > 0 else 0.0))
        fall = -slope * window * budget / level
        out.append(RunEnd(label=label, k=int(r.k), updates=int(r.updates), level=level, fall=fall, t_stat=t_stat,
                          descending=bool(fall >= min_fall and t_stat <= -z), window=window))
    return out


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def k_tradeoff_phrases(ends: list[RunEnd], workers: int, min_fall: float = 0.01) -> dict[str, str]:
    """Markdown phrases describing the ends of a K trade-off, computed from :func:`run_ends`.

    * ``"ranking"``: the runs from the lowest final level to the highest,
      e.g. "K = 8 (0.548 nats), then K = 4 (0.563 nats) and K = 1 (0.730 nats)";
    * ``"best"``: the K with the lowest final level, e.g. "K = 8";
    * ``"sync_trend"``: what the fully synchronous run (K = ``workers``)
      is doing at the end: "is still descending: ..." or "has levelled off: ...".
    """
    workers = check_count("workers", workers)
    if not ends:
        raise ValueError("ends must hold at least one RunEnd")
    order = sorted(ends, key=lambda e: e.level)
    items = [f"$K = {e.k}$ ({e.level:.3f} nats)" for e in order]
    ranking = items[0] if len(items) == 1 else items[0] + ", then " + _and(items[1:])
    phrases = {"ranking": ranking, "best": f"$K = {order[0].k}$"}
    sync = [e for e in ends if e.k == workers]
    if sync:
        e = sync[0]
        span = "quarter" if e.window == 0.25 else f"{100 * e.window:.0f} %"
        if e.descending:
            phrases["sync_trend"] = (f"is still descending: its fitted loss falls by "
                                     f"{100 * e.fall:.1f} % across the last {span} of the budget, so a longer budget can change "
                                     f"the order")
        else:
            phrases["sync_trend"] = (f"has levelled off: its fitted loss changes by {100 * abs(e.fall):.1f} % across "
                                     f"the last {span} of the budget, less than {100 * min_fall:.0f} % or within its noise")
    return phrases


# ----------------------------------------------------------------------------- scaling metrics and large batches


def scaling_figure(model: str = "resnet50", link: str = "eth_10g", ns=(1, 2, 4, 8, 16, 32, 64),
                   t_fast: float = 0.1, slowdown: float = 3.0, batch: int = 32):
    """Scaling efficiency and throughput against workers, for a fast GPU and one ``slowdown`` times slower."""
    item = hardware.link(link)
    fig, (ax1, ax2) = figure(7.2, 3.2, ncols=2)
    for i, (label, t) in enumerate([("fast GPU", t_fast), (f"GPU {slowdown:g}x slower", t_fast * slowdown)]):
        ms = [scaling.ring_weak_scaling(model, n, item.bandwidth, t, batch, latency=item.latency) for n in ns]
        ax1.plot(ns, [100 * m.efficiency for m in ms], marker=MARKERS[i], color=color(i), label=label)
        ax2.plot(ns, [m.throughput_many for m in ms], marker=MARKERS[i], color=color(i), label=label)
    ax2.plot(ns, [n * batch / t_fast for n in ns], color=COLORS[7], ls=":", lw=1, label="fast GPU, perfect scaling")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("GPUs n")
    ax1.set_ylabel("scaling efficiency (%)")
    ax1.set_ylim(0, 105)
    ax2.set_yscale("log")
    ax2.set_ylabel("throughput (images/s)")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=7)
    fig.suptitle(f"{hardware.model(model).name}, ring all-reduce over {item.name}, {batch} images per GPU",
                 fontsize=9)
    fig.tight_layout()
    return fig


def scaling_table(metrics: dict):
    """A Markdown table of :class:`commlib.scaling.ScalingMetrics` by label, units in the headers."""
    first = next(iter(metrics.values()))
    rows = [[label, f"{1e3 * m.t_one:.0f}", f"{1e3 * m.t_many:.1f}", f"{m.throughput_many:,.0f}", f"{m.speedup:.2f}",
             f"{100 * m.efficiency:.1f} %", f"{1e3 * m.overhead:.1f}"] for label, m in metrics.items()]
    return markdown_table(["GPU", "T(1) (ms)", f"T({first.n}) (ms)", "throughput (images/s)", "speedup",
                           "scaling efficiency", "overhead (ms)"], rows)


def large_batch_runs(problem=None, base_batch: int = 8, base_lr: float = 0.1, k: int = 16, epochs: float = 4.0,
                     warmup_epochs: float = 0.5, seed: int = 0) -> dict:
    """Small batch, and ``k`` times larger batch without scaling, with the linear rule, with the rule and warm-up."""
    problem = training.make_problem(seed=0) if problem is None else problem
    k = check_count("k", k, 1)
    big = base_batch * k
    small_steps = max(1, int(epochs * problem.n_train / base_batch))
    big_steps = max(1, int(epochs * problem.n_train / big))
    warm = int(warmup_epochs * problem.n_train / big)
    return {
        f"batch {base_batch}, rate {base_lr:g}": training.train(problem, base_lr, base_batch, small_steps, seed=seed,
                                                                eval_every=max(1, small_steps // 100)),
        f"batch {big}, rate {base_lr:g} (not scaled)": training.train(problem, base_lr, big, big_steps, seed=seed),
        f"batch {big}, rate {scaling.linear_scaling_lr(base_lr, base_batch, big):g} (linear rule)":
            training.train(problem, base_lr, big, big_steps, seed=seed, base_batch_size=base_batch),
        f"batch {big}, linear rule + {warm}-step warm-up":
            training.train(problem, base_lr, big, big_steps, seed=seed, base_batch_size=base_batch,
                           warmup_steps=warm),
    }


def large_batch_figure(runs: dict):
    """Training loss against epochs for the runs of :func:`large_batch_runs`."""
    fig, ax = figure(6.4, 3.6)
    styles = ["-", "--", "-", ":"]
    widths = [5.0, 1.8, 1.6, 2.2]
    for i, (label, r) in enumerate(runs.items()):
        ax.plot(r.epochs, r.losses, color=color(i), ls=styles[i % 4], lw=widths[i % 4], label=label,
                alpha=0.6 if i == 0 else 1.0)
    ax.set_xlabel("epochs (passes over the training set)")
    ax.set_ylabel("training loss (nats)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- calculator and sweep

_DISTS = ["exponential", "shifted_exponential", "pareto", "deterministic"]


def _sim_summary(protocol, workers, k, compute, slowdown, updates, seed, problem, lr, batch_size,
                 gradients: int = 6000):
    workers = check_count("workers", workers, 1)
    if protocol in ("sync", "async"):
        k = None
    else:
        k = check_count("K", k, 1, workers)
    slowdown = check_positive("straggler factor", slowdown)
    if slowdown < 1:
        raise ValueError(f"straggler factor must be >= 1 (1 = no straggler), got {slowdown}")
    if slowdown > 1:
        params = {"base": compute, "slowdown": slowdown}
        law = "straggler"
    else:
        params, law = {}, compute
    timing = sgd.simulate(protocol, workers, k=k, compute=law, updates=updates, seed=seed, **params)
    # the same seed gives the same schedule; train for as many updates as fit in the same number of gradients
    u_train = max(1, min(updates, gradients // max(1, timing.k)))
    trained = sgd.simulate(protocol, workers, k=k, compute=law, updates=u_train, seed=seed, problem=problem, lr=lr,
                           batch_size=batch_size, eval_every=max(1, u_train // 60), **params)
    return timing, trained


def _calc_figure(timing, trained):
    fig, (ax1, ax2) = figure(7.2, 2.8, ncols=2)
    staleness_histogram({"staleness": timing}, ax=ax1)
    ax1.get_legend().remove()
    ax1.set_title(f"mean staleness {timing.staleness.mean():.2f}", fontsize=9)
    t = np.concatenate([[0.0], trained.eval_times])
    ax2.plot(t, 100 * np.concatenate([[trained.initial_error], trained.errors]), color=COLORS[0])
    ax2.set_xlabel("wall-clock time (mean compute times)")
    ax2.set_ylabel("test error (%)")
    ax2.set_title(f"{trained.updates} updates", fontsize=9)
    fig.tight_layout()
    return fig


def sgd_calculator(protocol: str = "k_async", workers: int = 8, k: int = 2, compute: str = "exponential",
                   slowdown: float = 1.0, updates: int = 2000, seed: int = 0):
    """Protocol, P, K, compute-time law and straggler factor -> time per update, staleness, error curve.

    Returns a box holding the calculator (text results) and a picture
    (staleness histogram and test error against wall-clock time) that
    redraws with it.
    """
    problem = training.make_problem(seed=0)
    picture = widgets.Image(format="png")

    def compute_results(protocol, workers, k, compute, slowdown):
        timing, trained = _sim_summary(protocol, workers, k, compute, slowdown, updates, seed, problem, 0.5, 8)
        import matplotlib.pyplot as plt

        fig = _calc_figure(timing, trained)
        picture.value = render_png(fig)
        plt.close(fig)
        return {
            "K used": f"{timing.k}",
            "mean time per update": f"{timing.mean_time_per_update:.4f} mean compute times",
            "updates per mean compute time": f"{timing.throughput:.3f}",
            "gradients per update": f"{timing.k}",
            "mean staleness": f"{timing.staleness.mean():.3f} updates",
            "largest staleness": f"{int(timing.staleness.max())} updates",
            "test error at the end of the curve": f"{100 * trained.errors[-1]:.1f} %",
        }

    calc = make_calculator(
        compute_results,
        {
            "protocol": dropdown([(PROTOCOL_LABELS[p], p) for p in sgd.PROTOCOLS], protocol, "protocol"),
            "workers": integer(workers, 1, 64, "learners P"),
            "k": integer(k, 1, 64, "K"),
            "compute": dropdown(_DISTS, compute, "compute-time law"),
            "slowdown": number(slowdown, "straggler factor", minimum=1.0),
        },
        title="Synchronous or asynchronous?",
        note=f"Fully synchronous and asynchronous SGD ignore K. Straggler factor: one learner's compute times "
             f"are that many times longer, at every step (1 = no straggler). Times in units of the mean "
             f"compute time of a learner; {updates} updates per timing run; error from training the "
             "chapter's softmax-regression problem (learning rate 0.5, batch 8).",
    )
    box = widgets.VBox([calc, picture])
    box.calculator = calc
    return box


def sgd_sweep(protocol: str = "k_async", workers: int = 16, ks=(1, 2, 4, 8, 16), updates: int = 1000, seed: int = 0,
              gradients: int = 3000):
    """A precomputed scrubber over K: staleness histogram and error curve for each value.

    Each K gets ``updates`` timing updates and a training run of about ``gradients`` gradients.
    """
    problem = training.make_problem(seed=0)

    def draw(K):
        proto = "async" if K == 1 else ("sync" if K == workers else protocol)
        timing, trained = _sim_summary(proto, workers, K, "exponential", 1.0, updates, seed, problem, 0.5, 8,
                                       gradients)
        fig = _calc_figure(timing, trained)
        fig.suptitle(f"{_k_label(proto, workers, K)}, P = {workers}: {timing.mean_time_per_update:.3f} "
                     "mean compute times per update", fontsize=9)
        fig.tight_layout()
        return fig

    return sweep_html(draw, list(ks), label="K = {}", alt=f"Staleness histogram and test error curve of "
                                                          f"{protocol} SGD with {workers} learners for each K")


# ----------------------------------------------------------------------------- chapter 5: staleness


def staleness_vs_nk(workers: int = 16, ks=(1, 2, 4, 8, 16), updates: int = 20000, seed: int = 0) -> list[dict]:
    """Measured mean staleness of K-batch-async and K-async against N/K and the exact means."""
    rows = []
    for K in ks:
        row = {"K": K, "N/K": workers / K}
        for protocol in ("k_batch_async", "k_async"):
            r = sgd.simulate(protocol, workers, k=K, updates=updates, seed=seed)
            row[protocol] = float(r.staleness.mean())
            row[protocol + " exact"] = sgd.expected_staleness(protocol, workers, K)
        rows.append(row)
    return rows


def staleness_vs_nk_figure(rows: list[dict], workers: int):
    """Measured mean staleness against N/K, with the exact means as lines."""
    fig, ax = figure(6.4, 3.6)
    x = np.array([r["N/K"] for r in rows])
    grid = np.linspace(x.min(), x.max(), 50)
    ax.plot(grid, grid, color=COLORS[7], ls=":", lw=1, label="N/K (Gupta et al.)")
    for i, protocol in enumerate(("k_batch_async", "k_async")):
        ax.plot(x, [r[protocol + " exact"] for r in rows], color=color(i), lw=1.2,
                label=f"{PROTOCOL_LABELS[protocol]}: exact mean")
        ax.plot(x, [r[protocol] for r in rows], ls="none", marker=MARKERS[i], color=color(i),
                label=f"{PROTOCOL_LABELS[protocol]}: simulated")
    ax.set_xlabel(f"N/K (N = {workers} learners)")
    ax.set_ylabel("mean staleness (updates)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def lr_rule_runs(workers: int = 16, updates: int = 2500, lr: float = 0.5, lr_c: float = 0.02, seed: int = 0,
                 batch_size: int = 8, protocol: str = "async", k: int | None = None) -> dict:
    """Async SGD on the chapter's problem with the three learning-rate rules (and sync for reference)."""
    problem = training.make_problem(seed=0)
    every = max(1, updates // 80)
    out = {}
    for rule, label in [("constant", "constant rate"), ("staleness", "rate / staleness"),
                        ("distance", "min(C/||w_j - w_tau||^2, eta_max)")]:
        out[label] = sgd.simulate(protocol, workers, k=k, updates=updates, seed=seed, problem=problem, lr=lr,
                                  lr_rule=rule, lr_c=lr_c, batch_size=batch_size, eval_every=every)
    return out


def lr_rule_figure(runs: dict, smooth: int = 5):
    """Training loss and test error against wall-clock time for the runs of :func:`lr_rule_runs`."""
    return error_vs_time_figure(runs, smooth=smooth)


def downpour_runs(workers: int = 8, shards: int = 4, updates: int = 2500, lr_sgd: float = 0.5,
                  lr_adagrad: float = 0.5, comm_time: float = 0.1, seed: int = 0, batch_size: int = 8) -> dict:
    """Downpour SGD: async replicas over PS shards, plain SGD against per-shard Adagrad."""
    problem = training.make_problem(seed=0)
    every = max(1, updates // 80)

    def transfer(rng, w):
        return float(rng.exponential(comm_time))

    out = {}
    for opt, lr in (("sgd", lr_sgd), ("adagrad", lr_adagrad)):
        out[f"{shards} shards, {'Adagrad' if opt == 'adagrad' else 'SGD'} (rate {lr:g})"] = sgd.simulate(
            "async", workers, updates=updates, seed=seed, problem=problem, lr=lr, optimizer=opt, shards=shards,
            comm_time=transfer, batch_size=batch_size, eval_every=every)
    return out


def downpour_figure(runs: dict, smooth: int = 3):
    """Loss and error against wall-clock time for the runs of :func:`downpour_runs`."""
    return error_vs_time_figure(runs, smooth=smooth)


# ----------------------------------------------------------------------------- overlap with backprop (chapter 5)


def overlap_figure(result: overlap.OverlapResult, title: str = ""):
    """Gantt chart: backward compute per layer, the bucketed all-reduces, and the same step without overlap.

    Layers and the bucket that carries them share a colour, so a reader can
    see which gradients each all-reduce waits for. Times in milliseconds.
    """
    fig, ax = figure(7.2, 3.4)
    ms = 1e3
    bucket_of = {}
    for b in result.buckets:
        for name in b.layers:
            bucket_of[name] = b.index
    rows = {"backward\n(compute)": 2.0, "all-reduce\n(DDP buckets)": 1.0, "no overlap\n(one all-reduce)": 0.0}
    h = 0.6
    for layer, s, e in zip(result.layers, result.layer_start, result.layer_end):
        k = bucket_of[layer.name]
        ax.broken_barh([(s * ms, max((e - s) * ms, 1e-9))], (2.0 - h / 2, h), facecolors=_bucket_color(k),
                       edgecolor="white", linewidth=0.3)
    for b in result.buckets:
        ax.broken_barh([(b.start * ms, b.duration * ms)], (1.0 - h / 2, h), facecolors=_bucket_color(b.index),
                       edgecolor=COLORS[7], linewidth=0.6, hatch="//" if b.start >= result.t_backward else None)
    ax.broken_barh([(0, result.t_backward * ms)], (-h / 2, h), facecolors="#BBBBBB", edgecolor=COLORS[7],
                   linewidth=0.6)
    comm_alone = result.t_no_overlap - result.t_backward
    ax.broken_barh([(result.t_backward * ms, comm_alone * ms)], (-h / 2, h), facecolors="white",
                   edgecolor=COLORS[7], linewidth=0.6, hatch="//")
    ax.annotate(f"all-reduce {format_time(comm_alone)}", ((result.t_backward + comm_alone / 2) * ms, 0),
                ha="center", va="center", fontsize=8, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.axvline(result.t_backward * ms, color=COLORS[7], ls="--", lw=1)
    ax.annotate("backward ends", (result.t_backward * ms, 2.45), xytext=(4, 0), textcoords="offset points",
                fontsize=8, va="center")
    if result.exposed > 0:
        y = 1.0 + h / 2 + 0.1
        ax.annotate("", xy=(result.t_end * ms, y), xytext=(result.t_backward * ms, y),
                    arrowprops={"arrowstyle": "<->", "color": COLORS[7]})
        ax.annotate(f"exposed {format_time(result.exposed)}", (result.t_end * ms, y), xytext=(6, 0),
                    textcoords="offset points", ha="left", va="center", fontsize=8)
    ax.set_yticks(list(rows.values()), list(rows.keys()))
    ax.set_ylim(-0.6, 2.7)
    ax.set_xlim(0, max(result.t_no_overlap, result.t_end) * ms * 1.02)
    ax.set_xlabel("time from the start of backward (ms)")
    ax.grid(axis="y", visible=False)
    ax.set_title(title or f"{len(result.buckets)} buckets; {100 * result.hidden_fraction:.0f} % of the "
                          f"all-reduce time hides behind backward", fontsize=10)
    fig.tight_layout()
    return fig


def _bucket_color(k: int) -> str:
    # skip yellow (too pale for thin bars) and black
    return COLORS[:6][k % 6]


def bucket_sweep_figure(caps_mib, latencies=(0.0, 50e-6), **kwargs):
    """Step time after backward (exposed communication) against the bucket cap, for a few latencies.

    ``caps_mib`` are bucket caps in MiB (0 = one all-reduce per layer);
    other arguments go to :func:`commlib.overlap.overlap_timeline`.
    """
    fig, ax = figure(8.4, 3.6)
    caps = np.asarray(list(caps_mib), dtype=float)
    for i, alpha in enumerate(latencies):
        runs = overlap.bucket_sweep(caps * 2**20, latency=alpha, **kwargs)
        exposed = np.array([r.exposed for r in runs]) * 1e3
        ax.plot(caps[caps > 0], exposed[caps > 0], color=color(i), marker=MARKERS[i],
                label=f"latency α = {alpha * 1e6:g} µs")
        if np.any(caps == 0):
            ax.axhline(exposed[caps == 0][0], color=color(i), ls=":", lw=1,
                       label=f"one all-reduce per layer, α = {alpha * 1e6:g} µs")
        whole = runs[0].t_no_overlap - runs[0].t_backward
        ax.axhline(whole * 1e3, color=color(i), ls="--", lw=1,
                   label=f"no overlap: one all-reduce after backward, α = {alpha * 1e6:g} µs")
    ax.axvline(overlap.DDP_BUCKET_BYTES / 2**20, color=COLORS[7], lw=0.8)
    ax.annotate("DDP default 25 MiB", (overlap.DDP_BUCKET_BYTES / 2**20, ax.get_ylim()[1]), xytext=(4, -12),
                textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("bucket cap (MiB)")
    ax.set_ylabel("communication left after backward (ms)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def overlap_calculator(model: str = "resnet50", n: int = 16, link: str = "eth_25g", bucket_mib: float = 25.0,
                       tflops: float = 10.0, batch: int = 32) -> Calculator:
    """Model, ranks, link, bucket cap, achieved TFLOP/s, batch -> how much of the all-reduce hides."""

    def compute(model, n, link, bucket_mib, tflops, batch):
        check_nonnegative("bucket_mib", bucket_mib)
        item = hardware.link(link)
        t_fwd, t_bwd = overlap.step_compute_time(model, batch, check_positive("tflops", tflops) * 1e12)
        r = overlap.overlap_timeline(model, n=n, bandwidth=item.bandwidth, latency=item.latency, t_backward=t_bwd,
                                     bucket_bytes=bucket_mib * 2**20, t_forward=t_fwd)
        return {
            "forward + backward compute": format_time(t_fwd + t_bwd),
            "buckets (all-reduces)": f"{len(r.buckets)}",
            "all-reduce time, summed": format_time(r.comm_total),
            "hidden behind backward": f"{format_time(r.hidden)} ({100 * r.hidden_fraction:.1f} %)",
            "exposed after backward": format_time(r.exposed),
            "step time with overlap": format_time(r.iteration_time),
            "step time without overlap": format_time(r.iteration_time_no_overlap),
            "scaling efficiency with / without": f"{100 * (t_fwd + t_bwd) / r.iteration_time:.1f} % / "
                                                 f"{100 * (t_fwd + t_bwd) / r.iteration_time_no_overlap:.1f} %",
        }

    models = [(hardware.model(k).name, k) for k in overlap.LAYER_MODELS]
    links = [(item.name, key) for key, item in hardware.LINKS.items()]
    return make_calculator(
        compute,
        {
            "model": dropdown(models, model, "model"),
            "n": integer(n, 2, 1024, "ranks n"),
            "link": dropdown(links, link, "link"),
            "bucket_mib": number(bucket_mib, "bucket cap (MiB)", minimum=0.0),
            "tflops": number(tflops, "achieved TFLOP/s", minimum=0.001),
            "batch": integer(batch, 1, 4096, "batch per GPU"),
        },
        title="Overlap of all-reduce with backprop",
        note="Bandwidth per direction; 1 MiB = 2^20 B; bucket cap 0 = one all-reduce per layer; "
             "backward = 2 x forward; batch counts images (CNNs) or tokens (transformers).",
    )


def bucket_table(result: overlap.OverlapResult, n: int, bandwidth: float, latency: float = 0.0):
    """Each bucket's bytes and times, next to the ring formula 2(n-1)alpha + 2(n-1)/n m/B from commlib.cost."""
    rows = []
    for b in result.buckets:
        formula = cost.allreduce_time(b.nbytes, n, bandwidth, latency, "ring")
        rows.append([b.index, len(b.layers), f"{b.nbytes / 2**20:.2f}", f"{1e3 * b.ready:.2f}", f"{1e3 * b.start:.2f}",
                     f"{1e3 * b.end:.2f}", f"{1e3 * b.duration:.3f}", f"{1e3 * formula:.3f}"])
    return markdown_table(["bucket", "layers", "size (MiB)", "ready (ms)", "start (ms)", "end (ms)",
                           "all-reduce in the timeline (ms)", "ring formula (ms)"], rows)


def overlap_sweep(model: str = "resnet50", n: int = 16, links=("eth_10g", "eth_25g", "eth_100g", "ib_hdr", "nvlink2"),
                  tflops: float = 10.0, batch: int = 32):
    """A precomputed scrubber over links: the overlap timeline of ``model`` with DDP's default buckets on each."""
    t_fwd, t_bwd = overlap.step_compute_time(model, batch, check_positive("tflops", tflops) * 1e12)

    def draw(key):
        item = hardware.link(key)
        r = overlap.overlap_timeline(model, n=n, bandwidth=item.bandwidth, latency=item.latency, t_backward=t_bwd,
                                     t_forward=t_fwd)
        return overlap_figure(r, title=f"{item.name}: {len(r.buckets)} buckets, "
                                       f"{100 * r.hidden_fraction:.0f} % hidden, {format_time(r.exposed)} exposed")

    return sweep_html(draw, list(links), label=lambda key: hardware.link(key).name,
                      alt=f"Overlap timeline of {hardware.model(model).name} on {n} GPUs for each link")
