"""commlib.lab.torch_ddp: a DDP step against chapter 5's overlap model, out of sample.

The analysis is tested on made-up runs whose answer is known (no contention: the model is exact; contention: it is
too fast, and says why), on the stored reference run, and, where PyTorch is installed, on a tiny live run whose
structure (not its speed) is checked.
"""

import json
from dataclasses import asdict

import pytest

from commlib.lab import plan, torch_ddp
from commlib.lab.fit import collective_time_ab
from commlib.sgd.overlap import assign_buckets, schedule
from commlib.views import lab as lab_views

SMALL = torch_ddp.Setup(layers=4, width=256, batch=8, bucket_mib=0.25, steps=5, warmup=2,
                        gloo_sizes=(2**12, 2**16, 2**20), gloo_repeats=3)
ALPHA, BETA = 200e-6, 1e-9  # s, s/byte
LAYER_BACKWARD = 5e-3       # s of backward a layer


def _doc(setup, backward_stretch=1.0, comm_stretch=1.0, spread=0.02, wrong_buckets=False):
    """A made-up run of ``setup`` on two ranks: each layer's backward takes LAYER_BACKWARD (times
    ``backward_stretch`` in DDP steps), gloo's all-reduce alone takes the alpha-beta time (times ``comm_stretch``
    during DDP steps), and every step is scaled by 1 + ``spread`` * k for k = -2..2 so the quartiles have width."""
    sizes = list(reversed(setup.param_bytes()))
    groups = torch_ddp.bucket_groups(setup)
    gloo = {"schema": "commlib.lab.measure/2", "ranks": 2, "impl": "torch_gloo", "results": [
        {"op": "all_reduce", "impl": "torch_gloo", "nbytes": s, "count": s // 4, "repeats": 3,
         "median_s": collective_time_ab("all_reduce", s, 2, ALPHA, BETA), "q1_s": None, "q3_s": None,
         "samples_s": [collective_time_ab("all_reduce", s, 2, ALPHA, BETA)] * 3} for s in setup.gloo_sizes]}
    for r in gloo["results"]:
        r["q1_s"] = r["q3_s"] = r["min_s"] = r["max_s"] = r["median_s"]

    def record(kind, scale):
        stretch = backward_stretch if kind == "ddp" else 1.0
        ready = [scale * stretch * LAYER_BACKWARD * (i // 2 + 1) for i in range(len(sizes))]
        end_compute = ready[-1]
        rec = {"kind": kind, "forward": scale * 0.01, "ready": ready, "launch": [], "allreduce": [],
               "bucket_numel": []}
        if kind == "ddp":
            bucket_ready = [max(ready[i] for i in g) for g in groups]
            nbytes = [sum(sizes[i] for i in g) for g in groups]
            if wrong_buckets:
                nbytes = nbytes[::-1][:-1] + [nbytes[0] + 4]
            slots = schedule(bucket_ready, nbytes,
                             lambda m: comm_stretch * collective_time_ab("all_reduce", m, 2, ALPHA, BETA))
            rec.update(launch=bucket_ready, allreduce=[list(s) for s in slots], bucket_numel=[m // 4 for m in nbytes])
            rec["backward"] = max(end_compute, slots[-1][1])
        else:
            rec["backward"] = end_compute
        return rec

    steps = [record(kind, 1 + spread * k) for k in (-2, -1, 0, 1, 2) for kind in ("ddp", "local")]
    return {"schema": torch_ddp.SCHEMA, "ranks": 2, "torch": "test", "date": "2026-11-27", "cpu_count": 2,
            "load_average_before": 0.1, "setup": json.loads(json.dumps(asdict(setup))),
            "param_bytes": list(setup.param_bytes()), "steps": [steps, steps], "gloo": gloo,
            "machine": {"cpu_model": "test", "cpu_count": 2, "memory_bytes": 8e9}}


def test_setup_refuses_what_cannot_run():
    for bad in (dict(layers=0), dict(warmup=1), dict(gloo_sizes=(4096,)), dict(bucket_mib=0), dict(steps=0)):
        with pytest.raises(ValueError):
            torch_ddp.Setup(**bad)


def test_buckets_follow_chapter_5s_rule():
    # reversed parameters (bias before weight); a bucket_cap_mb given explicitly caps the first bucket too
    assert torch_ddp.bucket_groups(torch_ddp.SETUP) == [[2 * k, 2 * k + 1] for k in range(8)]
    wide = torch_ddp.Setup(bucket_mib=16)
    sizes = list(reversed(wide.param_bytes()))
    assert torch_ddp.bucket_groups(wide) == assign_buckets(sizes, 16 * 2**20)
    assert [len(g) for g in torch_ddp.bucket_groups(wide)] == [8, 8]  # four 4 MiB layers and their biases each


def test_without_contention_the_model_is_exact():
    c = torch_ddp.compare(_doc(SMALL))
    assert c.prediction.fit.alpha == pytest.approx(ALPHA, rel=1e-6)
    assert c.step_error == pytest.approx(0.0, abs=1e-9)
    assert c.comm_stretch == pytest.approx(1.0, rel=1e-9)
    assert c.measurement.in_flight == 1 and c.exposed_within_spread
    words = lab_views.ddp_sentences(c, _doc(SMALL))
    assert "within the middle half" in words["verdict"] and words["why"].startswith("Neither")


def test_contention_makes_the_model_too_fast_and_the_words_say_why():
    doc = _doc(SMALL, backward_stretch=1.5, comm_stretch=3.0)
    c = torch_ddp.compare(doc)
    assert c.step_error < -0.1 and c.exposed_miss > 0
    assert c.comm_stretch == pytest.approx(3.0, rel=0.01)
    assert c.measurement.slowdown_backward == pytest.approx(0.5 * c.prediction.t_backward, rel=1e-6)
    words = lab_views.ddp_sentences(c, doc)
    assert "too fast" in words["verdict"] and "took turns" in words["why"] and "3.0 times" in words["why"]


def test_buckets_that_are_not_the_models_are_caught():
    assert torch_ddp.buckets_agree(_doc(SMALL))
    assert not torch_ddp.buckets_agree(_doc(SMALL, wrong_buckets=True))
    assert "not DDP's" in lab_views.ddp_sentences(torch_ddp.compare(_doc(SMALL)), _doc(SMALL, wrong_buckets=True))[
        "buckets"]


def test_the_stored_run_is_the_plans_and_reads_consistently():
    doc = plan.stored()["ddp"]
    assert doc["schema"] == torch_ddp.SCHEMA and doc["ranks"] == 2
    assert torch_ddp.Setup.from_dict(doc["setup"]) == torch_ddp.SETUP
    assert torch_ddp.buckets_agree(doc)
    assert all(len(ranks) == 2 * torch_ddp.SETUP.steps for ranks in doc["steps"])
    c = torch_ddp.compare(doc)
    p = c.prediction
    # the schedule's own rules: each all-reduce starts once its bucket is ready and the previous one is done
    assert all(s >= r for (s, _), r in zip(p.slots, p.ready))
    assert all(s1 >= e0 for (_, e0), (s1, _) in zip(p.slots, p.slots[1:]))
    assert list(p.ready) == sorted(p.ready) and p.exposed >= 0
    lo, mid, hi = c.measurement.step_ddp_q
    assert lo <= mid <= hi
    fig = lab_views.ddp_timeline_figure(c)
    assert len(fig.axes[0].get_yticks()) >= 4


@pytest.mark.skipif(not torch_ddp.available(), reason="PyTorch is not installed")
def test_a_tiny_live_run_has_the_structure_the_analysis_reads():
    tiny = torch_ddp.Setup(layers=2, width=64, batch=4, bucket_mib=0.01, steps=2, warmup=2,
                           gloo_sizes=(1024, 4096), gloo_repeats=2)
    doc = torch_ddp.run(tiny, timeout=240)
    assert doc["schema"] == torch_ddp.SCHEMA and len(doc["steps"]) == 2
    assert [r["kind"] for r in doc["steps"][0]] == ["ddp", "local"] * 2
    assert torch_ddp.buckets_agree(doc)
    assert all(len(r["ready"]) == 4 for r in doc["steps"][0])
    assert torch_ddp.compare(doc).measurement.in_flight >= 1
