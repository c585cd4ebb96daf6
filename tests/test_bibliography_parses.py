"""The bibliography parses, and every key the chapters cite is in it (a lost brace stops the build)."""

import re
from pathlib import Path

from pybtex.database import parse_file

ROOT = Path(__file__).parents[1]


def test_the_bibliography_parses_and_holds_every_cited_key():
    keys = set(parse_file(str(ROOT / "references.bib")).entries)
    cited = set()
    for path in list((ROOT / "chapters").glob("*.ipynb")) + list((ROOT / "chapters").glob("*.md")) + [ROOT / "index.md"]:
        for group in re.findall(r"\{cite(?::[pt])?\}`([^`]+)`", path.read_text(encoding="utf-8")):
            cited.update(key.strip() for key in group.split(","))
    assert cited, "no citations found"
    assert not cited - keys, sorted(cited - keys)
