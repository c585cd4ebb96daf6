"""Tests for commlib.sgd.scaling: PowerAI DDL metrics under weak scaling, and the linear scaling rule.

Expectations are worked out by hand from the definitions (Cho et al. 2017;
Goyal et al. 2017), not read back from the code.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib.sgd import scaling

# --------------------------------------------------------------------------- scaling metrics


def test_weak_scaling_hand_example():
    # one GPU: 0.2 s per iteration of 64 images; 8 GPUs: 0.25 s
    m = scaling.weak_scaling(0.2, 0.05, 8, 64)
    assert m.throughput_one == pytest.approx(320.0)
    assert m.throughput_many == pytest.approx(8 * 64 / 0.25)
    assert m.speedup == pytest.approx(6.4)
    assert m.efficiency == pytest.approx(0.8)
    assert m.overhead == pytest.approx(0.05)
    assert m.overhead_share == pytest.approx(0.2)


@settings(max_examples=50, deadline=None)
@given(t=st.floats(1e-3, 10), c=st.floats(0, 10), n=st.integers(2, 1024), b=st.integers(1, 512))
def test_weak_scaling_identities(t, c, n, b):
    m = scaling.weak_scaling(t, c, n, b)
    assert m.speedup == pytest.approx(m.throughput_many / m.throughput_one)
    assert m.efficiency == pytest.approx(m.speedup / n)
    assert 0 < m.efficiency <= 1.0 + 1e-12
    assert m.speedup <= n + 1e-9


@settings(max_examples=30, deadline=None)
@given(t=st.floats(1e-3, 1), c=st.floats(1e-4, 1), slow=st.floats(1.01, 10))
def test_a_slower_gpu_flatters_the_same_network(t, c, slow):
    fast = scaling.weak_scaling(t, c, 8, 32)
    slower = scaling.weak_scaling(t * slow, c, 8, 32)
    assert slower.efficiency > fast.efficiency
    assert slower.throughput_many < fast.throughput_many


def test_weak_scaling_rejects_bad_input():
    with pytest.raises(ValueError, match="t_compute"):
        scaling.weak_scaling(0.0, 0.1, 4, 32)
    with pytest.raises(ValueError, match="t_comm"):
        scaling.weak_scaling(1.0, 0.1, 1, 32)
    with pytest.raises(ValueError, match="batch_per_worker"):
        scaling.weak_scaling(1.0, 0.1, 4, 0)


def test_linear_scaling_rule_goyal():
    # eta = 0.1 * k n / 256: 8 GPUs x 32 images -> 0.1; 256 GPUs x 32 -> 3.2
    assert scaling.linear_scaling_lr(0.1, 256, 8 * 32) == pytest.approx(0.1)
    assert scaling.linear_scaling_lr(0.1, 256, 256 * 32) == pytest.approx(3.2)
    with pytest.raises(ValueError, match="base_lr"):
        scaling.linear_scaling_lr(0.0, 256, 32)
    assert np.isfinite(scaling.linear_scaling_lr(1e-3, 1, 10**6))


def test_ring_weak_scaling_uses_the_ring_formula():
    # ResNet-50 fp32 gradient: 25,557,032 x 4 B; ring on 8 ranks at 1.25 GB/s, 5 µs latency
    nbytes = 25_557_032 * 4
    t_comm = 2 * 7 * 5e-6 + 2 * 7 / 8 * nbytes / 1.25e9
    m = scaling.ring_weak_scaling("resnet50", 8, 1.25e9, 0.2, 32, latency=5e-6)
    assert m.overhead == pytest.approx(t_comm)
    assert m.efficiency == pytest.approx(0.2 / (0.2 + t_comm))
    half = scaling.ring_weak_scaling("resnet50", 8, 1.25e9, 0.2, 32, latency=5e-6, hidden=0.5)
    assert half.overhead == pytest.approx(t_comm / 2)
    assert scaling.ring_weak_scaling("resnet50", 1, 1.25e9, 0.2, 32).efficiency == 1.0
    with pytest.raises(ValueError, match="hidden"):
        scaling.ring_weak_scaling("resnet50", 8, 1.25e9, 0.2, 32, hidden=1.5)


# --------------------------------------------------------------------------- a reported run: Goyal et al. 2017


def test_iterations_and_times_per_epoch_by_hand():
    assert scaling.iterations_per_epoch(1000, 250) == pytest.approx(4.0)
    assert scaling.iterations_per_epoch(1000, 300) == pytest.approx(10 / 3)
    assert scaling.iteration_time_from_epoch(12.0, 1000, 250) == pytest.approx(3.0)   # 4 iterations in 12 s
    assert scaling.epoch_time_from_run(3600.0, 90) == pytest.approx(40.0)


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 10**7), b=st.integers(1, 10**5), t=st.floats(1e-3, 1e5))
def test_iteration_time_times_iterations_is_the_epoch(d, b, t):
    assert scaling.iteration_time_from_epoch(t, d, b) * scaling.iterations_per_epoch(d, b) == pytest.approx(t)
    # a twice larger global batch means half the iterations, each twice as long, at the same epoch time
    assert scaling.iteration_time_from_epoch(t, d, 2 * b) == pytest.approx(2 * scaling.iteration_time_from_epoch(t, d, b))


def test_reported_run_bad_input():
    with pytest.raises(ValueError, match="global_batch"):
        scaling.iterations_per_epoch(1000, 0)
    with pytest.raises(ValueError, match="train_images"):
        scaling.iterations_per_epoch(0, 10)
    with pytest.raises(ValueError, match="epoch_time"):
        scaling.iteration_time_from_epoch(0.0, 1000, 10)
    with pytest.raises(ValueError, match="epochs"):
        scaling.epoch_time_from_run(3600.0, 0)
    with pytest.raises(ValueError, match="gpus_per_server"):
        scaling.GOYAL2017.servers(100)


def test_goyal2017_is_self_consistent():
    """The paper's own figures, held against each other (Goyal et al. 2017, sections 4.3, 5.1, 5.5, table 2)."""
    g = scaling.GOYAL2017
    assert 1.275e6 < g.train_images < 1.285e6                      # "~1.28 million"
    assert g.global_batch(g.gpus_per_server) == g.base_batch        # one server of 8 x 32 = 256: eta = 0.1
    assert g.global_batch(g.headline_gpus) == 8192                  # the "8k" minibatch
    assert scaling.linear_scaling_lr(g.base_lr, g.base_batch, g.global_batch(256)) == pytest.approx(3.2)  # table 2b
    assert g.servers(g.largest_gpus) == 44 and g.servers(g.headline_gpus) == 32
    # figure 7 plots 0.2-0.3 s per iteration; both timings land there and above one GPU's backprop
    t_352 = scaling.iteration_time_from_epoch(g.largest_epoch_time, g.train_images, g.global_batch(g.largest_gpus))
    t_256 = scaling.iteration_time_from_epoch(scaling.epoch_time_from_run(g.headline_time, g.epochs),
                                              g.train_images, g.global_batch(g.headline_gpus))
    for t in (t_352, t_256):
        assert 0.2 < t < 0.3 and t > g.backprop_time
    # the source note's "0.5 s per epoch" on 352 GPUs would leave under 5 ms per iteration
    note = scaling.RETOLD_ONE_HOUR_RUN
    assert note["gpus"] == g.largest_gpus and g.servers(note["gpus"]) == note["servers"]
    t_note = scaling.iteration_time_from_epoch(note["epoch_time"], g.train_images, g.global_batch(note["gpus"]))
    assert t_note < 0.005 < g.backprop_time
    assert note["epoch_time"] * 60 == pytest.approx(g.largest_epoch_time)   # 0.5 read off a minutes axis
    assert note["train_images"] / g.train_images > 20                        # "28 million" is not ~1.28 million
    assert note["optimizer"] == g.framework != g.optimizer


def test_one_hour_run_figures_recompute_from_the_definitions():
    note = scaling.RETOLD_ONE_HOUR_RUN
    f = scaling.one_hour_run_figures()
    batch = note["gpus"] * 32                                          # 352 GPUs x 32 images = 11,264
    assert f["global_batch"] == batch == 11_264
    assert f["iterations"] == pytest.approx(1_281_167 / 11_264)
    assert f["note_iteration_time"] == pytest.approx(0.5 * 11_264 / 1_281_167)
    assert f["iteration_time"] == pytest.approx(30.0 * 11_264 / 1_281_167)
    assert f["headline_iteration_time"] == pytest.approx(3600 / 90 * 8192 / 1_281_167)
    assert f["images_factor"] == pytest.approx(28e6 / 1_281_167)
    assert f["servers"] == 44 and f["headline_hours"] == pytest.approx(1.0)
    # a different claim gives different figures: the function reads the note it is given
    other = scaling.one_hour_run_figures(note={**note, "epoch_time": 30.0})
    assert other["note_iteration_time"] == pytest.approx(f["iteration_time"])
    with pytest.raises(ValueError, match="gpus"):
        scaling.one_hour_run_figures(note={**note, "gpus": 350})
