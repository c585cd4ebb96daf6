r"""2-D torus all-reduce, one direction: ring reduce-scatter along rows, all-reduce along columns, all-gather.

On a ``grid`` = (r, c) of n = rc ranks (default :func:`most_square_grid`), M bytes (Mikami et al.
2018): :math:`2(c-1) + 2(r-1)` start-ups against :math:`2(rc-1)` for one flat ring, and the
ring's bandwidth term (a shorter ring, not a wider one).

>>> terms(1200, 12, grid=(3, 4))
CostTerms(steps=10, bytes=2200.0, reduced=1100.0)
>>> most_square_grid(12), most_square_grid(16), most_square_grid(7)
((3, 4), (4, 4), (1, 7))
"""

from __future__ import annotations

import math

from .base import Algorithm, CostTerms
from .hierarchical import ring_reduce_scatter_terms
from .ring import terms as ring_terms


def most_square_grid(n: int) -> tuple[int, int]:
    """The ``(rows, cols)`` factorisation of ``n`` with rows <= cols and rows as large as possible."""
    from ...units import check_count

    n = check_count("n", n)
    rows = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return rows, n // rows


def check(n: int, grid=None) -> dict:
    """``grid`` = (rows, cols) of whole numbers >= 1 with rows * cols == n; default the most square."""
    if grid is None:
        return {"grid": most_square_grid(n)}
    try:
        rows, cols = (int(x) for x in grid)
        ok = rows >= 1 and cols >= 1 and rows * cols == n and all(float(x).is_integer() for x in grid)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"grid must be (rows, cols) of whole numbers >= 1 with rows * cols == n = {n}; got {grid!r}")
    return {"grid": (rows, cols)}


def terms(nbytes: float, n: int, grid: tuple[int, int]) -> CostTerms:
    """Row reduce-scatter + column ring all-reduce of M/cols + row all-gather."""
    rows, cols = grid
    row = ring_reduce_scatter_terms(nbytes, cols)
    return CostTerms(2 * row.steps, 2 * row.bytes, row.reduced) + ring_terms(nbytes / cols, rows)


def schedule(eng, n: int, length: int, grid: tuple[int, int]) -> None:
    """A row is ``cols`` contiguous ranks; phases row-reduce-scatter, column-allreduce, row-all-gather."""
    from ..schedules import two_level

    rows, cols = grid
    two_level(eng, length, rows, cols, ("row-reduce-scatter", "column-allreduce", "row-all-gather"))


ALGORITHM = Algorithm(
    name="torus", label="2-D torus (rows, columns, rows)", collective="all_reduce", terms=terms,
    schedule=schedule, params=("grid",), check=check, constraint="grid rows x cols = n", family="two-level",
    source="Mikami et al. (2018); Ying et al. (2018)",
)
