"""How many computed values each prose paragraph of a chapter carries.

A paragraph that quotes many computed numbers drowns its idea: the reader
should meet one idea, a few numbers that show it, and find the rest in a
small table, a figure or the calculator. This module counts, in each paragraph
of a notebook's markdown cells, the numbers the reader sees where the MyST
inline expressions (``{eval}`...```, the book's only way of putting a computed
value into prose) stand: one expression can carry several (a claim's sentence
with its margins, "1.2 ms = 1,200 µs"), and each counts. The values are the
ones stored in the cell's ``user_expressions``; an expression with no stored
value counts as one. Tables (lines
that start with ``|``), figure captions (a paragraph set wholly in italics, or
the body of a ``figure`` directive) and code or included source are not
prose and are skipped; exercises, solutions and admonitions are prose and count.

Run ``python tools/prose_density.py [chapters/NN_x.ipynb ...]`` to list the
paragraphs above the limit.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

LIMIT = 5
#: A table cell that shows more numbers than this is a sentence in disguise, not a table's entry.
CELL_LIMIT = 4
EVAL = re.compile(r"\{eval\}`([^`]*)`")
NUMBER = re.compile(r"(?<![\w.\-])[-+\u2212]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
MARKUP = re.compile(r"\{(?:ref|cite|numref|eq|term)\}`[^`]*`|<[^>]*>|\(#[^)]*\)")
CODE_DIRECTIVES = {"literalinclude", "code-cell", "code", "math", "figure", "glue:figure", "mermaid"}
BLANK = re.compile(r"\n[ \t]*\n")


def is_caption(paragraph: str) -> bool:
    """A paragraph set wholly in italics (``*...*``, not bold) is a figure caption.

    >>> is_caption("*Figure 2: the ring.*"), is_caption("**Bold** start, then text.")
    (True, False)
    """
    p = paragraph.strip()
    return p.startswith("*") and not p.startswith("**") and p.endswith("*") and not p.endswith("**")


def _prose_lines(markdown: str) -> list[str]:
    """The lines of ``markdown`` that are prose: directives' fences and options dropped, code and figures skipped.

    Fences are matched as a stack, so a directive's closing fence is never taken for the opening of
    a code block (an admonition right after another keeps its text).
    """
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # (fence, skipped?)
    for line in markdown.splitlines():
        fence = re.match(r"^\s*(`{3,}|:{3,})\s*(\{([\w:-]+)\})?(.*)$", line)
        skipping = any(skip for _, skip in stack)
        if fence:
            marks, name = fence.group(1), fence.group(3)
            out.append("")  # a fence ends a paragraph
            if name is None and stack and stack[-1][0] == marks:
                stack.pop()
                continue
            if name is None and not fence.group(4).strip() and stack and marks[0] == stack[-1][0][0]:
                stack.pop()
                continue
            stack.append((marks, skipping or name is None or name in CODE_DIRECTIVES))
            continue
        if skipping or (stack and re.match(r"^\s*:[\w-]+:", line)):
            continue
        out.append(line)
    return out


def paragraphs(markdown: str) -> list[str]:
    """The prose paragraphs of one markdown cell: tables, captions, code and figures removed.

    >>> paragraphs("One.\\n\\n| a | b |\\n|---|---|\\n\\n*A caption.*\\n\\n```{literalinclude} x.py\\n```\\n\\nTwo.")
    ['One.', 'Two.']
    >>> paragraphs("```{admonition} A\\nFirst.\\n```\\n```{admonition} B\\n:class: tip\\nSecond.\\n```")
    ['First.', 'Second.']
    """
    out = []
    for block in BLANK.split("\n".join(_prose_lines(markdown))):
        lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith("|")]
        p = "\n".join(lines).strip()
        if p and not is_caption(p):
            out.append(p)
    return out


def numbers_in(result: dict | None) -> int:
    """How many numbers a stored inline result shows (links and citations aside); one if nothing is stored.

    >>> numbers_in({"status": "ok", "data": {"text/plain": "'1.2 ms = 1,200 µs'"}})
    2
    >>> numbers_in({"status": "ok", "data": {"text/markdown": "ResNet-50 **beats** fp16 ({ref}`how <claim-x-1>`)"}})
    0
    >>> numbers_in(None)
    1
    """
    if not result or result.get("status") != "ok":
        return 1
    data = result.get("data", {})
    text = "".join(data.get("text/markdown", data.get("text/plain", "")))
    return len(NUMBER.findall(MARKUP.sub("", text)))


def _shown(result: dict | None) -> str:
    if not result or result.get("status") != "ok":
        return "#"
    data = result.get("data", {})
    return MARKUP.sub("", "".join(data.get("text/markdown", data.get("text/plain", ""))))


def is_list_of_values(entry: str, stored: dict[str, dict]) -> bool:
    """Whether a table entry, filled in, is a plain list of values (a grid of rates, a set of K), not a sentence.

    >>> stored = {'v("g")': {"status": "ok", "data": {"text/markdown": "0.01, 0.02, 0.05, 0.1, 0.2"}}}
    >>> is_list_of_values('{eval}`v("g")`', stored), is_list_of_values('{eval}`v("g")` at best, ahead', stored)
    (True, False)
    """
    text = EVAL.sub(lambda m: _shown(stored.get(m.group(1))), entry)
    return re.search(r"[A-Za-z]{3,}", text) is None


def count(paragraph: str, stored: dict[str, dict]) -> int:
    """The numbers ``paragraph``'s inline expressions show, given the cell's stored results by expression."""
    return sum(numbers_in(stored.get(expression)) for expression in EVAL.findall(paragraph))


def _markdown_cells(path: Path):
    """(index, cell, its stored inline results by expression) for each markdown cell of the notebook ``path``."""
    for index, cell in enumerate(json.loads(Path(path).read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] == "markdown":
            yield index, cell, {e.get("expression"): e.get("result")
                                for e in cell.get("metadata", {}).get("user_expressions", [])}


def dense(path: Path, limit: int = LIMIT) -> list[tuple[int, int, str]]:
    """(cell index, count, first words) of every paragraph of ``path`` showing more than ``limit`` computed numbers."""
    found = []
    for index, cell, stored in _markdown_cells(path):
        for p in paragraphs("".join(cell["source"])):
            n = count(p, stored)
            if n > limit:
                found.append((index, n, EVAL.sub("#", p)[:90].replace("\n", " ")))
    return found


def crowded_cells(path: Path, limit: int = CELL_LIMIT) -> list[tuple[int, int, str]]:
    """(cell index, count, the table cell) of every table entry of ``path``'s markdown that shows more than ``limit`` numbers.

    Tables are exempt from the paragraph limit because each entry is one value (or a plain list of
    values, such as a grid of rates); a whole sentence of results put into one entry is a paragraph
    again, and is counted as one.
    """
    found = []
    for index, cell, stored in _markdown_cells(path):
        for line in "".join(cell["source"]).splitlines():
            if line.lstrip().startswith("|"):
                for entry in re.split(r"(?<!\\)\|", line.strip().strip("|")):
                    n = count(entry, stored)
                    if n > limit and not is_list_of_values(entry, stored):
                        found.append((index, n, EVAL.sub("#", entry.strip())[:90]))
    return found


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(Path("chapters").glob("0*.ipynb"))
    bad = 0
    for path in paths:
        for index, n, start in dense(path):
            bad += 1
            print(f"{path.name} cell {index}: {n} computed numbers (limit {LIMIT}): {start}...")
        for index, n, entry in crowded_cells(path):
            bad += 1
            print(f"{path.name} cell {index}: a table entry shows {n} computed numbers (limit {CELL_LIMIT}): {entry}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
