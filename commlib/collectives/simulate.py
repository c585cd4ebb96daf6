r"""Collective operations you can run: real arrays, real arithmetic, every message traced.

Each rank holds a 1-D numpy array. A *collective* combines or moves those
arrays; an *algorithm* is the schedule of point-to-point messages that does
it. Every function here executes that schedule on copies of the arrays and
returns ``(results, trace)``: ``results[i]`` is what rank ``i`` holds at the
end (a new array; the inputs are never modified, unless you ask
:func:`allreduce` for ``inplace=True``) and ``trace`` is a
:class:`~commlib.collectives.trace.Trace` listing every message, step by step. The cost
model in :mod:`commlib.cost` charges what the trace shows:
``trace.startups()`` is the alpha coefficient (``trace.steps`` when every rank
sends one message a step), ``trace.critical_bytes`` the beta
coefficient, ``trace.critical_reduced`` the gamma coefficient.

The machine model is the one of Thakur, Rabenseifner & Gropp (2005): in one
*step* every rank sends at most one message and receives at most one
(single-port, full-duplex links), and a message of ``m`` bytes costs
:math:`\alpha + m\beta`. The few algorithms that let a rank send or receive
several messages in one step (the pipelined trees, the multi-rail ring) pay a
start-up for each: a port carries its messages one after the other. A message's ``nbytes`` is elements sent times the
item size; ``reduced`` is the bytes the receiver combines with the operator.

Operators (:data:`OPS`) are associative and commutative, so every algorithm
gives every rank the same answer as numpy's own reduction (exactly for
integers; for floats up to rounding, because the order of additions
differs). :func:`reduce_order_demo` shows why associativity matters.

>>> import numpy as np
>>> arrays = [np.array([1, 2, 3, 4]) * (r + 1) for r in range(4)]
>>> results, trace = allreduce(arrays, algorithm="ring")
>>> results[3].tolist(), trace.steps, trace.bytes_sent.tolist()
([10, 20, 30, 40], 6, [48, 48, 48, 48])

Sources: Thakur, Rabenseifner & Gropp (2005), "Optimization of Collective
Communication Operations in MPICH"; Patarasuk & Yuan (2009), "Bandwidth
optimal all-reduce algorithms for clusters of workstations"; Rabenseifner
(2004), "Optimization of Collective Reduction Operations".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ..units import check_count
from . import algorithms
from .algorithms.base import log2_ceil
from .algorithms.torus import most_square_grid
from .engine import ColumnTrace, StepEngine, split_bounds
from .schedules import (
    _new_trace,
    ring_phase,
    tree_bcast_steps,
    tree_reduce_steps,
    whole,
)
from .trace import Trace

__all__ = [
    "OPS",
    "INT_ONLY_OPS",
    "DEMO_OPS",
    "OP_SYMBOLS",
    "OP_NAMES",
    "ALLREDUCE_ALGORITHMS",
    "REDUCE_ALGORITHMS",
    "ColumnTrace",
    "OrderDemo",
    "apply_op",
    "reduce_order_demo",
    "sum_error_bound",
    "order_expression",
    "reduce",
    "broadcast",
    "gather",
    "scatter",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "allreduce",
    "most_square_grid",
    "trace_time",
]

#: Reduction operators, applied elementwise with numpy. All are associative and commutative.
OPS: dict[str, np.ufunc] = {
    "sum": np.add,
    "max": np.maximum,
    "min": np.minimum,
    "prod": np.multiply,
    "band": np.bitwise_and,
    "bor": np.bitwise_or,
    "bxor": np.bitwise_xor,
}
#: Operators defined on integers (and booleans) only.
INT_ONLY_OPS = ("band", "bor", "bxor")
#: Operators :func:`reduce_order_demo` accepts: :data:`OPS` plus two that are not associative.
DEMO_OPS: dict[str, np.ufunc] = {**OPS, "subtract": np.subtract, "power": np.power}
#: How each operator is written in :func:`order_expression`.
OP_SYMBOLS = {"sum": "+", "prod": "×", "subtract": "-", "power": "**", "band": "&", "bor": "|", "bxor": "^",
              "max": "max", "min": "min"}
#: Each operator's name as a reader says it, with its symbol where it has one (``^`` is XOR, as in C and
#: Python; power is written ``**``).
OP_NAMES = {"sum": "sum (+)", "prod": "product (×)", "subtract": "subtraction (-)", "power": "power (**)",
            "band": "bitwise AND (&)", "bor": "bitwise OR (|)", "bxor": "bitwise XOR (^)", "max": "maximum",
            "min": "minimum"}
#: All-reduce algorithms :func:`allreduce` runs: every one of the registry :data:`commlib.collectives.algorithms.ALLREDUCE`.
ALLREDUCE_ALGORITHMS = tuple(algorithms.ALLREDUCE)
#: Algorithms of :func:`reduce`.
REDUCE_ALGORITHMS = ("tree", "serial")

_NUMERIC_KINDS = "biuf"


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------
def _rank_arrays(arrays) -> tuple[list[np.ndarray], np.ndarray | None]:
    """Check ``arrays`` (one 1-D array per rank, or a 2-D ranks x length array); return rows and the 2-D form if given."""
    if isinstance(arrays, np.ndarray):
        if arrays.ndim != 2:
            raise ValueError(f"arrays given as one numpy array must be 2-D (ranks x length), got shape {arrays.shape}")
        if arrays.shape[0] == 0:
            raise ValueError("arrays must hold one array per rank (at least 1 rank), got 0 ranks")
        if arrays.dtype.kind not in _NUMERIC_KINDS:
            raise ValueError(f"arrays must be numeric (bool, int, uint or float), got dtype {arrays.dtype}")
        return list(arrays), arrays
    try:
        rows = [np.asarray(a) for a in arrays]
    except TypeError:
        raise ValueError(f"arrays must be a list of 1-D numpy arrays, one per rank; got {type(arrays).__name__}") \
            from None
    if not rows:
        raise ValueError("arrays must hold one array per rank (at least 1 rank), got 0 ranks")
    first = rows[0]
    for i, a in enumerate(rows):
        if a.ndim != 1:
            raise ValueError(f"arrays[{i}] must be 1-D, got shape {a.shape}")
        if a.shape != first.shape:
            raise ValueError(f"arrays must all have the same shape: arrays[{i}] has {a.shape}, arrays[0] {first.shape}")
        if a.dtype != first.dtype:
            raise ValueError(f"arrays must all have the same dtype: arrays[{i}] is {a.dtype}, arrays[0] {first.dtype}")
    if first.dtype.kind not in _NUMERIC_KINDS:
        raise ValueError(f"arrays must be numeric (bool, int, uint or float), got dtype {first.dtype}")
    return rows, None


def _ufunc(op: str, dtype: np.dtype, table: Mapping[str, np.ufunc] = OPS) -> np.ufunc:
    if not isinstance(op, str) or op not in table:
        raise ValueError(f"op must be one of {', '.join(table)}; got {op!r}")
    if op in INT_ONLY_OPS and np.dtype(dtype).kind not in "biu":
        raise ValueError(f"op={op!r} is bitwise and needs integer arrays; got dtype {np.dtype(dtype)}")
    return table[op]


def _whole_number(value):
    return int(value) if isinstance(value, np.integer) else value


def _root(root: int, n: int) -> int:
    return check_count("root", _whole_number(root), minimum=0, maximum=n - 1)


def _inplace_buffers(arrays, matrix: np.ndarray | None) -> list[np.ndarray]:
    """The ranks' own buffers for ``inplace=True``: writable, contiguous, one block of memory per rank."""
    if matrix is not None:
        if not matrix.flags.writeable:
            raise ValueError("inplace=True needs writable arrays; the 2-D arrays given is read-only")
        if not matrix.flags.c_contiguous:
            raise ValueError("inplace=True needs C-contiguous arrays (each rank's row one block of memory); "
                             f"the 2-D arrays given has strides {matrix.strides}")
        return list(matrix)
    bufs = list(arrays)
    spans = []
    for i, a in enumerate(bufs):
        if not isinstance(a, np.ndarray):
            raise ValueError(f"inplace=True needs numpy arrays to overwrite; arrays[{i}] is a {type(a).__name__}")
        if not a.flags.writeable:
            raise ValueError(f"inplace=True needs writable arrays; arrays[{i}] is read-only")
        if not a.flags.c_contiguous:
            raise ValueError(f"inplace=True needs contiguous arrays; arrays[{i}] has stride {a.strides[0]} "
                             f"for items of {a.itemsize} bytes")
        if a.nbytes:
            spans.append((a.ctypes.data, a.ctypes.data + a.nbytes, i))
    spans.sort()
    for (_, end, i), (start, _, j) in zip(spans, spans[1:]):
        if start < end:
            raise ValueError(f"inplace=True needs one buffer per rank; arrays[{min(i, j)}] and "
                             f"arrays[{max(i, j)}] share memory")
    return bufs


def apply_op(op: str, a, b) -> np.ndarray:
    """Combine two arrays elementwise with operator ``op`` (a key of :data:`OPS`).

    ``band``, ``bor`` and ``bxor`` are bitwise AND, OR and XOR, defined for integers only.

    >>> apply_op("max", np.array([1, 5]), np.array([3, 2])).tolist()
    [3, 5]
    >>> apply_op("band", np.array([0b1100]), np.array([0b1010])).tolist()
    [8]
    """
    a, b = np.asarray(a), np.asarray(b)
    return _ufunc(op, np.result_type(a, b))(a, b)


# ---------------------------------------------------------------------------
# associativity: why the order of a reduction may or may not matter
# ---------------------------------------------------------------------------
class OrderDemo(NamedTuple):
    """The two answers of :func:`reduce_order_demo`."""

    serial: object
    tree: object


def _tree_fold(items: list, f: Callable) -> object:
    # Pairwise, level by level: (x0 op x1) op (x2 op x3) ...; an odd last item waits for the next level.
    # This is the binomial-tree order of reduce(..., algorithm="tree") with root 0.
    while len(items) > 1:
        nxt = [f(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


def _demo_values(values, op: str) -> tuple[list, np.ufunc]:
    vals = [np.asarray(v) for v in values]
    if not vals:
        raise ValueError("values must hold at least one value")
    return vals, _ufunc(op, np.result_type(*vals), DEMO_OPS)


def _item(x):
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


def reduce_order_demo(values: Sequence, op: str = "sum") -> OrderDemo:
    r"""Reduce ``values`` two ways: serially, :math:`((a \circ b) \circ c) \circ d`, and as a tree, :math:`(a \circ b) \circ (c \circ d)`.

    A serial reduction of n values takes n - 1 dependent steps; a tree takes
    :math:`\lceil\log_2 n\rceil`. The tree regroups the operations, so it is
    only correct for an *associative* operator: sum, max, min, product and
    bitwise AND/OR give the same answer both ways (for floats, up to
    rounding); subtraction and power do not. ``op`` is a key of
    :data:`DEMO_OPS`; ``values`` are numbers (or equal-shape arrays).

    >>> reduce_order_demo([1, 2, 3, 4], "sum")
    OrderDemo(serial=10, tree=10)
    >>> reduce_order_demo([1, 2, 3, 4], "subtract")   # ((1-2)-3)-4 vs (1-2)-(3-4)
    OrderDemo(serial=-8, tree=0)
    >>> reduce_order_demo([2, 3, 2, 1], "power")      # ((2**3)**2)**1 vs (2**3)**(2**1)
    OrderDemo(serial=64, tree=64)
    >>> reduce_order_demo([2, 1, 3, 2], "power")      # ((2**1)**3)**2 vs (2**1)**(3**2)
    OrderDemo(serial=64, tree=512)
    >>> reduce_order_demo([14, 11, 7, 15], "bxor")    # XOR, C's and Python's ^, is associative
    OrderDemo(serial=13, tree=13)
    """
    vals, f = _demo_values(values, op)
    return OrderDemo(_item(functools.reduce(f, vals)), _item(_tree_fold(list(vals), f)))


def sum_error_bound(values: Sequence[float]) -> float:
    r"""Bound on the rounding error of a float64 sum of ``values`` in any order: :math:`(n-1)\,u\sum_i |x_i|`.

    u = 2^-53 is the unit roundoff of doubles. Each of the n - 1 additions rounds its result, an error of
    at most u times that partial sum, and no partial sum exceeds the sum of the magnitudes (Goldberg
    1991, "Errors in summation"; to first order in u). The bound is relative to the magnitudes, not to
    the result: where terms cancel, the error can exceed the result itself.

    >>> round(sum_error_bound([1e16, 1.0, -1e16, 1.0]), 2)     # 3 additions x 2**-53 x 2e16
    6.66
    """
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("values must hold at least one number")
    return float((len(vals) - 1) * (np.finfo(np.float64).eps / 2) * np.sum(np.abs(vals)))


def order_expression(values: Sequence, op: str = "sum", order: str = "serial") -> str:
    """Write out the grouping :func:`reduce_order_demo` uses, ``order`` = ``"serial"`` or ``"tree"``.

    >>> order_expression([1, 2, 3, 4], "subtract", "serial")
    '((1 - 2) - 3) - 4'
    >>> order_expression([1, 2, 3, 4, 5], "max", "tree")
    'max(max(max(1, 2), max(3, 4)), 5)'
    """
    if order not in ("serial", "tree"):
        raise ValueError(f"order must be 'serial' or 'tree'; got {order!r}")
    _demo_values(values, op)
    sym = OP_SYMBOLS[op]
    if sym.isalpha():
        def f(a, b):
            return f"{sym}({a}, {b})"
    else:
        def f(a, b):
            return f"{_paren(a)} {sym} {_paren(b)}"
    items = [str(v) for v in values]
    expr = functools.reduce(f, items) if order == "serial" else _tree_fold(items, f)
    return expr


def _paren(s: str) -> str:
    return f"({s})" if " " in s else s


# ---------------------------------------------------------------------------
# the primitives
# ---------------------------------------------------------------------------
def reduce(arrays, op: str = "sum", root: int = 0, algorithm: str = "tree",
           record: bool = False) -> tuple[list[np.ndarray], Trace]:
    r"""Combine every rank's array with ``op``; the result lands on rank ``root``.

    * ``"serial"``: the root folds in one array per step,
      :math:`((x_r \circ x_{r+1}) \circ x_{r+2}) \circ \dots`; a chain of
      n - 1 dependent steps, each moving and reducing the whole message:
      :math:`(n-1)(\alpha + M\beta + M\gamma)`.
    * ``"tree"`` (binomial, Thakur et al. 2005 sec. 4.2): at step k every
      rank whose relative rank is an odd multiple of :math:`2^k` sends its
      partial result :math:`2^k` ranks down;
      :math:`\lceil\log_2 n\rceil(\alpha + M\beta + M\gamma)`.

    ``results[root]`` is the reduction; the other ranks keep a copy of their
    own input (their partial results appear in ``trace.snapshots`` when
    ``record=True``).

    >>> res, t = reduce([np.array([r]) for r in range(1, 9)], algorithm="tree")
    >>> int(res[0][0]), t.steps
    (36, 3)
    >>> reduce([np.array([r]) for r in range(1, 9)], algorithm="serial")[1].steps
    7
    """
    rows, _ = _rank_arrays(arrays)
    n = len(rows)
    f = _ufunc(op, rows[0].dtype)
    root = _root(root, n)
    if algorithm not in REDUCE_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(REDUCE_ALGORITHMS)}; got {algorithm!r}")
    bufs = [a.copy() for a in rows]
    trace = _new_trace(n, f"reduce:{algorithm}")
    eng = StepEngine(trace, bufs, f, record)
    if algorithm == "serial":
        for k in range(1, n):
            eng.run([whole((root + k) % n, root, True)], "reduce")
    else:
        for pairs in tree_reduce_steps(n, root):
            eng.run([whole(s, d, True) for s, d in pairs], "reduce")
    results = [bufs[root] if i == root else rows[i].copy() for i in range(n)]
    return results, trace


def broadcast(arrays, root: int = 0, record: bool = False) -> tuple[list[np.ndarray], Trace]:
    r"""Copy ``arrays[root]`` to every rank along a binomial tree.

    At step k, the :math:`2^k` ranks that already hold the data send it
    :math:`2^k` ranks further (Thakur et al. 2005 sec. 4.1):
    :math:`\lceil\log_2 n\rceil(\alpha + M\beta)`. The other ranks' arrays
    are receive buffers: only their shape and dtype matter. Snapshots are
    float64 with NaN where a rank holds nothing yet.

    >>> res, t = broadcast([np.array([7, 7]), np.zeros(2, int), np.zeros(2, int)])
    >>> [r.tolist() for r in res], t.steps
    ([[7, 7], [7, 7], [7, 7]], 2)
    """
    rows, _ = _rank_arrays(arrays)
    n = len(rows)
    root = _root(root, n)
    bufs = [rows[root].copy() if i == root else np.zeros_like(rows[i]) for i in range(n)]
    filled = [np.full(rows[0].shape, i == root) for i in range(n)]
    trace = _new_trace(n, "broadcast:tree")
    eng = StepEngine(trace, bufs, None, record, filled=filled)
    for pairs in tree_bcast_steps(n, root):
        eng.run([whole(s, d, False) for s, d in pairs], "broadcast")
    return bufs, trace



def _gather_buffers(rows: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every rank's n-block output buffer, holding only its own block, and which blocks it holds."""
    n, length = len(rows), rows[0].size
    bufs = [np.zeros(n * length, dtype=rows[0].dtype) for _ in range(n)]
    filled = [np.zeros(n * length, dtype=bool) for _ in range(n)]
    for i, a in enumerate(rows):
        bufs[i][i * length:(i + 1) * length] = a
        filled[i][i * length:(i + 1) * length] = True
    return bufs, filled

def gather(arrays, root: int = 0, record: bool = False) -> tuple[list[np.ndarray], Trace]:
    r"""Collect every rank's array on ``root``, concatenated in rank order, along a binomial tree.

    At step k, a rank whose relative rank is an odd multiple of :math:`2^k`
    sends everything it has collected (up to :math:`2^k` blocks) to the rank
    :math:`2^k` below. With M the gathered size (n blocks):
    :math:`\lceil\log_2 n\rceil\alpha + \frac{n-1}{n}M\beta` (Thakur et al.
    2005). ``results[root]`` has length n x length; other ranks keep a copy
    of their own array. Message ``chunk`` labels are tuples of the ranks
    whose blocks travel.

    >>> res, t = gather([np.array([r, r]) for r in range(3)], root=1)
    >>> res[1].tolist(), t.steps
    ([0, 0, 1, 1, 2, 2], 2)
    """
    rows, _ = _rank_arrays(arrays)
    n = len(rows)
    root = _root(root, n)
    length = rows[0].size
    bufs, filled = _gather_buffers(rows)
    trace = _new_trace(n, "gather:tree")
    eng = StepEngine(trace, bufs, None, record, filled=filled)

    def blocks(v0: int, v1: int) -> tuple[np.ndarray, tuple[int, ...]]:
        ranks = tuple((v + root) % n for v in range(v0, v1))
        idx = np.concatenate([np.arange(r * length, (r + 1) * length) for r in ranks]).astype(np.intp)
        return idx, ranks

    for k in range(log2_ceil(n)):
        mask = 1 << k
        transfers = []
        for v in range(n):
            if v % (2 * mask) == mask:
                idx, ranks = blocks(v, min(v + mask, n))
                transfers.append(((v + root) % n, (v - mask + root) % n, idx, idx, False, ranks))
        eng.run(transfers, "gather")
    results = [bufs[root] if i == root else rows[i].copy() for i in range(n)]
    return results, trace


def scatter(arrays, root: int = 0, record: bool = False) -> tuple[list[np.ndarray], Trace]:
    r"""Split ``arrays[root]`` into n pieces (``np.array_split``); rank i receives piece i. Binomial tree.

    The reverse of :func:`gather`: the root sends half the pieces
    :math:`2^{d-1}` ranks away, both halves split again, and so on:
    :math:`\lceil\log_2 n\rceil\alpha + \frac{n-1}{n}M\beta` for M the
    root's array (Thakur et al. 2005). The other ranks' arrays are receive
    buffers; only shape and dtype matter. Snapshots show each rank's view of
    the root's array (NaN where it holds nothing).

    >>> res, t = scatter([np.arange(8), np.zeros(8, int), np.zeros(8, int), np.zeros(8, int)])
    >>> [r.tolist() for r in res], t.steps, t.critical_bytes // 8
    ([[0, 1], [2, 3], [4, 5], [6, 7]], 2, 6)
    """
    rows, _ = _rank_arrays(arrays)
    n = len(rows)
    root = _root(root, n)
    length = rows[0].size
    b = split_bounds(0, length, n)
    bufs = [rows[root].copy() if i == root else np.zeros_like(rows[i]) for i in range(n)]
    filled = [np.full(length, i == root) for i in range(n)]
    trace = _new_trace(n, "scatter:tree")
    eng = StepEngine(trace, bufs, None, record, filled=filled)
    for k in reversed(range(log2_ceil(n))):
        mask = 1 << k
        transfers = []
        for v in range(0, n, 2 * mask):
            if v + mask < n:
                ranks = tuple((w + root) % n for w in range(v + mask, min(v + 2 * mask, n)))
                idx = np.concatenate([np.arange(b[r], b[r + 1]) for r in ranks]).astype(np.intp)
                transfers.append(((v + root) % n, (v + mask + root) % n, idx, idx, False, ranks))
        eng.run(transfers, "scatter")
    return [bufs[i][b[i]:b[i + 1]].copy() for i in range(n)], trace


def all_gather(arrays, record: bool = False) -> tuple[list[np.ndarray], Trace]:
    r"""Every rank ends with all arrays concatenated in rank order; ring algorithm.

    At step s (of n - 1) rank i forwards block (i - s) mod n to rank i + 1
    (Thakur et al. 2005 sec. 4.3): :math:`(n-1)\alpha + \frac{n-1}{n}M\beta`
    with M the gathered size. Send buffer: one block; receive buffer: n
    blocks. Message ``chunk`` = the rank whose block travels.

    >>> res, t = all_gather([np.array([r]) for r in range(4)])
    >>> res[2].tolist(), t.steps
    ([0, 1, 2, 3], 3)
    """
    rows, _ = _rank_arrays(arrays)
    n = len(rows)
    length = rows[0].size
    bufs, filled = _gather_buffers(rows)
    trace = _new_trace(n, "all_gather:ring")
    eng = StepEngine(trace, bufs, None, record, filled=filled)
    ring = list(range(n))
    bounds = np.arange(n + 1, dtype=np.int64) * length
    # position p owns block p from the start, so the all-gather half of a ring is all it takes
    ring_phase(eng, [ring], [bounds], "ag", "all-gather", lambda gi, c: c)
    return bufs, trace


def reduce_scatter(arrays, op: str = "sum", record: bool = False) -> tuple[list[np.ndarray], Trace]:
    r"""Reduce all arrays and leave piece i (``np.array_split`` into n) of the result on rank i; ring algorithm.

    At step s (of n - 1) rank i sends its partial piece (i - s - 1) mod n to
    rank i + 1, which adds its own contribution; after n - 1 steps each
    piece has visited every rank (Patarasuk & Yuan 2009):
    :math:`(n-1)\alpha + \frac{n-1}{n}M\beta + \frac{n-1}{n}M\gamma`.

    >>> res, t = reduce_scatter([np.arange(6) for _ in range(3)])
    >>> [r.tolist() for r in res], t.steps
    ([[0, 3], [6, 9], [12, 15]], 2)
    """
    rows, _ = _rank_arrays(arrays)
    n = len(rows)
    f = _ufunc(op, rows[0].dtype)
    bufs = [a.copy() for a in rows]
    b = split_bounds(0, rows[0].size, n)
    trace = _new_trace(n, "reduce_scatter:ring")
    eng = StepEngine(trace, bufs, f, record)
    ring_phase(eng, [list(range(n))], [b], "rs", "reduce-scatter", lambda gi, c: c)
    return [bufs[i][b[i]:b[i + 1]].copy() for i in range(n)], trace


def all_to_all(arrays, record: bool = False, algorithm: str = "pairwise") -> tuple[list[np.ndarray], Trace]:
    r"""Rank i splits its array into n pieces (``np.array_split``); piece j goes to rank j. Pairwise exchange.

    ``algorithm="bruck"`` runs Bruck et al.'s (1997) schedule instead (:func:`_bruck_all_to_all`):
    :math:`\lceil\log_2 n\rceil` steps, the same result.

    At step k (1 .. n - 1) rank i sends piece (i + k) mod n to rank
    (i + k) mod n and receives from rank (i - k) mod n (Thakur et al. 2005
    sec. 4.5): :math:`(n-1)\alpha + \frac{n-1}{n}M\beta` with M one rank's
    array. Rank j ends with piece j of every rank, in rank order: send and
    receive buffers are both n pieces (against 1 and n for all-gather).
    Snapshots show receive buffers (NaN where nothing arrived yet).

    >>> res, t = all_to_all([np.array([10 * r, 10 * r + 1, 10 * r + 2]) for r in range(3)])
    >>> [r.tolist() for r in res], t.steps
    ([[0, 10, 20], [1, 11, 21], [2, 12, 22]], 2)
    """
    rows, _ = _rank_arrays(arrays)
    if algorithm == "bruck":
        return _bruck_all_to_all(rows, bool(record))
    if algorithm != "pairwise":
        raise ValueError(f"algorithm must be 'pairwise' or 'bruck'; got {algorithm!r}")
    n = len(rows)
    b = split_bounds(0, rows[0].size, n)
    sizes = np.diff(b)
    send = [a.copy() for a in rows]
    recv = [np.zeros(n * int(sizes[j]), dtype=rows[0].dtype) for j in range(n)]
    filled = [np.zeros(r.size, dtype=bool) for r in recv]
    for i in range(n):
        sl = slice(i * int(sizes[i]), (i + 1) * int(sizes[i]))
        recv[i][sl] = send[i][b[i]:b[i + 1]]
        filled[i][sl] = True
    trace = _new_trace(n, "all_to_all:pairwise")
    eng = StepEngine(trace, recv, None, record, sources=send, filled=filled)
    for k in range(1, n):
        transfers = []
        for i in range(n):
            j = (i + k) % n
            transfers.append((i, j, slice(int(b[j]), int(b[j + 1])),
                              slice(i * int(sizes[j]), (i + 1) * int(sizes[j])), False, j))
        eng.run(transfers, "all-to-all")
    return recv, trace


def _bruck_all_to_all(rows: list[np.ndarray], record: bool) -> tuple[list[np.ndarray], Trace]:
    r"""Bruck's all-to-all (radix 2): rotate, ceil(log2 n) exchanges, rotate back.

    Rank i first lays its pieces out so that position j holds the piece for rank (i + j) mod n. At
    step k every rank sends the pieces at the positions whose bit k is set to rank i + 2^k, which
    keeps them at the same positions; a piece at position j thus travels j ranks in all and ends
    on its rank. The bytes a rank sends are the pieces at :math:`S(n) = \sum_{j<n}\mathrm{popcount}(j)`
    positions, :math:`S(n)/n \cdot M` for pieces of M/n (Bruck et al. 1997). Snapshots show each
    rank's working buffer, position by position.

    >>> res, t = all_to_all([np.array([10 * r, 10 * r + 1, 10 * r + 2]) for r in range(3)], algorithm="bruck")
    >>> [r.tolist() for r in res], t.steps, t.critical_bytes // 8
    ([[0, 10, 20], [1, 11, 21], [2, 12, 22]], 2, 2)
    """
    n = len(rows)
    b = split_bounds(0, rows[0].size, n)
    trace = _new_trace(n, "all_to_all:bruck")
    work = [[rows[i][b[(i + j) % n]:b[(i + j) % n + 1]].copy() for j in range(n)] for i in range(n)]

    def snap(label: str) -> None:
        if record:
            trace.snapshot([np.concatenate(w).astype(np.float64) for w in work], label)

    snap("start")
    itemsize = rows[0].dtype.itemsize
    for k in range(log2_ceil(n)):
        mask = 1 << k
        positions = [j for j in range(n) if j & mask]
        moved = [[None] * n for _ in range(n)]
        nbytes = []
        for i in range(n):
            nbytes.append(sum(work[i][j].size for j in positions) * itemsize)
            for j in positions:
                moved[(i + mask) % n][j] = work[i][j]
        for i in range(n):
            for j in positions:
                work[i][j] = moved[i][j]
        trace.add_block(k, np.arange(n), (np.arange(n) + mask) % n, nbytes, phase="bruck")
        snap(f"step {k + 1}: bruck")
    # rank i's position j holds the piece from rank (i - j) mod n: back into rank order
    return [np.concatenate([work[i][(i - s) % n] for s in range(n)]) for i in range(n)], trace


# ---------------------------------------------------------------------------
# all-reduce
# ---------------------------------------------------------------------------
def allreduce(arrays, algorithm: str = "ring", op: str = "sum", hosts: int | None = None,
              grid: tuple[int, int] | None = None, record: bool = False,
              inplace: bool = False, chunks: int | None = None,
              rails: int | None = None) -> tuple[list[np.ndarray], Trace]:
    r"""Every rank ends with the elementwise reduction of all ranks' arrays.

    With p = n ranks and M = one array's bytes (Thakur et al. 2005 sec. 4.4;
    the cost forms are :func:`commlib.cost.allreduce_terms`):

    * ``"ring"`` (Patarasuk & Yuan 2009): reduce-scatter then all-gather
      around the ring, pieces by ``np.array_split`` into n, n - 1 steps each:
      :math:`2(p-1)\alpha + 2\frac{p-1}{p}M\beta + \frac{p-1}{p}M\gamma`;
      every rank sends :math:`2\frac{p-1}{p}M` bytes, the lower bound.
      Phases ``"reduce-scatter"``, ``"all-gather"``; ``chunk`` = piece index.
    * ``"tree"``: binomial reduce to rank 0, then binomial broadcast:
      :math:`2\lceil\log_2 p\rceil(\alpha + M\beta) + \lceil\log_2 p\rceil M\gamma`.
    * ``"recursive_doubling"``: at distance 1, 2, 4, ... partners swap whole
      vectors and both combine: :math:`\log_2 p(\alpha + M\beta + M\gamma)`.
    * ``"halving_doubling"`` (Rabenseifner 2004): recursive-halving
      reduce-scatter (distance p/2, p/4, ..., 1, half the current piece each
      time) then recursive-doubling all-gather:
      :math:`2\log_2 p\,\alpha + 2\frac{p-1}{p}M\beta + \frac{p-1}{p}M\gamma`;
      ``chunk`` = tuple of the final blocks that travel.
      For both log algorithms with p not a power of two, the ranks beyond the
      largest power of two p' first fold their whole vector into rank i - p'
      (``"fold-in"``) and get the result back at the end (``"fold-out"``).
    * ``"naive"``: every rank sends to rank 0, one per step, which folds them
      in and then sends the result to each rank: rank 0's link carries
      :math:`2(p-1)M`, in :math:`2(p-1)` steps.
    * ``"hierarchical"`` (``hosts`` = h hosts of g = p/h contiguous ranks):
      ring reduce-scatter inside each host, ring all-reduce of each rank's
      M/g shard across hosts among ranks of the same local index, ring
      all-gather inside hosts (phases ``"intra-reduce-scatter"``,
      ``"inter-allreduce"``, ``"intra-all-gather"``); the cost is
      :func:`commlib.cost.hierarchical_allreduce_time`.
    * ``"torus"`` (``grid`` = (rows, cols), default :func:`most_square_grid`):
      ring reduce-scatter along each row, ring all-reduce of the M/cols shard
      along each column, ring all-gather along rows (phases
      ``"row-reduce-scatter"``, ``"column-allreduce"``, ``"row-all-gather"``);
      the cost is :func:`commlib.cost.torus_allreduce_time`. In both two-level
      algorithms ``chunk`` is the shard index, or (shard, piece) across.

    * ``"pipelined_tree"`` and ``"double_binary_tree"`` (``chunks`` = q,
      default 1): q chunks stream up a heap-ordered binary tree (and, for
      the double tree, up a second tree over the ranks in reverse order,
      carrying the second half) and back down, reduction and broadcast
      overlapped; see :mod:`commlib.collectives.algorithms.pipelined_tree`. A rank may
      send and receive several messages in one step; its port carries them
      one after the other, each with its start-up: ``trace.startups()`` is
      their alpha coefficient and ``trace.port_bytes`` their beta coefficient.

    Every algorithm is a record of the registry :mod:`commlib.collectives.algorithms`;
    this function validates its parameters and runs its ``schedule``.
    ``hosts`` is used only by ``"hierarchical"``, ``grid`` only by
    ``"torus"``, ``chunks`` only by the pipelined trees; ``"multi_rail_ring"``
    takes ``hosts`` and ``rails`` (c rings, one per network card, each on
    1/c of the vector). ``arrays`` may also be one 2-D (ranks x length) array. With
    ``record=True``, ``trace.snapshots`` holds every rank's buffer at the
    start and after each step. With ``record=False`` the ring takes a
    vectorised path: the same schedule, the same trace and the same
    operations in the same order (bitwise the same results), computed rank
    by rank instead of step by step, reading the input without copying it.

    ``inplace=True`` is MPI's ``MPI_IN_PLACE`` (MPI standard, section
    "All-Reduce": ``MPI_Allreduce(MPI_IN_PLACE, buf, ...)`` takes each rank's
    input from ``buf`` and replaces it with the result): the result
    overwrites the input buffers and ``results`` holds those same buffers,
    ``results[i]`` sharing memory with ``arrays[i]`` (a row view of a 2-D
    input). No memory is allocated for results; the trace is identical to
    the copying mode's, as are the values, bit for bit. The input must be
    writable numpy arrays, each rank's contiguous and none overlapping
    another (a C-contiguous 2-D array qualifies), else ``ValueError``.

    >>> arrays = [np.array([1, 2, 3]), np.array([10, 20, 30]), np.array([100, 200, 300])]
    >>> res, t = allreduce(arrays, "ring")
    >>> res[1].tolist(), t.steps
    ([111, 222, 333], 4)
    >>> [allreduce(arrays, alg)[1].steps for alg in ("tree", "recursive_doubling", "halving_doubling", "naive")]
    [4, 3, 4, 4]
    >>> allreduce([np.arange(4)] * 6, "hierarchical", hosts=2)[1].steps  # 2 (3 - 1) + 2 (2 - 1)
    6
    >>> grads = np.array([[1., 2.], [3., 4.], [5., 6.]])  # 3 ranks, 2 elements: MPI_IN_PLACE
    >>> res, t = allreduce(grads, inplace=True)
    >>> grads.tolist(), np.shares_memory(res[2], grads), t.steps
    ([[9.0, 12.0], [9.0, 12.0], [9.0, 12.0]], True, 4)
    """
    if not isinstance(arrays, (np.ndarray, list, tuple)):
        try:  # an iterable of arrays is read once here, so in-place mode can still reach the arrays themselves
            arrays = list(arrays)
        except TypeError:
            pass  # _rank_arrays names the problem
    rows, matrix = _rank_arrays(arrays)
    n = len(rows)
    dtype = rows[0].dtype
    length = rows[0].size
    f = _ufunc(op, dtype)
    record_ = algorithms.allreduce_algorithm(algorithm)
    given = {"hosts": hosts, "grid": grid, "chunks": chunks, "rails": rails}
    if "rails" in record_.params and hosts is None:
        given["hosts"] = 1
    params = record_.checked(n, **{k: _whole_number(v) for k, v in given.items() if k in record_.params})
    record = bool(record)
    if not isinstance(inplace, (bool, np.bool_)):
        raise ValueError(f"inplace must be True or False; got {inplace!r}")
    own = _inplace_buffers(arrays, matrix) if inplace else None
    trace = _new_trace(n, f"all_reduce:{algorithm}")

    if record_.fast is not None and not record:
        acc = record_.fast(trace, rows, f)  # the algorithm's own fast path (the ring's reads every row once)
        if own is None:  # all-gather into new memory
            out = np.empty((n, length), dtype=dtype)
            np.copyto(out, acc)
            return list(out), trace
        if matrix is not None:  # all-gather over the inputs: one broadcast write
            np.copyto(matrix, acc)
        else:
            for buf in own:
                np.copyto(buf, acc)
        return own, trace

    bufs = own if own is not None else [a.copy() for a in rows]
    eng = StepEngine(trace, bufs, f, record, multi_port=record_.multi_port)
    if n > 1:
        record_.schedule(eng, n, length, **params)
    return bufs, trace


# ---------------------------------------------------------------------------
# time of a trace under the alpha-beta-gamma model
# ---------------------------------------------------------------------------
def _per_phase(name: str, value, phases: list[str], check) -> np.ndarray:
    if isinstance(value, Mapping):
        missing = [p for p in phases if p not in value]
        if missing:
            raise ValueError(f"{name} has no value for phase(s) {', '.join(missing)}")
        return np.array([check(name, value[p]) for p in phases] or [0.0], dtype=float)
    return np.full(max(len(phases), 1), check(name, value), dtype=float)


def trace_time(trace: Trace, bandwidth, latency=0.0, gamma=0.0, ports: str = "rank") -> float:
    r"""Seconds a traced run takes under the alpha-beta-gamma model, step by step.

    .. math:: T = \sum_{\text{steps}} \Big[\max_{\text{ports}} (k\alpha + m\beta)
              + \max_{\text{ranks}} r\gamma\Big]

    where k is the number of messages a port sends (or receives) in the step and m their bytes,
    the port carrying them one after the other, each with its own start-up (with one message per
    rank and step, one start-up and the largest message), and r the bytes a rank reduces in the step.
    With ``ports="link"`` every directed (src, dst) pair is its own port (a
    rank with a link per neighbour, as on a torus).
    ``bandwidth`` (bytes/s, one direction), ``latency`` (s) and ``gamma``
    (s/byte) are numbers, or mappings from phase name to number (e.g. a fast
    intra-host and a slow inter-host link for ``"hierarchical"``).

    >>> _, t = allreduce([np.zeros(1000, np.float32)] * 4, "ring")
    >>> round(trace_time(t, bandwidth=1e9, latency=1e-6), 9)   # 6 (1 us + 1000 B / 1 GB/s)
    1.2e-05
    """
    from ..units import check_nonnegative, check_positive

    if isinstance(trace, ColumnTrace):
        c = trace.columns()
        phases = trace.phase_names
        cols = {k: c[k] for k in ("step", "src", "dst", "nbytes", "reduced", "phase")}
    else:
        phases = list(dict.fromkeys(m.phase for m in trace.messages))
        code = {p: i for i, p in enumerate(phases)}
        ms = trace.messages
        cols = {"step": np.array([m.step for m in ms], dtype=np.int64),
                "src": np.array([m.src for m in ms], dtype=np.int64),
                "dst": np.array([m.dst for m in ms], dtype=np.int64),
                "nbytes": np.array([m.nbytes for m in ms], dtype=np.int64),
                "reduced": np.array([m.reduced for m in ms], dtype=np.int64),
                "phase": np.array([code[m.phase] for m in ms], dtype=np.int64)}
    bw = _per_phase("bandwidth", bandwidth, phases, check_positive)
    lat = _per_phase("latency", latency, phases, check_nonnegative)
    gam = _per_phase("gamma", gamma, phases, check_nonnegative)
    if cols["step"].size == 0:
        return 0.0
    steps, inv = np.unique(cols["step"], return_inverse=True)
    ph = cols["phase"]
    # a port carries its messages of a step one after the other, each with its start-up: the busiest
    # port, sending or receiving
    seconds = lat[ph] + cols["nbytes"] / bw[ph]
    if ports == "link":
        pair = cols["src"] * trace.n + cols["dst"]
        busy = np.zeros((1, steps.size, trace.n * trace.n))
        np.add.at(busy[0], (inv, pair), seconds)
    elif ports == "rank":
        busy = np.zeros((2, steps.size, trace.n))
        np.add.at(busy[0], (inv, cols["src"]), seconds)
        np.add.at(busy[1], (inv, cols["dst"]), seconds)
    else:
        raise ValueError(f"ports must be 'rank' or 'link'; got {ports!r}")
    worst = busy.max(axis=(0, 2))
    red = np.zeros((steps.size, trace.n))
    np.add.at(red, (inv, cols["dst"]), cols["reduced"] * gam[ph])
    return float(worst.sum() + red.max(axis=1).sum())
