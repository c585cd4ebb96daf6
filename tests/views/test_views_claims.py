"""commlib.views.claims: a verdict as rows, the winner first with its wins, the claim named once."""

from commlib.experiments.claims import Claim, Contender, run
from commlib.views import claims as claims_view


def _verdict(tie=0.0):
    fast = Contender("fast", lambda s, seed: s["lr"] + seed / 1000, {"lr": (0.3, 0.1, 0.2)})
    slow = Contender("slow", lambda s, seed: 0.5 + seed / 1000, {})
    return run(Claim("k", "which is lower?", (slow, fast), metric="loss", tie=tie))


def test_the_winner_comes_first_with_its_best_setting_and_wins():
    lines = claims_view.verdict_table([_verdict()], ".2f").data.splitlines()
    assert lines[2].startswith("| which is lower? | fast | lr = 0.1 | 0.10 ± 0.00 | ahead on 5 of 5 seeds |")
    assert lines[3].startswith("|  | slow | - | 0.50 ± 0.00 |  |")


def test_a_tie_says_tie():
    assert "| tie |" in claims_view.verdict_table([_verdict(tie=1.0)]).data


def test_a_split_winner_is_marked_as_best_on_the_mean_only():
    a = Contender("a", lambda s, seed: 1.0 + (0.5 if seed in (0, 1) else -0.5), {})
    b = Contender("b", lambda s, seed: 1.0, {})
    table = claims_view.verdict_table([run(Claim("k", "which is lower?", (a, b), metric="loss"))]).data
    assert "level (lower mean, ahead on only 3 of 5 seeds)" in table


def test_a_deterministic_verdict_shows_one_value_and_no_seed_count():
    a = Contender("a", lambda s, seed: 1.0, {})
    b = Contender("b", lambda s, seed: 2.0, {})
    table = claims_view.verdict_table([run(Claim("k", "?", (a, b), metric="ms", seeds=(0,)))], ".1f").data
    assert "one run" in table and "| 1.0 | ahead |" in table and "seeds" not in table


def test_columns_and_settings_can_be_worded_for_a_chapter():
    lines = claims_view.verdict_table([_verdict()], ".2f", columns=("case", "design", "tuned", "loss", "outcome"),
                                      setting=lambda config: f"rate {config['lr']}" if config else "none").data.splitlines()
    assert lines[0] == "| case | design | tuned | loss | outcome |"
    assert "| fast | rate 0.1 |" in lines[2] and "| slow | none |" in lines[3]


def test_counts_pair_every_row_with_the_winner_and_by_claim_keeps_the_claims_order():
    """With ``counts`` a level winner's cell gives its leads, losses and ties, and every other row whether the sign
    test puts it behind the winner; ``by_claim`` lists the rows in the claim's order (e.g. by K)."""
    a = Contender("a", lambda s, seed: 1.0 + (0.5 if seed in (0, 1) else -0.5 if seed in (2, 3) else 0.0), {})
    b = Contender("b", lambda s, seed: 1.0, {})
    c = Contender("c", lambda s, seed: 3.0 + seed, {})
    v = run(Claim("k", "which is lower?", (c, a, b), metric="loss"))
    table = claims_view.verdict_table([v], ".2f", counts=True, by_claim=True).data
    assert "level (lower mean, ahead on 2, behind on 2, equal on 1 of 5 seeds)" in table
    assert "behind a on 5 of 5 seeds" in table
    assert "level with a (behind on 2, ahead on 2, equal on 1 of 5 seeds)" in table
    rows = table.splitlines()[2:]
    assert [r.split(" | ")[1] for r in rows] == ["c", "a", "b"]
    # without them the table is as before
    plain = claims_view.verdict_table([v], ".2f").data
    assert "level (lower mean, ahead on only 2 of 5 seeds)" in plain and "behind" not in plain
