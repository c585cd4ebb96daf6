"""tools/parallel_execution.py: a small book built with it runs its notebooks side by side, the one marked
"alone" after them, and every page from myst-nb's cache with the outputs a plain run gives."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import parallel_execution  # noqa: E402

# Each notebook prints when its one cell started and ended, then a value of its own.
CELL = ("import time\n"
        "start = time.time()\n"
        "time.sleep(3)\n"
        "print(round(start, 3), round(time.time(), 3), {value})\n")


def _notebook(value: int) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "cells": [{"cell_type": "markdown", "id": "title", "metadata": {}, "source": f"# Page {value}"},
                      {"cell_type": "code", "id": "run", "metadata": {}, "execution_count": None, "outputs": [],
                       "source": CELL.format(value=value)}]}


def _book(folder: Path) -> None:
    (folder / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'tools')!r})\n"
        "extensions = ['myst_nb', 'parallel_execution']\n"
        "nb_execution_mode = 'cache'\n"
        "parallel_execution_alone = ['alone']\n", encoding="utf-8")
    (folder / "index.md").write_text("# Book\n\n```{toctree}\none\ntwo\nalone\n```\n", encoding="utf-8")
    for value, name in enumerate(("one", "two", "alone"), start=1):
        (folder / f"{name}.ipynb").write_text(json.dumps(_notebook(value)), encoding="utf-8")


def _build(folder: Path):
    from sphinx.application import Sphinx

    app = Sphinx(str(folder), str(folder), str(folder / "_build" / "html"), str(folder / "_build" / "doctrees"),
                 "html", status=None, warning=None, freshenv=True)
    app.build()
    return app


def _runs(folder: Path) -> dict:
    """Each notebook's cached output: its cell's start, end and value."""
    from jupyter_cache import get_cache

    cache = get_cache(str(folder / "_build" / ".jupyter_cache"))
    runs = {}
    for record in cache.list_cache_records():
        notebook = cache.get_cache_bundle(record.pk).nb
        start, end, value = notebook.cells[0].outputs[0]["text"].split()
        runs[Path(record.uri).stem] = (float(start), float(end), int(value))
    return runs


@pytest.mark.skipif(parallel_execution._workers() < 2, reason="one core: the pool is not used")
def test_notebooks_run_side_by_side_and_the_alone_one_after(tmp_path):
    _book(tmp_path)
    app = _build(tmp_path)
    runs = _runs(tmp_path)
    assert sorted(runs) == ["alone", "one", "two"]
    assert [runs[n][2] for n in ("one", "two", "alone")] == [1, 2, 3]       # each page's own output
    (s1, e1, _), (s2, e2, _), (s3, _, _) = runs["one"], runs["two"], runs["alone"]
    assert s1 < e2 and s2 < e1                       # the two pooled notebooks overlapped in time
    assert s3 >= max(e1, e2)                         # the one marked "alone" ran after both had ended
    # Every page was read from the cache: nothing left for the pool, and the pages show the outputs.
    assert parallel_execution._to_run(app, app.env, ["one", "two", "alone"]) == []
    page = (tmp_path / "_build" / "html" / "two.html").read_text(encoding="utf-8")
    assert f"{runs['two'][0]} {runs['two'][1]} 2" in page


def test_nothing_is_pooled_outside_cache_mode(tmp_path):
    _book(tmp_path)

    class Config:
        execution_mode = "force"

    class Env:
        mystnb_config = Config()

    assert parallel_execution._to_run(None, Env(), ["one", "two"]) == []
