"""Each chapter in JupyterLab (with jupyterlab-myst), in chromium, as a reader opens it with `make lab`.

Opened fresh (``?reset``), the markdown renders as on the website: no raw
MyST markup in any rendered cell, before and after running every cell; a
solution's code starts folded; and a calculator answers a changed control.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from conftest import ROOT

CHAPTERS = sorted(p.name for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
#: Markup that shows a role or directive was not rendered, or an inline expression shown unevaluated.
RAW = re.compile(r"\{(eval|glue(:\w+)?|cite(:\w+)?|ref|eq|doc|numref|exercise|solution(-start|-end)?|admonition|"
                 r"literalinclude|figure|math)\}|^:::|^```|prose_views\.", re.M)
RUN_TIMEOUT_MS = 240_000
#: Errors JupyterLab itself raises while it re-renders cells (a detached Lumino widget); not the book's.
BENIGN = ("Host is not attached",)

PROBE = """
() => {
  const cells = Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'));
  const md = cells.filter(c => c.classList.contains('jp-MarkdownCell'))
    .map(c => { const r = c.querySelector('.jp-RenderedMarkdown, .myst'); return r ? r.innerText : null; });
  const solutions = cells.filter(c => c.classList.contains('jp-CodeCell'))
    .map(c => ({ placeholder: (c.querySelector('.jp-InputPlaceholder') || {}).innerText || '',
                 editorShown: Boolean(c.querySelector('.jp-InputArea-editor')
                                      && c.querySelector('.jp-InputArea-editor').offsetParent) }));
  const busy = cells.filter(c => /\\[\\*\\]/.test((c.querySelector('.jp-InputPrompt') || {}).innerText || '')).length;
  return { count: cells.length, md: md, code: solutions, busy: busy };
}
"""


def _open(browser, url, name):
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: None if str(e).startswith(BENIGN) else errors.append(str(e)))
    page.goto(f"{url}/lab/tree/{name}?reset", wait_until="load")
    page.wait_for_function("() => window.jupyterapp && document.querySelectorAll('.jp-Notebook .jp-Cell').length > 0",
                           timeout=120_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget; return w && w.sessionContext && "
        "w.sessionContext.session && w.sessionContext.session.kernel && "
        "w.sessionContext.session.kernel.status === 'idle'; }", timeout=120_000)
    return page, errors


def _raw(md: list) -> list[str]:
    return [m.group(0) + ": " + text[max(0, m.start() - 40): m.end() + 40].replace("\n", " ")
            for text in md if text for m in [RAW.search(text)] if m]


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_renders_and_runs_in_jupyterlab(browser, lab, name):
    url, _folder = lab
    nb = nbformat.read(ROOT / "chapters" / name, as_version=4)
    solution_cells = sum(1 for c in nb.cells if c.cell_type == "code" and "solution" in c.metadata.get("tags", []))
    page, errors = _open(browser, url, name)
    try:
        page.wait_for_timeout(2000)
        first = page.evaluate(PROBE)
        assert first["count"] == len(nb.cells), f"{name}: {first['count']} of {len(nb.cells)} cells in the page"
        assert not _raw(first["md"]), f"{name}: raw MyST markup when opened: {_raw(first['md'])[:5]}"
        folded = [c for c in first["code"] if c["placeholder"].startswith("# Solution code")]
        assert len(folded) == solution_cells, f"{name}: {len(folded)} of {solution_cells} solutions start folded"
        assert all(not c["editorShown"] for c in folded), f"{name}: a folded solution shows its code"
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_timeout(1000)
        page.wait_for_function(
            "() => { const w = window.jupyterapp.shell.currentWidget; const k = w.sessionContext.session.kernel;"
            " const busy = Array.from(document.querySelectorAll('.jp-Notebook .jp-InputPrompt'))"
            "   .some(p => /\\[\\*\\]/.test(p.innerText)); return k.status === 'idle' && !busy; }",
            timeout=RUN_TIMEOUT_MS, polling=500)
        page.wait_for_timeout(1500)
        after = page.evaluate(PROBE)
        assert not _raw(after["md"]), f"{name}: raw MyST markup after running: {_raw(after['md'])[:5]}"
        errors_shown = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count()
        tracebacks = page.locator(".jp-OutputArea-output .ansi-red-fg, .jp-OutputArea-output:has-text('Traceback')")
        assert tracebacks.count() == 0, f"{name}: a cell failed in JupyterLab ({errors_shown} stderr outputs)"
        # A calculator (a widget box with a results table) answers a changed control.
        calc = page.locator(".widget-vbox:has(.gotw-results)").first
        if calc.count() and calc.locator("select").count():
            calc.scroll_into_view_if_needed()
            before = calc.locator(".gotw-results, .gotw-error").first.inner_text()
            answered = False
            for select in calc.locator("select").all():   # a control whose next option changes the results
                options = select.locator("option").count()
                current = select.evaluate("s => s.selectedIndex")
                select.select_option(index=(current + 1) % options)
                try:
                    page.wait_for_function(
                        "([el, before]) => { const r = el.querySelector('.gotw-results, .gotw-error');"
                        " return r && r.innerText !== before; }",
                        arg=[calc.element_handle(), before], timeout=20_000)
                    answered = True
                    break
                except Exception:  # noqa: BLE001 - this option gives the same results: try the next control
                    continue
            assert answered, f"{name}: the calculator did not answer a changed control"
    finally:
        try:
            page.evaluate("() => window.jupyterapp.commands.execute('kernelmenu:shutdown')")
        except Exception:  # noqa: BLE001 - best effort: the server stops at the end anyway
            pass
        page.close()
    assert errors == [], f"{name}: uncaught errors in JupyterLab: {errors[:3]}"
