"""What chapter 0's calculators compute: one all-reduce of a preset model, and one training step.

Each ``*_results`` function takes the controls' values (the units in their names) and returns
label -> text with units, which the calculator shows; numpy-free, so the page runs it too.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .. import hardware
from ..collectives import cost
from ..step import cost as step_cost
from ..units import Entry, check_count, format_rate, format_size, format_time
from .cost import compute_time, min_tokens_compute_bound, reduction_time_bounds

__all__ = ["allreduce_results", "step_results", "NOTHING_TO_SEND", "check_domain", "check_switched", "check_switched_domain", "LINK_KEYS",
           "SWITCHED_LINK_KEYS", "MEMORY_ENTRY", "UTILIZATION_ENTRY", "BATCH_ENTRY",
           "OVERLAP_ROW", "BACKWARD_ROW", "RATE_ROW"]

#: What a calculator shows for a time with one rank (or GPU): no ratio of zero times, no "0.00 ns" (``.format("GPU")``).
NOTHING_TO_SEND = "none: with one {} there is nothing to send"

#: The free entries of chapter 0's calculators: what each control is called and its physical range.
MEMORY_ENTRY = Entry("memory (GB/s)", "GB/s", 0.001, 100_000, zero="0 leaves the reduction out")
UTILIZATION_ENTRY = Entry("utilization (%)", "%", 1, 100)
BATCH_ENTRY = Entry("batch per rank (samples)", "samples", 1, 100_000_000, whole=True)


#: The links chapter 0's calculators offer: every preset that joins GPUs (not UPI, which joins CPU sockets).
LINK_KEYS: tuple[str, ...] = tuple(key for key, item in hardware.LINKS.items() if item.joins_gpus)

#: The links chapter 0's own calculators offer: those of :data:`LINK_KEYS` behind a switch
#: (:attr:`commlib.hardware.Link.switched`), as chapter 1's; not NVLink 1.0, whose GPUs are wired to fixed peers.
SWITCHED_LINK_KEYS: tuple[str, ...] = tuple(key for key in LINK_KEYS if hardware.LINKS[key].switched)


def check_domain(link: str, n: int) -> int:
    """``n`` if one domain of ``link`` holds ``n`` ranks, else ValueError naming the control (ranks n).

    The calculators give every rank the preset's full rate to any peer through a switch that never
    blocks. For NVLink 2.0 and later that switch is an NVSwitch (chapter 0's calculators refuse NVLink 1.0,
    which has none: :func:`check_switched_domain`), and no NVLink domain holds more GPUs than its
    generation's largest shipped system (:attr:`commlib.hardware.Link.max_ranks`); no bus (PCIe, UPI)
    has a switch joining more GPUs than one host holds, bounded by the stated
    :data:`commlib.hardware.GENERIC_GPUS_PER_HOST` (:attr:`commlib.hardware.Link.gpus_per_host`). A network
    link has no such bound. A link that joins CPU sockets, not GPUs, is refused by name.

    >>> check_domain("nvlink4", 256)
    256
    >>> check_domain("nvlink3", 64)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ranks n must be at most 16 over NVLink 3.0 (A100, 12 links): its largest NVLink domain is 16 A100s ...
    >>> check_domain("pcie5_x16", 64)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ranks n must be at most 16 over PCIe 5.0 x16: ...
    """
    item = hardware.link(link)
    if not item.joins_gpus:
        raise ValueError(f"link: {item.name} joins CPU sockets, not GPUs; choose a GPU link (PCIe, NVLink) or a "
                         f"network link")
    if item.kind != "bus" or n <= item.gpus_per_host:
        return n
    if item.max_ranks:
        why = f"its largest NVLink domain is {item.domain}"
    else:
        why = (f"one host's bus joins at most {item.gpus_per_host} GPUs here (no preset system puts more behind "
               f"one switch)")
    raise ValueError(f"ranks n must be at most {item.gpus_per_host} over {item.name}: {why}; beyond it, GPUs meet "
                     f"over a network link")


def check_switched(link: str) -> hardware.Link:
    """The link's record if a switch joins its ranks, else ValueError naming the link control.

    >>> check_switched("eth_25g").name
    'Ethernet 25 Gb/s'
    >>> check_switched("nvlink1")    # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: link: NVLink 1.0 (P100, 4 links) joins fixed peers directly: ... no switch; this calculator ...
    """
    item = hardware.link(link)
    if not item.switched:
        raise ValueError(f"link: {item.name} joins fixed peers directly"
                         + (f": {item.domain}" if item.domain else ", with no switch")
                         + "; this calculator gives every rank the full rate to any peer through a switch: choose a "
                           "link behind a switch")
    return item


def check_switched_domain(link: str, n: int) -> int:
    """:func:`check_domain`, then :func:`check_switched` (chapter 1's rule): ``n`` if a switch joins
    ``link``'s ranks and one domain holds ``n``, else ValueError naming the control.

    >>> check_switched_domain("nvlink2", 8)
    8
    >>> check_switched_domain("nvlink1", 8)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: link: NVLink 1.0 (P100, 4 links) joins fixed peers directly: ... no switch; ...
    """
    n = check_domain(link, n)
    check_switched(link)
    return n


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "0 %"


def allreduce_results(model: str = "resnet50", dtype: str = "fp32", n: int = 8, link: str = "eth_10g",
                      algorithm: str = "ring", memory_gbs: float = 0.0) -> dict[str, str]:
    """Chapter 0's calculator: one gradient all-reduce of a preset model over a preset link.

    ``memory_gbs`` (GB/s) sets the reduction cost gamma = 3 / B_mem; 0 leaves
    the reduction out. Every rank has the preset's full rate to any peer: its own full-duplex
    link into a switch that never blocks (for NVLink 2.0 and later, an NVSwitch); a link with no switch
    (NVLink 1.0) is refused, and so is ``n`` beyond one NVLink domain or one host's bus
    (:func:`check_switched_domain`). Returns label -> text with units.

    >>> allreduce_results("vgg16", "fp32", 4, "eth_1g")["time of one all-reduce"]
    '6.64 s'
    >>> allreduce_results("vgg16", "fp32", 1, "eth_1g")["time of one all-reduce"]
    'none: with one GPU there is nothing to send'
    """
    memory_gbs = MEMORY_ENTRY.check(memory_gbs)
    nbytes = hardware.gradient_bytes(model, dtype)
    item = hardware.link(link)
    check_switched_domain(link, check_count("n", n, minimum=1))
    if n == 1:   # one GPU: no all-reduce, and no ratio of zero times
        return {"gradient size": f"{format_size(nbytes)} = {format_size(nbytes, binary=True)}",
                "time of one all-reduce": NOTHING_TO_SEND.format("GPU")}
    terms = cost.allreduce_terms(nbytes, n, algorithm)
    gamma = cost.reduction_gamma(memory_gbs * 1e9) if memory_gbs else 0.0
    seconds = terms.time(item.bandwidth, item.latency, gamma)
    out = {
        "gradient size": f"{format_size(nbytes)} = {format_size(nbytes, binary=True)}",
        "time of one all-reduce": format_time(seconds),
        "messages on the critical path": f"{terms.steps}",
        "bytes on the critical path": format_size(terms.bytes),
        "bytes reduced on the critical path": format_size(terms.reduced),
        "latency share of the time": _percent(terms.steps * item.latency, seconds),
        "reduction share of the time": _percent(terms.reduced * gamma, seconds),
    }
    if gamma:
        fused, _ = reduction_time_bounds(nbytes, n, item.bandwidth, item.latency, gamma, algorithm)
        out["time, reduction fused into the copy"] = format_time(fused)
    if seconds > 0:
        out["algorithm bandwidth"] = format_rate(cost.algorithm_bandwidth(nbytes, seconds))
        out["bus bandwidth"] = format_rate(cost.bus_bandwidth("all_reduce", nbytes, n, seconds))
    return out


#: The backward pass's share of T_c as the rows below print it (4 of the 6 FLOPs per parameter and token).
_BACKWARD = f"{Fraction(step_cost.BACKWARD_SHARE).limit_denominator(12)} T_c"

#: The step calculator's row: the rate each GPU gets over the link (a network card is reached over the host's PCIe).
RATE_ROW = "link rate per GPU"

#: The step calculator's row: the smallest batch per rank whose backward pass lasts at least T_m.
BACKWARD_ROW = f"smallest batch per rank whose backward pass ({_BACKWARD}) >= T_m"

#: The step calculator's last row: could a perfect overlap of the all-reduce with the backward pass hide it?
OVERLAP_ROW = f"could the backward pass alone hide T_m by overlap (DDP)? ({_BACKWARD} >= T_m)"


def step_results(model: str = "gpt2_xl", accelerator: str = "b200", utilization_pct: float = 40.0,
                 batch: int = 8192, n: int = 64, link: str = "ib_ndr", dtype: str = "bf16") -> dict[str, str]:
    """Compute against communication for one step: the model's training FLOPs per sample x the batch.

    ``batch`` is the samples per rank per step: tokens for a transformer (6 Psi FLOPs each),
    images for a CNN (6 x its forward multiply-accumulates each,
    :attr:`commlib.hardware.Model.training_flops_per_sample`); ``utilization_pct`` the share of
    the accelerator's peak FLOP/s that training achieves. Ring all-reduce of the gradient in
    ``dtype`` at the rate each GPU gets over the link (a network link capped by the GPU's host link,
    :func:`commlib.hardware.network_rate`), every rank with its own full-duplex link into a switch that never blocks (a link with no
    switch refused, and ``n`` beyond one NVLink domain or one host's bus, :func:`check_switched_domain`), nothing overlapped: the
    step takes T_c + T_m. The row :data:`OVERLAP_ROW` says whether the backward pass (4/6 of T_c) lasts
    at least T_m, which
    overlap needs to hide the all-reduce when the optimizer step waits for every bucket (PyTorch
    DDP); a scheduler that overlaps it with the next forward pass too needs only T_c >= T_m.

    >>> step_results()[OVERLAP_ROW], step_results(accelerator="h100")[OVERLAP_ROW]   # a B200's step, an H100's
    ('no', 'yes')
    >>> step_results("resnet50", "v100", 40, 256, 8, "nvlink2", "fp32")["compute time T_c"]   # 256 images
    '125.64 ms'
    >>> step_results(n=1)["smallest batch per rank with T_c >= T_m"]   # as allreduce_results says at n = 1
    'none: with one GPU there is nothing to send'
    """
    u = UTILIZATION_ENTRY.check(utilization_pct) / 100
    batch = int(BATCH_ENTRY.check(batch))
    n = check_switched_domain(link, check_count("n", n, minimum=1))
    net = hardware.model(model)
    params, per_sample, unit = net.params, net.training_flops_per_sample, f"{net.sample}s"
    chip, item = hardware.accelerator(accelerator), hardware.link(link)
    rate, cap = hardware.network_rate(accelerator, link), hardware.host_cap(accelerator, link)
    s = hardware.dtype_bytes(dtype)
    flops = per_sample * batch
    t_c = compute_time(flops, chip.peak_flops, u)
    t_m = cost.allreduce_time(params * s, n, rate, item.latency)
    x_min = min_tokens_compute_bound(params, n, rate, chip.peak_flops, u, s, item.latency,
                                     flops_per_sample=per_sample)
    none = NOTHING_TO_SEND.format("GPU")   # one GPU: no all-reduce, and no batch it must hide ("none", as above)
    return {
        "one sample": (f"one {net.sample}{f' ({net.sample_size})' if net.sample_size else ''}: "
                       f"{per_sample / 1e9:,.3g} GFLOP to train (6 x {net.forward_macs / 1e9:,.3g} G multiply-accumulates)"),
        "FLOPs per rank per step": f"{flops:.3g} FLOP",
        "achieved FLOP/s": f"{chip.peak_flops * u / 1e12:.0f} TFLOP/s",
        RATE_ROW: (f"{format_rate(rate)} per direction"
                   + (f", capped by the {chip.name}'s {cap.name} host link (the link offers {format_rate(item.bandwidth)})"
                      if cap else "")),
        "compute time T_c": format_time(t_c),
        "all-reduce time T_m": none if n == 1 else format_time(t_m),
        "efficiency T_c / (T_c + T_m)": f"{100 * step_cost.parallel_efficiency(t_c, t_m):.1f} %",
        "smallest batch per rank with T_c >= T_m": none if n == 1 else f"{math.ceil(x_min):,} {unit}",
        BACKWARD_ROW: none if n == 1 else f"{math.ceil(x_min / step_cost.BACKWARD_SHARE):,} {unit}",
        OVERLAP_ROW: "yes" if step_cost.BACKWARD_SHARE * t_c >= t_m else "no",
    }
