"""Self-checks for the introduction (chapter 0). Answers are computed, never typed in."""

import math

from .. import cost, hardware
from ..check import Given, Question, register
from ..step import cost as step
from ..units import parse_rate

#: The givens of the exercises: the questions below read them and the chapter prints (glues) them,
#: so the text and the check cannot drift apart.
GIVENS = {
    "nvlink3_link": "nvlink3",
    "bert_n": 8, "bert_link": "eth_100g",
    "resnet_bw_n": 16, "resnet_bw_tc": 0.1, "resnet_bw_eff": 0.9,
    "min_tokens_n": 256, "min_tokens_u": 0.4, "min_tokens_link": "eth_200g", "min_tokens_model": "gpt2",
    "min_tokens_gpu": "a100",
    "faster_n": 8, "faster_link": "eth_10g", "faster_tc": 0.4,
    "fusion_link": "nvlink5", "fusion_memory": "v100", "fusion_n": 8,
    "psi_n": 64, "psi_link": "ib_ndr", "psi_raise": 0.10,
}

def _is(mistake, tol: float = 0.005):
    """A hint's test: the answer is ``mistake(values)``, computed from the variant's own numbers (``values``).

    The tolerance is tighter than the generic hints' 1 %, so that a mistake close to a unit slip (n/(n-1) at
    n = 16 lies 0.7 % from GB against GiB) is told apart by what it is.
    """
    return lambda given, right, values: abs(given / mistake(values) - 1) < tol


def _bert_ring_ms(n: int, factor: float) -> float:
    """BERT-Large's fp16 gradient over the exercise's link, ``factor`` x M / B, in ms (latency left out)."""
    return 1e3 * factor * hardware.gradient_bytes("bert_large", "fp16") / hardware.link(GIVENS["bert_link"]).bandwidth


register(Question(
    "ch00.gbe_bytes", lambda rate_gbps=1: parse_rate(f"{rate_gbps:g} Gb/s"), unit="B/s",
    givens=(Given("rate_gbps", (10, 25, 40, 100, 200, 400), "a link sold as {} Gb/s"),),
    hint="A link sold as 1 Gb/s moves 10^9 bits per second; divide by the bits in a byte.",
))

def _resnet_efficiency_pct(tc: float) -> float:
    """ResNet-50's fp32 ring all-reduce on the exercise's ranks and link against ``tc`` seconds of compute, in %."""
    link = hardware.link(GIVENS["faster_link"])
    t_m = cost.allreduce_time(hardware.gradient_bytes("resnet50", "fp32"), GIVENS["faster_n"], link.bandwidth,
                              link.latency)
    return 100 * cost.parallel_efficiency(tc, t_m)


register(Question(
    "ch00.faster_gpu_eff", lambda: _resnet_efficiency_pct(GIVENS["faster_tc"] / 2), unit="%",
    hints=((lambda given, right: abs(given / (_resnet_efficiency_pct(GIVENS["faster_tc"]) / 2) - 1) < 0.005,
            "That halves the efficiency; but only T_c halves, T_m stays, so T_m / T_c doubles: 1 / (1 + 2r)."),
           (lambda given, right: abs(given / _resnet_efficiency_pct(GIVENS["faster_tc"]) - 1) < 0.005,
            "That is the old efficiency: the all-reduce time is the same, but the compute time halves.")),
    hint="The network is unchanged, so T_m stays; halve T_c and use efficiency = 1 / (1 + T_m / T_c).",
))

register(Question(
    "ch00.nvlink3_one_way", lambda: hardware.link(GIVENS["nvlink3_link"]).bandwidth / 1e9, unit="GB/s",
    hint="NVIDIA's 600 GB/s for an A100 adds both directions of all its links.",
))

register(Question(
    "ch00.resnet50_fp16_mib", lambda: hardware.gradient_bytes("resnet50", "fp16") / 2**20, unit="MiB",
    hints=((lambda given, right: abs(given / right - 2) < 0.02,
            "That is the fp32 size: fp16 and bf16 take 2 bytes per element."),),
    hint="Parameters x bytes per element, then divide by 2^20 for MiB.",
))

register(Question(
    "ch00.gpt2xl_adam_gb", lambda: hardware.training_state_bytes("gpt2_xl", "mixed_adam") / 1e9, unit="GB",
    hints=((lambda given, right: abs(given / right - 0.25) < 0.02,
            "4 B per parameter is the fp32 gradient alone; mixed-precision Adam keeps 16 B per parameter."),),
    hint="Mixed-precision Adam keeps 2 + 2 + 4 + 4 + 4 = 16 bytes per parameter.",
))

register(Question(
    "ch00.bert_large_ring_ms",
    lambda n=GIVENS["bert_n"]: 1e3 * cost.allreduce_time(hardware.gradient_bytes("bert_large", "fp16"), n,
                                      hardware.link(GIVENS["bert_link"]).bandwidth),
    unit="ms",
    hints=((_is(lambda v: _bert_ring_ms(v["n"], 2)),
            "That is 2 M / B: each rank sends 2(n-1)/n of the buffer, not two whole buffers."),
           (_is(lambda v: _bert_ring_ms(v["n"], (v["n"] - 1) / v["n"])),
            "That is half the ring: its reduce-scatter and its all-gather each send (n-1)/n of the buffer, "
            "2(n-1)/n in all.")),
    givens=(Given("n", (4, 16, 32, 64), "{} GPUs"),),
    hint="Ring all-reduce time: 2(n-1)/n x M / B, with M in bytes and B in bytes per second.",
))

register(Question(
    "ch00.resnet_bw_90",
    lambda n=GIVENS["resnet_bw_n"], tc=GIVENS["resnet_bw_tc"]:
        cost.required_bandwidth(hardware.gradient_bytes("resnet50", "fp32"), n, tc, GIVENS["resnet_bw_eff"]) / 1e9,
    givens=(Given("n", (4, 8, 32, 64), "{} GPUs"), Given("tc", (0.05, 0.2, 0.3), "T_c = {:g} s per step")),
    unit="GB/s",
    hints=((_is(lambda v: cost.required_bandwidth(hardware.gradient_bytes("resnet50", "fp32"), v["n"], v["tc"],
                                                  GIVENS["resnet_bw_eff"]) / 1e9 * v["n"] / (v["n"] - 1)),
            "That charges each rank two whole buffers (2 M); the ring sends 2(n-1)/n M per rank."),),
    hint="Allowed communication time is (1 - ε)/ε x T_c; divide the bytes each rank sends by it.",
))


def _min_tokens(n: int = GIVENS["min_tokens_n"], dtype: str = "bf16") -> float:
    link = hardware.link(GIVENS["min_tokens_link"])
    return step.min_tokens_compute_bound(hardware.model(GIVENS["min_tokens_model"]).params, n, link.bandwidth,
                                         hardware.accelerator(GIVENS["min_tokens_gpu"]).peak_flops,
                                         GIVENS["min_tokens_u"], hardware.dtype_bytes(dtype), link.latency)


def _min_tokens_whole_buffers(n: int) -> float:
    """The mistake of charging the ring 2 M / B (two whole buffers) instead of 2(n-1)/n M / B."""
    link = hardware.link(GIVENS["min_tokens_link"])
    psi, chip = hardware.model(GIVENS["min_tokens_model"]).params, hardware.accelerator(GIVENS["min_tokens_gpu"])
    t_m = 2 * (n - 1) * link.latency + 2 * psi * hardware.dtype_bytes("bf16") / link.bandwidth
    return t_m * GIVENS["min_tokens_u"] * chip.peak_flops / step.training_flops(psi, 1)


def _min_tokens_no_latency(n: int) -> float:
    """The mistake of leaving the start-ups out ({eq}`eq-min-batch` alone)."""
    link = hardware.link(GIVENS["min_tokens_link"])
    return step.min_tokens_compute_bound(hardware.model(GIVENS["min_tokens_model"]).params, n, link.bandwidth,
                                         hardware.accelerator(GIVENS["min_tokens_gpu"]).peak_flops,
                                         GIVENS["min_tokens_u"], hardware.dtype_bytes("bf16"), 0.0)


register(Question(
    # whole tokens, rounded up: one token fewer than the bound leaves T_c < T_m
    "ch00.min_tokens", lambda n=GIVENS["min_tokens_n"]: math.ceil(_min_tokens(n)), unit="tokens",
    hints=((lambda given, right: given == right - 1,
            "That is the bound rounded down: one token fewer leaves compute shorter than the all-reduce; round up."),
           (_is(lambda v: _min_tokens(v["n"], "fp32"), tol=0.01),
            "That is the fp32 gradient: the ring here carries bf16, 2 bytes per parameter."),
           (_is(lambda v: _min_tokens_whole_buffers(v["n"])),
            "That charges the ring 2 M / B: each rank sends 2(n-1)/n of the buffer, not two whole buffers."),
           (_is(lambda v: _min_tokens_no_latency(v["n"])),
            "That leaves the start-ups out: the ring's T_m also has 2(n-1) alpha, and for a model this small "
            "they count.")),
    hint="Compute time 6 x parameters x tokens / (u x peak FLOP/s) equals the all-reduce time, start-ups "
         "included; solve for tokens.",
    givens=(Given("n", (32, 64, 128, 512), "{} A100s"),),
))


def _fused_over_copy(link_key: str = GIVENS["fusion_link"], gamma_scale: float = 1.0) -> float:
    """The ring's all-reduce of ResNet-50's fp32 gradient with the reduction fused into the copy, over the copy alone,
    on ``link_key`` behind a V100's memory (start-ups left out); ``gamma_scale`` scales gamma (a mistake's)."""
    link, memory = hardware.link(link_key), hardware.accelerator(GIVENS["fusion_memory"]).memory_bandwidth
    nbytes, n = hardware.gradient_bytes("resnet50", "fp32"), GIVENS["fusion_n"]
    fused, _ = step.reduction_time_bounds(nbytes, n, link.bandwidth, 0.0, gamma_scale * cost.reduction_gamma(memory))
    return fused / cost.allreduce_time(nbytes, n, link.bandwidth, 0.0)


register(Question(
    "ch00.fusion_ratio", lambda: _fused_over_copy(), unit="x",
    hints=((lambda given, right: abs(given * right - 1) < 0.005,
            "That is the copy's time over the reduction's; the question asks for the reduction's over the copy's."),
           (lambda given, right: abs(given / _fused_over_copy(gamma_scale=2) - 1) < 0.005,
            "That reduces every byte sent; the ring adds only in its first half, v = b/2."),
           (lambda given, right: abs(given / _fused_over_copy(gamma_scale=1 / 3) - 1) < 0.005,
            "That is the copy's own time; adding reads two inputs and writes one, gamma = 3 / B_mem per byte.")),
    hint="Fused, the time is max(b beta, v gamma); for the ring v = b/2 and gamma = 3 / B_mem, so the ratio is 3B / (2 B_mem).",
))


def _psi_params_m(dtype: str = "bf16", n: int = GIVENS["psi_n"]) -> float:
    """Millions of parameters below which the ring's start-ups raise x_min by more than ``psi_raise``: the factor is
    1 + M*/M, so M < M* / raise, with M = parameters x bytes per element and M* = n alpha B."""
    link = hardware.link(GIVENS["psi_link"])
    balance = cost.latency_bandwidth_balance(n, link.bandwidth, link.latency)
    return balance / GIVENS["psi_raise"] / hardware.dtype_bytes(dtype) / 1e6


register(Question(
    "ch00.psi_cancels_params", lambda: _psi_params_m(), unit="million parameters",
    hints=((lambda given, right: abs(given / _psi_params_m("fp32") - 1) < 0.005,
            "That counts 4 bytes per parameter (fp32); the gradients here are bf16, 2 bytes per parameter."),
           (lambda given, right: abs(given / (GIVENS["psi_raise"] * right) - 1) < 0.005,
            f"That is where M = M*, where the start-ups double x_min; they add {100 * GIVENS['psi_raise']:.0f} % where "
            f"M*/M = {GIVENS['psi_raise']:g}, at M = M* / {GIVENS['psi_raise']:g}."),
           (lambda given, right: abs(given / (hardware.dtype_bytes("bf16") * right) - 1) < 0.005,
            "That is the gradient's bytes, in millions; divide by the bytes of one bf16 parameter."),
           (lambda given, right: abs(given / (right * (GIVENS["psi_n"] - 1) / GIVENS["psi_n"]) - 1) < 0.005,
            "That takes M* = (n-1) alpha B; the (n-1) cancels between start-ups and bytes, M* = n alpha B."),
           (lambda given, right: abs(given / (1e6 * right) - 1) < 0.005,
            "That is the count itself; the answer is asked in millions of parameters.")),
    hint=f"The start-ups multiply x_min by 1 + M*/M with M* = n alpha B; solve M*/M = {GIVENS['psi_raise']:g} for M, "
         "then divide by the bytes per parameter.",
))
