"""The teachers' page lists every exercise of every chapter with its self-check, and every check exists."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
TEACHERS = (ROOT / "chapters" / "teachers.md").read_text()
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
EXERCISE = re.compile(r"(?<![`:])(?=(?:`{3,}|:{3,})\{exercise\})")


def _exercises(path: Path) -> list[tuple[str, list[str]]]:
    """(label, self-check ids) of each exercise of a chapter, in order."""
    text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
    found = []
    for part in EXERCISE.split(text)[1:]:
        label = re.search(r":label:\s*(\S+)", part)
        checks = re.findall(r"""check\(\s*['"](ch\d\d\.\w+)""", part)
        found.append((label.group(1) if label else "", sorted(set(checks))))
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_is_on_the_teachers_page_with_its_check(path):
    for label, checks in _exercises(path):
        assert label, f"{path.name}: an exercise has no :label:"
        assert f"{{ref}}`{label}`" in TEACHERS, f"teachers.md does not list {label} of {path.name}"
        for qid in checks:
            row = next(line for line in TEACHERS.splitlines() if f"`{label}`" in line)
            named = re.search(rf"\{{ref\}}`{re.escape(label)}` \(([^)]*)\)", row)   # (`a`) or (`a`, `b`)
            assert named and f"`{qid}`" in named.group(1), f"teachers.md: {label} should name its check {qid}"


def test_every_check_named_on_the_teachers_page_exists():
    from commlib.check import expected

    named = set(re.findall(r"\(`(ch\d\d\.\w+)`\)", TEACHERS))
    assert named, "the teachers' page names no self-check"
    for qid in sorted(named):
        expected(qid)  # raises ValueError for an unknown question
