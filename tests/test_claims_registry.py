"""One test for every claim in the registry: rerun small, each contender at its best, the wording follows the runs.

A new claim gets these checks for free (``commlib.experiments.claims``):

* every contender's best setting lies inside its grid, not at an edge;
* where the margin is within three spreads of zero, five seeds or more back it;
* the winner wins on every seed, or the sentence says on how many ("in m of n seeds"), or the two best
  tie within the claim's ``tie`` on every seed;
* every contender runs on the claim's shared settings (hardware, budget), which no grid overrides.
"""

import pytest

from commlib.experiments import claims

KEYS = sorted(claims.load())


def test_every_claim_has_a_question_contenders_and_a_chapter():
    for key in KEYS:
        claim = claims.claim(key)
        assert claim.key == key and claim.question and claim.chapter and len(claim.contenders) >= 2


@pytest.mark.parametrize("key", KEYS)
def test_claim_holds_with_every_contender_at_its_best(key):
    claim = claims.claim(key, small=True)
    verdict = claims.run(claim)
    for name, best in verdict.best.items():
        assert not best.at_edge, f"{key}: {name}'s best {best.config} lies at the edge of its grid ({best.at_edge})"
    if abs(verdict.margin) <= 3 * verdict.spread:
        assert verdict.seeds >= 5, f"{key}: margin {verdict.margin:.3g} within three spreads: needs five seeds or more"
    sentence = verdict.sentence
    assert sentence, f"{key}: the claim has no wording"
    assert verdict.headline, f"{key}: the claim's headline is empty"
    if not verdict.unanimous and not verdict.tied:
        assert f"{verdict.wins} of {verdict.seeds}" in sentence, f"{key}: not on every seed, and the sentence hides it"


def test_the_checks_catch_a_rival_tuned_at_the_edge_and_a_hidden_split():
    edge = claims.Contender("a", lambda s, seed: -s["lr"], {"lr": (0.1, 0.2, 0.4)})
    other = claims.Contender("b", lambda s, seed: 0.0 + (seed % 2) * -1.0, {"lr": (1, 2, 3)})
    verdict = claims.run(claims.Claim("t", "?", (edge, other), metric="m", wording=lambda v: "a wins"))
    assert verdict.best["a"].at_edge == ("lr",)
    assert not verdict.unanimous and "of" not in verdict.sentence
    with pytest.raises(ValueError, match="shared"):
        claims.run(claims.Claim("t", "?", (edge, other), metric="m", shared={"lr": 1}))


def test_a_tie_is_a_verdict_of_its_own():
    same = claims.Contender("a", lambda s, seed: 1.0 + seed)
    other = claims.Contender("b", lambda s, seed: 1.0 + seed + (0.01 if seed % 2 else -0.01))
    assert claims.run(claims.Claim("t", "?", (same, claims.Contender("c", lambda s, seed: 1.0 + seed)), metric="m")).tied
    close = claims.Claim("t", "?", (same, other), metric="m")
    assert not claims.run(close).tied
    assert claims.run(claims.Claim("t", "?", (same, other), metric="m", tie=0.02)).tied


def test_a_best_at_the_end_of_what_exists_is_no_edge():
    """The shortest warm-up is one step: a best there is inside what can be tried (``Contender.limits``)."""
    short = claims.Contender("a", lambda s, seed: s["steps"], {"steps": (1, 2, 3)})
    other = claims.Contender("b", lambda s, seed: 5.0)
    assert claims.run(claims.Claim("t", "?", (short, other), metric="m")).best["a"].at_edge == ("steps",)
    limited = claims.Contender("a", short.run, short.grid, limits={"steps": 1})
    assert claims.run(claims.Claim("t", "?", (limited, other), metric="m")).best["a"].at_edge == ()


def test_a_win_is_decided_by_a_sign_test_that_sharpens_with_seeds():
    def verdict(wins, seeds):
        a = claims.Contender("a", lambda s, seed: 0.0 if seed < wins else 2.0, {})
        b = claims.Contender("b", lambda s, seed: 1.0, {})
        return claims.run(claims.Claim("t", "?", (a, b), metric="m", seeds=tuple(range(seeds))))
    assert verdict(5, 5).decided and not verdict(4, 5).decided
    assert verdict(9, 10).decided and not verdict(8, 10).decided
    assert verdict(8, 8).decided and not verdict(7, 8).decided      # two-sided: either contender may lead


def test_a_deterministic_claim_is_decided_by_its_one_run():
    a = claims.Contender("a", lambda s, seed: 1.0, {})
    b = claims.Contender("b", lambda s, seed: 2.0, {})
    v = claims.run(claims.Claim("t", "?", (a, b), metric="m", seeds=(0,)))
    assert v.deterministic and v.decided


def test_held_out_seeds_score_the_best_that_the_tuning_seeds_picked():
    """A setting that is lucky on the seeds that pick it wins the pick, but the held-out seeds alone score it: the
    verdict's values, wins and seed count are theirs, the tuning runs are kept apart, and no seed may do both."""
    # "lucky" looks best on seeds 0-4 and is worst elsewhere; "steady" is the same everywhere
    lucky = claims.Contender("a", lambda s, seed: (0.0 if seed < 5 else 3.0) if s["x"] == 1 else 1.5 + 0.01 * s["x"],
                             {"x": (0, 1, 2)})
    steady = claims.Contender("b", lambda s, seed: 1.0 + 0.001 * seed)
    same = claims.run(claims.Claim("t", "?", (lucky, steady), metric="m"))
    assert same.winner == "a" and same.best["a"].config == {"x": 1} and same.unanimous and same.best["a"].tuned == ()
    held = claims.run(claims.Claim("t", "?", (lucky, steady), metric="m", scoring_seeds=tuple(range(5, 15))))
    assert held.best["a"].config == {"x": 1}                       # picked on the tuning seeds, as before
    assert held.best["a"].values == (3.0,) * 10 and held.best["a"].tuned == (0.0,) * 5
    assert held.winner == "b" and held.seeds == 10 and held.wins == 10 and held.decided
    assert held.claim.scored_seeds == tuple(range(5, 15))
    back = claims._from_json(held.claim, claims._to_json(held))   # the disk cache keeps both sets of runs
    assert back.best["a"].tuned == held.best["a"].tuned and back.best["a"].values == held.best["a"].values
    with pytest.raises(ValueError, match="held-out"):
        claims.run(claims.Claim("t", "?", (lucky, steady), metric="m", scoring_seeds=(4, 5)))


def test_arrays_are_cached_on_disk_and_read_back_exactly(tmp_path, monkeypatch):
    import numpy as np

    monkeypatch.setenv("GOTW_CLAIMS_CACHE", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.array([0.1, np.nan, 3.0]), "name": np.array("k_async"), "n": np.array([[1, 2]], np.int64)}

    first = claims.cached_arrays("t", compute)
    again = claims.cached_arrays("t", compute)
    assert len(calls) == 1 and str(again["name"]) == "k_async" and again["n"].dtype == np.int64
    assert np.array_equal(first["x"], again["x"], equal_nan=True)


def test_a_grid_of_runs_read_back_from_disk_is_the_grid_trained(tmp_path, monkeypatch):
    import dataclasses

    import numpy as np

    from commlib.experiments.sgd import grids

    monkeypatch.setenv("GOTW_CLAIMS_CACHE", str(tmp_path))
    args = dict(protocol="k_async", workers=4, k=2, budget=30.0, rates=(0.2, 1.0), seeds=(0, 1), small=True, points=5)
    trained = grids.grid_runs.__wrapped__(**args)
    assert len(list(tmp_path.rglob("grid-*.npz"))) == 1
    read = grids.grid_runs.__wrapped__(**args)           # from disk
    from commlib.sgd import simulate as sgd

    u = trained.updates()
    direct = sgd.replay_grid([sgd.schedule("k_async", 4, 2, "exponential", u, seed) for seed in (0, 1)],
                             grids.problem(True), (0.2, 1.0), 8, seeds=(0, 1), eval_every=max(1, u // 5), tail=0.35)
    for a, b in zip(sum(map(list, direct), []), sum(map(list, read.runs), [])):
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if x is None or y is None:
                assert x is None and y is None, f.name
                continue
            x, y = np.asarray(x), np.asarray(y)
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), f.name


def test_seeds_on_which_both_give_the_same_value_are_left_out_of_the_sign_test():
    # 41 leads, 16 losses, 43 equal (chapter 1's fp16 count): the standard sign test calls it; counting the equal
    # seeds as the runner-up's would not
    def value(seed):
        return 0.0 if seed < 41 else (2.0 if seed < 57 else 1.0)
    a = claims.Contender("a", lambda s, seed: value(seed), {})
    b = claims.Contender("b", lambda s, seed: 1.0, {})
    v = claims.run(claims.Claim("t", "?", (a, b), metric="m", seeds=tuple(range(100))))
    assert (v.wins, v.losses, v.equal) == (41, 16, 43) and v.decided
    assert not claims.sign_test(41, 100)                      # the old count, every non-win a loss
