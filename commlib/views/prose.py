"""Numbers in the prose: computed in a code cell, shown in the text by an inline expression.

A code cell keeps the values the text quotes, many at once::

    prose_views.keep(ch02_t2_ms=1e3 * t2, ch02_t128_ms=1e3 * t128)
    prose_views.keep(f"ch02_rd{k}_kb", m / 1e3)        # a key built in a loop

and a markdown cell shows one with MyST's inline-expression role::

    takes {eval}`prose_views.text("ch02_t2_ms", ".1f")` ms

JupyterLab (with jupyterlab-myst) evaluates the expression in the kernel;
the stored notebook keeps each cell's results in its ``user_expressions``
metadata (written by tools/execute_notebooks.py), which is what the website
shows (tools/inline_values.py). :func:`text` formats exactly as myst-nb's
``{glue:text}`` role did: the value's plain-text form, then the format spec.

>>> keep(demo_ms=12.3456, demo_n=16)
>>> text("demo_ms", ".1f")
12.3
>>> str(text("demo_n")), str(text("demo_ms", ".2e"))
('16', '1.23e+01')
>>> text("nothing")
Traceback (most recent call last):
ValueError: no number kept under 'nothing'; keep it with prose_views.keep(nothing=...)
"""

from __future__ import annotations

import math
from ast import literal_eval
from typing import Any

__all__ = ["Text", "keep", "text", "at_most", "about", "value", "markdown", "clear"]

_KEPT: dict[str, Any] = {}


class Text(str):
    """A string shown as itself (no quotes) wherever an expression's value is displayed."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def keep(*pair: Any, **values: Any) -> None:
    """Remember values for the prose: ``keep("key", value)`` or ``keep(key=value, other=value2, ...)``."""
    if pair:
        if len(pair) != 2 or not isinstance(pair[0], str):
            raise ValueError(f"keep takes a key and a value, or key=value pairs; got {len(pair)} positional arguments")
        _KEPT[pair[0]] = pair[1]
    _KEPT.update(values)


def value(key: str) -> Any:
    """The value kept under ``key``."""
    if key not in _KEPT:
        raise ValueError(f"no number kept under {key!r}; keep it with prose_views.keep({key}=...)")
    return _KEPT[key]


def _plain(obj: Any) -> str:
    """The text/plain form a notebook shows for ``obj`` (IPython's formatter when there is a shell)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython is a dependency
        shell = None
    if shell is not None:
        return shell.display_formatter.format(obj)[0].get("text/plain", repr(obj))
    try:
        from IPython.lib.pretty import pretty

        return pretty(obj)
    except ImportError:  # pragma: no cover
        return repr(obj)


def text(key: str, spec: str = "") -> Text:
    """The value kept under ``key`` as text, formatted with ``spec`` (e.g. ".1f", ",.0f", ".2%").

    As ``{glue:text}`` did: the value's plain-text form is read back as a
    Python literal where it is one, then converted to match the type letter
    the spec ends with, then formatted.
    """
    raw = _plain(value(key))
    try:
        obj: Any = literal_eval(raw)
    except (SyntaxError, ValueError):
        obj = raw
    if not spec:
        return Text(str(obj))
    kind = spec[-1]
    if kind == "s":
        obj = str(obj)
    elif kind in "bcdoxX":
        obj = int(obj)
    elif kind in "eEfFgGn%":
        obj = float(obj)
    return Text(format(obj, spec))


def at_most(key: str, grain: float, spec: str) -> Text:
    """The magnitude of the value kept under ``key`` rounded *up* to a multiple of ``grain``, formatted with ``spec``.

    For a bound quoted at the precision its experiment supports: a gap that
    varies from seed to seed (and in its last bits from machine to machine)
    below 0.1 % is quoted "within 0.1 %", not as its noise.

    >>> keep(demo_gap=-0.00034)
    >>> at_most("demo_gap", 0.001, ".1%"), at_most("demo_gap", 0.0001, ".2%")
    (0.1%, 0.04%)
    """
    if not grain > 0:
        raise ValueError(f"grain must be > 0, got {grain}")
    steps = math.ceil(round(abs(float(value(key))) / grain, 9))
    return Text(format(steps * grain, spec))


def about(key: str, significant: int = 2, spec: str = ",.0f") -> Text:
    """The value kept under ``key`` rounded to ``significant`` significant digits, formatted with ``spec``.

    For a count whose inputs are known to no more digits (:func:`commlib.units.round_significant`).

    >>> keep(demo_wall=6112)
    >>> about("demo_wall"), about("demo_wall", 3)
    (6,100, 6,110)
    """
    from ..units import round_significant

    return Text(format(float(round_significant(float(value(key)), significant)), spec))


def markdown(key: str) -> Any:
    """The object kept under ``key`` as is (e.g. an ``IPython.display.Markdown``), shown with its own format."""
    return value(key)


def clear() -> None:
    """Forget every kept value (a notebook starts with none)."""
    _KEPT.clear()
