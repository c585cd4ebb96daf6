r"""The algorithm registry: every collective algorithm the book runs and costs, defined once.

Each algorithm is a frozen :class:`~commlib.collectives.algorithms.base.Algorithm` record, one module per
all-reduce algorithm in this package (``ring.py``, ``tree.py``, ...); the other collectives'
algorithms are in :mod:`commlib.collectives.algorithms.primitives`. Everything else reads this registry:

* :func:`commlib.cost.allreduce_terms` and :func:`commlib.cost.collective_terms` call ``terms``;
* :func:`commlib.collectives.simulate.allreduce` runs ``schedule`` on real arrays;
* :mod:`commlib.collectives.compare`, the calculators, the figures and the tests iterate :data:`ALLREDUCE`.

Adding an all-reduce algorithm is one new module here with an ``ALGORITHM`` record and its name on one
line of :data:`_MODULES`: the registry-wide tests then run and cost it (CONTRIBUTING.md shows a worked
example, and what the chapters need besides).

This package imports no numpy: the schedules import the step engine when they run.

>>> list(ALLREDUCE)[:3], ALLREDUCE["ring"].label
(['ring', 'tree', 'recursive_doubling'], 'ring')
>>> allreduce_algorithm("ring").cost(1200, 4)
CostTerms(steps=6, bytes=1800.0, reduced=900.0)
>>> flat = names("all_reduce", family="flat")      # the one-port rivals, in registry order
>>> flat[0], {"tree", "recursive_doubling", "naive"} <= set(flat), "pipelined_tree" in flat
('ring', True, False)
"""

from __future__ import annotations

import importlib

from . import primitives
from .base import ZERO, Algorithm, CostTerms, log2_ceil, log2_floor

__all__ = ["Algorithm", "CostTerms", "ZERO", "ALLREDUCE", "COLLECTIVES", "allreduce_algorithm", "algorithm",
           "names", "label", "log2_ceil", "log2_floor"]

#: The all-reduce modules of this package, one a line, in the order the book lists them (today the flat ones
#: first); each is imported here and its ``ALGORITHM`` registered. A new one goes at the end: the others keep
#: their places, and with them their looks in chapter 2's figure.
_MODULES = (
    "ring",
    "tree",
    "recursive_doubling",
    "halving_doubling",
    "naive",
    "pipelined_tree",
    "double_binary_tree",
    "multi_rail_ring",
    "hierarchical",
    "torus",
    "torus_both_ways",
    "bruck",
)

#: Every all-reduce algorithm by name.
ALLREDUCE: dict[str, Algorithm] = {
    record.name: record for record in (importlib.import_module(f"{__name__}.{m}").ALGORITHM for m in _MODULES)}

#: Every collective's algorithms by name; the first of each is its default.
COLLECTIVES: dict[str, dict[str, Algorithm]] = {
    "broadcast": primitives.BROADCAST,
    "reduce": primitives.REDUCE,
    "gather": primitives.GATHER,
    "scatter": primitives.SCATTER,
    "reduce_scatter": primitives.REDUCE_SCATTER,
    "all_gather": primitives.ALL_GATHER,
    "all_to_all": primitives.ALL_TO_ALL,
    "all_reduce": ALLREDUCE,
}


def algorithm(collective: str, name: str | None = None) -> Algorithm:
    """The record of ``name`` for ``collective`` (its default when ``name`` is None), or ValueError."""
    if collective not in COLLECTIVES:
        raise ValueError(f"op must be one of {', '.join(COLLECTIVES)}; got {collective!r}")
    table = COLLECTIVES[collective]
    if name is None:
        return next(iter(table.values()))
    if name not in table:
        raise ValueError(f"algorithm for {collective} must be one of {', '.join(table)}; got {name!r}")
    return table[name]


def allreduce_algorithm(name: str) -> Algorithm:
    """The all-reduce record called ``name``, or ValueError listing the names."""
    if not isinstance(name, str) or name not in ALLREDUCE:
        raise ValueError(f"algorithm must be one of {', '.join(ALLREDUCE)}; got {name!r}")
    return ALLREDUCE[name]


def names(collective: str = "all_reduce", family: str | None = None) -> tuple[str, ...]:
    """Algorithm names of ``collective``, in registry order, optionally of one ``family`` only."""
    table = COLLECTIVES[collective]
    return tuple(a.name for a in table.values() if family is None or a.family == family)


def label(name: str) -> str:
    """The label a reader sees for any algorithm name (all-reduce first, then the other collectives)."""
    if name in ALLREDUCE:
        return ALLREDUCE[name].label
    for table in COLLECTIVES.values():
        if name in table:
            return table[name].label
    return name.replace("_", " ")
