"""Benchmark: mapping collective traces onto topologies, and the placement search.

Prints a markdown table of wall-clock seconds per case (no targets asserted).

    python bench/bench_topology.py

``main()`` returns the rows (a list of dicts) for ``bench/run.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commlib.collectives import simulate as collectives
from commlib.network import (
    placement,
    topology,  # noqa: E402
)


def _trace(n: int, algorithm: str = "ring", **kw):
    arrays = [np.ones(64 * n, dtype=np.float32) for _ in range(n)]
    return collectives.allreduce(arrays, algorithm, **kw)[1]


def _timed(label, fn):
    start = time.perf_counter()
    detail = fn()
    return {"case": label, "seconds": time.perf_counter() - start, "detail": detail}


def main() -> list[dict]:
    rows = []
    for side in (8, 16):
        n = side * side
        trace, g = _trace(n), topology.torus2d(side, side, "nvlink2")
        order = topology.snake_order(side, side)
        rows.append(_timed(f"ring all-reduce on a {side}x{side} torus ({len(trace.messages)} messages)",
                           lambda g=g, trace=trace, order=order: f"{topology.map_trace(g, trace, order).max_flows} flow(s) max per link"))
    c = topology.cluster(8, gpus_per_host=8)
    hier = _trace(64, "hierarchical", hosts=8)
    rows.append(_timed(f"hierarchical all-reduce on 8 hosts x 8 GPUs ({len(hier.messages)} messages)",
                       lambda: " -> ".join(topology.map_trace(c, hier).bottleneck)))
    mesh = topology.mesh2d(32, 32, "eth_10g")
    rows.append(_timed("one route corner to corner on a 32x32 mesh",
                       lambda: f"{len(topology.route(mesh, 0, 32 * 32 - 1)) - 1} hops"))
    rows.append(_timed("equal shares and max-min on a 4x4 mesh ring and a BytePS round (sharing_comparison)",
                       lambda: ", ".join(f"{k[0]} {k[1]}: {v * 1e3:.3f} ms"
                                         for k, v in topology.sharing_comparison().items() if k[0] == "byteps")))
    cl = placement.example_cluster()
    rows.append(_timed("best placement of 8 workers on the example cluster's 8 hosts (all placements)",
                       lambda: placement.best_placements(cl, 8, top=1)[0].describe()))
    return rows


if __name__ == "__main__":
    out = main()
    print("| case | seconds | result |\n| --- | --- | --- |")
    for r in out:
        print(f"| {r['case']} | {r['seconds']:.3f} | {r['detail']} |")
