"""Experiments of chapter 4 (synchronous and asynchronous SGD): the runs the chapter glues and plots.

Model layer: each function runs :mod:`commlib.sgd`, :mod:`commlib.training`
or :mod:`commlib.scaling` and returns results; the figures in
:mod:`commlib.views.sync_async` take these results as input.
"""

from __future__ import annotations

import math

import numpy as np

from .. import scaling, sgd, training
from ..units import check_count, check_positive
from .summaries import RunEnd, protocol_label, tail_mean

__all__ = [
    "runtime_ratio_rows",
    "RUNTIME_RATIO_LAWS",
    "STRAGGLER_LAW",
    "equal_time_runs",
    "k_tradeoff_runs",
    "k_tradeoff_phrases",
    "large_batch_runs",
    "sim_summary",
]


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



#: The compute-time laws of :func:`runtime_ratio_figure` and their parameters (seconds, 1/s).
RUNTIME_RATIO_LAWS = {
    "exponential": {"rate": 1.0},
    "shifted_exponential": {"shift": 1.0, "rate": 1.0},
    "pareto": {"shape": 2.5, "scale": 1.0},
}


#: One slow node: learner 0's exponential compute times are ``slowdown`` times longer, persistently
#: (:func:`commlib.sgd.simulate` with ``compute="straggler"``). Not i.i.d., so no closed form: simulated only.
STRAGGLER_LAW = {"base": "exponential", "slowdown": 4.0}


def equal_time_runs(configs, workers: int, budget: float, problem=None, seed: int = 0, points: int = 80,
                    **kwargs) -> dict:
    """Run each ``(protocol, k)`` in ``configs`` for about ``budget`` seconds of simulated wall clock.

    The number of updates is ``budget`` / the expected time per update
    (:func:`commlib.sgd.expected_update_time`, exponential compute of rate 1),
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
                    seed: int = 0, **kwargs) -> dict:
    """Runs of :func:`equal_time_runs` for several K (K = 1 asynchronous, K = ``workers`` fully synchronous).

    :func:`~commlib.experiments.summaries.run_ends` and
    :func:`k_tradeoff_phrases` describe how each run ends, from the runs
    themselves.
    """
    configs = [(protocol if 1 < K < workers else ("async" if K == 1 else "sync"), None if K in (1, workers) else K)
               for K in ks]
    return equal_time_runs(configs, workers, budget, seed=seed, **kwargs)


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



def sim_summary(protocol, workers, k, compute, slowdown, updates, seed, problem, lr, batch_size,
                gradients: int = 6000):
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
    # the same seed gives the same schedule; train for as many updates as fit in the same number of gradients
    u_train = max(1, min(updates, gradients // max(1, timing.k)))
    trained = sgd.simulate(protocol, workers, k=k, compute=law, updates=u_train, seed=seed, problem=problem, lr=lr,
                           batch_size=batch_size, eval_every=max(1, u_train // 60), **params)
    return timing, trained



# ------------------------------------------------------------------ time per update, six protocols
#: The compute-time laws of the six-protocol comparison: Dutta et al.'s shifted exponential and a
#: heavy tail, next to the memoryless exponential.
UPDATE_TIME_LAWS = {
    "exponential": {"rate": 1.0},
    "shifted_exponential": {"shift": 1.0, "rate": 1.0},
    "pareto": {"shape": 2.5, "scale": 1.0},
}


def update_time_closed_form(protocol: str, workers: int, k: int | None, distribution: str, **params) -> float | None:
    r"""Expected wall-clock time per update where a closed form exists, else ``None``.

    * sync and K-sync restart every learner at each update, so an update waits
      for the :math:`K`-th fastest of :math:`n` fresh draws: :math:`E[X_{K:n}]`
      (:func:`commlib.sgd.expected_order_statistic`; :math:`K = n` for sync);
    * async and K-batch-async never cancel work: each learner is a renewal
      process producing a gradient every :math:`E[X]` on average, so in the
      long run the PS receives :math:`n/E[X]` gradients per second and makes an
      update every :math:`K\,E[X]/n` (:math:`K = 1` for async);
    * K-async and K-batch-sync restart some learners and keep others running;
      with exponential times, memorylessness makes every busy learner look
      fresh, giving :math:`E[X_{K:n}]` and :math:`K/(n\mu)`
      (:func:`commlib.sgd.expected_update_time`). For other laws the residual
      times depend on the past and there is no closed form: ``None``.
    """
    K = workers if protocol == "sync" else (1 if protocol == "async" else k)
    if protocol in ("sync", "k_sync"):
        return sgd.expected_order_statistic(K, workers, distribution, **params)
    if protocol in ("async", "k_batch_async"):
        return K * sgd.expected_value(distribution, **params) / workers
    if distribution == "exponential":
        return sgd.expected_update_time(protocol, workers, k, rate=params.get("rate", 1.0))
    return None


SIX_PROTOCOLS = (("sync", None), ("k_sync", "K"), ("k_batch_sync", "K"), ("async", None), ("k_async", "K"),
                 ("k_batch_async", "K"))


def update_time_rows(workers: int = 16, k: int = 4, laws: dict | None = None, updates: int = 20000,
                     seed: int = 0) -> list[dict]:
    """For each law and each of the six protocols: closed form (or ``None``) and simulated mean time per update."""
    laws = UPDATE_TIME_LAWS if laws is None else laws
    rows = []
    for law, params in laws.items():
        for protocol, kk in SIX_PROTOCOLS:
            kv = k if kk else None
            sim = sgd.simulate(protocol, workers, k=kv, updates=updates, seed=seed, compute=law, **params)
            rows.append({"law": law, "protocol": protocol, "k": kv,
                         "closed form": update_time_closed_form(protocol, workers, kv, law, **params),
                         "simulated": sim.mean_time_per_update})
    return rows


def law_time_runs(configs, workers: int, budget: float, compute: str, compute_params: dict, problem=None,
                  seed: int = 0, points: int = 80, **kwargs) -> dict:
    """Like :func:`equal_time_runs` under any compute-time law: each protocol runs for about ``budget``
    time units, its number of updates set from a timing-only run of the same law and seed."""
    budget = check_positive("budget", budget)
    problem = training.make_problem(seed=0) if problem is None else problem
    out = {}
    for protocol, k in configs:
        probe = sgd.simulate(protocol, workers, k=k, updates=2000, seed=seed, compute=compute, **compute_params)
        u = max(1, int(budget / probe.mean_time_per_update))
        out[protocol_label(protocol, workers, k)] = sgd.simulate(
            protocol, workers, k=k, updates=u, seed=seed, problem=problem, eval_every=max(1, u // points),
            compute=compute, **compute_params, **kwargs)
    return out


def time_to_loss(run, target: float) -> float:
    """First evaluation time at which ``run``'s training loss is at or below ``target`` (inf if never)."""
    hit = np.nonzero(np.asarray(run.losses) <= target)[0]
    return float(run.eval_times[hit[0]]) if hit.size else math.inf


def race_phrase(t_batch: float, t_sync: float, tolerance: float = 0.1) -> str:
    """Words for K-batch-sync's time to reach K-sync's loss, against K-sync's own time to reach it."""
    if math.isinf(t_batch):
        return "never reaches it within the budget"
    if t_batch < (1 - tolerance) * t_sync:
        return "reaches it sooner"
    if t_batch > (1 + tolerance) * t_sync:
        return "reaches it later"
    return "reaches it at about the same time"


# ------------------------------------------------------------------ the error floor and its control
def error_floor_runs(workers: int = 16, budget: float = 400.0, lr: float = 0.5, batch_size: int = 8, seed: int = 0,
                     problem=None) -> dict:
    """Synchronous and asynchronous SGD at equal wall-clock time, and the control: one learner (no staleness)
    with the same rate and batch, run for as many updates as asynchronous SGD makes."""
    problem = training.make_problem(seed=0) if problem is None else problem
    runs = equal_time_runs([("sync", None), ("async", None)], workers=workers, budget=budget, problem=problem,
                           seed=seed, lr=lr, batch_size=batch_size)
    asyn = runs[protocol_label("async", workers, None)]
    u = asyn.updates
    runs["one learner, no staleness"] = sgd.simulate("sync", 1, updates=u, seed=seed, problem=problem,
                                                     eval_every=max(1, u // 80), lr=lr, batch_size=batch_size)
    return runs


def error_floor_split(runs: dict, workers: int, window: float = 0.25) -> dict:
    """Levels (mean training loss over the last ``window`` of each run) and the split of async - sync into
    noise (one learner - sync) and staleness (async - one learner), nats."""
    sync = tail_mean(runs[protocol_label("sync", workers, None)], window=window)
    asyn = tail_mean(runs[protocol_label("async", workers, None)], window=window)
    one = tail_mean(runs["one learner, no staleness"], window=window)
    gap = asyn - sync
    return {"sync": sync, "async": asyn, "one": one, "gap": gap, "noise": one - sync, "staleness": asyn - one,
            "noise_share": (one - sync) / gap if gap else math.nan}


def floor_phrase(split: dict) -> str:
    """Which part of the async error floor dominates: gradient noise or staleness."""
    share = split["noise_share"]
    if not math.isfinite(share) or split["gap"] <= 0:
        return "asynchronous SGD shows no higher floor here"
    if share >= 0.65:
        return "most of the gap is the noise of one small mini-batch per update, not staleness"
    if share <= 0.35:
        return "most of the gap is staleness, not the noise of one small mini-batch per update"
    return "the gap splits into comparable parts: the noise of one small mini-batch per update, and staleness"


# ------------------------------------------------------------------ warm-up where the linear rule breaks
def warmup_runs(problem=None, base_batch: int = 8, base_lr: float = 0.1, k: int = 128, warmup_steps: int = 3,
                epochs: float = 4.0, seed: int = 0) -> dict:
    """Small batch, and a ``k`` times larger batch with the linear scaling rule, without and with warm-up."""
    problem = training.make_problem(seed=0) if problem is None else problem
    k = check_count("k", k, 1)
    big = base_batch * k
    small_steps = max(1, int(epochs * problem.n_train / base_batch))
    big_steps = max(1, int(epochs * problem.n_train / big))
    rate = scaling.linear_scaling_lr(base_lr, base_batch, big)
    return {
        f"batch {base_batch}, rate {base_lr:g}": training.train(problem, base_lr, base_batch, small_steps, seed=seed,
                                                                eval_every=max(1, small_steps // 100)),
        f"batch {big}, rate {rate:g}, no warm-up": training.train(problem, base_lr, big, big_steps, seed=seed,
                                                                  base_batch_size=base_batch),
        f"batch {big}, rate {rate:g}, {warmup_steps}-step warm-up":
            training.train(problem, base_lr, big, big_steps, seed=seed, base_batch_size=base_batch,
                           warmup_steps=warmup_steps),
    }


def warmup_phrase(no_warmup: float, warmup: float, small: float, tolerance: float = 0.02) -> str:
    """What warm-up buys at a large ``k``: final losses (nats) without and with it, and the small batch's."""
    if no_warmup <= small + tolerance:
        return "the linear rule holds without warm-up here, and warm-up is not needed"
    if warmup <= small + tolerance:
        return "the linear rule breaks without warm-up, and warm-up repairs it"
    if warmup < no_warmup - tolerance:
        return "the linear rule breaks without warm-up; warm-up recovers part of the loss, not all"
    if warmup > no_warmup + tolerance:
        return "the linear rule breaks, and warm-up makes it worse: the scaled rate is too large even after the first steps"
    return "the linear rule breaks, and warm-up does not help"


def warmup_study(problem=None, base_batch: int = 8, base_lr: float = 0.1, ks=(64, 128, 256), warmup_steps: int = 3,
                 seeds=(0, 1, 2, 3), epochs: float = 4.0) -> dict:
    """:func:`warmup_runs` for several ``k`` and seeds: final losses (nats) per seed and their means.

    One seed can mislead here (the first large steps decide where a run lands), so each verdict is
    drawn from the mean over ``seeds``.
    """
    problem = training.make_problem(seed=0) if problem is None else problem
    out = {}
    for k in ks:
        finals = [[float(r.losses[-1]) for r in warmup_runs(problem, base_batch, base_lr, k, warmup_steps, epochs,
                                                            seed).values()] for seed in seeds]
        small, none, warm = (float(np.mean(col)) for col in zip(*finals))
        out[k] = {"small": small, "none": none, "warm": warm, "by_seed": finals,
                  "phrase": warmup_phrase(none, warm, small)}
    return out
