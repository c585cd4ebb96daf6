"""Summaries of simulated SGD runs shared by chapters 4 and 5: protocol labels, tail means, run ends.

Model layer: numbers and short text computed from :class:`commlib.sgd.simulate.SimResult`
objects (or anything with the same attributes); no plotting here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...units import check_nonnegative, check_positive

__all__ = ["PROTOCOL_LABELS", "protocol_label", "tail_mean", "RunEnd", "run_ends"]


#: Human-readable names of the six protocols of :data:`commlib.sgd.simulate.PROTOCOLS`.
PROTOCOL_LABELS = {
    "sync": "fully synchronous",
    "k_sync": "K-sync",
    "k_batch_sync": "K-batch-sync",
    "async": "asynchronous",
    "k_async": "K-async",
    "k_batch_async": "K-batch-async",
}


def protocol_label(protocol: str, workers: int, k: int | None) -> str:
    """The label of a run in legends and tables, e.g. ``"K-async (K = 4)"``."""
    if protocol == "sync":
        return f"{PROTOCOL_LABELS[protocol]} (K = n = {workers})"
    if protocol == "async":
        return f"{PROTOCOL_LABELS[protocol]} (K = 1)"
    return f"{PROTOCOL_LABELS[protocol]} (K = {k})"


def tail_mean(run, window: float = 0.25, metric: str = "losses", end: float | None = None) -> float:
    """Mean of a run's evaluations (``"losses"`` in nats or ``"errors"`` as a share) over the last
    ``window`` share of its wall clock.

    The wall clock runs from 0 to ``end`` (seconds; by default the time of
    the run's last update); the evaluations kept are those at times after
    ``(1 - window) * end``. This is what the prose means by "over the last
    quarter of the run" (``window = 0.25``).

    >>> from types import SimpleNamespace
    >>> run = SimpleNamespace(times=np.arange(1.0, 9.0), eval_times=np.arange(1.0, 9.0),
    ...                       losses=np.arange(1.0, 9.0), errors=None)
    >>> tail_mean(run)            # times 7 and 8 lie after 0.75 * 8 = 6
    7.5
    """
    window = float(window)
    if not 0.0 < window <= 1.0:
        raise ValueError(f"window must lie in (0, 1], got {window!r}")
    if metric not in ("losses", "errors"):
        raise ValueError(f"metric must be 'losses' or 'errors', got {metric!r}")
    values = getattr(run, metric)
    if values is None:
        raise ValueError(f"the run has no {metric}: simulate it with a problem")
    t = np.asarray(run.eval_times, float)
    end = float(run.times[-1]) if end is None else check_positive("end", end)
    keep = t > (1.0 - window) * end
    if not keep.any():
        raise ValueError(f"no evaluation lies in the last {window:g} of the run; widen window")
    return float(np.asarray(values, float)[keep].mean())



@dataclass(frozen=True)
class RunEnd:
    """How one training run ends within its wall-clock budget (losses in nats)."""

    label: str
    k: int              #: gradients (or learners) per update; ``workers`` for fully synchronous
    updates: int        #: PS updates made within the budget
    level: float        #: mean training loss over the final window (nats)
    fall: float         #: fall of the least-squares line across the window, as a share of ``level`` (> 0: falling)
    t_stat: float       #: slope divided by its standard error (negative: falling)
    descending: bool    #: ``fall >= min_fall`` and ``t_stat <= -z``: still falling, beyond its noise
    window: float       #: the final window, as a share of the budget


def run_ends(runs: dict, budget: float, window: float = 0.25, min_fall: float = 0.01, z: float = 2.0) -> list[RunEnd]:
    r"""Summarise how each run of :func:`equal_time_runs` ends, so prose can follow the run instead of guessing.

    Over the evaluations in the last ``window`` share of ``budget``
    (wall-clock seconds) the level is the mean loss; a least-squares line
    :math:`\ell(t) = a + s t` gives the fall :math:`-s\,w\,\text{budget}/\text{level}`
    across the window and the t-statistic :math:`s/\mathrm{SE}(s)`, with
    :math:`\mathrm{SE}(s)^2 = \frac{\sum r_i^2/(m-2)}{\sum (t_i - \bar t)^2}`
    for ``m`` points and residuals :math:`r_i`. A run is *still descending*
    when it falls by at least ``min_fall`` of its level across the window and
    the slope is at least ``z`` standard errors below zero: a noisy plateau
    is not mistaken for descent, nor a flat tail for a plateau.
    """
    budget = check_positive("budget", budget)
    window = float(window)
    if not 0.0 < window <= 1.0:
        raise ValueError(f"window must lie in (0, 1], got {window!r}")
    min_fall = check_nonnegative("min_fall", min_fall)
    z = check_nonnegative("z", z)
    out = []
    for label, r in runs.items():
        if r.losses is None:
            raise ValueError(f"run {label!r} has no losses: simulate it with a problem")
        t, loss = np.asarray(r.eval_times, float), np.asarray(r.losses, float)
        keep = t > (1.0 - window) * budget
        if keep.sum() < 3:
            raise ValueError(f"run {label!r} has {int(keep.sum())} evaluations in the last window; need at least 3 "
                             "(evaluate more often or widen window)")
        t, loss = t[keep], loss[keep]
        level = float(loss.mean())
        dt = t - t.mean()
        slope = float(np.sum(dt * (loss - level)) / np.sum(dt * dt))
        resid = loss - (level + slope * dt)
        se = math.sqrt(float(np.sum(resid * resid)) / (t.size - 2) / float(np.sum(dt * dt)))
        t_stat = slope / se if se > 0 else (-math.inf if slope < 0 else (math.inf if slope > 0 else 0.0))
        fall = -slope * window * budget / level
        out.append(RunEnd(label=label, k=int(r.k), updates=int(r.updates), level=level, fall=fall, t_stat=t_stat,
                          descending=bool(fall >= min_fall and t_stat <= -z), window=window))
    return out

