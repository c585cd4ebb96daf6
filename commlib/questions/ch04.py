"""Self-checks for chapter 4 (synchronous and asynchronous SGD). Answers are computed, never typed in."""

import math

from .. import hardware
from ..check import Given, Question, register
from ..sgd import scaling
from ..sgd import simulate as sgd


def _near(factor: float, tol: float = 0.02):
    return lambda given, right: abs(given / right - factor) < tol


register(Question(
    "ch04.sync_ratio_20", lambda n=20: sgd.runtime_ratio(n, "exponential"), unit="",
    givens=(Given("n", (8, 10, 16, 32, 50), "{} learners"),),
    hints=((lambda given, right: abs(given - 100) < 1,
            "100 is the source note's figure; compute n H_n with n = 20 instead."),
           (lambda given, right: abs(given / (20 * math.log(20)) - 1) < 0.01,
            "n ln n only says how fast the ratio grows; the exact value uses the harmonic number H_n."),),
    hint="E[T_sync]/E[T_async] = n E[X_n:n]/E[X]; for exponential times E[X_n:n]/E[X] = H_n.",
))

register(Question(
    "ch04.k_sync_update_time", lambda n=8, k=4: sgd.expected_update_time("k_sync", n, k, rate=1.0), unit="s",
    givens=(Given("n", (10, 12, 16), "{} learners"), Given("k", (2, 3, 5), "K = {}")),
    hints=((lambda given, right: abs(given / sgd.harmonic(8) - 1) < 0.01,
            "That is the fully synchronous time H_n: K-sync waits only for the K-th fastest learner."),),
    hint="The K-th fastest of n exponentials: E[X_K:n] = (H_n - H_{n-K}) / rate.",
))

register(Question(
    "ch04.weak_efficiency", lambda t1=0.2, tn=0.25: 100 * scaling.weak_scaling(t1, tn - t1, 8, 32).efficiency,
    unit="%",
    givens=(Given("t1", (0.1, 0.15, 0.3), "{:g} s per iteration on one GPU"),
            Given("tn", (0.35, 0.4, 0.5), "{:g} s per iteration on 8 GPUs")),
    hints=((_near(8.0), "You multiplied by n: scaling efficiency is speedup / n, not n x speedup."),
           # 6.4 (the speedup) is 0.08 of the right answer, 80 %
           (_near(0.08),
            "That is the speedup; divide by the number of GPUs."),),
    hint="Weak scaling: efficiency = T(1)/T(n) = 0.2 s / (0.2 s + 0.05 s).",
))

register(Question(
    "ch04.goyal_lr", lambda gpus=256, per=32: scaling.linear_scaling_lr(0.1, 256, gpus * per), unit="",
    givens=(Given("gpus", (32, 64, 128, 512), "{} GPUs"), Given("per", (16, 64), "{} images each")),
    hints=((lambda given, right: abs(given - 0.1) < 1e-9,
            "0.1 is the rate of the 256-image reference batch; scale it with the global batch."),),
    hint="Linear scaling rule: eta = 0.1 x n b / 256 with n = 256 GPUs and b = 32 images per GPU "
         "(Goyal et al. write kn: k workers of n images).",
))

register(Question(
    "ch04.slow_gpu_efficiency",
    lambda: 100 * scaling.ring_weak_scaling("resnet50", 16, hardware.LINKS["eth_10g"].bandwidth, 0.3, 32,
                                            latency=hardware.LINKS["eth_10g"].latency).efficiency,
    unit="%",
    hints=((lambda given, right: given < right * 0.8,
            "That looks like the fast GPU's figure: the slow GPU computes for 0.3 s, not 0.1 s."),),
    hint="T(n) = T(1) + ring all-reduce time of the fp32 gradient; efficiency = T(1)/T(n).",
))
