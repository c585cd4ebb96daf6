"""Units: sizes in bytes, rates in bytes per second, times in seconds.

Everything inside :mod:`commlib` is SI: a size is a number of bytes, a rate a
number of bytes per second (one direction), a time a number of seconds.
This module converts at the edge, in both directions.

Two traps it exists to defuse:

* **bits vs bytes.** Network links are sold in bits per second ("25 Gb/s"),
  memory and buses in bytes per second ("300 GB/s"). One byte is 8 bits, so
  1 Gb/s = 0.125 GB/s.
* **1000 vs 1024.** "MB" is 10**6 bytes (SI); "MiB" is 2**20 bytes (IEC).
  The difference is 4.9 % at mega and 7.4 % at giga. "KB" has both readings
  (JEDEC's 1024 B, a slip for SI's 1000 B): it is refused, never guessed.

>>> parse_size("64 MiB")
67108864.0
>>> parse_rate("25 Gb/s")
3125000000.0
>>> format_size(553_437_120)
'553.44 MB'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = [
    "BITS_PER_BYTE",
    "SIZE_UNITS",
    "RATE_UNITS",
    "parse_size",
    "parse_rate",
    "parse_time",
    "format_size",
    "format_rate",
    "format_time",
    "format_percent",
    "binary_prefix_excess",
    "to_unit",
    "check_positive",
    "check_nonnegative",
    "check_count",
    "check_fraction",
    "format_number",
    "round_significant",
    "Entry",
    "SIZE_RANGE",
    "SIZE_WORDS",
    "RATE_RANGE",
    "size_entry",
    "rate_entry",
    "relabel_parse",
]

BITS_PER_BYTE = 8

_SI = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}   # no "K": see _refuse_ambiguous
_IEC = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}

#: Size units and their value in bytes ("b" is a bit, "B" a byte).
SIZE_UNITS: dict[str, float] = {}
for _p, _f in {**_SI, **_IEC}.items():
    SIZE_UNITS[f"{_p}B"] = _f
    SIZE_UNITS[f"{_p}b"] = _f / BITS_PER_BYTE
SIZE_UNITS["bit"] = 1 / BITS_PER_BYTE
SIZE_UNITS["byte"] = 1.0
SIZE_UNITS["bytes"] = 1.0

#: Rate units and their value in bytes per second.
RATE_UNITS: dict[str, float] = {}
for _u, _f in list(SIZE_UNITS.items()):
    RATE_UNITS[f"{_u}/s"] = _f
    RATE_UNITS[f"{_u}ps"] = _f
for _p, _f in _SI.items():
    RATE_UNITS[f"{_p}bit/s"] = _f / BITS_PER_BYTE
    RATE_UNITS[f"{_p}bps"] = _f / BITS_PER_BYTE

_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0, "h": 3600.0}

#: Units with a capital K outside "Ki": JEDEC's KB is 1024 B, SI's kB 1000 B, so "64 KB" has two readings.
_AMBIGUOUS_K = re.compile(r"^K(?!i)(B|b|bit|byte|bytes)?(/s|ps)?$")

_NUMBER = re.compile(r"^\s*([-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ/]*)\s*$")
#: Spaces that some write between groups of three digits ("1 000 GB/s", with a thin space in typeset text), by name.
_GROUP_SPACES = {" ": "a space", "\u00a0": "a no-break space", "\u2009": "a thin space",
                 "\u202f": "a narrow no-break space"}
_GROUPED = re.compile(r"^\s*([-+]?\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?:\.\d*)?)\s*[A-Za-zµ/]*\s*$")


def _check_real(name: str, value: float) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got NaN")
    return value


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as a float if it is a finite number > 0, else raise ValueError."""
    value = _check_real(name, value)
    if not (0 < value < math.inf):
        raise ValueError(f"{name} must be > 0 and finite, got {value!r}")
    return value


def check_nonnegative(name: str, value: float) -> float:
    """Return ``value`` as a float if it is a finite number >= 0, else raise ValueError."""
    value = _check_real(name, value)
    if not (0 <= value < math.inf):
        raise ValueError(f"{name} must be >= 0 and finite, got {value!r}")
    return value


def check_count(name: str, value: int, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` if it is a whole number in [minimum, maximum], else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
        isinstance(value, float) and not value.is_integer()
    ):
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        if maximum == minimum:   # one value allowed: not "must be >= 1 and <= 1"
            raise ValueError(f"{name} must be {minimum}, got {value}")
        hi = "" if maximum is None else f" and <= {maximum}"
        raise ValueError(f"{name} must be >= {minimum}{hi}, got {value}")
    return value


def check_fraction(name: str, value: float, *, open_low: bool = True, open_high: bool = True) -> float:
    """Return ``value`` if it lies in (0, 1) (ends open by default), else raise ValueError."""
    value = _check_real(name, value)
    lo_ok = value > 0 if open_low else value >= 0
    hi_ok = value < 1 if open_high else value <= 1
    if not (lo_ok and hi_ok):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {value!r}")
    return value


def format_number(value: float) -> str:
    """A number as a message shows it: a whole number below 10^9 in full, else at most 6 significant digits.

    The kernel and the page write every number in a message through this, so
    they print the same text (JavaScript's JSON turns ``0.0`` into ``0``).

    >>> format_number(0.0), format_number(-1), format_number(1e-300), format_number(1e6), format_number(0.5)
    ('0', '-1', '1e-300', '1000000', '0.5')
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)
    value = float(value)
    if value.is_integer() and abs(value) < 1e9:
        return f"{int(value)}"
    return f"{value:g}"


@dataclass(frozen=True)
class Entry:
    """A free entry's physical range, defined once for its validation and its message.

    ``label`` is what the control shows the reader, ``unit`` the unit the
    reader types in (after the number in messages; "" for none), ``lo`` and
    ``hi`` the range in that unit (both ends allowed), ``zero`` a meaning of 0
    outside the range ("" when 0 has none), ``whole`` for whole numbers.

    >>> MEMORY = Entry("memory (GB/s)", "GB/s", 0.001, 100_000, zero="0 leaves the reduction out")
    >>> MEMORY.check(300.0)
    300.0
    >>> MEMORY.check(1e-300)
    Traceback (most recent call last):
    ...
    ValueError: memory (GB/s) must lie between 0.001 and 100000 GB/s (0 leaves the reduction out), got 1e-300 GB/s
    """

    label: str
    unit: str
    lo: float
    hi: float
    zero: str = ""
    whole: bool = False
    words: str = ""

    @property
    def range_text(self) -> str:
        """The range in words: ``between 0.001 and 100000 GB/s`` (or :attr:`words` when given)."""
        if self.words:
            return self.words
        unit = f" {self.unit}" if self.unit else ""
        return f"between {format_number(self.lo)} and {format_number(self.hi)}{unit}"

    def check(self, value: float) -> float:
        """``value`` (in :attr:`unit`) as a float when inside the range (or 0 when 0 means something); else ValueError."""
        unit = f" {self.unit}" if self.unit else ""
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if numeric and value == 0 and self.zero:
            return 0.0
        if numeric and self.whole and not float(value).is_integer():
            raise ValueError(f"{self.label} must be a whole number {self.range_text}, got {format_number(value)}{unit}")
        if not numeric or not (self.lo <= value <= self.hi):
            zero = f" ({self.zero})" if self.zero else ""
            got = f"{format_number(value)}{unit}" if numeric else repr(value)
            raise ValueError(f"{self.label} must lie {self.range_text}{zero}, got {got}")
        return float(value)

    def check_bytes(self, nbytes: float, text: str) -> float:
        """A size or rate read from ``text`` (bytes or bytes/s; ``lo`` and ``hi`` in the same) inside the range.

        With :attr:`whole` (every size box) the bytes must be a whole number: a message of half a byte,
        or of 1e-300 B, is no message.

        >>> size_entry("message M").check_bytes(0.5, "0.5 B")
        Traceback (most recent call last):
        ...
        ValueError: message M must be a whole number of bytes between 0 B and 1 PB, got '0.5 B'
        >>> size_entry("message M").check_bytes(314572.8, "0.3 MiB")
        Traceback (most recent call last):
        ...
        ValueError: message M must be a whole number of bytes between 0 B and 1 PB, got '0.3 MiB' = 314572.8 B
        """
        if not (self.lo <= nbytes <= self.hi):
            raise ValueError(f"{self.label} must lie {self.range_text}, got {text.strip()!r}")
        if self.whole:
            whole = float(round(nbytes))
            if abs(nbytes - whole) > 1e-12 * nbytes:   # 1.1 kB is 1100.0000000000002 B in floats; 1e-300 B no byte
                shown = f"{nbytes:.12g} B"   # every digit that tells it from a whole number
                same = text.strip().replace(" ", "") == shown.replace(" ", "")
                raise ValueError(f"{self.label} must be a whole number of bytes {self.range_text}, "
                                 f"got {text.strip()!r}{'' if same else ' = ' + shown}")
            return whole
        return nbytes

    def read(self, text: str) -> float:
        """What the reader typed, a size (:attr:`unit` ``"B"``) or a rate (``"B/s"``), in bytes or bytes/s.

        Every message opens with :attr:`label` and quotes the text as typed; a number out of range
        (a negative one too) gets the range message, a number with no unit is asked for one.

        >>> BUFFER = size_entry("buffer M")
        >>> BUFFER.read("64 MiB")
        67108864.0
        >>> for typed in ("-5 MB", "64", "0", "64 Mib", "64 Mbit", "1e400 MB"):
        ...     try:
        ...         BUFFER.read(typed)
        ...     except ValueError as err:
        ...         print(err)
        buffer M must lie between 0 B and 1 PB, got '-5 MB'
        buffer M: add a unit, e.g. 64 MiB or 64 MB; got '64'
        buffer M: add a unit, e.g. 64 MiB or 64 MB; got '0'
        buffer M: 'Mib' counts bits; give the size in bytes (B, kB, MB, GB, KiB, MiB, GiB), e.g. 64 MiB; got '64 Mib'
        buffer M: unknown size unit 'Mbit'; give the size in bytes (B, kB, MB, GB, TB, KiB, MiB, GiB), e.g. 64 MiB; got '64 Mbit'
        buffer M must lie between 0 B and 1 PB, got '1e400 MB'

        A size in bits (``Mb``, ``Mib``: one letter from ``MB`` and ``MiB``) is refused: a calculator's sizes
        are bytes, and its units say so.
        """
        what, table = ("rate", RATE_UNITS) if self.unit == "B/s" else ("size", SIZE_UNITS)
        try:
            number, unit = _split(text, what)
            _refuse_ambiguous(number, unit, text, what)
            if unit == "":
                example = "{0} Gb/s or {0} GB/s" if what == "rate" else "{0} MiB or {0} MB"
                shown = number if 0 < number < math.inf else (25 if what == "rate" else 64)   # "0 MiB", "inf MiB": no example
                raise ValueError(f"add a unit, e.g. {example.format(format_number(shown))}; got {text.strip()!r}")
            if what == "size" and unit in SIZE_UNITS and (unit == "bit" or unit.endswith("b")):   # bits
                raise ValueError(f"{unit!r} counts bits; give the size in bytes (B, kB, MB, GB, KiB, MiB, GiB), "
                                 f"e.g. {format_number(abs(number))} {'B' if unit == 'bit' else unit[:-1] + 'B'}; "
                                 f"got {text.strip()!r}")
            if what == "size" and unit not in SIZE_UNITS:   # the box's own units, not parse_size's bits as well
                raise ValueError(f"unknown size unit {unit!r}; give the size in bytes (B, kB, MB, GB, TB, KiB, MiB, "
                                 f"GiB), e.g. 64 MiB; got {text.strip()!r}")
            if not math.isfinite(number * table.get(unit, 1.0)):   # "1e400 GB/s": beyond any float, so beyond the range
                raise ValueError(f"{self.label} must lie {self.range_text}, got {text.strip()!r}")
            value = (parse_rate if what == "rate" else parse_size)(text.replace("-", "", 1) if number < 0 else text)
        except ValueError as err:
            raise ValueError(relabel_parse(err, self)) from None
        return self.check_bytes(-value if number < 0 else value, text)


#: The sizes a reader may type in any calculator's size box (a message, a buffer): a whole number of
#: bytes from 0 B to 1 PB. Every size box reads through :func:`size_entry`, so all state this one range.
SIZE_RANGE = (0.0, 1e15)
#: :data:`SIZE_RANGE` in words, as every size box's message gives it.
SIZE_WORDS = "between 0 B and 1 PB"
#: The rates a reader may type (a link, a memory): 1 MB/s to 100 TB/s, in bytes per second.
RATE_RANGE = (1e6, 1e14)


def size_entry(label: str) -> Entry:
    """The range of a size typed with its unit (bytes inside), named by the control's ``label``: :data:`SIZE_RANGE`."""
    return Entry(label, "B", *SIZE_RANGE, whole=True, words=SIZE_WORDS)


def rate_entry(label: str) -> Entry:
    """The range of a rate typed with its unit (bytes/s inside), named by the control's ``label``."""
    return Entry(label, "B/s", *RATE_RANGE, words="between 1 MB/s and 100 TB/s")


def relabel_parse(err: ValueError, entry: Entry) -> str:
    """A parse error of :func:`parse_size` or :func:`parse_rate` told in the words of ``entry``'s control.

    >>> try:
    ...     parse_rate("1,5 GB/s")
    ... except ValueError as err:
    ...     relabel_parse(err, rate_entry("bandwidth"))
    "bandwidth: cannot read '1,5 GB/s': a comma is ambiguous (decimal mark or thousands?); write 1.5 or 1500"
    """
    message = str(err)
    if message.startswith(entry.label):
        return message
    for what in ("size", "rate", "time"):
        message = message.replace(f"cannot read {what} ", "cannot read ", 1)
        if message.startswith(what + " "):
            message = message[len(what) + 1:]
    return f"{entry.label}: {message}"


def _split(text: str, what: str) -> tuple[float, str]:
    if not isinstance(text, str):
        raise ValueError(f"{what} must be a string such as '64 MiB', got {text!r}")
    if "," in text:  # 1,5 is one and a half in much of Europe, 1,000 a thousand elsewhere
        raise ValueError(f"cannot read {what} {text!r}: a comma is ambiguous (decimal mark or thousands?); "
                         "write 1.5 or 1500")
    match = _NUMBER.match(text)
    grouped = None if match else _GROUPED.match(text)
    if grouped:   # "1 000 GB/s": a thousands separator, which is read nowhere (1,000 is refused too)
        number = grouped.group(1)
        separator = next(c for c in number if c in _GROUP_SPACES)
        joined = "".join(c for c in number if c not in _GROUP_SPACES) + text.strip()[len(number):]
        raise ValueError(f"cannot read {what} {text.strip()!r}: {_GROUP_SPACES[separator]} between digits is not read "
                         f"as a thousands separator; write {joined}")
    if not match:
        example = {"size": "64 MiB", "rate": "25 Gb/s"}.get(what, "2 ms")
        raise ValueError(f"cannot read {what} {text!r}: expected a number then a unit, e.g. '{example}'")
    number = float(match.group(1).replace("_", ""))
    return number, match.group(2)


def _refuse_ambiguous(number: float, unit: str, text: str, what: str) -> None:
    """Refuse a capital-K unit that is not ``Ki`` ("64 KB": 1000 or 1024 bytes?), offering both readings.

    >>> _refuse_ambiguous(64, "KB", "64 KB", "size")
    Traceback (most recent call last):
    ...
    ValueError: cannot read size '64 KB': 'KB' is ambiguous; write 64 kB (1 kB = 1000 B) or 64 KiB (1 KiB = 1024 B)
    >>> _refuse_ambiguous(64, "Kb/s", "64 Kb/s", "rate")
    Traceback (most recent call last):
    ...
    ValueError: cannot read rate '64 Kb/s': 'Kb/s' is ambiguous; write 64 kb/s (1 kb = 1000 b) or 64 Kib/s (1 Kib = 1024 b)
    """
    match = _AMBIGUOUS_K.match(unit)
    if not match:
        return
    base, per = match.group(1) or "B", match.group(2) or ""
    base = {"bit": "b", "byte": "B", "bytes": "B"}.get(base, base)
    shown = format_number(abs(number))
    raise ValueError(f"cannot read {what} {text.strip()!r}: {unit!r} is ambiguous; write {shown} k{base}{per} "
                     f"(1 k{base} = 1000 {base}) or {shown} Ki{base}{per} (1 Ki{base} = 1024 {base})")


def _finite(number: float, factor: float, text: str, what: str) -> float:
    """``number * factor`` if it is a finite float; else ValueError quoting ``text`` ("1e400 GB/s")."""
    value = number * factor
    if not math.isfinite(value):
        raise ValueError(f"cannot read {what} {text!r}: the number is too large to compute with")
    return value


def parse_size(text: str) -> float:
    """Read a size such as ``"553.44 MB"``, ``"64 MiB"`` or ``"1 Gb"``; return bytes.

    ``B`` is a byte, ``b`` a bit; ``k/M/G/T`` are powers of 1000 and
    ``Ki/Mi/Gi/Ti`` powers of 1024.

    >>> parse_size("1 KiB"), parse_size("8 kb")
    (1024.0, 1000.0)
    """
    number, unit = _split(text, "size")
    _refuse_ambiguous(number, unit, text, "size")
    if unit not in SIZE_UNITS:
        raise ValueError(
            f"unknown size unit {unit!r} in {text!r}; use one of B, kB, MB, GB, TB, KiB, MiB, GiB, "
            "or bits (b, kb, Mb, Gb)"
        )
    return check_nonnegative("size", _finite(number, SIZE_UNITS[unit], text, "size"))


def parse_rate(text: str) -> float:
    """Read a rate such as ``"25 Gb/s"`` or ``"300 GB/s"``; return bytes per second.

    >>> parse_rate("1 Gb/s")  # one gigabit Ethernet: 125 MB/s
    125000000.0
    """
    number, unit = _split(text, "rate")
    _refuse_ambiguous(number, unit, text, "rate")
    if unit not in RATE_UNITS:
        raise ValueError(
            f"unknown rate unit {unit!r} in {text!r}; use bytes (B/s, MB/s, GB/s, GiB/s) "
            "or bits (b/s, Mb/s, Gb/s, Gbps)"
        )
    return check_nonnegative("rate", _finite(number, RATE_UNITS[unit], text, "rate"))


def parse_time(text: str) -> float:
    """Read a time such as ``"2.56 ms"`` or ``"5 us"``; return seconds."""
    number, unit = _split(text, "time")
    if unit not in _TIME_UNITS:
        raise ValueError(f"unknown time unit {unit!r} in {text!r}; use one of {', '.join(_TIME_UNITS)}")
    return check_nonnegative("time", _finite(number, _TIME_UNITS[unit], text, "time"))


def to_unit(value: float, unit: str) -> float:
    """Express bytes (or bytes/s, or seconds) in ``unit``: ``to_unit(1e9, "Gb/s") == 8.0``."""
    for table in (SIZE_UNITS, RATE_UNITS, _TIME_UNITS):
        if unit in table:
            return float(value) / table[unit]
    raise ValueError(f"unknown unit {unit!r}")


def round_significant(value: float, significant: int = 2) -> float:
    """``value`` rounded to ``significant`` significant digits; a whole number stays whole (an int).

    For a count computed from inputs known no better: a wall of 6,112 ranks from a start-up that is good to an
    order of magnitude is "about 6,100", and quoting its last digits would describe the arithmetic, not the
    hardware.

    >>> round_significant(6112), round_significant(612), round_significant(1223), round_significant(20805, 3)
    (6100, 610, 1200, 20800)
    >>> round_significant(0.012345, 3)
    0.0123
    """
    significant = check_count("significant", significant)
    if value == 0:
        return value
    exponent = math.floor(math.log10(abs(value))) - significant + 1
    rounded = round(value, -exponent)
    return int(rounded) if exponent >= 0 else rounded


def _significant(value: float, significant: int) -> str:
    """``value`` to ``significant`` digits, trailing zeros dropped, never in exponent form above 1.

    >>> _significant(3.125, 4), _significant(17.5, 4), _significant(140.0, 4), _significant(5.46875, 4)
    ('3.125', '17.5', '140', '5.469')
    >>> _significant(1234567.0, 4), _significant(0.0, 4)
    ('1234567', '0')
    """
    if value == 0:
        return "0"
    if abs(value) >= 10 ** (significant - 1):
        return f"{round(value):d}"
    return f"{value:.{significant}g}"


def _format(value: float, steps: list[tuple[float, str]], digits: int, significant: int | None = None) -> str:
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf"
    factor, name = next(((f, n) for f, n in steps if abs(value) >= f), steps[-1])
    if significant is not None:
        return f"{_significant(value / factor, significant)} {name}"
    return f"{value / factor:.{digits}f} {name}"


def format_size(nbytes: float, binary: bool = False, digits: int = 2, significant: int | None = None) -> str:
    """Write a byte count with an SI (default) or IEC prefix: ``format_size(2**20, binary=True) == '1.00 MiB'``.

    ``significant`` digits (trailing zeros dropped) instead of ``digits`` after the point:
    ``format_size(2**26, binary=True, significant=4) == '64 MiB'``.
    """
    if binary:
        steps = [(2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B")]
    else:
        steps = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")]
    return _format(nbytes, steps, digits, significant)


def format_rate(bytes_per_second: float, bits: bool = False, digits: int = 2, significant: int | None = None) -> str:
    """Write a rate in bytes/s (``GB/s``) or, with ``bits=True``, in bits/s (``Gb/s``).

    With ``significant`` digits a link's rate reads as its arithmetic gives it:

    >>> format_rate(parse_rate("25 Gb/s"), significant=4), format_rate(parse_rate("25 Gb/s"))
    ('3.125 GB/s', '3.12 GB/s')
    """
    if bits:
        value = bytes_per_second * BITS_PER_BYTE
        steps = [(1e12, "Tb/s"), (1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s"), (1.0, "b/s")]
    else:
        value = bytes_per_second
        steps = [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s")]
    return _format(value, steps, digits, significant)


def format_time(seconds: float, digits: int = 2, significant: int | None = None) -> str:
    """Write a time in s, ms, µs or ns: ``format_time(0.00256) == '2.56 ms'`` (``significant``: as for sizes)."""
    return _format(seconds, [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")], digits, significant)


def format_percent(fraction: float, digits: int = 2) -> str:
    """Write a fraction as a percentage: ``format_percent(0.0765) == '7.65 %'``."""
    return f"{100 * float(fraction):.{digits}f} %"


def binary_prefix_excess(prefix: str) -> float:
    """How much larger the binary unit is than the decimal one of the same prefix, as a fraction.

    ``"M"`` compares 1 MiB = 2**20 B with 1 MB = 10**6 B; the gap grows with
    every prefix because 1024 / 1000 compounds.

    >>> round(100 * binary_prefix_excess("M"), 2), round(100 * binary_prefix_excess("G"), 2)
    (4.86, 7.37)
    """
    if prefix not in ("K", "M", "G", "T", "P"):
        raise ValueError(f"prefix must be one of K, M, G, T, P, got {prefix!r}")
    return SIZE_UNITS[f"{prefix}iB"] / SIZE_UNITS[f"{prefix.lower() if prefix == 'K' else prefix}B"] - 1

