"""What the calculators of chapters 4 and 5 compute: an SGD protocol's timing and training, and the
bucketed all-reduce overlapped with backprop.

Each returns label -> text with units; numpy-free, so the page runs it too (the SGD protocols in plain
Python: :mod:`commlib.sgd.calculator_model`).
"""

from __future__ import annotations

from .. import hardware
from ..step.calculators import check_switched_domain
from ..units import Entry, check_count, format_time
from .calculator_model import sgd_calculator_results
from .overlap import LAYER_MODELS, overlap_timeline, step_compute_time

__all__ = ["sgd_results", "overlap_results", "BUCKET_ENTRY", "TFLOPS_ENTRY", "STRAGGLER_ENTRY"]

#: The free entries of chapters 4 and 5's calculators: what each control is called and its physical range.
BUCKET_ENTRY = Entry("bucket cap (MiB)", "MiB", 0, 100_000)
TFLOPS_ENTRY = Entry("achieved TFLOP/s", "TFLOP/s", 0.001, 10_000)
STRAGGLER_ENTRY = Entry("straggler factor", "", 1, 100)


def sgd_results(protocol: str = "k_async", workers: int = 8, k: int = 2, compute: str = "exponential",
                slowdown: float = 1.0, updates: int = 600, gradients: int = 160, seed: int = 0) -> dict[str, str]:
    """Chapter 4's calculator: :func:`commlib.sgd.calculator_model.sgd_calculator_results`, the straggler
    factor checked against its range first."""
    return sgd_calculator_results(protocol, workers, k, compute, STRAGGLER_ENTRY.check(slowdown), updates,
                                  gradients, seed)


def overlap_results(model: str = "resnet50", n: int = 16, link: str = "eth_25g", bucket_mib: float = 25.0,
                    tflops: float = 10.0, batch: int = 32) -> dict[str, str]:
    """The overlap calculator: model, ranks, link, bucket cap, achieved TFLOP/s, batch -> what hides.

    ``model`` a preset of :data:`LAYER_MODELS`; ``n`` ranks (2 to 1024, and no
    more than one domain of the link holds, or a link no switch joins: :func:`commlib.step.calculators.check_switched_domain`);
    ``link`` a preset of :data:`commlib.hardware.LINKS` (its bandwidth per
    direction and latency, to any peer); ``bucket_mib`` the cap of every bucket
    after the first, in MiB (0 = each of them holds one layer; the first bucket
    keeps DDP's 1 MiB); ``tflops`` the
    compute rate the GPU sustains, in 10^12 FLOP/s; ``batch`` samples per GPU
    (images, or tokens for transformers). Returns label -> text with units.
    Pure Python (no numpy), so it also runs in the browser.

    >>> r = overlap_results("resnet50", n=16, link="eth_25g")
    >>> r["buckets (all-reduces)"]
    '5'
    >>> overlap_results(n=1)
    Traceback (most recent call last):
    ...
    ValueError: n must be >= 2 and <= 1024, got 1
    >>> overlap_results(n=1024, link="nvlink3")     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ranks n must be at most 16 over NVLink 3.0 (A100, 12 links): ...
    """
    if model not in LAYER_MODELS:
        raise ValueError(f"model must be one of {', '.join(LAYER_MODELS)}; got {model!r}")
    n = check_switched_domain(link, check_count("n", n, 2, 1024))
    item = hardware.link(link)
    bucket_mib = BUCKET_ENTRY.check(bucket_mib)
    tflops = TFLOPS_ENTRY.check(tflops)
    batch = check_count("batch", batch, 1, 4096)
    t_fwd, t_bwd = step_compute_time(model, batch, tflops * 1e12)
    r = overlap_timeline(model, n=n, bandwidth=item.bandwidth, latency=item.latency, t_backward=t_bwd,
                         bucket_bytes=bucket_mib * 2**20, t_forward=t_fwd)
    compute = t_fwd + t_bwd
    return {
        "forward + backward compute": format_time(compute),
        "buckets (all-reduces)": f"{len(r.buckets)}",
        "all-reduce time, summed": format_time(r.comm_total),
        "hidden behind backward": f"{format_time(r.hidden)} ({100 * r.hidden_fraction:.1f} %)",
        "exposed after backward": format_time(r.exposed),
        "step time with overlap": format_time(r.iteration_time),
        "step time without overlap": format_time(r.iteration_time_no_overlap),
        "scaling efficiency with / without": f"{100 * compute / r.iteration_time:.1f} % / "
                                             f"{100 * compute / r.iteration_time_no_overlap:.1f} %",
    }
