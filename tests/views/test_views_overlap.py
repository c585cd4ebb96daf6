"""Tests for commlib.views.sgd.overlap (chapter 5): Gantt chart, bucket table and sweep, calculator."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from commlib import hardware  # noqa: E402
from commlib.experiments.sgd import overlap as overlap_experiments  # noqa: E402
from commlib.sgd import overlap  # noqa: E402
from commlib.views.sgd import overlap as overlap_views  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_overlap_calculator_and_bad_input():
    calc = overlap_views.overlap_calculator(model="resnet50", n=8, link="eth_25g")
    assert calc.error is None and "%" in calc.results["hidden behind backward"]
    calc.set(bucket_mib=-1.0)
    assert calc.error.startswith("bucket cap (MiB)")
    calc.set(bucket_mib=25.0, tflops=0.0)
    assert calc.error.startswith("achieved TFLOP/s")


def test_overlap_figure_and_bucket_table_agree_with_the_cost_model():
    link = hardware.LINKS["eth_25g"]
    r = overlap.overlap_timeline("resnet50", n=16, bandwidth=link.bandwidth, latency=link.latency, t_backward=0.05)
    table = overlap_views.bucket_table(r, 16, link.bandwidth, link.latency).data
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[-1] == cells[-2]           # timeline duration == ring formula, to the printed digit
    fig = overlap_views.overlap_figure(r)
    ax = fig.get_axes()[0]
    assert [t.get_text() for t in ax.get_yticklabels()][1].startswith("all-reduce")


def test_bucket_sweep_figure_draws_one_marker_per_positive_cap():
    sweep = overlap_experiments.bucket_cap_sweep([0, 1, 25, 100], latencies=(1e-5,), model="alexnet", n=4,
                                                 bandwidth=1e9, t_backward=0.05)
    fig = overlap_views.bucket_sweep_figure(sweep)
    ax = fig.get_axes()[0]
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [1.0, 25.0, 100.0]
    assert list(line.get_ydata()) == pytest.approx([1e3 * e for e in sweep.exposed(0)[1:]])   # ms, from the runs
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert not any(lb.startswith("cap 0") for lb in labels)      # a cap of 0 is left out: few lines a panel
    assert any(lb.startswith("no overlap") for lb in labels)


def test_overlap_sweep_draws_one_frame_per_link():
    sweep = overlap_experiments.link_sweep("alexnet", n=4, links=("eth_10g", "nvlink2"))
    html = overlap_views.overlap_sweep(sweep).data
    assert html.count('class="gotw-frame"') == 2
    assert hardware.link("eth_10g").name in html and hardware.link("nvlink2").name in html


def test_the_overlap_views_run_no_experiment():
    """Figures and sweeps take timelines as input; only the calculator calls the model (overlap_results)."""
    source = Path(overlap_views.__file__).read_text(encoding="utf-8")
    for call in ("overlap_timeline(", "bucket_sweep(", "step_compute_time(", "link_sweep(", "bucket_cap_sweep("):
        assert call not in source, call
