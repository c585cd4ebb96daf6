"""Graded assignments (tools/assignments.py): otter-grader itself grades sample submissions.

A chapter's assignment is built with ``otter assign`` and sample submissions
are graded with ``otter run`` (otter's grading without containers): a right
one gets full marks; a catalogued wrong answer loses exactly its question's
points and gets its hint; a wrong answer on the student's own numbers only
loses exactly the hidden test's points; a neighbour's numbers do not pass;
a syntax error or a missing answer is graded, not crashed. Every chapter's
master notebook is checked without otter (fast); two chapters go through otter.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from commlib.check import _load, check, draw, expected, givens_of

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import assignments  # noqa: E402
import teachers  # noqa: E402

GRADED = ("00_introduction", "02_ring_allreduce")
STUDENT = "s2024-0117"
ANSWER_CELL = re.compile(r"(\w+) = \.\.\.")
#: The slips every question invites (commlib.check's generic hints), as factors on the right answer.
SLIPS = {"bits for bytes": 8.0, "one direction for both": 2.0, "unit slip": 1000.0}


def _chapter(stem: str) -> Path:
    return ROOT / "chapters" / f"{stem}.ipynb"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("assignments")
    return {stem: assignments.write_assignment(_chapter(stem), out, run_tests=False) for stem in GRADED}


def _qid(stem: str, name: str) -> str:
    return f"ch{stem[:2]}.{name.removesuffix('_yours')}"


def _submission(dist: Path, stem: str, tmp: Path, answer, student=STUDENT) -> Path:
    """The student notebook with each answer cell filled by ``answer(qid, own)`` (source text, or None to leave it)."""
    nb = nbformat.read(dist / "student" / f"{stem}.ipynb", as_version=4)
    for cell in nb.cells:
        m = ANSWER_CELL.fullmatch(cell.source.strip()) if cell.cell_type == "code" else None
        if not m:
            continue
        name = m.group(1)
        if name == "student_id":
            cell.source = "student_id = ..." if student is None else f"student_id = {student!r}"
            continue
        text = answer(_qid(stem, name), name.endswith("_yours"))
        if text is not None:
            cell.source = f"{name} = {text}"
    path = tmp / f"{stem}.ipynb"
    nbformat.write(nb, path)
    return path


def _grade(dist: Path, submission: Path) -> dict[str, dict]:
    """``otter run`` on one submission: each question's score, maximum and output."""
    out = submission.parent / "results"
    out.mkdir(exist_ok=True)
    done = subprocess.run([str(Path(sys.executable).with_name("otter")), "run", "--no-logo", "-a",
                           str(assignments.autograder_zip(dist)), "-o", str(out), str(submission)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    tests = json.loads((out / "results.json").read_text())["tests"]
    return {t["name"]: t for t in tests if t["name"] != "Public Tests"}


def _right(qid: str, own: bool, student=STUDENT) -> str:
    return repr(expected(qid, **(draw(qid, student) if own else {})))


def _questions(stem: str) -> list[str]:
    return [qid for ex in assignments.chapter_exercises(_chapter(stem)) for qid in ex["checks"]]


# -- every chapter, without otter ------------------------------------------------------------------------

def test_every_chapter_with_exercises_gets_a_master_notebook_with_one_question_per_self_check():
    chapters = [p for p in teachers.chapters() if any(ex["checks"] for ex in teachers.exercises(p))]
    assert len(chapters) >= 8
    for path in chapters:
        nb = assignments.master_notebook(path)
        assert nb is not None, path.name
        text = "\n".join(c.source for c in nb.cells)
        assert not [c for c in nb.cells if c.cell_type == "raw"], "markers must not need raw cells (Colab, JupyterLite)"
        assert text.count("```otter\n# ASSIGNMENT CONFIG") == 1
        qids = [qid for ex in teachers.exercises(path) for qid in ex["checks"]]
        for qid in qids:
            name = assignments.question_name(qid)
            assert f"name: {name}\npoints: {assignments.question_points(qid)}" in text, qid
            assert f'check("{qid}", {name})' in text, qid
            assert (f'draw("{qid}", student_id)' in text) == bool(givens_of(qid)), qid
        assert "{eval}" not in text and "{exercise}" not in text, path.name


def test_every_chapter_has_per_student_numbers():
    for path in teachers.chapters():
        qids = [qid for ex in teachers.exercises(path) for qid in ex["checks"]]
        if qids:
            assert any(givens_of(qid) for qid in qids), f"{path.name}: no question draws numbers per student"


def test_draws_are_per_student_reproducible_and_never_the_books():
    for qid in (q for p in teachers.chapters() for ex in teachers.exercises(p) for q in ex["checks"]):
        if not givens_of(qid):
            assert draw(qid, STUDENT) == {}
            continue
        mine = draw(qid, STUDENT)
        assert mine == draw(qid, STUDENT) and mine.keys() == {g.name for g in givens_of(qid)}
        assert expected(qid, **mine) != expected(qid), qid
        others = {tuple(sorted(draw(qid, f"s{i}").items())) for i in range(40)}
        assert len(others) > 3, f"{qid}: forty students share too few numbers"
    with pytest.raises(ValueError, match="student id"):
        draw("ch02.ring_bytes_gb", ...)


# -- otter itself -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("stem", GRADED)
def test_student_notebook_has_no_answer_and_no_hidden_test(built, stem):
    dist = built[stem]
    nb = nbformat.read(dist / "student" / f"{stem}.ipynb", as_version=4)
    tests = nb.metadata["otter"]["tests"]
    assert set(tests) == {assignments.question_name(q) for q in _questions(stem)}
    for name, source in tests.items():
        assert "hidden=True" not in source and "draw(" not in source, name
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "expected(" not in code and "sample-student" not in code
    for qid in _questions(stem):
        assert f"{assignments.question_name(qid)} = ..." in code


@pytest.mark.parametrize("stem", GRADED)
def test_a_right_submission_gets_full_marks(built, stem, tmp_path):
    graded = _grade(built[stem], _submission(built[stem], stem, tmp_path, _right))
    for qid in _questions(stem):
        result = graded[assignments.question_name(qid)]
        assert result["score"] == result["max_score"] == assignments.question_points(qid), result["output"]


@pytest.mark.parametrize("stem", GRADED)
def test_each_catalogued_slip_loses_exactly_its_points_and_gets_its_hint(built, stem, tmp_path):
    """Question i makes slip i mod 3; one in three makes it on the student's own numbers only,
    one answers with a neighbour's numbers; the others are right."""
    qids = _questions(stem)
    own = [q for q in qids if givens_of(q)]
    numeric = [q for q in qids if isinstance(expected(q), (int, float))]
    slipped = {q: list(SLIPS.items())[i % 3] for i, q in enumerate(numeric) if i % 2 == 0}
    only_own = [q for q in own if q not in slipped][:1]
    neighbour = next((f"s{i}" for i in range(100) if own and draw(own[-1], f"s{i}") != draw(own[-1], STUDENT)), None)
    copied = [q for q in own if q not in slipped and q not in only_own][-1:]

    def answer(qid, is_own):
        right = expected(qid, **(draw(qid, STUDENT) if is_own else {}))
        if qid in slipped or (qid in only_own and is_own):
            return repr(float(right) * slipped.get(qid, ("", 8.0))[1])
        if qid in copied and is_own:
            return _right(qid, True, neighbour)
        return repr(right)

    graded = _grade(built[stem], _submission(built[stem], stem, tmp_path, answer))
    assert slipped and (only_own or not own)
    for qid in qids:
        result = graded[assignments.question_name(qid)]
        points = assignments.question_points(qid)
        if qid in slipped:
            factor = slipped[qid][1]
            hint = check(qid, float(expected(qid)) * factor).message
            assert hint != "Not yet. " + _load(qid).hint, f"{qid}: x{factor} is not a catalogued slip"
            assert result["score"] == 0 and result["max_score"] == points, result["output"]
            assert hint in result["output"], result["output"]
        elif qid in only_own or qid in copied:
            assert result["score"] == points - assignments.HIDDEN_POINTS, result["output"]
            if qid in only_own:
                mine = draw(qid, STUDENT)
                assert check(qid, float(expected(qid, **mine)) * 8.0, **mine).message in result["output"]
        else:
            assert result["score"] == points, result["output"]


def test_a_syntax_error_a_missing_answer_and_no_student_id_are_graded_not_crashed(built, tmp_path):
    """One answer is a syntax error, one is left as it came, and the student id is missing: each loses
    its own points with a message, and everything else is graded."""
    stem = "02_ring_allreduce"
    broken, missing = _questions(stem)[:2]

    def answer(qid, own):
        if qid == broken:
            return "1.75 +"          # a syntax error in the cell
        if qid == missing:
            return None              # left as `...`
        return "1.0" if own else _right(qid, own)

    graded = _grade(built[stem], _submission(built[stem], stem, tmp_path, answer, student=None))
    for qid in _questions(stem):
        result = graded[assignments.question_name(qid)]
        if qid in (broken, missing):
            assert result["score"] == 0 and "No answer yet" in result["output"], result["output"]
        else:
            assert result["score"] == assignments.PUBLIC_POINTS, result["output"]
        if givens_of(qid):
            assert "student id" in result["output"], result["output"]


def test_a_pin_holds_students_and_autograder_to_one_version(tmp_path):
    dist = assignments.write_assignment(_chapter("02_ring_allreduce"), tmp_path, run_tests=False, pin="v9.9")
    spec = assignments.install_spec(_chapter("02_ring_allreduce"))
    student = nbformat.read(dist / "student" / "02_ring_allreduce.ipynb", as_version=4)
    assert any(f"{spec}@v9.9" in c.source for c in student.cells if c.cell_type == "code")
    assert (tmp_path / "02_ring_allreduce" / "master" / "requirements.txt").read_text().strip() == f"{spec}@v9.9"
    with pytest.raises(ValueError, match="pin"):
        assignments.pinned(f"{spec}@v1", "v2")
