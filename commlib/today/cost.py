r"""Today's collectives in closed form: sharded data parallelism, experts, in-network reduction, PowerSGD.

Numpy-free, so the chapter's calculators run in the browser. The executed versions are
:mod:`commlib.today.zero`, :mod:`commlib.today.moe`, :mod:`commlib.today.in_network` and
:mod:`commlib.today.compression`; each holds its trace against the form here.

Memory follows Rajbhandari et al. (2020, Figure 1): with mixed-precision Adam each parameter takes
2 bytes of weights, 2 of gradient and K = 12 of optimizer state; stage 1 divides the optimizer
state by n, stage 2 also the gradients, stage 3 also the weights (:func:`memory_per_rank`).

>>> round(memory_per_rank(7_500_000_000, 64, 1) / 1e9, 2)
31.41
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import hardware
from ..units import check_count, check_nonnegative, check_positive

__all__ = ["ZERO_STAGES", "zero_bytes_per_rank", "moe_all_to_all_bytes", "in_network_allreduce_time",
           "powersgd_numbers", "moe_step_bytes", "OPTIMIZER_BYTES", "memory_per_rank", "fitting_stages",
           "WireFormat", "FP8_BLOCK_SCALED", "FP8_TENSORWISE", "moe_token_copies"]


#: ZeRO stages :func:`zero_bytes_per_rank` knows: 0 is plain data parallelism.
ZERO_STAGES = (0, 1, 2, 3)


def _element_bytes(dtype: str) -> int:
    return hardware.dtype_bytes(dtype)


def zero_bytes_per_rank(params: int, n: int, stage: int, dtype: str = "bf16", gather: WireFormat | None = None) -> float:
    r"""Bytes each rank sends per training step under ZeRO ``stage`` (0 = plain data parallelism).

    Rajbhandari et al. (2020, sec. 7): plain data parallelism all-reduces the
    gradient (a ring: reduce-scatter then all-gather, :math:`2\frac{n-1}{n}\Psi`
    elements sent); stages 1 and 2 reduce-scatter the gradient and all-gather
    the updated parameters, the same :math:`2\frac{n-1}{n}\Psi`; stage 3 also
    all-gathers the parameters a second time (forward and backward each need
    them, and each rank keeps only its shard), :math:`3\frac{n-1}{n}\Psi`,
    1.5 times as much. Times ``s`` bytes per element of ``dtype``.

    ``gather``: the format of stage 3's two weight all-gathers when it is not ``dtype`` (``None``), such as
    FSDP's FP8 all-gather (:data:`FP8_TENSORWISE`); the gradient's reduce-scatter stays in ``dtype``:
    :math:`\frac{n-1}{n}\Psi\,(2 s_{gather} + s)`.

    >>> zero_bytes_per_rank(10**9, 64, 3) / zero_bytes_per_rank(10**9, 64, 0)
    1.5
    >>> zero_bytes_per_rank(1000, 4, 2, dtype="fp32")
    6000.0
    >>> zero_bytes_per_rank(10**9, 64, 3, gather=FP8_TENSORWISE) / zero_bytes_per_rank(10**9, 64, 3)
    0.6666666666666666
    """
    params = check_count("params", params, minimum=1)
    n = check_count("n", n, minimum=1)
    if stage not in ZERO_STAGES or isinstance(stage, bool):
        raise ValueError(f"stage must be one of 0, 1, 2, 3, got {stage!r}")
    element = _element_bytes(dtype)
    if gather is not None:
        if not isinstance(gather, WireFormat):
            raise ValueError(f"gather must be a WireFormat or None, got {gather!r}")
        if stage != 3:
            raise ValueError(f"gather (a format for the weight all-gathers) applies to stage 3 only, got stage {stage}")
        return (n - 1) / n * params * (2 * gather.bytes_per_element + element)
    passes = 3 if stage == 3 else 2
    return passes * (n - 1) / n * params * element


def moe_all_to_all_bytes(tokens: int, hidden: int, top_k: int, experts: int, dtype: str = "bf16") -> float:
    r"""Bytes each rank sends in one all-to-all of a mixture-of-experts layer (dispatch or combine).

    Each of the rank's ``tokens`` (x) goes to its ``top_k`` (:math:`\kappa`)
    experts as a vector of ``hidden`` (:math:`d_{model}`) elements of ``s``
    bytes. With the E experts spread evenly, one a rank, and routing uniform, a
    copy stays on its own rank with probability 1/E: the rank sends
    :math:`x\,\kappa\,d_{model}\,s\,\frac{E-1}{E}` bytes
    (Lepikhin et al. 2021; the combine all-to-all sends the same back).

    >>> moe_all_to_all_bytes(4096, 4096, 2, 8)        # bf16
    58720256.0
    """
    tokens = check_count("tokens", tokens, minimum=0)
    hidden = check_count("hidden", hidden, minimum=1)
    experts = check_count("experts", experts, minimum=1)
    top_k = check_count("top_k", top_k, minimum=1, maximum=experts)
    return tokens * top_k * hidden * _element_bytes(dtype) * (experts - 1) / experts


def in_network_allreduce_time(nbytes: float, n: int, bandwidth: float, latency: float = 0.0) -> float:
    r"""All-reduce time when a switch reduces (InfiniBand SHARP, NVLink SHARP): :math:`2\alpha + M/B`.

    Each rank sends its M bytes up to the switch once; the switch adds the n
    contributions as they stream through and sends the sum down, M bytes to
    each rank. Up and down run at once on full-duplex links, pipelined, so
    the bandwidth term is M/B against the ring's :math:`2\frac{n-1}{n}M/B`;
    the latency is two hops (Graham et al. 2016). ``n = 1`` costs nothing.

    >>> in_network_allreduce_time(1e9, 8, 100e9)
    0.01
    """
    nbytes = check_nonnegative("nbytes", nbytes)
    n = check_count("n", n, minimum=1)
    bandwidth = check_positive("bandwidth", bandwidth)
    latency = check_nonnegative("latency", latency)
    if n == 1:
        return 0.0
    return 2 * latency + nbytes / bandwidth


def powersgd_numbers(rows: int, cols: int, rank: int) -> int:
    r"""Numbers PowerSGD communicates for one ``rows`` x ``cols`` gradient matrix: :math:`(d_1 + d_2)\,r`.

    Vogels et al. (2019): for a gradient matrix G of :math:`d_1 \times d_2` entries the factors
    :math:`U = GV` (:math:`d_1 \times r`) and :math:`V = G^\top U` (:math:`d_2 \times r`) are
    all-reduced instead of the :math:`d_1 d_2` entries (the paper writes M, P and Q; this book keeps
    M for bytes and n for ranks).

    >>> powersgd_numbers(1024, 1024, 4), 1024 * 1024
    (8192, 1048576)
    """
    rows = check_count("rows", rows, minimum=1)
    cols = check_count("cols", cols, minimum=1)
    rank = check_count("rank", rank, minimum=1, maximum=min(rows, cols))
    return (rows + cols) * rank


@dataclass(frozen=True)
class WireFormat:
    """How a tensor's values travel: ``element_bytes`` a value, plus ``scale_bytes`` for every ``block`` values.

    An 8-bit float holds too narrow a range for a whole tensor, so a block-scaled format sends each ``block`` of
    values with its own scale, by which the receiver multiplies them back. ``name`` says it in words.

    >>> FP8_BLOCK_SCALED.bytes_per_element                      # 1 byte a value, a 4-byte scale a 128 values
    1.03125
    """

    name: str
    element_bytes: int
    scale_bytes: int = 0
    block: int = 1

    @property
    def bytes_per_element(self) -> float:
        """Bytes a value costs on the wire, its share of the scales included."""
        return self.element_bytes + self.scale_bytes / self.block


#: FP8 (e4m3) with one fp32 scale a 128 values: DeepEP's FP8 dispatch takes the tokens as ``[tokens, hidden]`` FP8
#: values and ``[tokens, hidden // 128]`` fp32 scales (``deep_ep/buffers/legacy.py``, ``Buffer.dispatch``).
FP8_BLOCK_SCALED = WireFormat("fp8, one fp32 scale a 128 values", 1, 4, 128)

#: FP8 (e4m3) with one scale for a whole weight tensor, as FSDP2 all-gathers weights under torchao's float8
#: training (``enable_fsdp_float8_all_gather``, tensorwise scaling only): the ranks agree on the scale beforehand,
#: by one all-reduce of every tensor's amax (``precompute_float8_dynamic_scale_for_fsdp``), so the all-gather
#: carries the 1-byte values alone and no scale (``fsdp_pre_all_gather`` returns the scale as metadata).
FP8_TENSORWISE = WireFormat("fp8, one scale a tensor, agreed before the gather", 1)


def moe_step_bytes(tokens: int, hidden: int, top_k: int, experts: int, gpus_per_host: int,
                   dtype: str = "bf16", dispatch: WireFormat | None = None) -> dict[str, float]:
    r"""Bytes each rank sends per training step and MoE layer, over NVLink and over the network.

    A training step runs four all-to-alls per MoE layer: dispatch and combine in the forward pass,
    and their gradients, the same sizes, in the backward pass (Lepikhin et al. 2021). With one expert
    a rank on hosts of g = ``gpus_per_host`` GPUs and uniform routing, of a rank's :math:`x\kappa` copies
    (g - 1)/E go to the other GPUs of its host (NVLink) and (E - g)/E to other hosts (the network):

    .. math:: 4\,x\,\kappa\,d_{model}\,s\,\frac{g-1}{E} \text{ over NVLink}, \qquad
              4\,x\,\kappa\,d_{model}\,s\,\frac{E-g}{E} \text{ over the network}.

    ``dispatch``: the format of the two all-to-alls that carry tokens to the experts, the forward dispatch and the
    backward pass's gradient of combine (which runs as a dispatch), when it is not ``dtype`` (``None``): an FP8
    dispatch (:data:`FP8_BLOCK_SCALED`, ``hidden`` a multiple of its block) while the other two stay in ``dtype``.

    >>> r = moe_step_bytes(4096, 4096, 2, 8, 8)                      # one host: all NVLink
    >>> r["nvlink"] == 4 * moe_all_to_all_bytes(4096, 4096, 2, 8), r["network"]
    (True, 0.0)
    >>> r = moe_step_bytes(4096, 4096, 2, 64, 8)
    >>> round(r["network"] / (r["network"] + r["nvlink"]), 3)          # 56 of 63 remote copies leave the host
    0.889
    >>> moe_step_bytes(4096, 4096, 2, 64, 8, dispatch=FP8_BLOCK_SCALED)["network"] / r["network"]
    0.7578125
    """
    tokens = check_count("tokens", tokens, minimum=0)
    hidden = check_count("hidden", hidden, minimum=1)
    experts = check_count("experts", experts, minimum=1)
    top_k = check_count("top_k", top_k, minimum=1, maximum=experts)
    gpus_per_host = check_count("gpus_per_host", gpus_per_host, minimum=1, maximum=experts)
    if experts % gpus_per_host:
        raise ValueError(f"experts ({experts}) must be a multiple of gpus_per_host ({gpus_per_host}): one expert a GPU")
    element = _element_bytes(dtype)
    if dispatch is not None:
        if not isinstance(dispatch, WireFormat):
            raise ValueError(f"dispatch must be a WireFormat or None, got {dispatch!r}")
        if hidden % dispatch.block:
            raise ValueError(f"hidden ({hidden}) must be a multiple of the dispatch format's block ({dispatch.block})")
    to_experts = element if dispatch is None else dispatch.bytes_per_element
    copies = 2 * tokens * top_k * hidden * (to_experts + element)
    return {"nvlink": copies * (gpus_per_host - 1) / experts, "network": copies * (experts - gpus_per_host) / experts}


def moe_token_copies(top_k: int, experts: int, gpus_per_host: int) -> dict[str, float]:
    r"""Copies of one token each link carries in one all-to-all, sent copy by copy or once per remote host.

    Routing uniform, the token's :math:`\kappa` = ``top_k`` experts are distinct and drawn from the E = ``experts``,
    one a GPU on hosts of g = ``gpus_per_host``. Sent copy by copy (what :func:`moe_step_bytes` counts), the network
    carries :math:`\kappa (E - g)/E` copies and NVLink :math:`\kappa (g - 1)/E`: ``"network"`` and ``"nvlink"``.

    A library that sends a token across the network once for each remote host holding some of its experts, to the
    GPU with the same local index there, which forwards it over NVLink to the others, pays instead
    ``"network_once_per_host"``, the remote hosts among the copies (another host holds none of the token's experts
    with probability :math:`\binom{E-g}{\kappa} / \binom{E}{\kappa}`),

    .. math:: \left(\frac{E}{g} - 1\right)\left(1 - \binom{E-g}{\kappa} \Big/ \binom{E}{\kappa}\right),

    and ``"nvlink_forwarding"``, every copy whose expert's GPU has another local index than the sender's (on its own
    host or, after the network, on the remote one), :math:`\kappa (g - 1)/g`.

    >>> r = moe_token_copies(2, 64, 8)                      # top-2 of 64 experts on 8 hosts of 8
    >>> r["network"], round(r["network_once_per_host"], 3), round(r["nvlink"], 3), r["nvlink_forwarding"]
    (1.75, 1.653, 0.219, 1.75)
    """
    experts = check_count("experts", experts, minimum=1)
    top_k = check_count("top_k", top_k, minimum=1, maximum=experts)
    gpus_per_host = check_count("gpus_per_host", gpus_per_host, minimum=1, maximum=experts)
    if experts % gpus_per_host:
        raise ValueError(f"experts ({experts}) must be a multiple of gpus_per_host ({gpus_per_host}): one expert a GPU")
    none_there = math.comb(experts - gpus_per_host, top_k) / math.comb(experts, top_k)
    return {"network": top_k * (experts - gpus_per_host) / experts,
            "network_once_per_host": (experts // gpus_per_host - 1) * (1 - none_there),
            "nvlink": top_k * (gpus_per_host - 1) / experts,
            "nvlink_forwarding": top_k * (gpus_per_host - 1) / gpus_per_host}


#: Bytes per parameter of optimizer state with mixed-precision Adam (fp32 master, momentum, variance).
OPTIMIZER_BYTES = 12


def memory_per_rank(params: int, n: int, stage: int, weight_bytes: int = 2, grad_bytes: int = 2,
                    optimizer_bytes: int = OPTIMIZER_BYTES) -> float:
    r"""Bytes of model state per rank: :math:`(2 + 2 + K)\Psi`, sharded by stage (activations not counted).

    >>> memory_per_rank(7_500_000_000, 64, 0) / 1e9, round(memory_per_rank(7_500_000_000, 64, 3) / 1e9, 3)
    (120.0, 1.875)
    """
    params = check_count("params", params, minimum=1)
    n = check_count("n", n, minimum=1)
    if stage not in ZERO_STAGES or isinstance(stage, bool):
        raise ValueError(f"stage must be one of 0, 1, 2, 3, got {stage!r}")
    w = weight_bytes / (n if stage >= 3 else 1)
    g = grad_bytes / (n if stage >= 2 else 1)
    o = optimizer_bytes / (n if stage >= 1 else 1)
    return params * (w + g + o)


def fitting_stages(params: int, n: int, memory: float) -> tuple[int, ...]:
    """The ZeRO stages whose model state per rank (:func:`memory_per_rank`) fits in ``memory`` bytes (activations not
    counted): ``()`` where none does.

    >>> fitting_stages(7_500_000_000, 64, 80e9), fitting_stages(7_500_000_000, 1, 80e9)
    ((1, 2, 3), ())
    """
    if not memory > 0:
        raise ValueError(f"memory must be > 0 bytes, got {memory!r}")
    return tuple(st for st in ZERO_STAGES if memory_per_rank(params, n, st) <= memory)
