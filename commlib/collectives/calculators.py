"""What the calculators of chapters 1 and 2 compute: one collective, an all-reduce on a cluster, algbw and busbw.

Each ``*_results`` function takes the controls' values and returns label -> text with units;
numpy-free, so the page runs it too. Sizes, rates and times are written to four significant
digits, trailing zeros dropped, so that a link's rate reads as its arithmetic gives it
(25 Gb/s = 3.125 GB/s). Each ``*_choices`` function gives the options a dropdown offers for the
other controls' values: only what can run.
"""

from __future__ import annotations

import math

from .. import hardware
from ..step.calculators import NOTHING_TO_SEND, check_domain, check_switched
from ..units import SIZE_WORDS, Entry, check_count, format_percent, format_rate, format_size, format_time, rate_entry, size_entry
from . import algorithms, cost
from .cluster import NIC_CHOICES, check_hosts, cluster_allreduce
from .cost import BANDWIDTH_DIRECTIONS, algbw_to_busbw, bus_factor, busbw_to_algbw

__all__ = ["bandwidth_conversion_results", "cluster_results", "cluster_choices", "PRIMITIVE_ALGORITHMS",
           "PRIMITIVE_OPS", "primitive_results", "primitive_choices", "RATE_ENTRY", "BUFFER_ENTRY", "COMPUTE_ENTRY",
           "TARGET_ENTRY", "SIGNIFICANT", "cards_unused",
           "INSIDE_UNUSED", "least_bytes", "NOTHING_TO_SEND", "BUFFER_MEANINGS", "BLOCK_COLLECTIVES", "buffer_meaning",
           "check_whole_blocks", "pipelined_master", "pipelined_chain", "BEST_FORMS", "PRIMITIVE_LINKS",
           "POWER_OF_TWO_FORMS", "check_switched", "check_inside", "check_between", "NETWORK"]

#: The free entries of these calculators: what each control is called and its physical range.
RATE_ENTRY = rate_entry("bandwidth")
BUFFER_ENTRY = size_entry("buffer M")
COMPUTE_ENTRY = Entry("compute (ms/step)", "ms", 0.001, 1_000_000)
TARGET_ENTRY = Entry("efficiency goal (%)", "%", 1, 99.9)

#: Significant digits of every size, rate and time these calculators write.
SIGNIFICANT = 4


def _size(nbytes: float, significant: int | None = SIGNIFICANT) -> str:
    """A size in decimal and binary units, once where the two read alike (3 B); ``significant`` None: the
    default digits of :func:`commlib.units.format_size`.

    >>> _size(64 * 2**20), _size(3)
    ('67.11 MB = 64 MiB', '3 B')
    """
    digits = {} if significant is None else {"significant": significant}
    decimal, binary = format_size(nbytes, **digits), format_size(nbytes, binary=True, **digits)
    return decimal if decimal == binary else f"{decimal} = {binary}"


def _rate(rate: float, both: bool = True) -> str:
    text = format_rate(rate, significant=SIGNIFICANT)
    return f"{text} = {format_rate(rate, bits=True, significant=SIGNIFICANT)}" if both else text


def _time(seconds: float) -> str:
    return format_time(seconds, significant=SIGNIFICANT)


def bandwidth_conversion_results(value: str, direction: str = "algbw -> busbw", op: str = "all_reduce",
                                 n: int = 8) -> dict[str, str]:
    """The converter of the ring chapter: a rate with its unit, one way or the other (nccl-tests' convention).

    >>> bandwidth_conversion_results("10 GB/s", "algbw -> busbw", "all_reduce", 8)["bus bandwidth"]
    '17.5 GB/s = 140 Gb/s'
    >>> bandwidth_conversion_results("10 GB/s", "algbw -> busbw", "all_reduce", 1)["bus bandwidth"]
    'none: with one rank there is nothing to send'
    """
    rate = RATE_ENTRY.read(value)
    if direction not in BANDWIDTH_DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(map(repr, BANDWIDTH_DIRECTIONS))}; got {direction!r}")
    factor = bus_factor(op, n)
    if factor == 0:
        given, other = (("algorithm bandwidth", "bus bandwidth") if direction == "algbw -> busbw"
                        else ("bus bandwidth", "algorithm bandwidth"))
        return {"factor busbw / algbw": "0", given: _rate(rate), other: NOTHING_TO_SEND.format("rank")}
    if direction == "algbw -> busbw":
        algbw, busbw = rate, algbw_to_busbw(rate, n, op)
    else:
        algbw, busbw = busbw_to_algbw(rate, n, op), rate
    return {
        "factor busbw / algbw": f"{factor:.4f}",
        "algorithm bandwidth": _rate(algbw),
        "bus bandwidth": _rate(busbw),
    }


def cluster_choices(n: int = 16, hosts: int = 2, nics_per_host: int = 0, **values) -> dict[str, tuple]:
    """What the cluster calculator offers for ``n`` GPUs on ``hosts`` hosts: algorithms that run, cards a host can
    hold, a bus that joins GPUs through a switch inside a host (:func:`check_inside`) and a network between hosts
    (:func:`check_between`); a host of more GPUs than its link inside joins is left to the calculator's
    message, which names the hosts to choose.

    An algorithm is offered where its record accepts ``n`` (the torus both ways wants a square
    n >= 9) and is timed on these hosts with these cards (:func:`commlib.collectives.cluster.check_hosts`);
    network cards per host up to the host's GPUs g (0 is one per GPU), or the one card an algorithm that
    drives no more crosses (:func:`cards_unused`: the results say why); on hosts of one GPU each, only the
    link inside that is chosen, which no message crosses (the results say so). Where ``hosts`` does not
    divide ``n`` everything is offered, and the calculator says what is wrong with the hosts.

    >>> cluster_choices(16, 2)["algorithm"]
    ('ring', 'multi_rail_ring', 'hierarchical')
    >>> "torus_both_ways" in cluster_choices(8, 1)["algorithm"], "torus_both_ways" in cluster_choices(9, 9)["algorithm"]
    (False, True)
    >>> cluster_choices(8, 4, algorithm="hierarchical")["nics_per_host"], cluster_choices(8, 4, algorithm="ring")["nics_per_host"]
    ((0, 1, 2), (1,))
    >>> cluster_choices(8, 8, intra_link="nvlink4")["intra_link"]
    ('nvlink4',)
    """
    every = tuple(algorithms.ALLREDUCE)
    cards = tuple(v for _, v in NIC_CHOICES)
    inside = tuple(key for key in hardware.LINKS if _offered(check_inside, key))
    between = tuple(key for key in hardware.LINKS if _offered(check_between, key))
    try:
        n, hosts = check_count("n", n), check_count("hosts", hosts, maximum=n)
    except ValueError:
        return {"algorithm": every, "nics_per_host": cards, "intra_link": inside, "inter_link": between}
    if n % hosts:
        return {"algorithm": every, "nics_per_host": cards, "intra_link": inside, "inter_link": between}
    g = n // hosts
    offered = []
    for name, record in algorithms.ALLREDUCE.items():
        try:
            record.checked(n, **({"hosts": hosts} if "hosts" in record.params else {}))
            check_hosts(record, n, hosts, nics_per_host or None)
        except ValueError:
            continue
        offered.append(name)
    algorithm = values.get("algorithm", "ring")
    if algorithm in algorithms.ALLREDUCE and cards_unused(algorithm, n, hosts):   # one value, and results say why
        cards = (1,)
    if g == 1:                  # one GPU a host: no link inside; the one value it has, and the results say why
        current = values.get("intra_link")
        inside = (current,) if current in hardware.LINKS else inside[:1]
    return {"algorithm": tuple(offered), "nics_per_host": tuple(v for v in cards if v <= g),
            "intra_link": inside, "inter_link": between}


#: The cluster calculator's row for the link inside a host on hosts of one GPU each.
INSIDE_UNUSED = "not used: one GPU per host, every message crosses the link between hosts"


def cards_unused(algorithm: str, n: int, hosts: int) -> str:
    """Why the cluster calculator's network cards c change nothing for ``algorithm`` on these hosts ("" when they count).

    Only an all-reduce that takes the hosts itself (the multi-rail ring: a ring per card; the hierarchical
    all-reduce: a host's shards over its cards) drives several cards of a host, and only between hosts of
    several GPUs; a flat ring across hosts crosses one card per host whatever a host holds.

    >>> cards_unused("ring", 16, 2)
    'the ring crosses one card per host, however many a host holds; c counts for the multi-rail ring and the hierarchical all-reduce'
    >>> cards_unused("hierarchical", 16, 2), cards_unused("hierarchical", 16, 1)[:40]
    ('', 'one host: no network between hosts, no c')
    """
    record = algorithms.allreduce_algorithm(algorithm)
    if hosts == 1:
        return "one host: no network between hosts, no card to count"
    if n == hosts:
        return "one GPU per host: each host sends through one card"
    if "hosts" in record.params:
        return ""
    return (f"the {record.label} crosses one card per host, however many a host holds; c counts for the "
            "multi-rail ring and the hierarchical all-reduce")


def _offered(check, link: str) -> bool:
    """Whether ``check(link)`` passes."""
    try:
        check(link)
    except ValueError:
        return False
    return True


def check_inside(link: str) -> hardware.Link:
    """The link's record if it can join the GPUs of one host, else ValueError naming the control (intra_link).

    The cluster calculator gives every GPU of a host the link inside at its full rate to any other GPU of
    the host: a bus (PCIe, NVLink) behind a switch. NVLink 1.0's cube mesh wires fixed peers, UPI joins CPU
    sockets (:func:`commlib.step.calculators.check_switched`, :func:`~commlib.step.calculators.check_domain`),
    and a network card is the link between hosts. A rack whose NVLink domain spans several trays (GB200 NVL72)
    is one host here, of up to its domain's GPUs.

    >>> check_inside("nvlink4").name
    'NVLink 4.0 (H100, 18 links)'
    >>> check_inside("upi")     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: intra_link: Intel UPI ... joins CPU sockets, not GPUs; ...
    """
    item = hardware.link(link)
    if item.kind != "bus":
        raise ValueError(f"intra_link: {item.name} is a network card, the link between hosts; inside a host choose a "
                         "PCIe or NVLink link")
    try:
        check_domain(link, 1)
        return check_switched(link)
    except ValueError as err:
        text = str(err)
        raise ValueError("intra_link" + text[len("link"):] if text.startswith("link:") else text) from None


def check_between(link: str) -> hardware.Link:
    """The link's record if it is a network between hosts (Ethernet, InfiniBand), else ValueError (inter_link).

    >>> check_between("ib_ndr").name
    'InfiniBand NDR 4x'
    >>> check_between("pcie4_x16")     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: inter_link: PCIe 4.0 x16 is a bus inside one host, not a network between hosts; ...
    """
    item = hardware.link(link)
    if item.kind != "network":
        raise ValueError(f"inter_link: {item.name} is a bus inside one host, not a network between hosts; choose an "
                         "Ethernet or InfiniBand link (an NVLink domain over several trays, as in a GB200 NVL72, is "
                         "one host here)")
    return item


def cluster_cards(algorithm: str, n: int, hosts: int, nics_per_host: int = 0) -> int:
    """The network cards of a host the all-reduce drives at once: a host's card count is what it shares.

    An algorithm that takes ``hosts`` itself (the hierarchical all-reduce, the multi-rail ring) uses
    all c cards of a host (``nics_per_host``; 0: one per GPU), at most g; one whose every step sends
    ``flows_per_host`` flows out of a host (the ring: one) uses that many; with one GPU a host, one.

    >>> cluster_cards("ring", 16, 2, 8), cluster_cards("multi_rail_ring", 16, 2, 0), cluster_cards("hierarchical", 16, 2, 4)
    (1, 8, 4)
    """
    record = algorithms.allreduce_algorithm(algorithm)
    g = n // hosts
    if g == 1:
        return 1
    if "hosts" in record.params:
        return min(nics_per_host or g, g)
    return record.flows_per_host or 1


def _goal(target: float) -> str:
    """The efficiency goal as the reader typed it, with no rounding that would change it.

    >>> _goal(0.9), _goal(0.999), _goal(0.925)
    ('90 %', '99.9 %', '92.5 %')
    """
    return f"{100 * target:.6g} %"


def cluster_results(model: str = "resnet50", dtype: str = "fp16", n: int = 16, hosts: int = 2,
                    intra_link: str = "nvlink2", inter_link: str = "eth_25g", algorithm: str = "ring",
                    t_compute_ms: float = 100.0, target_percent: float = 90.0,
                    nics_per_host: int = 0) -> dict[str, str]:
    """The "your cluster" calculator: one gradient all-reduce, as text with units.

    ``nics_per_host`` is c, the network cards of ``inter_link`` per host, or 0
    for one card per GPU; the hierarchical all-reduce shares them among a
    host's shards, and the multi-rail ring runs one ring per card. Raises
    ValueError naming the parameter and its range.

    >>> r = cluster_results("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "multi_rail_ring", 100.0, 90.0, 0)
    >>> r["time of one all-reduce"]
    '4.134 ms'
    """
    nics = check_count("nics_per_host", nics_per_host, minimum=0)
    n_checked, hosts_checked = check_count("n", n), check_count("hosts", hosts)
    if hosts_checked <= n_checked and n_checked % hosts_checked == 0 and n_checked > hosts_checked:
        check_inside(intra_link)                 # several GPUs a host share the link inside
    if hosts_checked > 1:
        check_between(inter_link)
    target = TARGET_ENTRY.check(target_percent) / 100.0
    t_compute = COMPUTE_ENTRY.check(t_compute_ms) / 1e3
    r = cluster_allreduce(model, dtype, n, hosts, intra_link, inter_link, algorithm,
                          t_compute, target, nics_per_host=nics or None)
    if r.n == 1:
        return {"gradient size": _size(r.nbytes), "time of one all-reduce": NOTHING_TO_SEND.format("GPU")}
    need = r.required_bandwidth
    allowed = _time(r.allowed_seconds)
    which = "inter-host" if r.searched == "inter" else "intra-host"
    if r.out_of_reach_because == "latency":
        need_text = (f"out of reach: the latency terms alone take {_time(r.latency_seconds)}, more than the "
                     f"{allowed} allowed")
    elif r.out_of_reach_because == "fixed link":
        fixed, where, other = ((intra_link, "inside a host", "between hosts") if r.searched == "inter"
                               else (inter_link, "between hosts", "inside a host"))
        need_text = (f"out of reach: with the {hardware.link(fixed).name} {where}, the all-reduce takes "
                     f"{_time(r.floor_seconds)} however fast the link {other}, more than the {allowed} allowed")
    else:
        need_text = _rate(need)
    need_rows = {f"{which} bandwidth for {_goal(target)}": need_text}
    if r.searched == "inter":
        cards = cluster_cards(algorithm, n, hosts, nics)
        need_rows = {f"{which} bandwidth for {_goal(target)}, per network card (c = {cards})": need_text}
        if math.isfinite(need) and cards > 1:
            need_rows[f"the same on all {cards} cards of a host"] = _rate(cards * need)
    unused = cards_unused(algorithm, n, hosts)
    return {
        "gradient size": _size(r.nbytes),
        "GPUs per host g": f"{n // hosts}",
        **({"link inside a host": INSIDE_UNUSED} if n == hosts else {}),
        **({"network cards c": f"not used: {unused}"} if unused else {}),
        "time of one all-reduce": _time(r.seconds),
        "algorithm bandwidth (algbw)": _rate(r.algbw, both=False),
        "bus bandwidth (busbw)": _rate(r.busbw, both=False),
        "busbw its links allow (no start-ups)": _rate(r.bottleneck, both=False),
        "busbw / busbw its links allow": format_percent(r.bus_efficiency, 1),
        "parallel efficiency Tc/(Tc+Tm)": format_percent(r.parallel_efficiency, 1),
        **need_rows,
    }


#: The primitive calculator's algorithms per collective: all of each collective's, and for the all-reduce
#: the flat ones (one uniform network, one port per rank, no parameter); the pipelined, two-level and
#: multi-link all-reduces need the settings of chapter 2's cluster calculator.
PRIMITIVE_ALGORITHMS: dict[str, tuple[str, ...]] = {
    op: (cost.ALLREDUCE_ALGORITHMS if op == "all_reduce" else names) for op, names in cost.COLLECTIVE_ALGORITHMS.items()}

#: The primitive calculator's names of the collectives (as a reader writes them) -> registry keys.
PRIMITIVE_OPS = {"broadcast": "broadcast", "reduce": "reduce", "gather": "gather", "scatter": "scatter",
                 "all-gather": "all_gather", "reduce-scatter": "reduce_scatter", "all-to-all": "all_to_all",
                 "all-reduce": "all_reduce"}


#: What M is in each collective (nccl-tests' size, the book's M): one line of the primitive calculator;
#: ``{block}`` is M/n where M is n blocks.
BUFFER_MEANINGS = {
    "broadcast": "the message the root sends to every rank",
    "reduce": "the vector each rank contributes; the root gets the sum",
    "all_reduce": "the vector each rank contributes; every rank gets the sum",
    "gather": "the whole gathered array: n blocks of M/n = {block}, each rank's block (MPI's sendcount)",
    "scatter": "the root's whole array: n blocks of M/n = {block}, one to each rank (MPI's recvcount)",
    "all_gather": "the whole gathered array: n blocks of M/n = {block}, each rank's block (MPI's sendcount)",
    "reduce_scatter": "the vector each rank contributes; each rank keeps one block of the sum, M/n = {block}",
    "all_to_all": "each rank's send buffer: n blocks of M/n = {block}, one to each rank (MPI's sendcount)",
}

#: The collectives whose M is n blocks of M/n, one per rank.
BLOCK_COLLECTIVES = tuple(op for op, text in BUFFER_MEANINGS.items() if "{block}" in text)


def buffer_meaning(op: str, nbytes: float, n: int) -> str:
    """What the buffer M of collective ``op`` is, with the block each rank sends or keeps where M is n blocks.

    >>> buffer_meaning("all_gather", 64 * 2**20, 8)
    "the whole gathered array: n blocks of M/n = 8.39 MB = 8.00 MiB, each rank's block (MPI's sendcount)"
    """
    block = nbytes / n
    return BUFFER_MEANINGS[op].format(block=_size(block, significant=None))


def least_bytes(op: str, n: int, algorithm: str | None = None) -> int:
    """The smallest buffer M the primitive calculator takes for ``op`` on ``n`` ranks: n bytes where M is cut into
    n blocks or pieces (one byte for each), else 0 (see :func:`check_whole_blocks`).

    >>> least_bytes("all_gather", 8), least_bytes("broadcast", 8, "tree"), least_bytes("all_gather", 1)
    (8, 0, 0)
    """
    if n < 2:
        return 0
    return n if op in BLOCK_COLLECTIVES or cost.collective_terms(op, 1.0, n, algorithm).bytes % 1 else 0


def check_whole_blocks(op: str, nbytes: float, n: int, algorithm: str | None = None) -> None:
    """ValueError naming the buffer control when M is no whole number of bytes, or its n blocks are not.

    M is n blocks of M/n where the collective is defined on blocks (gather, scatter, all-gather,
    reduce-scatter, all-to-all: MPI's sendcount is one block), so M must be a multiple of n bytes there;
    where only the algorithm cuts M into pieces (the ring's 2(n - 1)/n bytes per byte of M), the pieces may
    differ by a byte, but each rank needs one, so M must be at least n bytes.

    >>> check_whole_blocks("all_gather", 10.5, 2)
    Traceback (most recent call last):
    ...
    ValueError: buffer M must be a whole number of bytes; got 10.50 B
    >>> check_whole_blocks("all_gather", 10, 4)
    Traceback (most recent call last):
    ...
    ValueError: buffer M must be a multiple of n bytes (4 B on 4 ranks), n blocks of M/n; got 10.00 B: blocks of 2.5 B
    """
    if abs(nbytes - round(nbytes)) > 1e-9 * max(1.0, nbytes):
        raise ValueError(f"{BUFFER_ENTRY.label} must be a whole number of bytes; got {format_size(nbytes)}")
    if nbytes < least_bytes(op, n, algorithm):
        raise ValueError(f"{BUFFER_ENTRY.label} must be at least n bytes ({n} B on {n} ranks), one byte for each "
                         f"rank's block of M/n; got {format_size(nbytes)}")
    block = nbytes / n
    if op in BLOCK_COLLECTIVES and abs(block - round(block)) > 1e-9 * max(1.0, block):
        raise ValueError(f"{BUFFER_ENTRY.label} must be a multiple of n bytes ({n} B on {n} ranks), n blocks of M/n; "
                         f"got {format_size(nbytes)}: blocks of {block:.4g} B")


def pipelined_master(nbytes: float, n: int, link: str) -> str:
    """The master's best form beside the unpipelined one: pipelined at its best chunk count, as text.

    Where one chunk is best (short messages: the start-ups of more chunks cost more than the halved
    bytes save) there is no pipeline, and the text says so.

    >>> pipelined_master(64 * 2**20, 8, "eth_25g")
    'q = 46 chunks: 156.9 ms (the master sends chunk j back while taking in chunk j + 1)'
    >>> pipelined_master(1024, 8, "eth_25g")
    'q = 1: not worth pipelining (one chunk is fastest at this size)'
    """
    from .algorithms import naive

    item = hardware.link(link)
    q = naive.best_chunks(nbytes, n, item.bandwidth, item.latency)
    if q == 1:
        return "q = 1: not worth pipelining (one chunk is fastest at this size)"
    seconds = naive.PIPELINED.cost(nbytes, n, chunks=q).time(item.bandwidth, item.latency)
    return f"q = {q} chunks: {_time(seconds)} (the master sends chunk j back while taking in chunk j + 1)"


def pipelined_chain(nbytes: float, n: int, link: str) -> str:
    """Chapter 1's fastest reduce of long vectors beside the two the calculator offers: the chain pipelined at its
    best chunk count (:func:`commlib.collectives.algorithms.chain.best_chunks`), as text.

    Where one chunk is best (short messages) the chain is the unpipelined serial chain, n - 1 whole vectors one
    after another, and the text says so.

    >>> pipelined_chain(64 * 2**20, 8, "eth_25g")
    'q = 114 chunks: 23.81 ms (each rank passes chunk j on while it takes in chunk j + 1)'
    >>> pipelined_chain(1024, 8, "eth_25g")
    'q = 1: 72.29 µs (not worth pipelining: the serial chain, n - 1 whole vectors one after another)'
    """
    from .algorithms import chain

    item = hardware.link(link)
    q = chain.best_chunks(nbytes, n, item.bandwidth, item.latency)
    seconds = chain.PIPELINED.cost(nbytes, n, chunks=q).time(item.bandwidth, item.latency)
    if q == 1:
        return f"q = 1: {_time(seconds)} (not worth pipelining: the serial chain, n - 1 whole vectors one after another)"
    return f"q = {q} chunks: {_time(seconds)} (each rank passes chunk j on while it takes in chunk j + 1)"


#: Best forms the calculator shows beside a collective's algorithm: (collective, algorithm) -> (result label,
#: function of M, n and link). The master's pipelined form beside the naive all-reduce; beside either reduce,
#: the chain pipelined at its best, a reduce the menu does not offer.
BEST_FORMS = {("all_reduce", "naive"): ("same, pipelined at its best", pipelined_master),
              **{("reduce", name): ("chain reduce, pipelined at its best (not in the menu)", pipelined_chain)
                 for name in PRIMITIVE_ALGORITHMS["reduce"]}}


#: The links the primitive calculator offers: those behind a switch (:attr:`commlib.hardware.Link.switched`).
#: It gives every rank the link's full rate to any peer; where GPUs are wired directly to fixed peers
#: (NVLink 1.0's cube mesh) or a link joins two sockets (UPI), a rank's rate is split over a few
#: neighbours, and a pairwise exchange or a tree to any peer would be timed several times too fast.
PRIMITIVE_LINKS: tuple[str, ...] = tuple(key for key, item in hardware.LINKS.items() if item.switched)


#: What the primitive calculator assumes of the network, one of its results.
NETWORK = "every rank's own full-duplex link into a switch that never blocks, one message at a time"


def _power_of_two_forms() -> str:
    """The calculator's forms whose record refuses an n that is not a power of two (6), in words."""
    forms = []
    for op, names in PRIMITIVE_ALGORITHMS.items():
        for name in names:
            try:
                algorithms.algorithm(op, name).checked(6)
            except ValueError:
                forms.append(f"the {op.replace('_', '-')}'s {algorithms.algorithm(op, name).label}")
    return ", ".join(forms[:-1]) + " and " + forms[-1] if len(forms) > 1 else "".join(forms)


#: In words, the forms costed for n a power of two only (their records refuse other n), from the records:
#: the all-reduce's recursive doubling and halving-doubling fold the extra ranks in and out at any n.
POWER_OF_TWO_FORMS = _power_of_two_forms()


def _runs_on(op: str, name: str, n: int) -> bool:
    """Whether the record of ``name`` costs ``op`` on ``n`` ranks (some forms take only powers of two)."""
    try:
        algorithms.algorithm(op, name).checked(n)
    except ValueError:
        return False
    return True


def primitive_choices(primitive: str = "all-gather", algorithm: str = "ring", n: int = 8,
                      **_) -> dict[str, tuple[str, ...]]:
    """The algorithms the primitive calculator offers for ``primitive`` on ``n`` ranks: that collective's own
    that its records cost on ``n`` (forms for powers of two only are left out at other ``n``).

    >>> primitive_choices("broadcast")["algorithm"][:2]
    ('tree', 'scatter_allgather')
    >>> "recursive_doubling" in primitive_choices("all-gather", n=6)["algorithm"]
    False
    """
    op = PRIMITIVE_OPS.get(primitive, primitive)
    try:
        n = int(n)
    except (TypeError, ValueError):
        return {"algorithm": PRIMITIVE_ALGORITHMS[op]}
    offered = tuple(name for name in PRIMITIVE_ALGORITHMS[op] if n < 2 or _runs_on(op, name, n))
    return {"algorithm": offered or PRIMITIVE_ALGORITHMS[op]}


def _buffer_range(message: str, op: str, n, algorithm: str) -> str:
    """A buffer box's range message with the least buffer that ``op`` on ``n`` ranks takes in place of 0 B."""
    try:
        least = least_bytes(op, check_count("n", n), algorithm)
    except ValueError:           # n itself is wrong: its own message comes once the buffer is right
        return message
    if not least:
        return message
    return message.replace(SIZE_WORDS, f"between {least} B (a byte for each of the {least} ranks) and "
                                       f"{SIZE_WORDS.rsplit(' and ', 1)[1]}")


def primitive_results(primitive: str = "all-gather", algorithm: str = "ring", n: int = 8, size: str = "64 MiB",
                      link: str = "eth_25g") -> dict[str, str]:
    """Chapter 1's calculator: one collective under alpha-beta (:func:`commlib.cost.collective_terms`), as text.

    >>> primitive_results("all-gather", "ring", 4, "4 MB", "eth_10g")["steps on the critical path (alpha count)"]
    '3'
    """
    op = PRIMITIVE_OPS.get(primitive, primitive)
    if op not in PRIMITIVE_ALGORITHMS:
        raise ValueError(f"primitive must be one of {', '.join(PRIMITIVE_OPS)}; got {primitive!r}")
    allowed = PRIMITIVE_ALGORITHMS[op]
    if algorithm not in allowed:
        raise ValueError(f"algorithm for {primitive} must be one of {', '.join(allowed)}; got {algorithm!r}")
    try:
        nbytes = BUFFER_ENTRY.read(size)
    except ValueError as err:    # its range, from the least buffer these ranks take: "between 8 B (...) and 1 PB"
        raise ValueError(_buffer_range(str(err), op, n, algorithm)) from None
    item = check_switched(link)
    n = check_domain(link, check_count("n", n))
    shown = {"buffer M": _size(nbytes),
             "link": f"{_rate(item.bandwidth, both=False)} per direction, latency alpha {_time(item.latency)}",
             "network": NETWORK + (f" (its domain: {item.domain})" if item.domain else "")}
    if n == 1:
        return {**shown, "time": NOTHING_TO_SEND.format("rank")}
    terms = cost.collective_terms(op, nbytes, n, algorithm)
    check_whole_blocks(op, nbytes, n, algorithm)
    seconds = terms.time(item.bandwidth, item.latency)
    best = {label: form(nbytes, n, link) for label, form in [BEST_FORMS.get((op, algorithm), (None, None))]
            if label and n > 1}
    return {
        "buffer M": shown["buffer M"],
        "M here is": buffer_meaning(op, nbytes, n),
        "link": shown["link"],
        "network": shown["network"],
        "steps on the critical path (alpha count)": f"{terms.steps}",
        "bytes on the critical path": format_size(terms.bytes, significant=SIGNIFICANT),
        "time": _time(seconds),
        "latency share": format_percent(terms.steps * item.latency / seconds, 1) if seconds else "-",
        **best,
    }
