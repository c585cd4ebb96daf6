"""The lab's prose follows the run: synthetic runs where the wording must change with the numbers."""

from __future__ import annotations

from commlib.lab import explain


def test_small_range_growth_gets_a_cause_from_the_load_checks():
    # a loaded re-run: 1 KiB -> 8 KiB took 338 times as long
    loaded = explain.growth_sentence(338.0, 2**10, 2**13, copy_factor=(7.8, 8.3), loaded=[2**11, 2**12])
    assert "42.2 times dearer" in loaded and "load may explain it" in loaded
    quiet = explain.growth_sentence(338.0, 2**10, 2**13, copy_factor=(7.8, 8.3))
    assert "no timing in that range fails a load check" in quiet
    assert explain.growth_sentence(1.3, 2**10, 2**13, copy_factor=(7.8, 8.3)) == ""   # flat: nothing to explain


def test_first_takeaway_follows_the_measured_growth():
    assert "showed here the two regimes" in explain.shape_takeaway(1.3, 8.4)
    loaded = explain.shape_takeaway(338.0, 8.4)
    assert "flat for small" not in loaded and "does not show the flat part" in loaded and "338.0" in loaded
    assert "does not show the part proportional to size" in explain.shape_takeaway(1.3, 2.0)
    assert "does not show either regime" in explain.shape_takeaway(40.0, 2.0)


def test_alpha_is_quoted_only_where_the_sweeps_agree():
    assert explain.alpha_quote(12.3e-6, [11e-6, 14e-6]) == "the line's α is 12 µs"
    apart = explain.alpha_quote(12.3e-6, [3e-6, 40e-6])
    assert "does not determine" in apart and "12 µs" not in apart and "3.0 µs and 40 µs" in apart
    assert "does not determine" in explain.alpha_quote(5e-6, [0.0, 5e-6])            # a sweep found no start-up
    assert "does not determine" not in explain.alpha_quote(5e-6, [4e-6, 8e-6])       # exactly 2x: still quoted
