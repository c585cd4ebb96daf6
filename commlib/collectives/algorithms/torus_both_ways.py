r"""2-D torus all-reduce with rings on both dimensions in both directions (Ying et al. 2018).

On a k x k torus (n = k², rank = row * k + column, k >= 3) every rank has four full-duplex
links. The vector is cut into four quarters, each all-reduced by the two-level algorithm of
:mod:`commlib.collectives.algorithms.torus` (ring reduce-scatter along one dimension, ring all-reduce of
the shard along the other, ring all-gather along the first), all four at once: one starts along
the rows in the + direction, one along the rows in the - direction, two along the columns, one
each way. At every step each quarter uses its own link direction, so all eight link directions
of a rank work and none carries two messages. With Q = M/4:

.. math:: T = 4(k-1)\,\alpha + 2\frac{k-1}{k}\Big(Q + \frac{Q}{k}\Big)\beta + \frac{n-1}{n}M\gamma
          = 4(k-1)\,\alpha + \frac{n-1}{2n}M\beta + \frac{n-1}{n}M\gamma ,

a quarter of the ring's bandwidth term :math:`2\frac{n-1}{n}M\beta`, where the one-way torus
(:mod:`commlib.collectives.algorithms.torus`) keeps the ring's bandwidth term and only shortens the ring
(the scaling book's torus costs, Austin et al. 2025). A message is charged to its link: the
algorithm drives four links per rank (``links_per_rank=4``); behind a switch, one port per rank,
the four quarters share the port and the bandwidth term is the ring's.

>>> terms(1600, 16, grid=(4, 4))       # 12 steps; (16-1)/(2*16) * 1600 B
CostTerms(steps=12, bytes=750.0, reduced=1500.0)
"""

from __future__ import annotations

import math

from .base import ZERO, Algorithm, CostTerms


def check(n: int, grid=None) -> dict:
    """``grid`` = (k, k) with k >= 3 and k * k == n; default the square root of n."""
    k = math.isqrt(n)
    if grid is None:
        if k < 3 or k * k != n:
            raise ValueError(f"n must be a square of at least 9 (9, 16, 25, ...) for the 2-D torus both ways; got {n}")
        grid = (k, k)
    try:
        rows, cols = (int(x) for x in grid)
        ok = rows == cols >= 3 and rows * cols == n and all(float(x).is_integer() for x in grid)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"grid must be a square (k, k) with k >= 3 and k * k == n = {n} (n = 9, 16, 25, ...); "
                         f"got {grid!r}")
    return {"grid": (rows, cols)}


def terms(nbytes: float, n: int, grid: tuple[int, int]) -> CostTerms:
    """4 (k-1) steps; per step each link carries one message of a quarter's chunk."""
    k = grid[0]
    if n == 1:
        return ZERO
    q = nbytes / 4
    f = (k - 1) / k
    return CostTerms(4 * (k - 1), 2 * f * q + 2 * f * q / k, 4 * (f * q + f * q / k))


def schedule(eng, n: int, length: int, grid: tuple[int, int]) -> None:
    """The four quarters' two-level steps merged step by step."""
    from ..schedules import torus_both_ways

    torus_both_ways(eng, length, grid[0])


ALGORITHM = Algorithm(
    name="torus_both_ways", label="2-D torus, both dimensions both ways", collective="all_reduce", terms=terms,
    schedule=schedule, params=("grid",), check=check, constraint="square grid k x k = n, k >= 3",
    family="two-level", multi_port=True, links_per_rank=4,
    source="Ying et al. (2018); Austin et al. (2025), How to Scale Your Model",
)
