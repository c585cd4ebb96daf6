"""Traces: what an executable collective sent, step by step.

Every simulation in :mod:`commlib.collectives.simulate` and :mod:`commlib.parameter_servers.simulate` returns a
:class:`Trace`. A trace is a list of :class:`Message` records; a *step* is a
round in which every rank sends at most one message on each of its links and
all of them travel at the same time. From the messages the trace derives what
the cost model charges: the number of steps, the bytes each rank sent and
received, and the bytes on the critical path (the largest message of each
step, summed).

>>> t = Trace(n=2)
>>> t.add(step=0, src=0, dst=1, nbytes=8)
>>> t.add(step=0, src=1, dst=0, nbytes=8)
>>> t.steps, t.bytes_sent.tolist(), t.critical_bytes
(1, [8, 8], 8)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Message", "Trace"]


@dataclass(frozen=True)
class Message:
    """One point-to-point transfer: ``nbytes`` from rank ``src`` to rank ``dst`` during ``step``.

    ``chunk`` names what travelled (a chunk index, or a label such as
    ``"grad"``); ``phase`` names the part of the algorithm (``"reduce-scatter"``,
    ``"all-gather"``, ``"push"`` ...); ``reduced`` is the number of bytes the
    receiver combines with the operator on arrival (0 for a plain copy).
    """

    step: int
    src: int
    dst: int
    nbytes: int
    chunk: object = None
    phase: str = ""
    reduced: int = 0


@dataclass
class Trace:
    """The messages of one run of a collective over ``n`` ranks."""

    n: int
    messages: list[Message] = field(default_factory=list)
    algorithm: str = ""
    #: Optional pictures of the state: ``snapshots[s]`` is the list of every
    #: rank's buffer (numpy copies) after step ``s``; ``snapshots[0]`` may hold
    #: the initial state when ``snapshot_labels[0] == "start"``.
    snapshots: list[list[np.ndarray]] = field(default_factory=list)
    snapshot_labels: list[str] = field(default_factory=list)

    def snapshot(self, buffers, label: str = "") -> None:
        """Store a copy of every rank's buffer (for animations)."""
        self.snapshots.append([np.array(b, copy=True) for b in buffers])
        self.snapshot_labels.append(label)

    def add(self, step: int, src: int, dst: int, nbytes: int, chunk: object = None, phase: str = "",
            reduced: int = 0) -> None:
        """Record one message."""
        self.messages.append(Message(int(step), int(src), int(dst), int(nbytes), chunk, phase, int(reduced)))

    @property
    def steps(self) -> int:
        """Number of distinct communication steps (rounds)."""
        return len({m.step for m in self.messages})

    @property
    def bytes_sent(self) -> np.ndarray:
        """Bytes sent by each rank, an int64 array of length ``n``."""
        out = np.zeros(self.n, dtype=np.int64)
        for m in self.messages:
            out[m.src] += m.nbytes
        return out

    @property
    def bytes_received(self) -> np.ndarray:
        """Bytes received by each rank, an int64 array of length ``n``."""
        out = np.zeros(self.n, dtype=np.int64)
        for m in self.messages:
            out[m.dst] += m.nbytes
        return out

    @property
    def critical_bytes(self) -> int:
        """Sum over steps of the largest message in that step: the beta term's bytes."""
        largest: dict[int, int] = {}
        for m in self.messages:
            largest[m.step] = max(largest.get(m.step, 0), m.nbytes)
        return int(sum(largest.values()))

    @property
    def critical_reduced(self) -> int:
        """Sum over steps of the most bytes any one rank reduced in that step: the gamma term's bytes."""
        per: dict[tuple[int, int], int] = {}
        for m in self.messages:
            per[(m.step, m.dst)] = per.get((m.step, m.dst), 0) + m.reduced
        largest: dict[int, int] = {}
        for (step, _), value in per.items():
            largest[step] = max(largest.get(step, 0), value)
        return int(sum(largest.values()))

    def startups(self, ports: str = "rank") -> int:
        """Sum over steps of the most messages through one port: the alpha term's start-ups.

        A port carries its messages of a step one after the other, each with its own start-up, and
        the busiest port sets the step's count. ``ports="rank"``: a rank has one port, counted in
        the direction (sent or received) with more messages; ``"link"``: every directed
        (src, dst) pair is its own port (a rank with a link per neighbour, as on a torus). With one
        message per rank and step it equals :attr:`steps`.
        """
        if ports not in ("rank", "link"):
            raise ValueError(f"ports must be 'rank' or 'link'; got {ports!r}")
        count: dict[tuple, int] = {}
        for m in self.messages:
            keys = [(m.step, "s", m.src), (m.step, "r", m.dst)] if ports == "rank" else [(m.step, m.src, m.dst)]
            for key in keys:
                count[key] = count.get(key, 0) + 1
        most: dict[int, int] = {}
        for key, c in count.items():
            most[key[0]] = max(most.get(key[0], 0), c)
        return int(sum(most.values()))

    def step_messages(self, step: int) -> list[Message]:
        """The messages of one step, in the order they were recorded."""
        return [m for m in self.messages if m.step == step]

    def link_bytes(self) -> dict[tuple[int, int], int]:
        """Total bytes per directed (src, dst) pair."""
        out: dict[tuple[int, int], int] = {}
        for m in self.messages:
            out[(m.src, m.dst)] = out.get((m.src, m.dst), 0) + m.nbytes
        return out
