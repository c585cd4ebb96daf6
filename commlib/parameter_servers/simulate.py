r"""Parameter servers: a synchronous round, executed on numpy arrays, and its costs.

A *parameter server* (PS) keeps the model; *workers* keep a replica each.
One synchronous round of data-parallel SGD has three parts:

1. **push**: every worker sends its gradient to the server(s);
2. **update**: each server sums the n gradients it received and takes an
   SGD step on the parameters it owns, :math:`w \leftarrow w - \eta\,\frac1n\sum_i g_i`;
3. **pull**: every worker fetches the updated parameters.

With one server its NIC carries n gradients in and n parameter copies out:
the hot spot. Splitting the parameters into k *shards* on k server machines
(``np.array_split``) divides that load by k (Li et al. 2014). Placing a shard
on every worker machine (*colocated*) removes the extra machines; bytes a
worker exchanges with its own local shard never touch the network.

:func:`ps_round` runs a round on real arrays and records every network
message in a :class:`commlib.collectives.trace.Trace` (ranks ``0..n-1`` are workers;
non-colocated servers are ranks ``n..n+k-1``). :func:`ps_traffic` gives the
per-machine bytes in closed form and :func:`round_time` the time, with the
start-up of every message on the card that handles it (the one-port model of
the naive master in chapter 1; :func:`commlib.cost.ps_time` is its
bandwidth-only special case); the tests hold the three together. The closed
forms live in :mod:`commlib.parameter_servers.cost` (no numpy) and are re-exported here. The comparison with ring all-reduce
follows the BytePS analysis (Jiang et al. 2020, sec. 2.3 and 4.1):
:func:`smallest_k_to_beat_ring`, :func:`byteps_split`, :func:`byteps_round`.

Units: sizes in bytes, bandwidths in bytes/s per direction (full-duplex
NICs), times in seconds.

>>> import numpy as np
>>> r = ps_round(np.zeros(4), [np.ones(4), 3 * np.ones(4)], servers=2, lr=0.5)
>>> r.params.tolist()            # w - 0.5 * (1 + 3) / 2
[-1.0, -1.0, -1.0, -1.0]
>>> r.trace.bytes_received.tolist()   # workers 0, 1 get 32 B; servers 2, 3 get 2 x 16 B
[32, 32, 32, 32]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..collectives import cost
from ..collectives.trace import Trace
from ..units import check_count, check_nonnegative
from .cost import (
    SAME_CARDS_LABEL,
    PSComparison,
    PSTraffic,
    allreduce_on_same_cards,
    best_allreduce,
    byteps_split,
    byteps_time,
    check_shards,
    compare_ps_ring,
    direct_in_sequence_on_same_cards,
    overhead_to_beat,
    ps_beats_ring,
    ps_time,
    ps_traffic,
    round_pieces,
    round_time,
    same_cards_shares,
    smallest_k_to_beat_ring,
)

__all__ = [
    "PSStage",
    "PSRound",
    "PSTraffic",
    "PSComparison",
    "WORKED_EXAMPLES",
    "shard_bounds",
    "server_ranks",
    "ps_round",
    "ps_traffic",
    "round_time",
    "round_pieces",
    "ps_beats_ring",
    "smallest_k_to_beat_ring",
    "best_allreduce",
    "byteps_split",
    "byteps_round",
    "compare_ps_ring",
    "allreduce_on_same_cards",
    "same_cards_shares",
    "direct_in_sequence_on_same_cards",
    "SAME_CARDS_LABEL",
    "overhead_to_beat",
    "server_and_ring_volumes",
    "sharding_curves",
    "demo_round",
    "traffic_check",
]

#: Worked examples quoted by the source notes, with what each number means.
WORKED_EXAMPLES: dict[str, dict[str, float | str]] = {
    # Note 000 quotes a blog's example: 61.5 million gradients, 8 workers, one PS.
    "one_server": {"params": 61_500_000, "workers": 8, "dtype": "fp32",
                   "what": "one non-colocated server, fp32 gradients"},
    # Note 000: "each machine is server and worker: 4 x gradient size / iteration time x 7/8", 8 machines.
    "colocated_eight": {"params": 61_500_000, "workers": 8, "dtype": "fp32",
                          "what": "colocated, a shard on each of 8 machines"},
    # Note 004 (BytePS sec. 2.2): 2 machines (16 GPUs), 64 MB at 200 Gb/s -> 2.56 ms.
    "byteps_two_machines": {"nbytes": "64 MB", "n": 2, "bandwidth": "200 Gb/s",
                          "what": "ring all-reduce between 2 machines, 8 GPUs each"},
}


@dataclass(frozen=True)
class PSStage:
    """What every machine holds at one moment of a round (for pictures).

    ``workers[i]`` is worker i's buffer (its gradient before the push, the new
    parameters after the pull); ``servers[j]`` is shard j's buffer (parameters,
    or the running gradient sum). ``step`` is the trace step whose messages
    lead to this stage (None for stages reached without communication).
    """

    label: str
    workers: tuple[np.ndarray, ...]
    servers: tuple[np.ndarray, ...]
    step: int | None = None


@dataclass(frozen=True)
class PSRound:
    """Result of :func:`ps_round`: the new parameters, the gradient sum, the trace, the stages."""

    params: np.ndarray
    gradient_sum: np.ndarray
    worker_params: tuple[np.ndarray, ...]
    trace: Trace
    stages: tuple[PSStage, ...]
    bounds: tuple[tuple[int, int], ...]
    server_ranks: tuple[int, ...]
    colocated: bool
    lr: float = 0.1

    @property
    def workers(self) -> int:
        """Number of workers n."""
        return len(self.worker_params)

    @property
    def servers(self) -> int:
        """Number of shards k."""
        return len(self.bounds)

    def sent_by_stage(self) -> tuple[np.ndarray, ...]:
        """Bytes each machine has sent by the end of each stage, from the trace (one array per stage).

        >>> [s.tolist() for s in demo_round(2, 1, length=3).sent_by_stage()]
        [[0, 0, 0], [24, 24, 0], [24, 24, 0], [24, 24, 48]]
        """
        out, done = [], -1
        for stage in self.stages:
            done = max(done, -1 if stage.step is None else stage.step)
            sent = np.zeros(self.trace.n, dtype=np.int64)
            for m in self.trace.messages:
                if m.step <= done:
                    sent[m.src] += m.nbytes
            out.append(sent)
        return tuple(out)


def shard_bounds(length: int, servers: int) -> tuple[tuple[int, int], ...]:
    """Index ranges ``[start, stop)`` of ``servers`` shards of a ``length``-element vector.

    The same split as ``np.array_split``: the first ``length % servers`` shards
    get one element more. Every shard must hold at least one parameter.

    >>> shard_bounds(10, 3)
    ((0, 4), (4, 7), (7, 10))
    """
    length = check_count("length", length, minimum=1)
    servers = check_count("servers", servers, minimum=1, maximum=length)
    base, extra = divmod(length, servers)
    out, start = [], 0
    for j in range(servers):
        stop = start + base + (1 if j < extra else 0)
        out.append((start, stop))
        start = stop
    return tuple(out)


def server_ranks(workers: int, servers: int, colocated: bool = False) -> tuple[int, ...]:
    """Trace rank of each shard's server: ``n..n+k-1`` apart, worker ``j`` when colocated.

    >>> server_ranks(4, 2), server_ranks(4, 2, colocated=True)
    ((4, 5), (0, 1))
    """
    n, k = check_shards(workers, servers, colocated)
    return tuple(range(k)) if colocated else tuple(range(n, n + k))


def _check_arrays(params, gradients) -> tuple[np.ndarray, list[np.ndarray]]:
    params = np.asarray(params)
    if params.size < 1:
        raise ValueError("params must hold at least one parameter, got an empty array")
    if isinstance(gradients, np.ndarray) and gradients.ndim >= 1 and gradients.shape[1:] == params.shape:
        gradients = list(gradients)
    grads = [np.asarray(g) for g in gradients]
    if len(grads) < 1:
        raise ValueError("gradients must hold one array per worker (n >= 1 workers), got none")
    for i, g in enumerate(grads):
        if g.shape != params.shape:
            raise ValueError(f"gradients[{i}] has shape {g.shape}; every gradient must have the params' "
                             f"shape {params.shape}")
    dtype = np.result_type(params, *grads)
    if not np.issubdtype(dtype, np.floating):
        raise ValueError(f"params and gradients must be floating-point arrays, got dtype {dtype}")
    return params.astype(dtype, copy=False).ravel(), [g.astype(dtype, copy=False).ravel() for g in grads]


def _simulate(params: np.ndarray, grads: list[np.ndarray], bounds, owners, ranks: int, lr: float,
              algorithm: str, colocated: bool, shape, record: bool = True) -> PSRound:
    n = len(grads)
    item = params.dtype.itemsize
    trace = Trace(n=ranks, algorithm=algorithm)
    shards = [params[a:b].copy() for a, b in bounds]
    acc = [np.zeros(b - a, dtype=params.dtype) for a, b in bounds]
    stages = []

    def stage(label, workers, servers, step=None):
        if record:
            stages.append(PSStage(label, tuple(w.copy() for w in workers), tuple(s.copy() for s in servers), step))

    stage("start", grads, shards)
    # push: worker i sends shard j of its gradient to shard j's server
    for i in range(n):
        for j, (a, b) in enumerate(bounds):
            acc[j] += grads[i][a:b]
            if owners[j] != i:
                nb = (b - a) * item
                trace.add(step=0, src=i, dst=owners[j], nbytes=nb, chunk=j, phase="push", reduced=nb)
    stage("push", grads, acc, step=0)
    # update: SGD step on each shard with the mean gradient
    for j in range(len(bounds)):
        shards[j] = shards[j] - lr * acc[j] / n
    stage("update", grads, shards)
    # pull: every worker fetches every shard
    new = np.concatenate(shards)
    for j, (a, b) in enumerate(bounds):
        for i in range(n):
            if owners[j] != i:
                trace.add(step=1, src=owners[j], dst=i, nbytes=(b - a) * item, chunk=j, phase="pull")
    workers = tuple(new.copy() for _ in range(n))
    stage("pull", workers, shards, step=1)
    total = np.concatenate(acc)
    return PSRound(
        params=new.reshape(shape),
        gradient_sum=total.reshape(shape),
        worker_params=tuple(w.reshape(shape) for w in workers),
        trace=trace,
        stages=tuple(stages),
        bounds=tuple(bounds),
        server_ranks=tuple(owners),
        colocated=colocated,
        lr=lr,
    )


def ps_round(params, gradients: Sequence, servers: int = 1, lr: float = 0.1,
             colocated: bool = False, record: bool = True) -> PSRound:
    r"""Run one synchronous parameter-server round on real arrays.

    ``params`` (any shape) are the current parameters; ``gradients`` holds one
    array of the same shape per worker (n = ``len(gradients)``). The flattened
    parameters are split into k = ``servers`` shards with ``np.array_split``'s
    rule (:func:`shard_bounds`). Server j receives shard j of every gradient,
    sums them, and updates

    .. math:: w_j \leftarrow w_j - \eta\,\frac{1}{n}\sum_{i=1}^{n} g_{i,j}

    with :math:`\eta` = ``lr``; then every worker pulls every shard.

    Placement: ``colocated=False`` puts the k servers on k machines of their
    own (trace ranks n..n+k-1); ``colocated=True`` puts shard j on worker j
    (needs k <= n), and a worker's exchange with its own shard is not a
    network message, so it is not in the trace. Each message carries
    ``shard length x itemsize`` bytes; step 0 is the push, step 1 the pull.
    ``record=True`` keeps a copy of every buffer after each stage
    (``PSRound.stages``, for pictures); large runs pass ``False``.

    Raises ValueError naming the parameter for k < 1, more shards than
    parameters, gradients whose shape differs from ``params``, no gradients
    (n < 1), colocated k > n, or a negative ``lr``.

    >>> r = ps_round([1.0, 2.0, 3.0], [[1.0, 1.0, 1.0], [3.0, 3.0, 3.0]], servers=2, colocated=True, lr=1.0)
    >>> r.params.tolist(), r.trace.bytes_sent.tolist()
    ([-1.0, 0.0, 1.0], [24, 24])
    """
    p, grads = _check_arrays(params, gradients)
    shape = np.asarray(params).shape
    n = len(grads)
    k = check_count("servers", servers, minimum=1)
    if k > p.size:
        raise ValueError(f"servers must be <= the number of parameters ({p.size}) so that every shard "
                         f"holds one, got {k}")
    lr = check_nonnegative("lr", lr)
    owners = server_ranks(n, k, colocated)
    bounds = shard_bounds(p.size, k)
    ranks = n if colocated else n + k
    name = f"ps-{'colocated' if colocated else 'dedicated'}-k{k}"
    return _simulate(p, grads, bounds, owners, ranks, lr, name, colocated, shape, record)


def _sizes_from_fractions(length: int, fractions: Sequence[float]) -> list[int]:
    raw = [f * length for f in fractions]
    sizes = [math.floor(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (sizes[i] - raw[i], i))
    for i in order[: length - sum(sizes)]:
        sizes[i] += 1
    return sizes


def byteps_round(params, gradients: Sequence, cpu_machines: int = 0, lr: float = 0.1,
                 record: bool = True) -> PSRound:
    r"""One BytePS round: summation split between k CPU machines and the n GPU machines.

    The parameters are cut into k shards of (about) f_c L elements for the CPU
    machines (trace ranks n..n+k-1) followed by n shards of f_g L elements,
    one on each GPU machine (ranks 0..n-1), with (f_c, f_g) from
    :func:`byteps_split` (rounded to whole elements, largest remainder first;
    empty shards are dropped). Everything else is :func:`ps_round`: push, sum,
    SGD step, pull. k = 0 is colocated PS (= all-reduce traffic); k >= n is a
    plain sharded PS.

    >>> r = byteps_round(np.zeros(12), [np.ones(12)] * 4, cpu_machines=2)
    >>> [b - a for a, b in r.bounds]   # shares (0.3, 0.3, 0.1 x 4) of 12 elements, rounded
    [4, 4, 1, 1, 1, 1]
    >>> r.trace.bytes_sent.tolist()     # closed form: 1.2 M = 115.2 B each; rounding moves it
    [112, 112, 112, 112, 128, 128]
    """
    p, grads = _check_arrays(params, gradients)
    shape = np.asarray(params).shape
    n = len(grads)
    k = check_count("cpu_machines", cpu_machines, minimum=0)
    lr = check_nonnegative("lr", lr)
    f_c, f_g = byteps_split(n, k)
    sizes = _sizes_from_fractions(p.size, [f_c] * k + [f_g] * n)
    owners_all = list(range(n, n + k)) + list(range(n))
    bounds, owners, start = [], [], 0
    for size, owner in zip(sizes, owners_all):
        if size > 0:
            bounds.append((start, start + size))
            owners.append(owner)
        start += size
    return _simulate(p, grads, tuple(bounds), tuple(owners), n + k, lr, f"byteps-n{n}-k{k}", k == 0, shape,
                     record)


def server_and_ring_volumes(nbytes: float, processes: Sequence[int] | np.ndarray) -> dict[str, np.ndarray]:
    r"""The hot spot: a separate server's NIC against a ring rank's, and note 002's colocated counts.

    With M = ``nbytes`` and n workers (``processes``):

    * ``"ps_separate_each_way"``: :math:`nM`, one server on a machine of its own
      (eq-ps-apart with k = 1), its NIC per direction;

    and with n ranks, one of which holds the server (a colocated PS with k = 1):

    * ``"ps_server_total"``: :math:`2(n-1)M`, bytes in *plus* out at the server;
    * ``"ring_rank_sent"``: :math:`2(n-1)M/n`, bytes one ring rank *sends*;
    * ``"ps_server_each_way"``: :math:`(n-1)M`, the server's NIC per direction;
    * ``"ring_rank_each_way"``: :math:`2(n-1)M/n`, a ring rank's NIC per direction;
    * ``"processes"``: the values of n, as floats (the x axis of a figure).

    The first two are the note's (its letters: N bytes, P processes); they
    count different things (both directions vs one). Per direction the
    ratio is n/2, not n.

    >>> v = server_and_ring_volumes(1.0, [4])
    >>> {k: v[k].tolist() for k in ("ps_separate_each_way", "ps_server_total", "ring_rank_sent", "ps_server_each_way")}
    {'ps_separate_each_way': [4.0], 'ps_server_total': [6.0], 'ring_rank_sent': [1.5], 'ps_server_each_way': [3.0]}
    """
    m = check_nonnegative("nbytes", nbytes)
    p = np.asarray(processes)
    if p.ndim != 1 or p.size < 1 or not np.issubdtype(p.dtype, np.integer) or (p < 1).any():
        raise ValueError(f"processes must be a non-empty list of whole numbers >= 1, got {processes!r}")
    p = p.astype(float)
    each_way = np.array([ps_traffic(m, int(q), 1, colocated=True).shard_host for q in p])
    ring = np.array([cost.ring_bytes_per_rank(m, int(q)) for q in p])
    separate = np.array([ps_traffic(m, int(q), 1).shard_host for q in p])
    return {
        "ps_separate_each_way": separate,
        "ps_server_total": 2 * each_way,
        "ring_rank_sent": ring,
        "ps_server_each_way": each_way,
        "ring_rank_each_way": ring,
        "processes": p,
    }


def sharding_curves(nbytes: float, n: int, bandwidth: float, server_bandwidth: float | None = None,
                    ks: Sequence[int] | None = None) -> dict:
    r"""Round time against the number of server machines k: the results behind the sharding figures.

    Bandwidth terms only, push and pull pipelined (:func:`commlib.cost.ps_time`).
    Returns ``"k"`` (default 1..2n) with ``"ps"`` (k separate servers, s),
    ``"byteps_k"`` (0..max k) with ``"byteps"`` (:func:`commlib.cost.byteps_time`,
    its CPU machines at ``server_bandwidth``), the scalars ``"ring"`` and ``"colocated"``
    (n shards on the workers), ``"same_cards"`` for each k (the fastest all-reduce on the PS's n + k
    cards, :func:`allreduce_on_same_cards`), ``"k_star"`` (:func:`smallest_k_to_beat_ring`),
    ``"winner"`` for each k (:func:`compare_ps_ring`: the PS against the ring on the workers' cards),
    ``"winner_same_cards"`` for each k (the same, on the same cards) and the inputs.

    >>> c = sharding_curves(1e9, 4, 1e9)
    >>> c["ps"].tolist()[:4], c["ring"], c["k_star"]
    ([4.0, 2.0, 1.3333333333333333, 1.0], 1.5, 3)
    >>> c["winner"][:3]
    ['ring all-reduce', 'ring all-reduce', 'PS']
    """
    n = check_count("n", n)
    ks = np.arange(1, 2 * n + 1) if ks is None else np.asarray([check_count("k", k) for k in ks])
    kb = np.arange(0, int(ks.max()) + 1)
    return {
        "nbytes": nbytes, "n": n, "bandwidth": bandwidth, "server_bandwidth": server_bandwidth,
        "k": ks,
        "ps": np.array([ps_time(nbytes, n, bandwidth, servers=int(k), server_bandwidth=server_bandwidth)
                        for k in ks]),
        "byteps_k": kb,
        "byteps": np.array([byteps_time(nbytes, n, int(k), bandwidth, server_bandwidth) for k in kb]),
        "ring": cost.allreduce_time(nbytes, n, bandwidth, algorithm="ring"),
        "same_cards": np.array([allreduce_on_same_cards(nbytes, n, int(k), bandwidth, server_bandwidth)
                                for k in ks]),
        "colocated": ps_time(nbytes, n, bandwidth, servers=n, colocated=True),
        "k_star": smallest_k_to_beat_ring(nbytes, n, bandwidth, server_bandwidth),
        "winner": [compare_ps_ring(nbytes, n, int(k), bandwidth, server_bandwidth).winner for k in ks],
        "winner_same_cards": [compare_ps_ring(nbytes, n, int(k), bandwidth, server_bandwidth).winner_same_cards
                              for k in ks],
    }


def demo_round(n: int = 3, k: int = 2, colocated: bool = False, length: int = 6, seed: int = 0,
               lr: float = 1.0) -> PSRound:
    """A small round on readable whole numbers (for pictures): parameters 0-9 and gradients that are
    multiples of n, so the mean gradient and the new parameters stay whole.

    >>> demo_round(2, 1, length=3).params.tolist()
    [8.0, 6.0, 5.0]
    """
    rng = np.random.default_rng(seed)
    params = rng.integers(0, 10, size=length).astype(float)
    grads = [n * rng.integers(0, 3, size=length).astype(float) for _ in range(n)]
    return ps_round(params, grads, servers=k, colocated=colocated, lr=lr)


def traffic_check(configs: Sequence[tuple[int, int, bool]] = ((4, 1, False), (4, 2, False), (4, 4, False),
                                                               (4, 1, True), (4, 2, True), (4, 4, True)),
                  length: int = 8, seed: int = 0) -> list[dict]:
    """Executed rounds (:func:`demo_round`, ``length`` float64 values) against :func:`ps_traffic`.

    Each config is ``(n, k, colocated)``; each row gives the most bytes one
    machine sent and received in the trace, the closed form's busiest NIC
    each way, and whether they are equal.

    >>> all(row["equal"] for row in traffic_check())
    True
    """
    rows = []
    for n, k, col in configs:
        r = demo_round(n, k, col, length, seed, 0.1)
        m = length * r.params.dtype.itemsize
        closed = ps_traffic(m, n, k, colocated=col)
        sent, recv = int(r.trace.bytes_sent.max()), int(r.trace.bytes_received.max())
        rows.append({"workers": n, "servers": k, "colocated": col, "most_sent": sent, "most_received": recv,
                     "closed_form": closed.busiest, "equal": max(sent, recv) == closed.busiest})
    return rows
