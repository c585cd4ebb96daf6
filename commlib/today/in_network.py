r"""Reduction inside the network: a switch that adds what passes through it.

In a ring all-reduce every rank sends :math:`2\frac{n-1}{n}M` bytes, because
ranks must do the adding. If the switch they all plug into can add
(InfiniBand SHARP, Graham et al. 2016; NVLink SHARP, "NVLS", in NVSwitch
systems), each rank sends its M bytes up once and receives the sum, M bytes,
once: a parameter server inside the switch (chapter 3's server, with no NIC
of its own to saturate). Up and down overlap, since the switch streams the
sum back while contributions still arrive, so

.. math:: T_{\text{switch}} = 2\alpha + \frac{M}{B}
   \quad\text{against}\quad T_{\text{ring}} = 2(n-1)\alpha + \frac{2(n-1)}{n}\frac{M}{B}.

:func:`switch_allreduce` runs it on real arrays; :func:`switch_allreduce_time`
maps its messages onto :func:`commlib.network.topology.star` and times them with
:func:`commlib.network.topology.map_flows`, and :func:`ring_on_star_time` does the same for
the ring, the control. The closed form is
:func:`commlib.cost.in_network_allreduce_time`.

Bus bandwidth, nccl-tests' :math:`\text{busbw} = \text{algbw}\cdot 2(n-1)/n`,
was defined for rings of point-to-point links; with the switch reducing,
:math:`\text{algbw} = M/T` can reach B, so busbw can reach
:math:`2\frac{n-1}{n}B`, nearly twice the link. :func:`busbw_ideal` gives
both numbers.

>>> import numpy as np
>>> res, sent = switch_allreduce([np.arange(4.0) * (r + 1) for r in range(3)])
>>> res[0].tolist(), sent
([0.0, 6.0, 12.0, 18.0], [32, 32, 32])
"""

from __future__ import annotations

import numpy as np

from ..collectives import cost
from ..collectives import simulate as collectives
from ..network import topology
from ..units import check_count, check_positive

__all__ = ["switch_allreduce", "switch_allreduce_time", "ring_on_star_time", "busbw_ideal", "link_loads"]


def switch_allreduce(arrays) -> tuple[list[np.ndarray], list[int]]:
    """All-reduce through a reducing switch: every rank sends its array up, the switch sums, sends the sum down.

    Returns each rank's result and the bytes each rank sent (its M, once).
    """
    rows = [np.asarray(a) for a in arrays]
    if len(rows) < 1 or any(r.ndim != 1 or r.shape != rows[0].shape for r in rows):
        raise ValueError("arrays must be a non-empty list of 1-D arrays of one shape")
    total = rows[0].copy()
    for r in rows[1:]:
        total = total + r                       # the switch's adder, one contribution at a time
    return [total.copy() for _ in rows], [int(r.nbytes) for r in rows]


def switch_allreduce_time(n: int, nbytes: int, link: str = "nvlink4", bandwidth: float | None = None) -> float:
    """Time of the switch all-reduce on a star of n ranks around a reducing switch (bandwidth terms only).

    Every rank's M goes up and the sum comes down in the same step: the
    links are full duplex, so each direction carries M.
    """
    n = check_count("n", n, minimum=2)
    nbytes = check_count("nbytes", nbytes, minimum=0)
    # The idea: every rank sends its M bytes up to the switch and receives the sum, M bytes, down.
    g = topology.star(n, link=link, hub="switch", bandwidth=bandwidth, latency=0.0)
    flows = [topology.Flow(0, r, "hub", nbytes, "up") for r in range(n)]
    flows += [topology.Flow(0, "hub", r, nbytes, "down") for r in range(n)]
    return topology.map_flows(g, flows).time


def ring_on_star_time(n: int, nbytes: int, link: str = "nvlink4", bandwidth: float | None = None) -> float:
    """Time of the executed ring all-reduce mapped onto the same star (the switch only forwards)."""
    n = check_count("n", n, minimum=2)
    nbytes = check_count("nbytes", nbytes, minimum=0)
    g = topology.star(n, link=link, hub="switch", bandwidth=bandwidth, latency=0.0)
    elements = max(n, nbytes // 8)
    _, trace = collectives.allreduce([np.zeros(elements) for _ in range(n)], algorithm="ring")
    return topology.map_trace(g, trace).time


def link_loads(n: int, nbytes: int, link: str = "nvlink4") -> dict[str, dict[str, float]]:
    """Bytes each rank's link carries up (rank to switch) and down, for the switch and for the ring on a star.

    >>> loads = link_loads(4, 800)
    >>> loads["switch"]["up"], loads["ring"]["up"]
    (800.0, 1200.0)
    """
    n = check_count("n", n, minimum=2)
    nbytes = check_count("nbytes", nbytes, minimum=n)
    g = topology.star(n, link=link, hub="switch", latency=0.0)
    sw = [topology.Flow(0, r, "hub", nbytes) for r in range(n)] + [topology.Flow(0, "hub", r, nbytes) for r in range(n)]
    _, trace = collectives.allreduce([np.zeros(nbytes // 8) for _ in range(n)], algorithm="ring")
    out = {}
    for name, mapped in (("switch", topology.map_flows(g, sw)), ("ring", topology.map_trace(g, trace))):
        up = max(mapped.link_bytes.get((r, "hub"), 0) for r in range(n))
        down = max(mapped.link_bytes.get(("hub", r), 0) for r in range(n))
        out[name] = {"up": float(up), "down": float(down)}
    return out


def busbw_ideal(n: int, bandwidth: float) -> dict[str, float]:
    """Ideal algbw and nccl-tests busbw of ring and in-switch all-reduce on links of ``bandwidth`` bytes/s.

    >>> r = busbw_ideal(8, 100.0)
    >>> [round(r[k], 2) for k in ("ring_algbw", "ring_busbw", "switch_algbw", "switch_busbw")]
    [57.14, 100.0, 100.0, 175.0]
    """
    n = check_count("n", n, minimum=2)
    bandwidth = check_positive("bandwidth", bandwidth)
    factor = cost.bus_factor("all_reduce", n)
    ring_alg = bandwidth / factor
    return {"ring_algbw": ring_alg, "ring_busbw": ring_alg * factor,
            "switch_algbw": bandwidth, "switch_busbw": bandwidth * factor,
            "ideal_gain": factor}


#: Measured on 8 H100 GPUs in one NVSwitch node, as NCCL's maintainer reports them
#: (nccl-tests issue 212, May 2024): ring all-reduce reaches a busbw of about 370 GB/s
#: (the effective NVLink bandwidth after protocol overhead; the line rate is 450 GB/s),
#: NVLS about 480 GB/s busbw, 275 GB/s algbw. Bytes/s.
MEASURED_H100 = {"n": 8, "line_rate": 450e9, "ring_busbw": 370e9, "nvls_busbw": 480e9, "nvls_algbw": 275e9}
#: All-gathers of 1 GB on one 8-GPU NVSwitch node as a user reports them (the GPU is not named), bytes/s, not the
#: tuner's model: NVLS about 300 GB/s, the ring about 350 GB/s (NVIDIA/nccl issue 1506).
REPORTED_ALL_GATHER_NVSWITCH = {"nvls": 300e9, "ring": 350e9}
#: NCCL's own all-reduce picks on one node of 8 H100 GPUs, as a user logs them for nccl-tests' sizes (doubling from
#: 8 bytes): ring/LL up to 1 MiB, NVLS/Simple from 2 MiB ("8B~1MB ... RING ... LL", "2MB~16GB ... NVLS ... SIMPLE",
#: NVIDIA/nccl-tests issue 309), bytes.
LOGGED_PICKS_H100_NODE = {"ring_ll_up_to": 2.0**20, "nvls_from": 2.0**21}
__all__ += ["MEASURED_H100", "measured_gain", "nvls_algbw", "REPORTED_ALL_GATHER_NVSWITCH", "LOGGED_PICKS_H100_NODE",
            "NVLS_STEPS", "nvls_step_bytes"]

#: NVLS's all-reduce on one GPU's links, step by step: the direction (``"up"``, GPU to switch; ``"down"``), whether
#: the step moves the whole buffer (``True``) or one share of it (``False``, a 1/n of M), and what moves.
NVLS_STEPS = (
    ("up", True, "its whole buffer, one share for each share's owner"),
    ("down", False, "the sum of its own share"),
    ("up", False, "that sum, written back to the switch"),
    ("down", True, "every share's sum, multicast by the switch"),
)


def nvls_step_bytes(n: int, nbytes: float = 1.0) -> tuple[tuple[str, float, str], ...]:
    """The bytes each step of :data:`NVLS_STEPS` moves on one GPU's links for an all-reduce of ``nbytes`` on ``n``
    GPUs: ``(direction, bytes, what)``; each direction sums to :math:`(n+1)/n` of ``nbytes``, the load behind
    :func:`nvls_algbw`.

    >>> [b for _, b, _ in nvls_step_bytes(8, 8.0)]
    [8.0, 1.0, 1.0, 8.0]
    """
    n = check_count("n", n, minimum=2)
    nbytes = check_positive("nbytes", nbytes)
    return tuple((d, nbytes if whole else nbytes / n, what) for d, whole, what in NVLS_STEPS)


def nvls_algbw(n: int, bandwidth: float) -> float:
    r"""Algorithm bandwidth of NVLink SHARP inside one node, as NCCL's maintainer states it: :math:`B\,n/(n+1)`.

    A perfect reducing switch would give algbw = B; NCCL's NVLS moves
    :math:`(n+1)/n` of M over each GPU's links (nccl-tests issue 238 and pull
    request 239, September 2024), so algbw = B n / (n + 1) with B the bandwidth
    the links sustain.

    >>> round(nvls_algbw(8, 370e9) / 1e9, 1)
    328.9
    """
    n = check_count("n", n, minimum=2)
    bandwidth = check_positive("bandwidth", bandwidth)
    return bandwidth * n / (n + 1)


def measured_gain(measured: dict = MEASURED_H100) -> dict[str, float]:
    """Speed-up of in-switch over ring all-reduce from algbw: measured, NVLS's own model, a perfect switch.

    The ring's busbw is the bandwidth its links sustain, so it is also the B
    of :func:`nvls_algbw` and of the perfect switch (algbw = B).

    >>> g = measured_gain()
    >>> round(g["measured"], 2), round(g["nvls_model"], 2), round(g["ideal"], 2)
    (1.3, 1.56, 1.75)
    """
    n = measured["n"]
    factor = cost.bus_factor("all_reduce", n)
    ring_algbw = measured["ring_busbw"] / factor
    nvls = nvls_algbw(n, measured["ring_busbw"])
    return {"ring_algbw": ring_algbw, "measured": measured["nvls_algbw"] / ring_algbw,
            "nvls_model_algbw": nvls, "nvls_model": nvls / ring_algbw, "ideal": factor}
