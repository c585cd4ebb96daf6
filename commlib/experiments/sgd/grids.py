"""Learning rates tuned over a grid, on several seeds at once: the runs the claims of chapters 4 and 5 compare.

A comparison of SGD protocols (or of learning-rate rules) is fair only if each runs at its own best
rate on the same budget. :func:`grid_runs` trains one protocol on the chapter's problem at every rate
of a grid and on every seed, all at once (:func:`commlib.sgd.simulate.replay_grid`), and keeps the
result: the claims that tune over the grid, the figures that draw the best runs and the prose that
quotes them share one set of runs. Runs are cached by their arguments, so a chapter that asks
twice pays once.

Budgets are in mean compute times. A protocol gets as many updates as fit in the budget on average
(the budget over its mean time per update), as :func:`~commlib.experiments.sgd.sync_async.equal_time_runs`
gives; its *level* is its mean training loss over the evaluations in the last quarter of the budget.
"""

from __future__ import annotations

import functools
import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...sgd import simulate as sgd
from ...sgd import training
from ...units import check_count, check_positive

__all__ = ["RATES", "SEEDS", "problem", "update_time", "Grid", "grid_runs", "level", "time_to_level", "decimals",
           "mean_sd"]

#: The learning rates every protocol is tuned over: a factor of about 2 between neighbours, from a rate
#: too small for one stale gradient per update to one too large for an average of sixteen.
RATES: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)

#: The seeds of every tuned comparison (five: noise could decide).
SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)


@functools.lru_cache(maxsize=2)
def problem(small: bool = False) -> training.Problem:
    """The chapters' problem (seed 0), or its small version for the registry test (a quarter of the samples)."""
    if small:
        return training.make_problem(seed=0, n_train=1000, n_test=1000)
    return training.make_problem(seed=0)


@functools.lru_cache(maxsize=64)
def update_time(protocol: str, workers: int, k: int | None, compute: str = "exponential", **params) -> float:
    """Mean time per update (mean compute times): the closed form for exponential times, else 20,000 simulated updates."""
    if compute == "exponential":
        return sgd.expected_update_time(protocol, workers, k, rate=params.get("rate", 1.0))
    return sgd.schedule(protocol, workers, k, compute, 20_000, seed=0, **params).mean_time_per_update


def level(run, budget: float, window: float = 0.25) -> float:
    """Mean training loss (nats) over the evaluations after ``(1 - window) * budget``; ``inf`` if the run diverged."""
    if run.diverged:
        return math.inf
    t = np.asarray(run.eval_times, float)
    keep = t > (1.0 - window) * budget
    if not keep.any():
        raise ValueError(f"no evaluation lies in the last {window:g} of the budget; evaluate more often")
    return float(np.asarray(run.losses, float)[keep].mean())


def time_to_level(run, target: float, smooth: int = 3) -> float:
    """First time (mean compute times) at which the moving mean of ``smooth`` evaluations is at or below
    ``target`` nats; ``inf`` if never (or if the run diverged)."""
    if run.diverged:
        return math.inf
    loss = np.asarray(run.losses, float)
    times = np.asarray(run.eval_times, float)
    if smooth > 1 and loss.size >= smooth:
        loss = np.convolve(loss, np.ones(smooth) / smooth, mode="valid")
        times = times[smooth - 1:]
    hit = np.nonzero(loss <= target)[0]
    return float(times[hit[0]]) if hit.size else math.inf


@dataclass(frozen=True)
class Grid:
    """One protocol run at every rate of ``rates`` on every seed of ``seeds``: ``runs[seed index][rate index]``."""

    protocol: str
    workers: int
    k: int | None
    budget: float
    rates: tuple[float, ...]
    seeds: tuple[int, ...]
    runs: tuple[tuple[sgd.SimResult, ...], ...]

    def run(self, rate: float, seed: int) -> sgd.SimResult:
        """The run at ``rate`` (a rate of the grid) and ``seed`` (a seed of the grid)."""
        return self.runs[self.seeds.index(seed)][self._rate(rate)]

    def _rate(self, rate: float) -> int:
        for i, r in enumerate(self.rates):
            if math.isclose(r, rate):
                return i
        raise ValueError(f"rate {rate!r} is not on the grid {self.rates}")

    def levels(self, rate: float) -> tuple[float, ...]:
        """The level (nats) of every seed's run at ``rate``."""
        return tuple(level(row[self._rate(rate)], self.budget) for row in self.runs)

    @property
    def best_rate(self) -> float:
        """The rate with the lowest mean level over the seeds."""
        return min(self.rates, key=lambda r: statistics.fmean(self.levels(r)))

    def updates(self) -> int:
        """PS updates each run makes."""
        return self.runs[0][0].updates


@functools.lru_cache(maxsize=64)
def grid_runs(protocol: str, workers: int = 16, k: int | None = None, budget: float = 400.0,
              rates: tuple[float, ...] = RATES, seeds: tuple[int, ...] = SEEDS, batch_size: int = 8,
              compute: str = "exponential", small: bool = False, points: int = 20, lr_rule: str = "constant",
              updates: int | None = None, compute_params: tuple = (), curves: bool = False,
              fresh: bool = False) -> Grid:
    """Train ``protocol`` (``workers`` learners, ``k`` where it uses K) on the chapters' problem at every rate and seed.

    ``updates`` (default: as many as fit in ``budget`` on average, :func:`update_time`) and
    ``points`` evaluations per run; ``compute_params`` are the compute-time law's parameters as
    ``(name, value)`` pairs. ``fresh=True`` trains the same schedules with every staleness set to 0
    (:func:`~commlib.sgd.simulate.schedule`'s control without staleness: the same updates and
    mini-batches, each gradient at the current parameters). Cached: the same arguments return the same :class:`Grid`. The first seed's
    runs are evaluated all along; the others, unless ``curves``, only over the last 35 % of their
    updates (which holds the last quarter of the budget that :func:`level` reads).

    >>> g = grid_runs("sync", workers=4, budget=40.0, rates=(0.2, 1.0), seeds=(0, 1), small=True, points=10)
    >>> g.updates(), len(g.runs), len(g.runs[0]), g.best_rate
    (19, 2, 2, 1.0)

    The runs are also kept on disk, once per version of the code (:func:`~commlib.experiments.claims.cached_arrays`),
    so a chapter executed again reads them back instead of training them again.
    """
    workers = check_count("workers", workers, 1)
    budget = check_positive("budget", budget)
    params = dict(compute_params)
    if updates is None:
        updates = max(1, int(budget / update_time(protocol, workers, k, compute, **params)))
    updates = check_count("updates", updates, 1)
    seeds = tuple(seeds)
    rates = tuple(float(r) for r in rates)
    args = (protocol, workers, k, budget, rates, seeds, batch_size, compute, small, points, lr_rule, updates,
            tuple(compute_params), curves) + (("fresh",) if fresh else ())

    def train() -> dict:
        schedules = [sgd.schedule(protocol, workers, k, compute, updates, seed, fresh=fresh, **params) for seed in seeds]
        runs = sgd.replay_grid(schedules, problem(small), rates, batch_size, seeds=seeds, lr_rule=lr_rule,
                               eval_every=max(1, updates // points), tail=None if curves else 0.35)
        return _pack(runs)

    from .. import claims

    name = "grid-" + hashlib.sha256(repr(args).encode()).hexdigest()[:20]
    runs = _unpack(claims.cached_arrays(name, train), len(seeds), len(rates))
    return Grid(protocol, workers, None if protocol in ("sync", "async") else k, budget, rates, seeds, runs)


def _pack(runs: list[list[sgd.SimResult]]) -> dict:
    """A grid's runs (``runs[seed][rate]``, as :func:`~commlib.sgd.simulate.replay_grid` gives) as named arrays: each
    seed's schedule once, every run's curves, end and parameters."""
    first = runs[0][0]
    out = {"protocol": np.array(first.protocol), "workers": np.array(first.workers), "k": np.array(first.k),
           "eval_index": np.asarray(first.eval_index), "initial": np.array([first.initial_error, first.initial_loss]),
           "errors": np.array([[r.errors for r in row] for row in runs]),
           "losses": np.array([[r.losses for r in row] for row in runs]),
           "diverged": np.array([[r.diverged for r in row] for row in runs]),
           "w": np.array([[r.w for r in row] for row in runs])}
    for i, row in enumerate(runs):
        t = row[0]
        if t.jobs is not None or t.capped is not None:
            raise ValueError("a grid's runs record no jobs and no capped rates")
        out.update({f"times{i}": t.times, f"staleness{i}": t.staleness, f"contributors{i}": t.contributors,
                    f"per_update{i}": t.gradients_per_update})
    return out


def _unpack(d: dict, n_seeds: int, n_rates: int) -> tuple[tuple[sgd.SimResult, ...], ...]:
    """:func:`_pack`'s arrays back as ``runs[seed][rate]``."""
    protocol, workers, k = str(d["protocol"]), int(d["workers"]), int(d["k"])
    e0, l0 = (float(x) for x in d["initial"])
    return tuple(tuple(sgd.SimResult(protocol, workers, k, d[f"times{i}"], d[f"staleness{i}"], d[f"contributors{i}"],
                                     d[f"per_update{i}"], d["errors"][i, r].copy(), d["losses"][i, r].copy(),
                                     d["eval_index"], e0, l0, bool(d["diverged"][i, r]), d["w"][i, r].copy())
                       for r in range(n_rates)) for i in range(n_seeds))


def decimals(spread: float) -> int:
    """Decimals that quote a value no finer than ``spread``: the spread's first significant digit.

    >>> decimals(0.0008), decimals(0.004), decimals(0.03), decimals(0.0), decimals(3e-7)
    (4, 3, 2, 5, 5)
    """
    if not spread > 0 or not math.isfinite(spread):
        return 5
    return max(0, min(5, -math.floor(math.log10(spread))))


def spread_text(mean: float, sd: float, sign: str = "") -> str:
    """``mean ± sd`` quoted no finer than the spread: the spread rounded to one significant digit, the mean to the
    same decimal place (``sign="+"`` writes the sign of a difference); a difference between identical runs (mean and
    spread both 0 at the quoted decimals) reads ``0``. The one way the book quotes a mean over seeds with its spread.

    >>> spread_text(-2e-5, 1.2e-5, sign="+"), spread_text(0.0, 0.0, sign="+"), spread_text(1e-17, 2e-17, sign="+")
    ('-0.00002 ± 0.00001', '0', '0')
    >>> spread_text(3.743, 0.11), spread_text(2.0, 0.56)
    ('3.7 ± 0.1', '2.0 ± 0.6')
    """
    sd1 = float(f"{sd:.1g}") if sd > 0 else 0.0
    d = decimals(sd1)
    if round(mean, d) == 0 and round(sd1, d) == 0:   # identical runs, up to the last bits of a sum
        return "0"
    return f"{mean:{sign}.{d}f} ± {sd1:.{d}f}"


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value)."""
    values = [float(v) for v in values]
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)
