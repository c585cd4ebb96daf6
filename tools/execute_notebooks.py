"""Execute notebooks headless, in place, storing outputs, widget state and inline-expression values.

Usage: python tools/execute_notebooks.py chapters/00_introduction.ipynb [...]

Stored outputs come from this headless run (as nbval re-runs them), never
from an interactive front end. Timing metadata is not recorded, so a re-run
of an unchanged notebook leaves the file byte-identical.

A markdown cell's inline expressions (MyST's ``{eval}`expr``` role) are
evaluated in the kernel where the cell stands, as JupyterLab's MyST
extension (jupyterlab-myst) does when the cell is run, and stored in the
same place and form: the cell's ``user_expressions`` metadata, a list of
``{"expression": ..., "result": {"status": "ok", "data": {...}, "metadata": {}}}``.
JupyterLab shows them before anything runs; the website shows them
(tools/inline_values.py); an expression that fails, or quotes a value that
only later code computes, stops the run.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

#: MyST's inline-expression role: {eval}`expression`.
EVAL_ROLE = re.compile(r"\{eval\}`([^`]+)`")


def expressions(source: str) -> list[str]:
    """The inline expressions of a markdown cell, in order, each once.

    >>> expressions("a {eval}`x` and {eval}`f('y', '.1f')` and {eval}`x` again")
    ['x', "f('y', '.1f')"]
    """
    return list(dict.fromkeys(m.group(1) for m in EVAL_ROLE.finditer(source)))


class InlineExpressionClient(NotebookClient):
    """nbclient's executor that also evaluates markdown cells' inline expressions, in cell order.

    An expression that fails where its cell stands (a value the text quotes
    before the code that computes it) stops the run with an error that names
    it: in JupyterLab, running the cells in order would show an error there,
    and the website would quote a value the page has not computed yet. (It is
    first tried again after the last cell, to tell that case from an
    expression that fails everywhere.)
    """

    deferred: list

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell_index == 0:
            self.deferred = []
        if cell.cell_type == "markdown":
            exprs = expressions(cell.source)
            if exprs:
                failed = await self._evaluate(cell, cell_index, exprs, strict=False)
                if failed:
                    self.deferred.append((cell, cell_index, exprs, failed))
            else:
                cell.metadata.pop("user_expressions", None)
        else:
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        if cell_index == len(self.nb.cells) - 1 and self.deferred:
            late = []
            for later, index, exprs, failed in self.deferred:
                await self._evaluate(later, index, exprs)   # raises if it fails everywhere
                late.append(f"markdown cell {index} quotes {', '.join(failed)}")
            raise CellExecutionError("values quoted before the code that computes them (move that code above):\n  "
                                     + "\n  ".join(late), "QuotedTooEarly", "")
        return cell

    async def _evaluate(self, cell, cell_index, exprs, strict=True) -> list[str]:
        """Store the cell's expression results; a failure raises, or (``strict=False``) is returned unstored."""
        msg_id = self.kc.execute("", silent=True, store_history=False,
                                 user_expressions={str(i): e for i, e in enumerate(exprs)})
        reply = await self.async_wait_for_reply(msg_id, cell)
        results = reply["content"].get("user_expressions", {})
        stored = []
        failed = [e for i, e in enumerate(exprs) if results.get(str(i), {}).get("status") != "ok"]
        if failed and not strict:
            return failed
        for i, expr in enumerate(exprs):
            result = results.get(str(i), {})
            if result.get("status") != "ok":
                raise CellExecutionError(
                    f"inline expression {{eval}}`{expr}` in markdown cell {cell_index} failed: "
                    f"{result.get('ename', '')}: {result.get('evalue', '')}", result.get("ename", ""),
                    result.get("evalue", ""))
            stored.append({"expression": expr, "result": {"status": "ok", "data": result.get("data", {}),
                                                          "metadata": result.get("metadata", {})}})
        cell.metadata["user_expressions"] = stored
        return []


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # as `make` runs everything: see the Makefile
    client = InlineExpressionClient(
        nb,
        kernel_name="python3",
        timeout=600,
        record_timing=False,
        store_widget_state=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    nb.metadata.pop("papermill", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for name in argv:
        path = Path(name)
        print(f"executing {path}", flush=True)
        execute(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
