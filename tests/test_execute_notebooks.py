"""tools/execute_notebooks.py: inline values are stored where their cell stands, and never quoted too early."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import execute_notebooks  # noqa: E402


def _notebook(tmp_path, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    return path


def test_values_are_stored_in_the_markdown_cell(tmp_path):
    path = _notebook(tmp_path, [nbformat.v4.new_code_cell("x = 6 * 7"), nbformat.v4.new_markdown_cell("x is {eval}`x`.")])
    execute_notebooks.execute(path)
    stored = nbformat.read(path, as_version=4).cells[1].metadata["user_expressions"]
    assert stored == [{"expression": "x", "result": {"status": "ok", "data": {"text/plain": "42"}, "metadata": {}}}]


def test_a_value_quoted_before_its_code_stops_the_run(tmp_path):
    path = _notebook(tmp_path, [nbformat.v4.new_markdown_cell("x is {eval}`x`."), nbformat.v4.new_code_cell("x = 1")])
    with pytest.raises(CellExecutionError, match="markdown cell 0 quotes x"):
        execute_notebooks.execute(path)
