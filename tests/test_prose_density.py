"""One idea a paragraph: no prose paragraph shows more than five computed numbers (tools/prose_density.py)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import prose_density  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("0*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_paragraph_shows_more_than_five_computed_numbers(path):
    found = prose_density.dense(path)
    assert not found, "\n".join(f"cell {i}: {n} values: {s}" for i, n, s in found)


def test_the_count_sees_a_dense_paragraph_and_skips_tables_and_captions():
    value = '{eval}`prose_views.text("k")`'
    dense = " ".join([value] * 6)
    table = "| a | b |\n|---|---|\n| " + " | ".join([value] * 6) + " |"
    caption = "*Figure 1: " + dense + ".*"
    assert len(prose_density.paragraphs(f"{dense}\n\n{table}\n\n{caption}")) == 1
    counts = [prose_density.count(p, {}) for p in prose_density.paragraphs(f"{dense}\n\n{table}\n\n{caption}")]
    assert counts == [6]
    claim = {"status": "ok", "data": {"text/markdown": "0.55 ± 0.01 against 0.56 ± 0.01 over 5 seeds, 3 rates"}}
    assert prose_density.count(value, {'prose_views.text("k")': claim}) == 6
    assert prose_density.paragraphs(f"{value} and {value}.") == [f"{value} and {value}."]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_table_entry_is_a_sentence_of_results(path):
    found = prose_density.crowded_cells(path)
    assert not found, "\n".join(f"cell {i}: a table entry with {n} values: {s}" for i, n, s in found)
