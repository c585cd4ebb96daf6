"""The VGG-16 worked example of the study notes, recomputed."""

import pytest

from commlib import worked


def test_vgg16_reproduces_the_note():
    ex = worked.vgg16_gigabit()
    note = worked.VGG16_AS_REPORTED
    assert round(ex.efficiency, 4) == note["efficiency"]
    assert round(ex.t_step, 2) == note["t_step"]
    assert round(ex.bandwidth_90 / 1e6) == note["bandwidth_90_mb"]
    assert ex.growth_limit == pytest.approx(4 / 3)
    # the model explains most but not all of the measured step time
    assert 0.9 < ex.t_step / note["t_step_measured"] < 1.0
    # the exact parameter count gives a slightly different D than the note's two values
    assert ex.d_exact == 138_357_544 * 4
    assert ex.d_exact != note["d_bytes_used"] and ex.d_exact != note["d_bytes_stated"]
    # the note's Mbit/s figure is eight times its MB/s figure
    assert round(ex.bandwidth_90 * 8 / 1e6, -1) == note["bandwidth_90_mbit"]


def test_rows_are_labelled_with_units():
    rows = worked.vgg16_gigabit().rows()
    assert all(len(r) == 3 for r in rows)
    text = " ".join(r[1] for r in rows)
    for unit in ("MB", "s", "%", "MB/s", "Mb/s"):
        assert unit in text


def test_rows_quote_the_note_from_its_data():
    from commlib import worked
    ex = worked.vgg16_gigabit()
    rows = dict((r[0], r[2]) for r in ex.rows())
    assert rows["gradient M (the note's value)"].startswith("553.36 MB")
    assert "B for ε = 90 %" in rows and ex.target_efficiency == worked.VGG16_AS_REPORTED["target_efficiency"]


def test_headers_first_account_for_most_of_the_gap_to_the_measurement():
    """1448 data bytes per 1538 byte times on the wire: the framed model lands close to the one measurement."""
    from commlib import hardware
    ex = worked.vgg16_gigabit()
    framing = hardware.TCP_OVER_ETHERNET
    assert (framing.payload, framing.wire) == (1448, 1538)
    assert ex.goodput == pytest.approx(hardware.link("eth_1g").bandwidth * 1448 / 1538)
    assert ex.t_step < ex.t_step_framed < ex.t_step_measured       # headers close most of the gap, not more
    assert (ex.t_step_measured - ex.t_step_framed) < 0.1 * (ex.t_step_measured - ex.t_step)


def test_the_lesson_table_leaves_the_audit_out_and_the_note_agrees_only_where_its_digits_do(monkeypatch):
    ex = worked.vgg16_gigabit()
    rows = ex.lesson_rows()
    assert all(len(r) == 2 for r in rows) and not any("n/(n-1)" in r[0] for r in rows)
    assert ex.note_agrees()
    monkeypatch.setitem(worked.VGG16_AS_REPORTED, "t_step", 7.2)
    assert not ex.note_agrees()
