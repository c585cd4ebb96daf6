"""The lab's measurement plan, in one place: what chapter 8 measures, and the run of it stored with the book.

The chapter measures the machine it runs on with :func:`run` ("your run"). A run of the same plan on an idle
machine with a core for every rank is stored beside this module (:func:`stored`), so that every reader, on the
website too, sees one clean result next to their own. :func:`run` returns a dict of the plan's parts:

``two``    the four collectives on 2 ranks, two sweeps, with the copy control, each rank on a core of its own
           where the machine has two;
``four``   the same on 4 ranks on those same two cores (oversubscribed on purpose);
``pair4``  the point-to-point ring and halving-doubling all-reduce on those 4 ranks, timed in turns;
``free4``  4 ranks with a core each, or None where the lab may use fewer than 4 cores;
``gloo``   PyTorch's gloo all-reduce on 2 processes that share the same two cores as ``two`` (all their
           threads; gloo runs helper threads), or None without PyTorch;
``ddp``    a small network trained by PyTorch's DistributedDataParallel over gloo on 2 processes on those same
           two cores, each step profiled, with and without its all-reduces (:mod:`commlib.lab.torch_ddp`), or
           None without PyTorch.

Two more parts are a control made for the stored run only (:data:`STORED_ONLY`; :func:`run` leaves them out
unless asked): the library's all-reduce as ``two`` ran it, on two ranks pinned to cores as ``two``'s were, once at mpi4py's default
thread level, ``MPI_THREAD_MULTIPLE`` (at which MPICH leaves out its shared-memory collectives), and right after
it with each rank asking MPI for ``MPI_THREAD_SINGLE``, as two separate launches of ``mpiexec`` (each its own
JSON, timing and load average), so that the two levels are compared within one session (the MPICH gloo is set
against):

``two_multiple``, ``two_single``  all-reduce on 2 ranks on the cores of ``two``.

The same control on the four ranks of ``four`` (oversubscribed) at every size stalled at 64 MiB on the control's
machine and is not part of the plan. A second stored-only control (:data:`SHARED_CONTROL`) tests the ranks sharing
cores at both levels, at a few small sizes only (:data:`SHARED_SIZES`), each part a launch of its own, MULTIPLE
before SINGLE:

``four_multiple``, ``four_single``      all-reduce on 4 ranks on 2 cores, as ``four`` (two ranks a core);
``shared_multiple``, ``shared_single``  all-reduce on 2 ranks on 1 core.

It was made on a loaded 2-core machine, not the reference run's (recorded in
``machine_shared_control.json``, :data:`SHARED_ABOUT`). The control ran in a session of its own, on another machine of the same kind as the
reference run's (recorded in ``machine_control.json``), and was made twice, a minute apart: the earlier copy is
stored as ``two_multiple_b.json`` and ``two_single_b.json`` (:data:`COPIES`), which :func:`stored` returns under
those names.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from . import runner, torch_ddp, torch_measure

__all__ = ["SIZES", "SIZES4", "GLOO_SIZES", "GLOO_REPEATS", "PARTS", "STORED_ONLY", "THREAD_LEVEL", "COPIES", "DDP_AGAIN",
           "SHARED_CONTROL", "SHARED_SIZES", "SHARED_REPEATS", "SHARED_ABOUT", "RUN_PARTS", "run", "stored", "save"]

SIZES = tuple(2**k for k in range(10, 27))  # 1 KiB ... 64 MiB
SIZES4 = SIZES[::2]                          # 1 KiB, 4 KiB, ... 64 MiB
GLOO_SIZES = SIZES4                          # gloo at the four-rank sizes, on the two-rank run's cores
GLOO_REPEATS = 15
#: The oversubscribed thread-level control: part -> (ranks, cores), each at the level in :data:`THREAD_LEVEL`.
SHARED_CONTROL = {"four_multiple": (4, 2), "four_single": (4, 2), "shared_multiple": (2, 1), "shared_single": (2, 1)}
SHARED_SIZES = (2**10, 2**12, 2**14)          # 1 KiB, 4 KiB, 16 KiB: where a step's start-up cost is the time
SHARED_REPEATS = 40                           # calls per size and sweep (all of them: no time budget)
SHARED_ABOUT = "machine_shared_control.json"  # the record of the machine the shared-core control ran on
PARTS = ("two", "four", "pair4", "free4", "gloo", "ddp", "two_multiple", "two_single", *SHARED_CONTROL)
STORED_ONLY = ("two_multiple", "two_single", *SHARED_CONTROL)  # the stored run's thread-level controls
THREAD_LEVEL = {"two_multiple": "multiple", "two_single": "single",  # what each control part's ranks ask MPI for
                **{p: p.rsplit("_", 1)[1] for p in SHARED_CONTROL}}
COPIES = {"two_multiple": "two_multiple_b", "two_single": "two_single_b"}  # the control's second, earlier copy
#: The DDP step's reference run was made three times in a row (the first is ``ddp``), so that the chapter can say how
#: far its numbers move from run to run; :func:`stored` returns the other two under these names.
DDP_AGAIN = ("ddp_b", "ddp_c")
RUN_PARTS = tuple(p for p in PARTS if p not in STORED_ONLY)  # what :func:`run` measures by default
_TIMING = dict(repeats=8, min_repeats=5, warmup=1, budget=0.1, timeout=300)
_DATA = Path(__file__).with_name("data")


def run(progress: Callable[[str], None] | None = None, parts: tuple[str, ...] = RUN_PARTS) -> dict[str, dict | None]:
    """Measure the plan's ``parts`` on this machine (each part as described in the module's docstring); by
    default all but the stored-only controls."""
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise ValueError(f"parts must be among {', '.join(PARTS)}; got {', '.join(map(repr, unknown))}")
    cores = runner.lab_cpus(2)
    out: dict[str, dict | None] = {}
    if "two" in parts:
        out["two"] = runner.measure(n=2, sizes=SIZES, cpus=cores, sweeps=2, copy=True, progress=progress, **_TIMING)
    if "four" in parts:
        out["four"] = runner.measure(n=4, sizes=SIZES4, cpus=cores, progress=progress, **_TIMING)
    if "pair4" in parts:
        out["pair4"] = runner.measure(n=4, ops=["all_reduce"], sizes=SIZES4, impl="ring+halving_doubling",
                                      cpus=cores, progress=None, **_TIMING)
    if "free4" in parts:
        cores4 = runner.lab_cpus(4)
        out["free4"] = (runner.measure(n=4, sizes=SIZES4, cpus=cores4, progress=None, **_TIMING)
                        if len(cores4) == 4 else None)
    if "gloo" in parts:
        out["gloo"] = torch_measure.run(n=2, sizes=GLOO_SIZES, repeats=GLOO_REPEATS, timeout=300, cpus=cores)
    if "ddp" in parts:
        out["ddp"] = torch_ddp.run(n=2, timeout=300, cpus=list(cores))
    for part in ("two_multiple", "two_single"):
        if part in parts:
            out[part] = runner.measure(n=2, ops=["all_reduce"], sizes=SIZES, cpus=cores, sweeps=2, progress=None,
                                       thread_level=THREAD_LEVEL[part], **_TIMING)
    for part, (ranks, ncores) in SHARED_CONTROL.items():
        if part in parts:
            out[part] = runner.measure(n=ranks, ops=["all_reduce"], sizes=SHARED_SIZES, cpus=runner.lab_cpus(ncores),
                                       sweeps=2, progress=None, thread_level=THREAD_LEVEL[part], warmup=5,
                                       repeats=SHARED_REPEATS, min_repeats=SHARED_REPEATS, budget=0.0, timeout=300)
    return out


def save(docs: dict[str, dict | None], folder: str | Path, about: dict | None = None,
         about_name: str = "machine.json") -> list[Path]:
    """Write each measured part to ``folder/<part>.json`` (and ``about`` to ``folder/<about_name>``); the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, doc in docs.items():
        if doc is not None:
            paths.append(folder / f"{name}.json")
            paths[-1].write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    if about is not None:
        paths.append(folder / about_name)
        paths[-1].write_text(json.dumps(about, indent=1) + "\n", encoding="utf-8")
    return paths


def stored() -> dict[str, dict | None]:
    """The plan's run on an idle machine, as stored with the book: each part's JSON (None where absent), plus
    ``"machine"``: what that machine was (processor, cores, libraries, date), ``"machine_control"``: the same
    for the stored-only control, made apart, the control's second copy under the names in :data:`COPIES`, the DDP
    run's two repeats under the names in :data:`DDP_AGAIN`, and
    ``"machine_shared_control"``: the record of the machine of the shared-core control (:data:`SHARED_CONTROL`)."""
    docs: dict[str, dict | None] = {}
    for name in (*PARTS, *COPIES.values(), *DDP_AGAIN):
        path = _DATA / f"{name}.json"
        plain = name == "gloo" or name.startswith("ddp")  # PyTorch's runs: read as stored
        docs[name] = ((json.loads(path.read_text(encoding="utf-8")) if plain else runner.load(path))
                      if path.exists() else None)
    for key in ("machine", "machine_control", SHARED_ABOUT[:-5]):
        path = _DATA / f"{key}.json"
        docs[key] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    return docs
