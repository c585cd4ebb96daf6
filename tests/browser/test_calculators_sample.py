"""A sample of the kernel test's cases, on the website: each output equal to the kernel's, character for character.

For every live calculator a page embeds, a seeded sample of its dropdown combinations (chosen
through the page's own ``<select>`` elements, as a reader does) and of the awkward entries of
``tests/calculator_cases.py`` (typed into its boxes). After each, the page (Python in the page,
under Pyodide) must show exactly the HTML that the same calculator built in the kernel shows
for the same controls, the dependent dropdowns must offer exactly what the kernel's offer, and
what is shown must pass the kernel test's checks.
"""

from __future__ import annotations

import html
import math
import random
import sys
from pathlib import Path

import pytest
from browser_support import Visit, html_path
from test_calculators import CALC_PAGES, HELPERS, PYTHON_TIMEOUT_MS, _open, _wait_rendered

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from calculator_cases import calculators, dropdown_states, edge_cases  # noqa: E402

#: Per calculator: how many dropdown combinations and how many awkward entries the page is driven through.
STATES, EDGES = 4, 4

RAW = """i => {
  var c = window.gotwCalculators[i], children = c.model.get("children"), out = {};
  c.spec.controls.forEach(function (k) {
    var v = k.kind === "choice" ? children[k.index].get("index") : children[k.index].get("value");
    out[k.name] = k.kind === "choice" && k.shown ? k.shown[v] : v;
  });
  return out;
}"""


def _kernel_twin(title: str):
    for calc in calculators().values():
        if calc.children and getattr(calc.children[0], "value", "") == f"<b>{html.escape(title)}</b>":
            return calc
    return None


def _page_values(page, i, spec) -> dict:
    raw = page.evaluate(RAW, i)
    return {c["name"]: (c["options"][raw[c["name"]]] if c["kind"] == "choice" else raw[c["name"]])
            for c in spec["controls"]}


def _texts(select) -> list[str]:
    """The options a ``<select>`` shows (the widget writes spaces as no-break spaces)."""
    return [t.replace("\u00a0", " ") for t in select.locator("option").all_inner_texts()]


def _offered(page, i, control) -> list[str]:
    page.evaluate("([i, n]) => window.gotwTest.mark(i, n)", [i, control["index"]])
    return _texts(page.locator("[data-gotw-target] select"))


def _choose(page, i, spec, calc, state) -> None:
    for control in spec["controls"]:
        name = control["name"]
        if name not in state:
            continue
        page.evaluate("([i, n]) => window.gotwTest.mark(i, n)", [i, control["index"]])
        root = page.locator("[data-gotw-target]")
        root.scroll_into_view_if_needed()
        if control["kind"] == "bool":
            box = root.locator("input[type=checkbox]")
            if box.is_checked() != state[name]:
                box.click()
            continue
        label = next(label for label, value in calc.full_options[name] if value == state[name])
        offered = _texts(root.locator("select"))
        if label in offered:   # a dependent dropdown may not offer it now
            root.locator("select").select_option(index=offered.index(label))


def _type(page, i, control, value) -> None:
    page.evaluate("([i, n]) => window.gotwTest.mark(i, n)", [i, control["index"]])
    box = page.locator("[data-gotw-target]").locator("input").first
    box.scroll_into_view_if_needed()
    box.fill(str(value))
    box.press("Enter")


def _settled(page, i, spec, calc) -> str:
    """Wait until the page shows what the kernel shows for the page's controls; return what the page shows."""
    for _ in range(3):   # the page may still be settling a dependent dropdown: read its controls again
        calc.set(**_page_values(page, i, spec))
        expected = calc.output.value
        try:
            page.wait_for_function("([i, want]) => window.gotwTest.output(i) === want", arg=[i, expected],
                                   timeout=PYTHON_TIMEOUT_MS // 3, polling=50)
            return expected
        except Exception:  # noqa: BLE001 - compared below
            pass
    return page.evaluate("i => window.gotwTest.output(i)", i)


@pytest.mark.skipif(not CALC_PAGES, reason="no page embeds a calculator")
@pytest.mark.parametrize("docname", CALC_PAGES)
def test_a_sample_of_cases_shows_on_the_page_what_the_kernel_shows(browser, site_url, docname):
    record = Visit(docname, "light")
    context, page = _open(browser, site_url, site_url + html_path(docname), record)
    page.evaluate(HELPERS)
    checked = 0
    live = [c for c in page.evaluate("window.gotwTest.calcs()") if c["spec"]["live"]]
    try:
        for i, calc_spec in enumerate(page.evaluate("window.gotwTest.calcs()")):
            spec = calc_spec["spec"]
            if not spec["live"]:
                continue
            calc = _kernel_twin(spec["title"])
            assert calc is not None, f"{docname}: no kernel calculator titled {spec['title']!r}"
            _wait_rendered(page, i, spec)
            rng = random.Random(f"{docname}:{i}")
            states = dropdown_states(calc)
            cases = [("state", s) for s in rng.sample(states, min(STATES, len(states)))]
            # what a reader can type: a number box takes no inf or nan
            edges = [e for e in edge_cases(calc) if not any(isinstance(v, float) and not math.isfinite(v)
                                                              for v in e.values())]
            cases += [("edge", e) for e in rng.sample(edges, min(EDGES, len(edges)))]
            for kind, case in cases:
                if kind == "state":
                    _choose(page, i, spec, calc, case)
                else:
                    (name, value), = case.items()
                    control = next(c for c in spec["controls"] if c["name"] == name)
                    if control["kind"] == "int":
                        continue  # a slider's ends: the kernel test sets them; the page's slider clamps the same
                    _type(page, i, control, value)
                expected = _settled(page, i, spec, calc)
                shown = page.evaluate("i => window.gotwTest.output(i)", i)
                assert shown == expected, f"{docname} calculator {i} after {case}: page and kernel differ"
                for control in spec["controls"]:
                    if control["kind"] == "choice" and spec.get("choices"):
                        kernel = list(calc.controls[control["name"]]._options_labels)
                        assert _offered(page, i, control) == kernel, f"{docname} {control['name']} after {case}"
                checked += 1
    finally:
        context.close()
    assert record.console_errors == [], f"{docname}: console errors {record.console_errors}"
    assert checked or not live, f"{docname}: no case was checked"
