"""Benchmark: how fast every calculator recomputes, in the kernel and in the website's page.

Kernel: every public ``*_calculator`` / ``*_converter`` function of the view
modules is called with its defaults; the median time of a recompute
(``Calculator.refresh``: the model function, the range checks and the
results HTML) over a few runs. Page: when the site is built (_build/html) and Debian's
chromium is there, each page with a live calculator is opened and its first
live calculator scrolled into view (which starts Python, Pyodide, in the
background); after a pause of a few seconds, as a reader would spend on the
page, the time from the first change of a control to the new results
(measured by the page itself, ``window.gotwLastRecompute``), then the median
over a few later changes of each live calculator. Targets: 50 ms in the
kernel; in the page 300 ms for the first change after the pause and 100 ms
for later ones.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL_TARGET_MS, PAGE_TARGET_MS, FIRST_TARGET_MS = 50.0, 100.0, 300.0
PAUSE_MS = 4_000
RUNS = 7


def calculators():
    """(name, Calculator) for every calculator a view module builds with its defaults."""
    import commlib.views
    from commlib.views.calculator import Calculator

    found = []
    for info in pkgutil.iter_modules(commlib.views.__path__):
        module = importlib.import_module(f"commlib.views.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ != module.__name__ or name.startswith("_"):
                continue
            if not (name.endswith("_calculator") or name.endswith("_converter")):
                continue
            try:
                made = fn()
            except TypeError:  # needs arguments the bench cannot invent (e.g. measured data)
                continue
            calc = made if isinstance(made, Calculator) else getattr(made, "calculator", None)
            if isinstance(calc, Calculator):
                found.append((f"{info.name}.{name}", calc))
    return found


def kernel_ms(calc) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        calc.refresh()
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times)


def _change(page, i: int, control: dict) -> dict:
    """Pick the next option of dropdown ``control`` of calculator ``i``; return the page's timing of it."""
    page.evaluate("([i, n, size]) => { window.gotwLastRecompute = null; "
                  "var m = window.gotwCalculators[i].model.get('children')[n]; m.set('index', (m.get('index') + 1) % size); }",
                  [i, control["index"], len(control["options"])])
    page.wait_for_function("() => window.gotwLastRecompute", timeout=180_000, polling=20)
    return page.evaluate("window.gotwLastRecompute")


def page_ms(site: Path = ROOT / "_build" / "html") -> tuple[dict[str, float], dict[str, float]]:
    """(title -> median later recompute time, title -> first change after the pause) in the built site's pages."""
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    try:
        from browser_support import CHROMIUM, CHROMIUM_ARGS
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {}, {}
    if not (site / "index.html").is_file() or not Path(CHROMIUM).exists():
        return {}, {}
    later: dict[str, float] = {}
    first: dict[str, float] = {}
    pages = [p for p in sorted(site.glob("chapters/*.html")) if "_gotw_spec" in p.read_text(errors="ignore")]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for path in pages:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(path.resolve().as_uri(), wait_until="load")
            page.wait_for_function("() => Array.isArray(window.gotwCalculators) && window.gotwCalculators.length > 0",
                                   timeout=60_000)
            specs = page.evaluate("window.gotwCalculators.map(c => c.spec)")
            live = [(i, spec, next((c for c in spec["controls"] if c["kind"] == "choice"), None))
                    for i, spec in enumerate(specs) if spec["live"]]
            live = [x for x in live if x[2] is not None]
            if not live:
                page.close()
                continue
            i, spec, _ = live[0]
            page.wait_for_function("([i, n]) => Object.keys(window.gotwCalculators[i].model.get('children')[n].views)"
                                   ".length > 0", arg=[i, spec["output"]], timeout=60_000)
            page.evaluate("""async ([i, n]) => {
                var views = await Promise.all(Object.values(window.gotwCalculators[i].model.get('children')[n].views));
                views[0].el.scrollIntoView(); }""", [i, spec["output"]])
            page.wait_for_timeout(PAUSE_MS)
            for k, (i, spec, control) in enumerate(live):
                title = spec.get("title") or f"{path.stem} #{i}"
                done = _change(page, i, control)
                if k == 0:
                    first[title] = done["ms"]
                later[title] = statistics.median(_change(page, i, control)["ms"] for _ in range(RUNS))
            page.close()
        browser.close()
    return later, first


def main():
    in_page, first_change = page_ms()
    rows = []
    for name, calc in calculators():
        spec = json.loads(calc._gotw_spec)
        k = kernel_ms(calc)
        title = spec.get("title") or name
        p = in_page.get(title)
        f = first_change.get(title)
        rows.append({
            "calculator": f"{title} ({name})",
            "website": "live" if spec["live"] else f"kernel only: {spec['why']}",
            "kernel median (ms)": f"{k:.1f}",
            "kernel <= 50 ms": "yes" if k <= KERNEL_TARGET_MS else "no",
            "page first change after a pause (ms)": "-" if f is None else f"{f:.1f}",
            "first <= 300 ms": "-" if f is None else ("yes" if f <= FIRST_TARGET_MS else "no"),
            "page later median (ms)": "-" if p is None else f"{p:.1f}",
            "later <= 100 ms": "-" if p is None else ("yes" if p <= PAGE_TARGET_MS else "no"),
        })
    return rows


if __name__ == "__main__":
    for row in main():
        print(row)
