"""Fixtures for the checks of the built site (_build/html, or $GOTW_SITE)."""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
SITE = Path(os.environ.get("GOTW_SITE", ROOT / "_build" / "html"))


@cache
def soup(path: Path) -> BeautifulSoup:
    """The parsed HTML of a built page (parsed once per session)."""
    return BeautifulSoup(path.read_text(encoding="utf-8", errors="replace"), "html.parser")


def built_pages() -> list[Path]:
    """Every HTML page of the site, assets and page sources excluded."""
    if not SITE.is_dir():
        return []
    skip = ("_static", "_sources", "_images", "_downloads")
    return sorted(p for p in SITE.rglob("*.html") if p.relative_to(SITE).parts[0] not in skip)


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built site at {SITE}: run `make book` first")
    return SITE
