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
import math
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from commlib.check import SLIP_UNITS, _load, check, draw, expected, givens_of, means_of

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
            assert f'check("{qid}", {name}, answer_name="{name}")' in text, qid
            assert (f'draw("{qid}", student_id)' in text) == bool(givens_of(qid)), qid
        assert "{eval}" not in text and "{exercise}" not in text, path.name


def test_every_exercise_is_in_its_assignment_and_reasoning_is_collected_as_free_response():
    """An exercise without a self-check is a free-response question graded by hand, with the book's solution
    as the rubric; one that asks to derive or explain also collects the reasoning beside its number."""
    for path in teachers.chapters():
        found = assignments.chapter_exercises(path)
        if not found:
            continue
        nb = assignments.master_notebook(path)
        text = "\n".join(c.source for c in nb.cells)
        assert sum(c.source.startswith("## Exercise ") for c in nb.cells) == len(found), path.name
        for ex in found:
            header = f"name: {assignments.manual_name(ex['label'])}\nmanual: true\npoints: {assignments.MANUAL_POINTS}"
            assert (header in text) == assignments.asks_reasoning(ex), ex["label"]
            if not ex["checks"]:
                assert header in text, ex["label"]
    chapter2 = {ex["label"]: ex for ex in assignments.chapter_exercises(_chapter("02_ring_allreduce"))}
    for label in ("ch02-ex-derive", "ch02-ex-trace", "ch02-ex-slow-link", "ch02-ex-why-trees"):
        assert not chapter2[label]["checks"] and chapter2[label]["solution"], label
    text = "\n".join(c.source for c in assignments.master_notebook(_chapter("02_ring_allreduce")).cells)
    assert "name: ch02_ex_derive\nmanual: true" in text
    assert chapter2["ch02-ex-trace"]["solution"] in text             # the rubric, in the master
    assert "step 4: all-gather" in chapter2["ch02-ex-trace"]["solution"]   # with the run the solution shows
    tree = next(ex for ex in assignments.chapter_exercises(_chapter("01_reduce_and_primitives"))
                if ex["label"] == "ch01-ex-tree")
    assert tree["checks"] == ["ch01.tree_steps"] and assignments.asks_reasoning(tree)
    text = "\n".join(c.source for c in assignments.master_notebook(_chapter("01_reduce_and_primitives")).cells)
    assert "name: tree_steps\npoints:" in text and "name: ch01_ex_tree\nmanual: true" in text
    assert "Write your reasoning" in text


def test_manual_points_come_from_the_flag():
    nb = assignments.master_notebook(_chapter("02_ring_allreduce"), manual_points=5)
    assert "name: ch02_ex_derive\nmanual: true\npoints: 5" in "\n".join(c.source for c in nb.cells)


#: What an exercise's text may refer to, and the code a cell of its section must hold to give it.
REFERENCES = [
    (r"\bcalculator\b|\bthe chooser\b", r"_calculator\(", "a calculator"),
    (r"\bin a run\b|\bcount them\b", r"\.allreduce\(|\.measure\(", "a run"),
    (r"\b(table|figure) (above|below)\b|\b(above|below) shows\b|\bthe (?:[\w-]+ )?(?:table|figure)s?\b",
     r"_table\(|_figure\(", "a table or figure"),
    (r"\bchecker\.", r"def ring_allreduce\(", "the function to check"),
    (r"\bof this chapter\b|\bthe chapter's (example|server|hosts|cluster)\b|\bthe scaling example\b",
     r"\S", "what the chapter describes"),
]
#: What no graded notebook may say: references it cannot give (the source notes by number, a bare
#: "the chapter's equation" where the equation itself belongs).
FORBIDDEN = re.compile(r"note 000|\bthe chapter's (equation|figure)\b")


#: Free-response exercises whose text refers to something of the chapter that their graded notebook does not
#: give yet, with why (each is graded by hand, so the grader sees the gap; the list may only shrink). An exercise
#: that reads the student's own run of a lab (``commlib.check.exercise_needs_run``) says to run the lab first instead.
MEANS_PENDING: dict[str, str] = {}


def _sections(nb) -> list[tuple[str, list[str]]]:
    """Each exercise's Markdown text as the student sees it (the grader's rubric left out), and the code
    cells that come with it (before its first question)."""
    sections, text, code, asking, rubric, prompt = [], None, [], False, False, False
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("## Exercise"):
            if text is not None:
                sections.append((text, code))
            text, code, asking = "", [], False
        elif text is not None and cell.cell_type == "markdown":
            asking = asking or "# BEGIN QUESTION" in cell.source
            if "# BEGIN PROMPT" in cell.source or "# END PROMPT" in cell.source:
                prompt = "# BEGIN PROMPT" in cell.source
                continue
            if "# BEGIN SOLUTION" in cell.source or "# END SOLUTION" in cell.source:
                rubric = "# BEGIN SOLUTION" in cell.source
                continue
            if not rubric:
                text += cell.source + "\n"
        elif text is not None and (not asking or prompt):   # a code answer's cell: what the student fills
            code.append(cell.source)
    if text is not None:
        sections.append((text, code))
    return sections


def test_every_graded_notebook_gives_what_its_exercises_refer_to():
    """A student has only the notebook: a calculator, a run, a table the text names must be a cell there."""
    missing = []
    for path in teachers.chapters():
        nb = assignments.master_notebook(path)
        if nb is None:
            continue
        sections = _sections(nb)
        assert sections, path.name
        labels = [ex["label"] for ex in assignments.chapter_exercises(path)]
        for number, (text, code) in enumerate(sections, start=1):
            for refers, gives, what in REFERENCES:
                if labels[number - 1] in MEANS_PENDING or assignments.RUN_FIRST in text:
                    continue
                shown = what == "a table or figure" and f"{assignments.SHOWN} (as the book shows it):" in text
                if re.search(refers, text, re.I) and not any(re.search(gives, c) for c in code) and not shown:
                    missing.append(f"{path.stem} exercise {number}: refers to {what} the notebook lacks")
            missing += [f"{path.stem} exercise {number}: {m.group(0)!r}" for m in FORBIDDEN.finditer(text)]
        for qid in (q for ex in teachers.exercises(path) for q in ex["checks"]):
            missing += [f"{qid} hint: {m.group(0)!r}" for text in assignments.hints(qid) for m in FORBIDDEN.finditer(text)]
    assert not missing, missing


def test_a_shown_sentence_of_the_chapter_is_copied_as_its_paragraph():
    """Chapter 7's tree exercise reads the chooser's tables and the sentence that converts a tree's bus bandwidth
    ("a tree's is halved"), which no table says: the notebook copies those paragraphs once, no table twice."""
    nb = assignments.master_notebook(_chapter("07_todays_collectives"))
    label = "ex-today-tree"
    text = next(t for (t, _), ex in zip(_sections(nb), assignments.chapter_exercises(_chapter("07_todays_collectives")))
                if ex["label"] == label)
    shown = text.split(f"{assignments.SHOWN} (as the book shows it):", 1)[1].split("**Why trees", 1)[0]
    assert "converts bus bandwidth to algorithm bandwidth" in shown and "is halved" in " ".join(shown.split())
    # the main text's factor table and the fold's full one share a header; no row of either is copied twice
    rows = [line for line in shown.splitlines() if line.startswith("| ") and not line.startswith("| algorithm |")
            and not line.startswith("| ---")]
    assert rows and len(rows) == len(set(rows)) and shown.count("| machine |") == 1
    assert shown.count("| algorithm | protocol |") == 2   # the factor table and, in the fold, its full rows


def test_each_exercise_means_runs_after_its_chapters_setup():
    """The code a notebook gives for an exercise runs, with nothing but the chapter's setup cell before it."""
    import contextlib
    import io

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        for path in teachers.chapters():
            qids = [q for ex in teachers.exercises(path) for q in ex["checks"] if _load(q).means]
            own = [m for ex in teachers.exercises(path) for m in means_of(ex["label"], f"ch{path.stem[:2]}")]
            if not qids and not own:
                continue
            setup = assignments._setup_cell(nbformat.read(path, as_version=4), path).source
            shell.reset()
            with contextlib.redirect_stdout(io.StringIO()):
                assert shell.run_cell(setup.replace("%matplotlib inline", "")).success, path.name
                for code in own:
                    assert code.startswith("# "), code
                    result = shell.run_cell(code)
                    assert result.success, (code, result.error_in_exec or result.error_before_exec)
                for qid in qids:
                    for code in _load(qid).means:
                        assert code.startswith("# "), qid
                        result = shell.run_cell(code)
                        assert result.success, (qid, result.error_in_exec or result.error_before_exec)
    finally:
        InteractiveShell.clear_instance()


def test_exercise_text_keeps_its_spacing_and_its_equations():
    texts = {ex["label"]: ex["text"] for ex in assignments.chapter_exercises(_chapter("01_reduce_and_primitives"))}
    assert "1, 2, ..., 8" in texts["ch01-ex-subtract"]
    texts = {ex["label"]: ex["text"] for ex in assignments.chapter_exercises(_chapter("03_parameter_servers"))}
    assert "the equation $" in texts["ex-ps-smallest-k"] and "k^{*}" in texts["ex-ps-smallest-k"]


def test_the_notebook_keeps_its_promises_about_units_tolerances_and_own_numbers():
    nb = assignments.master_notebook(_chapter("02_ring_allreduce"))
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "marked *Your own numbers*" in text
    assert text.count("*Your own numbers.*") == sum(1 for q in _questions("02_ring_allreduce") if givens_of(q))
    assert "your answer as a ratio, a plain number (2.5 for 2.5 ×)" in text
    assert " in x" not in text and "in times" not in text
    zero = assignments.master_notebook(_chapter("01_reduce_and_primitives"))
    zero_text = "\n".join(c.source for c in zero.cells if c.cell_type == "markdown")
    assert expected("ch01.subtract_tree") == 0
    assert "Answers are accepted exactly: a whole number." in zero_text     # an int answer is exact, 0 too
    assert "of 0" not in zero_text          # the tolerance does not give the answer away
    setup = next(c.source for c in nb.cells if c.cell_type == "code" and "watch_answers(get_ipython())" in c.source)
    assert "from commlib.check import draw, watch_answers, yours" in setup


def test_a_part_is_lettered_only_where_its_exercise_has_several():
    for stem in ("01_reduce_and_primitives", "02_ring_allreduce"):
        nb = assignments.master_notebook(_chapter(stem))
        for (text, _), ex in zip(_sections(nb), assignments.chapter_exercises(_chapter(stem))):
            parts = len(ex["checks"]) + assignments.asks_reasoning(ex)
            assert ("**(a) " in text) == (parts > 1), (ex["label"], parts)
            assert ("**(b) " in text) == (parts > 1), ex["label"]
    tree = next(text for text, _ in _sections(assignments.master_notebook(_chapter("01_reduce_and_primitives")))
                if "**(b) Free response" in text)
    assert "**(a) `ch01.tree_steps`" in tree       # its number, then its derivation


#: A collected answer's heading: its letters, then its self-check id or its free response's name.
_HEADING = re.compile(r"^\*\*(?:\((?P<letters>[a-h](?:, [a-h])*)\) )?(?:`(?P<qid>ch\d\d\.\w+)`|Free response `(?P<name>\w+)`)",
                      re.M)


def test_each_answer_carries_the_letter_of_the_part_of_its_exercise_that_it_answers():
    """Where an exercise letters its own parts ("(a) Derive ... (b) Compute ..."), each collected answer carries the
    letter of the part it answers: a number that of the solution's part ("(b) ..." opening a line) under which the
    book calls its self-check; the free response the parts no number answers. Elsewhere answers are lettered (a),
    (b), ... where there are several. Every chapter."""
    seen_lettered = 0
    for path in teachers.chapters():
        found = assignments.chapter_exercises(path)
        if not found:
            continue
        nb = assignments.master_notebook(path)
        for (text, _), ex in zip(_sections(nb), found, strict=True):
            heads = [(m.group("letters") or "", m.group("qid") or m.group("name")) for m in _HEADING.finditer(text)]
            code = assignments._loader().code_of(ex["label"], f"ch{path.stem[:2]}")
            assert len(heads) == len(ex["checks"]) + assignments.asks_reasoning(ex) + bool(code), ex["label"]
            parts = list(dict.fromkeys(re.findall(r"(?<![\w$])\(([a-h])\)\s", ex["text"])))
            if not parts:
                want = [chr(ord("a") + i) for i in range(len(heads))] if len(heads) > 1 else [""]
                assert [letters for letters, _ in heads] == want, ex["label"]
                continue
            seen_lettered += 1
            assert parts == list("abcdefgh"[:len(parts)]), (ex["label"], parts)
            for letters, key in heads:
                assert set(letters.split(", ")) <= set(parts) | {""}, (ex["label"], key, letters)
                if key in ex["checks"]:
                    at = ex["solution"].index(f'check("{key}"')
                    opened = re.findall(r"^\(([a-h])\) ", ex["solution"][:at], re.M)
                    assert opened and letters == opened[-1], (ex["label"], key, letters, opened)
            taken = {letter for letters, _ in heads for letter in letters.split(", ") if letter}
            assert taken == set(parts) or (len(heads) == 1 and not heads[0][0]), (ex["label"], taken, parts)
            assert [letters for letters, _ in heads] == sorted(letters for letters, _ in heads), ex["label"]
    assert seen_lettered >= 4
    chapter7 = {ex["label"]: text for (text, _), ex in zip(
        _sections(assignments.master_notebook(_chapter("07_todays_collectives"))),
        assignments.chapter_exercises(_chapter("07_todays_collectives")))}
    for label, qid in (("ex-today-compress-pays", "compress_budget_ms"), ("ex-today-topk-n", "topk_crossover_n"),
                       ("ex-today-tree", "tree_ring_mb"), ("ex-today-break-even", "break_even_tokens")):
        text = chapter7[label]
        free, number = f"**(a) Free response `{assignments.manual_name(label)}`", f"**(b) `ch07.{qid}`"
        assert free in text and number in text and text.index(free) < text.index(number), label


def test_an_exercise_that_letters_its_parts_must_say_in_its_solution_which_part_a_number_answers():
    ex = {"label": "ex-x", "text": "(a) Derive it. (b) Compute it.", "checks": ["ch02.ring_bytes_gb"],
          "solution": "Both: the number is 1.75."}
    with pytest.raises(ValueError, match="which part ch02.ring_bytes_gb answers"):
        assignments.answer_letters(ex)
    ex["solution"] = '(a) So.\n\n(b) As in (a), check("ch02.ring_bytes_gb", 1.75)'
    assert assignments.answer_letters(ex) == {"ch02.ring_bytes_gb": "b", "ex_x": "a"}
    ex["text"] = "Derive it, then compute it."     # no parts of its own: lettered in order
    assert assignments.answer_letters(ex) == {"ch02.ring_bytes_gb": "a", "ex_x": "b"}


def test_the_own_numbers_test_is_hidden_unless_asked_public():
    hidden = "\n".join(c.source for c in assignments.master_notebook(_chapter("02_ring_allreduce")).cells)
    public = "\n".join(c.source for c in assignments.master_notebook(_chapter("02_ring_allreduce"),
                                                                    public_own=True).cells)
    own = sum(1 for q in _questions("02_ring_allreduce") if givens_of(q))
    assert own and hidden.count("\nhidden: true") == own and "\nhidden: true" not in public
    assert public.count("def test_your_numbers(") == own and "tests that `grader.check` runs too" in public


def test_points_come_from_the_flags():
    nb = assignments.master_notebook(_chapter("02_ring_allreduce"), points=(2, 3))
    text = "\n".join(c.source for c in nb.cells)
    for qid in _questions("02_ring_allreduce"):
        want = 2 + (3 if givens_of(qid) else 0)
        assert f"name: {assignments.question_name(qid)}\npoints: {want}" in text
    assert "points: 2\nhidden: false" in text and "points: 3\nhidden: true" in text


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "assignments.py"), *args], capture_output=True,
                          text=True, timeout=120)


def test_the_command_line_refuses_unknown_chapters_and_bad_pins_and_warns_without_a_pin(tmp_path):
    done = _cli("--out", str(tmp_path), "--pin", "v1", "99_nowhere")
    assert done.returncode == 2 and "unknown chapter(s): 99_nowhere" in done.stderr
    assert "02_ring_allreduce" in done.stderr
    for bad in ("v1; rm -rf ~", "$(id)", "a..b", "-x", "v1 `id`", "main.lock"):
        done = _cli("--out", str(tmp_path), f"--pin={bad}", "--no-run-tests", "99_nowhere")
        assert done.returncode == 2 and "pin must be a git tag" in done.stderr, bad
    with pytest.raises(ValueError, match="pin must be"):
        assignments.pinned(assignments.install_spec(_chapter("02_ring_allreduce")), "v1|sh")
    helped = _cli("--help").stdout
    for option in ("--out", "--runs-on", "--pin", "--public-points", "--hidden-points", "--manual-points",
                   "--public-own-numbers", "--no-run-tests"):
        line = helped.split(option, 1)[1].split("\n  -", 1)[0]
        assert len(line.split()) > 4, f"{option} is not described: {line!r}"


def test_without_a_pin_the_command_warns_loudly(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(assignments, "write_assignment", lambda *a, **k: None)
    assert assignments.main(["--out", str(tmp_path), "00_introduction"]) == 0
    assert "WARNING: no --pin given" in capsys.readouterr().err
    assert assignments.main(["--out", str(tmp_path), "--pin", "v1.0", "00_introduction"]) == 0
    assert "WARNING" not in capsys.readouterr().err


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
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    solution = nbformat.read(dist / "autograder" / f"{stem}.ipynb", as_version=4)
    rubric = "\n".join(c.source for c in solution.cells if c.cell_type == "markdown")
    for ex in assignments.chapter_exercises(_chapter(stem)):
        if assignments.asks_reasoning(ex):          # free response: the rubric for the grader, not the student
            assert ex["solution"] and ex["solution"] in rubric, ex["label"]
            assert ex["solution"][:80] not in markdown, ex["label"]
    assert "For the grader" in rubric and "For the grader" not in markdown
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
    numeric = [q for q in qids if isinstance(expected(q), (int, float)) and _load(q).unit in SLIP_UNITS]
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
        if qid == broken:
            assert result["score"] == 0 and "your cell raised an error: SyntaxError" in result["output"], \
                result["output"]
        elif qid == missing:
            assert result["score"] == 0 and "No answer yet" in result["output"], result["output"]
        else:
            assert result["score"] == assignments.PUBLIC_POINTS, result["output"]
        if givens_of(qid):
            assert "student id" in result["output"], result["output"]


def test_a_pin_holds_students_and_autograder_to_one_version(tmp_path):
    dist = assignments.write_assignment(_chapter("02_ring_allreduce"), tmp_path, runs_on="colab", run_tests=False,
                                        pin="v9.9")
    spec = assignments.install_spec(_chapter("02_ring_allreduce"))
    student = nbformat.read(dist / "student" / "02_ring_allreduce.ipynb", as_version=4)
    assert any(f"{spec}@v9.9" in c.source for c in student.cells if c.cell_type == "code")
    # otter-grader: the students' Colab setup installs the version the autograder's environment has
    installs = [c.source for c in student.cells if c.cell_type == "code" and "pip install" in c.source
                and "otter-grader" in c.source]
    assert installs and all(f"otter-grader=={assignments.otter_version()}" in c for c in installs), installs
    import zipfile

    with zipfile.ZipFile(assignments.autograder_zip(dist)) as archive:
        environment = archive.read("environment.yml").decode()
    assert f"otter-grader[grading,plugins]=={assignments.otter_version()}" in environment
    assert (tmp_path / "02_ring_allreduce" / "master" / "requirements.txt").read_text().strip() == f"{spec}@v9.9"
    with pytest.raises(ValueError, match="pin"):
        assignments.pinned(f"{spec}@v1", "v2")


def test_a_pin_that_moves_is_resolved_to_the_commit_it_names_now(tmp_path):
    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path,
                              capture_output=True, text=True, check=True).stdout.strip()
    git("init", "-q", "-b", "main")
    (tmp_path / "f").write_text("x")
    git("add", "f")
    git("commit", "-qm", "one")
    git("tag", "v1")
    head = git("rev-parse", "--short=12", "HEAD")
    assert assignments.moving_pin("HEAD", tmp_path) == head
    assert assignments.moving_pin("main", tmp_path) == head
    assert assignments.moving_pin("v1", tmp_path) is None
    assert assignments.moving_pin(head, tmp_path) is None


# -- what a student is given, and grading by hand ----------------------------------------------------------

def _facts(markdown: str) -> dict[str, float]:
    """The numbers of the book's hardware tables a student notebook states: parameter counts by model name,
    peaks by GPU name, start-up latencies by link name."""
    found = {m.group(1): float(m.group(2).replace("_", "")) for m in
             re.finditer(r"^- (.+?) has .+? parameters \(`([\d_]+)` in Python\)", markdown, re.M)}
    found |= {m.group(1): float(m.group(2)) for m in
              re.finditer(r"^- The (.+?) computes at most .+? \(`([\d.e]+)` FLOP/s\)", markdown, re.M)}
    found |= {m.group(1): float(m.group(2)) * 1e-6 for m in
              re.finditer(r"^- (.+?): sold as .+? α = ([\d.]+) µs\.", markdown, re.M)}
    return found


def test_chapter_0s_student_notebook_states_the_counts_and_peak_and_answers_from_them_pass(built):
    """Exercises that need a model's size or a GPU's peak state them; answers worked from the stated numbers
    alone (by the chapter's formulas, not commlib) pass the self-checks the public tests run."""
    nb = nbformat.read(built["00_introduction"] / "student" / "00_introduction.ipynb", as_version=4)
    given = _facts("\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))
    resnet, gpt, bert = given["ResNet-50"], given["GPT-2 XL"], given["BERT-Large (uncased)"]
    gpt2, a100, eth200 = given["GPT-2 (124M)"], given["A100 SXM4"], given["Ethernet 200 Gb/s"]
    eth10 = given["Ethernet 10 Gb/s"]
    ring = 2 * 7 / 8   # 8 ranks
    worked = {
        "ch00.resnet50_fp16_mib": 2 * resnet / 2**20,
        "ch00.gpt2xl_adam_gb": 16 * gpt / 1e9,
        "ch00.bert_large_ring_ms": 1e3 * ring * 2 * bert / (100e9 / 8),
        "ch00.resnet_bw_90": 2 * 15 / 16 * 4 * resnet / (0.1 / 9) / 1e9,
        "ch00.faster_gpu_eff": 100 * 0.2 / (0.2 + 2 * 7 * eth10 + ring * 4 * resnet / (10e9 / 8)),
        "ch00.min_tokens": math.ceil((2 * 255 * eth200 + 2 * 255 / 256 * 2 * gpt2 / (200e9 / 8)) * 0.4 * a100
                                     / (6 * gpt2)),
    }
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    memory, wire = (float(x) for x in re.search(r"V100's memory, ([\d.]+) GB/s.*?, ([\d.]+) GB/s each way", text,
                                                 re.S).groups())
    worked["ch00.fusion_ratio"] = 0.5 * (3 / memory) / (1 / wire)   # v gamma over b beta: v = b / 2, gamma = 3 / B_mem
    for qid, answer in worked.items():
        assert check(qid, answer).correct, (qid, check(qid, answer).message)
    assert "has 335" in "\n".join(c.source for c in nb.cells)      # the exact count, not the paper's 340M


def test_each_question_shows_its_points_and_the_autograder_runs_the_books_python(built):
    import zipfile

    stem = "02_ring_allreduce"
    nb = nbformat.read(built[stem] / "student" / f"{stem}.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for qid in _questions(stem):
        assert f"`{qid}` ({assignments.points_text(assignments.question_points(qid))})" in text, qid
    assert f"Free response `ch02_ex_derive`, graded by hand ({assignments.MANUAL_POINTS} points)" in text
    with zipfile.ZipFile(assignments.autograder_zip(built[stem])) as archive:
        environment = archive.read("environment.yml").decode()
    assert f"python={sys.version_info.major}.{sys.version_info.minor}\n" in environment


def test_free_responses_are_collected_beside_the_rubric_and_the_points_added_up(built, tmp_path):
    import csv

    import free_responses

    stem = "02_ring_allreduce"
    dist = built[stem]
    nb = nbformat.read(dist / "student" / f"{stem}.ipynb", as_version=4)
    answers = [c for c in nb.cells if "otter_answer_cell" in c.metadata.get("tags", [])]
    answers[0].source = "Each of the $n-1$ steps of a phase sends $M/n$."
    for cell in nb.cells:
        if cell.source.startswith("student_id ="):
            cell.source = f"student_id = {STUDENT!r}"
    handed = tmp_path / "in"
    handed.mkdir()
    nbformat.write(nb, handed / f"{stem}.ipynb")
    import zipfile

    with zipfile.ZipFile(handed / "other.zip", "w") as archive:     # a zip as the last cell writes it
        archive.writestr(f"{stem}.ipynb", nbformat.writes(nbformat.read(dist / "student" / f"{stem}.ipynb", 4)))
    out = tmp_path / "out"
    assert free_responses.main([str(dist), str(handed), "--out", str(out)]) == 0
    derive = (out / "ch02_ex_derive.md").read_text()
    solution = next(ex["solution"] for ex in assignments.chapter_exercises(_chapter(stem)) if ex["label"] == "ch02-ex-derive")
    assert solution in derive and f"### {STUDENT} ({stem}.ipynb)" in derive
    assert "Each of the $n-1$ steps of a phase sends $M/n$." in derive and "*(no answer)*" in derive
    assert "Without looking back" in derive or "without looking back" in derive     # the exercise itself
    assert "_Type your answer here" not in (out / "ch02_ex_trace.md").read_text()
    sheet = out / "points.csv"
    rows = list(csv.reader(sheet.open()))
    manual = [ex for ex in assignments.chapter_exercises(_chapter(stem)) if assignments.asks_reasoning(ex)]
    assert rows[0] == ["file", "student_id"] + [f"{assignments.manual_name(ex['label'])} (of {assignments.MANUAL_POINTS})"
                                                for ex in manual] + ["total by hand"]
    assert [r[:2] for r in rows[1:]] == [[f"{stem}.ipynb", STUDENT], [f"other.zip/{stem}.ipynb", ""]]
    rows[1][2:-1] = ["2", "1.5"] + ["0"] * (len(manual) - 2)
    rows[2][2:-1] = ["0"] * len(manual)
    csv.writer(sheet.open("w", newline="")).writerows(rows)
    assert free_responses.main(["--total", str(sheet)]) == 0
    assert [r[-1] for r in csv.reader(sheet.open())][1:] == ["3.5", "0"]
    rows[1][2] = "3"                          # above the question's 2 points
    rows[1][3] = ""                           # not graded yet
    rows[2][2] = "two"                        # not a number
    csv.writer(sheet.open("w", newline="")).writerows(rows)
    before = sheet.read_text()
    with pytest.raises(ValueError, match="from 0 to 2; got '3'") as refused:
        free_responses.total(sheet)
    message = str(refused.value)
    assert "3 cells to fix" in message and "not graded yet (empty)" in message and "got 'two'" in message
    assert f"{STUDENT} ({stem}.ipynb), {rows[0][3]}: not graded yet" in message
    assert sheet.read_text() == before        # nothing written
    assert free_responses.main(["--total", str(sheet)]) == 1


def test_free_responses_state_the_presets_they_name_and_show_the_tables_and_figures_they_refer_to():
    """A free response that names a link, a model or a GPU gets the numbers of the book's hardware tables for it,
    as numeric questions do (chapter 2's three on 100 Gb/s Ethernet: its alpha of 5 us); a table or figure
    it calls by name comes with it, as the book shows it."""
    from commlib import hardware

    named = 0
    for path in teachers.chapters():
        nb = assignments.master_notebook(path)
        if nb is None:
            continue
        exercises = assignments.chapter_exercises(path)
        for (text, _), ex in zip(_sections(nb), exercises):
            for record in assignments.exercise_presets(ex):
                named += 1
                assert record.name in text.split("From the book's hardware tables", 1)[-1], (ex["label"], record.key)
            for fact in assignments.exercise_facts(ex):
                assert f"- {fact}" in text, (ex["label"], fact)
            for record in __import__("commlib.check").check.presets_named(ex["text"]):
                assert record in assignments.exercise_presets(ex), (ex["label"], record.key)
    assert named >= 15
    eth = hardware.link("eth_100g")
    sections = dict(zip((ex["label"] for ex in assignments.chapter_exercises(_chapter("02_ring_allreduce"))),
                        _sections(assignments.master_notebook(_chapter("02_ring_allreduce")))))
    for label in ("ch02-ex-slow-link", "ch02-ex-why-trees", "ch02-ex-bound"):
        text = sections[label][0]
        assert "100 Gb/s Ethernet" in " ".join(text.split()) and not next(
            ex for ex in assignments.chapter_exercises(_chapter("02_ring_allreduce")) if ex["label"] == label)["checks"]
        assert f"- {eth.name}: sold as 100 Gb/s; a message's start-up latency is \u03b1 = 5 \u00b5s." in text, label
        assert eth.latency == 5e-6
    why_trees, bound = sections["ch02-ex-why-trees"][0], sections["ch02-ex-bound"][0]
    assert f"{assignments.SHOWN} (as the book shows it):" in why_trees
    assert "| algorithm | start-ups a (x alpha) | bytes b (x M, each x beta) |" in why_trees   # the coefficients table
    assert "](data:image/png;base64," in bound and "lower bound" in bound                  # the comparison figure
    intro = dict(zip((ex["label"] for ex in assignments.chapter_exercises(_chapter("00_introduction"))),
                     _sections(assignments.master_notebook(_chapter("00_introduction")))))
    assert "VGG-16 has" in intro["ex-intro-n-limit"][0] and "Ethernet 1 Gb/s: sold as" in intro["ex-intro-n-limit"][0]
    assert "InfiniBand NDR 4x: sold as 400 Gb/s" in intro["ex-intro-balance"][0]


def test_a_reference_that_opens_a_sentence_opens_with_a_capital():
    texts = {ex["label"]: ex["text"] for p in (_chapter("03_parameter_servers"), _chapter("05_stale_gradients"))
             for ex in assignments.chapter_exercises(p)}
    assert texts["ex-ps-why-server"].startswith("The chapter counted")
    assert texts["ex-stale-quadratic"].startswith("Derive. The equation")


def test_chapter_08_collects_the_ring_as_code_and_says_to_run_the_lab_where_an_exercise_reads_the_run(tmp_path):
    """The lab's ring is a code cell the student fills, collected for grading by hand beside the reference
    solution; every exercise that reads the student's own run says to run the chapter's lab first."""
    import free_responses

    from commlib.check import code_of, reference_source, run_needed

    stem = "08_mpi_lab"
    exercises = assignments.chapter_exercises(_chapter(stem))
    needs_run = [ex["label"] for ex in exercises if run_needed(ex["label"], "ch08")]
    assert {"ex-lab-half-rate", "ex-lab-copy-bound"} <= set(needs_run)
    master = assignments.master_notebook(_chapter(stem))
    for (text, _), ex in zip(_sections(master), exercises):
        assert (assignments.RUN_FIRST in text) == (ex["label"] in needs_run), ex["label"]
        if ex["label"] in needs_run:
            assert "`make student`" in text and "your run's numbers" in text, ex["label"]
    name, stub, reference = code_of("ex-lab-ring", "ch08")
    dist = assignments.write_assignment(_chapter(stem), tmp_path / "built", run_tests=False)
    student = nbformat.read(dist / "student" / f"{stem}.ipynb", as_version=4)
    answers = [c for c in student.cells if "otter_answer_cell" in c.metadata.get("tags", [])]
    (ring,) = [c for c in answers if c.cell_type == "code"]
    assert ring.source == stub and "def ring_allreduce(comm, array):" in ring.source
    markdown = "\n".join(c.source for c in student.cells if c.cell_type == "markdown")
    assert "For the grader" not in markdown and "def ring_allreduce(comm, array, *" not in markdown
    assert sum(assignments.RUN_FIRST in c.source for c in student.cells) == len(needs_run)
    ring.source = stub.replace('raise NotImplementedError("replace this line with your ring")', "return my_ring(array)")
    for cell in student.cells:
        if cell.source.startswith("student_id ="):
            cell.source = f"student_id = {STUDENT!r}"
    handed = tmp_path / "in"
    handed.mkdir()
    nbformat.write(student, handed / f"{stem}.ipynb")
    untouched = nbformat.read(dist / "student" / f"{stem}.ipynb", as_version=4)   # the stub as handed out
    nbformat.write(untouched, handed / "untouched.ipynb")
    out = tmp_path / "out"
    assert free_responses.main([str(dist), str(handed), "--out", str(out)]) == 0
    collected = (out / f"{name}.md").read_text()
    assert "return my_ring(array)" in collected and f"### {STUDENT} ({stem}.ipynb)" in collected
    # the student's code in a code block; the untouched stub is not attempted, 0 points, and not shown as an answer
    assert "```python\n" + ring.source.rstrip() + "\n```" in collected
    theirs = collected.split("(untouched.ipynb)", 1)[1].split("---", 1)[0]
    assert "*(not attempted: the code cell is as handed out)*" in theirs and "**Points:** 0 of" in theirs
    assert "NotImplementedError" not in theirs
    import csv

    rows = {r["file"]: r for r in csv.DictReader((out / "points.csv").open())}
    (column,) = [c for c in rows["untouched.ipynb"] if c.startswith(f"{name} (of ")]
    assert rows["untouched.ipynb"][column] == "0" and rows[f"{stem}.ipynb"][column] == ""
    assert reference_source(reference).strip() in collected          # the rubric: the reference's source
    assert "Write `ring_allreduce(comm, array)`" in collected         # the exercise itself
