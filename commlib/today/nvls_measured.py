r"""NVLS's all-reduce bandwidth as NCCL's tuner models it, against what users and NCCL's maintainer measured.

The chooser (:mod:`commlib.today.algorithm_choice`) prices NVLS's all-reduce with NCCL 2.30.7's formula. On a node
of p GPUs, each with L NVLinks that NCCL's topology rates at :math:`b` each (so :math:`B = Lb`), its bus bandwidth is

.. math:: B_{bus} = B\,\frac{p}{p+1}\; e\; \frac{p-1}{p}\; 2 = 2e\,B\,\frac{p-1}{p+1},

with e NCCL's efficiency for the GPU generation (:func:`commlib.today.algorithm_choice.bus_bandwidth`), smooth in p.
NCCL's own tuner takes its channel speeds from its topology search instead (:func:`predict_nccl`, as read from the
source of 2.30.7, not run). :data:`MEASURED` holds the peaks of nccl-tests' ``all_reduce_perf`` (busbw) that users
reported, each with its source; :func:`predictions` sets both beside each, and :func:`errors` summarises the
misses of one.

>>> rows = predictions()
>>> [(r.measurement.node.split(",")[0], round(r.predicted / 1e9), round(r.nccl / 1e9)) for r in rows
...  if r.measurement.gpus == 8]
[('H100', 490, 476), ('H200', 490, 476), ('B200', 831, 720)]
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from .algorithm_choice import MACHINES, NCCL_QUOTED, bus_bandwidth

__all__ = ["NCCL_NVLS_SPEEDS", "Measurement", "MEASURED", "SWEEP_ALGBW_FIVE", "Prediction", "predict", "channel_speed",
           "channel_allreduce_bw", "predict_nccl", "predictions", "errors", "ring_measurements"]


#: The per-channel speeds (bytes/s) NCCL 2.30.7's topology search tries inside one node, fastest first, by GPU
#: generation (``sm90SpeedArrayIntra`` and ``sm100SpeedArrayIntra`` in src/graph/search.cc).
NCCL_NVLS_SPEEDS: dict[str, tuple[float, ...]] = {
    "hopper": tuple(x * 1e9 for x in (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0)),
    "blackwell": tuple(x * 1e9 for x in (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0)),
}


@dataclass(frozen=True)
class Measurement:
    """One reported peak of an all-reduce's bus bandwidth (nccl-tests' busbw) on one node.

    ``node`` in words; ``gpus`` the GPUs taking part (all in one node); ``links`` NVLinks per GPU and ``link_bw``
    what NCCL's topology charges for one (bytes/s per direction); ``generation`` the GPU generation, which sets
    NCCL's NVLS ``efficiency`` and its list of channel speeds; ``busbw`` the reported peak as (low, high), bytes/s
    (equal when one number was reported, a range when the report gave one); ``algorithm`` what ran ("nvls", or
    "ring"); ``forced`` whether the report forced it (``NCCL_ALGO``) rather than inferring it; ``nccl`` the NCCL
    version the report names ("" where it names none); ``citation`` the bibliography key.
    """

    node: str
    gpus: int
    links: int
    link_bw: float
    generation: str
    efficiency: float
    busbw: tuple[float, float]
    algorithm: str
    forced: bool
    nccl: str
    citation: str

    @property
    def measured(self) -> float:
        """The middle of the reported range, bytes/s."""
        return sum(self.busbw) / 2


_H100 = dict(links=18, link_bw=NCCL_QUOTED["nvlink_bw_hopper"], generation="hopper",
             efficiency=NCCL_QUOTED["nvls_efficiency_hopper"])
_B200 = dict(links=18, link_bw=NCCL_QUOTED["nvlink_bw_blackwell"], generation="blackwell",
             efficiency=NCCL_QUOTED["nvls_efficiency_blackwell"])

#: Reported peaks, one row a (node, GPU count, algorithm). H100: a user's sweep over the GPUs of one node with NVLS
#: forced (NCCL_ALGO=NVLS), "about 365-370 GBps" on 3 and 4 GPUs, then 420, 440, 460 and 480 on 5 to 8 (nccl issue
#: 1455); its 2-GPU run is left out, as every NCCL before 2.28.7 turns NVLS off on 2 GPUs (``ncclNvlsInit``,
#: ``gpuCount <= 2``), so that run was a ring. H200: 475 GB/s on 8 (nccl-tests issue 272, NCCL 2.20.3). B200: "830+"
#: on 8 (nccl issue 1807, NCCL 2.27.1). Neither of the last two forced the algorithm; both busbw exceed what a ring
#: gets from the links (the node's B), which only a switch that reduces can give. H200 has H100's NVLink 4 (18
#: links); B200 has 18 NVLink 5 links.
MEASURED: tuple[Measurement, ...] = (
    *(Measurement(f"H100, {p} of a node's 8 GPUs", p, **_H100, busbw=(365e9, 370e9), algorithm="nvls", forced=True,
                  nccl="", citation="nccl_issue1455") for p in (3, 4)),
    *(Measurement(f"H100, {p} of a node's 8 GPUs", p, **_H100, busbw=(bw, bw), algorithm="nvls", forced=True,
                  nccl="", citation="nccl_issue1455") for p, bw in ((5, 420e9), (6, 440e9), (7, 460e9), (8, 480e9))),
    Measurement("H200, 8 GPUs", 8, **_H100, busbw=(475e9, 475e9), algorithm="nvls", forced=False, nccl="2.20.3",
                citation="nccltests272"),
    Measurement("B200, 8 GPUs", 8, **_B200, busbw=(830e9, 830e9), algorithm="nvls", forced=False, nccl="2.27.1",
                citation="nccl_issue1807"),
)


#: The same user's algbw at 5 GPUs, 258 GB/s (nccl issue 1455): its busbw, :math:`2(n-1)/n` times it, is 413 GB/s
#: against the 420 reported, a measure of the report's rounding.
SWEEP_ALGBW_FIVE = 258e9


def ring_measurements() -> tuple[Measurement, ...]:
    """The same user's ring on the H100 node, "365-370 GBps" at every GPU count from 2 to 8 (nccl issue 1455)."""
    return tuple(Measurement(f"H100, {p} of a node's 8 GPUs", p, **_H100, busbw=(365e9, 370e9), algorithm="ring",
                             forced=True, nccl="", citation="nccl_issue1455") for p in range(2, 9))


@dataclass(frozen=True)
class Prediction:
    """A measurement (:class:`Measurement`) beside the chooser's formula (``predicted``) and NCCL's own figure as read
    from its source (``nccl``), bytes/s."""

    measurement: Measurement
    predicted: float
    nccl: float

    @property
    def error(self) -> float:
        """The chooser's predicted / measured - 1, against the middle of the reported range."""
        return self.predicted / self.measurement.measured - 1

    @property
    def nccl_error(self) -> float:
        """NCCL's own figure / measured - 1."""
        return self.nccl / self.measurement.measured - 1


def _node(m: Measurement):
    return replace(MACHINES["nvswitch_node"], ranks=m.gpus, nodes=1, bandwidth=m.links * m.link_bw,
                   nvls_efficiency=m.efficiency)


def predict(m: Measurement) -> float:
    """The chooser's bus bandwidth for measurement ``m``: NCCL 2.30.7's formula, smooth in the GPU count, on an
    NVSwitch node of ``m.gpus`` GPUs with :math:`B` = links x NCCL's bandwidth a link
    (:func:`commlib.today.algorithm_choice.bus_bandwidth`; a ring over Simple gets B itself)."""
    return bus_bandwidth("all_reduce", m.algorithm, "Simple", _node(m))


def channel_speed(m: Measurement) -> float:
    """The speed NCCL 2.30.7's search gives each NVLS channel for ``m``, as read from its source: the fastest of
    :data:`NCCL_NVLS_SPEEDS` that the GPUs' links carry p + 1 times over (each GPU heads one of the p channels and
    carries it twice), bytes/s."""
    b, p = m.links * m.link_bw, m.gpus
    speeds = NCCL_NVLS_SPEEDS[m.generation]
    return next((x for x in speeds if x * (p + 1) <= b * (1 + 1e-12)), speeds[-1])


def channel_allreduce_bw(m: Measurement) -> float:
    """One NVLS channel's all-reduce bus bandwidth before NCCL's cap, :math:`2e\\,s\\,(p-1)/p`, bytes/s."""
    return 2 * m.efficiency * channel_speed(m) * (m.gpus - 1) / m.gpus


def predict_nccl(m: Measurement) -> float:
    r"""NCCL 2.30.7's own NVLS figure for ``m``, as read from its source (not run; a ring's is :func:`predict`'s).

    Each of the p channels gets :func:`channel_speed` as ``bwIntra`` while its ``bwInter`` stays at the list's top
    speed (``ncclTopoCompute`` in src/graph/search.cc, for the cases in :data:`MEASURED`); the tuner takes the smaller
    of :func:`channel_allreduce_bw` and ``bwInter`` for each channel and multiplies by the p channels
    (``ncclTopoTuneModel`` in src/graph/tuning.cc).
    """
    if m.algorithm != "nvls":
        return predict(m)
    return m.gpus * min(channel_allreduce_bw(m), NCCL_NVLS_SPEEDS[m.generation][0])


def predictions(measured=MEASURED) -> list[Prediction]:
    """Each measurement with both predictions, in the order given."""
    return [Prediction(m, predict(m), predict_nccl(m)) for m in measured]


def errors(rows, version: str = "chooser") -> dict[str, float]:
    """The median and the worst (largest in size, sign kept) of the rows' relative errors in ``version``
    ("chooser" or "nccl"), and their count.

    >>> e = errors(predictions())
    >>> e["points"], round(e["worst"], 2), round(errors(predictions(), "nccl")["worst"], 2)
    (8, -0.14, -0.51)
    """
    if version not in ("chooser", "nccl"):
        raise ValueError(f"version must be 'chooser' or 'nccl', got {version!r}")
    errs = [r.error if version == "chooser" else r.nccl_error for r in rows]
    if not errs:
        raise ValueError("rows must hold at least one prediction")
    return {"points": len(errs), "median": statistics.median(errs), "median_abs": statistics.median(abs(e) for e in errs),
            "worst": max(errs, key=abs)}
