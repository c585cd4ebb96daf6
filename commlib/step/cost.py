r"""One data-parallel step in closed form: what travels, how long it computes, when it stays compute-bound.

A step of data-parallel training computes for :math:`T_c` and communicates for
:math:`T_m`. This module gives the three estimates chapter 0 teaches:

* **What travels** (:func:`traffic_per_rank`), all in one data type: with plain
  all-reduce data parallelism only the gradient does; a parameter server's worker
  pushes the gradient and pulls the parameters (about half the all-reduce's bytes
  per worker), while each server's card carries n/k gradients; ZeRO-3 / FSDP
  all-gathers the weights as well (about 1.5x the bytes, Rajbhandari et al. 2020).
  The dtype of the gradient that is reduced is the recipe's choice (fp32 under
  PyTorch's automatic mixed precision, whose parameters stay fp32).
* **Compute time from FLOPs** (:func:`training_flops`, :func:`compute_time`):
  training a transformer costs about :math:`6\Psi` FLOPs per token (2 forward,
  4 backward; Kaplan et al. 2020), divided by the FLOP/s the GPU achieves.
* **The compute-bound condition** (:func:`min_tokens_compute_bound`): the
  smallest batch per rank for which :math:`T_c \ge T_m`.

It also bounds the reduction's share of an all-reduce
(:func:`reduction_time_bounds`) and holds the computation of chapter 0's
calculators (:mod:`commlib.step.calculators`).

Pure Python: imports no numpy, so the website can run the calculators in the
browser. SI units: bytes, seconds, bytes/s one direction, FLOP/s.

>>> round(traffic_per_rank(1e9, "zero3", 8).sent / traffic_per_rank(1e9, "allreduce", 8).sent, 2)
1.5
>>> training_flops(1e9, 1000) / 1e12   # 6 x 1e9 parameters x 1000 tokens, in TFLOP
6.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import hardware
from ..collectives import cost
from ..units import check_count, check_fraction, check_nonnegative, check_positive

__all__ = [
    "BACKWARD_SHARE",
    "min_tokens_backward_hides",
    "batch_backward_hides",
    "bucketed_overlap",
    "parallel_efficiency",
    "communication_time_for_efficiency",
    "required_bandwidth",
    "largest_ranks_for_efficiency",
    "speedup",
    "scaling_efficiency",
    "communication_overhead",
    "PALM_MODEL_FLOPS_UTILIZATION",
    "TRAFFIC_RECIPES",
    "Traffic",
    "traffic_per_rank",
    "training_flops",
    "compute_time",
    "min_tokens_compute_bound",
    "batch_for_time",
    "reduction_time_bounds",
    "reduction_shares",
]


#: Share of peak FLOP/s that PaLM 540B's training achieved in model FLOPs, as
#: reported by Chowdhery et al. (2022): a measured utilization, for scale.
PALM_MODEL_FLOPS_UTILIZATION = 0.462


@dataclass(frozen=True)
class Traffic:
    """Bytes one worker sends and receives in one step, what they are, and what one server's card carries.

    ``server`` is the bytes each way through one server machine's card (None when the recipe has
    no server): the parameter server's real cost, which the workers' figures do not show.
    """

    recipe: str
    label: str
    what: str
    sent: float
    received: float
    server: float | None = None


#: Data-parallel recipes: label, what crosses the wire, the per-worker volume in units of the
#: buffer Psi x s (sent and received, each direction) as a function of the number of workers n,
#: and the volume through one of k server machines' cards as a function of (n, k) (None: no server).
TRAFFIC_RECIPES: dict[str, tuple[str, str, object, object]] = {
    "allreduce": ("all-reduce (ring)", "gradients", lambda n: 2 * (n - 1) / n, None),
    "parameter_server": ("parameter server, k separate servers", "gradients up, parameters down",
                         lambda n: 1.0, lambda n, k: n / k),
    "zero3": ("ZeRO-3 / FSDP", "gradients (reduce-scatter) and weights (all-gather, twice)",
              lambda n: 3 * (n - 1) / n, None),
}


def traffic_per_rank(params: float, recipe: str = "allreduce", n: int = 8, dtype: str = "bf16",
                     servers: int = 1) -> Traffic:
    r"""Bytes one of ``n`` workers sends (and receives) per step under ``recipe``, every value in ``dtype``.

    With :math:`s` the bytes of ``dtype`` (one type for every recipe, so that they compare):

    * ``allreduce``: ring all-reduce of the gradients, :math:`2\frac{n-1}{n}\Psi s`.
    * ``parameter_server``: a worker pushes its gradient and pulls the parameters,
      :math:`\Psi s` each way, :math:`\frac{n}{2(n-1)}` of the all-reduce's (about half for large n,
      all of it at n = 2); one of the k = ``servers``
      server machines' cards carries :math:`n\Psi s/k` each way (Li et al. 2014).
    * ``zero3``: ZeRO-3 / FSDP reduce-scatters the gradients and all-gathers the weights
      before the forward and again before the backward pass: :math:`3\frac{n-1}{n}\Psi s`,
      1.5x the all-reduce (Rajbhandari et al. 2020).

    >>> t = traffic_per_rank(100, "parameter_server", 4, "fp32", servers=2)
    >>> t.sent, t.received, t.server, t.what
    (400.0, 400.0, 800.0, 'gradients up, parameters down')
    """
    check_positive("params", params)
    n = check_count("n", n, minimum=1)
    servers = check_count("servers", servers, minimum=1)
    if recipe not in TRAFFIC_RECIPES:
        raise ValueError(f"recipe must be one of: {', '.join(TRAFFIC_RECIPES)}; got {recipe!r}")
    if dtype not in hardware.DTYPE_BYTES:
        raise ValueError(f"dtype must be one of {', '.join(hardware.DTYPE_BYTES)}, got {dtype!r}")
    # The idea: the recipe's share of the buffer per worker, and per server card.
    label, what, factor, server = TRAFFIC_RECIPES[recipe]
    buffer = params * hardware.dtype_bytes(dtype)
    volume = factor(n) * buffer
    if n == 1 and server is None:
        volume = 0.0
    through = None if server is None else float(server(n, servers) * buffer)
    return Traffic(recipe, label, what, float(volume), float(volume), through)


def training_flops(params: float, tokens: float) -> float:
    r"""FLOPs to train on ``tokens`` tokens: about :math:`6\Psi` per token.

    Forward pass 2 FLOPs per parameter per token (a multiply and an add),
    backward pass twice that (Kaplan et al. 2020, :math:`C \approx 6N` per
    token, non-embedding parameters). For other models use samples x training
    FLOPs per sample instead (:attr:`commlib.hardware.Model.training_flops_per_sample`).

    >>> round(training_flops(124_439_808, 1024) / 1e12, 3)   # GPT-2, 1024 tokens, in TFLOP
    0.765
    """
    check_nonnegative("params", params)
    check_nonnegative("tokens", tokens)
    return 6.0 * params * tokens


def compute_time(flops: float, peak_flops: float, utilization: float = 0.4) -> float:
    """Seconds to execute ``flops`` at ``utilization`` x ``peak_flops`` (the FLOP/s achieved).

    >>> compute_time(6e12, 100e12, 0.5)
    0.12
    """
    check_nonnegative("flops", flops)
    check_positive("peak_flops", peak_flops)
    check_fraction("utilization", utilization, open_low=True, open_high=False)
    return flops / (peak_flops * utilization)


def min_tokens_compute_bound(params: float, n: int, bandwidth: float, peak_flops: float,
                             utilization: float = 0.4, dtype_bytes: int = 2, latency: float = 0.0,
                             algorithm: str = "ring", flops_per_sample: float | None = None) -> float:
    r"""Smallest batch per rank (tokens, or samples) for which compute time >= all-reduce time.

    :math:`6\Psi x / (u F_{peak}) \ge T_m` gives :math:`x_{min} = u F_{peak}\,T_m / (6\Psi)`,
    with ``utilization`` :math:`u` and ``peak_flops`` :math:`F_{peak}` (FLOP/s),
    ``params`` :math:`\Psi`, ``dtype_bytes`` :math:`s`, ``bandwidth`` :math:`B`
    in bytes/s per direction and ``latency`` :math:`\alpha` in seconds. For the
    ring without latency, :math:`T_m = 2\frac{n-1}{n}\Psi s / B` and
    :math:`\Psi` cancels: :math:`x_{min} = \frac{n-1}{n}\,\frac{u F_{peak} s}{3B}`,
    the same for every model that costs :math:`6\Psi` per token. A model with another rule
    passes its training FLOPs per sample as ``flops_per_sample`` (a CNN's: 6 x its forward
    multiply-accumulates per image, :attr:`commlib.hardware.Model.training_flops_per_sample`),
    and the batch is then in its samples.

    >>> round(min_tokens_compute_bound(1e9, 2, 50e9, 1e15, 0.5, 2))  # (1/2) x 5e14 x 2 / (3 x 5e10)
    3333
    >>> round(min_tokens_compute_bound(1e9, 2, 50e9, 1e15, 0.5, 2, flops_per_sample=60e9))   # 10x the FLOPs
    333
    """
    check_positive("params", params)
    n = check_count("n", n, minimum=1)
    check_positive("bandwidth", bandwidth)
    check_fraction("utilization", utilization, open_low=True, open_high=False)
    check_positive("peak_flops", peak_flops)
    check_positive("dtype_bytes", dtype_bytes)
    if flops_per_sample is not None:
        check_positive("flops_per_sample", flops_per_sample)
    t_comm = cost.allreduce_time(params * dtype_bytes, n, bandwidth, latency, algorithm)
    return batch_for_time(t_comm, params, peak_flops, utilization, flops_per_sample)


def batch_for_time(t_comm: float, params: float, peak_flops: float, utilization: float = 0.4,
                   flops_per_sample: float | None = None) -> float:
    r"""Batch per rank (tokens, or samples) whose compute lasts ``t_comm`` seconds: :math:`u F_{peak} T_m / (6\Psi)`.

    :func:`min_tokens_compute_bound` calls it with a one-link all-reduce's time; pass any other
    all-reduce's time (a hierarchical one, :func:`commlib.cost.hierarchical_allreduce_time`) to get
    the smallest batch per rank for which that all-reduce is no longer than the compute.
    ``flops_per_sample`` as in :func:`min_tokens_compute_bound`.

    >>> round(batch_for_time(0.012, 1e9, 1e15, 0.5))   # 0.5 x 1e15 x 0.012 / 6e9
    1000
    """
    check_nonnegative("t_comm", t_comm)
    check_positive("params", params)
    check_positive("peak_flops", peak_flops)
    check_fraction("utilization", utilization, open_low=True, open_high=False)
    if flops_per_sample is not None:
        check_positive("flops_per_sample", flops_per_sample)
    # The idea: x samples compute for x F / (u F_peak); set that equal to T_m.
    per_sample = 6.0 * params if flops_per_sample is None else flops_per_sample
    return utilization * peak_flops * t_comm / per_sample


#: Share of a training step's FLOPs in the backward pass (4 of the 6 per parameter and token; for a CNN
#: too, the backward pass costing twice the forward): all a gradient all-reduce can run beside when the
#: optimizer step waits for every bucket before the next forward pass starts (PyTorch DDP).
BACKWARD_SHARE = 4 / 6


def batch_backward_hides(t_comm: float, params: float, peak_flops: float, utilization: float = 0.4,
                         flops_per_sample: float | None = None) -> float:
    """Batch per rank whose backward pass (:data:`BACKWARD_SHARE` of the step's compute) lasts ``t_comm`` seconds:
    :func:`batch_for_time` over :data:`BACKWARD_SHARE`, for any all-reduce's time (one message, DDP's buckets, several
    GPUs a host). :func:`min_tokens_backward_hides` is the same for a one-link all-reduce of the whole gradient.

    >>> round(batch_backward_hides(0.012, 1e9, 1e15, 0.5))   # 1000 tokens compute for 12 ms; the backward for 8 ms
    1500
    """
    return batch_for_time(t_comm, params, peak_flops, utilization, flops_per_sample) / BACKWARD_SHARE


def min_tokens_backward_hides(params: float, n: int, bandwidth: float, peak_flops: float,
                              utilization: float = 0.4, dtype_bytes: int = 2, latency: float = 0.0,
                              algorithm: str = "ring", flops_per_sample: float | None = None) -> float:
    r"""Smallest batch per rank for which the backward pass lasts as long as the all-reduce.

    When the optimizer step waits for every bucket (PyTorch DDP), the all-reduce runs beside the
    backward pass only (:data:`BACKWARD_SHARE` of the step's FLOPs), so hiding it needs
    :math:`T_{bwd} = \frac{4}{6}T_c \ge T_m`: :math:`x \ge \frac{3}{2}x_{min}`
    (:func:`min_tokens_compute_bound`). Even then the bucket of the input-side layers waits for the
    end of backward (chapter 5). Schedulers that let the next iteration's forward pass start on the
    layers already synchronised (ByteScheduler, Peng et al. 2019; P3, Jayarajan et al. 2019) overlap
    the all-reduce with that forward pass as well, and need only :math:`T_c \ge T_m`, :math:`x \ge x_{min}`.

    >>> round(min_tokens_backward_hides(1e9, 2, 50e9, 1e15, 0.5, 2))   # 1.5 x 3333
    5000
    """
    return min_tokens_compute_bound(params, n, bandwidth, peak_flops, utilization, dtype_bytes, latency,
                                    algorithm, flops_per_sample) / BACKWARD_SHARE


def bucketed_overlap(t_compute: float, nbytes: float, n: int, bandwidth: float, latency: float,
                     buckets: int = 4, algorithm: str = "ring") -> list[tuple[float, float]]:
    r"""Start and duration of each bucket's all-reduce when the all-reduce overlaps the backward pass.

    The backward pass (:data:`BACKWARD_SHARE` of ``t_compute``, after the forward pass) produces the
    gradient from the output side; split into ``buckets`` equal buckets, bucket :math:`k` is ready
    when the backward pass is :math:`k/K` done, and its all-reduce starts when it is ready and the
    previous bucket's has ended. The last bucket is ready only at the end of the backward pass, so the
    step ends after ``t_compute`` by at least one bucket's all-reduce.

    >>> [round(s, 3) for s, _ in bucketed_overlap(0.3, 4e6, 2, 1e9, 0.0, 2)]   # backward 0.1 - 0.3 s
    [0.2, 0.3]
    """
    check_positive("t_compute", t_compute)
    check_count("buckets", buckets)
    forward = (1 - BACKWARD_SHARE) * t_compute
    each = cost.allreduce_time(nbytes / buckets, n, bandwidth, latency, algorithm)
    out, free = [], 0.0
    for k in range(1, buckets + 1):
        start = max(forward + BACKWARD_SHARE * t_compute * k / buckets, free)
        out.append((start, each))
        free = start + each
    return out


def reduction_time_bounds(nbytes: float, n: int, bandwidth: float, latency: float, gamma: float,
                          algorithm: str = "ring") -> tuple[float, float]:
    r"""All-reduce time with the reduction overlapped (lower bound) and added serially (upper bound).

    The alpha-beta-gamma sum :math:`a\alpha + b\beta + v\gamma` charges the
    arithmetic after the copy. Libraries fuse the reduction into the pipelined
    copy (a chunk is added while the next one travels), so at best the
    arithmetic hides behind the transfer: :math:`a\alpha + \max(b\beta, v\gamma)`.

    >>> lo, hi = reduction_time_bounds(1e6, 2, 1e9, 0.0, 1e-10)
    >>> lo, hi
    (0.001, 0.00105)
    """
    check_positive("bandwidth", bandwidth)
    check_nonnegative("latency", latency)
    check_nonnegative("gamma", gamma)
    # The idea: the same terms, the arithmetic hidden behind the copy or added after it.
    terms = cost.allreduce_terms(nbytes, n, algorithm)
    transfer, arithmetic = terms.bytes / bandwidth, terms.reduced * gamma
    start = terms.steps * latency
    return start + max(transfer, arithmetic), start + transfer + arithmetic


def reduction_shares(nbytes: float, n: int, bandwidth: float, latency: float, gamma: float,
                     algorithm: str = "ring") -> tuple[float, float]:
    r"""Share of the all-reduce time the reduction adds: (fused, serial), each a fraction of its own time.

    The control is the same all-reduce with free arithmetic (gamma = 0). With
    the reduction fused into the copy the share is 0 whenever the transfer is
    the slower of the two; added serially it is :math:`v\gamma / T`, an upper bound.

    >>> fused, serial = reduction_shares(1e6, 2, 1e9, 0.0, 1e-10)
    >>> fused, round(serial, 4)
    (0.0, 0.0476)
    """
    plain = cost.allreduce_time(nbytes, n, bandwidth, latency, algorithm)
    fused, serial = reduction_time_bounds(nbytes, n, bandwidth, latency, gamma, algorithm)
    return (fused - plain) / fused, (serial - plain) / serial


def parallel_efficiency(t_compute: float, t_comm: float) -> float:
    r"""Fraction of a step spent computing when communication does not overlap: :math:`\varepsilon = T_c/(T_c + T_m)`.

    >>> round(parallel_efficiency(0.55, 6.64032), 4)
    0.0765
    """
    t_compute = check_positive("t_compute", t_compute)
    t_comm = check_nonnegative("t_comm", t_comm)
    return t_compute / (t_compute + t_comm)


def communication_time_for_efficiency(t_compute: float, efficiency: float) -> float:
    r"""Communication time allowed for a target efficiency: :math:`T_m = \frac{1-\varepsilon}{\varepsilon} T_c`."""
    t_compute = check_positive("t_compute", t_compute)
    efficiency = check_fraction("efficiency", efficiency, open_high=False)
    return (1 - efficiency) / efficiency * t_compute


def required_bandwidth(nbytes: float, n: int, t_compute: float, efficiency: float, latency: float = 0.0,
                       algorithm: str = "ring") -> float:
    r"""Bandwidth (bytes/s) an all-reduce needs to reach ``efficiency``; ``math.inf`` where none suffices.

    The target leaves :math:`T_m = \frac{1-\varepsilon}{\varepsilon}T_c` for the all-reduce. Its
    :math:`2(n-1)` start-ups of ``latency`` :math:`\alpha` take their share first, and the bytes get
    the rest:

    .. math:: B = \frac{2\frac{n-1}{n}M}{T_m - 2(n-1)\alpha},

    which with :math:`\alpha = 0` is the source notes' equation (3) (written there with S, D, P
    and T_s), growing with n only like :math:`(n-1)/n`. With :math:`\alpha > 0` it grows without
    bound, and from :func:`largest_ranks_for_efficiency` on no bandwidth reaches the target.
    ``efficiency`` must lie in (0, 1). Another ``algorithm`` (:func:`commlib.collectives.cost.allreduce_terms`)
    counts its own start-ups and bytes: halving-doubling sends the ring's bytes after only
    :math:`2\log_2 n` start-ups.

    >>> round(required_bandwidth(553.36e6, 4, 0.55, 0.9) / 1e6)            # MB/s, no start-ups
    13582
    >>> round(required_bandwidth(553.36e6, 4, 0.55, 0.9, 50e-6) / 1e6)     # 6 start-ups of 50 us
    13649
    >>> required_bandwidth(553.36e6, 1000, 0.55, 0.9, 50e-6)
    inf
    >>> round(required_bandwidth(553.36e6, 1024, 0.55, 0.9, 50e-6, "halving_doubling") / 1e9, 1)   # GB/s
    18.4
    """
    efficiency = check_fraction("efficiency", efficiency)
    latency = check_nonnegative("latency", latency)
    t_allowed = communication_time_for_efficiency(t_compute, efficiency)
    n = check_count("n", n, minimum=1)
    terms = cost.allreduce_terms(nbytes, n, algorithm)
    left = t_allowed - terms.steps * latency
    if left <= 0:
        return math.inf
    return terms.bytes / left


def largest_ranks_for_efficiency(t_compute: float, efficiency: float, latency: float) -> int | None:
    r"""The most ranks for which some bandwidth lets a ring all-reduce reach ``efficiency``.

    The ring's :math:`2(n-1)\alpha` of start-ups must fit in :math:`T_m = \frac{1-\varepsilon}{\varepsilon}T_c`
    with time to spare for the bytes: :math:`n - 1 < T_m / (2\alpha)`. ``None`` when ``latency`` is 0
    (no limit).

    >>> largest_ranks_for_efficiency(0.55, 0.9, 50e-6)     # 61.1 ms of budget, 100 us per rank added
    612
    """
    latency = check_nonnegative("latency", latency)
    if latency == 0:
        return None
    t_allowed = communication_time_for_efficiency(t_compute, efficiency)
    return max(1, math.ceil(t_allowed / (2 * latency)))


def speedup(t_one: float, t_many: float) -> float:
    """How many times faster ``n`` workers finish the same work: ``t_one / t_many``."""
    return check_positive("t_one", t_one) / check_positive("t_many", t_many)


def scaling_efficiency(t_one: float, t_many: float, n: int) -> float:
    """Speedup per worker, ``t_one / (n * t_many)``; 1.0 is perfect linear scaling (PowerAI DDL)."""
    n = check_count("n", n)
    return speedup(t_one, t_many) / n


def communication_overhead(t_iteration: float, t_compute: float) -> float:
    """Share of an iteration not hidden behind compute: ``(t_iteration - t_compute) / t_iteration``."""
    t_iteration = check_positive("t_iteration", t_iteration)
    t_compute = check_nonnegative("t_compute", t_compute)
    if t_compute > t_iteration:
        raise ValueError(f"t_compute must be <= t_iteration ({t_iteration}), got {t_compute}")
    return (t_iteration - t_compute) / t_iteration
