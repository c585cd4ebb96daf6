"""What chapter 7's calculators compute: the algorithm a library would choose, and sharded data parallelism.

Each returns label -> text with units; numpy-free, so the page runs it too.
"""

from __future__ import annotations

from .. import hardware
from ..units import check_count, format_rate, format_size, format_time, size_entry
from .algorithm_choice import candidates, machine
from .cost import memory_per_rank, zero_bytes_per_rank

__all__ = ["chooser_results", "sharding_results", "sharding_models", "MESSAGE_ENTRY", "FIT_GPU", "ZERO_PAPER_MODEL",
           "BALG_LABEL", "RATE_ROW"]

#: The GPU whose memory the sharding calculator checks the model state against (activations not counted), and whose
#: host link caps the network card's rate (:func:`commlib.hardware.network_rate`).
FIT_GPU = "h100"

#: The sharding calculator's row: the rate each GPU gets over the network card (reached over the host's PCIe).
RATE_ROW = "link rate per GPU"

#: The sharding calculator's model beside the book's presets: ZeRO's own example (Rajbhandari et al. 2020, figure 1),
#: a model whose unsharded state no single GPU holds. Key -> (name, parameters).
ZERO_PAPER_MODEL = {"zero_paper_7_5b": ("ZeRO paper's example, 7.5 B parameters", 7_500_000_000)}


def sharding_models() -> dict[str, tuple[str, int]]:
    """The sharding calculator's models: the book's presets, then :data:`ZERO_PAPER_MODEL`. Key -> (name, parameters).

    >>> sharding_models()["zero_paper_7_5b"][1]
    7500000000
    """
    out = {key: (m.name, m.params) for key, m in hardware.MODELS.items()}
    out.update(ZERO_PAPER_MODEL)
    return out


#: The chooser's row for the winner's B_alg: the rate its bandwidth term gives, which algbw tends to for large messages.
BALG_LABEL = "B_alg (algbw for large messages)"

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
    >>> algbw, term = small["algorithm bandwidth M / time (algbw)"], small[BALG_LABEL]
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
        BALG_LABEL: f"{best.algbw / 1e9:.1f} GB/s" + (
            f" (above the link's B, {mach.bandwidth / 1e9:.3g} GB/s: M counts the whole buffer, of which "
            "each rank moves only (n - 1)/n over its link)" if best.algbw > mach.bandwidth * (1 + 1e-9) else ""),
    }
    if len(ranked) > 1:
        second = ranked[1]
        out["runner-up"] = f"{second.algorithm} / {second.protocol}, {format_time(second.time)}"
    return out


def sharding_results(model: str = "gpt2_xl", n: int = 64, stage: int = 3, dtype: str = "bf16",
                     link: str = "ib_ndr") -> dict[str, str]:
    """The calculator: memory per rank, bytes per step and their time on ``link`` for ZeRO ``stage``.

    The time is at the rate one :data:`FIT_GPU` gets over ``link``: the card's rate, capped by the GPU's host link
    where that is narrower (:func:`commlib.hardware.network_rate`); the row :data:`RATE_ROW` says which.

    >>> sharding_results("gpt2_xl", 8, 0, "bf16", "ib_ndr")["bytes sent per step"]
    '5.45 GB'
    >>> sharding_results(link="ib_xdr")[RATE_ROW]
    "63.02 GB/s per direction, capped by the H100 SXM5's PCIe 5.0 x16 host link (the link offers 100.00 GB/s)"
    """
    models = sharding_models()
    if model not in models:
        raise ValueError(f"model must be one of {', '.join(models)}, got {model!r}")
    params = models[model][1]
    stage = check_count("stage", stage, minimum=0, maximum=3)
    sent = zero_bytes_per_rank(params, n, stage, dtype)
    item = hardware.link(link)
    bw, cap = hardware.network_rate(FIT_GPU, link), hardware.host_cap(FIT_GPU, link)
    plain = zero_bytes_per_rank(params, n, 0, dtype)
    state, gpu = memory_per_rank(params, n, stage), hardware.accelerator(FIT_GPU)
    return {
        "parameters": f"{params:,}",
        "model state per rank": format_size(state),
        f"fits one {gpu.name} ({gpu.memory / 2**30:.0f} GiB)?": (
            "yes" if state <= gpu.memory else f"no: {state / gpu.memory:.1f} times its memory"),
        "bytes sent per step": format_size(sent),
        "against plain data parallelism": f"{sent / plain:.2f} x" if plain else "no traffic (n = 1)",
        RATE_ROW: (f"{format_rate(bw)} per direction"
                   + (f", capped by the {gpu.name}'s {cap.name} host link (the link offers {format_rate(item.bandwidth)})"
                      if cap else "")),
        "time on the link (bandwidth term)": format_time(sent / bw),
    }
