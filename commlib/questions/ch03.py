"""Self-checks for the parameter-server chapter (chapter 3). Answers are computed, never typed in."""

from .. import cost, hardware
from ..check import Given, Question, exercise_means, register
from ..parameter_servers import simulate as ps
from ..units import parse_rate, parse_size, to_unit

_VGG = hardware.gradient_bytes("vgg16", "fp32")
_BERT = hardware.gradient_bytes("bert_large", "fp32")
_E100 = hardware.link("eth_100g").bandwidth
_E200 = hardware.link("eth_200g").bandwidth


def _ratio(target: float, tol: float = 0.02):
    return lambda given, right: abs(given / right - target) < tol


def _is(mistake, tol: float = 0.02):
    """A hint's test: the answer is ``mistake(values)``, computed from the variant's own numbers."""
    return lambda given, right, values: abs(given / mistake(values) - 1) < tol


register(Question(
    "ch03.server_in_gb", lambda n=16: ps.ps_traffic(_VGG, n, 1).shard_host / 1e9, unit="GB",
    givens=(Given("n", (4, 8, 12, 24, 32), "{} workers"),),
    hints=((_ratio(2.0), "That counts both directions; the question asks what the server receives."),
           (_is(lambda v: _VGG / 1e9), "That is one worker's gradient; the single server receives one from each "
                                       "worker.")),
    hint="One server receives the whole gradient M from each of the n workers: n x M bytes.",
))

register(Question(
    "ch03.one_server_ms", lambda n=16: 1e3 * cost.ps_time(_VGG, n, _E100, servers=1), unit="ms",
    givens=(Given("n", (4, 8, 12, 24, 32), "{} workers"),),
    hints=((_ratio(2.0), "Full-duplex NIC, push and pull pipelined: the server sends and receives at once, "
                         "so the time is n M / B, not 2 n M / B."),),
    hint="The server's NIC carries n M each way at B bytes/s; 100 Gb/s is 12.5 GB/s.",
))

register(Question(
    "ch03.smallest_k", lambda: ps.smallest_k_to_beat_ring(_BERT, 16, _E100), unit="server machines",
    rel_tol=0.0,
    hints=((lambda given, right: given == 8, "k = n/2 = 8 still loses: each server then moves 2M each way, "
                                             "more than the ring's 2(n-1)M/n."),
           (lambda given, right: given == 16, "k = n wins, but fewer servers already do."),),
    hint="PS wins once n M / (k B) < 2 (n-1) M / (n B): solve for the smallest whole k.",
    means=(
        "# The chapter's calculator: parameter server against ring all-reduce.\n"
        "ps_views.ps_calculator(model=\"bert_large\", n=8, k=4)",
    ),
))

register(Question(
    "ch03.smallest_k_fast_servers", lambda: ps.smallest_k_to_beat_ring(_BERT, 16, _E100, _E200),
    unit="server machines", rel_tol=0.0,
    hint="With server NICs twice as fast, each server may carry twice the bytes: k > n^2 Bw / (2 (n-1) Bs).",
))

register(Question(
    "ch03.byteps_ms",
    lambda k=4, size_mb=64: 1e3 * cost.byteps_time(parse_size(f"{size_mb} MB"), 8, k, parse_rate("200 Gb/s")), unit="ms",
    givens=(Given("k", (1, 2, 3, 6), "{} spare CPU machines"), Given("size_mb", (16, 32, 128, 256), "a {} MB tensor")),
    hints=((_is(lambda v: 1e3 * cost.byteps_time(parse_size(f"{v['size_mb']} MB"), 8, 0, parse_rate("200 Gb/s"))),
            "That is the ring all-reduce time, with no CPU machines (k = 0)."),
           (_is(lambda v: 1e3 * parse_size(f"{v['size_mb']} MB") / parse_rate("200 Gb/s")),
            "That is M/B, the time with k >= n CPU machines."),),
    hint="T = 2n(n-1)M / ((n^2 + kn - 2k) B), with M in bytes and B = 200 Gb/s = 25 GB/s.",
))

register(Question(
    "ch03.colocated_rate_gbps",
    lambda: to_unit(ps.ps_traffic(61.5e6 * hardware.dtype_bytes("fp32"), 8, 8, colocated=True).shard_host / 0.5,
                    "Gb/s"),
    unit="Gb/s",
    hints=((_ratio(2.0), "That sums both directions (sent and received together, 4 x ... x 7/8); a "
                         "full-duplex NIC needs half of it in each direction."),),
    hint="Each machine sends 2 (n-1)/n x M per iteration as worker and server together; divide by the "
         "iteration time, then convert bytes to bits.",
))


#: The sparse exercise's embedding table: rows, values per row (fp32), rows each worker touches per step, and the
#: bytes of the row index that travels with every pushed row.
SPARSE = {"table_rows": 10_000_000, "width": 64, "touched": 10_000, "index_bytes": 8}
_E25 = hardware.link("eth_25g").bandwidth


def _sparse_push(touched: int, index_bytes: int = SPARSE["index_bytes"]) -> float:
    return touched * (SPARSE["width"] * hardware.dtype_bytes("fp32") + index_bytes)


register(Question(
    "ch03.sparse_ps_ms",
    lambda touched=SPARSE["touched"]: 1e3 * cost.ps_time(_sparse_push(touched), 8, _E25, servers=8), unit="ms",
    givens=(Given("touched", (2_000, 5_000, 20_000, 40_000, 80_000), "{} rows touched per worker and step"),),
    hints=((_is(lambda v: 1e3 * cost.allreduce_time(SPARSE["table_rows"] * SPARSE["width"] * hardware.dtype_bytes("fp32"),
                                                    8, _E25, algorithm="ring")),
            "That is the dense ring all-reduce of the whole table; the parameter server moves only the touched rows."),
           (_is(lambda v: 1e3 * cost.ps_time(_sparse_push(v["touched"], 0), 8, _E25, servers=8), tol=0.01),
            "Each pushed row also carries its 8-byte row index."),
           (_ratio(2.0), "Full-duplex NICs, push and pull pipelined: a card sends and receives at once."),
           (_is(lambda v: 1e3 * cost.collective_time("all_gather", 8 * _sparse_push(v["touched"]), 8, _E25)),
            "That is the sparse all-gather among the 8 workers, each receiving the other 7 pushes; the "
            "parameter server's cards carry one push each way."),
           (_is(lambda v: 1e3 * cost.ps_time(_sparse_push(v["touched"]), 8, _E25, servers=8, colocated=True)),
            "That is the all-to-all exchange of rows, a colocated parameter server, on the workers' 8 cards; the question puts the "
            "rows on 8 separate servers."),),
    hint="A worker pushes rows x (64 x 4 B + 8 B) and pulls as much; with k = n servers each server card carries "
         "the same bytes, so the round is that push over B (25 Gb/s = 3.125 GB/s).",
))


exercise_means(
    "ex-ps-predict-k",
    "# The chapter's calculator: parameter server against ring all-reduce.\n"
    "ps_views.ps_calculator(model=\"bert_large\", n=8, k=4)",
)
