"""NVLS's tuner formula against published peaks: the formula as NCCL writes it, and the book's reading of the misses."""

from dataclasses import replace

import pytest

from commlib.today import algorithm_choice as tuning
from commlib.today import nvls_measured as nm


def test_the_chooser_uses_the_closed_form_with_the_generations_efficiency():
    for m in nm.MEASURED:
        b, p = m.links * m.link_bw, m.gpus
        assert nm.predict(m) == pytest.approx(2 * m.efficiency * b * (p - 1) / (p + 1), rel=1e-12)
    b200 = [m for m in nm.MEASURED if m.node.startswith("B200")][0]
    assert b200.efficiency == tuning.NCCL_QUOTED["nvls_efficiency_blackwell"] == 0.74
    hopper = replace(b200, efficiency=tuning.NCCL_QUOTED["nvls_efficiency_hopper"])
    assert nm.predict(hopper) / nm.predict(b200) == pytest.approx(0.85 / 0.74)


def test_nccls_own_figure_takes_a_listed_speed_and_the_cap():
    for m in nm.MEASURED:
        b, p = m.links * m.link_bw, m.gpus
        speeds = nm.NCCL_NVLS_SPEEDS[m.generation]
        fits = [x for x in speeds if x * (p + 1) <= b]
        assert nm.predict_nccl(m) == pytest.approx(p * min(2 * m.efficiency * fits[0] * (p - 1) / p, speeds[0]))
        assert nm.predict_nccl(m) <= nm.predict(m) * (1 + 1e-12)          # never above the smooth formula
    ring = nm.ring_measurements()[0]
    assert nm.predict_nccl(ring) == nm.predict(ring)


def test_nothing_is_fitted_to_the_measurements():
    rows = nm.predictions()
    moved = nm.predictions(tuple(replace(m, busbw=(2 * m.busbw[0], 2 * m.busbw[1])) for m in nm.MEASURED))
    assert [(r.predicted, r.nccl) for r in rows] == [(r.predicted, r.nccl) for r in moved]


def test_the_books_reading_of_the_misses():
    rows = nm.predictions()
    sweep = {r.measurement.gpus: r for r in rows if r.measurement.forced}
    assert min(sweep) == 3                                  # the 2-GPU run, a ring in that NCCL, is left out
    assert max(abs(sweep[p].error) for p in range(4, 9)) < 0.05 < abs(sweep[3].error)
    eights = [r for r in rows if r.measurement.gpus == 8]
    assert all(abs(r.error) < 0.05 for r in eights)
    ring = nm.predictions(nm.ring_measurements())
    assert max(abs(r.error) for r in ring) < 0.02
    node = tuning.machine("nvswitch_node")
    picks = {p: tuning.choose("all_reduce", 2**30, replace(node, ranks=p)).algorithm for p in range(3, 9)}
    assert picks[3] == "ring" and all(picks[p] == "nvls" for p in range(4, 9))
    assert ring[2].measurement.busbw == sweep[4].measurement.busbw                 # a tie measured at 4 GPUs,
    assert max(sweep[4].measurement.busbw) < sweep[4].predicted                    # below the formula's NVLS


def test_errors_checks_its_inputs():
    with pytest.raises(ValueError, match="rows"):
        nm.errors([])
    with pytest.raises(ValueError, match="version"):
        nm.errors(nm.predictions(), "tuner")
