"""A takeaway that compares or concludes links to its evidence on the "How we know" page.

Every bullet of a chapter's Takeaways box that compares (beats, wins, faster, better, cuts, ...) must
link to a claim's entry, ``{ref}`how we know <claim-...>```, and every such link must name a claim
of the registry (``commlib.experiments.claims``), so that the page has the entry.
"""

import json
import re
from pathlib import Path

import pytest

from commlib.experiments import claims

ROOT = Path(__file__).parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("0*.ipynb"))
COMPARES = re.compile(r"\b(beats?|wins?|outperforms?|faster|slower|better|worse|improves?|cuts?|levels? off|"
                      r"higher error|lower error)\b", re.I)
LINK = re.compile(r"<(claim-[a-z0-9-]+)>")


def label(key: str) -> str:
    return "claim-" + key.replace(".", "-").replace("_", "-").lower()


def takeaways(path: Path) -> list[str]:
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        text = "".join(cell["source"])
        if "{admonition} Takeaways" in text:
            body = re.split(r"\n(?:```|:::)\s*\n", text.split("{admonition} Takeaways", 1)[1])[0]
            return [b.strip() for b in re.split(r"\n[-*] ", "\n" + body)[1:]]
    return []


def test_every_chapter_has_takeaways():
    assert all(takeaways(p) for p in CHAPTERS)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_comparing_takeaway_links_to_its_claim(path):
    labels = {label(k) for k in claims.load()}
    for bullet in takeaways(path):
        links = LINK.findall(bullet)
        if COMPARES.search(re.sub(r"\{eval\}`[^`]*`", "", bullet)):
            assert links, f"{path.name}: a takeaway compares without its evidence: {bullet[:160]!r}"
        missing = [x for x in links if x not in labels]
        assert not missing, f"{path.name}: links to claims that are not registered: {missing}"


def test_the_check_finds_an_unlinked_comparison():
    assert COMPARES.search("the ring beats the tree") and not COMPARES.search("the lower bound of any all-reduce")
