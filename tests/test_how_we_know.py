"""The "How we know" page: one section per claim, with each contender's grid, best setting and spread."""

import importlib.util
from pathlib import Path

from commlib.experiments import claims

spec = importlib.util.spec_from_file_location("how_we_know", Path(__file__).parents[1] / "tools" / "how_we_know.py")
how = importlib.util.module_from_spec(spec)
spec.loader.exec_module(how)


def toy() -> claims.Claim:
    a = claims.Contender("sync", lambda s, seed: (s["lr"] - 1.0) ** 2 + s["base"] + 0.01 * seed, {"lr": (0.5, 1.0, 2.0)},
                         uses="16 learners, one rate tuned")
    b = claims.Contender("async", lambda s, seed: (s["lr"] - 0.05) ** 2 + s["base"] - 0.02, {"lr": (0.02, 0.05, 0.1)},
                         uses="16 learners, one rate tuned")
    return claims.Claim("ch04.toy", "Which ends lower on the same budget?", (a, b), metric="loss (nats)",
                        shared={"base": 0.5, "budget": 400}, chapter="4",
                        wording=lambda v: f"{v.winner} ends lower, on {v.wins} of {v.seeds} seeds")


def test_a_section_shows_the_evidence_and_carries_its_label():
    verdict = claims.run(toy())
    text = how.section(verdict)
    assert text.startswith("(claim-ch04-toy)=\n## Which ends lower on the same budget?")
    assert "| sync | 16 learners, one rate tuned | lr in {0.5, 1.0, 2.0} | lr = 1.0 |" in text
    assert "| async | 16 learners, one rate tuned | lr in {0.02, 0.05, 0.1} | lr = 0.05 |" in text
    assert "Shared by every contender: base = 0.5, budget = 400." in text and "From chapter 4" in text
    assert "async is ahead of sync" in text and "on 5 of 5 seeds" in text
    assert "test_claim_holds_with_every_contender_at_its_best[ch04.toy]" in text
    assert how.label("ch04.async_floor") == "claim-ch04-async-floor"


def test_a_lead_the_sign_test_does_not_call_is_shown_as_level():
    verdict = claims.run(toy())
    level = claims.Verdict(verdict.claim, verdict.best, verdict.winner, verdict.runner_up, verdict.margin,
                           verdict.spread, 3)                    # ahead on 3 of 5 seeds only
    text = how.section(level)
    assert "async leads sync by" in text and "on 3 of 5 seeds: too few for the sign test to call, so the two are " \
                                              "level." in text and "is ahead of" not in text


def test_a_claim_the_chapter_runs_on_a_live_measurement_says_whose_numbers_the_page_shows():
    import dataclasses

    live = dataclasses.replace(toy(), live="synthetic timings with a planted break")
    text = how.section(claims.run(live))
    assert "The chapter says" not in text
    assert "reference run stored with the book" in text
    assert "so the numbers it quotes are that run's, not these. On synthetic timings with a planted break, the test " \
           "finds: async ends lower" in text
    assert "The chapter says: async ends lower" in how.section(claims.run(toy()))
    from commlib.experiments import lab as lab_runs

    assert lab_runs.regimes_claim(small=True).live          # the lab's claim is one of them


def test_a_cached_verdict_reads_back_exactly(tmp_path, monkeypatch):
    monkeypatch.setenv("GOTW_CLAIMS_CACHE", str(tmp_path))
    build = claims.register("test.toy")(lambda small=False: toy())
    try:
        first = claims.verdict("test.toy")
        calls = []
        claims.REGISTRY["test.toy"] = lambda small=False: (calls.append(1), toy())[1]
        again = claims.verdict("test.toy")        # from the cache: the same numbers, no run
        assert again.best == first.best and again.margin == first.margin and again.sentence == first.sentence
        assert list(tmp_path.rglob("test.toy.json"))
    finally:
        claims.REGISTRY.pop("test.toy", None)
    assert build is not None


def test_equal_seeds_are_said_and_left_out():
    verdict = claims.run(toy())
    some_equal = claims.Verdict(verdict.claim, verdict.best, verdict.winner, verdict.runner_up, verdict.margin,
                                verdict.spread, 3, 0)          # ahead on 3, behind on none, equal on 2
    text = how.section(some_equal)
    assert "on 3 of 5 seeds (behind on 0, equal on 2, which the sign test leaves out): too few" in text
