"""Tests for commlib.experiments.sgd.overlap: the bucket-cap and link sweeps chapter 5's figures take as input."""

from __future__ import annotations

import pytest

from commlib import hardware
from commlib.experiments.sgd import overlap as overlap_experiments
from commlib.sgd import overlap


def test_bucket_cap_sweep_holds_one_timeline_per_latency_and_cap():
    caps = [0, 1, 25, 100]
    sw = overlap_experiments.bucket_cap_sweep(caps, latencies=(0.0, 1e-4), model="alexnet", n=4, bandwidth=1e9,
                                              t_backward=0.05)
    assert sw.caps_mib == (0.0, 1.0, 25.0, 100.0) and sw.latencies == (0.0, 1e-4)
    assert [len(row) for row in sw.runs] == [4, 4]
    for alpha, row in zip(sw.latencies, sw.runs):
        for cap, r in zip(caps, row):
            same = overlap.overlap_timeline("alexnet", n=4, bandwidth=1e9, t_backward=0.05, latency=alpha,
                                            bucket_bytes=cap * 2**20)      # DDP's 1 MiB first bucket
            assert r.exposed == same.exposed and len(r.buckets) == len(same.buckets)
    # latency is paid once per bucket: it never helps, and costs most where buckets are many
    extra = [b - a for a, b in zip(sw.exposed(0), sw.exposed(1))]
    assert all(e >= 0 for e in extra)
    assert extra[0] >= extra[-1]
    # larger caps mean fewer buckets
    counts = [len(r.buckets) for r in sw.runs[0]]
    assert counts == sorted(counts, reverse=True)


def test_bucket_cap_sweep_rejects_bad_input():
    with pytest.raises(ValueError, match="caps_mib"):
        overlap_experiments.bucket_cap_sweep([1, -2], model="alexnet")
    with pytest.raises(ValueError, match="latencies"):
        overlap_experiments.bucket_cap_sweep([1], latencies=(-1e-6,), model="alexnet")
    with pytest.raises(ValueError, match="caps_mib"):
        overlap_experiments.bucket_cap_sweep([], model="alexnet")


def test_link_sweep_uses_each_links_bandwidth_and_the_step_compute_time():
    links = ("eth_10g", "eth_100g", "nvlink2")
    sw = overlap_experiments.link_sweep("resnet50", n=16, links=links, tflops=10.0, batch=32)
    assert sw.model == "resnet50" and sw.n == 16 and tuple(sw.runs) == links
    t_fwd, t_bwd = overlap.step_compute_time("resnet50", 32, 10e12)
    for key, r in sw.runs.items():
        item = hardware.link(key)
        same = overlap.overlap_timeline("resnet50", n=16, bandwidth=item.bandwidth, latency=item.latency,
                                        t_backward=t_bwd, t_forward=t_fwd)
        assert r.t_backward == pytest.approx(t_bwd) and r.exposed == same.exposed
    exposed = [sw.runs[k].exposed for k in links]
    assert exposed == sorted(exposed, reverse=True)        # faster links leave less communication exposed


def test_link_sweep_rejects_bad_input():
    with pytest.raises(ValueError, match="tflops"):
        overlap_experiments.link_sweep(tflops=0.0)
    with pytest.raises(ValueError):
        overlap_experiments.link_sweep(links=("no_such_link",))


def test_the_bucket_sweep_keeps_ddps_first_bucket_so_its_25_mib_point_is_the_timeline():
    """Finding M5: the sweep at DDP's 25 MiB is DDP's timeline (first bucket 1 MiB), not a first bucket of 25 MiB."""
    from commlib import hardware
    from commlib.sgd import overlap

    link = hardware.link("eth_25g")
    _, t_bwd = overlap.step_compute_time("resnet50", 32, 10e12)
    sw = overlap_experiments.bucket_cap_sweep([25], latencies=(link.latency,), model="resnet50", n=16,
                                              bandwidth=link.bandwidth, t_backward=t_bwd)
    ddp = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency, t_backward=t_bwd)
    assert sw.exposed(0)[0] == pytest.approx(ddp.exposed)
    same = overlap_experiments.bucket_cap_sweep([25], latencies=(link.latency,), model="resnet50", n=16,
                                                bandwidth=link.bandwidth, t_backward=t_bwd, first_bucket_bytes=None)
    assert same.exposed(0)[0] != pytest.approx(ddp.exposed)      # a 25 MiB first bucket is another timeline
