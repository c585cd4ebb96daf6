"""Chapter 7's comparisons as claims (:mod:`commlib.experiments.claims`), and the runs behind them.

Compression: the bytes each method sends per step and worker, at the chapter's n = 4 and at larger n
(top-k is all-gathered, its indices differing between workers, so its bytes grow with n; PowerSGD and
the control are all-reduced, and sign is summed in two phases, an all-to-all and an all-gather, like an
all-reduce), from :func:`commlib.today.compression.step_bytes`, deterministic (its five seeds give the
same bytes, enough for the registry's check where two methods tie); and
whether the book's problem can tell compressors apart, trained on five seeds, every contender at its
best learning rate from a grid whose best lies inside.

>>> v = claims.run(claims.claim("ch07.compressed_bytes_n64", small=True))
>>> v.winner, round(v.best["top-k"].mean / v.best["control"].mean, 1)
('PowerSGD', 6.4)
"""

from __future__ import annotations

from ..sgd import training
from ..today import compression
from . import claims

__all__ = ["BYTES_WORKERS", "NAMES", "TRAIN_LRS", "LOCAL_BUDGET", "LOCAL_H", "bytes_phrase"]

#: The numbers of workers the chapter quotes bytes at; n = 4 is the training runs' own.
BYTES_WORKERS = (4, 16, 64)
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
_STEPS = 300
#: Learning rates each compressor and the control are tuned over (the best, 0.5, lies inside for every method and seed).
TRAIN_LRS = (0.2, 0.5, 1.0)
_LRS = TRAIN_LRS


def _train(method: str, k: int = compression.DEFAULT_K):
    def run(s: dict, seed: int) -> float:
        return compression.train_compressed(method, s["lr"], steps=s["steps"], k=k, seed=seed).final_loss
    return run


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
    return claims.Claim(
        "ch07.topk_keep_fraction",
        "On the book's problem, does top-k keeping 10 % of the entries end lower than keeping 1 %?",
        (claims.Contender(f"keeping {many} ({many / dim:.0%})", _train("topk", many), {"lr": _LRS},
                          uses="4 workers, batch 32, error feedback, all-gathered fp32 values and int32 indices"),
         claims.Contender(f"keeping {few} ({few / dim:.0%})", _train("topk", few), {"lr": _LRS}, uses="the same")),
        metric="final loss (nats)", seeds=_SEEDS, shared={"steps": _STEPS}, wording=wording, chapter="07",
        source="commlib.today.compression.train_compressed")


@claims.register("ch07.topk_one_entry")
def _one(small: bool = False) -> claims.Claim:
    def wording(v: claims.Verdict) -> str:
        ctrl, one = v.best["control"], v.best["top-k keeping 1"]
        return (f"keeping a single entry falls behind: {one.mean:.3f} nats at its best rate ({one.config['lr']:g}) "
                f"against the control's {ctrl.mean:.3f}, in {v.wins} of {v.seeds} seeds")
    return claims.Claim(
        "ch07.topk_one_entry", "On the book's problem, does top-k keeping one entry reach the uncompressed control?",
        (claims.Contender("control", _train("none"), {"lr": _LRS}, uses="4 workers, batch 32, ring all-reduce, fp32"),
         claims.Contender("top-k keeping 1", _train("topk", 1), {"lr": (0.1, 0.2, 0.5)},
                          uses="the same workers and steps, error feedback, all-gathered")),
        metric="final loss (nats)", seeds=_SEEDS, shared={"steps": _STEPS}, wording=wording, chapter="07",
        source="commlib.today.compression.train_compressed")


# Communicating less often: DiLoCo's outer optimizer tuned, and local SGD against its usual control.
from ..today import local_sgd  # noqa: E402

#: The wall-clock budget (seconds) every local-SGD variant gets; H of the comparisons.
LOCAL_BUDGET = 0.5
LOCAL_H = 16
_DIL_GRID = {"lr": (0.1, 0.2, 0.5), "outer_lr": (0.3, 0.5, 0.7), "momentum": (0.5, 0.7, 0.9)}
#: The registry's quick rerun: a shorter budget, the momentum held at the full run's best.
_DIL_SMALL = {"lr": (0.1, 0.2, 0.5), "outer_lr": (0.5, 0.7, 1.0)}


def _local(outer: str):
    def run(s: dict, seed: int) -> float:
        cfg = {k: v for k, v in s.items() if k not in ("budget", "h") and (outer == "nesterov" or k == "lr")}
        rounds = local_sgd.equal_time_rounds(s["h"], s["budget"])
        return local_sgd.run(s["h"], rounds=rounds, outer=outer, seed=seed, record=False, **cfg).final_loss
    return run


def _large(s: dict, seed: int) -> float:
    return local_sgd.large_batch(s["h"], s["budget"], lrs=(s["lr"],), seed=seed, record=False).final_loss


@claims.register("ch07.diloco_vs_averaging")
def _diloco(small: bool = False) -> claims.Claim:
    def wording(v: claims.Verdict) -> str:
        dil = v.best["DiLoCo"]
        verb = "ends below" if v.winner == "DiLoCo" else "ends above"
        mom = dil.config.get("momentum", v.claim.shared.get("momentum"))
        return (f"DiLoCo, its outer rate ({dil.config['outer_lr']:g}), momentum ({mom:g}) and inner "
                f"rate ({dil.config['lr']:g}) tuned, {verb} plain averaging at H = {LOCAL_H} by {abs(v.margin):.3f} nats "
                f"(spread {v.spread:.3f}), in {v.wins} of {v.seeds} seeds")
    return claims.Claim(
        "ch07.diloco_vs_averaging", f"At H = {LOCAL_H} and an equal wall-clock budget, does DiLoCo's outer Nesterov "
        "step end lower than plain averaging?",
        (claims.Contender("DiLoCo", _local("nesterov"), _DIL_SMALL if small else _DIL_GRID,
                          uses="4 workers, batch 16, outer Nesterov momentum, inner, outer rate and momentum tuned"),
         claims.Contender("plain averaging", _local("average"), {"lr": local_sgd.LRS}, uses="the same, inner rate tuned")),
        metric="final loss (nats)", seeds=_SEEDS,
        shared={"h": LOCAL_H, "budget": 0.2, "momentum": 0.7} if small else {"h": LOCAL_H, "budget": LOCAL_BUDGET},
        wording=wording, chapter="07", source="commlib.today.local_sgd.run")


@claims.register("ch07.local_vs_large_batch")
def _large_batch(small: bool = False) -> claims.Claim:
    def wording(v: claims.Verdict) -> str:
        verb = "ends below" if v.winner.startswith("local") else "ends above"
        return (f"local SGD with H = {LOCAL_H} {verb} synchronous SGD with a {LOCAL_H} times larger batch (the same "
                f"bytes per sample and syncs, its rate tuned) by {abs(v.margin):.3f} nats (spread {v.spread:.3f}), in "
                f"{v.wins} of {v.seeds} seeds")
    return claims.Claim(
        "ch07.local_vs_large_batch", f"At an equal wall-clock budget, does local SGD with H = {LOCAL_H} end lower than "
        f"synchronous SGD with a {LOCAL_H} times larger batch?",
        (claims.Contender(f"local SGD, H = {LOCAL_H}", _local("average"), {"lr": local_sgd.LRS},
                          uses="4 workers, batch 16, H local steps between averages"),
         claims.Contender("large-batch synchronous SGD", _large, {"lr": local_sgd.LARGE_BATCH_LRS},
                          uses=f"4 workers, batch {16 * LOCAL_H}, one all-reduce a step")),
        metric="final loss (nats)", seeds=_SEEDS, shared={"h": LOCAL_H, "budget": 0.2 if small else LOCAL_BUDGET},
        wording=wording, chapter="07", source="commlib.today.local_sgd.large_batch")


def _local_at(h: int):
    """Plain averaging every ``h`` steps (h = 1: synchronous SGD) on the shared budget."""
    return lambda s, seed: _local("average")({**s, "h": h}, seed)


@claims.register("ch07.local_vs_sync")
def _local_sync(small: bool = False) -> claims.Claim:
    def wording(v: claims.Verdict) -> str:
        verb = "ends below" if v.winner.startswith("local") else "ends above"
        return (f"local SGD with H = {LOCAL_H} {verb} synchronous SGD by {abs(v.margin):.3f} nats (spread "
                f"{v.spread:.3f}), in {v.wins} of {v.seeds} seeds")
    return claims.Claim(
        "ch07.local_vs_sync", f"At an equal wall-clock budget and with stragglers, does local SGD with H = {LOCAL_H} "
        "end lower than synchronous SGD?",
        (claims.Contender(f"local SGD, H = {LOCAL_H}", _local_at(LOCAL_H), {"lr": local_sgd.LRS},
                          uses="4 workers, batch 16, H local steps between averages, inner rate tuned"),
         claims.Contender("synchronous SGD", _local_at(1), {"lr": local_sgd.LRS},
                          uses="4 workers, batch 16, one all-reduce a step (H = 1), rate tuned")),
        metric="final loss (nats)", seeds=_SEEDS, shared={"budget": 0.2 if small else LOCAL_BUDGET},
        wording=wording, chapter="07", source="commlib.today.local_sgd.run")
