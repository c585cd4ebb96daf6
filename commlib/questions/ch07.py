"""Self-checks for chapter 7 (today's collectives). Answers are computed, never typed in."""

from .. import cost, hardware
from ..check import Given, Question, exercise_shows, register
from ..today import algorithm_choice as tuning
from ..today import zero
from ..units import parse_size


def _ratio(target: float, tol: float = 0.02):
    return lambda given, right: abs(given / right - target) < tol


register(Question(
    "ch07.zero3_gb", lambda n=64, billions=30.0: cost.zero_bytes_per_rank(billions * 1e9, n, 3, "bf16") / 1e9, unit="GB",
    givens=(Given("n", (16, 32, 128, 256), "{} GPUs"), Given("billions", (1.3, 13.0, 70.0), "a model of {:g} billion parameters")),
    hints=((_ratio(2 / 3), "That is stages 0-2. Stage 3 gathers the parameters twice (forward and backward) "
                           "and reduce-scatters the gradient: three passes."),
           (_ratio(2.0), "bf16 is 2 bytes an element, not 4.")),
    hint="3 (n-1)/n x Psi x s bytes, with s = 2 for bf16.",
))

register(Question(
    "ch07.zero2_mem_gb", lambda n=64, billions=30.0: zero.memory_per_rank(billions * 1e9, n, 2) / 1e9, unit="GB",
    givens=(Given("n", (16, 32, 128, 256), "{} GPUs"), Given("billions", (1.3, 13.0, 70.0), "a model of {:g} billion parameters")),
    hint="Stage 2 keeps the 2-byte weights whole and divides gradients (2 B) and optimizer state (12 B) by n.",
))

register(Question(
    "ch07.moe_mb", lambda tokens=2048, top_k=1: cost.moe_all_to_all_bytes(tokens, 4096, top_k, 8, "bf16") / 1e6, unit="MB",
    givens=(Given("tokens", (1024, 4096, 8192), "{} tokens on each GPU"), Given("top_k", (2, 4), "top-{} routing")),
    hints=((_ratio(8 / 7), "Copies routed to the rank's own expert never leave it: multiply by (E-1)/E."),),
    hint="tokens x top-k x hidden x 2 B x (E-1)/E, per all-to-all.",
))

def _fp8_share(scale_bytes: int = 4, block: int = 32) -> float:
    """Per cent of a step's bf16 all-to-all bytes left when the two towards the experts travel in FP8 with scales."""
    fp8 = cost.WireFormat("fp8", 1, scale_bytes, block)
    sent = cost.moe_step_bytes(4096, 4096, 2, 64, 8, dispatch=fp8)
    bf16 = cost.moe_step_bytes(4096, 4096, 2, 64, 8)
    return 100 * (sent["network"] + sent["nvlink"]) / (bf16["network"] + bf16["nvlink"])


def _fp8_all_four(v) -> float:
    """The share if all four all-to-alls travelled in FP8 with the student's scale and block: 50 (1 + scale/block) %."""
    return 50 * (1 + v["scale_bytes"] / v["block"])


register(Question(
    "ch07.fp8_share", _fp8_share, unit="%", rel_tol=0.001,
    givens=(Given("scale_bytes", (1, 2, 4), "a {}-byte scale"), Given("block", (8, 16), "one scale for every {} values")),
    hints=((lambda given, right: float(given).is_integer() and abs(given - right) < 1,
            "Close: give the share to one decimal."),
           (lambda given, right: abs(given - _fp8_share(4, 128)) < 0.25,
            "That is the section's share, for DeepEP's 4-byte scale every 128 values; this exercise's scale and block "
            "differ."),
           (lambda given, right: abs(100 * given / right - 1) < 0.003,
            "That is the share as a fraction: give it in %."),
           (lambda given, right, v: abs(given - 100 * (1 + v["scale_bytes"] / v["block"] + 3 * 2) / 8) < 0.1,
            "That is the forward dispatch alone in FP8. The gradient of combine travels towards the experts too, and "
            "in FP8 as well."),
           (lambda given, right: abs(given - 50) < 0.05,
            "Half would need all four all-to-alls to halve: which of them travel in FP8, and what does a scale add to "
            "each value?"),
           (lambda given, right, v: abs(given - 75) < 0.1 and abs(_fp8_all_four(v) - 75) < 0.1,
            "Either all four all-to-alls travelled in FP8, or the scales were forgotten: only the two towards the "
            "experts travel in FP8, and each value carries its share of one scale per block."),
           (lambda given, right, v: abs(given / _fp8_all_four(v) - 1) < 0.003,
            "That is all four all-to-alls in FP8, or one FP8 all-to-all against its bf16 self. The step counts all four: "
            "the two towards the experts in FP8, the two back from them in bf16."),
           (lambda given, right: abs(given - 75) < 0.1,
            "Count the scales too: each value carries its share of one scale per block."),
           (lambda given, right: abs(given - (100 - right)) < 0.1,
            "That is the share saved; the question asks for the share of the bf16 bytes that remains."),
           # the scale and the block are no counts of ranks: no n/(n-1) factor hints (the book's own answer excepted,
           # which the check answers itself for a student with other numbers)
           (lambda given, right: abs(given / _fp8_share() - 1) > 0.003,
            "Work out the bytes a value costs in FP8 with its share of a scale, then what each of the four all-to-alls "
            "sends against bf16's 2 bytes a value."),),
    hint="Work out the bytes a value costs in FP8 with its share of a scale, then what each of the four all-to-alls "
         "sends against bf16's 2 bytes a value.",
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
    "ch07.pat_winner", lambda: tuning.choose("all_gather", 64 * 2**10, "one_gpu_per_node").algorithm,
    hint="Use tuning.choose (or the calculator) for an all-gather of 64 KiB, one GPU a node.",
    means=(
        "# The chapter's chooser: which algorithm and protocol a collective of a given size gets.\n"
        "today_views.chooser_calculator()",
    ),
))


def _topk_crossover(value_bytes: int = 4, index_bytes: int = 2, percent: float = 1.0) -> int:
    """The fewest workers at which top-k keeping ``percent`` % of a 1000 x 1000 gradient sends more than a ring."""
    from ..today import compression
    return compression.crossover_workers("topk", 1000, 1000, k=round(10_000 * percent), value_bytes=value_bytes,
                                         index_bytes=index_bytes)


register(Question(
    "ch07.topk_crossover_n", _topk_crossover, unit="workers",
    givens=(Given("percent", (0.5, 2.0, 2.5, 4.0, 5.0, 10.0), "keeping {:g} % of the entries"),),
    hints=((lambda given, right, g: abs(given - _topk_crossover(index_bytes=4, percent=g["percent"])) <= 2,
            "That is the rule n > 1/rho, for an entry as dear as the ring's 2 s (4-byte indices with fp32 values, "
            "or 2-byte ones with bf16): here an fp32 value and a 2-byte index cost 6 bytes against the ring's 2 x 4."),),
    hint="Top-k sends (n-1) rho d (s + s_idx) bytes, the ring 2 (n-1)/n d s: more once n > 2 s / ((s + s_idx) rho).",
))


def _card_rate(gbps: float, capped: bool = True) -> float:
    """Bytes/s per direction one H100 gets over the book's ``gbps`` Gb/s network card: the card's rate capped by the
    H100's PCIe 5.0 x16 host link (:func:`commlib.hardware.network_rate`); ``capped=False``, the card's own rate."""
    cards = {round(item.bandwidth * 8 / 1e9): key for key, item in hardware.LINKS.items() if item.kind == "network"}
    if round(gbps) not in cards:
        raise ValueError(f"gbps must be one of the network cards' rates, {', '.join(map(str, sorted(cards)))}; got {gbps}")
    key = cards[round(gbps)]
    return hardware.network_rate("h100", key) if capped else hardware.link(key).bandwidth


def _break_even_at(rate: float, node: bool = True, form: str | None = None) -> float:
    """Tokens per GPU at which a layer's compute equals its hierarchical gather (8 nodes of 8 H100s on NVLink 4, each
    GPU sending ``rate`` bytes/s over its card, u = 0.4, bf16), in its fastest form (``form`` None: the two phases
    overlapped on these cards) or in ``form``; without the ``node`` (NVLink) part, the gather across the nodes alone."""
    h100 = hardware.accelerator("h100")
    nvlink = hardware.link("nvlink4").bandwidth * (1.0 if node else 1e12)
    c, g = zero.forward_layer_times(7_500_000_000, 32, 64, 4096, h100.peak_flops, rate, per_node=8,
                                    node_bandwidth=nvlink, form=form)
    return 4096 * g / c


def _break_even_tokens(gbps: float = 800.0) -> float:
    """:func:`_break_even_at` for a ``gbps`` Gb/s card, at the rate an H100 gets over it (:func:`_card_rate`)."""
    return _break_even_at(_card_rate(gbps))


register(Question(
    "ch07.break_even_tokens", _break_even_tokens, unit="tokens",
    givens=(Given("gbps", (10.0, 25.0, 100.0, 200.0), "a {:g} Gb/s card"),),
    hints=((lambda given, right, g: _card_rate(g["gbps"], capped=False) != _card_rate(g["gbps"])
            and abs(given / _break_even_at(_card_rate(g["gbps"], capped=False)) - 1) < 0.02,
            "An H100 reaches its card over its host's PCIe 5.0 x16, which carries less than this card: "
            "use hardware.network_rate(\"h100\", ...) for the rate it gets."),
           (lambda given, right, g: abs(given / _break_even_at(_card_rate(g["gbps"]), form="phases in series") - 1)
            < 0.02,
            "That adds the two phases, as if run one after the other; overlapped, chunk by chunk, the gather lasts "
            "as long as the longer of them."),
           (lambda given, right, g: abs(given / _break_even_at(8 * _card_rate(g["gbps"])) - 1) < 0.02,
            "Gb/s are bits: divide by 8 for bytes per second."),
           (lambda given, right, g: abs(given / _break_even_at(_card_rate(g["gbps"]), node=False) - 1) < 0.02,
            "The NVLink gather inside the node takes time too, and a faster card does not shorten it.")),
    hint="x* = u F_peak s / 2 x max((h-1)/h / (g B_NIC), (g-1)/g / B_intra), the two phases overlapped, with "
         "h = 8 nodes, g = 8 GPUs a node, "
         "B_NIC the bytes per second each GPU gets over its card (no more than its PCIe host link carries: "
         "hardware.network_rate) and B_intra NVLink's.",
))


def _tree_ring_mb(tree_as_ring: bool = False, tree_unhalved: bool = False) -> float:
    """The message size (MB) above which ring/Simple beats tree/Simple for an all-reduce, 16 nodes x 1 GPU.

    Two slips, each computed: ``tree_as_ring`` converts the tree's bus bandwidth as a ring's, x n/(2(n-1)),
    not halving it; ``tree_unhalved`` takes the tree's bus bandwidth as its algorithm bandwidth. That one is
    above the ring's, so the tree wins at every size and the "crossover" comes out negative.

    >>> _tree_ring_mb() > 0 > _tree_ring_mb(tree_unhalved=True)
    True
    """
    mach = tuning.machine("one_gpu_per_node")
    ring, tree = (tuning.predict("all_reduce", a, "Simple", 0.0, mach) for a in ("ring", "tree"))
    tree_bus = 2 * tree.algbw            # NCCL halves a tree's bus bandwidth to get its algorithm bandwidth
    tree_bw = (tree_bus * mach.ranks / (2 * (mach.ranks - 1)) if tree_as_ring
               else tree_bus if tree_unhalved else tree.algbw)
    return (ring.latency - tree.latency) / (1 / tree_bw - 1 / ring.algbw) / 1e6


register(Question(
    "ch07.tree_ring_mb", _tree_ring_mb, unit="MB",
    hints=((lambda given, right: abs(given / _tree_ring_mb(tree_as_ring=True) - 1) < 0.005,
            "That converts the tree's bus bandwidth as a ring's, x n/(2(n-1)); NCCL halves a tree's: "
            "B_tree = busbw / 2."),
           (lambda given, right: abs(given / _tree_ring_mb(tree_unhalved=True) - 1) < 0.005,
            "A negative size means the tree is faster at every size: that takes the tree's bus bandwidth as its "
            "algorithm bandwidth, above the ring's. NCCL halves a tree's (each byte goes up the tree and then "
            "down): B_tree = busbw / 2.")),
    hint="Set the two times equal: alpha_ring + M / B_ring = alpha_tree + M / B_tree, each alpha a base latency "
         "plus a hops x per-hop latency (2(n-1) hops for the ring, 2 log2 n for the tree), and solve for M.",
    means=(
        "# The chapter's chooser: which algorithm and protocol a collective of a given size gets.\n"
        "today_views.chooser_calculator()",
    ),
))


def _compress_budget_ms(n: int = 16, r: int = 4) -> float:
    """Milliseconds of compute PowerSGD may spend per step before it stops saving time (bandwidth terms)."""
    full = 4096 * 4096 * hardware.dtype_bytes("fp32")
    small = cost.powersgd_numbers(4096, 4096, r) * hardware.dtype_bytes("fp32")
    return 1e3 * (cost.allreduce_time(full, n, 50e9) - cost.allreduce_time(small, n, 50e9))


register(Question(
    "ch07.compress_budget_ms", _compress_budget_ms, unit="ms",
    givens=(Given("n", (8, 32, 64), "{} workers"), Given("r", (1, 8, 16), "rank r = {}")),
    hints=((lambda given, right, g: abs(given / right - g["n"] / (2 * (g["n"] - 1))) < 0.01,
            "A ring all-reduce sends 2(n-1)/n M per rank, not M."),
           (_ratio(0.5), "fp32 is 4 bytes an element, not 2.")),
    hint="The time saved is the uncompressed all-reduce's bandwidth term minus the compressed one's: "
         "2(n-1)/n (M - M_c) / B, with M = 4096 x 4096 x 4 B and M_c = (4096 + 4096) r x 4 B.",
))


# "the chooser's constants (the tables after the chooser's code ...; the bandwidth factors in the first table)"
exercise_shows("ex-today-tree", "| algorithm | protocol | bus bandwidth", "converts bus bandwidth to algorithm bandwidth",
               "| machine | $B$ (GB/s, per direction)")


def _local_rounds(h: int = 16, sync_ms: float = 4.0, straggle: bool = True) -> int:
    """Whole rounds of ``h`` local steps (each the chapter's mean step, with its straggle unless ``straggle`` is
    False: the slip of leaving it out) and one sync of ``sync_ms`` ms in the chapter's budget."""
    from ..today import local_sgd
    step = local_sgd.COMPUTE * (1 + (local_sgd.JITTER if straggle else 0.0))
    return local_sgd.rounds_in_budget(h, local_sgd.BUDGET, step, sync_ms / 1e3)


register(Question(
    "ch07.local_rounds", _local_rounds, unit="rounds",
    givens=(Given("h", (4, 8, 32, 64), "H = {} local steps a round"), Given("sync_ms", (1.0, 2.0, 8.0), "a sync of {:g} ms")),
    hints=((lambda given, right, g: given != right and abs(given - _local_rounds(g.get("h", 16), 0.0)) < 1,
            "A round ends with a synchronisation: add its time to the H steps'."),
           (lambda given, right, g: given != right and abs(given - _local_rounds(1, g.get("sync_ms", 4.0))) < 1,
            "That is synchronous SGD's count, one step a round: a round here holds H steps."),
           (lambda given, right, g: right > 0 and abs(given - g.get("h", 16) * right) < 1,
            "That counts steps; the question asks for rounds (steps over H)."),
           (lambda given, right, g: given != right
            and abs(given - _local_rounds(g.get("h", 16), g.get("sync_ms", 4.0), straggle=False)) < 1,
            "A step's mean time includes its straggle: compute times 1 + jitter.")),
    hint="rounds = floor(budget / (H x mean step + sync)), with the mean step = compute x (1 + jitter).",
))
