r"""Hierarchical all-reduce: ring reduce-scatter inside hosts, ring all-reduce across, all-gather inside.

With g = n / h ranks on each of h hosts (``hosts``), M bytes: each rank all-reduces its M/g shard
with the ranks of the same local index on the other hosts, all g shards at once (NCCL, Horovod;
Jia et al. 2018 describe the variant). On one uniform link:

.. math:: 2(g-1)\alpha + 2\frac{g-1}{g}M\beta + 2(h-1)\alpha + 2\frac{h-1}{h}\frac{M}{g}\beta
          + \frac{g-1}{g}M\gamma + \frac{h-1}{h}\frac{M}{g}\gamma .

On a cluster, :func:`hierarchical_allreduce_time` charges each phase its own link
and shares the network cards (``nics_per_host``).

>>> terms(1200, 8, hosts=2)
CostTerms(steps=8, bytes=2100.0, reduced=1050.0)
"""

from __future__ import annotations

from .base import Algorithm, CostTerms
from .ring import terms as ring_terms


def ring_reduce_scatter_terms(nbytes: float, n: int) -> CostTerms:
    """Ring reduce-scatter (or, without the reduction, all-gather) of M over n ranks: n - 1 steps of M/n."""
    f = (n - 1) / n
    return CostTerms(n - 1, f * nbytes, f * nbytes)


def check(n: int, hosts: int | None = None) -> dict:
    """``hosts`` is required and divides n."""
    from ...units import check_count

    if hosts is None:
        raise ValueError("hosts is required for algorithm='hierarchical' (number of hosts, dividing n)")
    if isinstance(hosts, float) and hosts.is_integer():
        hosts = int(hosts)
    hosts = check_count("hosts", int(hosts) if hasattr(hosts, "__index__") else hosts, minimum=1, maximum=n)
    if n % hosts:
        raise ValueError(f"hosts must divide the number of ranks n = {n}; got {hosts}")
    return {"hosts": hosts}


def terms(nbytes: float, n: int, hosts: int) -> CostTerms:
    """Intra reduce-scatter + inter ring all-reduce of M/g + intra all-gather, one uniform link."""
    g = n // hosts
    rs = ring_reduce_scatter_terms(nbytes, g)
    return CostTerms(2 * rs.steps, 2 * rs.bytes, rs.reduced) + ring_terms(nbytes / g, hosts)


def hierarchical_allreduce_time(
    nbytes: float,
    hosts: int,
    per_host: int,
    intra_bandwidth: float,
    inter_bandwidth: float,
    intra_latency: float = 0.0,
    inter_latency: float = 0.0,
    gamma: float = 0.0,
    nics_per_host: int | None = None,
) -> float:
    r"""Hierarchical all-reduce: inside hosts, then across hosts, then back inside.

    With g = ``per_host`` ranks on each of h = ``hosts`` hosts and M = ``nbytes``:

    1. ring reduce-scatter inside each host (g - 1 steps of M/g, intra link);
    2. ring all-reduce of each rank's M/g shard with its peers on the other
       hosts (2(h - 1) steps of M/(gh) on the inter-host link; the g shards
       of a host move at the same time, one ring per local rank, as NCCL and
       Horovod do);
    3. ring all-gather inside each host (g - 1 steps of M/g, intra link).

    .. math::

        T = 2(g-1)\alpha_\text{intra} + 2\frac{g-1}{g}\frac{M}{B_\text{intra}}
            + 2(h-1)\alpha_\text{inter} + 2\frac{h-1}{h}\frac{M/g}{B_\text{shard}}
            + \frac{g-1}{g}M\gamma + \frac{h-1}{h}\frac{M}{g}\gamma .

    The hardware decides :math:`B_\text{shard}`, the bandwidth each of the g
    concurrent inter-host rings gets:

    * ``nics_per_host=None`` (the default): **one NIC per rank**, each of
      ``inter_bandwidth`` bytes/s per direction, as later DGX machines have
      (a DGX-1 with V100 GPUs had four 100 Gb/s InfiniBand cards for its
      eight GPUs, ``nics_per_host=4``). The g shards cross in parallel on their
      own cards, :math:`B_\text{shard} = B_\text{inter}`, and only M/g per
      card crosses the network: the inter-host term shrinks g-fold.
    * ``nics_per_host=k``: the host's g shards share **k NICs** of
      ``inter_bandwidth`` each, :math:`B_\text{shard} = B_\text{inter}\min(k,
      g)/g`. With one NIC per host (k = 1) all g shards go through one card,
      which carries :math:`2\frac{h-1}{h}M` -- the whole gradient's share,
      not an eighth of it -- so the inter-host term is the same as a ring
      over h hosts of the whole buffer (the one-NIC-per-host model of
      :mod:`commlib.network.placement` and :mod:`commlib.network.topology`). NICs beyond g
      add nothing: a rank's ring uses one card.

    Latency is per message and does not change with sharing. Units: bytes,
    bytes/s per direction, seconds, seconds per byte reduced.

    >>> # 2 hosts x 4 ranks, 1200 B, intra link 1 kB/s, inter 10 B/s
    >>> hierarchical_allreduce_time(1200, 2, 4, 1000.0, 10.0)        # 2*(3/4)*1200/1000 + 2*(1/2)*300/10
    31.8
    >>> hierarchical_allreduce_time(1200, 2, 4, 1000.0, 10.0, nics_per_host=1)   # + 2*(1/2)*300/(10/4)
    121.8
    """
    from ...units import check_count, check_nonnegative, check_positive

    nbytes = check_nonnegative("nbytes", nbytes)
    hosts = check_count("hosts", hosts)
    per_host = check_count("per_host", per_host)
    inter_bandwidth = check_positive("inter_bandwidth", inter_bandwidth)
    shard_bandwidth = inter_bandwidth
    if nics_per_host is not None:
        nics_per_host = check_count("nics_per_host", nics_per_host, minimum=1)
        shard_bandwidth = inter_bandwidth * min(nics_per_host, per_host) / per_host
    intra = ring_reduce_scatter_terms(nbytes, per_host)
    inter = ring_terms(nbytes / per_host, hosts)
    t = 2 * intra.time(intra_bandwidth, intra_latency, 0.0) + intra.reduced * gamma
    return t + inter.time(shard_bandwidth, inter_latency, gamma)


def pipelined_hierarchical_allreduce_time(
    nbytes: float,
    hosts: int,
    per_host: int,
    intra_bandwidth: float,
    inter_bandwidth: float,
    intra_latency: float = 0.0,
    inter_latency: float = 0.0,
    gamma: float = 0.0,
    nics_per_host: int | None = None,
    chunks: int = 1,
) -> float:
    r"""The hierarchical all-reduce pipelined: its NVLink phases overlap its network phase, chunk by chunk.

    The buffer is cut into q = ``chunks`` chunks of M/q, and each chunk goes through the three phases of
    :func:`hierarchical_allreduce_time`. In round r the GPU's link inside the host reduce-scatters chunk r and
    all-gathers chunk r - 2, one after the other (both use the same port), while its card all-reduces chunk r - 1
    across hosts; a round lasts as long as the busier of the two ports. With

    .. math::

        a_\text{rs} = (g-1)\Big(lpha_\text{intra} + \frac{M}{gq B_\text{intra}} + \frac{M}{gq}\gamma\Big),\quad
        a_\text{ag} = (g-1)\Big(lpha_\text{intra} + \frac{M}{gq B_\text{intra}}\Big),\quad
        e = 2(h-1)\Big(lpha_\text{inter} + \frac{M}{ghq B_\text{shard}}\Big) + (h-1)\frac{M}{ghq}\gamma ,

    the q + 2 rounds take, for q >= 2,

    .. math:: T = a_\text{rs} + \max(a_\text{rs}, e) + (q-2)\max(a_\text{rs} + a_\text{ag}, e)
              + \max(a_\text{ag}, e) + a_\text{ag},

    and for q = 1 the phases in series, :func:`hierarchical_allreduce_time` exactly. As q grows, T tends to the
    longer of the two ports' totals (the bytes inside the host against those through the card) plus q times
    the start-ups of a chunk: more chunks shorten the fill and add start-ups, so a best q exists.
    ``nics_per_host`` sets :math:`B_\text{shard}` as in :func:`hierarchical_allreduce_time`.

    >>> # 2 hosts x 4 ranks, 1200 B, intra link 1 kB/s, inter 10 B/s: in series 1.8 + 30 s; pipelined -> about 30
    >>> pipelined_hierarchical_allreduce_time(1200, 2, 4, 1000.0, 10.0, chunks=1)
    31.8
    >>> round(pipelined_hierarchical_allreduce_time(1200, 2, 4, 1000.0, 10.0, chunks=10), 6)  # 30 + 0.18 fill
    30.18
    """
    from ...units import check_count, check_nonnegative, check_positive

    chunks = check_count("chunks", chunks, minimum=1)
    if chunks == 1:
        return hierarchical_allreduce_time(nbytes, hosts, per_host, intra_bandwidth, inter_bandwidth, intra_latency,
                                           inter_latency, gamma, nics_per_host=nics_per_host)
    nbytes = check_nonnegative("nbytes", nbytes)
    hosts = check_count("hosts", hosts)
    per_host = check_count("per_host", per_host)
    intra_bandwidth = check_positive("intra_bandwidth", intra_bandwidth)
    inter_bandwidth = check_positive("inter_bandwidth", inter_bandwidth)
    intra_latency = check_nonnegative("intra_latency", intra_latency)
    inter_latency = check_nonnegative("inter_latency", inter_latency)
    gamma = check_nonnegative("gamma", gamma)
    shard_bandwidth = inter_bandwidth
    if nics_per_host is not None:
        nics_per_host = check_count("nics_per_host", nics_per_host, minimum=1)
        shard_bandwidth = inter_bandwidth * min(nics_per_host, per_host) / per_host
    chunk = nbytes / chunks
    intra = ring_reduce_scatter_terms(chunk, per_host)
    a_rs = intra.time(intra_bandwidth, intra_latency, gamma)
    a_ag = intra.time(intra_bandwidth, intra_latency, 0.0)
    e = ring_terms(chunk / per_host, hosts).time(shard_bandwidth, inter_latency, gamma) if hosts > 1 else 0.0
    return (a_rs + max(a_rs, e) + (chunks - 2) * max(a_rs + a_ag, e) + max(a_ag, e) + a_ag)


def pays_threshold(hosts: int, per_host: int, cards: int, nic_bandwidth: float, pipelined: bool = False) -> float:
    r"""The link inside a host (bytes/s) above which the hierarchical all-reduce beats the multi-rail ring on the
    same ``cards`` c cards a host, by bytes alone (no start-ups), where that ring is bound by its cards.

    In series (:func:`hierarchical_allreduce_time`) the saving on the cards, :math:`2\frac{g-1}{n}\frac{M}{cB_\text{NIC}}`,
    must exceed the NVLink phases' :math:`2\frac{g-1}{g}\frac{M}{B_\text{intra}}`: :math:`B_\text{intra} > hcB_\text{NIC}`.
    Pipelined over many chunks (:func:`pipelined_hierarchical_allreduce_time`) the time is the longer of the two
    ports' totals; the card's, :math:`2\frac{h-1}{h}\frac{M}{cB_\text{NIC}}`, is always below the ring's
    :math:`2\frac{n-1}{n}\frac{M}{cB_\text{NIC}}`, so only the NVLink phases must be; with one card a GPU (c = g,
    the only case taken here: with fewer, the ring is bound by its link inside the host there):
    :math:`B_\text{intra} > cB_\text{NIC}\frac{(g-1)n}{g(n-1)}`, between :math:`\frac{g-1}{g}cB_\text{NIC}` and
    :math:`cB_\text{NIC}`, and falling a little as hosts are added.

    >>> pays_threshold(2, 8, 8, 50e9) / 1e9, round(pays_threshold(2, 8, 8, 50e9, pipelined=True) / 1e9, 1)
    (800.0, 373.3)
    """
    from ...units import check_count, check_positive

    hosts, per_host = check_count("hosts", hosts, minimum=2), check_count("per_host", per_host, minimum=2)
    cards = check_count("cards", cards, minimum=1, maximum=per_host)
    nic_bandwidth = check_positive("nic_bandwidth", nic_bandwidth)
    n = hosts * per_host
    if pipelined and cards != per_host:
        raise ValueError(f"cards must be per_host = {per_host} (one card a GPU) for the pipelined threshold; got {cards}")
    if not pipelined:
        return hosts * cards * nic_bandwidth
    return cards * nic_bandwidth * (per_host - 1) * n / (per_host * (n - 1))


def seconds(nbytes: float, n: int, bandwidth: float, latency: float, gamma: float, *, hosts: int,
            inter_bandwidth: float, inter_latency: float, nics_per_host: int | None = None, **_) -> float:
    """Each phase on its own link: :func:`hierarchical_allreduce_time`."""
    return hierarchical_allreduce_time(nbytes, hosts, n // hosts, bandwidth, inter_bandwidth, latency,
                                       inter_latency, gamma, nics_per_host=nics_per_host)


def schedule(eng, n: int, length: int, hosts: int) -> None:
    """Hosts of g contiguous ranks; phases intra-reduce-scatter, inter-allreduce, intra-all-gather."""
    from ..schedules import two_level

    two_level(eng, length, hosts, n // hosts, ("intra-reduce-scatter", "inter-allreduce", "intra-all-gather"))


ALGORITHM = Algorithm(
    name="hierarchical", label="hierarchical (intra, inter, intra)", collective="all_reduce", terms=terms,
    schedule=schedule, params=("hosts",), check=check, constraint="hosts divides n", family="two-level",
    seconds=seconds, source="Jia et al. (2018); Sergeev & Del Balso (2018)",
)
