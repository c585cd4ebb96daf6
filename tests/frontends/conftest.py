"""Fixtures for the front-end tests: chromium, and JupyterLab serving a scratch copy of the chapters."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from browser_support import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

#: The Python whose JupyterLab (with jupyterlab-myst) is tested: the project's venv by default.
LAB_PYTHON = os.environ.get("GOTW_LAB_PYTHON", sys.executable)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make chromium` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """``(url, folder)``: JupyterLab on a free local port (no token), over a scratch copy of chapters/.

    A copy, because running the cells in JupyterLab must never write into the
    notebooks whose outputs the headless run stores. Every cell is kept in the
    page (no windowing), so the checks see the whole notebook.
    """
    work = tmp_path_factory.mktemp("lab")
    folder = work / "chapters"
    shutil.copytree(ROOT / "chapters", folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    settings = work / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    (work / "settings" / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (work / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port = free_port()
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(work / "settings"), PYTHONHASHSEED="0", MPLBACKEND="Agg",
               JUPYTER_RUNTIME_DIR=str(work / "runtime"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT), env.get("PYTHONPATH", "")] if p)
    log = (work / "lab.log").open("w")
    proc = subprocess.Popen(
        [LAB_PYTHON, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
         "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={folder}", "--allow-root"],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(work / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield url, folder
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
