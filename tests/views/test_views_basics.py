"""The introduction's views: calculator callbacks driven directly, figures built."""

import pytest

from commlib import cost, hardware
from commlib.step.calculators import OVERLAP_ROW
from commlib.units import parse_size
from commlib.views import step as basics
from commlib.views.calculator import make_calculator, number, text


def test_allreduce_calculator_default_matches_model():
    calc = basics.allreduce_calculator(model="vgg16", dtype="fp32", n=4, link="eth_1g")
    assert calc.error is None
    seconds = cost.allreduce_time(hardware.gradient_bytes("vgg16"), 4, hardware.LINKS["eth_1g"].bandwidth,
                                  hardware.LINKS["eth_1g"].latency)
    assert calc.results["time of one all-reduce"] == f"{seconds:.2f} s"
    assert "553.43 MB" in calc.results["gradient size"]
    assert "527.79 MiB" in calc.results["gradient size"]
    assert "<table" in calc.output.value


def test_calculator_reacts_to_controls():
    calc = basics.allreduce_calculator(n=8)
    before = calc.results["time of one all-reduce"]
    calc.controls["link"].value = "ib_ndr"
    assert calc.results["time of one all-reduce"] != before
    calc.set(dtype="fp16", algorithm="naive")
    assert calc.values()["algorithm"] == "naive"
    assert calc.error is None


def test_single_rank_has_no_traffic():
    calc = basics.allreduce_calculator(n=1)
    assert calc.results["time of one all-reduce"] == "none: with one GPU there is nothing to send"   # not "0.00 ns"
    assert "bus bandwidth" not in calc.results


def test_bad_input_shows_message_in_place():
    calc = make_calculator(lambda size, n: {"time": f"{cost.allreduce_time(parse_size(size), n, 1e9):.3f} s"},
                           {"size": text("64 MiB", "size"), "n": number(4, "ranks")})
    assert calc.error is None
    calc.set(size="64 XB")
    assert "unknown size unit" in calc.error
    assert "gotw-error" in calc.output.value and "Traceback" not in calc.output.value
    calc.set(size="64 MiB", n=0)
    assert "ranks must be >= 1" in calc.error
    calc.set(n=2)
    assert calc.error is None and calc.results["time"].endswith(" s")


def test_unknown_control_name_is_rejected():
    calc = basics.allreduce_calculator()
    with pytest.raises(ValueError, match="unknown control"):
        calc.set(gpus=3)


def test_figures_and_sweep():
    fig = basics.alpha_beta_figure("eth_10g", 8)
    assert len(fig.axes[0].lines) >= 3
    html = basics.ranks_sweep("resnet50", "fp32", "eth_10g", ranks=(2, 4, 8)).data
    assert html.count('class="gotw-frame"') == 3
    assert "https://" not in html and "http://" not in html
    assert basics.ranks_sweep("resnet50", "fp32", "eth_10g", ranks=(2, 4, 8)).data == html  # deterministic


def test_reduction_cost_from_memory_bandwidth():
    calc = basics.allreduce_calculator(model="resnet50", n=8, link="nvlink2", memory_gbs=900)
    nbytes = hardware.gradient_bytes("resnet50")
    link = hardware.LINKS["nvlink2"]
    gamma = 3 / 900e9
    expected = cost.allreduce_time(nbytes, 8, link.bandwidth, link.latency, "ring", gamma)
    assert calc.results["time of one all-reduce"] == f"{expected * 1e3:.2f} ms"
    share = 100 * (7 / 8 * nbytes * gamma) / expected
    assert calc.results["reduction share of the time"] == f"{share:.1f} %"
    calc.set(memory_gbs=0)
    assert calc.results["reduction share of the time"] == "0.0 %"
    calc.set(memory_gbs=-5)
    assert "memory (GB/s) must lie between 0.001" in calc.error


def test_step_calculator_shows_the_model_function_and_reports_bad_input():
    from commlib.step import calculators as step
    calc = basics.step_calculator()
    assert calc.error is None and calc.results == step.step_results()
    calc.set(utilization_pct=0)
    assert "utilization (%)" in calc.error and "Traceback" not in calc.output.value
    calc.set(utilization_pct=40, link="nvlink5")
    assert calc.error is None and calc.results[OVERLAP_ROW] == "yes"


def test_allreduce_calculator_offers_the_links_of_2026():
    calc = basics.allreduce_calculator()
    keys = [value for _, value in calc.controls["link"].options]
    assert {"nvlink5", "nvlink6", "pcie6_x16", "pcie7_x16", "eth_800g", "ib_xdr"} <= set(keys)
    assert "upi" not in keys                             # a link between CPU sockets, not GPUs
    calc.set(link="ib_xdr")
    assert calc.error is None
    # the switch assumption is stated, and NVLink refuses more ranks than its largest domain holds
    assert "never blocks" in calc._gotw_spec and "NVSwitch" in calc._gotw_spec
    most = hardware.link("nvlink3").max_ranks
    calc.set(link="nvlink3", n=most + 1)
    assert calc.error is not None and calc.error.startswith(f"ranks n must be at most {most}")
    calc.set(link="pcie5_x16", n=hardware.GENERIC_GPUS_PER_HOST + 1)
    assert calc.error is not None and calc.error.startswith(f"ranks n must be at most {hardware.GENERIC_GPUS_PER_HOST}")
    calc.set(link="eth_10g", n=8)
    assert calc.error is None


def test_models_table_fits_a_page_and_cites_each_model():
    # chapter 0's reference table: five columns (a seven-column one ran off a 1300 px page), every row a preset,
    # the paper beside the model's name and the count's source in its own column
    from commlib.views import tables

    lines = tables.models_table().data.splitlines()
    header = next(line for line in lines if line.startswith("| model"))
    rows = [line for line in lines if line.startswith("| ") and line is not header and "---" not in line]
    assert header.count("|") - 1 <= 5
    assert len(rows) == len(hardware.MODELS)
    for key, row in zip(hardware.MODELS, rows):
        item = hardware.model(key)
        assert row.startswith(f"| {item.name} {{cite}}`{item.citation}`")
        assert f"{item.params:,}" in row and item.count_citation in row


def test_step_timeline_marks_each_step_end_where_the_model_puts_it():
    """Reader item 1: compute then all-reduce, a faster GPU, and overlap in buckets.

    The overlapped step ends after T_c (its last bucket waits for the end of backward), before T_c + T_m.
    """
    import matplotlib.pyplot as plt

    from commlib.step import cost as step_cost
    fig = basics.step_timeline_figure("resnet50", "fp32", 8, "eth_10g", 0.4, 4)
    eth = hardware.link("eth_10g")
    t_m = cost.allreduce_time(hardware.gradient_bytes("resnet50", "fp32"), 8, eth.bandwidth, eth.latency)
    ends = [t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("step ")]
    buckets = step_cost.bucketed_overlap(0.4, hardware.gradient_bytes("resnet50", "fp32"), 8, eth.bandwidth, eth.latency)
    overlapped = buckets[-1][0] + buckets[-1][1]
    assert buckets[-1][0] >= 0.4 and 0.4 < overlapped < 0.4 + t_m   # the last bucket waits for the end of backward
    assert ends == [f"step {1e3 * e:.0f} ms" for e in (0.4 + t_m, 0.1 + t_m, overlapped)]
    plt.close(fig)


def test_bandwidth_over_n_marks_each_ring_limit_and_halving_alpha_doubles_it():
    """Referee M3: the ring's limit n - 1 < T_m / (2 alpha) is drawn for every start-up of STARTUPS but none; halving
    alpha doubles it; the matched start-up's limit lies within the x-axis; every ring line differs in dash and marker."""
    import matplotlib.pyplot as plt

    from commlib.experiments.step import MATCHED_STARTUP, STARTUPS, startup_seconds
    from commlib.step.cost import largest_ranks_for_efficiency
    from commlib.worked import VGG16_AS_REPORTED as note

    fig = basics.bandwidth_over_n_figure()
    ax = fig.axes[0]
    from commlib.units import round_significant

    # each limit is a vertical line at its n, labelled with n to two significant digits (alpha is known no better)
    limits = [int(line.get_xdata()[0]) for line in ax.get_lines()
              if len(set(line.get_xdata())) == 1 and list(line.get_ydata()) == [0, 1]]
    assert [t.get_text() for t in ax.texts] == [f"n ≈ {round_significant(n):,}" for n in limits]
    assert len(limits) == len(STARTUPS) - 1 and abs(limits[1] - 1 - 2 * (limits[0] - 1)) <= 1
    matched = largest_ranks_for_efficiency(note["t_compute"], note["target_efficiency"], startup_seconds(MATCHED_STARTUP))
    assert matched in limits and ax.get_xlim()[1] > matched
    rings = [line for line in ax.get_lines() if line.get_label().startswith("ring, α")]   # the rings with a start-up
    assert len(rings) == len(STARTUPS) - 1
    assert len({(line.get_linestyle(), line.get_marker(), line.get_color()) for line in rings}) == len(rings)
    assert len({line.get_linestyle() for line in rings}) == len({line.get_marker() for line in rings}) == len(rings)
    plt.close(fig)
