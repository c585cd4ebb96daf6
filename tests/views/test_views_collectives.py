"""Tests for commlib.views.collectives: the pictures show what the executable collectives did.

The runs come from :mod:`commlib.experiments.collectives` (tested in
test_experiments_collectives.py); here the figures drawn from them are
checked. Expected values are derived here independently (sums of the
digit-coded inputs, step counts n - 1, ceil(log2 n), 2(n - 1), bytes
2(n - 1)M), not read back from the drawing code.
"""

from __future__ import annotations

import math
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

from commlib import cost, hardware  # noqa: E402
from commlib.collectives import calculators, cluster, compare
from commlib.experiments import collectives as ce  # noqa: E402
from commlib.units import format_time  # noqa: E402
from commlib.views import collectives as vc  # noqa: E402
from commlib.views.animation import to_html  # noqa: E402
from commlib.views.tables import markdown_table  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _frames(anim) -> int:
    return len(list(anim.new_frame_seq()))


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


# --- chapter 1: reduce animation -------------------------------------------------------------------

@pytest.mark.parametrize("values, op, expected", [
    ((1, 2, 3, 4, 5, 6, 7, 8), "sum", 36),
    ((3, 9, 2, 7, 5), "max", 9),
    ((0b1111, 0b1011, 0b0111), "band", 0b0011),
])
def test_reduce_animation_frames_and_final_values(values, op, expected):
    n = len(values)
    anim = vc.reduce_animation(ce.reduce_runs(values, op))
    assert _frames(anim) == n                     # the start, then n - 1 serial steps
    fig = anim._fig
    anim._func(n - 1)
    serial_ax, tree_ax = fig.axes
    assert f"{n - 1} of {n - 1} steps" in serial_ax.get_title()
    depth = math.ceil(math.log2(n))
    assert f"{depth} of {depth} steps" in tree_ax.get_title()
    assert f"{expected:g}" in _texts(serial_ax)
    assert f"{expected:g}" in _texts(tree_ax)
    assert len(vc.reduce_labels(n)) == n


def test_reduce_animation_tree_finishes_early():
    anim = vc.reduce_animation(ce.reduce_runs(range(1, 9)))
    anim._func(3)
    assert "(done)" in anim._fig.axes[1].get_title()
    anim._func(2)
    assert "(done)" not in anim._fig.axes[1].get_title()


def test_reduce_animation_plays_offline_with_every_frame():
    html = to_html(vc.reduce_animation(ce.reduce_runs((1, 2, 3, 4))), labels=vc.reduce_labels(4)).data
    assert html.count('class="gotw-frame"') == 4


def test_reduce_animation_bad_input():
    # a run of one value cannot be made (tested with the experiments); a hand-made one is refused too
    one = ce.ReduceRuns((1,), "sum", [], [])
    with pytest.raises(ValueError, match="number of values"):
        vc.reduce_animation(one)


def test_reduce_steps_table_shows_the_counts_it_is_given():
    text = vc.reduce_steps_table(compare.reduce_step_counts((2, 8, 1000))).data
    assert "| 8 | 7 | 3 | 3 |" in text
    assert "| 1000 | 999 | 10 | 10 |" in text


def test_operator_table_marks_the_operators_that_change_with_the_order():
    text = vc.operator_table(ce.operator_runs()).data
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| operator")]
    rows = [r for r in rows if not set(r) <= set("|- ")]
    assert len(rows) == len(ce.OPERATOR_CASES)
    same = [r.rstrip(" |").rsplit("|", 1)[1].strip() for r in rows]
    assert same == ["yes", "yes", "yes", "yes", "**no**", "**no**", "**no**"]   # float sum: 1e16 absorbs the 1s
    # power is written ** and XOR ^ (C's and Python's), each operator named in words
    assert "((2 ** 1) ** 3) ** 2" in text and "((14 ^ 11) ^ 7) ^ 15" in text and "bitwise AND (&)" in text
    assert "| bitwise XOR (^) |" in text and "2 ^ 1" not in text


def test_reduce_comparison_table_shows_the_crossover_and_where_there_is_none():
    rows = ce.reduce_comparison((2, 8))
    text = vc.reduce_comparison_table(rows, ce.REDUCE_SHORT, ce.REDUCE_LONG).data
    assert "| 2 |" in text and "none: the tree is faster at every size" in text
    assert "75 kB" in text and "64 MiB" in text and "1 KiB" in text
    assert "size M above which reduce-scatter + gather beats the tree" in text


def test_rounding_table_has_one_row_per_format():
    text = vc.rounding_table(ce.rounding_runs(64, seeds=(0,))).data
    assert all(f"| {name} |" in text for _, name in ce.ROUNDING_DTYPES)
    # every line of the table splits into as many cells as the header has columns
    assert len({_cell_count(line) for line in text.splitlines() if line.startswith("|")}) == 1


def test_rounding_table_shows_the_rigorous_bounds():
    text = vc.rounding_table(ce.rounding_runs(1024, seeds=(0,))).data
    fp16 = next(line for line in text.splitlines() if line.startswith("| fp16 |"))
    assert "| 0.998 |" in fp16                 # (n - 1) u / (1 - (n - 1) u) in fp16 at n = 1,024, not 0.4995
    assert "u_fp" in text and "| u |" not in text


def test_order_table_has_one_row_per_claim_and_counts_that_add_up():
    from commlib.experiments import claims
    counts = [ce.order_count(claims.run(claims.claim(k, small=True))) for k in ce.ORDER_CLAIMS]
    text = vc.order_table(counts).data
    rows = [line for line in text.splitlines() if line.startswith("| fp")]
    assert len(rows) == len(ce.ORDER_CLAIMS)
    for c in counts:
        assert c.less + c.same + c.more == c.seeds
    assert len({_cell_count(line) for line in text.splitlines() if line.startswith("|")}) == 1


def test_ratio_text_is_no_finer_than_its_spread():
    # the step is the smallest of 1, 2, 5 times a power of ten at least as wide as the spread
    assert vc.ratio_text(9.2, 8.9, 9.6) == "about 9"        # spread 0.7: step 1
    assert vc.ratio_text(12.4, 9.0, 13.5) == "about 10"     # spread 4.5: step 5
    assert vc.ratio_text(2.3, 2.25, 2.32) == "about 2.3"    # spread 0.07: step 0.1
    assert vc.ratio_text(1.39, 1.19, 1.77) == "between about 1.2 and 1.8"   # step 1 would round to 1, outside
    # a wider spread (as where many seeds tie) never gives a finer quote
    assert vc.ratio_text(1.52, 1.47, 1.56) == "about 1.5" and vc.ratio_text(1.6, 1.2, 2.1) == "about 2"
    with pytest.raises(ValueError, match="ratio"):
        vc.ratio_text(0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="ratio"):
        vc.ratio_text(3.0, 1.0, 2.0)


def _cell_count(line: str) -> int:
    """Cells of one Markdown table line: split at the pipes Markdown does not see escaped."""
    return len(re.split(r"(?<!\\)\|", line.strip())) - 2


def test_markdown_table_escapes_pipes_in_headers_and_rows():
    text = markdown_table(["a", "|x - y|", "b"], [[1, "|z|", 3]]).data
    header, rule, row = text.splitlines()
    assert _cell_count(header) == _cell_count(rule) == _cell_count(row) == 3
    assert "\\|x - y\\|" in header and "\\|z\\|" in row


# --- chapter 1: primitives -----------------------------------------------------------------------

def test_primitives_figure_has_every_primitive_and_its_results():
    fig = vc.primitives_figure(ce.primitive_runs(4))
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == [name.replace("_", "-") for name in ce.PRIMITIVES]
    by_name = {ax.get_title(): _texts(ax) for ax in fig.axes if ax.get_title()}
    # chunk c summed over four ranks is (c + 1) * 1111
    for c in range(4):
        assert f"{(c + 1) * 1111}" in by_name["all-reduce"]
        assert f"{(c + 1) * 1111}" in by_name["reduce-scatter"]
    assert "1111" in by_name["reduce"] and "1111" not in by_name["broadcast"]


def test_primitives_figure_rejects_empty_and_too_many_ranks():
    with pytest.raises(ValueError, match="runs"):
        vc.primitives_figure({})
    with pytest.raises(ValueError, match="n must be"):
        vc.primitives_figure({"gather": ce.primitive_run("gather", 7)})


def test_buffer_table_all_gather_vs_all_to_all():
    text = vc.buffer_table(ce.buffer_runs((2, 8), count=3)).data
    assert "sendcount = 3 element(s)" in text
    assert "| 2 | 3 | 6 | 6 | 6 |" in text
    assert "| 8 | 3 | 24 | 24 | 24 |" in text


def test_naive_hotspot_lines_are_the_model_layers_closed_forms():
    ps, elements = (2, 4, 8), 840
    fig = vc.naive_hotspot_figure(ce.hotspot_counts(ps, elements))
    ax = fig.axes[0]
    grid = ax.lines[0].get_xdata()
    n_bytes = elements * 8
    np.testing.assert_allclose(ax.lines[0].get_ydata() * 1e3, [2 * (p - 1) * n_bytes for p in grid])
    np.testing.assert_allclose(ax.lines[2].get_ydata() * 1e3, [4 * (p - 1) / p * n_bytes for p in grid])


def test_naive_hotspot_dots_are_2_p_minus_1_n():
    ps, elements = (2, 4, 8), 840
    fig = vc.naive_hotspot_figure(ce.hotspot_counts(ps, elements))
    ax = fig.axes[0]
    naive_dots = ax.lines[1].get_ydata() * 1e3
    ring_dots = ax.lines[3].get_ydata() * 1e3
    n_bytes = elements * 8
    np.testing.assert_allclose(naive_dots, [2 * (p - 1) * n_bytes for p in ps])
    np.testing.assert_allclose(ring_dots, [4 * (p - 1) / p * n_bytes for p in ps])


# --- chapter 2: ring animation -----------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_ring_animation_one_frame_per_step(n):
    run = ce.ring_run(n)
    anim = vc.ring_allreduce_animation(run)
    assert _frames(anim) == 2 * (n - 1) + 1
    labels = vc.ring_labels(run)
    assert len(labels) == 2 * (n - 1) + 1
    assert sum("reduce-scatter" in s for s in labels) == n - 1
    assert sum("all-gather" in s for s in labels) == n - 1
    ax = anim._fig.axes[0]
    anim._func(0)
    assert sum(isinstance(p, FancyArrowPatch) for p in ax.patches) == 0
    anim._func(1)
    assert sum(isinstance(p, FancyArrowPatch) for p in ax.patches) == n   # every rank sends once per step
    anim._func(2 * (n - 1))
    complete = [f"{(c + 1) * int('1' * n)}" for c in range(n)]
    texts = _texts(ax)
    for value in complete:
        assert texts.count(value) == n                       # every rank holds every complete chunk


def test_ring_animation_numbers_chunks_as_their_digits():
    # chunk j of rank i holds j * 10**i: the arrow that carries a value names the chunk its digit gives
    run = ce.ring_run(4)
    anim = vc.ring_allreduce_animation(run)
    ax = anim._fig.axes[0]
    anim._func(1)
    carried = sorted(t for t in _texts(ax) if t.startswith("chunk "))
    sent = sorted(run.trace.step_messages(0), key=lambda m: m.chunk)
    assert carried == [f"chunk {int(m.chunk) + 1}" for m in sent]
    anim._func(2 * 3)
    assert run.results[0][0] == 1111          # chunk 1: digit 1 from every rank
    legend = [t.get_text() for t in anim._fig.legends[0].get_texts()]
    assert [f"rank {r}'s own value" for r in range(4)] == legend[:4]
    assert any("written" in t for t in legend) and any("complete" in t for t in legend)


def test_ring_strip_shows_the_key_frames_with_a_full_legend():
    run = ce.ring_run(4)
    fig = vc.ring_allreduce_strip(run)
    frames = vc.ring_key_frames(4)
    assert frames == [0, 1, 3, 6]
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert [int(t.split(":")[0].split()[1]) for t in titles] == frames
    assert len(fig.legends[0].get_texts()) == 4 + 5
    # the last frame: every rank holds every complete chunk
    last = _texts(fig.axes[3])
    assert all(last.count(f"{j * 1111}") == 4 for j in range(1, 5))


@pytest.mark.parametrize("n", [2, 5, 8, 13])
def test_double_binary_tree_figure_no_rank_inner_twice(n):
    from commlib.collectives.algorithms import double_binary_tree as dbt

    inner = dbt.inner_ranks(n)
    assert not inner[0] & inner[1]                       # a rank is inner in at most one tree
    for parent in dbt.parents(n):
        assert sum(p is None for p in parent) == 1       # one root a tree
    fig = vc.double_binary_tree_figure(n)
    for ax, inside in zip(fig.axes, inner):
        boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
        assert len(boxes) == n
        assert sum(b.get_facecolor()[0] < 0.5 for b in boxes) == len(inside)
        assert len(ax.lines) == n - 1                     # one edge per non-root rank


def test_ring_animation_after_scatter_reduce_each_rank_owns_one_complete_chunk():
    n = 4
    anim = vc.ring_allreduce_animation(ce.ring_run(n))
    anim._func(n - 1)
    texts = _texts(anim._fig.axes[0])
    for c in range(n):
        assert texts.count(f"{(c + 1) * 1111}") == 1


def test_ring_animation_rejects_bad_n():
    with pytest.raises(ValueError, match="n must be"):
        ce.ring_run(1)
    with pytest.raises(ValueError, match="n must be"):
        vc.ring_allreduce_animation(ce.ring_run(7))       # a run of 7 ranks exists, but is too big to draw


def test_trace_formula_table_agrees():
    text = vc.trace_formula_table(ce.trace_formula_runs((2, 4, 8))).data
    assert "1.00 GB/s per direction, alpha = 10.00 µs" in text      # the link the runs were timed on
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 3
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        n = int(cells[0])
        assert cells[2] == cells[3] == str(2 * (n - 1))
        assert cells[4] == cells[5]
        assert cells[6] == cells[7]


# --- chapter 2: comparison, hierarchy, torus ----------------------------------------------------------

def _dots(fig):
    return [line for ax in fig.axes for line in ax.lines if line.get_marker() == "o" and len(line.get_xdata()) == 1]


def _curve_entries(ax):
    """The legend's entries that name an algorithm (not the bound's switch)."""
    return [t.get_text() for t in ax.get_legend().get_texts() if t.get_text() in compare.ALGORITHM_NAMES.values()]


def test_comparison_figure_marks_the_switch_points():
    fig = vc.comparison_figure(n=12, link="eth_10g")
    algorithms = vc.figure_algorithms(12)
    assert "hierarchical" not in algorithms and "double_binary_tree" in algorithms
    shown = [t for ax in fig.axes for t in _curve_entries(ax)]
    assert set(shown) == {compare.ALGORITHM_NAMES[a] for a in algorithms}
    # a handful of curves a panel: today's eight algorithms give at most six (the ring is in both panels);
    # each algorithm added to the registry may add one curve to a panel
    assert all(len(_curve_entries(ax)) <= 6 + max(0, len(algorithms) - 8) for ax in fig.axes)
    assert all(len(_curve_entries(ax)) < len(algorithms) for ax in fig.axes)   # the panels split them
    item_b, item_l = 1.25e9, 20e-6
    # each at its best, as the figure draws them: halving-doubling with the fold that swaps halves
    curves = {a: (lambda m, a=a: compare.best_fold_seconds(a, m, 12, item_b, item_l)) for a in algorithms}
    want = compare.switch_points(curves, 1e2, 1e10)
    dots = _dots(fig)
    assert len(dots) == len(want) >= 1
    for line, (size, _, after) in zip(sorted(dots, key=lambda d: d.get_xdata()[0]), want):
        assert line.get_xdata()[0] == pytest.approx(size)
        # drawn relative to the lower bound: the fastest curve's ratio there
        bound = compare.allreduce_lower_bound(size, 12, item_b, item_l)
        assert line.get_ydata()[0] == pytest.approx(curves[after](size) / bound)
    # the switch marks are open circles, twice a curve's filled marker: they do not read as a curve's points
    curve_marks = [line for ax in fig.axes for line in ax.lines
                   if len(line.get_xdata()) > 1 and line.get_marker() not in ("None", "", " ", None)]
    assert all(d.get_markerfacecolor() == "none" and d.get_markersize() >= 2 * c.get_markersize()
               for d in dots for c in curve_marks)
    assert all(c.get_markerfacecolor() != "none" for c in curve_marks)
    # with 12 ranks (not a power of two) the large-message winner sends the ring's bytes (halving-doubling folds)
    assert compare.alpha_beta_coefficients(want[-1][2], 12)[1] == pytest.approx(compare.alpha_beta_coefficients("ring", 12)[1])
    assert want[-1][2] != "halving_doubling"


def test_comparison_figure_is_relative_to_the_lower_bound():
    fig = vc.comparison_figure(n=16, link="eth_100g")
    ring = [line for ax in fig.axes for line in ax.lines if line.get_label() == compare.ALGORITHM_NAMES["ring"]]
    assert len(ring) == 2                                   # in both panels, for reference
    ratios = ring[0].get_ydata()
    assert min(ratios) >= 1.0 and ratios[-1] == pytest.approx(1.0, abs=1e-3)   # the ring meets the bound
    # one look per algorithm across the panels: a look (colour, dash, marker) never stands for two algorithms,
    # and while there are no more algorithms than colours, a colour never does either
    looks, colours = {}, {}
    for ax in fig.axes:
        for line in ax.lines:
            if line.get_label() in compare.ALGORITHM_NAMES.values():
                # the dash as drawn: get_linestyle() says "--" for every custom dash pattern
                look = (line.get_color(), repr(line._unscaled_dash_pattern), line.get_marker())
                looks.setdefault(look, set()).add(line.get_label())
                colours.setdefault(line.get_color(), set()).add(line.get_label())
    assert all(len(v) == 1 for v in looks.values())
    labels = set().union(*looks.values())
    assert len(labels) == len(vc.figure_algorithms(16))
    if len(labels) <= len(vc._CURVE_COLORS):
        assert all(len(v) == 1 for v in colours.values())


@pytest.mark.parametrize("n", [12, 16])
def test_comparison_figure_marks_the_bound_switch_where_every_curve_peaks_and_nothing_beside_it(n):
    eth = hardware.link("eth_100g")
    fig = vc.comparison_figure(n=n, link="eth_100g")
    peak = compare.lower_bound_switch(n, eth.bandwidth, eth.latency)
    assert compare.allreduce_lower_bound(peak, n, eth.bandwidth, eth.latency) == pytest.approx(
        2 * (n - 1) / n * peak / eth.bandwidth) == pytest.approx(np.ceil(np.log2(n)) * eth.latency)
    for ax in fig.axes:
        marks = [line for line in ax.lines if line.get_label().startswith("the bound's switch")]
        assert len(marks) == 1 and marks[0].get_xdata()[0] == pytest.approx(peak)
        assert f"{peak / 1e3:.0f} kB" in marks[0].get_label()
        # dashed, and the panel's only vertical line: the switch circles have none beside it (the footer lists them)
        verticals = [line for line in ax.lines if len(line.get_xdata()) == 2
                     and line.get_xdata()[0] == line.get_xdata()[1]]
        assert marks[0].get_linestyle() == "--" and verticals == marks
        # no shading: what takes most of the fastest's time is named at the panels' edges only
        assert not ax.patches and not [t for t in ax.get_legend().get_texts() if "start-ups take" in t.get_text()]
        # each curve over the bound is highest at the switch (within one grid step of the drawn sizes)
        for line in ax.lines:
            if line.get_label() in compare.ALGORITHM_NAMES.values():
                x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
                assert abs(np.log10(x[np.argmax(y)] / peak)) <= 1 / 12 + 1e-9
    assert not [t for t in fig.texts if "white gap" in t.get_text()]
    edges = [t.get_text() for ax in fig.axes for t in ax.texts if t.get_text().endswith("dominate")]
    assert edges == ["start-ups dominate", "bytes dominate"]


@pytest.mark.parametrize("count", [1, 8, 9, 10, 50, 51, 504])
def test_curve_looks_are_distinct_and_keep_the_first_nine(count):
    looks = vc.curve_looks(count)
    assert len(looks) == len(set(looks)) == count
    assert looks[:9] == [(i, i % len(vc._LINESTYLES), i % len(vc.MARKERS))                # today's figures
                         for i in range(min(count, 9))]
    assert looks == vc.curve_looks(504)[:count]                                          # never depends on count
    for i, a in enumerate(looks[:50]):       # the first fifty share at most one of colour, dash, marker
        assert all(sum(x != y for x, y in zip(a, b)) >= 2 for b in looks[:i])
    with pytest.raises(ValueError, match="count"):
        vc.curve_looks(505)


def test_lower_bound_is_below_every_algorithm():
    for n in (2, 3, 8, 12, 16, 128):
        for a in vc.figure_algorithms(n):
            for m in (0.0, 1e3, 1e6, 1e9):
                assert compare.allreduce_seconds(a, m, n, 12.5e9, 5e-6) >= compare.allreduce_lower_bound(
                    m, n, 12.5e9, 5e-6) * (1 - 1e-12)


@pytest.mark.parametrize("n", [12, 16, 97])
def test_comparison_figure_draws_halving_doubling_at_its_best(n):
    """Off the powers of two the figure's halving-doubling is the fold that swaps halves, below the textbook fold;
    on a power of two the two folds are the same curve."""
    eth = hardware.link("eth_100g")
    fig = vc.comparison_figure(n=n, link="eth_100g")
    (line,) = [line for ax in fig.axes for line in ax.lines
               if line.get_label() == compare.ALGORITHM_NAMES["halving_doubling"]]
    sizes, ratios = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    bound = np.array([compare.allreduce_lower_bound(m, n, eth.bandwidth, eth.latency) for m in sizes])
    swap = np.array([compare.best_fold_seconds("halving_doubling", m, n, eth.bandwidth, eth.latency) for m in sizes])
    textbook = np.array([compare.allreduce_seconds("halving_doubling", m, n, eth.bandwidth, eth.latency)
                         for m in sizes])
    assert ratios == pytest.approx(np.minimum(swap, textbook) / bound)
    if n & (n - 1):
        assert ratios == pytest.approx(swap / bound) and (swap < textbook).all()
        assert ratios[-1] == pytest.approx(1.5, abs=0.02)       # its fold: about half an M more than the ring
    else:
        assert swap == pytest.approx(textbook)


def test_best_fold_seconds_stay_above_the_lower_bound():
    for n in (3, 12, 97):
        for m in (0.0, 1e3, 1e6, 1e9):
            assert compare.best_fold_seconds("halving_doubling", m, n, 12.5e9, 5e-6) >= compare.allreduce_lower_bound(
                m, n, 12.5e9, 5e-6) * (1 - 1e-12)


def test_comparison_figure_with_hosts_includes_hierarchical():
    fig = vc.comparison_figure(n=16, link="nvlink2", hosts=2, inter_link="eth_25g")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert compare.ALGORITHM_NAMES["hierarchical"] in labels
    # on hosts of several GPUs only the algorithms timed there are drawn
    assert compare.ALGORITHM_NAMES["halving_doubling"] not in labels and compare.ALGORITHM_NAMES["ring"] in labels


@pytest.mark.parametrize("hosts, per_host", [(2, 4), (3, 2)])
def test_hierarchical_figure_draws_every_gpu(hosts, per_host):
    fig = vc.hierarchical_figure(hosts, per_host)
    gpus = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_width() == pytest.approx(0.6)]
    assert len(gpus) == hosts * per_host


def test_torus_figure_draws_every_node_and_wraparound():
    fig = vc.torus_figure(3, 4)
    ax = fig.axes[0]
    nodes = [p for p in ax.patches if isinstance(p, Rectangle)]
    arcs = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(nodes) == 12
    assert len(arcs) == 3 + 4
    with pytest.raises(ValueError, match="rows"):
        vc.torus_figure(1, 4)


def test_ring_scaling_figure_ring_barely_grows():
    fig = vc.ring_scaling_figure(100e6, "eth_100g", (2, 8, 64))
    ring = fig.axes[0].lines[0].get_ydata()
    # bandwidth term 2(N-1)/N M/B: from N = 2 to 64 it grows by (63/32)/(1/1), less than 2x
    assert ring[-1] / ring[0] == pytest.approx((2 * 63 / 64) / (2 * 1 / 2))


# --- chapter 2: calculators ---------------------------------------------------------------------

def test_cluster_results_vgg16_gigabit_example():
    out = calculators.cluster_results("vgg16", "fp32", 4, 4, "nvlink2", "eth_1g", "ring", 550, 90)
    t = 2 * 3 / 4 * 138_357_544 * 4 / 125e6 + 6 * 50e-6
    assert out["time of one all-reduce"] == format_time(t, significant=4)
    assert out["parallel efficiency Tc/(Tc+Tm)"] == f"{100 * 0.55 / (0.55 + t):.1f} %"
    assert out["GPUs per host g"] == "1"


def test_cluster_calculator_shows_results_and_errors_in_place():
    calc = vc.cluster_calculator()
    assert calc.error is None and "time of one all-reduce" in calc.results
    calc.set(hosts=3)                                   # 16 GPUs cannot spread over 3 hosts
    assert calc.error is not None and "hosts h must divide" in calc.error
    assert "hosts h must divide" in calc.output.value and calc.results == {}
    calc.set(hosts=2, target_percent=150.0)
    assert calc.error.startswith("efficiency goal (%) must lie between 1 and 99.9 %")
    calc.set(target_percent=90.0, t_compute_ms=-1.0)
    assert calc.error.startswith("compute (ms/step) must lie between 0.001 and 1000000 ms")
    calc.set(t_compute_ms=100.0, n=1, hosts=1)
    assert calc.error is None and "with one GPU there is nothing to send" in calc.results["time of one all-reduce"]
    calc.set(n=16, hosts=2, algorithm="hierarchical")
    flat = calculators.cluster_results("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "ring", 100.0, 90.0)
    assert calc.results["time of one all-reduce"] != flat["time of one all-reduce"]


def test_cluster_calculator_network_cards_matter_to_hierarchical_only():
    # ResNet-50 fp16 on 2 hosts x 8 GPUs; NVLink 2.0 (150 GB/s, 1 us) inside, 25 Gb/s (3.125 GB/s, 10 us) between.
    m = 25_557_032 * 2
    intra = 2 * (7 * 1e-6 + 7 / 8 * m / 150e9)
    own_card = intra + 2 * 10e-6 + 2 * (1 / 2) * (m / 8) / 3.125e9     # each GPU's shard on its own NIC
    shared = intra + 2 * 10e-6 + 2 * (1 / 2) * (m / 8) / (3.125e9 / 8)  # 8 shards share one NIC
    two = intra + 2 * 10e-6 + 2 * (1 / 2) * (m / 8) / (3.125e9 / 4)     # 4 shards per NIC
    calc = vc.cluster_calculator(algorithm="hierarchical")
    assert calc.controls["nics_per_host"].value == 1
    assert calc.results["time of one all-reduce"] == format_time(shared, significant=4)
    calc.set(nics_per_host=0)
    assert calc.results["time of one all-reduce"] == format_time(own_card, significant=4)
    calc.set(nics_per_host=2)
    assert calc.results["time of one all-reduce"] == format_time(two, significant=4)
    # the flat ring sends one flow per direction through each host's card: the choice does not matter
    # (the multi-rail ring, one ring per card, is the one that uses them)
    rings = {calculators.cluster_results("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "ring", 100.0, 90.0, k)
             ["time of one all-reduce"] for _, k in vc.NIC_CHOICES}
    assert rings == {format_time(30 * 10e-6 + 2 * 15 / 16 * m / 3.125e9, significant=4)}
    with pytest.raises(ValueError, match="nics_per_host"):
        calculators.cluster_results("resnet50", "fp16", 16, 2, "nvlink2", "eth_25g", "hierarchical", 100.0, 90.0, -1)


def test_bandwidth_converter_two_ways_and_errors():
    out = calculators.bandwidth_conversion_results("10 GB/s", "algbw -> busbw", "all_reduce", 8)
    assert out["bus bandwidth"] == "17.5 GB/s = 140 Gb/s"
    back = calculators.bandwidth_conversion_results("17.5 GB/s", "busbw -> algbw", "all_reduce", 8)
    assert back["algorithm bandwidth"] == "10 GB/s = 80 Gb/s"
    gather = calculators.bandwidth_conversion_results("100 Gb/s", "algbw -> busbw", "all_gather", 4)   # 12.5 GB/s x 3/4
    assert gather["bus bandwidth"].startswith("9.375 GB/s")
    calc = vc.bandwidth_converter()
    calc.set(value="ten")
    assert calc.error.startswith("bandwidth: cannot read")
    calc.set(value="1 GB/s", direction="busbw -> algbw", n=1)
    assert calc.error is None and calc.results["algorithm bandwidth"] == "none: with one rank there is nothing to send"


# --- readability: what the page shows (second review) ---------------------------------------------------

#: The offline player renders at 80 dpi and the page column shows it at most this wide (px).
_PLAYER_DPI, _COLUMN_PX, _MIN_TEXT_PX = 80, 700, 10.0


def _shown_text_px(fig) -> list[tuple[float, str]]:
    """(height in screen px, text) of every visible, non-empty text of ``fig`` as the player shows it."""
    fig.canvas.draw()
    scale = min(1.0, _COLUMN_PX / (fig.get_figwidth() * _PLAYER_DPI))
    texts = list(fig.texts)
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        texts += list(ax.texts)
        if ax.axison:                                   # axis("off") hides ticks and their labels
            texts += ax.get_xticklabels() + ax.get_yticklabels()
        if ax.get_legend() is not None:
            texts += list(ax.get_legend().get_texts())
    return [(t.get_fontsize() * _PLAYER_DPI / 72 * scale, t.get_text()) for t in texts
            if t.get_visible() and t.get_text().strip()]


def _assert_readable(fig):
    small = [(round(px, 1), text) for px, text in _shown_text_px(fig) if px < _MIN_TEXT_PX]
    assert not small, f"text under {_MIN_TEXT_PX} px at the player's width: {small[:5]}"


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_reduce_animation_draws_pending_steps_until_they_happen(n):
    # every reduce of n values makes n - 1 combinations; the tree after m levels holds ceil(n / 2^m) partials
    anim = vc.reduce_animation(ce.reduce_runs(range(1, n + 1)))
    serial_ax, tree_ax = anim._fig.axes
    depth = math.ceil(math.log2(n))
    for frame in range(n):
        anim._func(frame)
        assert _texts(serial_ax).count("?") == (n - 1) - frame
        assert _texts(tree_ax).count("?") == math.ceil(n / 2 ** min(frame, depth)) - 1


@pytest.mark.parametrize("frame", [0, 7])
def test_reduce_animation_text_is_readable(frame):
    anim = vc.reduce_animation(ce.reduce_runs(range(1, 9)))
    anim._func(frame)
    _assert_readable(anim._fig)


def test_reduce_animation_fills_its_frame():
    # the drawing (boxes, step labels) spans most of the figure in both directions, even at the start
    anim = vc.reduce_animation(ce.reduce_runs(range(1, 9)))
    anim._func(0)
    fig = anim._fig
    fig.canvas.draw()
    boxes = [t.get_window_extent() for ax in fig.axes for t in ax.texts]
    x0, x1 = min(b.x0 for b in boxes), max(b.x1 for b in boxes)
    y0, y1 = min(b.y0 for b in boxes), max(b.y1 for b in boxes)
    width, height = fig.bbox.width, fig.bbox.height
    assert (x1 - x0) / width > 0.85
    assert (y1 - y0) / height > 0.7


@pytest.mark.parametrize("n", [4, 12, 128])
def test_comparison_figure_readable_names_and_sizes(n):
    fig = vc.comparison_figure(n=n, link="eth_100g")
    _assert_readable(fig)
    shown = [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
    shown += [t for ax in fig.axes for t in _texts(ax)] + [t.get_text() for t in fig.texts]
    assert not [s for s in shown if "_" in s]
    listed = [t.get_text() for t in fig.texts if "fastest changes" in t.get_text()]
    assert len(listed) == 1 and listed[0].count("→") == len(_dots(fig)) >= 1


def test_chapter0_ranks_sweep_readable_names_and_sizes(monkeypatch):
    # chapter 0's precomputed bar chart (commlib.views.step.ranks_sweep) follows the same rule
    from commlib.views import animation
    from commlib.views import step as basics

    drawn = []

    def capture(draw, values, **kwargs):
        drawn.extend(draw(v) for v in values)

    monkeypatch.setattr(animation, "sweep_html", capture)
    basics.ranks_sweep("resnet50", "fp32", "eth_10g", ranks=(2, 256))
    assert len(drawn) == 2
    for fig in drawn:
        _assert_readable(fig)
        names = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert len(names) == len(cost.ALLREDUCE_ALGORITHMS)
        assert not [s for s in names if "_" in s]
        assert "halving-doubling (Rabenseifner)" in names


#: The calculators' label column is 11em of 13 px text (143 px); 19 characters of it measure at most ~133 px.
_LABEL_CHARS = 19


@pytest.mark.parametrize("make", [vc.cluster_calculator, vc.primitive_calculator, vc.bandwidth_converter])
def test_calculator_labels_fit_their_column_and_read_as_words(make):
    calc = make()
    for key, control in calc.controls.items():
        assert len(control.description) <= _LABEL_CHARS, (key, control.description)
        for label in getattr(control, "options", ()):
            text = label[0] if isinstance(label, tuple) else str(label)
            assert "_" not in text, (key, text)
    units = {k: c.description for k, c in calc.controls.items()}
    if make is vc.cluster_calculator:
        assert "(ms" in units["t_compute_ms"] and "(%)" in units["target_percent"]


def test_partner_figure_draws_one_arc_per_pair_from_the_traces():
    from matplotlib.patches import FancyArrowPatch

    fig = vc.partner_figure(ce.partner_runs(8))
    left, right = fig.axes
    arcs = [p for p in left.patches if isinstance(p, FancyArrowPatch)]
    assert len(arcs) == 3 * 4                     # 3 steps, 4 pairs each
    arcs = [p for p in right.patches if isinstance(p, FancyArrowPatch)]
    assert len(arcs) == 6 * 4
    labels = [t.get_text() for t in left.texts if t.get_text().startswith("step")]
    assert labels == [f"step {s + 1}: distance {2 ** s}, 1 x M" for s in range(3)]


def test_hierarchical_figure_two_hosts_arrows_both_ways():
    fig = vc.hierarchical_figure(2, 4)
    styles = [t.arrow_patch.get_arrowstyle() for t in fig.axes[0].texts if getattr(t, "arrow_patch", None)]
    assert sum(type(s).__name__ == "CurveAB" for s in styles) == 4   # the 4 inter-host rings, both ways


def test_coefficients_table_gives_the_trees_one_entry_per_chunk_count():
    text = vc.coefficients_table(n=16, hosts=2, chunks=(1, 64)).data
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in text.splitlines() if line.startswith("| ")}
    tree = compare.ALGORITHM_NAMES["double_binary_tree"]
    small = compare.alpha_beta_coefficients("double_binary_tree", 16, chunks=1)[0]
    large = compare.alpha_beta_coefficients("double_binary_tree", 16, chunks=64)[0]
    assert rows[tree] == f"{small:g} (q = 1); {large:g} (q = 64)"
    ring = compare.alpha_beta_coefficients("ring", 16)[0]
    assert rows[compare.ALGORITHM_NAMES["ring"]] == f"{ring:g}"
    assert small < ring < large            # few start-ups for a small message, many for a large one


def test_coefficients_table_shows_only_the_rows_asked_for_and_captions_only_their_settings():
    shown = ("ring", "tree", "recursive_doubling", "halving_doubling", "naive", "pipelined_tree", "double_binary_tree")
    text = vc.coefficients_table(n=16, chunks=(1, 64), algorithms_shown=shown).data
    rows = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")][2:]
    assert rows == [compare.ALGORITHM_NAMES[a] for a in shown]
    caption = text.splitlines()[0]
    assert "multi-rail" not in caption and "hierarchical" not in caption and "torus" not in caption
    assert "q = 1 or 64" in caption
    torus = vc.coefficients_table(n=16, algorithms_shown=("ring", "torus")).data
    assert "4x4 grid" in torus.splitlines()[0] and "q = " not in torus.splitlines()[0]
    full = vc.coefficients_table(n=16).data
    assert all(compare.ALGORITHM_NAMES[a] in full for a in compare.ALGORITHMS)
    with pytest.raises(ValueError, match="algorithms_shown"):
        vc.coefficients_table(n=16, algorithms_shown=("ring", "no_such_algorithm"))


def test_torus_cycles_figure_draws_each_torus_link_in_exactly_one_cycle():
    links = [frozenset(e) for c in ce.TORUS4_CYCLES for e in zip(c, c[1:] + c[:1])]
    assert all(sorted(c) == list(range(16)) for c in ce.TORUS4_CYCLES)      # each visits every node once
    torus = {frozenset((r * 4 + c, r * 4 + (c + 1) % 4)) for r in range(4) for c in range(4)} | \
        {frozenset((r * 4 + c, ((r + 1) % 4) * 4 + c)) for r in range(4) for c in range(4)}
    assert set(links) == torus and len(links) == 32                            # every torus link once, no other
    fig = vc.torus_cycles_figure()
    assert [ax.get_title().split(":")[0] for ax in fig.axes] == ["cycle 1", "cycle 2"]


def test_set_keeps_each_dropdown_showing_the_value_it_computes_with():
    """set() stands only the calculator's own observer aside: a dropdown's label still follows its value,
    so the menu shows the algorithm the results are computed for."""
    calc = vc.cluster_calculator()
    calc.set(n=32, hosts=4, algorithm="hierarchical")
    menu = calc.controls["algorithm"]
    assert menu.value == "hierarchical" and calc.error is None
    assert menu.label == compare.ALGORITHM_NAMES["hierarchical"]
    assert menu.index == list(menu._options_values).index("hierarchical")
    calc.controls["algorithm"].value = "ring"          # a change from the screen still recomputes
    assert menu.label == compare.ALGORITHM_NAMES["ring"]
    ring = dict(calc.results)
    calc.set(algorithm="hierarchical")
    assert calc.results != ring and menu.label == compare.ALGORITHM_NAMES["hierarchical"]
    assert sum(1 for c in calc.controls.values() for _ in c._trait_notifiers.get("value", {}).get("change", [])
               if _ == calc._changed) == len(calc.controls)     # observed once each, however often set() runs


def test_coefficients_table_can_split_the_bytes_by_port_and_the_hierarchical_parts_add_to_the_ring():
    shown = ("ring", "multi_rail_ring", "hierarchical")
    text = vc.coefficients_table(n=16, hosts=2, algorithms_shown=shown, split_by_port=True).data
    assert "bytes inside the host (x M)" in text and "bytes between hosts (x M)" in text
    assert "as if one link carried both" not in text
    inside, between = cluster.port_bytes("hierarchical", 16, 2)
    assert inside + between == pytest.approx(compare.alpha_beta_coefficients("ring", 16)[1])
    assert "| 14 | 2 | 1.75 | 0.125 |" in text          # the start-ups split by port too
    assert "start-ups inside the host (x alpha)" in text and "start-ups a (x alpha)" not in text
    a_inside, a_between = cluster.port_startups("hierarchical", 16, 2)
    assert a_inside + a_between == compare.alpha_beta_coefficients("hierarchical", 16, hosts=2)[0]
    # the default keeps the one bytes column
    assert "bytes b (x M, each x beta)" in vc.coefficients_table(n=16, hosts=2, algorithms_shown=shown).data
    with pytest.raises(ValueError, match="split_by_port"):
        vc.coefficients_table(n=16, algorithms_shown=("ring", "torus"), split_by_port=True)


@pytest.mark.parametrize("schedule, n, q", [("chain", 4, 3), ("master", 4, 3), ("chain", 6, 2)])
def test_pipeline_figure_draws_one_numbered_cell_per_send(schedule, n, q):
    sends = ce.pipeline_sends(schedule, n, q)
    fig = vc.pipeline_figure(sends, n)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    # every send is a cell holding its chunk number and its destination, so no colour is needed to read it
    assert sorted(t for t in texts if t.isdigit()) == sorted(str(s.chunk) for s in sends)
    assert sorted(t for t in texts if t.startswith("to ")) == sorted(f"to {s.dst}" for s in sends)
    cells = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_edgecolor()[3] > 0]
    assert len(cells) == len(sends)
    # neighbouring chunks differ in hatch; no chunk takes a rank's colour or a complete sum's blue
    by_chunk = {s.chunk: c for s, c in zip(sends, cells)}
    assert all(by_chunk[j].get_hatch() != by_chunk[j + 1].get_hatch() for j in range(q - 1))
    taken = {to_hex(c) for c in vc._RANK_COLORS + [vc._FULL]}
    assert not {to_hex(c.get_facecolor()) for c in cells} & taken
    plt.close(fig)


def test_pipeline_phases_fill_and_drain():
    # chain (q >= n - 1): the pipeline fills for n - 2 steps and drains for n - 2; the master for n - 1 each way
    for n, q in ((4, 3), (5, 4), (3, 6)):
        assert vc.pipeline_phases(ce.pipeline_sends("chain", n, q)) == (
            ["fill"] * (n - 2) + ["full"] * (q - n + 2) + ["drain"] * (n - 2))
        assert vc.pipeline_phases(ce.pipeline_sends("master", n, q)) == (
            ["fill"] * (n - 1) + ["full"] * ((n - 1) * (q - 1)) + ["drain"] * (n - 1))
    with pytest.raises(ValueError, match="sends"):
        vc.pipeline_phases([])


@pytest.mark.parametrize("n, link", [(8, "eth_100g"), (12, "eth_10g"), (16, "eth_100g"), (128, "eth_100g")])
def test_comparison_figure_draws_the_fastest_of_all_in_every_panel_through_every_circle(n, link):
    """The lower envelope (the fastest of all drawn algorithms at each size, over the bound) is one thin line in every
    panel, in a colour no algorithm has, and each switch circle sits on it in whichever panel the circle is drawn."""
    item = hardware.link(link)
    fig = vc.comparison_figure(n=n, link=link)
    curves = {a: (lambda m, a=a: compare.best_fold_seconds(a, m, n, item.bandwidth, item.latency))
              for a in vc.figure_algorithms(n)}
    algorithm_colours = {line.get_color() for ax in fig.axes for line in ax.lines
                         if line.get_label() in compare.ALGORITHM_NAMES.values()}
    widths = [line.get_linewidth() for ax in fig.axes for line in ax.lines
              if line.get_label() in compare.ALGORITHM_NAMES.values()]
    for ax in fig.axes:
        (envelope,) = [line for line in ax.lines if line.get_label() == "fastest of all"]
        assert "fastest of all" in [t.get_text() for t in ax.get_legend().get_texts()]
        assert envelope.get_color() not in algorithm_colours and envelope.get_linewidth() < min(widths)
        x, y = np.asarray(envelope.get_xdata()), np.asarray(envelope.get_ydata())
        bound = np.array([compare.allreduce_lower_bound(m, n, item.bandwidth, item.latency) for m in x])
        assert y == pytest.approx(np.array([min(c(m) for c in curves.values()) for m in x]) / bound, rel=1e-9)
        # never above any curve drawn in the panel, at every size the curves are drawn at
        for line in ax.lines:
            if line.get_label() in compare.ALGORITHM_NAMES.values():
                lx, ly = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
                common = np.isin(x, lx)
                assert common.sum() == len(lx) and (y[common] <= ly * (1 + 1e-9)).all()
        for dot in [line for line in ax.lines if line.get_marker() == "o" and len(line.get_xdata()) == 1]:
            k = int(np.argmin(np.abs(np.log(x / dot.get_xdata()[0]))))
            assert x[k] == pytest.approx(dot.get_xdata()[0], rel=1e-12)      # a vertex of the envelope
            assert y[k] == pytest.approx(dot.get_ydata()[0], rel=1e-6)


def test_fold_loss_words_follow_the_crossover():
    # 12 ranks (p' = 8), the fold that swaps halves: 2 log2(8) + 2 = 8 start-ups and 2(7/8)M + M bytes, against the
    # ring's 22 and 2(11/12)M; they cross at 14 alpha B / (2.75 - 11/6)
    link = hardware.link("eth_100g")
    alpha_b = link.latency * link.bandwidth
    expected = 14 * alpha_b / (2.75 - 11 / 6)

    def t(a, m, k):
        return compare.best_fold_seconds(a, m, k, link.bandwidth, link.latency)

    found = {k: compare.crossover_sizes(lambda m, k=k: t("halving_doubling", m, k), lambda m, k=k: t("ring", m, k),
                                        1e2, 1e12)[0] for k in (12, 97)}
    assert found[12] == pytest.approx(expected, rel=1e-9)
    for k, m in found.items():   # halving-doubling wins below, the ring above
        assert t("halving_doubling", 0.9 * m, k) < t("ring", 0.9 * m, k)
        assert t("halving_doubling", 1.1 * m, k) > t("ring", 1.1 * m, k)
    words = vc.fold_loss_words(found)
    assert words.startswith("loses to the ring for large messages")
    assert f"{float(f'{expected:.2g}') / 1e3:.0f} kB on 12 ranks" in words
    assert vc.fold_loss_words({12: 0.0}) == "loses to the ring at every size"
    assert vc.fold_loss_words({12: math.inf}) == "keeps up with the ring"
    with pytest.raises(ValueError):
        vc.fold_loss_words({})


def test_comparison_figure_shows_a_curve_that_lies_on_another_and_labels_the_ratios():
    """On 16 ranks Bruck's all-reduce has halving-doubling's counts: both curves are drawn, the later one thin on top
    and named in the legend as sharing the counts; the ratio axis is labelled at 1, 2, 3 and 5. On 12 nothing ties."""
    fig = vc.comparison_figure(n=16, link="eth_100g")
    right = fig.axes[-1]
    width = {line.get_label(): line.get_linewidth() for line in right.lines}
    assert width[compare.ALGORITHM_NAMES["bruck"]] < width[compare.ALGORITHM_NAMES["halving_doubling"]]
    legend = [t.get_text() for t in right.get_legend().get_texts()]
    assert any(t.startswith(compare.ALGORITHM_NAMES["bruck"]) and "same counts as halving-doubling" in t for t in legend)
    labels = {t.get_text() for t in fig.axes[0].get_yticklabels()}
    assert {"1", "2", "3", "5"} <= labels
    plt.close(fig)
    fig = vc.comparison_figure(n=12, link="eth_100g")
    assert not any("same counts" in t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts())
    plt.close(fig)


@pytest.mark.parametrize("n", [2, 5, 6, 7, 8])
def test_bruck_steps_table_distances_and_blocks(n):
    """Distances 2^(k-1)..1 then 1..2^(k-1); min(d, n - d) consecutive blocks (mod n) a message; r+d, then r-d."""
    lines = vc.bruck_steps_table(ce.bruck_run(n)).data.splitlines()[4:]
    k = math.ceil(math.log2(n))
    dists = [2 ** i for i in reversed(range(k))] + [2 ** i for i in range(k)]
    assert len(lines) == 2 * k
    for step, (line, d) in enumerate(zip(lines, dists)):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == str(step + 1) and cells[2] == str(d)
        assert cells[1].startswith("reduce-scatter" if step < k else "all-gather")
        for r, cell in enumerate(cells[3:]):
            blocks, dst = cell.split(" → ")
            first = (r + d) % n if step < k else r   # reduce-scatter: the receiver's blocks; all-gather: its own
            assert [int(b) for b in blocks.split(", ")] == [(first + j) % n for j in range(min(d, n - d))]
            assert int(dst) == ((r + d) % n if step < k else (r - d) % n)


def test_bruck_steps_table_bad_n():
    with pytest.raises(ValueError, match="n"):
        ce.bruck_run(1)


def test_bruck_steps_table_refuses_another_algorithm():
    with pytest.raises(ValueError, match="trace"):
        vc.bruck_steps_table(ce.partner_runs(4).traces["recursive_doubling"])
