"""Tests for commlib.views.network (figures, tables, calculator) and chapter 6's self-checks."""

from __future__ import annotations

import re

import matplotlib
import matplotlib.text

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from commlib import hardware  # noqa: E402
from commlib.check import check, expected, questions  # noqa: E402
from commlib.network import calculators as network_calculators
from commlib.network import (
    placement,
    topology,  # noqa: E402
)
from commlib.network.topology import Flow  # noqa: E402
from commlib.questions import ch06 as ch06_questions  # noqa: E402
from commlib.units import format_time  # noqa: E402
from commlib.views import network as tview  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_idle_links_are_dashed_and_the_busiest_gets_the_top_colour():
    g = topology.ring(4, "eth_10g")
    res = topology.map_flows(g, [Flow(0, 0, 1, 300), Flow(0, 1, 2, 100)])
    fig, ax = plt.subplots()
    norm = tview.draw_topology(ax, g, res)
    dashed = [line for line in ax.lines if line.get_linestyle() == "--"]
    solid = [line for line in ax.lines if line.get_linestyle() == "-"]
    assert len(dashed) == 2 and len(solid) == 2          # links 2-3 and 3-0 carry nothing
    assert norm.vmax == 300
    top = matplotlib.colormaps[tview.CMAP](1.0)
    colours = {tuple(round(c, 6) for c in matplotlib.colors.to_rgba(line.get_color())) for line in solid}
    assert tuple(round(c, 6) for c in top) in colours


def test_wraparound_links_are_drawn_as_arcs():
    g = topology.torus2d(3, 3, "eth_10g")
    fig, ax = plt.subplots()
    tview.draw_topology(ax, g)
    wraps = sum(1 for *_, d in g.edges(data=True) if d["wrap"])
    assert len(ax.patches) == wraps == 6
    assert len(ax.lines) == g.number_of_edges() - wraps


def test_compare_figure_has_one_panel_per_topology_and_a_colour_bar():
    a, b = topology.mesh2d(2, 3, "eth_10g"), topology.torus2d(2, 3, "eth_10g")
    flows = [Flow(0, 0, 5, 1000)]
    fig = tview.compare_figure([(a, topology.map_flows(a, flows), "mesh"), (b, topology.map_flows(b, flows), "torus")])
    assert len(fig.axes) == 3                            # two panels and the colour bar
    assert [ax.get_title() for ax in fig.axes[:2]] == ["mesh", "torus"]


def _texts(fig):
    """Every visible, non-empty text of a figure: titles, labels, tick labels, legend entries, annotations."""
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]


def test_gallery_is_a_two_by_two_grid_readable_at_page_width():
    fig = tview.gallery_figure(topology.gallery_runs(n=8, nbytes=8 * 10**5))
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 4 and len(fig.axes) == 5                 # four panels and the colour bar
    xs = sorted({round(ax.get_position().x0, 3) for ax in panels})
    ys = sorted({round(ax.get_position().y0, 3) for ax in panels})
    assert len(xs) == 2 and len(ys) == 2
    # shown ~700 px wide, every text is at least 10 px tall (1 pt = dpi / 72 px)
    scale = min(1.0, 700 / (fig.get_figwidth() * fig.dpi))
    smallest = min(t.get_fontsize() for t in _texts(fig)) * fig.dpi / 72 * scale
    assert smallest >= 10
    numbers = {t.get_text() for t in _texts(fig)}
    assert {str(i) for i in range(8)} <= numbers                    # node numbers are drawn


def test_ps_star_figure_marks_the_server_and_its_hot_link():
    fig = tview.ps_star_figure(*topology.ps_star(3, 4 * 10**6, link="eth_10g"))
    ax = fig.axes[0]
    assert "PS" in {t.get_text() for t in ax.texts}
    assert "12.00 MB" in ax.get_title() and "4.00 MB" in ax.get_title()   # 3 gradients against 1, each way
    top = tuple(round(c, 6) for c in matplotlib.colormaps[tview.CMAP](1.0))
    hot = [line for line in ax.lines if tuple(round(c, 6) for c in matplotlib.colors.to_rgba(line.get_color())) == top]
    assert len(hot) == 1                                            # only the server's link carries the maximum
    scale = min(1.0, 700 / (fig.get_figwidth() * fig.dpi))
    assert min(t.get_fontsize() for t in _texts(fig)) * fig.dpi / 72 * scale >= 10


def test_steps_sweep_has_one_frame_per_step():
    g = topology.tree(4, 2, "eth_10g")
    res = topology.map_trace(g, topology.allreduce_trace(4, 4096, "halving_doubling"))
    html = tview.steps_sweep(g, res, title="tree").data
    assert html.count('class="gotw-frame"') == len(res.steps) == 4


def test_ring_check_table_agrees_to_rounding():
    text = tview.ring_check_table(topology.ring_check(ns=(2, 3, 5), link="eth_25g", nbytes=15 * 2**20)).data
    diffs = [float(x) for x in re.findall(r"\| (\d\.\de[-+]\d\d) \|", text)]
    assert len(diffs) == 3 and max(diffs) < 1e-12


def test_hierarchy_table_names_the_nic_as_bottleneck():
    text = tview.hierarchy_table(topology.hierarchy_runs(hosts=2, per_host=4, nbytes=2**20)).data
    assert text.count("h0.nic -> net") == 2


def test_hierarchy_trend_table_has_one_row_per_host_count_and_its_gain():
    from commlib.experiments import network as network_runs
    trend = network_runs.hierarchy_trend((4, 2), per_host=2, nbytes=2**20)
    runs = topology.hierarchy_runs(hosts=2, per_host=2, nbytes=2**20)
    text = tview.hierarchy_trend_table(trend, per_host=2, nbytes=2**20).data
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [int(r.split("|")[1]) for r in rows] == [2, 4]       # sorted by hosts
    assert float(rows[0].split("|")[5]) == round(runs["ring"].time / runs["hierarchical"].time, 2)
    assert float(rows[1].split("|")[6]) == round(7 / 4 / (3 / 2), 3)   # 2(n-1)/n over 2(h-1)/h, n = 8, h = 4


def test_hierarchy_trend_table_adds_the_other_networks_gain_only_where_it_was_run():
    from commlib.experiments import network as network_runs
    trend = network_runs.hierarchy_trend((4, 2), per_host=2, nbytes=2**20)
    edr = network_runs.hierarchy_trend((4,), per_host=2, nbytes=2**20, network="ib_edr")
    text = tview.hierarchy_trend_table(trend, per_host=2, nbytes=2**20, other=edr).data
    assert "InfiniBand EDR" in text.splitlines()[2]                 # the header names the other network
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert rows[0].split("|")[7].strip() == ""                       # 2 hosts: not run on EDR
    assert float(rows[1].split("|")[7]) == round(edr[4]["gain"], 3)
    assert "InfiniBand" not in tview.hierarchy_trend_table(trend, per_host=2, nbytes=2**20).data


def test_tables_list_every_claim_and_host():
    # header and separator rows, then one row each
    assert tview.claims_table().data.count("\n| ") == len(placement.link_claims()) + 2
    assert tview.example_lists_table().data.count("\n| ") == len(placement.EXAMPLE_INTER_MB_S) + 2
    assert "1082.125" in tview.example_lists_table().data


def test_placement_figure_lists_fastest_first():
    cl = placement.example_cluster()
    fig = tview.placement_figure(placement.rank_placements(cl, {"slow": {"host7": 2}, "fast": {"host3": 2},
                                                                 "mid": {"host1": 2}}))
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [t.split("\n")[0] for t in labels] == ["slow", "mid", "fast"]   # barh draws bottom up: fastest on top
    assert all("host" in t.split("\n")[1] for t in labels)               # what bounds each, under its name
    assert all(a.get_text().endswith(" s") for a in ax.texts)             # one unit on every bar
    widths = [p.get_width() for p in ax.patches]
    assert widths == sorted(widths, reverse=True)


def test_placement_calculator_shows_results_and_errors():
    calc = tview.placement_calculator()
    assert calc.error is None
    est = placement.estimate(placement.example_cluster(), {3: 2, 1: 2}, model="resnet50")
    assert "host 3" in calc.results["bounded by"]
    assert calc.results["scheme"] == "hierarchical all-reduce"
    assert est.time > 0
    calc.set(where="host0:5")
    assert calc.error == "workers (host:count): placement puts 5 workers on host 0, which has 4 slots"
    calc.set(where="rack9")
    assert "host3:2" in calc.error
    calc.set(where="host3:4", mode="ps")
    assert calc.error is None and calc.results["scheme"] == "parameter server (one unsharded server) on host 3"
    assert calc.results["push and pull"].startswith("overlapped")
    cl = placement.example_cluster()
    # four local gradients through host 3's intra link, each way once; in turn, twice
    one_way = 4 * hardware.gradient_bytes("resnet50", "fp32") / cl.intra[3]
    assert calc.results["synchronisation time per iteration"] == format_time(one_way)
    calc.set(pipelined=False)
    assert calc.results["synchronisation time per iteration"] == format_time(2 * one_way)
    assert "one after the other" in calc.results["push and pull"]
    calc.set(mode="allreduce")
    assert "push and pull" not in calc.results


def test_placement_sweep_has_one_frame_per_worker_count():
    sweep = placement.best_placements_by_workers(placement.example_cluster(), workers=(2, 3), top=2)
    html = tview.placement_sweep(sweep).data
    assert html.count('class="gotw-frame"') == 2


# ---------------------------------------------------------------- chapter 6 self-checks

def test_every_ch06_question_accepts_its_own_answer():
    ids = questions("ch06")
    assert len(ids) == 9
    for qid in ids:
        assert check(qid, expected(qid)).correct


def test_ch06_answers_match_independent_reasoning():
    # a V100's NVLink figure sums both directions of six links; GPUs 0 and 3 of the cube-mesh share two
    assert expected("ch06.nvlink2_pair_one_way") == pytest.approx(hardware.LINKS["nvlink2"].both_directions / 2 / 6 * 2 / 1e9)
    assert expected("ch06.mesh_closing_hops") == 2 + 5              # 3 rows: back across the row and up, 2 + 5 links
    assert expected("ch06.torus_closing_hops") == 2                 # one wrap-around link per dimension
    # PCIe 4.0: half of the shared link is above the card's line rate, so the card sets the rate
    assert expected("ch06.near_nic_rate") == pytest.approx(hardware.LINKS["eth_100g"].bandwidth / 1e9, rel=1e-3)
    assert hardware.LINKS["pcie4_x16"].bandwidth / 2 > hardware.LINKS["eth_100g"].bandwidth
    assert expected("ch06.nic_ratio") == pytest.approx((2 * 31 / 32) / (2 * 3 / 4))    # 4 hosts of 8
    # x: 0.6 GB/s on link 2->3; a and y: (3 - 0.6) / 2 on link 1->2; d: 4 GB/s minus a's 1.2
    assert expected("ch06.maxmin_rate") == pytest.approx(4 - (3 - 0.6) / 2)
    # halving-doubling's three steps each take M/2B on the 4:1 tree, twice (3M/B); the ring 14 steps of M/8B
    assert expected("ch06.tree_hd_over_ring") == pytest.approx(3 / (14 / 8))
    # server on host 1, one worker on each of hosts 0, 2, 3, 4: host 1's link carries 4 gradients
    # each way (233 MB/s), host 2's link one (59.5 MB/s); push and pull overlap
    m = hardware.gradient_bytes("resnet50", "fp32")
    assert expected("ch06.ps_host1") == pytest.approx(max(4 * m / 233e6, m / 59.5e6))


@pytest.mark.parametrize("rows,cols", [(2, 3), (4, 4), (4, 6), (3, 4), (5, 3), (3, 3)])
def test_snake_ring_closing_hop_as_the_chapter_states(rows, cols):
    # even rows: the snake ends in column 0 and closes up that column; odd rows: it ends in the last
    # column and must also cross the row. A torus closes with one wrap (even) or two (odd).
    order = topology.snake_order(rows, cols)
    mesh_hops = len(topology.route(topology.mesh2d(rows, cols, "eth_10g"), order[-1], order[0])) - 1
    torus_hops = len(topology.route(topology.torus2d(rows, cols, "eth_10g"), order[-1], order[0])) - 1
    odd = rows % 2
    assert mesh_hops == (rows - 1) + odd * (cols - 1)
    assert torus_hops == min(rows - 1, 1) + odd * min(cols - 1, 1)


def test_ch06_wrong_answers_get_hints():
    assert "overlap" in check("ch06.ps_host1", expected("ch06.ps_host1") * 2).message
    m, cl = hardware.gradient_bytes("resnet50", "fp32"), placement.example_cluster()
    assert "host 2's link alone" in check("ch06.ps_host1", m / cl.inter[2]).message
    assert "both directions" in check("ch06.nvlink2_pair_one_way", 100.0).message
    assert "one link" in check("ch06.nvlink2_pair_one_way", 25.0).message
    assert "mesh links" in check("ch06.torus_closing_hops", 7).message
    assert "flow x's rate" in check("ch06.maxmin_rate", 0.6).message
    assert "latency" in check("ch06.tree_hd_over_ring", ch06_questions._tree_hd_over_ring_with_latency()).message
    assert "PCIe 3.0" in check("ch06.near_nic_rate", 7.88).message
    assert not check("ch06.mesh_closing_hops", 1).correct


def test_sharing_table_lists_both_models_and_their_ratio():
    r = topology.sharing_comparison(nbytes=4 * 2**20, ps_bytes=10**6)
    text = tview.sharing_table(r).data
    assert text.count("\n| ") == 5 and "| 1.00 |" in text and "BytePS" in text


def test_placement_calculator_compute_takes_exactly_its_controls():
    import inspect

    for calc in (tview.placement_calculator(), tview.placement_calculator(placement.example_cluster(slots=2))):
        assert list(inspect.signature(calc.compute).parameters) == list(calc.controls)
    assert calc.compute is not network_calculators.placement_results          # the custom cluster is bound, not a control


def test_rings_figure_draws_each_distinct_ring_once_in_its_own_colour():
    from commlib.experiments import network as runs
    torus = topology.torus2d(4, 4, "nvlink2")
    rings = runs.covering_rings("torus", 4, 4)          # two rings, each with its reverse
    fig = tview.rings_figure(torus, rings)
    assert len(fig.axes) == 2
    solid = [{tuple(line.get_color()) if not isinstance(line.get_color(), str) else line.get_color()
              for line in ax.lines if line.get_linestyle() == "-"} for ax in fig.axes]
    assert all(len(colours) == 1 for colours in solid) and solid[0] != solid[1]
    with pytest.raises(ValueError):
        tview.rings_figure(torus, [])


def test_max_min_figure_labels_each_flow_with_its_rate_and_holding_link():
    link1, link2 = (0, 1), (1, 2)
    paths = {"A": [link1, link2], "B": [link1], "C": [link1], "D": [link2]}
    fig = tview.max_min_figure(paths, {link1: 1e9, link2: 1e9}, names={link1: "link 1", link2: "link 2"})
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert "A: 0.33 GB/s, held by link 1" in texts and "D: 0.67 GB/s, held by link 2" in texts


def test_the_scrubber_gives_a_chunk_cut_to_whole_elements_as_its_share():
    assert tview._three_figures(999_936) == "1.00 MB"
    assert tview._three_figures(124_992) == "125 kB"
    assert tview._three_figures(12) == "12 B"


def test_links_overview_folds_all_presets_and_the_pcie_note_into_a_dropdown():
    text = tview.links_overview().data
    short, full = text.split("````{admonition}", 1)
    assert short.count("\n| ") == len(tview.OVERVIEW_LINKS) + 2 and "PCIe rows" not in short   # header, rule, rows
    assert full.count("\n| ") == len(hardware.LINKS) + 2 and "PCIe rows" in full and ":class: dropdown" in full


def test_sharing_table_shows_only_the_workloads_named_and_refuses_others():
    r = topology.sharing_comparison(nbytes=4 * 2**20, ps_bytes=10**6)
    text = tview.sharing_table(r, ("byteps",)).data
    assert "BytePS" in text and "mesh" not in text and text.count("\n| ") == 3
    assert "BytePS" not in tview.sharing_table(r, ("mesh one way", "mesh both ways")).data
    with pytest.raises(ValueError, match="workloads"):
        tview.sharing_table(r, ("torus",))


def test_host_flows_figure_draws_one_arrow_per_flow_on_the_link_next_to_the_card():
    g = topology.cluster(2, gpus_per_host=8, gpus_per_switch=2, nvlink="nvlink2", network="eth_100g",
                         nvlink_layout="cube_mesh")
    counts = []
    for gpu in ("h0.gpu0", "h0.gpu2"):
        flows = topology.staged_exchange(g, gpu, 10**9)
        run = topology.map_flows(g, flows)
        on = tview.host_flows(g, run, flows)
        counts.append((len(on["h0.pcie0", "h0.cpu0"]), len(on["h0.cpu0", "h0.pcie0"])))
        assert all(u == "beyond" or str(u).startswith("h0.") for u, _ in on)     # host 0 only; the rest is one node
        fig = tview.host_flows_figure([(g, run, flows, gpu)])
        arrows = [p for p in fig.axes[0].patches if p.get_arrowstyle() is not None]
        assert len(arrows) == sum(len(v) for v in on.values())                    # one arrow per flow per link
        texts = [t.get_text() for t in fig.legends[0].get_texts()]
        assert {f.label for f in flows} <= set(texts)
        plt.close(fig)
    assert counts == [(2, 2), (1, 1)]                   # GPU 0: two each way; GPU 2: the network's one each way
    with pytest.raises(ValueError, match="map these flows"):
        tview.host_flows(g, topology.map_flows(g, []), topology.staged_exchange(g, "h0.gpu0", 1))
