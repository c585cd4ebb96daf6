r"""Synchronous and asynchronous SGD on a parameter server, simulated event by event.

``P`` learners (``workers``) compute mini-batch gradients; a parameter
server (PS) applies them. How long a gradient takes is random (a
*compute-time distribution*), and how the PS waits decides everything: how
long an update takes, and how *stale* the gradients it applies are. The six
protocols follow Dutta et al. (2018), "Slow and Stale Gradients Can Win the
Race: Error-Runtime Trade-offs in Distributed SGD" (AISTATS), section 2:

``"sync"``
    every learner computes one gradient on the current parameters; the PS
    waits for all ``P``, averages, updates, and every learner restarts.
``"k_sync"``
    the PS waits for the first ``K`` of the ``P`` learners; the other
    ``P - K`` computations are **cancelled**; everyone restarts on the new
    parameters. ``K = P`` is fully synchronous SGD.
``"k_batch_sync"``
    the PS waits for the first ``K`` *mini-batches*, whichever learners they
    come from: a learner that finishes pushes its gradient, fetches the
    (unchanged) parameters and starts another mini-batch on the same values.
    After ``K`` mini-batches the PS updates and **cancels** the unfinished ones.
``"async"``
    the PS updates on every gradient; the learner fetches the new parameters
    and starts again. Nobody waits; gradients are stale.
``"k_async"``
    the PS waits for gradients from ``K`` learners, updates, and sends the new
    parameters to those ``K``; the other learners are **not cancelled** and
    keep computing on the old parameters they hold. ``K = 1`` is async,
    ``K = P`` fully sync.
``"k_batch_async"``
    the PS updates after every ``K`` mini-batches, whichever learners they come
    from; a learner that finishes pushes, fetches the *current* PS parameters
    (updated or not) and starts again, never waiting. This is the
    "n-softsync" protocol of Gupta et al. (2016) with ``K = P / n``.

Every job of a learner takes ``pull + compute + push`` seconds: the compute
time is drawn from the chosen distribution; ``comm_time`` gives the time of
one pull and of one push (a float, or a callable ``comm_time(rng, worker)``
returning seconds). By default communication takes no time.

Staleness of a gradient is the number of PS updates made between the
parameter version it was computed on and the version it is applied to
(0 for every synchronous protocol). Under exponential compute times it has a
closed-form mean, :func:`expected_staleness`.

Timing does not depend on the values being trained, so :func:`simulate`
first runs a lean event loop (a heap of finish times; plain numpy for
K-sync) that produces the schedule of updates, and only then,
if a :class:`~commlib.sgd.training.Problem` is given, replays the schedule with
real gradients: each gradient is evaluated on exactly the (possibly stale)
parameters its learner held.

The same event loop can also record every learner's jobs
(``simulate(..., record_jobs=True)`` fills :attr:`SimResult.jobs` with
:class:`Job` records: who computed from when to when, and whether the
gradient was applied, cancelled or still being computed when the run
stopped). That is what a timeline picture of a protocol draws. A long run
that needs only when each job started and ended asks :func:`job_spans`,
which skips the records.

Units: times in seconds, rates in 1/s.

>>> r = simulate("async", workers=4, updates=1000, seed=0)
>>> round(float(r.staleness.mean()), 1)   # about P - 1 = 3 for exponential times
3.0
>>> s = simulate("sync", workers=4, updates=1000, seed=0)
>>> ratio = s.mean_time_per_update / r.mean_time_per_update   # about P H_P = 8.33
>>> 7.5 < ratio < 9.2
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import heapq
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..units import check_count, check_nonnegative, check_positive

__all__ = [
    "NOTES_RATE", "mean_rule_rate",
    "PROTOCOLS",
    "DISTRIBUTIONS",
    "LR_RULES",
    "OPTIMIZERS",
    "JOB_STATUSES",
    "Job",
    "SimResult",
    "simulate",
    "downpour_staleness_parts",
    "schedule",
    "replay",
    "replay_grid",
    "expected_value",
    "expected_max_straggler",
    "straggler_runtime_ratio",
    "straggler_gradient_rate",
    "expected_order_statistic",
    "expected_max",
    "runtime_ratio",
    "monte_carlo_runtime_ratio",
    "expected_staleness",
    "expected_update_time",
    "harmonic",
]

#: The protocols :func:`simulate` knows (Dutta et al. 2018, section 2).
PROTOCOLS = ("sync", "k_sync", "k_batch_sync", "async", "k_async", "k_batch_async")

#: Compute-time distributions and their parameters with defaults (seconds, 1/s).
DISTRIBUTIONS: dict[str, dict[str, object]] = {
    "deterministic": {"time": 1.0},
    "exponential": {"rate": 1.0},
    "shifted_exponential": {"shift": 1.0, "rate": 1.0},
    "pareto": {"shape": 2.5, "scale": 1.0},
    "straggler": {"base": "exponential", "slowdown": 4.0},
}

#: Learning-rate rules: constant, staleness-aware (Zhang et al. 2016 / Gupta et al. 2016),
#: distance-based (Dutta et al. 2018).
LR_RULES = ("constant", "staleness", "distance")

#: Optimisers applied at the PS.
OPTIMIZERS = ("sgd", "adagrad")

#: What became of a learner's job (see :class:`Job`).
JOB_STATUSES = ("applied", "cancelled", "unfinished")

# Draws per refill of a learner's stream: the first refill is small and each next one twice as large, up to
# _BLOCK. Every law draws its values one after another from the learner's own generator, so how the stream is
# cut into refills never changes its values; short runs just stop drawing numbers they would never use.
_FIRST_BLOCK = 64
_BLOCK = 4096
_ADAGRAD_EPS = 1e-8


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class Job:
    """One job of one learner: pull, compute one mini-batch gradient, push, from ``start`` to ``end`` (s).

    Recorded by :func:`simulate` with ``record_jobs=True``, by the event loop
    that produces the update times, so a timeline drawn from jobs is the
    simulation itself.

    Attributes
    ----------
    worker
        learner index, ``0 <= worker < P``.
    start
        when the learner began the job (s): time 0, the update it waited for,
        or the moment it pushed its previous gradient.
    end
        ``"applied"``: when its gradient reached the PS (s); ``"cancelled"``:
        when the PS stopped it (the time of update ``update``);
        ``"unfinished"``: when it would have reached the PS, at or after the
        last simulated update.
    status
        one of :data:`JOB_STATUSES`: ``"applied"`` (the gradient went into
        update ``update``), ``"cancelled"`` (stopped by update ``update`` in
        ``k_sync``/``k_batch_sync``, its gradient thrown away) or
        ``"unfinished"`` (still computing when the run stopped).
    update
        0-based index of the PS update that applied (or cancelled) the job;
        ``None`` for an unfinished job.
    staleness
        for an applied job, the PS updates made between the version the
        learner read at ``start`` and the version the gradient is applied to
        (the matching entry of :attr:`SimResult.staleness`); 0 for a
        cancelled job (it read the current version); ``None`` if unfinished.

    >>> r = simulate("k_sync", workers=3, k=2, compute="deterministic", updates=1, record_jobs=True)
    >>> [(j.worker, j.start, j.end, j.status) for j in r.jobs]   # ties go to the lower learner index
    [(0, 0.0, 1.0, 'applied'), (1, 0.0, 1.0, 'applied'), (2, 0.0, 1.0, 'cancelled')]
    """

    worker: int
    start: float
    end: float
    status: str
    update: int | None
    staleness: int | None


@dataclass(frozen=True, eq=False)
class SimResult:
    """What one :func:`simulate` run recorded.

    Attributes
    ----------
    times
        wall-clock time (s) of each PS update, shape ``(updates,)``, increasing.
    staleness
        staleness of each applied gradient (int), in the order applied, shape
        ``(updates * K,)``; ``staleness.reshape(updates, K)`` lines up with
        ``contributors``.
    contributors
        learner index of each gradient in each update, shape ``(updates, K)``
        (a learner may appear several times in a K-batch protocol).
    gradients_per_update
        number of gradients averaged into each update, shape ``(updates,)``.
    errors, losses
        test error rate and training loss (nats) after the evaluated updates
        (every ``eval_every``-th), ``None`` without a problem.
    eval_index
        0-based index of the update after which each error was measured.
    initial_error, initial_loss
        the same two numbers before the first update (``None`` without a problem).
    diverged
        ``True`` if the parameters became non-finite (the rest is then ``nan``).
    w
        the final parameters (``None`` without a problem).
    jobs
        with ``record_jobs=True``: every :class:`Job` that started before the
        last update (``None`` otherwise). The applied jobs, in the order they
        appear, are the applied gradients in the order of :attr:`staleness`
        and ``contributors.ravel()``; cancelled jobs follow the applied ones
        of the update that cancelled them; unfinished jobs come last, by learner.
    capped
        with ``lr_rule="distance"`` (one PS): for each applied gradient, in the
        order of :attr:`staleness`, whether the cap ``eta_max`` set its rate
        (``C/d^2 >= eta_max``) rather than the distance term; ``None`` otherwise.
    """

    protocol: str
    workers: int
    k: int
    times: np.ndarray
    staleness: np.ndarray
    contributors: np.ndarray
    gradients_per_update: np.ndarray
    errors: np.ndarray | None = None
    losses: np.ndarray | None = None
    eval_index: np.ndarray | None = None
    initial_error: float | None = None
    initial_loss: float | None = None
    diverged: bool = False
    w: np.ndarray | None = None
    jobs: tuple[Job, ...] | None = None
    capped: np.ndarray | None = None

    @property
    def cap_share(self) -> float | None:
        """Share (0 to 1) of the applied gradients whose rate the distance rule's cap set; ``None`` without it."""
        return None if self.capped is None or self.capped.size == 0 else float(np.mean(self.capped))

    @property
    def updates(self) -> int:
        """Number of PS updates simulated."""
        return int(self.times.size)

    @property
    def mean_time_per_update(self) -> float:
        """Wall-clock seconds per PS update: time of the last update / number of updates."""
        return float(self.times[-1] / self.times.size)

    @property
    def throughput(self) -> float:
        """PS updates per second (1 / :attr:`mean_time_per_update`)."""
        return 1.0 / self.mean_time_per_update

    @property
    def gradient_throughput(self) -> float:
        """Applied gradients (mini-batches) per second."""
        return float(self.gradients_per_update.sum() / self.times[-1])

    @property
    def eval_times(self) -> np.ndarray | None:
        """Wall-clock time (s) of each entry of :attr:`errors`."""
        return None if self.eval_index is None else self.times[self.eval_index]


# --------------------------------------------------------------------------- validation


def _check_protocol(protocol: str) -> str:
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {protocol!r}")
    return protocol


def _check_k(protocol: str, workers: int, k: int | None) -> int:
    if protocol == "sync":
        if k not in (None, workers):
            raise ValueError(f"k must be None or equal to workers ({workers}) for protocol 'sync', got {k!r}")
        return workers
    if protocol == "async":
        if k not in (None, 1):
            raise ValueError(f"k must be None or 1 for protocol 'async', got {k!r}")
        return 1
    if k is None:
        raise ValueError(f"protocol {protocol!r} needs k, a whole number in [1, workers={workers}]")
    return check_count("k", k, 1, workers)


def _dist_params(distribution: str, params: dict) -> dict:
    """Fill defaults and validate the parameters of a compute-time distribution."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)}; got {distribution!r}")
    allowed = dict(DISTRIBUTIONS[distribution])
    if distribution == "straggler":
        base = params.get("base", "exponential")
        if base not in DISTRIBUTIONS or base == "straggler":
            names = ", ".join(d for d in DISTRIBUTIONS if d != "straggler")
            raise ValueError(f"base must be one of {names}; got {base!r}")
        allowed.update(DISTRIBUTIONS[base])
    unknown = set(params) - set(allowed)
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(sorted(unknown))} for distribution {distribution!r}; "
            f"allowed: {', '.join(allowed)}"
        )
    out = {**allowed, **params}
    for name in ("time", "rate", "scale"):
        if name in out:
            out[name] = check_positive(name, out[name])
    if "shift" in out:
        out["shift"] = check_nonnegative("shift", out["shift"])
    if "shape" in out:
        out["shape"] = check_positive("shape", out["shape"])
    if "slowdown" in out:
        out["slowdown"] = check_positive("slowdown", out["slowdown"])
        if out["slowdown"] < 1:
            raise ValueError(f"slowdown must be >= 1 (the slow learner's time factor), got {out['slowdown']}")
    return out


def _draw(distribution: str, p: dict, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` compute times (s) from one learner's generator."""
    if distribution == "deterministic":
        return np.full(n, p["time"])
    if distribution == "exponential":
        return rng.exponential(1.0 / p["rate"], n)
    if distribution == "shifted_exponential":
        return p["shift"] + rng.exponential(1.0 / p["rate"], n)
    if distribution == "pareto":
        # numpy's pareto is the Lomax (Pareto II) law; +1 and * scale give Pareto I with x_m = scale
        return p["scale"] * (1.0 + rng.pareto(p["shape"], n))
    raise AssertionError(distribution)


# --------------------------------------------------------------------------- random streams


class _Streams:
    """One independent stream of job durations per learner.

    Learner ``w``'s ``j``-th job always gets the ``j``-th value of its own
    stream, whatever the protocol: runs with the same seed share their random
    numbers (common random numbers), which makes protocols comparable and
    makes ``k_async`` with ``K = 1`` replay ``async`` exactly.
    """

    def __init__(self, workers: int, seed: int, distribution: str, params: dict,
                 comm: float | Callable, pushes: int = 1):
        children = np.random.SeedSequence(seed).spawn(2 * workers + 2)
        self.compute_rngs = [np.random.default_rng(c) for c in children[:workers]]
        self.comm_rngs = [np.random.default_rng(c) for c in children[workers:2 * workers]]
        self.data_rng = np.random.default_rng(children[2 * workers])
        self.push_rng = np.random.default_rng(children[2 * workers + 1])
        self.workers = workers
        if distribution == "straggler":
            self.base = params["base"]
            self.factor = [params["slowdown"]] + [1.0] * (workers - 1)
        else:
            self.base = distribution
            self.factor = [1.0] * workers
        self.params = params
        self.comm = comm
        self.transfers = 1 + pushes  # one pull, then the pushes folded into the job
        self.blocks: list[list[float]] = [[] for _ in range(workers)]
        self.pos = [0] * workers
        self.sizes = [_FIRST_BLOCK] * workers

    def comm_draw(self, rng: np.random.Generator, w: int) -> float:
        """One transfer's time (s) from the callable, validated."""
        value = self.comm(rng, w)
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"comm_time(rng, worker) must return seconds as a number, got {value!r}") from None
        if not (0 <= value < math.inf):
            raise ValueError(f"comm_time(rng, worker) must return seconds >= 0 and finite, got {value!r}")
        return value

    def block(self, w: int) -> np.ndarray:
        """The next job durations of learner ``w`` (compute + transfers), a refill of the stream."""
        n = self.sizes[w]
        self.sizes[w] = min(2 * n, _BLOCK)
        x = _draw(self.base, self.params, self.compute_rngs[w], n) * self.factor[w]
        if callable(self.comm):
            rng, draw, transfers = self.comm_rngs[w], self.comm_draw, range(self.transfers)
            x = x + np.array([sum(draw(rng, w) for _ in transfers) for _ in range(n)])
        elif self.comm:
            x = x + self.transfers * self.comm
        return x

    def iterators(self) -> list[Callable[[], float]]:
        """Per learner, a fast ``next_duration()`` (C-level iterator over the same stream as :meth:`take`)."""

        def blocks(w: int):
            while True:
                yield self.block(w).tolist()

        return [itertools.chain.from_iterable(blocks(w)).__next__ for w in range(self.workers)]

    def scalar(self) -> Callable[[int], float]:
        """A fast ``next_duration(w)`` closure over Python lists."""
        blocks, pos, block = self.blocks, self.pos, self.block

        def nxt(w: int) -> float:
            i = pos[w]
            b = blocks[w]
            if i >= len(b):
                b = blocks[w] = block(w).tolist()
                i = 0
            pos[w] = i + 1
            return b[i]

        return nxt

    def take(self, w: int, n: int) -> np.ndarray:
        """The next ``n`` durations of learner ``w`` as an array (same stream as :meth:`scalar`)."""
        out = []
        need = n
        while need:
            b = self.blocks[w]
            i = self.pos[w]
            if i >= len(b):
                b = self.blocks[w] = self.block(w).tolist()
                i = 0
            m = min(need, len(b) - i)
            out.append(np.asarray(b[i:i + m]))
            self.pos[w] = i + m
            need -= m
        return np.concatenate(out) if out else np.empty(0)


# --------------------------------------------------------------------------- event loops (timing only)


# Each event loop below takes ``jobs``: ``None`` (the fast path) or a list to which it appends one
# tuple (worker, start, end, status, update, staleness) per job, in the order documented on
# SimResult.jobs; ``simulate`` turns them into Job records.


def _run_k_sync(streams: _Streams, P: int, K: int, updates: int, jobs: list | None = None):
    """K-sync (and sync, K = P): per round, the first K of P fresh jobs; the rest cancelled. Vectorised."""
    times, contrib = [], []
    t0 = 0.0
    chunk = max(1, min(updates, 2**20 // P))
    done = 0
    while done < updates:
        n = min(chunk, updates - done)
        d = np.column_stack([streams.take(w, n) for w in range(P)])  # (n, P)
        order = np.argsort(d, axis=1, kind="stable")[:, :K]          # ties go to the lower learner index
        dt = np.take_along_axis(d, order[:, K - 1:K], axis=1)[:, 0]
        t = t0 + np.cumsum(dt)
        times.append(t)
        contrib.append(order)
        if jobs is not None:
            _k_sync_jobs(jobs, d, order, t, t0, done)
        t0 = float(t[-1])
        done += n
    times = np.concatenate(times)
    contrib = np.concatenate(contrib)
    return times, np.zeros(updates * K, dtype=np.int64), contrib


def _k_sync_jobs(jobs: list, d: np.ndarray, order: np.ndarray, t: np.ndarray, t0: float, first: int) -> None:
    """The jobs of a chunk of K-sync rounds: durations ``d``, winners ``order``, update times ``t``.

    Round ``i`` starts at the previous update; its winners end after their own
    durations (the K-th defines the update time), the others are cancelled then.
    """
    P = d.shape[1]
    starts = np.concatenate([[t0], t[:-1]]).tolist()
    ends = t.tolist()
    for i, chosen in enumerate(order.tolist()):
        s, e, u = starts[i], ends[i], first + i
        for w in chosen[:-1]:
            jobs.append((w, s, min(s + float(d[i, w]), e), "applied", u, 0))
        jobs.append((chosen[-1], s, e, "applied", u, 0))  # the K-th gradient: it sets the update time
        taken = set(chosen)
        jobs.extend((w, s, e, "cancelled", u, 0) for w in range(P) if w not in taken)


def _run_k_batch_sync(streams: _Streams, P: int, K: int, updates: int, jobs: list | None = None):
    """K-batch-sync: per round, the first K mini-batches from any learners; unfinished jobs cancelled."""
    nexts = streams.iterators()
    times, contrib = [], []
    t0 = 0.0
    pop, push = heapq.heappop, heapq.heappush
    rec = jobs is not None
    for u in range(updates):
        heap = [(t0 + nexts[w](), w) for w in range(P)]
        heapq.heapify(heap)
        if rec:
            began = [t0] * P
        for i in range(K):
            t, w = pop(heap)
            contrib.append(w)
            if rec:
                jobs.append((w, began[w], t, "applied", u, 0))
                began[w] = t
            if i < K - 1:
                push(heap, (t + nexts[w](), w))
        if rec:
            jobs.extend((w, began[w], t, "cancelled", u, 0) for _, w in sorted(heap, key=lambda e: e[1]))
        times.append(t)
        t0 = t
    return np.asarray(times), np.zeros(updates * K, dtype=np.int64), np.asarray(contrib).reshape(updates, K)


def _staleness_from_order(contrib: np.ndarray, K: int, fetch_after_update_only: bool) -> np.ndarray:
    """Staleness of every gradient from who contributed to which update (vectorised).

    Gradient ``i`` (flat order) is applied in update ``u = i // K`` while the PS
    holds version ``u``. Its learner read the parameters when its previous
    gradient went in: version ``u_prev + 1`` when learners wait for the update
    (async, K-async) or when that gradient completed an update (K-batch-async),
    else ``u_prev``; a learner's first gradient read version 0.
    """
    c = contrib.ravel()
    n = c.size
    small = c.astype(np.int16) if c.size and c.max() < 2**15 else c  # int16: numpy sorts it by radix, fast
    order = np.argsort(small, kind="stable")
    cs = c[order]
    us = order // K
    first = np.ones(n, dtype=bool)
    first[1:] = cs[1:] != cs[:-1]
    prev_u = np.empty(n, dtype=np.int64)
    prev_u[0] = 0
    prev_u[1:] = us[:-1]
    if fetch_after_update_only:
        step = np.ones(n, dtype=np.int64)
    else:
        pos = order % K  # position inside its update; K - 1 means it completed the update
        step = np.zeros(n, dtype=np.int64)
        step[1:] = pos[:-1] == K - 1
    read = np.where(first, 0, prev_u + step)
    stale = np.empty(n, dtype=np.int64)
    stale[order] = us - read
    return stale


def _unfinished(jobs: list, heap: list, began: list[float], t_last: float) -> None:
    """Append the jobs still computing after the last update (``heap`` of (end, learner)) that began before it."""
    jobs.extend((w, began[w], t, "unfinished", None, None) for t, w in sorted(heap, key=lambda e: e[1])
                if began[w] < t_last)


def _run_async(streams: _Streams, P: int, updates: int, jobs: list | None = None):
    """Async: every arriving gradient is an update; the learner restarts at once."""
    nexts = streams.iterators()
    heap = [(nexts[w](), w) for w in range(P)]
    heapq.heapify(heap)
    times, contrib = [], []
    t_app, c_app = times.append, contrib.append
    replace = heapq.heapreplace
    rec = jobs is not None
    began, read = [0.0] * P, [0] * P  # when each learner's job began, the version it read
    for u in range(updates):
        t, w = heap[0]
        t_app(t)
        c_app(w)
        if rec:
            jobs.append((w, began[w], t, "applied", u, u - read[w]))
            began[w], read[w] = t, u + 1
        replace(heap, (t + nexts[w](), w))
    if rec:
        _unfinished(jobs, heap, began, times[-1])
    contrib = np.asarray(contrib).reshape(updates, 1)
    return np.asarray(times), _staleness_from_order(contrib, 1, True), contrib


def _run_k_async(streams: _Streams, P: int, K: int, updates: int, jobs: list | None = None):
    """K-async: update after gradients from K learners; those K wait for it, the others keep computing."""
    nexts = streams.iterators()
    heap = [(nexts[w](), w) for w in range(P)]
    heapq.heapify(heap)
    times, contrib = [], []
    t_app, c_ext = times.append, contrib.extend
    pop, push, replace = heapq.heappop, heapq.heappush, heapq.heapreplace
    first = range(K - 1)
    rec = jobs is not None
    began, read = [0.0] * P, [0] * P
    for u in range(updates):
        if rec:  # the first K - 1 arrivals wait ...
            arrived = [pop(heap) for _ in first]
            got = [x for _, x in arrived]
        else:
            got = [pop(heap)[1] for _ in first]
        t, w = heap[0]  # ... for the K-th, which triggers the update at t
        if rec:
            for end, x in arrived + [(t, w)]:
                jobs.append((x, began[x], end, "applied", u, u - read[x]))
                began[x], read[x] = t, u + 1
        replace(heap, (t + nexts[w](), w))
        for x in got:
            push(heap, (t + nexts[x](), x))
        got.append(w)
        t_app(t)
        c_ext(got)
    if rec:
        _unfinished(jobs, heap, began, times[-1])
    contrib = np.asarray(contrib).reshape(updates, K)
    return np.asarray(times), _staleness_from_order(contrib, K, True), contrib


def _run_k_batch_async(streams: _Streams, P: int, K: int, updates: int, jobs: list | None = None):
    """K-batch-async: update after every K mini-batches; a learner never waits, it fetches what the PS has."""
    nexts = streams.iterators()
    heap = [(nexts[w](), w) for w in range(P)]
    heapq.heapify(heap)
    times, contrib = [], []
    t_app, c_app = times.append, contrib.append
    replace = heapq.heapreplace
    first = range(K - 1)
    rec = jobs is not None
    began, read = [0.0] * P, [0] * P
    for u in range(updates):
        for _ in first:
            t, w = heap[0]
            c_app(w)
            if rec:  # pushed without completing the update: the learner fetches version u
                jobs.append((w, began[w], t, "applied", u, u - read[w]))
                began[w], read[w] = t, u
            replace(heap, (t + nexts[w](), w))
        t, w = heap[0]  # the K-th mini-batch: push, the PS updates, the learner fetches the new version
        c_app(w)
        t_app(t)
        if rec:
            jobs.append((w, began[w], t, "applied", u, u - read[w]))
            began[w], read[w] = t, u + 1
        replace(heap, (t + nexts[w](), w))
    if rec:
        _unfinished(jobs, heap, began, times[-1])
    contrib = np.asarray(contrib).reshape(updates, K)
    return np.asarray(times), _staleness_from_order(contrib, K, False), contrib


def _run_downpour(streams: _Streams, P: int, shards: int, updates: int, comm):
    """Async replicas over ``shards`` independent PS shards (Downpour SGD, Dean et al. 2012).

    A replica's job is pull + compute; when it ends (time ``t1``) the replica
    pushes one piece of its gradient to each shard (each push its own transfer
    time) and immediately starts the next job, reading every shard as it is
    at ``t1``. Shard ``s`` applies its piece on arrival. A gradient counts as
    applied when its last piece has arrived. Returns the schedule as events.
    """
    nxt = streams.scalar()

    def push_time(w: int) -> float:
        if callable(comm):
            return streams.comm_draw(streams.push_rng, w)
        return float(comm)

    # Replicas never wait, so each is an independent renewal process; merge them in time order.
    heap = [(0.0, w) for w in range(P)]  # (job start time, replica)
    heapq.heapify(heap)
    jobs = []  # (start, finish, replica, arrivals per shard)
    best: list[float] = []  # max-heap (negated) of the `updates` earliest completion times so far
    while True:
        t0, w = heapq.heappop(heap)
        if len(best) == updates and t0 >= -best[0]:
            break  # every later job completes after the updates-th earliest completion
        t1 = t0 + nxt(w)
        arrivals = [t1 + push_time(w) for _ in range(shards)]
        jobs.append((t0, t1, w, arrivals))
        if len(best) < updates:
            heapq.heappush(best, -max(arrivals))
        elif max(arrivals) < -best[0]:
            heapq.heapreplace(best, -max(arrivals))
        heapq.heappush(heap, (t1, w))
    return jobs


# --------------------------------------------------------------------------- training replay


def _step_scales(rule: str, lr: float, lr_c: float, eta_max: float, stale, w_now, reads) -> list[float]:
    """Per-gradient factor s_i so that the step is lr * mean_i(s_i g_i)."""
    if rule == "constant":
        return [1.0] * len(stale)
    if rule == "staleness":
        return [1.0 / max(int(s), 1) for s in stale]
    out = []
    for w_read in reads:
        d2 = float(np.dot(w_now - w_read, w_now - w_read))
        eta = eta_max if d2 == 0.0 else min(lr_c / d2, eta_max)
        out.append(eta / lr)
    return out


class _Optimizer:
    def __init__(self, kind: str, lr: float, dim: int, shards: int):
        self.kind, self.lr = kind, lr
        self.acc = np.zeros(dim) if kind == "adagrad" else None
        self.bounds = np.linspace(0, dim, shards + 1).astype(int)

    def step(self, w: np.ndarray, g: np.ndarray, sl: slice = slice(None)) -> np.ndarray:
        """Return the new parameters (a new array: old versions stay readable)."""
        w = w.copy()
        if self.kind == "sgd":
            w[sl] -= self.lr * g[sl]
        else:  # Adagrad: eta_i = gamma / sqrt(sum of squared gradients of coordinate i)
            self.acc[sl] += g[sl] * g[sl]
            w[sl] -= self.lr * g[sl] / (np.sqrt(self.acc[sl]) + _ADAGRAD_EPS)
        return w


def _replay(problem, times, stale, K, rng, lr, lr_rule, lr_c, eta_max, batch_size, optimizer,
            eval_every):
    U = times.size
    opt = _Optimizer(optimizer, lr, problem.dim, 1)
    w = problem.init()
    keep = int(stale.max()) + 1 if stale.size else 1
    hist = {0: w}
    gradient = problem.stochastic_gradient
    errors, losses, index = [], [], []
    capped = [] if lr_rule == "distance" else None
    diverged = False
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for j in range(U):
            s = stale[j * K:(j + 1) * K]
            reads = [hist[j - int(x)] for x in s]
            grads = [gradient(r, rng, batch_size) for r in reads]
            scales = _step_scales(lr_rule, lr, lr_c, eta_max, s, w, reads)
            if capped is not None:  # the cap set the rate where the scale is eta_max / lr exactly
                capped.extend(c == eta_max / lr for c in scales)
            g = sum(c * gi for c, gi in zip(scales, grads)) / K
            w = opt.step(w, g)
            hist[j + 1] = w
            hist.pop(j + 1 - keep, None)
            if not np.all(np.isfinite(w)):
                diverged = True
                break
            if (j + 1) % eval_every == 0 or j + 1 == U:
                errors.append(problem.error(w))
                losses.append(problem.loss(w))
                index.append(j)
    if diverged:
        for j in range(j, U):  # noqa: B020 (continue from the update that diverged)
            if (j + 1) % eval_every == 0 or j + 1 == U:
                errors.append(np.nan)
                losses.append(np.nan)
                index.append(j)
    capped = None if capped is None else np.asarray(capped, dtype=bool)
    return np.asarray(errors), np.asarray(losses), np.asarray(index, dtype=np.int64), diverged, w, capped


def _replay_downpour(problem, jobs, shards, updates, rng, lr, lr_rule, lr_c, eta_max, batch_size, optimizer,
                     eval_every):
    """Process reads (job starts) and shard pieces in time order; see :func:`_run_downpour`."""
    opt = _Optimizer(optimizer, lr, problem.dim, shards)
    b = opt.bounds
    sl = [slice(b[s], b[s + 1]) for s in range(shards)]
    w = problem.init()
    shard_ver = [0] * shards
    events = []  # (time, order, kind, job, shard); pieces (order 0) before reads (order 1) at equal times
    for g, (t0, _t1, _w, arr) in enumerate(jobs):
        events.append((t0, 1, g, -1))
        for s, ta in enumerate(arr):
            events.append((ta, 0, g, s))
    events.sort()
    reads, read_ver, grad = {}, {}, {}
    left = {g: shards for g in range(len(jobs))}
    worst = {g: 0 for g in range(len(jobs))}
    times, stale, contrib = [], [], []
    errors, losses, index = [], [], []
    diverged = False
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for t, kind, g, s in events:
            if len(times) == updates:
                break
            if kind == 1:
                reads[g] = w
                read_ver[g] = list(shard_ver)
                continue
            if g not in grad:
                grad[g] = problem.stochastic_gradient(reads[g], rng, batch_size)
            st = shard_ver[s] - read_ver[g][s]
            worst[g] = max(worst[g], st)
            scale = _step_scales(lr_rule, lr, lr_c, eta_max, [st], w, [reads[g]])[0]
            w = opt.step(w, scale * grad[g], sl[s])
            shard_ver[s] += 1
            left[g] -= 1
            if left[g] == 0:
                times.append(t)
                stale.append(worst[g])
                contrib.append(jobs[g][2])
                del grad[g], reads[g], read_ver[g]
                if not np.all(np.isfinite(w)):
                    diverged = True
                if (len(times)) % eval_every == 0 or len(times) == updates:
                    errors.append(problem.error(w) if not diverged else np.nan)
                    losses.append(problem.loss(w) if not diverged else np.nan)
                    index.append(len(times) - 1)
    return (np.asarray(times), np.asarray(stale, dtype=np.int64), np.asarray(contrib).reshape(-1, 1),
            np.asarray(errors), np.asarray(losses), np.asarray(index, dtype=np.int64), diverged, w)


def _downpour_events(jobs) -> list[tuple]:
    """Each replica's read (kind 1, shard -1) and each of its pieces' arrivals (kind 0, the shard), in time order."""
    events = []
    for g, (t0, _t1, _w, arr) in enumerate(jobs):
        events.append((t0, 1, g, -1))
        for s, ta in enumerate(arr):
            events.append((ta, 0, g, s))
    events.sort()
    return events


def _downpour_timing(jobs, shards, updates):
    """Completion times, staleness (worst shard) and replicas, without training."""
    events = _downpour_events(jobs)
    shard_ver = [0] * shards
    read_ver, left, worst = {}, {}, {}
    times, stale, contrib = [], [], []
    for t, kind, g, s in events:
        if len(times) == updates:
            break
        if kind == 1:
            read_ver[g] = list(shard_ver)
            left[g] = shards
            worst[g] = 0
            continue
        worst[g] = max(worst[g], shard_ver[s] - read_ver[g][s])
        shard_ver[s] += 1
        left[g] -= 1
        if left[g] == 0:
            times.append(t)
            stale.append(worst[g])
            contrib.append(jobs[g][2])
    return np.asarray(times), np.asarray(stale, dtype=np.int64), np.asarray(contrib).reshape(-1, 1)


# --------------------------------------------------------------------------- public entry point


def _check_training(lr, lr_rule, lr_c, eta_max, batch_size, optimizer):
    """Validate the training settings shared by :func:`simulate` and :func:`replay`; return them checked."""
    lr = check_positive("lr", lr)
    if lr_rule not in LR_RULES:
        raise ValueError(f"lr_rule must be one of {', '.join(LR_RULES)}; got {lr_rule!r}")
    lr_c = check_positive("lr_c", lr_c)
    eta_max = lr if eta_max is None else check_positive("eta_max", eta_max)
    batch_size = check_count("batch_size", batch_size, 1)
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {optimizer!r}")
    return lr, lr_c, eta_max, batch_size


def simulate(
    protocol: str,
    workers: int,
    k: int | None = None,
    compute: str = "exponential",
    updates: int = 10_000,
    seed: int = 0,
    comm_time: float | Callable[[np.random.Generator, int], float] = 0.0,
    problem=None,
    lr: float = 0.1,
    lr_rule: str = "constant",
    batch_size: int = 16,
    optimizer: str = "sgd",
    shards: int = 1,
    *,
    lr_c: float = 0.01,
    eta_max: float | None = None,
    eval_every: int = 1,
    record_jobs: bool = False,
    **compute_params,
) -> SimResult:
    r"""Simulate ``updates`` parameter-server updates of one SGD protocol.

    Parameters
    ----------
    protocol
        one of :data:`PROTOCOLS` (see the module docstring).
    workers
        ``P``, the number of learners (>= 1).
    k
        ``K``: learners (``k_sync``, ``k_async``) or mini-batches
        (``k_batch_sync``, ``k_batch_async``) per update, ``1 <= K <= P``;
        ``None`` for ``sync`` (``K = P``) and ``async`` (``K = 1``).
    compute
        compute-time distribution, one of :data:`DISTRIBUTIONS`; its parameters
        go in ``compute_params``: ``deterministic(time=1.0)`` seconds,
        ``exponential(rate=1.0)`` per second (mean ``1/rate``),
        ``shifted_exponential(shift=1.0, rate=1.0)`` (``shift`` s plus an
        exponential), ``pareto(shape=2.5, scale=1.0)`` (Pareto I, tail index
        ``shape``, minimum ``scale`` s), ``straggler(base="exponential",
        slowdown=4.0, ...)``: learner 0 is persistently ``slowdown`` times
        slower, the others follow ``base`` (with ``base``'s parameters).
    updates
        number of PS updates to simulate.
    seed
        seeds every random stream (compute times, transfers, mini-batches).
    comm_time
        seconds per pull and per push (float), or ``comm_time(rng, worker)``
        returning seconds for one transfer. Default 0: free communication.
    problem
        a :class:`commlib.sgd.training.Problem` to train; then ``errors`` and
        ``losses`` are filled. Timing does not depend on it.
    lr, lr_rule, lr_c, eta_max
        learning rate :math:`\eta_0` and its rule: ``"constant"``;
        ``"staleness"``: each gradient of staleness :math:`\tau` gets
        :math:`\eta_0/\max(\tau, 1)` (Zhang et al. 2016; Gupta et al. 2016
        divide by the average staleness); ``"distance"``:
        :math:`\eta_j = \min(C/\lVert w_j - w_{\tau(j)}\rVert_2^2, \eta_{\max})`
        with ``C = lr_c`` and ``eta_max`` (default ``lr``) (Dutta et al. 2018).
        Each update applies the mean over its ``K`` gradients of
        (rate x gradient).
    batch_size
        samples per mini-batch (per gradient).
    optimizer, shards
        ``"sgd"`` or ``"adagrad"`` (:math:`\eta_{i,k} = \gamma/\sqrt{\sum_{j\le k}\Delta w_{i,j}^2}`
        per coordinate, ``gamma = lr``). ``shards > 1`` (only with
        ``protocol="async"``) splits the parameters over that many PS shards
        that apply their pieces independently, as in Downpour SGD (Dean et al.
        2012): with random transfer times the shards apply updates in
        different orders and a replica reads a mix of versions. Then one
        "update" is one gradient whose every piece has arrived, and its
        staleness is the worst over the shards.
    eval_every
        measure test error and loss after every ``eval_every``-th update.
    record_jobs
        if ``True``, the event loop also records every learner's jobs in
        :attr:`SimResult.jobs` (see :class:`Job`): one record per job, so
        meant for short runs and pictures. Off by default, which keeps the
        loop lean. Not available with ``shards > 1``.

    Returns
    -------
    SimResult

    Raises
    ------
    ValueError
        unknown protocol, distribution, rule or optimiser; ``k`` outside
        ``[1, workers]``; negative or zero rates, times or counts.

    >>> r = simulate("k_async", workers=8, k=2, updates=20_000, seed=1)
    >>> round(float(r.staleness.mean()), 1)    # exact mean for exponential times: P/K - 1 = 3
    3.0
    >>> simulate("k_sync", workers=4, k=5)
    Traceback (most recent call last):
    ...
    ValueError: k must be >= 1 and <= 4, got 5

    With ``record_jobs=True`` the run also says who computed what, when. Two
    learners, 1 s and 3 s per job (the persistent straggler law with
    deterministic times), asynchronous SGD, three updates:

    >>> r = simulate("async", workers=2, compute="straggler", base="deterministic", slowdown=3.0,
    ...              updates=3, record_jobs=True)
    >>> r.times.tolist()
    [1.0, 2.0, 3.0]
    >>> for j in r.jobs:   # learner, start (s), end (s), status, update, staleness
    ...     print(j.worker, j.start, j.end, j.status, j.update, j.staleness)
    1 0.0 1.0 applied 0 0
    1 1.0 2.0 applied 1 0
    0 0.0 3.0 applied 2 2
    1 2.0 3.0 unfinished None None

    The slow learner's gradient, begun on version 0, arrives after updates 0
    and 1: staleness 2. The fast learner's third job runs past the last update;
    the slow learner's next job, begun at 3.0 s with that update, is not
    listed: only jobs begun before the last update are.
    """
    protocol = _check_protocol(protocol)
    workers = check_count("workers", workers, 1)
    K = _check_k(protocol, workers, k)
    params = _dist_params(compute, compute_params)
    updates = check_count("updates", updates, 1)
    seed = check_count("seed", seed, 0)
    if not callable(comm_time):
        comm_time = check_nonnegative("comm_time", comm_time)
    lr, lr_c, eta_max, batch_size = _check_training(lr, lr_rule, lr_c, eta_max, batch_size, optimizer)
    shards = check_count("shards", shards, 1)
    eval_every = check_count("eval_every", eval_every, 1)
    if not isinstance(record_jobs, (bool, np.bool_)):
        raise ValueError(f"record_jobs must be True or False, got {record_jobs!r}")
    if shards > 1:
        if record_jobs:
            raise ValueError("record_jobs=True needs shards = 1 (Downpour SGD's jobs are not recorded)")
        if protocol != "async":
            raise ValueError(f"shards > 1 (Downpour SGD) needs protocol 'async', got {protocol!r}")
        if problem is not None and shards > problem.dim:
            raise ValueError(f"shards must be <= the number of parameters ({problem.dim}), got {shards}")

    if shards > 1:
        streams = _Streams(workers, seed, compute, params, comm_time, pushes=0)
        jobs = _run_downpour(streams, workers, shards, updates, comm_time)
        if problem is None:
            times, stale, contrib = _downpour_timing(jobs, shards, updates)
            return SimResult(protocol, workers, 1, times, stale, contrib, np.ones(updates, dtype=np.int64))
        times, stale, contrib, errors, losses, index, diverged, w = _replay_downpour(
            problem, jobs, shards, updates, streams.data_rng, lr, lr_rule, lr_c, eta_max, batch_size,
            optimizer, eval_every)
        w0 = problem.init()
        return SimResult(protocol, workers, 1, times, stale, contrib, np.ones(updates, dtype=np.int64),
                         errors, losses, index, problem.error(w0), problem.loss(w0), diverged, w)

    timed = schedule(protocol, workers, K, compute, updates, seed, comm_time, record_jobs=record_jobs, **compute_params)
    if problem is None:
        return timed
    return replay(timed, problem, lr, lr_rule, batch_size, optimizer, seed=seed, lr_c=lr_c, eta_max=eta_max,
                  eval_every=eval_every)


def downpour_staleness_parts(workers: int, shards: int, updates: int = 10_000, seed: int = 0,
                             comm_time: float | Callable = 0.0, compute: str = "exponential") -> dict[str, float]:
    """Where Downpour SGD's staleness comes from: others' pieces, the replica's own, and the worst shard.

    The schedule is :func:`simulate`'s with ``shards > 1`` (the same seed
    gives the same jobs and transfers). For each gradient whose pieces have
    all arrived, and on each shard, count the pieces that shard applied
    between the replica's read and the arrival of this gradient's piece.
    That window is a compute time *plus* the piece's transfer, longer than
    the compute time alone that :math:`n - 1` counts; and a replica reads
    as soon as it pushes, so its own last pieces, still in flight, land
    inside it too. :func:`simulate` reports the worst shard, which adds the
    spread over shards. Returns the means over gradients (in updates):
    ``"others"`` (other replicas' pieces, per shard), ``"own"`` (the
    replica's own earlier pieces, per shard), ``"shard"`` (their sum, per
    shard) and ``"worst"`` (the worst shard, :func:`simulate`'s staleness).

    >>> p = downpour_staleness_parts(1, 2, updates=1000, comm_time=0.1)
    >>> p["others"], p["own"]    # alone: its own last pieces, still in flight (all but the first gradient)
    (0.0, 0.999)
    >>> p["worst"] == float(simulate("async", 1, shards=2, updates=1000, comm_time=0.1).staleness.mean())
    True
    """
    workers = check_count("workers", workers, 1)
    shards = check_count("shards", shards, 2)
    updates = check_count("updates", updates, 1)
    seed = check_count("seed", seed, 0)
    if not callable(comm_time):
        comm_time = check_nonnegative("comm_time", comm_time)
    streams = _Streams(workers, seed, compute, _dist_params(compute, {}), comm_time, pushes=0)
    jobs = _run_downpour(streams, workers, shards, updates, comm_time)
    events = _downpour_events(jobs)
    applied: list[list[int]] = [[] for _ in range(shards)]  # the replica of each piece, in the order applied
    read, others, own, left = {}, {}, {}, {}
    done: list[int] = []
    for _t, kind, g, s in events:
        if len(done) == updates:
            break
        if kind == 1:
            read[g], others[g], own[g], left[g] = [len(a) for a in applied], [0] * shards, [0] * shards, shards
            continue
        since = applied[s][read[g][s]:]
        mine = sum(1 for r in since if r == jobs[g][2])
        own[g][s], others[g][s] = mine, len(since) - mine
        applied[s].append(jobs[g][2])
        left[g] -= 1
        if left[g] == 0:
            done.append(g)
    o = float(np.mean([np.mean(others[g]) for g in done]))
    m = float(np.mean([np.mean(own[g]) for g in done]))
    worst = float(np.mean([max(a + b for a, b in zip(others[g], own[g])) for g in done]))
    return {"others": o, "own": m, "shard": o + m, "worst": worst}


def schedule(protocol: str, workers: int, k: int | None = None, compute: str = "exponential", updates: int = 10_000,
             seed: int = 0, comm_time: float | Callable[[np.random.Generator, int], float] = 0.0, *,
             record_jobs: bool = False, fresh: bool = False, **compute_params) -> SimResult:
    """Phase one of :func:`simulate`: the schedule of ``updates`` PS updates, nothing trained.

    Who computes when, when each update happens (:attr:`SimResult.times`), which learners
    contribute to it (:attr:`SimResult.contributors`) and how stale each gradient is
    (:attr:`SimResult.staleness`); with ``record_jobs=True`` every job. Arguments as in
    :func:`simulate`. The event loops are the lean ones :func:`simulate` runs (a heap of
    finish times; plain numpy for K-sync).

    ``fresh=True`` is the control without staleness: the same schedule (the same updates at the
    same times, from the same learners, so a replay draws the same mini-batches), but every
    staleness set to 0, so a replay evaluates each gradient on the current parameters. Against the
    schedule itself, seed by seed, it isolates what staleness costs.

    >>> s = schedule("k_async", workers=4, k=2, updates=5, seed=0)
    >>> s.contributors.shape, s.losses is None
    ((5, 2), True)
    >>> f = schedule("k_async", workers=4, k=2, updates=5, seed=0, fresh=True)
    >>> bool(np.array_equal(f.times, s.times)), int(f.staleness.max())
    (True, 0)
    """
    if not isinstance(record_jobs, (bool, np.bool_)):
        raise ValueError(f"record_jobs must be True or False, got {record_jobs!r}")
    if not isinstance(fresh, (bool, np.bool_)):
        raise ValueError(f"fresh must be True or False, got {fresh!r}")
    with _cycle_collector_paused(record_jobs):
        timed, log = _scheduled(protocol, workers, k, compute, updates, seed, comm_time, compute_params, record_jobs)
        stale = np.zeros_like(timed.staleness) if fresh else timed.staleness
        if fresh and log is not None:
            log = [(*entry[:5], 0 if entry[3] == "applied" else entry[5]) for entry in log]
        jobs = None if log is None else tuple(Job(*entry) for entry in log)
    return dataclasses.replace(timed, staleness=stale, jobs=jobs)


def job_spans(protocol: str, workers: int, k: int | None = None, compute: str = "exponential",
              updates: int = 10_000, seed: int = 0, comm_time: float | Callable[[np.random.Generator, int], float] = 0.0,
              **compute_params) -> tuple[SimResult, np.ndarray, np.ndarray]:
    """When each job started and ended (s), without a :class:`Job` record for each: for long runs that need no more.

    Returns the schedule of :func:`schedule` (``jobs`` left ``None``) and two arrays, ``start`` and ``end``, one
    entry a job, equal and in the same order as ``[j.start for j in jobs]`` and ``[j.end for j in jobs]`` of the same
    call with ``record_jobs=True``: the same event loop records them. Arguments as in :func:`schedule`.

    >>> run, start, end = job_spans("k_async", workers=4, k=2, updates=50, seed=1)
    >>> full = schedule("k_async", workers=4, k=2, updates=50, seed=1, record_jobs=True)
    >>> start.tolist() == [j.start for j in full.jobs], end.tolist() == [j.end for j in full.jobs]
    (True, True)
    """
    with _cycle_collector_paused(True):
        timed, log = _scheduled(protocol, workers, k, compute, updates, seed, comm_time, compute_params, True)
        start = np.fromiter((entry[1] for entry in log), dtype=float, count=len(log))
        end = np.fromiter((entry[2] for entry in log), dtype=float, count=len(log))
    return timed, start, end


def _scheduled(protocol, workers, k, compute, updates, seed, comm_time, compute_params, record: bool
               ) -> tuple[SimResult, list | None]:
    """Check the arguments of :func:`schedule`, then run the protocol's event loop: the schedule (no jobs) and, if
    ``record``, its job log (a ``(worker, start, end, status, update, staleness)`` tuple a job, else ``None``)."""
    protocol = _check_protocol(protocol)
    workers = check_count("workers", workers, 1)
    K = _check_k(protocol, workers, k)
    params = _dist_params(compute, compute_params)
    updates = check_count("updates", updates, 1)
    seed = check_count("seed", seed, 0)
    if not callable(comm_time):
        comm_time = check_nonnegative("comm_time", comm_time)
    streams = _Streams(workers, seed, compute, params, comm_time)
    log = [] if record else None
    if protocol in ("sync", "k_sync"):
        times, stale, contrib = _run_k_sync(streams, workers, K, updates, log)
    elif protocol == "k_batch_sync":
        times, stale, contrib = _run_k_batch_sync(streams, workers, K, updates, log)
    elif protocol == "async":
        times, stale, contrib = _run_async(streams, workers, updates, log)
    elif protocol == "k_async":
        times, stale, contrib = _run_k_async(streams, workers, K, updates, log)
    else:
        times, stale, contrib = _run_k_batch_async(streams, workers, K, updates, log)
    return SimResult(protocol, workers, K, times, stale, contrib, np.full(updates, K, dtype=np.int64)), log


@contextlib.contextmanager
def _cycle_collector_paused(pause: bool):
    """Pause Python's cycle collector while a job log is built (``pause``), and restore it after.

    A recorded run allocates a tuple and then a :class:`Job` for every job, around a hundred thousand in a long run,
    and none of them refers back to another: there are no cycles to collect. The collector still scans them each
    time the count of new objects passes its threshold, again and again as the log grows, which can take longer
    than the run itself. Pausing it changes no number: it only decides when unreachable cycles are freed.
    """
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _data_rng(seed: int, workers: int) -> np.random.Generator:
    """The mini-batch generator of a run: the same child of ``seed`` that :class:`_Streams` holds."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(2 * workers + 2)[2 * workers])


def replay(timed: SimResult, problem, lr: float = 0.1, lr_rule: str = "constant", batch_size: int = 16,
           optimizer: str = "sgd", *, seed: int = 0, lr_c: float = 0.01, eta_max: float | None = None,
           eval_every: int = 1) -> SimResult:
    """Phase two of :func:`simulate`: train ``problem`` on a schedule from :func:`schedule`.

    Update ``j`` applies the mean of its ``K`` gradients (times their rates), each evaluated on the
    parameters of version ``j - staleness``, i.e. exactly the (possibly stale) values its learner
    held; mini-batches come from ``seed`` (the one the schedule was made with, to repeat
    :func:`simulate`). Arguments as in :func:`simulate`.

    >>> from commlib.sgd.training import make_problem
    >>> s = schedule("async", workers=4, updates=200, seed=0)
    >>> r = replay(s, make_problem(seed=0), lr=0.5, batch_size=8, eval_every=200)
    >>> bool(r.losses[-1] < r.initial_loss)
    True
    """
    if not isinstance(timed, SimResult) or timed.gradients_per_update.size and \
            not np.all(timed.gradients_per_update == timed.k):
        raise ValueError("timed must be a SimResult from schedule() (K gradients per update)")
    lr, lr_c, eta_max, batch_size = _check_training(lr, lr_rule, lr_c, eta_max, batch_size, optimizer)
    eval_every = check_count("eval_every", eval_every, 1)
    seed = check_count("seed", seed, 0)
    errors, losses, index, diverged, w, capped = _replay(problem, timed.times, timed.staleness, timed.k,
                                                         _data_rng(seed, timed.workers), lr, lr_rule, lr_c,
                                                         eta_max, batch_size, optimizer, eval_every)
    w0 = problem.init()
    return SimResult(timed.protocol, timed.workers, timed.k, timed.times, timed.staleness, timed.contributors,
                     timed.gradients_per_update, errors, losses, index, problem.error(w0), problem.loss(w0),
                     diverged, w, timed.jobs, capped)


def replay_grid(schedules, problem, rates, batch_size: int = 16, *, seeds, lr_rule: str = "constant",
                eval_every: int = 1, tail: float | None = None, curves: int = 1) -> list[list[SimResult]]:
    r"""Phase two of :func:`simulate` for a grid: every schedule of ``schedules`` trained at every rate of ``rates``.

    ``schedules[i]`` comes from :func:`schedule` with seed ``seeds[i]``; all have the same ``K`` and
    number of updates (as runs of one protocol on one budget do). Returns ``out[i][r]``, the run of
    schedule ``i`` at rate ``rates[r]``: the same, up to rounding, as
    ``replay(schedules[i], problem, lr=rates[r], lr_rule=lr_rule, batch_size=batch_size, seed=seeds[i])``.
    A run's mini-batches do not depend on the parameters, so all the runs of a grid step together,
    one update at a time, as one array: tuning a rate over a grid and several seeds costs about
    what one run costs. Plain SGD only, with the ``"constant"`` or ``"staleness"`` rule (neither reads
    the parameters to set the rate).

    Evaluating the loss on the whole training set costs more than the updates. With ``tail`` (a share
    of the updates, e.g. 0.35), only the first ``curves`` schedules are evaluated all along; the others
    only over their last ``tail`` of updates (their earlier entries of ``losses`` and ``errors`` are
    ``nan``): enough to compare how runs end, and to draw a few whole curves.

    >>> from commlib.sgd.training import make_problem
    >>> p = make_problem(seed=0, n_train=400, n_test=100)
    >>> s = [schedule("async", workers=4, updates=100, seed=seed) for seed in (0, 1)]
    >>> grid = replay_grid(s, p, (0.05, 0.5), batch_size=8, seeds=(0, 1), eval_every=50)
    >>> one = replay(s[1], p, lr=0.5, batch_size=8, seed=1, eval_every=50)
    >>> bool(np.allclose(grid[1][1].losses, one.losses, rtol=1e-9, atol=0))
    True
    """
    schedules = list(schedules)
    seeds = [check_count("seed", s, 0) for s in seeds]
    if not schedules or len(seeds) != len(schedules):
        raise ValueError(f"seeds must give one seed per schedule ({len(schedules)}), got {len(seeds)}")
    if any(not isinstance(t, SimResult) for t in schedules):
        raise ValueError("schedules must be SimResults from schedule()")
    K, U = schedules[0].k, schedules[0].updates
    if any(t.k != K or t.updates != U or not np.all(t.gradients_per_update == K) for t in schedules):
        raise ValueError("schedules must share K and the number of updates (K gradients per update)")
    rates = tuple(check_positive("rates", float(r)) for r in rates)
    if not rates:
        raise ValueError("rates must hold at least one learning rate")
    if lr_rule not in ("constant", "staleness"):
        raise ValueError(f"lr_rule must be 'constant' or 'staleness' for a grid, got {lr_rule!r}")
    batch_size = check_count("batch_size", batch_size, 1)
    eval_every = check_count("eval_every", eval_every, 1)

    S, R, B, C = len(schedules), len(rates), batch_size, problem.classes
    X, Y = problem.x_train, problem.y_train
    D = X.shape[1]
    stale = np.stack([t.staleness.astype(np.int64) for t in schedules])                   # (S, U K)
    idx = np.stack([_data_rng(seed, t.workers).integers(0, problem.n_train, size=(U * K, B))
                    for seed, t in zip(seeds, schedules)])                                 # (S, U K, B): the same draws
    onehot = (Y[idx][..., None] == np.arange(C)).astype(float)                             # (S, U K, B, C)
    xs = X[idx]                                                                            # (S, U K, B, D)
    scale = (np.ones(stale.shape) if lr_rule == "constant" else 1.0 / np.maximum(stale, 1))[:, :, None, None, None]
    every = np.arange(S)
    lr = np.asarray(rates)[None, :, None, None]
    keep = int(stale.max()) + 1
    hist = np.zeros((keep, S, R, D, C))
    rows = np.arange(X.shape[0])
    evals = [j for j in range(U) if (j + 1) % eval_every == 0 or j + 1 == U]
    losses, errors = np.empty((len(evals), S, R)), np.empty((len(evals), S, R))
    bad = np.zeros((S, R), bool)
    if tail is not None and not 0.0 < float(tail) <= 1.0:
        raise ValueError(f"tail must lie in (0, 1], got {tail!r}")
    curves = check_count("curves", curves, 0)
    first = U if tail is None else int((1.0 - float(tail)) * U)
    e = 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for j in range(U):
            cols = slice(j * K, (j + 1) * K)                                               # the update's K gradients
            w_read = hist[(j - stale[:, cols]) % keep, every[:, None]]                     # (S, K, R, D, C)
            x = xs[:, cols]                                                                # (S, K, B, D)
            z = np.matmul(x[:, :, None], w_read)                                           # (S, K, R, B, C)
            z -= z.max(axis=4, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=4, keepdims=True)
            p -= onehot[:, cols, None]
            g = np.matmul(np.swapaxes(x, 2, 3)[:, :, None], p) / B                         # (S, K, R, D, C)
            if problem.l2:
                g = g + problem.l2 * w_read
            g_sum = g[:, 0] * scale[:, j * K] if K == 1 else (scale[:, cols] * g).sum(axis=1)
            w = hist[j % keep] - lr * (g_sum / K)
            hist[(j + 1) % keep] = w
            if e < len(evals) and evals[e] == j:
                bad |= ~np.isfinite(w).all(axis=(2, 3))
                n = S if tail is None or j >= first else curves                             # runs evaluated now
                flat = w[:n].transpose(2, 0, 1, 3).reshape(D, n * R * C)                   # one product for them all
                zt = (X @ flat).reshape(X.shape[0], n * R, C)
                top = zt.max(axis=2)
                lse = np.log(np.exp(zt - top[..., None]).sum(axis=2)) + top
                loss = (lse - zt[rows, :, Y]).mean(axis=0).reshape(n, R)
                if problem.l2:
                    loss = loss + 0.5 * problem.l2 * np.sum(w[:n] * w[:n], axis=(2, 3))
                guess = (problem.x_test @ flat).reshape(problem.x_test.shape[0], n * R, C).argmax(axis=2)
                err = (guess != problem.y_test[:, None]).mean(axis=0).reshape(n, R)
                losses[e], errors[e] = np.nan, np.nan
                losses[e, :n], errors[e, :n] = np.where(bad[:n], np.nan, loss), np.where(bad[:n], np.nan, err)
                e += 1
    w_end = hist[U % keep]
    w0 = problem.init()
    e0, l0 = problem.error(w0), problem.loss(w0)
    index = np.asarray(evals, dtype=np.int64)
    return [[SimResult(t.protocol, t.workers, t.k, t.times, t.staleness, t.contributors, t.gradients_per_update,
                       errors[:, i, r].copy(), losses[:, i, r].copy(), index, e0, l0, bool(bad[i, r]),
                       w_end[i, r].ravel().copy(), t.jobs)
             for r in range(R)] for i, t in enumerate(schedules)]


# --------------------------------------------------------------------------- closed forms


def harmonic(n: int) -> float:
    r"""The harmonic number :math:`H_n = \sum_{i=1}^n 1/i` (:math:`H_0 = 0`).

    >>> round(harmonic(4), 4)
    2.0833
    """
    n = check_count("n", n, 0)
    return math.fsum(1.0 / i for i in range(1, n + 1))


def expected_value(distribution: str, **params) -> float:
    r"""Mean compute time :math:`E[X]` (s) of an i.i.d. distribution.

    deterministic: ``time``; exponential: :math:`1/\mu`; shifted exponential:
    :math:`\Delta + 1/\mu`; Pareto I: :math:`\alpha x_m/(\alpha-1)` (``shape`` > 1).

    >>> expected_value("shifted_exponential", shift=1.0, rate=2.0)
    1.5
    """
    return expected_order_statistic(1, 1, distribution, **params)


def expected_order_statistic(k: int, n: int, distribution: str, **params) -> float:
    r"""Expected ``k``-th smallest of ``n`` i.i.d. compute times, :math:`E[X_{k:n}]` (s).

    * exponential, rate :math:`\mu`: :math:`\frac1\mu\sum_{i=n-k+1}^{n} \frac1i
      = (H_n - H_{n-k})/\mu` (Rényi's representation: the gaps between
      successive order statistics are independent exponentials of rates
      :math:`n\mu, (n-1)\mu, \dots`; David & Nagaraja 2003, section 2.5);
    * shifted exponential: :math:`\Delta` plus the above;
    * deterministic: ``time``;
    * Pareto I (``shape`` :math:`\alpha`, ``scale`` :math:`x_m`):
      :math:`x_m\,\frac{\Gamma(n+1)\,\Gamma(n-k+1-1/\alpha)}{\Gamma(n-k+1)\,\Gamma(n+1-1/\alpha)}`,
      finite when :math:`\alpha(n-k+1) > 1`.

    This is the time of one K-sync iteration with ``k = K``, ``n = P``.

    >>> round(expected_order_statistic(4, 4, "exponential", rate=1.0), 4)   # H_4
    2.0833
    """
    n = check_count("n", n, 1)
    k = check_count("k", k, 1, n)
    if distribution == "straggler":
        raise ValueError("distribution must be i.i.d. for order statistics: use deterministic, exponential, "
                         "shifted_exponential or pareto (a persistent straggler is not i.i.d.)")
    p = _dist_params(distribution, params)
    if distribution == "deterministic":
        return p["time"]
    if distribution in ("exponential", "shifted_exponential"):
        value = (harmonic(n) - harmonic(n - k)) / p["rate"]
        return value + p.get("shift", 0.0)
    a, xm = p["shape"], p["scale"]
    if a * (n - k + 1) <= 1:
        raise ValueError(f"shape must be > 1/(n-k+1) = {1 / (n - k + 1):g} for a finite mean, got {a}")
    lg = math.lgamma
    return xm * math.exp(lg(n + 1) + lg(n - k + 1 - 1 / a) - lg(n - k + 1) - lg(n + 1 - 1 / a))


def expected_max(n: int, distribution: str, **params) -> float:
    r"""Expected slowest of ``n`` i.i.d. compute times, :math:`E[X_{n:n}]` (s): one fully synchronous iteration.

    Exponential: :math:`H_n/\mu \approx (\ln n + 0.5772)/\mu`.

    >>> round(expected_max(20, "exponential", rate=1.0), 4)
    3.5977
    """
    return expected_order_statistic(n, n, distribution, **params)


def runtime_ratio(P: int, distribution: str = "exponential", **params) -> float:
    r"""The runtime theorem: :math:`E[T_\text{sync}]/E[T_\text{async}] = P\,E[X_{P:P}]/E[X]`.

    One synchronous iteration lasts as long as the slowest of ``P`` learners,
    :math:`E[X_{P:P}]`; asynchronous SGD applies gradients at the combined rate
    of ``P`` independent learners, one every :math:`E[X]/P` on average
    (renewal theory). Hence the ratio (Dutta et al. 2018, Theorem 1). For
    exponential times it is :math:`P H_P` (which grows like :math:`P\ln P`);
    for shifted exponential :math:`P(\Delta + H_P/\mu)/(\Delta + 1/\mu)`, which for a
    fixed ``P`` tends to ``P`` as the shift grows, and for a fixed shift still grows
    like :math:`P\ln P/(1 + \mu\Delta)` as ``P`` grows.

    >>> round(runtime_ratio(20, "exponential"), 2)   # not 100: P H_P = 71.95
    71.95
    """
    P = check_count("P", P, 1)
    return P * expected_max(P, distribution, **params) / expected_value(distribution, **params)


def expected_max_straggler(n: int, slowdown: float, rate: float = 1.0) -> float:
    r"""Expected slowest of ``n`` independent exponential compute times, one of them ``slowdown`` times slower
    on average: a fully synchronous iteration with one persistent straggler (s).

    With ``n - 1`` times of rate :math:`\mu` and one of rate :math:`\mu/s`,
    :math:`E[\max] = \int_0^\infty \bigl(1 - (1 - e^{-\mu t/s})(1 - e^{-\mu t})^{n-1}\bigr)\,dt
    = \frac{1}{\mu}\Bigl(H_{n-1} + \frac{(n-1)!}{\prod_{i=0}^{n-1}(1/s + i)}\Bigr)`,
    expanding :math:`(1-e^{-\mu t})^{n-1}` by the binomial theorem (the second sum is Euler's beta
    function :math:`B(1/s, n)`). ``slowdown = 1`` gives :math:`H_n/\mu`.

    >>> round(expected_max_straggler(16, 4.0), 3)
    5.142
    >>> abs(expected_max_straggler(8, 1.0) - harmonic(8)) < 1e-12
    True
    """
    n = check_count("n", n, 1)
    s = check_positive("slowdown", slowdown)
    rate = check_positive("rate", rate)
    a = 1.0 / s
    beta = 1.0
    for i in range(1, n):                      # (n-1)! / prod_{i=0}^{n-1} (a + i), one factor at a time
        beta *= i / (a + i)
    return (harmonic(n - 1) + beta / a) / rate


def straggler_gradient_rate(n: int, slowdown: float, rate: float = 1.0) -> float:
    r"""Gradients per unit of time the asynchronous PS receives from ``n`` learners, one of them ``slowdown`` times
    slower on average: :math:`\mu\,((n - 1) + 1/s)` by the renewal theorem, learner by learner (per mean compute
    time with ``rate = 1``).

    >>> straggler_gradient_rate(16, 4.0)
    15.25
    """
    n = check_count("n", n, 1)
    s = check_positive("slowdown", slowdown)
    rate = check_positive("rate", rate)
    return ((n - 1) + 1.0 / s) * rate


def straggler_runtime_ratio(n: int, slowdown: float) -> float:
    r"""The runtime ratio :math:`E[T_\text{sync}]/E[T_\text{async}]` with one persistent straggler, in closed form.

    Synchronous SGD waits :func:`expected_max_straggler` per update; asynchronous SGD receives
    :math:`(n - 1) + 1/s` gradients per mean compute time (renewal theorem, learner by learner), one
    update each. The ratio is their product.

    >>> round(straggler_runtime_ratio(16, 4.0), 1)
    78.4
    """
    n = check_count("n", n, 1)
    s = check_positive("slowdown", slowdown)
    return expected_max_straggler(n, s) * straggler_gradient_rate(n, s)


def monte_carlo_runtime_ratio(P: int, distribution: str = "exponential", trials: int = 10_000, seed: int = 0,
                              **params) -> float:
    r"""Measure :math:`E[T_\text{sync}]/E[T_\text{async}]` by simulation, to hold against :func:`runtime_ratio`.

    Runs :func:`simulate` for ``sync`` with ``trials`` updates and for
    ``async`` with ``trials * P`` updates (the same number of gradients) and
    returns the ratio of their mean times per update.

    >>> abs(monte_carlo_runtime_ratio(4, trials=20_000, seed=3) / runtime_ratio(4) - 1) < 0.02
    True
    """
    P = check_count("P", P, 1)
    trials = check_count("trials", trials, 1)
    sync = simulate("sync", P, compute=distribution, updates=trials, seed=seed, **params)
    asyn = simulate("async", P, compute=distribution, updates=trials * P, seed=seed + 1, **params)
    return sync.mean_time_per_update / asyn.mean_time_per_update


#: The learning rate the source notes use for every rule (the chapter on stale gradients' shared rate).
NOTES_RATE = 0.5


def mean_rule_rate(base: float, workers: int) -> float:
    r"""The mean rate of the rate/staleness rule :math:`\eta_0/\max(\tau_j, 1)` under asynchronous SGD on
    ``workers`` learners with exponential compute times.

    Each update is then the push of a learner drawn at random, so a gradient's staleness is geometric,
    :math:`P(\tau = k) = p(1-p)^k` with :math:`p = 1/n`, and
    :math:`E[1/\max(\tau, 1)] = p + p\sum_{k \ge 1} (1-p)^k / k = p(1 - \ln p) = (1 + \ln n)/n`.

    >>> round(mean_rule_rate(0.5, 16), 4), mean_rule_rate(0.5, 1)
    (0.1179, 0.5)
    """
    base = check_positive("base", base)
    n = int(workers)
    if n < 1 or n != workers:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    return base * (1.0 + math.log(n)) / n


def expected_staleness(protocol: str, workers: int, k: int | None = None) -> float:
    r"""Mean staleness of an applied gradient under exponential compute times (no communication).

    * synchronous protocols: 0;
    * ``k_async``: :math:`P/K - 1`. After each update all ``P`` learners are
      busy and, the exponential being memoryless, each of them is equally
      likely to be among the next ``K`` to finish: a gradient waits a
      geometric number of updates :math:`G` with success probability
      :math:`K/P` (mean :math:`P/K`) and :math:`G-1` of them happen before
      the one that applies it;
    * ``k_batch_async``: :math:`(P-1)/K`. While a learner computes, the other
      :math:`P-1` push on average :math:`P-1` gradients, i.e. :math:`(P-1)/K`
      updates (Gupta et al. 2016 report :math:`\langle\tau\rangle \approx n
      = P/K` for this "n-softsync" protocol);
    * ``async`` (``K = 1`` of either): :math:`P - 1`.

    >>> expected_staleness("k_async", 16, 4), expected_staleness("k_batch_async", 16, 4)
    (3.0, 3.75)
    """
    protocol = _check_protocol(protocol)
    workers = check_count("workers", workers, 1)
    K = _check_k(protocol, workers, k)
    if protocol in ("sync", "k_sync", "k_batch_sync"):
        return 0.0
    if protocol == "k_async":
        return workers / K - 1.0
    return (workers - 1) / K


def expected_update_time(protocol: str, workers: int, k: int | None = None, rate: float = 1.0) -> float:
    r"""Mean wall-clock time (s) per update under exponential compute times of rate ``rate`` (1/s).

    * ``sync``/``k_sync`` and ``k_async``: :math:`E[X_{K:P}] = (H_P - H_{P-K})/\mu`
      (for ``k_async`` because after every update all ``P`` learners are busy
      with memoryless residual times);
    * ``k_batch_sync`` and ``k_batch_async``: :math:`K/(P\mu)`, since the ``P``
      busy learners finish mini-batches as a Poisson process of rate
      :math:`P\mu`; ``async``: :math:`1/(P\mu)`.

    >>> round(expected_update_time("k_sync", 4, 2), 4)    # 1/4 + 1/3
    0.5833
    """
    protocol = _check_protocol(protocol)
    workers = check_count("workers", workers, 1)
    K = _check_k(protocol, workers, k)
    rate = check_positive("rate", rate)
    if protocol in ("sync", "k_sync", "k_async"):
        return (harmonic(workers) - harmonic(workers - K)) / rate
    return K / (workers * rate)
