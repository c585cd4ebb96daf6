"""Views for chapter 5: overlap of the bucketed all-reduce with backprop (Gantt chart, bucket sweep, calculator).

Everything drawn here is computed by :mod:`commlib.sgd.overlap`, :mod:`commlib.cost` and the
experiments of :mod:`commlib.experiments.sgd.overlap`; the figures and sweeps take those runs as
input and only lay them out.
"""

from __future__ import annotations

import numpy as np

from ... import cost, hardware
from ...experiments.sgd.overlap import BucketCapSweep, LinkSweep
from ...sgd import calculators as sgd_calculators
from ...sgd import overlap
from ...step import calculators as step_calculators
from ...units import format_time
from ..animation import sweep_html
from ..calculator import Calculator, dropdown, integer, make_calculator, number
from ..plots import COLORS, MARKERS, color, figure
from ..tables import markdown_table

__all__ = ["overlap_figure", "bucket_sweep_figure", "overlap_calculator", "bucket_table", "overlap_sweep"]


def overlap_figure(result: overlap.OverlapResult, title: str = "", t_max: float | None = None):
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
    first = result.buckets[0]
    if first.ready < 0.02 * result.t_backward:      # its layers' backward is too short to see: name it
        ax.annotate(f"bucket 0 ready at {format_time(first.ready)}", xy=(first.ready * ms, 2.0 + h / 2),
                    xytext=(2, 14), textcoords="offset points", fontsize=7,
                    arrowprops={"arrowstyle": "->", "color": COLORS[7], "lw": 0.8})
    ax.set_yticks(list(rows.values()), list(rows.keys()))
    ax.set_ylim(-0.6, 2.7)
    ax.set_xlim(0, (t_max if t_max is not None else max(result.t_no_overlap, result.t_end)) * ms * 1.02)
    ax.set_xlabel("time from the start of backward (ms)")
    ax.grid(axis="y", visible=False)
    ax.set_title(title or f"{len(result.buckets)} buckets; {100 * result.hidden_fraction:.0f} % of the "
                          f"all-reduce time hides behind backward", fontsize=10)
    fig.tight_layout()
    return fig


def _bucket_color(k: int) -> str:
    # skip yellow (too pale for thin bars) and black
    return COLORS[:6][k % 6]


def bucket_sweep_figure(sweep: BucketCapSweep, reference_latency: float | None = None):
    """Step time after backward (exposed communication) against the bucket cap, for a few latencies.

    ``sweep`` comes from :func:`commlib.experiments.sgd.overlap.bucket_cap_sweep`
    (caps in MiB of every bucket after the first; 0 = one layer per bucket after the first). The latency equal to
    ``reference_latency`` (seconds), if any, is labelled as the chapter's link.
    """
    fig, ax = figure(7.2, 3.6)
    caps = np.asarray(sweep.caps_mib, dtype=float)
    for i, (alpha, runs) in enumerate(zip(sweep.latencies, sweep.runs)):
        exposed = np.array([r.exposed for r in runs]) * 1e3
        mine = reference_latency is not None and np.isclose(alpha, reference_latency)
        name = f"α = {alpha * 1e6:g} µs" + (" (the chapter's link)" if mine else "")
        ax.plot(caps[caps > 0], exposed[caps > 0], color=color(i), marker=MARKERS[i], label=f"overlap, {name}")
        whole = runs[0].t_no_overlap - runs[0].t_backward
        ax.axhline(whole * 1e3, color=color(i), ls="--", lw=1,
                   label=f"no overlap (one all-reduce after backward), {name}")
    ax.axvline(overlap.DDP_BUCKET_BYTES / 2**20, color=COLORS[7], lw=0.8)
    ax.annotate("DDP default 25 MiB", (overlap.DDP_BUCKET_BYTES / 2**20, ax.get_ylim()[1]), xytext=(-4, -12),
                textcoords="offset points", fontsize=8, ha="right")
    ax.set_xscale("log")
    ax.set_xlabel("bucket cap (MiB)")
    ax.set_ylabel("communication left after backward (ms)")
    ax.legend(fontsize=7, loc="center right", bbox_to_anchor=(1.0, 0.65), handlelength=3.5)
    fig.tight_layout()
    return fig


def overlap_calculator(model: str = "resnet50", n: int = 16, link: str = "eth_25g", bucket_mib: float = 25.0,
                       tflops: float = 10.0, batch: int = 32) -> Calculator:
    """Model, ranks, link, bucket cap, achieved TFLOP/s, batch -> how much of the all-reduce hides
    (computed by :func:`commlib.sgd.calculators.overlap_results`)."""
    models = [(hardware.model(k).name, k) for k in overlap.LAYER_MODELS]
    links = [(hardware.LINKS[key].name, key) for key in step_calculators.SWITCHED_LINK_KEYS]   # links between GPUs, behind a switch
    return make_calculator(
        sgd_calculators.overlap_results,
        {
            "model": dropdown(models, model, "model"),
            "n": integer(n, 2, 1024, "ranks n"),
            "link": dropdown(links, link, "link"),
            "bucket_mib": number(bucket_mib, sgd_calculators.BUCKET_ENTRY.label),
            "tflops": number(tflops, sgd_calculators.TFLOPS_ENTRY.label),
            "batch": integer(batch, 1, 4096, "batch per GPU"),
        },
        title="Overlap of all-reduce with backprop",
        note="Bandwidth per direction, to any peer (NVLink: no more ranks than one domain holds); 1 MiB = 2^20 B; "
             "the bucket cap applies to every bucket after the first, which keeps DDP's 1 MiB (cap 0: one layer "
             "per bucket after the first); backward = 2 x forward; batch counts images (CNNs) or tokens "
             "(transformers).",
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


def overlap_sweep(sweep: LinkSweep):
    """A precomputed scrubber over links: the overlap timeline of one model with DDP's default buckets on each.

    ``sweep`` comes from :func:`commlib.experiments.sgd.overlap.link_sweep`.
    """

    # one time axis for every frame, so that backward keeps its length and the communication visibly shrinks
    t_max = max(max(r.t_no_overlap, r.t_end) for r in sweep.runs.values())

    def draw(key):
        item, r = hardware.link(key), sweep.runs[key]
        return overlap_figure(r, t_max=t_max, title=f"{item.name}: {len(r.buckets)} buckets, "
                                       f"{format_time(r.exposed)} exposed after backward")

    return sweep_html(draw, list(sweep.runs), label=lambda key: hardware.link(key).name,
                      alt=f"Overlap timeline of {hardware.model(sweep.model).name} on {sweep.n} GPUs for each link")
