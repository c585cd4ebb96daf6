"""What a calculator shows, as HTML: one implementation for the kernel and the website.

The kernel (``commlib.views.calculator``, over ipywidgets) and the website
(the same Python running in the page under Pyodide, see
``tools/site_assets/live-calculators.js``) both call :func:`evaluate`, so a
reader sees the same text for the same inputs everywhere. This module imports
only the standard library: it must run in Pyodide, which has no numpy.

>>> html, results, error = evaluate(lambda n: {"n squared": f"{n * n}"}, {"n": 3})
>>> results, error
({'n squared': '9'}, None)
>>> evaluate(lambda n: {}, {"n": -1.0}, ranges={"n": (0, None)})[2]
'n must be >= 0, got -1.0'
"""

from __future__ import annotations

import html
import importlib
import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["results_table", "error_html", "check_range", "evaluate", "resolve", "run_spec"]


def results_table(results: Mapping[str, str], note: str = "") -> str:
    """HTML for a two-column table of result label -> value, with an optional units note below."""
    rows = "".join(
        f"<tr><th style='text-align:left;padding-right:1.5em;font-weight:normal'>{html.escape(str(k))}</th>"
        f"<td style='text-align:right;font-family:monospace'>{html.escape(str(v))}</td></tr>"
        for k, v in results.items()
    )
    foot = f"<div style='font-size:85%;opacity:0.8'>{html.escape(note)}</div>" if note else ""
    return f"<table class='gotw-results'>{rows}</table>{foot}"


def error_html(message: str) -> str:
    """HTML for a bad input's message, shown where the results were."""
    return ("<div class='gotw-error' role='alert' style='color:#D55E00;font-weight:bold'>"
            f"{html.escape(message)}</div>")


def check_range(name: str, value, lo=None, hi=None) -> None:
    """Raise ValueError naming ``name`` when ``value`` is outside [lo, hi] (None: unbounded)."""
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f">= {lo}" if hi is None else (f"<= {hi}" if lo is None else f">= {lo} and <= {hi}")
        raise ValueError(f"{name} must be {bounds}, got {value}")


def evaluate(compute: Callable[..., Mapping[str, Any]], values: Mapping[str, Any],
             ranges: Mapping[str, Any] | None = None, note: str = "") -> tuple[str, dict, str | None]:
    """Check the ranges, call ``compute(**values)``; return (HTML, results, error message or None)."""
    try:
        for name, bounds in (ranges or {}).items():
            if bounds is not None:
                check_range(name, values[name], *bounds)
        results = dict(compute(**values))
    except ValueError as exc:
        return error_html(str(exc)), {}, str(exc)
    return results_table(results, note), results, None


def resolve(target: str, keywords: Mapping[str, Any] | None = None) -> Callable[..., Mapping[str, Any]]:
    """The function named ``"package.module:qualname"``, with ``keywords`` bound if any."""
    module_name, _, qualname = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if keywords:
        fixed = dict(keywords)
        return lambda **values: obj(**fixed, **values)
    return obj


def _coerce(control: Mapping[str, Any], raw: Any) -> Any:
    kind = control["kind"]
    if kind == "choice":
        return control["options"][int(raw)]
    if kind == "int":
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind == "bool":
        return bool(raw)
    return "" if raw is None else str(raw)


def run_spec(spec_json: str, values_json: str) -> str:
    """The website's entry point: a calculator's spec and its controls' raw values -> the HTML to show.

    ``values_json`` maps each control name to what the page's widget holds
    (the index for a dropdown, the value otherwise).

    >>> spec = json.dumps({"compute": "commlib.views.results:results_table", "note": "",
    ...                    "controls": [{"name": "results", "kind": "str", "range": None}]})
    >>> run_spec(spec, json.dumps({"results": "x"}))[:31]
    "<div class='gotw-error' role='a"
    """
    spec = json.loads(spec_json)
    raw = json.loads(values_json)
    controls = spec["controls"]
    values = {c["name"]: _coerce(c, raw[c["name"]]) for c in controls}
    ranges = {c["name"]: c.get("range") for c in controls}
    try:
        compute = resolve(spec["compute"], spec.get("keywords"))
        return evaluate(compute, values, ranges, spec.get("note", ""))[0]
    except (TypeError, AttributeError) as exc:
        return error_html(f"{type(exc).__name__}: {exc}")
