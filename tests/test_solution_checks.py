"""Every stored solution answers its own check: a solution cell that ends in ``check(...)`` shows "Right".

A question's expected answer can change (a hardware preset, a drawn value) while the notebook's stored
outputs lag behind; the website, a downloaded notebook and a Colab launch would then show the book
marking its own answer wrong. nbval catches this too, but only when the notebooks are executed; this
reads the stored files alone, so it fails fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CHAPTERS = sorted((Path(__file__).resolve().parent.parent / "chapters").glob("*.ipynb"))


def _solution_checks(path: Path):
    """(cell index, stored text) for each solution cell whose last statement is a check(...) call."""
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "code" or "solution" not in cell["metadata"].get("tags", []):
            continue
        lines = [ln for ln in "".join(cell["source"]).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines or not lines[-1].lstrip().startswith("check("):
            continue
        results = [o for o in cell.get("outputs", []) if o.get("output_type") == "execute_result"]
        text = "".join(results[-1]["data"].get("text/plain", "")) if results else ""
        yield i, text


def test_some_solutions_are_checked():
    assert sum(1 for p in CHAPTERS for _ in _solution_checks(p)) >= 20


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_stored_solution_checks_say_right(path):
    wrong = [(i, text[:120]) for i, text in _solution_checks(path) if not text.startswith("Right")]
    assert not wrong, f"{path.name}: solution cells whose stored check is not 'Right' (re-store the notebook): {wrong}"
