"""Chapter 4's short headlines and small tables: they follow the verdict they summarise, with no run behind them.

Each test builds a verdict by hand (the claim's own contenders and settings, chosen values per seed) and
checks that the headline the prose quotes beside a table says what the values say, and turns when they turn.
"""

from __future__ import annotations

import pytest

from commlib.experiments import claims
from commlib.experiments.sgd import sync_async, tuned_races
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
    assert close.headline.startswith(f"{a} ends lower on all 5 seeds, by 0.00030 ± 0.00000 nats seed by seed: "
                                     "consistent, though less than either one's spread")


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
    assert v.headline == "K-batch-sync and K-sync are level in time to the target"      # 4 of 5: not decided (a sign test)
    ahead = _verdict(c, {fast: (18.0, 19.0, 20.0, 21.0, 21.0), slow: (20.0, 21.0, 22.0, 23.0, 22.0)},
                     {fast: {"lr": 1.0}, slow: {"lr": 1.0}})
    assert ahead.headline == "K-batch-sync reaches the target first on all 5 seeds, by 1.8 ± 0.4 mean compute times"
    assert tuned_races.batch_sync_ratio(v) == sorted(a / b for a, b in zip(v.best[fast].values, v.best[slow].values))[2]
    # level: the ratio of the times per update is the fact; the race's ratios are quoted as their range, no median
    words = tuned_races.batch_sync_ratio_words(v, 0.9)
    assert words.startswith("K-batch-sync's time per update is 0.90 of K-sync's (closed form), a gain of 10 % per "
                            "update, but the race over 5 seeds cannot resolve a gap of that size: seed by seed, "
                            "K-batch-sync's time to the target is 0.90 to 1.09 of K-sync's. The argument settles the "
                            "comparison, not the race: ")
    assert "Wald's identity" in words
    # decided, by more than the gap's spread: the race's median ratio beside the ratio per update
    apart = _verdict(c, {fast: (18.0, 19.0, 20.0, 21.0, 21.0), slow: (20.0, 21.0, 22.0, 23.5, 23.0)},
                     {fast: {"lr": 1.0}, slow: {"lr": 1.0}})
    assert (f"in the race K-batch-sync's time to the target is {tuned_races.batch_sync_ratio(apart):.2f} of K-sync's "
            "(median over the 5 seeds). The argument settles") in tuned_races.batch_sync_ratio_words(apart, 0.9)


def test_race_short_words_say_whether_test_error_tells_the_two_apart():
    """The takeaway's test-error clause follows the sign test over the held-out seeds (ch04.async_vs_sync_error),
    the rule of every verdict, not a multiple of the spread."""
    c = tuned_races.async_vs_sync(small=True)
    e = tuned_races.async_vs_sync_error(small=True)
    a, s = (x.name for x in c.contenders)
    assert [x.name for x in e.contenders] == [a, s]
    assert e.scoring_seeds == c.scoring_seeds and e.seeds == c.seeds
    cfg = {a: {"lr": 0.05}, s: {"lr": 1.0}}
    v = _verdict(c, {a: (0.540, 0.541, 0.542, 0.541, 0.540), s: (0.560, 0.561, 0.559, 0.560, 0.562)}, cfg)
    assert tuned_races.short_words(v) == "asynchronous SGD ends lower, by 0.020 ± 0.002 nats"
    # lower on 4 of 5 seeds by a mean far beyond twice its spread: the sign test still calls them level
    level = _verdict(e, {a: (20.0, 20.1, 20.2, 20.0, 20.3), s: (20.5, 20.6, 20.7, 20.5, 20.2)}, cfg)
    assert tuned_races.short_words(v, level).endswith(
        " nats in training loss; by the sign test, test error does not tell them apart")
    assert level.sentence.startswith("in test error asynchronous SGD and fully synchronous SGD end level")
    apart = _verdict(e, {a: (20.0, 20.1, 20.2, 20.0, 20.3), s: (20.5, 20.6, 20.7, 20.5, 20.4)}, cfg)
    assert tuned_races.short_words(v, apart).endswith(
        "in training loss; its test error is also lower, by the sign test over the held-out seeds")
    assert apart.sentence.startswith("in test error asynchronous SGD ends lower, on all 5 held-out seeds")


def test_error_words_follow_the_sign_test():
    """Two protocols' test errors are apart only where the sign test over the seeds says so."""
    a, s = "asynchronous (K = 1)", "fully synchronous (K = n = 16)"
    opt = {"error": 0.20}
    close = tuned_races.Race(400.0, 0.5, 0, {}, {}, {}, {}, {}, {}, 0.0, opt,
                             error_values={a: (0.200, 0.201, 0.202, 0.200, 0.203),
                                           s: (0.205, 0.206, 0.207, 0.205, 0.202)})
    assert tuned_races.error_words(close).endswith("; by the sign test over the 5 seeds no two protocols differ")
    apart = tuned_races.Race(400.0, 0.5, 0, {}, {}, {}, {}, {}, {}, 0.0, opt,
                             error_values={a: (0.200, 0.201, 0.202, 0.200, 0.203),
                                           s: (0.205, 0.206, 0.207, 0.205, 0.204)})
    assert tuned_races.error_words(apart).endswith(
        "; by the sign test over the 5 seeds, asynchronous SGD ends below fully synchronous SGD")


def test_sync_falling_words_say_no_more_than_the_runs():
    from types import SimpleNamespace as N

    words = tuned_races.sync_falling_words(1, 5, 0, N(descending=True, fall=0.013))
    assert words.startswith("At its best rate fully synchronous SGD is still falling at the end of the budget on 1 of "
                            "the 5 seeds")
    assert "(seed 0, the figure's run, among them: its fitted loss falls by 1.3 % across the last quarter)" in words
    assert "could narrow" in words and "can change the order" not in words
    assert "seed 0" not in tuned_races.sync_falling_words(1, 5, 0, N(descending=False, fall=0.002))
    assert "stopped falling" in tuned_races.sync_falling_words(0, 5, 0, N(descending=False, fall=0.002))
    # the held-out seeds still falling are never counted as stopped
    words = tuned_races.sync_falling_words(0, 5, 0, N(descending=False, fall=0.002), held=(12, 30))
    assert "but is still falling on 12 of the 30 held-out seeds" in words and "could narrow" in words
    words = tuned_races.sync_falling_words(0, 5, 0, N(descending=False, fall=0.002), held=(0, 30))
    assert words.endswith("on all 30 held-out seeds that score the race") and "could narrow" not in words


def test_cached_values_are_computed_once(tmp_path, monkeypatch):
    monkeypatch.setenv("GOTW_CLAIMS_CACHE", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return [0.5, float("inf")]

    assert claims.cached("toy.values", compute) == (0.5, float("inf"))
    assert claims.cached("toy.values", compute) == (0.5, float("inf")) and len(calls) == 1


def test_warm_headline_turns_with_the_runs():
    c = tuned_races.warmup_k128(small=True)
    cfg = {"warm-up": {"warmup_steps": 3}, "no warm-up": {}}
    level = _verdict(c, {"warm-up": (0.6, 0.7, 0.65, 0.8, 0.6), "no warm-up": (0.7, 0.6, 0.75, 0.62, 0.7)}, cfg)
    assert level.headline == "warm-up and no warm-up end level"
    apart = _verdict(c, {"warm-up": (0.60, 0.61, 0.62, 0.60, 0.61), "no warm-up": (0.9, 0.95, 0.92, 0.91, 0.93)}, cfg)
    assert apart.headline == "warm-up ends lower on all 5 seeds"
    small = (0.55,) * 5
    rows = tuned_races.warmup_range_rows({256: apart, 128: level}, small, stable_rate=9.0)
    assert [r[0] for r in rows] == ["128 (batch 1,024)", "256 (batch 2,048)"]               # in order of ν
    assert rows[0][1:3] == ["12.8", "1.42"] and rows[1][1:3] == ["25.6", "2.84"]           # 0.1 ν, and ÷ 9
    assert rows[1][3] == "68 ± 3 %" and rows[1][4] == "11 ± 2 %"    # 100 (0.922 / 0.55 - 1), 100 (0.608 / 0.55 - 1)
    assert rows[0][5] == level.headline and rows[1][5] == apart.headline
    table = views.warmup_range_table(rows, tuned_races.WARMUP_STEPS, 5).data
    assert "its length tuned over 1, 2, 3, 5, 8 steps" in table and "warmup_steps" not in table  # best length unnamed
    assert "warm-up ends lower on all 5 seeds" in table


def _warm_verdicts(excess: dict[int, tuple[float, float]], small: tuple[float, ...]) -> dict:
    """Warm-up verdicts by hand: at each ν, (no warm-up, warm-up) end that many % above ``small``, with a little noise."""
    cfg = {"warm-up": {"warmup_steps": 3}, "no warm-up": {}}
    noise = (0.001, -0.001, 0.0005, -0.0005, 0.0)
    return {k: _verdict(tuned_races.warmup_k128(small=True),
                        {"no warm-up": tuple(y * (1 + none / 100) + e for y, e in zip(small, noise)),
                         "warm-up": tuple(y * (1 + warm / 100) - e for y, e in zip(small, noise))}, cfg)
            for k, (none, warm) in excess.items()}


def test_warmup_range_words_say_the_answer_with_few_numbers():
    import re

    small = (0.55, 0.56, 0.555, 0.558, 0.552)
    # the warm-up lower on average at every ν from 96 on, but on only 3 of the 5 seeds
    verdicts = _warm_verdicts({80: (1.0, 1.0), 96: (6.0, 5.95), 112: (20.0, 19.95), 128: (30.0, 29.95)}, small)
    words = tuned_races.warmup_range_words(verdicts, small, stable_rate=9.1)
    assert words["head"] == ("without warm-up the rule ends 1.0 ± 0.1 % above the small batch at $\\nu = 80$ and "
                             "further above from $\\nu = 96$")
    assert words["cross"] == "$\\nu \\approx 91$, between the last $\\nu$ that held and the first that broke"
    assert words["warm"] == ("a warm-up, its length tuned, brings no $\\nu$ from 96 on within about 2 % of the small "
                             "batch; it lowers the mean final loss at every $\\nu$ from 96 on, but on too few seeds to call "
                             "(the table)")
    assert words["short"] == ("the rule held within about 2 % of the small batch up to $\\nu = 80$ (1.0 ± 0.1 % above "
                              "it there, the edge) and a warm-up did not carry it further")
    for text in words.values():       # the numbers of every ν are the table's, not the prose's
        assert len(re.findall(r"(?<![\w.\-])\d[\d,]*(?:\.\d+)?", text)) <= 5, text
    # the crossing outside the gap between the last ν that held and the first that broke: not said to lie between
    assert tuned_races.warmup_range_words(verdicts, small, stable_rate=12.0)["cross"] == "$\\nu \\approx 120$"
    # lower on every seed at two ν: called there
    called = _warm_verdicts({80: (1.0, 1.0), 96: (6.0, 5.95), 112: (20.0, 19.0), 128: (30.0, 29.0)}, small)
    assert tuned_races.warmup_range_words(called, small, 9.1)["warm"].endswith(
        "it lowers the mean final loss at every $\\nu$ from 96 on, and on enough seeds to call at $\\nu = 112$ and 128")
    # a warm-up that brings a broken ν back within 2 %
    fixed = _warm_verdicts({80: (1.0, 1.0), 96: (6.0, 1.0)}, small)
    assert tuned_races.warmup_range_words(fixed, small, 9.1)["warm"].startswith(
        "a warm-up, its length tuned, brings $\\nu = 96$ within about 2 % of the small batch")


def test_staleness_split_lead_and_rows_follow_the_seeds():
    import re

    c = tuned_races.shared_rate_staleness(small=True)
    a, one, sync = (tuned_races.SPLIT_NAMES[r] for r in ("async", "one", "sync"))
    cfg = {n: {} for n in (a, one, sync)}
    split = _verdict(c, {a: (0.73, 0.74, 0.72, 0.75, 0.73), one: (0.66, 0.67, 0.66, 0.68, 0.65),
                         sync: (0.57, 0.58, 0.56, 0.57, 0.57)}, cfg)
    lead = tuned_races.staleness_split_lead(split)
    workers = c.shared["workers"]
    assert lead.startswith("asynchronous SGD's own updates and mini-batches, replayed at the same rate with every "
                           "gradient computed at the current parameters, end between the two on all 5 seeds: "
                           "staleness makes ") and lead.endswith(f"average of {workers} the rest")
    assert len(re.findall(r"\d+(?:\.\d+)?", lead)) <= 5
    rows = tuned_races.staleness_split_rows(split)
    assert [r[1] for r in rows] == ["0.164 ± 0.009", "0.070 ± 0.007", "0.09 ± 0.01"]      # gap = staleness + rest
    share = tuned_races.staleness_split(split)["share"][0]
    assert f"{share:.0f}" in lead and f"{share:.0f}" in rows[1][2] and f"{100 - share:.0f}" in rows[2][2]
    assert "share of the gap" in views.staleness_split_table(rows).data
    # the never-stale learner above asynchronous SGD on one seed: no split is claimed, and the table keeps the gap only
    mixed = _verdict(c, {a: (0.73, 0.74, 0.72, 0.75, 0.73), one: (0.66, 0.67, 0.66, 0.68, 0.74),
                         sync: (0.57, 0.58, 0.56, 0.57, 0.57)}, cfg)
    assert "does not end between the two on every seed (on 4 of 5)" in tuned_races.staleness_split_lead(mixed)
    assert len(tuned_races.staleness_split_rows(mixed)) == 1
    # fully synchronous SGD still falling at the end of the budget: the split is at this budget, not between floors
    assert tuned_races.staleness_split_lead(split, 5).startswith("at this budget (where fully synchronous SGD has not "
                                                                  "yet settled), asynchronous SGD's own updates")
    assert "this budget" in tuned_races.staleness_split_short(split, 5)
    assert "this budget" not in tuned_races.staleness_split_short(split, 0)


def test_the_levels_at_the_shared_rate_are_called_floors_only_where_no_run_still_falls():
    settled = tuned_races.floor_lead({"fully synchronous SGD": 0, "the never-stale learner": 0}, 5)
    assert "error floor*:" in settled and "this budget" not in settled
    moving = tuned_races.floor_lead({"fully synchronous SGD": 5, "the never-stale learner": 1}, 5)
    assert "fully synchronous SGD and the never-stale learner are still falling on some seeds" in moving
    assert not any(ch.isdigit() for ch in moving)              # the counts stand in the table beside it
    assert "at this budget" in moving and moving.startswith("These are not all floors")


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


def _law_races():
    """Made-up law races: keeping the work reaches the target first under both laws with a minimum; the memoryless
    control is level. Returns the configs, the two sets of times, the races and the control."""
    names = [x.name for x in tuned_races.law_race_pareto(small=True).contenders]
    cfg = {n: {"K": 8, "rate per gradient": 0.18} for n in names}
    keep = {names[0]: (60.0, 62.0, 58.0, 61.0, 59.0), names[1]: (50.0, 52.0, 49.0, 51.0, 50.0),
            names[2]: (31.0, 33.0, 30.0, 32.0, 34.0), names[3]: (30.0, 32.0, 31.0, 31.0, 33.0)}
    level = {n: (40.0, 41.0, 39.0, 40.5, 39.5) for n in names}
    races = {law: _verdict(c(small=True), keep, cfg) for law, c in
             (("se", tuned_races.law_race_shifted_exponential), ("pa", tuned_races.law_race_pareto))}
    control = _verdict(tuned_races.law_race_exponential(small=True), level, cfg)
    return cfg, keep, level, races, control


def test_keep_work_words_turn_with_the_races():
    cfg, keep, level, races, control = _law_races()
    with_min, memoryless = tuned_races.keep_work_words(races, control)
    assert with_min.endswith("before cancelling it (K-sync)")
    assert memoryless.endswith("could not tell the protocols apart in time to the target")
    # at a fixed K the final-loss race of K-sync against K-async says what keeping the work costs: staleness
    kk = tuned_races.k_sync_vs_k_async(small=True)
    kcfg = {x.name: {"lr": 0.1} for x in kk.contenders}
    sync_name = next(x.name for x in kk.contenders if x.name.startswith("K-sync"))
    async_name = next(x.name for x in kk.contenders if x.name.startswith("K-async"))
    fixed = _verdict(kk, {sync_name: (0.5440, 0.5450, 0.5445, 0.5442, 0.5448),
                          async_name: (0.5442, 0.5452, 0.5447, 0.5444, 0.5450)}, kcfg)
    _, memoryless = tuned_races.keep_work_words(races, control, fixed)
    assert memoryless.startswith("under memoryless times the race could not tell the protocols apart in time to the "
                                 "target; there, at a fixed $K$, keeping the work only adds "
                                 "staleness, a small cost (0.0002 nats")
    # with a minimum compute time keeping the work also makes updates faster, and the clause says so
    # with a minimum compute time keeping the work also makes updates faster, by a factor quoted K by K
    def row(k, keep, cancel):
        return sync_async.KeepRow("shifted_exponential", k, (keep,) * 3, (cancel,) * 3, cancel, (0.1,) * 3, 1.0)
    assert tuned_races.keep_faster_words([row(12, 1.0, 1.08), row(4, 0.554, 1.278)]) == (
        "Under the shifted exponential, at the same $K$, keeping the work also makes updates faster: K-async updates "
        "2.3 times as often as K-sync at $K = 4$ and 1.1 times at $K = 12$")
    assert tuned_races.keep_faster_words([row(4, 0.554, 1.278)]).endswith("2.3 times as often as K-sync at $K = 4$")
    # where at some K keeping the work does not pay, no speed-up is claimed at all
    assert tuned_races.keep_faster_words([row(4, 0.554, 1.278), row(8, 1.3, 1.278)]) == ""
    assert tuned_races.keep_faster_words([]) == ""
    races["pa"] = _verdict(tuned_races.law_race_pareto(small=True), level, cfg)
    control = _verdict(tuned_races.law_race_exponential(small=True), keep, cfg)
    with_min, memoryless = tuned_races.keep_work_words(races, control)
    assert with_min.endswith("not under every law") and "does matter" in memoryless


def test_keep_work_lesson_is_one_idea_chosen_by_the_races():
    cfg, keep, level, races, control = _law_races()
    assert tuned_races.keep_work_lesson(races, control).startswith(
        "on this budget, under both laws with a minimum compute time raced here, K-async and K-batch-async, each at "
        "its own $K$, reached the target before K-sync at its best $K$")
    idle = {**cfg, "K-async": {"K": 1, "rate per gradient": 0.18}, "K-batch-async": {"K": 16, "rate per gradient": 0.18}}
    idle_races = {law: _verdict(c(small=True), keep, idle) for law, c in
                  (("se", tuned_races.law_race_shifted_exponential), ("pa", tuned_races.law_race_pareto))}
    assert tuned_races.never_idle(idle_races) and not tuned_races.never_idle(races)
    assert "K-batch-async at $K = n$, where no learner ever idles" in tuned_races.keep_work_lesson(idle_races, control)
    assert tuned_races.keeping_wins(races)
    moving = _verdict(tuned_races.law_race_exponential(small=True), keep, cfg)
    assert "also differ" in tuned_races.keep_work_lesson(races, moving)
    races["pa"] = _verdict(tuned_races.law_race_pareto(small=True), level, cfg)
    assert tuned_races.keep_work_lesson(races, control).startswith(
        "on this budget, the protocols that keep unfinished work did not reach the target first")
    assert not tuned_races.keeping_wins(races)


def _cap_verdicts(excess: dict[int, float], small: tuple[float, ...], linear: float = 30.0) -> dict:
    """Rate-cap verdicts by hand: at each ν the capped rate ends ``excess`` % above ``small``, the linear rule
    ``linear`` %, with a little noise."""
    cfg = {tuned_races.CAP_NAME: {}, tuned_races.LINEAR_NAME: {}}
    noise = (0.001, -0.001, 0.0005, -0.0005, 0.0)
    return {k: _verdict(tuned_races.rate_cap_k128(small=True),
                        {tuned_races.CAP_NAME: tuple(y * (1 + x / 100) + e for y, e in zip(small, noise)),
                         tuned_races.LINEAR_NAME: tuple(y * (1 + linear / 100) - e for y, e in zip(small, noise))}, cfg)
            for k, x in excess.items()}


def test_the_rate_cap_control_adds_a_column_and_says_where_it_recovers_the_small_batch():
    small = (0.55, 0.56, 0.555, 0.558, 0.552)
    warm = _warm_verdicts({80: (1.0, 1.0), 96: (6.0, 5.95), 112: (20.0, 19.95), 128: (30.0, 29.95)}, small)
    caps = _cap_verdicts({80: 0.5, 96: 0.8, 112: 1.0, 128: 1.2}, small)
    words = tuned_races.warmup_range_words(warm, small, stable_rate=9.1, caps=caps)
    assert words["cap"].startswith("capped at 0.75 of $2/\\lambda_{\\max}$ (the one cap run), the same batch and steps "
                                   "end within about 2 % "
                                   "of the small batch at every $\\nu$ beyond 91")
    assert words["cap"].endswith("on enough seeds to call at every $\\nu$ from 80 on")
    # the cap already wins below the crossing: the rule costs before it, and the takeaway says so from ν = 80 on
    assert words["cross"].startswith("$\\nu \\approx 91$. The rule does not switch off there; it starts costing "
                                     "before: at $\\nu = 80$, a rate 0.88 of the limit, it ends 1.0 ± 0.1 % above")
    assert "between" not in words["cross"]
    # the ν where the rule starts costing, and the step the sharpest direction sees there and at ν = 1
    assert words["early"] == 80 and abs(words["early_step"] - 2 * 0.1 * 80 / 9.1) < 1e-12
    assert abs(words["small_step"] - 2 * 0.1 / 9.1) < 1e-12
    assert words["short"].endswith("from $\\nu = 80$ on (a rate 0.88 of the limit and more) capping the rate at 0.75 "
                                   "of $2/\\lambda_{\\max}$ (the one cap run) ends at most 1.2 % above the small batch's loss "
                                   "(the mean over the seeds) where warm-up does not")
    assert words["cause"].startswith("it is the rate, not the batch or the number of steps, that breaks the rule")
    # a cap that does not recover the small batch: the gap is stated, not the remedy
    bad = _cap_verdicts({80: 0.5, 96: 5.0, 112: 8.0, 128: 9.0}, small)
    assert "fewer steps as $\\nu$ grows is not ruled out here" in tuned_races.warmup_range_words(
        warm, small, 9.1, caps=bad)["short"]
    rows = tuned_races.warmup_range_rows(warm, small, 9.1, caps=caps)
    assert len(rows[0]) == 8 and rows[0][7] == caps[80].headline
    table = views.warmup_range_table(rows, tuned_races.WARMUP_STEPS, 5, cap=6.8).data
    assert "rate capped at 6.8 (%)" in table and "verdict, capped rate against the linear rule" in table
    # without the control the table and words are as before
    assert len(tuned_races.warmup_range_rows(warm, small, 9.1)[0]) == 6
    assert "cap" not in tuned_races.warmup_range_words(warm, small, 9.1)


def test_shared_rate_plain_says_the_rate_decides_only_where_the_order_turns():
    """The section's one sentence on the shared rate: where the order turns with the rate, whichever protocol the
    rate suits wins; where it does not turn, no such lesson."""
    turns = tuned_races.shared_rate_plain({0.1: 0, 0.2: 0, 0.5: 5}, 0.5, 5)
    assert "says more about the rate" in turns and "up to 0.2" in turns and "from 0.5" in turns
    mixed = tuned_races.shared_rate_plain({0.1: 0, 0.2: 3, 0.5: 5}, 0.5, 5)
    assert "says more about the rate" not in mixed and "depends on the shared rate" in mixed


def test_shared_panel_words_follow_the_order_at_the_panels_rate():
    """The sentence under the error-against-time figure says who loses at its shared rate from the runs' order."""
    order = {0.1: 0, 0.5: 5, 1.0: 2}
    assert tuned_races.shared_panel_words(order, 0.5, 5).startswith("asynchronous SGD loses:")
    assert tuned_races.shared_panel_words(order, 0.1, 5).startswith("asynchronous SGD wins:")
    assert "on 2 of 5 seeds" in tuned_races.shared_panel_words(order, 1.0, 5)
    with pytest.raises(ValueError, match="rate"):
        tuned_races.shared_panel_words(order, 0.3, 5)


def test_sync_falling_words_name_the_held_out_count_where_given():
    class N:
        descending, fall = True, 0.013
    words = tuned_races.sync_falling_words(1, 5, 0, N(), held=(12, 30))
    assert "on 1 of the 5 seeds that pick the rates, and on 12 of the 30 held-out seeds that score the race" in words
