"""Views for chapter 4: SGD protocol timelines, the runtime theorem, error curves, scaling, the SGD calculator.

Everything drawn here is computed by :mod:`commlib.sgd.simulate`, :mod:`commlib.sgd.scaling`
and the experiments of :mod:`commlib.experiments.sgd.sync_async`; the figures, animations
and sweeps take those runs as input and only lay them out.
"""

from __future__ import annotations

import inspect

import ipywidgets as widgets
import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from ... import hardware
from ...experiments.sgd.summaries import PROTOCOL_LABELS
from ...experiments.sgd.summaries import PROTOCOL_LABELS as _PROTOCOL_LABELS
from ...experiments.sgd.summaries import protocol_label as _k_label
from ...experiments.sgd.sync_async import KSweep, ProtocolTimelines, RuntimeRatioCurves, WeakScalingCurves
from ...sgd import simulate as sgd
from ...sgd.calculator_model import RATE_PER_GRADIENT, calculator_problem
from ...sgd.calculators import STRAGGLER_ENTRY, sgd_results
from ...units import check_count
from ..animation import sweep_html, to_html
from ..calculator import dropdown, integer, make_calculator, number
from ..plots import COLORS, MARKERS, PALETTE, color, figure
from ..tables import markdown_table

__all__ = [
    "PROTOCOL_LABELS",
    "protocol_timeline_figure",
    "protocol_timeline_animation",
    "runtime_ratio_table",
    "runtime_ratio_figure",
    "update_time_table",
    "law_loss_figure",
    "staleness_histogram",
    "error_vs_time_figure",
    "k_tradeoff_figure",
    "race_figure",
    "sharpness_figure",
    "scaling_figure",
    "scaling_table",
    "large_batch_figure",
    "warmup_table",
    "warmup_range_table",
    "staleness_split_table",
    "shared_rate_table",
    "sgd_calculator",
    "sgd_sweep",
    "barrier_cost_table",
]


# ----------------------------------------------------------------------------- job timelines

#: Job states in the timelines: greys, olive and (pushed, waiting) sky blue. The panels name their protocols in
#: black, so inside this figure a colour names a job's state only.
_FRESH, _STALE, _CANCELLED, _RUNNING = "#4D4D4D", "#999933", "#E6E6E6", "#B3B3B3"
#: A gradient pushed but not yet applied (its update comes later): the palette's sky blue, dotted, a hue no other
#: state of this figure uses, so a fresh gradient waiting for its update never reads as stale (olive).
_WAITING = PALETTE["sky"]

#: Font size (pt) of the timeline's ticks, titles and legend: the figure is 7.2 in wide, drawn at
#: 100 dpi, so 10 pt is about 14 px on a 720 px image, still over 10 px if the page shrinks it to ~520 px.
_TIMELINE_FONT = 10.0


#: One colour per protocol in every training figure of the chapter, so a colour always means the same protocol.
_PROTOCOL_COLORS = {
    "fully synchronous": PALETTE["blue"],
    "K-sync": PALETTE["orange"],
    "K-batch-sync": PALETTE["purple"],
    "asynchronous": PALETTE["green"],
    "K-async": PALETTE["vermillion"],
    "K-batch-async": PALETTE["sky"],
}


def _protocol_color(label: str, i: int) -> str:
    """The colour of the protocol a label names (``"K-async (K = 4), rate 0.2"``: K-async's); else the i-th.

    K-async and K-batch-async with ``K = 1`` are asynchronous SGD, and take its colour.
    """
    name = label.split(" (")[0].split(",")[0]
    if name in ("K-async", "K-batch-async") and "(K = 1)" in label:
        name = "asynchronous"
    return _PROTOCOL_COLORS.get(name, color(i))


def _shade(colour: str, amount: float) -> str:
    """``colour`` mixed with white (``amount`` < 0) or black (``amount`` > 0), ``|amount|`` of the way: one hue in
    several lightnesses, for lines of one protocol that differ in a parameter.

    >>> _shade("#D55E00", 0.0), _shade("#D55E00", 1.0), _shade("#808080", -0.5)
    ('#d55e00', '#000000', '#c0c0c0')
    """
    from matplotlib.colors import to_hex, to_rgb

    if not -1.0 <= amount <= 1.0:
        raise ValueError(f"amount must lie between -1 and 1, got {amount}")
    rgb = np.array(to_rgb(colour))
    target = np.ones(3) if amount < 0 else np.zeros(3)
    return to_hex(rgb + abs(amount) * (target - rgb))


def _count(n: int, noun: str) -> str:
    """``"1 update"``, ``"3 updates"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class _TimelinePainter:
    """Draws the six timelines once, then moves the clock: each frame only resizes and recolours bars.

    A bar's colour is its job's state at the frame's time: computing, pushed and waiting for the update that
    applies it, applied (fresh or stale) from that update on, or cancelled."""

    def __init__(self, axes, timelines: ProtocolTimelines):
        self.axes, self.timelines = axes, timelines.timelines
        self.workers = workers = timelines.workers
        self.t_max = t_max = timelines.t_max
        self.bars, self.lines = [], []
        for ax, tl in zip(axes, self.timelines):
            bars = []
            for j in tl.jobs:
                if j.start >= t_max:
                    continue
                rect = Rectangle((j.start, j.worker - 0.36), 0.0, 0.72, edgecolor="white", linewidth=1.6)
                ax.add_patch(rect)
                bars.append((j, rect))
            lines = [ax.axvline(t, color=COLORS[7], lw=1.0) for t in tl.times if t <= t_max]
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
        for ax, tl, bars, lines in zip(self.axes, self.timelines, self.bars, self.lines):
            for j, rect in bars:
                width = max(0.0, min(j.end, now, self.t_max) - j.start)
                rect.set_width(width)
                # the state at ``now``, not the job's fate: a pushed gradient counts as applied only from its update on
                finished = j.status != "unfinished" and j.end <= now
                if not finished:
                    face, hatch = _RUNNING, None
                elif j.status == "cancelled":
                    face, hatch = _CANCELLED, "///"
                elif tl.times[j.update] > now:
                    face, hatch = _WAITING, "..."
                else:
                    face, hatch = (_STALE if j.staleness > 0 else _FRESH), None
                rect.set_facecolor(face)
                rect.set_hatch(hatch)
            for line in lines:
                line.set_visible(line.get_xdata()[0] <= now)
            done = sum(1 for t in tl.times if t <= min(now, self.t_max))
            ax.set_title(f"{_k_label(tl.protocol, self.workers, tl.k)}: {_count(done, 'update')}",
                         fontsize=_TIMELINE_FONT + 0.5, loc="left")


def _timeline_legend(fig) -> None:
    handles = [Patch(facecolor=_FRESH, label="gradient applied (fresh)"),
               Patch(facecolor=_STALE, label="gradient applied (stale)"),
               Patch(facecolor=_CANCELLED, hatch="///", label="cancelled"),
               Patch(facecolor=_RUNNING, label="computing"),
               Patch(facecolor=_WAITING, hatch="...", label="pushed, waiting (until applied)"),
               Patch(facecolor="white", edgecolor="0.6", label="idle (white)"),
               Line2D([0], [0], color=COLORS[7], lw=1.2, label="PS update")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=_TIMELINE_FONT, frameon=False,
               columnspacing=1.2, handlelength=1.6)


def _timeline_canvas(timelines: ProtocolTimelines):
    """Six panels in two columns (synchronous protocols left, asynchronous right), created in the
    order of ``timelines.timelines`` so that ``fig.get_axes()`` lists them protocol by protocol."""
    workers = timelines.workers
    fig, first = figure(7.2, 2.6 + 1.1 * max(workers, 3))
    first.remove()
    axes = []
    for i in range(len(timelines.timelines)):
        col, row = divmod(i, 3)
        axes.append(fig.add_subplot(3, 2, 2 * row + col + 1, sharex=axes[0] if axes else None))
    for i, ax in enumerate(axes):
        if i % 3 != 2:
            ax.tick_params(labelbottom=False)
    painter = _TimelinePainter(axes, timelines)
    painter.show(timelines.t_max)
    _timeline_legend(fig)
    fig.tight_layout(rect=(0, 0.09, 1, 1), h_pad=0.8, w_pad=1.5)
    return fig, painter


def protocol_timeline_figure(timelines: ProtocolTimelines):
    """All six protocols on one time axis: each learner's jobs, applied, stale or cancelled, and the PS updates.

    ``timelines`` come from :func:`commlib.experiments.sgd.sync_async.protocol_timelines`
    (the jobs :func:`commlib.sgd.simulate.simulate` records, same seed in every panel).
    The picture ends at ``timelines.t_max`` (s); jobs still running there are
    drawn as computing.
    """
    fig, _ = _timeline_canvas(timelines)
    return fig


def protocol_timeline_animation(timelines: ProtocolTimelines, frames: int = 10, dpi: int = 100):
    """The same six timelines growing with time, as an offline player (:func:`commlib.views.animation.to_html`)."""
    frames = check_count("frames", frames, 2)
    fig, painter = _timeline_canvas(timelines)
    t_max, workers = timelines.t_max, timelines.workers
    moments = np.linspace(t_max / frames, t_max, frames)

    def draw(i):
        painter.show(float(moments[i]))
        return []

    anim = FuncAnimation(fig, draw, frames=frames, interval=500, blit=False)
    labels = [f"t = {m:.2f} mean compute times" for m in moments]
    alt = (f"Six timelines of {workers} learners, one per SGD protocol, synchronous protocols in the left "
           "column and asynchronous ones in the right, filling in as wall-clock time advances")
    return to_html(anim, labels=labels, dpi=dpi, alt=alt)



def runtime_ratio_table(rows: list[dict]):
    """The rows of :func:`runtime_ratio_rows` as a Markdown table."""
    body = [[r["P"], f"{r['closed form']:.2f}", f"{r['Monte Carlo']:.2f}", f"{100 * r['relative gap']:+.2f} %",
             f"{r['P ln P']:.2f}"] for r in rows]
    return markdown_table(["n learners", "n E[X_n:n]/E[X] (closed form)", "measured E[T_sync]/E[T_async]",
                           "gap", "n ln n"], body)


#: The runtime-ratio figure's compute-time laws: black, told apart by line style (colours name protocols).
_LAW_STYLES = ("-", "-.", (0, (5, 1.5)))
#: The reference lines n and n ln n.
_REFERENCE_GREY = "#888888"


def barrier_cost_table(rows: list[dict]):
    """Markdown table of what a barrier costs under several compute-time laws.

    Each row: ``law`` (its name), ``what`` (the law in a few words), ``n16`` and ``n100``
    (:math:`\\mathbb{E}[X_{n:n}]/\\mathbb{E}[X]` at 16 and at 100 learners, mean compute times) and ``wait16``
    (the share of a 16-learner iteration that a learner spends waiting on average, %), all computed by
    :func:`commlib.sgd.simulate.expected_max`.
    """
    return markdown_table(
        ["compute-time law", "what it is", "iteration, n = 16 (mean compute times)", "waiting, n = 16 (%)",
         "iteration, n = 100 (mean compute times)"],
        [[r["law"], r["what"], f"{r['n16']:.2f}", f"{r['wait16']:.0f}", f"{r['n100']:.2f}"] for r in rows],
        caption="What the barrier costs: the expected slowest of n learners, over the mean compute time")


def runtime_ratio_figure(curves: RuntimeRatioCurves):
    """Closed-form ratio against n for each law, Monte Carlo points on top, n and n ln n for scale.

    ``curves`` come from :func:`commlib.experiments.sgd.sync_async.runtime_ratio_curves`. Left: the
    i.i.d. laws, lines the closed form and markers the simulation. When the curves hold a straggler (one
    persistently slow learner), a right panel sets its simulated ratio beside the i.i.d. exponential's, so
    no panel carries more than a handful of lines.
    """
    straggler = curves.straggler_simulated is not None
    fig, axes = figure(10.0 if straggler else 6.4, 4.0, ncols=2 if straggler else 1, sharey=straggler)
    axes = np.atleast_1d(axes)
    Ps = list(curves.Ps)
    grid = np.asarray(curves.grid)

    def references(ax):
        ax.plot(grid, grid, color=_REFERENCE_GREY, ls=":", lw=1, label="n (no straggling)")
        ax.plot(grid[1:], grid[1:] * np.log(grid[1:]), color=_REFERENCE_GREY, ls="--", lw=1, label="n ln n")

    # the chapter's colours name protocols; a compute-time law is told by its line style and marker, in black
    ax = axes[0]
    for i, law in enumerate(curves.laws):
        ls = _LAW_STYLES[i % len(_LAW_STYLES)]
        ax.plot(grid, list(curves.closed_form[law]), color=COLORS[7], ls=ls, lw=1.3, marker=MARKERS[i],
                markevery=[], label=law.replace("_", " "))
        ax.plot(Ps, list(curves.simulated[law]), ls="none", marker=MARKERS[i], color=COLORS[7], mfc="white")
    references(ax)
    ax.set_title("i.i.d. compute times: closed form (lines), simulated (markers)", fontsize=9)
    if straggler:
        ax = axes[1]
        laws = list(curves.laws)
        i = laws.index("exponential") if "exponential" in laws else 0
        ax.plot(grid, list(curves.closed_form[laws[i]]), color=COLORS[7], ls=_LAW_STYLES[i % len(_LAW_STYLES)],
                lw=1.3, label=f"{laws[i].replace('_', ' ')}, all alike: closed form")
        ax.plot(Ps, list(curves.straggler_simulated), ls="-", lw=0.8, marker=MARKERS[3], color=COLORS[7],
                label=f"one learner {curves.straggler.get('slowdown', 4.0):g}x slower: simulated")
        references(ax)
        ax.set_title("one persistently slow learner", fontsize=9)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("learners n")
        ax.legend(fontsize=8, loc="upper left")
    axes[0].set_ylabel("E[T_sync] / E[T_async]")
    fig.tight_layout()
    return fig


def _seconds(x: float) -> str:
    """A closed form to three decimals, or to four where four are exact, so 1/16 reads 0.0625, not 0.062.

    >>> _seconds(1 / 16), _seconds(1 / 3), _seconds(0.25)
    ('0.0625', '0.333', '0.250')
    """
    three = f"{x:.3f}"
    if abs(float(three) - x) > 1e-12 and abs(round(x, 4) - x) < 1e-12:
        return f"{x:.4f}"
    return three


def update_time_table(rows: list[dict], means: dict[str, float] | None = None):
    """The rows of :func:`~commlib.experiments.sgd.sync_async.update_time_rows` as a Markdown table.

    For each law: the closed form (a dash where none exists) and the simulated mean, in seconds per update.
    ``means``: each law's mean compute time (s), as
    :func:`~commlib.experiments.sgd.sync_async.law_mean_times` gives; where given, each law's header names it, so
    that a reader can turn seconds into mean compute times.
    """
    laws = [k[:-len(" closed")] for k in rows[0] if k.endswith(" closed")]
    head = ["protocol"]
    for law in laws:
        name = law.replace("_", " ")
        if means is not None:
            name += f" (mean compute time {means[law]:.3g} s)"
        head += [f"{name}: closed form (s)", f"{name}: simulated (s)"]
    body = []
    for r in rows:
        line = [r["protocol"]]
        for law in laws:
            c = r[f"{law} closed"]
            line += ["-" if c is None else _seconds(c), f"{r[f'{law} simulated']:.3f}"]
        body.append(line)
    return markdown_table(head, body)


def keep_table(rows: list, names: dict[str, str]):
    """The rows of :func:`~commlib.experiments.sgd.sync_async.keep_rows` as a Markdown table: for each law and
    ``K``, K-async's and K-sync's mean time per update over the seeds (s), K-sync's closed form, and what keeping the
    running work did (faster, about as fast, slower). ``names``: each law's name in the table."""
    words = {"pays": "faster", "level": "about as fast", "loses": "slower"}
    head = ["compute times", "$K$", "K-async (s per update)", "K-sync (s per update)", "K-sync, closed form (s)",
            "keeping the work"]
    body = [[names[r.law], str(r.k), f"{np.mean(r.keep):.3f}", f"{np.mean(r.cancel):.3f}", f"{r.cancel_closed:.3f}",
             words[r.verdict]] for r in rows]
    return markdown_table(head, body)


def _protocol_name(protocol: str) -> str:
    """A protocol's name for a sentence: "K-async", "asynchronous SGD"."""
    name = _PROTOCOL_LABELS.get(protocol, protocol)
    return name if name.startswith("K-") else f"{name} SGD"


def law_loss_figure(runs_by_law: dict, target: float | None = None, smooth: int = 3):
    """Training loss against wall-clock time, one panel per compute-time law, each protocol at its own best rate.

    ``runs_by_law``: ``{law: {label: (runs on every seed, rate)}}``, as
    :func:`~commlib.experiments.sgd.tuned_races.law_best_runs` gives. The first seed's run is drawn bold, the
    others thin, so the spread over the seeds shows; ``target`` (nats), the loss the race is to, dotted.
    """
    n = len(runs_by_law)
    fig, axes = figure(3.6 * n, 3.4, ncols=n)
    axes = np.atleast_1d(axes)
    for ax, (law, runs) in zip(axes, runs_by_law.items()):
        lows = []
        for i, (label, (seed_runs, rate)) in enumerate(runs.items()):
            for j, r in enumerate(seed_runs):
                t = np.concatenate([[0.0], r.eval_times])
                loss = np.concatenate([[r.initial_loss], _smooth(np.asarray(r.losses, float), smooth)])
                lows.append(np.nanmin(loss))
                if j == 0:
                    ax.plot(t, loss, color=_protocol_color(label, i), ls=["-", "--", "-.", ":"][i % 4],
                            marker=MARKERS[i % len(MARKERS)], markevery=max(1, t.size // 8), ms=4, lw=1.6,
                            label=f"{label}, rate per update {rate:g}", zorder=3)
                else:
                    ax.plot(t, loss, color=_protocol_color(label, i), lw=0.7, alpha=0.45, zorder=2)
        if target is not None:
            ax.axhline(target, color="0.3", ls=":", lw=1.2, label="target" if ax is axes[0] else None)
        ymin = min(lows)
        ax.set_ylim(ymin * 0.9, ymin * 2.0)
        ax.set_title(law.replace("_", " ") + " compute times", fontsize=9)
        ax.set_xlabel("wall-clock time (s)")
        ax.legend(fontsize=7)                     # each panel names its own best K and rate
    axes[0].set_ylabel("training loss (nats)")
    fig.tight_layout()
    return fig


def staleness_histogram(results, ax=None):
    """Histogram of applied gradients' staleness for one or more :class:`~commlib.sgd.simulate.SimResult`."""
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


def _optimum_line(ax, loss: float) -> None:
    ax.axhline(loss, color=COLORS[7], ls=(0, (1, 1)), lw=1.2, label=f"optimum ({loss:.3f} nats)")


def k_tradeoff_figure(runs: dict, optimum: float | None = None):
    """Training loss against wall-clock time for the runs of :func:`commlib.experiments.sgd.sync_async.k_tradeoff_runs`,
    or of :func:`commlib.experiments.sgd.tuned_races.k_tuned_runs` (``{label: (run, rate)}``: each K at its best
    rate, named in the legend). ``optimum``: the problem's lowest loss (nats), drawn as a dotted line."""
    fig, ax = figure(6.4, 3.6)
    labels = [f"{label}, rate {r[1]:g}" if isinstance(r, tuple) else label for label, r in runs.items()]
    # the K-async lines (1 < K < n) share K-async's hue, from light (small K) to dark (large K); dash and marker too
    shaded = [lab for lab in labels if _protocol_color(lab, 0) == _PROTOCOL_COLORS["K-async"]]
    for i, (label, r) in enumerate(zip(labels, runs.values())):
        if isinstance(r, tuple):
            r = r[0]
        c = _protocol_color(label, i)
        if label in shaded and len(shaded) > 1:
            c = _shade(c, -0.45 + 0.9 * shaded.index(label) / (len(shaded) - 1))
        ax.plot(np.concatenate([[0.0], r.eval_times]), np.concatenate([[r.initial_loss], r.losses]),
                color=c, lw=1.5, ls=["-", "--", "-.", ":", "-"][i % 5],
                marker=MARKERS[i % len(MARKERS)], ms=4, markevery=(i % 4, 6), label=label)
    if optimum is not None:
        _optimum_line(ax, optimum)
    ymin = min(np.nanmin(r[0].losses if isinstance(r, tuple) else r.losses) for r in runs.values())
    if optimum is not None:
        ymin = min(ymin, optimum)
    ax.set_ylim(ymin * 0.97, ymin * 1.5)
    ax.set_xlabel("wall-clock time (mean compute times)")
    ax.set_ylabel("training loss (nats)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def race_figure(race, smooth: int = 3):
    """The race of chapter 4 (:func:`commlib.experiments.sgd.tuned_races.race_runs`) in three panels.

    Left: training loss against wall-clock time, every protocol at the same rate per update. Middle: each at
    its own best rate on the finer grid (``race.fine_runs``, the first held-out seed; without them, its best on the
    coarse grid). Both with the problem's optimum dotted. Right: the test error each reaches
    at the rate of ``race.error_rates`` (its best on the finer grid; mean over the held-out seeds, over the last
    quarter of the budget), with error bars of its spread over the seeds
    (every model is scored on the same test samples, so the seeds, not one test set's sampling error, say what
    differs), and the optimum's test error dotted.
    """
    fig, (ax1, ax2, ax3) = figure(10.8, 3.6, ncols=3)
    opt = race.optimum
    fine = bool(race.fine_runs)
    best_runs, best_rates = (race.fine_runs, race.error_rates) if fine else (race.tuned, race.rates)
    for ax, runs, title in ((ax1, race.equal, f"every protocol at rate {race.shared_rate:g}"),
                            (ax2, best_runs, "each at its own best rate" + ("" if fine else " (coarse grid)"))):
        for i, (label, r) in enumerate(runs.items()):
            t = np.concatenate([[0.0], r.eval_times])
            loss = np.concatenate([[r.initial_loss], _smooth(r.losses, smooth)])
            name = label if ax is ax1 else f"{label}, rate {best_rates[label]:g}"
            ax.plot(t, loss, color=_protocol_color(label, i), ls=["-", "--", "-.", ":"][i % 4],
                    marker=MARKERS[i % len(MARKERS)], markevery=(i, 8), ms=4, lw=1.5, label=name)
        _optimum_line(ax, opt["loss"])
        ax.set_ylim(opt["loss"] * 0.97, opt["loss"] * 1.6)
        ax.set_xlabel("wall-clock time (mean compute times)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    ax1.set_ylabel("training loss (nats)")
    labels = list(race.errors)
    y = np.arange(len(labels))
    means = [100 * race.errors[label][0] for label in labels]
    spreads = [100 * race.errors[label][1] for label in labels]
    ax3.axvline(100 * opt["error"], color=COLORS[7], ls=(0, (1, 1)), lw=1.2, label=f"optimum ({100 * opt['error']:.2f} %)")
    for i, (yy, m, sd) in enumerate(zip(y, means, spreads)):
        ax3.errorbar(m, yy, xerr=sd, fmt=MARKERS[i % len(MARKERS)], color=_protocol_color(labels[i], i), capsize=4)
    rates = race.error_rates or {}
    ax3.set_yticks(y, [label.replace(" (", "\n(") + (f"\nrate {rates[label]:g}" if label in rates else "")
                       for label in labels], fontsize=8)
    ax3.set_ylim(len(labels) + 0.2, -0.5)      # top to bottom, with an empty row at the foot for the legend
    ax3.set_xlabel("test error at the best rate on the finer grid (%)" if rates else "test error at the best rate (%)")
    held = "held-out " if rates else ""
    ax3.set_title(f"± one standard deviation over {len(next(iter(race.error_values.values())))} {held}seeds, "
                  f"{opt['n_test']:,} test samples", fontsize=9)
    ax3.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def sharpness_figure(runs: dict):
    """Each run's rate at every step against the largest rate the curvature tolerates there, 2/lambda_max.

    ``runs``: ``{label: sharpness_along(...)}`` from :func:`commlib.experiments.sgd.tuned_races.sharpness_along`.
    """
    fig, ax = figure(6.4, 3.4)
    greys = ["#000000", "#808080"]     # runs, not protocols: black and grey, told apart by marker too
    for i, (label, d) in enumerate(runs.items()):
        ax.plot(d["steps"], d["stable"], color=greys[i % 2], marker=MARKERS[i], ls="-", lw=1.5,
                label=f"{label}: 2/λmax of the full-batch Hessian")
        ax.plot(d["steps"], d["rates"], color=greys[i % 2], ls="--", lw=1.5, label=f"{label}: rate used")
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig



# ----------------------------------------------------------------------------- scaling metrics and large batches


def scaling_figure(curves: WeakScalingCurves):
    """Scaling efficiency and throughput against workers, for a fast GPU and a slower one.

    ``curves`` come from :func:`commlib.experiments.sgd.sync_async.weak_scaling_curves`.
    """
    item = hardware.link(curves.link)
    ns, batch, t_fast = list(curves.ns), curves.batch, curves.t_fast
    fig, (ax1, ax2) = figure(7.2, 3.2, ncols=2)
    for i, (label, ms) in enumerate(curves.curves.items()):
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
    fig.suptitle(f"{hardware.model(curves.model).name}, ring all-reduce over {item.name}, {batch} images per GPU",
                 fontsize=9)
    fig.tight_layout()
    return fig


def scaling_table(metrics: dict):
    """A Markdown table of :class:`commlib.sgd.scaling.ScalingMetrics` by label, units in the headers."""
    first = next(iter(metrics.values()))
    rows = [[label, f"{1e3 * m.t_one:.0f}", f"{1e3 * m.t_many:.1f}", f"{m.throughput_many:,.0f}", f"{m.speedup:.2f}",
             f"{100 * m.efficiency:.1f} %", f"{1e3 * m.overhead:.1f}"] for label, m in metrics.items()]
    return markdown_table(["GPU", "T(1) (ms)", f"T({first.n}) (ms)", "throughput (images/s)", "speedup",
                           "scaling efficiency", "overhead (ms)"], rows)



def large_batch_figure(runs: dict):
    """Training loss against epochs for the runs of :func:`large_batch_runs`."""
    fig, ax = figure(6.4, 3.6)
    # black and grey, told apart by width, dash and marker: the chapter's colours name protocols, and these are runs
    styles = ["-", "--", "-", ":"]
    widths = [5.0, 1.8, 1.4, 2.2]
    greys = ["#B3B3B3", "#000000", "#000000", "#666666"]
    markers = ["", "s", "", "^"]
    for i, (label, r) in enumerate(runs.items()):
        ax.plot(r.epochs, r.losses, color=greys[i % 4], ls=styles[i % 4], lw=widths[i % 4], label=label,
                marker=markers[i % 4], markevery=max(1, len(r.epochs) // 8), markersize=4)
    ax.set_xlabel("epochs (passes over the training set)")
    ax.set_ylabel("training loss (nats)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def warmup_table(result: dict):
    """The rows of :func:`~commlib.experiments.sgd.sync_async.warmup_rows` as a Markdown table (losses in nats)."""
    w = result["warmup_steps"]
    body = [[f"{r['k']}", f"{r['rate']:g}", f"{r['steps']}", f"{r['no warm-up']:.3f}", f"{r['warm-up']:.3f}",
             f"{result['small']:.3f}"] for r in result["rows"]]
    return markdown_table(["ν (batch 8ν)", "rate (linear rule)", "steps", "final loss, no warm-up",
                           f"final loss, {w}-step warm-up", "small batch (rate 0.1)"], body)


def warmup_range_table(rows: list, lengths, seeds: int, cap: float | None = None) -> object:
    """:func:`~commlib.experiments.sgd.tuned_races.warmup_range_rows` as a Markdown table: per ν, the linear rule's
    rate against 2/λ_max at the optimum, how far above the small batch it ends without and with a warm-up (its length
    tuned over ``lengths``), and the warm-up claim's verdict over ``seeds`` seeds; with ``cap`` (the capped rate, rows
    made with the rate-cap verdicts), the control's two columns: the same batch and steps at that rate, and its verdict.

    The warm-up's best length is not shown: it is picked on the very seeds it is scored on, and other seeds pick
    another; the column says what it was tuned over instead.
    """
    tuned = ", ".join(map(str, lengths))
    return markdown_table(["ν (batch 8ν)", "rate (linear rule)", "rate ÷ (2/λmax at the optimum)",
                           f"above the small batch, no warm-up (%, mean ± sd over {seeds} seeds)",
                           f"above the small batch, warm-up, its length tuned over {tuned} steps (%)",
                           "verdict, warm-up against none"]
                          + ([f"above the small batch, rate capped at {cap:.1f} (%)",
                              "verdict, capped rate against the linear rule"] if cap is not None else []), rows)


def staleness_split_table(rows: list) -> object:
    """:func:`~commlib.experiments.sgd.tuned_races.staleness_split_rows` as a Markdown table."""
    return markdown_table(["at the shared rate, seed by seed", "nats (mean ± sd)", "share of the gap"], rows)


def shared_rate_table(rows: list) -> object:
    """:func:`~commlib.experiments.sgd.tuned_races.shared_rate_rows` as a Markdown table."""
    return markdown_table(["at one shared rate per update", "rates"], rows)


# ----------------------------------------------------------------------------- calculator and sweep

_DISTS = ["exponential", "shifted_exponential", "pareto", "deterministic"]




def _calc_figure(timing, trained, t_max: float | None = None, staleness_max: float | None = None,
                 error_range: tuple[float, float] | None = None, metric: str = "error"):
    """Staleness histogram and, against time, test error (``metric="error"``, %) or training loss
    (``metric="loss"``, nats); ``t_max``, ``staleness_max`` and ``error_range`` (the right panel's y range, in the
    metric's unit) fix the axes, so that the frames of a sweep share them."""
    if metric not in ("error", "loss"):
        raise ValueError(f"metric must be 'error' or 'loss', got {metric!r}")
    fig, (ax1, ax2) = figure(7.2, 2.8, ncols=2)
    staleness_histogram({"staleness": timing}, ax=ax1)
    ax1.get_legend().remove()
    if staleness_max is not None:
        ax1.set_xlim(-1, staleness_max)
    ax1.set_title(f"mean staleness {timing.staleness.mean():.2f}", fontsize=9)
    t = np.concatenate([[0.0], trained.eval_times])
    if metric == "error":
        y = 100 * np.concatenate([[trained.initial_error], trained.errors])
    else:
        y = np.concatenate([[np.nan if trained.initial_loss is None else trained.initial_loss], trained.losses])
    keep = np.isfinite(y)
    ax2.plot(t[keep], y[keep], color=COLORS[0])
    ax2.set_xlabel("wall-clock time (mean compute times)")
    ax2.set_ylabel("test error (%)" if metric == "error" else "training loss (nats)")
    if t_max is not None:
        ax2.set_xlim(0, t_max)
    if error_range is not None:
        ax2.set_ylim(*error_range)
    ax2.set_title(f"{trained.updates:,} updates", fontsize=9)
    fig.tight_layout()
    return fig


def sgd_calculator(protocol: str = "k_async", workers: int = 8, k: int = 2, compute: str = "exponential",
                   slowdown: float = 1.0):
    """Protocol, P, K, compute-time law and straggler factor -> time per update, staleness, loss reached.

    The computation is :func:`commlib.sgd.calculators.sgd_results` (plain Python, text only, so
    a change recomputes quickly, in the kernel and in the website's page alike).
    """
    updates, gradients = (inspect.signature(sgd_results).parameters[name].default
                          for name in ("updates", "gradients"))
    problem = {name: p.default for name, p in inspect.signature(calculator_problem).parameters.items()}
    calc = make_calculator(
        sgd_results,
        {
            "protocol": dropdown([(PROTOCOL_LABELS[p], p) for p in sgd.PROTOCOLS], protocol, "protocol"),
            "workers": integer(workers, 1, 64, "learners n"),
            "k": integer(k, 1, 64, "K"),
            "compute": dropdown(_DISTS, compute, "compute-time law"),
            "slowdown": number(slowdown, STRAGGLER_ENTRY.label),
        },
        title="Synchronous or asynchronous?",
        note=f"Fully synchronous and asynchronous SGD ignore K. Straggler factor: one learner's compute times "
             f"are that many times longer, at every step (1 = no straggler). Times in units of the mean "
             f"compute time of a learner; {updates} updates per timing run; loss and error from training softmax "
             f"regression on a smaller problem drawn like the chapter's ({problem['classes']} classes, "
             f"{problem['features']} features, {problem['n_train']} training samples) on the same schedule, "
             f"every protocol for the same wall-clock time ({gradients}/n mean compute times: about {gradients} "
             f"gradients from n learners), at {RATE_PER_GRADIENT:g} x K per update (batch 8); one seed, the test "
             f"error with its standard error on {problem['n_test']} test samples.",
    )
    box = widgets.VBox([calc])
    box.calculator = calc
    return box


def sgd_sweep(sweep: KSweep):
    """A precomputed scrubber over K: staleness histogram and training-loss curve (nats) for each value.

    Training loss is what the races score (:func:`commlib.experiments.sgd.grids.level`); one seed's test error
    swings by more than the K differ. ``sweep`` comes from
    :func:`commlib.experiments.sgd.sync_async.k_sweep_runs` or
    :func:`commlib.experiments.sgd.tuned_races.k_sweep_tuned`.
    """
    workers = sweep.workers
    t_max = sweep.budget or max(float(p.trained.eval_times[-1]) for p in sweep.points)
    stale_max = max(5.0, max(float(np.percentile(p.timing.staleness, 99.5)) for p in sweep.points) + 1)
    # the loss axis zooms on the last three quarters of the budget, where the K differ (the first drop is off it)
    losses = np.concatenate([np.asarray(p.trained.losses, float)[np.asarray(p.trained.eval_times) >= t_max / 4]
                             for p in sweep.points])
    losses = losses[np.isfinite(losses)]
    if losses.size == 0:
        losses = np.array([1.0])
    spread = float(losses.max() - losses.min()) or 0.01 * float(losses.max())
    loss_range = (float(losses.min()) - 0.05 * spread, float(losses.max()) + 0.05 * spread)

    def draw(point):
        timing = point.timing
        fig = _calc_figure(timing, point.trained, t_max, stale_max, loss_range, metric="loss")
        rate = "" if point.rate is None else f", rate {point.rate:g}"
        fig.suptitle(f"{_k_label(point.protocol, workers, point.k)}{rate}, n = {workers}: "
                     f"{timing.mean_time_per_update:.3f} mean compute times per update", fontsize=9)
        fig.tight_layout()
        return fig

    return sweep_html(draw, list(sweep.points), label=lambda point: f"K = {point.k}",
                      alt=f"Staleness histogram and training loss against wall-clock time of {_protocol_name(sweep.protocol)} "
                          f"with {workers} learners for each K; the staleness and time axes are shared, the loss axis zooms "
                          "on the last three quarters of the budget")
