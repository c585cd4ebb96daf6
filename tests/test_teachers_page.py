"""chapters/teachers.md is generated from the chapters (tools/teachers.py) and is up to date."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import teachers  # noqa: E402


def test_teachers_page_is_generated_from_the_chapters():
    expected = teachers.render(teachers.TEMPLATE.read_text(encoding="utf-8"))
    assert teachers.TARGET.read_text(encoding="utf-8") == expected, "run: python tools/teachers.py"


def test_every_exercise_is_listed_with_its_checks():
    page = teachers.TARGET.read_text(encoding="utf-8")
    for path in teachers.chapters():
        for ex in teachers.exercises(path):
            assert f"{{ref}}`{ex['label']}`" in page, f"{path.name}: {ex['label']} missing"
            for qid in ex["checks"]:
                assert f"`{qid}`" in page


def test_placeholders_split_a_chapter_and_reject_unknown_labels(tmp_path):
    import pytest

    template = "{{exercises 02_ring_allreduce ch02-ex-bytes}} | {{exercises 02_ring_allreduce rest}}"
    first, rest = teachers.render(template).split(" | ")
    assert first.count("{ref}") == 1 and "ch02-ex-bytes" in first and "ch02-ex-bytes" not in rest
    with pytest.raises(ValueError, match="does not have"):
        teachers.render("{{exercises 02_ring_allreduce no-such-exercise}}")


def test_graded_assignments_are_five_numbered_steps_whose_options_the_commands_have():
    import re
    import subprocess

    page = teachers.TARGET.read_text(encoding="utf-8")
    section = page.split("## Graded assignments", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^(\d)\. \*\*(\w[\w ]*)\.\*\*", section, re.M)
    assert steps == [("1", "Generate"), ("2", "Hand out"), ("3", "Collect"), ("4", "Grade"), ("5", "Grade by hand")]
    helped = "".join(subprocess.run([sys.executable, str(ROOT / "tools" / tool), "--help"], capture_output=True,
                                    text=True, check=True).stdout for tool in ("assignments.py", "free_responses.py"))
    for option in set(re.findall(r"(--[a-z][a-z-]+)", section)):
        assert option in helped, option
    assert "tools/free_responses.py --total" in section and "otter's score plus that sum" in section
    assert "PUBLIC_POINTS" not in section and "note 000" not in section


def test_an_exercise_fenced_with_four_colons_is_one_exercise(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("::::{exercise}\n:label: ex-four\n\nWhy?\n::::")]
    path = tmp_path / "99_x.ipynb"
    nbformat.write(nb, path)
    assert [e["label"] for e in teachers.exercises(path)] == ["ex-four"]


def test_the_page_says_what_the_tools_do():
    """Computed values are filled in, the exercises without a self-check are named, the hand-out path is whole."""
    page = teachers.TARGET.read_text(encoding="utf-8")
    table = page.split("## Every exercise", 1)[1].split("\n## ", 1)[0]
    assert "…" not in table and "NVIDIA quotes 600 GB/s" in table
    assert "Every exercise names a self-check" not in page
    unchecked = [ex["label"] for p in teachers.chapters() for ex in teachers.exercises(p) if not ex["checks"]]
    assert unchecked and f"The {len(unchecked)} that do not" in page
    assert all(f"{{ref}}`{label}`" in page.split("The " + str(len(unchecked)) + " that do not", 1)[1].split(
        "the learner runs", 1)[0] for label in unchecked)
    assert "only on the exercise's numbers" not in page
    assert "Zip the folder `_build/assignments/<chapter>/dist/student/`" in page


def test_each_assignment_says_how_many_of_its_points_are_graded_automatically_and_how_many_by_hand():
    """Every chapter's total on the page, and its split, are those of the questions its generated notebook collects
    (numbers, free responses and code alike)."""
    import re

    sys.path.insert(0, str(ROOT / "tools"))
    import assignments

    page = teachers.TARGET.read_text(encoding="utf-8")
    headings = re.findall(r"^### Assignment \{doc\}`(\w+)` \((\d+) points: (.*)\)$", page, re.M)
    with_exercises = [p.stem for p in teachers.chapters() if teachers.exercises(p)]
    assert [stem for stem, _, _ in headings] == with_exercises
    for stem, total, split in headings:
        nb = assignments.master_notebook(ROOT / "chapters" / f"{stem}.ipynb")
        questions = [(int(re.search(r"^points: (\d+)$", c.source, re.M).group(1)), "manual: true" in c.source)
                     for c in nb.cells if c.cell_type == "markdown" and "# BEGIN QUESTION" in c.source]
        automatic = sum(points for points, manual in questions if not manual)
        by_hand = sum(points for points, manual in questions if manual)
        assert int(total) == automatic + by_hand, (stem, total, automatic, by_hand)
        if automatic and by_hand:
            assert split == f"{automatic} graded automatically, {by_hand} by hand", stem
        section = page.split(f"### Assignment {{doc}}`{stem}`", 1)[1].split("\n### ", 1)[0]
        rows = re.findall(r"^\| `\w+` [^|]*\| (\d+) \|", section, re.M)
        assert sum(map(int, rows)) == int(total) and len(rows) == len(questions), stem


def test_the_page_counts_chapter_8s_ring_collected_as_code():
    page = teachers.TARGET.read_text(encoding="utf-8")
    section = page.split("### Assignment {doc}`08_mpi_lab`", 1)[1].split("\n### ", 1)[0]
    assert "`ring_allreduce_code` ({ref}`ex-lab-ring`, code)" in section


def test_help_prints_the_usage_and_writes_nothing():
    import subprocess

    before = teachers.TARGET.stat().st_mtime_ns
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "teachers.py"), "--help"], capture_output=True,
                          text=True)
    assert done.returncode == 0 and "--check" in done.stdout and "wrote" not in done.stdout
    assert teachers.TARGET.stat().st_mtime_ns == before
