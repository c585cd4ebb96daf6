"""Self-checks for chapter 5 (stale gradients, overlap with backprop). Answers are computed, never typed in."""

from .. import hardware
from ..check import Given, Question, register
from ..sgd import overlap, stale_quadratic
from ..sgd import simulate as sgd

#: The givens of the exercises: the questions below read them and the chapter prints (glues) them.
GIVENS = {"workers": 32, "k": 4, "base_rate": 0.4, "n": 16, "link": "eth_25g", "batch": 32, "flops": 10e12}

register(Question(
    "ch05.mean_staleness", lambda workers=GIVENS["workers"], k=GIVENS["k"]: sgd.expected_staleness("k_batch_async", workers, k),
    unit="updates", rel_tol=0.05,
    givens=(Given("workers", (16, 48, 64), "{} learners"), Given("k", (2, 8), "an update every {} gradients")),
    hints=((lambda given, right: abs(given - GIVENS["k"] / GIVENS["workers"]) < 0.01, "You divided the wrong way round: n/K, not K/n."),),
    hint="Gupta et al.: gradients are on average about n/K updates out of date.",
))

register(Question(
    "ch05.k_batch_at_k_equals_n", lambda workers=GIVENS["workers"]: sgd.expected_staleness("k_batch_async", workers, workers),
    unit="updates", rel_tol=0.02,
    givens=(Given("workers", (16, 48, 64), "{} learners"),),
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
            "At a = 1/4 the two roots meet and turn complex; they stay inside the unit circle beyond it."),),
    hint="The roots of z^2 - z + a multiply to a; when they are complex they have the same modulus.",
))

register(Question(
    "ch05.staleness_lr",
    lambda workers=GIVENS["workers"], k=GIVENS["k"], base_rate=GIVENS["base_rate"]:
        base_rate / sgd.expected_staleness("k_batch_async", workers, k),
    unit="", rel_tol=0.05,
    givens=(Given("workers", (16, 48, 64), "{} learners"), Given("k", (2, 8), "an update every {} gradients"),
            Given("base_rate", (0.1, 0.2, 0.8), "a base learning rate of {:g}")),
    hints=((lambda given, right: given > GIVENS["base_rate"],
            "Divide the base rate by the average staleness, do not multiply."),),
    hint="eta = eta_0 / <tau>, with <tau> about n/K.",
))

register(Question(
    "ch05.ddp_bucket_bytes", lambda: float(overlap.DDP_BUCKET_BYTES), unit="B",
    hints=((lambda given, right: abs(given - 25e6) < 1,
            "That is 25 MB; DDP's bucket_cap_mb = 25 is multiplied by 1024 x 1024, so the cap is 25 MiB."),
           (lambda given, right: right < given < 2 * right,
            "A bucket may end larger than the cap (it closes once the cap is reached, with the whole last layer "
            "in it); the question asks for the cap at which it closes."),
           (lambda given, right: abs(given - 2**20) < 1,
            "1 MiB is the first bucket's cap; the others close at the default bucket_cap_mb."),),
    hint="DDP multiplies bucket_cap_mb = 25 by 1024 x 1024.",
    means=(
        "# The chapter's bucket table: ResNet-50 (fp32) in DDP's buckets, 16 GPUs on 25 Gb/s Ethernet.\n"
        "link, ov_n = hardware.link(\"eth_25g\"), 16\n"
        "t_fwd, t_bwd = overlap.step_compute_time(\"resnet50\", 32, 10e12)\n"
        "ddp = overlap.overlap_timeline(\"resnet50\", n=ov_n, bandwidth=link.bandwidth, latency=link.latency,\n"
        "                               t_backward=t_bwd, t_forward=t_fwd)\n"
        "overlap_views.bucket_table(ddp, n=ov_n, bandwidth=link.bandwidth, latency=link.latency)",
    ),
))

register(Question(
    "ch05.resnet_buckets",
    lambda: len(overlap.overlap_timeline("resnet50", n=8, bandwidth=hardware.link("eth_25g").bandwidth).buckets),
    unit="buckets", rel_tol=0.0,
    hint="Walk the layers from the output back; close a bucket once it holds 1 MiB (the first) or 25 MiB.",
))


def _exposed_ms() -> float:
    link = hardware.link(GIVENS["link"])
    t_fwd, t_bwd = overlap.step_compute_time("resnet50", GIVENS["batch"], GIVENS["flops"])
    r = overlap.overlap_timeline("resnet50", n=GIVENS["n"], bandwidth=link.bandwidth, latency=link.latency,
                                 t_backward=t_bwd, t_forward=t_fwd)
    return 1e3 * r.exposed


register(Question(
    "ch05.resnet_exposed_ms", _exposed_ms, unit="ms", rel_tol=0.02,
    hints=((lambda given, right: given > 3 * right,
            "That is close to the whole all-reduce time: with buckets, most of it runs during backward."),),
    hint="Use overlap.overlap_timeline with the DDP defaults and read .exposed.",
    means=(
        "# The chapter's overlap calculator, set to its example.\n"
        "overlap_views.overlap_calculator(model=\"resnet50\", n=16, link=\"eth_25g\", bucket_mib=25.0, tflops=10.0, batch=32)",
    ),
))
