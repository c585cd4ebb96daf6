"""Schedules behind :mod:`commlib.collectives.simulate`: who sends what to whom at each step.

Each function here drives a :class:`~commlib.collectives.engine.StepEngine`
through one algorithm (or records a schedule directly, for the vectorised
ring). The algorithm records in :mod:`commlib.collectives.algorithms` call them; the
public functions, their formulas and sources are documented there and in
:mod:`commlib.collectives.simulate`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

import numpy as np

from .algorithms.base import log2_ceil, log2_floor
from .engine import ColumnTrace, StepEngine, split_bounds

_ALL = slice(None)


def _new_trace(n: int, name: str) -> ColumnTrace:
    return ColumnTrace(n=n, algorithm=name)


def tree_reduce_steps(n: int, root: int) -> list[list[tuple[int, int]]]:
    """Binomial-tree reduce: at step l, relative rank i with i mod 2^(l+1) == 2^l sends to i - 2^l."""
    out = []
    for level in range(log2_ceil(n)):
        mask = 1 << level   # 2^l
        out.append([((i + root) % n, (i - mask + root) % n) for i in range(n) if i % (2 * mask) == mask])
    return out


def tree_bcast_steps(n: int, root: int) -> list[list[tuple[int, int]]]:
    """Binomial-tree broadcast: at step k, relative ranks v < 2^k send to v + 2^k."""
    out = []
    for k in range(log2_ceil(n)):
        mask = 1 << k
        out.append([((v + root) % n, (v + mask + root) % n) for v in range(mask) if v + mask < n])
    return out


def ring_steps(groups: list[list[int]], bounds: list[np.ndarray], kind: str,
               label: Callable[[int, int], object]) -> list[list[tuple]]:
    """The transfers of a ring reduce-scatter (``kind="rs"``) or all-gather (``"ag"``), step by step.

    Every group is a ring of ranks, all groups at once, each of ``size`` ranks. Position ``i`` of a
    group ends the reduce-scatter owning chunk ``i`` (``[bounds[i],
    bounds[i+1])``): at step s it sends chunk (i - s - 1) mod size to position
    i + 1, which combines it into its own copy. In the all-gather, position
    i sends chunk (i - s) mod size, and the receiver overwrites.
    """
    size = len(groups[0])
    steps = []
    for s in range(size - 1):
        transfers = []
        for gi, (ranks, b) in enumerate(zip(groups, bounds)):
            for i in range(size):
                c = (i - s - 1) % size if kind == "rs" else (i - s) % size
                sl = slice(int(b[c]), int(b[c + 1]))
                transfers.append((ranks[i], ranks[(i + 1) % size], sl, sl, kind == "rs", label(gi, c)))
        steps.append(transfers)
    return steps


def ring_phase(eng: StepEngine, groups: list[list[int]], bounds: list[np.ndarray], kind: str, phase: str,
               label: Callable[[int, int], object]) -> None:
    """Run a ring reduce-scatter (``kind="rs"``) or all-gather (``"ag"``) inside each group (:func:`ring_steps`)."""
    for transfers in ring_steps(groups, bounds, kind, label):
        eng.run(transfers, phase)


def whole(src: int, dst: int, reduce_: bool) -> tuple:
    return (src, dst, _ALL, _ALL, reduce_, None)



def fold_in(eng: StepEngine, n: int, q: int) -> None:
    if q != n:
        eng.run([whole(i, i - q, True) for i in range(q, n)], "fold-in")


def fold_out(eng: StepEngine, n: int, q: int) -> None:
    if q != n:
        eng.run([whole(i - q, i, False) for i in range(q, n)], "fold-out")


def recursive_doubling(eng: StepEngine, n: int) -> None:
    q = 1 << log2_floor(n)
    fold_in(eng, n, q)
    mask = 1
    while mask < q:
        eng.run([whole(i, i ^ mask, True) for i in range(q)], "recursive-doubling")
        mask <<= 1
    fold_out(eng, n, q)


def halving_doubling(eng: StepEngine, n: int, length: int) -> None:
    q = 1 << log2_floor(n)
    fold_in(eng, n, q)
    seg = {i: (0, length, 0, q) for i in range(q)}  # element range [lo, hi) and block range [blo, bhi)
    history = []
    dist = q // 2
    while dist >= 1:  # reduce-scatter by recursive halving: distance q/2, q/4, ..., 1
        history.append(dict(seg))
        transfers, new = [], {}
        for i in range(q):
            lo, hi, blo, bhi = seg[i]
            mid, bmid = (lo + hi) // 2, (blo + bhi) // 2
            low_half, high_half = (lo, mid, blo, bmid), (mid, hi, bmid, bhi)
            keep, give = (low_half, high_half) if i & dist == 0 else (high_half, low_half)
            new[i] = keep
            sl = slice(give[0], give[1])
            transfers.append((i, i ^ dist, sl, sl, True, tuple(range(give[2], give[3]))))
        eng.run(transfers, "reduce-scatter")
        seg = new
        dist //= 2
    dist = 1
    while dist < q:  # all-gather by recursive doubling: distance 1, 2, ..., q/2
        transfers = []
        for i in range(q):
            lo, hi, blo, bhi = seg[i]
            transfers.append((i, i ^ dist, slice(lo, hi), slice(lo, hi), False, tuple(range(blo, bhi))))
        eng.run(transfers, "all-gather")
        seg = history.pop()
        dist *= 2
    fold_out(eng, n, q)


def two_level_steps(lo: int, hi: int, inner: list[list[int]], tag: object = None) -> list[tuple[int, list[tuple]]]:
    """Steps ``(phase index 0/1/2, transfers)`` of a two-level all-reduce of elements [lo, hi).

    Ring reduce-scatter inside each ``inner`` group (a list of rings of the
    same size g), ring all-reduce of each position's 1/g shard across the
    groups (position p of every group, in group order), ring all-gather
    inside the groups. ``tag`` is added to every chunk label.
    """
    groups, size = len(inner), len(inner[0])
    outer = [[inner[h][p] for h in range(groups)] for p in range(size)]
    b = split_bounds(lo, hi, size)
    sub = [split_bounds(int(b[p]), int(b[p + 1]), groups) for p in range(size)]

    def mark(x):
        return x if tag is None else (tag, x)

    out = [(0, t) for t in ring_steps(inner, [b] * groups, "rs", lambda gi, c: mark(c))]
    out += [(1, t) for t in ring_steps(outer, sub, "rs", lambda gi, c: mark((gi, c)))]
    out += [(1, t) for t in ring_steps(outer, sub, "ag", lambda gi, c: mark((gi, c)))]
    out += [(2, t) for t in ring_steps(inner, [b] * groups, "ag", lambda gi, c: mark(c))]
    return out


def two_level(eng: StepEngine, length: int, groups: int, size: int, phases: tuple[str, str, str]) -> None:
    """Reduce-scatter inside each group of ``size`` contiguous ranks, ring all-reduce across groups, all-gather."""
    inner = [[h * size + p for p in range(size)] for h in range(groups)]
    for phase, transfers in two_level_steps(0, length, inner):
        eng.run(transfers, phases[phase])


def torus_both_ways(eng: StepEngine, length: int, k: int) -> None:
    """Four two-level all-reduces of a quarter each, at once, on a k x k torus (rank = row * k + column).

    Quarter 0 starts along the rows in the + direction (then columns +),
    quarter 1 along the rows in the - direction (then columns -), quarter 2
    along the columns + (then rows +), quarter 3 along the columns - (then
    rows -). At every step each quarter uses its own link direction, so no
    link carries two messages at once (k >= 3, so that the + and - neighbours
    differ).
    """
    rows = [[r * k + c for c in range(k)] for r in range(k)]
    cols = [[r * k + c for r in range(k)] for c in range(k)]
    plans = [rows, [g[::-1] for g in rows[::-1]], cols, [g[::-1] for g in cols[::-1]]]
    q = split_bounds(0, length, 4)
    runs = [two_level_steps(int(q[i]), int(q[i + 1]), plan, tag=i) for i, plan in enumerate(plans)]
    names = ("first-dimension reduce-scatter", "second-dimension all-reduce", "first-dimension all-gather")
    for step in zip(*runs):
        eng.run([t for _, transfers in step for t in transfers], names[step[0][0]])


def ring_messages(trace: ColumnTrace, n: int, sizes: np.ndarray, itemsize: int) -> None:
    """Record the ring's 2 n (n - 1) messages as columns, with no Python loop over messages."""
    s = np.arange(n - 1)[:, None]
    src = np.broadcast_to(np.arange(n)[None, :], (n - 1, n))
    dst = (src + 1) % n
    for phase, chunk, first in (("reduce-scatter", (src - s - 1) % n, 0), ("all-gather", (src - s) % n, n - 1)):
        nbytes = sizes[chunk] * itemsize
        trace.add_block(np.broadcast_to(s + first, (n - 1, n)), src, dst, nbytes, chunk=chunk, phase=phase,
                        reduced=nbytes if phase == "reduce-scatter" else 0)


#: Bytes of the running partial result :func:`ring_reduce` works on at a time: 4 MiB, small enough to stay in
#: the last-level cache of current server CPUs while the ranks' rows stream past it.
RING_BLOCK_BYTES = 4 << 20


def ring_reduce(rows, f: np.ufunc, out: np.ndarray | None = None, block_bytes: int = RING_BLOCK_BYTES) -> np.ndarray:
    """The ring's arithmetic without the per-rank buffers: the reduced vector (in ``out`` if given).

    ``rows`` is one 1-D array per rank (or a 2-D ranks x length array); it is
    only read. Piece c starts on rank c + 1 and travels the ring c + 1,
    c + 2, ..., n - 1, 0, ..., c; each rank it reaches combines its own copy
    with the arriving partial, ``partial = op(own, partial)``, as in the
    step-by-step version. Walking the ranks in order instead of the steps
    does the same operations in the same order for every element, reading
    each rank's row once:

    * pass 1, rank r = 1 .. n-1: piece r - 1 starts here (a copy); pieces
      0 .. r - 2 (which started on earlier ranks) take rank r's contribution;
    * pass 2, rank r = 0 .. n-1: the pieces whose journey wrapped past rank
      n - 1, that is pieces r .. n - 1 (piece n - 1 starts at rank 0).

    Every ``f`` call writes into the partial result with ``out=`` (no
    temporaries). The element range is cut into blocks of ``block_bytes``
    and both passes run block by block, so the block of partial results a
    pass keeps re-reading stays in cache however long the vectors are; each
    element still sees the ranks in its ring order, so the result is
    bitwise that of the step-by-step ring. One numpy call per rank and
    block: about 2 n + n x (blocks - 1) calls.

    A single reduction over the rank axis per piece (``f.reduce`` on a
    ranks x piece view) would read the ranks in the order 0, 1, ..., n - 1;
    the ring's order for piece c is rotated (c + 1, ..., n - 1, 0, ..., c),
    and a rotation is not a strided view, so for floats it would round
    differently from the ring it claims to simulate.

    >>> m = np.array([[1., 2., 3.], [10., 20., 30.], [100., 200., 300.]])
    >>> ring_reduce(m, np.add).tolist(), ring_reduce(m, np.add, block_bytes=8).tolist()
    ([111.0, 222.0, 333.0], [111.0, 222.0, 333.0])
    """
    if isinstance(rows, np.ndarray):
        rows = list(rows)
    n = len(rows)
    length = rows[0].size
    acc = np.empty(length, dtype=rows[0].dtype) if out is None else out
    b = split_bounds(0, length, n).tolist()
    block = max(1, int(block_bytes) // max(acc.itemsize, 1))
    for e0 in range(0, length, block):
        e1 = min(e0 + block, length)
        whole = acc[e0:e1]
        first = bisect.bisect_right(b, e0) - 1       # the piece holding element e0
        last = bisect.bisect_right(b, e1 - 1) - 1    # the piece holding element e1 - 1
        # pass 1: rank r holds the start of piece r - 1 and combines into pieces 0 .. r - 2
        for r in range(first + 1, n):
            start, stop = b[r - 1], b[r]
            row = rows[r]
            if start >= e1:  # every piece of the block is under way
                f(row[e0:e1], whole, out=whole)
                continue
            if start > e0:
                f(row[e0:start], acc[e0:start], out=acc[e0:start])
            lo, hi = max(start, e0), min(stop, e1)
            if hi > lo:
                acc[lo:hi] = row[lo:hi]
        # pass 2: rank r combines into pieces r .. n - 1; piece n - 1 starts on rank 0
        top = e1
        if b[n - 1] < e1:
            top = max(b[n - 1], e0)
            acc[top:e1] = rows[0][top:e1]
        for r in range(0, last + 1):
            lo, hi = max(b[r], e0), (top if r == 0 else e1)
            if hi > lo:
                f(rows[r][lo:hi], acc[lo:hi], out=acc[lo:hi])
    return acc


def bruck_blocks(n: int) -> list[tuple[int, int]]:
    """Bruck's all-gather on n ranks, step by step: ``(distance, blocks sent)``, 2^k and min(2^k, n - 2^k)."""
    out, dist = [], 1
    while dist < n:
        out.append((dist, min(dist, n - dist)))
        dist <<= 1
    return out


def bruck_allreduce(eng: StepEngine, n: int, length: int) -> None:
    """Bruck's all-gather run backwards as a reduce-scatter, then Bruck's all-gather, on any n.

    The vector is cut into n blocks; rank r ends the reduce-scatter with the sum of block r. Reduce-scatter step at
    distance d = 2^k (largest first): rank r sends the partial sums of blocks r + d, ..., r + d + c - 1 (mod n),
    c = min(d, n - d), to rank r + d, which adds them to its own; all-gather step at d (smallest first): rank r
    sends its finished blocks r, ..., r + c - 1 to rank r - d. Blocks keep their places in every buffer (the local
    rotation of Bruck's description is the modular index), so a message's blocks need not be contiguous.

    >>> from commlib.collectives.engine import ColumnTrace, StepEngine
    >>> bufs = [np.array([1, 2, 3]), np.array([10, 20, 30]), np.array([100, 200, 300])]
    >>> eng = StepEngine(ColumnTrace(n=3), bufs, np.add)
    >>> bruck_allreduce(eng, 3, 3)
    >>> [b.tolist() for b in bufs], eng.trace.steps
    ([[111, 222, 333], [111, 222, 333], [111, 222, 333]], 4)
    """
    bounds = [b * length // n for b in range(n + 1)]   # block b: [bounds[b], bounds[b + 1]); the longer blocks spread
    # evenly, so any c blocks in a row (mod n) hold floor or ceil of c/n of the vector: a step's largest message is at
    # most one element over the closed form's c M/n

    def elements(first: int, count: int) -> tuple[np.ndarray, tuple[int, ...]]:
        blocks = [(first + j) % n for j in range(count)]
        return np.concatenate([np.arange(bounds[b], bounds[b + 1]) for b in blocks]), tuple(blocks)

    for dist, count in reversed(bruck_blocks(n)):     # reduce-scatter: distance 2^(d-1), ..., 2, 1
        transfers = []
        for r in range(n):
            idx, blocks = elements(r + dist, count)
            transfers.append((r, (r + dist) % n, idx, idx, True, blocks))
        eng.run(transfers, "reduce-scatter")
    for dist, count in bruck_blocks(n):               # all-gather: distance 1, 2, ..., 2^(d-1)
        transfers = []
        for r in range(n):
            idx, blocks = elements(r, count)
            transfers.append((r, (r - dist) % n, idx, idx, False, blocks))
        eng.run(transfers, "all-gather")
