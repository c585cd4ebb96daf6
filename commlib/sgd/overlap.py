r"""Overlap of gradient communication with backpropagation (bucketed all-reduce).

Backpropagation produces gradients from the output layer back to the input
layer, so the last layers' gradients are ready first. A data-parallel trainer
need not wait for the whole backward pass: it can all-reduce the gradients
that are ready while the earlier layers are still being differentiated. PyTorch's
``DistributedDataParallel`` (DDP) does this with *buckets* (Li et al. 2020,
VLDB, sec. 3.2 and 4.2):

1. parameters are packed into buckets in the **reverse** order of
   ``model.parameters()`` (roughly the order in which gradients become ready);
2. a bucket is closed once it holds at least ``bucket_bytes`` (DDP's
   ``bucket_cap_mb=25``, which the implementation multiplies by 1024 * 1024:
   the cap is 25 MiB = 26,214,400 bytes, not 25 MB; its very first bucket is
   capped at 1 MiB so that communication starts early);
3. when every gradient of a bucket is ready, one all-reduce of the whole
   bucket is launched; all-reduces run one after another on a communication
   stream, in bucket order, while backward computation continues.

This module models that timeline. Inputs are in SI units: bytes, seconds,
bytes/s per direction. The all-reduce time of each bucket is
:func:`commlib.cost.allreduce_time` (alpha-beta-gamma model), so a bucket of
``m`` bytes on ``n`` ranks over a ring costs
:math:`2(n-1)\alpha + 2\frac{n-1}{n} m/B`.

Layers come from exact per-layer parameter counts of the model presets in
:mod:`commlib.hardware` (:func:`model_layers`); a layer's backward time is
taken proportional to its forward multiply-accumulates (see
:func:`backward_times` for the approximation).

>>> r = overlap_timeline("resnet50", n=8, bandwidth=12.5e9, t_backward=0.1)
>>> len(r.buckets), round(r.hidden_fraction, 2)
(5, 0.9)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from .. import hardware
from ..collectives import cost
from ..units import check_count, check_fraction, check_nonnegative, check_positive

__all__ = [
    "DDP_BUCKET_BYTES",
    "DDP_FIRST_BUCKET_BYTES",
    "BACKWARD_TO_FORWARD",
    "LAYER_MODELS",
    "Layer",
    "Bucket",
    "OverlapResult",
    "model_layers",
    "forward_macs",
    "backward_times",
    "step_compute_time",
    "assign_buckets",
    "schedule",
    "overlap_timeline",
    "bucket_sweep",
    "required_bandwidth_overlapped",
    "most_ranks_overlapped",
    "step_floor_overlapping_forward",
]

#: DDP's default bucket cap: ``bucket_cap_mb=25`` times 1024 * 1024, i.e. 25 MiB (Li et al. 2020).
DDP_BUCKET_BYTES: int = 25 * 1024 * 1024
#: DDP's cap for the first bucket (the output-side layers): 1 MiB, in the PyTorch implementation, when ``bucket_cap_mb``
#: is left at its default (given explicitly, it caps the first bucket too, in PyTorch 2.13).
DDP_FIRST_BUCKET_BYTES: int = 1024 * 1024
#: Backward costs about twice the forward pass (two matrix products per layer instead of one;
#: Kaplan et al. 2020 count 2 FLOPs per parameter forward and 4 backward).
BACKWARD_TO_FORWARD: float = 2.0


@dataclass(frozen=True)
class Layer:
    """One layer's share of a model: ``params`` parameters, ``macs`` forward multiply-accumulates per sample.

    For convolutional networks a sample is one 224 x 224 image; for
    transformers it is one token. A convolution and the batch normalisation
    that follows it count as one layer (their gradients are ready together).
    """

    name: str
    params: int
    macs: float


# ----------------------------------------------------------------------------- layer tables


def _conv(name: str, cin: int, cout: int, k: int, out_hw: int, bias: bool = False, bn: bool = False) -> Layer:
    params = k * k * cin * cout + (cout if bias else 0) + (2 * cout if bn else 0)
    return Layer(name, params, float(k * k * cin * cout * out_hw * out_hw))


def _linear(name: str, fin: int, fout: int, bias: bool = True, extra_params: int = 0) -> Layer:
    return Layer(name, fin * fout + (fout if bias else 0) + extra_params, float(fin * fout))


def _vgg16() -> list[Layer]:
    # torchvision vgg16 (Simonyan & Zisserman 2015, configuration D): 3x3 convs with bias, 224 x 224 input.
    cfg = [(3, 64, 224), (64, 64, 224), (64, 128, 112), (128, 128, 112), (128, 256, 56), (256, 256, 56),
           (256, 256, 56), (256, 512, 28), (512, 512, 28), (512, 512, 28), (512, 512, 14), (512, 512, 14),
           (512, 512, 14)]
    layers = [_conv(f"conv{i + 1}", cin, cout, 3, hw, bias=True) for i, (cin, cout, hw) in enumerate(cfg)]
    layers += [_linear("fc6", 512 * 7 * 7, 4096), _linear("fc7", 4096, 4096), _linear("fc8", 4096, 1000)]
    return layers


def _alexnet() -> list[Layer]:
    # torchvision alexnet: 224 x 224 input; feature maps 55, 27, 13, 13, 13; classifier on 256 x 6 x 6.
    return [
        _conv("conv1", 3, 64, 11, 55, bias=True),
        _conv("conv2", 64, 192, 5, 27, bias=True),
        _conv("conv3", 192, 384, 3, 13, bias=True),
        _conv("conv4", 384, 256, 3, 13, bias=True),
        _conv("conv5", 256, 256, 3, 13, bias=True),
        _linear("fc6", 256 * 6 * 6, 4096),
        _linear("fc7", 4096, 4096),
        _linear("fc8", 4096, 1000),
    ]


def _resnet50() -> list[Layer]:
    # torchvision resnet50 (He et al. 2016, v1.5: stride on the 3x3 conv); conv + BN per layer, no conv bias.
    layers = [_conv("conv1", 3, 64, 7, 112, bn=True)]
    cin, hw = 64, 56
    for stage, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], start=1):
        for b in range(blocks):
            s = stride if b == 0 else 1
            out_hw = hw // s
            p = f"layer{stage}.{b}"
            layers.append(_conv(f"{p}.conv1", cin, width, 1, hw, bn=True))
            layers.append(_conv(f"{p}.conv2", width, width, 3, out_hw, bn=True))
            layers.append(_conv(f"{p}.conv3", width, 4 * width, 1, out_hw, bn=True))
            if b == 0:
                layers.append(_conv(f"{p}.downsample", cin, 4 * width, 1, out_hw, bn=True))
            cin, hw = 4 * width, out_hw
    layers.append(_linear("fc", 2048, 1000))
    return layers


def _bert(hidden: int, n_layers: int, vocab: int = 30522, positions: int = 512) -> list[Layer]:
    # Hugging Face BertModel: embeddings (word, position, token type, LayerNorm), blocks, pooler.
    d = hidden
    layers = [Layer("embeddings", vocab * d + positions * d + 2 * d + 2 * d, 0.0)]
    for i in range(n_layers):
        layers.append(_linear(f"layer{i}.attention", d, 3 * d, extra_params=d * d + d + 2 * d))
        layers[-1] = Layer(layers[-1].name, layers[-1].params, float(4 * d * d))
        layers.append(Layer(f"layer{i}.mlp", d * 4 * d + 4 * d + 4 * d * d + d + 2 * d, float(8 * d * d)))
    layers.append(_linear("pooler", d, d))
    return layers


def _gpt2(hidden: int, n_layers: int, vocab: int = 50257, positions: int = 1024) -> list[Layer]:
    # Hugging Face GPT2Model: token + position embeddings, blocks (ln_1, attn, ln_2, mlp), ln_f; the
    # language-model head is tied to the token embedding (no parameters of its own, but its compute).
    d = hidden
    layers = [Layer("embeddings (wte tied to lm_head, wpe)", vocab * d + positions * d, 0.0)]
    for i in range(n_layers):
        layers.append(Layer(f"h{i}.attention", 2 * d + d * 3 * d + 3 * d + d * d + d, float(4 * d * d)))
        layers.append(Layer(f"h{i}.mlp", 2 * d + d * 4 * d + 4 * d + 4 * d * d + d, float(8 * d * d)))
    layers.append(Layer("ln_f", 2 * d, 0.0))
    layers.append(Layer("lm_head (tied)", 0, float(vocab * d)))
    return layers


_BUILDERS = {
    "alexnet": _alexnet,
    "vgg16": _vgg16,
    "resnet50": _resnet50,
    "bert_base": lambda: _bert(768, 12),
    "bert_large": lambda: _bert(1024, 24),
    "gpt2": lambda: _gpt2(768, 12),
    "gpt2_medium": lambda: _gpt2(1024, 24),
    "gpt2_large": lambda: _gpt2(1280, 36),
    "gpt2_xl": lambda: _gpt2(1600, 48),
}

#: Presets of :data:`commlib.hardware.MODELS` with a per-layer split.
LAYER_MODELS: tuple[str, ...] = tuple(_BUILDERS)


def model_layers(model: str) -> tuple[Layer, ...]:
    """The layers of a model preset, input to output, with exact parameter counts.

    The split is rebuilt from each architecture (torchvision for AlexNet,
    VGG-16 and ResNet-50; Hugging Face for BERT and GPT-2), and the
    parameters add up exactly to :data:`commlib.hardware.MODELS` ``[model].params``.
    Granularity is coarser than PyTorch's tensors: a convolution with its
    batch norm, a transformer block's attention (with its LayerNorm) and its
    MLP (with its LayerNorm) each count as one layer. ``macs`` is per 224 x 224
    image for CNNs and per token for transformers (weight matrices only; the
    attention-score products, 2 s d per token for sequence length s, are left out).

    >>> sum(layer.params for layer in model_layers("resnet50"))
    25557032
    >>> [layer.name for layer in model_layers("vgg16")][-3:]
    ['fc6', 'fc7', 'fc8']
    """
    if model not in _BUILDERS:
        raise ValueError(f"model must be one of {', '.join(LAYER_MODELS)} (presets with a layer split); got {model!r}")
    return tuple(_BUILDERS[model]())


def forward_macs(model: str) -> float:
    """Forward multiply-accumulates per sample (224 x 224 image, or token), summed over layers.

    >>> round(forward_macs("resnet50") / 1e9, 2)   # ~4.1 GMAC per image
    4.09
    """
    return float(sum(layer.macs for layer in model_layers(model)))


def backward_times(layers, t_backward: float) -> list[float]:
    r"""Seconds of backward computation per layer: ``t_backward`` shared in proportion to the layers' MACs.

    :math:`t_i = T_{bwd}\,\frac{\mathrm{MAC}_i}{\sum_j \mathrm{MAC}_j}`. The backward of a
    layer costs about twice its forward (gradients for its input and for
    its weights), the same factor for every layer, so the shares follow the
    forward MACs. Approximation: memory-bound layers (batch norm,
    activations, embeddings) are given no time. If no layer has MACs, the
    time is shared in proportion to parameters. Returned in the order given.

    >>> backward_times([Layer("a", 10, 1.0), Layer("b", 10, 3.0)], 0.4)
    [0.1, 0.30000000000000004]
    """
    t_backward = check_nonnegative("t_backward", t_backward)
    layers = list(layers)
    if not layers:
        raise ValueError("layers must hold at least one Layer")
    weights = [float(layer.macs) for layer in layers]
    if math.fsum(weights) <= 0:
        weights = [float(layer.params) for layer in layers]
    if math.fsum(weights) <= 0:
        weights = [1.0] * len(layers)
    total = math.fsum(weights)
    return [t_backward * w / total for w in weights]


def step_compute_time(model: str, batch: int, flops_per_second: float) -> tuple[float, float]:
    r"""Forward and backward seconds of one step: ``(t_forward, t_backward)``.

    :math:`t_{fwd} = 2\,\mathrm{MAC}\cdot x / (u F_{peak})` (two floating-point
    operations per multiply-accumulate, ``batch`` :math:`x` samples,
    ``flops_per_second`` the FLOP/s actually achieved, :math:`u F_{peak}`) and
    :math:`t_{bwd}` = :data:`BACKWARD_TO_FORWARD` :math:`\times\, t_{fwd}` (the usual
    rule that backward costs twice the forward, e.g. Kaplan et al. 2020). For
    transformers ``batch`` counts tokens.

    >>> f, b = step_compute_time("resnet50", 32, 10e12)
    >>> round(f * 1e3, 2), round(b * 1e3, 2)   # ms at 10 TFLOP/s achieved
    (26.17, 52.34)
    """
    batch = check_count("batch", batch)
    flops_per_second = check_positive("flops_per_second", flops_per_second)
    t_forward = 2.0 * forward_macs(model) * batch / flops_per_second
    return t_forward, BACKWARD_TO_FORWARD * t_forward


# ----------------------------------------------------------------------------- buckets and timeline


def assign_buckets(nbytes, bucket_bytes: float = DDP_BUCKET_BYTES,
                   first_bucket_bytes: float | None = None) -> list[list[int]]:
    """Group gradients, in the order given, into buckets as DDP does; returns lists of indices.

    A gradient is appended to the open bucket; the bucket closes as soon as
    it holds at least its cap (so a bucket may overshoot the cap by its last
    gradient, and a gradient larger than the cap gets a bucket of its own).
    The first bucket's cap is ``first_bucket_bytes`` (default: the same as
    ``bucket_bytes``), the others' ``bucket_bytes``. A cap of 0 gives one
    bucket per gradient (per-layer all-reduce). Pass gradients in the order
    they become ready (reverse of the forward order).

    >>> assign_buckets([4, 4, 4, 10, 1], bucket_bytes=8)
    [[0, 1], [2, 3], [4]]
    >>> assign_buckets([4, 4, 4], bucket_bytes=0)
    [[0], [1], [2]]
    """
    bucket_bytes = check_nonnegative("bucket_bytes", bucket_bytes)
    first = bucket_bytes if first_bucket_bytes is None else check_nonnegative("first_bucket_bytes",
                                                                               first_bucket_bytes)
    sizes = [check_nonnegative("nbytes", s) for s in nbytes]
    if not sizes:
        raise ValueError("nbytes must hold at least one gradient size")
    buckets: list[list[int]] = []
    current: list[int] = []
    filled = 0.0
    for i, size in enumerate(sizes):
        current.append(i)
        filled += size
        cap = first if not buckets else bucket_bytes
        if filled >= cap:
            buckets.append(current)
            current, filled = [], 0.0
    if current:
        buckets.append(current)
    return buckets


@dataclass(frozen=True)
class Bucket:
    """One all-reduce: which layers it carries, its bytes, and when it is ready, starts and ends (s)."""

    index: int
    layers: tuple[str, ...]
    nbytes: float
    ready: float
    start: float
    end: float

    @property
    def duration(self) -> float:
        """Seconds the all-reduce takes."""
        return self.end - self.start


@dataclass(frozen=True)
class OverlapResult:
    """A backward pass with bucketed all-reduce, timed from the start of backward (seconds).

    ``layers`` and the ``layer_start``/``layer_end`` times are in backward
    order (output layer first). ``comm_total`` is the sum of the buckets'
    all-reduce times; ``hidden`` the part of it that runs while backward is
    still computing; ``exposed`` the part that runs after (the wait added to
    the step). ``t_no_overlap`` is backward followed by one all-reduce of the
    whole gradient.
    """

    layers: tuple[Layer, ...]
    layer_start: tuple[float, ...]
    layer_end: tuple[float, ...]
    buckets: tuple[Bucket, ...]
    t_backward: float
    t_forward: float
    t_no_overlap: float

    @property
    def comm_total(self) -> float:
        """Seconds of all-reduce, summed over buckets."""
        return float(sum(b.duration for b in self.buckets))

    @property
    def t_end(self) -> float:
        """Seconds from the start of backward until the last gradient is reduced."""
        return max(self.t_backward, max(b.end for b in self.buckets))

    @property
    def exposed(self) -> float:
        """Seconds of communication not hidden behind backward: ``t_end - t_backward``."""
        return self.t_end - self.t_backward

    @property
    def idle(self) -> float:
        """Seconds the communication stream waits between the first all-reduce's start and the last one's end.

        0 means the stream never pauses once started: the link, not the order of the buckets, sets
        when communication ends, and the exposed time is ``buckets[0].start + comm_total - t_backward``.
        """
        return max(0.0, self.buckets[-1].end - self.buckets[0].start - self.comm_total)

    @property
    def exposed_floor(self) -> float:
        """The least these buckets can expose (s): one stream holds ``comm_total`` and the input-side bucket is
        ready only when backward ends, so at least ``max(comm_total - t_backward, last all-reduce, 0)``."""
        return max(0.0, self.comm_total - self.t_backward, self.buckets[-1].duration)

    @property
    def hidden(self) -> float:
        """Seconds of communication that run during backward computation."""
        return float(sum(max(0.0, min(b.end, self.t_backward) - b.start) for b in self.buckets))

    @property
    def hidden_fraction(self) -> float:
        """Share of communication hidden behind backward (1.0 if there is none to hide)."""
        total = self.comm_total
        return 1.0 if total == 0 else self.hidden / total

    @property
    def iteration_time(self) -> float:
        """Forward + backward + exposed communication, seconds."""
        return self.t_forward + self.t_end

    @property
    def iteration_time_no_overlap(self) -> float:
        """Forward + backward + one all-reduce of the whole gradient, seconds."""
        return self.t_forward + self.t_no_overlap


def _one_per_bucket(ready, nbytes) -> tuple[list, list]:
    """``ready`` and ``nbytes`` as lists, checked to have one entry per bucket."""
    ready, nbytes = list(ready), list(nbytes)
    if len(ready) != len(nbytes):
        raise ValueError(f"ready and nbytes must have one entry per bucket, got {len(ready)} and {len(nbytes)}")
    return ready, nbytes


def schedule(ready, nbytes, comm_time) -> list[tuple[float, float]]:
    r"""Start and end of each all-reduce on one serial communication stream.

    Bucket :math:`i` starts when it is ready and the previous all-reduce is done,
    :math:`t^{start}_i = \max(t^{ready}_i, t^{end}_{i-1})`, and ends after the
    all-reduce of its :math:`M_i` bytes,
    :math:`t^{end}_i = t^{start}_i + \text{comm\_time}(M_i)`. Arguments:
    ``ready`` the times :math:`t^{ready}_i` in seconds, ``nbytes`` the sizes
    :math:`M_i` in bytes, ``comm_time`` a function from bytes to seconds.

    >>> schedule([1.0, 2.0], [10, 10], lambda m: 1.5)
    [(1.0, 2.5), (2.5, 4.0)]
    """
    ready, nbytes = _one_per_bucket(ready, nbytes)
    out: list[tuple[float, float]] = []
    end = 0.0
    for r, m in zip(ready, nbytes, strict=True):
        start = max(float(r), end)
        end = start + float(comm_time(m))
        out.append((start, end))
    return out


def overlap_timeline(
    model: str = "resnet50",
    n: int = 8,
    bandwidth: float = 12.5e9,
    t_backward: float = 0.1,
    bucket_bytes: float = DDP_BUCKET_BYTES,
    latency: float = 0.0,
    dtype: str = "fp32",
    algorithm: str = "ring",
    gamma: float = 0.0,
    first_bucket_bytes: float | None = DDP_FIRST_BUCKET_BYTES,
    t_forward: float = 0.0,
) -> OverlapResult:
    r"""Bucketed all-reduce overlapped with backward, as in PyTorch DDP (Li et al. 2020).

    Arguments: ``model`` a preset of :data:`LAYER_MODELS`; ``n`` ranks;
    ``bandwidth`` bytes/s per direction; ``t_backward`` seconds of backward
    compute per step (shared over layers by :func:`backward_times`);
    ``bucket_bytes`` the bucket cap in bytes (DDP: 25 MiB; 0 = one all-reduce
    per layer); ``latency`` alpha in seconds; ``dtype`` of the gradients;
    ``algorithm`` and ``gamma`` as in :func:`commlib.cost.allreduce_time`;
    ``first_bucket_bytes`` the first bucket's cap (DDP: 1 MiB; ``None``: same as
    the others); ``t_forward`` seconds of forward (only added to iteration times).

    Layer ``i`` in backward order finishes at :math:`\sum_{j\le i} t_j`; a bucket
    is ready when its last layer finishes; buckets are all-reduced one after
    another (:func:`schedule`), each taking ``cost.allreduce_time`` of its bytes.
    Not modelled: contention between computation and communication for the
    GPU, and the copy of gradients into the bucket.

    >>> r = overlap_timeline("vgg16", n=4, bandwidth=1.25e9, t_backward=0.2)
    >>> round(r.exposed, 3), round(r.t_no_overlap - r.t_backward, 3)   # seconds
    (0.464, 0.664)
    """
    n = check_count("n", n)
    bandwidth = check_positive("bandwidth", bandwidth)
    t_backward = check_nonnegative("t_backward", t_backward)
    t_forward = check_nonnegative("t_forward", t_forward)
    latency = check_nonnegative("latency", latency)
    per_param = hardware.dtype_bytes(dtype)
    layers = tuple(reversed(model_layers(model)))
    times = backward_times(layers, t_backward)
    ends = list(itertools.accumulate(times))
    starts = [e - t for e, t in zip(ends, times)]
    grad_bytes = [layer.params * per_param for layer in layers]
    groups = assign_buckets(grad_bytes, bucket_bytes, first_bucket_bytes)

    def comm(m: float) -> float:
        return cost.allreduce_time(m, n, bandwidth, latency, algorithm, gamma)

    ready = [float(ends[g[-1]]) for g in groups]
    sizes = [float(sum(grad_bytes[i] for i in g)) for g in groups]
    slots = schedule(ready, sizes, comm)
    buckets = tuple(
        Bucket(k, tuple(layers[i].name for i in g), sizes[k], ready[k], s, e)
        for k, (g, (s, e)) in enumerate(zip(groups, slots))
    )
    # the backward pass ends with the input layer, which is last in backward order
    t_bwd = float(ends[-1])
    return OverlapResult(
        layers=layers,
        layer_start=tuple(float(x) for x in starts),
        layer_end=tuple(float(x) for x in ends),
        buckets=buckets,
        t_backward=t_bwd,
        t_forward=t_forward,
        t_no_overlap=t_bwd + comm(float(sum(grad_bytes))),
    )


def bucket_sweep(bucket_sizes, **kwargs) -> list[OverlapResult]:
    """:func:`overlap_timeline` for each bucket cap in ``bucket_sizes`` (bytes); other arguments as there,
    except that ``first_bucket_bytes`` defaults to ``None`` (every bucket has the swept cap).

    The trade-off it shows: small buckets start communicating early but pay
    the latency alpha once per bucket; large buckets pay it rarely but wait
    for more of the backward pass.

    >>> [len(r.buckets) for r in bucket_sweep([0, 100e6], model="alexnet")]
    [8, 2]
    """
    kwargs.setdefault("first_bucket_bytes", None)
    return [overlap_timeline(bucket_bytes=b, **kwargs) for b in bucket_sizes]


def required_bandwidth_overlapped(model: str, n: int, t_compute: float, efficiency: float, latency: float = 0.0,
                                  bucket_bytes: float = DDP_BUCKET_BYTES,
                                  first_bucket_bytes: float | None = DDP_FIRST_BUCKET_BYTES,
                                  dtype: str = "fp32", algorithm: str = "ring", rtol: float = 1e-6,
                                  backward_to_forward: float = BACKWARD_TO_FORWARD) -> float:
    r"""Bandwidth (bytes/s) that reaches ``efficiency`` when the all-reduce overlaps backward in buckets; ``math.inf``
    where none does.

    Without overlap the all-reduce must fit in :math:`\frac{1-\varepsilon}{\varepsilon}T_c` after the step's
    compute (:func:`commlib.step.cost.required_bandwidth`). Here the compute ``t_compute`` splits into a forward
    pass and a backward pass ``backward_to_forward`` times as long (by default twice,
    :data:`BACKWARD_TO_FORWARD`), the buckets are all-reduced while
    backward runs (:func:`overlap_timeline`), and the step :math:`T_{fwd} + \max(T_{bwd}, \text{last end})` must
    be at most :math:`T_c/\varepsilon`. The step only shortens as the bandwidth grows, so the least bandwidth is
    found by bisection, to a relative ``rtol``. The last bucket holds the input-side layers and is ready only
    when backward ends, so its start-ups get the same budget as without overlap: where they do not fit, no
    bandwidth helps; and the earlier buckets' start-ups must fit in the backward pass too, so a shorter backward
    pass can lower the most ranks served. Other arguments as in :func:`overlap_timeline`.

    A model whose large layers sit at the output side, as VGG-16's fully connected layers do, needs much less
    than without overlap (13,582 MB/s for the same 4 GPUs, 0.55 s and 90 %):

    >>> round(required_bandwidth_overlapped("vgg16", 4, 0.55, 0.9) / 1e9, 2)   # GB/s
    1.94
    >>> required_bandwidth_overlapped("vgg16", 1000, 0.55, 0.9, 50e-6)         # 2 x 999 start-ups > 61.1 ms
    inf
    >>> ranks = (561, 562)   # with a backward pass only as long as the forward, 561 ranks at most (612 without overlap)
    >>> [required_bandwidth_overlapped("vgg16", n, 0.55, 0.9, 50e-6, backward_to_forward=1.0) < math.inf for n in ranks]
    [True, False]
    """
    n = check_count("n", n)
    t_compute = check_positive("t_compute", t_compute)
    efficiency = check_fraction("efficiency", efficiency)
    latency = check_nonnegative("latency", latency)
    rtol = check_positive("rtol", rtol)
    backward_to_forward = check_positive("backward_to_forward", backward_to_forward)
    t_forward = t_compute / (1 + backward_to_forward)
    t_backward = t_compute - t_forward
    target = t_compute / efficiency

    def step(bandwidth: float) -> float:
        return overlap_timeline(model, n, bandwidth, t_backward, bucket_bytes, latency, dtype, algorithm,
                                first_bucket_bytes=first_bucket_bytes, t_forward=t_forward).iteration_time

    # With unbounded bandwidth each all-reduce costs only its start-ups: if that misses the target, nothing reaches it.
    r = overlap_timeline(model, n, 1.0, t_backward, bucket_bytes, latency, dtype, algorithm,
                         first_bucket_bytes=first_bucket_bytes, t_forward=t_forward)
    startups = cost.allreduce_terms(1.0, n, algorithm).steps * latency
    slots = schedule([b.ready for b in r.buckets], [b.nbytes for b in r.buckets], lambda m: startups)
    if t_forward + max(t_backward, slots[-1][1]) >= target:
        return math.inf
    lo, hi = 1.0, 1e9
    while step(hi) > target:
        lo, hi = hi, 2 * hi
    while hi - lo > rtol * hi:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if step(mid) <= target else (mid, hi)
    return hi




def most_ranks_overlapped(model: str, t_compute: float, efficiency: float, latency: float,
                          backward_to_forward: float = BACKWARD_TO_FORWARD, **kwargs) -> int:
    r"""The most ranks that some bandwidth serves at ``efficiency`` with the ring all-reduce overlapping backward in
    buckets (:func:`required_bandwidth_overlapped`, whose other arguments ``kwargs`` passes on); ``latency`` > 0.

    Never more than without overlap (:func:`commlib.cost.largest_ranks_for_efficiency`): the last bucket is ready
    only when backward ends, so its start-ups get the same budget. As many only while the earlier buckets'
    start-ups fit inside the backward pass; a shorter backward pass (a smaller ``backward_to_forward``) can lower it:

    >>> most_ranks_overlapped("vgg16", 0.55, 0.9, 50e-6), most_ranks_overlapped("vgg16", 0.55, 0.9, 50e-6, 1.0)
    (612, 561)
    """
    from ..step.cost import largest_ranks_for_efficiency

    latency = check_positive("latency", latency)
    if kwargs.get("algorithm", "ring") != "ring":
        raise ValueError(f"algorithm must be 'ring' (the bound searched below is the ring's), got {kwargs['algorithm']!r}")
    hi = largest_ranks_for_efficiency(t_compute, efficiency, latency)

    def served(n: int) -> bool:
        return required_bandwidth_overlapped(model, n, t_compute, efficiency, latency,
                                             backward_to_forward=backward_to_forward, **kwargs) < math.inf
    if hi < 2 or not served(2):
        return 1
    lo = 2                       # served(lo) holds; find the largest served n in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if served(mid) else (lo, mid - 1)
    return lo


def step_floor_overlapping_forward(t_forward: float, t_backward: float, comm_total: float) -> float:
    r"""The shortest step (s) when the next forward pass may start on layers already synchronised.

    DDP's optimizer step waits for every bucket, so the input-side bucket's all-reduce, which starts only
    when backward ends, is always exposed. Priority schedulers (ByteScheduler, Peng et al. 2019; P3,
    Jayarajan et al. 2019) let the next forward pass start on the input-side layers as soon as they are
    synchronised, so communication hides behind the forward pass too. Then neither the GPU nor the link
    can do less than its own work per step: :math:`\max(T_\text{fwd} + T_\text{bwd}, T_m)`, with
    ``comm_total`` the all-reduce time :math:`T_m` summed over the buckets. A floor, not a schedule: it
    assumes a perfect scheduler that never leaves the link or the GPU idle.

    >>> step_floor_overlapping_forward(0.026, 0.052, 0.063)   # compute-bound: the link is never the limit
    0.078
    >>> step_floor_overlapping_forward(0.010, 0.020, 0.063)   # link-bound
    0.063
    """
    t_forward = check_nonnegative("t_forward", t_forward)
    t_backward = check_nonnegative("t_backward", t_backward)
    comm_total = check_nonnegative("comm_total", comm_total)
    return max(t_forward + t_backward, comm_total)
