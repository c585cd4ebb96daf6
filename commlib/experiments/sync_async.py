"""Experiments of chapter 4 (synchronous and asynchronous SGD): the runs the chapter glues and plots.

Model layer: each function runs :mod:`commlib.sgd`, :mod:`commlib.training`
or :mod:`commlib.scaling` and returns results; the figures in
:mod:`commlib.views.sync_async` take these results as input.
"""

from __future__ import annotations

import math

from .. import scaling, sgd, training
from ..units import check_count, check_positive
from .summaries import RunEnd, protocol_label

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

