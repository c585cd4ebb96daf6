"""The pages of the book, as listed in _toc.yml (used by the site checks and the browser tests).

>>> pages = toc_pages()
>>> pages[0]
'index'
>>> html_path("chapters/bibliography")
'chapters/bibliography.html'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _walk(entries: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for entry in entries or []:
        if "file" in entry:
            found.append(str(entry["file"]).removesuffix(".md").removesuffix(".ipynb"))
        for key in ("chapters", "sections", "parts"):
            found.extend(_walk(entry.get(key, [])))
    return found


def toc_pages(toc: Path = ROOT / "_toc.yml") -> list[str]:
    """Every document of the table of contents, root first, in reading order (no suffix)."""
    data = yaml.safe_load(Path(toc).read_text())
    pages = [str(data["root"]).removesuffix(".md").removesuffix(".ipynb")]
    pages += _walk(data.get("parts", [])) + _walk(data.get("chapters", [])) + _walk(data.get("sections", []))
    return pages


def html_path(docname: str) -> str:
    """The built page of a document, relative to _build/html."""
    return docname + ".html"


def source_path(docname: str, root: Path = ROOT) -> Path | None:
    """The source file of a document (.ipynb or .md), or None when it does not exist."""
    for suffix in (".ipynb", ".md"):
        path = root / (docname + suffix)
        if path.exists():
            return path
    return None
