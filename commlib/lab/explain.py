"""Words for the lab's conclusions, chosen from the measurement and its controls.

The lab's numbers differ from machine to machine and from run to run, so
every sentence that interprets them is picked here by the numbers, next to
the control it is held against: the memory-copy rate for ``1/beta``, the
cost of handing a core over for ``alpha``, a fit graded on points it never
saw for the model's accuracy. Each function returns a phrase that completes
a sentence of the chapter; tests pin which phrase each regime of numbers gets.

>>> rate_phrase(5e9, 5.2e9)
'about the rate at which this machine copies memory'
>>> rate_phrase(2e9, 6e9)
'well below the rate at which this machine copies memory'
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..units import check_fraction, check_nonnegative, check_positive
from .measure import format_bytes

__all__ = ["rate_phrase", "rate_conclusion", "rate_flag", "alpha_phrase", "alpha_conclusion", "pair_phrase",
           "about", "counts_conclusion", "cache_phrase", "core_share_sentence", "grade_sentence",
           "regime_counts", "regimes_takeaway", "calculator_sentence"]

_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
          10: "ten"}


def about(x: float) -> str:
    """A count in words no finer than it is known: the nearest whole number up to ten, then one significant figure.

    >>> about(3.85), about(1.2), about(14.0), about(38.0), about(260.0)
    ('four', 'one', '10', '40', '300')
    """
    check_positive("x", x)
    if x < 10.5:
        return _WORDS[max(1, round(x))]
    return f"{float(f'{x:.1g}'):g}"


def rate_phrase(inverse_beta: float, copy_rate: float, tolerance: float = 0.25) -> str:
    """How a fitted ``1/beta`` (bytes/s) compares with the measured copy rate (bytes/s).

    Within ``tolerance`` (relative) of each other counts as "about".
    """
    check_positive("copy_rate", copy_rate)
    if math.isinf(inverse_beta) and inverse_beta > 0:
        return "not measurable: the fit found no cost per byte there (beta = 0)"
    ratio = inverse_beta / copy_rate
    if abs(ratio - 1.0) <= tolerance:
        return "about the rate at which this machine copies memory"
    if ratio < 1.0:
        return ("well below the rate at which this machine copies memory" if ratio < 0.5 else
                "below the rate at which this machine copies memory")
    return ("well above the rate at which this machine copies memory" if ratio > 2.0 else
            "above the rate at which this machine copies memory")


def rate_conclusion(inverse_beta: float, copy_rate: float, tolerance: float = 0.25) -> str:
    """The sentence that follows from :func:`rate_phrase`: what ``1/beta`` stands for on this machine."""
    if rate_phrase(inverse_beta, copy_rate, tolerance).startswith("about"):
        return ("So on this machine 1/β of all-reduce is, within a quarter, the memory-copy rate; the "
                "other collectives show how far that reading carries.")
    return ("So on this machine 1/β is a rate of the library's copies, set by the memory system but not "
            "equal to its copy rate.")


def rate_flag(inverse_beta: float, copy_rate: float, tolerance: float = 0.25) -> str:
    """A warning for a rate table: a fitted ``1/beta`` that cannot be a rate of copying on this machine.

    Infinite (the fit set beta to 0) or more than ``tolerance`` above the
    copy rate measured in the same run: a library that copies each byte at
    least once cannot move bytes faster than the machine copies them, so
    such a ``1/beta`` is a fitting artefact, not a rate (or the copies of the
    control ran slowed by other programs). Empty otherwise.

    >>> rate_flag(float("inf"), 5e9), rate_flag(7e9, 5e9), rate_flag(3e9, 5e9)
    ('infinite: no cost per byte found', 'above the measured copy rate: a fitting artefact, or the control ran slowed', '')
    """
    check_positive("copy_rate", copy_rate)
    if math.isinf(inverse_beta) and inverse_beta > 0:
        return "infinite: no cost per byte found"
    check_positive("inverse_beta", inverse_beta)
    if inverse_beta > (1 + tolerance) * copy_rate:
        return "above the measured copy rate: a fitting artefact, or the control ran slowed"
    return ""


def alpha_phrase(alpha: float, handover: float, slice_s: float = 1e-3) -> str:
    """What a fitted per-step ``alpha`` (s) looks like next to one core handover and a scheduler slice (s).

    A time slice is milliseconds (``slice_s``, the order of a Linux
    scheduler slice); a handover is microseconds. The number of handovers
    is said as it is, no finer than :func:`about`.

    >>> alpha_phrase(15e-6, 3.9e-6)
    'about four core handovers, far below a scheduler time slice'
    >>> alpha_phrase(0.2e-6, 3.9e-6)
    'less than one core handover, far below a scheduler time slice'
    """
    check_nonnegative("alpha", alpha)
    check_positive("handover", handover)
    check_positive("slice_s", slice_s)
    if alpha >= 0.5 * slice_s:
        return "of the order of a scheduler time slice"
    handovers = alpha / handover
    below = "far below" if alpha < 0.1 * slice_s else "below"
    if handovers < 0.5:
        return f"less than one core handover, {below} a scheduler time slice"
    count = about(handovers)
    plural = "" if count == "one" else "s"
    return f"about {count} core handover{plural}, {below} a scheduler time slice"


def alpha_conclusion(alpha: float, handover: float, slice_s: float = 1e-3) -> str:
    """The sentence that follows from :func:`alpha_phrase`: what oversubscription added to ``alpha``."""
    if alpha_phrase(alpha, handover, slice_s).startswith("of the order"):
        return ("Here the ranks did wait for the scheduler: other programs loaded the cores, or waiting ranks "
                "kept polling for their whole slice.")
    return ("A waiting rank does not keep its core for a whole slice: it is taken off as soon as it blocks or "
            "yields, so what oversubscription adds to α is the cost of switching between ranks, step after "
            "step.")


def pair_phrase(ratio: float) -> str:
    """How the point-to-point halving-doubling all-reduce compares with the ring (time ratio, hd / ring)."""
    check_positive("ratio", ratio)
    if ratio <= 1.2:
        return "as fast as the ring or faster, as the model predicts."
    slower = "somewhat slower" if ratio <= 2.0 else "much slower"
    return (f"{slower} than the ring, although the model predicts the same bytes and fewer steps. Both were "
            "timed in turns, call by call, so a load that came and went on the machine fell on both alike: the "
            "difference is in how the ranks share the cores during each step, which the counts do not see. Run "
            "the lab on a machine with a free core per rank to take the scheduler out of the comparison.")


def counts_conclusion(err_right: float, err_wrong: float, target: float = 0.2) -> str:
    """What two fits with different step and byte counts show, said only as far as their errors allow.

    ``err_right`` and ``err_wrong`` are median relative errors (fractions)
    of the fit with the algorithm's own counts and with another's. Only when
    both meet ``target`` does the run show that a fit can be good and its
    parameters still wrong.

    >>> counts_conclusion(0.05, 0.06).startswith("Both fits meet")
    True
    >>> counts_conclusion(0.3, 0.31).startswith("Here neither fit meets")
    True
    """
    check_nonnegative("err_right", err_right)
    check_nonnegative("err_wrong", err_wrong)
    check_positive("target", target)
    pct = f"{100 * target:.0f} %"
    if err_right <= target and err_wrong <= target:
        return (f"Both fits meet the {pct} target, yet they disagree on the machine: a fit can be good and its "
                "parameters still wrong; only knowing the algorithm makes them mean something.")
    if err_right <= target:
        return (f"Only the fit with the tree's counts meets the {pct} target here; the algorithm's counts are "
                "what make 1/β mean something.")
    return (f"Here neither fit meets the {pct} target, so this run cannot say which reading of 1/β is right: the "
            "counts give a fitted number its meaning only once the fit itself is good.")


def cache_phrase(step: tuple[float, float, float], sizes: Sequence[float], rates: Sequence[float], ranks: int,
                 buffers: int = 2, op: str = "the collective") -> str:
    """Does the copy rate, measured at every size in the same run, explain a collective's steepest step?

    ``step`` is the collective's ``(smaller, larger, factor)`` from
    :func:`commlib.lab.fit.steepest_step`: between the two sizes each byte
    got ``factor`` times dearer. ``sizes`` and ``rates`` are the copy rates
    of :func:`commlib.lab.memory.copy_rates`. A copy of ``C`` bytes holds
    ``2C`` bytes (source and destination); ``ranks`` ranks with a send and a
    receive buffer each (``buffers``) hold ``ranks x buffers x M`` (more
    with the library's own buffers). So the copies are read at the sizes
    that hold as much memory as the collective on either side of its step.
    If a byte copied gets at least half as much dearer there (in excess over
    1) the cache explains the step; if the copies slow down by less than
    15 %, it does not; in between, it explains a part. Returns the end of a
    sentence that begins "the copy rate ...".

    >>> cache_phrase((2**23, 2**24, 2.2), [2**24, 2**25], [30e9, 16e9], 2, op="all-reduce")[-27:]
    'the cache explains the step'
    >>> cache_phrase((2**23, 2**24, 2.2), [2**24, 2**25], [30e9, 29e9], 2)[-44:]
    'so the cache does not explain the step there'
    """
    check_positive("ranks", ranks)
    held = ranks * buffers / 2          # the collective's memory in use over a copy's, at equal size
    a, b, factor = step
    rate = {float(x): float(r) for x, r in zip(sizes, rates)}
    ca, cb = held * a, held * b
    if ca not in rate or cb not in rate:
        return (f"was not measured at {format_bytes(ca)} and {format_bytes(cb)}, the sizes at which a copy holds as "
                f"much memory as {op} on either side of its step, so this run cannot test the cache")
    g = rate[ca] / rate[cb]
    text = (f"is {rate[ca] / 1e9:.1f} GB/s at {format_bytes(ca)} and {rate[cb] / 1e9:.1f} GB/s at "
            f"{format_bytes(cb)}, the sizes at which a copy holds as much memory as {op}'s send and receive "
            f"buffers on either side of its step: "
            + (f"each byte copied got {g:.1f} times as dear, against {factor:.1f} times for {op}" if g >= 1 else
               f"copying got faster, not slower, while each byte of {op} got {factor:.1f} times as dear"))
    if g - 1 >= 0.5 * (factor - 1):
        return text + ", so the cache explains the step"
    if g < 1.15:
        return text + ", so the cache does not explain the step there"
    return text + ", so the cache explains part of the step, not all of it"


def core_share_sentence(share: float | None, ranks: int, cores: int, enough: float = 0.9) -> str:
    """A sentence on how much of its cores' time the ranks got during the run (``share``, 0 to 1).

    ``share`` is the ranks' own CPU time over wall time times cores (see
    :mod:`commlib.lab.measure`): MPI ranks poll while they wait, so they use
    every moment a core gives them, and what they did not get went to other
    programs. Unlike a load average it does not count the ranks themselves.

    >>> core_share_sentence(0.97, 2, 2)
    "The ranks got 97 % of their cores' time: they had the cores nearly to themselves."
    >>> core_share_sentence(0.6, 2, 2)
    "The ranks got 60 % of their cores' time: other programs took the other 40 % in turns with them."
    """
    if share is None:
        return "This system does not report the ranks' CPU time."
    check_fraction("share", min(share, 1.0), open_low=False)
    check_positive("cores", cores)
    check_positive("ranks", ranks)
    pct = round(100 * min(share, 1.0))
    if share >= enough:
        return f"The ranks got {pct} % of their cores' time: they had the cores nearly to themselves."
    return (f"The ranks got {pct} % of their cores' time: other programs took the other {100 - pct} % in turns "
            "with them.")


def regime_counts(counts: Sequence[int], most: int | None = None) -> str:
    """The numbers of regimes chosen inside the splits, in words, with how often each was chosen.

    ``most``: the largest count that was tried; where it was chosen, more
    regimes might have done better, and the words say so.

    >>> regime_counts([3, 3, 3, 3, 3])
    'three regimes (the count leave-one-out picked on the fitted sizes of every split)'
    >>> regime_counts([3, 2, 3, 4, 3], most=4)[:100]
    'two to four regimes (the count leave-one-out picked on each split\'s fitted sizes: three on 3 of 5 spl'
    """
    if not counts:
        raise ValueError("counts must hold the number of regimes chosen in one split or more")
    for k in counts:
        check_positive("counts", k)
    tally = sorted(((counts.count(k), k) for k in set(counts)), key=lambda t: (-t[0], t[1]))
    lo, hi = min(counts), max(counts)
    if lo == hi:
        text = (f"{_WORDS.get(lo, str(lo))} regimes (the count leave-one-out picked on the fitted sizes of every "
                "split")
    else:
        each = ", ".join(f"{_WORDS.get(k, str(k))} on {c}" + (f" of {len(counts)} splits" if i == 0 else "")
                         for i, (c, k) in enumerate(tally))
        text = (f"{_WORDS.get(lo, str(lo))} to {_WORDS.get(hi, str(hi))} regimes (the count leave-one-out picked "
                f"on each split's fitted sizes: {each}")
    if most is not None and hi >= most:
        text += f"; {_WORDS.get(most, str(most))} is the most tried, and more might fit better"
    return text + ")"


def grade_sentence(line: float, piecewise: float, counts: Sequence[int], spread: float, wins: int, splits: int,
                   most: int | None = None) -> str:
    """Which model predicts sizes it never saw better, the single line or the piecewise fits, and by how much.

    ``line`` and ``piecewise`` are the median held-out errors (fractions,
    means over ``splits`` ways of holding sizes out), ``spread`` the
    standard deviation of their difference over the splits, ``wins`` on how
    many splits the better one was better. ``counts``: the number of regimes
    chosen inside each split on its fitted sizes alone (:func:`regime_counts`;
    ``most``: the largest count tried). A difference within the spread is
    called a tie.

    >>> grade_sentence(0.144, 0.216, [3] * 5, 0.02, 5, 5)[:80]
    'the single line predicts them better than piecewise fits of three regimes (the c'
    """
    for name, v in (("line", line), ("piecewise", piecewise), ("spread", spread)):
        check_nonnegative(name, v)
    k = "piecewise fits of " + regime_counts(counts, most)
    where = f"on {wins} of {splits} ways of holding sizes out"
    if abs(line - piecewise) <= spread:
        return (f"the single line and {k} predict them about equally well ({100 * line:.0f} % against "
                f"{100 * piecewise:.0f} %, a difference within its spread; the better one won {where}): this run "
                "cannot tell them apart; the regimes may be real, but its noise hides them")
    if line < piecewise:
        return (f"the single line predicts them better than {k} ({100 * line:.0f} % against "
                f"{100 * piecewise:.0f} %, {where}): the extra regimes follow the noise of the points they were "
                "fitted on, not the machine")
    return (f"{k} predict them better than the single line ({100 * piecewise:.0f} % against {100 * line:.0f} %, "
            f"{where}): the regimes are the machine's, not the noise's")


def regimes_takeaway(piecewise_better: bool, line_better: bool = True) -> str:
    """The takeaway on regimes, following the held-out grade of this run (neither better: a tie).

    >>> regimes_takeaway(False, False)[-58:]
    ' apart: the regimes may be real, but its noise hides them.'
    """
    if piecewise_better:
        return ("Protocol switches (eager and rendezvous) and caches can give a machine several regimes; here a "
                "piecewise fit predicted held-out sizes better than one line, so its regimes are the machine's.")
    if line_better:
        return ("A piecewise fit always meets its own points better than one line, but that is no evidence of "
                "regimes: here one line predicted held-out sizes better, so the extra regimes fitted noise.")
    return ("A piecewise fit always meets its own points better than one line, but that is no evidence of "
            "regimes: here held-out sizes could not tell one line from the regimes (the difference lay within its "
            "spread), so this run cannot tell them apart: the regimes may be real, but its noise hides them.")


def calculator_sentence(piecewise_better: bool, regimes: int, moved: float, target: float = 0.2,
                        line_better: bool = True) -> str:
    """What the calculator below uses and how far to trust it at other rank counts (``moved``: the four-rank miss)."""
    check_nonnegative("moved", moved)
    k = _WORDS.get(regimes, str(regimes))
    if piecewise_better:
        which = f"the {k}-regime fits, which predicted held-out sizes better than one line"
    elif line_better:
        which = f"the single lines, which predicted held-out sizes better than {k} regimes"
    else:
        which = (f"the single lines: held-out sizes could not tell them from {k} regimes apart, and the simpler "
                 "model stands in")
    trust = ("close enough to be a first estimate" if moved <= target else
             "far enough that at another number of ranks its answers are guesses to check with a run")
    return (f"The calculator uses {which}. Carried to four ranks, they missed the four-rank run by a median of "
            f"{100 * moved:.0f} %, {trust}.")
