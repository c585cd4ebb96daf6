r"""Experiments of chapter 8, the MPI lab: the fits of a measurement, graded, and the claims they back.

Model layer (no plotting). The lab measures the machine that runs it, so its
numbers change from run to run; what may not change is *how* a conclusion is
reached. Every conclusion of the lab that compares two models is a
:class:`commlib.experiments.claims.Claim` here, run on the measurement the
chapter made (``series=``), and rerun small on synthetic timings whose truth
is known (``small=True``) by the registry-wide test.

* ``ch08.regimes_out_of_sample``: does a piecewise fit predict sizes it never
  saw better than one alpha-beta line? Seeds are ways of holding sizes out
  (:func:`commlib.lab.fit.split_sizes`): seed 0 every other size, the others
  one size of each neighbouring pair at random. The metric is the pooled
  median ``|relative error|`` on held-out sizes from 4 KiB up. The piecewise
  fit's number of regimes (2, 3 or 4) is chosen *inside* each split, by
  leave-one-out on that split's fitted sizes alone (:func:`choose_regimes`),
  so the held-out sizes that grade it never choose it: picking the best of
  three counts by the same held-out error that is then reported would
  flatter the regimes.

>>> v = claims.run(regimes_claim(small=True))
>>> v.winner, regimes_chosen(v)
('piecewise', (3, 3, 3, 3, 3))
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..lab import explain, fit
from . import claims

__all__ = ["HOLDOUT_FROM", "REGIMES", "SPLITS", "synthetic_two_rank", "choose_regimes", "regimes_inside",
           "regimes_chosen", "regimes_claim", "LabFits", "lab_fits", "chosen_fits", "rate_checks"]

#: Held-out sizes below this many bytes are not graded: their times are a few microseconds, mostly noise.
HOLDOUT_FROM = 2**12
#: The piecewise contender's choice: its number of regimes, chosen on fitted sizes only.
REGIMES = (2, 3, 4)
#: Ways of holding sizes out (seeds of :func:`commlib.lab.fit.split_sizes`).
SPLITS = (0, 1, 2, 3, 4)

_SIZES = tuple(float(2**k) for k in range(10, 27))


def synthetic_two_rank(noise: float = 0.03, seed: int = 0) -> tuple[fit.Series, ...]:
    """Two-rank timings with three planted regimes (eager, in cache, out of cache), seeded noise.

    The truth the small claim is held against: below 16 KiB a small alpha
    and a slow beta, up to 8 MiB a larger alpha and a fast beta, above it a
    beta three times slower (the buffers out of cache). All-reduce and
    all-gather, MPICH's counts, 1 KiB to 64 MiB.
    """
    rng = np.random.default_rng(seed)
    regimes = ((2**14, fit.AlphaBeta(2e-6, 1 / 1.0e9)), (2**23, fit.AlphaBeta(12e-6, 1 / 8e9)),
               (float("inf"), fit.AlphaBeta(0.0, 1 / 2.5e9)))
    out = []
    for op in ("all_reduce", "all_gather"):
        t = [next(m for cut, m in regimes if x < cut).time(op, x, 2, "mpich") for x in _SIZES]
        t = np.array(t) * np.exp(rng.normal(0.0, noise, len(t)))
        out.append(fit.Series(op, 2, _SIZES, tuple(float(v) for v in t), "mpich"))
    return tuple(out)


def _line(settings: dict, seed: int) -> float:
    return fit.holdout_sizes(settings["series"], lambda s: fit.fit_joint([s]), lo=settings["lo"], seed=seed).median


@functools.lru_cache(maxsize=256)
def choose_regimes(series: tuple[fit.Series, ...], lo: float = HOLDOUT_FROM) -> int:
    """The number of regimes (of :data:`REGIMES`) whose leave-one-out error on ``series`` is smallest.

    Every interior size >= ``lo`` of every series is predicted from a fit on
    that series' other sizes (:func:`commlib.lab.fit.leave_one_out`); the
    pooled median ``|relative error|`` ranks the counts, a tie going to the
    fewer regimes. Counts that need more sizes than a series has are skipped.
    Only the sizes in ``series`` are used: pass a split's fitted sizes, and
    the sizes it holds out play no part in the choice.
    """
    fewest = min(len(s.nbytes) for s in series) - 1
    counts = [k for k in REGIMES if 2 * k <= fewest] or [REGIMES[0]]
    scores = {k: fit.leave_one_out(series, lambda s, k=k: fit.fit_piecewise(s, regimes=k), lo=lo).median
              for k in counts}
    return min(counts, key=lambda k: (scores[k], k))


def regimes_inside(series: Sequence[fit.Series], seed: int, lo: float = HOLDOUT_FROM) -> int:
    """The number of regimes :func:`choose_regimes` picks on the fitted sizes of split ``seed``."""
    return choose_regimes(tuple(fit.split_sizes(s, seed)[0] for s in series), lo)


def regimes_chosen(v: claims.Verdict) -> tuple[int, ...]:
    """The number of regimes chosen inside each split of a verdict of :func:`regimes_claim`, seed by seed."""
    shared = v.claim.shared
    return tuple(regimes_inside(shared["series"], seed, shared["lo"]) for seed in v.claim.seeds)


def _piecewise(settings: dict, seed: int) -> float:
    k = regimes_inside(settings["series"], seed, settings["lo"])
    return fit.holdout_sizes(settings["series"], lambda s: fit.fit_piecewise(s, regimes=k), lo=settings["lo"],
                             seed=seed).median


def _wording(v: claims.Verdict) -> str:
    line, pw = v.best["one line"], v.best["piecewise"]
    return explain.grade_sentence(line.mean, pw.mean, regimes_chosen(v), v.spread, v.wins, v.seeds,
                                  most=REGIMES[-1])


@claims.register("ch08.regimes_out_of_sample")
def regimes_claim(small: bool = False, series: Sequence[fit.Series] | None = None) -> claims.Claim:
    """One line against a piecewise fit, its number of regimes chosen on fitted sizes, graded on held-out sizes.

    ``series``: the chapter's two-rank measurement. Without it the claim
    runs on :func:`synthetic_two_rank` (the small version, and the full one
    where no measurement is at hand: timing the machine is the chapter's
    job, not the registry's).
    """
    data = tuple(series) if series is not None else synthetic_two_rank()
    shared = {"series": data, "lo": HOLDOUT_FROM}
    return claims.Claim(
        "ch08.regimes_out_of_sample",
        "On the same measured sizes, does a piecewise alpha-beta fit predict sizes it never saw better than one line?",
        (claims.Contender("one line", _line, {}, "one (alpha, beta) per collective, fitted on the same sizes"),
         claims.Contender("piecewise", _piecewise, {},
                          "one (alpha, beta) per regime, cuts placed by the data (any regime of two sizes or more), "
                          "fitted on the same sizes; its number of regimes (2, 3 or 4) chosen by leave-one-out on "
                          "those fitted sizes alone")),
        metric="median |relative error| on held-out sizes from 4 KiB",
        seeds=SPLITS,
        shared=shared,
        wording=_wording,
        chapter="08_mpi_lab",
        source="measured on this machine" if series is not None else "synthetic: three planted regimes, 3 % noise",
    )


@dataclass(frozen=True)
class LabFits:
    """The two-rank run's fits and grades: the single lines, the piecewise fits, the held-out verdict."""

    single: tuple[fit.AlphaBeta, ...]
    piece: tuple[fit.PiecewiseFit, ...]
    regimes: int
    verdict: claims.Verdict

    @property
    def counts(self) -> tuple[int, ...]:
        """The number of regimes chosen inside each split, on its fitted sizes alone."""
        return regimes_chosen(self.verdict)

    @property
    def piecewise_better(self) -> bool:
        """The piecewise fit predicted held-out sizes better, by more than the spread over the splits."""
        return self.verdict.winner == "piecewise" and self.verdict.margin > self.verdict.spread

    @property
    def line_better(self) -> bool:
        """The single line predicted held-out sizes better, by more than the spread over the splits."""
        return self.verdict.winner == "one line" and self.verdict.margin > self.verdict.spread

    @property
    def chosen(self) -> tuple:
        """The models the held-out grade picks: the piecewise fits if they won clearly, else the single lines."""
        return self.piece if self.piecewise_better else self.single


def lab_fits(series: Sequence[fit.Series]) -> LabFits:
    """Fit one line and a piecewise model per series, and grade both on held-out sizes.

    The piecewise models shown use the number of regimes chosen most often
    inside the splits (a tie going to the fewer), each chosen on a split's
    fitted sizes alone: the grade is that of the rule that chose them, not
    of a count chosen by the grade.
    """
    verdict = claims.run(regimes_claim(series=series))
    tally = Counter(regimes_chosen(verdict))
    k = min(tally, key=lambda c: (-tally[c], c))
    return LabFits(tuple(fit.fit_joint([s]) for s in series), tuple(fit.fit_piecewise(s, regimes=k) for s in series),
                   k, verdict)


def chosen_fits(fits: LabFits, series: Sequence[fit.Series], known_gamma: float = 0.0) -> tuple:
    """The models the held-out grade chose (:attr:`LabFits.chosen`), fitted again on ``series`` with
    ``known_gamma`` (s per byte reduced) charged: the piecewise fits at their number of regimes, or the lines.
    """
    if fits.piecewise_better:
        return tuple(fit.fit_piecewise(s, regimes=fits.regimes, known_gamma=known_gamma) for s in series)
    return tuple(fit.fit_joint([s], known_gamma=known_gamma) for s in series)


def rate_checks(fits: LabFits, series: Sequence[fit.Series], chosen: bool = True) -> tuple[fit.RateCheck, ...]:
    """Each collective's fitted ``1/beta`` against its bus bandwidth measured at the largest size
    (:func:`commlib.lab.fit.rate_check`), with the fitted rate's spread over the same splits that grade the fits.

    ``chosen``: the models the held-out grade chose (:attr:`LabFits.chosen`, refitted on each split at the
    same number of regimes); else the single lines.
    """
    piecewise = chosen and fits.piecewise_better
    models = fits.chosen if chosen else fits.single

    def refit(s: fit.Series):
        return fit.fit_piecewise(s, regimes=fits.regimes) if piecewise else fit.fit_joint([s])

    return tuple(fit.rate_check(m, s, refit, seeds=SPLITS) for m, s in zip(models, series))
