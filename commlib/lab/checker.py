"""Check a learner's ``ring_allreduce(comm, array)`` by running it under ``mpiexec``.

The learner's function may live in a source file (``"my_ring.py"``), a
module (``"mypkg.ring"`` or ``"mypkg.ring:my_function"``), a string of
source code, or be a function defined in a notebook cell (its source is
copied into a file). :func:`check_ring_allreduce` runs it on ``n`` local
ranks with integer arrays of several lengths -- one a multiple of ``n``,
one not, one shorter than ``n`` -- and compares each rank's answer with
the sum it computes itself (every rank can rebuild every rank's input from
its seed, so the check needs no communication of its own).

Every way of failing gives a verdict and a hint, never a traceback: a wrong
sum, a wrong shape or type, ``None`` returned, an exception on some rank,
a deadlock (the run is killed after ``timeout`` seconds). Each rank writes
its verdict to a file the moment it knows it, so a crash or a hang on one
rank still leaves the others' reports. The deadlock clock starts only
once every rank has loaded the function, so a slow start on a loaded
machine (Python, NumPy and MPI on every rank) is never taken for a hang.

>>> v = Verdict(False, "wrong sum on rank 1", "the all-gather phase is missing")
>>> print(v)
Wrong: wrong sum on rank 1
Hint: the all-gather phase is missing
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import json
import os
import sys
import tempfile
import textwrap
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..collectives.engine import split_bounds

__all__ = ["Verdict", "check_ring_allreduce", "rank_input", "expected_sum", "diagnose", "DEFAULT_COUNTS",
           "LIBRARY_COLLECTIVES", "library_collectives"]

#: Columns at which a printed verdict wraps: a page column of the book shows about 78 monospace characters.
WIDTH = 76

#: Array lengths tried: a multiple of 4, a length 4 does not divide, a length shorter than 4 ranks.
DEFAULT_COUNTS = (12, 10, 3)


#: The MPI library's own collectives (mpi4py's buffer and object forms, blocking and not): the exercise asks for the
#: ring built from point-to-point messages, so a function that calls one of these is refused before it runs.
LIBRARY_COLLECTIVES = frozenset(
    f"{prefix}{name}" for name in ("Allreduce", "Reduce", "Reduce_scatter", "Reduce_scatter_block", "Allgather",
                                   "Allgatherv", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Alltoall",
                                   "Alltoallv", "Scan", "Exscan")
    for prefix in ("", "I")) | {"allreduce", "reduce", "allgather", "bcast", "gather", "scatter", "alltoall",
                                "scan", "exscan"}


def library_collectives(source: str, name: str = "ring_allreduce") -> list[tuple[str, int]]:
    r"""The library collectives (:data:`LIBRARY_COLLECTIVES`) that function ``name`` in ``source`` calls, as
    (method, line counted from the function's ``def``); the whole source where it defines no such function.

    >>> library_collectives("def ring_allreduce(comm, a):\n    comm.Allreduce(a.copy(), a)\n    return a\n")
    [('Allreduce', 2)]
    >>> library_collectives("def ring_allreduce(comm, a):\n    comm.Sendrecv(a, dest=0, source=0)\n    return a\n")
    []
    """
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return []  # the worker reports the syntax error with its line
    node, first = tree, 1
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) and top.name == name:
            node, first = top, top.lineno
    return [(call.func.attr, call.lineno - first + 1) for call in ast.walk(node)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in LIBRARY_COLLECTIVES]


def _target_source(target: str) -> str | None:
    """The source text of a worker target (a file, or a module named as ``pkg.mod``), or None."""
    try:
        if target.endswith(".py") or os.path.sep in target:
            return Path(target).read_text(encoding="utf-8")
        spec = importlib.util.find_spec(target.split(":", 1)[0])
        return Path(spec.origin).read_text(encoding="utf-8") if spec and spec.origin else None
    except (OSError, ImportError, ValueError):
        return None


def _wrap(text: str, indent: int) -> str:
    """``text`` wrapped at :data:`WIDTH` columns, continuation lines indented; its own line breaks kept."""
    return "\n".join(textwrap.fill(line, WIDTH, subsequent_indent=" " * indent, break_on_hyphens=False,
                                    break_long_words=False) or line
                      for line in text.split("\n"))


@dataclass(frozen=True)
class Verdict:
    """Right or wrong, what happened, and a hint."""

    correct: bool
    message: str
    hint: str = ""

    def __str__(self) -> str:
        """The verdict and the hint, each wrapped at :data:`WIDTH` columns so it fits a page column."""
        text = _wrap(("Right: " if self.correct else "Wrong: ") + self.message, 7)
        return text + ("\n" + _wrap(f"Hint: {self.hint}", 6) if self.hint else "")

    def __repr__(self) -> str:
        return str(self)

    def __bool__(self) -> bool:
        return self.correct


def rank_input(rank: int, count: int, seed: int = 7) -> np.ndarray:
    """The int64 array rank ``rank`` feeds the function for length ``count`` (small values, seeded)."""
    return np.random.default_rng([seed, rank, count]).integers(-1000, 1000, size=count, dtype=np.int64)


def expected_sum(n: int, count: int, seed: int = 7) -> np.ndarray:
    """The element-wise sum of every rank's :func:`rank_input`: the right answer on every rank."""
    return sum((rank_input(r, count, seed) for r in range(n)), start=np.zeros(count, dtype=np.int64))


def diagnose(got, rank: int, n: int, count: int, seed: int = 7) -> tuple[str, str]:
    """Compare one rank's result with the right sum; return ``("ok", "")`` or ``(problem, hint)``."""
    want = expected_sum(n, count, seed)
    mine = rank_input(rank, count, seed)
    if got is None:
        return "returned None", "return the summed array (a new array, or your buffer after the two phases)."
    if not isinstance(got, np.ndarray):
        return (f"returned a {type(got).__name__}, not a NumPy array",
                "return a numpy.ndarray with the same shape and dtype as the input.")
    if got.shape != want.shape:
        return (f"returned shape {got.shape}, expected {want.shape}",
                "the result must have the input's shape: every rank ends with the whole summed vector, "
                "not just its own chunk.")
    if got.dtype != want.dtype:
        return (f"returned dtype {got.dtype}, expected {want.dtype}",
                "keep the input's dtype (for example np.empty_like(array) for receive buffers).")
    if np.array_equal(got, want):
        return "ok", ""
    if np.array_equal(got, mine):
        return "result equals this rank's own input", "nothing was added: each received chunk must be added into "\
                                                       "your buffer during the reduce-scatter phase."
    bounds = split_bounds(0, count, n).tolist()
    right = [bool(np.array_equal(got[bounds[c]:bounds[c + 1]], want[bounds[c]:bounds[c + 1]]))
             for c in range(n) if bounds[c + 1] > bounds[c]]
    if sum(right) == 1 and len(right) > 1:
        return ("only one chunk holds the full sum",
                "the reduce-scatter looks right; the all-gather phase (n-1 more steps passing finished chunks "
                "around the ring) is missing or sends the wrong chunk.")
    first = int(np.flatnonzero(got != want)[0])
    return (f"wrong sum at index {first}: got {got[first]}, expected {want[first]}",
            "in step s rank r sends chunk (r - s) mod n to rank r+1 and adds what it receives from r-1 "
            "into chunk (r - s - 1) mod n; check those indices and that chunks follow np.array_split.")


# --------------------------------------------------------------------------- worker (runs under mpiexec)

def _load_function(target: str, name: str) -> Callable:
    if target.endswith(".py") or os.path.sep in target:
        spec = importlib.util.spec_from_file_location("learner_solution", target)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {target}")
        module = importlib.util.module_from_spec(spec)
        from mpi4py import MPI

        # Source from a notebook cell relies on the notebook's imports; provide the usual two, so line
        # numbers in error messages are the learner's own.
        module.__dict__.update({"np": np, "MPI": MPI})
        spec.loader.exec_module(module)
    else:
        if ":" in target:
            target, name = target.split(":", 1)
        module = importlib.import_module(target)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise AttributeError(f"no function {name!r} in {target}")
    return fn


def _where(exc: BaseException, fn: Callable) -> str:
    """Where in the learner's function an exception came from: its own line, counted from the ``def`` (line 1),
    and whether the error was raised inside MPI (or another library) called from that line."""
    frames = traceback.extract_tb(exc.__traceback__)
    code = getattr(fn, "__code__", None)
    if code is None or not frames:
        return ""
    first = code.co_firstlineno
    own = [f for f in frames if f.filename == code.co_filename and f.lineno is not None and f.lineno >= first]
    if not own:
        return ""
    line = own[-1].lineno - first + 1
    if frames[-1] is own[-1] and not type(exc).__module__.startswith("mpi4py"):
        return f" (line {line} of your function)"
    inside = "MPI" if type(exc).__module__.startswith("mpi4py") or "mpi4py" in frames[-1].filename else "a library"
    return f" (raised inside {inside}, called from line {line} of your function)"


def _write(outdir: str, rank: int, report: dict) -> None:
    path = os.path.join(outdir, f"rank{rank}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(report, fh)
    os.replace(path + ".tmp", path)


def _worker(target: str, name: str, outdir: str, counts: Sequence[int], seed: int) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    report: dict = {"rank": rank, "cases": []}
    try:
        fn = _load_function(target, name)
    except Exception as exc:  # the learner's file may not even import
        report["error"] = f"could not load {name}: {type(exc).__name__}: {exc}"
        _write(outdir, rank, report)
        comm.Abort(3)
        return 3
    _write(outdir, rank, report)  # "started": the parent's deadlock clock runs from here, not from launch
    for count in counts:
        x = rank_input(rank, count, seed)
        try:
            got = fn(comm, x.copy())
        except Exception as exc:
            report["error"] = f"{type(exc).__name__}: {exc}{_where(exc, fn)} for length {count}"
            _write(outdir, rank, report)
            comm.Abort(4)  # the other ranks may be waiting for this one: end the run now
            return 4
        problem, hint = diagnose(got, rank, n, count, seed)
        report["cases"].append({"count": count, "problem": problem, "hint": hint})
        _write(outdir, rank, report)
    report["done"] = True
    _write(outdir, rank, report)
    return 0


# --------------------------------------------------------------------------- parent (the notebook)

def _source_file(learner, name: str, tmp: str) -> tuple[str, str]:
    """Turn what the learner gave into (target, function name) the worker can load."""
    if callable(learner):
        try:
            src = textwrap.dedent(inspect.getsource(learner))
        except (OSError, TypeError) as exc:
            raise ValueError(f"cannot read the source of {learner!r}: {exc}; save it to a .py file") from None
        name = learner.__name__
        learner = src
    if isinstance(learner, os.PathLike):
        learner = os.fspath(learner)
    if not isinstance(learner, str):
        raise ValueError(f"learner must be a function, a .py path, a module name or source text; got {learner!r}")
    if "\n" in learner or learner.lstrip().startswith("def "):
        path = os.path.join(tmp, "learner_solution.py")
        Path(path).write_text(learner, encoding="utf-8")
        return path, name
    if learner.endswith(".py"):
        path = os.path.abspath(learner)
        if not os.path.exists(path):
            raise ValueError(f"no such file: {learner}")
        return path, name
    return learner, name


def check_ring_allreduce(learner, n: int = 4, counts: Sequence[int] = DEFAULT_COUNTS, timeout: float = 30.0,
                         name: str = "ring_allreduce", seed: int = 7, startup_timeout: float = 300.0) -> Verdict:
    """Run the learner's ``ring_allreduce(comm, array)`` on ``n`` ranks; say right or wrong, with a hint.

    ``learner`` is a function, a ``.py`` path, a module name (``"pkg.mod"``
    or ``"pkg.mod:func"``) or source text. Never raises for a wrong or
    crashing implementation; a hang is killed ``timeout`` seconds after every
    rank has started (starting may take up to ``startup_timeout`` seconds).
    """
    from .runner import run_mpi

    if not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be a whole number >= 2, got {n!r}")
    if not counts or any((not isinstance(c, int)) or c < 0 for c in counts):
        raise ValueError(f"counts must be non-negative whole numbers, got {counts!r}")
    # a rank killed after an MPI error may still be writing its report while the folder is removed
    with tempfile.TemporaryDirectory(prefix="commlib-check-", ignore_cleanup_errors=True) as tmp:
        try:
            target, fname = _source_file(learner, name, tmp)
        except ValueError as exc:
            return Verdict(False, str(exc), "define ring_allreduce(comm, array) in a cell or a .py file.")
        source = _target_source(target)
        used = library_collectives(source, target.split(":", 1)[1] if ":" in target else fname) if source else []
        if used:
            calls = ", ".join(f"{m} (line {line})" for m, line in used)
            return Verdict(False, f"your function calls the MPI library's own collective: {calls}",
                           "the exercise is to build the all-reduce from point-to-point messages: use "
                           "comm.Sendrecv only, and no Allreduce, Reduce_scatter, Allgather or other collective.")
        args = ["commlib.lab.checker", "--worker", "--target", target, "--name", fname, "--outdir", tmp,
                "--counts", ",".join(map(str, counts)), "--seed", str(seed)]
        def started() -> bool:
            return all(os.path.exists(os.path.join(tmp, f"rank{r}.json")) for r in range(n))

        try:
            run = run_mpi(n, args, timeout=timeout, progress=None, ready=started, startup_timeout=startup_timeout)
        except Exception as exc:  # mpiexec missing, cannot fork...
            return Verdict(False, f"could not start mpiexec: {exc}", "install MPI with 'pip install mpich mpi4py'.")
        reports = {}
        for r in range(n):
            path = os.path.join(tmp, f"rank{r}.json")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as fh:
                    reports[r] = json.load(fh)
    return _verdict(reports, run, n, counts, timeout)


def _verdict(reports: dict, run, n: int, counts: Sequence[int], timeout: float) -> Verdict:
    errors = {r: rep["error"] for r, rep in reports.items() if "error" in rep}
    if errors:
        r = min(errors)
        msg = errors[r]
        if msg.startswith("could not load"):
            return Verdict(False, msg, "the function must be named ring_allreduce and take (comm, array).")
        return Verdict(False, f"your function raised {msg}",
                       "the line number counts from the top of your function (its def is line 1). If the error "
                       "is about buffer sizes, print the chunk bounds of each step: a receive buffer must be "
                       "exactly as long as the chunk sent to it.")
    for r in range(n):
        for case in reports.get(r, {}).get("cases", []):
            if case["problem"] != "ok":
                return Verdict(False, f"rank {r}, length {case['count']}: {case['problem']}", case["hint"])
    finished = [r for r in range(n) if reports.get(r, {}).get("done")]
    if run.timed_out or len(finished) < n:
        stuck = [r for r in range(n) if r not in finished]
        if run.timed_out and len(reports) < n:
            missing = [r for r in range(n) if r not in reports]
            return Verdict(False, f"ranks {missing} did not start: the machine is too busy or MPI is broken",
                           "run the cell again when the machine is quieter; if it keeps failing, check that "
                           "'python -m commlib.lab.p2p' runs under mpiexec.")
        if run.timed_out:
            lengths = [c for c in counts if all(any(k["count"] == c for k in reports.get(r, {}).get("cases", []))
                                               for r in range(n))]
            where = f" after lengths {lengths}" if lengths else ""
            return Verdict(False, f"no answer within {timeout:g} s from ranks {stuck}{where}: a deadlock",
                           "each rank waited for a message nobody sent. If every rank starts with Recv, or with "
                           "a blocking Send of a large message, all of them wait; comm.Sendrecv sends to r+1 and "
                           "receives from r-1 in one call.")
        return Verdict(False, f"ranks {stuck} stopped without a report (exit status {run.returncode})",
                       "the process died: look for sys.exit, os._exit or a crash in your function.")
    return Verdict(True, f"ring_allreduce gives MPI_Allreduce's sum on all {n} ranks for lengths "
                         f"{', '.join(map(str, counts))}.")


def main(argv: Sequence[str] | None = None) -> int:
    """Worker entry point (under ``mpiexec``); see :func:`check_ring_allreduce` for the parent side."""
    ap = argparse.ArgumentParser(prog="python -m commlib.lab.checker")
    ap.add_argument("--worker", action="store_true", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--name", default="ring_allreduce")
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--counts", default=",".join(map(str, DEFAULT_COUNTS)))
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    return _worker(args.target, args.name, args.outdir, [int(c) for c in args.counts.split(",") if c], args.seed)


if __name__ == "__main__":
    sys.exit(main())
