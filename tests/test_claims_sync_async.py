"""Chapter 4's conclusions, each rerun small and seeded against its control."""

from __future__ import annotations

import math

import pytest

from commlib import sgd, training
from commlib.experiments import summaries
from commlib.experiments import sync_async as sa

SHIFTED = sa.UPDATE_TIME_LAWS["shifted_exponential"]


@pytest.fixture(scope="module")
def problem():
    return training.make_problem(seed=0)


def test_closed_forms_match_the_simulated_time_per_update():
    rows = sa.update_time_rows(workers=8, k=2, updates=6000, seed=1)
    checked = [r for r in rows if r["closed form"] is not None]
    assert len(checked) >= 14          # all six under exponential, four under each other law
    for r in checked:
        assert r["simulated"] == pytest.approx(r["closed form"], rel=0.05), (r["law"], r["protocol"])


def test_k_sync_and_k_async_tie_under_exponential_times_but_not_under_a_shift():
    # Control: the exponential law, where memorylessness makes the two equal.
    expo = {p: sgd.simulate(p, 16, k=4, updates=8000, seed=0).mean_time_per_update for p in ("k_sync", "k_async")}
    shifted = {p: sgd.simulate(p, 16, k=4, updates=8000, seed=0, compute="shifted_exponential", **SHIFTED)
               .mean_time_per_update for p in ("k_sync", "k_async", "k_batch_async")}
    assert expo["k_async"] == pytest.approx(expo["k_sync"], rel=0.05)
    assert shifted["k_async"] < 0.6 * shifted["k_sync"]
    assert shifted["k_batch_async"] < 0.6 * shifted["k_sync"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k_async_reaches_k_syncs_loss_sooner_under_a_shifted_exponential(seed, problem):
    runs = sa.law_time_runs([("k_sync", 4), ("k_async", 4)], 16, 200.0, "shifted_exponential", SHIFTED,
                            problem=problem, seed=seed, lr=0.5, batch_size=8)
    ksync, kasync = runs.values()
    target = summaries.tail_mean(ksync, window=0.25)
    assert sa.time_to_loss(kasync, target) < sa.time_to_loss(ksync, target)
    assert sa.race_phrase(sa.time_to_loss(kasync, target), sa.time_to_loss(ksync, target)) == "reaches it sooner"


def test_k_batch_sync_waits_for_the_same_gradients_as_k_sync_behind_a_shift():
    a = sgd.simulate("k_sync", 16, k=4, updates=4000, seed=0, compute="shifted_exponential", **SHIFTED)
    b = sgd.simulate("k_batch_sync", 16, k=4, updates=4000, seed=0, compute="shifted_exponential", **SHIFTED)
    assert b.mean_time_per_update == pytest.approx(a.mean_time_per_update, rel=0.01)
    # with exponential times K-batch-sync is faster per update (K/(n mu) < E[X_K:n])
    e = sa.update_time_closed_form("k_batch_sync", 16, 4, "exponential", rate=1.0)
    assert e < sa.update_time_closed_form("k_sync", 16, 4, "exponential", rate=1.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_async_floor_is_partly_noise_partly_staleness(seed, problem):
    # Control: one learner with no staleness at the same rate and mini-batch.
    runs = sa.error_floor_runs(workers=16, budget=200.0, lr=0.5, batch_size=8, seed=seed, problem=problem)
    split = sa.error_floor_split(runs, workers=16)
    assert split["async"] > split["one"] > split["sync"]          # both parts are positive
    assert 0.2 < split["noise_share"] < 0.8
    assert sa.floor_phrase(split).startswith("the gap splits")


def test_floor_phrase_names_the_larger_part():
    assert sa.floor_phrase({"noise_share": 0.9, "gap": 0.1}).startswith("most of the gap is the noise")
    assert sa.floor_phrase({"noise_share": 0.1, "gap": 0.1}).startswith("most of the gap is staleness")
    assert sa.floor_phrase({"noise_share": math.nan, "gap": 0.0}).startswith("asynchronous SGD shows no")


def test_warm_up_helps_at_k128_on_average_and_hurts_at_k256(problem):
    # Controls: the small batch at the base rate, and the same large batch without warm-up; means over seeds.
    study = sa.warmup_study(problem=problem, ks=(128, 256), warmup_steps=3, seeds=(0, 1, 2, 3))
    s128, s256 = study[128], study[256]
    assert s128["none"] > s128["small"] + 0.05            # the linear rule breaks at k = 128
    assert s128["warm"] < s128["none"] - 0.05             # warm-up buys part of it back
    assert s128["phrase"].endswith("part of the loss, not all")
    assert s256["warm"] > s256["none"]                    # at k = 256 the rate is simply too large
    assert "worse" in s256["phrase"]


def test_at_k16_the_linear_rule_needs_no_warm_up(problem):
    runs = sa.warmup_runs(problem=problem, k=16, warmup_steps=3, seed=0)
    small, none, _ = (float(r.losses[-1]) for r in runs.values())
    assert none <= small + 0.02
    assert sa.warmup_phrase(none, none, small).startswith("the linear rule holds")
