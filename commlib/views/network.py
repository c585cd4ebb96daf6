"""Pictures of topologies with each link coloured by the load a collective puts on it, and the
placement calculator.

Links are coloured with matplotlib's ``viridis`` map (perceptually uniform,
and readable under the common colour-vision deficiencies) by the bytes on their
busier direction; idle links are drawn light grey and dashed. A step-by-step
scrubber counts flows instead of bytes, so it uses a map of its own (shades of
purple, ``FLOWS_CMAP``): one colour scale, one meaning. Node kinds
differ in shape as well as colour (Okabe-Ito palette), and every figure has
a legend and a colour bar. Wrap-around links of a torus are drawn as arcs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch

from .. import hardware
from ..network import calculators as network_calculators
from ..network import placement, topology
from ..units import check_count, format_size, format_time
from .animation import sweep_html
from .calculator import Calculator, dropdown, make_calculator, text, toggle
from .plots import PALETTE, figure, style
from .tables import folded, links_table, markdown_table

__all__ = [
    "TIE_WITHIN",
    "crowded_links",
    "lead_words",
    "draw_topology",
    "topology_figure",
    "compare_figure",
    "rings_figure",
    "max_min_figure",
    "steps_sweep",
    "grid_figure",
    "gallery_figure",
    "ps_star_figure",
    "host_flows",
    "host_flows_figure",
    "links_overview",
    "ring_check_table",
    "sharing_table",
    "hierarchy_table",
    "hierarchy_trend_table",
    "grid_facts_table",
    "ring_claims_table",
    "leaf_order_setting",
    "example_lists_table",
    "claims_table",
    "placement_figure",
    "placement_calculator",
    "placement_sweep",
]

CMAP = "viridis"
#: The colour scale of flow counts (the step scrubber): purples from a visible light shade up, never viridis's bytes.
FLOWS_CMAP = mpl.colors.LinearSegmentedColormap.from_list("flows", mpl.colormaps["Purples"](np.linspace(0.35, 1.0, 64)))

#: Switches in a neutral grey, outside :data:`CMAP`'s range, so that no switch reads as a link's load.
SWITCH_GREY = "#8C8C8C"

_KIND = {  # marker, colour, legend label
    "node": ("o", PALETTE["blue"], "rank"),
    "gpu": ("s", PALETTE["blue"], "GPU (rank)"),
    "cpu": ("h", PALETTE["orange"], "CPU socket + memory"),
    "switch": ("D", SWITCH_GREY, "switch"),
    "nic": ("^", PALETTE["vermillion"], "NIC"),
    "server": ("p", PALETTE["orange"], "parameter server"),
}


#: Two times whose ratio is within this of 1 are called a tie in the prose: 0.2 %, finer than the start-ups
#: behind them are known (hardware.py gives them as orders of magnitude).
TIE_WITHIN = 0.002


def lead_words(gain: float, within: float = TIE_WITHIN) -> str:
    """Who leads, in words, from ``gain`` = the flat ring's time over the hierarchical all-reduce's.

    >>> lead_words(1.05), lead_words(0.999), lead_words(0.9)
    ('the hierarchy leads', 'the two tie', 'the flat ring leads')
    """
    if not gain > 0:
        raise ValueError(f"gain must be a ratio of times > 0; got {gain!r}")
    return "the two tie" if abs(gain - 1) < within else "the hierarchy leads" if gain > 1 else "the flat ring leads"


def _label(node, data) -> str:
    if data.get("kind") == "server":
        return "PS"
    if data.get("rank") is not None:
        return str(data["rank"])
    if data.get("kind") == "switch" and str(node)[:1] == "s" and "." in str(node):
        return ""
    name = str(node).split(".")[-1]
    for prefix, short in (("cpu", "C"), ("pcie", "P")):
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return short + name[len(prefix):]
    return {"nvswitch": "NVS", "hub": "sw", "nic": "NIC"}.get(name, name)


def draw_topology(ax, g, mapped: topology.Mapped | None = None, loads: Mapping | None = None,
                  vmax: float | None = None, title: str = "", node_size: float = 260, labels: bool = True,
                  equal: bool = True, fontsize: float = 7, title_size: float = 10, cmap=None):
    """Draw topology ``g`` on ``ax``; colour links by ``loads`` (bytes per link, busier direction) or by
    ``mapped.undirected_load()``. Node labels are ``fontsize`` points, the title ``title_size``.
    ``cmap`` is the colour map (default :data:`CMAP`). Returns the colour normalisation used (for a colour bar)."""
    topology.check_topology(g)
    if loads is None:
        loads = mapped.undirected_load() if mapped is not None else {}
    top = vmax if vmax is not None else max(list(loads.values()) + [1])
    norm = mpl.colors.Normalize(vmin=0, vmax=top)
    cmap = mpl.colormaps[CMAP] if cmap is None else cmap
    pos = {v: d["pos"] for v, d in g.nodes(data=True)}
    for u, v, d in topology.links_of(g):
        load = loads.get((u, v), loads.get((v, u), 0))
        color = cmap(norm(load)) if load > 0 else "#BBBBBB"
        style_ = "-" if load > 0 else "--"
        width = 3.2 if load > 0 else 1.2
        if d.get("wrap") or d.get("arc"):
            patch = FancyArrowPatch(pos[u], pos[v], arrowstyle="-", connectionstyle="arc3,rad=0.35",
                                    color=color, lw=width, linestyle=style_, zorder=1)
            ax.add_patch(patch)
        else:
            ax.plot([pos[u][0], pos[v][0]], [pos[u][1], pos[v][1]], color=color, lw=width, ls=style_, zorder=1,
                    solid_capstyle="round")
    kinds = sorted({d["kind"] for _, d in g.nodes(data=True)})
    for kind in kinds:
        marker, color, _ = _KIND.get(kind, ("o", PALETTE["black"], kind))
        nodes = [v for v, d in g.nodes(data=True) if d["kind"] == kind]
        ax.scatter([pos[v][0] for v in nodes], [pos[v][1] for v in nodes], s=node_size, marker=marker, c=color,
                   edgecolors="black", linewidths=0.8, zorder=3)
        if labels:
            for v in nodes:
                text = _label(v, g.nodes[v])
                if kind == "nic":           # wider than its triangle: below left, clear of its links up and down right
                    ax.annotate(text, pos[v], xytext=(-5, -5), textcoords="offset points", ha="right", va="top",
                                fontsize=fontsize, zorder=4)
                elif kind == "switch" and g.nodes[v]["rank"] is None and len(text) > 2 and not any(
                        pos[w][1] > pos[v][1] for w in g.adj[v]):   # a top switch's long name: below left, under its links
                    ax.annotate(text, pos[v], xytext=(-6, -7), textcoords="offset points", ha="right", va="top",
                                fontsize=fontsize, zorder=4)
                else:
                    ax.annotate(text, pos[v], ha="center", va="center", fontsize=fontsize,
                                color="white" if kind in ("node", "gpu") else "black", zorder=4)
    ax.set_title(title, fontsize=title_size)
    if equal:
        ax.set_aspect("equal", adjustable="datalim")
    ax.margins(0.08)
    ax.axis("off")
    return norm


def _handles(graphs: Sequence) -> list:
    kinds = sorted({d["kind"] for h in graphs for _, d in h.nodes(data=True)})
    handles = [Line2D([], [], marker=_KIND[k][0], color="none", markerfacecolor=_KIND[k][1], markeredgecolor="black",
                      markersize=8, label=_KIND[k][2]) for k in kinds if k in _KIND]
    handles.append(Line2D([], [], color="#BBBBBB", ls="--", lw=1.2, label="idle link"))
    return handles


def _legend(fig, ax, g, norm, unit_label: str, graphs: Sequence = (), fontsize: float = 8):
    handles = _handles((g, *graphs))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(5, len(handles)),
              fontsize=fontsize, frameon=False)
    sm = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(vmin=norm.vmin / 1e6, vmax=norm.vmax / 1e6), cmap=CMAP)
    bar = fig.colorbar(sm, ax=ax, shrink=0.75, pad=0.02)
    bar.set_label(unit_label, fontsize=fontsize)
    bar.ax.tick_params(labelsize=fontsize)


def topology_figure(g, mapped: topology.Mapped | None = None, title: str = "", width: float = 6.4,
                    height: float = 4.0, unit_label: str = "MB on the link's busier direction (whole run)",
                    node_size: float = 260, equal: bool = True):
    """One topology, links coloured by total load (bytes per direction, the busier one), with legend."""
    fig, ax = figure(width, height)
    norm = draw_topology(ax, g, mapped, title=title, node_size=node_size, equal=equal)
    _legend(fig, ax, g, norm, unit_label)
    return fig


def compare_figure(panels: Sequence[tuple], width: float = 9.0, height: float = 3.6,
                   unit_label: str = "MB on the link's busier direction (whole run)"):
    """Side-by-side topologies ``[(graph, mapped, title), ...]`` on one colour scale."""
    style()
    fig, axes = plt.subplots(1, len(panels), figsize=(width, height))
    axes = [axes] if len(panels) == 1 else list(axes)
    top = max([max(m.undirected_load().values(), default=1) for _, m, _ in panels] + [1])
    for ax, (g, m, title) in zip(axes, panels):
        norm = draw_topology(ax, g, m, vmax=top, title=title)
    _legend(fig, axes[-1], panels[-1][0], norm, unit_label, [p[0] for p in panels])
    fig.tight_layout()
    return fig


def rings_figure(g, rings: Sequence[Sequence], width: float = 8.0, height: float = 4.2, fontsize: float = 10):
    """The distinct rings of ``rings`` (orders of ``g``'s nodes; a ring and its reverse count once), one panel each,
    every ring's links drawn in a colour of its own and the other links dashed grey."""
    distinct: list[tuple] = []
    seen: list[frozenset] = []
    for order in rings:
        hops = frozenset(frozenset(h) for h in zip(order, (*order[1:], order[0])))
        if hops not in seen:
            seen.append(hops)
            distinct.append(tuple(order))
    if not distinct:
        raise ValueError("rings must hold at least one ring")
    colours = [PALETTE["orange"], PALETTE["purple"], PALETTE["vermillion"], PALETTE["sky"]]
    style()
    fig, axes = plt.subplots(1, len(distinct), figsize=(width, height))
    axes = [axes] if len(distinct) == 1 else list(axes)
    handles = []
    for j, (ax, order, hops) in enumerate(zip(axes, distinct, seen)):
        colour = colours[j % len(colours)]
        loads = {(u, v): 1 for u, v, _ in topology.links_of(g) if frozenset((u, v)) in hops}
        draw_topology(ax, g, loads=loads, vmax=1, cmap=mpl.colors.ListedColormap([colour]), node_size=380,
                      fontsize=fontsize - 1, title_size=fontsize + 1,
                      title=f"ring {j + 1}: " + " ".join(map(str, order[:4])) + " ...")
        handles.append(Line2D([], [], color=colour, lw=3.2, label=f"ring {j + 1}'s links"))
    handles += [h for h in _handles([g]) if h.get_label() != "idle link"]
    handles.append(Line2D([], [], color="#BBBBBB", ls="--", lw=1.2, label="a link of another ring"))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=fontsize - 1, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def max_min_figure(paths: Mapping[str, Sequence[tuple]], capacity: Mapping[tuple, float],
                   names: Mapping[tuple, str] | None = None, width: float = 6.4, height: float = 2.8):
    """Flows on a line of links (``paths``: each flow's links as ``(u, v)`` pairs of consecutive node numbers), one
    arrow a flow over the links it crosses, labelled with its max-min rate (:func:`topology.max_min_rates`) in GB/s
    and the full link that holds it back. ``names`` names the links (default ``"link u → v"``)."""
    rates = topology.max_min_rates(paths, capacity)
    names = {e: f"link {e[0]} → {e[1]}" for e in capacity} | dict(names or {})
    nodes = sorted({v for p in paths.values() for e in p for v in e})
    fig, ax = figure(width, height)
    for (u, v), cap in capacity.items():
        ax.plot([u, v], [0, 0], color="#BBBBBB", lw=10, solid_capstyle="butt", zorder=1)
        ax.annotate(f"{names[u, v]}: {cap / 1e9:g} GB/s", ((u + v) / 2, -0.2), ha="center", va="top", fontsize=9)
    ax.scatter(nodes, [0] * len(nodes), s=260, c=PALETTE["blue"], edgecolors="black", zorder=3)
    for v in nodes:
        ax.annotate(str(v), (v, 0), ha="center", va="center", color="white", fontsize=9, zorder=4)
    colours = [PALETTE[k] for k in ("orange", "vermillion", "purple", "green", "sky", "black")]
    for j, (name, path) in enumerate(paths.items()):
        rate = rates[name][0]
        start, end = min(u for u, _ in path), max(v for _, v in path)
        y = 0.35 + 0.32 * j
        colour = colours[j % len(colours)]
        ax.annotate("", xy=(end - 0.06, y), xytext=(start + 0.06, y),
                    arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 2.4})
        full = [e for e in path if sum(rates[f][0] for f, q in paths.items() if e in q) >= capacity[e] * (1 - 1e-9)]
        held = f", held by {names[full[0]]}" if full else ""
        ax.annotate(f"{name}: {rate / 1e9:.2f} GB/s{held}", (end + 0.08, y), va="center", fontsize=9, color="black")
    ax.set_xlim(min(nodes) - 0.3, max(nodes) + 1.6)
    ax.set_ylim(-0.5, 0.35 + 0.32 * len(paths))
    ax.axis("off")
    return fig


def _three_figures(nbytes: int) -> str:
    """A flow's bytes to three significant figures, so that a chunk cut to whole elements reads as the share it is.

    >>> _three_figures(999_936), _three_figures(499_968), _three_figures(2 * 10**6)
    ('1.00 MB', '500 kB', '2.00 MB')
    """
    rounded = float(f"{nbytes:.3g}")
    scale = next((f for f in (1e12, 1e9, 1e6, 1e3) if rounded >= f), 1.0)
    if scale == 1.0:                    # whole bytes
        return format_size(rounded, digits=0)
    return format_size(rounded, digits=max(0, 2 - int(np.floor(np.log10(rounded / scale)))))


def steps_sweep(g, mapped: topology.Mapped, title: str = "", alt: str = ""):
    """A scrubber over the steps of a mapped collective: each frame colours the links by that step's flows,
    and its title gives the step's time, the bytes of its slowest flow and how many flows share its
    busiest link direction."""
    top = max((max(s.link_flows.values(), default=0) for s in mapped.steps), default=1)
    index = {s.step: s for s in mapped.steps}

    def draw(step):
        s = index[step]
        loads: dict = {}
        for (u, v), k in s.link_flows.items():
            key = (u, v) if (u, v) in g.edges else (v, u)
            loads[key] = max(loads.get(key, 0), k)
        fig, ax = figure(6.4, 4.2)
        busiest = max(s.link_flows.values(), default=0)
        what = (f"\n{_three_figures(s.slowest.nbytes)} a flow, {busiest} flow{'s' if busiest != 1 else ''} "
                "on the busiest link direction" if s.slowest is not None else "")
        norm = draw_topology(ax, g, loads=loads, vmax=max(top, 2), cmap=FLOWS_CMAP,
                             title=f"{title} step {step}: {format_time(s.time)}{what}")
        kinds = sorted({d["kind"] for _, d in g.nodes(data=True)})
        handles = [Line2D([], [], marker=_KIND[k][0], color="none", markerfacecolor=_KIND[k][1],
                          markeredgecolor="black", markersize=8, label=_KIND[k][2]) for k in kinds if k in _KIND]
        handles.append(Line2D([], [], color="#BBBBBB", ls="--", lw=1.2, label="idle link"))
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4, fontsize=8,
                  frameon=False)
        sm = mpl.cm.ScalarMappable(norm=norm, cmap=FLOWS_CMAP)
        bar = fig.colorbar(sm, ax=ax, shrink=0.75, pad=0.02, ticks=range(0, int(max(top, 2)) + 1))
        bar.set_label("flows sharing the busier direction", fontsize=8)
        return fig

    return sweep_html(draw, [s.step for s in mapped.steps], label=lambda s: f"step {s}", alt=alt)


def grid_figure(panels: Sequence[tuple], ncols: int = 2, width: float = 7.5, height: float = 7.4,
                unit_label: str = "MB on the link's busier direction (whole run)", fontsize: float = 10,
                node_size: float = 480, top: float = 0.92):
    """Topologies ``[(graph, mapped, title), ...]`` in a grid of ``ncols`` columns on one colour scale.

    Made to be read at a page's width: node labels, titles, legend and
    colour bar are ``fontsize`` points or more, and the legend and colour bar
    sit below the grid, across its whole width.
    """
    style()
    ncols = check_count("ncols", ncols, minimum=1)
    rows = -(-len(panels) // ncols)
    fig = plt.figure(figsize=(width, height))
    grid = fig.add_gridspec(rows, ncols, left=0.03, right=0.97, top=top, bottom=0.2, hspace=0.35, wspace=0.08)
    top = max([max(m.undirected_load().values(), default=1) for _, m, _ in panels] + [1])
    norm = None
    for i, (g, m, title) in enumerate(panels):
        ax = fig.add_subplot(grid[i // ncols, i % ncols])
        norm = draw_topology(ax, g, m, vmax=top, title=title, node_size=node_size, fontsize=fontsize,
                             title_size=fontsize + 1)
    sm = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(vmin=norm.vmin / 1e6, vmax=norm.vmax / 1e6), cmap=CMAP)
    cax = fig.add_axes((0.12, 0.115, 0.76, 0.022))
    bar = fig.colorbar(sm, cax=cax, orientation="horizontal")
    cax.grid(False)
    bar.set_label(unit_label, fontsize=fontsize)
    bar.ax.tick_params(labelsize=fontsize)
    handles = _handles([p[0] for p in panels])
    fig.legend(handles=handles, loc="lower center", ncol=min(5, len(handles)), fontsize=fontsize,  # one row, under the bar's label
               frameon=False, bbox_to_anchor=(0.5, 0.0))
    return fig


def gallery_figure(runs: Sequence[tuple]):
    """Topologies carrying one all-reduce each (:func:`commlib.network.topology.gallery_runs`), in a 2-column grid on
    one colour scale; each title says where the ranks sit and gives the run's time and whether flows shared a link."""
    panels = []
    for g, res, what in runs:
        share = "no link shared" if res.max_flows <= 1 else f"up to {res.max_flows} flows share a link"
        panels.append((g, res, f"{what}\n{format_time(res.time)}; {share}"))
    fig = grid_figure(panels, ncols=2, height=8.0, top=0.89)
    for ax, (g, res, _) in zip(fig.axes, runs):      # the panels come first, then the colour bar
        if res.max_flows > 1:
            pos = {v: d["pos"] for v, d in g.nodes(data=True)}
            for u, v in crowded_links(res):     # beside the link's middle, on its upper side, leaving its colour seen
                (x0, y0), (x1, y1) = pos[u], pos[v]
                nx_, ny_ = -(y1 - y0), x1 - x0
                sign = 1.0 if ny_ > 0 or (ny_ == 0 and nx_ > 0) else -1.0
                norm_ = float(np.hypot(nx_, ny_)) or 1.0
                ax.annotate(f"{res.max_flows} flows", ((x0 + x1) / 2, (y0 + y1) / 2),
                            xytext=(14 * sign * nx_ / norm_, 14 * sign * ny_ / norm_), textcoords="offset points",
                            ha="center", va="center", fontsize=9, zorder=5)
    return fig


def crowded_links(mapped: topology.Mapped) -> list[tuple]:
    """The links where the most flows ever shared one direction in one step (``mapped.max_flows``), each link once,
    whichever of its directions was crowded.

    These links can set the pace while carrying fewer bytes over the whole run than others: on a switch tree,
    halving-doubling sends its smallest chunks through the root's links, but with the most flows at once. A figure
    that colours links by bytes shows them cool; this names them. On a 4-rank binary tree, the root's two links:

    >>> from commlib.network import topology
    >>> t = topology.tree(4, 2, "eth_10g")
    >>> run = topology.map_trace(t, topology.allreduce_trace(4, 4 * 10**5, "halving_doubling"))
    >>> run.max_flows, len(crowded_links(run))
    (2, 2)
    """
    links = {tuple(sorted(e, key=str)) for s in mapped.steps for e, k in s.link_flows.items() if k == mapped.max_flows}
    return sorted(links, key=str)


def ps_star_figure(g, run: topology.Mapped, fontsize: float = 10):
    """A parameter-server round on a switch star (:func:`commlib.network.topology.ps_star`'s ``(graph, run)``),
    links coloured by load.

    The title gives the round's time (push, then pull) and the load of the
    server's link against a worker's link, each in one direction.
    """
    server = next(v for v, d in g.nodes(data=True) if d.get("kind") == "server")
    workers = sum(1 for _, d in g.nodes(data=True) if d.get("kind") == "node")
    fig, ax = figure(7.0, 5.0)
    norm = draw_topology(ax, g, run, node_size=520, fontsize=fontsize, title_size=fontsize + 1,
                         title=f"{workers} workers push to and pull from one server: {format_time(run.time)}\n"
                               f"server's link {format_size(run.load('hub', server))}, a worker's link "
                               f"{format_size(run.load('hub', 0))} each way")
    _legend(fig, ax, g, norm, "MB on the link's busier direction (whole round)", fontsize=fontsize)
    fig.tight_layout()
    return fig


def host_flows(g, mapped: topology.Mapped, flows: Sequence[topology.Flow], host: int = 0) -> dict:
    """Which flows cross each link direction inside host ``host``: ``{(u, v): [flow label, ...]}``.

    A flow's route (``mapped.routes``) is cut to the host's own nodes (``h<host>.*``); whatever lies beyond them,
    the network and the other hosts, is one node, ``"beyond"``. So a flow to the peer host's memory crosses
    ``h0.nic -> beyond`` once, however many switches it goes through out there. Idle directions are left out.

    When GPU 0, under the network card's PCIe switch, does a staged exchange's copies, the link from that switch to
    CPU 0 carries two flows each way: the copy and the network's data go up, their mirrors come down.

    >>> from commlib.network import topology
    >>> c = topology.cluster(2, gpus_per_host=8)
    >>> flows = topology.staged_exchange(c, "h0.gpu0", 10**9)
    >>> on = host_flows(c, topology.map_flows(c, flows), flows)
    >>> len(on["h0.pcie0", "h0.cpu0"]), len(on["h0.cpu0", "h0.pcie0"])
    (2, 2)
    """
    prefix = f"h{check_count('host', host, minimum=0)}."
    out: dict = {}
    for f in flows:
        if (f.src, f.dst) not in mapped.routes:
            raise ValueError(f"flow {f.src!r} -> {f.dst!r} is not in mapped: map these flows first")
        path = [v if str(v).startswith(prefix) else "beyond" for v in mapped.routes[(f.src, f.dst)]]
        path = [v for i, v in enumerate(path) if i == 0 or v != path[i - 1]]
        for u, v in zip(path, path[1:]):
            out.setdefault((u, v), []).append(f.label)
    return out


#: How :func:`host_flows_figure` lays out a host: its tree stretched upwards, so that the links between tiers are long.
_HOST_STRETCH = 1.7


def host_flows_figure(panels: Sequence[tuple], host: int = 0, width: float = 9.0, height: float = 10.4,
                      fontsize: float = 10):
    """One host's PCIe tree per panel, ``[(graph, mapped, flows, title), ...]``, with one arrow per flow on every
    link it crosses (:func:`host_flows`), each direction on its own side, like lanes of a road.

    Every flow has its own colour (Okabe-Ito) and line style, named in the legend; the network and the peer host
    are one box; the NVLinks between GPUs are not drawn (idle in a staged exchange); idle PCIe and socket links
    are grey and dashed.
    """
    style()
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, height))
    axes = [axes] if len(panels) == 1 else list(axes)
    prefix = f"h{host}."
    kinds = {"cpu": "CPU {}", "pcie": "PCIe\nswitch {}", "gpu": "GPU {}"}
    lane = 0.11                                    # data units between an arrow and the link's centre line
    styles = ["-", "--", "-.", ":"]
    colours = [PALETTE[k] for k in ("green", "purple", "sky", "black")]
    names: dict = {}
    for ax, (g, m, flows, title) in zip(axes, panels):
        for f in flows:
            names.setdefault(f.label, len(names))
        nodes = [v for v in g if str(v).startswith(prefix)]
        pos = {v: (g.nodes[v]["pos"][0], _HOST_STRETCH * g.nodes[v]["pos"][1]) for v in nodes}
        nic = next((v for v in nodes if g.nodes[v]["kind"] == "nic"), None)
        top = max(y for _, y in pos.values())
        pos["beyond"] = (max(x for x, _ in pos.values()), top + 0.9)
        for u, v in g.edges():
            if u in pos and v in pos and not (g.nodes[u]["kind"] == g.nodes[v]["kind"] == "gpu"):
                ax.plot(*zip(pos[u], pos[v]), color="#BBBBBB", ls="--", lw=1.2, zorder=1)
        if nic is not None:
            ax.plot(*zip(pos[nic], pos["beyond"]), color="#BBBBBB", ls="--", lw=1.2, zorder=1)
        on = host_flows(g, m, flows, host)
        for (u, v), labels in on.items():
            (x0, y0), (x1, y1) = pos[u], pos[v]
            length = float(np.hypot(x1 - x0, y1 - y0))
            dx, dy = (x1 - x0) / length, (y1 - y0) / length
            rx, ry = dy, -dx                           # the right-hand side of the direction of travel
            cut = min(0.32, 0.3 * length)              # clear of the nodes at both ends
            for k, label in enumerate(labels):
                off = lane * (k + 0.6)
                i = names[label]
                ax.add_patch(FancyArrowPatch((x0 + cut * dx + off * rx, y0 + cut * dy + off * ry),
                                             (x1 - cut * dx + off * rx, y1 - cut * dy + off * ry),
                                             arrowstyle="-|>", mutation_scale=14, lw=2.0, color=colours[i % 4],
                                             linestyle=styles[i % 4], zorder=2))
        for v in nodes:
            kind = g.nodes[v]["kind"]
            marker, colour, _ = _KIND[kind]
            ax.scatter(*pos[v], s=520, marker=marker, c=colour, edgecolors="black", linewidths=0.8, zorder=3)
            name = str(v)[len(prefix):]
            digits = name.lstrip("abcdefghijklmnopqrstuvwxyz")
            word = next((w.format(digits) for k_, w in kinds.items() if name == k_ + digits), "NIC" if kind == "nic"
                        else name)
            if kind == "gpu":
                ax.annotate(digits, pos[v], ha="center", va="center", fontsize=fontsize, color="white", zorder=4)
            elif kind == "switch":
                ax.annotate(word, pos[v], xytext=(-16, 0), textcoords="offset points", ha="right", va="center",
                            fontsize=fontsize - 1, zorder=4)
            else:
                ax.annotate(word, pos[v], xytext=(0, 14), textcoords="offset points", ha="center", va="bottom",
                            fontsize=fontsize, zorder=4)
        bx, by = pos["beyond"]
        ax.annotate("network and\npeer host", (bx, by), ha="center", va="center", fontsize=fontsize, zorder=4,
                    bbox={"boxstyle": "round,pad=0.4", "facecolor": "white", "edgecolor": "black"})
        ax.set_title(title, fontsize=fontsize + 1)
        ax.set_aspect("equal", adjustable="datalim")
        ax.margins(0.06)
        ax.axis("off")
    handles = [Line2D([], [], color=colours[i % 4], ls=styles[i % 4], lw=2.0, label=label) for label, i in names.items()]
    handles += [Line2D([], [], marker=_KIND[k][0], color="none", markerfacecolor=_KIND[k][1], markeredgecolor="black",
                       markersize=9, label=_KIND[k][2].replace(" (rank)", "")) for k in ("gpu", "switch", "cpu", "nic")]
    handles.append(Line2D([], [], color="#BBBBBB", ls="--", lw=1.2, label="idle link"))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=fontsize, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


#: The link presets the chapter's main table shows: the buses, socket link and networks its examples use, and one
#: current generation of each kind; the rest of :data:`hardware.LINKS` sits in a closed box below it.
OVERVIEW_LINKS = ("pcie3_x16", "pcie5_x16", "upi", "nvlink2", "nvlink4", "eth_100g", "ib_ndr")


def links_overview(keys: Sequence[str] = OVERVIEW_LINKS):
    """A short table of ``keys`` (no note on PCIe's counting), then every link preset, note and all, in a dropdown."""
    from IPython.display import Markdown

    short = links_table(keys, note=False, title=f"{len(keys)} of the {len(hardware.LINKS)} link presets")
    full = folded(links_table(), f"All {len(hardware.LINKS)} link presets, and how the PCIe rows are counted")
    return Markdown(f"{short.data}\n\n{full.data}")


def ring_check_table(rows: Sequence[Mapping]):
    """:func:`commlib.network.topology.ring_check`'s rows: mapped ring all-reduce against the alpha-beta formula."""
    item = hardware.link(rows[0]["link"])
    body = [[r["n"], format_time(r["mapped"], 4), format_time(r["formula"], 4),
             f"{abs(r['mapped'] / r['formula'] - 1):.1e}", r["max_flows"]] for r in rows]
    return markdown_table(["ranks n", "mapped onto links", "alpha-beta formula", "relative difference",
                           "most flows per link direction"], body,
                          caption=f"Ring all-reduce of {format_size(rows[0]['nbytes'], binary=True)} on a ring of "
                                  f"{item.name}")


def sharing_table(results: Mapping, workloads: Sequence[str] = ("mesh one way", "mesh both ways", "byteps")):
    """Equal shares against max-min fair sharing, from :func:`commlib.network.topology.sharing_comparison`'s results,
    for the ``workloads`` named (its keys: ``"mesh one way"``, ``"mesh both ways"``, ``"byteps"``)."""
    labels = {"mesh one way": "ring all-reduce on a 4 x 4 mesh of " + placement.nvlink2_grid_words(short=True)
                              + ", row order",
              "mesh both ways": "the same, a second ring the other way",
              "byteps": "one BytePS round on a switch star"}
    unknown = [w for w in workloads if w not in labels]
    if unknown or not workloads:
        raise ValueError(f"workloads must be some of {tuple(labels)}, got {tuple(workloads)!r}")
    rows = []
    for key in workloads:
        label = labels[key]
        equal, fair = results[key, "equal"], results[key, "max-min"]
        rows.append([label, format_time(equal), format_time(fair), f"{equal / fair:.2f}"])
    return markdown_table(["workload", "equal shares", "max-min fair", "equal / max-min"], rows,
                          caption="One model against the other, on the same flows")


def hierarchy_table(runs: Mapping):
    """Flat ring against hierarchical all-reduce (:func:`commlib.network.topology.hierarchy_runs`), mapped onto links."""
    rows = []
    for algorithm in ("ring", "hierarchical"):
        res = runs[algorithm]
        rows.append([algorithm, format_time(res.time), format_size(res.load("h0.nic", "net")), len(res.steps),
                     " -> ".join(str(v) for v in res.bottleneck)])
    return markdown_table(["algorithm", "time", "bytes host 0 sends into the network", "steps",
                           "bottleneck link"], rows,
                          caption=f"All-reduce of {format_size(runs['nbytes'], binary=True)}, {runs['hosts']} hosts x "
                                  f"{runs['per_host']} GPUs, {hardware.link(runs['network']).name}")


def hierarchy_trend_table(trend: Mapping[int, Mapping[str, float]], per_host: int = 8, nbytes: int = 64 * 2**20,
                          network: str = "eth_100g", other: Mapping[int, Mapping[str, float]] | None = None,
                          other_network: str = "ib_edr"):
    """Flat ring against hierarchical all-reduce over the number of hosts
    (:func:`commlib.experiments.network.hierarchy_trend` run with the same ``per_host``, ``nbytes`` and ``network``).

    ``other``, where given, is the same trend run on ``other_network`` for some of the host counts: its time gain
    becomes a last column, blank on the rows it lacks, so the two networks' start-ups can be compared side by side.
    """
    rows = [[hosts, hosts * per_host, format_time(r["flat"]), format_time(r["hierarchical"]), f"{r['gain']:.2f}",
             f"{r['bytes']:.3f}"] + ([f"{other[hosts]['gain']:.3f}" if hosts in other else ""] if other else [])
            for hosts, r in sorted(trend.items())]
    link, other_link = hardware.link(network), hardware.link(other_network)
    head = ["hosts", "GPUs", "flat ring", "hierarchical", f"time gain ({format_time(link.latency)} start-up)",
            "bytes through host 0's card, flat / hierarchical"]
    if other:
        head.append(f"time gain, {other_link.name} ({format_time(other_link.latency)} start-up)")
    return markdown_table(head, rows,
                          caption=f"Flat ring against hierarchical all-reduce as hosts are added: "
                                  f"{format_size(nbytes, binary=True)} per GPU, {per_host} GPUs per host, "
                                  f"{link.name}, start-ups included"
                                  + (f"; the last column runs the same rate with {other_link.name}'s start-up"
                                     if other else ""))


def grid_facts_table(rows: Sequence[Mapping]):
    """:func:`commlib.experiments.network.grid_facts`'s rows: what a mesh and a torus of the same size differ in."""
    body = [[r["grid"], r["nodes"], r["links"], r["diameter"], r["bisection"], "yes" if r["closed_ring"] else "no",
             format_time(r["all_to_all_bound"])] for r in rows]
    return markdown_table(["grid", "nodes", "links", "diameter (hops)", "bisection width (links)",
                           "closed ring of single links", "all-to-all at least"], body,
                          caption="Graph facts of the grids, and the least time an all-to-all of 64 MiB per rank "
                                  f"needs across the bisection, on {placement.nvlink2_grid_words()}")


def ring_claims_table(verdicts: Sequence):
    """Each ring comparison's contenders at their best: the ring order and ways each was tuned to, and the time.

    ``verdicts`` are :class:`commlib.experiments.claims.Verdict` s of the chapter's ring claims.
    """
    metrics = {v.claim.metric for v in verdicts}
    if len(metrics) != 1:
        raise ValueError(f"verdicts must share one metric, got {sorted(metrics)}")
    body = []
    for v in verdicts:
        question = v.claim.question
        for name, best in v.best.items():
            body.append([question, name, _ring_settings(best.config), f"{best.mean:.1f}"])
            question = ""  # each question on its first row only
    return markdown_table(["question", "contender", "its best settings", f"time ({metrics.pop()})"], body,
                          caption=f"Each contender at its best, on the same {placement.nvlink2_grid_words(short=True)}, "
                                  "64 MiB per rank, unless its question says otherwise")


def leaf_order_setting(config: dict) -> str:
    """A switch-tree contender's best rank order in plain words: the ranks on the leaves, left to right.

    ``config["order"]`` names one of :func:`commlib.experiments.network.level_placements`; a contender tuned
    over pipeline chunks alone (the double binary tree, laid out on the fastest of all placements) is named by
    its chunks.

    >>> leaf_order_setting({"chunks": 32})
    'the fastest of all placements, 32 pipeline chunks'
    >>> leaf_order_setting({"order": "distances 4, 2, 1 from the leaf switches up"})
    'ranks on the leaves, left to right: 0, 4, 2, 6, 1, 5, 3, 7'
    >>> leaf_order_setting({"order": "distances 1, 2, 4 from the leaf switches up"})
    'ranks in order on the leaves: 0, 1, 2, 3, 4, 5, 6, 7'
    """
    from ..experiments import network as network_runs

    if "order" not in config and "chunks" in config:
        return f"the fastest of all placements, {config['chunks']} pipeline chunks"
    orders = network_runs.level_placements(8)
    if config.get("order") not in orders:
        raise ValueError(f"order must be one of {sorted(orders)}, got {config.get('order')!r}")
    leaf_of = orders[config["order"]]
    leaves = sorted(range(len(leaf_of)), key=lambda r: leaf_of[r])
    words = ", ".join(map(str, leaves))
    return f"ranks in order on the leaves: {words}" if leaves == sorted(leaves) else \
        f"ranks on the leaves, left to right: {words}"


def _ring_settings(config: dict) -> str:
    """A ring contender's best settings in words: its order and ways as tuned, or a chain's nodes and chunks."""
    if "layout" in config:
        return f"ranks 0-3 on nodes {config['layout']}, {config['q']} pipeline chunks"
    return ", ".join(str(x) for x in config.values()) or "-"


# ---------------------------------------------------------------------------- placement


def claims_table():
    """Note 000's link figures next to the one-direction bandwidth of the matching preset."""
    rows = []
    for c in placement.link_claims():
        per = c.per_direction
        rows.append([c.what, f"{c.rate / 1e9:.2f} GB/s", "-" if per is None else f"{per / 1e9:.2f} GB/s",
                     "-" if per is None else f"{c.rate / per:.2f}", c.reading])
    return markdown_table(["note 000 says", "taken literally", "preset, one direction", "ratio", "how to read it"],
                          rows, caption="Link figures in note 000, read in bytes per second per direction")


def example_lists_table():
    """Note 000's per-host lists, an illustrative cluster: MB/s as printed and the ratio intra / inter."""
    rows = []
    for h, (a, e) in enumerate(zip(placement.EXAMPLE_INTRA_MB_S, placement.EXAMPLE_INTER_MB_S)):
        rows.append([h, f"{a:.10g}", f"{e:.10g}", f"{a / e:.2f}"])
    return markdown_table(["host", "intra (MB/s, as printed)", "inter (MB/s, as printed)", "intra / inter"], rows,
                          caption="An illustrative mixed cluster of eight hosts (the appendix says where it comes from), "
                                  "one entry per host; read here, an inference, as rates achieved, not link "
                                  "capacities")


def _placement_bars(ax, names: Sequence[str], ests: Sequence[placement.Estimate]) -> None:
    """One bar per estimate, coloured by what bounds it: blue inside a host, vermilion a network link; a run whose
    phases are charged one after another (a hierarchical all-reduce) is two stacked segments, its phase inside a
    host then its network phase, each in its link's colour."""
    colour = {"inside": PALETTE["blue"], "network": PALETTE["vermillion"], "intra": PALETTE["blue"],
              "inter": PALETTE["vermillion"]}
    for i, e in enumerate(ests):
        left = 0.0
        for where, _, seconds in (e.phases or ((e.bottleneck_kind or "intra", None, e.time),)):
            ax.barh(i, seconds, left=left, color=colour[where], edgecolor="white", linewidth=0.8)
            left += seconds
    ax.set_yticks(range(len(names)), names)


def _placement_handles() -> list:
    """The legend of :func:`_placement_bars`: a bar of both colours is a run of two phases, one after the other."""
    return [Line2D([], [], color=PALETTE["blue"], lw=6, label="time bounded inside a host"),
            Line2D([], [], color=PALETTE["vermillion"], lw=6, label="time bounded by a network link")]


def _bound_words(e: placement.Estimate) -> str:
    """What bounds an estimate, in words; for phases in series, each phase's link."""
    if not e.phases:
        return e.bottleneck
    (_, h_in, _), (_, h_net, _) = e.phases
    return f"inside host {h_in}, then host {h_net}'s card"


def placement_figure(ranked: Sequence[tuple[str, placement.Estimate]], width: float = 7.0, height: float = 3.4):
    """Horizontal bars: candidate placements ranked by synchronisation time, each labelled with its bottleneck.

    ``ranked`` is :func:`commlib.network.placement.rank_placements` (name, estimate), fastest first."""
    ranked = list(ranked)
    fig, ax = figure(width, height)
    ests = [e for _, e in ranked][::-1]
    names = [f"{name}\n{_bound_words(e)}" for (name, _), e in zip(ranked[::-1], ests)]   # what bounds it, under its name
    _placement_bars(ax, names, ests)
    for i, e in enumerate(ests):      # one unit, seconds, on every bar
        ax.annotate(f"{e.time:.2f} s", (e.time, i), xytext=(4, 0), textcoords="offset points", va="center",
                    fontsize=8)
    ax.set_xlim(0, max(e.time for e in ests) * 1.2)
    ax.tick_params(axis="y", labelsize=8)
    ax.set_xlabel("synchronisation time per iteration (s)")
    ax.legend(handles=_placement_handles(), loc="upper right", fontsize=8)
    ax.grid(axis="y", visible=False)
    fig.tight_layout()
    return fig


def placement_claims_table(verdicts: Sequence):
    """Each placement's all-reduce and parameter server at their best, their times and the verdict.

    ``verdicts`` are the chapter's placement claims (:data:`commlib.experiments.network.PLACEMENT_KEYS`)."""
    from ..experiments import network as network_runs

    body = []
    for name, v in zip(network_runs.PLACEMENTS, verdicts):
        est = {c: network_runs.placement_run(name, c, v.best[c].config["option"], v.claim.shared["model"])
               for c in (network_runs.AR_NAME, network_runs.PS_NAME)}
        ar, ps = est[network_runs.AR_NAME], est[network_runs.PS_NAME]
        verdict = "tie" if v.tied else f"{v.winner}, {v.best[v.runner_up].mean / v.best[v.winner].mean:.2f} times faster"
        body.append([name, network_runs.scheme_phrase(ar), f"{ar.time:.2f} s", network_runs.scheme_phrase(ps),
                     f"{ps.time:.2f} s", verdict])
    return markdown_table(["placement", "all-reduce at its best", "time", "parameter server at its best", "time",
                           "verdict"], body,
                          caption="Four workers training ResNet-50 (fp32 gradients) on the chapter's eight hosts: each scheme "
                                  "at its best on the same hosts, links and cards")


def placement_calculator(cluster: placement.Cluster | None = None, where: str = "host3:2, host1:2",
                         model: str = "resnet50", dtype: str = "fp32", mode: str = "allreduce",
                         algorithm: str = "auto", pipelined: bool = True) -> Calculator:
    """Placement -> synchronisation time and bottleneck, on note 000's eight hosts by default.

    ``pipelined`` (parameter server only): push and pull overlap, as in
    :func:`commlib.cost.ps_time`; unticked, the pull waits for the whole push.
    """
    compute = network_calculators.placement_results  # the model-layer function; it runs in the page as well
    if cluster is None:
        cluster = placement.example_cluster()
    else:  # bind the cluster: the function left takes exactly the controls
        compute = functools.partial(network_calculators.cluster_placement_results, cluster)
    controls = {
        "where": text(where, "workers (host:count)", "host3:2, host1:2"),
        "model": dropdown([(item.name, key) for key, item in hardware.MODELS.items()], model, "model"),
        "dtype": dropdown(list(hardware.DTYPE_BYTES), dtype, "gradient dtype"),
        "mode": dropdown([("all-reduce", "allreduce"), ("parameter server: one unsharded server, a sketch, not its best", "ps")], mode,
                         "scheme"),
        "algorithm": dropdown(list(placement.ALGORITHMS), algorithm, "all-reduce algorithm"),
        "pipelined": toggle(pipelined, "PS: push and pull overlap"),
    }
    return make_calculator(compute, controls, title="Placement estimator",
                           note=f"Hosts 0-{cluster.hosts - 1}, {cluster.slots[0]} slots each; per-host bandwidths "
                                "per direction (1 MB = 10^6 B); latency ignored. The parameter server is a sketch: one "
                                "unsharded server, not sharded over the workers as a parameter server at its best is.")


def placement_sweep(sweep: Mapping):
    """Precomputed: for each number of workers, the best placements for all-reduce and for a PS.

    ``sweep`` is :func:`commlib.network.placement.best_placements_by_workers` (push and pull overlapped)."""
    runs, top, model, dtype = sweep["runs"], sweep["top"], sweep["model"], sweep["dtype"]
    workers = list(runs)

    def draw(n):
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.2))
        style()
        for ax, mode, title in zip(axes, ("allreduce", "ps"), ("all-reduce", "PS (unsharded sketch)")):
            best = runs[n][mode][::-1]
            names = [" ".join(f"h{h}:{c}" for h, c in enumerate(e.counts) if c) for e in best]
            _placement_bars(ax, names, best)
            for i, e in enumerate(best):
                ax.annotate(format_time(e.time), (e.time, i), xytext=(3, 0), textcoords="offset points",
                            va="center", fontsize=8)
            ax.set_xlim(0, max(e.time for e in best) * 1.45)
            ax.set_title(f"{title}: {top} fastest", fontsize=9)
            ax.set_xlabel("synchronisation time per iteration (s)")
            ax.tick_params(axis="y", labelsize=8)
        fig.legend(handles=_placement_handles(), loc="lower center", ncol=3, fontsize=8, frameon=False)
        fig.suptitle(f"{hardware.model(model).name}, {dtype}, {n} workers", fontsize=10)
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        return fig

    return sweep_html(draw, workers, label="{} workers", start=min(2, len(workers) - 1),
                      alt="Bar charts of the fastest placements of workers on the chapter's eight hosts, for all-reduce "
                          "and for a parameter server")


def ecmp_table(rows: Mapping, draws: int, caption: str = ""):
    """ECMP's cost by hashed flows per card (:func:`commlib.network.ecmp.busiest_uplink_share` over hash draws):
    ``rows[q] = (mean, 5th percentile, 95th percentile)`` of the step's time over the collision-free spread's."""
    return markdown_table(["hashed flows per card (channels on the card × queue pairs per connection)",
                           f"step time / the spread's (busiest uplink's flows over flows a card): mean of {draws} draws",
                           "5th percentile", "95th percentile"],
                          [[q, f"{m:.1f}", f"{lo:.2f}", f"{hi:.2f}"] for q, (m, lo, hi) in rows.items()], caption)
