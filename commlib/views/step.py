"""Views for the introduction: the alpha-beta picture and the all-reduce calculator."""

from __future__ import annotations

import numpy as np

from .. import cost, hardware
from ..collectives import compare
from ..step import calculators as step_calculators
from ..step import cost as step_cost
from ..units import format_rate, format_size, format_time, round_significant
from .calculator import Calculator, dropdown, integer, make_calculator, number
from .plots import COLORS, figure

__all__ = ["step_timeline_figure", "bandwidth_over_n_figure", "alpha_beta_figure", "allreduce_calculator", "step_calculator", "ranks_sweep"]


def step_timeline_figure(model: str = "resnet50", dtype: str = "fp32", n: int = 8, link: str = "eth_10g",
                         t_compute: float = 0.4, speedup: float = 4.0, buckets: int = 4):
    """One step on one rank as a timeline, three ways: compute then all-reduce; a GPU ``speedup`` times
    faster on the same network; and the all-reduce overlapped with the backward pass in ``buckets``.

    Compute in one colour, the all-reduce in another; the step's end is marked on each row. On the
    overlapped row a tick marks where the forward pass ends and the backward pass
    (:data:`commlib.step.cost.BACKWARD_SHARE` of ``t_compute``) begins, and each bucket's all-reduce
    starts when the backward pass has produced it (:func:`commlib.step.cost.bucketed_overlap`): the
    last, input-side bucket only after the backward pass ends.
    """
    item = hardware.link(link)
    nbytes = hardware.gradient_bytes(model, dtype)
    t_m = cost.allreduce_time(nbytes, n, item.bandwidth, item.latency)
    forward = (1 - step_cost.BACKWARD_SHARE) * t_compute
    pieces = step_cost.bucketed_overlap(t_compute, nbytes, n, item.bandwidth, item.latency, buckets)
    rows = [("compute, then all-reduce", (0.0, t_compute), [(t_compute, t_m)], 0),
            (f"GPU {speedup:g}x faster, same network", (0.0, t_compute / speedup), [(t_compute / speedup, t_m)], 0),
            (f"overlapped, {buckets} buckets", (0.0, t_compute), pieces, 1)]
    fig, ax = figure(7.2, 3.0)
    colors = (COLORS[0], COLORS[1])
    for i, (_, comp, comm, lane) in enumerate(rows):
        y = len(rows) - 1 - i
        ax.barh(y + 0.15, comp[1], left=comp[0], height=0.3, color=colors[0])
        for start, width in comm:
            ax.barh(y + (0.15 if lane == 0 else -0.2), width, left=start, height=0.3, color=colors[1],
                    edgecolor="white", linewidth=0.8)
        if lane:
            ax.plot([forward, forward], [y, y + 0.3], color="white", lw=1.5)
            ax.annotate("forward | backward", (forward, y + 0.3), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=8)
        end = max(comp[0] + comp[1], *(s + w for s, w in comm))
        ax.plot([end, end], [y - 0.4, y + 0.4], color=COLORS[7], lw=1)
        ax.annotate(f"step {1e3 * end:.0f} ms", (end, y + 0.3), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=9)
    ax.set_yticks(range(len(rows)), [label for label, *_ in rows][::-1])
    ax.set_xlabel("time within one step (s)")
    ax.set_xlim(0, 1.3 * (t_compute + t_m))
    ax.bar(0, 0, color=colors[0], label=r"compute $T_c$")
    ax.bar(0, 0, color=colors[1], label=r"all-reduce $T_m$")
    ax.legend(loc="lower right", fontsize=9)
    ax.set_title(f"{hardware.model(model).name}, {dtype}, n = {n}, {item.name}")
    fig.tight_layout()
    return fig


def bandwidth_over_n_figure(ns=None):
    """The bandwidth the VGG-16 example needs for its target efficiency without overlap (the all-reduce after the
    backward pass) against n: the ring at each start-up of
    :data:`commlib.experiments.step.STARTUPS` (gigabit TCP's alpha, half of it, 100 Gb/s RoCE's, matched to a wire
    that fast, and none: a thin grey line, on top), each in its own colour, dash and marker, and halving-doubling at
    gigabit TCP's alpha (reddish-purple squares, almost on the grey line); a dashed line in its ring's colour marks each
    ring's limit n - 1 = budget / (2 alpha), past which no bandwidth suffices, labelled along it."""
    from ..experiments.step import NO_STARTUP, STARTUPS, startup_seconds
    from ..worked import VGG16_AS_REPORTED as note

    alpha = startup_seconds(next(iter(STARTUPS)))   # gigabit TCP's, the example's first start-up
    ns = np.unique(np.geomspace(2, 16384, 240).astype(int)) if ns is None else np.asarray(ns)
    fig, ax = figure(6.8, 3.8)
    args = (note["d_bytes_used"], note["t_compute"], note["target_efficiency"])
    # colour-blind-safe colours, each ring also its own dash and marker (evenly spaced along the line)
    looks = iter([dict(color=COLORS[0], lw=2, ls="-", marker="o"), dict(color=COLORS[1], lw=2, ls="--", marker="^"),
                  dict(color=COLORS[3], lw=2, ls="-.", marker="D")])
    for name in STARTUPS:
        start_up = startup_seconds(name)
        style = dict(color="0.55", lw=1) if name == NO_STARTUP else dict(next(looks), ms=5, markevery=0.1)
        need = [step_cost.required_bandwidth(args[0], int(n), args[1], args[2], start_up) / 1e9 for n in ns]
        label = "ring, no start-up" if name == NO_STARTUP else f"ring, α = {1e6 * start_up:.0f} µs ({name})"
        line, = ax.plot(ns, need, label=label, zorder=3 if name == NO_STARTUP else 2, **style)
        limit = step_cost.largest_ranks_for_efficiency(args[1], args[2], start_up)
        if limit:   # the most ranks some bandwidth still serves; labelled along its line, below the curves
            ax.axvline(limit, color=line.get_color(), ls=(0, (4, 3)), lw=1)
            ax.annotate(f"n ≈ {round_significant(limit):,}", (limit, 0.03), xycoords=("data", "axes fraction"), xytext=(2, 0),
                        textcoords="offset points", ha="left", va="bottom", rotation=90, fontsize=9,
                        color=line.get_color())
    hd = [n for n in ns if int(n) & (int(n) - 1) == 0]
    need = [step_cost.required_bandwidth(args[0], int(n), args[1], args[2], alpha, "halving_doubling") / 1e9 for n in hd]
    ax.plot(hd, need, color=COLORS[5], marker="s", ms=5, ls=":",
            label=f"halving-doubling, α = {1e6 * alpha:.0f} µs", zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(5, 200)
    ax.set_xlabel("ranks n")
    ax.set_ylabel("bandwidth needed (GB/s, one direction)")
    ax.set_title(f"VGG-16, {100 * note['target_efficiency']:.0f} % efficiency, no overlap")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


def alpha_beta_figure(link_key: str = "eth_10g", n: int = 8, algorithm: str = "ring"):
    """Time of one all-reduce against message size on a log-log plot, latency and bandwidth terms apart."""
    item = hardware.link(link_key)
    sizes = np.logspace(2, 10, 81)
    terms = [cost.allreduce_terms(m, n, algorithm) for m in sizes]
    latency = np.array([t.steps * item.latency for t in terms])
    transfer = np.array([t.bytes / item.bandwidth for t in terms])
    fig, ax = figure(6.4, 3.8)
    ax.loglog(sizes, latency + transfer, color=COLORS[0], lw=2.5, label="total")
    ax.loglog(sizes, latency, color=COLORS[1], ls="--", label=r"latency term $a\,\alpha$")
    ax.loglog(sizes, transfer, color=COLORS[2], ls=":", lw=2, label=r"bandwidth term $b\,\beta$")
    cross = cost.latency_bandwidth_balance(n, item.bandwidth, item.latency, algorithm)
    ax.axvline(cross, color=COLORS[7], lw=0.8)
    # below the curves, right of the line: the region under the total where nothing is drawn
    ax.annotate(f"terms equal near {format_size(cross, digits=0)}", (cross, 0.04), xycoords=("data", "axes fraction"),
                xytext=(6, 0), textcoords="offset points", ha="left", va="bottom", fontsize=9)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("time (s)")
    ax.set_title(f"{algorithm} all-reduce, n = {n}, {item.name}")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig


def _model_label(key: str) -> str:
    item = hardware.model(key)
    return f"{item.name} ({item.params:,} parameters)"


def allreduce_calculator(model: str = "resnet50", dtype: str = "fp32", n: int = 8, link: str = "eth_10g",
                         algorithm: str = "ring", memory_gbs: float = 0.0) -> Calculator:
    """How long does one gradient all-reduce take? Model, dtype, ranks, link, algorithm -> time and rates.

    The computation is :func:`commlib.step.calculators.allreduce_results`; this only lays out the controls.
    """
    controls = {
        "model": dropdown([(_model_label(k), k) for k in hardware.MODELS], model, "model"),
        "dtype": dropdown(list(hardware.DTYPE_BYTES), dtype, "gradient dtype"),
        "n": integer(n, 1, 1024, "ranks n"),
        "link": dropdown([(hardware.link(key).name, key) for key in step_calculators.SWITCHED_LINK_KEYS], link, "link"),
        "algorithm": dropdown([(compare.ALGORITHM_NAMES[a], a) for a in cost.ALLREDUCE_ALGORITHMS], algorithm,
                              "algorithm"),
        "memory_gbs": number(memory_gbs, step_calculators.MEMORY_ENTRY.label),
    }
    return make_calculator(step_calculators.allreduce_results, controls, title="One gradient all-reduce",
                           note="Network: every rank has its own full-duplex link of the chosen kind into a switch "
                                "that never blocks (for an NVLink preset, an NVSwitch; NVLink 1.0, which had none, is refused). "
                                "Ranks beyond the largest NVLink domain the presets' sources describe for its "
                                f"generation, or beyond {hardware.GENERIC_GPUS_PER_HOST} on PCIe, are refused. "
                                "Bandwidth per direction; "
                                "1 MB = 10^6 B, 1 MiB = 2^20 B; "
                                "algorithm and bus bandwidth as nccl-tests defines them. Memory bandwidth "
                                "sets the reduction cost gamma = 3 / B_mem: 0 leaves it out; try "
                                f"{format_rate(hardware.accelerator('v100').memory_bandwidth, digits=0)}, a V100's "
                                "HBM2. The time adds the reduction after the copy (an upper bound); the fused "
                                "time hides it behind the copy (a lower bound).")


def step_calculator(model: str = "gpt2_xl", accelerator: str = "b200", utilization_pct: float = 40.0,
                    batch: int = 8192, n: int = 64, link: str = "ib_ndr", dtype: str = "bf16") -> Calculator:
    """Compute against communication: FLOPs per step -> compute time, all-reduce time, smallest batch per rank.

    The computation is :func:`commlib.step.calculators.step_results`.
    """
    controls = {
        "model": dropdown([(_model_label(k), k) for k in hardware.MODELS], model, "model"),
        "accelerator": dropdown([(f"{a.name} ({a.peak_flops / 1e12:g} {a.dtype} TFLOP/s)", k)
                                 for k, a in hardware.ACCELERATORS.items()], accelerator, "GPU"),
        "utilization_pct": number(utilization_pct, step_calculators.UTILIZATION_ENTRY.label),
        "batch": number(batch, step_calculators.BATCH_ENTRY.label),
        "n": integer(n, 1, 4096, "ranks n"),
        "link": dropdown([(hardware.link(key).name, key) for key in step_calculators.SWITCHED_LINK_KEYS], link, "link"),
        "dtype": dropdown(list(hardware.DTYPE_BYTES), dtype, "gradient dtype"),
    }
    return make_calculator(step_calculators.step_results, controls, title="Compute against communication",
                           note="A sample is a token for the language models (6 x parameters FLOPs to train, "
                                "Kaplan et al.) and an image for the CNNs (6 x the forward multiply-accumulates "
                                "torchvision counts). Compute: training FLOPs per sample x batch at utilization x "
                                "peak FLOP/s. Communication: ring all-reduce of the gradient, bandwidth per "
                                "direction, every rank with its own full-duplex link into a switch that never "
                                "blocks (an NVSwitch for NVLink presets; refused: NVLink 1.0, which had none, and ranks beyond "
                                "the largest NVLink domain the presets' sources describe for its generation or "
                                f"beyond {hardware.GENERIC_GPUS_PER_HOST} on PCIe), nothing overlapped. "
                                "A GPU reaches a network card over its host's PCIe, so a network link gives it "
                                "no more than that PCIe link carries (a B200 of an HGX B200: "
                                f"{hardware.link(hardware.accelerator('b200').host_link).name}). "
                                "The last rows assume the "
                                "optimizer waits for every bucket (PyTorch DDP); a scheduler that overlaps the "
                                "next forward pass too needs only T_c >= T_m.")


def ranks_sweep(model: str = "resnet50", dtype: str = "fp32", link: str = "eth_10g",
                ranks=(2, 4, 8, 16, 32, 64, 128, 256)):
    """Precomputed view of the calculator: all-reduce time of every algorithm as n grows, one frame per n."""
    from .animation import sweep_html

    nbytes = hardware.gradient_bytes(model, dtype)
    item = hardware.link(link)
    times = {alg: [cost.allreduce_time(nbytes, n, item.bandwidth, item.latency, alg) for n in ranks]
             for alg in cost.ALLREDUCE_ALGORITHMS}
    top = max(max(v) for v in times.values())

    names = [compare.ALGORITHM_NAMES[alg] for alg in cost.ALLREDUCE_ALGORITHMS]

    def draw(n):
        fig, ax = figure(8.0, 4.0)
        values = [times[alg][list(ranks).index(n)] for alg in cost.ALLREDUCE_ALGORITHMS]
        bars = ax.barh(names, values, color=COLORS[: len(values)])
        for bar, value in zip(bars, values):
            ax.annotate(format_time(value), (value, bar.get_y() + bar.get_height() / 2), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=12)
        ax.set_xscale("log")
        ax.set_xlim(min(min(v) for v in times.values()) / 2, top * 8)
        ax.tick_params(labelsize=12)
        ax.set_xlabel("time of one all-reduce (s, log scale)", fontsize=12)
        ax.set_title(f"{hardware.model(model).name}, {dtype}, n = {n}, {item.name}", fontsize=13)
        fig.tight_layout()
        return fig

    return sweep_html(draw, ranks, label="n = {}", start=2,
                      alt=f"Bar chart with one bar per all-reduce algorithm ({', '.join(names)}): the time of one "
                          f"all-reduce of {hardware.model(model).name}'s {dtype} gradient over {item.name}, "
                          f"one frame per number of ranks")
