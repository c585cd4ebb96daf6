r"""Gradient compression with error feedback, trained on the book's problem against the uncompressed control.

Each of n workers computes a mini-batch gradient of the softmax-regression
problem of :mod:`commlib.sgd.training` (a matrix of shape (features + 1) x
classes), compresses it, and the compressed messages are combined; every
worker then applies the same averaged update. Three compressors:

* **PowerSGD** (Vogels et al. 2019): one step of power iteration on the
  gradient matrix G (d1 x d2) gives rank-r factors :math:`U = GV`,
  :math:`V \leftarrow G^\top \hat U` (:math:`\hat U` orthonormalised; the paper's
  P, Q and M). Both are linear in G, so they can be *all-reduced*:
  :math:`(d_1 + d_2)r` numbers instead of :math:`d_1 d_2`
  (:func:`commlib.cost.powersgd_numbers`). V is reused as the next step's start.
* **Top-k**: keep the k entries of largest magnitude. Different workers keep
  different indices, so the messages cannot be summed as dense vectors on the
  way: here they are *all-gathered*, values and indices, (n - 1) messages of
  k (4 + 4) bytes: the bytes grow with the number of workers n
  (:func:`bytes_by_workers`). Sparse all-reduces avoid that growth in two
  phases, as sign below, each chunk's owner re-selecting the largest entries
  of their sum (a second approximation); they are not modelled here.
* **Sign** (1-bit SGD, Seide et al. 2014), summed in two phases as DeepSpeed's
  1-bit Adam does (its compressed all-reduce): the gradient is cut into n
  chunks, one owned by each worker; each worker sends the signs of every other
  chunk, packed eight to a byte with one scale (the mean magnitude), to its
  owner (an all-to-all); each owner averages the n chunks it holds, adds its
  own *server* error, and sends the re-signed average with one scale to every
  other worker (an all-gather). About :math:`2\frac{n-1}{n}\,d/8` bytes plus
  2(n - 1) scales: like an all-reduce, about 32 times below fp32 whatever n,
  until the scales count.

All three keep the part they did not send (*error feedback*; sign keeps it on
the workers and on the owners) and add it to the next gradient, so nothing is
lost, only delayed. Bytes are what one
worker sends per step (fp32 values, ring all-reduce for dense messages).

>>> r = train_compressed("powersgd", lr=0.5, steps=20, rank=2)
>>> r.bytes_per_step < train_compressed("none", lr=0.5, steps=20).bytes_per_step
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..units import check_count, check_positive
from . import cost
from .book_problem import default_problem

__all__ = ["METHODS", "DEFAULT_RANK", "DEFAULT_K", "CompressedRun", "step_bytes", "problem_shape", "bytes_by_workers",
           "crossover_workers", "train_compressed", "best_over_grid"]

METHODS = ("none", "powersgd", "topk", "sign")
#: Defaults of :func:`train_compressed`: PowerSGD's rank r and the entries top-k keeps (10 % of 210).
DEFAULT_RANK = 2
DEFAULT_K = 21
_VALUE = 4   # fp32 bytes a number
_INDEX = 4   # int32 bytes an index


def step_bytes(method: str, rows: int, cols: int, workers: int, rank: int = 2, k: int = 21,
               value_bytes: int = _VALUE, index_bytes: int = _INDEX) -> float:
    r"""Bytes one worker sends per step for a ``rows`` x ``cols`` gradient (the formula the simulation counts).

    With :math:`d` = rows x cols entries, n = ``workers`` and values of :math:`s_v` = ``value_bytes``
    bytes (4 for fp32, the default; 2 for bf16): the control all-reduces
    :math:`2\frac{n-1}{n} s_v d` bytes (a ring); PowerSGD all-reduces its factors,
    :math:`2\frac{n-1}{n} s_v(\text{rows} + \text{cols})r`; top-k is all-gathered, one message
    to each of the n - 1 others, a value and an index of :math:`s_i` = ``index_bytes`` bytes (4, an int32, by
    default) an entry: :math:`(n-1)\,(s_v + s_i)k`;
    sign is summed in two phases (an all-to-all of
    packed sign chunks to their owners, then an all-gather of the owners' re-signed chunks), each phase
    n - 1 chunks of :math:`\lceil d/n \rceil` signs packed in :math:`\lceil \lceil d/n \rceil / 8 \rceil`
    bytes with a 4-byte scale. So top-k's bytes grow with n while the others stay under twice their
    message (sign's until its 2(n - 1) scales count).

    >>> [round(step_bytes(m, 21, 10, 4)) for m in METHODS]
    [1260, 372, 504, 66]
    >>> [round(step_bytes(m, 21, 10, 64)) for m in METHODS]
    [1654, 488, 10584, 630]
    >>> round(step_bytes("none", 4096, 4096, 64) / step_bytes("sign", 4096, 4096, 64))
    32
    >>> round(step_bytes("none", 4096, 4096, 64, value_bytes=2) / step_bytes("sign", 4096, 4096, 64))
    16
    """
    rows = check_count("rows", rows, minimum=1)
    cols = check_count("cols", cols, minimum=1)
    workers = check_count("workers", workers, minimum=1)
    value_bytes = check_count("value_bytes", value_bytes, minimum=1)
    index_bytes = check_count("index_bytes", index_bytes, minimum=1)
    d = rows * cols
    ring = 2 * (workers - 1) / workers
    if method == "none":
        return ring * d * value_bytes
    if method == "powersgd":
        return ring * cost.powersgd_numbers(rows, cols, rank) * value_bytes
    if method == "topk":
        return (workers - 1) * k * (value_bytes + index_bytes)
    if method == "sign":
        chunk = -(-d // workers)                      # entries a worker owns, the last chunk padded
        return 2 * (workers - 1) * (-(-chunk // 8) + _VALUE)
    raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


def problem_shape() -> tuple[int, int]:
    """The gradient's shape on the book's problem: (features + 1) x classes."""
    p = default_problem()
    return p.x_train.shape[1], p.classes


def bytes_by_workers(workers, rows: int | None = None, cols: int | None = None, rank: int = DEFAULT_RANK,
                     k: int = DEFAULT_K) -> dict[str, list[float]]:
    """Bytes one worker sends per step, for every method of :data:`METHODS` and every n in ``workers``.

    >>> b = bytes_by_workers((4, 16))
    >>> b["topk"][1] > b["none"][1] > b["topk"][0]
    True
    """
    if rows is None or cols is None:
        rows, cols = problem_shape()
    return {m: [float(step_bytes(m, rows, cols, n, rank, k)) for n in workers] for m in METHODS}


def crossover_workers(method: str, rows: int | None = None, cols: int | None = None, rank: int = DEFAULT_RANK,
                      k: int = DEFAULT_K, limit: int = 4096, value_bytes: int = _VALUE,
                      index_bytes: int = _INDEX) -> int | None:
    r"""The fewest workers (2 or more) at which ``method`` sends more than the control's bytes; ``None`` up to ``limit``.

    Top-k's pairs of :math:`s_v + s_i` bytes (value and index, ``index_bytes``) against the ring's :math:`s_v`
    bytes, about twice over: top-k keeping a share :math:`\rho` of the entries sends more once
    :math:`n > 2 s_v / ((s_v + s_i)\rho)`, :math:`1/\rho` in fp32 and :math:`2/(3\rho)` in bf16; sign only
    once its chunks are so small that their 4-byte scales outweigh the entries they stand for (n near d);
    PowerSGD never.

    >>> crossover_workers("topk"), crossover_workers("sign"), crossover_workers("powersgd")
    (11, 169, None)
    >>> crossover_workers("topk", value_bytes=2)
    7
    >>> crossover_workers("topk", 1000, 1000, k=10_000, index_bytes=2)   # 2-byte indices: n > 4/(3 rho)
    134
    """
    if method not in METHODS or method == "none":
        raise ValueError(f"method must be one of {', '.join(METHODS[1:])}, got {method!r}")
    if rows is None or cols is None:
        rows, cols = problem_shape()
    limit = check_count("limit", limit, minimum=2)
    for n in range(2, limit + 1):
        if step_bytes(method, rows, cols, n, rank, k, value_bytes, index_bytes) > step_bytes("none", rows, cols, n,
                                                                                             rank, k, value_bytes):
            return n
    return None


@dataclass(frozen=True)
class CompressedRun:
    """One training run: ``losses`` at ``steps``, bytes one worker sent per step, the rate used."""

    method: str
    lr: float
    steps: np.ndarray
    losses: np.ndarray
    bytes_per_step: float

    @property
    def final_loss(self) -> float:
        """Mean of the last three recorded losses (less noisy than the last alone)."""
        return float(np.mean(self.losses[-3:]))

    @property
    def total_bytes(self) -> np.ndarray:
        """Bytes one worker has sent by each recorded step."""
        return self.steps * self.bytes_per_step


def _orthonormal(p: np.ndarray) -> np.ndarray:
    q, _ = np.linalg.qr(p)
    return q


def _sign_chunks(g: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Each chunk of ``g`` (along its last axis, consecutive, of ``sizes`` entries, none empty) as its
    signs times its mean magnitude: one scale a chunk (a row per worker where ``g`` has rows)."""
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    scales = np.add.reduceat(np.abs(g), starts, axis=-1) / sizes
    return np.sign(g) * np.repeat(scales, sizes, axis=-1)


def train_compressed(method: str, lr: float, steps: int = 300, workers: int = 4, batch: int = 32,
                     rank: int = DEFAULT_RANK, k: int = DEFAULT_K, seed: int = 0, eval_every: int = 20, problem=None,
                     record: bool = True) -> CompressedRun:
    """Train with ``method`` (one of :data:`METHODS`) and error feedback; return losses and bytes.

    The loss is recorded every ``eval_every`` steps and after the last; ``record=False`` evaluates it only
    at the last three of those points, which :attr:`CompressedRun.final_loss` averages (the others are
    NaN): the same run, faster.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    lr = check_positive("lr", lr)
    steps = check_count("steps", steps, minimum=1)
    workers = check_count("workers", workers, minimum=1)
    p = default_problem() if problem is None else problem
    shape = (p.x_train.shape[1], p.classes)
    rank = check_count("rank", rank, minimum=1, maximum=min(shape))
    k = check_count("k", k, minimum=1, maximum=p.dim)
    # The idea: each worker compresses its gradient plus its error, the messages are combined, the rest is kept.
    rng = np.random.default_rng(seed)
    w = p.init()
    errors = np.zeros((workers, p.dim))                     # one row a worker
    sizes = np.array([len(c) for c in np.array_split(np.arange(p.dim), workers)])   # sign: entries each owns
    sizes = sizes[sizes > 0]
    server = np.zeros(p.dim)                                # sign: the owners' error feedback
    v_mat = rng.normal(size=(shape[1], rank))                # PowerSGD's V, carried from step to step
    points = sorted({t for t in range(eval_every, steps + 1, eval_every)} | {steps})
    kept = set(points if record else points[-3:])
    rec_s, rec_l = [0], [p.loss(w) if record or len(points) < 3 else float("nan")]
    for t in range(steps):
        grads = p.stochastic_gradients(w, rng, batch, workers) + errors
        if method == "none":
            sent = grads
        elif method == "powersgd":
            mats = grads.reshape(workers, *shape)
            u_mat = _orthonormal(np.mean(mats @ v_mat, axis=0))                 # all-reduce of U = GV
            v_mat = np.mean(mats.transpose(0, 2, 1) @ u_mat, axis=0)           # all-reduce of V = G^T U
            sent = np.broadcast_to((u_mat @ v_mat.T).ravel(), grads.shape)    # every worker applies the same
        elif method == "topk":
            keep = np.argpartition(np.abs(grads), -k, axis=1)[:, -k:]
            sent = np.zeros_like(grads)
            np.put_along_axis(sent, keep, np.take_along_axis(grads, keep, axis=1), axis=1)
        else:  # sign, summed in two phases with one scale per chunk
            sent = _sign_chunks(grads, sizes)                                # all-to-all to the owners
            avg = np.mean(sent, axis=0) + server
            out = _sign_chunks(avg, sizes)                                   # all-gather from the owners
            server = avg - out
        errors = grads - sent
        w = w - lr * (out if method == "sign" else np.mean(sent, axis=0))
        if (t + 1) % eval_every == 0 or t + 1 == steps:
            rec_s.append(t + 1)
            rec_l.append(p.loss(w) if t + 1 in kept else float("nan"))
    return CompressedRun(method, lr, np.asarray(rec_s), np.asarray(rec_l),
                         float(step_bytes(method, shape[0], shape[1], workers, rank, k)))


def best_over_grid(method: str, lrs=(0.05, 0.1, 0.2, 0.5, 1.0), **kwargs) -> CompressedRun:
    """The run with the lowest final loss over a grid of learning rates (each rival at its best rate)."""
    runs = [train_compressed(method, lr, **kwargs) for lr in lrs]
    finite = [r for r in runs if np.isfinite(r.final_loss)]
    return min(finite, key=lambda r: r.final_loss)
