"""Self-checks for chapter 2 (ring all-reduce and its rivals). Answers are computed, never typed in."""

import numpy as np

from .. import collectives, compare, cost, hardware
from ..check import Question, register


def _eth10(m: float, algorithm: str) -> float:
    item = hardware.link("eth_10g")
    return compare.allreduce_seconds(algorithm, m, 8, item.bandwidth, item.latency)


def _crossover_kb() -> float:
    (m,) = compare.crossover_sizes(lambda m: _eth10(m, "ring"), lambda m: _eth10(m, "recursive_doubling"),
                                   1.0, 1e12)
    return m / 1e3


def _hd_steps(n: int) -> int:
    _, trace = collectives.allreduce([np.arange(n, dtype=float)] * n, algorithm="halving_doubling")
    return trace.steps


def _hier_speedup() -> float:
    flat = compare.cluster_allreduce("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "ring")
    hier = compare.cluster_allreduce("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "hierarchical")
    return flat.seconds / hier.seconds


register(Question(
    "ch02.ring_bytes_gb", lambda: cost.ring_bytes_per_rank(1e9, 8) / 1e9, unit="GB",
    hints=((lambda given, right: abs(given - 2.0) < 0.01, "Not 2M: each rank sends (N - 1)/N of M per phase."),),
    hint="Each rank sends 2(N - 1)/N x M bytes: N - 1 chunks of M/N in each of the two phases.",
))

register(Question(
    "ch02.gpt2xl_ms",
    lambda: 1e3 * compare.allreduce_seconds("ring", hardware.gradient_bytes("gpt2_xl", "bf16"), 32,
                                            hardware.link("ib_hdr").bandwidth, hardware.link("ib_hdr").latency),
    unit="ms",
    hints=((lambda given, right: abs(given / right - 2) < 0.02, "bf16 takes 2 bytes per parameter, not 4."),),
    hint="T = 2(N - 1)/N x M/B + 2(N - 1) alpha, with M in bytes and B in bytes per second (200 Gb/s = 25 GB/s).",
))

register(Question(
    "ch02.crossover_kb", _crossover_kb, unit="kB",
    hint="Set 2(N-1) alpha + 2(N-1)/N M beta equal to log2 N (alpha + M beta) and solve for M.",
))

register(Question(
    "ch02.busbw_gbs", lambda: compare.algbw_to_busbw(40e9, 8) / 1e9, unit="GB/s",
    hints=((lambda given, right: abs(given - 40 * 8 / 14) < 0.1, "You divided: busbw is algbw times 2(n-1)/n."),),
    hint="busbw = algbw x 2(n - 1)/n for all-reduce.",
))

register(Question(
    "ch02.hd_steps", lambda: _hd_steps(64), unit="steps", rel_tol=0.0,
    hints=((lambda given, right: given == 126, "126 = 2(N - 1) is the ring; halving-doubling needs 2 log2 N."),),
    hint="log2 N halving steps, then log2 N doubling steps.",
))

register(Question(
    "ch02.hier_speedup", _hier_speedup, unit="x",
    hint="Flat ring: every step at the 25 Gb/s link. Hierarchical: only a 1/8 shard crosses it.",
))
