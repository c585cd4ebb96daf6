r"""The SGD calculator of chapter 4 in plain Python: the same code in a kernel and in the website's page.

The chapter's simulations (:mod:`commlib.sgd.simulate`, :mod:`commlib.sgd.training`) use
numpy; the website's Python (Pyodide's core) has none. This module is the
calculator's own, smaller, numpy-free model, and the kernel calls it too, so
that a reader sees the same numbers in JupyterLab and on the website:

* **timing**: the six protocols of :mod:`commlib.sgd` (Dutta et al. 2018,
  section 2), event by event, one stream of compute times per learner
  (common random numbers, as in :mod:`commlib.sgd`); the staleness of a
  gradient is the number of updates between the version its learner read and
  the version it is applied to;
* **training**: the schedule replayed on softmax regression over seeded
  Gaussian clusters drawn like the chapter's problem (20 features, centres
  :math:`\mathcal N(0, 0.6^2 I)`, unit noise) but smaller (5 classes, 500
  training and 500 test samples), each gradient evaluated on the parameters
  its learner read. Small, so that a change recomputes in about 50 ms in the page.

Every number comes from :class:`random.Random` (Mersenne Twister, seeded with
a string, the same on every platform and Python version), plain float
arithmetic, and sums taken with :func:`math.fsum` (correctly rounded, so the
order of a sum never matters): a kernel on any machine and the page print the
same text. The random streams are not numpy's, so the values differ from the
chapter's numpy runs by sampling noise, not in law.

Times are in units of one compute time of the law (``exponential``: rate 1,
mean 1; ``shifted_exponential``: 1 plus an exponential of mean 1;
``pareto``: Pareto I with minimum 1 and tail index 2.5; ``deterministic``: 1).

>>> r = sgd_calculator_results("async", workers=4, k=1, updates=400)
>>> r["gradients per update"], r["K used"]
('1', '1')
>>> sgd_calculator_results("k_sync", workers=4, k=5)
Traceback (most recent call last):
...
ValueError: K must lie between 1 and workers = 4, got K = 5
"""

from __future__ import annotations

import functools
import heapq
import math
import random
from dataclasses import dataclass
from operator import mul

from ..units import check_count, check_positive

__all__ = ["PROTOCOLS", "LAWS", "Schedule", "schedule", "CalculatorProblem", "calculator_problem", "train",
           "sgd_calculator_results", "RATE_PER_GRADIENT"]

#: The protocols (as in :data:`commlib.sgd.simulate.PROTOCOLS`).
PROTOCOLS = ("sync", "k_sync", "k_batch_sync", "async", "k_async", "k_batch_async")

#: The compute-time laws of the calculator (as :data:`commlib.sgd.simulate.DISTRIBUTIONS` with their defaults).
LAWS = ("exponential", "shifted_exponential", "pareto", "deterministic")

_PARETO_SHAPE = 2.5

#: Each law's mean, in units of its scale: times are divided by it, so they read in mean compute times.
LAW_MEANS = {"exponential": 1.0, "shifted_exponential": 2.0, "pareto": _PARETO_SHAPE / (_PARETO_SHAPE - 1),
             "deterministic": 1.0}


def _law(name: str):
    """``draw(rng) -> float``: one compute time of law ``name`` (in units of the law's scale)."""
    log = math.log
    if name == "exponential":
        return lambda rng: -log(1.0 - rng.random())
    if name == "shifted_exponential":
        return lambda rng: 1.0 - log(1.0 - rng.random())
    if name == "pareto":
        power = -1.0 / _PARETO_SHAPE
        return lambda rng: (1.0 - rng.random()) ** power
    if name == "deterministic":
        return lambda rng: 1.0
    raise ValueError(f"compute-time distribution must be one of {', '.join(LAWS)}; got {name!r}")


@dataclass(frozen=True)
class Schedule:
    """What the event loop of one protocol produced.

    ``times``: the time of each update; ``staleness``: of each applied gradient,
    ``K`` per update in the order applied; ``k``: gradients per update.
    """

    protocol: str
    workers: int
    k: int
    times: tuple[float, ...]
    staleness: tuple[int, ...]

    @property
    def mean_time_per_update(self) -> float:
        """Time of the last update / number of updates."""
        return self.times[-1] / len(self.times)

    @property
    def mean_staleness(self) -> float:
        """The mean staleness of the applied gradients."""
        return math.fsum(self.staleness) / len(self.staleness)


def _streams(workers: int, seed: int, compute: str, slowdown: float):
    """Per learner ``w``, ``next_time(w)``: its next compute time (learner 0 is ``slowdown`` times slower)."""
    draw = _law(compute)
    rngs = [random.Random(f"gotw-sgd-calculator:{seed}:{w}") for w in range(workers)]
    factors = [slowdown] + [1.0] * (workers - 1)
    return lambda w: draw(rngs[w]) * factors[w]


def schedule(protocol: str, workers: int, k: int | None, compute: str = "exponential", slowdown: float = 1.0,
             updates: int = 600, seed: int = 0) -> Schedule:
    """The update times and staleness of ``updates`` updates of ``protocol`` (see :mod:`commlib.sgd`).

    ``k`` is ignored by ``sync`` (K = P) and ``async`` (K = 1). Ties go to the
    lower learner index.

    >>> s = schedule("k_async", workers=3, k=2, compute="deterministic", updates=3)
    >>> s.times, s.staleness
    ((1.0, 2.0, 3.0), (0, 0, 1, 0, 1, 0))
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {protocol!r}")
    P = check_count("workers", workers, 1)
    K = P if protocol == "sync" else 1 if protocol == "async" else check_count("K", k, 1)
    if K > P:   # name the bound the reader set: not "K must be >= 1 and <= 1"
        raise ValueError(f"K must be 1 when workers = 1, got K = {K}" if P == 1 else
                         f"K must lie between 1 and workers = {P}, got K = {K}")
    slowdown = check_positive("straggler factor", slowdown)
    if slowdown < 1:
        raise ValueError(f"straggler factor must be >= 1 (1 = no straggler), got {slowdown}")
    updates = check_count("updates", updates, 1)
    nxt = _streams(P, check_count("seed", seed, 0), compute, slowdown)
    times: list[float] = []
    stale: list[int] = []
    pop, push, replace = heapq.heappop, heapq.heappush, heapq.heapreplace
    t = 0.0
    if protocol in ("sync", "k_sync"):              # every round: P fresh jobs, the first K applied
        for _ in range(updates):
            t += sorted(nxt(w) for w in range(P))[K - 1]
            times.append(t)
        stale = [0] * (updates * K)
    elif protocol == "k_batch_sync":                 # the first K mini-batches from anyone; the rest cancelled
        for _ in range(updates):
            heap = [(t + nxt(w), w) for w in range(P)]
            heapq.heapify(heap)
            for i in range(K):
                t, w = pop(heap)
                if i < K - 1:
                    push(heap, (t + nxt(w), w))
            times.append(t)
        stale = [0] * (updates * K)
    else:
        heap = [(nxt(w), w) for w in range(P)]
        heapq.heapify(heap)
        read = [0] * P                               # the version each learner's running job read
        for u in range(updates):
            if protocol == "k_batch_async":          # K mini-batches from anyone; nobody waits
                for i in range(K):
                    t, w = heap[0]
                    stale.append(u - read[w])
                    read[w] = u + 1 if i == K - 1 else u
                    replace(heap, (t + nxt(w), w))
            else:                                    # async (K = 1) and K-async: K learners, who wait
                got = [pop(heap)[1] for _ in range(K - 1)]
                t, w = heap[0]
                got.append(w)
                stale.extend(u - read[x] for x in got)
                replace(heap, (t + nxt(w), w))
                for x in got[:-1]:
                    push(heap, (t + nxt(x), x))
                for x in got:
                    read[x] = u + 1
            times.append(t)
    return Schedule(protocol, P, K, tuple(times), tuple(stale))


# --------------------------------------------------------------------------- the training problem


@dataclass(frozen=True, eq=False)
class CalculatorProblem:
    """Softmax regression on seeded Gaussian clusters, in plain lists.

    ``x_train[i]`` / ``x_test[i]`` end with 1.0 (the bias); labels in
    ``[0, classes)``. Parameters: one list of ``features + 1`` weights per class.
    """

    x_train: tuple[tuple[float, ...], ...]
    y_train: tuple[int, ...]
    x_test: tuple[tuple[float, ...], ...]
    y_test: tuple[int, ...]
    classes: int

    def init(self) -> list[list[float]]:
        """All-zero weights (every class equally likely)."""
        return [[0.0] * len(self.x_train[0]) for _ in range(self.classes)]

    def loss(self, weights) -> float:
        """Mean cross-entropy (nats) over the training set."""
        fsum, exp, log = math.fsum, math.exp, math.log
        terms = []
        for x, y in zip(self.x_train, self.y_train):
            z = [fsum(map(mul, wc, x)) for wc in weights]
            top = max(z)
            terms.append(top + log(fsum([exp(v - top) for v in z])) - z[y])
        return fsum(terms) / len(terms)

    def error(self, weights) -> float:
        """Test error rate: the fraction of held-out samples whose most likely class is wrong (ties: lowest class)."""
        fsum = math.fsum
        wrong = 0
        for x, y in zip(self.x_test, self.y_test):
            z = [fsum(map(mul, wc, x)) for wc in weights]
            wrong += z.index(max(z)) != y
        return wrong / len(self.y_test)


def _gauss(rng: random.Random) -> float:
    """A standard normal draw (Marsaglia's polar method: only ``log`` and ``sqrt``)."""
    while True:
        u, v = 2.0 * rng.random() - 1.0, 2.0 * rng.random() - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            return u * math.sqrt(-2.0 * math.log(s) / s)


@functools.lru_cache(maxsize=4)
def calculator_problem(seed: int = 0, classes: int = 5, features: int = 20, n_train: int = 500,
                       n_test: int = 500, separation: float = 0.6) -> CalculatorProblem:
    """The calculator's problem: ``classes`` centres drawn from N(0, separation^2 I), each sample a centre plus N(0, I).

    >>> p = calculator_problem(seed=1, n_train=30, n_test=20)
    >>> len(p.x_train), len(p.x_train[0]), len(p.y_test)
    (30, 21, 20)
    """
    rng = random.Random(f"gotw-sgd-calculator-problem:{seed}")
    centres = [[separation * _gauss(rng) for _ in range(features)] for _ in range(classes)]

    def draw(n):
        ys = [rng.randrange(classes) for _ in range(n)]
        xs = tuple(tuple([c + _gauss(rng) for c in centres[y]] + [1.0]) for y in ys)
        return xs, tuple(ys)

    x_train, y_train = draw(check_count("n_train", n_train, 1))
    x_test, y_test = draw(check_count("n_test", n_test, 1))
    return CalculatorProblem(x_train, y_train, x_test, y_test, classes)


def _coefficients(weights, x, y: int) -> list[float]:
    """``softmax(x W) - onehot(y)``: the per-class factors of one sample's cross-entropy gradient."""
    fsum, exp = math.fsum, math.exp
    z = [fsum(map(mul, wc, x)) for wc in weights]
    top = max(z)
    e = [exp(v - top) for v in z]
    total = fsum(e)
    q = [v / total for v in e]
    q[y] -= 1.0
    return q


def train(problem: CalculatorProblem, sched: Schedule, updates: int, lr: float = 0.5, batch: int = 8,
          seed: int = 0):
    """Replay the first ``updates`` updates of ``sched``; return (final weights, training loss, test error).

    Update ``j`` applies ``lr`` times the mean of its ``K`` mini-batch gradients, each taken on the
    parameters of version ``j - staleness`` (what its learner read), on ``batch`` samples drawn
    uniformly with replacement: ``w_c -= lr / (K batch) * sum_s (softmax(x_s W) - onehot(y_s))_c x_s``.
    """
    K = sched.k
    fsum = math.fsum
    rng = random.Random(f"gotw-sgd-calculator-data:{seed}")
    xs, ys, n = problem.x_train, problem.y_train, len(problem.y_train)
    w = problem.init()
    keep = max(sched.staleness[:updates * K]) + 1
    history = {0: w}
    scale = lr / (K * batch)
    for j in range(updates):
        rows, coefs = [], []
        for s in sched.staleness[j * K:(j + 1) * K]:
            read = history[j - s]
            for _ in range(batch):
                i = rng.randrange(n)
                rows.append(xs[i])
                coefs.append(_coefficients(read, xs[i], ys[i]))
        columns = list(zip(*rows))
        w = [[wi - scale * fsum(map(mul, f, col)) for wi, col in zip(wc, columns)]
             for wc, f in zip(w, zip(*coefs))]
        history[j + 1] = w
        history.pop(j + 1 - keep, None)
    return w, problem.loss(w), problem.error(w)


#: The learning rate per gradient of the calculator's training runs: an update that averages ``K`` gradients
#: takes ``K`` times it (the linear scaling rule), so that every protocol trains at a rate that suits it. On the
#: calculator's problem and budget the best rate per gradient of every protocol lies between 0.2 and 0.4
#: (``tests/sgd/test_calculator_model.py`` checks it).
RATE_PER_GRADIENT = 0.3


def _decimals(spread: float) -> int:
    """Decimals that quote a value no finer than ``spread`` (its first significant digit)."""
    return max(0, -math.floor(math.log10(spread))) if spread > 0 else 1


def sgd_calculator_results(protocol: str = "k_async", workers: int = 8, k: int = 2, compute: str = "exponential",
                           slowdown: float = 1.0, updates: int = 600, gradients: int = 160,
                           seed: int = 0) -> dict[str, str]:
    """The SGD calculator of chapter 4: time per update, staleness and the loss a short training run reaches.

    ``updates`` timing updates of ``protocol`` with ``workers`` learners (``k`` per update where the
    protocol uses it), compute times from ``compute``, one learner ``slowdown`` times slower (1 = none);
    then the calculator's problem (:func:`calculator_problem`) trained on the same schedule for the same
    wall-clock budget whatever the protocol: ``gradients / workers`` mean compute times, the time in which
    ``workers`` learners compute about ``gradients`` gradients between them. Every protocol trains at
    :data:`RATE_PER_GRADIENT` times its ``K`` per update, batch 8. The test error is quoted no finer than
    its standard error on the test samples. Raises ValueError naming a bad parameter.
    """
    sched = schedule(protocol, workers, k, compute, slowdown, updates, seed)
    mean = LAW_MEANS[compute]           # the schedule's times are in the law's scale; report mean compute times
    budget = check_count("gradients", gradients, 1) / sched.workers
    longer = sched
    while longer.times[-1] / mean <= budget:       # the timing run ends before the budget: a longer one
        longer = schedule(protocol, workers, k, compute, slowdown, 2 * len(longer.times), seed)
    trained = sum(1 for t in longer.times if t / mean <= budget)
    lr = RATE_PER_GRADIENT * sched.k
    problem = calculator_problem()
    if trained:
        _, loss, error = train(problem, longer, trained, lr=lr, seed=seed)
        run = f"{trained} update" + ("" if trained == 1 else "s")
    else:
        w = problem.init()
        loss, error = problem.loss(w), problem.error(w)
        run = "no update: the first one comes later"
    se = 100 * math.sqrt(max(error * (1 - error), 1e-12) / len(problem.y_test))
    d = _decimals(se)
    per_update = sched.mean_time_per_update / mean
    return {
        "K used": f"{sched.k}",
        "mean time per update": f"{per_update:.4f} mean compute times",
        "updates per mean compute time": f"{1.0 / per_update:.3f}",
        "gradients per update": f"{sched.k}",
        "mean staleness": f"{sched.mean_staleness:.3f} updates",
        "largest staleness": f"{max(sched.staleness)} updates",
        "learning rate per update": f"{lr:g} ({RATE_PER_GRADIENT:g} per gradient x K = {sched.k})",
        "training loss after the run": f"{loss:.3f} nats after {budget:g} mean compute times ({run})",
        "test error after the run": (f"{100 * error:.{d}f} % ± {se:.{d}f} % (one standard error on "
                                     f"{len(problem.y_test)} test samples)"),
    }
