r"""Which algorithm MPICH runs for a collective, by message size and number of ranks.

An MPI library does not run one algorithm per collective: it picks one per
call, from the message size and the number of processes, with thresholds
that are part of its configuration (MPICH's "control variables", CVARs).
A cost model fitted to its timings has to count the steps and bytes of the
algorithm that actually ran, or it fits the wrong line.

The defaults below are MPICH's automatic choices for an intra-node
communicator (``MPIR_Bcast_intra_auto`` and its siblings in
``src/mpi/coll/``), which follow Thakur, Rabenseifner & Gropp (2005):

* **broadcast**: a binomial tree when the message is short
  (< ``MPIR_CVAR_BCAST_SHORT_MSG_SIZE`` = 12,288 B) *or* when there are fewer
  than ``MPIR_CVAR_BCAST_MIN_PROCS`` = 8 processes; otherwise scatter then
  all-gather: the all-gather by recursive doubling up to
  ``MPIR_CVAR_BCAST_LONG_MSG_SIZE`` = 524,288 B on a power of two
  (``scatter_recursive_doubling`` here, 2 lg p steps), else by a ring
  (``scatter_allgather``, lg p + p - 1 steps). So on 2 or 4 ranks MPICH
  broadcasts with a binomial tree at every size.
* **all-reduce**: recursive doubling for messages of at most 8 B (or when
  there are fewer elements than ranks), Rabenseifner's reduce-scatter +
  all-gather (:mod:`commlib.cost`'s ``halving_doubling``) above. (MPICH 3's
  ``MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE`` put that switch at 2,048 B; the
  selection table compiled into MPICH 4 and 5 puts it at 8 B.)
* **all-gather**: on a power of two, recursive doubling while the whole
  gathered array is below ``MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE`` = 524,288 B;
  on other counts, Bruck's algorithm (``bruck`` here, ceil(lg p) steps)
  below ``MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE`` = 81,920 B; a ring above.
* **reduce-scatter** (commutative operator): recursive halving below
  ``MPIR_CVAR_REDSCAT_COMMUTATIVE_LONG_MSG_SIZE`` = 524,288 B, pairwise
  exchange above, which sends what the ring sends in as many steps
  (``ring`` here).

A library may be configured otherwise (environment variables, tuning
files): these are the defaults, not a law. MPICH 4 and 5 keep them in a
selection table compiled into the library; :func:`library_table` reads it
from the installed ``libmpi``, and a test holds these thresholds against it.
On one node the device layer (ch4's shared-memory collectives) is consulted
first and may run its own shared-memory algorithm instead.

>>> algorithm("broadcast", 64 * 2**20, 4), algorithm("broadcast", 64 * 2**20, 16)
('tree', 'scatter_allgather')
>>> algorithm("broadcast", 16 * 2**10, 64), terms("broadcast", 16 * 2**10, 64).steps
('scatter_recursive_doubling', 12)
>>> algorithm("all_reduce", 8, 2), algorithm("all_reduce", 1024, 4)
('recursive_doubling', 'halving_doubling')
"""

from __future__ import annotations

import glob
import json
import os
import sys

from ..collectives.algorithms.base import CostTerms
from ..collectives.cost import collective_terms
from ..units import check_count, check_nonnegative

__all__ = ["THRESHOLDS", "OPS", "algorithm", "algorithms", "terms", "library_table", "shm_table", "shm_choice", "shm_sentence"]

#: MPICH's default thresholds (bytes, or processes for ``bcast_min_procs``).
THRESHOLDS = {
    "bcast_short_msg_size": 12288,
    "bcast_long_msg_size": 524288,
    "bcast_min_procs": 8,
    "allreduce_short_msg_size": 8,
    "allgather_long_msg_size": 524288,
    "allgather_short_msg_size": 81920,
    "redscat_commutative_long_msg_size": 524288,
}

#: Collectives whose automatic choice this module knows.
OPS = ("broadcast", "all_reduce", "all_gather", "reduce_scatter")


def _pof2(n: int) -> bool:
    return n & (n - 1) == 0


def algorithm(op: str, nbytes: float, n: int, itemsize: int = 4) -> str:
    """The :mod:`commlib.cost` algorithm MPICH runs for ``op`` on ``nbytes`` bytes over ``n`` ranks.

    ``nbytes`` follows nccl-tests: the whole buffer (the message for
    broadcast and all-reduce, the full gathered or scattered array for
    all-gather and reduce-scatter). ``itemsize`` is the bytes per element
    (float32: 4), needed for all-reduce's "fewer elements than ranks" rule.

    The name is a :mod:`commlib.cost` algorithm of ``op``, except two that
    MPICH composes from others: ``"scatter_recursive_doubling"`` (broadcast:
    binomial scatter, then recursive-doubling all-gather) and, for
    all-gather, ``"bruck"`` (Bruck's all-gather); :func:`terms` counts all.
    """
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}; got {op!r}")
    check_nonnegative("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    t = THRESHOLDS
    if op == "broadcast":  # the library's table: avg_msg_size<=12288, <=524288
        if nbytes <= t["bcast_short_msg_size"] or n < t["bcast_min_procs"]:
            return "tree"
        if _pof2(n) and nbytes <= t["bcast_long_msg_size"]:
            return "scatter_recursive_doubling"
        return "scatter_allgather"
    if op == "all_reduce":
        pof2 = 1 << (n.bit_length() - 1)
        if nbytes <= t["allreduce_short_msg_size"] or nbytes / itemsize < pof2:
            return "recursive_doubling"
        return "halving_doubling"
    if op == "all_gather":
        if _pof2(n) and nbytes < t["allgather_long_msg_size"]:
            return "recursive_doubling"
        if not _pof2(n) and nbytes < t["allgather_short_msg_size"]:
            return "bruck"
        return "ring"
    # reduce_scatter
    if _pof2(n) and nbytes < t["redscat_commutative_long_msg_size"]:
        return "recursive_halving"
    return "ring"


def terms(op: str, nbytes: float, n: int, itemsize: int = 4) -> CostTerms:
    """The cost-model counts (steps, bytes, bytes combined) of what MPICH runs for ``op`` (see :func:`algorithm`).

    Broadcast's scatter + recursive-doubling all-gather takes lg p steps to
    scatter and lg p to gather, each moving (p-1)/p M: on 64 ranks 12 steps,
    where scatter + ring all-gather would take 6 + 63 = 69. Bruck's
    all-gather takes ceil(lg p) steps and moves (p-1)/p M, as the ring does.

    >>> terms("broadcast", 2**14, 64).steps, terms("broadcast", 2**20, 64).steps
    (12, 69)
    >>> terms("all_gather", 6000, 6)
    CostTerms(steps=3, bytes=5000.0, reduced=0.0)
    """
    name = algorithm(op, nbytes, n, itemsize)
    if name == "scatter_recursive_doubling":
        s = collective_terms("scatter", nbytes, n, "tree")
        g = collective_terms("all_gather", nbytes, n, "recursive_doubling")
        return CostTerms(s.steps + g.steps, s.bytes + g.bytes, 0.0)
    if name == "bruck":
        ring = collective_terms("all_gather", nbytes, n, "ring")
        return CostTerms((n - 1).bit_length(), ring.bytes, 0.0)
    return collective_terms(op, nbytes, n, name)


def algorithms(op: str, sizes, n: int) -> list[str]:
    """:func:`algorithm` for each size of ``sizes`` (bytes)."""
    return [algorithm(op, x, n) for x in sizes]


_TABLE_START = b'{"collective=bcast":{"comm_type=intra":{"comm_size<8"'


def _table_in_library(opening: bytes, paths=None) -> dict | None:
    """The JSON table that starts with ``opening`` in the first of ``paths`` holding it (default: the
    installed ``libmpi.so*``), or None."""
    if paths is None:
        paths = sorted(glob.glob(os.path.join(sys.prefix, "lib", "libmpi.so*")))
    for path in paths:
        with open(path, "rb") as fh:
            data = fh.read()
        start = data.find(opening)
        if start >= 0:
            return json.JSONDecoder().raw_decode(data[start:].decode("latin-1"))[0]
    return None


def library_table(paths=None) -> dict | None:
    """The algorithm-selection table compiled into the installed MPICH (``libmpi``), or None if not found.

    ``paths`` are library files to search (default: ``libmpi.so*`` under
    this Python's prefix, where the ``mpich`` wheel installs it). The table
    is MPICH's JSON: nested conditions (``"comm_size<8"``,
    ``"avg_msg_size<=12288"``, ...) down to ``"algorithm=MPIR_..."``.
    """
    return _table_in_library(_TABLE_START, paths)


_SHM_START = b'{"collective=bcast":{"comm_type=intra":{"is_multi_threaded='
_SHM_NAMES = {"broadcast": "collective=bcast", "all_reduce": "collective=allreduce"}


def shm_table(paths=None) -> dict | None:
    """The shared-memory (ch4 POSIX) selection table compiled into the installed MPICH, or None if not found.

    On one node MPICH asks this table first; where it offers no algorithm for
    a call, MPICH falls back to its generic table (:func:`library_table`).
    """
    return _table_in_library(_SHM_START, paths)


def shm_choice(op: str, multi_threaded: bool, table: dict | None) -> str | None:
    """The shared-memory algorithm ``table`` (:func:`shm_table`) offers ``op`` on one node, or None for none.

    The table's branches are conditions; ``is_multi_threaded=no`` holds only
    when MPI was initialised below ``MPI_THREAD_MULTIPLE`` (mpi4py asks for
    ``MPI_THREAD_MULTIPLE`` by default). Commutative sums are assumed.

    >>> t = {"collective=bcast": {"comm_type=intra": {"is_multi_threaded=no": {"algorithm=X_release_gather": {}}}}}
    >>> shm_choice("broadcast", False, t), shm_choice("broadcast", True, t), shm_choice("all_gather", False, t)
    ('X_release_gather', None, None)
    """
    node = (table or {}).get(_SHM_NAMES.get(op, ""), {}).get("comm_type=intra", {})
    while node:
        key = next(iter(node))
        if key.startswith("algorithm="):
            return key[len("algorithm="):]
        if key == "is_multi_threaded=no" and multi_threaded or key == "is_multi_threaded=yes" and not multi_threaded:
            return None
        if key not in ("is_multi_threaded=no", "is_multi_threaded=yes", "is_commutative=yes"):
            return None
        node = node[key]
    return None


def shm_sentence(doc: dict, table: dict | None) -> str:
    """Why a run's broadcast and all-reduce are (or may not be) MPICH's generic algorithms, in words.

    ``doc``: a :mod:`commlib.lab.measure` result, which records the ranks'
    thread level; ``table``: :func:`shm_table`.

    >>> t = {"collective=bcast": {"comm_type=intra": {"is_multi_threaded=no": {"algorithm=X_release_gather": {}}}}}
    >>> shm_sentence({"thread_level": 3, "thread_multiple": 3}, t)[:63]
    'On one node MPICH first asks its shared-memory layer, whose tab'
    """
    level, multiple = doc.get("thread_level"), doc.get("thread_multiple")
    if level is None or table is None:
        return ("On one node MPICH first asks its shared-memory layer, which may broadcast through a shared buffer "
                "instead; this run could not read which, so the tree is the model's best reading, not a certainty.")
    threaded = level == multiple
    offered = {op: shm_choice(op, threaded, table) for op in ("broadcast", "all_reduce")}
    if not any(offered.values()):
        return ("On one node MPICH first asks its shared-memory layer, whose table in the installed library offers "
                "its shared-buffer broadcast and all-reduce only to a program that runs MPI below "
                "MPI_THREAD_MULTIPLE. mpi4py starts MPI at MPI_THREAD_MULTIPLE, and the ranks of this run report "
                "that level (MPI.Query_thread()), so MPICH fell back to its generic table: the binomial tree for "
                "broadcast and reduce-scatter + all-gather for all-reduce.")
    names = ", ".join(f"{op.replace('_', '-')}: {name}" for op, name in offered.items() if name)
    return (f"On one node MPICH first asks its shared-memory layer, and at this run's thread level its table offers "
            f"shared-buffer algorithms ({names}); for those the model's counts are not what ran.")
