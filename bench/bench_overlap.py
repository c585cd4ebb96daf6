"""Benchmark: the overlap calculator's compute, :func:`commlib.sgd.calculators.overlap_results`.

A calculator recomputes on every change of a control, in the reader's browser
(Pyodide) or kernel; the target is a median of at most 50 ms per recompute.
Cases: the chapter's default, the largest model with the smallest buckets (most
layers and buckets), and 1,024 ranks. Run with ``make bench`` or
``python bench/bench_overlap.py``.
"""

from __future__ import annotations

import statistics
import time

from commlib.sgd import calculators

TARGET_MS = 50.0
CASES = [
    ("chapter default", {}),
    ("GPT-2 XL, 0 MiB buckets", {"model": "gpt2_xl", "bucket_mib": 0.0}),
    ("1,024 ranks, 1 MiB buckets", {"n": 1024, "bucket_mib": 1.0, "link": "ib_hdr"}),
]


def main(repeats: int = 30) -> list[dict]:
    rows = []
    for label, controls in CASES:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            calculators.overlap_results(**controls)
            times.append(time.perf_counter() - start)
        median = 1e3 * statistics.median(times)
        rows.append({"case": label, "median (ms)": f"{median:.2f}", "target (ms)": f"<= {TARGET_MS:g}",
                     "verdict": "ok" if median <= TARGET_MS else "SLOW"})
    return rows


if __name__ == "__main__":
    for row in main():
        print(row)
