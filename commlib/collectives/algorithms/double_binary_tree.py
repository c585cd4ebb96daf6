r"""Double binary tree all-reduce (NCCL's tree): two pipelined binary trees, each carrying half.

Tree 0 is the heap-ordered binary tree of :mod:`commlib.collectives.algorithms.pipelined_tree`; tree 1 is
the same tree over the ranks in reverse order. The inner ranks of a heap are its first
:math:`\lfloor p/2\rfloor` positions, so a rank that is inner in one tree is a leaf in the
other (Sanders, Speck & Träff 2009; NCCL 2.4, Jeaugey 2019). Each tree all-reduces M/2 in q
chunks, both at once. A rank now takes in, per round, at most two chunks from its children
and one from its parent in its inner tree plus one from its parent in its leaf tree: four
chunks of M/(2q), and sends as many: four messages each way, one after the other through its
port, each with its own start-up (as every message of every algorithm here pays
:math:`\alpha`), so

.. math:: T \approx 4q\,\alpha + 2M\beta + M\gamma \quad (q \gg D),

close to the ring's :math:`2\frac{p-1}{p}M\beta` with :math:`\lfloor\log_2 p\rfloor`-deep
pipelines instead of p - 1 steps. :func:`terms` counts exactly (``steps``: the start-ups, the
busiest port's messages summed over the q + 2D - 1 rounds).

>>> terms(4000, 2, chunks=1)    # 2 ranks, q = 1: 2 rounds, a rank sends one message of 2000 B in each
CostTerms(steps=2, bytes=4000.0, reduced=2000.0)
>>> terms(4000, 8, chunks=100).steps   # 8 ranks: about 4 messages a round at the busiest port
404
>>> parents(4)                          # tree 0: 0 is the root; tree 1: 3 is
[[None, 0, 0, 1], [2, 3, 3, None]]
"""

from __future__ import annotations

from .base import Algorithm, CostTerms
from .pipelined_tree import best_chunks, check, run_trees, tree_positions, tree_seconds, tree_terms


def parents(n: int) -> list[list[int | None]]:
    """For each of the two trees, every rank's parent (None for the root): heap order, then reversed.

    In heap order the parent of position p is position (p - 1) // 2; a rank's position is its
    number in tree 0 and n - 1 minus its number in tree 1 (:func:`tree_positions`).
    """
    out = []
    for pos in tree_positions(n, 2):
        rank_at = {p: r for r, p in enumerate(pos)}
        out.append([None if pos[r] == 0 else rank_at[(pos[r] - 1) // 2] for r in range(n)])
    return out


def inner_ranks(n: int) -> list[frozenset[int]]:
    """For each tree, the ranks that have children in it (the others are its leaves)."""
    return [frozenset(p for p in tree if p is not None) for tree in parents(n)]


def terms(nbytes: float, n: int, chunks: int | None = None) -> CostTerms:
    """Rounds, busiest port's bytes and busiest reducer's bytes of the two trees together."""
    return tree_terms(nbytes, n, chunks or 1, 2)


def schedule(eng, n: int, length: int, chunks: int | None = None) -> None:
    """Both trees at once: tree 0 on the first half of the vector, tree 1 (ranks reversed) on the second."""
    run_trees(eng, n, length, chunks or 1, 2)


ALGORITHM = Algorithm(
    name="double_binary_tree", label="double binary tree (NCCL)", collective="all_reduce", terms=terms,
    schedule=schedule, params=("chunks",), check=check, constraint="any n; q chunks >= 1", family="pipelined",
    seconds=tree_seconds(2), multi_port=True, best_chunks=lambda m, n, b, lat: best_chunks(m, n, b, lat, trees=2),
    source="Sanders, Speck & Träff (2009); Jeaugey (2019), NCCL 2.4 double binary trees",
)
