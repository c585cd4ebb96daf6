"""commlib.units: parsing and formatting sizes, rates and times."""

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commlib import units


@pytest.mark.parametrize("text, expected", [
    ("64 MiB", 64 * 2**20),
    ("553.44 MB", 553.44e6),
    ("1 KiB", 1024),
    ("8 kb", 1000),
    ("1 Gb", 1e9 / 8),
    ("2 GiB", 2 * 2**30),
    ("0 B", 0),
    ("1_000 B", 1000),
])
def test_parse_size(text, expected):
    assert units.parse_size(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, expected", [
    ("25 Gb/s", 25e9 / 8),
    ("300 GB/s", 300e9),
    ("1 Gbps", 125e6),
    ("10 Gbit/s", 1.25e9),
    ("1 GiB/s", 2**30),
    ("125 MB/s", 125e6),
])
def test_parse_rate(text, expected):
    assert units.parse_rate(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["1,5 GB/s", "1,000 MB/s", "1,5GB/s"])
def test_a_comma_is_refused_not_guessed(text):
    """1,5 is one and a half in much of Europe: a comma could be a decimal mark or a thousands separator."""
    with pytest.raises(ValueError, match="comma is ambiguous"):
        units.parse_rate(text)


@pytest.mark.parametrize("text, separator, joined", [
    ("1 000 GB/s", "a space", "1000 GB/s"), ("1\u2009000 GB/s", "a thin space", "1000 GB/s"),
    ("1\u202f000.5 MB/s", "a narrow no-break space", "1000.5 MB/s"), ("10\u00a0000 B/s", "a no-break space", "10000 B/s"),
])
def test_a_space_between_groups_of_digits_is_refused_and_named(text, separator, joined):
    """"1 000 GB/s" (a space or a thin space as thousands separator) is refused with a message naming the separator and
    the number written without it, in every box that reads a size or a rate."""
    with pytest.raises(ValueError, match=f"^cannot read rate .*: {separator} between digits is not read as a thousands "
                                         f"separator; write {re.escape(joined)}$"):
        units.parse_rate(text)
    with pytest.raises(ValueError, match=f"^buffer M: cannot read .*: {separator} between digits"):
        units.size_entry("buffer M").read(text.replace("/s", ""))
    with pytest.raises(ValueError, match="expected a number then a unit"):
        units.parse_rate("1 00 GB/s")                 # not groups of three: no separator to name


def test_bits_and_bytes_differ_by_eight():
    assert units.parse_rate("8 Gb/s") == units.parse_rate("1 GB/s")


def test_mib_and_mb_differ():
    assert units.parse_size("1 MiB") / units.parse_size("1 MB") == pytest.approx(1.048576)


@pytest.mark.parametrize("bad", ["64 XB", "fast", "", "12 Mbs/s", "-"])
def test_bad_size_raises_value_error(bad):
    with pytest.raises(ValueError, match="size"):
        units.parse_size(bad)


@pytest.mark.parametrize("bad", ["25 Gb", "10 parsecs/s", "GB/s"])
def test_bad_rate_raises_value_error(bad):
    with pytest.raises(ValueError, match="rate"):
        units.parse_rate(bad)


def test_negative_size_is_rejected():
    with pytest.raises(ValueError, match=">= 0"):
        units.parse_size("-5 MB")


def test_non_string_is_rejected():
    with pytest.raises(ValueError, match="string"):
        units.parse_size(64)


def test_format():
    assert units.format_size(553_437_120) == "553.44 MB"
    assert units.format_size(2**20, binary=True) == "1.00 MiB"
    assert units.format_rate(125e6) == "125.00 MB/s"
    assert units.format_rate(125e6, bits=True) == "1.00 Gb/s"
    assert units.format_time(0.00256) == "2.56 ms"
    assert units.format_time(3e-6) == "3.00 µs"
    assert units.format_percent(0.0765) == "7.65 %"


def test_parse_time():
    assert units.parse_time("2.56 ms") == pytest.approx(2.56e-3)
    with pytest.raises(ValueError, match="time unit"):
        units.parse_time("3 fortnights")


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1, max_value=1e15), st.sampled_from(["B", "kB", "MB", "GB", "KiB", "MiB", "GiB"]))
def test_size_round_trip(value, unit):
    nbytes = units.parse_size(f"{value!r} {unit}")
    assert units.to_unit(nbytes, unit) == pytest.approx(value, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1, max_value=1e15))
def test_format_then_parse_is_close(value):
    text = units.format_size(value)
    assert units.parse_size(text) == pytest.approx(value, rel=0.01, abs=0.01)


def test_checks():
    assert units.check_count("n", 3) == 3
    for bad in (0, -1, 2.5, True, "4", math.nan):
        with pytest.raises(ValueError, match="n must"):
            units.check_count("n", bad)
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        units.check_positive("bandwidth", 0)
    with pytest.raises(ValueError, match="NaN"):
        units.check_nonnegative("nbytes", math.nan)
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        units.check_fraction("efficiency", 1.0)


def test_binary_prefix_excess_grows_and_names_its_parameter():
    import pytest

    from commlib.units import binary_prefix_excess
    gaps = [binary_prefix_excess(p) for p in "KMGT"]
    assert gaps == sorted(gaps) and gaps[0] == pytest.approx(0.024)
    with pytest.raises(ValueError, match="prefix"):
        binary_prefix_excess("Mi")


@pytest.mark.parametrize("typed, suggested", [("64 Mib", "64 MiB"), ("64 Mb", "64 MB"), ("8 bit", "8 B"), ("3 Gb", "3 GB")])
def test_a_size_entry_refuses_bits_and_names_the_byte_unit(typed, suggested):
    from commlib.units import size_entry

    with pytest.raises(ValueError, match=f"buffer M: .* counts bits; give the size in bytes .*e.g. {suggested};"):
        size_entry("buffer M").read(typed)
    assert size_entry("buffer M").read("2 bytes") == 2.0


def test_a_number_too_large_for_a_float_gets_the_range_and_the_text_typed():
    from commlib.units import parse_rate, parse_size, rate_entry, size_entry

    for typed in ("1e400 GB/s", "1e308 TB/s", "-1e400 GB/s"):
        with pytest.raises(ValueError) as refused:
            rate_entry("bandwidth").read(typed)
        assert str(refused.value) == f"bandwidth must lie between 1 MB/s and 100 TB/s, got {typed!r}"
        assert "inf" not in str(refused.value)
    with pytest.raises(ValueError, match=r"buffer M must lie between 0 B and 1 PB, got '1e400 MB'"):
        size_entry("buffer M").read("1e400 MB")
    for parse, typed in ((parse_rate, "1e400 GB/s"), (parse_size, "1e308 TB")):
        with pytest.raises(ValueError, match=f"cannot read .*'{typed}': the number is too large"):
            parse(typed)


def test_a_count_with_one_allowed_value_says_that_value():
    with pytest.raises(ValueError) as refused:
        units.check_count("K", 2, 1, 1)
    assert str(refused.value) == "K must be 1, got 2"
    with pytest.raises(ValueError, match=r"^K must be >= 1 and <= 4, got 5$"):
        units.check_count("K", 5, 1, 4)


@pytest.mark.parametrize("typed", ["1e400", "1e309"])
def test_a_unitless_number_too_large_for_a_float_gets_a_finite_example(typed):
    from commlib.units import rate_entry, size_entry

    for entry, example in ((size_entry("buffer M"), "64 MiB"), (rate_entry("bandwidth"), "25 Gb/s")):
        with pytest.raises(ValueError) as refused:
            entry.read(typed)
        assert f"add a unit, e.g. {example}" in str(refused.value) and "inf" not in str(refused.value)


@pytest.mark.parametrize("typed, kilo, kibi", [
    ("64 KB", "64 kB (1 kB = 1000 B)", "64 KiB (1 KiB = 1024 B)"),
    ("64 Kb", "64 kb (1 kb = 1000 b)", "64 Kib (1 Kib = 1024 b)"),
    ("3 KB/s", "3 kB/s (1 kB = 1000 B)", "3 KiB/s (1 KiB = 1024 B)"),
    ("3 Kbps", "3 kbps (1 kb = 1000 b)", "3 Kibps (1 Kib = 1024 b)"),
    ("3 Kbit/s", "3 kb/s (1 kb = 1000 b)", "3 Kib/s (1 Kib = 1024 b)"),
])
def test_a_capital_k_is_refused_as_ambiguous_and_both_readings_offered(typed, kilo, kibi):
    """JEDEC's KB is 1024 B, SI's kB 1000 B: "64 KB" is never read silently as one of them."""
    from commlib.units import rate_entry, size_entry

    parse = units.parse_rate if "/s" in typed or "ps" in typed else units.parse_size
    with pytest.raises(ValueError) as refused:
        parse(typed)
    assert "ambiguous" in str(refused.value) and kilo in str(refused.value) and kibi in str(refused.value)
    entry = rate_entry("bandwidth") if parse is units.parse_rate else size_entry("message M")
    with pytest.raises(ValueError, match=f"^{entry.label}: .*ambiguous") as refused:
        entry.read(typed)
    assert kilo in str(refused.value) and kibi in str(refused.value)
    for unit_table in (units.SIZE_UNITS, units.RATE_UNITS):
        assert not [u for u in unit_table if u.startswith("K") and not u.startswith("Ki")]


def test_the_unambiguous_kilo_units_still_read():
    assert units.parse_size("64 kB") == 64_000 and units.parse_size("64 KiB") == 65_536
    assert units.parse_rate("8 kb/s") == 1000 and units.parse_rate("1 KiB/s") == 1024


def test_a_size_box_takes_whole_bytes_only_and_says_its_range():
    from commlib.units import SIZE_WORDS, size_entry

    box = size_entry("message M")
    for typed in ("0.5 B", "1e-300 B", "0.3 MiB"):
        with pytest.raises(ValueError, match=f"^message M must be a whole number of bytes {SIZE_WORDS}, got '{typed}'"):
            box.read(typed)
    assert box.read("1.1 kB") == 1100.0 and box.read("0 B") == 0.0
