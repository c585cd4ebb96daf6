r"""Sharded data parallelism in closed form: memory per rank and bytes per step, numpy-free.

The executed step is :func:`commlib.zero.zero_step`; this module holds what
can be written down without running it, so the calculator
(:func:`sharding_results`) runs in any Python. Memory follows Rajbhandari et
al. (2020, Figure 1): with mixed-precision Adam each parameter takes 2 bytes
of weights, 2 of gradient and K = 12 of optimizer state; stage 1 divides the
optimizer state by n, stage 2 also the gradients, stage 3 also the weights.
Bytes per step are :func:`commlib.cost.zero_bytes_per_rank`.

>>> round(memory_per_rank(7_500_000_000, 64, 1) / 1e9, 2)
31.41
"""

from __future__ import annotations

from . import cost, hardware
from .units import check_count, format_size, format_time

__all__ = ["OPTIMIZER_BYTES", "memory_per_rank", "sharding_results"]

#: Bytes per parameter of optimizer state with mixed-precision Adam (fp32 master, momentum, variance).
OPTIMIZER_BYTES = 12


def memory_per_rank(params: int, n: int, stage: int, weight_bytes: int = 2, grad_bytes: int = 2,
                    optimizer_bytes: int = OPTIMIZER_BYTES) -> float:
    r"""Bytes of model state per rank: :math:`(2 + 2 + K)\Psi`, sharded by stage (activations not counted).

    >>> memory_per_rank(7_500_000_000, 64, 0) / 1e9, round(memory_per_rank(7_500_000_000, 64, 3) / 1e9, 3)
    (120.0, 1.875)
    """
    params = check_count("params", params, minimum=1)
    n = check_count("n", n, minimum=1)
    if stage not in cost.ZERO_STAGES or isinstance(stage, bool):
        raise ValueError(f"stage must be one of 0, 1, 2, 3, got {stage!r}")
    w = weight_bytes / (n if stage >= 3 else 1)
    g = grad_bytes / (n if stage >= 2 else 1)
    o = optimizer_bytes / (n if stage >= 1 else 1)
    return params * (w + g + o)


def sharding_results(model: str = "gpt2_xl", n: int = 64, stage: int = 3, dtype: str = "bf16",
                     link: str = "ib_ndr") -> dict[str, str]:
    """The calculator: memory per rank, bytes per step and their time on ``link`` for ZeRO ``stage``.

    >>> sharding_results("gpt2_xl", 8, 0, "bf16", "ib_ndr")["bytes sent per step"]
    '5.45 GB'
    """
    params = hardware.model(model).params
    stage = check_count("stage", stage, minimum=0, maximum=3)
    sent = cost.zero_bytes_per_rank(params, n, stage, dtype)
    bw = hardware.link(link).bandwidth
    plain = cost.zero_bytes_per_rank(params, n, 0, dtype)
    return {
        "parameters": f"{params:,}",
        "model state per rank": format_size(memory_per_rank(params, n, stage)),
        "bytes sent per step": format_size(sent),
        "against plain data parallelism": f"{sent / plain:.2f} x" if plain else "no traffic (n = 1)",
        "time on the link (bandwidth term)": format_time(sent / bw),
    }
