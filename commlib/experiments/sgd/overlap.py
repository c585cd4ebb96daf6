"""Experiments of chapter 5 on overlapping the all-reduce with backprop: bucket caps and links swept.

Model layer: each function runs :func:`commlib.sgd.overlap.overlap_timeline` over
a grid and returns the timelines; the figures in :mod:`commlib.views.sgd.overlap`
take them as input. A sweep keeps every timeline (not only the number a
figure plots), so a chapter can quote any of them and a test can check them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import hardware
from ...sgd import overlap
from ...units import check_nonnegative, check_positive

__all__ = ["BucketCapSweep", "bucket_cap_sweep", "LinkSweep", "link_sweep", "by_algorithm", "overlap_pays_words"]


@dataclass(frozen=True)
class BucketCapSweep:
    """Overlap timelines for each latency and each bucket cap.

    ``runs[i][j]`` is the timeline at latency ``latencies[i]`` (s) and bucket
    cap ``caps_mib[j]`` (MiB; 0 = every bucket after the first holds one layer).
    """

    caps_mib: tuple[float, ...]
    latencies: tuple[float, ...]
    runs: tuple[tuple[overlap.OverlapResult, ...], ...]

    def exposed(self, i: int) -> tuple[float, ...]:
        """Communication left after backward (s) at latency ``latencies[i]``, one value per cap."""
        return tuple(r.exposed for r in self.runs[i])


def bucket_cap_sweep(caps_mib, latencies=(0.0, 50e-6), **kwargs) -> BucketCapSweep:
    """:func:`commlib.sgd.overlap.bucket_sweep` over bucket caps ``caps_mib`` (MiB) for each latency alpha (s).

    Small buckets start communicating early in backward but pay alpha once per
    bucket; large ones pay it rarely but wait for more of backward. Sweeping the
    cap at two latencies shows the optimum move. Other arguments go to
    :func:`commlib.sgd.overlap.overlap_timeline` (``model``, ``n``, ``bandwidth``,
    ``t_backward``, ...). The cap swept is that of every bucket after the first,
    as DDP's ``bucket_cap_mb`` is: the first bucket keeps DDP's 1 MiB
    (``first_bucket_bytes``; ``None`` gives it the swept cap too), so the sweep
    at 25 MiB is the chapter's timeline. Raises ValueError naming ``caps_mib`` or
    ``latencies`` when a value is negative or either is empty.

    >>> sw = bucket_cap_sweep([0, 100], latencies=(0.0, 1e-4), model="alexnet")
    >>> [len(r.buckets) for r in sw.runs[0]]     # one per layer; then the 1 MiB first bucket and two of 100 MiB
    [8, 3]
    >>> all(b >= a for a, b in zip(sw.exposed(0), sw.exposed(1)))   # latency only adds exposed time
    True
    """
    caps = np.asarray([check_nonnegative("caps_mib", c) for c in caps_mib], dtype=float)
    latencies = tuple(check_nonnegative("latencies", a) for a in latencies)
    if caps.size == 0 or not latencies:
        raise ValueError("caps_mib and latencies must each hold at least one value >= 0")
    kwargs.setdefault("first_bucket_bytes", overlap.DDP_FIRST_BUCKET_BYTES)
    runs = tuple(tuple(overlap.bucket_sweep(caps * 2**20, latency=alpha, **kwargs)) for alpha in latencies)
    return BucketCapSweep(tuple(caps.tolist()), latencies, runs)


@dataclass(frozen=True)
class LinkSweep:
    """One overlap timeline of ``model`` on ``n`` ranks per link (DDP's default buckets), by link key."""

    model: str
    n: int
    runs: dict[str, overlap.OverlapResult]


def link_sweep(model: str = "resnet50", n: int = 16, links=("eth_10g", "eth_25g", "eth_100g", "ib_hdr", "nvlink2"),
               tflops: float = 10.0, batch: int = 32) -> LinkSweep:
    """The same training step on each link of ``links`` (keys of :func:`commlib.hardware.link`).

    Forward and backward last as :func:`commlib.sgd.overlap.step_compute_time`
    says for ``batch`` samples at ``tflops`` TFLOP/s achieved; the all-reduce
    of each bucket uses the link's bandwidth (per direction) and latency.
    Raises ValueError naming ``tflops`` when it is not > 0, and an unknown
    link key as :func:`commlib.hardware.link` does.

    >>> sw = link_sweep("resnet50", n=16, links=("eth_10g", "nvlink2"))
    >>> sw.runs["eth_10g"].exposed > sw.runs["nvlink2"].exposed     # a faster link leaves less exposed
    True
    """
    t_fwd, t_bwd = overlap.step_compute_time(model, batch, check_positive("tflops", tflops) * 1e12)
    runs = {}
    for key in links:
        item = hardware.link(key)
        runs[key] = overlap.overlap_timeline(model, n=n, bandwidth=item.bandwidth, latency=item.latency,
                                             t_backward=t_bwd, t_forward=t_fwd)
    return LinkSweep(model, n, runs)


def by_algorithm(algorithms=("ring", "halving_doubling"), **kwargs) -> dict[str, overlap.OverlapResult]:
    """The same training step with every bucket (and the no-overlap baseline) priced by each all-reduce algorithm of
    ``algorithms`` (names of :func:`commlib.cost.allreduce_time`), by name. Other arguments go to
    :func:`commlib.sgd.overlap.overlap_timeline`. At many ranks on a latency-bound link the ring's start-ups
    :math:`2(n-1)\\alpha` per bucket can outweigh what overlap hides, where halving-doubling's
    :math:`2\\log_2 n\\,\\alpha` do not.

    >>> r = by_algorithm(model="resnet50", n=1024, bandwidth=3.125e9, latency=1e-5, t_backward=0.052, t_forward=0.026)
    >>> [r[a].iteration_time < r[a].iteration_time_no_overlap for a in ("ring", "halving_doubling")]
    [False, True]
    """
    if not algorithms:
        raise ValueError("algorithms must name at least one all-reduce algorithm")
    return {a: overlap.overlap_timeline(algorithm=a, **kwargs) for a in algorithms}


def overlap_pays_words(result: overlap.OverlapResult) -> str:
    """Whether overlap shortens the step of ``result``, in a few words (for a sentence after "so").

    >>> r = overlap.overlap_timeline("alexnet", n=4, bandwidth=1.25e9, t_backward=0.2)
    >>> overlap_pays_words(r)
    'overlap is the faster step'
    """
    if result.iteration_time < result.iteration_time_no_overlap:
        return "overlap is the faster step"
    return "the step without overlap is still the faster one"
