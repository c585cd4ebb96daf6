"""Self-checks for chapter 7 (today's collectives). Answers are computed, never typed in."""

from .. import cost
from ..check import Given, Question, register
from ..today import algorithm_choice as tuning
from ..today import in_network as innetwork
from ..today import local_sgd as localsgd
from ..today import zero
from ..units import parse_size


def _ratio(target: float, tol: float = 0.02):
    return lambda given, right: abs(given / right - target) < tol


register(Question(
    "ch07.zero3_gb", lambda n=64, billions=7.5: cost.zero_bytes_per_rank(billions * 1e9, n, 3, "bf16") / 1e9, unit="GB",
    givens=(Given("n", (16, 32, 128, 256), "{} GPUs"), Given("billions", (1.3, 13.0, 70.0), "a model of {:g} billion parameters")),
    hints=((_ratio(2 / 3), "That is stages 0-2. Stage 3 gathers the parameters twice (forward and backward) "
                           "and reduce-scatters the gradient: three passes."),
           (_ratio(2.0), "bf16 is 2 bytes an element, not 4.")),
    hint="3 (n-1)/n x Psi x s bytes, with s = 2 for bf16.",
))

register(Question(
    "ch07.zero2_mem_gb", lambda n=64, billions=7.5: zero.memory_per_rank(billions * 1e9, n, 2) / 1e9, unit="GB",
    givens=(Given("n", (16, 32, 128, 256), "{} GPUs"), Given("billions", (1.3, 13.0, 70.0), "a model of {:g} billion parameters")),
    hint="Stage 2 keeps the 2-byte weights whole and divides gradients (2 B) and optimizer state (12 B) by n.",
))

register(Question(
    "ch07.moe_mb", lambda tokens=2048, top_k=1: cost.moe_all_to_all_bytes(tokens, 4096, top_k, 8, "bf16") / 1e6, unit="MB",
    givens=(Given("tokens", (1024, 4096, 8192), "{} tokens on each GPU"), Given("top_k", (2, 4), "top-{} routing")),
    hints=((_ratio(8 / 7), "Copies routed to the rank's own expert never leave it: multiply by (E-1)/E."),),
    hint="tokens x top-k x hidden x 2 B x (E-1)/E, per all-to-all.",
))

register(Question(
    "ch07.powersgd_ratio", lambda r=4, m=4096: m * 4096 / cost.powersgd_numbers(m, 4096, r), unit="x",
    givens=(Given("r", (1, 2, 8, 16), "rank r = {}"), Given("m", (1024, 2048, 8192), "a {} x 4096 matrix")),
    hint="m n numbers against (m + n) r.",
))

register(Question(
    "ch07.switch_us", lambda mib=256: 1e6 * cost.in_network_allreduce_time(parse_size(f"{mib} MiB"), 8, 370e9), unit="µs",
    givens=(Given("mib", (16, 64, 128, 512, 1024), "{} MiB"),),
    hints=((_ratio(2 * 7 / 8), "That is the ring's time; with the switch reducing, each rank sends M once."),),
    hint="T = M / B with M = 256 MiB = 256 x 2^20 B and B = 370 GB/s.",
))

register(Question(
    "ch07.switch_busbw", lambda n=8: innetwork.busbw_ideal(n, 370e9)["switch_busbw"] / 1e9, unit="GB/s",
    givens=(Given("n", (4, 16, 32, 64), "{} GPUs"),),
    hints=((_ratio(8 / 14), "That is algbw; nccl-tests multiplies it by 2(n-1)/n."),),
    hint="algbw = B when the switch reduces; busbw = algbw x 2(n-1)/n.",
))

register(Question(
    "ch07.pat_winner", lambda: tuning.choose("all_gather", 64 * 2**10, "one_gpu_per_node").algorithm,
    hint="Use tuning.choose (or the calculator) for an all-gather of 64 KiB, one GPU a node.",
    means=(
        "# The chapter's chooser: which algorithm and protocol a collective of a given size gets.\n"
        "today_views.chooser_calculator()",
    ),
))

register(Question(
    "ch07.local_ratio",
    lambda: localsgd.run(1, 0.5, 1).bytes_per_sample / localsgd.run(16, 0.5, 1).bytes_per_sample, unit="x",
    hint="One synchronisation every H steps instead of every step.",
))
