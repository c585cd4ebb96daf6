"""Write a graded otter-grader assignment for every chapter with exercises.

Usage: python tools/assignments.py [--out _build/assignments] [--runs-on default|colab|jupyterlite] [--pin REV]
                                   [--public-points P] [--hidden-points H] [--manual-points M]
                                   [--public-own-numbers] [--no-run-tests] [chapter stems ...]
(``--help`` describes each option.)

For each chapter of the table of contents that has exercises, this writes

- ``OUT/<chapter>/master/<chapter>.ipynb``: an otter-grader master notebook,
  built from the chapter's own exercises (their text, their self-check ids)
  and ``commlib.check`` (answers, tolerances, hints, per-student numbers);
  its otter markers are Markdown cells with an ``otter`` code block, which
  Colab and JupyterLite show and keep (they have no raw cells);
- ``OUT/<chapter>/dist/``: what ``otter assign`` makes of it: the student
  notebook (``dist/student``), the solution notebook and the autograder
  archive (``dist/autograder/*-autograder_*.zip``).

Each self-check id of an exercise is one question. An exercise without a
self-check (a derivation, an explanation, a trace by hand) is a free-response
question graded by hand, and so is the reasoning an exercise with a self-check
asks for (its text says "derive", "explain", "why", "show that", "argue" or
"justify"): the student writes it in a Markdown cell; the solution notebook
and the autograder's copy carry the book's solution as the grader's rubric,
the student's notebook does not. A numeric question's public test is the
self-check on the exercise's numbers, as the book accepts it. A question
whose numbers can vary (``givens`` in ``commlib/questions``) also asks the
student's own numbers, drawn from a hash of the student id and the question
id: its hidden test recomputes the answer for those numbers with commlib and
accepts it within the question's relative tolerance. A failing test says the
self-check's hint. Every answer is computed by commlib when the test runs:
no expected number is written into a test.

The notebook stands on its own: where an exercise refers to something of the
chapter (its calculator, a run), the question's ``means``
(``commlib/questions``) are code cells placed under the exercise's heading
that give it; a table or figure it calls by name ("the coefficients table") or
that ``commlib.check.exercise_shows`` names is copied as the chapter shows it
(its stored output); a reference to one of the chapter's equations is replaced
by the equation itself; and what its answers read of the book's hardware tables,
or its text names (a model's exact parameter count, a GPU's peak, a link as sold
and its latency: ``commlib.check.preset_facts``, ``presets_named``), is stated
under its text, free responses included. Code an exercise asks the student to write
(``commlib.check.exercise_code``) is a free response graded by hand: a code cell the student fills,
collected beside the book's reference solution as the rubric. An exercise that reads the student's own
run of the chapter's lab (``commlib.check.exercise_needs_run``) says, under its text, to run the
chapter's lab first and answer with that run's numbers. Each question's
heading gives its points, and, where an exercise has several answers, the
letter of its part: the exercise's own "(b)" where its text letters its parts
(a number the part under which the book's solution calls its self-check),
(a), (b), ... in order elsewhere. The free responses are collected for grading by
hand with ``tools/free_responses.py``; the autograder's environment runs the
Python this command runs with (the book's).
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
#: Points of a test by default: the public one on the exercise's numbers, the hidden one on the student's
#: own (``--public-points`` and ``--hidden-points`` change them).
PUBLIC_POINTS = 1
HIDDEN_POINTS = 1
#: Points of a free-response question, graded by hand (``--manual-points``).
MANUAL_POINTS = 2
#: Words with which an exercise asks for reasoning, not only a number: its answer gets a free-response part.
REASONING = re.compile(r"\b(derive|explain|why|show that|argue|justify)\b", re.I)
#: A git tag, branch or commit: letters, digits and ``._/-``, no ``..``, not ending in ``.lock`` or ``/``
#: (``git check-ref-format``'s rules that matter here); nothing a shell would read as a command.
_PIN = re.compile(r"^(?![./-])(?!.*\.\.)(?!.*//)(?!.*\.lock$)[A-Za-z0-9._/-]{1,100}(?<![./])$")
_EQUATION = re.compile(r"\$\$\s*(?P<tex>(?:(?!\$\$).)*?)\s*\$\$\s*\((?P<label>[\w:-]+)\)", re.S)
_OTTER_PIP = re.compile(r"(%pip install -q otter-grader)(?![=\[\w-])")
_DIRECTIVE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{exercise\}[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$", re.S | re.M)
_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<text>[^`]*)`")
#: The words that open what a notebook copies of its chapter for an exercise (a table, a figure).
SHOWN = "From the chapter, for this exercise"
_INSTALL = re.compile(r"""%pip install -q "(?P<spec>commlib(?:\[\w+\])? @ [^"]+)\"""")


def _loader():
    from commlib import check

    return check


def question_name(qid: str) -> str:
    """The otter question name of a self-check id (``ch02.ring_bytes_gb`` -> ``ring_bytes_gb``)."""
    return qid.split(".", 1)[1]


def question_points(qid: str, points: tuple[int, int] = (PUBLIC_POINTS, HIDDEN_POINTS)) -> int:
    """Points of a question: its public test, plus its hidden test where it has per-student numbers.

    ``points`` is (public, hidden), the points of each test.
    """
    public, hidden = points
    return public + (hidden if _loader().givens_of(qid) else 0)


def hints(qid: str) -> list[str]:
    """The hints a wrong answer to ``qid`` can get: the question's own, then its general one.

    (Every numeric question also gets those every question invites: a factor n/(n-1) or 2 of the
    formula, bits for bytes, kB for KiB, MB for MiB, GB for GiB, a prefix off by 1000.)
    """
    q = _loader()._load(qid)
    return list(dict.fromkeys([text for _, text in q.hints] + [q.hint]))   # each once


def _plain(text: str, equations: dict[str, str] | None = None) -> str:
    """Exercise text as Markdown any notebook front end shows: MyST roles read as words.

    A reference to one of the chapter's ``equations`` (label -> TeX) becomes the equation itself;
    a citation is dropped with the space before it, and nothing else is touched:

    >>> _plain("Reduce 1, 2, ..., 8 {cite}`x`. Or use {eq}`eq-a`.", {"eq-a": "T = M / B"})
    'Reduce 1, 2, ..., 8. Or use the equation $T = M / B$.'
    >>> _plain("Derive. {eq}`eq-a` holds. {ref}`sec-b` counted it.", {"eq-a": "T = M / B"})
    'Derive. The equation $T = M / B$ holds. The chapter counted it.'
    """
    equations = equations or {}
    dropped = "\x00"

    def role(m: re.Match) -> str:
        name, inner = m.group("role"), m.group("text")
        if name == "eq" and inner in equations:
            return "the equation $" + " ".join(equations[inner].split()).rstrip(" .,;") + "$"
        if name in ("eq", "numref"):
            return "the chapter's " + ("equation" if name == "eq" else "figure")
        if name in ("ref", "doc"):
            label = re.match(r"(.*?)\s*<[^>]+>$", inner)
            return label.group(1) if label else "the chapter"
        if name == "cite":
            return dropped
        return inner

    text = re.sub(r"\s*" + dropped, "", _ROLE.sub(role, text)).strip()
    # a reference that opens a sentence opens with a capital: "The chapter counted ...", "Derive. The equation ..."
    return re.sub(r"(^|[.!?]\s+)the (chapter|equation)\b", lambda m: f"{m.group(1)}The {m.group(2)}", text)


def chapter_equations(nb) -> dict[str, str]:
    """The chapter's labelled display equations (``$$ ... $$ (label)``), label -> TeX."""
    return {m.group("label"): m.group("tex") for cell in nb.cells if cell.cell_type == "markdown"
            for m in _EQUATION.finditer(cell.source)}


def manual_name(label: str) -> str:
    """The otter question name of an exercise's free-response part (``ch02-ex-derive`` -> ``ch02_ex_derive``)."""
    return re.sub(r"\W", "_", label)


def asks_reasoning(ex: dict) -> bool:
    """Whether an exercise is (or has) a free-response part, graded by hand: it has no self-check, or
    its text asks for a derivation or an explanation besides the number its self-check takes."""
    return not ex["checks"] or bool(REASONING.search(ex["text"]))


_SOLUTION = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution-(?P<end>start|end)\}[ \t]*(?P<label>\S*)[^\n]*\n"
                       r"(?:^:[^\n]*\n)*(?P=fence)[ \t]*$\n?", re.M)


def _output_text(cell) -> str:
    """The text a code cell's stored outputs show (printed text and plain results), at most 30 lines."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif "text/plain" in out.get("data", {}):
            parts.append(out["data"]["text/plain"])
    lines = "".join(p if p.endswith("\n") else p + "\n" for p in parts).splitlines()
    return "\n".join(lines[:30] + (["..."] if len(lines) > 30 else []))


def chapter_solutions(nb, equations: dict[str, str] | None = None) -> dict[str, str]:
    """Each exercise's solution as Markdown (label -> text): its prose, its code as code blocks with the
    output the chapter stored, from ``{solution-start} label`` to ``{solution-end}``."""
    found: dict[str, list[str]] = {}
    label = None
    for cell in nb.cells:
        if cell.cell_type == "code":
            if label is not None and "remove-cell" not in cell.metadata.get("tags", []):   # the book's plumbing
                code = f"```python\n{cell.source.strip()}\n```"
                shown = _output_text(cell)
                found[label].append(code + (f"\n\nwhich shows\n\n```text\n{shown}\n```" if shown else ""))
            continue
        if cell.cell_type != "markdown":
            continue
        text, at = cell.source, 0
        for m in _SOLUTION.finditer(text):
            if label is not None:
                found[label].append(text[at:m.start()])
            label = m.group("label") if m.group("end") == "start" else None
            if label is not None:
                found[label] = []
            at = m.end()
        if label is not None:
            found[label].append(text[at:])
    return {k: _plain("\n\n".join(p.strip() for p in parts if p.strip()), equations) for k, parts in found.items()}


def chapter_exercises(path: Path) -> list[dict]:
    """The chapter's exercises in order: label, text (Markdown, computed numbers filled in), self-check ids,
    and the book's solution (Markdown; empty if the chapter gives none)."""
    nb = nbformat.read(path, as_version=4)
    nb, problems = inline_values.substitute(nb, path.name)
    if problems:
        raise ValueError("; ".join(problems) + " (re-store the outputs: python tools/execute_notebooks.py)")
    texts = {}
    equations = chapter_equations(nb)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for m in _DIRECTIVE.finditer(cell.source):
            label = re.search(r"^:label:\s*(\S+)", m.group("body"), re.M)
            body = "\n".join(line for line in m.group("body").splitlines() if not line.startswith(":"))
            texts[label.group(1) if label else ""] = _plain(body, equations)
    solutions = chapter_solutions(nb, equations)
    found = []
    for ex in teachers.exercises(path):
        if ex["label"] not in texts:
            raise ValueError(f"{path.name}: exercise {ex['label']} not found as an exercise directive")
        found.append({"label": ex["label"], "text": texts[ex["label"]], "checks": ex["checks"],
                      "solution": solutions.get(ex["label"], "")})
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
python_version: "{sys.version_info.major}.{sys.version_info.minor}"
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


def tolerance_text(qid: str) -> str:
    """How close an answer must be, in words: relative for most, absolute where the answer is 0 (said
    without giving the answer away).

    >>> tolerance_text("ch00.gbe_bytes"), tolerance_text("ch02.ring_bytes_gb"), tolerance_text("ch07.pat_winner")
    ('within 1 %', 'within 1 %', 'exactly')
    >>> tolerance_text("ch08.ring_steps")    # a count: 1 % of 134 workers would take 133 and 135
    'exactly: a whole number'

    """
    check = _loader()
    q = check._load(qid)
    answer = q.solve()
    numeric = isinstance(answer, (int, float)) and not isinstance(answer, bool)
    if check.is_whole(answer):
        return "exactly: a whole number"
    if not numeric or not q.rel_tol:
        return "exactly"
    if answer == 0:
        return f"within {check.ABS_TOL:g} of the right value, either way (a rounding error, no more)"
    return f"within {100 * q.rel_tol:g} %"


def answer_unit(unit: str) -> str:
    """How the notebook asks for an answer in ``unit``: " in GB"; a ratio ("x") as a plain number.

    >>> answer_unit("GB"), answer_unit("x"), answer_unit("")
    (' in GB', ' as a ratio, a plain number (2.5 for 2.5 ×)', '')
    """
    if unit == "x":
        return " as a ratio, a plain number (2.5 for 2.5 ×)"
    return f" in {unit}" if unit else ""


def points_text(points: int) -> str:
    """Points in words: "1 point", "2 points"."""
    return f"{points} point{'' if points == 1 else 's'}"


def _part(letter: str) -> str:
    """The bold opening of a part: "(b) " where an exercise has several parts, nothing where it has one;
    "(a, c) " for an answer to several of an exercise's own parts."""
    return f"({', '.join(letter)}) " if letter else ""


#: A part an exercise letters itself, "(a) ..." (not a formula's "$f(a)$", nor a back-reference such as "(a),").
_PART = re.compile(r"(?<![\w$\\])\((?P<letter>[a-h])\)(?=\s)")


def exercise_parts(text: str) -> dict[str, str]:
    """The parts an exercise's text letters itself, letter -> its text (from its first "(a)" to the next part's);
    empty where it letters none. The letters run from "a" in order; a later "(a)" refers back to a part.

    >>> exercise_parts("Intro. (a) Derive it. (b) Compute it; does (a) hold?")
    {'a': '(a) Derive it. ', 'b': '(b) Compute it; does (a) hold?'}
    >>> exercise_parts("Compute $f(a) = 2$.")
    {}
    """
    starts: dict[str, int] = {}
    for m in _PART.finditer(text):
        letter = m.group("letter")
        if letter not in starts and letter == "abcdefgh"[len(starts)]:
            starts[letter] = m.start()
    bounds = list(starts.values()) + [len(text)]
    return {letter: text[bounds[i]:bounds[i + 1]] for i, letter in enumerate(starts)}


def solution_part(solution: str, needle: str) -> str:
    """The part of the book's solution in which ``needle`` (a self-check's call, a reference's name) first stands:
    the furthest part the solution has opened, "(b) ...", before it; empty where it opens none before it or
    ``needle`` is not in it.

    >>> solution_part('(a) So. (b) Then, as in (a), this: check("ch07.x", 1)', 'check("ch07.x"')
    'b'
    """
    at = solution.find(needle)
    if at < 0:
        return ""
    return max((m.group("letter") for m in _PART.finditer(solution[:at])), default="")


def answer_letters(ex: dict, code: tuple[str, str, str] | None = None) -> dict[str, str]:
    """The part letter(s) of each answer an exercise collects, keyed by its code answer's name, its self-check ids
    and, where it asks for reasoning, ``manual_name(label)``: in order, "" where it has one answer only.

    Where the exercise letters its own parts, each answer carries the letter of the part it answers: a number (or
    code) the part of the book's solution in which its self-check is called (or its reference named); the free
    response the parts no number answers and those that ask for reasoning (all of them: no letter). Elsewhere the
    answers are lettered (a), (b), ... in the order they come: code, numbers, free response. ValueError where the
    exercise letters its parts and the solution does not tell which part a number answers.
    """
    keys = ([code[0]] if code else []) + list(ex["checks"]) + ([manual_name(ex["label"])] if asks_reasoning(ex) else [])
    parts = exercise_parts(ex["text"])
    if not parts:
        return dict(zip(keys, "abcdefghij" if len(keys) > 1 else [""] * len(keys)))
    letters: dict[str, str] = {}
    for key in keys[:len(keys) - asks_reasoning(ex)]:
        needle = f'check("{key}"' if key in ex["checks"] else code[2].rsplit(":", 1)[1].rsplit(".", 1)[-1] + "("
        letter = solution_part(ex.get("solution", ""), needle)
        if letter not in parts:
            raise ValueError(f"{ex['label']}: its text letters its parts ({', '.join(parts)}), but its solution does "
                             f"not tell which part {key} answers (call it under that part's letter)")
        letters[key] = letter
    if asks_reasoning(ex):
        free = "".join(p for p, text in parts.items() if p not in letters.values() or REASONING.search(text))
        letters[keys[-1]] = "" if free == "".join(parts) and len(keys) == 1 else free or "".join(parts)
    return letters


def _question_cells(qid: str, letter: str, points: tuple[int, int] = (PUBLIC_POINTS, HIDDEN_POINTS),
                    public_own: bool = False) -> list:
    check = _loader()
    q = check._load(qid)
    name = question_name(qid)
    unit = answer_unit(q.unit)
    numeric = isinstance(q.solve(), (int, float))
    tol = tolerance_text(qid)
    kind = "a Python number" if numeric else "a Python string"
    has_own = bool(q.givens)
    public, hidden = points
    cells = [
        _otter(f"# BEGIN QUESTION\nname: {name}\npoints: {question_points(qid, points)}"),
        nbformat.v4.new_markdown_cell(f"**{_part(letter)}`{qid}` ({points_text(question_points(qid, points))}).** "
                                      f"With the exercise's numbers: your answer{unit}, "
                                      f"as {kind} in `{name}`. Answers are accepted {tol}."),
        _otter("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell(f'{name} = __import__("commlib.check").check.expected("{qid}")  # SOLUTION'),
        _otter("# END SOLUTION"),
    ]
    if has_own:
        cells += [
            nbformat.v4.new_markdown_cell(f"*Your own numbers.* The same question with numbers drawn from your "
                                          f"student id (run the next cell to see them): your answer{unit}, in "
                                          f"`{name}_yours`."),
            nbformat.v4.new_code_cell(f'yours("{qid}", student_id)'),
            _otter("# BEGIN SOLUTION"),
            nbformat.v4.new_code_cell(f'{name}_yours = __import__("commlib.check").check.expected("{qid}", '
                                      f'**draw("{qid}", student_id))  # SOLUTION'),
            _otter("# END SOLUTION"),
        ]
    cells.append(_otter("# BEGIN TESTS"))
    cells.append(_test(public, False, f'''def test_exercise_numbers({name}):
    """The exercise's numbers, checked as the book's self-check does ({tol})."""
    from commlib.check import check
    result = check("{qid}", {name}, answer_name="{name}")
    assert result.correct, result.message
'''))
    if has_own:
        cells.append(_test(hidden, not public_own, f'''def test_your_numbers({name}_yours, student_id):
    """The student's own numbers, drawn from the student id; accepted as the exercise's are."""
    from commlib.check import check, draw
    result = check("{qid}", {name}_yours, answer_name="{name}_yours", **draw("{qid}", student_id))
    assert result.correct, result.message
'''))
    cells += [_otter("# END TESTS"), _otter("# END QUESTION")]
    return cells


def _manual_cells(ex: dict, letter: str, points: int = MANUAL_POINTS) -> list:
    """A free-response question, graded by hand: the student's Markdown cell; the book's solution as the
    grader's rubric in the solution notebook and the autograder's copy (otter replaces it with an empty
    response cell in the student's)."""
    name = manual_name(ex["label"])
    what = ("your reasoning: the derivation or explanation the exercise asks for" if ex["checks"]
            else "your answer")
    rubric = ex["solution"] or "The book gives no solution for this exercise: grade by the exercise's text."
    return [
        _otter(f"# BEGIN QUESTION\nname: {name}\nmanual: true\npoints: {points}"),
        nbformat.v4.new_markdown_cell(f"**{_part(letter)}Free response `{name}`, graded by hand "
                                      f"({points_text(points)}).** Write {what} in the Markdown cell below, in words "
                                      "and formulas ($...$ for mathematics)."),
        _otter("# BEGIN SOLUTION"),
        nbformat.v4.new_markdown_cell("**For the grader: the book's solution, as the rubric.** Give the points "
                                      "for the steps it takes, in any words.\n\n" + rubric),
        _otter("# END SOLUTION"),
        _otter("# END QUESTION"),
    ]


def _code_cells(ex: dict, code: tuple[str, str, str], letter: str, points: int = MANUAL_POINTS) -> list:
    """The code an exercise asks for, as a free-response question graded by hand: the student's code cell (the
    registered stub, which otter keeps as the answer cell and ``tools/free_responses.py`` collects), and the book's
    solution with the reference's source as the grader's rubric in the solution notebook and the autograder's copy."""
    name, stub, reference = code
    source = _loader().reference_source(reference).rstrip()
    rubric = ((ex["solution"] + "\n\n") if ex["solution"] else "") + (
        f"The book's reference solution (`{reference.replace(':', '.')}`):\n\n```python\n{source}\n```")
    return [
        _otter(f"# BEGIN QUESTION\nname: {name}\nmanual: true\npoints: {points}"),
        nbformat.v4.new_markdown_cell(f"**{_part(letter)}Free response `{name}`, graded by hand "
                                      f"({points_text(points)}).** Write your code in the code cell below, in place "
                                      "of its body; it is collected as you leave it and graded by hand."),
        _otter("# BEGIN PROMPT"),
        nbformat.v4.new_code_cell(stub),
        _otter("# END PROMPT"),
        _otter("# BEGIN SOLUTION"),
        nbformat.v4.new_markdown_cell("**For the grader: the book's solution, as the rubric.** Give the points "
                                      "for the steps it takes, in any code that does them.\n\n" + rubric),
        _otter("# END SOLUTION"),
        _otter("# END QUESTION"),
    ]


#: The words that open the cell under an exercise that needs the student's own run of the chapter's lab.
RUN_FIRST = "Run the chapter's lab first"


def _run_cell(label: str, chapter: str, number: int) -> list:
    """Under an exercise that reads the student's own run of the lab (``commlib.check.exercise_needs_run``): a
    Markdown cell saying to run the chapter's lab first and answer with that run's numbers."""
    why = _loader().run_needed(label, chapter)
    if not why:
        return []
    return [nbformat.v4.new_markdown_cell(
        f"**{RUN_FIRST}** (chapter {number}'s notebook, in the student copy of the book your course hands out: "
        f"`make student` writes it), then answer with your run's numbers, not the book's. This exercise reads "
        f"{why}, which this notebook does not measure.")]


def _means_cells(checks: list[str], label: str = "", chapter: str = "") -> list:
    """The code cells that give what an exercise's text refers to (its questions' ``means``, or the
    exercise's own where it has no self-check), introduced."""
    check = _loader()
    code = list(dict.fromkeys([src for qid in checks for src in check._load(qid).means]
                              + list(check.means_of(label, chapter) if label else ())))
    if not code:
        return []
    return [nbformat.v4.new_markdown_cell("From the chapter, for this exercise (run the cell):")] + [
        nbformat.v4.new_code_cell(src) for src in code]


def exercise_presets(ex: dict) -> list:
    """The records of the book's hardware tables an exercise needs beyond its self-checks' (models,
    accelerators, links): those its text names ("100 Gb/s Ethernet", "ResNet-50", "H100"), and, where it is
    graded by hand, those its solution's code reads by key (``hardware.link("eth_1g")``: the example's link
    that the text calls "the VGG-16 example")."""
    from commlib import hardware

    check = _loader()
    found = check.presets_named(ex["text"])
    if asks_reasoning(ex):
        code = "\n".join(re.findall(r"```python\n(.*?)```", ex.get("solution", ""), re.S))
        tables = {"link": hardware.LINKS, "model": hardware.MODELS, "accelerator": hardware.ACCELERATORS}
        quoted = sorted((m.start(), table[m.group(2)]) for table in tables.values()
                        for m in re.finditer(r"""(['"])(\w+)\1""", code) if m.group(2) in table)
        found += [record for _, record in quoted]
    return list(dict.fromkeys(found))


def exercise_facts(ex: dict) -> list[str]:
    """What an exercise's answers read of the book's hardware tables, one sentence each: its self-checks'
    presets (:func:`commlib.check.preset_facts`) and those of :func:`exercise_presets`."""
    check = _loader()
    return list(dict.fromkeys([f for qid in ex["checks"] for f in check.preset_facts(qid)]
                              + check.record_facts(exercise_presets(ex))))


#: A table or figure an exercise calls by its name ("the coefficients table", "The comparison figure"): the
#: chapter's code cell that calls ``coefficients_table(`` or ``comparison_figure(`` shows it.
_NAMED = re.compile(r"\bthe (?P<name>[a-z]+) (?P<kind>table|figure)\b", re.I)
#: A Markdown table: its lines, each opening with "|".
_MD_TABLE = re.compile(r"(?:^\|[^\n]*\n?)+", re.M)


def _shown(cell, pick: str = "") -> str:
    """What a chapter's cell shows, as Markdown: a code cell's stored output (a table in Markdown or HTML, a figure
    as an image with its caption), or a Markdown cell's tables; where ``pick`` is a Markdown cell's text outside its
    tables, the paragraph that holds it."""
    if cell.cell_type == "markdown":
        tables = [m.group(0).strip() for m in _MD_TABLE.finditer(cell.source)]
        if pick and not any(pick in table for table in tables):
            return next((p.strip() for p in re.split(r"\n\s*\n", cell.source) if pick in p), "")
        return "\n\n".join(tables)
    parts = []
    figure = cell.metadata.get("mystnb", {})
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if "text/markdown" in data:
            parts.append(data["text/markdown"].strip())
        elif "text/html" in data:
            parts.append(data["text/html"].strip())
        elif "image/png" in data:
            alt = figure.get("image", {}).get("alt", "the chapter's figure").replace("]", ")").replace("[", "(")
            caption = figure.get("figure", {}).get("caption", "")
            image = "".join(data["image/png"].split())
            parts.append(f"![{alt}](data:image/png;base64,{image})" + (f"\n\n*{caption}*" if caption else ""))
    return "\n\n".join(parts)


def shown_cells(nb, ex: dict, chapter: str) -> list[str]:
    """What an exercise refers to that its chapter shows, as the book shows it (Markdown, one per table or figure):
    a table or figure its text calls by name (see ``_NAMED``), and what ``commlib.check.exercise_shows`` registered
    for it. ``nb`` is the chapter with its computed values filled in; ValueError where a registered pick finds no
    cell that shows something."""
    picks = [f"{m.group('name').lower()}_{m.group('kind').lower()}(" for m in _NAMED.finditer(ex["text"])]
    named = set(picks)
    picks += list(_loader().shows_of(ex["label"], chapter))
    found = []
    for pick in dict.fromkeys(picks):
        cells = [c for c in nb.cells if c.cell_type == "code" and pick in c.source and c.get("outputs")]
        cells = cells or [c for c in nb.cells if pick not in named and c.cell_type == "markdown" and pick in c.source]
        shown = _shown(cells[0], pick) if cells else ""
        if not shown and pick not in named:
            raise ValueError(f"{ex['label']}: no cell of the chapter shows {pick!r} (re-store its outputs?)")
        if shown:
            found.append(_plain(shown))
    return list(dict.fromkeys(found))


def _facts_cell(ex: dict) -> list:
    """A Markdown cell with what the exercise's answers read of the book's hardware tables (a model's exact
    parameter count, a GPU's peak, a link as sold and its latency), which the exercise's text may not say;
    free responses included."""
    facts = exercise_facts(ex)
    if not facts:
        return []
    return [nbformat.v4.new_markdown_cell("From the book's hardware tables (its presets), for this exercise:\n\n"
                                          + "\n".join(f"- {f}" for f in facts))]


def master_notebook(path: Path, runs_on: str = "default", points: tuple[int, int] = (PUBLIC_POINTS, HIDDEN_POINTS),
                    manual_points: int = MANUAL_POINTS, public_own: bool = False):
    """The otter master notebook of a chapter, or None if the chapter has no exercises.

    ``public_own`` makes the test on a student's own numbers public (``grader.check`` runs it, with its
    hint), for formative use; by default it is hidden until grading.
    """
    exercises = chapter_exercises(path)
    if not exercises:
        return None
    chapter = nbformat.read(path, as_version=4)
    filled = inline_values.substitute(chapter, path.name)[0]
    setup = _setup_cell(chapter, path)
    title = _title(chapter)
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# {title}: graded exercises\n\n"
            "Type your student id in the cell below, then answer each question in the cell under it: "
            "a number as a Python number (the unit is given), a free response in words and formulas in "
            "its Markdown cell. `grader.check` runs the public test of a numeric question "
            "and shows a hint when the answer is not yet right. Parts marked *Your own numbers* are "
            "graded with numbers drawn from your student id, by "
            + ("tests that `grader.check` runs too" if public_own else
               "hidden tests that run when your work is graded")
            + "; free responses are graded by hand. When done, run the last cell and hand in "
            "the zip file it writes."),
        _otter(_config(path.stem, runs_on)),
        nbformat.v4.new_code_cell(setup.source + "\nfrom commlib.check import draw, watch_answers, yours\n\n"
                                  "watch_answers(get_ipython())  # a cell that raises is graded with its error, not as unanswered"),
        nbformat.v4.new_markdown_cell("Your student id, as your course knows you (in quotes):"),
        nbformat.v4.new_code_cell('student_id = "sample-student"  # SOLUTION'),
    ]
    for number, ex in enumerate(exercises, start=1):
        cells.append(nbformat.v4.new_markdown_cell(f"## Exercise {number}"))
        cells += _means_cells(ex["checks"], ex["label"], f"ch{path.stem[:2]}")
        shown = shown_cells(filled, ex, f"ch{path.stem[:2]}")
        if shown:
            cells.append(nbformat.v4.new_markdown_cell(f"{SHOWN} (as the book shows it):"))
            cells += [nbformat.v4.new_markdown_cell(text) for text in shown]
        cells.append(nbformat.v4.new_markdown_cell(ex["text"]))
        cells += _run_cell(ex["label"], f"ch{path.stem[:2]}", int(path.stem[:2]))
        cells += _facts_cell(ex)
        code = _loader().code_of(ex["label"], f"ch{path.stem[:2]}")
        letters = answer_letters(ex, code)       # "(a)" only where a "(b)" follows; the exercise's own where it has
        answers = []                             # the code first: the questions ask about it
        if code:
            answers.append((letters[code[0]], _code_cells(ex, code, letters[code[0]], manual_points)))
        answers += [(letters[qid], _question_cells(qid, letters[qid], points, public_own)) for qid in ex["checks"]]
        if asks_reasoning(ex):
            letter = letters[manual_name(ex["label"])]
            answers.append((letter, _manual_cells(ex, letter, manual_points)))
        if exercise_parts(ex["text"]):           # in the order of the exercise's own parts
            answers.sort(key=lambda answer: answer[0])
        cells += [cell for _, answer in answers for cell in answer]
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
    check_pin(pin)
    if "git+" not in spec or "@" in spec.split("git+", 1)[1]:
        raise ValueError(f"pin: the requirement {spec!r} is not an unpinned git address")
    return f"{spec}@{pin}"


def check_pin(pin: str) -> str:
    """``pin`` when it reads as a git tag, branch or commit; else ValueError (nothing a shell would run).

    >>> check_pin("v1.0"), check_pin("3af0604")
    ('v1.0', '3af0604')
    >>> check_pin("v1; rm -rf ~")
    Traceback (most recent call last):
    ...
    ValueError: pin must be a git tag, branch or commit (letters, digits and ._/-); got 'v1; rm -rf ~'
    """
    if not isinstance(pin, str) or not _PIN.match(pin):
        raise ValueError(f"pin must be a git tag, branch or commit (letters, digits and ._/-); got {pin!r}")
    return pin


def otter_version() -> str:
    """The otter-grader this assigns with: the autograder installs it, and so does the students' setup."""
    from importlib.metadata import version

    return version("otter-grader")


def _pin_otter(dist: Path) -> None:
    """Hold the students' ``%pip install otter-grader`` (Colab, JupyterLite) to the autograder's version."""
    for notebook in dist.rglob("*.ipynb"):
        text = notebook.read_text(encoding="utf-8")
        pinned_text = _OTTER_PIP.sub(rf"\g<1>=={otter_version()}", text)
        if pinned_text != text:
            notebook.write_text(pinned_text, encoding="utf-8")


def write_assignment(path: Path, out: Path = OUT, runs_on: str = "default", run_tests: bool = True,
                     pin: str | None = None,
                     points: tuple[int, int] = (PUBLIC_POINTS, HIDDEN_POINTS),
                     manual_points: int = MANUAL_POINTS, public_own: bool = False) -> Path | None:
    """Write the master notebook of a chapter and run ``otter assign`` on it; return the dist folder.

    ``pin`` (a git tag or commit) holds the library to one version in both places that install it:
    the students' setup cell and the autograder's environment; otter-grader itself is held to the
    version that assigns, in both too. ``points`` is (public, hidden), the points of each test;
    ``manual_points`` those of each free-response question; ``public_own`` makes the tests on the
    students' own numbers public (formative use).
    """
    nb = master_notebook(path, runs_on, points, manual_points, public_own)
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
    _pin_otter(dist)
    return dist


def autograder_zip(dist: Path) -> Path:
    """The autograder archive ``otter assign`` wrote into ``dist``."""
    (found,) = sorted((dist / "autograder").glob("*-autograder_*.zip"))
    return found


def _points(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"points must be a whole number >= 0; got {text}")
    return value


def _pin_arg(text: str) -> str:
    try:
        return check_pin(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _current_commit() -> str | None:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or None if done.returncode == 0 else None


def moving_pin(pin: str, cwd: Path = ROOT) -> str | None:
    """The commit ``pin`` names now, if it is a name that moves (HEAD, a branch); None for a tag or a commit.

    A branch or HEAD written into the students' install line would install whatever the branch
    holds on the day each student installs, which is what pinning is meant to prevent.
    """
    def git(*args: str) -> str | None:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None

    symbolic = pin.upper() in ("HEAD", "FETCH_HEAD", "ORIG_HEAD") or any(
        subprocess.run(["git", "show-ref", "--verify", "--quiet", ref], cwd=cwd).returncode == 0
        for ref in (f"refs/heads/{pin}", f"refs/remotes/{pin}"))
    return git("rev-parse", "--short=12", f"{pin}^{{commit}}") if symbolic else None


def main(argv: list[str]) -> int:
    names = [p.stem for p in teachers.chapters()]
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Each chapter gets OUT/<chapter>/master (the otter master notebook and requirements.txt) and "
               "OUT/<chapter>/dist (student notebook, solution, autograder zip). Chapters: " + ", ".join(names))
    parser.add_argument("chapters", nargs="*", metavar="chapter",
                        help="chapter stems to write (default: every chapter with exercises)")
    parser.add_argument("--out", type=Path, default=OUT,
                        help=f"folder to write the assignments into (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--runs-on", choices=("default", "colab", "jupyterlite"), default="default",
                        help="where students run the notebook: 'default' (their own Jupyter), 'colab' or "
                             "'jupyterlite' (then the notebook installs otter-grader itself, held to the "
                             "autograder's version, and carries its tests)")
    parser.add_argument("--pin", default=None, type=_pin_arg,
                        help="a git tag or commit of the book: students and autograder install that version of "
                             "its library (without it, whatever is newest on the day each installs)")
    parser.add_argument("--public-points", type=_points, default=PUBLIC_POINTS,
                        help=f"points of each question's public test, on the exercise's numbers (default "
                             f"{PUBLIC_POINTS})")
    parser.add_argument("--hidden-points", type=_points, default=HIDDEN_POINTS,
                        help=f"points of each hidden test, on the student's own numbers (default {HIDDEN_POINTS})")
    parser.add_argument("--manual-points", type=_points, default=MANUAL_POINTS,
                        help=f"points of each free-response question, graded by hand against the book's "
                             f"solution (default {MANUAL_POINTS})")
    parser.add_argument("--public-own-numbers", action="store_true",
                        help="make the test on each student's own numbers public, so that grader.check runs it "
                             "with its hint (formative use; by default it is hidden until grading)")
    parser.add_argument("--no-run-tests", action="store_true",
                        help="do not grade the solutions while assigning (faster; otter assign checks less)")
    args = parser.parse_args(argv)
    unknown = [c for c in args.chapters if c not in names]
    if unknown:
        parser.error(f"unknown chapter(s): {', '.join(unknown)}; choose from: {', '.join(names)}")
    if args.pin is not None and (commit := moving_pin(args.pin)) is not None:
        print(f"NOTE: --pin {args.pin} names a branch or HEAD, which moves; pinning to the commit it names now, "
              f"{commit}.", file=sys.stderr)
        args.pin = commit
    if args.pin is None:
        commit = _current_commit()
        print("WARNING: no --pin given. Students and the autograder will each install the book's library as it is "
              "on the day they install it, which may differ from the version these assignments were written "
              "with and from each other. Pass --pin with a tag or commit that is on the book's public "
              f"repository{f' (this checkout is at {commit})' if commit else ''}.", file=sys.stderr)
    paths = [p for p in teachers.chapters() if not args.chapters or p.stem in args.chapters]
    for path in paths:
        dist = write_assignment(path, args.out, args.runs_on, not args.no_run_tests, args.pin,
                                (args.public_points, args.hidden_points), args.manual_points,
                                args.public_own_numbers)
        if dist is not None:
            print(f"{path.stem}: {dist / 'student' / path.name} and {autograder_zip(dist).name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
