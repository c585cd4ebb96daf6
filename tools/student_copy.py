"""Write the students' copy of the chapters: every notebook with its solutions removed.

Usage: python tools/student_copy.py [chapters] [_build/student]

What counts as a solution (the forms the chapters use, see CONTRIBUTING.md):

* a code cell tagged ``solution``;
* everything between a ``{solution-start}`` directive and the matching
  ``{solution-end}`` directive, the directives included -- in one markdown
  cell or across several cells (code cells in between are dropped too);
* a whole ``{solution}`` directive block.

Directives may be written with backtick fences (```` ```{solution-start} ````)
or colon fences (``:::{solution}``), of any fence length. Markdown cells left
empty are dropped; every other cell, with its outputs, is kept as it is.
An unbalanced ``solution-start`` / ``solution-end`` is an error, so a
half-removed solution can never reach students.

>>> strip_markdown("Q?\\n```{solution-start} ex1\\n:class: dropdown\\n```\\nA!\\n```{solution-end}\\n```\\nNext.")[0]
'Q?\\nNext.'
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

#: An opening directive fence: indentation, fence (``` or :::, any length), directive name, argument.
_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}(?P<arg>.*)$")
SOLUTION = "solution"
START = "solution-start"
END = "solution-end"


def _closes(line: str, fence: str) -> bool:
    """True when ``line`` closes a block opened with ``fence`` (same character, at least as long)."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _skip_block(lines: list[str], i: int, fence: str) -> int:
    """Index just after the line closing the block whose opening line is ``lines[i]``."""
    j = i + 1
    while j < len(lines) and not _closes(lines[j], fence):
        j += 1
    if j == len(lines):
        raise ValueError(f"directive opened with {fence!r} is never closed: {lines[i].strip()!r}")
    return j + 1


def strip_markdown(text: str, in_solution: bool = False) -> tuple[str, bool]:
    """Remove solutions from one markdown cell.

    ``in_solution`` says whether the cell starts inside a ``solution-start`` /
    ``solution-end`` pair opened in an earlier cell; the second value
    returned says whether the cell ends inside one.
    """
    lines = text.split("\n")
    kept: list[str] = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        name = m.group("name") if m else None
        if name == START:
            if in_solution:
                raise ValueError(f"nested {START}: {lines[i].strip()!r}")
            i = _skip_block(lines, i, m.group("fence"))
            in_solution = True
        elif name == END:
            if not in_solution:
                raise ValueError(f"{END} without a {START}: {lines[i].strip()!r}")
            i = _skip_block(lines, i, m.group("fence"))
            in_solution = False
        elif name == SOLUTION and not in_solution:
            i = _skip_block(lines, i, m.group("fence"))
        elif in_solution:
            i = _skip_block(lines, i, m.group("fence")) if m else i + 1
        else:
            kept.append(lines[i])
            i += 1
    return "\n".join(kept).strip("\n"), in_solution


def is_solution_cell(cell) -> bool:
    """A code cell tagged ``solution``."""
    return cell.cell_type == "code" and SOLUTION in cell.get("metadata", {}).get("tags", [])


def student_notebook(nb):
    """A copy of ``nb`` without solutions; raises ValueError on an unbalanced solution-start/-end."""
    out = nbformat.from_dict(nb)
    cells = []
    in_solution = False
    for cell in out.cells:
        if cell.cell_type == "markdown":
            text, in_solution_after = strip_markdown(cell.source, in_solution)
            if text.strip():
                cell.source = text
                cells.append(cell)
            in_solution = in_solution_after
        elif in_solution or is_solution_cell(cell):
            continue
        else:
            cells.append(cell)
    if in_solution:
        raise ValueError(f"{START} without a {END} before the end of the notebook")
    out.cells = cells
    return out


def write_student_copy(src: Path, dest: Path) -> list[Path]:
    """Write a student copy of every ``src/*.ipynb`` into ``dest``; return the files written."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(Path(src).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        try:
            student = student_notebook(nb)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from exc
        target = dest / path.name
        nbformat.write(student, target)
        written.append(target)
    return written


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else Path("chapters")
    dest = Path(argv[1]) if len(argv) > 1 else Path("_build/student")
    written = write_student_copy(src, dest)
    for path in written:
        print(f"wrote {path}")
    print(f"{len(written)} notebooks without solutions in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
