"""Figures and the calculator of chapter 7 (today's collectives). Results come from the model layer."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.ticker import NullFormatter

from .. import cost, hardware
from ..today import algorithm_choice as tuning
from ..today import calculators as today_calculators
from ..today import in_network, zero
from .calculator import Calculator, dropdown, integer, make_calculator, text
from .plots import MARKERS, PALETTE, color, figure

__all__ = ["verdicts_table", "protocols_figure", "link_loads_figure", "nvls_steps_figure",
           "chooser_figure", "zero_figure", "loads_figure", "compression_figure",
           "compression_bytes_figure", "local_sgd_figure", "local_results_table",
           "chooser_calculator", "sharding_calculator", "size_text", "choices_table", "machines_table"]


#: One colour per algorithm, the same in every panel and figure of the chapter.
ALGORITHM_COLORS = {alg: color(i) for i, alg in enumerate(tuning.ALGORITHMS)}

#: The control (uncompressed, synchronous) is black in every figure of the chapter.
CONTROL_COLOR = "black"


def _label_ends(ax, items, log: bool = False, gap: float = 0.07) -> None:
    """Write each line's name at its right end, ``items`` = (x, y, text, colour), nudged apart vertically.

    ``gap`` is the least distance between two labels as a share of the axis height (in log10 units on a log axis).
    """
    if not items:
        return
    lo, hi = ax.get_ylim()
    to = (lambda v: math.log10(v)) if log else (lambda v: v)
    back = (lambda v: 10.0**v) if log else (lambda v: v)
    step = gap * (to(hi) - to(lo))
    items = sorted(items, key=lambda it: to(it[1]))
    placed = []
    for _, y, _, _ in items:
        placed.append(to(y) if not placed else max(to(y), placed[-1] + step))
    excess = placed[-1] - (to(hi) - step / 2)                 # keep the top label inside the axes
    if excess > 0:
        placed = [pos - excess for pos in placed]
    ax.set_ylim(lo, hi)
    for (x, _, text_, col), pos in zip(items, placed):
        ax.annotate(text_, (x, back(pos)), color=col, fontsize=8, ha="left", va="center")


#: One line style per protocol (the protocols figure draws one algorithm, so colour stays the algorithm's).
PROTOCOL_STYLES = {"LL": ":", "LL128": "--", "Simple": "-"}


def protocols_figure(machine_key: str = "nvswitch_node", collective: str = "all_reduce", algorithm: str = "ring"):
    """Predicted time of one algorithm over each of its protocols against M: latency traded for bandwidth.

    Each protocol's line is named at its right end; the algorithm's colour is the chooser figure's.
    """
    mach = tuning.machine(machine_key)
    sizes = 2.0 ** np.arange(6, 32)
    fig, ax = figure(5.6, 3.4)
    ends = []
    for proto in tuning.PROTOCOLS:
        if tuning.predict(collective, algorithm, proto, 1.0, mach) is None:
            continue
        t = [tuning.predict(collective, algorithm, proto, s, mach).time for s in sizes]
        ax.loglog(sizes, t, PROTOCOL_STYLES[proto], color=ALGORITHM_COLORS[algorithm], lw=1.5)
        ends.append((sizes[-1] * 1.5, t[-1], f"{algorithm}/{proto}", ALGORITHM_COLORS[algorithm]))
    ax.set_xlim(sizes[0], sizes[-1] * 60)
    _label_ends(ax, ends, log=True, gap=0.09)
    ax.set_title(mach.name, fontsize=9)
    ax.set_xlabel("message M (bytes)")
    ax.set_ylabel("predicted time (s)")
    fig.tight_layout()
    return fig


def chooser_figure(collective: str = "all_reduce", machines=("nvswitch_node", "one_gpu_per_node", "pcie_node")):
    """Predicted time of each algorithm (at its best protocol) against M, one panel per machine; the choice marked.

    One line per algorithm, coloured by algorithm (:data:`ALGORITHM_COLORS`) and named at its right end; the thick
    grey band beneath them is the chooser's pick, and a black dot on it marks each size where the pick changes
    (:func:`commlib.today.algorithm_choice.crossovers`: a change of algorithm or of protocol alone).
    """
    sizes = 2.0 ** np.arange(6, 32)
    fig, axes = figure(4.0 * len(machines), 3.6, ncols=len(machines), sharey=False)
    for i, (ax, key) in enumerate(zip(np.atleast_1d(axes), machines)):
        mach = tuning.machine(key)
        algorithms = [a for a in tuning.ALGORITHMS
                      if any(c.algorithm == a for c in tuning.candidates(collective, 1.0, mach))]
        best = [tuning.choose(collective, s, mach).time for s in sizes]
        ax.loglog(sizes, best, color="black", lw=6, alpha=0.3, solid_capstyle="round", zorder=0)
        ends = []
        for a in algorithms:
            t = [min(c.time for c in tuning.candidates(collective, s, mach) if c.algorithm == a) for s in sizes]
            ax.loglog(sizes, t, color=ALGORITHM_COLORS[a], lw=1.2)
            ends.append((sizes[-1] * 1.5, t[-1], a, ALGORITHM_COLORS[a]))
        cross = [math.sqrt(x.low * x.high) for x in tuning.crossovers(collective, mach, sizes[0], sizes[-1])]
        ax.scatter(cross, [tuning.choose(collective, m, mach).time for m in cross], color="black", s=18, zorder=3)
        ax.set_xlim(sizes[0], sizes[-1] * 40)
        _label_ends(ax, ends, log=True)
        if i == 0:
            ax.text(0.03, 0.97, "grey band: the pick\ndots: the pick changes", transform=ax.transAxes, fontsize=8,
                    va="top", color="dimgrey")
        ax.set_title(mach.name, fontsize=9)
        ax.set_xlabel("message M (bytes)")
    np.atleast_1d(axes)[0].set_ylabel("predicted time (s)")
    fig.tight_layout()
    return fig


def link_loads_figure(loads: dict, nbytes: float):
    """Bytes on one rank's link, up and down, in units of M: reducing switch against ring (from innetwork.link_loads)."""
    fig, ax = figure(5.0, 3.2)
    names = list(loads)
    for j, direction in enumerate(("up", "down")):
        vals = [loads[name][direction] / nbytes for name in names]
        bars = ax.bar(np.arange(len(names)) + 0.38 * j, vals, 0.36, color=color(j), hatch=["", "//"][j],
                      edgecolor="white", label=f"{direction} (rank to switch)" if j == 0 else "down (switch to rank)")
        for b, v in zip(bars, vals):
            ax.annotate(f"{v:.2f} M", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(np.arange(len(names)) + 0.19, [f"{name} all-reduce" for name in names])
    ax.set_ylabel("bytes on one rank's link (units of M)")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_ylim(0, 2.2)
    fig.tight_layout()
    return fig


def nvls_steps_figure(n: int = 8):
    """NVLS's four steps on one GPU's links (:func:`commlib.today.in_network.nvls_step_bytes`): an arrow up (GPU to
    switch) or down per step, labelled with its bytes as M or M/n; one colour and line style per direction."""
    steps = in_network.nvls_step_bytes(n, 1.0)
    fig, ax = figure(7.2, 3.4)
    ax.set_xlim(0.3, len(steps) + 0.7)
    ax.set_ylim(-0.62, 1.32)
    ax.axis("off")
    ax.add_patch(plt_rectangle((0.4, 1.0), len(steps) + 0.2, 0.22, "0.85"))
    ax.text((len(steps) + 1) / 2, 1.11, "NVSwitch (adds, multicasts)", ha="center", va="center", fontsize=9)
    ax.add_patch(plt_rectangle((0.4, -0.02), len(steps) + 0.2, 0.22, "0.92"))
    ax.text((len(steps) + 1) / 2, 0.09, "GPU i (its buffer of M bytes, cut into n shares of M/n)", ha="center",
            va="center", fontsize=9)
    style = {"up": (color(0), "-"), "down": (color(1), "--")}
    for k, (direction, nbytes, what) in enumerate(steps, start=1):
        col, ls = style[direction]
        lo, hi = 0.22, 0.98
        start, end = (lo, hi) if direction == "up" else (hi, lo)
        ax.annotate("", (k, end), (k, start), arrowprops=dict(arrowstyle="-|>", color=col, lw=2.2, ls=ls,
                                                               mutation_scale=16))
        label = "M" if math.isclose(nbytes, 1.0) else ("M/n" if math.isclose(nbytes * n, 1.0) else f"{nbytes:.2f} M")
        ax.text(k + 0.07, 0.6, label, color=col, fontsize=12, fontweight="bold", ha="left", va="center")
        ax.text(k, -0.1, f"step {k}: {direction}", ha="center", va="top", fontsize=8.5, color=col)
        ax.text(k, -0.25, "\n".join(_wrap(what, 22)), ha="center", va="top", fontsize=7.5)
    fig.tight_layout()
    return fig


def _wrap(text_: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text_, width)


def plt_rectangle(xy, width: float, height: float, face: str):
    from matplotlib.patches import Rectangle

    return Rectangle(xy, width, height, facecolor=face, edgecolor="0.3", lw=0.8)


def zero_fit_words(params: int, n: int, gpu: hardware.Accelerator) -> str:
    """Which ZeRO stages' model state fits in ``gpu``'s memory (:func:`commlib.cost.fitting_stages`), a sentence.

    >>> import textwrap
    >>> print(textwrap.fill(zero_fit_words(7_500_000_000, 64, hardware.accelerator("h100")), 100))
    Plain data parallelism needs 120 GB of model state per GPU, more than one H100 SXM5's 80 GiB (86 GB)
    hold: the model does not fit without sharding, and fits from stage 1 on (model state only;
    activations come on top).
    """
    if gpu.memory is None:
        raise ValueError(f"gpu {gpu.key!r} has no memory size")
    fits = cost.fitting_stages(params, n, gpu.memory)
    plain = cost.memory_per_rank(params, n, 0) / 1e9
    mem = f"{gpu.memory / 2**30:.0f} GiB ({gpu.memory / 1e9:.0f} GB)"
    if 0 in fits:
        return (f"Plain data parallelism needs {plain:.0f} GB of model state per GPU, within one {gpu.name}'s "
                f"{mem}: this model fits without sharding (model state only; activations come on top).")
    head = (f"Plain data parallelism needs {plain:.0f} GB of model state per GPU, more than one {gpu.name}'s "
            f"{mem} hold: the model does not fit without sharding")
    return head + (f", and fits from stage {min(fits)} on (model state only; activations come on top)." if fits
                   else ", nor at any stage on these GPUs.")


def zero_figure(params: int, n: int, dtype: str = "bf16", gpu: hardware.Accelerator | None = None):
    """Memory per rank against bytes sent per step, one point per ZeRO stage; with ``gpu``, a dashed line at its memory."""
    fig, ax = figure(5.5, 3.6)
    if gpu is not None and gpu.memory is not None:
        ax.axhline(gpu.memory / 1e9, color=CONTROL_COLOR, linestyle="--", linewidth=1)
        ax.annotate(f"one {gpu.name}'s memory ({gpu.memory / 2**30:.0f} GiB, {gpu.memory / 1e9:.0f} GB)", (0.02, gpu.memory / 1e9),
                    xycoords=("axes fraction", "data"), textcoords="offset points", xytext=(0, -11), fontsize=8)
    for st in cost.ZERO_STAGES:
        mem = zero.memory_per_rank(params, n, st) / 1e9
        sent = cost.zero_bytes_per_rank(params, n, st, dtype) / 1e9
        ax.scatter([sent], [mem], color=color(st), marker=MARKERS[st], s=60)
        ax.annotate(f"stage {st}", (sent, mem), textcoords="offset points", xytext=(6, 4))
    ax.set_yscale("log")
    ax.set_xlim(0, 1.25 * cost.zero_bytes_per_rank(params, n, 3, dtype) / 1e9)
    ax.set_xlabel("bytes each rank sends per step (GB)")
    ax.set_ylabel("model state per rank (GB)")
    fig.tight_layout()
    return fig


def prefetch_timeline_figure(cases: dict, layers: int = 4):
    """Gantt chart of a forward pass's first ``layers`` layers, from :func:`commlib.today.zero.prefetch_schedule`.

    ``cases`` maps a panel title to ``(compute, gather)``, each a list of per-layer times in seconds. Each panel has
    four lanes: gathers and computes without prefetching, then with it. Gathers are blue and hatched, computes
    orange and plain, each bar numbered by its layer; on the prefetched compute lane a bracket spans each step
    from one layer's start to the next's, labelled with its length, max(compute, next gather), in ms.
    """
    fig, axes = figure(7.4, 1.9 * len(cases) + 0.4, nrows=len(cases), squeeze=False)
    lanes = [("no prefetch", False, "gather"), ("no prefetch", False, "compute"),
             ("prefetch", True, "gather"), ("prefetch", True, "compute")]
    looks = {"gather": (color(0), "//"), "compute": (color(1), "")}
    for ax, (title, (compute, gather)) in zip(axes[:, 0], cases.items()):
        compute, gather = list(compute)[:layers], list(gather)[:layers]
        rows = {pre: zero.prefetch_schedule(compute, gather, prefetch=pre) for pre in (False, True)}
        for y, (_mode, pre, kind) in enumerate(lanes):
            face, hatch = looks[kind]
            for i, r in enumerate(rows[pre]):
                t0, t1 = 1e3 * r[f"{kind}_start"], 1e3 * r[f"{kind}_end"]
                ax.barh(-y, t1 - t0, left=t0, height=0.62, color=face, hatch=hatch, edgecolor="white")
                ax.text((t0 + t1) / 2, -y, str(i), ha="center", va="center", fontsize=8,
                        color="white" if kind == "gather" else "black", fontweight="bold")
        starts = [1e3 * r["compute_start"] for r in rows[True]]
        for a, b in zip(starts, starts[1:]):
            ax.annotate("", (b, -3.5), (a, -3.5), arrowprops=dict(arrowstyle="<->", color="0.2", lw=0.9))
            ax.text((a + b) / 2, -3.62, f"{b - a:.1f} ms", ha="center", va="top", fontsize=7.5)
        ax.set_yticks([-y for y in range(len(lanes))], [f"{mode}: {kind}" for mode, _, kind in lanes], fontsize=8)
        ax.set_ylim(-4.1, 0.5)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", visible=False)
    axes[-1, 0].set_xlabel(f"time from the start of the forward pass (ms), first {layers} layers")
    fig.tight_layout()
    return fig


def loads_figure(loads_by_skew: dict, title: str = ""):
    """Token copies each expert's rank receives, one group of bars per skew; ``title`` names the routing."""
    fig, ax = figure(6.0, 3.4)
    if title:
        ax.set_title(title, fontsize=9)
    skews = list(loads_by_skew)
    experts = len(next(iter(loads_by_skew.values())))
    width = 0.8 / len(skews)
    for i, s in enumerate(skews):
        ax.bar(np.arange(experts) + i * width, loads_by_skew[s], width, color=color(i), label=f"skew {s:g}",
               hatch=["", "//", "..", "xx"][i % 4], edgecolor="white")
    ax.set_xticks(np.arange(experts) + 0.4 - width / 2, [str(e) for e in range(experts)])
    ax.set_xlabel("expert (= rank)")
    ax.set_ylabel("token copies received")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


#: Colours after the control's black, the two blues kept apart (sky only when six others are taken).
_AFTER_CONTROL = [PALETTE[k] for k in ("blue", "orange", "green", "purple", "vermillion", "sky", "yellow")]


def _line_color(i: int) -> str:
    """Line i of a figure whose first line is the control: black for it, the palette after."""
    return CONTROL_COLOR if i == 0 else _AFTER_CONTROL[(i - 1) % len(_AFTER_CONTROL)]


def compression_figure(runs: dict, names: dict | None = None):
    """Loss against bytes one worker sent (from the first step on), one line per compressor; "none" is the control.

    The control (the first run) is black; each line is named at its end, by ``names`` (method -> name) where given
    (the lines end level, so each name sits below its line's end, at two heights in turn).
    """
    names = names or {}
    fig, ax = figure(6.0, 3.6)
    ends = []
    for i, (name, r) in enumerate(runs.items()):
        ax.semilogx(r.total_bytes[1:], r.losses[1:], color=_line_color(i), marker=MARKERS[i], ms=4,
                    ls=["-", "--", "-.", ":"][i % 4])
        ends.append((r.total_bytes[-1] * 1.3, r.losses[-1], names.get(name, name), _line_color(i)))
    ends.sort(key=lambda e: e[0])                                # the lines end level: name each below its own end,
    lo, hi = ax.get_ylim()                                       # in the order they end, at two heights in turn
    ax.set_ylim(lo - 0.14 * (hi - lo), hi)
    for k, (x, y, t, c) in enumerate(ends):
        ax.annotate(t, (x / 1.3, y - (0.03 + 0.06 * (k % 2)) * (hi - lo)), color=c, fontsize=8, ha="center", va="top")
    ax.set_xlabel("bytes one worker has sent")
    ax.set_ylabel("training loss (nats)")
    fig.tight_layout()
    return fig


def compression_bytes_figure(workers, table: dict, names: dict | None = None, panels: dict | None = None):
    """Bytes one worker sends per step against the number of workers n, one line per method, named at its end.

    ``table`` is :func:`commlib.today.compression.bytes_by_workers`'s result for ``workers``; its first method
    (the uncompressed control) is black, the others keep the colours of :func:`compression_figure`. ``panels``,
    if given, maps a title to such a table (for instance the chapter's small gradient and one large layer),
    drawn side by side; ``table`` is then ignored.
    """
    names = names or {}
    panels = panels or {"": table}
    fig, axes = figure(5.2 * len(panels), 3.6, ncols=len(panels))
    axes = list(np.atleast_1d(axes))
    for ax, (title, tab) in zip(axes, panels.items()):
        ends = []
        for i, (method, values) in enumerate(tab.items()):
            ax.loglog(list(workers), values, color=_line_color(i), marker=MARKERS[i], ms=4,
                      ls=["-", "--", "-.", ":"][i % 4])
            ends.append((list(workers)[-1] * 1.3, values[-1], names.get(method, method), _line_color(i)))
        ax.set_xlim(right=list(workers)[-1] * 6)
        _label_ends(ax, ends, log=True)
        ax.set_xlabel("workers n")
        if title:
            ax.set_title(title, fontsize=9)
    axes[0].set_ylabel("bytes one worker sends per step")
    fig.tight_layout()
    return fig


def _label_below_ends(ax, items, levels: int = 2) -> None:
    """Write each line's name in its colour just below its end, ``items`` = (x, y, text, colour), where the lines end
    at different x but level y: in the order the lines end, at ``levels`` heights in turn, so that names of lines that
    end close together (or at the same x) stand one under the other. The axes grow downwards to make room.
    """
    if not items:
        return
    lo, hi = ax.get_ylim()
    step = 0.06 * (hi - lo)
    ax.set_ylim(lo - (levels + 0.5) * step, hi)
    for k, (x, y, text_, col) in enumerate(sorted(items, key=lambda e: e[0])):
        ax.annotate(text_, (x, y - (0.5 + k % levels) * step), color=col, fontsize=8, ha="center", va="top")


def local_sgd_figure(runs: dict, budget: float | None = None, groups: dict | None = None):
    """Loss against wall-clock time (left, zoomed on where the runs end) and against bytes sent (right), one line per run.

    The first run is the control (black); each run keeps its colour, marker and line style in every panel, and each
    line is named in its colour at its own end (on the time panel right of it, nudged apart where the ends crowd; on
    the bytes panel below it, one under the other where lines end together). ``groups``, if given,
    maps a title to the labels of the runs drawn together, one row of two panels each (so that a row holds few lines);
    by default one row draws them all. ``budget`` (seconds), if given, is drawn as a vertical line on each time panel:
    every run ends at or before it.
    """
    labels = list(runs)
    groups = groups or {"": tuple(labels)}
    unknown = [x for g in groups.values() for x in g if x not in runs]
    if unknown:
        raise ValueError(f"groups name runs that runs lacks: {unknown}")
    fig, axes = figure(10.0, 3.4 * len(groups), nrows=len(groups), ncols=2, squeeze=False)
    for (title, members), (a1, a2) in zip(groups.items(), axes):
        ends_t, ends_b = [], []
        for label in members:
            i, r = labels.index(label), runs[label]
            kw = dict(color=_line_color(i), marker=MARKERS[i % len(MARKERS)], ms=3, ls=["-", "--", "-.", ":", "-"][i % 5])
            a1.plot(r.times, r.losses, **kw)
            a2.semilogx(r.bytes_sent[1:], r.losses[1:], **kw)
            ends_t.append((float(r.times[-1]), r.final_loss, label, _line_color(i)))
            ends_b.append((float(r.bytes_sent[-1]), r.final_loss, label, _line_color(i)))
        finals = [runs[x].final_loss for x in members]
        low, high = min(finals), max(finals)
        pad = max(high - low, 1e-3)
        a1.set_ylim(low - 0.3 * pad, high + 1.5 * pad)             # the last stretch, where the runs part
        lo_t = min(float(runs[x].times[0]) for x in members)
        edge = max(max(e[0] for e in ends_t), budget or 0.0)
        if budget is not None:
            a1.axvline(budget, color="grey", lw=1, ls=":")
            a1.annotate("budget", (budget, high + 1.3 * pad), ha="right", va="top", fontsize=8, color="grey")
        a1.set_xlim(right=edge + 0.3 * (edge - lo_t))
        _label_ends(a1, [(x + 0.02 * (edge - lo_t), y, t, c) for x, y, t, c in ends_t], gap=0.08)
        a2.set_xlim(right=max(e[0] for e in ends_b) * 2)
        a2.xaxis.set_minor_formatter(NullFormatter())              # powers of ten only, however short the range
        xs = [math.log10(e[0]) for e in ends_b]                    # as many heights as lines end close together
        _label_below_ends(a2, ends_b, levels=max(sum(abs(x - y) < 0.35 for y in xs) for x in xs))
        a1.set_xlabel("wall-clock time, slowest worker (s)")
        a2.set_xlabel("bytes one worker has sent")
        a1.set_ylabel("training loss (nats), zoomed")
        a2.set_ylabel("training loss (nats)")
        if title:
            a1.set_title(title, fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def local_results_table(rows, caption: str = ""):
    """The chapter's local-SGD results (:func:`commlib.experiments.today.local_results`), one row a setting."""
    from .tables import markdown_table

    return markdown_table(
        ("setting", "local SGD's lead over synchronous SGD at the same per-worker batch (nats, mean over its claim's seeds)",
         "share of it a larger batch closes (by the seeds' mean, the median seed and each half of the seeds)",
         "what it says"),
        [(r.setting, f"{r.lead:.3f}", r.closes or "not run", r.meaning) for r in rows], caption)


def chooser_calculator(machine_key: str = "nvswitch_node", collective: str = "all_reduce",
                       size: str = "64 MiB") -> Calculator:
    """Which (algorithm, protocol) the cost model picks. Compute: :func:`commlib.today.calculators.chooser_results`."""
    controls = {
        "machine_key": dropdown([(m.name, k) for k, m in tuning.MACHINES.items()], machine_key, "machine"),
        "collective": dropdown(list(tuning.COLLECTIVES), collective, "collective"),
        "size": text(size, today_calculators.MESSAGE_ENTRY.label, "64 MiB"),
    }
    return make_calculator(today_calculators.chooser_results, controls, title="Which algorithm and protocol?",
                           note="A cost model in NCCL 2.30.7's form, with its bandwidth factors and its latencies on the "
                                "NVSwitch node, but round constants for the links and the other latencies. "
                                "For all-gather and reduce-scatter M is the whole gathered buffer. "
                                "Bandwidth per direction; 1 MiB = 2^20 B.")


def sharding_calculator(model: str = "gpt2_xl", n: int = 64, stage: int = 3, dtype: str = "bf16",
                        link: str = "ib_ndr") -> Calculator:
    """ZeRO stage against memory and traffic. Compute: :func:`commlib.today.calculators.sharding_results`."""
    networks = [(lk.name, key) for key, lk in hardware.LINKS.items() if lk.kind == "network"]
    controls = {
        "model": dropdown([(name, key) for key, (name, _) in today_calculators.sharding_models().items()], model,
                          "model"),
        "n": integer(n, 1, 4096, "ranks n"),
        "stage": integer(stage, 0, 3, "ZeRO stage"),
        "dtype": dropdown(["bf16", "fp16", "fp32"], dtype, "dtype of what travels"),
        "link": dropdown(networks, link, "network link"),
    }
    return make_calculator(today_calculators.sharding_results, controls, title="ZeRO: memory against traffic",
                           note="Mixed-precision Adam (2 + 2 + 12 B a parameter), activations not counted; "
                                "ring collectives, bandwidth per direction; 1 GB = 10^9 B.")


def size_text(nbytes: float, digits: int = 2) -> str:
    """A byte count with an IEC prefix, to ``digits`` significant digits: ``size_text(1568609.4) == '1.5 MiB'``.

    For a size known to within a few per cent at best (a crossover of a model with round constants).
    """
    from ..units import format_size

    if not nbytes > 0:
        raise ValueError(f"nbytes must be > 0, got {nbytes!r}")
    if digits < 1:
        raise ValueError(f"digits must be >= 1, got {digits!r}")
    unit = next((2.0**e for e in (40, 30, 20, 10) if nbytes >= 2.0**e), 1.0)
    value = float(f"{nbytes / unit:.{digits}g}")
    if value >= 1024 and unit < 2.0**40:           # rounding reached the next prefix
        unit, value = unit * 1024, float(f"{value / 1024:.{digits}g}")
    decimals = max(0, digits - 1 - int(math.floor(math.log10(value))))
    return format_size(value * unit, binary=True, digits=decimals)


#: The machines and collectives of chapter 7's table of choices, one row each.
CHOICE_CASES = tuple((m, c) for m in ("nvswitch_node", "one_gpu_per_node", "pcie_node")
                     for c in ("all_reduce", "all_gather"))


def machines_table(keys=None):
    """The chooser's machines (:data:`commlib.today.algorithm_choice.MACHINES`, or those of ``keys``), one row each:
    its GPUs and nodes, the bandwidth $B$ of a GPU's links per direction, and the extra latency each message pays
    per hop on them (a network hop across nodes; none inside an NVSwitch node, where NCCL's own latencies apply).

    >>> print(machines_table(["pcie_node"]).data.splitlines()[-1])
    | 8 GPUs on PCIe 4 x16 | 8 | 1 | 25 | 1 |
    """
    from .tables import markdown_table

    rows = []
    for key in (tuning.MACHINES if keys is None else keys):
        m = tuning.machine(key)
        hop = f"{1e6 * m.hop_latency:.0f}" + (" (NCCL's own per-hop latencies)" if m.nccl_nvlink_latencies else "")
        rows.append([m.name, m.ranks, m.nodes, f"{m.bandwidth / 1e9:.0f}", hop])
    return markdown_table(["machine", "GPUs", "nodes", "$B$ (GB/s, per direction)",
                           "extra latency per hop (µs)"], rows)


def choices_table(cases=CHOICE_CASES):
    """The chooser's picks along M, one row per (machine key, collective) of ``cases``.

    Each row lists the (algorithm, protocol) pairs in the order M grows, and the sizes where the pick changes
    (:func:`commlib.today.algorithm_choice.crossovers`, quoted by :func:`size_text` to two digits).
    """
    from .tables import markdown_table

    rows = []
    for key, collective in cases:
        xs = tuning.crossovers(collective, key)
        only = tuning.choose(collective, 1.0, tuning.machine(key))      # the pick at every size, if it never changes
        picks = [xs[0].below] + [x.above for x in xs] if xs else [(only.algorithm, only.protocol)]
        rows.append([tuning.machine(key).name, collective.replace("_", "-"),
                     " → ".join("/".join(p) for p in picks),
                     ", ".join(size_text(x.size) for x in xs) or "none"])
    return markdown_table(["machine", "collective", "picks, smallest M first", "the pick changes at about"], rows)


#: Short names for the rows of chapter 7's verdict tables (the claims' questions are long).
VERDICT_LABELS = {
    "ch07.compressors_reach_control": "compressors against the control",
    "ch07.topk_keep_fraction": "top-k, much stronger compression",
    "ch07.topk_one_entry": "top-k keeping one entry",
    "ch07.local_vs_sync": "local SGD against synchronous SGD",
    "ch07.local_vs_sync_no_stragglers": "the same, no stragglers",
    "ch07.local_vs_sync_fast_sync": "the same, a fast synchronisation",
    "ch07.local_vs_large_batch": "local SGD against a larger batch, H = 16",
    "ch07.local_vs_large_batch_h64": "the same, H = 64",
    "ch07.diloco_vs_averaging": "DiLoCo against plain averaging",
}


def verdicts_table(verdicts, caption: str = "", spec: str = ".3f"):
    """Chapter 7's claims' ``verdicts`` (:func:`commlib.experiments.claims.verdict` of each key) as one table:
    each contender at its best, over the seeds.

    Rows are named by :data:`VERDICT_LABELS` (else the claim's question), each claim's contenders from the best
    mean to the worst, so that its second row is the runner-up the verdict is taken against; see
    :func:`commlib.views.claims.verdict_table`.
    """
    from .claims import verdict_table

    return verdict_table(list(verdicts), spec, caption, by_mean=True,
                         label=lambda v: VERDICT_LABELS.get(v.claim.key, v.claim.question))





def _signed_percent(x: float) -> str:
    """A share as a whole signed percent, with no sign where it rounds to zero: ``_signed_percent(-0.001) == '0%'``."""
    whole = round(100 * x)
    return f"{whole:+d}%" if whole else "0%"


def nvls_measured_table(rows):
    """The published all-reduce peaks beside the chooser's formula and NCCL 2.30.7's own figure as read from its
    source (:func:`commlib.today.nvls_measured.predictions`), one row each: node, algorithm (forced, or inferred),
    NCCL version as reported, measured busbw (a range where the report gave one) and each figure with its miss
    against the middle of the range, GB/s."""
    from .tables import markdown_table

    out = []
    for r in rows:
        m = r.measurement
        lo, hi = (f"{b / 1e9:.0f}" for b in m.busbw)
        how = ("NVLS, forced" if m.forced else "NVLS, inferred") if m.algorithm == "nvls" else "ring"
        out.append([m.node, how, m.nccl or "not given", lo if lo == hi else f"{lo}-{hi}",
                    f"{r.predicted / 1e9:.0f} ({_signed_percent(r.error)})",
                    f"{r.nccl / 1e9:.0f} ({_signed_percent(r.nccl_error)})"])
    return markdown_table(["node", "algorithm", "NCCL version, as reported", "measured busbw (GB/s)",
                           "the chooser's formula (GB/s, miss)", "NCCL's own figure, as read (GB/s, miss)"], out)


def nvls_measured_figure(nvls_rows, ring_rows):
    """Bus bandwidth of an all-reduce against the GPUs taking part in one H100 node: the measured peaks (hollow
    markers, the middle of a reported range), the chooser's formula (lines) and NCCL's own NVLS figure as read from
    its source (dotted, crosses); NVLS and the ring each in its own colour, marker and line style."""
    fig, ax = figure(6.4, 3.8)
    # the ring first, larger squares, so that NVLS's circles stay visible where the two measured the same
    for rows, label, i, ls, size in ((ring_rows, "ring", 1, "--", 10), (nvls_rows, "NVLS", 0, "-", 6)):
        p = [r.measurement.gpus for r in rows]
        ax.plot(p, [r.predicted / 1e9 for r in rows], ls, color=color(i), lw=1.8, label=f"{label}, the chooser's formula")
        ax.plot(p, [r.measurement.measured / 1e9 for r in rows], MARKERS[i], color=color(i), mfc="white", mew=1.6,
                ms=size, ls="none", zorder=3, label=f"{label}, measured peak")
    p = [r.measurement.gpus for r in nvls_rows]
    ax.plot(p, [r.nccl / 1e9 for r in nvls_rows], ":", marker="x", color=color(2), lw=1.6, ms=7,
            label="NVLS, NCCL's own figure (as read)")
    ax.set_xlabel("GPUs of one H100 node taking part")
    ax.set_ylabel("all-reduce busbw (GB/s)")
    ax.set_xlim(min(r.measurement.gpus for r in ring_rows) - 0.3, 8.3)
    ax.set_ylim(0, 560)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="lower right")
    fig.tight_layout()
    return fig
