"""Self-checks for chapter 4 (synchronous and asynchronous SGD). Answers are computed, never typed in.

The book's numbers differ from every number the chapter's prose and tables print, so that no answer can be
read off the page; a hint that names a mistake computes it from the variant's own numbers.
"""

import math

from .. import hardware
from ..check import Given, Question, exercise_means, register
from ..sgd import scaling
from ..sgd import simulate as sgd


def _near(factor: float, tol: float = 0.02):
    return lambda given, right: abs(given / right - factor) < tol


def _is(mistake, tol: float = 0.01):
    """A hint's test: the answer is ``mistake(values)``, computed from the variant's own numbers."""
    return lambda given, right, values: abs(given / mistake(values) - 1) < tol


def _slow_gpu(t_step: float = 0.2, n: int = 16) -> float:
    link = hardware.LINKS["eth_10g"]
    return 100 * scaling.ring_weak_scaling("resnet50", n, link.bandwidth, t_step, 32, latency=link.latency).efficiency


register(Question(
    "ch04.sync_ratio", lambda n=24: sgd.runtime_ratio(n, "exponential"), unit="",
    givens=(Given("n", (10, 12, 28, 40, 50), "{} learners"),),
    hints=((lambda given, right: abs(given - 100) < 1,
            "100 is the source note's figure for 20 learners; compute n ℋ_n with your n instead."),
           (_is(lambda v: v["n"] * math.log(v["n"])),
            "n ln n only says how fast the ratio grows; the exact value uses the harmonic number ℋ_n."),
           (_is(lambda v: sgd.harmonic(v["n"])),
            "That is E[X_n:n]/E[X], how much longer a synchronous update lasts than one compute time; "
            "asynchronous SGD makes n updates in each compute time, so multiply by n."),),
    hint="E[T_sync]/E[T_async] = n E[X_n:n]/E[X]; for exponential times E[X_n:n]/E[X] = ℋ_n, the harmonic number.",
))

register(Question(
    "ch04.k_sync_update_time", lambda n=8, k=4: sgd.expected_update_time("k_sync", n, k, rate=1.0), unit="s",
    givens=(Given("n", (10, 12, 16), "{} learners"), Given("k", (2, 3, 5), "K = {}")),
    hints=((_is(lambda v: sgd.harmonic(v["n"])),
            "That is the fully synchronous time ℋ_n: K-sync waits only for the K-th fastest learner."),
           (_is(lambda v: sgd.harmonic(v["k"])),
            "That is the slowest of K learners, ℋ_K; K-sync waits for the K-th fastest of all n."),),
    hint="The K-th fastest of n exponentials: E[X_K:n] = (ℋ_n - ℋ_{n-K}) / rate.",
))

register(Question(
    "ch04.weak_efficiency", lambda t1=0.2, tn=0.25: 100 * scaling.weak_scaling(t1, tn - t1, 8, 32).efficiency,
    unit="%",
    givens=(Given("t1", (0.1, 0.15, 0.3), "{:g} s per iteration on one GPU"),
            Given("tn", (0.35, 0.4, 0.5), "{:g} s per iteration on 8 GPUs")),
    hints=((_near(8.0), "That is the speedup n T(1)/T(n) written in percent: efficiency is speedup / n, "
                        "a share of 100 %."),
           # the speedup n T(1)/T(n) against the answer 100 T(1)/T(n), in percent: 8/100 for any times
           (_near(0.08),
            "That is the speedup; divide by the number of GPUs."),
           (_is(lambda v: 100 * v["tn"] / v["t1"]), "That is T(n)/T(1); efficiency is the other way round."),),
    hint="Weak scaling: efficiency = T(1)/T(n), the one-GPU time over the time on 8 GPUs, in percent.",
))

register(Question(
    "ch04.goyal_lr", lambda gpus=192, per=32: scaling.linear_scaling_lr(0.1, 256, gpus * per), unit="",
    givens=(Given("gpus", (48, 96, 384, 768), "{} GPUs"), Given("per", (16, 24, 48), "{} images each")),
    hints=((lambda given, right: abs(given - 0.1) < 1e-9,
            "0.1 is the rate of the 256-image reference batch; scale it with the global batch."),
           (_is(lambda v: 0.1 * v["gpus"] / 256),
            "That scales with the GPUs only; the global batch is GPUs x images per GPU."),),
    hint="Linear scaling rule: eta = 0.1 x n x / 256, with n the GPUs and x the images per GPU "
         "(Goyal et al. write kn: k workers of n images).",
))

register(Question(
    "ch04.slow_gpu_efficiency", _slow_gpu, unit="%",
    givens=(Given("t_step", (0.15, 0.25, 0.4, 0.6), "{:g} s of compute per iteration"),
            Given("n", (8, 32), "{} GPUs")),
    hints=((_is(lambda v: _slow_gpu(0.1, v["n"])),
            "That is the fast GPU's figure, 0.1 s of compute: use your GPU's compute time."),
           (_is(lambda v: _slow_gpu(0.3, v["n"])),
            "That is the 3x slower GPU of the example, 0.3 s of compute: use your GPU's compute time."),),
    hint="T(n) = T(1) + ring all-reduce time of the fp32 gradient (nothing overlaps); efficiency = T(1)/T(n).",
))


exercise_means(
    "ex-straggler-why",
    "# The chapter's calculator: synchronous against asynchronous SGD, with a straggler factor.\n"
    "sync_async_views.sgd_calculator(protocol=\"k_async\", workers=8, k=2, compute=\"exponential\", slowdown=1.0)",
)
