"""NVLS's tuner formula against published peaks: the formula as NCCL writes it, and the book's reading of the misses."""

from dataclasses import replace

import pytest

from commlib.today import algorithm_choice as tuning
from commlib.today import nvls_measured as nm


def test_the_formula_is_ncclss_closed_form_and_takes_the_generations_efficiency():
    for m in nm.MEASURED:
        b = m.links * m.link_bw
        p = m.gpus
        assert nm.predict(m) == pytest.approx(2 * m.efficiency * b * (p - 1) / (p + 1), rel=1e-12)
    b200 = [m for m in nm.MEASURED if m.node.startswith("B200")][0]
    assert b200.efficiency == tuning.NCCL_QUOTED["nvls_efficiency_blackwell"] == 0.74
    hopper = replace(b200, efficiency=tuning.NCCL_QUOTED["nvls_efficiency_hopper"])
    assert nm.predict(hopper) / nm.predict(b200) == pytest.approx(0.85 / 0.74)


def test_nothing_is_fitted_to_the_measurements():
    # moving a measured peak changes the error, never the prediction
    rows = nm.predictions()
    moved = nm.predictions(tuple(replace(m, busbw=(2 * m.busbw[0], 2 * m.busbw[1])) for m in nm.MEASURED))
    assert [r.predicted for r in rows] == [r.predicted for r in moved]
    assert all(abs(a.error - ((1 + b.error) / 2 - 1)) < 1e-12 for a, b in zip(moved, rows))


def test_the_book_reading_of_the_misses():
    rows = nm.predictions()
    big = [r for r in rows if r.measurement.gpus >= 4]
    small = [r for r in rows if r.measurement.gpus < 4]
    assert max(abs(r.error) for r in big) < 0.05 < min(abs(r.error) for r in small)
    assert all(r.error < 0 for r in small)                           # too low where NVLS is not picked
    e = nm.errors(rows)
    assert e["points"] == len(rows) and e["worst"] == min(r.error for r in rows)
    ring = nm.predictions(nm.ring_measurements())
    assert max(abs(r.error) for r in ring) < 0.02
    node = tuning.machine("nvswitch_node")
    picks = {p: tuning.choose("all_reduce", 2**30, replace(node, ranks=p)).algorithm for p in range(2, 9)}
    assert [picks[p] for p in (2, 3)] == ["ring", "ring"] and all(picks[p] == "nvls" for p in range(4, 9))


def test_errors_needs_rows():
    with pytest.raises(ValueError, match="rows"):
        nm.errors([])
