"""Self-checks for chapter 1 (reduce and the collective primitives). Answers are computed, never typed in."""

import numpy as np

from .. import hardware
from ..check import Given, Question, exercise_means, register
from ..collectives import compare
from ..collectives import simulate as collectives
from ..collectives.algorithms import chain


def _tree_steps(n: int) -> int:
    _, trace = collectives.reduce([np.array([float(r)]) for r in range(n)], algorithm="tree")
    return trace.steps


register(Question(
    "ch01.tree_steps", lambda n=1000: _tree_steps(n), unit="steps", rel_tol=0.0,
    givens=(Given("n", (100, 300, 500, 2000, 3000), "{} workers"),),
    hints=((lambda given, right, v: given == v["n"] - 1, "That is the serial chain (n - 1 steps); the tree halves "
                                                          "the number of partial results at every step."),
           (lambda given, right, v: abs(given - np.log2(v["n"])) < 0.5 and given != right,
            "A step is a whole round: round log2 n up to the next whole number.")),
    hint="Each tree step halves the number of partial results: ceil(log2 n) steps.",
))

register(Question(
    "ch01.subtract_tree", lambda: collectives.reduce_order_demo(list(range(1, 9)), "subtract").tree,
    hints=((lambda given, right: given == collectives.reduce_order_demo(list(range(1, 9)), "subtract").serial,
            "That is the serial answer ((1-2)-3)-...; the tree groups the values in pairs first."),),
    hint="Pair neighbours: (1-2), (3-4), (5-6), (7-8); then pair the results; then once more.",
))

#: The rank counts an all-to-all variant may draw (the book's 8 first).
ALLTOALL_NS = (8, 4, 16, 32)


register(Question(
    "ch01.alltoall_recv_kb",
    lambda n=8, count=1000: compare.buffer_sizes("all_to_all", n, count).recv * hardware.dtype_bytes("fp32") / 1e3,
    unit="kB",
    givens=(Given("n", ALLTOALL_NS[1:], "{} ranks"), Given("count", (500, 2000, 4096), "a sendcount of {} fp32 elements")),
    hints=((lambda given, right, v: abs(given / right * v["n"] - 1) < 0.002,
            "That is one block: a rank receives one block from every rank, itself included."),
           (lambda given, right: abs(given / right - 1 / 4) < 0.002,
            "That counts elements, not bytes: fp32 is 4 bytes per element."),
           (lambda given, right, v: abs((1 - given / right) * v["n"] - 1) < 0.002,
            "That leaves out the rank's own block: all-to-all keeps it in the receive buffer, so count all n."),
           (lambda given, right: abs(given / right - 1000 / 1024) < 0.002,
            "That is KiB (1024 B); the question asks for kB (1000 B)."),
           (lambda given, right: abs(given / right - 2) < 0.002,
            "fp32 is 4 bytes per element, not 8."),),
    hint="All-to-all: each rank receives n blocks of sendcount elements; multiply by 4 B per fp32 element.",
))

register(Question(
    "ch01.master_gb",
    lambda n=16: compare.busiest_link_bytes("naive", hardware.gradient_bytes("resnet50", "fp32"), n) / 1e9,
    givens=(Given("n", (4, 8, 32, 64), "{} workers"),),
    unit="GB",
    hints=((lambda given, right: abs(given / right - 0.5) < 0.01,
            "Count both directions: (n - 1) gradients come in and (n - 1) results go out."),
           (lambda given, right, v: abs(given / right - v["n"] / (v["n"] - 1)) < 0.002,
            "That counts n gradients each way; the master neither sends to nor receives from itself: "
            "(n - 1) come in and (n - 1) go out."),),
    hint="The master's link carries 2(n - 1) M bytes, with M the gradient in bytes.",
))


def _chain_q_half_alpha(n: int = 8, mib: int = 64) -> float:
    """The pipelined chain's best chunk count, as a real number, on ``n`` ranks reducing ``mib`` MiB over
    25 Gb/s Ethernet with its start-up halved."""
    link = hardware.link("eth_25g")
    return chain.real_best_chunks(mib * 2**20, n, link.bandwidth, link.latency / 2)


register(Question(
    "ch01.chain_q_half_alpha", _chain_q_half_alpha, unit="chunks",
    givens=(Given("n", (4, 16, 32, 64), "{} ranks"), Given("mib", (16, 32, 128, 256), "{} MiB")),
    hints=((lambda given, right: abs(given / right - 2**-0.5) < 0.01,
            "That is the best q at the chapter's start-up; halve alpha first."),
           (lambda given, right: abs(given / right - 2**0.5) < 0.01,
            "Halving alpha does not double the best q: q = sqrt((n - 2) M beta / alpha) grows with "
            "1 / sqrt(alpha), so by a factor sqrt 2."),
           (lambda given, right: any(abs(given / right - f) < 0.01 for f in (0.5, 2**-1.5)),
            "The best q grows when alpha falls: a chunk's start-up is cheaper, so more, smaller chunks pay."),),
    hint="The best q is sqrt((n - 2) M beta / alpha): halving alpha multiplies it by sqrt 2.",
))


exercise_means(
    "ch01-ex-alltoall",
    "# The chapter's calculator: one collective under alpha-beta (choose all-to-all and type M).\n"
    "collectives_views.primitive_calculator(primitive=\"all-to-all\", n=8)",
)

exercise_means(
    "ch01-ex-two-ways",
    "# The chapter's calculator: one collective under alpha-beta (compare the algorithms' bytes).\n"
    "collectives_views.primitive_calculator(primitive=\"all-reduce\", n=8)",
)
