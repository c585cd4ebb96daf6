"""What chapter 7's calculators compute: the algorithm a library would choose, and sharded data parallelism.

Each returns label -> text with units; numpy-free, so the page runs it too.
"""

from __future__ import annotations

from .. import hardware
from ..units import check_count, format_size, format_time, size_entry
from .algorithm_choice import candidates, machine
from .cost import memory_per_rank, zero_bytes_per_rank

__all__ = ["chooser_results", "sharding_results", "MESSAGE_ENTRY", "FIT_GPU"]

#: The GPU whose memory the sharding calculator checks the model state against (activations not counted).
FIT_GPU = "h100"

#: The chooser's free entry: what the control is called and its physical range.
MESSAGE_ENTRY = size_entry("message M")


def chooser_results(machine_key: str = "nvswitch_node", collective: str = "all_reduce",
                    size: str = "64 MiB") -> dict[str, str]:
    """The calculator: which (algorithm, protocol) the cost model picks, its time and the runner-up.

    >>> r = chooser_results("nvswitch_node", "all_reduce", "1 GiB")
    >>> r["winner"]
    'nvls / Simple'

    The algorithm bandwidth is nccl-tests' algbw, M over the predicted time; the rate of the bandwidth term is what
    it tends to for large messages, where the latency part no longer counts:

    >>> small = chooser_results("nvswitch_node", "all_reduce", "64 KiB")
    >>> algbw, term = small["algorithm bandwidth M / time (algbw)"], small["rate of its bandwidth term (large messages)"]
    >>> float(algbw.split()[0]) < float(term.split()[0]) / 10
    True
    """
    mach = machine(machine_key)
    nbytes = MESSAGE_ENTRY.read(size)
    ranked = candidates(collective, nbytes, mach)
    best = ranked[0]
    out = {
        "machine": mach.name,
        "message M": format_size(nbytes, binary=True),
        "winner": f"{best.algorithm} / {best.protocol}",
        "predicted time": format_time(best.time),
        "latency part": format_time(best.latency),
        "algorithm bandwidth M / time (algbw)": (f"{nbytes / best.time / 1e9:.3g} GB/s" if nbytes and best.time > 0
                                                 else "none: nothing to send"),
        "rate of its bandwidth term (large messages)": f"{best.algbw / 1e9:.1f} GB/s",
    }
    if len(ranked) > 1:
        second = ranked[1]
        out["runner-up"] = f"{second.algorithm} / {second.protocol}, {format_time(second.time)}"
    return out


def sharding_results(model: str = "gpt2_xl", n: int = 64, stage: int = 3, dtype: str = "bf16",
                     link: str = "ib_ndr") -> dict[str, str]:
    """The calculator: memory per rank, bytes per step and their time on ``link`` for ZeRO ``stage``.

    >>> sharding_results("gpt2_xl", 8, 0, "bf16", "ib_ndr")["bytes sent per step"]
    '5.45 GB'
    """
    params = hardware.model(model).params
    stage = check_count("stage", stage, minimum=0, maximum=3)
    sent = zero_bytes_per_rank(params, n, stage, dtype)
    bw = hardware.link(link).bandwidth
    plain = zero_bytes_per_rank(params, n, 0, dtype)
    state, gpu = memory_per_rank(params, n, stage), hardware.accelerator(FIT_GPU)
    return {
        "parameters": f"{params:,}",
        "model state per rank": format_size(state),
        f"fits one {gpu.name} ({gpu.memory / 1e9:.0f} GB)?": (
            "yes" if state <= gpu.memory else f"no: {state / gpu.memory:.1f} times its memory"),
        "bytes sent per step": format_size(sent),
        "against plain data parallelism": f"{sent / plain:.2f} x" if plain else "no traffic (n = 1)",
        "time on the link (bandwidth term)": format_time(sent / bw),
    }
