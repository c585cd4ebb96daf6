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
'n must be >= 0, got -1'
>>> evaluate(lambda n: {}, {"n": 5000}, ranges={"n": (1, 4096)}, labels={"n": "ranks n"})[2]
'ranks n must lie between 1 and 4096, got 5000'
"""

from __future__ import annotations

import html
import importlib
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..units import format_number

__all__ = ["results_table", "error_html", "check_range", "relabel", "settle", "evaluate", "resolve", "run_spec",
           "run_choices"]


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
    return ("<div class='gotw-error' role='alert' style='color:#9E3D00;font-weight:bold'>"
            f"{html.escape(message)}</div>")


def check_range(name: str, value, lo=None, hi=None) -> None:
    """Raise ValueError naming ``name`` (the control's label) when ``value`` is outside [lo, hi] (None: unbounded)."""
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        lo_text, hi_text = format_number(lo), format_number(hi)
        bounds = (f"be >= {lo_text}" if hi is None else
                  (f"be <= {hi_text}" if lo is None else f"lie between {lo_text} and {hi_text}"))
        raise ValueError(f"{name} must {bounds}, got {format_number(value)}")


def relabel(message: str, labels: Mapping[str, str]) -> str:
    """A model's message told with the labels the reader sees: one that opens with a control's parameter
    name opens with its label, and a parameter quoted with its value (``n = 16``) is named by its label.

    >>> relabel("hosts must divide n = 16; got hosts = 3", {"hosts": "hosts h", "n": "GPUs n"})
    'hosts h must divide GPUs n = 16; got hosts h = 3'
    >>> relabel("where: host must be in 0..7, got 9", {"where": "workers (host:count)"})
    'workers (host:count): host must be in 0..7, got 9'
    >>> relabel("GPUs n = 16 is too many", {"n": "GPUs n"})
    'GPUs n = 16 is too many'
    """
    if not any(label and message.startswith(label) for label in labels.values()):
        for name, label in labels.items():
            if label and label != name and (message.startswith(name + " ") or message.startswith(name + ":")):
                message = label + message[len(name):]
                break
    for name, label in labels.items():
        if not label or label == name:
            continue

        def named(m: re.Match, label: str = label, text: str = message) -> str:
            return m.group(0) if text[:m.end()].endswith(label) else label

        message = re.sub(rf"(?<![\w.]){re.escape(name)}(?= ?=(?!=))", named, message)
    return message


def settle(choices: Callable[..., Mapping[str, Any]] | None, values: Mapping[str, Any],
           options: Mapping[str, list]) -> tuple[dict[str, list], dict[str, Any]]:
    """The options each dependent dropdown offers, and the values with any no longer offered replaced.

    ``choices(**values)`` (a model-layer function of the calculator's controls)
    returns, for each dropdown whose options depend on the others, the values
    that work with them; ``options`` holds every dropdown's full list of values.
    A value no longer offered becomes the first one offered, and the choices are
    asked again until nothing changes.

    >>> pick = lambda op, alg: {"alg": ["ring", "tree"] if op == "all" else ["tree"]}
    >>> settle(pick, {"op": "one", "alg": "ring"}, {"alg": ["ring", "tree"]})
    ({'alg': ['tree']}, {'op': 'one', 'alg': 'tree'})
    """
    values = dict(values)
    if choices is None:
        return {}, values
    shown: dict[str, list] = {}
    for _ in range(len(options) + 1):
        allowed = choices(**values)
        shown = {name: [v for v in options[name] if v in allowed[name]] for name in allowed}
        changed = False
        for name, offered in shown.items():
            if not offered:
                raise ValueError(f"no option of {name} works with the other choices")
            if values[name] not in offered:
                values[name] = offered[0]
                changed = True
        if not changed:
            break
    return shown, values


def evaluate(compute: Callable[..., Mapping[str, Any]], values: Mapping[str, Any],
             ranges: Mapping[str, Any] | None = None, note: str = "",
             labels: Mapping[str, str] | None = None) -> tuple[str, dict, str | None]:
    """Check the ranges, call ``compute(**values)``; return (HTML, results, error message or None).

    ``labels`` maps a control's name to what the reader sees it called: range
    messages name it so, and a model's message that opens with the name is
    opened with the label (:func:`relabel`).
    """
    labels = dict(labels or {})
    try:
        for name, bounds in (ranges or {}).items():
            if bounds is not None:
                check_range(labels.get(name) or name, values[name], *bounds)
        results = dict(compute(**values))
    except ValueError as exc:
        message = relabel(str(exc), labels)
        return error_html(message), {}, message
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
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or raw != int(raw):
            name = control.get("label") or control["name"]   # NaN, inf, 2.5 or null: not int()'s bare message
            shown = "NaN" if isinstance(raw, float) and math.isnan(raw) else (
                format_number(raw) if isinstance(raw, float) else repr(raw))
            got = "" if raw is None else f", got {shown}"
            raise ValueError(f"{name} must be a whole number{got}")
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
    try:
        values = {c["name"]: _coerce(c, raw[c["name"]]) for c in controls}
    except ValueError as exc:   # a whole-number control holding NaN or inf: its message, as for any bad entry
        return error_html(str(exc))
    ranges = {c["name"]: c.get("range") for c in controls}
    labels = {c["name"]: c.get("label", "") for c in controls}
    try:
        compute = resolve(spec["compute"], spec.get("keywords"))
        return evaluate(compute, values, ranges, spec.get("note", ""), labels)[0]
    except (TypeError, AttributeError) as exc:
        return error_html(f"{type(exc).__name__}: {exc}")


def run_choices(spec_json: str, values_json: str) -> str:
    """The website's entry point for dropdowns that depend on other controls (:func:`settle`).

    Takes what :func:`run_spec` takes; returns JSON ``{"shown": {name: [indices
    into the dropdown's full options]}, "values": {name: index}}`` for each
    dependent dropdown: the options to offer and the one to select.
    """
    spec = json.loads(spec_json)
    if not spec.get("choices"):
        return json.dumps({"shown": {}, "values": {}})
    raw = json.loads(values_json)
    controls = spec["controls"]
    options = {c["name"]: c["options"] for c in controls if c["kind"] == "choice"}
    try:
        values = {c["name"]: _coerce(c, raw[c["name"]]) for c in controls}
        shown, settled = settle(resolve(spec["choices"], spec.get("keywords")), values, options)
    except ValueError:
        return json.dumps({"shown": {}, "values": {}})
    return json.dumps({"shown": {name: [options[name].index(v) for v in offered] for name, offered in shown.items()},
                       "values": {name: options[name].index(settled[name]) for name in shown}})
