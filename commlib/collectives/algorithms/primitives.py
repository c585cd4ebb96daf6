r"""The other collectives' algorithms, one record each (Thakur, Rabenseifner & Gropp 2005, sec. 4).

``nbytes`` (M) is the whole buffer as nccl-tests counts it: the message for broadcast and
reduce; the full gathered array for gather, scatter, all-gather, reduce-scatter and all-to-all
(each rank owns M/p). The ``lg p`` forms use the ceiling when p is not a power of two.

================  ===================  =============================================================
collective        algorithm            time
================  ===================  =============================================================
broadcast         tree (binomial)      ceil(lg p)(alpha + M beta)
broadcast         scatter_allgather    (lg p + p - 1) alpha + 2 (p-1)/p M beta   (van de Geijn)
reduce            tree (binomial)      ceil(lg p)(alpha + M beta + M gamma)
reduce            reduce_scatter_gath  2 lg p alpha + 2 (p-1)/p M beta + (p-1)/p M gamma (Rabenseifner)
gather, scatter   tree (binomial)      ceil(lg p) alpha + (p-1)/p M beta
reduce_scatter    ring                 (p-1) alpha + (p-1)/p M beta + (p-1)/p M gamma
reduce_scatter    recursive_halving    lg p alpha + (p-1)/p M beta + (p-1)/p M gamma
all_gather        ring                 (p-1) alpha + (p-1)/p M beta
all_gather        recursive_doubling   lg p alpha + (p-1)/p M beta
all_to_all        pairwise             (p-1) alpha + (p-1)/p M beta
all_to_all        bruck                ceil(lg p) alpha + ceil(lg p) M/2 beta
================  ===================  =============================================================

>>> BROADCAST["scatter_allgather"].terms(800, 8)
CostTerms(steps=10, bytes=1400.0, reduced=0.0)
"""

from __future__ import annotations

from .base import ZERO, Algorithm, CostTerms, log2_ceil


def _frac(n: int) -> float:
    return (n - 1) / n


def _make(collective: str, name: str, label: str, fn, source: str) -> Algorithm:
    def terms(nbytes: float, n: int) -> CostTerms:
        return ZERO if n == 1 else fn(nbytes, n, log2_ceil(n), _frac(n))
    terms.__doc__ = f"{label} {collective.replace('_', '-')}: see the table of :mod:`commlib.collectives.algorithms.primitives`."
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
          lambda m, n, d, f: CostTerms(2 * d, 2 * f * m, f * m), "Rabenseifner (2004)"),
)}
GATHER = {"tree": _make("gather", "tree", "binomial tree", lambda m, n, d, f: CostTerms(d, f * m, 0.0), _T)}
SCATTER = {"tree": _make("scatter", "tree", "binomial tree", lambda m, n, d, f: CostTerms(d, f * m, 0.0), _T)}
REDUCE_SCATTER = {a.name: a for a in (
    _make("reduce_scatter", "ring", "ring", lambda m, n, d, f: CostTerms(n - 1, f * m, f * m), "Patarasuk & Yuan (2009)"),
    _make("reduce_scatter", "recursive_halving", "recursive halving",
          lambda m, n, d, f: CostTerms(d, f * m, f * m), _T),
)}
ALL_GATHER = {a.name: a for a in (
    _make("all_gather", "ring", "ring", lambda m, n, d, f: CostTerms(n - 1, f * m, 0.0), _T),
    _make("all_gather", "recursive_doubling", "recursive doubling", lambda m, n, d, f: CostTerms(d, f * m, 0.0), _T),
)}
ALL_TO_ALL = {a.name: a for a in (
    _make("all_to_all", "pairwise", "pairwise exchange", lambda m, n, d, f: CostTerms(n - 1, f * m, 0.0), _T),
    _make("all_to_all", "bruck", "Bruck", lambda m, n, d, f: CostTerms(d, d * m / 2, 0.0), "Bruck et al. (1997)"),
)}
