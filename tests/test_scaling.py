"""Tests for commlib.scaling: PowerAI DDL metrics under weak scaling, and the linear scaling rule.

Expectations are worked out by hand from the definitions (Cho et al. 2017;
Goyal et al. 2017), not read back from the code.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib import scaling


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
