r"""One data-parallel step in closed form: what travels, how long it computes, when it stays compute-bound.

A step of data-parallel training computes for :math:`T_c` and communicates for
:math:`T_m`. This module gives the three estimates chapter 0 teaches:

* **What travels** (:func:`traffic_per_rank`): with plain all-reduce data
  parallelism only the gradient does; a parameter server also sends the
  parameters back; ZeRO-3 / FSDP all-gathers the weights as well (about 1.5x
  the bytes, Rajbhandari et al. 2020); and the dtype of the gradient that is
  reduced is the recipe's choice (fp32 under PyTorch's automatic mixed
  precision, whose parameters stay fp32).
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

>>> round(traffic_per_rank(1e9, "zero3_bf16", 8).sent / traffic_per_rank(1e9, "allreduce_bf16", 8).sent, 2)
1.5
>>> training_flops(1e9, 1000) / 1e12   # 6 x 1e9 parameters x 1000 tokens, in TFLOP
6.0
"""

from __future__ import annotations

from dataclasses import dataclass

from ..collectives import cost
from ..units import check_count, check_fraction, check_nonnegative, check_positive

__all__ = [
    "parallel_efficiency",
    "communication_time_for_efficiency",
    "required_bandwidth",
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
    "reduction_time_bounds",
    "reduction_shares",
]


#: Share of peak FLOP/s that PaLM 540B's training achieved in model FLOPs, as
#: reported by Chowdhery et al. (2022): a measured utilization, for scale.
PALM_MODEL_FLOPS_UTILIZATION = 0.462


@dataclass(frozen=True)
class Traffic:
    """Bytes one rank sends and receives in one step, and what they are."""

    recipe: str
    label: str
    what: str
    sent: float
    received: float


#: Data-parallel recipes: label, what crosses the wire, bytes per element, and the
#: per-rank volume in units of the buffer Psi x s (sent and received, each direction),
#: as functions of the number of ranks n.
TRAFFIC_RECIPES: dict[str, tuple[str, str, int, object]] = {
    "allreduce_bf16": ("all-reduce, bf16 gradients", "gradients", 2,
                       lambda n: 2 * (n - 1) / n),
    "allreduce_fp32": ("all-reduce, fp32 gradients (mixed precision, fp32 parameters)", "gradients", 4,
                       lambda n: 2 * (n - 1) / n),
    "parameter_server_fp32": ("parameter server, fp32", "gradients up, parameters down", 4,
                              lambda n: 1.0),
    "zero3_bf16": ("ZeRO-3 / FSDP, bf16", "gradients (reduce-scatter) and weights (all-gather, twice)", 2,
                   lambda n: 3 * (n - 1) / n),
}


def traffic_per_rank(params: float, recipe: str = "allreduce_bf16", n: int = 8) -> Traffic:
    r"""Bytes one of ``n`` ranks sends (and receives) per step under ``recipe``.

    * ``allreduce_bf16``: ring all-reduce of 2-byte gradients,
      :math:`2\frac{n-1}{n}\Psi s` with :math:`s = 2`.
    * ``allreduce_fp32``: the same with :math:`s = 4`, as under PyTorch's
      automatic mixed precision (parameters, hence gradients, stay fp32).
    * ``parameter_server_fp32``: a worker pushes its gradient and pulls the
      parameters: :math:`\Psi s` each way, and the parameters travel too.
    * ``zero3_bf16``: ZeRO-3 / FSDP reduce-scatters the gradients and
      all-gathers the weights before the forward and again before the
      backward pass: :math:`3\frac{n-1}{n}\Psi s`, 1.5x the all-reduce
      (Rajbhandari et al. 2020).

    >>> t = traffic_per_rank(100, "parameter_server_fp32", 4)
    >>> t.sent, t.received, t.what
    (400.0, 400.0, 'gradients up, parameters down')
    """
    check_positive("params", params)
    n = check_count("n", n, minimum=1)
    if recipe not in TRAFFIC_RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; choose one of: {', '.join(TRAFFIC_RECIPES)}")
    label, what, element, factor = TRAFFIC_RECIPES[recipe]
    volume = factor(n) * params * element
    if n == 1 and recipe != "parameter_server_fp32":
        volume = 0.0
    return Traffic(recipe, label, what, float(volume), float(volume))


def training_flops(params: float, tokens: float) -> float:
    r"""FLOPs to train on ``tokens`` tokens: about :math:`6\Psi` per token.

    Forward pass 2 FLOPs per parameter per token (a multiply and an add),
    backward pass twice that (Kaplan et al. 2020, :math:`C \approx 6N` per
    token, non-embedding parameters). For other models use samples x training
    FLOPs per sample instead.

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
                             algorithm: str = "ring") -> float:
    r"""Smallest batch per rank (tokens) for which compute time >= all-reduce time.

    :math:`6\Psi x / (u F_{peak}) \ge T_m` gives :math:`x_{min} = u F_{peak}\,T_m / (6\Psi)`,
    with ``utilization`` :math:`u` and ``peak_flops`` :math:`F_{peak}` (FLOP/s),
    ``params`` :math:`\Psi`, ``dtype_bytes`` :math:`s`, ``bandwidth`` :math:`B`
    in bytes/s per direction and ``latency`` :math:`\alpha` in seconds. For the
    ring without latency, :math:`T_m = 2\frac{n-1}{n}\Psi s / B` and
    :math:`\Psi` cancels: :math:`x_{min} = \frac{n-1}{n}\,\frac{u F_{peak} s}{3B}`,
    the same for every model.

    >>> round(min_tokens_compute_bound(1e9, 2, 50e9, 1e15, 0.5, 2))  # (1/2) x 5e14 x 2 / (3 x 5e10)
    3333
    """
    check_positive("params", params)
    n = check_count("n", n, minimum=1)
    check_positive("bandwidth", bandwidth)
    achieved = peak_flops * check_fraction("utilization", utilization, open_low=True, open_high=False)
    check_positive("peak_flops", peak_flops)
    check_positive("dtype_bytes", dtype_bytes)
    t_comm = cost.allreduce_time(params * dtype_bytes, n, bandwidth, latency, algorithm)
    return achieved * t_comm / (6.0 * params)


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
    terms = cost.allreduce_terms(nbytes, n, algorithm)
    check_positive("bandwidth", bandwidth)
    check_nonnegative("latency", latency)
    check_nonnegative("gamma", gamma)
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


def required_bandwidth(nbytes: float, n: int, t_compute: float, efficiency: float) -> float:
    r"""Bandwidth (bytes/s) a ring all-reduce needs to reach ``efficiency``.

    :math:`B = \frac{2(n-1)M/n}{T_m} = \frac{2\varepsilon(n-1)M}{n(1-\varepsilon)T_c}` (the source
    notes' equation (3), which writes it with S, D, P and T_s). ``efficiency`` must lie in (0, 1).
    """
    efficiency = check_fraction("efficiency", efficiency)
    t_allowed = communication_time_for_efficiency(t_compute, efficiency)
    return cost.ring_bytes_per_rank(nbytes, n) / t_allowed


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
