"""Views for the parameter-server chapter: push/pull animation, traffic plots, calculator, sweep.

Every number drawn here comes from :mod:`commlib.parameter_servers.simulate` (the executed round and
its closed forms) or :mod:`commlib.cost`.
"""

from __future__ import annotations

from IPython.display import Markdown
from matplotlib.animation import FuncAnimation
from matplotlib.patches import FancyArrowPatch, Rectangle

from .. import hardware
from ..parameter_servers import calculators as ps_calculators
from ..parameter_servers import cost as ps_cost
from ..parameter_servers import simulate as ps
from ..units import format_rate, format_size, format_time
from .animation import sweep_html, to_html
from .calculator import Calculator, dropdown, integer, make_calculator, toggle
from .plots import COLORS, MARKERS, PALETTE, figure
from .tables import markdown_table

__all__ = [
    "push_pull_frames",
    "push_pull_animation",
    "volumes_figure",
    "sharding_figure",
    "traffic_table",
    "agreement",
    "step_exact_words",
    "start_up_table",
    "pieces_words",
    "kstar_words",
    "ps_calculator",
    "servers_sweep",
]

_SHARD_COLORS = [PALETTE["sky"], PALETTE["orange"], PALETTE["green"], PALETTE["purple"], PALETTE["yellow"],
                 PALETTE["vermillion"]]
_CELL = 0.62


def _shard_of(bounds) -> list[int]:
    out = []
    for j, (a, b) in enumerate(bounds):
        out.extend([j] * (b - a))
    return out


def _cells(ax, x0: float, y0: float, values, shards, title: str, below: bool = False) -> None:
    for c, (v, j) in enumerate(zip(values, shards)):
        ax.add_patch(Rectangle((x0 + c * _CELL, y0), _CELL, _CELL, facecolor=_SHARD_COLORS[j % 6],
                               edgecolor="black", lw=0.6, alpha=0.85))
        ax.text(x0 + (c + 0.5) * _CELL, y0 + _CELL / 2, f"{v:.3g}", ha="center", va="center", fontsize=9)
    if below:
        ax.text(x0, y0 - 0.08, title, ha="left", va="top", fontsize=9.5)
    else:
        ax.text(x0, y0 + _CELL + 0.08, title, ha="left", va="bottom", fontsize=9.5)


_STAGE_TEXT = {
    "start": ("its gradient ∇l", "its part of the parameters w"),
    "push": ("its gradient ∇l", "the sum Σ∇l of the n gradients, beside w"),
    "update": ("its gradient ∇l", "new parameters w − η·Σ∇l/n"),
    "pull": ("the new parameters w", "new parameters w"),
}

#: Stages whose servers show a sum of gradients, with the parameters w drawn above it.
_KEEPS_W = ("push",)

_CAPTIONS = {
    "start": "start: nothing sent yet",
    "push": "push: every worker sends shard j of its gradient to server j, which sums them",
    "update": "update: each server takes an SGD step on its own shard (no network)",
    "pull": "pull: every worker fetches every shard of the new parameters",
}


def push_pull_frames(r: ps.PSRound):
    """The frames of an executed round ``r`` (:func:`commlib.parameter_servers.simulate.demo_round`): ``(figure, draw(i), labels)``.

    ``draw(i)`` redraws frame ``i`` (one per stage of the round) on the figure.
    """
    n, k, colocated, lr = r.workers, r.servers, r.colocated, r.lr
    length = r.params.size
    sent_by_stage = r.sent_by_stage()
    shards = _shard_of(r.bounds)
    width = length * _CELL
    gap = 1.0
    worker_x = [i * (width + gap) for i in range(n)]
    span = worker_x[-1] + width
    sizes = [b - a for a, b in r.bounds]
    if colocated:
        host_x = {j: worker_x[j] + r.bounds[j][0] * _CELL for j in range(k)}
        server_y = 1.9
    else:
        sgap = 2.4
        total = sum(s * _CELL for s in sizes) + sgap * (k - 1)
        start = (span - total) / 2
        host_x, x = {}, start
        for j, s in enumerate(sizes):
            host_x[j] = x
            x += s * _CELL + sgap
        server_y = 2.6
    fig, ax = figure(max(6.4, 0.6 * span + 1.0), 4.4 if not colocated else 3.8)
    labels = [f"{i + 1}/{len(r.stages)} {s.label}" for i, s in enumerate(r.stages)]

    def draw(i: int):
        ax.clear()
        ax.set_axis_off()
        stage = r.stages[i]
        wtext, stext = _STAGE_TEXT[stage.label]
        for w in range(n):
            _cells(ax, worker_x[w], 0.0, stage.workers[w], shards, f"worker {w}", below=True)
        for j in range(k):
            a, b = r.bounds[j]
            title = f"shard {j} (on worker {j})" if colocated else f"server {j} (machine {n + j})"
            _cells(ax, host_x[j], server_y, stage.servers[j], shards[a:b], title)
            if stage.label in _KEEPS_W:   # the sum sits beside w, which the update still needs
                _cells(ax, host_x[j], server_y + _CELL + 0.5, r.stages[0].servers[j], shards[a:b], "w, kept")
        if stage.step is not None:
            for m in r.trace.step_messages(stage.step):
                j = m.chunk
                a, b = r.bounds[j]
                xs = host_x[j] + (b - a) * _CELL / 2
                if colocated:
                    if m.phase == "push":
                        p0, p1 = (worker_x[m.src] + (a + b) / 2 * _CELL, _CELL + 0.05), (xs, server_y - 0.05)
                    else:
                        p0, p1 = (xs, server_y - 0.05), (worker_x[m.dst] + (a + b) / 2 * _CELL, _CELL + 0.05)
                    rad = 0.0
                else:
                    wx = worker_x[m.src if m.phase == "push" else m.dst] + (a + b) / 2 * _CELL
                    if m.phase == "push":
                        p0, p1 = (wx, _CELL + 0.05), (xs, server_y - 0.05)
                    else:
                        p0, p1 = (xs, server_y - 0.05), (wx, _CELL + 0.05)
                    rad = 0.0
                ax.add_patch(FancyArrowPatch(p0, p1, arrowstyle="-|>", mutation_scale=9, lw=1.1,
                                             color=_SHARD_COLORS[j % 6],
                                             connectionstyle=f"arc3,rad={rad}", alpha=0.9))
        sent = sent_by_stage[i]
        grad = length * r.params.dtype.itemsize     # M, the gradient's bytes
        ring = 2 * (n - 1) * grad / n               # what a ring all-reduce rank sends
        closes = colocated and i == len(r.stages) - 1 and all(s == ring for s in sent)
        lines = [_CAPTIONS[stage.label],
                 f"each worker holds {wtext}; each {'shard' if colocated else 'server'} holds {stext}",
                 f"bytes sent so far, machine by machine: {', '.join(str(int(s)) for s in sent)} B "
                 + (f"= 2(n−1)M/n each, the ring's bytes, with M = {grad} B" if closes
                    else f"({r.params.dtype.itemsize} B per value)")]
        if colocated:
            lines.append("a worker's exchange with its own shard stays inside the machine: no arrow, no bytes")
        for row, line in enumerate(lines):
            ax.text(0, -0.55 - 0.42 * row, line, fontsize=9.5, ha="left", va="top")
        ax.set_xlim(-0.3, span + 0.3)
        ax.set_ylim(-2.3 if colocated else -1.9, server_y + 2 * _CELL + 1.0)
        kind = "colocated" if colocated else "separate server machines"
        ax.set_title(f"One synchronous PS round: n = {n} workers, k = {k} shards ({kind}), η = {lr:g}",
                     fontsize=10)
        return []

    return fig, draw, labels


def push_pull_animation(r: ps.PSRound):
    """Animated push / update / pull of an executed round ``r`` (:func:`commlib.parameter_servers.simulate.demo_round`), offline player."""
    fig, draw, labels = push_pull_frames(r)
    anim = FuncAnimation(fig, draw, frames=len(labels), interval=1500, blit=False)
    kind = "colocated shards" if r.colocated else "separate server machines"
    return to_html(anim, labels=labels, alt=f"Parameter-server round with {r.workers} workers and {r.servers} {kind}: "
                                            "gradient cells move from workers to servers, are summed, updated "
                                            "and pulled back")


def volumes_figure(v):
    """The hot spot, like for like: bytes each way on one separate server's NIC and on a ring rank's, in units of M.

    ``v`` is :func:`commlib.parameter_servers.simulate.server_and_ring_volumes` with ``nbytes = 1`` (n workers and one
    server on a machine of its own, eq-ps-apart with k = 1)."""
    p = v["processes"]
    fig, ax = figure(5.6, 3.6)
    ax.plot(p, v["ps_separate_each_way"], color=COLORS[3], lw=2, marker=MARKERS[3], markevery=8, ms=4,
            label="PS server NIC: nM")
    ax.plot(p, v["ring_rank_each_way"], color=COLORS[0], lw=2, ls="--", marker=MARKERS[0], markevery=8, ms=4,
            label="ring rank NIC: 2(n−1)M/n")
    ax.set_title("Each way, per NIC", fontsize=10)
    ax.set_ylabel("bytes, in units of M (gradient size)")
    ax.set_xlabel("workers n (the server on a machine of its own)")
    ax.legend(loc="upper left", fontsize=8.5)
    fig.tight_layout()
    return fig


#: The sharding figure's time axis stops at this multiple of the ring's time, so that the curves separate where the
#: decision is made; the parameter server's points above it are marked at the top edge with their times.
CLIP_RING_TIMES = 1.6


def sharding_figure(c, title: str = ""):
    """Round time against the number of server machines k: PS apart, BytePS, colocated PS, ring.

    ``c`` is :func:`commlib.parameter_servers.simulate.sharding_curves`. Blue marks the all-reduces (dashed on the
    workers' n cards, dotted on the same n + k cards). The time axis stops at :data:`CLIP_RING_TIMES` times the
    ring's time where the parameter server's few-server points lie far above it; those are marked at the top edge."""
    ks, t_ps, kb, t_bp = c["k"], c["ps"], c["byteps_k"], c["byteps"]
    t_ring, t_col, k_star, n = c["ring"], c["colocated"], c["k_star"], c["n"]
    nbytes, bandwidth = c["nbytes"], c["bandwidth"]
    fig, ax = figure(7.2, 5.0)
    ax.plot(ks, 1e3 * t_ps, color=COLORS[3], marker=MARKERS[3], ms=4, lw=1.8, label="PS, k separate server machines")
    ax.plot(kb, 1e3 * t_bp, color=COLORS[2], marker=MARKERS[2], ms=4, lw=1.5,
            label="BytePS optimum, k CPU machines (on the PS curve from k = n)")
    ax.axhline(1e3 * t_ring, color=COLORS[0], lw=2, ls="--", label="ring all-reduce, the n workers' cards")
    if "same_cards" in c:
        ax.plot(ks, 1e3 * c["same_cards"], color=COLORS[0], lw=1.5, ls=":", marker=MARKERS[0], ms=3,
                label=f"{ps_cost.SAME_CARDS_LABEL} (n + k)")
    # a colocated PS uses no server machine: it sits at 0 on the axis, its k = n shards on the workers
    ax.plot([0], [1e3 * t_col], ls="none", marker="*", ms=13, color=COLORS[5], zorder=5,
            label=f"PS colocated: no server machines ({n} shards on the workers)")
    ax.axvline(n / 2, color=COLORS[7], lw=0.8, ls="-.")
    ax.annotate("k = n/2", (n / 2, 0), xytext=(3, 4), textcoords="offset points", fontsize=8.5)
    if k_star is not None and k_star <= ks[-1]:
        ax.annotate(f"PS beats the ring from k = {k_star} ({n + k_star} cards there)", (k_star, 1e3 * t_ps[k_star - 1]), xytext=(14, 26),
                    textcoords="offset points", fontsize=9,
                    arrowprops=dict(arrowstyle="->", color=COLORS[7], lw=0.8))
    top = 1.08e3 * max(t_ps.max(), t_ring)
    if top > 1e3 * CLIP_RING_TIMES * t_ring:
        top = 1e3 * CLIP_RING_TIMES * t_ring
        above = [(int(k), 1e3 * t) for k, t in zip(ks, t_ps) if 1e3 * t > top]
        ax.plot([k for k, _ in above], [0.97 * top] * len(above), ls="none", marker=r"$\uparrow$", ms=11,
                color=COLORS[3],
                zorder=6)
        ax.annotate("↑ off the scale: " + "; ".join(f"k = {k}, {t:.0f} ms" for k, t in above), (0.4, 0.96),
                    xycoords="axes fraction", fontsize=8.5, va="top", color=COLORS[7])
    ax.set_ylim(0, top)
    ax.set_xlim(-0.5, ks[-1] + 0.5)
    ax.set_xlabel("server (CPU) machines k")
    ax.set_ylabel("time of one round (ms)")
    number, unit = format_rate(bandwidth, bits=True).split(" ", 1)
    rate = f"{number.rstrip('0').rstrip('.') if '.' in number else number} {unit}"   # 100 Gb/s, 2.5 Gb/s
    ax.set_title(title or f"M = {format_size(nbytes)}, n = {n} workers, {rate} per direction", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8.5, frameon=False)
    fig.tight_layout()
    return fig


def traffic_table(rows):
    """:func:`commlib.parameter_servers.simulate.traffic_check`'s rows: executed rounds against the closed form, busiest NIC each way."""
    body = [[r["workers"], r["servers"], "yes" if r["colocated"] else "no", f"{r['most_sent']} B",
             f"{r['most_received']} B", f"{r['closed_form']:g} B", "yes" if r["equal"] else "no"] for r in rows]
    headers = ["workers n", "shards k", "colocated", "simulated: most sent by one NIC",
               "simulated: most received by one NIC", "closed form (each way)", "equal"]
    return markdown_table(headers, body, caption="Executed parameter-server rounds against the closed form: "
                                                 "bytes through the busiest NIC, each way")


def agreement(error: float) -> str:
    """How closely an executed round agrees with its reference, in words: "exactly", or within the largest error.

    >>> agreement(0.0), agreement(2.2e-16)
    ('exactly', 'to within 2.2e-16')
    """
    return "exactly" if error == 0 else f"to within {error:.1e}"


def step_exact_words(n: int, error: float) -> str:
    """Why the SGD step of an executed round agrees bit for bit or not, in words: the sum is added in the same order,
    and dividing by ``n`` is exact only where n is a power of two (``error``: the largest difference).

    >>> print(step_exact_words(4, 0.0))   # doctest: +NORMALIZE_WHITESPACE
    The step agrees to the last bit because dividing by $n$ = 4, a power of two, is exact; with other $n$ the
    division rounds, and the step agrees to within a bit or two of the last place.
    >>> print(step_exact_words(5, 1.1e-16))
    The step agrees to within 1.1e-16: dividing by $n$ = 5 rounds.
    """
    if error == 0 and n > 0 and n & (n - 1) == 0:
        return (f"The step agrees to the last bit because dividing by $n$ = {n}, a power of two, is exact; with "
                "other $n$ the division rounds, and the step agrees to within a bit or two of the last place.")
    if error == 0:
        return f"The step agrees to the last bit, though dividing by $n$ = {n} rounds."
    return f"The step agrees {agreement(error)}: dividing by $n$ = {n} rounds."


def pieces_words(pieces: int | None) -> str:
    """The best cut of :func:`commlib.parameter_servers.cost.round_pieces`, in words.

    >>> pieces_words(1), pieces_words(2), pieces_words(None)
    ('one piece per shard: push, then pull', '2 pieces per shard', 'ever more pieces per shard')
    """
    if pieces is None:
        return "ever more pieces per shard"
    return "one piece per shard: push, then pull" if pieces == 1 else f"{pieces} pieces per shard"


def kstar_words(k_min: int | None) -> str:
    """:func:`commlib.parameter_servers.cost.smallest_k_to_beat_ring`'s answer, in words (None: no k).

    >>> kstar_words(None), kstar_words(5)
    ('no number of servers beats the ring', 'the fewest servers that beat the ring are $k^*$ = 5')
    """
    return "no number of servers beats the ring" if k_min is None else f"the fewest servers that beat the ring are $k^*$ = {k_min}"


def start_up_table(verdicts, caption: str, case: str, label, metric: str, ties=None):
    """The start-up section's verdicts (1 MB claims of :mod:`commlib.experiments.parameter_servers`) as a table in
    the chapter's words: one row per design at its best, its algorithm by name, the winner marked "fastest".

    ``case`` heads the first column and ``label(verdict)`` fills it; ``metric`` heads the times' column. ``ties``
    (None: none) gives, for each verdict in turn, the words for its fastest all-reduce with any tied with it
    (:func:`commlib.experiments.parameter_servers.tie_words`); they replace the one name of its row.
    """
    from .claims import verdict_table

    verdicts = list(verdicts)
    table = verdict_table(verdicts, ".2f", caption, label=label,
                          columns=(case, "design", "its best algorithm", metric, "fastest"),
                          setting=lambda config: ps_cost.rival_label(config["algorithm"]) if config else "-")
    table.data = table.data.replace("| ahead |", "| yes |")
    if ties is not None:
        lines = table.data.split("\n")
        words = iter(ties)
        for j, line in enumerate(lines):
            if "| fastest all-reduce |" in line:
                cells = line.split("|")
                cells[3] = f" {next(words)} "
                lines[j] = "|".join(cells)
        table.data = "\n".join(lines)
    return table


def crossover_table(verdicts, multiples, caption: str, holders=None) -> Markdown:
    """The crossovers of :func:`commlib.experiments.parameter_servers.ps_crossover_claim` and its twins, one row per
    number of workers: from what size the parameter server with k = n wins against the ring and against every
    all-reduce, and both as multiples of n alpha B (``multiples``: the first's), under ``caption``. ``holders``
    names, for each row, the all-reduce that holds out longest (with any tied with it); None: the verdict's."""
    if holders is None:
        holders = [ps_cost.rival_label(v.best["fastest all-reduce"].config["algorithm"]) for v in verdicts]
    rows = [(v.claim.shared["n"], f"{v.best['ring'].mean:.2f}", f"{v.best['fastest all-reduce'].mean:.2f}", h,
             f"{m:.1f}", f"{m * v.best['fastest all-reduce'].mean / v.best['ring'].mean:.1f}")
            for v, m, h in zip(verdicts, multiples, holders)]
    return markdown_table(("workers n", "beats the ring from (MB)", "beats every all-reduce from (MB)",
                           "the all-reduce that holds out longest", "against the ring, in units of nαB",
                           "against every all-reduce, in units of nαB"),
                          rows, caption)


def _model_label(key: str) -> str:
    # the name only: the dropdown is about 30 characters wide; the parameter count is a result row
    return hardware.model(key).name


def _network_links() -> list[tuple[str, str]]:
    return [(item.name, key) for key, item in hardware.LINKS.items() if item.kind == "network"]


def ps_calculator(model: str = "resnet50", dtype: str = "fp32", n: int = 8, k: int = 4, colocated: bool = False,
                  worker_link: str = "eth_100g", server_link: str = "eth_100g") -> Calculator:
    """PS against ring all-reduce: model, n workers, k shards, colocated or not, worker and server links.

    The computation is :func:`commlib.parameter_servers.calculators.ps_results` (no numpy: it runs in the page too)."""

    controls = {
        "model": dropdown([(_model_label(key), key) for key in hardware.MODELS], model, "model"),
        "dtype": dropdown(list(hardware.DTYPE_BYTES), dtype, "gradient dtype"),
        "n": integer(n, 1, 256, "workers n"),
        "k": integer(k, 1, 256, "server shards k"),
        "colocated": toggle(colocated, "shards on the workers"),
        "worker_link": dropdown(_network_links(), worker_link, "worker NIC"),
        "server_link": dropdown(_network_links(), server_link, "server NIC"),
    }
    return make_calculator(ps_calculators.ps_results, controls, title="Parameter server or ring all-reduce?",
                           note="Bandwidth terms only (large messages), full-duplex NICs, bandwidth per "
                                "direction; push and pull pipelined. With the shards on the workers (colocated) the "
                                "round leaves the server NIC unused; it then serves only k*, the fewest separate "
                                "server machines that beat the ring. "
                                "1 MB = 10^6 B, 1 MiB = 2^20 B.")


def servers_sweep(c, model_name: str = ""):
    """Precomputed view of the calculator: PS time as k grows, one frame per k, with the ring on the workers' cards
    and the best all-reduce on the same cards (:data:`commlib.parameter_servers.cost.SAME_CARDS_LABEL`) for reference.

    ``c`` is :func:`commlib.parameter_servers.simulate.sharding_curves`; ``model_name`` labels the title."""
    ks, t_ps, t_ring, n, nbytes = [int(k) for k in c["k"]], c["ps"], c["ring"], c["n"], c["nbytes"]
    same = c["same_cards"]
    name = model_name or "gradient"

    def words(winner: str) -> str:
        return {"PS": "PS wins", "tie": "tie"}.get(winner, "all-reduce wins")

    def draw(k):
        i = ks.index(k)
        fig, ax = figure(6.4, 4.2)
        ax.plot(ks, 1e3 * t_ps, color=COLORS[3], lw=1.5, marker=MARKERS[3], ms=3, label="PS, k servers (n + k cards)")
        ax.axhline(1e3 * t_ring, color=COLORS[0], lw=2, ls="--", label=f"ring all-reduce, the workers' {n} cards")
        ax.plot(ks, 1e3 * same, color=COLORS[0], lw=1.5, ls=":", marker=MARKERS[0], ms=3,
                label=f"{ps_cost.SAME_CARDS_LABEL} (n + k)")
        ax.plot([k], [1e3 * t_ps[i]], marker="o", ms=11, mfc="none", mec=COLORS[7], mew=2)
        ax.set_title(f"{name} ({format_size(nbytes)}), n = {n}, k = {k}: PS {format_time(t_ps[i])} on {n + k} cards\n"
                     f"against the ring on the workers' {n} cards, {format_time(t_ring)}: {words(c['winner'][i])}\n"
                     f"against the {ps_cost.SAME_CARDS_LABEL} ({n + k}), {format_time(same[i])}: "
                     f"{words(c['winner_same_cards'][i])}", fontsize=9)
        ax.set_ylim(0, 1.08e3 * max(t_ps.max(), t_ring))
        ax.set_xticks(ks)
        ax.set_xlabel("server machines k")
        ax.set_ylabel("time of one round (ms)")
        ax.legend(loc="upper right", fontsize=8.5)
        fig.subplots_adjust(left=0.12, right=0.97, bottom=0.12, top=0.82)
        return fig

    return sweep_html(draw, ks, label="k = {}", start=0,
                      alt=f"PS round time against server count k for {name} with {n} workers, with the ring "
                          f"all-reduce on the workers' cards as a horizontal dashed line and the {ps_cost.SAME_CARDS_LABEL} "
                          "(n + k) as a dotted curve below the PS curve")
