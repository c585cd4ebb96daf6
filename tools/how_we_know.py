"""Generate chapters/how_we_know.md from the registry of claims: the evidence behind every conclusion.

Usage: python tools/how_we_know.py

For every registered claim (commlib.experiments.claims) the page shows the question, what each
contender may use, the grid it was tuned over and its best setting, its metric on every seed, the
margin with its spread, on how many seeds the winner wins, the sentence the chapter prints, and the
test that reruns it. Each claim has a label ``claim-<key>`` (dots become hyphens) that a chapter's
takeaway links to. The verdicts come from ``claims.verdict``, cached per version of the code, so
the chapters that quote a claim and this page share one run.
"""

from __future__ import annotations

import math
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "chapters" / "how_we_know.md"
sys.path.insert(0, str(ROOT))

INTRO = """(how-we-know)=
# How we know

Every sentence of this book that compares two ways of doing something, or draws a conclusion from
a run, comes from a claim: a question, its contenders, what each may use, the settings each is
tuned over, the seeds, and the metric. Each contender is tuned over its own grid on the same
hardware and budget, and the sentence in the chapter is chosen from the outcome. This page shows
each claim's evidence; a test reruns every claim, smaller, and fails if the evidence reverses or a
contender's best setting lies at the edge of its grid.
"""


def label(key: str) -> str:
    """The page's label for claim ``key`` (what a takeaway links to)."""
    return "claim-" + key.replace(".", "-").replace("_", "-").lower()


def _num(x: float) -> str:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.3g}"


_UNIT = re.compile(r"^(s|ms|µs|ns|GB/s|bytes)(?![\w/])|\((nats|s|ms)\)")


def unit(metric: str) -> str:
    """The unit a margin in ``metric`` is counted in, where the metric names one ("" where it does not).

    >>> unit("ms (alpha-beta)"), unit("final loss (nats), mean over seeds"), unit("median |relative error|")
    ('ms', 'nats', '')
    """
    found = _UNIT.search(metric)
    return next((g for g in found.groups() if g), "") if found else ""


def _margin(x: float, metric: str) -> str:
    return f"{_num(x)} {unit(metric)}".rstrip()


def _config(config: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in config.items()) or "(nothing tuned)"


def _grid(grid) -> str:
    return "; ".join(f"{k} in {{{', '.join(map(str, v))}}}" for k, v in grid.items()) or "(nothing tuned)"


def _shared(shared) -> str:
    parts = []
    for k, v in shared.items():
        text = _num(v) if isinstance(v, float) else str(v)
        parts.append(f"{k} = {text}" if len(text) <= 60 else f"{k} (data: see the source)")
    return ", ".join(parts) or "nothing else"


def _behind(verdict) -> str:
    """Where some seeds gave both the same value: on how many the runner-up led and how many were equal (the sign
    test leaves the equal ones out)."""
    if not verdict.equal:
        return ""
    return (f" (behind on {verdict.seeds - verdict.wins - verdict.equal}, equal on {verdict.equal}, which the sign "
            "test leaves out)")


def section(verdict) -> str:
    """The page's section for one claim's verdict."""
    c = verdict.claim
    rows = []
    for contender in c.contenders:
        best = verdict.best[contender.name]
        spread = _num(statistics.stdev(best.values)) if len(best.values) > 1 else "-"
        rows.append(f"| {contender.name} | {contender.uses or '-'} | {_grid(contender.grid)} | {_config(best.config)} "
                    f"| {_num(best.mean)} | {spread} |")
    seeds = ", ".join(map(str, c.seeds))
    if getattr(c, "scoring_seeds", ()):
        seeds = (f"{seeds} to tune each contender; its best is then scored on the held-out seeds "
                 f"{', '.join(map(str, c.scoring_seeds))}, which alone decide the verdict")
    one = len(c.scored_seeds) == 1
    column = f"{c.metric}" if one else f"{c.metric}, mean over seeds"
    if verdict.tied:
        outcome = (f"{verdict.winner} and {verdict.runner_up} tie: they differ by no more than {_margin(c.tie, c.metric)} "
                   f"on every seed.")
    elif one:
        outcome = (f"{verdict.winner} is ahead of {verdict.runner_up} by {_margin(verdict.margin, c.metric)} "
                   f"(one run: the comparison is deterministic).")
    elif not verdict.decided:       # a lead on the mean only: the sign test does not call it
        outcome = (f"{verdict.winner} leads {verdict.runner_up} by {_margin(verdict.margin, c.metric)} on average "
                   f"(spread {_margin(verdict.spread, c.metric)} across seeds), on {verdict.wins} of {verdict.seeds} "
                   f"seeds{_behind(verdict)}: too few for the sign test to call, so the two are level.")
    else:
        outcome = (f"{verdict.winner} is ahead of {verdict.runner_up} by {_margin(verdict.margin, c.metric)} on "
                   f"average (spread {_margin(verdict.spread, c.metric)} across seeds), on {verdict.wins} of {verdict.seeds} "
                   f"seeds{_behind(verdict)}.")
    chapter = f"{{doc}}`{c.chapter}`" if not str(c.chapter).isdigit() else f"chapter {c.chapter}"
    lines = [
        f"({label(c.key)})=",
        f"## {c.question}",
        "",
        (f"*From {chapter}, claim `{c.key}`.* The chapter's text reads this claim on the reference run stored "
         f"with the book (commlib/lab/data), and shows the reader's own run beside it, so the numbers it quotes "
         f"are that run's, not these. On {c.live}, the test finds: "
         f"{verdict.sentence}" if getattr(c, "live", "") else
         f"*From {chapter}, claim `{c.key}`.* The chapter says: {verdict.sentence}"),
        "",
        f"| contender | may use | tuned over | best setting | {column} | spread (sd) |",
        "| --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
        f"Shared by every contender: {_shared(c.shared)}. Seeds: {seeds}. "
        f"{'Lower' if c.lower_is_better else 'Higher'} is better.",
        outcome,
        f"The test: `tests/test_claims_registry.py::test_claim_holds_with_every_contender_at_its_best[{c.key}]`"
        + (f"; the source: {c.source}." if c.source else "."),
        "",
    ]
    return "\n".join(lines)


def page() -> str:
    from commlib.experiments import claims

    keys = sorted(claims.load(), key=lambda k: (claims.claim(k).chapter, k))
    if not keys:
        return INTRO
    return INTRO + "\n" + "\n".join(section(claims.verdict(key)) for key in keys)


def main() -> int:
    TARGET.write_text(page(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
