"""What a fitted model of this machine predicts: the lab calculator's computation.

The lab fits alpha, beta (and a piecewise model with regimes) to each
measured collective (:mod:`commlib.lab.fit`). :func:`fitted_model_results` asks
one of those fits for any message size and number of ranks: the fitted
alpha and beta belong to the machine and library they were measured on, and
changing the number of ranks extrapolates with the cost model's counts of
steps and bytes.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence

from ..collectives import cost
from ..units import (
    check_count,
    check_nonnegative,
    check_positive,
    format_rate,
    format_size,
    format_time,
    size_entry,
)
from . import fit, mpich
from .measure import format_bytes

__all__ = ["regime_sizes", "latency_term", "measured_range", "fitted_model_results", "SIZE_ENTRY"]

#: The lab calculator's free entry: what the control is called and its physical range (every size box's: units.SIZE_RANGE).
SIZE_ENTRY = size_entry("message size")


def regime_sizes(model: fit.AlphaBeta | fit.PiecewiseFit, series: fit.Series, nbytes: float) -> tuple[float, float]:
    """The measured sizes (bytes) the regime that prices ``nbytes`` was fitted on: ``(smallest, largest)``.

    A single line was fitted on every size of ``series``; a piecewise fit's
    regime only on the sizes between its crossovers.

    >>> s = fit.Series("all_reduce", 2, (1024.0, 4096.0, 16384.0), (1e-5, 2e-5, 5e-5))
    >>> pw = fit.PiecewiseFit((3000.0,), (fit.AlphaBeta(1e-5, 1e-9), fit.AlphaBeta(0.0, 2e-9)))
    >>> regime_sizes(pw, s, 10**6), regime_sizes(fit.AlphaBeta(1e-5, 1e-9), s, 10**6)
    ((4096.0, 16384.0), (1024.0, 16384.0))
    """
    sizes = sorted(float(x) for x in series.nbytes)
    if isinstance(model, fit.PiecewiseFit):
        i = bisect.bisect_right(model.crossovers, nbytes)
        lo = model.crossovers[i - 1] if i > 0 else -math.inf
        hi = model.crossovers[i] if i < len(model.crossovers) else math.inf
        inside = [x for x in sizes if lo <= x < hi]
        if inside:
            return inside[0], inside[-1]
    return sizes[0], sizes[-1]


def latency_term(steps: int, alpha: float, lo: float, hi: float, resolution: float = 1e-9) -> str:
    """The latency term ``a alpha`` in words; when the fit left alpha at 0, say so instead of "0.00 ns".

    A fit with alpha >= 0 that finds no flat part in the sizes ``lo`` .. ``hi``
    (bytes) it was fitted on returns alpha = 0, or a rounding residue such as
    1e-20 s: the start-up cost is too small to show next to the copying time
    there, not absent. A term below ``resolution`` seconds (default 1 ns,
    finer than a clock read resolves) counts as that case.

    >>> latency_term(2, 5e-6, 1024, 65536)
    '10.00 µs'
    >>> latency_term(2, 0.0, 2**20, 2**26)
    'none measurable in 1 MiB to 64 MiB (fitted alpha = 0)'
    """
    steps = check_count("steps", steps, minimum=0)
    alpha = check_nonnegative("alpha", alpha)
    resolution = check_positive("resolution", resolution)
    if steps == 0 or steps * alpha >= resolution:
        return format_time(steps * alpha)
    return f"none measurable in {format_bytes(lo)} to {format_bytes(hi)} (fitted alpha = 0)"


def measured_range(series: fit.Series, nbytes: float, n: int, graded_ranks: Sequence[int] = ()) -> str:
    """Whether a price at ``nbytes`` on ``n`` ranks lies inside what ``series`` measured, in words.

    A fit is checked only on the sizes it was fitted on (``series.nbytes``) and on the numbers of ranks
    it was fitted on (``series.n``) or graded on (``graded_ranks``). Outside them the price is the cost
    model's extrapolation, which no measurement has checked, and the words start with "extrapolated".

    >>> s = fit.Series("all_reduce", 2, (1024.0, 2.0**26), (1e-5, 5e-2))
    >>> measured_range(s, 2.0**20, 4, graded_ranks=(4,))
    'measured: 1 KiB to 64 MiB, graded on 4 ranks'
    >>> measured_range(s, 2.0**30, 64, graded_ranks=(4,))
    'extrapolated: above the measured 64 MiB; 64 ranks, fitted on 2, graded on 4'
    """
    nbytes = check_nonnegative("message size", nbytes)
    n = check_count("ranks n", n, minimum=2)
    graded = sorted({check_count("graded_ranks", g, minimum=2) for g in graded_ranks} - {series.n})
    lo, hi = min(series.nbytes), max(series.nbytes)
    outside = []
    if nbytes < lo:
        outside.append(f"below the measured {format_bytes(lo)}")
    elif nbytes > hi:
        outside.append(f"above the measured {format_bytes(hi)}")
    if n != series.n and n not in graded:
        outside.append(f"{n} ranks, fitted on {series.n}"
                       + (f", graded on {', '.join(str(g) for g in graded)}" if graded else ""))
    if outside:
        return "extrapolated: " + "; ".join(outside)
    return f"measured: {format_bytes(lo)} to {format_bytes(hi)}, " + ("fitted" if n == series.n else "graded") + f" on {n} ranks"


def fitted_model_results(table: Mapping[str, tuple[fit.Series, fit.AlphaBeta | fit.PiecewiseFit]], collective: str,
                         size: str, n: int, graded_ranks: Sequence[int] = ()) -> dict[str, str]:
    """The fit of ``collective`` (a key of ``table``: its measured series and fitted model) at ``size`` on ``n`` ranks.

    ``"regime fitted on"`` says how many measured sizes priced it; where only two did, the regime is a secant
    through them and its ``a alpha`` is said to be that secant's intercept rather than a start-up cost.
    ``"measured range"`` warns where the size or ``n`` lies outside what was measured: the numbers of ranks
    fitted on (the series') and ``graded_ranks`` (those a fit was graded on), see :func:`measured_range`.

    >>> s = fit.Series("all_reduce", 2, (1024.0, 4096.0, 16384.0), (1e-5, 2e-5, 5e-5))
    >>> out = fitted_model_results({s.label: (s, fit.AlphaBeta(5e-6, 1e-9))}, s.label, "1 MiB", 2)
    >>> out["predicted time"], out["latency term a alpha"]
    ('1.06 ms', '10.00 µs')
    """
    if collective not in table:
        raise ValueError(f"collective must be one of {', '.join(table)}; got {collective!r}")
    s, m = table[collective]
    nbytes = SIZE_ENTRY.read(size)
    n = check_count("ranks n", n, minimum=2)
    seconds = m.time(s.op, nbytes, n, s.algorithm)
    regime = m.regime(nbytes) if isinstance(m, fit.PiecewiseFit) else m
    terms = fit.terms_at(s.op, nbytes, n, s.algorithm)
    lo, hi = regime_sizes(m, s, nbytes)
    fitted_on = sum(1 for x in s.nbytes if lo <= x <= hi)
    latency = latency_term(terms.steps, regime.alpha, lo, hi)
    if fitted_on == 2 and terms.steps * regime.alpha > 0:  # a line through two points: its alpha is no start-up cost
        latency += ": a secant's intercept, not a start-up cost"
    out = {
        "message size": f"{format_size(nbytes)} = {format_bytes(nbytes)}",
        "measured range": measured_range(s, nbytes, n, graded_ranks),
        "predicted time": format_time(seconds),
        "regime fitted on": (f"{fitted_on} measured sizes, {format_bytes(lo)} to {format_bytes(hi)}"
                             + (": a secant" if fitted_on == 2 else "")),
        "latency term a alpha": latency,
        "bandwidth term b beta": format_time(terms.bytes * regime.beta + terms.reduced * regime.gamma),
        "cost-model algorithm": (f"{mpich.algorithm(s.op, nbytes, n) if s.algorithm == 'mpich' else s.algorithm}"
                                 f" ({terms.steps} step{'' if terms.steps == 1 else 's'})"),
    }
    if seconds > 0:
        out["algorithm bandwidth"] = format_rate(cost.algorithm_bandwidth(nbytes, seconds))
        out["bus bandwidth"] = format_rate(cost.bus_bandwidth(s.op, nbytes, n, seconds))
    return out

