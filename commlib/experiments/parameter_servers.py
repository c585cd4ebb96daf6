"""Experiments of chapter 3: the parameter server against all-reduce, with the network cards each side uses.

Every claim here states its hardware: a parameter server with k separate server machines uses n + k
network cards, an all-reduce among the n workers n. "Same cards" gives the all-reduce's workers the
servers' cards as extra rails (:func:`commlib.parameter_servers.cost.allreduce_on_same_cards`).
"""

from __future__ import annotations

from .. import hardware
from ..parameter_servers import cost as ps_cost
from . import claims

__all__ = ["ps_extra_machines_claim", "ps_same_cards_claim", "ps_small_message_claim", "byteps_one_spare_claim"]

#: The chapter's running example: BERT-Large's fp32 gradient, 8 workers, 100 Gb/s Ethernet everywhere.
EXAMPLE = {"model": "bert_large", "dtype": "fp32", "n": 8, "link": "eth_100g"}


def _example() -> dict:
    return {"nbytes": hardware.gradient_bytes(EXAMPLE["model"], EXAMPLE["dtype"]), "n": EXAMPLE["n"],
            "bandwidth": hardware.link(EXAMPLE["link"]).bandwidth}


def _ps(servers_per_worker: int, latency: bool = False):
    def run(s, seed):
        return 1e3 * ps_cost.round_time(s["nbytes"], s["n"], s["bandwidth"], servers=servers_per_worker * s["n"],
                                        latency=s.get("latency", 0.0))
    return run


def _allreduce(cards_per_worker: int):
    def run(s, seed):
        return 1e3 * ps_cost.cost.allreduce_time(s["nbytes"], s["n"], cards_per_worker * s["bandwidth"],
                                                 s.get("latency", 0.0), algorithm=s["algorithm"])
    return run


def _ratio_words(v: claims.Verdict) -> str:
    a, b = v.best[v.winner].mean, v.best[v.runner_up].mean
    return f"{b / a:.2f} times faster"


@claims.register("ch03.ps_extra_machines")
def ps_extra_machines_claim(small: bool = False) -> claims.Claim:
    """BytePS's claim as it stands: k = n separate servers (2n cards) against the ring on the n workers' cards."""
    ps = claims.Contender("parameter server", _ps(1), uses="n workers + k = n server machines: 2n cards")
    ring = claims.Contender("all-reduce", _allreduce(1), {"algorithm": ("ring", "halving_doubling")},
                            uses="the n workers' n cards")

    def wording(v: claims.Verdict) -> str:
        return f"the {v.winner} is {_ratio_words(v)}, on {'twice' if v.winner == 'parameter server' else 'half'} the cards"

    return claims.Claim("ch03.ps_extra_machines", "With k = n extra server machines, does the PS beat all-reduce?",
                        (ps, ring), metric="ms per round (bandwidth terms)", seeds=(0,), shared=_example(),
                        wording=wording, chapter="03_parameter_servers",
                        source="round_time against allreduce_time; deterministic")


@claims.register("ch03.ps_same_cards")
def ps_same_cards_claim(small: bool = False) -> claims.Claim:
    """The PS with k = n separate servers against all-reduce given the same 2n cards (two per worker)."""
    ps = claims.Contender("parameter server", _ps(1), uses="n workers + k = n server machines: 2n cards")
    ring = claims.Contender("all-reduce", _allreduce(2), {"algorithm": ("ring", "halving_doubling")},
                            uses="the same 2n cards: two per worker, one ring per card")

    def wording(v: claims.Verdict) -> str:
        return f"on the same cards the {v.winner} is {_ratio_words(v)}"

    return claims.Claim("ch03.ps_same_cards", "Given the same network cards, does the PS beat all-reduce?",
                        (ps, ring), metric="ms per round (bandwidth terms)", seeds=(0,), shared=_example(),
                        wording=wording, chapter="03_parameter_servers",
                        source="round_time against allreduce_on_same_cards; deterministic")


@claims.register("ch03.ps_small_message")
def ps_small_message_claim(small: bool = False) -> claims.Claim:
    """A 1 MB gradient on 32 workers, 25 Gb/s: the PS (k = n, one message at a time per card) against the best
    all-reduce on the same 2n cards."""
    link = hardware.link("eth_25g")
    shared = {"nbytes": 1e6, "n": 32, "bandwidth": link.bandwidth, "latency": link.latency}
    ps = claims.Contender("parameter server", _ps(1, latency=True),
                          uses="32 workers + 32 servers: 64 cards, one-port, its best number of pieces per shard")
    allreduce = claims.Contender("all-reduce", _allreduce(2), {"algorithm": ("ring", "halving_doubling")},
                                 uses="the same 64 cards: two per worker")

    def wording(v: claims.Verdict) -> str:
        best = v.best["all-reduce"]
        # the one-port count charges every start-up serially; with alpha once per stage (no per-message overhead)
        low = 1e3 * ps_cost.round_time(shared["nbytes"], shared["n"], shared["bandwidth"], servers=shared["n"],
                                       latency=shared["latency"], overhead=0.0)
        lead = (f"the all-reduce still leads, {best.mean:.2f} against {low:.2f} ms" if best.mean < low
                else f"the parameter server leads, {low:.2f} against {best.mean:.2f} ms")
        return (f"on the same 64 cards the best all-reduce ({best.config['algorithm'].replace('_', '-')}) takes "
                f"{best.mean:.2f} ms against the parameter server's {v.best['parameter server'].mean:.2f} ms when every "
                f"start-up is per-message overhead, paid one after another on the card: the {v.winner} is "
                f"{_ratio_words(v)} under that count. The margin shrinks as less of α is per-message overhead: "
                f"with α paid once per stage, {lead}")

    return claims.Claim("ch03.ps_small_message", "For a 1 MB gradient on 32 workers, on the same cards, PS or all-reduce?",
                        (ps, allreduce), metric="ms per round, start-ups counted", seeds=(0,), shared=shared,
                        wording=wording, chapter="03_parameter_servers",
                        source="round_time (one-port, best pieces per shard) against allreduce_time on 2B; deterministic")


@claims.register("ch03.byteps_one_spare")
def byteps_one_spare_claim(small: bool = False) -> claims.Claim:
    """BytePS with a single spare CPU machine (n + 1 cards) against the best all-reduce on the n workers' cards,
    and against the all-reduce given the same n + 1 cards."""
    def byteps(s, seed):
        return 1e3 * ps_cost.byteps_time(s["nbytes"], s["n"], 1, s["bandwidth"])

    def same_cards(s, seed):
        return 1e3 * ps_cost.allreduce_on_same_cards(s["nbytes"], s["n"], 1, s["bandwidth"], latency=0.0,
                                                     algorithm=s["algorithm"])

    bps = claims.Contender("BytePS", byteps, uses="n GPU machines + one spare CPU machine: n + 1 cards")
    allreduce = claims.Contender("all-reduce", _allreduce(1), {"algorithm": ("ring", "halving_doubling")},
                                 uses="the n workers' n cards")
    same = claims.Contender("all-reduce on the same cards", same_cards, {"algorithm": ("ring", "halving_doubling")},
                            uses="the same n + 1 cards: the spare card's bandwidth spread over the workers")

    def wording(v: claims.Verdict) -> str:
        b, few, both = (v.best[name].mean for name in ("BytePS", "all-reduce", "all-reduce on the same cards"))
        first = "faster than" if b < few else "no faster than"
        second = "faster than" if b < both else "slower than"
        joint = "and" if (b < few) == (b < both) else "but"
        return (f"with a single spare CPU machine BytePS takes {b:.0f} ms, {first} the best all-reduce on the workers' "
                f"cards ({few:.0f} ms, one card fewer) {joint} {second} the all-reduce given the same cards "
                f"({both:.0f} ms)")

    return claims.Claim("ch03.byteps_one_spare",
                        "Does one spare CPU machine let BytePS beat all-reduce, with one card more and on the same cards?",
                        (bps, allreduce, same), metric="ms per round (bandwidth terms)", seeds=(0,), shared=_example(),
                        wording=wording, chapter="03_parameter_servers",
                        source="byteps_time (Jiang et al. 2020, sec. 4.1) against allreduce_time and "
                               "allreduce_on_same_cards; deterministic")
