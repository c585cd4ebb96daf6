r"""What every algorithm record holds, and the cost coefficients it returns (numpy-free).

An :class:`Algorithm` is one collective algorithm, defined once: its key,
the label a reader sees, its alpha-beta-gamma terms (:class:`CostTerms`),
the schedule that executes it on real arrays, the parameters it takes and
the constraints on them. :mod:`commlib.collectives.algorithms` collects the records in
one registry; :mod:`commlib.cost`, :mod:`commlib.collectives.simulate`,
:mod:`commlib.collectives.compare`, the calculators, figures and tests read it.

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

from ...units import check_nonnegative, check_positive

__all__ = ["CostTerms", "ZERO", "FAMILIES", "DRIVES_SEVERAL_LINKS", "Algorithm", "check_chunks", "log2_ceil", "log2_floor"]


@dataclass(frozen=True)
class CostTerms:
    """Coefficients of ``T = steps*alpha + bytes*beta + reduced*gamma`` on the critical path.

    ``steps`` is the number of start-ups on the critical path: one per sequential step where a rank
    sends one message a step, and, where a port carries several messages in a step (the pipelined
    trees), one per message, summed over the steps at the busiest port; ``bytes`` the bytes on the critical
    path: summed over the steps, the bytes through the busiest port in that step, one direction
    of it (a port is full duplex: what a rank sends and what it receives in one step overlap, and
    the larger counts); ``reduced`` the bytes the busiest rank combines, summed over steps. The
    unpipelined master's 2(p - 1) M are its p - 1 messages in and p - 1 out, one after the other.
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


#: What an algorithm needs from the network, by ``family`` (every record names one).
FAMILIES = {
    "flat": "any network, one port per rank, no parameter",
    "pipelined": "any network, one port per rank; the vector cut into q chunks (parameter chunks)",
    "two-level": "ranks on hosts (parameter hosts) or on a grid (parameter grid)",
    "multi-link": "no parameter, but a rank sends on several links at once (links_per_rank > 1)",
}
# "multi-link" has no member among the book's algorithms (the torus both ways drives four links, but needs its
# grid: "two-level"); it is the family of CONTRIBUTING.md's worked example, two rings both ways.

#: Whether a family's ranks drive several links at once (``links_per_rank > 1``): True, they must; False, they
#: must not; None, either (a grid's ranks may drive a link per neighbour, as the torus both ways does).
DRIVES_SEVERAL_LINKS = {"flat": False, "pipelined": False, "two-level": None, "multi-link": True}

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

    * ``name``: the key code uses (``"ring"``); ``label``: what a reader sees; ``short``: its name in running
      prose where that is not ``label`` before its parenthesis (:meth:`short_label`);
    * ``collective``: ``"all_reduce"``, ``"broadcast"``, ...;
    * ``terms(nbytes, n, **params) -> CostTerms``: the closed form on one
      uniform link (numpy-free);
    * ``schedule(engine, n, length, **params)``: executes the algorithm on a
      :class:`commlib.collectives.engine.StepEngine` (``None`` when the
      executable version lives elsewhere);
    * ``params``: the extra keyword parameters ``terms`` and ``schedule``
      take (``"hosts"``, ``"grid"``, ``"chunks"``), checked and completed by
      ``check(n, **params) -> dict``;
    * ``constraint``: the condition on n and the parameters, in words;
    * ``family``: what the algorithm needs from the network, one of :data:`FAMILIES`:
      ``"flat"`` (any network, one port per rank, no parameter), ``"pipelined"`` (the same, the
      vector cut into ``chunks`` = q pieces), ``"two-level"`` (ranks on ``hosts`` or a ``grid``)
      or ``"multi-link"`` (no parameter, but a rank sends on several links at once);
    * ``seconds``: optional time on a cluster with one link inside hosts and another between
      them; without it, the closed form at the link used (see ``flows_per_host``);
    * ``multi_port``: a rank may send or receive several messages in one step;
    * ``links_per_rank``: how many links a rank drives at once (1: one port, its messages of a step
      share it; 4 for the torus both ways, one link per neighbour). ``terms(...).bytes`` counts the
      bytes through the busiest link on a network that has those links; on a network with fewer
      links per rank (hosts behind a switch have one) :meth:`cost` charges the messages that
      share a port one after the other, each with its start-up;
    * ``fast``: optional ``fast(trace, rows, op) -> reduced vector``, the same arithmetic as
      ``schedule`` in the same order, without per-step buffers (the ring's); the simulation uses
      it when no step-by-step record is asked for;
    * ``flows_per_host``: with the ranks placed host by host on hosts of several GPUs, how many of a
      step's flows leave one host through its network cards, for an algorithm whose every step
      crosses hosts with as many bytes as any pair of that step carries, so that the closed form
      at the slower link times it exactly (1 for the ring); None where some steps stay inside a
      host, so that charging them at the slower link would only bound the time: no time is then
      given on hosts of several GPUs unless the algorithm takes ``hosts`` itself
      (:func:`commlib.collectives.cluster.check_hosts`);
    * ``most_sent``: optional ``most_sent(nbytes, n)``, the most bytes any one rank sends in all, where
      a closed form exists (NaN for an n it does not cover);
    * ``step_bytes``: optional ``step_bytes(nbytes, n) -> tuple``, for an algorithm whose every step is one
      message per card, each step needing what arrived in the step before: the bytes of each step's
      message in order (their count and sum are ``terms``' steps and bytes). Chapter 3 cuts these steps
      into pieces to pipeline them (:func:`commlib.parameter_servers.cost.rival_time`);
    * ``best_chunks``: for a record that takes ``chunks``, optional ``best_chunks(nbytes, n, bandwidth, latency)``,
      the fastest q on one uniform link (what :func:`commlib.collectives.compare.time_split` uses);
    * ``pieces``: optional ``pieces(n)``, how finely the schedule cuts the vector: when its length (in
      elements) is a multiple of :meth:`even_length` (``pieces(n)``; None: n, the ring's n pieces), the
      messages of a step are all of one size and the trace counts exactly the closed form's bytes;
      otherwise a step's largest message may be one element more (the tests read it, never the name);
    * ``swap_fold``: optional ``swap_fold(nbytes, n) -> CostTerms``, for an algorithm with a second way to fold
      in the ranks beyond the largest power of two: the terms of the fold that swaps halves, which moves a whole
      M less than ``terms``' textbook fold at the same start-ups, so never slower (the same on a power of two);
      :func:`commlib.collectives.compare.best_fold_seconds` times it instead of ``terms`` (None: one fold only);
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
    links_per_rank: int = 1
    fast: Callable[..., object] | None = None
    most_sent: Callable[[float, int], float] | None = None
    flows_per_host: int | None = None
    step_bytes: Callable[[float, int], tuple[float, ...]] | None = None
    best_chunks: Callable[[float, int, float, float], int] | None = None
    pieces: Callable[[int], int] | None = None
    swap_fold: Callable[[float, int], CostTerms] | None = None
    source: str = ""
    short: str = ""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family of {self.name!r} must be one of {', '.join(FAMILIES)}; got {self.family!r}")
        if not isinstance(self.links_per_rank, int) or self.links_per_rank < 1:
            raise ValueError(f"links_per_rank of {self.name!r} must be a whole number >= 1; got {self.links_per_rank!r}")
        must = DRIVES_SEVERAL_LINKS[self.family]
        if must is not None and must != (self.links_per_rank > 1):
            raise ValueError(f"{self.name!r}: a rank that drives several links is family 'multi-link' (or "
                             f"'two-level' with hosts or a grid); family {self.family!r} has links_per_rank = 1")

    def short_label(self) -> str:
        """The name in running prose: ``short`` if set, else ``label`` before its parenthesis
        ("halving-doubling (Rabenseifner)" -> "halving-doubling")."""
        return self.short or self.label.split(" (")[0]

    def even_length(self, n: int) -> int:
        """The vector lengths whose every step's messages are of one size are the multiples of this (see ``pieces``)."""
        return n if self.pieces is None else self.pieces(n)

    @property
    def ports(self) -> str:
        """What carries a step's messages: ``"rank"`` (one port each) or ``"link"`` (a link per neighbour)."""
        return "link" if self.links_per_rank > 1 else "rank"

    def checked(self, n: int, **params) -> dict:
        """The parameters completed with their defaults, or ValueError naming the bad one."""
        unknown = [k for k in params if k not in self.params]
        if unknown:
            allowed = ", ".join(self.params) or "none"
            raise ValueError(f"algorithm {self.name!r} takes no parameter {unknown[0]!r} (its parameters: {allowed})")
        return self.check(n, **params) if self.check is not None else dict(params)

    def cost(self, nbytes: float, n: int, *, links_per_rank: int | None = None, **params) -> CostTerms:
        """Closed-form terms with the parameters checked first.

        ``links_per_rank`` is the network's: how many links each rank has (None: as many as the
        algorithm drives). With fewer than :attr:`links_per_rank` the messages a rank sends in one
        step share its links, one after the other: the bytes term grows by the ratio, and so do
        the start-ups, each message keeping its own (the bytes reduced do not change).
        """
        terms = self.terms(nbytes, n, **self.checked(n, **params))
        used = min(self.links_per_rank, max(n - 1, 1))   # a rank has at most n - 1 neighbours to drive links to
        if links_per_rank is None or links_per_rank >= used:
            return terms
        if not isinstance(links_per_rank, int) or links_per_rank < 1:
            raise ValueError(f"links_per_rank must be a whole number >= 1; got {links_per_rank!r}")
        share = -(-used // links_per_rank)              # messages a port carries in a step
        return CostTerms(terms.steps * share, terms.bytes * used / links_per_rank, terms.reduced)


def check_chunks(n: int, chunks=None) -> dict:
    """A pipelined algorithm's ``chunks`` q: a whole number >= 1, or None (the algorithm's default).

    >>> check_chunks(8, 4.0), check_chunks(8)
    ({'chunks': 4}, {'chunks': None})
    """
    if chunks is None:
        return {"chunks": None}
    from ...units import check_count

    if isinstance(chunks, float) and chunks.is_integer():
        chunks = int(chunks)
    return {"chunks": check_count("chunks", chunks, minimum=1)}
