r"""The formula sheet: every closed form the chapters and their exercises call, in one place.

Each formula is defined once, in the subject it belongs to, beside the simulation it is tested
against; this module only lists them, so ``from commlib import cost`` gives a reader every cost
the book derives under the alpha-beta-gamma model (a message of m bytes takes
:math:`\alpha + m\beta`, reducing it :math:`m\gamma`):

========================================  ===============================================
subject                                   where the formulas are defined
========================================  ===============================================
collectives and their algorithms          :mod:`commlib.collectives.cost` (the forms
                                          themselves: one module per algorithm in
                                          :mod:`commlib.collectives.algorithms`)
one data-parallel step, efficiency        :mod:`commlib.step.cost`
parameter servers, BytePS                 :mod:`commlib.parameter_servers.cost`
ZeRO, experts, in-network, PowerSGD       :mod:`commlib.today.cost`
========================================  ===============================================

Units: bytes, seconds, bytes/s per direction. Numpy-free: the website runs it.

>>> round(allreduce_time(553.36e6, 4, 125e6), 3)   # VGG-16 over 1 GbE, ring
6.64
>>> ps_time(100e6, 8, 12.5e9, servers=8)           # eight shards: each NIC carries M each way
0.008
"""

from __future__ import annotations

from .collectives.cost import (
    ALLREDUCE_ALGORITHMS,
    BANDWIDTH_DIRECTIONS,
    BUS_FACTORS,
    COLLECTIVE_ALGORITHMS,
    CostTerms,
    algbw_to_busbw,
    algorithm_bandwidth,
    allreduce_step_bytes,
    allreduce_terms,
    allreduce_time,
    bus_bandwidth,
    bus_factor,
    busbw_to_algbw,
    collective_terms,
    collective_time,
    halving_doubling_swap_fold_terms,
    hierarchical_allreduce_time,
    latency_bandwidth_balance,
    reduction_gamma,
    ring_bytes_per_rank,
    torus_allreduce_time,
)
from .parameter_servers.cost import (
    allreduce_on_same_cards,
    best_allreduce,
    best_allreduce_on_same_cards,
    byteps_split,
    byteps_time,
    colocated_on_fast_cards_pieces,
    colocated_on_fast_cards_time,
    compare_ps_ring,
    direct_in_sequence_on_same_cards,
    overhead_to_beat,
    ps_beats_ring,
    ps_time,
    ps_traffic,
    rival_time,
    round_pieces,
    round_time,
    same_cards_shares,
    smallest_k_to_beat_ring,
    sparse_exchange,
)
from .step.cost import (
    batch_backward_hides,
    batch_for_time,
    bucketed_overlap,
    communication_overhead,
    communication_time_for_efficiency,
    compute_time,
    largest_ranks_for_efficiency,
    min_tokens_backward_hides,
    min_tokens_compute_bound,
    parallel_efficiency,
    reduction_shares,
    reduction_time_bounds,
    required_bandwidth,
    scaling_efficiency,
    speedup,
    traffic_per_rank,
    training_flops,
)
from .today.cost import (
    FP8_BLOCK_SCALED,
    FP8_TENSORWISE,
    ZERO_STAGES,
    WireFormat,
    fitting_stages,
    in_network_allreduce_time,
    memory_per_rank,
    moe_all_to_all_bytes,
    moe_step_bytes,
    moe_token_copies,
    powersgd_numbers,
    zero_bytes_per_rank,
)

#: Public functions of the subjects' cost modules that are not closed forms, so not listed here:
#: a check of an argument and the name a chapter gives a rival (both in :mod:`commlib.parameter_servers.cost`).
NOT_FORMULAS = {"commlib.parameter_servers.cost": ("check_shards", "rival_label")}

__all__ = [
    # collectives (chapters 1 and 2)
    "ALLREDUCE_ALGORITHMS", "COLLECTIVE_ALGORITHMS", "BUS_FACTORS", "BANDWIDTH_DIRECTIONS", "CostTerms",
    "allreduce_terms", "allreduce_time", "collective_terms", "collective_time", "hierarchical_allreduce_time",
    "torus_allreduce_time", "ring_bytes_per_rank", "latency_bandwidth_balance", "reduction_gamma", "bus_factor",
    "algbw_to_busbw", "busbw_to_algbw", "bus_bandwidth", "algorithm_bandwidth", "allreduce_step_bytes",
    "halving_doubling_swap_fold_terms",
    # one step, efficiency (chapter 0)
    "parallel_efficiency", "communication_time_for_efficiency", "required_bandwidth", "largest_ranks_for_efficiency",
    "speedup",
    "scaling_efficiency", "communication_overhead", "training_flops", "compute_time", "traffic_per_rank",
    "reduction_time_bounds", "reduction_shares", "batch_for_time", "min_tokens_compute_bound",
    "min_tokens_backward_hides", "batch_backward_hides", "bucketed_overlap",
    # parameter servers (chapter 3)
    "ps_time", "byteps_time", "byteps_split", "ps_traffic", "round_time", "round_pieces", "ps_beats_ring",
    "overhead_to_beat", "smallest_k_to_beat_ring", "rival_time", "best_allreduce", "same_cards_shares",
    "allreduce_on_same_cards", "best_allreduce_on_same_cards", "direct_in_sequence_on_same_cards", "compare_ps_ring",
    "colocated_on_fast_cards_pieces", "colocated_on_fast_cards_time",
    "sparse_exchange",
    # today's collectives (chapter 7)
    "ZERO_STAGES", "zero_bytes_per_rank", "memory_per_rank", "fitting_stages", "moe_all_to_all_bytes", "in_network_allreduce_time",
    "powersgd_numbers", "moe_step_bytes", "WireFormat", "FP8_BLOCK_SCALED", "FP8_TENSORWISE",
    "moe_token_copies",
]
