r"""Communicating less often: local SGD and DiLoCo against synchronous SGD.

Synchronous data parallelism all-reduces a gradient after every step. Local
SGD lets each of the n workers take H steps on its own copy of the
parameters and then averages the copies (Stich 2019); bytes per sample fall
H-fold. DiLoCo (Douillard et al. 2023) treats the average change of a round
as a *pseudo-gradient*, :math:`w - \frac1n\sum_i w_i` (worker i's copy :math:`w_i`), and feeds it
to an outer optimizer, Nesterov momentum (outer rate 0.7, momentum 0.9 in
the paper). H = 1 with plain averaging is synchronous SGD, the control.

Time. A worker's step takes ``compute`` seconds times a random factor
:math:`1 + X`, X exponential with mean ``jitter`` (stragglers, chapter 4); a
round ends when the slowest worker has done its H steps, and the
synchronisation then takes ``comm`` seconds (an all-reduce of the
parameters; of the gradient for H = 1: the same bytes). So a round costs
:math:`\max_i \sum_{j<H} t_{ij} + T_m`.

>>> r = run(h=4, lr=0.5, rounds=5)
>>> len(r.losses), r.bytes_per_sample < run(h=1, lr=0.5, rounds=5).bytes_per_sample
(6, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..units import check_count, check_nonnegative, check_positive
from .book_problem import default_problem

__all__ = ["LocalRun", "run", "best_over_grid", "equal_time_rounds", "LRS", "DILOCO_LRS", "OUTER_LRS",
           "MOMENTA", "LARGE_BATCH_LRS", "large_batch", "WORKERS", "COMPUTE", "JITTER", "COMM"]

#: Inner learning-rate grids: plain averaging, and DiLoCo, whose outer momentum amplifies each
#: round's change and so wants smaller inner rates (each rival gets its best rate from its grid).
LRS = (0.1, 0.2, 0.5, 1.0, 2.0)
DILOCO_LRS = (0.05, 0.1, 0.2, 0.5, 1.0)
#: DiLoCo's outer rate and momentum, tuned too (the paper's 0.7 and 0.9 are among them).
OUTER_LRS = (0.3, 0.5, 0.7, 1.0)
MOMENTA = (0.5, 0.7, 0.9)
#: Synchronous SGD with an H times larger batch takes H times fewer, larger steps: higher rates.
LARGE_BATCH_LRS = (1.0, 2.0, 4.0, 8.0, 16.0)
#: The chapter's setting: workers, a step's compute time (seconds, before its random straggle), the mean
#: straggle as a share of it, and the synchronisation's time (seconds: a slow network).
WORKERS, COMPUTE, JITTER, COMM = 4, 1e-3, 0.2, 4e-3


@dataclass(frozen=True)
class LocalRun:
    """Loss after each round, with the wall-clock time and the bytes one worker has sent by then."""

    h: int
    outer: str
    lr: float
    times: np.ndarray
    bytes_sent: np.ndarray
    losses: np.ndarray
    bytes_per_sample: float
    outer_lr: float = 1.0
    momentum: float = 0.0

    @property
    def final_loss(self) -> float:
        """Loss at the end of the run."""
        return float(self.losses[-1])


def run(h: int, lr: float, rounds: int, workers: int = WORKERS, batch: int = 16, outer: str = "average",
        outer_lr: float = 0.7, momentum: float = 0.9, compute: float = COMPUTE, jitter: float = JITTER,
        comm: float = COMM, seed: int = 0, problem=None, record: bool = True) -> LocalRun:
    """Train ``rounds`` rounds of H local steps; ``outer="average"`` (local SGD) or ``"nesterov"`` (DiLoCo).

    ``record=False`` evaluates the loss only at the end (the others are NaN): the same run, faster.
    """
    h = check_count("h", h, minimum=1)
    lr = check_positive("lr", lr)
    rounds = check_count("rounds", rounds, minimum=1)
    workers = check_count("workers", workers, minimum=1)
    if outer not in ("average", "nesterov"):
        raise ValueError(f"outer must be 'average' or 'nesterov', got {outer!r}")
    compute, comm = check_positive("compute", compute), check_nonnegative("comm", comm)
    jitter = check_nonnegative("jitter", jitter)
    p = default_problem() if problem is None else problem
    rng = np.random.default_rng(seed)
    w = p.init()
    mom = np.zeros_like(w)
    msg = 2 * (workers - 1) / workers * p.dim * 4        # ring all-reduce of fp32 parameters
    times, sent, losses = [0.0], [0.0], [p.loss(w)]
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(rounds):
            copies = []
            for _i in range(workers):
                wi = w.copy()
                for _j in range(h):
                    wi -= lr * p.stochastic_gradient(wi, rng, batch)
                copies.append(wi)
            step_times = compute * (1 + rng.exponential(jitter, size=(workers, h))) if jitter else \
                np.full((workers, h), compute)
            delta = w - np.mean(copies, axis=0)               # the pseudo-gradient
            if outer == "average":
                w = w - delta
            else:
                mom = momentum * mom + delta
                w = w - outer_lr * (delta + momentum * mom)
            times.append(times[-1] + float(step_times.sum(axis=1).max()) + comm)
            sent.append(sent[-1] + msg)
            if record or len(losses) == rounds:
                losses.append(p.loss(w) if np.all(np.isfinite(w)) else float("inf"))
            else:
                losses.append(float("nan"))
    outer_rate, outer_momentum = (outer_lr, momentum) if outer == "nesterov" else (1.0, 0.0)
    return LocalRun(h, outer, lr, np.asarray(times), np.asarray(sent), np.asarray(losses), msg / (h * batch),
                    outer_rate, outer_momentum)


def equal_time_rounds(h: int, budget: float, compute: float = COMPUTE, comm: float = COMM, jitter: float = JITTER) -> int:
    """Rounds of H steps that fit in ``budget`` seconds on average (so every H gets the same wall clock)."""
    h = check_count("h", h, minimum=1)
    budget = check_positive("budget", budget)
    per_round = h * compute * (1 + jitter) + comm
    return max(1, int(budget // per_round))


def best_over_grid(h: int, budget: float, lrs=LRS, outer: str = "average", outer_lrs=(0.7,), momenta=(0.9,),
                   **kwargs) -> LocalRun:
    """The run with the lowest final loss over a grid of inner rates (and, for DiLoCo, of outer rates
    ``outer_lrs`` and momenta ``momenta``), at an equal wall-clock budget."""
    timing = {key: kwargs[key] for key in ("compute", "comm", "jitter") if key in kwargs}
    rounds = equal_time_rounds(h, budget, **timing)
    if outer == "average":
        outer_lrs, momenta = (kwargs.pop("outer_lr", 0.7),), (kwargs.pop("momentum", 0.9),)
    runs = [run(h, lr, rounds, outer=outer, outer_lr=o, momentum=m, **kwargs)
            for lr in lrs for o in outer_lrs for m in momenta]
    return min(runs, key=lambda r: r.final_loss if np.isfinite(r.final_loss) else np.inf)


def large_batch(h: int, budget: float, lrs=LARGE_BATCH_LRS, batch: int = 16, **kwargs) -> LocalRun:
    """Synchronous SGD with an H times larger batch, the usual control for local SGD: one step of H x ``batch``
    samples a worker, then an all-reduce, so the same bytes per sample and the same syncs as local SGD with H.

    Its step takes H mean steps' compute (H x ``compute`` seconds per step, the jitter scaled alike); its rate is
    tuned over ``lrs``.
    """
    h = check_count("h", h, minimum=1)
    compute = kwargs.pop("compute", COMPUTE) * h
    jitter = kwargs.get("jitter", JITTER)
    comm = kwargs.get("comm", COMM)
    rounds = equal_time_rounds(h, budget, compute=compute / h, comm=comm, jitter=jitter)
    runs = [run(1, lr, rounds, batch=h * batch, compute=compute, **kwargs) for lr in lrs]
    return min(runs, key=lambda r: r.final_loss if np.isfinite(r.final_loss) else np.inf)
