"""Experiments of chapter 4 (synchronous and asynchronous SGD): the runs the chapter glues and plots.

Model layer: each function runs :mod:`commlib.sgd.simulate`, :mod:`commlib.sgd.training`
or :mod:`commlib.sgd.scaling` and returns results; the figures in
:mod:`commlib.views.sgd.sync_async` take these results as input.
"""

from __future__ import annotations

import functools
import hashlib
import math
import statistics
from dataclasses import dataclass

import numpy as np

from ... import hardware
from ...sgd import scaling, training
from ...sgd import simulate as sgd
from ...units import check_count, check_positive
from . import grids
from .summaries import RunEnd, protocol_label

__all__ = [
    "TIMELINE_PROTOCOLS",
    "ProtocolTimeline",
    "ProtocolTimelines",
    "protocol_timelines",
    "runtime_ratio_rows",
    "RuntimeRatioCurves",
    "runtime_ratio_curves",
    "RUNTIME_RATIO_LAWS",
    "STRAGGLER_LAW",
    "equal_time_runs",
    "k_tradeoff_runs",
    "k_tradeoff_phrases",
    "large_batch_runs",
    "WeakScalingCurves",
    "weak_scaling_curves",
    "sim_summary",
    "UPDATE_TIME_LAWS",
    "closed_form_update_time",
    "law_mean_times",
    "update_time_rows",
    "law_time_runs",
    "repeat_share",
    "repeat_shares",
    "repeat_words",
    "remaining_work",
    "remaining_work_closed",
    "warmup_rows",
    "warmup_phrases",
    "KSweepPoint",
    "KSweep",
    "k_sweep_runs",
]


# --------------------------------------------------------------------------- the six protocols on one time axis

#: The protocols of the timeline figure, in drawing order, and whether each uses K.
TIMELINE_PROTOCOLS: tuple[tuple[str, bool], ...] = (
    ("sync", False), ("k_sync", True), ("k_batch_sync", True), ("async", False), ("k_async", True),
    ("k_batch_async", True))


@dataclass(frozen=True)
class ProtocolTimeline:
    """One protocol's recorded jobs and PS update times (s), long enough to cover the picture.

    ``jobs`` are the :class:`commlib.sgd.simulate.Job` records of :func:`commlib.sgd.simulate.simulate`
    with ``record_jobs=True``; ``times`` the times of its PS updates, the last
    one at or after the picture's right edge.
    """

    protocol: str
    k: int | None
    jobs: tuple[sgd.Job, ...]
    times: tuple[float, ...]


@dataclass(frozen=True)
class ProtocolTimelines:
    """The six protocols of :data:`TIMELINE_PROTOCOLS` run with the same seed, to be drawn up to ``t_max`` (s)."""

    workers: int
    t_max: float
    timelines: tuple[ProtocolTimeline, ...]


def protocol_timelines(workers: int = 4, k: int = 2, compute: str = "exponential", updates: int = 3,
                       seed: int = 3, t_max: float | None = None, **compute_params) -> ProtocolTimelines:
    """Every learner's jobs under each SGD protocol, on one time axis ending at ``t_max``.

    Each protocol of :data:`TIMELINE_PROTOCOLS` runs :func:`commlib.sgd.simulate.simulate`
    with ``record_jobs=True`` and the same ``seed``, so learner ``w``'s ``i``-th
    compute time is the same draw in every run: the protocols differ only in
    what they do with it. The right edge ``t_max`` is, by default, the time of
    the ``updates``-th fully synchronous update. Every other protocol is run
    for enough updates to reach it; a run with more updates and the same seed
    begins with the shorter run, so doubling the count until the last update
    passes ``t_max`` changes nothing that happened before it.

    Raises ValueError naming a bad parameter (``k`` outside 1..``workers``, a
    ``t_max`` <= 0, an unknown compute-time ``distribution``, ...).

    >>> tl = protocol_timelines(workers=3, k=2, seed=0)
    >>> [t.protocol for t in tl.timelines][:3]
    ['sync', 'k_sync', 'k_batch_sync']
    >>> tl.t_max == tl.timelines[0].times[2]      # the third fully synchronous update
    True
    >>> all(t.times[-1] >= tl.t_max for t in tl.timelines)
    True
    """
    sync = sgd.simulate("sync", workers, compute=compute, updates=updates, seed=seed, record_jobs=True,
                        **compute_params)
    t_end = float(sync.times[-1]) if t_max is None else check_positive("t_max", t_max)
    out = []
    for protocol, uses_k in TIMELINE_PROTOCOLS:
        kk = k if uses_k else None
        n = updates
        while True:
            r = sgd.simulate(protocol, workers, k=kk, compute=compute, updates=n, seed=seed, record_jobs=True,
                             **compute_params)
            if r.times[-1] >= t_end:
                break
            n *= 2
        out.append(ProtocolTimeline(protocol, kk, tuple(r.jobs), tuple(r.times.tolist())))
    return ProtocolTimelines(sync.workers, t_end, tuple(out))


def runtime_ratio_rows(Ps=(2, 4, 8, 16, 32, 64), trials: int = 4000, seed: int = 0,
                       distribution: str = "exponential", **params) -> list[dict]:
    """For each P: the closed form P E[X_P:P]/E[X], its Monte Carlo estimate, their gap, and P ln P."""
    rows = []
    for P in Ps:
        exact = sgd.runtime_ratio(P, distribution, **params)
        mc = sgd.monte_carlo_runtime_ratio(P, distribution, trials=trials, seed=seed, **params)
        rows.append({"P": P, "closed form": exact, "Monte Carlo": mc, "relative gap": mc / exact - 1,
                     "P ln P": P * math.log(P)})
    return rows



#: The compute-time laws of :func:`runtime_ratio_curves` and their parameters (seconds, 1/s).
RUNTIME_RATIO_LAWS = {
    "exponential": {"rate": 1.0},
    "shifted_exponential": {"shift": 1.0, "rate": 1.0},
    "pareto": {"shape": 2.5, "scale": 1.0},
}


#: One slow node: learner 0's exponential compute times are ``slowdown`` times longer, persistently
#: (:func:`commlib.sgd.simulate.simulate` with ``compute="straggler"``). Not i.i.d., so the runtime theorem does not
#: cover it; the synchronous update still has a closed form for exponential times
#: (:func:`commlib.sgd.simulate.expected_max_straggler`), which checks the simulation.
STRAGGLER_LAW = {"base": "exponential", "slowdown": 4.0}


@dataclass(frozen=True)
class RuntimeRatioCurves:
    """The runtime theorem against P: closed forms on a fine grid, Monte Carlo estimates at a few P.

    ``closed_form[law]`` holds :func:`commlib.sgd.simulate.runtime_ratio` at every P of
    ``grid`` (1, 2, ..., max(``Ps``)); ``simulated[law]`` holds
    :func:`commlib.sgd.simulate.monte_carlo_runtime_ratio` at each P of ``Ps``;
    ``straggler_simulated`` the same with one persistently slow learner
    (parameters ``straggler``), or ``None`` when left out.
    """

    Ps: tuple[int, ...]
    grid: tuple[int, ...]
    laws: dict[str, dict]
    closed_form: dict[str, tuple[float, ...]]
    simulated: dict[str, tuple[float, ...]]
    straggler: dict | None
    straggler_simulated: tuple[float, ...] | None


def runtime_ratio_curves(Ps=(1, 2, 4, 8, 16, 32, 64), trials: int = 2000, seed: int = 0,
                         straggler: dict | None = STRAGGLER_LAW, laws: dict | None = None) -> RuntimeRatioCurves:
    r"""E[T_sync]/E[T_async] against P for each law of ``laws`` (default :data:`RUNTIME_RATIO_LAWS`).

    The closed form :math:`P\,E[X_{P:P}]/E[X]` is exact for i.i.d. compute
    times; the Monte Carlo points (``trials`` synchronous updates, as many
    gradients asynchronously) check it. One slow node (``straggler``, by
    default :data:`STRAGGLER_LAW`) breaks the i.i.d. assumption, so it is only
    simulated. Raises ValueError naming ``Ps`` or ``trials`` when they are not
    whole numbers >= 1.

    >>> c = runtime_ratio_curves(Ps=(1, 4), trials=4000, straggler=None)
    >>> c.grid, round(c.closed_form["exponential"][3], 2)      # P H_P at P = 4
    ((1, 2, 3, 4), 8.33)
    >>> abs(c.simulated["exponential"][1] / c.closed_form["exponential"][3] - 1) < 0.05
    True
    """
    Ps = tuple(check_count("Ps", P, 1) for P in Ps)
    if not Ps:
        raise ValueError("Ps must hold at least one number of learners >= 1")
    trials = check_count("trials", trials, 1)
    laws = dict(RUNTIME_RATIO_LAWS if laws is None else laws)
    grid = tuple(range(1, max(Ps) + 1))
    closed, simulated = {}, {}
    for law, params in laws.items():
        closed[law] = tuple(sgd.runtime_ratio(P, law, **params) for P in grid)
        simulated[law] = tuple(sgd.monte_carlo_runtime_ratio(P, law, trials=trials, seed=seed, **params) for P in Ps)
    slow = None
    if straggler is not None:
        slow = tuple(sgd.monte_carlo_runtime_ratio(P, "straggler", trials=trials, seed=seed, **straggler) for P in Ps)
    return RuntimeRatioCurves(Ps, grid, laws, closed, simulated, None if straggler is None else dict(straggler), slow)


def equal_time_runs(configs, workers: int, budget: float, problem=None, seed: int = 0, points: int = 80,
                    **kwargs) -> dict:
    """Run each ``(protocol, k)`` in ``configs`` for about ``budget`` seconds of simulated wall clock.

    The number of updates is ``budget`` / the expected time per update
    (:func:`commlib.sgd.simulate.expected_update_time`, exponential compute of rate 1),
    so slow protocols get few updates and fast ones many: the comparison is
    at equal wall-clock time, not at equal update count.
    """
    budget = check_positive("budget", budget)
    problem = training.make_problem(seed=0) if problem is None else problem
    out = {}
    for protocol, k in configs:
        u = max(1, int(budget / sgd.expected_update_time(protocol, workers, k)))
        out[protocol_label(protocol, workers, k)] = sgd.simulate(protocol, workers, k=k, updates=u, seed=seed,
                                                             problem=problem, eval_every=max(1, u // points),
                                                             **kwargs)
    return out



def k_tradeoff_runs(workers: int = 16, ks=(1, 2, 4, 8, 16), budget: float = 400.0, protocol: str = "k_async",
                    seed: int = 0, known: dict | None = None, **kwargs) -> dict:
    """Runs of :func:`equal_time_runs` for several K (K = 1 asynchronous, K = ``workers`` fully synchronous).

    ``known``: runs of :func:`equal_time_runs` already made with the same
    budget, seed and settings, reused by label instead of simulated again.
    :func:`~commlib.experiments.sgd.summaries.run_ends` and
    :func:`k_tradeoff_phrases` describe how each run ends, from the runs
    themselves.
    """
    configs = [(protocol if 1 < K < workers else ("async" if K == 1 else "sync"), None if K in (1, workers) else K)
               for K in ks]
    known = known or {}
    labels = [protocol_label(p, workers, k) for p, k in configs]
    todo = [c for c, label in zip(configs, labels) if label not in known]
    new = equal_time_runs(todo, workers, budget, seed=seed, **kwargs) if todo else {}
    return {label: known[label] if label in known else new[label] for label in labels}


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def k_tradeoff_phrases(ends: list[RunEnd], workers: int, min_fall: float = 0.01) -> dict[str, str]:
    """Markdown phrases describing the ends of a K trade-off, computed from :func:`run_ends`.

    * ``"ranking"``: the runs from the lowest final level to the highest,
      e.g. "K = 8 (0.548 nats), then K = 4 (0.563 nats) and K = 1 (0.730 nats)";
    * ``"best"``: the K with the lowest final level, e.g. "K = 8";
    * ``"sync_trend"``: what the fully synchronous run (K = ``workers``)
      is doing at the end: "is still descending: ..." or "has levelled off: ...".
    """
    workers = check_count("workers", workers)
    if not ends:
        raise ValueError("ends must hold at least one RunEnd")
    order = sorted(ends, key=lambda e: e.level)
    items = [f"$K = {e.k}$ ({e.level:.3f} nats)" for e in order]
    ranking = items[0] if len(items) == 1 else items[0] + ", then " + _and(items[1:])
    phrases = {"ranking": ranking, "best": f"$K = {order[0].k}$"}
    sync = [e for e in ends if e.k == workers]
    if sync:
        e = sync[0]
        span = "quarter" if e.window == 0.25 else f"{100 * e.window:.0f} %"
        if e.descending:
            phrases["sync_trend"] = (f"is still descending: its fitted loss falls by "
                                     f"{100 * e.fall:.1f} % across the last {span} of the budget, so a longer budget can change "
                                     f"the order")
        else:
            phrases["sync_trend"] = (f"has levelled off: its fitted loss changes by {100 * abs(e.fall):.1f} % across "
                                     f"the last {span} of the budget, less than {100 * min_fall:.0f} % or within its noise")
    return phrases



def large_batch_runs(problem=None, base_batch: int = 8, base_lr: float = 0.1, k: int = 16, epochs: float = 4.0,
                     warmup_epochs: float = 0.5, seed: int = 0) -> dict:
    """Small batch, and ``k`` times larger batch without scaling, with the linear rule, with the rule and warm-up."""
    problem = training.make_problem(seed=0) if problem is None else problem
    k = check_count("k", k, 1)
    big = base_batch * k
    small_steps = max(1, int(epochs * problem.n_train / base_batch))
    big_steps = max(1, int(epochs * problem.n_train / big))
    warm = int(warmup_epochs * problem.n_train / big)
    return {
        f"batch {base_batch}, rate {base_lr:g}": training.train(problem, base_lr, base_batch, small_steps, seed=seed,
                                                                eval_every=max(1, small_steps // 100)),
        f"batch {big}, rate {base_lr:g} (not scaled)": training.train(problem, base_lr, big, big_steps, seed=seed),
        f"batch {big}, rate {scaling.linear_scaling_lr(base_lr, base_batch, big):g} (linear rule)":
            training.train(problem, base_lr, big, big_steps, seed=seed, base_batch_size=base_batch),
        f"batch {big}, linear rule + {warm}-step warm-up":
            training.train(problem, base_lr, big, big_steps, seed=seed, base_batch_size=base_batch,
                           warmup_steps=warm),
    }



@dataclass(frozen=True)
class WeakScalingCurves:
    """Weak-scaling metrics against the number of GPUs for a fast GPU and one ``slowdown`` times slower.

    ``curves[label]`` holds one :class:`commlib.sgd.scaling.ScalingMetrics` per
    ``ns`` entry; ``t_fast`` is the fast GPU's compute time per step (s).
    """

    model: str
    link: str
    ns: tuple[int, ...]
    batch: int
    t_fast: float
    curves: dict[str, tuple[scaling.ScalingMetrics, ...]]


def weak_scaling_curves(model: str = "resnet50", link: str = "eth_10g", ns=(1, 2, 4, 8, 16, 32, 64),
                        t_fast: float = 0.1, slowdown: float = 3.0, batch: int = 32) -> WeakScalingCurves:
    """:func:`commlib.sgd.scaling.ring_weak_scaling` over ``ns`` GPUs on ``link``, for two GPU speeds.

    The slower GPU computes each step in ``slowdown`` x ``t_fast`` seconds; the
    all-reduce is the same, so it hides a larger share of the step and the slow
    GPU scales *better*, while its throughput stays lower: efficiency alone
    flatters slow hardware. Raises ValueError naming ``slowdown`` unless it is
    > 0 (and as :func:`~commlib.sgd.scaling.ring_weak_scaling` does for the others).

    >>> c = weak_scaling_curves(ns=(1, 16))
    >>> fast, slow = c.curves.values()
    >>> slow[1].efficiency > fast[1].efficiency and slow[1].throughput_many < fast[1].throughput_many
    True
    """
    item = hardware.link(link)
    slowdown = check_positive("slowdown", slowdown)
    ns = tuple(ns)
    curves = {}
    for label, t in (("fast GPU", t_fast), (f"GPU {slowdown:g}x slower", t_fast * slowdown)):
        curves[label] = tuple(scaling.ring_weak_scaling(model, n, item.bandwidth, t, batch, latency=item.latency)
                              for n in ns)
    return WeakScalingCurves(model, link, ns, batch, t_fast, curves)


def sim_summary(protocol, workers, k, compute, slowdown, updates, seed, problem, lr, batch_size,
                gradients: int = 6000, points: int = 60):
    """A timing run of ``updates`` updates and a training run of about ``gradients`` gradients on ``problem``,
    same seed (so the same schedule): what the SGD calculator and sweep of chapter 4 show."""
    workers = check_count("workers", workers, 1)
    if protocol in ("sync", "async"):
        k = None
    else:
        k = check_count("K", k, 1, workers)
    slowdown = check_positive("straggler factor", slowdown)
    if slowdown < 1:
        raise ValueError(f"straggler factor must be >= 1 (1 = no straggler), got {slowdown}")
    if slowdown > 1:
        params = {"base": compute, "slowdown": slowdown}
        law = "straggler"
    else:
        params, law = {}, compute
    timing = sgd.simulate(protocol, workers, k=k, compute=law, updates=updates, seed=seed, **params)
    # the same seed gives the same schedule (a longer run begins with the shorter one): train for as many updates
    # as take about ``gradients`` gradients, whatever the timing run's length
    u_train = max(1, gradients // max(1, timing.k))
    trained = sgd.simulate(protocol, workers, k=k, compute=law, updates=u_train, seed=seed, problem=problem, lr=lr,
                           batch_size=batch_size, eval_every=max(1, u_train // points), **params)
    return timing, trained



# --------------------------------------------------------------------------- Dutta et al.'s central result

#: The compute-time laws of the update-time table and of the error-against-time runs (seconds, 1/s):
#: Dutta et al.'s shifted exponential (a minimum time plus an exponential tail) and a heavy-tailed Pareto.
UPDATE_TIME_LAWS = {
    "exponential": {"rate": 1.0},
    "shifted_exponential": {"shift": 1.0, "rate": 1.0},
    "pareto": {"shape": 2.5, "scale": 1.0},
}


def closed_form_update_time(protocol: str, workers: int, k: int | None, distribution: str, **params) -> float | None:
    r"""Expected wall-clock time (s) per update where a closed form exists, else ``None``.

    * ``sync`` and ``k_sync``: every learner restarts on fresh parameters, so an
      update waits for the ``K``-th fastest of ``P`` fresh times,
      :math:`\mathbb{E}[X_{K:P}]`, for any i.i.d. law;
    * ``async`` and ``k_batch_async``: nobody waits, each learner is a renewal
      process of rate :math:`1/\mathbb{E}[X]`, so ``K`` gradients arrive every
      :math:`K\,\mathbb{E}[X]/P` in the long run, for any law (``K = 1`` for async);
    * ``k_async`` and ``k_batch_sync``: exact only for exponential times
      (memoryless residuals: :func:`commlib.sgd.simulate.expected_update_time`); for
      other laws the residual times of the busy learners are not fresh draws,
      and Dutta et al. (2018) give bounds only, so ``None``.

    >>> round(closed_form_update_time("k_sync", 16, 4, "shifted_exponential", shift=1.0, rate=1.0), 3)
    1.278
    >>> closed_form_update_time("k_batch_async", 16, 4, "shifted_exponential", shift=1.0, rate=1.0)
    0.5
    >>> closed_form_update_time("k_async", 16, 4, "pareto") is None
    True
    """
    K = {"sync": workers, "async": 1}.get(protocol, k)
    if distribution == "exponential":
        return sgd.expected_update_time(protocol, workers, k, rate=params.get("rate", 1.0))
    if protocol in ("sync", "k_sync"):
        return sgd.expected_order_statistic(K, workers, distribution, **params)
    if protocol in ("async", "k_batch_async"):
        return K * sgd.expected_value(distribution, **params) / workers
    return None


def law_mean_times(laws: dict | None = None) -> dict[str, float]:
    """Each law's mean compute time :math:`E[X]` (s), the unit in which the chapter compares laws.

    ``laws``: ``{law: parameters}``, :data:`UPDATE_TIME_LAWS` by default.

    >>> {law: round(m, 3) for law, m in law_mean_times().items()}
    {'exponential': 1.0, 'shifted_exponential': 2.0, 'pareto': 1.667}
    """
    laws = UPDATE_TIME_LAWS if laws is None else laws
    return {law: sgd.expected_value(law, **params) for law, params in laws.items()}


def update_time_rows(workers: int = 16, k: int = 4, laws: dict | None = None, updates: int = 20_000,
                     seed: int = 0) -> list[dict]:
    """Expected time per update of all six protocols under each law: closed form (or ``None``) and simulation.

    One row per protocol, with keys ``"protocol"`` (reader label) and, for each law,
    ``"<law> closed"`` and ``"<law> simulated"`` (seconds per update, ``updates`` updates simulated).
    """
    workers = check_count("workers", workers, 2)
    k = check_count("k", k, 1, workers)
    laws = UPDATE_TIME_LAWS if laws is None else laws
    rows = []
    for protocol in sgd.PROTOCOLS:
        kk = None if protocol in ("sync", "async") else k
        row = {"protocol": protocol_label(protocol, workers, kk), "key": protocol}
        for law, params in laws.items():
            row[f"{law} closed"] = closed_form_update_time(protocol, workers, kk, law, **params)
            row[f"{law} simulated"] = sgd.simulate(protocol, workers, k=kk, compute=law, updates=updates, seed=seed,
                                                   **params).mean_time_per_update
        rows.append(row)
    return rows


def law_time_runs(configs, workers: int, budget: float, compute: str = "shifted_exponential", params: dict | None = None,
                  problem=None, seed: int = 0, points: int = 80, **kwargs) -> dict:
    """Like :func:`equal_time_runs`, for any compute-time law: each ``(protocol, k)`` trains for ``budget`` seconds.

    The number of updates that fit in the budget is read from a timing run of the same seed
    (the same schedule: each learner's ``j``-th job takes the same time whatever is trained).
    """
    budget = check_positive("budget", budget)
    params = dict(UPDATE_TIME_LAWS.get(compute, {})) if params is None else dict(params)
    problem = training.make_problem(seed=0) if problem is None else problem
    out = {}
    for protocol, k in configs:
        guess = closed_form_update_time(protocol, workers, k, compute, **params) or 0.5
        timing = sgd.simulate(protocol, workers, k=k, compute=compute, updates=int(2 * budget / guess) + 10,
                              seed=seed, **params)
        u = max(1, int(np.searchsorted(timing.times, budget, side="right")))
        out[protocol_label(protocol, workers, k)] = sgd.simulate(
            protocol, workers, k=k, compute=compute, updates=u, seed=seed, problem=problem,
            eval_every=max(1, u // points), **params, **kwargs)
    return out


def repeat_shares(law: str, workers: int = 16, ks=(4, 8), updates: int = 200_000, seed: int = 1) -> dict[int, float]:
    """For each K of ``ks``: the share of ``updates`` K-batch-sync updates under ``law`` (parameters
    :data:`UPDATE_TIME_LAWS`) to which one learner gave two or more mini-batches (:func:`repeat_share`)."""
    params = UPDATE_TIME_LAWS[law] if law in UPDATE_TIME_LAWS else {}
    return {K: repeat_share(sgd.schedule("k_batch_sync", workers, K, law, updates, seed, **params)) for K in ks}


def repeat_words(counts: dict[str, int], updates: int) -> str:
    """How often a second mini-batch from one learner entered an update: ``counts`` maps a law's name to the
    number of such updates among ``updates`` simulated ones.

    >>> repeat_words({"the shifted exponential": 0, "Pareto": 0}, 20000)
    'in none of 20,000 simulated updates under either law'
    >>> repeat_words({"the shifted exponential": 1, "Pareto": 0}, 20000)
    'in 1 (the shifted exponential) and 0 (Pareto) of 20,000 simulated updates'
    """
    if not any(counts.values()):
        which = "either law" if len(counts) == 2 else "any law"
        return f"in none of {updates:,} simulated updates under {which}"
    return f"in {_and([f'{c} ({law})' for law, c in counts.items()])} of {updates:,} simulated updates"


def remaining_work(law: str, workers: int = 16, k: int = 4, rounds: int = 4000, seed: int = 0) -> dict[str, float]:
    """What K-sync cancels: in each round ``workers`` learners start fresh jobs under ``law`` and the ``k``-th
    finish ends the round. Returns the mean time of that finish (``"elapsed"``), the mean time a job still
    running then would still need (``"remaining"``) and the mean of a fresh job (``"fresh"``), all in seconds.

    Under the shifted exponential every running job is past its minimum by then and needs an exponential rest
    (memoryless), half a fresh job's mean; under Pareto a job that has run ``t`` needs ``t/(shape - 1)`` more on
    average, more the longer it has run.

    >>> w = remaining_work("exponential", workers=8, k=2, rounds=2000)
    >>> abs(w["remaining"] / w["fresh"] - 1) < 0.1          # memoryless: the rest is a fresh job
    True
    """
    workers = check_count("workers", workers, 2)
    k = check_count("k", k, 1, workers - 1)
    params = UPDATE_TIME_LAWS[law] if law in UPDATE_TIME_LAWS else {}
    run = sgd.simulate("sync", workers, compute=law, updates=check_count("rounds", rounds, 1), seed=seed,
                       record_jobs=True, **params)
    d = np.array([j.end - j.start for j in run.jobs if j.status == "applied"]).reshape(rounds, workers)
    t_k = np.sort(d, axis=1)[:, k - 1:k]
    rest = (d - t_k)[d > t_k]
    return {"elapsed": float(t_k.mean()), "remaining": float(rest.mean()), "fresh": float(d.mean())}


def remaining_work_closed(law: str, workers: int = 16, k: int = 4) -> dict[str, float]:
    r"""The closed forms of :func:`remaining_work` (s), from the order statistics of ``workers`` i.i.d. times:
    ``"elapsed"`` :math:`\mathbb{E}[X_{k:n}]`, ``"remaining"`` the mean over the :math:`n - k` jobs still running of
    :math:`\mathbb{E}[X_{j:n}] - \mathbb{E}[X_{k:n}]`, ``"fresh"`` :math:`\mathbb{E}[X]`.

    >>> w = remaining_work_closed("shifted_exponential", k=8)
    >>> round(w["elapsed"], 3), round(w["remaining"], 3), round(w["fresh"], 3)    # 1 + H_16 - H_8; memoryless: 1/mu
    (1.663, 1.0, 2.0)
    """
    workers = check_count("workers", workers, 2)
    k = check_count("k", k, 1, workers - 1)
    params = UPDATE_TIME_LAWS[law] if law in UPDATE_TIME_LAWS else {}
    elapsed = sgd.expected_order_statistic(k, workers, law, **params)
    later = [sgd.expected_order_statistic(j, workers, law, **params) for j in range(k + 1, workers + 1)]
    return {"elapsed": elapsed, "remaining": sum(later) / len(later) - elapsed,
            "fresh": sgd.expected_value(law, **params)}


def kept_work_left(run, burn: int = 0) -> float:
    """In a run recorded with ``record_jobs=True``: the mean time (s) a job still running at an update needs to finish,
    over every update after the first ``burn`` and every job running then (started before it, ending after it).

    In K-async those are the jobs the update keeps; after the first updates they are not fresh: they survived the
    rounds before, so under a law whose long jobs get longer (Pareto) they are the slow ones.

    >>> from commlib.sgd import simulate as sgd
    >>> r = sgd.simulate("k_async", 8, k=2, compute="exponential", updates=3000, seed=0, record_jobs=True)
    >>> abs(kept_work_left(r, burn=300) - 1.0) < 0.1       # memoryless: a running job needs a fresh job's mean
    True
    """
    if run.jobs is None:
        raise ValueError("run must be simulated with record_jobs=True")
    burn = check_count("burn", burn, 0, len(run.times) - 1)
    return _kept_left(run.times, np.array([j.start for j in run.jobs]), np.array([j.end for j in run.jobs]), burn)


def _kept_left(times, start: np.ndarray, end: np.ndarray, burn: int) -> float:
    """:func:`kept_work_left` from the update ``times`` and the jobs' ``start`` and ``end`` (s), one entry a job."""
    times = np.asarray(times)[burn:]
    lo, hi = np.searchsorted(times, start, side="right"), np.searchsorted(times, end, side="left")
    count = np.clip(hi - lo, 0, None)
    cum = np.concatenate([[0.0], np.cumsum(times)])
    left = np.where(count > 0, count * end - (cum[np.maximum(hi, lo)] - cum[lo]), 0.0)
    return float(left.sum() / count.sum())


#: The compute-time laws whose K-async and K-sync the chapter sets side by side: the three of the time-per-update
#: table and the heavier Pareto law of the barrier table (tail index 1.5, minimum 1 s).
KEEP_LAWS = {**{law: (law, params) for law, params in UPDATE_TIME_LAWS.items()},
             "pareto_heavy": ("pareto", {"shape": 1.5, "scale": 1.0})}


#: Two mean times per update closer than this share of K-sync's are "about as fast" (:class:`KeepRow`): five seeds
#: of a few thousand updates do not tell apart smaller gaps, and under exponential times, where the two protocols
#: run the same schedule in law, the gap is below it.
KEEP_TOL = 0.02


@dataclass(frozen=True)
class KeepRow:
    """K-async (keeps the running work) against K-sync (cancels it) under one law at one ``k``, ``workers`` learners.

    Times in seconds per update, one entry a seed: ``keep`` K-async's, ``cancel`` K-sync's (simulated, the same
    schedules); ``cancel_closed`` K-sync's closed form :math:`\\mathbb{E}[X_{K:n}]`; ``kept_left`` the mean time a job
    K-async keeps still needs (:func:`kept_work_left`), ``fresh`` a fresh job's mean :math:`\\mathbb{E}[X]`.
    ``verdict``: ``"pays"`` where K-async is faster on every seed than K-sync on any and its mean time at least
    :data:`KEEP_TOL` shorter, ``"loses"`` the same way slower, ``"level"`` otherwise (about as fast)."""

    law: str
    k: int
    keep: tuple[float, ...]
    cancel: tuple[float, ...]
    cancel_closed: float
    kept_left: tuple[float, ...]
    fresh: float

    @property
    def verdict(self) -> str:
        gap = statistics.fmean(self.keep) / statistics.fmean(self.cancel) - 1
        if max(self.keep) < min(self.cancel) and gap <= -KEEP_TOL:
            return "pays"
        if min(self.keep) > max(self.cancel) and gap >= KEEP_TOL:
            return "loses"
        return "level"


def keep_or_cancel(law: str, k: int, workers: int = 16, updates: int = 8000, seeds=(0, 1, 2, 3, 4)) -> KeepRow:
    """Does keeping the running work make updates faster? K-async against K-sync under ``law`` (a key of
    :data:`KEEP_LAWS`) at ``k``, each run for ``updates`` updates on each of ``seeds`` (the first tenth of K-async's
    updates left out of ``kept_left``, before the kept jobs reach their steady state).

    No rule in words decides it: a minimum compute time is not enough. Under the heavier Pareto law the jobs
    K-async keeps have run long, and a Pareto job that has run ``t`` needs ``t/(shape - 1)`` more on average.

    >>> keep_or_cancel("shifted_exponential", 8, updates=2000, seeds=(0,)).verdict
    'pays'
    >>> keep_or_cancel("pareto_heavy", 12, updates=2000, seeds=(0,)).verdict
    'loses'
    """
    if law not in KEEP_LAWS:
        raise ValueError(f"law must be one of {sorted(KEEP_LAWS)}, got {law!r}")
    workers = check_count("workers", workers, 2)
    k = check_count("k", k, 1, workers)
    updates = check_count("updates", updates, 10)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    keep, left, cancel = zip(*(_keep_seed(law, k, workers, updates, check_count("seed", seed, 0))
                               for seed in seeds))
    compute, params = KEEP_LAWS[law]
    return KeepRow(law, k, keep, cancel, sgd.expected_order_statistic(k, workers, compute, **params), left,
                   sgd.expected_value(compute, **params))


@functools.cache
def _keep_seed(law: str, k: int, workers: int, updates: int, seed: int) -> tuple[float, float, float]:
    """One seed of :func:`keep_or_cancel`: K-async's time per update and kept work left, K-sync's time per update.
    Kept for the process: the chapter asks for the same seed at a law's best K twice (:func:`keep_rows`,
    :func:`kept_at_best`)."""
    compute, params = KEEP_LAWS[law]
    run, start, end = sgd.job_spans("k_async", workers, k=k, compute=compute, updates=updates, seed=seed, **params)
    cancel = sgd.simulate("k_sync", workers, k=k, compute=compute, updates=updates, seed=seed, **params)
    return run.mean_time_per_update, _kept_left(run.times, start, end, updates // 10), cancel.mean_time_per_update


def keep_rows(laws=tuple(KEEP_LAWS), ks=(4, 8, 12), workers: int = 16, updates: int = 8000,
              seeds=(0, 1, 2, 3, 4)) -> list[KeepRow]:
    """:func:`keep_or_cancel` for every law of ``laws`` at every K of ``ks``, law by law."""
    return [keep_or_cancel(law, k, workers, updates, seeds) for law in laws for k in ks]


_KEEP_WORDS = {"pays": "faster", "level": "about as fast", "loses": "slower"}


def _runs_words(ks: list[int], verdicts: list[str]) -> str:
    """The verdicts of one law along ``ks`` (ascending) in few numbers: runs of one verdict as "up to", "from ... on"."""
    runs: list[tuple[str, list[int]]] = []
    for k, v in zip(ks, verdicts):
        if runs and runs[-1][0] == v:
            runs[-1][1].append(k)
        else:
            runs.append((v, [k]))
    if len(runs) == 1:
        return f"{_KEEP_WORDS[runs[0][0]]} at every $K$ tried"
    parts = []
    for i, (v, run) in enumerate(runs):
        if len(run) == 1:
            where = f"$K$ = {run[0]}" if i == 0 else f"{run[0]}"
        elif i == 0:
            where = f"for $K$ up to {run[-1]}"
        elif i == len(runs) - 1:
            where = f"from {run[0]} on"
        else:
            where = f"{run[0]} to {run[-1]}"
        parts.append(f"{_KEEP_WORDS[v]} {'at ' if not where.startswith(('from', 'for')) else ''}{where}")
    return _and(parts)


def keep_pays_words(rows: list[KeepRow], names: dict[str, str]) -> str:
    """Where keeping the running work makes updates faster, law by law, read off ``rows`` (:func:`keep_rows`);
    ``names`` maps a law's key to its name in prose. One clause a law, naming the K where K-async is faster than
    K-sync, about as fast (the seeds' spans overlap) or slower, with as few numbers as the pattern allows.

    >>> r = [KeepRow("a", k, (t,), (2.0,), 2.0, (1.0,), 2.0) for k, t in ((4, 1.0), (8, 1.0), (12, 3.0))]
    >>> keep_pays_words(r + [KeepRow("b", 4, (1.0,), (2.0,), 2.0, (1.0,), 2.0)], {"a": "law A", "b": "law B"})
    'keeping the running work makes updates faster for $K$ up to 8 and slower at 12 under law A; faster at every $K$ tried under law B'
    """
    clauses = []
    for law in dict.fromkeys(r.law for r in rows):
        mine = sorted((r for r in rows if r.law == law), key=lambda r: r.k)
        clauses.append(f"{_runs_words([r.k for r in mine], [r.verdict for r in mine])} under {names[law]}")
    return "keeping the running work makes updates " + "; ".join(clauses)


def has_minimum(law: str) -> bool:
    """Whether a law of :data:`KEEP_LAWS` has a minimum compute time above zero (the exponential has none).

    >>> [law for law in KEEP_LAWS if has_minimum(law)]
    ['shifted_exponential', 'pareto', 'pareto_heavy']
    """
    compute, params = KEEP_LAWS[law]
    return compute == "pareto" or (compute == "shifted_exponential" and params.get("shift", 0.0) > 0)


def minimum_not_enough(rows: list[KeepRow], names: dict[str, str], raced=()) -> str:
    """A sentence from ``rows``: is a minimum compute time enough for keeping the work to make updates faster at a
    fixed K? Names the laws with a minimum under which K-async updates more slowly than K-sync at some K, or says
    none did; ``""`` without rows for a law with a minimum. That is time per update, not time to a target: the laws
    among them not in ``raced`` (keys of :data:`KEEP_LAWS` whose race to a target was run) are said not to be raced.

    >>> r = [KeepRow("pareto_heavy", k, (t,), (2.0,), 2.0, (9.0,), 3.0) for k, t in ((4, 1.0), (8, 3.0))]
    >>> minimum_not_enough(r, {"pareto_heavy": "the heavier Pareto law"})[93:]
    'the heavier Pareto law has one, and there K-async updates more slowly than K-sync at $K$ = 8; that law was not raced'
    """
    with_min = [r for r in rows if has_minimum(r.law)]
    if not with_min:
        return ""
    losing = {law: [r.k for r in with_min if r.law == law and r.verdict == "loses"] for law in
              dict.fromkeys(r.law for r in with_min)}
    losing = {law: ks for law, ks in losing.items() if ks}
    if not losing:
        return ("Under every law with a minimum compute time tried here, K-async updates at least about as fast as "
                "K-sync at every $K$ tried")
    where = _and([f"under {names[law]} at $K$ = {_and([str(k) for k in ks])}" for law, ks in losing.items()])
    one = len(losing) == 1
    unraced = [law for law in losing if law not in raced]
    note = ("" if not unraced else
            f"; {'that law was' if one else _and([names[law] for law in unraced]) + (' was' if len(unraced) == 1 else ' were')}"
            " not raced")
    return (f"A minimum compute time alone does not make keeping the work speed up updates at a fixed $K$: "
            f"{_and([names[law] for law in losing])} {'has one' if one else 'have one'}, and there K-async updates "
            "more slowly than K-sync "
            + (f"at $K$ = {_and([str(k) for k in next(iter(losing.values()))])}" if one else where) + note)


def kept_left_text(row: KeepRow) -> str:
    """The mean time (s) a job K-async keeps still needs, over the seeds of ``row``, as "mean ± sd", quoted no finer
    than the spread across seeds (under Pareto with a tail index of 3 or less the estimate has infinite variance, so
    it settles slowly: quote it over many seeds).

    >>> kept_left_text(KeepRow("a", 12, (1.7, 1.7), (1.7, 1.7), 1.7, (1.6, 2.5), 1.667))
    '2.0 ± 0.6'
    """
    mean, sd = grids.mean_sd(row.kept_left)
    return grids.spread_text(mean, sd) if sd > 0 else f"{mean:.3g}"


def kept_state_words(row: KeepRow, name: str, numbers: bool = True) -> str:
    """What the jobs K-async keeps still need in its steady state, against a fresh job, and what that K-async's
    time per update did, for one row of :func:`keep_rows` (seconds, mean ± sd over the row's seeds; the comparison
    with a fresh job counted seed by seed). ``numbers=False`` leaves out the seconds, for prose under a table that
    shows them.

    >>> kept_state_words(KeepRow("a", 12, (1.70, 1.70), (1.70, 1.70), 1.70, (1.85, 1.80), 1.667), "Pareto").split(", ")
    ... # doctest: +NORMALIZE_WHITESPACE
    ['under Pareto a kept job still needs 1.83 ± 0.04 s', 'more than a fresh job (1.667 s) on both seeds',
     'and K-async updates about as fast as K-sync']
    >>> kept_state_words(KeepRow("a", 12, (1.70, 1.70), (1.70, 1.70), 1.70, (1.85, 1.60), 1.667), "P", numbers=False)
    'under P a kept job still needs more than a fresh job on 1 of 2 seeds, and K-async updates about as fast as K-sync'
    """
    n = len(row.kept_left)
    more = sum(x > row.fresh for x in row.kept_left)
    every = "on both seeds" if n == 2 else "on every seed" if n != 1 else "on its one seed"
    fresh = f"a fresh job ({row.fresh:.3f} s)" if numbers else "a fresh job"
    if more == n:
        cmp = f"more than {fresh} {every}"
    elif more == 0:
        cmp = f"less than {fresh} {every}"
    elif 2 * more >= n:
        cmp = f"more than {fresh} on {more} of {n} seeds"
    else:
        cmp = f"less than {fresh} on {n - more} of {n} seeds"
    act = {"pays": "updates faster than", "level": "updates about as fast as", "loses": "updates more slowly than"}
    needs = f"{kept_left_text(row)} s, {cmp}" if numbers else cmp
    return f"under {name} a kept job still needs {needs}, and K-async {act[row.verdict]} K-sync"


def law_spread(law: str, **params) -> float:
    r"""A law's spread relative to its mean, the coefficient of variation :math:`\sigma/\mathbb{E}[X]`; ``inf``
    where the variance is infinite (Pareto with tail index 2 or less). It does not depend on the time unit.

    >>> [round(law_spread(*x[:1], **x[1]), 3) for x in (("exponential", {"rate": 2.0}),
    ...     ("shifted_exponential", {"shift": 1.0, "rate": 1.0}), ("pareto", {"shape": 2.5, "scale": 1.0}))]
    [1.0, 0.5, 0.894]
    >>> law_spread("pareto", shape=1.5, scale=1.0)
    inf
    """
    if law == "exponential":
        return 1.0
    if law == "shifted_exponential":
        rest = 1.0 / check_positive("rate", params["rate"])
        return rest / (params.get("shift", 0.0) + rest)
    if law == "pareto":
        a = check_positive("shape", params["shape"])
        return math.inf if a <= 2 else 1.0 / math.sqrt(a * (a - 2))
    raise ValueError(f"law must be 'exponential', 'shifted_exponential' or 'pareto', got {law!r}")


def pareto_tail_against_exponential(shape: float, at: float = 10.0) -> dict[str, float]:
    r"""Where a Pareto law's tail rises above an exponential's of the same mean, both in units of that mean.

    In units of the mean :math:`m = \alpha x_m/(\alpha - 1)`, :math:`P(X > u\,m) = (u\,m/x_m)^{-\alpha}` against
    :math:`e^{-u}`: the power law lies above far out, below over a middle stretch (it has less spread there). Returns
    ``"beyond"``, the ``u`` past which the Pareto tail stays above, and ``"ratio"``, how many times likelier a time
    above ``at`` mean compute times is under Pareto. The minimum :math:`x_m` drops out.

    >>> t = pareto_tail_against_exponential(2.5)
    >>> round(t["beyond"], 2), round(t["ratio"])
    (5.57, 19)
    """
    a = check_positive("shape", shape)
    if a <= 1:
        raise ValueError(f"shape must exceed 1 (a finite mean), got {shape!r}")
    at = check_positive("at", at)
    m = a / (a - 1)                                 # the mean in units of the minimum

    def g(u):                                       # > 0 where the Pareto tail is above
        return u - a * math.log(u * m)

    lo, hi = max(a, 1 / m), max(a, 1 / m) * 2
    while g(hi) <= 0:
        hi *= 2
    if g(lo) > 0:
        beyond = 1 / m
    else:
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if g(mid) <= 0 else (lo, mid)
        beyond = hi
    tail = (at * m) ** -a if at * m >= 1 else 1.0
    return {"beyond": beyond, "ratio": tail / math.exp(-at)}


def repeat_share(run) -> float:
    """Share of a K-batch run's updates to which one learner gave two or more mini-batches.

    0 means every update took ``K`` distinct learners' first mini-batches, exactly as K-sync does.
    """
    c = np.sort(np.asarray(run.contributors), axis=1)
    return float(np.mean((np.diff(c, axis=1) == 0).any(axis=1)))


def warmup_rows(ks=(16, 32, 64, 128, 256), base_batch: int = 8, base_lr: float = 0.1, epochs: float = 4.0,
                warmup_steps: int = 3, seed: int = 0, problem=None, small_loss: float | None = None) -> dict:
    """Where the linear scaling rule breaks, and what warm-up buys: final losses at equal epochs.

    For each ``k``: batch ``k * base_batch`` at rate ``k * base_lr`` for ``epochs`` passes, without and
    with a ``warmup_steps``-step linear warm-up from ``base_lr`` (Goyal et al. 2017), against the small
    batch (``small_loss``: its final loss if already trained, e.g. by :func:`large_batch_runs`).
    Returns ``{"small": loss, "rows": [{"k", "rate", "steps", "no warm-up", "warm-up"}, ...]}`` (nats).
    On the chapters' problem (``problem`` None) the losses are trained once per version of the code and kept on
    disk (:func:`~commlib.experiments.claims.cached`).
    """
    warmup_steps = check_count("warmup_steps", warmup_steps, 1)
    ks = tuple(check_count("k", k, 1) for k in ks)
    if problem is None:
        from .. import claims

        args = (ks, base_batch, base_lr, epochs, warmup_steps, seed, small_loss)
        name = "warmup-rows-" + hashlib.sha256(repr(args).encode()).hexdigest()[:20]
        flat = claims.cached(name, lambda: _flat_warmup_rows(_warmup_rows(
            ks, base_batch, base_lr, epochs, warmup_steps, seed, training.make_problem(seed=0), small_loss)))
        rows = [{"k": int(k), "rate": rate, "steps": int(steps), "no warm-up": plain, "warm-up": warm}
                for k, rate, steps, plain, warm in zip(*(iter(flat[1:]),) * 5)]
        return {"small": flat[0], "rows": rows, "warmup_steps": warmup_steps}
    return _warmup_rows(ks, base_batch, base_lr, epochs, warmup_steps, seed, problem, small_loss)


def _flat_warmup_rows(result: dict) -> list[float]:
    """:func:`warmup_rows`' result as numbers: the small batch's loss, then k, rate, steps and both losses per row."""
    return [result["small"]] + [float(r[key]) for r in result["rows"]
                                for key in ("k", "rate", "steps", "no warm-up", "warm-up")]


def _warmup_rows(ks, base_batch, base_lr, epochs, warmup_steps, seed, problem, small_loss) -> dict:
    """:func:`warmup_rows` trained on ``problem``."""
    if small_loss is None:
        steps = max(1, int(epochs * problem.n_train / base_batch))
        small_loss = float(training.train(problem, base_lr, base_batch, steps, seed=seed, eval_every=steps).losses[-1])
    rows = []
    for k in ks:
        k = check_count("k", k, 1)
        big = base_batch * k
        steps = max(1, int(epochs * problem.n_train / big))
        plain = training.train(problem, base_lr, big, steps, seed=seed, base_batch_size=base_batch, eval_every=steps)
        warm = training.train(problem, base_lr, big, steps, seed=seed, base_batch_size=base_batch,
                              warmup_steps=min(warmup_steps, steps), eval_every=steps)
        rows.append({"k": k, "rate": scaling.linear_scaling_lr(base_lr, base_batch, big), "steps": steps,
                     "no warm-up": float(plain.losses[-1]), "warm-up": float(warm.losses[-1])})
    return {"small": float(small_loss), "rows": rows, "warmup_steps": warmup_steps}


def warmup_phrases(result: dict, tol: float = 0.02) -> dict[str, str]:
    """Markdown phrases for :func:`warmup_rows`, chosen from its numbers.

    A run *matches* the small batch if its final loss is within ``tol`` (relative). Keys:
    ``"holds"`` (the largest k up to which the plain rule matches), ``"breaks"`` (the first k where it
    does not, with both losses), ``"buys"`` (what warm-up does there and beyond).
    """
    small, rows, w = result["small"], result["rows"], result["warmup_steps"]
    ok = [r for r in rows if r["no warm-up"] <= small * (1 + tol)]
    bad = [r for r in rows if r["no warm-up"] > small * (1 + tol)]
    either = all(r["warm-up"] <= small * (1 + tol) for r in ok)
    out = {"holds": (f"up to $\\nu = {ok[-1]['k']}$ (rate {ok[-1]['rate']:g}) the linear rule ends within "
                     f"{100 * tol:.0f} % of the small batch's {small:.3f} nats" + (", warm-up or not" if either else "")
                     if ok and (not bad or ok[-1]["k"] < bad[0]["k"]) else
                     f"the linear rule never ends within {100 * tol:.0f} % of the small batch's {small:.3f} nats")}
    if not bad:
        out["breaks"] = "it does not break for any $\\nu$ tried"
        out["buys"] = "warm-up is not needed for any $\\nu$ tried"
        return out
    b = bad[0]
    out["breaks"] = (f"at $\\nu = {b['k']}$ (rate {b['rate']:g}, {b['steps']} steps) it ends at {b['no warm-up']:.3f} "
                     f"nats without warm-up and {b['warm-up']:.3f} with a {w}-step warm-up")
    helped = [r for r in bad if r["warm-up"] < r["no warm-up"] * (1 - tol)]
    hurt = [r for r in bad if r["warm-up"] > r["no warm-up"] * (1 + tol)]
    parts = []
    if helped:
        h = helped[0]
        share = 100 * (h["no warm-up"] - h["warm-up"]) / (h["no warm-up"] - small)
        parts.append(f"at $\\nu = {h['k']}$ warm-up closes {share:.0f} % of the gap to the small batch")
    if hurt:
        h = hurt[0]
        parts.append(f"at $\\nu = {h['k']}$ ({h['steps']} steps in all) it makes things worse, {h['warm-up']:.3f} "
                     f"nats against {h['no warm-up']:.3f} without")
    if not helped:
        parts.insert(0, "warm-up does not rescue any $\\nu$ where the rule breaks")
    out["buys"] = "; ".join(parts)
    return out




# --------------------------------------------------------------------------- the K sweep (staleness and error per K)


@dataclass(frozen=True)
class KSweepPoint:
    """One K of :func:`k_sweep_runs`: the protocol actually run, its timing run and its training run."""

    k: int
    protocol: str
    timing: sgd.SimResult
    trained: sgd.SimResult
    rate: float | None = None       #: the learning rate the training run used, where it was tuned for this K




@dataclass(frozen=True)
class KSweep:
    """The runs of :func:`k_sweep_runs`, one point per K, for ``workers`` learners under ``protocol``."""

    protocol: str
    workers: int
    points: tuple[KSweepPoint, ...]
    budget: float | None = None     #: the wall-clock budget every training run shares (mean compute times), if one


def k_sweep_runs(protocol: str = "k_async", workers: int = 16, ks=(1, 2, 4, 8, 16), updates: int = 600, seed: int = 0,
                 gradients: int = 1600, problem=None) -> KSweep:
    """For each K: a timing run of ``updates`` updates and a training run of about ``gradients`` gradients, all at
    one rate, 0.5 (so not a comparison of the K: for that, each K at its own rate on one wall-clock budget, see
    :func:`commlib.experiments.sgd.tuned_races.k_sweep_tuned`).

    K = 1 is asynchronous SGD and K = ``workers`` fully synchronous SGD (the two
    ends of the K family); the K in between run ``protocol``. Both runs of a K
    share the seed, so the training run replays the timing run's schedule
    (:func:`sim_summary`; exponential compute times, no straggler, rate 0.5,
    batch 8, the chapter's problem unless ``problem`` is given). Raises
    ValueError naming ``ks`` when it is empty, ``K`` when one lies outside
    1..``workers``.

    >>> sweep = k_sweep_runs(workers=4, ks=(1, 2, 4), updates=50, gradients=40)
    >>> [(p.k, p.protocol) for p in sweep.points]
    [(1, 'async'), (2, 'k_async'), (4, 'sync')]
    """
    workers = check_count("workers", workers, 1)
    ks = [check_count("K", K, 1, workers) for K in ks]
    if not ks:
        raise ValueError("ks must hold at least one K in 1..workers")
    problem = training.make_problem(seed=0) if problem is None else problem
    points = []
    for K in ks:
        proto = "async" if K == 1 else ("sync" if K == workers else protocol)
        timing, trained = sim_summary(proto, workers, K, "exponential", 1.0, updates, seed, problem, 0.5, 8, gradients)
        points.append(KSweepPoint(K, proto, timing, trained))
    return KSweep(protocol, workers, tuple(points))
