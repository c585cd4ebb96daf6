r"""Sharded data parallelism (ZeRO, FSDP): one step's collectives, executed and counted.

Plain data parallelism keeps a full copy of the parameters, gradients and
optimizer state on every rank and all-reduces the gradient. ZeRO
(Rajbhandari et al. 2020) shards them over the n ranks instead:

* stage 1 shards the optimizer state, stage 2 also the gradients: the
  gradient is *reduce-scattered* (each rank receives the sum of its shard),
  each rank updates its shard, and the parameters are *all-gathered*. A ring
  all-reduce is exactly a reduce-scatter followed by an all-gather, so the
  bytes are the same, :math:`2\frac{n-1}{n}\Psi s`;
* stage 3 (and PyTorch's FSDP) also shards the parameters: they are
  all-gathered before the forward pass and again before the backward pass,
  and the gradient is reduce-scattered, :math:`3\frac{n-1}{n}\Psi s`.

:func:`zero_step` runs those collectives with :mod:`commlib.collectives.simulate` on
real arrays and counts the bytes each rank sent;
:func:`commlib.cost.zero_bytes_per_rank` is the closed form.
:func:`memory_per_rank` (from :mod:`commlib.today.cost`, numpy-free) is the
paper's memory count with mixed-precision Adam (2 + 2 + 12 bytes per parameter).

>>> import numpy as np
>>> sent, ok = zero_step(3, [np.arange(8.0) for _ in range(4)])
>>> sent, ok
([144, 144, 144, 144], True)
>>> zero_step(2, [np.arange(8.0) for _ in range(4)])[0]
[96, 96, 96, 96]
>>> zero_step(3, [np.arange(8.0) for _ in range(4)], params=np.linspace(-1, 1, 8), fp8_gather=True)
([60, 60, 60, 60], True)
"""

from __future__ import annotations

import numpy as np

from ..collectives import simulate as collectives
from ..sgd.overlap import BACKWARD_TO_FORWARD
from ..units import check_count
from . import fp8
from .cost import OPTIMIZER_BYTES, ZERO_STAGES, memory_per_rank

__all__ = ["zero_step", "memory_per_rank", "OPTIMIZER_BYTES", "prefetch_times", "prefetch_schedule", "forward_layer_times",
           "backward_layer_times",
           "GATHER_FORMS", "node_gather_times"]


def zero_step(stage: int, grads, params=None, fp8_gather: bool = False) -> tuple[list[int], bool]:
    """Run one step's collectives of ZeRO ``stage`` on real arrays; return bytes sent per rank and a check.

    ``grads[i]`` is rank i's gradient (1-D, all of one length); ``params``
    the full parameter vector (default: zeros). Stage 0 all-reduces;
    stages 1-2 reduce-scatter then all-gather the updated shards; stage 3
    all-gathers the parameter shards twice (forward, backward), then
    reduce-scatters, and keeps the updated shards apart (the gather that
    checks them is the next step's forward gather, not counted here). The
    check says every rank ends with the same, correctly summed update.

    ``fp8_gather`` (stage 3 only): the two weight all-gathers carry e4m3 bytes with one scale for the whole
    tensor, as FSDP2 does under torchao's float8 training (:data:`commlib.today.cost.FP8_TENSORWISE`). The ranks
    first agree on the scale by an all-reduce (max) of their shards' amax, one number a tensor, which runs here
    but is left out of the count; each rank casts its shard, the gathers move the bytes, and every rank decodes.
    The check then also says every rank's gathered weights equal the whole tensor cast to FP8 with a scale from
    its own largest magnitude: the cast an FP8 matrix multiply makes anyway, so gathering in FP8 rounds nothing
    more (where the agreement fails, so does the check). The update itself stays exact, as the optimizer works on
    the high-precision shards.
    """
    if stage not in ZERO_STAGES or isinstance(stage, bool):
        raise ValueError(f"stage must be one of 0, 1, 2, 3, got {stage!r}")
    if fp8_gather and stage != 3:
        raise ValueError(f"fp8_gather applies to stage 3's weight all-gathers only, got stage {stage}")
    grads = [np.asarray(g, dtype=float) for g in grads]
    n = len(grads)
    check_count("len(grads)", n, minimum=1)
    # The idea: run the stage's collectives on the arrays, counting what each rank sends.
    params = np.zeros_like(grads[0]) if params is None else np.asarray(params, dtype=float)
    want = params - np.sum(grads, axis=0)          # an SGD step with rate 1 on the summed gradient
    sent = np.zeros(n, dtype=np.int64)
    gathered_ok = True
    if stage == 0:
        out, trace = collectives.allreduce(grads, algorithm="ring")
        sent += trace.bytes_sent
        new = [params - g for g in out]
    else:
        shards = np.array_split(params, n)
        if stage == 3 and fp8_gather:
            amax, _ = collectives.allreduce([np.array([np.max(np.abs(s), initial=0.0)]) for s in shards], op="max")
            scale = fp8.tensorwise_scale(amax[0][0])
            # the reference: the whole tensor cast with a scale from its own largest magnitude
            want_w = fp8.cast_tensorwise(params, fp8.tensorwise_scale(np.max(np.abs(params), initial=0.0)))
            for _ in ("forward", "backward"):
                codes, trace = collectives.all_gather([fp8.encode(s * scale) for s in shards])
                sent += trace.bytes_sent
                gathered_ok &= all(np.array_equal(fp8.decode(c) / scale, want_w) for c in codes)
        elif stage == 3:
            for _ in ("forward", "backward"):
                full, trace = collectives.all_gather(shards)
                sent += trace.bytes_sent
        pieces, trace = collectives.reduce_scatter(grads)
        sent += trace.bytes_sent
        updated = [shards[i] - pieces[i] for i in range(n)]
        new, trace = collectives.all_gather(updated)
        if stage < 3:   # stage 3 keeps the new shards apart: the next forward pass gathers them
            sent += trace.bytes_sent
    ok = gathered_ok and all(np.allclose(w, want) for w in new)
    return [int(b) for b in sent], bool(ok)


def prefetch_times(compute, gather) -> dict[str, float]:
    r"""Forward pass of ZeRO-3 / FSDP with and without prefetching the next layer's weights.

    ``compute[i]`` and ``gather[i]`` are layer i's compute time :math:`T_{c,i}`
    and the time :math:`T_{m,i}` to all-gather its weights (seconds), for
    layers :math:`i = 0, \dots, L-1`. Without prefetch each gather waits for
    the layer before it: :math:`\sum_i (T_{m,i} + T_{c,i})`. With prefetch the
    gather of layer i + 1 runs during the compute of layer i (one gather in
    flight at a time, as FSDP's forward prefetch does), so layer i + 1 starts
    when both are done:

    .. math:: T = T_{m,0} + \sum_{i} \max(T_{c,i}, T_{m,i+1}) \quad (T_{m,L} = 0).

    >>> prefetch_times([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    {'serial': 9.0, 'prefetched': 7.0, 'compute': 6.0}
    >>> prefetch_times([1.0, 1.0], [3.0, 3.0])["prefetched"]
    7.0
    """
    t_c = [float(t) for t in compute]
    t_m = [float(t) for t in gather]
    if not t_c or len(t_c) != len(t_m) or min(t_c + t_m) < 0:
        raise ValueError("compute and gather must be equal-length, non-empty lists of times >= 0")
    # The idea: gather layer 0, then each layer computes while the next layer's weights arrive.
    prefetched = t_m[0] + sum(max(t_c[i], t_m[i + 1] if i + 1 < len(t_m) else 0.0) for i in range(len(t_c)))
    return {"serial": sum(t_c) + sum(t_m), "prefetched": prefetched, "compute": sum(t_c)}


def prefetch_schedule(compute, gather, prefetch: bool = True) -> list[dict[str, float]]:
    r"""When each layer's gather and compute start and end in a forward pass, with or without prefetching.

    The timeline behind :func:`prefetch_times`, layer by layer: one dict per
    layer i with ``gather_start``, ``gather_end``, ``compute_start`` and
    ``compute_end`` (seconds from the start of the pass). Without prefetch
    layer i's gather starts when layer i - 1's compute ends. With prefetch
    (one gather in flight at a time) layer i + 1's gather starts as soon as
    both layer i's gather is done and layer i's compute has begun, so a layer
    waits :math:`\max(T_{c,i}, T_{m,i+1})` after the one before it started:
    whichever is longer, its compute or the next gather, sets the pace.

    >>> s = prefetch_schedule([2.0, 2.0], [1.0, 1.0])
    >>> [(r["gather_start"], r["compute_start"], r["compute_end"]) for r in s]
    [(0.0, 1.0, 3.0), (1.0, 3.0, 5.0)]
    >>> prefetch_schedule([1.0, 1.0], [3.0, 3.0])[-1]["compute_end"] == prefetch_times([1.0, 1.0], [3.0, 3.0])["prefetched"]
    True
    >>> prefetch_schedule([2.0], [1.0], prefetch=False)[0]["compute_end"]
    3.0
    """
    t_c = [float(t) for t in compute]
    t_m = [float(t) for t in gather]
    if not t_c or len(t_c) != len(t_m) or min(t_c + t_m) < 0:
        raise ValueError("compute and gather must be equal-length, non-empty lists of times >= 0")
    rows, gather_free, compute_free = [], 0.0, 0.0
    for c, m in zip(t_c, t_m):
        if prefetch:
            # the gather may start once the previous gather is done and the previous layer has started computing
            g0 = max(gather_free, rows[-1]["compute_start"] if rows else 0.0)
        else:
            g0 = compute_free
        g1 = g0 + m
        c0 = max(g1, compute_free)
        rows.append({"gather_start": g0, "gather_end": g1, "compute_start": c0, "compute_end": c0 + c})
        gather_free, compute_free = g1, c0 + c
    return rows


#: The all-gather forms :func:`node_gather_times` prices on nodes of several GPUs, in its order.
GATHER_FORMS = ("phases in series", "phases overlapped", "multi-rail ring")


def node_gather_times(layer_bytes: float, n: int, per_node: int, bandwidth: float,
                      node_bandwidth: float) -> dict[str, float]:
    r"""Seconds to all-gather ``layer_bytes`` M over n GPUs, g = ``per_node`` to a node, in each form of :data:`GATHER_FORMS`.

    Each GPU has its own network card of ``bandwidth`` :math:`B_{NIC}` and NVLink of ``node_bandwidth``
    :math:`B_{intra}` inside its node; h = n/g nodes; bandwidth terms only (start-ups left out, as for a
    layer's hundreds of megabytes they are small). With

    .. math:: T_{across} = \frac{h-1}{h}\frac{M}{g B_{NIC}}, \qquad T_{inside} = \frac{g-1}{g}\frac{M}{B_{intra}},

    the forms are

    * ``"phases in series"``: chapter 2's hierarchical scheme as an all-gather, each GPU first gathering its
      slice M/g from its counterparts on the other nodes over its card, then NVLink gathering the node's slices:
      :math:`T_{across} + T_{inside}`;
    * ``"phases overlapped"``: the same two phases pipelined over many chunks (the all-gather half of
      :func:`commlib.collectives.algorithms.hierarchical.pipelined_hierarchical_allreduce_time` as its chunks
      grow), so the busier port sets the time: :math:`\max(T_{across}, T_{inside})`;
    * ``"multi-rail ring"``: a flat ring over all n GPUs, run as g rings at once, one through each card of a
      node (the all-gather half of :mod:`commlib.collectives.algorithms.multi_rail_ring`): each card carries
      :math:`\frac{n-1}{n}\frac{M}{g B_{NIC}}` and each GPU's NVLink :math:`\frac{n-1}{n}\frac{g-1}{g}\frac{M}{B_{intra}}`,
      at the same time, so the slower of the two sets the time.

    The first is never faster than the overlapped form, and it loses to the multi-rail ring when NVLink is slower
    than all of the n cards together, :math:`B_{intra} < nB_{NIC}` (chapter 2's rule, with c = g cards a node).

    >>> t = node_gather_times(200e6, 64, 8, 50e9, 450e9)
    >>> {k: round(v * 1e3, 3) for k, v in t.items()}
    {'phases in series': 0.826, 'phases overlapped': 0.438, 'multi-rail ring': 0.492}
    """
    n = check_count("n", n, minimum=1)
    per_node = check_count("per_node", per_node, minimum=1)
    if n % per_node:
        raise ValueError(f"per_node must divide n = {n}; got {per_node}")
    if layer_bytes < 0:
        raise ValueError(f"layer_bytes must be >= 0; got {layer_bytes}")
    if bandwidth <= 0 or node_bandwidth <= 0:
        raise ValueError("bandwidth and node_bandwidth (bytes/s) must be > 0")
    g, h = per_node, n // per_node
    across = (h - 1) / h * layer_bytes / g / bandwidth
    inside = (g - 1) / g * layer_bytes / node_bandwidth
    ring_card = (n - 1) / n * layer_bytes / g / bandwidth
    ring_nvlink = (n - 1) / n * (g - 1) / g * layer_bytes / node_bandwidth
    return {"phases in series": across + inside, "phases overlapped": max(across, inside),
            "multi-rail ring": max(ring_card, ring_nvlink)}


def forward_layer_times(params: int, layers: int, n: int, tokens: int, peak_flops: float, bandwidth: float,
                        utilization: float = 0.4, dtype_bytes: int = 2, per_node: int = 1,
                        node_bandwidth: float | None = None, form: str | None = None) -> tuple[float, float]:
    r"""One transformer layer's forward compute and weight all-gather time, seconds (equal layers).

    Compute: :math:`2\,(\Psi/L)\,x / (u F_{peak})` (2 FLOPs per parameter and
    token). Gather, bandwidth terms only, with :math:`M = (\Psi/L)\,s` the layer's bytes:

    * ``per_node=1`` (n nodes of one GPU, each with its own network card of
      ``bandwidth``): a flat ring all-gather, :math:`\frac{n-1}{n} M / B`;
    * ``per_node=g > 1`` (n/g nodes of g GPUs, one card of ``bandwidth`` per GPU,
      ``node_bandwidth`` inside a node): the gather in ``form``, one of :data:`GATHER_FORMS`
      (:func:`node_gather_times`); ``None`` (default) takes the fastest of them, as a library tuned for the
      machine would.

    >>> c, g = forward_layer_times(32 * 10**8, 32, 64, 4096, 1e15, 50e9)
    >>> round(c * 1e3, 3), round(g * 1e3, 3)
    (2.048, 3.938)
    >>> [round(1e3 * forward_layer_times(32 * 10**8, 32, 64, 4096, 1e15, 50e9, per_node=8,
    ...                                  node_bandwidth=450e9, form=f)[1], 3) for f in (None, "phases in series")]
    [0.438, 0.826]
    """
    params = check_count("params", params, minimum=1)
    layers = check_count("layers", layers, minimum=1)
    n = check_count("n", n, minimum=1)
    tokens = check_count("tokens", tokens, minimum=1)
    per_node = check_count("per_node", per_node, minimum=1)
    if peak_flops <= 0 or bandwidth <= 0 or not 0 < utilization <= 1:
        raise ValueError("peak_flops and bandwidth must be > 0 and utilization in (0, 1]")
    if n % per_node:
        raise ValueError(f"per_node must divide n = {n}; got {per_node}")
    if per_node > 1 and (node_bandwidth is None or node_bandwidth <= 0):
        raise ValueError("node_bandwidth (bytes/s inside a node) must be > 0 when per_node > 1")
    if form is not None and form not in GATHER_FORMS:
        raise ValueError(f"form must be None or one of {', '.join(GATHER_FORMS)}; got {form!r}")
    per_layer = params / layers
    layer_bytes = per_layer * dtype_bytes
    compute = 2 * per_layer * tokens / (utilization * peak_flops)
    if per_node == 1:
        return compute, (n - 1) / n * layer_bytes / bandwidth
    times = node_gather_times(layer_bytes, n, per_node, bandwidth, node_bandwidth)
    return compute, (min(times.values()) if form is None else times[form])


def backward_layer_times(params: int, layers: int, n: int, tokens: int, peak_flops: float, bandwidth: float,
                         dtype_bytes: float = 2, reduce_bytes: float | None = None, recompute: bool = False,
                         **kwargs) -> tuple[float, float]:
    r"""One layer's backward compute and its stage-3 traffic, seconds (equal layers; the arguments of
    :func:`forward_layer_times`).

    In the backward pass each layer all-gathers its weights again and reduce-scatters its gradient. A reduce-scatter
    is an all-gather run backwards, the same bytes over the same links, so the two take twice the forward's gather
    (bandwidth terms, the two sharing the same ports). The compute is :data:`commlib.sgd.overlap.BACKWARD_TO_FORWARD`
    times the forward's, 4 of the 6 FLOPs per parameter and token. Both double: the ratio of compute to traffic is
    the forward's, and so is the batch above which prefetching hides the traffic.

    ``reduce_bytes``: the gradient's bytes per element when they differ from the gather's (``dtype_bytes``), as when the
    weights are gathered in FP8 (1 byte) and the gradient reduce-scattered in bf16 (2): the reduce-scatter then
    takes ``reduce_bytes / dtype_bytes`` times the gather, and the backward's traffic grows more than its compute.
    ``recompute``: full activation checkpointing, the backward recomputing the forward, so its compute grows by the
    forward's.

    >>> cf, gf = forward_layer_times(32 * 10**8, 32, 64, 4096, 1e15, 50e9)
    >>> cb, gb = backward_layer_times(32 * 10**8, 32, 64, 4096, 1e15, 50e9)
    >>> round(cb / cf, 9), round(gb / gf, 9)
    (2.0, 2.0)
    >>> cf, gf = forward_layer_times(32 * 10**8, 32, 64, 4096, 1e15, 50e9, dtype_bytes=1)
    >>> cb, gb = backward_layer_times(32 * 10**8, 32, 64, 4096, 1e15, 50e9, reduce_bytes=2, dtype_bytes=1)
    >>> round(gb / gf, 9)
    3.0
    >>> round(backward_layer_times(32 * 10**8, 32, 64, 4096, 1e15, 50e9, recompute=True)[0] / cf, 9)
    3.0
    """
    if reduce_bytes is not None and not reduce_bytes > 0:
        raise ValueError(f"reduce_bytes must be > 0 bytes per element or None, got {reduce_bytes!r}")
    compute, gather = forward_layer_times(params, layers, n, tokens, peak_flops, bandwidth, dtype_bytes=dtype_bytes,
                                          **kwargs)
    reduce_scatter = gather if reduce_bytes is None else gather * reduce_bytes / dtype_bytes
    return (BACKWARD_TO_FORWARD + (1 if recompute else 0)) * compute, gather + reduce_scatter
