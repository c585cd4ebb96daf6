"""Tests for commlib.sgd.overlap (bucketed all-reduce overlapped with backward).

Expectations come from outside the code under test: parameter counts from
commlib.hardware's presets (counted from the reference implementations),
multiply-accumulate counts from the literature, all-reduce times written out
from the ring formula 2 (n-1)/n * M / B, and hand-made schedules.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib import hardware
from commlib.sgd import calculators, overlap

MODELS = list(overlap.LAYER_MODELS)


# --------------------------------------------------------------------------- layer tables


@pytest.mark.parametrize("key", MODELS)
def test_layer_split_adds_up_to_the_preset_parameter_count(key):
    layers = overlap.model_layers(key)
    assert sum(layer.params for layer in layers) == hardware.MODELS[key].params
    assert all(layer.params >= 0 and layer.macs >= 0 for layer in layers)


def test_every_preset_with_a_split_is_a_hardware_preset():
    assert set(MODELS) <= set(hardware.MODELS)


@pytest.mark.parametrize(
    "key, gmacs",
    [
        ("resnet50", 4.1),   # torchvision ResNet-50 v1.5: 4.1 GMAC per 224 x 224 image
        ("vgg16", 15.5),     # VGG-16: 15.5 GMAC per image (widely reported; Canziani et al. 2016)
        ("alexnet", 0.71),   # torchvision AlexNet: 0.71 GMAC per image
    ],
)
def test_forward_macs_match_published_counts(key, gmacs):
    assert overlap.forward_macs(key) / 1e9 == pytest.approx(gmacs, rel=0.02)


def test_transformer_macs_per_token_are_the_weight_matrices():
    # 12 blocks of (4 d^2 attention + 8 d^2 MLP) MACs, plus the pooler d^2 (BERT-Base, d = 768)
    d = 768
    assert overlap.forward_macs("bert_base") == 12 * 12 * d * d + d * d
    # GPT-2 adds its tied language-model head: vocab x d MACs per token
    assert overlap.forward_macs("gpt2") == 12 * 12 * d * d + 50257 * d


def test_vgg_output_layers_hold_most_parameters():
    names = [layer.name for layer in overlap.model_layers("vgg16")]
    params = {layer.name: layer.params for layer in overlap.model_layers("vgg16")}
    assert names[-3:] == ["fc6", "fc7", "fc8"]
    assert params["fc6"] == 25088 * 4096 + 4096
    assert sum(params[k] for k in ("fc6", "fc7", "fc8")) / hardware.MODELS["vgg16"].params > 0.85


def test_unknown_model_is_a_value_error_listing_choices():
    with pytest.raises(ValueError, match="model must be one of .*resnet50"):
        overlap.model_layers("inception_v3")


# --------------------------------------------------------------------------- compute times


def test_backward_times_share_the_total_by_macs():
    layers = [overlap.Layer("a", 5, 1.0), overlap.Layer("b", 5, 0.0), overlap.Layer("c", 5, 3.0)]
    t = overlap.backward_times(layers, 2.0)
    assert t == pytest.approx([0.5, 0.0, 1.5])


def test_backward_times_fall_back_to_parameters_without_macs():
    t = overlap.backward_times([overlap.Layer("a", 1, 0.0), overlap.Layer("b", 3, 0.0)], 1.0)
    assert t == pytest.approx([0.25, 0.75])


def test_step_compute_time_is_two_flops_per_mac_and_backward_twice_forward():
    f, b = overlap.step_compute_time("resnet50", 1, 1.0)
    assert f == 2 * overlap.forward_macs("resnet50")
    assert b == 2 * f
    f64, _ = overlap.step_compute_time("resnet50", 64, 1.0)
    assert f64 == pytest.approx(64 * f)


@pytest.mark.parametrize("kwargs, name", [({"batch": 0}, "batch"), ({"flops_per_second": 0.0}, "flops_per_second")])
def test_step_compute_time_rejects_bad_input(kwargs, name):
    args = {"model": "resnet50", "batch": 8, "flops_per_second": 1e12, **kwargs}
    with pytest.raises(ValueError, match=name):
        overlap.step_compute_time(**args)


# --------------------------------------------------------------------------- buckets


def test_ddp_default_cap_is_25_mebibytes():
    assert overlap.DDP_BUCKET_BYTES == 26_214_400
    assert overlap.DDP_FIRST_BUCKET_BYTES == 1_048_576


def test_assign_buckets_hand_example():
    assert overlap.assign_buckets([3, 3, 3, 3], bucket_bytes=6) == [[0, 1], [2, 3]]
    assert overlap.assign_buckets([3, 3, 3, 3], bucket_bytes=7) == [[0, 1, 2], [3]]
    assert overlap.assign_buckets([3, 3, 3, 3], bucket_bytes=6, first_bucket_bytes=1) == [[0], [1, 2], [3]]
    assert overlap.assign_buckets([100, 1], bucket_bytes=6) == [[0], [1]]


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 1000), min_size=1, max_size=40),
    cap=st.integers(0, 3000),
    first=st.one_of(st.none(), st.integers(0, 3000)),
)
def test_assign_buckets_partitions_in_order_and_closes_at_the_cap(sizes, cap, first):
    buckets = overlap.assign_buckets(sizes, bucket_bytes=cap, first_bucket_bytes=first)
    assert [i for b in buckets for i in b] == list(range(len(sizes)))
    assert all(b for b in buckets)
    for k, b in enumerate(buckets):
        limit = (cap if first is None else first) if k == 0 else cap
        total = sum(sizes[i] for i in b)
        if k < len(buckets) - 1:
            assert total >= limit           # closed because it reached its cap ...
        assert sum(sizes[i] for i in b[:-1]) < limit or len(b) == 1  # ... and not earlier


def test_assign_buckets_rejects_bad_input():
    with pytest.raises(ValueError, match="bucket_bytes"):
        overlap.assign_buckets([1, 2], bucket_bytes=-1)
    with pytest.raises(ValueError, match="nbytes"):
        overlap.assign_buckets([])


# --------------------------------------------------------------------------- schedule


def test_schedule_hand_example():
    # ready at 0, 1, 5; each all-reduce takes 2 s: 0-2, 2-4 (waits for the stream), 5-7 (waits for data)
    assert overlap.schedule([0, 1, 5], [1, 1, 1], lambda m: 2.0) == [(0, 2), (2, 4), (5, 7)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 5)), min_size=1, max_size=20))
def test_schedule_is_serial_and_never_starts_early(items):
    ready = sorted(r for r, _ in items)
    durations = [d for _, d in items]
    slots = overlap.schedule(ready, durations, lambda m: m)
    prev_end = 0.0
    for (s, e), r, d in zip(slots, ready, durations):
        assert s >= r and s >= prev_end
        assert math.isclose(e - s, d, abs_tol=1e-12)
        assert s == r or s == prev_end      # no idle gap that could have been used
        prev_end = e


# --------------------------------------------------------------------------- timeline


def ring_time(nbytes, n, bandwidth, latency=0.0):
    return 2 * (n - 1) * latency + 2 * (n - 1) / n * nbytes / bandwidth


def test_buckets_carry_every_gradient_byte_once():
    r = overlap.overlap_timeline("resnet50", n=8, bandwidth=12.5e9, t_backward=0.1)
    assert sum(b.nbytes for b in r.buckets) == hardware.gradient_bytes("resnet50", "fp32")
    names = [name for b in r.buckets for name in b.layers]
    assert names == [layer.name for layer in r.layers]
    assert r.layers[0].name == "fc" and r.layers[-1].name == "conv1"   # backward order


def test_each_bucket_costs_a_ring_allreduce_of_its_bytes():
    r = overlap.overlap_timeline("resnet50", n=8, bandwidth=12.5e9, t_backward=0.1, latency=5e-6)
    for b in r.buckets:
        assert b.duration == pytest.approx(ring_time(b.nbytes, 8, 12.5e9, 5e-6))
    total = hardware.gradient_bytes("resnet50", "fp32")
    assert r.t_no_overlap == pytest.approx(0.1 + ring_time(total, 8, 12.5e9, 5e-6))


def test_one_big_bucket_hides_nothing():
    r = overlap.overlap_timeline("vgg16", n=4, bandwidth=1.25e9, t_backward=0.2, bucket_bytes=1e12,
                                 first_bucket_bytes=None)
    assert len(r.buckets) == 1
    assert r.hidden == 0.0
    assert r.t_end == pytest.approx(r.t_no_overlap)
    assert r.exposed == pytest.approx(ring_time(hardware.gradient_bytes("vgg16"), 4, 1.25e9))


def test_vgg16_fully_connected_layers_are_the_first_three_buckets():
    r = overlap.overlap_timeline("vgg16", n=4, bandwidth=1.25e9, t_backward=0.2)
    assert [b.layers for b in r.buckets[:3]] == [("fc8",), ("fc7",), ("fc6",)]


def test_no_backward_time_means_nothing_hides():
    r = overlap.overlap_timeline("resnet50", n=8, bandwidth=12.5e9, t_backward=0.0)
    assert r.hidden == 0.0
    assert r.exposed == pytest.approx(r.comm_total)


def test_infinite_network_hides_everything():
    r = overlap.overlap_timeline("resnet50", n=8, bandwidth=1e30, t_backward=0.1)
    assert r.hidden_fraction == pytest.approx(1.0)
    assert r.exposed == pytest.approx(0.0, abs=1e-12)


def test_single_rank_has_nothing_to_communicate():
    r = overlap.overlap_timeline("resnet50", n=1, bandwidth=1e9, t_backward=0.1)
    assert r.comm_total == 0.0 and r.hidden_fraction == 1.0 and r.exposed == 0.0


def test_per_layer_allreduce_pays_latency_once_per_layer():
    kw = dict(model="resnet50", n=8, bandwidth=12.5e9, t_backward=0.1, bucket_bytes=0, first_bucket_bytes=None)
    fast = overlap.overlap_timeline(latency=0.0, **kw)
    slow = overlap.overlap_timeline(latency=1e-4, **kw)
    layers = len(overlap.model_layers("resnet50"))
    assert len(slow.buckets) == layers
    assert slow.comm_total - fast.comm_total == pytest.approx(layers * 2 * 7 * 1e-4)


@settings(max_examples=25, deadline=None)
@given(
    model=st.sampled_from(["resnet50", "vgg16", "bert_base", "alexnet"]),
    n=st.integers(1, 64),
    gbps=st.floats(0.1, 100),
    t_backward=st.floats(0.0, 1.0),
    cap_mib=st.floats(0, 200),
    latency=st.floats(0, 1e-3),
)
def test_timeline_invariants(model, n, gbps, t_backward, cap_mib, latency):
    r = overlap.overlap_timeline(model, n=n, bandwidth=gbps * 1e9, t_backward=t_backward,
                                 bucket_bytes=cap_mib * 2**20, latency=latency)
    tol = 1e-9
    assert r.hidden + r.exposed == pytest.approx(r.comm_total, abs=tol)
    assert 0.0 <= r.hidden_fraction <= 1.0 + tol
    assert r.t_end >= max(r.t_backward, r.comm_total) - tol
    assert r.t_end <= r.t_backward + r.comm_total + tol
    assert r.exposed >= r.buckets[-1].duration - tol        # the input layer's bucket waits for the end
    for a, b in zip(r.buckets, r.buckets[1:]):
        assert b.start >= a.end - tol and b.ready >= a.ready - tol
    for b in r.buckets:
        assert b.start >= b.ready - tol
    assert r.t_backward == pytest.approx(t_backward)


@settings(max_examples=20, deadline=None)
@given(gbps=st.floats(0.1, 50), factor=st.floats(1.0, 10.0), t_backward=st.floats(0.0, 0.5))
def test_a_faster_network_never_exposes_more(gbps, factor, t_backward):
    slow = overlap.overlap_timeline("resnet50", bandwidth=gbps * 1e9, t_backward=t_backward)
    fast = overlap.overlap_timeline("resnet50", bandwidth=gbps * 1e9 * factor, t_backward=t_backward)
    assert fast.exposed <= slow.exposed + 1e-12


def test_bucketing_beats_no_overlap_and_sweep_has_one_result_per_cap():
    caps = [0, 1 * 2**20, 25 * 2**20, 1e12]
    runs = overlap.bucket_sweep(caps, model="resnet50", n=16, bandwidth=3.125e9, t_backward=0.15, latency=2e-5)
    assert len(runs) == len(caps)
    assert len(runs[-1].buckets) == 1
    assert [len(r.buckets) for r in runs] == sorted((len(r.buckets) for r in runs), reverse=True)
    assert runs[2].t_end < runs[-1].t_end        # 25 MiB buckets finish before one whole-gradient all-reduce


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n": 0}, "n"),
        ({"bandwidth": 0.0}, "bandwidth"),
        ({"t_backward": -1.0}, "t_backward"),
        ({"latency": -1e-6}, "latency"),
        ({"bucket_bytes": -1}, "bucket_bytes"),
        ({"model": "lenet"}, "model"),
        ({"dtype": "fp12"}, "dtype"),
        ({"algorithm": "carrier-pigeon"}, "algorithm"),
    ],
)
def test_overlap_timeline_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        overlap.overlap_timeline(**kwargs)


def test_fp16_halves_every_bucket_time_without_latency():
    a = overlap.overlap_timeline("bert_base", bandwidth=5e9, t_backward=0.0, dtype="fp32", bucket_bytes=1e12,
                                 first_bucket_bytes=None)
    b = overlap.overlap_timeline("bert_base", bandwidth=5e9, t_backward=0.0, dtype="fp16", bucket_bytes=1e12,
                                 first_bucket_bytes=None)
    assert b.comm_total == pytest.approx(a.comm_total / 2)


# --------------------------------------------------------------------------- the calculator's compute


def test_overlap_results_match_the_timeline():
    r = calculators.overlap_results(model="resnet50", n=16, link="eth_25g", bucket_mib=25.0, tflops=10.0, batch=32)
    link = hardware.link("eth_25g")
    t_fwd, t_bwd = overlap.step_compute_time("resnet50", 32, 10e12)
    ddp = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency,
                                   t_backward=t_bwd, t_forward=t_fwd)
    assert r["buckets (all-reduces)"] == str(len(ddp.buckets))
    assert f"{100 * ddp.hidden_fraction:.1f} %" in r["hidden behind backward"]
    assert all(isinstance(v, str) and v for v in r.values())


@pytest.mark.parametrize("bad, name", [({"n": 1}, "n"), ({"n": 2000}, "n"), ({"bucket_mib": -1.0}, r"bucket cap \(MiB\)"),
                                       ({"tflops": 0.0}, "achieved TFLOP/s"), ({"batch": 0}, "batch"),
                                       ({"model": "lenet"}, "model"), ({"link": "carrier pigeon"}, "link")])
def test_overlap_results_name_the_bad_parameter(bad, name):
    with pytest.raises(ValueError, match=name):
        calculators.overlap_results(**bad)


def test_overlap_module_runs_without_numpy():
    """The calculator runs in the browser (Pyodide, no numpy): commlib.sgd.overlap must not import it."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['numpy'] = None; from commlib.sgd import calculators; "
            "print(calculators.overlap_results()['buckets (all-reduces)'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().isdigit()


def test_schedule_names_mismatched_lengths():
    import pytest as _pytest
    with _pytest.raises(ValueError, match="ready and nbytes"):
        overlap.schedule([1.0], [1, 2], lambda m: 1.0)


def test_the_exposed_time_is_at_least_the_communication_backward_cannot_hide():
    """Overlap hides at most the backward time: exposed >= T_m - T_bwd, and >= the input-side bucket's all-reduce.
    Over a link slower than backward the stream never pauses and the bound is met (the chapter's example)."""
    from commlib import hardware

    link = hardware.link("eth_25g")
    for flops in (5e12, 10e12, 40e12, 400e12):
        t_fwd, t_bwd = overlap.step_compute_time("resnet50", 32, flops)
        for cap in (0, 4 * 2**20, overlap.DDP_BUCKET_BYTES, 200 * 2**20):
            r = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency,
                                         t_backward=t_bwd, bucket_bytes=cap)
            assert r.exposed >= r.exposed_floor - 1e-12
            assert r.exposed_floor >= r.comm_total - r.t_backward and r.exposed_floor >= r.buckets[-1].duration
    _, t_bwd = overlap.step_compute_time("resnet50", 32, 10e12)
    r = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency, t_backward=t_bwd)
    assert r.comm_total > r.t_backward and r.idle == pytest.approx(0.0, abs=1e-12)
    assert r.exposed == pytest.approx(r.buckets[0].start + r.comm_total - r.t_backward)
    _, t_fast = overlap.step_compute_time("resnet50", 32, 20e12)
    fast = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency,
                                    t_backward=t_fast)
    assert fast.exposed > r.exposed                               # faster compute, more left in the open


def test_overlapping_forward_floor_lies_below_ddp_and_above_each_resource():
    link = hardware.link("eth_25g")
    t_fwd, t_bwd = overlap.step_compute_time("resnet50", 32, 10e12)
    r = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency,
                                 t_backward=t_bwd, t_forward=t_fwd)
    floor = overlap.step_floor_overlapping_forward(r.t_forward, r.t_backward, r.comm_total)
    # DDP exposes at least the input-side bucket's all-reduce, which a scheduler overlapping the next forward need not
    assert r.t_forward + r.t_backward <= floor < r.iteration_time
    assert floor >= r.comm_total
    with pytest.raises(ValueError, match="comm_total"):
        overlap.step_floor_overlapping_forward(0.01, 0.02, -1.0)


def test_required_bandwidth_overlapped_meets_the_target_and_never_exceeds_no_overlap():
    """The bandwidth found reaches the step T_c / eps (a little less does not), and with alpha = 0 overlap never
    needs more than the all-reduce after backward (commlib.step.cost.required_bandwidth, the same exact bytes)."""
    from commlib.step import cost as step_cost

    tc, eps, n = 0.55, 0.9, 4
    need = overlap.required_bandwidth_overlapped("vgg16", n, tc, eps)
    tf = tc / 3

    def step(b):
        return overlap.overlap_timeline("vgg16", n, b, tc - tf, t_forward=tf).iteration_time

    assert step(need) <= tc / eps < step(0.999 * need)
    plain = step_cost.required_bandwidth(hardware.gradient_bytes("vgg16", "fp32"), n, tc, eps)
    assert need < plain
    # the start-up wall is the one without overlap: the last bucket waits for the end of backward
    wall = step_cost.largest_ranks_for_efficiency(tc, eps, 50e-6)
    assert math.isfinite(overlap.required_bandwidth_overlapped("vgg16", wall, tc, eps, 50e-6))
    assert overlap.required_bandwidth_overlapped("vgg16", wall + 1, tc, eps, 50e-6) == math.inf
    with pytest.raises(ValueError, match="efficiency"):
        overlap.required_bandwidth_overlapped("vgg16", n, tc, 1.0)
