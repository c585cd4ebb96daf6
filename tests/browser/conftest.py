"""Fixtures for the browser tests: the served site, chromium, and one cached visit per page and mode."""

from __future__ import annotations

import functools
import http.server
import json
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from browser_support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGES,
    SHOTS,
    SITE,
    Visit,
    _QuietHandler,
    control_names,
    exercise_players,
    html_path,
    open_page,
    run_axe,
    settle,
)


@pytest.fixture(scope="session")
def site_url():
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built site at {SITE}: run `make book` (or `make build-check`) first")
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="session")
def visit(browser, site_url):
    """``visit(page, mode)``: the cached :class:`Visit` of a toc page in "light" or "dark" mode."""
    cache: dict[tuple[str, str], Visit] = {}

    def run(docname: str, mode: str) -> Visit:
        key = (docname, mode)
        if key not in cache:
            record = Visit(docname, mode)
            context, page = open_page(browser, site_url, site_url + html_path(docname), mode, record)
            try:
                record.probe = settle(page)
                record.controls = control_names(page)
                record.axe = run_axe(page)
                shot = SHOTS / mode / (docname.replace("/", "__") + ".png")
                shot.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(shot), full_page=True)
                record.screenshot = shot
                if mode == "light":
                    record.players = exercise_players(page)
            finally:
                context.close()
            cache[key] = record
        return cache[key]

    return run


def pytest_report_header(config):
    return [f"site: {SITE}", f"chromium: {CHROMIUM}", f"pages: {json.dumps(PAGES)}"]

