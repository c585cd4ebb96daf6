"""Every dotted ``commlib.x.y`` a docstring names resolves: no docstring points a reader at an old path."""

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).parents[1] / "commlib"
DOTTED = re.compile(r"\bcommlib(?:\.[A-Za-z_]\w*)+")


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a commlib module, or an attribute reached from the longest module in it."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def docstring_paths() -> list[tuple[str, str]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False) or ""
                found += [(path.relative_to(ROOT.parent).as_posix(), m.group(0)) for m in DOTTED.finditer(doc)]
    return found


def test_every_dotted_commlib_path_in_a_docstring_resolves():
    paths = docstring_paths()
    assert len(paths) > 100            # the scan finds the docstrings' references
    broken = sorted({(f, p) for f, p in paths if not resolves(p)})
    assert not broken, broken


def test_the_check_finds_a_stale_path():
    assert resolves("commlib.collectives.algorithms.ring.terms") and resolves("commlib.cost")
    assert not resolves("commlib.ps_time") and not resolves("commlib.sgd.sgd_calculators.overlap_results")
