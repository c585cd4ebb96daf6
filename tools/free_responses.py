"""Collect the free-response answers of an assignment's submissions for grading by hand.

Usage: python tools/free_responses.py DIST SUBMISSION... [--out FOLDER]

``DIST`` is an assignment's ``dist`` folder (``_build/assignments/<chapter>/dist``, written by
``tools/assignments.py``); each ``SUBMISSION`` is a submitted notebook, the zip file its last cell
writes, or a folder of them. Otter grades the numeric questions; the free-response questions
(``manual: true``) it leaves out of its score. This writes, into ``FOLDER`` (``free_responses`` by default):

- ``<question>.md`` for each free-response question: the exercise, the book's solution as the rubric,
  then every submission's answer under its student id (code in a code block), each with a line for its
  points; an answer left as handed out (a code cell's stub, otter's placeholder) or empty is marked not
  attempted, or no answer, with 0 points;
- ``points.csv``: a row per submission (file, student id), a column per free-response question
  (headed with its maximum), empty for the grader to fill in (0 where nothing was answered), and a
  column for their sum.

``--total points.csv`` adds up a filled-in sheet instead (each row's points by hand, checked against
each question's maximum) and writes the sum into its last column; where cells are empty (not graded yet),
not numbers or out of range, it lists them all and writes nothing.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
import zipfile
from pathlib import Path

import nbformat

#: A free-response question's prompt, as tools/assignments.py writes it.
PROMPT = re.compile(r"Free response `(?P<name>\w+)`, graded by hand \((?P<points>\d+) points?\)")
BEGIN, END = "<!-- BEGIN QUESTION -->", "<!-- END QUESTION -->"
_STUDENT = re.compile(r"""^student_id\s*=\s*(['"])(?P<id>.*?)\1""", re.M)
#: What otter leaves in an answer cell the student did not touch.
UNTOUCHED = "_Type your answer here, replacing this text._"
TOTAL = "total by hand"
_HEADING = re.compile(r"^## Exercise \d+", re.M)


def _questions(nb) -> dict[str, dict]:
    """Each free-response question of a notebook, by name: its points, the exercise's text (its Markdown cells
    before the first question's cells, which otter locks), and the cells between its prompt and the end of
    the question: the answer cells, and the rubric in the autograder's copy."""
    found: dict[str, dict] = {}
    exercise: list[str] = []
    asking = False
    current = None
    for cell in nb.cells:
        text, tags = cell.source, cell.metadata.get("tags", [])
        if current is not None:
            if "otter_answer_cell" in tags:
                current["answer"].append(text)
                current["code"].append(cell.cell_type == "code")
            elif "otter_assign_solution_cell" in tags:
                current["rubric"].append(text)
            elif END in text:
                current = None
        if cell.cell_type != "markdown":
            continue
        if _HEADING.search(text):
            exercise, asking = [], False
            continue
        m = PROMPT.search(text)
        if m:
            current = found[m.group("name")] = {"points": int(m.group("points")), "exercise": "\n\n".join(exercise),
                                                 "answer": [], "code": [], "rubric": []}
        asking = asking or cell.metadata.get("editable") is False
        if not asking:
            exercise.append(text)
    return found


def _fenced(text: str) -> str:
    """Code as a Markdown code block, its fence longer than any run of backticks inside it.

    >>> print(_fenced("x = 1"))
    ```python
    x = 1
    ```
    """
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}python\n{text.rstrip()}\n{fence}"


def answer_text(theirs: dict, handed_out: dict) -> tuple[str, str]:
    r"""A submission's answer to one question as the grader's file shows it, and the points to fill in for it:
    code in a code block; ``("*(not attempted...)*", "0")`` where every answer cell is as handed out (the stub of
    a code answer, otter's placeholder) or empty, and ``(answer, "")`` for the grader to mark otherwise.

    >>> stub = {"answer": ["# Your ring\ndef ring(a):\n    raise NotImplementedError"], "code": [True]}
    >>> answer_text(stub, stub)
    ('*(not attempted: the code cell is as handed out)*', '0')
    >>> answer_text({"answer": [UNTOUCHED], "code": [False]}, {"answer": [UNTOUCHED], "code": [False]})
    ('*(no answer)*', '0')
    >>> print(answer_text({"answer": ["def ring(a):\n    return a"], "code": [True]}, stub)[0])
    ```python
    def ring(a):
        return a
    ```
    """
    given = theirs.get("answer", [])
    code = theirs.get("code", [False] * len(given))
    stubs = {a.strip() for a, is_code in zip(handed_out.get("answer", []), handed_out.get("code", [])) if is_code}
    shown, untouched_code = [], False
    for text, is_code in zip(given, code):
        if text.strip() in ("", UNTOUCHED):
            continue
        if is_code and text.strip() in stubs:
            untouched_code = True
            continue
        shown.append(_fenced(text) if is_code else text.strip())
    if shown:
        return "\n\n".join(shown), ""
    if untouched_code:
        return "*(not attempted: the code cell is as handed out)*", "0"
    return "*(no answer)*", "0"


def _notebooks(paths: list[Path]) -> list[tuple[str, object]]:
    """Each submitted notebook as (where it came from, notebook): a notebook, the notebooks in a zip, or
    those of a folder (its notebooks and zips)."""
    found = []
    for path in paths:
        if path.is_dir():
            found += _notebooks(sorted(p for p in path.iterdir() if p.suffix in (".ipynb", ".zip")))
        elif path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                for name in sorted(n for n in archive.namelist() if n.endswith(".ipynb") and "/." not in "/" + n):
                    found.append((f"{path.name}/{name}", nbformat.reads(archive.read(name).decode(), as_version=4)))
        else:
            found.append((path.name, nbformat.read(path, as_version=4)))
    return found


def student_id(nb) -> str:
    """The student id a submission typed (empty if none)."""
    for cell in nb.cells:
        m = _STUDENT.search(cell.source) if cell.cell_type == "code" else None
        if m:
            return m.group("id")
    return ""


def collect(dist: Path, submissions: list[Path], out: Path) -> list[Path]:
    """Write each free-response question's answers beside its rubric, and the points sheet; return the files."""
    (key,) = sorted((dist / "autograder").glob("*.ipynb"))
    questions = _questions(nbformat.read(key, as_version=4))
    if not questions:
        raise ValueError(f"{key}: this assignment has no free-response question")
    copies = sorted((dist / "student").glob("*.ipynb"))   # what the students were handed: a stub is no answer
    handed_out = _questions(nbformat.read(copies[0], as_version=4)) if copies else {}
    handed = [(where, nb, _questions(nb)) for where, nb in _notebooks(submissions)]
    marks = {}   # (submission, question) -> points filled in: 0 where there is nothing to grade
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, q in questions.items():
        parts = [f"# {key.stem}: free response `{name}` ({q['points']} points)", "## The exercise", q["exercise"],
                 "## The rubric: the book's solution", "\n\n".join(q["rubric"]).replace(
                     "**For the grader: the book's solution, as the rubric.** ", ""), "## The answers"]
        for where, nb, theirs in handed:
            answer, points = answer_text(theirs.get(name, {}), handed_out.get(name, {}))
            marks[where, name] = points
            parts += [f"### {student_id(nb) or '(no student id)'} ({where})",
                      answer, f"**Points:** {points or '____'} of {q['points']}", "---"]
        path = out / f"{name}.md"
        path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
        written.append(path)
    sheet = out / "points.csv"
    with sheet.open("w", newline="", encoding="utf-8") as f:
        rows = csv.writer(f)
        rows.writerow(["file", "student_id"] + [f"{name} (of {q['points']})" for name, q in questions.items()] + [TOTAL])
        for where, nb, _ in handed:
            rows.writerow([where, student_id(nb)] + [marks[where, name] for name in questions] + [""])
    return written + [sheet]


def total(sheet: Path) -> list[dict]:
    """Add up a filled-in points sheet: each row's points by hand, written into its last column. Every cell is
    checked first; ValueError lists all the cells that are not yet graded (empty), not a number, or outside
    0 to the question's maximum, each by its row and question, and the sheet is left as it was."""
    with sheet.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
        header = list(rows[0].keys()) if rows else []
    graded = [h for h in header if re.fullmatch(r"\w+ \(of \d+\)", h)]
    problems = []
    for row in rows:
        points = 0.0
        who = row.get("student_id") or row["file"]
        for column in graded:
            most = int(column.rsplit("(of ", 1)[1].rstrip(")"))
            text = (row[column] or "").strip()
            if not text:
                problems.append(f"{who} ({row['file']}), {column}: not graded yet (empty)")
                continue
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not 0 <= value <= most:
                problems.append(f"{who} ({row['file']}), {column}: must be a number of points from 0 to {most}; "
                                f"got {text!r}")
                continue
            points += value
        row[TOTAL] = f"{points:g}"
    if problems:
        raise ValueError(f"{sheet}: {len(problems)} cell{'' if len(problems) == 1 else 's'} to fix before the "
                         "points add up (nothing written):\n  " + "\n  ".join(problems))
    with sheet.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dist", type=Path, nargs="?",
                        help="the assignment's dist folder (_build/assignments/<chapter>/dist)")
    parser.add_argument("submissions", type=Path, nargs="*",
                        help="submitted notebooks, the zip files students hand in, or folders of them")
    parser.add_argument("--out", type=Path, default=Path("free_responses"),
                        help="folder for one Markdown file per free-response question and points.csv "
                             "(default: free_responses)")
    parser.add_argument("--total", type=Path, metavar="POINTS_CSV",
                        help="add up a filled-in points.csv instead: each row's points by hand, into its last column")
    args = parser.parse_args(argv)
    try:
        if args.total:
            for row in total(args.total):
                print(f"{row['student_id'] or row['file']}: {row[TOTAL]} points by hand")
            return 0
        if args.dist is None or not args.submissions:
            parser.error("give the assignment's dist folder and at least one submission")
        for path in collect(args.dist, args.submissions, args.out):
            print(f"wrote {path}")
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
