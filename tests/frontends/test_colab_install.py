"""The Colab path, offline: the package installs into an empty virtual environment and a chapter's first cell runs.

The project is installed with pip from this checkout (no index: the machine
is offline) into a new, empty venv; the third-party packages a hosted
runtime already has come from this project's environment through a .pth
file, and ``pip check`` confirms the package's declared dependencies are all
there. Then each chapter's first cell runs twice in that venv, from an empty
folder (so ``commlib`` comes from the installed package, not the checkout),
with ``myst_nb`` made unimportable, as on Colab.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))

#: Installed into the venv as sitecustomize.py: myst_nb cannot be imported there, as on Colab.
NO_MYST_NB = r"""
import importlib.abc, sys
class NoMystNb(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "myst_nb" or name.startswith("myst_nb."):
            raise ModuleNotFoundError(f"No module named {name!r} (as on Colab)")
        return None
sys.meta_path.insert(0, NoMystNb())
"""


def _clean_env(where: Path) -> dict:
    """An environment that does not point Python at this checkout (no PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["HOME"] = str(where)
    return env


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    where = tmp_path_factory.mktemp("colab")
    env_dir = where / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The wheel is built here (offline: with this environment's setuptools and wheel), then installed
    # into the empty venv from that file alone.
    # The wheel is built from a copy of the package's files, so that no build folder lands in the checkout.
    source = where / "source"
    source.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", source / "pyproject.toml")
    shutil.copytree(ROOT / "commlib", source / "commlib", ignore=shutil.ignore_patterns("__pycache__"))
    wheels = where / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            "--wheel-dir", str(wheels), str(source)], capture_output=True, text=True, cwd=where)
    assert built.returncode == 0, built.stderr[-3000:]
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                           *map(str, wheels.glob("commlib-*.whl"))], capture_output=True, text=True, cwd=where,
                          env=_clean_env(where))
    assert done.returncode == 0, done.stderr[-3000:]
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, env=_clean_env(where)).stdout.strip()
    assert (Path(purelib) / "commlib" / "__init__.py").is_file(), "the package did not install into the venv"
    # A hosted runtime's own setuptools is current (PyTorch, which it has too, needs >= 77); the venv's bundled one is
    # older and would shadow it, so the venv keeps none of its own and sees the runtime's.
    subprocess.run([str(python), "-m", "pip", "uninstall", "--quiet", "--yes", "setuptools"], capture_output=True,
                   text=True, cwd=where, env=_clean_env(where), check=True)
    # What the hosted runtime already has: this environment's packages, after the venv's own.
    (Path(purelib) / "zz_hosted_runtime.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    (Path(purelib) / "sitecustomize.py").write_text(NO_MYST_NB)
    kernels = where / "jupyter" / "kernels" / "fresh-venv"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fresh venv", "language": "python",
        "env": {"PYTHONPATH": "", "MPLBACKEND": "Agg", "HOME": str(where)}}))
    return python, where


def test_declared_dependencies_are_installed(fresh_venv):
    python, where = fresh_venv
    done = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True, cwd=where,
                          env=_clean_env(where))
    assert done.returncode == 0, done.stdout + done.stderr
    meta = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(json.dumps(m.requires('commlib')))"
                           .replace("print(", "import json; print(")], capture_output=True, text=True, cwd=where,
                          env=_clean_env(where))
    requires = json.loads(meta.stdout)
    for name in ("numpy", "scipy", "matplotlib", "ipywidgets", "simpy", "networkx"):
        assert any(r.startswith(name) for r in requires), f"pyproject.toml does not declare {name}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_first_cell_runs_twice_in_the_fresh_venv(fresh_venv, path):
    python, where = fresh_venv
    first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    assert "myst_nb" not in first.source, f"{path.name}: the first cell imports myst_nb, which Colab lacks"
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(first.source), nbformat.v4.new_code_cell(first.source),  # idempotent
                nbformat.v4.new_code_cell("import commlib\nprint(commlib.__file__)")]
    monkey = pytest.MonkeyPatch()
    monkey.setenv("JUPYTER_PATH", str(where / "jupyter"))
    try:
        NotebookClient(nb, kernel_name="fresh-venv", timeout=300,
                       resources={"metadata": {"path": str(where)}}).execute()
    finally:
        monkey.undo()
    shown = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert shown.strip() and str(ROOT) not in shown, f"commlib came from {shown!r}, not the installed package"


def test_setup_cell_takes_the_repository_from_config():
    import yaml

    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    for path in CHAPTERS:
        first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        assert f"git+{url}" in first.source, f"{path.name}: the first cell does not install from {url}"
        assert 'find_spec("commlib") is None' in first.source, f"{path.name}: the install is not guarded"
