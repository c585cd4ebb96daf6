"""tools/convert_chapters.py: the mechanical conversion of the chapters, on small examples."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import convert_chapters as cc  # noqa: E402

URL = "https://example.org/book"


def test_runs_of_glue_lines_become_one_keep_call_with_their_comments():
    source = ('x = 2\nglue("a_ms", 1e3 * x, display=False)\nglue("b", f(x,\n  3), display=False)  # why\n'
              'for k in (1, 2):\n    glue(f"c{k}", k / 2, display=False)\n')
    out = cc.convert_code(source)
    assert "glue(" not in out
    assert "prose_views.keep(\n    a_ms=1e3 * x,\n    b=f(x,\n  3),  # why\n)" in out
    assert '    prose_views.keep(f"c{k}", k / 2)' in out
    namespace: dict = {"f": lambda a, b: a + b}
    kept: dict = {}

    class Prose:
        @staticmethod
        def keep(*pair, **values):
            kept.update(dict([pair]) if pair else {}, **values)

    namespace["prose_views"] = Prose
    exec(out, namespace)  # noqa: S102 - the converted cell runs
    assert kept == {"a_ms": 2000.0, "b": 5, "c1": 0.5, "c2": 1.0}
    assert cc.convert_code(out) == out   # idempotent


def test_magics_and_non_ascii_survive():
    source = '%matplotlib inline\nµ = 3\nglue("mu", µ, display=False)\n'
    assert cc.convert_code(source) == '%matplotlib inline\nµ = 3\nprose_views.keep("mu", µ)\n'


def test_roles_become_inline_expressions():
    text = "takes {glue:text}`t_ms:.1f` ms on {glue:text}`n` ranks; {glue:md}`verdict:myst`."
    assert cc.convert_markdown(text) == ('takes {eval}`prose_views.text("t_ms", ".1f")` ms on '
                                         '{eval}`prose_views.text("n")` ranks; {eval}`prose_views.markdown("verdict")`.')


def test_setup_cell_installs_from_the_one_url_and_imports_no_myst_nb():
    old = ('import sys\nif "google.colab" in sys.modules:  # fetch\n    %pip install -q "git+https://old"\n'
           '%matplotlib inline\nfrom myst_nb import glue\nfrom commlib.lab import runner\n')
    new = cc.convert_setup(old, URL)
    assert f'"commlib[mpi] @ git+{URL}"' in new and "myst_nb" not in new and "https://old" not in new
    assert 'importlib.util.find_spec("mpi4py") is None' in new
    assert "from commlib.views import prose as prose_views" in new
    assert cc.convert_setup(new, URL) == new


def test_solution_code_is_folded_and_markers_left_to_render(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(":::{exercise}\n:label: e\nQ?\n:::"),
                nbformat.v4.new_markdown_cell("```{solution-start} e\n:class: dropdown\n```\nA."),
                nbformat.v4.new_code_cell("1 + 1", metadata={"tags": ["solution"]}),
                nbformat.v4.new_markdown_cell("```{solution-end}\n```"),
                nbformat.v4.new_code_cell("2 + 2")]
    assert cc.fold_solutions(nb) == 1
    assert nb.cells[2].source.startswith(cc.SOLUTION_LINE + "\n")
    assert nb.cells[2].metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert "jupyter" not in nb.cells[1].metadata and "jupyter" not in nb.cells[4].metadata
    cc.fold_solutions(nb)
    assert nb.cells[2].source.count(cc.SOLUTION_LINE) == 1


def test_unconvertible_glue_is_reported():
    with pytest.raises(ValueError, match="cannot convert"):
        cc.convert_code('glue("x", 1)\n')
