"""Experiments of chapter 0: the claims behind its comparing sentences, run through :mod:`.claims`.

Model layer: closed forms of :mod:`commlib.step.cost` and the link model of
:mod:`commlib.network.topology`; no plotting.
"""

from __future__ import annotations

from functools import lru_cache

from .. import hardware, worked
from ..network import topology
from ..step import cost as step
from . import claims

__all__ = ["nvlink_allreduce_seconds", "NVLINK_LAYOUTS", "bandwidth_over_n_claim", "nvlink_claim"]

#: How eight V100s of one server reach each other over NVLink 2.0: behind an NVSwitch (DGX-2 style;
#: each GPU's six links lumped into one 150 GB/s port each way) or wired directly as the DGX-1's
#: hybrid cube-mesh (one or two links of 25 GB/s each way per pair, :data:`topology.DGX1_NVLINKS`).
NVLINK_LAYOUTS: dict[str, str] = {"NVSwitch": "switch", "DGX-1 cube mesh": "cube mesh"}


@lru_cache(maxsize=16)
def _intra(nbytes: int) -> dict:
    return topology.intra_host_reduction(nbytes)


def nvlink_allreduce_seconds(nbytes: int, layout: str, rings: int = 1) -> float:
    """Seconds of a ring all-reduce of ``nbytes`` among one server's 8 V100s on ``layout`` (:data:`NVLINK_LAYOUTS`).

    ``rings`` = 1: one ring along :data:`topology.CUBE_MESH_RING`; 2: a second ring the other way
    round on half the buffer. Transfers only (no reduction time), links mapped by
    :func:`topology.intra_host_reduction`.

    >>> m = 102_228_128
    >>> round(1e3 * nvlink_allreduce_seconds(m, "DGX-1 cube mesh", 1), 1), round(1e3 * nvlink_allreduce_seconds(m, "DGX-1 cube mesh", 2), 1)
    (7.2, 3.6)
    """
    if layout not in NVLINK_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(NVLINK_LAYOUTS)}, got {layout!r}")
    if rings not in (1, 2):
        raise ValueError(f"rings must be 1 or 2, got {rings!r}")
    return _intra(int(nbytes))[NVLINK_LAYOUTS[layout], rings]


@claims.register("ch00.nvlink_v100")
def nvlink_claim(small: bool = False) -> claims.Claim:
    """ResNet-50's fp32 all-reduce among 8 V100s: behind an NVSwitch against the DGX-1's direct links."""
    shared = {"nbytes": int(hardware.gradient_bytes("resnet50", "fp32"))}

    def contender(layout: str, uses: str) -> claims.Contender:
        return claims.Contender(layout, lambda s, seed: 1e3 * nvlink_allreduce_seconds(s["nbytes"], layout,
                                                                                      int(s["rings"][0])),
                                {"rings": ("1 ring", "2 rings, both ways")}, uses=uses)

    def wording(v: claims.Verdict) -> str:
        sw, cube = v.best["NVSwitch"], v.best["DGX-1 cube mesh"]
        return (f"{sw.mean:.2f} ms behind an NVSwitch, and {cube.mean:.1f} ms on a DGX-1's cube mesh "
                f"at its best ({cube.config['rings']}; {v.best['DGX-1 cube mesh'].mean / sw.mean:.1f} times as long)")

    return claims.Claim(
        "ch00.nvlink_v100", "How long does ResNet-50's fp32 all-reduce take among 8 V100s over NVLink 2.0?",
        (contender("NVSwitch", "six NVLink 2.0 links per GPU into a switch: 150 GB/s each way to any peer"),
         contender("DGX-1 cube mesh", "the same six links wired to peers: 25-50 GB/s each way per pair")),
        metric="ms, transfers only", seeds=(0,), shared=shared, wording=wording, chapter="00_introduction",
        source="topology.intra_host_reduction; deterministic")


@claims.register("ch00.bandwidth_over_n")
def bandwidth_over_n_claim(small: bool = False) -> claims.Claim:
    """The bandwidth the VGG-16 example needs for 90 % efficiency, as n grows, with the preset's start-ups."""
    note = worked.VGG16_AS_REPORTED
    link = hardware.link("eth_1g")
    shared = {"nbytes": note["d_bytes_used"], "t_compute": note["t_compute"], "efficiency": note["target_efficiency"],
              "latency": link.latency}

    def at(n: int) -> claims.Contender:
        return claims.Contender(f"n = {n}", lambda s, seed: step.required_bandwidth(
            s["nbytes"], n, s["t_compute"], s["efficiency"], s["latency"]) / 1e9, uses="ring all-reduce, 1 GbE preset")

    def wording(v: claims.Verdict) -> str:
        b = {name: best.mean for name, best in v.best.items()}
        return ("with the link's start-ups the target needs " + ", ".join(f"{x:.4g} GB/s at {name}" for name, x in b.items())
                + f": {b['n = 400'] / b['n = 4']:.1f} times the n = 4 figure at n = 400")

    return claims.Claim(
        "ch00.bandwidth_over_n", "Does the bandwidth a 90 % efficient ring needs stay flat as n grows?",
        (at(4), at(100), at(400)), metric="GB/s one direction", seeds=(0,), shared=shared, wording=wording,
        chapter="00_introduction", source="step.required_bandwidth with the eth_1g preset's latency; deterministic")
