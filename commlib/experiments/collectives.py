"""Experiments of chapters 1 and 2: the executable collectives run on values the reader can follow.

Model layer (numpy, no plotting): each function here runs
:mod:`commlib.collectives.simulate` and returns what the run did -- the buffers,
the steps, the bytes, the trace -- as plain data. The pictures in
:mod:`commlib.views.collectives` take these results as input and draw them;
the chapters glue numbers from the same results.

Values the reader can follow: rank ``r`` starts with chunk ``c`` equal to
``(c + 1) * 10**r`` (:func:`digit_inputs`), so in any sum each decimal digit
records one rank's contribution -- ``1111`` is chunk 0 summed over four
ranks, ``110`` is ranks 0 and 1 only (:func:`contributors` reads the digits
back).
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from .. import hardware
from ..collectives import compare
from ..collectives import simulate as collectives
from ..collectives.trace import Trace
from ..units import check_count, format_time
from . import claims

__all__ = [
    "PRIMITIVES",
    "OPERATOR_CASES",
    "ROUNDING_DTYPES",
    "RoundingRun",
    "rounding_runs",
    "ROUNDING_SEEDS",
    "order_errors",
    "exact_sum",
    "rounding_bound",
    "SIGNIFICAND_BITS",
    "unit_roundoff",
    "ORDER_NS",
    "ORDER_CLAIMS",
    "OrderCount",
    "ORDER_SEEDS",
    "ORDER_BLOCK",
    "order_count",
    "order_trend",
    "order_takeaway",
    "one_port_allreduces",
    "TREE_MEDIUM_BYTES",
    "tree_non_power_of_two_claim",
    "tree_power_of_two_claim",
    "digit_inputs",
    "contributors",
    "ReduceRuns",
    "reduce_runs",
    "OperatorRun",
    "operator_runs",
    "PrimitiveRun",
    "primitive_run",
    "primitive_runs",
    "buffer_runs",
    "HotspotCounts",
    "hotspot_counts",
    "CH01_SHARED",
    "master_chunk_grid",
    "master_seconds",
    "collective_seconds",
    "master_vs_ring_claim",
    "REDUCE_SHORT",
    "REDUCE_LONG",
    "REDUCE_NS",
    "REDUCE_CLAIMS",
    "MasterRow",
    "master_comparison",
    "PIPELINES",
    "PipelineSend",
    "pipeline_sends",
    "ReduceRow",
    "chain_tie_ratio",
    "chain_tie_ratio_low",
    "chain_tie_ratio_low_whole",
    "chain_fill_ratio",
    "chain_tie_startup",
    "reduce_comparison",
    "RingRun",
    "ring_run",
    "TraceFormulaRuns",
    "trace_formula_runs",
    "PartnerRuns",
    "PARTNER_ALGORITHMS",
    "partner_runs",
]

#: The eight primitives, in the order the chapter shows them.
PRIMITIVES: tuple[str, ...] = (
    "broadcast", "reduce", "all_reduce", "gather", "all_gather", "scatter", "reduce_scatter", "all_to_all",
)

#: Operators and values the chapter runs: four that qualify, two that do not, and float rounding.
OPERATOR_CASES: tuple[tuple[str, tuple], ...] = (
    ("sum", (1, 2, 3, 4)),
    ("max", (3, 1, 4, 1)),
    ("band", (14, 11, 7, 15)),
    ("bxor", (14, 11, 7, 15)),
    ("subtract", (1, 2, 3, 4)),
    ("power", (2, 1, 3, 2)),
    ("sum", (1e16, 1.0, -1e16, 1.0)),
)


# --- values the reader can follow -------------------------------------------------------------

def digit_inputs(n: int, chunks: int | None = None) -> list[np.ndarray]:
    """Rank ``r`` holds ``[(c + 1) * 10**r for c in range(chunks)]``: digits record contributions.

    Counting chunks from 1, as the chapter's pictures do, chunk ``j`` of rank ``r`` is ``j * 10**r``:
    in a sum, the digit in place ``r`` says whether rank ``r`` has contributed, and its value is ``j``.

    ``n`` ranks (1 to 8), ``chunks`` values per rank (1 to 9; default ``n``),
    so that no digit of a sum over ranks ever carries into the next.

    >>> [a.tolist() for a in digit_inputs(3)]
    [[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [100.0, 200.0, 300.0]]
    """
    n = check_count("n", n, minimum=1, maximum=8)
    chunks = n if chunks is None else check_count("chunks", chunks, minimum=1, maximum=9)
    return [np.array([(c + 1) * 10.0**r for c in range(chunks)]) for r in range(n)]


def contributors(value: float, n: int) -> frozenset[int]:
    """Ranks whose digit is non-zero in ``value`` (a sum of :func:`digit_inputs` entries).

    >>> sorted(contributors(1010.0, 4))
    [1, 3]
    >>> contributors(float("nan"), 4)
    frozenset()
    """
    if value is None or not np.isfinite(value):
        return frozenset()
    v = int(round(abs(float(value))))
    return frozenset(r for r in range(n) if (v // 10**r) % 10)


# --- chapter 1: reduce, serial vs tree -------------------------------------------------------------

#: One step of a reduce: ``(source rank, destination rank, destination's new value)`` per message.
Step = list[tuple[int, int, float]]


@dataclass(frozen=True)
class ReduceRuns:
    """A serial and a tree reduce of the same values, step by step.

    ``serial`` and ``tree`` hold one list per step of
    ``(src, dst, dst's new value)``, read from the traces of
    :func:`commlib.collectives.simulate.reduce` (``record=True``).
    """

    values: tuple
    op: str
    serial: list[Step]
    tree: list[Step]

    @property
    def n(self) -> int:
        """Number of values (ranks)."""
        return len(self.values)


def _reduce_steps(values: Sequence, op: str, algorithm: str) -> list[Step]:
    """Run :func:`commlib.collectives.simulate.reduce` with ``record=True``: per step, ``[(src, dst, dst's new value)]``."""
    arrays = [np.array([v]) for v in values]
    _, trace = collectives.reduce(arrays, op=op, algorithm=algorithm, record=True)
    steps = []
    for k, s in enumerate(sorted({m.step for m in trace.messages}), start=1):
        after = trace.snapshots[k]
        steps.append([(m.src, m.dst, np.asarray(after[m.dst]).ravel()[0]) for m in trace.step_messages(s)])
    return steps


def reduce_runs(values: Sequence[float] = (1, 2, 3, 4, 5, 6, 7, 8), op: str = "sum") -> ReduceRuns:
    """Reduce ``values`` (one per rank, 2 to 16 of them) serially and as a binomial tree, recording each step.

    The serial chain needs ``n - 1`` steps, the tree ``ceil(log2 n)``; both
    end with the same value when ``op`` is associative.

    >>> runs = reduce_runs((1, 2, 3, 4, 5))
    >>> len(runs.serial), len(runs.tree), float(runs.serial[-1][-1][2]), float(runs.tree[-1][-1][2])
    (4, 3, 15.0, 15.0)
    >>> [(src, dst, float(new)) for src, dst, new in runs.tree[0]]   # step 1: 1 -> 0 and 3 -> 2 combine
    [(1, 0, 3.0), (3, 2, 7.0)]
    """
    values = list(values)
    check_count("number of values", len(values), minimum=2, maximum=16)
    return ReduceRuns(tuple(values), op, _reduce_steps(values, op, "serial"), _reduce_steps(values, op, "tree"))


class OperatorRun(NamedTuple):
    """One operator reduced in both orders: the groupings written out and their results."""

    op: str
    values: tuple
    serial_expression: str
    serial: object
    tree_expression: str
    tree: object


def operator_runs(cases: Sequence[tuple[str, Sequence]] = OPERATOR_CASES) -> list[OperatorRun]:
    """Each ``(op, values)`` reduced serially and as a tree by :func:`commlib.collectives.simulate.reduce_order_demo`.

    >>> [(r.op, r.serial, r.tree) for r in operator_runs([("sum", (1, 2, 3, 4)), ("subtract", (1, 2, 3, 4))])]
    [('sum', 10, 10), ('subtract', -8, 0)]
    """
    rows = []
    for op, values in cases:
        values = list(values)
        demo = collectives.reduce_order_demo(values, op)
        rows.append(OperatorRun(op, tuple(values), collectives.order_expression(values, op, "serial"), demo.serial,
                                collectives.order_expression(values, op, "tree"), demo.tree))
    return rows


#: The floating-point formats the rounding runs add in: numpy's names, with the book's.
ROUNDING_DTYPES = (("float64", "fp64"), ("float32", "fp32"), ("float16", "fp16"))


#: Significant bits of each format, the implicit leading bit included (IEEE 754 binary64, binary32, binary16;
#: bfloat16 keeps fp32's 8 exponent bits and 7 stored fraction bits). numpy has no bfloat16 to ask.
SIGNIFICAND_BITS = {"fp64": 53, "fp32": 24, "fp16": 11, "bf16": 8}


def unit_roundoff(name: str) -> float:
    """A format's unit roundoff u = 2**-p for p significant bits: half the gap between 1 and the next number.

    >>> unit_roundoff("fp16"), unit_roundoff("bf16") / unit_roundoff("fp16")
    (0.00048828125, 8.0)
    """
    if name not in SIGNIFICAND_BITS:
        raise ValueError(f"name must be one of {sorted(SIGNIFICAND_BITS)}; got {name!r}")
    return 2.0 ** -SIGNIFICAND_BITS[name]


class RoundingRun(NamedTuple):
    """How far apart the serial and the tree order land for one format, over seeded runs.

    ``gap`` is the largest |serial - tree| / exact sum over the seeds; ``error`` the largest relative
    error of either order against the exact sum of the same (rounded) values, ``serial_error`` and
    ``tree_error`` each order's own; ``unit`` the format's unit roundoff u (half its machine epsilon).
    """

    dtype: str
    name: str
    n: int
    seeds: int
    unit: float
    gap: float
    error: float
    serial_error: float = float("nan")
    tree_error: float = float("nan")


#: The seeds of the rounding runs and of the claims on the two orders' accuracy: enough that a share of
#: seeds is a distribution, not an anecdote.
ROUNDING_SEEDS = tuple(range(100))


def exact_sum(values: Sequence[float]) -> Fraction:
    """The exact rational sum of finite floats, with no rounding at all.

    Every finite float is an integer over a power of two, so the sum is an integer over the largest
    of those powers: integer arithmetic, exact and fast. ``math.fsum`` is not enough here: it returns
    the sum *correctly rounded* to a double, off by up to half an fp64 unit in the last place, the size
    of the fp64 errors being measured.

    >>> exact_sum([1e16, 1.0, -1e16, 1.0])
    Fraction(2, 1)
    >>> exact_sum([0.1, 0.2]) == Fraction(0.1) + Fraction(0.2) != Fraction(math.fsum([0.1, 0.2]))
    True
    """
    ratios = [float(v).as_integer_ratio() for v in values]
    if not ratios:
        return Fraction(0)
    den = max(d for _, d in ratios)   # every denominator is a power of two, so each divides the largest
    return Fraction(sum(num * (den // d) for num, d in ratios), den)


def _relative_error(result: float, exact: Fraction) -> float:
    """|result - exact| / exact, computed exactly and rounded once."""
    return float(abs(Fraction(result) - exact) / exact)


@functools.cache
def _order_sums(n: int, dtype: str, seed: int) -> tuple[float, float, Fraction]:
    """(serial sum, tree sum, exact sum) of ``n`` seeded uniform values rounded to ``dtype``; each order adds in ``dtype``.

    The exact sum is a :class:`~fractions.Fraction` (:func:`exact_sum`). Cached: the rounding table and
    both contenders of an accuracy claim read the same runs.
    """
    values = np.random.default_rng(seed).random(n).astype(dtype)
    demo = collectives.reduce_order_demo(list(values), "sum")
    return float(demo.serial), float(demo.tree), exact_sum(values.tolist())


def order_errors(n: int, dtype: str, seed: int) -> tuple[float, float]:
    """Relative errors (serial, tree) of summing ``n`` uniform values in [0, 1) in ``dtype``, seeded.

    The values are drawn in float64 by ``numpy.random.default_rng(seed)`` and rounded once to ``dtype``;
    each order adds in ``dtype`` (:func:`commlib.collectives.simulate.reduce_order_demo`); the exact sum of
    the rounded values is their rational sum (:func:`exact_sum`). Neither order errs less on every seed.

    >>> serial, tree = order_errors(1024, "float32", 0)
    >>> tree < serial < 1023 * 2**-24
    True
    >>> serial, tree = order_errors(1024, "float32", 14)   # a seed where both land equally far
    >>> serial == tree
    True
    """
    n = check_count("n", n, minimum=2)
    serial, tree, exact = _order_sums(n, str(dtype), int(seed))
    return _relative_error(serial, exact), _relative_error(tree, exact)


def rounding_bound(roundings: int, unit: float) -> float:
    r"""The relative error bound of a value that passes through ``roundings`` roundings of unit roundoff ``unit``.

    Each rounding multiplies by at most :math:`1 + u`, and :math:`(1 + u)^k - 1 \le ku/(1 - ku)` while
    :math:`ku < 1`; to first order in u the bound is :math:`ku`, which in fp16 at k = 1023 is half the
    rigorous one. Infinite where :math:`ku \ge 1`: nothing is then bounded.

    >>> rounding_bound(1023, 2**-11), 1023 * 2**-11
    (0.9980487804878049, 0.49951171875)
    """
    k = check_count("roundings", roundings, minimum=0)
    if not 0 < unit < 1:
        raise ValueError(f"unit must be a unit roundoff in (0, 1); got {unit!r}")
    return k * unit / (1 - k * unit) if k * unit < 1 else math.inf


def rounding_runs(n: int = 1024, seeds: Sequence[int] = ROUNDING_SEEDS,
                  dtypes: Sequence[tuple[str, str]] = ROUNDING_DTYPES) -> list[RoundingRun]:
    """Sum ``n`` uniform values in [0, 1) in each format, serially and as a tree, on each seed.

    No term cancels another here; the two orders still differ by rounding, by a share that grows
    with the format's unit roundoff. The values are drawn in float64 by
    ``numpy.random.default_rng(seed)`` and rounded once to the format; each order then adds in the
    format (:func:`commlib.collectives.simulate.reduce_order_demo`); the exact sum of the rounded values
    is their rational sum (:func:`exact_sum`), so even fp64's errors are measured exactly.

    >>> r = rounding_runs(64, seeds=(0,))
    >>> [x.name for x in r], r[0].gap < 1e-14 < r[2].gap
    (['fp64', 'fp32', 'fp16'], True)
    """
    n = check_count("n", n, minimum=2)
    seeds = tuple(seeds)
    out = []
    for dtype, name in dtypes:
        gaps, serials, trees = [], [], []
        for seed in seeds:
            serial, tree, exact = _order_sums(n, dtype, int(seed))
            gaps.append(float(abs(Fraction(serial) - Fraction(tree)) / exact))
            serials.append(_relative_error(serial, exact))
            trees.append(_relative_error(tree, exact))
        out.append(RoundingRun(dtype, name, n, len(seeds), float(np.finfo(dtype).eps) / 2, max(gaps),
                               max(serials + trees), max(serials), max(trees)))
    return out


#: The blocks of seeds over which :func:`rounding_gap_blocks` measures how far the largest fp16 gap moves.
GAP_BLOCKS = tuple(tuple(range(k * 100, (k + 1) * 100)) for k in range(6))


def rounding_gap_blocks(n: int = 1024, dtype: str = "float16",
                        blocks: Sequence[Sequence[int]] = GAP_BLOCKS) -> list[float]:
    """The largest gap |serial - tree| / exact sum of :func:`rounding_runs`, on each block of seeds.

    One block's largest gap is one draw: another block of as many seeds gives another largest value. The
    spread over the blocks says how many digits of the table's gap mean something.

    >>> gaps = rounding_gap_blocks(64, blocks=((0, 1), (2, 3)))
    >>> len(gaps), all(0 < g < 63 * 2**-11 for g in gaps)
    (2, True)
    """
    return [rounding_runs(n, seeds=block, dtypes=((dtype, dtype),))[0].gap for block in blocks]


def power_of_ten(values: Sequence[float]) -> float:
    """The power of ten every value rounds to on a log scale (each within a factor of about 3.16 of it).

    For a quantity known only to its order of magnitude: the blocks' largest gaps 0.0083 to 0.0107 are
    "about 1 %". ValueError where the values round to different powers.

    >>> power_of_ten([0.0083, 0.0107])
    0.01
    """
    exponents = {round(math.log10(v)) for v in values if v > 0}
    if len(exponents) != 1 or any(v <= 0 for v in values):
        raise ValueError(f"values must be positive and round to one power of ten; got {list(values)!r}")
    return 10.0 ** exponents.pop()


def round_to_bf16(x: float) -> float:
    """``x`` rounded to the nearest bfloat16, ties to the even neighbour, as a float.

    numpy has no bfloat16, so this emulates it: bf16 keeps fp32's exponent range and 8 significant bits
    (:data:`SIGNIFICAND_BITS`), so a normal x = m 2**e with m in [0.5, 1) is rounded to a multiple of
    2**(e - 8). Python's ``round`` rounds an exact half to even, and every step here is exact in float64.
    Below bf16's smallest normal number, 2**-126, the spacing stays 2**-133 (subnormals); no overflow check.

    >>> round_to_bf16(1 + 2**-8), round_to_bf16(1 + 3 * 2**-8), round_to_bf16(256.0 + 0.99)
    (1.0, 1.015625, 256.0)
    """
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"x must be finite; got {x!r}")
    if x == 0:
        return 0.0
    _, e = math.frexp(x)
    quantum = 2.0 ** (max(e, -125) - SIGNIFICAND_BITS["bf16"])
    return round(x / quantum) * quantum


class Bf16Run(NamedTuple):
    """The serial and the tree sum in emulated bf16 (:func:`bf16_order_run`), over seeds.

    ``serial_sums`` are the serial order's results, one per seed; ``serial_error`` and ``tree_error`` each
    order's largest relative error against the exact sum of the rounded values; ``exact_low`` and
    ``exact_high`` the smallest and largest exact sum.
    """

    n: int
    seeds: int
    serial_sums: tuple
    serial_error: float
    tree_error: float
    exact_low: float
    exact_high: float


def _bf16_add(a: float, b: float) -> float:
    """bf16 addition: the float64 sum of two bf16 numbers is exact, rounded once to bf16."""
    return round_to_bf16(a + b)


def bf16_order_run(n: int = 1024, seeds: Sequence[int] = ROUNDING_SEEDS) -> Bf16Run:
    """:func:`rounding_runs`' sum in bf16: each value and every addition rounded by :func:`round_to_bf16`.

    The values are drawn in float64 by ``numpy.random.default_rng(seed)`` and rounded once to bf16; a sum of two
    bf16 numbers is exact in float64, so rounding it once is bf16 addition. Serially, once the running sum reaches
    256 the spacing of bf16 numbers is 2, every value below 1 is less than half of it, and the sum stops growing.

    >>> r = bf16_order_run(1024, seeds=(0,))
    >>> r.serial_sums, r.tree_error < 0.01 < 0.5 < r.serial_error
    ((256.0,), True)
    """
    n = check_count("n", n, minimum=2)
    sums, serials, trees, exacts = [], [], [], []
    for seed in seeds:
        values = [round_to_bf16(v) for v in np.random.default_rng(int(seed)).random(n)]
        exact = exact_sum(values)
        # the serial and the tree order of the fp16 table (reduce_order_demo), every addition rounded to bf16
        serial = functools.reduce(_bf16_add, values)
        tree = collectives._tree_fold(list(values), _bf16_add)
        sums.append(serial)
        serials.append(_relative_error(serial, exact))
        trees.append(_relative_error(tree, exact))
        exacts.append(float(exact))
    return Bf16Run(n, len(sums), tuple(sums), max(serials), max(trees), min(exacts), max(exacts))


#: The numbers of values the accuracy claims sum: all-reduces over a few dozen ranks, and a thousand.
ORDER_NS = (16, 64, 1024)

#: The seeds of the accuracy claims: four times the rounding table's, so that their ratio of medians can be set
#: beside its spread over blocks of :data:`ORDER_BLOCK` seeds.
ORDER_SEEDS = tuple(range(400))

#: The seeds in one block over which :func:`order_count` measures how far the ratio of medians moves.
ORDER_BLOCK = 100

#: The accuracy claims, one per format and n: the formats where no seed sums exactly in either order.
ORDER_CLAIMS = {f"ch01.tree_sum_{name}_{n}": (dtype, n)
                for dtype, name in ROUNDING_DTYPES if dtype != "float64" for n in ORDER_NS}


class OrderCount(NamedTuple):
    """How the tree order fared against the serial one over a claim's seeds, from its verdict."""

    name: str
    n: int
    seeds: int
    less: int
    same: int
    more: int
    serial_median: float
    tree_median: float
    #: The ratio of the medians on each block of :data:`ORDER_BLOCK` seeds: its smallest and its largest.
    ratio_low: float = math.nan
    ratio_high: float = math.nan

    @property
    def ratio(self) -> float:
        """The serial order's median error over the tree's (infinite where the tree's median is zero)."""
        return self.serial_median / self.tree_median if self.tree_median > 0 else math.inf


def order_count(v: claims.Verdict, block: int = ORDER_BLOCK) -> OrderCount:
    """On how many seeds the tree order errs less than, as much as and more than the serial one; each one's median,
    and the smallest and largest ratio of the two medians over consecutive blocks of ``block`` seeds (one block
    where there are fewer than two blocks' worth): how far the ratio moves from one set of seeds to another."""
    block = check_count("block", block, minimum=1)
    s, t = v.best["serial order"].values, v.best["tree order"].values
    blocks = max(1, len(s) // block)
    ratios = []
    for bs, bt in zip(np.array_split(np.asarray(s), blocks), np.array_split(np.asarray(t), blocks)):
        top, bottom = float(np.median(bs)), float(np.median(bt))
        ratios.append(top / bottom if bottom > 0 else math.inf)
    low, high = min(ratios), max(ratios)
    return OrderCount(dict(ROUNDING_DTYPES)[v.claim.shared["dtype"]], v.claim.shared["n"], v.seeds,
                      sum(b < a for a, b in zip(s, t)), sum(b == a for a, b in zip(s, t)),
                      sum(b > a for a, b in zip(s, t)), statistics.median(s), statistics.median(t),
                      float(low), float(high))


def _order_claim(key: str, dtype: str, n: int, small: bool) -> claims.Claim:
    name = dict(ROUNDING_DTYPES)[dtype]
    shared = {"n": n, "dtype": dtype}   # small as it is: all 400 seeds of n = 1,024 take a few seconds
    seeds = ORDER_SEEDS[:20] if small else ORDER_SEEDS

    def contender(order: int, uses: str) -> claims.Contender:
        return claims.Contender(("serial order", "tree order")[order],
                                lambda s, seed: order_errors(s["n"], s["dtype"], seed)[order], uses=uses)

    serial = contender(0, f"((y1 + y2) + y3) + ...: n - 1 additions in a chain, each in {name}")
    tree = contender(1, f"pairs, then pairs of pairs: ceil(log2 n) levels of additions, each in {name}")

    def wording(v: claims.Verdict) -> str:
        # the ratio of the medians, with its spread, is in the chapter's table (:func:`order_count`)
        c = order_count(v)
        first, second = (("tree", "serial"), ("serial", "tree"))[v.winner == "serial order"]
        fewer, more = (c.less, c.more) if first == "tree" else (c.more, c.less)
        head = f"summing {c.n:,} values in {c.name}, the {first} order errs less than the {second} one on "
        if fewer == c.seeds:
            return head + f"all {c.seeds} seeds"
        return head + f"{fewer} of {c.seeds} seeds" + (f", as much on {c.same}" if c.same else "") \
            + (f", more on {more}" if more else "")

    def headline(v: claims.Verdict) -> str:
        c = order_count(v)
        return f"{c.name}, {c.n:,} values: the tree order errs less on {c.less} of {c.seeds} seeds"

    return claims.Claim(key, f"Which order sums {n:,} uniform values in [0, 1) in {name} more accurately, "
                             f"the serial or the tree?", (serial, tree), metric="|error| / exact sum",
                        seeds=seeds, shared=shared, wording=wording, headline=headline,
                        chapter="01_reduce_and_primitives",
                        source="order_errors: numpy.random.default_rng(seed), the exact rational sum (exact_sum)")


def _register_order_claim(key: str, dtype: str, n: int):
    def build(small: bool = False) -> claims.Claim:
        """The serial against the tree order of a float sum: which errs less (seeded uniform values)."""
        return _order_claim(key, dtype, n, small)
    build.__name__ = build.__qualname__ = key.split(".", 1)[1] + "_claim"
    return claims.register(key)(build)


for _key, (_dtype, _n) in ORDER_CLAIMS.items():
    _register_order_claim(_key, _dtype, _n)


def order_trend(counts: Sequence[OrderCount]) -> str:
    """What the accuracy claims show over n, in words chosen by the counts: does the tree's lead grow with n?

    ``counts`` are :func:`order_count` s of the claims of one or more formats, each over several n. The median
    lead is called larger at the largest n only where, in every format, its smallest value over the blocks of
    seeds lies above the largest of the smallest n's.
    """
    by_name: dict[str, list[OrderCount]] = {}
    for c in counts:
        by_name.setdefault(c.name, []).append(c)
    rows = [sorted(cs, key=lambda c: c.n) for cs in by_name.values()]
    smallest, largest = min(c.n for c in counts), max(c.n for c in counts)
    if all(c.less == c.seeds for c in counts):
        return "the tree order errs less on every seed at every n"
    if not all(a.less < b.less for cs in rows for a, b in zip(cs, cs[1:])):
        return "the tree order does not err less more often as n grows"
    text = "the more values, the more often the tree order errs less"
    if all(cs[-1].ratio_low > cs[0].ratio_high for cs in rows):
        text += f", and its median lead is larger at {largest:,} values than at {smallest:,}"
    if all(4 * c.same >= c.seeds for c in counts if c.n == smallest):
        text += f"; at {smallest:,} values the two orders often land equally far from the exact sum"
    return text


def order_takeaway(counts: Sequence[OrderCount]) -> str:
    """The accuracy claims in one clause for a takeaway, chosen by the counts: how often the tree order errs less
    at the largest n, and whether less often at fewer values.
    """
    largest = max(c.n for c in counts)
    top = [c for c in counts if c.n == largest]
    if all(c.less == c.seeds for c in top):
        text = f"errs less on every seed at {largest:,} values"
    elif all(2 * c.less > c.seeds for c in top):
        text = f"errs less on most seeds at {largest:,} values, not on all"
    else:
        text = f"errs less on no more than half the seeds at {largest:,} values"
    by_name: dict[str, list[OrderCount]] = {}
    for c in counts:
        by_name.setdefault(c.name, []).append(c)
    rows = [sorted(cs, key=lambda c: c.n) for cs in by_name.values()]
    if len(rows[0]) > 1 and all(a.less < b.less for cs in rows for a, b in zip(cs, cs[1:])):
        text += ", and less often the fewer the values"
    return text


# --- chapter 1: the eight primitives -----------------------------------------------------------

class PrimitiveRun(NamedTuple):
    """Every rank's buffer before a primitive (``None``: the rank passes nothing) and after it."""

    inputs: list
    outputs: list


def primitive_run(name: str, n: int) -> PrimitiveRun:
    """Run primitive ``name`` (one of :data:`PRIMITIVES`) on ``n`` ranks (1 to 8) holding :func:`digit_inputs`.

    Rooted primitives use root 0. Broadcast and scatter start from rank 0's
    ``n`` chunks; gather and all-gather from one chunk per rank; the others
    from ``n`` chunks per rank. Outputs are what each rank's receive buffer
    holds after the call, as flat float arrays (NaN where it was left
    unwritten), or ``None`` for a rank that receives nothing (the non-roots
    of reduce and gather; MPI leaves their send buffers as they were).
    Broadcast's one buffer is both.

    >>> run = primitive_run("all_reduce", 3)
    >>> run.outputs[2].tolist()          # chunk c summed over three ranks: (c + 1) * 111
    [111.0, 222.0, 333.0]
    >>> primitive_run("gather", 3).outputs[0].tolist(), primitive_run("gather", 3).outputs[1]
    ([1.0, 10.0, 100.0], None)
    """
    if name not in PRIMITIVES:
        raise ValueError(f"name must be one of {', '.join(PRIMITIVES)}; got {name!r}")
    full = digit_inputs(n)                       # n chunks per rank
    single = [a[:1] for a in full]               # one chunk per rank
    if name == "broadcast":
        inputs = [full[0]] + [None] * (n - 1)
        out, _ = collectives.broadcast([full[0]] + [np.full(n, np.nan) for _ in range(n - 1)], root=0)
    elif name == "reduce":
        inputs = full
        out, _ = collectives.reduce(full, op="sum", root=0)
    elif name == "all_reduce":
        inputs = full
        out, _ = collectives.allreduce(full, algorithm="ring")
    elif name == "gather":
        inputs = single
        out, _ = collectives.gather(single, root=0)
    elif name == "all_gather":
        inputs = single
        out, _ = collectives.all_gather(single)
    elif name == "scatter":
        inputs = [full[0]] + [None] * (n - 1)
        out, _ = collectives.scatter([full[0]] + [np.full(n, np.nan) for _ in range(n - 1)], root=0)
    elif name == "reduce_scatter":
        inputs = full
        out, _ = collectives.reduce_scatter(full)
    else:  # all_to_all
        inputs = full
        out, _ = collectives.all_to_all(full)
    outputs = [None if o is None else np.asarray(o, dtype=float).ravel() for o in out]
    if name in ("reduce", "gather"):             # only the root has a receive buffer
        outputs = [o if r == 0 else None for r, o in enumerate(outputs)]
    return PrimitiveRun(inputs, outputs)


def primitive_runs(n: int = 4, names: Sequence[str] = PRIMITIVES) -> dict[str, PrimitiveRun]:
    """:func:`primitive_run` for each of ``names`` on ``n`` ranks (2 to 6), in order.

    >>> list(primitive_runs(2, ["gather", "scatter"]))
    ['gather', 'scatter']
    """
    n = check_count("n", n, minimum=2, maximum=6)
    return {name: primitive_run(name, n) for name in names}


def buffer_runs(ns: Sequence[int] = (2, 4, 8), count: int = 1) -> list[tuple[compare.BufferSizes, compare.BufferSizes]]:
    """For each ``n``: the buffer sizes of all-gather and of all-to-all, measured by running them.

    Each rank contributes ``count`` elements (MPI's ``sendcount``); see
    :func:`commlib.collectives.compare.buffer_sizes`.

    >>> [(ag.send, ag.recv, a2a.send, a2a.recv) for ag, a2a in buffer_runs([4], count=2)]
    [(2, 8, 8, 8)]
    """
    return [(compare.buffer_sizes("all_gather", n, count), compare.buffer_sizes("all_to_all", n, count))
            for n in ns]


@dataclass(frozen=True)
class HotspotCounts:
    """Bytes through the busiest rank's link (sent plus received), naive master against ring, per ``n``.

    ``naive[i]`` is the master's link with ``ns[i]`` ranks, ``ring[i]`` the
    busiest ring rank's; each rank held ``elements`` float64 values
    (``nbytes`` bytes).
    """

    ns: tuple[int, ...]
    elements: int
    naive: tuple[int, ...]
    ring: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        """Bytes each rank contributes, M."""
        return self.elements * 8


def hotspot_counts(ns: Sequence[int] = (2, 3, 4, 6, 8, 12, 16), elements: int = 5040) -> HotspotCounts:
    """Count, from the traces, the bytes through the master's link (naive) and the busiest ring rank's link.

    Runs :func:`commlib.collectives.simulate.allreduce` (``"naive"`` and ``"ring"``)
    on ``elements`` float64 values per rank for each ``n`` in ``ns`` (each at
    least 2). The closed forms are 2(n-1)M for the master and 4(n-1)M/n for
    any ring rank; choose ``elements`` a multiple of every n (5040 is): with
    uneven chunks the busiest ring rank carries a little more.

    >>> c = hotspot_counts((2, 4), elements=8)      # M = 64 bytes
    >>> c.naive, c.ring                             # 2(n-1)M and 4(n-1)M/n
    ((128, 384), (128, 192))
    """
    ns = tuple(check_count("n", n, minimum=2) for n in ns)
    elements = check_count("elements", elements, minimum=1)
    naive, ring = [], []
    for n in ns:
        data = [np.ones(elements) for _ in range(n)]   # the values do not change what travels
        _, tn = collectives.allreduce(data, algorithm="naive")
        _, tr = collectives.allreduce(data, algorithm="ring")
        naive.append(compare.master_link_bytes(tn, 0))
        ring.append(int((tr.bytes_sent + tr.bytes_received).max()))
    return HotspotCounts(ns, elements, tuple(naive), tuple(ring))


# --- chapter 1: claims (alpha-beta times on one switched network, one full-duplex port per rank) ----------

#: The shared settings of chapter 1's comparisons: the primitive calculator's defaults.
CH01_SHARED = {"n": 8, "link": "eth_25g", "nbytes": 64 * 2**20}

def _chunk_grid(best_chunks, nbytes: float, n: int, link: str, most: int) -> tuple[int, ...]:
    """Powers of two from 1 to ``most`` and the exact optimum ``best_chunks`` gives on ``link``: a pipelined
    schedule's chunk counts to tune over (its time is convex in the count, so the optimum is its best)."""
    item = hardware.link(link)
    powers = {2**k for k in range(most.bit_length()) if 2**k <= most}
    return tuple(sorted(powers | {best_chunks(nbytes, n, item.bandwidth, item.latency, most=most)}))


def _pipelined_seconds(record, nbytes: float, n: int, link: str, chunks: int) -> float:
    """Seconds of a pipelined schedule's record cut into ``chunks`` pieces on ``link``."""
    item = hardware.link(link)
    return record.cost(nbytes, n, chunks=chunks).time(item.bandwidth, item.latency)


def master_chunk_grid(nbytes: float, n: int, link: str, most: int = 1024) -> tuple[int, ...]:
    """The chunk counts the pipelined master is tuned over: powers of two from 1 (unpipelined) to ``most``, and
    the exact optimum of its convex time (:func:`commlib.collectives.algorithms.naive.best_chunks`).

    >>> master_chunk_grid(64 * 2**20, 8, "eth_25g")
    (1, 2, 4, 8, 16, 32, 46, 64, 128, 256, 512, 1024)
    """
    from ..collectives.algorithms import naive

    return _chunk_grid(naive.best_chunks, nbytes, n, link, most)


def master_seconds(nbytes: float, n: int, link: str, chunks: int) -> float:
    """Seconds of the all-reduce through a master cut into ``chunks`` pieces, pipelined (q = 1: unpipelined).

    >>> round(1e3 * master_seconds(64 * 2**20, 8, "eth_25g", 1), 1)
    300.8
    """
    from ..collectives.algorithms import naive

    return _pipelined_seconds(naive.PIPELINED, nbytes, n, link, chunks)


def chain_chunk_grid(nbytes: float, n: int, link: str, most: int = 1024) -> tuple[int, ...]:
    """The chunk counts the pipelined chain reduce is tuned over: powers of two from 1 (the unpipelined chain)
    to ``most``, and the exact optimum of its convex time (:func:`commlib.collectives.algorithms.chain.best_chunks`).

    >>> chain_chunk_grid(64 * 2**20, 8, "eth_25g")
    (1, 2, 4, 8, 16, 32, 64, 114, 128, 256, 512, 1024)
    """
    from ..collectives.algorithms import chain

    return _chunk_grid(chain.best_chunks, nbytes, n, link, most)


def chain_seconds(nbytes: float, n: int, link: str, chunks: int) -> float:
    """Seconds of the chain reduce cut into ``chunks`` pieces, pipelined (q = 1: the unpipelined serial chain).

    >>> round(1e3 * chain_seconds(64 * 2**20, 8, "eth_25g", 114), 1)
    23.8
    """
    from ..collectives.algorithms import chain

    return _pipelined_seconds(chain.PIPELINED, nbytes, n, link, chunks)


def collective_seconds(op: str, algorithm: str, nbytes: float, n: int, link: str) -> float:
    """Seconds of one collective under alpha-beta on ``link`` (:func:`commlib.cost.collective_time`)."""
    from .. import cost

    item = hardware.link(link)
    return cost.collective_time(op, nbytes, n, item.bandwidth, item.latency, algorithm)


@claims.register("ch01.master_vs_ring")
def master_vs_ring_claim(small: bool = False) -> claims.Claim:
    """The all-reduce through a master at its best (pipelined, its best chunk count) against the ring."""
    shared = dict(CH01_SHARED)
    master = claims.Contender(
        "master", lambda s, seed: 1e3 * master_seconds(s["nbytes"], s["n"], s["link"], s["chunks"]),
        {"chunks": master_chunk_grid(shared["nbytes"], shared["n"], shared["link"])},
        uses="one full-duplex port per rank; the master sends chunk j's sum while it takes in chunk j + 1, "
             "chunk count q tuned over powers of two and the exact optimum of its convex time (q = 1: unpipelined)")
    ring = claims.Contender("ring", lambda s, seed: 1e3 * collective_seconds("all_reduce", "ring", s["nbytes"], s["n"],
                                                                             s["link"]),
                            uses="one full-duplex port per rank")

    def wording(v: claims.Verdict) -> str:
        m, r = v.best["master"], v.best["ring"]
        q = m.config["chunks"]
        master, ring = format_time(m.mean / 1e3, significant=3), format_time(r.mean / 1e3, significant=3)
        if v.winner == "ring":
            return (f"even pipelined at its best (q = {q} chunks) the master takes {m.mean / r.mean:.1f} times "
                    f"as long as the ring")
        return f"pipelined at its best (q = {q} chunks) the master takes {master}, less than the ring's {ring}"

    return claims.Claim(
        "ch01.master_vs_ring", "Does the ring all-reduce 64 MiB on 8 ranks faster than a master at its best?",
        (master, ring), metric="ms", seeds=(0,), shared=shared, wording=wording,
        chapter="01_reduce_and_primitives", source="naive.PIPELINED and cost.collective_time (alpha-beta) on the "
                                                   "eth_25g preset; deterministic")


#: The pipelined schedules :func:`pipeline_sends` runs: the chain reduce and the master all-reduce.
PIPELINES: tuple[str, ...] = ("chain", "master")


class PipelineSend(NamedTuple):
    """One message of a pipelined schedule: at ``step`` (from 0), rank ``src`` sends chunk ``chunk`` (from 0) to ``dst``."""

    step: int
    src: int
    dst: int
    chunk: int


def pipeline_sends(schedule: str, n: int = 4, chunks: int = 3) -> list[PipelineSend]:
    """Run the pipelined ``schedule`` ("chain" or "master") on ``n`` ranks (2 to 8) cut into ``chunks`` (1 to 8)
    pieces, and read who sends which chunk to whom at each step from its trace.

    The schedules are the records the chapter's costs and tests use
    (:data:`commlib.collectives.algorithms.chain.PIPELINED`, :data:`commlib.collectives.algorithms.naive.PIPELINED`),
    run on real buffers by :class:`commlib.collectives.engine.StepEngine`.

    >>> sends = pipeline_sends("chain", 4, 3)
    >>> max(s.step for s in sends) + 1, [(s.src, s.dst, s.chunk) for s in sends if s.step == 2]
    (5, [(3, 2, 2), (2, 1, 1), (1, 0, 0)])
    """
    from ..collectives.algorithms import chain, naive
    from ..collectives.engine import ColumnTrace, StepEngine

    records = {"chain": chain.PIPELINED, "master": naive.PIPELINED}
    if schedule not in records:
        raise ValueError(f"schedule must be one of {', '.join(PIPELINES)}; got {schedule!r}")
    n = check_count("n", n, minimum=2, maximum=8)
    q = check_count("chunks", chunks, minimum=1, maximum=8)
    record = records[schedule]
    length = q * n
    trace = ColumnTrace(n, f"{record.collective}:{record.name}")
    engine = StepEngine(trace, [np.arange(length, dtype=np.float64) for _ in range(n)], np.add,
                        multi_port=record.multi_port)
    record.schedule(engine, n, length, **record.checked(n, chunks=q))
    return [PipelineSend(m.step, m.src, m.dst, int(m.chunk)) for m in trace.messages]


class MasterRow(NamedTuple):
    """One all-reduce of the master comparison: its name, chunk count q (None: not cut) and seconds."""

    name: str
    chunks: int | None
    seconds: float


def master_comparison(nbytes: float, n: int, link: str, best_chunks: int) -> list[MasterRow]:
    """The master one message at a time, the master pipelined over ``best_chunks`` chunks, and the ring.

    >>> [(r.name, r.chunks, round(1e3 * r.seconds, 1)) for r in master_comparison(64 * 2**20, 8, "eth_25g", 46)]
    [('master, one message at a time', 1, 300.8), ('master, pipelined', 46, 156.9), ('ring', None, 37.7)]
    """
    return [MasterRow("master, one message at a time", 1, master_seconds(nbytes, n, link, 1)),
            MasterRow("master, pipelined", best_chunks, master_seconds(nbytes, n, link, best_chunks)),
            MasterRow("ring", None, collective_seconds("all_reduce", "ring", nbytes, n, link))]


#: The reduce comparison's two vectors (bytes): a short one, where start-ups dominate, and a long one.
REDUCE_SHORT, REDUCE_LONG = 2**10, 64 * 2**20

#: The ranks the reduce comparison runs on: powers of two (reduce-scatter + gather is costed there only),
#: from the two-rank case, where both reduces move M, to 64.
REDUCE_NS = (2, 4, 8, 16, 64)


class ReduceRow(NamedTuple):
    """The unpipelined binomial tree against reduce-scatter + gather on ``n`` ranks (seconds, bytes), and the
    chain pipelined at its best chunk count on the long vector.

    ``crossover`` is the size above which reduce-scatter + gather is faster than the tree; NaN where the tree
    is faster at every size (n = 2: both move M, and the tree takes one step fewer). ``chain_long`` is the
    pipelined chain's time on the long vector, at its best chunk count ``chain_chunks``.
    """

    n: int
    tree_short: float
    split_short: float
    tree_long: float
    split_long: float
    crossover: float
    chain_long: float
    chain_chunks: int


def _size_text(nbytes: float) -> str:
    return f"{nbytes / 2**20:g} MiB" if nbytes >= 2**20 else f"{nbytes / 2**10:g} KiB"


def reduce_comparison(ns: Sequence[int] = REDUCE_NS, link: str = "eth_25g", short: float = REDUCE_SHORT,
                      long: float = REDUCE_LONG) -> list[ReduceRow]:
    """Both reduces of a short and a long vector on each ``n`` (a power of two), and where they cross.

    Alpha-beta times on ``link`` (:func:`collective_seconds`); the crossover is
    :func:`commlib.collectives.compare.crossover_sizes` over 1 B to 1 TB. The pipelined chain runs the long
    vector at its best chunk count (:func:`commlib.collectives.algorithms.chain.best_chunks`).

    >>> r = reduce_comparison((2, 8))
    >>> [round(1e3 * x.tree_long, 2) for x in r], [round(1e3 * x.split_long, 2) for x in r]
    ([21.48, 64.45], [21.49, 37.64])
    >>> [(round(1e3 * x.chain_long, 2), x.chain_chunks) for x in r]   # 2 ranks: one message of M; 8: 6 + 114 chunks
    [(21.48, 1), (23.81, 114)]
    >>> math.isnan(r[0].crossover), round(r[1].crossover / 1e3, 1)   # 3 alpha / ((3 - 7/4) beta) = 2.4 alpha B
    (True, 75.0)
    """
    from ..collectives.algorithms import chain

    item = hardware.link(link)
    rows = []
    for n in ns:
        n = check_count("n", n, minimum=2)

        def tree(m, n=n):
            return collective_seconds("reduce", "tree", m, n, link)

        def split(m, n=n):
            return collective_seconds("reduce", "reduce_scatter_gather", m, n, link)

        found = compare.crossover_sizes(tree, split, 1.0, 1e12)
        q = chain.best_chunks(long, n, item.bandwidth, item.latency)
        rows.append(ReduceRow(n, tree(short), split(short), tree(long), split(long), found[0] if found else float("nan"),
                              chain_seconds(long, n, link, q), q))
    return rows


#: The ranks over which :func:`chain_leads` follows the chain's lead: the powers of two from 4 to 1,024, far
#: enough that the lead, which peaks on a few dozen ranks, passes to reduce-scatter + gather.
LEAD_NS = tuple(2**k for k in range(2, 11))


def chain_leads(ns: Sequence[int] = LEAD_NS, nbytes: float = REDUCE_LONG, link: str = "eth_25g") -> dict[int, float]:
    r"""How many times faster the pipelined chain, at its best whole chunk count, reduces ``nbytes`` than
    reduce-scatter + gather, on each ``n`` of ``ns`` (powers of two above 2) over ``link``.

    The lead first grows with n, then shrinks: reduce-scatter + gather's bytes, :math:`2\frac{n-1}{n}M`, approach
    :math:`2M` and stop growing, while the chain's fill :math:`(n-2)\alpha` and its balancing term
    :math:`2\sqrt{(n-2)\alpha M\beta}` keep growing with n, until the lead falls below 1.

    >>> {n: round(x, 2) for n, x in chain_leads().items()}
    {4: 1.41, 8: 1.58, 16: 1.61, 32: 1.55, 64: 1.44, 128: 1.29, 256: 1.11, 512: 0.91, 1024: 0.7}
    """
    from ..collectives.algorithms import chain

    item = hardware.link(link)
    leads = {}
    for n in ns:
        n = check_count("n", n, minimum=3)
        q = chain.best_chunks(nbytes, n, item.bandwidth, item.latency)
        leads[n] = collective_seconds("reduce", "reduce_scatter_gather", nbytes, n, link) / chain_seconds(nbytes, n, link, q)
    return leads


def chain_lead_span(leads: Mapping[int, float]) -> tuple[int | None, int | None]:
    """(the largest n up to which the chain leads on every n of ``leads``, the first n where it does not), from
    :func:`chain_leads`; None where the chain leads on no n, or on every n.

    >>> chain_lead_span(chain_leads())
    (256, 512)
    >>> chain_lead_span({4: 1.4, 8: 1.5}), chain_lead_span({4: 0.9, 8: 1.2})
    ((8, None), (None, 4))
    """
    if not leads:
        raise ValueError("leads: need the lead on one rank count or more, got none")
    last = None
    for n in sorted(leads):
        if leads[n] <= 1:
            return last, n
        last = n
    return last, None


def chain_lead_words(leads: Mapping[int, float]) -> str:
    r"""What :func:`chain_leads` show over n, in words chosen by the leads (markdown): where the lead peaks, and
    from which n, if any, reduce-scatter + gather is the faster.

    >>> print(chain_lead_words(chain_leads())[:95])
    More ranks do not keep helping the chain, though: among the powers of two up to 1,024, its lead
    >>> print(chain_lead_words({4: 1.4, 8: 1.5}))
    Over 4 to 8 ranks the chain's lead grows with every doubling of the ranks.
    """
    if len(leads) < 2:
        raise ValueError(f"leads: need the lead on two rank counts or more, got {len(leads)}")
    ns = sorted(leads)
    pairs = list(zip(ns, ns[1:]))
    step = ("every doubling of the ranks" if all(b == 2 * a for a, b in pairs)
            else "every rank count added")
    among = "the powers of two" if all(n & (n - 1) == 0 for n in ns) else "the rank counts run"
    if all(leads[a] < leads[b] for a, b in pairs):
        return f"Over {ns[0]:,} to {ns[-1]:,} ranks the chain's lead grows with {step}."
    if all(leads[a] > leads[b] for a, b in pairs):
        return f"Over {ns[0]:,} to {ns[-1]:,} ranks the chain's lead shrinks with {step}."
    peak = max(ns, key=lambda n: leads[n])
    if peak == ns[-1]:
        return (f"Over {ns[0]:,} to {ns[-1]:,} ranks the chain's lead is largest on {peak:,} ranks, though it does "
                f"not grow with {step}.")
    after = [n for n in ns if n >= peak]
    shrinks = " and shrinks beyond" if all(leads[a] > leads[b] for a, b in zip(after, after[1:])) else ""
    lost = [n for n in ns if leads[n] < 1]
    if not lost:
        end = f"to {leads[ns[-1]]:.2f} times on {ns[-1]:,}"
    elif lost == [n for n in ns if n >= lost[0]] and lost[0] > ns[0]:
        held = max(n for n in ns if n < lost[0])
        end = f"but holds up to {held:,} ranks; from {lost[0]:,}, reduce-scatter + gather is the faster"
    else:
        end = "and reduce-scatter + gather is the faster on " + ", ".join(f"{n:,}" for n in lost) + " ranks"
    return (f"More ranks do not keep helping the chain, though: among {among} up to {ns[-1]:,}, "
            f"its lead peaks on {peak:,} ranks{shrinks}, {end}. "
            "Reduce-scatter + gather's "
            r"bytes approach twice the vector but never pass it, while the chain's fill start-ups, $(n-2)\alpha$, "
            r"and its balancing term, $2\sqrt{(n-2)\alpha M\beta}$, keep growing with $n$.")


def reduce_margin_words(v: claims.Verdict) -> str:
    """The winner of a reduce claim (:data:`REDUCE_CLAIMS`) and its lead over the runner-up, for a table's entry:
    "x.x times" where the lead is 10 % or more, else the time it saves.

    >>> reduce_margin_words(claims.verdict("ch01.reduce_tree_long_64_fast"))
    'reduce-scatter + gather, by 240 µs'
    >>> reduce_margin_words(claims.verdict("ch01.reduce_tree_long_64"))
    'pipelined chain, 1.4 times faster'
    """
    x, y = v.best[v.winner].mean, v.best[v.runner_up].mean
    if y / x >= 1.1:
        return f"{v.winner}, {y / x:.1f} times faster"
    return f"{v.winner}, by {format_time((y - x) / 1e3, significant=2)}"


def chain_tie_ratio(n: int) -> float:
    r"""How long a vector the pipelined chain needs to beat reduce-scatter + gather on ``n`` ranks: the ratio
    :math:`\omega = M\beta/((n-2)\alpha)` of the bytes' time to the start-ups that fill its pipeline, above which the
    chain at its best chunk count is the faster of the two (the same on every link).

    At its best q, taken as a real number, the chain takes :math:`(n-2)\alpha + M\beta + 2\sqrt{(n-2)\alpha M\beta}
    = (n-2)\alpha(1+\sqrt\omega)^2`; reduce-scatter + gather takes :math:`a\alpha + kM\beta` with a and k read from
    its cost record (:func:`commlib.cost.collective_terms`: :math:`2\log_2 n` steps, :math:`k = 2(n-1)/n`).
    With :math:`c = a/(n-2)` and :math:`s = \sqrt\omega` they tie where :math:`(k-1)s^2 - 2s + (c-1) = 0`; the larger
    root is returned (on 4 ranks the unpipelined chain also beats it on tiny vectors, where the tree beats both).
    As n grows, k tends to 2 and c to 0, so :math:`\omega` tends to :math:`(1+\sqrt2)^2`.

    >>> [round(chain_tie_ratio(n), 2) for n in (4, 8, 16, 64)]
    [11.66, 7.11, 6.17, 5.81]
    """
    from .. import cost

    n = check_count("n", n, minimum=3)
    terms = cost.collective_terms("reduce", 1.0, n, "reduce_scatter_gather")   # per byte of M
    k, c = terms.bytes, terms.steps / (n - 2)
    if k <= 1 or (k - 1) * (c - 1) > 1:
        raise ValueError(f"n: reduce-scatter + gather and the chain do not tie on {n} ranks")
    s = (1 + math.sqrt(1 - (k - 1) * (c - 1))) / (k - 1)
    return s * s


def chain_tie_ratio_low(n: int) -> float | None:
    r"""The smaller positive root of the tie in :func:`chain_tie_ratio`, or None where it has none.

    With :math:`c = 2\log_2 n/(n-2)` above 1 (only on 4 ranks among powers of two) the quadratic's smaller root
    :math:`s = (1 - \sqrt{1 - (k-1)(c-1)})/(k-1)` is positive, and below :math:`\omega = s^2` the chain beats
    reduce-scatter + gather too. There the unpipelined tree beats both: on 4 ranks it takes
    :math:`2\alpha(1 + 2\omega)`, less than the chain's :math:`2\alpha(1 + \sqrt\omega)^2` while :math:`\omega < 4`.

    >>> round(chain_tie_ratio_low(4), 2), chain_tie_ratio_low(8)
    (0.34, None)
    """
    from .. import cost

    n = check_count("n", n, minimum=3)
    terms = cost.collective_terms("reduce", 1.0, n, "reduce_scatter_gather")   # per byte of M
    k, c = terms.bytes, terms.steps / (n - 2)
    if k <= 1 or c <= 1 or (k - 1) * (c - 1) > 1:
        return None
    s = (1 - math.sqrt(1 - (k - 1) * (c - 1))) / (k - 1)
    return s * s


def chain_tie_ratio_low_whole(n: int) -> float | None:
    r"""The bound of :func:`chain_tie_ratio_low` with a whole number of chunks, or None where it has none.

    The real-q root puts the best q near :math:`2\sqrt\omega`, about 1.2 on 4 ranks; with whole chunks the chain
    on a tiny vector is one message, q = 1, :math:`(n-1)(\alpha + M\beta)`, the best whole q while
    :math:`\omega < 2/(n-2)^2`. Against reduce-scatter + gather's :math:`a\alpha + kM\beta` it wins while
    :math:`\omega < (a - (n-1))/((n-1-k)(n-2))`, positive only where :math:`a > n - 1` (on 4 ranks, 1/3).

    >>> chain_tie_ratio_low_whole(4), chain_tie_ratio_low_whole(8)
    (0.3333333333333333, None)
    """
    from .. import cost

    n = check_count("n", n, minimum=3)
    terms = cost.collective_terms("reduce", 1.0, n, "reduce_scatter_gather")   # per byte of M
    a, k = terms.steps, terms.bytes
    if a <= n - 1 or k >= n - 1:
        return None
    bound = (a - (n - 1)) / ((n - 1 - k) * (n - 2))
    return bound if bound < 2 / (n - 2) ** 2 else None


def chain_fill_ratio(nbytes: float, n: int, link: str) -> float:
    r"""The ratio :math:`M\beta/((n-2)\alpha)` of ``nbytes`` on ``n`` ranks over ``link``: how many times the bytes'
    time outweighs the start-ups that fill the chain's pipeline (compare :func:`chain_tie_ratio`).

    >>> round(chain_fill_ratio(64 * 2**20, 64, "eth_25g"), 1), round(chain_fill_ratio(64 * 2**20, 64, "eth_400g"), 2)
    (34.6, 4.33)
    """
    item = hardware.link(link)
    n = check_count("n", n, minimum=3)
    return nbytes / item.bandwidth / ((n - 2) * item.latency)


def chain_tie_startup(nbytes: float, n: int, link: str) -> float:
    r"""The start-up (seconds) below which the pipelined chain beats reduce-scatter + gather on ``nbytes`` over
    ``n`` ranks at ``link``'s bandwidth: where the fill ratio :func:`chain_fill_ratio` reaches the tie
    :func:`chain_tie_ratio`, :math:`\alpha = M\beta/((n-2)\,\omega_\text{tie})`. Only the link's bandwidth is used.

    >>> round(1e6 * chain_tie_startup(64 * 2**20, 64, "eth_400g"), 2)   # 1.34 ms / (62 x 5.81)
    3.73
    """
    item = hardware.link(link)
    n = check_count("n", n, minimum=3)
    if nbytes <= 0:
        raise ValueError(f"nbytes: must be positive, got {nbytes}")
    return nbytes / item.bandwidth / ((n - 2) * chain_tie_ratio(n))


def _reduce_claim(key: str, nbytes: float, n: int, link: str = CH01_SHARED["link"]) -> claims.Claim:
    shared = {**CH01_SHARED, "nbytes": nbytes, "n": n, "link": link}
    from .. import hardware
    over = "" if link == CH01_SHARED["link"] else f" over {hardware.link(link).name}"

    def contender(name: str, algorithm: str, uses: str) -> claims.Contender:
        return claims.Contender(name, lambda s, seed: 1e3 * collective_seconds("reduce", algorithm, s["nbytes"], s["n"],
                                                                               s["link"]), uses=uses)

    tree = contender("binomial tree", "tree", "one full-duplex port per rank; whole vectors, unpipelined, "
                                              "ceil(log2 n) steps")
    split = contender("reduce-scatter + gather", "reduce_scatter_gather",
                      "one full-duplex port per rank; the vector cut into n blocks (Rabenseifner)")
    chain = claims.Contender(
        "pipelined chain", lambda s, seed: 1e3 * chain_seconds(s["nbytes"], s["n"], s["link"], s["chunks"]),
        {"chunks": chain_chunk_grid(nbytes, n, shared["link"])}, limits={"chunks": 1},
        uses="one full-duplex port per rank; the serial chain cut into q chunks, each rank passing chunk j on while "
             "it takes in chunk j + 1, q tuned over powers of two and the exact optimum of its convex time "
             "(q = 1: the unpipelined chain)")
    size = _size_text(nbytes)

    def wording(v: claims.Verdict) -> str:
        q = v.best["pipelined chain"].config["chunks"] if "pipelined chain" in v.best else 1
        names = {"binomial tree": "the unpipelined binomial tree", "reduce-scatter + gather": "reduce-scatter + gather",
                 "pipelined chain": (f"the chain pipelined over its best q = {q} chunks" if q > 1 else
                                     "the chain (unpipelined at its best, q = 1)")}

        def compared(a: str, b: str) -> str:
            x, y = v.best[a].mean, v.best[b].mean
            ratio = y / x
            return (f"{names[a]} is {ratio:.1f} times faster than {names[b]}" if ratio >= 1.1 else
                    f"{names[a]} is faster than {names[b]} by {format_time((y - x) / 1e3, significant=2)}")

        order = sorted(v.best, key=lambda name: v.best[name].mean)
        text = f"at {size} on {n} ranks{over} {compared(order[0], order[1])}"
        if order[0] == "pipelined chain" and not over:   # the chapter's link: the chain beats both reduces
            fast, slow = sorted(("binomial tree", "reduce-scatter + gather"), key=lambda name: v.best[name].mean)
            text += f", and {compared(fast, slow)}"
        return text

    # On two ranks the chain and the tree are the same single message of M: the chain is no third contender.
    if n == 2:
        return claims.Claim(key, f"Which reduce of {size} on {n} ranks{over} is faster, the unpipelined binomial tree (on two "
                                 f"ranks also the chain) or reduce-scatter + gather?", (tree, split), metric="ms",
                            seeds=(0,), shared=shared, wording=wording, chapter="01_reduce_and_primitives",
                            source=f"cost.collective_time (alpha-beta) on the {link} preset; deterministic")
    return claims.Claim(key, f"Which reduce of {size} on {n} ranks{over} is fastest: the unpipelined binomial tree, "
                             f"reduce-scatter + gather, or the chain pipelined at its best chunk count?",
                        (tree, split, chain), metric="ms", seeds=(0,), shared=shared,
                        wording=wording, chapter="01_reduce_and_primitives",
                        source=f"cost.collective_time and chain.PIPELINED (alpha-beta) on the {link} preset; "
                               "deterministic")


#: The reduce claims: key -> (bytes, ranks n, link). Short vectors on 8 and 64 ranks; long ones on 2 (where both
#: reduces move M, the control), 4, 8 and 64, all over the chapter's 25 Gb/s Ethernet; and the long vector on 64
#: ranks over 400 Gb/s Ethernet, the control for the chain's win: on a link with 16 times the bandwidth but only half
#: the start-up the same bytes weigh less against the chain's pipeline fill of (n - 2) start-ups; over 400 Gb/s
#: InfiniBand NDR, as fast but with a 1 µs start-up, they weigh enough again.
REDUCE_CLAIMS: dict[str, tuple[float, int, str]] = {
    "ch01.reduce_tree_short": (REDUCE_SHORT, 8, "eth_25g"),
    "ch01.reduce_tree_short_64": (REDUCE_SHORT, 64, "eth_25g"),
    "ch01.reduce_tree_two_ranks": (REDUCE_LONG, 2, "eth_25g"),
    "ch01.reduce_tree_long_4": (REDUCE_LONG, 4, "eth_25g"),
    "ch01.reduce_tree_long": (REDUCE_LONG, 8, "eth_25g"),
    "ch01.reduce_tree_long_64": (REDUCE_LONG, 64, "eth_25g"),
    "ch01.reduce_tree_long_64_fast": (REDUCE_LONG, 64, "eth_400g"),
    "ch01.reduce_tree_long_64_ib": (REDUCE_LONG, 64, "ib_ndr"),
}


def _register_reduce_claim(key: str, nbytes: float, n: int, link: str):
    def build(small: bool = False) -> claims.Claim:
        """The unpipelined binomial tree against reduce-scatter + gather: closed forms, the same at any size."""
        return _reduce_claim(key, nbytes, n, link)
    build.__name__ = build.__qualname__ = key.split(".", 1)[1] + "_claim"
    return claims.register(key)(build)


for _key, (_bytes, _n, _link) in REDUCE_CLAIMS.items():
    _register_reduce_claim(_key, _bytes, _n, _link)


# --- chapter 2: ring all-reduce, chunk by chunk -------------------------------------------------------

class RingRun(NamedTuple):
    """A recorded ring all-reduce: the inputs, every rank's result, and the trace with its snapshots."""

    data: list[np.ndarray]
    results: list[np.ndarray]
    trace: Trace


def ring_run(n: int = 4) -> RingRun:
    """Ring all-reduce of :func:`digit_inputs` on ``n`` ranks (2 to 8), recorded step by step.

    The trace's snapshots hold every rank's buffer at the start and after
    each of the 2(n-1) steps: n-1 of reduce-scatter, n-1 of all-gather.

    >>> run = ring_run(3)
    >>> run.trace.steps, run.results[0].tolist()
    (4, [111.0, 222.0, 333.0])
    """
    n = check_count("n", n, minimum=2, maximum=8)
    data = digit_inputs(n)
    results, trace = collectives.allreduce(data, algorithm="ring", record=True)
    return RingRun(data, results, trace)


@dataclass(frozen=True)
class TraceFormulaRuns:
    """The ring's trace counts beside the closed forms (:class:`commlib.collectives.compare.FormulaRow` per n), and the link."""

    rows: list[compare.FormulaRow]
    bandwidth: float
    latency: float


def trace_formula_runs(ns: Sequence[int] = (2, 4, 8, 16), elements_per_rank: int = 12,
                       bandwidth: float = 1e9, latency: float = 1e-5) -> TraceFormulaRuns:
    """Run the ring all-reduce for each ``n`` on ``elements_per_rank * n`` values per rank, beside its formula.

    One :func:`commlib.collectives.compare.trace_vs_formula` run per ``n`` (seeded), on a
    link of ``bandwidth`` bytes/s per direction and start-up ``latency`` s.

    >>> runs = trace_formula_runs((4,), elements_per_rank=3)
    >>> r = runs.rows[0]
    >>> r.trace_steps, r.formula_steps, r.trace_bytes_per_rank
    (6, 6, 144)
    """
    elements_per_rank = check_count("elements_per_rank", elements_per_rank, minimum=1)
    rows = []
    for n in ns:
        (row,) = compare.trace_vs_formula([n], elements=elements_per_rank * n, bandwidth=bandwidth, latency=latency)
        rows.append(row)
    return TraceFormulaRuns(rows, float(bandwidth), float(latency))


#: The two algorithms :func:`partner_runs` runs, with the names the figure prints.
PARTNER_ALGORITHMS: dict[str, str] = {
    "recursive_doubling": "recursive doubling",
    "halving_doubling": "halving-doubling",
}


@dataclass(frozen=True)
class PartnerRuns:
    """Traces of the all-reduces of :data:`PARTNER_ALGORITHMS` on ``n`` ranks, each rank holding ``nbytes``."""

    n: int
    nbytes: int
    traces: Mapping[str, Trace]


def partner_runs(n: int = 8) -> PartnerRuns:
    """Run recursive doubling and halving-doubling on ``n`` ranks (a power of two, 2 to 32); keep the traces.

    Each rank holds ``8 n`` float64 zeros (M = 64 n bytes), so halving-doubling's
    halves stay whole numbers of elements. Who talks to whom at each step,
    and how much, is read from the traces' messages.

    >>> runs = partner_runs(8)
    >>> {a: t.steps for a, t in runs.traces.items()}
    {'recursive_doubling': 3, 'halving_doubling': 6}
    """
    n = check_count("n", n, minimum=2, maximum=32)
    if n & (n - 1):
        raise ValueError(f"n must be a power of two (partners at distance 1, 2, 4, ...); got {n}")
    length = 8 * n
    traces = {a: collectives.allreduce([np.zeros(length)] * n, a)[1] for a in PARTNER_ALGORITHMS}
    return PartnerRuns(n, length * 8, traces)


def bruck_run(n: int = 6) -> Trace:
    """Run Bruck's all-reduce on ``n`` ranks (any n from 2 to 32, no fold) and keep its trace.

    Each rank holds ``n`` float64 values, one element a block of M/n, so every
    message's ``chunk`` names the blocks it carries, and its ``phase`` says
    whether the receiver adds them (reduce-scatter) or copies them (all-gather).

    >>> trace = bruck_run(6)
    >>> trace.steps, [m.chunk for m in trace.messages if m.src == 1]   # distances 4, 2, 1, then 1, 2, 4
    (6, [(5, 0), (3, 4), (2,), (1,), (1, 2), (1, 2)])
    """
    n = check_count("n", n, minimum=2, maximum=32)
    return collectives.allreduce([np.full(n, float(r)) for r in range(n)], "bruck", record=True)[1]


# --- chapter 2: the torus both ways against rings on the same links --------------------------------

#: Two edge-disjoint Hamiltonian cycles of the 4 x 4 torus (rank = row * 4 + column): together they
#: use every one of its 32 links once, so four rings on them (each cycle both ways) drive all four
#: links of every rank in both directions, as the torus both ways does.
TORUS4_CYCLES: tuple[tuple[int, ...], ...] = (
    (0, 1, 2, 3, 7, 4, 5, 6, 10, 11, 8, 9, 13, 14, 15, 12),
    (0, 4, 8, 12, 13, 1, 5, 9, 10, 14, 2, 6, 7, 11, 15, 3),
)

#: Ring layouts on the 4 x 4 torus's links: which cycles, and whether each runs both ways.
RING_LAYOUTS: dict[str, tuple[int, bool]] = {
    "one ring, one way": (1, False),
    "one ring, both ways": (1, True),
    "four rings (two edge-disjoint cycles, each both ways)": (2, True),
}

#: The torus schedules: the one-way two-level torus and the four-quarter torus both ways.
TORUS_SCHEDULES: dict[str, str] = {"one way": "torus", "both ways": "torus_both_ways"}


def _torus_graph(link: str):
    from ..network import topology

    return topology.torus2d(4, 4, link)


def rings_on_torus_seconds(nbytes: int, link: str = "eth_100g", layout: str = "four rings (two edge-disjoint cycles, each both ways)"
                           ) -> float:
    """Seconds of ring all-reduces of ``nbytes`` in all on the 4 x 4 torus's own links (:data:`RING_LAYOUTS`).

    The buffer is split evenly over the rings; every ring is a real ring all-reduce
    (:func:`commlib.network.topology.allreduce_trace`) placed along a Hamiltonian cycle of
    :data:`TORUS4_CYCLES` (reversed for the second direction), and all rings' messages of a step are
    mapped onto the torus together (:func:`commlib.network.topology.map_flows`, max-min sharing).

    >>> one = rings_on_torus_seconds(10**8, layout="one ring, one way")
    >>> four = rings_on_torus_seconds(10**8)
    >>> round(one / four, 1)                 # the same 30 start-ups, a quarter of the bytes per link
    3.9
    """
    from ..network import topology

    if layout not in RING_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(RING_LAYOUTS)}, got {layout!r}")
    cycles, both = RING_LAYOUTS[layout]
    orders = [list(c) for c in TORUS4_CYCLES[:cycles]]
    if both:
        orders += [o[::-1] for o in orders]
    g = _torus_graph(link)
    trace = topology.allreduce_trace(16, max(1, nbytes // len(orders)))
    flows = [topology.Flow(m.step, order[m.src], order[m.dst], m.nbytes, m.phase)
             for order in orders for m in trace.messages]
    return topology.map_flows(g, flows).time


def torus_schedule_seconds(nbytes: int, link: str = "eth_100g", schedule: str = "both ways") -> float:
    """Seconds of a torus all-reduce of ``nbytes`` (:data:`TORUS_SCHEDULES`) mapped onto the 4 x 4 torus's links.

    >>> both = torus_schedule_seconds(10**8)
    >>> round(torus_schedule_seconds(10**8, schedule="one way") / both, 2)
    3.95
    """
    from ..network import topology

    if schedule not in TORUS_SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(TORUS_SCHEDULES)}, got {schedule!r}")
    trace = topology.allreduce_trace(16, nbytes, TORUS_SCHEDULES[schedule])
    return topology.map_trace(_torus_graph(link), trace).time


@claims.register("ch02.torus_vs_rings")
def torus_vs_rings_claim(small: bool = False) -> claims.Claim:
    """The torus both ways against rings given the same links (finding: the gain is the links, not the 2-D schedule)."""
    shared = {"nbytes": 10**8, "link": "eth_100g"}
    torus = claims.Contender(
        "torus schedule", lambda s, seed: 1e3 * torus_schedule_seconds(s["nbytes"], s["link"], s["schedule"]),
        {"schedule": tuple(TORUS_SCHEDULES)}, uses="the 4 x 4 torus's 32 full-duplex links; two-level schedule")
    rings = claims.Contender(
        "rings", lambda s, seed: 1e3 * rings_on_torus_seconds(s["nbytes"], s["link"], s["layout"]),
        {"layout": tuple(RING_LAYOUTS)}, uses="the same 32 links; ring all-reduces along Hamiltonian cycles")

    def wording(v: claims.Verdict) -> str:
        t, r = v.best["torus schedule"], v.best["rings"]
        if v.winner == "torus schedule":
            return (f"{r.config['layout']} take {r.mean:.2f} ms, only "
                    f"{100 * (r.mean / t.mean - 1):.1f} % longer than the torus {t.config['schedule']} "
                    f"({t.mean:.2f} ms)")
        return (f"{r.config['layout']} take {r.mean:.2f} ms, "
                f"{100 * (1 - r.mean / t.mean):.1f} % less than the torus {t.config['schedule']} ({t.mean:.2f} ms)")

    return claims.Claim(
        "ch02.torus_vs_rings", "Does the torus both ways beat rings that use the same links?",
        (torus, rings), metric="ms for one all-reduce of 100 MB, mapped onto the links", seeds=(0,),
        shared=shared, wording=wording, chapter="02_ring_allreduce",
        source="map_flows on topology.torus2d(4, 4); deterministic (one seed)")


@claims.register("ch02.tree_vs_ring_128")
def tree_vs_ring_claim(small: bool = False) -> claims.Claim:
    """NCCL's double binary tree against the ring on 128 ranks, for a small and a large message."""
    shared = {"n": 128, "link": "eth_100g", "nbytes": 1e3}

    def seconds(algorithm):
        def run(s, seed):
            item = hardware.link(s["link"])
            return 1e3 * compare.allreduce_seconds(algorithm, s["nbytes"], s["n"], item.bandwidth, item.latency)
        return run

    tree = claims.Contender("double binary tree", seconds("double_binary_tree"),
                            uses="one port per rank; chunk count q at its exact optimum (best_chunks)")
    ring = claims.Contender("ring", seconds("ring"), uses="one port per rank")

    def wording(v: claims.Verdict) -> str:
        a, b = v.best[v.winner].mean, v.best[v.runner_up].mean
        return f"the {v.winner} all-reduces 1 kB {b / a:.1f} times faster than the {v.runner_up}"

    return claims.Claim("ch02.tree_vs_ring_128", "On 128 ranks, which all-reduces 1 kB faster?", (tree, ring),
                        metric="ms (alpha-beta)", seeds=(0,), shared=shared, wording=wording,
                        chapter="02_ring_allreduce", source="compare.allreduce_seconds; deterministic")


def one_port_allreduces(n: int) -> tuple[str, ...]:
    """The all-reduces a switched network of ``n`` ranks runs as they are: one port each, no hosts, valid for ``n``
    (:func:`commlib.collectives.compare.one_port_allreduces`, which chapter 2's figure reads too)."""
    return compare.one_port_allreduces(n)


def _tree_against_the_rest(key: str, n: int, nbytes: float) -> claims.Claim:
    """The double binary tree against the fastest of every other one-port all-reduce, on ``n`` ranks."""
    from ..collectives import algorithms

    shared = {"n": n, "link": "eth_100g", "nbytes": nbytes}

    def seconds(s, algorithm):
        item = hardware.link(s["link"])
        return 1e3 * compare.best_fold_seconds(algorithm, s["nbytes"], s["n"], item.bandwidth, item.latency)

    others = tuple(a for a in one_port_allreduces(n) if a != "double_binary_tree")
    tree = claims.Contender("double binary tree", lambda s, seed: seconds(s, "double_binary_tree"),
                            uses="one port per rank; chunk count q at its exact optimum (best_chunks)")
    rest = claims.Contender("the others", lambda s, seed: seconds(s, s["algorithm"]), {"algorithm": others},
                            uses="one port per rank; the fastest of every other all-reduce that runs on n ranks "
                                 "(pipelined binary tree at its best q, torus on its most square grid, "
                                 "halving-doubling with the fold that swaps halves, Bruck's all-reduce)")
    size = f"{nbytes / 1e6:.0f} MB" if nbytes >= 1e6 else f"{nbytes / 1e3:.0f} kB"

    def wording(v: claims.Verdict) -> str:
        t, o = v.best["double binary tree"], v.best["the others"]
        other = algorithms.label(o.config["algorithm"])
        fold = (" with the fold that swaps halves"
                if n & (n - 1) and algorithms.allreduce_algorithm(o.config["algorithm"]).swap_fold is not None else "")
        if v.winner == "double binary tree":
            return (f"on {n} ranks the double binary tree all-reduces {size} in {t.mean:.3f} ms, "
                    f"{100 * (1 - t.mean / o.mean):.0f} % less than the fastest of the others, the {other}{fold}, at "
                    f"{o.mean:.3f} ms")
        return (f"on {n} ranks the {other}{fold} all-reduces {size} in {o.mean:.3f} ms, "
                f"{100 * (1 - o.mean / t.mean):.0f} % less than the double binary tree, at {t.mean:.3f} ms")

    return claims.Claim(key, f"On {n} ranks, is the double binary tree the fastest all-reduce of {size}?",
                        (tree, rest), metric="ms (alpha-beta)", seeds=(0,), shared=shared, wording=wording,
                        chapter="02_ring_allreduce",
                        source="compare.allreduce_seconds on the eth_100g preset; deterministic")


#: The size of the two tree claims: a few MB, where on 97 ranks, a prime, the tree leads over halving-doubling's
#: textbook fold (whole vectors) but not over its fold that swaps halves, which the claims run
#: (:func:`tree_window_scan` finds where the tree leads at all).
TREE_MEDIUM_BYTES = 5e6

#: The ranks of :func:`tree_window_scan`'s grid: every n from 3 to 129, and a few larger ones.
TREE_SCAN_RANKS = tuple(range(3, 130)) + (192, 384, 768, 1000)


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


class TreeWindow(NamedTuple):
    """Where the double binary tree is the fastest one-port all-reduce, over a grid of n and sizes."""

    ranks: tuple[int, ...]          # the n scanned
    sizes: tuple[float, ...]        # the message sizes scanned (bytes)
    wins: dict                      # n -> the sizes at which the tree is the fastest
    lead: dict                      # n -> the tree's least time over the fastest other's, at those sizes

    @property
    def powers_of_two(self) -> tuple[int, ...]:
        return tuple(n for n in self.ranks if n & (n - 1) == 0)

    @property
    def others(self) -> tuple[int, ...]:
        return tuple(n for n in self.ranks if n & (n - 1))

    @property
    def winning(self) -> tuple[int, ...]:
        return tuple(n for n in self.ranks if self.wins[n])

    @property
    def all_prime_or_twice(self) -> bool:
        """Every n where the tree leads is a prime or twice a prime."""
        return all(_is_prime(n) or (n % 2 == 0 and _is_prime(n // 2)) for n in self.winning)


def tree_window_scan(ranks: Sequence[int] = TREE_SCAN_RANKS, per_decade: int = 4, link: str = "eth_100g") -> TreeWindow:
    """For every n of ``ranks`` and sizes from 100 B to 10 GB (``per_decade`` a decade), whether the double
    binary tree is the fastest of :func:`one_port_allreduces`, each at its best as
    :func:`commlib.collectives.compare.best_fold_seconds` runs them: the trees at their best q, the torus on its most
    square grid, halving-doubling's fold swapping halves, Bruck's all-reduce on any n.
    Cached on disk beside the claims' verdicts (same code, same result).

    >>> w = tree_window_scan((16, 127), per_decade=4)     # Bruck's all-reduce: the ring's bytes in 14 start-ups
    >>> w.wins[16], w.wins[127]
    ([], [])
    """
    import hashlib
    import json

    key = "tree_window-" + hashlib.sha256(f"{tuple(ranks)}-{per_decade}-{link}".encode()).hexdigest()[:16] + ".json"
    path = claims._cache_dir() / key
    if path.exists():
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            return TreeWindow(tuple(d["ranks"]), tuple(d["sizes"]), {int(k): v for k, v in d["wins"].items()},
                              {int(k): v for k, v in d["lead"].items()})
        except (ValueError, KeyError):
            pass
    item = hardware.link(link)
    sizes = tuple(float(m) for m in np.geomspace(1e2, 1e10, 8 * per_decade + 1))
    wins, lead = {}, {}
    for n in ranks:
        algs = one_port_allreduces(n)
        wins[n], best = [], []
        for m in sizes:
            t = {a: compare.best_fold_seconds(a, m, n, item.bandwidth, item.latency) for a in algs}
            tree = t.pop("double_binary_tree")
            if tree < min(t.values()):
                wins[n].append(m)
                best.append(tree / min(t.values()))
        lead[n] = min(best) if best else None
    out = TreeWindow(tuple(ranks), sizes, wins, lead)
    claims._write_once(path, json.dumps({"ranks": out.ranks, "sizes": out.sizes, "wins": out.wins,
                                         "lead": out.lead}).encode())
    return out


@claims.register("ch02.tree_non_power_of_two")
def tree_non_power_of_two_claim(small: bool = False) -> claims.Claim:
    """On 97 ranks (a prime: no square torus, halving-doubling folds, swapping halves) the double binary tree
    against the rest."""
    return _tree_against_the_rest("ch02.tree_non_power_of_two", 97, TREE_MEDIUM_BYTES)


@claims.register("ch02.tree_power_of_two")
def tree_power_of_two_claim(small: bool = False) -> claims.Claim:
    """The control: on 128 ranks, a power of two, halving-doubling beats the tree at the same size."""
    return _tree_against_the_rest("ch02.tree_power_of_two", 128, TREE_MEDIUM_BYTES)


#: The hierarchical claims' networks: the chapter's slow one (25 Gb/s Ethernet beside NVLink 2.0), a fast one
#: (InfiniBand NDR beside NVLink 4.0, a host like 2022's DGX H100), and the book's 2026 host, a DGX B200 (the same
#: 400 Gb/s cards beside NVLink 5), each with one card per GPU.
HIER_NETWORKS = {"slow": ("nvlink2", "eth_25g"), "fast": ("nvlink4", "ib_ndr"), "b200": ("nvlink5", "ib_ndr")}

#: The hierarchical all-reduce's chunk counts q: 1 is its phases in series, more pipeline its NVLink phases with its
#: network phase (:func:`commlib.collectives.algorithms.hierarchical.pipelined_hierarchical_allreduce_time`).
HIER_CHUNKS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def hierarchical_ms(model: str, dtype: str, n: int, hosts: int, intra: str, inter: str, cards: int | None,
                    chunks: int = 1) -> float:
    """Milliseconds for the hierarchical all-reduce of ``model``'s gradient on these link presets: its phases in
    series (``chunks`` = 1, what :func:`commlib.collectives.compare.cluster_allreduce` gives) or pipelined over
    ``chunks`` chunks.

    >>> round(hierarchical_ms("resnet50", "fp16", 16, 2, "nvlink4", "ib_ndr", 8), 3)
    0.343
    """
    from ..collectives.algorithms.hierarchical import pipelined_hierarchical_allreduce_time

    a, b = hardware.link(intra), hardware.link(inter)
    return 1e3 * pipelined_hierarchical_allreduce_time(hardware.gradient_bytes(model, dtype), hosts, n // hosts,
                                                       a.bandwidth, b.bandwidth, a.latency, b.latency,
                                                       nics_per_host=cards, chunks=chunks)


def hierarchical_form(chunks: int) -> str:
    """The hierarchical all-reduce's form at ``chunks`` q, in words.

    >>> hierarchical_form(1), hierarchical_form(16)
    ('with its phases in series', 'pipelined over 16 chunks')
    """
    return "with its phases in series" if chunks == 1 else f"pipelined over {chunks} chunks"


def hier_thresholds(network: str, hosts: int = 2, per_host: int = 8) -> tuple[float, float]:
    """``(in series, pipelined)``: the link inside a host (bytes/s) above which the hierarchical all-reduce beats the
    multi-rail ring on one card a GPU by bytes, beside ``network``'s cards (:data:`HIER_NETWORKS`), as
    :func:`commlib.collectives.algorithms.hierarchical.pays_threshold` gives them.

    >>> [round(x / 1e9, 1) for x in hier_thresholds("fast")]
    [800.0, 373.3]
    """
    from ..collectives.algorithms.hierarchical import pays_threshold

    card = hardware.link(HIER_NETWORKS[network][1]).bandwidth
    return tuple(pays_threshold(hosts, per_host, per_host, card, pipelined=p) for p in (False, True))


def hier_tie_intra(network: str, model: str = "gpt2_xl", dtype: str = "bf16", n: int = 16, hosts: int = 2,
                   chunks: tuple[int, ...] = HIER_CHUNKS) -> float:
    """The rate of the link inside a host (bytes/s) at which the hierarchical all-reduce at its best q of ``chunks``
    (all of :data:`HIER_CHUNKS`; ``(1,)`` for its phases in series) ties the multi-rail ring on one card a GPU,
    beside ``network``'s cards and start-ups (:data:`HIER_NETWORKS`): bisection on that rate, everything else as in
    :func:`_hier_against_multi_rail`.

    >>> round(hier_tie_intra("fast") / 1e9), round(hier_tie_intra("b200", chunks=(1,)) / 1e9)
    (379, 798)
    """
    from ..collectives.algorithms import multi_rail_ring
    from ..collectives.algorithms.hierarchical import pipelined_hierarchical_allreduce_time

    intra, inter = (hardware.link(k) for k in HIER_NETWORKS[network])
    g, m = n // hosts, hardware.gradient_bytes(model, dtype)

    def gap(rate: float) -> float:
        ring = multi_rail_ring.seconds(m, n, rate, intra.latency, 0.0, hosts=hosts, inter_bandwidth=inter.bandwidth,
                                       inter_latency=inter.latency, nics_per_host=g)
        hier = min(pipelined_hierarchical_allreduce_time(m, hosts, g, rate, inter.bandwidth, intra.latency,
                                                         inter.latency, nics_per_host=g, chunks=q) for q in chunks)
        return hier - ring

    lo, hi = inter.bandwidth / 100, intra.bandwidth * 100
    if gap(lo) <= 0 or gap(hi) >= 0:
        raise ValueError(f"no tie between {lo:.3g} and {hi:.3g} B/s on the {network} network")
    for _ in range(100):
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
    return (lo * hi) ** 0.5


def hier_lead(network: str, hosts: int, per_host: int = 8, model: str = "gpt2_xl", dtype: str = "bf16") -> float:
    """How many times faster the hierarchical all-reduce at its best q of :data:`HIER_CHUNKS` is than the multi-rail
    ring on the same cards (one a GPU), on ``hosts`` hosts of ``per_host`` GPUs beside ``network``'s links, start-ups
    counted (below 1: the ring is faster). On a DGX B200's links the lead shrinks as hosts are added:

    >>> [round(hier_lead("b200", h), 2) for h in (2, 8, 21)]
    [1.82, 1.09, 1.0]
    """
    intra, inter = HIER_NETWORKS[network]
    n = hosts * per_host
    ring = 1e3 * compare.cluster_allreduce(model, dtype, n, hosts, intra, inter, "multi_rail_ring",
                                           nics_per_host=per_host).seconds
    return ring / min(hierarchical_ms(model, dtype, n, hosts, intra, inter, per_host, q) for q in HIER_CHUNKS)


class MultiRailStartups(NamedTuple):
    """Where the multi-rail ring's time goes, against the hierarchical all-reduce, on one setting (ms)."""

    ring: float                 # the multi-rail ring, a GPU's messages of a step one after the other, each its start-up
    ring_no_inter_alpha: float  # the same with no start-up between hosts
    ring_overlapped: float      # its rings start their messages of a step at once: one start-up a step inside the host
    inside: int                 # messages a GPU's link inside the host carries a step
    hier_series: float          # the hierarchical all-reduce, its phases in series
    hier_best: float            # at its best q of HIER_CHUNKS
    hier_chunks: int            # that q


def multi_rail_startups(model: str, dtype: str, network: str, n: int = 16, hosts: int = 2) -> MultiRailStartups:
    """The multi-rail ring on one card a GPU with its start-ups taken apart, and the hierarchical all-reduce.

    >>> r = multi_rail_startups("resnet50", "fp16", "fast")
    >>> r.inside, r.ring_no_inter_alpha == r.ring, r.ring_overlapped < r.hier_series, r.hier_best < r.ring_overlapped
    (7, True, True, True)
    """
    from ..collectives.algorithms import multi_rail_ring

    intra, inter = (hardware.link(k) for k in HIER_NETWORKS[network])
    g = n // hosts
    m = hardware.gradient_bytes(model, dtype)

    def ring(inter_latency, overlapped=False):
        return 1e3 * multi_rail_ring.seconds(m, n, intra.bandwidth, intra.latency, 0.0, hosts=hosts,
                                             inter_bandwidth=inter.bandwidth, inter_latency=inter_latency,
                                             nics_per_host=g, overlapped_startups=overlapped)

    hier = {q: hierarchical_ms(model, dtype, n, hosts, intra.key, inter.key, g, q) for q in HIER_CHUNKS}
    q = min(hier, key=hier.get)
    return MultiRailStartups(ring(inter.latency), ring(0.0), ring(inter.latency, True), g - 1, hier[1], hier[q], q)


def _hier_against_multi_rail(key: str, network: str) -> claims.Claim:
    """The hierarchical all-reduce at its best (phases in series, or pipelined over a tuned number of chunks) against
    the multi-rail flat ring on the same cards (finding: in series, going hierarchical pays by bytes only where the
    link inside a host is faster than h c times a card, B_intra > h c B_NIC; pipelined, about c times a card)."""
    intra, inter = HIER_NETWORKS[network]
    shared = {"model": "gpt2_xl", "dtype": "bf16", "n": 16, "hosts": 2, "intra": intra, "inter": inter, "cards": 8}

    def ring(s, seed):
        return 1e3 * compare.cluster_allreduce(s["model"], s["dtype"], s["n"], s["hosts"], s["intra"], s["inter"],
                                               "multi_rail_ring", nics_per_host=s["cards"]).seconds

    def hier(s, seed):
        return hierarchical_ms(s["model"], s["dtype"], s["n"], s["hosts"], s["intra"], s["inter"], s["cards"],
                               s["chunks"])

    flat = claims.Contender("multi-rail ring", ring,
                            uses="one flat ring per card on M/c of the buffer, each through its own card; a step "
                                 "takes the slower of a GPU's card and its link inside the host, which work at once")
    tree = claims.Contender("hierarchical all-reduce", hier, {"chunks": HIER_CHUNKS}, limits={"chunks": 1},
                            uses="the same cards; reduce-scatter inside each host, ring among hosts, all-gather "
                                 "inside: the phases in series (q = 1 chunk) or the NVLink phases pipelined with "
                                 "the network phase over q chunks, q tuned")
    names = f"{hardware.link(intra).name.split(' (')[0]} inside, {hardware.link(inter).name} between"

    def wording(v: claims.Verdict) -> str:
        a, b = v.best[v.winner].mean, v.best[v.runner_up].mean
        form = hierarchical_form(v.best["hierarchical all-reduce"].config["chunks"])
        return (f"the {v.winner} is {b / a:.2f} times faster than the {v.runner_up} "
                f"({a:.1f} ms against {b:.1f} ms, the hierarchical all-reduce {form}, its best)")

    return claims.Claim(key, f"On 2 hosts of 8 GPUs with 8 cards each ({names}), which all-reduces GPT-2 XL's "
                             "gradient faster: the hierarchical all-reduce at its best or a flat ring on the same cards?",
                        (flat, tree), metric="ms for one all-reduce of GPT-2 XL's bf16 gradient (alpha-beta)",
                        seeds=(0,), shared=shared, wording=wording, chapter="02_ring_allreduce",
                        source="compare.cluster_allreduce; algorithms.hierarchical.pipelined_hierarchical_allreduce_time;"
                               " deterministic (one seed)")


@claims.register("ch02.hier_vs_multi_rail_slow")
def hier_vs_multi_rail_slow_claim(small: bool = False) -> claims.Claim:
    """On the chapter's slow network (25 Gb/s Ethernet beside NVLink 2.0) the hierarchical all-reduce wins (both forms)."""
    return _hier_against_multi_rail("ch02.hier_vs_multi_rail_slow", "slow")


@claims.register("ch02.hier_vs_multi_rail_fast")
def hier_vs_multi_rail_fast_claim(small: bool = False) -> claims.Claim:
    """On a fast network (InfiniBand NDR beside NVLink 4.0): in series the hierarchical all-reduce loses to the
    multi-rail ring; pipelined, it wins."""
    return _hier_against_multi_rail("ch02.hier_vs_multi_rail_fast", "fast")


@claims.register("ch02.hier_vs_multi_rail_b200")
def hier_vs_multi_rail_b200_claim(small: bool = False) -> claims.Claim:
    """On a DGX B200's links (InfiniBand NDR beside NVLink 5): NVLink twice as fast as the fast network's, the same
    cards; which form of the hierarchical all-reduce pays is for the run to say (finding: both, at 2 hosts)."""
    return _hier_against_multi_rail("ch02.hier_vs_multi_rail_b200", "b200")
