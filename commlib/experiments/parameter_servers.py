"""Experiments of chapter 3: the parameter server against all-reduce, with the network cards each side uses.

Every claim here states its hardware: a parameter server with k separate server machines uses n + k
network cards, an all-reduce among the n workers n. "Same cards" gives the all-reduce's workers the
servers' cards as extra rails (:func:`commlib.parameter_servers.cost.allreduce_on_same_cards`).
"""

from __future__ import annotations

import math

from .. import hardware
from ..parameter_servers import cost as ps_cost
from . import claims

__all__ = ["ps_extra_machines_claim", "ps_same_cards_claim", "ps_small_message_claim", "ps_small_message_f0_claim",
           "ps_small_message_extra_claim", "ps_small_message_extra_8_claim", "byteps_one_spare_claim",
           "ps_fast_server_cards_claim",
           "sparse_gap_sentence", "ps_crossover_claim", "ps_crossover_32_claim", "crossover_size",
           "kstar_small_sentence", "kstar_startup_rows", "kstar_lead_percent", "alpha_scaling_sentence", "few_times_words",
           "crossover_multiples", "last_to_fall", "last_to_fall_words", "tied_allreduces", "tie_words",
           "fastest_tie_words", "fast_cards_rows", "fast_cards_words",
           "small_message_thresholds", "own_cards_sentence", "same_cards_sentence", "thresholds_sentence"]

#: The chapter's running example: BERT-Large's fp32 gradient, 8 workers, 100 Gb/s Ethernet everywhere.
EXAMPLE = {"model": "bert_large", "dtype": "fp32", "n": 8, "link": "eth_100g"}

#: Every all-reduce a parameter server is held against, each tried: chapter 2's flat ones and the direct one.
ALLREDUCES = {"algorithm": ps_cost.RIVALS}

#: The same on the parameter server's own n + k cards with k < n: its own schedule run among the workers too
#: (:data:`commlib.parameter_servers.cost.OWN_SCHEDULE`), an all-reduce on those cards.
SAME_CARDS_ALLREDUCES = {"algorithm": ps_cost.SAME_CARDS_RIVALS}


def _example() -> dict:
    return {"nbytes": hardware.gradient_bytes(EXAMPLE["model"], EXAMPLE["dtype"]), "n": EXAMPLE["n"],
            "bandwidth": hardware.link(EXAMPLE["link"]).bandwidth}


def _ps(servers_per_worker: int):
    """The PS with ``servers_per_worker`` x n separate servers, its best cut, under the shared latency and overhead."""
    def run(s, seed):
        return 1e3 * ps_cost.round_time(s["nbytes"], s["n"], s["bandwidth"], servers=servers_per_worker * s["n"],
                                        latency=s.get("latency", 0.0), overhead=s.get("overhead", 1.0))
    return run


def _allreduce(cards_per_worker: int):
    """An all-reduce of :data:`commlib.parameter_servers.cost.RIVALS` among the n workers, each with this many cards."""
    def run(s, seed):
        algorithm, lat, f = s.get("algorithm", "ring"), s.get("latency", 0.0), s.get("overhead", 1.0)
        if cards_per_worker == 1:
            return 1e3 * ps_cost.rival_time(s["nbytes"], s["n"], s["bandwidth"], lat, algorithm=algorithm, overhead=f)
        return 1e3 * ps_cost.allreduce_on_same_cards(s["nbytes"], s["n"], (cards_per_worker - 1) * s["n"],
                                                     s["bandwidth"], latency=lat, algorithm=algorithm, overhead=f)
    return run


def _ratio_words(v: claims.Verdict) -> str:
    a, b = v.best[v.winner].mean, v.best[v.runner_up].mean
    return f"{b / a:.2f} times faster"


def _algorithm(best: claims.Best) -> str:
    return ps_cost.rival_label(best.config["algorithm"])


def tied_allreduces(nbytes: float, n: int, bandwidth: float, latency: float, overhead: float = 1.0) -> list[str]:
    """Every all-reduce of :data:`commlib.parameter_servers.cost.RIVALS` that takes the fastest one's time
    (:func:`commlib.parameter_servers.cost.rival_time`, to a relative 1e-9), in the order of RIVALS.
    :func:`commlib.parameter_servers.cost.best_allreduce` names only the first of them.

    >>> tied_allreduces(1e6, 8, 3.125e9, 1e-5), tied_allreduces(1e6, 12, 3.125e9, 1e-5)
    (['halving_doubling', 'bruck'], ['bruck'])
    """
    best = ps_cost.best_allreduce(nbytes, n, bandwidth, latency, overhead)[1]
    out = []
    for name in ps_cost.RIVALS:
        try:
            t = ps_cost.rival_time(nbytes, n, bandwidth, latency, algorithm=name, overhead=overhead)
        except ValueError:     # an algorithm that does not run on n ranks
            continue
        if t <= best * (1 + 1e-9):
            out.append(name)
    return out


def tie_words(names) -> str:
    """All-reduces that take the same time, by the chapter's names: one name, or "a and b (tied)".

    >>> tie_words(["halving_doubling", "bruck"]), tie_words(["ring"])
    ("halving-doubling and Bruck's all-reduce (tied)", 'ring')
    """
    words = [_allreduce_name(a) for a in names]
    return words[0] if len(words) == 1 else " and ".join(words) + " (tied)"


@claims.register("ch03.ps_extra_machines")
def ps_extra_machines_claim(small: bool = False) -> claims.Claim:
    """BytePS's claim as it stands: k = n separate servers (2n cards) against the all-reduce on the n workers' cards."""
    ps = claims.Contender("parameter server", _ps(1), uses="n workers + k = n server machines: 2n cards")
    ring = claims.Contender("all-reduce", _allreduce(1), ALLREDUCES, uses="the n workers' n cards, its best algorithm")

    def wording(v: claims.Verdict) -> str:
        return f"the {v.winner} is {_ratio_words(v)}, on {'twice' if v.winner == 'parameter server' else 'half'} the cards"

    return claims.Claim("ch03.ps_extra_machines", "With k = n extra server machines, does the PS beat all-reduce?",
                        (ps, ring), metric="ms per round (bandwidth terms)", seeds=(0,), shared=_example(),
                        wording=wording, chapter="03_parameter_servers",
                        source="round_time against rival_time; deterministic")


@claims.register("ch03.ps_same_cards")
def ps_same_cards_claim(small: bool = False) -> claims.Claim:
    """The PS with k = n separate servers against all-reduce given the same 2n cards (two per worker)."""
    ps = claims.Contender("parameter server", _ps(1), uses="n workers + k = n server machines: 2n cards")
    ring = claims.Contender("all-reduce", _allreduce(2), ALLREDUCES,
                            uses="the same 2n cards: two per worker, its best algorithm")

    def wording(v: claims.Verdict) -> str:
        return f"on the same cards the {v.winner} is {_ratio_words(v)}"

    return claims.Claim("ch03.ps_same_cards", "Given the same network cards, does the PS beat all-reduce?",
                        (ps, ring), metric="ms per round (bandwidth terms)", seeds=(0,), shared=_example(),
                        wording=wording, chapter="03_parameter_servers",
                        source="round_time against allreduce_on_same_cards; deterministic")


def _small_shared(n: int, overhead: float) -> dict:
    link = hardware.link("eth_25g")
    return {"nbytes": 1e6, "n": n, "bandwidth": link.bandwidth, "latency": link.latency, "overhead": overhead}


def _f_words(f: float) -> str:
    """The share φ of α that holds the card for each message (``overhead``), in words."""
    if f == 1.0:
        return r"with every start-up per-message overhead, paid one after another on the card ($\varphi = 1$)"
    if f == 0.0:
        return r"with all of α latency in flight, holding no card ($\varphi = 0$)"
    return rf"with a share $\varphi = {f:g}$ of α paid per message on the card"


def _small_same_cards(key: str, overhead: float) -> claims.Claim:
    shared = _small_shared(32, overhead)
    n = shared["n"]
    ps = claims.Contender("parameter server", _ps(1),
                          uses=f"{n} workers + {n} servers: {2 * n} cards, one message at a time per card, "
                               "its best number of pieces per shard")
    allreduce = claims.Contender("all-reduce", _allreduce(2), ALLREDUCES,
                                 uses=f"the same {2 * n} cards: two per worker, its best algorithm and cut under the same φ")

    def wording(v: claims.Verdict) -> str:
        ar, ps_best = v.best["all-reduce"], v.best["parameter server"]
        who = (f"the fastest all-reduce on the same {2 * n} cards ({_algorithm(ar)}) takes {ar.mean:.2f} ms against "
               f"the parameter server's {ps_best.mean:.2f} ms" if v.winner == "all-reduce" else
               f"the parameter server takes {ps_best.mean:.2f} ms against {ar.mean:.2f} ms for the fastest all-reduce "
               f"on the same {2 * n} cards ({_algorithm(ar)})")
        close = ", a near-tie" if v.best[v.runner_up].mean < 1.05 * v.best[v.winner].mean else ""
        return f"{_f_words(overhead)}, {who}: the {v.winner} is {_ratio_words(v)}{close}"

    def headline(v: claims.Verdict) -> str:
        if not v.decided:
            return rf"at $\varphi = {overhead:g}$ the two are level"
        close = ", a near-tie" if v.best[v.runner_up].mean < 1.05 * v.best[v.winner].mean else ""
        return rf"at $\varphi = {overhead:g}$ the {v.winner} is faster{close}"

    return claims.Claim(key, f"For a 1 MB gradient on {n} workers, on the same cards, PS or all-reduce "
                             f"(φ = {overhead:g} of α per message)?",
                        (ps, allreduce), metric="ms per round, start-ups counted", seeds=(0,), shared=shared,
                        wording=wording, headline=headline, chapter="03_parameter_servers",
                        source="round_time (best pieces per shard) against allreduce_on_same_cards (every "
                               "algorithm at its best cut, the direct reduce-scatter/all-gather included), the same "
                               "φ; deterministic")


@claims.register("ch03.ps_small_message")
def ps_small_message_claim(small: bool = False) -> claims.Claim:
    """A 1 MB gradient on 32 workers, 25 Gb/s, one-port (φ = 1): the PS (k = n) against the best all-reduce on the
    same 2n cards."""
    return _small_same_cards("ch03.ps_small_message", 1.0)


@claims.register("ch03.ps_small_message_f0")
def ps_small_message_f0_claim(small: bool = False) -> claims.Claim:
    """The same with all of α latency in flight (φ = 0), where the PS and the all-reduces gain most."""
    return _small_same_cards("ch03.ps_small_message_f0", 0.0)


#: Server cards much faster than the workers' (16 times), a few servers, a small gradient, half of α per message.
FAST_SERVER_CARDS = {"n": 16, "servers": 3, "nbytes": 300e3, "overhead": 0.5,
                     "worker_link": "eth_25g", "server_link": "eth_400g"}


@claims.register("ch03.ps_fast_server_cards")
def ps_fast_server_cards_claim(small: bool = False) -> claims.Claim:
    """Server cards 16 times the workers': the PS (k = 3 of 16, start-ups counted, φ = 0.5) against every
    all-reduce this chapter counts, given the same cards (the direct one sends only the messages that carry bytes:
    its shares sit on the machines with a fast card, which makes it the PS's own schedule among the workers; that
    schedule, :data:`commlib.parameter_servers.cost.OWN_SCHEDULE`, is counted as well)."""
    c = FAST_SERVER_CARDS
    worker, server = hardware.link(c["worker_link"]), hardware.link(c["server_link"])
    shared = {"nbytes": c["nbytes"], "n": c["n"], "servers": c["servers"], "bandwidth": worker.bandwidth,
              "server_bandwidth": server.bandwidth, "latency": worker.latency, "overhead": c["overhead"]}

    def ps(s, seed):
        return 1e3 * ps_cost.round_time(s["nbytes"], s["n"], s["bandwidth"], servers=s["servers"],
                                        latency=s["latency"], server_bandwidth=s["server_bandwidth"],
                                        overhead=s["overhead"])

    def allreduce(s, seed):
        return 1e3 * ps_cost.allreduce_on_same_cards(s["nbytes"], s["n"], s["servers"], s["bandwidth"],
                                                     s["server_bandwidth"], latency=s["latency"],
                                                     algorithm=s["algorithm"], overhead=s["overhead"])

    def own_schedule(s):   # the PS's schedule among the workers, a shard on each machine that holds a fast card
        return 1e3 * ps_cost.colocated_on_fast_cards_time(s["nbytes"], s["n"], s["servers"], s["bandwidth"],
                                                          s["server_bandwidth"], latency=s["latency"],
                                                          overhead=s["overhead"])

    k = c["servers"]
    contenders = (claims.Contender("parameter server", ps,
                                   uses=f"{c['n']} workers + {k} faster server machines, its best number of pieces"),
                  claims.Contender("all-reduce", allreduce, SAME_CARDS_ALLREDUCES,
                                   uses=f"the same cards: the {k} server cards dealt to {k} of the workers, its best "
                                        "algorithm and cut under the same φ, the parameter server's own schedule "
                                        "among the workers included"))

    def wording(v: claims.Verdict) -> str:
        p, a = (v.best[name].mean for name in ("parameter server", "all-reduce"))
        o = own_schedule(shared)
        d = allreduce({**shared, "algorithm": ps_cost.DIRECT}, 0)
        alg = _algorithm(v.best["all-reduce"])
        first = (f"the fastest all-reduce the chapter counts on the same cards, the {alg}, takes {1e3 * a:.0f} µs "
                 f"against the parameter server's {1e3 * p:.0f} µs")
        if abs(p / a - 1) < 0.05:
            verdict = "a near-tie"
        elif a < p:
            verdict = f"the all-reduce {p / a:.2f} times faster"
        else:
            verdict = f"the parameter server {a / p:.2f} times faster"
        if abs(d / o - 1) < 0.02:
            direct = v.best["all-reduce"].config["algorithm"] == ps_cost.DIRECT
            whose = "its" if direct else "the direct reduce-scatter/all-gather's"
            same = (f"it is the parameter server's own schedule run among the workers ({1e3 * o:.0f} µs)" if direct else
                    "the same schedule")
            how = (f"{whose} shares sit only on the {k} machines with a fast card, so each worker sends its pieces to "
                   f"those {k} alone, and a worker that owns nothing is sent nothing: {same}, a shard on each machine "
                   "that holds a fast card")
        else:
            how = (f"the parameter server's own schedule run among the workers, a shard on each machine that holds a "
                   f"fast card, takes {1e3 * o:.0f} µs, the direct reduce-scatter/all-gather {1e3 * d:.0f} µs")
        return f"{first}, {verdict}: {how}"

    return claims.Claim("ch03.ps_fast_server_cards",
                        "With server cards 16 times the workers', does the PS beat every all-reduce counted on the "
                        "same cards (start-ups counted)?",
                        contenders, metric="ms per round, start-ups counted", seeds=(0,), shared=shared,
                        wording=wording, chapter="03_parameter_servers",
                        source="round_time (best pieces per shard, faster server cards) against "
                               "allreduce_on_same_cards (every algorithm at its best cut, the same φ; the direct one "
                               "sends only messages that carry bytes; the PS's own schedule among the workers, "
                               "colocated_on_fast_cards_time, included); deterministic")


#: One setting next to :data:`FAST_SERVER_CARDS`: a server machine more, a 1 MB gradient, every start-up per message.
FAST_CARDS_NEIGHBOUR = {**FAST_SERVER_CARDS, "servers": 4, "nbytes": 1e6, "overhead": 1.0}



def fast_cards_rows(settings=None) -> list[dict]:
    """The fast-server-cards claim's setting and its neighbour (:data:`FAST_SERVER_CARDS`,
    :data:`FAST_CARDS_NEIGHBOUR`), one dict each: server machines k, gradient (MB), share φ, and in µs the parameter
    server, the direct reduce-scatter/all-gather and the parameter server's own schedule among the workers on the
    same cards, with that schedule's best pieces per shard q. The direct one is its unpipelined form, the whole
    reduce-scatter and then the whole all-gather, one message per peer and stage
    (:func:`commlib.parameter_servers.cost.direct_in_sequence_on_same_cards`).

    >>> [(r["ps_us"], r["direct_us"], r["own_us"], r["pieces"]) for r in fast_cards_rows()]
    [(234.0, 232.0, 232.0, 1), (600.0, 720.0, 600.0, 2)]
    """
    rows = []
    for c in settings or (FAST_SERVER_CARDS, FAST_CARDS_NEIGHBOUR):
        worker, server = hardware.link(c["worker_link"]), hardware.link(c["server_link"])
        args = (c["nbytes"], c["n"], c["servers"], worker.bandwidth, server.bandwidth, worker.latency)
        f = c["overhead"]
        rows.append({
            "servers": c["servers"], "mb": c["nbytes"] / 1e6, "overhead": f,
            "ps_us": round(1e6 * ps_cost.round_time(c["nbytes"], c["n"], worker.bandwidth, servers=c["servers"],
                                                    latency=worker.latency, server_bandwidth=server.bandwidth,
                                                    overhead=f), 3),
            "direct_us": round(1e6 * ps_cost.direct_in_sequence_on_same_cards(*args, overhead=f), 3),
            "own_us": round(1e6 * ps_cost.colocated_on_fast_cards_time(*args, overhead=f), 3),
            "pieces": ps_cost.colocated_on_fast_cards_pieces(*args, overhead=f),
        })
    return rows


def fast_cards_words(rows) -> str:
    """Why the direct reduce-scatter/all-gather and the parameter server's own schedule among the workers take the
    same time in some rows of :func:`fast_cards_rows` and not in others, and where the parameter server stands, in
    words chosen from the numbers.

    >>> print(fast_cards_words(fast_cards_rows()))   # doctest: +NORMALIZE_WHITESPACE
    In the first row the own schedule's best cut is one piece per shard, the whole push and then the whole pull: that
    is the direct reduce-scatter/all-gather with its shares on the machines with a fast card, so the two take the same
    time. In the second row its best cut is 2 pieces per shard, the pull of one overlapping the push of the next; the
    direct one in the table is unpipelined, its two stages in sequence, so it is slower (pipelined piece by piece with
    those shares, it would be the own schedule). In neither row does the parameter server beat its own schedule on
    the same cards.
    """
    order = ["first", "second", "third"]
    out = []
    for i, r in enumerate(rows):
        where = f"In the {order[i] if i < len(order) else f'row {i + 1}'} row"
        if r["pieces"] == 1 and abs(r["direct_us"] - r["own_us"]) <= 1e-6 * r["own_us"]:
            out.append(f"{where} the own schedule's best cut is one piece per shard, the whole push and then the whole "
                       "pull: that is the direct reduce-scatter/all-gather with its shares on the machines with a fast "
                       "card, so the two take the same time")
        elif r["pieces"] and r["pieces"] > 1 and r["own_us"] < r["direct_us"]:
            out.append(f"{where} its best cut is {r['pieces']} pieces per shard, the pull of one overlapping the push "
                       "of the next; the direct one in the table is unpipelined, its two stages in sequence, so it is "
                       "slower (pipelined piece by piece with those shares, it would be the own schedule)")
        else:
            out.append(f"{where} the own schedule takes {r['own_us']:.0f} µs and the direct one {r['direct_us']:.0f} µs")
    beaten = [r["ps_us"] < r["own_us"] * (1 - 1e-9) for r in rows]
    tail = ("In neither row does the parameter server beat its own schedule on the same cards" if not any(beaten)
            else "The parameter server beats its own schedule on the same cards in "
            + " and ".join(f"row {i + 1}" for i, b in enumerate(beaten) if b))
    return ". ".join(out + [tail]) + "."


def sparse_gap_sentence(push: float, ns, bandwidth: float) -> str:
    """The sparse exercise's conclusion over the worker counts ``ns``, chosen from the numbers of
    :func:`commlib.parameter_servers.cost.sparse_exchange`: how the parameter server's lead over the all-gather and
    over the all-to-all on the workers' own cards moves with n, and who wins on the same 2n cards.

    >>> words = sparse_gap_sentence(1e6, (4, 64), 1e9).split(". ")
    >>> words[0]
    "Against the all-gather on the workers' own cards the parameter server's lead grows with n, from 3.0 times at n = 4 to 63.0 at n = 64"
    >>> words[1]
    'Against the all-to-all on those cards it stays between 1.50 and 1.97 times, below 2 at every n'
    >>> words[2]
    'On the same 2n cards the all-to-all is faster at every n.'
    """
    rows = [ps_cost.sparse_exchange(push, n, bandwidth) for n in ns]
    if len(rows) < 2:
        raise ValueError(f"ns must name at least two worker counts, got {tuple(ns)!r}")
    gather = [x.all_gather_over_ps for x in rows]
    a2a = [x.all_to_all_over_ps for x in rows]
    first, last = rows[0].n, rows[-1].n
    if all(b > a for a, b in zip(gather, gather[1:])):
        g = (f"Against the all-gather on the workers' own cards the parameter server's lead grows with n, from "
             f"{gather[0]:.1f} times at n = {first} to {gather[-1]:.1f} at n = {last}.")
    else:
        g = (f"Against the all-gather on the workers' own cards the parameter server's lead goes from "
             f"{gather[0]:.1f} times at n = {first} to {gather[-1]:.1f} at n = {last}.")
    bound = math.ceil(max(a2a))
    spread = f"between {min(a2a):.2f} and {max(a2a):.2f} times"
    a = (f"Against the all-to-all on those cards it stays {spread}, below {bound} at every n." if max(a2a) > 1 else
         f"Against the all-to-all on those cards the parameter server is not ahead ({spread}).")
    same = [x.all_to_all_same_cards < x.ps for x in rows]
    s = ("On the same 2n cards the all-to-all is faster at every n." if all(same) else
         "On the same 2n cards the parameter server is faster at every n." if not any(same) else
         "On the same 2n cards the winner depends on n.")
    return f"{g} {a} {s}"


def _bound(f: float | None) -> str:
    """A share φ threshold rounded down to two decimals, so that "below" it stays true; "no share" for None."""
    return "no share" if f is None else f"{math.floor(100 * f) / 100:.2f}"


def _gap(ps_ms: float, other_ms: float, name: str) -> str:
    """The parameter server against one all-reduce, in words: a near-tie within 5 %, else who is faster and by how much."""
    r = ps_ms / other_ms
    if abs(r - 1) < 0.05:
        return f"a near-tie with {name} ({r:.2f} times its time)"
    return f"{name} {r:.2f} times faster" if r > 1 else f"the parameter server {1 / r:.2f} times faster than {name}"


def small_message_thresholds(n: int) -> dict:
    """For the 1 MB gradient of the start-up section on n workers, PS with k = n separate servers: the shares φ
    below which it beats the ring (``f_ring``) and every all-reduce (``f_best``), rounded down (None: no share
    does), and the rounds at φ = 0 (ms): the PS's (``ps0_ms``, with its cut ``pieces``, None: ever more) and the
    fastest all-reduce's (``best0_ms``, by every algorithm in ``best0``)."""
    shared = _small_shared(n, 1.0)
    m, bw, lat = shared["nbytes"], shared["bandwidth"], shared["latency"]
    f_ring = ps_cost.overhead_to_beat(m, n, bw, lambda f: ps_cost.rival_time(m, n, bw, lat, "ring", overhead=f),
                                      servers=n, latency=lat)
    f_best = ps_cost.overhead_to_beat(m, n, bw, lambda f: ps_cost.best_allreduce(m, n, bw, lat, overhead=f)[1],
                                      servers=n, latency=lat)
    _, b0 = ps_cost.best_allreduce(m, n, bw, lat, overhead=0.0)
    return {"f_ring": f_ring, "f_best": f_best,
            "ps0_ms": 1e3 * ps_cost.round_time(m, n, bw, servers=n, latency=lat, overhead=0.0),
            "pieces": ps_cost.round_pieces(m, n, bw, servers=n, latency=lat, overhead=0.0),
            "best0_ms": 1e3 * b0,
            "best0": [ps_cost.rival_label(a) for a in ps_cost.RIVALS
                      if ps_cost.rival_time(m, n, bw, lat, a, overhead=0.0) <= b0 * (1 + 1e-9)]}


def _below(f: float | None, rival: str) -> str:
    return (f"beats {rival} at no share φ" if f is None else rf"beats {rival} once $\varphi$ is below {_bound(f)}")


def _small_extra(key: str, n: int) -> claims.Claim:
    shared = _small_shared(n, 1.0)
    ps = claims.Contender("parameter server", _ps(1),
                          uses=f"{n} workers + {n} servers: {2 * n} cards, one message at a time per card, "
                               "its best number of pieces per shard")
    ring = claims.Contender("ring", _allreduce(1), uses=f"the workers' {n} cards, its best cut under the same φ")
    allreduce = claims.Contender("fastest all-reduce", _allreduce(1), ALLREDUCES,
                                 uses=f"the workers' {n} cards, its best algorithm and cut under the same φ")

    def wording(v: claims.Verdict) -> str:
        p, r, b = (v.best[name].mean for name in ("parameter server", "ring", "fastest all-reduce"))
        alg = _algorithm(v.best["fastest all-reduce"])
        t = small_message_thresholds(n)
        tied = t["best0"]
        then = (f"the {tied[0]}" if len(tied) == 1 else
                f"the {', '.join(tied[:-1])} and {tied[-1]} alike")
        cut = "ever more pieces per shard" if t["pieces"] is None else f"{t['pieces']} pieces per shard"
        return (rf"counted one message at a time ($\varphi = 1$), the parameter server on {2 * n} cards takes {p:.2f} "
                f"ms, the ring on the workers' {n} cards {r:.2f} ms and the fastest all-reduce there, {alg}, {b:.2f} ms: "
                f"{_gap(p, r, 'the ring')}, {_gap(p, b, alg)}. With all of α latency in flight ($\\varphi = 0$) the "
                f"parameter server tends to {t['ps0_ms']:.2f} ms ({cut}), against {t['best0_ms']:.2f} ms for the fastest "
                f"all-reduce then, {then}, pieces hiding latency there too. It beats the ring (at its best "
                f"cut) once $\\varphi$ is below {_bound(t['f_ring'])}, and the fastest all-reduce at each $\\varphi$ once "
                f"$\\varphi$ is below {_bound(t['f_best'])}")

    def headline(v: claims.Verdict) -> str:
        t = small_message_thresholds(n)
        who = _algorithm(v.best[v.winner]) if v.winner == "fastest all-reduce" else f"the {v.winner}"
        lead = (f"one message at a time {who} is fastest" if v.decided else
                "one message at a time the contenders are level")
        return (f"{lead}; the parameter server {_below(t['f_ring'], 'the ring')} and "
                f"{_below(t['f_best'], 'every all-reduce')}")

    return claims.Claim(key, f"For a 1 MB gradient on {n} workers, does a PS with n extra server machines beat "
                             "all-reduce, and for what share φ of α per message?",
                        (ps, ring, allreduce), metric="ms per round, start-ups counted (φ = 1)", seeds=(0,),
                        shared=shared, wording=wording, headline=headline, chapter="03_parameter_servers",
                        source="round_time (best pieces per shard) against rival_time (every algorithm at its best "
                               "cut, the direct reduce-scatter/all-gather included); thresholds from overhead_to_beat "
                               "against the ring and against best_allreduce at each φ; deterministic")


@claims.register("ch03.ps_small_message_extra")
def ps_small_message_extra_claim(small: bool = False) -> claims.Claim:
    """A 1 MB gradient on 32 workers: the PS with 32 extra servers against the all-reduces on the workers' cards."""
    return _small_extra("ch03.ps_small_message_extra", 32)


@claims.register("ch03.ps_small_message_extra_8")
def ps_small_message_extra_8_claim(small: bool = False) -> claims.Claim:
    """The same on 8 workers."""
    return _small_extra("ch03.ps_small_message_extra_8", 8)


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
    allreduce = claims.Contender("all-reduce", _allreduce(1), ALLREDUCES, uses="the n workers' n cards")
    same = claims.Contender("all-reduce on the same cards", same_cards, ALLREDUCES,
                            uses="the same n + 1 cards: the spare card's bandwidth spread over the workers")

    def wording(v: claims.Verdict) -> str:
        b, few, both = (v.best[name].mean for name in ("BytePS", "all-reduce", "all-reduce on the same cards"))
        first = "faster than" if b < few else "no faster than"
        second = "faster than" if b < both else "slower than"
        joint = "and" if (b < few) == (b < both) else "but"
        return (f"with a single spare CPU machine BytePS takes {b:.0f} ms, {first} the best all-reduce on the workers' "
                f"cards ({few:.0f} ms, one card fewer) {joint} {second} the all-reduce given the same cards "
                f"({both:.0f} ms, the {_algorithm(v.best['all-reduce on the same cards'])})")

    return claims.Claim("ch03.byteps_one_spare",
                        "Does one spare CPU machine let BytePS beat all-reduce, with one card more and on the same cards?",
                        (bps, allreduce, same), metric="ms per round (bandwidth terms)", seeds=(0,), shared=_example(),
                        wording=wording, chapter="03_parameter_servers",
                        source="byteps_time (Jiang et al. 2020, sec. 4.1) against rival_time and "
                               "allreduce_on_same_cards; deterministic")



def _fastest(v: claims.Verdict) -> str:
    """The winner of a 1 MB verdict on the workers' own cards, as the chapter names it."""
    if not v.decided:
        return "no contender"
    return _algorithm(v.best[v.winner]) if v.winner == "fastest all-reduce" else f"the {v.winner}"



def fastest_tie_words(verdicts) -> list[str]:
    """For each 1 MB verdict on the workers' own cards, its fastest all-reduce with every all-reduce tied with it
    (:func:`tie_words`), for the "its best algorithm" column of the start-up table."""
    out = []
    for v in verdicts:
        s = v.claim.shared
        out.append(tie_words(tied_allreduces(s["nbytes"], s["n"], s["bandwidth"], s["latency"], s["overhead"])))
    return out


def own_cards_sentence(verdicts) -> str:
    """One plain sentence for the table of :func:`ps_small_message_extra_claim` and its 8-worker twin: which is
    fastest, one message at a time, and whether the parameter server, on twice the cards, comes last (and by how
    little, where it is within 5 % of the next-slowest)."""
    def fastest(v: claims.Verdict) -> str:
        if v.decided and v.winner == "fastest all-reduce":
            s = v.claim.shared
            return tie_words(tied_allreduces(s["nbytes"], s["n"], s["bandwidth"], s["latency"], s["overhead"]))
        return _fastest(v)

    winners = {fastest(v) for v in verdicts}
    ns = [str(v.claim.shared["n"]) for v in verdicts]
    tied = any(w.endswith("(tied)") for w in winners)
    verb = "are" if tied else "is"
    if len(winners) == 1:
        name = winners.pop().removesuffix(" (tied)")
        lead = f"{name} {verb} fastest{', tied,' if tied else ''} for {ns[0]} workers" + \
            "".join(f" and for {n}" for n in ns[1:])
    else:
        lead = "; ".join(f"for {n} workers {fastest(v)} is fastest" for n, v in zip(ns, verdicts))
    last = all(v.best["parameter server"].mean > max(b.mean for c, b in v.best.items() if c != "parameter server")
               for v in verdicts)
    times = {1: "", 2: " both times"}.get(len(verdicts), " every time")
    place = f", and the parameter server, on twice the cards, comes last of the three in the table{times}" if last else ""
    if last:
        # how far behind the next-slowest it comes: a near-tie is said, not hidden behind "last"
        behind = [(v.best["parameter server"].mean / max(b.mean for c, b in v.best.items() if c != "parameter server"),
                   max((c for c in v.best if c != "parameter server"), key=lambda c: v.best[c].mean))
                  for v in verdicts]
        closest, rival = min(behind)
        if closest < 1.05:
            rivals = {r for _, r in behind}
            named = _algorithm(verdicts[0].best[rival]) if rival == "fastest all-reduce" else f"the {rival}"
            who = named if len(rivals) == 1 else "the next-slowest"
            pcts = sorted({round(100 * (r - 1)) for r, _ in behind})
            pct = f"{pcts[0]} %" if len(pcts) == 1 else f"{pcts[0]}–{pcts[-1]} %"
            place += f", though only {pct} behind {who} (a near-tie)"
    return f"Counted one message at a time, {lead}{place}"


def same_cards_sentence(verdicts) -> str:
    """One plain sentence for the table of :func:`ps_small_message_claim` and its φ = 0 twin: who is faster on
    the same 2n cards at each share φ, and by how much."""
    cards = 2 * verdicts[0].claim.shared["n"]

    def how(v: claims.Verdict) -> str:
        r = v.best[v.runner_up].mean / v.best[v.winner].mean
        return ("only just (a near-tie)" if r < 1.05 else f"{r:.1f} times") + \
            rf" at $\varphi = {v.claim.shared['overhead']:g}$"

    winners = {v.winner for v in verdicts}
    if len(winners) == 1 and all(v.decided for v in verdicts):
        return f"On the same {cards} cards the {winners.pop()} is faster at both shares: " + ", and ".join(
            how(v) for v in verdicts)
    return f"On the same {cards} cards " + "; ".join(
        (f"the {v.winner} is faster, {how(v)}" if v.decided else
         rf"the two are level at $\varphi = {v.claim.shared['overhead']:g}$") for v in verdicts)


def thresholds_sentence(ns=(32, 8)) -> str:
    """Below which shares φ the parameter server of :func:`small_message_thresholds` beats the ring and every
    all-reduce on the workers' cards, for each number of workers in ``ns`` (the first in full)."""
    t = [small_message_thresholds(n) for n in ns]
    s = _small_shared(ns[0], 1.0)
    size = f"{s['nbytes'] / 1e6:g} MB gradient on {hardware.link('eth_25g').name}"
    first = (f"for the {size}, with {ns[0]} workers it {_below(t[0]['f_ring'], 'the ring')} and "
             f"{_below(t[0]['f_best'], 'every all-reduce')}")
    rest = "".join(f"; with {n}, below {_bound(x['f_ring'])} and {_bound(x['f_best'])}" for n, x in zip(ns[1:], t[1:]))
    return (r"On its extra cards against the all-reduces on the workers' $n$ cards, the parameter server gains as "
            rf"$\varphi$ falls: {first}{rest}")


#: The gradient sizes (bytes) the crossover scan brackets, and its points per decade.
CROSSOVER_RANGE, CROSSOVER_POINTS = (1.0, 1e10), 20


def crossover_size(n: int, algorithm: str | None = None, latency: float | None = None, link: str = "eth_25g") -> float:
    r"""The smallest gradient size (bytes) from which the parameter server with k = n separate servers (2n cards,
    its best cut, one message at a time: :math:`\varphi = 1`) beats an all-reduce on the n workers' cards: ``algorithm``
    (one of :data:`commlib.parameter_servers.cost.RIVALS`, at its best cut), or None for the fastest of them at each
    size (:func:`commlib.parameter_servers.cost.best_allreduce`). ``latency`` is alpha (None: the link's).

    Found on a geometric grid over :data:`CROSSOVER_RANGE`, then by bisection. Every time here scales with alpha
    and M/B together, so the crossover is a fixed multiple of :math:`n\alpha B` for each n and rival. Raises
    ValueError unless the all-reduce is ahead at the smallest size, the parameter server at the largest, and they
    cross once on the grid.

    >>> [round(crossover_size(8, a) / 1e6, 2) for a in ("ring", "halving_doubling", None)]
    [1.25, 1.95, 1.95]
    >>> round(crossover_size(8, "ring", latency=5e-6) / 1e6, 3)   # half the latency, half the size
    0.625
    """
    item = hardware.link(link)
    bw = item.bandwidth
    lat = item.latency if latency is None else latency

    def ahead(m: float) -> bool:
        rival = (ps_cost.best_allreduce(m, n, bw, lat)[1] if algorithm is None else
                 ps_cost.rival_time(m, n, bw, lat, algorithm=algorithm))
        return ps_cost.round_time(m, n, bw, servers=n, latency=lat) < rival

    lo, hi = CROSSOVER_RANGE
    count = round(CROSSOVER_POINTS * math.log10(hi / lo))
    grid = [lo * (hi / lo) ** (i / count) for i in range(count + 1)]
    marks = [ahead(m) for m in grid]
    flips = [i for i in range(count) if marks[i] != marks[i + 1]]
    if marks[0] or not marks[-1] or len(flips) != 1:
        raise ValueError(f"the parameter server and {algorithm or 'the fastest all-reduce'} on {n} workers do not "
                         f"cross once between {lo:g} and {hi:g} bytes")
    a, b = grid[flips[0]], grid[flips[0] + 1]
    for _ in range(60):
        mid = math.sqrt(a * b)
        a, b = (a, mid) if ahead(mid) else (mid, b)
    return b


def _crossover(key: str, n: int) -> claims.Claim:
    link = hardware.link("eth_25g")
    shared = {"n": n, "latency": link.latency}

    def run(s, seed):
        return crossover_size(s["n"], s.get("algorithm", "ring"), s["latency"]) / 1e6

    ps_side = f"against the parameter server with k = {n} separate servers ({2 * n} cards, its best cut)"
    ring = claims.Contender("ring", run, uses=f"the workers' {n} cards, φ = 1, {ps_side}")
    fastest = claims.Contender("fastest all-reduce", run, ALLREDUCES,
                               uses=f"the workers' {n} cards, the algorithm that holds out longest, φ = 1, {ps_side}")

    def wording(v: claims.Verdict) -> str:
        r, b = v.best["ring"].mean, v.best["fastest all-reduce"].mean
        alg = _algorithm(v.best["fastest all-reduce"])
        last = ("and every all-reduce from the same size" if math.isclose(r, b, rel_tol=1e-6) else
                f"and every all-reduce from {b:.2f} MB ({alg} holds out longest)")
        return rf"with {n} workers the parameter server with $k = n$ beats the ring from {r:.2f} MB {last}"

    return claims.Claim(key, f"From what gradient size does a parameter server with k = n = {n} separate servers beat "
                             "the ring and every all-reduce on the workers' cards (25 Gb/s Ethernet, one message at "
                             "a time)?",
                        (ring, fastest), metric="MB from which the parameter server wins (larger: the all-reduce "
                                                "holds out longer)",
                        seeds=(0,), lower_is_better=False, shared=shared, wording=wording,
                        chapter="03_parameter_servers",
                        source="crossover_size: round_time (best pieces per shard) against rival_time (each algorithm "
                               "at its best cut), a geometric scan from 1 B to 10 GB and bisection; deterministic")


@claims.register("ch03.ps_crossover")
def ps_crossover_claim(small: bool = False) -> claims.Claim:
    """The smallest gradient size from which the PS with k = n = 8 separate servers beats the ring, and every
    all-reduce, on the workers' 8 cards (25 Gb/s Ethernet, φ = 1)."""
    return _crossover("ch03.ps_crossover", 8)


@claims.register("ch03.ps_crossover_32")
def ps_crossover_32_claim(small: bool = False) -> claims.Claim:
    """The same on 32 workers."""
    return _crossover("ch03.ps_crossover_32", 32)


def crossover_multiples(verdicts, rival: str = "ring") -> list[float]:
    """Each verdict's crossover against ``rival`` (a contender of :func:`_crossover`: "ring" or "fastest
    all-reduce") in units of n alpha B (alpha and B of the 25 Gb/s cards)."""
    bw = hardware.link("eth_25g").bandwidth
    return [v.best[rival].mean * 1e6 / (v.claim.shared["n"] * v.claim.shared["latency"] * bw) for v in verdicts]


def last_to_fall(n: int, link: str = "eth_25g") -> str:
    r"""The all-reduce of :data:`commlib.parameter_servers.cost.RIVALS` that holds out longest against the parameter
    server with k = n separate servers on n workers (:func:`crossover_size`, :math:`\varphi = 1`): the fastest one
    just below the crossover with every all-reduce. Which one it is depends on n: halving-doubling needs a power of
    two (off one it pays for a fold), Bruck's all-reduce runs on every n with as few start-ups.

    >>> last_to_fall(8), last_to_fall(12)
    ('halving_doubling', 'bruck')
    """
    item = hardware.link(link)
    size = crossover_size(n, None, link=link)
    return ps_cost.best_allreduce(size * (1 - 1e-6), n, item.bandwidth, item.latency)[0]


def last_to_fall_words(verdict, link: str = "eth_25g") -> str:
    """The all-reduce that holds out longest in a crossover verdict (:func:`ps_crossover_claim` and its twins), every
    one tied with it named (:func:`tied_allreduces`, just below the crossover).

    >>> last_to_fall_words(claims.verdict("ch03.ps_crossover"))
    "halving-doubling and Bruck's all-reduce (tied)"
    """
    item = hardware.link(link)
    size = verdict.best["fastest all-reduce"].mean * 1e6
    return tie_words(tied_allreduces(size * (1 - 1e-6), verdict.claim.shared["n"], item.bandwidth,
                                     verdict.claim.shared["latency"]))


def _allreduce_name(name: str) -> str:
    return "Bruck's all-reduce" if name == "bruck" else ps_cost.rival_label(name)



def few_times_words(verdicts) -> str:
    r"""How many times :math:`n\alpha B` the crossovers against the ring are, in words: "a few times" where every
    one lies between 2 and 10, else "up to m times"."""
    m = crossover_multiples(verdicts)
    return "a few times" if all(2 <= x < 10 for x in m) else f"up to {max(m):.0f} times"


def alpha_scaling_sentence(verdicts, link: str = "eth_100g") -> str:
    r"""Why the crossovers of :func:`ps_crossover_claim` (the first verdict) are fixed multiples of
    :math:`n\alpha B`, with one example: the first row's crossover against the ring recomputed on ``link``'s
    cards, its alpha and its bandwidth together (alpha and B of the 25 Gb/s cards otherwise, as in
    :func:`crossover_multiples`).

    >>> print(alpha_scaling_sentence([claims.verdict("ch03.ps_crossover")]))  # doctest: +NORMALIZE_WHITESPACE
    For a given $n$ these sizes are fixed multiples of $n\alpha B$ (the table's last two columns), since every time
    here scales with $\alpha$ and $M/B$ together: on Ethernet 100 Gb/s, with twice the $\alpha B$, the first row's
    crossover against the ring rises to 2.50 MB
    """
    first = verdicts[0]
    n, alpha = first.claim.shared["n"], first.claim.shared["latency"]
    bw = hardware.link("eth_25g").bandwidth   # the crossover claims' cards (as in crossover_multiples)
    item = hardware.link(link)
    ring = first.best["ring"].mean
    ring2 = crossover_size(n, "ring", link=link) / 1e6
    factor = round(item.latency * item.bandwidth / (alpha * bw), 9)
    words = {0.5: "half", 1: "the same", 2: "twice", 4: "four times", 8: "eight times"}
    return (rf"For a given $n$ these sizes are fixed multiples of $n\alpha B$ (the table's last two columns), since "
            rf"every time here scales with $\alpha$ and $M/B$ together: on {item.name}, with "
            rf"{words.get(factor, f'{factor:g} times')} the $\alpha B$, the first row's crossover against the ring "
            f"{'falls' if ring2 < ring else 'rises'} to {ring2:.2f} MB")


def kstar_small_sentence(nbytes: float, n: int, link: str = "eth_25g", crossover: bool = True) -> str:
    """:func:`commlib.parameter_servers.cost.smallest_k_to_beat_ring` for ``nbytes`` on ``n`` workers with start-ups
    counted, in words; where no k beats the ring, how close the best k comes (every k up to 2n tried) and, unless
    ``crossover`` is False (where the text gives it elsewhere), from what size the parameter server with k = n wins
    (:func:`crossover_size`)."""
    item = hardware.link(link)
    bw, lat = item.bandwidth, item.latency
    k_min = ps_cost.smallest_k_to_beat_ring(nbytes, n, bw, latency=lat)
    if k_min is not None:
        return f"the fewest servers that beat the ring are $k^*$ = {k_min}"
    times = {k: ps_cost.round_time(nbytes, n, bw, servers=k, latency=lat) for k in range(1, 2 * n + 1)}
    k_best = min(times, key=times.get)
    behind = 100 * (times[k_best] / ps_cost.rival_time(nbytes, n, bw, lat, algorithm="ring") - 1)
    near = "only " if behind < 5 else ""
    who = "it" if k_best == n else "the parameter server with $k = n$"
    sentence = f"no number of servers beats the ring, though the best ($k$ = {k_best}) is {near}{behind:.0f} % behind"
    if not crossover:
        return sentence
    return f"{sentence}, and from about {crossover_size(n, 'ring', lat, link) / 1e6:.2f} MB {who} wins"

def kstar_lead_percent(n: int) -> float:
    """In bandwidth terms on equal cards (:data:`EXAMPLE`'s link; the share does not depend on it), how far the
    parameter server with :math:`k^*` separate servers is ahead of the ring on ``n`` workers, in % of the ring's
    time (:func:`commlib.parameter_servers.cost.smallest_k_to_beat_ring` without start-ups)."""
    bw = hardware.link(EXAMPLE["link"]).bandwidth
    k = ps_cost.smallest_k_to_beat_ring(1.0, n, bw)
    if k is None:
        raise ValueError(f"no number of servers beats the ring on {n} workers")
    ps_s = ps_cost.round_time(1.0, n, bw, servers=k)
    return 100 * (1 - ps_s / ps_cost.rival_time(1.0, n, bw, algorithm="ring"))


def _size_words(nbytes: float) -> str:
    return f"{nbytes / 1e9:.2f} GB" if nbytes >= 1e9 else f"{nbytes / 1e6:g} MB"


def kstar_startup_rows(cases) -> list[dict]:
    """For each ``(nbytes, n, link)`` in ``cases``, a table row: the workers ``n``, the link's name, the gradient
    size in words, :math:`k^*` with start-ups counted (``k``: φ = 1, the best number of pieces for each k; "none"
    where no k beats the ring) and :math:`k^*` in bandwidth terms (``k0``), both from
    :func:`commlib.parameter_servers.cost.smallest_k_to_beat_ring`."""
    rows = []
    for nbytes, n, link in cases:
        item = hardware.link(link)
        k = ps_cost.smallest_k_to_beat_ring(nbytes, n, item.bandwidth, latency=item.latency)
        rows.append({"n": n, "link": item.name, "size": _size_words(nbytes), "k": "none" if k is None else k,
                     "k0": ps_cost.smallest_k_to_beat_ring(nbytes, n, item.bandwidth)})
    return rows

