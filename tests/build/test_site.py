"""Static checks of the built website: complete, linked, self-contained, accessible, captioned."""

from __future__ import annotations

import base64
import copy
import io
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from conftest import ROOT, built_pages, soup
from site_pages import html_path, source_path, toc_pages

PAGES = toc_pages()
CHAPTER_NOTEBOOKS = [p for p in PAGES if (s := source_path(p)) is not None and s.suffix == ".ipynb"]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())

#: Tag/attribute pairs that make a browser fetch something by themselves.
ASSET_ATTRS = [("script", "src"), ("link", "href"), ("img", "src"), ("img", "srcset"), ("source", "src"),
               ("source", "srcset"), ("iframe", "src"), ("video", "src"), ("video", "poster"), ("audio", "src"),
               ("embed", "src"), ("object", "data"), ("input", "src"), ("track", "src")]
#: <link rel=...> values that are only navigation hints, never fetched.
NAV_RELS = {"index", "search", "next", "prev", "canonical", "alternate", "author", "license", "help"}
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+['"]([^'"]+)['"]""")
INLINE_URL = re.compile(r"""https?://[^\s'"<>)]+""")
#: XML namespaces are identifiers in SVG markup, never fetched.
NAMESPACES = ("http://www.w3.org/",)
#: matplotlib's default colours that are not in the book's Okabe-Ito palette.
TAB10_NOT_OKABE_ITO = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
                       "#17becf"]
#: Words a page of this book should never contain (it speaks of its subject only).
OFF_TOPIC = re.compile(r"\b(ChatGPT|Claude|Copilot|LLM|AI assistant|TODO|FIXME|TBD|lorem ipsum|placeholder)\b", re.I)


def _page(site: Path, docname: str, required: bool = False):
    """The parsed page; a page missing from the build fails test_every_toc_page_is_built, and is skipped elsewhere."""
    path = site / html_path(docname)
    if not path.is_file():
        if required:
            pytest.fail(f"{docname} is in _toc.yml but {path} was not built")
        pytest.skip(f"{docname} was not built")
    return soup(path)


def _ids(path: Path) -> set[str]:
    doc = soup(path)
    return {t["id"] for t in doc.find_all(id=True)} | {t["name"] for t in doc.find_all("a", attrs={"name": True})}


def _article(doc):
    return doc.find("article") or doc.find("main") or doc


@pytest.mark.parametrize("docname", PAGES)
def test_every_toc_page_is_built(site, docname):
    doc = _page(site, docname, required=True)
    assert doc.find("h1"), f"{docname} has no title"


def test_internal_links_and_anchors_resolve(site):
    broken: list[str] = []
    for path in built_pages():
        doc = soup(path)
        for tag, attr in [("a", "href"), *ASSET_ATTRS]:
            for el in doc.find_all(tag, attrs={attr: True}):
                for ref in (el[attr].split(",") if attr == "srcset" else [el[attr]]):
                    ref = ref.strip().split(" ")[0]
                    if not ref or ref == "#" or REMOTE.match(ref) or re.match(r"^[a-z][a-z0-9+.-]*:", ref, re.I):
                        continue
                    parts = urlsplit(ref)
                    target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
                    if target.is_dir():
                        target = target / "index.html"
                    where = f"{path.relative_to(site)}: {tag} {attr}={ref!r}"
                    if not target.is_file() or site.resolve() not in target.resolve().parents:
                        broken.append(f"{where} -> missing {target}")
                    elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _ids(target):
                        broken.append(f"{where} -> no anchor #{parts.fragment}")
    assert broken == [], f"{len(broken)} broken internal links:\n" + "\n".join(broken[:60])


def _remote_in_css(css: str) -> list[str]:
    found = []
    for m in CSS_URL.finditer(css):
        ref = (m.group(1) or m.group(2) or "").strip()
        if REMOTE.match(ref):
            found.append(ref)
    return found


def test_no_asset_from_another_host(site):
    """Scripts, styles, images, fonts and frames all come from the site itself (plain links may go anywhere)."""
    remote: list[str] = []
    stylesheets: set[Path] = set()
    for path in built_pages():
        doc = soup(path)
        rel = path.relative_to(site)
        for tag, attr in ASSET_ATTRS:
            for el in doc.find_all(tag, attrs={attr: True}):
                if tag == "link" and NAV_RELS.intersection(el.get("rel", [])):
                    continue
                for ref in el[attr].split(","):
                    ref = ref.strip().split(" ")[0]
                    if REMOTE.match(ref):
                        remote.append(f"{rel}: <{tag} {attr}={ref}>")
                    elif tag == "link" and "stylesheet" in el.get("rel", []):
                        stylesheets.add((path.parent / unquote(urlsplit(ref).path)).resolve())
        for style in doc.find_all("style"):
            remote += [f"{rel}: <style> {u}" for u in _remote_in_css(style.get_text())]
        for el in doc.find_all(style=True):
            remote += [f"{rel}: style= {u}" for u in _remote_in_css(el["style"])]
        for script in doc.find_all("script", src=False):
            if script.get("type", "text/javascript") in ("text/javascript", "module", "application/javascript"):
                remote += [f"{rel}: inline script {u}" for u in INLINE_URL.findall(script.get_text())
                           if not u.startswith(NAMESPACES)]
    seen: set[Path] = set()
    while stylesheets:  # follow @import chains
        css = stylesheets.pop()
        if css in seen or not css.is_file():
            continue
        seen.add(css)
        text = css.read_text(errors="replace")
        remote += [f"{css.relative_to(site.resolve())}: {u}" for u in _remote_in_css(text)]
        for m in CSS_URL.finditer(text):
            if m.group(2) and not REMOTE.match(m.group(2)):
                stylesheets.add((css.parent / m.group(2)).resolve())
    assert remote == [], "assets from other hosts:\n" + "\n".join(sorted(set(remote))[:60])


def test_vendored_scripts_are_the_configured_ones(site):
    """Only the configured vendored files are loaded by pages (nothing auto-included from _vendor)."""
    sphinx = CONFIG["sphinx"]["config"]
    allowed = {sphinx["mathjax_path"], *sphinx["nb_ipywidgets_js"]}
    for docname in PAGES:
        if not (site / html_path(docname)).is_file():
            continue
        doc = _page(site, docname)
        for el in doc.find_all("script", src=True):
            src = urlsplit(el["src"]).path
            if "/_static/lib/" in "/" + src.lstrip("./"):
                name = src.split("_static/", 1)[1]
                assert name in allowed, f"{docname} loads {name}, which is not configured"
        if doc.select(".math"):
            srcs = [el["src"] for el in doc.find_all("script", src=True)]
            assert any(sphinx["mathjax_path"] in s for s in srcs), f"{docname} has math but no vendored MathJax"
        if doc.find("script", type="application/vnd.jupyter.widget-view+json"):
            srcs = " ".join(el["src"] for el in doc.find_all("script", src=True))
            for name in sphinx["nb_ipywidgets_js"]:
                assert name in srcs, f"{docname} embeds widgets but does not load {name}"
            assert doc.find("script", type="application/vnd.jupyter.widget-state+json"), (
                f"{docname} displays widgets but their state is not embedded (run the notebook headless)")
    for name in allowed:
        assert (site / "_static" / name).is_file(), f"_static/{name} missing: run `make vendor`"


@pytest.mark.parametrize("docname", PAGES)
def test_images_have_alt_text(site, docname):
    missing = []
    for img in _page(site, docname).find_all("img"):
        alt = (img.get("alt") or "").strip()
        frame_only = "gotw-frame" in img.get("class", []) and re.fullmatch(r"\(.*\)", alt)
        if not alt or frame_only:
            missing.append((img.get("src") or "")[:80])
    assert missing == [], f"{docname}: {len(missing)} images without alt text: {missing[:5]}"


@pytest.mark.parametrize("docname", PAGES)
def test_figures_have_captions(site, docname):
    article = _article(_page(site, docname))
    problems = []
    for fig in article.find_all("figure"):
        cap = fig.find("figcaption")
        if cap is None or not cap.get_text(strip=True):
            problems.append(f"figure {fig.get('id', '?')} has no caption")
    for img in article.find_all("img"):
        if img.find_parent("figure") is None and img.find_parent(class_="gotw-player") is None:
            problems.append(f"image outside a captioned figure: {(img.get('alt') or img.get('src') or '')[:80]}")
    assert problems == [], f"{docname}: " + "; ".join(problems[:8])


@pytest.mark.parametrize("docname", CHAPTER_NOTEBOOKS)
def test_notebook_pages_have_launch_and_download_buttons(site, docname):
    doc = _page(site, docname)
    hrefs = [a["href"] for a in doc.find_all("a", href=True)]
    repo = CONFIG["repository"]["url"].rstrip("/")
    slug = repo.split("github.com/", 1)[1]
    nb = f"{docname}.ipynb"
    assert any(h.startswith("https://mybinder.org/v2/gh/" + slug) and h.endswith(nb) for h in hrefs), "Binder"
    assert any(h.startswith("https://colab.research.google.com/github/" + slug) and h.endswith(nb) for h in hrefs), "Colab"
    assert any(h.endswith("_sources/" + nb) for h in hrefs), "download .ipynb"
    assert repo in hrefs, "repository button"


@pytest.mark.parametrize("docname", PAGES)
def test_citations_point_to_the_bibliography(site, docname):
    doc = _page(site, docname)
    links = [a for span in doc.select("span.bibtex-citation") for a in span.find_all("a", href=True)]
    src = source_path(docname)
    if src is not None and "{cite" in src.read_text(errors="ignore"):
        assert links, f"{docname} cites sources but no citation was rendered"
    for a in links:
        assert re.fullmatch(r"(\.\./)*(chapters/)?bibliography\.html#id\d+", a["href"]), (
            f"{docname}: citation {a.get_text()!r} points to {a['href']}, not to the one bibliography page")


def test_bibliography_lists_every_cited_source(site):
    doc = _page(site, "chapters/bibliography", required=True)
    # the entries of the citation list, items of it to assistive technology (tools/accessibility.py)
    entries = {e["id"] for e in doc.select('div.citation-list[role="list"] > div.citation[role="listitem"]')}
    assert entries, "the bibliography page lists nothing"
    cited = set()
    for docname in PAGES:
        if (site / html_path(docname)).is_file():
            for a in _page(site, docname).select("span.bibtex-citation a[href]"):
                cited.add(a["href"].split("#", 1)[1])
    assert cited <= entries, f"cited but not listed: {sorted(cited - entries)}"


def _pngs(site: Path, docname: str):
    for img in _article(_page(site, docname)).find_all("img", src=True):
        src = img["src"]
        if src.startswith("data:image/png;base64,"):
            yield img.get("alt", "")[:60], io.BytesIO(base64.b64decode(src.split(",", 1)[1]))
        elif src.lower().endswith(".png") and not REMOTE.match(src):
            path = (site / html_path(docname)).parent / unquote(src)
            if path.is_file():
                yield img.get("alt", "")[:60], path


@pytest.mark.parametrize("docname", PAGES)
def test_figures_use_the_colour_blind_safe_palette(site, docname):
    """No figure keeps matplotlib's default colours (red/green pairs) instead of the Okabe-Ito palette."""
    np = pytest.importorskip("numpy")
    image = pytest.importorskip("PIL.Image")
    bad = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in TAB10_NOT_OKABE_ITO])
    offenders = []
    for alt, src in _pngs(site, docname):
        pixels = np.asarray(image.open(src).convert("RGB"), dtype=np.int64).reshape(-1, 3)
        packed, counts = np.unique(pixels[:, 0] << 16 | pixels[:, 1] << 8 | pixels[:, 2], return_counts=True)
        colours = np.stack([packed >> 16, (packed >> 8) & 255, packed & 255], axis=1)
        near = (np.abs(colours[:, None, :] - bad[None, :, :]).max(axis=2) <= 3).any(axis=1)
        hits = int(counts[near].sum())
        if hits > max(50, 0.002 * len(pixels)):
            offenders.append(f"{alt!r} ({hits / len(pixels):.1%} of pixels)")
    assert offenders == [], f"{docname}: figures in matplotlib's default colours: {offenders[:5]}"


@pytest.mark.parametrize("docname", PAGES)
def test_pages_speak_of_their_subject_only(site, docname):
    article = copy.copy(_article(_page(site, docname)))  # the parsed page is shared: work on a copy
    for tag in article.find_all(["pre", "code", "script", "style"]):
        tag.decompose()
    hits = sorted({m.group(0) for m in OFF_TOPIC.finditer(article.get_text(" "))})
    assert hits == [], f"{docname} mentions {hits}"


def test_config_builds_every_launch_button_from_one_repository_url():
    launch = CONFIG["launch_buttons"]
    assert launch["binderhub_url"] and launch["colab_url"]
    assert CONFIG["html"]["use_download_button"] and CONFIG["html"]["use_repository_button"]
    assert not CONFIG["html"].get("use_issues_button")
    assert json.dumps(CONFIG).count("github.com/") == 1, "the repository URL must appear exactly once"
