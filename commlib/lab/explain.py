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
from .fit import RateCheck
from .measure import format_bytes

__all__ = ["RATE_TOLERANCE", "CORE_SHARE_ENOUGH", "rate_text", "rate_phrase", "rate_conclusion", "rate_flag",
           "alpha_phrase", "alpha_conclusion", "pair_phrase", "about", "counts_conclusion", "cache_share",
           "cache_phrase", "core_share_sentence", "cuts_phrase", "ranks_rate_sentence", "limits_sentence",
           "grade_sentence", "regime_counts", "regimes_takeaway", "transfer_conclusion", "calculator_sentence",
           "fit_busbw_sentence", "fit_busbw_flag"]

#: A rate within this fraction of the copy rate counts as "about" it; more than this above it is flagged.
RATE_TOLERANCE = 0.25
#: Below this share of their cores' time, the ranks ran on a machine that other programs kept busy.
CORE_SHARE_ENOUGH = 0.9

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


def rate_text(rate: float) -> str:
    """A rate (bytes/s) in GB/s for the prose, or words where there is none to quote (infinite).

    >>> rate_text(7.8e8), rate_text(float("inf"))
    ('0.78 GB/s', 'not measurable (no time per byte was left)')
    """
    if math.isinf(rate) and rate > 0:
        return "not measurable (no time per byte was left)"
    check_positive("rate", rate)
    return f"{rate / 1e9:.2f} GB/s"


def rate_phrase(inverse_beta: float, copy_rate: float, tolerance: float = RATE_TOLERANCE) -> str:
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


def rate_conclusion(rate: float, copy_rate: float, share: float | None = None, tolerance: float = RATE_TOLERANCE,
                    enough: float = CORE_SHARE_ENOUGH, what: str = "the rate of all-reduce's bytes") -> str:
    """The sentence that follows from :func:`rate_phrase`: what a rate (bytes/s) stands for on this machine.

    ``share`` is the ranks' share of their cores' time (see
    :func:`core_share_sentence`): below ``enough``, other programs' turns on
    the cores are blamed only if they close the gap, that is if the rate
    divided by the share comes within ``tolerance`` of the copy rate. An
    infinite rate, or one more than ``tolerance`` above the copy rate, is no
    rate of copying (:func:`rate_flag`).

    >>> rate_conclusion(float("inf"), 5e9)[:40]
    'So this run puts no rate on the rate of '
    >>> rate_conclusion(12e9, 5e9)[:90]
    "So on this machine the rate of all-reduce's bytes came out above the rate at which it copi"
    >>> rate_conclusion(3.5e9, 5e9, share=0.6)[:100]
    "So on this machine the rate of all-reduce's bytes is set largely by other programs' turns on the cor"
    >>> rate_conclusion(0.96e9, 5.73e9, share=0.45)[-70:]    # load slows at most 2.2 times: the gap is 6 times
    'hem at most 2.2 times: not enough to explain the gap to the copy rate.'
    """
    check_positive("copy_rate", copy_rate)
    if math.isinf(rate) and rate > 0:
        return f"So this run puts no rate on {what}: no time per byte was left to read one from."
    check_positive("rate", rate)
    loaded = ""
    if share is not None and share < enough:
        pct = round(100 * max(share, 0.0))
        if share > 0 and rate / share >= (1 - tolerance) * copy_rate:
            return (f"So on this machine {what} is set largely by other programs' turns on the cores: the ranks got "
                    f"{pct} % of their cores' time, and a rank waiting for its core copies nothing (given all of "
                    "it, the rate would reach the copy rate). Re-run the lab on an idle machine to read the "
                    "library's own rate.")
        loaded = (f" The ranks got {pct} % of their cores' time, which slows them at most "
                  f"{1 / max(share, 1e-9):.1f} times: not enough to explain the gap to the copy rate.")
    phrase = rate_phrase(rate, copy_rate, tolerance)
    if phrase.startswith("about"):
        return (f"So on this machine {what} is, within {100 * tolerance:.0f} %, the memory-copy rate; the other "
                "collectives (table) show how far that reading carries.")
    if rate > (1 + tolerance) * copy_rate:
        return (f"So on this machine {what} came out above the rate at which it copies memory, which a library "
                "that copies each byte at least once cannot reach: the copy control ran slowed, or the library "
                "moved fewer bytes than the cost model counts; either way it is no rate of copying.")
    return (f"So on this machine {what} is below one plain copy per byte: the library spends more than a copy's "
            "time on each byte (a second copy through a shared buffer, or waits between the ranks), and this run "
            "does not tell which." + loaded)


def rate_flag(inverse_beta: float, copy_rate: float, tolerance: float = RATE_TOLERANCE) -> str:
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


def _held(ranks: int, buffers: int) -> float:
    check_positive("ranks", ranks)
    return ranks * buffers / 2          # the collective's memory in use over a copy's, at equal size


def cache_share(step: tuple[float, float, float], sizes: Sequence[float], rates: Sequence[float], ranks: int,
                buffers: int = 2) -> str | None:
    """How much of a collective's steepest step the copy rates explain: ``"all"``, ``"part"``, ``"none"``.

    ``None`` where the copies were not measured at the sizes that hold as
    much memory as the collective on either side of its step. The rule is
    :func:`cache_phrase`'s: copies dearer by at least half the step's excess
    over 1 explain it, slower by less than 15 % do not, in between explain a
    part.

    >>> cache_share((2**23, 2**24, 2.2), [2**24, 2**25], [30e9, 16e9], 2)
    'all'
    """
    held = _held(ranks, buffers)
    a, b, factor = step
    rate = {float(x): float(r) for x, r in zip(sizes, rates)}
    ca, cb = held * a, held * b
    if ca not in rate or cb not in rate:
        return None
    g = rate[ca] / rate[cb]
    if g - 1 >= 0.5 * (factor - 1):
        return "all"
    if g < 1.15:
        return "none"
    return "part"


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
    15 %, it does not; in between, it explains a part (:func:`cache_share`).
    Returns the end of a sentence that begins "the copy rate ...".

    >>> cache_phrase((2**23, 2**24, 2.2), [2**24, 2**25], [30e9, 16e9], 2, op="all-reduce")[-27:]
    'the cache explains the step'
    >>> cache_phrase((2**23, 2**24, 2.2), [2**24, 2**25], [30e9, 29e9], 2)[-44:]
    'so the cache does not explain the step there'
    """
    held = _held(ranks, buffers)
    a, b, factor = step
    rate = {float(x): float(r) for x, r in zip(sizes, rates)}
    ca, cb = held * a, held * b
    share = cache_share(step, sizes, rates, ranks, buffers)
    if share is None:
        return (f"was not measured at {format_bytes(ca)} and {format_bytes(cb)}, the sizes at which a copy holds as "
                f"much memory as {op} on either side of its step, so this run cannot test the cache")
    g = rate[ca] / rate[cb]
    text = (f"is {rate[ca] / 1e9:.1f} GB/s at {format_bytes(ca)} and {rate[cb] / 1e9:.1f} GB/s at "
            f"{format_bytes(cb)}, the sizes at which a copy holds as much memory as {op}'s send and receive "
            f"buffers on either side of its step: "
            + (f"each byte copied got {g:.1f} times as dear, against {factor:.1f} times for {op}" if g >= 1 else
               f"copying got faster, not slower, while each byte of {op} got {factor:.1f} times as dear"))
    return text + {"all": ", so the cache explains the step",
                   "none": ", so the cache does not explain the step there",
                   "part": ", so the cache explains part of the step, not all of it"}[share]


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


def _sizes_between(cut: float, sizes: Sequence[float]) -> str:
    below = max((x for x in sizes if x < cut), default=None)
    above = min((x for x in sizes if x > cut), default=None)
    if below is None or above is None:
        return f"at {format_bytes(cut)}"
    lo, hi = format_bytes(below), format_bytes(above)
    lo_num, lo_unit = lo.split(" ")
    if hi.endswith(" " + lo_unit):
        return f"between {lo_num} and {hi}"
    return f"between {lo} and {hi}"


def cuts_phrase(cuts: Sequence[float], sizes: Sequence[float]) -> str:
    """Where a piecewise fit's cuts fall, as the measured sizes on either side: no finer than the run knows.

    A cut is placed at the geometric midpoint of a gap between measured
    sizes; all the run knows is that the regime changes somewhere in that gap.

    >>> cuts_phrase([2**22 * 2**0.5], [2.0**k for k in range(20, 27)])
    'between 4 and 8 MiB'
    >>> cuts_phrase([2**19 * 2**0.5, 2**25 * 2**0.5], [2.0**k for k in range(10, 27)])
    'between 512 KiB and 1 MiB and between 32 and 64 MiB'
    >>> cuts_phrase([2**11 * 2**0.5, 2**15 * 2**0.5, 2**22 * 2**0.5], [2.0**k for k in range(10, 27)])
    'between 2 and 4 KiB, between 32 and 64 KiB and between 4 and 8 MiB'
    """
    if not cuts:
        return "nowhere (one regime)"
    words = [_sizes_between(c, sizes) for c in cuts]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def ranks_rate_sentence(rate2: float, rate4: float, cores2: int, cores4: int,
                        tolerance: float = RATE_TOLERANCE) -> str:
    """How a collective's bus bandwidth at the largest size (bytes/s, measured) moved from two ranks to four.

    ``cores2`` and ``cores4``: the cores each run had. Within ``tolerance``
    the rates count as the same.

    >>> ranks_rate_sentence(1.0e9, 1.1e9, 2, 2)[-107:]
    '(1.10 GB/s with four, 1.00 GB/s with two): the same cores do all the copying, whatever the number of ranks.'
    """
    check_positive("rate2", rate2)
    check_positive("rate4", rate4)
    nums = f"({rate4 / 1e9:.2f} GB/s with four, {rate2 / 1e9:.2f} GB/s with two)"
    same = cores2 == cores4
    if abs(rate4 / rate2 - 1) <= tolerance:
        tail = ": the same cores do all the copying, whatever the number of ranks." if same else (
            f", although four ranks had {_WORDS.get(cores4, str(cores4))} cores to copy with and two ranks "
            f"{_WORDS.get(cores2, str(cores2))}.")
        return f"The bus bandwidth at the largest size hardly changes with the ranks {nums}{tail}"
    if rate4 > rate2:
        tail = ", though the same cores do all the copying; this run does not say why." if same else (
            f": four ranks had {_WORDS.get(cores4, str(cores4))} cores to copy with, two ranks "
            f"{_WORDS.get(cores2, str(cores2))}.")
        return f"The bus bandwidth at the largest size grows with the ranks {nums}{tail}"
    tail = (": the same cores do all the copying, and four ranks also take turns on them." if same else
            f", although four ranks had {_WORDS.get(cores4, str(cores4))} cores to copy with; this run does not "
            "say why.")
    return f"The bus bandwidth at the largest size falls with the ranks {nums}{tail}"


def limits_sentence(rate: float, copy_rate: float, cache: str | None, share: float | None, alpha2: float,
                    alpha4: float, handover: float, oversubscribed: bool, tolerance: float = RATE_TOLERANCE,
                    enough: float = CORE_SHARE_ENOUGH) -> str:
    """What limited the run, from its controls: other programs, the copies, the cache, switching ranks.

    ``rate``: all-reduce's bus bandwidth at the largest size, against the
    ``copy_rate`` (bytes/s); ``cache``: :func:`cache_share` of its steepest
    step; ``share``: the ranks' share of their cores' time; ``alpha2`` and
    ``alpha4`` (s): the fitted start-up costs at two and four ranks; the
    switching between ranks is named when the four-rank run was
    ``oversubscribed`` and its alpha grew by a core ``handover`` or more.

    >>> limits_sentence(1e9, 6e9, "none", 0.97, 5e-6, 40e-6, 4e-6, True)[33:117]
    "the library's copies, slower than one plain copy per byte; switching between ranks, "
    """
    check_positive("copy_rate", copy_rate)
    for name, v in (("alpha2", alpha2), ("alpha4", alpha4)):
        check_nonnegative(name, v)
    check_positive("handover", handover)
    parts = []
    if share is not None and share < enough:
        parts.append(f"other programs, which took {100 - round(100 * max(share, 0.0))} % of the ranks' core time")
    if math.isinf(rate) or rate > (1 + tolerance) * copy_rate:
        parts.append("the library's copies, at a rate this run could not pin down")
    elif abs(rate / copy_rate - 1) <= tolerance:
        parts.append("the library's copies, at about the rate this machine copies memory")
    else:
        parts.append("the library's copies, slower than one plain copy per byte")
    if cache == "all":
        parts.append("the last-level cache, past which each byte got dearer")
    elif cache == "part":
        parts.append("in part the last-level cache, past which each byte got dearer")
    if oversubscribed and alpha4 - alpha2 >= handover:
        parts.append("switching between ranks, once there were more ranks than cores")
    return "What limited this run, then, was " + "; ".join(parts) + "; and the lack of a real wire."


def regime_counts(counts: Sequence[int], most: int | None = None) -> str:
    """The numbers of regimes chosen inside the splits, in words, with how often each was chosen.

    ``most``: the largest count that was tried; where it was chosen, more
    regimes might have done better, and the words say so.

    >>> regime_counts([3, 3, 3, 3, 3])
    'three regimes (the count leave-one-out picked on the fitted sizes of every split)'
    >>> regime_counts([3, 2, 3, 4, 3], most=4)[-95:]
    'three on 3 of 5 splits, two on 1, four on 1; four is the most tried, and more might fit better)'
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
        span = "or" if hi - lo == 1 else "to"
        text = (f"{_WORDS.get(lo, str(lo))} {span} {_WORDS.get(hi, str(hi))} regimes (the count leave-one-out picked "
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


def _ranks_on(ranks: int, cores: int) -> str:
    check_positive("ranks", ranks)
    check_positive("cores", cores)
    r, c = _WORDS.get(ranks, str(ranks)), _WORDS.get(cores, str(cores))
    return f"{r} ranks with a core each" if ranks <= cores else f"{r} ranks sharing {c} cores"


def _trust(moved: float, target: float) -> str:
    return ("close enough to be a first estimate at another number of ranks" if moved <= target else
            "far enough that at another number of ranks its answers are guesses to check with a run")


def transfer_conclusion(moved: float, ranks: int, cores: int, target: float = 0.2) -> str:
    """What the grade at another number of ranks tests, and how far it carries (``moved``: the median miss).

    With a core per rank only the number of ranks changed, and the miss says
    how far the fit carries to other rank counts. With more ranks than cores
    the grade tests sharing cores too, and says nothing about other numbers
    of ranks on cores of their own.

    >>> transfer_conclusion(0.1, 4, 4)[:62]
    'Here the four ranks had a core each, so this grade tests the n'
    >>> transfer_conclusion(0.5, 4, 2)[:60]
    'Here the four ranks shared two cores, so this grade tests ov'
    """
    check_nonnegative("moved", moved)
    if ranks <= cores:
        return (f"Here the {_WORDS.get(ranks, str(ranks))} ranks had a core each, so this grade tests the number of "
                f"ranks alone, and a miss of {100 * moved:.0f} % is {_trust(moved, target)}.")
    return (f"Here the {_WORDS.get(ranks, str(ranks))} ranks shared {_WORDS.get(cores, str(cores))} cores, so this "
            "grade tests oversubscription as much as the number of ranks: the counts carry the algorithm from two "
            "ranks to four, but not what sharing the cores does to each step, and it says nothing of more ranks "
            "on cores of their own.")


def calculator_sentence(piecewise_better: bool, regimes: int, moved: float, target: float = 0.2,
                        line_better: bool = True, ranks: int = 4, cores: int = 4) -> str:
    """What the calculator below uses and how far to trust it at other rank counts.

    ``moved``: the median miss of those models on the run with ``ranks``
    ranks on ``cores`` cores. Only a run with a core per rank says how far
    the models carry to another number of ranks (:func:`transfer_conclusion`).
    """
    check_nonnegative("moved", moved)
    k = _WORDS.get(regimes, str(regimes))
    if piecewise_better:
        which = f"the {k}-regime fits, which predicted held-out sizes better than one line"
    elif line_better:
        which = f"the single lines, which predicted held-out sizes better than {k} regimes"
    else:
        which = (f"the single lines: held-out sizes could not tell them from {k} regimes apart, and the simpler "
                 "model stands in")
    if ranks <= cores:
        return (f"The calculator uses {which}. Carried to {_ranks_on(ranks, cores)}, they missed that run by a "
                f"median of {100 * moved:.0f} %, {_trust(moved, target)}.")
    return (f"The calculator uses {which}. Carried to {_ranks_on(ranks, cores)}, they missed that run by a median "
            f"of {100 * moved:.0f} %; that grades sharing cores, not another number of ranks on cores of their own, "
            "which this run did not measure.")


_CAUSE_WORDS = {"counts": "the counts", "start-up": "the start-ups", "fit": "the model's miss"}


def _gbs(rate: float) -> str:
    return "infinite" if math.isinf(rate) else f"{rate / 1e9:.2f}"


def fit_busbw_flag(check: RateCheck) -> str:
    """A short verdict for a table: does the fitted ``1/beta`` agree with busbw, and if not, which factor parts them.

    >>> c = RateCheck("x", 2.0**26, 2.0**25, "ring", 2e9, (1.9e9, 2.1e9), 1.4e9, (1.3e9, 1.5e9), 1.0, 1.0, 0.7,
    ...               1.3e9, 5)
    >>> fit_busbw_flag(c)
    "disagree: busbw is 0.70 of 1/beta, mostly the model's miss at 64 MiB"
    """
    if not check.disagree:
        return "agree within their spread"
    if math.isinf(check.fitted):
        return "disagree: the fit found no cost per byte"
    where = {"counts": f"at {format_bytes(check.nbytes)} ({check.algorithm.replace('_', '-')})", "start-up": "",
             "fit": f"at {format_bytes(check.nbytes)}"}[check.cause]
    return (f"disagree: busbw is {check.ratio:.2f} of 1/beta, mostly {_CAUSE_WORDS[check.cause]}"
            + (f" {where}" if where else ""))


def fit_busbw_sentence(check: RateCheck, what: str = "the line") -> str:
    """Sentences (Markdown) that hold a fitted ``1/beta`` against the bus bandwidth measured at the largest size.

    Agreement means their ranges overlap: the fitted rate's over the fit and
    its refits on each way of holding sizes out, busbw's over the middle half
    of the calls. Where they disagree the sentence gives the three factors
    of :class:`commlib.lab.fit.RateCheck`, which multiply to the ratio, and
    names the largest as the likely cause.

    >>> c = RateCheck("x", 2.0**26, 2.0**25, "ring", 2e9, (1.9e9, 2.1e9), 1.4e9, (1.3e9, 1.5e9), 1.0, 1.0, 0.7,
    ...               1.3e9, 5)
    >>> print(fit_busbw_sentence(c)[:110])
    The $1/\\beta$ of the line, 2.00 GB/s (1.90 to 2.10 over the fit and its five refits on held-out splits), and t
    """
    size, algorithm = format_bytes(check.nbytes), check.algorithm.replace("_", "-")
    head = (rf"The $1/\beta$ of {what}, {_gbs(check.fitted)} GB/s ({_gbs(check.fitted_range[0])} to "
            f"{_gbs(check.fitted_range[1])} over the fit and its {about(check.splits) if check.splits else 'no'} refits "
            f"on held-out splits), and the bus bandwidth measured at {size}, {_gbs(check.busbw)} GB/s "
            f"({_gbs(check.busbw_range[0])} to {_gbs(check.busbw_range[1])} over the middle half of the calls),")
    if not check.disagree:
        return head + " agree within their spread."
    if math.isinf(check.fitted):
        return head + " disagree: the fit found no cost per byte at that size, so its $1/\\beta$ is no rate at all."
    text = (head + f" disagree by more than their spread: the measured rate is {check.ratio:.2f} of the fitted one. "
            f"Three factors computed from this run multiply to that ratio: the bytes busbw counts over the bytes the "
            f"algorithm run at {size} ({algorithm}) sends along its critical path ({check.counts:.2f}), the "
            f"share of the model's time at {size} spent on bytes rather than start-ups ({check.byte_share:.2f}), and "
            f"the model's time there over the measured time ({check.miss:.2f}). ")
    if check.cause == "counts":
        return text + (f"The counts part them most: $1/\\beta$ is a rate per byte that {algorithm} sends, busbw a "
                       f"rate per byte of the ring's count, and at {size} the two counts differ.")
    if check.cause == "start-up":
        return text + (f"The start-ups part them most: at {size} they still take {100 * (1 - check.byte_share):.0f} % "
                       "of the model's time, which busbw charges to the bytes.")
    dearer = check.local < check.fitted
    local = ("the time did not grow" if math.isinf(check.local) else
             f"the extra bytes moved at {_gbs(check.local)} GB/s")
    return text + ("The model's miss parts them most: the fit weighs every size alike by its relative error, so its "
                   "slope is an average cost per byte over many sizes, and at the largest sizes a byte cost "
                   f"{'more' if dearer else 'less'} than that average (between {format_bytes(check.below)} and "
                   f"{size} {local}). The bus bandwidth at the largest size is the rate to quote for large messages; "
                   "the fitted $1/\\beta$ is the rate that best fits all sizes at once.")
