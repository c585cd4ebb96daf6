"""Chapter 7's comparisons, rerun small and seeded, each against its control."""

import numpy as np
import pytest

from commlib import cost, hardware
from commlib.today import algorithm_choice as tuning
from commlib.today import compression, moe
from commlib.today import in_network as innetwork
from commlib.today import local_sgd as localsgd


def test_switch_beats_ring_on_the_same_star():
    m = 2**20
    assert innetwork.switch_allreduce_time(8, m) < innetwork.ring_on_star_time(8, m)


def test_measured_switch_gain_is_below_nvls_model_below_ideal():
    gain = innetwork.measured_gain()
    assert 1 < gain["measured"] < gain["nvls_model"] < gain["ideal"]


def test_chooser_takes_in_switch_for_large_and_ring_ll_for_small_on_nvswitch():
    assert tuning.choose("all_reduce", 256 * 2**20, "nvswitch_node").algorithm == "nvls"
    small = tuning.choose("all_reduce", 4 * 2**10, "nvswitch_node")
    assert (small.algorithm, small.protocol) == ("ring", "LL")


def test_zero3_sends_more_than_zero2_and_holds_less():
    from commlib.today import zero
    assert cost.zero_bytes_per_rank(10**9, 64, 3) > cost.zero_bytes_per_rank(10**9, 64, 2)
    assert zero.memory_per_rank(10**9, 64, 3) < zero.memory_per_rank(10**9, 64, 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_skewed_routing_loads_busiest_rank_more_than_uniform(seed):
    assert moe.imbalance(moe.expert_loads(256, 2, 8, 1.0, seed)) > moe.imbalance(moe.expert_loads(256, 2, 8, 0.0, seed))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compressors_send_fewer_bytes_and_reach_the_control_loss(seed):
    lrs = (0.2, 0.5, 1.0)
    ctrl = compression.best_over_grid("none", lrs=lrs, steps=200, seed=seed)
    for method in ("powersgd", "topk", "sign"):
        run = compression.best_over_grid(method, lrs=lrs, steps=200, seed=seed)
        assert run.bytes_per_step < ctrl.bytes_per_step
        assert run.final_loss < ctrl.final_loss * 1.02


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_local_sgd_beats_synchronous_sgd_at_equal_wall_clock(seed):
    lrs = (0.2, 0.5, 1.0, 2.0)
    sync = localsgd.best_over_grid(1, 0.3, lrs=lrs, seed=seed)
    local = localsgd.best_over_grid(16, 0.3, lrs=lrs, seed=seed)
    assert local.final_loss < sync.final_loss
    assert local.bytes_sent[-1] < sync.bytes_sent[-1]


def test_in_network_time_helper_matches_link_preset():
    b = hardware.link("nvlink4").bandwidth
    assert np.isclose(cost.in_network_allreduce_time(b, 8, b), 1.0)


def test_prefetch_hides_gathers_only_when_compute_is_longer():
    from commlib.today import zero
    h100, ndr = hardware.accelerator("h100"), hardware.link("ib_ndr")
    for tokens, hidden in ((4096, False), (16384, True)):
        c, g = zero.forward_layer_times(7_500_000_000, 32, 64, tokens, h100.peak_flops, ndr.bandwidth)
        t = zero.prefetch_times([c] * 32, [g] * 32)
        assert t["prefetched"] < t["serial"]                   # the control: no prefetch
        assert (t["prefetched"] < 1.05 * t["compute"]) == hidden


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_diloco_ends_above_plain_averaging_on_this_problem(seed):
    avg = localsgd.best_over_grid(16, 0.3, seed=seed)
    dil = localsgd.best_over_grid(16, 0.3, outer="nesterov", lrs=localsgd.DILOCO_LRS, seed=seed)
    assert dil.lr < max(localsgd.DILOCO_LRS) and dil.lr > min(localsgd.DILOCO_LRS)   # inside its grid
    assert avg.final_loss < dil.final_loss
