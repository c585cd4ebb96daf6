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
  one size of each neighbouring pair at random. Each model is fitted on one
  sweep's fitted sizes and graded on the *other* sweep's held-out sizes
  (the run visits every size twice, in two shuffled orders): neighbouring
  sizes of one sweep may share a load episode, two sweeps do not. The
  metric is the pooled median ``|relative error|`` on held-out sizes from
  4 KiB up. The piecewise
  fit's number of regimes (2, 3 or 4) is chosen *inside* each split, by
  leave-one-out on that split's fitted sizes alone (:func:`choose_regimes`),
  so the held-out sizes that grade it never choose it: picking the best of
  three counts by the same held-out error that is then reported would
  flatter the regimes.

A load episode on a shared machine is correlated in time, not in size;
:func:`simulate_run` plants one and times the calls in either design, and
the small claim runs on the lab's design with the episode planted. One
simulated run says little of the grade's power: :func:`regimes_control`
reruns the claim on :data:`CONTROL_RUNS` simulated runs, with the load
episode and without it, and counts how often the held-out grade finds the
planted regimes (:class:`Detection`). Without load it finds them on every
run; under load it often ties, and now and then prefers the single line, so
a tie (or the line's win) on a loaded run is no evidence for one line.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..lab import explain, fit
from ..lab.measure import format_bytes
from . import claims

__all__ = ["HOLDOUT_FROM", "REGIMES", "SPLITS", "Episode", "Design", "DESIGN", "OLD_DESIGN", "EPISODE", "simulate_run",
           "synthetic_two_rank", "choose_regimes", "regimes_inside", "regimes_chosen", "regimes_claim", "LabFits",
           "lab_fits", "reproduced_cuts", "chosen_fits", "rate_checks", "grade_words", "top_band", "band_words",
           "top_band_claim", "CONTROL_RUNS", "Detection", "outcome", "detection", "regimes_control", "power_words",
           "control_sentence"]

#: Held-out sizes below this many bytes are not graded: their times are a few microseconds, mostly noise.
HOLDOUT_FROM = 2**12
#: The piecewise contender's choice: its number of regimes, chosen on fitted sizes only.
REGIMES = (2, 3, 4)
#: Ways of holding sizes out (seeds of :func:`commlib.lab.fit.split_sizes`).
SPLITS = (0, 1, 2, 3, 4)

_SIZES = tuple(float(2**k) for k in range(10, 27))
_OPS = ("all_reduce", "all_gather")


@dataclass(frozen=True)
class Episode:
    """A load episode on a shared machine, correlated in time and not in size.

    Every call that starts between ``start`` and ``end`` (fractions of the
    run's calls, in the order they were made) takes ``delay`` seconds longer,
    as a rank does that waits for its core while another program runs.
    """

    start: float
    end: float
    delay: float


@dataclass(frozen=True)
class Design:
    """How a run orders its calls: the sizes' ``order`` in each of ``sweeps`` sweeps
    (:func:`commlib.lab.measure.plan`), and whether the collectives are timed ``in_turns`` at each size
    (else one collective's whole sweep after another's)."""

    order: str
    sweeps: int
    in_turns: bool


#: The lab's design (:func:`commlib.lab.measure.measure`): two shuffled sweeps, the collectives in turns.
DESIGN = Design("shuffled", 2, True)
#: The design it replaced: one sorted sweep of one collective after another, where a load episode that
#: spans part of a sweep covers a run of neighbouring sizes of one collective.
OLD_DESIGN = Design("sorted", 1, False)
#: The small claim's planted load episode: 2 ms on every call made from 56 % to 88 % of the run. Under
#: :data:`OLD_DESIGN` that is all-gather from 4 KiB to 4 MiB, as a load episode once made it look.
EPISODE = Episode(0.56, 0.88, 2e-3)
#: The three planted regimes: below 16 KiB, up to 8 MiB, above (size limit in bytes, model).
_TRUTH = ((2**14, fit.AlphaBeta(2e-6, 1 / 1.0e9)), (2**23, fit.AlphaBeta(12e-6, 1 / 8e9)),
          (float("inf"), fit.AlphaBeta(0.0, 1 / 2.5e9)))


def simulate_run(design: Design = DESIGN, episode: Episode | None = EPISODE, noise: float = 0.03, seed: int = 0,
                 calls: int = 10) -> tuple[tuple[fit.Series, ...], ...]:
    """Two-rank timings with three planted regimes, made call by call as ``design`` orders the calls.

    All-reduce and all-gather, MPICH's counts, 1 KiB to 64 MiB; ``calls``
    calls per size in all, shared out over the sweeps; each call's time is
    the planted model's times seeded log-normal ``noise``, plus the
    ``episode``'s delay if it starts inside it. Returns one tuple of series
    per sweep: each size's median and quartiles over that sweep's calls.
    """
    from ..lab.measure import plan

    rng = np.random.default_rng(seed)
    per = max(1, calls // design.sweeps)
    schedule = []  # (sweep, op, size) in the order the calls are made
    for k, sizes in enumerate(plan([int(x) for x in _SIZES], design.sweeps, design.order, seed)):
        if design.in_turns:
            schedule += [(k, op, x) for x in sizes for _ in range(per) for op in _OPS]
        else:
            schedule += [(k, op, x) for op in _OPS for x in sizes for _ in range(per)]
    times: dict[tuple, list[float]] = {}
    for i, (k, op, x) in enumerate(schedule):
        t = next(m for cut, m in _TRUTH if x < cut).time(op, x, 2, "mpich") * float(np.exp(rng.normal(0.0, noise)))
        if episode is not None and episode.start <= i / len(schedule) < episode.end:
            t += episode.delay
        times.setdefault((k, op, float(x)), []).append(t)
    out = []
    for k in range(design.sweeps):
        sweep = []
        for op in _OPS:
            q = [np.percentile(times[(k, op, x)], [25, 50, 75]) for x in _SIZES]
            sweep.append(fit.Series(op, 2, _SIZES, tuple(float(v[1]) for v in q), "mpich",
                                    tuple(float(v[0]) for v in q), tuple(float(v[2]) for v in q)))
        out.append(tuple(sweep))
    return tuple(out)


def synthetic_two_rank(noise: float = 0.03, seed: int = 0) -> tuple[fit.Series, ...]:
    """Two-rank timings with three planted regimes (eager, in cache, out of cache), seeded noise, no load.

    The truth the small claim is held against: below 16 KiB a small alpha
    and a slow beta, up to 8 MiB a larger alpha and a fast beta, above it a
    beta three times slower (the buffers out of cache). All-reduce and
    all-gather, MPICH's counts, 1 KiB to 64 MiB, one sweep.
    """
    return simulate_run(Design("sorted", 1, True), None, noise, seed)[0]


def _pairs(sweeps: Sequence) -> list[tuple[int, int]]:
    """(fitted on, graded on): each sweep graded against the other; one sweep graded against itself."""
    return [(a, b) for a in range(len(sweeps)) for b in range(len(sweeps)) if a != b] or [(0, 0)]


def _cross(settings: dict, seed: int, fitter_for, only: int | None = None) -> float:
    """Median |relative error| of models fitted on one sweep's fitted sizes, on the other sweep's held-out sizes;
    ``only``: the index of the one series (collective) whose errors count, the fitter still seeing them all."""
    errors = []
    band = settings.get("band") or (0.0,) * len(settings["sweeps"][0])   # each series' graded sizes start here
    for a, b in _pairs(settings["sweeps"]):
        train = tuple(fit.split_sizes(s, seed)[0] for s in settings["sweeps"][a])
        fitter = fitter_for(train)
        for j, (sa, sb, start) in enumerate(zip(train, settings["sweeps"][b], band)):
            if only is not None and j != only:
                continue
            test = fit.split_sizes(sb, seed)[1]
            model = fitter(sa)
            errors.extend(float(e) for x, e in zip(test.nbytes, fit.relative_errors(model, test))
                          if x >= max(settings["lo"], start))
    return float(np.median(np.abs(errors))) if errors else math.nan


def _line(settings: dict, seed: int) -> float:
    return _cross(settings, seed, lambda train: lambda s: fit.fit_joint([s]))


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
    """The number of regimes chosen inside each split and sweep fitted on, of a verdict of :func:`regimes_claim`."""
    shared = v.claim.shared
    return tuple(regimes_inside(shared["sweeps"][a], seed, shared["lo"]) for seed in v.claim.seeds
                 for a, _ in _pairs(shared["sweeps"]))


def _piecewise_fitter(settings: dict):
    """The piecewise fitter of a split: its number of regimes chosen jointly on the split's fitted sizes."""
    def fitter_for(train):
        k = choose_regimes(train, settings["lo"])
        return lambda s: fit.fit_piecewise(s, regimes=k)

    return fitter_for


def _piecewise(settings: dict, seed: int) -> float:
    return _cross(settings, seed, _piecewise_fitter(settings))


#: Seeds of the simulated runs (:func:`simulate_run`) on which the held-out grade's power is measured.
CONTROL_RUNS = tuple(range(8))


def outcome(v: claims.Verdict) -> str:
    """What a verdict of :func:`regimes_claim` (or :func:`top_band_claim`) found: ``"piecewise"`` or ``"one line"``
    where that model predicted held-out sizes better by more than the spread over the splits, else ``"tie"``
    (the rule of :attr:`LabFits.piecewise_better` and :attr:`LabFits.line_better`)."""
    if not math.isfinite(v.margin) or v.margin <= v.spread:
        return "tie"
    return v.winner


@dataclass(frozen=True)
class Detection:
    """How often the held-out grade of :func:`regimes_claim` found three planted regimes that are there.

    ``outcomes``: per simulated run (seeds ``runs``), :func:`outcome` of the claim on it; ``episode``: whether
    the run had the planted load episode (:data:`EPISODE`).
    """

    runs: tuple[int, ...]
    outcomes: tuple[str, ...]
    episode: bool

    @property
    def found(self) -> int:
        """Runs on which the piecewise fits predicted held-out sizes clearly better: the regimes found."""
        return self.outcomes.count("piecewise")

    @property
    def tied(self) -> int:
        """Runs on which the grade could not tell the two apart."""
        return self.outcomes.count("tie")

    @property
    def wrong(self) -> int:
        """Runs on which the single line predicted held-out sizes clearly better: the wrong model, confidently."""
        return self.outcomes.count("one line")


_CODES = {"piecewise": 1.0, "tie": 0.0, "one line": -1.0}


def detection(episode: Episode | None = EPISODE, runs: Sequence[int] = CONTROL_RUNS) -> Detection:
    """:func:`regimes_claim` on each of the simulated runs ``runs`` (three planted regimes, the lab's design,
    ``episode`` planted or None), and what it found on each (:func:`outcome`). Cached on disk per version of
    the code (:func:`commlib.experiments.claims.cached`): about half a second a run."""
    runs = tuple(int(r) for r in runs)

    def compute():
        return [_CODES[outcome(claims.run(regimes_claim(sweeps=simulate_run(DESIGN, episode, seed=r))))]
                for r in runs]

    name = (f"ch08-detection-{'none' if episode is None else f'{episode.start}-{episode.end}-{episode.delay}'}-"
            + "-".join(map(str, runs)))
    codes = claims.cached(name, compute)
    back = {v: k for k, v in _CODES.items()}
    return Detection(runs, tuple(back[c] for c in codes), episode is not None)


def regimes_control(runs: Sequence[int] = CONTROL_RUNS) -> tuple[Detection, Detection]:
    """The held-out grade's control: its :func:`detection` of the planted regimes on the simulated runs ``runs``,
    with the planted load episode (:data:`EPISODE`) and without it."""
    return detection(EPISODE, runs), detection(None, runs)


def power_words(runs: Sequence[int] = CONTROL_RUNS) -> str:
    """What the control says of the grade's power under load, in words (:func:`commlib.lab.explain.power_phrase`)."""
    loaded, clean = regimes_control(runs)
    return explain.power_phrase(loaded.found, loaded.wrong, len(loaded.runs), clean.found, len(clean.runs))


def grade_words(v: claims.Verdict, tally: bool = True, loaded: bool = True) -> str:
    """The verdict of :func:`regimes_claim` in words (:func:`commlib.lab.explain.grade_sentence`); ``tally``:
    with False, how often each number of regimes was chosen is left to
    :func:`commlib.views.lab.regime_count_table`. ``loaded``: the run may have been loaded (False only where
    its load checks found nothing); a tie or a win of the line then says what the control found under load
    (:func:`power_words`)."""
    line, pw = v.best["one line"], v.best["piecewise"]
    power = power_words() if loaded and outcome(v) != "piecewise" else ""
    return explain.grade_sentence(line.mean, pw.mean, regimes_chosen(v), v.spread, v.wins, v.seeds,
                                  most=REGIMES[-1], sweeps=len(v.claim.shared["sweeps"]), tally=tally,
                                  loaded=loaded, power=power)


def _wording(v: claims.Verdict) -> str:
    return grade_words(v)


def control_sentence(runs: Sequence[int] = CONTROL_RUNS) -> str:
    """The control of :func:`regimes_claim` in a sentence: on how many simulated runs, with the load episode and
    without, the held-out grade found the planted regimes (:func:`commlib.lab.explain.control_sentence`)."""
    loaded, clean = regimes_control(runs)
    return explain.control_sentence(loaded.found, loaded.tied, loaded.wrong, len(loaded.runs), clean.found,
                                    clean.wrong, len(clean.runs), loaded.runs)


def _synthetic_wording(v: claims.Verdict) -> str:
    return grade_words(v) + ". " + control_sentence()


@claims.register("ch08.regimes_out_of_sample")
def regimes_claim(small: bool = False, series: Sequence[fit.Series] | None = None,
                  sweeps: Sequence[Sequence[fit.Series]] | None = None) -> claims.Claim:
    """One line against a piecewise fit, its number of regimes chosen on fitted sizes, graded on held-out sizes
    of the other sweep.

    ``sweeps``: the chapter's two-rank measurement, one tuple of series per
    sweep over the sizes; each model is fitted on one sweep's fitted sizes
    and graded on the other sweep's held-out sizes, so a load episode that
    fell on a few sizes of one sweep cannot grade the regimes it made.
    ``series``: a run of one sweep (graded against itself). Without either
    the claim runs on :func:`simulate_run`: three planted regimes and a
    planted load episode under the lab's design (the small version, and the
    full one where no measurement is at hand: timing the machine is the
    chapter's job, not the registry's).
    """
    if sweeps is not None:
        data = tuple(tuple(s) for s in sweeps)
    elif series is not None:
        data = (tuple(series),)
    else:
        data = simulate_run()
    live = sweeps is not None or series is not None
    shared = {"sweeps": data, "lo": HOLDOUT_FROM}
    return claims.Claim(
        "ch08.regimes_out_of_sample",
        "On the same measured sizes, does a piecewise alpha-beta fit predict sizes it never saw better than one line?",
        (claims.Contender("one line", _line, {}, "one (alpha, beta) per collective, fitted on the same sizes"),
         claims.Contender("piecewise", _piecewise, {},
                          "one (alpha, beta) per regime, cuts placed by the data (any regime of two sizes or more), "
                          "fitted on the same sizes; its number of regimes (2, 3 or 4) chosen by leave-one-out on "
                          "those fitted sizes alone")),
        metric="median |relative error| on held-out sizes from 4 KiB, of the other sweep",
        seeds=SPLITS,
        shared=shared,
        wording=_wording if live else _synthetic_wording,
        chapter="08_mpi_lab",
        source=("measured on this machine" if live else
                "synthetic: three planted regimes, 3 % noise, and a load episode of 2 ms on every call made from "
                "56 % to 88 % of the run, timed as the lab times (two shuffled sweeps, the collectives in turns)"),
        live=("one simulated run (seed 0) with three planted regimes and a planted load episode, timed as the lab "
              "times"),
    )


def top_band(series: Sequence[fit.Series], regimes: int) -> tuple[float, ...]:
    """Where each series' top regime starts (bytes): the last cut of its piecewise fit at ``regimes`` regimes,
    or its third-largest size if that is lower, so that the band holds three sizes or more.

    The largest size is always fitted (:func:`commlib.lab.fit.split_sizes`), so a band of fewer sizes
    would hold hardly a held-out size to grade.
    """
    out = []
    for s in series:
        cuts = fit.fit_piecewise(s, regimes=regimes).crossovers if regimes > 1 else ()
        third = sorted(s.nbytes)[-3]
        out.append(min(cuts[-1], third) if cuts else third)
    return tuple(out)


def band_words(v: claims.Verdict) -> str:
    """The verdict of :func:`top_band_claim` in words (:func:`commlib.lab.explain.band_sentence`)."""
    shared = v.claim.shared
    first = shared["sweeps"][0][0]
    start = shared["band"][0]
    graded = [sum(1 for s, b in zip(shared["sweeps"][other], shared["band"])
                  for x in fit.split_sizes(s, seed)[1].nbytes if x >= max(shared["lo"], b))
              for seed in v.claim.seeds for _, other in _pairs(shared["sweeps"])]   # the points _cross grades
    return explain.band_sentence(v.best["one line"].mean, v.best["piecewise"].mean, v.spread, v.wins, v.seeds,
                                 first.op.replace("_", "-"), start, first.nbytes, graded)


@claims.register("ch08.top_band_out_of_sample")
def top_band_claim(small: bool = False, sweeps: Sequence[Sequence[fit.Series]] | None = None,
                   band: Sequence[float] | None = None) -> claims.Claim:
    """:func:`regimes_claim` graded on the largest sizes alone: held-out sizes from each collective's top cut up.

    The median miss over every held-out size from 4 KiB cannot see a regime
    of the largest three to five sizes: a line that misses all of them by
    half still has a small median over fourteen. Here the same fits, on the
    same splits and sweeps, are graded only on the held-out sizes at or
    above ``band`` (one start per collective, bytes: :func:`top_band` of
    the piecewise fit the chapter shows). The band is placed by a fit on
    both sweeps, the held-out sizes among them; each model is still fitted
    on one sweep's fitted sizes and graded on the other sweep, so a bend
    that one sweep's load made does not come back in the other. Without
    ``sweeps``: :func:`simulate_run`, whose planted top regime starts at 8 MiB.
    """
    data = simulate_run() if sweeps is None else tuple(tuple(s) for s in sweeps)
    live = sweeps is not None
    if band is None:
        merged = [fit.least_loaded(list(group)) for group in zip(*data)]
        band = top_band(merged, choose_regimes(tuple(merged)))
    if len(band) != len(data[0]):
        raise ValueError(f"band must hold one start per collective ({len(data[0])}), got {len(band)}")
    return claims.Claim(
        "ch08.top_band_out_of_sample",
        "Above each collective's top cut, does the piecewise fit predict sizes it never saw better than one line?",
        (claims.Contender("one line", _line, {}, "one (alpha, beta) per collective, fitted on the same sizes"),
         claims.Contender("piecewise", _piecewise, {},
                          "one (alpha, beta) per regime, its number of regimes (2, 3 or 4) chosen by leave-one-out "
                          "on the fitted sizes alone, as for ch08.regimes_out_of_sample")),
        metric="median |relative error| on held-out sizes of the other sweep, from each collective's top cut up",
        seeds=SPLITS,
        shared={"sweeps": data, "lo": HOLDOUT_FROM, "band": tuple(float(b) for b in band)},
        wording=band_words,
        chapter="08_mpi_lab",
        source=("measured on this machine" if live else
                "synthetic: three planted regimes (the top one from 8 MiB), 3 % noise, and a planted load episode, "
                "timed as the lab times"),
        live="timings with three planted regimes and a planted load episode, timed as the lab times",
    )


def reproduced_cuts(piece: fit.PiecewiseFit, sweep_pieces: Sequence[fit.PiecewiseFit],
                    sizes: Sequence[float], within: int = 1) -> tuple[bool, ...]:
    """For each cut of ``piece``, whether every sweep's own fit (``sweep_pieces``) cuts within ``within`` gaps of
    ``sizes`` of it (0: in the same gap).

    A cut is placed in a gap between two measured sizes; a cut that only a
    load episode made falls where that sweep's episode fell, and the other
    sweep, whose load fell elsewhere, does not put one there. A bend that
    spreads over two neighbouring gaps, as where buffers outgrow a cache over
    a range of sizes, is cut in one gap or the other by a fit, by the noise
    of each sweep: so a cut counts as reproduced where each sweep's fit cuts
    within one size step of it.

    >>> a = fit.PiecewiseFit((3000.0, 40000.0), (fit.AlphaBeta(1, 1), fit.AlphaBeta(1, 1), fit.AlphaBeta(1, 1)))
    >>> b = fit.PiecewiseFit((2900.0, 9000.0), (fit.AlphaBeta(1, 1), fit.AlphaBeta(1, 1), fit.AlphaBeta(1, 1)))
    >>> reproduced_cuts(a, [a, b], [1024.0 * 2**k for k in range(8)])
    (True, False)
    >>> c = fit.PiecewiseFit((2900.0, 20000.0), (fit.AlphaBeta(1, 1), fit.AlphaBeta(1, 1), fit.AlphaBeta(1, 1)))
    >>> ladder = [1024.0 * 2**k for k in range(8)]
    >>> reproduced_cuts(a, [a, c], ladder), reproduced_cuts(a, [a, c], ladder, within=0)
    ((True, True), (True, False))
    """
    ladder = sorted(sizes)

    def gap(cut: float) -> int:
        return bisect.bisect_left(ladder, cut)

    return tuple(all(any(abs(gap(c) - gap(d)) <= within for d in p.crossovers) for p in sweep_pieces)
                 for c in piece.crossovers)


@dataclass(frozen=True)
class LabFits:
    """The two-rank run's fits and grades: the single lines, the piecewise fits, the held-out verdict.

    ``piece`` is fitted on every call of both sweeps; ``sweep_pieces`` holds, per sweep, each collective's
    fit at the same number of regimes on that sweep's calls alone; ``reproduced`` says, per collective and
    cut of ``piece``, whether every sweep's own fit cuts there too, within one size step (:func:`reproduced_cuts`).
    """

    single: tuple[fit.AlphaBeta, ...]
    piece: tuple[fit.PiecewiseFit, ...]
    regimes: int
    verdict: claims.Verdict
    sweep_pieces: tuple[tuple[fit.PiecewiseFit, ...], ...] = ()
    reproduced: tuple[tuple[bool, ...], ...] = ()
    #: The same grade on the largest sizes alone (:func:`top_band_claim`), and where each collective's band starts.
    top_verdict: claims.Verdict | None = None
    band: tuple[float, ...] = ()

    @property
    def counts(self) -> tuple[int, ...]:
        """The number of regimes chosen inside each split (and sweep fitted on), on its fitted sizes alone."""
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

    @property
    def top_winner(self) -> str:
        """Who predicted held-out sizes above the top cut better, by more than the spread: ``"piecewise"``,
        ``"one line"``, or ``"tie"`` (also where the band was not graded)."""
        v = self.top_verdict
        if v is None or not math.isfinite(v.margin) or v.margin <= v.spread:
            return "tie"
        return v.winner

    @property
    def by_size(self) -> tuple:
        """The models the calculator uses, each where it predicted held-out sizes better.

        The piecewise fits where they won over all sizes; else, where the top
        regime won above the top cut, each collective's single line below its
        band and its top regime from the band up (a :class:`commlib.lab.fit.PiecewiseFit`
        of two parts); else the single lines.
        """
        if self.piecewise_better:
            return self.piece
        if self.top_winner == "piecewise":
            return tuple(_from_band(line, p, b) for line, p, b in zip(self.single, self.piece, self.band))
        return self.single


def _from_band(line: fit.AlphaBeta, piece: fit.PiecewiseFit, start: float) -> fit.PiecewiseFit:
    """``line`` below ``start`` bytes, ``piece`` from there up (its regimes and cuts above ``start``).

    >>> p = fit.PiecewiseFit((1e6,), (fit.AlphaBeta(1e-6, 1e-9), fit.AlphaBeta(0.0, 2e-9)))
    >>> _from_band(fit.AlphaBeta(2e-6, 1e-9), p, 1e6).models[1] == p.high
    True
    """
    above = [c for c in piece.crossovers if c > start]
    return fit.PiecewiseFit((start, *above), (line, piece.regime(start), *(piece.regime(c) for c in above)))


def lab_fits(series: Sequence[fit.Series], sweeps: Sequence[Sequence[fit.Series]] | None = None) -> LabFits:
    """Fit one line and a piecewise model per series, and grade both on held-out sizes of the other sweep.

    ``series``: the timings to fit (the lab's: each size's less loaded sweep,
    :func:`commlib.lab.runner.least_loaded_series`); ``sweeps``: the same collectives, one
    tuple per sweep (``None``: one sweep, ``series`` itself). The piecewise
    models shown use the number of regimes chosen most often inside the
    splits (a tie going to the fewer), each chosen on a split's fitted sizes
    alone: the grade is that of the rule that chose them, not of a count
    chosen by the grade.
    """
    verdict = claims.run(regimes_claim(series=series) if sweeps is None else regimes_claim(sweeps=sweeps))
    tally = Counter(regimes_chosen(verdict))
    k = min(tally, key=lambda c: (-tally[c], c))
    piece = tuple(fit.fit_piecewise(s, regimes=k) for s in series)
    per = tuple(tuple(fit.fit_piecewise(s, regimes=k) for s in sw) for sw in (sweeps or (series,)))
    reproduced = tuple(reproduced_cuts(p, [sw[i] for sw in per], s.nbytes) for i, (p, s) in enumerate(zip(piece, series)))
    band = top_band(series, k)
    top = claims.run(top_band_claim(sweeps=sweeps or (tuple(series),), band=band))
    return LabFits(tuple(fit.fit_joint([s]) for s in series), piece, k, verdict, per, reproduced, top, band)


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


def grades_rows(v: claims.Verdict, band: claims.Verdict) -> list[tuple[str, str, float, float]]:
    """The two held-out grades of the two-rank run as rows of :func:`commlib.views.lab.grades_table`: what was
    held out, and each model's median miss, averaged over the ways of holding sizes out."""
    shared = band.claim.shared
    graded = [sum(1 for s, b in zip(shared["sweeps"][other], shared["band"])
                  for x in fit.split_sizes(s, seed)[1].nbytes if x >= max(shared["lo"], b))
              for seed in band.claim.seeds for _, other in _pairs(shared["sweeps"])]
    ways = explain.about(len(v.claim.seeds))
    return [(f"every size from {format_bytes(v.claim.shared['lo'])}",
             f"about half the sizes, {ways} ways, graded on the other sweep", v.best["one line"].mean,
             v.best["piecewise"].mean),
            ("the largest sizes alone, from each collective's top cut",
             f"{min(graded)} to {max(graded)} points, the same {ways} ways", band.best["one line"].mean,
             band.best["piecewise"].mean)]


def grades_short(v: claims.Verdict, band: claims.Verdict) -> str:
    """Who won each held-out grade, in two short sentences, or one where both say the same (the numbers are in
    :func:`grades_rows`'s table)."""
    def who(x: claims.Verdict) -> str:
        won = outcome(x)
        name = {"piecewise": "the regime fits", "one line": "the single lines"}.get(won)
        if name is None:
            return "neither model predicted held-out sizes better by more than the spread over the ways"
        on = (f"all {explain.about(x.seeds)}" if x.wins == x.seeds else
              f"{explain.about(x.wins)} of the {explain.about(x.seeds)}")
        return f"{name} predicted held-out sizes better, on {on} ways"
    if who(v) == who(band):  # one sentence where both grades say the same
        return f"Over every size and on the largest sizes alone, {who(v)}."
    return f"Over every size, {who(v)}. On the largest sizes alone, {who(band)}."


@dataclass(frozen=True)
class CollectiveGrade:
    """One collective's share of a pooled held-out grade (:func:`regimes_claim` or :func:`top_band_claim`): the
    same splits, sweep swap and jointly chosen number of regimes, its own held-out sizes alone."""
    op: str
    line: tuple[float, ...]    # the single line's median miss, per split
    piece: tuple[float, ...]   # the regime fits', per split

    @property
    def line_mean(self) -> float:
        return float(np.mean(self.line))

    @property
    def piece_mean(self) -> float:
        return float(np.mean(self.piece))

    @property
    def line_wins(self) -> int:
        """Splits on which the single line missed less."""
        return sum(1 for a, b in zip(self.line, self.piece) if a < b)


def by_collective(v: claims.Verdict) -> tuple[CollectiveGrade, ...]:
    """The pooled grade ``v`` taken apart collective by collective (:class:`CollectiveGrade`)."""
    shared = v.claim.shared
    line = lambda train: lambda s: fit.fit_joint([s])  # noqa: E731
    return tuple(CollectiveGrade(s.op, tuple(_cross(shared, seed, line, only=j) for seed in v.claim.seeds),
                                 tuple(_cross(shared, seed, _piecewise_fitter(shared), only=j)
                                       for seed in v.claim.seeds))
                 for j, s in enumerate(shared["sweeps"][0]))


def collective_rows(every: Sequence[CollectiveGrade], top: Sequence[CollectiveGrade]
                    ) -> list[tuple[str, str, float, float]]:
    """Rows of :func:`commlib.views.lab.grades_table` for each collective's share of the two grades."""
    return [row for e, t in zip(every, top) for row in
            ((f"{e.op.replace('_', '-')}: every size", "its own share of the same points", e.line_mean, e.piece_mean),
             (f"{t.op.replace('_', '-')}: the largest sizes", "its own share of the same points", t.line_mean,
              t.piece_mean))]


def collective_part(e: CollectiveGrade, t: CollectiveGrade) -> str:
    """One collective's verdict on both held-out grades, in the one wording the chapter uses wherever it parts
    from the pooled grade: which model missed less over every size (with the splits it won) and which on the
    largest sizes (``e`` over every size, ``t`` from its top cut up).

    >>> g = lambda op, line, piece: CollectiveGrade(op, (line,), (piece,))
    >>> print(collective_part(g("all_reduce", 0.10, 0.13), g("all_reduce", 0.38, 0.22)))
    ... # doctest: +NORMALIZE_WHITESPACE
    for all-reduce the single line missed held-out sizes less over every size (10 % against 13 %, on one of the
    one ways), but on its largest sizes the regime fits missed less (22 % against 38 %)
    """
    name = e.op.replace("_", "-")
    every = ("the single line missed held-out sizes less over every size" if e.line_mean <= e.piece_mean else
             "the regime fits missed held-out sizes less over every size")
    lo, hi = sorted((e.line_mean, e.piece_mean))
    wins = e.line_wins if e.line_mean <= e.piece_mean else len(e.line) - e.line_wins
    text = (f"for {name} {every} ({100 * lo:.0f} % against {100 * hi:.0f} %, on {explain.about(wins)} of the "
            f"{explain.about(len(e.line))} ways)")
    same = (e.line_mean <= e.piece_mean) == (t.line_mean <= t.piece_mean)
    tlo, thi = sorted((t.line_mean, t.piece_mean))
    if same:
        return text + f", and on its largest sizes too ({100 * tlo:.0f} % against {100 * thi:.0f} %)"
    who = "the regime fits" if t.piece_mean < t.line_mean else "the single line"
    return text + f", but on its largest sizes {who} missed less ({100 * tlo:.0f} % against {100 * thi:.0f} %)"


def collective_words(every: Sequence[CollectiveGrade], top: Sequence[CollectiveGrade]) -> str:
    """Which collectives part from the pooled grade over every size, in a sentence (:func:`collective_part`; the
    numbers in :func:`collective_rows`); where each one's regime fits missed less, as the pooled ones did, it
    says so."""
    lost = [(e, t) for e, t in zip(every, top) if e.line_mean <= e.piece_mean]
    if not lost:
        return (f"Both grades pool the {explain.about(len(every))} collectives; taken one by one, the regime fits "
                "missed less on each.")
    return (f"Both grades pool the {explain.about(len(every))} collectives, and taken one by one they part: "
            + "; ".join(collective_part(e, t) for e, t in lost) + ".")


def collective_short(every: Sequence[CollectiveGrade], top: Sequence[CollectiveGrade]) -> str:
    """The scope of a pooled grade in a few words, for a takeaway: empty where every collective's regime fits
    missed held-out sizes less over every size, as the pooled ones did; else "pooled over the four collectives"
    and, for each collective that parts from the pool, where its regime fits still won (its largest sizes) or
    that they did not.

    >>> g = lambda op, line, piece: CollectiveGrade(op, (line,), (piece,))
    >>> collective_short([g("all_reduce", 0.10, 0.13), g("broadcast", 0.2, 0.1)],
    ...                  [g("all_reduce", 0.3, 0.1), g("broadcast", 0.2, 0.1)])
    'pooled over the two collectives (for all-reduce alone, only on its largest sizes)'
    >>> collective_short([g("all_reduce", 0.2, 0.1)], [g("all_reduce", 0.3, 0.1)])
    ''
    """
    lost = [(e, t) for e, t in zip(every, top) if e.line_mean <= e.piece_mean]
    if not lost:
        return ""
    parts = [f"for {e.op.replace('_', '-')} alone, " + ("only on its largest sizes" if t.piece_mean < t.line_mean
                                                         else "on none of its sizes")
             for e, t in lost]
    return f"pooled over the {explain.about(len(every))} collectives (" + "; ".join(parts) + ")"


def collective_scope(every: Sequence[CollectiveGrade], top: Sequence[CollectiveGrade]) -> str:
    """A short scope for sentences that apply the pooled grade (the calculator's, a takeaway's), in the words of
    :func:`collective_part`: empty where every collective's regime fits missed less over every size."""
    lost = [(e, t) for e, t in zip(every, top) if e.line_mean <= e.piece_mean]
    if not lost:
        return ""
    return (f"That grade pools the {explain.about(len(every))} collectives: "
            + "; ".join(collective_part(e, t) for e, t in lost) + ".")
