"""Claims of chapter 4: the SGD protocols compared each at its own tuned learning rate, on the same budget.

Every protocol's rate is tuned over :data:`~commlib.experiments.sgd.grids.RATES` on five seeds
(:func:`~commlib.experiments.sgd.grids.grid_runs`, cached, so the claims, the figures and the
prose share one set of runs); the three two-way races and the K trade-off, whose margins are less than one step
of that grid, tune over the finer :data:`FINE_RATES` and :data:`K_TRADEOFF_RATES`. The claims registered here
decide the chapter's sentences:

* ``ch04.async_vs_sync``: which ends lower on the same budget, synchronous or asynchronous SGD (this and the next
  two tuned on :data:`TWO_WAY_SEEDS` and scored on :data:`TWO_WAY_SCORING_SEEDS`, thirty held-out seeds);
* ``ch04.async_vs_sync_error``: the same two by test error, at the same rates and on the same held-out runs;
* ``ch04.k_sync_vs_k_async``: K-sync against K-async (K = 4), the tie the exponential law predicts;
* ``ch04.staleness_cost``: asynchronous SGD against its own schedule replayed never stale (the same updates and
  mini-batches, each gradient at the current parameters);
* ``ch04.k_tradeoff``: K-async for K = 1 ... n, each K tuned on its finer grid (:data:`K_TRADEOFF_RATES`);
* ``ch04.batch_sync``: K-batch-sync against K-sync, time to a target loss, eight seeds;
* ``ch04.law_race_shifted_exponential`` and ``ch04.law_race_pareto``: the four K-protocols under a compute-time
  law with a minimum time, each at its own K and rate, time to a target loss;
* ``ch04.law_race_exponential``: the same race under memoryless (exponential) compute times, the control;
* ``ch04.warmup_batch1024`` and ``ch04.warmup_batch2048``: warm-up against none where the linear scaling rule breaks.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ...sgd import training
from .. import claims
from . import grids
from .summaries import PROTOCOL_LABELS, protocol_label, run_ends
from .sync_async import KSweep, KSweepPoint

__all__ = ["RACE_PROTOCOLS", "TWO_WAY_SEEDS", "TWO_WAY_SCORING_SEEDS", "time_groups", "SHARED_RATE", "Race", "race_runs", "k_tuned_runs",
           "race_settings", "BATCH_SYNC_RATES", "BATCH_SYNC_SEEDS", "TARGET_ABOVE_OPTIMUM", "optimum",
           "level_text", "ranking", "warmup_loss", "sharpness_along", "LAW_RACE_LAWS", "LAW_NAMES", "LAW_RACE_PROTOCOLS",
           "LAW_RATES", "LAW_BUDGET", "LAW_KS", "law_spacing", "error_gap", "error_words", "k_sweep_tuned", "sweep_levels",
           "law_race_settings", "law_grid", "law_best_runs", "time_ranking",
           "law_race_words", "law_race_short", "batch_sync_ratio_words", "WARMUP_STEPS", "shared_rate_order",
           "shared_rate_words", "SPLIT_NAMES",
           "staleness_split", "staleness_split_words", "staleness_split_short", "staleness_split_lead",
           "staleness_split_rows", "never_stale_falling", "floor_lead", "WARMUP_KS",
           "warmup_range_words", "warmup_range_rows", "staleness_rows", "staleness_finding_words",
           "staleness_share_gap_text", "staleness_shared_words",
           "capped_loss", "rate_cap", "RATE_CAP_FRACTION", "CAP_NAME",
           "LINEAR_NAME", "FRESH_NAME", "staleness_share", "staleness_cost_short", "grid_step_words",
           "coarse_step_words", "FINE_RATES", "fine_grid_words", "fine_falling", "staleness_cost_by_rate", "staleness_cost_at",
           "staleness_rate_words", "K_TRADEOFF_RATES", "k_rate_words", "LAW_CONTROL", "law_control_words",
           "law_control_short", "never_idle", "law_ks", "tail_error", "sync_falling_words", "k_lessons", "race_finding_words",
           "shared_rate_plain"]

#: The rates K-batch-sync and K-sync are tuned over for the time to reach the target (the best, 1, inside).
BATCH_SYNC_RATES: tuple[float, ...] = (0.5, 1.0, 2.0)
#: Eight seeds: the two differ by about a tenth, as their times per update do.
BATCH_SYNC_SEEDS: tuple[int, ...] = tuple(range(8))
#: The target of the K-batch-sync race: this many nats above the problem's optimum.
TARGET_ABOVE_OPTIMUM = 0.07


#: The protocols of the race figure, in drawing order.
RACE_PROTOCOLS: tuple[tuple[str, int | None], ...] = (("sync", None), ("k_sync", 4), ("async", None), ("k_async", 4))
#: The rate per update the source notes give every protocol alike: where Dutta et al.'s error floor shows.
SHARED_RATE = 0.5


def race_settings(small: bool = False) -> dict:
    """The settings every race of chapter 4 shares: learners, budget (mean compute times), batch, seeds."""
    return {"workers": 16, "budget": 150.0 if small else 400.0, "batch_size": 8, "small": small,
            "seeds": grids.SEEDS}


def optimum(small: bool = False) -> dict:
    """The problem's optimum: the lowest training loss (nats) and the test error (share) there."""
    p = grids.problem(small)
    return {"loss": p.loss(p.optimum), "error": p.error(p.optimum), "n_test": int(p.y_test.size)}


def _grid(protocol: str, k: int | None, s: dict, **kwargs) -> grids.Grid:
    return grids.grid_runs(protocol, s["workers"], k, s["budget"], seeds=s["seeds"], small=s["small"],
                           batch_size=s["batch_size"], **kwargs)


def _scoring(s: dict, seed: int) -> dict | None:
    """``s`` for the held-out runs (its ``scoring_seeds``, one rate: ``s["lr"]``) where ``seed`` is one of them;
    None where ``seed`` tunes (a seed of ``s["seeds"]``)."""
    if seed in s["seeds"]:
        return None
    return {**s, "seeds": tuple(s["scoring_seeds"])}


def _level_contender(protocol: str, k: int | None, workers: int = 16,
                     rates: tuple[float, ...] = grids.RATES) -> claims.Contender:
    """``protocol`` (``k`` where it uses K) tuned over ``rates`` on the claim's seeds, its best run again on the
    held-out seeds."""
    label = protocol_label(protocol, workers, k)

    def run(s: dict, seed: int) -> float:
        held = _scoring(s, seed)
        g = _grid(protocol, k, s, rates=rates) if held is None else _grid(protocol, k, held, rates=(s["lr"],))
        return grids.level(g.run(s["lr"], seed), s["budget"])

    return claims.Contender(label, run, {"lr": rates},
                            uses=f"{workers} learners, exponential compute times, batches of 8, its own rate")


def _fresh_contender(rates: tuple[float, ...] = grids.RATES) -> claims.Contender:
    """Asynchronous SGD's own schedule with every staleness set to 0: the same updates and mini-batches, each gradient
    computed at the current parameters (:func:`~commlib.sgd.simulate.schedule` with ``fresh=True``), tuned over
    ``rates``."""

    def run(s: dict, seed: int) -> float:
        held = _scoring(s, seed)
        g = _grid("async", None, s, rates=rates, fresh=True) if held is None else \
            _grid("async", None, held, rates=(s["lr"],), fresh=True)
        return grids.level(g.run(s["lr"], seed), s["budget"])

    return claims.Contender(FRESH_NAME, run, {"lr": rates},
                            uses="asynchronous SGD's schedule and mini-batches (16 learners), every gradient at the "
                                 "current parameters, its own rate")


#: The never-stale control of chapter 4: asynchronous SGD's schedule replayed with staleness 0.
FRESH_NAME = "asynchronous, never stale (same updates and mini-batches)"


def level_text(best: claims.Best, unit: str = " nats") -> str:
    """A contender's mean level, quoted no finer than its spread over the seeds, with that spread."""
    mean, sd = grids.mean_sd(best.values)
    d = grids.decimals(sd)
    return f"{mean:.{d}f} ± {sd:.{d}f}{unit}"


def _margin_text(v: claims.Verdict) -> str:
    d = grids.decimals(v.spread)
    return f"{v.margin:.{d}f} ± {v.spread:.{d}f}"


def _seeds_text(v: claims.Verdict) -> str:
    return f"on all {v.seeds} seeds" if v.unanimous else f"on {v.wins} of {v.seeds} seeds"


def _within_spreads(v: claims.Verdict) -> bool:
    """The winner's margin is smaller than either contender's own spread over the seeds."""
    return v.margin < min(grids.mean_sd(v.best[v.winner].values)[1], grids.mean_sd(v.best[v.runner_up].values)[1])


def _apart(first: claims.Best, other: claims.Best, resolution: float = 0.0) -> bool:
    """``first`` is ahead of ``other`` (lower) by the rule of :attr:`~commlib.experiments.claims.Verdict.decided`, a
    sign test over the paired seeds, and on average by more than ``resolution`` (what the metric can resolve)."""
    gaps = [b - a for a, b in zip(first.values, other.values)]
    if not claims.sign_test(sum(g > 0 for g in gaps), len(gaps), sum(g < 0 for g in gaps)):
        return False
    finite = [g for g in gaps if math.isfinite(g)]
    return len(finite) < len(gaps) or statistics.fmean(finite) > resolution


def _two_way(v: claims.Verdict) -> str:
    w, r = v.best[v.winner], v.best[v.runner_up]
    rates = f"best rates {w.config['lr']:g} and {r.config['lr']:g}"
    if not v.decided:
        return (f"{v.winner} and {v.runner_up} end level ({level_text(w)} against {level_text(r)}, {rates}; "
                f"the first lower in only {v.wins} of {v.seeds} seeds, by {_margin_text(v)} nats)")
    if _within_spreads(v):
        return (f"{v.winner} ends lower than {v.runner_up} {_seeds_text(v)}, by {_margin_text(v)} nats seed by seed: "
                f"consistent, though less than either one's spread over the seeds ({level_text(w)} against "
                f"{level_text(r)}, {rates})")
    return (f"{v.winner} ends lower than {v.runner_up}: {level_text(w)} against {level_text(r)} ({rates}), "
            f"lower {_seeds_text(v)}, by {_margin_text(v)} nats")


def _two_way_headline(v: claims.Verdict) -> str:
    """The two-way verdict in a few words, its numbers left to :func:`commlib.views.claims.verdict_table`: a winner
    only where :attr:`~commlib.experiments.claims.Verdict.decided`."""
    if not v.decided:
        return f"{v.winner} and {v.runner_up} end level"
    if _within_spreads(v):
        return (f"{v.winner} ends lower {_seeds_text(v)}, by {_margin_text(v)} nats seed by seed: consistent, though "
                f"less than either one's spread over the seeds")
    return f"{v.winner} ends lower {_seeds_text(v)}"


#: The seeds that tune the three two-way races (asynchronous against synchronous, staleness, K-sync against K-async):
#: the chapter's five (:data:`~commlib.experiments.sgd.grids.SEEDS`), whose runs the figures share.
TWO_WAY_SEEDS: tuple[int, ...] = grids.SEEDS
#: The held-out seeds that score them (each contender's best rate alone, run again): thirty, as their margins are
#: a few ten-thousandths to a few thousandths of a nat, at or below the spread between seeds; the sign test then
#: calls a winner ahead on 21 of 30 or more. (An earlier never-stale control, one learner, drew other mini-batches
#: than asynchronous SGD; its unpaired differences hid the staleness cost the paired replay now measures.)
TWO_WAY_SCORING_SEEDS: tuple[int, ...] = tuple(range(5, 35))

#: The finer rate grids the three two-way races tune over, a factor of about 1.2 between neighbours around each
#: protocol's best on the coarse :data:`~commlib.experiments.sgd.grids.RATES` (asynchronous SGD and its never-stale
#: replay share theirs), wide enough to hold the best of the registry test's smaller problem too (two to three times
#: higher). Their margins are a few ten-thousandths of a nat, less than one step of the coarse grid, and the cost of
#: staleness grows with the rate: a coarse grid whose best lies above the optimum overstates it.
FINE_RATES: dict[str, tuple[float, ...]] = {
    "async": (0.025, 0.03, 0.035, 0.04, 0.05, 0.06, 0.07, 0.085, 0.1, 0.12),
    "sync": (0.7, 0.85, 1.0, 1.2, 1.4, 1.7, 2.0, 2.5, 3.0, 3.5),
    "k_async": (0.1, 0.12, 0.14, 0.17, 0.2, 0.25, 0.33, 0.4, 0.5, 0.6),
    "k_sync": (0.1, 0.12, 0.14, 0.17, 0.2, 0.25, 0.33, 0.4, 0.5, 0.6),
}

#: The rates each K of the K trade-off (K-async, n = 16) is tuned over: the two-way races' finer grids for K = 1
#: (asynchronous), K = 4 and K = 16 (fully synchronous), and grids as fine around the best of K = 2 and K = 8, wide
#: enough to hold the best of the registry test's smaller problem too. Its margins, a few ten-thousandths of a nat
#: between neighbouring K, are less than one step of the coarse grid.
K_TRADEOFF_RATES: dict[int, tuple[float, ...]] = {
    1: FINE_RATES["async"],
    2: (0.04, 0.05, 0.06, 0.07, 0.085, 0.1, 0.12, 0.14, 0.17, 0.2, 0.25),
    4: FINE_RATES["k_async"],
    8: (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0, 1.2),
    16: FINE_RATES["sync"],
}


def _k_protocol(K: int, workers: int = 16) -> tuple[str, int | None]:
    """K-async with ``K`` of ``workers`` learners as the simulator names it: asynchronous at K = 1, fully synchronous
    at K = n."""
    return ("async", None) if K == 1 else (("sync", None) if K == workers else ("k_async", K))


def _build_two(key: str, question: str, a: claims.Contender, b: claims.Contender, small: bool,
               source: str = "") -> claims.Claim:
    s = {**race_settings(small), "seeds": TWO_WAY_SEEDS, "scoring_seeds": TWO_WAY_SCORING_SEEDS}
    return claims.Claim(key, question, (a, b), metric="mean training loss over the last quarter of the budget (nats)",
                        seeds=s["seeds"], scoring_seeds=s["scoring_seeds"], shared=s, wording=_two_way,
                        chapter="04_sync_async_sgd", source=source, headline=_two_way_headline)


@claims.register("ch04.async_vs_sync")
def async_vs_sync(small: bool = False) -> claims.Claim:
    """Asynchronous against fully synchronous SGD, 16 learners, each at its own rate, on the same budget."""
    return _build_two("ch04.async_vs_sync", "On the same wall-clock budget, each at its own best rate, which ends "
                      "lower: asynchronous or fully synchronous SGD?",
                      _level_contender("async", None, rates=FINE_RATES["async"]),
                      _level_contender("sync", None, rates=FINE_RATES["sync"]), small, source="dutta2018slow")


@claims.register("ch04.k_sync_vs_k_async")
def k_sync_vs_k_async(small: bool = False) -> claims.Claim:
    """K-sync against K-async (K = 4): the same time per update under exponential times."""
    return _build_two("ch04.k_sync_vs_k_async", "Under exponential compute times, each at its own best rate, does "
                      "K-async (K = 4) end lower than K-sync (K = 4)?",
                      _level_contender("k_async", 4, rates=FINE_RATES["k_async"]),
                      _level_contender("k_sync", 4, rates=FINE_RATES["k_sync"]), small, source="dutta2018slow")


@claims.register("ch04.staleness_cost")
def staleness_cost(small: bool = False) -> claims.Claim:
    """Asynchronous SGD (16 learners, stale) against its own schedule replayed with staleness 0 (the same updates and
    mini-batches, each gradient at the current parameters), each tuned."""
    return _build_two("ch04.staleness_cost", "Each at its own best rate, what does staleness cost: asynchronous SGD "
                      "with 16 learners against the same updates on the same mini-batches with every gradient "
                      "computed at the current parameters?",
                      _level_contender("async", None, rates=FINE_RATES["async"]),
                      _fresh_contender(FINE_RATES["async"]), small)


def tail_error(run, budget: float) -> float:
    """A run's test error (%) averaged over the last quarter of ``budget``, the window :func:`grids.level` reads."""
    keep = run.eval_times > 0.75 * budget
    return 100 * float(run.errors[keep].mean())


def _tuned_rate(protocol: str, k: int | None, rates: tuple[float, ...], small: bool = False) -> float:
    """``protocol``'s best rate of ``rates`` by training loss on :data:`TWO_WAY_SEEDS` (the pick of the two-way
    races, from their cached runs)."""
    return _grid(protocol, k, {**race_settings(small), "seeds": TWO_WAY_SEEDS}, rates=rates).best_rate


def _error_contender(protocol: str, k: int | None, rate: float, workers: int = 16) -> claims.Contender:
    """``protocol`` at ``rate`` (its best by training loss, :func:`_tuned_rate`), scored by test error: the runs of
    the two-way races, nothing new trained."""
    label = protocol_label(protocol, workers, k)

    def run(s: dict, seed: int) -> float:
        held = _scoring(s, seed)
        tuning = {**s, "seeds": TWO_WAY_SEEDS}
        g = _grid(protocol, k, held if held is not None else tuning, rates=(s["lr"],) if held is not None
                  else FINE_RATES[protocol])
        return tail_error(g.run(s["lr"], seed), s["budget"])

    return claims.Contender(label, run, {"lr": (rate,)},
                            uses=f"{workers} learners, exponential compute times, batches of 8, its rate the best of "
                                 "its finer grid by training loss on the tuning seeds (ch04.async_vs_sync's), not "
                                 "tuned again on test error")


def _error_words(v: claims.Verdict) -> str:
    w, r = v.best[v.winner], v.best[v.runner_up]
    name = {"asynchronous (K = 1)": "asynchronous SGD", "fully synchronous (K = n = 16)": "fully synchronous SGD"}
    first, second = name.get(v.winner, v.winner), name.get(v.runner_up, v.runner_up)
    levels = (f"{level_text(w, ' %')} against {level_text(r, ' %')}, rates {w.config['lr']:g} and "
              f"{r.config['lr']:g}")
    if not v.decided:
        return (f"in test error {first} and {second} end level ({levels}; the first lower on only {v.wins} of "
                f"{v.seeds} held-out seeds, by {_margin_text(v)} points)")
    return (f"in test error {first} ends lower, {_seeds_text(v).replace('seeds', 'held-out seeds')}, by "
            f"{_margin_text(v)} percentage points seed by seed ({levels})")


def _error_headline(v: claims.Verdict) -> str:
    name = {"asynchronous (K = 1)": "asynchronous SGD", "fully synchronous (K = n = 16)": "fully synchronous SGD"}
    if not v.decided:
        return "in test error the two end level"
    return (f"in test error {name.get(v.winner, v.winner)} ends lower "
            f"{_seeds_text(v).replace('seeds', 'held-out seeds')}, by {_margin_text(v)} points")


@claims.register("ch04.async_vs_sync_error")
def async_vs_sync_error(small: bool = False) -> claims.Claim:
    """Asynchronous against fully synchronous SGD by test error, each at its best rate by training loss (the rates
    and runs of ``ch04.async_vs_sync``), on the same held-out seeds."""
    s = {**race_settings(small), "seeds": TWO_WAY_SEEDS, "scoring_seeds": TWO_WAY_SCORING_SEEDS}
    contenders = tuple(_error_contender(p, None, _tuned_rate(p, None, FINE_RATES[p], small)) for p in ("async", "sync"))
    return claims.Claim("ch04.async_vs_sync_error", "On the same wall-clock budget, each at its own best rate (by "
                        "training loss), which ends with the lower test error: asynchronous or fully synchronous SGD?",
                        contenders, metric="mean test error over the last quarter of the budget (%)",
                        seeds=s["seeds"], scoring_seeds=s["scoring_seeds"], shared=s, wording=_error_words,
                        chapter="04_sync_async_sgd", source="dutta2018slow", headline=_error_headline)


def _never_stale_grid(s: dict, rates: tuple[float, ...]) -> tuple[grids.Grid, float]:
    """Asynchronous SGD's schedule of ``s`` replayed with staleness 0 (the same updates and mini-batches, each gradient
    at the current parameters), at every rate of ``rates``; and its budget (mean compute times)."""
    return _grid("async", None, s, rates=rates, fresh=True), float(s["budget"])


def _at_shared_rate(name: str, protocol: str | None) -> claims.Contender:
    """A contender at the claim's shared rate ``lr`` (not tuned): ``protocol`` with 16 learners, or (None)
    asynchronous SGD's schedule replayed with staleness 0 (the same updates and mini-batches)."""

    def run(s: dict, seed: int) -> float:
        if protocol is None:
            g, budget = _never_stale_grid(s, (s["lr"],))
            return grids.level(g.run(s["lr"], seed), budget)
        return grids.level(_grid(protocol, None, s).run(s["lr"], seed), s["budget"])

    return claims.Contender(name, run, uses="the shared rate per update, " + (
        "asynchronous SGD's schedule and mini-batches, every gradient at the current parameters, batches of 8"
        if protocol is None else
        "16 learners, exponential compute times, batches of 8"))


#: The contenders of ``ch04.shared_rate_staleness``, by role.
SPLIT_NAMES = {"async": "asynchronous (K = 1)", "one": FRESH_NAME,
               "sync": "fully synchronous (K = n = 16)"}


def staleness_split(v: claims.Verdict) -> dict:
    """``v``, the ``ch04.shared_rate_staleness`` verdict, seed by seed: the gap (nats) between asynchronous and fully
    synchronous SGD at the shared rate, the part of it between asynchronous SGD and its schedule replayed never stale
    (what staleness costs), its share of the gap, and on how many seeds the never-stale replay ends between the two.
    Each as ``(mean, sd)`` over the seeds."""
    a, one, sync = (v.best[SPLIT_NAMES[r]].values for r in ("async", "one", "sync"))
    gap = [x - y for x, y in zip(a, sync)]
    stale = [x - y for x, y in zip(a, one)]
    return {"gap": grids.mean_sd(gap), "stale": grids.mean_sd(stale),
            "rest": grids.mean_sd([y - z for y, z in zip(one, sync)]),
            "share": grids.mean_sd([100 * st / g for st, g in zip(stale, gap)]),
            "between": sum(x > y > z for x, y, z in zip(a, one, sync)), "seeds": len(gap)}


def staleness_split_words(v: claims.Verdict) -> str:
    """How the gap at the shared rate splits, from :func:`staleness_split`, no number finer than its spread."""
    d = staleness_split(v)
    (gap, gap_sd), (stale, stale_sd), (share, share_sd) = d["gap"], d["stale"], d["share"]
    g, st = grids.decimals(gap_sd), grids.decimals(stale_sd)
    sh = max(0, grids.decimals(share_sd))
    if d["between"] != d["seeds"] or not claims.sign_test(d["between"], d["seeds"]):
        return (f"the never-stale replay does not end between the two on every seed (on {d['between']} of "
                f"{d['seeds']}), so this run does not split the gap of {gap:.{g}f} ± {gap_sd:.{g}f} nats")
    return (f"asynchronous SGD's own updates and mini-batches, replayed at the same rate with every gradient "
            f"computed at the current parameters, end between the two on all "
            f"{d['seeds']} seeds: of the {gap:.{g}f} ± {gap_sd:.{g}f} nats by which asynchronous SGD ends above "
            f"fully synchronous SGD, {stale:.{st}f} ± {stale_sd:.{st}f} ({share:.{sh}f} ± {share_sd:.{sh}f} %, seed "
            f"by seed) is staleness, and the rest comes with applying one gradient per update instead of an average "
            f"of {v.claim.shared['workers']}")


def floor_lead(falling: dict, seeds: int) -> str:
    """Whether the levels at the shared rate are floors: ``falling`` maps each row's name to the seeds on which its
    run is still falling at the end of the budget. Where none is, they are Dutta et al.'s error floor; else the
    sentence names the rows that have not settled and calls the final losses what they are, where the runs stand at this
    budget.

    >>> floor_lead({"asynchronous SGD": 0}, 5)[:24]
    'No run is still falling:'
    >>> "at this budget" in floor_lead({"asynchronous SGD": 0, "fully synchronous SGD": 5}, 5)
    True
    """
    moving = {name: n for name, n in falling.items() if n}
    what = ("at a constant rate SGD settles where the noise of its steps balances the pull of the gradient")
    if not moving:
        return f"No run is still falling: these are Dutta et al.'s *error floor*: {what}"
    where = "on every seed" if all(n == seeds for n in moving.values()) else "on some seeds"
    verb = "is" if len(moving) == 1 else "are"
    return (f"These are not all floors: at the end of the budget {_and(list(moving))} {verb} still falling {where} "
            f"(last column), "
            f"so the final losses, and the gap between them, are where the runs stand at this budget. Dutta et al.'s "
            f"*error floor* is the loss they head for: {what}")


def _at_budget(falling: int) -> str:
    return "at this budget (where fully synchronous SGD has not yet settled), " if falling else ""


def staleness_split_lead(v: claims.Verdict, falling: int = 0) -> str:
    """The split in one sentence for the prose, its nats left to :func:`staleness_split_rows`' table: whether the
    never-stale replay ends between the two on every seed, and if so staleness's share of the gap (``falling``: the
    seeds on which fully synchronous SGD is still falling at the end of the budget; then the split is at this
    budget, not between two floors)."""
    d = staleness_split(v)
    if d["between"] != d["seeds"] or not claims.sign_test(d["between"], d["seeds"]):
        return (f"the never-stale replay does not end between the two on every seed (on {d['between']} of "
                f"{d['seeds']}), so this run does not split the gap")
    share, sd = d["share"]
    sh = max(0, grids.decimals(sd))
    return (f"{_at_budget(falling)}asynchronous SGD's own updates and mini-batches, replayed at the same rate with "
            f"every gradient computed at the current parameters, end between the two on all "
            f"{d['seeds']} seeds: staleness makes {share:.{sh}f} ± {sd:.{sh}f} % of the gap (seed by seed), applying "
            f"one gradient per update instead of an average of {v.claim.shared['workers']} the rest")


def staleness_split_rows(v: claims.Verdict) -> list[list[str]]:
    """The split of :func:`staleness_split` as table rows (part, nats, share of the gap), each mean ± sd over the
    seeds, seed by seed; the two parts only where the never-stale replay ends between the two on every seed."""
    d = staleness_split(v)

    def nats(key):
        mean, sd = d[key]
        return f"{mean:.{grids.decimals(sd)}f} ± {sd:.{grids.decimals(sd)}f}"

    rows = [["the whole gap: asynchronous SGD above fully synchronous SGD", nats("gap"), "100 %"]]
    if d["between"] == d["seeds"] and claims.sign_test(d["between"], d["seeds"]):
        share, sd = d["share"]
        sh = max(0, grids.decimals(sd))
        rows += [["staleness: asynchronous SGD above its never-stale replay", nats("stale"),
                  f"{share:.{sh}f} ± {sd:.{sh}f} %"],
                 [f"one gradient per update instead of an average of {v.claim.shared['workers']}: the never-stale "
                  "replay above fully synchronous SGD", nats("rest"), f"{100 - share:.{sh}f} ± {sd:.{sh}f} %"]]
    return rows


def staleness_split_short(v: claims.Verdict, falling: int = 0) -> str:
    """The split in a few words, for a takeaway (``falling`` as for :func:`staleness_split_lead`)."""
    d = staleness_split(v)
    if d["between"] != d["seeds"]:
        return "staleness and the noise of one gradient per update were not told apart there"
    share, sd = d["share"]
    sh = max(0, grids.decimals(sd))
    budget = " and this budget, where fully synchronous SGD has not yet settled" if falling else ""
    return (f"at rate {v.claim.shared['lr']:g}{budget}, staleness makes {share:.{sh}f} ± {sd:.{sh}f} % of asynchronous SGD's "
            f"gap to fully synchronous SGD, the noise of one gradient per update the rest")


@claims.register("ch04.shared_rate_staleness")
def shared_rate_staleness(small: bool = False) -> claims.Claim:
    """At the shared rate per update: asynchronous SGD, its schedule replayed never stale (the same updates and
    mini-batches), fully synchronous SGD; how much of the first's gap to the last is staleness."""
    s = {**race_settings(small), "lr": SHARED_RATE}
    contenders = (_at_shared_rate(SPLIT_NAMES["async"], "async"), _at_shared_rate(SPLIT_NAMES["one"], None),
                  _at_shared_rate(SPLIT_NAMES["sync"], "sync"))
    return claims.Claim("ch04.shared_rate_staleness", f"At one shared rate per update ({SHARED_RATE:g}), how much of "
                        "the gap between asynchronous and fully synchronous SGD is staleness: where does asynchronous SGD's "
                        "schedule, replayed on the same mini-batches with every gradient fresh, end?", contenders,
                        metric="mean training loss over the last quarter of the budget (nats)", seeds=s["seeds"],
                        shared=s, wording=staleness_split_words, chapter="04_sync_async_sgd", source="dutta2018slow",
                        headline=ranking_headline)


def never_stale_falling(small: bool = False, rate: float = SHARED_RATE) -> int:
    """On how many seeds asynchronous SGD's schedule replayed never stale, at ``rate``, is still falling at the end of
    its budget."""
    s = race_settings(small)
    g, budget = _never_stale_grid(s, (rate,))
    return sum(run_ends({"one": g.run(rate, sd)}, budget)[0].descending for sd in g.seeds)


def ranking(v: claims.Verdict) -> str:
    """Every contender from the lowest level to the highest, each with its spread and best rate; those the lowest
    does not lead by the sign test over the seeds (:attr:`~commlib.experiments.claims.Verdict.decided`) are
    called level with it."""
    order = sorted(v.best, key=lambda name: v.best[name].mean)
    level, above = _level_split(v)

    def item(name):
        b = v.best[name]
        return f"{name} {level_text(b)} (rate {b.config['lr']:g})"

    text = "; ".join(item(n) for n in order)
    if len(level) > 1:
        text += (f". {_and(level)} end level ({v.winner} below {v.runner_up} in only {v.wins} of {v.seeds} seeds, "
                 f"by {_margin_text(v)} nats)")
    else:
        text += f". {order[0]} ends lowest on its own"
    if above:
        text += f"; {_and(above)} {'ends' if len(above) == 1 else 'end'} higher"
    return text


def _level_split(v: claims.Verdict) -> tuple[list[str], list[str]]:
    """The contenders the lowest does not lead by the sign test over the seeds (level with it), and the rest."""
    order = sorted(v.best, key=lambda name: v.best[name].mean)
    first = v.best[order[0]]
    level, above = [order[0]], []
    for name in order[1:]:
        (above if _apart(first, v.best[name]) else level).append(name)
    return level, above


def ranking_headline(v: claims.Verdict) -> str:
    """The ranking in a few words: which end level at the bottom, which end higher."""
    level, above = _level_split(v)
    text = f"{_and(level)} end level" if len(level) > 1 else f"{level[0]} ends lowest"
    if above:
        text += f"; {_and(above)} {'ends' if len(above) == 1 else 'end'} higher"
    return text


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@claims.register("ch04.k_tradeoff")
def k_tradeoff(small: bool = False) -> claims.Claim:
    """K-async for K = 1, 2, 4, 8, 16 (K = 1 asynchronous, K = n fully synchronous), each K at its own rate, tuned on
    its finer grid (:data:`K_TRADEOFF_RATES`)."""
    s = race_settings(small)
    contenders = tuple(_level_contender(*_k_protocol(K, s["workers"]), rates=K_TRADEOFF_RATES[K])
                       for K in K_TRADEOFF_RATES)
    s = {**s, "seeds": TWO_WAY_SEEDS, "scoring_seeds": TWO_WAY_SCORING_SEEDS}
    return claims.Claim("ch04.k_tradeoff", "On the same budget, each K at its own best rate, which K of K-async ends "
                        "lowest?", contenders, metric="mean training loss over the last quarter of the budget (nats)",
                        seeds=s["seeds"], scoring_seeds=s["scoring_seeds"], shared=s, wording=ranking, chapter="04_sync_async_sgd",
                        source="dutta2018slow", headline=ranking_headline)


def k_rate_words(v: claims.Verdict, steps: int = 2) -> str:
    """How the best rate of the K trade-off (``v``, the ``ch04.k_tradeoff`` verdict) grows with K: up to which K about
    in proportion to K, and how at the larger K. Each best rate was picked on a grid, so "about in proportion" means
    each best rate over K within ``steps`` steps of the finer grids (a step: the largest ratio of neighbouring rates in
    :data:`K_TRADEOFF_RATES`) of K = 1's; a finer statement than that the grids do not support. The rates themselves
    are left to the verdict's table.

    >>> from types import SimpleNamespace as N
    >>> c = N(contenders=[N(name=str(k)) for k in (1, 2, 4, 8, 16)])
    >>> best = {str(k): N(config={"lr": r}) for k, r in zip((1, 2, 4, 8, 16), (0.035, 0.07, 0.14, 0.35, 1.2))}
    >>> k_rate_words(N(claim=c, best=best))[76:]
    'about in proportion to $K$ up to $K = 8$ (within two steps of the grids), and faster at $K = 16$'
    """
    ks = list(K_TRADEOFF_RATES)
    rates = [v.best[c.name].config["lr"] for c in v.claim.contenders]
    if any(b <= a for a, b in zip(rates, rates[1:])):
        return "The best rate does not grow steadily with $K$"
    step = max(b / a for grid in K_TRADEOFF_RATES.values() for a, b in zip(grid, grid[1:]))
    base = rates[0] / ks[0]
    within = [abs(math.log(r / k / base)) <= steps * math.log(step) for k, r in zip(ks, rates)]
    last = next((i for i, ok in enumerate(within) if not ok), len(ks))
    text = "The best rate grows with $K$, the number of gradients each update averages: "
    tol = f" (within {_STEPS_WORDS.get(steps, steps)} step{'s' if steps != 1 else ''} of the grids)"
    if last == len(ks):
        return text + "about in proportion to $K$" + tol
    beyond = "faster" if rates[last] / ks[last] > base else "more slowly"
    if last <= 1:
        return text + f"{beyond} than in proportion to $K$" + tol
    where = f"at $K = {ks[last]}$" if last == len(ks) - 1 else f"from $K = {ks[last]}$"
    return text + f"about in proportion to $K$ up to $K = {ks[last - 1]}${tol}, and {beyond} {where}"


_STEPS_WORDS = {1: "one", 2: "two", 3: "three"}


def k_lessons(v: claims.Verdict) -> str:
    """The K trade-off (``v``, the ``ch04.k_tradeoff`` verdict) in a few words, no number but the K: which K end level
    at the bottom and whether every larger K ends higher, by the sign test over the held-out seeds; e.g. "on this
    budget $K = 1$ and $K = 2$ end level, and every larger $K$ ends higher"."""
    k_of = {c.name: k for c, k in zip(v.claim.contenders, K_TRADEOFF_RATES)}
    level, above = _level_split(v)
    low = sorted(k_of[n] for n in level)
    text = ("on this budget " + _and([f"$K = {k}$" for k in low]) + (" end level" if len(low) > 1 else " ends lowest"))
    if above and min(k_of[n] for n in above) > max(low):
        return text + ", and every larger $K$ ends higher"
    if above:
        return text + "; " + _and([f"$K = {k}$" for k in sorted(k_of[n] for n in above)]) + " end higher"
    return text

# --------------------------------------------------------------------------- K-batch-sync against K-sync


def _time_contender(protocol: str) -> claims.Contender:
    label = protocol_label(protocol, 16, 4)

    def run(s: dict, seed: int) -> float:
        g = grids.grid_runs(protocol, 16, 4, s["budget"], rates=BATCH_SYNC_RATES, seeds=s["seeds"], small=s["small"],
                            batch_size=s["batch_size"], curves=True, points=60)
        return grids.time_to_level(g.run(s["lr"], seed), s["target"])

    return claims.Contender(label, run, {"lr": BATCH_SYNC_RATES},
                            uses="16 learners, K = 4, exponential compute times, batches of 8, its own rate")


def batch_sync_ratio(v: claims.Verdict) -> float:
    """The median over the seeds of the winner's time to the target over the runner-up's."""
    return statistics.median(a / b for a, b in zip(v.best[v.winner].values, v.best[v.runner_up].values))


def _batch_sync_headline(v: claims.Verdict) -> str:
    name = {protocol_label(p, 16, 4): PROTOCOL_LABELS[p] for p in ("k_batch_sync", "k_sync")}
    if not v.decided:
        return f"{name.get(v.winner, v.winner)} and {name.get(v.runner_up, v.runner_up)} are level in time to the target"
    text = (f"{name.get(v.winner, v.winner)} reaches the target first {_seeds_text(v)}, by "
            f"{_margin_text(v)} mean compute times")
    if v.margin <= v.spread:
        text += ": the sign test over the seeds calls the order, but the gap is no larger than its spread"
    return text


def batch_sync_ratio_words(v: claims.Verdict, time_ratio: float) -> str:
    """What the race ``v`` (the ``ch04.batch_sync`` verdict) says beside ``time_ratio``, K-batch-sync's time per
    update over K-sync's (closed form): the two ratios are set side by side only where the race decides its order
    (:attr:`~commlib.experiments.claims.Verdict.decided`) by more than the gap's spread; else the seed-by-seed
    ratios of the times to the target are given as a range, since their median over the seeds is noise."""
    ratios = [a / b for a, b in zip(v.best[v.winner].values, v.best[v.runner_up].values)]
    name = {protocol_label(p, 16, 4): PROTOCOL_LABELS[p] for p in ("k_batch_sync", "k_sync")}
    first, second = name.get(v.winner, v.winner), name.get(v.runner_up, v.runner_up)
    per_update = (f"K-batch-sync's time per update is {time_ratio:.2f} of K-sync's (closed form), a gain of "
                  f"{100 * (1 - time_ratio):.0f} % per update")
    # Wald's identity: both apply the same updates (K fresh gradients at the current parameters), so the number of
    # updates to the target has one distribution, independent of the updates' times; the expected time to the
    # target is then that number's mean times the mean time per update.
    argument = ("The argument settles the comparison, not the race: both apply the same updates, an average of K "
                "fresh gradients at the current parameters, so the number of updates "
                "to the target has the same distribution under both, and it does not depend on how long the "
                "updates take; by Wald's identity the expected time to the target is the expected number of "
                "updates times the expected time per update, so K-batch-sync's expected time to the target is "
                "K-sync's times that ratio of their times per update")
    if v.decided and v.margin > v.spread:
        return (f"{per_update}; in the race {first}'s time to the target is {batch_sync_ratio(v):.2f} of "
                f"{second}'s (median over the {v.seeds} seeds). {argument}")
    return (f"{per_update}, but the race over {v.seeds} seeds cannot resolve a gap of that size: seed by seed, "
            f"{first}'s time to the target is {min(ratios):.2f} to {max(ratios):.2f} of {second}'s. {argument}")


def _batch_sync_words(v: claims.Verdict) -> str:
    w, r = v.best[v.winner], v.best[v.runner_up]
    ratio = batch_sync_ratio(v)
    first = f"reaches the target first {_seeds_text(v)}, by {_margin_text(v)} mean compute times" if v.decided else \
        (f"and {v.runner_up} are level in time to the target ({v.winner} first in only {v.wins} of {v.seeds} seeds, by "
         f"{_margin_text(v)} mean compute times)")
    return (f"{v.winner} {first}: after {level_text(w, ' mean compute times')} "
            f"against {level_text(r, ' mean compute times')} (best rates {w.config['lr']:g} and "
            f"{r.config['lr']:g}; median ratio {ratio:.2f})")


@claims.register("ch04.batch_sync")
def batch_sync(small: bool = False) -> claims.Claim:
    """K-batch-sync against K-sync (n = 16, K = 4, exponential times): time to a loss near the optimum."""
    s = {"budget": 30.0 if small else 60.0, "batch_size": 8, "small": small, "seeds": BATCH_SYNC_SEEDS,
         "target": optimum(small)["loss"] + TARGET_ABOVE_OPTIMUM}
    return claims.Claim("ch04.batch_sync", "Under exponential compute times, each at its own best rate, does "
                        "K-batch-sync reach a loss near the optimum sooner than K-sync?",
                        (_time_contender("k_batch_sync"), _time_contender("k_sync")),
                        metric="time to the target loss (mean compute times)", seeds=BATCH_SYNC_SEEDS, shared=s,
                        wording=_batch_sync_words, chapter="04_sync_async_sgd", source="dutta2018slow",
                        headline=_batch_sync_headline)


# --------------------------------------------------------------------------- the K-protocols under laws with a minimum time

#: The compute-time laws of the race of the K-protocols (parameters: ``sync_async.UPDATE_TIME_LAWS``): both
#: have a minimum time, where K-async keeps work that K-sync cancels.
LAW_RACE_LAWS: tuple[str, ...] = ("shifted_exponential", "pareto")
#: The control of the law race: the same race under memoryless compute times, where K-async keeps no work that
#: K-sync would have to repeat.
LAW_CONTROL = "exponential"
#: How the prose names each law of the race.
LAW_NAMES: dict[str, str] = {"shifted_exponential": "shifted exponential", "pareto": "Pareto",
                             "exponential": "exponential (memoryless, the control)"}
#: The protocols raced under those laws (n = 16), each at its own K and rate.
LAW_RACE_PROTOCOLS: tuple[str, ...] = ("k_sync", "k_batch_sync", "k_async", "k_batch_async")
#: The K each protocol of the law race is tuned over (K <= n = 16 in every protocol). K-async and K-batch-async at
#: K = 1 are asynchronous SGD, so K-async's grid starts there; K-sync at K = 2 never reaches the target.
LAW_KS: dict[str, tuple[int, ...]] = {"k_sync": (4, 8, 12, 16), "k_batch_sync": (4, 8, 12, 16),
                                      "k_async": (1, 2, 4, 8), "k_batch_async": (2, 4, 8, 12, 16)}
#: The smaller K grids of the registry test: three values around each protocol's best.
LAW_KS_SMALL: dict[str, tuple[int, ...]] = {"k_sync": (8, 12, 16), "k_batch_sync": (8, 12, 16),
                                            "k_async": (1, 2, 4), "k_batch_async": (8, 12, 16)}
#: The K grids of the control (:data:`LAW_CONTROL`): under memoryless times K-sync's and K-batch-sync's best K moves
#: below 4, so their grids reach down to K = 1, the smallest there is; the others are :data:`LAW_KS`.
LAW_CONTROL_KS: dict[str, tuple[int, ...]] = {**LAW_KS, "k_sync": (1, 2, 4, 8, 12, 16),
                                              "k_batch_sync": (1, 2, 4, 8, 12, 16)}
LAW_CONTROL_KS_SMALL: dict[str, tuple[int, ...]] = {**LAW_KS_SMALL, "k_sync": (1, 2, 4, 8),
                                                    "k_batch_sync": (1, 2, 4, 8)}


def law_ks(law: str, small: bool = False) -> dict[str, tuple[int, ...]]:
    """The K each protocol of the race under ``law`` is tuned over (the control's reach lower)."""
    if law == LAW_CONTROL:
        return LAW_CONTROL_KS_SMALL if small else LAW_CONTROL_KS
    return LAW_KS_SMALL if small else LAW_KS


#: The rates per gradient each protocol of the law race is tuned over: an update of K gradients takes K times
#: that rate (the linear scaling rule, its factor tuned). Every best (0.125 or 0.18) lies inside.
LAW_RATES: tuple[float, ...] = (0.09, 0.125, 0.18, 0.25)
LAW_RATES_SMALL: tuple[float, ...] = LAW_RATES       # on narrower K grids the best rate moves: keep them all
#: The wall-clock budget of the law race (seconds; a mean compute time is 2 s shifted exponential, 1.67 s Pareto).
LAW_BUDGET = 150.0
#: Evaluations per run of the law race: the time to the target is known to one evaluation's spacing.
LAW_POINTS = 60
#: The held-out seeds that score the law race: each protocol's K and rate are picked on :data:`grids.SEEDS` and
#: its best is run again on these ten, which alone order the protocols (no pick's luck decides the order).
LAW_SCORING_SEEDS: tuple[int, ...] = tuple(range(5, 15))


def law_race_settings(law: str, small: bool = False) -> dict:
    """What every protocol of the race under ``law`` shares: learners, budget (s), batch, the seeds that tune and
    the held-out seeds that score, target (nats)."""
    from .sync_async import UPDATE_TIME_LAWS

    if law not in UPDATE_TIME_LAWS:
        raise ValueError(f"law must be one of {sorted(UPDATE_TIME_LAWS)}, got {law!r}")
    return {"law": law, "law_params": tuple(sorted(UPDATE_TIME_LAWS[law].items())), "workers": 16,
            "budget": LAW_BUDGET, "batch_size": 8, "small": False, "seeds": grids.SEEDS,
            "scoring_seeds": LAW_SCORING_SEEDS,
            "target": optimum(False)["loss"] + TARGET_ABOVE_OPTIMUM, "points": LAW_POINTS // 2 if small else LAW_POINTS}


def law_grid(protocol: str, k: int, s: dict, rates: tuple[float, ...] = LAW_RATES,
             seeds: tuple[int, ...] | None = None) -> grids.Grid:
    """``protocol`` with ``k`` under the law of settings ``s`` (:func:`law_race_settings`) at rate per update
    ``c * k`` for every rate per gradient ``c`` of ``rates``, on every seed of ``seeds`` (default: the tuning
    seeds), evaluated all along (cached: the claim, the figure and the prose share the runs)."""
    return grids.grid_runs(protocol, s["workers"], k, s["budget"], rates=tuple(c * k for c in rates),
                           seeds=s["seeds"] if seeds is None else tuple(seeds), small=s["small"],
                           batch_size=s["batch_size"], compute=s["law"],
                           compute_params=s["law_params"], curves=True, points=s["points"])


def _law_contender(protocol: str, small: bool = False, law: str = "pareto") -> claims.Contender:
    label = PROTOCOL_LABELS[protocol]
    ks = law_ks(law, small)[protocol]
    rates = LAW_RATES_SMALL if small else LAW_RATES

    def run(s: dict, seed: int) -> float:
        k, c = s["K"], s["rate per gradient"]
        if seed in s["seeds"]:       # tuning: the whole rate grid at once
            return grids.time_to_level(law_grid(protocol, k, s, rates).run(c * k, seed), s["target"])
        # scoring a best on the held-out seeds: that K and rate alone
        return grids.time_to_level(law_grid(protocol, k, s, (c,), s["scoring_seeds"]).run(c * k, seed), s["target"])

    lowest = min(ks)
    limits = {"K": 16} if lowest > 1 else {"K": 1}
    return claims.Contender(label, run, {"K": ks, "rate per gradient": rates}, limits=limits,
                            uses="16 learners, the law's compute times, batches of 8; its own K (1 <= K <= n) and "
                                 "its own rate (K times a rate per gradient)")


def law_spacing(v: claims.Verdict) -> float:
    """The coarsest spacing (s) between two evaluations among the best runs of a law race: the resolution of a
    time to the target."""
    s = v.claim.shared
    out = 0.0
    for name, b in v.best.items():
        protocol = _LAW_PROTOCOL[name]
        k = b.config["K"]
        updates = max(1, int(s["budget"] / grids.update_time(protocol, s["workers"], k, s["law"],
                                                              **dict(s["law_params"]))))
        out = max(out, s["budget"] * max(1, updates // s["points"]) / updates)
    return out


def _seconds(values, resolution: float = 0.0) -> str:
    finite = [x for x in values if math.isfinite(x)]
    if len(finite) < len(values):
        return f"not within the budget in {len(values) - len(finite)} of {len(values)} seeds"
    mean, sd = grids.mean_sd(finite)
    d = grids.decimals(max(sd, resolution))
    return f"{mean:.{d}f} ± {sd:.{d}f} s"


def _law_config(b: claims.Best) -> str:
    k, c = b.config["K"], b.config["rate per gradient"]
    return f"K = {k}, rate {c * k:g}"


def time_ranking(v: claims.Verdict) -> str:
    """Every contender from the first to reach the target to the last, each with its time (mean ± spread over
    the seeds), best K and rate; then how the first compares with each other one, seed by seed: ahead where the
    sign test over the seeds decides it (:attr:`~commlib.experiments.claims.Verdict.decided`) and the mean gap
    exceeds the evaluations' spacing, else level. No time is quoted finer than its spread or that spacing."""
    res = law_spacing(v)
    order = sorted(v.best, key=lambda name: v.best[name].mean)
    first = v.best[order[0]]
    text = _and([f"{name} after {_seconds(v.best[name].values, res)} ({_law_config(v.best[name])})"
                 for name in order])
    pairs = []
    for name in order[1:]:
        gaps = [b - a for a, b in zip(first.values, v.best[name].values)]
        wins = sum(g > 0 for g in gaps)
        seeds = f"on all {len(gaps)} seeds" if wins == len(gaps) else f"in {wins} of {len(gaps)} seeds"
        if not all(map(math.isfinite, gaps)):
            pairs.append(f"ahead of {name} {seeds}")
            continue
        mean, sd = grids.mean_sd(gaps)
        d = grids.decimals(max(sd, res))
        if not _apart(first, v.best[name], res):
            pairs.append(f"level with {name} (ahead {seeds}, by {mean:.{d}f} ± {sd:.{d}f} s)")
        else:
            pairs.append(f"ahead of {name} {seeds}, by {mean:.{d}f} ± {sd:.{d}f} s")
    return f"{text}; {order[0]} is " + ", and ".join(pairs)


def time_groups(v: claims.Verdict) -> list[list[str]]:
    """The contenders of a law race in groups, first to last: a new group starts where a contender is behind every
    member of the group before, by the sign test over the seeds and by more than the evaluations' spacing
    (:func:`_apart`); within a group no order is decided."""
    res = law_spacing(v)
    order = sorted(v.best, key=lambda name: v.best[name].mean)
    groups = [[order[0]]]
    for name in order[1:]:
        if all(_apart(v.best[m], v.best[name], res) for m in groups[-1]):
            groups.append([name])
        else:
            groups[-1].append(name)
    return groups


def time_headline(v: claims.Verdict) -> str:
    """The law race in a few words: which reach the target first, which next (:func:`time_groups`)."""
    words = []
    for i, group in enumerate(time_groups(v)):
        where = "first" if i == 0 else "then"
        level = " (level)" if len(group) > 1 else ""
        words.append(f"{_and(group)} {where}{level}" if i == 0 else f"{where} {_and(group)}{level}")
    return ", ".join(words)


def _law_claim(law: str, small: bool) -> claims.Claim:
    s = law_race_settings(law, small)
    name = LAW_NAMES[law]
    return claims.Claim(f"ch04.law_race_{law}", f"Under {name} compute times (n = 16), each protocol at its own "
                        "best K and rate on the same budget, which reaches a loss near the optimum first: K-sync, "
                        "K-batch-sync, K-async or K-batch-async?",
                        tuple(_law_contender(p, small, law) for p in LAW_RACE_PROTOCOLS),
                        metric="time to the target loss (s)", seeds=s["seeds"], scoring_seeds=s["scoring_seeds"],
                        shared=s, wording=time_ranking, chapter="04_sync_async_sgd", source="dutta2018slow",
                        headline=time_headline)


@claims.register("ch04.law_race_shifted_exponential")
def law_race_shifted_exponential(small: bool = False) -> claims.Claim:
    """The four K-protocols (n = 16), each at its own K and rate, under shifted exponential times (shift 1 s, rate 1/s)."""
    return _law_claim("shifted_exponential", small)


@claims.register("ch04.law_race_pareto")
def law_race_pareto(small: bool = False) -> claims.Claim:
    """The four K-protocols (n = 16), each at its own K and rate, under Pareto times (tail index 2.5, minimum 1 s)."""
    return _law_claim("pareto", small)


@claims.register("ch04.law_race_exponential")
def law_race_exponential(small: bool = False) -> claims.Claim:
    """The control of the law race: the four K-protocols (n = 16), each at its own K and rate, under memoryless
    exponential times (rate 1/s), where K-async keeps no work that K-sync repeats."""
    return _law_claim(LAW_CONTROL, small)


#: The protocol behind each contender's name in a law race.
_LAW_PROTOCOL = {PROTOCOL_LABELS[p]: p for p in LAW_RACE_PROTOCOLS}


def law_best_runs(v: claims.Verdict) -> dict:
    """The runs of a law race's verdict ``v``, each protocol at its best K and rate only, on the seeds that score
    it: ``{"K-sync (K = 12)": (runs on every scoring seed, rate per update)}``."""
    s = v.claim.shared
    out = {}
    for name, b in sorted(v.best.items(), key=lambda item: item[1].mean):
        k, c = b.config["K"], b.config["rate per gradient"]
        g = law_grid(_LAW_PROTOCOL[name], k, s, rates=(c,), seeds=v.claim.scored_seeds)
        out[protocol_label(_LAW_PROTOCOL[name], s["workers"], k)] = (tuple(g.run(c * k, seed) for seed in g.seeds),
                                                                     c * k)
    return out


def _behind(v: claims.Verdict, slow: str, fast: str) -> bool:
    """``slow`` reaches the target after ``fast`` on every seed, by more on average than the evaluations' spacing."""
    gaps = [b - a for a, b in zip(v.best[fast].values, v.best[slow].values)]
    return all(g > 0 for g in gaps) and _apart(v.best[fast], v.best[slow], law_spacing(v))


#: The protocols that cancel work at an update, and those that keep it.
CANCEL, KEEP = ("K-sync",), ("K-async", "K-batch-async")


def _within_spacing(verdicts: dict) -> str:
    """Where K-sync is behind a protocol that keeps its work on a seed by no more than the evaluations' spacing (a
    lead the metric cannot resolve, though the mean gap exceeds it), and out of how many seed-by-seed leads: e.g.
    " One of these 40 seed-by-seed leads, K-async's over K-sync on one seed under the Pareto law, is shorter than
    the evaluations' spacing."; empty where every lead exceeds it."""
    close, total = [], 0
    for law, v in verdicts.items():
        res = law_spacing(v)
        for slow in CANCEL:
            for fast in KEEP:
                pairs = list(zip(v.best[fast].values, v.best[slow].values))
                total += len(pairs)
                close += [(law, fast, slow) for a, b in pairs if 0 < b - a <= res]
    if not close:
        return ""
    if len(close) == 1:
        law, fast, slow = close[0]
        return (f" One of these {total} seed-by-seed leads, {fast}'s over {slow} on one seed under {law}, is shorter "
                f"than the evaluations' spacing.")
    by_law = {}
    for law, _, _ in close:
        by_law[law] = by_law.get(law, 0) + 1
    return (f" Of these {total} seed-by-seed leads, " + _and([f"{n} under {law}" for law, n in by_law.items()])
            + " are shorter than the evaluations' spacing.")


def law_race_short(verdicts: dict) -> str:
    """The law races in a few words, for a takeaway (``verdicts`` as for :func:`law_race_words`)."""
    seeds = next(iter(verdicts.values())).seeds
    if all(_behind(v, slow, fast) for v in verdicts.values() for slow in CANCEL for fast in KEEP):
        above = next(iter(verdicts.values())).claim.shared["target"] - optimum(False)["loss"]
        return (f"K-async and K-batch-async, each at its own best K and rate, reach a loss {above:.2f} nats above the "
                f"optimum before K-sync at its own best K and rate, on all {seeds} seeds")
    return "K-sync, at its own best K and rate, is not behind both K-async and K-batch-async on every seed"


def law_race_words(verdicts: dict) -> str:
    """``verdicts``: ``{law name: verdict of a law race}``. Whether K-sync, which cancels work, is behind both
    protocols that keep it, under every law, on every seed."""
    behind = {law: all(_behind(v, slow, fast) for slow in CANCEL for fast in KEEP) for law, v in verdicts.items()}
    laws = [law for law, b in behind.items() if b]
    seeds = next(iter(verdicts.values())).seeds
    if len(laws) == len(behind):
        where = "under both laws" if len(laws) == 2 else f"under each of {_and(laws)}"
        return (f"{where}, each protocol at its own best K and rate, K-sync reaches the target after K-async and "
                f"K-batch-async on every one of the {seeds} held-out seeds.{_within_spacing(verdicts)} Here the slow "
                "and stale gradients win the race")
    if laws:
        return (f"K-sync reaches the target after both protocols that keep their work on all {seeds} seeds under "
                f"{_and(laws)}, but not under {_and([law for law in behind if law not in laws])}")
    return "under neither law do both protocols that keep their work reach the target before K-sync on every seed"


def _order_words(v: claims.Verdict) -> str:
    """Where K-sync stands in the race ``v`` against the protocols that keep their work."""
    if all(_behind(v, slow, fast) for slow in CANCEL for fast in KEEP):
        return f"K-sync reaches the target after both K-async and K-batch-async on all {v.seeds} seeds"
    gaps = {fast: sum(b > a for a, b in zip(v.best[fast].values, v.best["K-sync"].values)) for fast in KEEP}
    apart = [fast for fast in KEEP if _apart(v.best[fast], v.best["K-sync"], law_spacing(v))]
    counts = _and([f"{fast} on {n} of {v.seeds}" for fast, n in gaps.items()])
    if not apart:
        return (f"K-sync is behind neither K-async nor K-batch-async by the sign test (it reaches the target after "
                f"{counts} held-out seeds)")
    return f"K-sync reaches the target after {counts} held-out seeds, behind {_and(apart)} by the sign test"


def _groups_words(v: claims.Verdict) -> str:
    """The order of a law race in words: "all four protocols are level in time to the target" where no order is decided,
    else :func:`time_headline`."""
    if len(time_groups(v)) == 1:
        n = len(v.best)
        return f"all {({2: 'two', 3: 'three', 4: 'four'}).get(n, n)} protocols are level in time to the target"
    return time_headline(v)


def law_control_words(control: claims.Verdict, verdicts: dict) -> str:
    """The control ``control`` (the ``ch04.law_race_exponential`` verdict) against the law races ``verdicts``
    (``{law name: verdict}``): where K-sync stands under memoryless times, and what that says of the minimum time."""
    behind = all(_behind(v, slow, fast) for v in verdicts.values() for slow in CANCEL for fast in KEEP)
    behind_control = all(_behind(control, slow, fast) for slow in CANCEL for fast in KEEP)
    text = (f"under memoryless (exponential) compute times, with K-sync and K-batch-sync tried down to $K = 1$, "
            f"{_groups_words(control)}: {_order_words(control)}")
    if behind and not behind_control:
        return text + (". Under both laws with a minimum time raced here it is behind both on every seed, so in these "
                       "races the memoryless law is what lets K-sync keep up")
    if behind and behind_control:
        return text + (". K-sync is behind without a minimum compute time too, so the minimum time does not alone "
                       "explain its place")
    return text + ". The laws with a minimum time do not put K-sync behind both on every seed either"


def keep_work_words(verdicts: dict, control: claims.Verdict, fixed: claims.Verdict | None = None) -> tuple[str, str]:
    """What keeping the running work does, in two short clauses chosen from the law races: one for the laws with a
    minimum compute time (``verdicts`` as for :func:`law_race_words`), one for the memoryless ``control``.

    Keeping pays only where K-sync, which cancels the running work, reaches the target after both K-async and
    K-batch-async on every seed under every law; where the control leaves all four protocols level
    (:func:`time_groups`) the race could not tell them apart, which is not a proof that they are equal. That is a
    difference in time to the target, each protocol at its own $K$: with ``fixed``, the final-loss race of K-sync
    against K-async at one $K$ under memoryless times, the clause adds what keeping the work costs there, staleness
    and nothing else (the mean final losses' gap, nats), where K-sync ends lower on enough seeds to call. That
    holds for memoryless times only (:func:`keep_faster_words` says what else it does under a law with a minimum)."""
    keeps = all(_behind(v, slow, fast) for v in verdicts.values() for slow in CANCEL for fast in KEEP)
    with_min = ("under both laws with a minimum compute time raced here, keeping the running work (K-async, "
                "K-batch-async) reaches the target "
                + ("before cancelling it (K-sync)" if keeps else "before cancelling it (K-sync) not under every law"))
    level = len(time_groups(control)) == 1
    memoryless = ("under memoryless times the race could not tell the protocols apart in time to the target" if level
                  else f"under memoryless times it does matter: {time_headline(control)}")
    if level and fixed is not None and fixed.decided and fixed.winner.startswith("K-sync"):
        cost = fixed.best[fixed.runner_up].mean - fixed.best[fixed.winner].mean
        memoryless += (f"; there, at a fixed $K$, keeping the work only adds staleness, a small "
                       f"cost ({cost:.4f} nats of final loss, {fixed.runner_up} against {fixed.winner})")
    return with_min, memoryless


def keep_faster_words(rows: Sequence, law: str = "the shifted exponential") -> str:
    """Whether keeping the running work also makes updates faster at the same $K$, from
    :class:`~commlib.experiments.sgd.sync_async.KeepRow` rows of K-async against K-sync under one law at several $K$.

    Only where every row's verdict is ``"pays"``; then how many times as often K-async updates at the smallest and
    the largest $K$ run, the factor for each $K$ and no further, for it changes with $K$. Otherwise ``""``: no
    speed-up is claimed."""
    rows = sorted(rows, key=lambda r: r.k)
    if not rows or not all(r.verdict == "pays" for r in rows):
        return ""
    gain = {r.k: statistics.fmean(r.cancel) / statistics.fmean(r.keep) for r in rows}
    ks = list(gain)
    at = f"{gain[ks[0]]:.1f} times as often as K-sync at $K = {ks[0]}$"
    if len(ks) > 1:
        at += f" and {gain[ks[-1]]:.1f} times at $K = {ks[-1]}$"
    return (f"Under {law}, at the same $K$, keeping the work also makes updates faster: K-async updates {at}")


def keeping_wins(verdicts: dict) -> bool:
    """Whether K-sync, which cancels the running work, reaches the target after both K-async and K-batch-async on
    every seed in every law race of ``verdicts`` (``{law: verdict}``)."""
    return all(_behind(v, slow, fast) for v in verdicts.values() for slow in CANCEL for fast in KEEP)


def never_idle(verdicts: dict) -> bool:
    """Whether, in every law race of ``verdicts`` (``{law: verdict}``), K-async's best K is 1 (asynchronous SGD) and
    K-batch-async's is n, the K at which no learner ever idles: there gradients arrive at :math:`n/\\mathbb{E}[X]`
    whatever the law, so the race's win is not keeping the work alone."""
    return all(v.best["K-async"].config["K"] == 1 and v.best["K-batch-async"].config["K"] == v.claim.shared["workers"]
               for v in verdicts.values())


def keep_work_lesson(verdicts: dict, control: claims.Verdict) -> str:
    """The law races' lesson in one sentence, chosen from the verdicts (``verdicts`` and ``control`` as for
    :func:`keep_work_words`).

    The lesson is that the protocols that keep unfinished work reached the target first under both laws with a
    minimum where K-sync, which cancels the running work, reaches the target after both K-async and K-batch-async on
    every seed under every law with a minimum, and the memoryless control leaves all four protocols level; where the
    winners ran at K = 1 and K = n (:func:`never_idle`) it says so, for there no learner idles. Other outcomes get a
    sentence that says what the races found instead (tests/sgd/test_headlines_sync_async.py turns the verdicts).
    Whether keeping the work makes updates faster at a fixed K is not for the races to say:
    :func:`commlib.experiments.sgd.sync_async.minimum_not_enough` reads it off the times per update."""
    keeps = all(_behind(v, slow, fast) for v in verdicts.values() for slow in CANCEL for fast in KEEP)
    level = len(time_groups(control)) == 1
    who = ("asynchronous SGD and K-batch-async at $K = n$, where no learner ever idles,"
           if never_idle(verdicts) else "K-async and K-batch-async, each at its own $K$,")
    won = (f"on this budget, under both laws with a minimum compute time raced here, {who} reached the target before "
           "K-sync at its best $K$")
    if keeps and level:
        return won + "; under memoryless times the race could not tell the protocols apart"
    if keeps:
        return won + f"; under memoryless times the protocols also differ: {time_headline(control)}"
    return ("on this budget, the protocols that keep unfinished work did not reach the target first under every law "
            "with a minimum compute time: K-sync is not behind both K-async and K-batch-async on every seed")


def law_control_short(control: claims.Verdict) -> str:
    """The control in a few words, for a takeaway."""
    if all(_behind(control, slow, fast) for slow in CANCEL for fast in KEEP):
        return "under memoryless compute times, the control, K-sync is behind them too"
    return f"under memoryless compute times, the control, {_groups_words(control)}"


# --------------------------------------------------------------------------- warm-up where the linear rule breaks


def warmup_loss(k: int, warm: bool, seed: int, small: bool = False, base_batch: int = 8, base_lr: float = 0.1,
                epochs: float = 4.0, warmup_steps: int = 3) -> float:
    """Final training loss (nats) of batch ``k * base_batch`` at the linear rate ``k * base_lr`` for ``epochs``,
    with a ``warmup_steps``-step warm-up or without (Goyal et al. 2017)."""
    problem = grids.problem(small)
    steps = max(1, int(epochs * problem.n_train / (base_batch * k)))
    r = training.train(problem, base_lr, base_batch * k, steps, seed=seed, base_batch_size=base_batch,
                       warmup_steps=min(warmup_steps, steps) if warm else 0, eval_every=steps)
    return math.inf if r.diverged else float(r.losses[-1])


#: The warm-up lengths (steps) the warm-up contender is tuned over; one step, the shortest there is, is its limit.
WARMUP_STEPS: tuple[int, ...] = (1, 2, 3, 5, 8)


def _warm_words(v: claims.Verdict) -> str:
    w, r = v.best[v.winner], v.best[v.runner_up]
    # the best length is picked on the seeds it is scored on, and another five seeds pick another: not named
    length = "the warm-up at the length that suits these seeds best"
    if not v.decided:
        return (f"{length}, and no warm-up end level ({v.winner} {level_text(w)} against {level_text(r)}; "
                f"{v.winner} lower in only {v.wins} of {v.seeds} seeds, by {_margin_text(v)} nats)")
    return (f"with {length}, {v.winner} ends lower {_seeds_text(v)} ({level_text(w)} against {level_text(r)}; "
            f"by {_margin_text(v)} nats)")


def _warm_headline(v: claims.Verdict) -> str:
    if not v.decided:
        return "warm-up and no warm-up end level"
    return f"{v.winner} ends lower {_seeds_text(v)}"


def _warmup_claim(k: int, small: bool) -> claims.Claim:
    s = {"k": k, "small": False}     # a few large steps: already small, and on fewer samples the rule means another k
    uses = f"batch {8 * k} at the linear rule's rate {0.1 * k:g}, 4 epochs"
    warm = claims.Contender("warm-up", lambda st, seed: warmup_loss(st["k"], True, seed, st["small"],
                                                                    warmup_steps=st["warmup_steps"]),
                            {"warmup_steps": WARMUP_STEPS}, uses=uses + ", its own warm-up length",
                            limits={"warmup_steps": WARMUP_STEPS[0]})
    none = claims.Contender("no warm-up", lambda st, seed: warmup_loss(st["k"], False, seed, st["small"]), uses=uses)
    return claims.Claim(f"ch04.warmup_batch{8 * k}", f"At ν = {k} (batch {8 * k:,}), where the linear scaling rule "
                        "breaks, does a warm-up, "
                        "its length tuned, end lower?", (warm, none), metric="final training loss (nats)",
                        seeds=grids.SEEDS, shared=s, wording=_warm_words, chapter="04_sync_async_sgd",
                        source="goyal2017accurate", headline=_warm_headline)


@claims.register("ch04.warmup_batch640")
def warmup_k80(small: bool = False) -> claims.Claim:
    """Warm-up against none at ν = 80 (batch 640, rate 8: below 2/λ_max at the optimum), seeds 0-4."""
    return _warmup_claim(80, small)


@claims.register("ch04.warmup_batch768")
def warmup_k96(small: bool = False) -> claims.Claim:
    """Warm-up against none at ν = 96 (batch 768, rate 9.6: above 2/λ_max at the optimum), seeds 0-4."""
    return _warmup_claim(96, small)


@claims.register("ch04.warmup_batch896")
def warmup_k112(small: bool = False) -> claims.Claim:
    """Warm-up against none at ν = 112 (batch 896, rate 11.2), seeds 0-4."""
    return _warmup_claim(112, small)


@claims.register("ch04.warmup_batch1024")
def warmup_k128(small: bool = False) -> claims.Claim:
    """Warm-up against none at ν = 128 (batch 1,024, rate 12.8), seeds 0-4."""
    return _warmup_claim(128, small)


@claims.register("ch04.warmup_batch2048")
def warmup_k256(small: bool = False) -> claims.Claim:
    """Warm-up against none at ν = 256 (batch 2,048, rate 25.6), seeds 0-4."""
    return _warmup_claim(256, small)


#: The ν of the warm-up claims: around where the linear rate 0.1 ν crosses 2/λ_max at the optimum (ν ≈ 91), and beyond.
WARMUP_KS: tuple[int, ...] = (80, 96, 112, 128, 256)


# --------------------------------------------------------------------------- the control: the rate capped below 2/λ_max

#: The capped rate as a fraction of 2/λ_max at the optimum: a quarter below the largest stable rate, so that a step
#: settles there with room to spare, and still close enough to it that few steps suffice.
RATE_CAP_FRACTION = 0.75


def rate_cap(small: bool = False) -> float:
    """The capped rate: :data:`RATE_CAP_FRACTION` of 2/λ_max at the problem's optimum."""
    problem = grids.problem(small)
    return RATE_CAP_FRACTION * 2 / problem.sharpness(problem.optimum)


def capped_loss(k: int, seed: int, small: bool = False, base_batch: int = 8, base_lr: float = 0.1,
                epochs: float = 4.0) -> float:
    """Final training loss (nats) of batch ``k * base_batch`` for ``epochs``, the same batch and steps as
    :func:`warmup_loss`, at the linear rate ``k * base_lr`` capped at :func:`rate_cap`, without warm-up: the control
    that tells the rate's part in the rule's failure from the shrinking number of steps'."""
    problem = grids.problem(small)
    steps = max(1, int(epochs * problem.n_train / (base_batch * k)))
    rate = min(k * base_lr, rate_cap(small))
    r = training.train(problem, rate / k, base_batch * k, steps, seed=seed, base_batch_size=base_batch,
                       eval_every=steps)
    return math.inf if r.diverged else float(r.losses[-1])


def _cap_words(v: claims.Verdict) -> str:
    w, r = v.best[v.winner], v.best[v.runner_up]
    if not v.decided:
        return (f"the capped rate and the linear rule end level ({v.winner} {level_text(w)} against {level_text(r)}; "
                f"{v.winner} lower in only {v.wins} of {v.seeds} seeds)")
    return f"{v.winner} ends lower {_seeds_text(v)} ({level_text(w)} against {level_text(r)}; by {_margin_text(v)} nats)"


def _cap_headline(v: claims.Verdict) -> str:
    return f"{v.winner} ends lower {_seeds_text(v)}" if v.decided else "the capped rate and the linear rule end level"


CAP_NAME, LINEAR_NAME = "the capped rate", "the linear rule"


def _cap_claim(k: int, small: bool) -> claims.Claim:
    s = {"k": k, "small": False}     # a few large steps: already small, and on fewer samples the rule means another k
    uses = f"batch {8 * k}, 4 epochs, no warm-up"
    cap = claims.Contender(CAP_NAME, lambda st, seed: capped_loss(st["k"], seed, st["small"]),
                           uses=uses + f", rate min({0.1 * k:g}, {RATE_CAP_FRACTION:g} × 2/λmax at the optimum)")
    linear = claims.Contender(LINEAR_NAME, lambda st, seed: warmup_loss(st["k"], False, seed, st["small"]),
                              uses=uses + f", the linear rule's rate {0.1 * k:g}")
    return claims.Claim(f"ch04.rate_cap_batch{8 * k}", f"At ν = {k} (batch {8 * k:,}), the same batch and steps: does "
                        f"the rate capped at {RATE_CAP_FRACTION:g} × 2/λmax at the optimum end lower than the linear "
                        "rule's rate (the control for the 2/λmax explanation)?", (cap, linear),
                        metric="final training loss (nats)", seeds=grids.SEEDS, shared=s, wording=_cap_words,
                        chapter="04_sync_async_sgd", source="goyal2017accurate", headline=_cap_headline)


@claims.register("ch04.rate_cap_batch640")
def rate_cap_k80(small: bool = False) -> claims.Claim:
    """The rate capped against the linear rule at ν = 80 (batch 640), seeds 0-4."""
    return _cap_claim(80, small)


@claims.register("ch04.rate_cap_batch768")
def rate_cap_k96(small: bool = False) -> claims.Claim:
    """The rate capped against the linear rule at ν = 96 (batch 768), seeds 0-4."""
    return _cap_claim(96, small)


@claims.register("ch04.rate_cap_batch896")
def rate_cap_k112(small: bool = False) -> claims.Claim:
    """The rate capped against the linear rule at ν = 112 (batch 896), seeds 0-4."""
    return _cap_claim(112, small)


@claims.register("ch04.rate_cap_batch1024")
def rate_cap_k128(small: bool = False) -> claims.Claim:
    """The rate capped against the linear rule at ν = 128 (batch 1,024), seeds 0-4."""
    return _cap_claim(128, small)


@claims.register("ch04.rate_cap_batch2048")
def rate_cap_k256(small: bool = False) -> claims.Claim:
    """The rate capped against the linear rule at ν = 256 (batch 2,048), seeds 0-4."""
    return _cap_claim(256, small)


def small_batch_losses(small: bool = False, seeds: tuple[int, ...] = grids.SEEDS) -> tuple[float, ...]:
    """The small batch's final training loss (nats) on every seed: batch 8 at rate 0.1 for the warm-up claims' 4 epochs.
    Trained once per version of the code and cached on disk beside the claims' verdicts (:func:`claims.cached`)."""
    name = f"ch04.small_batch_losses{'_small' if small else ''}_{'-'.join(map(str, seeds))}"
    return claims.cached(name, lambda: [warmup_loss(1, False, seed, small) for seed in seeds])


def _excess(values, small: tuple[float, ...]) -> list[float]:
    """How far above the small batch each seed's final loss ends (%), seed by seed."""
    return [100 * (x / y - 1) for x, y in zip(values, small)]


def _percent_text(values: list[float]) -> str:
    """Mean ± sd (%) no finer than the spread; how many seeds diverged where any did."""
    bad = sum(not math.isfinite(x) for x in values)
    if bad:
        return f"diverges on {bad} of {len(values)} seeds"
    m, sd = grids.mean_sd(values)
    d = grids.decimals(sd)
    return f"{m:.{d}f} ± {sd:.{d}f} %"


def _ks(xs: list[int], every: list[int]) -> str:
    """``ν = 96 and 112``; ``every ν from 96 on`` where ``xs`` is all of ``every``; ``3 of the 4`` otherwise."""
    if xs == every and len(xs) > 2:
        return f"every $\\nu$ from {xs[0]} on"
    if len(xs) <= 2:
        return _and([f"$\\nu = {k}$" if i == 0 else str(k) for i, k in enumerate(xs)])
    return f"{len(xs)} of the {len(every)} $\\nu$ from {every[0]} on"


def warmup_range_words(verdicts: dict, small: tuple[float, ...], stable_rate: float, base_lr: float = 0.1,
                       tol: float = 0.02, caps: dict | None = None) -> dict[str, str]:
    """``verdicts``: ``{ν: verdict of a warm-up claim}``; ``small``: the small batch's loss on the same seeds;
    ``stable_rate``: 2/λ_max at the optimum. Phrases from the runs, each with a few numbers (the numbers of every ν
    are :func:`warmup_range_rows`' table): ``"head"``, up to which ν the rule without warm-up ends within ``tol`` of
    the small batch (its mean over the seeds of the excess seed by seed) and from which it ends above;
    ``"cross"``, the ν where ``base_lr`` ν crosses ``stable_rate``, and whether it lies between the two or, with
    ``caps``, that the rule starts costing below it (the largest ν under the crossing where the capped rate already
    ends lower on enough seeds to call: the cost grows as the rate nears the limit, it does not switch on there);
    ``"warm"``, what a tuned warm-up does where the rule breaks; ``"short"``, for a takeaway; ``"early"``, where
    there is one, that largest ν itself (an int), with ``"early_step"`` and ``"small_step"``, the step
    ζ = ηλ_max at the optimum at that ν and at ν = 1 (floats). With ``caps``
    (``{ν: verdict of a rate-cap claim}``, the control: the same batch and steps at the rate capped below 2/λ_max),
    also ``"cap"``, where the capped rate ends within ``tol`` of the small batch, ``"cause"``, what that says of the
    rule's failure, and ``"short"`` says so."""
    holds, breaks = [], []
    for k, v in sorted(verdicts.items()):
        mean = statistics.fmean(_excess(v.best["no warm-up"].values, small))
        (holds if mean <= 100 * tol else breaks).append(k)
    pct = f"about {100 * tol:.0f} %"      # the excess at the last ν that holds is about its own spread from it
    if holds and breaks and max(holds) < min(breaks):
        m, sd = grids.mean_sd(_excess(verdicts[max(holds)].best["no warm-up"].values, small))
        d = grids.decimals(sd)
        head = (f"without warm-up the rule ends {m:.{d}f} ± {sd:.{d}f} % above the small batch at $\\nu = {max(holds)}$"
                + (f" (within {pct} from $\\nu = {min(holds)}$)" if len(holds) > 1 else "")
                + f" and further above from $\\nu = {min(breaks)}$")
    elif not breaks:
        head = f"without warm-up the rule ends within {pct} of the small batch at every $\\nu$ tried"
    elif not holds:
        head = f"without warm-up the rule ends more than {pct} above the small batch at every $\\nu$ tried"
    else:
        head = (f"without warm-up the rule ends within {pct} of the small batch at {_ks(holds, holds)} and above it "
                f"at {_ks(breaks, breaks)}")
    cross = stable_rate / base_lr
    cross_text = f"$\\nu \\approx {cross:.0f}$"
    # the rule starts costing before the crossing: the capped rate already beats it below the limit
    early = [k for k in sorted(caps or {}) if k < cross and caps[k].decided and caps[k].winner == CAP_NAME]
    if early:
        k = max(early)
        m, sd = grids.mean_sd(_excess(verdicts[k].best["no warm-up"].values, small)) if k in verdicts else (None, None)
        d = grids.decimals(sd) if sd is not None else 0
        cross_text += (f". The rule does not switch off there; it starts costing before: at $\\nu = {k}$, a rate "
                       f"{base_lr * k / stable_rate:.2f} of the limit, it "
                       + (f"ends {m:.{d}f} ± {sd:.{d}f} % above the small batch and " if m is not None else "")
                       + "the capped rate already ends lower than it on enough seeds to call")
    elif holds and breaks and max(holds) < cross < min(breaks):
        cross_text += ", between the last $\\nu$ that held and the first that broke"
    warm_ok = [k for k in breaks if verdicts[k].best["warm-up"].mean <= statistics.fmean(small) * (1 + tol)]
    lower = [k for k in breaks if verdicts[k].best["warm-up"].mean < verdicts[k].best["no warm-up"].mean]
    called = [k for k in lower if verdicts[k].decided and verdicts[k].winner == "warm-up"]
    if warm_ok:
        warm = f"a warm-up, its length tuned, brings {_ks(warm_ok, breaks)} within {pct} of the small batch"
    else:
        warm = (f"a warm-up, its length tuned, brings no $\\nu$ from {min(breaks)} on within {pct} of the "
                f"small batch" if breaks else "no $\\nu$ tried needs a warm-up")
    if lower:
        warm += (f"; it lowers the mean final loss at {_ks(lower, breaks)}, "
                 + ("but on too few seeds to call (the table)" if not called else
                    f"and on enough seeds to call at {_ks(called, breaks)}"))
    short = "see the runs"
    if holds and not warm_ok:
        m, sd = grids.mean_sd(_excess(verdicts[max(holds)].best["no warm-up"].values, small))
        d = grids.decimals(sd)
        short = (f"the rule held within {pct} of the small batch up to $\\nu = {max(holds)}$ ({m:.{d}f} ± {sd:.{d}f} % "
                 "above it there, the edge) and a warm-up did not carry it further")
    out = {"head": head, "cross": cross_text, "warm": warm, "short": short}
    if early:
        out["early"] = max(early)       # the ν where the rule starts costing below the limit (an int, not words)
        # the step ζ = ηλ_max the sharpest direction at the optimum sees there, and at ν = 1 (the small batch)
        out["early_step"] = 2 * base_lr * max(early) / stable_rate
        out["small_step"] = 2 * base_lr / stable_rate
    if caps:
        # only one cap was run, RATE_CAP_FRACTION of the limit: the words name it (a cap nearer the limit ends higher)
        capped = f"capped at {RATE_CAP_FRACTION:g} of $2/\\lambda_{{\\max}}$ (the one cap run)"
        capping = f"capping the rate at {RATE_CAP_FRACTION:g} of $2/\\lambda_{{\\max}}$ (the one cap run)"
        beyond = [k for k in sorted(caps) if k > cross]
        ok = [k for k in beyond if statistics.fmean(_excess(caps[k].best[CAP_NAME].values, small)) <= 100 * tol]
        called = [k for k in beyond if caps[k].decided and caps[k].winner == CAP_NAME]
        every = sorted(caps)
        ok_all = [k for k in every if statistics.fmean(_excess(caps[k].best[CAP_NAME].values, small)) <= 100 * tol]
        # the largest mean excess of the capped rate over the ν a sentence names: how close "close" is
        def worst_of(ks):
            return max([statistics.fmean(_excess(caps[k].best[CAP_NAME].values, small)) for k in ks] or [0.0])

        if beyond and ok == beyond:
            cap = (f"{capped}, the same batch and steps end within {pct} of the small batch "
                   f"at every $\\nu$ beyond {cross:.0f}")
            first = every[0]
            worst = worst_of(every if early and ok_all == every else ok)
            short_cap = ((f"from $\\nu = {first}$ on (a rate {base_lr * first / stable_rate:.2f} of the limit and more) "
                          if early and ok_all == every else f"beyond $\\nu \\approx {cross:.0f}$ ")
                         + f"{capping} ends at most {worst:.1f} % above the small "
                         "batch's loss (the mean over the seeds) where warm-up does not")
        elif ok:
            cap = (f"{capped}, the same batch and steps end within {pct} of the small batch "
                   f"at {_ks(ok, beyond)} of those beyond {cross:.0f}")
            short_cap = (f"beyond $\\nu \\approx {cross:.0f}$ {capping} ends at "
                         f"most {worst_of(ok):.1f} % above the small batch's loss at {_ks(ok, beyond)}")
        else:
            cap = (f"{capped}, the same batch and steps still end more than {pct} above "
                   "the small batch: fewer steps as $\\nu$ grows is not ruled out here")
            short_cap = "fewer steps as $\\nu$ grows is not ruled out here"
        if beyond:
            called_all = [k for k in every if caps[k].decided and caps[k].winner == CAP_NAME]
            cap += ("; the capped rate ends lower than the linear rule on enough seeds to call at "
                    f"{_ks(called_all, every)}" if called_all else "; on too few seeds to call against the linear rule")
        out["cap"] = cap
        out["cause"] = ("it is the rate, not the batch or the number of steps, that breaks the rule here, and capping "
                        "the rate is the remedy that works on this problem" if beyond and ok == beyond else
                        "the rate is not shown to be the whole cause here: fewer steps as $\\nu$ grows is not ruled out")
        if holds and not warm_ok:
            out["short"] = short + "; " + short_cap
        else:
            out["short"] = short_cap
    return out


def warmup_range_rows(verdicts: dict, small: tuple[float, ...], stable_rate: float,
                      base_lr: float = 0.1, caps: dict | None = None) -> list[list[str]]:
    """One row per ν of ``verdicts`` (``{ν: verdict of a warm-up claim}``): ν and its batch, the linear rule's rate,
    that rate as a multiple of ``stable_rate`` (2/λ_max at the optimum), how far above the small batch (``small``, its
    loss on the same seeds) each contender ends (%, mean ± sd of the excess seed by seed), and the claim's headline.
    With ``caps`` (``{ν: verdict of a rate-cap claim}``), two more columns: how far above the small batch the same
    batch and steps end at the capped rate, and that claim's headline against the linear rule."""
    rows = []
    for k, v in sorted(verdicts.items()):
        row = [f"{k} (batch {8 * k:,})", f"{base_lr * k:g}", f"{base_lr * k / stable_rate:.2f}",
               _percent_text(_excess(v.best["no warm-up"].values, small)),
               _percent_text(_excess(v.best["warm-up"].values, small)), v.headline]
        if caps:
            row += [_percent_text(_excess(caps[k].best[CAP_NAME].values, small)), caps[k].headline]
        rows.append(row)
    return rows


def sharpness_along(k: int = 128, seed: int = 0, warm: bool = True, base_batch: int = 8, base_lr: float = 0.1,
                    epochs: float = 4.0, warmup_steps: int = 3, small: bool = False) -> dict:
    """The largest Hessian eigenvalue at every step of a large-batch run, beside the rate it took there.

    Returns ``{"steps", "rates", "sharpness", "stable"}``: the rate of each step, :math:`\\lambda_{\\max}`
    of the full-batch Hessian at the parameters it started from, and :math:`2/\\lambda_{\\max}`, the
    largest rate a quadratic with that curvature tolerates. Computed once per version of the code and kept on disk
    (:func:`~commlib.experiments.claims.cached`).
    """
    args = (k, seed, warm, base_batch, base_lr, epochs, warmup_steps, small)
    flat = claims.cached("sharpness-" + "-".join(map(str, args)),
                         lambda: _sharpness_flat(k, seed, warm, base_batch, base_lr, epochs, warmup_steps, small))
    n = len(flat) // 2
    rates, sharp = list(flat[:n]), list(flat[n:])
    return {"steps": list(range(n)), "rates": rates, "sharpness": sharp, "stable": [2.0 / s for s in sharp]}


def _sharpness_flat(k, seed, warm, base_batch, base_lr, epochs, warmup_steps, small) -> list[float]:
    """:func:`sharpness_along`'s run: the rate of every step, then the sharpness at every step."""
    problem = grids.problem(small)
    big = base_batch * k
    steps = max(1, int(epochs * problem.n_train / big))
    target = base_lr * k
    w = problem.init()
    rng = training.np_rng(seed)
    rates, sharp = [], []
    for t in range(steps):
        rate = target if not warm else base_lr + (target - base_lr) * min(1.0, t / min(warmup_steps, steps))
        sharp.append(problem.sharpness(w))
        rates.append(rate)
        w = w - rate * problem.stochastic_gradient(w, rng, big)
        if not all(map(math.isfinite, w)):
            break
    return [float(r) for r in rates] + [float(x) for x in sharp]


# --------------------------------------------------------------------------- what the race figure and the prose show


@dataclass(frozen=True)
class Race:
    """The race of chapter 4: each protocol at the shared rate and at its own best rate on the coarse grid (runs of
    seed ``seed``), how each run at the shared rate ends on every seed, and the test error at the best rates.

    ``errors[label]`` is the mean and spread over the held-out seeds (:data:`TWO_WAY_SCORING_SEEDS`) of the test
    error (share) over the last quarter of the budget, each protocol at its best rate on its finer grid
    (:data:`FINE_RATES`, ``error_rates[label]``, picked by training loss on :data:`TWO_WAY_SEEDS`: the runs of the
    two-way races), ``error_values[label]`` that error on every held-out seed; ``se`` the binomial standard error of one
    test error measured on the ``n_test`` test samples at the optimum's error rate, :math:`\\sqrt{e(1-e)/n}`:
    the uncertainty of one model's error rate, not the yardstick for two models scored on the same test set
    (for those, :func:`error_gap`: the paired difference, seed by seed). ``tuned_falling[label]``: on how many
    seeds the run at the best rate is still falling at the end of the budget.
    """

    budget: float
    shared_rate: float
    seed: int
    equal: dict
    tuned: dict
    rates: dict
    levelled: dict       #: label -> seeds (of 5) on which the run at the shared rate has stopped falling
    equal_levels: dict   #: label -> (mean, sd) over the seeds of the level at the shared rate (nats)
    errors: dict
    se: float
    optimum: dict
    error_values: dict = None
    tuned_falling: dict = None
    error_rates: dict = None   #: label -> the rate the test errors are at: its best on the finer grid
    fine_runs: dict = None     #: label -> its run at ``error_rates[label]`` on the first held-out seed


def race_runs(small: bool = False, protocols=RACE_PROTOCOLS, shared_rate: float = SHARED_RATE,
              seed: int = 0) -> Race:
    """The runs of :func:`~commlib.experiments.sgd.grids.grid_runs` behind the race: nothing new is trained."""
    s = race_settings(small)
    opt = optimum(small)
    equal, tuned, rates, levelled, equal_levels, errors, values, falling = {}, {}, {}, {}, {}, {}, {}, {}
    error_rates, fine_runs = {}, {}
    for protocol, k in protocols:
        g = _grid(protocol, k, s)
        label = protocol_label(protocol, s["workers"], k)
        best = g.best_rate
        rates[label] = best
        equal[label] = g.run(shared_rate, seed)
        tuned[label] = g.run(best, seed)
        ends = [run_ends({label: g.run(shared_rate, sd)}, s["budget"])[0] for sd in g.seeds]
        levelled[label] = sum(not e.descending for e in ends)
        equal_levels[label] = grids.mean_sd(g.levels(shared_rate))
        # test errors: each at its best rate on its finer grid (by training loss, on the tuning seeds), scored on
        # the held-out seeds, the runs of the two-way races
        fine = _tuned_rate(protocol, k, FINE_RATES[protocol], small)
        held = _grid(protocol, k, {**s, "seeds": TWO_WAY_SCORING_SEEDS}, rates=(fine,))
        errs = [tail_error(held.run(fine, sd), s["budget"]) / 100 for sd in held.seeds]
        error_rates[label] = fine
        fine_runs[label] = held.run(fine, held.seeds[0])
        errors[label] = grids.mean_sd(errs)
        values[label] = tuple(errs)
        falling[label] = sum(run_ends({label: g.run(best, sd)}, s["budget"])[0].descending for sd in g.seeds)
    se = math.sqrt(opt["error"] * (1 - opt["error"]) / opt["n_test"])
    return Race(s["budget"], shared_rate, seed, equal, tuned, rates, levelled, equal_levels, errors, se, opt,
                values, falling, error_rates, fine_runs)


def error_gap(race: Race, a: str, b: str | None = None) -> tuple[float, float]:
    """The test error of ``a`` minus that of ``b`` (or of the optimum, when ``b`` is None), in percentage points,
    seed by seed on the same test set: the mean and the spread over the seeds of those paired differences."""
    other = race.error_values[b] if b is not None else [race.optimum["error"]] * len(race.error_values[a])
    return grids.mean_sd([100 * (x - y) for x, y in zip(race.error_values[a], other)])


def _short_name(label: str) -> str:
    """A protocol's label without its K, for a sentence: "asynchronous SGD", "K-sync"."""
    name = label.split(" (K =")[0]
    return name if name.startswith("K-") else f"{name} SGD"


def error_words(race: Race) -> str:
    """What the test errors at the best rates show, from the paired differences over the held-out seeds: how far
    above the optimum's each lies, and which pairs of protocols the sign test over the seeds tells apart (the rule
    of every verdict of the chapter, :func:`~commlib.experiments.claims.sign_test`); the numbers are the figure's."""
    labels = list(race.error_values)
    below: dict[str, list[str]] = {}
    pairs = 0
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            pairs += 1
            gaps = [y - x for x, y in zip(race.error_values[a], race.error_values[b])]
            wins, losses = sum(g > 0 for g in gaps), sum(g < 0 for g in gaps)
            if claims.sign_test(wins, len(gaps), losses):
                low, high = (a, b) if wins > losses else (b, a)
                below.setdefault(high, []).append(low)
    gaps = [error_gap(race, a) for a in labels]
    lo, hi = min(m for m, _ in gaps), max(m for m, _ in gaps)
    d = grids.decimals(max(sd for _, sd in gaps))
    span = f"at most {hi:.{d}f}" if round(lo, d) <= 0 < round(hi, d) else f"{lo:.{d}f} to {hi:.{d}f}"
    n = len(next(iter(race.error_values.values())))
    text = f"each lies {span} percentage points above the optimum's on the same test samples"
    if not below:
        return text + f"; by the sign test over the {n} seeds no two protocols differ"
    parts = []
    for high, lows in sorted(below.items(), key=lambda kv: -len(kv[1])):
        names = [_short_name(x) for x in sorted(lows, key=labels.index)]
        parts.append(f"{_and(names)} {'each end' if len(names) > 1 else 'ends'} below {_short_name(high)}")
    rest = "; the other pairs are level" if sum(map(len, below.values())) < pairs else ""
    return text + f"; by the sign test over the {n} seeds, " + ", and ".join(parts) + rest


def sync_falling_words(falling: int, seeds: int, seed: int, end, held: tuple[int, int] | None = None) -> str:
    """Whether fully synchronous SGD at its best rate is still falling at the end of the budget: on ``falling`` of
    ``seeds`` seeds, and on ``seed`` (the figure's run) by ``end``'s fall (a :class:`RunEnd`); ``held``, where given,
    ``(falling, seeds)`` on the held-out seeds that score the race (:func:`held_out_falling`), which then replaces
    the figure's run in the sentence. Says no more than that: how a longer budget would end was not run."""
    on_held = f", and on {held[0]} of the {held[1]} held-out seeds that score the race" if held else ""
    longer = ", so a longer budget could narrow its gap to the others; longer budgets were not run here"
    if not falling:
        text = (f"At its best rate fully synchronous SGD has stopped falling at the end of the budget on all "
                f"{seeds} seeds that pick the rates")
        if held and held[0]:
            return text + f", but is still falling on {held[0]} of the {held[1]} held-out seeds that score the race" + longer
        return text + (f", and on all {held[1]} held-out seeds that score the race" if held else "")
    text = (f"At its best rate fully synchronous SGD is still falling at the end of the budget on {falling} of the "
            f"{seeds} seeds that pick the rates{on_held}")
    if end.descending and not held:
        text += (f" (seed {seed}, the figure's run, among them: its fitted loss falls by {100 * end.fall:.1f} % across "
                 f"the last quarter)")
    return text + longer


def k_tuned_runs(small: bool = False, ks=(1, 2, 4, 8, 16), seed: int = 0) -> dict:
    """For each K of the trade-off, the run of ``seed`` at that K's best rate on its finer grid
    (:data:`K_TRADEOFF_RATES`, the runs that pick the rates of ``ch04.k_tradeoff``): ``{label: (run, rate)}``.

    ``seed`` is a tuning seed (:data:`TWO_WAY_SEEDS`) or one of the held-out seeds that score the claim
    (:data:`TWO_WAY_SCORING_SEEDS`): then the run is the claim's own held-out run at the best rate. Raises
    ValueError naming ``seed`` when it is neither."""
    s = {**race_settings(small), "seeds": TWO_WAY_SEEDS}
    if seed not in TWO_WAY_SEEDS and seed not in TWO_WAY_SCORING_SEEDS:
        raise ValueError(f"seed must be a tuning or a scoring seed of ch04.k_tradeoff, got {seed!r}")
    out = {}
    for K in ks:
        protocol, k = _k_protocol(K, s["workers"])
        g = _grid(protocol, k, s, rates=K_TRADEOFF_RATES[K])
        rate = g.best_rate
        if seed not in TWO_WAY_SEEDS:
            g = _grid(protocol, k, {**s, "seeds": TWO_WAY_SCORING_SEEDS}, rates=(rate,))
        out[protocol_label(protocol, s["workers"], k)] = (g.run(rate, seed), rate)
    return out


def k_sweep_tuned(small: bool = False, ks=(1, 2, 4, 8, 16), seed: int = 0) -> KSweep:
    """The K trade-off's runs as a sweep over K: each K at its own best rate, on the same wall-clock budget
    (:func:`k_tuned_runs`, nothing new trained, ``seed`` as there): its staleness and its training loss against
    time."""
    s = race_settings(small)
    points = []
    for (run, rate), K in zip(k_tuned_runs(small, ks, seed).values(), ks):
        protocol = "async" if K == 1 else ("sync" if K == s["workers"] else "k_async")
        points.append(KSweepPoint(K, protocol, run, run, rate))
    return KSweep("k_async", s["workers"], tuple(points), s["budget"])


def sweep_levels(sweep: KSweep) -> dict[int, float]:
    """Each K's level in ``sweep`` (:func:`commlib.experiments.sgd.grids.level`: mean training loss over the last
    quarter of the budget, nats), the number the K trade-off's table averages over seeds."""
    return {p.k: grids.level(p.trained, sweep.budget) for p in sweep.points}


# --------------------------------------------------------------------------- short phrases chosen from the verdicts


def shared_rate_order(small: bool = False) -> dict:
    """Both at the same rate, for every rate of the grid: on how many seeds asynchronous SGD ends above fully
    synchronous SGD (levels over the last quarter of the budget; the runs of the tuned claims, nothing new)."""
    s = race_settings(small)
    a, b = _grid("async", None, s), _grid("sync", None, s)
    return {rate: sum(x > y for x, y in zip(a.levels(rate), b.levels(rate))) for rate in a.rates}


def shared_rate_words(order: dict, seeds: int) -> str:
    """``order`` from :func:`shared_rate_order`: at which shared rates asynchronous SGD ends above fully
    synchronous SGD on every seed, at which below, and at which the seeds split."""
    above = [f"{r:g}" for r, n in order.items() if n == seeds]
    below = [f"{r:g}" for r, n in order.items() if n == 0]
    split = [f"{r:g}" for r, n in order.items() if 0 < n < seeds]
    parts = []
    if above:
        parts.append(f"above it on all {seeds} seeds at {'rate' if len(above) == 1 else 'rates'} {_and(above)}")
    if below:
        parts.append(f"below it on all {seeds} seeds at {'rate' if len(below) == 1 else 'rates'} {_and(below)}")
    if split:
        parts.append(f"the seeds split at {_and(split)}")
    if not parts:
        return ""
    return "asynchronous SGD ends " + ", and ".join(parts).replace(" it ", " fully synchronous SGD ", 1)



def shared_rate_short(order: dict, seeds: int) -> str:
    """``order`` from :func:`shared_rate_order` in a few words: where the order turns, if it turns once."""
    rates = sorted(order)
    below = [r for r in rates if order[r] == 0]
    above = [r for r in rates if order[r] == seeds]
    if below and above and len(below) + len(above) == len(rates) and max(below) < min(above):
        return (f"asynchronous SGD ends below fully synchronous SGD on every seed at rates up to {max(below):g} "
                f"and above it from {min(above):g}")
    if below and above and len(below) + len(above) == len(rates) and max(above) < min(below):
        return (f"asynchronous SGD ends above fully synchronous SGD on every seed at rates up to {max(above):g} "
                f"and below it from {min(below):g}")
    return "which of the two ends lower depends on the shared rate"


def shared_panel_words(order: dict, rate: float, seeds: int) -> str:
    """``order`` from :func:`shared_rate_order`, in a few words for the figure's shared-rate panel at ``rate``: whether
    asynchronous SGD loses or wins there against fully synchronous SGD, and on how many of ``seeds`` seeds.

    >>> shared_panel_words({0.1: 0, 0.5: 5}, 0.5, 5)
    'asynchronous SGD loses: it ends above fully synchronous SGD on all 5 seeds'
    >>> shared_panel_words({0.1: 0, 0.5: 3}, 0.5, 5)
    'neither protocol wins on every seed: asynchronous SGD ends above fully synchronous SGD on 3 of 5 seeds'
    """
    if rate not in order:
        raise ValueError(f"rate must be one of the grid's {sorted(order)}, got {rate!r}")
    above = order[rate]
    if above == seeds:
        return f"asynchronous SGD loses: it ends above fully synchronous SGD on all {seeds} seeds"
    if above == 0:
        return f"asynchronous SGD wins: it ends below fully synchronous SGD on all {seeds} seeds"
    return (f"neither protocol wins on every seed: asynchronous SGD ends above fully synchronous SGD on {above} of "
            f"{seeds} seeds")


def race_finding_words(race: claims.Verdict, stale: claims.Verdict, grad_ratio: float, order: dict, seeds: int,
                       small_share: float = 10.0, shared: bool = True) -> str:
    """The race of asynchronous against fully synchronous SGD in one short paragraph, no number but the seeds and
    ``grad_ratio`` (gradients asynchronous SGD applies in the budget over fully synchronous SGD's): who ends lower at
    the tuned rates (``race``, the ``ch04.async_vs_sync`` verdict), whether staleness (``stale``, the
    ``ch04.staleness_cost`` verdict) is a small part of that, and, with ``shared``, whether at one shared rate
    (``order``, from :func:`shared_rate_order` over ``seeds`` seeds) the order turns with the rate (without it, that
    is left to :func:`shared_rate_plain`)."""
    a = "asynchronous (K = 1)"
    if race.decided and race.winner == a:
        held = "every held-out seed" if race.unanimous else f"{race.wins} of {race.seeds} held-out seeds"
        text = (f"Each at its own tuned rate, asynchronous SGD ends lower than fully synchronous SGD on {held}, "
                f"because in the same time it applies {grad_ratio:.1f} times as many gradients: the factor "
                "$\\mathcal{H}_n$ of the theorem's remark.")
        share = staleness_share(stale, race)
        if stale.decided and stale.winner != a and share is not None and share[0] < small_share:
            text += " Staleness is a small part of that lead."
        elif not stale.decided:
            text += " Staleness costs no more than the spread between seeds."
    else:
        text = f"Each at its own tuned rate, {race.headline}."
    turns = shared_rate_short(order, seeds) != "which of the two ends lower depends on the shared rate"
    if shared and turns:
        text += (" At one shared rate per update the order follows the rate, not the protocol, so protocols are "
                 "compared here each at its own tuned rate.")
    return text

def shared_rate_plain(order: dict, rate: float, seeds: int) -> str:
    """The shared-rate lesson in one plain sentence, from ``order`` (:func:`shared_rate_order` over ``seeds`` seeds):
    where the order of asynchronous and fully synchronous SGD turns with the rate, whichever protocol the rate suits
    wins; ``rate`` is the shared rate of the figure's left panel.

    >>> shared_rate_plain({0.1: 0, 0.5: 5}, 0.5, 5)[:60]
    'Give both protocols the same rate and whichever that rate su'
    >>> "says more about the rate" in shared_rate_plain({0.1: 2, 0.5: 5}, 0.5, 5)
    False
    """
    short = shared_rate_short(order, seeds)
    if short == "which of the two ends lower depends on the shared rate":
        return (f"At one shared rate per update {short} (the left panel is at {rate:g}); the rest of this section "
                "gives each protocol its own tuned rate.")
    return (f"Give both protocols the same rate and whichever that rate suits wins: {short} (the left panel is at "
            f"{rate:g}), so the ranking then says more about the rate than about the protocol.")


def shared_rate_rows(order: dict, seeds: int) -> list[list[str]]:
    """``order`` from :func:`shared_rate_order` as table rows: each outcome over the seeds, and the rates where it
    happened."""
    groups = {"below fully synchronous SGD on every seed": [r for r, n in order.items() if n == 0],
              "above fully synchronous SGD on every seed": [r for r, n in order.items() if n == seeds],
              "the seeds split": [r for r, n in order.items() if 0 < n < seeds]}
    return [[f"asynchronous SGD ends {what}", ", ".join(f"{r:g}" for r in sorted(rs))] for what, rs in groups.items() if rs]


def short_words(v: claims.Verdict, error: claims.Verdict | None = None) -> str:
    """The two-way verdict in a few words, e.g. "asynchronous SGD ends lower, by 0.012 ± 0.001 nats"; with ``error``
    (the ``ch04.async_vs_sync_error`` verdict: test error at the same rates, on the same held-out seeds), "in
    training loss" and what the test errors show by the same sign test."""
    name = {"asynchronous (K = 1)": "asynchronous SGD", "fully synchronous (K = n = 16)": "fully synchronous SGD"}
    if not v.decided:
        text = f"the two end level (within {_margin_text(v)} nats)"
    else:
        text = f"{name.get(v.winner, v.winner)} ends lower, by {_margin_text(v)} nats"
    if error is None:
        return text
    if not error.decided:
        return text + " in training loss; by the sign test, test error does not tell them apart"
    if v.decided and error.winner == v.winner:
        text += " in training loss; its test error is also lower"
    else:
        text += f" in training loss; in test error {name.get(error.winner, error.winner)} is lower"
    return text + ", by the sign test over the held-out seeds"


def staleness_cost_words(v: claims.Verdict, race: claims.Verdict) -> str:
    """What the ``ch04.staleness_cost`` verdict ``v`` says staleness costs at the tuned rate, beside the gap between
    asynchronous and fully synchronous SGD of ``race`` (the ``ch04.async_vs_sync`` verdict): where both are scored on
    the same seeds, staleness's share of that gap seed by seed."""
    stale = "asynchronous (K = 1)"
    d = grids.decimals(v.spread)
    if not v.decided:
        text = ("once the rate is tuned, staleness costs no more than the spread between seeds "
                f"({(v.margin if v.winner != stale else -v.margin):+.{d}f} ± {v.spread:.{d}f} nats, seed by seed")
        if race.decided:
            text += (f", against {race.margin:.{grids.decimals(race.spread)}f} nats between asynchronous and fully "
                     "synchronous SGD")
        return text + ")"
    if v.winner == stale:
        return f"at the tuned rate the stale run even ends {v.margin:.{d}f} nats lower"
    share = staleness_share(v, race)
    small = "a small but consistent " if race.decided and 3 * v.margin < race.margin else ""
    seeds = "on every held-out seed" if v.unanimous else f"on {v.wins} of {v.seeds} held-out seeds"
    text = f"once the rate is tuned, staleness costs {small}{v.margin:.{d}f} ± {v.spread:.{d}f} nats ({seeds})"
    if race.decided and share is not None:
        (mean, sd), lower = share, "below" if race.winner == stale else "above"
        text += (f", about {mean:.{max(0, grids.decimals(sd))}f} % of the "
                 f"{race.margin:.{grids.decimals(race.spread)}f} nats by which asynchronous SGD ends {lower} fully "
                 "synchronous SGD")
    return text


def staleness_cost_short(v: claims.Verdict, race: claims.Verdict) -> str:
    """:func:`staleness_cost_words` in a few words, for a takeaway: whether staleness costs anything once the rate is
    tuned and, where it does, how many nats, beside asynchronous SGD's gap to fully synchronous SGD (in nats too: a
    share in % would read like the other percentages near it)."""
    stale = "asynchronous (K = 1)"
    if not v.decided:
        return "once the rate is tuned, staleness costs no more than the spread between seeds"
    if v.winner == stale:
        return "at the tuned rate the stale run even ends lower"
    d = grids.decimals(v.spread)
    text = f"once the rate is tuned, staleness costs a small but consistent {v.margin:.{d}f} ± {v.spread:.{d}f} nats"
    if race.decided:
        lead = "lead over" if race.winner == stale else "gap to"
        text += (f", against asynchronous SGD's {lead} fully synchronous SGD of "
                 f"{race.margin:.{grids.decimals(race.spread)}f} nats")
    return text + (", on every held-out seed" if v.unanimous else "")


def staleness_tuned_share_words(v: claims.Verdict, race: claims.Verdict) -> str:
    """Staleness's cost at the tuned rate as a share of the gap between asynchronous and fully synchronous SGD
    (:func:`staleness_share`), in a few words for the prose: "at its tuned rate, 0.035, it makes 1.3 ± 0.3 % of it"."""
    rate = v.best["asynchronous (K = 1)"].config["lr"]
    return f"at its tuned rate, {rate:g}, it makes {staleness_share_text(v, race)} of that gap"


def _stale_gaps(v: claims.Verdict, stale: str, fresh: str) -> list[float]:
    """How far above its never-stale replay the stale run ends (nats), seed by seed."""
    return [x - y for x, y in zip(v.best[stale].values, v.best[fresh].values)]


def staleness_rows(v: claims.Verdict, race: claims.Verdict, split: claims.Verdict) -> list[list[str]]:
    """What staleness costs, as table rows: at asynchronous SGD's tuned rate (``v``, the ``ch04.staleness_cost``
    verdict, beside ``race``, the ``ch04.async_vs_sync`` one) and at the shared rate (``split``, the
    ``ch04.shared_rate_staleness`` verdict). Each row: the rate per update, the seeds, on how many of them the
    never-stale replay ends lower, the cost (nats, mean ± sd seed by seed) and its share of asynchronous SGD's gap to
    fully synchronous SGD."""
    a = "asynchronous (K = 1)"
    fresh = next(n for n in v.best if n != a)
    m, sd = grids.mean_sd(gaps := _stale_gaps(v, a, fresh))
    rows = [["asynchronous SGD's own tuned rate", f"{v.best[a].config['lr']:g}", "held out",
             f"{sum(g > 0 for g in gaps)} of {len(gaps)}", f"{m:.{grids.decimals(sd)}f} ± {sd:.{grids.decimals(sd)}f}",
             f"{staleness_share_text(v, race)} of its {_gap_noun(_tuned_gap(race))}"]]
    d = staleness_split(split)
    gaps = _stale_gaps(split, SPLIT_NAMES["async"], SPLIT_NAMES["one"])
    (st, st_sd), (sh, sh_sd) = d["stale"], d["share"]
    k = max(0, grids.decimals(sh_sd))
    rows.append(["the shared rate", f"{split.claim.shared['lr']:g}", "those that pick the rates",
                 f"{sum(g > 0 for g in gaps)} of {len(gaps)}",
                 f"{st:.{grids.decimals(st_sd)}f} ± {st_sd:.{grids.decimals(st_sd)}f}",
                 f"{sh:.{k}f} ± {sh_sd:.{k}f} % of its {_gap_noun(d['gap'][0])}"])
    return rows


def staleness_finding_words(v: claims.Verdict, race: claims.Verdict, split: claims.Verdict,
                            small_share: float = 10.0) -> str:
    """:func:`staleness_rows` in words, no number but the seeds: whether the never-stale replay ends lower at the tuned
    rate by the sign test, whether by a small part (under ``small_share`` %) of asynchronous SGD's gap to fully
    synchronous SGD, and whether staleness takes a larger share at the shared rate."""
    a = "asynchronous (K = 1)"
    if not v.decided:
        text = "once the rate is tuned, asynchronous SGD and its never-stale replay end level"
    elif v.winner == a:
        text = "once the rate is tuned, the stale run even ends lower than its never-stale replay"
    else:
        share = staleness_share(v, race)
        noun = _gap_noun(_tuned_gap(race))
        part = "" if share is None else (f", by a small part of asynchronous SGD's {noun}" if share[0] < small_share
                                         else f", by a large part of asynchronous SGD's {noun}")
        text = f"once the rate is tuned, the never-stale replay ends lower {_seeds_text(v)}{part}"
    shared = staleness_shared_words(v, race, split)
    return text + (f"; {shared}" if shared else "")


def _gap_noun(gap: float) -> str:
    """What asynchronous SGD's gap to fully synchronous SGD is, from its sign (asynchronous minus synchronous final
    loss, nats): "lead" where asynchronous SGD ends lower, "deficit" where it ends higher.

    >>> _gap_noun(-0.01), _gap_noun(0.02)
    ('lead', 'deficit')
    """
    return "lead" if gap < 0 else "deficit"


def _tuned_gap(race: claims.Verdict) -> float:
    """Asynchronous minus fully synchronous SGD's final loss (nats), mean over the seeds of ``race`` (the
    ``ch04.async_vs_sync`` verdict), each at its tuned rate."""
    stale = "asynchronous (K = 1)"
    sync = race.best[next(n for n in race.best if n != stale)].values
    return statistics.fmean(x - y for x, y in zip(race.best[stale].values, sync))


def staleness_share_gap_text(v: claims.Verdict, race: claims.Verdict) -> str:
    """:func:`staleness_share_text` with what it is a share of, the sign of the gap deciding: "1.3 ± 0.5 % of
    asynchronous SGD's lead over fully synchronous SGD" (or "deficit to")."""
    noun = _gap_noun(_tuned_gap(race))
    link = "over" if noun == "lead" else "to"
    return f"{staleness_share_text(v, race)} of asynchronous SGD's {noun} {link} fully synchronous SGD"


def staleness_shared_words(v: claims.Verdict, race: claims.Verdict, split: claims.Verdict) -> str:
    """Whether staleness takes a larger share at the shared rate (``split``, the ``ch04.shared_rate_staleness``
    verdict) than at the tuned rate, and of what, the sign of the gap at the shared rate deciding: "at the larger
    shared rate, where asynchronous SGD trails, staleness makes a larger share of its deficit". Empty where the
    never-stale replay does not end between the two on every seed or the shares are not measured."""
    tuned, shared = staleness_share(v, race), staleness_split(split)
    if tuned is None or shared["between"] != shared["seeds"]:
        return ""
    more = "a larger" if shared["share"][0] > tuned[0] else "no larger"
    noun = _gap_noun(shared["gap"][0])
    where = "trails" if noun == "deficit" else "leads"
    return f"at the larger shared rate, where asynchronous SGD {where}, staleness makes {more} share of its {noun}"


def staleness_share_text(v: claims.Verdict, race: claims.Verdict) -> str:
    """:func:`staleness_share` as "1.3 ± 0.5 %", its decimals those of the spread."""
    share = staleness_share(v, race)
    if share is None:
        return "a share not measured on the same runs"
    mean, sd = share
    d = max(0, grids.decimals(sd))
    return f"{mean:.{d}f} ± {sd:.{d}f} %"


def staleness_share(v: claims.Verdict, race: claims.Verdict) -> tuple[float, float] | None:
    """Staleness's cost as a share (%) of the gap between asynchronous and fully synchronous SGD (its size, whichever
    ends lower), seed by seed, as (mean, sd):
    ``v`` the ``ch04.staleness_cost`` verdict, ``race`` the ``ch04.async_vs_sync`` one; None unless the two score
    asynchronous SGD on the same runs."""
    stale = "asynchronous (K = 1)"
    if stale not in v.best or stale not in race.best:
        return None
    a, a2 = v.best[stale].values, race.best[stale].values
    if len(a) != len(a2) or any(x != y for x, y in zip(a, a2)):
        return None
    fresh = v.best[next(n for n in v.best if n != stale)].values
    sync = race.best[next(n for n in race.best if n != stale)].values
    return grids.mean_sd([100 * (x - f) / abs(x - y) for x, f, y in zip(a, fresh, sync)])


def grid_step_words(names_grids: dict) -> dict:
    """What one step of the rate grid does near each best: ``names_grids`` maps a name to a tuned
    :class:`~commlib.experiments.sgd.grids.Grid`. Returns the smallest and largest factor between neighbouring rates
    of those grids (``"ratio_lo"``, ``"ratio_hi"``) and, over the grids, the smallest and largest rise of the mean
    level (nats) from the best rate to the nearer of its neighbours (``"step_lo"``, ``"step_hi"``)."""
    ratios = [b / a for g in names_grids.values() for a, b in zip(g.rates, g.rates[1:])]
    steps = []
    for g in names_grids.values():
        i = g.rates.index(g.best_rate)
        best = statistics.fmean(g.levels(g.best_rate))
        near = [statistics.fmean(g.levels(g.rates[j])) - best for j in (i - 1, i + 1) if 0 <= j < len(g.rates)]
        steps.append(min(near))
    return {"ratio_lo": min(ratios), "ratio_hi": max(ratios), "step_lo": min(steps), "step_hi": max(steps)}


def coarse_step_words(small: bool = False) -> dict:
    """:func:`grid_step_words` for the protocols the coarse grid :data:`~commlib.experiments.sgd.grids.RATES` tunes in
    the chapter's race figure (asynchronous, K-sync and K-async with K = 4, fully synchronous), on the five seeds that
    pick their rates."""
    s = {**race_settings(small), "seeds": TWO_WAY_SEEDS}
    return grid_step_words({"async": _grid("async", None, s), "sync": _grid("sync", None, s),
                            "k_async": _grid("k_async", 4, s), "k_sync": _grid("k_sync", 4, s)})


def fine_grid_words() -> dict:
    """The finer grids of the two-way races and the K trade-off (:data:`FINE_RATES`, :data:`K_TRADEOFF_RATES`) for
    the prose: ``"rows"``, each group of protocols
    that shares a grid with its rates as a list; ``"ratio_lo"`` and ``"ratio_hi"``, the smallest and largest factor
    between neighbouring rates."""
    names = {"async": "asynchronous SGD and its never-stale replay ($K = 1$ of the K trade-off)",
             "sync": "fully synchronous SGD ($K = n$ of the K trade-off)",
             "k_async": "K-sync and K-async ($K = 4$, K-async's also in the K trade-off)"}
    grids_ = [FINE_RATES[key] for key in names] + [K_TRADEOFF_RATES[K] for K in (2, 8)]
    ratios = [b / a for rates in grids_ for a, b in zip(rates, rates[1:])]
    rows = [[name, ", ".join(f"{r:g}" for r in FINE_RATES[key])] for key, name in names.items()]
    rows += [[f"K-async, $K = {K}$ (the K trade-off)", ", ".join(f"{r:g}" for r in K_TRADEOFF_RATES[K])]
             for K in (2, 8)]
    return {"rows": rows, "ratio_lo": min(ratios), "ratio_hi": max(ratios)}


def fine_falling(protocol: str, k: int | None, rate: float, small: bool = False) -> int:
    """On how many of the seeds that pick the two-way races' rates ``protocol`` (``k`` where it uses K), at ``rate``
    (a rate of its finer grid, :data:`FINE_RATES`), is still falling at the end of the budget."""
    s = {**race_settings(small), "seeds": TWO_WAY_SEEDS}
    g = _grid(protocol, k, s, rates=FINE_RATES[protocol])
    return sum(run_ends({protocol: g.run(rate, sd)}, s["budget"])[0].descending for sd in g.seeds)


def held_out_falling(protocol: str, k: int | None, rate: float, small: bool = False) -> tuple[int, int]:
    """``(falling, seeds)``: on how many of the two-way races' held-out seeds (:data:`TWO_WAY_SCORING_SEEDS`, the runs
    that score the race) ``protocol`` (``k`` where it uses K) at ``rate`` is still falling at the end of the budget,
    and out of how many; :func:`fine_falling` counts the seeds that pick the rates."""
    s = {**race_settings(small), "seeds": TWO_WAY_SCORING_SEEDS}
    g = _grid(protocol, k, s, rates=(rate,))
    return sum(run_ends({protocol: g.run(rate, sd)}, s["budget"])[0].descending for sd in g.seeds), len(g.seeds)


def staleness_cost_by_rate(small: bool = False) -> dict[float, tuple[float, float]]:
    """What staleness costs at every rate of asynchronous SGD's finer grid (:data:`FINE_RATES`): its level minus that
    of its never-stale replay (nats), seed by seed on the seeds that pick the rates, as ``{rate: (mean, sd)}`` (the
    runs of ``ch04.staleness_cost``, nothing new)."""
    s = {**race_settings(small), "seeds": TWO_WAY_SEEDS}
    rates = FINE_RATES["async"]
    stale, fresh = _grid("async", None, s, rates=rates), _grid("async", None, s, rates=rates, fresh=True)
    return {r: grids.mean_sd([x - y for x, y in zip(stale.levels(r), fresh.levels(r))]) for r in rates}


def staleness_cost_at(by_rate: dict[float, tuple[float, float]], rate: float) -> str:
    """The cost of staleness at ``rate`` from :func:`staleness_cost_by_rate`, "mean ± sd", no finer than its spread."""
    mean, sd = by_rate[rate]
    d = grids.decimals(sd)
    return f"{mean:.{d}f} ± {sd:.{d}f}"


def staleness_rate_words(by_rate: dict[float, tuple[float, float]], low: float, high: float) -> str:
    """How the cost of staleness (:func:`staleness_cost_by_rate`) at rate ``high`` compares with that at ``low``
    (below it): how many times as much, where the two differ by more than their spreads together, else that it is not
    clearly more."""
    if not low < high:
        raise ValueError(f"low ({low!r}) must lie below high ({high!r})")
    (a, sa), (b, sb) = by_rate[low], by_rate[high]
    if a > 0 and b - a > sa + sb:
        return f"about {b / a:.0f} times as much at rate {high:g} as at {low:g}"
    return f"not clearly more at rate {high:g} than at {low:g}"


# --------------------------------------------------------------------------- the seeds of each race, and the rule


def ahead_threshold(seeds: int) -> int:
    """The fewest of ``seeds`` paired seeds on which a contender must lead to be called ahead: the rule of
    :func:`~commlib.experiments.claims.sign_test` (``seeds + 1`` where no count decides).

    >>> ahead_threshold(5), ahead_threshold(8), ahead_threshold(10), ahead_threshold(30), ahead_threshold(4)
    (5, 8, 9, 21, 5)
    """
    return next((w for w in range((seeds + 1) // 2, seeds + 1) if claims.sign_test(w, seeds)), seeds + 1)


def seed_plan(c: claims.Claim) -> dict[str, object]:
    """How the claim ``c`` uses its seeds, for a table: ``"pick"``, how many seeds pick each contender's best;
    ``"score"``, how many held-out seeds score it ("the same" where the picking seeds score too); ``"ahead"``, on how
    many of the scoring seeds a contender must lead to be called ahead (:func:`ahead_threshold`)."""
    n = len(c.scored_seeds)
    return {"pick": len(c.seeds), "score": f"{len(c.scoring_seeds)}, held out" if c.scoring_seeds else "the same",
            "ahead": f"{ahead_threshold(n)} of {n}"}


def law_cap_words(verdicts: dict) -> str:
    """``verdicts``: ``{law name: verdict of a law race}``. Which batch protocols' best K lies at the cap K = n (for
    them a larger K, more mini-batches than learners, has a meaning the simulator does not allow); empty if none."""
    at: dict[str, list[str]] = {}
    for law, v in verdicts.items():
        n = v.claim.shared["workers"]
        for name, b in sorted(v.best.items()):
            if name.startswith("K-batch") and b.config["K"] == n:
                at.setdefault(name, []).append(law)
    if not at:
        return ""
    parts = [f"{name}'s best $K$ lies at that cap " + ("under both laws" if len(laws) == len(verdicts) == 2
                                                       else f"under {_and(laws)}")
             for name, laws in sorted(at.items(), key=lambda kv: -len(kv[1]))]
    return ("; ".join(parts) + ". The batch protocols could count more mini-batches than there are learners, but the "
            "simulator does not allow it, so a larger $K$ was not tried")
