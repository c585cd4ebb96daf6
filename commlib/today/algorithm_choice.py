r"""How a collective library picks an algorithm and a protocol: a cost-model chooser.

NCCL does not measure before it chooses. At start-up it fills a table, one
entry per (collective, algorithm, protocol), with a *latency* (microseconds)
and an *algorithm bandwidth* (GB/s), and for every call it takes the entry with
the smallest predicted time (NCCL 2.30.7, ``src/graph/tuning.cc``,
``ncclTopoTuneModel`` and ``ncclTopoGetAlgoTime``):

.. math:: T = \alpha_{base} + a\,\alpha_{hop} + \frac{M}{B_{alg}},

each (algorithm, protocol) with its own constants: a base latency
:math:`\alpha_{base}` plus a per-hop latency :math:`\alpha_{hop}` times the
:math:`a` hops (messages) on the critical path (``2(n-1)`` for a ring
all-reduce; for a tree a chain through the GPUs of a node plus ``log2`` of
the node count, up and down). The algorithm bandwidth :math:`B_{alg}` starts
as a *bus bandwidth*, the links' bandwidth B times factors for the algorithm
and the protocol (:func:`bus_bandwidth`), which NCCL then converts
(:func:`algorithm_bandwidth`): a ring's is divided by its bus factor, a tree
all-reduce's halved, and for all-gather and reduce-scatter by any algorithm but
the ring it is not converted at all. For all-gather and reduce-scatter M is the
whole gathered buffer, n shares, as NCCL's tuner counts it
(``ncclFuncMaxSendRecvCount`` in ``src/include/enqueue.h``). The protocols
trade bandwidth for latency:

* **LL** (low latency) sends 8-byte words, 4 bytes of data and a 4-byte flag
  that tells the receiver the word has arrived: no separate synchronisation,
  so the smallest latency, but half the bytes on the wire are flags.
* **LL128** sends 128-byte lines, 120 bytes of data and 8 bytes of flag
  (NCCL charges 0.92 of the bandwidth, a little under 120/128), nearly LL's
  latency; it needs paths that deliver 128-byte stores whole and in order
  (see :class:`Machine`).
* **Simple** sends large chunks and synchronises with separate flags: full
  bandwidth, the largest latency.

The bandwidth factors, NVLS's and PAT's latencies are NCCL 2.30.7's
(:data:`NCCL_QUOTED`), and so are the ring's and tree's latencies on the NVSwitch
node (:data:`NCCL_NVLINK_LATENCIES`); the link bandwidths and the other latencies are round
constants of our own (:data:`MACHINES`, :data:`PROTOCOLS`). The chooser leaves
out what NCCL also models: channels and threads (but for NVLS's channel
factor), the per-channel caps on LL128's and trees' bandwidth (they scale
with the channel count; LL's cap, a whole GPU's, is kept), the tree
correction factors for mid-sized messages and the tree pattern's discount, the
extra latencies of a ring that crosses the network, the choice of chunk size,
and the tuner plugins that may override everything. Times in seconds, sizes in
bytes, bandwidths in bytes/s per direction. No numpy: calculators run it
anywhere.

>>> best = choose("all_reduce", 4 * 2**10, "nvswitch_node")
>>> best.algorithm, best.protocol
('ring', 'LL')
>>> choose("all_reduce", 256 * 2**20, "nvswitch_node").algorithm
'nvls'
>>> choose("all_gather", 256 * 2**20, "nvswitch_node").algorithm      # NVLS does not speed up all-gather
'ring'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..units import check_nonnegative

__all__ = ["PROTOCOLS", "ALGORITHMS", "COLLECTIVES", "Machine", "MACHINES", "Choice", "machine",
           "NCCL_QUOTED", "NCCL_NVLINK_LATENCIES",
           "NVLS_LATENCY", "bus_bandwidth", "algorithm_bandwidth", "predict", "candidates", "choose",
           "winners", "Crossover", "crossovers", "NCCL_TREE_CORRECTION_SIMPLE", "NCCL_RING_PLATEAU",
           "tree_ring_crossover_corrected"]

#: Constants as NCCL 2.30.7 sets them in src/graph/tuning.cc (``ncclTopoTuneModel``), seconds or factors.
#: Quoted for comparison only: the ring's base latency with LL (the chooser uses its own round numbers) and
#: LL's cap on two nodes of Intel CPUs (39.0 GB/s; the chooser's machine has more nodes).
#: Used by the chooser as they are: the bus-bandwidth factors of a ring over LL and LL128, of a tree
#: all-reduce (0.92, then over LL a further 1/3.8, over LL128 7/9 inside one node and 120/128 across
#: nodes), of PAT (0.75) and NVLS's efficiency on Hopper (0.85); the cap on LL's bus bandwidth (``llMaxBws``:
#: 141 GB/s for Hopper GPUs in one node, 20.4 GB/s across more than two nodes of Intel CPUs); the tree's conversion from bus to
#: algorithm bandwidth (halved); and the latencies of NVLS inside a node (25 us, no base latency) and
#: the part of PAT's that grows with the number of ranks (2.8 us a rank). NVLS's efficiency on Blackwell (0.74)
#: and the bandwidth NCCL's topology gives one NVLink (``SM90_NVLINK_BW``, 20.6 GB/s, on Hopper;
#: ``SM100_NVLINK_BW``, 40.1 GB/s, on Blackwell; src/graph/topo.h) serve :mod:`commlib.today.nvls_measured`.
NCCL_QUOTED = {"ring_ll_base_latency": 6.6e-6, "ll_factor": 0.5, "ll128_factor": 0.92,
               "ll_max_bw_hopper_one_node": 141e9, "ll_max_bw_intel_many_nodes": 20.4e9,
               "ll_max_bw_intel_two_nodes": 39.0e9,
               "tree_factor": 0.92, "tree_ll_factor": 1 / 3.8, "tree_ll128_factor_one_node": 7 / 9,
               "tree_ll128_factor_nodes": 120 / 128, "tree_ratio": 0.5,
               "pat_factor": 0.75, "pat_latency_per_rank": 2.8e-6,
               "nvls_latency": 25e-6, "nvls_efficiency_hopper": 0.85, "nvls_efficiency_blackwell": 0.74,
               "nvlink_bw_hopper": 20.6e9, "nvlink_bw_blackwell": 40.1e9}

#: NCCL 2.30.7's own latencies over NVLink, (algorithm, protocol) -> (base latency, latency per hop), seconds:
#: its ``baseLatencies`` for the ring and the tree and its ``hwLatencies`` for NVLink (src/graph/tuning.cc).
#: The chooser uses them on a machine whose ``nccl_nvlink_latencies`` is set (the NVSwitch node).
NCCL_NVLINK_LATENCIES: dict[tuple[str, str], tuple[float, float]] = {
    ("ring", "LL"): (6.6e-6, 0.6e-6), ("ring", "LL128"): (14.0e-6, 1.9e-6), ("ring", "Simple"): (8.4e-6, 3.4e-6),
    ("tree", "LL"): (6.8e-6, 0.6e-6), ("tree", "LL128"): (14.0e-6, 1.25e-6), ("tree", "Simple"): (8.4e-6, 4.0e-6),
}

#: Protocol -> (NCCL 2.30.7's bus-bandwidth factor on a ring, our latency per hop in seconds).
#: LL carries 4 data bytes per 8-byte word (0.5); LL128 120 of 128 bytes, charged 0.92; Simple all of it.
PROTOCOLS: dict[str, tuple[float, float]] = {
    "LL": (NCCL_QUOTED["ll_factor"], 0.6e-6),
    "LL128": (NCCL_QUOTED["ll128_factor"], 1.2e-6),
    "Simple": (1.0, 4.0e-6),
}

#: Algorithms the chooser knows, with the collectives each implements.
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "ring": ("all_reduce", "all_gather", "reduce_scatter"),
    "tree": ("all_reduce",),
    "nvls": ("all_reduce", "all_gather", "reduce_scatter"),
    "pat": ("all_gather", "reduce_scatter"),
}

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")

#: Latency of an in-switch (NVLS) operation inside a node, seconds: NCCL 2.30.7 charges
#: 25 us for NVLS with Simple on NVLink and no base latency; the switch's
#: multicast set-up and reduction make it slower to start than a ring with LL.
NVLS_LATENCY = NCCL_QUOTED["nvls_latency"]


@dataclass(frozen=True)
class Machine:
    """A machine as the chooser sees it.

    ``ranks`` GPUs on ``nodes`` nodes; ``bandwidth`` the bus bandwidth, bytes/s per
    direction, that the machine's rings reach together, as NCCL's tuner counts it
    (``nChannels * bw`` in ``ncclTopoTuneModel``, one channel's share times the
    channels): inside one node, what a ring all-reduce over the GPUs' NVLink (or
    PCIe) reaches; across nodes of one GPU each, that GPU's network card. Across
    nodes of several GPUs, NCCL lays its rings so that each leaves the node through a
    card of its own, and together they carry about the node's total network
    bandwidth (the sum of its cards' rates, capped by the links inside the node):
    one GPU's card, or one GPU's share of a card, is several times too low there.
    Like NCCL, the chooser applies its protocol factors on top of it; ``hop_latency`` the extra seconds per
    network hop; ``in_switch`` whether the switch takes part (NVLink SHARP, NVLS:
    it reduces for all-reduce and reduce-scatter, multicasts for all-gather);
    ``ll128`` whether NCCL 2.30.7 enables LL128 by default (``ncclTopoTuneModel``): only
    where the GPUs of a node reach each other over NVLink (directly or through one
    other GPU) or a node has one GPU; where each GPU's path to its network card
    stays within PCIe switches (on Hopper and later, with ``NCCL_LL128_C2C`` at its
    default 1, also through another GPU, PXN, or a CPU-to-GPU link); where the GPUs share
    one compute capability or are all Hopper or later; and on Volta or later. LL128
    relies on 128-byte stores arriving whole and in order, which those paths keep and
    a path through the CPU's PCIe root does not. ``base_latency`` a round base latency of our own, used with
    :data:`PROTOCOLS`' per-hop latencies, unless ``nccl_nvlink_latencies`` is set: then ring and tree take
    NCCL 2.30.7's own base and NVLink per-hop latencies by protocol (:data:`NCCL_NVLINK_LATENCIES`).
    ``ll_cap`` the most bus bandwidth NCCL
    grants LL on this machine, bytes/s (its ``llMaxBws``, by GPU generation in one node and
    by CPU vendor across nodes; infinite where it does not bind). ``one_gpu_per_node`` says
    whether PAT applies (NCCL enables it only then). ``nvls_efficiency`` NCCL's efficiency factor for NVLS on the
    machine's GPU generation (``nvlsEfficiency`` in src/graph/tuning.cc: 0.85 on Hopper, the default, 0.74 on
    Blackwell).
    """

    key: str
    name: str
    ranks: int
    nodes: int
    bandwidth: float
    hop_latency: float
    in_switch: bool
    ll128: bool
    base_latency: float = 6.0e-6
    ll_cap: float = math.inf
    nccl_nvlink_latencies: bool = False
    nvls_efficiency: float = NCCL_QUOTED["nvls_efficiency_hopper"]

    def latencies(self, algorithm: str, protocol: str) -> tuple[float, float]:
        """(base latency, latency per hop before ``hop_latency``), seconds, of a ring or tree entry."""
        if self.nccl_nvlink_latencies:
            return NCCL_NVLINK_LATENCIES[algorithm, protocol]
        return self.base_latency, PROTOCOLS[protocol][1]

    @property
    def one_gpu_per_node(self) -> bool:
        """True when every rank is on a node of its own."""
        return self.ranks == self.nodes

    @property
    def per_node(self) -> float:
        """GPUs per node (NCCL's ``ppn``)."""
        return self.ranks / self.nodes


#: Three machines, with round constants (not NCCL's) but for the NVSwitch node's latencies, which are
#: NCCL's own over NVLink (:data:`NCCL_NVLINK_LATENCIES`): one 8-GPU NVSwitch node (H100),
#: 16 nodes of one GPU on a 400 Gb/s network (Intel hosts), and 8 GPUs on PCIe (where LL's
#: cap, 39 GB/s or more, does not bind). The NVSwitch node's
#: 370 GB/s is what a ring all-reduce measured on 8 H100 GPUs (busbw, nccl-tests issue 212),
#: so it already includes Simple's protocol overhead; it is also what NCCL's topology charges
#: for 18 NVLink 4 links (20.6 GB/s each, ``SM90_NVLINK_BW`` in src/graph/topo.h). LL's and
#: LL128's factors apply on top of it, as NCCL applies them on top of its own figure.
MACHINES: dict[str, Machine] = {
    "nvswitch_node": Machine("nvswitch_node", "8 GPUs, NVSwitch with in-switch reduction", 8, 1,
                             370e9, 0.0, True, True, ll_cap=NCCL_QUOTED["ll_max_bw_hopper_one_node"],
                             nccl_nvlink_latencies=True),
    "one_gpu_per_node": Machine("one_gpu_per_node", "16 nodes x 1 GPU, 400 Gb/s network", 16, 16,
                                50e9, 5.0e-6, False, True, ll_cap=NCCL_QUOTED["ll_max_bw_intel_many_nodes"]),
    "pcie_node": Machine("pcie_node", "8 GPUs on PCIe 4 x16", 8, 1, 25e9, 1.0e-6, False, False),
}


@dataclass(frozen=True)
class Choice:
    """One (algorithm, protocol) entry: its latency, algorithm bandwidth and predicted time for M bytes."""

    algorithm: str
    protocol: str
    latency: float
    algbw: float
    nbytes: float

    @property
    def time(self) -> float:
        """Predicted seconds: latency + M / algorithm bandwidth."""
        return self.latency + self.nbytes / self.algbw


def machine(key: str) -> Machine:
    """The :class:`Machine` preset ``key`` (ValueError listing the choices)."""
    if key not in MACHINES:
        raise ValueError(f"machine must be one of {', '.join(MACHINES)}, got {key!r}")
    return MACHINES[key]


def bus_bandwidth(collective: str, algorithm: str, protocol: str, mach: Machine) -> float:
    r"""NCCL 2.30.7's bus bandwidth of one entry, bytes/s: B times the algorithm's and protocol's factors.

    Ring: the protocol's factor (:data:`PROTOCOLS`). Tree: 0.92, and over LL a further
    1/3.8, over LL128 7/9 in one node or 120/128 across nodes. LL on either: at most the
    machine's ``ll_cap``. PAT: 0.75. NVLS inside a
    node of p GPUs: its graph gets :math:`B\,p/(p+1)`, since NCCL's search
    (``ncclTopoSearchTryNvls`` in src/graph/search.cc) gives it one channel a GPU and
    charges each GPU's links twice for the channel it heads, :math:`(p+1)/p` of the
    graph's bandwidth in all; NCCL then takes 0.85 of that (its efficiency on Hopper; the machine's
    ``nvls_efficiency``) times
    :math:`(c-1)/c` for its c = p channels, doubled for all-reduce ("pipelines two
    operations") and times :math:`(p-1)/p` for all-gather and reduce-scatter.

    >>> m = machine("nvswitch_node")
    >>> [round(bus_bandwidth(c, "nvls", "Simple", m) / 1e9, 1) for c in ("all_reduce", "all_gather")]
    [489.2, 214.0]
    """
    q, b = NCCL_QUOTED, mach.bandwidth
    if algorithm == "ring":
        bus = b * PROTOCOLS[protocol][0]
        return min(bus, mach.ll_cap) if protocol == "LL" else bus
    if algorithm == "tree":
        ll128 = q["tree_ll128_factor_one_node"] if mach.nodes == 1 else q["tree_ll128_factor_nodes"]
        bus = b * q["tree_factor"] * {"LL": q["tree_ll_factor"], "LL128": ll128, "Simple": 1.0}[protocol]
        return min(bus, mach.ll_cap) if protocol == "LL" else bus
    if algorithm == "pat":
        return b * q["pat_factor"]
    p = mach.per_node
    graph = b * p / (p + 1)
    bus = graph * mach.nvls_efficiency * (p - 1) / p
    return bus * 2 if collective == "all_reduce" else bus * (p - 1) / p


def algorithm_bandwidth(collective: str, algorithm: str, bus: float, n: int) -> float:
    r"""NCCL 2.30.7's conversion of a bus bandwidth to the algorithm bandwidth, bytes/s.

    A ring's, and NVLS all-reduce's, times :math:`n` over the ring's steps
    (:math:`n/(2(n-1))` for all-reduce, :math:`n/(n-1)` for all-gather and
    reduce-scatter); a tree's halved; for all-gather and reduce-scatter by any
    algorithm but the ring, none (``if (!(a != NCCL_ALGO_RING && (coll ==
    ncclFuncAllGather || coll == ncclFuncReduceScatter)))``).

    >>> algorithm_bandwidth("all_gather", "ring", 7.0, 8), algorithm_bandwidth("all_gather", "pat", 7.0, 8)
    (8.0, 7.0)
    """
    if algorithm != "ring" and collective != "all_reduce":
        return bus
    if algorithm in ("ring", "nvls"):
        steps = 2 * (n - 1) if collective == "all_reduce" else n - 1
        return bus * n / steps
    return bus * NCCL_QUOTED["tree_ratio"]


def _hops(collective: str, algorithm: str, mach: Machine) -> float:
    n = mach.ranks
    if algorithm == "ring":
        return 2 * (n - 1) if collective == "all_reduce" else n - 1
    if algorithm == "tree":
        # a chain inside each node, a binary tree across nodes; up, then down
        return 2 * (n // mach.nodes - 1 + math.ceil(math.log2(mach.nodes)))
    if algorithm == "pat":
        return math.ceil(math.log2(n))              # log-step schedule
    return 2.0                                       # nvls: up to the switch, down again


def predict(collective: str, algorithm: str, protocol: str, nbytes: float, mach: Machine) -> Choice | None:
    """The entry for one (algorithm, protocol), or None where the machine or NCCL's rules exclude it.

    Rules kept from NCCL 2.30.7: NVLS and PAT run Simple only; NVLS needs an
    NVSwitch that takes part; PAT needs one GPU per node and serves all-gather
    and reduce-scatter; tree serves all-reduce only; LL128 runs only where the
    machine's ``ll128`` says NCCL enables it. Bandwidth: NCCL's factors and
    conversion (:func:`bus_bandwidth`, :func:`algorithm_bandwidth`). Latency:
    NVLS's is NCCL's 25 us; PAT's adds NCCL's 2.8 us a rank to its log2(n) hops.
    """
    if collective not in COLLECTIVES:
        raise ValueError(f"collective must be one of {', '.join(COLLECTIVES)}, got {collective!r}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    nbytes = check_nonnegative("nbytes", nbytes)
    # The idea: NCCL's rules exclude some pairs; the rest get a latency and an algorithm bandwidth.
    if collective not in ALGORITHMS[algorithm]:
        return None
    if algorithm in ("nvls", "pat") and protocol != "Simple":
        return None
    if algorithm == "nvls" and not mach.in_switch:
        return None
    if algorithm == "pat" and not mach.one_gpu_per_node:
        return None
    if protocol == "LL128" and not mach.ll128:
        return None
    n = mach.ranks
    algbw = algorithm_bandwidth(collective, algorithm, bus_bandwidth(collective, algorithm, protocol, mach), n)
    if algorithm == "nvls":
        latency = NVLS_LATENCY + mach.hop_latency
    else:
        base, hop = mach.latencies(algorithm, protocol)
        latency = base + _hops(collective, algorithm, mach) * (hop + mach.hop_latency)
        if algorithm == "pat":
            latency += n * NCCL_QUOTED["pat_latency_per_rank"]   # "still a linear part"
    return Choice(algorithm, protocol, latency, algbw, nbytes)


def candidates(collective: str, nbytes: float, mach: Machine | str) -> list[Choice]:
    """Every allowed (algorithm, protocol) entry for M = ``nbytes``, fastest first."""
    mach = machine(mach) if isinstance(mach, str) else mach
    out = [c for a in ALGORITHMS for p in PROTOCOLS
           if (c := predict(collective, a, p, nbytes, mach)) is not None]
    return sorted(out, key=lambda c: (c.time, c.algorithm, c.protocol))


def choose(collective: str, nbytes: float, mach: Machine | str) -> Choice:
    """The entry with the smallest predicted time, as NCCL's tuner takes it."""
    return candidates(collective, nbytes, mach)[0]


def winners(collective: str, sizes, mach: Machine | str) -> list[tuple[float, str, str]]:
    """``(nbytes, algorithm, protocol)`` of the winner at each size."""
    return [(float(s), (c := choose(collective, s, mach)).algorithm, c.protocol) for s in sizes]




@dataclass(frozen=True)
class Crossover:
    """A message size where the chooser's pick changes, bracketed: ``low`` still takes ``below``, ``high`` takes ``above``.

    ``below`` and ``above`` are ``(algorithm, protocol)`` pairs; the change lies
    between ``low`` and ``high`` bytes, and nowhere more precisely than that.
    """

    below: tuple[str, str]
    above: tuple[str, str]
    low: float
    high: float

    @property
    def size(self) -> float:
        """The bracket's geometric middle, bytes (within a factor ``sqrt(high / low)`` of the change)."""
        return math.sqrt(self.low * self.high)


def crossovers(collective: str, mach: Machine | str, smallest: float = 64.0, largest: float = 2.0**31,
               per_octave: int = 16, rtol: float = 1e-3) -> list[Crossover]:
    """Every size in [smallest, largest] bytes where :func:`choose`'s pick changes, each bracketed to ``rtol``.

    A scan of ``per_octave`` sizes per factor of two finds where the pick
    changes; a bisection (on the logarithm of the size) then shrinks each
    bracket until ``high / low - 1 <= rtol``. Each entry's time is linear
    in M, so each pair appears at most once along the sizes, and the scan
    misses none whose stretch of sizes is wider than a sixteenth of an
    octave.

    >>> [(x.below, x.above) for x in crossovers("all_reduce", "nvswitch_node")]
    [(('ring', 'LL'), ('nvls', 'Simple'))]
    """
    mach = machine(mach) if isinstance(mach, str) else mach
    smallest, largest = check_nonnegative("smallest", smallest), check_nonnegative("largest", largest)
    if not 0 < smallest < largest:
        raise ValueError(f"smallest must be > 0 and below largest ({largest:g}), got {smallest:g}")
    if isinstance(per_octave, bool) or not isinstance(per_octave, int) or per_octave < 1:
        raise ValueError(f"per_octave must be an integer >= 1, got {per_octave!r}")
    if not 0 < rtol < 1:
        raise ValueError(f"rtol must lie in (0, 1), got {rtol!r}")

    def pick(nbytes: float) -> tuple[str, str]:
        c = choose(collective, nbytes, mach)
        return c.algorithm, c.protocol

    steps = math.ceil(per_octave * math.log2(largest / smallest))
    sizes = [smallest * (largest / smallest) ** (i / steps) for i in range(steps + 1)]
    out = []
    for lo, hi in zip(sizes, sizes[1:]):
        below, above = pick(lo), pick(hi)
        if below == above:
            continue
        while hi / lo - 1 > rtol:
            mid = math.sqrt(lo * hi)
            if pick(mid) == below:
                lo = mid
            else:
                hi = mid
        out.append(Crossover(below, pick(hi), lo, hi))
    return out


#: NCCL 2.30.7's correction of the tree's all-reduce bandwidth over Simple, one factor a power of two of the size in
#: 64-byte units from 64 B (``treeCorrectionFactor``, ``src/graph/tuning.cc``; applied below 2**23 units, 512 MiB),
#: and its "plateau effect of ring": a ring/Simple all-reduce across nodes has its latency multiplied by 1.4 on compute
#: capability 8.0 and later (``ncclTopoGetAlgoTime``). The chooser leaves both out.
NCCL_TREE_CORRECTION_SIMPLE = (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8,
                               .9, .9, .9)
NCCL_RING_PLATEAU = 1.4


def tree_ring_crossover_corrected(mach: Machine | str = "one_gpu_per_node", tree_factors: bool = True,
                                  ring_plateau: bool = True, smallest: float = 64.0, largest: float = 2.0**31,
                                  per_octave: int = 64) -> float:
    """The size (bytes) from which ring/Simple beats tree/Simple for an all-reduce at every larger size, with NCCL's
    tree correction factors (:data:`NCCL_TREE_CORRECTION_SIMPLE`) and its ring plateau (:data:`NCCL_RING_PLATEAU`,
    only across nodes) on top of the chooser's entries, each switchable: the two pull opposite ways.

    A scan of ``per_octave`` sizes per factor of two (the factors change at powers of two, so the scan lands on
    them), good to ``2 ** (1 / per_octave)``.

    >>> base = tree_ring_crossover_corrected(tree_factors=False, ring_plateau=False)
    >>> ring = tree_ring_crossover_corrected(tree_factors=False)
    >>> tree = tree_ring_crossover_corrected(ring_plateau=False)
    >>> both = tree_ring_crossover_corrected()
    >>> tree < both < base < ring
    True
    """
    mach = machine(mach) if isinstance(mach, str) else mach

    def time(algorithm: str, nbytes: float) -> float:
        c = predict("all_reduce", algorithm, "Simple", nbytes, mach)
        if c is None:
            raise ValueError(f"{mach.key} runs no {algorithm}/Simple all-reduce")
        latency, algbw = c.latency, c.algbw
        units = (int(nbytes) // 64).bit_length() - 1          # NCCL's log2i(nBytes >> 6)
        if algorithm == "tree" and tree_factors and 0 <= units < 23:
            algbw *= NCCL_TREE_CORRECTION_SIMPLE[units]
        if algorithm == "ring" and ring_plateau and mach.nodes > 1:
            latency *= NCCL_RING_PLATEAU
        return latency + nbytes / algbw

    steps = math.ceil(per_octave * math.log2(largest / smallest))
    sizes = [smallest * 2 ** (i / per_octave) for i in range(steps + 1)]
    ring_wins = [time("ring", x) < time("tree", x) for x in sizes]
    if not ring_wins[-1]:
        raise ValueError(f"the ring does not win at {largest:g} bytes")
    i = len(sizes) - 1
    while i > 0 and ring_wins[i - 1]:
        i -= 1
    return sizes[i]
