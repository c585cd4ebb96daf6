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
'n must be >= 0, got -1'

A dropdown whose options depend on the other controls gets them from
``choices``, a model-layer function of the controls' values (see
:func:`commlib.views.results.settle`); the page applies the same function.

``compute`` receives the controls' values as keyword arguments and returns a
mapping of result label -> text (with units). If it raises ``ValueError``,
the calculator shows that message where the results were. The results live
in an ``HTML`` widget, so the default result is part of the widget state a
built page embeds, and tests can read it without a browser.
"""

from __future__ import annotations

import ast
import functools
import html
import inspect
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from traitlets import Unicode

from .results import check_range, evaluate, results_table, settle

__all__ = ["Calculator", "make_calculator", "dropdown", "integer", "number", "text", "toggle", "results_table",
           "web_spec", "pure_python_modules"]

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


class Calculator(widgets.VBox):
    """Controls on top, results (or the error message) below.

    ``_gotw_spec`` (synced, so a built page embeds it) tells the website
    how to recompute in the page: see :func:`web_spec`.
    """

    _gotw_spec = Unicode("").tag(sync=True)

    def __init__(self, compute: Callable[..., Mapping[str, Any]], controls: Mapping[str, widgets.Widget],
                 title: str = "", note: str = "", choices: Callable[..., Mapping[str, Any]] | None = None):
        self.compute = compute
        self.controls = dict(controls)
        self.note = note
        self.choices = choices
        self._settling = False
        #: every dropdown's full (label, value) options, before ``choices`` narrows them
        self.full_options = {name: list(zip(c._options_labels, c._options_values))
                             for name, c in self.controls.items() if isinstance(c, widgets.Dropdown)}
        self.output = widgets.HTML()
        self.results: dict[str, Any] = {}
        self.error: str | None = None
        children = []
        if title:
            children.append(widgets.HTML(f"<b>{html.escape(title)}</b>"))
        children.extend(self.controls.values())
        children.append(self.output)
        super().__init__(children=children)
        spec = web_spec(compute, self.controls, note, first=1 if title else 0, choices=choices)
        spec["title"] = title
        self._gotw_spec = json.dumps(spec, sort_keys=True)
        self._setting = False
        for control in self.controls.values():
            control.observe(self._changed, names="value")
        self.refresh()

    def _changed(self, _change) -> None:
        """A control's value changed: recompute, unless :meth:`set` is setting several at once."""
        if not self._setting:
            self.refresh()

    def values(self) -> dict[str, Any]:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def _check_range(self, name: str, control: widgets.Widget, value):
        check_range(name, value, *getattr(control, "_gotw_range", (None, None)))

    def _settle(self) -> None:
        """Offer in each dependent dropdown only the options that work with the other controls."""
        options = {name: [v for _, v in pairs] for name, pairs in self.full_options.items()}
        try:
            shown, values = settle(self.choices, self.values(), options)
        except ValueError:
            return
        self._settling = True
        try:
            for name, offered in shown.items():
                control = self.controls[name]
                pairs = tuple((label, v) for label, v in self.full_options[name] if v in offered)
                if tuple(zip(control._options_labels, control._options_values)) != pairs:
                    control.options = pairs
                if control.value != values[name]:
                    control.value = values[name]
        finally:
            self._settling = False

    def refresh(self) -> Calculator:
        """Recompute from the controls and redraw the results (or the error message)."""
        if self._settling:
            return self
        if self.choices is not None:
            self._settle()
        ranges = {name: getattr(control, "_gotw_range", None) for name, control in self.controls.items()}
        labels = {name: control.description for name, control in self.controls.items()}
        self.output.value, self.results, self.error = evaluate(self.compute, self.values(), ranges, self.note,
                                                               labels)
        return self

    def set(self, **values) -> Calculator:
        """Set controls from code (tests, exercises) and recompute once.

        Sliders clamp to their range as they do on screen; free entries pass
        any value through to the model, whose ValueError is then shown.
        """
        for name in values:
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; controls are {', '.join(self.controls)}")
        # Only the calculator's own observer stands aside while the values are set (it would recompute
        # from a half-set state); the controls' own observers (a dropdown's label follows its value) work on.
        self._setting = True
        try:
            for name, value in values.items():
                control = self.controls[name]
                full = self.full_options.get(name)
                if full is not None and value not in control._options_values:
                    control.options = tuple(full)   # offered again; refresh() narrows them to what works
                control.value = value
        finally:
            self._setting = False
        return self.refresh()


def make_calculator(compute: Callable[..., Mapping[str, Any]], controls: Mapping[str, widgets.Widget],
                    title: str = "", note: str = "",
                    choices: Callable[..., Mapping[str, Any]] | None = None) -> Calculator:
    """Build a :class:`Calculator` calling ``compute(**values)`` whenever a control changes.

    ``note`` is printed under the results: the place to name the units
    convention ("bandwidth per direction; 1 GB = 10^9 B"). ``choices`` (a
    model-layer function taking the same keywords as ``compute``) returns,
    for each dropdown whose options depend on the other controls, the values
    that work with them; it must be a module-level function (or a partial of
    one bound like ``compute``) so that the page can run it too.
    """
    return Calculator(compute, controls, title=title, note=note, choices=choices)


# --------------------------------------------------------------------------- the website's recompute
#: Modules Pyodide's core provides besides the standard library: none that a calculator may use.
_WEB_EXTRA: frozenset[str] = frozenset()


def _module_level(tree: ast.AST):
    """The nodes that run when a module is imported: everything but the bodies of functions.

    An import inside a function body runs only when that function is called
    (the algorithm registry imports numpy inside its executable schedules, never
    in its closed forms), so it does not stop the module from loading in the page.
    """
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                todo.append(child)


def _imports(path: Path, module: str) -> frozenset[str]:
    """Absolute names of the modules ``path`` (module ``module``) imports when it is imported."""
    return _imports_of(str(path), path.stat().st_mtime_ns, module)


@functools.cache
def _imports_of(path: str, mtime_ns: int, module: str) -> frozenset[str]:
    """:func:`_imports` of one version of the file (the time it was last written is part of the key)."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _module_level(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)  # maybe submodules
    return frozenset(found)


_ROOT = Path(__file__).resolve().parents[1]


def _module_file(name: str) -> Path | None:
    """The source file of commlib module ``name`` (found on disk, nothing imported), or None."""
    parts = name.split(".")
    if parts[0] != "commlib":
        return None
    base = _ROOT.joinpath(*parts[1:])
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


@functools.cache
def pure_python_modules(module: str) -> frozenset[str] | None:
    """The commlib modules ``module`` needs, if all it imports is the standard library and such modules.

    None when anything outside the standard library (numpy, matplotlib,
    ipywidgets, ...) is imported by it or by a commlib module it imports:
    such a module cannot run in the website's Python (Pyodide's core).

    >>> sorted(pure_python_modules("commlib.units"))
    ['commlib', 'commlib.units']
    >>> pure_python_modules("commlib.views.calculator") is None
    True
    """
    needed: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        path = _module_file(name)
        if path is None:
            return None
        needed.add(name)
        parent = name.rpartition(".")[0]
        while parent and parent not in needed:   # importing a.b.c runs a/__init__ and a/b/__init__
            todo.append(parent)
            parent = parent.rpartition(".")[0]
        for imported in _imports(path, name):
            top = imported.split(".")[0]
            if top == "commlib":
                if _module_file(imported) is not None:
                    todo.append(imported)
            elif top not in sys.stdlib_module_names and top not in _WEB_EXTRA and top != "__future__":
                return None
    return frozenset(needed)


def _target(compute) -> tuple[str, dict] | None:
    """``("module:qualname", bound keywords)`` of a module-level function or a partial of one, else None."""
    keywords: dict = {}
    if isinstance(compute, functools.partial):
        if compute.args:
            return None
        keywords = dict(compute.keywords)
        compute = compute.func
    module, qualname = getattr(compute, "__module__", None), getattr(compute, "__qualname__", "")
    if not module or not qualname or "<" in qualname or not inspect.isfunction(compute):
        return None
    try:
        if json.loads(json.dumps(keywords)) != keywords:
            return None
    except (TypeError, ValueError):
        return None
    return f"{module}:{qualname}", keywords


_KINDS = [(widgets.Checkbox, "bool"), (widgets.IntSlider, "int"), (widgets.BoundedIntText, "int"),
          (widgets.IntText, "int"), (widgets.FloatText, "float"), (widgets.BoundedFloatText, "float"),
          (widgets.FloatSlider, "float"), (widgets.Text, "str"), (widgets.Dropdown, "choice")]


def web_spec(compute, controls: Mapping[str, widgets.Widget], note: str = "", first: int = 0,
             choices=None) -> dict:
    """How the website recomputes this calculator in the page, or why it cannot.

    ``live`` is true when ``compute`` is a module-level function (or a
    ``functools.partial`` of one with JSON keywords) whose module imports
    only the standard library and such commlib modules, and every control
    is of a kind the page can read back: the page then runs that very
    function under Pyodide. Otherwise ``why`` says what stops it, and the
    website marks the controls as needing a live kernel.
    """
    spec: dict[str, Any] = {"live": False, "why": "", "note": note, "controls": [], "output": first + len(controls)}
    for i, (name, control) in enumerate(controls.items()):
        kind = next((k for cls, k in _KINDS if isinstance(control, cls)), None)
        entry: dict[str, Any] = {"name": name, "kind": kind, "index": first + i, "label": control.description,
                                 "range": list(getattr(control, "_gotw_range", (None, None)))}
        if entry["range"] == [None, None]:
            entry["range"] = None
        if kind == "choice":
            # as ipywidgets reads them: a (label, value) pair, or a value that is its own label
            options = [o[1] if isinstance(o, (tuple, list)) and len(o) == 2 else o for o in control.options]
            if any(not isinstance(v, (str, int, float, bool, type(None))) for v in options):
                spec["why"] = spec["why"] or f"the options of {name} are not plain values"
            entry["options"] = options
            entry["labels"] = list(control._options_labels)
        if kind is None:
            spec["why"] = spec["why"] or f"control {name} is a {type(control).__name__}"
        spec["controls"].append(entry)
    target = _target(compute)
    if target is None:
        bound = isinstance(compute, functools.partial)
        spec["why"] = spec["why"] or ("its computation is bound to objects of this run, not plain values" if bound
                                      else "its computation is not a module-level function")
        return spec
    spec["compute"], spec["keywords"] = target
    if pure_python_modules(target[0].partition(":")[0]) is None:
        spec["why"] = spec["why"] or "its computation needs numpy"
    if choices is not None:
        narrowed = _target(choices)
        if narrowed is None or narrowed[1] != target[1]:
            spec["why"] = spec["why"] or "its dropdowns' choices are not a module-level function"
        else:
            spec["choices"] = narrowed[0]
            if pure_python_modules(narrowed[0].partition(":")[0]) is None:
                spec["why"] = spec["why"] or "its dropdowns' choices need numpy"
    spec["live"] = not spec["why"]
    return spec
