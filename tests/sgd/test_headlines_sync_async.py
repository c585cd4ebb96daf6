"""Chapter 4's short headlines and small tables: they follow the verdict they summarise, with no run behind them.

Each test builds a verdict by hand (the claim's own contenders and settings, chosen values per seed) and
checks that the headline the prose quotes beside a table says what the values say, and turns when they turn.
"""

from __future__ import annotations

from commlib.experiments import claims
from commlib.experiments.sgd import tuned_races
from commlib.views.sgd import sync_async as views


def _verdict(claim: claims.Claim, values: dict[str, tuple[float, ...]], configs: dict[str, dict]) -> claims.Verdict:
    """The verdict :func:`claims.run` would return had every contender's best run given ``values``."""
    toy = claims.Claim(claim.key, claim.question,
                       tuple(claims.Contender(n, lambda s, seed, v=v: v[seed], {}) for n, v in values.items()),
                       metric=claim.metric, seeds=tuple(range(len(next(iter(values.values()))))),
                       lower_is_better=claim.lower_is_better, shared=claim.shared, wording=claim.wording,
                       headline=claim.headline)
    v = claims.run(toy)
    best = {n: claims.Best(configs[n], b.values, ()) for n, b in v.best.items()}
    return claims.Verdict(toy, best, v.winner, v.runner_up, v.margin, v.spread, v.wins)


def test_two_way_headline_names_the_winner_or_calls_a_level_race():
    c = tuned_races.async_vs_sync(small=True)
    a, s = (x.name for x in c.contenders)
    cfg = {a: {"lr": 0.05}, s: {"lr": 1.0}}
    apart = _verdict(c, {a: (0.540, 0.541, 0.542, 0.541, 0.540), s: (0.560, 0.561, 0.559, 0.560, 0.562)}, cfg)
    assert apart.headline == f"{a} ends lower on all 5 seeds"
    assert "0.54" not in apart.headline and "0.54" in apart.sentence    # the numbers stay in the table and wording
    level = _verdict(c, {a: (0.540, 0.552, 0.541, 0.553, 0.546), s: (0.547, 0.546, 0.548, 0.545, 0.549)}, cfg)
    assert level.headline.endswith("end level")
    # ahead on every seed, by less than either one's spread: the winner is named, and the margin beside it
    close = _verdict(c, {a: (0.540, 0.550, 0.545, 0.555, 0.548), s: (0.5403, 0.5503, 0.5453, 0.5553, 0.5483)}, cfg)
    assert close.headline.startswith(f"{a} ends lower on all 5 seeds, but by 0.000")


def test_ranking_headline_splits_level_from_higher():
    c = tuned_races.k_tradeoff(small=True)
    names = [x.name for x in c.contenders]
    rows = [(0.5450, 0.5460, 0.5440, 0.5455, 0.5445), (0.5455, 0.5445, 0.5450, 0.5460, 0.5441),
            (0.5447, 0.5452, 0.5462, 0.5443, 0.5451), (0.5550, 0.5560, 0.5540, 0.5555, 0.5545),
            (0.5650, 0.5660, 0.5640, 0.5655, 0.5645)]
    values = dict(zip(names, rows))
    v = _verdict(c, values, {n: {"lr": 0.1} for n in names})
    assert v.headline == (f"{names[0]}, {names[1]} and {names[2]} end level; {names[3]} and {names[4]} end higher")


def test_batch_sync_headline_and_ratio():
    c = tuned_races.batch_sync(small=True)
    fast, slow = (x.name for x in c.contenders)
    v = _verdict(c, {fast: (18.0, 19.0, 20.0, 21.0, 24.0), slow: (20.0, 21.0, 22.0, 23.0, 22.0)},
                 {fast: {"lr": 1.0}, slow: {"lr": 1.0}})
    assert v.headline == "K-batch-sync and K-sync reach the target level"      # 4 of 5: not decided (a sign test)
    ahead = _verdict(c, {fast: (18.0, 19.0, 20.0, 21.0, 21.0), slow: (20.0, 21.0, 22.0, 23.0, 22.0)},
                     {fast: {"lr": 1.0}, slow: {"lr": 1.0}})
    assert ahead.headline == "K-batch-sync reaches the target first on all 5 seeds, by 1.8 ± 0.4 mean compute times"
    assert tuned_races.batch_sync_ratio(v) == sorted(a / b for a, b in zip(v.best[fast].values, v.best[slow].values))[2]


def test_warm_headline_turns_with_the_runs():
    c = tuned_races.warmup_k128(small=True)
    cfg = {"warm-up": {"warmup_steps": 3}, "no warm-up": {}}
    level = _verdict(c, {"warm-up": (0.6, 0.7, 0.65, 0.8, 0.6), "no warm-up": (0.7, 0.6, 0.75, 0.62, 0.7)}, cfg)
    assert level.headline == "warm-up and no warm-up end level"
    apart = _verdict(c, {"warm-up": (0.60, 0.61, 0.62, 0.60, 0.61), "no warm-up": (0.9, 0.95, 0.92, 0.91, 0.93)}, cfg)
    assert apart.headline == "warm-up ends lower on all 5 seeds"
    table = views.warmup_verdict_table({128: level, 256: apart}, tuned_races.WARMUP_STEPS).data
    assert "length tuned over 1, 2, 3, 5, 8 steps" in table and "warmup_steps" not in table   # the best length unnamed
    assert "lower on 5 of 5 seeds" in table


def test_shared_rate_short_and_rows_follow_the_order():
    turns = {0.01: 0, 0.1: 0, 0.5: 5, 1.0: 5}
    assert tuned_races.shared_rate_short(turns, 5) == ("asynchronous SGD ends below fully synchronous SGD on every "
                                                       "seed at rates up to 0.1 and above it from 0.5")
    assert tuned_races.shared_rate_rows(turns, 5) == [
        ["asynchronous SGD ends below fully synchronous SGD on every seed", "0.01, 0.1"],
        ["asynchronous SGD ends above fully synchronous SGD on every seed", "0.5, 1"]]
    split = {0.01: 0, 0.1: 3, 0.5: 5}
    assert tuned_races.shared_rate_short(split, 5) == "which of the two ends lower depends on the shared rate"
    assert tuned_races.shared_rate_rows(split, 5)[-1] == ["asynchronous SGD ends the seeds split", "0.1"]


def test_time_headline_groups_what_the_seeds_decide():
    c = tuned_races.law_race_pareto(small=True)
    names = [x.name for x in c.contenders]            # K-sync, K-batch-sync, K-async, K-batch-async
    cfg = {n: {"K": 8, "rate per gradient": 0.18} for n in names}
    times = {names[0]: (60.0, 62.0, 58.0, 61.0, 59.0), names[1]: (50.0, 52.0, 49.0, 51.0, 50.0),
             names[2]: (31.0, 33.0, 30.0, 32.0, 34.0), names[3]: (30.0, 32.0, 31.0, 31.0, 33.0)}
    v = _verdict(c, times, cfg)
    # names[3] ahead of names[2] on only 4 of 5 seeds: level; the rest apart on every seed, by more than the spacing
    assert v.headline == f"{names[3]} and {names[2]} first (level), then {names[1]}, then {names[0]}"
    close = dict(times)
    close[names[1]] = tuple(t - 1.0 for t in times[names[0]])     # one second ahead of K-sync: below the spacing
    assert _verdict(c, close, cfg).headline == f"{names[3]} and {names[2]} first (level), then {names[1]} and {names[0]} (level)"
