r"""Two controls for the lab's fit: a single thread's copy rate in this run, and how long a core handover takes.

The alpha-beta fit of a collective on one machine says two things that
sound like facts about the hardware: ``1/beta``, a rate of moving bytes,
and ``alpha``, a cost per message. Each needs a control measured in the
same run, on the same cores, before a sentence may say what it *is*:

* :func:`copy_rates` times ``numpy.copyto`` between two buffers of each
  message size (one read and one write of every byte) on one thread: the
  rate at which a single thread of this run copied, the rate a
  shared-memory MPI library's copies run at when nothing else gets in the
  way. McCalpin 1995's STREAM "Copy" times the same operation, but with
  every core copying at once: one thread's rate is no measure of the
  memory's peak. ``clock="wall"`` times it in wall time (``time.perf_counter``),
  which counts the moments the thread waited for its core while other
  programs ran; ``clock="cpu"`` in the thread's own CPU time
  (``time.thread_time``), which does not. On a loaded machine the
  wall-time rate is the lower, and it is the load's, not the memory's.
  (The lab's own copy control, timed in turns with the collectives, is
  :func:`commlib.lab.runner.copy_control` and records both clocks too.)
* :func:`handover_time` times two processes pinned to *one* core passing a
  byte back and forth through pipes: each pass blocks the sender and wakes
  the receiver, so half a round trip is the cost of handing the core from
  one process to another (what lmbench's ``lat_ctx`` measures, McVoy &
  Staelin 1996), with Python's own overhead included.

Both return seconds or bytes per second, medians of repeated timings.

A copy rate counts bytes *copied*: each one is read once and written once,
so memory moves twice as many bytes as the rate says
(:func:`touched_rate`). The reduction cost gamma of
:func:`commlib.collectives.cost.reduction_gamma` counts bytes *touched*
(three per byte reduced: two reads, one write), so a copy rate must be
converted before it prices a reduction (:func:`copy_gamma`).

>>> rates = copy_rates([2**12], repeats=3)
>>> rates[0] > 1e8          # any machine copies 4 KiB at more than 0.1 GB/s
True
>>> copy_rates([2**20], repeats=3, clock="cpu")[0] > 1e8    # in the thread's own CPU time
True
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence

import numpy as np

from ..collectives.cost import allreduce_terms, reduction_gamma
from ..units import check_count, check_positive

__all__ = ["CLOCKS", "copy_rates", "touched_rate", "copy_gamma", "busbw_bound", "handover_time", "pin",
           "COPY_BLOCK", "copy_footprint", "allreduce_footprint", "footprint_ratio", "at_sizes", "matched_control"]

#: Bytes of memory traffic per byte copied: one read and one write.
COPY_TOUCHES = 2


def pin(cpus: Sequence[int] | None) -> None:
    """Run this process on ``cpus`` only (no-op where the system cannot pin, or for ``None``)."""
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cpus))


#: Clocks :func:`copy_rates` can time with: wall time, or the copying thread's own CPU time.
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def copy_rates(sizes: Sequence[float], repeats: int = 7, cpus: Sequence[int] | None = None,
               clock: str = "wall") -> list[float]:
    """Bytes per second of one thread's ``numpy.copyto`` between two touched float32 buffers of each size (bytes).

    The median of ``repeats`` timed copies after one untimed one; the
    buffers are written before timing, so no page is touched for the first
    time while the clock runs. ``cpus`` pins the process first (it stays
    pinned: call it from the process whose cores you want to measure).
    ``clock``: ``"wall"`` (``time.perf_counter``) or ``"cpu"``
    (``time.thread_time``, the thread's own CPU time, which a wait for the
    core does not count).
    """
    repeats = check_count("repeats", repeats, minimum=1)
    if clock not in CLOCKS:
        raise ValueError(f"clock must be one of {', '.join(CLOCKS)}; got {clock!r}")
    now = CLOCKS[clock]
    pin(cpus)
    out = []
    for nbytes in sizes:
        count = max(1, int(nbytes) // 4)
        src = np.ones(count, dtype=np.float32)
        dst = np.zeros_like(src)
        np.copyto(dst, src)
        samples = []
        for _ in range(repeats):
            t0 = now()
            np.copyto(dst, src)
            samples.append(now() - t0)
        out.append(src.nbytes / max(float(np.median(samples)), 1e-9))
    return out


def touched_rate(copy_rate: float) -> float:
    """Bytes of memory traffic per second (bytes/s) behind a rate of bytes *copied* per second.

    >>> touched_rate(5e9)      # 5 GB/s copied: 5 GB/s read and 5 GB/s written
    10000000000.0
    """
    return COPY_TOUCHES * check_positive("copy_rate", copy_rate)


def copy_gamma(copy_rate: float, touches: int = 3) -> float:
    """Seconds per byte reduced (gamma) on a machine that copies ``copy_rate`` bytes per second.

    A reduction reads two bytes and writes one for each byte reduced
    (``touches`` = 3), a copy reads one and writes one: at the same memory
    traffic a byte reduced costs 3/2 of a byte copied. That counts each
    write once, as streaming stores write; where a write first reads its
    cache line in (write-allocate), a copy moves more traffic per byte and
    the ratio is smaller. This is
    :func:`commlib.collectives.cost.reduction_gamma` of the copy's
    :func:`touched_rate`, not of the copy rate itself (that would charge
    each reduced byte twice over).

    >>> round(copy_gamma(5e9) * 1e12, 1)      # ps per byte: 1.5 / (5 GB/s)
    300.0
    """
    return reduction_gamma(touched_rate(copy_rate), touches)


def busbw_bound(copy_rate: float, copies: int = 1, reduced: float = 0.5) -> float:
    """The most bus bytes per second a shared-memory all-reduce can move, each rank copying at ``copy_rate``.

    With no wire, every byte a rank receives is written by a copy: each bus
    byte costs ``copies`` copies (one straight from the sender's buffer, two
    through a shared buffer), and ``reduced`` bytes are combined per bus
    byte (an all-reduce's reduce-scatter combines (n-1)/n M bytes of its
    2(n-1)/n M bus bytes: one half, for any n) at :func:`copy_gamma` each.
    Start-up costs and waits between ranks only lower it further.

    >>> round(busbw_bound(10e9) / 1e9, 2), round(busbw_bound(10e9, copies=2) / 1e9, 2)   # GB/s
    (5.71, 3.64)
    """
    copies = check_count("copies", copies, minimum=1)
    if not reduced >= 0:
        raise ValueError(f"reduced must be >= 0, got {reduced!r}")
    return 1.0 / (copies / check_positive("copy_rate", copy_rate) + reduced * copy_gamma(copy_rate))


#: The lab's copy control (:mod:`commlib.lab.measure`): at message size M each rank copies a block of this many M.
COPY_BLOCK = 1.5


def copy_footprint(nbytes: float, n: int, block: float = COPY_BLOCK) -> float:
    """Bytes of buffers the copy control's ``n`` ranks touch at message size ``nbytes``: each a source and a
    destination of ``block`` times the message.

    >>> copy_footprint(2**20, 2) / 2**20       # two ranks, 1.5 M each way: 6 M
    6.0
    """
    return check_count("n", n, minimum=1) * 2 * block * check_positive("nbytes", nbytes)


def allreduce_footprint(nbytes: float, n: int, algorithm: str = "halving_doubling") -> float:
    """Bytes of buffers the ``n`` ranks of an all-reduce of ``nbytes`` touch at the least: each its send and its
    receive buffer, and the part of a temporary buffer its reduce-scatter receives into, the bytes it reduces
    (:func:`commlib.collectives.cost.allreduce_terms`'s ``reduced``; the library's shared-memory buffers come on top).

    >>> allreduce_footprint(2**20, 2) / 2**20  # two ranks: 2 M each and half the message into the temporary
    5.0
    """
    n = check_count("n", n, minimum=2)
    terms = allreduce_terms(check_positive("nbytes", nbytes), n, algorithm)
    return n * (2 * nbytes + terms.reduced)


def footprint_ratio(n: int, algorithm: str = "halving_doubling", block: float = COPY_BLOCK) -> float:
    """The all-reduce's footprint over the copy control's at the same message size, on ``n`` ranks: the copy
    control at ``ratio * M`` touches as much memory as the all-reduce at ``M``.

    >>> round(footprint_ratio(2), 4)
    0.8333
    """
    return allreduce_footprint(1.0, n, algorithm) / copy_footprint(1.0, n, block)


def at_sizes(sizes: Sequence[float], values: Sequence[float], targets: Sequence[float]) -> list[float]:
    """``values`` measured at ``sizes`` (increasing), read at ``targets`` by straight lines between neighbouring
    sizes on log-log axes; a target outside the measured sizes takes the value at the nearer end.

    >>> [round(v, 6) for v in at_sizes([1.0, 4.0], [2.0, 8.0], [2.0, 0.5, 9.0])]
    [4.0, 2.0, 8.0]
    """
    if len(sizes) != len(values) or not sizes:
        raise ValueError(f"sizes and values must have the same, non-zero length, got {len(sizes)} and {len(values)}")
    xs = [math.log(check_positive("sizes", x)) for x in sizes]
    ys = [math.log(check_positive("values", y)) for y in values]
    if any(b <= a for a, b in zip(xs, xs[1:])):
        raise ValueError("sizes must increase")
    out = []
    for t in targets:
        lt = math.log(check_positive("targets", t))
        if lt <= xs[0]:
            out.append(float(values[0]))
            continue
        if lt >= xs[-1]:
            out.append(float(values[-1]))
            continue
        j = next(k for k in range(1, len(xs)) if xs[k] >= lt)
        w = (lt - xs[j - 1]) / (xs[j] - xs[j - 1])
        out.append(math.exp(ys[j - 1] + w * (ys[j] - ys[j - 1])))
    return out


def matched_control(sizes: Sequence[float], *series: Sequence[float], n: int = 2,
                    algorithm: str = "halving_doubling") -> tuple[list[float], ...]:
    """The copy control's rates (each of ``series``, measured at ``sizes``) at the footprint of an all-reduce of
    each of ``sizes``: read at :func:`footprint_ratio` times the size (:func:`at_sizes`), so that a cache both
    outgrow shows at the same message size in both. Below the smallest measured size the smallest size's rate is
    kept.

    >>> round(matched_control([2**20, 2**21, 2**22], [12e9, 6e9, 6e9], n=2)[0][1] / 1e9, 2)  # 5/6 of 2 MiB
    7.2
    """
    ratio = footprint_ratio(n, algorithm)
    targets = [ratio * x for x in sizes]
    return tuple(at_sizes(sizes, s, targets) for s in series)


def handover_time(rounds: int = 2000, cpu: int | None = None) -> float:
    """Seconds to hand one core from a blocked process to a waiting one (half a pipe round trip).

    Two processes pinned to the same core (``cpu``; default: the first core
    this process may use) pass one byte back and forth ``rounds`` times.
    """
    rounds = check_count("rounds", rounds, minimum=1)
    if not hasattr(os, "fork"):
        raise RuntimeError("handover_time needs os.fork (Linux or macOS)")
    if cpu is None:
        cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    ping_r, ping_w = os.pipe()
    pong_r, pong_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child answers every ping
        try:
            pin([cpu])
            for _ in range(rounds + 1):
                os.read(ping_r, 1)
                os.write(pong_w, b"x")
        finally:
            os._exit(0)
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        pin([cpu])
        os.write(ping_w, b"x")  # one untimed round: both processes are running and pinned
        os.read(pong_r, 1)
        t0 = time.perf_counter()
        for _ in range(rounds):
            os.write(ping_w, b"x")
            os.read(pong_r, 1)
        elapsed = time.perf_counter() - t0
    finally:
        os.waitpid(pid, 0)
        for fd in (ping_r, ping_w, pong_r, pong_w):
            os.close(fd)
        if before:
            os.sched_setaffinity(0, before)
    return elapsed / (2 * rounds)
