"""Sphinx extension (loaded from _config.yml): two read-only caches that make the build faster.

Neither changes a page; each removes work that the build repeated.

1. **Numbered references.** Sphinx 7.4 resolves every ``{numref}`` by
   unpickling the whole doctree of the page the target is on
   (``StandardDomain._resolve_numref_xref`` calls ``env.get_doctree``), only to
   look up one node by its id. The chapters embed animations and widget state,
   so their doctrees are megabytes, and with more than a hundred numbered
   references the same few pages were unpickled over and over (seconds per
   build). Here each page is unpickled once for these lookups, and only for
   them: the copies are read, never handed to a writer, and dropped when the
   build ends.
2. **Bibliography plugins.** sphinxcontrib-bibtex asks pybtex for a plugin
   class by name for every citation, and pybtex answers by scanning the entry
   points of every installed package each time. The answer for a given name
   does not change during a build, so it is remembered.
"""

from __future__ import annotations

import functools
from typing import Any

_DOCTREES: dict[str, Any] = {}


def _numref_with_cached_doctrees(resolve):
    """Wrap ``StandardDomain._resolve_numref_xref`` so its doctree lookups reuse one copy per page."""

    @functools.wraps(resolve)
    def wrapper(self, env, *args, **kwargs):
        load = env.get_doctree

        def cached(docname: str):
            if docname not in _DOCTREES:
                _DOCTREES[docname] = load(docname)
            return _DOCTREES[docname]

        env.get_doctree = cached          # shadows the method for this call only
        try:
            return resolve(self, env, *args, **kwargs)
        finally:
            del env.get_doctree

    wrapper.cached_doctrees = True
    return wrapper


def _forget(*_args) -> None:
    _DOCTREES.clear()


def install() -> None:
    """Put both caches in place (idempotent)."""
    import pybtex.plugin
    from sphinx.domains.std import StandardDomain

    if not getattr(StandardDomain._resolve_numref_xref, "cached_doctrees", False):
        StandardDomain._resolve_numref_xref = _numref_with_cached_doctrees(StandardDomain._resolve_numref_xref)
    if not hasattr(pybtex.plugin.find_plugin, "cache_info"):
        pybtex.plugin.find_plugin = functools.lru_cache(maxsize=None)(pybtex.plugin.find_plugin)


def setup(app):
    install()
    app.connect("env-updated", _forget)       # the doctrees were (re)written by the read phase
    app.connect("build-finished", _forget)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
