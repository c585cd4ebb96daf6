"""The model layer never imports the view layer's libraries."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1] / "commlib"
VIEW_LIBS = {"ipywidgets", "matplotlib", "IPython"}
MODEL_FILES = sorted(p for p in ROOT.rglob("*.py") if "views" not in p.parts)


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_model_module_imports_no_view_library(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.ImportFrom) and node.level > 0 and node.module:
            assert not node.module.startswith("views"), f"{path} imports the view layer"
        for name in names:
            assert name.split(".")[0] not in VIEW_LIBS, f"{path} imports {name}"
