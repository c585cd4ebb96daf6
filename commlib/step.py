"""One data-parallel step in closed form: what travels, how long it computes, when it stays compute-bound.

A step of data-parallel training computes for :math:`T_c` and communicates for
:math:`T_m`. This module gives the three estimates chapter 0 teaches:

* **What travels** (:func:`traffic_per_rank`): with plain all-reduce data
  parallelism only the gradient does; a parameter server also sends the
  parameters back; ZeRO-3 / FSDP all-gathers the weights as well (about 1.5x
  the bytes, Rajbhandari et al. 2020); and the dtype of the gradient that is
  reduced is the recipe's choice (fp32 under PyTorch's automatic mixed
  precision, whose parameters stay fp32).
* **Compute time from FLOPs** (:func:`training_flops`, :func:`compute_time`):
  training a transformer costs about :math:`6\\Psi` FLOPs per token (2 forward,
  4 backward; Kaplan et al. 2020), divided by the FLOP/s the GPU achieves.
* **The compute-bound condition** (:func:`min_tokens_compute_bound`): the
  smallest batch per rank for which :math:`T_c \\ge T_m`.

It also bounds the reduction's share of an all-reduce
(:func:`reduction_time_bounds`) and holds the computation of chapter 0's
calculators (:func:`allreduce_results`, :func:`step_results`).

Pure Python: imports no numpy, so the website can run the calculators in the
browser. SI units: bytes, seconds, bytes/s one direction, FLOP/s.

>>> round(traffic_per_rank(1e9, "zero3_bf16", 8).sent / traffic_per_rank(1e9, "allreduce_bf16", 8).sent, 2)
1.5
>>> training_flops(1e9, 1000) / 1e12   # 6 x 1e9 parameters x 1000 tokens, in TFLOP
6.0
"""

from __future__ import annotations

from dataclasses import dataclass

from . import cost, hardware
from .units import check_count, check_fraction, check_nonnegative, check_positive, format_rate, format_size, format_time

__all__ = [
    "PALM_MODEL_FLOPS_UTILIZATION",
    "TRAFFIC_RECIPES",
    "Traffic",
    "traffic_per_rank",
    "training_flops",
    "compute_time",
    "min_tokens_compute_bound",
    "reduction_time_bounds",
    "reduction_shares",
    "allreduce_results",
    "step_results",
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
    """Bytes one of ``n`` ranks sends (and receives) per step under ``recipe``.

    * ``allreduce_bf16``: ring all-reduce of 2-byte gradients,
      :math:`2\\frac{n-1}{n}\\Psi s` with :math:`s = 2`.
    * ``allreduce_fp32``: the same with :math:`s = 4`, as under PyTorch's
      automatic mixed precision (parameters, hence gradients, stay fp32).
    * ``parameter_server_fp32``: a worker pushes its gradient and pulls the
      parameters: :math:`\\Psi s` each way, and the parameters travel too.
    * ``zero3_bf16``: ZeRO-3 / FSDP reduce-scatters the gradients and
      all-gathers the weights before the forward and again before the
      backward pass: :math:`3\\frac{n-1}{n}\\Psi s`, 1.5x the all-reduce
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
    """FLOPs to train on ``tokens`` tokens: about :math:`6\\Psi` per token.

    Forward pass 2 FLOPs per parameter per token (a multiply and an add),
    backward pass twice that (Kaplan et al. 2020, :math:`C \\approx 6N` per
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
    """Smallest batch per rank (tokens) for which compute time >= all-reduce time.

    :math:`6\\Psi x / (u F_{peak}) \\ge T_m` gives :math:`x_{min} = u F_{peak}\\,T_m / (6\\Psi)`,
    with ``utilization`` :math:`u` and ``peak_flops`` :math:`F_{peak}` (FLOP/s),
    ``params`` :math:`\\Psi`, ``dtype_bytes`` :math:`s`, ``bandwidth`` :math:`B`
    in bytes/s per direction and ``latency`` :math:`\\alpha` in seconds. For the
    ring without latency, :math:`T_m = 2\\frac{n-1}{n}\\Psi s / B` and
    :math:`\\Psi` cancels: :math:`x_{min} = \\frac{n-1}{n}\\,\\frac{u F_{peak} s}{3B}`,
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
    """All-reduce time with the reduction overlapped (lower bound) and added serially (upper bound).

    The alpha-beta-gamma sum :math:`a\\alpha + b\\beta + v\\gamma` charges the
    arithmetic after the copy. Libraries fuse the reduction into the pipelined
    copy (a chunk is added while the next one travels), so at best the
    arithmetic hides behind the transfer: :math:`a\\alpha + \\max(b\\beta, v\\gamma)`.

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


def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "0 %"


def allreduce_results(model: str = "resnet50", dtype: str = "fp32", n: int = 8, link: str = "eth_10g",
                      algorithm: str = "ring", memory_gbs: float = 0.0) -> dict[str, str]:
    """Chapter 0's calculator: one gradient all-reduce of a preset model over a preset link.

    ``memory_gbs`` (GB/s) sets the reduction cost gamma = 3 / B_mem; 0 leaves
    the reduction out. Returns label -> text with units.

    >>> allreduce_results("vgg16", "fp32", 4, "eth_1g")["time of one all-reduce"]
    '6.64 s'
    """
    if memory_gbs < 0:
        raise ValueError(f"memory_gbs must be >= 0 GB/s (0: reduction free), got {memory_gbs}")
    nbytes = hardware.gradient_bytes(model, dtype)
    item = hardware.link(link)
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


def step_results(model: str = "gpt2_xl", accelerator: str = "h100", utilization_pct: float = 40.0,
                 tokens: int = 8192, n: int = 64, link: str = "ib_ndr", dtype: str = "bf16") -> dict[str, str]:
    """Compute against communication for one step of a transformer (6 Psi FLOPs per token).

    ``tokens`` is the batch per rank per step; ``utilization_pct`` the share of
    the accelerator's peak FLOP/s that training achieves. Ring all-reduce of
    the gradient in ``dtype``, nothing overlapped.

    >>> step_results()["compute-bound?"]
    'yes'
    """
    numeric = isinstance(utilization_pct, (int, float)) and not isinstance(utilization_pct, bool)
    pct = float(utilization_pct) if numeric else float("nan")
    if not 0 < pct <= 100:
        raise ValueError(f"utilization_pct must lie in (0, 100] (per cent of peak), got {utilization_pct!r}")
    u = pct / 100
    tokens = check_count("tokens", tokens, minimum=1)
    n = check_count("n", n, minimum=1)
    params = hardware.model(model).params
    chip, item = hardware.accelerator(accelerator), hardware.link(link)
    s = hardware.dtype_bytes(dtype)
    t_c = compute_time(training_flops(params, tokens), chip.peak_flops, u)
    t_m = cost.allreduce_time(params * s, n, item.bandwidth, item.latency)
    x_min = min_tokens_compute_bound(params, n, item.bandwidth, chip.peak_flops, u, s, item.latency)
    return {
        "FLOPs per rank per step": f"{training_flops(params, tokens):.3g} FLOP",
        "achieved FLOP/s": f"{chip.peak_flops * u / 1e12:.0f} TFLOP/s",
        "compute time T_c": format_time(t_c),
        "all-reduce time T_m": format_time(t_m),
        "efficiency T_c / (T_c + T_m)": f"{100 * cost.parallel_efficiency(t_c, t_m):.1f} %",
        "smallest batch per rank with T_c >= T_m": f"{x_min:,.0f} tokens",
        "compute-bound?": "yes" if t_c >= t_m else "no",
    }
