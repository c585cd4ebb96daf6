"""Claim tests for chapter 4: every conclusion rerun small and seeded, against its control.

Each test reruns the experiment behind a sentence of chapter 4 (smaller budgets, several seeds where
noise could decide) and asserts the direction of the effect against the control the chapter shows.
"""

from __future__ import annotations

import math

import pytest

from commlib.experiments.sgd import sync_async
from commlib.sgd import calculators as sgd_calculators
from commlib.sgd import simulate as sgd
from commlib.sgd import training

PROBLEM = training.make_problem(seed=0)
SHIFTED = sync_async.UPDATE_TIME_LAWS["shifted_exponential"]
PARETO = sync_async.UPDATE_TIME_LAWS["pareto"]


# ------------------------------------------------------------------ expected time per update (Dutta et al.)

@pytest.fixture(scope="module")
def update_rows():
    return {r["key"]: r for r in sync_async.update_time_rows(workers=16, k=4, updates=8000, seed=0)}


def test_every_closed_form_matches_its_simulation(update_rows):
    for row in update_rows.values():
        for law in sync_async.UPDATE_TIME_LAWS:
            closed = row[f"{law} closed"]
            if closed is not None:
                assert row[f"{law} simulated"] == pytest.approx(closed, rel=0.04), (row["key"], law)


def test_closed_forms_exist_exactly_where_the_chapter_says():
    for protocol in sgd.PROTOCOLS:
        k = None if protocol in ("sync", "async") else 4
        assert sync_async.closed_form_update_time(protocol, 16, k, "exponential") is not None
        has = sync_async.closed_form_update_time(protocol, 16, k, "shifted_exponential", **SHIFTED) is not None
        assert has == (protocol not in ("k_async", "k_batch_sync"))


def test_issue_numbers_for_the_shifted_exponential(update_rows):
    assert update_rows["k_sync"]["shifted_exponential simulated"] == pytest.approx(1.28, abs=0.02)
    assert update_rows["k_async"]["shifted_exponential simulated"] == pytest.approx(0.55, abs=0.02)
    assert update_rows["k_batch_async"]["shifted_exponential simulated"] == pytest.approx(0.50, abs=0.02)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k_sync_and_k_async_tie_under_exponential_times_only(seed):
    """The chapter's explanation: memoryless residual times make K-async wait as long as K-sync."""
    t = {law: {p: sgd.simulate(p, 16, k=4, compute=law, updates=4000, seed=seed, **params).mean_time_per_update
               for p in ("k_sync", "k_async")}
         for law, params in (("exponential", {}), ("shifted_exponential", SHIFTED), ("pareto", PARETO))}
    assert t["exponential"]["k_async"] == pytest.approx(t["exponential"]["k_sync"], rel=0.04)
    assert t["shifted_exponential"]["k_async"] < 0.5 * t["shifted_exponential"]["k_sync"]
    assert t["pareto"]["k_async"] < 0.5 * t["pareto"]["k_sync"]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("law", ["shifted_exponential", "pareto"])
def test_slow_and_stale_gradients_win_the_race(law, seed):
    """An asynchronous K-protocol reaches K-sync's final loss first (control: K-sync, same budget and rate)."""
    configs = [("k_sync", 4), ("k_async", 4), ("k_batch_async", 4)]
    runs = {law: sync_async.law_time_runs(configs, 16, 100.0, law, lr=0.5, batch_size=8, seed=seed, problem=PROBLEM)}
    phrases = sync_async.law_race_phrases(runs, 100.0)
    assert phrases[law].startswith(("K-async", "K-batch-async"))
    target = sync_async.tail_mean(runs[law]["K-sync (K = 4)"], window=0.25, end=100.0)
    t_sync = sync_async.time_to_loss(runs[law]["K-sync (K = 4)"], target)
    t_async = min(sync_async.time_to_loss(runs[law][f"{p} (K = 4)"], target) for p in ("K-async", "K-batch-async"))
    assert t_async < 0.8 * t_sync


def test_k_batch_sync_claim_is_law_dependent():
    """Note 002's claim: K-batch-sync reaches K-sync's loss sooner. True under exponential times in
    every seed; under the shifted exponential no learner has time for a second mini-batch, so no gain."""
    races = sync_async.batch_sync_races(laws=("exponential", "shifted_exponential"), seeds=(0, 1, 2), budget=60.0,
                                        lr=0.5, batch_size=8, problem=PROBLEM)
    for ks, kb in races["exponential"]:
        assert kb < ks
    for ks, kb in races["shifted_exponential"]:   # the same schedule: only mini-batch noise differs
        assert kb == pytest.approx(ks, rel=0.05)
    verdict = sync_async.batch_sync_verdict(races)
    assert verdict["laws"]["exponential"].startswith("faster in")
    assert not verdict["laws"]["shifted exponential"].startswith("faster in all")
    assert verdict["overall"] != "holds under every law tried"
    kbs = sgd.simulate("k_batch_sync", 16, k=4, compute="shifted_exponential", updates=2000, seed=0, **SHIFTED)
    assert sync_async.repeat_share(kbs) == 0.0
    kbe = sgd.simulate("k_batch_sync", 16, k=4, compute="exponential", updates=2000, seed=0)
    assert sync_async.repeat_share(kbe) > 0.2


def test_batch_sync_verdict_says_mixed_when_mixed():
    v = sync_async.batch_sync_verdict({"exponential": [(10.0, 8.0), (10.0, 12.0)]})
    assert v["laws"]["exponential"].startswith("mixed") and "mixed" in v["overall"]
    v = sync_async.batch_sync_verdict({"exponential": [(10.0, 8.0)], "pareto": [(10.0, 9.0)]})
    assert v["overall"] == "holds under every law tried"
    v = sync_async.batch_sync_verdict({"exponential": [(10.0, 8.0), (10.0, 9.9)]})
    assert v["laws"]["exponential"].startswith("faster in 1 of 2") and v["overall"] == "holds under every law tried"


# ------------------------------------------------------------------ the higher error floor, split

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_async_floor_is_part_batch_noise_part_staleness(seed):
    """Control: one learner, never stale, same rate and batch, as many updates as asynchronous SGD."""
    split = sync_async.floor_split(workers=16, budget=250.0, lr=0.5, batch_size=8, seed=seed, problem=PROBLEM)
    lv = split["levels"]
    assert lv["sync"] < lv["single"] < lv["async"]
    assert split["noise"] > 0.2 * split["gap"] and split["staleness"] > 0.2 * split["gap"]
    assert split["noise"] + split["staleness"] == pytest.approx(split["gap"])


def test_floor_split_phrase_names_the_larger_part():
    text = sync_async.floor_split_phrase({"gap": 0.16, "noise": 0.12, "staleness": 0.04})
    assert text.startswith("most") and text.index("noise") < text.index("staleness")
    text = sync_async.floor_split_phrase({"gap": 0.16, "noise": 0.03, "staleness": 0.13})
    assert text.startswith("most of the gap (0.130") and "is staleness" in text.split(", and")[0]
    assert "no floor" in sync_async.floor_split_phrase({"gap": -0.01, "noise": 0.0, "staleness": -0.01})


# ------------------------------------------------------------------ warm-up and the linear scaling rule

@pytest.fixture(scope="module")
def warmup():
    return sync_async.warmup_rows(ks=(16, 128, 256), base_batch=8, base_lr=0.1, epochs=4.0, warmup_steps=3, seed=0,
                                  problem=PROBLEM)


def test_linear_rule_holds_at_small_k_and_breaks_at_128(warmup):
    """Control: the small batch at rate 0.1 for the same epochs."""
    rows = {r["k"]: r for r in warmup["rows"]}
    small = warmup["small"]
    assert rows[16]["no warm-up"] < 1.02 * small
    assert rows[128]["no warm-up"] > 1.3 * small
    assert rows[128]["no warm-up"] == pytest.approx(0.966, abs=0.01)
    assert rows[128]["warm-up"] == pytest.approx(0.615, abs=0.01)


def test_warm_up_helps_at_128_but_not_at_256(warmup):
    rows = {r["k"]: r for r in warmup["rows"]}
    assert rows[128]["warm-up"] < 0.8 * rows[128]["no warm-up"]
    assert rows[256]["warm-up"] > rows[256]["no warm-up"]
    phrases = sync_async.warmup_phrases(warmup)
    assert "k = 16" in phrases["holds"] and "k = 128" in phrases["breaks"]
    assert "k = 128$ warm-up closes" in phrases["buys"] and "k = 256$" in phrases["buys"]


@pytest.mark.parametrize("seed", [1, 2])
def test_warm_up_helps_where_the_rule_breaks_other_seeds(seed):
    r = sync_async.warmup_rows(ks=(128,), seed=seed, problem=PROBLEM)["rows"][0]
    assert r["warm-up"] < r["no warm-up"]


# ------------------------------------------------------------------ the calculator's computation

def test_sgd_results_reports_async_staleness_and_time():
    r = sgd_calculators.sgd_results("async", workers=4, k=1)
    assert float(r["mean staleness"].split()[0]) == pytest.approx(3.0, abs=0.5)
    assert float(r["mean time per update"].split()[0]) == pytest.approx(0.25, rel=0.3)
    assert math.isfinite(float(r["training loss after the run"].split()[0]))


@pytest.mark.parametrize("bad, name", [({"protocol": "x"}, "protocol"), ({"k": 99}, "K"), ({"workers": 0}, "workers"),
                                       ({"slowdown": 0.5}, "straggler"), ({"compute": "foo"}, "distribution")])
def test_sgd_results_names_the_bad_parameter(bad, name):
    with pytest.raises(ValueError, match=name):
        sgd_calculators.sgd_results(**bad)
