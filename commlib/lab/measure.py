"""Time MPI collectives at many message sizes; print the results as JSON.

Run it under MPI, one process per rank::

    mpiexec -n 4 python -m commlib.lab.measure --out results.json
    mpiexec -n 4 python -m commlib.lab.measure --impl ring        # the point-to-point ring

For each operation and size it runs ``--warmup`` untimed calls, then timed
ones until ``--repeats`` are done (or, after ``--min-repeats``, until
``--budget`` seconds are spent on that size). One timed call is: a barrier,
``MPI_Wtime``, the collective, ``MPI_Wtime``; its time is the *slowest*
rank's (a collective is finished when its last rank is). The JSON holds the
median and the spread (minimum, quartiles, maximum) per size.

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
import time
from collections.abc import Sequence

import numpy as np

__all__ = ["OPS", "IMPLS", "SCHEMA", "RESULT_KEYS", "size_ladder", "format_bytes", "summarize", "measure", "main"]

#: Collectives this script can time (keys as in :data:`commlib.cost.COLLECTIVE_ALGORITHMS`).
OPS = ("all_reduce", "reduce_scatter", "all_gather", "broadcast")
#: Implementations: the MPI library's own, or a point-to-point all-reduce from :mod:`commlib.lab.p2p`.
#: ``"ring+halving_doubling"`` times the two point-to-point all-reduces in turns, call by call, so that
#: both see the same load on the machine (two separate runs on a shared machine may not).
IMPLS = ("mpi", "ring", "halving_doubling", "ring+halving_doubling")
#: Version tag of the JSON layout.
SCHEMA = "commlib.lab.measure/1"
#: Keys of every entry of ``results``.
RESULT_KEYS = ("op", "impl", "nbytes", "count", "repeats", "median_s", "min_s", "q1_s", "q3_s", "max_s",
               "samples_s")


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


def measure(comm, ops: Sequence[str] = OPS, sizes: Sequence[int] = (), impl: str = "mpi", warmup: int = 2,
            repeats: int = 10, min_repeats: int = 3, budget: float = 1.0, progress=None) -> list[dict]:
    """Time each op at each size on ``comm``; return one dict per (op, size) with :data:`RESULT_KEYS`.

    ``progress(i, total, op, nbytes)`` is called on rank 0 before each size.
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
        else:
            comm.Bcast(send, root=0)

    results, total, i = [], len(ops) * len(sizes), 0
    for op in ops:
        for nbytes in sizes:
            i += 1
            if progress is not None and comm.Get_rank() == 0:
                progress(i, total, op, nbytes)
            send, recv, count = _buffers(op, int(nbytes), p)
            turns = impl.split("+")  # several implementations: timed in turns, call by call
            for _ in range(warmup):
                for each in turns:
                    run_once(op, send, recv, each)
            samples: dict[str, list[float]] = {each: [] for each in turns}
            spent = 0.0
            while len(samples[turns[-1]]) < repeats and (len(samples[turns[-1]]) < min_repeats or spent < budget):
                for each in turns:
                    comm.Barrier()
                    t0 = MPI.Wtime()
                    run_once(op, send, recv, each)
                    dt = MPI.Wtime() - t0
                    slowest = comm.allreduce(dt, op=MPI.MAX)  # same value on every rank: same loop decisions
                    samples[each].append(slowest)
                    spent += slowest
            for each in turns:
                results.append({"op": op, "impl": each, "nbytes": int(count * 4), "count": int(count),
                                "repeats": len(samples[each]), **summarize(samples[each]),
                                "samples_s": samples[each]})
    return results


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
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per size after --min-repeats")
    ap.add_argument("--out", default="", help="write JSON here instead of stdout")
    ap.add_argument("--progress", action="store_true", help="one line per size on stderr (rank 0)")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point under ``mpiexec``; returns the exit status."""
    args = _parser().parse_args(argv)
    import mpi4py
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    ops = [o for o in args.ops.split(",") if o]
    sizes = [int(s) for s in args.sizes.split(",") if s] or size_ladder(args.min_bytes, args.max_bytes, args.factor)

    def progress(i, total, op, nbytes):
        print(f"[{i}/{total}] {op} {format_bytes(nbytes)}", file=sys.stderr, flush=True)

    comm.Barrier()
    wall0, cpu0 = MPI.Wtime(), time.process_time()
    try:
        results = measure(comm, ops, sizes, args.impl, args.warmup, args.repeats, args.min_repeats, args.budget,
                          progress if args.progress else None)
    except ValueError as exc:
        if comm.Get_rank() == 0:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    # Each rank's own CPU time over the run. A waiting MPI rank polls, so it uses every moment its core
    # gives it: what the ranks did not get of their cores' time went to other programs.
    cpu_s = comm.gather(time.process_time() - cpu0, root=0)
    wall_s = comm.allreduce(MPI.Wtime() - wall0, op=MPI.MAX)
    hosts = comm.gather(platform.node(), root=0)
    if comm.Get_rank() != 0:
        return 0
    # The cores the ranks may run on: all of the machine's, unless the run was pinned to a few.
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
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
        "mpi_library": " ".join(MPI.Get_library_version().splitlines()[0].split()),
        "mpi4py": mpi4py.__version__,
        "allreduce_algorithm": os.environ.get("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", "auto"),
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "wall_s": wall_s,
        "rank_cpu_s": cpu_s,
        "core_share": sum(cpu_s) / (wall_s * usable) if wall_s > 0 else None,
        "warmup": args.warmup,
        "repeats": args.repeats,
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
