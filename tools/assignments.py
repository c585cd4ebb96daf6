"""Write a graded otter-grader assignment for every chapter with exercises.

Usage: python tools/assignments.py [--out _build/assignments] [--runs-on default|colab|jupyterlite] [--pin REV]
                                   [--no-run-tests] [chapter stems ...]

For each chapter of the table of contents that has exercises, this writes

- ``OUT/<chapter>/master/<chapter>.ipynb``: an otter-grader master notebook,
  built from the chapter's own exercises (their text, their self-check ids)
  and ``commlib.check`` (answers, tolerances, hints, per-student numbers);
  its otter markers are Markdown cells with an ``otter`` code block, which
  Colab and JupyterLite show and keep (they have no raw cells);
- ``OUT/<chapter>/dist/``: what ``otter assign`` makes of it: the student
  notebook (``dist/student``), the solution notebook and the autograder
  archive (``dist/autograder/*-autograder_*.zip``).

Each self-check id of an exercise is one question. Its public test is the
self-check on the exercise's numbers, as the book accepts it. A question
whose numbers can vary (``givens`` in ``commlib/questions``) also asks the
student's own numbers, drawn from a hash of the student id and the question
id: its hidden test recomputes the answer for those numbers with commlib and
accepts it within the question's relative tolerance. A failing test says the
self-check's hint. Every answer is computed by commlib when the test runs:
no expected number is written into a test.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import inline_values  # noqa: E402
import teachers  # noqa: E402

OUT = ROOT / "_build" / "assignments"
#: Points of a test: the public one on the exercise's numbers, the hidden one on the student's own.
PUBLIC_POINTS = 1
HIDDEN_POINTS = 1
_DIRECTIVE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{exercise\}[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$", re.S | re.M)
_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<text>[^`]*)`")
_INSTALL = re.compile(r"""%pip install -q "(?P<spec>commlib(?:\[\w+\])? @ [^"]+)\"""")


def _loader():
    from commlib import check

    return check


def question_name(qid: str) -> str:
    """The otter question name of a self-check id (``ch02.ring_bytes_gb`` -> ``ring_bytes_gb``)."""
    return qid.split(".", 1)[1]


def question_points(qid: str) -> int:
    """Points of a question: its public test, plus its hidden test where it has per-student numbers."""
    return PUBLIC_POINTS + (HIDDEN_POINTS if _loader().givens_of(qid) else 0)


def hints(qid: str) -> list[str]:
    """The hints a wrong answer to ``qid`` can get: the question's own, then its general one.

    (Every numeric question also gets the slips every question invites:
    bits for bytes, MB for MiB, GB for GiB, one direction for both, a prefix off by 1000.)
    """
    q = _loader()._load(qid)
    return [text for _, text in q.hints] + [q.hint]


def _plain(text: str) -> str:
    """Exercise text as Markdown any notebook front end shows: MyST roles read as words."""

    def role(m: re.Match) -> str:
        name, inner = m.group("role"), m.group("text")
        if name in ("eq", "numref"):
            return "the chapter's equation"
        if name in ("ref", "doc"):
            label = re.match(r"(.*?)\s*<[^>]+>$", inner)
            return label.group(1) if label else "the chapter"
        if name == "cite":
            return ""
        return inner

    return re.sub(r" +([.,;)])", r"\1", _ROLE.sub(role, text)).strip()


def chapter_exercises(path: Path) -> list[dict]:
    """The chapter's exercises in order: label, text (Markdown, computed numbers filled in), self-check ids."""
    nb = nbformat.read(path, as_version=4)
    nb, problems = inline_values.substitute(nb, path.name)
    if problems:
        raise ValueError("; ".join(problems) + " (re-store the outputs: python tools/execute_notebooks.py)")
    texts = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for m in _DIRECTIVE.finditer(cell.source):
            label = re.search(r"^:label:\s*(\S+)", m.group("body"), re.M)
            body = "\n".join(line for line in m.group("body").splitlines() if not line.startswith(":"))
            texts[label.group(1) if label else ""] = _plain(body)
    found = []
    for ex in teachers.exercises(path):
        if ex["label"] not in texts:
            raise ValueError(f"{path.name}: exercise {ex['label']} not found as an exercise directive")
        found.append({"label": ex["label"], "text": texts[ex["label"]], "checks": ex["checks"]})
    return found


def _title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^# (.+)$", cell.source, re.M)
            if m:
                return m.group(1).strip()
    return ""


def _otter(text: str):
    return nbformat.v4.new_markdown_cell(f"```otter\n{text.strip()}\n```")


def _test(points: int, hidden: bool, body: str):
    config = f'""" # BEGIN TEST CONFIG\npoints: {points}\nhidden: {str(hidden).lower()}\n""" # END TEST CONFIG\n'
    return nbformat.v4.new_code_cell(config + body)


def _config(stem: str, runs_on: str) -> str:
    return f"""
# ASSIGNMENT CONFIG
name: {stem}
requirements: requirements.txt
strip_solutions_from_all_cells: true
runs_on: {runs_on}
export_cell:
  pdf: false
  instructions: Upload the zip file this cell writes to your course's autograder.
generate:
  pdf: false
  show_hidden: true
  show_stdout: false
tests:
  ok_format: false
  files: {str(runs_on != "default").lower()}
"""


def _question_cells(qid: str, letter: str) -> list:
    check = _loader()
    q = check._load(qid)
    name = question_name(qid)
    unit = f" in {q.unit}" if q.unit else ""
    numeric = isinstance(q.solve(), (int, float))
    tol = f"within {100 * q.rel_tol:g} %" if q.rel_tol and numeric else "exactly"
    kind = "a Python number" if numeric else "a Python string"
    has_own = bool(q.givens)
    cells = [
        _otter(f"# BEGIN QUESTION\nname: {name}\npoints: {question_points(qid)}"),
        nbformat.v4.new_markdown_cell(f"**({letter}) `{qid}`.** With the exercise's numbers: your answer{unit}, "
                                      f"as {kind} in `{name}`. Answers are accepted {tol}."),
        _otter("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell(f'{name} = __import__("commlib.check").check.expected("{qid}")  # SOLUTION'),
        _otter("# END SOLUTION"),
    ]
    if has_own:
        cells += [
            nbformat.v4.new_markdown_cell(f"The same question with your own numbers, drawn from your student id "
                                          f"(run the next cell to see them): your answer{unit} in `{name}_yours`."),
            nbformat.v4.new_code_cell(f'yours("{qid}", student_id)'),
            _otter("# BEGIN SOLUTION"),
            nbformat.v4.new_code_cell(f'{name}_yours = __import__("commlib.check").check.expected("{qid}", '
                                      f'**draw("{qid}", student_id))  # SOLUTION'),
            _otter("# END SOLUTION"),
        ]
    cells.append(_otter("# BEGIN TESTS"))
    cells.append(_test(PUBLIC_POINTS, False, f'''def test_exercise_numbers({name}):
    """The exercise's numbers, checked as the book's self-check does ({tol})."""
    from commlib.check import check
    result = check("{qid}", {name})
    assert result.correct, result.message
'''))
    if has_own:
        cells.append(_test(HIDDEN_POINTS, True, f'''def test_your_numbers({name}_yours, student_id):
    """The student's own numbers, drawn from the student id; accepted {tol}."""
    from commlib.check import check, draw
    result = check("{qid}", {name}_yours, **draw("{qid}", student_id))
    assert result.correct, result.message
'''))
    cells += [_otter("# END TESTS"), _otter("# END QUESTION")]
    return cells


def master_notebook(path: Path, runs_on: str = "default"):
    """The otter master notebook of a chapter, or None if the chapter has no exercises with self-checks."""
    exercises = [ex for ex in chapter_exercises(path) if ex["checks"]]
    if not exercises:
        return None
    chapter = nbformat.read(path, as_version=4)
    setup = _setup_cell(chapter, path)
    title = _title(chapter)
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# {title}: graded exercises\n\n"
            "Type your student id in the cell below, then answer each question in the cell under it, "
            "as a Python number (the unit is given). `grader.check` runs the public test of a question "
            "and shows a hint when the answer is not yet right. Questions marked *your own numbers* are "
            "graded with numbers drawn from your student id, by hidden tests that run when your work "
            "is graded. When done, run the last cell and hand in the zip file it writes."),
        _otter(_config(path.stem, runs_on)),
        nbformat.v4.new_code_cell(setup.source + "\nfrom commlib.check import draw, yours"),
        nbformat.v4.new_markdown_cell("Your student id, as your course knows you (in quotes):"),
        nbformat.v4.new_code_cell('student_id = "sample-student"  # SOLUTION'),
    ]
    for number, ex in enumerate(exercises, start=1):
        cells.append(nbformat.v4.new_markdown_cell(f"## Exercise {number}\n\n{ex['text']}"))
        for i, qid in enumerate(ex["checks"]):
            cells += _question_cells(qid, "abcdefghij"[i])
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    return nb


def _setup_cell(chapter, path: Path):
    """The chapter's setup cell: the first code cell, which installs commlib where it is missing."""
    code = [c for c in chapter.cells if c.cell_type == "code"]
    if not code or not _INSTALL.search(code[0].source):
        raise ValueError(f"{path.name}: its first code cell is not the setup cell that installs commlib with %pip")
    return code[0]


def install_spec(path: Path) -> str:
    """The requirement that installs the book's library, as the chapter's setup cell names it."""
    return _INSTALL.search(_setup_cell(nbformat.read(path, as_version=4), path).source).group("spec")


def pinned(spec: str, pin: str | None) -> str:
    """The install requirement ``spec`` held to the git revision ``pin`` (a tag or a commit), if given.

    >>> pinned("commlib @ git+https://example.org/book", "v1.0")
    'commlib @ git+https://example.org/book@v1.0'
    >>> pinned("commlib[mpi] @ git+https://example.org/book", None)
    'commlib[mpi] @ git+https://example.org/book'
    """
    if not pin:
        return spec
    if "git+" not in spec or "@" in spec.split("git+", 1)[1]:
        raise ValueError(f"pin: the requirement {spec!r} is not an unpinned git address")
    return f"{spec}@{pin}"


def write_assignment(path: Path, out: Path = OUT, runs_on: str = "default", run_tests: bool = True,
                     pin: str | None = None) -> Path | None:
    """Write the master notebook of a chapter and run ``otter assign`` on it; return the dist folder.

    ``pin`` (a git tag or commit) holds the library to one version in both places that install it:
    the students' setup cell and the autograder's environment.
    """
    nb = master_notebook(path, runs_on)
    if nb is None:
        return None
    spec = install_spec(path)
    if pin:
        for cell in nb.cells:
            cell.source = cell.source.replace(spec, pinned(spec, pin))
    base = out / path.stem
    master = base / "master"
    master.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, master / f"{path.stem}.ipynb")
    (master / "requirements.txt").write_text(pinned(spec, pin) + "\n", encoding="utf-8")
    dist = base / "dist"
    shutil.rmtree(dist, ignore_errors=True)  # otter assign adds a dated archive; keep only this run's
    command = [str(Path(sys.executable).with_name("otter")), "assign", "--no-pdfs", f"{path.stem}.ipynb", str(dist.resolve())]
    if not run_tests:
        command.insert(3, "--no-run-tests")
    done = subprocess.run(command, cwd=master, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"otter assign failed for {path.name}:\n{done.stdout}\n{done.stderr}")
    return dist


def autograder_zip(dist: Path) -> Path:
    """The autograder archive ``otter assign`` wrote into ``dist``."""
    (found,) = sorted((dist / "autograder").glob("*-autograder_*.zip"))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter stems (default: every chapter with exercises)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--runs-on", choices=("default", "colab", "jupyterlite"), default="default")
    parser.add_argument("--no-run-tests", action="store_true", help="do not grade the solutions while assigning")
    parser.add_argument("--pin", default=None, help="a git tag or commit of the book: students and autograder install it")
    args = parser.parse_args(argv)
    paths = teachers.chapters()
    if args.chapters:
        paths = [p for p in paths if p.stem in args.chapters]
    for path in paths:
        dist = write_assignment(path, args.out, args.runs_on, not args.no_run_tests, args.pin)
        if dist is not None:
            print(f"{path.stem}: {dist / 'student' / path.name} and {autograder_zip(dist).name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
