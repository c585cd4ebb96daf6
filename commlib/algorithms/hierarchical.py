r"""Hierarchical all-reduce: ring reduce-scatter inside hosts, ring all-reduce across, all-gather inside.

With g = n / h ranks on each of h hosts (``hosts``), M bytes: each rank all-reduces its M/g shard
with the ranks of the same local index on the other hosts, all g shards at once (NCCL, Horovod;
Jia et al. 2018 describe the variant). On one uniform link:

.. math:: 2(g-1)\alpha + 2\frac{g-1}{g}M\beta + 2(h-1)\alpha + 2\frac{h-1}{h}\frac{M}{g}\beta
          + \frac{g-1}{g}M\gamma + \frac{h-1}{h}\frac{M}{g}\gamma .

On a cluster, :func:`commlib.cost.hierarchical_allreduce_time` charges each phase its own link
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
    from ..units import check_count

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


def seconds(nbytes: float, n: int, bandwidth: float, latency: float, gamma: float, *, hosts: int,
            inter_bandwidth: float, inter_latency: float, nics_per_host: int | None = None, **_) -> float:
    """Each phase on its own link: :func:`commlib.cost.hierarchical_allreduce_time`."""
    from ..cost import hierarchical_allreduce_time

    return hierarchical_allreduce_time(nbytes, hosts, n // hosts, bandwidth, inter_bandwidth, latency,
                                       inter_latency, gamma, nics_per_host=nics_per_host)


def schedule(eng, n: int, length: int, hosts: int) -> None:
    """Hosts of g contiguous ranks; phases intra-reduce-scatter, inter-allreduce, intra-all-gather."""
    from .._collectives_algorithms import two_level

    two_level(eng, length, hosts, n // hosts, ("intra-reduce-scatter", "inter-allreduce", "intra-all-gather"))


ALGORITHM = Algorithm(
    name="hierarchical", label="hierarchical (intra, inter, intra)", collective="all_reduce", terms=terms,
    schedule=schedule, params=("hosts",), check=check, constraint="hosts divides n", family="two-level",
    seconds=seconds, source="Jia et al. (2018); Sergeev & Del Balso (2018)",
)
