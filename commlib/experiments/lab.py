r"""Experiments of chapter 8, the MPI lab: the fits of a measurement, graded, and the claims they back.

Model layer (no plotting). The lab measures the machine that runs it, so its
numbers change from run to run; what may not change is *how* a conclusion is
reached. Every conclusion of the lab that compares two models is a
:class:`commlib.experiments.claims.Claim` here, run on the measurement the
chapter made (``series=``), and rerun small on synthetic timings whose truth
is known (``small=True``) by the registry-wide test.

* ``ch08.regimes_out_of_sample``: does a piecewise fit (its number of
  regimes tuned over 2, 3, 4) predict sizes it never saw better than one
  alpha-beta line? Seeds are ways of holding sizes out
  (:func:`commlib.lab.fit.split_sizes`): seed 0 every other size, the others
  one size of each neighbouring pair at random. The metric is the pooled
  median ``|relative error|`` on held-out sizes from 4 KiB up.

>>> v = claims.run(regimes_claim(small=True))
>>> v.winner, v.best["piecewise"].config
('piecewise', {'regimes': 3})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..lab import explain, fit
from . import claims

__all__ = ["HOLDOUT_FROM", "REGIMES", "SPLITS", "synthetic_two_rank", "regimes_claim", "LabFits", "lab_fits"]

#: Held-out sizes below this many bytes are not graded: their times are a few microseconds, mostly noise.
HOLDOUT_FROM = 2**12
#: The piecewise contender's grid: its number of regimes.
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


def _piecewise(settings: dict, seed: int) -> float:
    k = settings["regimes"]
    return fit.holdout_sizes(settings["series"], lambda s: fit.fit_piecewise(s, regimes=k), lo=settings["lo"],
                             seed=seed).median


def _wording(v: claims.Verdict) -> str:
    line, pw = v.best["one line"], v.best["piecewise"]
    k = pw.config["regimes"]
    return explain.grade_sentence(line.mean, pw.mean, k, v.spread, v.wins, v.seeds, most=k == REGIMES[-1])


@claims.register("ch08.regimes_out_of_sample")
def regimes_claim(small: bool = False, series: Sequence[fit.Series] | None = None) -> claims.Claim:
    """One line against a piecewise fit at its best number of regimes, graded on held-out sizes.

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
         claims.Contender("piecewise", _piecewise, {"regimes": REGIMES},
                          "one (alpha, beta) per regime, cuts placed by the data (any regime of two sizes or more), "
                          "fitted on the same sizes")),
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
    """Fit one line and a piecewise model per series, the number of regimes the one held-out sizes pick."""
    verdict = claims.run(regimes_claim(series=series))
    k = verdict.best["piecewise"].config["regimes"]
    return LabFits(tuple(fit.fit_joint([s]) for s in series), tuple(fit.fit_piecewise(s, regimes=k) for s in series),
                   k, verdict)
