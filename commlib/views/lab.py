"""Figures and tables of the MPI lab: measured against predicted, error, bandwidth.

Every function takes :class:`commlib.lab.fit.Series` (measured medians and
quartiles) and fitted models from :mod:`commlib.lab.fit`, and draws them; no
arithmetic beyond what :mod:`commlib.lab.fit` and :mod:`commlib.cost` return.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from .. import cost
from ..lab import calculators as predict
from ..lab import explain, fit, mpich
from ..lab.measure import format_bytes
from ..units import check_count, check_nonnegative, check_positive
from .calculator import Calculator, dropdown, integer, make_calculator, text
from .plots import MARKERS, PALETTE, figure
from .tables import Markdown, markdown_table

__all__ = ["fit_figure", "times_figure", "bandwidth_figure", "series_color", "series_marker", "half_rate_table",
           "half_rate_agreement",
           "error_table", "fit_summary_table", "model_name",
           "model_calculator", "terms_table", "verdict", "placement",
           "compare_spread", "rate_table", "suspects_table", "regime_count_table", "cache_table", "fit_busbw_table",
           "ranks_rate_table", "secant_sentence", "runs_figure", "three_rates_table",
           "split_diagram", "shared_table", "size_range", "price_drop_words", "CALC_RANKS"]

_SIZE_TICKS = [2**k for k in range(10, 27, 2)]


def _size_axis(ax) -> None:
    ax.set_xscale("log", base=2)
    ticks = [t for t in _SIZE_TICKS if ax.get_xlim()[0] <= t <= ax.get_xlim()[1] * 1.01]
    ax.set_xticks(ticks, [format_bytes(t) for t in ticks], rotation=35, ha="right")
    ax.set_xlabel("message size (whole buffer)")


#: One colour per meaning, the same in every figure of the lab: the collective MPICH ran (its own choice of
#: algorithm), or the point-to-point all-reduce written with the algorithm the cost model counts (halving-doubling
#: in a dark ochre: the palette's sky blue is too near all-reduce's blue to tell apart in one figure).
_COLOR_OF = {("all_reduce", "mpich"): PALETTE["blue"], ("reduce_scatter", "mpich"): PALETTE["orange"],
             ("all_gather", "mpich"): PALETTE["green"], ("broadcast", "mpich"): PALETTE["vermillion"],
             ("all_reduce", "ring"): PALETTE["purple"], ("all_reduce", "halving_doubling"): "#8c6d1f"}
#: One marker per number of ranks: a figure that holds runs of two and four ranks tells them apart by shape.
_MARKER_OF = {2: "o", 4: "s", 8: "D"}
#: Any other series (an algorithm forced on MPICH, or another library than MPICH, such as gloo): dark grey, no
#: colour of the table above.
_OTHER = "#555555"
#: Shown behind the relative errors: the band within the target (grey: no series' colour).
_BAND = "#d9d9d9"
#: Sizes a figure marks (such as time-slice-bound ones): a pale palette yellow, since grey is another library's.
_MARK = PALETTE["yellow"]
#: The copy control per second of CPU time (mid grey: the wall-time control is black, and no series is grey).
_COPY_CPU = "#999999"
#: One line style per number of ranks, beside the marker: two runs of one collective share its colour.
_LINE_OF = {2: "-", 4: "--", 8: ":"}


def series_color(s: fit.Series) -> str:
    """The colour of a series in every figure of the lab: it stands for the collective and the algorithm run.

    >>> a = fit.Series("all_reduce", 2, (1024.0, 2048.0), (1e-5, 2e-5), "mpich")
    >>> b = fit.Series("all_reduce", 4, (1024.0, 2048.0), (1e-5, 2e-5), "mpich")
    >>> series_color(a) == series_color(b) != series_color(fit.Series("broadcast", 2, a.nbytes, a.seconds, "mpich"))
    True
    """
    return _COLOR_OF.get((s.op, s.algorithm or "mpich"), _OTHER) if s.library == "mpich" else _OTHER


def series_marker(s: fit.Series) -> str:
    """The marker of a series: it stands for the number of ranks."""
    return _MARKER_OF.get(s.n, MARKERS[s.n % len(MARKERS)])


def _short(s: fit.Series) -> str:
    return s.label.replace("_", "-")


def _measured(ax, s: fit.Series, label: str | None = None) -> None:
    x = np.array(s.nbytes)
    y = np.array(s.seconds)
    c, m = series_color(s), series_marker(s)
    if s.low is not None and s.high is not None:
        yerr = np.vstack([y - np.array(s.low), np.array(s.high) - y])
        ax.errorbar(x, y, yerr=np.clip(yerr, 0, None), fmt=m, color=c, ms=5, capsize=2, lw=1,
                    label=label if label is not None else f"{s.label}, measured")
    else:
        ax.plot(x, y, m, color=c, ms=5, label=label if label is not None else f"{s.label}, measured")


def _label_ends(ax, ends: Sequence[tuple[float, str, str]], gap: float = 0.075) -> None:
    """Name each line at its right end, in its colour, outside the axes: ``ends`` holds (last y, text, colour).

    The names are pushed apart where lines end close together, so none hides another; no legend to decode.
    """
    lo, hi = ax.get_ylim()
    log = ax.get_yscale() == "log"

    def where(y: float) -> float:
        if log:
            return (np.log10(y) - np.log10(lo)) / (np.log10(hi) - np.log10(lo))
        return (y - lo) / (hi - lo)

    placed = sorted(((where(y), name, c) for y, name, c in ends), key=lambda t: t[0])
    ys = [p[0] for p in placed]
    for k in range(1, len(ys)):
        ys[k] = max(ys[k], ys[k - 1] + gap)
    shift = max(0.0, ys[-1] - 1.0) if ys else 0.0
    for k, (_, name, c) in enumerate(placed):
        ax.annotate(name, xy=(1.0, ys[k] - shift), xycoords="axes fraction", xytext=(6, 0),
                    textcoords="offset points", color=c, fontsize=8, va="center", ha="left")


def fit_figure(series: Sequence[fit.Series], models: Sequence[fit.AlphaBeta | fit.PiecewiseFit],
               title: str = "", target: float = 0.2):
    """One panel per series, small multiples: measured median times and the model's prediction, and its error.

    In each panel's upper part: the measured medians (markers, bars:
    quartiles) and the model (a line), log-log, in the series' colour
    (:func:`series_color`); a piecewise model's crossovers are dotted grey
    lines. Beneath: the relative error at each size, in %, with the band
    ``+-target`` shaded grey. Each panel is titled with its series.
    """
    if len(series) != len(models) or not series:
        raise ValueError(f"series and models must pair up one to one, got {len(series)} and {len(models)}")
    ncols = 2 if len(series) == 4 else min(3, len(series))
    groups = -(-len(series) // ncols)
    fig, axes = figure(10.0, 3.4 * groups + 0.4, nrows=2 * groups, ncols=ncols, sharex="col",
                       gridspec_kw={"height_ratios": [2.2, 1.0] * groups}, squeeze=False)
    lim = max(50.0, min(300.0, 1.1 * max(abs(v) for s, m in zip(series, models)
                                         for v in 100 * fit.relative_errors(m, s))))
    for i, (s, m) in enumerate(zip(series, models)):
        ax, bx = axes[2 * (i // ncols), i % ncols], axes[2 * (i // ncols) + 1, i % ncols]
        c = series_color(s)
        _measured(ax, s, label="measured")
        grid = np.geomspace(min(s.nbytes), max(s.nbytes), 120)
        ax.plot(grid, [m.time(s.op, x, s.n, s.algorithm) for x in grid], "-", color=c, lw=1.4, alpha=0.85,
                label="fitted model")
        bx.axhspan(-100 * target, 100 * target, color=_BAND, lw=0)
        bx.axhline(0, color=PALETTE["black"], lw=0.8)
        bx.plot(s.nbytes, 100 * fit.relative_errors(m, s), series_marker(s) + "-", color=c, ms=4, lw=1)
        if isinstance(m, fit.PiecewiseFit):
            for cut in m.crossovers:
                for a in (ax, bx):
                    a.axvline(cut, color="#888888", ls=":", lw=1)
        ax.set_yscale("log")
        ax.set_title(_short(s), fontsize=9, color=c)
        bx.set_ylim(-lim, lim)
        _size_axis(bx)
        if i % ncols == 0:
            ax.set_ylabel("time per call (s)")
            bx.set_ylabel("error (%)")
        else:
            bx.set_xlabel("")
        if i // ncols < groups - 1:
            bx.set_xlabel("")
    for j in range(len(series), groups * ncols):  # empty places of the grid
        axes[2 * (j // ncols), j % ncols].set_visible(False)
        axes[2 * (j // ncols) + 1, j % ncols].set_visible(False)
    note = ("markers: measured (bars: quartiles); line: fitted model"
            + ("; dotted: the fit's cuts between regimes" if any(isinstance(m, fit.PiecewiseFit) for m in models)
               else "")
            + f"\nbeneath each: error of the model, (predicted - measured) / measured, grey within {100 * target:.0f} %")
    fig.suptitle((title + "\n" if title else "") + note, fontsize=9)
    fig.tight_layout()
    return fig


def times_figure(series: Sequence[fit.Series], title: str = "", marked: Sequence[float] = (),
                 marked_label: str = "time-slice-bound: no ratio"):
    """Measured median times (bars: quartiles) of several series on one log-log plot, each named at its end.

    ``marked``: sizes (bytes) to shade, each with a pale yellow band (:data:`_MARK`), labelled ``marked_label``,
    such as the sizes the text reads as time-slice-bound (:func:`commlib.lab.explain.slice_bound_sizes`), where the plot's gap is no ratio.

    Colour stands for the collective and algorithm (:func:`series_color`),
    marker shape and line style for the number of ranks (:func:`series_marker`;
    solid for two, dashed for four), so two runs of one collective differ in
    both.
    """
    if not series:
        raise ValueError("series must hold at least one Series")
    fig, ax = figure(7.6, 3.8)
    for s in series:
        _measured(ax, s, label=s.label)
        ax.plot(s.nbytes, s.seconds, _LINE_OF.get(s.n, "-."), color=series_color(s), lw=1.0, alpha=0.7)
    ax.set_yscale("log")
    ax.set_ylabel("time per call (s)")
    _size_axis(ax)
    for x in marked:  # one band per marked size, half a factor of 2 either side of it
        ax.axvspan(x / 2**0.5, x * 2**0.5, color=_MARK, alpha=0.35, lw=0)
    if marked:
        ax.text(min(marked) / 2**0.5, 0.98, f"shaded: {marked_label}", transform=ax.get_xaxis_transform(), ha="left",
                va="top", fontsize=8, color="#444444")
    if title:
        ax.set_title(title)
    _label_ends(ax, [(s.seconds[-1], _short(s), series_color(s)) for s in series])
    fig.tight_layout()
    return fig


#: A run made on the machine that executes the notebook against the reference run: black for the reference, sky blue
#: for this run (neither is a collective's colour; sky blue stands for nothing else in the lab's figures).
_RUN_COLORS = {"reference run": "#000000", "this run": PALETTE["sky"]}


def runs_figure(reference: Sequence[fit.Series], yours: Sequence[fit.Series], title: str = ""):
    """A run of the lab's plan made on the machine that executes the notebook ("this run") beside the stored
    reference run: median times of the same series (one per number of ranks, say), colour for the run, marker and
    line style for the number of ranks, each named at its end."""
    if not reference or len(reference) != len(yours):
        raise ValueError("reference and yours must hold the same, non-empty list of series")
    fig, ax = figure(7.6, 3.8)
    ends = []
    for run, group in (("reference run", reference), ("this run", yours)):
        c = _RUN_COLORS[run]
        for s in group:
            ax.plot(s.nbytes, s.seconds, _LINE_OF.get(s.n, "-."), marker=series_marker(s), color=c, lw=1.0, ms=5)
            ends.append((s.seconds[-1], f"{run}, {s.n} ranks", c))
    ax.set_yscale("log")
    ax.set_ylabel("time per call (s)")
    _size_axis(ax)
    if title:
        ax.set_title(title)
    _label_ends(ax, ends)
    fig.tight_layout()
    return fig


def bandwidth_figure(series: Sequence[fit.Series], title: str = "",
                     copy: tuple[Sequence[float], Sequence[float]] | None = None,
                     copy_cpu: tuple[Sequence[float], Sequence[float]] | None = None):
    """Bus bandwidth (nccl-tests' busbw, GB/s) of each series against message size, each named at its end.

    ``copy``: ``(sizes, rates)`` of the copy control measured in the same
    run (:func:`commlib.lab.runner.copy_control`: every rank copying at
    once, timed in wall time), drawn as a black dashed line (bytes copied per
    second and rank), the control the collectives' rates are read against.
    ``copy_cpu``: the same copies over the copying thread's CPU time
    (:func:`commlib.lab.runner.copy_cpu_control`), a grey dashed line: where
    it stays up while the wall-time line falls, the copies waited for their
    cores rather than copied more slowly.
    """
    if not series:
        raise ValueError("series must hold at least one Series")
    fig, ax = figure(7.6, 3.8)
    ends = []
    for s in series:
        busbw = [cost.bus_bandwidth(s.op, x, s.n, t) / 1e9 for x, t in zip(s.nbytes, s.seconds)]
        ax.plot(s.nbytes, busbw, series_marker(s) + "-", color=series_color(s), ms=5, lw=1, label=s.label)
        ends.append((busbw[-1], _short(s), series_color(s)))
    for control, colour, clock in ((copy, PALETTE["black"], "wall time"), (copy_cpu, _COPY_CPU, "CPU time")):
        if control is None:
            continue
        sizes, rates = control
        if len(sizes) != len(rates) or not sizes:
            raise ValueError(f"a copy control must pair sizes with rates, got {len(sizes)} and {len(rates)}")
        ax.plot(sizes, [r / 1e9 for r in rates], "--", color=colour, lw=1.2,
                label=f"copy control, every rank at once (bytes copied per second of {clock}, per rank)")
        ends.append((rates[-1] / 1e9, f"copy control ({clock})", colour))
    ax.set_yscale("log")
    ax.set_ylabel("bus bandwidth (GB/s, one direction)")
    _size_axis(ax)
    if title:
        ax.set_title(title)
    _label_ends(ax, ends)
    fig.tight_layout()
    return fig


def _bytes2(nbytes: float) -> str:
    """A size to two significant figures, in binary prefixes: a prediction carries no more."""
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if nbytes >= factor:
            return f"{explain.figures(nbytes / factor)} {unit}"
    return f"{explain.figures(nbytes)} B"


#: How near half of ``1/beta`` the largest size's measured rate must be for :func:`half_rate_table` to say it is back
#: at about half there: within 5 %, finer than two significant figures can tell apart.
HALF_NEAR = 0.05


def half_rate_table(model: fit.AlphaBeta, series: fit.Series, sweeps: Sequence[fit.AlphaBeta] = ()):
    """Markdown table: where a line says its bytes move at half its ``1/beta``, and where the measurement says so.

    The prediction is :func:`commlib.lab.fit.half_rate_size`; the check,
    :func:`commlib.lab.fit.measured_half_rate`, the two measured sizes
    between which the measured rate of the bytes on the critical path first
    reaches half the line's ``1/beta``, and every later pair where it rises
    through half again (:func:`commlib.lab.fit.half_rate_crossings`). ``sweeps``: the same line fitted on
    each sweep alone; where their alphas disagree
    (:func:`commlib.lab.explain.alpha_determined`), the run does not fix
    alpha, and the table gives each sweep's alpha and prediction instead of
    one. Values to two significant figures.
    """
    alphas = [m.alpha for m in sweeps]
    known = explain.alpha_determined(alphas)
    below, above = fit.measured_half_rate(model, series)

    def said(m: fit.AlphaBeta) -> str:
        size = fit.half_rate_size(m, series)
        return "never" if size == float("inf") else _bytes2(size)

    if above == float("inf"):
        seen = f"above {format_bytes(below)}, the largest size (not reached)"
    elif below == 0:
        seen = f"at or below {format_bytes(above)}, the smallest size"
    else:
        seen = f"between {format_bytes(below)} and {format_bytes(above)}"
    again = fit.half_rate_crossings(model, series)[1:]
    if again:   # the rate fell back below half and rose again
        seen += "; it fell back and rose through it again between " + ", ".join(
            f"{format_bytes(a)} and {format_bytes(b)}" for a, b in again)
    if model.beta > 0 and above != float("inf"):    # the largest size's rate, where it sits near the line of half
        x, t = max(zip(series.nbytes, series.seconds))
        near = fit._critical_rate(series, x, t) / (0.5 * model.bandwidth)
        if abs(near - 1) <= HALF_NEAR:
            seen += f"; it is back at about half at {format_bytes(x)}"
    rate = "infinite (beta 0)" if model.beta == 0 else f"{explain.figures(model.bandwidth / 1e9)} GB/s"
    if known:
        alpha = _alpha(model)
        predicted = said(model)
    else:
        alpha = ("not determined: its sweeps, fitted alone, give "
                 + " and ".join(f"{explain.figures(1e6 * a)} µs" for a in alphas))
        predicted = " and ".join(said(m) for m in sweeps) + " (one per sweep)"
    body = [[series.label, alpha, rate, predicted, seen]]
    return markdown_table(["series", "fitted alpha", "fitted 1/beta", "half of 1/beta, predicted",
                           "half of 1/beta, measured"], body)


def half_rate_agreement(model: fit.AlphaBeta, series: fit.Series, sweeps: Sequence[fit.AlphaBeta] = ()) -> str:
    """One sentence beside :func:`half_rate_table`: whether its prediction falls between the two measured sizes
    where the measured rate first reaches half of ``1/beta`` (they agree), or outside them (they part)."""
    if not explain.alpha_determined([m.alpha for m in sweeps]):
        return ("Here the run does not fix alpha, so there is one prediction per sweep: compare each with the "
                "measured crossing.")
    size = fit.half_rate_size(model, series)
    below, above = fit.measured_half_rate(model, series)
    if size == float("inf") or above == float("inf"):
        return "Here the line or the measurement never reaches half of its 1/beta, so there is nothing to compare."
    if below <= size <= above:
        return (f"Here prediction and measurement agree: the predicted {_bytes2(size)} lies between the measured "
                f"{format_bytes(below)} and {format_bytes(above)}.")
    return (f"Here they part: the predicted {_bytes2(size)} lies outside the measured crossing, between "
            f"{format_bytes(below)} and {format_bytes(above)}, where the single line misses the measurement.")


def _signed_pct(fraction: float) -> str:
    """A relative error as a signed whole percent, "0 %" without a sign where it rounds to zero (its sign there is
    the last bits of a floating-point sum, which differ between processors).

    >>> _signed_pct(0.123), _signed_pct(-0.004), _signed_pct(0.004), _signed_pct(-0.2)
    ('+12 %', '0 %', '0 %', '-20 %')
    """
    pct = round(100 * fraction)
    return "0 %" if pct == 0 else f"{pct:+d} %"


def error_table(model: fit.AlphaBeta | fit.PiecewiseFit, series: fit.Series, sizes: Sequence[float] | None = None,
                name: str = "", line: fit.AlphaBeta | None = None):
    """Markdown table: measured and predicted time, relative error, algbw and busbw at each size.

    ``name`` names ``model`` in the caption and the columns; ``line``: a single line whose prediction and
    error get columns of their own beside the model's (left out where it is the model itself).
    """
    rows = fit.error_table(model, series)
    beside = fit.error_table(line, series) if line is not None and line != model else None
    keep = None if sizes is None else set(float(x) for x in sizes)
    body = []
    for i, r in enumerate(rows):
        if keep is not None and r.nbytes not in keep:
            continue
        row = [format_bytes(r.nbytes), _time(r.measured, 3), _time(r.predicted), _signed_pct(r.relative_error)]
        if beside is not None:
            row += [_time(beside[i].predicted), _signed_pct(beside[i].relative_error)]
        body.append(row + [_rate(r.algbw, 3), _rate(r.busbw, 3)])
    what = name or "the model"
    headers = ["size", "measured (median)", f"predicted by {what}", "error"]
    if beside is not None:
        headers += ["predicted by the single line", "error of the line"]
    return markdown_table(headers + ["algbw", "busbw"], body,
                          caption=f"{series.label}: {what}" + (" against the single line" if beside is not None else ""))


def model_name(model: fit.AlphaBeta | fit.PiecewiseFit, line: fit.AlphaBeta | None = None) -> str:
    """A model in words, for a caption: the single line, a fit of k regimes, or a line below a cut and regimes above.

    >>> a, b = fit.AlphaBeta(1e-6, 1e-9), fit.AlphaBeta(0.0, 2e-9)
    >>> model_name(a), model_name(fit.PiecewiseFit((1e6,), (a, b))), model_name(fit.PiecewiseFit((2**21.5,), (a, b)), a)
    ('the single line', 'the fit of two regimes', 'the single line below 2.8 MiB, the top regime above')
    """
    if not isinstance(model, fit.PiecewiseFit):
        return "the single line"
    if line is not None and model.models[0] == line:
        rest = "the top regime" if len(model.models) == 2 else "the fit's regimes"
        return f"the single line below {_bytes2(model.crossovers[0])}, {rest} above"
    return f"the fit of {_count_word(len(model.models))} regimes"


def terms_table(series: Sequence[fit.Series]):
    """Markdown table of each series' cost-model counts: steps ``a``, bytes ``b`` and bytes combined ``v`` per byte
    of M (the front page's letters)."""
    body = []
    for s in series:
        for nbytes in sorted({min(s.nbytes), max(s.nbytes)}):
            name = mpich.algorithm(s.op, nbytes, s.n) if s.algorithm == "mpich" else (s.algorithm or "")
            t = fit.terms_at(s.op, nbytes, s.n, s.algorithm)
            body.append([s.label, format_bytes(nbytes), name.replace("_", " "), s.n, t.steps,
                         f"{t.bytes / nbytes:.4g} M", f"{t.reduced / nbytes:.4g} M"])
    return markdown_table(["collective", "at", "algorithm run", "ranks n", "steps a", "bytes b", "combined v"],
                          body)


def _rate(bytes_per_second: float, n: int = 2) -> str:
    """A rate to ``n`` significant figures (a fitted or measured rate is no finer than a rerun agrees)."""
    for factor, unit in ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if bytes_per_second >= factor:
            return f"{explain.figures(bytes_per_second / factor, n)} {unit}"
    return f"{explain.figures(bytes_per_second, n)} B/s"


def _time(seconds: float, n: int = 2) -> str:
    """A time to ``n`` significant figures, in s, ms, µs or ns."""
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= factor:
            return f"{explain.figures(seconds / factor, n)} {unit}"
    return f"{explain.figures(seconds / 1e-9, n)} ns"


def _inverse_beta(m: fit.AlphaBeta) -> str:
    # under the column "1/beta": the rate alone, not the header again
    return "none: beta = 0 (no size dependence)" if m.beta == 0 else _rate(m.bandwidth)


def _alpha(m: fit.AlphaBeta, resolution: float = 1e-9) -> str:
    # a fitted alpha below a clock's resolution is the fit finding no flat part, not a 0 s start-up cost
    return _time(m.alpha) if m.alpha >= resolution else "none measurable (fitted 0)"


def fit_summary_table(series: Sequence[fit.Series], models: Sequence[fit.AlphaBeta | fit.PiecewiseFit],
                      lo: float = 4 * 2**10, hi: float = 64 * 2**20, target: float = 0.2):
    """Markdown table, one row per regime: its sizes and points, fitted alpha and 1/beta, median and worst |error|.

    Each regime is shown over all the sizes it was fitted on; its errors are
    over its sizes in [lo, hi]. A regime of two sizes passes through both,
    so its errors say nothing and the table says so, unless the fit clamped
    its alpha at 0 (:attr:`commlib.lab.fit.RegimeError.clamped`): that one
    misses them and is graded like any other; one with fewer than
    :data:`commlib.lab.fit.MIN_GRADED` sizes in [lo, hi] is not graded. The
    last column names the regimes whose worst error misses ``target``.
    """
    body = []
    for s, m in zip(series, models):
        for r in fit.regime_errors(m, s, lo, hi):
            if r.exact:
                med, worst, note = "0 (fitted on 2 sizes)", "0 (fitted on 2 sizes)", "exact by construction"
            elif not r.graded:
                med = worst = "not graded"
                note = f"not graded: {r.points} of its sizes from {format_bytes(lo)}"
            else:
                med, worst = f"{100 * r.median:.1f} %", f"{100 * r.worst:.1f} % at {format_bytes(r.worst_at)}"
                note = "meets" if r.worst <= target else "misses"
                if r.clamped:
                    held = "alpha" if r.model.alpha == 0 else "beta" if r.model.beta == 0 else ""
                    note += f" (2 sizes, {held} clamped at 0: " if held else " (2 sizes: "
                    note += "it passes through neither)"
            body.append([s.label, f"{format_bytes(r.first)} to {format_bytes(r.last)}", r.fitted, r.points,
                         _alpha(r.model), _inverse_beta(r.model), med, worst, note])
    headers = ["collective", "regime (sizes fitted)", "sizes fitted", f"sizes graded (from {format_bytes(lo)})",
               "alpha", "1/beta", "median error", "worst error", f"worst within {100 * target:.0f} %"]
    return markdown_table(headers, body)


CALC_RANKS = range(2, 65)
"""The numbers of ranks :func:`model_calculator` accepts: 2 to 64; a sentence about its prices on every ``n``
(:func:`price_drop_words`) reads this range, not a copy of it."""


def _fitted_label(s: fit.Series) -> str:
    """A series' name in the calculator, with the ranks it was fitted on: 'all_reduce (fitted on 2 ranks)'."""
    name = s.label.removesuffix(f", {s.n} ranks")
    return f"{name} (fitted on {s.n} ranks)"


def model_calculator(series: Sequence[fit.Series], models: Sequence[fit.AlphaBeta | fit.PiecewiseFit],
                     size: str = "16 MiB", grade: str = "", graded_ranks: Sequence[int] = ()) -> Calculator:
    """What the fitted model of each measured collective predicts for any size and number of ranks.

    The fitted alpha and beta belong to the machine and library they were
    measured on; changing the number of ranks extrapolates with the cost
    model's step and byte counts. ``grade`` (a sentence on how well these
    models predicted sizes and ranks they never saw) heads the note. Each collective is named with the
    number of ranks it was fitted on; a price outside the measured sizes, or on a number of ranks neither
    fitted on nor in ``graded_ranks``, is marked extrapolated in its "measured range" row.
    """
    if len(series) != len(models) or not series:
        raise ValueError(f"series and models must pair up one to one, got {len(series)} and {len(models)}")
    table = {_fitted_label(s): (s, m) for s, m in zip(series, models)}
    compute = functools.partial(predict.fitted_model_results, table,  # the model layer's function, bound to these fits
                                graded_ranks=tuple(graded_ranks))

    first = series[0]
    controls = {
        "collective": dropdown(list(table), _fitted_label(first), "collective"),
        "size": text(size, predict.SIZE_ENTRY.label, "e.g. 16 MiB"),
        "n": integer(first.n, CALC_RANKS[0], CALC_RANKS[-1], "ranks n"),
    }
    grade = grade.replace("`", "")  # the note is plain text: a code name's backticks would show
    return make_calculator(compute, controls, title="The fitted model of this machine",
                           note=(f"{grade} " if grade else "") + "Fitted on the ranks measured above; 1 MiB = 2^20 B, 1 MB = 10^6 B; "
                                "bandwidths in bytes per second, as nccl-tests defines algbw and busbw. "
                                "'none measurable': in the sizes that regime was fitted on, the fit found no "
                                "start-up cost next to the copying time; carried to many ranks, such a regime "
                                "still prices no start-up cost for any of the added steps, so its latency term "
                                "there is missing, not small.")


# --------------------------------------------------------------------------- words for the prose
# The lab's prose is glued from a measurement that differs from machine to machine and run to run;
# every word that depends on it is chosen here, by the numbers, never typed into the page.

_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def _count_word(k: int) -> str:
    return _NUMBERS.get(k, str(k))


def verdict(error: float, target: float = 0.2) -> str:
    """``"meets"`` if a median relative ``error`` (a fraction) is within ``target``, else ``"misses"``.

    >>> verdict(0.12), verdict(0.31)
    ('meets', 'misses')
    """
    error = check_nonnegative("error", error)
    target = check_positive("target", target)
    return "meets" if error <= target else "misses"


def placement(ranks: int, cores: int) -> str:
    """How ``ranks`` processes sit on ``cores`` cores, in words: one per core, or sharing.

    >>> placement(2, 2), placement(4, 2), placement(2, 1), placement(3, 2)
    ('one rank per core', 'two ranks per core', 'two ranks on one core', 'three ranks sharing two cores')
    """
    ranks = check_count("ranks", ranks, minimum=1)
    cores = check_count("cores", cores, minimum=1)
    if ranks <= cores:
        return "one rank per core"
    if cores == 1:
        return f"{_count_word(ranks)} ranks on one core"
    if ranks % cores == 0:
        return f"{_count_word(ranks // cores)} ranks per core"
    return f"{_count_word(ranks)} ranks sharing {_count_word(cores)} cores"


def compare_spread(reference: float, other: float, tolerance: float = 0.25) -> str:
    """``"wider than"``, ``"narrower than"`` or ``"about as wide as"``: ``other`` spread against ``reference``.

    Within a factor ``1 + tolerance`` either way the two count as equal.

    >>> compare_spread(0.05, 0.30), compare_spread(0.30, 0.05), compare_spread(0.10, 0.11)
    ('wider than', 'narrower than', 'about as wide as')
    """
    reference = check_nonnegative("reference", reference)
    other = check_nonnegative("other", other)
    tolerance = check_nonnegative("tolerance", tolerance)
    if other > reference * (1 + tolerance):
        return "wider than"
    if other * (1 + tolerance) < reference:
        return "narrower than"
    return "about as wide as"


def _top_fitted_on(s: fit.Series, m: fit.AlphaBeta | fit.PiecewiseFit) -> str:
    if not isinstance(m, fit.PiecewiseFit):
        return f"{len(s.nbytes)} sizes (one line)"
    top = fit.regime_errors(m, s)[-1]
    if top.exact:
        return f"{top.fitted} sizes: a secant through both"
    if top.clamped:
        errs = [float(e) for x, e in zip(s.nbytes, fit.relative_errors(m, s)) if top.first <= x <= top.last]
        misses = "/".join(f"{100 * e:+.0f}" for e in sorted(errs, key=lambda e: -e))
        held = "alpha clamped at 0" if top.model.alpha == 0 else "beta clamped at 0" if top.model.beta == 0 else "fitted"
        return f"{top.fitted} sizes, {held}: misses them by {misses} %"
    return f"{top.fitted} sizes (top regime)"


def secant_sentence(series: Sequence[fit.Series], models: Sequence[fit.AlphaBeta | fit.PiecewiseFit]) -> str:
    """What a top regime fitted on two sizes is, for the regimes at hand: a secant, or a clamped line that misses both.

    Empty where no top regime was fitted on two sizes.

    >>> s = fit.Series("all_reduce", 2, (1e3, 2e3, 3e7, 6e7), (1e-5, 1.1e-5, 1e-2, 3e-2), "ring")
    >>> low = fit.fit_joint([s.subset(hi=2e3)])
    >>> secant_sentence([s], [fit.PiecewiseFit((1e6,), (low, fit.fit_joint([s.subset(lo=3e7)])))])[-57:]
    'α to zero and misses both points (all-reduce: +15/-23 %).'
    """
    tops = []
    for s, m in zip(series, models):
        if isinstance(m, fit.PiecewiseFit):
            top = fit.regime_errors(m, s)[-1]
            if top.fitted <= 2:
                tops.append((s, m, top))
    if not tops:
        return ""
    text = ("A top regime fitted on two sizes passes through both when the line between them starts at or above "
            "zero: its rate per byte is then the slope between them, a secant, which no other point has tested.")
    clamped = [(s, m) for s, m, top in tops if top.clamped]
    if clamped:
        what = "; ".join(f"{s.op.replace('_', '-')}: {_top_fitted_on(s, m).split('misses them by ')[1]}" for s, m in clamped)
        text += (" Where that line would start below zero (a negative α), the fit, which keeps α and β "
                 f"at zero or above, sets α to zero and misses both points ({what}).")
    return text


def rate_table(series: Sequence[fit.Series], models: Sequence[fit.AlphaBeta | fit.PiecewiseFit],
               charged: Sequence[fit.AlphaBeta | fit.PiecewiseFit], copy_rate: float, at: float | None = None,
               checks: Sequence[fit.RateCheck] | None = None, short: bool = False, rows: bool = False):
    """Markdown table: each collective's bus bandwidth measured at the largest size ``at`` (no fit) and the
    ``1/beta`` of its model for the largest messages, without and with gamma charged, against the memory-copy
    rate measured in the same run (all in GB/s, 1 GB = 10^9 B).

    ``models`` are the ones the held-out grade chose; a top regime fitted on
    two sizes is named a secant where it passes through both, and its misses
    are given where the fit clamped its alpha at 0. A fitted value no copying library could
    reach (infinite, or more than a quarter above the copy rate) is flagged
    (:func:`commlib.lab.explain.rate_flag`). With ``checks`` (one
    :class:`commlib.lab.fit.RateCheck` per series, from
    :func:`commlib.experiments.lab.rate_checks`) a column says whether that
    ``1/beta`` and the measured busbw agree within their spread, and if not
    which factor parts them (:func:`commlib.lab.explain.fit_busbw_flag`); for a secant it says "not tested":
    a line through two sizes meets both, so its slope was checked against nothing. ``short``: only the
    collective, its measured busbw, busbw over the copy rate and the flag (the main text's view of it). ``rows``:
    the full table's rows as lists of strings, not a table (a page may set them one value per entry)."""
    check_positive("copy_rate", copy_rate)
    if at is None:
        at = min(max(s.nbytes) for s in series)
    body = []
    if checks is not None and len(checks) != len(series):
        raise ValueError(f"checks must hold one RateCheck per series ({len(series)}), got {len(checks)}")
    for i, (s, m, g) in enumerate(zip(series, models, charged)):
        hi = m.high if isinstance(m, fit.PiecewiseFit) else m
        hg = g.high if isinstance(g, fit.PiecewiseFit) else g
        bw = fit.busbw_at(s, at)
        flags = "; ".join(f"{w}: {f}" for w, f in (("without gamma", explain.rate_flag(hi.bandwidth, copy_rate)),
                                                    ("with gamma", explain.rate_flag(hg.bandwidth, copy_rate))) if f)
        row = [s.label, f"{bw / 1e9:.2f}", f"{bw / copy_rate:.2f}", f"{hi.bandwidth / 1e9:.2f}",
               f"{hg.bandwidth / 1e9:.2f}", _top_fitted_on(s, m)]
        if checks is not None:  # a secant passes through its two sizes: no other point tests its rate
            secant = isinstance(m, fit.PiecewiseFit) and fit.regime_errors(m, s)[-1].exact
            row.append("not tested: a secant through its two sizes" if secant else explain.fit_busbw_flag(checks[i]))
        body.append(row + [flags or "none"])
    if rows:
        return body
    if short:
        return markdown_table(["collective", f"busbw at {format_bytes(at)}, measured (GB/s)", "busbw / copy rate",
                               "flag"], [row[:3] + row[-1:] for row in body])
    head = ["collective", f"busbw at {format_bytes(at)}, measured (GB/s)", "busbw / copy rate",
            "1/beta of the chosen model, largest messages (GB/s)", "1/beta with gamma charged (GB/s)",
            "1/beta fitted on"]
    return markdown_table(head + (["1/beta against busbw"] if checks is not None else []) + ["flag"], body)


def suspects_table(found: Sequence[fit.Suspect]):
    """Markdown table of the timings that failed the load checks (:func:`commlib.lab.fit.suspects`): collective,
    size and each check it failed; the prose gives their count (:func:`commlib.lab.explain.suspects_sentence`).
    Where none failed, a sentence instead of a table with no rows."""
    if not found:
        return Markdown("No timing failed a load check, so there is no table of them.")
    keys = list(dict.fromkeys((f.op, f.nbytes) for f in found))
    body = [[op.replace("_", "-"), format_bytes(x), "; ".join(f.why for f in found if (f.op, f.nbytes) == (op, x))]
            for op, x in keys]
    return markdown_table(["collective", "size", "check failed"], body)


def regime_count_table(counts: Sequence[int]):
    """Markdown table: how often leave-one-out chose each number of regimes over the split-sweep fits
    (:func:`commlib.experiments.lab.regimes_chosen`), beside :func:`commlib.lab.explain.grade_sentence` with
    ``tally=False``."""
    check_count("counts", len(counts))
    body = [[k, f"{counts.count(k)} of {len(counts)}"] for k in sorted(set(counts))]
    return markdown_table(["regimes chosen", "split-sweep fits"], body)


def cache_table(step: tuple[float, float, float], sizes: Sequence[float], rates: Sequence[float],
                low: Sequence[float], high: Sequence[float], cpu_rates: Sequence[float] | None = None,
                faults: tuple[float, float] | None = None, op: str = "all-reduce", control: str = "copy control at"):
    """Markdown table: the copy control's rate per rank on either side of a collective's steepest ``step``
    (:func:`commlib.lab.fit.steepest_step`), median and middle half of its calls, in GB/s; beside
    :func:`commlib.lab.explain.cache_phrase` with ``short=True``. ``cpu_rates``: the same copies over their CPU
    time (:func:`commlib.lab.runner.copy_cpu_control`), a column; ``faults``: the collective's fresh pages per call
    below and above the step as fractions of the message (:func:`commlib.lab.runner.fault_fractions`), a column;
    ``control``: the first column's head (the rates may be read at the collective's footprint)."""
    at = {float(x): i for i, x in enumerate(sizes)}
    body = []
    for k, x in enumerate(step[:2]):
        if float(x) not in at:
            continue
        i = at[float(x)]
        row = [format_bytes(x), f"{rates[i] / 1e9:.1f}", f"{low[i] / 1e9:.1f} to {high[i] / 1e9:.1f}"]
        if cpu_rates is not None:
            row.append(f"{cpu_rates[i] / 1e9:.1f}")
        if faults is not None:
            row.append(explain.pages_words(faults[k]))  # as the prose words it
        body.append(row)
    head = [control, "rate per rank, median (GB/s)", "middle half of the calls (GB/s)"]
    if cpu_rates is not None:
        head.append("rate per CPU second, median (GB/s)")
    if faults is not None:
        head.append(f"{op}: fresh pages per call, share of the message")
    return markdown_table(head, body)


def fit_busbw_table(check: fit.RateCheck, factors: bool = True):
    """Markdown table: a fitted ``1/beta`` and the busbw measured at the largest size, each with its range, and
    (with ``factors``) the three factors that multiply to their ratio (:class:`commlib.lab.fit.RateCheck`); beside
    :func:`commlib.lab.explain.fit_busbw_sentence` with ``part="short"``."""
    size, algorithm = format_bytes(check.nbytes), check.algorithm.replace("_", "-")
    body = [[r"fitted $1/\beta$ (GB/s)", explain._gbs(check.fitted),
             f"{explain._gbs(check.fitted_range[0])} to {explain._gbs(check.fitted_range[1])} over the fit and its "
             f"{explain.about(check.splits) if check.splits else 'no'} refits"],
            [f"busbw measured at {size} (GB/s)", explain._gbs(check.busbw),
             f"{explain._gbs(check.busbw_range[0])} to {explain._gbs(check.busbw_range[1])} over the middle half "
             "of the calls"]]
    if factors and check.disagree and not math.isinf(check.fitted):
        body += [[f"factor: bytes busbw counts over bytes {algorithm} sends", f"{check.counts:.2f}", ""],
                 ["factor: share of the model's time spent on bytes", f"{check.byte_share:.2f}", ""],
                 ["factor: model's time over measured time", f"{check.miss:.2f}", ""],
                 ["busbw over fitted $1/\\beta$ (the factors' product)", f"{check.ratio:.2f}", ""]]
    return markdown_table(["quantity", "value", "range"], body)


def split_diagram(series: fit.Series, seed: int = 0, lo: float = 0.0):
    """Markdown: a text diagram of one way of holding sizes out (:func:`commlib.lab.fit.split_sizes` with
    ``seed``), the sizes of ``series`` across, one row for the sizes a fit sees (it trains on them, and
    leave-one-out on them picks the number of regimes) and one for the held-out sizes graded in the other sweep
    (from ``lo`` bytes; a held-out size below it is marked as not graded)."""
    fitted, held = fit.split_sizes(series, seed)
    names = [format_bytes(x).replace(" KiB", "K").replace(" MiB", "M").replace(" GiB", "G").replace(" B", "B")
             for x in series.nbytes]
    width = max(len(n) for n in names) + 1
    seen, out = set(fitted.nbytes), set(held.nbytes)
    rows = [("size", names),
            ("train, validate", ["x" if x in seen else "" for x in series.nbytes]),
            ("test (other sweep)", ["o" if x in out and x >= lo else "-" if x in out else "" for x in series.nbytes])]
    label = max(len(r[0]) for r in rows) + 2
    lines = [f"{head:<{label}}" + "".join(f"{c:>{width}}" for c in cells) for head, cells in rows]
    return Markdown("```text\n" + "\n".join(line.rstrip() for line in lines) + "\n```")


def three_rates_table(check: fit.RateCheck, copy_rate: float, copy_range: tuple[float, float], op: str = "all-reduce"):
    """Markdown table: the three rates that describe ``op`` (:func:`commlib.lab.explain.rates_lead`), each with its
    range, in GB/s: its bus bandwidth measured at the largest size, its single line's fitted ``1/beta``, and the copy
    control's rate per rank at that size (``copy_rate``, the middle half of its calls ``copy_range``, bytes/s); two
    last rows hold the bus bandwidth over the fitted rate and over the copy rate."""
    check_positive("copy_rate", copy_rate)
    size = format_bytes(check.nbytes)
    body = [[f"{op}: bus bandwidth measured at {size}", explain._gbs(check.busbw),
             f"{explain._gbs(check.busbw_range[0])} to {explain._gbs(check.busbw_range[1])} over the middle half "
             "of the calls"],
            [f"{op}: its single line's fitted $1/\\beta$", explain._gbs(check.fitted),
             f"{explain._gbs(check.fitted_range[0])} to {explain._gbs(check.fitted_range[1])} over the fit and its "
             f"{explain.about(check.splits) if check.splits else 'no'} refits"],
            [f"copy control at {size}, per rank", explain._gbs(copy_rate),
             f"{explain._gbs(copy_range[0])} to {explain._gbs(copy_range[1])} over the middle half of the calls"],
            [f"{op}'s bus bandwidth over its fitted $1/\\beta$ (the three factors' product)", f"{check.ratio:.2f}", ""],
            [f"{op}'s bus bandwidth over the copy rate", f"{check.busbw / copy_rate:.2f}", ""]]
    return markdown_table(["rate", "GB/s", "range"], body)


def ranks_rate_table(rate2: float, rate4: float, share2: float | None, share4: float | None,
                     ranks2: int = 2, ranks4: int = 4):
    """Markdown table: each run's busbw at the largest size, its share of its cores' time, and busbw over that
    share and over its square (two allowances for the load, neither tested by the run), with the ratio of the
    two runs under each reading in the last row; beside :func:`commlib.lab.explain.ranks_rate_sentence` with
    ``short=True``."""
    body = []
    for ranks, rate, share in ((ranks2, rate2, share2), (ranks4, rate4, share4)):
        s = 1.0 if share is None else round(min(share, 1.0), 2)  # as printed, and as the prose's arithmetic reads it
        body.append([ranks, f"{rate / 1e9:.2f}", "not reported" if share is None else f"{100 * s:.0f} %",
                     f"{rate / s / 1e9:.2f}", f"{rate / s**2 / 1e9:.2f}"])
    body.append([f"{ranks4} over {ranks2}", *(f"{explain._normalised(rate2, rate4, share2, share4, p):.2f}"
                                              if p is not None else "" for p in (0, None, 1, 2))])
    return markdown_table(["ranks", "busbw at the largest size (GB/s)", "share of the cores' time",
                           "busbw / share (GB/s)", "busbw / share² (GB/s)"], body)


def grades_table(rows: Sequence[tuple[str, str, float, float]]):
    """Markdown table of out-of-sample grades: per row the grade, the points held out, and the median miss of the
    single lines and of the regime fits (fractions, shown in per cent); beside
    :func:`commlib.experiments.lab.grades_short`."""
    return markdown_table(["grade", "points held out", "single lines' median miss", "regime fits' median miss"],
                          [[g, held, f"{100 * line:.0f} %", f"{100 * piece:.0f} %"] for g, held, line, piece in rows])


def ranks_table(rows: Sequence[tuple[str, float, Sequence[float], float, float, float]], small: float, large: float):
    """Markdown table of all-reduce on two and four ranks, one row per run (``rows``: label, the line's fitted
    alpha (s), each sweep's alpha fitted alone (s), the line's median miss on its own points (fraction), the time
    at ``small`` bytes (s) and the bus bandwidth at ``large`` bytes (bytes/s)); beside
    :func:`commlib.lab.explain.ranks_busbw_sentence`."""
    body = [[label, f"{1e6 * a:.1f}", " and ".join(explain.figures(1e6 * x) for x in sweeps), f"{100 * miss:.0f} %",
             explain.time_text(t), f"{bw / 1e9:.2f}"] for label, a, sweeps, miss, t, bw in rows]
    return markdown_table(["all-reduce", "α of the line (µs)", "each sweep alone (µs)", "line's median miss",
                           f"time at {format_bytes(small)}", f"busbw at {format_bytes(large)} (GB/s)"], body)


def size_range(sizes: Sequence[float]) -> str:
    """Measured sizes (bytes) in words: "1 KiB, 4 KiB and 16 KiB".

    >>> size_range([2**10, 2**12, 2**14]), size_range([2**20])
    ('1 KiB, 4 KiB and 16 KiB', '1 MiB')
    """
    if not sizes:
        raise ValueError("sizes must name at least one size")
    words = [format_bytes(x) for x in sizes]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def shared_table(rows: Sequence[tuple[str, str, tuple[float, float, float, float | None]]], size: float):
    """Markdown table of the shared-core thread-level control at ``size`` bytes, one row per launch (``rows``:
    placement, thread level, and :func:`commlib.lab.runner.spread_at`'s ``(q1, median, q3, cpu)`` in seconds);
    beside :func:`commlib.lab.explain.shared_level_sentence`.

    >>> print(shared_table([("two ranks on one core", "`MPI_THREAD_SINGLE`", (8e-3, 9.5e-3, 12e-3, 3.9e-3))], 1024).data)
    | all-reduce | thread level | median at 1 KiB | quartiles | CPU time per call (least busy rank) |
    | --- | --- | --- | --- | --- |
    | two ranks on one core | `MPI_THREAD_SINGLE` | 9.5 ms | 8.0 to 12 ms | 3.9 ms |
    """
    body = [[label, level, explain.time_text(med), explain.time_span([q1, q3]),
             "–" if cpu is None else explain.time_text(cpu)] for label, level, (q1, med, q3, cpu) in rows]
    return markdown_table(["all-reduce", "thread level", f"median at {format_bytes(size)}", "quartiles",
                           "CPU time per call (least busy rank)"], body)


def well_fitted_size(series: fit.Series, model: fit.AlphaBeta | fit.PiecewiseFit, lo: float = 2**20) -> str:
    """The measured size from ``lo`` up at which ``model`` misses ``series`` least, leaving out regimes fitted on
    two sizes (the calculator's default size, so that it opens where the fit meets the run), e.g. ``"4 MiB"``."""
    errors = fit.relative_errors(model, series)

    def fitted_on(x: float) -> int:  # a regime through two sizes meets them by construction: no grade of the fit
        first, last = predict.regime_sizes(model, series, x)
        return sum(1 for y in series.nbytes if first <= y <= last)

    at = [(abs(float(e)), x) for x, e in zip(series.nbytes, errors) if x >= lo and fitted_on(x) > 2]
    if not at:
        raise ValueError(f"series has no size from {format_bytes(lo)} up")
    return format_bytes(min(at)[1])


def price_drop_words(series: Sequence[fit.Series], models: Sequence[fit.AlphaBeta | fit.PiecewiseFit],
                     ranks: Sequence[int], what: str = "The regimes of each fit", every: str | None = None) -> str:
    """Where the fits ``models`` (paired with ``series`` as in :func:`model_calculator`) price a bigger message
    cheaper on any of ``ranks`` (:func:`commlib.lab.fit.price_drops`), named as the figures title each series;
    the sentence is :func:`commlib.lab.explain.price_drop_sentence`'s (``every``: the ranks in words, as there).

    >>> s = fit.Series("all_gather", 4, (1024.0, 4096.0, 65536.0, 262144.0), (1e-5, 2e-5, 5e-5, 1e-4))
    >>> pw = fit.PiecewiseFit((32768.0,), (fit.AlphaBeta(1e-5, 1e-9), fit.AlphaBeta(0.0, 1e-10)))
    >>> price_drop_words([s], [pw], [4])[100:]  # doctest: +ELLIPSIS
    'on 4 ranks it falls for all-gather at 32 KiB, to 0.045 of the price just below, ...'
    """
    if len(series) != len(models):
        raise ValueError(f"series and models must pair up one to one, got {len(series)} and {len(models)}")
    found = [(_short(s).split(", ")[0], d, n) for s, m in zip(series, models) for n in ranks
             for d in fit.price_drops(m, s.op, n, s.algorithm)]
    return explain.price_drop_sentence(found, ranks, what=what, every=every)


def broadcast_switch_sentence(series: Sequence[fit.Series] = (),
                              models: Sequence[fit.AlphaBeta | fit.PiecewiseFit] = ()) -> str:
    """Where MPICH's broadcast changes algorithm with the number of ranks (:data:`commlib.lab.mpich.THRESHOLDS`),
    and what that does to the calculator's broadcast price: with the fitted broadcast among ``series`` and
    ``models`` (paired as in :func:`model_calculator`), the smallest measured size from which, at every measured size
    up, the model prices a broadcast lower on the switch's rank count than on one rank fewer."""
    t = mpich.THRESHOLDS
    n = t["bcast_min_procs"]
    head = (f"From {n} ranks up MPICH broadcasts messages above {format_bytes(t['bcast_short_msg_size'])} by "
            "scatter + all-gather instead of the binomial tree (the all-gather by recursive doubling up to "
            f"{format_bytes(t['bcast_long_msg_size'])} on a number of ranks that is a power of two, by a ring "
            "otherwise; the calculator counts whichever MPICH picks), which sends fewer bytes along the critical "
            "path but takes more steps")
    pair = next(((s, m) for s, m in zip(series, models) if s.op == "broadcast"), None)
    if pair is None:
        return head + f", so the calculator's broadcast price can fall from {n - 1} ranks to {n}."
    s, m = pair
    sizes = sorted(s.nbytes)
    lower = [m.time(s.op, x, n, s.algorithm) < m.time(s.op, x, n - 1, s.algorithm) for x in sizes]
    first = next((i for i in range(len(sizes)) if all(lower[i:])), None)
    if first is None:
        return head + f", yet the calculator's broadcast price does not fall from {n - 1} ranks to {n} at its largest size."
    scope = f"for messages from {format_bytes(sizes[first])} up" if first > 0 else "at every measured size"
    return head + f", so the calculator's broadcast price falls at that switch {scope}."


# ----------------------------------------------------------------------------- a DDP step against chapter 5's model


def _ms(seconds: float) -> str:
    """Milliseconds, whole from 10 ms up and to two significant figures below: a step's timings move by several
    per cent from step to step, and the text quotes their quartiles beside them."""
    ms = 1e3 * seconds
    return f"{ms:.0f}" if ms >= 10 else explain.figures(ms, 2)


def _count(k: int) -> str:
    """A count as a word up to ten, in figures above."""
    return explain.about(k) if k <= 10 else str(k)


def _lanes(slots: Sequence[tuple[float, float]]) -> list[int]:
    """A lane for each interval, the lowest free one, so that intervals that overlap in time sit apart."""
    ends: list[float] = []
    lanes = []
    for start, end in slots:
        lane = next((k for k, e in enumerate(ends) if e <= start), len(ends))
        if lane == len(ends):
            ends.append(end)
        else:
            ends[lane] = end
        lanes.append(lane)
    return lanes


def ddp_timeline_figure(c, title: str = ""):
    """One DDP backward pass as chapter 5's model predicts it and as the profiler measured it on each rank (the
    overlapped step nearest the medians of its parts): the backward's computation as a bar up to the last gradient, a tick where
    each bucket was ready, and each bucket's all-reduce as a bar, in milliseconds from the start of the backward
    pass. Predicted rows are open, dashed bars, measured ones solid; all-reduces that gloo ran at the same time on one rank
    are drawn on rows of their own."""
    p, m = c.prediction, c.measurement
    rows = [("model: backward", [(0.0, p.t_backward)], PALETTE["blue"], "model", p.ready),
            ("model: all-reduces", list(p.slots), PALETTE["orange"], "model", ())]
    for rank, (ready, last, slots) in enumerate(m.timeline):
        rows.append((f"rank {rank}: backward", [(0.0, last)], PALETTE["blue"], "", ready))
        lanes = _lanes(slots)
        for k in range(max(lanes, default=0) + 1):
            rows.append((f"rank {rank}: all-reduces" + ("" if max(lanes, default=0) == 0 else f" ({k + 1})"),
                         [sl for sl, lane in zip(slots, lanes) if lane == k], PALETTE["orange"], "", ()))
    fig, ax = figure(7.6, 0.45 * len(rows) + 1.2)
    for i, (_label, bars, colour, style, ticks) in enumerate(rows):
        y = len(rows) - 1 - i
        model = style == "model"
        for start, end in bars:
            ax.barh(y, 1e3 * (end - start), left=1e3 * start, height=0.6, color="white" if model else colour,
                    edgecolor=colour if model else PALETTE["black"], ls="--" if model else "-",
                    lw=1.5 if model else 0.8)
        for t in ticks:
            ax.plot([1e3 * t] * 2, [y - 0.38, y + 0.38], color=PALETTE["black"] if model else "white", lw=1.2)
    ax.axvline(1e3 * p.t_backward, color=PALETTE["blue"], ls="--", lw=0.8)
    ax.set_yticks(range(len(rows)), [r[0] for r in reversed(rows)])
    drawn = ""
    if m.drawn:   # no step need sit at every median: say how far the drawn one is from them
        (last, last_m), (gap, gap_m), (after, after_m) = m.drawn
        drawn = (f"\nthe drawn step, and in brackets the median over all steps (ms):\nlast gradient {1e3 * last:.0f} "
                 f"({1e3 * last_m:.0f}), ranks apart {1e3 * gap:.0f} ({1e3 * gap_m:.0f}), communication after it "
                 f"{1e3 * after:.0f} ({1e3 * after_m:.0f})")
    ax.set_xlabel("ms from the start of the backward pass" + drawn)
    ax.set_xlim(left=0)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def _spread_ms(q) -> str:
    return f"{_ms(q[1])} ({_ms(q[0])} to {_ms(q[2])})"


def ddp_table(c) -> Markdown:
    """The four kinds of step, predicted and measured (ms; measured: the median and, in brackets, the middle half
    of the steps)."""
    p, m = c.prediction, c.measurement
    rows = [
        ("no all-reduces (no_sync): the model's input", "(input)", _spread_ms(m.step_q["local"])),
        ("DDP's own work, no communication (a hook that returns at once)", "not modelled",
         _spread_ms(m.step_q["ddp_noop"])),
        ("one bucket: one all-reduce after the backward", _ms(p.step("ddp_one")), _spread_ms(m.step_q["ddp_one"])),
        (f"{_count(len(p.bucket_bytes))} buckets, overlapped with the backward", _ms(p.step("ddp")),
         _spread_ms(m.step_q["ddp"])),
    ]
    return markdown_table(["step: forward and backward", "model, out of sample (ms)", "measured (ms)"], rows)


def ddp_parts_table(c) -> Markdown:
    """The overlapped step taken apart, predicted and measured (ms)."""
    p, m = c.prediction, c.measurement
    rows = [
        ("the forward pass", f"{_ms(p.t_forward)} (no_sync, input)", _ms(m.t_forward)),
        ("the backward's last gradient ready", f"{_ms(p.t_backward)} (no_sync backward's end, input)",
         _ms(m.compute_end)),
        ("the same, with DDP's own work alone (the hook that returns at once)", "not modelled",
         _ms(m.compute_end_noop)),
        ("a bucket, from ready on both ranks to reduced on both (median)", _ms(p.bucket_wait), _ms(m.bucket_wait)),
        ("the two ranks' last gradients apart (median)", "not modelled",
         f"{1e3 * m.skew:.0f} (DDP's own work alone: {1e3 * m.skew_noop:.0f})"),
        ("from the last gradient to every bucket reduced (the exposed communication)", _ms(p.exposed),
         _spread_ms(m.after_last_q)),
        ("the same, with DDP's own work alone (copying back from the buckets)", "not modelled",
         f"{1e3 * m.after_last_noop:.0f}"),
    ]
    # the controls to the whole millisecond: they move by a few from run to run
    return markdown_table(["the overlapped step", "model (ms)", "measured (ms)"], rows)


#: The quantities :func:`ddp_cores_table` sets side by side: a label and how to read it off a comparison (seconds).
_CORES_ROWS = (
    ("the forward pass, overlapped step", lambda c: c.measurement.t_forward),
    ("step with no all-reduces (no_sync), median", lambda c: c.measurement.step_q["local"][1]),
    ("step with DDP's own work alone (the hook that returns at once), median", lambda c: c.measurement.step_q["ddp_noop"][1]),
    ("one-bucket step, median", lambda c: c.measurement.step_q["ddp_one"][1]),
    ("overlapped step, median", lambda c: c.measurement.step_q["ddp"][1]),
    ("the backward's last gradient ready, overlapped step", lambda c: c.measurement.compute_end),
    ("the same, with DDP's own work alone", lambda c: c.measurement.compute_end_noop),
    ("a bucket, from ready on both ranks to reduced on both (median)", lambda c: c.measurement.bucket_wait),
    ("the two ranks' last gradients apart (median)", lambda c: c.measurement.skew),
    ("the exposed communication (median)", lambda c: c.measurement.after_last_q[1]),
    ("the same, with DDP's own work alone (copying back)", lambda c: c.measurement.after_last_noop),
    ("the overlap's saving against one bucket, median turn", lambda c: c.measurement.gain_q[1]),
)


def ddp_cores_table(fewer, more, labels: tuple[str, str] = ("two cores", "four cores")) -> Markdown:
    """The same DDP measurement on fewer and on more cores, several runs each, row by row (ms, to 0.1): each run's
    value, and whether the row moved. A row counts as moved only where every run on more cores lies beyond every run
    on fewer, since one run's value drifts from run to run by as much as the changes asked about; below the table,
    how often a row that did not move would still read as moved by chance (every order of the runs equally likely:
    2 of the C(a + b, a) orders put one side's runs all beyond the other's)."""
    if not fewer or not more:
        raise ValueError("fewer and more must each hold at least one run")
    rows = []
    for label, read in _CORES_ROWS:
        a, b = [read(c) for c in fewer], [read(c) for c in more]
        moved = "down" if max(b) < min(a) else "up" if min(b) > max(a) else "no clear change"
        rows.append((label, ", ".join(f"{1e3 * x:.1f}" for x in a), ", ".join(f"{1e3 * x:.1f}" for x in b), moved))
    chance = 2 / math.comb(len(fewer) + len(more), len(fewer))
    table = markdown_table(["measured (ms)", f"{labels[0]}, each run", f"{labels[1]}, each run",
                            f"{labels[1]} against {labels[0]}"], rows)
    return Markdown(f"{table.data}\n\nWith {_count(len(fewer))} runs against {_count(len(more))}, a row that did not "
                    f"move still reads as moved by chance once in {1 / chance:.0f} rows: a lone \"up\" or \"down\" "
                    "among the rows is no finding.")


def _pct5(fraction: float) -> str:
    """A share to the nearest 5 %, said to be about that: a step's error moves by several per cent from run to run."""
    return f"about {round(100 * abs(fraction) / 5) * 5:.0f} %"


def _against(error: float) -> str:
    """A predicted time set against the measured one: "about 30 % shorter than measured", or "within about 5 % of
    the measurement" where the share rounds to 0."""
    if round(100 * abs(error) / 5) == 0:
        return "within about 5 % of the measurement"
    return f"{_pct5(error)} {'shorter' if error < 0 else 'longer'} than measured"


def _gain_verdict(m) -> str:
    """What the overlap saved, turn by turn: 'paid' (the middle half of the gains above zero), 'cost' (below)
    or 'unclear' (the middle half spans zero)."""
    lo, _, hi = m.gain_q
    return "paid" if lo > 0 else "cost" if hi < 0 else "unclear"


def _explained(c) -> bool:
    """True if the one-bucket step's prediction, with DDP's own work and the line's miss at the whole gradient's
    size added (both measured), lands within the middle half of the measured one-bucket steps."""
    p, m = c.prediction, c.measurement
    if p.whole_measured is None:
        return False
    lo, _, hi = m.step_q["ddp_one"]
    return lo <= p.step("ddp_one") + m.own_q[1] + (p.whole_measured - p.whole_time) <= hi


def ddp_sentences(c, doc: dict) -> dict[str, str]:
    """The sentences chapter 8 reads off one DDP run, each chosen by what the run measured.

    ``setup`` what ran; ``buckets`` whether DDP's buckets were chapter 5's; ``turns`` how the kinds of step take
    turns; ``fit`` the line fitted on gloo alone, ``bucket_fit`` what it charges a bucket; ``verdict`` the overlapped step,
    predicted against measured; ``control`` the step without overlap, the same way, and ``control_parts`` what the
    model leaves out there; ``why_backward`` and ``why_comm`` where the overlapped step's time went; ``overlap``
    whether the overlap paid, turn by turn; ``machine`` where the run was made; ``noise`` a warning where a kind of
    step's middle half spans more than a quarter of its median (wider than in any reference run), else empty.
    """
    from ..lab import torch_ddp

    p, m = c.prediction, c.measurement
    setup = torch_ddp.Setup.from_dict(doc["setup"])
    n = int(doc["ranks"])
    weight, bias = setup.param_bytes()[0], setup.param_bytes()[1]
    cap = setup.bucket_mib * torch_ddp.MIB
    k = len(p.bucket_bytes)
    setup_words = (f"Each of the {_count(n)} ranks computes on one thread and trains {_count(setup.layers)} linear "
                   f"layers of {setup.width} × {setup.width} on a batch of {setup.batch} samples of its own.")
    turns_words = (f"The run takes turns: a turn is one step of each kind, in that order, each begun at a barrier "
                   f"that both ranks reach. It times {setup.steps} turns after {_count(setup.warmup)} untimed ones.")
    bucket_words = (
        f"A layer's gradient, weights and biases, is {format_bytes(weight)} + {format_bytes(bias)} of float32. "
        f"The lab sets DDP's bucket cap to {setup.bucket_mib:g} MiB (its default is 25 MiB); given explicitly, the "
        f"cap applies to the first bucket too. "
        + (f"A bucket closes once it holds at least its cap, so chapter 5's rule closes one after each layer: "
           f"{_count(k)} buckets. " if k == setup.layers and weight + bias >= cap else
           f"Chapter 5's rule gives {_count(k)} buckets. ")
        + ("In every measured overlapped step DDP all-reduced exactly those buckets."
           if torch_ddp.buckets_agree(doc) else
           "DDP's all-reduces did not carry those buckets' bytes, so the model's buckets are not DDP's.")
    )
    sizes = setup.gloo_sizes
    span = (" at sizes from below a bucket's to about the whole gradient's"
            if min(sizes) <= min(p.bucket_bytes) and max(sizes) >= 0.95 * sum(p.bucket_bytes) else
            f" at sizes from {format_bytes(min(sizes))} to {format_bytes(max(sizes))}")
    fit_words = ("The line comes from gloo's all-reduce timed by the same processes right after the steps," + span
                 + (" (leaving out the sizes the chapter's spread check finds time-slice-bound)" if p.left_out else "")
                 + (f". In the reference run it has α = {explain.figures(1e6 * p.fit.alpha, 1)} µs, poorly determined at "
                    f"sizes this large," if 2 * (n - 1) * p.fit.alpha > 0.05 * p.bucket_times[0] else
                    ". In the reference run its α is too small to determine at sizes this large,")
                 + f" and 1/β = {explain.figures(p.fit.bandwidth / 1e9, 2)} GB/s.")
    series = torch_ddp.gloo_series(doc)
    near = min(range(len(series.nbytes)), key=lambda i: abs(series.nbytes[i] / p.bucket_bytes[0] - 1))
    alone = series.seconds[near]
    bucket_fit_words = (f"Chapter 5's ring on {_count(n)} ranks charges a bucket {_count(2 * (n - 1))} start-ups of α "
                        f"and its bytes once at 1/β: {_ms(p.bucket_times[0])} ms, where gloo alone took "
                        f"{_ms(alone)} ms at {format_bytes(series.nbytes[near])}"
                        + ("; the line charges a bucket more than gloo took, so on this count the model's overlapped "
                           "step is, if anything, too long." if p.bucket_times[0] > alone else
                           "; the line charges a bucket less than gloo took."))
    err = c.error("ddp")
    verdict_words = (f"For the overlapped step the model predicts {_ms(p.step('ddp'))} ms. The overlapped steps took "
                     f"{_ms(m.step('ddp'))} ms (the middle half {_ms(m.step_q['ddp'][0])} to "
                     f"{_ms(m.step_q['ddp'][2])}): the model's step is {_against(err)}.")
    err_one = c.error("ddp_one")
    control_words = (f"The same line predicts the step without overlap, one bucket all-reduced after the backward, at "
                     f"{_ms(p.step('ddp_one'))} ms against {_ms(m.step('ddp_one'))} measured: {_against(err_one)}"
                     + (", a smaller miss than for the overlapped step." if abs(err_one) < abs(err) else "."))
    if p.whole_measured is not None and m.own_q[1] > 0:
        parts_words = (f"Two things the model leaves out are measured here. DDP's own work, the copies of each "
                       f"gradient into its bucket and back that its default setting makes, made a step about "
                       f"{1e3 * m.own_q[1]:.0f} ms longer with the hook that returns at once (the median over the "
                       f"turns; their middle half {1e3 * m.own_q[0]:.0f} to {1e3 * m.own_q[2]:.0f}). And the line is "
                       f"{'short of' if p.whole_time < p.whole_measured else 'above'} gloo's own "
                       f"time at the whole gradient's size: it gives {_ms(p.whole_time)} ms where gloo alone took "
                       f"{_ms(p.whole_measured)}. ")
        corrected = p.step("ddp_one") + m.own_q[1] + (p.whole_measured - p.whole_time)
        near = abs(corrected / m.step("ddp_one") - 1) < 0.05
        parts_words += (f"With both added, the prediction for the step without overlap lands "
                        f"{'close to the median of' if near else 'within the middle half of'} its measured steps: "
                        f"what the model misses there, it misses for known reasons."
                        if _explained(c) else
                        "Even with both added, the prediction for the step without overlap stays outside the middle "
                        "half of its measured steps.")
    else:
        parts_words = ""
    slower = m.compute_end - p.t_backward
    noop_part = max(0.0, m.compute_end_noop - p.t_backward)
    head = (f"Where did the overlapped step's time go? Its backward's last gradient was ready at "
            f"{_ms(m.compute_end)} ms, against {_ms(p.t_backward)} ms without all-reduces")
    if slower < 0.05 * p.t_backward:
        why_backward = head + ": the backward ran about as fast as without them."
    elif noop_part >= 0.9 * slower:
        why_backward = (head + f". DDP's own work accounts for that (with the hook that returns at once, "
                        f"{_ms(m.compute_end_noop)} ms): gloo's threads did not slow the backward further.")
    else:
        why_backward = (head + f". DDP's own work accounts for part of that (with the hook that returns at once, "
                        f"{_ms(m.compute_end_noop)} ms; in the one-bucket steps, where gloo ran only after the "
                        f"backward, {_ms(m.compute_end_one)} ms). The rest appeared only where gloo ran during the "
                        f"backward, most likely "
                        f"because its threads took turns with the backward on the same cores. The book has not tested "
                        f"this: it needs a run with more cores, which the exercise on four cores at the chapter's end "
                        f"asks for.")
    why_comm = (f"A bucket took {_ms(m.bucket_wait)} ms from being ready on both ranks to being reduced on both, "
                f"against {_ms(p.bucket_wait)} ms in the model"
                + (f"; and gloo had up to {explain.about(m.in_flight)} all-reduces in flight at once, on its worker threads "
                   f"(two by default in PyTorch 2.13), where the model sends the buckets one after another."
                   if m.in_flight > 1 else ".")
                + f" The ranks' last gradients were {1e3 * m.skew:.0f} ms apart, against {1e3 * m.skew_noop:.0f} ms "
                f"with DDP's "
                f"own work alone: " + ("the all-reduces slowed one rank's backward more than the other's."
                                       if m.skew_apart else "the middle halves of the two overlap, so this run shows "
                                       "no difference."))
    miss = m.step("ddp") - p.step("ddp")
    tail = m.after_last_q[1] - p.exposed
    # the parts to the whole millisecond: over the reference runs each moves by 30 to 50 %
    miss_words = (f"In all, the model's overlapped step is {_ms(miss)} ms short. About {_ms(slower)} ms of that is the "
                  f"slower backward, {1e3 * noop_part:.0f} ms of it DDP's own work; about {1e3 * tail:.0f} ms is "
                  f"communication left after the last gradient beyond the model's, "
                  + (f"{1e3 * m.after_last_noop:.0f} ms of which DDP's copies back from the buckets take even when nothing "
                     f"is sent" if m.after_last_noop < tail else
                     f"no more than DDP's copies back from the buckets take even when nothing is sent "
                     f"({1e3 * m.after_last_noop:.0f} ms)")
                  + ". The parts are medians of different quantities, so they need not add up exactly, and each moves by "
                    "a few milliseconds from run to run."
                  if miss > 0 and tail > 0 else "")
    noisy = [name for kind, name in (("local", "no_sync"), ("ddp_noop", "do-nothing hook"), ("ddp_one", "one-bucket"),
                                      ("ddp", "overlapped")) if m.step_q[kind][2] - m.step_q[kind][0] > 0.25 * m.step(kind)]
    listed = ", ".join(noisy[:-1]) + " and " + noisy[-1] if len(noisy) > 1 else "".join(noisy)
    noise_words = (f"In this run the middle half of the {listed} steps spans more than a quarter of their "
                   f"median, wider than in any reference run: something else took the cores from time to time, so "
                   f"this run cannot tell gloo's share of them from that, and its comparisons rank nothing."
                   if noisy else "")
    verdict = _gain_verdict(m)
    predicted_gain = p.step("ddp_one") - p.step("ddp")
    median_turn = (f"the median turn saved {1e3 * m.gain_q[1]:.0f} ms" if m.gain_q[1] >= 0 else
                   f"in the median turn it was {-1e3 * m.gain_q[1]:.0f} ms slower")
    overlap_words = (f"Did the overlap pay? Turn by turn, the overlapped step beat the one-bucket step in "
                     f"{m.gain_turns} of {m.turns} turns, and {median_turn} (the median of the turns' savings, "
                     f"not the gap between the two medians of the first table), where the model predicts a saving of "
                     f"{_ms(predicted_gain)} ms. "
                     + {"paid": "The middle half of the gains lies above zero: the overlap paid"
                                + (", if less than the model says." if m.gain_q[1] < predicted_gain else "."),
                        "cost": "The middle half of the gains lies below zero: here the overlap cost more than it "
                                "hid.",
                        "unclear": "The middle half of the gains spans zero: on these shared cores the gain the "
                                   "model promises was not reliable."}[verdict])
    facts = {**doc["machine"], "load_average_before": doc.get("load_average_before"), "date": doc.get("date"),
             "torch": doc.get("torch")}
    cores = int(doc["cpu_count"])
    shared = ((f"all {cores} of its cores" if cores > 2 else "both of its cores")
              if cores == int(doc["machine"].get("cpu_count") or 0) else f"{explain.about(cores)} of its cores")
    machine_words = f"made on {explain.machine_words(facts)}, its {explain.about(n)} ranks sharing {shared}"
    return {"setup": setup_words, "buckets": bucket_words, "turns": turns_words, "fit": fit_words,
            "bucket_fit": bucket_fit_words,
            "verdict": verdict_words,
            "control": control_words,
            "control_parts": parts_words, "why_backward": why_backward, "why_comm": why_comm, "miss": miss_words,
            "noise": noise_words,
            "overlap": overlap_words, "machine": machine_words}


def _range(values, show) -> str:
    """The spread of several numbers, each as ``show`` writes it: "X" if they all read alike, else "X to Y"."""
    shown = [show(v) for v in sorted(values)]
    return shown[0] if shown[0] == shown[-1] else f"{shown[0]} to {shown[-1]}"


def _range_pct5(fractions) -> str:
    """The spread of several shares, each to the nearest 5 %: "30 %" or "30 to 35 %"."""
    values = sorted(round(100 * abs(f) / 5) * 5 for f in fractions)
    return f"{values[0]} %" if values[0] == values[-1] else f"{values[0]} to {values[-1]} %"


def ddp_runs_words(comparisons, setup_doc: dict, reference: bool = True) -> dict[str, str]:
    """What several runs of the same DDP measurement say together: ``fit_runs`` the gloo line's spread over the runs,
    ``runs`` the spread of the model's errors, ``gain_runs`` that of what the overlap saved, ``summary`` what holds
    over the runs in one paragraph beside :func:`ddp_runs_table`, and ``takeaway`` the
    lesson, scoped to the runs' setup. ``reference``: the runs are the book's stored reference run and its
    repeats (else runs made here, in turns with others)."""
    if not comparisons:
        raise ValueError("comparisons must hold at least one run")
    k = len(comparisons[0].prediction.bucket_bytes)
    runs = len(comparisons)
    fits = [c.prediction.fit for c in comparisons]
    fit_runs = (f"Over the {_count(runs)} {'reference ' if reference else ''}runs the line's 1/β ranged from "
                f"{_range([f.bandwidth for f in fits], lambda b: explain.figures(b / 1e9, 2))} "
                f"GB/s, and its α, poorly determined at sizes this large, over "
                f"{_range([f.alpha for f in fits], lambda a: explain.figures(1e6 * a, 1))} µs.")
    fast = all(c.error("ddp") < 0 for c in comparisons)
    verdicts = [_gain_verdict(c.measurement) for c in comparisons]
    common = max(set(verdicts), key=verdicts.count)
    count = verdicts.count(common)
    agree = "in every run" if count == runs else f"in {_count(count)} of the {_count(runs)}"
    explained = sum(_explained(c) for c in comparisons)
    gain_words = {"paid": "the overlap paid, if less than the model says",
                  "unclear": "the overlap's gain was unclear (its middle half spanning zero)",
                  "cost": "the overlap cost more than it hid"}
    runs_words = ((f"The reference DDP run was made {_count(runs)} times in a row on its machine, each begun right "
                   f"after the one before (so the later ones began at a higher load average, which counts the run "
                   f"before). For" if reference else f"Over these {_count(runs)} runs, for") + " the overlapped "
                  f"step the model's step was {_range_pct5([c.error('ddp') for c in comparisons])} "
                  f"{'shorter' if fast else 'off'} than measured; for the step without overlap, "
                  f"{_range_pct5([c.error('ddp_one') for c in comparisons])} "
                  f"{'shorter' if all(c.error('ddp_one') < 0 for c in comparisons) else 'off'} (each rounded to "
                  f"the nearest 5 %), "
                  + ("and with DDP's own work and the line's miss added it landed within the middle half of the "
                     f"measured steps {'in every run' if explained == runs else f'in {_count(explained)} of them'}"
                     if explained else "and not within the middle half of the measured steps even with DDP's own "
                     "work and the line's miss added")
                  + ".")
    gains = [c.measurement.gain_q[1] for c in comparisons]
    promised = [c.prediction.step("ddp_one") - c.prediction.step("ddp") for c in comparisons]
    def whole_ms(x: float) -> str:
        return f"{1e3 * x:.0f}".replace("-", "−")

    saved = (f"from {whole_ms(-min(gains))} ms lost to {whole_ms(max(gains))} ms saved" if min(gains) < 0 else
             f"from {whole_ms(min(gains))} to {whole_ms(max(gains))} ms saved")
    gain_runs = (f"Turn by turn, {gain_words[common]} {agree}: the median turn ranged over the runs {saved}, where "
                 f"the model, with its fitted line, promised {whole_ms(min(promised))} to {whole_ms(max(promised))} "
                 f"ms.")
    share = max(g / q for g, q in zip(gains, promised) if q > 0) if any(q > 0 for q in promised) else 0.0
    failed = all(c.measurement.compute_end - c.measurement.compute_end_noop > 0.1 * c.prediction.t_backward
                 for c in comparisons)
    takeaway = ("Chapter 5's overlap model assumes that communication and computation do not slow each other down. "
                f"In this lab's runs ({_count(k)} buckets, one compute thread a rank, "
                f"{explain.about(setup_doc['cpu_count'])} cores shared with gloo's threads, the machine otherwise "
                f"idle) "
                + ("that premise failed: beyond DDP's own copies, the backward slowed only where gloo ran during it, "
                   "most likely because the two shared the cores (the cause, rather than memory bandwidth or caches, "
                   "is untested here). " if failed else
                   "the backward did not slow reliably beyond DDP's own copies where gloo ran during it. ")
                + f"Against one bucket, the overlap's median turn ranged over the {_count(runs)} runs {saved}, where the "
                f"model promised {whole_ms(min(promised))} to {whole_ms(max(promised))} ms"
                + ("; in no run did the median turn reach more than about half of the promise" if share <= 0.55
                   else ""))
    summary = ((f"The reference DDP run was made {_count(runs)} times in a row on its machine, each begun right after "
                f"the one before (so the later ones began at a higher load average, which counts the run before); "
                f"the table gives each run's numbers. " if reference else
                f"Over these {_count(runs)} runs, the table gives each run's numbers. ")
               + f"Turn by turn, {gain_words[common]} {agree}; and "
               + ("with DDP's own work and the line's miss added, the prediction for the step without overlap landed "
                  f"within the middle half of its measured steps "
                  f"{'in every run' if explained == runs else f'in {_count(explained)} of them'}."
                  if explained else "even with DDP's own work and the line's miss added, the prediction for the step "
                  "without overlap stayed outside the middle half of its measured steps."))
    return {"fit_runs": fit_runs, "runs": runs_words, "gain_runs": gain_runs, "summary": summary,
            "takeaway": takeaway}


def ddp_runs_table(comparisons) -> Markdown:
    """Each run of the same DDP measurement in a row: the model's misses (to the nearest 5 %), what the overlap saved
    in the median turn against what the model promised, and the 1/β of the gloo line it was fitted with (its α,
    poorly determined at sizes this large, is left to the runs' sentence, :func:`ddp_runs_words`)."""
    if not comparisons:
        raise ValueError("comparisons must hold at least one run")

    def pct(f: float) -> str:
        return f"{round(100 * f / 5) * 5:+.0f} %".replace("-", "−")

    rows = []
    for i, c in enumerate(comparisons):
        p, m = c.prediction, c.measurement
        promised = p.step("ddp_one") - p.step("ddp")
        rows.append((str(i + 1), pct(c.error("ddp")), pct(c.error("ddp_one")),
                     f"{1e3 * m.gain_q[1]:.0f}".replace("-", "−"), f"{1e3 * promised:.0f}",
                     explain.figures(p.fit.bandwidth / 1e9, 2)))
    return markdown_table(["run", "model's step against measured: overlapped", "the same: one bucket",
                           "overlap's saving, median turn (ms)", "saving the model promised (ms)", "1/β (GB/s)"], rows)
