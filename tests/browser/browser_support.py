"""Helpers for the browser tests: drive Debian's chromium over the built site (Playwright), once per page and colour mode.

The site (``_build/html``, or ``$GOTW_SITE``) is served on 127.0.0.1 by a
threaded ``http.server``. Every request to any other host is aborted and
recorded. Each page is visited once in light mode and once in dark mode; a
visit waits for MathJax and the widget manager, takes the measurements the
tests assert on, saves a screenshot under ``_build/screenshots/<mode>/`` and
then exercises the animation players.
"""

from __future__ import annotations

import http.server
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from site_pages import html_path, toc_pages  # noqa: E402, F401 (html_path: re-exported to the tests)

SITE = Path(os.environ.get("GOTW_SITE", ROOT / "_build" / "html"))
SHOTS = Path(os.environ.get("GOTW_SCREENSHOTS", ROOT / "_build" / "screenshots"))
CHROMIUM = os.environ.get("GOTW_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PAGES = toc_pages()
TIMEOUT_MS = 30_000
JS = (Path(__file__).parent / "probes.js").read_text()
#: axe-core, the accessibility engine (npm, pinned in package.json's devDependencies; read from node_modules,
#: injected into the visited page by the test, never part of the site).
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
#: Impacts a page must not have any violation of.
AXE_BLOCKING = ("serious", "critical")


@dataclass
class Visit:
    """What one page did in the browser."""

    page: str
    mode: str
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    probe: dict = field(default_factory=dict)
    players: list[dict] = field(default_factory=list)
    screenshot: Path | None = None
    axe: list[dict] = field(default_factory=list)
    controls: list[dict] = field(default_factory=list)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D401 - silence the access log
        pass


def _is_local(url: str, base: str) -> bool:
    return url.startswith(base) or url.split(":", 1)[0] in ("data", "blob", "about")


def open_page(browser, base: str, url: str, mode: str, record: Visit):
    """A new page in its own context (colour mode set before any script runs), with the network watched."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900},
        color_scheme="dark" if mode == "dark" else "light",
        reduced_motion="reduce",
    )
    # The theme keeps the reader's choice in localStorage; set it as a reader would have.
    context.add_init_script(f"try {{ localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}'); }} catch (e) {{}}")

    def route(r):
        if _is_local(r.request.url, base):
            r.continue_()
        else:
            record.external.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.on("console", lambda m: m.type == "error" and record.console_errors.append(f"{m.text} @ {m.location}"))
    page.on("pageerror", lambda e: record.console_errors.append(f"uncaught: {e}"))

    def failed(req):
        if _is_local(req.url, base):
            record.failed_requests.append(f"{req.url}: {req.failure}")

    page.on("requestfailed", failed)
    page.on("response", lambda r: r.status >= 400 and record.failed_requests.append(f"{r.url}: HTTP {r.status}"))
    page.goto(url, wait_until="load")
    return context, page


def settle(page) -> dict:
    """Wait for MathJax and the widget manager to finish; return the page's measurements."""
    page.wait_for_function("() => document.readyState === 'complete'")
    page.evaluate(JS)  # defines window.gotwProbe
    page.wait_for_function("() => window.gotwProbe.ready()", polling=100)
    return page.evaluate("window.gotwProbe.measure()")


def axe_pinned_version() -> str:
    """The axe-core version package.json pins (devDependencies)."""
    import json

    return json.loads((ROOT / "package.json").read_text())["devDependencies"]["axe-core"]


def run_axe(page) -> list[dict]:
    """axe-core's violations on the page as it is now: rule id, impact, help and the elements (selectors)."""
    if not AXE.is_file():
        raise FileNotFoundError(f"{AXE} is missing: run `npm ci` (make browser does)")
    page.add_script_tag(path=str(AXE))
    return page.evaluate("""async () => {
      const r = await window.axe.run(document, { resultTypes: ["violations"] });
      return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
                                      nodes: v.nodes.map(n => n.target.join(" ")) }));
    }""")


def exercise_players(page) -> list[dict]:
    """Step, play and pause every animation player on the page."""
    results = []
    for pid in page.evaluate("Array.from(document.querySelectorAll('.gotw-player')).map(p => p.id)"):
        player = page.locator(f"#{pid}")
        player.scroll_into_view_if_needed()
        before = page.evaluate("id => window.gotwProbe.player(id)", pid)
        if before["frames"] < 2:
            results.append({"id": pid, "before": before, "after_next": before})
            continue
        player.locator(".gotw-next").click()
        after_next = page.evaluate("id => window.gotwProbe.player(id)", pid)
        player.locator(".gotw-play").click()
        played = True
        try:
            page.wait_for_function(
                "([id, f]) => window.gotwProbe.player(id).frame !== f",
                arg=[pid, after_next["frame"]], timeout=30_000, polling=50,  # a loaded machine delays timers
            )
        except Exception:  # noqa: BLE001 - reported through the result
            played = False
        player.locator(".gotw-pause").click()
        paused = page.evaluate("id => window.gotwProbe.player(id)", pid)
        player.locator(".gotw-first").click()
        first = page.evaluate("id => window.gotwProbe.player(id)", pid)
        results.append({"id": pid, "before": before, "after_next": after_next, "played": played,
                        "paused": paused, "first": first})
    return results


#: The widget controls whose accessible names the tests check: a slider's handle and the editable
#: number box (readout) beside it.
NAMED_CONTROLS = {"handle": ".widget-subarea .noUi-handle", "readout": ".widget-subarea .widget-readout"}


def control_names(page) -> list[dict]:
    """Each slider handle and readout of the page as chromium's accessibility tree exposes it.

    One dict per element: ``kind`` (a key of :data:`NAMED_CONTROLS`), ``role``, ``name`` (the computed
    accessible name), ``ignored`` (not in the tree: a readout the widget hides), ``disabled`` (the
    tree's "disabled" property) and ``tabindex``.
    """
    cdp = page.context.new_cdp_session(page)
    try:
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        found = []
        for kind, selector in NAMED_CONTROLS.items():
            for node in cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"]:
                ax = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node, "fetchRelatives": False})["nodes"][0]
                props = {p["name"]: p.get("value", {}).get("value") for p in ax.get("properties", [])}
                attrs = cdp.send("DOM.getAttributes", {"nodeId": node})["attributes"]
                attrs = dict(zip(attrs[::2], attrs[1::2]))
                found.append({
                    "kind": kind,
                    "role": ax.get("role", {}).get("value", ""),
                    "name": (ax.get("name") or {}).get("value", ""),
                    "ignored": ax.get("ignored", False),
                    "disabled": bool(props.get("disabled")),
                    "tabindex": attrs.get("tabindex"),
                })
    finally:
        cdp.detach()
    return found
