"""What chapter 6's calculator computes: synchronisation time for a placement of workers on hosts.

Returns label -> text with units; numpy-free, so the page runs it too.
"""

from __future__ import annotations

from ..units import format_size, format_time
from .placement import Cluster, estimate, example_cluster, parse_placement, workers_per_host

__all__ = ["placement_results", "cluster_placement_results"]


def placement_results(where: str = "host3:2, host1:2", model: str = "resnet50", dtype: str = "fp32",
                      mode: str = "allreduce", algorithm: str = "auto", pipelined: bool = True) -> dict[str, str]:
    """The placement calculator on :func:`example_cluster` (eight hosts, four slots each), as label -> text.

    ``where`` reads like ``"host3:2, host1:2"`` (:func:`parse_placement`);
    the other controls are :func:`estimate`'s. Its keywords are exactly the
    calculator's controls; :func:`cluster_placement_results` takes any cluster.
    Imports no numpy.

    >>> r = placement_results("host3:2, host1:2")
    >>> r["synchronisation time per iteration"], r["bounded by"]
    ('939.78 ms', 'network link of host 3 (145.88 MB/s)')
    >>> placement_results("host9:1")
    Traceback (most recent call last):
    ...
    ValueError: where: host must be in 0..7, got 9
    """
    return cluster_placement_results(example_cluster(), where, model, dtype, mode, algorithm, pipelined)


def cluster_placement_results(cluster: Cluster, where: str = "host3:2, host1:2", model: str = "resnet50",
                              dtype: str = "fp32", mode: str = "allreduce", algorithm: str = "auto",
                              pipelined: bool = True) -> dict[str, str]:
    """:func:`placement_results` on any ``cluster`` (the calculator binds it first).

    >>> cluster_placement_results(example_cluster(slots=2), "host3:2")["synchronisation time per iteration"]
    '94.47 ms'
    >>> cluster_placement_results(example_cluster(slots=2), "host3:3")
    Traceback (most recent call last):
    ...
    ValueError: where: placement puts 3 workers on host 3, which has 2 slots
    """
    try:  # the control is "where": name it in the message
        counts = workers_per_host(cluster, parse_placement(where))
    except ValueError as err:
        raise ValueError(f"where: {err}") from None
    est = estimate(cluster, dict(enumerate(counts)), model=model, dtype=dtype, mode=mode, algorithm=algorithm,
                   pipelined=pipelined)
    out = {
        "gradient size": f"{format_size(est.nbytes)} = {format_size(est.nbytes, binary=True)}",
        "workers per host": " ".join(f"h{h}:{c}" for h, c in enumerate(est.counts) if c),
        "scheme": (f"parameter server (one unsharded server) on host {est.server_host}" if mode == "ps"
                   else f"{est.algorithm} all-reduce" if sum(est.counts) > 1 else "none: one worker, nothing to all-reduce"),
    }
    if mode == "ps":
        out["push and pull"] = ("overlapped (each link direction busy once)" if pipelined
                                else "one after the other (twice the time)")
    out["synchronisation time per iteration"] = format_time(est.time)
    out["bounded by"] = est.bottleneck
    return out
