r"""Communicating less often: local SGD and DiLoCo against synchronous SGD.

Synchronous data parallelism all-reduces a gradient after every step. Local
SGD lets each of the n workers take H steps on its own copy of the
parameters and then averages the copies (Stich 2019); bytes per sample fall
H-fold. DiLoCo (Douillard et al. 2023) treats the average change of a round
as a *pseudo-gradient*, :math:`w - \frac1n\sum_i w^{(i)}` (worker i's copy :math:`w^{(i)}`), and feeds it
to an outer optimizer, Nesterov momentum (outer rate 0.7, momentum 0.9 in
the paper). H = 1 with plain averaging is synchronous SGD, the control.

Time. A worker's step takes ``compute`` seconds times a random factor
:math:`1 + X`, X exponential with mean ``jitter`` (stragglers, chapter 4); a
round ends when the slowest worker has done its H steps, and the
synchronisation then takes ``comm`` seconds (an all-reduce of the
parameters; of the gradient for H = 1: the same bytes). So a round costs
:math:`\max_i \sum_{j<H} t_{ij} + T_m`.

A wall-clock budget is met by the slowest worker's clock, run by run: with
``budget`` a run keeps every round that ends within it and stops before the
first that would end later (:func:`run`), so every variant stops less than one
of its rounds short of the budget and never past it.

>>> r = run(h=4, lr=0.5, rounds=5)
>>> len(r.losses), r.bytes_per_sample < run(h=1, lr=0.5, rounds=5).bytes_per_sample
(6, True)
>>> r = run(h=16, lr=0.5, budget=0.1)
>>> len(r.times), bool(r.times[-1] <= 0.1)
(5, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..units import check_count, check_nonnegative, check_positive
from .book_problem import default_problem

__all__ = ["LocalRun", "run", "best_over_grid", "LRS", "SYNC_LRS", "DILOCO_LRS", "OUTER_LRS",
           "MOMENTA", "LARGE_BATCH_LRS", "large_batch", "WORKERS", "COMPUTE", "JITTER", "COMM"]

#: Inner learning-rate grids: plain averaging, and DiLoCo, whose outer momentum amplifies each
#: round's change and so wants smaller inner rates (each rival gets its best rate from its grid). Plain
#: averaging's is fine near its best (0.4 at H = 16 and the chapter's budget, 0.7 at the registry's shorter one).
LRS = (0.2, 0.3, 0.4, 0.5, 0.7, 1.0)
#: Synchronous SGD (H = 1) takes many more, shorter rounds in a budget and wants larger rates: its own grid,
#: as fine near its best (0.5 with a fast synchronisation, 1.0 with a slow one).
SYNC_LRS = (0.35, 0.5, 0.7, 1.0, 1.4, 2.0)
DILOCO_LRS = (0.05, 0.1, 0.2, 0.5, 1.0)
#: DiLoCo's outer rate and momentum, tuned too (the paper's 0.7 and 0.9 are among them).
OUTER_LRS = (0.3, 0.5, 0.7, 1.0)
MOMENTA = (0.5, 0.7, 0.9)
#: Synchronous SGD with an H times larger batch takes H times fewer, larger steps: higher rates, a grid as fine
#: near its best (6 at H = 16 and the chapter's budget) as the others'.
LARGE_BATCH_LRS = (3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
#: The chapter's setting: workers, a step's compute time (seconds, before its random straggle), the mean
#: straggle as a share of it, and the synchronisation's time (seconds: a slow network).
WORKERS, COMPUTE, JITTER, COMM = 4, 1e-3, 0.2, 4e-3
#: The wall-clock budget (seconds) every run of the chapter's comparisons gets, on its slowest worker's clock.
BUDGET = 0.5


def rounds_in_budget(h: int, budget: float, step: float, comm: float) -> int:
    """Whole rounds of ``h`` local steps of ``step`` seconds each, plus one synchronisation of ``comm`` seconds,
    that fit in ``budget`` seconds.

    A round of local SGD costs ``h * step + comm``: the synchronisation's cost is shared by ``h`` steps, so the
    steps taken in the budget grow with ``h``, but less than ``h``-fold once the steps fill most of a round.
    At the chapter's mean step (1.2 ms) and slow sync (4 ms), half a second holds 96 rounds of synchronous SGD and
    21 rounds of 16 local steps, 336 steps:

    >>> rounds_in_budget(1, 0.5, 1.2e-3, 4e-3), rounds_in_budget(16, 0.5, 1.2e-3, 4e-3)
    (96, 21)
    """
    check_count("h", h)
    check_positive("budget", budget)
    check_positive("step", step)
    check_nonnegative("comm", comm)
    return int(np.floor(budget / (h * step + comm) + 1e-9))


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
    comm: float = 0.0

    @property
    def final_loss(self) -> float:
        """Loss at the end of the run."""
        return float(self.losses[-1])

    @property
    def sync_share(self) -> float:
        """Share of the run's wall-clock time spent synchronising: rounds x ``comm`` over the end time.

        >>> round(run(1, 0.5, rounds=20, jitter=0.0).sync_share, 2), round(run(16, 0.5, rounds=2, jitter=0.0).sync_share, 2)
        (0.8, 0.2)
        """
        rounds = len(self.times) - 1
        return rounds * self.comm / float(self.times[-1]) if rounds else 0.0


def run(h: int, lr: float, rounds: int | None = None, workers: int = WORKERS, batch: int = 16,
        outer: str = "average", outer_lr: float = 0.7, momentum: float = 0.9, compute: float = COMPUTE,
        jitter: float = JITTER, comm: float = COMM, seed: int = 0, problem=None, record: bool = True,
        budget: float | None = None, micro: int = 1) -> LocalRun:
    """Train rounds of H local steps; ``outer="average"`` (local SGD) or ``"nesterov"`` (DiLoCo).

    ``rounds`` rounds, or with ``budget`` (seconds) every round that ends within it on the
    slowest worker's clock (at most ``rounds`` of them, if given). ``micro``: each step's compute
    is the sum of ``micro`` random step times (a step on ``micro`` times the batch, as
    :func:`large_batch` takes). ``record=False`` evaluates the loss only at the end (the others
    are NaN): the same run, faster.
    """
    h = check_count("h", h, minimum=1)
    lr = check_positive("lr", lr)
    if rounds is None and budget is None:
        raise ValueError("rounds or budget must be given")
    rounds = None if rounds is None else check_count("rounds", rounds, minimum=1)
    budget = None if budget is None else check_positive("budget", budget)
    workers = check_count("workers", workers, minimum=1)
    micro = check_count("micro", micro, minimum=1)
    if outer not in ("average", "nesterov"):
        raise ValueError(f"outer must be 'average' or 'nesterov', got {outer!r}")
    compute, comm = check_positive("compute", compute), check_nonnegative("comm", comm)
    jitter = check_nonnegative("jitter", jitter)
    # The idea: H local steps on each copy, then one synchronisation of the parameters.
    p = default_problem() if problem is None else problem
    rng = np.random.default_rng(seed)
    w = p.init()
    mom = np.zeros_like(w)
    msg = 2 * (workers - 1) / workers * p.dim * 4        # ring all-reduce of fp32 parameters
    times, sent, losses = [0.0], [0.0], [p.loss(w)]
    with np.errstate(over="ignore", invalid="ignore"):
        while rounds is None or len(times) <= rounds:
            copies = _local_steps(p, w, rng, h, workers, batch, lr)
            step_times = (compute * (1 + rng.exponential(jitter, size=(workers, h, micro)))).sum(axis=2) if jitter \
                else np.full((workers, h), compute * micro)
            end = times[-1] + float(step_times.sum(axis=1).max()) + comm
            if budget is not None and end > budget:
                break                                         # this round would end past the budget
            delta = w - np.mean(copies, axis=0)               # the pseudo-gradient
            if outer == "average":
                w = w - delta
            else:
                mom = momentum * mom + delta
                w = w - outer_lr * (delta + momentum * mom)
            times.append(end)
            sent.append(sent[-1] + msg)
            if record:
                losses.append(p.loss(w) if np.all(np.isfinite(w)) else float("inf"))
            else:
                losses.append(float("nan"))
    if not record and len(losses) > 1:
        losses[-1] = p.loss(w) if np.all(np.isfinite(w)) else float("inf")
    outer_rate, outer_momentum = (outer_lr, momentum) if outer == "nesterov" else (1.0, 0.0)
    return LocalRun(h, outer, lr, np.asarray(times), np.asarray(sent), np.asarray(losses), msg / (h * batch),
                    outer_rate, outer_momentum, comm)


def _local_steps(p, w: np.ndarray, rng: np.random.Generator, h: int, workers: int, batch: int,
                 lr: float) -> np.ndarray:
    """Every worker's copy after H plain SGD steps from ``w``, one row a worker.

    The same steps as ``workers`` loops of ``h`` calls of ``p.stochastic_gradient`` (worker by worker, the
    batches drawn in that order), computed for all workers at once.
    """
    idx = np.array([[rng.integers(0, p.n_train, size=batch) for _j in range(h)] for _i in range(workers)])
    x_all, y_all = p.x_train, p.y_train
    copies = np.repeat(w.reshape(1, x_all.shape[1], p.classes), workers, axis=0)
    rows = np.arange(workers)[:, None], np.arange(batch)[None, :]
    for j in range(h):
        ids = idx[:, j]                                       # (workers, batch)
        x = x_all[ids]
        z = x @ copies
        z -= z.max(axis=2, keepdims=True)
        e = np.exp(z)
        prob = e / e.sum(axis=2, keepdims=True)
        prob[rows[0], rows[1], y_all[ids]] -= 1.0
        g = x.transpose(0, 2, 1) @ prob / batch
        if p.l2:
            g = g + p.l2 * copies
        copies -= lr * g
    return copies.reshape(workers, -1)


def best_over_grid(h: int, budget: float, lrs=None, outer: str = "average", outer_lrs=(0.7,), momenta=(0.9,),
                   **kwargs) -> LocalRun:
    """The run with the lowest final loss over a grid of inner rates (and, for DiLoCo, of outer rates
    ``outer_lrs`` and momenta ``momenta``), each run stopped by the ``budget`` (seconds) on its slowest worker's clock.

    ``lrs`` defaults to :data:`SYNC_LRS` for H = 1 and :data:`LRS` otherwise.
    """
    lrs = (SYNC_LRS if h == 1 else LRS) if lrs is None else lrs
    if outer == "average":
        outer_lrs, momenta = (kwargs.pop("outer_lr", 0.7),), (kwargs.pop("momentum", 0.9),)
    runs = [run(h, lr, outer=outer, outer_lr=o, momentum=m, budget=budget, **kwargs)
            for lr in lrs for o in outer_lrs for m in momenta]
    return min(runs, key=lambda r: r.final_loss if np.isfinite(r.final_loss) else np.inf)


def large_batch(h: int, budget: float, lrs=LARGE_BATCH_LRS, batch: int = 16, **kwargs) -> LocalRun:
    """Synchronous SGD with an H times larger batch, the usual control for local SGD: one step of H x ``batch``
    samples a worker, then an all-reduce, so the same bytes per sample and the same syncs as local SGD with H.

    Its step does the work of H steps, and takes as long: the sum of H random step times (``micro=h``), so it
    straggles as H local steps do; its rate is tuned over ``lrs``; each run stops by the ``budget`` (seconds).
    """
    h = check_count("h", h, minimum=1)
    runs = [run(1, lr, batch=h * batch, micro=h, budget=budget, **kwargs) for lr in lrs]
    return min(runs, key=lambda r: r.final_loss if np.isfinite(r.final_loss) else np.inf)
