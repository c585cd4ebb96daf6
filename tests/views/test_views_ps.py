"""Tests for commlib.views.parameter_servers: the calculator's callback, the figures' data, the animation player.

Expected values are derived here from the hardware presets and the formulas
max(M/B, nM/(kB)) and 2(n-1)M/(nB), not read back from the code under test.
"""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from commlib import hardware  # noqa: E402
from commlib.parameter_servers import simulate as ps  # noqa: E402
from commlib.parameter_servers.calculators import SAME_CARDS  # noqa: E402
from commlib.parameter_servers.cost import SAME_CARDS_LABEL  # noqa: E402
from commlib.units import format_size, format_time  # noqa: E402
from commlib.views import parameter_servers as views  # noqa: E402

BERT = 335_141_888 * 4          # BERT-Large fp32 gradient, bytes
E100 = 100e9 / 8                # 100 Gb/s in bytes/s, one direction


def test_presets_used_below_are_what_the_tests_assume():
    assert hardware.gradient_bytes("bert_large", "fp32") == BERT
    assert hardware.LINKS["eth_100g"].bandwidth == E100


# --- calculator --------------------------------------------------------------------------------

def test_calculator_k_equal_n_shows_ps_winning():
    calc = views.ps_calculator(model="bert_large", n=8, k=8, worker_link="eth_100g", server_link="eth_100g")
    assert calc.error is None
    ps_s, ring_s = BERT / E100, 2 * 7 * BERT / (8 * E100)
    assert calc.results["PS round"] == format_time(ps_s)
    assert calc.results["ring all-reduce"] == format_time(ring_s)
    assert calc.results["faster"] == f"PS, {ring_s / ps_s:.3g}x faster (PS on 16 cards, ring on 8)"
    # on the same 16 cards (two per worker) the ring takes (n-1)/n M/B and wins
    assert calc.results[SAME_CARDS] == ("ring all-reduce, one ring per card (2 cards per worker), "
                                       f"{ps_s / (ring_s / 2):.3g}x faster (both on 16 cards)")
    # k0 = 64 / 14 = 4.57 -> 5
    assert calc.results["smallest k (separate servers) to beat the ring"] == "5 server machines"
    assert format_time(ps_s) in calc.output.value


def test_calculator_half_as_many_servers_loses_and_colocated_ties():
    calc = views.ps_calculator(model="bert_large", n=8, k=4)
    ps_s, ring_s = 8 * BERT / (4 * E100), 2 * 7 * BERT / (8 * E100)
    assert calc.results["faster"] == f"ring all-reduce, {ps_s / ring_s:.3g}x faster (PS on 12 cards, ring on 8)"
    calc.set(colocated=True, k=8)
    assert calc.results["faster"] == "tie (PS on 8 cards, ring on 8)"
    assert calc.results["PS round"] == calc.results["ring all-reduce"] == format_time(ring_s)


def test_calculator_server_link_matters_only_apart():
    calc = views.ps_calculator(model="bert_large", n=8, k=4, server_link="eth_400g")
    # servers at 400 Gb/s: 8M/(4 * 50 GB/s) = M/25e9 < M/B_w = M/12.5e9 -> the worker term decides
    assert calc.results["PS round"] == format_time(BERT / E100)
    # k0 = 64/14 * 12.5/50 = 1.14 -> 2
    assert calc.results["smallest k (separate servers) to beat the ring"] == "2 server machines"
    calc.set(colocated=True)
    # colocated, 4 shards on 8 machines: M + 6M/4 = 2.5 M each way on a shard host
    assert calc.results["PS round"] == format_time(2.5 * BERT / E100)


def test_calculator_same_cards_says_tie_when_the_workers_cards_bound_both():
    # k = 2 fast servers for 8 workers on 10 Gb/s: six workers keep one 10 Gb/s card, so no all-reduce beats M/B_w,
    # the PS's own time: given the same cards it ties (it beat the ring on the workers' cards alone)
    calc = views.ps_calculator(model="bert_large", n=8, k=2, worker_link="eth_10g", server_link="eth_100g")
    assert calc.results["faster"].startswith("PS, ")
    assert calc.results[SAME_CARDS] == "tie (both on 10 cards)"


def test_calculator_two_workers_have_no_winning_k():
    calc = views.ps_calculator(model="resnet50", n=2, k=1)
    assert calc.results["smallest k (separate servers) to beat the ring"].startswith("none")


def test_calculator_bad_input_shows_the_message_in_place():
    calc = views.ps_calculator(n=4, k=2)
    calc.set(colocated=True, k=6)
    assert calc.results == {}
    assert "k must be" in calc.error and "on the workers" in calc.error   # names the control
    assert "role='alert'" in calc.output.value
    assert "k must be &lt;= n (4)" in calc.output.value
    calc.set(k=4)                      # a good value again clears the message
    assert calc.error is None and "PS round" in calc.results


def test_calculator_labels_fit_and_the_parameter_count_is_a_result():
    """Labels short enough to show whole (description column 11em, about 20 characters; a dropdown's
    box and a checkbox's label about 28); the model's size moved from its label to a result row."""
    calc = views.ps_calculator(model="bert_large", n=8, k=4)
    for name, control in calc.controls.items():
        limit = 28 if control.__class__.__name__ == "Checkbox" else 20
        assert len(control.description) <= limit, (name, control.description)
        for label in getattr(control, "_options_labels", ()):
            assert len(label) <= 28, (name, label)
    assert calc.results["parameters"] == "335,141,888"
    assert calc.results["gradient size M"].startswith("1.34 GB")


# --- figures -------------------------------------------------------------------------------------

def test_volumes_figure_plots_one_like_for_like_panel_per_direction():
    p = np.arange(2, 20)
    fig = views.volumes_figure(ps.server_and_ring_volumes(1.0, p))
    (ax,) = fig.axes
    lines = {ln.get_label(): ln.get_ydata() for ln in ax.get_lines()}
    assert set(lines) == {"PS server NIC: nM", "ring rank NIC: 2(n−1)M/n"}
    np.testing.assert_allclose(lines["PS server NIC: nM"], p)     # eq-ps-apart with k = 1
    np.testing.assert_allclose(lines["ring rank NIC: 2(n−1)M/n"], 2 * (p - 1) / p)
    plt.close(fig)


def test_sharding_figure_ps_curve_is_the_busiest_nic():
    n, m, b = 6, 1e9, 1e10
    fig = views.sharding_figure(ps.sharding_curves(m, n, b))
    ax = fig.axes[0]
    line = next(ln for ln in ax.get_lines() if ln.get_label().startswith("PS, k separate"))
    k = np.asarray(line.get_xdata())
    np.testing.assert_allclose(line.get_ydata(), 1e3 * np.maximum(m / b, n * m / (k * b)))
    ring = next(ln for ln in ax.get_lines() if ln.get_label().startswith("ring all-reduce, the n workers"))
    np.testing.assert_allclose(ring.get_ydata(), 1e3 * 2 * (n - 1) * m / (n * b))
    same = next(ln for ln in ax.get_lines() if ln.get_label() == f"{SAME_CARDS_LABEL} (n + k)")
    # shares fitted to the cards: 2(n-1)M/((n+k)B), down to the floor M/b_min of the machines with fewest cards
    np.testing.assert_allclose(same.get_ydata(),
                               1e3 * np.maximum(2 * (n - 1) * m / ((n + k) * b), m / ((1 + k // n) * b)))
    assert (same.get_ydata() < line.get_ydata()).all()
    # the colocated PS uses no server machine: drawn at k = 0, on the ring's time
    star = next(ln for ln in ax.get_lines() if ln.get_label().startswith("PS colocated"))
    assert list(star.get_xdata()) == [0] and star.get_ydata()[0] == pytest.approx(ring.get_ydata()[0])
    plt.close(fig)


def test_traffic_table_has_simulation_equal_to_closed_form_in_every_row():
    text = views.traffic_table(ps.traffic_check()).data
    rows = [r for r in text.splitlines() if re.match(r"^\| \d", r)]
    assert len(rows) == 6
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        sent, received, closed = (float(c.split()[0]) for c in cells[3:6])
        assert sent == received == closed
        assert cells[6] == "yes"


# --- animation and sweep --------------------------------------------------------------------------

def test_push_pull_stages_show_the_round():
    r = ps.demo_round(n=3, k=2)
    fig, draw, labels = views.push_pull_frames(r)
    assert [s.label for s in r.stages] == ["start", "push", "update", "pull"]
    for i in range(len(labels)):
        draw(i)
    # the final frame shows every worker holding the new parameters
    for w in r.stages[-1].workers:
        np.testing.assert_array_equal(w, r.params)
    plt.close(fig)


def test_animation_is_an_offline_deterministic_player():
    a = views.push_pull_animation(ps.demo_round(n=2, k=2, colocated=True, length=4)).data
    b = views.push_pull_animation(ps.demo_round(n=2, k=2, colocated=True, length=4)).data
    assert a == b
    assert a.count('class="gotw-frame"') == 4
    assert "http" not in a.split("<script>")[0]
    assert "1/4 start" in a and "4/4 pull" in a


def test_servers_sweep_has_one_frame_per_k():
    m, b = hardware.gradient_bytes("resnet50", "fp32"), hardware.link("eth_100g").bandwidth
    html = views.servers_sweep(ps.sharding_curves(m, 4, b, b, ks=[1, 2, 3]), "ResNet-50").data
    assert html.count('class="gotw-frame"') == 3
    assert 'data-label="k = 3"' in html


def test_calculator_names_the_card_that_sets_the_ps_time_and_the_same_cards_rival():
    # 10 Gb/s workers, 400 Gb/s servers: the server moves more bytes (2.68 GB) but the worker's 1.34 GB at 10 Gb/s
    # sets the time
    calc = views.ps_calculator(model="bert_large", n=8, k=4, worker_link="eth_10g", server_link="eth_400g")
    w = hardware.link("eth_10g").bandwidth
    assert calc.results["PS bottleneck"] == f"worker NICs: {format_size(BERT)} each way, {format_time(BERT / w)}"
    # twelve cards dealt unevenly: the fastest all-reduce on them is the direct reduce-scatter/all-gather
    calc = views.ps_calculator(model="bert_large", n=8, k=4)
    assert calc.results[SAME_CARDS].startswith("direct reduce-scatter/all-gather, ")
    assert calc.results["PS bottleneck"].startswith("server NICs: ")


def test_calculator_smallest_k_uses_the_server_link_when_the_shards_sit_on_the_workers_too():
    calc = views.ps_calculator(model="bert_large", n=8, k=4, server_link="eth_400g")
    apart = calc.results["smallest k (separate servers) to beat the ring"]
    calc.set(colocated=True)
    assert calc.results["smallest k (separate servers) to beat the ring"] == apart == "2 server machines"


def test_the_same_cards_row_says_the_workers_get_the_servers_cards_and_rounds_to_three_digits():
    from commlib.parameter_servers.calculators import ps_results

    r = ps_results("bert_large", "fp32", 256, 256, worker_link="eth_1g", server_link="ib_xdr")
    assert "the all-reduce's workers given the servers' cards" in SAME_CARDS
    pattern = r"ring all-reduce, one ring per card \(2 cards per worker\), \d{3}x faster \(both on 512 cards\)"
    assert re.fullmatch(pattern, r[SAME_CARDS]), r[SAME_CARDS]
