r"""Claims: every sentence that compares or concludes, as a record whose run picks the wording.

A :class:`Claim` states a question ("does asynchronous SGD end below synchronous SGD on the same
budget?"), its contenders and what each may use, the grid each is tuned over, the seeds and the
metric. :func:`run` tunes every contender over its own grid on every seed, on the same shared
settings (hardware, budget), and returns a :class:`Verdict`: each contender's best configuration,
its metric on every seed, the margin between the two best and its spread, and on how many seeds
the winner wins. The chapter's sentence is ``claim.wording(verdict)``, never typed. Where the tuning
picks among many settings (a K and a rate), a claim names held-out ``scoring_seeds``: each contender
is tuned on ``seeds`` and its best is scored on the others, so the pick's luck does not decide the order.

Claims are defined beside their subject's experiments (``commlib/experiments/<subject>``) and
registered here with :func:`register`, as algorithms are in their registry; one registry-wide test
(``tests/test_claims_registry.py``) reruns each small and checks that every contender's best lies
inside its grid, that enough seeds back a close margin, and that the wording follows the runs.

>>> double = Contender("x2", lambda s, seed: (s["a"] - 2) ** 2 + s["base"] + seed / 100, {"a": (1, 2, 3)})
>>> triple = Contender("x3", lambda s, seed: (s["a"] - 3) ** 2 + s["base"] + 1, {"a": (2, 3, 4)})
>>> toy = Claim("toy", "which reaches the lower value?", (double, triple), metric="value",
...             shared={"base": 0.5}, wording=lambda v: f"{v.winner} is lower")
>>> v = run(toy)
>>> v.winner, v.best["x2"].config, v.best["x3"].config, v.wins, v.sentence
('x2', {'a': 2}, {'a': 3}, 5, 'x2 is lower')
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Contender", "Claim", "Best", "Verdict", "sign_test", "run", "register", "load", "REGISTRY", "claim", "verdict",
           "cached", "cached_arrays"]


@dataclass(frozen=True)
class Contender:
    """One side of a comparison: ``run(settings, seed) -> metric`` tuned over ``grid``.

    ``settings`` is the claim's ``shared`` settings (the same hardware and budget for every
    contender) updated with one configuration of ``grid``; a grid never overrides a shared setting.

    ``grid`` maps each tuned setting (a learning rate, a ring order, a chunk count) to the values
    tried; the best value must lie inside, not at an edge, or the grid is too small. ``uses``
    says in words what this contender may use (links, cards, algorithm, data type), for the
    "How we know" page.
    """

    name: str
    run: Callable[[dict, int], float]
    grid: Mapping[str, Sequence] = field(default_factory=dict)
    uses: str = ""
    #: Tuned settings whose grid starts or ends at the end of what exists (the shortest warm-up, one step):
    #: ``{setting: that value}``. A best there is no edge, since no grid could reach past it.
    limits: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """A comparison or conclusion the book states, with everything needed to rerun it.

    ``shared`` holds what every contender gets alike (the hardware, the budget), passed to each
    one's ``run``; ``seeds`` are the runs' seeds (five or more where noise could decide);
    ``lower_is_better`` orders the metric; ``wording(verdict) -> str`` chooses the sentence.
    ``tie`` (in the metric's units): where the two best differ by no more than this on every seed, the
    verdict is a tie (:attr:`Verdict.tied`) and the sentence names no winner.
    ``live``: for a claim the chapter runs on a measurement it makes while it executes (so its numbers
    are that run's), what the registry's version runs on instead, in words; the "How we know" page then
    says the numbers it shows come from that, not from the chapter's run. Empty for every other claim.
    """

    key: str
    question: str
    contenders: tuple[Contender, ...]
    metric: str
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    lower_is_better: bool = True
    shared: Mapping[str, object] = field(default_factory=dict)
    wording: Callable[[Verdict], str] | None = None
    chapter: str = ""
    source: str = ""
    tie: float = 0.0
    live: str = ""
    #: ``headline(verdict) -> str``: the answer in a few words, for prose that shows the numbers in a
    #: table beside it (:func:`commlib.views.claims.verdict_table`); None: the full sentence serves.
    headline: Callable[[Verdict], str] | None = None
    #: Held-out seeds. Where each contender's best is picked by runs, the runs that picked it favour whoever the
    #: pick suited; with ``scoring_seeds`` every contender is tuned on ``seeds`` and its best alone is run again on
    #: these, which decide the verdict (its values, margin, wins). Empty: the tuning seeds score too.
    scoring_seeds: tuple[int, ...] = ()

    @property
    def scored_seeds(self) -> tuple[int, ...]:
        """The seeds whose runs decide the verdict: the held-out :attr:`scoring_seeds`, else :attr:`seeds`."""
        return tuple(self.scoring_seeds) or tuple(self.seeds)


@dataclass(frozen=True)
class Best:
    """A contender at its best: the configuration with the best mean over the tuning seeds, and its runs on the
    seeds that score it (:attr:`Claim.scored_seeds`); ``tuned``: its runs on the tuning seeds, where those are
    held apart from the scoring seeds (else empty)."""

    config: dict
    values: tuple[float, ...]
    at_edge: tuple[str, ...]
    tuned: tuple[float, ...] = ()

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)


def sign_test(wins: int, seeds: int, losses: int | None = None) -> bool:
    """Whether leading on ``wins`` of ``seeds`` paired runs, and trailing on ``losses`` of them, is more than chance
    would do one time in sixteen, counting a lead by either contender (a two-sided sign test, since the winner is
    whichever leads): the rule of :attr:`Verdict.decided`, for any two contenders' paired runs. Seeds on which the
    two are equal say nothing about which is better and are left out, as the sign test does; without ``losses``
    every seed that is not a win is a loss.

    Five of five seeds is the least that decides with five (chance gives it one time in sixteen); seven of eight
    does not (one time in fourteen); nine of ten does (one time in 47). Leading on 41 of 100 and trailing on 16
    (43 equal) decides; 41 against 59 does not.

    >>> sign_test(5, 5), sign_test(4, 5), sign_test(7, 8), sign_test(8, 8), sign_test(9, 10), sign_test(8, 10)
    (True, False, False, True, True, False)
    >>> sign_test(41, 100, losses=16), sign_test(41, 100), sign_test(0, 3, losses=0)
    (True, False, False)
    """
    losses = seeds - wins if losses is None else losses
    trials = wins + losses
    if trials == 0:
        return False
    lead = max(wins, losses)
    p = 2 * sum(math.comb(trials, j) for j in range(lead, trials + 1)) / 2**trials
    return p <= 1 / 16


@dataclass(frozen=True)
class Verdict:
    """What a claim's run found: every contender's best, the winner, the margin and its spread."""

    claim: Claim
    best: dict[str, Best]
    winner: str
    runner_up: str
    margin: float
    spread: float
    wins: int
    #: seeds on which the runner-up is ahead (None: every seed that is not a win); equal seeds count for neither
    losses: int | None = None

    @property
    def equal(self) -> int:
        """Seeds on which the two best gave the same value (neither is ahead there)."""
        return self.seeds - self.wins - (self.seeds - self.wins if self.losses is None else self.losses)

    @property
    def seeds(self) -> int:
        """How many seeds decide the verdict (the held-out scoring seeds where the claim has them)."""
        return len(self.claim.scored_seeds)

    @property
    def unanimous(self) -> bool:
        """The winner is ahead on every seed."""
        return self.wins == self.seeds

    @property
    def deterministic(self) -> bool:
        """Every contender's best gave the same value on every seed (or there is one seed): no noise to test."""
        return all(len(set(b.values)) == 1 for b in self.best.values())

    @property
    def decided(self) -> bool:
        """The winner leads on enough seeds that chance would do so, either way, at most one time in sixteen
        (:func:`sign_test`).

        With five seeds that is all five; with eight, all eight; with ten, nine; a deterministic claim (:attr:`deterministic`) is
        decided by its one answer. A winner on the mean only, short of that, is
        *level* with the runner-up: a headline or table should say so, not name a winner. The rule
        sharpens as seeds are added, and a tie (:attr:`tied`) is never decided.
        """
        if self.tied:
            return False
        if self.deterministic:  # a closed form or a fixed schedule: one run says all there is
            return self.unanimous
        return sign_test(self.wins, self.seeds, self.losses)

    @property
    def tied(self) -> bool:
        """The two best differ by no more than the claim's ``tie`` on every seed: neither wins."""
        pairs = zip(self.best[self.winner].values, self.best[self.runner_up].values)
        return all(abs(a - b) <= self.claim.tie for a, b in pairs)

    @property
    def sentence(self) -> str:
        return self.claim.wording(self) if self.claim.wording is not None else ""

    @property
    def headline(self) -> str:
        """The claim's short answer (its ``headline``), for prose beside the verdict's table; else the sentence."""
        return self.claim.headline(self) if self.claim.headline is not None else self.sentence


def _configs(grid: Mapping[str, Sequence]) -> list[dict]:
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))] or [{}]


def _edges(grid: Mapping[str, Sequence], config: dict, limits: Mapping[str, object] | None = None) -> tuple[str, ...]:
    """The tuned settings whose best value is the first or last of three or more ordered values (unless that
    value is the setting's limit, the end of what exists)."""
    out = []
    for k, values in grid.items():
        values = list(values)
        if len(values) >= 3 and all(isinstance(v, (int, float)) for v in values) and config[k] in (values[0], values[-1]):
            if limits and k in limits and config[k] == limits[k]:
                continue
            out.append(k)
    return tuple(out)


def run(claim: Claim) -> Verdict:
    """Tune every contender over its grid on every seed; compare the bests."""
    if len(claim.contenders) < 2:
        raise ValueError(f"claim {claim.key!r} needs two or more contenders; got {len(claim.contenders)}")
    if not claim.seeds:
        raise ValueError(f"claim {claim.key!r} needs one or more seeds")
    if set(claim.scoring_seeds) & set(claim.seeds):
        raise ValueError(f"claim {claim.key!r}: scoring seeds {sorted(set(claim.scoring_seeds) & set(claim.seeds))} "
                         "are also tuning seeds; held-out seeds must be others")
    sign = 1.0 if claim.lower_is_better else -1.0
    best: dict[str, Best] = {}
    for c in claim.contenders:
        scored = []
        clash = set(c.grid) & set(claim.shared)
        if clash:
            raise ValueError(f"claim {claim.key!r}: contender {c.name!r} tunes shared setting(s) {sorted(clash)}")
        for config in _configs(c.grid):
            values = tuple(float(c.run({**claim.shared, **config}, seed)) for seed in claim.seeds)
            scored.append((sign * statistics.fmean(values), config, values))
        _, config, values = min(scored, key=lambda t: t[0])
        tuned: tuple[float, ...] = ()
        if claim.scoring_seeds:      # the best, picked above, scored afresh on seeds that did not pick it
            tuned = values
            values = tuple(float(c.run({**claim.shared, **config}, seed)) for seed in claim.scoring_seeds)
        best[c.name] = Best(config, values, _edges(c.grid, config, c.limits), tuned)
    order = sorted(best, key=lambda name: sign * best[name].mean)
    winner, runner_up = order[0], order[1]
    gaps = [sign * (b - a) for a, b in zip(best[winner].values, best[runner_up].values)]
    spread = statistics.stdev(gaps) if len(gaps) > 1 else 0.0
    return Verdict(claim, best, winner, runner_up, statistics.fmean(gaps), spread, sum(g > 0 for g in gaps),
                   sum(g < 0 for g in gaps))


#: Every registered claim by key: a function ``build(small=False) -> Claim``. ``small=True`` builds
#: the version the registry test reruns (a smaller problem, the same contenders, grids and seeds
#: enough to decide). Claims register where they are defined, beside their subject's experiments.
REGISTRY: dict[str, Callable[..., Claim]] = {}



def register(key: str) -> Callable[[Callable[..., Claim]], Callable[..., Claim]]:
    """Decorator: register ``build(small=False) -> Claim`` as the claim ``key`` (built only when asked for)."""
    def wrap(build: Callable[..., Claim]) -> Callable[..., Claim]:
        if key in REGISTRY and REGISTRY[key] is not build:
            raise ValueError(f"claim {key!r} is registered twice")
        REGISTRY[key] = build
        return build
    return wrap


def load() -> dict[str, Callable[..., Claim]]:
    """Import every experiments module (each registers the claims defined in it); return the registry."""
    import importlib
    import pkgutil

    from .. import experiments

    for info in pkgutil.walk_packages(experiments.__path__, experiments.__name__ + "."):
        importlib.import_module(info.name)
    return REGISTRY


def claim(key: str, small: bool = False) -> Claim:
    """The claim ``key``, built from its registered definition (``small``: the registry test's size)."""
    load()
    if key not in REGISTRY:
        raise ValueError(f"no claim {key!r}; registered: {', '.join(sorted(REGISTRY)) or 'none'}")
    return REGISTRY[key](small=small)


# ---------------------------------------------------------------------------
# a verdict computed once: the chapter that quotes a claim and the "How we know" page share it
# ---------------------------------------------------------------------------
def _source_hash() -> str:
    """A hash of every commlib source file: a cached verdict is reused only for the same code."""
    import hashlib
    from pathlib import Path

    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cache_dir():
    import os
    import tempfile
    from pathlib import Path

    return Path(os.environ.get("GOTW_CLAIMS_CACHE") or tempfile.gettempdir()) / f"gotw-claims-{_source_hash()}"


def _write_once(path, data: bytes) -> None:
    """Store ``data`` at ``path`` whole: written under a name of this process's own, then renamed, so that two
    chapters run side by side that compute the same entry never leave it half written or mixed."""
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _to_json(v: Verdict) -> dict:
    return {"best": {k: {"config": b.config, "values": list(b.values), "at_edge": list(b.at_edge),
                         "tuned": list(b.tuned)}
                     for k, b in v.best.items()},
            "winner": v.winner, "runner_up": v.runner_up, "margin": v.margin, "spread": v.spread, "wins": v.wins,
            "losses": v.losses}


def _from_json(c: Claim, d: dict) -> Verdict:
    best = {k: Best(b["config"], tuple(b["values"]), tuple(b["at_edge"]), tuple(b.get("tuned", ())))
            for k, b in d["best"].items()}
    return Verdict(c, best, d["winner"], d["runner_up"], d["margin"], d["spread"], d["wins"], d.get("losses"))


def verdict(key: str) -> Verdict:
    """The full claim ``key`` run once per version of the code: cached on disk, read back exactly.

    The chapter that quotes the claim and the "How we know" page both call this, so the runs are
    made once and the page shows what the chapter says. The cache lives in the system's temporary
    folder (or ``$GOTW_CLAIMS_CACHE``), one folder per hash of commlib's sources.
    """
    import json

    c = claim(key)
    path = _cache_dir() / f"{key}.json"
    if path.exists():
        try:
            return _from_json(c, json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError):
            pass
    v = run(c)
    _write_once(path, json.dumps(_to_json(v)).encode())
    return v


def cached(name: str, compute: Callable[[], Sequence[float]]) -> tuple[float, ...]:
    """``compute()``, a list of numbers (a reference run a chapter sets its claims against), computed once per
    version of the code and cached on disk beside the verdicts of :func:`verdict`, read back exactly."""
    import json

    path = _cache_dir() / f"{name}.json"
    if path.exists():
        try:
            return tuple(float(x) for x in json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError):
            pass
    values = tuple(float(x) for x in compute())
    _write_once(path, json.dumps(list(values)).encode())
    return values


def cached_arrays(name: str, compute: Callable[[], Mapping[str, object]]) -> dict:
    """``compute()``, named arrays (the runs a figure draws, a grid of runs), computed once per version of the code
    and cached on disk beside the verdicts of :func:`verdict` as NumPy's ``.npz`` (no pickle), read back exactly:
    :func:`cached` for what is more than a list of numbers."""
    import io
    import zipfile

    import numpy as np

    path = _cache_dir() / f"{name}.npz"
    if path.exists():
        try:
            with np.load(path, allow_pickle=False) as stored:
                return {k: stored[k] for k in stored.files}
        except (ValueError, OSError, KeyError, zipfile.BadZipFile):
            pass
    arrays = {k: np.asarray(v) for k, v in compute().items()}
    stored = io.BytesIO()
    np.savez(stored, **arrays)
    _write_once(path, stored.getvalue())
    return arrays
