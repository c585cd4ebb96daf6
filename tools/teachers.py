"""Generate chapters/teachers.md from the chapters' exercises.

Usage: python tools/teachers.py [--check]

The teachers' page is tools/teachers_template.md with its placeholders filled
in from the notebooks, so it lists every exercise with its self-check and
never falls behind the chapters:

- ``{{exercises NN_slug}}`` -- every exercise of that chapter, as
  ``{ref}`label` (`chNN.check`)``, in order; ``{{exercises NN_slug label1 label2}}``
  those only, and ``{{exercises NN_slug rest}}`` the ones no earlier
  placeholder listed (to split a chapter over two sessions);
- ``{{every exercise}}`` -- a section per chapter of the table of contents,
  with each exercise's label, self-check(s) and the first sentence of its
  question;
- ``{{without self-check}}`` -- the exercises that have none (reasoning, graded
  by hand), and ``{{without self-check count}}`` how many.

``--check`` writes nothing and exits 1 if chapters/teachers.md is not what
the template and the chapters give (the build runs the generator; the test
suite runs the check).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("teachers_template.md")
TARGET = ROOT / "chapters" / "teachers.md"
EXERCISE = re.compile(r"(?<![`:])(?=(?:`{3,}|:{3,})\{exercise\})")
CHECK = re.compile(r"""check\(\s*['"](ch\d\d\.\w+)""")
PLACEHOLDER = re.compile(r"\{\{exercises ([0-9A-Za-z_]+)((?: [\w-]+)*)\}\}")
#: Roles whose value only a kernel knows, where the notebook stores none: shown as an ellipsis in the summary.
#: The longest first sentence the page quotes whole (in characters); a longer one ends in an ellipsis.
QUOTE_MAX = 400
COMPUTED = re.compile(r"\{(?:eval|glue(?::\w+)?)\}`[^`]*`")
#: A stored value comes in escaped for MyST (every punctuation mark behind a backslash); in a quoted sentence these
#: marks mean nothing to MyST, so the page shows them bare ("1,557,611,200", not "1\,557\,611\,200").
HARMLESS_ESCAPE = re.compile(r"\\([,./()':;?!\"])")
MATH = re.compile(r"(\$[^$]*\$)")


def plain(sentence: str) -> str:
    r"""``sentence`` with the escapes of harmless punctuation removed outside math; the others (``\*``, ``\[`` ...) stay.

    >>> plain(r"GPT-2 XL (1\,557\,611\,200 parameters) at 0\.1 s, 150 GB\/s \(nvlink2\), 2\*3, $a\,b$")
    'GPT-2 XL (1,557,611,200 parameters) at 0.1 s, 150 GB/s (nvlink2), 2\\*3, $a\\,b$'
    """
    return "".join(part if MATH.fullmatch(part) else HARMLESS_ESCAPE.sub(r"\1", part) for part in MATH.split(sentence))


def exercises(path: Path) -> list[dict]:
    """Each exercise of a notebook, in order: label, self-check ids, first sentence of the question (with the
    values the chapter computed, as its stored outputs show them; "…" where none is stored)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from inline_values import substitute

    cells = substitute(nbformat.read(path, as_version=4), path.name)[0].cells
    text = "\n".join(c.source for c in cells)
    found = []
    for part in EXERCISE.split(text)[1:]:
        label = re.search(r":label:\s*(\S+)", part)
        end = re.search(r"\{solution-start\}|\n(?:`{3,}|:{3,})\{exercise\}", part[3:])
        body = part if end is None else part[: end.start() + 3]
        # the question: the lines after the directive's options, up to its closing fence
        lines = [line for line in body.splitlines()[1:] if line.strip() and not line.startswith(":")
                 and not line.startswith("```")]
        question = plain(COMPUTED.sub("…", " ".join(lines)))
        sentence = re.split(r"(?<=[.?!])\s", question, maxsplit=1)[0] if question else ""
        if len(sentence) > QUOTE_MAX:   # a sentence too long to quote whole: cut at a word, and say so
            sentence = sentence[:QUOTE_MAX].rsplit(" ", 1)[0].rstrip(",;:") + " …"
        found.append({"label": label.group(1) if label else "", "checks": list(dict.fromkeys(CHECK.findall(part))),
                      "question": sentence})
    return found


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter notebooks, in the order of the table of contents."""
    sys.path.insert(0, str(root / "tools"))
    from site_pages import toc_pages

    return [root / f"{p}.ipynb" for p in toc_pages(root / "_toc.yml") if (root / f"{p}.ipynb").is_file()]


def _ref(ex: dict) -> str:
    checks = ", ".join(f"`{c}`" for c in ex["checks"])
    return f"{{ref}}`{ex['label']}`" + (f" ({checks})" if checks else "")


def render(template: str, root: Path = ROOT) -> str:
    """The teachers' page from the template and the chapters."""
    by_chapter = {p.stem: exercises(p) for p in chapters(root)}
    for stem, found in by_chapter.items():
        for ex in found:
            if not ex["label"]:
                raise ValueError(f"{stem}: an exercise has no :label:")

    listed: set[str] = set()

    def fill(m: re.Match) -> str:
        stem, picks = m.group(1), m.group(2).split()
        if stem not in by_chapter:
            raise ValueError(f"teachers template names {stem}, which is not a chapter of _toc.yml")
        found = by_chapter[stem]
        if picks and picks != ["rest"]:
            labels = {ex["label"] for ex in found}
            for label in picks:
                if label not in labels:
                    raise ValueError(f"teachers template names exercise {label}, which {stem} does not have")
            found = [ex for ex in found if ex["label"] in picks]
        elif picks == ["rest"]:
            found = [ex for ex in found if ex["label"] not in listed]
        listed.update(ex["label"] for ex in found)
        return ", ".join(_ref(ex) for ex in found)

    out = PLACEHOLDER.sub(fill, template)
    sections = []
    for stem, found in by_chapter.items():
        if not found:
            continue
        rows = "\n".join(f"| {_ref(ex)} | {ex['question'].replace('|', '/')} |" for ex in found)
        sections.append(f"### {{doc}}`{stem}`\n\n| Exercise (self-check) | Question |\n| --- | --- |\n{rows}\n")
    out = out.replace("{{every exercise}}", "\n".join(sections).rstrip("\n"))
    unchecked = [ex for found in by_chapter.values() for ex in found if not ex["checks"]]
    out = out.replace("{{without self-check count}}", str(len(unchecked)))
    out = out.replace("{{without self-check}}", ", ".join(_ref(ex) for ex in unchecked))
    if "{{assignments}}" in out:
        out = out.replace("{{assignments}}", assignment_tables(chapters(root)))
    return out


def _sentence(text: str) -> str:
    """A hint as a sentence: ending in its own "?" or "!", else in one full stop.

    >>> _sentence("Which link is slower?"), _sentence("Count both phases."), _sentence("Count both phases")
    ('Which link is slower?', 'Count both phases.', 'Count both phases.')
    """
    text = text.strip()
    return text if text.endswith(("?", "!")) else text.rstrip(".") + "."


def _given(g) -> str:
    values = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in g.values)
    return re.sub(r"\{[^}]*\}", f"[{values}]", g.text, count=1)


def assignment_tables(paths: list[Path]) -> str:
    """A table per chapter with exercises: each question of its assignment, points, own numbers, hints."""
    from assignments import MANUAL_POINTS, asks_reasoning, chapter_exercises, hints, manual_name, question_name, question_points

    from commlib.check import _load, code_of, is_whole

    sections = []
    for path in paths:
        stem = path.stem
        found = chapter_exercises(path)
        qids = [qid for ex in found for qid in ex["checks"]]
        manual = [ex for ex in found if asks_reasoning(ex)]
        coded = [(ex, code) for ex in found if (code := code_of(ex["label"], f"ch{stem[:2]}"))]
        if not found:
            continue
        rows = []
        for qid in qids:
            q = _load(qid)
            own = "; ".join(_given(g) for g in q.givens) or "none (the exercise's)"
            numeric = isinstance(q.solve(), (int, float))
            tol = ("exact (a whole number)" if is_whole(q.solve()) else f"{100 * q.rel_tol:g} %" if q.rel_tol and numeric
                   else "exact")
            said = " ".join(f"“{_sentence(h)}”" for h in hints(qid)).replace("|", "/")
            rows.append(f"| `{question_name(qid)}` (`{qid}`) | {question_points(qid)} | {own} | {tol} | {said} |")
        for ex, (name, _, reference) in coded:
            rows.append(f"| `{name}` ({{ref}}`{ex['label']}`, code) | {MANUAL_POINTS} | none (the exercise's) | "
                        f"graded by hand | none: the code is graded by hand, with the book's reference solution "
                        f"(`{reference.replace(':', '.')}`) as the rubric (step 5 above; not in the student's notebook) |")
        for ex in manual:
            what = "the reasoning beside its number" if ex["checks"] else "the answer"
            rows.append(f"| `{manual_name(ex['label'])}` ({{ref}}`{ex['label']}`, free response) | {MANUAL_POINTS} | "
                        f"none (the exercise's) | graded by hand | none: {what} is graded by hand, with the book's "
                        "solution as the rubric (step 5 above; not in the student's notebook) |")
        automatic, by_hand = sum(question_points(qid) for qid in qids), MANUAL_POINTS * (len(manual) + len(coded))
        split = (f"{automatic} graded automatically, {by_hand} by hand" if automatic and by_hand
                 else "all graded automatically" if automatic else "all by hand")
        sections.append(f"### Assignment {{doc}}`{stem}` ({automatic + by_hand} points: {split})\n\n"
                        "| Question | Points | Numbers per student | Tolerance | Hints for wrong answers |\n"
                        "| --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")
    return ("Each assignment's questions, with their points, the numbers each student draws "
            "and the hints a wrong answer gets (besides those every numeric question gets: a factor "
            "n/(n-1) or 2 of the formula, and the unit slips bits for bytes, kB for KiB, MB for MiB, "
            "GB for GiB, a prefix off by 1000, a percent for a fraction or a ratio; and, where the answer reads "
            "a model's parameter count, a rounded count, told to use the exact one the notebook gives).\n\n"
            + "\n".join(sections).rstrip("\n"))


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=f"Without --check, writes {TARGET.relative_to(ROOT)}.")
    parser.add_argument("--check", action="store_true",
                        help=f"write nothing; exit 1 if {TARGET.relative_to(ROOT)} is not what the template and the "
                             "chapters give")
    args = parser.parse_args(argv)
    text = render(TEMPLATE.read_text(encoding="utf-8"))
    if args.check:
        if TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is out of date: run python tools/teachers.py")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
