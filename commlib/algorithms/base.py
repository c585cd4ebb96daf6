r"""What every algorithm record holds, and the cost coefficients it returns (numpy-free).

An :class:`Algorithm` is one collective algorithm, defined once: its key,
the label a reader sees, its alpha-beta-gamma terms (:class:`CostTerms`),
the schedule that executes it on real arrays, the parameters it takes and
the constraints on them. :mod:`commlib.algorithms` collects the records in
one registry; :mod:`commlib.cost`, :mod:`commlib.collectives`,
:mod:`commlib.compare`, the calculators, figures and tests read it.

This module and every ``terms`` function import no numpy: the cost side runs
in the browser (Pyodide without numpy). Schedules import the step engine
(numpy) inside their body.

>>> CostTerms(2, 10.0, 5.0).time(bandwidth=10.0, latency=1.0, gamma=0.1)
3.5
>>> log2_ceil(5), log2_floor(5)
(3, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..units import check_nonnegative, check_positive

__all__ = ["CostTerms", "ZERO", "Algorithm", "log2_ceil", "log2_floor"]


@dataclass(frozen=True)
class CostTerms:
    """Coefficients of ``T = steps*alpha + bytes*beta + reduced*gamma`` on the critical path.

    ``steps`` is the number of sequential steps (start-ups), ``bytes`` the
    bytes through the busiest port summed over steps, ``reduced`` the bytes
    the busiest rank combines, summed over steps.
    """

    steps: int
    bytes: float
    reduced: float

    def time(self, bandwidth: float, latency: float = 0.0, gamma: float = 0.0) -> float:
        """Seconds, for a link of ``bandwidth`` bytes/s and ``latency`` s, reducing at ``gamma`` s/byte."""
        bandwidth = check_positive("bandwidth", bandwidth)
        latency = check_nonnegative("latency", latency)
        gamma = check_nonnegative("gamma", gamma)
        return self.steps * latency + self.bytes / bandwidth + self.reduced * gamma

    def __add__(self, other: CostTerms) -> CostTerms:
        return CostTerms(self.steps + other.steps, self.bytes + other.bytes, self.reduced + other.reduced)


#: Nothing to do (one rank).
ZERO = CostTerms(0, 0.0, 0.0)


def log2_ceil(n: int) -> int:
    """Smallest d with 2**d >= n (n >= 1): the depth of a binomial tree over n ranks."""
    return (n - 1).bit_length()


def log2_floor(n: int) -> int:
    """Largest d with 2**d <= n (n >= 1)."""
    return n.bit_length() - 1


@dataclass(frozen=True)
class Algorithm:
    """One collective algorithm, defined once.

    * ``name``: the key code uses (``"ring"``); ``label``: what a reader sees;
    * ``collective``: ``"all_reduce"``, ``"broadcast"``, ...;
    * ``terms(nbytes, n, **params) -> CostTerms``: the closed form on one
      uniform link (numpy-free);
    * ``schedule(engine, n, length, **params)``: executes the algorithm on a
      :class:`commlib._collectives_engine.StepEngine` (``None`` when the
      executable version lives elsewhere);
    * ``params``: the extra keyword parameters ``terms`` and ``schedule``
      take (``"hosts"``, ``"grid"``, ``"chunks"``), checked and completed by
      ``check(n, **params) -> dict``;
    * ``constraint``: the condition on n and the parameters, in words;
    * ``family``: ``"flat"`` (one uniform network, no parameter),
      ``"pipelined"`` (cut into q chunks) or ``"two-level"``;
    * ``seconds``: optional time on a cluster with a fast link inside hosts
      and a slower one between them; without it, the slowest link is charged;
    * ``multi_port``: a rank may send or receive several messages in one step;
    * ``ports``: what carries a step's messages one after the other, and so
      what ``terms(...).bytes`` counts: ``"rank"`` (each rank has one port,
      its messages of a step share it) or ``"link"`` (each rank has a link
      per neighbour, e.g. a torus; a link carries its own messages);
    * ``source``: where the algorithm and its cost come from.
    """

    name: str
    label: str
    collective: str
    terms: Callable[..., CostTerms]
    schedule: Callable[..., None] | None = None
    params: tuple[str, ...] = ()
    check: Callable[..., dict] | None = None
    constraint: str = "any n >= 1"
    family: str = "flat"
    seconds: Callable[..., float] | None = None
    multi_port: bool = False
    ports: str = "rank"
    source: str = ""

    def checked(self, n: int, **params) -> dict:
        """The parameters completed with their defaults, or ValueError naming the bad one."""
        unknown = [k for k in params if k not in self.params]
        if unknown:
            allowed = ", ".join(self.params) or "none"
            raise ValueError(f"algorithm {self.name!r} takes no parameter {unknown[0]!r} (its parameters: {allowed})")
        return self.check(n, **params) if self.check is not None else dict(params)

    def cost(self, nbytes: float, n: int, **params) -> CostTerms:
        """Closed-form terms with the parameters checked first."""
        return self.terms(nbytes, n, **self.checked(n, **params))
