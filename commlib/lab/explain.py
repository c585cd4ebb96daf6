"""Words for the lab's conclusions, chosen from the measurement and its controls.

The lab's numbers differ from machine to machine and from run to run, so
every sentence that interprets them is picked here by the numbers, next to
the control it is held against: the memory-copy rate for ``1/beta``, the
cost of handing a core over for ``alpha``, a fit graded on points it never
saw for the model's accuracy. Each function returns a phrase that completes
a sentence of the chapter; tests pin which phrase each regime of numbers gets.

>>> rate_phrase(5e9, 5.2e9)
"about the copy control's rate in this run"
>>> rate_phrase(2e9, 6e9)
"well below the copy control's rate in this run"
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..units import check_count, check_fraction, check_nonnegative, check_positive
from .fit import PriceDrop, RateCheck
from .measure import format_bytes
from .memory import busbw_bound

__all__ = ["RATE_TOLERANCE", "CORE_SHARE_ENOUGH", "figures", "rate_text", "rate_phrase", "rate_conclusion",
           "library_name", "rate_flag", "alpha_phrase", "alpha_conclusion", "pair_phrase", "about", "counts_conclusion",
           "cache_share", "cache_phrase", "step_cause", "STEP_CAUSES", "step_summary", "level_slow_clause", "FAULT_JUMP", "rate_cause_note",
           "step_scope", "pages_words", "growth_sentence", "shape_takeaway", "alpha_quote", "time_text",
           "alpha_determined", "alpha_usable", "dearer", "slope_quote", "sweep_match_sentence", "alpha_clause",
           "copy_clock_sentence", "step_load_note", "suspects_sentence",
           "load_bound", "load_gap", "rate_cause",
           "core_share_sentence", "cuts_phrase", "ranks_rate_sentence", "ranks_rate_short", "limits_sentence",
           "grade_sentence", "regime_counts", "cut_kinds", "cut_sentence", "regimes_takeaway", "transfer_conclusion",
           "calculator_sentence", "fit_busbw_sentence", "rates_lead", "rates_answer",
           "copy_fall_sentence",
           "level_factors", "level_runs", "mechanism_takeaway", "control_machine_sentence", "alpha_level_sentence", "replicate_sentence",
           "spread_sentence", "thread_level_sentence", "ring_level_sentence", "gloo_level_sentence",
           "fit_busbw_flag", "band_sentence", "tail_phrase", "LOAD_POWERS", "sweep_gap_sentence",
           "power_phrase", "power_caveat", "control_sentence",
           "machine_words", "headline_takeaway", "your_run_sentence", "your_run_loaded", "your_run_title", "oversubscription_sentence",
           "oversubscription_takeaway", "level_name", "level_scope", "waits_out_slices", "shared_level_sentence",
           "shared_machine_sentence", "time_span", "SLICE_SMALL",
           "pair_sentence", "gloo_sentence", "price_drop_sentence"]

#: A rate within this fraction of the copy rate counts as "about" it; more than this above it is flagged.
RATE_TOLERANCE = 0.25
#: Below this share of their cores' time, the ranks ran on a machine that other programs kept busy.
CORE_SHARE_ENOUGH = 0.9
#: A middle half of a size's calls at most this fraction of its median: a scheduler slice is small against the
#: call, so a ratio of two libraries' times there measures the libraries, not the slices (:func:`gloo_spread`).
SLICE_SMALL = 0.5

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


def dearer(factor: float) -> str:
    """How much dearer a byte got, as a factor of its cost: "N times dearer" from 1 up, "P % cheaper" below.

    >>> dearer(4.5), dearer(0.7), dearer(1.0)
    ('4.5 times dearer', '30 % cheaper', '1.0 times dearer')
    """
    check_positive("factor", factor)
    if factor < 0.95:
        return f"{round(100 * (1 - factor))} % cheaper"
    return f"{factor:.1f} times dearer"


def figures(x: float, n: int = 2) -> str:
    """``x`` to ``n`` significant figures, trailing zeros kept: no finer than a rerun agrees.

    >>> figures(2.734), figures(1.0), figures(13.7), figures(0.0412), figures(374.0)
    ('2.7', '1.0', '14', '0.041', '370')
    """
    check_count("n", n, minimum=1)
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    digits = n - 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, digits):.{max(digits, 0)}f}"


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
        return "about the copy control's rate in this run"
    if ratio < 1.0:
        return ("well below the copy control's rate in this run" if ratio < 0.5 else
                "below the copy control's rate in this run")
    return ("well above the copy control's rate in this run" if ratio > 2.0 else
            "above the copy control's rate in this run")


def load_bound(share: float) -> float:
    """How many times load alone may slow a pairwise step, for ranks that got ``share`` of their cores' time.

    A step between two ranks (a send and its matching receive) moves only
    while both run; if each got a share ``s`` of its core, independently,
    both run together for about ``s**2`` of the time, so the step may take up
    to ``1/s**2`` times as long. The share is averaged over the whole run, so
    the bound is a reading of the run, not of one size's timing.

    >>> round(load_bound(0.31), 1)
    10.4
    """
    check_fraction("share", min(share, 1.0))
    return 1.0 / max(share, 1e-9) ** 2


def load_gap(share: float) -> float:
    """How large a gap between a pairwise step's rate and the copy control's, both timed under load, load can close.

    Load may slow a step about :func:`load_bound` ``= 1/s**2`` times, but the
    copy control ran in turns with the collectives, under the same load, on
    one core per rank, so load slowed it about ``1/s`` times as well: loaded
    held against loaded, load accounts for a gap of about ``1/s``. ``share``
    is read to two decimals, the precision the prose prints it with.

    >>> round(load_gap(0.31), 2)
    3.23
    """
    check_fraction("share", min(share, 1.0))
    return 1.0 / max(round(share, 2), 0.01)


def rate_cause(rate: float, copy_rate: float, share: float | None = None, tolerance: float = RATE_TOLERANCE,
               enough: float = CORE_SHARE_ENOUGH) -> str:
    """What can close the gap between a rate (bytes/s) below the copy rate and the copy rate, tested together.

    The candidates are load (a gap of :func:`load_gap` when ``share`` is
    below ``enough``) and a second copy per byte through a shared buffer,
    each within ``tolerance``. An all-reduce reduces however often it
    copies, so both are held against a bound that charges the reduction
    (:func:`commlib.lab.memory.busbw_bound`): load alone against one copy
    per bus byte and the reduction, a second copy against two copies and
    the reduction; the two are tested alone and, because load slows a step
    whatever the library does per byte, together (the rate times the
    load's gap held against the two-copy bound).
    Returns ``"copy"`` (within ``tolerance`` of the copy rate, or above it),
    ``"load"`` (load alone closes it), ``"second copy"`` (a second copy
    alone does), ``"load and second copy"`` (only the two together) or
    ``"neither"``. Load is tried first: where it closes the gap alone, the
    run cannot say a second copy was spent at all.

    >>> rate_cause(5e9, 5.2e9), rate_cause(2.7e9, 6.2e9, 0.31), rate_cause(1.2e9, 3.05e9)
    ('copy', 'load', 'second copy')
    >>> rate_cause(0.5e9, 4.10e9, 0.40), rate_cause(0.2e9, 6.2e9, 0.6), rate_cause(0.5e9, 3.05e9)
    ('load and second copy', 'neither', 'neither')
    >>> rate_cause(0.555e9, 3.13e9, 0.29)    # 3.45 x 0.555 = 1.91 GB/s: at or above one copy and the reduction, 1.79
    'load'
    """
    check_positive("copy_rate", copy_rate)
    check_positive("rate", rate)
    if rate >= (1 - tolerance) * copy_rate:
        return "copy"
    loaded = share is not None and share < enough
    gap = load_gap(share) if loaded else 1.0
    if loaded and rate * gap >= (1 - tolerance) * busbw_bound(copy_rate, copies=1):
        return "load"
    two = (1 - tolerance) * busbw_bound(copy_rate, copies=2)
    if rate >= two:
        return "second copy"
    if loaded and rate * gap >= two:
        return "load and second copy"
    return "neither"


def rate_cause_note(rate: float, copy_rate: float, share: float | None = None, tolerance: float = RATE_TOLERANCE,
                    enough: float = CORE_SHARE_ENOUGH) -> str:
    """A bracket for a short mention of a rate below the copy rate: what :func:`rate_cause` says can close the gap.

    Empty where the rate is within ``tolerance`` of the copy rate, above it, or where nothing tested closes the gap.

    >>> rate_cause_note(0.57e9, 2.92e9, 0.27), rate_cause_note(5e9, 5.2e9)
    (' (which the load alone can explain)', '')
    """
    return {"load": " (which the load alone can explain)",
            "second copy": " (which a second copy per byte can explain)",
            "load and second copy": " (which the load and a second copy together can explain)",
            }.get(rate_cause(rate, copy_rate, share, tolerance, enough), "")


def step_scope(step: tuple[float, float, float], overall: tuple[float, float, float], lo: float) -> str:
    """Where a steepest step searched from ``lo`` bytes up stands among all sizes (``overall``: the steepest of all).

    Empty where both are the same step; else a bracket naming the larger jump below ``lo``.

    >>> step_scope((2**24, 2**25, 1.7), (2**19, 2**20, 3.6), 2**20)
    ' (over all sizes the largest jump, 3.6 times, falls between 512 KiB and 1 MiB, below that range)'
    """
    if (float(overall[0]), float(overall[1])) == (float(step[0]), float(step[1])):
        return ""
    return (f" (over all sizes the largest jump, {overall[2]:.1f} times, falls between {format_bytes(overall[0])} "
            f"and {format_bytes(overall[1])}, below that range)") if overall[1] <= lo else (
            f" (over all sizes the largest jump, {overall[2]:.1f} times, falls between {format_bytes(overall[0])} "
            f"and {format_bytes(overall[1])})")


def _load_premise(s2: float) -> str:
    """The load model in words, with the share as printed: what every loaded comparison of the lab assumes."""
    return (f"the ranks got {100 * s2:.0f} % of their cores' time over the run; if each rank's turns on its core "
            f"fell independently of the other's, a step between two ranks, which moves only while both run, was "
            f"slowed about {load_bound(s2):.1f} times (one over the share squared), and the copy control, one core "
            f"per rank, timed in turns under the same load, about {load_gap(s2):.1f} times (one over the share), so "
            f"load can close a gap of about that much between the two")


def rate_conclusion(rate: float, copy_rate: float, share: float | None = None, tolerance: float = RATE_TOLERANCE,
                    enough: float = CORE_SHARE_ENOUGH, what: str = "the rate of all-reduce's bytes",
                    too_loaded: bool = False) -> str:
    """The sentence that follows from :func:`rate_phrase`: what a rate (bytes/s) stands for on this machine.

    ``share`` is the ranks' share of their cores' time over the whole run
    (see :func:`core_share_sentence`): below ``enough``, and assuming each
    rank's turns on its core fall independently of the other's, load from
    other programs slows a pairwise step about :func:`load_bound` times, and
    the copy control, timed under the same load, about ``1/share`` times, so
    load can close a gap of about :func:`load_gap` between them (the premise
    is printed whichever way the comparison goes); where that closes the gap
    to what one copy per byte and the reduction allow (within ``tolerance``:
    an all-reduce reduces however often it copies), the run cannot tell the
    library's rate from the load. ``too_loaded``: more than half the
    timings failed a load check (:func:`suspects_sentence`); the rate is
    then not put down to the library. A rate below what two copies per byte
    and the reduction allow (:func:`commlib.lab.memory.busbw_bound`) is
    said to need more than a second copy, unless the load's gap and a
    second copy together close it (:func:`rate_cause`: load alone, the two
    together, or neither, each worded). An infinite rate, or one more
    than ``tolerance`` above the copy rate, is no rate of copying
    (:func:`rate_flag`).

    >>> rate_conclusion(float("inf"), 5e9)[:40]
    'So this run puts no rate on the rate of '
    >>> rate_conclusion(12e9, 5e9)[:90]
    "So on this machine the rate of all-reduce's bytes came out above the copy control's rate i"
    >>> rate_conclusion(2.7e9, 6.2e9, share=0.31)[:95]
    "So this run cannot tell the rate of all-reduce's bytes from the load: the ranks got 31 % of the"
    >>> rate_conclusion(0.5e9, 4.10e9, share=0.40)[:83]     # 2.5 times 0.5 GB/s: within the two-copy bound
    "So this run cannot tell the rate of all-reduce's bytes from a second copy slowed by"
    >>> rate_conclusion(0.2e9, 6.2e9, share=0.6)[-80:]    # loaded against loaded: about 1/0.6; the gap is 31
    'gap taken off the rate is still more than a quarter below what two copies allow.'
    >>> "3.2 times below the 1.79 GB/s that one copy" in rate_conclusion(0.555e9, 3.13e9, share=0.29)  # 3.45 x 0.555
    True
    """
    check_positive("copy_rate", copy_rate)
    if math.isinf(rate) and rate > 0:
        return f"So this run puts no rate on {what}: no time per byte was left to read one from."
    check_positive("rate", rate)
    cause = rate_cause(rate, copy_rate, share, tolerance, enough)
    loaded = ""
    one, two = busbw_bound(copy_rate, copies=1), busbw_bound(copy_rate, copies=2)
    if share is not None and share < enough:
        s2 = round(min(share, 1.0), 2)      # the share as printed, and as used in the arithmetic below
        how = _load_premise(s2)
        bound = (f"the {rate_text(one)} that one copy per byte and the reduction would allow (an all-reduce "
                 "reduces however often it copies)")
        short = (f"the {one / rate:.1f} times by which the rate falls below what one copy per byte and the "
                 "reduction would allow (an all-reduce reduces however often it copies)")
        if cause == "load":
            return (f"So this run cannot tell {what} from the load: {how}. The rate is {one / rate:.1f} times "
                    f"below {bound}; with the load's gap taken off, "
                    "it is " + ("at or above" if rate * load_gap(s2) >= one else f"within {_part_words(tolerance)} of")
                    + " what one copy and the reduction allow. Re-run the lab on an idle machine to read the "
                    "library's own rate.")
        if cause == "load and second copy":
            return (f"So this run cannot tell {what} from a second copy slowed by the load. It is below what one "
                    f"copy per byte and the reduction would allow, and below the {rate_text(two)} that two copies "
                    "per byte and the reduction would allow, so neither a second "
                    f"copy through a shared buffer nor the load closes the gap alone: {how}, not {short}. Together "
                    "they can: with the load's gap taken off, the rate is "
                    + ("at or above" if rate * load_gap(s2) >= two else f"within {_part_words(tolerance)} of")
                    + " what two copies allow. Re-run the lab on an idle machine to tell the library's copies from "
                    "the load.")
        if cause == "neither":
            loaded = (f" Nor does the load close the gap, alone or with a second copy: {how}, not {short}, and "
                      f"with the load's gap taken off the rate is still more than {_part_words(tolerance)} below "
                      "what two copies allow.")
        else:
            loaded = f" The load does not close the gap: {how}, not {short}."
    phrase = rate_phrase(rate, copy_rate, tolerance)
    if phrase.startswith("about"):
        return (f"So on this machine {what} is, within {100 * tolerance:.0f} %, the copy rate; the other "
                "collectives (table) show how far that reading carries.")
    if rate > (1 + tolerance) * copy_rate:
        return (f"So on this machine {what} came out above the copy control's rate in this run, which a library "
                "that copies each byte at least once cannot reach: the copy control ran slowed, fewer ranks copied "
                "at once than in the control, or the library moved fewer bytes than the cost model counts; either "
                "way it is no rate of copying.")
    if cause == "neither":     # below what two copies and the reduction allow: not a second copy alone
        below = (f"below the bound for one copy per byte, and below the {rate_text(two)} that two copies per byte and the "
                 "reduction would allow, so a second copy through a shared buffer cannot explain it alone")
        who = ("more than half the timings fail a load check, and this run does not say whether the library or the "
               "load spent the rest" if too_loaded else
               "the library spends the rest waiting, or on work the counts leave out, and this run does not say "
               "which")
        return f"So on this machine {what} is {below}: {who}." + loaded
    if too_loaded:
        return (f"So on this machine {what} is below the bound for one copy per byte; with more than half the timings "
                "failing a load check, this run does not say whether the library or the load spent the extra "
                "time." + loaded)
    return (f"So on this machine {what} is below the bound for one copy per byte: the library spends more than a copy's "
            "time on each byte (a second copy through a shared buffer, or waits between the ranks), and this run "
            "does not tell which." + loaded)


def rate_flag(inverse_beta: float, copy_rate: float, tolerance: float = RATE_TOLERANCE) -> str:
    """A warning for a rate table: a fitted ``1/beta`` that cannot be a rate of copying on this machine.

    Infinite (the fit set beta to 0) or more than ``tolerance`` above the
    copy rate measured in the same run: a library that copies each byte at
    least once cannot move bytes faster than the machine copies them, so
    such a ``1/beta`` is a fitting artefact, not a rate (or the copies of the
    control ran slowed by other programs, or fewer ranks copied at once than
    in the control: a two-rank broadcast's root only sends). Empty otherwise.

    >>> rate_flag(float("inf"), 5e9), rate_flag(7e9, 5e9)[:50], rate_flag(3e9, 5e9)
    ('infinite: no cost per byte found', 'above the copy control: a fitting artefact, a cont', '')
    """
    check_positive("copy_rate", copy_rate)
    if math.isinf(inverse_beta) and inverse_beta > 0:
        return "infinite: no cost per byte found"
    check_positive("inverse_beta", inverse_beta)
    if inverse_beta > (1 + tolerance) * copy_rate:
        return ("above the copy control: a fitting artefact, a control slowed by load, or fewer ranks copying at once "
                "than in the control")
    return ""


def alpha_phrase(alpha: float, handover: float, slice_s: float = 1e-3) -> str:
    """What a fitted per-step ``alpha`` (s) looks like next to one core handover and a scheduler slice (s).

    A time slice is milliseconds (``slice_s``, the order of a Linux
    scheduler slice); a handover is microseconds. The handover is measured
    between processes that block on a pipe and give the core up at once
    (:func:`commlib.lab.memory.handover_time`), while MPI ranks poll, so
    alpha is set beside it as a size, not counted in handovers. The number
    is said as it is, no finer than :func:`about`.

    >>> alpha_phrase(15e-6, 3.9e-6)
    'the size of about four voluntary handovers of a core, far below a scheduler time slice'
    >>> alpha_phrase(0.2e-6, 3.9e-6)
    'less than one voluntary handover of a core, far below a scheduler time slice'
    """
    check_nonnegative("alpha", alpha)
    check_positive("handover", handover)
    check_positive("slice_s", slice_s)
    if alpha >= 0.5 * slice_s:
        return "of the order of a scheduler time slice"
    handovers = alpha / handover
    below = "far below" if alpha < 0.1 * slice_s else "below"
    if handovers < 0.5:
        return f"less than one voluntary handover of a core, {below} a scheduler time slice"
    count = about(handovers)
    plural = "" if count == "one" else "s"
    return f"the size of about {count} voluntary handover{plural} of a core, {below} a scheduler time slice"


def alpha_clause(alpha: float, handover: float, sweeps: Sequence[float], line_error: float | None = None,
                 what: str = "the fitted four-rank α", target: float = 0.2) -> str:
    """A full clause on a fitted ``alpha`` (s) next to a core ``handover`` (s), or on why the run does not fix it.

    The value is set beside a handover only where it means something (:func:`alpha_usable`: ``sweeps`` agree
    and the line's median ``line_error`` is within ``target``).

    >>> alpha_clause(15e-6, 3.9e-6, [14e-6, 16e-6], 0.1)
    'the fitted four-rank α was the size of about four voluntary handovers of a core, far below a scheduler time slice'
    >>> alpha_clause(15e-6, 3.9e-6, [14e-6, 16e-6], 0.48)[27:]
    'not fixed by this run (its line misses its own points by a median of 48 %), so it is not set against a handover'
    """
    if alpha_usable(sweeps, line_error, target=target):
        return f"{what} was {alpha_phrase(alpha, handover)}"
    why = ("its sweeps, fitted alone, disagree" if not alpha_determined(sweeps) else
           f"its line misses its own points by a median of {100 * line_error:.0f} %")
    return f"{what} was not fixed by this run ({why}), so it is not set against a handover"


def alpha_conclusion(alpha: float, handover: float, slice_s: float = 1e-3, share: float | None = None,
                     enough: float = CORE_SHARE_ENOUGH) -> str:
    """The sentence that follows from :func:`alpha_phrase`: what oversubscription added to ``alpha``.

    ``share``: the ranks' share of their cores' time over the run; below
    ``enough``, other programs' turns are in ``alpha`` too, and the sentence
    says so rather than charge all of it to switching between ranks.

    >>> alpha_conclusion(40e-6, 4e-6, share=0.44)[-66:]
    '(the ranks got 44 % of their cores), and their turns are in α too.'
    """
    if alpha_phrase(alpha, handover, slice_s).startswith("of the order"):
        return ("Here the ranks did wait for the scheduler: other programs loaded the cores, or waiting ranks "
                "kept polling for their whole slice.")
    text = ("A waiting rank does not keep its core for a whole slice: it is taken off as soon as it blocks or "
            "yields, so what oversubscription adds to α is the cost of switching between ranks, step after "
            "step.")
    if share is not None and share < enough:
        text += (f" On this run other programs held the cores too (the ranks got {round(100 * max(share, 0.0))} % of "
                 "their cores), and their turns are in α too.")
    return text


def pair_phrase(ratio: float, low: float | None = None, high: float | None = None) -> str:
    """How the point-to-point halving-doubling all-reduce compares with the ring (time ratio, hd / ring).

    ``low`` and ``high``: the quartiles of the ratio over the sizes compared
    (default: the ratio itself). Faster only if even ``high`` is below 1,
    slower only if even ``low`` is above 1; else, with a median more than 5 %
    below 1, faster at the median but not at every size; else about as fast:
    the ratio varies over the sizes, on both sides of 1.

    >>> pair_phrase(0.81, 0.70, 1.01)[:60]
    'faster at the median, as the model predicts, but not at ever'

    >>> pair_phrase(0.83, 0.7, 0.95)
    'faster than the ring, as the model predicts.'
    >>> pair_phrase(1.1, 0.9, 1.3)[:48]
    'about as fast as the ring: the ratio varies over'
    """
    check_positive("ratio", ratio)
    low = ratio if low is None else low
    high = ratio if high is None else high
    if high < 1.0:
        return "faster than the ring, as the model predicts."
    if low <= 1.0 and ratio < 1 - 0.05:
        return (f"faster at the median, as the model predicts, but not at every size: the ratio varies over the "
                f"sizes (it spans {low:.2f} to {high:.2f} over the middle half of them), reaching 1, so this run "
                "cannot tell that it is faster at every size.")
    if low <= 1.0:
        return (f"about as fast as the ring: the ratio varies over the sizes (it spans {low:.2f} to {high:.2f} over "
                "the middle half of them), on both sides of 1, so this run cannot tell which is faster.")
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


def cache_share(step: tuple[float, float, float], sizes: Sequence[float], rates: Sequence[float],
                low: Sequence[float] | None = None, high: Sequence[float] | None = None) -> str | None:
    """How much of a collective's steepest step the copy control explains: ``"most"``, ``"part"``, ``"none"``,
    or ``"unclear"`` where the control's spread leaves it open.

    ``step``: ``(a, b, factor)`` of :func:`commlib.lab.fit.steepest_step`,
    each byte ``factor`` times dearer from ``a`` to ``b`` bytes. ``sizes``,
    ``rates``, ``low``, ``high``: the copy control measured in the same run
    at the same sizes (:func:`commlib.lab.runner.copy_control`: both ranks
    copying at once, holding as much memory as the all-reduce), the rates
    of its median and quartile times. The copies' slowdown from ``a`` to
    ``b`` is read over the control's middle halves, at its smallest and its
    largest, and held against the step on a log scale: at least half of it
    even at the smallest, ``"most"``; under 15 % even at the largest,
    ``"none"``; under half even at the largest, ``"part"`` if at least 15 %
    at the smallest, else ``"little"`` (at most a part); else the spread
    straddles half the step, ``"unclear"``. ``None`` where the control was not measured at
    both sizes.

    >>> cache_share((2**23, 2**24, 2.2), [2**23, 2**24], [30e9, 16e9], [28e9, 15e9], [31e9, 17e9])
    'most'
    >>> cache_share((2**23, 2**24, 2.2), [2**23, 2**24], [6e9, 6e9], [3e9, 3e9], [11e9, 11e9])
    'unclear'
    """
    a, b, factor = step
    low, high = low or rates, high or rates
    at = {float(x): i for i, x in enumerate(sizes)}
    if float(a) not in at or float(b) not in at:
        return None
    if factor <= 1:
        return "none"
    i, j = at[float(a)], at[float(b)]
    least, most = low[i] / high[j], high[i] / low[j]
    share_lo = math.log(least) / math.log(factor) if least > 0 else -math.inf
    share_hi = math.log(most) / math.log(factor)
    if share_lo >= 0.5:
        return "most"
    if share_hi < 0.15:
        return "none"
    if share_hi < 0.5:
        return "part" if share_lo >= 0.15 else "little"
    return "unclear"


#: The rise, across a step in cost per byte, in the pages a call maps in afresh, as a fraction of the message's bytes,
#: that puts the step beside allocation (:func:`step_cause`): a quarter of the message faulted in and zeroed anew on
#: every call, work of the order of a copy of that quarter.
FAULT_JUMP = 0.25

#: The causes :func:`step_cause` can name for a collective's steepest step in cost per byte.
STEP_CAUSES = ("untested", "none", "unclear", "cache", "cache part", "slicing", "allocation", "unknown",
               "untested allocation", "allocation and slicing", "unknown and slicing",
               "untested allocation and slicing")


def step_cause(step: tuple[float, float, float], sizes: Sequence[float], rates: Sequence[float],
               low: Sequence[float] | None = None, high: Sequence[float] | None = None,
               cpu_rates: Sequence[float] | None = None, clock: tuple[float, float] | None = None,
               faults: tuple[float, float] | None = None, tolerance: float = RATE_TOLERANCE,
               jump: float = FAULT_JUMP) -> str:
    """Which cause of a collective's steepest step the run's controls leave standing (one of :data:`STEP_CAUSES`).

    Without the copy control's CPU-time rates (``cpu_rates``, at ``sizes``,
    :func:`commlib.lab.runner.copy_cpu_control`) the wall clock alone decides,
    as :func:`cache_share` does: ``"cache"`` (most), ``"cache part"`` (part or
    little), ``"none"`` or ``"unclear"``; ``"untested"`` where the control was
    not measured at both sizes. With them, the copy's CPU clock decides the
    cache, since time slicing slows a copy by the wall clock only: per byte
    at least the square root of the step's factor dearer, ``"cache"``; within
    ``tolerance`` of no change or cheaper, not the cache; in between,
    ``"cache part"``. Where the cache is ruled out, the collective's own
    clocks (``clock``: ``(wall, cpu)`` per-byte factors of
    :func:`commlib.lab.runner.clock_steps`) split the step in two. Time
    slicing makes a byte dearer by the wall clock alone, so it can explain
    the step only where the CPU clock shows none of it (within ``tolerance``
    of 1 or below): ``"slicing"``. The CPU clock's step is a change in the
    work itself, and the pages mapped in per call (``faults``: below and
    above the step, as fractions of the message,
    :func:`commlib.lab.runner.fault_fractions`) are held against it: they
    name ``"allocation"`` where they rose by ``jump`` of the message or
    more, ``"unknown"`` where they did not, and ``"untested allocation"``
    where the run did not count them (or recorded no clocks for the
    collective). Where the wall clock's step also exceeds the CPU clock's
    (the CPU clock shows less than ``1 - tolerance`` of it), time slicing
    makes the rest: ``" and slicing"`` is added.

    >>> sizes, wall = [2**24, 2**25], [12e9, 3.1e9]
    >>> step_cause((2**24, 2**25, 1.7), sizes, wall, cpu_rates=[12e9, 11e9], clock=(1.5, 1.8), faults=(0.05, 0.5))
    'allocation'
    >>> step_cause((2**24, 2**25, 1.7), sizes, wall, cpu_rates=[12e9, 6e9], clock=(1.5, 1.8), faults=(0.05, 0.5))
    'cache'
    >>> step_cause((2**24, 2**25, 1.7), sizes, wall, cpu_rates=[12e9, 11e9], clock=(3.8, 1.0))
    'slicing'
    >>> step_cause((2**24, 2**25, 3.0), sizes, wall, cpu_rates=[12e9, 11e9], clock=(2.99, 1.65), faults=(0.0, 0.5))
    'allocation and slicing'
    """
    a, b, factor = step
    share = cache_share(step, sizes, rates, low, high)
    if share is None:
        return "untested"
    if cpu_rates is None:
        return {"most": "cache", "part": "cache part", "little": "cache part"}.get(share, share)
    if factor <= 1:
        return "none"
    at = {float(x): i for i, x in enumerate(sizes)}
    gc = cpu_rates[at[float(a)]] / cpu_rates[at[float(b)]]
    if gc >= factor ** 0.5:
        return "cache"
    if gc > 1 + tolerance:
        return "cache part"
    if clock is None:
        return "untested allocation"
    if clock[1] <= 1 + tolerance:    # the CPU clock shows no step: the waits for the cores make all of it
        return "slicing"
    cause = ("untested allocation" if faults is None else
             "allocation" if faults[1] - faults[0] >= jump else "unknown")
    return cause + (" and slicing" if clock[1] < (1 - tolerance) * clock[0] else "")


_STEP_WORDS = {
    "untested": "this run cannot test the cache there",
    "none": "the copy control does not explain it",
    "unclear": "the copy control is too spread to tell whether the cache explains it",
    "cache": "the copy control got dearer there too, so the buffers outgrowing a cache can explain it",
    "cache part": "a cache explains a part of it at most",
    "slicing": "the clocks point to time slicing, not the cache",
    "allocation": "the page counts point to allocation, a buffer mapped afresh on every call, not to the cache or "
                  "time slicing",
    "unknown": "the clocks rule out the cache and time slicing, and the run does not identify what made it",
    "untested allocation": "the clocks rule out the cache; allocation is a candidate this run does not test",
    "allocation and slicing": "the page counts point to allocation, a buffer mapped afresh on every call, not to "
                              "the cache, with time slicing making the rest",
    "unknown and slicing": "the clocks rule out the cache and point to time slicing for part of it; the run does "
                           "not identify the rest",
    "untested allocation and slicing": "the clocks rule out the cache and point to time slicing for part of it; "
                                       "allocation is a candidate this run does not test",
}


def step_summary(op: str, step: tuple[float, float, float], cause: str) -> str:
    """One sentence for the main text: where each byte of ``op`` got dearer most, and the cause the run's controls
    leave standing (``cause``: one of :data:`STEP_CAUSES`, from :func:`step_cause`); the clocks and page counts
    behind it are :func:`cache_phrase`'s, for a dropdown.

    >>> step_summary("all-reduce", (2**24, 2**25, 1.5), "allocation")[:68]
    'Each byte of all-reduce got dearer most between 16 MiB and 32 MiB: t'
    """
    if cause not in _STEP_WORDS:
        raise ValueError(f"cause must be one of {STEP_CAUSES}, got {cause!r}")
    return (f"Each byte of {op} got dearer most between {format_bytes(step[0])} and {format_bytes(step[1])}: "
            f"{_STEP_WORDS[cause]}.")


def pages_words(fraction: float) -> str:
    """Fresh pages per call as a share of the message, in per cent: whole per cent, ``"under 1 %"`` for a share that
    rounds to 0 but is not, ``"0 %"`` for none.

    >>> pages_words(0.5), pages_words(0.0001), pages_words(0.0)
    ('50 %', 'under 1 %', '0 %')
    """
    return f"{100 * fraction:.0f} %" if fraction >= 0.005 or fraction == 0 else "under 1 %"


def cache_phrase(step: tuple[float, float, float], sizes: Sequence[float], rates: Sequence[float],
                 low: Sequence[float] | None = None, high: Sequence[float] | None = None,
                 op: str = "the collective", core_share: float | None = None,
                 enough: float = CORE_SHARE_ENOUGH, short: bool = False,
                 cpu_rates: Sequence[float] | None = None, clock: tuple[float, float] | None = None,
                 faults: tuple[float, float] | None = None, tolerance: float = RATE_TOLERANCE) -> str:
    """Does the copy control, timed in turns with the collectives, explain a collective's steepest step?

    Returns the end of a sentence that begins "the copy control ...".
    Without ``cpu_rates`` the rule is :func:`cache_share`'s, on the wall
    clock: a copy that outlasts a scheduler time slice is slowed by the
    slicing too, so where the ranks got less than ``enough`` of their cores'
    time (``core_share``) and the control got dearer, time slicing is named
    as another cause. With the copy's CPU-time rates (and the collective's
    ``clock`` and ``faults``), :func:`step_cause` decides, and the words
    give each clock's factor: not the cache where per CPU second the copy
    did not get dearer; not time slicing where the collective's own CPU time
    shows the step too; then allocation, where the pages mapped in afresh per
    call jumped across the step, or a cause the run does not identify.
    ``short``: the control's rates at the two sizes are left to a table beside the prose
    (:func:`commlib.views.lab.cache_table`); the slowdown, its range and the collective's step stay (with
    ``cpu_rates``, the range and the fresh pages' shares are left to the table too).

    >>> cache_phrase((2**23, 2**24, 2.2), [2**23, 2**24], [30e9, 16e9], op="all-reduce")[-35:]
    'so the cache can explain most of it'
    >>> cache_phrase((2**23, 2**24, 2.2), [2**23, 2**24], [30e9, 29e9])[-44:]
    'so the cache does not explain the step there'
    >>> cache_phrase((2**24, 2**25, 1.7), [2**24, 2**25], [12e9, 3.1e9], cpu_rates=[12e9, 11e9],
    ...              clock=(1.5, 1.8), faults=(0.05, 0.5), short=True).split(": ", 2)[2][:68]
    'not the cache, since per second of CPU time the copy did not get dea'
    """
    a, b, factor = step
    low, high = low or rates, high or rates
    share = cache_share(step, sizes, rates, low, high)
    if share is None:
        return (f"was not measured at {format_bytes(a)} and {format_bytes(b)}, on either side of {op}'s step, "
                "so this run cannot test the cache")
    at = {float(x): i for i, x in enumerate(sizes)}
    i, j = at[float(a)], at[float(b)]
    g = rates[i] / rates[j]
    rates_words = ("ran at the rates in the table: " if short else
                   f"ran at {rates[i] / 1e9:.1f} GB/s per rank at {format_bytes(a)} ({low[i] / 1e9:.1f} to "
                   f"{high[i] / 1e9:.1f} over the middle half of its calls) and {rates[j] / 1e9:.1f} GB/s at "
                   f"{format_bytes(b)} ({low[j] / 1e9:.1f} to {high[j] / 1e9:.1f}): ")
    spread = (f"({low[i] / high[j]:.1f} to {high[i] / low[j]:.1f} within "
              f"{'the middle halves of its calls' if short else 'those spreads'})")
    if cpu_rates is not None and factor > 1:
        gc = cpu_rates[i] / cpu_rates[j]
        cause = step_cause(step, sizes, rates, low, high, cpu_rates, clock, faults, tolerance)
        text = (rates_words + f"each byte copied got {g:.1f} times as dear by the wall clock"
                + ("" if short else f" {spread}")     # short: the table beside gives the middle halves
                + f" and {gc:.1f} times by its own CPU time, against {factor:.1f} times for {op}")
        if cause == "cache":
            return text + ", so the buffers outgrowing a cache can explain the step: the copy got dearer on both clocks"
        if cause == "cache part":
            head = text + ", so a cache explains a part of the step at most"
        else:
            head = (text + ": not the cache, since per second of CPU time the copy did not get dearer"
                    + (" (its growth by the wall clock is time slicing)" if g > 1 + tolerance else ""))
        if cause == "slicing" or clock is None:
            return head + (f"; {op}'s own CPU time shows the step less ({clock[1]:.1f} times), so waits for the "
                           "cores, time slicing, can explain it" if clock is not None else "")
        head += (f"; nor time slicing, since {op}'s own CPU time shows the step too ({clock[1]:.1f} times)"
                 if clock[1] >= (1 - tolerance) * clock[0] else
                 f"; {op}'s own CPU time shows it less ({clock[1]:.1f} times), so time slicing can explain the rest")
        if faults is None:
            return (head + ". Allocation, a buffer mapped and faulted in afresh on every call, is a candidate this "
                    "run does not test")
        pages = (f"the fresh pages each call of {op} mapped in rose from {pages_words(faults[0])} of the message at "
                 f"{format_bytes(a)} to {pages_words(faults[1])} at {format_bytes(b)}" if not short else
                 f"the fresh pages each call of {op} mapped in, as a share of the message, "
                 + ("jumped" if faults[1] - faults[0] >= FAULT_JUMP else "did not jump")
                 + " across the step (the table's last column)")
        if faults[1] - faults[0] >= FAULT_JUMP:
            return (head + f". The step coincides with allocation: {pages}, as where a temporary buffer is mapped "
                    "anew on every call, so allocation is the cause the run's page counts point to (the run did "
                    "not time the calls without it)")
        return head + f". Nor is it allocation: {pages}, so this run does not identify what made the step"
    text = (rates_words
            + f"each byte copied got {g:.1f} times as dear {spread}, against {factor:.1f} times for {op}")
    return text + {"most": ", so the cache can explain most of it",
                   "none": ", so the cache does not explain the step there",
                   "part": ", so the cache can explain part of the step, not all of it",
                   "little": ", so the cache can explain at most a small part of the step",
                   "unclear": ", and the control's spread is too wide for this run to tell whether the cache "
                              "explains the step"}[share] + (_slicing(core_share) if share != "none" and g > 1
                                                             and core_share is not None and core_share < enough
                                                             else "")


def _slicing(core_share: float) -> str:
    return (f"; but the ranks got {100 * min(core_share, 1.0):.0f} % of their cores' time, and a copy that outlasts "
            "a time slice is slowed by the slicing as well, so time slicing, not the cache, may be what made the "
            "larger copies dearer")


def growth_sentence(factor: float, lo: float, hi: float, copy_factor: tuple[float, float] | None = None,
                    loaded: Sequence[float] = (), tolerance: float = RATE_TOLERANCE,
                    core_share: float | None = None, enough: float = CORE_SHARE_ENOUGH,
                    copy_cpu_factor: float | None = None, faults: tuple[float, float] | None = None,
                    jump: float = FAULT_JUMP, matched: bool = False,
                    sweep_factors: Sequence[float] = ()) -> str:
    """What a collective's time growth over eight times the bytes says, with the cause chosen by the run's controls.

    ``sweep_factors``: the same growth in each sweep alone; where given, the cost per byte is quoted as the range
    they and ``factor`` span, no finer than the sweeps agree.

    ``matched``: the control's factors were read where its buffers hold as much memory as the collective's
    (:func:`commlib.lab.memory.matched_control`), and the words say so.

    Where the copy control got dearer by the wall clock, its own CPU time
    decides (``copy_cpu_factor``: the copy's CPU-time ratio over the same
    sizes, :func:`commlib.lab.runner.copy_cpu_control`): a cache makes each
    byte dearer on both clocks, time slicing on the wall clock alone. Where
    the CPU clock shows the growth too (per byte, at least the square root
    of the collective's, the test the wall clock passed), the cache can
    explain it; where it shows none (within ``tolerance`` of 1 or below),
    the wall clock's growth is time slicing, not the cache; in between, a
    cache explains a part at most. Without CPU times, and with the ranks
    below ``enough`` of their cores' time (``core_share``), time slicing is
    named beside the cache (:func:`cache_phrase`).

    ``factor``: the time at ``hi`` over the time at ``lo`` bytes (``hi =
    8 lo``); ``copy_factor``: the copy control's time ratio over the same
    sizes, at its smallest and largest within its quartiles (``None``: not
    measured); ``loaded``: sizes in ``[lo, hi]`` that failed a load check
    (:func:`commlib.lab.fit.suspects`). A factor from ``1 - tolerance`` to
    ``size (1 + tolerance)`` needs no cause, and is said as what it is:
    ``faults``: the pages each call mapped in afresh at ``lo`` and at ``hi``,
    as fractions of the message (:func:`commlib.lab.runner.fault_fractions`);
    where they rose by ``jump`` or more, allocation is named beside the
    controls' causes.

    within ``tolerance`` of 1 (a pure start-up cost), within it of the size
    ratio (pure copying), or between the two, where both terms weigh.

    >>> growth_sentence(12.2, 2**23, 2**26, (7.9, 8.3), [2**24])[:60]
    'Here each byte became 1.5 times dearer. The copy control did'
    >>> growth_sentence(1.5, 2**10, 2**13, None, [2**11, 2**13])[-87:]
    'The timings at 2 KiB, 8 KiB fail a load check below, so load is mixed into this factor.'
    >>> growth_sentence(1.1, 2**10, 2**13)[:69]
    "That is within a quarter of a pure start-up cost's factor: at these s"
    >>> growth_sentence(8.4, 2**23, 2**26)[:60]
    "That is within a quarter of pure copying's factor: each byte"
    >>> growth_sentence(10.2, 2**23, 2**26, (20.8, 23.2), core_share=0.29, copy_cpu_factor=7.4)[146:247]
    'by its own CPU time: per second of CPU time the copy did not get dearer, so the cache does not explai'
    >>> growth_sentence(10.2, 2**23, 2**26, (20.8, 23.2), copy_cpu_factor=20.0)[40:139]
    'The copy control got 2.6 to 2.9 times dearer per byte over the same sizes by the wall clock and 2.5'
    """
    size = hi / lo
    where = _sizes_listed(loaded)
    if factor < 1 - tolerance:
        return ("Here the smaller message took longer: other programs' turns on the cores are mixed into the times, "
                "which happens on a busy machine.")
    if factor <= size * (1 + tolerance):
        part = _part_words(tolerance)
        if factor <= 1 + tolerance:
            said = (f"That is within {part} of a pure start-up cost's factor: at these sizes the start-up cost is "
                    "nearly all of the time.")
        elif factor >= size * (1 - tolerance):
            said = (f"That is within {part} of pure copying's factor: each byte cost about as much at the larger "
                    "sizes as at the smaller.")
        else:
            nearer = factor < size ** 0.5
            said = (f"That is more than {part} away from both a pure start-up cost's factor and pure copying's: "
                    "both terms weigh at these sizes, the start-up cost the " + ("more" if nearer else "less")
                    + " (on a log scale the factor is nearer " + ("a pure start-up cost's" if nearer else
                                                                  "pure copying's") + ").")
        return said + (f" The timings at {where} fail a load check below, so load is mixed into this factor."
                       if loaded else "")
    excess = factor / size
    parts = []
    control = ("The copy control, read where its buffers hold as much memory as the collective's," if matched
               else "The copy control")
    if copy_factor is not None:
        c_lo, c_hi = copy_factor[0] / size, copy_factor[1] / size
        if c_lo >= excess ** 0.5 and copy_cpu_factor is not None:
            cpu = copy_cpu_factor / size
            head = (f"{control} got {c_lo:.1f} to {c_hi:.1f} times dearer per byte over the same sizes by the "
                    f"wall clock and {cpu:.1f} times by its own CPU time")
            if cpu >= excess ** 0.5:
                parts.append(head + ", so the buffers outgrowing a level of the memory hierarchy can explain it: the "
                             "copy got dearer on both "
                             "clocks")
            elif cpu <= 1 + tolerance:
                parts.append(head + ": per second of CPU time the copy did not get dearer, so the cache does not "
                             "explain it; the copy's growth by the wall clock is time slicing, which may have made the "
                             "collective's bytes dearer too")
            else:
                parts.append(head + ", so the memory hierarchy explains a part of it at most; the rest of the copy's growth by "
                             "the wall clock is time slicing")
        elif c_lo >= excess ** 0.5:
            parts.append(f"{control} got {c_lo:.1f} to {c_hi:.1f} times dearer per byte over the same sizes, so "
                         "the buffers outgrowing a level of the memory hierarchy can explain much of it"
                         + (_slicing(core_share) if core_share is not None and core_share < enough else ""))
        elif c_hi < excess ** 0.15:
            parts.append(f"{control} did not get dearer per byte over the same sizes ({c_lo:.1f} to "
                         f"{c_hi:.1f} times), so the memory hierarchy does not explain it")
        elif c_lo >= excess ** 0.15 and c_hi < excess ** 0.5:
            parts.append(f"{control} got {c_lo:.1f} to {c_hi:.1f} times dearer per byte over the same sizes, so the "
                         "buffers outgrowing a level of the memory hierarchy can explain part of it, not all")
        else:
            parts.append(f"{control} got {c_lo:.1f} to {c_hi:.1f} times dearer per byte over the same sizes, "
                         "too spread to tell whether the memory hierarchy explains it")
    if faults is not None and faults[1] - faults[0] >= jump:
        rise = faults[1] - faults[0]
        by = "half the message" if abs(rise - 0.5) < 0.05 else f"{pages_words(rise)} of the message"
        parts.append(f"the fresh pages each call mapped in rose by {by} over "
                     "the same sizes, so allocation, a buffer mapped and faulted in afresh on every call, can explain "
                     "part of it too")
    if loaded:
        parts.append(f"the timings at {where} fail a load check below, so load may explain it")
    else:
        parts.append("no timing in that range fails a load check")
    if sweep_factors:
        every = [factor, *sweep_factors]
        dearer_by = f"{_ratio_range(min(every) / size, max(every) / size)} times dearer, by the sweep"
    else:
        dearer_by = f"{excess:.1f} times dearer"
    return f"Here each byte became {dearer_by}. " + "; ".join(parts) + "."


def large_growth_words(large: float, sweeps: Sequence[float], size: float = 8.0,
                       tolerance: float = RATE_TOLERANCE) -> tuple[str, str]:
    """A growth factor over ``size`` times the bytes, as the range it and each sweep's own factor (``sweeps``) span,
    and a note on what a fixed cost per byte would give: ``(range words, note)``.

    >>> large_growth_words(15.6, [16.2, 13.9])[0]
    '14 to 16 times as long (the two sweeps read alone)'
    >>> large_growth_words(15.6, [16.2, 13.9])[1]
    'more than the 8 a fixed cost per byte would give: each byte got dearer'
    >>> large_growth_words(8.2, [8.0])[1]
    'about the 8 a fixed cost per byte would give'
    """
    every = [check_positive("large", large), *sweeps]
    k = _WORDS.get(len(sweeps), str(len(sweeps)))
    words = f"{_ratio_range(min(every), max(every))} times as long" + (f" (the {k} sweeps read alone)" if sweeps else "")
    if min(every) > size * (1 + tolerance):
        note = f"more than the {size:.0f} a fixed cost per byte would give: each byte got dearer"
    elif max(every) < size * (1 - tolerance):
        note = f"less than the {size:.0f} a fixed cost per byte would give: the start-up cost still weighs"
    else:
        note = f"about the {size:.0f} a fixed cost per byte would give"
    return words, note


def _part_words(fraction: float) -> str:
    """A tolerance in words where it is a common fraction, else in per cent: a limit, not a measured number.

    >>> _part_words(0.25), _part_words(0.5), _part_words(0.2)
    ('a quarter', 'a half', '20 %')
    """
    return {0.25: "a quarter", 0.5: "a half", 0.1: "a tenth"}.get(round(fraction, 6), f"{100 * fraction:.0f} %")


def _sizes_listed(sizes: Sequence[float]) -> str:
    """Sizes (bytes) in words: one or two by name, three or more as a count and a span (two numbers, not many).

    >>> _sizes_listed([2**11, 2**13]), _sizes_listed([2**10, 2**11, 2**12, 2**13])
    ('2 KiB, 8 KiB', 'four sizes from 1 KiB to 8 KiB')
    """
    xs = sorted(set(sizes))
    if len(xs) <= 2:
        return ", ".join(format_bytes(x) for x in xs)
    return f"{_WORDS.get(len(xs), str(len(xs)))} sizes from {format_bytes(xs[0])} to {format_bytes(xs[-1])}"


def shape_takeaway(small: float, large: float, tolerance: float = RATE_TOLERANCE,
                   loaded: Sequence[float] = (), large_sweeps: Sequence[float] = ()) -> str:
    """The first takeaway, as the run's two growth factors (time over eight times the bytes) allow it.

    ``small``: 1 KiB to 8 KiB; ``large``: 8 MiB to 64 MiB. Small messages show
    the start-up regime when eight times the bytes took from ``1 - tolerance`` times as
    long (a smaller message taking longer is load, not a flat part) to less
    than ``sqrt(8)`` times (nearer 1 than 8), and are called nearly flat only
    up to ``1 + tolerance``; large ones as proportional from
    ``8 (1 - tolerance)`` to ``8 (1 + tolerance)`` (beyond it each byte got
    dearer: not proportional either). ``large_sweeps``: the large factor in each sweep alone; where given, it is
    quoted as the range they and ``large`` span.

    >>> shape_takeaway(1.3, 8.4)[:60]
    'A real collective showed here the two regimes the alpha-beta'
    >>> "this run does not show the flat part" in shape_takeaway(338.0, 8.4)
    True
    >>> "does not show either regime" in shape_takeaway(0.0087, 8.9 * 2)
    True
    >>> "The timings at 2 KiB fail a load check" in shape_takeaway(1.5, 12.0, loaded=[2**11])
    True
    """
    check_positive("small", small)
    check_positive("large", large)
    flat = 1 - tolerance <= small < 8 ** 0.5
    proportional = 8 * (1 - tolerance) <= large <= 8 * (1 + tolerance)
    load = (f" The timings at {_sizes_listed(loaded)} fail a load check, so load is "
            "mixed into these factors." if loaded else "")
    if flat and proportional:
        small_words = ("nearly flat for small messages (eight times the bytes took "
                       f"{small:.1f} times as long, within {_part_words(tolerance)} of no growth)"
                       if small <= 1 + tolerance else
                       "a start-up cost that outweighs the bytes for small messages (eight times the bytes took "
                       f"{small:.1f} times as long: nearer no growth than growth in proportion, but not flat)")
        return (f"A real collective showed here the two regimes the alpha-beta model describes: {small_words}, "
                f"rising with the size for large ones ({large:.1f} times).{load}")
    big = [large, *large_sweeps]
    large_words = (f"{_ratio_range(min(big), max(big))} times as long, by the sweep" if large_sweeps
                   else f"{figures(large)} times")
    if large > 8 * (1 + tolerance):
        large_words += ": more than the 8 a fixed cost per byte would give, since each byte got dearer"
    missing = ("either regime" if not flat and not proportional else
               "the flat part" if not flat else "the part proportional to size")
    return (f"The alpha-beta model expects small messages to cost about the same whatever their size and large ones "
            f"in proportion to it; here eight times the bytes took {figures(small)} times as long among the smallest "
            f"sizes and {large_words} among the largest, so this run does not show {missing} cleanly.{load}")


def alpha_determined(sweeps: Sequence[float], spread: float = 2.0) -> bool:
    """Whether the sweeps of a run, each fitted alone, agree on a start-up cost (s) within a factor ``spread``.

    >>> alpha_determined([11e-6, 14e-6]), alpha_determined([3e-6, 40e-6]), alpha_determined([0.0, 5e-6])
    (True, False, False)
    """
    check_positive("spread", spread)
    values = [float(a) for a in sweeps]
    return not values or (min(values) > 0 and max(values) <= spread * min(values))


def alpha_usable(sweeps: Sequence[float], line_error: float | None = None, spread: float = 2.0,
                 target: float = 0.2) -> bool:
    """Whether a line's fitted alpha means something: its sweeps agree (:func:`alpha_determined`) and the line
    fits its own points, its median ``|relative error|`` ``line_error`` (a fraction; ``None``: not checked) within
    ``target``. A fitted number of a line that misses its points is the fit's, not the machine's.

    >>> alpha_usable([11e-6, 14e-6], 0.08), alpha_usable([11e-6, 14e-6], 0.48), alpha_usable([3e-6, 40e-6], 0.08)
    (True, False, False)
    """
    if line_error is not None:
        check_nonnegative("line_error", line_error)
    return alpha_determined(sweeps, spread) and (line_error is None or line_error <= target)


def alpha_quote(alpha: float, sweeps: Sequence[float], spread: float = 2.0, what: str = "the line's α",
                show: bool = False, line_error: float | None = None, target: float = 0.2) -> str:
    """A fitted start-up cost (s) for the prose, or that the run does not fix it when its sweeps disagree.

    ``sweeps``: the same fit on each sweep alone. Where the largest is more
    than ``spread`` times the smallest (or one is not positive), quoting the
    value to two figures would claim more than the run knows. ``what`` names
    the value; ``show`` adds the sweeps' own values where they agree too.
    ``line_error``: the line's median ``|relative error|`` on its own points
    (a fraction), said beside the value; beyond ``target`` the line does not
    fit, and its alpha is not quoted as the machine's (:func:`alpha_usable`).

    >>> alpha_quote(12.3e-6, [11e-6, 14e-6])
    "the line's α is 12 µs"
    >>> alpha_quote(12.3e-6, [11e-6, 14e-6], what="the four-rank α", show=True)
    'the four-rank α is 12 µs (its sweeps, fitted alone: 11 µs and 14 µs)'
    >>> alpha_quote(12.3e-6, [3e-6, 40e-6])[:40]
    "this run does not determine the line's α"
    >>> alpha_quote(12.3e-6, [11e-6, 14e-6], line_error=0.48)[:81]
    "this run does not fix the line's α: the line misses its own points by a median of"
    >>> alpha_quote(1.8e-3, [2.1e-3, 2.0e-3], show=True)[-85:]
    "both on one side of it: the fit keeps each size's faster sweep, and so mixes the two)"
    >>> alpha_quote(12.3e-6, [11e-6, 14e-6], line_error=0.081)
    "the line's α is 12 µs (the line misses its own points by a median of 8 %)"
    """
    values = [float(a) for a in sweeps]
    given = " and ".join(time_text(a) for a in values)
    if not alpha_determined(values, spread):
        return (f"this run does not determine {what}: its sweeps, fitted alone, give {given}, more than "
                f"{spread:g} times apart")
    missed = "" if line_error is None else f"the line misses its own points by a median of {100 * line_error:.0f} %"
    if line_error is not None and not alpha_usable(values, line_error, spread, target):
        return (f"this run does not fix {what}: {missed}, beyond the {100 * target:.0f} % target, so the fitted "
                f"{time_text(alpha)} is the fit's, not a start-up cost of the machine")
    outside = (bool(values) and not min(values) <= alpha <= max(values)     # and so printed: not equal at 2 figures
               and time_text(alpha) not in {time_text(a) for a in values})
    notes = [f"its sweeps, fitted alone: {given}" + (", both on one side of it: the fit keeps each size's faster "
                                                     "sweep, and so mixes the two" if outside else "")
             ] if show and values else []
    notes += [missed] if missed else []
    extra = f" ({'; '.join(notes)})" if notes else ""
    return f"{what} is {time_text(alpha)}{extra}"


def slope_quote(bandwidth: float, usable: bool, what: str = "its $1/\\beta$") -> str:
    r"""A line's fitted ``1/beta`` (bytes/s) for the prose, on the same gate as its alpha (:func:`alpha_usable`).

    Where the line fits (``usable``) the rate is quoted as the line's, to be
    held against the bus bandwidth measured further down; where it does not,
    the slope of a line that misses its points is the fit's as much as its
    alpha is, and the words say so and point to the measured rate instead.

    >>> print(slope_quote(1.13e9, True))
    its $1/\beta$ is 1.1 GB/s (held against the bus bandwidth measured at the largest size further down)
    >>> print(slope_quote(1.13e9, False)[:88])
    its $1/\beta$, 1.1 GB/s, is the same line's slope, and so the fit's as much as its α is:
    """
    check_positive("bandwidth", bandwidth)
    rate = f"{figures(bandwidth / 1e9)} GB/s"
    if usable:
        return f"{what} is {rate} (held against the bus bandwidth measured at the largest size further down)"
    return (f"{what}, {rate}, is the same line's slope, and so the fit's as much as its α is: the rate to read "
            "is the bus bandwidth measured at the largest size further down, which needs no fit, though it too is "
            "the rate of the machine, the library and the load together, which the sections below take apart as "
            "far as the run allows")


def sweep_match_sentence(op_sweep: int, copy_sweep: int, nbytes: float | None = None, op: str = "all-reduce") -> str:
    """Whether a collective and the copy control it is held against kept the same sweep at a size (``nbytes``).

    Each side keeps, at each size, its own less loaded sweep
    (:func:`commlib.lab.runner.kept_sweep`): the same sweep means the two
    were timed in the same turns, under the same load; different sweeps,
    at different moments of the run, under whatever load each met.
    ``nbytes``: the size, named; ``None``: "the largest size".

    >>> sweep_match_sentence(1, 1, 2**26)[:62]
    'At 64 MiB all-reduce and the copy control kept the same sweep,'
    >>> sweep_match_sentence(0, 1, 2**26)[:70]
    'At 64 MiB all-reduce kept its first sweep and the copy control its sec'
    """
    ordinal = ("first", "second", "third", "fourth")

    def nth(k: int) -> str:
        return ordinal[k] if 0 <= k < len(ordinal) else f"sweep {k + 1}'s"

    size = "the largest size" if nbytes is None else format_bytes(nbytes)
    if op_sweep == copy_sweep:
        return (f"At {size} {op} and the copy control kept the same sweep, the {nth(op_sweep)}, so the two sides of "
                "this comparison were timed in the same turns.")
    return (f"At {size} {op} kept its {nth(op_sweep)} sweep and the copy control its {nth(copy_sweep)}: each side is "
            "its own less loaded sweep, so the two were timed at different moments of the run, not in the same "
            "turns, and the load on one need not be the load on the other.")


def time_text(seconds: float) -> str:
    """A time to two significant figures, in µs below a millisecond and in ms from there.

    >>> time_text(12.3e-6), time_text(3.3e-3), time_text(0.0)
    ('12 µs', '3.3 ms', '0 µs')
    """
    if seconds >= 1e-3:
        return f"{figures(1e3 * seconds)} ms"
    return f"{figures(1e6 * seconds)} µs"


def copy_clock_sentence(wall: float, cpu: float, tolerance: float = 0.1, slowed: float | None = None) -> str:
    """What the copy control's two clocks say together (rates in bytes/s): did load slow the copies?

    ``wall``: bytes copied per second of wall time; ``cpu``: per second of
    the copying thread's own CPU time. A thread that waits for its core
    while other programs run loses wall time, not CPU time. ``slowed``: the
    fraction of the copy calls whose wall time exceeded their CPU time by
    more than ``tolerance`` (``None``: not counted); from 0.9 up the load is
    said to have fallen on the copies, not on some of them.

    >>> copy_clock_sentence(10e9, 10.4e9)[:44]
    'The two clocks agree within 10 %: the copies'
    >>> copy_clock_sentence(5e9, 10e9)[:52]
    'Per second of CPU time the copy ran 2.0 times as fas'
    """
    check_positive("wall", wall)
    check_positive("cpu", cpu)
    check_fraction("tolerance", tolerance)
    ratio = cpu / wall
    if abs(ratio - 1.0) <= tolerance:
        return (f"The two clocks agree within {100 * tolerance:.0f} %: the copies had their cores to themselves, "
                "and the wall-time rate is one thread's copy rate in this run, not a rate slowed by load.")
    if ratio > 1.0:
        return (f"Per second of CPU time the copy ran {figures(ratio)} times as fast as per second of wall time: "
                f"other programs held the cores during {_which_copies(slowed)}, so the wall-time rate is partly the "
                "load's, "
                "and the CPU-time rate is the nearer to one thread's copy rate.")
    return (f"Per second of CPU time the copy ran at {figures(ratio)} times its wall-time rate: at this size the "
            "clocks' own overheads weigh on the CPU time, and the wall-time rate is the one to read.")


def _which_copies(slowed: float | None) -> str:
    if slowed is None:
        return "some copies"
    if slowed >= 0.9:
        return "the copies (nearly every one at this size ran slower by the wall clock than by its own CPU time)"
    return (f"some copies ({100 * slowed:.0f} % of those at this size ran slower by the wall clock than by their own "
            "CPU time)")


def step_load_note(step: tuple[float, float, float], loaded: Sequence[float], holds: bool = True,
                   clock: tuple[float, float] | None = None, tolerance: float = RATE_TOLERANCE) -> str:
    """A caveat for a fit-free step in cost per byte (:func:`commlib.lab.fit.steepest_step`): does it rest on a
    timing that failed a load check (``loaded``: those sizes, :func:`commlib.lab.fit.suspects`), and does the
    series keep it (``holds``: :func:`commlib.lab.fit.step_holds`; where not, the step is called suspect)?

    >>> step_load_note((2**20, 2**21, 2.0), [2**20])
    'The timing at 1 MiB fails a load check, so load may explain the step.'
    >>> step_load_note((2**20, 2**21, 2.0), [2**24])
    ''
    >>> step_load_note((2**20, 2**21, 2.0), [], holds=False)[:72]
    'The step is suspect: the cost per byte does not stay up after it (its me'
    >>> step_load_note((2**20, 2**21, 4.0), [], clock=(4.0, 1.0))[:101]
    "By the ranks' own CPU time each byte got 1.0 times dearer there, far less than by the wall clock: the"

    ``clock``: how many times dearer each byte got across the step by the
    wall clock and by the ranks' own CPU time
    (:func:`commlib.lab.runner.clock_steps`); a step the CPU clock does not
    show (less than ``1 - tolerance`` of the wall clock's) is said to be the
    waits for the cores.
    """
    ends = [x for x in step[:2] if x in set(float(v) for v in loaded)]
    text = ""
    if ends:
        where = " and ".join(format_bytes(x) for x in ends)
        verb = "fails" if len(ends) == 1 else "fail"
        text = (f"The timing{'s' if len(ends) > 1 else ''} at {where} {verb} a load check, so load may explain the "
                "step.")
    if not holds:
        text += (" " if text else "") + (
            "The step is suspect: the cost per byte does not stay up after it (its median above the step exceeds "
            "its median below by less than the square root of the step's factor), so one timing, not a change in "
            "the machine, may make it.")
    if clock is not None:
        wall, cpu = clock
        text += (" " if text else "") + (
            f"By the ranks' own CPU time each byte got {dearer(cpu)} there, far less than by the wall clock: "
            "the ranks waited for their cores, so time slicing under load, not the machine, makes the step."
            if cpu <= 1 + tolerance else
            f"By the ranks' own CPU time each byte got {cpu:.1f} times dearer there, less than by the wall clock: that "
            "much is a change in the work itself, and time slicing makes the rest on the wall clock."
            if cpu < (1 - tolerance) * wall else
            f"By the ranks' own CPU time each byte got {cpu:.1f} times dearer there too: the step shows on both "
            "clocks.")
    return text


def suspects_sentence(found: Sequence, total: int, shown: int = 6, sweep_limit: float | None = None,
                      gap: tuple[float, int] | None = None) -> str:
    """The load checks' findings in words: how many of ``total`` timings failed, and which (``found``: the
    :class:`commlib.lab.fit.Suspect` records of :func:`commlib.lab.fit.suspects`). Above half, the run is
    said to be too loaded to fit, before any parameter is quoted. ``shown``: how many are listed in words;
    with 0, only the count, for prose beside a table of them (:func:`commlib.views.lab.suspects_table`).
    ``sweep_limit`` and ``gap``: the sweep check's tolerance and :func:`commlib.lab.fit.sweep_gap`; where given,
    the sentence says how far apart the sweeps came within it, so that a pass is not read as agreement.

    >>> from commlib.lab.fit import Suspect
    >>> suspects_sentence([], 68)
    'None of the 68 timings fails the load checks.'
    >>> suspects_sentence([Suspect("all_gather", 4096.0, "slower than the all-reduce of the same size")], 68)[:71]
    '1 of the 68 timings fails the load checks: all-gather at 4 KiB (slower '
    """
    check_positive("total", total)
    within = ""
    if sweep_limit is not None and gap is not None and gap[1]:
        within = " " + sweep_gap_sentence(sweep_limit, gap)
    if not found:
        return f"None of the {total} timings fails the load checks." + within
    keys = list(dict.fromkeys((f.op, f.nbytes) for f in found))
    whys = {k: "; ".join(f.why for f in found if (f.op, f.nbytes) == k) for k in keys}
    listed = ", ".join(f"{op.replace('_', '-')} at {format_bytes(x)} ({whys[(op, x)]})" for op, x in keys[:shown])
    more = f", and {len(keys) - shown} more" if len(keys) > shown else ""
    fail = f"{len(keys)} of the {total} timings {'fails' if len(keys) == 1 else 'fail'} the load checks"
    text = (f"{fail}; the table below lists {'it' if len(keys) == 1 else 'them'}. " if shown == 0 else
            f"{fail}: {listed}{more}. ") + (
            "Read these as load, not as the machine: no algorithm makes them, and a regime that rests on them is "
            "suspect.")
    if len(keys) > total / 2:
        text += (" With more than half the timings failing, this run is too loaded to fit: the parameters below are "
                 "what a fit of loaded timings gives, not the library's; re-run the lab on an idle machine.")
    return text


def sweep_gap_sentence(sweep_limit: float, gap: tuple[float, int]) -> str:
    """How far apart the two sweeps came within the sweep check's tolerance (``gap``:
    :func:`commlib.lab.fit.sweep_gap`), so that a pass is not read as agreement; empty where they never parted.

    >>> sweep_gap_sentence(1.5, (1.25, 27))[:60]
    'The sweep check lets two sweeps differ by up to 1.5 times; a'
    """
    if not gap[1]:
        return ""
    return (f"The sweep check lets two sweeps differ by up to {sweep_limit:g} times; at {gap[1]} timings "
            f"the two sweeps' middle halves were apart, one median up to {gap[0]:.2f} times the other: a "
            "difference between moments of the run that every number quoted from one sweep carries.")


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


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


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


#: The allowances for load a busbw ratio is read under: none, dividing each run's busbw by its share of its cores'
#: time, or by the square of it (a step between two ranks moves only while both run, if their turns are independent).
LOAD_POWERS = (0, 1, 2)


def _normalised(rate2: float, rate4: float, share2: float | None, share4: float | None, power: int = 2) -> float:
    """busbw with four ranks over busbw with two, each divided by its run's share of its cores' time to ``power``.

    ``power`` 0 is the ratio as measured; 1 charges the load once; 2 assumes that a step between two ranks
    moves only while both run and that their turns are independent, which two ranks sharing one core are not
    (they never run at once). No allowance is tested by the run, so a conclusion must hold under all of them.
    Each share is read to two decimals, as the prose prints it and as :func:`load_gap` reads it.
    """
    check_positive("rate2", rate2)
    check_positive("rate4", rate4)
    # each share read to two decimals, as printed (the convention of load_gap)
    s2, s4 = (1.0 if s is None else round(min(s, 1.0), 2) for s in (share2, share4))
    check_positive("share2", s2)
    check_positive("share4", s4)
    return (rate4 / s4**power) / (rate2 / s2**power)


def _ratios(rate2: float, rate4: float, share2: float | None, share4: float | None) -> list[float]:
    powers = LOAD_POWERS if share2 is not None and share4 is not None else (0,)
    return [_normalised(rate2, rate4, share2, share4, p) for p in powers]


def ranks_rate_sentence(rate2: float, rate4: float, cores2: int, cores4: int,
                        tolerance: float = RATE_TOLERANCE, ranks2: int = 2, ranks4: int = 4,
                        share2: float | None = None, share4: float | None = None, short: bool = False) -> str:
    """How a collective's bus bandwidth at the largest size (bytes/s, measured) moved from two ranks to four.

    busbw is what each rank's link carried; all the ranks together moved
    ``ranks x busbw``. If copying on the cores were the limit, each rank
    would get ``min(cores, ranks) / ranks`` of a core, and busbw would move
    by the ratio of those shares (half, from two ranks on two cores to four
    on the same two). The two runs ran at different moments of a shared
    machine, and how much their loads slowed each is not measured: the
    ratio is read as measured and under each allowance of :data:`LOAD_POWERS`
    (``share2``, ``share4``: each run's share of its cores' time, see
    :func:`core_share_sentence`; ``None``: not reported, the ratio as
    measured alone). A cause is named only where every reading matches it,
    within ``tolerance``: the cores' share, or 1 (each rank with a link of
    its own: busbw unchanged). ``short``: each run's busbw and share are
    left to a table beside the prose (:func:`commlib.views.lab.ranks_rate_table`), and so is each reading's ratio
    (its last row): the sentence keeps the span of the readings and what it is held against.

    >>> ranks_rate_sentence(0.69e9, 0.70e9, 2, 2)[:107]
    'The bus bandwidth at the largest size is about the same with the ranks (0.70 GB/s with four, 0.69 GB/s with'
    >>> "near the cores' share per rank" in ranks_rate_sentence(1.0e9, 0.52e9, 2, 2)
    True
    >>> "cannot tell what set the rate" in ranks_rate_sentence(1.05e9, 0.83e9, 2, 2, share2=0.66, share4=0.79)
    True
    """
    ratios = _ratios(rate2, rate4, share2, share4)
    lo, hi = min(ratios), max(ratios)
    w4, w2 = _WORDS.get(ranks4, str(ranks4)), _WORDS.get(ranks2, str(ranks2))
    nums = ("the table gives both" if short else
            f"{rate4 / 1e9:.2f} GB/s with {w4}, {rate2 / 1e9:.2f} GB/s with {w2}")
    if len(ratios) > 1 and short:
        readings = (f"The run does not measure how the load slowed a step, so the table's last row reads the {w4} "
                    f"ranks' busbw over the {w2}'s three ways: as measured, with each busbw divided by its run's share "
                    "of its cores' time, and divided by the square of it; no one of these readings is known to be "
                    "right.")
    elif len(ratios) > 1:
        shares = f"{100 * min(share4, 1.0):.0f} % with {w4} and {100 * min(share2, 1.0):.0f} % with {w2}"
        readings = (f"As measured, the {w4} ranks had {ratios[0]:.2f} times the busbw of the {w2}; with each busbw "
                    f"divided by its run's share of its cores' time ({shares}), {ratios[1]:.2f} times, and divided by "
                    f"the square of it, {ratios[2]:.2f} times. The run does not measure how the load slowed a step, "
                    "so no one of these readings is known to be right.")
    else:
        readings = f"The {w4} ranks had {ratios[0]:.2f} times the busbw of the {w2}."
    limited = (min(cores4, ranks4) / ranks4) / (min(cores2, ranks2) / ranks2)   # busbw ratio if the cores set it
    near = [abs(limited - 1) > tolerance and abs(r / limited - 1) <= tolerance for r in ratios]
    same = [abs(r - 1) <= tolerance for r in ratios]
    against = (f"against {limited:.2f} if the ranks' time on the cores set it and 1 if each rank had a link of its "
               "own")
    if all(near):
        return (f"The bus bandwidth at the largest size falls with the ranks ({nums}). {readings} Every reading is "
                f"near the cores' share per rank ({limited:.2f} times), not 1.")
    if all(same):
        if abs(limited - 1) <= tolerance:
            return (f"The bus bandwidth at the largest size is about the same with the ranks ({nums}), and each rank "
                    f"had as much of a core in both runs. {readings}")
        return (f"The bus bandwidth at the largest size is about the same with the ranks ({nums}). {readings} Every "
                f"reading is near 1, though copying on the cores alone would have made it {limited:.2f}. So the "
                f"{w2}-rank run was not limited by copying on its cores; this run does not say what else held it back.")
    def verb(r: float) -> str:
        return "grows" if r > 1 + tolerance else "falls" if r < 1 - tolerance else "stays about the same"

    measured, allowed = verb(ratios[0]), {verb(r) for r in ratios[1:]}
    compared = {"grows": "higher", "stays about the same": "about the same", "falls": "lower"}
    under = "both load allowances" if len(ratios) == 3 and len(allowed) == 1 else "the load allowances"
    more = (measured + " with the ranks" if not allowed or allowed == {measured} else
            f"{measured} with the ranks as measured, and is "
            + " or ".join(compared[v] for v in compared if v in allowed) + f" under {under}")
    verdict = ("Which of the two it is nearer depends on the reading, so this run cannot tell what set the rate."
               if any(near) or any(same) else "This run does not say why.")
    return (f"The bus bandwidth at the largest size {more} ({nums}). {readings} The readings span "
            f"{lo:.2f} to {hi:.2f}, {against}. {verdict}")


def ranks_rate_short(rate2: float, rate4: float, cores2: int, cores4: int, ranks2: int = 2, ranks4: int = 4,
                     share2: float | None = None, share4: float | None = None,
                     tolerance: float = RATE_TOLERANCE) -> str:
    """:func:`ranks_rate_sentence` in a phrase for a takeaway: the busbw ratio (its span over the readings of the
    load), against the cores' share, and the sentence's verdict.

    >>> ranks_rate_short(0.69e9, 0.70e9, 2, 2)
    "four ranks on two cores had 1.01 times the busbw of two, against 0.50 had the ranks' time on the cores set it: not limited by copying"
    >>> text = ranks_rate_short(1.05e9, 0.83e9, 2, 2, share2=0.66, share4=0.79)
    >>> text[:91], text[-37:]
    ('four ranks on two cores had 0.55 to 0.79 times the busbw of two, by how the load is allowed', 'the run cannot tell what set the rate')
    """
    ratios = _ratios(rate2, rate4, share2, share4)
    lo, hi = min(ratios), max(ratios)
    limited = (min(cores4, ranks4) / ranks4) / (min(cores2, ranks2) / ranks2)
    w4, w2, c4 = (_WORDS.get(x, str(x)) for x in (ranks4, ranks2, cores4))
    near = [abs(limited - 1) > tolerance and abs(r / limited - 1) <= tolerance for r in ratios]
    same = [abs(r - 1) <= tolerance for r in ratios]
    had = f"{lo:.2f} times" if len(ratios) == 1 else f"{lo:.2f} to {hi:.2f} times"
    text = f"{w4} ranks on {c4} cores had {had} the busbw of {w2}"
    text += ", by how the load is allowed for," if len(ratios) > 1 else ","
    text += f" against {limited:.2f} had the ranks' time on the cores set it"
    if all(near):
        return text + ": near the cores' share under every reading"
    if all(same) and abs(limited - 1) > tolerance:
        return text + ": not limited by copying"
    if any(near) or any(same):
        return text + "; the run cannot tell what set the rate"
    return text + "; the run does not say why"


def limits_sentence(rate: float, copy_rate: float, cache: str | None, share: float | None, alpha2: float,
                    alpha4: float, handover: float | None, oversubscribed: bool, tolerance: float = RATE_TOLERANCE,
                    enough: float = CORE_SHARE_ENOUGH, alpha_known: bool = True, too_loaded: bool = False,
                    step_holds: bool = True, cause: str | None = None, step_from: float | None = None,
                    cache_span: tuple[float, float] | None = None, footprint: float | None = None,
                    llc: float | None = None, cache_scope: str = "", small: str = "", scope: str = "") -> str:
    """What limited the run, from its controls: other programs, the copies, the cache, allocation, switching ranks.
    ``scope``: the thread level the oversubscribed run used (:func:`level_scope` words), said with the switching.
    ``cache_scope``: words on how far ``cache_span``'s effect held beyond this run, said beside it; ``small``: a
    further limit on small messages (words), listed last.

    ``footprint`` and ``llc``: buffers of the message size the collective touches and the last-level cache the
    machine lists (bytes), for the words of ``cache_span`` (:func:`hierarchy_words`).

    ``cache_span``: the sizes (bytes) over which the copy control, read at the collective's footprint, got dearer
    per byte with it (:func:`cache_until`); named as a cache where ``cause`` names another.

    ``cause``: :func:`step_cause` of the steepest step (from ``step_from``
    bytes up), which replaces ``cache`` where given: the cache where the
    copy's CPU clock allows it, allocation where the pages mapped in per call
    jumped across a step the collective's CPU clock shows (named whatever
    ``step_holds`` says: the page counts, not one timing, point to it), and
    a step of no identified cause where the run's clocks rule out the cache
    and time slicing; a cause ``" and slicing"`` adds that time slicing made
    the rest of the step on the wall clock.

    ``step_holds``: whether the series keeps the steepest step the cache is held against
    (:func:`commlib.lab.fit.step_holds`); a suspect step names no cause, so the cache is not listed.

    ``too_loaded``: more than half the timings failed a load check; a gap
    to the copy rate is then not put down to the library's copies alone.

    ``rate``: all-reduce's bus bandwidth at the largest size, against the
    ``copy_rate`` (bytes/s); ``cache``: :func:`cache_share` of its steepest
    step; ``share``: the ranks' share of their cores' time; ``alpha2`` and
    ``alpha4`` (s): the fitted start-up costs at two and four ranks; the
    switching between ranks is named when the four-rank run was
    ``oversubscribed`` and its alpha grew by a core ``handover`` or more
    (None: by the two-rank alpha or more, where no handover was measured on the run's machine),
    and only where both alphas are ``alpha_known`` (their sweeps agree and
    their lines fit their points: :func:`alpha_usable`).
    Where load could explain the gap to the copy rate (:func:`load_gap`),
    alone or with a second copy per byte (:func:`rate_cause`), the copies
    are not blamed for it.

    >>> limits_sentence(1e9, 6e9, "none", 0.97, 5e-6, 40e-6, 4e-6, True)[33:125]
    "the library's work on each byte (its copies and waits), slower than one copy per byte would "
    """
    check_positive("copy_rate", copy_rate)
    for name, v in (("alpha2", alpha2), ("alpha4", alpha4)):
        check_nonnegative(name, v)
    if handover is not None:
        check_positive("handover", handover)
    parts = []
    if share is not None and share < enough:
        parts.append(f"other programs, which took {100 - round(100 * max(share, 0.0))} % of the ranks' core time")
    if math.isinf(rate) or rate > (1 + tolerance) * copy_rate:
        parts.append("the library's copies, at a rate this run could not pin down")
    elif abs(rate / copy_rate - 1) <= tolerance:
        parts.append("the library's copies, at about the copy control's rate in this run")
    elif too_loaded or rate_cause(rate, copy_rate, share, tolerance, enough) in ("load", "load and second copy"):
        parts.append("the library's copies or the load, which this run cannot tell apart")
    else:
        parts.append("the library's work on each byte (its copies and waits), slower than one copy per byte would allow")
    sliced = share is not None and share < enough   # a long copy is also slowed by time slicing (cache_phrase)
    llc_words = "the last-level cache or time slicing (this run cannot tell which)" if sliced else "the last-level cache"
    where = f" from {format_bytes(step_from)} up" if step_from is not None else ""
    base, sliced_too, _ = (cause or "").partition(" and slicing")
    rest_words = " (time slicing made the rest of it on the wall clock)" if sliced_too else ""
    if not step_holds and base != "allocation":    # allocation is named from the page counts, whatever the wall clock
        pass
    elif cause is not None:
        cause = base
        if cause == "cache":
            parts.append("the last-level cache, past which each byte got dearer")
        elif cause == "cache part":
            parts.append("in part the last-level cache, past which each byte got dearer")
        elif cause == "allocation":
            if cache_span is not None:
                held = None if footprint is None else footprint * cache_span[1]
                parts.append(f"from {format_bytes(cache_span[0])} to {format_bytes(cache_span[1])}, where the copy "
                             "control at the same footprint got dearer per byte too, "
                             + hierarchy_words(held, llc).replace("; this run", " (this run")
                             + (f"; {cache_scope}" if cache_scope else "") + ")")
            parts.append(f"allocation, most likely: fresh pages mapped and faulted in on every call{where}, where "
                         "each byte got dearer on the CPU clock" + (rest_words or " too"))
        elif cause in ("unknown", "untested allocation"):
            parts.append(f"a step in cost per byte{where} that neither the cache nor time slicing explains, whose "
                         "cause this run does not identify"
                         + (" (allocation is a candidate it does not test)" if cause == "untested allocation" else "")
                         + rest_words)
    elif cache == "most":
        parts.append(f"{llc_words}, past which each byte got dearer")
    elif cache == "part":
        parts.append(f"in part {llc_words}, past which each byte got dearer")
    if oversubscribed and alpha_known and alpha4 - alpha2 >= (alpha2 if handover is None else handover):
        parts.append("for small messages, " + (f"{scope}, " if scope else "") + "switching between ranks, once there "
                     "were more ranks than cores (it showed in α, the per-step start-up cost)")
    if small:
        parts.append(small)
    head = "What limited this run, then, was " + parts[0] + "."
    if len(parts) == 1:
        return head
    if len(parts) == 2:
        return f"{head} Another limit: {parts[1]}."
    ordinals = ("First", "Second", "Third", "Fourth", "Fifth", "Sixth")
    rest = " ".join(f"{ordinals[i] if i < len(ordinals) else 'Next'}, {p}." for i, p in enumerate(parts[1:]))
    return f"{head} {about(len(parts) - 1).capitalize()} more limits showed. {rest}"


def regime_counts(counts: Sequence[int], most: int | None = None, sweeps: int = 1, tally: bool = True) -> str:
    """The numbers of regimes chosen inside the splits, in words, with how often each was chosen.

    ``most``: the largest count that was tried; where it was chosen, more
    regimes might have done better, and the words say so. ``sweeps``: with
    two or more, each split was fitted on each sweep in turn, and ``counts``
    holds one count per split and sweep. ``tally``: with False, how often each count was chosen is left to a
    table beside the prose (:func:`commlib.views.lab.regime_count_table`).

    >>> regime_counts([3, 3, 3, 3, 3])
    'three regimes (the count leave-one-out picked on the fitted sizes of every split)'
    >>> regime_counts([3, 2, 3, 4, 3], most=4)[-127:]
    'three on 3 of 5 splits, two on 1, four on 1; four, the largest count tried, was picked, so more regimes might have done better)'
    >>> regime_counts([3, 3, 4, 3], sweeps=2)[-44:]
    'three on 3 of 4 split-sweep fits, four on 1)'
    """
    if not counts:
        raise ValueError("counts must hold the number of regimes chosen in one split or more")
    for k in counts:
        check_positive("counts", k)
    check_positive("sweeps", sweeps)
    chosen = sorted(((counts.count(k), k) for k in set(counts)), key=lambda t: (-t[0], t[1]))
    lo, hi = min(counts), max(counts)
    every, units = ("every split and sweep", "split-sweep fits") if sweeps > 1 else ("every split", "splits")
    if lo == hi:
        text = f"{_WORDS.get(lo, str(lo))} regimes (the count leave-one-out picked on the fitted sizes of {every}"
    else:
        each = ", ".join(f"{_WORDS.get(k, str(k))} on {c}" + (f" of {len(counts)} {units}" if i == 0 else "")
                         for i, (c, k) in enumerate(chosen))
        span = "or" if hi - lo == 1 else "to"
        where = "each split's and sweep's" if sweeps > 1 else "each split's"
        text = (f"{_WORDS.get(lo, str(lo))} {span} {_WORDS.get(hi, str(hi))} regimes (the count leave-one-out picked "
                f"on {where} fitted sizes" + (f": {each}" if tally else "; the table gives how often each"))
    if most is not None and hi >= most:
        text += (f"; {_WORDS.get(most, str(most))}, the largest count tried, was picked, so more regimes might have "
                 "done better")
    return text + ")"


def _misses(found: int, runs: int) -> str:
    """How often a grade that found real regimes on ``found`` of ``runs`` runs misses them, in a word."""
    missed = runs - found
    return "often misses" if 2 * missed >= runs else "sometimes misses" if missed else "missed none of"


def power_phrase(found: int, wrong: int, runs: int, clean_found: int, clean_runs: int) -> str:
    """The held-out grade's power under load, from its control: on ``runs`` simulated runs with three planted
    regimes and a load episode it found them on ``found`` and preferred the single line on ``wrong``; without
    the episode it found them on ``clean_found`` of ``clean_runs``. A clause for :func:`power_caveat`.

    >>> power_phrase(3, 2, 8, 8, 8)[:61]
    'under load this grade often misses regimes that are there (on'
    >>> power_phrase(8, 0, 8, 8, 8)
    ''
    """
    check_count("runs", runs)
    check_count("clean_runs", clean_runs)
    check_count("found", found, 0, runs)
    check_count("wrong", wrong, 0, runs - found)
    check_count("clean_found", clean_found, 0, clean_runs)
    if found == runs:
        return ""
    n = _WORDS.get(runs, str(runs))
    line = f" and preferred the single line on {wrong}" if wrong else ""
    clean = (f"all {_WORDS.get(clean_runs, str(clean_runs))}" if clean_found == clean_runs else
             f"{clean_found} of {clean_runs}")
    return (f"under load this grade {_misses(found, runs)} regimes that are there (on {n} simulated runs with three "
            f"planted regimes and a load episode, timed as this lab times, it found them on {found}{line}; "
            f"without the load episode, on {clean})")


#: The caveat where no control numbers are given (:func:`power_caveat`).
_POWER = "under load this grade often misses regimes that are there"


def power_caveat(line_won: bool, loaded: bool = True, power: str | None = None) -> str:
    """What a tie (or, with ``line_won``, a win of the single line) of the held-out grade is worth on a run that
    may have been ``loaded``: "" on a run whose load checks found nothing; else ``power`` (:func:`power_phrase`;
    None: the same without the control's numbers; "": the control found no loss of power, nothing to say),
    and that the outcome is no evidence for one line.

    >>> power_caveat(False)
    'under load this grade often misses regimes that are there, so a tie is not evidence for one line'
    >>> power_caveat(False, loaded=False), power_caveat(True, power="")
    ('', '')
    """
    if not loaded:
        return ""
    clause = _POWER if power is None else power
    if not clause:
        return ""
    return clause + (", so neither a tie nor the single line's win is evidence for one line" if line_won else
                     ", so a tie is not evidence for one line")


def control_sentence(found: int, tied: int, wrong: int, runs: int, clean_found: int, clean_wrong: int,
                     clean_runs: int, seeds: Sequence[int] = ()) -> str:
    """The held-out grade's control in sentences: on ``runs`` simulated runs with three planted regimes and a
    load episode, on how many it found them, could not tell (``tied``) and preferred the single line
    (``wrong``); the same without the episode; and what a tie on a loaded run is then worth. ``seeds``: the
    simulated runs' seeds, said where given.

    >>> control_sentence(3, 3, 2, 8, 8, 0, 8)[:80]
    'Over eight simulated runs like this one, with the same planted regimes and load '
    """
    if found + tied + wrong != runs:
        raise ValueError(f"found, tied and wrong must add up to runs ({runs}), got {found + tied + wrong}")
    n = _WORDS.get(runs, str(runs))
    parts = [f"found the planted regimes on {'all ' + n if found == runs else found}"]
    if tied:
        parts.append(f"could not tell on {tied}")
    if wrong:
        parts.append(f"preferred the single line, wrongly, on {wrong}")
    clean = f"all {_WORDS.get(clean_runs, str(clean_runs))}" if clean_found == clean_runs else f"{clean_found} of {clean_runs}"
    which = (f" (seeds {seeds[0]} to {seeds[-1]})" if len(seeds) > 1 and list(seeds) == list(range(seeds[0], seeds[-1] + 1))
             else f" (seeds {', '.join(map(str, seeds))})" if seeds else "")
    text = (f"Over {n} simulated runs like this one, with the same planted regimes and load episode{which}, the grade "
            f"{_and(parts)}; without the load episode it found them on {clean}"
            + (f" and preferred the line on {clean_wrong}" if clean_wrong else "") + ".")
    if found < runs:
        text += (f" Under load this grade {_misses(found, runs)} regimes that are there, so a tie, or a win of the "
                 "single line, on a loaded run is not evidence for one line.")
    return text


def grade_sentence(line: float, piecewise: float, counts: Sequence[int], spread: float, wins: int, splits: int,
                   most: int | None = None, sweeps: int = 1, tally: bool = True, loaded: bool = True,
                   power: str | None = None) -> str:
    """Which model predicts sizes it never saw better, the single line or the piecewise fits, and by how much.

    ``line`` and ``piecewise`` are the median held-out errors (fractions,
    means over ``splits`` ways of holding sizes out), ``spread`` the
    standard deviation of their difference over the splits, ``wins`` on how
    many splits the better one was better. ``counts``: the number of regimes
    chosen inside each split on its fitted sizes alone (:func:`regime_counts`;
    ``most``: the largest count tried). ``sweeps``: with two or more, each
    model was fitted on one sweep and graded on another. A difference within
    the spread is called a tie. What the sentence concludes is about this
    run's timings; whether a cut is the machine's is for :func:`cut_sentence`,
    which asks whether both sweeps put it there. ``tally``: as for :func:`regime_counts`. ``loaded`` and
    ``power``: where the line wins or the two tie, what that is worth on a run that may have been loaded
    (:func:`power_caveat`).

    >>> grade_sentence(0.144, 0.216, [3] * 5, 0.02, 5, 5)[:80]
    'the single line predicts them better than piecewise fits of three regimes (the c'
    >>> grade_sentence(0.3, 0.1, [3] * 10, 0.02, 5, 5, sweeps=2)[-61:]
    'whether each cut held in both sweeps is a question of its own'
    >>> "noise" in grade_sentence(0.144, 0.216, [3] * 5, 0.02, 5, 5)
    False
    """
    for name, v in (("line", line), ("piecewise", piecewise), ("spread", spread)):
        check_nonnegative(name, v)
    k = "piecewise fits of " + regime_counts(counts, most, sweeps, tally)
    where = (f"on all {_WORDS.get(splits, str(splits))} ways of holding sizes out" if wins == splits else
             f"on {wins} of {splits} ways of holding sizes out")
    if abs(line - piecewise) <= spread:
        caveat = power_caveat(False, loaded, power)
        return (f"the single line and {k} predict them about equally well: a median miss of {100 * line:.0f} % "
                f"against {100 * piecewise:.0f} %, a difference within its spread, the better one winning {where}. "
                "Over all sizes together this run cannot tell them apart" + (f"; {caveat}" if caveat else ""))
    if line < piecewise:
        caveat = power_caveat(True, loaded, power)
        return (f"the single line predicts them better than {k}: a median miss of {100 * line:.0f} % against "
                f"{100 * piecewise:.0f} %, {where}. Over all sizes together the extra regimes cost more than they "
                "gain; a median over every size says nothing of a regime of a few sizes, which the grade by size "
                "below looks for" + (f". And {caveat}" if caveat else ""))
    held = ("regimes in this run's timings, fitted on one sweep and graded on the other; whether each cut held in "
            "both sweeps is a question of its own" if sweeps > 1 else
            "regimes in this run's timings (one sweep: a load episode on neighbouring sizes would look the same)")
    return (f"{k} predict them better than the single line: a median miss of {100 * piecewise:.0f} % against "
            f"{100 * line:.0f} %, {where}. These are {held}")


def band_sentence(line: float, piecewise: float, spread: float, wins: int, splits: int, op: str, start: float,
                  sizes: Sequence[float], graded: Sequence[int] = ()) -> str:
    """Which model predicted held-out sizes better on the largest sizes alone, from each collective's top cut up.

    ``line`` and ``piecewise``: the median held-out errors there (fractions, means over ``splits`` ways
    of holding sizes out; NaN: no held-out size in the band); ``spread``: the standard deviation of their
    difference; ``op`` and ``start``: the first collective and where its band starts (bytes), among the
    measured ``sizes``. The band starts at the top cut or at the third-largest size, whichever is lower, so
    that it holds three sizes or more. ``graded``: how many held-out points the band held, in each way of
    holding sizes out and each sweep (empty: not said).

    >>> band_sentence(0.45, 0.15, 0.05, 5, 5, "all-reduce", 2**21.5, [2.0**k for k in range(10, 27)], [6, 8])[112:162]
    '(for all-reduce from 4 MiB; 6 to 8 held-out points'
    """
    first = min((x for x in sizes if x >= start), default=max(sizes))
    counts = sorted(set(int(g) for g in graded))
    held = ("" if not counts else f"; {counts[0]} held-out points in all" if len(counts) == 1 else
            f"; {counts[0]} to {counts[-1]} held-out points in all, by the way of holding sizes out")
    head = (f"Graded on the largest sizes alone, from each collective's top cut or third-largest size, whichever is "
            f"lower, up (for {op} from {format_bytes(first)}{held}), ")
    if not (math.isfinite(line) and math.isfinite(piecewise)):
        return head + "no held-out size fell there, so this run does not grade them there."
    for name, v in (("line", line), ("piecewise", piecewise), ("spread", spread)):
        check_nonnegative(name, v)
    where = (f"on all {_WORDS.get(splits, str(splits))} ways of holding sizes out" if wins == splits else
             f"on {wins} of {splits} ways of holding sizes out")
    if abs(line - piecewise) <= spread:
        return (head + f"the two predict held-out sizes about equally well ({100 * line:.0f} % against "
                f"{100 * piecewise:.0f} %, a difference within its spread).")
    if piecewise < line:
        return (head + f"the regimes predict held-out sizes better: the single line misses them by a median of "
                f"{100 * line:.0f} %, the piecewise fits by {100 * piecewise:.0f} %, {where}. The line leaves out a "
                "regime of the largest messages, which its median over every size hides.")
    return (head + f"the single line predicts held-out sizes better there too: {100 * line:.0f} % against "
            f"{100 * piecewise:.0f} %, {where}.")


def tail_phrase(op: str, sizes: Sequence[float], errors: Sequence[float], least: int = 3) -> str:
    """A line's errors of one sign over the largest sizes (:func:`commlib.lab.fit.one_sign_tail`), in words;
    empty where that run is shorter than ``least`` sizes (noise changes sign from size to size).

    >>> tail_phrase("all-reduce", [2.0**21, 2.0**22, 2.0**23], [-0.18, -0.41, -0.66])
    "all-reduce's line predicts too short a time at every size from 2 MiB up (by 18 to 66 %)"
    >>> tail_phrase("all-reduce", [2.0**20, 2.0**21, 2.0**22], [-0.004, -0.3, -0.7])[-15:]   # 0.4 % is not "0"
    '(by up to 70 %)'
    """
    if len(sizes) != len(errors):
        raise ValueError(f"sizes and errors must pair up, got {len(sizes)} and {len(errors)}")
    if len(sizes) < least:
        return ""
    way = "too short" if errors[0] < 0 else "too long"
    lo, hi = sorted((100 * min(abs(e) for e in errors), 100 * max(abs(e) for e in errors)))
    by = f"by up to {hi:.0f} %" if round(lo) == 0 else f"by {lo:.0f} to {hi:.0f} %"
    return f"{op}'s line predicts {way} a time at every size from {format_bytes(min(sizes))} up ({by})"


def headline_takeaway(op: str, alpha: float, alpha_known: bool, busbw: float, size: float,
                      tail_sizes: Sequence[float], tail_errors: Sequence[float], least: int = 3,
                      others: Sequence[tuple[float, float, Sequence[float], Sequence[float]]] = (),
                      scope: str = "") -> str:
    """The chapter's headline in one sentence: ``op``'s fitted start-up cost ``alpha`` (s; quoted only where
    ``alpha_known``, see :func:`alpha_usable`), its bus bandwidth ``busbw`` (bytes/s) measured at the largest
    ``size``, and where its single line fails: the line's errors of one sign over the largest sizes
    (:func:`commlib.lab.fit.one_sign_tail`), or that it has no such run (shorter than ``least`` sizes).

    >>> print(headline_takeaway("all-reduce", 4.5e-6, True, 1.4e9, 2**26, [2.0**24, 2.0**25, 2.0**26],
    ...                         [-0.23, -0.47, -0.47]))  # doctest: +NORMALIZE_WHITESPACE
    On the reference machine, in one line: all-reduce on two ranks costs about 4.5 µs per step and moves its largest
    messages (64 MiB) at 1.40 GB/s of bus bandwidth; a single alpha-beta line predicts too short a time from
    16 MiB up, by up to 47 %.
    >>> headline_takeaway("all-reduce", 4.5e-6, False, 1.4e9, 2**26, [], [])[-75:]
    'not fix its α; a single alpha-beta line misses no run of its largest sizes.'

    ``others``: further runs of the same measurement at the same thread level (``(alpha, busbw, tail_sizes,
    tail_errors)`` each): the sentence then quotes each number no finer than the runs agree, a range over all
    the runs rounded to one significant figure for α and two for the bandwidth, and the line's miss from the
    size where every run's tail has begun. ``scope``: the library and thread level every run used, words that follow
    "in one line" (the numbers change with the level: a run at another level is another measurement).

    >>> print(headline_takeaway("all-reduce", 4.49e-6, True, 1.398e9, 2**26, [2.0**24, 2.0**25, 2.0**26],
    ...                         [-0.23, -0.47, -0.47], others=[(3.25e-6, 1.58e9, [2.0**25, 2.0**26], [-0.42, -0.52]),
    ...                         (4.59e-6, 1.36e9, [2.0**25, 2.0**26], [-0.49, -0.54])]))
    ... # doctest: +NORMALIZE_WHITESPACE
    On the reference machine and a machine of its kind, in one line: all-reduce on two ranks costs about 3 to
    5 µs per step and moves its largest messages at 1.4 to 1.6 GB/s of bus bandwidth, by the run (three runs); a
    single alpha-beta line predicts too short a time for its largest messages, from 32 MiB up in every run, by up
    to about half.
    >>> headline_takeaway("all-reduce", 4.5e-6, True, 1.4e9, 2**26, [], [], scope="for MPICH at `MPI_THREAD_MULTIPLE`")[:80]
    'On the reference machine, in one line, for MPICH at `MPI_THREAD_MULTIPLE`: all-r'
    """
    lead = f"in one line, {scope}:" if scope else "in one line:"
    if len(tail_sizes) != len(tail_errors):
        raise ValueError(f"tail_sizes and tail_errors must pair up, got {len(tail_sizes)} and {len(tail_errors)}")
    if others and alpha_known:
        runs = [(alpha, busbw, list(tail_sizes), list(tail_errors))] + [tuple(o) for o in others]

        def span(values: Sequence[float], n: int) -> str:
            lo, hi = figures(min(values), n), figures(max(values), n)
            return lo if lo == hi else f"{lo} to {hi}"

        text = (f"On the reference machine and a machine of its kind, {lead} {op} on two ranks costs about "
                f"{span([1e6 * r[0] for r in runs], 1)} µs per step and moves its largest messages at "
                f"{span([r[1] / 1e9 for r in runs], 2)} GB/s of bus bandwidth, by the run ({_WORDS.get(len(runs))} "
                "runs)")
        tails = [r for r in runs if len(r[2]) > 0]
        if len(tails) < len(runs) or any(len(r[2]) < 2 for r in runs):
            return text + "; a single alpha-beta line misses no run of its largest sizes in every run."
        ways = {"too short" if r[3][0] < 0 else "too long" for r in runs}
        if len(ways) > 1:
            return text + "; a single alpha-beta line misses its largest sizes, one way or the other by the run."
        start = max(min(r[2]) for r in runs)
        worst = {figures(100 * max(abs(e) for e in r[3]), 1) for r in runs}
        by = ("about half" if worst == {"50"} else f"about {worst.pop()} %" if len(worst) == 1 else
              f"{span([100 * max(abs(e) for e in r[3]) for r in runs], 1)} %")
        return (text + f"; a single alpha-beta line predicts {ways.pop()} a time for its largest messages, from "
                f"{format_bytes(start)} up in every run, by up to {by}.")
    cost = f"costs about {time_text(alpha)} per step and " if alpha_known else ""
    text = (f"On the reference machine, {lead} {op} on two ranks {cost}moves its largest messages "
            f"({format_bytes(size)}) at {rate_text(busbw)} of bus bandwidth")
    if not alpha_known:
        text += "; the run does not fix its α"
    if len(tail_sizes) < least:
        return text + "; a single alpha-beta line misses no run of its largest sizes."
    way = "too short" if tail_errors[0] < 0 else "too long"
    return (text + f"; a single alpha-beta line predicts {way} a time from {format_bytes(min(tail_sizes))} up, by up "
            f"to {100 * max(abs(e) for e in tail_errors):.0f} %.")


def cut_kinds(reproduced: Sequence[bool], clocks: Sequence[tuple[float, float] | None] | None = None,
              core_share: float | None = None, tolerance: float = RATE_TOLERANCE,
              enough: float = CORE_SHARE_ENOUGH) -> list[str]:
    """Whose each cut is: ``"machine"``, ``"slicing"``, ``"steady load?"`` or ``"episode?"``.

    Two sweeps that put a cut in the same gap rule out only load that comes
    and goes (``"episode?"`` where they do not). A steady load, one the
    ranks shared with other programs for the whole run (``core_share``
    below ``enough``), makes the same cut in both sweeps: a call that
    outlasts a scheduler slice waits for its cores, and each byte looks
    dearer from there up. The ranks' own CPU time tells the two apart
    (``clocks``: per cut, how many times dearer each byte got across it by
    the wall clock and by CPU time, :func:`commlib.lab.runner.clock_steps`):
    a cut the CPU clock shows too (its step at least ``1 - tolerance`` of the
    wall clock's) is the machine's; one it does not is the waits for the
    cores (``"slicing"``). Without CPU times, a cut both sweeps put in the
    same place is the machine's only on a machine the ranks had (nearly) to
    themselves; under load it is ``"steady load?"``: the run cannot tell.

    >>> cut_kinds([True, True, False], [(1.1, 1.0), (4.0, 0.9), None], core_share=0.29)
    ['machine', 'slicing', 'episode?']
    >>> cut_kinds([True], None, core_share=0.29), cut_kinds([True], None, core_share=0.97)
    (['steady load?'], ['machine'])
    """
    if clocks is not None and len(clocks) != len(reproduced):
        raise ValueError(f"clocks must hold one entry per cut ({len(reproduced)}), got {len(clocks)}")
    loaded = core_share is not None and core_share < enough
    kinds = []
    for i, again in enumerate(reproduced):
        step = clocks[i] if clocks is not None else None
        if not again:
            kinds.append("episode?")
        elif step is not None:
            wall, cpu = step
            kinds.append("machine" if cpu >= (1 - tolerance) * wall else "slicing")
        else:
            kinds.append("steady load?" if loaded else "machine")
    return kinds


def cut_sentence(op: str, cuts: Sequence[float], reproduced: Sequence[bool], sizes: Sequence[float],
                 sweeps: int = 2, clocks: Sequence[tuple[float, float] | None] | None = None,
                 core_share: float | None = None, tolerance: float = RATE_TOLERANCE,
                 enough: float = CORE_SHARE_ENOUGH) -> str:
    """Where a collective's regimes change, and whose each cut is (:func:`cut_kinds`).

    A cut that every sweep's own fit puts within one gap of the same place
    (:func:`commlib.experiments.lab.reproduced_cuts`) is not a load episode that fell on those sizes in one sweep; it is
    called the machine's only where the ranks' own CPU time shows it too
    (``clocks``), or, without CPU times, where the ranks had their cores
    (``core_share`` at least ``enough``). A cut the CPU clock does not show
    is the waits for the cores under a steady load; one that a single
    sweep's fit puts there may be a load episode, and the run cannot tell.

    >>> sizes = [2.0**k for k in range(10, 27)]
    >>> cut_sentence("all-reduce", [2**13.5, 2**22.5], [True, False], sizes)[:91]
    'For all-reduce the cuts fall between 8 and 16 KiB and between 4 and 8 MiB; the first reappe'
    >>> cut_sentence("all-reduce", [2**15.5, 2**17.5, 2**21.5], [False] * 3, sizes)[:77]
    'For all-reduce the cuts fall in the gaps just below 64 KiB, 256 KiB and 4 MiB'
    >>> cut_sentence("all-reduce", [2**20.5], [True], sizes, clocks=[(4.0, 0.9)], core_share=0.29)[-84:]
    'time slicing under the load both sweeps shared, not the machine, makes it this size.'
    """
    if len(cuts) != len(reproduced):
        raise ValueError(f"reproduced must hold one entry per cut ({len(cuts)}), got {len(reproduced)}")
    if not cuts:
        return f"For {op} the fit puts no cut: one regime."
    where = (cuts_phrase(cuts, sizes) if len(cuts) < 3 else    # three or more: one size each, the gap's top
             "in the gaps just below " + _and([format_bytes(min((x for x in sizes if x > c), default=c)) for c in cuts]))
    head = f"For {op} the {'cut falls' if len(cuts) == 1 else 'cuts fall'} {where}"
    if sweeps < 2:
        return head + "; with one sweep this run cannot tell a cut of the machine from a load episode."
    kinds = cut_kinds(reproduced, clocks, core_share, tolerance, enough)
    ordinal = ("first", "second", "third", "fourth", "fifth")
    share = f"{100 * min(core_share, 1.0):.0f} %" if core_share is not None else ""
    parts = []
    for kind in ("machine", "slicing", "steady load?", "episode?"):
        mine = [i for i, k in enumerate(kinds) if k == kind]
        if not mine:
            continue
        one, every = len(mine) == 1, len(mine) == len(cuts)
        it = "it" if one else "them"
        name = it if every else "the " + " and ".join(ordinal[i] if i < len(ordinal) else str(i + 1) for i in mine)
        if kind == "episode?":
            parts.append(("fitted on each sweep alone, the sweeps " + ("do not put it" if one else "put none of them")
                          + " within a size step of each other, so " if every else "")
                         + f"this run cannot tell {name} from load that fell on some sizes in one sweep")
            continue
        same = ("fitted on each sweep alone, both sweeps put " + ("it" if one else "every one")
                + " within a size step of each other" if every else
                f"{name} reappear{'s' if one else ''} within a size step when each sweep is fitted alone")
        if kind == "machine":
            how = ", and the ranks' own CPU time shows " + it + " too" if clocks is not None else ""
            parts.append(f"{same}{how}, so {'it is' if one else 'they are'} the machine's")
        elif kind == "slicing":
            walls = " and ".join(dearer(clocks[i][0]) for i in mine)
            cpus = " and ".join(dearer(clocks[i][1]) for i in mine)
            parts.append(f"{same}, but that rules out only load that comes and goes: across {it} each byte got "
                         f"{walls} by the wall clock and {cpus} by the ranks' own CPU time, so the "
                         "ranks waited for their cores there; time slicing under the load both sweeps shared, not "
                         f"the machine, makes {it} this size")
        else:
            parts.append(f"{same}, but that rules out only load that comes and goes: the ranks got {share} of their "
                         "cores' time over the whole run, a steady load that makes the same cut in both sweeps where "
                         f"a call starts to outlast a time slice, so this run cannot tell {it} from the load")
    return head + "; " + "; ".join(parts) + "."


def regimes_takeaway(piecewise_better: bool, line_better: bool = True, machine: int = 0, cuts: int = 0,
                     top: str = "tie", too_loaded: bool = False, loaded: bool = True, power: str | None = None,
                     scope: str = "") -> str:
    """The takeaway on regimes, following the held-out grades of this run (neither better: a tie).

    ``scope``: where the grade pools collectives that part from it, a few words that say so
    (:func:`commlib.experiments.lab.collective_short`), said with a win of the regimes.

    ``machine`` of all-reduce's ``cuts`` are the machine's (:func:`cut_kinds`: both sweeps put them in the same
    place and the ranks' CPU time shows them too).
    ``top``: who predicted held-out sizes better from the top cut up (:func:`band_sentence`): ``"piecewise"``,
    ``"one line"`` or ``"tie"``. ``too_loaded``: more than half the timings failed a load check; the
    grades of this run are then said to be its load's as much as the machine's. ``loaded`` and ``power``: where
    the grade over all sizes tied or picked one line, what that is worth on a run that may have been loaded
    (:func:`power_caveat`; the chapter's runs share a machine, so by default it may have been).

    >>> regimes_takeaway(False, False, loaded=False)[-71:]
    'a median over every size can hide a regime of the few largest messages.'
    >>> regimes_takeaway(False, False)[-69:]
    'misses regimes that are there, so a tie is not evidence for one line.'
    >>> regimes_takeaway(True, machine=1, cuts=3)[-44:]
    'Here they predicted it better than one line.'
    >>> regimes_takeaway(True, scope="pooled over the four collectives (for all-reduce alone, only on its largest "
    ...                  "sizes)").split(". ")[-1]
    'Here, pooled over the four collectives (for all-reduce alone, only on its largest sizes), they predicted it better than one line.'
    >>> "the top regime did" in regimes_takeaway(False, True, top="piecewise")
    True
    >>> regimes_takeaway(True, too_loaded=True)[-62:]
    'so its grades say as much about the load as about the machine.'
    """
    text = _regimes_takeaway(piecewise_better, line_better, machine, cuts, top)
    if scope and piecewise_better:
        text = text.replace("Here they predicted", f"Here, {scope}, they predicted")
    caveat = "" if piecewise_better else power_caveat(line_better, loaded, power)
    if caveat:
        text += f" {caveat[0].upper()}{caveat[1:]}."
    if too_loaded:
        text += (" This run was too loaded to fit: more than half its timings failed a load check, so its grades say "
                 "as much about the load as about the machine.")
    return text


def mechanism_takeaway(cause: str | None, step_from: float | None = None, step_holds: bool = True) -> str:
    """Which of the mechanisms that make regimes this run found, for the takeaways, in the words of
    :func:`limits_sentence`: ``cause`` is :func:`step_cause` of all-reduce's steepest step (from ``step_from``
    bytes up), ``step_holds`` whether the series keeps that step (:func:`commlib.lab.fit.step_holds`; allocation is
    named from the page counts whatever it says). The run never changes the library's protocol, so the protocol
    switch is always said to be untested.

    >>> mechanism_takeaway("allocation", 2**25)[:97]
    'Of these, the mechanism this run points to is allocation: fresh pages mapped and faulted in on ev'
    >>> mechanism_takeaway(None)
    'This run identified none of these mechanisms; it did not test the protocol switch (eager against rendezvous).'
    """
    base, sliced, _ = (cause or "").partition(" and slicing")
    where = f" from {format_bytes(step_from)} up" if step_from is not None else ""
    untested = "it did not test the protocol switch (eager against rendezvous)."
    if base == "allocation":
        return ("Of these, the mechanism this run points to is allocation: fresh pages mapped and faulted in on every "
                f"call{where}, where each byte got dearer on the CPU clock"
                + (" (time slicing made the rest of the step on the wall clock)" if sliced else " too")
                + f"; {untested}")
    if step_holds and base in ("cache", "cache part"):
        return ("Of these, the mechanism this run points to is " + ("in part " if base == "cache part" else "")
                + f"a cache: the copy control got dearer per byte with it{where}; {untested}")
    return f"This run identified none of these mechanisms; {untested}"


def _regimes_takeaway(piecewise_better: bool, line_better: bool, machine: int, cuts: int, top: str) -> str:
    if piecewise_better:  # which cuts are the machine's (machine, cuts) is said in the body, not in the lesson
        return ("Protocol switches (eager and rendezvous), caches and allocation can give a machine several regimes, "
                "and so can "
                "load that comes and goes: time the sizes in a shuffled order, twice, and fit regimes only where "
                "they predict the sweep they did not see. Here they predicted it better than one line.")
    head = ("A piecewise fit always meets its own points at least as well as one line, so grade both on sizes they "
            "did not see, over all sizes and over the largest alone: ")
    overall = ("here one line predicted held-out sizes better over all sizes" if line_better else
               "here held-out sizes over all sizes could not tell one line from the regimes")
    if top == "piecewise":
        return (head + overall + ", but from the top cut up the top regime did, so the line underprices or "
                "overprices the largest messages, and the calculator uses the top regime there.")
    if top == "one line":
        return head + overall + ", and from the top cut up as well: the extra regimes did not earn their parameters."
    return (head + overall + ", and from the top cut up the two could not be told apart either; a median over "
            "every size can hide a regime of the few largest messages.")


def _ranks_on(ranks: int, cores: int) -> str:
    check_positive("ranks", ranks)
    check_positive("cores", cores)
    r, c = _WORDS.get(ranks, str(ranks)), _WORDS.get(cores, str(cores))
    return f"{r} ranks with a core each" if ranks <= cores else f"{r} ranks sharing {c} cores"


#: What the grade at four ranks with a core each does not test (the calculator reaches all of them).
UNTESTED_RANKS = ("more ranks than cores, step counts on a number of ranks that is not a power of two, and MPICH's "
                  "switch of broadcast to scatter + all-gather from 8 ranks up")


def _trust(moved: float, target: float, ranks: int = 4, where: str | None = None) -> str:
    """How far a grade at ``ranks`` ranks with a core each carries the fit, and what it leaves untested.

    >>> _trust(0.1, 0.2)[:57]
    'close enough to be a first estimate at four ranks with a '
    """
    where = where or f"at {_WORDS.get(ranks, str(ranks))} ranks with a core each"
    return (f"close enough to be a first estimate {where}; untested: {UNTESTED_RANKS}" if moved <= target else
            f"far enough that even {where} its answers are guesses to check with a run; untested: "
            f"{UNTESTED_RANKS}")


def transfer_conclusion(moved: float, ranks: int, cores: int, target: float = 0.2, quote: bool = True) -> str:
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
        miss = f"a miss of {100 * moved:.0f} %" if quote else "a miss of that size"   # quote: not given beside it
        return (f"Here the {_WORDS.get(ranks, str(ranks))} ranks had a core each, so this grade tests the number of "
                f"ranks, one core each (the cores grew with them), and {miss} is {_trust(moved, target, ranks)}.")
    return (f"Here the {_WORDS.get(ranks, str(ranks))} ranks shared {_WORDS.get(cores, str(cores))} cores, so this "
            "grade tests oversubscription as much as the number of ranks: the counts carry the algorithm from two "
            "ranks to four, but not what sharing the cores does to each step, and it says nothing of more ranks "
            "on cores of their own.")


def calculator_sentence(piecewise_better: bool, regimes: int | str, moved: float, target: float = 0.2,
                        line_better: bool = True, ranks: int = 4, cores: int = 4, top: str = "tie",
                        tail: str = "", too_loaded: bool = False, loaded: bool = True, power: str | None = None,
                        moved_range: tuple[float, float] | None = None) -> str:
    """What the calculator below uses and how far to trust it at other rank counts.

    ``moved_range``: the grade's range over the sweeps graded against (:func:`transfer_grade`); where given, the
    miss is quoted as that range, the same figure the grade itself gives.

    ``loaded`` and ``power``: where the calculator uses the single lines because the grade over all sizes tied
    or picked one line, what that is worth on a run that may have been loaded (:func:`power_caveat`).

    ``too_loaded``: more than half the timings failed a load check; the sentence then says the models fit the
    load as much as the machine.

    ``regimes``: the piecewise fits' number of regimes, or the counts tried in words (``"two to four"``).
    ``top``: who predicted held-out sizes better from the top cut up (:func:`band_sentence`); where the top
    regime did, the calculator uses it there. ``tail``: :func:`tail_phrase` of the line's errors; where the
    calculator uses the single line for the largest sizes and they err one way, the sentence warns of it.
    ``moved``: the median miss of those models on the run with ``ranks`` ranks on ``cores`` cores. Only a run
    with a core per rank says how far the models carry to another number of ranks (:func:`transfer_conclusion`).

    >>> calculator_sentence(False, "two to four", 0.3, top="piecewise", cores=2)[:100]
    "The calculator uses each collective's single line below its top cut and its top regime from there up"
    >>> "predicts too short" in calculator_sentence(False, "two to four", 0.3, tail="all-reduce's line predicts too short a time")
    True
    >>> calculator_sentence(True, 2, 0.1, too_loaded=True)[-61:]
    'answers are estimates of this loaded run, not of the machine.'
    """
    check_nonnegative("moved", moved)
    caveat = "" if piecewise_better else power_caveat(line_better, loaded, power)
    text = _calculator_sentence(piecewise_better, regimes, moved, target, line_better, ranks, cores, top, tail, caveat,
                                moved_range)
    if too_loaded:
        text += (" More than half this run's timings failed a load check, so the run was too loaded to fit, and "
                 "the calculator's answers are estimates of this loaded run, not of the machine.")
    return text


def _calculator_sentence(piecewise_better: bool, regimes: int | str, moved: float, target: float, line_better: bool,
                         ranks: int, cores: int, top: str, tail: str, caveat: str = "",
                         moved_range: tuple[float, float] | None = None) -> str:
    miss = (f"{percent_range(*moved_range)} by which sweep is graded" if moved_range is not None
            else f"{100 * moved:.0f} %")
    k = _WORDS.get(regimes, str(regimes))
    if piecewise_better:
        which = f"the {k}-regime fits, which predicted held-out sizes better than one line"
    elif top == "piecewise":
        which = ("each collective's single line below its top cut and its top regime from there up: of the two, "
                 "each predicted held-out sizes better where it is used")
    elif line_better:
        which = f"the single lines, which predicted held-out sizes better than piecewise fits of {k} regimes"
    else:
        which = (f"the single lines: held-out sizes could not tell them from piecewise fits of {k} regimes, and the "
                 "simpler model stands in")
    if caveat:
        which += (f" for want of better evidence, not because the machine has one regime: {caveat}" if not line_better
                  and top != "piecewise" else f"; {caveat}")
    if tail and not piecewise_better and top != "piecewise":
        which += f". Read its answers for the largest messages with care: {tail}"
    if ranks <= cores:
        return (f"The calculator uses {which}. Carried to {_ranks_on(ranks, cores)}, they missed that run by a "
                f"median of {miss}, {_trust(moved, target, where='there')}.")
    return (f"The calculator uses {which}. Carried to {_ranks_on(ranks, cores)}, they missed that run by a median "
            f"of {miss}; that grades sharing cores, not another number of ranks on cores of their own, "
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


def fit_busbw_sentence(check: RateCheck, what: str = "the line", part: str = "all") -> str:
    """Sentences (Markdown) that hold a fitted ``1/beta`` against the bus bandwidth measured at the largest size.

    Agreement means their ranges overlap: the fitted rate's over the fit and
    its refits on each way of holding sizes out, busbw's over the middle half
    of the calls. Where they disagree the sentence gives the three factors
    of :class:`commlib.lab.fit.RateCheck`, which multiply to the ratio, and
    names the largest as the likely cause. ``part``: ``"all"``; ``"short"``, the two rates and their verdict,
    their ranges left to a table beside the prose (:func:`commlib.views.lab.fit_busbw_table`);
    ``"cause"``, only the sentences that name the largest factor (empty where they agree); ``"factors"``, only the
    sentence that gives the three factors (or says there is no gap to take apart).

    >>> c = RateCheck("x", 2.0**26, 2.0**25, "ring", 2e9, (1.9e9, 2.1e9), 1.4e9, (1.3e9, 1.5e9), 1.0, 1.0, 0.7,
    ...               1.3e9, 5)
    >>> print(fit_busbw_sentence(c)[:110])
    The $1/\\beta$ of the line, 2.00 GB/s (1.90 to 2.10 over the fit and its five refits on held-out splits), and t
    """
    size, algorithm = format_bytes(check.nbytes), check.algorithm.replace("_", "-")
    if part not in ("all", "short", "cause", "factors"):
        raise ValueError(f"part must be 'all', 'short', 'cause' or 'factors', got {part!r}")
    if part == "factors":  # the three factors alone, in words
        if not check.disagree:
            return "The two agree within their spread: there is no gap to take apart."
        if math.isinf(check.fitted):
            return "The fit found no cost per byte at that size: there is no ratio to take apart."
        return (f"Three factors computed from this run multiply to the bus bandwidth over the fitted 1/β "
                f"(the row of that name in the table above), each read at {size}: the bytes busbw "
                f"counts over the bytes the algorithm run there ({algorithm}) sends along its critical path "
                f"({check.counts:.2f}), the share of the model's time spent on bytes rather than start-ups "
                f"({check.byte_share:.2f}), and the model's time over the measured time ({check.miss:.2f}).")
    if part == "short":
        head = (rf"The $1/\beta$ of {what}, {_gbs(check.fitted)} GB/s, and the bus bandwidth measured at {size}, "
                f"{_gbs(check.busbw)} GB/s,")
        if not check.disagree:
            return head + " agree within their spread (the table gives both ranges)."
        if math.isinf(check.fitted):
            return head + " disagree: the fit found no cost per byte at that size, so its $1/\\beta$ is no rate at all."
        return (head + f" disagree by more than their spread (the table gives both ranges): the measured rate is "
                f"{check.ratio:.2f} of the fitted one.")
    if part == "cause":
        if not check.disagree or math.isinf(check.fitted):
            return ""
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
    if part == "cause":
        text = ""
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
                   f"{size} {local}). The bus bandwidth at the largest size is the rate to quote for messages of that size, "
                   "and each size's own for the others, since it need not level off; "
                   "the fitted $1/\\beta$ is the rate that best fits all sizes at once.")


def rates_lead(op: str, check: RateCheck, copy_rate: float, sizes: Sequence[float], pages: Sequence[float],
               jump: float = FAULT_JUMP, part: str = "all") -> str:
    r"""The section's comparison: ``op``'s bus bandwidth at the largest size (the rate to quote), its single line's
    fitted ``1/beta`` (an average over every size), how the two compare (``check``), and the copy control's rate
    (``copy_rate``, bytes/s); where the largest messages moved slower than the line's average and their calls mapped
    in fresh pages (``pages``: shares of the message at ``sizes``, from ``jump`` up), those pages as the candidate.
    ``part``: ``"rates"``, the first two rates; ``"copy"``, the third, the copy control's; ``"cause"``, the fresh
    pages (empty where they are no candidate); ``"all"``, the three in turn.

    >>> c = RateCheck("x", 2.0**26, 2.0**25, "halving_doubling", 2.64e9, (2.56e9, 2.72e9), 1.40e9, (1.39e9, 1.41e9),
    ...               1.0, 1.0, 0.53, 1.41e9, 5)
    >>> print(rates_lead("all-reduce", c, 5.64e9, [2**24, 2**25, 2**26], [0, 0.5, 0.5]))  # doctest: +NORMALIZE_WHITESPACE
    Three rates describe all-reduce here. Its bus bandwidth measured at 64 MiB, 1.40 GB/s, is how fast the largest
    messages moved, with no fit: the rate to quote for messages of that size (at other sizes, the bus bandwidth
    measured there). Its single line's $1/\beta$, 2.64 GB/s, is
    the rate that best fits all sizes at once, an average cost per byte over every size; the largest messages moved
    at 0.53 of it, further apart than the spread of either (the table gives both ranges), because there each byte
    cost more than that average. The third, the copy control, each rank copying on its own core in the same run,
    reached 5.64 GB/s per rank: all-reduce's bus bandwidth is well below the copy control's rate in this run. From 32 MiB up each
    call also faulted in fresh pages for half the message: that is the run's candidate for the extra cost.
    """
    check_positive("copy_rate", copy_rate)
    if part not in ("all", "rates", "copy", "cause"):
        raise ValueError(f"part must be 'all', 'rates', 'copy' or 'cause', got {part!r}")
    head = (f"Three rates describe {op} here. Its bus bandwidth measured at {format_bytes(check.nbytes)}, "
            f"{_gbs(check.busbw)} GB/s, is how fast the largest messages moved, with no fit: the rate to quote for "
            "messages of that size (at other sizes, the bus bandwidth measured there). "
            f"Its single line's $1/\\beta$, {_gbs(check.fitted)} GB/s, is the rate that best fits all "
            "sizes at once, an average cost per byte over every size")
    if math.isinf(check.fitted):
        head = (f"Three rates describe {op} here. Its bus bandwidth measured at {format_bytes(check.nbytes)}, "
                f"{_gbs(check.busbw)} GB/s, is how fast the largest messages moved, with no fit: the rate to quote "
                "for messages of that size (at other sizes, the bus bandwidth measured there). Its single line "
                "found no cost per byte at all, so its $1/\\beta$ is no rate")
        text = head + "."
    elif not check.disagree:
        text = head + "; the two agree within their spread (the table gives both ranges)."
    else:
        dearer = check.busbw < check.fitted
        text = head + (f"; the largest messages moved at {check.ratio:.2f} of it, further apart than the spread of "
                       f"either (the table gives both ranges), because there each byte cost "
                       f"{'more' if dearer else 'less'} than that average.")
    copy = (f"The third, the copy control, each rank copying on its own core in the same run, reached "
            f"{_gbs(copy_rate)} GB/s per rank: {op}'s bus bandwidth is {rate_phrase(check.busbw, copy_rate)}.")
    cause = ""
    fresh = [i for i, p in enumerate(pages) if p >= jump]
    if check.disagree and check.busbw < check.fitted and fresh and any(p < jump for p in pages):
        share = pages[fresh[0]]
        words = "half the message" if abs(share - 0.5) < 0.05 else f"{pages_words(share)} of the message"
        cause = (f"From {format_bytes(sizes[fresh[0]])} up each call also faulted in fresh pages for {words}: "
                 "that is the run's candidate for the extra cost.")
    parts = {"rates": text, "copy": copy, "cause": cause}
    return parts[part] if part in parts else " ".join(t for t in (text, copy, cause) if t)


def rates_answer(op: str, check: RateCheck, copy_rate: float, sizes: Sequence[float], pages: Sequence[float],
                 jump: float = FAULT_JUMP) -> str:
    r"""The section's answer in one sentence, with no number the comparison has not given: what the single line's
    fitted ``1/beta`` of ``op`` is here, against the copy control's rate (``copy_rate``, bytes/s) and the largest
    messages' bus bandwidth (``check``), and, where :func:`rates_lead` names fresh pages as the candidate, that.

    >>> c = RateCheck("x", 2.0**26, 2.0**25, "halving_doubling", 2.64e9, (2.56e9, 2.72e9), 1.40e9, (1.39e9, 1.41e9),
    ...               1.0, 1.0, 0.53, 1.41e9, 5)
    >>> print(rates_answer("all-reduce", c, 5.64e9, [2**24, 2**25, 2**26], [0, 0.5, 0.5]))  # doctest: +NORMALIZE_WHITESPACE
    So here all-reduce's fitted $1/\beta$ is an average cost per byte over every size, well below the copy rate;
    the largest messages moved slower than it, and the fresh pages from 32 MiB up are the run's candidate for the
    rest.
    """
    check_positive("copy_rate", copy_rate)
    if math.isinf(check.fitted):
        return (f"So here {op}'s single line gives no rate at all: the bus bandwidth at the largest size is the rate "
                "to quote.")
    near = rate_phrase(check.fitted, copy_rate).replace("the copy control's rate in this run", "the copy rate")
    head = f"So here {op}'s fitted $1/\\beta$ is an average cost per byte over every size, {near}"
    if not check.disagree:
        return head + "; the largest messages moved at it, within the spread."
    slower = check.busbw < check.fitted
    tail = f"; the largest messages moved {'slower' if slower else 'faster'} than it"
    fresh = [i for i, p in enumerate(pages) if p >= jump]
    if slower and fresh and any(p < jump for p in pages):
        tail += (f", and the fresh pages from {format_bytes(sizes[fresh[0]])} up are the run's candidate for the "
                 "rest")
    return head + tail + "."


def copy_fall_sentence(sizes: Sequence[float], rates: Sequence[float], start: float = 2**20,
                       tolerance: float = RATE_TOLERANCE) -> str:
    """One sentence pointing at the copy control's own fall in the bus-bandwidth figure: from its fastest size at or
    above ``start`` bytes to its slowest size after that (``sizes`` in bytes, ``rates`` in bytes/s), where the rate
    fell by more than ``tolerance``; else that it held steady.

    >>> print(copy_fall_sentence([2**20, 2**21, 2**22, 2**23, 2**24, 2**25], [11.6e9, 12.4e9, 8.7e9, 5.8e9, 5.2e9,
    ...                                                                     5.5e9]))  # doctest: +NORMALIZE_WHITESPACE
    In the bus-bandwidth figure the copy control itself falls, from 12.4 GB/s at 2 MiB to 5.2 GB/s at 16 MiB: its
    buffers hold more memory than all-reduce's at the same message, so it leaves a level of the memory hierarchy at a
    smaller message, which is why the lab reads it where its buffers hold as much memory as all-reduce's.
    >>> print(copy_fall_sentence([2**20, 2**21], [5e9, 5.1e9]))
    In the bus-bandwidth figure the copy control holds steady from 1 MiB up.
    """
    big = [(s, r) for s, r in zip(sizes, rates) if s >= start]
    if not big:
        return ""
    top = max(range(len(big)), key=lambda i: big[i][1])
    low = min(range(top, len(big)), key=lambda i: big[i][1])
    if big[low][1] >= (1 - tolerance) * big[top][1]:
        return f"In the bus-bandwidth figure the copy control holds steady from {format_bytes(start)} up."
    return (f"In the bus-bandwidth figure the copy control itself falls, from {big[top][1] / 1e9:.1f} GB/s at "
            f"{format_bytes(big[top][0])} to {big[low][1] / 1e9:.1f} GB/s at {format_bytes(big[low][0])}: its buffers "
            "hold more memory than all-reduce's at the same message, so it leaves a level of the memory hierarchy at "
            "a smaller message, which is why the lab reads it where its buffers hold as much memory as all-reduce's.")


def is_virtual(machine: dict) -> bool:
    """Whether a run's machine was a virtual one: its recorded ``"virtual"`` flag (the CPU's ``hypervisor``
    flag) where it has one, else a processor name with no model number, the generic name a hypervisor shows its
    guests ("Intel(R) Xeon(R) Processor").

    >>> is_virtual({"cpu_model": "Intel(R) Xeon(R) Processor"}), is_virtual({"cpu_model": "AMD EPYC 7763"})
    (True, False)
    """
    if machine.get("virtual") is not None:
        return bool(machine["virtual"])
    model = machine.get("cpu_model")
    return bool(model) and not any(ch.isdigit() for ch in model)


def library_name(library: str) -> str:
    """The MPI library's name and version as a reader reads it, without the "Version:" label MPICH prints.

    >>> library_name("MPICH Version: 5.0.2")
    'MPICH 5.0.2'
    """
    return " ".join(library.replace("Version:", "").split())


def machine_words(machine: dict, library: str | None = None, brief: bool = False) -> str:
    """The machine a stored run was made on, in the book's words, from its recorded facts (``plan.stored()``'s
    ``"machine"``): processor, cores, memory, how idle it was, the date and the libraries.

    A virtual machine is named so (:func:`is_virtual`): its idleness is its own cores', and other guests of the
    same host, sharing its cache and memory, are invisible to it.

    >>> print(machine_words({"cpu_model": "Intel(R) Xeon(R) Processor", "cpu_count": 16, "memory_bytes": 135e9,
    ...                "load_average_before": 0.3, "date": "2026-11-26", "torch": "2.11.0+cu130"},
    ...               "MPICH Version: 5.0.2"))  # doctest: +NORMALIZE_WHITESPACE
    a 16-core cloud virtual machine (Intel Xeon) with 135 GB of memory, idle (a load average of 0.3 as the run
    began), on 2026-11-26, with MPICH 5.0.2 (and PyTorch 2.11 for gloo)
    >>> machine_words({"cpu_model": "Intel(R) Xeon(R) Processor", "cpu_count": 16, "memory_bytes": 135e9,
    ...                "load_average_before": 0.3}, brief=True)
    'a 16-core cloud virtual machine (Intel Xeon), idle'
    >>> machine_words({"cpu_model": "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "cpu_count": 16,
    ...                "memory_bytes": 135e9, "load_average_before": 0.3}, brief=True)
    'a 16-core Intel Xeon Gold 6338 @ 2.00GHz server, idle'
    """
    cpu = (machine.get("cpu_model") or "x86-64").replace("(R)", "").replace("(TM)", "")
    cpu = " ".join(w for w in cpu.split() if w not in ("Processor", "CPU"))
    cores = check_count("cpu_count", machine["cpu_count"], minimum=1)
    memory = machine.get("memory_bytes")
    kind = "server" if cores >= 8 and (memory or 0) >= 64e9 else "machine"
    text = (f"a {cores}-core cloud virtual machine ({cpu})" if is_virtual(machine) else
            f"a {cores}-core {cpu} {kind}")
    load = machine.get("load_average_before")
    if brief:  # the rest goes in a table beside it
        return text + ("" if load is None else ", idle" if load < 0.1 * cores + 0.5 else ", not idle")
    if memory:
        text += f" with {memory / 1e9:.0f} GB of memory"
    if load is not None:
        text += (f", idle (a load average of {load:.1f} as the run began)" if load < 0.1 * cores + 0.5
                 else f", not idle (a load average of {load:.1f} as the run began)")
    if machine.get("date"):
        text += f", on {machine['date']}"
    libs = []
    if library:
        libs.append(library_name(library))
    text += f", with {' and '.join(libs)}" if libs else ""
    torch = machine.get("torch")
    if torch:
        text += f" (and PyTorch {'.'.join(torch.split('+')[0].split('.')[:2])} for gloo)"
    return text


def your_run_loaded(yours: dict) -> bool:
    """Whether a run of the plan was made under load, by its own record: its ranks got less than
    :data:`CORE_SHARE_ENOUGH` of their cores' time (a run that does not record it is not called loaded).

    >>> your_run_loaded({"core_share": 0.24}), your_run_loaded({"core_share": 0.98}), your_run_loaded({})
    (True, False, False)
    """
    share = yours.get("core_share")
    return share is not None and share < CORE_SHARE_ENOUGH


def your_run_title(yours: dict) -> str:
    """The title of the figure that sets a run of the plan beside the reference run; a loaded run says so in it.

    >>> your_run_title({"core_share": 0.24})
    'All-reduce: this run (loaded: its ranks got 24 % of their cores) against the reference run'
    >>> your_run_title({"core_share": 0.98})
    'All-reduce: this run against the reference run'
    """
    if your_run_loaded(yours):
        return (f"All-reduce: this run (loaded: its ranks got {round(100 * min(yours['core_share'], 1.0))} % of "
                "their cores) against the reference run")
    return "All-reduce: this run against the reference run"


def your_run_sentence(reference: dict, yours: dict, ref_times: Sequence[float], your_times: Sequence[float],
                      sizes: Sequence[float], tolerance: float = RATE_TOLERANCE,
                      ref4_times: Sequence[float] | None = None, your4_times: Sequence[float] | None = None) -> str:
    """How a run of the plan made on the machine that executes the notebook differs from the stored reference
    run: the ranks' share of their cores, and all-reduce's time at the smallest and the largest size
    (``ref_times``, ``your_times``: seconds at ``sizes``). The words are true wherever the notebook ran (a
    reader's own machine, or the one that built the book's website): they name the run by where it was made,
    not by whose it is. A loaded run (:func:`your_run_loaded`) says so, and that the chapter reads the
    reference run. With ``ref4_times`` and ``your4_times`` (the same on four ranks sharing the two cores) a
    further sentence covers the figure's four-rank curves, and says why they may part far more than the
    two-rank ones.

    >>> print(your_run_sentence({"core_share": 0.99}, {"core_share": 0.4}, [6e-6, 0.02], [30e-6, 0.05],
    ...                         [1024, 2**26]))  # doctest: +NORMALIZE_WHITESPACE
    This run was made on the machine that executed this notebook. Its ranks got 40 % of their cores' time, the
    reference run's 99 %: other programs shared its cores. Its all-reduce took 5.0 times the reference run's time
    at 1 KiB and 2.5 times at 64 MiB. This run was loaded, so its times are the library's cost plus the load's:
    the chapter's numbers come from the reference run.
    >>> your_run_sentence({"core_share": 0.99}, {"core_share": 0.98}, [6e-6, 0.02], [6.3e-6, 0.021], [1024, 2**26])[-74:]
    "Its all-reduce took about the reference run's time at 1 KiB and at 64 MiB."
    """
    if not (len(ref_times) == len(your_times) == len(sizes) == 2):
        raise ValueError("ref_times, your_times and sizes must each hold two values (smallest, largest size)")
    share_ref, share_you = reference.get("core_share"), yours.get("core_share")
    text = "This run was made on the machine that executed this notebook."
    if share_you is None or share_ref is None:
        text += " This system does not report its ranks' CPU time."
    else:
        text += (f" Its ranks got {round(100 * min(share_you, 1.0))} % of their cores' time, the reference run's "
                 f"{round(100 * min(share_ref, 1.0))} %")
        text += (": other programs shared its cores." if share_you < CORE_SHARE_ENOUGH
                 else ": both had their cores nearly to themselves.")
    def compared(what: str, mine: Sequence[float], theirs: Sequence[float]) -> tuple[str, list[float]]:
        ratios = [check_positive("your_times", y) / check_positive("ref_times", r) for y, r in zip(mine, theirs)]
        if all(abs(q - 1) <= tolerance for q in ratios):
            return (f" {what} took about the reference run's time at {format_bytes(sizes[0])} and at "
                    f"{format_bytes(sizes[1])}.", ratios)
        return (f" {what} took {figures(ratios[0])} times the reference run's time at {format_bytes(sizes[0])} and "
                f"{figures(ratios[1])} times at {format_bytes(sizes[1])}.", ratios)

    two, ratios2 = compared("Its all-reduce", your_times, ref_times)
    text += two
    if ref4_times is not None and your4_times is not None:
        if not (len(ref4_times) == len(your4_times) == 2):
            raise ValueError("ref4_times and your4_times must each hold two values (smallest, largest size)")
        four, ratios4 = compared("On four ranks sharing those two cores it", your4_times, ref4_times)
        text += four
        if ratios4[0] > 2 * max(ratios2[0], 1.0):  # the shared-core run parted far more than the two-rank one
            text += (" Four ranks on two cores part most from run to run: there a step may wait for its rank to get "
                     "a core, and other programs on those cores lengthen the wait (section *More ranks than "
                     "cores*).")
    if your_run_loaded(yours):
        text += (" This run was loaded, so its times are the library's cost plus the load's: the chapter's numbers "
                 "come from the reference run.")
    return text


def time_span(values: Sequence[float]) -> str:
    """Times (s) as one time, or a range where they differ at the figures shown.

    >>> time_span([39e-6, 57e-6]), time_span([0.23e-3, 2.9e-3])
    ('39 to 57 µs', '230 µs to 2.9 ms')
    """
    return _time_span(values)


def _time_span(values: Sequence[float]) -> str:
    """Times (s) as one time, or a range where they differ at the figures shown ("39 to 57 µs")."""
    lo, hi = time_text(min(values)), time_text(max(values))
    if lo == hi:
        return lo
    lo_num, _, lo_unit = lo.partition(" ")
    hi_num, _, hi_unit = hi.partition(" ")
    return f"{lo_num} to {hi}" if lo_unit == hi_unit else f"{lo} to {hi}"


def _factor_span(fours: Sequence[float], bases: Sequence[float]) -> str:
    """The ratios of each sweep's time on one run to each sweep's on the other (the runs are not paired), as one
    figure or a range."""
    ratios = [f / b for f in fours for b in bases]
    lo, hi = min(ratios), max(ratios)
    words = [figures(r) if r < 10 else about(r) for r in (lo, hi)]
    return words[0] if words[0] == words[1] else f"{words[0]} to {words[1]}"


def oversubscription_sentence(size: float, two: float, four: float, free: float | None, alpha2: float,
                              alpha4: float, alpha_known: bool = True, slice_s: float = 1e-3,
                              part: str = "both", alpha_base: str = "two ranks",
                              fours: Sequence[float] | None = None, frees: Sequence[float] | None = None,
                              alphas4: Sequence[float] | None = None, scope: str = "") -> str:
    """What putting two ranks on each core did to a small all-reduce: its time at ``size`` bytes on four ranks
    sharing two cores (``four``, s) against two ranks (``two``) and four ranks with a core each (``free``, or
    None), and the fitted per-step start-up cost at two and four ranks against a scheduler slice (``slice_s``).
    ``part``: ``"times"`` or ``"alpha"`` for one of the two sentences alone, ``"both"`` for both.
    ``alpha_base``: the run ``alpha2`` was fitted on, the control α is held against (four ranks with a core
    each, where it was run, differ from the shared run in the sharing alone).
    ``fours``, ``frees`` (s) and ``alphas4`` (s): the shared run's and its control's times at ``size`` and the
    shared run's fitted α, each sweep alone; given, the sentence quotes them as ranges by sweep (each sweep of the
    shared run against each of the control's), no finer than the run knows them.
    ``scope``: words that limit the finding on slices to the thread level the runs used (:func:`level_scope`);
    whether ranks that share a core wait out slices depends on it (:func:`shared_level_sentence`).

    >>> oversubscription_sentence(1024, 8.7e-6, 38.9e-6, 13.7e-6, 3.2e-6, 10e-6, fours=[38.9e-6, 56.5e-6],
    ...                           frees=[13.7e-6, 14.3e-6], alphas4=[15e-6, 10e-6], part="times")[-134:]
    "2.7 to 4.1 times as long, by the sweep, as the same four ranks with a core each (the table gives each run's time on its faster sweep)."

    >>> print(oversubscription_sentence(1024, 6.1e-6, 37e-6, 11.5e-6, 3.0e-6, 9.6e-6))  # doctest: +NORMALIZE_WHITESPACE
    At 1 KiB, four ranks on two cores took 37 µs, against 12 µs for four ranks with a core each and 6.1 µs for two
    ranks: 3.2 times as long as the same four ranks with a core each. Per step the fitted α rose from 3.0 µs on
    two ranks to 9.6 µs, far below a scheduler time slice of a few milliseconds: the ranks did not wait out
    slices; what sharing a core added is the cost of switching between ranks, step after step.
    >>> oversubscription_sentence(1024, 7e-6, 5e-3, None, 2.4e-6, 1.5e-3)[:120]
    'At 1 KiB, four ranks on two cores took 5.0 ms, against 7.0 µs for two ranks: 700 times as long. Per step the fitted α ro'
    """
    for name, v in (("two", two), ("four", four)):
        check_positive(name, v)
    check_nonnegative("alpha2", alpha2)
    check_nonnegative("alpha4", alpha4)
    base = free if free is not None else two
    fours = list(fours) if fours else [four]
    bases = list(frees) if frees and free is not None else [base]
    text = f"At {format_bytes(size)}, four ranks on two cores took {_time_span(fours)}, against "
    text += (f"{_time_span(bases)} for four ranks with a core each and " if free is not None else "")
    text += f"{time_text(two)} for two ranks: "
    ranged = len(fours) > 1 or len(bases) > 1
    if ranged and free is not None:     # the runs' times stand in the table beside it; the ratios carry the spread
        text = (f"At {format_bytes(size)}, four ranks on two cores took {_factor_span(fours, bases)} times as long, "
                "by the sweep, as the same four ranks with a core each (the table gives each run's time on its faster sweep).")
    else:
        text += (f"{_factor_span(fours, bases)} times as long" + (", by the sweep," if ranged else "")
                 + (" as the same four ranks with a core each." if free is not None else "."))
    if part not in ("both", "times", "alpha"):
        raise ValueError(f"part must be 'both', 'times' or 'alpha'; got {part!r}")
    if not alpha_known:
        alpha = "The fitted α of the two runs is not fixed well enough to say how much of it is per step."
    else:
        shown = _time_span(alphas4) + " by the sweep" if alphas4 and _time_span(alphas4) != time_text(
            min(alphas4)) else time_text(alpha4)
        alpha = f"Per step the fitted α rose from {time_text(alpha2)} on {alpha_base} to {shown}"
        if alpha4 >= 0.5 * slice_s:
            alpha += (", of the order of a scheduler time slice of a few milliseconds: a step waited for its "
                      "rank to get a core back.")
        else:
            below = "far below" if alpha4 < 0.1 * slice_s else "below"
            alpha += (f", {below} a scheduler time slice of a few milliseconds: "
                      + (f"{scope}, " if scope else "") + "the ranks did not wait out "
                      "slices; what sharing a core added is the cost of switching between ranks, step after step.")
    return {"times": text, "alpha": alpha, "both": text + " " + alpha}[part]


def oversubscription_takeaway(size: float, two: float, four: float, free: float | None,
                              fours: Sequence[float] | None = None, frees: Sequence[float] | None = None,
                              scope: str = "", other: str = "") -> str:
    """The takeaway on oversubscription: the measured slowdown of a small all-reduce (as in
    :func:`oversubscription_sentence`), in words no finer than one run knows it.

    ``scope``: the thread level the runs used, as :func:`level_scope` words, which open the takeaway; ``other``:
    what a control found at the other level, a clause that closes it.

    >>> print(oversubscription_takeaway(1024, 6.1e-6, 37e-6, 11.5e-6, scope="at `MPI_THREAD_MULTIPLE`, the level "
    ...       "of every oversubscribed run here", other="at `MPI_THREAD_SINGLE` a control found whole scheduler "
    ...       "slices instead"))  # doctest: +NORMALIZE_WHITESPACE
    At `MPI_THREAD_MULTIPLE`, the level of every oversubscribed run here, more ranks than cores put the cost of
    switching between ranks into α: a 1 KiB all-reduce on four ranks sharing two cores took about three times as
    long as on four ranks with a core each (37 µs against 12 µs); at `MPI_THREAD_SINGLE` a control found whole
    scheduler slices instead.

    >>> print(oversubscription_takeaway(1024, 6.1e-6, 37e-6, 11.5e-6))  # doctest: +NORMALIZE_WHITESPACE
    More ranks than cores puts the cost of switching between ranks into α: here a 1 KiB all-reduce on four ranks
    sharing two cores took about three times as long as on four ranks with a core each (37 µs against 12 µs).
    """
    base, what = (free, "on four ranks with a core each") if free is not None else (two, "on two ranks")
    factor = check_positive("four", four) / check_positive("base", base)
    head = ((scope[0].upper() + scope[1:] + ", more ranks than cores put the cost of switching between ranks into "
             "α: a ") if scope else "More ranks than cores puts the cost of switching between ranks into α: here a ")
    tail = f"; {other}." if other else "."
    if fours or frees:      # ranges by sweep (see :func:`oversubscription_sentence`)
        fs = list(fours) if fours else [four]
        bs = list(frees) if frees and free is not None else [base]
        return (f"{head}{format_bytes(size)} all-reduce on four ranks sharing two cores took {_factor_span(fs, bs)} "
                f"times as long as {what}, by the sweep" + tail)
    return (f"{head}{format_bytes(size)} all-reduce on four ranks sharing two cores took about {about(factor)} times "
            f"as long as {what} ({time_text(four)} against {time_text(base)})" + tail)


#: mpi4py's names of MPI's thread levels, by the value MPICH gives them (MPI_THREAD_SINGLE = 0 ... MULTIPLE = 3).
_LEVEL_NAMES = ("MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE")


def level_name(doc: dict) -> str:
    """The thread level a run's ranks got from MPI (its JSON's ``thread_level``), as code words for the prose.

    The JSON also records the library's value of ``MPI_THREAD_MULTIPLE`` (``thread_multiple``): a level equal to
    it is MULTIPLE whatever the library's numbering; the others are read in MPICH's order, SINGLE = 0 up.

    >>> level_name({"thread_level": 3, "thread_multiple": 3}), level_name({"thread_level": 0, "thread_multiple": 3})
    ('`MPI_THREAD_MULTIPLE`', '`MPI_THREAD_SINGLE`')
    """
    level = doc.get("thread_level")
    if not isinstance(level, int) or level < 0:
        raise ValueError(f"doc must record a thread_level (a whole number >= 0), got {level!r}")
    if level == doc.get("thread_multiple", 3):
        return "`MPI_THREAD_MULTIPLE`"
    if level >= len(_LEVEL_NAMES):
        raise ValueError(f"doc's thread_level must be 0 to 3 in MPICH's numbering, got {level}")
    return f"`{_LEVEL_NAMES[level]}`"


def level_scope(doc: dict, what: str = "every oversubscribed run here") -> str:
    """Words that scope a finding to the thread level its runs used (:func:`level_name` of ``doc``), e.g.
    "at mpi4py's default `MPI_THREAD_MULTIPLE`, the level of every oversubscribed run here".

    >>> level_scope({"thread_level": 0, "thread_multiple": 3}, "the run")
    'at `MPI_THREAD_SINGLE`, the level of the run'
    """
    name = level_name(doc)
    own = "mpi4py's default " if name == "`MPI_THREAD_MULTIPLE`" else ""
    return f"at {own}{name}, the level of {what}"


def waits_out_slices(seconds: float, slice_s: float = 1e-3) -> bool:
    """Whether a small collective's typical time (s) is a scheduler time slice (``slice_s``, about a millisecond
    on Linux) or more: then its ranks waited out whole slices, rather than switched between each other at once.

    >>> waits_out_slices(17e-3), waits_out_slices(60e-6)
    (True, False)
    """
    check_nonnegative("seconds", seconds)
    check_positive("slice_s", slice_s)
    return seconds >= slice_s


def shared_level_sentence(size: float, single: Sequence[Sequence[float]], multiple: Sequence[Sequence[float]],
                          labels: Sequence[str], level_single: str = "`MPI_THREAD_SINGLE`",
                          level_multiple: str = "`MPI_THREAD_MULTIPLE`", slice_s: float = 1e-3,
                          part: str = "verdict") -> str:
    """What the shared-core thread-level control found at ``size`` bytes: each placement's (``labels``, e.g.
    "four ranks on two cores") ``(q1, median, q3, cpu)`` in seconds at the two levels, ``single`` and ``multiple``
    (the same placements in the same order; ``cpu``: the median CPU time per call of the rank that used least).

    ``part``: ``"verdict"``, whether the SINGLE ranks waited out whole scheduler slices (every placement's median
    a slice or more, :func:`waits_out_slices`), with the medians and quartiles; ``"cpu"``, what the ranks' CPU
    clocks say (a rank that kept running while it waited used about as much CPU time as its wall time held
    slices); ``"against"``, SINGLE's median over MULTIPLE's, placement by placement.

    >>> s = [(16e-3, 17e-3, 24e-3, 3.5e-3), (8.0e-3, 9.5e-3, 12e-3, 3.9e-3)]
    >>> m = [(4.0e-3, 5.7e-3, 7.2e-3, 0.44e-3), (0.23e-3, 0.89e-3, 2.9e-3, 0.06e-3)]
    >>> print(shared_level_sentence(1024, s, m, ["four ranks on two cores", "two ranks on one core"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    At `MPI_THREAD_SINGLE` ranks that shared a core waited out whole scheduler slices: a 1 KiB all-reduce took a
    median 17 ms on four ranks on two cores and 9.5 ms on two ranks on one core, and even the faster quarter of its
    calls 8.0 ms or more, against a slice of a few milliseconds.
    >>> shared_level_sentence(1024, [(40e-6, 50e-6, 60e-6, 20e-6)], m[:1], ["four ranks on two cores"])[:80]
    'At `MPI_THREAD_SINGLE` too, ranks that shared a core did not wait out scheduler '
    >>> print(shared_level_sentence(1024, s, m, ["four ranks on two cores", "two ranks on one core"], part="cpu"))
    ... # doctest: +NORMALIZE_WHITESPACE
    At `MPI_THREAD_SINGLE` even the rank that used least CPU time ran for a median of 3.5 to 3.9 ms of it per
    call, against 0.06 to 0.44 ms at `MPI_THREAD_MULTIPLE`: a waiting rank kept its core, running, until the scheduler took it
    away, instead of handing it over.
    >>> print(shared_level_sentence(1024, s, m, ["four ranks on two cores", "two ranks on one core"], part="against"))
    ... # doctest: +NORMALIZE_WHITESPACE
    By wall time `MPI_THREAD_SINGLE` took 3.0 to 11 times as long as `MPI_THREAD_MULTIPLE` by the median, but
    those times hold the load's share and the two levels always ran in the same order, `MPI_THREAD_MULTIPLE`
    first, so that ratio does not set the level apart from the load; the CPU clock does.
    """
    if not single or len(single) != len(multiple) or len(single) != len(labels):
        raise ValueError("single, multiple and labels must be non-empty and of the same length")
    if part not in ("verdict", "cpu", "against"):
        raise ValueError(f"part must be 'verdict', 'cpu' or 'against', got {part!r}")
    for name, rows in (("single", single), ("multiple", multiple)):
        for row in rows:
            if len(row) != 4 or any(not v >= 0 for v in row):
                raise ValueError(f"{name} must hold (q1, median, q3, cpu) tuples of times >= 0, got {row!r}")
    waited = all(waits_out_slices(row[1], slice_s) for row in single)
    if part == "verdict":
        took = f"a {format_bytes(size)} all-reduce took a median " + _and(
            [f"{time_text(row[1])} on {label}" for row, label in zip(single, labels)])
        if waited:
            return (f"At {level_single} ranks that shared a core waited out whole scheduler slices: {took}, and even "
                    f"the faster quarter of its calls {time_text(min(row[0] for row in single))} or more, against a "
                    "slice of a few milliseconds.")
        return (f"At {level_single} too, ranks that shared a core did not wait out scheduler slices: {took}, below a "
                "slice of a few milliseconds.")
    if part == "cpu":
        cpu_s, cpu_m = [row[3] for row in single], [row[3] for row in multiple]
        text = (f"At {level_single} even the rank that used least CPU time ran for a median of {_ms_span(cpu_s)} of it "
                f"per call, against {_ms_span(cpu_m)} at {level_multiple}")
        if min(cpu_s) >= 0.5 * slice_s:
            return text + (": a waiting rank kept its core, running, until the scheduler took it away, instead of "
                           "handing it over.")
        return text + "."
    ratios = [s[1] / m[1] for s, m in zip(single, multiple) if m[1] > 0]
    words = [figures(r) if r < 10 else f"{r:.0f}" for r in (min(ratios), max(ratios))]
    span = words[0] if words[0] == words[1] else f"{words[0]} to {words[1]}"
    return (f"By wall time {level_single} took {span} times as long as {level_multiple} by the median, but those "
            f"times hold the load's share and the two levels always ran in the same order, {level_multiple} first, "
            "so that ratio does not set the level apart from the load; the CPU clock does.")


def _busy(machine: dict) -> bool:
    """Whether other programs kept a control's machine busy: its load average as it began at half its cores or
    more (the load after it ended counts the control's own ranks, so it is no evidence of other programs)."""
    before, cores = machine.get("load_average_before"), machine.get("cpu_count")
    return (before or 0) >= 0.5 * (cores or 1)


def shared_machine_sentence(machine: dict, multiple: float, reference: Sequence[float],
                            slice_s: float = 1e-3) -> str:
    """Where the shared-core control ran (``machine``: its record, ``machine_shared_control.json``) and what that
    did to its times at MULTIPLE: ``multiple`` (s), its median on four ranks on two cores, against ``reference``
    (s), the reference run's times on the same placement (each sweep). A loaded machine makes ranks wait out
    slices at any level; the CPU clock, which counts only the time a rank ran, still sets the levels apart.

    >>> print(shared_machine_sentence({"cpu_count": 2, "load_average_before": 2.1, "load_average_after": 4.3},
    ...                               5.7e-3, [39e-6, 57e-6]))  # doctest: +NORMALIZE_WHITESPACE
    It ran on a two-core machine that other programs kept busy (load average 2.1 as it began; the 4.3 after it
    ended counts its own ranks too), not the reference run's: at `MPI_THREAD_MULTIPLE` four ranks on two cores
    took 5.7 ms there, against 39 to 57 µs in the reference run, so load made the ranks wait out slices at that
    level too. Its wall times hold the load's share; the CPU clock, which counts only the time a rank ran, is what
    sets the two levels apart.
    """
    check_positive("multiple", multiple)
    if not reference:
        raise ValueError("reference must hold the reference run's times (s)")
    before, after = machine.get("load_average_before"), machine.get("load_average_after")
    cores = machine.get("cpu_count")
    where = f"a {about(cores)}-core machine" if cores else "a machine"
    busy = _busy(machine)
    load = (f" (load average {before:.1f} as it began" if before is not None else "") + (
        f"; the {after:.1f} after it ended counts its own ranks too)" if before is not None and after is not None
        else ")" if before is not None else "")
    text = (f"It ran on {where}" + (" that other programs kept busy" if busy else "") + load
            + ", not the reference run's: at `MPI_THREAD_MULTIPLE` four ranks on two cores took "
            f"{time_text(multiple)} there, against {_time_span(reference)} in the reference run")
    if waits_out_slices(multiple, slice_s) and not waits_out_slices(max(reference), slice_s):
        return (text + ", so load made the ranks wait out slices at that level too. Its wall times hold the load's "
                "share; the CPU clock, which counts only the time a rank ran, is what sets the two levels apart.")
    return text + "."


def _ms_span(values: Sequence[float]) -> str:
    """Times (s) as a range in ms to two significant figures, one unit for both ends ("0.06 to 0.44 ms")."""
    lo, hi = (figures(1e3 * v, 1 if 1e3 * v < 0.1 else 2) for v in (min(values), max(values)))
    return f"{lo} ms" if lo == hi else f"{lo} to {hi} ms"


def pair_sentence(sizes: Sequence[float], ratios: Sequence[float], split: float = 2**20,
                  predicted: float | None = None, part: str = "all", model=None, n: int = 4) -> str:
    """Halving-doubling against the ring (time ratios, hd / ring, at ``sizes``), read apart below ``split`` bytes,
    where start-up costs weigh most and halving-doubling's fewer steps count, and from ``split`` up, where the
    bytes, which the two send alike, dominate. ``predicted``: the ratio of the two step counts (halving-doubling's
    over the ring's), what the model predicts where start-up costs alone count; a faster median below ``split`` is
    held against it. ``model``: a fitted line (anything with ``time(op, nbytes, n, algorithm)``, such as the ring's
    own :class:`commlib.lab.fit.AlphaBeta`) on ``n`` ranks: the median below ``split`` is then held against the
    median of the model's own ratios at those sizes, its bytes counted too, and the step ratio is given beside it.
    ``part``: ``"medians"``, the two medians alone (``"small"`` and ``"large"``: one of them); ``"range"``, the
    size-by-size range alone; ``"all"``.

    >>> class Line:
    ...     def time(self, op, nbytes, n, algorithm):
    ...         return (4 if algorithm == "halving_doubling" else 6) * 25e-6 + 1.5 * nbytes / 2e9
    >>> pair_sentence([2**10, 2**12], [0.89, 0.89], predicted=4 / 6, model=Line(), part="medians").split(": ")[-1]
    "faster, though by less than the model's 0.67 (0.67 by steps alone)."

    >>> pair_sentence([2**10, 2**12], [0.84, 0.89], predicted=4 / 6).split(": ")[-1]
    "faster, though by less than the 0.67 its step count predicts. Size by size it took 0.84 to 0.89 of the ring's time."

    >>> print(pair_sentence([2**10, 2**12, 2**18, 2**20, 2**24],
    ...                      [0.81, 0.88, 0.83, 0.98, 1.02]))  # doctest: +NORMALIZE_WHITESPACE
    Below 1 MiB, where start-up costs weigh most, halving-doubling took a median 0.83 of the ring's time: faster,
    as its fewer steps predict. From 1 MiB up, where the bytes dominate, it took a median 1.00 of it: about
    as fast, as the model predicts. Size by size it took 0.81 to 1.02 of the ring's time, and longer than the ring
    at 16 MiB, which the model's count says it cannot take; each ratio is one pair of medians, with no spread of
    its own.
    """
    if len(sizes) != len(ratios) or not sizes:
        raise ValueError("sizes and ratios must be non-empty and of the same length")
    if part not in ("all", "medians", "range", "small", "large"):
        raise ValueError(f"part must be 'all', 'medians', 'small', 'large' or 'range', got {part!r}")
    small = sorted(q for x, q in zip(sizes, ratios) if x < split)
    large = sorted(q for x, q in zip(sizes, ratios) if x >= split)

    def median(v):
        return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])

    parts = []
    if small and model is not None and predicted is not None:
        m = median(small)
        mod = median(sorted(model.time("all_reduce", x, n, "halving_doubling") / model.time("all_reduce", x, n, "ring")
                            for x in sizes if x < split))
        both = f"the model's {mod:.2f} ({predicted:.2f} by steps alone)"
        word = (f"faster, though by less than {both}" if 1 - 0.05 > m > mod + 0.05 else
                f"faster, by more than {both}" if m < mod - 0.05 else
                f"faster, about {both}" if m < 1 - 0.05 else
                "about as fast: its fewer steps did not show" if m <= 1 + 0.05 else "slower, against the model")
        parts.append(f"Below {format_bytes(split)}, where start-up costs weigh most, halving-doubling took a median "
                     f"{m:.2f} of the ring's time: {word}.")
    elif small:
        m = median(small)
        word = ("faster, as its fewer steps predict" if m < 1 - 0.05 and predicted is None else
                f"faster, though by less than the {predicted:.2f} its step count predicts"
                if m < 1 - 0.05 and m > predicted + 0.05 else
                f"faster, by more than the {predicted:.2f} its step count predicts"
                if m < 1 - 0.05 and m < predicted - 0.05 else
                f"faster, about the {predicted:.2f} its step count predicts" if m < 1 - 0.05 else
                "about as fast: its fewer steps did not show" if m <= 1 + 0.05 else
                "slower, against the model")
        parts.append(f"Below {format_bytes(split)}, where start-up costs weigh most, halving-doubling took a median "
                     f"{m:.2f} of the ring's time: {word}.")
    if large:
        m = median(large)
        word = ("about as fast, as the model predicts" if abs(m - 1) <= 0.05 else
                "faster" if m < 1 else "slower, against the model")
        parts.append(f"From {format_bytes(split)} up, where the bytes dominate, it took a median {m:.2f} of "
                     + ("the ring's time" if part == "large" else "it") + ": "
                     f"{word}.")
    if part == "medians":
        return " ".join(parts)
    if part in ("small", "large"):
        return next((p for p in parts if p.startswith("Below" if part == "small" else "From")), "")
    if part == "range":
        parts = []
    if len(ratios) > 1:  # the medians hide single sizes: give the range, and every size where the model was broken
        lo, hi = min(ratios), max(ratios)
        slower = [format_bytes(x) for x, q in zip(sizes, ratios) if round(q, 2) > 1]
        parts.append(f"Size by size it took {lo:.2f} to {hi:.2f} of the ring's time"
                     + (f", and longer than the ring at {_and(slower)}, which the model's count says it cannot "
                        "take; each ratio is one pair of medians, with no spread of its own." if slower else "."))
    return " ".join(parts)


def gloo_sentence(sizes: Sequence[float], gloo: Sequence[float], mpi: Sequence[float]) -> str:
    """How PyTorch's gloo all-reduce compared with MPICH's on the same ranks: its time over MPICH's at the
    smallest and the largest of ``sizes`` (times in seconds, same order).

    >>> print(gloo_sentence([4096, 2**24], [80e-6, 12e-3], [7e-6, 6e-3]))  # doctest: +NORMALIZE_WHITESPACE
    In the reference run gloo's all-reduce took 11 times MPICH's time at 4 KiB and 2.0 times at 16 MiB: slower at
    every size it timed, sending over TCP where MPICH copies through shared memory.
    """
    if not (len(sizes) == len(gloo) == len(mpi)) or not sizes:
        raise ValueError("sizes, gloo and mpi must be non-empty and of the same length")
    q = [check_positive("gloo", g) / check_positive("mpi", m) for g, m in zip(gloo, mpi)]
    text = (f"In the reference run gloo's all-reduce took {figures(q[0])} times MPICH's time at "
            f"{format_bytes(sizes[0])} and {figures(q[-1])} times at {format_bytes(sizes[-1])}")
    if min(q) > 1 + RATE_TOLERANCE:
        return text + ": slower at every size it timed, sending over TCP where MPICH copies through shared memory."
    if max(q) < 1 - RATE_TOLERANCE:
        return text + ": faster than MPICH here."
    return text + "."


def hierarchy_words(held: float | None, llc: float | None, quote: bool = True) -> str:
    """What a copy control that got dearer per byte with the collective says about the memory: a memory-hierarchy
    effect, named no more precisely than the run allows. ``held``: bytes of buffers at the largest size of the rise;
    ``llc``: the last-level cache the machine lists (bytes; None: not known). Where the buffers stayed below half
    of it, the effect lies well below the listed cache: a guest's share of it, a smaller level or the TLB's reach
    could each make it, and the run tests none of them apart. ``quote``: give the two sizes (else the words alone,
    for a paragraph that quotes enough numbers already).

    >>> print(hierarchy_words(80 * 2**20, 300 * 2**20))  # doctest: +NORMALIZE_WHITESPACE
    a memory-hierarchy effect with buffers of 80 MiB at most, well below the 300 MiB last-level cache the machine
    lists; this run does not identify which level
    >>> hierarchy_words(None, None)
    'a memory-hierarchy effect; this run does not identify which level'
    """
    if held is None or not llc:
        return "a memory-hierarchy effect; this run does not identify which level"
    where = ("well below" if held < llc / 2 else "near" if held <= 2 * llc else "above")
    if not quote:
        return (f"a memory-hierarchy effect, with buffers {where} the last-level cache the machine lists; this run "
                "does not identify which level")
    return (f"a memory-hierarchy effect with buffers of {format_bytes(held)} at most, {where} the "
            f"{format_bytes(llc)} last-level cache the machine lists; this run does not identify which level")


#: A doubling over which each byte got more than this many times dearer counts as a rise (:func:`large_story`).
RISE = 1.1


def _rises(times: Sequence[float], sizes: Sequence[float], i: int) -> float:
    """How many times dearer each byte got from ``sizes[i]`` to ``sizes[i + 1]``."""
    return (times[i + 1] / times[i]) / (sizes[i + 1] / sizes[i])


def large_story(op: str, sizes: Sequence[float], sweeps: Sequence[Sequence[float]],
                cpu: Sequence[float] | None, copy_wall: Sequence[float], copy_cpu: Sequence[float] | None,
                pages: Sequence[float] | None, lo: float, rise: float = RISE, jump: float = FAULT_JUMP,
                footprint: float | None = None, llc: float | None = None) -> str:
    """The large-message regime told once: over which sizes from ``lo`` up each byte of ``op`` got dearer at every
    doubling in every sweep (``sweeps``: each sweep's median seconds at ``sizes``), whether the ranks' own CPU time
    (``cpu``, seconds at ``sizes``) shows it too, and the two causes the run measured beside it: up to which size
    the copy control, read at the collective's footprint (``copy_wall``, ``copy_cpu``: rates at ``sizes``,
    :func:`commlib.lab.memory.matched_control`), got dearer per byte too, as where buffers outgrow a cache; and
    from which size each call mapped in fresh pages for ``jump`` of the message or more (``pages``: shares of the
    message at ``sizes``, :func:`commlib.lab.runner.page_shares`). A doubling counts as a rise where each byte got
    more than ``rise`` times dearer. ``footprint`` (buffers of the message size the collective touches) and ``llc``
    (the last-level cache the machine lists, bytes) set the control's words (:func:`hierarchy_words`).

    >>> sizes = [2.0**k for k in range(22, 27)]
    >>> print(large_story("all-reduce", sizes, [[1, 2.4, 6.1, 19.8, 40], [1.1, 2.9, 7.2, 20, 40]],
    ...                   [1, 2.4, 6.1, 19.8, 40], [12.3e9, 8.5e9, 6.7e9, 6.5e9, 6.5e9], None,
    ...                   [0, 0, 0, 0.5, 0.5], lo=2**22))  # doctest: +NORMALIZE_WHITESPACE
    From 4 MiB to 32 MiB each byte of all-reduce got dearer at every doubling, in both sweeps and on both clocks;
    the fits put the cut in one gap or the next of these, by the sweep. The run measured two causes beside it. Up
    to 16 MiB the copy control, read where its buffers hold as much memory as all-reduce's, got dearer per byte
    too: a memory-hierarchy effect; this run does not identify which level. From 32 MiB each call mapped in fresh
    pages for half the message, and none below: MPICH's temporary buffer, of the whole message, of which each call
    touches half, is then past glibc's largest threshold for reusing a freed block, so it is mapped and faulted in
    afresh on every call.
    """
    sizes = list(sizes)
    if any(len(t) != len(sizes) for t in sweeps) or not sweeps:
        raise ValueError("each sweep must hold one time per size")
    start = next((i for i, x in enumerate(sizes) if x >= lo), None)
    if start is None or start >= len(sizes) - 1:
        return f"This run measured {op} at no two sizes from {format_bytes(lo)} up."
    gaps = range(start, len(sizes) - 1)
    up = [i for i in gaps if all(_rises(t, sizes, i) > rise for t in sweeps)]
    if not up:
        return f"From {format_bytes(lo)} up no doubling made each byte of {op} dearer in every sweep."
    first = up[0]
    last = first
    while last + 1 in up:
        last += 1
    both = cpu is not None and all(_rises(cpu, sizes, i) > rise for i in range(first, last + 1))
    every = "both" if len(sweeps) == 2 else "all"
    text = (f"From {format_bytes(sizes[first])} to {format_bytes(sizes[last + 1])} each byte of {op} got dearer at "
            f"every doubling, in {every} sweeps" + (" and on both clocks" if both else "")
            + "; the fits put the cut in one gap or the next of these, by the sweep.")
    # a copy rate r is bytes per second: each byte got r[i] / r[i + 1] times dearer across a doubling
    cache = [i for i in range(first, last + 1) if copy_wall[i] / copy_wall[i + 1] > rise
             and (copy_cpu is None or copy_cpu[i] / copy_cpu[i + 1] > rise)]
    fresh = None if pages is None else next((i for i in range(len(sizes)) if pages[i] >= jump), None)
    causes = []
    if cache:
        causes.append(f"Up to {format_bytes(sizes[cache[-1] + 1])} the copy control, read where its buffers hold as "
                      f"much memory as {op}'s, got dearer per byte too: "
                      + hierarchy_words(None if footprint is None else footprint * sizes[cache[-1] + 1], llc,
                                        quote=False) + ".")
    if fresh is not None and fresh <= last + 1:
        share = pages[fresh]
        words = "half the message" if abs(share - 0.5) < 0.05 else f"{pages_words(share)} of the message"
        none_below = all(p < 0.005 for p in pages[:fresh])
        causes.append(f"From {format_bytes(sizes[fresh])} each call mapped in fresh pages for {words}"
                      + (", and none below" if none_below else "")
                      + ": MPICH's temporary buffer, of the whole message, of which each call touches half, is then "
                        "past glibc's largest threshold for reusing a freed block, so it is mapped and faulted in "
                        "afresh on every call.")
    if not causes:
        return text + " Neither the copy control nor the page counts got dearer with it: the run does not say why."
    return (text + f" The run measured {_WORDS.get(len(causes), str(len(causes)))} cause"
            + ("s" if len(causes) > 1 else "") + " beside it. " + " ".join(causes))


def clean_rate_sentence(op: str, sizes: Sequence[float], rates: Sequence[float], copy_rates: Sequence[float],
                        pages: Sequence[float], jump: float = FAULT_JUMP,
                        tolerance: float = RATE_TOLERANCE) -> str:
    """The rate comparison made again at the largest size whose calls mapped in no fresh pages (``pages``: shares
    of the message at ``sizes``, below ``jump``): ``op``'s bus bandwidth there (``rates``) against the bounds of one
    and of two copies per bus byte with the reduction, from the copy control at the same size
    (:func:`commlib.lab.memory.busbw_bound`).

    >>> print(clean_rate_sentence("all-reduce", [2**24, 2**25, 2**26], [2.73e9, 1.7e9, 1.7e9],
    ...                           [6.38e9, 6.48e9, 6.46e9], [0, 0.5, 0.5]))  # doctest: +NORMALIZE_WHITESPACE
    One piece of that work the run did count: from 32 MiB up, each call of all-reduce also faulted in fresh pages
    for half the message, work the bounds leave out. At 16 MiB, the largest size without fresh pages, its bus
    bandwidth was 2.73 GB/s, between the bounds of one copy per byte (3.65 GB/s) and of two (2.32 GB/s), each
    with the reduction and from the copy control's rate at that size: a little above the bound of two, within the
    uncertainty the chapter allows the bounds, so most of a second copy through a shared buffer can explain it, and
    at the largest sizes the fresh pages are the run's candidate for the rest.
    """
    clean = [i for i, p in enumerate(pages) if p < jump]
    fresh = [i for i, p in enumerate(pages) if p >= jump]
    if not fresh:
        return f"No call of {op} mapped in fresh pages for {_part_words(jump)} of the message or more."
    if not clean:
        return f"Every size of {op} mapped in fresh pages on every call: the run has no size without them."
    i = clean[-1]
    one, two = busbw_bound(copy_rates[i], 1), busbw_bound(copy_rates[i], 2)
    share = pages[fresh[0]]
    words = "half the message" if abs(share - 0.5) < 0.05 else f"{pages_words(share)} of the message"
    head = (f"One piece of that work the run did count: from {format_bytes(sizes[fresh[0]])} up, each call of {op} "
            f"also faulted in fresh pages for {words}, work the bounds leave out. At {format_bytes(sizes[i])}, the "
            f"largest size without fresh pages, its bus bandwidth was {rate_text(rates[i])}, ")
    r = rates[i]
    rest = ", and at the largest sizes the fresh pages are the run's candidate for the rest."
    if r > (1 + tolerance) * one:
        return head + (f"above the bound of one copy per byte with the reduction ({rate_text(one)}, from the copy "
                       "control's rate at that size).")
    # the bounds are read within ``tolerance``: a rate just past one is said as near it, not as between them
    if r > one:
        return (head + f"a little above the bound of one copy per byte with the reduction ({rate_text(one)}, from "
                "the copy control's rate at that size), within the uncertainty the chapter allows the bounds: there "
                "one copy can explain the rate" + rest)
    if r >= two:
        most = (" a little above the bound of two, within the uncertainty the chapter allows the bounds, so"
                if r <= (1 + tolerance) * two else " too fast for a whole second copy, so")
        return (head + f"between the bounds of one copy per byte ({rate_text(one)}) and of two ({rate_text(two)}), "
                f"each with the reduction and from the copy control's rate at that size:{most} most of a second "
                "copy through a shared buffer can explain it" + rest)
    if r >= (1 - tolerance) * two:
        return (head + f"a little below the bound of two copies per byte with the reduction ({rate_text(two)}, from "
                "the copy control's rate at that size), within the uncertainty the chapter allows the bounds: there "
                "a second copy through a shared buffer can explain the rate" + rest)
    return (head + f"below the bound of two copies per byte with the reduction ({rate_text(two)}, from the copy "
            "control's rate at that size) there too: "
            "waits or work the counts leave out take the rest even without fresh pages.")


def graded_range(sweep_misses: Sequence[float]) -> tuple[float, float]:
    """The lowest and highest of a grade's median misses, one per sweep graded against."""
    if not sweep_misses:
        raise ValueError("sweep_misses must not be empty")
    return min(sweep_misses), max(sweep_misses)


def percent_range(lo: float, hi: float) -> str:
    """Two fractions as a range of whole per cents, or one where both round alike.

    >>> percent_range(0.151, 0.162), percent_range(0.151, 0.154)
    ('15 to 16 %', '15 %')
    """
    a, b = round(100 * lo), round(100 * hi)
    return f"{a} %" if a == b else f"{a} to {b} %"


def transfer_grade(piece: float, single: float, piece_sweeps: Sequence[float], single_sweeps: Sequence[float],
                   target: float = 0.2) -> str:
    """The grade at another number of ranks, with its range over the sweeps graded against: ``piece`` and
    ``single`` the regime fits' and single lines' median misses against the faster sweep at each size; the
    ``*_sweeps`` the same against each sweep alone. The regime fits are called better only where their whole
    range lies below the lines'; the target is met, missed, or reached "at the target's edge" where the range
    straddles it.

    >>> print(transfer_grade(0.18, 0.19, [0.21, 0.20], [0.29, 0.21]))  # doctest: +NORMALIZE_WHITESPACE
    18 to 21 % by which sweep is graded, at the target's edge; the single lines miss by 19 to 29 %,
    a range that overlaps the regime fits', so neither is the better here
    """
    lo, hi = graded_range([piece, *piece_sweeps])
    slo, shi = graded_range([single, *single_sweeps])
    where = ("at the target's edge" if lo <= target < hi else "within the target" if hi <= target
             else "outside the target")
    text = (f"{percent_range(lo, hi)} by which sweep is graded, {where}; "
            f"the single lines miss by {100 * slo:.0f} to {100 * shi:.0f} %")
    if hi < slo:
        return text + ", every one of them more, so the regime fits are the better here"
    if shi < lo:
        return text + ", every one of them less, so the single lines are the better here"
    return text + ", a range that overlaps the regime fits', so neither is the better here"


def _ratio_range(lo: float, hi: float) -> str:
    """A ratio's range in two significant figures, or one value where both ends round alike."""
    a, b = figures(lo), figures(hi)
    return f"about {figures((lo + hi) / 2)}" if float(a) == float(b) else f"{a} to {b}"


def ratio_range(values: Sequence[float]) -> str:
    """Several readings of one ratio (the kept timings and each sweep alone) as the range they span, in two
    significant figures, or one value where both ends round alike.

    >>> ratio_range([1.46, 1.45, 1.52]), ratio_range([1.51, 1.52])
    ('1.4 to 1.5', 'about 1.5')
    """
    if not values:
        raise ValueError("values must not be empty")
    return _ratio_range(min(values), max(values))


def gloo_setup(gloo: dict, mpi: dict) -> str:
    """How gloo's timing was set up against MPICH's (``gloo``, ``mpi``: the two runs' documents): on which cores,
    how many calls, and that it was timed in a run of its own, not in turns with MPI.

    >>> gloo_setup({"ranks": 2, "rank_cores": [0, 1], "repeats": 15}, {"rank_cores": [0, 1]})[:70]
    "gloo's two ranks ran on the same two cores as MPICH's, one each, 15 ca"
    >>> gloo_setup({"ranks": 2, "repeats": 5, "cpu_count": 16}, {"rank_cores": [0, 1]})[:60]
    "gloo's two ranks ran on any of 16 cores, not bound like MPIC"
    >>> gloo_setup({"ranks": 2, "rank_cores": [[0, 1], [0, 1]], "repeats": 15}, {"rank_cores": [0, 1]})[:60]
    'gloo runs helper threads (its TCP loop among them) beside ea'
    """
    ranks = _WORDS.get(gloo.get("ranks", 2), str(gloo.get("ranks", 2)))
    cores = gloo.get("rank_cores")
    calls = f"{gloo.get('repeats')} calls a size, " if gloo.get("repeats") else ""
    mine = sorted(mpi.get("rank_cores") or [])
    if cores and all(isinstance(c, list) for c in cores) and all(sorted(c) == mine for c in cores):
        k = _WORDS.get(len(mine), str(len(mine)))
        return (f"gloo runs helper threads (its TCP loop among them) beside each rank's main thread, so its {ranks} "
                f"processes were given the same {k} cores as MPICH's single-threaded ranks, every thread free to run "
                f"on either; {calls}in a run of their own, not in turns with MPI.")
    if cores and sorted(cores) == sorted(mpi.get("rank_cores") or []):
        where = f"on the same {_WORDS.get(len(set(cores)), str(len(set(cores))))} cores as MPICH's" + (
            ", one each" if len(set(cores)) == len(cores) else "")
    else:
        where = f"on any of {gloo.get('cpu_count', 'the machine')} cores, not bound like MPICH's"
    return f"gloo's {ranks} ranks ran {where}, {calls}in a run of their own, not in turns with MPI."


def gloo_ratio(size: float, gloo: tuple[float, float], mpi: tuple[float, float], who: str = "gloo's all-reduce"
               ) -> str:
    """gloo's time over MPICH's at one ``size``, as the range the middle halves of both's calls allow (``gloo``,
    ``mpi``: first and third quartile, seconds): no finer than that spread.

    >>> gloo_ratio(2**26, (38.2e-3, 45.2e-3), (39.9e-3, 47.9e-3))
    "at 64 MiB gloo's all-reduce took 0.80 to 1.1 times MPICH's time"
    """
    lo, hi = gloo[0] / mpi[1], gloo[1] / mpi[0]
    return f"at {format_bytes(size)} {who} took {_ratio_range(lo, hi)} times MPICH's time"


def slice_bound_sizes(sizes: Sequence[float], low: Sequence[float], median: Sequence[float], high: Sequence[float],
                      spread: float = 1.0) -> list[float]:
    """The sizes at which the middle half of the calls (``low`` to ``high``, s) spans more than ``spread`` times the
    ``median``: time-slice-bound by the chapter's spread check, where no single ratio describes the calls (the rule
    :func:`gloo_spread` reads and the gloo figure marks).

    >>> slice_bound_sizes([1024, 2**20, 2**24], [2.3e-4, 2e-3, 11.9e-3], [3.4e-3, 3.9e-3, 13.4e-3], [3.8e-3, 6.5e-3, 17.1e-3])
    [1024, 1048576]
    """
    return [x for x, lo, m, hi in zip(sizes, low, median, high) if hi - lo > spread * m]


def slice_wait_sizes(sizes: Sequence[float], fastest: Sequence[float], median: Sequence[float],
                     marked: Sequence[float], time_slice: float, about: float = 0.9) -> list[float]:
    """The sizes :func:`slice_waits_missed` names: not in ``marked``, the fastest call under one ``time_slice`` and
    the median at least ``about`` of a slice above it.

    >>> slice_wait_sizes([2**18, 2**24], [4e-4, 8.2e-3], [3.66e-3, 13.4e-3], [], 3.35e-3)
    [262144]
    """
    return [x for x, f, m in zip(sizes, fastest, median)
            if x not in marked and f < time_slice and m - f >= about * time_slice]


def slice_waits_missed(sizes: Sequence[float], fastest: Sequence[float], median: Sequence[float],
                       marked: Sequence[float], time_slice: float, about: float = 0.9) -> str:
    """The sizes the spread check (:func:`slice_bound_sizes`, listed in ``marked``) passes although most calls
    waited out a time slice: the fastest call (``fastest``, s) is shorter than one ``time_slice`` (s) and the median
    exceeds it by about a slice (at least ``about`` of one). The spread check only sees a split near the median; when
    most calls wait, the middle half is narrow and the median itself is the wait. A sentence, or ``""``.

    >>> print(slice_waits_missed([2**18, 2**20, 2**22, 2**24], [4e-4, 6e-4, 2.1e-3, 8.2e-3],
    ...                          [3.66e-3, 3.9e-3, 5.54e-3, 13.4e-3], [2**20], 3.35e-3))  # doctest: +NORMALIZE_WHITESPACE
    The spread check passes 256 KiB and 4 MiB although there the fastest call took less than a time slice (3.4 ms)
    and the median about one slice more: most calls waited out a slice, so those sizes rank nothing either.
    """
    missed = slice_wait_sizes(sizes, fastest, median, marked, time_slice, about)
    if not missed:
        return ""
    return (f"The spread check passes {_and([format_bytes(x) for x in missed])} although there the fastest call took "
            f"less than a time slice ({time_text(time_slice)}) and the median about one slice more: most calls waited "
            f"out a slice, so {'those sizes rank' if len(missed) > 1 else 'that size ranks'} nothing either.")


def gloo_unranked(sizes: Sequence[float], fastest: Sequence[float], low: Sequence[float], median: Sequence[float],
                  high: Sequence[float], mpi_median: Sequence[float], time_slice: float, strict: float = 0.5,
                  tolerance: float = 0.1, part: str = "all") -> str:
    """Whether gloo's largest messages rank it against MPICH, read from the stored calls: from the size up where
    gloo's middle half spans at most ``strict`` times its median, its median over MPICH's median, then why that
    ratio does or does not rank the two. It does not where gloo's middle half spans more than one ``time_slice``
    (s; the median of its first time-slice-bound size), or where its fastest call (``fastest``, s) comes within
    ``tolerance`` of MPICH's median: then the spread is waits for a core, not gloo's cost. ``part``: ``"ratio"``,
    ``"wide"`` or ``"fastest"`` for one sentence of the three (``"all"``).

    >>> print(gloo_unranked([2**24, 2**26], [8.2e-3, 51.6e-3], [11.9e-3, 55.6e-3], [13.4e-3, 58.4e-3],
    ...                     [17.2e-3, 62.8e-3], [8.27e-3, 48.2e-3], 3.4e-3))  # doctest: +NORMALIZE_WHITESPACE
    From 16 MiB up gloo's median call took 1.2 to 1.6 times MPICH's median, but this run cannot rank the two
    there. The middle half of gloo's calls spans 5.3 ms at 16 MiB and 7.2 ms at 64 MiB, wider than the 3.4 ms a
    call waited out as one time slice. The fastest gloo call at 16 MiB, 8.2 ms, took 0.99 times MPICH's median:
    gloo's spread is waits for a core, not its cost.
    """
    idx = [i for i in range(len(sizes)) if high[i] - low[i] <= strict * median[i]]
    idx = [i for i in idx if all(j in idx for j in range(i, len(sizes)))]
    if not idx:
        return ""
    ratios = [median[i] / mpi_median[i] for i in idx]
    where = f"From {format_bytes(sizes[idx[0]])} up" if len(idx) > 1 else f"At {format_bytes(sizes[idx[0]])}"
    lo, hi = figures(min(ratios), 2), figures(max(ratios), 2)  # a range reads upwards, whichever size gave which
    first = f"{where} gloo's median call took {lo}" + (f" to {hi}" if hi != lo else "") + " times MPICH's median"
    wide = [i for i in idx if high[i] - low[i] > time_slice]
    near = [i for i in idx if fastest[i] <= (1 + tolerance) * mpi_median[i]]
    if part not in ("all", "ratio", "wide", "fastest"):
        raise ValueError(f"part must be 'all', 'ratio', 'wide' or 'fastest', got {part!r}")
    if not wide and not near:
        out = {"ratio": first + f", and there gloo's middle half spans less than the {time_text(time_slice)} a call "
               "waited out as one time slice, so under this placement the ratio ranks them.", "wide": "", "fastest": ""}
    else:
        out = {"ratio": first + ", but this run cannot rank the two there.", "wide": "", "fastest": ""}
        if wide:
            out["wide"] = ("The middle half of gloo's calls spans " + _and([f"{time_text(high[i] - low[i])} at "
                                                                f"{format_bytes(sizes[i])}" for i in wide])
                           + f", wider than the {time_text(time_slice)} a call waited out as one time slice.")
        if near:
            i = near[0]
            out["fastest"] = (f"The fastest gloo call at {format_bytes(sizes[i])}, {time_text(fastest[i])}, took "
                              f"{fastest[i] / mpi_median[i]:.2f} times MPICH's median: gloo's spread is waits for a "
                              "core, not its cost.")
    if part != "all":
        return out[part]
    return " ".join(t for t in (out["ratio"], out["wide"], out["fastest"]) if t)


def gloo_spread(sizes: Sequence[float], low: Sequence[float], median: Sequence[float], high: Sequence[float],
                mpi_low: Sequence[float], mpi_high: Sequence[float], spread: float = 1.0, part: str = "bound",
                strict: float | None = None) -> str:
    """gloo's timings read with the chapter's spread check (:func:`commlib.lab.fit.suspects`): the sizes whose
    middle half of the calls (``low`` to ``high``, s) spans more than ``spread`` times the ``median`` are
    time-slice-bound, and only ranges, paired with MPICH's quartiles (``mpi_low``, ``mpi_high``) at the same
    ``sizes``, are quoted for them. ``part="bound"``: which sizes, why, and the range at the smallest;
    ``part="clean"``: the range over the sizes from which every one passes the check.

    ``strict`` (a fraction below ``spread``): for ``part="clean"``, quote the range only from the size from which
    every middle half spans at most ``strict`` times the median, where a scheduler slice is small against the
    call; ``part="quantum"``: what the sizes that pass the check but not ``strict`` show, their middle half held
    against one time slice as gloo's calls waited it out (the median at the first time-slice-bound size).

    >>> args = ([2**10, 2**20, 2**24, 2**26], [2.3e-4, 2e-3, 11.9e-3, 55.6e-3], [3.4e-3, 3.9e-3, 13.4e-3, 58.4e-3],
    ...         [3.8e-3, 6.5e-3, 17.1e-3, 62.8e-3], [8.5e-6, 3.6e-4, 8e-3, 45e-3], [9e-6, 4e-4, 9e-3, 48e-3])
    >>> print(gloo_spread(*args))  # doctest: +NORMALIZE_WHITESPACE
    In the reference run, at two sizes up to 1 MiB, the middle half of gloo's calls spans more than 100 % of the
    median: a call either ended at once or waited out a time slice, as gloo's two processes and their helper
    threads share the two cores the lab pins them to. By the chapter's own check these sizes are
    time-slice-bound, an effect of that pinning, so no single ratio describes them and none ranks the two
    libraries: at the smallest, gloo's all-reduce took 26 to 450 times MPICH's time.
    >>> print(gloo_spread(*args, part="clean"))  # doctest: +NORMALIZE_WHITESPACE
    from 16 MiB up, where gloo's calls pass the check, gloo took 1.16 to 2.14 times MPICH's time, the range
    narrowing with the size to 1.16 to 1.40 times at the largest
    >>> print(gloo_spread(*args, part="clean", strict=0.5))  # doctest: +NORMALIZE_WHITESPACE
    from 16 MiB up, where the middle half of gloo's calls spans at most half the median, gloo took 1.16 to 2.14
    times MPICH's time, the range narrowing with the size to 1.16 to 1.40 times at the largest
    >>> print(gloo_spread(*args, part="quantum", strict=0.2))  # doctest: +NORMALIZE_WHITESPACE
    At 16 MiB gloo's calls pass the check, but their middle half spans 5.2 ms, about two scheduler quanta: a
    call at 1 KiB that waited out a time slice took 3.4 ms (the median there). The ratio is quoted only where the
    middle half spans at most a fifth of the median, a slice small against the call.
    """
    sizes = list(sizes)
    if strict is not None and not 0 < strict < spread:
        raise ValueError(f"strict must be between 0 and spread ({spread}), got {strict!r}")
    marked = slice_bound_sizes(sizes, low, median, high, spread)
    bad = [i for i in range(len(sizes)) if sizes[i] in marked]
    if part == "quantum":
        if strict is None:
            raise ValueError("part='quantum' needs strict")
        loose = [i for i in range(len(sizes)) if i not in bad and high[i] - low[i] > strict * median[i]]
        clean = next((i for i in range(len(sizes)) if all(j not in bad for j in range(i, len(sizes)))), None)
        between = [i for i in loose if clean is not None and i >= clean]
        if not between or not bad:
            return ""
        quantum = median[bad[0]]
        words = []
        for i in between:
            n = (high[i] - low[i]) / quantum
            words.append((format_bytes(sizes[i]), time_text(high[i] - low[i]),
                          "about one scheduler quantum" if 0.5 <= n < 1.5 else f"about {about(n)} scheduler quanta"
                          if n >= 1.5 else "a fraction of a scheduler quantum"))
        at = _and([w[0] for w in words])
        spans = _and([w[1] for w in words])
        kinds = sorted({w[2] for w in words})
        return (f"At {at} gloo's calls pass the check, but their middle half spans {spans}, "
                + (kinds[0] if len(kinds) == 1 else "each " + _and(kinds))
                + f": a call at {format_bytes(sizes[bad[0]])} that waited out a time slice took {time_text(quantum)} "
                f"(the median there). The ratio is quoted only where the middle half spans at most "
                f"{_share_words(strict)} the median, a slice small against the call.")
    if part == "clean" and strict is not None:
        passes = [i for i in range(len(sizes)) if high[i] - low[i] <= strict * median[i]]
        bad = [i for i in range(len(sizes)) if i not in passes]
    clean_from = next((i for i in range(len(sizes)) if all(j not in bad for j in range(i, len(sizes)))), None)
    if part == "clean":
        if clean_from is None:
            return "at no size from which gloo's calls pass the check"
        idx = range(clean_from, len(sizes))
        lo = min(low[i] / mpi_high[i] for i in idx)
        hi = max(high[i] / mpi_low[i] for i in idx)
        where = (f"from {format_bytes(sizes[clean_from])} up" if clean_from < len(sizes) - 1
                 else f"at {format_bytes(sizes[-1])}")
        def span(a: float, b: float) -> str:  # both ends to two decimals: one rounding for every end quoted
            return f"{a:.2f} to {b:.2f}"
        check = (f"where the middle half of gloo's calls spans at most {_share_words(strict)} the median"
                 if strict is not None else "where gloo's calls pass the check")
        first = f"{where}, {check}, gloo took {span(lo, hi)} times MPICH's time"
        last = span(low[-1] / mpi_high[-1], high[-1] / mpi_low[-1])
        if clean_from == len(sizes) - 1 or last == span(lo, hi):
            return first
        return first + f", the range narrowing with the size to {last} times at the largest"
    if part != "bound":
        raise ValueError(f"part must be 'bound' or 'clean', got {part!r}")
    if not bad:
        return (f"At every size the middle half of gloo's calls spans at most {100 * spread:.0f} % of the median: "
                "no size is time-slice-bound by the chapter's own check.")
    i = bad[0]
    k = len(bad)
    named = (f"at {format_bytes(sizes[i])}" if k == 1 else
             f"at {_WORDS.get(k, str(k))} sizes up to {format_bytes(sizes[bad[-1]])}")
    return (f"In the reference run, {named}, the middle half of gloo's calls spans more than "
            f"{100 * spread:.0f} % of the median: a call either ended at once or waited out a time slice, as gloo's "
            "two processes and their helper threads share the two cores the lab pins them to. By the chapter's own "
            "check " + ("this size is" if k == 1 else "these sizes are") + " time-slice-bound, an effect of that "
            "pinning, so no single ratio describes " + ("it" if k == 1 else "them") + " and none ranks the two "
            "libraries: at the smallest, gloo's all-reduce took "
            f"{_ratio_range(low[i] / mpi_high[i], high[i] / mpi_low[i])} times MPICH's time.")


def _share_words(fraction: float) -> str:
    """A fraction of a whole in words, to stand before "the ...": a short name where it has one, else a percentage.

    >>> _share_words(0.5), _share_words(0.2), _share_words(0.3)
    ('half', 'a fifth of', '30 % of')
    """
    names = {0.5: "half", 0.25: "a quarter of", 0.2: "a fifth of", 0.1: "a tenth of"}
    return names.get(fraction, f"{100 * fraction:.0f} % of")


def level_factors(sizes: Sequence[float], multiple: Sequence[float], single: Sequence[float],
                  at: Sequence[float], copies: Sequence[tuple[Sequence[float], Sequence[float]]] = ()) -> list[float]:
    """For each size in ``at``: the factor that takes the library's time at ``MPI_THREAD_MULTIPLE`` to its time at
    the better of the two thread levels, ``min(1, single / multiple)`` from a control run that timed both
    (``multiple``, ``single``: seconds at ``sizes``). ``copies``: further copies of the control, as
    ``(multiple, single)`` at the same sizes; SINGLE then counts only as fast as its slowest copy shows (the
    largest of the factors), so a size where one copy found SINGLE no faster keeps the factor 1.

    >>> level_factors([1024, 2048], [2e-5, 1e-3], [1e-5, 1.2e-3], [2048, 1024])
    [1.0, 0.5]
    >>> level_factors([1024, 2048], [2e-5, 1e-3], [1e-5, 0.9e-3], [1024, 2048], copies=[([2e-5, 1e-3], [1.2e-5, 1.1e-3])])
    [0.6, 1.0]
    """
    pairs = [(multiple, single), *copies]
    if any(not (len(sizes) == len(m) == len(s)) for m, s in pairs) or not sizes:
        raise ValueError("sizes, multiple and single (and each copy) must be non-empty and of the same length")
    ratio = {float(x): max(min(1.0, check_positive("single", s[k]) / check_positive("multiple", m[k]))
                           for m, s in pairs) for k, x in enumerate(sizes)}
    missing = [x for x in at if float(x) not in ratio]
    if missing:
        raise ValueError(f"at must be sizes the control measured; {format_bytes(missing[0])} is not")
    return [ratio[float(x)] for x in at]


def level_runs(sizes: Sequence[float], multiple: Sequence[float], single: Sequence[float],
               tolerance: float = 0.1, ranges: bool = True,
               copies: Sequence[tuple[Sequence[float], Sequence[float]]] = ()) -> str:
    """Where ``MPI_THREAD_SINGLE`` made the library's all-reduce faster, slower or neither (within ``tolerance``),
    as runs of neighbouring sizes (times in seconds at ``sizes``, ascending), each with its range of SINGLE's time
    over MULTIPLE's (``ranges``; without them, the runs alone). ``copies``: further copies of the control, as
    ``(multiple, single)`` at the same sizes: a size is called faster, slower or within the tolerance only where
    every copy says so, else "the copies disagree", and each range spans all copies.

    >>> level_runs([2**10, 2**14, 2**20, 2**26], [1e-5, 2e-5, 1e-3, 0.05], [5e-6, 1.1e-5, 2.2e-3, 0.052])
    'faster from 1 KiB to 16 KiB (0.50 to 0.55 of its time), slower at 1 MiB (2.20), within 10 % at 64 MiB (1.04)'
    >>> level_runs([2**10, 2**26], [1e-5, 0.05], [5e-6, 0.06], copies=[([1e-5, 0.05], [6e-6, 0.049])])
    'faster at 1 KiB (0.50 to 0.60 of its time), at 64 MiB the copies disagree (0.98 to 1.20)'
    """
    pairs = [(multiple, single), *copies]
    if any(not (len(sizes) == len(m) == len(s)) for m, s in pairs) or not sizes:
        raise ValueError("sizes, multiple and single (and each copy) must be non-empty and of the same length")
    ratios = [[check_positive("single", s[k]) / check_positive("multiple", m[k]) for m, s in pairs]
              for k in range(len(sizes))]

    def kind(q: float) -> str:
        return "faster" if q < 1 - tolerance else "slower" if q > 1 + tolerance else f"within {100 * tolerance:.0f} %"

    kinds = [kind(qs[0]) if len({kind(q) for q in qs}) == 1 else "the copies disagree" for qs in ratios]
    runs: list[list[int]] = []
    for k, kd in enumerate(kinds):
        if runs and kinds[runs[-1][-1]] == kd:
            runs[-1].append(k)
        else:
            runs.append([k])
    words = []
    for n, run in enumerate(runs):
        lo, hi = min(min(ratios[k]) for k in run), max(max(ratios[k]) for k in run)
        where = (f"at {format_bytes(sizes[run[0]])}" if len(run) == 1 else
                 f"from {format_bytes(sizes[run[0]])} to {format_bytes(sizes[run[-1]])}")
        if not ranges and len(run) > 1 and len(runs) > 1:  # fewer numbers: the ends of the ladder go without saying
            where = (f"up to {format_bytes(sizes[run[-1]])}" if run[0] == 0 else
                     f"above {format_bytes(sizes[run[0] - 1])}" if run[-1] == len(sizes) - 1 else where)
        spread = f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f} to {hi:.2f}"
        said = f"{where} the copies disagree" if kinds[run[0]] == "the copies disagree" else f"{kinds[run[0]]} {where}"
        words.append(said + (f" ({spread}{' of its time' if n == 0 else ''})" if ranges else ""))
    return ", ".join(words)


def thread_level_sentence(ranks: str, sizes: Sequence[float], multiple: Sequence[float], single: Sequence[float],
                          tolerance: float = 0.1,
                          copies: Sequence[tuple[Sequence[float], Sequence[float]]] = ()) -> str:
    """What the thread level did to the library's all-reduce in the control run that timed it on ``ranks`` (words)
    at ``MPI_THREAD_MULTIPLE`` and right after at ``MPI_THREAD_SINGLE`` (seconds at ``sizes``), size by size
    (:func:`level_runs`, with its further ``copies``).

    >>> print(thread_level_sentence("the same two ranks and cores", [2**10, 2**24], [4e-5, 9e-3], [2e-5, 6e-3]))
    ... # doctest: +NORMALIZE_WHITESPACE
    A control run timed the library's all-reduce again on the same two ranks and cores, at mpi4py's default
    thread level, `MPI_THREAD_MULTIPLE`, at which MPICH runs its generic algorithms, and right after at
    `MPI_THREAD_SINGLE`, at which it may use its shared-memory collectives. At SINGLE it was faster from 1 KiB
    to 16 MiB.
    """
    k = 1 + len(copies)
    made = "" if not copies else " It was made " + ("twice" if k == 2 else f"{_WORDS.get(k, str(k))} times") + \
        ", a minute apart."
    by = "" if not copies else " (faster or slower only where " + ("both copies agree)" if k == 2 else
                                                                     f"all {_WORDS.get(k, str(k))} copies agree)")
    return (f"A control run timed the library's all-reduce again on {ranks}, at mpi4py's default thread level, "
            "`MPI_THREAD_MULTIPLE`, at which MPICH runs its generic algorithms, and right after at "
            f"`MPI_THREAD_SINGLE`, at which it may use its shared-memory collectives.{made} At SINGLE{by} it was "
            f"{level_runs(sizes, multiple, single, tolerance, ranges=False, copies=copies)}.")


def control_machine_sentence(control: dict, reference: dict, sizes: Sequence[float],
                             reference_times: Sequence[float], control_times: Sequence[Sequence[float]]) -> str:
    """Where the thread-level control ran, against the reference run: ``control`` and ``reference``, the two
    machines' records (``machine_control.json``, ``machine.json``); ``reference_times`` and ``control_times`` (one
    sequence per copy of the control): the library's all-reduce at ``MPI_THREAD_MULTIPLE`` (seconds at ``sizes``).

    >>> control_machine_sentence({"cpu_count": 16, "load_average_before": 2.4}, {"load_average_before": 0.2},
    ...                          [1, 2], [2.0, 4.0], [[1.2, 3.8]])[-99:]
    "so the chapter uses only its ratio of SINGLE to MULTIPLE, applied to the reference run's own times."
    """
    if any(not (len(sizes) == len(reference_times) == len(c)) for c in control_times) or not sizes \
            or not control_times:
        raise ValueError("sizes, reference_times and each copy's control_times must be non-empty and of one length")
    q = [check_positive("control_times", c) / check_positive("reference_times", r)
         for copy in control_times for r, c in zip(reference_times, copy)]
    load = control.get("load_average_before")
    ref_load = reference.get("load_average_before")
    loads = ("" if load is None or ref_load is None else
             f"; its load average was {load:.1f} as it began, from that session's own earlier runs, against "
             f"{ref_load:.1f} for the reference run")
    return (f"The control ran in a separate session on another machine of the same kind ({control['cpu_count']} "
            f"virtual CPUs, the same MPICH and mpi4py), not together with the reference run{loads}. Its times at "
            f"MULTIPLE were {_ratio_range(min(q), max(q))} of the reference run's, size by size, so the chapter uses "
            "only its ratio of SINGLE to MULTIPLE, applied to the reference run's own times.")


def level_takeaway(sizes: Sequence[float], multiple: Sequence[Sequence[float]], single: Sequence[Sequence[float]],
                   hi: float, tolerance: float = 0.1) -> str:
    """The thread-level lesson in a line: what `MPI_THREAD_SINGLE` did to the small-message time (up to ``hi``)
    and over the first run of sizes where every copy of the control found it slower by more than ``tolerance``
    (``multiple``, ``single``: one sequence per copy, seconds at ``sizes``).

    >>> level_takeaway([1, 2, 4, 8], [[2.0, 2.0, 2.0, 2.0]], [[1.0, 1.1, 3.0, 4.2]], hi=2)[:75]
    'at `MPI_THREAD_SINGLE` the two-rank all-reduce took about half the time for'
    """
    q = [[check_positive("single", s[k]) / check_positive("multiple", m[k]) for m, s in zip(multiple, single)]
         for k in range(len(sizes))]
    small = [r for k, x in enumerate(sizes) if x <= hi for r in q[k]]
    if not small:
        raise ValueError("no size at or below hi")
    kept = (min(small) + max(small)) / 2
    kept_words = "about half the time" if 0.4 <= kept <= 0.6 else f"about {100 * kept:.0f} % of the time"
    text = f"at `MPI_THREAD_SINGLE` the two-rank all-reduce took {kept_words} for small messages"
    slow = level_slow_clause(sizes, multiple, single, tolerance)
    return text + (f" but {slow}" if slow else "")


def level_slow_clause(sizes: Sequence[float], multiple: Sequence[Sequence[float]],
                      single: Sequence[Sequence[float]], tolerance: float = 0.1) -> str:
    """How much longer `MPI_THREAD_SINGLE` took over the first run of sizes where every copy of the control found it
    slower by more than ``tolerance`` (``multiple``, ``single``: one sequence per copy, seconds at ``sizes``);
    empty where no size was.

    >>> level_slow_clause([1, 2, 4, 8], [[2.0, 2.0, 2.0, 2.0]], [[1.0, 1.1, 3.0, 4.2]])
    '1.5 to 2.1 times as long from 4 B to 8 B'
    """
    q = [[check_positive("single", s[k]) / check_positive("multiple", m[k]) for m, s in zip(multiple, single)]
         for k in range(len(sizes))]
    slow = [k for k in range(len(sizes)) if all(r > 1 + tolerance for r in q[k])]
    if not slow:
        return ""
    run = [slow[0]]
    while run[-1] + 1 in slow:
        run.append(run[-1] + 1)
    lo_r, hi_r = min(min(q[k]) for k in run), max(max(q[k]) for k in run)
    return (f"{_ratio_range(lo_r, hi_r)} times as long from {format_bytes(sizes[run[0]])} to "
            f"{format_bytes(sizes[run[-1]])}")


def alpha_level_sentence(sizes: Sequence[float], multiple: Sequence[Sequence[float]],
                         single: Sequence[Sequence[float]], hi: float, part: str = "sentence",
                         control_at: str = "its own section, below") -> str:
    """What the thread level does to the small-message time: ``multiple`` and ``single``, one sequence per copy of
    the thread-level control (seconds at ``sizes``), read from the smallest size up to ``hi``. ``part``:
    ``"sentence"`` (after α), ``"limit"`` (an item of :func:`limits_sentence`) or ``"range"`` (the range alone).
    ``control_at``: where the page describes that control, as the sentence points to it (a chapter may pass a link).

    >>> alpha_level_sentence([1, 2, 4], [[2.0, 2.0, 2.0]], [[1.0, 1.2, 3.0]], hi=2, part="range")
    '0.50 to 0.60'
    """
    if part not in ("sentence", "limit", "range"):
        raise ValueError(f"part must be 'sentence', 'limit' or 'range', got {part!r}")
    if len(multiple) != len(single) or not multiple:
        raise ValueError("multiple and single must give the same, non-zero number of copies")
    q = [check_positive("single", s[k]) / check_positive("multiple", m[k])
         for m, s in zip(multiple, single) for k, x in enumerate(sizes) if x <= hi]
    if not q:
        raise ValueError("no size at or below hi")
    lo_q, hi_q = min(q), max(q)
    span = f"{lo_q:.2f} to {hi_q:.2f}"
    if part == "range":
        return span
    saved = 1 - (lo_q + hi_q) / 2
    share = "about half" if 0.4 <= saved <= 0.6 else f"about {100 * saved:.0f} %"
    kept = "about half" if 0.4 <= 1 - saved <= 0.6 else f"about {100 * (1 - saved):.0f} % of"
    where = f"from {format_bytes(min(sizes))} to {format_bytes(hi)}"
    copies = "both copies" if len(multiple) == 2 else f"all {_WORDS.get(len(multiple), str(len(multiple)))} copies"
    if part == "limit":
        return (f"for small messages on two ranks, mpi4py's thread level: at `MPI_THREAD_SINGLE` the all-reduce took "
                f"{kept} the time (the thread-level control, on another machine of the same kind)")
    if hi_q >= 1:
        return (f"This α is MPICH's at `MPI_THREAD_MULTIPLE`, as mpi4py starts it; in the thread-level control "
                f"({control_at}) the all-reduce at `MPI_THREAD_SINGLE` took {span} of its time {where}.")
    return (f"This α is MPICH's at `MPI_THREAD_MULTIPLE`, as mpi4py starts it: in the thread-level control ("
            f"{control_at}; another machine of the same kind) the same two-rank all-reduce took {span} of its time "
            f"{where} at `MPI_THREAD_SINGLE`, in {copies}, so {share} of the small-message time here comes with "
            "mpi4py's thread level.")


def replicate_sentence(sizes: Sequence[float], reference: Sequence[float], copies: Sequence[Sequence[float]],
                       rise: tuple[float, float], step: tuple[float, float], part: str = "story",
                       controlled: bool | None = None) -> str:
    """Whether other runs of the same measurement (``copies``: seconds at ``sizes``, one sequence per run) showed
    what the reference run (``reference``) did: a rise in cost per byte over the doublings from ``rise[0]`` to
    ``rise[1]``, and the step from ``step[0]`` to ``step[1]`` (sizes in bytes, each a doubling). A doubling's
    per-byte factor is the time ratio over 2. ``part``: ``"story"`` (a sentence), ``"scope"`` (words for the
    rise, beside it elsewhere), ``"step"`` (a sentence on the step).

    >>> replicate_sentence([1, 2, 4, 8], [1.0, 2.4, 5.8, 20.0], [[1.0, 1.9, 3.9, 15.0]], (1, 4), (4, 8))[:60]
    "The rise from 1 B to 4 B is the reference run's: one later r"
    """
    if part not in ("story", "scope", "step"):
        raise ValueError(f"part must be 'story', 'scope' or 'step', got {part!r}")
    sizes = [float(x) for x in sizes]
    if any(len(c) != len(sizes) for c in (reference, *copies)) or not copies:
        raise ValueError("reference and each copy must give a time at every size, and there must be a copy")

    def factors(times: Sequence[float], a: float, b: float) -> list[float]:
        i, j = sizes.index(float(a)), sizes.index(float(b))
        return [check_positive("times", times[k + 1]) / check_positive("times", times[k]) / 2 for k in range(i, j)]

    cop_rise = [f for c in copies for f in factors(c, *rise)]
    cop_step = [f for c in copies for f in factors(c, *step)]
    ref_step = factors(reference, *step)
    n = len(copies)
    runs = _WORDS.get(n, str(n)) + (" later run" if n == 1 else " later runs")
    did = all(f > 1 for f in cop_rise)
    rise_words = f"{format_bytes(rise[0])} to {format_bytes(rise[1])}"
    untested = not did and controlled is False  # the later runs timed no copy control: the cause stays untested
    if part == "scope":
        return (f"in the reference run only, as {runs} of the same measurement " + ("showed it too" if did else
                "did not show it") + (" and timed no copy control" if untested else ""))
    head = (f"The rise from {rise_words} is the reference run's: {runs} of the same measurement (the thread-level "
            "control's runs at mpi4py's default level, on another machine of the same kind) ")
    body = (f"showed it too, at {ratio_range(cop_rise)} per doubling." if did else
            f"did not show it: per byte, each doubling there cost {ratio_range(cop_rise)} times as much."
            + (f" {'It' if n == 1 else 'They'} timed no copy control, so nothing tests the rise's cause outside the "
               "reference run." if untested else ""))
    stepped = all(f > 1 for f in cop_step)
    tail = (f"The step from {format_bytes(step[0])} to {format_bytes(step[1])} they showed too, each byte "
            f"{ratio_range(cop_step)} times dearer (here {ratio_range(ref_step)})." if stepped else
            f"The step from {format_bytes(step[0])} to {format_bytes(step[1])} they did not show "
            f"({ratio_range(cop_step)} per byte).")
    return head + body if part == "story" else tail


def spread_sentence(alphas: Sequence[float], bandwidths: Sequence[float], sizes: Sequence[float],
                    reference: Sequence[float], copies: Sequence[Sequence[float]]) -> str:
    """How far runs of the same measurement differ: the single line's ``alphas`` (s) and ``bandwidths`` (B/s),
    one per run (the reference run first), and the largest factor between the reference run's times and any
    copy's (seconds at ``sizes``), with the size where it falls.

    >>> spread_sentence([4.5e-6, 3.3e-6], [2.6e9, 3.3e9], [1, 2], [2.0, 4.0], [[1.5, 2.0]])[:60]
    'Runs of the same measurement differ by more than its sweeps '
    """
    worst = max(max(r / c, c / r) for copy in copies for r, c in zip(reference, copy))
    return ("Runs of the same measurement differ by more than its sweeps do: the thread-level control's runs at "
            "mpi4py's default level, on another machine of the same kind, give the single line "
            f"an α of {' to '.join(dict.fromkeys(time_text(a) for a in (min(alphas), max(alphas))))} and "
            f"a bandwidth term of {' to '.join(dict.fromkeys(rate_text(b) for b in (min(bandwidths), max(bandwidths))))} across "
            "them and this run, and their times differ from this run's by up "
            f"to {worst:.1f}× at some sizes.")


def busbw_runs_sentence(op: str, size: float, busbws: Sequence[float]) -> str:
    """Each run's bus bandwidth (bytes/s) for ``op`` at the largest ``size`` (bytes), this run first and then the
    thread-level control's runs at the same level, in the figures the chapter's headline rounds into a range.

    >>> print(busbw_runs_sentence("all-reduce", 2**26, [1.398e9, 1.58e9, 1.36e9]))
    ... # doctest: +NORMALIZE_WHITESPACE
    At the largest size, 64 MiB, all-reduce's bus bandwidth was 1.40 GB/s in this run and 1.58 and 1.36 GB/s in
    the control's runs at the same level, measured, with no fit.
    """
    if not busbws:
        raise ValueError("busbws must hold this run's bus bandwidth, got none")
    check_positive("size", size)
    for b in busbws:
        check_positive("busbws", b)
    rest = [f"{b / 1e9:.2f}" for b in busbws[1:]]
    others = ("" if not rest else " and " + (rest[0] if len(rest) == 1 else ", ".join(rest[:-1]) + " and " + rest[-1])
              + f" GB/s in the control's {'run' if len(rest) == 1 else 'runs'} at the same level")
    return (f"At the largest size, {format_bytes(size)}, {op}'s bus bandwidth was {rate_text(busbws[0])} in this run"
            f"{others}, measured, with no fit.")


def ring_level_sentence(control: str | None, sizes: Sequence[float] = (), ring_times: Sequence[float] = (),
                        lib_times: Sequence[float] = (), factors: Sequence[float] = (),
                        ring_pages: Sequence[float] | None = None, lib_pages: Sequence[float] | None = None,
                        jump: float = FAULT_JUMP, elsewhere: str = "", shared: str = "",
                        control_at: str = "its own section, below") -> str:
    """The ring against the library at its better thread level. ``control``: :func:`thread_level_sentence` for
    the control run, or None where the stored run has none (the sentence then says what that leaves open).
    ``lib_times`` (s, at MPI_THREAD_MULTIPLE) times ``factors`` (:func:`level_factors`) is the library at the
    better level; they are compared at the largest size at which neither mapped in fresh pages, as in
    :func:`ring_vs_library`. ``elsewhere``: where there is no control on these ranks, what one on other ranks
    found (:func:`level_runs`). ``shared``: what the shared-core control found at SINGLE, in words, said where the
    run has no control of its own. ``control_at``: where the page
    describes the control on other ranks, as the sentence points to it (a chapter may pass a link).

    >>> ring_level_sentence(None)[-40:]
    "would have kept or lost the ring's lead."
    """
    if control is None:
        return ("MPICH ran its generic all-reduce here, at mpi4py's `MPI_THREAD_MULTIPLE` (the dropdown on how MPICH "
                "chooses, above). On these four ranks sharing two cores the run has no control at "
                "`MPI_THREAD_SINGLE` over its sizes, where MPICH may use its shared-memory all-reduce, so it does not "
                "say whether the library at its other thread level would have kept or lost the ring's lead"
                + (f" (the shared-core control timed only the library's small messages, on another machine: {shared})"
                   if shared else "") + "."
                + (f" On two ranks it has one ({control_at}): there, at SINGLE, the library's all-reduce was "
                   f"{elsewhere}." if elsewhere else ""))
    sizes = list(sizes)
    if not (len(sizes) == len(ring_times) == len(lib_times) == len(factors)) or not sizes:
        raise ValueError("sizes, ring_times, lib_times and factors must be non-empty and of the same length")
    rp = list(ring_pages) if ring_pages is not None else [0.0] * len(sizes)
    lp = list(lib_pages) if lib_pages is not None else [0.0] * len(sizes)
    clean = [i for i in range(len(sizes)) if rp[i] < jump and lp[i] < jump]
    i = clean[-1] if clean else len(sizes) - 1
    q = check_positive("ring_times", ring_times[i]) / (check_positive("lib_times", lib_times[i]) * factors[i])
    word = "faster" if q < 1 - 0.05 else "slower" if q > 1 + 0.05 else "about as fast"
    return (control + " Against the library at the better of the two levels (its time in this run, times that ratio "
            f"where SINGLE was faster), the ring took {q:.2f} of its time at {format_bytes(sizes[i])}: {word}.")


def gloo_level_sentence(control: str | None, clean: str = "", same: bool = False, small: str = "") -> str:
    """gloo against MPICH at its better thread level, once :func:`thread_level_sentence` has described the control
    (``control``; None where the stored run has none): ``clean``, :func:`gloo_spread`'s ``part="clean"`` read
    against MPICH's quartiles times :func:`level_factors`, or, with ``same``, that this changed none of them.
    ``small``: gloo's range at the smallest size against MPICH at its better level there (words), where SINGLE
    was faster.

    >>> gloo_level_sentence(None)[:40]
    'MPICH ran its generic all-reduce here to'
    """
    if control is None:
        return ("MPICH ran its generic all-reduce here too, at mpi4py's thread level, so these ratios do not set gloo "
                "against MPICH at its best.")
    tail = (f" At the smallest size SINGLE was the faster level, so against MPICH at its better level there gloo took "
            f"{small} times MPICH's time." if small else "")
    if same:  # MULTIPLE was the better level wherever the ratios are quoted
        return ("At the sizes of the ratios for the largest messages SINGLE was not faster in both copies of the "
                "control, so those ratios already set gloo against MPICH at the better of its two thread levels."
                + tail)
    return ("Against MPICH at the better of its two thread levels (its quartiles in this run, times SINGLE's time "
            f"over MULTIPLE's where SINGLE was faster in every copy), {clean}, paired the same way." + tail)


def vm_note(machine: dict) -> str:
    """On a virtual machine, what its core share cannot see (:func:`is_virtual`); empty elsewhere.

    >>> vm_note({"cpu_model": "Intel(R) Xeon(R) Processor"})[:41]
    'This machine is a virtual one: the share '
    """
    if not is_virtual(machine):
        return ""
    text = ("This machine is a virtual one: the share sees only its own cores, and other guests of the same host, "
            "which share its last-level cache and its memory, are invisible to it.")
    if machine.get("thread_siblings") is None:     # no map of which virtual CPUs are threads of one physical core
        text += (" Its cores are virtual CPUs (a core, in this chapter, is one virtual CPU), and the run did not "
                 "record which of them are threads of one physical core: \"a core each\" means a virtual CPU each, "
                 "two of which may share a physical core.")
    return text


def shares_sentence(share4: float, share2: float, tolerance: float = 0.05) -> str:
    """The four-rank and two-rank runs' shares of their cores (``share4``, ``share2``), and what that leaves open.

    >>> shares_sentence(1.0, 1.0)[-88:]  # doctest: +ELLIPSIS
    '...e same, and load the shares cannot see (on the shared cache or memory) can still differ.'
    """
    text = (f"The two runs were made at different moments; the ranks got {100 * min(share4, 1):.0f} % of their cores' "
            f"time in the four-rank run and {100 * min(share2, 1):.0f} % in the two-rank one")
    if abs(share4 - share2) <= tolerance:
        return (text + ": their shares of the cores were the same, and load the shares cannot see (on the shared "
                "cache or memory) can still differ.")
    return text + ": the loads differed."


def ranks_busbw_sentence(two: float, free: float | None, shared: float, size: float,
                         tolerance: float = 0.15, cores: tuple[int, int, int] | None = None,
                         part: str = "both") -> str:
    """Whether all-reduce's bus bandwidth at ``size`` falls with the number of ranks or with sharing cores:
    ``two`` on two ranks, ``free`` on four with a core each (None: not run), ``shared`` on four sharing two cores
    (bytes/s). A ratio within ``tolerance`` of 1 is "about the same".

    ``cores``: the cores each run had (two ranks, four with a core each, four sharing). busbw is counted per rank,
    so with half a core per rank it would fall to half were the cores' time the limit; given the cores, the
    sentence holds the shared run against that share and against its controls per core (all ranks' busbw over
    the cores they ran on), and says whether sharing cost anything beyond each rank's smaller share of a core.
    ``part``: ``"share"`` (the ratios against each rank's share) or ``"per_core"`` (the bus bytes per core and the
    verdict) for one of the two sentences alone, ``"both"`` for both.

    >>> ranks_busbw_sentence(1.70e9, 1.53e9, 0.95e9, 2**26)[:100]
    "At 64 MiB four ranks with a core each moved 0.90 of two ranks' bus bandwidth, four ranks sharing two"
    >>> print(ranks_busbw_sentence(1.398e9, 1.264e9, 0.865e9, 2**26, cores=(2, 4, 2)))
    ... # doctest: +NORMALIZE_WHITESPACE
    At 64 MiB four ranks with a core each moved 0.90 of two ranks' bus bandwidth, four ranks sharing two cores 0.62,
    against 0.50 had each rank's share of a core set it. Per core, the shared run moved 1.73 GB/s of bus bytes,
    against 1.40 GB/s with two ranks and 1.26 GB/s with four ranks with a core each: the bus bandwidth per rank
    falls when ranks share cores, hardly with their number, and by less than each rank's smaller share of a core;
    per core, the shared run moved no less than the other two. That holds for these three runs, made one after
    another, not as a rule: the run with a core per rank used two more virtual CPUs, which may share physical cores
    with the first two.
    """
    if cores is not None and free is not None:
        c2, cf, cs = (min(c, r) for c, r in zip(cores, (2, 4, 4)))
        limited = (cs / 4) / (c2 / 2)      # the shared run's busbw over two ranks', were the cores' time the limit
        per = [two * 2 / c2, free * 4 / cf, shared * 4 / cs]    # bus bytes per second per core
        f, s = free / two, shared / two
        if part not in ("both", "share", "per_core"):
            raise ValueError(f"part must be 'both', 'share' or 'per_core'; got {part!r}")
        share = (f"At {format_bytes(size)} four ranks with a core each moved {f:.2f} of two ranks' bus bandwidth, four "
                 f"ranks sharing two cores {s:.2f}, against {limited:.2f} had each rank's share of a core set it.")
        if part == "share":
            return share
        text = (f"Per core, the shared run moved {per[2] / 1e9:.2f} GB/s of bus bytes, against {per[0] / 1e9:.2f} "
                f"GB/s with two ranks and {per[1] / 1e9:.2f} GB/s with four ranks with a core each: ")
        text = text if part == "per_core" else share + " " + text
        number = ("hardly with their number" if abs(f - 1) <= tolerance else "and with their number")
        if s >= 1 - tolerance:
            return text + "neither the number of ranks nor sharing cores moved the bus bandwidth per rank much."
        if per[2] > (1 + tolerance) * max(per[:2]):
            return (text + f"the bus bandwidth per rank falls when ranks share cores, {number}, and by less than "
                    "each rank's smaller share of a core; per core, the shared run moved no less than the other two. "
                    "That holds for these three runs, made one after another, not as a rule: the run with a core per "
                    "rank used two more virtual CPUs, which may share physical cores with the first two.")
        if per[2] >= (1 - tolerance) * max(per[:2]):
            return (text + f"the bus bandwidth per rank falls when ranks share cores, {number}, by about each "
                    "rank's smaller share of a core; per core, sharing cost about nothing in this run.")
        return (text + f"the bus bandwidth per rank falls when ranks share cores, {number}, by more than each "
                "rank's smaller share of a core: per core, sharing cost bandwidth too.")
    if free is None:
        return (f"At {format_bytes(size)} four ranks sharing two cores moved {shared / two:.2f} of two ranks' bus "
                "bandwidth; without four ranks on a core each the run cannot tell the number of ranks from the "
                "sharing.")
    f, s = free / two, shared / two
    text = (f"At {format_bytes(size)} four ranks with a core each moved {f:.2f} of two ranks' bus bandwidth, four "
            f"ranks sharing two cores {s:.2f}: ")
    if abs(f - 1) <= tolerance and s < 1 - tolerance:
        return text + "the bus bandwidth falls when ranks share cores, hardly with their number."
    if f < 1 - tolerance and s < (1 - tolerance) * f:
        return text + "it falls with the number of ranks, and further when they share cores."
    if f < 1 - tolerance:
        return text + "it falls with the number of ranks, and sharing cores adds little."
    return text + "neither the number of ranks nor sharing cores moved it much."


def cache_until(sizes: Sequence[float], op_seconds: Sequence[float], copy_wall: Sequence[float],
                copy_cpu: Sequence[float] | None, lo: float, rise: float = RISE) -> tuple[float, float] | None:
    """The sizes from ``lo`` up over which, doubling after doubling, both the collective (``op_seconds``) and the
    copy control read at its footprint (``copy_wall``, ``copy_cpu``: rates at ``sizes``) got more than ``rise``
    times dearer per byte: ``(first, last)`` in bytes, or None.

    >>> cache_until([2**22, 2**23, 2**24, 2**25], [1, 2.4, 6.1, 19.8], [12.3e9, 8.5e9, 6.7e9, 6.5e9], None, 2**22)
    (4194304, 16777216)
    """
    start = next((i for i, x in enumerate(sizes) if x >= lo), None)
    if start is None:
        return None
    span = []
    for i in range(start, len(sizes) - 1):
        ok = (_rises(op_seconds, sizes, i) > rise and copy_wall[i] / copy_wall[i + 1] > rise
              and (copy_cpu is None or copy_cpu[i] / copy_cpu[i + 1] > rise))
        if ok:
            span.append(i)
        elif span:
            break
    return (sizes[span[0]], sizes[span[-1] + 1]) if span else None


def ring_vs_library(ring_alpha: float, lib_alpha: float, sizes: Sequence[float], ring_times: Sequence[float],
                    lib_times: Sequence[float], ring_pages: Sequence[float] | None = None,
                    lib_pages: Sequence[float] | None = None, part: str = "alpha", jump: float = FAULT_JUMP,
                    tolerance: float = RATE_TOLERANCE) -> str:
    """The point-to-point ring against the library's all-reduce on the same ranks, from two runs made apart.

    ``part="alpha"``: their fitted start-up cost per step (``ring_alpha``, ``lib_alpha``, s, each on its own
    algorithm's counts), with the likely cause of a larger one named as a suspect, not a finding.
    ``part="time"``: their times (``ring_times``, ``lib_times``, s, at ``sizes``) compared at the largest size at
    which neither mapped in fresh pages for ``jump`` of the message or more (``ring_pages``, ``lib_pages``: shares of
    the message, :func:`commlib.lab.runner.page_shares`), with the fresh pages at the largest size named as a
    measured difference; the two were timed in separate runs, and the sentence says so.

    >>> ring_vs_library(12e-6, 9.2e-6, [2**26], [81e-3], [106e-3])[:79]
    "Fitted per step on its own counts, the point-to-point ring's α is 12 µs against"
    >>> print(ring_vs_library(25e-6, 10e-6, [2**24, 2**26], [9.9e-3, 60e-3], [18.3e-3, 80e-3], [0, 0.03], [0, 0.5],
    ...                       part="time"))  # doctest: +NORMALIZE_WHITESPACE
    At 64 MiB each call of the library's all-reduce mapped in fresh pages for half the message, the ring's for 3 %
    of it. At 16 MiB, the largest size at which neither did, the ring took 0.54 of the library's time: faster. The
    two were timed in separate runs, not in turns, so load that came and went could fall on one and not the other;
    the run does not take apart why the ring was faster.
    """
    check_positive("lib_alpha", lib_alpha)
    if part == "alpha":
        if ring_alpha > (1 + tolerance) * lib_alpha:
            start = ("larger. Each of its steps is a call from Python through mpi4py and a NumPy addition, where the "
                     "library's steps run in its own compiled loop: the likely cause, though this run, made on ranks "
                     "that share cores, does not test it apart from the sharing")
        elif ring_alpha < (1 - tolerance) * lib_alpha:
            start = "smaller, so the ring's extra time at small sizes comes from its more numerous steps"
        else:
            start = "about the same, so the ring's extra time at small sizes comes from its more numerous steps"
        return (f"Fitted per step on its own counts, the point-to-point ring's α is {time_text(ring_alpha)} against "
                f"{time_text(lib_alpha)} for the library's all-reduce on the same ranks, {start}.")
    if part != "time":
        raise ValueError(f"part must be 'alpha' or 'time', got {part!r}")
    sizes = list(sizes)
    if not (len(sizes) == len(ring_times) == len(lib_times)) or not sizes:
        raise ValueError("sizes, ring_times and lib_times must be non-empty and of the same length")
    rp = list(ring_pages) if ring_pages is not None else [0.0] * len(sizes)
    lp = list(lib_pages) if lib_pages is not None else [0.0] * len(sizes)
    clean = [i for i in range(len(sizes)) if rp[i] < jump and lp[i] < jump]
    i = clean[-1] if clean else len(sizes) - 1
    ratio = check_positive("ring_time", ring_times[i]) / check_positive("lib_time", lib_times[i])
    word = "faster" if ratio < 1 - 0.05 else "slower" if ratio > 1 + 0.05 else "about as fast"
    text = ""
    if i < len(sizes) - 1:

        def share(p: float) -> str:
            return "half the message" if abs(p - 0.5) < 0.05 else f"{100 * p:.0f} % of it"

        text = (f"At {format_bytes(sizes[-1])} each call of the library's all-reduce mapped in fresh pages for "
                f"{share(lp[-1])}, the ring's for {share(rp[-1])}. ")
        where = f"At {format_bytes(sizes[i])}, the largest size at which neither did, "
    else:
        where = f"At {format_bytes(sizes[i])}, "
    text += (f"{where}the ring took {ratio:.2f} of the library's time: {word}. The two were timed in separate runs, "
             "not in turns, so load that came and went could fall on one and not the other")
    return text + ("; the run does not take apart why the ring was faster." if word == "faster" else ".")


def price_drop_sentence(found: Sequence[tuple[str, PriceDrop] | tuple[str, PriceDrop, int]], ranks: Sequence[int],
                        what: str = "The regimes of each fit", every: str | None = None) -> str:
    """Where fitted regimes price a bigger message cheaper: ``found`` holds ``(collective, drop)`` pairs
    (:func:`commlib.lab.fit.price_drops`), or ``(collective, drop, n)`` triples that also name the number of ranks
    the drop was priced on, over the numbers of ranks ``ranks`` that were tried. Regimes are fitted apart and not
    joined, so at a cut the price can jump either way; the sentence names each fall, its size, how far the price
    fell there and, when triples name more than one number of ranks, where it fell furthest. ``ranks`` is named
    as a span only where it holds every number in between; ``every`` (e.g. "the calculator accepts") names it in
    words instead, where triples show a fall on every one of them.

    >>> d = [("all-gather", PriceDrop(32768.0, 75e-6, 41e-6)), ("the ring", PriceDrop(8192.0, 240e-6, 180e-6))]
    >>> print(price_drop_sentence(d, [4]))  # doctest: +NORMALIZE_WHITESPACE
    The regimes of each fit are fitted apart and not joined, so at a cut the price can jump either way: on 4
    ranks it falls for the ring at 8 KiB and for all-gather at 32 KiB, to 0.55 to 0.75 of the price just below, a
    bigger message priced cheaper than a smaller one; near a cut, trust the fit only at the measured sizes.
    >>> t = [("reduce-scatter", PriceDrop(2.0**18, 1e-4, 7e-5), 2), ("reduce-scatter", PriceDrop(2.0**18, 2e-4, 6e-5), 6)]
    >>> print(price_drop_sentence(t, range(2, 9)))  # doctest: +NORMALIZE_WHITESPACE
    The regimes of each fit are fitted apart and not joined, so at a cut the price can jump either way: on 2 to 8
    ranks it falls for reduce-scatter at 256 KiB, to 0.30 to 0.70 of the price just below (the lowest on 6
    ranks), a bigger message priced cheaper than a smaller one; near a cut, trust the fit only at the measured
    sizes.
    >>> price_drop_sentence(t, [2, 6], every="tried")[88:149]
    'either way: on every number of ranks tried, it falls for redu'
    >>> price_drop_sentence(t + [("all-gather", PriceDrop(2.0**15, 1e-4, 7e-5), 2)], [2, 6], every="tried")[88:110]
    'either way: on 2 and 6'
    >>> price_drop_sentence([], [2, 16])[-63:]
    'and not joined, yet on 2 and 16 ranks no price falls with size.'
    """
    ranks = sorted({check_count("ranks", r, minimum=2) for r in ranks})
    if not ranks:
        raise ValueError("ranks must name at least one number of ranks")
    groups: dict[tuple[str, float], set] = {}     # each fall (collective, size) and the ranks it was found on
    for f in found:
        groups.setdefault((f[0], f[1].nbytes), set()).update(f[2:3])
    if every and found and all(on_ranks >= set(ranks) for on_ranks in groups.values()):
        on = f"on every number of ranks {every},"
    elif len(ranks) == 1:
        on = f"on {ranks[0]} ranks"
    elif ranks == list(range(ranks[0], ranks[-1] + 1)):
        on = f"on {ranks[0]} to {ranks[-1]} ranks"
    else:
        on = f"on {_and([str(r) for r in ranks])} ranks"
    head = f"{what} are fitted apart and not joined"
    if not found:
        return f"{head}, yet {on} no price falls with size."
    by_cut: dict[float, list[str]] = {}
    for name, d, *_ in found:
        names = by_cut.setdefault(d.nbytes, [])
        if name not in names:
            names.append(name)
    ratios = [f[1].ratio for f in found]
    lo, hi = figures(min(ratios)), figures(max(ratios))
    to = lo if lo == hi else f"{lo} to {hi}"
    below = "of the price just below"
    if lo != hi and len({f[2] for f in found if len(f) > 2}) > 1:  # where the fall is deepest, when ranks differ
        deepest = sorted({f[2] for f in found if len(f) > 2 and figures(f[1].ratio) == lo})
        below += f" (the lowest on {_and([str(r) for r in deepest])} ranks)"
    where = _and([f"for {_and(names)} at {format_bytes(c)}" for c, names in sorted(by_cut.items())])
    return (f"{head}, so at a cut the price can jump either way: {on} it falls {where}, to {to} {below}, a "
            "bigger message priced cheaper than a smaller one; near a cut, trust the fit only at the "
            "measured sizes.")
