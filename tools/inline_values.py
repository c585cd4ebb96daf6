"""Sphinx extension (loaded from _config.yml): show the stored values of MyST inline expressions.

The chapters quote computed numbers with MyST's inline-expression role,
``{eval}`prose_views.text("key", ".1f")```. JupyterLab (jupyterlab-myst)
evaluates it in the kernel; tools/execute_notebooks.py evaluates it in the
same headless run that stores the outputs, and stores the result in the
markdown cell's ``user_expressions`` metadata (jupyterlab-myst's own format).
This extension puts those stored results into the text when Sphinx reads a
notebook (``source-read``), so the website, JupyterLab and the stored
notebook show the same numbers whatever execution mode the build uses. A
result's ``text/markdown`` is inserted as MyST, its ``text/plain`` as
literal text. An expression without a stored result is a build warning
(an error under ``-W``): re-store the outputs with tools/execute_notebooks.py.
"""

from __future__ import annotations

import json
import re

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
EVAL_ROLE = re.compile(r"\{eval\}`([^`]+)`")
PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def shown(result: dict) -> str | None:
    """The MyST text for one stored result, or None if it has nothing to show.

    >>> shown({"status": "ok", "data": {"text/plain": "1,024 [kB]"}})
    '1\\\\,024 \\\\[kB\\\\]'
    >>> shown({"status": "ok", "data": {"text/markdown": "**all**", "text/plain": "<Markdown>"}})
    '**all**'
    """
    if result.get("status") != "ok":
        return None
    data = result.get("data", {})
    if "text/markdown" in data:
        return "".join(data["text/markdown"]).strip()
    if "text/plain" in data:
        return PUNCTUATION.sub(r"\\\1", "".join(data["text/plain"]))
    return None


def substitute(notebook: dict, where: str = "") -> tuple[dict, list[str]]:
    """Replace every inline expression of ``notebook`` (nbformat JSON) by its stored result; return problems."""
    problems: list[str] = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        source = "".join(cell.get("source", ""))
        if "{eval}" not in source:
            continue
        stored = {e.get("expression"): e.get("result", {}) for e in cell.get("metadata", {}).get("user_expressions", [])}

        def repl(m: re.Match, stored=stored, index=index) -> str:
            text = shown(stored.get(m.group(1), {}))
            if text is None:
                problems.append(f"{where} cell {index}: no stored value for {{eval}}`{m.group(1)}`")
                return m.group(0)
            return text

        cell["source"] = EVAL_ROLE.sub(repl, source)
    return notebook, problems


def _source_read(app, docname: str, source: list[str]) -> None:
    text = source[0]
    if "{eval}" not in text or not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    notebook, problems = substitute(json.loads(text), docname)
    for problem in problems:
        LOGGER.warning(problem + " (re-store the outputs: python tools/execute_notebooks.py)",
                       type="gotw", subtype="eval", location=docname)
    source[0] = json.dumps(notebook, ensure_ascii=False)


def setup(app):
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
