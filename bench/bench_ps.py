"""Benchmark: the parameter-server round simulation at scale.

Runs :func:`commlib.parameter_servers.simulate.ps_round` and :func:`commlib.parameter_servers.simulate.byteps_round` on
float32 gradients and prints a markdown table of wall-clock seconds, with the
busiest NIC's bytes in the trace checked against the closed form.

    python bench/bench_ps.py

``main()`` returns the rows (a list of dicts) for ``bench/run.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commlib import cost  # noqa: E402
from commlib.parameter_servers import simulate as ps  # noqa: E402

#: (label, workers, servers or CPU machines, elements, kind)
CASES = [
    ("PS, 1 server", 64, 1, 1 << 20, "apart"),
    ("PS, 8 shards apart", 64, 8, 1 << 20, "apart"),
    ("PS, 64 shards colocated", 64, 64, 1 << 20, "colocated"),
    ("PS, 16 shards apart, 256 workers", 256, 16, 1 << 18, "apart"),
    ("BytePS, 32 CPU machines", 64, 32, 1 << 20, "byteps"),
]


def _run(workers: int, k: int, elements: int, kind: str, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    params = rng.random(elements, dtype=np.float32)
    grads = list(rng.random((workers, elements), dtype=np.float32))
    start = time.perf_counter()
    if kind == "byteps":
        r = ps.byteps_round(params, grads, cpu_machines=k, record=False)
    else:
        r = ps.ps_round(params, grads, servers=k, colocated=(kind == "colocated"), record=False)
    seconds = time.perf_counter() - start
    m = elements * 4
    busiest = int(max(r.trace.bytes_sent.max(), r.trace.bytes_received.max()))
    if kind == "byteps":
        formula = cost.byteps_time(m, workers, k, 1.0)
    else:
        formula = ps.ps_traffic(m, workers, k, colocated=(kind == "colocated")).busiest
    return {"seconds": seconds, "messages": len(r.trace.messages), "busiest": busiest, "formula": formula}


def main() -> list[dict]:
    rows = []
    for label, workers, k, elements, kind in CASES:
        out = _run(workers, k, elements, kind)
        rows.append({"case": label, "workers": workers, "k": k, "elements": elements, **out})
    return rows


if __name__ == "__main__":
    rows = main()
    print("| case | workers | k | float32 elements | messages | seconds | busiest NIC (B) | closed form (B) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['case']} | {r['workers']} | {r['k']} | {r['elements']:,} | {r['messages']:,} | "
              f"{r['seconds']:.3f} | {r['busiest']:,} | {r['formula']:,.0f} |")
