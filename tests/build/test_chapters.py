"""Every chapter page shows at least one tested implementation, included from commlib with literalinclude."""

from __future__ import annotations

import re

import nbformat
import pytest
from conftest import ROOT, soup
from site_pages import html_path, source_path, toc_pages

CHAPTERS = [p for p in toc_pages() if (s := source_path(p)) is not None and s.suffix == ".ipynb"]
LITERALINCLUDE = re.compile(r"(?:`{3,}|:{3,})\{literalinclude\}\s+(\S+)\s*\n((?::[\w-]+:.*\n)*)")


@pytest.mark.parametrize("docname", CHAPTERS)
def test_chapter_shows_a_literalinclude_of_commlib(site, docname):
    text = "\n".join(c.source for c in nbformat.read(source_path(docname), as_version=4).cells
                     if c.cell_type == "markdown")
    found = LITERALINCLUDE.findall(text + "\n")
    assert found, f"{docname} includes no code with literalinclude"
    page = soup(site / html_path(docname))
    blocks = [b.get_text() for b in page.select("div.highlight") if not b.find_parent(class_="cell")]
    for target, options in found:
        assert "commlib/" in target, f"{docname}: literalinclude of {target}, not of commlib"
        assert (ROOT / "chapters" / target).resolve().is_file(), f"{docname}: {target} does not exist"
        name = re.search(r":pyobject:\s*(\S+)", options)
        if name and re.search(r":start-at:", options):
            # the core of a function, its input checks left out: its caption names it
            short = name.group(1).split(".")[-1]
            captions = [c.get_text() for c in page.select(".code-block-caption")]
            assert any(re.search(rf"\b{re.escape(short)}\b", c) for c in captions), (
                f"{docname}: the page does not name {name.group(1)} above its core from {target}")
        elif name:
            short = name.group(1).split(".")[-1]
            assert any(re.search(rf"\b(def|class) {re.escape(short)}\b", b) for b in blocks), (
                f"{docname}: the page does not show {name.group(1)} from {target}")


def test_the_lab_page_shows_this_builds_own_pytorch_runs(site):
    # the build installs PyTorch (requirements.txt), so the run made when the page was built has its gloo and DDP
    # parts: nothing on the page says they were left out, and the DDP comparison appears for this run too
    page = soup(site / html_path("chapters/08_mpi_lab"))
    outputs = " ".join(o.get_text(" ") for o in page.select("div.cell_output"))  # what the cells printed, not their code
    assert outputs and "is not installed here" not in outputs
    assert "This run was made on" in outputs  # the DDP part of this build's run printed its sentences
