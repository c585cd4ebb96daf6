"""commlib.lab.torch_ddp: a DDP step against chapter 5's overlap model, out of sample, with its controls.

The analysis is tested on made-up runs whose answer is known (no contention: the model is exact; contention: it is
too fast, and the words say where the time went), on the stored reference run, and, where PyTorch is installed, on
a tiny live run whose structure (not its speed) is checked.
"""

import json
from dataclasses import asdict

import pytest

from commlib.lab import plan, torch_ddp
from commlib.lab.fit import collective_time_ab
from commlib.sgd.overlap import assign_buckets, schedule
from commlib.views import lab as lab_views

SMALL = torch_ddp.Setup(layers=4, width=256, batch=8, bucket_mib=0.25, steps=5, warmup=2,
                        gloo_sizes=(2**16, 2**18, 2**20), gloo_repeats=3)
ALPHA, BETA = 200e-6, 1e-9  # s, s/byte
LAYER_BACKWARD = 5e-3       # s of backward a layer


def _ab(m):
    return collective_time_ab("all_reduce", m, 2, ALPHA, BETA)


def _doc(setup, backward_stretch=1.0, own_stretch=1.0, comm_stretch=1.0, skew=0.0, spread=0.02,
         wrong_buckets=False, one_stretch=None, one_comm_stretch=None):
    """A made-up run of ``setup`` on two ranks. Each layer's backward takes LAYER_BACKWARD, times
    ``backward_stretch`` in steps that communicate and ``own_stretch`` with the hook that returns at once; rank 1's
    gradients come ``skew`` later in steps that communicate; gloo's all-reduce alone takes the alpha-beta time,
    times ``comm_stretch`` during steps (``one_stretch`` and ``one_comm_stretch``, if given, in the one-bucket steps
    instead). Each step is scaled by 1 + ``spread`` * k for k = -2..2."""
    sizes = list(reversed(setup.param_bytes()))
    groups = torch_ddp.bucket_groups(setup)
    gloo = {"schema": "commlib.lab.measure/2", "ranks": 2, "impl": "torch_gloo", "results": [
        {"op": "all_reduce", "impl": "torch_gloo", "nbytes": s, "count": s // 4, "repeats": 3, "median_s": _ab(s),
         "q1_s": _ab(s), "q3_s": _ab(s), "min_s": _ab(s), "max_s": _ab(s), "samples_s": [_ab(s)] * 3}
        for s in setup.gloo_sizes]}

    def record(kind, scale, rank):
        stretch = {"local": 1.0, "ddp_noop": own_stretch,
                   "ddp_one": backward_stretch if one_stretch is None else one_stretch}.get(kind, backward_stretch)
        comm = comm_stretch if kind != "ddp_one" or one_comm_stretch is None else one_comm_stretch
        late = skew if kind in ("ddp", "ddp_one") and rank == 1 else 0.0
        ready = [scale * stretch * LAYER_BACKWARD * (i // 2 + 1) + late * (i + 1) / len(sizes)
                 for i in range(len(sizes))]
        rec = {"kind": kind, "forward": scale * 0.01, "ready": ready, "allreduce": [], "bucket_numel": [],
               "backward": ready[-1]}
        if kind in ("ddp", "ddp_one"):
            parts = groups if kind == "ddp" else [list(range(len(sizes)))]
            nbytes = [sum(sizes[i] for i in g) for g in parts]
            if wrong_buckets and kind == "ddp":
                nbytes = nbytes[::-1][:-1] + [nbytes[0] + 4]
            bucket_ready = [max(ready[i] for i in g) + skew * (rank == 0) * (i + 1) / len(parts)
                            for i, g in enumerate(parts)]  # rank 0 waits for rank 1's late gradients
            slots = schedule(bucket_ready, nbytes, lambda m: comm * _ab(m))
            rec.update(allreduce=[list(sl) for sl in slots], bucket_numel=[m // 4 for m in nbytes],
                       backward=max(ready[-1], slots[-1][1]))
        return rec

    steps = [[record(kind, 1 + spread * k, rank) for k in (-2, -1, 0, 1, 2) for kind in torch_ddp.KINDS]
             for rank in (0, 1)]
    return {"schema": torch_ddp.SCHEMA, "ranks": 2, "torch": "test", "date": "2026-11-27", "cpu_count": 2,
            "load_average_before": 0.1, "setup": json.loads(json.dumps(asdict(setup))),
            "param_bytes": list(setup.param_bytes()), "steps": steps, "gloo": gloo,
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
    doc = _doc(SMALL)
    c = torch_ddp.compare(doc)
    assert c.prediction.fit.alpha == pytest.approx(ALPHA, rel=1e-6)
    assert c.error("ddp") == pytest.approx(0.0, abs=1e-9) and c.error("ddp_one") == pytest.approx(0.0, abs=1e-9)
    assert c.measurement.bucket_wait == pytest.approx(c.prediction.bucket_wait, rel=1e-9)
    assert c.measurement.skew == pytest.approx(0.0, abs=1e-12) and c.measurement.in_flight == 1
    words = lab_views.ddp_sentences(c, doc)
    assert "within about 5 % of the measurement" in words["verdict"] and "about as fast as without them" in words["why_backward"]
    assert "shows no difference" in words["why_comm"] and "at once" not in words["why_comm"]


def test_contention_makes_the_model_too_fast_and_the_words_say_where_the_time_went():
    doc = _doc(SMALL, backward_stretch=1.6, own_stretch=1.1, comm_stretch=3.0, skew=0.01)
    c = torch_ddp.compare(doc)
    m = c.measurement
    assert c.error("ddp") < -0.1
    assert m.compute_end_noop < m.compute_end and m.skew == pytest.approx(0.01, rel=1e-6)
    assert m.bucket_wait > 2 * c.prediction.bucket_wait
    words = lab_views.ddp_sentences(c, doc)
    assert "shorter than measured" in words["verdict"] and "only where gloo ran during the backward" in words["why_backward"]
    assert "slowed one rank" in words["why_comm"]


def test_a_one_bucket_miss_made_of_ddps_own_work_is_accounted_for():
    # the one-bucket step slowed only by DDP's own work: added to the prediction, it lands within the measured steps
    doc = _doc(SMALL, backward_stretch=1.6, own_stretch=1.1, one_stretch=1.1, comm_stretch=3.0, one_comm_stretch=1.0)
    c = torch_ddp.compare(doc)
    assert c.prediction.whole_measured == pytest.approx(c.prediction.whole_time, rel=0.01)  # 1 MiB: within 5 %
    assert "lands close to the median" in lab_views.ddp_sentences(c, doc)["control_parts"]
    worse = _doc(SMALL, backward_stretch=1.6, own_stretch=1.1, one_stretch=1.5, comm_stretch=3.0)
    assert "stays outside" in lab_views.ddp_sentences(torch_ddp.compare(worse), worse)["control_parts"]


def test_the_words_follow_what_the_overlap_saved_turn_by_turn():
    doc = _doc(SMALL, comm_stretch=2.0)
    c = torch_ddp.compare(doc)
    assert c.measurement.gain_q[0] > 0 and c.measurement.gain_turns == c.measurement.turns
    assert "the overlap paid" in lab_views.ddp_sentences(c, doc)["overlap"]


def test_buckets_that_are_not_the_models_are_caught():
    assert torch_ddp.buckets_agree(_doc(SMALL))
    bad = _doc(SMALL, wrong_buckets=True)
    assert not torch_ddp.buckets_agree(bad)
    assert "not DDP's" in lab_views.ddp_sentences(torch_ddp.compare(_doc(SMALL)), bad)["buckets"]


def test_time_slice_bound_sizes_are_left_out_of_the_fit():
    doc = _doc(SMALL)
    r = doc["gloo"]["results"][0]
    r["q1_s"], r["q3_s"] = 0.1 * r["median_s"], 3 * r["median_s"]  # the middle half spans more than the median
    kept, left = torch_ddp.fit_sizes(doc)
    assert left == (float(SMALL.gloo_sizes[0]),) and kept == tuple(float(x) for x in SMALL.gloo_sizes[1:])
    assert "leaving out" in lab_views.ddp_sentences(torch_ddp.compare(doc), doc)["fit"]


def test_the_stored_run_is_the_plans_and_reads_consistently():
    doc = plan.stored()["ddp"]
    assert doc["schema"] == torch_ddp.SCHEMA and doc["ranks"] == 2 and doc["torch_threads"] == 1
    assert torch_ddp.Setup.from_dict(doc["setup"]) == torch_ddp.SETUP
    assert torch_ddp.buckets_agree(doc)
    assert all(len(ranks) == len(torch_ddp.KINDS) * torch_ddp.SETUP.steps for ranks in doc["steps"])
    c = torch_ddp.compare(doc)
    p = c.prediction
    # the schedule's own rules: each all-reduce starts once its bucket is ready and the previous one is done
    assert all(s >= r for (s, _), r in zip(p.slots, p.ready))
    assert all(s1 >= e0 for (_, e0), (s1, _) in zip(p.slots, p.slots[1:]))
    assert list(p.ready) == sorted(p.ready) and p.exposed >= 0
    for kind in torch_ddp.KINDS:
        lo, mid, hi = c.measurement.step_q[kind]
        assert lo <= mid <= hi
    fig = lab_views.ddp_timeline_figure(c)
    assert len(fig.axes[0].get_yticks()) >= 6  # the model's two rows and at least two for each rank


@pytest.mark.skipif(not torch_ddp.available(), reason="PyTorch is not installed")
def test_a_tiny_live_run_has_the_structure_the_analysis_reads():
    tiny = torch_ddp.Setup(layers=2, width=64, batch=4, bucket_mib=0.01, steps=2, warmup=2,
                           gloo_sizes=(1024, 4096), gloo_repeats=2)
    doc = torch_ddp.run(tiny, timeout=240)
    assert doc["schema"] == torch_ddp.SCHEMA and len(doc["steps"]) == 2
    assert [r["kind"] for r in doc["steps"][0]] == list(torch_ddp.KINDS) * 2
    assert torch_ddp.buckets_agree(doc)
    one = [r for r in doc["steps"][0] if r["kind"] == "ddp_one"]
    assert all(4 * sum(r["bucket_numel"]) == sum(tiny.param_bytes()) and len(r["bucket_numel"]) == 1 for r in one)
    assert all(not r["allreduce"] for r in doc["steps"][0] if r["kind"] in ("local", "ddp_noop"))
    assert all(len(r["ready"]) == 4 for r in doc["steps"][0])


def test_the_spread_over_runs_is_read_from_every_run():
    runs = [torch_ddp.compare(_doc(SMALL, backward_stretch=b, comm_stretch=3.0)) for b in (1.4, 1.6, 1.8)]
    errors = sorted(round(100 * abs(c.error("ddp")) / 5) * 5 for c in runs)
    words = lab_views.ddp_runs_words(runs, _doc(SMALL))
    assert errors[0] < errors[-1] and f"{errors[0]} to {errors[-1]} %" in words["runs"]
    assert "three times" in words["runs"] and "eight" not in words["takeaway"]  # SMALL has four buckets
    assert "four buckets" in words["takeaway"]
    with pytest.raises(ValueError):
        lab_views.ddp_runs_words([], _doc(SMALL))


def test_the_stored_repeats_are_the_same_measurement():
    stored = plan.stored()
    for name in plan.DDP_AGAIN:
        assert stored[name]["setup"] == stored["ddp"]["setup"] and torch_ddp.buckets_agree(stored[name])


def test_a_run_whose_steps_spread_too_widely_says_it_ranks_nothing():
    doc = _doc(SMALL)
    assert lab_views.ddp_sentences(torch_ddp.compare(doc), doc)["noise"] == ""
    for ranks in doc["steps"]:
        local = [r for r in ranks if r["kind"] == "local"]
        for r in local[3:]:  # two of five turns slowed fiftyfold: the middle half spans far more than the median
            r["forward"] *= 50
    words = lab_views.ddp_sentences(torch_ddp.compare(doc), doc)
    assert "no_sync" in words["noise"] and "rank nothing" in words["noise"]


def test_the_runs_table_has_a_row_per_run():
    runs = [torch_ddp.compare(_doc(SMALL, backward_stretch=b)) for b in (1.2, 1.4)]
    table = lab_views.ddp_runs_table(runs).data
    assert table.count("\n| ") == 3 and "| 2 |" in table  # after the header: the rule and two rows
    with pytest.raises(ValueError):
        lab_views.ddp_runs_table([])


def test_the_cores_table_moves_a_row_only_where_every_run_lies_beyond_every_other():
    slow = [torch_ddp.compare(_doc(SMALL, backward_stretch=b)) for b in (1.4, 1.45)]
    fast = [torch_ddp.compare(_doc(SMALL, backward_stretch=b)) for b in (1.1, 1.15)]
    mixed = [torch_ddp.compare(_doc(SMALL, backward_stretch=b)) for b in (1.1, 1.5)]
    row = "the backward's last gradient ready, overlapped step"

    def verdict(table):
        line = next(x for x in table.data.splitlines() if x.startswith(f"| {row} |"))
        return line.rstrip(" |").rsplit("| ", 1)[1]

    assert verdict(lab_views.ddp_cores_table(slow, fast)) == "down"
    assert verdict(lab_views.ddp_cores_table(fast, slow)) == "up"
    # one run of the four on either side of the other two: no clear change (the control)
    assert verdict(lab_views.ddp_cores_table(slow, mixed)) == "no clear change"
    with pytest.raises(ValueError):
        lab_views.ddp_cores_table([], slow)
    # how often a row that did not move reads as moved: 2 of the C(4, 2) = 6 orders of two runs against two
    assert "once in 3 rows" in lab_views.ddp_cores_table(slow, fast).data
