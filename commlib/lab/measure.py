"""Time MPI collectives at many message sizes; print the results as JSON.

Run it under MPI, one process per rank::

    mpiexec -n 4 python -m commlib.lab.measure --out results.json
    mpiexec -n 4 python -m commlib.lab.measure --impl ring        # the point-to-point ring

The sizes are visited ``--sweeps`` times (two by default), each sweep in
its own seeded random order (``--order shuffled``), and at each size the
operations are timed in turns, call by call. A load that comes and goes on
a shared machine then falls on every operation alike and on sizes scattered
over the ladder, different ones in each sweep: timed one operation at a
time in sorted order, a load episode would cover a run of neighbouring
sizes of one operation and look like a regime of the machine.

At each size it runs ``--warmup`` untimed calls, then timed ones until
``--repeats`` are done (or, after ``--min-repeats``, until ``--budget``
seconds are spent on that size in that sweep). One timed call is: a
barrier, ``MPI_Wtime``, the collective, ``MPI_Wtime``; its time is the
*slowest* rank's (a collective is finished when its last rank is). The
JSON holds the median and the spread (minimum, quartiles, maximum) per
size over both sweeps, and every sample with its sweep and start time.

Sizes follow nccl-tests: ``nbytes`` is the whole buffer -- the message for
all-reduce and broadcast, the full array for reduce-scatter (each rank ends
with ``nbytes/p``) and all-gather (each rank contributes ``nbytes/p``).
Elements are float32, summed.

Operations (MPI Forum 2021): ``all_reduce`` (``MPI_Allreduce``),
``reduce_scatter`` (``MPI_Reduce_scatter_block``), ``all_gather``
(``MPI_Allgather``), ``broadcast`` (``MPI_Bcast`` from rank 0). With
``--impl ring`` or ``--impl halving_doubling`` the all-reduce is the
point-to-point version of :mod:`commlib.lab.p2p` instead;
``--impl ring+halving_doubling`` times both in turns, call by call, so
that a load that comes and goes on a shared machine falls on both alike.

Each rank binds itself to one core at start (:func:`rank_core`): of the
cores it inherited from ``mpiexec``, the one its rank on this machine
picks, round robin. With as many cores as ranks each rank has a core of its
own for the whole run; with fewer, the ranks share them evenly (ranks 0 and
2 on the first of two cores, 1 and 3 on the second), never at the
scheduler's whim. The JSON records each rank's core (``rank_cores``).

>>> [format_bytes(x) for x in size_ladder(1024, 64 * 2**20, 8)]
['1 KiB', '8 KiB', '64 KiB', '512 KiB', '4 MiB', '32 MiB']
>>> summarize([3.0, 1.0, 2.0, 4.0, 5.0])["median_s"]
3.0
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

try:  # Unix only: page faults per call (:func:`_faults`)
    import resource
except ImportError:  # pragma: no cover - not Unix
    resource = None
import time
from collections.abc import Sequence

import numpy as np

__all__ = ["OPS", "CONTROLS", "ORDERS", "IMPLS", "SCHEMA", "RESULT_KEYS", "size_ladder", "format_bytes", "summarize",
           "plan", "rank_core", "bind_rank", "measure", "main"]

#: Collectives this script can time (keys as in :data:`commlib.cost.COLLECTIVE_ALGORITHMS`).
OPS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast")
#: Implementations: the MPI library's own, or a point-to-point all-reduce from :mod:`commlib.lab.p2p`.
#: ``"ring+halving_doubling"`` times the two point-to-point all-reduces in turns, call by call, so that
#: both see the same load on the machine (two separate runs on a shared machine may not).
IMPLS = ("mpi", "ring", "halving_doubling", "ring+halving_doubling")
#: Controls timed in turns with the collectives (``--copy``): ``"copy"``, every rank copying a block at once.
CONTROLS = ("copy",)
#: Orders in which a run visits the sizes (:func:`plan`).
ORDERS = ("shuffled", "sorted")
#: Version tag of the JSON layout.
SCHEMA = "commlib.lab.measure/2"
#: Keys of every entry of ``results`` (``sweep`` and ``at_s``: each sample's sweep and start time).
RESULT_KEYS = ("op", "impl", "nbytes", "count", "repeats", "median_s", "min_s", "q1_s", "q3_s", "max_s",
               "samples_s", "sweep", "at_s")


def rank_core(local_rank: int, cores: Sequence[int]) -> int:
    """The core a rank binds to: ``cores`` (those it may use) sorted, picked round robin by its rank on this machine.

    With at least as many cores as ranks every rank gets a core of its own;
    with fewer, ranks ``r`` and ``r + len(cores)`` share one.

    >>> [rank_core(r, (5, 3)) for r in range(4)], rank_core(0, (7,))
    ([3, 5, 3, 5], 7)
    """
    if not isinstance(local_rank, int) or local_rank < 0:
        raise ValueError(f"local_rank must be a whole number >= 0, got {local_rank!r}")
    if not cores:
        raise ValueError("cores must name at least one core")
    ordered = sorted(int(c) for c in cores)
    return ordered[local_rank % len(ordered)]


def bind_rank(local_rank: int) -> tuple[tuple[int, ...], int | None]:
    """Bind this process to :func:`rank_core` of the cores it may use now; returns those cores and the one chosen.

    Where the OS cannot pin processes (not Linux) nothing is bound: ``((), None)``.
    """
    if not hasattr(os, "sched_setaffinity"):
        return (), None
    cores = tuple(sorted(os.sched_getaffinity(0)))
    core = rank_core(local_rank, cores)
    os.sched_setaffinity(0, {core})
    return cores, core


def size_ladder(min_bytes: int = 1024, max_bytes: int = 64 * 2**20, factor: int = 4) -> list[int]:
    """Sizes ``min_bytes, min_bytes*factor, ...`` up to ``max_bytes`` (bytes, inclusive)."""
    if min_bytes < 4:
        raise ValueError(f"min_bytes must be >= 4 (one float32), got {min_bytes}")
    if max_bytes < min_bytes:
        raise ValueError(f"max_bytes must be >= min_bytes ({min_bytes}), got {max_bytes}")
    if factor < 2:
        raise ValueError(f"factor must be >= 2, got {factor}")
    out, x = [], int(min_bytes)
    while x <= max_bytes:
        out.append(x)
        x *= factor
    return out


def format_bytes(nbytes: float) -> str:
    """Binary prefixes, as message sizes are powers of two: ``format_bytes(2**20) == '1 MiB'``."""
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if nbytes >= factor:
            return f"{nbytes / factor:.3g} {unit}"
    return f"{nbytes:.3g} B"


def summarize(samples: Sequence[float]) -> dict:
    """Median, minimum, quartiles and maximum of timing samples (seconds)."""
    a = np.asarray(samples, dtype=float)
    if a.size == 0:
        raise ValueError("samples must hold at least one time")
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return {"median_s": float(med), "min_s": float(a.min()), "q1_s": float(q1), "q3_s": float(q3),
            "max_s": float(a.max())}


def _faults() -> int:
    """Minor page faults of the calling thread so far (of the process where the OS counts no thread's); 0 without
    ``resource``.

    A minor fault is a page mapped in on first touch, zeroed where it is fresh from the OS: a library that maps a
    buffer afresh on every call (glibc serves large blocks by ``mmap``) pays one per page it touches, every call.
    """
    if resource is None:
        return 0
    who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)
    return int(resource.getrusage(who).ru_minflt)


def _buffers(op: str, nbytes: int, p: int):
    count = max(1, nbytes // 4)
    if op in ("reduce_scatter", "all_gather"):
        block = max(1, count // p)
        count = block * p
    else:
        block = count
    rng = np.random.default_rng(0)
    send = rng.random(count, dtype=np.float32)
    if op == "reduce_scatter":
        return send, np.empty(block, np.float32), count
    if op == "all_gather":
        return send[:block].copy(), np.empty(count, np.float32), count
    return send, np.empty(count, np.float32), count


def plan(sizes: Sequence[int], sweeps: int = 2, order: str = "shuffled", seed: int = 0) -> list[list[int]]:
    """The order in which one run visits the sizes: one list per sweep.

    ``"shuffled"`` visits each sweep's sizes in its own seeded random order,
    so that a load that comes and goes on a shared machine falls on sizes
    scattered over the ladder, different ones in each sweep, instead of on a
    run of neighbouring sizes that a fit would read as a regime;
    ``"sorted"`` visits them smallest first, every sweep alike.

    >>> plan([1, 2, 3, 4], sweeps=1, order="sorted")
    [[1, 2, 3, 4]]
    >>> a, b = plan([1, 2, 3, 4, 5, 6], sweeps=2, seed=0)
    >>> sorted(a) == sorted(b) == [1, 2, 3, 4, 5, 6] and a != b
    True
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
    if not isinstance(sweeps, int) or isinstance(sweeps, bool) or sweeps < 1:
        raise ValueError(f"sweeps must be a whole number >= 1, got {sweeps!r}")
    sizes = sorted(int(x) for x in sizes)
    if order == "sorted":
        return [list(sizes) for _ in range(sweeps)]
    rng = np.random.default_rng(seed)
    return [[sizes[i] for i in rng.permutation(len(sizes))] for _ in range(sweeps)]


def measure(comm, ops: Sequence[str] = OPS, sizes: Sequence[int] = (), impl: str = "mpi", warmup: int = 2,
            repeats: int = 10, min_repeats: int = 3, budget: float = 1.0, progress=None, sweeps: int = 2,
            order: str = "shuffled", seed: int = 0, copy: bool = False) -> list[dict]:
    """Time each op at each size on ``comm``; return one dict per (op, size) with :data:`RESULT_KEYS`.

    The ops are timed *in turns* at each size, call by call (all-reduce,
    reduce-scatter, all-gather, broadcast, all-reduce, ...), so a load that
    comes and goes falls on all of them alike; the sizes are visited
    ``sweeps`` times in the order :func:`plan` gives. ``repeats``,
    ``min_repeats`` and ``budget`` (seconds, all the turns at one size
    together) apply to each sweep. ``copy=True`` adds the copy control to
    the turns (:data:`CONTROLS`): every rank copies a block of 1.5 times the
    size at the same moment, its source and destination three buffers of
    the size, as many as an all-reduce holds per rank (send, receive and
    the library's temporary buffer). Every call's CPU time is recorded
    beside its wall time (``cpu_s``: ``time.thread_time`` of the calling
    thread): a call slowed because other programs held its core takes longer
    in wall time but not in CPU time. For the copy control it is the slowest
    rank's; for a collective the least-scheduled rank's (the smallest), since
    a rank that waits for another polls and so spends CPU time while the
    step cannot move: the least-scheduled rank's time bounds what the call
    cost while all its ranks ran. Beside both clocks each call's minor page
    faults are recorded (``faults``: the most any rank took during the call,
    :func:`_faults`): pages the call mapped in afresh, as where the library
    allocates a temporary buffer the allocator maps anew on every call.

    Each entry pools its samples over the sweeps; ``sweep`` says from which
    sweep each sample came and ``at_s`` when it started (seconds from the
    start of the run), so a load episode can be seen in time.
    ``progress(i, total, sweep, nbytes)`` is called on rank 0 before each size.
    """
    from mpi4py import MPI

    from .p2p import ALGORITHMS

    p = comm.Get_size()
    sizes = list(sizes) or size_ladder()
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {', '.join(IMPLS)}; got {impl!r}")
    if impl != "mpi" and list(ops) != ["all_reduce"]:
        raise ValueError(f"impl {impl!r} implements all_reduce only; pass --ops all_reduce")
    for op in ops:
        if op not in OPS:
            raise ValueError(f"op must be one of {', '.join(OPS)}; got {op!r}")
    schedule = plan(sizes, sweeps, order, seed)

    def run_once(op, send, recv, impl):
        if op == "all_reduce":
            if impl == "mpi":
                comm.Allreduce(send, recv, op=MPI.SUM)
            else:
                ALGORITHMS[impl](comm, send)
        elif op == "reduce_scatter":
            comm.Reduce_scatter_block(send, recv, op=MPI.SUM)
        elif op == "all_gather":
            comm.Allgather(send, recv)
        elif op == "broadcast":
            comm.Bcast(send, root=0)
        else:  # the copy control: every rank copies its own block at once
            np.copyto(recv, send)

    turns = impl.split("+")  # several implementations: timed in turns, call by call
    entries = [(op, each) for op in ops for each in turns] + ([("copy", "numpy")] if copy else [])
    pooled: dict[tuple, dict] = {}
    total, i = sum(len(s) for s in schedule), 0
    comm.Barrier()
    start = MPI.Wtime()
    for sweep, order_k in enumerate(schedule):
        for nbytes in order_k:
            i += 1
            if progress is not None and comm.Get_rank() == 0:
                progress(i, total, sweep + 1, nbytes)
            bufs = {op: (_copy_buffers(int(nbytes)) if op == "copy" else _buffers(op, int(nbytes), p))
                    for op in dict.fromkeys(op for op, _ in entries)}
            for _ in range(warmup):
                for op, each in entries:
                    run_once(op, bufs[op][0], bufs[op][1], each)
            samples: dict[tuple, list[float]] = {e: [] for e in entries}
            starts: dict[tuple, list[float]] = {e: [] for e in entries}
            cpu: dict[tuple, list[float]] = {e: [] for e in entries}
            faults: dict[tuple, list[int]] = {e: [] for e in entries}
            spent, done = 0.0, 0
            while done < repeats and (done < min_repeats or spent < budget):
                for op, each in entries:
                    comm.Barrier()
                    f0 = _faults()
                    c0 = time.thread_time()
                    t0 = MPI.Wtime()
                    run_once(op, bufs[op][0], bufs[op][1], each)
                    dt = MPI.Wtime() - t0
                    c1 = time.thread_time() - c0  # the calling thread's own CPU time: what it cost when it ran
                    f1 = _faults() - f0  # pages this call mapped in (outside both clocks' windows)
                    faults[(op, each)].append(int(comm.allreduce(f1, op=MPI.MAX)))
                    cpu[(op, each)].append(comm.allreduce(c1, op=MPI.MAX if op in CONTROLS else MPI.MIN))
                    slowest = comm.allreduce(dt, op=MPI.MAX)  # same value on every rank: same loop decisions
                    samples[(op, each)].append(slowest)
                    starts[(op, each)].append(t0 - start)
                    spent += slowest
                done += 1
            for op, each in entries:
                count = bufs[op][2]
                row = pooled.setdefault((op, each, int(count * 4)), {"samples_s": [], "sweep": [], "at_s": []})
                row["samples_s"].extend(samples[(op, each)])
                row.setdefault("cpu_s", []).extend(cpu[(op, each)])
                row.setdefault("faults", []).extend(faults[(op, each)])
                row["sweep"].extend([sweep] * len(samples[(op, each)]))
                row["at_s"].extend(starts[(op, each)])
            del bufs
    results = []
    for (op, each, nb), row in sorted(pooled.items(), key=lambda kv: (entries.index(kv[0][:2]), kv[0][2])):
        results.append({"op": op, "impl": each, "nbytes": nb, "count": nb // 4, "repeats": len(row["samples_s"]),
                        **summarize(row["samples_s"]), **row})
    return results


def _copy_buffers(nbytes: int):
    """The copy control's buffers at ``nbytes``: a block of 1.5 times the size, source and destination."""
    count = max(1, (3 * nbytes // 2) // 4)
    src = np.random.default_rng(0).random(count, dtype=np.float32)
    return src, np.empty_like(src), max(1, nbytes // 4)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m commlib.lab.measure", description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, from {', '.join(OPS)}")
    ap.add_argument("--impl", default="mpi", choices=IMPLS)
    ap.add_argument("--sizes", default="", help="comma-separated sizes in bytes (overrides the ladder)")
    ap.add_argument("--min-bytes", type=int, default=1024)
    ap.add_argument("--max-bytes", type=int, default=64 * 2**20)
    ap.add_argument("--factor", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--min-repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per size and sweep after --min-repeats")
    ap.add_argument("--sweeps", type=int, default=2, help="times every size is visited")
    ap.add_argument("--order", default="shuffled", choices=ORDERS, help="order of the sizes in each sweep")
    ap.add_argument("--seed", type=int, default=0, help="seed of the shuffled order")
    ap.add_argument("--copy", action="store_true", help="time the copy control in turns with the collectives")
    ap.add_argument("--out", default="", help="write JSON here instead of stdout")
    ap.add_argument("--progress", action="store_true", help="one line per size on stderr (rank 0)")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point under ``mpiexec``; returns the exit status."""
    args = _parser().parse_args(argv)
    import mpi4py
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    # One core per rank (round robin where the cores are fewer), chosen by the rank on this machine.
    allowed, core = bind_rank(comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank())
    ops = [o for o in args.ops.split(",") if o]
    sizes = [int(s) for s in args.sizes.split(",") if s] or size_ladder(args.min_bytes, args.max_bytes, args.factor)

    def progress(i, total, sweep, nbytes):
        print(f"[{i}/{total}] sweep {sweep} {format_bytes(nbytes)}", file=sys.stderr, flush=True)

    comm.Barrier()
    wall0, cpu0 = MPI.Wtime(), time.process_time()
    try:
        results = measure(comm, ops, sizes, args.impl, args.warmup, args.repeats, args.min_repeats, args.budget,
                          progress if args.progress else None, args.sweeps, args.order, args.seed, args.copy)
    except ValueError as exc:
        if comm.Get_rank() == 0:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    # Each rank's own CPU time over the run. A waiting MPI rank polls, so it uses every moment its core
    # gives it: what the ranks did not get of their cores' time went to other programs.
    cpu_s = comm.gather(time.process_time() - cpu0, root=0)
    wall_s = comm.allreduce(MPI.Wtime() - wall0, op=MPI.MAX)
    hosts = comm.gather(platform.node(), root=0)
    rank_cores = comm.gather(core, root=0)
    if comm.Get_rank() != 0:
        return 0
    # The cores the ranks may run on (before each bound itself to one): all of the machine's, unless the run was
    # pinned to a few.
    cpus = len(allowed) if allowed else (os.cpu_count() or 1)
    usable = min(cpus, comm.Get_size()) if len(set(hosts)) == 1 else comm.Get_size()
    doc = {
        "schema": SCHEMA,
        "ranks": comm.Get_size(),
        "impl": args.impl,
        "dtype": "float32",
        "hosts": len(set(hosts)),
        "cpu_count": cpus,
        "machine_cpu_count": os.cpu_count() or 1,
        "oversubscribed": len(set(hosts)) == 1 and comm.Get_size() > cpus,
        "rank_cores": rank_cores,
        "mpi_library": " ".join(MPI.Get_library_version().splitlines()[0].split()),
        "mpi4py": mpi4py.__version__,
        "allreduce_algorithm": os.environ.get("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "auto"),
        "thread_level": MPI.Query_thread(),  # MPICH's shared-memory collectives depend on it (mpich.shm_choice)
        "thread_multiple": MPI.THREAD_MULTIPLE,
        "page_bytes": resource.getpagesize() if resource is not None else None,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "wall_s": wall_s,
        "rank_cpu_s": cpu_s,
        "core_share": sum(cpu_s) / (wall_s * usable) if wall_s > 0 else None,
        "warmup": args.warmup,
        "repeats": args.repeats,
        "sweeps": args.sweeps,
        "order": args.order,
        "seed": args.seed,
        "results": results,
    }
    text = json.dumps(doc, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
