"""Convert the chapters mechanically to how the book is read in JupyterLab, Colab and on the website.

Usage: python tools/convert_chapters.py [chapters/NN_x.ipynb ...]   (default: every chapter)

Idempotent: a converted chapter is left as it is. What it does to each notebook:

1. **Setup cell** (the first code cell): its first lines install the book's
   library where it is missing (a bare Colab runtime), from the repository
   URL set once in ``_config.yml`` (``repository.url``), with the ``mpi``
   extra for a chapter that imports ``commlib.lab``; on Colab it turns on
   the custom widget manager. Running it twice installs nothing twice. It
   imports nothing Colab lacks: ``from myst_nb import glue`` becomes
   ``from commlib.views import prose as prose_views``.
2. **Numbers in the prose**: every ``glue("key", value, display=False)`` in a
   code cell becomes ``prose_views.keep(...)`` -- a run of two or more such
   lines becomes one ``prose_views.keep(key=value, ...)`` call -- and every
   ``{glue:text}`key:fmt``` / ``{glue:md}`key``` / ``{glue}`key``` in a
   markdown cell becomes the inline expression
   ``{eval}`prose_views.text("key", "fmt")``` (``markdown``, ``value``), which
   JupyterLab (jupyterlab-myst) evaluates and the website shows from the
   stored results (tools/execute_notebooks.py stores them, tools/inline_values.py
   shows them).
3. **Solutions collapsed in JupyterLab**: jupyterlab-myst renders the
   ``{solution-start}`` / ``{solution-end}`` markers itself (the solution text
   folded in a dropdown); a solution's code cells between them get
   ``jupyter.source_hidden`` and ``outputs_hidden``, so JupyterLab shows them
   folded until the reader opens them, and a first line ``# Solution code``
   so that the folded cell shows that line, not the answer. The website
   keeps its dropdowns.

Afterwards re-store the outputs (``tools/execute_notebooks.py``), which also
stores the values the inline expressions show.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
ALIAS = "prose_views"
SETUP_MARK = "# The book's library, installed where it is missing"

GLUE_ROLE = re.compile(r"\{glue(?::(text|md))?\}`([^`]+)`")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def repository_url(root: Path = ROOT) -> str:
    """The repository URL, set once in _config.yml."""
    return yaml.safe_load((root / "_config.yml").read_text())["repository"]["url"]


def setup_header(url: str, extras: list[str], modules: list[str]) -> str:
    """The first lines of a chapter's setup cell."""
    spec = "commlib" + (f"[{','.join(extras)}]" if extras else "") + f" @ git+{url}"
    missing = " or ".join(f'importlib.util.find_spec("{m}") is None' for m in modules)
    return "\n".join([
        f"{SETUP_MARK} (a bare Colab runtime); running this again installs nothing.",
        "import importlib.util",
        "import sys",
        f"if {missing}:",
        f'    %pip install -q "{spec}"',
        "    importlib.invalidate_caches()",
        'if "google.colab" in sys.modules:  # Colab shows ipywidgets 8 with its custom widget manager',
        "    from google.colab import output",
        "    output.enable_custom_widget_manager()",
    ])


def convert_setup(source: str, url: str) -> str:
    """The setup cell with the new header and without the myst_nb import."""
    lines = source.splitlines()
    if lines and lines[0].startswith(SETUP_MARK):   # already converted: drop the old header, rebuild it
        end = next(i for i, line in enumerate(lines) if line.startswith("    output.enable_custom_widget_manager()"))
        lines = lines[end + 1:]
    else:
        # the old guard: import sys / if "google.colab" ...: / %pip install ...
        while lines and (lines[0].strip() == "import sys" or lines[0].startswith('if "google.colab"')
                         or lines[0].lstrip().startswith("%pip install")):
            lines = lines[1:]
    body = "\n".join(lines)
    body = re.sub(r"^from myst_nb import glue\n", f"from commlib.views import prose as {ALIAS}\n", body + "\n",
                  flags=re.M).rstrip("\n")
    lab = "commlib.lab" in body or "from commlib import lab" in body
    header = setup_header(url, ["mpi"] if lab else [], ["commlib", "mpi4py"] if lab else ["commlib"])
    return header + "\n" + body


# --------------------------------------------------------------------------- glue calls in code
def _masked(source: str) -> str:
    """IPython magics and shell lines turned into comments of the same length, so ``ast`` can parse."""
    return "\n".join("#" + line[1:] if line.lstrip().startswith(("%", "!")) and line.strip() else line
                     for line in source.split("\n"))


def _glue_call(node: ast.AST) -> ast.Call | None:
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        if isinstance(call.func, ast.Name) and call.func.id == "glue" and len(call.args) == 2:
            kws = {k.arg: k.value for k in call.keywords}
            if set(kws) == {"display"} and isinstance(kws["display"], ast.Constant) and kws["display"].value is False:
                return call
    return None


def _chars(line: str, col: int) -> int:
    """``ast``'s column (UTF-8 bytes) as a character index into ``line``."""
    return len(line.encode()[:col].decode(errors="ignore"))


def _offset(lines: list[str], lineno: int, col: int) -> int:
    return sum(len(line) + 1 for line in lines[: lineno - 1]) + _chars(lines[lineno - 1], col)


def convert_code(source: str) -> str:
    """``glue(..., display=False)`` calls -> ``prose_views.keep(...)``; runs of them -> one call."""
    if "glue(" not in source:
        return source
    masked = _masked(source)
    tree = ast.parse(masked)
    lines = source.split("\n")
    edits: list[tuple[int, int, str]] = []   # (start offset, end offset, text)

    def seg(node) -> str:
        return ast.get_source_segment(source, node)

    def visit_body(body: list[ast.stmt]) -> None:
        i = 0
        while i < len(body):
            run = []
            j = i
            while j < len(body) and (call := _glue_call(body[j])) is not None and isinstance(call.args[0], ast.Constant) \
                    and isinstance(call.args[0].value, str) and IDENT.match(call.args[0].value) \
                    and (not run or body[j].lineno == body[j - 1].end_lineno + 1):
                run.append(body[j])
                j += 1
            if len(run) >= 2:
                indent = " " * run[0].col_offset
                items = []
                for stmt in run:
                    call = stmt.value
                    end_line = lines[stmt.end_lineno - 1]
                    tail = end_line[_chars(end_line, stmt.end_col_offset):].strip()
                    comment = f"  {tail}" if tail.startswith("#") else ""
                    items.append(f"{indent}    {call.args[0].value}={seg(call.args[1])},{comment}")
                text = f"{indent}{ALIAS}.keep(\n" + "\n".join(items) + f"\n{indent})"
                start = _offset(lines, run[0].lineno, 0)
                last = run[-1]
                end = _offset(lines, last.end_lineno, len(lines[last.end_lineno - 1].encode()))
                edits.append((start, end, text))
                i = j
                continue
            stmt = body[i]
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    visit_body(inner)
            for handler in getattr(stmt, "handlers", []) or []:
                visit_body(handler.body)
            call = _glue_call(stmt)
            if call is not None:
                text = f"{ALIAS}.keep({seg(call.args[0])}, {seg(call.args[1])})"
                start = _offset(lines, call.lineno, call.col_offset)
                end = _offset(lines, call.end_lineno, call.end_col_offset)
                edits.append((start, end, text))
            i += 1

    visit_body(tree.body)
    out = source
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    leftover = [n for n in ast.walk(ast.parse(_masked(out))) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name) and n.func.id == "glue"]
    if leftover:
        raise ValueError(f"glue call(s) this tool cannot convert at line(s) {[n.lineno for n in leftover]}:\n{out}")
    return out


# --------------------------------------------------------------------------- roles in markdown
def convert_markdown(source: str) -> str:
    """``{glue:text}`key:fmt``` -> ``{eval}`prose_views.text("key", "fmt")```, and ``{glue:md}``/``{glue}`` alike."""

    def repl(m: re.Match) -> str:
        kind, content = m.group(1), m.group(2).strip()
        if kind == "text":
            key, _, spec = content.partition(":")
            args = f'"{key}"' + (f', "{spec}"' if spec else "")
            return f"{{eval}}`{ALIAS}.text({args})`"
        if kind == "md":   # {glue:md}`key:myst` / `key:commonmark`: the suffix names the flavour, MyST here
            return f'{{eval}}`{ALIAS}.markdown("{content.split(":")[0]}")`'
        return f'{{eval}}`{ALIAS}.value("{content}")`'

    return GLUE_ROLE.sub(repl, source)


SOLUTION_LINE = "# Solution code"


def fold_solutions(nb) -> int:
    """Fold (JupyterLab's source_hidden/outputs_hidden) every code cell between {solution-start} and {solution-end}."""
    inside, folded = False, 0
    for cell in nb.cells:
        starts = cell.cell_type == "markdown" and "{solution-start}" in cell.source
        ends = cell.cell_type == "markdown" and "{solution-end}" in cell.source
        if starts:
            inside = True
        if cell.cell_type == "markdown":
            meta = cell.metadata.get("jupyter", {})
            meta.pop("source_hidden", None)
            if not meta:
                cell.metadata.pop("jupyter", None)
        elif inside:
            cell.metadata.setdefault("jupyter", {}).update(source_hidden=True, outputs_hidden=True)
            if not cell.source.startswith(SOLUTION_LINE):
                cell.source = SOLUTION_LINE + "\n" + cell.source
            folded += 1
        if ends:
            inside = False
    return folded


def convert(path: Path, url: str) -> bool:
    """Convert one notebook in place; return whether it changed."""
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    first_code = True
    for cell in nb.cells:
        if cell.cell_type == "code":
            if first_code:
                cell.source = convert_setup(cell.source, url)
                first_code = False
            cell.source = convert_code(cell.source)
        elif cell.cell_type == "markdown":
            cell.source = convert_markdown(cell.source)
    fold_solutions(nb)
    after = nbformat.writes(nb)
    if after != before:
        nbformat.write(nb, path)
        return True
    return False


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    url = repository_url()
    for path in paths:
        print(f"{path}: {'converted' if convert(path, url) else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
