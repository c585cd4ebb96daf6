"""Every chapter's solutions open and close: the students' copy (tools/student_copy.py) can drop them.

A solution left without its ``{solution-end}`` nests the next exercise inside it on the website and
stops the students' copy of every chapter; this catches it without building the site.
"""

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import student_copy  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("0*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_solution_closes_and_the_students_copy_has_none(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert text.count("{solution-start}") == text.count("{solution-end}"), "a solution-start without its solution-end"
    copy = student_copy.student_notebook(nb)
    assert not any("{solution-start}" in c.source for c in copy.cells)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_solution_code_cell_is_tagged_and_starts_folded(path):
    """A solution's code is dropped from the students' copy (tag) and starts folded in JupyterLab (metadata)."""
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and (cell.source.startswith("# Solution code") or "solution" in cell.metadata.get("tags", [])):
            folded = cell.metadata.get("jupyter", {})
            assert "solution" in cell.metadata.get("tags", []), f"cell {index}: solution code without the solution tag"
            assert folded.get("source_hidden") and folded.get("outputs_hidden"), f"cell {index}: solution code not folded"
