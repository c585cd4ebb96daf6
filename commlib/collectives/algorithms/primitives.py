r"""The other collectives' algorithms, one record each (Thakur, Rabenseifner & Gropp 2005, sec. 4).

``nbytes`` (M) is the whole buffer as nccl-tests counts it: the message for broadcast and
reduce; the whole array, n blocks of M/p, for gather, scatter and all-gather (each rank's block,
MPI's ``sendcount``, is M/p); each rank's input for reduce-scatter (it keeps one block of M/p of
the result); each rank's send buffer for all-to-all (p blocks of M/p, one to each rank). The
binomial-tree forms use :math:`\lceil\lg p\rceil` when p is not a power of two (the trees' traces
show it). Recursive doubling, recursive halving and reduce-scatter + gather are costed for p a
power of two only: MPICH runs them there and adds fold steps or another algorithm elsewhere, so
their ``check`` refuses other p. Bruck's all-to-all is exact for every p.

================  ===================  =============================================================
collective        algorithm            time
================  ===================  =============================================================
broadcast         tree (binomial)      ceil(lg p)(alpha + M beta)
broadcast         scatter_allgather    (ceil(lg p) + p - 1) alpha + 2 (p-1)/p M beta   (van de Geijn)
reduce            tree (binomial)      ceil(lg p)(alpha + M beta + M gamma)
reduce            reduce_scatter_gath  2 lg p alpha + 2 (p-1)/p M beta + (p-1)/p M gamma (Rabenseifner; p = 2^d)
gather, scatter   tree (binomial)      ceil(lg p) alpha + (p-1)/p M beta
reduce_scatter    ring                 (p-1) alpha + (p-1)/p M beta + (p-1)/p M gamma
reduce_scatter    recursive_halving    lg p alpha + (p-1)/p M beta + (p-1)/p M gamma   (p = 2^d)
all_gather        ring                 (p-1) alpha + (p-1)/p M beta
all_gather        recursive_doubling   lg p alpha + (p-1)/p M beta                     (p = 2^d)
all_to_all        pairwise             (p-1) alpha + (p-1)/p M beta
all_to_all        bruck                ceil(lg p) alpha + S(p)/p M beta, S(p) = the 1-bits of 0 .. p-1
================  ===================  =============================================================

Bruck's step k sends the blocks whose position has bit k set, so the bytes are
:math:`S(p)\,M/p` with :math:`S(p) = \sum_{j<p} \mathrm{popcount}(j)`: :math:`\lg p \cdot M/2` when p
is a power of two, less otherwise (p = 3: 2M/3, not M).

>>> BROADCAST["scatter_allgather"].terms(800, 8)
CostTerms(steps=10, bytes=1400.0, reduced=0.0)
>>> ALL_TO_ALL["bruck"].terms(900, 3), ALL_TO_ALL["bruck"].terms(800, 8).bytes
(CostTerms(steps=2, bytes=600.0, reduced=0.0), 1200.0)
"""

from __future__ import annotations

from .base import ZERO, Algorithm, CostTerms, log2_ceil


def _frac(n: int) -> float:
    return (n - 1) / n


def one_bits_below(n: int) -> int:
    """S(n): the 1-bits of 0, 1, ..., n - 1 together (Bruck's blocks sent, summed over its steps).

    >>> [one_bits_below(p) for p in (1, 2, 3, 4, 5, 8, 9)]
    [0, 1, 2, 4, 5, 12, 13]
    """
    return sum(bin(j).count("1") for j in range(n))


def _power_of_two(label: str):
    def check(n: int) -> dict:
        if n & (n - 1):
            raise ValueError(f"algorithm {label} is costed for ranks n a power of two (2, 4, 8, ...), as MPICH "
                             f"runs it; got n = {n}: choose another algorithm, or n = {1 << (n.bit_length() - 1)} or "
                             f"{1 << n.bit_length()}")
        return {}
    return check


def _make(collective: str, name: str, label: str, fn, source: str, powers_of_two: bool = False) -> Algorithm:
    def terms(nbytes: float, n: int) -> CostTerms:
        return ZERO if n == 1 else fn(nbytes, n, log2_ceil(n), _frac(n))
    terms.__doc__ = f"{label} {collective.replace('_', '-')}: see the table of :mod:`commlib.collectives.algorithms.primitives`."
    if powers_of_two:
        return Algorithm(name=name, label=label, collective=collective, terms=terms, source=source,
                         check=_power_of_two(label), constraint="n a power of two")
    return Algorithm(name=name, label=label, collective=collective, terms=terms, source=source)


_T = "Thakur, Rabenseifner & Gropp (2005), sec. 4"

BROADCAST = {a.name: a for a in (
    _make("broadcast", "tree", "binomial tree", lambda m, n, d, f: CostTerms(d, d * m, 0.0), _T),
    _make("broadcast", "scatter_allgather", "scatter + all-gather",
          lambda m, n, d, f: CostTerms(d + n - 1, 2 * f * m, 0.0), "van de Geijn; " + _T),
)}
REDUCE = {a.name: a for a in (
    _make("reduce", "tree", "binomial tree", lambda m, n, d, f: CostTerms(d, d * m, d * m), _T),
    _make("reduce", "reduce_scatter_gather", "reduce-scatter + gather",
          lambda m, n, d, f: CostTerms(2 * d, 2 * f * m, f * m), "Rabenseifner (2004)", powers_of_two=True),
)}
GATHER = {"tree": _make("gather", "tree", "binomial tree", lambda m, n, d, f: CostTerms(d, f * m, 0.0), _T)}
SCATTER = {"tree": _make("scatter", "tree", "binomial tree", lambda m, n, d, f: CostTerms(d, f * m, 0.0), _T)}
REDUCE_SCATTER = {a.name: a for a in (
    _make("reduce_scatter", "ring", "ring", lambda m, n, d, f: CostTerms(n - 1, f * m, f * m), "Patarasuk & Yuan (2009)"),
    _make("reduce_scatter", "recursive_halving", "recursive halving",
          lambda m, n, d, f: CostTerms(d, f * m, f * m), _T, powers_of_two=True),
)}
ALL_GATHER = {a.name: a for a in (
    _make("all_gather", "ring", "ring", lambda m, n, d, f: CostTerms(n - 1, f * m, 0.0), _T),
    _make("all_gather", "recursive_doubling", "recursive doubling", lambda m, n, d, f: CostTerms(d, f * m, 0.0), _T,
          powers_of_two=True),
)}
ALL_TO_ALL = {a.name: a for a in (
    _make("all_to_all", "pairwise", "pairwise exchange", lambda m, n, d, f: CostTerms(n - 1, f * m, 0.0), _T),
    _make("all_to_all", "bruck", "Bruck", lambda m, n, d, f: CostTerms(d, one_bits_below(n) * m / n, 0.0),
          "Bruck et al. (1997)"),
)}
