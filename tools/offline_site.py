"""Sphinx extension (loaded from _config.yml): keep built pages free of unused remote code.

Jupyter Book always loads sphinx-thebe, which writes the address of the
thebe library on a CDN into every page (twice, which also makes the browser
report "Identifier 'THEBE_JS_URL' has already been declared"). This book does
not use thebe (``launch_buttons.thebe: false``), so its script, its inline
configuration and its style sheet are removed from every page.
"""

from __future__ import annotations

from typing import Any


def _is_thebe(asset: Any) -> bool:
    filename = str(getattr(asset, "filename", "") or "")
    body = str((getattr(asset, "attributes", {}) or {}).get("body", ""))
    return "sphinx-thebe" in filename or "THEBE_JS_URL" in body or "thebe" in filename.split("/")[-1]


def strip_thebe(app, pagename, templatename, context, doctree) -> None:
    """Remove thebe's assets from the page context (in place: other handlers share these lists)."""
    launch = (app.config.html_theme_options or {}).get("launch_buttons", {}) or {}
    if launch.get("thebe"):
        return
    for key in ("script_files", "css_files"):
        assets = context.get(key)
        if isinstance(assets, list):
            assets[:] = [a for a in assets if not _is_thebe(a)]


def setup(app):
    app.connect("html-page-context", strip_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
