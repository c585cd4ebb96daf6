"""Self-checks for chapter 5 (stale gradients, overlap with backprop). Answers are computed, never typed in."""

from .. import hardware
from ..check import Given, Question, exercise_means, exercise_shows, register
from ..sgd import overlap, stale_quadratic
from ..sgd import simulate as sgd

#: The givens of the exercises: the questions below read them and the chapter prints (glues) them.
GIVENS = {"workers": 32, "k": 4, "lr_workers": 16, "shared_rate": sgd.NOTES_RATE, "n": 16, "link": "eth_25g",
          "batch": 32, "flops": 10e12}

def _rule_of_thumb(given, right, values) -> bool:
    """Whether ``given`` is Gupta et al.'s n/K for these numbers (the exercises ask for the exact mean (n-1)/K)."""
    return abs(given - values["workers"] / values["k"]) < 1e-6 * max(1.0, values["workers"] / values["k"])


register(Question(
    "ch05.mean_staleness", lambda workers=GIVENS["workers"], k=GIVENS["k"]: sgd.expected_staleness("k_batch_async", workers, k),
    unit="updates", rel_tol=0.005,
    givens=(Given("workers", (16, 48, 64), "{} learners"), Given("k", (2, 8), "an update every {} gradients")),
    hints=((lambda given, right, values: abs(given - values["k"] / values["workers"]) < 0.01,
            "You divided the wrong way round: n/K, not K/n."),
           (_rule_of_thumb, "That is Gupta et al.'s rule of thumb n/K, and a good estimate. The exact mean counts "
                            "only the other n - 1 learners' gradients: (n - 1)/K."),),
    hint="While a learner computes, each of the other n - 1 learners pushes about one gradient; the PS applies one "
         "update per K of them.",
))

register(Question(
    "ch05.k_batch_at_k_equals_n", lambda workers=GIVENS["workers"]: sgd.expected_staleness("k_batch_async", workers, workers),
    unit="updates", rel_tol=0.005,
    givens=(Given("workers", (16, 24, 40, 48, 64, 96), "{} learners"),),
    hints=((lambda given, right: abs(given) < 1e-9,
            "Zero is K-async with K = n (synchronous SGD). K-batch-async counts gradients, not learners: a fast "
            "learner may push twice before the update."),
           (lambda given, right: abs(given - 1) < 1e-9, "Close: of the other learners' pushes, count n - 1, not n."),),
    hint="While a learner computes one mini-batch, each of the other n - 1 pushes about one gradient; the PS "
         "applies an update every K = n of them.",
))

register(Question(
    "ch05.stale_stable_step", lambda: stale_quadratic.largest_stable_step(1), unit="", rel_tol=0.01,
    hints=((lambda given, right: abs(given - 2) < 0.01, "2 is the limit without staleness; the stale gradient lowers it."),
           (lambda given, right: abs(given - 0.25) < 0.01,
            "At zeta = 1/4 the two roots meet and turn complex; they stay inside the unit circle beyond it."),),
    hint="The roots of z^2 - z + zeta multiply to zeta; when they are complex they have the same modulus.",
))

register(Question(
    "ch05.rule_mean_rate",
    lambda workers=GIVENS["lr_workers"], base_rate=GIVENS["shared_rate"]: sgd.mean_rule_rate(base_rate, workers),
    unit="", rel_tol=0.03,
    givens=(Given("workers", (4, 8, 64), "{} learners"), Given("base_rate", (0.2, 1.0), "a base rate of {:g}")),
    hints=((lambda given, right, values: abs(given - values["base_rate"] / (values["workers"] - 1)) < 1e-3 * right,
            "That is the base rate over the mean staleness, Gupta et al.'s rate. The rule divides each gradient's rate "
            "by its own staleness, and the mean of 1/tau is not 1/(mean of tau): the fresh and one-update-old "
            "gradients get the full base rate."),),
    hint="Each update is the push of a learner drawn at random: P(tau = k) = p (1 - p)^k with p = 1/n. Sum "
         "p (1 - p)^k / max(k, 1) over k, using the series of -ln(1 - q).",
))

def _ddp(flops: float, batch: int = GIVENS["batch"]):
    link = hardware.link(GIVENS["link"])
    t_fwd, t_bwd = overlap.step_compute_time("resnet50", batch, flops)
    return overlap.overlap_timeline("resnet50", n=GIVENS["n"], bandwidth=link.bandwidth, latency=link.latency,
                                    t_backward=t_bwd, t_forward=t_fwd)


register(Question(
    "ch05.exposed_at_twice_flops", lambda: 1e3 * _ddp(2 * GIVENS["flops"]).exposed, unit="ms", rel_tol=0.02,
    hints=((lambda given, right: abs(given - 1e3 * _ddp(GIVENS["flops"]).exposed) < 0.5,
            "That is the exposed time on the slower GPU. Backward halves; the all-reduces do not."),
           (lambda given, right: given < 1e3 * _ddp(GIVENS["flops"]).exposed,
            "Faster compute shortens backward, and with it the time the all-reduces can hide behind."),),
    hint="On a stream that never pauses, exposed = T_m - T_bwd: keep T_m, halve T_bwd.",
    means=(
        "# The chapter's overlap calculator, set to its example: change the TFLOP/s.\n"
        "overlap_views.overlap_calculator(model=\"resnet50\", n=16, link=\"eth_25g\", bucket_mib=25.0, tflops=10.0, batch=32)",
    ),
))


def _balance_batch() -> float:
    ddp = _ddp(GIVENS["flops"])
    return GIVENS["batch"] * ddp.comm_total / ddp.t_backward


register(Question(
    "ch05.balance_batch", _balance_batch, unit="images", rel_tol=0.02,
    hints=((lambda given, right: given < GIVENS["batch"],
            "Here the all-reduces take longer than backward: the batch must grow, not shrink, for backward to catch up."),),
    hint="T_bwd grows in proportion to the batch and T_m does not depend on it: scale the batch by T_m / T_bwd.",
))


exercise_means(
    "ex-small-batch-overlap",
    "# The chapter's calculator: how much communication hides behind the backward pass.\n"
    "overlap_views.overlap_calculator(model=\"bert_base\", n=16, link=\"eth_25g\", bucket_mib=25.0, tflops=10.0, "
    "batch=32)",
)


# "Compare it with the table's best constant rate": the chapter's table of the learning-rate rules.
exercise_shows("ex-rule-mean-rate", "staleness_views.lr_table(")
