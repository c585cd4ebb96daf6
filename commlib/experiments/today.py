"""Chapter 7's comparisons as claims (:mod:`commlib.experiments.claims`), and the runs behind them.

Compression: the bytes each method sends per step and worker, at the chapter's n = 4 and at larger n
(top-k is all-gathered, its indices differing between workers, so its bytes grow with n; PowerSGD and
the control are all-reduced, and sign is summed in two phases, an all-to-all and an all-gather, like an
all-reduce), from :func:`commlib.today.compression.step_bytes`, deterministic (its five seeds give the
same bytes, enough for the registry's check where two methods tie); how close each compressor ends to
the uncompressed control, and whether the book's problem can tell compressors apart, trained on ten
seeds (:data:`COMPRESSION_SEEDS`), every contender at its own best learning rate from a grid whose best lies inside
(the runs are made once and shared between the claims that use them).

Mixture of experts: the chapter's example (:data:`MOE_EXAMPLE`), defined once.

Local SGD and DiLoCo: each against its control at an equal wall-clock budget, on five seeds or on ten
(:data:`LOCAL_SEEDS`).

>>> v = claims.run(claims.claim("ch07.compressed_bytes_n64", small=True))
>>> v.winner, round(v.best["top-k"].mean / v.best["control"].mean, 1)
('PowerSGD', 6.4)
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass

from ..sgd import training
from ..today import compression
from ..today.cost import FP8_BLOCK_SCALED, WireFormat
from . import claims

__all__ = ["BYTES_WORKERS", "COMPRESSION_SEEDS", "NAMES", "TRAIN_LRS", "TRAIN_STEPS", "TRAIN_WORKERS", "LOCAL_BUDGET", "LOCAL_H",
           "LOCAL_SETTINGS", "LARGE_BATCH_KEYS", "large_summary", "local_outcome", "large_outcome", "paired_gaps", "median_spread",
           "seed_noise", "large_share", "large_shares_by_seed", "large_share_median",
           "large_gain_words", "local_gap",
           "count_word", "PairedGap", "paired_gaps_to_control", "power_of_ten_up", "percent_about", "seed_gap_bound", "compression_ranking",
           "race_cause", "race_takeaway", "SAME_BATCH", "batch_scope", "MoeExample", "MOE_EXAMPLE",
           "MOE_SEEDS", "moe_imbalances", "bytes_phrase", "way_words",
           "large_share_range", "way_range_words", "closes_range_words"]

#: Workers in every compression training run.
TRAIN_WORKERS = 4
#: The numbers of workers the chapter quotes bytes at; the first is the training runs' own.
BYTES_WORKERS = (TRAIN_WORKERS, 16, 64)
#: Display names of :data:`commlib.today.compression.METHODS`.
NAMES = {"none": "control", "powersgd": "PowerSGD", "topk": "top-k", "sign": "sign"}


_USES = {"none": "all-reduced (ring), fp32 values", "powersgd": "all-reduced (ring), fp32 factors",
         "topk": "all-gathered fp32 values and int32 indices",
         "sign": "two-phase compressed all-reduce: all-to-all of packed sign chunks, all-gather of re-signed chunks, "
                 "a 4-byte scale a chunk"}


def bytes_phrase(control: float, other: float) -> str:
    """``"3.4 times fewer"`` or ``"1.6 times more"``: ``other`` against ``control``."""
    if other <= control:
        return f"{control / other:.1f} times fewer"
    return f"{other / control:.1f} times more"


def _bytes_claim(n: int):
    def build(small: bool = False) -> claims.Claim:
        def contender(method):
            rows, cols = compression.problem_shape()
            return claims.Contender(
                NAMES[method], lambda s, seed: compression.step_bytes(method, rows, cols, s["workers"]),
                uses=_USES[method])

        def wording(v: claims.Verdict) -> str:
            ctrl = v.best["control"].mean
            p, t, g = (bytes_phrase(ctrl, v.best[name].mean) for name in ("PowerSGD", "top-k", "sign"))
            return (f"at n = {n} PowerSGD sends {p} bytes per step and worker than the control, top-k {t} "
                    f"and sign {g}")
        return claims.Claim(
            f"ch07.compressed_bytes_n{n}", f"With n = {n} workers, which compressor sends the fewest bytes per step, "
            "and how do they compare with the uncompressed all-reduce?",
            tuple(contender(m) for m in compression.METHODS), metric="bytes per step and worker",
            seeds=(0, 1, 2, 3, 4), shared={"workers": n}, wording=wording, chapter="07",
            source="commlib.today.compression.step_bytes")
    return build


for _n in BYTES_WORKERS:
    claims.register(f"ch07.compressed_bytes_n{_n}")(_bytes_claim(_n))

_SEEDS = (0, 1, 2, 3, 4)
#: The seeds of every compression training claim: ten, as on five PowerSGD's small lag behind the control shows or
#: not by the seeds drawn (above it on 3 of seeds 0-4, on 5 of seeds 5-9). A run takes a few hundredths of a second.
COMPRESSION_SEEDS = tuple(range(10))
#: Steps every compression run takes (the same budget for every method).
TRAIN_STEPS = _STEPS = 300
#: Learning rates the control and each compressor (top-k keeping 10 %) are tuned over: the best mean over the
#: ten seeds, 0.7 for every method, lies inside (0.5 and 1.0 end higher).
TRAIN_LRS = (0.5, 0.7, 1.0)
_LRS = TRAIN_LRS
#: Top-k keeping fewer entries wants smaller steps: its own grids (best 0.35 keeping 2, 0.2 keeping 1, over the ten
#: seeds).
_FEW_LRS = (0.2, 0.35, 0.5)
_ONE_LRS = (0.1, 0.2, 0.35)


@functools.cache
def _final_loss(method: str, lr: float, steps: int, k: int, seed: int) -> float:
    """One training run's final loss, made once: the claims below share their controls' and top-k's runs."""
    return compression.train_compressed(method, lr, steps=steps, workers=TRAIN_WORKERS, k=k, seed=seed,
                                        record=False).final_loss


def _train(method: str, k: int = compression.DEFAULT_K):
    def run(s: dict, seed: int) -> float:
        return _final_loss(method, s["lr"], s["steps"], k, seed)
    return run


def _one_digit_up(x: float) -> float:
    """``x`` (> 0) rounded up to one significant digit: 0.00093 -> 0.001, 0.0012 -> 0.002."""
    grain = 10.0 ** math.floor(math.log10(x))
    return math.ceil(round(x / grain, 9)) * grain


_COUNT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def count_word(k: int) -> str:
    """A small count in words, as prose writes it; 11 and more in digits.

    >>> count_word(5), count_word(10), count_word(40)
    ('five', 'ten', '40')
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return _COUNT_WORDS[k] if k < len(_COUNT_WORDS) else str(k)


@dataclass(frozen=True)
class PairedGap:
    """One contender's final loss against the control's on the same seeds: ``gaps`` the relative gaps seed by seed
    (its loss over the control's, minus one; > 0 where it ends above), ``mean`` their mean, ``spread`` their standard
    deviation (the paired spread: seed-to-seed noise that both runs share drops out), ``above`` on how many seeds it
    ends above the control, ``decided`` whether a sign test tells that split from chance (:func:`commlib.experiments.claims.sign_test`)."""
    name: str
    gaps: tuple[float, ...]
    mean: float
    spread: float
    above: int
    decided: bool


def paired_gaps_to_control(v: claims.Verdict, names, control: str = "control") -> dict[str, PairedGap]:
    """Each of ``names`` paired with ``control`` seed by seed, as the verdicts pair contenders: :class:`PairedGap`.

    Gaps far smaller than the seed-to-seed spread of either loss can still be told apart when the pairs agree, so
    the yardstick for a gap is the spread of the paired gaps, not that of the losses.

    >>> v = claims.run(claims.Claim("t", "?", (claims.Contender("control", lambda s, seed: 1.0 + seed),
    ...                                        claims.Contender("a", lambda s, seed: (1.0 + seed) * 1.001)),
    ...                             metric="m", seeds=(0, 1, 2, 3, 4)))
    >>> g = paired_gaps_to_control(v, ["a"])["a"]
    >>> round(g.mean, 6), round(g.spread, 6), g.above, g.decided
    (0.001, 0.0, 5, True)
    """
    ctrl = v.best[control].values
    out = {}
    for name in names:
        gaps = tuple(b / c - 1 for b, c in zip(v.best[name].values, ctrl))
        above, below = sum(g > 0 for g in gaps), sum(g < 0 for g in gaps)
        out[name] = PairedGap(name, gaps, statistics.fmean(gaps), statistics.stdev(gaps) if len(gaps) > 1 else 0.0,
                              above, claims.sign_test(max(above, below), len(gaps), losses=min(above, below)))
    return out


def power_of_ten_up(x: float) -> float:
    """The smallest power of ten at least ``x`` (> 0): a coarse bound, "under 0.1 %" for a gap of 0.06 %.

    >>> power_of_ten_up(0.00056), power_of_ten_up(0.001), power_of_ten_up(0.0012)
    (0.001, 0.001, 0.01)
    """
    if x <= 0:
        raise ValueError(f"x must be > 0, got {x}")
    return 10.0 ** math.ceil(round(math.log10(x), 9))


def percent_about(x: float, spread: float) -> str:
    """``x`` (a share, 0.001 for 0.1 %) as a percentage quoted no finer than ``spread`` (a share too): to the decimal
    place of the spread's first digit, two places where there is no spread.

    >>> percent_about(0.00072, 0.00056), percent_about(-0.00057, 0.0007), percent_about(0.0012, 0.0)
    ('0.07 %', '-0.06 %', '0.12 %')
    """
    places = 2 if spread <= 0 else max(0, -math.floor(math.log10(100 * spread)))
    return f"{100 * x:.{places}f} %"


#: A compressor that ends on one side of the control on at least this share of the seeds, where no sign test
#: decides, is said to lean that way (:func:`compression_ranking`); short of it, to be level with the control.
LEAN_SHARE = 0.75


def _join(words) -> str:
    words = list(words)
    return " and ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " and " + words[-1]


def compression_ranking(gaps, steps: int) -> dict[str, str]:
    """What the compressors' paired gaps to the control (:func:`paired_gaps_to_control`, each compressor's
    :class:`PairedGap`) say about ranking them, after ``steps`` steps, the only budget run: ``"head"``, a bold
    lead-in; ``"far"``, a sentence on the gaps that show (or the largest one); ``"short"`` and ``"size"``, the
    conclusion in a clause after a comma and after a colon (``"size"``, for a list of takeaways, without the mean gaps);
    ``"remember"``, the clause after a comma for a summary: only what a sign test decides, no undecided lean.

    A compressor whose side of the control a sign test decides is told apart from it; one that ends on one side on
    :data:`LEAN_SHARE` of the seeds or more, undecided, leans that way, a small lag (above) or lead (below) said with
    its count and its mean gap, quoted no finer than its paired spread (:func:`percent_about`); the rest are level.

    >>> g = {n: PairedGap(n, gaps, sum(gaps) / 4, 0.0005, sum(x > 0 for x in gaps), False) for n, gaps in
    ...      (("PowerSGD", (0.001, 0.0008, 0.0004, -0.0001)), ("sign", (0.0004, -0.0003, 0.0001, -0.0004)))}
    >>> w = compression_ranking(g, 300)
    >>> w["head"]
    'At the end of these runs, four seeds cannot rank the compressors, though PowerSGD lags a little'
    >>> w["far"].split(": ")[0]
    'PowerSGD ends above the control on 3 of 4 seeds, by about 0.05 % on average'
    >>> w["far"].split("; ")[1]
    'sign is level with the control.'
    >>> w["remember"]
    'after 300 steps too close for four seeds to rank them'
    """
    gs = list(gaps.values())
    if not gs:
        raise ValueError("gaps must not be empty")
    n = len(gs[0].gaps)
    seeds = count_word(n)

    def side(g: PairedGap) -> tuple[str, int]:
        return ("above", g.above) if g.mean > 0 else ("below", sum(x < 0 for x in g.gaps))

    def one(g: PairedGap) -> str:
        where, k = side(g)
        return (f"{g.name} ends {where} the control on {k} of {n} seeds, by about "
                f"{percent_about(abs(g.mean), g.spread)} on average")

    decided = [g for g in gs if g.decided]
    leaning = [g for g in gs if not g.decided and side(g)[1] >= LEAN_SHARE * n]
    level = [g for g in gs if g not in decided and g not in leaning]
    level_words = (f"{_join(g.name for g in level)} {'is' if len(level) == 1 else 'are'} level with the control"
                   if level else "")
    if decided:
        names = _join(g.name for g in decided)
        parts = [f"{one(g)}, a split a sign test tells from chance" for g in decided]
        parts += [f"{one(g)}, consistent in direction but too small for a sign test on {seeds} seeds to decide"
                  for g in leaning]
        return {"head": f"At the end of these runs, {seeds} seeds tell {names} from the control, by small gaps",
                "far": "; ".join(parts + ([level_words] if level_words else [])) + ".",
                "short": f"after {steps} steps close, though {seeds} seeds tell {names} from the control",
                "remember": f"after {steps} steps close, though {seeds} seeds tell {names} from the control",
                "size": (f"after {steps} steps, the only budget run, {seeds} seeds tell {names} from the control, "
                         "by small gaps")}
    if leaning:
        names = _join(g.name for g in leaning)
        first = leaning[0]
        lag = {x.name: "lag" if x.mean > 0 else "lead" for x in leaning}
        verb = (f"{lag[first.name]}s a little" if len(leaning) == 1 else
                "lag or lead a little" if len(set(lag.values())) > 1 else f"{lag[first.name]} a little")
        what = (f"a small {lag[first.name]}, consistent in direction" if len(leaning) == 1
                else "small gaps, each consistent in direction")
        body = "; ".join(one(x) for x in leaning)
        counts = " and ".join(f"{side(x)[1]} of {n}" for x in leaning)
        return {"head": f"At the end of these runs, {seeds} seeds cannot rank the compressors, though {names} {verb}",
                "far": (f"{body}: {what} but too small for a sign test on {seeds} seeds to decide"
                        + (f"; {level_words}" if level_words else "") + "."),
                "remember": f"after {steps} steps too close for {seeds} seeds to rank them",
                "short": (f"after {steps} steps too close for {seeds} seeds to rank them, though {names} {verb} "
                          f"on {counts} seeds"),
                "size": (f"at the end of the only budget run, {'; '.join(one(x).split(', by about')[0] for x in leaning)}, "
                         f"{'a ' + lag[first.name] if len(leaning) == 1 else 'gaps'} too small for a sign test on {seeds} seeds to "
                         f"decide" + (f"; {level_words.replace('the control', 'it')}" if level_words else ""))}
    far = max(gs, key=lambda x: abs(x.mean))
    return {"head": f"At the end of these runs, {seeds} seeds cannot rank the compressors",
            "far": f"{far.name}'s gap is the largest: it {one(far).removeprefix(far.name + ' ')}, a split a sign test "
                   "does not tell from chance.",
            "short": f"after {steps} steps too close for {seeds} seeds to rank them",
            "remember": f"after {steps} steps too close for {seeds} seeds to rank them",
            "size": f"after {steps} steps, the only budget run, the gaps are too small for these runs to rank them"}


def seed_gap_bound(gaps) -> float:
    """The bound every seed's paired gap stays within (``gaps``: :func:`paired_gaps_to_control`'s
    :class:`PairedGap` records), as the claim ``ch07.compressors_reach_control`` quotes it: the largest gap on any seed,
    or the largest paired spread where that is larger, rounded up to one significant digit. The mean gaps sit well
    inside it: a mean is smaller than the worst seed.

    >>> g = PairedGap("sign", (0.0012, -0.0004, 0.0002), 0.0003, 0.0008, 2, False)
    >>> seed_gap_bound({"sign": g})
    0.002
    """
    gs = list(gaps.values())
    if not gs:
        raise ValueError("gaps must not be empty")
    return _one_digit_up(max(max(abs(x) for g in gs for x in g.gaps), max(g.spread for g in gs)))


def _percent(x: float) -> str:
    """A share with one significant digit, as a percentage: 0.001 -> "0.1 %"."""
    digits = max(0, -math.floor(math.log10(100 * x)))
    return f"{100 * x:.{digits}f} %"


@claims.register("ch07.compressors_reach_control")
def _reach(small: bool = False) -> claims.Claim:
    names = [NAMES[m] for m in compression.METHODS[1:]]

    def wording(v: claims.Verdict) -> str:
        gaps = paired_gaps_to_control(v, names)
        bound, spread = seed_gap_bound(gaps), max(g.spread for g in gaps.values())
        best = {n: v.best[n].config["lr"] for n in ("control", *names)}
        grid = " and ".join((", ".join(f"{x:g}" for x in _LRS[:-1]), f"{_LRS[-1]:g}"))
        rates = (f"{best['control']:g} for all four" if len(set(best.values())) == 1 else
                 ", ".join(f"{n} {lr:g}" for n, lr in best.items()))
        return (f"over {v.seeds} seeds, each at its own best learning rate from {grid} ({rates}), "
                f"{', '.join(names[:-1])} and {names[-1]} all end within {_percent(bound)} of the control's final loss "
                f"on every seed, and each one's gap varies by up to {_percent(_one_digit_up(spread))} from seed to "
                f"seed; the lowest on average, {v.winner}, ends below {v.runner_up} in {v.wins} of {v.seeds} seeds")

    def headline(v: claims.Verdict) -> str:
        bound = seed_gap_bound(paired_gaps_to_control(v, names))
        return (f"{', '.join(names[:-1])} and {names[-1]} all end within {_percent(bound)} "
                f"of the control's loss on each of {count_word(v.seeds)} seeds")
    return claims.Claim(
        "ch07.compressors_reach_control",
        f"With {TRAIN_WORKERS} workers and the same number of steps, how close do PowerSGD, top-k and sign, each with error "
        "feedback and its own best learning rate, end to the uncompressed control's loss?",
        tuple(claims.Contender(NAMES[m], _train(m), {"lr": _LRS},
                               uses=f"{TRAIN_WORKERS} workers, batch 32, {'no compression' if m == 'none' else 'error feedback'}, "
                                    f"{_USES[m]}") for m in compression.METHODS),
        metric="final loss (nats)", seeds=COMPRESSION_SEEDS, shared={"steps": _STEPS},
        wording=wording, chapter="07", source="commlib.today.compression.train_compressed", headline=headline)


@claims.register("ch07.topk_keep_fraction")
def _keep(small: bool = False) -> claims.Claim:
    many, few = compression.DEFAULT_K, 2
    dim = training.make_problem(seed=0).dim

    def wording(v: claims.Verdict) -> str:
        lower = v.winner.split(" (")[0]
        if abs(v.margin) <= 3 * v.spread:
            return (f"top-k keeping {few} entries and keeping {many} end level: their mean gap is smaller than its "
                    f"spread over seeds ({v.spread:.3f} nats), and {lower} ends lower in {v.wins} of {v.seeds} seeds, "
                    "so this problem cannot tell them apart")
        return (f"top-k {lower} ends lower, by {abs(v.margin):.3f} nats (spread {v.spread:.3f}), in {v.wins} of "
                f"{v.seeds} seeds")

    def headline(v: claims.Verdict) -> str:
        if abs(v.margin) <= 3 * v.spread:
            return f"keeping {few} entries and keeping {many} end level"
        return f"top-k {v.winner.split(' (')[0]} ends lower"
    return claims.Claim(
        "ch07.topk_keep_fraction",
        "On the book's problem, does top-k keeping 10 % of the entries end lower than keeping 1 %?",
        (claims.Contender(f"keeping {many} ({many / dim:.0%})", _train("topk", many), {"lr": _LRS},
                          uses=f"{TRAIN_WORKERS} workers, batch 32, error feedback, all-gathered fp32 values and int32 indices"),
         claims.Contender(f"keeping {few} ({few / dim:.0%})", _train("topk", few), {"lr": _FEW_LRS},
                          uses="the same, its own rate tuned")),
        metric="final loss (nats)", seeds=COMPRESSION_SEEDS, shared={"steps": _STEPS}, wording=wording, chapter="07",
        source="commlib.today.compression.train_compressed", headline=headline)


@claims.register("ch07.topk_one_entry")
def _one(small: bool = False) -> claims.Claim:
    def wording(v: claims.Verdict) -> str:
        ctrl, one = v.best["control"], v.best["top-k keeping 1"]
        return (f"keeping a single entry falls behind: {one.mean:.3f} nats at its best rate ({one.config['lr']:g}) "
                f"against the control's {ctrl.mean:.3f}, in {v.wins} of {v.seeds} seeds")

    def headline(v: claims.Verdict) -> str:
        if v.winner != "control":
            return "keeping a single entry does not fall behind the control"
        return ("keeping a single entry falls behind the control on every seed" if v.unanimous else
                f"keeping a single entry falls behind the control on {v.wins} of {v.seeds} seeds")
    return claims.Claim(
        "ch07.topk_one_entry", "On the book's problem, does top-k keeping one entry reach the uncompressed control?",
        (claims.Contender("control", _train("none"), {"lr": _LRS}, uses=f"{TRAIN_WORKERS} workers, batch 32, ring all-reduce, fp32"),
         claims.Contender("top-k keeping 1", _train("topk", 1), {"lr": _ONE_LRS},
                          uses="the same workers and steps, error feedback, all-gathered")),
        metric="final loss (nats)", seeds=COMPRESSION_SEEDS, shared={"steps": _STEPS}, wording=wording, chapter="07",
        source="commlib.today.compression.train_compressed", headline=headline)


@dataclass(frozen=True)
class MoeExample:
    """The chapter's mixture-of-experts example, defined once: the prose, the figure and the tests read it.

    One MoE layer of width ``hidden`` (:math:`d_{model}`) with ``experts`` experts, one a GPU, on one host of
    ``gpus_per_host`` GPUs, each GPU holding ``tokens`` tokens routed top-``top_k`` in ``dtype``; then the same
    layer with ``experts_across`` experts spread over hosts of the same size, whose GPUs each have one
    ``network`` card and ``nvlink`` links; and a skewed router drawn for ``skew_tokens`` tokens a rank at each
    of ``skews``. ``fp8_dispatch`` is the format the chapter sends the tokens to the experts in against ``dtype``.
    """

    tokens: int = 4096
    hidden: int = 4096
    top_k: int = 2
    experts: int = 8
    gpus_per_host: int = 8
    dtype: str = "bf16"
    experts_across: int = 64
    nvlink: str = "nvlink4"
    network: str = "ib_ndr"
    skew_tokens: int = 512
    skews: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5)
    fp8_dispatch: WireFormat = FP8_BLOCK_SCALED

    @property
    def hosts_across(self) -> int:
        """Hosts the ``experts_across`` experts fill, one a GPU."""
        return self.experts_across // self.gpus_per_host


#: The MoE example of chapter 7.
MOE_EXAMPLE = MoeExample()
#: Seeds of the routing draws the chapter summarises (a draw takes well under a millisecond): enough for a median and
#: the 5th and 95th percentiles.
MOE_SEEDS = tuple(range(50))


def moe_imbalances(example: MoeExample = MOE_EXAMPLE, seeds=MOE_SEEDS) -> dict[float, tuple[float, ...]]:
    """The busiest rank's load over the mean, for each of the example's skews, one value per seed.

    >>> r = moe_imbalances(seeds=(0, 1))
    >>> sorted(r) == list(MOE_EXAMPLE.skews), all(len(v) == 2 for v in r.values())
    (True, True)
    """
    from ..today import moe
    return {s: tuple(moe.imbalance(moe.expert_loads(example.skew_tokens, example.top_k, example.experts, skew=s,
                                                    seed=seed)) for seed in seeds) for s in example.skews}



#: Seeds and tokens a seed of the group-limited routing draws.
GROUP_LIMITED_SEEDS = (0, 1, 2, 3, 4)
GROUP_LIMITED_TOKENS = 20_000


def group_limited_hosts(router, example: MoeExample = MOE_EXAMPLE, tokens: int = GROUP_LIMITED_TOKENS,
                        seeds=GROUP_LIMITED_SEEDS) -> tuple[float, ...]:
    """The remote hosts a token reaches when ``router``'s rule (a :class:`commlib.today.moe.GroupLimitedRouter`)
    routes the example's layer spread over hosts, its hosts as the groups: the mean over ``tokens`` tokens, one value
    per seed. Scores favour no expert, so every host sends alike; the sender here sits on host 0.

    >>> from commlib.today import moe
    >>> h = group_limited_hosts(moe.DEEPSEEK_V3_ROUTER, tokens=2000, seeds=(0,))
    >>> 3.4 < h[0] <= 3.5             # at most 4 hosts, one of them maybe the sender's own: at most 4 x 7/8
    True
    """
    import dataclasses

    import numpy as np
    rule = dataclasses.replace(router, experts=example.experts_across, groups=example.hosts_across)
    out = []
    for seed in seeds:
        hosts = np.sort(rule.route(tokens, seed) // example.gpus_per_host, axis=1)   # each token's experts' hosts
        first = np.ones_like(hosts, dtype=bool)
        first[:, 1:] = hosts[:, 1:] != hosts[:, :-1]                                 # a host's first appearance
        out.append(float(np.mean((first & (hosts != 0)).sum(axis=1))))
    return tuple(out)

# Communicating less often: DiLoCo's outer optimizer tuned, and local SGD against its usual control.
from ..today import local_sgd  # noqa: E402

#: The wall-clock budget (seconds) every local-SGD variant gets; H of the comparisons.
LOCAL_BUDGET = local_sgd.BUDGET
LOCAL_H = 16
#: The seeds of the large-batch controls and of the synchronous SGD they are measured against: ten, as the large
#: batch's tuned rate at H = 64 sits near where it diverges and one seed in five or so nearly does, so that five
#: seeds move its share of local SGD's gain by a sixth (0.54 on seeds 0-4, 0.68 on seeds 5-9, at the rate ten
#: seeds pick).
LOCAL_SEEDS = tuple(range(10))
_DIL_GRID = {"lr": (0.1, 0.2, 0.5), "outer_lr": (0.3, 0.5, 0.7), "momentum": (0.5, 0.7, 0.9)}
#: The registry's quick rerun: a shorter budget, the momentum held at the full run's best.
_DIL_SMALL = {"lr": (0.1, 0.2, 0.5), "outer_lr": (0.5, 0.7, 1.0)}


#: The timing settings a claim's ``shared`` may change (seconds; the share of a step's straggle).
_TIMING = ("compute", "comm", "jitter")


@functools.cache
def _local_loss(h: int, outer: str, budget: float, seed: int, lr: float, outer_lr: float, momentum: float,
                timing: tuple) -> float:
    """One local-SGD run's final loss, made once: the claims below share their synchronous and H = 16 runs."""
    return local_sgd.run(h, lr, budget=budget, outer=outer, outer_lr=outer_lr, momentum=momentum, seed=seed,
                         record=False, **dict(timing)).final_loss


def _local(outer: str):
    """Plain averaging (``"average"``) or DiLoCo (``"nesterov"``) every ``s["h"]`` steps, stopped by ``s["budget"]``
    on the slowest worker's clock, with the claim's timing."""
    def run(s: dict, seed: int) -> float:
        nesterov = outer == "nesterov"
        timing = tuple(sorted((k, s[k]) for k in _TIMING if k in s))
        return _local_loss(s["h"], outer, s["budget"], seed, s["lr"], s["outer_lr"] if nesterov else 1.0,
                           s["momentum"] if nesterov else 0.0, timing)
    return run


def _large(s: dict, seed: int) -> float:
    timing = {k: s[k] for k in _TIMING if k in s}
    return local_sgd.large_batch(s["h"], s["budget"], lrs=(s["lr"],), seed=seed, record=False, **timing).final_loss


@claims.register("ch07.diloco_vs_averaging")
def _diloco(small: bool = False) -> claims.Claim:
    def wording(v: claims.Verdict) -> str:
        dil = v.best["DiLoCo"]
        verb = "ends below" if v.winner == "DiLoCo" else "ends above"
        mom = dil.config.get("momentum", v.claim.shared.get("momentum"))
        return (f"DiLoCo, its outer rate ({dil.config['outer_lr']:g}), momentum ({mom:g}) and inner "
                f"rate ({dil.config['lr']:g}) tuned, {verb} plain averaging at H = {LOCAL_H} by {abs(v.margin):.3f} nats "
                f"(spread {v.spread:.3f}), in {v.wins} of {v.seeds} seeds")

    def headline(v: claims.Verdict) -> str:
        verb = "ends below" if v.winner == "DiLoCo" else "ends above"
        return f"tuned DiLoCo {verb} plain averaging, by a small margin, on {v.wins} of {v.seeds} seeds"
    return claims.Claim(
        "ch07.diloco_vs_averaging", f"At H = {LOCAL_H} and an equal wall-clock budget, does DiLoCo's outer Nesterov "
        "step end lower than plain averaging?",
        (claims.Contender("DiLoCo", _local("nesterov"), _DIL_SMALL if small else _DIL_GRID,
                          uses="4 workers, batch 16, outer Nesterov momentum, inner, outer rate and momentum tuned"),
         claims.Contender("plain averaging", _local("average"), {"lr": local_sgd.LRS}, uses="the same, inner rate tuned")),
        metric="final loss (nats)", seeds=_SEEDS,
        shared={"h": LOCAL_H, "budget": 0.2, "momentum": 0.7} if small else {"h": LOCAL_H, "budget": LOCAL_BUDGET},
        wording=wording, chapter="07", source="commlib.today.local_sgd.run", headline=headline)


#: The H of each large-batch control, and its key: the chapter's H and the figure's best, H = 64.
LARGE_BATCH_KEYS = {LOCAL_H: "ch07.local_vs_large_batch", 64: "ch07.local_vs_large_batch_h64"}
#: The large batch's rate grids: an H times larger batch wants a higher rate as H grows (6 at H = 16, 8 at H = 64 on
#: the chapter's budget, 9 on the registry's shorter one), each grid as fine near its best as the others'.
_LARGE_LRS = {LOCAL_H: local_sgd.LARGE_BATCH_LRS, 64: (5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0)}


def _about(x: float, spread: float) -> str:
    """``x`` (nats) quoted no finer than ``spread``: to the decimal place of the spread's first digit.

    >>> _about(0.0012, 0.0007), _about(0.0106, 0.002), _about(0.0106, 0.0)
    ('0.001', '0.011', '0.011')
    """
    places = 3 if spread <= 0 else max(0, -math.floor(math.log10(spread)))
    places = min(places, 3)
    return f"{abs(x):.{places}f}"


#: The median absolute deviation times this is the standard deviation of normal noise.
_MAD_SCALE = 1.4826


def paired_gaps(v: claims.Verdict) -> tuple[float, ...]:
    """The runner-up's value minus the winner's, seed by seed (> 0 where the winner leads), in the claim's metric."""
    sign = 1.0 if v.claim.lower_is_better else -1.0
    return tuple(sign * (b - a) for a, b in zip(v.best[v.winner].values, v.best[v.runner_up].values))


def median_spread(gaps) -> tuple[float, float]:
    """The median of ``gaps`` and their robust spread, 1.4826 median absolute deviations: the standard deviation for
    normal noise, but hardly moved by one outlying seed (one on which a contender's tuned rate nearly diverges widens
    the standard deviation of five gaps several-fold, and this not at all).

    >>> m, s = median_spread((0.0283, 0.0061, 0.0061, 0.0052, 0.0034))   # one seed far out
    >>> round(m, 4), round(s, 4), round(statistics.stdev((0.0283, 0.0061, 0.0061, 0.0052, 0.0034)), 4)
    (0.0061, 0.0013, 0.0104)
    """
    gaps = tuple(gaps)
    if not gaps:
        raise ValueError("gaps must not be empty")
    med = statistics.median(gaps)
    return med, _MAD_SCALE * statistics.median(abs(g - med) for g in gaps)


def seed_noise(v: claims.Verdict) -> float:
    """How far one contender's best run moves from seed to seed: the larger of the winner's and the runner-up's robust
    spreads (:func:`median_spread` of their values over the seeds)."""
    return max(median_spread(v.best[name].values)[1] for name in (v.winner, v.runner_up))


def large_outcome(v: claims.Verdict) -> str:
    """How local SGD ends against its large-batch control: as :func:`local_outcome`, but a lead whose median gap
    (:func:`paired_gaps`) is no more than twice the runs' own seed-to-seed noise (:func:`seed_noise`) is ``"ends
    level with or just below"``: a lead one pair of runs could not show (other seeds may call it level).

    Medians and robust spreads, so that one seed on which the control's tuned rate nearly diverges can neither widen
    the noise nor swell the lead; the gaps' own spread is no yardstick, as a lead that is large on every seed may
    still vary widely from seed to seed."""
    outcome = local_outcome(v)
    med, _ = median_spread(paired_gaps(v))
    if outcome != "ends level with" and abs(med) <= 2 * seed_noise(v):
        return outcome.replace("ends ", "ends level with or just ")
    return outcome


def _ahead(v: claims.Verdict) -> str:
    """On how many seeds the winner of a local-SGD claim leads, as the verdict table says it, after a sentence whose
    subject is local SGD: ``"ahead on every seed"``, ``"the larger batch ahead on 4 of 5 seeds"``."""
    seeds = "every seed" if v.unanimous else f"{v.wins} of {v.seeds} seeds"
    return f"ahead on {seeds}" if v.winner.startswith("local") else f"the larger batch ahead on {seeds}"


def _large_batch_claim(h: int):
    key = LARGE_BATCH_KEYS[h]

    def build(small: bool = False) -> claims.Claim:
        rival = f"synchronous SGD with a {h} times larger batch"

        def wording(v: claims.Verdict) -> str:
            full = f"{rival} (the same bytes per sample and syncs, its rate tuned)"
            outcome = large_outcome(v)
            if outcome == "ends level with":
                return (f"local SGD with H = {h} ends level with {full}: {v.winner.split(',')[0]} lower by "
                        f"{abs(v.margin):.3f} nats (spread {v.spread:.3f}) on average, in {v.wins} of {v.seeds} seeds")
            at = f"at the {v.claim.shared['budget']:g} s budget, local SGD with H = {h} {outcome} {full} by "
            rest = f"in {v.wins} of {v.seeds} seeds (a ranking run at this budget only: it is not carried to others)"
            if outcome != local_outcome(v):
                return (f"{at}about {_about(v.margin, v.spread)} nats (spread {v.spread:.3f}), less than twice the "
                        f"{seed_noise(v):.3f} nats a best run moves from seed to seed, {rest}")
            gaps = paired_gaps(v)
            med, spread = median_spread(gaps)
            return (f"{at}a median of {_about(med, spread)} nats over the seeds, more than twice the "
                    f"{seed_noise(v):.3f} nats a best run moves from seed to seed (1.48 median absolute deviations); "
                    f"the mean gap is {v.margin:.3f} nats, spread {v.spread:.3f}, the gaps {min(gaps):.3f} to "
                    f"{max(gaps):.3f}; the lead holds {rest}")

        def headline(v: claims.Verdict) -> str:
            outcome = large_outcome(v)
            if outcome != local_outcome(v):   # a lead on the seeds, but within the runs' noise: say both
                by = f": {_ahead(v)}, but by about {_about(v.margin, v.spread)} nats, less than twice the seed-to-seed noise"
                return f"with H = {h}, local SGD {outcome} synchronous SGD with an H times larger batch at this budget{by}"
            else:
                med, spread = median_spread(paired_gaps(v))
                seeds = "on every seed" if v.unanimous else f"on {v.wins} of {v.seeds} seeds"
                by = f" {seeds} (by a median of about {_about(med, spread)} nats)"
            return f"with H = {h}, local SGD {outcome} synchronous SGD with an H times larger batch{by}, at this budget"
        return claims.Claim(
            key, f"At an equal wall-clock budget, does local SGD with H = {h} end lower than synchronous SGD with a "
            f"{h} times larger batch?",
            (claims.Contender(f"local SGD, H = {h}", _local("average"), {"lr": local_sgd.LRS},
                              uses="4 workers, batch 16, H local steps between averages"),
             claims.Contender("large-batch synchronous SGD", _large, {"lr": _LARGE_LRS[h]},
                              uses=f"4 workers, batch {16 * h}, one all-reduce a step, each step as long as "
                                   f"{h} local steps (the sum of {h} random step times)")),
            metric="final loss (nats)", seeds=LOCAL_SEEDS, shared={"h": h, "budget": 0.2 if small else LOCAL_BUDGET},
            wording=wording, chapter="07", source="commlib.today.local_sgd.large_batch", headline=headline)
    return build


for _h in LARGE_BATCH_KEYS:
    claims.register(LARGE_BATCH_KEYS[_h])(_large_batch_claim(_h))


def _shares(large: claims.Verdict, sync: claims.Verdict) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    local = next(b for name, b in large.best.items() if name.startswith("local"))
    if large.claim.seeds != sync.claim.seeds:
        raise ValueError("large and sync must be run on the same seeds")
    return sync.best["synchronous SGD"].values, large.best["large-batch synchronous SGD"].values, local.values


def large_share(large: claims.Verdict, sync: claims.Verdict, seeds: slice = slice(None)) -> float:
    """How much of local SGD's gain over synchronous SGD the large batch gets back, from the seeds' means (those of
    ``seeds``, a slice of the claim's seeds; all by default): 0 at synchronous SGD's loss (``sync``, a claim of
    :data:`LOCAL_SETTINGS` on the same setting and seeds), 1 at local SGD's."""
    base, big, local = (statistics.fmean(x[seeds]) for x in _shares(large, sync))
    return (base - big) / (base - local)


def large_shares_by_seed(large: claims.Verdict, sync: claims.Verdict) -> tuple[float, ...]:
    """:func:`large_share` seed by seed: how widely it moves (one seed's tuned rate may nearly diverge)."""
    return tuple((s - b) / (s - loc) for s, b, loc in zip(*_shares(large, sync)))


def large_share_median(large: claims.Verdict, sync: claims.Verdict) -> float:
    """:func:`large_share` on the median seed (:func:`large_shares_by_seed`): one seed on which the control's tuned
    rate nearly diverges pulls the mean of the seeds' losses, not this."""
    return statistics.median(large_shares_by_seed(large, sync))


def large_share_range(large: claims.Verdict, sync: claims.Verdict) -> tuple[float, float]:
    """The large batch's share as a (low, high) range no finer than it moves over the seeds: the lowest and highest of
    the share from all the seeds' means (:func:`large_share`, the statistic its rate is tuned by), on the median seed
    (:func:`large_share_median`) and from the means of each half of the seeds (two sets of five of the ten). Where one
    seed's tuned rate nearly diverges these part, and the share is quoted no finer than the range between them."""
    n = len(large.claim.scored_seeds)
    halves = (slice(None, n // 2), slice(n // 2, None)) if n >= 10 else ()
    shares = (large_share(large, sync), large_share_median(large, sync), *(large_share(large, sync, h) for h in halves))
    return min(shares), max(shares)


def _lo_hi(share) -> tuple[float, float]:
    """A share as a (low, high) range: a number is a range of width zero."""
    lo, hi = (share, share) if isinstance(share, (int, float)) else share
    if lo > hi:
        raise ValueError(f"share's range must be (low, high), got {share!r}")
    return lo, hi


def _amount(share: float) -> str:
    """A share of a gain in words no finer than it moves between sets of seeds (at H = 64 from 0.53 on seeds 0-4 to
    0.64 on seeds 5-14): most (0.8 or more), part, little, none."""
    if share >= 0.8:
        return "most"
    if share > 0.2:
        return "only part"
    return "little" if share > 0 else "none"


def large_gain_words(shares: dict[int, float]) -> dict[str, str]:
    """The chapter's words on where local SGD's gain comes from, from the large batch's share of it at each H
    (:func:`large_share`, at the chapter's budget): ``"most"``, how much of the gain the control gets (a phrase after
    "gets"); ``"why"``, what pays for it; ``"so"``, the conclusion, a sentence.

    >>> w = large_gain_words({16: 0.94, 64: 0.53})
    >>> w["most"]
    'at H = 16 most of that gain, at H = 64 only part of it'
    >>> w["why"]
    'what pays is more samples per synchronisation at H = 16, the many small steps between syncs as well at H = 64'
    >>> large_gain_words({16: 0.94, 64: 0.85})["most"]
    'most of that gain at H = 16 and 64'
    """
    hs = sorted(shares)
    amount = {h: _amount(shares[h]) for h in hs}
    if len(set(amount.values())) == 1:
        most = f"{amount[hs[0]]} of that gain at H = " + " and ".join(map(str, hs))
        if amount[hs[0]] == "most":
            why = "what pays is more samples per synchronisation, not the many small steps between syncs"
            so = ("So, at both H, most of local SGD's gain comes from taking more samples per synchronisation, which "
                  "the larger synchronous batch takes too, not from the many small steps between syncs.")
            return {"most": most, "why": why, "so": so}
    else:
        most = ", ".join(f"at H = {h} {amount[h]} of " + ("that gain" if i == 0 else "it") for i, h in enumerate(hs))
    few = [h for h in hs if amount[h] == "most"]
    many = [h for h in hs if amount[h] != "most"]
    steps = "the many small steps between syncs" + (" as well" if few else "")
    why = ((f"what pays is more samples per synchronisation at H = {' and '.join(map(str, few))}, " if few else
            "what pays is more samples per synchronisation and ") + f"{steps} at H = {' and '.join(map(str, many))}")
    where = " and ".join(map(str, many))
    if few:
        so = (f"So at H = {' and '.join(map(str, few))} most of local SGD's gain comes from taking more samples per "
              "synchronisation, which the larger synchronous batch takes too; at H = " + where
              + (", where syncs are rarer still," if min(many) > max(few) else "")
              + " the many small steps between syncs add the rest.")
    else:
        so = (f"So at H = {where} the larger batch gets {amount[hs[0]] if len(hs) == 1 else 'only part'} of local SGD's "
              "gain; the many small steps between syncs add the rest.")
    return {"most": most, "why": why, "so": so}


def large_summary(shares: dict[int, float | tuple[float, float]]) -> dict[str, str]:
    """The chapter's summary of where local SGD's gain comes from on its problem, from the large batch's share of it
    at each H, a number or a (low, high) range (:func:`large_share_range`: the seeds' mean and the median seed, which
    part where one seed's tuned rate nearly diverges; the low end decides the words on the gain, H by H where they
    differ, :func:`_gain_amount`): ``"way"``,
    how far the control gets at each H (a phrase after "gets"); ``"rest"``, what pays for the gain, a clause
    that says no more than these runs (this problem, these H).

    >>> w = large_summary({16: 0.93, 64: 0.71})
    >>> w["way"]
    "about nine tenths of the way from synchronous SGD's loss to local SGD's at H = 16 and about seven tenths of the way at H = 64"
    >>> w["rest"]
    'on this problem more samples per synchronisation pay for most of the gain, and the many small steps between syncs add the rest'
    >>> import textwrap
    >>> print(textwrap.fill(large_summary({16: 1.02, 64: 0.4})["rest"], 100))
    on this problem more samples per synchronisation pay for all of the gain at H = 16 and part of it at
    H = 64, where the many small steps between syncs add the rest
    >>> print(textwrap.fill(large_summary({16: (0.93, 0.94), 64: (0.54, 0.71)})["rest"], 100))
    on this problem more samples per synchronisation pay for most of the gain at H = 16 and about half
    or more of it at H = 64, and the many small steps between syncs add the rest
    >>> large_summary({16: -0.1})["rest"]
    'on this problem the many small steps between syncs pay for all of the gain'
    """
    if not shares:
        raise ValueError("shares must not be empty")
    hs = sorted(shares)
    ways = [way_range_words(shares[h]) + f" at H = {h}" for h in hs]
    ways[0] = ways[0].replace(" at H", " from synchronous SGD's loss to local SGD's at H", 1)
    way = " and ".join(ways)
    shares = {h: _lo_hi(shares[h]) for h in hs}   # a range's low end decides the words on the gain
    if all(shares[h][1] <= 0 for h in hs):
        return {"way": way, "rest": "on this problem the many small steps between syncs pay for all of the gain"}
    whole = [h for h in hs if shares[h][0] >= 1]
    part = [h for h in hs if shares[h][0] < 1]
    if not part:
        return {"way": way, "rest": "on this problem more samples per synchronisation pay for all of the gain"}
    amount = {h: _gain_amount(*shares[h]) for h in part}
    if len(set(amount.values())) == 1:
        each = f"{amount[part[0]]} of " + ("the gain" if not whole else "it at H = " + " and ".join(map(str, part)))
    else:
        each = " and ".join(f"{amount[h]} of {'the gain' if i == 0 and not whole else 'it'} at H = {h}"
                            for i, h in enumerate(part))
    if not whole:
        rest = (f"on this problem more samples per synchronisation pay for {each}, and the many small "
                "steps between syncs add the rest")
    else:
        rest = (f"on this problem more samples per synchronisation pay for all of the gain at H = "
                f"{' and '.join(map(str, whole))} and {each}, where the many small steps between "
                "syncs add the rest")
    return {"way": way, "rest": rest}


def _gain_amount(lo: float, hi: float) -> str:
    """How much of a gain a share between ``lo`` and ``hi`` (below 1) pays for, in words no finer than tenths
    (:func:`way_words`) and no broader than the range's low end: ``"most"`` where the low end is six tenths or more,
    ``"about half or more"`` where it is about half and the high end above, ``"about half"`` where both are,
    ``"part"`` below.

    >>> _gain_amount(0.93, 0.94), _gain_amount(0.54, 0.71), _gain_amount(0.52, 0.53), _gain_amount(0.3, 0.6)
    ('most', 'about half or more', 'about half', 'part')
    """
    tenths = math.floor(10 * lo + 0.5)
    if tenths >= 6:
        return "most"
    if tenths == 5:
        return "about half" if way_words(hi) == way_words(lo) else "about half or more"
    return "part"


def _local_at(h: int):
    """Plain averaging every ``h`` steps (h = 1: synchronous SGD) on the shared budget."""
    return lambda s, seed: _local("average")({**s, "h": h}, seed)


#: The controls of local SGD against synchronous SGD: the chapter's setting (stragglers, a slow synchronisation),
#: the same without stragglers, and a fast synchronisation (a quarter of a step's compute) with stragglers.
LOCAL_SETTINGS = {
    "ch07.local_vs_sync": ("with stragglers and a slow synchronisation", {}),
    "ch07.local_vs_sync_no_stragglers": ("without stragglers, with a slow synchronisation", {"jitter": 0.0}),
    "ch07.local_vs_sync_fast_sync": ("with stragglers and a fast synchronisation",
                                     {"comm": local_sgd.COMPUTE / 4}),
}


#: The scope of every comparison in :data:`LOCAL_SETTINGS`: synchronous SGD keeps local SGD's batch of 16 a worker.
#: A lead measured so says nothing of a synchronous SGD whose batch is tuned too (:func:`batch_scope`).
SAME_BATCH = "against synchronous SGD at the same per-worker batch"


def local_outcome(v: claims.Verdict) -> str:
    """How local SGD ends against its rival in a local-SGD claim: ``"ends below"``, ``"ends above"`` or
    ``"ends level with"`` (the mean gap within three spreads and not the same way on every seed)."""
    if abs(v.margin) <= 3 * v.spread and not v.unanimous:
        return "ends level with"
    return "ends below" if v.winner.startswith("local") else "ends above"


def _local_sync(key: str):
    words, timing = LOCAL_SETTINGS[key]

    def build(small: bool = False) -> claims.Claim:
        def wording(v: claims.Verdict) -> str:
            comm = 1e3 * timing.get("comm", local_sgd.COMM)
            jitter = timing.get("jitter", local_sgd.JITTER)
            setting = (f"{words} ({comm:g} ms a sync against {local_sgd.COMPUTE * 1e3:g} ms of compute a step"
                       + (f", straggling by {100 * jitter:.0f} % on average)" if jitter else ", no straggling)"))
            if local_outcome(v) == "ends level with":
                return (f"{setting}, local SGD with H = {LOCAL_H} and synchronous SGD end level: "
                        f"{v.winner.split(',')[0]} lower by "
                        f"{abs(v.margin):.3f} nats on average (spread {v.spread:.3f}), in {v.wins} of {v.seeds} seeds")
            return (f"{setting}, local SGD with H = {LOCAL_H} {local_outcome(v)} synchronous SGD by {abs(v.margin):.3f} nats "
                    f"(spread {v.spread:.3f}), in {v.wins} of {v.seeds} seeds")

        def headline(v: claims.Verdict) -> str:
            return f"{words}, local SGD {local_outcome(v)} synchronous SGD"
        return claims.Claim(
            key, f"At an equal wall-clock budget, {words}, does local SGD with H = {LOCAL_H} end lower than "
            "synchronous SGD?",
            (claims.Contender(f"local SGD, H = {LOCAL_H}", _local_at(LOCAL_H), {"lr": local_sgd.LRS},
                              uses="4 workers, batch 16, H local steps between averages, inner rate tuned"),
             claims.Contender("synchronous SGD", _local_at(1), {"lr": local_sgd.SYNC_LRS},
                              uses="4 workers, batch 16, one all-reduce a step (H = 1), rate tuned")),
            metric="final loss (nats)", seeds=LOCAL_SEEDS if key == "ch07.local_vs_sync" else _SEEDS,
            shared={"budget": 0.2 if small else LOCAL_BUDGET, **timing},
            wording=wording, chapter="07", source="commlib.today.local_sgd.run", headline=headline)
    return build


for _key in LOCAL_SETTINGS:
    claims.register(_key)(_local_sync(_key))


def local_gap(v: claims.Verdict) -> float:
    """Local SGD's rival's mean final loss minus local SGD's, in a local-SGD claim (nats): > 0 where local SGD ends lower."""
    ours = next(name for name in v.best if name.startswith("local SGD"))
    rival = next(name for name in v.best if name != ours)
    return v.best[rival].mean - v.best[ours].mean


def _against(v: claims.Verdict, rival: str) -> str:
    """``"ends below synchronous SGD by 0.020 nats"``, or ``"ends level with it"``: local SGD against ``rival``."""
    outcome = local_outcome(v)
    return f"{outcome} {rival}" if outcome == "ends level with" else f"{outcome} {rival} by {abs(local_gap(v)):.3f} nats"


def race_cause(slow: claims.Verdict, plain: claims.Verdict, fast: claims.Verdict) -> str:
    """What the two controls of :data:`LOCAL_SETTINGS` say decides the race, from their verdicts: ``slow`` (the
    chapter's setting), ``plain`` (no stragglers) and ``fast`` (a fast synchronisation); ``""`` where they say nothing
    that clear.

    The slow synchronisation decides it where taking it away changes the outcome and taking the stragglers away does
    not; it makes most of the gap where local SGD ends below in all three settings, by less than half as much with the
    fast synchronisation, and by about as much (within three spreads) without stragglers.
    """
    outcome = [local_outcome(v) for v in (slow, plain, fast)]
    g_slow, g_plain, g_fast = (local_gap(v) for v in (slow, plain, fast))
    if outcome[0] == outcome[1] != outcome[2]:
        return "So on this problem the slow synchronisation, not the stragglers, decides the race."
    if (all(o == "ends below" for o in outcome) and g_fast < g_slow / 2
            and abs(g_plain - g_slow) <= 3 * max(slow.spread, plain.spread)):
        return (f"Local SGD ends lower in all three settings, but by {g_slow:.3f} nats with the slow synchronisation "
                f"against {g_fast:.3f} with the fast one, and by about as much without stragglers ({g_plain:.3f}): on "
                f"this problem, {SAME_BATCH}, the slow synchronisation makes most of the gap, the stragglers little "
                "of it.")
    return ""


_TENTHS = ("one tenth", "two tenths", "three tenths", "four tenths", "half", "six tenths", "seven tenths",
           "eight tenths", "nine tenths")


def way_words(share: float) -> str:
    """How far along a way ``share`` (0 to 1) lies, in tenths: a share that moves by several points from one set of
    seeds to another is quoted no finer.

    >>> way_words(0.947), way_words(0.5), way_words(0.97), way_words(1.2)
    ('about nine tenths of the way', 'about half the way', 'nearly all of the way', 'all of the way or beyond')
    """
    if not math.isfinite(share):
        raise ValueError(f"share must be finite, got {share!r}")
    if share <= 0:
        return "none of the way"
    if share >= 1:
        return "all of the way or beyond"
    tenths = math.floor(10 * share + 0.5)
    if tenths == 0:
        return "less than a tenth of the way"
    if tenths == 10:
        return "nearly all of the way"
    return f"about {_TENTHS[tenths - 1]} " + ("the way" if tenths == 5 else "of the way")


def way_range_words(share) -> str:
    """:func:`way_words` for a share or a (low, high) range of shares: one amount where both ends round alike, else
    both ends.

    >>> way_range_words((0.54, 0.71)), way_range_words((0.93, 0.94)), way_range_words(0.5)
    ('between about half and seven tenths of the way', 'about nine tenths of the way', 'about half the way')
    """
    lo, hi = _lo_hi(share)
    low, high = way_words(lo), way_words(hi)
    if low == high:
        return low
    return f"between {closes_words(lo)} and {closes_words(hi).removeprefix('about ')} of the way"


def closes_range_words(share) -> str:
    """:func:`closes_words` for a share or a (low, high) range of shares.

    >>> closes_range_words((0.54, 0.71)), closes_range_words((0.93, 0.94))
    ('between about half and seven tenths', 'about nine tenths')
    """
    lo, hi = _lo_hi(share)
    low, high = closes_words(lo), closes_words(hi)
    return low if low == high else f"between {low} and {high.removeprefix('about ')}"


def race_takeaway(slow: claims.Verdict, fast: claims.Verdict) -> str:
    """The chapter's takeaway on local SGD against synchronous SGD, from the verdicts with a slow and a fast sync: one
    line, no broader than the two sync costs run.

    Where local SGD ends below with the slow sync and, with the fast one, by less than half as much (or not below at
    all), the lesson is that here its lead depends mostly on the sync's cost; otherwise the two outcomes. Either way
    scoped to the rival these claims run, synchronous SGD at the same per-worker batch (:data:`SAME_BATCH`).
    """
    o_slow, o_fast = local_outcome(slow), local_outcome(fast)
    if o_slow == "ends below" and (o_fast != "ends below" or local_gap(fast) < local_gap(slow) / 2):
        fast_words = {"ends below": "small when they are fast", "ends level with": "none when they are fast",
                      "ends above": "reversed when they are fast"}[o_fast]
        return (f"Here, {SAME_BATCH}, local SGD's lead depends mostly on the sync's cost: large when syncs are "
                f"slow, {fast_words}")
    return (f"Here local SGD {_against(slow, 'synchronous SGD at the same per-worker batch')} when syncs are slow, and "
            f"{_against(fast, 'it')} when fast")


def batch_scope(slow: claims.Verdict, fast: claims.Verdict, large: claims.Verdict) -> str:
    """One sentence on local SGD's lead against the better of synchronous SGD's two batches, from the verdicts with a
    slow and a fast sync at the same batch and the larger-batch control (``large``, run with the slow sync only): what
    the :data:`SAME_BATCH` scope of :func:`race_takeaway` leaves out.

    Where the larger batch closes most of the slow sync's lead (the low end of :func:`large_share_range` above half)
    and the fast sync's lead at the same batch is already less than half the slow one's (or none), two sentences: one
    point, that at the same batch the lead is far larger with the slow sync than with the fast one (no trend claimed
    from two sync costs), then the scope note, that the larger batch closes most of the slow sync's lead and was run
    with the slow sync only.
    """
    h = large.claim.shared.get("h", LOCAL_H)
    lo, hi = large_share_range(large, slow)
    ran = "the chapter ran the larger batch only with the slow sync"
    fast_small = local_outcome(fast) != "ends below" or local_gap(fast) < local_gap(slow) / 2
    if lo > 0.5 and fast_small:
        fast_words = (f"than with the fast one ({local_gap(fast):.3f})" if local_outcome(fast) == "ends below"
                      else "than with the fast one, where it has none")
        return (f"{SAME_BATCH[0].upper()}{SAME_BATCH[1:]}, local SGD's lead is far larger with the slower of the two "
                f"sync costs run ({local_gap(slow):.3f} nats) {fast_words}. That rival's batch is not tuned: "
                f"a synchronous batch {h} times larger closes most of the slow sync's lead ({ran})")
    closes = closes_range_words((lo, hi))
    return (f"The {h} times larger batch closes {closes} of the slow sync's lead; {ran}, so what it would leave of "
            "the fast sync's lead is not known here")


def closes_words(share: float) -> str:
    """:func:`way_words` as an amount of a lead closed: ``"about nine tenths"``, ``"none"``, ``"all"``.

    >>> closes_words(0.93), closes_words(0.5), closes_words(1.2), closes_words(-0.1)
    ('about nine tenths', 'about half', 'all', 'none')
    """
    words = way_words(share)
    if words == "all of the way or beyond":
        return "all"
    return words.replace(" of the way", "").replace(" the way", "")


def large_short(shares: dict[int, float | tuple[float, float]]) -> str:
    """How much of local SGD's lead the larger batch closes at each H, in a few words (:func:`closes_range_words`:
    a share or a (low, high) range of shares).

    >>> large_short({16: 0.93, 64: 0.71})
    'about nine tenths at H = 16 and about seven tenths at H = 64'
    >>> large_short({16: (0.93, 0.94), 64: (0.54, 0.71)})
    'about nine tenths at H = 16 and between about half and seven tenths at H = 64'
    """
    if not shares:
        raise ValueError("shares must not be empty")
    return " and ".join(f"{closes_range_words(shares[h])} at H = {h}" for h in sorted(shares))


@dataclass(frozen=True)
class LocalRow:
    """One row of the chapter's local-SGD results: the setting, local SGD's lead over synchronous SGD (nats, the
    means over its claim's seeds; > 0 where local SGD ends lower), how much of it a larger synchronous batch closes (words, ``""``
    where that control was not run) and what the row says (a sentence chosen from the verdicts)."""
    setting: str
    lead: float
    closes: str
    meaning: str


def local_results(slow: claims.Verdict, plain: claims.Verdict, fast: claims.Verdict,
                  large: dict[int, claims.Verdict]) -> tuple[LocalRow, ...]:
    """The chapter's local-SGD results, one row a setting: the chapter's (``slow``: stragglers, a slow sync), without
    stragglers (``plain``), with a fast sync (``fast``), each at H = :data:`LOCAL_H`, and the chapter's setting at every
    other H of ``large`` (the large-batch verdicts by H, :data:`LARGE_BATCH_KEYS`, run on ``slow``'s seeds).

    The share the larger batch closes is quoted as the range over the seeds' mean, the median seed and each half of
    the seeds (:func:`large_share_range`: one seed on which its tuned rate nearly diverges pulls the mean, not the
    median, and five seeds hold that seed or not), its
    amount taken from the low end; another H closes less than the chapter's H where its whole range lies below
    (each half of the seeds among its ends). Each sentence says no more than its row and the chapter's row.
    """
    g_slow, g_plain, g_fast = (local_gap(v) for v in (slow, plain, fast))
    sync_mean = slow.best["synchronous SGD"].mean
    rows = []
    for h in sorted(large):
        v = large[h]
        lo, hi = large_share_range(v, slow)
        closes = closes_range_words((lo, hi))
        amount = _amount(lo)
        local_mean = next(b for name, b in v.best.items() if name.startswith("local")).mean
        by_seed = large_shares_by_seed(v, slow)
        if h == LOCAL_H:
            setting = f"H = {h}, slow sync, stragglers (the chapter's setting)"
            meaning = (f"A {h} times larger synchronous batch closes {closes} of the lead: {amount} of it is more samples "
                       "per synchronisation")
            if large_outcome(v) != local_outcome(v):
                meaning += f" (local SGD still {_ahead(v)}, by less than twice the seed-to-seed noise)"
        else:
            setting = f"H = {h}, slow sync, stragglers"
            base = large[LOCAL_H] if LOCAL_H in large else v
            b_lo, b_hi = large_share_range(base, slow)
            less = hi < b_lo     # each end, each half's share among them, below the chapter's H's lowest
            halves = ", on each half of the seeds as well" if len(by_seed) >= 10 else ""
            than = f"less{halves}" if less else "more" if lo > b_hi else "about as much"
            meaning = (f"With rarer syncs the larger batch closes {than}"
                       + (": the many small steps between syncs add more of the lead" if less else "")
                       + (f" (on {sum(x < 0 for x in by_seed)} of {len(by_seed)} seeds it ends above synchronous SGD)"
                          if min(by_seed) < 0 else ""))
        rows.append(LocalRow(setting, sync_mean - local_mean, closes, meaning + "."))
    if abs(g_plain - g_slow) <= 3 * max(slow.spread, plain.spread):
        plain_words = "About the same lead without stragglers: they make little of it."
    else:
        plain_words = ("A smaller lead without stragglers: they make part of it." if g_plain < g_slow else
                       "A larger lead without stragglers: they narrow it.")
    if local_outcome(fast) != "ends below" or g_fast < g_slow / 2:
        fast_words = (f"A fast sync leaves far less lead {SAME_BATCH}: the slow sync makes most of that lead "
                      "(the larger batch was run with the slow sync only).")
    else:
        fast_words = f"About as large a lead with a fast sync, {SAME_BATCH}: the sync's cost makes little of it."
    rows[1:1] = [LocalRow(f"H = {LOCAL_H}, slow sync, no stragglers", g_plain, "", plain_words),
                 LocalRow(f"H = {LOCAL_H}, fast sync, stragglers", g_fast, "", fast_words)]
    return tuple(rows)
