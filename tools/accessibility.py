"""Sphinx extension (loaded from _config.yml): accessibility repairs of the HTML that Sphinx writes.

The bibliography: docutils writes the citation list as ``<div role="list">``
whose entries carry ``role="doc-biblioentry"``, a role DPUB-ARIA 1.1 deprecated
and no longer counts as a list item, so to assistive technology the list has
no items (axe: aria-required-children, critical). Each entry is given the
plain ``listitem`` role instead, which every screen reader knows.

>>> fix_body('<div role="list" class="citation-list">\\n<div class="citation" id="a" role="doc-biblioentry">')
'<div role="list" class="citation-list">\\n<div class="citation" id="a" role="listitem">'
"""

from __future__ import annotations

import re

_BIBLIOENTRY = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')


def fix_body(body: str) -> str:
    """The page body with each citation's deprecated role replaced by ``listitem``."""
    return _BIBLIOENTRY.sub(r'\1 role="listitem"', body)


def _page_context(app, pagename, templatename, context, doctree) -> None:
    if "body" in context and "doc-biblioentry" in context["body"]:
        context["body"] = fix_body(context["body"])


def setup(app):
    app.connect("html-page-context", _page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
