r"""All-reduce built from point-to-point messages: the lab's reference solutions.

Two algorithms of Thakur, Rabenseifner & Gropp (2005), written with nothing
but ``MPI_Sendrecv`` (MPI Forum 2021, sec. 3.10), so every message is
visible:

* :func:`ring_allreduce` -- reduce-scatter then all-gather around a ring:
  :math:`2(p-1)` steps, each rank sends :math:`2\frac{p-1}{p}M` bytes
  (Patarasuk & Yuan 2009 show this is the least any all-reduce can send).
* :func:`halving_doubling_allreduce` -- Rabenseifner's algorithm:
  recursive-halving reduce-scatter then recursive-doubling all-gather,
  :math:`2\log_2 p` steps and the same bytes as the ring when ``p`` is a
  power of two. Other ``p`` first fold the ``r = p - p'`` extra ranks into
  partners (``p'`` the largest power of two <= ``p``) and hand them the
  result at the end: two more steps of the whole vector.

Both take a communicator and a NumPy array (any shape; the sum is
element-wise), return a new array holding the sum over all ranks and leave
the input untouched. With integer arrays the result equals
``MPI_Allreduce`` bit for bit (integer addition is associative; floating
point addition is not, so a different order may change the last bits).

``stats``, when given a dict, receives ``"steps"`` (communication calls made
by this rank: each ``Sendrecv``, and each ``Send`` or ``Recv`` of the
fold-in and fold-out) and ``"bytes_sent"``, to be held against
:func:`commlib.cost.allreduce_terms` (:func:`selftest` does).

Run under MPI (this module imports ``mpi4py`` only inside functions, so it
can be imported and doctested anywhere)::

    mpiexec -n 4 python -m commlib.lab.p2p      # self-test: both equal MPI_Allreduce

Chunks are cut as ``np.array_split`` cuts them, by the same
:func:`commlib.collectives.engine.split_bounds` the simulated collectives use:

>>> split_bounds(0, 10, 4).tolist()      # where np.array_split cuts 10 elements into 4 chunks
[0, 3, 6, 8, 10]
"""

from __future__ import annotations

import sys

import numpy as np

from commlib.collectives.engine import split_bounds  # absolute: the checker also loads this file alone

__all__ = ["ring_allreduce", "halving_doubling_allreduce", "ALGORITHMS", "selftest"]


def _count(stats: dict | None, nbytes: int) -> None:
    if stats is not None:
        stats["steps"] = stats.get("steps", 0) + 1
        stats["bytes_sent"] = stats.get("bytes_sent", 0) + int(nbytes)


def ring_allreduce(comm, array, *, stats: dict | None = None) -> np.ndarray:
    r"""Sum ``array`` over every rank of ``comm`` with a ring; return the sum (a new array).

    The vector is cut into ``p`` chunks. In reduce-scatter step ``s``
    (``s = 0 .. p-2``) rank ``r`` sends chunk ``(r - s) mod p`` to rank
    ``r+1`` and adds the chunk ``(r - s - 1) mod p`` it receives from
    ``r-1``; after ``p-1`` steps rank ``r`` owns the full sum of chunk
    ``(r+1) mod p``. The all-gather then passes finished chunks around the
    ring for ``p-1`` more steps. Time under the alpha-beta-gamma model:
    :math:`2(p-1)\alpha + 2\frac{p-1}{p}M\beta + \frac{p-1}{p}M\gamma`.
    """
    data = np.array(array, copy=True)
    shape = data.shape
    buf = np.ascontiguousarray(data.reshape(-1))
    p, r = comm.Get_size(), comm.Get_rank()
    if p == 1:
        return buf.reshape(shape)
    bounds = split_bounds(0, buf.size, p).tolist()
    right, left = (r + 1) % p, (r - 1) % p
    tmp = np.empty(bounds[1] - bounds[0], dtype=buf.dtype)  # the largest chunk
    item = buf.itemsize
    for s in range(p - 1):  # reduce-scatter
        send, recv = (r - s) % p, (r - s - 1) % p
        lo, hi = bounds[recv], bounds[recv + 1]
        comm.Sendrecv(buf[bounds[send]:bounds[send + 1]], dest=right, sendtag=s,
                      recvbuf=tmp[: hi - lo], source=left, recvtag=s)
        buf[lo:hi] += tmp[: hi - lo]
        _count(stats, (bounds[send + 1] - bounds[send]) * item)
    for s in range(p - 1):  # all-gather
        send, recv = (r + 1 - s) % p, (r - s) % p
        comm.Sendrecv(buf[bounds[send]:bounds[send + 1]], dest=right, sendtag=p + s,
                      recvbuf=buf[bounds[recv]:bounds[recv + 1]], source=left, recvtag=p + s)
        _count(stats, (bounds[send + 1] - bounds[send]) * item)
    return buf.reshape(shape)


def halving_doubling_allreduce(comm, array, *, stats: dict | None = None) -> np.ndarray:
    r"""Sum ``array`` over every rank of ``comm`` by recursive halving then doubling (Rabenseifner).

    With ``p'`` the largest power of two <= ``p`` and ``r = p - p'``: ranks
    ``0, 2, .., 2r-2`` send their whole vector to the next (odd) rank and sit
    out. The ``p'`` remaining ranks, renumbered ``0 .. p'-1``, halve: at
    distance ``d = p'/2, p'/4, .., 1`` each exchanges half of its current
    window with the partner ``newrank XOR d`` and adds the half it keeps, so
    after :math:`\log_2 p'` steps it owns the sum of chunk ``newrank``. The
    doubling phase retraces the steps (``d = 1, 2, .., p'/2``), exchanging
    finished windows. Finally the odd ranks hand the result to the ranks
    that sat out. Time: :math:`2\log_2 p'\,\alpha + 2\frac{p'-1}{p'}M\beta
    + \frac{p'-1}{p'}M\gamma`, plus :math:`2(\alpha + M\beta) + M\gamma`
    when ``p`` is not a power of two.
    """
    data = np.array(array, copy=True)
    shape = data.shape
    buf = np.ascontiguousarray(data.reshape(-1))
    p, rank = comm.Get_size(), comm.Get_rank()
    if p == 1:
        return buf.reshape(shape)
    q = 1 << (p.bit_length() - 1)  # largest power of two <= p
    extra = p - q
    nbytes = buf.nbytes
    tag = 1000
    # Fold in: the first 2*extra ranks pair up; even ones give their vector away.
    if rank < 2 * extra:
        if rank % 2 == 0:
            comm.Send(buf, dest=rank + 1, tag=tag)
            _count(stats, nbytes)
            newrank = -1
        else:
            tmp = np.empty_like(buf)
            comm.Recv(tmp, source=rank - 1, tag=tag)
            buf += tmp
            _count(stats, 0)
            newrank = rank // 2
    else:
        newrank = rank - extra

    def real(nr: int) -> int:  # new rank -> rank in comm
        return nr * 2 + 1 if nr < extra else nr + extra

    if newrank >= 0:
        bounds = split_bounds(0, buf.size, q).tolist()
        lo, hi = 0, q  # my window, in chunks
        tmp = np.empty(bounds[q // 2] if q > 1 else 0, dtype=buf.dtype)  # the first half: the largest window given
        item = buf.itemsize
        d = q // 2
        windows = []
        while d >= 1:  # recursive halving (reduce-scatter)
            partner = newrank ^ d
            mid = (lo + hi) // 2
            if newrank & d:
                keep, give = (mid, hi), (lo, mid)
            else:
                keep, give = (lo, mid), (mid, hi)
            k0, k1 = bounds[keep[0]], bounds[keep[1]]
            g0, g1 = bounds[give[0]], bounds[give[1]]
            comm.Sendrecv(buf[g0:g1], dest=real(partner), sendtag=tag + d,
                          recvbuf=tmp[: k1 - k0], source=real(partner), recvtag=tag + d)
            buf[k0:k1] += tmp[: k1 - k0]
            _count(stats, (g1 - g0) * item)
            windows.append((lo, hi))
            lo, hi = keep
            d //= 2
        d = 1
        while d < q:  # recursive doubling (all-gather), retracing the windows
            partner = newrank ^ d
            plo, phi = windows.pop()
            # the partner owns the other half of (plo, phi)
            olo, ohi = (plo, lo) if lo > plo else (hi, phi)
            comm.Sendrecv(buf[bounds[lo]:bounds[hi]], dest=real(partner), sendtag=tag + q + d,
                          recvbuf=buf[bounds[olo]:bounds[ohi]], source=real(partner), recvtag=tag + q + d)
            _count(stats, (bounds[hi] - bounds[lo]) * item)
            lo, hi = plo, phi
            d *= 2
    # Fold out: hand the result back to the ranks that sat out.
    if rank < 2 * extra:
        if rank % 2 == 1:
            comm.Send(buf, dest=rank - 1, tag=tag + 3 * q)
            _count(stats, nbytes)
        else:
            comm.Recv(buf, source=rank + 1, tag=tag + 3 * q)
            _count(stats, 0)
    return buf.reshape(shape)


#: The point-to-point all-reduce implementations, by cost-model algorithm name.
ALGORITHMS = {"ring": ring_allreduce, "halving_doubling": halving_doubling_allreduce}


def selftest(comm=None, counts=(0, 1, 3, 10, 1000, 4097), seed: int = 0) -> list[str]:
    """Compare both implementations with ``MPI_Allreduce`` on int64 arrays; return failure messages.

    Also holds their message counts against :func:`commlib.cost.allreduce_terms`: the most steps any
    rank takes equals the model's ``steps``, and (for a vector that splits evenly) the bytes a rank
    sends equal the model's ``bytes`` whenever the critical path is one rank's sends.
    """
    from mpi4py import MPI

    from ..collectives.cost import allreduce_terms

    comm = MPI.COMM_WORLD if comm is None else comm
    failures = []
    p = comm.Get_size()
    even = np.ones(64 * p, dtype=np.int64)  # splits evenly into p (and p') chunks
    for name, fn in ALGORITHMS.items():
        stats: dict = {}
        fn(comm, even, stats=stats)
        terms = allreduce_terms(even.nbytes, p, name)
        steps = comm.allreduce(stats.get("steps", 0), op=MPI.MAX)
        sent = comm.allreduce(stats.get("bytes_sent", 0), op=MPI.MAX)
        if steps != terms.steps:
            failures.append(f"{name}: {steps} steps on the busiest rank, cost model says {terms.steps}")
        if (p & (p - 1)) == 0 and sent != terms.bytes:
            failures.append(f"{name}: {sent} bytes sent by the busiest rank, cost model says {terms.bytes:g}")
    for count in counts:
        rng = np.random.default_rng([seed, comm.Get_rank(), count])
        x = rng.integers(-(2**40), 2**40, size=count, dtype=np.int64)
        want = np.empty_like(x)
        comm.Allreduce(x, want, op=MPI.SUM)
        for name, fn in ALGORITHMS.items():
            got = fn(comm, x)
            if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
                failures.append(f"{name}: count {count} differs from MPI_Allreduce on rank {comm.Get_rank()}")
    return failures


def _main(argv: list[str]) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    failures = selftest(comm)
    everyone = comm.gather(failures, root=0)
    if comm.Get_rank() == 0:
        flat = [f for fs in everyone for f in fs]
        print("\n".join(flat) if flat else f"ring and halving-doubling equal MPI_Allreduce on {comm.Get_size()} ranks "
              "and match the cost model's step counts")
        return 1 if flat else 0
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
