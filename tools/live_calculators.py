"""Sphinx extension (loaded from _config.yml): ship commlib's pure-Python modules to the website.

The live calculators (tools/site_assets/live-calculators.js) run the book's own
functions in the page under Pyodide, whose core has the standard library and
nothing else. At the end of every HTML build this writes
``_static/lib/gotw-commlib.js``: the source of every commlib module that
imports only the standard library and other such modules (found by
``commlib.views.calculator.pure_python_modules``), as one classic script, so
that a page served or opened from disk (file://) can load it with a
``<script>`` tag. The page writes the files into Pyodide's file system.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pure_sources(root: Path = ROOT) -> dict[str, str]:
    """``{"commlib/x.py": source}`` for every commlib module the website's Python can import.

    >>> files = pure_sources()
    >>> "commlib/views/results.py" in files and "commlib/cost.py" in files
    True
    >>> "commlib/views/calculator.py" in files   # needs ipywidgets
    False
    >>> "commlib/sgd/calculator_model.py" in files     # the SGD calculator's numpy-free model
    True
    """
    from commlib.views.calculator import pure_python_modules

    files: dict[str, str] = {}
    for path in sorted((root / "commlib").rglob("*.py")):
        rel = path.relative_to(root)
        module = ".".join(rel.with_suffix("").parts)
        module = module.removesuffix(".__init__")
        if pure_python_modules(module) is not None:
            files[rel.as_posix()] = path.read_text(encoding="utf-8")
    return files


def write_script(outdir: Path, root: Path = ROOT) -> Path:
    """Write ``_static/lib/gotw-commlib.js`` under ``outdir``; return its path."""
    target = outdir / "_static" / "lib" / "gotw-commlib.js"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("window.gotwCommlib = " + json.dumps(pure_sources(root), sort_keys=True) + ";\n",
                      encoding="utf-8")
    return target


def _build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        write_script(Path(app.outdir))


def setup(app):
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
