r"""How long gradient synchronisation takes for a placement of workers on hosts (note 000's estimator).

The chain of the estimate: model -> parameter count -> gradient bytes ``M``
(:func:`commlib.hardware.gradient_bytes`) -> the bytes each link must carry
under a parameter server (PS) or an all-reduce -> divided by that link's
bandwidth -> the slowest link decides.

The cluster is described per host by two measured bandwidths, in bytes/s
per direction (:class:`Cluster`):

* ``intra[h]``: what one endpoint on host ``h`` (a worker, or a server)
  sends or receives to or from another endpoint on the same host;
* ``inter[h]``: what host ``h`` sends or receives over the network, in
  total, shared by all of its flows.

Note 000 gives such lists in MB/s, without saying how they were measured.
:data:`EXAMPLE_INTRA_MB_S` and :data:`EXAMPLE_INTER_MB_S` keep them, and
:func:`example_cluster` reads them under exactly the interpretation above
(1 MB = 10**6 B, per direction, host ``j`` = list entry ``j``).

Time per iteration, for ``n`` workers, ``g_j`` of them on host ``j``, ``h``
hosts in use (latency ignored, as in the note; all formulas in seconds):

* **ring all-reduce**, ranks ordered host by host: every rank sends
  :math:`2\frac{n-1}{n}M` in :math:`2(n-1)` equal steps, so the slowest hop
  decides (Patarasuk & Yuan 2009): :math:`T = 2\frac{n-1}{n}\frac{M}{B_{\min}}`.
  A hop inside host ``j`` runs at ``intra[j]``; the hop from host ``a`` to
  host ``b`` at ``min(inter[a], inter[b])``.
* **hierarchical all-reduce** (several workers share a host): ring
  reduce-scatter inside every host, ring all-reduce across hosts, ring
  all-gather inside every host. A host's ``g_j`` shards of ``M/g_j`` all
  cross its one network link, so
  :math:`T = 2\max_j \frac{g_j-1}{g_j}\frac{M}{\text{intra}_j} + 2\frac{h-1}{h}\frac{M}{\min_j \text{inter}_j}`.
  (:func:`commlib.cost.hierarchical_allreduce_time` with ``nics_per_host=1``
  is the same for hosts of equal size and bandwidth.)
* **parameter server** on host ``s``: every worker pushes ``M`` and pulls
  ``M`` back (note 000: the server receives and sends "gradient size x
  number of workers"). The ``g_s`` local workers meet the server over
  ``intra[s]``; the ``n - g_s`` remote ones over the server's network link,
  and the ``g_j`` workers of host ``j`` share its network link. Links are
  full duplex and, as in :func:`commlib.cost.ps_time` (chapter 3, Jiang et
  al. 2020), push and pull overlap by default (``pipelined=True``), so each
  direction of the most loaded link is busy once:
  :math:`T = \max\left(\frac{g_s M}{\text{intra}_s},\ \frac{(n-g_s)M}{\text{inter}_s},\ \max_{j\ne s}\frac{g_j M}{\text{inter}_j}\right)`.
  With ``pipelined=False`` the whole push runs before the whole pull and
  the time doubles. Both are computed by :func:`commlib.cost.ps_time`: once
  for the local workers (bandwidth ``intra[s]`` on both sides) and once for
  the remote ones (worker bandwidth :math:`\min_j \text{inter}_j / g_j`,
  server bandwidth ``inter[s]``).

>>> c = example_cluster()
>>> est = estimate(c, {"host3": 2, "host1": 2}, model="resnet50")
>>> est.algorithm, est.bottleneck
('hierarchical', 'network link of host 3 (145.88 MB/s)')
>>> round(est.time, 3)
0.94
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .. import hardware
from ..parameter_servers import cost
from ..units import check_count, check_nonnegative, check_positive, format_rate, parse_rate

__all__ = [
    "EXAMPLE_INTER_MB_S",
    "EXAMPLE_INTRA_MB_S",
    "QUOTED_LINK_CLAIMS",
    "LinkClaim",
    "link_claims",
    "POWER9_NVLINKS_PER_GPU",
    "V100_NVLINKS",
    "v100_nvlink_bandwidth",
    "nvlink2_grid_words",
    "hierarchical_phases",
    "power9_nvlink_ratios",
    "MODES",
    "ALGORITHMS",
    "Cluster",
    "Estimate",
    "example_cluster",
    "as_megabits",
    "smallest_denominator",
    "workers_per_host",
    "parse_placement",
    "estimate",
    "rank_placements",
    "best_placements",
    "best_placements_by_workers",
    "sharded_ps",
    "best_sharded_ps",
]

#: Note 000's "inter" list, MB/s, one entry per machine, as printed in the note.
EXAMPLE_INTER_MB_S: tuple[float, ...] = (91.875, 233.0, 59.5, 145.875, 120.125, 60.75, 92.125, 10.375)
#: Note 000's "intra" list, MB/s, one entry per machine, as printed in the note.
EXAMPLE_INTRA_MB_S: tuple[float, ...] = (306.5, 427.75, 63.0, 1082.125, 181.125, 159.625, 65.625, 22.875)


@dataclass(frozen=True)
class LinkClaim:
    """A link figure as note 000 writes it, the preset it should be read against, and how to read it."""

    what: str
    as_written: str
    preset: str | None
    reading: str

    @property
    def rate(self) -> float:
        """The figure in bytes/s, taken literally."""
        return parse_rate(self.as_written)

    @property
    def per_direction(self) -> float | None:
        """The preset's bytes/s in one direction (None when there is no matching preset)."""
        return None if self.preset is None else hardware.link(self.preset).bandwidth


#: Note 000's link figures, verbatim, with the reading the book adopts.
QUOTED_LINK_CLAIMS: tuple[LinkClaim, ...] = (
    LinkClaim("NVLink 2.0 per V100 ('300GB/s full duplex')", "300 GB/s", "nvlink2",
              "both directions summed, six links"),
    LinkClaim("NVLink 3.0 per A100 ('600GB/s')", "600 GB/s", "nvlink3", "both directions summed, twelve links"),
    LinkClaim("CPU-GPU over NVLink 2.0 ('63 GiB/s')", "63 GiB/s", None,
              "measured between a POWER9 CPU and a V100 (Lutz et al. 2020), binary units"),
    LinkClaim("CPU-GPU over PCIe ('16GB/s')", "16 GB/s", "pcie3_x16",
              "PCIe 3.0 x16, one direction, the raw rate before 128b/130b encoding"),
    LinkClaim("QPI/UPI and X-Bus ('about 31 GiB/s')", "31 GiB/s", "upi",
              "binary units; number of links and direction not given"),
    LinkClaim("NIC through a switch ('10Gb/s')", "10 Gb/s", "eth_10g", "bits per second"),
)


#: NVLink 2.0 links between a POWER9 CPU and each V100 in the 4-GPU IBM Power System AC922 (the machine
#: Lutz et al. 2020 measured 63 GiB/s on): three, each one sixth of a V100's six-link figure (IBM Redpaper
#: REDP-5472, 2018).
POWER9_NVLINKS_PER_GPU = 3

#: NVLink 2.0 links of one V100 (NVIDIA's 300 GB/s is six links, both directions summed).
V100_NVLINKS = 6


def v100_nvlink_bandwidth(links: int = 1) -> float:
    """Bytes/s per direction of ``links`` of a V100's six NVLink 2.0 links (one sixth of the preset each).

    >>> v100_nvlink_bandwidth() / 1e9, v100_nvlink_bandwidth(2) / 1e9
    (25.0, 50.0)
    """
    links = check_count("links", links)
    if links > V100_NVLINKS:
        raise ValueError(f"links must be in 1..{V100_NVLINKS} (a V100's NVLink 2.0 links), got {links}")
    return links * hardware.link("nvlink2").bandwidth / V100_NVLINKS


def nvlink2_grid_words(short: bool = False) -> str:
    """How the links of a grid built from the ``nvlink2`` preset are named in prose and captions: each link
    carries the preset's rate per direction, all of a V100's six NVLink 2.0 links taken together (one NVLink
    2.0 link is a sixth of it, :func:`v100_nvlink_bandwidth`).

    >>> nvlink2_grid_words(short=True)
    'links of 150 GB/s per direction each (the nvlink2 preset)'
    """
    words = f"links of {hardware.link('nvlink2').bandwidth / 1e9:.0f} GB/s per direction each (the nvlink2 preset"
    if short:
        return words + ")"
    return words + ": a V100's six NVLink 2.0 links taken together; a hypothetical grid)"


def power9_nvlink_ratios() -> tuple[float, float]:
    """CPU-GPU NVLink 2.0 on a POWER9 against PCIe 3.0 x16, like for like: (nominal / nominal, measured / measured).

    Nominal: three NVLink 2.0 links, 75 GB/s per direction, against PCIe 3.0
    x16's 15.75 GB/s. Measured: Lutz et al.'s 63 GiB/s against the 105 Gb/s
    BytePS measured for a PCIe 3.0 x16 copy between two GPUs under one PCIe
    switch (:data:`commlib.network.topology.BYTEPS_PCIE_MEASURED`; a GPU-to-GPU
    copy, the book's one measured PCIe 3.0 rate).

    >>> [round(r, 2) for r in power9_nvlink_ratios()]
    [4.76, 5.15]
    """
    nvlink = v100_nvlink_bandwidth(POWER9_NVLINKS_PER_GPU)
    pcie = hardware.link("pcie3_x16").bandwidth
    measured_nvlink = next(c for c in QUOTED_LINK_CLAIMS if c.as_written == "63 GiB/s").rate
    measured_pcie = parse_rate("105 Gb/s")  # BytePS (Jiang et al. 2020, sec. 4.2.1), same PCIe switch
    return nvlink / pcie, measured_nvlink / measured_pcie


def link_claims() -> tuple[LinkClaim, ...]:
    """Note 000's link figures (:data:`QUOTED_LINK_CLAIMS`).

    >>> [round(c.rate / 1e9, 2) for c in link_claims()][:3]
    [300.0, 600.0, 67.65]
    """
    return QUOTED_LINK_CLAIMS


MODES = ("allreduce", "ps")
ALGORITHMS = ("auto", "ring", "hierarchical")

_MB = 1e6


@dataclass(frozen=True)
class Cluster:
    """Per-host bandwidths (bytes/s per direction) and worker slots.

    ``intra[h]`` and ``inter[h]`` as in the module docstring; ``slots[h]``
    is how many workers host ``h`` can hold (its GPUs).
    """

    intra: tuple[float, ...]
    inter: tuple[float, ...]
    slots: tuple[int, ...]

    def __post_init__(self):
        intra = tuple(check_positive(f"intra[{h}]", b) for h, b in enumerate(self.intra))
        inter = tuple(check_positive(f"inter[{h}]", b) for h, b in enumerate(self.inter))
        slots = tuple(check_count(f"slots[{h}]", s, minimum=0) for h, s in enumerate(self.slots))
        if not intra:
            raise ValueError("intra must list at least one host")
        if not (len(intra) == len(inter) == len(slots)):
            raise ValueError(f"intra, inter and slots must have one entry per host; got lengths "
                             f"{len(intra)}, {len(inter)}, {len(slots)}")
        object.__setattr__(self, "intra", intra)
        object.__setattr__(self, "inter", inter)
        object.__setattr__(self, "slots", slots)

    @property
    def hosts(self) -> int:
        """Number of hosts."""
        return len(self.intra)

    @classmethod
    def from_mb_per_s(cls, intra: Sequence[float], inter: Sequence[float], slots: int | Sequence[int] = 4
                      ) -> Cluster:
        """Build from lists in MB/s (1 MB = 10**6 B); ``slots`` one number for all hosts or one per host."""
        if isinstance(slots, int):
            slots = [slots] * len(intra)
        return cls(tuple(check_positive("intra", b) * _MB for b in intra),
                   tuple(check_positive("inter", b) * _MB for b in inter), tuple(slots))

    def with_bandwidth(self, host: int, intra: float | None = None, inter: float | None = None) -> Cluster:
        """A copy with host ``host``'s ``intra`` and/or ``inter`` (bytes/s) replaced."""
        host = check_count("host", host, minimum=0, maximum=self.hosts - 1)
        a, e = list(self.intra), list(self.inter)
        if intra is not None:
            a[host] = intra
        if inter is not None:
            e[host] = inter
        return Cluster(tuple(a), tuple(e), self.slots)


def example_cluster(slots: int | Sequence[int] = 4) -> Cluster:
    """Note 000's eight machines, read as per-host MB/s per direction; ``slots`` workers each (the note
    does not say; 4 is an assumption).

    >>> c = example_cluster(); c.hosts, c.inter[7]
    (8, 10375000.0)
    """
    return Cluster.from_mb_per_s(EXAMPLE_INTRA_MB_S, EXAMPLE_INTER_MB_S, slots)


def as_megabits(values_mb_per_s: Sequence[float]) -> list[float]:
    """MB/s -> Mb/s (x 8, 1 B = 8 b).

    Note 000's figures all become whole numbers of Mb/s. That fits a
    measurement in megabits per second divided by 8, but equally a mean of 8
    samples in whole MB/s: see :func:`smallest_denominator`.

    >>> as_megabits([91.875, 10.375])
    [735.0, 83.0]
    """
    return [check_nonnegative("value", v) * 8 for v in values_mb_per_s]


def smallest_denominator(values: Sequence[float], limit: int = 1024) -> int:
    """The smallest whole d (1 <= d <= ``limit``) that makes every ``d * v`` a whole number.

    Each value is read as printed (its shortest decimal form), so ``0.1``
    means one tenth. All values are then multiples of 1/d. For note 000's
    lists d = 8, which two different histories explain: a rate measured in
    whole Mb/s and divided by 8 bits per byte, or the mean of 8 samples each
    a whole number of MB/s (a sum of integers divided by 8). The numbers
    alone cannot tell the two apart.

    >>> smallest_denominator([91.875, 59.5, 233.0])
    8
    >>> smallest_denominator([0.1, 0.25])
    20
    >>> smallest_denominator([1 / 3])
    Traceback (most recent call last):
    ...
    ValueError: values must all be multiples of 1/d for some whole d <= 1024, got [0.3333333333333333]
    """
    values = [float(check_nonnegative("value", v)) for v in values]
    limit = check_count("limit", limit)
    if not values:
        raise ValueError("values must hold at least one number")
    d = math.lcm(*(Fraction(repr(v)).denominator for v in values))
    if d > limit:
        raise ValueError(f"values must all be multiples of 1/d for some whole d <= {limit}, got {values!r}")
    return d


_HOST = re.compile(r"^\s*(?:host|h)?\s*(\d+)\s*$", re.I)   # "host3", "Host3", "H3", "3"


def _host_index(key, hosts: int) -> int:
    if isinstance(key, bool):
        raise ValueError(f"host must be an index 0..{hosts - 1} or a name 'host0'..'host{hosts - 1}', got {key!r}")
    if isinstance(key, int):
        h = key
    elif isinstance(key, str) and _HOST.match(key):
        h = int(_HOST.match(key).group(1))
    else:
        raise ValueError(f"host must be an index 0..{hosts - 1} or a name 'host0'..'host{hosts - 1}', got {key!r}")
    if not 0 <= h < hosts:
        raise ValueError(f"host must be in 0..{hosts - 1}, got {key!r}")
    return h


def workers_per_host(cluster: Cluster, placement) -> tuple[int, ...]:
    """Normalise a placement to a tuple of worker counts, one per host, checking slots.

    ``placement`` is a mapping host -> number of workers (``{"host0": 2, 3: 1}``)
    or a sequence with each worker's host (``[0, 0, 3]``).

    >>> workers_per_host(example_cluster(), {"host0": 2, "host3": 1})
    (2, 0, 0, 1, 0, 0, 0, 0)
    >>> workers_per_host(example_cluster(), [1] * 5)
    Traceback (most recent call last):
    ...
    ValueError: placement puts 5 workers on host 1, which has 4 slots
    """
    counts = [0] * cluster.hosts
    if isinstance(placement, Mapping):
        for key, value in placement.items():
            counts[_host_index(key, cluster.hosts)] += check_count(f"workers on {key}", value, minimum=0)
    elif isinstance(placement, (list, tuple)):
        for h in placement:
            counts[_host_index(h, cluster.hosts)] += 1
    else:
        raise ValueError(f"placement must be a mapping host -> workers or a list of hosts, got {placement!r}")
    for h, (c, s) in enumerate(zip(counts, cluster.slots)):
        if c > s:
            raise ValueError(f"placement puts {c} workers on host {h}, which has {s} slots")
    if sum(counts) < 1:
        raise ValueError("placement must place at least one worker")
    return tuple(counts)


_ITEM = re.compile(r"^(?:host|h)?(\d+):(\d+)$", re.I)


def parse_placement(text: str) -> dict[int, int]:
    """Read ``"host3:2, host1:2"`` (host:workers items, commas or spaces between) into ``{3: 2, 1: 2}``.

    >>> parse_placement("host3:2, host1:2"), parse_placement("host3: 2 ,host1 : 2")
    ({3: 2, 1: 2}, {3: 2, 1: 2})
    >>> parse_placement("host3:2, host3:2")
    Traceback (most recent call last):
    ...
    ValueError: placement names host 3 twice ('host3:2'); give each host once with its count
    >>> parse_placement("3-2")
    Traceback (most recent call last):
    ...
    ValueError: placement must read like 'host3:2, host1:2' (host:workers), got '3-2'
    >>> parse_placement("host 3:2")
    Traceback (most recent call last):
    ...
    ValueError: placement must read like 'host3:2, host1:2' (host:workers, no space inside a host name: host3, not host 3), got 'host 3:2'
    >>> parse_placement("host1:2 x3")
    Traceback (most recent call last):
    ...
    ValueError: placement must read like 'host3:2, host1:2' (host:workers), got 'host1:2 x3' (at 'x3')
    >>> parse_placement("host3:1,5")
    Traceback (most recent call last):
    ...
    ValueError: placement: '5' names no host: commas separate host:workers items, and a count must be a whole number, like host3:2
    >>> parse_placement("HOST3:2, H1:1") == parse_placement("host3:2, h1:1")    # any case
    True
    """
    if not isinstance(text, str):
        raise ValueError(f"placement must be a string like 'host3:2, host1:2', got {text!r}")
    out: dict[int, int] = {}
    items = [t for t in re.split(r"[,\s]+", re.sub(r"\s*:\s*", ":", text.strip())) if t]   # "host3 : 2" too
    for item in items:
        match = _ITEM.match(item)
        whole = "a count must be a whole number, like host3:2"
        if not match and re.fullmatch(r"\d+", item) and out:       # "host3:1,5": a decimal comma in a count
            raise ValueError(f"placement: {item!r} names no host: commas separate host:workers items, and {whole}")
        if not match and re.fullmatch(r"(?:host|h)?\d+:\d*[.,]\d*", item, re.I):   # "host3:1.5"
            raise ValueError(f"placement: {item!r}: {whole}")
        if not match and re.search(r"\b(?:host|h)\s+\d", text, re.I):   # "host 3:2": the space splits the name
            raise ValueError(f"placement must read like 'host3:2, host1:2' (host:workers, no space inside a host "
                             f"name: host3, not host 3), got {text.strip()!r}")
        if not match:
            at = "" if item == text.strip() else f" (at {item!r})"
            raise ValueError(f"placement must read like 'host3:2, host1:2' (host:workers), got {text.strip()!r}{at}")
        h, c = int(match.group(1)), int(match.group(2))
        if h in out:  # host3:2, host3:2 could mean 4 workers or a slip: refuse rather than guess
            raise ValueError(f"placement names host {h} twice ({item!r}); give each host once with its count")
        out[h] = c
    if not out:
        raise ValueError("placement must name at least one host, like 'host3:2'")
    return out


@dataclass(frozen=True)
class Estimate:
    """One placement's synchronisation time per iteration (s) and what bounds it.

    ``bottleneck_kind`` is ``"intra"`` or ``"inter"``, ``bottleneck_host`` the
    host whose link it is, ``bottleneck_bandwidth`` its bytes/s; all ``None``
    for a single worker (nothing to synchronise). ``server_host`` and
    ``pipelined`` (push and pull overlapped) are set for a parameter server;
    ``shards`` (shards held on each host) for one sharded over the workers
    (:func:`sharded_ps`). ``phases``, for a hierarchical all-reduce, is ``((where, host, seconds), ...)``:
    ``("inside", h, s)``, its reduce-scatter and all-gather inside the slowest host, and ``("network", h, s)``,
    its all-reduce across the cards, bounded by the slowest; ``time`` is their sum (they run one after another
    here), :attr:`pipelined_bound` the longer of the two.
    """

    time: float
    mode: str
    algorithm: str
    counts: tuple[int, ...]
    nbytes: float
    bottleneck_kind: str | None
    bottleneck_host: int | None
    bottleneck_bandwidth: float | None
    server_host: int | None = None
    pipelined: bool | None = None
    shards: tuple[int, ...] | None = None
    phases: tuple[tuple[str, int, float], ...] | None = None

    @property
    def pipelined_bound(self) -> float:
        """About what a pipelined run would take, its phases overlapped: the longest phase (``time`` where the run
        has no phases in series).

        >>> c = Cluster((1e9, 1e8), (1e8, 1e8), (4, 4))
        >>> e = estimate(c, {0: 2, 1: 2}, nbytes=1e8, algorithm="hierarchical")
        >>> round(e.time, 3), round(e.pipelined_bound, 3)     # 1 s inside host 1, then 1 s across the cards
        (2.0, 1.0)
        """
        return self.time if not self.phases else max(s for _, _, s in self.phases)

    @property
    def workers(self) -> int:
        """Number of workers."""
        return sum(self.counts)

    @property
    def bottleneck(self) -> str:
        """The bounding link in words, e.g. ``'network link of host 7 (10.38 MB/s)'``."""
        if self.bottleneck_kind is None:
            return "none (a single worker has nothing to synchronise)"
        what = "network link" if self.bottleneck_kind == "inter" else "intra-host link"
        return f"{what} of host {self.bottleneck_host} ({format_rate(self.bottleneck_bandwidth)})"

    def describe(self) -> str:
        """One sentence: placement, algorithm and bottleneck."""
        hosts = ", ".join(f"{c} on host {h}" for h, c in enumerate(self.counts) if c)
        if self.shards is not None:
            held = ", ".join(f"{a} on host {h}" for h, a in enumerate(self.shards) if a)
            first = "; each host sums first" if self.algorithm == "hierarchical sharded ps" else ""
            algo = f"PS in {sum(self.shards)} shard(s) on the workers ({held}){first}"
        elif self.mode == "ps":
            algo = f"PS on host {self.server_host}, push and pull " + ("overlapped" if self.pipelined else "in turn")
        else:
            algo = f"{self.algorithm} all-reduce"
        return f"{self.workers} workers ({hosts}); {algo}; bounded by the {self.bottleneck}"


def _nbytes(model: str | None, dtype: str, nbytes: float | None) -> float:
    if nbytes is not None:
        return check_positive("nbytes", nbytes)
    if model is None:
        raise ValueError("give a model preset (model=...) or the gradient size (nbytes=...)")
    return float(hardware.gradient_bytes(model, dtype))


def _placement_inputs(cluster: Cluster, placement, model: str | None, dtype: str, nbytes: float | None,
                      **flags: bool) -> tuple[float, tuple[int, ...]]:
    """The checked inputs every placement estimate starts from: gradient bytes M and workers per host.

    ``flags`` are the estimate's yes/no options, each checked to be a bool under its own name.
    """
    if not isinstance(cluster, Cluster):
        raise ValueError(f"cluster must be a Cluster, got {type(cluster).__name__}")
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
    return _nbytes(model, dtype, nbytes), workers_per_host(cluster, placement)


def _ring(cluster: Cluster, counts, m: float):
    n = sum(counts)
    used = [h for h, c in enumerate(counts) if c]
    hops = []  # (bandwidth, order, kind, host)
    for h in used:
        for _ in range(counts[h] - 1):
            hops.append((cluster.intra[h], len(hops), "intra", h))
    if len(used) > 1:
        for a, b in zip(used, used[1:] + used[:1]):
            slow = a if cluster.inter[a] <= cluster.inter[b] else b
            hops.append((cluster.inter[slow], len(hops), "inter", slow))
    bw, _, kind, host = min(hops)
    return 2 * (n - 1) / n * m / bw, kind, host, bw


def _hierarchical_terms(cluster: Cluster, counts, m: float):
    """``(t_intra, h_intra, t_inter, h_inter)``: one intra-host phase (the slowest host's) and the network phase."""
    used = [h for h, c in enumerate(counts) if c]
    k = len(used)
    intra_terms = [((counts[h] - 1) / counts[h] * m / cluster.intra[h], h) for h in used]
    t_intra, h_intra = max(intra_terms, key=lambda t: (t[0], -t[1]))
    h_inter = min(used, key=lambda h: (cluster.inter[h], h))
    t_inter = 2 * (k - 1) / k * m / cluster.inter[h_inter]
    return t_intra, h_intra, t_inter, h_inter


def _hierarchical(cluster: Cluster, counts, m: float):
    t_intra, h_intra, t_inter, h_inter = _hierarchical_terms(cluster, counts, m)
    if 2 * t_intra > t_inter:
        return 2 * t_intra + t_inter, "intra", h_intra, cluster.intra[h_intra]
    return 2 * t_intra + t_inter, "inter", h_inter, cluster.inter[h_inter]


def _ps_links(cluster: Cluster, counts, m: float, s: int) -> list[tuple[float, float, str, int]]:
    """Bytes each way and bandwidth of every link a PS round on host ``s`` uses: (bytes, bytes/s, kind, host)."""
    n = sum(counts)
    links = []
    if counts[s]:
        links.append((counts[s] * m, cluster.intra[s], "intra", s))       # local workers <-> server endpoint
    if n - counts[s]:
        links.append(((n - counts[s]) * m, cluster.inter[s], "inter", s))  # the server host's network link
    for h, c in enumerate(counts):
        if c and h != s:
            links.append((c * m, cluster.inter[h], "inter", h))          # c remote workers share host h's link
    return links


def _ps(cluster: Cluster, counts, m: float, s: int, pipelined: bool):
    n = sum(counts)
    local, remote = counts[s], n - counts[s]
    t = 0.0
    if local:
        t = cost.ps_time(m, local, cluster.intra[s], server_bandwidth=cluster.intra[s], pipelined=pipelined)
    if remote:
        per_worker = min(cluster.inter[h] / c for h, c in enumerate(counts) if c and h != s)
        t = max(t, cost.ps_time(m, remote, per_worker, server_bandwidth=cluster.inter[s], pipelined=pipelined))
    # the bounding link: the most seconds per direction; ties go to the server's own links, then the lowest host
    links = _ps_links(cluster, counts, m, s)
    _, bw, kind, host = max(enumerate(links), key=lambda x: (x[1][0] / x[1][1], -x[0]))[1]
    return t, kind, host, bw


def hierarchical_phases(cluster: Cluster, placement, model: str | None = "resnet50", dtype: str = "fp32",
                        nbytes: float | None = None) -> dict:
    """The hierarchical all-reduce's terms in :func:`estimate` (they add): ``"inside"``, the reduce-scatter and
    all-gather inside the slowest host (``"inside_host"``), and ``"network"``, the all-reduce across the hosts'
    cards, bounded by the slowest card (``"network_host"``), in seconds; ``"pipelined"``, the longer of the two,
    about what a run that overlaps the phases would take (:attr:`Estimate.pipelined_bound`).

    >>> c = Cluster((1e9, 1e8), (1e8, 1e8), (4, 4))
    >>> p = hierarchical_phases(c, {0: 2, 1: 2}, nbytes=1e8); round(p["inside"], 3), p["inside_host"], p["network"]
    (1.0, 1, 1.0)
    """
    m, counts = _placement_inputs(cluster, placement, model, dtype, nbytes)
    t_intra, h_intra, t_inter, h_inter = _hierarchical_terms(cluster, counts, m)
    return {"inside": 2 * t_intra, "inside_host": h_intra, "network": t_inter, "network_host": h_inter,
            "pipelined": max(2 * t_intra, t_inter)}


def estimate(cluster: Cluster, placement, model: str | None = "resnet50", dtype: str = "fp32",
             mode: str = "allreduce", algorithm: str = "auto", server_host: int | str | None = None,
             nbytes: float | None = None, pipelined: bool = True) -> Estimate:
    """Synchronisation time per iteration of ``placement`` on ``cluster`` (formulas in the module docstring).

    ``model``/``dtype`` give the gradient bytes (or pass ``nbytes``).
    ``mode`` is ``"allreduce"`` or ``"ps"``. For all-reduce, ``algorithm`` is
    ``"ring"``, ``"hierarchical"`` or ``"auto"`` (the faster of the two; the
    hierarchical one is a candidate when several workers share a host and more
    than one host is used). For PS,
    ``server_host`` is where the server runs (it takes no worker slot); by
    default the host that gives the shortest time. ``pipelined`` (PS only)
    says whether push and pull overlap (default, as in
    :func:`commlib.cost.ps_time`) or run one after the other.

    >>> c = Cluster((1e9, 1e9), (1e8, 1e8), (4, 4))
    >>> estimate(c, {0: 4}, nbytes=1e8).time          # 2 * 3/4 * 100 MB / 1 GB/s
    0.15
    >>> estimate(c, {0: 1, 1: 1}, nbytes=1e8, mode="ps", server_host=0).time   # 100 MB each way at 100 MB/s
    1.0
    >>> estimate(c, {0: 1, 1: 1}, nbytes=1e8, mode="ps", server_host=0, pipelined=False).time  # push, then pull
    2.0
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    m, counts = _placement_inputs(cluster, placement, model, dtype, nbytes, pipelined=pipelined)
    n = sum(counts)
    if mode == "ps":
        hosts = range(cluster.hosts) if server_host is None else [_host_index(server_host, cluster.hosts)]
        if n == 1 and server_host is None:
            hosts = [counts.index(1)]
        best = None
        for s in hosts:
            t, kind, host, bw = _ps(cluster, counts, m, s, pipelined)
            if best is None or t < best[0]:
                best = (t, kind, host, bw, s)
        t, kind, host, bw, s = best
        return Estimate(t, "ps", "ps", counts, m, kind, host, bw, s, pipelined)
    if n == 1:
        return Estimate(0.0, "allreduce", "none", counts, m, None, None, None)
    used = sum(1 for c in counts if c)
    runs = {"ring": _ring, "hierarchical": _hierarchical}
    if algorithm == "hierarchical" and used == 1:
        algorithm = "ring"  # one host: the intra-host ring is the whole story
    if algorithm == "auto":    # the faster of the two here (the hierarchical one only where hosts hold several)
        options = ["ring"] + (["hierarchical"] if used > 1 and max(counts) > 1 else [])
        timed = {a: runs[a](cluster, counts, m) for a in options}
        algorithm = min(options, key=lambda a: (timed[a][0], options.index(a)))
        t, kind, host, bw = timed[algorithm]
    else:
        t, kind, host, bw = runs[algorithm](cluster, counts, m)
    phases = None
    if algorithm == "hierarchical":
        t_intra, h_intra, t_inter, h_inter = _hierarchical_terms(cluster, counts, m)
        phases = (("inside", h_intra, 2 * t_intra), ("network", h_inter, t_inter))
    return Estimate(t, "allreduce", algorithm, counts, m, kind, host, bw, phases=phases)


def rank_placements(cluster: Cluster, candidates: Mapping[str, object], **kwargs) -> list[tuple[str, Estimate]]:
    """Estimate every named candidate placement and sort them, fastest first (ties by name).

    ``kwargs`` go to :func:`estimate` (model, dtype, mode, algorithm, ...).

    >>> c = example_cluster()
    >>> [name for name, _ in rank_placements(c, {"slow": {"host7": 2}, "fast": {"host3": 2}})]
    ['fast', 'slow']
    """
    if not isinstance(candidates, Mapping) or not candidates:
        raise ValueError("candidates must be a non-empty mapping name -> placement")
    out = [(str(name), estimate(cluster, p, **kwargs)) for name, p in candidates.items()]
    return sorted(out, key=lambda item: (item[1].time, item[0]))


def _compositions(total: int, slots: Sequence[int]):
    """Every tuple of counts, one per host, within ``slots``, summing to ``total``."""
    if not slots:
        if total == 0:
            yield ()
        return
    room = sum(slots[1:])
    for c in range(min(slots[0], total), -1, -1):
        if total - c <= room:
            for rest in _compositions(total - c, slots[1:]):
                yield (c,) + rest


def best_placements(cluster: Cluster, workers: int, top: int = 5, **kwargs) -> list[Estimate]:
    """Try every way to put ``workers`` workers on the hosts (within slots); return the ``top`` fastest.

    Ties are broken by the count vector, smallest first.

    >>> best = best_placements(example_cluster(), 4, top=1)[0]
    >>> best.counts, best.algorithm
    ((0, 0, 0, 4, 0, 0, 0, 0), 'ring')
    """
    workers = check_count("workers", workers)
    top = check_count("top", top)
    if workers > sum(cluster.slots):
        raise ValueError(f"workers must be <= {sum(cluster.slots)} (the cluster's slots), got {workers}")
    results = [estimate(cluster, dict(enumerate(counts)), **kwargs)
               for counts in _compositions(workers, cluster.slots)]
    results.sort(key=lambda e: (e.time, e.counts))
    return results[:top]


def best_placements_by_workers(cluster: Cluster, workers: Sequence[int] = (2, 3, 4, 5, 6, 8), top: int = 5,
                               model: str = "resnet50", dtype: str = "fp32") -> dict:
    """For each number of workers, the ``top`` fastest placements for all-reduce and for a parameter server.

    The parameter server overlaps push and pull, as :func:`estimate` does by
    default. Returns ``{"model", "dtype", "top", "runs"}`` where
    ``runs[n][mode]`` is :func:`best_placements`' list for ``mode`` in
    ``("allreduce", "ps")``: the results behind the chapter's placement sweep.

    >>> s = best_placements_by_workers(example_cluster(), workers=(4,), top=1)
    >>> s["runs"][4]["allreduce"][0].counts, s["runs"][4]["ps"][0].counts
    ((0, 0, 0, 4, 0, 0, 0, 0), (0, 0, 0, 4, 0, 0, 0, 0))
    """
    runs = {int(n): {mode: best_placements(cluster, n, top=top, model=model, dtype=dtype, mode=mode)
                     for mode in ("allreduce", "ps")} for n in workers}
    return {"model": model, "dtype": dtype, "top": top, "runs": runs}




def _shard_layouts(shards: int, hosts: int):
    """Every way to hold ``shards`` identical shards on ``hosts`` hosts (counts per host)."""
    yield from _compositions(shards, [shards] * hosts)


def _sharded_links(cluster: Cluster, counts, m: float, held, aggregate: bool):
    """Seconds of each link a sharded PS round loads: [(seconds, kind, host, bytes/s)], and how they combine."""
    n, k = sum(counts), sum(held)
    used = [h for h, c in enumerate(counts) if c]
    inter, intra = [], []
    for h in used:
        g, share = counts[h], held[h] / k
        if len(used) > 1:
            each_way = ((1 - share) + (len(used) - 1) * share) if aggregate else (g * (1 - share) + (n - g) * share)
            inter.append((each_way * m / cluster.inter[h], "inter", h, cluster.inter[h]))
        if g > 1:
            if aggregate:     # ring reduce-scatter and all-gather inside the host
                seconds = 2 * (g - 1) / g * m / cluster.intra[h]
            else:             # the worker holding the most: -(-a // g) of the host's a shards
                seconds = (share + (g - 2) * -(-held[h] // g) / k) * m / cluster.intra[h]
            intra.append((seconds, "intra", h, cluster.intra[h]))
    return inter, intra


def sharded_ps(cluster: Cluster, placement, held: Mapping | Sequence[int], model: str | None = "resnet50",
               dtype: str = "fp32", nbytes: float | None = None, aggregate: bool = False) -> Estimate:
    r"""A parameter server sharded over the workers: ``held`` shards on each host (a mapping host -> shards,
    or one count per host), even shards of M/k, k = their sum, spread over each host's workers as evenly
    as they go; push and pull overlap (formulas in the module docstring).

    Shards sit only on hosts that hold workers: the server uses the workers' own links, none the
    all-reduce lacks. With ``aggregate`` the workers of each host first sum inside it (reduce-scatter),
    the host's sums go to the shards, and the parameters come back and are all-gathered inside it; as
    for the hierarchical all-reduce, only where several workers share a host and more than one host is
    used (elsewhere the round is the plain one).

    >>> c = Cluster((1e9, 1e9, 1e9), (1e8, 2e8, 2e8), (4, 4, 4))
    >>> sharded_ps(c, [0, 1, 2], {1: 1, 2: 1}, nbytes=1e8).time   # host 0 holds none: its own 100 MB at 100 MB/s
    1.0
    >>> estimate(c, [0, 1, 2], nbytes=1e8).time                   # a ring: 2 * 2/3 * 100 MB through host 0's card
    1.3333333333333333
    >>> sharded_ps(c, {0: 4}, {0: 4}, nbytes=1e8).time       # one shard per worker: the ring's bytes, 1.5 M
    0.15
    """
    m, counts = _placement_inputs(cluster, placement, model, dtype, nbytes, aggregate=aggregate)
    if isinstance(held, Mapping):
        per_host = [0] * cluster.hosts
        for key, value in held.items():
            per_host[_host_index(key, cluster.hosts)] += check_count(f"shards on {key}", value, minimum=0)
    else:
        per_host = [check_count(f"held[{h}]", a, minimum=0) for h, a in enumerate(held)]
        if len(per_host) != cluster.hosts:
            raise ValueError(f"held must give one shard count per host ({cluster.hosts}), got {len(per_host)}")
    if sum(per_host) < 1:
        raise ValueError("held must place at least one shard")
    for h, a in enumerate(per_host):
        if a and not counts[h]:
            raise ValueError(f"held puts shards on host {h}, which has no worker; shards sit on the workers")
    held = tuple(per_host)
    aggregate = aggregate and sum(1 for c in counts if c) > 1 and max(counts) > 1   # as for the hierarchical all-reduce
    algorithm = "hierarchical sharded ps" if aggregate else "sharded ps"
    if sum(counts) == 1:
        return Estimate(0.0, "ps", algorithm, counts, m, None, None, None, None, True, held)
    inter, intra = _sharded_links(cluster, counts, m, held, aggregate)
    worst = max(inter + intra, key=lambda t: (t[0], t[1] == "intra", -t[2]))
    if aggregate:
        t_in = max((t[0] for t in intra), default=0.0)
        t_net = max((t[0] for t in inter), default=0.0)
        time = t_in + t_net
        worst = max(intra if t_in > t_net else inter, key=lambda t: (t[0], -t[2]))
    else:
        time = worst[0]
    return Estimate(time, "ps", algorithm, counts, m, worst[1], worst[2], worst[3], None, True, held)


def best_sharded_ps(cluster: Cluster, placement, max_shards: int = 8, model: str | None = "resnet50",
                    dtype: str = "fp32", nbytes: float | None = None, aggregate: bool = False) -> Estimate:
    """The fastest :func:`sharded_ps` over every number of shards 1..``max_shards`` and every way to hold
    them on the hosts in use (ties go to fewer shards, then to the first layout found).

    >>> best = best_sharded_ps(example_cluster(), [0, 1, 3, 4], nbytes=1e6)
    >>> best.shards, round(best.time, 4)
    ((0, 3, 0, 1, 0, 0, 0, 0), 0.0109)
    """
    max_shards = check_count("max_shards", max_shards)
    counts = workers_per_host(cluster, placement)
    used = [h for h, c in enumerate(counts) if c]
    best = None
    for k in range(1, max_shards + 1):
        for layout in _shard_layouts(k, len(used)):
            held = [0] * cluster.hosts
            for h, a in zip(used, layout):
                held[h] = a
            est = sharded_ps(cluster, dict(enumerate(counts)), held, model=model, dtype=dtype, nbytes=nbytes,
                             aggregate=aggregate)
            if best is None or est.time < best.time * (1 - 1e-12):
                best = est
    return best
