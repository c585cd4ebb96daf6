"""Machinery behind :mod:`commlib.collectives.simulate`: a column-stored trace and a step engine.

:class:`ColumnTrace` is a :class:`commlib.collectives.trace.Trace` that keeps its messages
as numpy columns, so a simulation of thousands of ranks can record millions
of messages without building one Python object per message. Its
``messages`` list is built only when someone reads it, and the quantities the
cost model needs (steps, bytes per rank, critical bytes and reduced bytes)
are computed on the columns directly.

:class:`StepEngine` runs an algorithm written as a list of steps, each a list
of transfers ``(src, dst, src_index, dst_index, reduce, chunk)``. Within a
step every payload is read before anything is written, so all messages of a
step travel at the same time; the engine refuses a step in which a rank sends
or receives twice (the single-port model).

>>> t = ColumnTrace(n=3)
>>> t.add_block(step=[0, 0, 1], src=[0, 1, 2], dst=[1, 2, 0], nbytes=[8, 8, 4], reduced=[8, 8, 0])
>>> t.steps, t.bytes_sent.tolist(), t.critical_bytes, t.critical_reduced
(2, [8, 8, 4], 12, 8)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .trace import Message, Trace

__all__ = ["ColumnTrace", "StepEngine", "split_bounds"]

_INT_COLUMNS = ("step", "src", "dst", "nbytes", "reduced")


def split_bounds(start: int, stop: int, parts: int) -> np.ndarray:
    """Boundaries of ``np.array_split`` of the range [start, stop) into ``parts`` pieces.

    The first ``(stop - start) % parts`` pieces are one element longer, as in
    :func:`numpy.array_split`. Piece ``k`` is ``[b[k], b[k + 1])``.

    >>> split_bounds(0, 10, 4).tolist()
    [0, 3, 6, 8, 10]
    """
    length = stop - start
    base, rem = divmod(length, parts)
    sizes = np.full(parts, base, dtype=np.int64)
    sizes[:rem] += 1
    return np.concatenate([[start], start + np.cumsum(sizes)]).astype(np.int64)


class ColumnTrace(Trace):
    """A :class:`~commlib.collectives.trace.Trace` whose messages live in numpy columns.

    Record many messages at once with :meth:`add_block` (arrays broadcast
    against each other; one ``phase`` string per block). :meth:`add` still
    records a single message. Reading :attr:`messages` builds the list of
    :class:`~commlib.collectives.trace.Message` records (cached); :meth:`columns` gives
    the raw columns ``step, src, dst, nbytes, reduced`` (int64 arrays),
    ``phase`` (int codes into :attr:`phase_names`).
    """

    def __init__(self, n: int, algorithm: str = "") -> None:
        self._blocks: list[dict[str, Any]] = []
        self._cols: dict[str, np.ndarray] | None = None
        self._msgs: list[Message] | None = None
        super().__init__(n=n, algorithm=algorithm)

    # -- storage -------------------------------------------------------------
    @property
    def messages(self) -> list[Message]:  # type: ignore[override]
        """Every message as a :class:`~commlib.collectives.trace.Message`, in recorded order (built on first use)."""
        if self._msgs is None:
            out: list[Message] = []
            for b in self._blocks:
                chunks = b["chunk"]
                cols = [b[k].tolist() for k in _INT_COLUMNS]
                for i, (step, src, dst, nbytes, red) in enumerate(zip(*cols)):
                    chunk = None if chunks is None else chunks[i]
                    if isinstance(chunk, np.integer):
                        chunk = int(chunk)
                    out.append(Message(step, src, dst, nbytes, chunk, b["phase"], red))
            self._msgs = out
        return self._msgs

    @messages.setter
    def messages(self, value: Sequence[Message]) -> None:
        self._blocks = []
        self._cols = None
        self._msgs = None
        for m in value:
            self.add(m.step, m.src, m.dst, m.nbytes, m.chunk, m.phase, m.reduced)

    def add(self, step: int, src: int, dst: int, nbytes: int, chunk: object = None, phase: str = "",
            reduced: int = 0) -> None:
        """Record one message."""
        ch = np.empty(1, dtype=object)
        ch[0] = chunk
        self.add_block(step, src, dst, nbytes, chunk=None if chunk is None else ch, phase=phase, reduced=reduced)

    def add_block(self, step, src, dst, nbytes, chunk=None, phase: str = "", reduced=0) -> None:
        """Record many messages of one phase at once; integer arguments broadcast against each other.

        ``chunk`` is None (whole vectors), an integer array, or an object
        array of labels, of the same length as the block.
        """
        arrays = np.broadcast_arrays(*(np.asarray(x, dtype=np.int64) for x in (step, src, dst, nbytes, reduced)))
        block = {k: np.ascontiguousarray(a).ravel() for k, a in zip(_INT_COLUMNS, arrays)}
        size = block["step"].size
        if size == 0:
            return
        if np.any(block["src"] < 0) or np.any(block["src"] >= self.n) or np.any(block["dst"] < 0) \
                or np.any(block["dst"] >= self.n):
            raise ValueError(f"src and dst must lie in [0, {self.n - 1}]")
        if chunk is not None:
            chunk = np.asarray(chunk) if not isinstance(chunk, np.ndarray) else chunk
            chunk = np.broadcast_to(chunk, arrays[0].shape).ravel() if chunk.dtype != object else chunk.ravel()
            if chunk.size != size:
                raise ValueError(f"chunk must have one label per message ({size}), got {chunk.size}")
        block["chunk"] = chunk
        block["phase"] = str(phase)
        self._blocks.append(block)
        self._cols = None
        self._msgs = None

    @property
    def phase_names(self) -> list[str]:
        """Distinct phase names, in order of first appearance."""
        return list(dict.fromkeys(b["phase"] for b in self._blocks))

    def columns(self) -> dict[str, np.ndarray]:
        """The messages as columns: int64 arrays ``step, src, dst, nbytes, reduced, phase`` (phase codes)."""
        if self._cols is None:
            names = self.phase_names
            code = {p: i for i, p in enumerate(names)}
            if self._blocks:
                cols = {k: np.concatenate([b[k] for b in self._blocks]) for k in _INT_COLUMNS}
                cols["phase"] = np.concatenate(
                    [np.full(b["step"].size, code[b["phase"]], dtype=np.int64) for b in self._blocks])
            else:
                cols = {k: np.zeros(0, dtype=np.int64) for k in (*_INT_COLUMNS, "phase")}
            self._cols = cols
        return self._cols

    def __len__(self) -> int:
        return int(sum(b["step"].size for b in self._blocks))

    def __repr__(self) -> str:
        return (f"ColumnTrace(n={self.n}, algorithm={self.algorithm!r}, messages={len(self)}, "
                f"steps={self.steps}, snapshots={len(self.snapshots)})")

    # -- what the cost model charges, computed on the columns -----------------
    def _step_index(self) -> tuple[int, np.ndarray]:
        """Number of distinct steps and, per message, the rank of its step among them (0, 1, ...)."""
        step = self.columns()["step"]
        if step.size == 0:
            return 0, step
        if step.min() >= 0 and step.max() <= 4 * step.size:
            present = np.bincount(step) > 0
            remap = np.cumsum(present) - 1
            return int(present.sum()), remap[step]
        uniq, inv = np.unique(step, return_inverse=True)
        return int(uniq.size), inv

    @property
    def steps(self) -> int:
        """Number of distinct communication steps (rounds)."""
        return self._step_index()[0]

    def _per_rank(self, key: str) -> np.ndarray:
        c = self.columns()
        # float64 weights are exact for totals below 2**53 bytes (9 PB)
        return np.rint(np.bincount(c[key], weights=c["nbytes"], minlength=self.n)).astype(np.int64)

    @property
    def bytes_sent(self) -> np.ndarray:
        """Bytes sent by each rank, an int64 array of length ``n``."""
        return self._per_rank("src")

    @property
    def bytes_received(self) -> np.ndarray:
        """Bytes received by each rank, an int64 array of length ``n``."""
        return self._per_rank("dst")

    @property
    def critical_bytes(self) -> int:
        """Sum over steps of the largest message in that step: the beta term's bytes."""
        nsteps, inv = self._step_index()
        largest = np.zeros(nsteps, dtype=np.int64)
        np.maximum.at(largest, inv, self.columns()["nbytes"])
        return int(largest.sum())

    @property
    def port_bytes(self) -> int:
        """Sum over steps of the busiest port's bytes (a rank's sent, or received, bytes in the step).

        With one message per rank and step (the single-port model) it equals
        :attr:`critical_bytes`; when a rank sends or receives several messages
        in one step (the pipelined trees), its port carries their sum.
        """
        nsteps, inv = self._step_index()
        if nsteps == 0:
            return 0
        c = self.columns()
        sent = np.bincount(inv * self.n + c["src"], weights=c["nbytes"], minlength=nsteps * self.n)
        got = np.bincount(inv * self.n + c["dst"], weights=c["nbytes"], minlength=nsteps * self.n)
        busiest = np.maximum(sent, got).reshape(nsteps, self.n).max(axis=1)
        return int(np.rint(busiest.sum()))

    @property
    def link_port_bytes(self) -> int:
        """Sum over steps of the busiest directed (src, dst) pair's bytes: every link is its own port.

        Equals :attr:`critical_bytes` when no pair carries two messages in a step.
        """
        nsteps, inv = self._step_index()
        if nsteps == 0:
            return 0
        c = self.columns()
        key = (inv * self.n + c["src"]) * self.n + c["dst"]
        uniq, where = np.unique(key, return_inverse=True)
        per = np.bincount(where, weights=c["nbytes"])
        busiest = np.zeros(nsteps)
        np.maximum.at(busiest, uniq // (self.n * self.n), per)
        return int(np.rint(busiest.sum()))

    def startups(self, ports: str = "rank") -> int:
        """Sum over steps of the most messages through one port (see :meth:`Trace.startups`)."""
        if ports not in ("rank", "link"):
            raise ValueError(f"ports must be 'rank' or 'link'; got {ports!r}")
        nsteps, inv = self._step_index()
        if nsteps == 0:
            return 0
        c = self.columns()
        if ports == "rank":
            sent = np.bincount(inv * self.n + c["src"], minlength=nsteps * self.n)
            got = np.bincount(inv * self.n + c["dst"], minlength=nsteps * self.n)
            return int(np.maximum(sent, got).reshape(nsteps, self.n).max(axis=1).sum())
        key = (inv * self.n + c["src"]) * self.n + c["dst"]
        uniq, per = np.unique(key, return_counts=True)
        busiest = np.zeros(nsteps, dtype=np.int64)
        np.maximum.at(busiest, uniq // (self.n * self.n), per)
        return int(busiest.sum())

    @property
    def critical_reduced(self) -> int:
        """Sum over steps of the most bytes any one rank reduced in that step: the gamma term's bytes."""
        nsteps, inv = self._step_index()
        if nsteps == 0:
            return 0
        c = self.columns()
        per = np.bincount(inv * self.n + c["dst"], weights=c["reduced"], minlength=nsteps * self.n)
        return int(np.rint(per.reshape(nsteps, self.n).max(axis=1).sum()))

    def step_messages(self, step: int) -> list[Message]:
        """The messages of one step, in the order they were recorded."""
        idx = np.flatnonzero(self.columns()["step"] == step)
        msgs = self.messages
        return [msgs[i] for i in idx]

    def link_bytes(self) -> dict[tuple[int, int], int]:
        """Total bytes per directed (src, dst) pair."""
        c = self.columns()
        keys, inv = np.unique(c["src"] * self.n + c["dst"], return_inverse=True)
        total = np.zeros(keys.size, dtype=np.int64)
        np.add.at(total, inv, c["nbytes"])
        return {(int(k) // self.n, int(k) % self.n): int(v) for k, v in zip(keys, total)}


Transfer = tuple  # (src, dst, src_index, dst_index, reduce: bool, chunk label)


class StepEngine:
    """Run transfers step by step on per-rank buffers and record them in a :class:`ColumnTrace`.

    ``buffers`` are the ranks' working (output) buffers, modified in place;
    ``sources`` (default: the same buffers) are what senders read from.
    With ``filled`` (one boolean mask per rank) snapshots show float64 copies
    with NaN where a rank holds nothing yet. ``multi_port=True`` lets a rank
    send and receive several messages in one step (its port carries their sum).
    """

    def __init__(self, trace: ColumnTrace, buffers: list[np.ndarray], op: Callable | None = None,
                 record: bool = False, sources: list[np.ndarray] | None = None,
                 filled: list[np.ndarray] | None = None, multi_port: bool = False) -> None:
        self.trace = trace
        self.buf = buffers
        self.src = buffers if sources is None else sources
        self.op = op
        self.record = record
        self.filled = filled
        self.multi_port = multi_port
        self.step = 0
        self.itemsize = buffers[0].dtype.itemsize if buffers else 1
        if record:
            self._snap("start")

    def _snap(self, label: str) -> None:
        if self.filled is None:
            self.trace.snapshot(self.buf, label)
        else:
            self.trace.snapshot([np.where(f, b.astype(np.float64), np.nan) for b, f in zip(self.buf, self.filled)],
                                label)

    def run(self, transfers: list[Transfer], phase: str) -> None:
        """Execute one step: read every payload, then deliver (combine or copy) them all."""
        if not transfers:
            raise RuntimeError("a step needs at least one transfer")
        senders = [t[0] for t in transfers]
        receivers = [t[1] for t in transfers]
        if not self.multi_port and (len(set(senders)) != len(senders) or len(set(receivers)) != len(receivers)):
            raise RuntimeError(f"step {self.step} breaks the single-port model: a rank sends or receives twice")
        payloads = [self.src[s][si].copy() for s, _, si, _, _, _ in transfers]
        nbytes = []
        reduced = []
        chunks = np.empty(len(transfers), dtype=object)
        for k, ((_, d, _, di, red, chunk), p) in enumerate(zip(transfers, payloads)):
            if red:
                self.buf[d][di] = self.op(self.buf[d][di], p)
            else:
                self.buf[d][di] = p
            if self.filled is not None:
                self.filled[d][di] = True
            nbytes.append(p.size * self.itemsize)
            reduced.append(p.size * self.itemsize if red else 0)
            chunks[k] = chunk
        self.trace.add_block(self.step, senders, receivers, nbytes, chunk=chunks, phase=phase, reduced=reduced)
        self.step += 1
        if self.record:
            self._snap(f"step {self.step}: {phase}")
