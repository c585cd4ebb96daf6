"""tools/build_speed.py: the build's two caches hand out what the uncached calls would, and load less."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import build_speed  # noqa: E402


class _Env:
    """An environment whose get_doctree counts its loads (each returns a fresh object, as unpickling does)."""

    def __init__(self):
        self.loads = []

    def get_doctree(self, docname):
        self.loads.append(docname)
        return {"doc": docname, "copy": len(self.loads)}


def test_numref_lookups_load_each_page_once_and_leave_the_method_alone():
    seen = []

    def resolve(domain, env, target):
        seen.append(env.get_doctree(target))
        return target.upper()

    wrapped = build_speed._numref_with_cached_doctrees(resolve)
    env = _Env()
    build_speed._forget()
    try:
        assert [wrapped(None, env, t) for t in ("a", "b", "a", "a")] == ["A", "B", "A", "A"]
        assert env.loads == ["a", "b"]                       # two pages, two loads, not four
        assert seen[0] is seen[2] is seen[3] and seen[1]["doc"] == "b"
        assert "get_doctree" not in vars(env)                # the real method is back after each call
        env.get_doctree("a")
        assert env.loads == ["a", "b", "a"]                  # writers still get their own fresh copy
    finally:
        build_speed._forget()
    assert build_speed._DOCTREES == {}


def test_install_is_idempotent_and_plugins_resolve_as_before():
    import pybtex.plugin
    from sphinx.domains.std import StandardDomain

    build_speed.install()
    first = (StandardDomain._resolve_numref_xref, pybtex.plugin.find_plugin)
    build_speed.install()
    assert (StandardDomain._resolve_numref_xref, pybtex.plugin.find_plugin) == first
    plain = pybtex.plugin.find_plugin.__wrapped__("pybtex.backends", "plaintext")
    assert pybtex.plugin.find_plugin("pybtex.backends", "plaintext") is plain
    hits = pybtex.plugin.find_plugin.cache_info().hits
    pybtex.plugin.find_plugin("pybtex.backends", "plaintext")
    assert pybtex.plugin.find_plugin.cache_info().hits == hits + 1   # answered without a new scan
