"""The students' copy (tools/student_copy.py, `make student`) has no solution left, and nothing else lost."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from student_copy import strip_markdown, student_notebook, write_student_copy  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
SOLUTION_TEXT = re.compile(r"\{solution(-start|-end)?\}")
EXERCISE = re.compile(r"^\s*(`{3,}|:{3,})\{exercise(-start)?\}", re.M)

SECRET = "THE-ANSWER-42"


def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    for kind, source, *tags in cells:
        make = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        cell = make(source)
        if tags:
            cell.metadata["tags"] = list(tags)
        nb.cells.append(cell)
    return nb


def _text(nb) -> str:
    return "\n".join(c.source for c in nb.cells)


SYNTHETIC = _nb(
    ("code", "from commlib.check import check", "remove-input"),
    ("md", ":::{exercise}\n:label: ex-a\nHow many bytes in 1 Gb?\n:::"),
    ("md", f"```{{solution-start}} ex-a\n:class: dropdown\n```\n{SECRET} bytes: divide by 8.\n```{{solution-end}}\n```"),
    ("code", f"check('ch00.gbe_bytes', 125e6)  # {SECRET}", "solution"),
    ("md", f"Text kept.\n\n```{{solution-start}} ex-b\n:class: dropdown\n```\nStarts here {SECRET}"),
    ("code", f"x = '{SECRET}'  # between start and end, untagged"),
    ("md", f"still {SECRET}\n```{{solution-end}}\n```\nAfter the end: kept."),
    ("md", f"::::{{solution}} ex-c\n:class: dropdown\n:::{{note}}\n{SECRET}\n:::\n::::\nTail kept."),
    ("md", f"````{{solution}} ex-d\n```python\nprint('{SECRET}')\n```\n````"),
    ("md", f":::{{solution-start}} ex-e\n:::\n{SECRET}\n:::{{solution-end}}\n:::"),
    ("code", "y = check('ch00.gbe_bytes', None)  # the learner's try: kept"),
)


def test_synthetic_notebook_loses_every_solution_and_keeps_the_rest():
    student = student_notebook(SYNTHETIC)
    text = _text(student)
    assert SECRET not in text
    assert not SOLUTION_TEXT.search(text)
    for kept in ("How many bytes in 1 Gb?", "Text kept.", "After the end: kept.", "Tail kept.",
                 "from commlib.check import check", "the learner's try: kept"):
        assert kept in text, kept
    # Cells: 11 in; the all-solution cells (3, 4, 6, 9, 10) go; cells 5, 7 and 8 keep their non-solution text.
    assert len(student.cells) == 6
    assert student.cells[0].metadata["tags"] == ["remove-input"]
    assert SYNTHETIC.cells[2].source.startswith("```{solution-start}"), "the input notebook is left untouched"


def test_markdown_forms_one_by_one():
    assert strip_markdown("A\n:::{solution} x\nB\n:::\nC")[0] == "A\nC"
    assert strip_markdown("A\n```{solution} x\n:class: dropdown\nB\n```\nC")[0] == "A\nC"
    assert strip_markdown("A\n```{solution-start} x\n```\nB") == ("A", True)
    assert strip_markdown("B\n```{solution-end}\n```\nC", in_solution=True) == ("C", False)
    assert strip_markdown("```python\nprint(1)\n```")[0] == "```python\nprint(1)\n```"


@pytest.mark.parametrize("source", [
    "```{solution-end}\n```",                       # end without start
    "```{solution-start} a\n```\nx\n```{solution-start} b\n```",  # nested start
    ":::{solution} a\nnever closed",                 # unclosed block
])
def test_unbalanced_solutions_are_refused(source):
    with pytest.raises(ValueError):
        strip_markdown(source)


def test_solution_start_without_end_is_refused():
    with pytest.raises(ValueError, match="solution-end"):
        student_notebook(_nb(("md", "```{solution-start} a\n```\nanswer")))


def test_command_line_writes_the_copy(tmp_path):
    src = tmp_path / "chapters"
    src.mkdir()
    nbformat.write(SYNTHETIC, src / "09_demo.ipynb")
    out = tmp_path / "student"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "student_copy.py"), str(src), str(out)],
                          capture_output=True, text=True, check=True)
    assert "1 notebooks" in done.stdout
    assert SECRET not in (out / "09_demo.ipynb").read_text()


@pytest.mark.skipif(not CHAPTERS, reason="no chapter notebooks yet")
def test_chapters_student_copy_has_no_solution(tmp_path):
    written = write_student_copy(ROOT / "chapters", tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in CHAPTERS)
    for path in CHAPTERS:
        original = nbformat.read(path, as_version=4)
        student = nbformat.read(tmp_path / path.name, as_version=4)
        text = _text(student)
        assert not SOLUTION_TEXT.search(text), f"{path.name}: a solution directive is left"
        assert not any("solution" in c.metadata.get("tags", []) for c in student.cells), path.name
        # Exercises stay: the same number of exercise directives as the chapter.
        assert len(EXERCISE.findall(text)) == len(EXERCISE.findall(_text(original))), path.name
        # Kept code cells are the chapter's own cells, unchanged and in order.
        originals = iter(c.source for c in original.cells if c.cell_type == "code")
        for cell in (c for c in student.cells if c.cell_type == "code"):
            assert any(cell.source == o for o in originals), f"{path.name}: code cell changed or reordered"


@pytest.mark.skipif(not CHAPTERS, reason="no chapter notebooks yet")
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_has_a_solution(path):
    text = _text(nbformat.read(path, as_version=4))
    labels = re.findall(r"\{exercise(?:-start)?\}[^\n]*\n(?:[ \t]*:[\w-]+:[^\n]*\n)*?[ \t]*:label:\s*(\S+)", text)
    solved = set(re.findall(r"\{solution(?:-start)?\}\s+(\S+)", text))
    assert set(labels) <= solved, f"{path.name}: exercises without a solution: {sorted(set(labels) - solved)}"
