"""Self-checks for chapter 1 (reduce and the collective primitives). Answers are computed, never typed in."""

import numpy as np

from .. import cost, hardware
from ..check import Given, Question, register
from ..collectives import compare
from ..collectives import simulate as collectives


def _tree_steps(n: int) -> int:
    _, trace = collectives.reduce([np.array([float(r)]) for r in range(n)], algorithm="tree")
    return trace.steps


register(Question(
    "ch01.tree_steps", lambda n=1000: _tree_steps(n), unit="steps", rel_tol=0.0,
    givens=(Given("n", (100, 300, 500, 2000, 3000), "{} workers"),),
    hints=((lambda given, right: given == 999, "999 is the serial chain (n - 1 steps); the tree halves "
                                               "the number of partial results at every step."),
           (lambda given, right: abs(given - np.log2(1000)) < 0.5 and given != right,
            "A step is a whole round: round log2(1000) up to the next whole number.")),
    hint="Each tree step halves the number of partial results: ceil(log2 n) steps.",
))

register(Question(
    "ch01.subtract_tree", lambda: collectives.reduce_order_demo(list(range(1, 9)), "subtract").tree,
    hints=((lambda given, right: given == collectives.reduce_order_demo(list(range(1, 9)), "subtract").serial,
            "That is the serial answer ((1-2)-3)-...; the tree groups the values in pairs first."),),
    hint="Pair neighbours: (1-2), (3-4), (5-6), (7-8); then pair the results; then once more.",
))

register(Question(
    "ch01.alltoall_recv_kb",
    lambda n=8, count=1000: compare.buffer_sizes("all_to_all", n, count).recv * hardware.dtype_bytes("fp32") / 1e3,
    unit="kB",
    givens=(Given("n", (4, 16, 32), "{} ranks"), Given("count", (500, 2000, 4096), "a sendcount of {} fp32 elements")),
    hints=((lambda given, right: abs(given / right - 1 / 8) < 0.01,
            "That is one block: a rank receives one block from every rank, itself included."),),
    hint="All-to-all: each rank receives n blocks of sendcount elements; multiply by 4 B per fp32 element.",
))

register(Question(
    "ch01.master_gb",
    lambda n=16: cost.allreduce_terms(hardware.gradient_bytes("resnet50", "fp32"), n, "naive").bytes / 1e9,
    givens=(Given("n", (4, 8, 32, 64), "{} workers"),),
    unit="GB",
    hints=((lambda given, right: abs(given / right - 0.5) < 0.01,
            "Count both directions: (n - 1) gradients come in and (n - 1) results go out."),),
    hint="The master's link carries 2(n - 1) M bytes, with M the gradient in bytes.",
))
