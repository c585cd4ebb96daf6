"""One way to turn a model function into an interactive calculator.

>>> from commlib.views.calculator import make_calculator, dropdown
>>> from commlib.views.calculator import number
>>> calc = make_calculator(
...     lambda n, unit: {"n squared": f"{n * n:g} {unit}"},
...     {"n": number(3, "n", minimum=0), "unit": dropdown(["B", "kB"], "B", "unit")},
... )
>>> calc.results["n squared"]
'9 B'
>>> calc.set(n=-1).error            # bad input: the message, never a traceback
'n must be >= 0, got -1.0'

``compute`` receives the controls' values as keyword arguments and returns a
mapping of result label -> text (with units). If it raises ``ValueError``,
the calculator shows that message where the results were. The results live
in an ``HTML`` widget, so the default result is part of the widget state a
built page embeds, and tests can read it without a browser.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

__all__ = ["Calculator", "make_calculator", "dropdown", "integer", "number", "text", "toggle", "results_table"]

_STYLE = {"description_width": "11em"}
_LAYOUT = {"width": "30em"}


def dropdown(options, value, description: str) -> widgets.Dropdown:
    """A dropdown; ``options`` is a list of values or of ``(label, value)`` pairs."""
    return widgets.Dropdown(options=options, value=value, description=description, style=_STYLE,
                            layout=_LAYOUT)


def integer(value: int, minimum: int, maximum: int, description: str, step: int = 1) -> widgets.IntSlider:
    """An integer slider. Values outside [minimum, maximum] set from code are checked by the calculator."""
    slider = widgets.IntSlider(value=value, min=minimum, max=maximum, step=step, description=description,
                               style=_STYLE, layout=_LAYOUT, continuous_update=False)
    slider._gotw_range = (minimum, maximum)
    return slider


def number(value: float, description: str, minimum: float | None = None, maximum: float | None = None,
           step: float | None = None) -> widgets.FloatText:
    """A free number entry (the model function validates it)."""
    box = widgets.FloatText(value=value, description=description, style=_STYLE, layout=_LAYOUT,
                            step=step)
    box._gotw_range = (minimum, maximum)
    return box


def text(value: str, description: str, placeholder: str = "") -> widgets.Text:
    """A text entry, e.g. for sizes and rates with units ("64 MiB", "25 Gb/s")."""
    return widgets.Text(value=value, description=description, placeholder=placeholder, style=_STYLE,
                        layout=_LAYOUT, continuous_update=False)


def toggle(value: bool, description: str) -> widgets.Checkbox:
    """A yes/no choice."""
    return widgets.Checkbox(value=value, description=description, style=_STYLE, indent=False)


def results_table(results: Mapping[str, str], note: str = "") -> str:
    """HTML for a two-column table of result label -> value, with an optional units note below."""
    rows = "".join(
        f"<tr><th style='text-align:left;padding-right:1.5em;font-weight:normal'>{html.escape(str(k))}</th>"
        f"<td style='text-align:right;font-family:monospace'>{html.escape(str(v))}</td></tr>"
        for k, v in results.items()
    )
    foot = f"<div style='font-size:85%;opacity:0.8'>{html.escape(note)}</div>" if note else ""
    return f"<table class='gotw-results'>{rows}</table>{foot}"


class Calculator(widgets.VBox):
    """Controls on top, results (or the error message) below."""

    def __init__(self, compute: Callable[..., Mapping[str, Any]], controls: Mapping[str, widgets.Widget],
                 title: str = "", note: str = ""):
        self.compute = compute
        self.controls = dict(controls)
        self.note = note
        self.output = widgets.HTML()
        self.results: dict[str, Any] = {}
        self.error: str | None = None
        children = []
        if title:
            children.append(widgets.HTML(f"<b>{html.escape(title)}</b>"))
        children.extend(self.controls.values())
        children.append(self.output)
        super().__init__(children=children)
        for control in self.controls.values():
            control.observe(lambda _change: self.refresh(), names="value")
        self.refresh()

    def values(self) -> dict[str, Any]:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def _check_range(self, name: str, control: widgets.Widget, value):
        lo, hi = getattr(control, "_gotw_range", (None, None))
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bounds = f">= {lo}" if hi is None else (f"<= {hi}" if lo is None else f">= {lo} and <= {hi}")
            raise ValueError(f"{name} must be {bounds}, got {value}")

    def refresh(self) -> Calculator:
        """Recompute from the controls and redraw the results (or the error message)."""
        values = self.values()
        try:
            for name, control in self.controls.items():
                self._check_range(name, control, values[name])
            results = self.compute(**values)
        except ValueError as exc:
            self.results, self.error = {}, str(exc)
            self.output.value = (
                "<div class='gotw-error' role='alert' style='color:#D55E00;font-weight:bold'>"
                f"{html.escape(self.error)}</div>"
            )
        else:
            self.results, self.error = dict(results), None
            self.output.value = results_table(self.results, self.note)
        return self

    def set(self, **values) -> Calculator:
        """Set controls from code (tests, exercises) and recompute once.

        Sliders clamp to their range as they do on screen; free entries pass
        any value through to the model, whose ValueError is then shown.
        """
        for name in values:
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; controls are {', '.join(self.controls)}")
        with self.hold_trait_notifications():
            for control in self.controls.values():
                control.unobserve_all("value")
            try:
                for name, value in values.items():
                    self.controls[name].value = value
            finally:
                for control in self.controls.values():
                    control.observe(lambda _change: self.refresh(), names="value")
        return self.refresh()


def make_calculator(compute: Callable[..., Mapping[str, Any]], controls: Mapping[str, widgets.Widget],
                    title: str = "", note: str = "") -> Calculator:
    """Build a :class:`Calculator` calling ``compute(**values)`` whenever a control changes.

    ``note`` is printed under the results: the place to name the units
    convention ("bandwidth per direction; 1 GB = 10^9 B").
    """
    return Calculator(compute, controls, title=title, note=note)
