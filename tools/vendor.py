"""Copy the browser assets the website needs from node_modules into _vendor/.

Usage: python tools/vendor.py [node_modules] [_vendor]

The website loads nothing from other hosts. MathJax 3 (math), RequireJS,
the Jupyter widgets HTML manager (live widgets on the built pages) and
Pyodide's core (Python in the page, for the live calculators) come from
the npm packages pinned in package.json / package-lock.json (installed by
``npm ci``); this script copies only the files the pages use into
``_vendor/lib/``, next to the book's own small scripts from
``tools/site_assets/`` -- Sphinx's ``html_static_path`` then serves them as
``_static/lib/...`` (see _config.yml: ``mathjax_path`` and
``nb_ipywidgets_js``).

``_vendor`` is deliberately not called ``_static``: Jupyter Book adds every
``*.js`` under a ``_static`` folder to every page, and MathJax ships dozens of
extension files that must only load on demand.

The copy is checked: the installed versions must equal the pinned ones, and
every file listed here must exist, so a package update that moves a file
fails here rather than in a reader's browser.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path

#: npm package -> list of (source path or glob inside the package, destination folder under lib/).
MANIFEST: dict[str, list[tuple[str, str]]] = {
    "mathjax": [
        ("LICENSE", "mathjax"),
        ("es5/tex-chtml.js", "mathjax"),
        # CHTML output fonts: MathJax finds them next to tex-chtml.js.
        ("es5/output/chtml/fonts/woff-v2/*.woff", "mathjax/output/chtml/fonts/woff-v2"),
        # TeX extensions loaded on demand by the autoload package (\color, \cancel, \boldsymbol ...).
        ("es5/input/tex/extensions/*.js", "mathjax/input/tex/extensions"),
        # The right-click menu and its optional accessibility tools (loaded only if a reader turns them on).
        ("es5/ui/*.js", "mathjax/ui"),
        ("es5/a11y/*.js", "mathjax/a11y"),
        ("es5/sre/**/*", "mathjax/sre"),
    ],
    "requirejs": [
        ("require.js", "requirejs"),
    ],
    "@jupyter-widgets/html-manager": [
        ("dist/embed-amd.js", "html-manager"),
        ("dist/embed.js.LICENSE.txt", "html-manager"),
        # Font Awesome 5 (widget icons), fetched relative to embed-amd.js; woff2/woff cover every current browser.
        ("dist/*.woff2", "html-manager"),
        ("dist/*.woff", "html-manager"),
    ],
    "@fortawesome/fontawesome-free": [
        ("LICENSE.txt", "html-manager/fontawesome"),
    ],
    # Pyodide's core (CPython compiled to WebAssembly and its standard library, no numpy): the live
    # calculators run commlib's own functions in the page with it (tools/site_assets/live-calculators.js).
    "pyodide": [
        ("README.md", "pyodide"),
        ("pyodide.js", "pyodide"),
        ("pyodide.asm.wasm", "pyodide"),
        ("python_stdlib.zip", "pyodide"),
        ("pyodide-lock.json", "pyodide"),
    ],
}

#: Pyodide files a page opened from disk (file://) cannot fetch: they are also written, base64-encoded,
#: into a classic script (pyodide-files.js) that the page loads with a <script> tag and serves to Pyodide.
PYODIDE_FILES = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]


def pinned_versions(root: Path) -> dict[str, str]:
    """Exact versions of the direct dependencies pinned in package.json."""
    deps = json.loads((root / "package.json").read_text())["dependencies"]
    for name, version in deps.items():
        if not version[:1].isdigit():
            raise ValueError(f"package.json must pin {name} to an exact version, got {version!r}")
    return deps


def copy_assets(node_modules: Path, dest: Path, pins: dict[str, str]) -> list[Path]:
    """Copy the MANIFEST from ``node_modules`` into ``dest/lib``; return the files written."""
    for name, version in pins.items():
        meta = node_modules / name / "package.json"
        if not meta.is_file():
            raise FileNotFoundError(f"{meta} is missing: run `npm ci` first")
        installed = json.loads(meta.read_text())["version"]
        if installed != version:
            raise ValueError(f"{name} {installed} is installed but package.json pins {version}: run `npm ci`")
    lib = dest / "lib"
    if lib.exists():
        shutil.rmtree(lib)
    written: list[Path] = []
    for package, entries in MANIFEST.items():
        base = node_modules / package
        for pattern, folder in entries:
            matches = sorted(p for p in base.glob(pattern) if p.is_file())
            if not matches:
                raise FileNotFoundError(f"nothing matches {package}/{pattern}")
            for src in matches:
                if "**" in pattern:
                    anchor = base / pattern.split("**")[0]
                    target = lib / folder / src.relative_to(anchor)
                else:
                    target = lib / folder / src.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
                written.append(target)
    return written


def pyodide_classic_scripts(node_modules: Path, dest: Path) -> list[Path]:
    """Write Pyodide's module script and data files as classic scripts, which load from file:// too.

    ``pyodide.asm.mjs`` is an ES module (a page opened from disk cannot import
    it); its one ``export default`` becomes a global and ``import.meta.url``
    this script's own address. The data files become base64 strings in
    ``pyodide-files.js``, loaded only by pages opened from disk.
    """
    folder = dest / "lib" / "pyodide"
    folder.mkdir(parents=True, exist_ok=True)
    source = (node_modules / "pyodide" / "pyodide.asm.mjs").read_text(encoding="utf-8")
    export = "export default _createPyodideModule;"
    if source.count(export) != 1 or "import.meta" in source.replace("import.meta.url", ""):
        raise ValueError("pyodide.asm.mjs changed shape: update tools/vendor.py's classic-script conversion")
    body = source.replace(export, "window.gotwCreatePyodideModule = _createPyodideModule;")
    body = body.replace("import.meta.url", "gotwAsmUrl")
    classic = folder / "pyodide-asm.js"
    classic.write_text("(function () {\n\"use strict\";\nvar gotwAsmUrl = document.currentScript.src;\n"
                       + body + "\n})();\n", encoding="utf-8")
    files = {name: base64.b64encode((node_modules / "pyodide" / name).read_bytes()).decode("ascii")
             for name in PYODIDE_FILES}
    data = folder / "pyodide-files.js"
    data.write_text("window.gotwPyodideFiles = " + json.dumps(files) + ";\n", encoding="utf-8")
    return [classic, data]


#: The book's own small browser scripts (tracked in git), copied next to the vendored ones.
SITE_ASSETS = Path(__file__).resolve().parent / "site_assets"


def copy_site_assets(dest: Path) -> list[Path]:
    """Copy ``tools/site_assets/*.js`` and ``*.css`` into ``dest/lib``."""
    written = []
    for src in sorted([*SITE_ASSETS.glob("*.js"), *SITE_ASSETS.glob("*.css")]):
        target = dest / "lib" / src.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        written.append(target)
    return written


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    node_modules = Path(argv[0]) if argv else root / "node_modules"
    dest = Path(argv[1]) if len(argv) > 1 else root / "_vendor"
    written = copy_assets(node_modules, dest, pinned_versions(root)) + copy_site_assets(dest)
    written += pyodide_classic_scripts(node_modules, dest)
    size = sum(p.stat().st_size for p in written)
    print(f"vendored {len(written)} files ({size / 2**20:.1f} MiB) into {dest / 'lib'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
