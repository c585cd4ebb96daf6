r"""Fit the alpha-beta model to measured collective times, and grade the fit.

The alpha-beta model (Hockney 1994) charges :math:`\alpha + m\beta` seconds
for a message of ``m`` bytes. A collective of ``M`` bytes over ``p`` ranks
then costs

.. math:: T(M) = a(p)\,\alpha + b(M, p)\,\beta \;[+\; c(M, p)\,\gamma],

where ``a``, ``b``, ``c`` are the step, byte and reduced-byte counts of the
algorithm (:func:`commlib.cost.collective_terms`, after Thakur, Rabenseifner
& Gropp 2005). Those counts are known; ``alpha`` (seconds), ``beta``
(seconds per byte) and optionally ``gamma`` (seconds per byte reduced) are
the unknowns. Given measured times ``T_i`` at sizes ``M_i`` this module
finds the non-negative coefficients that minimise the squared *relative*
error

.. math:: \sum_i \Big(\frac{a_i\alpha + b_i\beta - T_i}{T_i}\Big)^2 ,

because measured times span several orders of magnitude (from 1 KiB to
64 MiB, typically three to five: :func:`time_span`): an ordinary
least-squares fit would be decided by the largest messages alone.

A single line often misses: MPI libraries switch protocol with message
size (a small message is copied *eagerly* into a bounce buffer, a large one
waits for a *rendezvous* handshake and is then copied once), so the
effective alpha and beta change at a crossover. :func:`fit_piecewise`
finds that crossover from the data and fits one (alpha, beta) pair on each
side.

Units: sizes in bytes, times in seconds, ``alpha`` in s, ``beta`` in s/byte
(``1/beta`` is a bandwidth in bytes/s).

>>> import numpy as np
>>> sizes = 2.0 ** np.arange(10, 27, 2)
>>> t = allreduce_model_times(sizes, n=4, alpha=5e-6, beta=1e-10)
>>> m = fit_alpha_beta(sizes, t, "all_reduce", 4)
>>> round(m.alpha * 1e6, 3), round(1 / m.beta / 1e9, 3)    # µs, GB/s
(5.0, 10.0)
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from ..collectives.cost import COLLECTIVE_ALGORITHMS, algorithm_bandwidth, bus_bandwidth, bus_factor, collective_terms
from ..units import check_count, check_fraction, check_nonnegative, check_positive

__all__ = [
    "half_rate_size",
    "measured_half_rate",
    "half_rate_crossings",
    "Series",
    "AlphaBeta",
    "PiecewiseFit",
    "PriceDrop",
    "price_drops",
    "one_sign_tail",
    "MIN_GRADED",
    "EXACT_TOLERANCE",
    "ErrorRow",
    "design_matrix",
    "terms_at",
    "holdout_sizes",
    "leave_one_out",
    "busbw_at",
    "RateCheck",
    "rate_check",
    "transfer",
    "HoldoutResult",
    "RegimeError",
    "regime_errors",
    "split_sizes",
    "steepest_step",
    "step_holds",
    "least_loaded",
    "Suspect",
    "SPREAD_LIMIT",
    "SWEEP_LIMIT",
    "sweep_gap",
    "suspects",
    "fit_alpha_beta",
    "fit_joint",
    "fit_piecewise",
    "predict",
    "relative_errors",
    "error_table",
    "median_abs_relative_error",
    "pooled_median_error",
    "time_span",
    "time_span_decades",
    "growth",
    "median_relative_spread",
    "allreduce_model_times",
    "synthetic_times",
    "collective_time_ab",
]


@dataclass(frozen=True)
class Series:
    """Measured times of one collective at several sizes.

    ``op`` is a :data:`commlib.cost.COLLECTIVE_ALGORITHMS` key
    (``"all_reduce"``, ``"reduce_scatter"``, ``"all_gather"``,
    ``"broadcast"``...), ``algorithm`` the cost-model algorithm assumed
    (``None``: the op's default), ``n`` the number of ranks, ``nbytes`` the
    buffer sizes in bytes (nccl-tests' convention: the whole array),
    ``seconds`` the median times and ``low``/``high`` a spread (for example
    the quartiles), all in seconds. ``label`` names the series in plots;
    ``library`` the library that moved the bytes (``"mpich"``, or ``"gloo"``
    for PyTorch's), which the figures colour apart.
    """

    op: str
    n: int
    nbytes: tuple[float, ...]
    seconds: tuple[float, ...]
    algorithm: str | None = None
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None
    label: str = ""
    library: str = "mpich"

    def __post_init__(self) -> None:
        if self.op not in COLLECTIVE_ALGORITHMS:
            raise ValueError(f"op must be one of {', '.join(COLLECTIVE_ALGORITHMS)}; got {self.op!r}")
        check_count("n", self.n, minimum=2)
        if len(self.nbytes) != len(self.seconds) or len(self.nbytes) == 0:
            raise ValueError(
                f"nbytes and seconds must be non-empty and of equal length, got {len(self.nbytes)} and "
                f"{len(self.seconds)}"
            )
        for x in self.nbytes:
            check_nonnegative("nbytes", x)
        for t in self.seconds:
            check_positive("seconds", t)
        for name in ("low", "high"):
            value = getattr(self, name)
            if value is not None and len(value) != len(self.seconds):
                raise ValueError(f"{name} must have one entry per size ({len(self.seconds)}), got {len(value)}")
        object.__setattr__(self, "nbytes", tuple(float(x) for x in self.nbytes))
        object.__setattr__(self, "seconds", tuple(float(x) for x in self.seconds))
        if not self.label:
            object.__setattr__(self, "label", self.op if self.algorithm is None else f"{self.op} ({self.algorithm})")

    def subset(self, lo: float = 0.0, hi: float = math.inf) -> Series:
        """The points with ``lo <= nbytes <= hi`` (bytes)."""
        keep = [i for i, x in enumerate(self.nbytes) if lo <= x <= hi]
        if not keep:
            raise ValueError(f"no sizes of {self.label} lie in [{lo}, {hi}] bytes")

        def pick(values):
            return None if values is None else tuple(values[i] for i in keep)

        return Series(self.op, self.n, pick(self.nbytes), pick(self.seconds), self.algorithm, pick(self.low),
                      pick(self.high), self.label, self.library)


@dataclass(frozen=True)
class AlphaBeta:
    """A fitted machine: ``alpha`` s per message, ``beta`` s per byte, ``gamma`` s per byte reduced.

    ``bandwidth`` is ``1/beta`` in bytes/s (infinite if ``beta`` is 0).
    """

    alpha: float
    beta: float
    gamma: float = 0.0

    @property
    def bandwidth(self) -> float:
        """``1/beta``, bytes per second in one direction."""
        return math.inf if self.beta == 0 else 1.0 / self.beta

    def time(self, op: str, nbytes: float, n: int, algorithm: str | None = None) -> float:
        """Predicted seconds for ``op`` on ``nbytes`` over ``n`` ranks: ``a alpha + b beta + c gamma``."""
        terms = terms_at(op, nbytes, n, algorithm)
        return terms.steps * self.alpha + terms.bytes * self.beta + terms.reduced * self.gamma


@dataclass(frozen=True)
class PiecewiseFit:
    """Several :class:`AlphaBeta` regimes split at ``crossovers`` (bytes, increasing).

    ``models[0]`` applies below ``crossovers[0]``, ``models[i]`` from
    ``crossovers[i-1]`` up to ``crossovers[i]``, the last one from the last
    crossover on. ``crossover``, ``low`` and ``high`` name the first split,
    the first and the last regime.
    """

    crossovers: tuple[float, ...]
    models: tuple[AlphaBeta, ...]

    def __post_init__(self) -> None:
        if len(self.models) != len(self.crossovers) + 1:
            raise ValueError(f"models must hold one more entry than crossovers, got {len(self.models)} and "
                             f"{len(self.crossovers)}")
        if list(self.crossovers) != sorted(self.crossovers):
            raise ValueError(f"crossovers must increase, got {self.crossovers}")

    @property
    def crossover(self) -> float:
        """The first (for two regimes: the only) crossover, bytes."""
        return self.crossovers[0]

    @property
    def low(self) -> AlphaBeta:
        """The regime of the smallest messages."""
        return self.models[0]

    @property
    def high(self) -> AlphaBeta:
        """The regime of the largest messages."""
        return self.models[-1]

    def regime(self, nbytes: float) -> AlphaBeta:
        """The regime that applies to a message of ``nbytes`` bytes."""
        return self.models[bisect.bisect_right(self.crossovers, nbytes)]

    def time(self, op: str, nbytes: float, n: int, algorithm: str | None = None) -> float:
        """Predicted seconds, from the regime of ``nbytes``."""
        return self.regime(nbytes).time(op, nbytes, n, algorithm)


@dataclass(frozen=True)
class PriceDrop:
    """A size at which a model prices a message below one just smaller: ``before`` s just below ``nbytes``,
    ``after`` s from ``nbytes`` on (``after < before``)."""

    nbytes: float
    before: float
    after: float

    @property
    def ratio(self) -> float:
        """``after / before``: below 1, the bigger message is priced cheaper."""
        return self.after / self.before


def price_drops(model: AlphaBeta | PiecewiseFit, op: str, n: int, algorithm: str | None = None
                ) -> tuple[PriceDrop, ...]:
    """Where ``model`` prices ``op`` on ``n`` ranks lower for a bigger message: a price that falls with size.

    Within one regime the price ``a alpha + b beta`` grows with the size; it can jump only where the regime
    changes (a piecewise fit's crossovers, fitted apart and not joined) or, with ``algorithm="mpich"``, where
    MPICH switches algorithm (:data:`commlib.lab.mpich.THRESHOLDS`) and the counts change. Each such size is
    priced just below and just above; a fall is returned, a rise is not.

    >>> pw = PiecewiseFit((2.0**15,), (AlphaBeta(1e-5, 1e-9), AlphaBeta(0.0, 5e-10)))
    >>> [(d.nbytes, round(d.ratio, 2)) for d in price_drops(pw, "all_reduce", 2)]
    [(32768.0, 0.31)]
    >>> price_drops(AlphaBeta(1e-5, 1e-9), "all_reduce", 2)
    ()
    """
    n = check_count("n", n, minimum=2)
    cuts = set(model.crossovers) if isinstance(model, PiecewiseFit) else set()
    if algorithm == "mpich":
        from .mpich import THRESHOLDS

        cuts |= {float(v) for k, v in THRESHOLDS.items() if k != "bcast_min_procs"}
    out = []
    for c in sorted(cuts):
        before = model.time(op, math.nextafter(c, 0.0), n, algorithm)
        after = model.time(op, math.nextafter(c, math.inf), n, algorithm)
        if after < before:
            out.append(PriceDrop(c, before, after))
    return tuple(out)


@dataclass(frozen=True)
class ErrorRow:
    """One size of one series held against a model (times in s, bandwidths in bytes/s)."""

    label: str
    nbytes: float
    measured: float
    predicted: float
    relative_error: float
    algbw: float
    busbw: float


@functools.lru_cache(maxsize=4096)  # pure, and called for every size of every trial fit
def terms_at(op: str, nbytes: float, n: int, algorithm: str | None = None):
    """The cost-model counts of ``op`` at one size; ``algorithm="mpich"`` picks what MPICH runs there.

    Any other ``algorithm`` is a :data:`commlib.cost.COLLECTIVE_ALGORITHMS`
    name (``None``: the op's default) and applies at every size; ``"mpich"``
    follows :func:`commlib.lab.mpich.algorithm`, size by size.

    >>> terms_at("broadcast", 2**20, 4, "mpich").steps     # a binomial tree: lg 4 steps
    2
    """
    if algorithm == "mpich":
        from .mpich import terms as mpich_terms

        return mpich_terms(op, nbytes, n)
    return collective_terms(op, nbytes, n, algorithm)


def design_matrix(op: str, nbytes: Sequence[float], n: int, algorithm: str | None = None,
                  gamma: bool = False) -> np.ndarray:
    """Rows ``[steps, bytes(, reduced)]`` of :func:`commlib.cost.collective_terms` for each size.

    >>> design_matrix("all_reduce", [1200.0], 4, "ring", gamma=True).tolist()
    [[6.0, 1800.0, 900.0]]
    """
    rows = []
    for x in nbytes:
        t = terms_at(op, x, n, algorithm)
        rows.append([t.steps, t.bytes, t.reduced] if gamma else [t.steps, t.bytes])
    return np.array(rows, dtype=float).reshape(len(rows), 3 if gamma else 2)


def _fit_rows(rows: np.ndarray, seconds: np.ndarray, target: np.ndarray | None = None) -> np.ndarray:
    # Relative least squares with alpha, beta(, gamma) >= 0: divide each equation by its measured
    # time, then rescale the columns (steps are about 1, bytes about 1e7) before scipy's NNLS.
    # ``target`` (default: the times themselves) is what the rows must add up to.
    w = 1.0 / seconds
    a = rows * w[:, None]
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    x, _ = nnls(a / scale, (seconds if target is None else target) * w)
    return x / scale


def fit_alpha_beta(nbytes: Sequence[float], seconds: Sequence[float], op: str = "all_reduce", n: int = 2,
                   algorithm: str | None = None, gamma: bool = False) -> AlphaBeta:
    r"""Least-squares (relative error) fit of ``alpha`` and ``beta`` to one collective's times.

    ``nbytes`` (bytes) and ``seconds`` are paired measurements of ``op`` over
    ``n`` ranks with ``algorithm`` (see :func:`commlib.cost.collective_terms`).
    With ``gamma=True`` a reduction cost is fitted too; for one op alone it is
    not identifiable from beta (both scale with M), so use :func:`fit_joint`
    over several ops for that. Coefficients are constrained to be >= 0.

    >>> sizes = [1e3, 1e5, 1e7]
    >>> t = [collective_time_ab("all_gather", x, 4, 2e-6, 1e-9) for x in sizes]
    >>> m = fit_alpha_beta(sizes, t, "all_gather", 4)
    >>> round(m.alpha, 9), round(m.beta, 12)
    (2e-06, 1e-09)
    """
    series = Series(op, n, tuple(nbytes), tuple(seconds), algorithm)
    return fit_joint([series], gamma=gamma)


def fit_joint(series: Iterable[Series], gamma: bool = False, known_gamma: float = 0.0) -> AlphaBeta:
    """One (alpha, beta[, gamma]) for several series at once: the machine, not one collective.

    Each series contributes the rows of its own algorithm's counts, so an
    all-gather (no reduction) and a reduce-scatter (a reduction) together
    can separate ``beta`` from ``gamma``. ``known_gamma`` (s per byte
    reduced, for instance :func:`commlib.cost.reduction_gamma` of a measured
    memory bandwidth) is charged instead of fitted: the reduction time it
    predicts is taken off each measurement before alpha and beta are fitted,
    so ``1/beta`` is then the rate of moving bytes alone.
    """
    check_nonnegative("known_gamma", known_gamma)
    if gamma and known_gamma:
        raise ValueError("give gamma=True (fit gamma) or known_gamma > 0 (charge it), not both")
    rows, times, reduced = [], [], []
    for s in series:
        if not isinstance(s, Series):
            raise ValueError(f"series must hold Series objects, got {type(s).__name__}")
        m = design_matrix(s.op, s.nbytes, s.n, s.algorithm, gamma=True)
        rows.append(m if gamma else m[:, :2])
        reduced.append(m[:, 2])
        times.append(np.array(s.seconds))
    if not rows:
        raise ValueError("series must hold at least one Series")
    a = np.vstack(rows)
    t = np.concatenate(times)
    if a.shape[0] < a.shape[1]:
        raise ValueError(f"need at least {a.shape[1]} measurements to fit {a.shape[1]} unknowns, got {a.shape[0]}")
    x = _fit_rows(a, t, t - known_gamma * np.concatenate(reduced))
    return AlphaBeta(float(x[0]), float(x[1]), float(x[2]) if gamma else float(known_gamma))


def _sq_rel_residual(model: AlphaBeta, s: Series) -> float:
    pred = np.array([model.time(s.op, x, s.n, s.algorithm) for x in s.nbytes])
    meas = np.array(s.seconds)
    return float(np.sum(((pred - meas) / meas) ** 2))


def fit_piecewise(series: Series | Sequence[Series], min_points: int = 2, regimes: int = 2,
                  known_gamma: float = 0.0) -> PiecewiseFit:
    """Fit ``regimes`` (alpha, beta) pairs, split at the crossover sizes that fit the data best.

    Every way of cutting the sorted measured sizes into ``regimes``
    contiguous runs of at least ``min_points`` sizes is tried (cuts at the
    geometric midpoint of a gap); each run gets its own :func:`fit_joint`;
    the cuts with the smallest total squared relative error win. Several
    series may share the fit (they are cut at the same sizes).
    ``known_gamma`` is passed to every :func:`fit_joint`.

    ``min_points`` defaults to 2, the fewest sizes that determine an alpha
    and a beta, so that the data, not the rule, places the cuts: with 3, a
    break between the second- and third-largest sizes could never be found
    (the top regime would have to start one size lower). A regime of two
    sizes passes through both exactly when the secant between them has a
    non-negative intercept, and is then no test of itself; where the
    intercept is negative the constraint sets alpha to 0 and the regime
    misses both (:attr:`RegimeError.clamped`). Grade a piecewise fit on
    sizes it never saw (:func:`holdout_sizes`), and see
    :func:`regime_errors` for each regime's points and worst miss.

    >>> sizes = 2.0 ** np.arange(10, 27)
    >>> small = allreduce_model_times(sizes[sizes < 2**16], 4, 2e-6, 4e-10)
    >>> large = allreduce_model_times(sizes[sizes >= 2**16], 4, 30e-6, 1e-10)
    >>> f = fit_piecewise(Series("all_reduce", 4, tuple(sizes), tuple(np.r_[small, large])))
    >>> f.crossover > 2**15 and f.crossover < 2**16
    True
    """
    group = [series] if isinstance(series, Series) else list(series)
    min_points = check_count("min_points", min_points, minimum=2)
    regimes = check_count("regimes", regimes, minimum=1, maximum=4)
    sizes = sorted({x for s in group for x in s.nbytes})
    if len(sizes) < regimes * min_points:
        raise ValueError(f"need at least {regimes * min_points} distinct sizes for {regimes} regimes of "
                         f"{min_points} points, got {len(sizes)}")

    def cut_at(i: int) -> float:
        return math.sqrt(sizes[i - 1] * sizes[i]) if sizes[i - 1] > 0 else sizes[i] / 2

    best = None
    for idx in itertools.combinations(range(min_points, len(sizes) - min_points + 1), regimes - 1):
        if any(b - a < min_points for a, b in zip(idx, idx[1:])):
            continue
        cuts = [cut_at(i) for i in idx]
        edges = [-math.inf, *cuts, math.inf]
        models, res = [], 0.0
        for lo, hi in zip(edges, edges[1:]):
            part = [s.subset(max(lo, 0.0), math.nextafter(hi, -math.inf)) for s in group
                    if any(lo <= x < hi for x in s.nbytes)]
            m = fit_joint(part, known_gamma=known_gamma)
            models.append(m)
            res += sum(_sq_rel_residual(m, s) for s in part)
        if best is None or res < best[0]:
            best = (res, tuple(cuts), tuple(models))
    assert best is not None
    return PiecewiseFit(best[1], best[2])


@dataclass(frozen=True)
class RegimeError:
    """How well one regime of a fit meets its own points.

    ``lo``, ``hi``: its smallest and largest size in the graded window (bytes); ``points``: its sizes in
    that window; ``fitted``: all the sizes it was fitted on; ``median`` and ``worst``: |relative error|
    (fractions) over the window, the worst at ``worst_at`` bytes.
    """

    lo: float
    hi: float
    points: int
    fitted: int
    median: float
    worst: float
    worst_at: float
    model: AlphaBeta
    #: The smallest and largest size the regime was fitted on (bytes), inside the graded window or not.
    first: float = math.nan
    last: float = math.nan

    #: The largest |relative error| over the regime's own sizes (fractions), in or out of the graded window.
    own_worst: float = 0.0

    @property
    def clamped(self) -> bool:
        """Two sizes that the regime misses (beyond :data:`EXACT_TOLERANCE`): for a fitted regime, the fit's
        constraint (alpha, beta >= 0) was active.

        The secant through two points has a negative intercept where the later point is
        dearer per byte than the line from the origin would make it; the fit then sets
        alpha to 0 and no longer passes through either point.
        """
        return self.fitted <= 2 and self.own_worst > EXACT_TOLERANCE

    @property
    def exact(self) -> bool:
        """Two sizes, two unknowns and the constraint inactive: the regime passes through both, so its error says nothing."""
        return self.fitted <= 2 and not self.clamped

    @property
    def graded(self) -> bool:
        """Its errors grade it: enough points in the graded window (:data:`MIN_GRADED`), or two sizes it misses (:attr:`clamped`)."""
        return self.clamped or (not self.exact and self.points >= MIN_GRADED)


#: The fewest points of a regime in the graded window for its errors to grade it.
MIN_GRADED = 3

#: Below this largest |relative error| a regime of two sizes passes through both (the fit's constraint inactive).
EXACT_TOLERANCE = 1e-9


def regime_errors(model: AlphaBeta | PiecewiseFit, series: Series, lo: float = 0.0,
                  hi: float = math.inf) -> list[RegimeError]:
    """Each regime's measured sizes in [lo, hi] bytes, their median and worst ``|relative error|`` (fractions).

    A pooled median hides a regime that misses its own points; the worst
    error beside it does not. A single line is one regime.

    >>> s = Series("broadcast", 2, (1024.0, 4096.0, 16384.0), (1e-5, 2e-5, 6e-5))
    >>> [(r.points, round(r.worst, 3)) for r in regime_errors(AlphaBeta(1e-5, 0.0), s)]
    [(3, 0.833)]
    """
    models = model.models if isinstance(model, PiecewiseFit) else (model,)
    edges = [-math.inf, *(model.crossovers if isinstance(model, PiecewiseFit) else ()), math.inf]
    errors = relative_errors(model, series)
    out = []
    for a, b, m in zip(edges, edges[1:], models):
        mine = sorted((x, abs(float(e))) for x, e in zip(series.nbytes, errors) if a <= x < b)
        pick = [(x, e) for x, e in mine if lo <= x <= hi]
        if not pick:
            continue
        worst_at, worst = max(pick, key=lambda t: t[1])
        out.append(RegimeError(pick[0][0], pick[-1][0], len(pick), len(mine), float(np.median([e for _, e in pick])),
                               worst, worst_at, m, mine[0][0], mine[-1][0], max(e for _, e in mine)))
    return out


def one_sign_tail(model: AlphaBeta | PiecewiseFit, series: Series) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The largest sizes over which ``model`` errs one way: ``(sizes, relative errors)``, from the largest size down.

    The run stops at the first size whose error has the other sign (or is
    0). Noise changes sign from size to size; a long run of one sign at the
    large end is a feature of the machine the model leaves out (a regime of
    the largest messages), however small the model's median error.

    >>> s = Series("all_reduce", 2, (1.0, 2.0, 4.0, 8.0), (1.0, 2.0, 4.0, 8.0))
    >>> one_sign_tail(AlphaBeta(0.0, 0.5), s)[0]
    (1.0, 2.0, 4.0, 8.0)
    >>> one_sign_tail(AlphaBeta(0.0, 1.0), Series("all_reduce", 2, (1.0, 2.0, 4.0), (1.1, 1.9, 4.4)))[0]
    (4.0,)
    """
    pts = sorted(zip(series.nbytes, (float(e) for e in relative_errors(model, series))))
    sign = math.copysign(1.0, pts[-1][1]) if pts[-1][1] else 0.0
    tail = []
    for x, e in reversed(pts):
        if not sign or math.copysign(1.0, e) != sign or e == 0:
            break
        tail.append((x, e))
    tail.reverse()
    return tuple(x for x, _ in tail), tuple(e for _, e in tail)


def least_loaded(sweeps: Sequence[Series]) -> Series:
    """One collective's sweeps over the same sizes, combined: at each size the sweep whose median is lower.

    A load from other programs only ever slows a call down, so of two
    sweeps timed at different moments the faster one at a size is the less
    loaded there; its median and quartiles stand for that size. (With noise
    alone this reads a little low, by a fraction of the spread.)

    >>> a = Series("all_gather", 2, (1.0, 2.0), (1.0, 9.0), low=(0.9, 8.0), high=(1.1, 10.0))
    >>> b = Series("all_gather", 2, (1.0, 2.0), (5.0, 2.0), low=(4.0, 1.9), high=(6.0, 2.1))
    >>> least_loaded([a, b]).seconds, least_loaded([a, b]).low
    ((1.0, 2.0), (0.9, 1.9))
    """
    sweeps = list(sweeps)
    if not sweeps or not all(isinstance(s, Series) for s in sweeps):
        raise ValueError("sweeps must be a non-empty sequence of Series")
    first = sweeps[0]
    if any(s.op != first.op or s.n != first.n or s.nbytes != first.nbytes for s in sweeps):
        raise ValueError(f"sweeps must time the same collective at the same sizes ({first.label})")
    pick = [min(range(len(sweeps)), key=lambda k: sweeps[k].seconds[i]) for i in range(len(first.nbytes))]

    def take(name):
        if any(getattr(s, name) is None for s in sweeps):
            return None
        return tuple(getattr(sweeps[k], name)[i] for i, k in enumerate(pick))

    return Series(first.op, first.n, first.nbytes, take("seconds"), first.algorithm, take("low"), take("high"),
                  first.label, first.library)


@dataclass(frozen=True)
class Suspect:
    """A timing that no collective's algorithm explains, only load: ``op`` at ``nbytes`` bytes, and ``why``."""

    op: str
    nbytes: float
    why: str


#: Quartile spread (q3 - q1) over the median beyond which a size's calls are flagged as loaded.
SPREAD_LIMIT = 1.0
#: Two sweeps disagree at a size where their middle halves are apart and one median is more than this many times
#: the other (:func:`suspects`).
SWEEP_LIMIT = 1.5


def _above(x: float, limit: float, strict: bool = True) -> str:
    """``x`` as per cents of a median, with as many decimals (up to three) as it takes to read above ``limit``
    where it is (``strict``): a spread of 1.004 against a limit of 1.0 reads '100.4 %', not '100 %'.

    >>> _above(1.004, 1.0), _above(16.5, 1.0), _above(1.0, 1.0, strict=False)
    ('100.4 %', '1650 %', '100 %')
    """
    digits = 0
    while strict and x > limit and round(100 * x, digits) <= round(100 * limit, digits) and digits < 3:
        digits += 1
    return f"{100 * x:.{digits}f} %"


def suspects(series: Sequence[Series], sweeps: Sequence[Sequence[Series]] = (),
             spread: float = SPREAD_LIMIT, sweep_limit: float = SWEEP_LIMIT) -> list[Suspect]:
    """Timings that fail a sanity check: the marks of load on a shared machine, not of the machine.

    Three checks, each against the run's own spread:

    * a reduce-scatter or an all-gather of ``M`` bytes slower than the
      all-reduce of ``M`` on as many ranks, with their middle halves apart
      (an all-reduce does at least as much: on two ranks MPICH's is a
      reduce-scatter followed by an all-gather);
    * a size whose middle half of the calls spans more than ``spread``
      times its median;
    * a size at which two sweeps (``sweeps``: one sequence of series per
      sweep, in the order of ``series``) disagree, their middle halves apart
      and one median more than ``sweep_limit`` times the other.

    >>> ar = Series("all_reduce", 2, (4096.0,), (6e-6,), low=(5e-6,), high=(7e-6,))
    >>> ag = Series("all_gather", 2, (4096.0,), (2e-3,), low=(1.9e-3,), high=(2.2e-3,))
    >>> [(s.op, s.why[:40]) for s in suspects([ar, ag])]
    [('all_gather', 'slower than the all-reduce of the same s')]
    """
    out = []
    by_op = {(s.op, s.n): s for s in series}
    for s in series:
        whole = by_op.get(("all_reduce", s.n))
        for i, x in enumerate(s.nbytes):
            if s.op in ("reduce_scatter", "all_gather") and whole is not None and x in whole.nbytes:
                j = whole.nbytes.index(x)
                lo = s.low[i] if s.low is not None else s.seconds[i]
                hi = whole.high[j] if whole.high is not None else whole.seconds[j]
                if lo > hi:
                    out.append(Suspect(s.op, x, f"slower than the all-reduce of the same size "
                                                f"({s.seconds[i] / whole.seconds[j]:.1f} times its time)"))
            if s.low is not None and s.high is not None and (s.high[i] - s.low[i]) > spread * s.seconds[i]:
                out.append(Suspect(s.op, x, f"its middle half of the calls spans "
                                            f"{_above((s.high[i] - s.low[i]) / s.seconds[i], spread)} of its "
                                            f"median, more than the check's {_above(spread, spread, strict=False)}"))
    for group in (zip(*sweeps) if sweeps else ()):
        for i, x in enumerate(group[0].nbytes):
            meds = [g.seconds[i] for g in group]
            lows = [g.low[i] if g.low is not None else g.seconds[i] for g in group]
            highs = [g.high[i] if g.high is not None else g.seconds[i] for g in group]
            a, b = min(range(len(group)), key=lambda j: meds[j]), max(range(len(group)), key=lambda j: meds[j])
            if lows[b] > highs[a] and meds[b] > sweep_limit * meds[a]:
                out.append(Suspect(group[0].op, x, f"its sweeps disagree ({meds[b] / meds[a]:.1f} times)"))
    return out


def sweep_gap(sweeps: Sequence[Sequence[Series]]) -> tuple[float, int]:
    """How far apart the sweeps came where their middle halves did not overlap: ``(the largest ratio of two medians
    there, how many (collective, size) pairs)``; ``(1.0, 0)`` where they overlapped everywhere. ``sweeps``: one
    sequence of series per sweep, as for :func:`suspects`, whose tolerance this is read against.

    >>> a = [Series("all_reduce", 2, (1.0, 2.0), (1.0, 2.0), low=(0.9, 1.9), high=(1.1, 2.1))]
    >>> b = [Series("all_reduce", 2, (1.0, 2.0), (1.3, 2.0), low=(1.2, 1.9), high=(1.4, 2.1))]
    >>> sweep_gap([a, b])
    (1.3, 1)
    """
    worst, apart = 1.0, 0
    for group in (zip(*sweeps) if sweeps else ()):
        for i in range(len(group[0].nbytes)):
            meds = [g.seconds[i] for g in group]
            lows = [g.low[i] if g.low is not None else g.seconds[i] for g in group]
            highs = [g.high[i] if g.high is not None else g.seconds[i] for g in group]
            a, b = meds.index(min(meds)), meds.index(max(meds))
            if lows[b] > highs[a]:
                apart += 1
                worst = max(worst, meds[b] / meds[a])
    return worst, apart


def steepest_step(series: Series, lo: float = 0.0) -> tuple[float, float, float]:
    """Where the cost per byte jumps most between two neighbouring measured sizes >= ``lo`` bytes.

    Returns ``(smaller size, larger size, factor)``: the factor is the
    time ratio over the size ratio, 1 where time grows in proportion to
    size (one beta on both sides), above 1 where each byte got dearer. It
    locates a break from the measurements alone, with no fit.

    >>> steepest_step(Series("all_gather", 2, (1.0, 2.0, 4.0, 8.0), (1.0, 2.0, 8.0, 16.0)))
    (2.0, 4.0, 2.0)
    """
    pts = sorted((x, t) for x, t in zip(series.nbytes, series.seconds) if x >= lo and x > 0)
    if len(pts) < 2:
        raise ValueError(f"series must hold two or more sizes >= lo ({lo} bytes), got {len(pts)}")
    steps = [((x0, x1), (t1 / t0) / (x1 / x0)) for (x0, t0), (x1, t1) in zip(pts, pts[1:])]
    (a, b), factor = max(steps, key=lambda s: s[1])
    return a, b, float(factor)


def step_holds(series: Series, step: tuple[float, float, float], lo: float = 0.0, keep: float = 0.5,
               cpu: Sequence[float] | None = None, pages: Sequence[float] | None = None,
               jump: float = 0.25) -> bool:
    """Whether a :func:`steepest_step` is a step of the whole series, not one timing: does the cost per byte stay up?

    The cost per byte (time over size) is compared over every measured size
    ``>= lo`` up to the step's smaller size ``a`` and over every size from
    its larger ``b`` up, by their medians. A step the series keeps holds at
    least ``keep`` of its factor on a log scale across it (``keep = 0.5``:
    the square root); where the cost per byte falls back after ``b``, or was
    as high before ``a``, a single slow (or fast) timing made the step, and
    it is suspect.

    ``cpu``: the same calls' CPU seconds at each of the series' sizes
    (:func:`commlib.lab.runner.cpu_seconds`), where the run recorded them.
    Time slicing inflates wall-clock timings on either side of a step, and
    can hide one the machine keeps; the CPU clock is tested too, against the
    step's factor on that clock, and the step is suspect only where neither
    clock keeps it. ``pages``: the fresh pages each call mapped in at each
    size, as fractions of the message (:func:`commlib.lab.runner.page_shares`);
    where they rose by ``jump`` or more across the step and stayed up at
    every size above it, a change in the work itself (allocation) keeps the
    step whatever the clocks' medians say, so it is not suspect.

    >>> s = Series("all_reduce", 2, (1.0, 2.0, 4.0, 8.0, 16.0), (1.0, 2.0, 8.0, 16.0, 32.0))
    >>> step_holds(s, steepest_step(s))             # dearer from 4 bytes up, and it stays so
    True
    >>> spike = Series("all_reduce", 2, (1.0, 2.0, 4.0, 8.0, 16.0), (1.0, 2.0, 8.0, 8.0, 16.0))
    >>> steepest_step(spike), step_holds(spike, steepest_step(spike))   # one slow timing at 4 bytes
    ((2.0, 4.0, 2.0), False)
    >>> step_holds(spike, (2.0, 4.0, 2.0), cpu=(1.0, 2.0, 8.0, 16.0, 32.0))   # the CPU clock keeps it
    True
    """
    a, b, factor = step
    if not 0 < keep <= 1:
        raise ValueError(f"keep must be in (0, 1], got {keep!r}")
    if cpu is not None and len(cpu) != len(series.nbytes):
        raise ValueError(f"cpu must give one time per size of the series ({len(series.nbytes)}), got {len(cpu)}")

    def kept(seconds: Sequence[float], f: float) -> bool:
        per = sorted((x, t / x) for x, t in zip(series.nbytes, seconds) if x >= lo and x > 0)
        below = [c for x, c in per if x <= a]
        above = [c for x, c in per if x >= b]
        if not below or not above:
            raise ValueError(f"step must lie within the series' sizes >= lo ({lo} bytes), got {a} to {b}")
        if f <= 1:
            return True
        return float(np.median(above)) / float(np.median(below)) >= f ** keep

    if kept(series.seconds, factor):
        return True
    at = {float(x): i for i, x in enumerate(series.nbytes)}
    if pages is not None:
        if len(pages) != len(series.nbytes):
            raise ValueError(f"pages must give one share per size of the series ({len(series.nbytes)}), got {len(pages)}")
        if float(a) in at and all(pages[i] - pages[at[float(a)]] >= jump for x, i in at.items() if x >= b):
            return True
    if cpu is None:
        return False
    if float(a) not in at or float(b) not in at or cpu[at[float(a)]] <= 0:
        return False
    cpu_factor = (cpu[at[float(b)]] / b) / (cpu[at[float(a)]] / a)
    return cpu_factor > 1 and kept(cpu, cpu_factor)


def predict(model: AlphaBeta | PiecewiseFit, series: Series) -> np.ndarray:
    """Predicted seconds of ``model`` at each size of ``series``."""
    return np.array([model.time(series.op, x, series.n, series.algorithm) for x in series.nbytes])


def relative_errors(model: AlphaBeta | PiecewiseFit, series: Series) -> np.ndarray:
    """``(predicted - measured) / measured`` at each size: +0.2 means the model says 20 % too slow."""
    return (predict(model, series) - np.array(series.seconds)) / np.array(series.seconds)


def error_table(model: AlphaBeta | PiecewiseFit, series: Series) -> list[ErrorRow]:
    """One :class:`ErrorRow` per size: measured and predicted time, relative error, algbw and busbw.

    algbw and busbw follow nccl-tests: ``algbw = M / t`` and ``busbw = algbw x``
    :func:`commlib.cost.bus_factor` (``2(n-1)/n`` for all-reduce), in bytes/s.
    """
    pred = predict(model, series)
    rows = []
    for x, t, p in zip(series.nbytes, series.seconds, pred):
        rows.append(ErrorRow(series.label, x, t, float(p), float((p - t) / t), algorithm_bandwidth(x, t),
                             bus_bandwidth(series.op, x, series.n, t)))
    return rows


def median_abs_relative_error(model: AlphaBeta | PiecewiseFit, series: Series | Sequence[Series],
                              lo: float = 4e3, hi: float = 64 * 2**20) -> float:
    """Median of ``|relative error|`` over every size in ``[lo, hi]`` bytes of every series (a fraction).

    The default window, 4 kB to 64 MiB, leaves out the smallest messages,
    whose times are a few microseconds and mostly scheduler noise.
    """
    lo = check_nonnegative("lo", lo)
    hi = check_positive("hi", hi)
    if hi < lo:
        raise ValueError(f"hi must be >= lo ({lo}), got {hi}")
    group = [series] if isinstance(series, Series) else list(series)
    errs = [np.abs(relative_errors(model, s.subset(lo, hi))) for s in group]
    return float(np.median(np.concatenate(errs)))


def pooled_median_error(models: Sequence[AlphaBeta | PiecewiseFit], series: Sequence[Series],
                        lo: float = 4e3, hi: float = 64 * 2**20) -> float:
    """Median ``|relative error|`` over [lo, hi] bytes, pooling every series with its own model (a fraction)."""
    if len(models) != len(series) or not series:
        raise ValueError(f"models and series must pair up one to one, got {len(models)} and {len(series)}")
    errs = [np.abs(relative_errors(m, s.subset(lo, hi))) for m, s in zip(models, series)]
    return float(np.median(np.concatenate(errs)))


def _group(series: Series | Sequence[Series]) -> list[Series]:
    group = [series] if isinstance(series, Series) else list(series)
    if not group or not all(isinstance(s, Series) for s in group):
        raise ValueError("series must be a Series or a non-empty sequence of Series")
    return group


def time_span(series: Series | Sequence[Series]) -> float:
    """Longest measured median time over the shortest, across every size of every series (a ratio >= 1).

    It says how unequal the equations of a fit are: in ordinary least
    squares a 1 % miss on the longest time costs as much as a miss of
    ``time_span`` % on the shortest, which is why :func:`fit_joint` divides
    each equation by its own time.

    >>> round(time_span(Series("all_reduce", 2, (1e3, 1e6), (2e-6, 2e-3))), 6)
    1000.0
    """
    times = [t for s in _group(series) for t in s.seconds]
    return max(times) / min(times)


def time_span_decades(series: Series | Sequence[Series]) -> float:
    """:func:`time_span` in orders of magnitude: ``log10(max / min)`` of the measured medians.

    >>> round(time_span_decades(Series("all_reduce", 2, (1e3, 1e6), (2e-6, 2e-3))), 6)
    3.0
    """
    return math.log10(time_span(series))


def growth(series: Series, lo: float, hi: float) -> float:
    """Measured median time at ``hi`` bytes over that at ``lo`` bytes (both must be measured sizes).

    The two regimes of the alpha-beta model in one number each: where the
    start-up cost dominates, multiplying the size by 8 leaves the time
    almost unchanged (growth near 1); where copying dominates, the time
    grows by nearly 8 too.

    >>> s = Series("broadcast", 2, (1024.0, 8192.0), (1e-5, 3e-5))
    >>> growth(s, 1024, 8192)
    3.0
    """
    if not isinstance(series, Series):
        raise ValueError(f"series must be a Series, got {type(series).__name__}")
    where = {x: t for x, t in zip(series.nbytes, series.seconds)}
    for name, size in (("lo", lo), ("hi", hi)):
        if float(size) not in where:
            raise ValueError(f"{name} must be one of the measured sizes of {series.label} "
                             f"({', '.join(f'{x:g}' for x in series.nbytes)} bytes), got {size!r}")
    return where[float(hi)] / where[float(lo)]


def busbw_at(series: Series, nbytes: float, known_gamma: float = 0.0) -> float:
    """Bus bandwidth (bytes/s) measured at one size, no fit: nccl-tests' busbw of the median time.

    With ``known_gamma`` (s per byte reduced, as in :func:`fit_joint`) the
    reduction time that gamma predicts, ``c(M) gamma``, is taken off the
    measured time first: the rate at which the bytes moved in the time left
    for moving them. Infinite where no time is left.

    >>> s = Series("all_reduce", 2, (1024.0, 2.0**26), (1e-5, 0.08))
    >>> round(busbw_at(s, 2**26) / 1e6, 1)            # 64 MiB in 80 ms, bus factor 1 at two ranks
    838.9
    >>> round(busbw_at(s, 2**26, known_gamma=0.04 / 2**25) / 1e6, 1)   # half the time was reducing
    1677.7
    """
    where = {x: t for x, t in zip(series.nbytes, series.seconds)}
    if float(nbytes) not in where:
        raise ValueError(f"nbytes must be one of the measured sizes of {series.label} "
                         f"({', '.join(f'{x:g}' for x in series.nbytes)} bytes), got {nbytes!r}")
    check_nonnegative("known_gamma", known_gamma)
    t = where[float(nbytes)]
    left = t - known_gamma * terms_at(series.op, nbytes, series.n, series.algorithm).reduced
    if left <= 0:
        return math.inf
    return bus_bandwidth(series.op, nbytes, series.n, t) * t / left


def _critical_rate(series: Series, nbytes: float, seconds: float) -> float:
    # bytes sent along the critical path over the time: the rate the model's bandwidth term is the limit of
    return terms_at(series.op, nbytes, series.n, series.algorithm).bytes / seconds


def half_rate_size(model: AlphaBeta, series: Series) -> float:
    r"""The size (bytes) at which a line's two terms are equal: the bytes then move at half its ``1/beta``.

    With :math:`T = a\alpha + b\beta` the bytes on the critical path move
    at :math:`b/T`, which tends to :math:`1/\beta` for large messages and is
    half of it where :math:`a\alpha = b\beta`, at
    :math:`M_{1/2} = a\alpha/(b_1\beta)` with :math:`b = b_1 M`. The counts
    are those of the algorithm ``series`` ran at each size (MPICH's may
    change with the size), so the size is found on a grid of 64 points per
    doubling from 1 byte to 1 TiB; 0 for a line with no ``alpha``, infinite
    for one with no ``beta``.

    >>> s = Series("all_reduce", 2, (1024.0, 2.0**26), (1e-5, 0.08), "ring")
    >>> round(half_rate_size(AlphaBeta(1e-6, 1e-9), s))   # ring, 2 ranks: 2 alpha = M beta
    2000
    """
    if model.alpha == 0:
        return 0.0
    if model.beta == 0:
        return math.inf
    for x in np.geomspace(1.0, 2.0**40, 40 * 64 + 1):
        t = terms_at(series.op, float(x), series.n, series.algorithm)
        if t.bytes * model.beta >= t.steps * model.alpha:
            return float(t.steps * model.alpha / (model.beta * t.bytes / x))
    return math.inf


def measured_half_rate(model: AlphaBeta, series: Series) -> tuple[float, float]:
    """The two neighbouring measured sizes (bytes) between which the measured rate first reaches half ``1/beta``.

    The rate is the bytes on the critical path of the algorithm run over the
    measured median time, no fit; the check of :func:`half_rate_size`.
    ``(0, smallest)`` where the smallest size already reaches it;
    ``(largest, inf)`` where no size does.

    >>> s = Series("all_reduce", 2, (1e4, 1e5, 1e6), (4e-5, 1.5e-4, 1.1e-3), "ring")
    >>> measured_half_rate(AlphaBeta(1e-5, 1e-9), s)     # 0.25, then 0.67 GB/s: half of 1 GB/s is passed
    (10000.0, 100000.0)
    """
    if model.beta == 0:
        return float(max(series.nbytes)), math.inf
    below = 0.0
    for x, t in zip(series.nbytes, series.seconds):
        if _critical_rate(series, x, t) >= 0.5 * model.bandwidth:
            return below, float(x)
        below = float(x)
    return below, math.inf


def half_rate_crossings(model: AlphaBeta, series: Series) -> list[tuple[float, float]]:
    """Every pair of neighbouring measured sizes (bytes) between which the measured rate rises through half ``1/beta``.

    :func:`measured_half_rate` gives the first; a rate that falls back below
    half (a load at one size, or a regime of dearer bytes) and rises again
    gives more. ``(0, smallest)`` where the smallest size already reaches it.

    >>> s = Series("all_reduce", 2, (1e4, 1e5, 1e6, 1e7), (4e-5, 1.5e-4, 4e-3, 1.1e-2), "ring")
    >>> half_rate_crossings(AlphaBeta(1e-5, 1e-9), s)     # 0.25, 0.67, 0.25, 0.91 GB/s against half of 1 GB/s
    [(10000.0, 100000.0), (1000000.0, 10000000.0)]
    """
    if model.beta == 0:
        return []
    out, below, was = [], 0.0, False
    for x, t in sorted(zip(series.nbytes, series.seconds)):
        now = _critical_rate(series, x, t) >= 0.5 * model.bandwidth
        if now and not was:
            out.append((below, float(x)))
        below, was = float(x), now
    return out


def median_relative_spread(series: Series | Sequence[Series]) -> float:
    """Median over every size of every series of ``(high - low) / median``: how noisy the timings are.

    With ``low``/``high`` the quartiles this is the relative interquartile
    range (0.1: the middle half of the calls lie within 10 % of the median's
    size). A series without a spread counts as 0.

    >>> s = Series("all_gather", 2, (1.0, 2.0), (1.0, 2.0), low=(0.9, 1.9), high=(1.1, 2.3))
    >>> round(median_relative_spread(s), 6)      # the median of 0.2/1 and 0.4/2
    0.2
    """
    values = []
    for s in _group(series):
        if s.low is None or s.high is None:
            values.extend([0.0] * len(s.seconds))
        else:
            values.extend((h - lo) / t for lo, h, t in zip(s.low, s.high, s.seconds))
    return float(np.median(values))


def collective_time_ab(op: str, nbytes: float, n: int, alpha: float, beta: float,
                       algorithm: str | None = None, gamma: float = 0.0) -> float:
    """Model time ``a alpha + b beta + c gamma`` in seconds (``beta`` may be 0, unlike a bandwidth)."""
    check_nonnegative("alpha", alpha)
    check_nonnegative("beta", beta)
    check_nonnegative("gamma", gamma)
    return AlphaBeta(alpha, beta, gamma).time(op, nbytes, n, algorithm)


def allreduce_model_times(nbytes: Sequence[float], n: int, alpha: float, beta: float,
                          algorithm: str = "ring") -> np.ndarray:
    """Noise-free all-reduce times (s) at each size, for tests and worked examples."""
    return np.array([collective_time_ab("all_reduce", x, n, alpha, beta, algorithm) for x in nbytes])


def synthetic_times(nbytes: Sequence[float], op: str, n: int, alpha: float, beta: float, noise: float = 0.05,
                    algorithm: str | None = None, seed: int = 0) -> np.ndarray:
    """Model times multiplied by log-normal noise of relative size ``noise`` (0 to 1), seeded.

    ``noise = 0.05`` gives each time a factor ``exp(N(0, 0.05))``, about +-5 %.

    >>> t = synthetic_times([1e6], "all_reduce", 4, 0.0, 1e-9, noise=0.0)
    >>> float(t[0])   # 2 (4-1)/4 MB at 1 GB/s
    0.0015
    """
    check_positive("alpha + beta", alpha + beta)
    if noise != 0:
        check_fraction("noise", noise, open_low=False)
    rng = np.random.default_rng(seed)
    clean = np.array([collective_time_ab(op, x, n, alpha, beta, algorithm) for x in nbytes])
    return clean * np.exp(rng.normal(0.0, noise, size=clean.shape))


# ---------------------------------------------------------------------------------- out of sample
@dataclass(frozen=True)
class HoldoutResult:
    """A fit graded on points it never saw: ``errors`` are the held-out relative errors."""

    models: tuple
    errors: tuple[float, ...]

    @property
    def median(self) -> float:
        """Median absolute relative error over every held-out point."""
        return float(np.median(np.abs(self.errors))) if self.errors else math.nan


def _pick(s: Series, idx: Sequence[int]) -> Series:
    def pick(values):
        return None if values is None else tuple(values[i] for i in idx)

    return Series(s.op, s.n, pick(s.nbytes), pick(s.seconds), s.algorithm, pick(s.low), pick(s.high), s.label,
                  s.library)


def split_sizes(series: Series, seed: int = 0) -> tuple[Series, Series]:
    """Cut ``series`` into the sizes a fit may see and the sizes held out to grade it: ``(fitted, held_out)``.

    The smallest and largest sizes are always fitted, so every held-out size
    lies between fitted ones (a grade of interpolation, not of
    extrapolation). The sizes in between go in neighbouring pairs, one of
    each pair held out; ``seed`` 0 holds out the first of every pair (the
    2nd, 4th, ... sizes: every other size), any other seed picks at random
    (seeded). An interior size left without a partner is held out.

    >>> s = Series("all_reduce", 2, tuple(2.0 ** np.arange(10, 17)), tuple(np.arange(1.0, 8.0)))
    >>> fitted, held = split_sizes(s)
    >>> [int(x) for x in held.nbytes]
    [2048, 8192, 32768]
    """
    k = len(series.nbytes)
    if k < 3:
        raise ValueError(f"{series.label} has too few sizes to split ({k}; need 3 or more)")
    order = sorted(range(k), key=lambda i: series.nbytes[i])
    inner = order[1:-1]
    rng = np.random.default_rng(seed)
    held = []
    for j in range(0, len(inner), 2):
        pair = inner[j:j + 2]
        held.append(pair[0] if seed == 0 or len(pair) == 1 else pair[int(rng.integers(2))])
    fitted = sorted(set(order) - set(held), key=lambda i: series.nbytes[i])
    return _pick(series, fitted), _pick(series, sorted(held, key=lambda i: series.nbytes[i]))


def holdout_sizes(series: Sequence[Series], fitter, lo: float = 0.0, seed: int = 0) -> HoldoutResult:
    """Fit each series on part of its sizes and grade it on the others (:func:`split_sizes`).

    ``fitter`` maps one :class:`Series` to a model (for instance
    ``fit_joint`` on a list of one, or :func:`fit_piecewise`). With
    ``seed`` 0 every other size is fitted and the sizes in between are
    predicted; other seeds hold out one size of each neighbouring pair at
    random. The grade never uses a point the fit saw. Only held-out sizes
    >= ``lo`` bytes are graded.

    >>> sizes = 2.0 ** np.arange(10, 20)
    >>> s = Series("all_reduce", 4, tuple(sizes), tuple(allreduce_model_times(sizes, 4, 2e-6, 1e-9)))
    >>> holdout_sizes([s], lambda x: fit_joint([x])).median < 1e-9
    True
    """
    models, errors = [], []
    for s in series:
        train, test = split_sizes(s, seed)
        model = fitter(train)
        models.append(model)
        errors.extend(float(e) for x, e in zip(test.nbytes, relative_errors(model, test)) if x >= lo)
    return HoldoutResult(tuple(models), tuple(errors))


def leave_one_out(series: Sequence[Series], fitter, lo: float = 0.0) -> HoldoutResult:
    """Predict each interior size of each series from a fit on all its other sizes (leave one out).

    The smallest and largest sizes are never left out, so every prediction
    lies between fitted sizes, as in :func:`holdout_sizes`; only sizes
    >= ``lo`` bytes are predicted. ``models`` holds nothing (one fit per
    point). Used to choose a setting (a number of regimes) from one set of
    sizes without touching sizes held out elsewhere.

    >>> sizes = 2.0 ** np.arange(10, 16)
    >>> s = Series("all_reduce", 4, tuple(sizes), tuple(allreduce_model_times(sizes, 4, 2e-6, 1e-9)))
    >>> r = leave_one_out([s], lambda x: fit_joint([x]))
    >>> len(r.errors), r.median < 1e-9
    (4, True)
    """
    errors = []
    for s in series:
        order = sorted(range(len(s.nbytes)), key=lambda i: s.nbytes[i])
        for i in order[1:-1]:
            if s.nbytes[i] < lo:
                continue
            model = fitter(_pick(s, [j for j in order if j != i]))
            errors.append(float(relative_errors(model, _pick(s, [i]))[0]))
    return HoldoutResult((), tuple(errors))


def transfer(models: Sequence[AlphaBeta | PiecewiseFit], fitted_on: Sequence[Series], targets: Sequence[Series],
             lo: float = 0.0) -> HoldoutResult:
    """Grade models fitted on one run (say 2 ranks) on another run of the same collectives (say 4 ranks).

    Series pair up by ``op``; each target is predicted with the model of its
    op and the target's own rank count and algorithm (the cost model's counts
    carry the fit from ``n`` to ``n'``). Sizes below ``lo`` bytes are not graded.
    """
    by_op = {s.op: m for s, m in zip(fitted_on, models)}
    used, errors = [], []
    for t in targets:
        if t.op not in by_op:
            continue
        used.append(by_op[t.op])
        errors.extend(float(e) for x, e in zip(t.nbytes, relative_errors(by_op[t.op], t)) if x >= lo)
    if not used:
        raise ValueError("targets share no collective with the fitted series")
    return HoldoutResult(tuple(used), tuple(errors))


@dataclass(frozen=True)
class RateCheck:
    r"""A fitted ``1/beta`` held against the bus bandwidth measured at one size, and the factors of the gap.

    All rates in bytes/s. ``fitted`` is ``1/beta`` of the model's regime at
    ``nbytes``, ``fitted_range`` its lowest and highest value over the fit
    on all sizes and the refits on each split's fitted sizes
    (:func:`split_sizes`); ``busbw`` is nccl-tests' bus bandwidth of the
    median time there (no fit), ``busbw_range`` the same of the quartiles.
    The three factors multiply exactly to ``busbw / fitted``:

    .. math:: \frac{\text{busbw}}{1/\beta} = \underbrace{\frac{f M}{b(M)}}_{\texttt{counts}}
              \cdot \underbrace{\frac{b\beta}{a\alpha + b\beta + c\gamma}}_{\texttt{byte\_share}}
              \cdot \underbrace{\frac{T_\text{model}(M)}{T(M)}}_{\texttt{miss}}

    with ``f`` the bus factor (:func:`commlib.cost.bus_factor`) and ``a``,
    ``b``, ``c`` the counts of the algorithm the series ran at ``M``.
    ``counts`` differs from 1 where that algorithm sends other bytes than
    busbw's convention counts, ``byte_share`` where start-ups (or the
    reduction) still take part of the time, ``miss`` where the model misses
    the measured time at ``M``. ``local`` is the rate per byte between the
    two largest sizes measured, ``(b(M) - b(M')) / (T(M) - T(M'))`` (inf if
    the time did not grow), and ``below`` is ``M'``.
    """

    label: str
    nbytes: float
    below: float
    algorithm: str
    fitted: float
    fitted_range: tuple[float, float]
    busbw: float
    busbw_range: tuple[float, float]
    counts: float
    byte_share: float
    miss: float
    local: float
    splits: int

    @property
    def ratio(self) -> float:
        """``busbw / fitted`` (0 where the fit found no cost per byte)."""
        return self.busbw / self.fitted

    @property
    def disagree(self) -> bool:
        """The fitted rate and busbw disagree by more than their spread: their ranges do not overlap."""
        return self.fitted_range[0] > self.busbw_range[1] or self.fitted_range[1] < self.busbw_range[0]

    @property
    def cause(self) -> str:
        """The factor farthest from 1 (on a log scale): ``"counts"``, ``"start-up"`` or ``"fit"``."""
        if math.isinf(self.fitted):
            return "fit"
        factors = {"counts": self.counts, "start-up": self.byte_share, "fit": self.miss}
        return max(factors, key=lambda k: abs(math.log(factors[k])) if factors[k] > 0 else math.inf)


def _regime_at(model: AlphaBeta | PiecewiseFit, nbytes: float) -> AlphaBeta:
    return model.regime(nbytes) if isinstance(model, PiecewiseFit) else model


def rate_check(model: AlphaBeta | PiecewiseFit, series: Series, fitter=None, nbytes: float | None = None,
               seeds: Sequence[int] = (0, 1, 2, 3, 4)) -> RateCheck:
    """Hold the fitted ``1/beta`` of ``model`` against the bus bandwidth ``series`` measured at ``nbytes``.

    ``nbytes`` defaults to the largest size measured. ``fitter`` maps a
    :class:`Series` to a model of the same kind as ``model`` (for instance
    ``lambda s: fit_joint([s])``); it is refitted on each split's fitted
    sizes (``seeds`` of :func:`split_sizes`) to give the fitted rate's
    spread; ``None`` gives no refits (the spread is the one fit). See
    :class:`RateCheck` for the factors of the gap.

    Timings that follow the model, with quartiles 2 % either side of each median:

    >>> sizes = tuple(2.0 ** np.arange(10, 27))
    >>> t = allreduce_model_times(sizes, 2, 5e-6, 1 / 2e9, "halving_doubling")
    >>> s = Series("all_reduce", 2, sizes, tuple(t), "halving_doubling", tuple(0.98 * t), tuple(1.02 * t))
    >>> c = rate_check(fit_joint([s]), s, lambda x: fit_joint([x]))
    >>> c.disagree, round(c.fitted / 1e9, 3), round(c.busbw / 1e9, 3)      # start-ups: 10 us of 33.6 ms
    (False, 2.0, 1.999)
    """
    if not isinstance(series, Series):
        raise ValueError(f"series must be a Series, got {type(series).__name__}")
    sizes = sorted(series.nbytes)
    if len(sizes) < 2:
        raise ValueError(f"{series.label} needs two sizes or more for a rate check, got {len(sizes)}")
    at = sizes[-1] if nbytes is None else float(nbytes)
    where = {x: i for i, x in enumerate(series.nbytes)}
    if at not in where or at == sizes[0]:
        raise ValueError(f"nbytes must be one of the measured sizes of {series.label} above the smallest "
                         f"({', '.join(f'{x:g}' for x in sizes[1:])} bytes), got {nbytes!r}")
    i = where[at]
    measured = series.seconds[i]
    below = sizes[sizes.index(at) - 1]
    m = _regime_at(model, at)
    terms = terms_at(series.op, at, series.n, series.algorithm)
    model_time = terms.steps * m.alpha + terms.bytes * m.beta + terms.reduced * m.gamma
    refits = [] if fitter is None else [fitter(split_sizes(series, seed)[0]) for seed in seeds]
    rates = [m.bandwidth] + [_regime_at(r, at).bandwidth for r in refits]
    busbw = bus_bandwidth(series.op, at, series.n, measured)
    if series.low is not None and series.high is not None:
        spread = (bus_bandwidth(series.op, at, series.n, series.high[i]),
                  bus_bandwidth(series.op, at, series.n, series.low[i]))
    else:
        spread = (busbw, busbw)
    grew = measured - series.seconds[where[below]]
    extra = terms.bytes - terms_at(series.op, below, series.n, series.algorithm).bytes
    if series.algorithm == "mpich":
        from .mpich import algorithm as mpich_algorithm

        algorithm = mpich_algorithm(series.op, at, series.n)
    else:
        algorithm = series.algorithm or "the default algorithm"
    counts = bus_factor(series.op, series.n) * at / terms.bytes if terms.bytes else math.inf
    return RateCheck(series.label, at, below, algorithm, m.bandwidth, (min(rates), max(rates)), busbw,
                     (min(spread), max(spread)), counts, terms.bytes * m.beta / model_time if model_time > 0 else 0.0,
                     model_time / measured, extra / grew if grew > 0 else math.inf, len(refits))
