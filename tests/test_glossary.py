"""The glossary (chapters/glossary.md): every term with its Chinese name and the chapter that defines it,
and no chapter uses a term before the chapter that teaches it without linking to it.

A use "links" when the paragraph of the chapter's first use of the term carries a ``{term}`` role
for it, or a ``{ref}`` to the defining chapter or to the glossary. Later uses in the same chapter
need no link: the reader has been pointed once.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
GLOSSARY = ROOT / "chapters" / "glossary.md"
CHAPTERS = sorted((ROOT / "chapters").glob("0*.ipynb"))
HAN = re.compile(r"[\u4e00-\u9fff]")
FENCE = re.compile(r"^(```+|:::+)\{(literalinclude|code-cell|code|math)\}.*?^\1\s*$", re.M | re.S)
PLAIN_FENCE = re.compile(r"^(```+)[^{\n]*\n.*?^\1\s*$", re.M | re.S)


def entries(text: str | None = None) -> list[tuple[tuple[str, ...], str, str]]:
    """(terms, definition, defining chapter label) of every glossary entry."""
    text = GLOSSARY.read_text(encoding="utf-8") if text is None else text
    body = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    out, terms, lines = [], [], []
    for line in body.splitlines()[1:]:
        if not line.strip():
            continue
        if line.startswith(":"):
            continue
        if not line.startswith(" "):
            if lines:
                out.append((tuple(terms), " ".join(lines), terms and ""))
                terms, lines = [], []
            terms.append(line.strip())
        else:
            lines.append(line.strip())
    if lines:
        out.append((tuple(terms), " ".join(lines), ""))
    result = []
    for terms_, definition, _ in out:
        m = re.search(r"Defined in \{ref\}`(ch-[a-z-]+)`", definition)
        result.append((terms_, definition, m.group(1) if m else ""))
    return result


def chapter_labels() -> dict[str, int]:
    labels = {}
    for index, path in enumerate(CHAPTERS):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for label in re.findall(r"^\((ch-[a-z-]+)\)=", "".join(cell["source"]), re.M):
                labels.setdefault(label, index)
    return labels


def prose_paragraphs(path: Path) -> list[str]:
    out = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            text = PLAIN_FENCE.sub("", FENCE.sub("", "".join(cell["source"])))
            out += [p for p in re.split(r"\n[ \t]*\n", text) if p.strip()]
    return out


def pattern(term: str) -> re.Pattern:
    flags = 0 if re.search(r"[A-Z]", term) else re.I
    return re.compile(r"(?<![\w-])" + re.escape(term) + r"(?:s|es)?(?![\w-])", flags)


def first_unlinked_use(paragraphs: list[str], terms: tuple[str, ...], label: str) -> str | None:
    """The first paragraph using one of ``terms`` if it does not link to ``label``, the glossary or the term."""
    for p in paragraphs:
        plain = re.sub(r"\{eval\}`[^`]*`", "", p)
        if any(pattern(t).search(plain) for t in terms):
            termed = " ".join(re.findall(r"\{term\}`([^`]*)`", p))
            target = "(?:" + re.escape(label) + "|glossary)"
            links = any(pattern(t).search(termed) for t in terms) \
                or re.search(r"\{ref\}`(?:[^`]*<)?" + target + ">?`", p)
            return None if links else p
    return None


def test_every_entry_has_a_chinese_name_and_a_defining_chapter():
    labels = chapter_labels()
    found = entries()
    assert len(found) >= 40
    for terms, definition, label in found:
        assert HAN.search(definition.split(".")[0]), f"{terms}: no Chinese name first"
        assert label in labels, f"{terms}: no 'Defined in {{ref}}`ch-...`' naming a chapter"


def test_the_defining_chapter_uses_the_term():
    labels = chapter_labels()
    for terms, _, label in entries():
        text = " ".join(prose_paragraphs(CHAPTERS[labels[label]]))
        assert any(pattern(t).search(text) for t in terms), f"{terms}: not found in the chapter said to define it"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_term_is_used_before_its_chapter_without_a_link(path):
    labels = chapter_labels()
    index = CHAPTERS.index(path)
    paragraphs = prose_paragraphs(path)
    problems = []
    for terms, _, label in entries():
        if labels[label] > index:
            p = first_unlinked_use(paragraphs, terms, label)
            if p:
                problems.append(f"{terms[0]!r} (defined in {label}) first used without a link: {p[:140]!r}")
    assert not problems, "\n".join(problems)


def test_the_check_sees_an_unlinked_use_and_accepts_a_linked_one():
    assert first_unlinked_use(["The ring all-reduce is fast."], ("ring all-reduce",), "ch-ring")
    assert not first_unlinked_use(["The ring all-reduce ({ref}`ch-ring`) is fast."], ("ring all-reduce",), "ch-ring")
    assert not first_unlinked_use(["The {term}`ring all-reduce` is fast."], ("ring all-reduce",), "ch-ring")
    assert not first_unlinked_use(["A reduce-scatter."], ("scatter",), "ch-primitives")
    assert first_unlinked_use(["Two all-reduces."], ("all-reduce",), "ch-primitives")


def test_every_symbol_of_the_notation_table_names_a_chapter_that_uses_it():
    """The front page's notation table gives each symbol the chapter that defines it; that chapter uses it."""
    labels = chapter_labels()
    text = (ROOT / "index.md").read_text(encoding="utf-8").split("(notation)=", 1)[1]
    rows = [r for r in text.splitlines() if r.startswith("| $")]
    assert len(rows) >= 40
    for row in rows:
        symbol, where = row.split("|")[1].strip(), row.rstrip(" |").rsplit("|", 1)[1].strip()
        if where == "—":
            continue
        label = re.fullmatch(r"\{ref\}`\d <(ch-[a-z-]+)>`", where)
        assert label and label.group(1) in labels, f"{symbol}: no chapter in the 'defined in' column"
        first = re.findall(r"\$([^$]+)\$", symbol)[0].split("=")[0].strip()
        maths = " ".join(re.findall(r"\$\$?([^$]+)\$\$?", " ".join(prose_paragraphs(CHAPTERS[labels[label.group(1)]]))))
        def norm(t):
            return re.sub(r"\\(?:text|mathrm)\{([^}]*)\}", r"{\1}", t).replace(" ", "")
        assert norm(first) in norm(maths), f"{symbol}: not used in the mathematics of {label.group(1)}"
