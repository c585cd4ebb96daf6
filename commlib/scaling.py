r"""Scaling metrics done right, and the linear scaling rule of large-batch training.

**Weak scaling** (each of ``n`` workers keeps its own mini-batch of ``b``
samples, so the global batch is ``n b``), as in the PowerAI DDL benchmarks
(Cho et al. 2017). With ``T(1)`` the time of one iteration on one worker and
``T(n)`` on ``n`` workers:

* throughput: :math:`\Theta(n) = n b / T(n)` samples per second;
* speedup: :math:`S(n) = \Theta(n)/\Theta(1) = n\,T(1)/T(n)` -- how much
  faster ``n`` workers get through the same ``n b`` samples than one worker;
* scaling efficiency: :math:`E(n) = S(n)/n = T(1)/T(n)`, 1.0 being perfect;
* communication overhead: :math:`T(n) - T(1)` seconds per iteration (the
  iteration grows only because of communication, the per-worker work being
  the same), or as a share of :math:`T(n)`.

Speedup and efficiency come from :func:`commlib.cost.speedup` and
:func:`commlib.cost.scaling_efficiency` applied to the same work: one worker
needs :math:`n\,T(1)` for what ``n`` workers do in :math:`T(n)`.

>>> m = weak_scaling(t_compute=0.3, t_comm=0.1, n=4, batch_per_worker=32)
>>> round(m.speedup, 2), round(m.efficiency, 2), round(m.throughput_many, 1)
(3.0, 0.75, 320.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from . import cost, hardware
from .units import check_count, check_nonnegative, check_positive

__all__ = ["ScalingMetrics", "weak_scaling", "ring_weak_scaling", "linear_scaling_lr"]


@dataclass(frozen=True)
class ScalingMetrics:
    """The PowerAI DDL benchmark figures of one configuration (seconds, samples/s)."""

    n: int
    batch_per_worker: int
    t_one: float
    t_many: float
    throughput_one: float
    throughput_many: float
    speedup: float
    efficiency: float
    overhead: float
    overhead_share: float


def weak_scaling(t_compute: float, t_comm: float, n: int, batch_per_worker: int) -> ScalingMetrics:
    r"""Speedup, efficiency, throughput and overhead when ``n`` workers each process ``batch_per_worker``.

    ``t_compute`` is the seconds one worker needs for one iteration alone
    (:math:`T(1)`); ``t_comm`` the seconds of communication that the iteration
    adds on ``n`` workers (not hidden behind compute), so
    :math:`T(n) = T(1) + t_{comm}`. For ``n = 1`` there is nothing to
    communicate and ``t_comm`` must be 0.

    >>> weak_scaling(1.0, 0.0, 8, 32).efficiency
    1.0
    """
    t_compute = check_positive("t_compute", t_compute)
    t_comm = check_nonnegative("t_comm", t_comm)
    n = check_count("n", n)
    batch = check_count("batch_per_worker", batch_per_worker)
    if n == 1 and t_comm != 0:
        raise ValueError(f"t_comm must be 0 when n = 1 (one worker has no one to talk to), got {t_comm}")
    t_many = t_compute + t_comm
    return ScalingMetrics(
        n=n,
        batch_per_worker=batch,
        t_one=t_compute,
        t_many=t_many,
        throughput_one=batch / t_compute,
        throughput_many=n * batch / t_many,
        speedup=cost.speedup(n * t_compute, t_many),
        efficiency=cost.scaling_efficiency(n * t_compute, t_many, n),
        overhead=t_many - t_compute,
        overhead_share=cost.communication_overhead(t_many, t_compute),
    )


def linear_scaling_lr(base_lr: float, base_batch: int, batch: int) -> float:
    r"""Linear scaling rule (Goyal et al. 2017): multiply the batch by k, multiply the learning rate by k.

    :math:`\eta = \eta_0 \cdot B / B_0`. Goyal et al. use
    :math:`\eta = 0.1 \cdot kn/256` for ``n`` GPUs of ``k`` images each.
    Training with the rule and with gradual warm-up is :func:`commlib.training.train`.

    >>> linear_scaling_lr(0.1, 256, 32 * 256)   # 256 GPUs x 32 images
    3.2
    """
    base_lr = check_positive("base_lr", base_lr)
    base_batch = check_count("base_batch", base_batch)
    batch = check_count("batch", batch)
    return base_lr * batch / base_batch



def ring_weak_scaling(model: str, n: int, bandwidth: float, t_compute: float, batch_per_worker: int,
                      latency: float = 0.0, dtype: str = "fp32", hidden: float = 0.0) -> ScalingMetrics:
    r""":func:`weak_scaling` when the gradient of ``model`` is ring all-reduced once per iteration.

    :math:`t_{comm} = (1 - h)\,[2(n-1)\alpha + 2\frac{n-1}{n} M/B]` with ``M`` the
    gradient bytes (:func:`commlib.hardware.gradient_bytes`), ``B`` = ``bandwidth``
    in bytes/s per direction, ``alpha`` = ``latency`` in seconds, and ``h`` =
    ``hidden`` the share of the all-reduce hidden behind compute (0: none,
    as in a framework that does not overlap; see :mod:`commlib.overlap`).

    >>> m = ring_weak_scaling("resnet50", 8, 1.25e9, 0.2, 32)   # 10 Gb/s Ethernet
    >>> round(m.overhead * 1e3, 1), round(m.efficiency, 3)       # ms, fraction
    (143.1, 0.583)
    """
    hidden = float(hidden)
    if not 0.0 <= hidden <= 1.0:
        raise ValueError(f"hidden must lie in [0, 1], got {hidden!r}")
    n = check_count("n", n)
    nbytes = hardware.gradient_bytes(model, dtype)
    t_comm = 0.0 if n == 1 else (1.0 - hidden) * cost.allreduce_time(nbytes, n, bandwidth, latency)
    return weak_scaling(t_compute, t_comm, n, batch_per_worker)
