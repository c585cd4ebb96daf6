"""nbval also checks the numbers quoted in the prose: their stored values must be what the code computes now.

The chapters quote computed values with MyST inline expressions
(``{eval}`prose_views.text("key", ".1f")```); tools/execute_notebooks.py
stores each result in the markdown cell's ``user_expressions`` metadata,
and the website and JupyterLab show those stored values. nbval compares code
cells' outputs only, so after a notebook's last cell this adds one more test
item that evaluates every inline expression in the same kernel and compares
it with the stored value (through the same sanitize patterns as the outputs).
Values computed in cells whose outputs nbval ignores (tag ``nbval-ignore-output``:
the lab's measurements, which differ from run to run) are not compared, just as
those cells' outputs are not.
"""

from __future__ import annotations

import re

import pytest

EVAL_ROLE = re.compile(r"\{eval\}`([^`]+)`")
KEY = re.compile(r"""^\s*prose_views\.\w+\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""")


def _varying_keys(cells) -> set[str]:
    """Names kept in code cells tagged nbval-ignore-output: their values vary from run to run."""
    text = "\n".join(c.source for c in cells if c.cell_type == "code"
                     and "nbval-ignore-output" in c.metadata.get("tags", []))
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


class InlineValues(pytest.Item):
    """The stored values of a notebook's inline expressions equal a fresh evaluation in nbval's kernel."""

    def runtest(self):
        nb_file = self.parent
        kernel = nb_file.kernel
        stored: dict[str, str] = {}
        varying = _varying_keys(nb_file.nb.cells)
        for cell in nb_file.nb.cells:
            if cell.cell_type != "markdown":
                continue
            results = {e.get("expression"): e.get("result", {}) for e in cell.metadata.get("user_expressions", [])}
            for expr in EVAL_ROLE.findall(cell.source):
                key = KEY.match(expr)
                if key and key.group(1) in varying:
                    continue
                data = results.get(expr, {}).get("data", {})
                if not data:
                    raise AssertionError(f"{{eval}}`{expr}` has no stored value: re-store with tools/execute_notebooks.py")
                stored[expr] = data.get("text/markdown", data.get("text/plain", ""))
        if not stored:
            return
        names = {str(i): e for i, e in enumerate(stored)}
        msg_id = kernel.kc.execute("", silent=True, store_history=False, user_expressions=names)
        while True:
            reply = kernel.kc.get_shell_msg(timeout=120)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        fresh = reply["content"].get("user_expressions", {})
        wrong = []
        for key, expr in names.items():
            result = fresh.get(key, {})
            if result.get("status") != "ok":
                wrong.append(f"{expr}: {result.get('ename')}: {result.get('evalue')}")
                continue
            data = result.get("data", {})
            now = data.get("text/markdown", data.get("text/plain", ""))
            if self._sanitize(now) != self._sanitize(stored[expr]):
                wrong.append(f"{expr}: stored {stored[expr]!r}, computed now {now!r}")
        assert not wrong, "stored prose values differ (re-store with tools/execute_notebooks.py):\n" + "\n".join(wrong)

    def _sanitize(self, text: str) -> str:
        for regex, replacement in getattr(self.parent, "sanitize_patterns", {}).items():
            text = re.sub(regex, replacement, text)
        return text

    def reportinfo(self):
        return self.path, 0, f"{self.parent.name}::inline values"


def pytest_collection_modifyitems(session, config, items):
    if not config.getoption("nbval", default=False) and not config.getoption("nbval_lax", default=False):
        return
    def notebook(parent) -> bool:
        return parent is not None and type(parent).__name__ == "IPyNbFile"

    out, last_parent = [], None
    for item in items:
        parent = getattr(item, "parent", None)
        if notebook(last_parent) and parent is not last_parent:
            out.append(InlineValues.from_parent(last_parent, name="inline values"))
        out.append(item)
        last_parent = parent
    if notebook(last_parent):
        out.append(InlineValues.from_parent(last_parent, name="inline values"))
    items[:] = out
