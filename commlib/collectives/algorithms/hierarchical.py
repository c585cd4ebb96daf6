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
