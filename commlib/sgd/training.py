r"""A small, real training problem: softmax regression on seeded Gaussian clusters.

The simulations of :mod:`commlib.sgd.simulate` can train something real instead of
only counting events. This module supplies that something: multinomial
logistic (softmax) regression, in numpy, on a data set generated from a seed.

Data. ``classes`` cluster centres :math:`\mu_c` are drawn from
:math:`\mathcal N(0, s^2 I)` in ``features`` dimensions (``s`` is
``separation``); each sample is a centre plus :math:`\mathcal N(0, I)` noise.
The clusters overlap, so even the best linear classifier keeps a non-zero
test error: the problem has a floor, as real problems do.

Model. Parameters :math:`W \in \mathbb R^{(d+1)\times C}` (a bias row
included), stored flat as one vector ``w`` so that optimisers and distance
rules treat it as a point in :math:`\mathbb R^{(d+1)C}`. With
:math:`p = \operatorname{softmax}(xW)` and one-hot label :math:`y`, the loss
of a sample is :math:`-\log p_y` and its gradient :math:`x^\top (p - y)`;
a mini-batch gradient is the mean over the batch (Bishop 2006, section 4.3.4).

Large-batch training (:func:`train`) follows Goyal et al. (2017), "Accurate,
Large Minibatch SGD: Training ImageNet in 1 Hour": the *linear scaling rule*
(multiply the learning rate by ``k`` when the batch grows ``k``-fold) and
*gradual warm-up* (start at the base rate, grow linearly to the scaled rate
over the warm-up steps).

Units: none physical; losses in nats, error rates as fractions in [0, 1].

>>> p = make_problem(seed=0)
>>> w = p.init()
>>> 0.8 < p.error(w) < 0.95         # all-zero weights: one class guessed for all (~90 % wrong)
True
>>> g = p.gradient(w, p.sample_batch(np_rng(1), 32))
>>> g.shape == w.shape
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..units import check_count, check_nonnegative, check_positive

__all__ = ["Problem", "TrainResult", "make_problem", "train", "np_rng"]


def np_rng(seed: int = 0) -> np.random.Generator:
    """Return ``numpy.random.default_rng(seed)`` (the one way this package makes randomness)."""
    return np.random.default_rng(seed)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass(frozen=True, eq=False)
class Problem:
    """Softmax regression on a fixed data set (see the module docstring).

    ``x_train`` / ``x_test`` carry a trailing column of ones (the bias);
    ``y_train`` / ``y_test`` are integer labels in ``[0, classes)``.
    The parameter vector ``w`` has ``dim = (features + 1) * classes`` entries.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    classes: int
    l2: float = 0.0

    @property
    def features(self) -> int:
        """Number of input features (without the bias column)."""
        return self.x_train.shape[1] - 1

    @property
    def dim(self) -> int:
        """Length of the flat parameter vector."""
        return self.x_train.shape[1] * self.classes

    @property
    def n_train(self) -> int:
        """Number of training samples."""
        return self.x_train.shape[0]

    def init(self) -> np.ndarray:
        """The starting point: all-zero weights (every class equally likely)."""
        return np.zeros(self.dim)

    def _w(self, w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        if w.shape != (self.dim,):
            raise ValueError(f"w must be a vector of length {self.dim}, got shape {w.shape}")
        return w.reshape(self.x_train.shape[1], self.classes)

    def sample_batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Indices of a mini-batch of ``size`` training samples, drawn uniformly with replacement."""
        size = check_count("size", size, 1)
        return rng.integers(0, self.n_train, size=size)

    def gradient(self, w: np.ndarray, batch_indices: np.ndarray) -> np.ndarray:
        r"""Mean cross-entropy gradient over the batch: :math:`\frac1B X_B^\top(\operatorname{softmax}(X_B W) - Y_B)`.

        Plus ``l2 * w`` when the problem has an L2 penalty. Returns a flat
        vector shaped like ``w``.
        """
        W = self._w(w)
        idx = np.asarray(batch_indices)
        if idx.ndim != 1 or idx.size == 0:
            raise ValueError("batch_indices must be a non-empty 1-D array of sample indices")
        if idx.min() < 0 or idx.max() >= self.n_train:
            raise ValueError(f"batch_indices must lie in [0, {self.n_train - 1}]")
        return self._gradient(W, idx)

    def stochastic_gradient(self, w: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        """The gradient on a fresh mini-batch: ``gradient(w, sample_batch(rng, size))`` in one call.

        The batch is drawn here, so its indices need no check: this is the
        form every training loop in the book uses, thousands of times a run.
        """
        if not (isinstance(size, (int, np.integer)) and size >= 1):
            size = check_count("size", size, 1)
        return self._gradient(self._w(w), rng.integers(0, self.n_train, size=size))

    def stochastic_gradients(self, w: np.ndarray, rng: np.random.Generator, size: int, count: int) -> np.ndarray:
        """``count`` gradients at the same ``w`` (one a worker), each on a fresh mini-batch of ``size``.

        The batches are drawn in turn, as ``count`` calls of :meth:`stochastic_gradient` draw them, and the
        gradients equal theirs; computed at once, which is faster. Rows: the workers.

        >>> p = make_problem(seed=0, n_train=100, n_test=10)
        >>> w = np.full(p.dim, 0.01)
        >>> one = [p.stochastic_gradient(w, np_rng(5), 8)]
        >>> rng = np_rng(5); many = p.stochastic_gradients(w, rng, 8, 3)
        >>> many.shape, bool(np.array_equal(many[0], one[0]))
        ((3, 210), True)
        """
        count = check_count("count", count, 1)
        size = check_count("size", size, 1)
        W = self._w(w)
        idx = np.concatenate([rng.integers(0, self.n_train, size=size) for _ in range(count)])
        x = self.x_train[idx]
        p = _softmax(x @ W)
        p[np.arange(idx.size), self.y_train[idx]] -= 1.0
        g = x.reshape(count, size, -1).transpose(0, 2, 1) @ p.reshape(count, size, -1) / size
        if self.l2:
            g = g + self.l2 * W
        return g.reshape(count, -1)

    def _gradient(self, W: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """:meth:`gradient` without its checks (``W`` shaped, ``idx`` valid indices)."""
        x = self.x_train[idx]
        p = _softmax(x @ W)
        p[np.arange(idx.size), self.y_train[idx]] -= 1.0
        g = x.T @ p / idx.size
        if self.l2:
            g = g + self.l2 * W
        return g.ravel()

    def loss(self, w: np.ndarray) -> float:
        """Mean cross-entropy (nats) over the whole training set (plus the L2 term, if any)."""
        W = self._w(w)
        z = self.x_train @ W
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        value = -logp[np.arange(self.n_train), self.y_train].mean()
        if self.l2:
            value += 0.5 * self.l2 * float(np.sum(W * W))
        return float(value)

    def hessian(self, w: np.ndarray) -> np.ndarray:
        r"""The full-batch Hessian of :meth:`loss` at ``w``, a ``dim`` x ``dim`` matrix.

        For softmax regression
        :math:`\nabla^2 L = \frac1N \sum_i \left(\operatorname{diag}(p_i) - p_i p_i^\top\right) \otimes x_i x_i^\top`
        (plus ``l2`` times the identity), with :math:`p_i` the predicted class probabilities of sample
        :math:`i` (Bishop 2006, section 4.3.4). It is positive semi-definite: the loss is convex.
        """
        W = self._w(w)
        x, n = self.x_train, self.n_train
        p = _softmax(x @ W)
        d, c = W.shape
        a = (x[:, :, None] * p[:, None, :]).reshape(n, d * c)
        h = -(a.T @ a) / n
        h4 = h.reshape(d, c, d, c)
        for k in range(c):
            h4[:, k, :, k] += (x * p[:, k:k + 1]).T @ x / n
        if self.l2:
            h += self.l2 * np.eye(d * c)
        return h

    def hessian_vector(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The product of :meth:`hessian` at ``w`` with a vector ``v`` (flat, like ``w``), without forming the matrix."""
        W = self._w(w)
        V = np.asarray(v, dtype=float).reshape(W.shape)
        x = self.x_train
        p = _softmax(x @ W)
        u = x @ V
        r = p * (u - (p * u).sum(axis=1, keepdims=True))
        out = x.T @ r / self.n_train
        if self.l2:
            out = out + self.l2 * V
        return out.ravel()

    def sharpness(self, w: np.ndarray) -> float:
        r"""The largest eigenvalue :math:`\lambda_{\max}` of :meth:`hessian` at ``w``.

        On a quadratic, gradient descent with rate :math:`\eta` is stable only if
        :math:`\eta < 2/\lambda_{\max}`; along the top eigenvector a larger step overshoots and grows.
        The Hessian is small here (``dim`` x ``dim``), so it is formed and handed to LAPACK's symmetric
        eigensolver, which gives the same value on every processor (an iterative solver started from a
        fixed vector did not).

        >>> p = make_problem(seed=0, n_train=200, n_test=10)
        >>> w = p.init()
        >>> h = p.hessian(w)
        >>> v = np.linalg.eigh(h)[1][:, -1]
        >>> bool(np.isclose(p.sharpness(w), v @ p.hessian_vector(w, v)))
        True
        """
        return float(np.linalg.eigvalsh(self.hessian(np.asarray(w, dtype=float)))[-1])

    @functools.cached_property
    def optimum(self) -> np.ndarray:
        """The parameters that minimise :meth:`loss`: Newton's method with conjugate-gradient steps on
        :meth:`hessian_vector` (scipy's Newton-CG), from all-zero weights.

        The loss is convex, though flat along one direction (adding the same vector to every class's
        weights changes no probability); conjugate gradients never step along it.
        """
        from scipy.optimize import minimize

        idx = np.arange(self.n_train)
        res = minimize(self.loss, self.init(), method="Newton-CG",
                       jac=lambda w: self._gradient(self._w(w), idx),
                       hessp=self.hessian_vector, options={"xtol": 1e-10, "maxiter": 200})
        w = np.asarray(res.x, dtype=float)
        w.setflags(write=False)
        return w

    def error(self, w: np.ndarray) -> float:
        """Test error rate: the fraction of held-out samples whose most likely class is wrong."""
        W = self._w(w)
        pred = np.argmax(self.x_test @ W, axis=1)
        return float(np.mean(pred != self.y_test))


def make_problem(
    seed: int = 0,
    classes: int = 10,
    features: int = 20,
    n_train: int = 4000,
    n_test: int = 2000,
    separation: float = 0.6,
    l2: float = 0.0,
) -> Problem:
    """Generate the seeded Gaussian-cluster classification problem.

    ``separation`` is the standard deviation of the cluster centres in units
    of the within-cluster noise (1): small values give overlapping clusters
    and a high error floor. The default (0.6, 10 classes, 20 features) gives
    a best linear test error of roughly 15-20 %.

    >>> p = make_problem(seed=3, n_train=100, n_test=50)
    >>> p.x_train.shape, p.dim
    ((100, 21), 210)
    """
    seed = check_count("seed", seed, 0)
    classes = check_count("classes", classes, 2)
    features = check_count("features", features, 1)
    n_train = check_count("n_train", n_train, classes)
    n_test = check_count("n_test", n_test, 1)
    separation = check_positive("separation", separation)
    l2 = check_nonnegative("l2", l2)
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, separation, size=(classes, features))

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, classes, size=n)
        x = centres[y] + rng.normal(size=(n, features))
        return np.hstack([x, np.ones((n, 1))]), y

    x_train, y_train = draw(n_train)
    x_test, y_test = draw(n_test)
    return Problem(x_train, y_train, x_test, y_test, classes, l2)


@dataclass(frozen=True)
class TrainResult:
    """What :func:`train` recorded, one entry per evaluation.

    ``steps`` (int), ``epochs`` (passes over the training set, float),
    ``errors`` (test error rate), ``losses`` (training loss, nats), ``lrs``
    (learning rate used at that step), and the final parameters ``w``.
    """

    steps: np.ndarray
    epochs: np.ndarray
    errors: np.ndarray
    losses: np.ndarray
    lrs: np.ndarray
    w: np.ndarray
    diverged: bool


def train(
    problem: Problem,
    lr: float,
    batch_size: int,
    steps: int,
    warmup_steps: int = 0,
    seed: int = 0,
    base_batch_size: int | None = None,
    eval_every: int = 1,
) -> TrainResult:
    r"""Plain mini-batch SGD, with Goyal et al.'s linear scaling rule and warm-up.

    With ``k = batch_size / base_batch_size`` the target rate is
    :math:`\hat\eta = k\,\eta` (``eta = lr``; the *linear scaling rule*).
    With ``warmup_steps = W > 0`` the rate at step ``t`` is
    :math:`\eta + (\hat\eta - \eta)\,\min(1, t/W)`: it starts at the base rate
    and grows linearly to the scaled one (Goyal et al. 2017, section 2.2,
    "gradual warm-up"). ``base_batch_size=None`` means no scaling (``k = 1``).

    Training stops early, with ``diverged=True``, if the loss becomes
    non-finite. ``seed`` drives the mini-batch draws.

    >>> p = make_problem(seed=0)
    >>> r = train(p, lr=0.1, batch_size=32, steps=200, seed=0)
    >>> bool(r.errors[-1] < r.errors[0])
    True
    """
    lr = check_positive("lr", lr)
    batch_size = check_count("batch_size", batch_size, 1)
    steps = check_count("steps", steps, 1)
    warmup_steps = check_count("warmup_steps", warmup_steps, 0)
    seed = check_count("seed", seed, 0)
    eval_every = check_count("eval_every", eval_every, 1)
    base = batch_size if base_batch_size is None else check_count("base_batch_size", base_batch_size, 1)
    target = lr * batch_size / base
    rng = np.random.default_rng(seed)
    w = problem.init()
    rec_steps, rec_err, rec_loss, rec_lr = [0], [problem.error(w)], [problem.loss(w)], [lr if warmup_steps else target]
    diverged = False
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(steps):
            rate = target if warmup_steps == 0 else lr + (target - lr) * min(1.0, t / warmup_steps)
            w = w - rate * problem.stochastic_gradient(w, rng, batch_size)
            if (t + 1) % eval_every == 0 or t + 1 == steps:
                loss = problem.loss(w) if np.all(np.isfinite(w)) else float("inf")
                rec_steps.append(t + 1)
                rec_err.append(problem.error(w) if np.isfinite(loss) else 1.0)
                rec_loss.append(loss)
                rec_lr.append(rate)
                if not np.isfinite(loss):
                    diverged = True
                    break
    s = np.asarray(rec_steps)
    return TrainResult(s, s * batch_size / problem.n_train, np.asarray(rec_err), np.asarray(rec_loss),
                       np.asarray(rec_lr), w, diverged)
