"""Self-checks for chapter 2 (ring all-reduce and its rivals). Answers are computed, never typed in."""

import numpy as np

from .. import cost, hardware
from ..check import Given, Question, register
from ..collectives import compare
from ..collectives import simulate as collectives


def _eth10(m: float, algorithm: str) -> float:
    item = hardware.link("eth_10g")
    return compare.allreduce_seconds(algorithm, m, 8, item.bandwidth, item.latency)


def _crossover_kb() -> float:
    (m,) = compare.crossover_sizes(lambda m: _eth10(m, "ring"), lambda m: _eth10(m, "recursive_doubling"),
                                   1.0, 1e12)
    return m / 1e3


def _hd_steps(n: int) -> int:
    _, trace = collectives.allreduce([np.arange(n, dtype=float)] * n, algorithm="halving_doubling")
    return trace.steps


def _byte_ratio(n: int, hosts: int) -> float:
    """A flat ring's bytes through a host's cards over the hierarchical all-reduce's: ((n-1)/n) / ((h-1)/h)."""
    return cost.ring_bytes_per_rank(1.0, n) / cost.ring_bytes_per_rank(1.0, hosts)


def _hier_speedup(nics_per_host: int | None, hosts: int = 4) -> float:
    """Flat ring over hierarchical time: ResNet-50 fp16, hosts x 8 GPUs, NVLink 2.0 inside, 25 Gb/s between."""
    args = ("resnet50", "fp16", 8 * hosts, hosts, "nvlink2", "eth_25g")
    flat = compare.cluster_allreduce(*args, "ring")
    hier = compare.cluster_allreduce(*args, "hierarchical", nics_per_host=nics_per_host)
    return flat.seconds / hier.seconds


def _hier_speedup_nvlink_as_sold() -> float:
    """The same speed-up with NVLink 2.0 taken at the bandwidth it is sold as, both directions summed (a slip)."""
    intra, inter = hardware.link("nvlink2"), hardware.link("eth_25g")
    nbytes, n, hosts = hardware.gradient_bytes("resnet50", "fp16"), 32, 4

    def seconds(algorithm: str, nics_per_host: int | None) -> float:
        return compare.allreduce_seconds(algorithm, nbytes, n, 2 * intra.bandwidth, intra.latency, hosts=hosts,
                                         inter_bandwidth=inter.bandwidth, inter_latency=inter.latency,
                                         nics_per_host=nics_per_host, links_per_rank=1)

    return seconds("ring", None) / seconds("hierarchical", 1)


register(Question(
    "ch02.ring_bytes_gb", lambda n=8, size_gb=1.0: cost.ring_bytes_per_rank(size_gb * 1e9, n) / 1e9, unit="GB",
    hints=((lambda given, right, v: abs(given / (2 * v["size_gb"]) - 1) < 0.005,
            "Not 2M: each rank sends (n - 1)/n of M per phase."),
           (lambda given, right: abs(given / (right / 2) - 1) < 0.005,
            "That is one phase: the reduce-scatter sends (n - 1)/n of M, and the all-gather sends as much again.")),
    hint="Each rank sends 2(n - 1)/n x M bytes: n - 1 chunks of M/n in each of the two phases.",
    givens=(Given("n", (4, 6, 12, 16, 24, 32, 64), "{} GPUs"), Given("size_gb", (0.5, 2.0, 3.0, 4.0, 6.0), "a {:g} GB buffer")),
))

register(Question(
    "ch02.gpt2xl_ms",
    lambda n=32: 1e3 * compare.allreduce_seconds("ring", hardware.gradient_bytes("gpt2_xl", "bf16"), n,
                                            hardware.link("ib_hdr").bandwidth, hardware.link("ib_hdr").latency),
    unit="ms",
    hints=((lambda given, right: abs(given / right - 2) < 0.02, "bf16 takes 2 bytes per parameter, not 4."),
           (lambda given, right: abs(given / right - 0.5) < 0.02,
            "That is half the time: count M in bytes, 2 bytes per bf16 parameter, not one per parameter."),),
    hint="T = 2(n - 1)/n x M/B + 2(n - 1) alpha, with M in bytes and B in bytes per second (200 Gb/s = 25 GB/s).",
    givens=(Given("n", (8, 16, 64, 128, 256), "{} GPUs"),),
))

register(Question(
    "ch02.crossover_kb", _crossover_kb, unit="kB",
    hint="Set 2(n-1) alpha + 2(n-1)/n M beta equal to log2 n (alpha + M beta) and solve for M.",
))

register(Question(
    "ch02.busbw_gbs", lambda algbw=40.0, n=8: compare.algbw_to_busbw(algbw * 1e9, n) / 1e9, unit="GB/s",
    hints=((lambda given, right, v: abs(given / (v["algbw"] * v["n"] / (2 * (v["n"] - 1))) - 1) < 0.005,
            "You divided: busbw is algbw times 2(n-1)/n."),
           (lambda given, right: abs(given / (right / 2) - 1) < 0.005,
            "(n-1)/n is the factor for all-gather and reduce-scatter; an all-reduce is both, 2(n-1)/n."),
           (lambda given, right, v: v["n"] != 16 and abs(given / (v["algbw"] * 2 * 15 / 16) - 1) < 0.0005,
            "That is the factor for 16 GPUs, the chapter's worked example; use this question's n in 2(n-1)/n.")),
    hint="busbw = algbw x 2(n - 1)/n for all-reduce.",
    givens=(Given("algbw", (12.0, 25.0, 60.0, 90.0, 150.0), "an algbw of {:g} GB/s"), Given("n", (4, 16, 32, 64), "{} GPUs")),
))

register(Question(
    "ch02.hd_steps", lambda n=64: _hd_steps(n), unit="steps", rel_tol=0.0,
    givens=(Given("n", (8, 16, 32, 128), "{} ranks"),),
    hints=((lambda given, right, v: given == 2 * (v["n"] - 1),
            "That is 2(n - 1), the ring's count; halving-doubling needs 2 log2 n."),
           (lambda given, right, v: given == right / 2,
            "That is one phase: the reduce-scatter's log2 n halving steps; the all-gather's log2 n doubling "
            "steps follow.")),
    hint="log2 n halving steps, then log2 n doubling steps.",
    means=(
        "# A run of halving-doubling on n ranks (the exercise's 64, or your own number): its trace records\n"
        "# every message and the step it is sent in; trace.steps counts the steps.\n"
        "n = 64\n"
        "_, trace = collectives.allreduce([np.arange(float(n))] * n, algorithm=\"halving_doubling\")\n"
        "trace.step_messages(0)[:2]",
    ),
))

register(Question(
    "ch02.hier_speedup", lambda: _hier_speedup(1), unit="x",
    # 0.3 %: the bytes ratio alone, (31/32) / (3/4) = 1.292, lies 0.8 % from the answer and must not pass
    rel_tol=0.003,
    hints=((lambda given, right: abs(given / _hier_speedup(None) - 1) < 0.02,
            "That is the speed-up with one NIC per GPU; here the 8 GPUs of a host share one card."),
           (lambda given, right: abs(given / _hier_speedup(1, hosts=2) - 1) < 0.02,
            "That is the chapter's 2 hosts; with 4 hosts the card carries 2(h-1)/h x M = 3/2 x M."),
           (lambda given, right: abs(given / _byte_ratio(16, 2) - 1) < 0.005,
            "That is the chapter's byte ratio (n-1)/n / ((h-1)/h) for 2 hosts of 8; here n = 32 and h = 4, "
            "and the NVLink phases add time."),
           (lambda given, right: abs(given / _byte_ratio(32, 4) - 1) < 0.002,
            "That is the bytes ratio through a host's card, (n-1)/n / ((h-1)/h); the start-ups count too, and "
            "the NVLink phases inside the host add time."),
           (lambda given, right: abs(given / _hier_speedup_nvlink_as_sold() - 1) < 0.002,
            "NVLink 2.0's 300 GB/s per GPU adds both directions: a GPU sends at 150 GB/s.")),
    hint="Flat ring: 2(n-1)/n x M through each host's card. Hierarchical with one card per host: the 8 shards "
         "of M/8 all pass through it, 2(h-1)/h x M in all, plus the NVLink phases inside the host.",
    means=(
        "# The chapter's cluster calculator: choose the model, GPUs, hosts, links and network cards of the exercise.\n"
        "collectives_views.cluster_calculator()",
    ),
))


def _pick(n: int = 12, size_kb: float = 500.0) -> str:
    """The fastest one-port all-reduce of ``size_kb`` kB on ``n`` ranks of 100 Gb/s Ethernet, by its name in
    :data:`commlib.collectives.compare.ALGORITHMS` (each timed at its best fold, as the comparison figure draws it)."""
    item = hardware.link("eth_100g")
    times = {a: compare.best_fold_seconds(a, size_kb * 1e3, n, item.bandwidth, item.latency)
             for a in compare.one_port_allreduces(n)}
    return min(times, key=times.get)


#: alpha B of 100 Gb/s Ethernet, in bytes: what a link carries in the time of one start-up.
_ETH100_AB = hardware.link("eth_100g").latency * hardware.link("eth_100g").bandwidth


def _named(given: object) -> str:
    """An algorithm's name as a student may type it ("Recursive doubling", "halving-doubling"), as the registry has it."""
    return str(given).strip().casefold().replace("-", "_").replace(" ", "_")


register(Question(
    "ch02.pick_500kb", _pick,
    hints=((lambda given, right: _named(given) != right and right in _named(given),
            f"The right algorithm; name it as compare.ALGORITHMS does: \"{_pick()}\"."),
           (lambda given, right: _named(given) not in compare.ALGORITHMS and right not in _named(given),
            "Answer with a name from compare.ALGORITHMS, such as \"ring\"."),
           (lambda given, right: _named(given) == "recursive_doubling",
            "Recursive doubling pays the fewest start-ups, but sends M at every step, and its fold on 12 ranks adds "
            f"2M more: at 500 kB, {500e3 / _ETH100_AB:g} times alpha B on this link, those bytes weigh more than the "
            "start-ups saved."),
           (lambda given, right: _named(given) == "halving_doubling",
            "On a power of two halving-doubling would tie the winner; 12 is not one, and its fold adds one M of "
            "bytes and two start-ups."),
           (lambda given, right: _named(given) == "ring",
            "The ring sends the fewest bytes, 2(n-1)/n x M, but it is not alone in that: look in the list for one "
            "with those bytes and far fewer start-ups than the ring's 2(n-1)."),
           (lambda given, right: _named(given) == "torus",
            "Close: the 2-D torus sends the ring's bytes, but another algorithm sends them with fewer start-ups."),
           (lambda given, right: _named(given) in ("tree", "pipelined_tree", "double_binary_tree", "naive"),
            "A tree sends 2M or more; at 500 kB the bytes count as much as the start-ups, and others send "
            "2(n-1)/n x M.")),
    hint=f"Write each time in start-ups' worth, a + b/(alpha B), with alpha B = {_ETH100_AB / 1e3:g} kB on 100 Gb/s "
         f"Ethernet (alpha = {1e6 * hardware.link('eth_100g').latency:g} µs): at 500 kB both terms count.",
    means=(
        "# The chapter's comparison of every all-reduce on 12 ranks of 100 Gb/s Ethernet (the slider's frame for 12).\n"
        "collectives_views.comparison_figure(n=12, link=\"eth_100g\")",
    ),
))
