"""Benchmark: how fast every calculator recomputes, in the kernel and in the website's page.

Kernel: every public ``*_calculator`` / ``*_converter`` function of the view
modules is called with its defaults; the median time of a recompute
(``Calculator.refresh``: the model function, the range checks and the
results HTML) over a few runs. Page: when the site is built (_build/html)
and Debian's chromium is there, each page with a live calculator is opened,
Python (Pyodide) is loaded once, and the median time from a control change
to the new results shown in the page (measured by the page itself,
``window.gotwLastRecompute``) over a few changes. Targets: 50 ms in the
kernel, 100 ms in the page.
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
KERNEL_TARGET_MS, PAGE_TARGET_MS = 50.0, 100.0
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


def page_ms(site: Path = ROOT / "_build" / "html") -> dict[str, float]:
    """Title -> median recompute time in the page, for the live calculators of the built site."""
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    try:
        from browser_support import CHROMIUM, CHROMIUM_ARGS
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {}
    if not (site / "index.html").is_file() or not Path(CHROMIUM).exists():
        return {}
    out: dict[str, float] = {}
    pages = [p for p in sorted(site.glob("chapters/*.html")) if "_gotw_spec" in p.read_text(errors="ignore")]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for path in pages:
            page = browser.new_page()
            page.goto(path.resolve().as_uri(), wait_until="load")
            page.wait_for_function("() => Array.isArray(window.gotwCalculators) && window.gotwCalculators.length > 0",
                                   timeout=60_000)
            page.wait_for_timeout(500)
            specs = page.evaluate("window.gotwCalculators.map(c => c.spec)")
            for i, spec in enumerate(specs):
                if not spec["live"]:
                    continue
                control = next((c for c in spec["controls"] if c["kind"] == "choice"), None)
                if control is None:
                    continue
                times = []
                start = page.evaluate("([i, n]) => window.gotwCalculators[i].model.get('children')[n].get('index')",
                                      [i, control["index"]])
                for k in range(RUNS + 1):   # each change picks another option than the one shown
                    page.evaluate("([i, n, v]) => { window.gotwLastRecompute = null; "
                                  "window.gotwCalculators[i].model.get('children')[n].set('index', v); }",
                                  [i, control["index"], (start + k + 1) % len(control["options"])])
                    page.wait_for_function("() => window.gotwLastRecompute", timeout=180_000, polling=20)
                    if k:  # the first change also loads Python
                        times.append(page.evaluate("window.gotwLastRecompute.ms"))
                out[spec.get("title") or f"{path.stem} #{i}"] = statistics.median(times)
            page.close()
        browser.close()
    return out


def main():
    in_page = page_ms()
    rows = []
    for name, calc in calculators():
        spec = json.loads(calc._gotw_spec)
        k = kernel_ms(calc)
        title = spec.get("title") or name
        p = in_page.get(title)
        rows.append({
            "calculator": f"{title} ({name})",
            "website": "live" if spec["live"] else f"kernel only: {spec['why']}",
            "kernel median (ms)": f"{k:.1f}",
            "kernel <= 50 ms": "yes" if k <= KERNEL_TARGET_MS else "no",
            "page median (ms)": "-" if p is None else f"{p:.1f}",
            "page <= 100 ms": "-" if p is None else ("yes" if p <= PAGE_TARGET_MS else "no"),
        })
    return rows


if __name__ == "__main__":
    for row in main():
        print(row)
