"""nbval also checks the numbers quoted in the prose: their stored values must be what the code computes now.

The chapters quote computed values with MyST inline expressions
(``{eval}`prose_views.text("key", ".1f")```); tools/execute_notebooks.py
stores each result in the markdown cell's ``user_expressions`` metadata,
and the website and JupyterLab show those stored values. nbval compares code
cells' outputs only, so after a notebook's last cell this adds one more test
item that evaluates every inline expression in the same kernel and compares
it with the stored value (through the same sanitize patterns as the outputs:
the lab's measured numbers differ from run to run).
"""

from __future__ import annotations

import re

import pytest

EVAL_ROLE = re.compile(r"\{eval\}`([^`]+)`")


class InlineValues(pytest.Item):
    """The stored values of a notebook's inline expressions equal a fresh evaluation in nbval's kernel."""

    def runtest(self):
        nb_file = self.parent
        kernel = nb_file.kernel
        stored: dict[str, str] = {}
        for cell in nb_file.nb.cells:
            if cell.cell_type != "markdown":
                continue
            results = {e.get("expression"): e.get("result", {}) for e in cell.metadata.get("user_expressions", [])}
            for expr in EVAL_ROLE.findall(cell.source):
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
