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

from ..units import check_positive

__all__ = ["rate_phrase", "rate_conclusion", "alpha_phrase", "alpha_conclusion", "pair_phrase"]


def rate_phrase(inverse_beta: float, copy_rate: float, tolerance: float = 0.25) -> str:
    """How a fitted ``1/beta`` (bytes/s) compares with the measured copy rate (bytes/s).

    Within ``tolerance`` (relative) of each other counts as "about".
    """
    check_positive("inverse_beta", inverse_beta)
    check_positive("copy_rate", copy_rate)
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


def alpha_phrase(alpha: float, handover: float, slice_s: float = 1e-3) -> str:
    """What a fitted per-step ``alpha`` (s) looks like next to one core handover and a scheduler slice (s).

    A time slice is milliseconds (``slice_s``, the order of a Linux
    scheduler slice); a handover is microseconds.
    """
    check_positive("handover", handover)
    check_positive("slice_s", slice_s)
    if alpha >= 0.5 * slice_s:
        return "of the order of a scheduler time slice"
    handovers = alpha / handover
    if handovers <= 3:
        return "a few core handovers, far below a scheduler time slice"
    if handovers <= 30:
        return "some tens of core handovers or fewer, still far below a scheduler time slice"
    return "many core handovers, but below a scheduler time slice"


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
