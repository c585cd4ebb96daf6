"""Hardware presets: links, models, data types, training-state bytes.

Every number here carries its source. Bandwidths are in **bytes per second,
one direction** -- the figure a single transfer can use. Vendors often quote
the sum of both directions (NVLink 2.0's "300 GB/s" is 150 GB/s each way);
where they do, the preset's ``note`` says so and ``vendor_figure`` keeps
their words.

Latencies are typical one-message start-up costs (the alpha of the
alpha-beta model), given as orders of magnitude: measured values depend on
the software stack (TCP vs RDMA, NCCL vs MPI) far more than on the wire.

Tables are as of :data:`AS_OF`.

>>> LINKS["eth_1g"].bandwidth          # 1 Gb/s = 125 MB/s per direction
125000000.0
>>> MODELS["vgg16"].params
138357544
>>> gradient_bytes("vgg16", "fp32")  # what one data-parallel step must move
553430176
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AS_OF",
    "Link",
    "Model",
    "LINKS",
    "MODELS",
    "DTYPE_BYTES",
    "TRAINING_STATE_BYTES",
    "link",
    "model",
    "dtype_bytes",
    "gradient_bytes",
    "training_state_bytes",
]

#: Month the tables below were last checked against their sources.
AS_OF = "November 2026"


@dataclass(frozen=True)
class Link:
    """A point-to-point link.

    ``bandwidth`` is bytes/s in one direction; ``latency`` is seconds per
    message (typical); ``duplex`` says whether both directions run at full
    rate at once; ``vendor_figure`` is the headline number as the vendor
    prints it.
    """

    key: str
    name: str
    bandwidth: float
    latency: float
    vendor_figure: str
    source: str
    citation: str
    note: str = ""
    duplex: bool = True
    kind: str = "network"

    @property
    def both_directions(self) -> float:
        """Bytes/s summed over both directions (what many data sheets print)."""
        return 2 * self.bandwidth if self.duplex else self.bandwidth


@dataclass(frozen=True)
class Model:
    """A neural network and its exact parameter count, with where it was counted."""

    key: str
    name: str
    params: int
    source: str
    citation: str
    note: str = ""


GB = 1e9
Gb = 1e9 / 8

_BOTH = "The vendor figure is both directions summed; bandwidth here is one direction."

_LINKS = [
    # PCIe: 128b/130b encoding from gen 3 on; x16 lanes; figures per direction.
    Link("pcie3_x16", "PCIe 3.0 x16", 8e9 * 16 * 128 / 130 / 8, 1e-6, "8 GT/s per lane, ~15.75 GB/s per direction",
         "PCI-SIG, PCI Express Base Specification 3.0 (8 GT/s, 128b/130b)", "pcisig2010pcie3", kind="bus"),
    Link("pcie4_x16", "PCIe 4.0 x16", 16e9 * 16 * 128 / 130 / 8, 1e-6, "16 GT/s per lane, ~31.5 GB/s per direction",
         "PCI-SIG, PCI Express Base Specification 4.0 (16 GT/s, 128b/130b)", "pcisig2017pcie4", kind="bus"),
    Link("pcie5_x16", "PCIe 5.0 x16", 32e9 * 16 * 128 / 130 / 8, 1e-6, "32 GT/s per lane, ~63 GB/s per direction",
         "PCI-SIG, PCI Express Base Specification 5.0 (32 GT/s, 128b/130b)", "pcisig2019pcie5", kind="bus"),
    # NVLink: per GPU, all links of one GPU together.
    Link("nvlink1", "NVLink 1.0 (P100, 4 links)", 80 * GB, 1e-6, "160 GB/s per GPU",
         "NVIDIA Tesla P100 whitepaper (4 links x 20 GB/s per direction)", "nvidia2016p100", _BOTH, kind="bus"),
    Link("nvlink2", "NVLink 2.0 (V100, 6 links)", 150 * GB, 1e-6, "300 GB/s per GPU",
         "NVIDIA Tesla V100 whitepaper (6 links x 25 GB/s per direction)", "nvidia2017v100", _BOTH, kind="bus"),
    Link("nvlink3", "NVLink 3.0 (A100, 12 links)", 300 * GB, 1e-6, "600 GB/s per GPU",
         "NVIDIA A100 Tensor Core GPU architecture whitepaper (12 links x 25 GB/s per direction)", "nvidia2020a100",
         _BOTH, kind="bus"),
    Link("nvlink4", "NVLink 4.0 (H100, 18 links)", 450 * GB, 1e-6, "900 GB/s per GPU",
         "NVIDIA H100 Tensor Core GPU architecture whitepaper (18 links x 25 GB/s per direction)", "nvidia2022h100",
         _BOTH, kind="bus"),
    Link("upi", "Intel UPI (one link, 10.4 GT/s)", 20.8 * GB, 1e-7, "10.4 GT/s, 20.8 GB/s per direction",
         "Intel Xeon Scalable platform brief; measured against NVLink 2.0 by Lutz et al. (2020)", "lutz2020pump",
         "Links two CPU sockets; GPU-to-GPU traffic across sockets crosses it.", kind="bus"),
    Link("eth_1g", "Ethernet 1 Gb/s", 1 * Gb, 50e-6, "1 Gb/s", "IEEE 802.3 (1000BASE-T)", "ieee8023",
         "Bits per second: 1 Gb/s = 125 MB/s. Latency is TCP through the kernel."),
    Link("eth_10g", "Ethernet 10 Gb/s", 10 * Gb, 20e-6, "10 Gb/s", "IEEE 802.3 (10GBASE)", "ieee8023",
         "Bits per second: 10 Gb/s = 1.25 GB/s."),
    Link("eth_25g", "Ethernet 25 Gb/s", 25 * Gb, 10e-6, "25 Gb/s", "IEEE 802.3by (25GBASE)", "ieee8023",
         "Bits per second: 25 Gb/s = 3.125 GB/s."),
    Link("eth_100g", "Ethernet 100 Gb/s", 100 * Gb, 5e-6, "100 Gb/s", "IEEE 802.3 (100GBASE)", "ieee8023",
         "Bits per second: 100 Gb/s = 12.5 GB/s. Latency assumes RDMA (RoCE)."),
    Link("eth_200g", "Ethernet 200 Gb/s", 200 * Gb, 5e-6, "200 Gb/s", "IEEE 802.3bs (200GBASE)", "ieee8023",
         "Bits per second: 200 Gb/s = 25 GB/s. Latency assumes RDMA (RoCE)."),
    Link("eth_400g", "Ethernet 400 Gb/s", 400 * Gb, 5e-6, "400 Gb/s", "IEEE 802.3bs (400GBASE)", "ieee8023",
         "Bits per second: 400 Gb/s = 50 GB/s. Latency assumes RDMA (RoCE)."),
    Link("ib_edr", "InfiniBand EDR 4x", 100 * Gb, 1e-6, "100 Gb/s", "InfiniBand Trade Association roadmap (EDR 4x)",
         "ibta_roadmap", "Bits per second: 100 Gb/s = 12.5 GB/s. RDMA latency."),
    Link("ib_hdr", "InfiniBand HDR 4x", 200 * Gb, 1e-6, "200 Gb/s", "InfiniBand Trade Association roadmap (HDR 4x)",
         "ibta_roadmap", "Bits per second: 200 Gb/s = 25 GB/s. RDMA latency."),
    Link("ib_ndr", "InfiniBand NDR 4x", 400 * Gb, 1e-6, "400 Gb/s", "InfiniBand Trade Association roadmap (NDR 4x)",
         "ibta_roadmap", "Bits per second: 400 Gb/s = 50 GB/s. RDMA latency."),
]

#: Link presets keyed by short name. Bandwidth in bytes/s per direction.
LINKS: dict[str, Link] = {item.key: item for item in _LINKS}

_TV = "torchvision reference implementation"
_HF = "Hugging Face reference checkpoint"

_MODELS = [
    Model("alexnet", "AlexNet", 61_100_840, _TV, "krizhevsky2012imagenet"),
    Model("resnet50", "ResNet-50", 25_557_032, _TV, "he2016deep",
          "Keras' ResNet50 reports 25,636,712 (its convolutions carry biases); the note's 25,583,592 is "
          "Keras' trainable part."),
    Model("vgg16", "VGG-16", 138_357_544, _TV, "simonyan2015very"),
    Model("inception_v3", "Inception v3", 27_161_264, _TV + ", auxiliary classifier included", "szegedy2016rethinking"),
    Model("bert_base", "BERT-Base (uncased)", 109_482_240, _HF, "devlin2019bert"),
    Model("bert_large", "BERT-Large (uncased)", 335_141_888, _HF, "devlin2019bert"),
    Model("gpt2", "GPT-2 (124M)", 124_439_808, _HF, "radford2019language"),
    Model("gpt2_medium", "GPT-2 Medium", 354_823_168, _HF, "radford2019language"),
    Model("gpt2_large", "GPT-2 Large", 774_030_080, _HF, "radford2019language"),
    Model("gpt2_xl", "GPT-2 XL", 1_557_611_200, _HF, "radford2019language"),
]

#: Model presets keyed by short name, with exact parameter counts.
MODELS: dict[str, Model] = {item.key: item for item in _MODELS}

#: Bytes per element of each data type.
DTYPE_BYTES: dict[str, int] = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}

#: Bytes of training state per parameter, by recipe (weights, gradients, optimizer).
#: Mixed-precision Adam: fp16 weights 2 + fp16 gradients 2 + fp32 master weights 4
#: + fp32 momentum 4 + fp32 variance 4 = 16 B (Rajbhandari et al., ZeRO, 2020).
TRAINING_STATE_BYTES: dict[str, dict[str, int]] = {
    "fp32_sgd": {"weights": 4, "gradients": 4},
    "fp32_sgd_momentum": {"weights": 4, "gradients": 4, "momentum": 4},
    "fp32_adam": {"weights": 4, "gradients": 4, "momentum": 4, "variance": 4},
    "mixed_adam": {"fp16 weights": 2, "fp16 gradients": 2, "fp32 master weights": 4, "momentum": 4, "variance": 4},
}


def _lookup(table: dict, key: str, what: str):
    if key not in table:
        raise ValueError(f"unknown {what} {key!r}; choose one of: {', '.join(table)}")
    return table[key]


def link(key: str) -> Link:
    """The :class:`Link` preset named ``key`` (ValueError listing the choices if unknown)."""
    return _lookup(LINKS, key, "link")


def model(key: str) -> Model:
    """The :class:`Model` preset named ``key`` (ValueError listing the choices if unknown)."""
    return _lookup(MODELS, key, "model")


def dtype_bytes(dtype: str) -> int:
    """Bytes per element: ``dtype_bytes("bf16") == 2``."""
    return _lookup(DTYPE_BYTES, dtype, "dtype")


def gradient_bytes(model_key: str, dtype: str = "fp32") -> int:
    """Bytes of one full gradient: parameters x bytes per element.

    In data parallelism this, and only this, crosses the network each step.
    """
    return model(model_key).params * dtype_bytes(dtype)


def training_state_bytes(model_key: str, recipe: str = "mixed_adam") -> int:
    """Bytes a model's training state occupies in memory under ``recipe`` (see TRAINING_STATE_BYTES)."""
    per_param = sum(_lookup(TRAINING_STATE_BYTES, recipe, "recipe").values())
    return model(model_key).params * per_param
