r"""Pipelined binary-tree all-reduce: q chunks stream up a binary tree and back down.

The ranks form a binary tree in heap order (rank 0 the root, rank i's children 2i + 1 and
2i + 2), of depth :math:`D = \lfloor\log_2 p\rfloor`. The vector is cut into q chunks (the
``chunks`` parameter) of M/q bytes. In round t, a rank at depth d sends chunk t - (D - d) up
to its parent, which adds it to its own; the root sends chunk t - D down to its children, and
a rank at depth d forwards chunk t - D - d to its children. Reduction and broadcast overlap,
so the whole all-reduce takes

.. math:: q + 2D - 1 \text{ rounds}.

A rank sends and receives several messages in a round (to its parent and its two children), and
its one port carries them one after the other, each with its own start-up, as every message of
every other algorithm here pays :math:`\alpha`: a round costs the busiest port's messages times
:math:`\alpha` plus their bytes times :math:`\beta`. In the steady state an inner rank takes in
two chunks from its children and one from its parent, and sends one up and two down: three
messages of M/q each way per round, so

.. math:: T \approx 3q\,\alpha + 3M\beta + 2M\gamma \quad (q \gg D),

three times the bytes of the ring's :math:`2\frac{p-1}{p}M`; the pipeline is only
:math:`2D - 1` rounds longer than the q rounds every chunk needs, where the ring's is p - 1 steps
long. :func:`terms` counts the start-ups and the busiest port's load exactly, for any p and q
(``steps`` is the start-ups, the busiest port's messages summed over rounds). NCCL's trees are
binary and pipelined this way; see :mod:`commlib.collectives.algorithms.double_binary_tree` for the
pair of trees that halves the bytes.

>>> terms(1200, 2, chunks=3)      # 2 ranks: 3 + 2 - 1 = 4 rounds, one message of 400 B each
CostTerms(steps=4, bytes=1600.0, reduced=1200.0)
>>> rounds(7, 7)                  # 7 ranks, D = 2: 7 + 4 - 1 rounds
10
>>> terms(7000, 7, chunks=7).steps   # start-ups: up to three messages a round at an inner rank's port
26
"""

from __future__ import annotations

import math
from functools import lru_cache

from .base import ZERO, Algorithm, CostTerms, check_chunks, log2_floor

#: ``chunks`` q: a whole number >= 1, or None (1 for the closed form; the fastest q for a time).
check = check_chunks


def tree_positions(n: int, trees: int) -> list[list[int]]:
    """For each tree, the heap position of every rank: tree 0 in rank order, tree 1 reversed."""
    forward = list(range(n))
    return [forward, forward[::-1]][:trees]


def _windows(n: int, pos: int, depth_total: int) -> tuple[int, int, bool]:
    d = log2_floor(pos + 1)
    kids = sum(1 for c in (2 * pos + 1, 2 * pos + 2) if c < n)
    return d, kids, pos != 0


def unit_loads(n: int, q: int, trees: int) -> tuple[int, int, int]:
    """``(rounds, port chunks, reduced chunks)``: rounds, and the busiest port's and busiest reducer's
    chunk counts summed over rounds, for ``trees`` trees of q chunks each (exact, no simulation).

    Every window of a rank's load opens in one of the first 2D rounds and stays open q rounds.
    Once q >= 2D, all windows are open together in the middle rounds, and one more chunk adds one
    more such round: the counts grow linearly in q from there, so two exact counts give all the
    others (a test checks this against :func:`_unit_loads_counted` for every q up to 600).
    """
    D = log2_floor(n)
    q0 = 2 * D
    if q <= q0 + 1:
        return _unit_loads_counted(n, q, trees)
    _, port0, red0 = _unit_loads_counted(n, q0, trees)
    _, port1, red1 = _unit_loads_counted(n, q0 + 1, trees)
    return q + 2 * D - 1, port0 + (q - q0) * (port1 - port0), red0 + (q - q0) * (red1 - red0)


@lru_cache(maxsize=4096)
def _unit_loads_counted(n: int, q: int, trees: int) -> tuple[int, int, int]:
    """:func:`unit_loads` counted round by round: ranks with the same (depth, children, has parent)
    in every tree load their ports alike, so the maximum is taken over those few kinds, between
    the rounds where some window opens or closes.
    """
    D = log2_floor(n)
    rounds = q + 2 * D - 1
    kinds = set()
    positions = tree_positions(n, trees)
    for r in range(n):
        kinds.add(tuple(_windows(n, positions[k][r], D) for k in range(trees)))
    # per kind: windows (start, weight, kind of load) over rounds [start, start + q)
    loads = []
    edges = {0, rounds}
    for kind in kinds:
        win = []
        for d, kids, up in kind:
            if up:
                win.append((D - d, 1, "out"))          # chunk to the parent
                win.append((D + d - 1, 1, "in"))       # chunk from the parent
            if kids:
                win.append((D - d - 1, kids, "red"))   # chunks from the children, reduced
                win.append((D + d, kids, "outk"))      # chunks to the children
        for s, _, _ in win:
            edges.update((max(0, min(rounds, s)), max(0, min(rounds, s + q))))
        loads.append(win)
    cuts = sorted(edges)
    port = reduced = 0
    for a, b in zip(cuts, cuts[1:]):
        best_port = best_red = 0
        for win in loads:
            inn = out = red = 0
            for s, w, what in win:
                if s <= a < s + q:
                    if what == "in":
                        inn += w
                    elif what == "red":
                        inn += w
                        red += w
                    else:
                        out += w
            best_port = max(best_port, inn, out)
            best_red = max(best_red, red)
        port += best_port * (b - a)
        reduced += best_red * (b - a)
    return rounds, port, reduced


def rounds(n: int, q: int) -> int:
    """Rounds of a pipelined binary tree of q chunks on n ranks: q + 2D - 1 (0 on one rank)."""
    return 0 if n == 1 else q + 2 * log2_floor(n) - 1


def tree_terms(nbytes: float, n: int, q: int, trees: int) -> CostTerms:
    """Terms of ``trees`` pipelined binary trees, each carrying M/trees in q chunks.

    Every message is one chunk of M/(trees q), so the busiest port's messages, summed over the
    rounds, are both its start-ups and (times the chunk) its bytes.
    """
    if n == 1:
        return ZERO
    _, port, red = unit_loads(n, q, trees)
    chunk = nbytes / (trees * q)
    return CostTerms(port, port * chunk, red * chunk)


def terms(nbytes: float, n: int, chunks: int | None = None) -> CostTerms:
    """Rounds, busiest port's bytes and busiest reducer's bytes of one pipelined binary tree."""
    return tree_terms(nbytes, n, chunks or 1, 1)


def best_chunks(nbytes: float, n: int, bandwidth: float, latency: float, trees: int = 1,
                gamma: float = 0.0, most: int = 4096) -> int:
    r"""The number of chunks q (1 .. ``most``) that makes the all-reduce fastest on this link: the exact optimum.

    More chunks shorten the pipeline's fill and drain (2D - 1 rounds of M/q) but add start-ups.
    Every q up to :math:`q_0 = 2D + 1` is timed. Beyond it the busiest port's messages (its
    start-ups) and the busiest reducer's chunk counts grow linearly in q (:func:`unit_loads`), by
    s start-ups a chunk, so the time is :math:`T(q) = A + sq\alpha + C/q` with constants A and C:
    convex in q, with its real minimum at :math:`\sqrt{C/(s\alpha)}`. The two whole numbers around
    it (clamped to :math:`q_0 .. ` ``most``) are timed too; no other q can be faster (a test
    compares every q up to 4096).

    >>> best_chunks(1e9, 16, 12.5e9, 0.0)      # no latency: as many chunks as allowed
    4096
    >>> best_chunks(8.0, 16, 12.5e9, 1e-6)     # tiny message: one chunk
    1
    """
    if n == 1 or nbytes <= 0:
        return 1
    D = log2_floor(n)
    q0 = min(most, 2 * D + 1)

    def seconds(q: int) -> float:
        return tree_terms(nbytes, n, q, trees).time(bandwidth, latency, gamma)

    candidates = set(range(1, q0 + 1))
    if most > q0:
        # T(q) = A + s q alpha + C/q for q >= q0, s the start-ups one more chunk adds: C from the
        # time at q0 and q0 + 1
        s = unit_loads(n, q0 + 1, trees)[1] - unit_loads(n, q0, trees)[1]
        t0, t1 = seconds(q0), seconds(q0 + 1)
        # T(q0) - T(q0 + 1) = -s alpha + C (1/q0 - 1/(q0 + 1))
        c = (t0 - t1 + s * latency) * q0 * (q0 + 1)
        if c <= 0:
            pass                                  # T rises with q: q0 is the best of this range
        elif latency <= 0:
            candidates.add(most)                  # T falls with q: as many chunks as allowed
        else:
            star = math.sqrt(c / (s * latency))
            for q in (math.floor(star), math.ceil(star)):
                candidates.add(max(q0, min(most, q)))
        candidates.add(q0 + 1)
    return min(sorted(candidates), key=seconds)


def tree_seconds(trees: int):
    """A ``seconds`` function for the registry: the slowest link used, the best q when ``chunks`` is None.

    With one rank a host (``hosts == n``) only the link between hosts is used.
    """
    def seconds(nbytes, n, bandwidth, latency, gamma, *, hosts=1, inter_bandwidth=None, inter_latency=None,
                chunks=None, **_):
        b, lat = bandwidth, latency
        inter_b = bandwidth if inter_bandwidth is None else inter_bandwidth
        inter_l = latency if inter_latency is None else inter_latency
        if hosts == n:                    # one rank a host: every hop crosses the network
            b, lat = inter_b, inter_l
        elif hosts > 1:
            b, lat = min(bandwidth, inter_b), max(latency, inter_l)
        q = chunks or best_chunks(nbytes, n, b, lat, trees, gamma)
        return tree_terms(nbytes, n, q, trees).time(b, lat, gamma)
    return seconds


def run_trees(eng, n: int, length: int, q: int, trees: int) -> None:
    """Execute ``trees`` pipelined binary trees (tree k carries part k of the vector) round by round."""
    from ..engine import split_bounds

    D = log2_floor(n)
    parts = split_bounds(0, length, trees)
    bounds = [split_bounds(int(parts[k]), int(parts[k + 1]), q) for k in range(trees)]
    rank_at = [list(range(n)), list(range(n))[::-1]][:trees]   # heap position -> rank

    def piece(k: int, j: int) -> slice:
        return slice(int(bounds[k][j]), int(bounds[k][j + 1]))

    for t in range(q + 2 * D - 1):
        transfers = []
        for k in range(trees):
            rank = rank_at[k]
            for pos in range(n):
                d = log2_floor(pos + 1)
                up = t - (D - d)
                if pos and 0 <= up < q:   # partial sum of chunk `up` to the parent, who adds it
                    transfers.append((rank[pos], rank[(pos - 1) // 2], piece(k, up), piece(k, up), True, (k, up)))
                down = t - D - d
                if 0 <= down < q:         # finished chunk `down` to the children, who copy it
                    for c in (2 * pos + 1, 2 * pos + 2):
                        if c < n:
                            transfers.append((rank[pos], rank[c], piece(k, down), piece(k, down), False, (k, down)))
        eng.run(transfers, "tree")


def schedule(eng, n: int, length: int, chunks: int | None = None) -> None:
    """One binary tree in heap order, q = ``chunks`` chunks, reduction and broadcast overlapped."""
    run_trees(eng, n, length, chunks or 1, 1)


ALGORITHM = Algorithm(
    name="pipelined_tree", label="pipelined binary tree", collective="all_reduce", terms=terms,
    schedule=schedule, params=("chunks",), check=check, constraint="any n; q chunks >= 1", family="pipelined",
    seconds=tree_seconds(1), multi_port=True, best_chunks=lambda m, n, b, lat: best_chunks(m, n, b, lat, trees=1),
    source="Sanders, Speck & Träff (2009); NVIDIA NCCL 2.4 trees (Jeaugey 2019)",
)
