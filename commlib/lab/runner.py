"""The notebook's side of the lab: launch ``mpiexec``, show progress, read the JSON back.

Everything runs on this machine only: ``mpiexec -launcher fork -iface lo``
starts the ranks as local child processes (no ssh, no host list), and
``UCX_TLS=self,sm`` keeps MPICH's UCX transport on shared memory, so no
byte leaves the machine. The same scripts run across machines by naming
hosts instead (see :func:`command_text`); that is shown, not run, here.

A run can be pinned to a few CPU cores (``cpus=``, Linux): the ranks
inherit the affinity of ``mpiexec``, so "four ranks on two cores" means
the same on a laptop and on a 64-core server (:func:`lab_cpus`). Within
that set each rank of :mod:`commlib.lab.measure` then binds itself to one
core, round robin (:func:`commlib.lab.measure.rank_core`).

>>> command_text(8, ["commlib.lab.measure", "--out", "r.json"], hosts=["a", "b"], python="python",
...              mpiexec="mpiexec")
'mpiexec -hosts a,b -n 8 python -m commlib.lab.measure --out r.json'
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..units import check_count
from .fit import Series, least_loaded

__all__ = [
    "MPICH_ALLREDUCE_ALGORITHMS",
    "THREAD_LEVELS",
    "AUTO_ALGORITHMS",
    "RunResult",
    "mpiexec_path",
    "loopback_env",
    "launch_command",
    "command_text",
    "run_mpi",
    "measure",
    "load",
    "to_series",
    "cpu_model",
    "machine_facts",
    "lab_cpus",
    "kept_sweep",
    "ProgressBySweep",
    "sweeps_of",
    "copy_control",
    "copy_cpu_control",
    "clock_steps",
    "cpu_seconds",
    "page_shares",
    "fault_fractions",
    "least_loaded_series",
    "spread_at",
]

#: MPICH's names for its all-reduce algorithms (``MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM``) and the
#: cost-model algorithm each one is (Thakur, Rabenseifner & Gropp 2005).
MPICH_ALLREDUCE_ALGORITHMS = {
    "ring": "ring",
    "recursive_doubling": "recursive_doubling",
    "reduce_scatter_allgather": "halving_doubling",
}

#: The thread support a rank may ask of MPI at start (``MPI_Init_thread``), in mpi4py's names, least first.
THREAD_LEVELS = ("single", "funneled", "serialized", "multiple")

#: Cost-model algorithm assumed for each op when the library chooses by itself: ``"mpich"``, the one
#: MPICH's automatic selection runs at each size and rank count (:mod:`commlib.lab.mpich`; for
#: broadcast on fewer than 8 ranks a binomial tree at every size).
AUTO_ALGORITHMS = {op: "mpich" for op in ("all_reduce", "reduce_scatter", "all_gather", "broadcast")}

#: The library that moved the bytes, by the JSON's ``impl`` (the point-to-point all-reduces run on MPICH too).
_LIBRARY_OF = {"torch_gloo": "gloo"}

_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the commlib package


@dataclass(frozen=True)
class RunResult:
    """What one ``mpiexec`` run gave: exit status, stdout, stderr, and whether it was killed by the timeout."""

    command: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool

    @property
    def ok(self) -> bool:
        """Finished in time with exit status 0."""
        return not self.timed_out and self.returncode == 0


def mpiexec_path() -> str | None:
    """``mpiexec`` next to this Python (a venv's ``bin``), else the first on ``PATH``, else None."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    return shutil.which("mpiexec")


def loopback_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for local runs: commlib importable, UCX on shared memory only, plus ``extra``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("UCX_TLS", "self,sm")
    env.setdefault("PYTHONHASHSEED", "0")
    env.update(extra or {})
    return env


def launch_command(n: int, module_args: Sequence[str], hosts: Sequence[str] | None = None,
                   python: str | None = None, mpiexec: str | None = None) -> list[str]:
    """The argument list ``mpiexec ... -n n python -m module args``.

    Without ``hosts`` the ranks are forked locally on the loopback interface;
    with ``hosts`` the list is what one would type on a cluster.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a whole number >= 1, got {n!r}")
    if not module_args:
        raise ValueError("module_args must start with a module name, e.g. 'commlib.lab.measure'")
    exe = mpiexec or mpiexec_path()
    if exe is None:
        raise ValueError("mpiexec not found: install it with 'pip install mpich mpi4py'")
    py = python or sys.executable
    where = ["-hosts", ",".join(hosts)] if hosts else ["-launcher", "fork", "-iface", "lo"]
    return [exe, *where, "-n", str(n), py, "-m", *module_args]


def command_text(n: int, module_args: Sequence[str], hosts: Sequence[str] | None = None, python: str = "python",
                 mpiexec: str = "mpiexec") -> str:
    """:func:`launch_command` as one shell line, for showing."""
    return shlex.join(launch_command(n, module_args, hosts, python, mpiexec))


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole session: mpiexec and every rank it forked
    except (ProcessLookupError, PermissionError):
        pass


def lab_cpus(count: int = 2) -> tuple[int, ...]:
    """The first ``count`` CPU cores this process may run on (fewer if it has fewer), to pin a run to.

    Returns ``()`` where the OS cannot pin processes (not Linux): runs then
    use every core. ``len(lab_cpus(2))`` is 2 on any Linux machine with at
    least two usable cores.

    >>> len(lab_cpus(1)) <= 1
    True
    """
    count = check_count("count", count, minimum=1)
    if not hasattr(os, "sched_getaffinity"):
        return ()
    return tuple(sorted(os.sched_getaffinity(0))[:count])


_PIN = ("import os, sys; os.sched_setaffinity(0, [int(c) for c in sys.argv[1].split(',')]); "
        "os.execvp(sys.argv[2], sys.argv[2:])")


def _pinned(cmd: list[str], cpus: Sequence[int] | None) -> list[str]:
    """``cmd`` started through a tiny Python shim that pins itself to ``cpus`` and then execs ``cmd``.

    Affinity is inherited across ``exec`` and ``fork``, so ``mpiexec`` and
    every rank it forks stay on those cores. (A shim, not ``preexec_fn``,
    because the notebook's kernel runs threads.)
    """
    if not cpus:
        return list(cmd)
    cpus = [int(c) for c in cpus]
    if not hasattr(os, "sched_setaffinity"):
        raise ValueError("cpus: this OS cannot pin processes to cores; pass cpus=None")
    allowed = os.sched_getaffinity(0)
    if not set(cpus) <= allowed:
        raise ValueError(f"cpus must be cores this process may use ({sorted(allowed)}), got {cpus}")
    return [sys.executable, "-c", _PIN, ",".join(map(str, cpus)), *cmd]


def run_mpi(n: int, module_args: Sequence[str], timeout: float = 120.0,
            progress: Callable[[str], None] | None = None, env: dict[str, str] | None = None,
            cwd: str | None = None, cpus: Sequence[int] | None = None,
            ready: Callable[[], bool] | None = None, startup_timeout: float = 300.0) -> RunResult:
    """Run ``python -m module_args`` on ``n`` local ranks; stream stderr lines to ``progress``.

    The run is killed (with every rank) after ``timeout`` seconds; the
    result then says ``timed_out``. Never raises for a failing run.
    ``cpus`` pins ``mpiexec`` and every rank to those cores (see :func:`lab_cpus`).

    With ``ready`` (a function polled a few times a second) the ``timeout``
    clock starts only once ``ready()`` is true, for example once every rank
    has started; until then ``startup_timeout`` applies. Starting Python,
    NumPy and MPI on a loaded machine can take many seconds, and that must
    not count as a hang of the code under test.
    """
    if timeout <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
    if startup_timeout <= 0:
        raise ValueError(f"startup_timeout must be > 0 seconds, got {startup_timeout!r}")
    cmd = launch_command(n, module_args)
    proc = subprocess.Popen(_pinned(cmd, cpus), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=loopback_env(env), cwd=cwd, start_new_session=True)
    err_lines: list[str] = []
    out_chunks: list[str] = []

    def pump_err():
        assert proc.stderr is not None
        for line in proc.stderr:
            err_lines.append(line)
            if progress is not None:
                progress(line.rstrip("\n"))

    def pump_out():
        assert proc.stdout is not None
        out_chunks.append(proc.stdout.read())

    threads = [threading.Thread(target=pump_err, daemon=True), threading.Thread(target=pump_out, daemon=True)]
    for t in threads:
        t.start()
    timed_out = False
    try:
        if ready is None:
            proc.wait(timeout=timeout)
        else:
            deadline = time.monotonic() + startup_timeout
            started = False
            while proc.poll() is None:
                if not started and ready():
                    started = True
                    deadline = time.monotonic() + timeout
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(cmd, timeout if started else startup_timeout)
                try:
                    proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
        proc.wait()
    _kill(proc)  # stray ranks, if mpiexec left any
    for t in threads:
        t.join(timeout=5)
    return RunResult(tuple(cmd), proc.returncode, "".join(out_chunks), "".join(err_lines), timed_out)


def measure(n: int = 4, ops: Sequence[str] = ("all_reduce", "reduce_scatter", "all_gather", "broadcast"),
            sizes: Sequence[int] = (), impl: str = "mpi", warmup: int = 2, repeats: int = 10,
            min_repeats: int = 3, budget: float = 0.5, mpich_algorithm: str | None = None,
            timeout: float = 300.0, progress: Callable[[str], None] | None = print,
            cpus: Sequence[int] | None = None, sweeps: int = 2, order: str = "shuffled", seed: int = 0,
            copy: bool = False, thread_level: str | None = None) -> dict:
    """Run :mod:`commlib.lab.measure` on ``n`` local ranks and return its JSON as a dict.

    The ops are timed in turns at each size, ``sweeps`` times over the
    sizes in ``order`` (seeded by ``seed``); ``repeats``, ``min_repeats``
    and ``budget`` apply to each sweep; ``copy`` adds the copy control to
    the turns (see :func:`commlib.lab.measure.measure`).

    ``mpich_algorithm`` forces MPICH's all-reduce algorithm (a key of
    :data:`MPICH_ALLREDUCE_ALGORITHMS`); ``None`` lets the library choose.
    ``progress`` receives one line per size. ``cpus`` pins the ranks to
    those cores (:func:`lab_cpus`), and each rank binds itself to one of
    them, round robin (``rank_cores`` in the JSON); the JSON's ``cpu_count``
    then counts only them. ``timeout`` (seconds) is generous on purpose: a loaded
    machine is slow, not broken. Raises RuntimeError with the ranks' error
    output if the run fails or times out.

    ``thread_level`` is the thread support each rank asks of MPI when it
    starts (one of :data:`THREAD_LEVELS`; the JSON's ``thread_level`` records
    what it got). ``None`` keeps mpi4py's default, ``"multiple"``, at which
    MPICH switches off its shared-memory collectives (:mod:`commlib.lab.mpich`).
    """
    env = {}
    if thread_level is not None and thread_level not in THREAD_LEVELS:
        raise ValueError(f"thread_level must be None or one of {', '.join(THREAD_LEVELS)}; got {thread_level!r}")
    if mpich_algorithm is not None:
        if mpich_algorithm not in MPICH_ALLREDUCE_ALGORITHMS:
            raise ValueError(f"mpich_algorithm must be one of {', '.join(MPICH_ALLREDUCE_ALGORITHMS)}; "
                             f"got {mpich_algorithm!r}")
        env = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": mpich_algorithm}
    if thread_level is not None:
        env["MPI4PY_RC_THREAD_LEVEL"] = thread_level  # mpi4py reads it before MPI_Init_thread
    with tempfile.TemporaryDirectory(prefix="commlib-lab-") as tmp:
        out = os.path.join(tmp, "results.json")
        args = ["commlib.lab.measure", "--ops", ",".join(ops), "--impl", impl, "--warmup", str(warmup),
                "--repeats", str(repeats), "--min-repeats", str(min_repeats), "--budget", str(budget),
                "--sweeps", str(sweeps), "--order", order, "--seed", str(seed), "--out", out, "--progress"]
        if copy:
            args.append("--copy")
        if sizes:
            args += ["--sizes", ",".join(str(int(s)) for s in sizes)]
        run = run_mpi(n, args, timeout=timeout, progress=progress, env=env, cpus=cpus)
        if not run.ok or not os.path.exists(out):
            why = "timed out" if run.timed_out else f"exited with status {run.returncode}"
            raise RuntimeError(f"measurement {why}: {run.stderr.strip()[-2000:]}")
        doc = load(out)
    if doc["ranks"] != n:  # each process saw a world of its own: mpi4py's MPI library is not mpiexec's
        raise RuntimeError(f"asked for {n} ranks, the run had {doc['ranks']}: mpi4py uses another MPI library "
                           f"({doc.get('mpi_library')}) than {launch_command(n, ['x'])[0]}; set MPI4PY_LIBMPI")
    return doc


_PROGRESS_LINE = re.compile(r"^\[\d+/\d+\] sweep (\d+) ")


class ProgressBySweep:
    """A ``progress`` callback that prints one line per sweep (not per size): short, stable output.

    Only the measurement's own progress lines (``[i/total] sweep k size``)
    count; anything else the MPI library writes to stderr (warnings, with
    host names and process ids) is kept out of the output.

    >>> p = ProgressBySweep()
    >>> p("[1/4] sweep 1 1 KiB"); p("[2/4] sweep 1 2 KiB"); p("[1699.2] [host:42] ucx WARN x")
    measuring, sweep 1 ...
    """

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.seen: list[str] = []

    def __call__(self, line: str) -> None:
        match = _PROGRESS_LINE.match(line)
        if match and match.group(1) not in self.seen:
            self.seen.append(match.group(1))
            print(f"{self.prefix}measuring, sweep {match.group(1)} ...", flush=True)


def load(path: str | os.PathLike) -> dict:
    """Read a measurement JSON file written by :mod:`commlib.lab.measure`."""
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict) or "results" not in doc or "ranks" not in doc:
        raise ValueError(f"{path} is not a commlib.lab.measure result (no 'results' or 'ranks')")
    return doc


def _stats(row: dict, sweep: int | None) -> tuple[float, float, float]:
    """(q1, median, q3) of a result row's samples, all of them or one sweep's."""
    if sweep is None:
        return row["q1_s"], row["median_s"], row["q3_s"]
    mine = [t for t, k in zip(row["samples_s"], row.get("sweep", [0] * len(row["samples_s"]))) if k == sweep]
    if not mine:
        raise ValueError(f"sweep must be one of the run's sweeps (0 to {max(row.get('sweep', [0]))}), got {sweep}")
    q1, med, q3 = np.percentile(mine, [25, 50, 75])
    return float(q1), float(med), float(q3)


def sweeps_of(doc: dict) -> int:
    """How many sweeps over the sizes a measurement made (1 for runs that do not say)."""
    return int(doc.get("sweeps", 1))


def _copy_rows(doc: dict) -> list[dict]:
    rows = sorted((r for r in doc["results"] if r["op"] == "copy"), key=lambda r: r["nbytes"])
    if not rows:
        raise ValueError("this measurement has no copy control (run it with copy=True)")
    return rows


def _least_loaded_sweep(row: dict) -> int:
    """The sweep whose calls have the lower median at this row's size (the rule of :func:`least_loaded_series`)."""
    sweeps = sorted(set(row.get("sweep", [0] * len(row["samples_s"]))))
    return min(sweeps, key=lambda k: _stats(row, k)[1])


def kept_sweep(doc: dict, op: str, nbytes: float, impl: str | None = None) -> int:
    """The sweep :func:`least_loaded_series` (or :func:`copy_control` with ``least_loaded``, for ``op="copy"``)
    keeps for ``op`` at ``nbytes``: the one whose median is lower (0 for a run of one sweep).

    ``impl``: which implementation's row, where a run timed several (default: the first found).
    """
    rows = [r for r in doc["results"] if r["op"] == op and float(r["nbytes"]) == float(nbytes)
            and (impl is None or r.get("impl") == impl)]
    if not rows:
        raise ValueError(f"op and nbytes must name a timed row, got {op!r} at {nbytes!r} bytes")
    return _least_loaded_sweep(rows[0])


def _copy_stats(row: dict, least_loaded: bool) -> tuple[float, float, float, list[float] | None]:
    """(q1, median, q3, CPU times) of a copy row: all its calls, or those of its less loaded sweep."""
    cpu = row.get("cpu_s")
    if not least_loaded:
        return row["q1_s"], row["median_s"], row["q3_s"], cpu
    k = _least_loaded_sweep(row)
    q1, med, q3 = _stats(row, k)
    labels = row.get("sweep", [0] * len(row["samples_s"]))
    return q1, med, q3, (None if cpu is None else [c for c, kk in zip(cpu, labels) if kk == k])


def copy_control(doc: dict, least_loaded: bool = False
                 ) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """The copy control of a run timed with ``copy=True``: ``(sizes, rates, low, high)``, bytes and bytes/s.

    At size ``M`` every rank copied a block of ``1.5 M`` bytes at the same
    moment; the rate is bytes copied per second and per rank, ``1.5 M`` over
    the slowest rank's time: the median, and the rates of the quartile times
    (``low`` from the third quartile, ``high`` from the first).
    ``least_loaded``: at each size, the calls of the sweep with the lower
    median only, the rule :func:`least_loaded_series` applies to the
    collectives (so both sides of a comparison are treated alike); else
    every call pooled.
    """
    rows = _copy_rows(doc)
    stats = [_copy_stats(r, least_loaded) for r in rows]
    sizes = tuple(float(r["nbytes"]) for r in rows)
    block = [3 * r["nbytes"] // 2 // 4 * 4 for r in rows]
    return (sizes, tuple(b / med for b, (_, med, _, _) in zip(block, stats)),
            tuple(b / q3 for b, (_, _, q3, _) in zip(block, stats)),
            tuple(b / q1 for b, (q1, _, _, _) in zip(block, stats)))


def copy_cpu_control(doc: dict, least_loaded: bool = False) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The copy control's rates over CPU time instead of wall time: ``(sizes, rates)``, bytes and bytes/s.

    ``1.5 M`` over the median of the slowest rank's CPU time per call
    (``time.thread_time``). Wall time counts the moments a rank waited for
    its core while other programs ran; CPU time counts only the moments it
    copied. On an idle machine the two rates agree; where the wall-time rate
    is the lower, load slowed the copy, and the CPU-time rate is the nearer
    to what one thread's copy costs when it runs. Neither is the memory's
    peak: one thread per rank copies, and the clock's resolution blurs the
    smallest sizes. ``least_loaded``: the calls of the sweep
    :func:`copy_control` keeps at each size with the same flag.
    """
    rows = sorted((r for r in doc["results"] if r["op"] == "copy"), key=lambda r: r["nbytes"])
    if not rows or any("cpu_s" not in r for r in rows):
        raise ValueError("this measurement has no CPU times of the copy control (run it with copy=True)")
    sizes = tuple(float(r["nbytes"]) for r in rows)
    block = [3 * r["nbytes"] // 2 // 4 * 4 for r in rows]
    cpus = [_copy_stats(r, least_loaded)[3] for r in rows]
    return sizes, tuple(b / max(float(np.median(c)), 1e-9) for b, c in zip(block, cpus))


def _clock_medians(row: dict) -> tuple[float, float | None]:
    """(wall, CPU) medians of a row's calls in its less loaded sweep (the sweep :func:`least_loaded_series` keeps)."""
    k = _least_loaded_sweep(row)
    labels = row.get("sweep", [0] * len(row["samples_s"]))
    wall = float(np.median([t for t, kk in zip(row["samples_s"], labels) if kk == k]))
    cpu = row.get("cpu_s")
    return wall, (None if cpu is None else float(np.median([c for c, kk in zip(cpu, labels) if kk == k])))


def _first_row_by_size(doc: dict, op: str) -> dict[float, dict]:
    """``op``'s rows of a run by message size (bytes), the first implementation's row at each size."""
    seen: dict[float, dict] = {}
    for r in sorted((r for r in doc["results"] if r["op"] == op), key=lambda r: r["nbytes"]):
        seen.setdefault(float(r["nbytes"]), r)
    if not seen:
        raise ValueError(f"op must name a timed collective of this run, got {op!r}")
    return seen


def cpu_seconds(doc: dict, op: str, sizes: Sequence[float]) -> list[float] | None:
    """The least-scheduled rank's CPU seconds per call of ``op`` at each of ``sizes``: the median of the calls
    :func:`least_loaded_series` keeps (the first implementation's row at each size), for
    :func:`commlib.lab.fit.step_holds`. ``None`` where the run recorded no CPU time at one of the sizes.

    >>> row = lambda nb, wall, cpu: {"op": "all_reduce", "nbytes": nb, "samples_s": [wall] * 3, "cpu_s": [cpu] * 3}
    >>> cpu_seconds({"results": [row(2**20, 4e-4, 3e-4), row(2**21, 3.2e-3, 6e-4)]}, "all_reduce", [2**20, 2**21])
    [0.0003, 0.0006]
    """
    seen = _first_row_by_size(doc, op)
    out = []
    for x in sizes:
        if float(x) not in seen:
            raise ValueError(f"sizes must be measured sizes of {op}, got {x!r}")
        cpu = _clock_medians(seen[float(x)])[1]
        if cpu is None:
            return None
        out.append(cpu)
    return out


def page_shares(doc: dict, op: str, sizes: Sequence[float]) -> list[float] | None:
    """The pages each call of ``op`` mapped in afresh at each of ``sizes``, as fractions of the message: the
    median of the kept sweep's calls (as :func:`fault_fractions` reads them), for
    :func:`commlib.lab.fit.step_holds`. ``None`` where the run did not count faults.

    >>> row = lambda nb, f: {"op": "all_reduce", "nbytes": nb, "samples_s": [1.0] * 3, "faults": [f] * 3}
    >>> page_shares({"page_bytes": 4096, "results": [row(2**24, 0), row(2**25, 4096)]}, "all_reduce", [2**24, 2**25])
    [0.0, 0.5]
    """
    cuts = [float(x) - 0.5 for x in sizes]      # each size is the smallest above a cut just below it
    out = []
    for x, pair in zip(sizes, fault_fractions(doc, op, cuts)):
        if pair is None:
            last = fault_fractions(doc, op, [float(x) + 0.5])[0]    # the smallest size has nothing below it
            if last is None:
                return None
            out.append(last[0])
        else:
            out.append(pair[1])
    return out


def clock_steps(doc: dict, op: str, cuts: Sequence[float]) -> list[tuple[float, float] | None]:
    """How much dearer each byte got across each cut, by the wall clock and by the ranks' own CPU time.

    For each cut (bytes, between two measured sizes), ``(wall, cpu)``: the
    time per byte at the smallest size above the cut over that at the
    largest size below it, from the medians of the calls :func:`least_loaded_series`
    keeps, in wall time and in CPU time (``cpu_s``, the least-scheduled
    rank's :func:`time.thread_time` per call). A change in the machine
    (a protocol, a cache) shows on both clocks; a change made by waits for
    the core (a call that outlasts a time slice on a loaded machine) shows on
    the wall clock alone. ``None`` for a cut with no measured size on one
    side, or where the run recorded no CPU times for ``op``.

    >>> row = lambda nb, wall, cpu: {"op": "all_reduce", "nbytes": nb, "samples_s": [wall] * 3, "cpu_s": [cpu] * 3}
    >>> doc = {"results": [row(2**20, 4e-4, 3e-4), row(2**21, 3.2e-3, 6e-4)]}
    >>> [tuple(round(x, 2) for x in step) for step in clock_steps(doc, "all_reduce", [1.5 * 2**20])]
    [(4.0, 1.0)]
    """
    seen = _first_row_by_size(doc, op)
    sizes = sorted(seen)
    out: list[tuple[float, float] | None] = []
    for cut in cuts:
        below = [x for x in sizes if x < cut]
        above = [x for x in sizes if x > cut]
        if not below or not above:
            out.append(None)
            continue
        lo, hi = below[-1], above[0]
        (w_lo, c_lo), (w_hi, c_hi) = _clock_medians(seen[lo]), _clock_medians(seen[hi])
        if c_lo is None or c_hi is None or c_lo <= 0 or w_lo <= 0:
            out.append(None)
            continue
        out.append(((w_hi / hi) / (w_lo / lo), (c_hi / hi) / (c_lo / lo)))
    return out


def fault_fractions(doc: dict, op: str, cuts: Sequence[float]) -> list[tuple[float, float] | None]:
    """The pages each call mapped in afresh on either side of each cut, as fractions of the message's bytes.

    For each cut (bytes, between two measured sizes), ``(below, above)``:
    the median minor page faults per call (``faults``: the most any rank
    took, :func:`commlib.lab.measure.measure`) times the page size
    (``page_bytes``), over the message size, at the largest size below the
    cut and the smallest above it, from the calls of the sweep
    :func:`least_loaded_series` keeps. A library whose temporary buffer the
    allocator maps anew on every call (glibc maps blocks from its mmap
    threshold up, at most 32 MiB on 64-bit systems) faults in every page of it
    it touches, every call. ``None`` for a cut with no measured size on one
    side, or where the run did not count faults.

    >>> row = lambda nb, f: {"op": "all_reduce", "nbytes": nb, "samples_s": [1.0] * 3, "faults": [f] * 3}
    >>> doc = {"page_bytes": 4096, "results": [row(2**24, 205), row(2**25, 4097)]}
    >>> [tuple(round(x, 2) for x in f) for f in fault_fractions(doc, "all_reduce", [1.5 * 2**24])]
    [(0.05, 0.5)]
    """
    seen = _first_row_by_size(doc, op)
    sizes, page = sorted(seen), doc.get("page_bytes")

    def fraction(x: float) -> float | None:
        row = seen[x]
        if "faults" not in row or not page:
            return None
        k = _least_loaded_sweep(row)
        labels = row.get("sweep", [0] * len(row["samples_s"]))
        return float(np.median([f for f, kk in zip(row["faults"], labels) if kk == k])) * page / x

    out: list[tuple[float, float] | None] = []
    for cut in cuts:
        below = [x for x in sizes if x < cut]
        above = [x for x in sizes if x > cut]
        pair = (fraction(below[-1]), fraction(above[0])) if below and above else (None, None)
        out.append(None if None in pair else pair)
    return out


def spread_at(doc: dict, op: str, nbytes: float) -> tuple[float, float, float, float | None]:
    """``(q1, median, q3, cpu)`` of ``op`` at ``nbytes`` over every call of the run (both sweeps pooled, seconds):
    the slowest rank's wall-time quartiles and median, and the median CPU time per call of the rank that used
    least (None where the run recorded none). Pooled, not the faster sweep's: for a control whose point is how
    the calls spread.

    >>> row = {"op": "all_reduce", "nbytes": 1024, "samples_s": [1e-3, 2e-3, 3e-3], "q1_s": 1.5e-3,
    ...        "median_s": 2e-3, "q3_s": 2.5e-3, "cpu_s": [1e-4, 2e-4, 3e-4]}
    >>> spread_at({"results": [row]}, "all_reduce", 1024)
    (0.0015, 0.002, 0.0025, 0.0002)
    """
    row = _first_row_by_size(doc, op).get(float(nbytes))
    if row is None:
        raise ValueError(f"nbytes must be a measured size of {op}, got {nbytes!r}")
    cpu = row.get("cpu_s")
    return (float(row["q1_s"]), float(row["median_s"]), float(row["q3_s"]),
            None if cpu is None else float(np.median(cpu)))


def least_loaded_series(doc: dict, label: str | None = None) -> list[Series]:
    """:func:`to_series`, but at each size only the sweep whose median is lower (:func:`commlib.lab.fit.least_loaded`).

    Load only slows calls down, so the faster of two sweeps timed at
    different moments is the less loaded at that size. With noise alone
    the choice reads a little low: the lower of two medians, by a fraction
    of the spread. A run of one sweep gives :func:`to_series` itself.
    """
    sweeps = [to_series(doc, label, sweep=k) for k in range(sweeps_of(doc))]
    return [least_loaded(group) for group in zip(*sweeps)]


def to_series(doc: dict, label: str | None = None, sweep: int | None = None) -> list[Series]:
    """One :class:`commlib.lab.fit.Series` per op of a measurement, with the cost-model algorithm it ran.

    A run that timed several implementations in turns gives one series per
    op and implementation. The algorithm is the point-to-point one for
    ``impl`` ring or halving_doubling, the forced MPICH one if the run forced it, else
    :data:`AUTO_ALGORITHMS`. Spread is the quartiles. ``sweep`` (0, 1, ...):
    the medians and quartiles of that sweep's calls alone; ``None``: of all.
    The copy control is no collective and is left out (:func:`copy_control`).
    """
    n = int(doc["ranks"])
    default = doc.get("impl", "mpi")  # each entry names its own implementation when a run timed several
    forced = doc.get("allreduce_algorithm", "auto")
    out = []
    for op, impl in dict.fromkeys((r["op"], r.get("impl", default)) for r in doc["results"] if r["op"] != "copy"):
        rows = sorted((r for r in doc["results"] if r["op"] == op and r.get("impl", default) == impl),
                      key=lambda r: r["nbytes"])
        if impl in ("ring", "halving_doubling"):
            algorithm = impl
        elif impl == "torch_gloo":
            algorithm = "ring"  # gloo's all-reduce for large buffers is ring-based
        elif op == "all_reduce" and forced in MPICH_ALLREDUCE_ALGORITHMS:
            algorithm = MPICH_ALLREDUCE_ALGORITHMS[forced]
        else:
            algorithm = AUTO_ALGORITHMS[op]
        what = (f"{op} ({impl})" if impl != "mpi" else
                f"{op} (MPICH {forced})" if op == "all_reduce" and forced != "auto" else op)
        name = label or f"{what}, {n} ranks"
        stats = [_stats(r, sweep) for r in rows]
        out.append(Series(op, n, tuple(r["nbytes"] for r in rows), tuple(m for _, m, _ in stats), algorithm,
                          tuple(lo for lo, _, _ in stats), tuple(hi for _, _, hi in stats), name,
                          _LIBRARY_OF.get(impl, "mpich")))
    return out


def cpu_model() -> str | None:
    """The processor's name as the OS reports it (``/proc/cpuinfo``'s first ``model name``), or None."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or None


def machine_facts() -> dict:
    """What limits a one-machine lab: CPU cores, last-level cache and memory, read from the OS.

    Keys: ``cpu_count``; ``llc_bytes`` (largest CPU cache, None if unknown);
    ``memory_bytes`` (None if unknown); ``virtual`` (the CPU's ``hypervisor`` flag; Linux only). Linux reads ``/sys`` and
    ``/proc``; elsewhere the unknowns stay None.
    """
    facts: dict = {"cpu_count": os.cpu_count() or 1, "llc_bytes": None, "memory_bytes": None}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    sizes = []
    for index in sorted(base.glob("index*")) if base.exists() else []:
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        units = {"K": 2**10, "M": 2**20, "G": 2**30}
        if text and text[-1] in units and text[:-1].isdigit():
            sizes.append(int(text[:-1]) * units[text[-1]])
    if sizes:
        facts["llc_bytes"] = max(sizes)
    try:  # a guest of a hypervisor: its idleness is its own cores', not its host's (explain.is_virtual)
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            flags = next((line for line in fh if line.startswith("flags")), "")
        facts["virtual"] = "hypervisor" in flags.split() if flags else None
    except OSError:
        pass
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    facts["memory_bytes"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return facts

