"""Pictures of the collectives, drawn from runs of their executable versions.

The runs are made in the model layer, :mod:`commlib.experiments.collectives`
(which calls :mod:`commlib.collectives.simulate`); every figure, animation and table
here takes such a run as input and draws what it did: the values each rank
holds come from the returned buffers and snapshots, the arrows from the
trace's messages. Nothing is drawn from a hand-made script.

Values the reader can follow: rank ``r`` starts with chunk ``j`` equal to
``j * 10**r``, chunks numbered 1 to n in the pictures
(:func:`commlib.experiments.collectives.digit_inputs`; the code numbers them from 0),
so in any sum the digit in place ``r`` records rank ``r``'s contribution and its
value the chunk -- ``1111`` is chunk 1 summed over four ranks, ``220`` is chunk 2
of ranks 1 and 2 only. Cells are
coloured by who contributed: one rank's own value in that rank's colour
(hatched from the sixth rank on), partial sums in light grey, complete sums in
dark blue (Okabe-Ito palette; no rank is blue).

Animations are returned as matplotlib ``FuncAnimation`` objects; a chapter
shows them with :func:`commlib.views.animation.to_html`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from .. import cost, hardware
from ..collectives import algorithms, calculators, cluster, compare
from ..collectives import simulate as collectives
from ..collectives.trace import Trace
from ..experiments.collectives import (
    ORDER_BLOCK,
    PARTNER_ALGORITHMS,
    PRIMITIVES,
    TORUS4_CYCLES,
    HotspotCounts,
    MasterRow,
    OperatorRun,
    OrderCount,
    PartnerRuns,
    PipelineSend,
    PrimitiveRun,
    ReduceRow,
    ReduceRuns,
    RingRun,
    RoundingRun,
    TraceFormulaRuns,
    contributors,
    rounding_bound,
)
from ..units import check_count, format_rate, format_size, format_time
from .calculator import Calculator, dropdown, integer, make_calculator, number, text
from .plots import COLORS, MARKERS, PALETTE, figure, style
from .tables import markdown_table

__all__ = [
    "short_name",
    "winner_words",
    "PRIMITIVES",
    "reduce_animation",
    "reduce_labels",
    "reduce_steps_table",
    "master_table",
    "algorithm_terms_table",
    "operator_table",
    "rounding_table",
    "order_table",
    "ratio_text",
    "primitives_figure",
    "primitive_report",
    "primitive_calculator",
    "buffer_table",
    "naive_hotspot_figure",
    "pipeline_phases",
    "pipeline_figure",
    "PIPELINE_PHASE_WORDS",
    "MASTER_PHASE_WORDS",
    "ring_allreduce_animation",
    "ring_allreduce_strip",
    "ring_key_frames",
    "ring_legend_handles",
    "ring_labels",
    "trace_formula_table",
    "ring_scaling_figure",
    "coefficients_table",
    "comparison_figure",
    "fold_loss_words",
    "double_binary_tree_figure",
    "hierarchical_figure",
    "torus_figure",
    "NIC_CHOICES",
    "cluster_report",
    "cluster_calculator",
    "host_bounds",
    "bandwidth_converter",
]

#: Colours of single-rank values (light enough for black text); dark blue is kept for complete sums, so
#: no blue is a rank's (sky blue and dark blue are hard to tell apart). Ranks from the sixth on repeat the
#: colours with a hatch (:func:`_rank_fill`), so every rank of up to ten looks different.
_RANK_COLORS = [PALETTE[k] for k in ("orange", "green", "purple", "yellow", "vermillion")]
_RANK_HATCHES = ("", "//")
_LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1))]
_PARTIAL = "#DDDDDD"
_FULL = PALETTE["blue"]


# --- cells coloured by who contributed -------------------------------------------------------------

def _rank_fill(rank: int) -> dict:
    """Face colour and hatch of rank ``rank``'s cells: a colour of its own, hatched from the sixth rank on."""
    k = len(_RANK_COLORS)
    return {"facecolor": _RANK_COLORS[rank % k], "hatch": _RANK_HATCHES[(rank // k) % len(_RANK_HATCHES)]}


def _cell_style(value, n: int) -> tuple[str, str]:
    """(fill colour, text colour) for one cell."""
    who = contributors(value, n)
    if not who:
        return "white", "black"
    if len(who) == 1:
        return _RANK_COLORS[next(iter(who)) % len(_RANK_COLORS)], "black"
    if len(who) == n:
        return _FULL, "white"
    return _PARTIAL, "black"


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return ""
    return f"{float(value):g}"


def _draw_buffer(ax, x: float, y: float, values, n: int, width: float = 0.5, height: float = 0.4,
                 highlight: Sequence[int] = (), fontsize: float = 8, slots: int | None = None) -> None:
    """One rank's buffer as a row of cells with the values written in; empty slots dashed."""
    values = [] if values is None else list(np.asarray(values, dtype=float).ravel())
    slots = max(len(values), slots or 0)
    for i in range(slots):
        value = values[i] if i < len(values) else None
        fill, ink = _cell_style(value, n) if value is not None else ("white", "black")
        who = contributors(value, n) if value is not None else frozenset()
        hatch = _rank_fill(next(iter(who)))["hatch"] if len(who) == 1 else ""
        edge_w = 2.2 if i in highlight else 0.7
        ax.add_patch(Rectangle((x + i * width, y), width, height, facecolor=fill, edgecolor="black",
                               linewidth=edge_w, linestyle="-" if value is not None else ":", hatch=hatch))
        if value is not None:
            ax.text(x + (i + 0.5) * width, y + height / 2, _fmt(value), ha="center", va="center",
                    fontsize=fontsize, color=ink)


# --- chapter 1: reduce, serial vs tree -------------------------------------------------------------

def reduce_labels(n: int) -> list[str]:
    """Frame labels of :func:`reduce_animation` for ``n`` values."""
    n = check_count("n", n, minimum=2)
    return ["start"] + [f"step {k}" for k in range(1, n)]


def reduce_animation(runs: ReduceRuns) -> FuncAnimation:
    """Serial reduce (left) against tree reduce (right), one frame per step.

    Both panels are replays of the runs of
    :func:`commlib.experiments.collectives.reduce_runs` (serial chain and
    binomial tree of :func:`commlib.collectives.simulate.reduce`): the serial chain needs ``n - 1``
    steps, the tree ``ceil(log2 n)``; after the tree is done its panel waits
    while the chain goes on. Steps still to come are drawn as dotted boxes
    marked "?", so every frame shows the whole schedule and fills its area.
    Frames: ``n`` (the start, then one per serial step).

    Sizes are chosen for the offline player (80 dpi, shown about 700 px
    wide): values and titles at 14 pt, about 13 px on screen.
    """
    values, op = list(runs.values), runs.op
    n = check_count("number of values", len(values), minimum=2, maximum=16)
    serial, tree = runs.serial, runs.tree
    style()
    fig, axes = plt.subplots(1, 2, figsize=(10, 5.0))
    fig.subplots_adjust(left=0.005, right=0.995, top=0.85, bottom=0.02, wspace=0.03)
    depth_s, depth_t = len(serial), len(tree)
    box = "round,pad=0.3"

    def panel(ax, steps, shown: int, title: str, chain: bool):
        ax.clear()
        ax.set_xlim(-1.95, n - 0.45)
        ax.set_ylim(-max(depth_s, 1) - 0.55, 0.55)
        ax.axis("off")
        ax.set_title(title, fontsize=14)
        pos = {r: (r, 0.0) for r in range(n)}
        for r, v in enumerate(values):
            ax.text(r, 0, _fmt(v), ha="center", va="center", fontsize=14,
                    bbox=dict(boxstyle=box, ec="black", **_rank_fill(r)))
        for k, moves in enumerate(steps, start=1):
            y = -k
            done, current = k <= shown, k == shown
            for src, dst, new in moves:
                x = src if chain else dst       # the serial chain walks right, the tree stays at the receiver
                for who in (src, dst):
                    x0, y0 = pos[who]
                    ax.annotate("", xy=(x, y + 0.28), xytext=(x0, y0 - 0.28),
                                arrowprops=dict(arrowstyle="->", lw=1.8 if current else 1.0,
                                                ls="-" if done else ":",
                                                color="black" if current else "0.5" if done else "0.75"))
                if done:
                    last = k == len(steps)
                    ax.text(x, y, _fmt(new), ha="center", va="center", fontsize=14,
                            color="white" if last else "black",
                            bbox=dict(boxstyle=box, fc=_FULL if last else _PARTIAL, ec="black",
                                      lw=2.2 if current else 0.9))
                else:
                    ax.text(x, y, "?", ha="center", va="center", fontsize=14, color="0.6",
                            bbox=dict(boxstyle=box, fc="white", ec="0.6", ls=":"))
                pos[dst] = (x, y)
            ax.text(-1.9, y, f"step {k}", ha="left", va="center", fontsize=12,
                    color="0.2" if done else "0.55")

    def draw(frame: int):
        panel(axes[0], serial, min(frame, depth_s),
              f"serial: {min(frame, depth_s)} of {depth_s} steps", True)
        panel(axes[1], tree, min(frame, depth_t),
              f"tree: {min(frame, depth_t)} of {depth_t} steps" + ("  (done)" if frame >= depth_t else ""), False)
        fig.suptitle(f"reduce with {op} over {n} values: frame {frame} of {depth_s}", fontsize=15)
        return []

    draw(0)
    return FuncAnimation(fig, draw, frames=range(depth_s + 1), interval=900, blit=False)


def reduce_steps_table(counts: Sequence[tuple[int, int, int, int]]):
    """Markdown table: serial and tree reduce steps counted from the traces, next to ceil(log2 n).

    ``counts`` are the rows of :func:`commlib.collectives.compare.reduce_step_counts`:
    ``(n, serial steps, tree steps, formula tree steps)``.
    """
    rows = [[n, serial, tree, formula] for n, serial, tree, formula in counts]
    return markdown_table(["values n", "serial steps (trace)", "tree steps (trace)", "tree steps, formula"],
                          rows, caption="Reduce: serial chain vs binomial tree")


def _link_words(link: str) -> str:
    item = hardware.link(link)
    return (f"over {item.name} ({format_rate(item.bandwidth, significant=4)} per direction, alpha = "
            f"{format_time(item.latency, significant=3)} a message)")


def reduce_comparison_table(rows: Sequence[ReduceRow], short: float, long: float, link: str = "eth_25g"):
    """Markdown table: the unpipelined binomial tree against reduce-scatter + gather over n, where they cross, and
    the chain pipelined at its best chunk count on the long vector.

    ``rows`` are :func:`commlib.experiments.collectives.reduce_comparison`'s, run with vectors of ``short``
    and ``long`` bytes on ``link``.
    """
    def t(seconds):
        return format_time(seconds, significant=3)

    body = []
    for r in rows:
        cross = "none: the tree is faster at every size" if math.isnan(r.crossover) else format_size(r.crossover, significant=3)
        body.append([r.n, t(r.tree_short), t(r.split_short), t(r.tree_long), t(r.split_long),
                     f"{t(r.chain_long)} (q = {r.chain_chunks})", cross])
    s, m = format_size(short, binary=True, significant=3), format_size(long, binary=True, significant=3)
    headers = ["ranks n", f"tree, {s}", f"reduce-scatter + gather, {s}", f"tree, {m}", f"reduce-scatter + gather, {m}",
               f"pipelined chain, {m} (best q)", "size M above which reduce-scatter + gather beats the tree"]
    return markdown_table(headers, body, caption="Reduce: unpipelined binomial tree vs reduce-scatter + gather, and "
                                                 "the chain pipelined over its best chunk count q, "
                                                 + _link_words(link))


def master_table(rows: Sequence[MasterRow], nbytes: float, n: int, link: str):
    """Markdown table: the master one message at a time, pipelined, and the ring
    (:func:`commlib.experiments.collectives.master_comparison`'s rows for ``nbytes`` on ``n`` ranks over ``link``)."""
    ring = next(r.seconds for r in rows if r.chunks is None)
    body = [[r.name, "-" if r.chunks is None else r.chunks, format_time(r.seconds, significant=3),
             f"{r.seconds / ring:.1f}"] for r in rows]
    caption = (f"All-reduce of M = {format_size(nbytes, binary=True, significant=3)} on n = {n} ranks "
               + _link_words(link))
    return markdown_table(["all-reduce", "chunks q", "time", "times the ring's"], body, caption=caption)


def _b_text(b: float, n: int) -> str:
    """b / M as a fraction over n where it is one (7/8), else as a number."""
    from fractions import Fraction

    f = Fraction(b).limit_denominator(64 * n)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def algorithm_terms_table(n: int = 8):
    """Markdown table: each algorithm of the primitive calculator, its start-ups a and bytes b (in units of M)
    on ``n`` ranks, from :func:`commlib.cost.collective_terms`; forms for powers of two only left out elsewhere."""
    body = []
    for op, names in calculators.PRIMITIVE_ALGORITHMS.items():
        for name in names:
            record = algorithms.algorithm(op, name)
            try:
                record.checked(n)
            except ValueError:
                continue
            terms = cost.collective_terms(op, 1.0, n, name)
            body.append([op.replace("_", "-"), record.label, terms.steps, _b_text(terms.bytes, n)])
    return markdown_table(["collective", "algorithm", "start-ups a", "bytes b (times M)"], body,
                          caption=f"T = a alpha + b beta on n = {n} ranks, the start-ups and bytes the calculator counts")


def rounding_table(runs: Sequence[RoundingRun]):
    """Markdown table: how far apart the serial and the tree sum land in each format.

    ``runs`` are :func:`commlib.experiments.collectives.rounding_runs`'s. Each order's bound is the rigorous
    one, :func:`commlib.experiments.collectives.rounding_bound`, not its first-order form.
    """
    n, seeds = runs[0].n, runs[0].seeds
    levels = math.ceil(math.log2(n))
    body = [[r.name, f"{r.unit:.1e}", f"{r.serial_error:.1e}", f"{rounding_bound(n - 1, r.unit):.3g}",
             f"{r.tree_error:.1e}", f"{rounding_bound(levels, r.unit):.3g}", f"{r.gap:.1e}"] for r in runs]
    headers = ["format", "unit roundoff u_fp", "serial: largest error / sum",
               "its bound (n - 1) u_fp / (1 - (n - 1) u_fp)", "tree: largest error / sum",
               "its bound ceil(log2 n) u_fp / (1 - ceil(log2 n) u_fp)", "largest |serial - tree| / sum"]
    return markdown_table(headers, body,
                          caption=f"{n:,} uniform values in [0, 1), summed serially and as a tree "
                                  f"(largest over {seeds} seeds)")


def ratio_text(ratio: float, low: float, high: float) -> str:
    """A ratio of medians quoted no finer than it moves from one set of seeds to another, ``low`` to ``high``:
    rounded to the smallest step of 0.1, 0.2, 0.5, 1, 2, 5, 10, ... as wide as that spread, as "about 3"; where
    the rounded value falls outside the spread, as the spread alone, "between about 1.2 and 1.8". One rule for
    every row: a row with many tied seeds moves more, and so is quoted more coarsely, never more finely.

    >>> ratio_text(2.62, 2.26, 3.2), ratio_text(1.48, 1.3, 1.56), ratio_text(10.65, 9.21, 13.49)
    ('about 3', 'about 1.5', 'about 10')
    >>> ratio_text(1.39, 1.19, 1.77)
    'between about 1.2 and 1.8'
    """
    if not 0 < low <= ratio <= high < math.inf:
        raise ValueError(f"ratio: must be positive and within its spread low..high, got {ratio} in {low}..{high}")
    spread = high - low
    exponent = math.floor(math.log10(spread)) if spread > 0 else math.floor(math.log10(ratio)) - 1
    step = next(m * 10.0**e for e in (exponent, exponent + 1) for m in (1, 2, 5) if m * 10.0**e >= spread)
    value = round(ratio / step) * step
    if low <= value <= high:
        return f"about {float(f'{value:.6g}'):g}"
    return f"between about {low:.2g} and {high:.2g}"


def order_table(counts: Sequence[OrderCount]):
    """Markdown table: on how many seeds the tree order errs less than the serial one, by format and n.

    ``counts`` are :func:`commlib.experiments.collectives.order_count` s of the accuracy claims; the ratio of
    the medians over all seeds comes with its smallest and largest value over blocks of seeds, and is quoted no
    finer than that spread (:func:`ratio_text`).
    """
    def ratio(c: OrderCount) -> str:
        value = ratio_text(c.ratio, c.ratio_low, c.ratio_high)
        return value if value.startswith("between") else f"{value} ({c.ratio_low:.2g} to {c.ratio_high:.2g})"

    body = [[c.name, f"{c.n:,}", f"{c.less}", f"{c.same}", f"{c.more}", f"{c.serial_median:.1e}",
             f"{c.tree_median:.1e}", ratio(c)] for c in counts]
    headers = ["format", "values n", "tree errs less", "as much", "tree errs more",
               "serial: median error / sum", "tree: median error / sum",
               f"ratio of the medians (smallest to largest over blocks of {ORDER_BLOCK} seeds)"]
    seeds = counts[0].seeds if counts else 0
    return markdown_table(headers, body,
                          caption=f"Uniform values in [0, 1), summed serially and as a tree: on how many of {seeds} "
                                  f"seeds the tree order errs less than the serial one, as much and more")


def operator_table(runs: Sequence[OperatorRun]):
    """Markdown table: each operator reduced serially and as a tree (:func:`commlib.experiments.collectives.operator_runs`)."""
    rows = []
    for run in runs:
        same = "yes" if run.serial == run.tree else "**no**"
        rows.append([collectives.OP_NAMES[run.op], run.serial_expression, f"{run.serial:g}", run.tree_expression, f"{run.tree:g}", same])
    headers = ["operator", "serial grouping", "serial result", "tree grouping", "tree result", "same?"]
    return markdown_table(headers, rows, caption="Serial vs tree order, run on real values")


# --- chapter 1: the eight primitives -----------------------------------------------------------

def primitives_figure(runs: Mapping[str, PrimitiveRun]):
    """Before and after of each primitive on ``n`` ranks, two primitives to a row.

    ``runs`` maps each primitive's name to its run on the same ``n`` ranks
    (:func:`commlib.experiments.collectives.primitive_runs`). Each panel pair
    shows every rank's buffer before the call (left) and after it (right),
    as returned by :mod:`commlib.collectives.simulate`.
    """
    names = list(runs)
    if not names:
        raise ValueError("runs must hold at least one primitive's run")
    n = check_count("n", len(runs[names[0]].inputs), minimum=2, maximum=6)
    rows = math.ceil(len(names) / 2)
    style()
    fig, axes = plt.subplots(rows, 2, figsize=(11, 2.0 + 0.55 * n * rows * 0.75))
    axes = np.atleast_2d(axes)
    w, h = 0.42, 0.62
    for k, ax in enumerate(axes.ravel()):
        ax.axis("off")
        if k >= len(names):
            continue
        name = names[k]
        inputs, outputs = runs[name]
        gap = n * w + 1.4
        ax.set_xlim(-0.9, 2 * gap - 0.2)
        ax.set_ylim(-n * (h + 0.15) - 0.1, 0.75)
        ax.set_title(name.replace("_", "-"), fontsize=11, fontweight="bold")
        ax.text(n * w / 2, 0.35, "before", ha="center", fontsize=8)
        ax.text(gap + n * w / 2, 0.35, "after", ha="center", fontsize=8)
        for r in range(n):
            y = -(r + 1) * (h + 0.15)
            ax.text(-0.15, y + h / 2, f"rank {r}", ha="right", va="center", fontsize=7.5)
            _draw_buffer(ax, 0, y, inputs[r], n, w, h, slots=1 if inputs[r] is None else None, fontsize=7)
            out = outputs[r]
            if out is not None and np.all(np.isnan(out)):
                out = None
            _draw_buffer(ax, gap, y, out, n, w, h, slots=1 if out is None else None, fontsize=7)
        ax.annotate("", xy=(gap - 0.35, -n * (h + 0.15) / 2), xytext=(n * w + 0.25, -n * (h + 0.15) / 2),
                    arrowprops=dict(arrowstyle="->", lw=1.5))
    fig.tight_layout()
    return fig


def buffer_table(runs: Sequence[tuple[compare.BufferSizes, compare.BufferSizes]]):
    """Markdown table of send and receive buffer sizes, all-gather vs all-to-all, measured by running them.

    ``runs`` holds ``(all-gather, all-to-all)`` sizes per n, as
    :func:`commlib.experiments.collectives.buffer_runs` returns them; the
    sendcount in the caption is what an all-gather rank sends.
    """
    if not runs:
        raise ValueError("runs must hold at least one n's buffer sizes")
    rows = [[ag.n, ag.send, ag.recv, a2a.send, a2a.recv] for ag, a2a in runs]
    count = runs[0][0].send
    headers = ["ranks n", "all-gather send (elements)", "all-gather receive (elements)",
               "all-to-all send (elements)", "all-to-all receive (elements)"]
    return markdown_table(headers, rows, caption=f"Buffer sizes per rank, sendcount = {count} element(s)")


_PRIMITIVE_OPS = calculators.PRIMITIVE_OPS


def primitive_report(*args, **kwargs) -> dict[str, str]:
    """The primitive calculator's results: :func:`commlib.collectives.calculators.primitive_results` (kept for callers)."""
    return calculators.primitive_results(*args, **kwargs)


def primitive_calculator(primitive: str = "all-gather", algorithm: str = "ring", n: int = 8,
                         size: str = "64 MiB", link: str = "eth_25g") -> Calculator:
    """Any primitive, any of its algorithms: ranks, buffer size and link -> steps, bytes and time.

    The computation is the model layer's numpy-free :func:`commlib.collectives.calculators.primitive_results`.
    """
    names = list(dict.fromkeys(a for algs in calculators.PRIMITIVE_ALGORITHMS.values() for a in algs))
    controls = {
        "primitive": dropdown(list(_PRIMITIVE_OPS), primitive, "primitive"),
        "algorithm": dropdown([(algorithms.label(a), a) for a in names], algorithm, "algorithm"),
        "n": integer(n, 1, 4096, "ranks n"),
        "size": text(size, calculators.BUFFER_ENTRY.label, "e.g. 64 MiB or 100 MB"),
        "link": dropdown([(hardware.link(key).name, key) for key in calculators.PRIMITIVE_LINKS], link, "link"),
    }
    return make_calculator(calculators.primitive_results, controls, title="One collective under the alpha-beta model",
                           choices=calculators.primitive_choices,
                           note="M is the whole buffer, as nccl-tests counts it: the message for broadcast, reduce and "
                                "all-reduce; n blocks of M/n for the others (an all-gather of 8 MiB blocks on 8 ranks "
                                "is M = 64 MiB). Every rank has its own full-duplex link into a switch that never "
                                "blocks, so links without one are not offered. "
                                f"{calculators.POWER_OF_TWO_FORMS[0].upper()}"
                                f"{calculators.POWER_OF_TWO_FORMS[1:]} need n a power of two. The all-reduce menu offers the "
                                "flat all-reduces: ring, tree, recursive doubling, halving-doubling and naive, the "
                                "unpipelined master, its pipelined form beside it; beside either reduce the "
                                "chain pipelined at its best, which the menu does not offer; the pipelined, two-level and "
                                "multi-link all-reduces need chapter 2's cluster calculator. "
                                "1 MB = 10^6 B, 1 MiB = 2^20 B.")


# --- chapter 1: a pipelined schedule, steps x ranks ------------------------------------------------

#: Chunk cells are white, with a hatch per chunk: the rank colours of the chapter's other figures (and the blue of a
#: complete sum) keep their meaning, and the chunk's number, written in its cell, names it.
_CHUNK_FILL = "white"
_CHUNK_HATCHES = ("", "//", "..", "\\\\", "xx")


def pipeline_phases(sends: Sequence[PipelineSend]) -> list[str]:
    """Each step's phase: "fill" before the step at which most messages first travel at once, "drain" after the
    last such step, "full" in between (read from the sends, not from a formula).

    >>> from commlib.experiments.collectives import pipeline_sends
    >>> pipeline_phases(pipeline_sends("chain", 4, 3))
    ['fill', 'fill', 'full', 'drain', 'drain']
    """
    if not sends:
        raise ValueError("sends must hold at least one message")
    steps = max(s.step for s in sends) + 1
    busy = [sum(1 for s in sends if s.step == t) for t in range(steps)]
    top = max(busy)
    first, last = busy.index(top), steps - 1 - busy[::-1].index(top)
    return ["fill" if t < first else "drain" if t > last else "full" for t in range(steps)]


#: The band labels :func:`pipeline_figure` writes over each phase, by default.
PIPELINE_PHASE_WORDS = {"fill": "pipeline fills", "full": "every link busy", "drain": "pipeline drains"}

#: The band labels of the pipelined master, whose port carries a chunk each way between its fill and drain.
MASTER_PHASE_WORDS = {"fill": "fills: no sum to send yet", "full": "in and out at once",
                      "drain": "drains: nothing left to take in"}


def pipeline_figure(sends: Sequence[PipelineSend], n: int, root: str = "root", title: str = "",
                    phase_words: Mapping[str, str] = PIPELINE_PHASE_WORDS):
    """A steps x ranks grid of a pipelined schedule: the cell at (step t, rank i) shows the chunk rank i sends at
    step t, its number written in it and the rank it goes to; the hatch also follows the chunk (no colour: the chapter's
    colours name ranks).
    Shaded bands above the grid mark the steps in which the pipeline fills and drains (:func:`pipeline_phases`).

    ``sends`` is :func:`commlib.experiments.collectives.pipeline_sends`'s list for ``n`` ranks; ``root`` names
    rank 0's role in its row label; ``phase_words`` the labels over the fill, full and drain steps.
    """
    n = check_count("n", n, minimum=2, maximum=8)
    if any(not 0 <= s.src < n or not 0 <= s.dst < n for s in sends):
        raise ValueError(f"sends must run between ranks 0 to {n - 1}")
    phases = pipeline_phases(sends)
    steps = len(phases)
    fig, ax = figure(1.6 + 0.62 * steps, 1.3 + 0.5 * n)
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    w, h = 0.92, 0.8
    for t, phase in enumerate(phases):     # the bands: where the pipeline fills and drains
        if phase != "full":
            ax.add_patch(Rectangle((t - 0.5, -0.5), 1, n, facecolor="#EEEEEE", edgecolor="none", zorder=0))
    for start in range(steps):             # one label over each run of steps with the same phase
        if start == 0 or phases[start] != phases[start - 1]:
            stop = start
            while stop + 1 < steps and phases[stop + 1] == phases[start]:
                stop += 1
            words = phase_words[phases[start]]
            ax.text((start + stop) / 2, n - 0.3, words, ha="center", va="bottom", fontsize=8, style="italic")
    for s in sends:
        y = n - 1 - s.src
        ax.add_patch(Rectangle((s.step - w / 2, y - h / 2), w, h, facecolor=_CHUNK_FILL,
                               hatch=_CHUNK_HATCHES[s.chunk % len(_CHUNK_HATCHES)],
                               edgecolor="black", lw=0.8, zorder=2))
        label = ax.text(s.step, y + 0.12, str(s.chunk), ha="center", va="center", fontsize=12, fontweight="bold",
                        zorder=3)
        note = ax.text(s.step, y - 0.22, f"to {s.dst}", ha="center", va="center", fontsize=9, zorder=3)
        for item in (label, note):
            item.set_bbox(dict(facecolor="white", edgecolor="none", pad=2.0, alpha=1.0))   # labels clear of the hatch
    ax.set_xlim(-0.6, steps - 0.4)
    ax.set_ylim(-0.6, n + 0.15)
    ax.set_xticks(range(steps))
    ax.set_xlabel("step")
    ax.set_yticks(range(n))
    ax.set_yticklabels([f"rank {n - 1 - y}" + (f" ({root})" if n - 1 - y == 0 else "") for y in range(n)])
    ax.tick_params(length=0)
    if title:
        ax.set_title(title, fontsize=10, pad=14)
    fig.tight_layout()
    return fig


def naive_hotspot_figure(counts: HotspotCounts):
    """Bytes through the busiest rank's link (both directions), naive master vs ring, from the traces.

    Dots are the counts of :func:`commlib.experiments.collectives.hotspot_counts`
    (the traces of :func:`commlib.collectives.simulate.allreduce`, ``"naive"`` and
    ``"ring"``); lines are the closed forms of :func:`commlib.collectives.compare.busiest_link_bytes`.
    """
    ps = list(counts.ns)
    nbytes = counts.nbytes
    naive, ring = list(counts.naive), list(counts.ring)
    grid = np.arange(min(ps), max(ps) + 1)
    fig, ax = figure(6.4, 3.8)
    kb = 1e3

    def formula(algorithm):
        return [compare.busiest_link_bytes(algorithm, nbytes, int(k)) / kb for k in grid]

    forms = compare.BUSIEST_LINK_FORMULAS
    ax.plot(grid, formula("naive"), color=COLORS[3], lw=1.2, label=f"formula {forms['naive']}")
    ax.plot(ps, np.array(naive) / kb, MARKERS[3], color=COLORS[3], label="naive, master's link (trace)")
    ax.plot(grid, formula("ring"), color=COLORS[0], lw=1.2, ls="--", label=f"formula {forms['ring']}")
    ax.plot(ps, np.array(ring) / kb, MARKERS[0], color=COLORS[0], label="ring, any rank's link (trace)")
    ax.set_xlabel("ranks n")
    ax.set_ylabel(f"kB through the link, both directions\n(M = {format_size(nbytes)} per rank)")
    ax.set_title("The master is a hot spot; the ring spreads the load")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# --- chapter 2: ring all-reduce, chunk by chunk -------------------------------------------------------

def ring_labels(run: RingRun) -> list[str]:
    """Frame labels of :func:`ring_allreduce_animation`: the snapshot labels of the run."""
    return [str(s) for s in run.trace.snapshot_labels]


#: Arrow colours of the ring: a chunk on its way to be added (black), a finished chunk copied (dark blue,
#: the colour of complete sums). No rank colour is black or blue, so each colour keeps one meaning.
_ADD_ARROW = "black"
_COPY_ARROW = _FULL


def ring_legend_handles(n: int) -> list:
    """Legend entries of the ring pictures: every rank's own colour, partial and complete sums, the
    outline of a cell just written, and the two kinds of arrow."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(edgecolor="black", lw=0.7, label=f"rank {r}'s own value", **_rank_fill(r)) for r in range(n)]
    handles += [
        Patch(facecolor=_PARTIAL, edgecolor="black", lw=0.7, label="partial sum (some ranks)"),
        Patch(facecolor=_FULL, edgecolor="black", lw=0.7, label="complete sum (all ranks)"),
        Patch(facecolor="white", edgecolor="black", lw=2.2, label="cell written this step"),
        Line2D([], [], color=_ADD_ARROW, lw=1.6, marker=">", label="reduce-scatter: received, added"),
        Line2D([], [], color=_COPY_ARROW, lw=1.6, marker=">", label="all-gather: received, copied"),
    ]
    return handles


def _ring_frame_heading(n: int, frame: int) -> str:
    if frame == 0:
        return "start: rank i holds j·10^i in chunk j"
    if frame <= n - 1:
        return f"reduce-scatter, step {frame} of {n - 1}"
    return f"all-gather, step {frame - (n - 1)} of {n - 1}"


def _draw_ring_frame(ax, run: RingRun, frame: int, fontsize: float = 8) -> None:
    """One frame of the ring on ``ax``: every rank's buffer (chunks numbered 1 to n, as their digits),
    and the step's messages as arrows, each labelled on its arc with the chunk it carries."""
    trace = run.trace
    n = trace.n
    steps = sorted({m.step for m in trace.messages})
    radius, w, h = 2.2, 0.55, 0.5
    angle = [math.pi / 2 - 2 * math.pi * r / n for r in range(n)]
    centre = [(radius * math.cos(a), radius * math.sin(a)) for a in angle]
    ax.clear()
    ax.set_xlim(-radius - 1.9, radius + 1.9)
    ax.set_ylim(-radius - 0.9, radius + 1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    msgs = trace.step_messages(steps[frame - 1]) if frame >= 1 else []
    written = {}
    for m in msgs:
        if isinstance(m.chunk, (int, np.integer)):
            written.setdefault(m.dst, []).append(int(m.chunk))
    for r in range(n):
        cx, cy = centre[r]
        x0, y0 = cx - n * w / 2, cy - h / 2
        _draw_buffer(ax, x0, y0, trace.snapshots[frame][r], n, w, h, highlight=written.get(r, ()), fontsize=fontsize)
        for c in range(n):      # chunk numbers under the cells: chunk c holds the digit c
            ax.text(x0 + (c + 0.5) * w, y0 - 0.04, f"{c + 1}", ha="center", va="top", fontsize=fontsize - 1.5,
                    color="0.35")
        ax.text(cx, cy + h / 2 + 0.12, f"rank {r}", ha="center", va="bottom", fontsize=fontsize + 1,
                fontweight="bold")
    # an arrow starts and ends just inside its rank's buffer, on the line from the ring's centre
    end = []
    for a in angle:
        c, s_ = abs(math.cos(a)), abs(math.sin(a))
        edge = min(n * w / 2 / c if c > 1e-9 else math.inf, (h / 2 + 0.2) / s_ if s_ > 1e-9 else math.inf)
        end.append(((radius - edge - 0.12) * math.cos(a), (radius - edge - 0.12) * math.sin(a)))
    rad = 0.15    # arcs bend a little inwards, clear of the buffers
    for m in msgs:
        p, q = end[m.src], end[m.dst]
        col = _ADD_ARROW if "reduce" in str(m.phase) else _COPY_ARROW
        ax.add_patch(FancyArrowPatch(p, q, connectionstyle=f"arc3,rad={rad}", arrowstyle="-|>",
                                     mutation_scale=14, lw=1.6, color=col))
        # the label sits on its own arc: a quadratic curve's midpoint is the chord's midpoint moved
        # rad/2 of the chord along its normal (arc3's control point is moved rad of it)
        mx = (p[0] + q[0]) / 2 + rad / 2 * (q[1] - p[1])
        my = (p[1] + q[1]) / 2 - rad / 2 * (q[0] - p[0])
        chunk = f"chunk {int(m.chunk) + 1}" if isinstance(m.chunk, (int, np.integer)) else str(m.chunk)
        ax.text(mx, my, chunk, fontsize=fontsize - 0.5, ha="center", va="center", color=col,
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec=col, lw=0.6))


def ring_allreduce_animation(run: RingRun) -> FuncAnimation:
    """Ring all-reduce on ``n`` ranks (2 to 6), one frame per step, on values the reader can follow.

    ``run`` is :func:`commlib.experiments.collectives.ring_run`'s recording.
    Frame 0 is the start; frames 1 to n-1 are the reduce-scatter steps, n to
    2(n-1) the all-gather steps. Each frame shows every rank's buffer as
    :func:`commlib.collectives.simulate.allreduce` recorded it (``record=True``), and
    the messages of that step as arrows labelled with the chunk they carry;
    cells just written have a thick border. Chunks are numbered 1 to n, as
    their digits are (the code numbers them from 0); a legend names every colour.
    """
    n = check_count("n", run.trace.n, minimum=2, maximum=6)
    labels = list(run.trace.snapshot_labels)
    style()
    fig, ax = plt.subplots(figsize=(9.6, 6.4))
    fig.subplots_adjust(left=0.0, right=0.7, top=0.88, bottom=0.0)
    fig.legend(handles=ring_legend_handles(n), loc="center left", bbox_to_anchor=(0.69, 0.5), fontsize=9,
               frameon=False)

    def draw(frame: int):
        _draw_ring_frame(ax, run, frame)
        ax.set_title(f"ring all-reduce, {n} ranks -- {labels[frame] if frame < len(labels) else ''}\n"
                     f"{_ring_frame_heading(n, frame)}", fontsize=10)
        return []

    draw(0)
    return FuncAnimation(fig, draw, frames=range(len(run.trace.snapshots)), interval=1200, blit=False)


def ring_key_frames(n: int) -> list[int]:
    """The frames :func:`ring_allreduce_strip` shows: the start, the first step, the end of the
    reduce-scatter (each rank owns one complete chunk) and the end (every rank holds every sum)."""
    n = check_count("n", n, minimum=2)
    return sorted({0, 1, n - 1, 2 * (n - 1)})


def ring_allreduce_strip(run: RingRun):
    """The animation's key frames (:func:`ring_key_frames`) side by side, with the full legend: the
    ring for print and for a reader who does not press play."""
    n = check_count("n", run.trace.n, minimum=2, maximum=6)
    frames = ring_key_frames(n)
    style()
    cols = 2
    rows = math.ceil(len(frames) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(10.0, 4.6 * rows + 1.2), squeeze=False)
    for ax, frame in zip(axes.flat, frames):
        _draw_ring_frame(ax, run, frame, fontsize=7.5)
        ax.set_title(f"frame {frame}: {_ring_frame_heading(n, frame)}", fontsize=10)
    for ax in list(axes.flat)[len(frames):]:
        ax.axis("off")
    fig.legend(handles=ring_legend_handles(n), loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.subplots_adjust(left=0.0, right=1.0, top=0.95, bottom=1.1 / (4.6 * rows + 1.2), wspace=0.02, hspace=0.12)
    return fig


def trace_formula_table(runs: TraceFormulaRuns):
    """Markdown table: the ring's trace counts next to the closed forms, for several n.

    ``runs`` from :func:`commlib.experiments.collectives.trace_formula_runs`.
    """
    bandwidth, latency = runs.bandwidth, runs.latency
    rows = []
    for row in runs.rows:
        rows.append([row.n, format_size(row.nbytes, significant=3), row.trace_steps, row.formula_steps,
                     f"{row.trace_bytes_per_rank:,}", f"{row.formula_bytes_per_rank:,.0f}",
                     format_time(row.trace_seconds, 3), format_time(row.formula_seconds, 3)])
    headers = ["n", "buffer M", "steps (trace)", "steps 2(n-1)", "bytes sent per rank (trace, B)",
               "2(n-1)/n·M (B)", "time (trace)", "time (formula)"]
    return markdown_table(headers, rows, caption=(f"Ring all-reduce: simulation vs formula, "
                                                   f"{format_rate(bandwidth)} per direction, "
                                                   f"alpha = {format_time(latency)}"))


def ring_scaling_figure(nbytes: float = 100e6, link: str = "eth_100g", ns: Sequence[int] = (2, 4, 8, 16, 32, 64, 128)):
    """All-reduce time against n at fixed message size: ring (with and without latency) vs naive."""
    item = hardware.link(link)
    ns = np.array([check_count("n", k, minimum=2) for k in ns])
    fig, ax = figure(6.4, 3.8)
    ring_bw = [compare.allreduce_seconds("ring", nbytes, int(k), item.bandwidth) for k in ns]
    ring_full = [compare.allreduce_seconds("ring", nbytes, int(k), item.bandwidth, item.latency) for k in ns]
    naive = [compare.allreduce_seconds("naive", nbytes, int(k), item.bandwidth, item.latency) for k in ns]
    limit = 2 * nbytes / item.bandwidth
    # the colours of the comparison figure: the ring black (its two terms told apart by the dash), the naive grey
    ax.plot(ns, ring_bw, MARKERS[0] + "-", color=_CURVE_COLORS[0], label="ring, bandwidth term 2(n-1)/n·M/B")
    ax.plot(ns, ring_full, MARKERS[1] + "--", color=_CURVE_COLORS[0], mfc="white",
            label="ring, total (bytes + 2(n-1)α)")
    ax.plot(ns, naive, MARKERS[4] + ":", color=_CURVE_COLORS[4], label="naive, through a master")
    ax.axhline(limit, color="0.4", lw=0.8)
    ax.annotate("limit 2M/B", (ns[-1], limit), xytext=(-60, 6), textcoords="offset points", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("ranks n")
    ax.set_ylabel("time of one all-reduce (s)")
    ax.set_title(f"M = {format_size(nbytes, significant=3)} over {item.name} ({format_rate(item.bandwidth, significant=3)} per direction)")
    ax.legend(fontsize=8)
    _fast_log_layout(fig, ax, right=0.97)
    return fig


_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 6: "six", 8: "eight"}


def coefficients_table(n: int = 16, hosts: int = 2, grid: tuple[int, int] | None = None,
                       chunks: Sequence[int] = (1, 64), algorithms_shown: Sequence[str] | None = None,
                       split_by_port: bool = False):
    """Markdown table: each algorithm's start-ups a and bytes b in units of M, on one uniform link.

    An algorithm that cuts the message into q chunks (the pipelined trees) gets one value per q in
    ``chunks``: a small message is sent as one chunk, a large one as many, and its start-ups and
    bytes differ accordingly. ``algorithms_shown`` picks rows (registry names, in the order given;
    default: every algorithm of the registry); the caption names only the settings those rows use.
    ``split_by_port`` (with ``hosts`` > 1) splits the bytes into two columns, those through a GPU's
    link inside the host and those through its network card (:func:`commlib.collectives.cluster.port_bytes`),
    for rows that run on ``hosts`` hosts (the ring, the multi-rail ring, hierarchical).
    """
    chunks = [check_count("chunks", q) for q in ([chunks] if isinstance(chunks, int) else chunks)]
    shown = tuple(compare.ALGORITHMS if algorithms_shown is None else algorithms_shown)
    unknown = [a for a in shown if a not in algorithms.ALLREDUCE]
    if unknown or not shown:
        raise ValueError(f"algorithms_shown must name one or more of {', '.join(compare.ALGORITHMS)}; got {unknown or 'none'}")
    if split_by_port and (hosts < 2 or any(a != "ring" and "hosts" not in algorithms.ALLREDUCE[a].params
                                            for a in shown)):
        raise ValueError("split_by_port needs hosts > 1 and rows that run on hosts (ring, multi_rail_ring, "
                         f"hierarchical); got hosts = {hosts}, {', '.join(shown)}")
    rows = []
    for a in shown:
        record = algorithms.ALLREDUCE[a]
        qs = chunks if "chunks" in record.params else chunks[:1]
        cells = [compare.alpha_beta_coefficients(a, n, hosts=hosts if "hosts" in record.params else 1,
                                                 grid=grid, chunks=q) for q in qs]
        links = _NUMBER_WORDS.get(record.links_per_rank, str(record.links_per_rank))
        name = compare.ALGORITHM_NAMES[a] + (f" ({links} links per rank)" if record.links_per_rank > 1 else "")
        if "hosts" in record.params and not split_by_port:  # a GPU's card and its link inside the host: two ports
            name += " (two ports per GPU: its card and its link inside the host)"
        if split_by_port:
            inside, between = cluster.port_bytes(a, n, hosts)
            a_inside, a_between = cluster.port_startups(a, n, hosts)
            rows.append([name, f"{a_inside:g}", f"{a_between:g}", f"{inside:.4g}", f"{between:.4g}"])
        elif len(qs) > 1:
            rows.append([name, "; ".join(f"{steps:g} (q = {q})" for q, (steps, _) in zip(qs, cells)),
                         "; ".join(f"{b:.4g} (q = {q})" for q, (_, b) in zip(qs, cells))])
        else:
            rows.append([name, f"{cells[0][0]:g}", f"{cells[0][1]:.4g}"])
    g = n // hosts
    rail_steps = compare.alpha_beta_coefficients("ring", n)[0]
    where = [f"n = {n}"]
    if any("chunks" in algorithms.ALLREDUCE[a].params for a in shown):
        where.append(f"pipelined trees with q = {' or '.join(map(str, chunks))} chunks")
    if any("hosts" in algorithms.ALLREDUCE[a].params for a in shown):
        where.append(f"{hosts} hosts, one card per GPU")
    notes = []          # with split_by_port the caption is one line, and what explains the rows goes under the table
    if split_by_port:
        where.append("start-ups and bytes per GPU through each of its two ports")
        notes.append("Each entry is the most one GPU pays and sends through that port. A flat ring's GPU sends all its "
                     "bytes through one of them (a GPU at a host's edge through its card), but every step of the ring "
                     "waits for that GPU, so the ring's row shows its whole count under both ports.")
    elif "hierarchical" in shown:
        where.append("the hierarchical row's b adds bytes inside a host to bytes between hosts, as if one link "
                     "carried both")
    if "multi_rail_ring" in shown and split_by_port:
        notes.append(f"The multi-rail ring's start-ups inside the host count the messages of the other {g - 1} rings "
                     f"that cross a GPU's link inside the host in each of the {rail_steps:g} steps "
                     f"({g - 1} x {rail_steps:g}).")
    elif "multi_rail_ring" in shown:
        where.append(f"for the multi-rail ring, a and b count its port busiest in messages, a GPU's link inside the "
                     f"host, which carries the other {g - 1} rings' messages in each of the {rail_steps:g} steps "
                     f"({g - 1} x {rail_steps:g} start-ups)")
    if any(a.startswith("torus") for a in shown):
        where.append(f"torus on a {'x'.join(map(str, grid or collectives.most_square_grid(n)))} grid")
    columns = (["start-ups inside the host (x alpha)", "start-ups between hosts (x alpha)",
                "bytes inside the host (x M)", "bytes between hosts (x M)"] if split_by_port
               else ["start-ups a (x alpha)", "bytes b (x M, each x beta)"])
    table = markdown_table(["algorithm", *columns], rows,
                           caption=f"T = a alpha + b beta, b in units of M; {'; '.join(where)}")
    return type(table)(table.data + "".join(f"\n\n{note}" for note in notes)) if notes else table


def _fast_log_layout(fig, ax, right: float) -> None:
    """Fixed margins and no minor ticks: ``tight_layout`` on log axes is slow, and sweeps draw many frames."""
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())
    fig.subplots_adjust(left=0.11, right=right, bottom=0.13, top=0.9)


# --- chapter 2: the rivals under alpha-beta ------------------------------------------------------------

def short_name(algorithm: str) -> str:
    """An all-reduce's name in running prose, from its record: "halving_doubling" -> "halving-doubling".

    >>> short_name("halving_doubling"), short_name("bruck")
    ('halving-doubling', "Bruck's all-reduce")
    """
    return algorithms.ALLREDUCE[algorithm].short_label()


def winner_words(winner: str, n: int) -> str:
    """The algorithm that takes over in the comparison on ``n`` ranks, in words, with any rival drawn there
    (:func:`figure_algorithms`) that has the very same start-up and byte counts on ``n`` ranks (the figure draws it
    on top of the winner's line, so the prose names both).

    >>> winner_words("halving_doubling", 16)
    "halving-doubling (tied with Bruck's all-reduce, which has the same counts on 16 ranks)"
    >>> winner_words("ring", 12)
    'ring'
    """
    ties = [a for a in figure_algorithms(n) if a != winner
            and compare.alpha_beta_coefficients(a, n) == compare.alpha_beta_coefficients(winner, n)]
    return short_name(winner) + (f" (tied with {' and '.join(map(short_name, ties))}, which has the same counts "
                                 f"on {n} ranks)" if ties else "")


def figure_algorithms(n: int, hosts: int = 1) -> list[str]:
    """The registry's all-reduce algorithms that apply to ``n`` ranks on a switched network of ``hosts`` hosts.

    Left out: those that drive several links at once (``links_per_rank > 1``: they need a link per neighbour),
    those whose parameters ``n`` cannot satisfy, the two-link ones
    (hierarchical, multi-rail ring) when there is only one host, and, on hosts of several GPUs,
    those not timed there (:func:`commlib.collectives.cluster.models_hosts`). On one host that is
    :func:`commlib.collectives.compare.one_port_allreduces`.
    """
    if hosts == 1:
        return list(compare.one_port_allreduces(n))
    out = []
    for name, a in algorithms.ALLREDUCE.items():
        if a.links_per_rank > 1 or (hosts == 1 and "hosts" in a.params):
            continue
        if 1 < hosts < n and not cluster.models_hosts(a):
            continue
        try:
            a.checked(n, **({"hosts": hosts} if "hosts" in a.params else {}))
        except ValueError:
            continue
        out.append(name)
    return out


#: Curve colours in registry order: the first (the ring) black, as it appears in both panels; sky blue
#: comes before dark blue so that, for n >= 4, they fall in different panels (the pipelined binary tree
#: is never near the bound, the double binary tree is). Nine, the Okabe-Ito colours with grey, so that each of the
#: comparison figure's nine algorithms has a colour of its own (the ninth, Bruck's all-reduce, yellow).
_CURVE_COLORS = ["black", PALETTE["orange"], PALETTE["green"], PALETTE["vermillion"], "0.55", PALETTE["sky"],
                 PALETTE["blue"], PALETTE["purple"], PALETTE["yellow"]]


def curve_looks(count: int) -> list[tuple[int, int, int]]:
    """``count`` distinct looks, as (colour, dash, marker) indices into the curve colours, dashes and markers.

    The first nine are the i-th colour, the i-th dash (wrapping after seven) and the i-th marker (wrapping after
    eight). Each
    further one is the first unused combination (colour varying fastest) that shares at most one of colour,
    dash and marker with every look before it (the first 50 looks do); once none is left, the first unused
    one. Past every combination (9 x 7 x 8 = 504) it raises ValueError. Deterministic: the i-th look never
    depends on ``count``.

    >>> looks = curve_looks(10)
    >>> looks[0], looks[7], looks[8], looks[9]   # the ring's; the eighth's (dash wraps); the ninth's; the tenth shares one at most
    ((0, 0, 0), (7, 0, 7), (8, 1, 0), (1, 2, 0))
    """
    nc, nd, nk = len(_CURVE_COLORS), len(_LINESTYLES), len(MARKERS)
    if not isinstance(count, int) or not 0 <= count <= nc * nd * nk:
        raise ValueError(f"count must be an integer from 0 to {nc * nd * nk}; got {count!r}")
    looks = [(i, i % nd, i % nk) for i in range(min(count, nc))]
    spare = [(c, d, k) for k in range(nk) for d in range(nd) for c in range(nc)]
    for apart in (2, 1):        # first: shares at most one property with each look; then: any unused one
        for cand in spare:
            if len(looks) >= count:
                break
            if all(sum(x != y for x, y in zip(cand, old)) >= apart for old in looks):
                looks.append(cand)
    return looks


#: Where the fastest algorithm changes: a large open circle round the envelope, unlike every curve's marker
#: (filled, half its size), so that it does not read as one of the curve's points.
_SWITCH_MARK = dict(marker="o", ms=15, mfc="none", mec="black", mew=2.0, ls="none", zorder=5)

#: The lower envelope, the fastest of all drawn algorithms at each size: a thin dark grey solid line without markers,
#: on top of the curves and in every panel, unlike every curve (thick, marked; the ring is black, another is 0.55
#: grey), so that each switch circle sits on it in whichever panel the circle is drawn.
_ENVELOPE = dict(color="0.3", lw=1.1, ls="-", marker="None", zorder=4)

#: Where the lower bound switches from start-ups to bytes, the size at which every curve over the bound peaks: a
#: dashed line across the whole panel, the figure's only vertical line (the switch circles have none, so that two
#: lines of different meaning never sit side by side; the footer lists where the fastest changes).
_BOUND_SWITCH_LINE = dict(color="black", lw=1.4, ls=(0, (6, 3)), zorder=1)


def comparison_figure(n: int = 16, link: str = "eth_100g", algorithms: Sequence[str] | None = None,
                      lo: float = 1e2, hi: float = 1e10, hosts: int = 1, inter_link: str | None = None):
    """Every all-reduce algorithm against message size, switch points marked.

    Curves from :func:`commlib.collectives.compare.allreduce_seconds`, on one kind of link from
    :func:`commlib.collectives.compare.best_fold_seconds` (halving-doubling with its fold that swaps halves off the
    powers of two); the sizes where the fastest
    algorithm changes (:func:`commlib.collectives.compare.switch_points`) are marked with a
    numbered open circle on the lower envelope, drawn in every panel as a thin dark grey line ("fastest of all"),
    and listed under the panels. On one kind of link
    (``hosts == 1``) each time is drawn relative to the lower bound
    (:func:`commlib.collectives.compare.allreduce_lower_bound`), in two panels of a few curves
    each: the algorithms that come within 1.45 times the bound for the largest messages
    (right) and the others (left, with the ring again for reference); a dashed line marks the size where
    the bound switches from start-ups to bytes (:func:`commlib.collectives.compare.lower_bound_switch`),
    where every curve peaks, the figure's only vertical line; the ratios carry labelled ticks at 1, 2, 3 and 5 in
    each decade, so that a ratio such as 1.5 or 2 can be read off. A curve that lies exactly on an earlier one of its
    panel (Bruck's all-reduce on halving-doubling's when ``n`` is a power of two) is drawn thin on top of it, and its
    legend entry says whose counts it shares, so that both stay visible. On hosts of several GPUs the times are drawn
    as they are, in one panel.
    """
    item = hardware.link(link)
    inter = hardware.link(inter_link) if inter_link else item
    names = figure_algorithms(n, hosts) if algorithms is None else list(algorithms)
    kw = dict(hosts=hosts, inter_bandwidth=inter.bandwidth, inter_latency=inter.latency)

    def curve(a):
        if hosts == 1:      # each at its best, as the chapter's sizes and ratios time it
            return lambda m: compare.best_fold_seconds(a, m, n, item.bandwidth, item.latency)
        return lambda m: compare.allreduce_seconds(a, m, n, item.bandwidth, item.latency, **kw)

    curves = {a: curve(a) for a in names}
    relative = hosts == 1
    sizes = np.geomspace(lo, hi, 97)        # twelve a decade: smooth on log axes, and quick for the sweeps
    bound = np.array([compare.allreduce_lower_bound(m, n, item.bandwidth, item.latency) for m in sizes])
    scale = bound if relative else np.ones_like(sizes)
    times = {a: np.array([curves[a](m) for m in sizes]) for a in names}
    if relative:
        near = [a for a in names if times[a][-1] / bound[-1] < 1.45]
        reference = compare.ALGORITHMS[0]    # the registry's first (the ring, drawn black) in both panels
        groups = [[a for a in names if a not in near] + [a for a in near if a == reference], near]
        groups = [g for g in groups if g]
        titles = ["far from the bound for large messages", "near the bound for large messages"][-len(groups):]
    else:
        groups, titles = [names], [""]
    # the fastest of all at each drawn size and at each switch, so that each circle lies on a vertex of the envelope
    switches = compare.switch_points(curves, lo, hi)
    at = np.unique(np.concatenate([sizes, [size for size, _, _ in switches]]))
    envelope = np.array([min(curves[a](m) for a in names) for m in at])
    if relative:
        envelope = envelope / np.array([compare.allreduce_lower_bound(m, n, item.bandwidth, item.latency) for m in at])
    # a curve that lies on an earlier one of its panel (halving-doubling and Bruck's on a power of two) is drawn
    # thin on top of it, its legend entry (two rows) saying so, so that both stay visible
    twins = {a: b for g in groups for i, a in enumerate(g) for b in g[:i][::-1]
             if np.allclose(times[a], times[b], rtol=1e-9, atol=0.0)}
    height = 7.0 if relative else 6.25      # two more legend entries (the bound's switch, the fastest of all)
    # a legend of more than seven rows (curves, the fastest of all, the bound's switch) needs room below the panels
    extra = 0.22 * max(0, max(len(g) + sum(a in twins for a in g) for g in groups) + (2 if relative else 1) - 7)
    height += extra
    fig, axes = figure(4.4 * len(groups) + 0.4, height, ncols=len(groups), sharey=True, squeeze=False)
    axes = list(axes[0])
    # one colour, dash and marker per algorithm, the same in every panel and for every n
    order = [a for a in compare.ALGORITHMS if a in names]
    look = {a: dict(color=_CURVE_COLORS[c], ls=_LINESTYLES[d], marker=MARKERS[k])
            for a, (c, d, k) in zip(order, curve_looks(len(order)))}
    # what takes most of the fastest algorithm's time at the smallest and at the largest size, named at the edges
    changes = compare.dominant_term_switches(curves, n, item.bandwidth, item.latency, lo, hi) if relative else []
    above = ["bytes" if changes and changes[0][1] == "start-ups" else "start-ups"] + [t for _, t in changes]
    peak = compare.lower_bound_switch(n, item.bandwidth, item.latency) if relative and n > 1 else 0.0
    peak_text = format_size(float(f"{peak:.3g}"), significant=3) if peak else ""
    for ax, group, title in zip(axes, groups, titles):
        for a in group:
            twin = twins.get(a)
            ax.loglog(sizes, times[a] / scale, lw=1.3 if twin else 2.0, ms=5 if twin else 7,
                      markevery=(2 * order.index(a) % 12, 12), label=compare.ALGORITHM_NAMES[a],
                      zorder=3 if twin else 2, **look[a])
        ax.loglog(at, envelope, label="fastest of all", **_ENVELOPE)
        for j, (size, _, after) in enumerate(switches, start=1):
            if after in group:
                y = curves[after](size) / (compare.allreduce_lower_bound(size, n, item.bandwidth, item.latency)
                                           if relative else 1.0)
                ax.plot([size], [y], **_SWITCH_MARK)
                # the number on the side away from the bound's dashed line when the two nearly meet
                near = relative and peak > 0 and abs(math.log(size / peak)) < math.log(1.5)
                ax.annotate(f"{j}", (size, y), xytext=(-14 if near and size < peak else 6, -16),
                            textcoords="offset points", fontsize=11, fontweight="bold")
        if relative:
            ax.axhline(1.0, color="black", lw=1.0)
            if lo < peak < hi:
                ax.axvline(peak, label=f"the bound's switch, {peak_text} (the peak)", **_BOUND_SWITCH_LINE)
                ax.text(peak * 1.2, 0.8, "bound's switch", transform=ax.get_xaxis_transform(), fontsize=9.5,
                        color="0.3", va="center")
        ax.set_title(title, fontsize=12)
        ax.set_xlabel("message size M (bytes)", fontsize=12)
        ax.tick_params(labelsize=11)
        # a curve drawn on its twin says so in its legend entry, on a second row
        notes = {compare.ALGORITHM_NAMES[a]: f"\n  at n = {n}: same counts as {short_name(b)}" for a, b in twins.items()}
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles, [lab + notes.get(lab, "") for lab in labels], fontsize=10.5, loc="upper center",
                  bbox_to_anchor=(0.5, -0.13), ncol=1, frameon=False, handlelength=2.6)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_minor_locator(NullLocator())
    if relative:
        axes[0].set_ylabel("time / lower bound", fontsize=12)
        # ratios the text reads off (1.5, 2, ...): labelled ticks at 1, 2, 3 and 5 in each decade
        ticks = [k * 10.0 ** e for e in range(0, 4) for k in (1, 2, 3, 5)]
        for ax in axes:
            ax.yaxis.set_major_locator(FixedLocator(ticks))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        # a strip above the highest curve, so that no curve runs through the two labels
        bottom_y, top_y = axes[-1].get_ylim()
        axes[-1].set_ylim(bottom_y, top_y * 3.0)
        top = top_y * 1.5
        axes[0].text(lo * 1.3, top, f"{above[0]} dominate", fontsize=10.5, color="0.3")
        axes[-1].text(hi / 1.3, top, f"{above[-1]} dominate", fontsize=10.5, color="0.3", ha="right")
        # on the left of the last panel, where its curves are well above the bound
        axes[-1].annotate("lower bound", (lo, 1.0), xytext=(4, 4), textcoords="offset points", ha="left",
                          fontsize=10.5)
    else:
        axes[0].set_ylabel("time (s)", fontsize=12)
    where = item.name if hosts == 1 else f"{hosts} hosts, {item.name} inside, {inter.name} between"
    fig.suptitle(f"all-reduce on n = {n} ranks, {where}", fontsize=13)
    # the sizes follow from start-ups, which are orders of magnitude (hardware.py): two significant digits
    entries = [f"{j}: {format_size(float(f'{size:.2g}'), significant=2)}, {short_name(b)} → {short_name(a)}"
               for j, (size, b, a) in enumerate(switches, start=1)]
    # wrapped to the figure's width (about 12 characters an inch at this size), so that a long list wraps
    # instead of running off the figure
    budget, lines = int(12 * fig.get_figwidth()), ["fastest changes at "]
    for e in entries:
        if len(lines[-1]) + 3 + len(e) > budget and lines[-1] != "fastest changes at ":
            lines.append(e)
        else:
            lines[-1] = f"{lines[-1]}  {e}" if lines[-1] == "fastest changes at " else f"{lines[-1]}   {e}"
    fig.text(0.5, 0.012, "\n".join(lines), ha="center", va="bottom", fontsize=10.5, linespacing=1.3)
    # the legends and the lines under them, in inches: a legend below the panels, then the text
    bottom = (2.41 + extra + (0.3 if relative else 0.0) + 0.18 * (len(lines) - 1)) / height
    fig.subplots_adjust(left=0.1, right=0.98, bottom=bottom, top=1 - 0.72 / height, wspace=0.08)
    return fig


def partner_figure(runs: PartnerRuns):
    """Who talks to whom: recursive doubling (left) and halving-doubling (right), one row per step.

    Drawn from the traces of :func:`commlib.experiments.collectives.partner_runs`
    (:func:`commlib.collectives.simulate.allreduce` on ``n`` ranks, a power of two):
    each row is a step, each arc joins two partners that swap data in that
    step, and the label gives the partners' distance and the message as a
    fraction of M.
    """
    n = runs.n
    titled = [(PARTNER_ALGORITHMS.get(a, a), t) for a, t in runs.traces.items()]
    traces = [t for _, t in titled]
    rows = max(t.steps for t in traces)
    fig, axes = figure(10.0, 1.1 + 0.75 * rows, ncols=2)
    for ax, (title, trace) in zip(axes, titled):
        ax.axis("off")
        ax.grid(False)
        for s in range(trace.steps):
            y = -s
            msgs = [m for m in trace.step_messages(s) if m.src < m.dst]
            for i in range(n):
                ax.add_patch(Rectangle((i - 0.18, y - 0.18), 0.36, 0.36, fc="white", ec="black", zorder=3))
            for m in msgs:
                ax.add_patch(FancyArrowPatch((m.src, y + 0.18), (m.dst, y + 0.18), arrowstyle="<->",
                                             mutation_scale=8, connectionstyle="arc3,rad=-0.35", lw=1.0,
                                             color=_ADD_ARROW if m.reduced else _COPY_ARROW,
                                             ls="-" if m.reduced else "--", zorder=2))
            d = msgs[0].dst - msgs[0].src
            share = msgs[0].nbytes / runs.nbytes
            ax.text(-0.7, y, f"step {s + 1}: distance {d}, {_fraction(share)} M", ha="right", va="center",
                    fontsize=8)
        for i in range(n):
            ax.text(i, 0.75, f"{i}", ha="center", va="bottom", fontsize=8)
        ax.set_xlim(-4.2, n - 0.4)
        ax.set_ylim(-rows + 0.4, 1.2)
        ax.set_title(f"{title}, n = {n}: {trace.steps} steps", fontsize=10)
    fig.text(0.5, 0.01, "arcs: partners swap and add (black, solid) or swap finished sums and copy them "
             "(dark blue, dashed)", ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def _fraction(x: float) -> str:
    """1.0 -> "1 x", 0.25 -> "1/4 x"."""
    if x >= 1:
        return f"{x:g} x"
    return f"1/{round(1 / x)} x"


def double_binary_tree_figure(n: int = 8):
    """NCCL's two trees on ``n`` ranks (2 to 16), one panel each, from the model's parent lists.

    :func:`commlib.collectives.algorithms.double_binary_tree.parents` gives each rank's parent in
    each tree (heap order, then the same ranks reversed). A rank with children is filled grey in
    the tree where it has them; the other tree has it as a white leaf, so no rank is grey twice.
    """
    from ..collectives.algorithms import double_binary_tree as dbt

    n = check_count("n", n, minimum=2, maximum=16)
    trees, inner = dbt.parents(n), dbt.inner_ranks(n)
    depth = max(1, math.floor(math.log2(n)))
    fig, axes = figure(9.6, 1.6 + 1.0 * depth, ncols=2)
    for k, (ax, parent) in enumerate(zip(axes, trees)):
        ax.axis("off")
        ax.grid(False)
        # heap layout: the root on top, each level spread evenly; a rank's place is its heap position
        place = {}
        order = range(n) if k == 0 else range(n - 1, -1, -1)
        for pos, r in enumerate(order):
            level = math.floor(math.log2(pos + 1))
            slot = pos - (2**level - 1)
            place[r] = ((slot + 0.5) * n / 2**level, -level)
        for r, p in enumerate(parent):
            if p is not None:
                (x0, y0), (x1, y1) = place[p], place[r]
                ax.plot([x0, x1], [y0 - 0.2, y1 + 0.2], color="black", lw=1.2, zorder=1)
        for r, (x, y) in place.items():
            grey = r in inner[k]
            ax.add_patch(Rectangle((x - 0.3, y - 0.2), 0.6, 0.4, facecolor="0.35" if grey else "white",
                                   edgecolor="black", lw=1.0, zorder=2))
            ax.text(x, y, f"{r}", ha="center", va="center", fontsize=10, color="white" if grey else "black",
                    zorder=3)
        ax.set_xlim(-0.2, n + 0.2)
        ax.set_ylim(-depth - 0.5, 0.5)
        # the schedule gives tree 0 the first half of the vector, tree 1 the second (double_binary_tree.schedule)
        ax.set_title(f"tree {k}: " + ("ranks in heap order" if k == 0 else "the same, ranks reversed") +
                     f"\n{('first', 'second')[k]} half of the message; "
                     f"inner ranks (grey): {', '.join(map(str, sorted(inner[k])))}", fontsize=10)
    fig.text(0.5, 0.02, "grey: a rank with children in that tree; white: a leaf. "
             "A double binary tree with NCCL's property, not NCCL's own construction.", ha="center", fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def hierarchical_figure(hosts: int = 2, per_host: int = 4):
    """Hosts as boxes of GPUs: intra-host rings (solid) and the inter-host rings of same-index GPUs (dashed).

    Arrow heads show where traffic goes: an intra-host ring sends one way round
    (with its wrap-around arc); between two hosts the inter-host ring sends
    both ways (double heads); with more hosts it wraps from the last to the first.
    """
    hosts = check_count("hosts", hosts, minimum=2, maximum=4)
    per_host = check_count("per_host", per_host, minimum=2, maximum=8)
    fig, ax = figure(7.0, 1.6 + 1.3 * hosts)
    ax.axis("off")
    ax.grid(False)
    for hst in range(hosts):
        y = -hst * 1.6
        ax.add_patch(FancyBboxPatch((-0.6, y - 0.45), per_host + 0.2, 0.9, boxstyle="round,pad=0.05",
                                    fc="#F2F2F2", ec="0.4"))
        ax.text(-0.75, y, f"host {hst}", ha="right", va="center", fontsize=9)
        for g in range(per_host):
            ax.add_patch(Rectangle((g - 0.3, y - 0.25), 0.6, 0.5, ec="black", **_rank_fill(g)))
            ax.text(g, y, f"{hst * per_host + g}", ha="center", va="center", fontsize=8)
            if g < per_host - 1:
                ax.annotate("", xy=(g + 0.7, y), xytext=(g + 0.3, y), arrowprops=dict(arrowstyle="->", lw=1.3))
        ax.annotate("", xy=(-0.3, y + 0.28), xytext=(per_host - 1 - 0.3, y + 0.28),
                    arrowprops=dict(arrowstyle="->", lw=1.0, connectionstyle="arc3,rad=0.15"))
    # the inter-host ring of each local index: with 2 hosts it sends both ways between them (double
    # heads); with more, it runs down the hosts and wraps from the last host back to the first
    both = "<->" if hosts == 2 else "->"
    for g in range(per_host):
        for hst in range(hosts - 1):
            ax.annotate("", xy=(g + 0.1, -(hst + 1) * 1.6 + 0.27), xytext=(g + 0.1, -hst * 1.6 - 0.27),
                        arrowprops=dict(arrowstyle=both, lw=1.2, ls="--", color=COLORS[3]))
        if hosts > 2:
            ax.annotate("", xy=(g + 0.35, 0.27), xytext=(g + 0.35, -(hosts - 1) * 1.6 - 0.27),
                        arrowprops=dict(arrowstyle="->", lw=0.9, ls="--", color=COLORS[3],
                                        connectionstyle="arc3,rad=-0.25"))
    ax.set_xlim(-1.6, per_host + 0.3)
    ax.set_ylim(-(hosts - 1) * 1.6 - 0.8, 1.0)
    ax.set_title("hierarchical all-reduce\n1) reduce-scatter inside each host (solid ring)\n"
                 "2) all-reduce each 1/g shard across hosts (dashed)   3) all-gather inside each host",
                 fontsize=9)
    fig.tight_layout()
    return fig


def torus_figure(rows: int = 3, cols: int = 4):
    """A rows x cols torus: row rings (solid), column rings (dashed), wrap-around links drawn as arcs.

    The nodes are plain (white): colour here would say nothing the position does not, and elsewhere in
    the chapter a fill colour names a rank. The column arcs bow out to the side, clear of the column lines.
    """
    rows = check_count("rows", rows, minimum=2, maximum=6)
    cols = check_count("cols", cols, minimum=2, maximum=8)
    fig, ax = figure(1.9 + 1.1 * cols, 1.5 + 1.0 * rows)
    ax.axis("off")
    ax.grid(False)
    for r in range(rows):
        for c in range(cols):
            ax.add_patch(Rectangle((c - 0.22, -r - 0.22), 0.44, 0.44, ec="black", fc="white", zorder=3))
            ax.text(c, -r, f"{r * cols + c}", ha="center", va="center", fontsize=8, zorder=4)
            if c < cols - 1:
                ax.plot([c + 0.22, c + 0.78], [-r, -r], color="black", lw=1.3)
            if r < rows - 1:
                ax.plot([c, c], [-r - 0.22, -r - 0.78], color=COLORS[3], lw=1.3, ls="--")
        # row wrap-around: from the row's last node over the top of the row back to its first
        ax.add_patch(FancyArrowPatch((cols - 1, -r + 0.22), (0, -r + 0.22), connectionstyle="arc3,rad=0.12",
                                     arrowstyle="-", lw=0.9, color="black"))
    for c in range(cols):
        # column wrap-around: from the column's bottom node, bowing into the gap on its right, back to its top
        ax.add_patch(FancyArrowPatch((c + 0.22, -(rows - 1)), (c + 0.22, 0), connectionstyle="arc3,rad=0.25",
                                     arrowstyle="-", lw=0.9, color=COLORS[3], ls="--"))
    ax.set_xlim(-0.6, cols - 1 + 0.9)
    ax.set_ylim(-rows + 0.4, 0.9)
    ax.set_aspect("equal")
    ax.set_title(f"{rows} x {cols} torus: rows (solid), columns (dashed), rows again; wrap-around arcs", fontsize=9)
    fig.tight_layout()
    return fig


def _torus_link(ax, a: int, b: int, cols: int, rows: int, **kw) -> None:
    """One link of a rows x cols torus between nodes ``a`` and ``b``: a straight line between grid
    neighbours, an arc for a wrap-around link (over the row, or bowing into the gap right of the column)."""
    (ra, ca), (rb, cb) = divmod(a, cols), divmod(b, cols)
    if ra == rb and abs(ca - cb) == 1:
        lo = min(ca, cb)
        ax.plot([lo + 0.22, lo + 0.78], [-ra, -ra], **kw)
    elif ca == cb and abs(ra - rb) == 1:
        lo = min(ra, rb)
        ax.plot([ca, ca], [-lo - 0.22, -lo - 0.78], **kw)
    elif ra == rb:
        ax.add_patch(FancyArrowPatch((cols - 1, -ra + 0.22), (0, -ra + 0.22), connectionstyle="arc3,rad=0.12",
                                     arrowstyle="-", **kw))
    else:
        ax.add_patch(FancyArrowPatch((ca + 0.22, -(rows - 1)), (ca + 0.22, 0), connectionstyle="arc3,rad=0.25",
                                     arrowstyle="-", **kw))


def torus_cycles_figure():
    """The 4 x 4 torus split into two Hamiltonian cycles that share no link (:data:`TORUS4_CYCLES`).

    Each panel draws every link of the torus thin and grey and one cycle's 16 links thick: the two
    panels together use each of the torus's 32 links once. A ring all-reduce runs along each cycle in
    each direction, four rings on a quarter of the buffer each.
    """
    rows = cols = 4
    fig, axes = figure(9.0, 5.0, ncols=2)
    everything = {frozenset((r * cols + c, r * cols + (c + 1) % cols)) for r in range(rows) for c in range(cols)} | \
        {frozenset((r * cols + c, ((r + 1) % rows) * cols + c)) for r in range(rows) for c in range(cols)}
    for k, (ax, cycle) in enumerate(zip(axes, TORUS4_CYCLES)):
        ax.axis("off")
        ax.grid(False)
        for a, b in (tuple(e) for e in everything):
            _torus_link(ax, a, b, cols, rows, color="0.8", lw=0.8)
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            _torus_link(ax, a, b, cols, rows, color="black", lw=2.4)
        for node in range(rows * cols):
            r, c = divmod(node, cols)
            ax.add_patch(Rectangle((c - 0.22, -r - 0.22), 0.44, 0.44, ec="black", fc="white", zorder=3))
            ax.text(c, -r, f"{node}", ha="center", va="center", fontsize=8, zorder=4)
        ax.set_xlim(-0.6, cols - 1 + 0.9)
        ax.set_ylim(-rows + 0.4, 0.9)
        ax.set_aspect("equal")
        ax.set_title(f"cycle {k + 1}: " + " - ".join(map(str, cycle[:6])) + " - ...", fontsize=9)
    fig.text(0.5, 0.02, "thick: the cycle's 16 links; grey: the other 16, the other cycle's.\n"
             "A ring runs along each cycle both ways: four rings, a quarter of the buffer each.",
             ha="center", fontsize=9)
    fig.tight_layout(rect=(0, 0.1, 1, 0.97))
    return fig


# --- chapter 2: calculators ---------------------------------------------------------------------

#: The calculator's choices of network cards per host (0: one per GPU), from the model layer.
NIC_CHOICES = cluster.NIC_CHOICES


def cluster_report(*args, **kwargs) -> dict[str, str]:
    """The "your cluster" calculator's results: :func:`commlib.collectives.calculators.cluster_results` (kept for callers)."""
    return calculators.cluster_results(*args, **kwargs)


def cluster_calculator(model: str = "resnet50", dtype: str = "fp16", n: int = 16, hosts: int = 2,
                       intra_link: str = "nvlink2", inter_link: str = "eth_25g", algorithm: str = "ring",
                       t_compute_ms: float = 100.0, target_percent: float = 90.0,
                       nics_per_host: int = 1) -> Calculator:
    """"Your cluster": model, dtype, n, hosts, links, NICs, algorithm -> time, algbw, busbw, efficiency.

    The computation is the model layer's numpy-free :func:`commlib.collectives.calculators.cluster_results`.
    """
    links = [(item.name, key) for key, item in hardware.LINKS.items()]
    controls = {
        "model": dropdown([(f"{m.name} ({m.params:,} parameters)", k) for k, m in hardware.MODELS.items()],
                          model, "model"),
        "dtype": dropdown(list(hardware.DTYPE_BYTES), dtype, "gradient dtype"),
        "n": integer(n, 1, 4096, "GPUs n"),
        "hosts": integer(hosts, 1, 512, "hosts h"),
        "intra_link": dropdown(links, intra_link, "link inside a host"),
        "inter_link": dropdown(links, inter_link, "link between hosts"),
        "nics_per_host": dropdown(list(NIC_CHOICES), nics_per_host, "network cards c"),
        "algorithm": dropdown([(compare.ALGORITHM_NAMES[a], a) for a in compare.ALGORITHMS], algorithm,
                              "algorithm"),
        "t_compute_ms": number(t_compute_ms, calculators.COMPUTE_ENTRY.label),
        "target_percent": number(target_percent, calculators.TARGET_ENTRY.label),
    }
    return make_calculator(calculators.cluster_results, controls, title="Your cluster: one gradient all-reduce",
                           choices=calculators.cluster_choices,
                           note=("Hosts of g GPUs on the link inside, c network cards each on a switch. Every "
                                 "message pays its start-up alpha; a port carries its messages of a step one "
                                 "after the other. The bandwidth a target needs between hosts is per network "
                                 "card, then on all the cards of a host the algorithm drives. Per "
                                 "direction; 1 MB = 10^6 B, 1 MiB = 2^20 B; busbw = algbw x 2(n-1)/n. The menus "
                                 "offer what runs on these hosts: on hosts of several GPUs the ring, the "
                                 "multi-rail ring and the hierarchical all-reduce, the others on h = 1 or h = n; "
                                 "at most g cards; links that join GPUs through a switch (not NVLink 1.0's "
                                 f"cube mesh, not UPI). {host_bounds()} Not modelled: overlap of compute and "
                                 "communication."))


def host_bounds() -> str:
    """The most GPUs a host holds on each link inside, in words, from the link records.

    >>> text = host_bounds()
    >>> all(f"{item.max_ranks}" in text for item in hardware.LINKS.values() if item.max_ranks)
    True
    """
    by_size: dict[int, list[str]] = {}
    for item in hardware.LINKS.values():
        if item.max_ranks:
            by_size.setdefault(item.max_ranks, []).append(item.name.split(" (")[0])
    parts = []
    for size, names in by_size.items():
        family = names[0].rsplit(" ", 1)[0]
        short = [names[0]] + [name.removeprefix(family + " ") for name in names[1:]]
        parts.append(f"{size}{' GPUs' if not parts else ''} on {'/'.join(short)}")
    return f"A host holds at most {', '.join(parts)}, {hardware.GENERIC_GPUS_PER_HOST} on other links."


def bandwidth_converter(value: str = "10 GB/s", direction: str = "algbw -> busbw", op: str = "all_reduce",
                        n: int = 8) -> Calculator:
    """Two-way converter between algorithm and bus bandwidth."""
    controls = {
        "value": text(value, calculators.RATE_ENTRY.label, "e.g. 10 GB/s or 100 Gb/s"),
        "direction": dropdown(list(cost.BANDWIDTH_DIRECTIONS), direction, "convert"),
        "op": dropdown([(k.replace("_", "-"), k) for k in cost.BUS_FACTORS], op, "collective"),
        "n": integer(n, 1, 4096, "ranks n"),
    }
    return make_calculator(calculators.bandwidth_conversion_results, controls, title="Algorithm bandwidth <-> bus bandwidth",
                           note="Per direction. algbw = buffer bytes / time; busbw = algbw x factor.")


def fold_loss_words(crossovers: Mapping[int, float], rival: str = "the ring") -> str:
    """How an algorithm that must fold off the powers of two compares with ``rival``, in words from its crossovers.

    ``crossovers`` maps each rank count n to the message size in bytes where the two times cross: the folding
    algorithm, with fewer start-ups, is faster below it and ``rival``, with fewer bytes, above it (as
    :func:`commlib.collectives.compare.crossover_sizes` finds it). ``0`` means slower at every size, ``math.inf``
    faster at every size. The sizes are written to two significant digits, because start-ups set them.

    >>> fold_loss_words({12: 954545.45, 97: 11244545.75})
    'loses to the ring for large messages (above about 950 kB on 12 ranks and 11 MB on 97)'
    >>> fold_loss_words({12: 0.0}), fold_loss_words({12: math.inf})
    ('loses to the ring at every size', 'keeps up with the ring')
    """
    if not crossovers:
        raise ValueError("crossovers is empty")
    sizes = [float(m) for m in crossovers.values()]
    if any(m < 0 or math.isnan(m) for m in sizes):
        raise ValueError(f"crossovers must be sizes >= 0 or inf; got {dict(crossovers)}")
    if all(m == math.inf for m in sizes):
        return f"keeps up with {rival}"
    if all(m == 0 for m in sizes):
        return f"loses to {rival} at every size"
    if not all(0 < m < math.inf for m in sizes):
        return f"loses to {rival} on some n, for large messages"
    where = [f"{format_size(float(f'{m:.2g}'), significant=2)} on {n}" + (" ranks" if i == 0 else "")
             for i, (n, m) in enumerate(crossovers.items())]
    listed = where[0] if len(where) == 1 else ", ".join(where[:-1]) + " and " + where[-1]
    return f"loses to {rival} for large messages (above about {listed})"


def bruck_steps_table(trace: Trace):
    """Markdown table: Bruck's all-reduce step by step, read from its executed trace (:func:`bruck_run`).

    Each row is one step: its part (reduce-scatter, where the receiver adds, or all-gather, where it copies),
    its distance d and, for every rank, the blocks of M/n it sends and to whom (``4, 5 → 4``: blocks 4 and 5
    to rank 4). The reduce-scatter runs the all-gather's distances backwards, largest first; at distance d a rank
    sends min(d, n - d) blocks, so a message may hold blocks that are not next to each other in the buffer
    (block n - 1 wraps round to block 0).

    >>> from commlib.experiments.collectives import bruck_run
    >>> print(bruck_steps_table(bruck_run(3)).data.splitlines()[6])
    | 3 | all-gather (receiver copies) | 1 | 0 → 2 | 1 → 0 | 2 → 1 |
    """
    n = trace.n
    words = {"reduce-scatter": "reduce-scatter (receiver adds)", "all-gather": "all-gather (receiver copies)"}
    rows = []
    for s in range(trace.steps):
        sent = sorted((m for m in trace.messages if m.step == s), key=lambda m: m.src)
        if sent[0].phase not in words:
            raise ValueError(f"trace must be a run of Bruck's all-reduce (bruck_run); step {s} is {sent[0].phase!r}")
        d = (sent[0].dst - sent[0].src) % n
        d = d if sent[0].phase == "reduce-scatter" else n - d   # the all-gather sends to r - d
        rows.append([s + 1, words[sent[0].phase], d]
                    + [f"{', '.join(map(str, m.chunk))} → {m.dst}" for m in sent])
    return markdown_table(["step", "part", "distance d"] + [f"rank {r} sends" for r in range(n)], rows,
                          caption=f"Bruck's all-reduce on {n} ranks: the blocks of M/{n} each rank sends, and to whom")
