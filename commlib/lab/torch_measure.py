"""The same all-reduce measurement with ``torch.distributed`` (gloo backend), when PyTorch is installed.

PyTorch's data-parallel training calls ``torch.distributed.all_reduce`` on
its gradient buckets; on CPUs the collective runs in the gloo library over
TCP. This module times it the way :mod:`commlib.lab.measure` times MPI
(barrier, clock, collective, clock; the slowest rank counts; median and
quartiles) and writes the same JSON layout, so :func:`commlib.lab.runner.to_series`
and :mod:`commlib.lab.fit` read it unchanged.

Without PyTorch nothing here fails: :func:`available` says False and
:func:`run` returns None. Ranks are separate processes started by
:func:`run`, meeting at ``127.0.0.1`` (loopback only).

>>> isinstance(available(), bool)
True
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from .measure import SCHEMA, format_bytes, summarize

__all__ = ["available", "free_port", "time_all_reduce", "launch", "run"]


def available() -> bool:
    """True if ``import torch`` would work (checked without importing it)."""
    return importlib.util.find_spec("torch") is not None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for the ranks' rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def time_all_reduce(sizes: Sequence[int], warmup: int, repeats: int, progress: bool = False) -> list[dict]:
    """Time ``torch.distributed.all_reduce`` of float32 buffers of ``sizes`` bytes in the running process group.

    Each call is a barrier, the clock, the all-reduce and the clock; the slowest rank's time counts (a MAX
    all-reduce of the times). One entry per size, in :mod:`commlib.lab.measure`'s layout. Call it on every rank.
    """
    import torch
    import torch.distributed as dist

    results = []
    for nbytes in sizes:
        x = torch.ones(max(1, nbytes // 4), dtype=torch.float32)
        for _ in range(warmup):
            dist.all_reduce(x)
        samples = []
        for _ in range(repeats):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            dt = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
            dist.all_reduce(dt, op=dist.ReduceOp.MAX)
            samples.append(float(dt.item()))
        if progress:
            print(f"[gloo] all_reduce {format_bytes(nbytes)}", file=sys.stderr, flush=True)
        results.append({"op": "all_reduce", "impl": "torch_gloo", "nbytes": int(x.numel() * 4),
                        "count": int(x.numel()), "repeats": repeats, **summarize(samples), "samples_s": samples})
    return results


def _worker(sizes: Sequence[int], warmup: int, repeats: int, out: str, cpus: Sequence[int] = ()) -> int:
    import torch
    import torch.distributed as dist

    core = None
    if cpus and hasattr(os, "sched_setaffinity"):
        # The MPI ranks' cores, shared by the whole process: gloo runs helper threads (its TCP loop) beside the
        # calling thread, and binding all of them to one core each would make them queue for it, a handicap the
        # single-threaded MPI ranks do not have. Both libraries get the same cores; gloo spreads over them itself.
        core = sorted(set(cpus))
        os.sched_setaffinity(0, set(cpus))
        torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    cores = [None] * n
    dist.all_gather_object(cores, core)
    results = time_all_reduce(sizes, warmup, repeats, progress=rank == 0)
    if rank == 0:
        usable = len(set(cpus)) if cpus else (os.cpu_count() or 1)
        doc = {"schema": SCHEMA, "ranks": n, "impl": "torch_gloo", "dtype": "float32", "hosts": 1,
               "cpu_count": usable, "machine_cpu_count": os.cpu_count() or 1, "rank_cores": cores,
               "oversubscribed": n > usable,
               "mpi_library": "gloo (torch " + torch.__version__ + ")", "allreduce_algorithm": "auto",
               "warmup": warmup, "repeats": repeats, "results": results}
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
    dist.destroy_process_group()
    return 0


def run(n: int = 2, sizes: Sequence[int] = (2**12, 2**16, 2**20, 2**24), warmup: int = 2, repeats: int = 5,
        timeout: float = 120.0, cpus: Sequence[int] | None = None) -> dict | None:
    """Time gloo all-reduce on ``n`` local processes; the JSON dict, or None without PyTorch.

    ``cpus``: run every rank, with all its threads, on these cores (the cores :func:`commlib.lab.runner.measure`
    gave the MPI ranks), so the two libraries use the same hardware; the JSON's ``rank_cores`` says where each
    rank might run. One core each would crowd gloo's helper threads onto its rank's core.

    Raises RuntimeError if PyTorch is there but the run fails or times out.
    """
    if not available():
        return None
    with tempfile.TemporaryDirectory(prefix="commlib-gloo-") as tmp:
        out = os.path.join(tmp, "results.json")
        launch(n, ["commlib.lab.torch_measure", out, str(warmup), str(repeats),
                   ",".join(str(int(s)) for s in sizes), ",".join(str(int(c)) for c in (cpus or ()))], timeout)
        if not os.path.exists(out):
            raise RuntimeError("torch.distributed run failed: rank 0 wrote no result")
        with open(out, encoding="utf-8") as fh:
            return json.load(fh)


def launch(n: int, module_args: Sequence[str], timeout: float) -> None:
    """Start ``n`` local processes of ``python -m module_args``, as ranks 0..n-1 meeting on 127.0.0.1, and wait.

    Raises RuntimeError if a rank fails or the run outlives ``timeout`` seconds (then every rank is killed).
    """
    from .runner import loopback_env

    port = free_port()
    procs = []
    for rank in range(n):
        env = loopback_env({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                            "WORLD_SIZE": str(n), "GLOO_SOCKET_IFNAME": "lo"})
        procs.append(subprocess.Popen([sys.executable, "-m", *module_args], env=env, stderr=subprocess.PIPE,
                                      text=True, start_new_session=True))
    deadline = time.monotonic() + timeout
    errors = []
    for p in procs:
        try:
            _, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise RuntimeError(f"torch.distributed run timed out after {timeout:g} s") from None
        if p.returncode != 0:
            errors.append(err[-1000:])
    if errors:
        raise RuntimeError("torch.distributed run failed: " + " | ".join(errors))


if __name__ == "__main__":
    _out, _warm, _reps, _sizes = sys.argv[1:5]
    _cpus = [int(c) for c in sys.argv[5].split(",")] if len(sys.argv) > 5 and sys.argv[5] else []
    sys.exit(_worker([int(s) for s in _sizes.split(",")], int(_warm), int(_reps), _out, _cpus))
