"""Every page of the book, in a real browser (chromium), with the network cut off.

One visit per page and colour mode (see conftest.py); the tests below assert
on what that visit recorded.
"""

from __future__ import annotations

import pytest
from browser_support import PAGES, SITE, TIMEOUT_MS, Visit, open_page, settle

WCAG_AA = 4.5  # minimum contrast ratio for body text (WCAG 2.1, 1.4.3)


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_offline_without_errors(visit, page):
    v: Visit = visit(page, "light")
    assert v.external == [], f"{page} tried to reach other hosts: {v.external}"
    assert v.failed_requests == [], f"{page}: failed requests {v.failed_requests}"
    assert v.console_errors == [], f"{page}: console errors {v.console_errors}"


@pytest.mark.parametrize("page", PAGES)
def test_math_is_typeset(visit, page):
    probe = visit(page, "light").probe
    if probe["math"]:
        assert probe["mathjax"], f"{page} has {probe['math']} formulas but MathJax did not load"
        assert probe["mathRendered"] == probe["math"], (
            f"{page}: {probe['math'] - probe['mathRendered']} formulas left as TeX: {probe['mathUnrendered']}")
    assert probe["rawTex"] == [], f"{page}: raw TeX left in the text: {probe['rawTex']}"


@pytest.mark.parametrize("page", PAGES)
def test_widgets_render_their_stored_results(visit, page):
    views = visit(page, "light").probe["views"]
    for view in views:
        assert view["inState"], f"{page}: widget {view['model']} is displayed but its state is not embedded"
        assert view["rendered"], f"{page}: widget {view['model']} was not rendered by the widget manager"
        assert view["controls"] > 0 or view["expected"], f"{page}: widget {view['model']} rendered empty"
        assert view["missing"] == [], f"{page}: widget {view['model']} does not show its stored results {view['missing']}"
        assert view["fallback"] == "", f"{page}: widget {view['model']} shows its text fallback {view['fallback']!r}"


@pytest.mark.parametrize("page", PAGES)
def test_animation_players_step_and_play(visit, page):
    for p in visit(page, "light").players:
        before, after = p["before"], p["after_next"]
        assert before["shown"] == 1 and after["shown"] == 1, f"{page} {p['id']}: exactly one frame must show"
        if before["frames"] > 1:
            assert int(after["frame"]) == int(before["frame"]) + 1, f"{page} {p['id']}: next did not advance"
            assert after["image"] != before["image"], f"{page} {p['id']}: next frame shows the same image"
            assert after["label"] != before["label"], f"{page} {p['id']}: the frame label did not change"
            assert p["played"], f"{page} {p['id']}: play did not advance the animation"
            assert not p["paused"]["timer"], f"{page} {p['id']}: pause did not stop the animation"
            assert p["first"]["frame"] == "0", f"{page} {p['id']}: first did not go back to frame 0"


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("page", PAGES)
def test_theme_and_text_contrast(visit, page, mode):
    v: Visit = visit(page, mode)
    assert v.probe["theme"] == mode, f"{page}: data-theme is {v.probe['theme']!r} in {mode} mode"
    c = v.probe["contrast"]
    assert c["ratio"] >= WCAG_AA, f"{page} ({mode}): text {c['color']} on {c['background']} has contrast {c['ratio']:.2f}"
    assert v.screenshot is not None and v.screenshot.stat().st_size > 0
    if mode == "dark":
        assert v.external == [] and v.console_errors == [], f"{page} (dark): {v.external} {v.console_errors}"


def test_search_finds_a_known_word(browser, site_url):
    record = Visit("search", "light")
    context, page = open_page(browser, site_url, site_url + "search.html?q=gradients", "light", record)
    try:
        page.wait_for_selector("#search-results ul.search li", timeout=TIMEOUT_MS)
        hits = page.locator("#search-results ul.search li a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    finally:
        context.close()
    assert any(h.split("?")[0].split("#")[0] == "index.html" for h in hits), hits
    assert record.external == [] and record.console_errors == [] and record.failed_requests == []


def test_widget_page_works_from_disk(browser):
    """Opened as file://, a page with widgets still loads its vendored scripts and renders them."""
    pages = [p for p in PAGES if (SITE / f"{p}.html").is_file()
             and "widget-view+json" in (SITE / f"{p}.html").read_text(errors="ignore")]
    if not pages:
        pytest.skip("no page embeds widgets")
    url = (SITE / f"{pages[0]}.html").resolve().as_uri()
    record = Visit(pages[0], "light")
    context, page = open_page(browser, "file://", url, "light", record)
    try:
        probe = settle(page)
    finally:
        context.close()
    assert record.external == [], record.external
    assert all(v["rendered"] and not v["missing"] for v in probe["views"]), probe["views"]
    assert probe["mathRendered"] == probe["math"]



def test_axe_is_the_pinned_version():
    import json

    from browser_support import AXE, axe_pinned_version

    installed = json.loads((AXE.parent / "package.json").read_text())["version"]
    assert installed == axe_pinned_version(), f"axe-core {installed} installed, {axe_pinned_version()} pinned: npm ci"


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("page", PAGES)
def test_no_serious_accessibility_violation(visit, page, mode):
    """axe-core on the rendered page (widgets, math and calculators included): nothing serious or critical."""
    from browser_support import AXE_BLOCKING

    bad = [v for v in visit(page, mode).axe if v["impact"] in AXE_BLOCKING]
    assert not bad, f"{page} ({mode}): " + "; ".join(
        f"{v['id']} ({v['impact']}: {v['help']}) at {', '.join(v['nodes'][:4])}" for v in bad)


@pytest.mark.parametrize("page", PAGES)
def test_every_slider_and_its_number_box_have_a_name(visit, page):
    """A screen reader names each slider's handle and the editable number box beside it (not "slider",
    not an unnamed text field); a disabled one is announced as disabled and left out of the tab order."""
    controls = visit(page, "light").controls
    handles = [c for c in controls if c["kind"] == "handle"]
    readouts = [c for c in controls if c["kind"] == "readout" and not c["ignored"]]
    for c in handles:
        assert not c["ignored"] and c["role"] == "slider", f"{page}: a slider handle is not exposed as a slider: {c}"
    for c in handles + readouts:
        assert c["name"].strip(), f"{page}: a slider's {c['kind']} has no accessible name: {c}"
    for c in readouts:
        assert c["role"] == "textbox" and c["name"].endswith("(value)"), f"{page}: slider number box {c}"
    for c in handles:
        assert c["disabled"] == (c["tabindex"] == "-1"), f"{page}: a disabled handle must leave the tab order: {c}"
