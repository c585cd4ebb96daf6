"""Benchmark: the ring all-reduce simulation at scale.

Runs :func:`commlib.collectives.allreduce` (ring, vectorised path) on 1024
ranks x 1,048,576 float32 elements (4 MiB per rank, 4 GiB in all) and prints
a markdown table of wall-clock seconds against the 1 s target, with the
trace's step count and per-rank bytes checked against the closed form.
The headline case runs twice: the first run in a process also pays for the
first touch of 8 GiB of fresh memory (input and results), which on a
virtual machine can dominate; the breakdown rows time the three parts of
the run separately. Needs about 9 GB of free memory.

    python bench/bench_collectives.py

``main()`` returns the rows (a list of dicts) for ``bench/run.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commlib import collectives, cost  # noqa: E402

TARGET_S = 1.0

#: (label, ranks, elements per rank, input form, target seconds or None)
CASES = [
    ("ring all-reduce, vectorised, 2-D input (first run in this process)", 1024, 1 << 20, "matrix", TARGET_S),
    ("ring all-reduce, vectorised, 2-D input (second run)", 1024, 1 << 20, "matrix", TARGET_S),
    ("ring all-reduce, vectorised, list input", 256, 1 << 20, "list", None),
    ("ring all-reduce, step by step (record=True)", 64, 1 << 14, "list", None),
]


def _run(ranks: int, elements: int, form: str, record: bool, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    data = rng.random((ranks, elements), dtype=np.float32)
    arrays = data if form == "matrix" else list(data)
    start = time.perf_counter()
    results, trace = collectives.allreduce(arrays, "ring", record=record)
    seconds = time.perf_counter() - start
    nbytes = elements * 4
    terms = cost.allreduce_terms(nbytes, ranks, "ring")
    per_rank = trace.bytes_sent
    probe = rng.integers(0, elements, 64)  # spot-check a few columns against numpy (float64 sum)
    expected = data[:, probe].astype(np.float64).sum(axis=0)
    ok = bool(np.allclose(results[ranks - 1][probe], expected, rtol=1e-4))
    return {
        "seconds": seconds,
        "steps": trace.steps,
        "steps_formula": terms.steps,
        "bytes_per_rank": int(per_rank.max()),
        "bytes_per_rank_formula": cost.ring_bytes_per_rank(nbytes, ranks),
        "messages": len(trace),
        "result_ok": ok,
    }


def _breakdown(ranks: int, elements: int, seed: int = 0) -> list[tuple[str, float]]:
    """Time the three parts of the vectorised ring separately (same sizes as the headline case)."""
    from commlib._collectives_algorithms import _ring_fast, _ring_schedule
    from commlib._collectives_engine import split_bounds

    data = np.random.default_rng(seed).random((ranks, elements), dtype=np.float32)
    parts = []
    start = time.perf_counter()
    acc = _ring_fast(data, np.add)
    parts.append(("reduction arithmetic ((n-1) x length combines, each row read once)", time.perf_counter() - start))
    start = time.perf_counter()
    trace = collectives.ColumnTrace(n=ranks)
    _ring_schedule(trace, ranks, np.diff(split_bounds(0, elements, ranks)), 4)
    parts.append((f"trace of {len(trace):,} messages (columns)", time.perf_counter() - start))
    del data
    start = time.perf_counter()
    out = np.empty((ranks, elements), dtype=np.float32)
    out[...] = acc
    parts.append((f"{ranks} result copies ({ranks * elements * 4 / 2**30:.0f} GiB of new memory)",
                  time.perf_counter() - start))
    del out
    return parts


def main() -> list[dict]:
    """Run every case; return one dict per row (also printed as a markdown table)."""
    rows = []
    for label, ranks, elements, form, target in CASES:
        r = _run(ranks, elements, form, record=label.endswith("(record=True)"))
        rows.append({
            "benchmark": label,
            "ranks": ranks,
            "elements per rank": elements,
            "data (GiB)": ranks * elements * 4 / 2**30,
            "messages": r["messages"],
            "steps (trace / formula)": f"{r['steps']} / {r['steps_formula']}",
            "bytes per rank (trace / formula)": f"{r['bytes_per_rank']} / {r['bytes_per_rank_formula']:.0f}",
            "result correct": r["result_ok"],
            "seconds": r["seconds"],
            "target (s)": "<= %.1f" % target if target else "-",
            "meets target": (r["seconds"] <= target) if target else "-",
        })
    label, ranks, elements = CASES[0][:3]
    for part, seconds in _breakdown(ranks, elements):
        rows.append({"benchmark": f"  of the first row: {part}", "ranks": ranks, "elements per rank": elements,
                     "data (GiB)": ranks * elements * 4 / 2**30, "messages": "-", "steps (trace / formula)": "-",
                     "bytes per rank (trace / formula)": "-", "result correct": "-", "seconds": seconds,
                     "target (s)": "-", "meets target": "-"})
    _print(rows)
    return rows


def _print(rows: list[dict]) -> None:
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
