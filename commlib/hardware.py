"""Hardware presets: links, models, data types, training-state bytes.

Every number here carries its source. Bandwidths are in **bytes per second,
one direction** -- the figure a single transfer can use. Vendors often quote
the sum of both directions (NVLink 2.0's "300 GB/s" is 150 GB/s each way);
where they do, the preset's ``note`` says so and ``vendor_figure`` keeps
their words.

Every PCIe row follows one convention: per direction, x16, the bytes the link
offers to transaction-layer packets (TLPs). Generations 3-5 subtract the
128b/130b line code; generations 6-7 (flit mode) subtract the flit's bytes
that are not TLP -- a 256-byte flit holds 236 bytes of TLP, 6 of DLLP, 8 of
CRC and 6 of FEC -- so PCIe 6.0 x16 offers about 118 GB/s and PCIe 7.0 x16
about 236 GB/s each way. Packet headers are subtracted in no row
(``payload_share`` is the share of the quoted rate that is left).

An NVLink preset is one GPU's links together, and ``max_ranks`` is the
largest NVLink domain of that generation in a system NVIDIA shipped, per the
source ``domain_citation`` names (16 A100s of two HGX A100 baseboards, 256
GH200s of a DGX GH200; a system only announced, such as the GB200 NVL576, does
not count); beyond it, GPUs talk over the network.

Latencies are typical one-message start-up costs (the alpha of the
alpha-beta model), given as orders of magnitude: measured values depend on
the software stack (TCP vs RDMA, NCCL vs MPI) far more than on the wire.

Each link also keeps the figure as quoted (``quoted``, bytes/s, with
``quoted_both`` saying whether it sums both directions) and the ``date`` of
its source, so that a test can hold every one-direction bandwidth against the
vendor's convention. Model presets cite the implementation their exact count
comes from (``count_citation``: torchvision or Hugging Face Transformers)
apart from the paper that introduced the model (``citation``).

Tables are as of :data:`AS_OF`.

>>> link("eth_1g").bandwidth          # 1 Gb/s = 125 MB/s per direction
125000000.0
>>> link("nvlink5").quoted / 1e12, link("nvlink5").bandwidth / 1e9   # 1.8 TB/s quoted, both directions
(1.8, 900.0)
>>> round(link("pcie6_x16").bandwidth / 1e9)   # 256 GB/s quoted both ways; 236 of each 256-byte flit are TLP
118
>>> MODELS["vgg16"].params
138357544
>>> gradient_bytes("vgg16", "fp32")  # what one data-parallel step must move
553430176
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AS_OF",
    "GENERIC_GPUS_PER_HOST",
    "Link",
    "Framing",
    "TCP_OVER_ETHERNET",
    "Model",
    "Accelerator",
    "ACCELERATORS",
    "PCIE_CONVENTION",
    "FLIT_TLP_SHARE",
    "accelerator",
    "host_cap",
    "network_rate",
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
    prints it. ``quoted`` is that headline rate in bytes/s and ``quoted_both``
    says whether it sums both directions (then ``bandwidth`` is half of it);
    ``date`` is when the source published the figure (year, or year-month).
    ``payload_share`` is the share of the quoted rate (one direction) left to packets after
    the line code or the flit's own bytes: ``bandwidth`` = quoted (halved when both
    directions are summed) x ``payload_share``. ``max_ranks`` is the most GPUs one domain
    of this link joins: an NVLink generation's largest NVLink domain in a system NVIDIA shipped,
    which ``domain`` describes and ``domain_citation`` sources; 0 where no system sets it
    (network cards, PCIe, UPI: :attr:`gpus_per_host` then gives the stated generic bound).
    ``joins_gpus`` is False for a link between CPU sockets (UPI), which no GPU drives itself.
    ``stack`` says what a network link's ``latency`` assumes the message goes through: TCP through the
    kernel (the slower Ethernet presets) or RDMA, over RoCE or InfiniBand; empty for buses and NVLink.
    ``switched`` is False where a link wires its ends directly to fixed peers, with no switch
    between (NVLink 1.0's cube mesh, UPI between two sockets): a rank's rate is then split over
    links to a few peers, and no model that gives every rank the full rate to any peer holds for it.
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
    date: str = ""
    quoted: float = 0.0
    quoted_both: bool = False
    switched: bool = True
    payload_share: float = 1.0
    max_ranks: int = 0
    domain: str = ""
    domain_citation: str = ""
    joins_gpus: bool = True
    stack: str = ""

    @property
    def gpus_per_host(self) -> int:
        """The most GPUs a host may hold with this link between them: :attr:`max_ranks`, else the generic bound."""
        return self.max_ranks or GENERIC_GPUS_PER_HOST

    @property
    def both_directions(self) -> float:
        """Bytes/s summed over both directions (what many data sheets print)."""
        return 2 * self.bandwidth if self.duplex else self.bandwidth


@dataclass(frozen=True)
class Model:
    """A neural network and its exact parameter count, with where it was counted.

    ``citation`` is the paper that introduced the model; ``count_citation`` the
    implementation whose count ``params`` is (``source`` says which one).

    A batch counts samples (``sample`` names one, ``sample_size`` its size where it has one): tokens
    for the language models, images for the CNNs. ``forward_macs`` is the multiply-accumulates of one forward pass over one
    sample, as ``macs_source`` counts them; training costs
    :attr:`training_flops_per_sample` = 3 x forward FLOPs (the backward pass twice the
    forward), 2 FLOPs per multiply-accumulate.
    """

    key: str
    name: str
    params: int
    source: str
    citation: str
    note: str = ""
    count_citation: str = ""
    sample: str = "token"
    sample_size: str = ""
    forward_macs: float = 0.0
    macs_source: str = ""

    @property
    def training_flops_per_sample(self) -> float:
        """FLOPs to train on one sample: 6 x ``forward_macs`` (6 Psi per token for a transformer).

        >>> MODELS["gpt2"].training_flops_per_sample == 6 * MODELS["gpt2"].params
        True
        >>> round(MODELS["resnet50"].training_flops_per_sample / 1e9, 1)   # GFLOP per 224 x 224 image
        24.5
        """
        return 6.0 * self.forward_macs


GB = 1e9
Gb = 1e9 / 8

#: The most GPUs the calculators put in one host whose link inside has no sourced system size
#: (PCIe, UPI, a network card): a stated bound, twice the eight GPUs of the common 8-GPU server.
GENERIC_GPUS_PER_HOST = 16

_BOTH = "The vendor figure is both directions summed; bandwidth here is one direction."


@dataclass(frozen=True)
class Framing:
    """How a full-size TCP segment travels over Ethernet, in bytes (what the link's rate carries besides data).

    The frame's payload is the MTU: an IPv4 header (RFC 791), a TCP header with the timestamps option
    (RFC 9293, RFC 7323) and the data. Around it the wire carries the Ethernet header and frame check
    sequence, and between frames a preamble with its start delimiter and the inter-frame gap (IEEE 802.3).

    >>> TCP_OVER_ETHERNET.payload, TCP_OVER_ETHERNET.wire
    (1448, 1538)
    >>> round(link("eth_1g").bandwidth * TCP_OVER_ETHERNET.payload_share / 1e6, 1)   # MB/s of data on 1 GbE
    117.7
    """

    mtu: int = 1500
    ip_header: int = 20
    tcp_header: int = 32          # 20 bytes, and 12 for the timestamps option (10, padded)
    ethernet_header: int = 14
    frame_check: int = 4
    preamble: int = 8             # 7 bytes of preamble, 1 start-of-frame delimiter
    interframe_gap: int = 12
    min_frame: int = 64           # the shortest Ethernet frame, header and check sequence included (IEEE 802.3)

    @property
    def payload(self) -> int:
        """Data bytes in one full-size segment."""
        return self.mtu - self.ip_header - self.tcp_header

    @property
    def wire(self) -> int:
        """Byte times one full-size segment takes on the wire, gap included."""
        return self.mtu + self.ethernet_header + self.frame_check + self.preamble + self.interframe_gap

    @property
    def payload_share(self) -> float:
        """Share of the link's rate left to data for a stream of full-size segments."""
        return self.payload / self.wire

    @property
    def ack_wire(self) -> int:
        """Byte times one acknowledgement without data takes on the wire: its headers (padded to the
        shortest frame were they shorter), then the preamble and the gap."""
        frame = max(self.ip_header + self.tcp_header + self.ethernet_header + self.frame_check, self.min_frame)
        return frame + self.preamble + self.interframe_gap

    def payload_share_with_acks(self, segments_per_ack: int = 2) -> float:
        """Share of a card's outgoing rate left to data when it also acknowledges an incoming stream as large.

        In a ring every card sends one stream and receives another; its receiver acknowledges the incoming
        data on the same outgoing wire, one ACK per ``segments_per_ack`` full-size segments (RFC 9293 asks
        for at least one every second full-size segment; receivers that coalesce segments send fewer).

        >>> TCP_OVER_ETHERNET.ack_wire
        90
        >>> round(link("eth_1g").bandwidth * TCP_OVER_ETHERNET.payload_share_with_acks() / 1e6, 1)   # MB/s, 1 GbE
        114.3
        """
        if not isinstance(segments_per_ack, int) or segments_per_ack < 1:
            raise ValueError(f"segments_per_ack must be a whole number of segments >= 1, got {segments_per_ack!r}")
        return segments_per_ack * self.payload / (segments_per_ack * self.wire + self.ack_wire)


#: TCP/IPv4 over Ethernet with the standard 1500-byte MTU.
TCP_OVER_ETHERNET = Framing()

#: What every PCIe row offers: per direction, x16, the bytes left to transaction-layer packets (TLPs).
PCIE_CONVENTION = ("Per direction, x16, the bytes offered to transaction-layer packets: gens 3-5 subtract the "
                   "128b/130b line code, gens 6-7 (flit mode) the flit's non-TLP bytes (236 of 256 are TLP); "
                   "packet headers are not subtracted.")

#: Share of a flit-mode PCIe link's bytes that carry TLPs: a 256-byte flit holds 236 bytes of TLP,
#: 6 of data-link-layer packets, 8 of CRC and 6 of FEC (PCI Express Base Specification 6.0).
FLIT_TLP_SHARE = 236 / 256


def _pcie(gen: int, rate_gt: float, year: str, citation: str) -> Link:
    """Gens 3-5: 128b/130b line code, the raw rate per direction quoted as 16 lanes x GT/s / 8."""
    raw = rate_gt * 1e9 * 16 / 8
    return Link(f"pcie{gen}_x16", f"PCIe {gen}.0 x16", raw * 128 / 130, 1e-6,
                f"{rate_gt:g} GT/s per lane, 128b/130b ({raw / 1e9:g} GB/s raw per direction, x16)",
                f"PCI-SIG, PCI Express Base Specification {gen}.0 ({rate_gt:g} GT/s, 128b/130b)", citation,
                "The 128b/130b line code is subtracted: 16 lanes x rate x 128/130 / 8 bits. " + PCIE_CONVENTION,
                kind="bus", date=year, quoted=raw, payload_share=128 / 130)


def _pcie_flit(gen: int, rate_gt: float, quoted_gb: float, figure: str, year: str, citation: str, source: str) -> Link:
    """Gens 6-7: PAM4 and flit mode, quoted by PCI-SIG for x16 with both directions summed."""
    per_direction = quoted_gb * GB / 2
    return Link(f"pcie{gen}_x16", f"PCIe {gen}.0 x16", per_direction * FLIT_TLP_SHARE, 1e-6, figure, source, citation,
                _BOTH + " Flit mode has no line code; 236 of each 256-byte flit are TLP bytes (the rest DLLP, "
                "CRC and FEC). " + PCIE_CONVENTION, kind="bus", date=year, quoted=quoted_gb * GB, quoted_both=True,
                payload_share=FLIT_TLP_SHARE)


def _nvlink(key: str, name: str, quoted_gb: float, figure: str, source: str, citation: str, year: str,
            max_ranks: int, domain: str, domain_citation: str, switched: bool = True) -> Link:
    """An NVLink generation: one GPU's links together, quoted with both directions summed.

    ``max_ranks`` is the generation's largest NVLink domain in a shipped system, as ``domain_citation`` gives it.
    """
    return Link(key, name, quoted_gb * GB / 2, 1e-6, figure, source, citation, f"{_BOTH} Domain: {domain}.",
                kind="bus", date=year, quoted=quoted_gb * GB, quoted_both=True, max_ranks=max_ranks, domain=domain,
                domain_citation=domain_citation, switched=switched)


def _network(key: str, name: str, gbit: int, latency: float, source: str, citation: str, year: str,
             stack: str, note: str = "", figure: str = "") -> Link:
    per_direction = gbit * Gb
    text = f"Bits per second: {gbit} Gb/s = {per_direction / 1e9:g} GB/s per direction. Latency assumes {stack}."
    return Link(key, name, per_direction, latency, figure or f"{gbit} Gb/s", source, citation,
                (text + " " + note).strip(), date=year, quoted=per_direction, stack=stack)


#: Rubin's scale-out, in the form its sources support: two 800 Gb/s cards per GPU, not one of 1.6 Tb/s.
_RUBIN_CARDS = ("A Rubin GPU has two such cards (ConnectX-9, 800 Gb/s each; NVIDIA's roadmap prints the pair as "
                "'CX9 1600G'; Wheeler's Network, 2025).")

_LINKS = [
    # PCIe: x16, per direction, the bytes offered to TLPs (PCIE_CONVENTION). 128b/130b from gen 3 to gen 5.
    _pcie(3, 8, "2010", "pcisig2010pcie3"),
    _pcie(4, 16, "2017", "pcisig2017pcie4"),
    _pcie(5, 32, "2019", "pcisig2019pcie5"),
    # PCIe 6.0 and 7.0: PAM4 signalling and 256-byte flits; PCI-SIG quotes x16 with both directions summed.
    _pcie_flit(6, 64, 256, "64 GT/s per lane, 256 GB/s (x16, both directions)", "2022-01", "pcisig2022pcie6",
               "PCI-SIG, PCI Express Base Specification 6.0 (64 GT/s, PAM4, flit mode)"),
    _pcie_flit(7, 128, 512, "128 GT/s per lane, up to 512 GB/s bi-directionally (x16)", "2025-06", "pcisig2025pcie7",
               "PCI-SIG, PCI Express Base Specification 7.0 (128 GT/s, PAM4, flit mode)"),
    # NVLink: per GPU, all links of one GPU together; vendors quote both directions summed. max_ranks: the
    # generation's largest NVLink domain in a system NVIDIA shipped, per domain_citation (announced-only systems,
    # such as the GB200 NVL576, do not count).
    _nvlink("nvlink1", "NVLink 1.0 (P100, 4 links)", 160, "160 GB/s per GPU",
            "NVIDIA Tesla P100 whitepaper (4 links x 20 GB/s per direction)", "nvidia2016p100", "2016",
            8, "8 P100s wired directly (the DGX-1's hybrid cube mesh), no switch", "nvidia2016p100", switched=False),
    _nvlink("nvlink2", "NVLink 2.0 (V100, 6 links)", 300, "300 GB/s per GPU",
            "NVIDIA Tesla V100 whitepaper (6 links x 25 GB/s per direction)", "nvidia2017v100", "2017",
            16, "16 V100s behind NVSwitches (DGX-2)", "smith2018nvswitch"),
    _nvlink("nvlink3", "NVLink 3.0 (A100, 12 links)", 600, "600 GB/s per GPU",
            "NVIDIA A100 Tensor Core GPU architecture whitepaper (12 links x 25 GB/s per direction)", "nvidia2020a100",
            "2020", 16, "16 A100s behind NVSwitches (two HGX A100 8-GPU baseboards joined back to back)",
            "nvidia2020hgxa100"),
    _nvlink("nvlink4", "NVLink 4.0 (H100, 18 links)", 900, "900 GB/s per GPU",
            "NVIDIA H100 Tensor Core GPU architecture whitepaper (18 links x 25 GB/s per direction)", "nvidia2022h100",
            "2022", 256, "256 GH200 superchips behind two levels of NVLink Switches (DGX GH200)", "nvidia2023dgxgh200"),
    _nvlink("nvlink5", "NVLink 5 (B200/GB200, 18 links)", 1800, "1.8 TB/s per GPU",
            "NVIDIA NVLink and NVLink Switch product page (18 links x 100 GB/s, both directions summed)",
            "nvidia2024nvlink5", "2024-03", 72, "72 GPUs behind NVLink Switches (GB200 NVL72)", "nvidia2024nvlink5"),
    _nvlink("nvlink6", "NVLink 6 (Rubin)", 3600, "3.6 TB/s per GPU",
            "NVIDIA's NVLink 6 figures for the Vera Rubin NVL72 rack (3,600 GB/s per GPU, 72 x 3,600 GB/s = 260 TB/s "
            "per rack; announced in 2025 as the NVL144, counting dies), as read by Wheeler's Network",
            "wheeler2025rubin", "2025-11",
            72, "72 Rubin GPUs behind NVLink 6 switches (Vera Rubin NVL72)", "nvidia2026vrnvl72"),
    Link("upi", "Intel UPI (one link, 10.4 GT/s)", 20.8 * GB, 1e-7, "10.4 GT/s, 20.8 GB/s per direction",
         "Intel Xeon Scalable family technical overview (UPI at 10.4 GT/s)", "mulnix2017xeon",
         "Links two CPU sockets; GPU-to-GPU traffic across sockets crosses it.", kind="bus", date="2017",
         quoted=20.8 * GB, joins_gpus=False, switched=False),
    _network("eth_1g", "Ethernet 1 Gb/s", 1, 50e-6, "IEEE 802.3ab (1000BASE-T)", "ieee8023", "1999",
             "TCP through the kernel"),
    _network("eth_10g", "Ethernet 10 Gb/s", 10, 20e-6, "IEEE 802.3ae (10GBASE)", "ieee8023", "2002",
             "TCP through the kernel"),
    _network("eth_25g", "Ethernet 25 Gb/s", 25, 10e-6, "IEEE 802.3by (25GBASE)", "ieee8023", "2016",
             "TCP through the kernel",
             "The latency is a round figure for messages through the kernel's TCP stack and one switch; the "
             "standard fixes the rate, not the start-up."),
    _network("eth_100g", "Ethernet 100 Gb/s", 100, 5e-6, "IEEE 802.3ba (100GBASE)", "ieee8023", "2010",
             "RDMA over RoCE"),
    _network("eth_200g", "Ethernet 200 Gb/s", 200, 5e-6, "IEEE 802.3bs (200GBASE)", "ieee8023", "2017",
             "RDMA over RoCE"),
    _network("eth_400g", "Ethernet 400 Gb/s", 400, 5e-6, "IEEE 802.3bs (400GBASE)", "ieee8023", "2017",
             "RDMA over RoCE"),
    _network("eth_800g", "Ethernet 800 Gb/s", 800, 5e-6, "IEEE 802.3df-2024 (800GBASE)", "ieee8023df", "2024-02",
             "RDMA over RoCE", _RUBIN_CARDS),
    _network("ib_edr", "InfiniBand EDR 4x", 100, 1e-6, "InfiniBand Trade Association roadmap (EDR 4x)",
             "ibta_roadmap", "2024", "RDMA over InfiniBand"),
    _network("ib_hdr", "InfiniBand HDR 4x", 200, 1e-6, "InfiniBand Trade Association roadmap (HDR 4x)",
             "ibta_roadmap", "2024", "RDMA over InfiniBand"),
    _network("ib_ndr", "InfiniBand NDR 4x", 400, 1e-6, "InfiniBand Trade Association roadmap (NDR 4x)",
             "ibta_roadmap", "2024", "RDMA over InfiniBand"),
    _network("ib_xdr", "InfiniBand XDR 4x", 800, 1e-6,
             "InfiniBand Trade Association roadmap (XDR 4x); NVIDIA Quantum-X800, 800 Gb/s per port",
             "nvidia2024quantumx800", "2024-03", "RDMA over InfiniBand", _RUBIN_CARDS, figure="800 Gb/s per port"),
]

#: Link presets keyed by short name. Bandwidth in bytes/s per direction.
LINKS: dict[str, Link] = {item.key: item for item in _LINKS}

_TV = "torchvision reference implementation"
_HF = "Hugging Face Transformers checkpoint"


#: Where the CNNs' forward multiply-accumulates come from: torchvision's model documentation lists them as
#: "GFLOPS", counting one multiply-accumulate as one operation (its ResNet-50 figure, 4.09, is the layer-by-layer
#: count of multiply-accumulates; tests/test_hardware.py holds the two together).
_TV_MACS = "torchvision model documentation (the 'GFLOPS' column, one multiply-accumulate counted as one)"
#: The transformers' rule: about one multiply-accumulate per parameter per token forward (Kaplan et al. 2020,
#: C_forward ~ 2N), so training costs ~6 Psi FLOPs per token.
_KAPLAN = "Kaplan et al. 2020: about one multiply-accumulate per parameter per token (C ~ 6N per token to train)"


def _tv(key: str, name: str, params: int, paper: str, gmacs: float, note: str = "", source: str = _TV,
        image: int = 224) -> Model:
    return Model(key, name, params, source, paper, note, count_citation="torchvision2016",
                 sample="image", sample_size=f"{image} x {image}", forward_macs=gmacs * 1e9, macs_source=_TV_MACS)


def _hf(key: str, name: str, params: int, paper: str, checkpoint: str) -> Model:
    return Model(key, name, params, f"{_HF} {checkpoint!r}, without task head", paper,
                 count_citation="wolf2020transformers", sample="token", forward_macs=float(params), macs_source=_KAPLAN)


_MODELS = [
    _tv("alexnet", "AlexNet", 61_100_840, "krizhevsky2012imagenet", 0.71),
    _tv("resnet50", "ResNet-50", 25_557_032, "he2016deep", 4.09,
        "Keras' ResNet50 reports 25,636,712 (its convolutions carry biases); the note's 25,583,592 is "
        "Keras' trainable part."),
    _tv("vgg16", "VGG-16", 138_357_544, "simonyan2015very", 15.47),
    _tv("inception_v3", "Inception v3", 27_161_264, "szegedy2016rethinking", 5.71,
        "Its multiply-accumulates are counted without the auxiliary classifier, which runs in training only.",
        source=_TV + ", auxiliary classifier included", image=299),
    _hf("bert_base", "BERT-Base (uncased)", 109_482_240, "devlin2019bert", "bert-base-uncased"),
    _hf("bert_large", "BERT-Large (uncased)", 335_141_888, "devlin2019bert", "bert-large-uncased"),
    _hf("gpt2", "GPT-2 (124M)", 124_439_808, "radford2019language", "gpt2"),
    _hf("gpt2_medium", "GPT-2 Medium", 354_823_168, "radford2019language", "gpt2-medium"),
    _hf("gpt2_large", "GPT-2 Large", 774_030_080, "radford2019language", "gpt2-large"),
    _hf("gpt2_xl", "GPT-2 XL", 1_557_611_200, "radford2019language", "gpt2-xl"),
]

#: Model presets keyed by short name, with exact parameter counts.
MODELS: dict[str, Model] = {item.key: item for item in _MODELS}

@dataclass(frozen=True)
class Accelerator:
    """A GPU's peak dense tensor-core throughput in one data type (FLOP/s, no sparsity).

    ``memory_bandwidth`` is the vendor's figure for the GPU's memory (HBM), in
    bytes/s, from the same source; ``None`` where the book does not use it.
    ``memory`` is how much that memory holds, in bytes; vendors' memory "GB" are binary (the H100's "80 GB"
    are 80 GiB, 80 x 2^30 B, about 86 x 10^9 B), so it is stored as such; ``None`` where the book does not use it.
    ``host_link`` is the key of the PCIe preset over which the GPU reaches its host and so its network card
    (the path GPUDirect RDMA takes), as the source states it for the system the preset describes (a GPU may support a
    newer generation than its host runs); "" where none is stated. A network link
    gives this GPU no more than that link carries: :func:`network_rate`.
    """

    key: str
    name: str
    peak_flops: float
    dtype: str
    source: str
    citation: str
    date: str
    memory_bandwidth: float | None = None
    memory: float | None = None
    host_link: str = ""


_ACCELERATORS = [
    Accelerator("v100", "V100 SXM2", 125e12, "fp16",
                "NVIDIA Tesla V100 whitepaper (125 tensor TFLOP/s, 900 GB/s of HBM2, PCIe Gen3 host interface)",
                "nvidia2017v100", "2017", memory_bandwidth=900 * GB, host_link="pcie3_x16"),
    Accelerator("a100", "A100 SXM4", 312e12, "bf16",
                "NVIDIA A100 whitepaper (312 dense bf16 TFLOP/s, PCIe Gen 4 host interface)",
                "nvidia2020a100", "2020", host_link="pcie4_x16"),
    Accelerator("h100", "H100 SXM5", 989.4e12, "bf16",
                "NVIDIA H100 whitepaper (989.4 dense bf16 TFLOP/s, 80 GB of HBM3, PCIe Gen 5 host interface)",
                "nvidia2022h100", "2022", memory=80 * 2**30, host_link="pcie5_x16"),
    # Blackwell: NVIDIA quotes its tensor rates with 2:4 sparsity; the dense rate is half. This is the B200 of an HGX
    # B200 board; the B200 of a GB200 superchip runs faster, 2.5 dense bf16 PFLOP/s in the same source's table.
    Accelerator("b200", "B200 (HGX B200)", 2.25e15, "bf16",
                "Stas Bekman's table of dense peaks (B200 SXM: 2,250 bf16 TFLOP/s, half of NVIDIA's sparse figure). An "
                "HGX B200 system reaches its ConnectX-7 cards over PCIe Gen5 x16 (MLPerf Inference v6.0's system "
                "description; NVIDIA's DGX B200 user guide)",
                "bekman2024mleng", "2024-03", host_link="pcie5_x16"),
    # Blackwell Ultra: new silicon, its gains in FP4; its HGX variant keeps the B200's dense bf16 rate, and its host
    # interface moves to PCIe Gen6 (the 800 Gb/s ConnectX-8 beside it is a Gen6 device).
    Accelerator("b300", "B300 (HGX B300)", 2.25e15, "bf16",
                "NVIDIA's figures for the HGX B300 as read by Glenn Lockwood: 2,250 dense bf16 TFLOP/s per GPU (4,500 "
                "with sparsity), like the HGX B200's, and a PCIe Gen6 host interface",
                "lockwood2025b300", "2025-03", host_link="pcie6_x16"),
]

#: Accelerator presets keyed by short name: peak dense FLOP/s as the vendor states it.
ACCELERATORS: dict[str, Accelerator] = {item.key: item for item in _ACCELERATORS}

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


def accelerator(key: str) -> Accelerator:
    """The :class:`Accelerator` preset named ``key`` (ValueError listing the choices if unknown)."""
    return _lookup(ACCELERATORS, key, "accelerator")


def host_cap(accelerator_key: str, link_key: str) -> Link | None:
    """The host link that caps what one GPU of ``accelerator_key`` gets over ``link_key``, or None.

    A network card sits on the host's PCIe bus, so a GPU sends to it no faster than its own host link
    (:attr:`Accelerator.host_link`) carries. The cap binds only for a network link faster than that host link;
    links that join GPUs directly (NVLink, PCIe itself) are not capped.

    >>> host_cap("h100", "ib_xdr").name     # 100 GB/s per direction against PCIe 5.0 x16's 63
    'PCIe 5.0 x16'
    >>> host_cap("h100", "ib_ndr") is None  # 50 GB/s: the port is the narrower
    True
    """
    chip, item = accelerator(accelerator_key), link(link_key)
    if item.kind != "network" or not chip.host_link:
        return None
    host = link(chip.host_link)
    return host if host.bandwidth < item.bandwidth else None


def network_rate(accelerator_key: str, link_key: str) -> float:
    """Bytes/s per direction one GPU of ``accelerator_key`` gets over ``link_key``: the link's rate,
    capped by the GPU's host link where that is narrower (:func:`host_cap`).

    >>> round(network_rate("h100", "ib_xdr") / 1e9, 2), round(network_rate("h100", "ib_ndr") / 1e9, 2)
    (63.02, 50.0)
    """
    cap = host_cap(accelerator_key, link_key)
    return cap.bandwidth if cap else link(link_key).bandwidth


def dtype_bytes(dtype: str) -> int:
    """Bytes per element: ``dtype_bytes("bf16") == 2``."""
    return _lookup(DTYPE_BYTES, dtype, "dtype")


def gradient_bytes(model_key: str, dtype: str = "fp32") -> int:
    """Bytes of one full gradient: parameters x bytes per element.

    In plain all-reduce data parallelism this is what each rank reduces every
    step; other recipes move more (see :func:`commlib.step.cost.traffic_per_rank`).
    """
    return model(model_key).params * dtype_bytes(dtype)


def training_state_bytes(model_key: str, recipe: str = "mixed_adam") -> int:
    """Bytes a model's training state occupies in memory under ``recipe`` (see TRAINING_STATE_BYTES)."""
    per_param = sum(_lookup(TRAINING_STATE_BYTES, recipe, "recipe").values())
    return model(model_key).params * per_param
