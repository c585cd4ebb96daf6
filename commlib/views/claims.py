"""A claim's verdict as a small table, so the prose keeps one short sentence and the numbers sit in rows.

A claim's sentence (:attr:`commlib.experiments.claims.Verdict.sentence`) states the answer with its
margin and spread; where several claims, or several contenders, meet in one paragraph, the numbers
crowd out the idea. :func:`verdict_table` lays each contender at its best out as a row: its tuned
settings, its metric's mean and spread over the seeds, and on how many seeds the winner won, so the
paragraph can say what the runs mean and point at the table for the evidence.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from .tables import markdown_table

__all__ = ["verdict_table", "mean_spread"]


def mean_spread(values: Sequence[float], spec: str = ".3g") -> str:
    """Mean ± standard deviation over the seeds, both in ``spec`` (one value: no spread).

    >>> mean_spread([0.551, 0.553, 0.552], ".3f"), mean_spread([2.0])
    ('0.552 ± 0.001', '2')
    """
    mean = statistics.fmean(values)
    if len(values) < 2:
        return format(mean, spec)
    return f"{format(mean, spec)} ± {format(statistics.stdev(values), spec)}"


def _setting(config: dict) -> str:
    return ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}" for k, v in config.items()) or "-"


def _counts(first: Sequence[float], other: Sequence[float], lower_is_better: bool = True) -> tuple[int, int, int]:
    """Seeds on which ``first`` is ahead of ``other``, behind it, and equal to it (paired by seed)."""
    sign = 1.0 if lower_is_better else -1.0
    gaps = [sign * (b - a) for a, b in zip(first, other)]
    return sum(g > 0 for g in gaps), sum(g < 0 for g in gaps), sum(g == 0 for g in gaps)


def _count_words(ahead: int, behind: int, equal: int) -> str:
    return f"ahead on {ahead}, behind on {behind}" + (f", equal on {equal}" if equal else "")


def verdict_table(verdicts: Sequence, spec: str = ".3g", caption: str = "",
                  label: Callable[[object], str] | None = None, columns: Sequence[str] | None = None,
                  setting: Callable[[dict], str] | None = None, counts: bool = False, by_claim: bool = False,
                  by_mean: bool = False):
    """Every contender of each verdict at its best, one row each: settings, metric over the seeds, wins.

    ``verdicts`` are :class:`commlib.experiments.claims.Verdict` s; ``spec`` formats the metric;
    ``label(verdict)`` names each claim's rows (default: its question). The winner's row says on
    how many seeds it won, or "tie" where the claim calls the two best level; a winner on the mean
    that does not lead on enough seeds to tell from chance (:attr:`Verdict.decided`, a sign test) is
    marked level ("level (lower mean, ahead on only 3 of 5 seeds)"). ``columns`` renames the five
    columns for a chapter's readers, and ``setting(config)`` words a contender's best settings
    (default: ``name = value``, "-" for none).

    ``counts``: every row also counts the seeds, paired with the winner's (the contender with the best mean):
    a level winner's cell gives its leads, losses and ties ("level (lower mean, ahead on 2, behind on 5, equal on
    3 of 10 seeds)"), and each other contender's cell whether the sign test puts it behind the winner and on how
    many seeds. ``by_claim``: rows in the order of the claim's contenders (e.g. by K), not the winner first.
    ``by_mean``: the winner first, then the others from the best mean to the worst (the runner-up, against which
    the verdict is taken, second), not by name.

    >>> from commlib.experiments.claims import Claim, Contender, run
    >>> a = Contender("a", lambda s, seed: 1.0 + seed / 100, {"lr": (0.1,)})
    >>> b = Contender("b", lambda s, seed: 2.0, {})
    >>> table = verdict_table([run(Claim("t", "which is lower?", (a, b), metric="loss"))], ".2f")
    >>> print(table.data.splitlines()[2])
    | which is lower? | a | lr = 0.1 | 1.02 ± 0.02 | ahead on 5 of 5 seeds |
    >>> c = Contender("c", lambda s, seed: 1.5, {})
    >>> three = run(Claim("t", "which is lower?", (b, c, a), metric="loss"))
    >>> [row.split(" | ")[1] for row in verdict_table([three], ".2f").data.splitlines()[2:]]
    ['a', 'b', 'c']
    >>> [row.split(" | ")[1] for row in verdict_table([three], ".2f", by_mean=True).data.splitlines()[2:]]
    ['a', 'c', 'b']
    """
    from ..experiments.claims import sign_test

    rows = []
    for v in verdicts:
        name = label(v) if label else v.claim.question
        items = sorted(v.best.items(), key=lambda kv: (kv[0] != v.winner, kv[0]))
        if by_claim:
            place = {c.name: i for i, c in enumerate(v.claim.contenders)}
            items = sorted(v.best.items(), key=lambda kv: place.get(kv[0], len(place)))
        elif by_mean:
            sign = 1 if v.claim.lower_is_better else -1
            items = sorted(v.best.items(), key=lambda kv: (kv[0] != v.winner, sign * kv[1].mean, kv[0]))
        for contender, best in items:
            if contender != v.winner:
                outcome = ""
                if counts and not v.deterministic:
                    ahead, behind, equal = _counts(v.best[v.winner].values, best.values, v.claim.lower_is_better)
                    n = len(best.values)
                    if sign_test(ahead, n, behind):
                        outcome = f"behind {v.winner} on {ahead} of {n} seeds"
                    else:
                        outcome = f"level with {v.winner} (behind on {ahead}, ahead on {behind}" + (
                            f", equal on {equal}" if equal else "") + f" of {n} seeds)"
            elif v.tied:
                outcome = "tie"
            elif v.deterministic:
                outcome = "ahead" if v.decided else "level"
            elif v.decided:
                outcome = f"ahead on {v.wins} of {v.seeds} seeds"
            else:  # best on the mean only, on too few seeds to tell from chance: level
                mean = "lower" if v.claim.lower_is_better else "higher"
                if counts:
                    outcome = f"level ({mean} mean, {_count_words(v.wins, v.seeds - v.wins - v.equal, v.equal)} " \
                              f"of {v.seeds} seeds)"
                else:
                    outcome = f"level ({mean} mean, ahead on only {v.wins} of {v.seeds} seeds)"
            value = format(best.mean, spec) if v.deterministic else mean_spread(best.values, spec)
            rows.append([name, contender, (setting or _setting)(best.config), value, outcome])
            name = ""  # the claim is named on its first row
    metric = verdicts[0].claim.metric if verdicts else "metric"
    counts = sorted({v.seeds for v in verdicts}) or [0]
    seeds = " or ".join(map(str, counts))     # the claims of one table may run on different numbers of seeds
    if verdicts and all(v.deterministic for v in verdicts):
        column = f"{metric} (a deterministic model: one run)"
    else:
        column = f"{metric} (mean ± sd over {seeds} seeds)"
    headers = list(columns) if columns else ["claim", "contender", "its best settings", column, "verdict"]
    return markdown_table(headers, rows, caption=caption)
